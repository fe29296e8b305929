/* Values of a view as JSON text, for printing and for comparing arrays in
 * tests. */
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array/array_internal.h"

typedef struct Str {
  char *data;
  size_t len, cap;
  size_t max;     /* 0: unlimited */
  bool truncated;
  bool nomem;
} Str;

static void put_n(Str *s, const char *p, size_t n) {
  if (s->truncated || s->nomem) return;
  if (s->max && s->len + n > s->max) {
    n = s->max > s->len ? s->max - s->len : 0;
    s->truncated = true;
  }
  if (s->len + n + 4 > s->cap) {
    size_t cap = s->cap ? s->cap : 64;
    while (cap < s->len + n + 4) cap *= 2;
    char *d = realloc(s->data, cap);
    if (d == NULL) {
      s->nomem = true;
      return;
    }
    s->data = d;
    s->cap = cap;
  }
  memcpy(s->data + s->len, p, n);
  s->len += n;
}

static void put(Str *s, const char *p) { put_n(s, p, strlen(p)); }

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static void putf(Str *s, const char *fmt, ...) {
  char buf[128];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  if (n > 0) put_n(s, buf, (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1);
}

static void put_json_string(Str *s, const uint8_t *p, int64_t n) {
  put(s, "\"");
  int64_t run = 0;
  for (int64_t i = 0; i < n && !s->truncated; i++) {
    uint8_t c = p[i];
    if (c == '"' || c == '\\' || c < 0x20) {
      put_n(s, (const char *)p + run, (size_t)(i - run));
      if (c == '"') put(s, "\\\"");
      else if (c == '\\') put(s, "\\\\");
      else if (c == '\n') put(s, "\\n");
      else if (c == '\t') put(s, "\\t");
      else if (c == '\r') put(s, "\\r");
      else putf(s, "\\u%04x", c);
      run = i + 1;
    }
  }
  put_n(s, (const char *)p + run, (size_t)(n - run));
  put(s, "\"");
}

static void put_hex(Str *s, const uint8_t *p, int64_t n) {
  static const char hex[] = "0123456789abcdef";
  put(s, "\"");
  for (int64_t i = 0; i < n && !s->truncated; i++) {
    char b[2] = {hex[p[i] >> 4], hex[p[i] & 15]};
    put_n(s, b, 2);
  }
  put(s, "\"");
}

static void put_double(Str *s, double d, bool single) {
  if (isnan(d)) {
    put(s, "\"NaN\"");
    return;
  }
  if (isinf(d)) {
    put(s, d > 0 ? "\"Infinity\"" : "\"-Infinity\"");
    return;
  }
  char buf[64];
  /* shortest text that reads back as the same value */
  for (int prec = single ? 6 : 15; prec <= 17; prec++) {
    snprintf(buf, sizeof buf, "%.*g", prec, d);
    if (single ? (float)strtod(buf, NULL) == (float)d : strtod(buf, NULL) == d) break;
  }
  put(s, buf);
}

/* Two's complement little-endian integer of n bytes with `scale` decimals. */
static void put_decimal(Str *s, const uint8_t *p, int n, int32_t scale) {
  uint32_t limbs[8];
  int nl = n / 4;
  memcpy(limbs, p, (size_t)n);
  bool neg = (p[n - 1] & 0x80) != 0;
  if (neg) { /* magnitude = ~x + 1 */
    uint64_t carry = 1;
    for (int i = 0; i < nl; i++) {
      uint64_t v = (uint64_t)(uint32_t)~limbs[i] + carry;
      limbs[i] = (uint32_t)v;
      carry = v >> 32;
    }
  }
  char digits[96];
  int nd = 0;
  for (;;) {
    bool zero = true;
    for (int i = 0; i < nl; i++) zero &= limbs[i] == 0;
    if (zero && nd > 0) break;
    uint64_t rem = 0;
    for (int i = nl - 1; i >= 0; i--) {
      uint64_t cur = (rem << 32) | limbs[i];
      limbs[i] = (uint32_t)(cur / 10);
      rem = cur % 10;
    }
    digits[nd++] = (char)('0' + rem);
  }
  /* digits[] holds the magnitude least significant digit first */
  char text[96];
  for (int i = 0; i < nd; i++) text[i] = digits[nd - 1 - i];
  put(s, neg ? "\"-" : "\"");
  if (scale < -80 || scale > 160) {
    /* far out of the positional range: <digits>e<exponent> */
    put_n(s, text, (size_t)nd);
    putf(s, "e%lld", -(long long)scale);
  } else if (scale <= 0) {
    put_n(s, text, (size_t)nd);
    for (int32_t i = 0; i < -scale; i++) put(s, "0");
  } else if (nd <= scale) {
    put(s, "0.");
    for (int32_t i = 0; i < scale - nd; i++) put(s, "0");
    put_n(s, text, (size_t)nd);
  } else {
    put_n(s, text, (size_t)(nd - scale));
    put(s, ".");
    put_n(s, text + nd - scale, (size_t)scale);
  }
  put(s, "\"");
}

static void format_value(Str *s, const QvArrayView *v, int64_t i, int depth) {
  if (s->truncated || s->nomem) return;
  if (depth > QV_ARRAY_MAX_DEPTH) {
    put(s, "\"...\"");
    return;
  }
  QvLayout L = qv_view_layout(v);
  if (L != QV_LAYOUT_SPARSE_UNION && L != QV_LAYOUT_DENSE_UNION && L != QV_LAYOUT_REE &&
      qv_array_view_is_null(v, i)) {
    put(s, "null");
    return;
  }
  if (v->type.type == QV_ARROW_DICTIONARY && v->dictionary) {
    int64_t idx = qv_array_view_get_int(v, i);
    if (idx < 0 || idx >= v->dictionary->length) {
      put(s, "\"<bad dictionary index>\"");
      return;
    }
    format_value(s, v->dictionary, idx, depth + 1);
    return;
  }
  switch (v->type.type) {
    case QV_ARROW_BOOL: put(s, qv_array_view_get_int(v, i) ? "true" : "false"); return;
    case QV_ARROW_INT8:
    case QV_ARROW_INT16:
    case QV_ARROW_INT32:
    case QV_ARROW_INT64:
    case QV_ARROW_UINT8:
    case QV_ARROW_UINT16:
    case QV_ARROW_UINT32:
    case QV_ARROW_DATE32:
    case QV_ARROW_DATE64:
    case QV_ARROW_TIME32:
    case QV_ARROW_TIME64:
    case QV_ARROW_TIMESTAMP:
    case QV_ARROW_DURATION:
    case QV_ARROW_INTERVAL_MONTHS: putf(s, "%" PRId64, qv_array_view_get_int(v, i)); return;
    case QV_ARROW_UINT64: putf(s, "%" PRIu64, qv_array_view_get_uint(v, i)); return;
    case QV_ARROW_HALF_FLOAT:
    case QV_ARROW_FLOAT: put_double(s, qv_array_view_get_double(v, i), true); return;
    case QV_ARROW_DOUBLE: put_double(s, qv_array_view_get_double(v, i), false); return;
    case QV_ARROW_DECIMAL32:
    case QV_ARROW_DECIMAL64:
    case QV_ARROW_DECIMAL128:
    case QV_ARROW_DECIMAL256: {
      QvBytes b = qv_array_view_get_bytes(v, i);
      put_decimal(s, b.data, (int)b.size, v->type.decimal_scale);
      return;
    }
    case QV_ARROW_INTERVAL_DAY_TIME: {
      QvBytes b = qv_array_view_get_bytes(v, i);
      putf(s, "{\"days\": %d, \"milliseconds\": %d}", qv_ld_i32(b.data), qv_ld_i32(b.data + 4));
      return;
    }
    case QV_ARROW_INTERVAL_MONTH_DAY_NANO: {
      QvBytes b = qv_array_view_get_bytes(v, i);
      putf(s, "{\"months\": %d, \"days\": %d, \"nanoseconds\": %" PRId64 "}", qv_ld_i32(b.data),
           qv_ld_i32(b.data + 4), qv_ld_i64(b.data + 8));
      return;
    }
    case QV_ARROW_STRING:
    case QV_ARROW_LARGE_STRING:
    case QV_ARROW_STRING_VIEW: {
      QvBytes b = qv_array_view_get_bytes(v, i);
      put_json_string(s, b.data, b.size);
      return;
    }
    case QV_ARROW_BINARY:
    case QV_ARROW_LARGE_BINARY:
    case QV_ARROW_BINARY_VIEW:
    case QV_ARROW_FIXED_SIZE_BINARY: {
      QvBytes b = qv_array_view_get_bytes(v, i);
      put_hex(s, b.data, b.size);
      return;
    }
    case QV_ARROW_LIST:
    case QV_ARROW_LARGE_LIST:
    case QV_ARROW_LIST_VIEW:
    case QV_ARROW_LARGE_LIST_VIEW:
    case QV_ARROW_FIXED_SIZE_LIST:
    case QV_ARROW_MAP: {
      int64_t start, len;
      qv_array_view_get_list(v, i, &start, &len);
      put(s, "[");
      for (int64_t k = 0; k < len && !s->truncated && !s->nomem; k++) {
        if (k) put(s, ", ");
        format_value(s, &v->children[0], start + k, depth + 1);
      }
      put(s, "]");
      return;
    }
    case QV_ARROW_STRUCT:
      put(s, "{");
      for (int64_t k = 0; k < v->n_children; k++) {
        if (k) put(s, ", ");
        const struct ArrowSchema *cs = v->children[k].type.schema;
        const char *name = cs && cs->name ? cs->name : "";
        put_json_string(s, (const uint8_t *)name, (int64_t)strlen(name));
        put(s, ": ");
        format_value(s, &v->children[k], v->offset + i, depth + 1);
      }
      put(s, "}");
      return;
    case QV_ARROW_SPARSE_UNION:
    case QV_ARROW_DENSE_UNION: {
      int64_t child, idx;
      qv_array_view_get_union(v, i, &child, &idx);
      if (child < 0)
        put(s, "null");
      else
        format_value(s, &v->children[child], idx, depth + 1);
      return;
    }
    case QV_ARROW_RUN_END_ENCODED:
      format_value(s, &v->children[1], qv_array_view_get_run(v, i), depth + 1);
      return;
    default: put(s, "null"); return;
  }
}

QvStatus qv_array_view_format_value(const QvArrayView *view, int64_t i, size_t max_len,
                                    char **out, QvError *error) {
  *out = NULL;
  if (i < 0 || i >= view->length)
    return qv_error_set(error, QV_EARG, "index %lld outside an array of %lld", (long long)i,
                        (long long)view->length);
  Str s = {NULL, 0, 0, max_len, false, false};
  format_value(&s, view, i, 0);
  if (s.truncated) {
    s.truncated = false;
    s.max = 0;
    put(&s, "...");
  }
  if (s.nomem || s.data == NULL) {
    if (!s.nomem) put(&s, "");
    if (s.nomem || s.data == NULL) {
      free(s.data);
      return qv_error_set(error, QV_ENOMEM, "out of memory");
    }
  }
  s.data[s.len] = '\0';
  *out = s.data;
  return QV_OK;
}
