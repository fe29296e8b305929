/* Dense tensors as Arrow IPC Tensor messages: writer and readers. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "quiver/tensor_ipc.h"

#include "adapters/tensor_message.h"
#include "adapters/value_type_arrow.h"
#include "util/options.h"
#include "ipc/reader_internal.h"
#include "ipc/sink_internal.h"

/* Bodies are padded to this so that consecutive tensor messages keep their
 * bodies 64-byte aligned (each message then is a multiple of 64 bytes). */
#define BODY_ALIGN QV_TENSOR_BODY_ALIGN

/* ---- reading */

static void free_aligned(void *p) { qv_free(p); }

/* Largest byte reached by an index, plus one element: the bytes the data
 * buffer must hold. Fails on overflow. Assumes size > 0 and strides >= 0. */
static bool extent_bytes(int64_t ndim, const int64_t *shape, const int64_t *strides,
                         int64_t elsize, int64_t *out) {
  int64_t total = elsize;
  for (int64_t i = 0; i < ndim; i++) {
    int64_t step;
    if (__builtin_mul_overflow(shape[i] - 1, strides[i], &step)) return false;
    if (__builtin_add_overflow(total, step, &total)) return false;
  }
  *out = total;
  return true;
}

QvStatus qv_tensor_from_message(const QvIpcMessage *msg, QvTensor *out, QvError *error) {
  if (out == NULL || msg == NULL) return qv_error_set(error, QV_EARG, "NULL argument");
  memset(out, 0, sizeof *out);
  if (msg->message.header_type != QV_HEADER_TENSOR)
    return qv_error_set(error, QV_EINVAL, "message is a %s, not a Tensor",
                        qv_header_type_name(msg->message.header_type));
  const QvTensorMeta *m = &msg->message.header.tensor;
  QvStatus st = qvi_metadata_version_check(msg->message.version, "Tensor message", error);
  if (st) return st;
  QvArrowType vt;
  if ((st = qvi_value_type_from_arrow(&m->type, &vt, error))) return st;
  if (m->ndim > QV_TENSOR_MAX_NDIM)
    return qv_error_set(error, QV_ELIMIT,
                        "Tensor.shape: %lld dimensions exceed the limit of %d",
                        (long long)m->ndim, QV_TENSOR_MAX_NDIM);
  int32_t ndim = (int32_t)m->ndim;
  if (m->n_strides != 0 && m->n_strides != m->ndim)
    return qv_error_set(error, QV_EINVAL, "Tensor.strides has %lld entries for %d dimensions",
                        (long long)m->n_strides, ndim);
  if (m->data.offset < 0 || m->data.length < 0 || m->data.offset > msg->body_length ||
      m->data.length > msg->body_length - m->data.offset)
    return qv_error_set(error, QV_EINVAL,
                        "Tensor.data (offset %lld, length %lld) extends past the body of %lld "
                        "bytes",
                        (long long)m->data.offset, (long long)m->data.length,
                        (long long)msg->body_length);

  int64_t shape[QV_TENSOR_MAX_NDIM];
  int64_t strides[QV_TENSOR_MAX_NDIM];
  const char *names[QV_TENSOR_MAX_NDIM];
  bool named = false, empty = false;
  for (int32_t i = 0; i < ndim; i++) {
    shape[i] = m->shape[i].size;
    if (shape[i] < 0)
      return qv_error_set(error, QV_EINVAL, "Tensor.shape[%d].size %lld is negative", i,
                          (long long)shape[i]);
    if (shape[i] == 0) empty = true;
    const char *name = m->shape[i].name;
    if (name != NULL && m->shape[i].name_len > 0) {
      if (memchr(name, '\0', m->shape[i].name_len) != NULL)
        return qv_error_set(error, QV_EINVAL, "Tensor.shape[%d].name contains a NUL byte", i);
      named = true;
      names[i] = name;
    } else {
      names[i] = "";
    }
  }
  if (m->n_strides == 0) {
    st = qv_tensor_compute_strides(vt, ndim, shape, false, strides, error);
    if (st) return st;
  } else {
    for (int32_t i = 0; i < ndim; i++) {
      strides[i] = m->strides[i];
      if (strides[i] < 0)
        /* the format allows them; quiver (and Arrow C++) do not read them */
        return qv_error_set(error, QV_ENOTSUP,
                            "Tensor.strides[%d] = %lld is negative (not supported)", i,
                            (long long)strides[i]);
    }
  }
  int64_t elsize = (int64_t)qv_arrow_type_size(vt);
  if (!empty) {
    int64_t need;
    if (!extent_bytes(ndim, shape, strides, elsize, &need))
      return qv_error_set(error, QV_EINVAL, "Tensor: shape and strides overflow a 64-bit offset");
    if (need > m->data.length)
      return qv_error_set(error, QV_EINVAL,
                          "Tensor: shape and strides reach %lld bytes but Tensor.data holds %lld",
                          (long long)need, (long long)m->data.length);
  }

  static _Alignas(BODY_ALIGN) const uint8_t no_bytes[BODY_ALIGN];
  const uint8_t *data = msg->body != NULL ? msg->body + m->data.offset : no_bytes;
  QvOwner *owner = msg->owner;
  QvOwner *copy_owner = NULL;
  if (m->data.length > 0 && (uintptr_t)data % (uintptr_t)elsize != 0) {
    /* Only hand-made inputs get here; an aligned copy keeps typed access
     * through the pointer valid for the caller. */
    uint8_t *copy = qv_aligned_alloc((size_t)m->data.length);
    if (copy == NULL) return qv_error_set(error, QV_ENOMEM, "out of memory copying tensor data");
    memcpy(copy, data, (size_t)m->data.length);
    copy_owner = qv_owner_new(free_aligned, copy);
    if (copy_owner == NULL) {
      qv_free(copy);
      return qv_error_set(error, QV_ENOMEM, "out of memory");
    }
    data = copy;
    owner = copy_owner;
  }
  st = qv_tensor_init(out, &(QvTensorDesc){.type = vt, .ndim = ndim, .shape = shape,
                                           .strides = strides, .dim_names = named ? names : NULL,
                                           .data = data, .data_size = m->data.length,
                                           .owner = owner}, error);
  qv_owner_free(copy_owner); /* the tensor holds its own reference */
  return st;
}

/* On a path the reader reads the prefixes and metadata with pread and maps
 * only the wanted body: opening a tensor then never faults a page of the
 * mapping (which halves the cost of open + release for a large file) and a
 * file holding many tensors is not mapped whole. */
QvStatus qv_tensor_read(QvSource *source, int64_t index, const QvTensorReadOptions *options,
                        QvTensor *out, QvError *error) {
  if (out == NULL) return qv_error_set(error, QV_EARG, "NULL output tensor");
  memset(out, 0, sizeof *out);
  QvTensorReadOptions o;
  QvStatus st = QV_OPTIONS_LOAD(&o, options, QvTensorReadOptions, error);
  if (st) return st;
  if (source == NULL) return qv_error_set(error, QV_EARG, "NULL source");
  if (index < 0) return qv_error_set(error, QV_EARG, "negative message index %lld", (long long)index);
  QvIpcMessage msg;
  st = qvi_ipc_source_nth(source, index, o.ipc, &msg, error);
  if (st == QV_OK) {
    st = qv_tensor_from_message(&msg, out, error);
    if (st)
      qv_error_prefix(error, "message %lld at offset %lld", (long long)index,
                      (long long)msg.offset);
    qv_ipc_message_reset(&msg);
  }
  return qvi_source_error_prefix(source, st, error);
}

/* ---- writing */

/* What goes into a message for a tensor: the framed metadata and how the
 * body is produced. */
typedef struct Plan {
  uint8_t *meta; /* framed metadata, malloc'd */
  size_t meta_size;
  int64_t data_len; /* size * element size */
  int64_t body_len; /* data_len padded to BODY_ALIGN */
  bool direct;      /* the body is the data_len bytes at t->data */
} Plan;

static QvStatus check_tensor(const QvTensor *t, QvError *error) {
  if (t == NULL) return qv_error_set(error, QV_EARG, "NULL tensor");
  if (t->type < QV_ARROW_INT8 || t->type >= QV_ARROW_NUMERIC_END)
    return qv_error_set(error, QV_EARG, "tensor has an invalid value type %d", (int)t->type);
  if (t->ndim < 0 || t->ndim > QV_TENSOR_MAX_NDIM)
    return qv_error_set(error, QV_EARG, "tensor has an invalid ndim %d", t->ndim);
  if (t->ndim > 0 && (t->shape == NULL || t->strides == NULL))
    return qv_error_set(error, QV_EARG, "tensor has no shape or strides");
  return QV_OK;
}

static QvStatus plan_message(const QvTensor *t, const QvTensorWriteOptions *options, Plan *p,
                             QvError *error) {
  memset(p, 0, sizeof *p);
  QvTensorWriteOptions o;
  QvStatus st = QV_OPTIONS_LOAD(&o, options, QvTensorWriteOptions, error);
  if (st) return st;
  if ((st = check_tensor(t, error))) return st;
  int32_t ndim = t->ndim;
  int64_t size = qv_tensor_n_elements(t);
  int64_t elsize = (int64_t)qv_arrow_type_size(t->type);
  if (size < 0 || (size > 0 && size > INT64_MAX / elsize))
    return qv_error_set(error, QV_EARG, "tensor size overflows");
  p->data_len = size * elsize;
  if (p->data_len > INT64_MAX - BODY_ALIGN)
    return qv_error_set(error, QV_ELIMIT, "tensor of %lld bytes is too large",
                        (long long)p->data_len);
  p->body_len = (p->data_len + BODY_ALIGN - 1) / BODY_ALIGN * BODY_ALIGN;
  if (size > 0 && t->data == NULL) return qv_error_set(error, QV_EARG, "tensor has no data");
  /* Canonical strides for the layout: the layout queries ignore the stride
   * of an extent-1 dim, which must not leak into the file. */
  bool col = !o.row_major && !qv_tensor_is_row_major(t) && qv_tensor_is_column_major(t);
  p->direct = size == 0 || qv_tensor_is_row_major(t) || col;
  int64_t strides[QV_TENSOR_MAX_NDIM];
  if ((st = qv_tensor_compute_strides(t->type, ndim, t->shape, col, strides, error))) return st;

  QvTensorDim dims[QV_TENSOR_MAX_NDIM];
  QvMessage msg;
  qvi_tensor_message_init(&msg, QV_HEADER_TENSOR, t->type, ndim, t->shape, t->dim_names, dims);
  QvTensorMeta *m = &msg.header.tensor;
  m->has_strides = true;
  m->n_strides = ndim;
  m->strides = strides;
  m->data.offset = 0;
  m->data.length = p->data_len;
  msg.body_length = p->body_len;
  return qvi_tensor_message_frame(&msg, "Tensor", &p->meta, &p->meta_size, error);
}

QvStatus qv_tensor_write_size(const QvTensor *t, const QvTensorWriteOptions *options, size_t *size,
                              QvError *error) {
  if (size == NULL) return qv_error_set(error, QV_EARG, "NULL size");
  *size = 0;
  Plan p;
  QvStatus st = plan_message(t, options, &p, error);
  if (st) return st;
  *size = p.meta_size + (size_t)p.body_len;
  free(p.meta);
  return QV_OK;
}

/* Non-contiguous bodies go out as a row-major copy built slab by slab
 * (a run of indices along dim 0), so the copy needs a bounded buffer. */
#define SLAB_BYTES ((int64_t)4 << 20)

static QvStatus write_strided_body(const QvTensor *t, QvSink *sink, int64_t data_len,
                                   QvError *error) {
  int64_t row = data_len / t->shape[0]; /* bytes of one index along dim 0 */
  int64_t rows = SLAB_BYTES / row;
  if (rows < 1) rows = 1;
  if (rows > t->shape[0]) rows = t->shape[0];
  uint8_t *buf = qv_aligned_alloc((size_t)(rows * row));
  if (buf == NULL) return qv_error_set(error, QV_ENOMEM, "out of memory writing a tensor");
  QvStatus st = QV_OK;
  int64_t shape[QV_TENSOR_MAX_NDIM];
  memcpy(shape, t->shape, (size_t)t->ndim * sizeof shape[0]);
  for (int64_t i = 0; i < t->shape[0] && st == QV_OK; i += rows) {
    int64_t k = t->shape[0] - i < rows ? t->shape[0] - i : rows;
    shape[0] = k;
    int64_t off = i * t->strides[0];
    QvTensor slab;
    st = qv_tensor_init(&slab, &(QvTensorDesc){.type = t->type, .ndim = t->ndim, .shape = shape,
                                               .strides = t->strides, .data = t->data + off,
                                               .data_size = t->data_size - off}, error);
    if (st) break;
    st = qv_tensor_copy_to(&slab, false, buf, (size_t)(k * row), error);
    qv_tensor_reset(&slab);
    if (st == QV_OK) st = qv_sink_write(sink, buf, (size_t)(k * row), error);
  }
  qv_free(buf);
  return st;
}

QvStatus qv_tensor_write(const QvTensor *t, QvSink *sink, const QvTensorWriteOptions *options,
                         QvError *error) {
  if (sink == NULL) return qv_error_set(error, QV_EARG, "NULL sink");
  Plan p;
  QvStatus st = plan_message(t, options, &p, error);
  if (st) return st;
  st = qv_sink_write(sink, p.meta, p.meta_size, error);
  free(p.meta);
  if (st) return st;
  if (p.data_len > 0) {
    size_t n = (size_t)p.data_len;
    uint8_t *dst = NULL;
    if (p.direct) {
      /* straight from the tensor's memory: no staging copy */
      st = qv_sink_write(sink, t->data, n, error);
    } else if ((st = qvi_sink_reserve(sink, n, &dst, error)) == QV_OK) {
      /* a memory sink takes the row-major copy in place */
      st = dst ? qv_tensor_copy_to(t, false, dst, n, error)
               : write_strided_body(t, sink, p.data_len, error);
    }
    if (st) return st;
  }
  static const uint8_t zeros[BODY_ALIGN];
  return qv_sink_write(sink, zeros, (size_t)(p.body_len - p.data_len), error);
}
