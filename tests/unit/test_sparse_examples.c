/* The worked examples in the comments of Arrow's format/SparseTensor.fbs,
 * with the exact buffers Arrow C++ wrote for them (the *fbs_example* .json
 * companions in the shared test data), hardcoded so the tests run without
 * /work/shared. Two slips of the comments are corrected: the CSR indptr ends
 * at 9 (nnz), and the COO matrix printed 4x6 is the column-major view of the
 * 6x4 (nnz x ndim) index matrix. */
#include <stdlib.h>
#include <string.h>

#include "quiver/advanced.h"
#include "quiver/sparse.h"
#include "test_util.h"
#include "util/load.h"

static const QvArrowType kIndexTypes[] = {QV_ARROW_INT8,   QV_ARROW_INT16,  QV_ARROW_INT32,
                                          QV_ARROW_INT64,  QV_ARROW_UINT8,  QV_ARROW_UINT16,
                                          QV_ARROW_UINT32, QV_ARROW_UINT64};
#define N_INDEX_TYPES 8

/* Writes n int64 values as an index buffer of the given type. */
static void *pack(const int64_t *v, int64_t n, QvArrowType type) {
  size_t w = qv_arrow_type_size(type);
  uint8_t *out = malloc(n > 0 ? (size_t)n * w : 1);
  for (int64_t i = 0; i < n; i++) {
    uint64_t x = (uint64_t)v[i];
    qvi_st_bits(out + (size_t)i * w, w, x); /* the low bytes, host order */
  }
  return out;
}

static void assert_index_buffer(const uint8_t *buf, QvArrowType type, const int64_t *want, int64_t n) {
  for (int64_t i = 0; i < n; i++) assert_int_equal(qv_index_load(buf, type, i), want[i]);
}

static void assert_values(const QvSparseTensor *t, const double *want, int64_t n) {
  assert_int_equal(t->nnz, n);
  const double *v = (const double *)(const void *)t->values;
  for (int64_t i = 0; i < n; i++) assert_true(v[i] == want[i]);
}

/* ---- COO: 2x3x4x5, 6 non-zeros */

static const int64_t kCooShape[4] = {2, 3, 4, 5};
static const int64_t kCooCoords[24] = {0, 1, 2, 0, 0, 1, 2, 1, 0, 1, 3, 0,
                                       0, 2, 1, 0, 1, 1, 2, 3, 1, 2, 0, 4};
static const double kCooData[6] = {1, 5, 4, 3, 2, 6};
/* the fbs comment's order, flagged non-canonical in the Arrow file */
static const int64_t kCooCoordsNonCanon[24] = {0, 1, 2, 0, 1, 1, 2, 3, 0, 2, 1, 0,
                                               0, 1, 3, 0, 0, 1, 2, 1, 1, 2, 0, 4};
static const double kCooDataNonCanon[6] = {1, 2, 3, 4, 5, 6};
/* the 4x6 matrix printed in the comment = the 6x4 matrix stored column-major */
static const int64_t kCooColMajor[24] = {0, 0, 0, 0, 1, 1, 1, 1, 1, 2, 1, 2,
                                         2, 2, 3, 1, 2, 0, 0, 1, 0, 0, 3, 4};

static void coo_dense(double *d) {
  memset(d, 0, 120 * sizeof *d);
  for (int i = 0; i < 6; i++) {
    const int64_t *c = kCooCoords + 4 * i;
    d[((c[0] * 3 + c[1]) * 4 + c[2]) * 5 + c[3]] = kCooData[i];
  }
}

static void make_dense(QvTensor *t, const double *data, int32_t ndim, const int64_t *shape,
                       int64_t count) {
  QvError err;
  assert_int_equal(qv_tensor_init(t, &(QvTensorDesc){.type = QV_ARROW_FLOAT64, .ndim = ndim,
                                                     .shape = shape, .data = data,
                                                     .data_size = count * (int64_t)sizeof(double)}, &err),
                   QV_OK);
}

static void test_coo_from_dense_every_index_type(void **state) {
  (void)state;
  double d[120];
  coo_dense(d);
  QvTensor dense;
  make_dense(&dense, d, 4, kCooShape, 120);
  for (int k = 0; k < N_INDEX_TYPES; k++) {
    QvSparseOptions o = {.index_type = kIndexTypes[k]};
    QvSparseTensor coo;
    QvError err;
    assert_int_equal(qv_sparse_from_dense(&dense, QV_SPARSE_COO, &o, &coo, &err), QV_OK);
    assert_int_equal(coo.format, QV_SPARSE_COO);
    assert_int_equal(coo.index_type, kIndexTypes[k]);
    assert_true(coo.is_canonical);
    int64_t w = (int64_t)qv_arrow_type_size(kIndexTypes[k]);
    assert_int_equal(coo.coords_strides[0], 4 * w);
    assert_int_equal(coo.coords_strides[1], w);
    assert_index_buffer(coo.coords, kIndexTypes[k], kCooCoords, 24);
    assert_values(&coo, kCooData, 6);
    assert_true(qv_sparse_equal_dense(&coo, &dense));
    qv_sparse_reset(&coo);
  }
  qv_tensor_reset(&dense);
}

static void test_coo_views_to_dense(void **state) {
  (void)state;
  double d[120], out[120];
  coo_dense(d);
  for (int k = 0; k < N_INDEX_TYPES; k++) {
    QvArrowType it = kIndexTypes[k];
    int64_t w = (int64_t)qv_arrow_type_size(it);
    QvError err;
    /* canonical, row-major index matrix */
    void *c = pack(kCooCoords, 24, it);
    QvSparseTensor t;
    assert_int_equal(qv_sparse_init(&t, &(QvSparseDesc){.format = QV_SPARSE_COO,
                                                        .value_type = QV_ARROW_FLOAT64,
                                                        .index_type = it, .ndim = 4,
                                                        .shape = kCooShape, .nnz = 6, .coords = c,
                                                        .is_canonical = true,
                                                        .values = kCooData}, &err),
                     QV_OK);
    assert_int_equal(qv_sparse_to_dense_into(&t, out, sizeof out, NULL, &err), QV_OK);
    assert_memory_equal(out, d, sizeof d);
    qv_sparse_reset(&t);
    free(c);
    /* column-major index matrix: strides {w, 6 * w} */
    c = pack(kCooColMajor, 24, it);
    int64_t strides[2] = {w, 6 * w};
    assert_int_equal(qv_sparse_init(&t, &(QvSparseDesc){.format = QV_SPARSE_COO,
                                                        .value_type = QV_ARROW_FLOAT64,
                                                        .index_type = it, .ndim = 4,
                                                        .shape = kCooShape, .nnz = 6, .coords = c,
                                                        .coords_strides = strides,
                                                        .is_canonical = true,
                                                        .values = kCooData}, &err),
                     QV_OK);
    assert_int_equal(qv_sparse_to_dense_into(&t, out, sizeof out, NULL, &err), QV_OK);
    assert_memory_equal(out, d, sizeof d);
    /* converting it gives the row-major canonical buffers */
    QvSparseTensor r;
    QvSparseOptions o = {.index_type = it};
    assert_int_equal(qv_sparse_convert(&t, QV_SPARSE_COO, &o, &r, &err), QV_OK);
    assert_index_buffer(r.coords, it, kCooCoords, 24);
    assert_values(&r, kCooData, 6);
    qv_sparse_reset(&r);
    qv_sparse_reset(&t);
    free(c);
    /* the fbs comment's unsorted order, flagged non-canonical */
    c = pack(kCooCoordsNonCanon, 24, it);
    assert_int_equal(qv_sparse_init(&t, &(QvSparseDesc){.format = QV_SPARSE_COO,
                                                        .value_type = QV_ARROW_FLOAT64,
                                                        .index_type = it, .ndim = 4,
                                                        .shape = kCooShape, .nnz = 6, .coords = c,
                                                        .values = kCooDataNonCanon}, &err),
                     QV_OK);
    assert_int_equal(qv_sparse_to_dense_into(&t, out, sizeof out, NULL, &err), QV_OK);
    assert_memory_equal(out, d, sizeof d);
    assert_int_equal(qv_sparse_canonicalize(&t, NULL, &r, &err), QV_OK);
    assert_true(r.is_canonical);
    assert_int_equal(r.index_type, it);
    assert_index_buffer(r.coords, it, kCooCoords, 24);
    assert_values(&r, kCooData, 6);
    assert_true(qv_sparse_equal(&r, &t));
    qv_sparse_reset(&r);
    qv_sparse_reset(&t);
    free(c);
  }
}

/* ---- CSR / CSC: 6x4, 9 non-zeros */

static const int64_t kCsxShape[2] = {6, 4};
static const double kCsxDense[24] = {0, 1, 2, 0, 0, 0, 3, 0, 0, 4, 0, 5,
                                     0, 0, 0, 0, 6, 0, 7, 8, 0, 9, 0, 0};
static const int64_t kCsrIndptr[7] = {0, 2, 3, 5, 5, 8, 9};
static const int64_t kCsrIndices[9] = {1, 2, 2, 1, 3, 0, 2, 3, 1};
static const double kCsrData[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
static const int64_t kCscIndptr[5] = {0, 1, 4, 7, 9};
static const int64_t kCscIndices[9] = {4, 0, 2, 5, 0, 1, 4, 2, 4};
static const double kCscData[9] = {6, 1, 4, 9, 2, 3, 7, 5, 8};

static void test_csx_examples(void **state) {
  (void)state;
  QvTensor dense;
  make_dense(&dense, kCsxDense, 2, kCsxShape, 24);
  for (int k = 0; k < N_INDEX_TYPES; k++) {
    QvArrowType it = kIndexTypes[k];
    QvSparseOptions o = {.index_type = it};
    QvError err;
    QvSparseTensor csr, csc, t;
    assert_int_equal(qv_sparse_from_dense(&dense, QV_SPARSE_CSR, &o, &csr, &err), QV_OK);
    assert_int_equal(csr.indptr_type, it);
    assert_int_equal(csr.index_type, it);
    assert_int_equal(csr.indptr_len, 7);
    assert_int_equal(csr.indices_len, 9);
    assert_index_buffer(csr.indptr, it, kCsrIndptr, 7);
    assert_index_buffer(csr.indices, it, kCsrIndices, 9);
    assert_values(&csr, kCsrData, 9);
    assert_int_equal(qv_sparse_from_dense(&dense, QV_SPARSE_CSC, &o, &csc, &err), QV_OK);
    assert_index_buffer(csc.indptr, it, kCscIndptr, 5);
    assert_index_buffer(csc.indices, it, kCscIndices, 9);
    assert_values(&csc, kCscData, 9);
    /* CSR <-> CSC directly */
    assert_int_equal(qv_sparse_convert(&csr, QV_SPARSE_CSC, &o, &t, &err), QV_OK);
    assert_index_buffer(t.indptr, it, kCscIndptr, 5);
    assert_index_buffer(t.indices, it, kCscIndices, 9);
    assert_values(&t, kCscData, 9);
    qv_sparse_reset(&t);
    assert_int_equal(qv_sparse_convert(&csc, QV_SPARSE_CSR, &o, &t, &err), QV_OK);
    assert_index_buffer(t.indptr, it, kCsrIndptr, 7);
    assert_index_buffer(t.indices, it, kCsrIndices, 9);
    assert_values(&t, kCsrData, 9);
    qv_sparse_reset(&t);
    qv_sparse_reset(&csr);
    qv_sparse_reset(&csc);

    /* views over the literal buffers, mixed indptr / indices types */
    QvArrowType pt = kIndexTypes[(k + 3) % N_INDEX_TYPES];
    void *p = pack(kCsrIndptr, 7, pt), *x = pack(kCsrIndices, 9, it);
    assert_int_equal(qv_sparse_init(&t, &(QvSparseDesc){.ndim = 2, .format = QV_SPARSE_CSR,
                                                        .value_type = QV_ARROW_FLOAT64,
                                                        .indptr_type = pt, .index_type = it,
                                                        .shape = kCsxShape, .nnz = 9, .indptr = p,
                                                        .indices = x, .values = kCsrData}, &err),
                     QV_OK);
    double out[24];
    assert_int_equal(qv_sparse_to_dense_into(&t, out, sizeof out, NULL, &err), QV_OK);
    assert_memory_equal(out, kCsxDense, sizeof out);
    qv_sparse_reset(&t);
    free(p);
    free(x);
    p = pack(kCscIndptr, 5, pt);
    x = pack(kCscIndices, 9, it);
    assert_int_equal(qv_sparse_init(&t, &(QvSparseDesc){.ndim = 2, .format = QV_SPARSE_CSC,
                                                        .value_type = QV_ARROW_FLOAT64,
                                                        .indptr_type = pt, .index_type = it,
                                                        .shape = kCsxShape, .nnz = 9, .indptr = p,
                                                        .indices = x, .values = kCscData}, &err),
                     QV_OK);
    assert_int_equal(qv_sparse_to_dense_into(&t, out, sizeof out, NULL, &err), QV_OK);
    assert_memory_equal(out, kCsxDense, sizeof out);
    assert_true(qv_sparse_equal_dense(&t, &dense));
    qv_sparse_reset(&t);
    free(p);
    free(x);
  }
  qv_tensor_reset(&dense);
}

/* The comment's literal indptr ends at 10 with 9 non-zeros: rejected. */
static void test_csr_literal_indptr_rejected(void **state) {
  (void)state;
  static const int64_t literal[7] = {0, 2, 3, 5, 5, 8, 10};
  QvSparseTensor t;
  QvError err;
  assert_int_equal(qv_sparse_init(&t, &(QvSparseDesc){.ndim = 2, .format = QV_SPARSE_CSR,
                                                      .value_type = QV_ARROW_FLOAT64,
                                                      .indptr_type = QV_ARROW_INT64,
                                                      .index_type = QV_ARROW_INT64,
                                                      .shape = kCsxShape, .nnz = 9,
                                                      .indptr = literal, .indices = kCsrIndices,
                                                      .values = kCsrData}, &err),
                   QV_EINVAL);
  assert_non_null(strstr(err.message, "CSR indptr"));
  assert_non_null(strstr(err.message, "ends at 10, must end at 9"));
  assert_null(t.private_data);
}

/* ---- CSF: 2x3x4x5, 8 non-zeros, three axis orders */

typedef struct CsfExample {
  int32_t axis[4];
  int64_t indptr[3][8];
  int64_t indptr_len[3];
  int64_t indices[4][8];
  int64_t indices_len[4];
  double data[8];
} CsfExample;

static const CsfExample kCsf[3] = {
    {{0, 1, 2, 3},
     {{0, 2, 3}, {0, 1, 3, 4}, {0, 2, 4, 5, 8}},
     {3, 4, 5},
     {{0, 1}, {0, 1, 1}, {0, 0, 1, 1}, {1, 2, 0, 2, 0, 0, 1, 2}},
     {2, 3, 4, 8},
     {1, 2, 3, 4, 5, 6, 7, 8}},
    {{2, 0, 3, 1},
     {{0, 1, 3}, {0, 3, 4, 7}, {0, 1, 2, 4, 5, 6, 7, 8}},
     {3, 4, 8},
     {{0, 1}, {0, 0, 1}, {0, 1, 2, 0, 0, 1, 2}, {1, 0, 0, 1, 1, 1, 1, 1}},
     {2, 3, 7, 8},
     {3, 1, 2, 4, 5, 6, 7, 8}},
    {{3, 2, 1, 0},
     {{0, 2, 4, 6}, {0, 1, 2, 3, 4, 6, 7}, {0, 1, 3, 4, 5, 6, 7, 8}},
     {4, 7, 8},
     {{0, 1, 2}, {0, 1, 0, 1, 0, 1}, {1, 1, 0, 1, 0, 1, 1}, {0, 0, 1, 0, 1, 0, 0, 1}},
     {3, 6, 7, 8},
     {3, 5, 6, 1, 7, 2, 4, 8}},
};

static void csf_dense(double *d) {
  static const int64_t coords[8][4] = {{0, 0, 0, 1}, {0, 0, 0, 2}, {0, 1, 0, 0}, {0, 1, 0, 2},
                                       {0, 1, 1, 0}, {1, 1, 1, 0}, {1, 1, 1, 1}, {1, 1, 1, 2}};
  memset(d, 0, 120 * sizeof *d);
  for (int i = 0; i < 8; i++) {
    const int64_t *c = coords[i];
    d[((c[0] * 3 + c[1]) * 4 + c[2]) * 5 + c[3]] = i + 1;
  }
}

static void test_csf_examples(void **state) {
  (void)state;
  double d[120], out[120];
  csf_dense(d);
  QvTensor dense;
  make_dense(&dense, d, 4, kCooShape, 120);
  for (int e = 0; e < 3; e++) {
    const CsfExample *x = &kCsf[e];
    for (int k = 0; k < N_INDEX_TYPES; k++) {
      QvArrowType it = kIndexTypes[k];
      QvSparseOptions o = {.index_type = it, .axis_order = x->axis};
      QvSparseTensor t;
      QvError err;
      assert_int_equal(qv_sparse_from_dense(&dense, QV_SPARSE_CSF, &o, &t, &err), QV_OK);
      for (int l = 0; l < 4; l++) {
        assert_int_equal(t.axis_order[l], x->axis[l]);
        assert_int_equal(t.csf_indices_len[l], x->indices_len[l]);
        assert_index_buffer(t.csf_indices[l], it, x->indices[l], x->indices_len[l]);
        if (l < 3) {
          assert_int_equal(t.csf_indptr_len[l], x->indptr_len[l]);
          assert_index_buffer(t.csf_indptr[l], it, x->indptr[l], x->indptr_len[l]);
        }
      }
      assert_values(&t, x->data, 8);
      qv_sparse_reset(&t);

      /* view over the literal buffers -> dense, and -> COO */
      void *ptr[3], *ind[4];
      for (int l = 0; l < 4; l++) {
        ind[l] = pack(x->indices[l], x->indices_len[l], it);
        if (l < 3) ptr[l] = pack(x->indptr[l], x->indptr_len[l], it);
      }
      assert_int_equal(qv_sparse_init(&t, &(QvSparseDesc){.format = QV_SPARSE_CSF,
                                                          .value_type = QV_ARROW_FLOAT64,
                                                          .indptr_type = it, .index_type = it,
                                                          .ndim = 4, .shape = kCooShape,
                                                          .axis_order = x->axis, .nnz = 8,
                                                          .csf_indptr = (const void *const *)ptr,
                                                          .csf_indptr_len = x->indptr_len,
                                                          .csf_indices = (const void *const *)ind,
                                                          .csf_indices_len = x->indices_len,
                                                          .values = x->data}, &err),
                       QV_OK);
      assert_int_equal(qv_sparse_to_dense_into(&t, out, sizeof out, NULL, &err), QV_OK);
      assert_memory_equal(out, d, sizeof d);
      QvSparseTensor coo;
      assert_int_equal(qv_sparse_convert(&t, QV_SPARSE_COO, NULL, &coo, &err), QV_OK);
      assert_true(coo.is_canonical);
      assert_int_equal(coo.index_type, QV_ARROW_INT64);
      assert_true(qv_sparse_equal_dense(&coo, &dense));
      /* and back to this axis order: the same buffers */
      QvSparseTensor back;
      assert_int_equal(qv_sparse_convert(&coo, QV_SPARSE_CSF, &o, &back, &err), QV_OK);
      for (int l = 0; l < 4; l++) {
        assert_index_buffer(back.csf_indices[l], it, x->indices[l], x->indices_len[l]);
        if (l < 3) assert_index_buffer(back.csf_indptr[l], it, x->indptr[l], x->indptr_len[l]);
      }
      assert_values(&back, x->data, 8);
      assert_true(qv_sparse_equal(&back, &t));
      qv_sparse_reset(&back);
      qv_sparse_reset(&coo);
      qv_sparse_reset(&t);
      for (int l = 0; l < 4; l++) {
        free(ind[l]);
        if (l < 3) free(ptr[l]);
      }
    }
  }
  /* CSF -> CSF with another axis order, directly */
  QvSparseOptions o0 = {.index_type = QV_ARROW_INT32, .axis_order = kCsf[0].axis}, o2 = {.index_type = QV_ARROW_INT16, .axis_order = kCsf[2].axis};
  QvSparseTensor a, b;
  QvError err;
  assert_int_equal(qv_sparse_from_dense(&dense, QV_SPARSE_CSF, &o0, &a, &err), QV_OK);
  assert_int_equal(qv_sparse_convert(&a, QV_SPARSE_CSF, &o2, &b, &err), QV_OK);
  for (int l = 0; l < 4; l++)
    assert_index_buffer(b.csf_indices[l], QV_ARROW_INT16, kCsf[2].indices[l], kCsf[2].indices_len[l]);
  assert_values(&b, kCsf[2].data, 8);
  qv_sparse_reset(&a);
  qv_sparse_reset(&b);
  qv_tensor_reset(&dense);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_coo_from_dense_every_index_type),
      cmocka_unit_test(test_coo_views_to_dense),
      cmocka_unit_test(test_csx_examples),
      cmocka_unit_test(test_csr_literal_indptr_rejected),
      cmocka_unit_test(test_csf_examples),
  };
  return qv_test_run(tests, NULL, NULL);
}
