/* SciPy sparse .npz (a zip of .npy members) reader and writer.
 *
 * Reading parses the zip itself (zip.c) so that a stored member is used
 * where it lies in the input (a memory map, the caller's memory, or what was
 * read from a pipe); deflated members are inflated by libdeflate, in one
 * call, straight into the aligned buffer the tensor keeps. The two big
 * members after the first are decoded in parallel on a QvPool, one task per
 * member. Writing streams each member into the sink: stored ones from the
 * tensor's own buffers, deflated ones compressed concurrently into one
 * buffer each and written in member order, so the bytes do not depend on
 * the thread count. */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS, MADV_HUGEPAGE */
#include <inttypes.h>
#include <libdeflate.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "quiver/advanced.h"
#include "numpy/npy_header.h"
#include "numpy/zip.h"
#include "quiver/npy.h"
#include "quiver/npz.h"
#include "util/copy.h"
#include "util/options.h"
#include "util/pool.h"

/* Preamble (10 or 12 bytes) plus the largest header npy.c accepts. */
#define NPY_HEADER_CAP ((int64_t)QV_NPY_MAX_HEADER_SIZE + 12)
/* Deflate cannot expand more than this (RFC 1951: 258 bytes from a
 * 2-bit code at best, i.e. 1032:1), plus a little for tiny streams. */
#define DEFLATE_MAX_RATIO 1032
#define DEFLATE_SLACK 1024
/* The string in format.npy: "csr", "csc", "coo" (also "bsr", "dia", ...). */
#define FORMAT_MAX_CHARS 16
/* zlib's default level, which numpy.savez_compressed uses. */
#define DEFLATE_LEVEL 6

/* Buffers the reader fills once (inflated or copied members). From 4 MiB
 * on they are mapped with transparent huge pages advised: first touch then
 * faults once per 2 MiB instead of per 4 KiB (THP is "madvise" on the
 * usual distribution kernels), which is most of the cost of filling fresh
 * memory. */
#define BIG_BUFFER (4u << 20)

typedef struct BigBuf {
  void *p;
  size_t n;
} BigBuf;

static void big_free(void *x) {
  BigBuf *b = x;
  if (b->n >= BIG_BUFFER) munmap(b->p, b->n);
  else qv_free(b->p);
  free(b);
}

/* n bytes, 64-byte aligned, with an owner that frees them; NULL when out of
 * memory. */
static uint8_t *big_alloc(size_t n, QvOwner **owner) {
  *owner = NULL;
  BigBuf *b = malloc(sizeof *b);
  if (b == NULL) return NULL;
  b->n = n ? n : 1;
  if (b->n >= BIG_BUFFER) {
    b->p = mmap(NULL, b->n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (b->p == MAP_FAILED) b->p = NULL;
#ifdef MADV_HUGEPAGE
    else madvise(b->p, b->n, MADV_HUGEPAGE); /* advice: failure changes nothing */
#endif
  } else {
    b->p = qv_aligned_alloc(b->n);
  }
  if (b->p == NULL || (*owner = qv_owner_new(big_free, b)) == NULL) {
    if (b->p) big_free(b);
    else free(b);
    return NULL;
  }
  return b->p;
}

/* ---- members */

enum { M_FORMAT, M_SHAPE, M_DATA, M_INDICES, M_INDPTR, M_ROW, M_COL, M_COUNT };
static const char *const member_names[M_COUNT] = {"format.npy",  "shape.npy",  "data.npy",
                                                  "indices.npy", "indptr.npy", "row.npy",
                                                  "col.npy"};

typedef struct Archive {
  QvZipArchive zip;
  const QvZipEntry *member[M_COUNT]; /* NULL: absent */
  QvOwner *owner;                    /* keeps zip.data alive (not retained here) */
  bool verify_crc;
  bool keep_misaligned; /* QvNpzReadOptions.keep_misaligned */
  bool caller_memory;   /* the archive is the caller's bytes (a MEMORY source): writable */
} Archive;

static QvStatus open_archive(const uint8_t *data, size_t size, QvOwner *owner, Archive *a,
                             QvError *error) {
  memset(a, 0, sizeof *a);
  a->owner = owner;
  QvStatus st = qvi_zip_open(&a->zip, data, size, error);
  if (st) return st;
  for (size_t i = 0; i < a->zip.count; i++) {
    const QvZipEntry *e = &a->zip.entries[i];
    for (int m = 0; m < M_COUNT; m++) {
      size_t n = strlen(member_names[m]);
      if (e->name_len != n || memcmp(e->name, member_names[m], n) != 0) continue;
      if (a->member[m] != NULL) {
        qvi_zip_close(&a->zip);
        return qv_error_set(error, QV_EINVAL, "npz: member %s appears twice", member_names[m]);
      }
      a->member[m] = e;
    }
  }
  return QV_OK;
}

static void close_archive(Archive *a) { qvi_zip_close(&a->zip); }

/* Member m's uncompressed bytes, after checking its declared size against
 * `cap` and its compressed size: a stored member in place (*owner: the
 * archive's, retained), a deflated one inflated into a new 64-byte-aligned
 * buffer (*fresh). The CRC is checked for deflated members always (the
 * bytes were just written: a few percent of inflating them) and for stored
 * ones on request (it would read every byte of a view). */
static QvStatus member_bytes(const Archive *a, int m, int64_t cap, const uint8_t **out,
                             size_t *out_size, QvOwner **owner, bool *fresh, QvError *error) {
  *out = NULL;
  *out_size = 0;
  *owner = NULL;
  *fresh = false;
  const char *name = member_names[m];
  const QvZipEntry *e = a->member[m];
  if (e == NULL) return qv_error_set(error, QV_EINVAL, "npz: member %s is missing", name);
  if (e->method != QV_ZIP_STORED && e->method != QV_ZIP_DEFLATED)
    return qv_error_set(error, QV_ENOTSUP,
                        "npz: member %s uses compression method %d (stored and deflate only)",
                        name, (int)e->method);
  if (e->usize > (uint64_t)cap)
    return qv_error_set(error, QV_EINVAL,
                        "npz: member %s declares %" PRIu64 " bytes, more than the %" PRId64
                        " its shape allows",
                        name, e->usize, cap);
  if (e->method == QV_ZIP_STORED ? e->usize != e->csize
                                 : e->usize / DEFLATE_MAX_RATIO > e->csize + DEFLATE_SLACK)
    return qv_error_set(error, QV_EINVAL,
                        "npz: member %s declares %" PRIu64 " bytes from %" PRIu64
                        " compressed: impossible for its method",
                        name, e->usize, e->csize);
  const uint8_t *in = a->zip.data + e->data_offset;
  size_t size = (size_t)e->usize;
  uint32_t crc;
  if (e->method == QV_ZIP_STORED) {
    if (a->verify_crc && (crc = (uint32_t)libdeflate_crc32(0, in, size)) != e->crc)
      return qv_error_set(error, QV_EINVAL,
                          "npz: member %s: CRC-32 %08" PRIx32 " does not match the %08" PRIx32
                          " recorded",
                          name, crc, e->crc);
    *out = in;
    *out_size = size;
    if (a->owner) qv_owner_retain(a->owner);
    *owner = a->owner;
    return QV_OK;
  }
  QvOwner *buf_owner;
  uint8_t *buf = big_alloc(size, &buf_owner);
  struct libdeflate_decompressor *d = libdeflate_alloc_decompressor();
  if (buf == NULL || d == NULL) {
    qv_owner_free(buf_owner);
    if (d) libdeflate_free_decompressor(d);
    return qv_error_set(error, QV_ENOMEM, "npz: out of memory inflating %s (%zu bytes)", name,
                        size);
  }
  size_t used = 0, got = 0;
  enum libdeflate_result r =
      libdeflate_deflate_decompress_ex(d, in, (size_t)e->csize, buf, size, &used, &got);
  libdeflate_free_decompressor(d);
  QvStatus st = QV_OK;
  if (r == LIBDEFLATE_INSUFFICIENT_SPACE)
    st = qv_error_set(error, QV_EINVAL,
                      "npz: member %s inflates to more than its declared %zu bytes", name, size);
  else if (r != LIBDEFLATE_SUCCESS)
    st = qv_error_set(error, QV_EINVAL, "npz: member %s: corrupt deflate data", name);
  else if (got != size)
    st = qv_error_set(error, QV_EINVAL, "npz: member %s holds %zu bytes, declares %zu", name, got,
                      size);
  else if (used != e->csize)
    st = qv_error_set(error, QV_EINVAL,
                      "npz: member %s: %" PRIu64 " bytes after the end of its deflate stream",
                      name, e->csize - used);
  else if ((crc = (uint32_t)libdeflate_crc32(0, buf, size)) != e->crc)
    st = qv_error_set(error, QV_EINVAL,
                      "npz: member %s: CRC-32 %08" PRIx32 " does not match the %08" PRIx32
                      " recorded",
                      name, crc, e->crc);
  if (st) {
    qv_owner_free(buf_owner);
    return st;
  }
  *owner = buf_owner;
  *out = buf;
  *out_size = size;
  *fresh = true;
  return QV_OK;
}

static bool is_index_type(QvArrowType t) { return t >= QV_ARROW_INT8 && t <= QV_ARROW_UINT64; }

/* A numeric member as a 1-D tensor of exactly `want` entries (-1: any);
 * *fresh: its buffer is the tensor's own (writable), not a view of the
 * archive. */
static QvStatus read_array(const Archive *a, int m, int64_t want, int64_t cap_entries,
                           bool index, QvTensor *t, bool *fresh, QvError *error) {
  memset(t, 0, sizeof *t);
  int64_t cap = NPY_HEADER_CAP;
  if (cap_entries > (INT64_MAX - cap) / 8) cap = INT64_MAX;
  else cap += cap_entries * 8;
  const uint8_t *buf;
  size_t size;
  QvOwner *owner;
  QvStatus st = member_bytes(a, m, cap, &buf, &size, &owner, fresh, error);
  if (st) return st;
  QvNpyHeader h;
  QvError ignored;
  if (!*fresh && !a->keep_misaligned && qv_npy_parse_header(buf, size, &h, &ignored) == QV_OK &&
      h.big_endian == qvi_npy_host_big_endian() && h.data_size > 0 &&
      ((uintptr_t)buf + h.data_offset) % qv_arrow_type_size(h.type) != 0) {
    /* misaligned for its dtype (numpy.savez does not align members): the
     * member is copied so that its data starts on a 64-byte boundary */
    size_t pad = (64 - h.data_offset % 64) % 64;
    QvOwner *copy_owner;
    uint8_t *copy = size <= SIZE_MAX - pad ? big_alloc(size + pad, &copy_owner) : NULL;
    if (copy == NULL) {
      qv_owner_free(owner);
      return qv_error_set(error, QV_ENOMEM, "npz: out of memory copying %s (%zu bytes)",
                          member_names[m], size);
    }
    qvi_copy_large(copy + pad, buf, size);
    qv_owner_free(owner);
    owner = copy_owner;
    buf = copy + pad;
    *fresh = true;
  }
  size_t consumed = 0;
  st = qvi_npy_read_bytes_ex(buf, size, owner, a->keep_misaligned, t, &consumed, error);
  qv_owner_free(owner); /* the tensor holds its own reference */
  const char *name = member_names[m];
  if (st) return qv_error_prefix(error, "npz: member %s", name);
  /* a misaligned or byte-swapped member was copied by the .npy reader */
  if (t->data != NULL && (t->data < buf || t->data >= buf + size)) *fresh = true;
  if (consumed != size)
    st = qv_error_set(error, QV_EINVAL, "npz: member %s has %zu bytes after its array", name,
                      size - consumed);
  else if (t->ndim != 1)
    st = qv_error_set(error, QV_EINVAL, "npz: member %s has %d dimensions, expected 1", name,
                      (int)t->ndim);
  else if (want >= 0 && t->shape[0] != want)
    st = qv_error_set(error, QV_EINVAL,
                      "npz: member %s holds %" PRId64 " entries, expected %" PRId64, name,
                      t->shape[0], want);
  else if (index && !is_index_type(t->type))
    st = qv_error_set(error, QV_EINVAL, "npz: member %s has dtype %s, expected an integer type",
                      name, qv_arrow_type_name(t->type));
  if (st) qv_tensor_reset(t);
  return st;
}

/* ---- members read in parallel, one task each */

typedef struct Load {
  int m;
  int64_t want, cap_entries;
  bool index;
  QvTensor *t;
  bool fresh;
  QvStatus st;
  QvError err;
} Load;

typedef struct LoadJob {
  const Archive *a;
  Load *loads;
} LoadJob;

static void load_task(void *ctx, size_t i) {
  LoadJob *j = ctx;
  Load *l = &j->loads[i];
  qv_error_clear(&l->err);
  l->st = read_array(j->a, l->m, l->want, l->cap_entries, l->index, l->t, &l->fresh, &l->err);
}

/* Runs the loads; the first failure in member order is the error (the
 * same whatever the thread count). */
static QvStatus load_all(const Archive *a, QvPool *pool, Load *loads, size_t n, QvError *error) {
  LoadJob j = {a, loads};
  qvi_pool_run(pool, n, load_task, &j);
  for (size_t i = 0; i < n; i++)
    if (loads[i].st) {
      if (error) *error = loads[i].err;
      return loads[i].st;
    }
  return QV_OK;
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
  QvStatus st = qvi_npy_header_parse(d, size, &h, &str, error);
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

static QvStatus read_format(const Archive *a, char name[FORMAT_MAX_CHARS + 1], QvError *error) {
  const uint8_t *buf;
  size_t size;
  QvOwner *owner;
  bool fresh;
  QvStatus st = member_bytes(a, M_FORMAT, NPY_HEADER_CAP + 4 * FORMAT_MAX_CHARS, &buf, &size,
                             &owner, &fresh, error);
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
  qv_free(b->coords);
  free(b);
}

/* Hands the bundle to a new owner; on failure the bundle is freed. */
static QvOwner *bundle_owner(Bundle *b) {
  QvOwner *o = qv_owner_new(bundle_free, b);
  if (o == NULL) bundle_free(b);
  return o;
}


static QvStatus read_csx(const Archive *a, QvPool *pool, QvSparseFormat format,
                         const int64_t shape[2], QvSparseTensor *out, QvNpzReadInfo *info,
                         QvError *error) {
  bool csr = format == QV_SPARSE_CSR;
  int64_t major = shape[csr ? 0 : 1];
  if (major == INT64_MAX) return qv_error_set(error, QV_EINVAL, "npz: shape is too large");
  Bundle *b = calloc(1, sizeof *b);
  if (b == NULL) return qv_error_set(error, QV_ENOMEM, "out of memory");
  QvTensor *ptr = &b->t[0], *idx = &b->t[1], *val = &b->t[2];
  bool fresh[3] = {false, false, false};
  /* indptr first: its last entry bounds what the others may declare */
  QvStatus st = read_array(a, M_INDPTR, major + 1, major + 1, true, ptr, &fresh[0], error);
  int64_t nnz = 0;
  if (st == QV_OK) {
    nnz = qv_index_load(ptr->data, ptr->type, major);
    if (nnz < 0)
      st = qv_error_set(error, QV_EINVAL, "npz: indptr.npy ends at a negative or too large value");
  }
  if (st == QV_OK) {
    Load loads[2] = {{.m = M_INDICES, .want = nnz, .cap_entries = nnz, .index = true, .t = idx},
                     {.m = M_DATA, .want = nnz, .cap_entries = nnz, .t = val}};
    st = load_all(a, pool, loads, 2, error);
    fresh[1] = loads[0].fresh;
    fresh[2] = loads[1].fresh;
  }
  if (st) {
    bundle_free(b);
    return st;
  }
  QvOwner *owner = bundle_owner(b);
  if (owner == NULL) return qv_error_set(error, QV_ENOMEM, "out of memory");
  /* validation first: sorting is for the archives it refuses, so valid
   * ones are scanned once */
  int threads = pool != NULL ? qvi_pool_threads(pool) : 1;
  if (threads > QV_SPARSE_MAX_THREADS) threads = QV_SPARSE_MAX_THREADS;
  /* the index buffers are the reader's own, or a view of a file no caller
   * writes through: immutable, so writers need not scan them again (values
   * are never validated, so their origin does not matter) */
  bool immutable = !a->caller_memory || (fresh[0] && fresh[1]);
  st = qv_sparse_init(out, &(QvSparseDesc){.ndim = 2, .format = format, .value_type = val->type,
                                           .indptr_type = ptr->type, .index_type = idx->type,
                                           .shape = shape, .nnz = nnz, .indptr = ptr->data,
                                           .indices = idx->data, .values = val->data,
                                           .owner = owner, .threads = threads,
                                           .immutable = immutable},
                      error);
  bool sorted = false;
  if (st != QV_OK) {
    /* SciPy leaves a row's indices unsorted (A[:, perm]) or repeated:
     * sorted and summed as its sum_duplicates does, into new buffers */
    QvSparseTensor raw = {.format = format, .value_type = val->type, .index_type = idx->type,
                          .indptr_type = ptr->type, .ndim = 2, .shape = shape, .nnz = nnz,
                          .values = val->data, .indptr = ptr->data, .indices = idx->data,
                          .indptr_len = major + 1, .indices_len = nnz};
    QvSparseOptions so = {.struct_size = sizeof so, .threads = threads,
                          .max_output_size = INT64_MAX}; /* no larger than what was read */
    /* invalid beyond the order: its error names the entry where it lies
     * in the file (the validation's may only say a row is unsorted) */
    st = qv_sparse_canonicalize(&raw, &so, out, error);
    sorted = st == QV_OK;
    if (sorted && info) {
      info->sorted = true;
      info->duplicates_summed = nnz - out->nnz;
    }
  }
  qv_owner_free(owner); /* a sorted result is the sparse module's own, sealed by it */
  if (st) qv_error_prefix(error, "npz");
  return st;
}

static bool coo_sorted_unique(const uint8_t *c, QvArrowType t, int64_t nnz) {
  for (int64_t i = 1; i < nnz; i++) {
    int64_t r0 = qv_index_load(c, t, i - 1), r1 = qv_index_load(c, t, i);
    int64_t c0 = qv_index_load(c, t, nnz + i - 1), c1 = qv_index_load(c, t, nnz + i);
    if (r1 < r0 || (r1 == r0 && c1 <= c0)) return false;
  }
  return true;
}

static QvStatus read_coo(const Archive *a, QvPool *pool, const int64_t shape[2],
                         QvSparseTensor *out, QvError *error) {
  int64_t cells;
  if (__builtin_mul_overflow(shape[0], shape[1], &cells)) cells = INT64_MAX;
  Bundle *b = calloc(1, sizeof *b);
  if (b == NULL) return qv_error_set(error, QV_ENOMEM, "out of memory");
  QvTensor *row = &b->t[0], *col = &b->t[1], *val = &b->t[2];
  bool fresh;
  /* row first: its length bounds what the others may declare */
  QvStatus st = read_array(a, M_ROW, -1, cells, true, row, &fresh, error);
  int64_t nnz = st == QV_OK ? row->shape[0] : 0;
  if (st == QV_OK && nnz > cells)
    st = qv_error_set(error, QV_EINVAL,
                      "npz: COO holds %" PRId64 " entries, more than the %" PRId64
                      " cells of its shape",
                      nnz, cells);
  if (st == QV_OK) {
    Load loads[2] = {{.m = M_COL, .want = nnz, .cap_entries = nnz, .index = true, .t = col},
                     {.m = M_DATA, .want = nnz, .cap_entries = nnz, .t = val}};
    st = load_all(a, pool, loads, 2, error);
  }
  /* one buffer, row then col: a column-major nnz x 2 index matrix */
  QvArrowType it = QV_ARROW_INT64;
  if (st == QV_OK) {
    it = row->type == col->type ? row->type : QV_ARROW_INT64;
    size_t w = qv_arrow_type_size(it);
    b->coords = qv_aligned_alloc(nnz > 0 ? (size_t)nnz * 2 * w : 1);
    if (b->coords == NULL) st = qv_error_set(error, QV_ENOMEM, "npz: out of memory");
  }
  if (st == QV_OK) {
    size_t w = qv_arrow_type_size(it);
    for (int k = 0; k < 2 && st == QV_OK; k++) {
      const QvTensor *src = k == 0 ? row : col;
      uint8_t *dst = b->coords + (size_t)k * (size_t)nnz * w;
      if (src->type == it) {
        if (nnz > 0) memcpy(dst, src->data, (size_t)nnz * w);
        continue;
      }
      for (int64_t i = 0; i < nnz; i++) {
        int64_t v = qv_index_load(src->data, src->type, i);
        if (v < 0 && src->type == QV_ARROW_UINT64) {
          st = qv_error_set(error, QV_EINVAL,
                            "npz: %s value at position %" PRId64 " does not fit int64",
                            member_names[k == 0 ? M_ROW : M_COL], i);
          break;
        }
        memcpy(dst + (size_t)i * 8, &v, 8);
      }
    }
  }
  /* row and col live on in coords only */
  qv_tensor_reset(row);
  qv_tensor_reset(col);
  if (st) {
    bundle_free(b);
    return st;
  }
  size_t w = qv_arrow_type_size(it);
  int64_t strides[2] = {(int64_t)w, nnz * (int64_t)w};
  bool canonical = coo_sorted_unique(b->coords, it, nnz);
  const uint8_t *coords = b->coords, *values = val->data;
  QvArrowType vt = val->type;
  QvOwner *owner = bundle_owner(b);
  if (owner == NULL) return qv_error_set(error, QV_ENOMEM, "out of memory");
  /* coords are the reader's own copy: immutable */
  st = qv_sparse_init(out, &(QvSparseDesc){.format = QV_SPARSE_COO, .value_type = vt,
                                           .index_type = it, .ndim = 2, .shape = shape, .nnz = nnz,
                                           .coords = coords, .coords_strides = strides,
                                           .is_canonical = canonical, .values = values,
                                           .owner = owner, .immutable = true}, error);
  qv_owner_free(owner);
  if (st) qv_error_prefix(error, "npz");
  return st;
}

typedef struct ReadResult {
  QvSparseTensor *out;
  QvNpzReadInfo *info;
  const QvNpzReadOptions *options;
  bool caller_memory;
  QvSource *populate; /* a file mapped without populating: read_archive does it on its pool */
} ReadResult;

/* Below this an archive is populated in one call when it is mapped (a
 * pool run and the calls cost more than they save). */
#define PARALLEL_POPULATE_MIN ((int64_t)8 << 20)

typedef struct PopulateJob {
  QvSource *source;
  int64_t size, slice;
  int64_t skip_from, skip_to; /* bytes no one reads here (see read_archive) */
} PopulateJob;

static void populate_task(void *ctx, size_t i) {
  PopulateJob *j = ctx;
  int64_t from = (int64_t)i * j->slice, to = from + j->slice;
  int64_t head_end = to < j->skip_from ? to : j->skip_from;
  int64_t tail_start = from > j->skip_to ? from : j->skip_to;
  if (from < head_end) qv_source_populate(j->source, from, head_end - from);
  if (tail_start < to) qv_source_populate(j->source, tail_start, to - tail_start);
}

/* `owner` keeps data alive: stored members aligned for their dtype stay
 * views of it. */
static QvStatus read_archive(const uint8_t *data, size_t size, QvOwner *owner, void *result,
                             QvError *error) {
  ReadResult *r = result;
  QvSparseTensor *out = r->out;
  Archive a;
  QvStatus st = open_archive(data, size, owner, &a, error);
  if (st) return st;
  a.verify_crc = r->options->verify_crc;
  a.keep_misaligned = r->options->keep_misaligned;
  a.caller_memory = r->caller_memory;
  char fmt[FORMAT_MAX_CHARS + 1];
  if (a.member[M_FORMAT] == NULL)
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
    bool fresh;
    st = read_array(&a, M_SHAPE, 2, 2, true, &s, &fresh, error);
    for (int i = 0; i < 2 && st == QV_OK; i++) {
      shape[i] = qv_index_load(s.data, s.type, i);
      if (shape[i] < 0)
        st = qv_error_set(error, QV_EINVAL, "npz: shape.npy entry %d is negative or too large",
                          i);
    }
    qv_tensor_reset(&s);
  }
  /* two big members decode at once after the first (see read_csx), then
   * the index scan of CSR/CSC validation splits across the threads; past
   * 8 the scan is bound by memory and thread start-up only costs */
  QvPool *pool = NULL;
  int threads = r->options->threads > 8 ? 8 : r->options->threads;
  if (st == QV_OK && threads > 1) st = qvi_pool_new(&pool, threads, error);
  if (st == QV_OK && r->populate != NULL) {
    /* the mapping's pages, a slice per task (2 MiB multiples: one page
     * table each), on every thread: one call on one thread was a tenth of
     * reading a stored archive. Eight slices a thread, so that a thread
     * the scheduler holds back leaves little for the others to wait on */
    int64_t n = (int64_t)threads * 8, big = (int64_t)2 << 20;
    int64_t slice = ((int64_t)size / n + big - 1) / big * big;
    PopulateJob j = {r->populate, (int64_t)size, slice, 0, 0};
    /* stored values that stay a view of the archive are never read here:
     * a writer copies them file to file (copy_file_range) or populates them
     * as it writes */
    const QvZipEntry *d = a.member[M_DATA];
    if (d && d->method == QV_ZIP_STORED && !a.verify_crc && a.keep_misaligned &&
        d->data_offset <= (uint64_t)size && d->csize <= (uint64_t)size - d->data_offset) {
      j.skip_from = (int64_t)d->data_offset;
      j.skip_to = (int64_t)(d->data_offset + d->csize);
    }
    qvi_pool_run(pool, (size_t)(((int64_t)size + slice - 1) / slice), populate_task, &j);
  }
  if (st == QV_OK)
    st = format == QV_SPARSE_COO ? read_coo(&a, pool, shape, out, error)
                                 : read_csx(&a, pool, format, shape, out, r->info, error);
  qvi_pool_free(pool);
  close_archive(&a);
  return st;
}

QvStatus qv_npz_read(QvSource *source, const QvNpzReadOptions *options, QvSparseTensor *out,
                     QvNpzReadInfo *info, QvError *error) {
  if (out == NULL) return qv_error_set(error, QV_EARG, "NULL output tensor");
  memset(out, 0, sizeof *out);
  QvNpzReadOptions o;
  QvStatus st = QV_OPTIONS_LOAD(&o, options, QvNpzReadOptions, error);
  if (st) return st;
  if (o.threads < 0)
    return qv_error_set(error, QV_EARG, "QvNpzReadOptions: threads %d is negative", o.threads);
  if (info) {
    if (info->struct_size != 0 && info->struct_size < sizeof *info)
      return qv_error_set(error, QV_EARG, "QvNpzReadInfo: struct_size %zu is not 0 or %zu",
                          info->struct_size, sizeof *info);
    *info = (QvNpzReadInfo){.struct_size = sizeof *info};
  }
  ReadResult r = {out, info, &o, source != NULL && qv_source_kind(source) == QV_SOURCE_MEMORY,
                  NULL};
  /* every byte is read (validated, inflated or handed on to a writer): a
   * mapped file is populated rather than faulted in page by page, in one
   * call when it is mapped, or (a large file, a pool) in slices on every
   * thread once the archive's directory has been checked */
  if (source != NULL && o.threads > 1 && qv_source_kind(source) == QV_SOURCE_FILE &&
      qv_source_get_advice(source) == QV_SOURCE_ADVICE_DEFAULT && !qv_source_is_mapped(source) &&
      qv_source_size(source) >= PARALLEL_POPULATE_MIN) {
    qv_source_set_advice(source, QV_SOURCE_ADVICE_NONE);
    r.populate = source;
  } else if (source != NULL) {
    qv_source_expect_full_read(source);
  }
  return qvi_npy_read_source(source, 0, read_archive, &r, error);
}

/* ---- writing */

/* The header of the format member exactly as NumPy 1.24 writes
 * np.array(b'csr'); the 3 characters follow it. */
static void format_header(uint8_t out[128]) {
  static const char dict[] = "{'descr': '|S3', 'fortran_order': False, 'shape': (), }";
  memset(out, ' ', 128);
  memcpy(out, qvi_npy_magic, 6);
  out[6] = 1;
  out[7] = 0;
  out[8] = 118; /* header length: 128 - 10 */
  out[9] = 0;
  memcpy(out + 10, dict, sizeof dict - 1);
  out[127] = '\n';
}

#define MAX_MEMBERS 5
/* Stored members' data start at this multiple in the archive (the .npy
 * headers are multiples of 64 too), so quiver reads them in place. */
#define STORED_ALIGN 64

/* One member: its .npy header and data, then (tasks) its CRC and, when
 * deflated, its compressed bytes. */
typedef struct WMember {
  const char *name;
  uint8_t header[QV_NPY_WRITE_HEADER_MAX];
  size_t hlen;
  const uint8_t *data; /* dlen bytes, in the order the header says */
  size_t dlen;
  QvTensor copy;       /* a strided array made contiguous (COO row-major coords) */
  uint32_t crc;
  uint8_t *comp;
  size_t clen;
  QvStatus st;
  QvError err;
} WMember;

/* A 1-D array of n entries at `data` with byte stride. */
static QvStatus plan_member(WMember *w, const char *name, QvArrowType type, int64_t n,
                            const void *data, int64_t stride, QvError *error) {
  w->name = name;
  int64_t width = (int64_t)qv_arrow_type_size(type);
  int64_t span = n > 0 ? (n - 1) * stride + width : 0;
  QvTensor t;
  QvStatus st = qv_tensor_init(&t, &(QvTensorDesc){.type = type, .ndim = 1, .shape = &n,
                                                   .strides = &stride, .data = n > 0 ? data : NULL,
                                                   .data_size = span}, error);
  if (st) return st;
  bool direct;
  st = qvi_npy_write_header(&t, w->header, &w->hlen, &direct, error);
  if (st == QV_OK && !direct) st = qv_tensor_copy(&t, false, &w->copy, error);
  if (st == QV_OK) {
    w->data = direct ? t.data : w->copy.data;
    w->dlen = (size_t)(n * width);
  }
  qv_tensor_reset(&t);
  return st;
}

static QvStatus plan_members(const QvSparseTensor *t, WMember *m, QvError *error) {
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
  /* float16 values are written as SciPy's save_npz writes a matrix whose
   * data is float16 (data.npy '<f2'; load_npz reads it back as float16) */
  int64_t nnz = t->nnz;
  int64_t iw = (int64_t)qv_arrow_type_size(t->index_type);
  /* save_npz's member order */
  if (t->format == QV_SPARSE_COO) {
    st = plan_member(&m[0], "row.npy", t->index_type, nnz, t->coords, t->coords_strides[0],
                     error);
    if (st == QV_OK)
      st = plan_member(&m[1], "col.npy", t->index_type, nnz,
                       nnz > 0 ? t->coords + t->coords_strides[1] : NULL, t->coords_strides[0],
                       error);
  } else {
    st = plan_member(&m[0], "indices.npy", t->index_type, nnz, t->indices, iw, error);
    if (st == QV_OK)
      st = plan_member(&m[1], "indptr.npy", t->indptr_type, t->indptr_len, t->indptr,
                       (int64_t)qv_arrow_type_size(t->indptr_type), error);
  }
  if (st) return st;
  m[2].name = "format.npy";
  format_header(m[2].header);
  m[2].hlen = 128;
  m[2].data = (const uint8_t *)qv_sparse_format_name(t->format);
  m[2].dlen = 3;
  st = plan_member(&m[3], "shape.npy", QV_ARROW_INT64, 2, t->shape, 8, error);
  if (st) return st;
  return plan_member(&m[4], "data.npy", t->value_type, nnz, t->values,
                     (int64_t)qv_arrow_type_size(t->value_type), error);
}

typedef struct WriteJob {
  WMember *m;
  bool stored;
  int order[MAX_MEMBERS]; /* largest first: the pool claims tasks in index order */
} WriteJob;

/* CRC-32 of the member and, when deflated, its deflate stream: the .npy
 * header as a stored block (libdeflate compresses one buffer per call and
 * the header is not next to the data), then libdeflate's stream of the
 * data, which starts on the byte boundary a stored block ends at. */
static void member_task(void *ctx, size_t i) {
  WriteJob *j = ctx;
  WMember *w = &j->m[j->order[i]];
  qv_error_clear(&w->err);
  w->st = QV_OK;
  uint32_t crc = (uint32_t)libdeflate_crc32(0, w->header, w->hlen);
  if (w->dlen) crc = (uint32_t)libdeflate_crc32(crc, w->data, w->dlen);
  w->crc = crc;
  if (j->stored) return;
  struct libdeflate_compressor *c = libdeflate_alloc_compressor(DEFLATE_LEVEL);
  if (c == NULL) {
    w->st = qv_error_set(&w->err, QV_ENOMEM, "npz: out of memory deflating %s", w->name);
    return;
  }
  size_t bound = libdeflate_deflate_compress_bound(c, w->dlen), head = 5 + w->hlen;
  w->comp = bound <= SIZE_MAX - head ? malloc(head + bound) : NULL;
  if (w->comp == NULL) {
    libdeflate_free_compressor(c);
    w->st = qv_error_set(&w->err, QV_ENOMEM, "npz: out of memory deflating %s (%zu bytes)",
                         w->name, w->dlen);
    return;
  }
  /* BFINAL only when no data follows; BTYPE 00 (stored); LEN, NLEN */
  w->comp[0] = w->dlen == 0 ? 1 : 0;
  w->comp[1] = (uint8_t)w->hlen;
  w->comp[2] = (uint8_t)(w->hlen >> 8);
  w->comp[3] = (uint8_t)~w->hlen;
  w->comp[4] = (uint8_t)(~w->hlen >> 8);
  memcpy(w->comp + 5, w->header, w->hlen);
  size_t n = 0;
  if (w->dlen) {
    n = libdeflate_deflate_compress(c, w->data, w->dlen, w->comp + head, bound);
    if (n == 0)
      w->st = qv_error_set(&w->err, QV_EIO, "npz: deflating %s failed", w->name);
  }
  libdeflate_free_compressor(c);
  w->clen = head + n;
}

/* Local header and bytes of each member in order, then the central
 * directory: what a zip needs, written once, front to back. */
static QvStatus write_members(QvSink *sink, WMember *m, bool stored, QvError *error) {
  QvZipWriteEntry e[MAX_MEMBERS];
  uint8_t local[QV_ZIP_LOCAL_MAX];
  uint64_t offset = 0;
  QvStatus st = QV_OK;
  for (int i = 0; i < MAX_MEMBERS && st == QV_OK; i++) {
    WMember *w = &m[i];
    uint64_t usize = (uint64_t)w->hlen + w->dlen;
    e[i] = (QvZipWriteEntry){.name = w->name, .method = stored ? QV_ZIP_STORED : QV_ZIP_DEFLATED,
                             .crc = w->crc, .csize = stored ? usize : w->clen, .usize = usize,
                             .offset = offset};
    size_t hl = qvi_zip_local_header(local, &e[i], stored ? STORED_ALIGN : 0);
    st = qv_sink_write(sink, local, hl, error);
    if (st == QV_OK && stored) {
      st = qv_sink_write(sink, w->header, w->hlen, error);
      if (st == QV_OK && w->dlen) st = qv_sink_write(sink, w->data, w->dlen, error);
    } else if (st == QV_OK) {
      st = qv_sink_write(sink, w->comp, w->clen, error);
      /* written: its memory goes before the next member's is touched */
      free(w->comp);
      w->comp = NULL;
    }
    offset += hl + e[i].csize;
  }
  if (st) return st;
  uint8_t tail[MAX_MEMBERS * QV_ZIP_CENTRAL_MAX + QV_ZIP_END_MAX];
  size_t n = 0;
  for (int i = 0; i < MAX_MEMBERS; i++) n += qvi_zip_central_entry(tail + n, &e[i]);
  n += qvi_zip_end_records(tail + n, MAX_MEMBERS, offset, n);
  return qv_sink_write(sink, tail, n, error);
}

QvStatus qv_npz_write(const QvSparseTensor *t, QvSink *sink, const QvNpzWriteOptions *options,
                      QvError *error) {
  if (sink == NULL) return qv_error_set(error, QV_EARG, "NULL sink");
  QvNpzWriteOptions o;
  QvStatus st = QV_OPTIONS_LOAD(&o, options, QvNpzWriteOptions, error);
  if (st) return st;
  if (o.threads < 0)
    return qv_error_set(error, QV_EARG, "QvNpzWriteOptions: threads %d is negative", o.threads);
  WMember *m = calloc(MAX_MEMBERS, sizeof *m);
  if (m == NULL) return qv_error_set(error, QV_ENOMEM, "out of memory");
  st = plan_members(t, m, error);
  QvPool *pool = NULL;
  int threads = o.threads > MAX_MEMBERS ? MAX_MEMBERS : o.threads;
  if (st == QV_OK && threads > 1) st = qvi_pool_new(&pool, threads, error);
  if (st == QV_OK) {
    WriteJob j = {m, o.stored, {0, 1, 2, 3, 4}};
    for (int a = 1; a < MAX_MEMBERS; a++)
      for (int b = a; b > 0 && m[j.order[b]].dlen > m[j.order[b - 1]].dlen; b--) {
        int x = j.order[b];
        j.order[b] = j.order[b - 1];
        j.order[b - 1] = x;
      }
    qvi_pool_run(pool, MAX_MEMBERS, member_task, &j);
    for (int i = 0; i < MAX_MEMBERS && st == QV_OK; i++)
      if (m[i].st) {
        if (error) *error = m[i].err;
        st = m[i].st;
      }
  }
  qvi_pool_free(pool);
  if (st == QV_OK) st = write_members(sink, m, o.stored, error);
  for (int i = 0; i < MAX_MEMBERS; i++) {
    free(m[i].comp);
    qv_tensor_reset(&m[i].copy);
  }
  free(m);
  return st;
}
