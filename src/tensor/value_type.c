/* Tensor value types: sizes and names. */
#include <string.h>

#include "quiver/tensor.h"

static const struct {
  const char *name;
  size_t size;
} value_types[QV_VALUE_TYPE_COUNT] = {
    [QV_VALUE_DEFAULT] = {"?", 0},
    {"int8", 1},   {"int16", 2},  {"int32", 4},   {"int64", 8},   {"uint8", 1},   {"uint16", 2},
    {"uint32", 4}, {"uint64", 8}, {"float16", 2}, {"float32", 4}, {"float64", 8},
};

size_t qv_value_type_size(QvValueType type) {
  return (unsigned)type < QV_VALUE_TYPE_COUNT ? value_types[type].size : 0;
}

const char *qv_value_type_name(QvValueType type) {
  return (unsigned)type < QV_VALUE_TYPE_COUNT ? value_types[type].name : "?";
}

QvStatus qv_value_type_parse(const char *name, QvValueType *out, QvError *error) {
  if (name == NULL || out == NULL) return qv_error_set(error, QV_EARG, "value type: NULL argument");
  for (int i = QV_VALUE_INT8; i < QV_VALUE_TYPE_COUNT; i++) {
    if (strcmp(name, value_types[i].name) == 0) {
      *out = (QvValueType)i;
      return QV_OK;
    }
  }
  return qv_error_set(error, QV_EINVAL,
                      "unknown value type '%.64s' (expected int8, int16, int32, int64, uint8, "
                      "uint16, uint32, uint64, float16, float32 or float64)",
                      name);
}
