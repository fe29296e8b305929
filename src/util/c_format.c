#include "util/c_format.h"

#include <stdio.h>

const char *qvi_int_c_format(QvIntType t) {
  switch (t.bit_width) {
    case 8: return t.is_signed ? "c" : "C";
    case 16: return t.is_signed ? "s" : "S";
    case 32: return t.is_signed ? "i" : "I";
    default: return t.is_signed ? "l" : "L";
  }
}

static const char unit_chars[4] = {'s', 'm', 'u', 'n'};

/* A union's "+ud:" / "+us:" and its type ids, checked to fit int8. */
static QvStatus union_format(const QvType *t, int64_t n_children, char *buf, size_t size,
                             QvError *error) {
  size_t n = (size_t)snprintf(buf, size, "+u%c:", t->u.union_.mode == QV_UNION_DENSE ? 'd' : 's');
  if (t->u.union_.has_type_ids && t->u.union_.n_type_ids != n_children)
    return qv_error_set(error, QV_EINVAL, "union has %lld type ids for %lld children",
                        (long long)t->u.union_.n_type_ids, (long long)n_children);
  if (n_children > 128)
    return qv_error_set(error, QV_EINVAL, "union has %lld children, at most 128 fit int8 type ids",
                        (long long)n_children);
  for (int64_t i = 0; i < n_children && n < size; i++) {
    int32_t id = t->u.union_.has_type_ids ? t->u.union_.type_ids[i] : (int32_t)i;
    if (id < 0 || id > 127)
      return qv_error_set(error, QV_EINVAL, "union type id %d is outside 0..127", (int)id);
    n += (size_t)snprintf(buf + n, size - n, "%s%d", i ? "," : "", (int)id);
  }
  return QV_OK;
}

QvStatus qvi_type_c_format(const QvType *t, int64_t n_children, char *buf, size_t size,
                           QvError *error) {
  const char *s = NULL; /* a format without parameters */
  switch (t->id) {
    case QV_TYPE_NULL: s = "n"; break;
    case QV_TYPE_INT: s = qvi_int_c_format(t->u.int_); break;
    case QV_TYPE_FLOATING_POINT:
      s = t->u.floating_point.precision == QV_PRECISION_HALF     ? "e"
          : t->u.floating_point.precision == QV_PRECISION_SINGLE ? "f"
                                                                 : "g";
      break;
    case QV_TYPE_BINARY: s = "z"; break;
    case QV_TYPE_UTF8: s = "u"; break;
    case QV_TYPE_BOOL: s = "b"; break;
    case QV_TYPE_DECIMAL:
      if (t->u.decimal.bit_width == 128)
        snprintf(buf, size, "d:%d,%d", (int)t->u.decimal.precision, (int)t->u.decimal.scale);
      else
        snprintf(buf, size, "d:%d,%d,%d", (int)t->u.decimal.precision, (int)t->u.decimal.scale,
                 (int)t->u.decimal.bit_width);
      break;
    case QV_TYPE_DATE: s = t->u.date.unit == QV_DATE_DAY ? "tdD" : "tdm"; break;
    case QV_TYPE_TIME: snprintf(buf, size, "tt%c", unit_chars[t->u.time.unit & 3]); break;
    case QV_TYPE_TIMESTAMP:
      snprintf(buf, size, "ts%c:%.*s", unit_chars[t->u.timestamp.unit & 3],
               t->u.timestamp.timezone ? (int)t->u.timestamp.timezone_len : 0,
               t->u.timestamp.timezone ? t->u.timestamp.timezone : "");
      break;
    case QV_TYPE_INTERVAL:
      s = t->u.interval.unit == QV_INTERVAL_YEAR_MONTH ? "tiM"
          : t->u.interval.unit == QV_INTERVAL_DAY_TIME ? "tiD"
                                                       : "tin";
      break;
    case QV_TYPE_DURATION: snprintf(buf, size, "tD%c", unit_chars[t->u.duration.unit & 3]); break;
    case QV_TYPE_LIST: s = "+l"; break;
    case QV_TYPE_STRUCT: s = "+s"; break;
    case QV_TYPE_UNION: return union_format(t, n_children, buf, size, error);
    case QV_TYPE_FIXED_SIZE_BINARY:
      snprintf(buf, size, "w:%d", (int)t->u.fixed_size_binary.byte_width);
      break;
    case QV_TYPE_FIXED_SIZE_LIST:
      snprintf(buf, size, "+w:%d", (int)t->u.fixed_size_list.list_size);
      break;
    case QV_TYPE_MAP: s = "+m"; break;
    case QV_TYPE_LARGE_BINARY: s = "Z"; break;
    case QV_TYPE_LARGE_UTF8: s = "U"; break;
    case QV_TYPE_LARGE_LIST: s = "+L"; break;
    case QV_TYPE_RUN_END_ENCODED: s = "+r"; break;
    case QV_TYPE_BINARY_VIEW: s = "vz"; break;
    case QV_TYPE_UTF8_VIEW: s = "vu"; break;
    case QV_TYPE_LIST_VIEW: s = "+vl"; break;
    case QV_TYPE_LARGE_LIST_VIEW: s = "+vL"; break;
    default: return qv_error_set(error, QV_EINVAL, "field has no type");
  }
  if (s != NULL) snprintf(buf, size, "%s", s);
  return QV_OK;
}
