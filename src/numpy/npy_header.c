/* The .npy header parser (numpy.lib.format): preamble, version, header
 * length and the Python dict literal, parsed strictly. */
#include "numpy/npy_header.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "util/load.h"

const uint8_t qvi_npy_magic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};

bool qvi_npy_host_big_endian(void) {
  const uint16_t one = 1;
  uint8_t first;
  memcpy(&first, &one, 1);
  return first == 0;
}

typedef struct Parser {
  const char *p, *end;
  const char *start;
  QvError *error;
} Parser;

static QvStatus vfail(Parser *ps, QvStatus code, const char *fmt, va_list ap) {
  char msg[512];
  vsnprintf(msg, sizeof msg, fmt, ap);
  return qv_error_set(ps->error, code, ".npy header: %s (at header byte %ld)", msg,
                      (long)(ps->p - ps->start));
}

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static QvStatus fail(Parser *ps, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  QvStatus st = vfail(ps, QV_EINVAL, fmt, ap);
  va_end(ap);
  return st;
}

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static QvStatus fail_code(Parser *ps, QvStatus code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  QvStatus st = vfail(ps, code, fmt, ap);
  va_end(ap);
  return st;
}

static void skip_ws(Parser *ps) {
  while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' ||
                             *ps->p == '\r' || *ps->p == '\f' || *ps->p == '\v'))
    ps->p++;
}

static QvStatus expect(Parser *ps, char c) {
  skip_ws(ps);
  if (ps->p >= ps->end) return fail(ps, "expected '%c', found the end of the header", c);
  if (*ps->p != c) return fail(ps, "expected '%c', found '%c'", c, *ps->p);
  ps->p++;
  return QV_OK;
}

/* A quoted string without escapes, copied into buf (NUL-terminated). */
static QvStatus parse_string(Parser *ps, char *buf, size_t cap, const char *what) {
  skip_ws(ps);
  if (ps->p >= ps->end || (*ps->p != '\'' && *ps->p != '"'))
    return fail(ps, "expected a quoted string for %s", what);
  char q = *ps->p++;
  const char *s = ps->p;
  while (ps->p < ps->end && *ps->p != q) {
    if (*ps->p == '\\')
      return fail_code(ps, QV_ENOTSUP, "escape sequences are not supported in %s", what);
    if (*ps->p == '\n') return fail(ps, "unterminated string in %s", what);
    /* NumPy's literal_eval refuses a header with a NUL byte; the C string
     * copied below would also end there ('<f8\0' read as '<f8') */
    if (*ps->p == '\0') return fail(ps, "%s contains a NUL byte", what);
    ps->p++;
  }
  if (ps->p >= ps->end) return fail(ps, "unterminated string in %s", what);
  size_t n = (size_t)(ps->p - s);
  ps->p++;
  if (n >= cap) {
    /* keep a readable prefix for the message */
    size_t k = cap - 1;
    memcpy(buf, s, k);
    buf[k] = '\0';
    return fail(ps, "%s '%s...' is too long", what, buf);
  }
  memcpy(buf, s, n);
  buf[n] = '\0';
  return QV_OK;
}

static bool is_ident_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

static QvStatus parse_bool(Parser *ps, bool *out) {
  skip_ws(ps);
  const char *s = ps->p;
  while (ps->p < ps->end && is_ident_char(*ps->p)) ps->p++;
  size_t n = (size_t)(ps->p - s);
  if (n == 4 && memcmp(s, "True", 4) == 0) {
    *out = true;
    return QV_OK;
  }
  if (n == 5 && memcmp(s, "False", 5) == 0) {
    *out = false;
    return QV_OK;
  }
  ps->p = s;
  return fail(ps, "'fortran_order' must be True or False");
}

/* shape: a tuple of non-negative integers; Python 2 writers added an 'L'
 * suffix to longs, which NumPy still reads. */
static QvStatus parse_shape(Parser *ps, QvNpyHeader *h) {
  QvStatus st = expect(ps, '(');
  if (st) return fail(ps, "'shape' must be a tuple such as (3, 4)");
  h->ndim = 0;
  bool need_comma_for_single = true;
  for (;;) {
    skip_ws(ps);
    if (ps->p >= ps->end) return fail(ps, "unterminated shape tuple");
    if (*ps->p == ')') {
      ps->p++;
      break;
    }
    if (*ps->p == '-') return fail(ps, "shape entry %d is negative", h->ndim);
    if (*ps->p < '0' || *ps->p > '9') return fail(ps, "shape entry %d is not an integer", h->ndim);
    if (h->ndim >= QV_TENSOR_MAX_NDIM)
      return fail_code(ps, QV_ELIMIT, "shape has more than %d dimensions", QV_TENSOR_MAX_NDIM);
    const char *digits = ps->p;
    int64_t v = 0;
    while (ps->p < ps->end && *ps->p >= '0' && *ps->p <= '9') {
      int d = *ps->p - '0';
      if (v > (INT64_MAX - d) / 10) return fail(ps, "shape entry %d overflows int64", h->ndim);
      v = v * 10 + d;
      ps->p++;
    }
    if (ps->p - digits > 1 && digits[0] == '0')
      return fail(ps, "shape entry %d has a leading zero", h->ndim);
    if (ps->p < ps->end && (*ps->p == 'L' || *ps->p == 'l')) ps->p++;
    if (ps->p < ps->end && is_ident_char(*ps->p))
      return fail(ps, "shape entry %d is not an integer", h->ndim);
    h->shape[h->ndim++] = v;
    skip_ws(ps);
    if (ps->p >= ps->end) return fail(ps, "unterminated shape tuple");
    if (*ps->p == ',') {
      ps->p++;
      need_comma_for_single = false;
      continue;
    }
    if (*ps->p != ')') return fail(ps, "expected ',' or ')' in the shape tuple");
    if (h->ndim == 1 && need_comma_for_single)
      return fail(ps, "'shape' (N) is an integer, not a tuple: write (N,)");
  }
  return QV_OK;
}

/* 'S<n>' / 'U<n>': n in 1..INT32_MAX without a leading zero. */
static bool parse_string_descr(const char *s, bool big, QvNpyString *str) {
  if (*s != 'S' && *s != 'U') return false;
  int size = *s == 'S' ? 1 : 4;
  s++;
  if (*s < '1' || *s > '9') return false;
  int64_t n = 0;
  for (; *s >= '0' && *s <= '9'; s++) {
    n = n * 10 + (*s - '0');
    if (n > INT32_MAX) return false;
  }
  if (*s != '\0') return false;
  str->present = true;
  str->char_size = size;
  str->length = n;
  str->big_endian = big;
  return true;
}

static QvStatus parse_descr(Parser *ps, const char *d, QvNpyHeader *h, QvNpyString *str) {
  const char *s = d;
  bool big = qvi_npy_host_big_endian();
  if (*s == '<' || *s == '>' || *s == '|' || *s == '=') {
    if (*s == '<') big = false;
    if (*s == '>') big = true;
    s++;
  }
  if (str && parse_string_descr(s, big, str)) return QV_OK;
  static const struct {
    const char *code;
    QvArrowType type;
  } known[] = {{"i1", QV_ARROW_INT8},    {"i2", QV_ARROW_INT16},   {"i4", QV_ARROW_INT32},
               {"i8", QV_ARROW_INT64},   {"u1", QV_ARROW_UINT8},   {"u2", QV_ARROW_UINT16},
               {"u4", QV_ARROW_UINT32},  {"u8", QV_ARROW_UINT64},  {"f2", QV_ARROW_FLOAT16},
               {"f4", QV_ARROW_FLOAT32}, {"f8", QV_ARROW_FLOAT64}};
  for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) {
    if (strcmp(s, known[i].code) == 0) {
      h->type = known[i].type;
      h->big_endian = big;
      return QV_OK;
    }
  }
  /* a NumPy kind quiver does not read (bool, complex, strings, objects,
   * datetimes, float128) is not supported; anything else is no dtype */
  bool numpy_kind = *s != '\0' && strchr("biufcmMOSUVa", *s) != NULL;
  const char *q = s + (numpy_kind ? 1 : 0);
  while (*q >= '0' && *q <= '9') q++;
  if (*q == '[') { /* a datetime unit: 'M8[ns]' */
    while (*q != '\0' && *q != ']') q++;
    if (*q == ']') q++;
  }
  numpy_kind = numpy_kind && *q == '\0';
  return fail_code(ps, numpy_kind ? QV_ENOTSUP : QV_EINVAL,
                   "%s dtype '%s' (%squiver reads i1 i2 i4 i8 u1 u2 u4 u8 f2 f4 f8 with byte "
                   "order < > | =)",
                   numpy_kind ? "unsupported" : "unknown", d, numpy_kind ? "not supported; " : "");
}

static QvStatus parse_dict(Parser *ps, QvNpyHeader *h, QvNpyString *str) {
  QvStatus st = expect(ps, '{');
  if (st) return st;
  bool have_descr = false, have_order = false, have_shape = false;
  for (;;) {
    skip_ws(ps);
    if (ps->p < ps->end && *ps->p == '}') {
      ps->p++;
      break;
    }
    char key[32];
    if ((st = parse_string(ps, key, sizeof key, "a key"))) return st;
    if ((st = expect(ps, ':'))) return st;
    if (strcmp(key, "descr") == 0) {
      if (have_descr) return fail(ps, "duplicate key 'descr'");
      have_descr = true;
      skip_ws(ps);
      if (ps->p < ps->end && *ps->p == '[')
        return fail_code(ps, QV_ENOTSUP, "structured dtypes (a list 'descr') are not supported");
      char d[16];
      if ((st = parse_string(ps, d, sizeof d, "'descr'"))) return st;
      if ((st = parse_descr(ps, d, h, str))) return st;
      /* a numeric descr has at most 3 chars; a string one may not fit */
      snprintf(h->descr, sizeof h->descr, "%s", d);
    } else if (strcmp(key, "fortran_order") == 0) {
      if (have_order) return fail(ps, "duplicate key 'fortran_order'");
      have_order = true;
      if ((st = parse_bool(ps, &h->fortran_order))) return st;
    } else if (strcmp(key, "shape") == 0) {
      if (have_shape) return fail(ps, "duplicate key 'shape'");
      have_shape = true;
      if ((st = parse_shape(ps, h))) return st;
    } else {
      return fail(ps, "unexpected key '%s'", key);
    }
    skip_ws(ps);
    if (ps->p >= ps->end) return fail(ps, "unterminated dictionary");
    if (*ps->p == ',') {
      ps->p++;
      continue;
    }
    if (*ps->p != '}') return fail(ps, "expected ',' or '}' after a value");
  }
  if (!have_descr) return fail(ps, "missing key 'descr'");
  if (!have_order) return fail(ps, "missing key 'fortran_order'");
  if (!have_shape) return fail(ps, "missing key 'shape'");
  skip_ws(ps);
  if (ps->p != ps->end) return fail(ps, "unexpected characters after the dictionary");
  return QV_OK;
}

QvStatus qvi_npy_header_parse(const uint8_t *data, size_t size, QvNpyHeader *h, QvNpyString *str,
                             QvError *error) {
  if (h == NULL) return qv_error_set(error, QV_EARG, "NULL header");
  memset(h, 0, sizeof *h);
  if (str) memset(str, 0, sizeof *str);
  if (data == NULL && size > 0) return qv_error_set(error, QV_EARG, "NULL data");
  if (size < sizeof qvi_npy_magic || memcmp(data, qvi_npy_magic, sizeof qvi_npy_magic) != 0)
    return qv_error_set(error, QV_EINVAL, "not a .npy file: bad magic (expected \\x93NUMPY)");
  if (size < 8) return qv_error_set(error, QV_ETRUNCATED, ".npy: truncated before the version");
  h->major = data[6];
  h->minor = data[7];
  if ((h->major != 1 && h->major != 2 && h->major != 3) || h->minor != 0)
    return qv_error_set(error, QV_ENOTSUP, ".npy: unsupported format version %d.%d", h->major,
                        h->minor);
  size_t pre = h->major == 1 ? 10 : 12;
  if (size < pre)
    return qv_error_set(error, QV_ETRUNCATED, ".npy: truncated inside the header length");
  uint64_t hl = h->major == 1 ? qvi_le_u16(data + 8) : qvi_le_u32(data + 8);
  if (hl > QV_NPY_MAX_HEADER_SIZE)
    return qv_error_set(error, QV_ELIMIT, ".npy: header length %llu exceeds the limit of %d",
                        (unsigned long long)hl, QV_NPY_MAX_HEADER_SIZE);
  if (hl > size - pre)
    return qv_error_set(error, QV_ETRUNCATED,
                        ".npy: header length %llu extends past the end of the input (%zu bytes "
                        "after the preamble)",
                        (unsigned long long)hl, size - pre);
  const char *hdr = (const char *)data + pre;
  if (h->major < 3) {
    /* 1.0 and 2.0 headers are latin-1; only ASCII can form a valid one */
    for (uint64_t i = 0; i < hl; i++)
      if ((unsigned char)hdr[i] >= 0x80)
        return qv_error_set(error, QV_EINVAL, ".npy header: non-ASCII byte 0x%02x at %llu",
                            (unsigned char)hdr[i], (unsigned long long)i);
  }
  Parser ps = {hdr, hdr + hl, hdr, error};
  QvStatus st = parse_dict(&ps, h, str);
  if (st) return st;
  h->data_offset = pre + (size_t)hl;
  int64_t n = str && str->present ? str->char_size * str->length
                                  : (int64_t)qv_arrow_type_size(h->type);
  bool empty = false;
  for (int32_t i = 0; i < h->ndim; i++) empty |= h->shape[i] == 0;
  /* As the tensor model (and NumPy) do: the non-zero extents must fit int64
   * bytes even when another extent is 0. */
  for (int32_t i = 0; i < h->ndim; i++)
    if (h->shape[i] != 0 && __builtin_mul_overflow(n, h->shape[i], &n))
      return qv_error_set(error, QV_EINVAL, ".npy header: shape of %s overflows int64 bytes",
                          h->descr);
  h->data_size = empty ? 0 : n;
  return QV_OK;
}

QvStatus qv_npy_parse_header(const uint8_t *data, size_t size, QvNpyHeader *h, QvError *error) {
  return qvi_npy_header_parse(data, size, h, NULL, error);
}
