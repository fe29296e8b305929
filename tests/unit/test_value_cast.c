/* qv_tensor_cast and qv_sparse_cast (the one kernel, util/value_cast.c):
 * every pair of numeric types on a small matrix, dense and every sparse
 * format; the exact-or-refused rule at its edges (range, fractions, NaN,
 * infinities, integers a float cannot hold, float overflow); where the
 * first bad value is named; layouts. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "quiver/sparse.h"
#include "quiver/tensor.h"
#include "test_util.h"
#include "util/half.h"

static const QvArrowType kNumeric[] = {
    QV_ARROW_INT8,   QV_ARROW_INT16,  QV_ARROW_INT32,   QV_ARROW_INT64,
    QV_ARROW_UINT8,  QV_ARROW_UINT16, QV_ARROW_UINT32,  QV_ARROW_UINT64,
    QV_ARROW_FLOAT16, QV_ARROW_FLOAT32, QV_ARROW_FLOAT64};
#define N_NUMERIC ((int)(sizeof kNumeric / sizeof kNumeric[0]))

/* Stores a double as `type` (the value must fit). */
static void put(QvArrowType type, void *p, double d) {
  switch (type) {
    case QV_ARROW_INT8: { int8_t x = (int8_t)d; memcpy(p, &x, 1); break; }
    case QV_ARROW_INT16: { int16_t x = (int16_t)d; memcpy(p, &x, 2); break; }
    case QV_ARROW_INT32: { int32_t x = (int32_t)d; memcpy(p, &x, 4); break; }
    case QV_ARROW_INT64: { int64_t x = (int64_t)d; memcpy(p, &x, 8); break; }
    case QV_ARROW_UINT8: { uint8_t x = (uint8_t)d; memcpy(p, &x, 1); break; }
    case QV_ARROW_UINT16: { uint16_t x = (uint16_t)d; memcpy(p, &x, 2); break; }
    case QV_ARROW_UINT32: { uint32_t x = (uint32_t)d; memcpy(p, &x, 4); break; }
    case QV_ARROW_UINT64: { uint64_t x = (uint64_t)d; memcpy(p, &x, 8); break; }
    case QV_ARROW_FLOAT16: { uint16_t x = qvi_double_to_half(d); memcpy(p, &x, 2); break; }
    case QV_ARROW_FLOAT32: { float x = (float)d; memcpy(p, &x, 4); break; }
    default: memcpy(p, &d, 8); break;
  }
}

static void make(QvTensor *t, QvArrowType type, int32_t ndim, const int64_t *shape,
                 const int64_t *strides, const double *values, int64_t n, uint8_t *buf) {
  size_t sz = qv_arrow_type_size(type);
  for (int64_t i = 0; i < n; i++) put(type, buf + (size_t)i * sz, values[i]);
  QvError e;
  QvTensorDesc d = {.type = type, .ndim = ndim, .shape = shape, .strides = strides, .data = buf,
                    .data_size = (int64_t)((size_t)n * sz)};
  if (qv_tensor_init(t, &d, &e) != QV_OK) fail_msg("tensor init: %s", e.message);
}

/* 2 x 3, zeros included, every value held by every numeric type */
static const double kSmall[6] = {0, 1, 0, 7, 0, 100};

static void test_every_pair_every_format(void **state) {
  (void)state;
  const int64_t shape[2] = {2, 3};
  static const QvSparseFormat formats[] = {QV_SPARSE_COO, QV_SPARSE_CSR, QV_SPARSE_CSC,
                                           QV_SPARSE_CSF};
  for (int a = 0; a < N_NUMERIC; a++) {
    uint8_t buf[64];
    QvTensor src;
    make(&src, kNumeric[a], 2, shape, NULL, kSmall, 6, buf);
    for (int b = 0; b < N_NUMERIC; b++) {
      QvError e;
      QvTensor dense;
      if (qv_tensor_cast(&src, kNumeric[b], &dense, &e) != QV_OK)
        fail_msg("%s -> %s: %s", qv_arrow_type_name(kNumeric[a]), qv_arrow_type_name(kNumeric[b]),
                 e.message);
      assert_int_equal(dense.type, kNumeric[b]);
      assert_true(qv_tensor_is_row_major(&dense));
      for (int64_t i = 0; i < 6; i++) {
        int64_t idx[2] = {i / 3, i % 3};
        double got;
        assert_int_equal(qv_tensor_get_double(&dense, idx, &got, &e), QV_OK);
        assert_true(got == kSmall[i]);
      }
      for (size_t f = 0; f < sizeof formats / sizeof formats[0]; f++) {
        QvSparseTensor sp, cast;
        assert_int_equal(qv_sparse_from_dense(&src, formats[f], NULL, &sp, &e), QV_OK);
        if (qv_sparse_cast(&sp, kNumeric[b], &cast, &e) != QV_OK)
          fail_msg("sparse %s %s -> %s: %s", qv_sparse_format_name(formats[f]),
                   qv_arrow_type_name(kNumeric[a]), qv_arrow_type_name(kNumeric[b]), e.message);
        qv_sparse_reset(&sp); /* the cast keeps what it needs */
        assert_int_equal(cast.value_type, kNumeric[b]);
        assert_int_equal(cast.format, formats[f]);
        assert_int_equal(cast.nnz, 3);
        assert_int_equal(qv_sparse_validate(&cast, &e), QV_OK);
        assert_true(qv_sparse_equal_dense(&cast, &dense));
        qv_sparse_reset(&cast);
      }
      qv_tensor_reset(&dense);
    }
    qv_tensor_reset(&src);
  }
}

/* One value of `from` cast to `to`: QV_OK (and the result as a double in
 * *got) or the status. */
static QvStatus cast1(QvArrowType from, const void *value, QvArrowType to, double *got,
                      QvError *e) {
  uint8_t buf[8];
  memcpy(buf, value, qv_arrow_type_size(from));
  const int64_t shape[1] = {1};
  QvTensor t, out;
  QvTensorDesc d = {.type = from, .ndim = 1, .shape = shape, .data = buf,
                    .data_size = (int64_t)qv_arrow_type_size(from)};
  assert_int_equal(qv_tensor_init(&t, &d, e), QV_OK);
  QvStatus st = qv_tensor_cast(&t, to, &out, e);
  if (st == QV_OK) {
    int64_t idx[1] = {0};
    assert_int_equal(qv_tensor_get_double(&out, idx, got, e), QV_OK);
    qv_tensor_reset(&out);
  }
  qv_tensor_reset(&t);
  return st;
}

#define OK_AS(from, ctype, v, to, want)                                          \
  do {                                                                          \
    ctype x_ = (v);                                                             \
    double g_, w_ = (double)(want);                                             \
    QvError e_;                                                                 \
    QvStatus st_ = cast1(from, &x_, to, &g_, &e_);                              \
    if (st_ != QV_OK) fail_msg("%s %s -> %s: %s", #v, #from, #to, e_.message);  \
    if (!(g_ == w_ || (isnan(w_) && isnan(g_))))                                \
      fail_msg("%s %s -> %s gave %.17g", #v, #from, #to, g_);                   \
  } while (0)
#define REFUSED(from, ctype, v, to, msg)                                         \
  do {                                                                          \
    ctype x_ = (v);                                                             \
    double g_;                                                                  \
    QvError e_;                                                                 \
    assert_int_equal(cast1(from, &x_, to, &g_, &e_), QV_EINVAL);                \
    if (strstr(e_.message, msg) == NULL) fail_msg("'%s' lacks '%s'", e_.message, msg); \
  } while (0)

static void test_rules(void **state) {
  (void)state;
  /* integer -> integer: range */
  REFUSED(QV_ARROW_INT16, int16_t, 300, QV_ARROW_INT8, "element [0]: value 300 does not fit int8");
  REFUSED(QV_ARROW_INT16, int16_t, 300, QV_ARROW_UINT8, "value 300 does not fit uint8");
  REFUSED(QV_ARROW_INT8, int8_t, -1, QV_ARROW_UINT64, "value -1 does not fit uint64");
  OK_AS(QV_ARROW_INT16, int16_t, -128, QV_ARROW_INT8, -128);
  OK_AS(QV_ARROW_UINT8, uint8_t, 255, QV_ARROW_INT16, 255);
  REFUSED(QV_ARROW_UINT64, uint64_t, UINT64_MAX, QV_ARROW_INT64,
          "value 18446744073709551615 does not fit int64");
  OK_AS(QV_ARROW_INT64, int64_t, INT64_MIN, QV_ARROW_INT64, -0x1p63);
  REFUSED(QV_ARROW_INT64, int64_t, (int64_t)1 << 32, QV_ARROW_UINT32, "does not fit uint32");
  OK_AS(QV_ARROW_INT64, int64_t, ((int64_t)1 << 32) - 1, QV_ARROW_UINT32, 4294967295.0);
  /* float -> integer: whole and in range; NaN and infinities never */
  REFUSED(QV_ARROW_FLOAT64, double, 2.5, QV_ARROW_INT64, "value 2.5 does not fit int64");
  REFUSED(QV_ARROW_FLOAT64, double, NAN, QV_ARROW_INT32, "value nan does not fit int32");
  REFUSED(QV_ARROW_FLOAT32, float, INFINITY, QV_ARROW_INT64, "value inf does not fit int64");
  REFUSED(QV_ARROW_FLOAT64, double, -INFINITY, QV_ARROW_UINT8, "value -inf does not fit uint8");
  OK_AS(QV_ARROW_FLOAT64, double, -0.0, QV_ARROW_INT32, 0);
  OK_AS(QV_ARROW_FLOAT64, double, -0x1p63, QV_ARROW_INT64, -0x1p63);
  REFUSED(QV_ARROW_FLOAT64, double, 0x1p63, QV_ARROW_INT64, "value 9.223372036854776e+18 does not fit int64");
  OK_AS(QV_ARROW_FLOAT64, double, 0x1p63, QV_ARROW_UINT64, 0x1p63);
  REFUSED(QV_ARROW_FLOAT64, double, 0x1p64, QV_ARROW_UINT64, "does not fit uint64");
  REFUSED(QV_ARROW_FLOAT64, double, 128, QV_ARROW_INT8, "value 128 does not fit int8");
  OK_AS(QV_ARROW_FLOAT64, double, -128, QV_ARROW_INT8, -128);
  REFUSED(QV_ARROW_FLOAT64, double, -1, QV_ARROW_UINT32, "value -1 does not fit uint32");
  uint16_t h = qvi_double_to_half(2048);
  OK_AS(QV_ARROW_FLOAT16, uint16_t, h, QV_ARROW_INT16, 2048);
  h = qvi_double_to_half(0.5);
  REFUSED(QV_ARROW_FLOAT16, uint16_t, h, QV_ARROW_INT16, "value 0.5 does not fit int16");
  /* integer -> float: only when held exactly */
  OK_AS(QV_ARROW_INT32, int32_t, 2048, QV_ARROW_FLOAT16, 2048);
  REFUSED(QV_ARROW_INT32, int32_t, 2049, QV_ARROW_FLOAT16, "value 2049 does not fit float16");
  OK_AS(QV_ARROW_INT32, int32_t, 65504, QV_ARROW_FLOAT16, 65504);
  REFUSED(QV_ARROW_INT32, int32_t, 65536, QV_ARROW_FLOAT16, "value 65536 does not fit float16");
  OK_AS(QV_ARROW_INT32, int32_t, 16777216, QV_ARROW_FLOAT32, 16777216);
  REFUSED(QV_ARROW_INT32, int32_t, 16777217, QV_ARROW_FLOAT32, "value 16777217 does not fit float32");
  OK_AS(QV_ARROW_INT64, int64_t, (int64_t)1 << 53, QV_ARROW_FLOAT64, 0x1p53);
  REFUSED(QV_ARROW_INT64, int64_t, ((int64_t)1 << 53) + 1, QV_ARROW_FLOAT64,
          "value 9007199254740993 does not fit float64");
  OK_AS(QV_ARROW_INT64, int64_t, (int64_t)1 << 62, QV_ARROW_FLOAT32, 0x1p62); /* a power of 2 */
  REFUSED(QV_ARROW_INT64, int64_t, INT64_MAX, QV_ARROW_FLOAT64, "does not fit float64");
  REFUSED(QV_ARROW_UINT64, uint64_t, UINT64_MAX, QV_ARROW_FLOAT64, "does not fit float64");
  OK_AS(QV_ARROW_UINT64, uint64_t, (uint64_t)1 << 63, QV_ARROW_FLOAT64, 0x1p63);
  OK_AS(QV_ARROW_INT8, int8_t, -128, QV_ARROW_FLOAT16, -128);
  /* float -> float: rounds; NaN and infinities stay; a finite overflow is refused */
  /* (float)x, not an f suffix: under FLT_EVAL_METHOD 1 (s390x) a float
   * constant keeps double precision until a cast or a store rounds it */
  OK_AS(QV_ARROW_FLOAT64, double, 0.1, QV_ARROW_FLOAT32, (double)(float)0.1);
  OK_AS(QV_ARROW_FLOAT64, double, 0.1, QV_ARROW_FLOAT16, qvi_half_to_double(qvi_double_to_half(0.1)));
  OK_AS(QV_ARROW_FLOAT64, double, NAN, QV_ARROW_FLOAT16, NAN);
  OK_AS(QV_ARROW_FLOAT64, double, -INFINITY, QV_ARROW_FLOAT32, -INFINITY);
  OK_AS(QV_ARROW_FLOAT32, float, INFINITY, QV_ARROW_FLOAT16, INFINITY);
  OK_AS(QV_ARROW_FLOAT64, double, 65504, QV_ARROW_FLOAT16, 65504);
  OK_AS(QV_ARROW_FLOAT64, double, 65519, QV_ARROW_FLOAT16, 65504);
  REFUSED(QV_ARROW_FLOAT64, double, 65520, QV_ARROW_FLOAT16, "value 65520 does not fit float16");
  REFUSED(QV_ARROW_FLOAT64, double, 1e39, QV_ARROW_FLOAT32, "value 1e+39 does not fit float32");
  OK_AS(QV_ARROW_FLOAT64, double, 1e-320, QV_ARROW_FLOAT32, 0); /* underflow rounds to 0 */
  OK_AS(QV_ARROW_FLOAT32, float, (float)1e38, QV_ARROW_FLOAT64, (double)(float)1e38);
  h = qvi_double_to_half(-0.333);
  OK_AS(QV_ARROW_FLOAT16, uint16_t, h, QV_ARROW_FLOAT64, qvi_half_to_double(h));
  /* not numeric */
  const int64_t shape[1] = {1};
  uint8_t buf[8] = {0};
  QvTensor t, out;
  QvError e;
  QvTensorDesc d = {.type = QV_ARROW_INT8, .ndim = 1, .shape = shape, .data = buf, .data_size = 1};
  assert_int_equal(qv_tensor_init(&t, &d, &e), QV_OK);
  assert_int_equal(qv_tensor_cast(&t, QV_ARROW_BOOL, &out, &e), QV_EINVAL);
  qv_tensor_reset(&t);
}

static void test_where_and_layouts(void **state) {
  (void)state;
  QvError e;
  /* the first value that does not fit, by its index */
  const int64_t shape[2] = {2, 3};
  const double v[6] = {0, 1, 2, 3, 4, 300};
  uint8_t buf[64];
  QvTensor t, out;
  make(&t, QV_ARROW_INT32, 2, shape, NULL, v, 6, buf);
  assert_int_equal(qv_tensor_cast(&t, QV_ARROW_UINT8, &out, &e), QV_EINVAL);
  assert_string_equal(e.message, "element [1, 2]: value 300 does not fit uint8");
  assert_null(out.data);
  QvSparseTensor sp, cast;
  assert_int_equal(qv_sparse_from_dense(&t, QV_SPARSE_CSR, NULL, &sp, &e), QV_OK);
  assert_int_equal(qv_sparse_cast(&sp, QV_ARROW_INT8, &cast, &e), QV_EINVAL);
  assert_string_equal(e.message, "stored value 4 of 5: value 300 does not fit int8");
  qv_sparse_reset(&sp);
  qv_tensor_reset(&t);
  /* column-major stays column-major */
  const int64_t colstrides[2] = {8, 16};
  const double cm[6] = {1, 4, 2, 5, 3, 6}; /* [[1,2,3],[4,5,6]] in column order */
  make(&t, QV_ARROW_FLOAT64, 2, shape, colstrides, cm, 6, buf);
  assert_int_equal(qv_tensor_cast(&t, QV_ARROW_INT16, &out, &e), QV_OK);
  assert_true(qv_tensor_is_column_major(&out) && !qv_tensor_is_row_major(&out));
  for (int64_t i = 0; i < 6; i++) {
    int64_t idx[2] = {i / 3, i % 3};
    int64_t got;
    assert_int_equal(qv_tensor_get_int64(&out, idx, &got, &e), QV_OK);
    assert_int_equal(got, i + 1);
  }
  qv_tensor_reset(&out);
  qv_tensor_reset(&t);
  /* strided (a transposed view of a 3 x 2 row-major array) and zero strides */
  const int64_t tstrides[2] = {4, 8};
  const double tv[6] = {1, 4, 2, 5, 3, 6};
  make(&t, QV_ARROW_INT32, 2, shape, tstrides, tv, 6, buf);
  assert_int_equal(qv_tensor_cast(&t, QV_ARROW_FLOAT32, &out, &e), QV_OK);
  QvTensor want;
  uint8_t wbuf[64];
  const double rm[6] = {1, 2, 3, 4, 5, 6};
  make(&want, QV_ARROW_FLOAT32, 2, shape, NULL, rm, 6, wbuf);
  assert_true(qv_tensor_equal(&out, &want, false));
  qv_tensor_reset(&want);
  qv_tensor_reset(&out);
  qv_tensor_reset(&t);
  const int64_t zstrides[2] = {0, 0};
  const double one[1] = {9};
  make(&t, QV_ARROW_UINT16, 2, shape, zstrides, one, 1, buf);
  assert_int_equal(qv_tensor_cast(&t, QV_ARROW_INT64, &out, &e), QV_OK);
  assert_int_equal(qv_tensor_n_elements(&out), 6);
  assert_int_equal(qv_tensor_count_nonzero(&out), 6);
  qv_tensor_reset(&out);
  qv_tensor_reset(&t);
  /* 0-d and empty */
  make(&t, QV_ARROW_FLOAT16, 0, NULL, NULL, one, 1, buf);
  assert_int_equal(qv_tensor_cast(&t, QV_ARROW_UINT8, &out, &e), QV_OK);
  assert_int_equal(out.data[0], 9);
  qv_tensor_reset(&out);
  qv_tensor_reset(&t);
  const int64_t empty[2] = {0, 3};
  make(&t, QV_ARROW_INT8, 2, empty, NULL, one, 0, buf);
  assert_int_equal(qv_tensor_cast(&t, QV_ARROW_FLOAT64, &out, &e), QV_OK);
  assert_int_equal(qv_tensor_n_elements(&out), 0);
  qv_tensor_reset(&out);
  qv_tensor_reset(&t);
}

/* A tensor over caller memory with an owner shares its index buffers; the
 * owner is retained until the cast is reset. */
static int released;
static void note_release(void *p) {
  (void)p;
  released++;
}

static void test_sharing(void **state) {
  (void)state;
  QvError e;
  const int64_t shape[2] = {2, 3};
  int32_t indptr[3] = {0, 1, 2};
  int32_t indices[2] = {1, 2};
  double values[2] = {1.5, -3};
  released = 0;
  QvOwner *owner = qv_owner_new(note_release, NULL);
  QvSparseDesc d = {.format = QV_SPARSE_CSR, .value_type = QV_ARROW_FLOAT64,
                    .index_type = QV_ARROW_INT32, .indptr_type = QV_ARROW_INT32, .ndim = 2,
                    .shape = shape, .nnz = 2, .values = values, .owner = owner,
                    .indptr = indptr, .indices = indices};
  QvSparseTensor t, c;
  assert_int_equal(qv_sparse_init(&t, &d, &e), QV_OK);
  qv_owner_free(owner);
  assert_int_equal(qv_sparse_cast(&t, QV_ARROW_INT8, &c, &e), QV_EINVAL);
  assert_string_equal(e.message, "stored value 0 of 2: value 1.5 does not fit int8");
  assert_int_equal(qv_sparse_cast(&t, QV_ARROW_FLOAT16, &c, &e), QV_OK);
  assert_ptr_equal(c.indices, t.indices); /* shared */
  qv_sparse_reset(&t);
  assert_int_equal(released, 0);
  assert_int_equal(qv_sparse_validate(&c, &e), QV_OK);
  QvTensor dense;
  assert_int_equal(qv_sparse_to_dense(&c, NULL, &dense, &e), QV_OK);
  int64_t idx[2] = {1, 2};
  double got;
  assert_int_equal(qv_tensor_get_double(&dense, idx, &got, &e), QV_OK);
  assert_true(got == -3);
  qv_tensor_reset(&dense);
  qv_sparse_reset(&c);
  assert_int_equal(released, 1);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_every_pair_every_format),
      cmocka_unit_test(test_rules),
      cmocka_unit_test(test_where_and_layouts),
      cmocka_unit_test(test_sharing),
  };
  return qv_test_run(tests, NULL, NULL);
}
