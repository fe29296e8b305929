/* Tensor value types: sizes, names, the Arrow Type mapping and float16. */
#include <string.h>

#include "quiver/tensor.h"

static const struct {
  const char *name;
  size_t size;
} value_types[QV_VALUE_TYPE_COUNT] = {
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
  for (int i = 0; i < QV_VALUE_TYPE_COUNT; i++) {
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

QvStatus qv_value_type_from_arrow(const QvType *type, QvValueType *out, QvError *error) {
  if (type == NULL || out == NULL)
    return qv_error_set(error, QV_EARG, "Tensor.type: NULL argument");
  if (type->id == QV_TYPE_INT) {
    bool s = type->u.int_.is_signed;
    switch (type->u.int_.bit_width) {
      case 8: *out = s ? QV_VALUE_INT8 : QV_VALUE_UINT8; return QV_OK;
      case 16: *out = s ? QV_VALUE_INT16 : QV_VALUE_UINT16; return QV_OK;
      case 32: *out = s ? QV_VALUE_INT32 : QV_VALUE_UINT32; return QV_OK;
      case 64: *out = s ? QV_VALUE_INT64 : QV_VALUE_UINT64; return QV_OK;
      default:
        return qv_error_set(error, QV_EINVAL, "Tensor.type: Int bitWidth %d is not 8, 16, 32 or 64",
                            (int)type->u.int_.bit_width);
    }
  }
  if (type->id == QV_TYPE_FLOATING_POINT) {
    switch (type->u.floating_point.precision) {
      case QV_PRECISION_HALF: *out = QV_VALUE_FLOAT16; return QV_OK;
      case QV_PRECISION_SINGLE: *out = QV_VALUE_FLOAT32; return QV_OK;
      case QV_PRECISION_DOUBLE: *out = QV_VALUE_FLOAT64; return QV_OK;
      default:
        return qv_error_set(error, QV_EINVAL,
                            "Tensor.type: FloatingPoint precision %d is not HALF, SINGLE or DOUBLE",
                            (int)type->u.floating_point.precision);
    }
  }
  return qv_error_set(error, QV_EINVAL, "Tensor.type: %s is not a numeric tensor type",
                      qv_type_id_name(type->id));
}

void qv_value_type_to_arrow(QvValueType type, QvType *out) {
  memset(out, 0, sizeof *out);
  switch (type) {
    case QV_VALUE_FLOAT16:
    case QV_VALUE_FLOAT32:
    case QV_VALUE_FLOAT64:
      out->id = QV_TYPE_FLOATING_POINT;
      out->u.floating_point.precision = (int16_t)(type == QV_VALUE_FLOAT16   ? QV_PRECISION_HALF
                                                  : type == QV_VALUE_FLOAT32 ? QV_PRECISION_SINGLE
                                                                             : QV_PRECISION_DOUBLE);
      break;
    default:
      if ((unsigned)type >= QV_VALUE_TYPE_COUNT) {
        out->id = QV_TYPE_NONE;
        break;
      }
      out->id = QV_TYPE_INT;
      out->u.int_.bit_width = (int32_t)(qv_value_type_size(type) * 8);
      out->u.int_.is_signed = type <= QV_VALUE_INT64;
      break;
  }
}

float qv_half_to_float(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t man = h & 0x3ffu;
  uint32_t bits;
  if (exp == 0) {
    /* zero or subnormal: man * 2^-24 is exact in float */
    float f = (float)man * 0x1p-24f;
    memcpy(&bits, &f, sizeof bits);
    bits |= sign;
  } else if (exp == 31) {
    bits = sign | 0x7f800000u | (man << 13); /* inf, or NaN keeping its payload */
  } else {
    bits = sign | ((exp + 112u) << 23) | (man << 13); /* rebias 15 -> 127 */
  }
  float out;
  memcpy(&out, &bits, sizeof out);
  return out;
}

uint16_t qv_float_to_half(float f) {
  uint32_t x;
  memcpy(&x, &f, sizeof x);
  uint16_t sign = (uint16_t)((x >> 16) & 0x8000u);
  uint32_t ax = x & 0x7fffffffu;
  if (ax >= 0x7f800000u) {
    if (ax == 0x7f800000u) return (uint16_t)(sign | 0x7c00u);
    /* NaN: keep the top payload bits and force the quiet bit so the payload
     * cannot truncate to zero (which would read back as infinity) */
    return (uint16_t)(sign | 0x7e00u | ((ax >> 13) & 0x3ffu));
  }
  if (ax >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u); /* >= 65520 rounds to inf */
  if (ax < 0x38800000u) {
    /* below 2^-14: a half subnormal, in units of 2^-24 */
    if (ax <= 0x33000000u) return sign; /* <= 2^-25: ties to even go to zero */
    uint32_t e = ax >> 23;              /* 102 ..= 112 */
    uint32_t m = (ax & 0x7fffffu) | 0x800000u;
    uint32_t shift = 126u - e; /* value = m * 2^(e-150) = (m >> shift) * 2^-24 */
    uint32_t q = m >> shift;
    uint32_t rem = m & ((1u << shift) - 1u);
    uint32_t halfway = 1u << (shift - 1u);
    if (rem > halfway || (rem == halfway && (q & 1u))) q++; /* may carry into the normal 0x400 */
    return (uint16_t)(sign | q);
  }
  uint32_t h = (((ax >> 23) - 112u) << 10) | ((ax >> 13) & 0x3ffu);
  uint32_t rem = ax & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) h++; /* carry into the exponent is right */
  return (uint16_t)(sign | h);
}
