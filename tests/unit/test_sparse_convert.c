/* Conversions: dense <-> every index kind and sparse <-> sparse for every
 * value type and index type, dense inputs of every layout, 1-D, zero-length
 * dims, all-zero tensors, zero by value, canonicalization, index-type fit
 * checks and large shapes. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "quiver/advanced.h"
#include "quiver/sparse.h"
#include "test_util.h"
#include "util/cpu.h"

static uint64_t rng_state = 0x9e3779b97f4a7c15u;
static uint64_t rnd(void) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return rng_state;
}

/* Stores small integer v as a value of the type. */
static void put_value(uint8_t *p, QvArrowType t, int v) {
  switch (t) {
    case QV_ARROW_INT8: { int8_t x = (int8_t)v; memcpy(p, &x, 1); break; }
    case QV_ARROW_INT16: { int16_t x = (int16_t)v; memcpy(p, &x, 2); break; }
    case QV_ARROW_INT32: { int32_t x = v; memcpy(p, &x, 4); break; }
    case QV_ARROW_INT64: { int64_t x = v; memcpy(p, &x, 8); break; }
    case QV_ARROW_UINT8: { uint8_t x = (uint8_t)(v & 0x7f); memcpy(p, &x, 1); break; }
    case QV_ARROW_UINT16: { uint16_t x = (uint16_t)(v & 0x7fff); memcpy(p, &x, 2); break; }
    case QV_ARROW_UINT32: { uint32_t x = (uint32_t)(v & 0x7fff); memcpy(p, &x, 4); break; }
    case QV_ARROW_UINT64: { uint64_t x = (uint64_t)(v & 0x7fff); memcpy(p, &x, 8); break; }
    case QV_ARROW_FLOAT16: { uint16_t x = qv_float_to_half((float)v); memcpy(p, &x, 2); break; }
    case QV_ARROW_FLOAT32: { float x = (float)v; memcpy(p, &x, 4); break; }
    default: { double x = v; memcpy(p, &x, 8); break; }
  }
}

/* Row-major dense tensor owning random values, about `pct` % non-zero. */
static void *random_dense(QvTensor *t, QvArrowType type, int32_t ndim, const int64_t *shape, int pct) {
  QvError err;
  void *data;
  assert_int_equal(qv_tensor_alloc(t, type, ndim, shape, NULL, false, &data, &err), QV_OK);
  size_t w = qv_arrow_type_size(type);
  uint8_t *p = data;
  int64_t n = qv_tensor_n_elements(t);
  for (int64_t i = 0; i < n; i++)
    if ((int)(rnd() % 100) < pct) put_value(p + (size_t)i * w, type, (int)(rnd() % 120) + 1);
  return data;
}

static void assert_round_trip(const QvSparseTensor *s, const QvTensor *dense) {
  QvError err;
  assert_int_equal(qv_sparse_validate(s, &err), QV_OK);
  QvTensor back;
  assert_int_equal(qv_sparse_to_dense(s, NULL, &back, &err), QV_OK);
  assert_true(qv_tensor_equal(&back, dense, true));
  assert_true(qv_sparse_equal_dense(s, dense));
  /* into a caller buffer too */
  size_t bytes = (size_t)qv_tensor_n_elements(dense) * qv_arrow_type_size(dense->type);
  uint8_t *buf = malloc(bytes + 1);
  assert_int_equal(qv_sparse_to_dense_into(s, buf, bytes, NULL, &err), QV_OK);
  assert_memory_equal(buf, back.data, bytes);
  if (bytes > 0) assert_int_equal(qv_sparse_to_dense_into(s, buf, bytes - 1, NULL, &err), QV_EARG);
  free(buf);
  qv_tensor_reset(&back);
}

static const QvSparseFormat kFormats[4] = {QV_SPARSE_COO, QV_SPARSE_CSR, QV_SPARSE_CSC, QV_SPARSE_CSF};

/* dense -> X -> dense and X -> Y -> X for every pair the shape allows. */
static void check_all_pairs(const QvTensor *dense, QvArrowType itype) {
  QvSparseOptions o = {.index_type = itype};
  QvSparseTensor s[4];
  bool have[4] = {false};
  int64_t nnz = qv_tensor_count_nonzero(dense);
  for (int f = 0; f < 4; f++) {
    QvError err;
    bool two_d = kFormats[f] == QV_SPARSE_CSR || kFormats[f] == QV_SPARSE_CSC;
    QvStatus st = qv_sparse_from_dense(dense, kFormats[f], &o, &s[f], &err);
    if (two_d && dense->ndim != 2) {
      assert_int_equal(st, QV_EINVAL);
      continue;
    }
    assert_int_equal(st, QV_OK);
    have[f] = true;
    assert_int_equal(s[f].nnz, nnz);
    assert_int_equal(s[f].index_type, itype);
    assert_round_trip(&s[f], dense);
  }
  for (int f = 0; f < 4; f++) {
    if (!have[f]) continue;
    for (int g = 0; g < 4; g++) {
      if (!have[g]) continue;
      QvSparseTensor y, x;
      QvError err;
      assert_int_equal(qv_sparse_convert(&s[f], kFormats[g], &o, &y, &err), QV_OK);
      assert_int_equal(y.format, kFormats[g]);
      assert_round_trip(&y, dense);
      assert_true(qv_sparse_equal(&y, &s[f]));
      assert_true(qv_sparse_equal(&y, &s[g]));
      assert_int_equal(qv_sparse_convert(&y, kFormats[f], &o, &x, &err), QV_OK);
      assert_true(qv_sparse_equal(&x, &s[f]));
      assert_round_trip(&x, dense);
      qv_sparse_reset(&x);
      qv_sparse_reset(&y);
    }
  }
  for (int f = 0; f < 4; f++)
    if (have[f]) qv_sparse_reset(&s[f]);
}

static void test_all_value_types_all_pairs(void **state) {
  (void)state;
  static const int64_t s2[2] = {7, 5}, s3[3] = {3, 4, 5}, s1[1] = {11};
  for (int vt = QV_ARROW_INT8; vt < QV_ARROW_NUMERIC_END; vt++) {
    QvTensor d;
    random_dense(&d, (QvArrowType)vt, 2, s2, 30);
    check_all_pairs(&d, QV_ARROW_INT64);
    qv_tensor_reset(&d);
    random_dense(&d, (QvArrowType)vt, 3, s3, 20);
    check_all_pairs(&d, QV_ARROW_INT64);
    qv_tensor_reset(&d);
    random_dense(&d, (QvArrowType)vt, 1, s1, 40);
    check_all_pairs(&d, QV_ARROW_INT64);
    qv_tensor_reset(&d);
  }
}

static void test_all_index_types(void **state) {
  (void)state;
  static const int64_t s2[2] = {9, 6}, s4[4] = {2, 3, 4, 5};
  for (int it = QV_ARROW_INT8; it <= QV_ARROW_UINT64; it++) {
    QvTensor d;
    random_dense(&d, QV_ARROW_FLOAT32, 2, s2, 35);
    check_all_pairs(&d, (QvArrowType)it);
    qv_tensor_reset(&d);
    random_dense(&d, QV_ARROW_INT16, 4, s4, 15);
    check_all_pairs(&d, (QvArrowType)it);
    qv_tensor_reset(&d);
  }
}

/* CSF of every axis order of a 3-D tensor, and CSF -> CSF between them. */
static void test_csf_every_axis_order(void **state) {
  (void)state;
  static const int64_t shape[3] = {4, 3, 5};
  static const int32_t perms[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
  QvTensor d;
  random_dense(&d, QV_ARROW_FLOAT64, 3, shape, 25);
  for (int a = 0; a < 6; a++) {
    QvSparseOptions oa = {.index_type = QV_ARROW_INT32, .axis_order = perms[a]};
    QvSparseTensor s;
    QvError err;
    assert_int_equal(qv_sparse_from_dense(&d, QV_SPARSE_CSF, &oa, &s, &err), QV_OK);
    assert_memory_equal(s.axis_order, perms[a], sizeof perms[a]);
    assert_round_trip(&s, &d);
    for (int b = 0; b < 6; b++) {
      QvSparseOptions ob = {.index_type = QV_ARROW_UINT16, .axis_order = perms[b]};
      QvSparseTensor t;
      assert_int_equal(qv_sparse_convert(&s, QV_SPARSE_CSF, &ob, &t, &err), QV_OK);
      assert_memory_equal(t.axis_order, perms[b], sizeof perms[b]);
      assert_round_trip(&t, &d);
      qv_sparse_reset(&t);
    }
    qv_sparse_reset(&s);
  }
  qv_tensor_reset(&d);
}

/* 2-D CSF in both axis orders (compressed CSR / CSC) from every source,
 * including a column-major dense and CSF -> CSF between the orders. */
static void test_csf_2d_axis_orders(void **state) {
  (void)state;
  static const int64_t shape[2] = {9, 6};
  static const int32_t orders[2][2] = {{0, 1}, {1, 0}};
  QvTensor d, cm;
  QvError err;
  int32_t *v = random_dense(&d, QV_ARROW_INT32, 2, shape, 50);
  /* an empty row and an empty column, so the compression shows */
  for (int64_t j = 0; j < 6; j++) v[4 * 6 + j] = 0;
  for (int64_t i = 0; i < 9; i++) v[i * 6 + 2] = 0;
  assert_int_equal(qv_tensor_copy(&d, true, &cm, &err), QV_OK);
  int64_t nonempty[2] = {0, 0}; /* rows, columns holding a non-zero */
  for (int64_t i = 0; i < 9; i++) {
    bool any = false;
    for (int64_t j = 0; j < 6; j++) any |= ((const int32_t *)(const void *)d.data)[i * 6 + j] != 0;
    nonempty[0] += any;
  }
  for (int64_t j = 0; j < 6; j++) {
    bool any = false;
    for (int64_t i = 0; i < 9; i++) any |= ((const int32_t *)(const void *)d.data)[i * 6 + j] != 0;
    nonempty[1] += any;
  }
  assert_true(nonempty[0] < 9 && nonempty[1] < 6);
  for (int a = 0; a < 2; a++) {
    QvSparseOptions o = {.index_type = QV_ARROW_UINT8, .axis_order = orders[a]};
    QvSparseTensor s, t;
    assert_int_equal(qv_sparse_from_dense(&d, QV_SPARSE_CSF, &o, &s, &err), QV_OK);
    assert_int_equal(s.axis_order[0], orders[a][0]);
    assert_int_equal(s.csf_indices_len[0], nonempty[orders[a][0]]); /* empty ones are skipped */
    assert_round_trip(&s, &d);
    assert_int_equal(qv_sparse_from_dense(&cm, QV_SPARSE_CSF, &o, &t, &err), QV_OK);
    assert_true(qv_sparse_equal(&s, &t));
    assert_memory_equal(t.csf_indices[1], s.csf_indices[1], (size_t)s.nnz);
    qv_sparse_reset(&t);
    for (int f = 0; f < 4; f++) {
      QvSparseTensor x, y;
      assert_int_equal(qv_sparse_convert(&s, kFormats[f], &o, &x, &err), QV_OK);
      assert_round_trip(&x, &d);
      assert_int_equal(qv_sparse_convert(&x, QV_SPARSE_CSF, &o, &y, &err), QV_OK);
      assert_memory_equal(y.axis_order, orders[a], sizeof orders[a]);
      for (int l = 0; l < 2; l++)
        assert_memory_equal(y.csf_indices[l], s.csf_indices[l], (size_t)s.csf_indices_len[l]);
      assert_memory_equal(y.csf_indptr[0], s.csf_indptr[0], (size_t)s.csf_indptr_len[0]);
      qv_sparse_reset(&y);
      qv_sparse_reset(&x);
    }
    qv_sparse_reset(&s);
  }
  qv_tensor_reset(&cm);
  qv_tensor_reset(&d);
}

/* Column-major and strided dense inputs give the same sparse tensors as
 * the row-major copy (Arrow C++ gets COO from these wrong). */
static void test_dense_layouts(void **state) {
  (void)state;
  static const int64_t shapes[3][3] = {{3, 4, 0}, {5, 7, 0}, {2, 3, 4}};
  static const int32_t ndims[3] = {2, 2, 3};
  for (int c = 0; c < 3; c++) {
    QvTensor rm, cm;
    QvError err;
    random_dense(&rm, QV_ARROW_FLOAT64, ndims[c], shapes[c], 40);
    assert_int_equal(qv_tensor_copy(&rm, true, &cm, &err), QV_OK);
    assert_true(qv_tensor_is_column_major(&cm));
    check_all_pairs(&cm, QV_ARROW_INT64);
    for (int f = 0; f < 4; f++) {
      if (ndims[c] != 2 && (f == 1 || f == 2)) continue;
      QvSparseTensor a, b;
      assert_int_equal(qv_sparse_from_dense(&rm, kFormats[f], NULL, &a, &err), QV_OK);
      assert_int_equal(qv_sparse_from_dense(&cm, kFormats[f], NULL, &b, &err), QV_OK);
      /* identical buffers, not merely equal values */
      assert_int_equal(a.nnz, b.nnz);
      assert_memory_equal(a.values, b.values, (size_t)a.nnz * 8);
      if (f == 0) {
        assert_true(b.is_canonical);
        assert_memory_equal(a.coords, b.coords, (size_t)a.nnz * 8 * (size_t)ndims[c]);
      } else if (f < 3) {
        assert_memory_equal(a.indptr, b.indptr, (size_t)a.indptr_len * 8);
        assert_memory_equal(a.indices, b.indices, (size_t)a.nnz * 8);
      }
      qv_sparse_reset(&a);
      qv_sparse_reset(&b);
    }
    qv_tensor_reset(&cm);
    qv_tensor_reset(&rm);
  }

  /* the 3x4 matrix Arrow C++ turns into out-of-range COO from column-major */
  static const double colmajor[12] = {0, 3, 4, 1, 0, 0, 0, 0, 5, 2, 0, 6}; /* memory order */
  static const double rowmajor[12] = {0, 1, 0, 2, 3, 0, 0, 0, 4, 0, 5, 6};
  static const int64_t shape[2] = {3, 4}, cstrides[2] = {8, 24};
  static const int64_t want_coords[12] = {0, 1, 0, 3, 1, 0, 2, 0, 2, 2, 2, 3};
  static const double want_data[6] = {1, 2, 3, 4, 5, 6};
  QvTensor cm, rm;
  QvError err;
  assert_int_equal(qv_tensor_init(&cm, &(QvTensorDesc){.type = QV_ARROW_FLOAT64, .ndim = 2,
                                                       .shape = shape, .strides = cstrides,
                                                       .data = colmajor, .data_size = 96}, &err),
                   QV_OK);
  assert_int_equal(qv_tensor_init(&rm, &(QvTensorDesc){.type = QV_ARROW_FLOAT64, .ndim = 2,
                                                       .shape = shape, .data = rowmajor,
                                                       .data_size = 96}, &err),
                   QV_OK);
  assert_true(qv_tensor_equal(&cm, &rm, false));
  QvSparseTensor coo;
  assert_int_equal(qv_sparse_from_dense(&cm, QV_SPARSE_COO, NULL, &coo, &err), QV_OK);
  assert_int_equal(coo.nnz, 6);
  assert_memory_equal(coo.coords, want_coords, sizeof want_coords);
  assert_memory_equal(coo.values, want_data, sizeof want_data);
  qv_sparse_reset(&coo);

  /* strided: every other column of a 4x6 buffer, and a transposed view */
  double big[24];
  for (int i = 0; i < 24; i++) big[i] = (i % 3 == 0) ? 0.0 : i;
  static const int64_t sshape[2] = {4, 3}, sstrides[2] = {48, 16};
  QvTensor st;
  assert_int_equal(qv_tensor_init(&st, &(QvTensorDesc){.type = QV_ARROW_FLOAT64, .ndim = 2,
                                                       .shape = sshape, .strides = sstrides,
                                                       .data = big, .data_size = sizeof big}, &err),
                   QV_OK);
  assert_false(qv_tensor_is_contiguous(&st));
  check_all_pairs(&st, QV_ARROW_INT64);
  static const int64_t tshape[2] = {6, 4}, tstrides[2] = {8, 48};
  QvTensor tv;
  assert_int_equal(qv_tensor_init(&tv, &(QvTensorDesc){.type = QV_ARROW_FLOAT64, .ndim = 2,
                                                       .shape = tshape, .strides = tstrides,
                                                       .data = big, .data_size = sizeof big}, &err),
                   QV_OK);
  check_all_pairs(&tv, QV_ARROW_UINT8);
  /* a 3-D strided slice (middle dim stepped by 2, last dim reversed-free) */
  int32_t ibuf[2 * 5 * 4];
  for (int i = 0; i < 40; i++) ibuf[i] = (i % 4 == 1) ? 0 : i;
  static const int64_t s3[3] = {2, 3, 4}, st3[3] = {80, 32, 4};
  QvTensor sl;
  assert_int_equal(qv_tensor_init(&sl, &(QvTensorDesc){.type = QV_ARROW_INT32, .ndim = 3,
                                                       .shape = s3, .strides = st3, .data = ibuf,
                                                       .data_size = sizeof ibuf}, &err), QV_OK);
  check_all_pairs(&sl, QV_ARROW_INT16);
  /* extent-1 dims anywhere, with any stride: same buffers as a plain copy */
  static const int64_t s1[4][3] = {{1, 7, 5}, {7, 1, 5}, {7, 5, 1}, {1, 35, 1}};
  for (int k = 0; k < 4; k++) {
    QvTensor a, b;
    random_dense(&a, QV_ARROW_FLOAT64, 3, s1[k], 40);
    assert_int_equal(qv_tensor_copy(&a, true, &b, &err), QV_OK);
    for (int f = 0; f < 4; f += 3) {
      QvSparseTensor x, y;
      assert_int_equal(qv_sparse_from_dense(&a, kFormats[f], NULL, &x, &err), QV_OK);
      assert_int_equal(qv_sparse_from_dense(&b, kFormats[f], NULL, &y, &err), QV_OK);
      assert_true(qv_sparse_equal(&x, &y));
      if (f == 0) assert_memory_equal(x.coords, y.coords, (size_t)x.nnz * 24);
      assert_round_trip(&x, &a);
      qv_sparse_reset(&x);
      qv_sparse_reset(&y);
    }
    qv_tensor_reset(&b);
    qv_tensor_reset(&a);
  }
  /* broadcast (zero stride) */
  static const int64_t bshape[2] = {4, 3}, bstrides[2] = {0, 4};
  static const int32_t row[3] = {5, 0, 7};
  QvTensor bc;
  assert_int_equal(qv_tensor_init(&bc, &(QvTensorDesc){.type = QV_ARROW_INT32, .ndim = 2,
                                                       .shape = bshape, .strides = bstrides,
                                                       .data = row, .data_size = sizeof row}, &err),
                   QV_OK);
  check_all_pairs(&bc, QV_ARROW_INT64);
  qv_tensor_reset(&bc);
  qv_tensor_reset(&sl);
  qv_tensor_reset(&tv);
  qv_tensor_reset(&st);
  qv_tensor_reset(&rm);
  qv_tensor_reset(&cm);
}

static void test_one_d_and_degenerate_shapes(void **state) {
  (void)state;
  /* 1-D: the Arrow example sparse_coo_float64_idx_int64_1d_10 */
  static const double v1[10] = {0, 1.5, 0, 0, -2, 0, 0, 3, 0, 0};
  static const int64_t n10[1] = {10};
  QvTensor d;
  QvError err;
  assert_int_equal(qv_tensor_init(&d, &(QvTensorDesc){.type = QV_ARROW_FLOAT64, .ndim = 1,
                                                      .shape = n10, .data = v1,
                                                      .data_size = sizeof v1}, &err), QV_OK);
  QvSparseTensor s;
  assert_int_equal(qv_sparse_from_dense(&d, QV_SPARSE_COO, NULL, &s, &err), QV_OK);
  static const int64_t c1[3] = {1, 4, 7};
  assert_int_equal(s.nnz, 3);
  assert_memory_equal(s.coords, c1, sizeof c1);
  qv_sparse_reset(&s);
  assert_int_equal(qv_sparse_from_dense(&d, QV_SPARSE_CSF, NULL, &s, &err), QV_OK);
  assert_int_equal(s.csf_indices_len[0], 3);
  assert_memory_equal(s.csf_indices[0], c1, sizeof c1);
  qv_sparse_reset(&s);
  assert_int_equal(qv_sparse_from_dense(&d, QV_SPARSE_CSR, NULL, &s, &err), QV_EINVAL);
  assert_non_null(strstr(err.message, "2-D"));
  check_all_pairs(&d, QV_ARROW_INT8);
  qv_tensor_reset(&d);

  /* 0-d is not a sparse tensor */
  static const double scalar = 3;
  assert_int_equal(qv_tensor_init(&d, &(QvTensorDesc){.type = QV_ARROW_FLOAT64, .data = &scalar,
                                                      .data_size = 8}, &err), QV_OK);
  assert_int_equal(qv_sparse_from_dense(&d, QV_SPARSE_COO, NULL, &s, &err), QV_EINVAL);
  qv_tensor_reset(&d);

  /* zero-length dims and all-zero tensors, every format */
  static const int64_t shapes[6][3] = {{3, 0, 0}, {0, 4, 0}, {0, 0, 0}, {2, 0, 3}, {3, 4, 0}, {2, 3, 4}};
  static const int32_t nd[6] = {2, 2, 2, 3, 2, 3};
  for (int c = 0; c < 6; c++) {
    assert_int_equal(qv_tensor_alloc(&d, QV_ARROW_FLOAT64, nd[c], shapes[c], NULL, c == 4, NULL, &err), QV_OK);
    check_all_pairs(&d, QV_ARROW_INT64);
    for (int f = 0; f < 4; f++) {
      if (nd[c] != 2 && (f == 1 || f == 2)) continue;
      assert_int_equal(qv_sparse_from_dense(&d, kFormats[f], NULL, &s, &err), QV_OK);
      assert_int_equal(s.nnz, 0);
      assert_true(qv_sparse_density(&s) == 0.0);
      if (f == 1) {
        /* CSR of 3x0 is indptr [0, 0, 0, 0] as Arrow writes it */
        assert_int_equal(s.indptr_len, shapes[c][0] + 1);
        for (int64_t k = 0; k < s.indptr_len; k++) assert_int_equal(qv_index_load(s.indptr, s.indptr_type, k), 0);
      }
      if (f == 3) {
        /* CSF of an all-zero tensor: every level empty, indptr [0] */
        for (int l = 0; l < nd[c]; l++) assert_int_equal(s.csf_indices_len[l], 0);
        for (int l = 0; l + 1 < nd[c]; l++) assert_int_equal(s.csf_indptr_len[l], 1);
      }
      qv_sparse_reset(&s);
    }
    qv_tensor_reset(&d);
  }
}

/* -0.0 is a zero, NaN is not; float16 0x0000 and 0x8000 are zeros. */
static void test_zero_by_value(void **state) {
  (void)state;
  static const int64_t shape[2] = {2, 3};
  const double v[6] = {-0.0, NAN, 0.0, 1.0, -0.0, -INFINITY};
  QvTensor d;
  QvError err;
  assert_int_equal(qv_tensor_init(&d, &(QvTensorDesc){.type = QV_ARROW_FLOAT64, .ndim = 2,
                                                      .shape = shape, .data = v,
                                                      .data_size = sizeof v}, &err), QV_OK);
  for (int f = 0; f < 4; f++) {
    QvSparseTensor s;
    assert_int_equal(qv_sparse_from_dense(&d, kFormats[f], NULL, &s, &err), QV_OK);
    assert_int_equal(s.nnz, 3);
    assert_int_equal(s.nnz, qv_tensor_count_nonzero(&d));
    const double *sv = (const double *)(const void *)s.values;
    int nans = 0;
    for (int i = 0; i < 3; i++) nans += isnan(sv[i]) ? 1 : 0;
    assert_int_equal(nans, 1);
    assert_true(qv_sparse_equal_dense(&s, &d));
    qv_sparse_reset(&s);
  }
  check_all_pairs(&d, QV_ARROW_INT64);
  qv_tensor_reset(&d);

  const uint16_t h[6] = {0x0000, 0x8000, 0x7e00, 0x0001, 0x3c00, 0xfc00};
  assert_int_equal(qv_tensor_init(&d, &(QvTensorDesc){.type = QV_ARROW_FLOAT16, .ndim = 2,
                                                      .shape = shape, .data = h,
                                                      .data_size = sizeof h}, &err), QV_OK);
  QvSparseTensor s;
  assert_int_equal(qv_sparse_from_dense(&d, QV_SPARSE_COO, NULL, &s, &err), QV_OK);
  assert_int_equal(s.nnz, 4);
  static const int64_t want[8] = {0, 2, 1, 0, 1, 1, 1, 2};
  assert_memory_equal(s.coords, want, sizeof want);
  static const uint16_t want_v[4] = {0x7e00, 0x0001, 0x3c00, 0xfc00};
  assert_memory_equal(s.values, want_v, sizeof want_v);
  qv_sparse_reset(&s);
  check_all_pairs(&d, QV_ARROW_INT64);
  qv_tensor_reset(&d);

  /* explicit zeros in a sparse tensor equal absent entries */
  static const int64_t coords[4] = {0, 1, 1, 2};
  const double with_zero[2] = {-0.0, 5.0};
  static const double dense_v[6] = {0, 0, 0, 0, 0, 5};
  QvSparseTensor a, b;
  assert_int_equal(qv_sparse_init(&a, &(QvSparseDesc){.format = QV_SPARSE_COO,
                                                      .value_type = QV_ARROW_FLOAT64,
                                                      .index_type = QV_ARROW_INT64, .ndim = 2,
                                                      .shape = shape, .nnz = 2, .coords = coords,
                                                      .is_canonical = true,
                                                      .values = with_zero}, &err),
                   QV_OK);
  assert_int_equal(qv_tensor_init(&d, &(QvTensorDesc){.type = QV_ARROW_FLOAT64, .ndim = 2,
                                                      .shape = shape, .data = dense_v,
                                                      .data_size = sizeof dense_v}, &err),
                   QV_OK);
  assert_true(qv_sparse_equal_dense(&a, &d));
  assert_int_equal(qv_sparse_from_dense(&d, QV_SPARSE_CSR, NULL, &b, &err), QV_OK);
  assert_int_equal(b.nnz, 1);
  assert_true(qv_sparse_equal(&a, &b));
  assert_true(qv_sparse_equal(&b, &a));
  qv_sparse_reset(&b);
  /* different value: not equal; different shape: not equal */
  const double other[2] = {0.0, 6.0};
  assert_int_equal(qv_sparse_init(&b, &(QvSparseDesc){.format = QV_SPARSE_COO,
                                                      .value_type = QV_ARROW_FLOAT64,
                                                      .index_type = QV_ARROW_INT64, .ndim = 2,
                                                      .shape = shape, .nnz = 2, .coords = coords,
                                                      .is_canonical = true, .values = other}, &err),
                   QV_OK);
  assert_false(qv_sparse_equal(&a, &b));
  assert_false(qv_sparse_equal_dense(&b, &d));
  qv_sparse_reset(&b);
  static const int64_t shape2[2] = {3, 3};
  assert_int_equal(qv_sparse_init(&b, &(QvSparseDesc){.format = QV_SPARSE_COO,
                                                      .value_type = QV_ARROW_FLOAT64,
                                                      .index_type = QV_ARROW_INT64, .ndim = 2,
                                                      .shape = shape2, .nnz = 2, .coords = coords,
                                                      .is_canonical = true,
                                                      .values = with_zero}, &err),
                   QV_OK);
  assert_false(qv_sparse_equal(&a, &b));
  qv_sparse_reset(&b);
  qv_sparse_reset(&a);
  qv_tensor_reset(&d);
}

/* Duplicates are summed (in entry order) as SciPy does; unsorted input. */
static void test_canonicalize_duplicates(void **state) {
  (void)state;
  static const int64_t shape[2] = {3, 4};
  static const int64_t coords[12] = {2, 1, 0, 3, 2, 1, 0, 0, 0, 3, 2, 1};
  const double vals[6] = {1.5, 2, 10, -1, 4, 0.25};
  QvSparseTensor coo, c, csr, csc, csf;
  QvError err;
  assert_int_equal(qv_sparse_init(&coo, &(QvSparseDesc){.format = QV_SPARSE_COO,
                                                        .value_type = QV_ARROW_FLOAT64,
                                                        .index_type = QV_ARROW_INT64, .ndim = 2,
                                                        .shape = shape, .nnz = 6, .coords = coords,
                                                        .values = vals}, &err),
                   QV_OK);
  /* claiming canonical is refused */
  QvSparseTensor bad;
  assert_int_equal(qv_sparse_init(&bad, &(QvSparseDesc){.format = QV_SPARSE_COO,
                                                        .value_type = QV_ARROW_FLOAT64,
                                                        .index_type = QV_ARROW_INT64, .ndim = 2,
                                                        .shape = shape, .nnz = 6, .coords = coords,
                                                        .is_canonical = true,
                                                        .values = vals}, &err),
                   QV_EINVAL);
  assert_int_equal(qv_sparse_canonicalize(&coo, NULL, &c, &err), QV_OK);
  static const int64_t want_c[6] = {0, 0, 0, 3, 2, 1};
  const double want_v[3] = {-1, 6, 11.75};
  assert_true(c.is_canonical);
  assert_int_equal(c.nnz, 3);
  assert_memory_equal(c.coords, want_c, sizeof want_c);
  assert_memory_equal(c.values, want_v, sizeof want_v);
  double dense[12], want_dense[12] = {0};
  want_dense[0] = -1;
  want_dense[3] = 6;
  want_dense[9] = 11.75;
  assert_int_equal(qv_sparse_to_dense_into(&coo, dense, sizeof dense, NULL, &err), QV_OK);
  assert_memory_equal(dense, want_dense, sizeof dense);
  assert_true(qv_sparse_equal(&coo, &c));
  /* straight to CSR / CSC / CSF sums them too */
  assert_int_equal(qv_sparse_convert(&coo, QV_SPARSE_CSR, NULL, &csr, &err), QV_OK);
  static const int64_t p_r[4] = {0, 2, 2, 3}, i_r[3] = {0, 3, 1};
  assert_int_equal(csr.nnz, 3);
  assert_memory_equal(csr.indptr, p_r, sizeof p_r);
  assert_memory_equal(csr.indices, i_r, sizeof i_r);
  assert_memory_equal(csr.values, want_v, sizeof want_v);
  assert_int_equal(qv_sparse_convert(&coo, QV_SPARSE_CSC, NULL, &csc, &err), QV_OK);
  static const int64_t p_c[5] = {0, 1, 2, 2, 3}, i_c[3] = {0, 2, 0};
  const double v_c[3] = {-1, 11.75, 6};
  assert_memory_equal(csc.indptr, p_c, sizeof p_c);
  assert_memory_equal(csc.indices, i_c, sizeof i_c);
  assert_memory_equal(csc.values, v_c, sizeof v_c);
  assert_int_equal(qv_sparse_convert(&coo, QV_SPARSE_CSF, NULL, &csf, &err), QV_OK);
  assert_int_equal(csf.nnz, 3);
  assert_true(qv_sparse_equal(&csf, &c));
  qv_sparse_reset(&csf);
  qv_sparse_reset(&csc);
  qv_sparse_reset(&csr);
  qv_sparse_reset(&c);
  qv_sparse_reset(&coo);

  /* integer sums wrap as in NumPy; float16 sums round to half */
  static const int64_t one[1] = {1}, c2[2] = {0, 0};
  const int8_t i8[2] = {127, 1};
  assert_int_equal(qv_sparse_init(&coo, &(QvSparseDesc){.format = QV_SPARSE_COO,
                                                        .value_type = QV_ARROW_INT8,
                                                        .index_type = QV_ARROW_INT64, .ndim = 1,
                                                        .shape = one, .nnz = 2, .coords = c2,
                                                        .values = i8}, &err),
                   QV_OK);
  assert_int_equal(qv_sparse_canonicalize(&coo, NULL, &c, &err), QV_OK);
  assert_int_equal(c.nnz, 1);
  assert_int_equal((int8_t)c.values[0], -128);
  qv_sparse_reset(&c);
  qv_sparse_reset(&coo);
  const uint16_t h[2] = {0x3c00 /* 1 */, 0x3800 /* 0.5 */};
  assert_int_equal(qv_sparse_init(&coo, &(QvSparseDesc){.format = QV_SPARSE_COO,
                                                        .value_type = QV_ARROW_FLOAT16,
                                                        .index_type = QV_ARROW_INT64, .ndim = 1,
                                                        .shape = one, .nnz = 2, .coords = c2,
                                                        .values = h}, &err),
                   QV_OK);
  assert_int_equal(qv_sparse_canonicalize(&coo, NULL, &c, &err), QV_OK);
  uint16_t hv;
  memcpy(&hv, c.values, 2);
  assert_int_equal(hv, 0x3e00); /* 1.5 */
  qv_sparse_reset(&c);
  /* canonicalize accepts only COO */
  assert_int_equal(qv_sparse_convert(&coo, QV_SPARSE_CSF, NULL, &csf, &err), QV_OK);
  assert_int_equal(qv_sparse_canonicalize(&csf, NULL, &c, &err), QV_EARG);
  qv_sparse_reset(&csf);
  qv_sparse_reset(&coo);
}

/* CSR/CSC canonicalization (what the .npz reader does to SciPy's
 * unsorted rows): a hand-built CSR whose rows are out of order and repeat,
 * sorted and summed in entry order into new buffers of the input's types,
 * zero sums kept; CSC likewise along columns; the rules other than order
 * still refused. */
static void test_canonicalize_csx(void **state) {
  (void)state;
  QvError err;
  static const int64_t shape[2] = {3, 5};
  /* rows {3, 1, 3}, {}, {2, 0, 2, 2}: 5 + -5 stays an explicit zero */
  const int32_t indptr[4] = {0, 3, 3, 7};
  const int16_t indices[7] = {3, 1, 3, 2, 0, 2, 2};
  const int64_t values[7] = {10, 20, 1, 5, 40, -5, 0};
  QvSparseTensor raw = {.format = QV_SPARSE_CSR, .value_type = QV_ARROW_INT64,
                        .index_type = QV_ARROW_INT16, .indptr_type = QV_ARROW_INT32, .ndim = 2,
                        .shape = shape, .nnz = 7, .values = (const uint8_t *)values,
                        .indptr = (const uint8_t *)indptr, .indices = (const uint8_t *)indices,
                        .indptr_len = 4, .indices_len = 7};
  assert_int_equal(qv_sparse_validate(&raw, NULL), QV_EINVAL);
  QvSparseTensor c;
  assert_int_equal(qv_sparse_canonicalize(&raw, NULL, &c, &err), QV_OK);
  assert_int_equal(qv_sparse_validate(&c, &err), QV_OK);
  assert_int_equal(c.format, QV_SPARSE_CSR);
  assert_int_equal(c.indptr_type, QV_ARROW_INT32);
  assert_int_equal(c.index_type, QV_ARROW_INT16);
  assert_int_equal(c.nnz, 4);
  const int32_t want_ptr[4] = {0, 2, 2, 4};
  const int16_t want_idx[4] = {1, 3, 0, 2};
  const int64_t want_val[4] = {20, 11, 40, 0};
  assert_memory_equal(c.indptr, want_ptr, sizeof want_ptr);
  assert_memory_equal(c.indices, want_idx, sizeof want_idx);
  assert_memory_equal(c.values, want_val, sizeof want_val);
  /* a valid input comes out equal; an index type asked for is used for both */
  QvSparseTensor again, wide;
  assert_int_equal(qv_sparse_canonicalize(&c, NULL, &again, &err), QV_OK);
  assert_int_equal(again.nnz, 4);
  assert_memory_equal(again.indices, want_idx, sizeof want_idx);
  QvSparseOptions i64 = {.index_type = QV_ARROW_INT64};
  assert_int_equal(qv_sparse_canonicalize(&raw, &i64, &wide, &err), QV_OK);
  assert_int_equal(wide.index_type, QV_ARROW_INT64);
  assert_int_equal(wide.indptr_type, QV_ARROW_INT64);
  assert_true(qv_sparse_equal(&wide, &c));
  qv_sparse_reset(&wide);
  qv_sparse_reset(&again);
  qv_sparse_reset(&c);
  QvSparseOptions tiny = {.max_output_size = 16};
  assert_int_equal(qv_sparse_canonicalize(&raw, &tiny, &c, &err), QV_ELIMIT);
  assert_null(c.private_data);
  /* CSC: the same arrays along columns of a 5 x 3 matrix; float16 sums
   * round after each addition */
  static const int64_t tshape[2] = {5, 3};
  const uint16_t h[7] = {0x3c00, 0x3c00, 0x1000, 0x3c00, 0x3c00, 0x1000, 0x1000};
  QvSparseTensor csc = raw;
  csc.format = QV_SPARSE_CSC;
  csc.shape = tshape;
  csc.value_type = QV_ARROW_FLOAT16;
  csc.values = (const uint8_t *)h;
  assert_int_equal(qv_sparse_canonicalize(&csc, NULL, &c, &err), QV_OK);
  assert_int_equal(c.format, QV_SPARSE_CSC);
  assert_int_equal(c.nnz, 4);
  assert_memory_equal(c.indices, want_idx, sizeof want_idx);
  /* column 0: 1 and 1 + 2^-11 (a tie: 1); column 2: 1 and 1 + 2^-11 + 2^-11,
   * 1 when rounded after each addition (exactly summed it would be 0x3c01) */
  const uint16_t want_h[4] = {0x3c00, 0x3c00, 0x3c00, 0x3c00};
  assert_memory_equal(c.values, want_h, sizeof want_h);
  qv_sparse_reset(&c);
  /* out of range, a decreasing indptr: refused as qv_sparse_validate would */
  int16_t bad_idx[7] = {3, 1, 5, 2, 0, 2, 2};
  QvSparseTensor bad = raw;
  bad.indices = (const uint8_t *)bad_idx;
  assert_int_equal(qv_sparse_canonicalize(&bad, NULL, &c, &err), QV_EINVAL);
  assert_non_null(strstr(err.message, "out of range"));
  assert_null(c.private_data);
  const int32_t bad_ptr[4] = {0, 4, 3, 7};
  bad = raw;
  bad.indptr = (const uint8_t *)bad_ptr;
  assert_int_equal(qv_sparse_canonicalize(&bad, NULL, &c, &err), QV_EINVAL);
  assert_non_null(strstr(err.message, "decreasing"));
  assert_int_equal(qv_sparse_canonicalize(&raw, NULL, &raw, &err), QV_EARG);
}

/* Actual values decide whether an index type fits, not the extents. */
static void test_index_type_fit(void **state) {
  (void)state;
  QvError err;
  QvSparseTensor s;
  /* 10x30, 216 non-zeros, int8: every coordinate fits (Arrow refuses) */
  static const int64_t s1030[2] = {10, 30};
  QvTensor d;
  void *data;
  assert_int_equal(qv_tensor_alloc(&d, QV_ARROW_FLOAT64, 2, s1030, NULL, false, &data, &err), QV_OK);
  double *p = data;
  for (int i = 0; i < 216; i++) p[i] = i + 1;
  QvSparseOptions i8 = {.index_type = QV_ARROW_INT8};
  assert_int_equal(qv_sparse_from_dense(&d, QV_SPARSE_COO, &i8, &s, &err), QV_OK);
  assert_int_equal(s.nnz, 216);
  assert_round_trip(&s, &d);
  qv_sparse_reset(&s);
  /* but an indptr must hold nnz = 216 > 127 */
  assert_int_equal(qv_sparse_from_dense(&d, QV_SPARSE_CSR, &i8, &s, &err), QV_EINVAL);
  assert_non_null(strstr(err.message, "CSR indptr: value 216"));
  assert_non_null(strstr(err.message, "int8 (max 127)"));
  assert_null(s.private_data);
  assert_int_equal(qv_sparse_from_dense(&d, QV_SPARSE_CSC, &i8, &s, &err), QV_EINVAL);
  assert_non_null(strstr(err.message, "CSC indptr: value 216"));
  assert_int_equal(qv_sparse_from_dense(&d, QV_SPARSE_CSF, &i8, &s, &err), QV_EINVAL);
  assert_non_null(strstr(err.message, "CSF indptr[0]: value 216"));
  QvSparseOptions u8 = {.index_type = QV_ARROW_UINT8};
  for (int f = 1; f < 4; f++) {
    assert_int_equal(qv_sparse_from_dense(&d, kFormats[f], &u8, &s, &err), QV_OK);
    assert_round_trip(&s, &d);
    qv_sparse_reset(&s);
  }
  qv_tensor_reset(&d);

  /* 2x200 with a non-zero in column 150: int8 fails naming it, uint8 fits */
  static const int64_t s2x200[2] = {2, 200};
  assert_int_equal(qv_tensor_alloc(&d, QV_ARROW_FLOAT64, 2, s2x200, NULL, false, &data, &err), QV_OK);
  p = data;
  p[5] = 1;
  p[200 + 150] = 2;
  assert_int_equal(qv_sparse_from_dense(&d, QV_SPARSE_COO, &i8, &s, &err), QV_EINVAL);
  assert_non_null(strstr(err.message, "COO coords: value 150 (coordinate of dim 1 at non-zero 1)"));
  assert_int_equal(qv_sparse_from_dense(&d, QV_SPARSE_CSR, &i8, &s, &err), QV_EINVAL);
  assert_non_null(strstr(err.message, "CSR indices: value 150 at position 1"));
  QvSparseOptions o3 = {.index_type = QV_ARROW_INT8, .axis_order = (const int32_t[]){1, 0}};
  assert_int_equal(qv_sparse_from_dense(&d, QV_SPARSE_CSF, &o3, &s, &err), QV_EINVAL);
  assert_non_null(strstr(err.message, "CSF indices[0]: value 150"));
  assert_int_equal(qv_sparse_from_dense(&d, QV_SPARSE_COO, &u8, &s, &err), QV_OK);
  /* narrowing a wider sparse tensor goes through the same check */
  QvSparseTensor t;
  assert_int_equal(qv_sparse_convert(&s, QV_SPARSE_CSR, &i8, &t, &err), QV_EINVAL);
  assert_non_null(strstr(err.message, "CSR indices: value 150"));
  assert_int_equal(qv_sparse_convert(&s, QV_SPARSE_CSR, &u8, &t, &err), QV_OK);
  assert_int_equal(t.indptr_type, QV_ARROW_UINT8);
  qv_sparse_reset(&t);
  /* CSC keeps the columns in the indptr (201 entries, values <= 2): int8 fits */
  assert_int_equal(qv_sparse_convert(&s, QV_SPARSE_CSC, &i8, &t, &err), QV_OK);
  assert_round_trip(&t, &d);
  qv_sparse_reset(&t);
  qv_sparse_reset(&s);
  qv_tensor_reset(&d);

  /* bad options */
  QvSparseOptions fl = {.index_type = QV_ARROW_FLOAT32};
  static const int64_t s22[2] = {2, 2};
  assert_int_equal(qv_tensor_alloc(&d, QV_ARROW_FLOAT64, 2, s22, NULL, false, NULL, &err), QV_OK);
  assert_int_equal(qv_sparse_from_dense(&d, QV_SPARSE_COO, &fl, &s, &err), QV_EARG);
  QvSparseOptions perm = {.index_type = QV_ARROW_INT64, .axis_order = (const int32_t[]){1, 1}};
  assert_int_equal(qv_sparse_from_dense(&d, QV_SPARSE_CSF, &perm, &s, &err), QV_EARG);
  assert_non_null(strstr(err.message, "not a permutation"));
  assert_int_equal(qv_sparse_from_dense(&d, (QvSparseFormat)9, NULL, &s, &err), QV_EARG);
  qv_tensor_reset(&d);
}

/* Names travel through every conversion; density. */
static void test_names_and_density(void **state) {
  (void)state;
  static const int64_t shape[2] = {4, 5};
  static const char *const names[2] = {"row", "col"};
  static double v[20];
  v[3] = 1;
  v[7] = 2;
  v[19] = 3;
  QvTensor d, back;
  QvError err;
  assert_int_equal(qv_tensor_init(&d, &(QvTensorDesc){.type = QV_ARROW_FLOAT64, .ndim = 2,
                                                      .shape = shape, .dim_names = names, .data = v,
                                                      .data_size = sizeof v}, &err), QV_OK);
  for (int f = 0; f < 4; f++) {
    QvSparseTensor s, t;
    assert_int_equal(qv_sparse_from_dense(&d, kFormats[f], NULL, &s, &err), QV_OK);
    assert_non_null(s.dim_names);
    assert_string_equal(s.dim_names[1], "col");
    assert_true(qv_sparse_density(&s) == 3.0 / 20.0);
    assert_int_equal(qv_sparse_convert(&s, kFormats[(f + 1) % 4], NULL, &t, &err), QV_OK);
    assert_string_equal(t.dim_names[0], "row");
    assert_int_equal(qv_sparse_to_dense(&t, NULL, &back, &err), QV_OK);
    assert_string_equal(back.dim_names[1], "col");
    qv_tensor_reset(&back);
    qv_sparse_reset(&t);
    qv_sparse_reset(&s);
  }
  qv_tensor_reset(&d);
  assert_string_equal(qv_sparse_format_name(QV_SPARSE_CSC), "csc");
  QvSparseFormat f;
  assert_int_equal(qv_sparse_format_parse("CSF", &f, &err), QV_OK);
  assert_int_equal(f, QV_SPARSE_CSF);
  assert_int_equal(qv_sparse_format_parse("csb", &f, &err), QV_EINVAL);
}

/* Random COO with duplicates and long unsorted rows (merge-sort path),
 * checked against a dense accumulation; small (direct scatter) and large
 * (bucketed two-pass scatter) inputs, CSR and CSC orientation. */
static void random_coo_case(int64_t R, int64_t C, int64_t N, QvArrowType vt) {
  const int64_t shape[2] = {R, C};
  size_t vs = qv_arrow_type_size(vt);
  int64_t *coords = malloc(sizeof(int64_t) * 2 * (size_t)N);
  uint8_t *vals = malloc(vs * (size_t)N);
  int *acc = calloc((size_t)(R * C), sizeof(int));
  for (int64_t i = 0; i < N; i++) {
    int64_t r = (int64_t)(rnd() % (uint64_t)R), c = (int64_t)(rnd() % (uint64_t)C);
    if (i % 3 == 0) r = 7; /* one long row */
    if (i % 5 == 0 && r != 7) c = 3; /* one long column, not crossing the long row */
    coords[2 * i] = r;
    coords[2 * i + 1] = c;
    /* small integers: every sum stays exact in every value type */
    int v = (int)(rnd() % 3) + 1;
    put_value(vals + (size_t)i * vs, vt, v);
    acc[r * C + c] += v;
  }
  QvTensor d;
  QvError err;
  void *data;
  assert_int_equal(qv_tensor_alloc(&d, vt, 2, shape, NULL, false, &data, &err), QV_OK);
  uint8_t *dst = data;
  for (int64_t k = 0; k < R * C; k++)
    if (acc[k] != 0) put_value(dst + (size_t)k * vs, vt, acc[k]);
  QvSparseTensor coo;
  assert_int_equal(qv_sparse_init(&coo, &(QvSparseDesc){.format = QV_SPARSE_COO, .value_type = vt,
                                                        .index_type = QV_ARROW_INT64, .ndim = 2,
                                                        .shape = shape, .nnz = N, .coords = coords,
                                                        .values = vals}, &err),
                   QV_OK);
  assert_round_trip(&coo, &d);
  for (int f = 0; f < 4; f++) {
    QvSparseTensor s;
    assert_int_equal(qv_sparse_convert(&coo, kFormats[f], NULL, &s, &err), QV_OK);
    assert_int_equal(s.nnz, qv_tensor_count_nonzero(&d));
    assert_round_trip(&s, &d);
    if (kFormats[f] == QV_SPARSE_CSR || kFormats[f] == QV_SPARSE_CSC) {
      /* the transpose (bucketed too when large) */
      QvSparseTensor t;
      assert_int_equal(qv_sparse_convert(&s, kFormats[f] == QV_SPARSE_CSR ? QV_SPARSE_CSC : QV_SPARSE_CSR, NULL, &t,
                                         &err),
                       QV_OK);
      assert_round_trip(&t, &d);
      qv_sparse_reset(&t);
    }
    qv_sparse_reset(&s);
  }
  qv_sparse_reset(&coo);
  qv_tensor_reset(&d);
  free(acc);
  free(vals);
  free(coords);
}

/* Bucketed grouping checked against the canonical COO (sorted by the
 * O(nnz) radix path): `minor_bits` of random minor index, drawn from few
 * distinct values so that rows hold duplicates, with 32-bit values. */
static void bucketed_vs_canonical(int64_t nrows, int64_t ncols, int minor_shift, int64_t N) {
  const int64_t shape[2] = {nrows, ncols};
  int64_t *c = malloc(sizeof(int64_t) * 2 * (size_t)N);
  int32_t *v = malloc(sizeof(int32_t) * (size_t)N);
  for (int64_t i = 0; i < N; i++) {
    c[2 * i] = (int64_t)(rnd() % (uint64_t)nrows);
    c[2 * i + 1] = ((int64_t)(rnd() % 64) << minor_shift | (int64_t)(rnd() % 4)) % ncols; /* duplicates too */
    v[i] = (int32_t)(rnd() % 5) + 1;
  }
  QvSparseTensor coo, canon, csr, back;
  QvError err;
  assert_int_equal(qv_sparse_init(&coo, &(QvSparseDesc){.format = QV_SPARSE_COO,
                                                        .value_type = QV_ARROW_INT32,
                                                        .index_type = QV_ARROW_INT64, .ndim = 2,
                                                        .shape = shape, .nnz = N, .coords = c,
                                                        .values = v}, &err),
                   QV_OK);
  assert_int_equal(qv_sparse_canonicalize(&coo, NULL, &canon, &err), QV_OK);
  /* every caller's input is large enough for the buckets: prove they ran */
  uint64_t runs = qvi_path_count(QV_PATH_GROUP_BUCKETED);
  assert_int_equal(qv_sparse_convert(&coo, QV_SPARSE_CSR, NULL, &csr, &err), QV_OK);
  assert_int_equal(qvi_path_count(QV_PATH_GROUP_BUCKETED), runs + 1);
  assert_int_equal(csr.nnz, canon.nnz);
  assert_true(canon.nnz < N);
  assert_int_equal(qv_sparse_validate(&csr, &err), QV_OK);
  assert_int_equal(qv_sparse_convert(&csr, QV_SPARSE_COO, NULL, &back, &err), QV_OK);
  assert_memory_equal(back.coords, canon.coords, (size_t)canon.nnz * 16);
  assert_memory_equal(back.values, canon.values, (size_t)canon.nnz * 4);
  assert_true(qv_sparse_equal(&csr, &coo));
  qv_sparse_reset(&back);
  qv_sparse_reset(&csr);
  qv_sparse_reset(&canon);
  qv_sparse_reset(&coo);
  free(v);
  free(c);
}

/* Huge minor extent: the bucketed grouping cannot pack key bits above the
 * minor index and keeps them in a side array. */
static void test_bucketed_huge_minor(void **state) {
  (void)state;
  bucketed_vs_canonical(5000, INT64_C(1) << 60, 54, 270000);
}

/* Minor extents needing one, two and three radix digits in the packed
 * per-bucket passes (up to 33-bit minors), and one more. */
static void test_bucketed_digit_counts(void **state) {
  (void)state;
  bucketed_vs_canonical(5000, 1000, 4, 270000);
  bucketed_vs_canonical(5000, INT64_C(1) << 20, 14, 270000);
  bucketed_vs_canonical(8192, INT64_C(1) << 28, 22, 300000);
  bucketed_vs_canonical(4100, INT64_C(1) << 31, 25, 600000);
  bucketed_vs_canonical(4100, INT64_C(1) << 33, 27, 300000);
  bucketed_vs_canonical(4100, INT64_C(1) << 34, 28, 300000); /* four digits: the general path */
}

static void test_random_coo_to_csx(void **state) {
  (void)state;
  random_coo_case(60, 700, 20000, QV_ARROW_FLOAT64);
  random_coo_case(5000, 5003, 300000, QV_ARROW_FLOAT64);
  random_coo_case(9000, 40, 280000, QV_ARROW_INT32);
  random_coo_case(700, 9001, 270000, QV_ARROW_FLOAT16);
  random_coo_case(5000, 1000, 270000, QV_ARROW_INT16);
}

static int cmp_rows(const void *a, const void *b) {
  const int64_t *x = a, *y = b;
  for (int d = 0; d < 2; d++)
    if (x[d] != y[d]) return x[d] < y[d] ? -1 : 1;
  return 0;
}

/* Shapes far too large for a dense tensor: conversions stay O(nnz). */
static void test_huge_shapes(void **state) {
  (void)state;
  enum { N = 5000 };
  int64_t *coords = malloc(sizeof(int64_t) * 2 * N);
  double *vals = malloc(sizeof(double) * N);
  static const int64_t big[2] = {INT64_MAX, INT64_C(3) << 45}; /* 16-bit radix passes */
  for (int i = 0; i < N; i++) {
    coords[2 * i] = (int64_t)(rnd() % (uint64_t)big[0]);
    coords[2 * i + 1] = (int64_t)(rnd() % (uint64_t)big[1]);
    vals[i] = i + 1;
  }
  QvSparseTensor coo, c, csf, back;
  QvError err;
  assert_int_equal(qv_sparse_init(&coo, &(QvSparseDesc){.format = QV_SPARSE_COO,
                                                        .value_type = QV_ARROW_FLOAT64,
                                                        .index_type = QV_ARROW_INT64, .ndim = 2,
                                                        .shape = big, .nnz = N, .coords = coords,
                                                        .values = vals}, &err),
                   QV_OK);
  assert_int_equal(qv_sparse_canonicalize(&coo, NULL, &c, &err), QV_OK);
  int64_t *sorted = malloc(sizeof(int64_t) * 2 * N);
  memcpy(sorted, coords, sizeof(int64_t) * 2 * N);
  qsort(sorted, N, 16, cmp_rows);
  assert_int_equal(c.nnz, N); /* random 40/46-bit coordinates: no duplicates */
  assert_memory_equal(c.coords, sorted, sizeof(int64_t) * 2 * N);
  const int32_t rev[2] = {1, 0};
  QvSparseOptions o = {.index_type = QV_ARROW_INT64, .axis_order = rev};
  assert_int_equal(qv_sparse_convert(&coo, QV_SPARSE_CSF, &o, &csf, &err), QV_OK);
  assert_int_equal(qv_sparse_convert(&csf, QV_SPARSE_COO, NULL, &back, &err), QV_OK);
  assert_memory_equal(back.coords, sorted, sizeof(int64_t) * 2 * N);
  assert_true(qv_sparse_equal(&back, &coo));
  assert_true(qv_sparse_density(&coo) > 0.0);
  /* the dense form cannot exist */
  QvTensor d;
  assert_int_equal(qv_sparse_to_dense(&coo, NULL, &d, &err), QV_ELIMIT);
  /* CSR of INT64_MAX rows needs an indptr that large: a clean error */
  QvSparseTensor csr;
  assert_int_not_equal(qv_sparse_convert(&coo, QV_SPARSE_CSR, NULL, &csr, &err), QV_OK);
  assert_null(csr.private_data);
  qv_sparse_reset(&back);
  qv_sparse_reset(&csf);
  qv_sparse_reset(&c);
  qv_sparse_reset(&coo);

  /* 10^6 x 10^6, COO <-> CSR <-> CSC with modest nnz */
  static const int64_t m[2] = {1000000, 1000000};
  for (int i = 0; i < N; i++) {
    coords[2 * i] = (int64_t)(rnd() % 1000000);
    coords[2 * i + 1] = (int64_t)(rnd() % 1000000);
  }
  assert_int_equal(qv_sparse_init(&coo, &(QvSparseDesc){.format = QV_SPARSE_COO,
                                                        .value_type = QV_ARROW_FLOAT64,
                                                        .index_type = QV_ARROW_INT64, .ndim = 2,
                                                        .shape = m, .nnz = N, .coords = coords,
                                                        .values = vals}, &err),
                   QV_OK);
  QvSparseTensor csc;
  QvSparseOptions i32 = {.index_type = QV_ARROW_INT32};
  assert_int_equal(qv_sparse_convert(&coo, QV_SPARSE_CSR, &i32, &csr, &err), QV_OK);
  assert_int_equal(qv_sparse_convert(&csr, QV_SPARSE_CSC, NULL, &csc, &err), QV_OK);
  assert_int_equal(qv_sparse_convert(&csc, QV_SPARSE_COO, NULL, &back, &err), QV_OK);
  assert_true(qv_sparse_equal(&back, &coo));
  assert_true(qv_sparse_equal(&csr, &csc));
  qv_sparse_reset(&back);
  qv_sparse_reset(&csc);
  qv_sparse_reset(&csr);
  qv_sparse_reset(&coo);
  free(sorted);
  free(vals);
  free(coords);
}

/* max_output_size: the worst case (every element non-zero) first, then the
 * counted non-zeros, broadcast dims counted once. */
static void test_max_output_size(void **state) {
  (void)state;
  QvError err;
  QvSparseTensor sp;
  /* [100000, 100000] float64, strides 0: one stored value */
  static const int64_t huge[2] = {100000, 100000}, zero[2] = {0, 0};
  double one = 1.0, nil = 0.0;
  QvTensor t;
  assert_int_equal(qv_tensor_init(&t, &(QvTensorDesc){.type = QV_ARROW_FLOAT64, .ndim = 2,
                                                      .shape = huge, .strides = zero,
                                                      .data = &one, .data_size = 8}, &err),
                   QV_OK);
  assert_int_equal(qv_sparse_from_dense(&t, QV_SPARSE_COO, NULL, &sp, &err), QV_ELIMIT);
  assert_null(sp.private_data);
  /* 10^10 x (2 int64 coordinates + 1 float64) */
  assert_non_null(strstr(err.message, "output of 240000000000 bytes exceeds the limit of 17179869184"));
  assert_int_equal(qv_sparse_from_dense(&t, QV_SPARSE_CSR, NULL, &sp, &err), QV_ELIMIT);
  qv_tensor_reset(&t);
  /* the same shape all zeros: counted (one element walked), nothing produced */
  assert_int_equal(qv_tensor_init(&t, &(QvTensorDesc){.type = QV_ARROW_FLOAT64, .ndim = 2,
                                                      .shape = huge, .strides = zero,
                                                      .data = &nil, .data_size = 8}, &err),
                   QV_OK);
  assert_int_equal(qv_sparse_from_dense(&t, QV_SPARSE_COO, NULL, &sp, &err), QV_OK);
  assert_int_equal(sp.nnz, 0);
  qv_sparse_reset(&sp);
  qv_tensor_reset(&t);

  /* 3x5 with 2 non-zeros: worst case 15 x 24 = 360 bytes, produced 48 */
  static const int64_t small[2] = {3, 5};
  double v[15] = {0};
  v[3] = 2.0;
  v[11] = -1.0;
  assert_int_equal(qv_tensor_init(&t, &(QvTensorDesc){.type = QV_ARROW_FLOAT64, .ndim = 2,
                                                      .shape = small, .data = v,
                                                      .data_size = sizeof v}, &err),
                   QV_OK);
  QvSparseOptions o = {.struct_size = sizeof o, .max_output_size = 100};
  assert_int_equal(qv_sparse_from_dense(&t, QV_SPARSE_COO, &o, &sp, &err), QV_OK);
  assert_int_equal(sp.nnz, 2);
  o.max_output_size = 48;
  QvSparseTensor again;
  assert_int_equal(qv_sparse_from_dense(&t, QV_SPARSE_COO, &o, &again, &err), QV_OK);
  qv_sparse_reset(&again);
  o.max_output_size = 47;
  assert_int_equal(qv_sparse_from_dense(&t, QV_SPARSE_COO, &o, &again, &err), QV_ELIMIT);
  assert_non_null(strstr(err.message, "output of 48 bytes exceeds the limit of 47 (max_output_size)"));
  /* CSR adds its indptr: 4 x 8 */
  o.max_output_size = 48 + 32 - 1;
  assert_int_equal(qv_sparse_from_dense(&t, QV_SPARSE_CSR, &o, &again, &err), QV_ELIMIT);
  o.max_output_size = 48 + 32;
  assert_int_equal(qv_sparse_from_dense(&t, QV_SPARSE_CSR, &o, &again, &err), QV_OK);
  qv_sparse_reset(&again);
  /* sparse -> sparse: bounded by the input's nnz */
  o.max_output_size = 47;
  assert_int_equal(qv_sparse_convert(&sp, QV_SPARSE_CSF, &o, &again, &err), QV_ELIMIT);
  assert_null(again.private_data);
  o.max_output_size = 0; /* the default */
  assert_int_equal(qv_sparse_convert(&sp, QV_SPARSE_CSF, &o, &again, &err), QV_OK);
  qv_sparse_reset(&again);
  o.max_output_size = -1;
  assert_int_equal(qv_sparse_convert(&sp, QV_SPARSE_COO, &o, &again, &err), QV_EARG);
  qv_sparse_reset(&sp);
  qv_tensor_reset(&t);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_all_value_types_all_pairs),
      cmocka_unit_test(test_all_index_types),
      cmocka_unit_test(test_csf_every_axis_order),
      cmocka_unit_test(test_csf_2d_axis_orders),
      cmocka_unit_test(test_dense_layouts),
      cmocka_unit_test(test_one_d_and_degenerate_shapes),
      cmocka_unit_test(test_zero_by_value),
      cmocka_unit_test(test_canonicalize_duplicates),
      cmocka_unit_test(test_canonicalize_csx),
      cmocka_unit_test(test_index_type_fit),
      cmocka_unit_test(test_names_and_density),
      cmocka_unit_test(test_random_coo_to_csx),
      cmocka_unit_test(test_bucketed_huge_minor),
      cmocka_unit_test(test_bucketed_digit_counts),
      cmocka_unit_test(test_huge_shapes),
      cmocka_unit_test(test_max_output_size),
  };
  return qv_test_run(tests, NULL, NULL);
}
