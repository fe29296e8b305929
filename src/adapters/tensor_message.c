#include "adapters/tensor_message.h"

#include <stdlib.h>
#include <string.h>

#include "adapters/value_type_arrow.h"
#include "quiver/ipc.h"

void qvi_tensor_message_init(QvMessage *msg, uint8_t header_type, QvArrowType type, int32_t ndim,
                            const int64_t *shape, const char *const *names, QvTensorDim *dims) {
  for (int32_t i = 0; i < ndim; i++) {
    dims[i].size = shape[i];
    dims[i].name = names ? names[i] : NULL;
    dims[i].name_len = dims[i].name ? strlen(dims[i].name) : 0;
  }
  memset(msg, 0, sizeof *msg);
  msg->version = QV_METADATA_V5;
  msg->header_type = header_type;
  if (header_type == QV_HEADER_TENSOR) {
    qvi_value_type_to_arrow(type, &msg->header.tensor.type);
    msg->header.tensor.ndim = ndim;
    msg->header.tensor.shape = dims;
  } else {
    qvi_value_type_to_arrow(type, &msg->header.sparse_tensor.type);
    msg->header.sparse_tensor.ndim = ndim;
    msg->header.sparse_tensor.shape = dims;
  }
}

QvStatus qvi_tensor_message_frame(const QvMessage *msg, const char *what, uint8_t **meta,
                                 size_t *meta_size, QvError *error) {
  QvStatus st = qv_ipc_frame_message(msg, QV_TENSOR_BODY_ALIGN, meta, meta_size, error);
  if (st) return qv_error_prefix(error, "encoding the %s message", what);
  if ((uint64_t)msg->body_length > (uint64_t)SIZE_MAX - *meta_size) {
    free(*meta);
    *meta = NULL;
    return qv_error_set(error, QV_ELIMIT, "%s message does not fit in memory", what);
  }
  return QV_OK;
}

QvStatus qvi_metadata_version_check(int16_t version, const char *what, QvError *error) {
  if (version >= QV_METADATA_V4) return QV_OK;
  return qv_error_set(error, QV_ENOTSUP,
                      "%s: MetadataVersion %s is not supported (quiver, like Arrow C++, reads V4 "
                      "and V5)", what, qv_metadata_version_name(version));
}
