/* Hostile index buffers: every rule of qv_sparse_validate, each violation
 * an error naming the buffer and position. Buffers are heap copies of
 * exactly the size nnz and the shape imply, so a read past them fails
 * under AddressSanitizer. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "quiver/advanced.h"
#include "quiver/sparse.h"
#include "sparse/sparse_pool.h"
#include "test_util.h"
#include "util/cpu.h"
#include "util/load.h"
#include "util/pool.h"

static void *heap(const void *src, size_t n) {
  void *p = malloc(n ? n : 1);
  if (n) memcpy(p, src, n);
  return p;
}

static void *pack(const int64_t *v, int64_t n, QvArrowType type) {
  size_t w = qv_arrow_type_size(type);
  uint8_t *out = malloc(n > 0 ? (size_t)n * w : 1);
  for (int64_t i = 0; i < n; i++) {
    uint64_t x = (uint64_t)v[i];
    qvi_st_bits(out + (size_t)i * w, w, x); /* the low bytes, host order */
  }
  return out;
}

static void expect_error(QvStatus st, const QvError *err, QvStatus code, const char *needle) {
  if (st != code || strstr(err->message, needle) == NULL)
    print_error("status %d, message: %s (wanted %d, \"%s\")\n", st, err->message, code, needle);
  assert_int_equal(st, code);
  assert_non_null(strstr(err->message, needle));
}

/* ---- COO */

static QvStatus coo(QvArrowType it, int32_t ndim, const int64_t *shape, int64_t nnz, const int64_t *coords,
                    bool canonical, QvError *err) {
  void *c = pack(coords, nnz * ndim, it);
  void *v = heap((const double[8]){1, 2, 3, 4, 5, 6, 7, 8}, (size_t)nnz * 8);
  QvSparseTensor t;
  QvStatus st = qv_sparse_init(&t, &(QvSparseDesc){.format = QV_SPARSE_COO,
                                                   .value_type = QV_ARROW_FLOAT64, .index_type = it,
                                                   .ndim = ndim, .shape = shape, .nnz = nnz,
                                                   .coords = c, .is_canonical = canonical,
                                                   .values = v}, err);
  if (st == QV_OK) {
    /* anything accepted converts and densifies without trouble */
    QvSparseTensor csf;
    assert_int_equal(qv_sparse_convert(&t, QV_SPARSE_CSF, NULL, &csf, err), QV_OK);
    qv_sparse_reset(&csf);
  } else {
    assert_null(t.private_data);
    assert_null(t.shape);
  }
  qv_sparse_reset(&t);
  free(c);
  free(v);
  return st;
}

static void test_coo_rules(void **state) {
  (void)state;
  static const int64_t shape[2] = {2, 3};
  QvError err;
  static const int64_t ok[12] = {0, 0, 0, 2, 1, 0, 1, 1, 1, 2, 0, 1};
  assert_int_equal(coo(QV_ARROW_INT64, 2, shape, 6, ok, false, &err), QV_OK);
  static const int64_t sorted[12] = {0, 0, 0, 1, 0, 2, 1, 0, 1, 1, 1, 2};
  for (int it = QV_ARROW_INT8; it <= QV_ARROW_UINT64; it++)
    assert_int_equal(coo((QvArrowType)it, 2, shape, 6, sorted, true, &err), QV_OK);

  /* coordinate out of range (invalid/sparse_coo_coordinate_out_of_range) */
  static const int64_t out7[12] = {0, 0, 0, 1, 0, 2, 1, 0, 1, 1, 7, 2};
  expect_error(coo(QV_ARROW_INT64, 2, shape, 6, out7, false, &err), &err, QV_EINVAL,
               "COO coords: coordinate 7 of dim 0 at non-zero 5 is out of range [0, 2)");
  static const int64_t col3[4] = {0, 1, 1, 3};
  expect_error(coo(QV_ARROW_UINT8, 2, shape, 2, col3, false, &err), &err, QV_EINVAL,
               "coordinate 3 of dim 1 at non-zero 1");
  static const int64_t neg[4] = {0, 1, -1, 0};
  expect_error(coo(QV_ARROW_INT16, 2, shape, 2, neg, false, &err), &err, QV_EINVAL,
               "coordinate -1 of dim 0 at non-zero 1");
  /* uint64 above INT64_MAX */
  static const int64_t huge[2] = {0, -1};
  expect_error(coo(QV_ARROW_UINT64, 2, shape, 1, huge, false, &err), &err, QV_EINVAL,
               "coordinate 18446744073709551615 of dim 1 at non-zero 0");

  /* canonical flag on unsorted or duplicate coordinates */
  expect_error(coo(QV_ARROW_INT64, 2, shape, 6, ok, true, &err), &err, QV_EINVAL,
               "flagged canonical but non-zero 5 sorts before non-zero 4");
  static const int64_t dup[6] = {0, 1, 1, 2, 1, 2};
  expect_error(coo(QV_ARROW_INT32, 2, shape, 3, dup, true, &err), &err, QV_EINVAL,
               "non-zero 2 duplicates non-zero 1");
  assert_int_equal(coo(QV_ARROW_INT32, 2, shape, 3, dup, false, &err), QV_OK);

  /* malformed descriptions: none of these may read a buffer */
  QvSparseTensor t;
  static const int64_t c2[2] = {0, 0};
  const double v1[1] = {1};
  static const int64_t bad_strides[2] = {-16, 8};
  expect_error(qv_sparse_init(&t, &(QvSparseDesc){.format = QV_SPARSE_COO,
                                                  .value_type = QV_ARROW_FLOAT64,
                                                  .index_type = QV_ARROW_INT64, .ndim = 2,
                                                  .shape = shape, .nnz = 1, .coords = c2,
                                                  .coords_strides = bad_strides,
                                                  .values = v1}, &err),
               &err, QV_EINVAL, "COO coords: negative strides");
  /* 2^59 non-zeros with a 32-byte stride: byte offsets overflow int64 */
  static const int64_t wide_strides[2] = {32, 8};
  expect_error(qv_sparse_init(&t, &(QvSparseDesc){.format = QV_SPARSE_COO,
                                                  .value_type = QV_ARROW_FLOAT64,
                                                  .index_type = QV_ARROW_INT64, .ndim = 2,
                                                  .shape = shape, .nnz = INT64_C(1) << 59,
                                                  .coords = c2, .coords_strides = wide_strides,
                                                  .values = v1}, &err),
               &err, QV_EINVAL, "overflow int64 byte offsets");
  expect_error(qv_sparse_init(&t, &(QvSparseDesc){.format = QV_SPARSE_COO,
                                                  .value_type = QV_ARROW_FLOAT64,
                                                  .index_type = QV_ARROW_INT64, .ndim = 2,
                                                  .shape = shape, .nnz = INT64_C(1) << 61,
                                                  .coords = c2, .values = v1}, &err),
               &err, QV_EINVAL, "invalid nnz");
  expect_error(qv_sparse_init(&t, &(QvSparseDesc){.format = QV_SPARSE_COO,
                                                  .value_type = QV_ARROW_FLOAT64,
                                                  .index_type = QV_ARROW_INT64, .ndim = 2,
                                                  .shape = shape, .nnz = -1, .coords = c2,
                                                  .values = v1}, &err),
               &err, QV_EINVAL, "invalid nnz -1");
  expect_error(qv_sparse_init(&t, &(QvSparseDesc){.format = QV_SPARSE_COO,
                                                  .value_type = QV_ARROW_FLOAT64,
                                                  .index_type = QV_ARROW_INT64, .ndim = 2,
                                                  .shape = shape, .nnz = 1, .values = v1}, &err),
               &err, QV_EINVAL, "COO coords: buffer is NULL");
  expect_error(qv_sparse_init(&t, &(QvSparseDesc){.format = QV_SPARSE_COO,
                                                  .value_type = QV_ARROW_FLOAT64,
                                                  .index_type = QV_ARROW_INT64, .ndim = 2,
                                                  .shape = shape, .nnz = 1, .coords = c2}, &err),
               &err, QV_EINVAL, "values buffer is NULL");
  expect_error(qv_sparse_init(&t, &(QvSparseDesc){.format = QV_SPARSE_COO,
                                                  .value_type = QV_ARROW_FLOAT64,
                                                  .index_type = QV_ARROW_FLOAT32, .ndim = 2,
                                                  .shape = shape, .nnz = 1, .coords = c2,
                                                  .values = v1}, &err),
               &err, QV_EINVAL, "index type float32 is not an integer type");
  static const int64_t negshape[2] = {2, -3};
  expect_error(qv_sparse_init(&t, &(QvSparseDesc){.format = QV_SPARSE_COO,
                                                  .value_type = QV_ARROW_FLOAT64,
                                                  .index_type = QV_ARROW_INT64, .ndim = 2,
                                                  .shape = negshape, .is_canonical = true}, &err),
               &err, QV_EINVAL, "shape[1] = -3 is negative");
  expect_error(qv_sparse_init(&t, &(QvSparseDesc){.format = QV_SPARSE_COO,
                                                  .value_type = QV_ARROW_FLOAT64,
                                                  .index_type = QV_ARROW_INT64, .shape = shape,
                                                  .is_canonical = true}, &err),
               &err, QV_EINVAL, "ndim 0");
  expect_error(qv_sparse_init(&t, &(QvSparseDesc){.format = QV_SPARSE_COO,
                                                  .value_type = QV_ARROW_FLOAT64,
                                                  .index_type = QV_ARROW_INT64, .ndim = 65,
                                                  .shape = shape, .is_canonical = true}, &err),
               &err, QV_ELIMIT, "ndim 65");
  /* nnz 0: any strides, no buffers (Arrow writes [8, 8] for 3x0) */
  static const int64_t s30[2] = {3, 0}, any[2] = {8, 8};
  assert_int_equal(qv_sparse_init(&t, &(QvSparseDesc){.format = QV_SPARSE_COO,
                                                      .value_type = QV_ARROW_FLOAT64,
                                                      .index_type = QV_ARROW_INT64, .ndim = 2,
                                                      .shape = s30, .coords_strides = any,
                                                      .is_canonical = true}, &err),
                   QV_OK);
  double none[1];
  assert_int_equal(qv_sparse_to_dense_into(&t, none, 0, NULL, &err), QV_OK);
  qv_sparse_reset(&t);
}

/* ---- CSR / CSC */

static const int64_t kShape[2] = {6, 4};
static const int64_t kIndptr[7] = {0, 2, 3, 5, 5, 8, 9};
static const int64_t kIndices[9] = {1, 2, 2, 1, 3, 0, 2, 3, 1};

static QvStatus csx(QvSparseFormat f, QvArrowType pt, QvArrowType it, const int64_t *shape, int64_t nnz,
                    const int64_t *indptr, int64_t nptr, const int64_t *indices, QvError *err) {
  void *p = pack(indptr, nptr, pt), *x = pack(indices, nnz, it);
  void *v = heap((const double[9]){1, 2, 3, 4, 5, 6, 7, 8, 9}, (size_t)nnz * 8);
  QvSparseTensor t;
  QvStatus st = qv_sparse_init(&t, &(QvSparseDesc){.ndim = 2, .format = f,
                                                   .value_type = QV_ARROW_FLOAT64,
                                                   .indptr_type = pt, .index_type = it,
                                                   .shape = shape, .nnz = nnz, .indptr = p,
                                                   .indices = x, .values = v}, err);
  if (st == QV_OK) {
    QvTensor d;
    assert_int_equal(qv_sparse_to_dense(&t, NULL, &d, err), QV_OK);
    qv_tensor_reset(&d);
  } else {
    assert_null(t.private_data);
  }
  qv_sparse_reset(&t);
  free(p);
  free(x);
  free(v);
  return st;
}

static void test_csx_rules(void **state) {
  (void)state;
  QvError err;
  for (int pt = QV_ARROW_INT8; pt <= QV_ARROW_UINT64; pt++)
    assert_int_equal(csx(QV_SPARSE_CSR, (QvArrowType)pt, QV_ARROW_INT64, kShape, 9, kIndptr, 7, kIndices, &err),
                     QV_OK);
  static const int64_t start1[7] = {1, 2, 3, 5, 5, 8, 9};
  expect_error(csx(QV_SPARSE_CSR, QV_ARROW_INT64, QV_ARROW_INT64, kShape, 9, start1, 7, kIndices, &err), &err,
               QV_EINVAL, "CSR indptr: starts at 1, must start at 0");
  /* invalid/sparse_csr_indptr_decreasing */
  static const int64_t decr[7] = {0, 2, 3, 5, 4, 8, 9};
  expect_error(csx(QV_SPARSE_CSR, QV_ARROW_INT32, QV_ARROW_INT64, kShape, 9, decr, 7, kIndices, &err), &err,
               QV_EINVAL, "CSR indptr is decreasing at position 4 (4 after 5)");
  static const int64_t end10[7] = {0, 2, 3, 5, 5, 8, 10};
  expect_error(csx(QV_SPARSE_CSR, QV_ARROW_INT64, QV_ARROW_INT64, kShape, 9, end10, 7, kIndices, &err), &err,
               QV_EINVAL, "CSR indptr: ends at 10, must end at 9 (nnz)");
  static const int64_t end8[7] = {0, 2, 3, 5, 5, 8, 8};
  expect_error(csx(QV_SPARSE_CSR, QV_ARROW_INT64, QV_ARROW_INT64, kShape, 9, end8, 7, kIndices, &err), &err,
               QV_EINVAL, "ends at 8, must end at 9");
  static const int64_t negp[7] = {0, 2, -3, 5, 5, 8, 9};
  expect_error(csx(QV_SPARSE_CSR, QV_ARROW_INT8, QV_ARROW_INT64, kShape, 9, negp, 7, kIndices, &err), &err,
               QV_EINVAL, "CSR indptr: value -3 at position 2 is negative");
  static const int64_t bigp[7] = {0, 2, 3, -1, 5, 8, 9};
  expect_error(csx(QV_SPARSE_CSR, QV_ARROW_UINT64, QV_ARROW_INT64, kShape, 9, bigp, 7, kIndices, &err), &err,
               QV_EINVAL, "value 18446744073709551615 at position 3 is too large");
  /* indices out of range, unsorted or repeated within a row */
  static const int64_t idx4[9] = {1, 2, 2, 1, 4, 0, 2, 3, 1};
  expect_error(csx(QV_SPARSE_CSR, QV_ARROW_INT64, QV_ARROW_INT16, kShape, 9, kIndptr, 7, idx4, &err), &err,
               QV_EINVAL, "CSR indices: 4 at position 4 (row 2) is out of range [0, 4)");
  static const int64_t idxneg[9] = {1, 2, -2, 1, 3, 0, 2, 3, 1};
  expect_error(csx(QV_SPARSE_CSR, QV_ARROW_INT64, QV_ARROW_INT8, kShape, 9, kIndptr, 7, idxneg, &err), &err,
               QV_EINVAL, "CSR indices: -2 at position 2 (row 1)");
  static const int64_t idxbig[9] = {1, 2, 2, 1, 3, 0, 2, -1, 1};
  expect_error(csx(QV_SPARSE_CSR, QV_ARROW_INT64, QV_ARROW_UINT64, kShape, 9, kIndptr, 7, idxbig, &err), &err,
               QV_EINVAL, "CSR indices: 18446744073709551615 at position 7");
  static const int64_t unsorted[9] = {2, 1, 2, 1, 3, 0, 2, 3, 1};
  expect_error(csx(QV_SPARSE_CSR, QV_ARROW_INT64, QV_ARROW_INT64, kShape, 9, kIndptr, 7, unsorted, &err), &err,
               QV_EINVAL, "CSR indices: not sorted within row 0 at position 1 (1 after 2)");
  static const int64_t dup[9] = {1, 2, 2, 1, 3, 0, 3, 3, 1};
  expect_error(csx(QV_SPARSE_CSR, QV_ARROW_INT64, QV_ARROW_INT64, kShape, 9, kIndptr, 7, dup, &err), &err,
               QV_EINVAL, "CSR indices: duplicate within row 4 at position 7 (3 after 3)");
  /* CSC: the extent of indices is the row count */
  static const int64_t cptr[5] = {0, 1, 4, 7, 9};
  static const int64_t cidx[9] = {4, 0, 2, 5, 0, 1, 4, 2, 4};
  assert_int_equal(csx(QV_SPARSE_CSC, QV_ARROW_INT64, QV_ARROW_INT64, kShape, 9, cptr, 5, cidx, &err), QV_OK);
  static const int64_t cidx6[9] = {4, 0, 2, 6, 0, 1, 4, 2, 4};
  expect_error(csx(QV_SPARSE_CSC, QV_ARROW_INT64, QV_ARROW_INT64, kShape, 9, cptr, 5, cidx6, &err), &err,
               QV_EINVAL, "CSC indices: 6 at position 3 (column 1) is out of range [0, 6)");

  /* wrong lengths (fields of the struct, checked by qv_sparse_validate) */
  QvSparseTensor t;
  const double v[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  assert_int_equal(qv_sparse_init(&t, &(QvSparseDesc){.ndim = 2, .format = QV_SPARSE_CSR,
                                                      .value_type = QV_ARROW_FLOAT64,
                                                      .indptr_type = QV_ARROW_INT64,
                                                      .index_type = QV_ARROW_INT64, .shape = kShape,
                                                      .nnz = 9, .indptr = kIndptr,
                                                      .indices = kIndices, .values = v}, &err),
                   QV_OK);
  QvSparseTensor h = t;
  h.indptr_len = 6;
  expect_error(qv_sparse_validate(&h, &err), &err, QV_EINVAL, "CSR indptr has 6 entries, expected 7 (rows + 1)");
  h = t;
  h.indices_len = 8;
  expect_error(qv_sparse_validate(&h, &err), &err, QV_EINVAL, "CSR indices has 8 entries, expected nnz 9");
  h = t;
  h.format = QV_SPARSE_CSC; /* a 6x4 CSC needs 5 indptr entries */
  expect_error(qv_sparse_validate(&h, &err), &err, QV_EINVAL, "CSC indptr has 7 entries, expected 5 (columns + 1)");
  h = t;
  h.indptr_type = QV_ARROW_FLOAT64;
  expect_error(qv_sparse_validate(&h, &err), &err, QV_EINVAL, "CSR indptr: type float64 is not an integer type");
  /* conversions and densification refuse an invalid struct */
  h = t;
  h.nnz = 8;
  h.indices_len = 8;
  QvSparseTensor o;
  expect_error(qv_sparse_convert(&h, QV_SPARSE_COO, NULL, &o, &err), &err, QV_EINVAL, "must end at 8");
  assert_null(o.private_data);
  double dense[24];
  expect_error(qv_sparse_to_dense_into(&h, dense, sizeof dense, NULL, &err), &err, QV_EINVAL, "must end at 8");
  assert_false(qv_sparse_equal(&h, &t));
  qv_sparse_reset(&t);
  /* CSR needs 2 dims */
  static const int64_t s3[3] = {2, 2, 2};
  expect_error(qv_sparse_init(&t, &(QvSparseDesc){.ndim = 3, .format = QV_SPARSE_CSR,
                                                  .value_type = QV_ARROW_FLOAT64,
                                                  .indptr_type = QV_ARROW_INT64,
                                                  .index_type = QV_ARROW_INT64, .shape = s3,
                                                  .indptr = kIndptr, .indices = kIndices,
                                                  .values = v}, &err),
               &err, QV_EINVAL, "sparse csr: ndim 3, a matrix needs 2");
  expect_error(qv_sparse_init(&t, &(QvSparseDesc){.ndim = 2, .format = (QvSparseFormat)9,
                                                  .value_type = QV_ARROW_FLOAT64,
                                                  .indptr_type = QV_ARROW_INT64,
                                                  .index_type = QV_ARROW_INT64, .shape = kShape,
                                                  .nnz = 9, .indptr = kIndptr, .indices = kIndices,
                                                  .values = v}, &err),
               &err, QV_EARG, "unknown format 9");
  /* a view has no default index type */
  expect_error(qv_sparse_init(&t, &(QvSparseDesc){.ndim = 2, .format = QV_SPARSE_CSR,
                                                  .value_type = QV_ARROW_FLOAT64,
                                                  .index_type = QV_ARROW_INT64, .shape = kShape,
                                                  .nnz = 9, .indptr = kIndptr, .indices = kIndices,
                                                  .values = v}, &err),
               &err, QV_EINVAL, "CSR indptr: type none is not an integer type");
  /* 3x0 CSR: indptr [0, 0, 0, 0], no indices (as Arrow writes it) */
  static const int64_t s30[2] = {3, 0}, zeros[4] = {0, 0, 0, 0};
  assert_int_equal(csx(QV_SPARSE_CSR, QV_ARROW_INT64, QV_ARROW_INT64, s30, 0, zeros, 4, NULL, &err), QV_OK);
}

/* ---- CSF */

typedef struct Csf {
  int32_t axis[4];
  int64_t ptr[3][8];
  int64_t ptr_len[3];
  int64_t ind[4][8];
  int64_t ind_len[4];
  int64_t nnz;
} Csf;

static const Csf kGood = {{0, 1, 2, 3},
                          {{0, 2, 3}, {0, 1, 3, 4}, {0, 2, 4, 5, 8}},
                          {3, 4, 5},
                          {{0, 1}, {0, 1, 1}, {0, 0, 1, 1}, {1, 2, 0, 2, 0, 0, 1, 2}},
                          {2, 3, 4, 8},
                          8};
static const int64_t kShape4[4] = {2, 3, 4, 5};

static QvStatus csf(const Csf *c, QvArrowType pt, QvArrowType it, QvError *err) {
  void *ptr[3], *ind[4];
  for (int l = 0; l < 4; l++) {
    ind[l] = pack(c->ind[l], c->ind_len[l] < 0 ? 0 : c->ind_len[l], it);
    if (l < 3) ptr[l] = pack(c->ptr[l], c->ptr_len[l] < 0 ? 0 : c->ptr_len[l], pt);
  }
  void *v = heap((const double[8]){1, 2, 3, 4, 5, 6, 7, 8}, (size_t)c->nnz * 8);
  QvSparseTensor t;
  QvStatus st = qv_sparse_init(&t, &(QvSparseDesc){.format = QV_SPARSE_CSF,
                                                   .value_type = QV_ARROW_FLOAT64,
                                                   .indptr_type = pt, .index_type = it, .ndim = 4,
                                                   .shape = kShape4, .axis_order = c->axis,
                                                   .nnz = c->nnz,
                                                   .csf_indptr = (const void *const *)ptr,
                                                   .csf_indptr_len = c->ptr_len,
                                                   .csf_indices = (const void *const *)ind,
                                                   .csf_indices_len = c->ind_len,
                                                   .values = v}, err);
  if (st == QV_OK) {
    QvSparseTensor coo;
    assert_int_equal(qv_sparse_convert(&t, QV_SPARSE_COO, NULL, &coo, err), QV_OK);
    assert_true(qv_sparse_equal(&coo, &t));
    qv_sparse_reset(&coo);
  } else {
    assert_null(t.private_data);
  }
  qv_sparse_reset(&t);
  for (int l = 0; l < 4; l++) {
    free(ind[l]);
    if (l < 3) free(ptr[l]);
  }
  free(v);
  return st;
}

static void test_csf_rules(void **state) {
  (void)state;
  QvError err;
  for (int it = QV_ARROW_INT8; it <= QV_ARROW_UINT64; it++)
    assert_int_equal(csf(&kGood, (QvArrowType)it, (QvArrowType)(QV_ARROW_UINT64 - (it - QV_ARROW_INT8)), &err),
                     QV_OK);
  Csf c;
  /* axis_order not a permutation */
  c = kGood;
  c.axis[2] = 1;
  expect_error(csf(&c, QV_ARROW_INT64, QV_ARROW_INT64, &err), &err, QV_EINVAL,
               "CSF axis_order is not a permutation: 1 appears twice (position 2)");
  c = kGood;
  c.axis[3] = 4;
  expect_error(csf(&c, QV_ARROW_INT64, QV_ARROW_INT64, &err), &err, QV_EINVAL,
               "CSF axis_order is not a permutation: 4 at position 3 is out of range [0, 4)");
  /* level lengths inconsistent */
  c = kGood;
  c.ptr_len[1] = 3;
  expect_error(csf(&c, QV_ARROW_INT64, QV_ARROW_INT64, &err), &err, QV_EINVAL,
               "CSF indptr[1] has 3 entries, expected 4 (entries in indices[1] + 1)");
  c = kGood;
  c.ind_len[2] = 3; /* indptr[1] ends at 4 */
  c.ptr_len[2] = 4;
  expect_error(csf(&c, QV_ARROW_INT64, QV_ARROW_INT64, &err), &err, QV_EINVAL,
               "CSF indptr[1]: ends at 4, must end at 3 (entries in the next level)");
  c = kGood;
  c.ptr[2][4] = 7;
  expect_error(csf(&c, QV_ARROW_INT64, QV_ARROW_INT64, &err), &err, QV_EINVAL, "CSF indptr[2]: ends at 7, must end at 8");
  /* last level != nnz */
  c = kGood;
  c.nnz = 7;
  expect_error(csf(&c, QV_ARROW_INT64, QV_ARROW_INT64, &err), &err, QV_EINVAL,
               "CSF indices[3] (last level) has 8 entries, must equal nnz 7");
  c = kGood;
  c.ind_len[0] = -1;
  expect_error(csf(&c, QV_ARROW_INT64, QV_ARROW_INT64, &err), &err, QV_EINVAL, "CSF indices[0]: invalid length -1");
  /* indptr rules */
  c = kGood;
  c.ptr[0][0] = 1;
  expect_error(csf(&c, QV_ARROW_INT64, QV_ARROW_INT64, &err), &err, QV_EINVAL, "CSF indptr[0]: starts at 1");
  c = kGood;
  c.ptr[1][2] = 0;
  expect_error(csf(&c, QV_ARROW_INT32, QV_ARROW_INT64, &err), &err, QV_EINVAL,
               "CSF indptr[1] is decreasing at position 2 (0 after 1)");
  c = kGood;
  c.ptr[2][3] = -1;
  expect_error(csf(&c, QV_ARROW_UINT64, QV_ARROW_INT64, &err), &err, QV_EINVAL,
               "CSF indptr[2]: value 18446744073709551615 at position 3 is too large");
  /* indices out of range, unsorted or repeated among siblings */
  c = kGood;
  c.ind[3][1] = 5;
  expect_error(csf(&c, QV_ARROW_INT64, QV_ARROW_INT64, &err), &err, QV_EINVAL,
               "CSF indices[3]: 5 at position 1 (children of node 0) is out of range [0, 5)");
  c = kGood;
  c.ind[0][1] = 2;
  expect_error(csf(&c, QV_ARROW_INT64, QV_ARROW_UINT8, &err), &err, QV_EINVAL,
               "CSF indices[0]: 2 at position 1 (level 0) is out of range [0, 2)");
  c = kGood;
  c.ind[3][7] = -1;
  expect_error(csf(&c, QV_ARROW_INT64, QV_ARROW_UINT64, &err), &err, QV_EINVAL,
               "CSF indices[3]: 18446744073709551615 at position 7");
  c = kGood;
  c.ind[3][7] = 0; /* node 3's children 0, 1, 0 */
  expect_error(csf(&c, QV_ARROW_INT64, QV_ARROW_INT64, &err), &err, QV_EINVAL,
               "CSF indices[3]: not sorted within children of node 3 at position 7 (0 after 1)");
  c = kGood;
  c.ind[1][1] = 0; /* node 0 of level 0 would have children 0, 0 */
  expect_error(csf(&c, QV_ARROW_INT64, QV_ARROW_INT64, &err), &err, QV_EINVAL,
               "CSF indices[1]: duplicate within children of node 0 at position 1");
  c = kGood;
  c.ind[0][0] = 1;
  c.ind[0][1] = 0;
  expect_error(csf(&c, QV_ARROW_INT64, QV_ARROW_INT64, &err), &err, QV_EINVAL,
               "CSF indices[0]: not sorted within level 0 at position 1 (0 after 1)");
  /* NULL lists */
  QvSparseTensor t;
  expect_error(qv_sparse_init(&t, &(QvSparseDesc){.format = QV_SPARSE_CSF,
                                                  .value_type = QV_ARROW_FLOAT64,
                                                  .indptr_type = QV_ARROW_INT64,
                                                  .index_type = QV_ARROW_INT64, .ndim = 4,
                                                  .shape = kShape4}, &err),
               &err, QV_EARG, "NULL");
  /* 1-D CSF: one level, no indptr (Arrow C++ refuses to make it) */
  static const int64_t n10[1] = {10}, ind1[3] = {1, 4, 7}, len1[1] = {3};
  static const int32_t ax1[1] = {0};
  const double v3[3] = {1.5, -2, 3};
  const void *inds[1] = {ind1};
  assert_int_equal(qv_sparse_init(&t, &(QvSparseDesc){.format = QV_SPARSE_CSF,
                                                      .value_type = QV_ARROW_FLOAT64,
                                                      .indptr_type = QV_ARROW_INT64,
                                                      .index_type = QV_ARROW_INT64, .ndim = 1,
                                                      .shape = n10, .axis_order = ax1, .nnz = 3,
                                                      .csf_indices = inds, .csf_indices_len = len1,
                                                      .values = v3}, &err),
                   QV_OK);
  double d[10];
  assert_int_equal(qv_sparse_to_dense_into(&t, d, sizeof d, NULL, &err), QV_OK);
  assert_true(d[4] == -2 && d[7] == 3 && d[0] == 0);
  qv_sparse_reset(&t);
  /* all-zero CSF as Arrow writes it: levels empty, indptr [0] */
  static const int64_t s234[3] = {2, 3, 4}, zero1[1] = {0}, lens0[3] = {0, 0, 0}, plens[2] = {1, 1};
  static const int32_t ax3[3] = {0, 1, 2};
  const void *ptrs0[2] = {zero1, zero1}, *inds0[3] = {zero1, zero1, zero1};
  assert_int_equal(qv_sparse_init(&t, &(QvSparseDesc){.format = QV_SPARSE_CSF,
                                                      .value_type = QV_ARROW_FLOAT64,
                                                      .indptr_type = QV_ARROW_INT64,
                                                      .index_type = QV_ARROW_INT64, .ndim = 3,
                                                      .shape = s234, .axis_order = ax3,
                                                      .csf_indptr = ptrs0, .csf_indptr_len = plens,
                                                      .csf_indices = inds0,
                                                      .csf_indices_len = lens0}, &err),
                   QV_OK);
  qv_sparse_reset(&t);
}

/* Conversions of a non-canonical COO check coordinates while grouping
 * (direct and bucketed paths): a struct whose buffer was changed after
 * validation still fails cleanly, naming the coordinate, for every output
 * format, before anything is written. */
static void expect_convert_error(const QvSparseTensor *t, const char *needle) {
  for (int f = QV_SPARSE_COO; f <= QV_SPARSE_CSF; f++) {
    QvSparseTensor o;
    QvError err;
    expect_error(qv_sparse_convert(t, (QvSparseFormat)f, NULL, &o, &err), &err, QV_EINVAL, needle);
    assert_null(o.private_data);
  }
  double d[24];
  QvError err;
  if (t->shape[0] * t->shape[1] <= 24)
    expect_error(qv_sparse_to_dense_into(t, d, sizeof d, NULL, &err), &err, QV_EINVAL, needle);
}

static void test_convert_checks_coordinates(void **state) {
  (void)state;
  QvError err;
  QvSparseTensor t;
  static const int64_t shape[2] = {6, 4};
  int64_t small[8] = {5, 3, 0, 1, 2, 2, 1, 0};
  const double v[4] = {1, 2, 3, 4};
  assert_int_equal(qv_sparse_init(&t, &(QvSparseDesc){.format = QV_SPARSE_COO,
                                                      .value_type = QV_ARROW_FLOAT64,
                                                      .index_type = QV_ARROW_INT64, .ndim = 2,
                                                      .shape = shape, .nnz = 4, .coords = small,
                                                      .values = v}, &err),
                   QV_OK);
  small[6] = 6;
  expect_convert_error(&t, "coordinate 6 of dim 0 at non-zero 3");
  small[6] = 1;
  small[3] = -1;
  expect_convert_error(&t, "coordinate -1 of dim 1 at non-zero 1");
  qv_sparse_reset(&t);
  /* uint64 index buffer with a value above INT64_MAX */
  uint64_t u[8] = {5, 3, 0, 1, 2, 2, 1, 0};
  assert_int_equal(qv_sparse_init(&t, &(QvSparseDesc){.format = QV_SPARSE_COO,
                                                      .value_type = QV_ARROW_FLOAT64,
                                                      .index_type = QV_ARROW_UINT64, .ndim = 2,
                                                      .shape = shape, .nnz = 4, .coords = u,
                                                      .values = v}, &err),
                   QV_OK);
  u[4] = UINT64_MAX;
  expect_convert_error(&t, "coordinate 18446744073709551615 of dim 0 at non-zero 2");
  qv_sparse_reset(&t);

  /* large enough for the bucketed grouping */
  enum { N = 300000 };
  static const int64_t big[2] = {5000, 5000};
  int64_t *c = malloc(sizeof(int64_t) * 2 * N);
  double *vals = calloc(N, sizeof(double));
  for (int64_t i = 0; i < N; i++) {
    c[2 * i] = (i * 7919) % 5000;
    c[2 * i + 1] = (i * 104729) % 5000;
    vals[i] = 1;
  }
  assert_int_equal(qv_sparse_init(&t, &(QvSparseDesc){.format = QV_SPARSE_COO,
                                                      .value_type = QV_ARROW_FLOAT64,
                                                      .index_type = QV_ARROW_INT64, .ndim = 2,
                                                      .shape = big, .nnz = N, .coords = c,
                                                      .values = vals}, &err),
                   QV_OK);
  c[2 * N - 1] = 5000;
  expect_convert_error(&t, "coordinate 5000 of dim 1 at non-zero 299999");
  c[2 * N - 1] = 0;
  c[2 * 1234] = -7;
  expect_convert_error(&t, "coordinate -7 of dim 0 at non-zero 1234");
  c[2 * 1234] = 0;
  QvSparseTensor o;
  assert_int_equal(qv_sparse_convert(&t, QV_SPARSE_CSR, NULL, &o, &err), QV_OK);
  qv_sparse_reset(&o);
  qv_sparse_reset(&t);
  free(vals);
  free(c);
}

/* Random corruption of valid buffers: validation accepts or rejects, never
 * reads out of bounds (ASan), and whatever it accepts converts to every
 * format and to dense. */
static uint64_t fz = 0x2545f4914f6cdd1du;
static int64_t fz_value(void) {
  fz ^= fz << 13;
  fz ^= fz >> 7;
  fz ^= fz << 17;
  switch (fz % 6) {
    case 0: return -1;
    case 1: return (int64_t)(fz >> 40) % 12;
    case 2: return INT64_MAX;
    case 3: return (int64_t)(fz % 5);
    case 4: return (int64_t)(fz % 10);
    default: return (int64_t)((fz >> 8) % 3);
  }
}

static void accept_or_reject(QvStatus st, QvSparseTensor *t, int *accepted) {
  if (st != QV_OK) {
    assert_int_equal(st, QV_EINVAL);
    return;
  }
  (*accepted)++;
  QvError err;
  for (int f = QV_SPARSE_COO; f <= QV_SPARSE_CSF; f++) {
    QvSparseTensor o;
    QvStatus cs = qv_sparse_convert(t, (QvSparseFormat)f, NULL, &o, &err);
    if (t->ndim != 2 && (f == QV_SPARSE_CSR || f == QV_SPARSE_CSC)) {
      assert_int_equal(cs, QV_EINVAL);
      continue;
    }
    assert_int_equal(cs, QV_OK);
    assert_true(qv_sparse_equal(&o, t));
    qv_sparse_reset(&o);
  }
  QvTensor d;
  assert_int_equal(qv_sparse_to_dense(t, NULL, &d, &err), QV_OK);
  assert_true(qv_sparse_equal_dense(t, &d));
  qv_tensor_reset(&d);
  qv_sparse_reset(t);
}

static void test_random_corruption(void **state) {
  (void)state;
  int accepted = 0;
  const double v[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  for (int it = 0; it < 3000; it++) {
    QvArrowType ty = (QvArrowType)(QV_ARROW_INT8 + it % 8);
    QvSparseTensor t;
    QvError err;
    int kind = it % 3;
    if (kind == 0) {
      int64_t c[24];
      memcpy(c, (const int64_t[]){0, 0, 0, 1, 0, 2, 1, 0, 1, 1, 1, 2}, 12 * sizeof(int64_t));
      for (int k = 0; k < 1 + it % 3; k++) c[fz % 12] = fz_value();
      void *pc = pack(c, 12, ty), *pv = heap(v, 6 * 8);
      static const int64_t sh[2] = {2, 3};
      accept_or_reject(qv_sparse_init(&t, &(QvSparseDesc){.format = QV_SPARSE_COO,
                                                          .value_type = QV_ARROW_FLOAT64,
                                                          .index_type = ty, .ndim = 2, .shape = sh,
                                                          .nnz = 6, .coords = pc,
                                                          .is_canonical = it % 2 == 0,
                                                          .values = pv}, &err),
                       &t, &accepted);
      free(pc);
      free(pv);
    } else if (kind == 1) {
      int64_t p[7], x[9];
      memcpy(p, kIndptr, sizeof p);
      memcpy(x, kIndices, sizeof x);
      for (int k = 0; k < 1 + it % 2; k++) {
        if (fz % 2)
          p[fz % 7] = fz_value();
        else
          x[fz % 9] = fz_value();
      }
      void *pp = pack(p, 7, ty), *px = pack(x, 9, ty), *pv = heap(v, 9 * 8);
      accept_or_reject(qv_sparse_init(&t, &(QvSparseDesc){.ndim = 2,
                                                          .format = it % 4 == 1 ? QV_SPARSE_CSC : QV_SPARSE_CSR,
                                                          .value_type = QV_ARROW_FLOAT64,
                                                          .indptr_type = ty, .index_type = ty,
                                                          .shape = kShape, .nnz = 9, .indptr = pp,
                                                          .indices = px, .values = pv}, &err),
                       &t, &accepted);
      free(pp);
      free(px);
      free(pv);
    } else {
      Csf c = kGood;
      for (int k = 0; k < 1 + it % 2; k++) {
        int l = (int)(fz % 4);
        if (fz % 3 == 0 && l < 3)
          c.ptr[l][fz % (uint64_t)c.ptr_len[l]] = fz_value();
        else
          c.ind[l][fz % (uint64_t)c.ind_len[l]] = fz_value();
        fz_value();
      }
      void *ptr[3], *ind[4];
      for (int l = 0; l < 4; l++) {
        ind[l] = pack(c.ind[l], c.ind_len[l], ty);
        if (l < 3) ptr[l] = pack(c.ptr[l], c.ptr_len[l], ty);
      }
      void *pv = heap(v, 8 * 8);
      accept_or_reject(qv_sparse_init(&t, &(QvSparseDesc){.format = QV_SPARSE_CSF,
                                                          .value_type = QV_ARROW_FLOAT64,
                                                          .indptr_type = ty, .index_type = ty,
                                                          .ndim = 4, .shape = kShape4,
                                                          .axis_order = c.axis, .nnz = 8,
                                                          .csf_indptr = (const void *const *)ptr,
                                                          .csf_indptr_len = c.ptr_len,
                                                          .csf_indices = (const void *const *)ind,
                                                          .csf_indices_len = c.ind_len,
                                                          .values = pv}, &err),
                       &t, &accepted);
      for (int l = 0; l < 4; l++) {
        free(ind[l]);
        if (l < 3) free(ptr[l]);
      }
      free(pv);
    }
  }
  /* both outcomes occur */
  assert_true(accepted > 100 && accepted < 2900);
}

/* ---- the CSR/CSC index scan on large inputs, on one thread and a pool */

/* What validation must decide, entry by entry. */
static bool csx_valid_ref(const int64_t *p, int64_t rows, const int64_t *x, int64_t cols) {
  for (int64_t r = 0; r < rows; r++)
    for (int64_t k = p[r]; k < p[r + 1]; k++)
      if (x[k] < 0 || x[k] >= cols || (k > p[r] && x[k] <= x[k - 1])) return false;
  return true;
}

/* Validates a CSR of the given types whose buffers start one byte past an
 * aligned address (as SciPy's stored .npz members do), on `threads`
 * (QvSparseDesc.threads); *msg receives the error message. */
static QvStatus csx_big(QvArrowType pt, QvArrowType it, const int64_t *p, int64_t rows,
                        const int64_t *x, int64_t nnz, int64_t cols, int threads,
                        char msg[sizeof ((QvError *)0)->message]) {
  size_t pw = qv_arrow_type_size(pt), iw = qv_arrow_type_size(it);
  uint8_t *pb = malloc((size_t)(rows + 1) * pw + 1), *xb = malloc((size_t)nnz * iw + 1);
  void *pp = pack(p, rows + 1, pt), *px = pack(x, nnz, it);
  memcpy(pb + 1, pp, (size_t)(rows + 1) * pw);
  memcpy(xb + 1, px, (size_t)nnz * iw);
  free(pp);
  free(px);
  double v = 0;
  const int64_t shape[2] = {rows, cols};
  QvSparseTensor t;
  QvError err;
  qv_error_clear(&err);
  QvStatus st = qv_sparse_init(&t, &(QvSparseDesc){.ndim = 2, .format = QV_SPARSE_CSR,
                                                  .value_type = QV_ARROW_FLOAT64,
                                                  .indptr_type = pt, .index_type = it,
                                                  .shape = shape, .nnz = nnz, .indptr = pb + 1,
                                                  .indices = xb + 1, .values = &v,
                                                  .threads = threads}, &err);
  /* values are not read by validation: one double stands for nnz */
  snprintf(msg, sizeof err.message, "%s", err.message);
  qv_sparse_reset(&t);
  free(pb);
  free(xb);
  return st;
}

/* Random matrices past the size at which the scan splits across a pool
 * (rows of 0-200 entries, empty ones included), each corrupted one way:
 * the verdict matches an entry-by-entry reference, and the message is the
 * same on one thread and on pools of 2 and 3 (which take the split path). */
static void test_csx_scan_large(void **state) {
  (void)state;
  const int64_t rows = 5000;
  int64_t *p = malloc((size_t)(rows + 1) * sizeof *p);
  p[0] = 0;
  for (int64_t r = 0; r < rows; r++) {
    fz_value();
    int64_t n = r % 97 == 0 ? 0 : (int64_t)(fz % 201);
    p[r + 1] = p[r] + n;
  }
  int64_t nnz = p[rows];
  assert_true(nnz >= ((int64_t)1 << 18));
  int64_t *base = malloc((size_t)nnz * sizeof *base), *x = malloc((size_t)nnz * sizeof *x);
  QvError err;
  static const QvArrowType types[4][2] = {{QV_ARROW_INT32, QV_ARROW_INT32},
                                          {QV_ARROW_INT64, QV_ARROW_INT64},
                                          {QV_ARROW_INT32, QV_ARROW_INT64},
                                          {QV_ARROW_INT64, QV_ARROW_INT32}};
  /* columns: small, and (int64 indices) past int32 */
  static const int64_t col_counts[2] = {1000, (int64_t)1 << 40};
  for (int ci = 0; ci < 2; ci++) {
    int64_t cols = col_counts[ci];
    for (int64_t r = 0; r < rows; r++) {
      /* n distinct sorted columns: steps of 1..gap */
      int64_t n = p[r + 1] - p[r], gap = (cols - 1) / (n > 0 ? n : 1), at = -1;
      if (gap > 4) gap = ci == 0 ? 4 : gap;
      for (int64_t k = p[r]; k < p[r + 1]; k++) {
        fz_value();
        at += 1 + (int64_t)(fz % (uint64_t)gap);
        base[k] = at;
      }
    }
    for (int kind = 0; kind < 10; kind++) {
      memcpy(x, base, (size_t)nnz * sizeof *x);
      fz_value();
      int64_t r = 1 + (int64_t)(fz % (uint64_t)(rows - 2));
      while (p[r + 1] - p[r] < 3) r++;
      int64_t k = p[r] + 1 + (int64_t)(fz % (uint64_t)(p[r + 1] - p[r] - 2)); /* inside row r */
      switch (kind) {
        case 0: break;                                             /* valid */
        case 1: x[k] = x[k - 1]; break;                            /* duplicate */
        case 2: {                                                  /* unsorted */
          int64_t tmp = x[k];
          x[k] = x[k + 1];
          x[k + 1] = tmp;
          break;
        }
        case 3: x[k] = cols; break;                                /* past the extent */
        case 4: x[p[r]] = -1; break;                               /* negative, row start */
        case 5: x[nnz - 1] = cols; break;                          /* the very last entry */
        case 6: x[0] = -5; break;                                  /* the very first */
        case 7: /* a fall at a row start (the last entry of an earlier row): valid */
          x[p[r]] = 0;
          x[p[r] - 1] = cols - 1;
          break;
        case 8: x[k] = x[k - 1] - 1 >= 0 ? x[k - 1] - 1 : cols; break; /* a fall inside a row */
        default: x[p[r + 1] - 1] = cols + 7; break;                /* a row's last entry */
      }
      bool want = csx_valid_ref(p, rows, x, cols);
      assert_int_equal(want, kind == 0 || kind == 7);
      for (int ti = 0; ti < 4; ti++) {
        QvArrowType pt = types[ti][0], it = types[ti][1];
        if (it == QV_ARROW_INT32 && ci == 1) continue; /* values past int32 */
        char first[sizeof err.message];
        QvStatus st0 = QV_OK;
        for (int pi = 0; pi < 3; pi++) {
          char msg[sizeof err.message];
          uint64_t before = qvi_path_count(QV_PATH_SPARSE_VALIDATE_THREADS);
          QvStatus st = csx_big(pt, it, p, rows, x, nnz, cols, pi + 1, msg);
          /* the pools split the scan (one thread does not) and accept
           * valid input there, without the entry-by-entry loop */
          assert_int_equal(qvi_path_count(QV_PATH_SPARSE_VALIDATE_THREADS) != before,
                           pi > 0 && want);
          if ((st == QV_OK) != want)
            fail_msg("kind %d types %d/%d cols %lld pool %d: status %d (%s)", kind, (int)pt,
                     (int)it, (long long)cols, pi, st, msg);
          if (pi == 0) {
            st0 = st;
            snprintf(first, sizeof first, "%s", msg);
          } else {
            assert_int_equal(st, st0);
            if (st) assert_string_equal(msg, first);
          }
        }
      }
    }
  }
  free(p);
  free(base);
  free(x);
}

/* The fused scan works a block of 2^14 entries at a time and splits the
 * entries into 4 slices a thread: corruptions right at those edges (a
 * block or slice boundary that is a row start, one inside a row, empty
 * rows whose start repeats at the edge) get the verdict of the entry-by-
 * entry reference and the same message on one thread and pools of 2, 3. */
static void test_csx_scan_block_edges(void **state) {
  (void)state;
  const int64_t cols = 1000;
  QvError err;
  for (int layout = 0; layout < 2; layout++) {
    /* 64 a row: every block edge is a row start; 100 a row with every
     * 41st row empty: edges inside rows, repeated starts */
    int64_t per = layout == 0 ? 64 : 100, rows = layout == 0 ? 5000 : 3300;
    int64_t *p = malloc((size_t)(rows + 1) * sizeof *p);
    p[0] = 0;
    for (int64_t r = 0; r < rows; r++) p[r + 1] = p[r] + (layout == 1 && r % 41 == 7 ? 0 : per);
    int64_t nnz = p[rows];
    assert_true(nnz >= ((int64_t)1 << 18));
    int64_t *base = malloc((size_t)nnz * sizeof *base), *x = malloc((size_t)nnz * sizeof *x);
    for (int64_t r = 0; r < rows; r++)
      for (int64_t k = p[r]; k < p[r + 1]; k++) base[k] = (k - p[r]) * (cols / per);
    int64_t edges[64];
    int n_edges = 0;
    for (int64_t j = 1; j <= 3; j++) edges[n_edges++] = j << 14;
    edges[n_edges++] = (nnz - 1) / 16384 * 16384;
    static const int64_t slices[2] = {8, 12}; /* pools of 2 and 3 threads */
    for (int si = 0; si < 2; si++)
      for (int64_t i = 1; i < slices[si]; i++)
        edges[n_edges++] = nnz / slices[si] * i + (nnz % slices[si]) * i / slices[si];
    int invalid = 0, valid_falls = 0;
    for (int e = 0; e < n_edges; e++) {
      int64_t at = edges[e];
      for (int kind = 0; kind < 4; kind++) {
        memcpy(x, base, (size_t)nnz * sizeof *x);
        switch (kind) {
          case 0: x[at] = x[at - 1]; break;         /* equal to the one before */
          case 1: x[at] = cols; break;              /* past the extent at the edge */
          case 2: x[at - 1] = cols; break;          /* ... and just before it */
          default: x[at] = x[at - 1] > 0 ? 0 : -1; /* a fall (valid at a row start) */
        }
        bool want = csx_valid_ref(p, rows, x, cols);
        if (want) valid_falls++;
        else invalid++;
        static const QvArrowType types[2][2] = {{QV_ARROW_INT32, QV_ARROW_INT32},
                                                {QV_ARROW_INT64, QV_ARROW_INT32}};
        for (int ti = 0; ti < 2; ti++) {
          char first[sizeof err.message];
          QvStatus st0 = QV_OK;
          for (int pi = 0; pi < 3; pi++) {
            char msg[sizeof err.message];
            uint64_t before = qvi_path_count(QV_PATH_SPARSE_VALIDATE_THREADS);
            QvStatus st = csx_big(types[ti][0], types[ti][1], p, rows, x, nnz, cols, pi + 1,
                                  msg);
            /* valid input is accepted by the split scan itself, not the loop */
            assert_int_equal(qvi_path_count(QV_PATH_SPARSE_VALIDATE_THREADS) != before,
                             pi > 0 && want);
            if ((st == QV_OK) != want)
              fail_msg("layout %d edge %lld kind %d types %d pool %d: status %d (%s)", layout,
                       (long long)at, kind, ti, pi, st, msg);
            if (pi == 0) {
              st0 = st;
              snprintf(first, sizeof first, "%s", msg);
            } else {
              assert_int_equal(st, st0);
              if (st) assert_string_equal(msg, first);
            }
          }
        }
      }
    }
    /* both verdicts at the edges: row starts there (layout 0) take falls */
    assert_true(invalid > 0);
    if (layout == 0) assert_true(valid_falls > 0);
    free(p);
    free(base);
    free(x);
  }
}

/* The owner is retained by views and released with them. */
static int released;
static void on_release(void *p) {
  (void)p;
  released++;
}

static void test_owner_and_misc(void **state) {
  (void)state;
  QvError err;
  QvOwner *owner = qv_owner_new(on_release, NULL);
  static const int64_t shape[1] = {4}, c[1] = {2};
  const double v[1] = {3};
  QvSparseTensor t;
  assert_int_equal(qv_sparse_init(&t, &(QvSparseDesc){.format = QV_SPARSE_COO,
                                                      .value_type = QV_ARROW_FLOAT64,
                                                      .index_type = QV_ARROW_INT64, .ndim = 1,
                                                      .shape = shape, .nnz = 1, .coords = c,
                                                      .is_canonical = true, .values = v,
                                                      .owner = owner}, &err),
                   QV_OK);
  qv_owner_free(owner);
  assert_int_equal(released, 0);
  qv_sparse_reset(&t);
  assert_int_equal(released, 1);
  qv_sparse_reset(&t); /* zeroed: a no-op */
  qv_sparse_reset(NULL);
  /* a failed make drops its reference too */
  owner = qv_owner_new(on_release, NULL);
  static const int64_t bad[1] = {9};
  assert_int_equal(qv_sparse_init(&t, &(QvSparseDesc){.format = QV_SPARSE_COO,
                                                      .value_type = QV_ARROW_FLOAT64,
                                                      .index_type = QV_ARROW_INT64, .ndim = 1,
                                                      .shape = shape, .nnz = 1, .coords = bad,
                                                      .is_canonical = true, .values = v,
                                                      .owner = owner}, &err),
                   QV_EINVAL);
  qv_owner_free(owner);
  assert_int_equal(released, 2);
  assert_int_equal(qv_sparse_validate(NULL, &err), QV_EARG);
  assert_int_equal(qv_index_load((const uint8_t *)"\xff\xff\xff\xff\xff\xff\xff\xff", QV_ARROW_UINT64, 0), -1);
  assert_int_equal(qv_index_load((const uint8_t *)"\xff\xff", QV_ARROW_INT16, 0), -1);
  assert_int_equal(qv_index_load((const uint8_t *)"\xff\xff", QV_ARROW_UINT16, 0), 65535);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_coo_rules),
      cmocka_unit_test(test_csx_rules),
      cmocka_unit_test(test_csf_rules),
      cmocka_unit_test(test_convert_checks_coordinates),
      cmocka_unit_test(test_random_corruption),
      cmocka_unit_test(test_owner_and_misc),
      cmocka_unit_test(test_csx_scan_large),
      cmocka_unit_test(test_csx_scan_block_edges),
  };
  return qv_test_run(tests, NULL, NULL);
}
