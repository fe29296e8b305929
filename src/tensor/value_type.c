/* The numeric Arrow types, the value types of tensors: sizes and names. */
#include <string.h>

#include "quiver/common.h"
#include "quiver/error.h"

static const size_t sizes[QV_ARROW_NUMERIC_END] = {
    [QV_ARROW_INT8] = 1,    [QV_ARROW_INT16] = 2,   [QV_ARROW_INT32] = 4,
    [QV_ARROW_INT64] = 8,   [QV_ARROW_UINT8] = 1,   [QV_ARROW_UINT16] = 2,
    [QV_ARROW_UINT32] = 4,  [QV_ARROW_UINT64] = 8,  [QV_ARROW_FLOAT16] = 2,
    [QV_ARROW_FLOAT32] = 4, [QV_ARROW_FLOAT64] = 8,
};

size_t qv_arrow_type_size(QvArrowType type) {
  return (unsigned)type < QV_ARROW_NUMERIC_END ? sizes[type] : 0;
}

QvStatus qv_arrow_type_parse(const char *name, QvArrowType *out, QvError *error) {
  if (name == NULL || out == NULL) return qv_error_set(error, QV_EARG, "value type: NULL argument");
  for (int i = QV_ARROW_INT8; i < QV_ARROW_NUMERIC_END; i++) {
    if (strcmp(name, qv_arrow_type_name((QvArrowType)i)) == 0) {
      *out = (QvArrowType)i;
      return QV_OK;
    }
  }
  return qv_error_set(error, QV_EINVAL,
                      "unknown value type '%.64s' (expected int8, int16, int32, int64, uint8, "
                      "uint16, uint32, uint64, float16, float32 or float64)",
                      name);
}
