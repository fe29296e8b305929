/* Tensor value type <-> Arrow Type (Int / FloatingPoint), for the tensor
 * and sparse tensor adapters. */
#include "adapters/value_type_arrow.h"

#include <string.h>

QvStatus qvi_value_type_from_arrow(const QvType *type, QvArrowType *out, QvError *error) {
  if (type == NULL || out == NULL)
    return qv_error_set(error, QV_EARG, "Tensor.type: NULL argument");
  if (type->id == QV_TYPE_INT) {
    bool s = type->u.int_.is_signed;
    switch (type->u.int_.bit_width) {
      case 8: *out = s ? QV_ARROW_INT8 : QV_ARROW_UINT8; return QV_OK;
      case 16: *out = s ? QV_ARROW_INT16 : QV_ARROW_UINT16; return QV_OK;
      case 32: *out = s ? QV_ARROW_INT32 : QV_ARROW_UINT32; return QV_OK;
      case 64: *out = s ? QV_ARROW_INT64 : QV_ARROW_UINT64; return QV_OK;
      default:
        return qv_error_set(error, QV_EINVAL, "Tensor.type: Int bitWidth %d is not 8, 16, 32 or 64",
                            (int)type->u.int_.bit_width);
    }
  }
  if (type->id == QV_TYPE_FLOATING_POINT) {
    switch (type->u.floating_point.precision) {
      case QV_PRECISION_HALF: *out = QV_ARROW_FLOAT16; return QV_OK;
      case QV_PRECISION_SINGLE: *out = QV_ARROW_FLOAT32; return QV_OK;
      case QV_PRECISION_DOUBLE: *out = QV_ARROW_FLOAT64; return QV_OK;
      default:
        return qv_error_set(error, QV_EINVAL,
                            "Tensor.type: FloatingPoint precision %d is not HALF, SINGLE or DOUBLE",
                            (int)type->u.floating_point.precision);
    }
  }
  return qv_error_set(error, QV_EINVAL, "Tensor.type: %s is not a numeric tensor type",
                      qv_type_id_name(type->id));
}

void qvi_value_type_to_arrow(QvArrowType type, QvType *out) {
  memset(out, 0, sizeof *out);
  switch (type) {
    case QV_ARROW_FLOAT16:
    case QV_ARROW_FLOAT32:
    case QV_ARROW_FLOAT64:
      out->id = QV_TYPE_FLOATING_POINT;
      out->u.floating_point.precision = (int16_t)(type == QV_ARROW_FLOAT16   ? QV_PRECISION_HALF
                                                  : type == QV_ARROW_FLOAT32 ? QV_PRECISION_SINGLE
                                                                             : QV_PRECISION_DOUBLE);
      break;
    default:
      if (type < QV_ARROW_INT8 || type >= QV_ARROW_NUMERIC_END) {
        out->id = QV_TYPE_NONE;
        break;
      }
      out->id = QV_TYPE_INT;
      out->u.int_.bit_width = (int32_t)(qv_arrow_type_size(type) * 8);
      out->u.int_.is_signed = type <= QV_ARROW_INT64;
      break;
  }
}
