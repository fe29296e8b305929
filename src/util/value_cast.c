/* Value casts between the numeric types (util/value_cast.h). */
#include "util/value_cast.h"

#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/half.h"

/* One value, as the widest member of its kind. */
typedef struct Val {
  int kind; /* 0 signed, 1 unsigned, 2 float */
  int64_t i;
  uint64_t u;
  double d;
} Val;

static bool is_signed(QvArrowType t) { return t >= QV_ARROW_INT8 && t <= QV_ARROW_INT64; }
static bool is_unsigned(QvArrowType t) { return t >= QV_ARROW_UINT8 && t <= QV_ARROW_UINT64; }

static Val load(QvArrowType t, const uint8_t *p) {
  Val v = {0, 0, 0, 0};
  switch (t) {
    case QV_ARROW_INT8: { int8_t x; memcpy(&x, p, 1); v.i = x; break; }
    case QV_ARROW_INT16: { int16_t x; memcpy(&x, p, 2); v.i = x; break; }
    case QV_ARROW_INT32: { int32_t x; memcpy(&x, p, 4); v.i = x; break; }
    case QV_ARROW_INT64: memcpy(&v.i, p, 8); break;
    case QV_ARROW_UINT8: { uint8_t x; memcpy(&x, p, 1); v.kind = 1; v.u = x; break; }
    case QV_ARROW_UINT16: { uint16_t x; memcpy(&x, p, 2); v.kind = 1; v.u = x; break; }
    case QV_ARROW_UINT32: { uint32_t x; memcpy(&x, p, 4); v.kind = 1; v.u = x; break; }
    case QV_ARROW_UINT64: v.kind = 1; memcpy(&v.u, p, 8); break;
    case QV_ARROW_FLOAT16: { uint16_t x; memcpy(&x, p, 2); v.kind = 2; v.d = qvi_half_to_double(x); break; }
    case QV_ARROW_FLOAT32: { float x; memcpy(&x, p, 4); v.kind = 2; v.d = x; break; }
    default: v.kind = 2; memcpy(&v.d, p, 8); break;
  }
  return v;
}

static int bits_of(QvArrowType t) { return (int)qv_arrow_type_size(t) * 8; }

/* To a signed integer of `bits`. */
static bool to_signed(const Val *v, int bits, int64_t *out) {
  int64_t lo = bits == 64 ? INT64_MIN : -((int64_t)1 << (bits - 1));
  int64_t hi = bits == 64 ? INT64_MAX : ((int64_t)1 << (bits - 1)) - 1;
  if (v->kind == 0) {
    if (v->i < lo || v->i > hi) return false;
    *out = v->i;
  } else if (v->kind == 1) {
    if (v->u > (uint64_t)hi) return false;
    *out = (int64_t)v->u;
  } else {
    double d = v->d;
    if (!isfinite(d) || d != trunc(d)) return false;
    /* [-2^(bits-1), 2^(bits-1)): both bounds are exact doubles */
    if (d < ldexp(-1.0, bits - 1) || d >= ldexp(1.0, bits - 1)) return false;
    *out = (int64_t)d;
  }
  return true;
}

static bool to_unsigned(const Val *v, int bits, uint64_t *out) {
  uint64_t hi = bits == 64 ? UINT64_MAX : ((uint64_t)1 << bits) - 1;
  if (v->kind == 0) {
    if (v->i < 0 || (uint64_t)v->i > hi) return false;
    *out = (uint64_t)v->i;
  } else if (v->kind == 1) {
    if (v->u > hi) return false;
    *out = v->u;
  } else {
    double d = v->d;
    if (!isfinite(d) || d != trunc(d) || d < 0 || d >= ldexp(1.0, bits)) return false;
    *out = (uint64_t)d;
  }
  return true;
}

/* An integer's exact double, or false when a double cannot hold it (then no
 * narrower float can either). */
static bool int_as_double(const Val *v, double *out) {
  if (v->kind == 0) {
    double d = (double)v->i;
    if (d >= 0x1p63 || (int64_t)d != v->i) return false;
    *out = d;
  } else {
    double d = (double)v->u;
    if (d >= 0x1p64 || (uint64_t)d != v->u) return false;
    *out = d;
  }
  return true;
}

static bool store(const Val *v, QvArrowType to, uint8_t *p) {
  if (is_signed(to)) {
    int64_t x;
    if (!to_signed(v, bits_of(to), &x)) return false;
    switch (to) {
      case QV_ARROW_INT8: { int8_t y = (int8_t)x; memcpy(p, &y, 1); break; }
      case QV_ARROW_INT16: { int16_t y = (int16_t)x; memcpy(p, &y, 2); break; }
      case QV_ARROW_INT32: { int32_t y = (int32_t)x; memcpy(p, &y, 4); break; }
      default: memcpy(p, &x, 8); break;
    }
    return true;
  }
  if (is_unsigned(to)) {
    uint64_t x;
    if (!to_unsigned(v, bits_of(to), &x)) return false;
    switch (to) {
      case QV_ARROW_UINT8: { uint8_t y = (uint8_t)x; memcpy(p, &y, 1); break; }
      case QV_ARROW_UINT16: { uint16_t y = (uint16_t)x; memcpy(p, &y, 2); break; }
      case QV_ARROW_UINT32: { uint32_t y = (uint32_t)x; memcpy(p, &y, 4); break; }
      default: memcpy(p, &x, 8); break;
    }
    return true;
  }
  double d;
  bool from_int = v->kind != 2;
  if (from_int) {
    if (!int_as_double(v, &d)) return false;
  } else {
    d = v->d;
  }
  if (to == QV_ARROW_FLOAT16) {
    uint16_t h = qvi_double_to_half(d);
    double back = qvi_half_to_double(h);
    if (from_int ? back != d : (isinf(back) && !isinf(d))) return false;
    memcpy(p, &h, 2);
  } else if (to == QV_ARROW_FLOAT32) {
    float f = (float)d;
    if (from_int ? (double)f != d : (isinf(f) && !isinf(d))) return false;
    memcpy(p, &f, 4);
  } else {
    memcpy(p, &d, 8);
  }
  return true;
}

void qvi_value_text(QvArrowType type, const uint8_t *p, char *buf, size_t cap) {
  Val v = load(type, p);
  if (v.kind == 0) {
    snprintf(buf, cap, "%" PRId64, v.i);
  } else if (v.kind == 1) {
    snprintf(buf, cap, "%" PRIu64, v.u);
  } else if (isnan(v.d)) {
    snprintf(buf, cap, "nan");
  } else if (isinf(v.d)) {
    snprintf(buf, cap, v.d < 0 ? "-inf" : "inf");
  } else if (v.d == trunc(v.d) && fabs(v.d) < 1e17) {
    snprintf(buf, cap, "%.0f", v.d); /* a whole number as one: 65520, not 6.552e+04 */
  } else {
    /* the shortest text that reads back as the value in its own type */
    for (int prec = 1; prec <= 17; prec++) {
      snprintf(buf, cap, "%.*g", prec, v.d);
      double back = strtod(buf, NULL);
      bool same = type == QV_ARROW_FLOAT16   ? qvi_double_to_half(back) == qvi_double_to_half(v.d)
                  : type == QV_ARROW_FLOAT32 ? (float)back == (float)v.d
                                             : back == v.d;
      if (same) break;
    }
  }
}

QvStatus qvi_values_cast(QvArrowType from, const uint8_t *src, int64_t src_stride, QvArrowType to,
                         uint8_t *dst, int64_t n, int64_t *bad, QvError *error) {
  if (!(from >= QV_ARROW_INT8 && from < QV_ARROW_NUMERIC_END) ||
      !(to >= QV_ARROW_INT8 && to < QV_ARROW_NUMERIC_END))
    return qv_error_set(error, QV_EINVAL, "a cast needs numeric types, not %s -> %s",
                        qv_arrow_type_name(from), qv_arrow_type_name(to));
  size_t out_size = qv_arrow_type_size(to);
  if (from == to) {
    size_t sz = out_size;
    if (src_stride == (int64_t)sz) {
      if (n > 0) memcpy(dst, src, (size_t)n * sz);
    } else {
      for (int64_t k = 0; k < n; k++) memcpy(dst + (size_t)k * sz, src + k * src_stride, sz);
    }
    return QV_OK;
  }
  for (int64_t k = 0; k < n; k++) {
    const uint8_t *p = src + k * src_stride;
    Val v = load(from, p);
    if (!store(&v, to, dst + (size_t)k * out_size)) {
      char text[48];
      qvi_value_text(from, p, text, sizeof text);
      if (bad) *bad = k;
      return qv_error_set(error, QV_EINVAL, "value %s does not fit %s", text, qv_arrow_type_name(to));
    }
  }
  return QV_OK;
}
