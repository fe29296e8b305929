/* SciPy sparse .npz (a zip of .npy members) reader and writer, on libzip. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zip.h>

#include "numpy/npy_header.h"
#include "quiver/npy.h"
#include "quiver/npz.h"
#include "util/half.h"
#include "util/options.h"

/* Preamble (10 or 12 bytes) plus the largest header npy.c accepts. */
#define NPY_HEADER_CAP ((int64_t)QV_NPY_MAX_HEADER_SIZE + 12)
/* Deflate cannot expand more than this (RFC 1951: 258 bytes from a
 * 2-bit code at best, i.e. 1032:1), plus a little for tiny streams. */
#define DEFLATE_MAX_RATIO 1032
#define DEFLATE_SLACK 1024
/* The string in format.npy: "csr", "csc", "coo" (also "bsr", "dia", ...). */
#define FORMAT_MAX_CHARS 16

static void free_aligned(void *p) { qv_aligned_free(p); }

/* ---- members */

enum { M_FORMAT, M_SHAPE, M_DATA, M_INDICES, M_INDPTR, M_ROW, M_COL, M_COUNT };
static const char *const member_names[M_COUNT] = {"format.npy",  "shape.npy",  "data.npy",
                                                  "indices.npy", "indptr.npy", "row.npy",
                                                  "col.npy"};

typedef struct Archive {
  zip_t *za;
  size_t size; /* of the whole archive */
  zip_int64_t index[M_COUNT]; /* -1: absent */
} Archive;

static QvStatus zip_fail(QvError *error, const char *what, zip_error_t *ze) {
  return qv_error_set(error, QV_EINVAL, "npz: %s: %s", what, zip_error_strerror(ze));
}

static QvStatus open_archive(const uint8_t *data, size_t size, Archive *a, QvError *error) {
  memset(a, 0, sizeof *a);
  a->size = size;
  zip_error_t ze;
  zip_error_init(&ze);
  zip_source_t *src = zip_source_buffer_create(data, size, 0, &ze);
  if (src == NULL) {
    QvStatus st = zip_fail(error, "cannot read the archive", &ze);
    zip_error_fini(&ze);
    return st;
  }
  a->za = zip_open_from_source(src, ZIP_RDONLY | ZIP_CHECKCONS, &ze);
  if (a->za == NULL) {
    zip_source_free(src);
    QvStatus st = zip_fail(error, "not a valid zip archive", &ze);
    zip_error_fini(&ze);
    return st;
  }
  zip_error_fini(&ze);
  for (int m = 0; m < M_COUNT; m++) a->index[m] = -1;
  zip_int64_t n = zip_get_num_entries(a->za, 0);
  for (zip_int64_t i = 0; i < n; i++) {
    const char *name = zip_get_name(a->za, (zip_uint64_t)i, ZIP_FL_ENC_RAW);
    if (name == NULL) continue;
    for (int m = 0; m < M_COUNT; m++) {
      if (strcmp(name, member_names[m]) != 0) continue;
      if (a->index[m] >= 0) {
        zip_discard(a->za);
        a->za = NULL;
        return qv_error_set(error, QV_EINVAL, "npz: member %s appears twice", member_names[m]);
      }
      a->index[m] = i;
    }
  }
  return QV_OK;
}

static void close_archive(Archive *a) {
  if (a->za) zip_discard(a->za);
  a->za = NULL;
}

/* Reads member m whole into a 64-byte-aligned buffer owned by *owner,
 * after checking its declared size against `cap` and its compressed size. */
static QvStatus read_member(Archive *a, int m, int64_t cap, uint8_t **out, size_t *out_size,
                            QvOwner **owner, QvError *error) {
  *out = NULL;
  *out_size = 0;
  *owner = NULL;
  const char *name = member_names[m];
  if (a->index[m] < 0)
    return qv_error_set(error, QV_EINVAL, "npz: member %s is missing", name);
  zip_stat_t sb;
  zip_stat_init(&sb);
  if (zip_stat_index(a->za, (zip_uint64_t)a->index[m], 0, &sb) != 0)
    return zip_fail(error, name, zip_get_error(a->za));
  zip_uint64_t need = ZIP_STAT_SIZE | ZIP_STAT_COMP_SIZE | ZIP_STAT_COMP_METHOD;
  if ((sb.valid & need) != need)
    return qv_error_set(error, QV_EINVAL, "npz: member %s: sizes or method unknown", name);
  if ((sb.valid & ZIP_STAT_ENCRYPTION_METHOD) && sb.encryption_method != ZIP_EM_NONE)
    return qv_error_set(error, QV_ENOTSUP, "npz: member %s is encrypted", name);
  if (sb.comp_method != ZIP_CM_STORE && sb.comp_method != ZIP_CM_DEFLATE)
    return qv_error_set(error, QV_ENOTSUP,
                        "npz: member %s uses compression method %d (stored and deflate only)",
                        name, (int)sb.comp_method);
  if (sb.comp_size > a->size)
    return qv_error_set(error, QV_EINVAL,
                        "npz: member %s declares %" PRIu64 " compressed bytes in an archive of %zu",
                        name, (uint64_t)sb.comp_size, a->size);
  if (sb.size > (zip_uint64_t)cap)
    return qv_error_set(error, QV_EINVAL,
                        "npz: member %s declares %" PRIu64 " bytes, more than the %" PRId64
                        " its shape allows",
                        name, (uint64_t)sb.size, cap);
  if (sb.comp_method == ZIP_CM_STORE ? sb.size != sb.comp_size
                                     : sb.size / DEFLATE_MAX_RATIO > sb.comp_size + DEFLATE_SLACK)
    return qv_error_set(error, QV_EINVAL,
                        "npz: member %s declares %" PRIu64 " bytes from %" PRIu64
                        " compressed: impossible for its method",
                        name, (uint64_t)sb.size, (uint64_t)sb.comp_size);
  size_t size = (size_t)sb.size;
  uint8_t *buf = qv_aligned_alloc(size ? size : 1);
  if (buf == NULL) return qv_error_set(error, QV_ENOMEM, "npz: out of memory reading %s", name);
  zip_file_t *zf = zip_fopen_index(a->za, (zip_uint64_t)a->index[m], 0);
  if (zf == NULL) {
    qv_aligned_free(buf);
    return zip_fail(error, name, zip_get_error(a->za));
  }
  QvStatus st = QV_OK;
  size_t got = 0;
  while (got < size) {
    zip_int64_t k = zip_fread(zf, buf + got, size - got);
    if (k < 0) {
      st = zip_fail(error, name, zip_file_get_error(zf));
      break;
    }
    if (k == 0) {
      st = qv_error_set(error, QV_EINVAL, "npz: member %s holds %zu bytes, declares %zu", name,
                        got, size);
      break;
    }
    got += (size_t)k;
  }
  if (st == QV_OK) {
    /* reading to the end makes libzip check the CRC */
    uint8_t extra;
    zip_int64_t k = zip_fread(zf, &extra, 1);
    if (k < 0)
      st = zip_fail(error, name, zip_file_get_error(zf));
    else if (k > 0)
      st = qv_error_set(error, QV_EINVAL, "npz: member %s is longer than its declared %zu bytes",
                        name, size);
  }
  if (zip_fclose(zf) != 0 && st == QV_OK)
    st = qv_error_set(error, QV_EINVAL, "npz: member %s: CRC or read error", name);
  if (st == QV_OK) {
    *owner = qv_owner_new(free_aligned, buf);
    if (*owner == NULL) st = qv_error_set(error, QV_ENOMEM, "out of memory");
  }
  if (st) {
    qv_aligned_free(buf);
    return st;
  }
  *out = buf;
  *out_size = size;
  return QV_OK;
}

/* A numeric member as a 1-D tensor of exactly `want` entries (-1: any). */
static QvStatus read_array(Archive *a, int m, int64_t want, int64_t cap_entries, QvTensor *t,
                           QvError *error) {
  memset(t, 0, sizeof *t);
  int64_t cap = NPY_HEADER_CAP;
  if (cap_entries > (INT64_MAX - cap) / 8) cap = INT64_MAX;
  else cap += cap_entries * 8;
  uint8_t *buf;
  size_t size;
  QvOwner *owner;
  QvStatus st = read_member(a, m, cap, &buf, &size, &owner, error);
  if (st) return st;
  size_t consumed = 0;
  st = qv_npy_read_bytes(buf, size, owner, t, &consumed, error);
  qv_owner_free(owner); /* the tensor holds its own reference */
  const char *name = member_names[m];
  if (st) return qv_error_prefix(error, "npz: member %s", name);
  if (consumed != size)
    st = qv_error_set(error, QV_EINVAL, "npz: member %s has %zu bytes after its array", name,
                      size - consumed);
  else if (t->ndim != 1)
    st = qv_error_set(error, QV_EINVAL, "npz: member %s has %d dimensions, expected 1", name,
                      (int)t->ndim);
  else if (want >= 0 && t->shape[0] != want)
    st = qv_error_set(error, QV_EINVAL, "npz: member %s holds %" PRId64 " entries, expected %" PRId64,
                      name, t->shape[0], want);
  if (st) qv_tensor_reset(t);
  return st;
}

static bool is_index_type(QvValueType t) { return t >= QV_VALUE_INT8 && t <= QV_VALUE_UINT64; }

static QvStatus need_index_type(const QvTensor *t, int m, QvError *error) {
  if (is_index_type(t->type)) return QV_OK;
  return qv_error_set(error, QV_EINVAL, "npz: member %s has dtype %s, expected an integer type",
                      member_names[m], qv_value_type_name(t->type));
}

/* ---- format.npy: a 0-d string array */

static QvStatus bad_format(QvError *error, const char *why) {
  return qv_error_set(error, QV_EINVAL, "npz: member format.npy: %s", why);
}

/* Parses the 0-d '|S<n>' or '<U<n>' / '>U<n>' array into out (ASCII). */
static QvStatus parse_format_member(const uint8_t *d, size_t size, char out[FORMAT_MAX_CHARS + 1],
                                    QvError *error) {
  QvNpyHeader h;
  QvNpyString str;
  QvStatus st = qv_npy_header_parse(d, size, &h, &str, error);
  if (st) return qv_error_prefix(error, "npz: member format.npy");
  if (!str.present)
    return qv_error_set(error, QV_EINVAL,
                        "npz: member format.npy has dtype '%s', expected a string ('|S3' or '<U3')",
                        h.descr);
  if (h.ndim != 0) return bad_format(error, "'shape' must be () (a 0-d array)");
  if (str.length > FORMAT_MAX_CHARS)
    return qv_error_set(error, QV_EINVAL, "npz: member format.npy: unsupported dtype '%s'",
                        h.descr);
  if (size - h.data_offset != (size_t)h.data_size)
    return bad_format(error, "data size does not match its dtype");
  const uint8_t *p = d + h.data_offset;
  size_t width = (size_t)str.char_size;
  bool big = str.big_endian;
  long n = (long)str.length;
  size_t len = 0;
  for (long i = 0; i < n; i++) {
    uint32_t c = 0;
    for (size_t b = 0; b < width; b++)
      c |= (uint32_t)p[i * (long)width + (long)(big ? width - 1 - b : b)] << (8 * b);
    if (c == 0) {
      /* NumPy pads shorter strings with NULs: only NULs may follow */
      for (long j = i + 1; j < n; j++)
        for (size_t b = 0; b < width; b++)
          if (p[j * (long)width + (long)b] != 0) return bad_format(error, "NUL inside the string");
      break;
    }
    if (c < 0x21 || c > 0x7e) return bad_format(error, "the format name is not printable ASCII");
    out[len++] = (char)c;
  }
  out[len] = '\0';
  return QV_OK;
}

static QvStatus read_format(Archive *a, char name[FORMAT_MAX_CHARS + 1], QvError *error) {
  uint8_t *buf;
  size_t size;
  QvOwner *owner;
  QvStatus st = read_member(a, M_FORMAT, NPY_HEADER_CAP + 4 * FORMAT_MAX_CHARS, &buf, &size,
                            &owner, error);
  if (st) return st;
  st = parse_format_member(buf, size, name, error);
  qv_owner_free(owner);
  return st;
}

/* ---- reading */

typedef struct Bundle {
  QvTensor t[3];
  uint8_t *coords;
} Bundle;

static void bundle_free(void *p) {
  Bundle *b = p;
  for (int i = 0; i < 3; i++) qv_tensor_reset(&b->t[i]);
  qv_aligned_free(b->coords);
  free(b);
}

/* Hands the bundle to a new owner; on failure the bundle is freed. */
static QvOwner *bundle_owner(Bundle *b) {
  QvOwner *o = qv_owner_new(bundle_free, b);
  if (o == NULL) bundle_free(b);
  return o;
}


/* ---- SciPy's sort_indices + sum_duplicates for CSR/CSC rows (columns) */

typedef struct SortKey {
  int64_t index, pos; /* pos breaks ties: duplicates are summed in entry order */
} SortKey;

static int sort_key_cmp(const void *x, const void *y) {
  const SortKey *a = x, *b = y;
  if (a->index != b->index) return a->index < b->index ? -1 : 1;
  return a->pos < b->pos ? -1 : a->pos > b->pos;
}

static void index_store(uint8_t *buf, QvValueType t, int64_t i, int64_t v) {
  size_t w = qv_value_type_size(t);
  uint64_t u = (uint64_t)v;
  uint8_t b1 = (uint8_t)u;
  uint16_t b2 = (uint16_t)u;
  uint32_t b4 = (uint32_t)u;
  const void *src = w == 1 ? (const void *)&b1 : w == 2 ? (const void *)&b2
                  : w == 4 ? (const void *)&b4 : (const void *)&u;
  memcpy(buf + (size_t)i * w, src, w);
}

/* *acc += *v in the value type's own arithmetic, as NumPy adds: integers
 * wrap, float16 is rounded after each addition. */
static void value_add(uint8_t *acc, const uint8_t *v, QvValueType t) {
  switch (t) {
  case QV_VALUE_FLOAT16: {
    uint16_t a, b;
    memcpy(&a, acc, 2);
    memcpy(&b, v, 2);
    a = qv_double_to_half(qv_half_to_double(a) + qv_half_to_double(b));
    memcpy(acc, &a, 2);
    return;
  }
  case QV_VALUE_FLOAT32: {
    float a, b;
    memcpy(&a, acc, 4);
    memcpy(&b, v, 4);
    a += b;
    memcpy(acc, &a, 4);
    return;
  }
  case QV_VALUE_FLOAT64: {
    double a, b;
    memcpy(&a, acc, 8);
    memcpy(&b, v, 8);
    a += b;
    memcpy(acc, &a, 8);
    return;
  }
  default: { /* integers: unsigned addition of the width wraps like NumPy's */
    size_t w = qv_value_type_size(t);
    uint64_t a = 0, b = 0;
    memcpy(&a, acc, w); /* little-endian host: the low bytes */
    memcpy(&b, v, w);
    a += b;
    memcpy(acc, &a, w);
    return;
  }
  }
}

/* Sorts the indices within each row (column) and sums repeated ones, in
 * place, the way scipy.sparse's sum_duplicates does (zeros it makes are
 * kept). Left alone when indptr is malformed: validation reports that. */
static QvStatus csx_canonicalize(QvTensor *ptr, QvTensor *idx, QvTensor *val, int64_t major,
                                 int64_t *nnz, QvNpzReadInfo *info, QvError *error) {
  int64_t prev = qv_index_load(ptr->data, ptr->type, 0), longest = 0;
  bool disorder = false;
  if (prev != 0) return QV_OK;
  for (int64_t i = 0; i < major; i++) {
    int64_t end = qv_index_load(ptr->data, ptr->type, i + 1);
    if (end < prev || end > *nnz) return QV_OK;
    if (end - prev > longest) longest = end - prev;
    for (int64_t k = prev + 1; k < end && !disorder; k++)
      disorder = qv_index_load(idx->data, idx->type, k) <= qv_index_load(idx->data, idx->type, k - 1);
    prev = end;
  }
  if (!disorder) return QV_OK;
  size_t vw = qv_value_type_size(val->type);
  SortKey *keys = malloc((size_t)longest * sizeof *keys);
  uint8_t *row = malloc((size_t)longest * vw);
  if (keys == NULL || row == NULL) {
    free(keys);
    free(row);
    return qv_error_set(error, QV_ENOMEM, "npz: out of memory");
  }
  uint8_t *pd = (uint8_t *)ptr->data, *id = (uint8_t *)idx->data, *vd = (uint8_t *)val->data;
  int64_t out = 0, start = 0;
  for (int64_t i = 0; i < major; i++) {
    int64_t end = qv_index_load(pd, ptr->type, i + 1), n = end - start;
    for (int64_t k = 0; k < n; k++)
      keys[k] = (SortKey){qv_index_load(id, idx->type, start + k), k};
    if (n > 0) memcpy(row, vd + (size_t)start * vw, (size_t)n * vw);
    qsort(keys, (size_t)n, sizeof *keys, sort_key_cmp);
    for (int64_t k = 0; k < n; k++) {
      const uint8_t *v = row + (size_t)keys[k].pos * vw;
      if (k > 0 && keys[k].index == keys[k - 1].index) {
        value_add(vd + (size_t)(out - 1) * vw, v, val->type);
        continue;
      }
      /* out <= start + k: the compacted entry never overwrites an unread one */
      index_store(id, idx->type, out, keys[k].index);
      memcpy(vd + (size_t)out * vw, v, vw);
      out++;
    }
    start = end;
    index_store(pd, ptr->type, i + 1, out);
  }
  free(keys);
  free(row);
  if (info) {
    info->sorted = true;
    info->duplicates_summed = *nnz - out;
  }
  *nnz = out;
  return QV_OK;
}

static QvStatus read_csx(Archive *a, QvSparseFormat format, const int64_t shape[2],
                         QvSparseTensor *out, QvNpzReadInfo *info, QvError *error) {
  bool csr = format == QV_SPARSE_CSR;
  int64_t major = shape[csr ? 0 : 1];
  if (major == INT64_MAX) return qv_error_set(error, QV_EINVAL, "npz: shape is too large");
  Bundle *b = calloc(1, sizeof *b);
  if (b == NULL) return qv_error_set(error, QV_ENOMEM, "out of memory");
  QvTensor *ptr = &b->t[0], *idx = &b->t[1], *val = &b->t[2];
  QvStatus st = read_array(a, M_INDPTR, major + 1, major + 1, ptr, error);
  if (st == QV_OK) st = need_index_type(ptr, M_INDPTR, error);
  int64_t nnz = 0;
  if (st == QV_OK) {
    nnz = qv_index_load(ptr->data, ptr->type, major);
    if (nnz < 0)
      st = qv_error_set(error, QV_EINVAL, "npz: indptr.npy ends at a negative or too large value");
  }
  if (st == QV_OK) st = read_array(a, M_INDICES, nnz, nnz, idx, error);
  if (st == QV_OK) st = need_index_type(idx, M_INDICES, error);
  if (st == QV_OK) st = read_array(a, M_DATA, nnz, nnz, val, error);
  if (st == QV_OK) st = csx_canonicalize(ptr, idx, val, major, &nnz, info, error);
  if (st) {
    bundle_free(b);
    return st;
  }
  QvOwner *owner = bundle_owner(b);
  if (owner == NULL) return qv_error_set(error, QV_ENOMEM, "out of memory");
  st = qv_sparse_init(out, &(QvSparseDesc){.ndim = 2, .format = format, .value_type = val->type,
                                           .indptr_type = ptr->type, .index_type = idx->type,
                                           .shape = shape, .nnz = nnz, .indptr = ptr->data,
                                           .indices = idx->data, .values = val->data,
                                           .owner = owner}, error);
  qv_owner_free(owner);
  if (st) qv_error_prefix(error, "npz");
  return st;
}

static bool coo_sorted_unique(const uint8_t *c, QvValueType t, int64_t nnz) {
  for (int64_t i = 1; i < nnz; i++) {
    int64_t r0 = qv_index_load(c, t, i - 1), r1 = qv_index_load(c, t, i);
    int64_t c0 = qv_index_load(c, t, nnz + i - 1), c1 = qv_index_load(c, t, nnz + i);
    if (r1 < r0 || (r1 == r0 && c1 <= c0)) return false;
  }
  return true;
}

static QvStatus read_coo(Archive *a, const int64_t shape[2], QvSparseTensor *out,
                         QvError *error) {
  int64_t cells;
  if (__builtin_mul_overflow(shape[0], shape[1], &cells)) cells = INT64_MAX;
  Bundle *b = calloc(1, sizeof *b);
  if (b == NULL) return qv_error_set(error, QV_ENOMEM, "out of memory");
  QvTensor *row = &b->t[0], *col = &b->t[1], *val = &b->t[2];
  QvStatus st = read_array(a, M_ROW, -1, cells, row, error);
  if (st == QV_OK) st = need_index_type(row, M_ROW, error);
  int64_t nnz = st == QV_OK ? row->shape[0] : 0;
  if (st == QV_OK && nnz > cells)
    st = qv_error_set(error, QV_EINVAL,
                      "npz: COO holds %" PRId64 " entries, more than the %" PRId64
                      " cells of its shape",
                      nnz, cells);
  if (st == QV_OK) st = read_array(a, M_COL, nnz, nnz, col, error);
  if (st == QV_OK) st = need_index_type(col, M_COL, error);
  if (st == QV_OK) st = read_array(a, M_DATA, nnz, nnz, val, error);
  /* one buffer, row then col: a column-major nnz x 2 index matrix */
  QvValueType it = QV_VALUE_INT64;
  if (st == QV_OK) {
    it = row->type == col->type ? row->type : QV_VALUE_INT64;
    size_t w = qv_value_type_size(it);
    b->coords = qv_aligned_alloc(nnz > 0 ? (size_t)nnz * 2 * w : 1);
    if (b->coords == NULL) st = qv_error_set(error, QV_ENOMEM, "npz: out of memory");
  }
  if (st == QV_OK) {
    size_t w = qv_value_type_size(it);
    for (int k = 0; k < 2 && st == QV_OK; k++) {
      const QvTensor *src = k == 0 ? row : col;
      uint8_t *dst = b->coords + (size_t)k * (size_t)nnz * w;
      if (src->type == it) {
        if (nnz > 0) memcpy(dst, src->data, (size_t)nnz * w);
        continue;
      }
      for (int64_t i = 0; i < nnz; i++) {
        int64_t v = qv_index_load(src->data, src->type, i);
        if (v < 0 && src->type == QV_VALUE_UINT64) {
          st = qv_error_set(error, QV_EINVAL,
                            "npz: %s value at position %" PRId64 " does not fit int64",
                            member_names[k == 0 ? M_ROW : M_COL], i);
          break;
        }
        memcpy(dst + (size_t)i * 8, &v, 8);
      }
    }
  }
  if (st) {
    bundle_free(b);
    return st;
  }
  size_t w = qv_value_type_size(it);
  int64_t strides[2] = {(int64_t)w, nnz * (int64_t)w};
  bool canonical = coo_sorted_unique(b->coords, it, nnz);
  const uint8_t *coords = b->coords, *values = val->data;
  QvValueType vt = val->type;
  QvOwner *owner = bundle_owner(b);
  if (owner == NULL) return qv_error_set(error, QV_ENOMEM, "out of memory");
  st = qv_sparse_init(out, &(QvSparseDesc){.format = QV_SPARSE_COO, .value_type = vt,
                                           .index_type = it, .ndim = 2, .shape = shape, .nnz = nnz,
                                           .coords = coords, .coords_strides = strides,
                                           .is_canonical = canonical, .values = values,
                                           .owner = owner}, error);
  qv_owner_free(owner);
  if (st) qv_error_prefix(error, "npz");
  return st;
}

typedef struct ReadResult {
  QvSparseTensor *out;
  QvNpzReadInfo *info;
} ReadResult;

/* The tensor's buffers are all copies: the input's owner is not kept. */
static QvStatus read_archive(const uint8_t *data, size_t size, QvOwner *owner, void *result,
                             QvError *error) {
  (void)owner;
  ReadResult *r = result;
  QvSparseTensor *out = r->out;
  /* libzip reads no bytes as an empty archive */
  if (size == 0) return qv_error_set(error, QV_EINVAL, "npz: not a valid zip archive: empty input");
  Archive a;
  QvStatus st = open_archive(data, size, &a, error);
  if (st) return st;
  char fmt[FORMAT_MAX_CHARS + 1];
  if (a.index[M_FORMAT] < 0)
    st = qv_error_set(error, QV_EINVAL,
                      "npz: member format.npy is missing: not a SciPy sparse matrix (save_npz)");
  else
    st = read_format(&a, fmt, error);
  QvSparseFormat format = QV_SPARSE_COO;
  if (st == QV_OK) {
    if (strcmp(fmt, "csr") == 0)
      format = QV_SPARSE_CSR;
    else if (strcmp(fmt, "csc") == 0)
      format = QV_SPARSE_CSC;
    else if (strcmp(fmt, "coo") == 0)
      format = QV_SPARSE_COO;
    else
      st = qv_error_set(error, QV_ENOTSUP,
                        "npz: sparse format '%s' is not supported (csr, csc and coo are)", fmt);
  }
  int64_t shape[2] = {0, 0};
  if (st == QV_OK) {
    QvTensor s;
    st = read_array(&a, M_SHAPE, 2, 2, &s, error);
    if (st == QV_OK) st = need_index_type(&s, M_SHAPE, error);
    for (int i = 0; i < 2 && st == QV_OK; i++) {
      shape[i] = qv_index_load(s.data, s.type, i);
      if (shape[i] < 0)
        st = qv_error_set(error, QV_EINVAL, "npz: shape.npy entry %d is negative or too large",
                          i);
    }
    qv_tensor_reset(&s);
  }
  if (st == QV_OK)
    st = format == QV_SPARSE_COO ? read_coo(&a, shape, out, error)
                                 : read_csx(&a, format, shape, out, r->info, error);
  close_archive(&a);
  return st;
}

QvStatus qv_npz_read(QvSource *source, QvSparseTensor *out, QvNpzReadInfo *info,
                     QvError *error) {
  if (out == NULL) return qv_error_set(error, QV_EARG, "NULL output tensor");
  memset(out, 0, sizeof *out);
  if (info) {
    if (info->struct_size != 0 && info->struct_size < sizeof *info)
      return qv_error_set(error, QV_EARG, "QvNpzReadInfo: struct_size %zu is not 0 or %zu",
                          info->struct_size, sizeof *info);
    *info = (QvNpzReadInfo){.struct_size = sizeof *info};
  }
  ReadResult r = {out, info};
  return qv_npy_read_source(source, read_archive, &r, error);
}

/* ---- writing */

/* The format member exactly as NumPy 1.24 writes np.array(b'csr'). */
static void format_member(const char *name, uint8_t out[131]) {
  static const char dict[] = "{'descr': '|S3', 'fortran_order': False, 'shape': (), }";
  memset(out, ' ', 128);
  memcpy(out, qv_npy_magic, 6);
  out[6] = 1;
  out[7] = 0;
  out[8] = 118; /* header length: 128 - 10 */
  out[9] = 0;
  memcpy(out + 10, dict, sizeof dict - 1);
  out[127] = '\n';
  memcpy(out + 128, name, 3);
}

typedef struct Image {
  uint8_t *p;
  size_t n;
} Image;

/* The .npy image of a 1-D array of n entries at `data` with byte stride. */
static QvStatus npy_image(QvValueType type, int64_t n, const void *data, int64_t stride,
                          Image *img, QvError *error) {
  int64_t w = (int64_t)qv_value_type_size(type);
  int64_t span = n > 0 ? (n - 1) * stride + w : 0;
  QvTensor t;
  QvStatus st = qv_tensor_init(&t, &(QvTensorDesc){.type = type, .ndim = 1, .shape = &n,
                                                   .strides = &stride, .data = n > 0 ? data : NULL,
                                                   .data_size = span}, error);
  if (st) return st;
  st = qv_npy_write_size(&t, &img->n, error);
  if (st == QV_OK) {
    img->p = malloc(img->n);
    if (img->p == NULL) st = qv_error_set(error, QV_ENOMEM, "npz: out of memory");
  }
  QvSink *sink = NULL;
  if (st == QV_OK) st = qv_sink_new_buffer(&sink, img->p, img->n, error);
  if (st == QV_OK) st = qv_npy_write(&t, sink, error);
  qv_sink_free(sink);
  qv_tensor_reset(&t);
  return st;
}

#define MAX_MEMBERS 5

static QvStatus build_images(const QvSparseTensor *t, const char **names, Image *img,
                             QvError *error) {
  if (t == NULL) return qv_error_set(error, QV_EARG, "NULL sparse tensor");
  QvStatus st = qv_sparse_validate(t, error);
  if (st) return st;
  if (t->format == QV_SPARSE_CSF)
    return qv_error_set(error, QV_EINVAL,
                        "a CSF tensor cannot be stored in a SciPy .npz (csr, csc and coo only): "
                        "convert it first (quiver convert IN OUT --to=coo)");
  if (t->ndim != 2)
    return qv_error_set(error, QV_EINVAL,
                        "SciPy's .npz holds 2-D matrices; this %s tensor has %d dimensions",
                        qv_sparse_format_name(t->format), (int)t->ndim);
  if (t->value_type == QV_VALUE_FLOAT16)
    return qv_error_set(error, QV_EINVAL,
                        "scipy.sparse does not support float16 values: convert to float32 first");
  int64_t nnz = t->nnz;
  int64_t iw = (int64_t)qv_value_type_size(t->index_type);
  if (t->format == QV_SPARSE_COO) {
    names[0] = "row.npy";
    names[1] = "col.npy";
    st = npy_image(t->index_type, nnz, t->coords, t->coords_strides[0], &img[0], error);
    if (st == QV_OK)
      st = npy_image(t->index_type, nnz, nnz > 0 ? t->coords + t->coords_strides[1] : NULL,
                     t->coords_strides[0], &img[1], error);
  } else {
    names[0] = "indices.npy";
    names[1] = "indptr.npy";
    st = npy_image(t->index_type, nnz, t->indices, iw, &img[0], error);
    if (st == QV_OK)
      st = npy_image(t->indptr_type, t->indptr_len, t->indptr,
                     (int64_t)qv_value_type_size(t->indptr_type), &img[1], error);
  }
  if (st) return st;
  names[2] = "format.npy";
  img[2].p = malloc(131);
  if (img[2].p == NULL) return qv_error_set(error, QV_ENOMEM, "npz: out of memory");
  img[2].n = 131;
  format_member(qv_sparse_format_name(t->format), img[2].p);
  names[3] = "shape.npy";
  st = npy_image(QV_VALUE_INT64, 2, t->shape, 8, &img[3], error);
  if (st) return st;
  names[4] = "data.npy";
  return npy_image(t->value_type, nnz, t->values, (int64_t)qv_value_type_size(t->value_type),
                   &img[4], error);
}

/* The whole archive in memory (libzip writes it there); *out: free() it. */
static QvStatus build_archive(const QvSparseTensor *t, const QvNpzWriteOptions *options,
                              uint8_t **out, size_t *out_size, QvError *error) {
  *out = NULL;
  *out_size = 0;
  QvNpzWriteOptions o;
  QvStatus lst = QV_OPTIONS_LOAD(&o, options, "QvNpzWriteOptions", error);
  if (lst) return lst;
  const char *names[MAX_MEMBERS] = {0};
  Image img[MAX_MEMBERS];
  memset(img, 0, sizeof img);
  QvStatus st = build_images(t, names, img, error);
  zip_error_t ze;
  zip_error_init(&ze);
  zip_source_t *src = NULL;
  zip_t *za = NULL;
  if (st == QV_OK) {
    src = zip_source_buffer_create(NULL, 0, 0, &ze);
    if (src == NULL) st = zip_fail(error, "cannot create an archive", &ze);
  }
  if (st == QV_OK) {
    zip_source_keep(src); /* read back after zip_close */
    za = zip_open_from_source(src, ZIP_TRUNCATE, &ze);
    if (za == NULL) st = zip_fail(error, "cannot create an archive", &ze);
  }
  /* NumPy's members carry the DOS epoch as their time: fixed, so equal
   * tensors give identical files */
  struct tm epoch = {0};
  epoch.tm_year = 80;
  epoch.tm_mday = 1;
  epoch.tm_isdst = -1;
  time_t mtime = mktime(&epoch);
  bool stored = o.stored;
  for (int i = 0; i < MAX_MEMBERS && st == QV_OK; i++) {
    zip_source_t *ms = zip_source_buffer(za, img[i].p, img[i].n, 0);
    zip_int64_t idx = ms ? zip_file_add(za, names[i], ms, ZIP_FL_ENC_UTF_8) : -1;
    if (idx < 0) {
      if (ms) zip_source_free(ms);
      st = zip_fail(error, names[i], zip_get_error(za));
      break;
    }
    /* level 6, zlib's default, which numpy.savez_compressed uses (libzip's
     * own default, 9, is about twice as slow for a slightly smaller file) */
    if (zip_set_file_compression(za, (zip_uint64_t)idx, stored ? ZIP_CM_STORE : ZIP_CM_DEFLATE,
                                 stored ? 0 : 6) != 0 ||
        (mtime != (time_t)-1 && zip_file_set_mtime(za, (zip_uint64_t)idx, mtime, 0) != 0))
      st = zip_fail(error, names[i], zip_get_error(za));
  }
  if (za != NULL) {
    if (st == QV_OK) {
      if (zip_close(za) != 0) {
        st = zip_fail(error, "writing the archive", zip_get_error(za));
        zip_discard(za);
      }
    } else {
      zip_discard(za);
    }
  }
  if (st == QV_OK) {
    zip_int64_t n = -1;
    if (zip_source_open(src) == 0) {
      if (zip_source_seek(src, 0, SEEK_END) == 0) n = zip_source_tell(src);
      uint8_t *buf = n >= 0 && zip_source_seek(src, 0, SEEK_SET) == 0 ? malloc(n ? (size_t)n : 1)
                                                                       : NULL;
      if (buf != NULL && zip_source_read(src, buf, (zip_uint64_t)n) == n) {
        *out = buf;
        *out_size = (size_t)n;
      } else {
        free(buf);
        st = qv_error_set(error, QV_ENOMEM, "npz: cannot read back the archive");
      }
      zip_source_close(src);
    } else {
      st = zip_fail(error, "reading back the archive", zip_source_error(src));
    }
  }
  if (src) zip_source_free(src);
  zip_error_fini(&ze);
  for (int i = 0; i < MAX_MEMBERS; i++) free(img[i].p);
  return st;
}

QvStatus qv_npz_write(const QvSparseTensor *t, QvSink *sink, const QvNpzWriteOptions *options,
                      QvError *error) {
  if (sink == NULL) return qv_error_set(error, QV_EARG, "NULL sink");
  uint8_t *buf;
  size_t n;
  QvStatus st = build_archive(t, options, &buf, &n, error);
  if (st) return st;
  st = qv_sink_write(sink, buf, n, error);
  free(buf);
  return st;
}
