/* SciPy .npz <-> sparse tensors: round trips (CSR, CSC, COO; value and index
 * types; deflated and stored; memory, path and descriptor), the exact
 * members written, and hostile archives built with libzip: missing and
 * duplicate members, wrong dtypes and shapes, bad format strings, CRC
 * errors, lying sizes, zip bombs. The zip layer: stored members read in
 * place (checked by address), misaligned ones copied, lying local headers,
 * sizes past the end, overlapping members, zip64 end records and data
 * descriptors; writers byte-identical for any thread count. */
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zip.h>
#include <zlib.h>

#include "quiver/advanced.h"
#include "ipc/source_internal.h"
#include "numpy/zip.h"
#include "quiver/npy.h"
#include "quiver/npz.h"
#include "quiver/sparse_ipc.h"
#include "sparse/sparse_seal.h"
#include "util/cpu.h"
#include "test_util.h"
#include "util/load.h"

/* ---- building archives */

/* The readers and writers over memory, a path and a descriptor. */
static QvStatus npz_read_memory(const uint8_t *buf, size_t size, QvSparseTensor *t, QvError *err) {
  QvSource *src;
  QvStatus st = qv_source_new_memory(&src, buf, size, NULL, err);
  if (st) return st;
  st = qv_npz_read(src, NULL, t, NULL, err);
  qv_source_free(src);
  return st;
}

static QvStatus npz_read_path(const char *path, QvSparseTensor *t, QvError *err) {
  QvSource *src;
  QvStatus st = qv_source_new_path(&src, path, err);
  if (st) return st;
  st = qv_npz_read(src, NULL, t, NULL, err);
  qv_source_free(src);
  return st;
}

/* *out: malloc'd copy of the bytes (free() it). */
static QvStatus npz_write_memory(const QvSparseTensor *t, const QvNpzWriteOptions *o,
                                 uint8_t **out, size_t *size, QvError *err) {
  *out = NULL;
  *size = 0;
  QvSink *sink;
  QvStatus st = qv_sink_new_memory(&sink, err);
  if (st) return st;
  st = qv_npz_write(t, sink, o, err);
  uint8_t *data = NULL;
  if (st == QV_OK) st = qv_sink_memory_take(sink, &data, size, err);
  qv_sink_free(sink);
  if (st) return st;
  *out = malloc(*size + 1);
  assert_non_null(*out);
  memcpy(*out, data, *size);
  qv_free(data);
  return QV_OK;
}

static QvStatus npz_write_path(const QvSparseTensor *t, const QvNpzWriteOptions *o,
                               const char *path, QvError *err) {
  QvSink *sink;
  QvStatus st = qv_sink_new_path(&sink, path, 0, err);
  if (st) return st;
  st = qv_npz_write(t, sink, o, err);
  if (st == QV_OK) st = qv_sink_finish(sink, err);
  qv_sink_free(sink);
  return st;
}

static QvStatus npz_write_fd(const QvSparseTensor *t, const QvNpzWriteOptions *o, int fd,
                             QvError *err) {
  QvSink *sink;
  QvStatus st = qv_sink_new_fd(&sink, fd, err);
  if (st) return st;
  st = qv_npz_write(t, sink, o, err);
  qv_sink_free(sink);
  return st;
}

/* The .npy image of t in buf[0, cap). */
static QvStatus npy_write_buffer(const QvTensor *t, void *buf, size_t cap, QvError *err) {
  QvSink *sink;
  QvStatus st = qv_sink_new_buffer(&sink, buf, cap, err);
  if (st) return st;
  st = qv_npy_write(t, sink, NULL, err);
  qv_sink_free(sink);
  return st;
}

typedef struct Member {
  const char *name;
  uint8_t *p;
  size_t n;
} Member;

/* The .npy image of a 1-D array. */
static Member npy(const char *name, QvArrowType type, int64_t n, const void *data) {
  QvTensor t;
  QvError err;
  size_t w = qv_arrow_type_size(type);
  assert_int_equal(qv_tensor_init(&t, &(QvTensorDesc){.type = type, .ndim = 1, .shape = &n,
                                                      .data = data,
                                                      .data_size = n * (int64_t)w}, &err),
                   QV_OK);
  Member m = {name, NULL, 0};
  assert_int_equal(qv_npy_write_size(&t, NULL, &m.n, &err), QV_OK);
  m.p = malloc(m.n);
  assert_non_null(m.p);
  assert_int_equal(npy_write_buffer(&t, m.p, m.n, &err), QV_OK);
  qv_tensor_reset(&t);
  return m;
}

/* A raw member: header dict text and data bytes, framed as .npy 1.0. */
static Member raw_npy(const char *name, const char *dict, const void *data, size_t n) {
  size_t dl = strlen(dict);
  size_t total = (10 + dl + 1 + 63) / 64 * 64;
  Member m = {name, malloc(total + n), total + n};
  assert_non_null(m.p);
  memcpy(m.p, "\x93NUMPY\x01\x00", 8);
  m.p[8] = (uint8_t)((total - 10) & 0xFF);
  m.p[9] = (uint8_t)((total - 10) >> 8);
  memset(m.p + 10, ' ', total - 10);
  memcpy(m.p + 10, dict, dl);
  m.p[total - 1] = '\n';
  if (n) memcpy(m.p + total, data, n);
  return m;
}

static Member fmt_member(const char *s) {
  return raw_npy("format.npy", "{'descr': '|S3', 'fortran_order': False, 'shape': (), }", s, 3);
}

/* Zips the members (freed) into a malloc'd archive. */
static uint8_t *zip_members(Member *m, int n, bool stored, size_t *size) {
  zip_error_t ze;
  zip_error_init(&ze);
  zip_source_t *src = zip_source_buffer_create(NULL, 0, 0, &ze);
  assert_non_null(src);
  zip_source_keep(src);
  zip_t *za = zip_open_from_source(src, ZIP_TRUNCATE, &ze);
  assert_non_null(za);
  for (int i = 0; i < n; i++) {
    zip_source_t *s = zip_source_buffer(za, m[i].p, m[i].n, 0);
    assert_non_null(s);
    zip_int64_t idx = zip_file_add(za, m[i].name, s, 0);
    assert_true(idx >= 0);
    assert_int_equal(
        zip_set_file_compression(za, (zip_uint64_t)idx, stored ? ZIP_CM_STORE : ZIP_CM_DEFLATE, 0), 0);
  }
  assert_int_equal(zip_close(za), 0);
  assert_int_equal(zip_source_open(src), 0);
  assert_int_equal(zip_source_seek(src, 0, SEEK_END), 0);
  zip_int64_t len = zip_source_tell(src);
  assert_int_equal(zip_source_seek(src, 0, SEEK_SET), 0);
  uint8_t *buf = malloc((size_t)len);
  assert_non_null(buf);
  assert_int_equal(zip_source_read(src, buf, (zip_uint64_t)len), len);
  zip_source_close(src);
  zip_source_free(src);
  zip_error_fini(&ze);
  for (int i = 0; i < n; i++) free(m[i].p);
  *size = (size_t)len;
  return buf;
}

/* Replaces every occurrence of `from` by `to` (same length) in buf. */
static int patch(uint8_t *buf, size_t size, const char *from, const char *to) {
  size_t n = strlen(from);
  int count = 0;
  for (size_t i = 0; i + n <= size; i++)
    if (memcmp(buf + i, from, n) == 0) {
      memcpy(buf + i, to, n);
      count++;
    }
  return count;
}

static uint8_t *find(uint8_t *buf, size_t size, const void *what, size_t n) {
  for (size_t i = 0; i + n <= size; i++)
    if (memcmp(buf + i, what, n) == 0) return buf + i;
  return NULL;
}

static QvStatus npz_read_memory_opts(const uint8_t *buf, size_t size, const QvNpzReadOptions *o,
                                     QvSparseTensor *t, QvError *err) {
  QvSource *src;
  QvStatus st = qv_source_new_memory(&src, buf, size, NULL, err);
  if (st) return st;
  st = qv_npz_read(src, o, t, NULL, err);
  qv_source_free(src);
  return st;
}

static void expect_reject_opts(const uint8_t *buf, size_t size, const QvNpzReadOptions *o,
                               const char *needle) {
  QvSparseTensor t;
  QvError err;
  qv_error_clear(&err);
  QvStatus st = npz_read_memory_opts(buf, size, o, &t, &err);
  if (st == QV_OK) {
    qv_sparse_reset(&t);
    fail_msg("accepted an archive that should fail with '%s'", needle);
  }
  if (st != QV_EINVAL) fail_msg("status %d, not QV_EINVAL: %s", (int)st, err.message);
  if (strstr(err.message, needle) == NULL)
    fail_msg("error '%s' does not mention '%s'", err.message, needle);
  assert_null(t.values);
}

static void expect_reject(const uint8_t *buf, size_t size, const char *needle) {
  QvSparseTensor t;
  QvError err;
  qv_error_clear(&err);
  QvStatus st = npz_read_memory(buf, size, &t, &err);
  if (st == QV_OK) {
    qv_sparse_reset(&t);
    fail_msg("accepted an archive that should fail with '%s'", needle);
  }
  if (strstr(err.message, needle) == NULL)
    fail_msg("error '%s' does not mention '%s'", err.message, needle);
  assert_null(t.values);
}

/* The 3x4 CSR [[0 1 0 2] [0 0 0 0] [3 0 4 0]]. */
static const int32_t csr_ptr[4] = {0, 2, 2, 4};
static const int32_t csr_idx[4] = {1, 3, 0, 2};
static const double csr_val[4] = {1, 2, 3, 4};
static const int64_t shape34[2] = {3, 4};

static uint8_t *csr_zip(size_t *size, bool stored) {
  Member m[5] = {npy("indices.npy", QV_ARROW_INT32, 4, csr_idx),
                 npy("indptr.npy", QV_ARROW_INT32, 4, csr_ptr), fmt_member("csr"),
                 npy("shape.npy", QV_ARROW_INT64, 2, shape34),
                 npy("data.npy", QV_ARROW_FLOAT64, 4, csr_val)};
  return zip_members(m, 5, stored, size);
}


/* ---- SciPy's unsorted indices (A[:, perm]) sorted and summed on read */

typedef struct Csx {
  const char *format;
  int n, nnz; /* indptr entries n + 1, nnz entries */
  int64_t ptr[6], idx[8];
  int32_t val[8];
} Csx;

/* Writes `in` with indices of `it` and int32 values, reads it back and
 * checks it equals `want` (what scipy's sum_duplicates gives) and the info. */
static void check_canonicalized(const Csx *in, QvArrowType it, const Csx *want, bool sorted,
                                int64_t summed) {
  uint8_t ptr[6 * 8], idx[8 * 8];
  size_t w = qv_arrow_type_size(it);
  for (int i = 0; i <= in->n; i++) {
    int32_t p32 = (int32_t)in->ptr[i];
    memcpy(ptr + i * w, w == 4 ? (const void *)&p32 : (const void *)&in->ptr[i], w);
  }
  for (int i = 0; i < in->nnz; i++) {
    int32_t i32 = (int32_t)in->idx[i];
    memcpy(idx + i * w, w == 4 ? (const void *)&i32 : (const void *)&in->idx[i], w);
  }
  bool csr = strcmp(in->format, "csr") == 0;
  int64_t shape[2] = {csr ? in->n : 4, csr ? 4 : in->n};
  Member m[5] = {npy("indices.npy", it, in->nnz, idx), npy("indptr.npy", it, in->n + 1, ptr),
                 fmt_member(in->format), npy("shape.npy", QV_ARROW_INT64, 2, shape),
                 npy("data.npy", QV_ARROW_INT32, in->nnz, in->val)};
  size_t size;
  uint8_t *buf = zip_members(m, 5, false, &size);
  QvSource *src;
  QvError err;
  QvSparseTensor t;
  QvNpzReadInfo info = {.struct_size = sizeof info};
  assert_int_equal(qv_source_new_memory(&src, buf, size, NULL, &err), QV_OK);
  QvStatus st = qv_npz_read(src, NULL, &t, &info, &err);
  qv_source_free(src);
  if (st) fail_msg("%s", err.message);
  assert_int_equal(info.sorted, sorted);
  assert_int_equal(info.duplicates_summed, summed);
  assert_int_equal(t.format, csr ? QV_SPARSE_CSR : QV_SPARSE_CSC);
  assert_int_equal(t.nnz, want->nnz);
  for (int i = 0; i <= want->n; i++)
    assert_int_equal(qv_index_load(t.indptr, t.indptr_type, i), want->ptr[i]);
  for (int i = 0; i < want->nnz; i++) {
    assert_int_equal(qv_index_load(t.indices, t.index_type, i), want->idx[i]);
    int32_t v;
    memcpy(&v, (const uint8_t *)t.values + i * 4, 4);
    assert_int_equal(v, want->val[i]);
  }
  qv_sparse_reset(&t);
  free(buf);
}

static void test_unsorted_indices(void **state) {
  (void)state;
  static const QvArrowType types[2] = {QV_ARROW_INT32, QV_ARROW_INT64};
  /* unsorted only: rows {3,1}, {}, {2,0,1} */
  static const Csx unsorted = {"csr", 3, 5, {0, 2, 2, 5}, {3, 1, 2, 0, 1}, {10, 20, 30, 40, 50}};
  static const Csx unsorted_w = {"csr", 3, 5, {0, 2, 2, 5}, {1, 3, 0, 1, 2}, {20, 10, 40, 50, 30}};
  /* sorted but repeated: row 0 {1,1}, row 1 {2,2,2}; 5 + -5 stays an explicit zero, as in SciPy */
  static const Csx dups = {"csr", 2, 5, {0, 2, 5}, {1, 1, 2, 2, 2}, {5, -5, 1, 2, 4}};
  static const Csx dups_w = {"csr", 2, 2, {0, 1, 2}, {1, 2}, {0, 7}};
  /* both, with int32 wrap-around: row 0 {2,0,2,0}, row 1 {3} */
  static const Csx both = {"csr", 2, 5, {0, 4, 5}, {2, 0, 2, 0, 3},
                           {INT32_MAX, 1, 1, 2, 9}};
  static const Csx both_w = {"csr", 2, 3, {0, 2, 3}, {0, 2, 3}, {3, INT32_MIN, 9}};
  /* CSC: column 0 {2,0}, column 1 {1,1} */
  static const Csx csc = {"csc", 2, 4, {0, 2, 4}, {2, 0, 1, 1}, {1, 2, 3, 4}};
  static const Csx csc_w = {"csc", 2, 3, {0, 2, 3}, {0, 2, 1}, {2, 1, 7}};
  /* already canonical: untouched and not reported */
  static const Csx sorted = {"csr", 2, 3, {0, 2, 3}, {0, 3, 1}, {1, 2, 3}};
  for (int k = 0; k < 2; k++) {
    check_canonicalized(&unsorted, types[k], &unsorted_w, true, 0);
    check_canonicalized(&dups, types[k], &dups_w, true, 3);
    check_canonicalized(&both, types[k], &both_w, true, 2);
    check_canonicalized(&csc, types[k], &csc_w, true, 1);
    check_canonicalized(&sorted, types[k], &sorted, false, 0);
  }
  /* sorting does not make out-of-range indices valid */
  static const int32_t bad_idx[3] = {9, 1, 0};
  static const int32_t bad_ptr[2] = {0, 3};
  static const int64_t shape14[2] = {1, 4};
  static const double vals[3] = {1, 2, 3};
  Member m[5] = {npy("indices.npy", QV_ARROW_INT32, 3, bad_idx),
                 npy("indptr.npy", QV_ARROW_INT32, 2, bad_ptr), fmt_member("csr"),
                 npy("shape.npy", QV_ARROW_INT64, 2, shape14),
                 npy("data.npy", QV_ARROW_FLOAT64, 3, vals)};
  size_t size;
  uint8_t *buf = zip_members(m, 5, true, &size);
  expect_reject(buf, size, "npz");
  free(buf);
}

/* ---- round trips */

static void fill_dense(QvTensor *t) {
  int64_t n = qv_tensor_n_elements(t);
  size_t w = qv_arrow_type_size(t->type);
  for (int64_t k = 0; k < n; k++) {
    if (k % 3 != 1) continue;
    int64_t v = (k % 7) + 1;
    uint8_t *p = (uint8_t *)t->data + k * (int64_t)w;
    if (t->type == QV_ARROW_FLOAT64) {
      double d = (double)v * 0.5;
      memcpy(p, &d, 8);
    } else if (t->type == QV_ARROW_FLOAT32) {
      float f = (float)v * -0.25f;
      memcpy(p, &f, 4);
    } else {
      qvi_st_bits(p, w, (uint64_t)v); /* the low bytes, host order */
    }
  }
}

static void check_roundtrip(const QvSparseTensor *s, const QvTensor *dense, bool stored) {
  QvNpzWriteOptions o = {.stored = stored};
  uint8_t *buf;
  size_t size;
  QvError err;
  QvStatus st = npz_write_memory(s, &o, &buf, &size, &err);
  if (st) fail_msg("write: %s", err.message);
  /* the first local header's method: 0 stored, 8 deflate */
  assert_memory_equal(buf, "PK\x03\x04", 4);
  assert_int_equal(buf[8], stored ? 0 : 8);
  QvSparseTensor back;
  st = npz_read_memory(buf, size, &back, &err);
  if (st) fail_msg("read: %s", err.message);
  assert_int_equal(back.format, s->format);
  assert_int_equal(back.value_type, s->value_type);
  assert_int_equal(back.index_type, s->index_type);
  if (s->format != QV_SPARSE_COO) assert_int_equal(back.indptr_type, s->indptr_type);
  assert_int_equal(back.nnz, s->nnz);
  assert_int_equal(back.shape[0], s->shape[0]);
  assert_int_equal(back.shape[1], s->shape[1]);
  assert_true(qv_sparse_equal(s, &back));
  assert_true(qv_sparse_equal_dense(&back, dense));
  if (s->format == QV_SPARSE_COO) assert_true(back.is_canonical); /* from_dense sorts */
  qv_sparse_reset(&back);
  free(buf);
}

static void test_roundtrip_types(void **state) {
  (void)state;
  const QvSparseFormat kinds[3] = {QV_SPARSE_CSR, QV_SPARSE_CSC, QV_SPARSE_COO};
  const QvArrowType vts[] = {QV_ARROW_FLOAT64, QV_ARROW_FLOAT32, QV_ARROW_INT8, QV_ARROW_UINT16,
                             QV_ARROW_INT32, QV_ARROW_UINT64};
  const int64_t shape[2] = {7, 9};
  for (int k = 0; k < 3; k++)
    for (size_t v = 0; v < sizeof vts / sizeof vts[0]; v++)
      for (int it = QV_ARROW_INT8; it <= QV_ARROW_UINT64; it++) {
        QvTensor dense;
        QvError err;
        assert_int_equal(qv_tensor_alloc(&dense, vts[v], 2, shape, NULL, false, NULL, &err), QV_OK);
        fill_dense(&dense);
        QvSparseOptions o = {.index_type = (QvArrowType)it};
        QvSparseTensor s;
        assert_int_equal(qv_sparse_from_dense(&dense, kinds[k], &o, &s, &err), QV_OK);
        check_roundtrip(&s, &dense, it % 2 == 1);
        qv_sparse_reset(&s);
        qv_tensor_reset(&dense);
      }
}

static void test_members_as_scipy_writes_them(void **state) {
  (void)state;
  size_t size;
  uint8_t *ref = csr_zip(&size, false);
  QvSparseTensor t;
  QvError err;
  assert_int_equal(npz_read_memory(ref, size, &t, &err), QV_OK);
  assert_int_equal(t.format, QV_SPARSE_CSR);
  assert_int_equal(t.index_type, QV_ARROW_INT32);
  assert_int_equal(t.indptr_type, QV_ARROW_INT32);
  assert_memory_equal(t.indptr, csr_ptr, sizeof csr_ptr);
  assert_memory_equal(t.indices, csr_idx, sizeof csr_idx);
  assert_memory_equal(t.values, csr_val, sizeof csr_val);
  uint8_t *out;
  size_t out_size;
  QvNpzWriteOptions o = {.stored = false};
  assert_int_equal(npz_write_memory(&t, &o, &out, &out_size, &err), QV_OK);
  /* same members, same bytes: names, order, .npy headers and data */
  zip_error_t ze;
  zip_error_init(&ze);
  zip_source_t *sa = zip_source_buffer_create(ref, size, 0, &ze);
  zip_source_t *sb = zip_source_buffer_create(out, out_size, 0, &ze);
  zip_t *a = zip_open_from_source(sa, ZIP_RDONLY, &ze), *b = zip_open_from_source(sb, ZIP_RDONLY, &ze);
  assert_non_null(a);
  assert_non_null(b);
  assert_int_equal(zip_get_num_entries(b, 0), 5);
  const char *order[5] = {"indices.npy", "indptr.npy", "format.npy", "shape.npy", "data.npy"};
  for (int i = 0; i < 5; i++) {
    assert_string_equal(zip_get_name(b, (zip_uint64_t)i, 0), order[i]);
    zip_stat_t x, y;
    assert_int_equal(zip_stat_index(a, (zip_uint64_t)i, 0, &x), 0);
    assert_int_equal(zip_stat_index(b, (zip_uint64_t)i, 0, &y), 0);
    assert_int_equal(x.size, y.size);
    assert_int_equal(x.crc, y.crc);
  }
  /* the format member is NumPy's np.array(b'csr') image, byte for byte */
  Member want = fmt_member("csr");
  assert_int_equal(want.n, 131);
  zip_file_t *f = zip_fopen(b, "format.npy", 0);
  assert_non_null(f);
  uint8_t got[140];
  assert_int_equal(zip_fread(f, got, sizeof got), 131);
  zip_fclose(f);
  assert_memory_equal(got, want.p, 131);
  free(want.p);
  zip_discard(a);
  zip_discard(b);
  zip_error_fini(&ze);
  free(out);
  qv_sparse_reset(&t);
  free(ref);
}

static void test_paths_and_fd(void **state) {
  (void)state;
  size_t size;
  uint8_t *ref = csr_zip(&size, true);
  QvSparseTensor t, back;
  QvError err;
  assert_int_equal(npz_read_memory(ref, size, &t, &err), QV_OK);
  char path[256];
  snprintf(path, sizeof path, "%s/npz_rt_%d.npz", QV_BINARY_DIR, (int)getpid());
  assert_int_equal(npz_write_path(&t, NULL, path, &err), QV_OK);
  assert_int_equal(npz_read_path(path, &back, &err), QV_OK);
  assert_true(qv_sparse_equal(&t, &back));
  qv_sparse_reset(&back);
  int fd = open(path, O_WRONLY | O_TRUNC);
  assert_true(fd >= 0);
  assert_int_equal(npz_write_fd(&t, NULL, fd, &err), QV_OK);
  close(fd);
  assert_int_equal(npz_read_path(path, &back, &err), QV_OK);
  assert_true(qv_sparse_equal(&t, &back));
  qv_sparse_reset(&back);
  /* deterministic: equal tensors give identical files */
  uint8_t *a, *b;
  size_t na, nb;
  assert_int_equal(npz_write_memory(&t, NULL, &a, &na, &err), QV_OK);
  assert_int_equal(npz_write_memory(&t, NULL, &b, &nb, &err), QV_OK);
  assert_int_equal(na, nb);
  assert_memory_equal(a, b, na);
  free(a);
  free(b);
  unlink(path);
  assert_int_equal(npz_read_path(path, &back, &err), QV_EIO);
  qv_sparse_reset(&t);
  free(ref);
}

/* COO: unsorted entries with a duplicate are read as they are, flagged
 * non-canonical; row and col of different dtypes become int64. */
static void test_coo_entries(void **state) {
  (void)state;
  const int16_t row[4] = {2, 0, 2, 1};
  const int16_t col[4] = {1, 3, 1, 0};
  const int64_t col64[4] = {1, 3, 1, 0};
  const float val[4] = {1, 2, 3, 4};
  for (int mixed = 0; mixed < 2; mixed++) {
    Member m[5] = {npy("row.npy", QV_ARROW_INT16, 4, row),
                   mixed ? npy("col.npy", QV_ARROW_INT64, 4, col64)
                         : npy("col.npy", QV_ARROW_INT16, 4, col),
                   fmt_member("coo"), npy("shape.npy", QV_ARROW_INT64, 2, shape34),
                   npy("data.npy", QV_ARROW_FLOAT32, 4, val)};
    size_t size;
    uint8_t *buf = zip_members(m, 5, false, &size);
    QvSparseTensor t;
    QvError err;
    assert_int_equal(npz_read_memory(buf, size, &t, &err), QV_OK);
    assert_int_equal(t.format, QV_SPARSE_COO);
    assert_int_equal(t.index_type, mixed ? QV_ARROW_INT64 : QV_ARROW_INT16);
    assert_false(t.is_canonical);
    assert_int_equal(t.nnz, 4);
    for (int i = 0; i < 4; i++) {
      assert_int_equal(qv_index_load(t.coords + i * t.coords_strides[0], t.index_type, 0), row[i]);
      assert_int_equal(
          qv_index_load(t.coords + i * t.coords_strides[0] + t.coords_strides[1], t.index_type, 0),
          col[i]);
    }
    QvTensor dense;
    assert_int_equal(qv_sparse_to_dense(&t, NULL, &dense, &err), QV_OK);
    float v;
    int64_t at[2] = {2, 1};
    double d;
    assert_int_equal(qv_tensor_get_double(&dense, at, &d, &err), QV_OK);
    v = (float)d;
    assert_true(v == 4.0f); /* duplicates sum, as in SciPy */
    qv_tensor_reset(&dense);
    /* written back as it is */
    uint8_t *out;
    size_t n;
    assert_int_equal(npz_write_memory(&t, NULL, &out, &n, &err), QV_OK);
    QvSparseTensor back;
    assert_int_equal(npz_read_memory(out, n, &back, &err), QV_OK);
    assert_true(qv_sparse_equal(&t, &back));
    assert_int_equal(qv_index_load(back.coords, back.index_type, 0), 2);
    qv_sparse_reset(&back);
    free(out);
    qv_sparse_reset(&t);
    free(buf);
  }
}

static void test_writer_refuses(void **state) {
  (void)state;
  const int64_t shape[3] = {2, 3, 4};
  QvTensor dense;
  QvError err;
  assert_int_equal(qv_tensor_alloc(&dense, QV_ARROW_FLOAT64, 3, shape, NULL, false, NULL, &err), QV_OK);
  fill_dense(&dense);
  QvSparseTensor s;
  uint8_t *out = (uint8_t *)"x";
  size_t n = 1;
  assert_int_equal(qv_sparse_from_dense(&dense, QV_SPARSE_CSF, NULL, &s, &err), QV_OK);
  assert_int_equal(npz_write_memory(&s, NULL, &out, &n, &err), QV_EINVAL);
  assert_non_null(strstr(err.message, "--to=coo"));
  assert_null(out);
  assert_int_equal(n, 0);
  qv_sparse_reset(&s);
  assert_int_equal(qv_sparse_from_dense(&dense, QV_SPARSE_COO, NULL, &s, &err), QV_OK);
  assert_int_equal(npz_write_memory(&s, NULL, &out, &n, &err), QV_EINVAL);
  assert_non_null(strstr(err.message, "3 dimensions"));
  qv_sparse_reset(&s);
  qv_tensor_reset(&dense);
  const int64_t shape2[2] = {3, 3};
  assert_int_equal(qv_tensor_alloc(&dense, QV_ARROW_FLOAT16, 2, shape2, NULL, false, NULL, &err), QV_OK);
  assert_int_equal(qv_sparse_from_dense(&dense, QV_SPARSE_CSR, NULL, &s, &err), QV_OK);
  /* float16 is written as SciPy's save_npz writes it (data.npy '<f2', in
   * the host's byte order as NumPy does: '>f2' on a big-endian host) */
  assert_int_equal(npz_write_memory(&s, NULL, &out, &n, &err), QV_OK);
  const char *descr = QV_HOST_BIG_ENDIAN ? "'descr': '>f2'" : "'descr': '<f2'";
  bool f2 = false;
  for (size_t k = 0; k + 14 <= n && !f2; k++) f2 = memcmp(out + k, descr, 14) == 0;
  assert_true(f2);
  free(out);
  out = NULL;
  qv_sparse_reset(&s);
  qv_tensor_reset(&dense);
}

/* ---- hostile archives */

static void test_format_member(void **state) {
  (void)state;
  struct {
    const char *dict;
    const char *data;
    size_t n;
    const char *needle;
  } cases[] = {
      {"{'descr': '|S3', 'fortran_order': False, 'shape': (), }", "bsr", 3, "'bsr' is not supported"},
      {"{'descr': '|S3', 'fortran_order': False, 'shape': (1,), }", "csr", 3, "'shape' must be ()"},
      {"{'descr': '<i4', 'fortran_order': False, 'shape': (), }", "csr\0", 4, "expected a string"},
      {"{'descr': '|S3', 'fortran_order': False, 'shape': (), }", "csrx", 4, "data size"},
      {"{'descr': '|S3', 'fortran_order': False, 'shape': (), 'x': 1}", "csr", 3, "unexpected"},
      {"{'descr': '|S3', 'fortran_order': False}", "csr", 3, "missing key 'shape'"},
      {"{'descr': '|S4', 'fortran_order': False, 'shape': (), }", "c\0sr", 4, "NUL inside"},
      {"{'descr': '|S3', 'fortran_order': False, 'shape': (), }", "c\ns", 3, "not printable"},
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    Member m[5] = {npy("indices.npy", QV_ARROW_INT32, 4, csr_idx),
                   npy("indptr.npy", QV_ARROW_INT32, 4, csr_ptr),
                   raw_npy("format.npy", cases[c].dict, cases[c].data, cases[c].n),
                   npy("shape.npy", QV_ARROW_INT64, 2, shape34),
                   npy("data.npy", QV_ARROW_FLOAT64, 4, csr_val)};
    size_t size;
    uint8_t *buf = zip_members(m, 5, c % 2 == 0, &size);
    expect_reject(buf, size, cases[c].needle);
    free(buf);
  }
  /* accepted spellings: unicode (as np.array('csr')), NUL-padded bytes */
  const uint8_t u32[12] = {'c', 0, 0, 0, 's', 0, 0, 0, 'c', 0, 0, 0};
  const struct {
    const char *dict;
    const void *data;
    size_t n;
  } ok[] = {{"{'descr': '<U3', 'fortran_order': False, 'shape': (), }", u32, 12},
            {"{'shape': (), 'fortran_order': False, 'descr': '|S5', }", "csc\0\0", 5}};
  for (size_t c = 0; c < 2; c++) {
    Member m[5] = {npy("indices.npy", QV_ARROW_INT32, 4, (const int32_t[4]){1, 2, 0, 2}),
                   npy("indptr.npy", QV_ARROW_INT32, 5, (const int32_t[5]){0, 1, 2, 2, 4}),
                   raw_npy("format.npy", ok[c].dict, ok[c].data, ok[c].n),
                   npy("shape.npy", QV_ARROW_INT64, 2, shape34),
                   npy("data.npy", QV_ARROW_FLOAT64, 4, csr_val)};
    size_t size;
    uint8_t *buf = zip_members(m, 5, false, &size);
    QvSparseTensor t;
    QvError err;
    QvStatus st = npz_read_memory(buf, size, &t, &err);
    if (st) fail_msg("spelling %zu: %s", c, err.message);
    assert_int_equal(t.format, QV_SPARSE_CSC);
    qv_sparse_reset(&t);
    free(buf);
  }
}

static void test_members(void **state) {
  (void)state;
  size_t size;
  QvError err;
  /* missing */
  {
    Member m[4] = {npy("indices.npy", QV_ARROW_INT32, 4, csr_idx),
                   npy("indptr.npy", QV_ARROW_INT32, 4, csr_ptr), fmt_member("csr"),
                   npy("data.npy", QV_ARROW_FLOAT64, 4, csr_val)};
    uint8_t *buf = zip_members(m, 4, false, &size);
    expect_reject(buf, size, "member shape.npy is missing");
    free(buf);
  }
  /* duplicate (a renamed extra member) */
  {
    Member m[6] = {npy("indices.npy", QV_ARROW_INT32, 4, csr_idx),
                   npy("indptr.npy", QV_ARROW_INT32, 4, csr_ptr), fmt_member("csr"),
                   npy("shape.npy", QV_ARROW_INT64, 2, shape34),
                   npy("data.npy", QV_ARROW_FLOAT64, 4, csr_val),
                   npy("dataX.npy", QV_ARROW_FLOAT64, 4, csr_val)};
    uint8_t *buf = zip_members(m, 6, false, &size);
    assert_int_equal(patch(buf, size, "dataX.npy", "data.npyX"), 2);
    /* "data.npyX" is an unknown member: ignored */
    QvSparseTensor t;
    assert_int_equal(npz_read_memory(buf, size, &t, &err), QV_OK);
    qv_sparse_reset(&t);
    free(buf);
  }
  {
    Member m[6] = {npy("indices.npy", QV_ARROW_INT32, 4, csr_idx),
                   npy("indptr.npy", QV_ARROW_INT32, 4, csr_ptr), fmt_member("csr"),
                   npy("shape.npy", QV_ARROW_INT64, 2, shape34),
                   npy("data.npy", QV_ARROW_FLOAT64, 4, csr_val),
                   npy("dat2.npy", QV_ARROW_FLOAT64, 4, csr_val)};
    uint8_t *buf = zip_members(m, 6, false, &size);
    assert_int_equal(patch(buf, size, "dat2.npy", "data.npy"), 2);
    /* libzip refuses duplicate names itself ("File already exists"); the
     * reader's own check names the member otherwise */
    QvSparseTensor t;
    assert_int_equal(npz_read_memory(buf, size, &t, &err), QV_EINVAL);
    assert_true(strstr(err.message, "already exists") != NULL ||
                strstr(err.message, "member data.npy appears twice") != NULL);
    free(buf);
  }
  /* wrong dtypes, lengths and dimensions */
  {
    const float fptr[4] = {0, 2, 2, 4};
    Member m[5] = {npy("indices.npy", QV_ARROW_INT32, 4, csr_idx),
                   npy("indptr.npy", QV_ARROW_FLOAT32, 4, fptr), fmt_member("csr"),
                   npy("shape.npy", QV_ARROW_INT64, 2, shape34),
                   npy("data.npy", QV_ARROW_FLOAT64, 4, csr_val)};
    uint8_t *buf = zip_members(m, 5, false, &size);
    expect_reject(buf, size, "indptr.npy has dtype float32, expected an integer type");
    free(buf);
  }
  {
    Member m[5] = {npy("indices.npy", QV_ARROW_INT32, 4, csr_idx),
                   npy("indptr.npy", QV_ARROW_INT32, 3, csr_ptr), fmt_member("csr"),
                   npy("shape.npy", QV_ARROW_INT64, 2, shape34),
                   npy("data.npy", QV_ARROW_FLOAT64, 4, csr_val)};
    uint8_t *buf = zip_members(m, 5, false, &size);
    expect_reject(buf, size, "indptr.npy holds 3 entries, expected 4");
    free(buf);
  }
  {
    Member m[5] = {npy("indices.npy", QV_ARROW_INT32, 4, csr_idx),
                   npy("indptr.npy", QV_ARROW_INT32, 4, csr_ptr), fmt_member("csr"),
                   npy("shape.npy", QV_ARROW_INT64, 2, shape34),
                   raw_npy("data.npy", "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 2), }",
                           csr_val, sizeof csr_val)};
    uint8_t *buf = zip_members(m, 5, false, &size);
    expect_reject(buf, size, "data.npy has 2 dimensions, expected 1");
    free(buf);
  }
  {
    const int64_t neg[2] = {3, -4};
    Member m[5] = {npy("indices.npy", QV_ARROW_INT32, 4, csr_idx),
                   npy("indptr.npy", QV_ARROW_INT32, 4, csr_ptr), fmt_member("csr"),
                   npy("shape.npy", QV_ARROW_INT64, 2, neg),
                   npy("data.npy", QV_ARROW_FLOAT64, 4, csr_val)};
    uint8_t *buf = zip_members(m, 5, false, &size);
    expect_reject(buf, size, "shape.npy entry 1 is negative");
    free(buf);
  }
  {
    const int32_t bad_idx[4] = {1, 3, 0, 4};
    Member m[5] = {npy("indices.npy", QV_ARROW_INT32, 4, bad_idx),
                   npy("indptr.npy", QV_ARROW_INT32, 4, csr_ptr), fmt_member("csr"),
                   npy("shape.npy", QV_ARROW_INT64, 2, shape34),
                   npy("data.npy", QV_ARROW_FLOAT64, 4, csr_val)};
    uint8_t *buf = zip_members(m, 5, true, &size);
    expect_reject(buf, size, "4 at position 3 (row 2) is out of range [0, 4)");
    free(buf);
  }
  {
    /* trailing bytes after a member's array */
    Member d = npy("data.npy", QV_ARROW_FLOAT64, 4, csr_val);
    uint8_t *p = realloc(d.p, d.n + 8);
    assert_non_null(p);
    memset(p + d.n, 0, 8);
    d.p = p;
    d.n += 8;
    Member m[5] = {npy("indices.npy", QV_ARROW_INT32, 4, csr_idx),
                   npy("indptr.npy", QV_ARROW_INT32, 4, csr_ptr), fmt_member("csr"),
                   npy("shape.npy", QV_ARROW_INT64, 2, shape34), d};
    uint8_t *buf = zip_members(m, 5, true, &size);
    expect_reject(buf, size, "data.npy has 8 bytes after its array");
    free(buf);
  }
  /* COO with more entries than cells */
  {
    const int8_t rc[13] = {0};
    double v[13] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1};
    Member m[5] = {npy("row.npy", QV_ARROW_INT8, 13, rc), npy("col.npy", QV_ARROW_INT8, 13, rc),
                   fmt_member("coo"), npy("shape.npy", QV_ARROW_INT64, 2, shape34),
                   npy("data.npy", QV_ARROW_FLOAT64, 13, v)};
    uint8_t *buf = zip_members(m, 5, false, &size);
    expect_reject(buf, size, "more than the 12 cells");
    free(buf);
  }
  /* not a zip at all; empty input */
  expect_reject((const uint8_t *)"\x93NUMPY not a zip archive at all, no", 36, "not a valid zip");
  expect_reject((const uint8_t *)"", 0, "not a valid zip");
}

static void test_bombs_and_corruption(void **state) {
  (void)state;
  size_t size;
  /* data.npy inflates to 8 MiB of zeros while the shape allows 4 values */
  double *zeros = calloc(1 << 20, sizeof *zeros);
  assert_non_null(zeros);
  Member m[5] = {npy("indices.npy", QV_ARROW_INT32, 4, csr_idx),
                 npy("indptr.npy", QV_ARROW_INT32, 4, csr_ptr), fmt_member("csr"),
                 npy("shape.npy", QV_ARROW_INT64, 2, shape34),
                 npy("data.npy", QV_ARROW_FLOAT64, 1 << 20, zeros)};
  free(zeros);
  uint8_t *buf = zip_members(m, 5, false, &size);
  assert_true(size < 100000);
  expect_reject(buf, size, "member data.npy declares 8388736 bytes, more than the 65580");
  free(buf);

  /* a CRC error in a stored member's data: found when asked for (a
   * zero-copy read touches no byte of the data otherwise), with every
   * thread count */
  buf = csr_zip(&size, true);
  double four = 4;
  uint8_t *at = find(buf, size, &four, 8);
  assert_non_null(at);
  at[7] ^= 0x01;
  for (int threads = 0; threads <= 2; threads++) {
    QvNpzReadOptions crc = {.struct_size = sizeof crc, .threads = threads, .verify_crc = true};
    expect_reject_opts(buf, size, &crc, "member data.npy: CRC-32");
  }
  {
    QvSparseTensor t;
    QvError err;
    assert_int_equal(npz_read_memory(buf, size, &t, &err), QV_OK);
    double last;
    memcpy(&last, (const uint8_t *)t.values + 24, 8);
    assert_true(last != 4.0); /* the flipped bit, as documented */
    qv_sparse_reset(&t);
  }
  free(buf);
  /* deflated members' CRCs are always checked: the CRC recorded (central
   * directory and local header alike) made wrong */
  buf = csr_zip(&size, false);
  {
    QvZipArchive z;
    QvError err;
    assert_int_equal(qvi_zip_open(&z, buf, size, &err), QV_OK);
    const QvZipEntry *e = NULL;
    for (size_t i = 0; i < z.count; i++)
      if (z.entries[i].name_len == 8 && memcmp(z.entries[i].name, "data.npy", 8) == 0)
        e = &z.entries[i];
    assert_non_null(e);
    uint8_t old[4], wrong[4];
    uint32_t bad = e->crc ^ 0x100u;
    for (int k = 0; k < 4; k++) {
      old[k] = (uint8_t)(e->crc >> (8 * k));
      wrong[k] = (uint8_t)(bad >> (8 * k));
    }
    uint8_t *local = buf + e->header_offset;
    assert_memory_equal(local + 14, old, 4);
    memcpy(local + 14, wrong, 4);
    uint8_t *cd = NULL;
    for (size_t i = 0; i + 4 <= size; i++)
      if (memcmp(buf + i, "PK\x01\x02", 4) == 0) cd = buf + i; /* the last: data.npy */
    assert_memory_equal(cd + 16, old, 4);
    memcpy(cd + 16, wrong, 4);
    qvi_zip_close(&z);
    expect_reject(buf, size, "member data.npy: CRC-32");
  }
  free(buf);

  /* a central directory claiming a larger uncompressed size than the local
   * header and the data (checked against the deflate limit, or libzip's
   * consistency check) */
  buf = csr_zip(&size, false);
  /* the last central directory entry is data.npy: its sizes sit at +20/+24 */
  uint8_t *cd = NULL;
  for (size_t i = 0; i + 4 <= size; i++)
    if (memcmp(buf + i, "PK\x01\x02", 4) == 0) cd = buf + i;
  assert_non_null(cd);
  uint32_t usize;
  memcpy(&usize, cd + 24, 4);
  if (usize != 0xFFFFFFFFu) {
    usize += 8;
    memcpy(cd + 24, &usize, 4);
    QvSparseTensor t;
    QvError err;
    assert_int_not_equal(npz_read_memory(buf, size, &t, &err), QV_OK);
    assert_non_null(strstr(err.message, "npz"));
  }
  free(buf);

  /* a compressed size larger than the archive (its inflated size then
   * passes the ratio check): refused before anything is allocated */
  buf = csr_zip(&size, false);
  cd = NULL;
  for (size_t i = 0; i + 4 <= size; i++)
    if (memcmp(buf + i, "PK\x01\x02", 4) == 0) cd = buf + i;
  assert_non_null(cd);
  const uint32_t lie[2] = {0x7FFFFFF0u, 0x7FFFFFF0u}; /* compressed, uncompressed */
  memcpy(cd + 20, lie, sizeof lie);
  {
    QvSparseTensor t;
    QvError err;
    assert_int_not_equal(npz_read_memory(buf, size, &t, &err), QV_OK);
    assert_non_null(strstr(err.message, "npz"));
  }
  free(buf);

  /* every truncation of a valid archive fails cleanly */
  buf = csr_zip(&size, false);
  for (size_t n = 0; n < size; n += 7) {
    QvSparseTensor t;
    QvError err;
    QvStatus st = npz_read_memory(buf, n, &t, &err);
    assert_int_not_equal(st, QV_OK);
  }
  free(buf);
}

/* ---- same path: issue 9's data-loss case */

/* A stored (uncompressed, so large) archive of a 300 x 300 CSR matrix with
 * every third entry set: about 360 KB. */
static void make_big(QvSparseTensor *s) {
  const int64_t shape[2] = {300, 300};
  QvTensor dense;
  QvError err;
  void *data;
  assert_int_equal(qv_tensor_alloc(&dense, QV_ARROW_FLOAT64, 2, shape, NULL, false, &data, &err),
                   QV_OK);
  double *d = data;
  for (int64_t i = 0; i < 300 * 300; i++) d[i] = i % 3 == 0 ? (double)i : 0.0;
  assert_int_equal(qv_sparse_from_dense(&dense, QV_SPARSE_CSR, NULL, s, &err), QV_OK);
  qv_tensor_reset(&dense);
}

static const QvNpzWriteOptions kStored = {.stored = true};

/* Read from a path (the archive is mapped, the tensor's buffers are
 * copies), written back to the same path: the same bytes. */
static void test_same_path_roundtrip(void **state) {
  (void)state;
  QvTestDir d;
  qv_test_dir_make(&d, "same.npz");
  QvSparseTensor s, back;
  make_big(&s);
  QvError err;
  assert_int_equal(npz_write_path(&s, &kStored, d.file, &err), QV_OK);
  size_t size;
  uint8_t *before = qv_test_slurp(d.file, &size);
  assert_int_equal(npz_read_path(d.file, &back, &err), QV_OK);
  QvStatus st = npz_write_path(&back, &kStored, d.file, &err);
  if (st) fail_msg("write back: %s", err.message);
  qv_test_file_kept(&d, before, size);
  assert_true(qv_sparse_equal(&s, &back));
  qv_sparse_reset(&back);
  qv_sparse_reset(&s);
  free(before);
  qv_test_dir_remove(&d);
}

/* Child: the disk fills up while the matrix is written back. */
static int fail_write(const char *path) {
  QvSparseTensor back;
  QvError err;
  if (npz_read_path(path, &back, &err)) return 2;
  if (qv_test_fill_disk_at(65536) != 0) return 4;
  QvStatus st = npz_write_path(&back, &kStored, path, &err);
  if (st != QV_EIO || strstr(err.message, "File too large") == NULL) return 5;
  qv_sparse_reset(&back);
  return 0;
}

static void test_failed_write_keeps_file(void **state) {
  (void)state;
  QvTestDir d;
  qv_test_dir_make(&d, "keep.npz");
  QvSparseTensor s;
  make_big(&s);
  QvError err;
  assert_int_equal(npz_write_path(&s, &kStored, d.file, &err), QV_OK);
  qv_test_failed_write_keeps(&d, 65536, fail_write);
  qv_sparse_reset(&s);
  qv_test_dir_remove(&d);
}

/* ---- zero-copy stored members, misaligned ones, lying archives, threads */

static bool inside(const void *p, const uint8_t *buf, size_t size) {
  return (const uint8_t *)p >= buf && (const uint8_t *)p < buf + size;
}

/* quiver's stored archive puts member data on 64-byte boundaries: read from
 * memory the tensor points into the caller's bytes, read from a path into
 * the file's mapping, and stays valid after the source is gone. */
static void test_zero_copy_stored(void **state) {
  (void)state;
  QvSparseTensor s;
  make_big(&s);
  QvNpzWriteOptions o = {.struct_size = sizeof o, .stored = true};
  uint8_t *buf;
  size_t size;
  QvError err;
  assert_int_equal(npz_write_memory(&s, &o, &buf, &size, &err), QV_OK);
  for (int threads = 0; threads <= 2; threads++) {
    QvNpzReadOptions ro = {.struct_size = sizeof ro, .threads = threads};
    QvSparseTensor t;
    QvStatus st = npz_read_memory_opts(buf, size, &ro, &t, &err);
    if (st) fail_msg("%s", err.message);
    assert_true(inside(t.indptr, buf, size));
    assert_true(inside(t.indices, buf, size));
    assert_true(inside(t.values, buf, size));
    assert_int_equal((uintptr_t)(t.values - buf) % 64, 0);
    assert_true(qv_sparse_equal(&s, &t));
    qv_sparse_reset(&t);
  }
  free(buf);
  QvTestDir d;
  qv_test_dir_make(&d, "zc.npz");
  assert_int_equal(npz_write_path(&s, &o, d.file, &err), QV_OK);
  QvSparseTensor t;
  {
    QvSource *src;
    assert_int_equal(qv_source_new_path(&src, d.file, &err), QV_OK);
    QvNpzReadOptions ro = {.struct_size = sizeof ro, .threads = 2, .verify_crc = true};
    QvStatus st = qv_npz_read(src, &ro, &t, NULL, &err);
    qv_source_free(src);
    if (st) fail_msg("%s", err.message);
  }
  assert_true(qv_test_is_mapping_of(t.indptr, d.file));
  assert_true(qv_test_is_mapping_of(t.indices, d.file));
  assert_true(qv_test_is_mapping_of(t.values, d.file));
  assert_true(qv_sparse_equal(&s, &t)); /* the source is freed: the map lives on */
  qv_sparse_reset(&t);
  /* deflated: inflated into the tensor's own buffers */
  assert_int_equal(npz_write_path(&s, NULL, d.file, &err), QV_OK);
  assert_int_equal(npz_read_path(d.file, &t, &err), QV_OK);
  assert_false(qv_test_is_mapping_of(t.values, d.file));
  assert_int_equal((uintptr_t)t.values % 64, 0);
  assert_true(qv_sparse_equal(&s, &t));
  qv_sparse_reset(&t);
  qv_test_dir_remove(&d);
  qv_sparse_reset(&s);
}

/* libzip (like numpy.savez) does not align members: a member whose data
 * is misaligned for its dtype is copied, aligned, and still right. The
 * name of a leading member shifts the others until both indices (int32)
 * and data (float64) are misaligned. */
static void test_misaligned_copied(void **state) {
  (void)state;
  const double val[4] = {1.5, -2.25, 3.125, 4.0625};
  bool done = false;
  for (int pad = 1; pad <= 16 && !done; pad++) {
    char name[32];
    memset(name, 'x', sizeof name);
    snprintf(name + pad, sizeof name - (size_t)pad, ".bin");
    const uint8_t one = 1;
    Member m[6] = {raw_npy(name, "{'descr': '|u1', 'fortran_order': False, 'shape': (1,), }", &one, 1),
                   npy("indices.npy", QV_ARROW_INT32, 4, csr_idx),
                   npy("indptr.npy", QV_ARROW_INT32, 4, csr_ptr), fmt_member("csr"),
                   npy("shape.npy", QV_ARROW_INT64, 2, shape34),
                   npy("data.npy", QV_ARROW_FLOAT64, 4, val)};
    m[0].name = name;
    size_t size;
    uint8_t *buf = zip_members(m, 6, true, &size);
    uint8_t *at_val = find(buf, size, val, sizeof val), *at_idx = find(buf, size, csr_idx, 16);
    assert_non_null(at_val);
    assert_non_null(at_idx);
    if ((uintptr_t)at_val % 8 == 0 || (uintptr_t)at_idx % 4 == 0) {
      free(buf);
      continue;
    }
    done = true;
    for (int threads = 0; threads <= 2; threads++) {
      QvNpzReadOptions ro = {.struct_size = sizeof ro, .threads = threads, .verify_crc = true};
      QvSparseTensor t;
      QvError err;
      QvStatus st = npz_read_memory_opts(buf, size, &ro, &t, &err);
      if (st) fail_msg("%s", err.message);
      assert_false(inside(t.values, buf, size));
      assert_false(inside(t.indices, buf, size));
      assert_int_equal((uintptr_t)t.values % 64, 0);
      assert_int_equal((uintptr_t)t.indices % 64, 0);
      assert_memory_equal(t.values, val, sizeof val);
      assert_memory_equal(t.indices, csr_idx, sizeof csr_idx);
      assert_memory_equal(t.indptr, csr_ptr, sizeof csr_ptr);
      qv_sparse_reset(&t);
      /* keep_misaligned: views of the archive, misaligned, read right */
      ro.keep_misaligned = true;
      st = npz_read_memory_opts(buf, size, &ro, &t, &err);
      if (st) fail_msg("%s", err.message);
      assert_true(t.values == at_val && t.indices == at_idx);
      assert_memory_equal(t.values, val, sizeof val);
      assert_memory_equal(t.indices, csr_idx, sizeof csr_idx);
      /* the caller's bytes: no seal, the writer validates */
      assert_false(qvi_sp_sealed(&t));
      QvSink *k;
      assert_int_equal(qv_sink_new_memory(&k, &err), QV_OK);
      assert_int_equal(qv_sparse_write(&t, k, NULL, &err), QV_OK);
      assert_int_equal(qv_sink_finish(k, &err), QV_OK);
      uint8_t *ipc;
      size_t ipc_size;
      assert_int_equal(qv_sink_memory_take(k, &ipc, &ipc_size, &err), QV_OK);
      qv_sink_free(k);
      QvSource *src;
      QvSparseTensor back;
      assert_int_equal(qv_source_new_memory(&src, ipc, ipc_size, NULL, &err), QV_OK);
      assert_int_equal(qv_sparse_read(src, 0, NULL, &back, &err), QV_OK);
      assert_true(qv_sparse_equal(&t, &back));
      qv_sparse_reset(&back);
      qv_source_free(src);
      free(ipc);
      qv_sparse_reset(&t);
    }
    free(buf);
  }
  assert_true(done);
}

/* Writes t as an IPC SparseTensor message; returns the writer's status and
 * whether it took the sealed path (no second validation). */
static QvStatus ipc_write(const QvSparseTensor *t, bool *sealed_path) {
  uint64_t before = qvi_path_count(QV_PATH_SPARSE_WRITE_SEALED);
  QvSink *k;
  QvError err;
  assert_int_equal(qv_sink_new_memory(&k, &err), QV_OK);
  QvStatus st = qv_sparse_write(t, k, NULL, &err);
  qv_sink_free(k);
  *sealed_path = qvi_path_count(QV_PATH_SPARSE_WRITE_SEALED) != before;
  return st;
}

/* A tensor the reader validated in full over buffers no caller writes (a
 * mapped file, or its own copies) is sealed, and the IPC writer skips its
 * second validation; one the caller edited (another index buffer, nnz), or
 * whose index buffers are views of the caller's bytes, is validated again,
 * and refused when wrong. */
static void test_sealed_write(void **state) {
  (void)state;
  QvSparseTensor s;
  make_big(&s);
  QvError err;
  bool sealed;
  /* a conversion's result is sealed: written without a second scan; the
   * caller's view of the same buffers is validated on write */
  assert_true(qvi_sp_sealed(&s));
  assert_int_equal(ipc_write(&s, &sealed), QV_OK);
  assert_true(sealed);
  QvSparseTensor view;
  QvSparseDesc vd = {.format = s.format, .value_type = s.value_type, .index_type = s.index_type,
                     .indptr_type = s.indptr_type, .ndim = 2, .shape = s.shape, .nnz = s.nnz,
                     .values = s.values, .indptr = s.indptr, .indices = s.indices};
  assert_int_equal(qv_sparse_init(&view, &vd, &err), QV_OK);
  assert_false(qvi_sp_sealed(&view));
  assert_int_equal(ipc_write(&view, &sealed), QV_OK);
  assert_false(sealed);
  qv_sparse_reset(&view);
  /* a caller vouching that nothing writes the buffers (the public way an
   * edge reader hands over its own) gets the verdict kept, on any threads */
  vd.immutable = true;
  for (int threads = 0; threads <= 3; threads++) {
    vd.threads = threads;
    assert_int_equal(qv_sparse_init(&view, &vd, &err), QV_OK);
    assert_true(qvi_sp_sealed(&view));
    assert_int_equal(ipc_write(&view, &sealed), QV_OK);
    assert_true(sealed);
    qv_sparse_reset(&view);
  }
  /* ... but only what it validated: an invalid one is refused, not sealed */
  int64_t *swapped = malloc((size_t)s.nnz * sizeof *swapped);
  assert_non_null(swapped);
  assert_int_equal(s.index_type, QV_ARROW_INT64);
  memcpy(swapped, s.indices, (size_t)s.nnz * sizeof *swapped);
  int64_t row0 = ((const int64_t *)s.indptr)[1]; /* first row's end: rows hold 2+ entries */
  assert_true(row0 >= 2);
  int64_t tmp = swapped[0];
  swapped[0] = swapped[1];
  swapped[1] = tmp;
  vd.indices = swapped;
  assert_int_equal(qv_sparse_init(&view, &vd, &err), QV_EINVAL);
  vd.indices = s.indices;
  free(swapped);
  vd.threads = QV_SPARSE_MAX_THREADS + 1;
  assert_int_equal(qv_sparse_init(&view, &vd, &err), QV_EARG);
  assert_non_null(strstr(err.message, "threads"));
  vd.threads = -1;
  assert_int_equal(qv_sparse_init(&view, &vd, &err), QV_EARG);
  vd.threads = 0;
  vd.immutable = false;
  /* COO vouched immutable is sealed too; CSF never is (validated each time) */
  QvSparseTensor coo, csf;
  assert_int_equal(qv_sparse_convert(&s, QV_SPARSE_COO, NULL, &coo, &err), QV_OK);
  QvSparseDesc cd = {.format = QV_SPARSE_COO, .value_type = coo.value_type,
                     .index_type = coo.index_type, .ndim = 2, .shape = coo.shape,
                     .nnz = coo.nnz, .values = coo.values, .coords = coo.coords,
                     .coords_strides = coo.coords_strides, .is_canonical = coo.is_canonical,
                     .immutable = true};
  assert_int_equal(qv_sparse_init(&view, &cd, &err), QV_OK);
  assert_true(qvi_sp_sealed(&view));
  assert_int_equal(ipc_write(&view, &sealed), QV_OK);
  assert_true(sealed);
  qv_sparse_reset(&view);
  assert_int_equal(qv_sparse_convert(&s, QV_SPARSE_CSF, NULL, &csf, &err), QV_OK);
  QvSparseDesc fd = {.format = QV_SPARSE_CSF, .value_type = csf.value_type,
                     .index_type = csf.index_type, .indptr_type = csf.indptr_type, .ndim = 2,
                     .shape = csf.shape, .nnz = csf.nnz, .values = csf.values,
                     .axis_order = csf.axis_order,
                     .csf_indptr = (const void *const *)csf.csf_indptr,
                     .csf_indptr_len = csf.csf_indptr_len,
                     .csf_indices = (const void *const *)csf.csf_indices,
                     .csf_indices_len = csf.csf_indices_len, .immutable = true};
  assert_int_equal(qv_sparse_init(&view, &fd, &err), QV_OK);
  assert_false(qvi_sp_sealed(&view));
  qv_sparse_reset(&view);
  qv_sparse_reset(&coo);
  qv_sparse_reset(&csf);
  QvTestDir d;
  qv_test_dir_make(&d, "sealed.npz");
  assert_int_equal(npz_write_path(&s, &kStored, d.file, &err), QV_OK);
  QvSparseTensor t;
  assert_int_equal(npz_read_path(d.file, &t, &err), QV_OK);
  assert_true(qv_test_is_mapping_of(t.indices, d.file));
  assert_true(qvi_sp_sealed(&t));
  assert_int_equal(ipc_write(&t, &sealed), QV_OK);
  assert_true(sealed);
  /* the caller's edits break the seal */
  int64_t n = t.nnz;
  size_t w = qv_arrow_type_size(t.index_type); /* all nnz entries: validation may read them all */
  uint8_t *bad = malloc((size_t)n * w);
  assert_non_null(bad);
  memcpy(bad, t.indices, (size_t)n * w);
  qvi_st_bits(bad + w, w, (uint64_t)1 << 30); /* column index outside the shape */
  QvSparseTensor u = t;
  u.indices = bad;
  assert_false(qvi_sp_sealed(&u));
  assert_int_equal(ipc_write(&u, &sealed), QV_EINVAL);
  assert_false(sealed);
  u = t;
  u.nnz = n - 1; /* indptr now ends past nnz */
  assert_int_equal(ipc_write(&u, &sealed), QV_EINVAL);
  assert_false(sealed);
  u = t;
  int64_t shape[2] = {t.shape[0], 2};
  u.shape = shape; /* columns out of range */
  assert_int_equal(ipc_write(&u, &sealed), QV_EINVAL);
  assert_false(sealed);
  free(bad);
  qv_sparse_reset(&t);
  /* from the caller's bytes: stored members are views of them, unsealed;
   * deflated ones are the reader's own copies, sealed */
  uint8_t *buf;
  size_t size;
  assert_int_equal(npz_write_memory(&s, &kStored, &buf, &size, &err), QV_OK);
  assert_int_equal(npz_read_memory(buf, size, &t, &err), QV_OK);
  assert_true(inside(t.indices, buf, size));
  assert_false(qvi_sp_sealed(&t));
  assert_int_equal(ipc_write(&t, &sealed), QV_OK);
  assert_false(sealed);
  qv_sparse_reset(&t);
  free(buf);
  assert_int_equal(npz_write_memory(&s, NULL, &buf, &size, &err), QV_OK);
  assert_int_equal(npz_read_memory(buf, size, &t, &err), QV_OK);
  assert_true(qvi_sp_sealed(&t));
  assert_int_equal(ipc_write(&t, &sealed), QV_OK);
  assert_true(sealed);
  qv_sparse_reset(&t);
  free(buf);
  qv_test_dir_remove(&d);
  qv_sparse_reset(&s);
}

/* The local header of the member named `name` in buf (a quiver archive). */
static uint8_t *local_of(uint8_t *buf, size_t size, const char *name) {
  QvZipArchive z;
  QvError err;
  assert_int_equal(qvi_zip_open(&z, buf, size, &err), QV_OK);
  uint8_t *p = NULL;
  for (size_t i = 0; i < z.count; i++)
    if (z.entries[i].name_len == strlen(name) && memcmp(z.entries[i].name, name, strlen(name)) == 0)
      p = buf + z.entries[i].header_offset;
  qvi_zip_close(&z);
  assert_non_null(p);
  return p;
}

static void put32(uint8_t *p, uint32_t v) {
  for (int k = 0; k < 4; k++) p[k] = (uint8_t)(v >> (8 * k));
}

/* Archives whose zip structure lies are refused before any member is read:
 * QV_EINVAL with a message naming the member. */
static void test_lying_members(void **state) {
  (void)state;
  QvSparseTensor s;
  make_big(&s);
  QvNpzWriteOptions o = {.struct_size = sizeof o, .stored = true};
  uint8_t *ref;
  size_t size;
  QvError err;
  assert_int_equal(npz_write_memory(&s, &o, &ref, &size, &err), QV_OK);
  uint8_t *buf = malloc(size);
  assert_non_null(buf);
  static const struct {
    int field; /* offset in the local header */
    const char *needle;
  } local_lies[] = {{14, "data.npy: local header disagrees with the central directory (CRC)"},
                    {18, "local header disagrees with the central directory (compressed size)"},
                    {22, "local header disagrees with the central directory (size)"},
                    {8, "local header disagrees with the central directory (method)"},
                    {30, "local header disagrees with the central directory (name)"}};
  for (size_t c = 0; c < sizeof local_lies / sizeof local_lies[0]; c++) {
    memcpy(buf, ref, size);
    uint8_t *l = local_of(buf, size, "data.npy");
    l[local_lies[c].field] ^= 0x08;
    expect_reject_opts(buf, size, NULL, local_lies[c].needle);
  }
  /* a member whose sizes (everywhere: both headers) run past the end */
  memcpy(buf, ref, size);
  {
    uint8_t *l = local_of(buf, size, "data.npy");
    uint8_t *cd = NULL;
    for (size_t i = 0; i + 4 <= size; i++)
      if (memcmp(buf + i, "PK\x01\x02", 4) == 0) cd = buf + i;
    assert_non_null(cd);
    assert_memory_equal(cd + 46, "data.npy", 8);
    uint32_t big = (uint32_t)size * 2;
    put32(l + 18, big);
    put32(l + 22, big);
    put32(cd + 20, big);
    put32(cd + 24, big);
    expect_reject_opts(buf, size, NULL, "member data.npy declares");
    expect_reject_opts(buf, size, NULL, "past the end of the members");
  }
  /* a truncated central directory, an end record pointing past it */
  memcpy(buf, ref, size);
  {
    uint8_t *end = buf + size - 22;
    assert_memory_equal(end, "PK\x05\x06", 4);
    put32(end + 16, (uint32_t)size);
    expect_reject_opts(buf, size, NULL, "not a valid zip archive");
  }
  free(buf);

  /* overlapping members: data.npy's local header and bytes lie inside the
   * data of another member, junk.bin (the overlapping zip bomb's trick) */
  {
    QvZipArchive z;
    assert_int_equal(qvi_zip_open(&z, ref, size, &err), QV_OK);
    const QvZipEntry *data = NULL;
    for (size_t i = 0; i < z.count; i++)
      if (z.entries[i].name_len == 8 && memcmp(z.entries[i].name, "data.npy", 8) == 0)
        data = &z.entries[i];
    assert_non_null(data);
    size_t member = (size_t)(data->data_offset - data->header_offset + data->csize);
    /* out: the members before data.npy, junk.bin holding data.npy's local
     * header and bytes, then a central directory naming both */
    size_t head = (size_t)data->header_offset;
    uint8_t *out = calloc(1, size + member + 4096);
    assert_non_null(out);
    memcpy(out, ref, head);
    QvZipWriteEntry junk = {.name = "junk.bin", .method = QV_ZIP_STORED, .csize = member,
                            .usize = member, .offset = head};
    junk.crc = (uint32_t)crc32(0, ref + data->header_offset, (uInt)member);
    size_t n = head + qvi_zip_local_header(out + head, &junk, 0);
    uint64_t inner = n;
    memcpy(out + n, ref + data->header_offset, member);
    n += member;
    size_t cd = n;
    for (size_t i = 0; i < z.count; i++) {
      const QvZipEntry *e = &z.entries[i];
      char name[32];
      memcpy(name, e->name, e->name_len);
      name[e->name_len] = '\0';
      QvZipWriteEntry w = {.name = name, .method = e->method, .crc = e->crc, .csize = e->csize,
                           .usize = e->usize, .offset = e == data ? inner : e->header_offset};
      n += qvi_zip_central_entry(out + n, &w);
    }
    n += qvi_zip_central_entry(out + n, &junk);
    n += qvi_zip_end_records(out + n, z.count + 1, cd, n - cd);
    qvi_zip_close(&z);
    expect_reject_opts(out, n, NULL, "overlap");
    expect_reject_opts(out, n, NULL, "data.npy");
    free(out);
  }
  free(ref);
  qv_sparse_reset(&s);
}

/* The writer's bytes do not depend on its thread count, stored or
 * deflated; the reader gives the same tensor with any. */
static void test_threads_identical(void **state) {
  (void)state;
  QvSparseTensor s;
  make_big(&s);
  const QvSparseFormat kinds[3] = {QV_SPARSE_CSR, QV_SPARSE_CSC, QV_SPARSE_COO};
  for (int k = 0; k < 3; k++) {
    QvSparseTensor t;
    QvError err;
    assert_int_equal(qv_sparse_convert(&s, kinds[k], NULL, &t, &err), QV_OK);
    for (int stored = 0; stored < 2; stored++) {
      uint8_t *one;
      size_t n1;
      QvNpzWriteOptions o1 = {.struct_size = sizeof o1, .stored = stored, .threads = 1};
      assert_int_equal(npz_write_memory(&t, &o1, &one, &n1, &err), QV_OK);
      const int counts[] = {0, 2, 3, 8, 64};
      for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++) {
        uint8_t *many;
        size_t n;
        QvNpzWriteOptions o = {.struct_size = sizeof o, .stored = stored, .threads = counts[c]};
        assert_int_equal(npz_write_memory(&t, &o, &many, &n, &err), QV_OK);
        assert_int_equal(n, n1);
        assert_memory_equal(many, one, n);
        free(many);
        QvNpzReadOptions ro = {.struct_size = sizeof ro, .threads = counts[c]};
        QvSparseTensor back;
        assert_int_equal(npz_read_memory_opts(one, n1, &ro, &back, &err), QV_OK);
        assert_true(qv_sparse_equal(&t, &back));
        qv_sparse_reset(&back);
      }
      free(one);
    }
    qv_sparse_reset(&t);
  }
  qv_sparse_reset(&s);
  /* negative thread counts are caller errors */
  QvNpzWriteOptions bad = {.struct_size = sizeof bad, .threads = -1};
  uint8_t *out;
  size_t n;
  QvError err;
  QvSparseTensor e;
  make_big(&e);
  assert_int_equal(npz_write_memory(&e, &bad, &out, &n, &err), QV_EARG);
  QvNpzReadOptions rbad = {.struct_size = sizeof rbad, .threads = -2};
  QvSparseTensor t;
  assert_int_equal(npz_read_memory_opts((const uint8_t *)"PK", 2, &rbad, &t, &err), QV_EARG);
  qv_sparse_reset(&e);
}

/* Reads path with `threads`; *populates: qv_source_populate calls made,
 * *split: whether validation's index scan was split across threads (and
 * accepted), *advice: the source's advice afterwards. */
static QvStatus read_threads(const char *path, int threads, QvSparseTensor *t, int64_t *populates,
                             bool *split, QvSourceAdvice *advice, QvError *err) {
  QvSource *src;
  assert_int_equal(qv_source_new_path(&src, path, err), QV_OK);
  int64_t p0 = qvi_source_count_populates();
  uint64_t s0 = qvi_path_count(QV_PATH_SPARSE_VALIDATE_THREADS);
  QvNpzReadOptions ro = {.struct_size = sizeof ro, .threads = threads};
  QvStatus st = qv_npz_read(src, &ro, t, NULL, err);
  *populates = qvi_source_count_populates() - p0;
  *split = qvi_path_count(QV_PATH_SPARSE_VALIDATE_THREADS) != s0;
  *advice = qv_source_get_advice(src);
  qv_source_free(src);
  return st;
}

/* A large stored archive read from a path with a pool: its mapping is
 * populated in slices on the pool's threads (not in one call at mapping
 * time), validation's index scan splits across them, and the tensor is
 * the one-thread read's, still a view of the file. An entry out of range deep in
 * indices is refused with the same message either way. */
static void test_large_file_threads(void **state) {
  (void)state;
  const int64_t rows = 4096, cols = 8192, per = 256, nnz = rows * per;
  int32_t *ptr = malloc((size_t)(rows + 1) * 4), *idx = malloc((size_t)nnz * 4);
  double *val = malloc((size_t)nnz * 8);
  for (int64_t r = 0; r <= rows; r++) ptr[r] = (int32_t)(r * per);
  for (int64_t k = 0; k < nnz; k++) {
    idx[k] = (int32_t)((k % per) * (cols / per) + (k / per) % (cols / per));
    val[k] = (double)k;
  }
  const int64_t shape[2] = {rows, cols};
  QvSparseTensor s;
  QvError err;
  assert_int_equal(qv_sparse_init(&s, &(QvSparseDesc){.ndim = 2, .format = QV_SPARSE_CSR,
                                                      .value_type = QV_ARROW_FLOAT64,
                                                      .indptr_type = QV_ARROW_INT32,
                                                      .index_type = QV_ARROW_INT32,
                                                      .shape = shape, .nnz = nnz, .indptr = ptr,
                                                      .indices = idx, .values = val}, &err),
                   QV_OK);
  QvTestDir d;
  qv_test_dir_make(&d, "large.npz");
  assert_int_equal(npz_write_path(&s, &kStored, d.file, &err), QV_OK);
  size_t size;
  uint8_t *bytes = qv_test_slurp(d.file, &size);
  assert_true(size >= ((size_t)8 << 20)); /* past PARALLEL_POPULATE_MIN */
  QvSparseTensor one, two;
  int64_t populates;
  bool split;
  QvSourceAdvice advice;
  assert_int_equal(read_threads(d.file, 1, &one, &populates, &split, &advice, &err), QV_OK);
  assert_int_equal(populates, 0);
  assert_false(split);
  assert_int_equal(advice, QV_SOURCE_ADVICE_POPULATE); /* the whole mapping in one call */
  QvStatus st = read_threads(d.file, 2, &two, &populates, &split, &advice, &err);
  if (st) fail_msg("%s", err.message);
  assert_true(populates >= 2);
  assert_true(split);
  assert_int_equal(advice, QV_SOURCE_ADVICE_NONE);
  assert_true(qv_test_is_mapping_of(two.indices, d.file));
  assert_true(qv_test_is_mapping_of(two.values, d.file));
  assert_true(qv_sparse_equal(&one, &two));
  assert_true(qv_sparse_equal(&s, &two));
  qv_sparse_reset(&one);
  qv_sparse_reset(&two);
  /* a column past the shape three quarters into indices.npy */
  QvZipArchive z;
  assert_int_equal(qvi_zip_open(&z, bytes, size, &err), QV_OK);
  size_t at = 0;
  for (size_t i = 0; i < z.count; i++)
    if (z.entries[i].name_len == 11 && memcmp(z.entries[i].name, "indices.npy", 11) == 0)
      at = (size_t)z.entries[i].data_offset;
  qvi_zip_close(&z);
  assert_true(at > 0);
  at += 10 + (size_t)(bytes[at + 8] | bytes[at + 9] << 8); /* past the .npy header (v1.0) */
  int64_t k = nnz / 4 * 3 + per / 2;
  int32_t past = (int32_t)cols + 5;
  memcpy(bytes + at + 4 * (size_t)k, &past, 4);
  FILE *f = fopen(d.file, "wb");
  assert_non_null(f);
  assert_int_equal(fwrite(bytes, 1, size, f), size);
  assert_int_equal(fclose(f), 0);
  char first[sizeof err.message];
  assert_int_equal(read_threads(d.file, 1, &one, &populates, &split, &advice, &err), QV_EINVAL);
  if (strstr(err.message, "CSR indices: 8197 at position") == NULL ||
      strstr(err.message, "(row 3072) is out of range [0, 8192)") == NULL)
    fail_msg("%s", err.message);
  snprintf(first, sizeof first, "%s", err.message);
  assert_int_equal(read_threads(d.file, 2, &two, &populates, &split, &advice, &err), QV_EINVAL);
  assert_false(split);
  assert_string_equal(err.message, first);
  free(bytes);
  qv_test_dir_remove(&d);
  qv_sparse_reset(&s);
  free(ptr);
  free(idx);
  free(val);
}

/* An empty matrix (no data bytes: the deflate stream is the .npy header's
 * stored block alone, marked final) round-trips both ways. */
static void test_empty_matrix(void **state) {
  (void)state;
  const int64_t shape[2] = {5, 0};
  const int64_t shape2[2] = {4, 6};
  const int64_t *shapes[2] = {shape, shape2};
  for (int k = 0; k < 2; k++) {
    QvTensor dense;
    QvError err;
    assert_int_equal(qv_tensor_alloc(&dense, QV_ARROW_FLOAT64, 2, shapes[k], NULL, true, NULL, &err),
                     QV_OK);
    for (int f = 0; f < 3; f++) {
      const QvSparseFormat kinds[3] = {QV_SPARSE_CSR, QV_SPARSE_CSC, QV_SPARSE_COO};
      QvSparseTensor s;
      assert_int_equal(qv_sparse_from_dense(&dense, kinds[f], NULL, &s, &err), QV_OK);
      assert_int_equal(s.nnz, 0);
      check_roundtrip(&s, &dense, false);
      check_roundtrip(&s, &dense, true);
      qv_sparse_reset(&s);
    }
    qv_tensor_reset(&dense);
  }
}

static void put16(uint8_t *p, uint16_t v) {
  p[0] = (uint8_t)v;
  p[1] = (uint8_t)(v >> 8);
}

static void put64(uint8_t *p, uint64_t v) {
  put32(p, (uint32_t)v);
  put32(p + 4, (uint32_t)(v >> 32));
}

/* The end records of a quiver archive rewritten in their zip64 form (a
 * zip64 end record and its locator before an end record of 0xFFFF...): read
 * alike; a zip64 record of the wrong size, a locator pointing elsewhere and
 * 32-bit escapes without any zip64 record are refused. */
static void test_zip64_end_records(void **state) {
  (void)state;
  size_t size;
  uint8_t *ref = csr_zip(&size, true);
  const uint8_t *end = ref + size - 22;
  assert_memory_equal(end, "PK\x05\x06", 4);
  uint16_t n = (uint16_t)(end[10] | end[11] << 8);
  uint32_t cd_size = (uint32_t)end[12] | (uint32_t)end[13] << 8 | (uint32_t)end[14] << 16 |
                     (uint32_t)end[15] << 24;
  uint32_t cd_offset = (uint32_t)end[16] | (uint32_t)end[17] << 8 | (uint32_t)end[18] << 16 |
                       (uint32_t)end[19] << 24;
  size_t at = size - 22, total = at + 56 + 20 + 22;
  uint8_t *buf = malloc(total);
  assert_non_null(buf);
  for (int c = 0; c < 4; c++) {
    memcpy(buf, ref, at);
    uint8_t *r = buf + at, *l = r + 56, *e = l + 20;
    put32(r, 0x06064b50u);
    put64(r + 4, c == 1 ? 45 : 44);
    put16(r + 12, 45);
    put16(r + 14, 45);
    put32(r + 16, 0);
    put32(r + 20, 0);
    put64(r + 24, n);
    put64(r + 32, n);
    put64(r + 40, cd_size);
    put64(r + 48, cd_offset);
    put32(l, 0x07064b50u);
    put32(l + 4, 0);
    put64(l + 8, c == 2 ? at - 4 : at);
    put32(l + 16, 1);
    memcpy(e, "PK\x05\x06", 4);
    memset(e + 4, 0, 4);
    memset(e + 8, 0xFF, 12);
    put16(e + 20, 0);
    if (c == 3) memset(l, 0, 4); /* no locator: the escapes lead nowhere */
    if (c == 0) {
      QvSparseTensor t;
      QvError err;
      QvStatus st = npz_read_memory(buf, total, &t, &err);
      if (st) fail_msg("zip64 end records: %s", err.message);
      assert_memory_equal(t.values, csr_val, sizeof csr_val);
      qv_sparse_reset(&t);
    } else {
      static const char *const needles[4] = {
          NULL, "zip64 end record does not reach its locator",
          "no zip64 end record where its locator points",
          "zip64 values without a zip64 end record"};
      expect_reject_opts(buf, total, NULL, needles[c]);
    }
  }
  free(buf);
  free(ref);
}

/* numpy.savez to an unseekable stream: zipfile's data descriptors (flag
 * bit 3, CRC and sizes after the data) are read, and checked against the
 * central directory. */
static void test_data_descriptors(void **state) {
  (void)state;
  size_t size;
  uint8_t *buf = qv_test_slurp(QV_SOURCE_DIR "/fuzz/corpus/fuzz_npz/numpy_csr_data_descriptors.npz",
                               &size);
  QvSparseTensor t;
  QvError err;
  QvStatus st = npz_read_memory(buf, size, &t, &err);
  if (st) fail_msg("%s", err.message);
  assert_int_equal(t.nnz, 4);
  qv_sparse_reset(&t);
  QvZipArchive z;
  assert_int_equal(qvi_zip_open(&z, buf, size, &err), QV_OK);
  const QvZipEntry *e = NULL;
  for (size_t i = 0; i < z.count; i++) {
    assert_true(z.entries[i].flags & 8);
    if (z.entries[i].name_len == 8 && memcmp(z.entries[i].name, "data.npy", 8) == 0) e = &z.entries[i];
  }
  assert_non_null(e);
  uint8_t *d = buf + e->data_offset + e->csize;
  assert_memory_equal(d, "PK\x07\x08", 4);
  qvi_zip_close(&z);
  d[4] ^= 0x01; /* the descriptor's CRC */
  expect_reject_opts(buf, size, NULL, "data.npy: data descriptor disagrees with the central directory");
  free(buf);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_roundtrip_types),
      cmocka_unit_test(test_members_as_scipy_writes_them),
      cmocka_unit_test(test_paths_and_fd),
      cmocka_unit_test(test_coo_entries),
      cmocka_unit_test(test_writer_refuses),
      cmocka_unit_test(test_format_member),
      cmocka_unit_test(test_members),
      cmocka_unit_test(test_bombs_and_corruption),
      cmocka_unit_test(test_same_path_roundtrip),
      cmocka_unit_test(test_failed_write_keeps_file),
      cmocka_unit_test(test_unsorted_indices),
      cmocka_unit_test(test_zero_copy_stored),
      cmocka_unit_test(test_misaligned_copied),
      cmocka_unit_test(test_sealed_write),
      cmocka_unit_test(test_lying_members),
      cmocka_unit_test(test_threads_identical),
      cmocka_unit_test(test_large_file_threads),
      cmocka_unit_test(test_empty_matrix),
      cmocka_unit_test(test_zip64_end_records),
      cmocka_unit_test(test_data_descriptors),
  };
  return qv_test_run(tests, NULL, NULL);
}
