/* count_nonzero, equals and copies between layouts: hand-made cases for
 * every dtype and layout, then random views checked element by element
 * against get_double / the source bytes. */
#include "quiver/advanced.h"
#include "test_util.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "quiver/tensor.h"
#include "util/load.h"

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

/* Advances a row-major index over shape; false after the last. */
static bool next_index(int32_t ndim, const int64_t *shape, int64_t *idx) {
  for (int32_t d = ndim - 1; d >= 0; d--) {
    if (++idx[d] < shape[d]) return true;
    idx[d] = 0;
  }
  return false;
}

static bool same_value(double a, double b) {
  return a == b || (isnan(a) && isnan(b));
}

/* Reference count: get_double != 0 over every index. */
static int64_t reference_nonzero(const QvTensor *t) {
  if (qv_tensor_n_elements(t) == 0) return 0;
  int64_t idx[QV_TENSOR_MAX_NDIM] = {0};
  int64_t n = 0;
  do {
    double v;
    assert_int_equal(qv_tensor_get_double(t, idx, &v, NULL), QV_OK);
    n += v != 0.0; /* NaN != 0 */
  } while (next_index(t->ndim, t->shape, idx));
  return n;
}

/* Copies src both ways and checks every element of the result against the
 * source: same bytes, same get_double; the copy is contiguous and equal. */
static void check_copies(const QvTensor *src) {
  QvError err = {0};
  size_t elsize = qv_arrow_type_size(src->type);
  bool has_nan = false;
  for (int order = 0; order < 2; order++) {
    bool column_major = order == 1;
    QvTensor dst;
    QvStatus st = qv_tensor_copy(src, column_major, &dst, &err);
    if (st != QV_OK) fail_msg("copy: %s", err.message);
    assert_int_equal(dst.type, src->type);
    assert_int_equal(dst.ndim, src->ndim);
    assert_true(column_major ? qv_tensor_is_column_major(&dst) : qv_tensor_is_row_major(&dst));
    int64_t strides[QV_TENSOR_MAX_NDIM];
    assert_int_equal(
        qv_tensor_compute_strides(src->type, src->ndim, src->shape, column_major, strides, &err),
        QV_OK);
    if (qv_tensor_n_elements(src) > 0) {
      int64_t idx[QV_TENSOR_MAX_NDIM] = {0};
      do {
        int64_t so, doff = 0;
        assert_int_equal(qv_tensor_byte_offset(src, idx, &so, &err), QV_OK);
        for (int32_t d = 0; d < src->ndim; d++) doff += idx[d] * strides[d];
        if (memcmp(src->data + so, dst.data + doff, elsize) != 0) {
          fail_msg("%s copy of %s differs at flat offset %lld",
                   column_major ? "column-major" : "row-major", qv_arrow_type_name(src->type),
                   (long long)doff);
        }
        double a, b;
        assert_int_equal(qv_tensor_get_double(src, idx, &a, &err), QV_OK);
        assert_int_equal(qv_tensor_get_double(&dst, idx, &b, &err), QV_OK);
        assert_true(same_value(a, b));
        has_nan |= isnan(a);
      } while (next_index(src->ndim, src->shape, idx));
    }
    assert_true(qv_tensor_equal(src, &dst, true));
    assert_true(qv_tensor_equal(&dst, src, true));
    assert_int_equal(qv_tensor_equal(src, &dst, false), !has_nan);
    assert_int_equal(qv_tensor_count_nonzero(&dst), qv_tensor_count_nonzero(src));

    /* copy_to into an unaligned buffer of exactly the right size */
    size_t bytes = (size_t)qv_tensor_n_elements(src) * elsize;
    uint8_t *raw = malloc(bytes + 1);
    assert_non_null(raw);
    assert_int_equal(qv_tensor_copy_to(src, column_major, raw + 1, bytes, &err), QV_OK);
    assert_memory_equal(raw + 1, dst.data, bytes);
    if (bytes > 0) {
      assert_int_equal(qv_tensor_copy_to(src, column_major, raw + 1, bytes - 1, &err), QV_EARG);
      assert_non_null(strstr(err.message, "destination has"));
    }
    free(raw);
    qv_tensor_reset(&dst);
  }
  assert_int_equal(qv_tensor_count_nonzero(src), reference_nonzero(src));
}

static const QvArrowType all_types[] = {
    QV_ARROW_INT8,    QV_ARROW_INT16,   QV_ARROW_INT32,   QV_ARROW_INT64,
    QV_ARROW_UINT8,   QV_ARROW_UINT16,  QV_ARROW_UINT32,  QV_ARROW_UINT64,
    QV_ARROW_FLOAT16, QV_ARROW_FLOAT32, QV_ARROW_FLOAT64,
};

/* Writes value k (small, distinct, with zeros sprinkled) as type at p. */
static void store(QvArrowType type, uint8_t *p, int64_t k) {
  int64_t v = (k % 7 == 3) ? 0 : k % 100 - 30;
  switch (type) {
    case QV_ARROW_INT8: {
      int8_t x = (int8_t)v;
      memcpy(p, &x, 1);
      break;
    }
    case QV_ARROW_INT16: {
      int16_t x = (int16_t)(v * 300);
      memcpy(p, &x, 2);
      break;
    }
    case QV_ARROW_INT32: {
      int32_t x = (int32_t)(v * 100000);
      memcpy(p, &x, 4);
      break;
    }
    case QV_ARROW_INT64: {
      int64_t x = v * INT64_C(10000000000);
      memcpy(p, &x, 8);
      break;
    }
    case QV_ARROW_UINT8: {
      uint8_t x = (uint8_t)(v + 30);
      memcpy(p, &x, 1);
      break;
    }
    case QV_ARROW_UINT16: {
      uint16_t x = (uint16_t)((v + 30) * 600);
      memcpy(p, &x, 2);
      break;
    }
    case QV_ARROW_UINT32: {
      uint32_t x = (uint32_t)((v + 30) * 40000000);
      memcpy(p, &x, 4);
      break;
    }
    case QV_ARROW_UINT64: {
      uint64_t x = (uint64_t)(v + 30) << 57;
      memcpy(p, &x, 8);
      break;
    }
    case QV_ARROW_FLOAT16: {
      uint16_t x = qv_float_to_half((float)v * 0.5f);
      memcpy(p, &x, 2);
      break;
    }
    case QV_ARROW_FLOAT32: {
      float x = (float)v * 0.25f;
      memcpy(p, &x, 4);
      break;
    }
    default: {
      double x = (double)v * 0.125;
      memcpy(p, &x, 8);
      break;
    }
  }
}

/* A row-major parent of shape[ndim] in a fresh buffer at byte offset `skew`. */
static uint8_t *make_parent(QvArrowType type, int32_t ndim, const int64_t *shape, size_t skew,
                            int64_t *count) {
  int64_t n = 1;
  for (int32_t i = 0; i < ndim; i++) n *= shape[i];
  size_t e = qv_arrow_type_size(type);
  uint8_t *buf = calloc((size_t)n * e + skew + 1, 1);
  assert_non_null(buf);
  for (int64_t k = 0; k < n; k++) store(type, buf + skew + (size_t)k * e, k);
  *count = n;
  return buf;
}

/* Every dtype through the same set of layouts. */
static void test_layouts_every_type(void **state) {
  (void)state;
  for (size_t ti = 0; ti < sizeof all_types / sizeof all_types[0]; ti++) {
    QvArrowType type = all_types[ti];
    int64_t e = (int64_t)qv_arrow_type_size(type);
    int64_t n;
    int64_t pshape[2] = {6, 8};
    uint8_t *buf = make_parent(type, 2, pshape, 1, &n);
    const uint8_t *base = buf + 1; /* unaligned */
    int64_t size = n * e;

    int64_t s68[2] = {6, 8};
    QvTensor rm = view(type, 2, s68, NULL, base, size);
    check_copies(&rm);
    /* the same bytes read as an 8x6 column-major tensor */
    int64_t s86[2] = {8, 6}, cm_strides[2] = {e, 8 * e};
    QvTensor cm = view(type, 2, s86, cm_strides, base, size);
    assert_true(qv_tensor_is_column_major(&cm));
    check_copies(&cm);
    /* every other column */
    int64_t s64[2] = {6, 4}, eo[2] = {8 * e, 2 * e};
    QvTensor every_other = view(type, 2, s64, eo, base, size);
    check_copies(&every_other);
    /* a 3x5 sub-block starting at (2, 1) */
    int64_t s35[2] = {3, 5}, sb[2] = {8 * e, e};
    QvTensor sub = view(type, 2, s35, sb, base + (2 * 8 + 1) * e, size - (2 * 8 + 1) * e);
    check_copies(&sub);
    /* broadcasting row 1 four times: strides [0, e] */
    int64_t s48[2] = {4, 8}, bc[2] = {0, e};
    QvTensor bcast = view(type, 2, s48, bc, base + 8 * e, 8 * e);
    check_copies(&bcast);
    /* transposed view of a 3-d block, 1-d, 0-d, zero-length */
    int64_t s3[3] = {2, 3, 8}, s3t[3] = {8 * e, 16 * e, e};
    QvTensor t3 = view(type, 3, s3, s3t, base, size);
    check_copies(&t3);
    int64_t s1[1] = {48};
    QvTensor one = view(type, 1, s1, NULL, base, size);
    check_copies(&one);
    QvTensor scalar = view(type, 0, NULL, NULL, base + 5 * e, e);
    check_copies(&scalar);
    int64_t z30[2] = {3, 0}, z04[2] = {0, 4}, z302[3] = {3, 0, 2};
    QvTensor e30 = view(type, 2, z30, NULL, NULL, 0);
    QvTensor e04 = view(type, 2, z04, NULL, NULL, 0);
    QvTensor e302 = view(type, 3, z302, NULL, NULL, 0);
    check_copies(&e30);
    check_copies(&e04);
    check_copies(&e302);
    assert_int_equal(qv_tensor_count_nonzero(&e302), 0);
    /* 4-d: 2x2x3x4 read column-major, and a permuted view */
    int64_t s4[4] = {2, 2, 3, 4}, c4[4] = {e, 2 * e, 4 * e, 12 * e},
            p4[4] = {24 * e, e, 8 * e, 2 * e};
    QvTensor four = view(type, 4, s4, c4, base, size);
    check_copies(&four);
    int64_t sp4[4] = {2, 2, 3, 4};
    QvTensor perm = view(type, 4, sp4, p4, base, size);
    check_copies(&perm);

    /* equals across layouts: the row-major copy of the column-major view */
    QvTensor c;
    QvError err = {0};
    assert_int_equal(qv_tensor_copy(&cm, false, &c, &err), QV_OK);
    assert_true(qv_tensor_equal(&cm, &c, false)); /* no NaNs in these values */
    assert_true(qv_tensor_equal(&c, &cm, true));
    assert_false(qv_tensor_equal(&c, &rm, true)); /* different shape */
    qv_tensor_reset(&c);

    QvTensor *all[] = {&rm,     &cm,  &every_other, &sub,  &bcast, &t3,  &one,
                       &scalar, &e30, &e04,         &e302, &four,  &perm};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) qv_tensor_reset(all[i]);
    free(buf);
  }
}

static void test_count_nonzero_values(void **state) {
  (void)state;
  double d[7] = {0.0, -0.0, NAN, 1.0, -INFINITY, 5e-324, -NAN};
  int64_t s7[1] = {7};
  QvTensor t = view(QV_ARROW_FLOAT64, 1, s7, NULL, d, sizeof d);
  assert_int_equal(qv_tensor_count_nonzero(&t), 5);
  qv_tensor_reset(&t);
  float f[7] = {0.0f, -0.0f, NAN, 1.0f, -INFINITY, 1e-45f, -0.0f};
  t = view(QV_ARROW_FLOAT32, 1, s7, NULL, f, sizeof f);
  assert_int_equal(qv_tensor_count_nonzero(&t), 4);
  qv_tensor_reset(&t);
  uint16_t h[7] = {0x0000, 0x8000, 0x7e00, 0x3c00, 0x0001, 0xfc00, 0x8001};
  t = view(QV_ARROW_FLOAT16, 1, s7, NULL, h, sizeof h);
  assert_int_equal(qv_tensor_count_nonzero(&t), 5);
  qv_tensor_reset(&t);
  /* integers: 0x80 is a non-zero int8 (no sign-bit masking) */
  uint8_t b[7] = {0, 0x80, 1, 0, 0xff, 0, 0};
  t = view(QV_ARROW_INT8, 1, s7, NULL, b, sizeof b);
  assert_int_equal(qv_tensor_count_nonzero(&t), 3);
  qv_tensor_reset(&t);
  int64_t big[3] = {INT64_MIN, 0, 1};
  int64_t s3[1] = {3};
  t = view(QV_ARROW_INT64, 1, s3, NULL, big, sizeof big);
  assert_int_equal(qv_tensor_count_nonzero(&t), 2);
  qv_tensor_reset(&t);
  /* 0-d */
  double zero = -0.0, nan = NAN;
  t = view(QV_ARROW_FLOAT64, 0, NULL, NULL, &zero, 8);
  assert_int_equal(qv_tensor_count_nonzero(&t), 0);
  qv_tensor_reset(&t);
  t = view(QV_ARROW_FLOAT64, 0, NULL, NULL, &nan, 8);
  assert_int_equal(qv_tensor_count_nonzero(&t), 1);
  qv_tensor_reset(&t);
  /* broadcasting counts each repeat; a strided view counts only its elements */
  int32_t row[4] = {0, 7, 0, 9};
  int64_t s54[2] = {5, 4}, bc[2] = {0, 4};
  t = view(QV_ARROW_INT32, 2, s54, bc, row, sizeof row);
  assert_int_equal(qv_tensor_count_nonzero(&t), 10);
  qv_tensor_reset(&t);
  int64_t s2[1] = {2}, odd[1] = {8};
  t = view(QV_ARROW_INT32, 1, s2, odd, row + 1, 12);
  assert_int_equal(qv_tensor_count_nonzero(&t), 2);
  qv_tensor_reset(&t);
}


/* Long runs go through the blocked loop; lengths around the block size and
 * odd tails for every element width. */
static void test_count_nonzero_long(void **state) {
  (void)state;
  static const int64_t lengths[] = {1, 127, 128, 129, 255, 256, 257, 1000, 4099};
  for (size_t ti = 0; ti < sizeof all_types / sizeof all_types[0]; ti++) {
    QvArrowType type = all_types[ti];
    size_t e = qv_arrow_type_size(type);
    for (size_t li = 0; li < sizeof lengths / sizeof lengths[0]; li++) {
      int64_t n = lengths[li];
      uint8_t *buf = malloc((size_t)n * e + 3);
      assert_non_null(buf);
      uint8_t *p = buf + 3;
      int64_t expect = 0;
      for (int64_t k = 0; k < n; k++) {
        bool nz = (k * 2654435761u) % 5 < 2 || k == n - 1;
        /* non-zero values chosen so only one byte (the top one) is set, and
         * zeros as negative zeros for floats */
        memset(p + k * (int64_t)e, 0, e);
        /* the top byte: the last on a little-endian host, the first on a big-endian one */
        size_t top = QV_HOST_BIG_ENDIAN ? 0 : e - 1;
        if (nz)
          p[k * (int64_t)e + top] = 0x01;
        else if (type >= QV_ARROW_FLOAT16)
          p[k * (int64_t)e + top] = 0x80;
        expect += nz;
      }
      int64_t shape[1] = {n};
      QvTensor t = view(type, 1, shape, NULL, p, n * (int64_t)e);
      assert_int_equal(qv_tensor_count_nonzero(&t), expect);
      assert_int_equal(reference_nonzero(&t), expect);
      qv_tensor_reset(&t);
      free(buf);
    }
  }
}

static void test_equals_values(void **state) {
  (void)state;
  double a[4] = {0.0, NAN, 1.0, 2.0}, b[4] = {-0.0, NAN, 1.0, 2.0};
  int64_t s4[1] = {4};
  QvTensor ta = view(QV_ARROW_FLOAT64, 1, s4, NULL, a, sizeof a);
  QvTensor tb = view(QV_ARROW_FLOAT64, 1, s4, NULL, b, sizeof b);
  assert_false(qv_tensor_equal(&ta, &tb, false)); /* NaN != NaN */
  assert_true(qv_tensor_equal(&ta, &tb, true));   /* and -0.0 == 0.0 */
  assert_false(qv_tensor_equal(&ta, &ta, false));
  b[3] = 2.5;
  assert_false(qv_tensor_equal(&ta, &tb, true));
  qv_tensor_reset(&tb);
  /* same bytes, other type */
  tb = view(QV_ARROW_INT64, 1, s4, NULL, a, sizeof a);
  assert_false(qv_tensor_equal(&ta, &tb, true));
  qv_tensor_reset(&tb);
  /* different ndim with the same element count */
  int64_t s22[2] = {2, 2};
  tb = view(QV_ARROW_FLOAT64, 2, s22, NULL, a, sizeof a);
  assert_false(qv_tensor_equal(&ta, &tb, true));
  qv_tensor_reset(&tb);
  qv_tensor_reset(&ta);

  /* float16 and float32 by value */
  uint16_t h1[3] = {0x0000, 0x7e00, 0x3c00}, h2[3] = {0x8000, 0x7d01, 0x3c00};
  int64_t s3[1] = {3};
  ta = view(QV_ARROW_FLOAT16, 1, s3, NULL, h1, sizeof h1);
  tb = view(QV_ARROW_FLOAT16, 1, s3, NULL, h2, sizeof h2);
  assert_true(qv_tensor_equal(&ta, &tb, true));
  assert_false(qv_tensor_equal(&ta, &tb, false));
  qv_tensor_reset(&ta);
  qv_tensor_reset(&tb);
  float f1[2] = {-0.0f, 3.0f}, f2[2] = {0.0f, 3.0f};
  int64_t s2[1] = {2};
  ta = view(QV_ARROW_FLOAT32, 1, s2, NULL, f1, sizeof f1);
  tb = view(QV_ARROW_FLOAT32, 1, s2, NULL, f2, sizeof f2);
  assert_true(qv_tensor_equal(&ta, &tb, false));
  qv_tensor_reset(&ta);
  qv_tensor_reset(&tb);

  /* integers across layouts: a 2x3 matrix and its column-major twin */
  int16_t rm[6] = {1, 2, 3, 4, 5, 6}, cm[6] = {1, 4, 2, 5, 3, 6};
  int64_t s23[2] = {2, 3}, cms[2] = {2, 4};
  ta = view(QV_ARROW_INT16, 2, s23, NULL, rm, sizeof rm);
  tb = view(QV_ARROW_INT16, 2, s23, cms, cm, sizeof cm);
  assert_true(qv_tensor_equal(&ta, &tb, false));
  cm[5] = 7;
  assert_false(qv_tensor_equal(&ta, &tb, false));
  qv_tensor_reset(&ta);
  qv_tensor_reset(&tb);

  /* contiguous integers differing only in the last element */
  int32_t x[5] = {1, 2, 3, 4, 5}, y[5] = {1, 2, 3, 4, 6};
  int64_t s5[1] = {5};
  ta = view(QV_ARROW_INT32, 1, s5, NULL, x, sizeof x);
  tb = view(QV_ARROW_INT32, 1, s5, NULL, y, sizeof y);
  assert_false(qv_tensor_equal(&ta, &tb, false));
  y[4] = 5;
  assert_true(qv_tensor_equal(&ta, &tb, false));
  y[0] = 0;
  assert_false(qv_tensor_equal(&ta, &tb, false));
  qv_tensor_reset(&ta);
  qv_tensor_reset(&tb);

  /* zero-size tensors of the same shape are equal whatever the data */
  int64_t z[2] = {3, 0}, z2[2] = {0, 3};
  ta = view(QV_ARROW_INT32, 2, z, NULL, NULL, 0);
  tb = view(QV_ARROW_INT32, 2, z, NULL, rm, 0);
  assert_true(qv_tensor_equal(&ta, &tb, false));
  qv_tensor_reset(&tb);
  tb = view(QV_ARROW_INT32, 2, z2, NULL, NULL, 0);
  assert_false(qv_tensor_equal(&ta, &tb, false));
  qv_tensor_reset(&ta);
  qv_tensor_reset(&tb);
}

static uint64_t rng_state = 0x243f6a8885a308d3u;
static uint64_t rnd(uint64_t n) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return rng_state % n;
}

/* Random views of random parents: sliced with steps, axes permuted, some
 * broadcast, random byte offsets; parents hold random bytes (so floats
 * include NaNs, subnormals and -0.0). */
static void test_random_views(void **state) {
  (void)state;
  for (int iter = 0; iter < 400; iter++) {
    QvArrowType type = all_types[rnd(sizeof all_types / sizeof all_types[0])];
    int64_t e = (int64_t)qv_arrow_type_size(type);
    int32_t ndim = (int32_t)rnd(6);
    int64_t pshape[8], shape[8], step[8], start[8], strides[8];
    int64_t pn = 1;
    for (int32_t d = 0; d < ndim; d++) {
      pshape[d] = 1 + (int64_t)rnd(7);
      pn *= pshape[d];
    }
    size_t skew = rnd(8);
    uint8_t *buf = malloc((size_t)(pn * e) + skew);
    assert_non_null(buf);
    for (int64_t i = 0; i < pn * e + (int64_t)skew; i++) buf[i] = (uint8_t)rnd(256);
    if (rnd(3) == 0)
      for (int64_t i = 0; i < pn * e; i += e) memset(buf + skew + i, 0, (size_t)e); /* zeros */
    /* parent row-major strides */
    int64_t pstr[8];
    int64_t acc = e;
    for (int32_t d = ndim - 1; d >= 0; d--) {
      pstr[d] = acc;
      acc *= pshape[d];
    }
    int64_t offset = 0;
    for (int32_t d = 0; d < ndim; d++) {
      step[d] = 1 + (int64_t)rnd(2);
      start[d] = (int64_t)rnd((uint64_t)pshape[d]);
      int64_t room = (pshape[d] - start[d] + step[d] - 1) / step[d];
      shape[d] = rnd(12) == 0 ? 0 : 1 + (int64_t)rnd((uint64_t)room);
      if (shape[d] == 0) start[d] = 0;
      offset += start[d] * pstr[d];
      strides[d] = step[d] * pstr[d];
      if (rnd(8) == 0) {
        strides[d] = 0; /* broadcast */
        shape[d] = 1 + (int64_t)rnd(4);
      }
    }
    /* permute the axes */
    for (int32_t d = ndim - 1; d > 0; d--) {
      int32_t j = (int32_t)rnd((uint64_t)d + 1);
      int64_t s = shape[d], st = strides[d];
      shape[d] = shape[j];
      strides[d] = strides[j];
      shape[j] = s;
      strides[j] = st;
    }
    QvTensor t = view(type, ndim, shape, strides, buf + skew + offset, pn * e - offset);
    check_copies(&t);
    qv_tensor_reset(&t);
    free(buf);
  }
}

/* Large transposes go through the tiled kernel with its edges and, for big
 * outputs with aligned rows, the streaming stores. */
static void check_big_transpose(QvArrowType type, int64_t rows, int64_t cols, size_t dst_skew) {
  int64_t e = (int64_t)qv_arrow_type_size(type);
  int64_t shape[2] = {rows, cols};
  int64_t n = rows * cols;
  uint8_t *src = malloc((size_t)(n * e));
  assert_non_null(src);
  for (int64_t k = 0; k < n; k++) {
    uint64_t v = (uint64_t)k * 0x9e3779b97f4a7c15u;
    qvi_st_bits(src + k * e, (size_t)e, v);
  }
  uint8_t *raw = qv_aligned_alloc((size_t)(n * e) + dst_skew);
  assert_non_null(raw);
  uint8_t *dst = raw + dst_skew;
  QvError err = {0};
  for (int order = 0; order < 2; order++) {
    /* the source is row-major, then the same bytes as column-major */
    int64_t cm_strides[2] = {e, rows * e};
    QvTensor t = view(type, 2, shape, order ? cm_strides : NULL, src, n * e);
    bool to_column_major = order == 0;
    assert_int_equal(qv_tensor_copy_to(&t, to_column_major, dst, (size_t)(n * e), &err), QV_OK);
    for (int64_t i = 0; i < rows; i++)
      for (int64_t j = 0; j < cols; j++) {
        int64_t s = order ? i + j * rows : i * cols + j;
        int64_t d = order ? i * cols + j : i + j * rows;
        if (memcmp(src + s * e, dst + d * e, (size_t)e) != 0)
          fail_msg("%s %lldx%lld order %d: (%lld, %lld) differs", qv_arrow_type_name(type),
                   (long long)rows, (long long)cols, order, (long long)i, (long long)j);
      }
    qv_tensor_reset(&t);
  }
  qv_free(raw);
  free(src);
}

static void test_big_transposes(void **state) {
  (void)state;
  /* outputs above the 8 MiB streaming threshold, aligned and not */
  check_big_transpose(QV_ARROW_FLOAT64, 1100, 1003, 0);
  check_big_transpose(QV_ARROW_FLOAT64, 1100, 1003, 8);
  check_big_transpose(QV_ARROW_FLOAT32, 2050, 1030, 0);
  /* every width, sizes not multiples of the micro-block */
  check_big_transpose(QV_ARROW_UINT8, 200, 131, 0);
  check_big_transpose(QV_ARROW_INT16, 67, 190, 3);
  check_big_transpose(QV_ARROW_INT32, 129, 33, 1);
  check_big_transpose(QV_ARROW_INT64, 17, 300, 0);
  check_big_transpose(QV_ARROW_FLOAT16, 64, 64, 0);
  check_big_transpose(QV_ARROW_INT8, 5, 1000, 0);
}

/* N-d transposes (row-major <-> column-major) of larger 3-d and 4-d shapes,
 * where the tiles run over two dims and the rest are walked. */
static void test_nd_transposes(void **state) {
  (void)state;
  static const int64_t shapes[][4] = {{9, 20, 33, 1}, {3, 70, 5, 70}, {40, 1, 70, 2}};
  static const int32_t ndims[] = {3, 4, 4};
  for (size_t si = 0; si < 3; si++) {
    for (size_t ti = 0; ti < sizeof all_types / sizeof all_types[0]; ti += 3) {
      QvArrowType type = all_types[ti];
      int64_t n;
      uint8_t *buf = make_parent(type, ndims[si], shapes[si], 0, &n);
      int64_t e = (int64_t)qv_arrow_type_size(type);
      QvTensor t = view(type, ndims[si], shapes[si], NULL, buf, n * e);
      check_copies(&t);
      int64_t cm[4];
      assert_int_equal(qv_tensor_compute_strides(type, ndims[si], shapes[si], true, cm, NULL),
                       QV_OK);
      QvTensor c = view(type, ndims[si], shapes[si], cm, buf, n * e);
      check_copies(&c);
      qv_tensor_reset(&t);
      qv_tensor_reset(&c);
      free(buf);
    }
  }
}

/* Whatever make accepts stays inside data_size: random shapes and strides,
 * often huge or overflowing, over a heap buffer that ASan guards exactly. */
static int64_t wild_value(void) {
  switch (rnd(6)) {
    case 0: return 0;
    case 1: return 1;
    case 2: return (int64_t)rnd(9);
    case 3: return (int64_t)rnd(600);
    case 4: return INT64_MAX - (int64_t)rnd(3);
    default: return (int64_t)1 << rnd(63);
  }
}

static void test_validated_views_stay_in_bounds(void **state) {
  (void)state;
  enum { BUF = 4096 };
  uint8_t *buf = malloc(BUF);
  assert_non_null(buf);
  for (int i = 0; i < BUF; i++) buf[i] = (uint8_t)rnd(4);
  int accepted = 0;
  for (int iter = 0; iter < 20000; iter++) {
    QvArrowType type = all_types[rnd(sizeof all_types / sizeof all_types[0])];
    int32_t ndim = (int32_t)rnd(5);
    int64_t shape[4], strides[4];
    for (int32_t d = 0; d < ndim; d++) {
      shape[d] = rnd(3) ? (int64_t)rnd(6) : wild_value();
      strides[d] = rnd(3) ? (int64_t)rnd(5) * (int64_t)rnd(40) : wild_value();
    }
    int64_t size = (int64_t)rnd(BUF + 1);
    QvTensor t;
    QvError err = {0};
    if (qv_tensor_init(&t, &(QvTensorDesc){.type = type, .ndim = ndim, .shape = shape,
                                           .strides = rnd(4) ? strides : NULL,
                                           .data = buf + (BUF - size),
                                           .data_size = size}, &err) != QV_OK) {
      assert_true(err.message[0] != '\0');
      continue;
    }
    accepted++;
    int64_t n = qv_tensor_n_elements(&t);
    assert_true(n >= 0);
    if (n > 0) {
      int64_t last[4], off;
      for (int32_t d = 0; d < ndim; d++) last[d] = t.shape[d] - 1;
      assert_int_equal(qv_tensor_byte_offset(&t, last, &off, &err), QV_OK);
      assert_true(off >= 0 && off + (int64_t)qv_arrow_type_size(type) <= size);
    }
    /* broadcasting (zero strides) makes valid tensors of any size: only
     * walk the small ones */
    if (n <= (1 << 16)) {
      int64_t nz = qv_tensor_count_nonzero(&t);
      assert_true(nz >= 0 && nz <= n);
      assert_true(qv_tensor_equal(&t, &t, true));
      QvTensor c;
      assert_int_equal(qv_tensor_copy(&t, rnd(2) == 1, &c, &err), QV_OK);
      assert_true(qv_tensor_equal(&t, &c, true));
      assert_int_equal(qv_tensor_count_nonzero(&c), nz);
      qv_tensor_reset(&c);
    }
    qv_tensor_reset(&t);
  }
  assert_true(accepted > 2000); /* the generator is not all rejections */
  free(buf);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_layouts_every_type),
      cmocka_unit_test(test_count_nonzero_values),
      cmocka_unit_test(test_count_nonzero_long),
      cmocka_unit_test(test_equals_values),
      cmocka_unit_test(test_random_views),
      cmocka_unit_test(test_big_transposes),
      cmocka_unit_test(test_nd_transposes),
      cmocka_unit_test(test_validated_views_stay_in_bounds),
  };
  return qv_test_run(tests, NULL, NULL);
}
