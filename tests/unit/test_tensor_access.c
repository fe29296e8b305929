/* Tensor layout queries, byte offsets, typed element access with
 * conversions, and the float16 helpers. */
#include "quiver/advanced.h"
#include "test_util.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "quiver/tensor.h"

static void assert_error(QvStatus st, const QvError *err, QvStatus code, const char *substr) {
  assert_int_equal(st, code);
  if (strstr(err->message, substr) == NULL)
    fail_msg("message '%s' lacks '%s'", err->message, substr);
}

static uint8_t mem[4096];

static QvTensor view(QvArrowType type, int32_t ndim, const int64_t *shape, const int64_t *strides,
                     const void *data, int64_t size) {
  QvTensor t;
  QvError err = {0};
  QvStatus st = qv_tensor_init(&t, &(QvTensorDesc){.type = type, .ndim = ndim, .shape = shape,
                                                   .strides = strides, .data = data,
                                                   .data_size = size}, &err);
  if (st != QV_OK) fail_msg("make: %s", err.message);
  return t;
}

static void check_layout(QvArrowType type, int32_t ndim, const int64_t *shape,
                         const int64_t *strides, bool row, bool col) {
  QvTensor t = view(type, ndim, shape, strides, mem, sizeof mem);
  assert_int_equal(qv_tensor_is_row_major(&t), row);
  assert_int_equal(qv_tensor_is_column_major(&t), col);
  assert_int_equal(qv_tensor_is_contiguous(&t), row || col);
  qv_tensor_reset(&t);
}

static void test_layouts(void **state) {
  (void)state;
  int64_t s34[2] = {3, 4};
  int64_t rm[2] = {32, 8}, cm[2] = {8, 24}, every_other[2] = {64, 16}, bcast[2] = {0, 8};
  check_layout(QV_ARROW_FLOAT64, 2, s34, NULL, true, false);
  check_layout(QV_ARROW_FLOAT64, 2, s34, rm, true, false);
  check_layout(QV_ARROW_FLOAT64, 2, s34, cm, false, true);
  check_layout(QV_ARROW_FLOAT64, 2, s34, every_other, false, false);
  check_layout(QV_ARROW_FLOAT64, 2, s34, bcast, false, false);
  /* sub-block of a 4x6 row-major matrix */
  int64_t s23[2] = {2, 3}, sub[2] = {48, 8};
  check_layout(QV_ARROW_FLOAT64, 2, s23, sub, false, false);
  /* extent-1 dims do not constrain their stride (NumPy; Arrow says the
   * 1x5 tensor [40, 8] is not column-major) */
  int64_t s15[2] = {1, 5}, s15_rm[2] = {40, 8}, s15_any[2] = {12345, 8};
  check_layout(QV_ARROW_INT64, 2, s15, s15_rm, true, true);
  check_layout(QV_ARROW_INT64, 2, s15, s15_any, true, true);
  int64_t s51[2] = {5, 1}, s51_rm[2] = {8, 8};
  check_layout(QV_ARROW_INT64, 2, s51, s51_rm, true, true);
  int64_t s111[3] = {1, 1, 1}, odd[3] = {7, 100, 3};
  check_layout(QV_ARROW_FLOAT32, 3, s111, odd, true, true);
  int64_t s1x3[3] = {2, 1, 3}, rm1[3] = {12, 999, 4}, cm1[3] = {4, 0, 8};
  check_layout(QV_ARROW_FLOAT32, 3, s1x3, rm1, true, false);
  check_layout(QV_ARROW_FLOAT32, 3, s1x3, cm1, false, true);
  /* no elements: both, whatever the strides */
  int64_t s30[2] = {3, 0}, junk[2] = {1000, 3};
  check_layout(QV_ARROW_INT32, 2, s30, junk, true, true);
  /* 0-d and 1-d */
  check_layout(QV_ARROW_FLOAT64, 0, NULL, NULL, true, true);
  int64_t s7[1] = {7}, st7[1] = {4}, st7b[1] = {8};
  check_layout(QV_ARROW_INT32, 1, s7, st7, true, true);
  check_layout(QV_ARROW_INT32, 1, s7, st7b, false, false);
  /* 4-d */
  int64_t s4[4] = {2, 3, 4, 5};
  int64_t rm4[4] = {240, 80, 20, 4}, cm4[4] = {4, 8, 24, 96}, perm[4] = {4, 40, 8, 120};
  check_layout(QV_ARROW_UINT32, 4, s4, rm4, true, false);
  check_layout(QV_ARROW_UINT32, 4, s4, cm4, false, true);
  check_layout(QV_ARROW_UINT32, 4, s4, perm, false, false);
}

static void test_byte_offset(void **state) {
  (void)state;
  QvError err = {0};
  int64_t shape[3] = {2, 3, 4}, strides[3] = {4, 8, 24};
  QvTensor t = view(QV_ARROW_INT32, 3, shape, strides, mem, 96);
  int64_t off = -1;
  int64_t idx[3] = {1, 2, 3};
  assert_int_equal(qv_tensor_byte_offset(&t, idx, &off, &err), QV_OK);
  assert_int_equal(off, 4 + 16 + 72);
  int64_t bad[3] = {1, 3, 0};
  assert_error(qv_tensor_byte_offset(&t, bad, &off, &err), &err, QV_EINVAL,
               "index[1] = 3 out of range for shape[1] = 3");
  int64_t neg[3] = {-1, 0, 0};
  assert_error(qv_tensor_byte_offset(&t, neg, &off, &err), &err, QV_EINVAL, "index[0] = -1");
  assert_error(qv_tensor_byte_offset(&t, NULL, &off, &err), &err, QV_EARG, "index is NULL");
  double d;
  assert_error(qv_tensor_get_double(&t, bad, &d, &err), &err, QV_EINVAL, "out of range");
  qv_tensor_reset(&t);

  QvTensor s = view(QV_ARROW_FLOAT64, 0, NULL, NULL, mem, 8);
  assert_int_equal(qv_tensor_byte_offset(&s, NULL, &off, &err), QV_OK);
  assert_int_equal(off, 0);
  qv_tensor_reset(&s);

  int64_t empty[2] = {3, 0};
  QvTensor e = view(QV_ARROW_FLOAT64, 2, empty, NULL, NULL, 0);
  int64_t zero[2] = {0, 0};
  assert_error(qv_tensor_byte_offset(&e, zero, &off, &err), &err, QV_EINVAL,
               "index[1] = 0 out of range for shape[1] = 0");
  qv_tensor_reset(&e);
}

/* Stores one value of each type's extremes at an unaligned address and reads
 * it back through each getter. */
static void test_get_every_type(void **state) {
  (void)state;
  QvError err = {0};
  uint8_t *p = mem + 3; /* unaligned on purpose */
  int64_t one[1] = {1};
  int64_t idx[1] = {0};
  double d;
  int64_t i64;
  uint64_t u64;
#define CHECK_INT(vtype, ctype, value, ok_i64, ok_u64)                    \
  do {                                                                    \
    ctype v_ = (value);                                                   \
    memcpy(p, &v_, sizeof v_);                                            \
    QvTensor t_ = view(vtype, 1, one, NULL, p, sizeof v_);                \
    assert_int_equal(qv_tensor_get_double(&t_, idx, &d, &err), QV_OK);    \
    assert_true(d == (double)v_);                                         \
    assert_int_equal(qv_tensor_get_int64(&t_, idx, &i64, &err), ok_i64);  \
    if ((ok_i64) == QV_OK) assert_true(i64 == (int64_t)v_);               \
    assert_int_equal(qv_tensor_get_uint64(&t_, idx, &u64, &err), ok_u64); \
    if ((ok_u64) == QV_OK) assert_true(u64 == (uint64_t)v_);              \
    qv_tensor_reset(&t_);                                               \
  } while (0)
  CHECK_INT(QV_ARROW_INT8, int8_t, INT8_MIN, QV_OK, QV_EINVAL);
  CHECK_INT(QV_ARROW_INT8, int8_t, INT8_MAX, QV_OK, QV_OK);
  CHECK_INT(QV_ARROW_INT16, int16_t, INT16_MIN, QV_OK, QV_EINVAL);
  CHECK_INT(QV_ARROW_INT16, int16_t, INT16_MAX, QV_OK, QV_OK);
  CHECK_INT(QV_ARROW_INT32, int32_t, INT32_MIN, QV_OK, QV_EINVAL);
  CHECK_INT(QV_ARROW_INT32, int32_t, INT32_MAX, QV_OK, QV_OK);
  CHECK_INT(QV_ARROW_INT64, int64_t, INT64_MIN, QV_OK, QV_EINVAL);
  CHECK_INT(QV_ARROW_INT64, int64_t, INT64_MAX, QV_OK, QV_OK);
  CHECK_INT(QV_ARROW_INT64, int64_t, 0, QV_OK, QV_OK);
  CHECK_INT(QV_ARROW_UINT8, uint8_t, UINT8_MAX, QV_OK, QV_OK);
  CHECK_INT(QV_ARROW_UINT16, uint16_t, UINT16_MAX, QV_OK, QV_OK);
  CHECK_INT(QV_ARROW_UINT32, uint32_t, UINT32_MAX, QV_OK, QV_OK);
  CHECK_INT(QV_ARROW_UINT64, uint64_t, UINT64_MAX, QV_EINVAL, QV_OK);
  CHECK_INT(QV_ARROW_UINT64, uint64_t, (uint64_t)INT64_MAX, QV_OK, QV_OK);
  CHECK_INT(QV_ARROW_UINT64, uint64_t, (uint64_t)INT64_MAX + 1, QV_EINVAL, QV_OK);
#undef CHECK_INT

  /* the messages name the value and the index */
  uint64_t big = UINT64_MAX;
  memcpy(p, &big, 8);
  QvTensor t = view(QV_ARROW_UINT64, 1, one, NULL, p, 8);
  assert_error(qv_tensor_get_int64(&t, idx, &i64, &err), &err, QV_EINVAL,
               "uint64 value 18446744073709551615 at (0) does not fit in int64");
  qv_tensor_reset(&t);
  int16_t neg = -5;
  memcpy(p, &neg, 2);
  t = view(QV_ARROW_INT16, 1, one, NULL, p, 2);
  assert_error(qv_tensor_get_uint64(&t, idx, &u64, &err), &err, QV_EINVAL,
               "int16 value -5 at (0) does not fit in uint64");
  qv_tensor_reset(&t);

  /* floats: exact integers convert, anything else is an error */
  static const struct {
    double v;
    QvStatus i, u;
  } fcases[] = {
      {3.0, QV_OK, QV_OK},
      {-3.0, QV_OK, QV_EINVAL},
      {-0.0, QV_OK, QV_OK},
      {2.5, QV_EINVAL, QV_EINVAL},
      {NAN, QV_EINVAL, QV_EINVAL},
      {INFINITY, QV_EINVAL, QV_EINVAL},
      {-INFINITY, QV_EINVAL, QV_EINVAL},
      {0x1p63, QV_EINVAL, QV_OK},
      {-0x1p63, QV_OK, QV_EINVAL},
      {0x1p64, QV_EINVAL, QV_EINVAL},
  };
  for (size_t k = 0; k < sizeof fcases / sizeof fcases[0]; k++) {
    double v = fcases[k].v;
    memcpy(p, &v, 8);
    t = view(QV_ARROW_FLOAT64, 1, one, NULL, p, 8);
    assert_int_equal(qv_tensor_get_double(&t, idx, &d, &err), QV_OK);
    assert_true(isnan(v) ? isnan(d) : d == v);
    assert_int_equal(qv_tensor_get_int64(&t, idx, &i64, &err), fcases[k].i);
    if (fcases[k].i == QV_OK) assert_true((double)i64 == v);
    assert_int_equal(qv_tensor_get_uint64(&t, idx, &u64, &err), fcases[k].u);
    if (fcases[k].u == QV_OK) assert_true((double)u64 == v);
    qv_tensor_reset(&t);
  }
  double frac = 2.5;
  memcpy(p, &frac, 8);
  t = view(QV_ARROW_FLOAT64, 1, one, NULL, p, 8);
  assert_error(qv_tensor_get_int64(&t, idx, &i64, &err), &err, QV_EINVAL,
               "float64 value 2.5 at (0) is not representable as int64");
  qv_tensor_reset(&t);

  float f = -1.5e30f;
  memcpy(p, &f, 4);
  t = view(QV_ARROW_FLOAT32, 1, one, NULL, p, 4);
  assert_int_equal(qv_tensor_get_double(&t, idx, &d, &err), QV_OK);
  assert_true(d == (double)f);
  assert_int_equal(qv_tensor_get_int64(&t, idx, &i64, &err), QV_EINVAL);
  qv_tensor_reset(&t);
  f = 16777216.0f;
  memcpy(p, &f, 4);
  t = view(QV_ARROW_FLOAT32, 1, one, NULL, p, 4);
  assert_int_equal(qv_tensor_get_int64(&t, idx, &i64, &err), QV_OK);
  assert_int_equal(i64, 16777216);
  qv_tensor_reset(&t);

  uint16_t h = 0xfbff; /* -65504 */
  memcpy(p, &h, 2);
  t = view(QV_ARROW_FLOAT16, 1, one, NULL, p, 2);
  assert_int_equal(qv_tensor_get_double(&t, idx, &d, &err), QV_OK);
  assert_true(d == -65504.0);
  assert_int_equal(qv_tensor_get_int64(&t, idx, &i64, &err), QV_OK);
  assert_int_equal(i64, -65504);
  assert_int_equal(qv_tensor_get_uint64(&t, idx, &u64, &err), QV_EINVAL);
  qv_tensor_reset(&t);
}

/* Element (i, j) of strided views, and the 0-d scalar. */
static void test_get_strided(void **state) {
  (void)state;
  QvError err = {0};
  int32_t m[4][6];
  for (int i = 0; i < 4; i++)
    for (int j = 0; j < 6; j++) m[i][j] = 10 * i + j;
  /* every other column, rows 1..3 */
  int64_t shape[2] = {3, 3}, strides[2] = {24, 8};
  QvTensor t = view(QV_ARROW_INT32, 2, shape, strides, &m[1][0], (int64_t)sizeof m - 24);
  for (int64_t i = 0; i < 3; i++)
    for (int64_t j = 0; j < 3; j++) {
      int64_t idx[2] = {i, j};
      int64_t v;
      assert_int_equal(qv_tensor_get_int64(&t, idx, &v, &err), QV_OK);
      assert_int_equal(v, 10 * (i + 1) + 2 * j);
    }
  qv_tensor_reset(&t);
  /* broadcast a row: strides [0, 4] */
  int64_t bshape[2] = {5, 6}, bstrides[2] = {0, 4};
  t = view(QV_ARROW_INT32, 2, bshape, bstrides, &m[2][0], 24);
  for (int64_t i = 0; i < 5; i++)
    for (int64_t j = 0; j < 6; j++) {
      int64_t idx[2] = {i, j};
      double v;
      assert_int_equal(qv_tensor_get_double(&t, idx, &v, &err), QV_OK);
      assert_true(v == 20.0 + (double)j);
    }
  qv_tensor_reset(&t);
  double x = 42.5;
  t = view(QV_ARROW_FLOAT64, 0, NULL, NULL, &x, 8);
  double v;
  assert_int_equal(qv_tensor_get_double(&t, NULL, &v, &err), QV_OK);
  assert_true(v == 42.5);
  qv_tensor_reset(&t);
}

static float bits_to_float(uint32_t b) {
  float f;
  memcpy(&f, &b, 4);
  return f;
}

static void test_half_known_values(void **state) {
  (void)state;
  static const struct {
    uint16_t h;
    float f;
  } exact[] = {
      {0x0000, 0.0f},        {0x3c00, 1.0f},     {0xc000, -2.0f},     {0x7bff, 65504.0f},
      {0xfbff, -65504.0f},   {0x0400, 0x1p-14f}, {0x0001, 0x1p-24f},  {0x03ff, 0x3ffp-24f},
      {0x3555, 0x1.554p-2f}, {0x7c00, INFINITY}, {0xfc00, -INFINITY}, {0x3e00, 1.5f},
  };
  for (size_t i = 0; i < sizeof exact / sizeof exact[0]; i++) {
    assert_true(qv_half_to_float(exact[i].h) == exact[i].f);
    assert_int_equal(qv_float_to_half(exact[i].f), exact[i].h);
  }
  /* signed zero both ways */
  float nz = qv_half_to_float(0x8000);
  assert_true(nz == 0.0f && signbit(nz));
  assert_int_equal(qv_float_to_half(-0.0f), 0x8000);
  /* NaN stays NaN (never infinity), sign kept, quiet */
  assert_true(isnan(qv_half_to_float(0x7e00)));
  assert_true(isnan(qv_half_to_float(0x7c01))); /* signalling, payload 1 */
  uint16_t hn = qv_float_to_half(NAN);
  assert_int_equal(hn & 0x7c00, 0x7c00);
  assert_int_not_equal(hn & 0x03ff, 0);
  uint16_t tiny_payload = qv_float_to_half(bits_to_float(0x7f800001u)); /* payload below half's */
  assert_int_equal(tiny_payload & 0x7c00, 0x7c00);
  assert_int_not_equal(tiny_payload & 0x03ff, 0);
  assert_int_equal(qv_float_to_half(bits_to_float(0xffc00000u)) & 0x8000, 0x8000);

  /* rounding to nearest, ties to even */
  assert_int_equal(qv_float_to_half(1.0f + 0x1p-11f), 0x3c00);            /* tie -> even 1.0 */
  assert_int_equal(qv_float_to_half(1.0f + 3 * 0x1p-11f), 0x3c02);        /* tie -> even up */
  assert_int_equal(qv_float_to_half(1.0f + 0x1p-11f + 0x1p-20f), 0x3c01); /* above tie */
  assert_int_equal(qv_float_to_half(65519.0f), 0x7bff);
  assert_int_equal(qv_float_to_half(65520.0f), 0x7c00); /* tie at max goes to inf */
  assert_int_equal(qv_float_to_half(-65520.0f), 0xfc00);
  assert_int_equal(qv_float_to_half(1e10f), 0x7c00);
  assert_int_equal(qv_float_to_half(2047.5f), 0x6800); /* 0x67ff + tie -> even 2048 */
  /* subnormals */
  assert_int_equal(qv_float_to_half(0x1p-25f), 0x0000); /* tie -> even zero */
  assert_int_equal(qv_float_to_half(-0x1p-25f), 0x8000);
  assert_int_equal(qv_float_to_half(0x1.000002p-25f), 0x0001); /* just above the tie */
  assert_int_equal(qv_float_to_half(3 * 0x1p-25f), 0x0002);    /* 1.5 units: tie -> even 2 */
  assert_int_equal(qv_float_to_half(5 * 0x1p-25f), 0x0002);    /* 2.5 units: tie -> even 2 */
  assert_int_equal(qv_float_to_half(0x1p-26f), 0x0000);
  assert_int_equal(qv_float_to_half(1e-30f), 0x0000);
  assert_int_equal(qv_float_to_half(0x3ffp-24f + 0x1p-25f), 0x0400); /* rounds up to normal */
  assert_int_equal(qv_float_to_half(0x1p-14f - 0x1p-30f), 0x0400);
}

/* Every half round-trips, and float -> half picks the nearest half (ties to
 * even) for floats spread over the whole range. */
static void test_half_exhaustive(void **state) {
  (void)state;
  for (uint32_t h = 0; h < 0x10000; h++) {
    float f = qv_half_to_float((uint16_t)h);
    if ((h & 0x7c00) == 0x7c00 && (h & 0x3ff)) {
      assert_true(isnan(f));
      continue;
    }
    assert_int_equal(qv_float_to_half(f), h);
  }
  uint64_t s = 0x9e3779b97f4a7c15u;
  for (int i = 0; i < 200000; i++) {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    /* floats with exponents around half's range, plus exact midpoints */
    uint32_t bits = (uint32_t)(s & 0x807fffffu) | (uint32_t)((95 + (s >> 40) % 50) << 23);
    if (i % 4 == 0) bits &= ~0x0fffu; /* many ties */
    float f = bits_to_float(bits);
    uint16_t h = qv_float_to_half(f);
    double a = fabs((double)f);
    double got = fabs((double)qv_half_to_float(h));
    if ((h & 0x7fff) == 0x7c00) {
      assert_true(a >= 65520.0);
      continue;
    }
    assert_true((h & 0x8000) == ((bits >> 16) & 0x8000));
    /* neighbours of the result are not closer */
    uint16_t mag = h & 0x7fff;
    double err = fabs(got - a);
    if (mag > 0) {
      double below = (double)qv_half_to_float((uint16_t)(mag - 1));
      assert_true(fabs(below - a) >= err);
      if (fabs(below - a) == err) assert_int_equal(mag & 1, 0);
    }
    if (mag < 0x7bff) {
      double above = (double)qv_half_to_float((uint16_t)(mag + 1));
      assert_true(fabs(above - a) >= err);
      if (fabs(above - a) == err) assert_int_equal(mag & 1, 0);
    }
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_layouts),           cmocka_unit_test(test_byte_offset),
      cmocka_unit_test(test_get_every_type),    cmocka_unit_test(test_get_strided),
      cmocka_unit_test(test_half_known_values), cmocka_unit_test(test_half_exhaustive),
  };
  return qv_test_run(tests, NULL, NULL);
}
