/* qv_tensor_equal across layouts (row-major, column-major, permuted and
 * strided views, broadcast dims) checked against an element-by-element
 * reference, on every value type: the tiled path (micro-blocks transposed,
 * compared in registers for 64-bit types) must agree with the reference on
 * shapes that do not divide the micro-block or tile sizes, zero extents,
 * and a single differing element anywhere, with the value semantics kept
 * (-0.0 == 0.0, float16 zeros 0x0000/0x8000, NaN equal only with
 * nans_equal, whatever the payloads); the AVX2 kernels for 8- and 4-byte
 * values and the portable tiles agree on the same cases. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "quiver/tensor.h"
#include "test_util.h"
#include "util/cpu.h"
#include "util/load.h"

static uint64_t rng_state = 0x853c49e6748fea9bu;
static uint64_t rnd(void) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return rng_state;
}

static const QvArrowType kTypes[] = {QV_ARROW_INT8,   QV_ARROW_UINT8,   QV_ARROW_INT16,   QV_ARROW_UINT16,
                                     QV_ARROW_INT32,  QV_ARROW_UINT32,  QV_ARROW_INT64,   QV_ARROW_UINT64,
                                     QV_ARROW_FLOAT16, QV_ARROW_FLOAT32, QV_ARROW_FLOAT64};
enum { NTYPES = sizeof kTypes / sizeof kTypes[0] };

static bool is_float(QvArrowType t) {
  return t == QV_ARROW_FLOAT16 || t == QV_ARROW_FLOAT32 || t == QV_ARROW_FLOAT64;
}

/* Special bit patterns of each float width: +0, -0, a quiet NaN, a NaN
 * with another payload and the sign set, +inf, 1.0. */
static uint64_t special(QvArrowType t, int k) {
  static const uint64_t f16[6] = {0x0000, 0x8000, 0x7e00, 0xfc01, 0x7c00, 0x3c00};
  static const uint64_t f32[6] = {0, 0x80000000u, 0x7fc00000u, 0xff800001u, 0x7f800000u, 0x3f800000u};
  static const uint64_t f64[6] = {0, UINT64_C(0x8000000000000000), UINT64_C(0x7ff8000000000000),
                                  UINT64_C(0xfff0000000000001), UINT64_C(0x7ff0000000000000),
                                  UINT64_C(0x3ff0000000000000)};
  return t == QV_ARROW_FLOAT16 ? f16[k] : t == QV_ARROW_FLOAT32 ? f32[k] : f64[k];
}

/* Random element bits: for floats mostly ordinary values, sometimes a
 * special pattern. */
static uint64_t random_bits(QvArrowType t) {
  if (is_float(t) && rnd() % 8 == 0) return special(t, (int)(rnd() % 6));
  uint64_t v = rnd();
  if (t == QV_ARROW_FLOAT16) v = (v & 0x83ff) | 0x3800; /* finite, not zero */
  if (t == QV_ARROW_FLOAT32) v = (v & 0x807fffffu) | 0x3f000000u;
  if (t == QV_ARROW_FLOAT64) v = (v & UINT64_C(0x800fffffffffffff)) | UINT64_C(0x3fe0000000000000);
  return v;
}

/* A tensor over its own buffer with strides in units of elements (NULL:
 * row-major); gap > 1 spreads the elements (a strided view). */
typedef struct Buf {
  QvTensor t;
  uint8_t *mem;
} Buf;

static void buf_make(Buf *b, QvArrowType type, int ndim, const int64_t *shape, const int32_t *order, int64_t gap) {
  size_t w = qv_arrow_type_size(type);
  /* strides: dims in `order` from slowest to fastest, packed, times gap */
  int64_t strides[QV_TENSOR_MAX_NDIM], acc = (int64_t)w * gap, span = 0;
  for (int k = ndim - 1; k >= 0; k--) {
    int d = order ? order[k] : k;
    strides[d] = acc;
    acc *= shape[d] > 0 ? shape[d] : 1;
  }
  bool empty = false;
  for (int d = 0; d < ndim; d++) {
    if (shape[d] == 0) empty = true;
    else span += (shape[d] - 1) * strides[d];
  }
  int64_t bytes = empty ? 0 : span + (int64_t)w;
  b->mem = calloc(1, (size_t)(bytes > 0 ? bytes : 1));
  assert_non_null(b->mem);
  QvError err;
  assert_int_equal(qv_tensor_init(&b->t, &(QvTensorDesc){.type = type, .ndim = ndim, .shape = shape,
                                                          .strides = strides, .data = b->mem,
                                                          .data_size = bytes}, &err),
                   QV_OK);
}

static void buf_free(Buf *b) {
  qv_tensor_reset(&b->t);
  free(b->mem);
}

/* Element at a flat row-major index. */
static uint8_t *at(const QvTensor *t, int64_t flat) {
  int64_t off = 0;
  for (int d = t->ndim - 1; d >= 0; d--) {
    off += (flat % t->shape[d]) * t->strides[d];
    flat /= t->shape[d];
  }
  return (uint8_t *)(uintptr_t)t->data + off;
}

/* the value's bits, host order (the low bytes of v) */
static void put(const QvTensor *t, int64_t flat, uint64_t v) {
  qvi_st_bits(at(t, flat), qv_arrow_type_size(t->type), v);
}

static uint64_t get(const QvTensor *t, int64_t flat) {
  return qvi_ld_bits(at(t, flat), qv_arrow_type_size(t->type));
}

static double as_double(QvArrowType t, uint64_t bits) {
  if (t == QV_ARROW_FLOAT64) {
    double d;
    memcpy(&d, &bits, 8);
    return d;
  }
  if (t == QV_ARROW_FLOAT32) {
    float f;
    uint32_t u = (uint32_t)bits;
    memcpy(&f, &u, 4);
    return f;
  }
  /* float16 */
  int e = (int)((bits >> 10) & 0x1f), s = (int)(bits >> 15) & 1;
  double m = (double)(bits & 0x3ff);
  double v = e == 0 ? ldexp(m, -24) : e == 31 ? (m != 0 ? NAN : INFINITY) : ldexp(m + 1024, e - 25);
  return s ? -v : v;
}

/* The reference: element by element, by value. */
static bool ref_equals(const QvTensor *a, const QvTensor *b, bool ne) {
  int64_t n = qv_tensor_n_elements(a);
  for (int64_t i = 0; i < n; i++) {
    uint64_t x = get(a, i), y = get(b, i);
    if (!is_float(a->type)) {
      if (x != y) return false;
      continue;
    }
    double fx = as_double(a->type, x), fy = as_double(a->type, y);
    if (fx == fy) continue;
    if (ne && isnan(fx) && isnan(fy)) continue;
    return false;
  }
  return true;
}

static void check(const QvTensor *a, const QvTensor *b) {
  for (int ne = 0; ne < 2; ne++) {
    bool want = ref_equals(a, b, ne);
    assert_int_equal(qv_tensor_equal(a, b, ne), want);
    assert_int_equal(qv_tensor_equal(b, a, ne), want);
  }
}

/* a (row-major) and b (layout `order`, spread by gap) with the same values
 * (special ones included); then, one at a time, an element of b changed
 * (a different value, or the other zero, or another NaN), at the first,
 * last and random positions. */
static void run_case(QvArrowType type, int ndim, const int64_t *shape, const int32_t *order, int64_t gap) {
  Buf a, b;
  buf_make(&a, type, ndim, shape, NULL, 1);
  buf_make(&b, type, ndim, shape, order, gap);
  int64_t n = qv_tensor_n_elements(&a.t);
  for (int64_t i = 0; i < n; i++) {
    uint64_t v = random_bits(type);
    put(&a.t, i, v);
    put(&b.t, i, v);
  }
  check(&a.t, &b.t);
  if (n > 0) {
    int64_t where[6] = {0, n - 1, (int64_t)(rnd() % (uint64_t)n), (int64_t)(rnd() % (uint64_t)n), n / 2, n / 3};
    for (int k = 0; k < 6; k++) {
      int64_t i = where[k];
      uint64_t old = get(&b.t, i), nv;
      size_t w = qv_arrow_type_size(type);
      uint64_t mask = w == 8 ? UINT64_MAX : (UINT64_C(1) << (8 * w)) - 1;
      switch (k % 3) {
        case 0: nv = (old ^ 1) & mask; break;                   /* a different value */
        case 1: nv = is_float(type) ? special(type, (int)(rnd() % 6)) : (old + 7) & mask; break;
        default: nv = is_float(type) ? special(type, k & 1) : (old ^ (mask >> 1)) & mask; break;
      }
      put(&b.t, i, nv);
      check(&a.t, &b.t);
      put(&b.t, i, old);
    }
    /* zeros of both signs, and NaNs of different payloads, everywhere */
    if (is_float(type)) {
      for (int64_t i = 0; i < n; i++) {
        int z = (int)(rnd() % 2);
        put(&a.t, i, special(type, z));
        put(&b.t, i, special(type, 1 - z));
      }
      check(&a.t, &b.t);
      for (int64_t i = 0; i < n; i++) {
        put(&a.t, i, special(type, 2));
        put(&b.t, i, special(type, 3));
      }
      check(&a.t, &b.t); /* equal only with nans_equal */
      assert_true(qv_tensor_equal(&a.t, &b.t, true));
      assert_false(qv_tensor_equal(&a.t, &a.t, false));
    }
  }
  buf_free(&a);
  buf_free(&b);
}

/* Column-major and transposed 2-D layouts, including shapes that do not
 * divide the micro-block (64 bytes a line) or the tile, on every type. */
static void test_two_d_layouts(void **state) {
  (void)state;
  static const int64_t shapes[][2] = {{64, 64}, {37, 53}, {300, 261}, {1, 100}, {100, 1}, {8, 520}, {515, 9}};
  static const int32_t cm[2] = {1, 0};
  for (int t = 0; t < NTYPES; t++)
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
      run_case(kTypes[t], 2, shapes[s], cm, 1);
      run_case(kTypes[t], 2, shapes[s], cm, 3); /* strided column-major view */
      run_case(kTypes[t], 2, shapes[s], NULL, 2); /* same order, strided */
    }
}

/* Permuted strides in 3-D and 4-D. */
static void test_permuted(void **state) {
  (void)state;
  static const int64_t s3[3] = {5, 67, 19}, s4[4] = {3, 4, 33, 17};
  static const int32_t orders3[][3] = {{2, 1, 0}, {1, 2, 0}, {0, 2, 1}, {2, 0, 1}};
  static const int32_t orders4[][4] = {{3, 2, 1, 0}, {0, 3, 1, 2}};
  for (int t = 0; t < NTYPES; t++) {
    for (int o = 0; o < 4; o++) run_case(kTypes[t], 3, s3, orders3[o], 1);
    for (int o = 0; o < 2; o++) run_case(kTypes[t], 4, s4, orders4[o], 1);
  }
}

/* Zero extents, 0-d and 1-D tensors. */
static void test_degenerate(void **state) {
  (void)state;
  static const int64_t z1[2] = {0, 5}, z2[2] = {7, 0}, one[1] = {77};
  static const int32_t cm[2] = {1, 0};
  for (int t = 0; t < NTYPES; t++) {
    run_case(kTypes[t], 2, z1, cm, 1);
    run_case(kTypes[t], 2, z2, cm, 1);
    run_case(kTypes[t], 1, one, NULL, 3);
    run_case(kTypes[t], 0, NULL, NULL, 1);
  }
}

/* A broadcast (stride 0) operand against a materialised one. */
static void test_broadcast(void **state) {
  (void)state;
  for (int t = 0; t < NTYPES; t++) {
    QvArrowType type = kTypes[t];
    size_t w = qv_arrow_type_size(type);
    int64_t shape[2] = {70, 45};
    uint8_t row[45 * 8];
    for (int j = 0; j < 45; j++) {
      uint64_t v = random_bits(type);
      memcpy(row + j * w, &v, w);
    }
    int64_t bstrides[2] = {0, (int64_t)w};
    QvTensor bc;
    QvError err;
    assert_int_equal(qv_tensor_init(&bc, &(QvTensorDesc){.type = type, .ndim = 2, .shape = shape,
                                                          .strides = bstrides, .data = row,
                                                          .data_size = 45 * (int64_t)w}, &err),
                     QV_OK);
    Buf full;
    static const int32_t cm[2] = {1, 0};
    buf_make(&full, type, 2, shape, cm, 1);
    for (int64_t i = 0; i < 70 * 45; i++) put(&full.t, i, get(&bc, i % 45));
    check(&bc, &full.t);
    put(&full.t, 69 * 45 + 44, get(&bc, 44) ^ 1);
    check(&bc, &full.t);
    buf_free(&full);
    qv_tensor_reset(&bc);
  }
}

/* The tiled path serves row-major against column-major (the counter), and
 * a large float64 case (several tiles, the in-register 64-bit kernel)
 * agrees with the reference. */
static void test_tiled_path_taken(void **state) {
  (void)state;
  static const int64_t shape[2] = {600, 530};
  static const int32_t cm[2] = {1, 0};
  uint64_t before = qvi_path_count(QV_PATH_EQUALS_TILED);
  run_case(QV_ARROW_FLOAT64, 2, shape, cm, 1);
  assert_true(qvi_path_count(QV_PATH_EQUALS_TILED) > before);
  run_case(QV_ARROW_INT64, 2, shape, cm, 1);
  before = qvi_path_count(QV_PATH_EQUALS_TILED);
  run_case(QV_ARROW_INT32, 2, shape, NULL, 1); /* same layout: runs, not tiles */
  assert_int_equal(qvi_path_count(QV_PATH_EQUALS_TILED), before);
}

/* Shapes for the AVX2 kernel: one block, sizes not a multiple of the 4 x 4
 * block, several 64 x 128 tiles with ragged last ones, long thin ones. */
static const int64_t kTileShapes[][2] = {{4, 4},    {3, 5},     {37, 53},  {200, 270}, {129, 257},
                                         {2, 1000}, {1000, 2},  {64, 128}, {68, 132},  {131, 7}};
enum { NTILESHAPES = sizeof kTileShapes / sizeof kTileShapes[0] };

/* A single differing element at chosen places (first tile, a later tile,
 * the ragged edges in both directions, the last element), 8- and 4-byte
 * values, row-major against column-major both ways. */
static void single_differences(void) {
  static const int64_t shape[2] = {203, 261};
  static const int32_t cm[2] = {1, 0};
  static const int64_t where[][2] = {{0, 0}, {5, 130}, {150, 7}, {200, 100}, {100, 259}, {202, 260}, {131, 64}};
  static const QvArrowType types[4] = {QV_ARROW_FLOAT64, QV_ARROW_INT64, QV_ARROW_FLOAT32, QV_ARROW_INT32};
  for (int t = 0; t < 4; t++) {
    Buf a, b;
    buf_make(&a, types[t], 2, shape, NULL, 1);
    buf_make(&b, types[t], 2, shape, cm, 1);
    for (int64_t i = 0; i < shape[0] * shape[1]; i++) {
      uint64_t v = random_bits(types[t]);
      put(&a.t, i, v);
      put(&b.t, i, v);
    }
    assert_true(qv_tensor_equal(&a.t, &b.t, true)); /* random_bits gives NaNs too */
    for (size_t k = 0; k < sizeof where / sizeof where[0]; k++) {
      int64_t i = where[k][0] * shape[1] + where[k][1];
      bool w8 = qv_arrow_type_size(types[t]) == 8;
      uint64_t old = get(&b.t, i), one = w8 ? UINT64_C(0x3ff0000000000000) : 0x3f800000u;
      uint64_t two = w8 ? UINT64_C(0x4000000000000000) : 0x40000000u;
      put(&b.t, i, old == one ? two : one); /* unequal whatever old is (a NaN, -0.0) */
      assert_false(qv_tensor_equal(&a.t, &b.t, true));
      assert_false(qv_tensor_equal(&b.t, &a.t, true));
      put(&b.t, i, old);
    }
    assert_true(qv_tensor_equal(&b.t, &a.t, true));
    buf_free(&a);
    buf_free(&b);
  }
}

/* 8- and 4-byte values whose operands are contiguous along their own
 * fastest dims run the AVX2 kernels where the CPU has it (the counter), and agree
 * with the reference; with the CPU features masked the portable tiles
 * serve the same cases, the AVX2 counter unchanged. Special values (-0.0,
 * NaNs of several payloads, both nans_equal settings) come with run_case. */
static void test_avx2_and_portable(void **state) {
  (void)state;
  if (!qvi_cpu_has(QV_CPU_AVX2)) {
    print_message("this CPU has no AVX2: the vector equals kernel cannot run here\n");
    skip();
  }
  static const int32_t cm[2] = {1, 0};
  static const int32_t order3[3] = {2, 0, 1};
  static const int64_t s3[3] = {6, 41, 70};
  static const QvArrowType types[6] = {QV_ARROW_FLOAT64, QV_ARROW_INT64,  QV_ARROW_UINT64,
                                       QV_ARROW_FLOAT32, QV_ARROW_INT32, QV_ARROW_UINT32};
  for (int mode = 0; mode < 2; mode++) {
    if (mode == 1) qvi_cpu_override(0);
    uint64_t v0 = qvi_path_count(QV_PATH_EQUALS_AVX2), t0 = qvi_path_count(QV_PATH_EQUALS_TILED);
    for (int t = 0; t < 6; t++) {
      for (int s = 0; s < NTILESHAPES; s++) run_case(types[t], 2, kTileShapes[s], cm, 1);
      run_case(types[t], 3, s3, order3, 1);
    }
    single_differences();
    assert_true(qvi_path_count(QV_PATH_EQUALS_TILED) > t0);
    if (mode == 0)
      assert_true(qvi_path_count(QV_PATH_EQUALS_AVX2) > v0);
    else
      assert_int_equal(qvi_path_count(QV_PATH_EQUALS_AVX2), v0);
    qvi_cpu_override(QV_CPU_ALL);
  }
  /* not served by the kernels: 2-byte values, a strided operand */
  uint64_t v0 = qvi_path_count(QV_PATH_EQUALS_AVX2);
  run_case(QV_ARROW_FLOAT16, 2, kTileShapes[2], cm, 1);
  run_case(QV_ARROW_INT16, 2, kTileShapes[2], cm, 1);
  run_case(QV_ARROW_FLOAT64, 2, kTileShapes[2], cm, 3);
  run_case(QV_ARROW_FLOAT32, 2, kTileShapes[2], cm, 2);
  assert_int_equal(qvi_path_count(QV_PATH_EQUALS_AVX2), v0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_two_d_layouts), cmocka_unit_test(test_permuted),
      cmocka_unit_test(test_degenerate),    cmocka_unit_test(test_broadcast),
      cmocka_unit_test(test_tiled_path_taken), cmocka_unit_test(test_avx2_and_portable),
  };
  return qv_test_run(tests, NULL, NULL);
}
