/* NumPy .npy reader and writer. */
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ipc/sink_internal.h"
#include "ipc/source_internal.h"
#include "util/copy.h"
#include "quiver/npy.h"

/* Defined in tensor_io.c: memcpy that stays fast for large copies. */

static const uint8_t npy_magic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};
#define DATA_ALIGN 64

static bool host_is_big_endian(void) {
  const uint16_t one = 1;
  uint8_t first;
  memcpy(&first, &one, 1);
  return first == 0;
}

/* ---- header parsing */

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
    if (*ps->p == '\\') return fail(ps, "escape sequences are not supported in %s", what);
    if (*ps->p == '\n') return fail(ps, "unterminated string in %s", what);
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

static QvStatus parse_descr(Parser *ps, const char *d, QvNpyHeader *h) {
  const char *s = d;
  bool big = host_is_big_endian();
  if (*s == '<' || *s == '>' || *s == '|' || *s == '=') {
    if (*s == '<') big = false;
    if (*s == '>') big = true;
    s++;
  }
  static const struct {
    const char *code;
    QvValueType type;
  } known[] = {{"i1", QV_VALUE_INT8},    {"i2", QV_VALUE_INT16},   {"i4", QV_VALUE_INT32},
               {"i8", QV_VALUE_INT64},   {"u1", QV_VALUE_UINT8},   {"u2", QV_VALUE_UINT16},
               {"u4", QV_VALUE_UINT32},  {"u8", QV_VALUE_UINT64},  {"f2", QV_VALUE_FLOAT16},
               {"f4", QV_VALUE_FLOAT32}, {"f8", QV_VALUE_FLOAT64}};
  for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) {
    if (strcmp(s, known[i].code) == 0) {
      h->type = known[i].type;
      h->big_endian = big;
      return QV_OK;
    }
  }
  return fail(ps,
              "unsupported dtype '%s' (supported: i1 i2 i4 i8 u1 u2 u4 u8 f2 f4 f8 with byte "
              "order < > | =)",
              d);
}

static QvStatus parse_dict(Parser *ps, QvNpyHeader *h) {
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
        return fail(ps, "structured dtypes (a list 'descr') are not supported");
      char d[16];
      if ((st = parse_string(ps, d, sizeof d, "'descr'"))) return st;
      if ((st = parse_descr(ps, d, h))) return st;
      memcpy(h->descr, d, strlen(d) + 1); /* a known descr has at most 3 chars */
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

QvStatus qv_npy_parse_header(const uint8_t *data, size_t size, QvNpyHeader *h, QvError *error) {
  if (h == NULL) return qv_error_set(error, QV_EARG, "NULL header");
  memset(h, 0, sizeof *h);
  if (data == NULL && size > 0) return qv_error_set(error, QV_EARG, "NULL data");
  if (size < sizeof npy_magic || memcmp(data, npy_magic, sizeof npy_magic) != 0)
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
  uint64_t hl = h->major == 1 ? (uint64_t)data[8] | (uint64_t)data[9] << 8
                              : (uint64_t)data[8] | (uint64_t)data[9] << 8 |
                                    (uint64_t)data[10] << 16 | (uint64_t)data[11] << 24;
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
  QvStatus st = parse_dict(&ps, h);
  if (st) return st;
  h->data_offset = pre + (size_t)hl;
  int64_t n = (int64_t)qv_value_type_size(h->type);
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

/* ---- reading */

static void free_aligned(void *p) { qv_aligned_free(p); }

static void swap_bytes(uint8_t *p, int64_t n, size_t elsize) {
  for (int64_t i = 0; i < n; i += (int64_t)elsize) {
    uint8_t *e = p + i;
    for (size_t a = 0, b = elsize - 1; a < b; a++, b--) {
      uint8_t t = e[a];
      e[a] = e[b];
      e[b] = t;
    }
  }
}

QvStatus qv_npy_read_memory(const uint8_t *data, size_t size, QvOwner *owner, QvTensor *out,
                            size_t *consumed, QvError *error) {
  if (out == NULL) return qv_error_set(error, QV_EARG, "NULL output tensor");
  memset(out, 0, sizeof *out);
  if (consumed) *consumed = 0;
  QvNpyHeader h;
  QvStatus st = qv_npy_parse_header(data, size, &h, error);
  if (st) return st;
  if ((uint64_t)h.data_size > size - h.data_offset)
    return qv_error_set(error, QV_ETRUNCATED,
                        ".npy: data holds %zu bytes but shape and dtype '%s' need %lld",
                        size - h.data_offset, h.descr, (long long)h.data_size);
  int64_t strides[QV_TENSOR_MAX_NDIM];
  if ((st = qv_tensor_compute_strides(h.type, h.ndim, h.shape, h.fortran_order, strides, error)))
    return qv_error_prefix(error, ".npy");
  size_t elsize = qv_value_type_size(h.type);
  const uint8_t *p = data + h.data_offset;
  bool swap = elsize > 1 && h.big_endian != host_is_big_endian();
  QvOwner *copy_owner = NULL;
  if (h.data_size > 0 && (swap || (uintptr_t)p % elsize != 0)) {
    uint8_t *copy = qv_aligned_alloc((size_t)h.data_size);
    if (copy == NULL) return qv_error_set(error, QV_ENOMEM, "out of memory reading .npy data");
    memcpy(copy, p, (size_t)h.data_size);
    if (swap) swap_bytes(copy, h.data_size, elsize);
    copy_owner = qv_owner_new(free_aligned, copy);
    if (copy_owner == NULL) {
      qv_aligned_free(copy);
      return qv_error_set(error, QV_ENOMEM, "out of memory");
    }
    p = copy;
    owner = copy_owner;
  }
  st = qv_tensor_init(out, &(QvTensorDesc){.type = h.type, .ndim = h.ndim, .shape = h.shape,
                                           .strides = strides, .data = p, .data_size = h.data_size,
                                           .owner = owner}, error);
  qv_owner_free(copy_owner);
  if (st) return qv_error_prefix(error, ".npy");
  if (consumed) *consumed = h.data_offset + (size_t)h.data_size;
  return QV_OK;
}

QvStatus qv_npy_read_path(const char *path, QvTensor *out, QvError *error) {
  if (out == NULL || path == NULL) return qv_error_set(error, QV_EARG, "NULL argument");
  memset(out, 0, sizeof *out);
  const uint8_t *data;
  size_t size;
  QvOwner *owner;
  QvStatus st = qv_source_map_path(path, &data, &size, &owner, error);
  if (st) return st;
  if (size == 0) {
    qv_owner_free(owner);
    return qv_error_set(error, QV_EINVAL, "%s: not a .npy file: empty", path);
  }
  st = qv_npy_read_memory(data, size, owner, out, NULL, error);
  qv_owner_free(owner); /* the tensor keeps the mapping if it is a view */
  if (st) return qv_error_prefix(error, "%s", path);
  return QV_OK;
}

/* ---- writing */

typedef struct NpyPlan {
  char header[2048 + DATA_ALIGN]; /* preamble + dict + padding */
  size_t header_size;
  int64_t data_len;
  bool direct; /* data_len bytes at t->data, in the order the header says */
} NpyPlan;

static QvStatus plan_npy(const QvTensor *t, NpyPlan *p, QvError *error) {
  memset(p, 0, sizeof *p);
  if (t == NULL) return qv_error_set(error, QV_EARG, "NULL tensor");
  if (t->type < QV_VALUE_INT8 || t->type >= QV_VALUE_TYPE_COUNT)
    return qv_error_set(error, QV_EARG, "tensor has an invalid value type %d", (int)t->type);
  if (t->ndim < 0 || t->ndim > QV_TENSOR_MAX_NDIM || (t->ndim > 0 && t->shape == NULL))
    return qv_error_set(error, QV_EARG, "tensor has an invalid shape");
  static const char *codes[QV_VALUE_TYPE_COUNT] = {
      [QV_VALUE_INT8] = "i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8", "f2", "f4", "f8"};
  size_t elsize = qv_value_type_size(t->type);
  char order = elsize == 1 ? '|' : host_is_big_endian() ? '>' : '<';
  int64_t size = qv_tensor_size(t);
  if (size < 0 || (size > 0 && size > INT64_MAX / (int64_t)elsize))
    return qv_error_set(error, QV_EARG, "tensor size overflows");
  p->data_len = size * (int64_t)elsize;
  if (size > 0 && t->data == NULL) return qv_error_set(error, QV_EARG, "tensor has no data");
  bool fortran = !qv_tensor_is_row_major(t) && qv_tensor_is_column_major(t);
  p->direct = size == 0 || qv_tensor_is_contiguous(t);

  char dict[2048]; /* 64 dims of 19 digits and the fixed text fit */
  int n = snprintf(dict, sizeof dict, "{'descr': '%c%s', 'fortran_order': %s, 'shape': (", order,
                   codes[t->type], fortran ? "True" : "False");
  for (int32_t i = 0; i < t->ndim; i++)
    n += snprintf(dict + n, sizeof dict - (size_t)n, "%s%lld", i ? ", " : "",
                  (long long)t->shape[i]);
  n += snprintf(dict + n, sizeof dict - (size_t)n, "%s), }", t->ndim == 1 ? "," : "");
  size_t dict_len = (size_t)n;
  size_t pre = 10;
  size_t total = (pre + dict_len + 1 + DATA_ALIGN - 1) / DATA_ALIGN * DATA_ALIGN;
  size_t hl = total - pre;
  uint8_t *h = (uint8_t *)p->header;
  memcpy(h, npy_magic, sizeof npy_magic);
  h[6] = 1;
  h[7] = 0;
  h[8] = (uint8_t)(hl & 0xFF);
  h[9] = (uint8_t)(hl >> 8);
  memcpy(h + pre, dict, dict_len);
  memset(h + pre + dict_len, ' ', hl - dict_len - 1);
  h[total - 1] = '\n';
  p->header_size = total;
  return QV_OK;
}

QvStatus qv_npy_write_size(const QvTensor *t, size_t *size, QvError *error) {
  if (size == NULL) return qv_error_set(error, QV_EARG, "NULL size");
  *size = 0;
  NpyPlan p;
  QvStatus st = plan_npy(t, &p, error);
  if (st) return st;
  if ((uint64_t)p.data_len > (uint64_t)SIZE_MAX - p.header_size)
    return qv_error_set(error, QV_ELIMIT, ".npy image does not fit in memory");
  *size = p.header_size + (size_t)p.data_len;
  return QV_OK;
}

QvStatus qv_npy_write_to_buffer(const QvTensor *t, void *dst, size_t dst_size, size_t *written,
                                QvError *error) {
  if (written) *written = 0;
  if (dst == NULL && dst_size > 0) return qv_error_set(error, QV_EARG, "NULL destination");
  NpyPlan p;
  QvStatus st = plan_npy(t, &p, error);
  if (st) return st;
  if (dst_size < p.header_size || (uint64_t)p.data_len > dst_size - p.header_size)
    return qv_error_set(error, QV_EARG, "destination of %zu bytes is too small for a .npy image",
                        dst_size);
  uint8_t *out = dst;
  memcpy(out, p.header, p.header_size);
  if (p.data_len > 0) {
    if (p.direct)
      qv_copy_large(out + p.header_size, t->data, (size_t)p.data_len);
    else if ((st = qv_tensor_copy_to(t, false, out + p.header_size, (size_t)p.data_len, error)))
      return st;
  }
  if (written) *written = p.header_size + (size_t)p.data_len;
  return QV_OK;
}

QvStatus qv_npy_write_fd(const QvTensor *t, int fd, QvError *error) {
  if (fd < 0) return qv_error_set(error, QV_EARG, "invalid file descriptor %d", fd);
  NpyPlan p;
  QvStatus st = plan_npy(t, &p, error);
  if (st) return st;
  if ((st = qv_fd_write_all(fd, p.header, p.header_size, error))) return st;
  if (p.data_len == 0) return QV_OK;
  if (p.direct) return qv_fd_write_all(fd, t->data, (size_t)p.data_len, error);
  QvTensor copy;
  if ((st = qv_tensor_copy(t, false, &copy, error))) return st;
  st = qv_fd_write_all(fd, copy.data, (size_t)p.data_len, error);
  qv_tensor_reset(&copy);
  return st;
}

QvStatus qv_npy_write_path(const QvTensor *t, const char *path, QvError *error) {
  if (path == NULL) return qv_error_set(error, QV_EARG, "NULL path");
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (fd < 0) return qv_error_set(error, QV_EIO, "%s: %s", path, strerror(errno));
  QvStatus st = qv_npy_write_fd(t, fd, error);
  if (close(fd) != 0 && st == QV_OK)
    st = qv_error_set(error, QV_EIO, "%s: close failed: %s", path, strerror(errno));
  if (st) {
    unlink(path);
    return qv_error_prefix(error, "%s", path);
  }
  return QV_OK;
}
