/* Dense -> CSR/CSC checked exactly (indptr, indices, value bits) against a
 * naive column-by-column reference, aimed at the strip sort that serves
 * orientations across the memory order (row-major -> CSC, column-major ->
 * CSR): buckets filling many chunks, a last strip narrower than the others,
 * many strips, more lines than a key's line offset holds, ragged vector
 * tails, all-zero lines and majors, every value size, strided and
 * broadcast inputs, -0.0 and NaN bit patterns. */
#include <stdlib.h>
#include <string.h>

#include "quiver/sparse.h"
#include "test_util.h"
#include "util/cpu.h"
#include "util/load.h"

static uint64_t rng_state = 0x2545f4914f6cdd1du;
static uint64_t rnd(void) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return rng_state;
}

static const QvArrowType kTypes[7] = {QV_ARROW_INT8,  QV_ARROW_INT16,   QV_ARROW_FLOAT16, QV_ARROW_FLOAT32,
                                      QV_ARROW_INT32, QV_ARROW_FLOAT64, QV_ARROW_INT64};

static bool is_float(QvArrowType t) {
  return t == QV_ARROW_FLOAT16 || t == QV_ARROW_FLOAT32 || t == QV_ARROW_FLOAT64;
}

static uint64_t load_bits(const uint8_t *p, size_t w) {
  return qvi_ld_bits(p, w); /* host order */
}

/* Zero by value: all bits, or all but the sign bit for floats. */
static bool is_zero(const uint8_t *p, QvArrowType t) {
  size_t w = qv_arrow_type_size(t);
  uint64_t v = load_bits(p, w);
  if (is_float(t)) v &= ~(UINT64_C(1) << (8 * w - 1));
  return v == 0;
}

/* Random bits for a non-zero element; floats sometimes get -0.0 (a zero)
 * or a NaN pattern. */
static void fill_element(uint8_t *p, QvArrowType t) {
  size_t w = qv_arrow_type_size(t);
  uint64_t v = rnd();
  if (is_float(t) && rnd() % 16 == 0) v = UINT64_C(1) << (8 * w - 1); /* -0.0 */
  qvi_st_bits(p, w, v);
  if (load_bits(p, w) == 0) p[0] = 1;
}

/* Buffer for a rows x cols matrix with strides (s0, s1), `pct` % of the
 * elements set; rows listed in zero_row and columns in zero_col stay 0. */
static uint8_t *make_matrix(QvTensor *d, QvArrowType t, int64_t rows, int64_t cols, int64_t s0, int64_t s1,
                            int pct, int64_t zero_row, int64_t zero_col) {
  size_t w = qv_arrow_type_size(t);
  int64_t bytes = (rows - 1) * s0 + (cols - 1) * s1 + (int64_t)w;
  uint8_t *buf = calloc((size_t)bytes, 1);
  assert_non_null(buf);
  for (int64_t i = 0; i < rows; i++)
    for (int64_t j = 0; j < cols; j++)
      if (i != zero_row && j != zero_col && (int)(rnd() % 100) < pct) fill_element(buf + i * s0 + j * s1, t);
  const int64_t shape[2] = {rows, cols}, strides[2] = {s0, s1};
  QvError err;
  assert_int_equal(qv_tensor_init(d, &(QvTensorDesc){.type = t, .ndim = 2, .shape = shape,
                                                     .strides = strides, .data = buf,
                                                     .data_size = bytes}, &err), QV_OK);
  return buf;
}

/* dense -> format (CSR or CSC) against the naive reference. */
static void check_csx(const QvTensor *d, QvSparseFormat f) {
  QvSparseTensor s;
  QvError err;
  assert_int_equal(qv_sparse_from_dense(d, f, NULL, &s, &err), QV_OK);
  assert_int_equal(qv_sparse_validate(&s, &err), QV_OK);
  int M = f == QV_SPARSE_CSC ? 1 : 0;
  int64_t nmajor = d->shape[M], nminor = d->shape[1 - M];
  size_t w = qv_arrow_type_size(d->type);
  assert_int_equal(s.indptr_len, nmajor + 1);
  const int64_t *ptr = (const int64_t *)(const void *)s.indptr;
  const int64_t *idx = (const int64_t *)(const void *)s.indices;
  int64_t k = 0;
  for (int64_t a = 0; a < nmajor; a++) {
    assert_int_equal(ptr[a], k);
    for (int64_t b = 0; b < nminor; b++) {
      int64_t i = M ? b : a, j = M ? a : b;
      const uint8_t *e = d->data + i * d->strides[0] + j * d->strides[1];
      if (is_zero(e, d->type)) continue;
      assert_true(k < s.nnz);
      assert_int_equal(idx[k], b);
      assert_memory_equal(s.values + (size_t)k * w, e, w);
      k++;
    }
  }
  assert_int_equal(ptr[nmajor], k);
  assert_int_equal(s.nnz, k);
  qv_sparse_reset(&s);
}

/* dense -> COO against the naive reference: canonical order, coordinates
 * as (row, col) pairs. */
static void check_coo(const QvTensor *d) {
  QvSparseTensor s;
  QvError err;
  assert_int_equal(qv_sparse_from_dense(d, QV_SPARSE_COO, NULL, &s, &err), QV_OK);
  assert_int_equal(qv_sparse_validate(&s, &err), QV_OK);
  assert_true(s.is_canonical);
  size_t w = qv_arrow_type_size(d->type);
  const int64_t *c = (const int64_t *)(const void *)s.coords;
  int64_t k = 0;
  for (int64_t i = 0; i < d->shape[0]; i++)
    for (int64_t j = 0; j < d->shape[1]; j++) {
      const uint8_t *e = d->data + i * d->strides[0] + j * d->strides[1];
      if (is_zero(e, d->type)) continue;
      assert_true(k < s.nnz);
      assert_int_equal(c[2 * k], i);
      assert_int_equal(c[2 * k + 1], j);
      assert_memory_equal(s.values + (size_t)k * w, e, w);
      k++;
    }
  assert_int_equal(s.nnz, k);
  qv_sparse_reset(&s);
}

static void check_both(const QvTensor *d) {
  check_csx(d, QV_SPARSE_CSC);
  check_csx(d, QV_SPARSE_CSR);
}

/* Row-major and column-major copies of one random matrix. */
static void check_shape(QvArrowType t, int64_t rows, int64_t cols, int pct, int64_t zero_row, int64_t zero_col) {
  int64_t w = (int64_t)qv_arrow_type_size(t);
  QvTensor rm, cm;
  uint8_t *b1 = make_matrix(&rm, t, rows, cols, cols * w, w, pct, zero_row, zero_col);
  check_both(&rm);
  QvError err;
  assert_int_equal(qv_tensor_copy(&rm, true, &cm, &err), QV_OK);
  check_both(&cm);
  qv_tensor_reset(&cm);
  qv_tensor_reset(&rm);
  free(b1);
}

/* COO of row-major and column-major inputs, lines longer than the COO
 * scan's 1024-element parts, every value size. */
static void test_coo_long_lines(void **state) {
  (void)state;
  for (int t = 0; t < 7; t++) {
    int64_t w = (int64_t)qv_arrow_type_size(kTypes[t]);
    QvTensor rm, cm;
    uint8_t *b = make_matrix(&rm, kTypes[t], 5, 2500 + t, (2500 + t) * w, w, 10 + 10 * t, 2, 1031);
    check_coo(&rm);
    QvError err;
    assert_int_equal(qv_tensor_copy(&rm, true, &cm, &err), QV_OK);
    check_coo(&cm);
    qv_tensor_reset(&cm);
    qv_tensor_reset(&rm);
    free(b);
  }
}

/* Every value size on shapes of a few hundred lines, with lines whose
 * length is not a multiple of 8. */
static void test_block_line_limit(void **state) {
  (void)state;
  for (int i = 0; i < 7; i++) {
    check_shape(kTypes[i], 600, 77, 10, 255, 3);
    check_shape(kTypes[i], 256, 13, 60, -1, -1);
    check_shape(kTypes[i], 511, 9, 2, 0, 8);
  }
}

/* Dense enough that a strip's bucket fills many chunks (16 x 512 entries),
 * with a last strip of fewer than 512 majors. */
static void test_block_scratch_limit(void **state) {
  (void)state;
  check_shape(QV_ARROW_FLOAT64, 300, 1000, 100, -1, -1);
  check_shape(QV_ARROW_INT8, 300, 1000, 100, 17, 999);
  check_shape(QV_ARROW_FLOAT64, 40, 9001, 100, 20, -1);
  check_shape(QV_ARROW_FLOAT32, 40, 9001, 90, -1, 4096);
  check_shape(QV_ARROW_INT16, 33, 12000, 95, -1, -1);
}

/* Many strips of 512 majors. */
static void test_strips(void **state) {
  (void)state;
  check_shape(QV_ARROW_FLOAT64, 3, 40000, 20, -1, 16383);
  check_shape(QV_ARROW_INT8, 2, 16385, 50, -1, 16384);
  check_shape(QV_ARROW_FLOAT32, 300, 16400, 1, 100, -1);
  check_shape(QV_ARROW_FLOAT64, 129, 513, 100, 64, 512);
}

/* A key holds a line offset below 2^20 from its chunk's base line: past
 * that many lines every bucket starts new chunks from a new base. */
static void test_many_lines(void **state) {
  (void)state;
  check_shape(QV_ARROW_INT8, (1 << 20) + 77, 3, 30, 1 << 20, -1);
  check_shape(QV_ARROW_FLOAT64, (1 << 20) + 5, 2, 50, (1 << 20) - 1, 1);
}

/* Degenerate and small shapes: 1 x N, N x 1, 2 x 2, all zero. */
static void test_small_and_degenerate(void **state) {
  (void)state;
  for (int i = 0; i < 7; i++) {
    check_shape(kTypes[i], 1, 100, 30, -1, -1);
    check_shape(kTypes[i], 100, 1, 30, -1, -1);
    check_shape(kTypes[i], 2, 2, 50, -1, -1);
    check_shape(kTypes[i], 70, 90, 0, -1, -1);
    check_shape(kTypes[i], 9, 8, 100, -1, -1);
  }
}

/* Non-contiguous inputs: every other column of a padded buffer (both
 * orders), and broadcast (zero-stride) dims. */
static void test_strided_and_broadcast(void **state) {
  (void)state;
  for (int i = 0; i < 7; i++) {
    QvArrowType t = kTypes[i];
    int64_t w = (int64_t)qv_arrow_type_size(t);
    QvTensor d;
    uint8_t *b = make_matrix(&d, t, 300, 50, 50 * 2 * w + 3 * w, 2 * w, 25, 7, 11);
    check_both(&d);
    qv_tensor_reset(&d);
    free(b);
    b = make_matrix(&d, t, 60, 270, 2 * w, 60 * 2 * w + w, 25, -1, 100);
    check_both(&d);
    qv_tensor_reset(&d);
    free(b);
    /* every row the same (row stride 0), every column the same */
    b = make_matrix(&d, t, 1, 300, 0, w, 40, -1, -1);
    const int64_t shape[2] = {280, 300}, rows_same[2] = {0, w}, cols_same[2] = {w, 0};
    QvTensor bc;
    QvError err;
    assert_int_equal(qv_tensor_init(&bc, &(QvTensorDesc){.type = t, .ndim = 2, .shape = shape,
                                                         .strides = rows_same, .data = b,
                                                         .data_size = 300 * w}, &err), QV_OK);
    check_both(&bc);
    qv_tensor_reset(&bc);
    assert_int_equal(qv_tensor_init(&bc, &(QvTensorDesc){.type = t, .ndim = 2, .shape = shape,
                                                         .strides = cols_same, .data = b,
                                                         .data_size = 300 * w}, &err), QV_OK);
    check_both(&bc);
    qv_tensor_reset(&bc);
    qv_tensor_reset(&d);
    free(b);
  }
}

/* The other consumers of the 2-D scan: CSF with axis order (1, 0), a
 * narrow index type, COO; all back to the same dense. */
static void test_other_outputs(void **state) {
  (void)state;
  QvTensor d, back;
  QvError err;
  uint8_t *b = make_matrix(&d, QV_ARROW_FLOAT64, 700, 300, 300 * 8, 8, 15, 5, 6);
  static const int32_t order[2] = {1, 0};
  QvSparseOptions csf = {.axis_order = order}, i32 = {.index_type = QV_ARROW_INT32};
  QvSparseTensor s;
  assert_int_equal(qv_sparse_from_dense(&d, QV_SPARSE_CSF, &csf, &s, &err), QV_OK);
  assert_int_equal(qv_sparse_to_dense(&s, NULL, &back, &err), QV_OK);
  assert_true(qv_tensor_equal(&back, &d, true));
  qv_tensor_reset(&back);
  qv_sparse_reset(&s);
  assert_int_equal(qv_sparse_from_dense(&d, QV_SPARSE_CSC, &i32, &s, &err), QV_OK);
  assert_int_equal(s.index_type, QV_ARROW_INT32);
  assert_int_equal(qv_sparse_to_dense(&s, NULL, &back, &err), QV_OK);
  assert_true(qv_tensor_equal(&back, &d, true));
  qv_tensor_reset(&back);
  QvSparseTensor coo;
  assert_int_equal(qv_sparse_convert(&s, QV_SPARSE_COO, NULL, &coo, &err), QV_OK);
  assert_int_equal(coo.nnz, qv_tensor_count_nonzero(&d));
  assert_int_equal(qv_sparse_to_dense(&coo, NULL, &back, &err), QV_OK);
  assert_true(qv_tensor_equal(&back, &d, true));
  qv_tensor_reset(&back);
  qv_sparse_reset(&coo);
  qv_sparse_reset(&s);
  qv_tensor_reset(&d);
  free(b);
}

/* The strip sort is what serves orientations across the memory
 * order (and only those): its counter proves the tests above exercised it. */
static void test_across_path_taken(void **state) {
  (void)state;
  QvTensor rm, cm;
  QvError err;
  uint8_t *b = make_matrix(&rm, QV_ARROW_FLOAT64, 300, 200, 200 * 8, 8, 20, -1, -1);
  assert_int_equal(qv_tensor_copy(&rm, true, &cm, &err), QV_OK);
  uint64_t n0 = qvi_path_count(QV_PATH_DENSE_ACROSS);
  check_csx(&rm, QV_SPARSE_CSC);
  assert_int_equal(qvi_path_count(QV_PATH_DENSE_ACROSS), n0 + 1);
  check_csx(&cm, QV_SPARSE_CSR);
  assert_int_equal(qvi_path_count(QV_PATH_DENSE_ACROSS), n0 + 2);
  check_csx(&rm, QV_SPARSE_CSR); /* along the memory order: the direct scan */
  check_csx(&cm, QV_SPARSE_CSC);
  assert_int_equal(qvi_path_count(QV_PATH_DENSE_ACROSS), n0 + 2);
  qv_tensor_reset(&cm);
  qv_tensor_reset(&rm);
  free(b);
}

/* Every orientation and COO with the AVX2 scan kernels, then with the CPU
 * features masked (the portable scan): both checked exactly against the
 * reference, and the counters show which path ran. */
static void run_all_outputs(QvArrowType t) {
  int64_t w = (int64_t)qv_arrow_type_size(t);
  QvTensor rm, cm;
  QvError err;
  uint8_t *b = make_matrix(&rm, t, 260, 333, 333 * w, w, 30, 4, 5);
  assert_int_equal(qv_tensor_copy(&rm, true, &cm, &err), QV_OK);
  check_both(&rm);
  check_both(&cm);
  check_coo(&rm);
  check_coo(&cm);
  qv_tensor_reset(&cm);
  qv_tensor_reset(&rm);
  free(b);
}

static void test_scan_vector_and_portable(void **state) {
  (void)state;
  if (!qvi_cpu_has(QV_CPU_AVX2 | QV_CPU_POPCNT)) {
    print_message("this CPU has no AVX2/POPCNT: the vector scan cannot run here\n");
    skip();
  }
  static const QvArrowType vector_types[2] = {QV_ARROW_FLOAT64, QV_ARROW_FLOAT32};
  for (int i = 0; i < 2; i++) {
    uint64_t v0 = qvi_path_count(QV_PATH_SCAN_AVX2), p0 = qvi_path_count(QV_PATH_SCAN_PORTABLE);
    run_all_outputs(vector_types[i]);
    assert_true(qvi_path_count(QV_PATH_SCAN_AVX2) > v0);
    assert_int_equal(qvi_path_count(QV_PATH_SCAN_PORTABLE), p0);

    qvi_cpu_override(0);
    v0 = qvi_path_count(QV_PATH_SCAN_AVX2);
    run_all_outputs(vector_types[i]);
    qvi_cpu_override(QV_CPU_ALL);
    assert_int_equal(qvi_path_count(QV_PATH_SCAN_AVX2), v0);
    assert_true(qvi_path_count(QV_PATH_SCAN_PORTABLE) > p0);
  }
}

int main(int argc, char **argv) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_coo_long_lines),
      cmocka_unit_test(test_block_line_limit),     cmocka_unit_test(test_block_scratch_limit),
      cmocka_unit_test(test_strips),               cmocka_unit_test(test_many_lines),
      cmocka_unit_test(test_small_and_degenerate),
      cmocka_unit_test(test_strided_and_broadcast), cmocka_unit_test(test_other_outputs),
      cmocka_unit_test(test_across_path_taken),
  };
  const struct CMUnitTest vector_tests[] = {
      cmocka_unit_test(test_scan_vector_and_portable),
  };
  const QvTestGroup groups[] = {
      QV_TEST_GROUP("", tests, NULL, NULL),
      QV_TEST_GROUP("vector", vector_tests, NULL, NULL),
  };
  return qv_test_run_groups(argc, argv, groups, sizeof groups / sizeof groups[0]);
}
