/* Values of a view as JSON text, for printing and for comparing arrays in
 * tests, or as text for a person (qv_array_view_format_human): ISO 8601
 * dates, times, timestamps and durations, bare decimals, nan/inf. */
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array/array_internal.h"
#include "quiver/advanced.h"
#include "util/grow.h"
#include "util/half.h"

typedef struct Str {
  QvStrBuf text;
  size_t max;     /* 0: unlimited */
  bool truncated;
  bool human;     /* qv_array_view_format_human's leaves */
} Str;

static void put_n(Str *s, const char *p, size_t n) {
  if (s->truncated || s->text.nomem) return;
  if (s->max && s->text.len + n > s->max) {
    n = s->max > s->text.len ? s->max - s->text.len : 0;
    s->truncated = true;
  }
  qvi_strbuf_put(&s->text, p, n);
}

static void put(Str *s, const char *p) { put_n(s, p, strlen(p)); }

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static void putf(Str *s, const char *fmt, ...) {
  char buf[QVI_SHORT_TEXT];
  va_list ap;
  va_start(ap, fmt);
  size_t n = qvi_format_short(buf, fmt, ap);
  va_end(ap);
  if (n > 0) put_n(s, buf, n);
}

/* The invisible code point whose UTF-8 form starts p[0..n), with its
 * length in *len; 0 when there is none (ASCII, other characters, invalid
 * bytes: those are left as they are). */
static uint32_t invisible_at(const uint8_t *p, int64_t n, int *len) {
  int k = p[0] >= 0xC2 && p[0] <= 0xDF ? 2 : p[0] >= 0xE0 && p[0] <= 0xEF ? 3
        : p[0] >= 0xF0 && p[0] <= 0xF4 ? 4 : 0;
  if (k == 0 || n < k) return 0;
  uint32_t cp = p[0] & (0x7F >> k);
  for (int i = 1; i < k; i++) {
    if ((p[i] & 0xC0) != 0x80) return 0;
    cp = cp << 6 | (p[i] & 0x3F);
  }
  *len = k;
  return qv_unicode_is_invisible(cp) ? cp : 0;
}

static void put_json_string(Str *s, const uint8_t *p, int64_t n) {
  put(s, "\"");
  int64_t run = 0;
  for (int64_t i = 0; i < n && !s->truncated; i++) {
    uint8_t c = p[i];
    int k = 1;
    uint32_t cp = c >= 0x80 ? invisible_at(p + i, n - i, &k) : 0;
    if (c == '"' || c == '\\' || c < 0x20 || c == 0x7F || cp) {
      put_n(s, (const char *)p + run, (size_t)(i - run));
      if (c == '"') put(s, "\\\"");
      else if (c == '\\') put(s, "\\\\");
      else if (c == '\n') put(s, "\\n");
      else if (c == '\t') put(s, "\\t");
      else if (c == '\r') put(s, "\\r");
      else if (cp > 0xFFFF) /* JSON spells it as a surrogate pair */
        putf(s, "\\u%04x\\u%04x", 0xD800 + ((cp - 0x10000) >> 10), 0xDC00 + ((cp - 0x10000) & 0x3FF));
      else putf(s, "\\u%04x", cp ? cp : c);
      i += k - 1;
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

/* bits: 16, 32 or 64, the value's own type. */
static void put_double(Str *s, double d, int bits) {
  if (s->human && (isnan(d) || isinf(d))) { /* as NumPy prints them */
    put(s, isnan(d) ? "nan" : d > 0 ? "inf" : "-inf");
    return;
  }
  if (isnan(d)) {
    put(s, "\"NaN\"");
    return;
  }
  if (isinf(d)) {
    put(s, d > 0 ? "\"Infinity\"" : "\"-Infinity\"");
    return;
  }
  /* The fewest significant digits that read back as the same value in its
   * own type (a float16 0.1 is "0.1", the smallest subnormal "5e-324"),
   * positional up to the type's usual digits (100, not 1e+02). */
  char buf[64];
  int digits = 17;
  for (int prec = 1; prec < 17; prec++) {
    snprintf(buf, sizeof buf, "%.*e", prec - 1, d);
    double r = strtod(buf, NULL);
    bool same = bits == 16   ? qvi_double_to_half(r) == qvi_double_to_half(d)
                : bits == 32 ? (float)r == (float)d
                             : r == d;
    if (same) {
      digits = prec;
      break;
    }
  }
  int exp10 = d == 0 ? 0 : (int)floor(log10(fabs(d)));
  int wide = bits == 64 ? 15 : 6;
  int prec = exp10 >= 0 && exp10 < wide && exp10 + 1 > digits ? exp10 + 1 : digits;
  snprintf(buf, sizeof buf, "%.*g", prec, d);
  put(s, buf);
}

/* Two's complement host-order integer of n bytes with `scale` decimals. */
static void put_decimal(Str *s, const uint8_t *p, int n, int32_t scale) {
  uint8_t le[32];
  qvi_le_bytes(le, p, (size_t)n);
  uint32_t limbs[8] = {0};
  int nl = n / 4;
  for (int i = 0; i < nl; i++) limbs[i] = qvi_le_u32(le + 4 * i);
  bool neg = (le[n - 1] & 0x80) != 0;
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
  if (!s->human) put(s, "\"");
  if (neg) put(s, "-");
  if (scale < -80 || scale > 160) {
    /* far out of the positional range: <digits>e<exponent> */
    put_n(s, text, (size_t)nd);
    putf(s, "e%lld", -(long long)scale);
  } else if (scale <= 0) {
    put_n(s, text, (size_t)nd);
    if (s->human && nd == 1 && text[0] == '0') scale = 0; /* zero is "0", not "0000" */
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
  if (!s->human) put(s, "\"");
}

/* ---- human text of temporal values. Everything is integer arithmetic with
 * floor division, so values before 1970 and negative durations come out
 * right; values outside years 0000..9999 print as the raw number and its
 * unit ("253402300800 s"), the documented fallback. */

static const char *const unit_suffix[4] = {"s", "ms", "us", "ns"};
static const int64_t unit_per_sec[4] = {1, 1000, 1000000, 1000000000};
static const int unit_digits[4] = {0, 3, 6, 9};

static int64_t floor_div(int64_t a, int64_t b, int64_t *rem) { /* b > 0 */
  int64_t q = a / b, r = a % b;
  if (r < 0) {
    q--;
    r += b;
  }
  *rem = r;
  return q;
}

/* Days since 1970-01-01 to a proleptic Gregorian date (H. Hinnant's
 * civil_from_days). false when the year is outside 0..9999. */
static bool civil_from_days(int64_t z, int64_t *y, unsigned *m, unsigned *d) {
  if (z < -719528 || z > 2932896) return false; /* 0000-01-01 .. 9999-12-31 */
  z += 719468;
  int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  unsigned doe = (unsigned)(z - era * 146097);
  unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  unsigned mp = (5 * doy + 2) / 153;
  *d = doy - (153 * mp + 2) / 5 + 1;
  *m = mp < 10 ? mp + 3 : mp - 9;
  *y = (int64_t)yoe + era * 400 + (*m <= 2);
  return true;
}

static bool put_date(Str *s, int64_t days) {
  int64_t y;
  unsigned m, d;
  if (!civil_from_days(days, &y, &m, &d)) return false;
  putf(s, "%04d-%02u-%02u", (int)y, m, d);
  return true;
}

/* hh:mm:ss plus the unit's fraction digits */
static void put_clock(Str *s, int64_t sec_of_day, int64_t frac, int unit) {
  putf(s, "%02d:%02d:%02d", (int)(sec_of_day / 3600), (int)(sec_of_day / 60 % 60),
       (int)(sec_of_day % 60));
  if (unit_digits[unit]) putf(s, ".%0*lld", unit_digits[unit], (long long)frac);
}

/* A date-time of `value` units since the epoch; false when out of range. */
static bool put_datetime(Str *s, int64_t value, int unit) {
  int64_t frac, rem;
  int64_t sec = floor_div(value, unit_per_sec[unit], &frac);
  int64_t days = floor_div(sec, 86400, &rem);
  if (!put_date(s, days)) return false;
  put(s, "T");
  put_clock(s, rem, frac, unit);
  return true;
}

static bool tz_is(const char *tz, size_t n, const char *name) {
  return strlen(name) == n && memcmp(tz, name, n) == 0;
}

/* "+hh:mm" / "-hh:mm" (Arrow's fixed-offset zones) to seconds east of UTC */
static bool tz_offset(const char *tz, size_t n, int64_t *seconds) {
  if (n != 6 || (tz[0] != '+' && tz[0] != '-') || tz[3] != ':') return false;
  for (int k = 1; k < 6; k++)
    if (k != 3 && (tz[k] < '0' || tz[k] > '9')) return false;
  int h = (tz[1] - '0') * 10 + (tz[2] - '0'), m = (tz[4] - '0') * 10 + (tz[5] - '0');
  if (h > 23 || m > 59) return false;
  *seconds = (tz[0] == '-' ? -1 : 1) * (int64_t)(h * 3600 + m * 60);
  return true;
}

/* A zone name is data from the file: control bytes, ']' and '\\' escaped as
 * \\xHH, and cut after 64 bytes ("...") since timestamps are never cut. */
static void put_zone_name(Str *s, const char *tz, size_t tz_len) {
  for (size_t k = 0; k < tz_len && k < 64; k++) {
    unsigned char c = (unsigned char)tz[k];
    if (c < 0x20 || c == 0x7f || c == ']' || c == '\\')
      putf(s, "\\x%02x", c);
    else
      put_n(s, tz + k, 1);
  }
  if (tz_len > 64) put(s, "...");
}

/* Timestamps: naive ones as local date-times; zoned ones (the value is a UTC
 * instant) with a fixed offset converted to that offset and suffixed with it,
 * UTC ("UTC", "Etc/UTC", "Z", "+00:00") suffixed "+00:00", and named zones as
 * the UTC instant with the name in brackets (RFC 9557), since the library
 * carries no time zone database. */
static void put_timestamp(Str *s, int64_t value, int unit, const char *tz, size_t tz_len) {
  int64_t offset = 0;
  bool fixed = tz_len && tz_offset(tz, tz_len, &offset);
  bool utc = tz_len && !fixed &&
             (tz_is(tz, tz_len, "UTC") || tz_is(tz, tz_len, "Etc/UTC") || tz_is(tz, tz_len, "Z"));
  int64_t shifted = value;
  bool overflow = fixed && __builtin_add_overflow(value, offset * unit_per_sec[unit], &shifted);
  if (overflow || !put_datetime(s, shifted, unit)) {
    putf(s, "%lld %s", (long long)value, unit_suffix[unit]);
    if (tz_len) {
      put(s, " [");
      put_zone_name(s, tz, tz_len);
      put(s, "]");
    }
    return;
  }
  if (fixed)
    put_n(s, tz, tz_len);
  else if (utc)
    put(s, "+00:00");
  else if (tz_len) {
    put(s, "Z[");
    put_zone_name(s, tz, tz_len);
    put(s, "]");
  }
}

/* ISO 8601 durations in hours, minutes and seconds (PT1H2M3.5S; days are not
 * used because a day is not always 24 hours), a leading '-' when negative,
 * fraction digits without trailing zeros. */
static void put_duration(Str *s, int64_t value, int unit) {
  uint64_t mag = value < 0 ? 0 - (uint64_t)value : (uint64_t)value;
  uint64_t per = (uint64_t)unit_per_sec[unit];
  uint64_t sec = mag / per, frac = mag % per;
  uint64_t h = sec / 3600, m = sec / 60 % 60, sc = sec % 60;
  put(s, value < 0 ? "-PT" : "PT");
  if (h) putf(s, "%lluH", (unsigned long long)h);
  if (m) putf(s, "%lluM", (unsigned long long)m);
  if (sc || frac || (!h && !m)) {
    putf(s, "%llu", (unsigned long long)sc);
    if (frac) {
      char digits[16];
      snprintf(digits, sizeof digits, "%0*llu", unit_digits[unit], (unsigned long long)frac);
      size_t n = strlen(digits);
      while (n > 0 && digits[n - 1] == '0') n--;
      put(s, ".");
      put_n(s, digits, n);
    }
    put(s, "S");
  }
}

static void put_count(Str *s, bool *first, long long n, const char *what) {
  putf(s, "%s%lld %s%s", *first ? "" : " ", n, what, n == 1 || n == -1 ? "" : "s");
  *first = false;
}

/* Temporal and interval values as a person reads them; false for other types. */
static bool format_human(Str *s, const QvArrayView *v, int64_t i) {
  int unit = (int)v->type.time_unit & 3;
  switch (v->type.type) {
    case QV_ARROW_DATE32: {
      int64_t d = qv_array_view_get_int(v, i);
      if (!put_date(s, d)) putf(s, "%lld days", (long long)d);
      return true;
    }
    case QV_ARROW_DATE64: {
      int64_t ms = qv_array_view_get_int(v, i), rem;
      int64_t days = floor_div(ms, 86400000, &rem);
      bool ok = rem ? put_datetime(s, ms, QV_TIME_MILLISECOND) : put_date(s, days);
      if (!ok) putf(s, "%lld ms", (long long)ms);
      return true;
    }
    case QV_ARROW_TIME32:
    case QV_ARROW_TIME64: {
      int64_t t = qv_array_view_get_int(v, i);
      if (t < 0 || t / unit_per_sec[unit] >= 86400)
        putf(s, "%lld %s", (long long)t, unit_suffix[unit]); /* not a time of day */
      else
        put_clock(s, t / unit_per_sec[unit], t % unit_per_sec[unit], unit);
      return true;
    }
    case QV_ARROW_TIMESTAMP:
      put_timestamp(s, qv_array_view_get_int(v, i), unit, v->type.timezone,
                    v->type.timezone ? v->type.timezone_len : 0);
      return true;
    case QV_ARROW_DURATION: put_duration(s, qv_array_view_get_int(v, i), unit); return true;
    case QV_ARROW_INTERVAL_MONTHS: {
      bool first = true;
      put_count(s, &first, (long long)qv_array_view_get_int(v, i), "month");
      return true;
    }
    case QV_ARROW_INTERVAL_DAY_TIME: {
      QvBytes b = qv_array_view_get_bytes(v, i);
      bool first = true;
      put_count(s, &first, qvi_ld_i32(b.data), "day");
      putf(s, " %d ms", qvi_ld_i32(b.data + 4));
      return true;
    }
    case QV_ARROW_INTERVAL_MONTH_DAY_NANO: {
      QvBytes b = qv_array_view_get_bytes(v, i);
      bool first = true;
      put_count(s, &first, qvi_ld_i32(b.data), "month");
      put_count(s, &first, qvi_ld_i32(b.data + 4), "day");
      putf(s, " %lld ns", (long long)qvi_ld_i64(b.data + 8));
      return true;
    }
    default: return false;
  }
}

/* A value qv_array_view_get_bytes returns: a decimal, a two-part interval,
 * a string (as a JSON string) or a binary (as hex). */
static void format_bytes(Str *s, const QvArrayView *v, QvBytes b) {
  switch (v->type.type) {
    case QV_ARROW_DECIMAL32:
    case QV_ARROW_DECIMAL64:
    case QV_ARROW_DECIMAL128:
    case QV_ARROW_DECIMAL256: put_decimal(s, b.data, (int)b.size, v->type.decimal_scale); return;
    case QV_ARROW_INTERVAL_DAY_TIME:
      putf(s, "{\"days\": %d, \"milliseconds\": %d}", qvi_ld_i32(b.data), qvi_ld_i32(b.data + 4));
      return;
    case QV_ARROW_INTERVAL_MONTH_DAY_NANO:
      putf(s, "{\"months\": %d, \"days\": %d, \"nanoseconds\": %" PRId64 "}", qvi_ld_i32(b.data),
           qvi_ld_i32(b.data + 4), qvi_ld_i64(b.data + 8));
      return;
    case QV_ARROW_STRING:
    case QV_ARROW_LARGE_STRING:
    case QV_ARROW_STRING_VIEW: put_json_string(s, b.data, b.size); return;
    default: put_hex(s, b.data, b.size); return; /* the binaries */
  }
}

static void format_value(Str *s, const QvArrayView *v, int64_t i, int depth) {
  if (s->truncated || s->text.nomem) return;
  if (depth > QV_ARRAY_MAX_DEPTH) {
    put(s, "\"...\"");
    return;
  }
  QvLayout L = qvi_view_layout(v);
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
  if (s->human && format_human(s, v, i)) return;
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
    case QV_ARROW_FLOAT16: put_double(s, qv_array_view_get_double(v, i), 16); return;
    case QV_ARROW_FLOAT32: put_double(s, qv_array_view_get_double(v, i), 32); return;
    case QV_ARROW_FLOAT64: put_double(s, qv_array_view_get_double(v, i), 64); return;
    case QV_ARROW_DECIMAL32:
    case QV_ARROW_DECIMAL64:
    case QV_ARROW_DECIMAL128:
    case QV_ARROW_DECIMAL256:
    case QV_ARROW_INTERVAL_DAY_TIME:
    case QV_ARROW_INTERVAL_MONTH_DAY_NANO:
    case QV_ARROW_STRING:
    case QV_ARROW_LARGE_STRING:
    case QV_ARROW_STRING_VIEW:
    case QV_ARROW_BINARY:
    case QV_ARROW_LARGE_BINARY:
    case QV_ARROW_BINARY_VIEW:
    case QV_ARROW_FIXED_SIZE_BINARY: format_bytes(s, v, qv_array_view_get_bytes(v, i)); return;
    case QV_ARROW_LIST:
    case QV_ARROW_LARGE_LIST:
    case QV_ARROW_LIST_VIEW:
    case QV_ARROW_LARGE_LIST_VIEW:
    case QV_ARROW_FIXED_SIZE_LIST:
    case QV_ARROW_MAP: {
      int64_t start, len;
      qv_array_view_get_list(v, i, &start, &len);
      put(s, "[");
      for (int64_t k = 0; k < len && !s->truncated && !s->text.nomem; k++) {
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

static bool is_scalar(QvArrowType t) {
  switch (t) {
    case QV_ARROW_BOOL:
    case QV_ARROW_INT8:
    case QV_ARROW_INT16:
    case QV_ARROW_INT32:
    case QV_ARROW_INT64:
    case QV_ARROW_UINT8:
    case QV_ARROW_UINT16:
    case QV_ARROW_UINT32:
    case QV_ARROW_UINT64:
    case QV_ARROW_FLOAT16:
    case QV_ARROW_FLOAT32:
    case QV_ARROW_FLOAT64:
    case QV_ARROW_DECIMAL32:
    case QV_ARROW_DECIMAL64:
    case QV_ARROW_DECIMAL128:
    case QV_ARROW_DECIMAL256:
    case QV_ARROW_DATE32:
    case QV_ARROW_DATE64:
    case QV_ARROW_TIME32:
    case QV_ARROW_TIME64:
    case QV_ARROW_TIMESTAMP:
    case QV_ARROW_DURATION:
    case QV_ARROW_INTERVAL_MONTHS:
    case QV_ARROW_INTERVAL_DAY_TIME:
    case QV_ARROW_INTERVAL_MONTH_DAY_NANO: return true;
    default: return false;
  }
}

static QvStatus format(const QvArrayView *view, int64_t i, size_t max_len, bool human,
                       char **out, QvError *error) {
  *out = NULL;
  if (i < 0 || i >= view->length)
    return qv_error_set(error, QV_EARG, "index %lld outside an array of %lld", (long long)i,
                        (long long)view->length);
  /* for a person, a number, date or time is never cut (at most ~100 bytes):
   * the limit is for strings, binaries and nested values */
  if (human && is_scalar(view->type.type)) max_len = 0;
  Str s = {{NULL, 0, 0, false}, max_len, false, human};
  format_value(&s, view, i, 0);
  if (s.truncated) {
    s.truncated = false;
    s.max = 0;
    put(&s, "...");
  }
  if (!qvi_strbuf_put(&s.text, "", 0)) { /* an empty value is "" */
    free(s.text.data);
    return qv_error_set(error, QV_ENOMEM, "out of memory");
  }
  *out = s.text.data;
  return QV_OK;
}

QvStatus qv_array_view_format_value(const QvArrayView *view, int64_t i, size_t max_len,
                                    char **out, QvError *error) {
  return format(view, i, max_len, false, out, error);
}

QvStatus qv_array_view_format_human(const QvArrayView *view, int64_t i, size_t max_len,
                                    char **out, QvError *error) {
  return format(view, i, max_len, true, out, error);
}
