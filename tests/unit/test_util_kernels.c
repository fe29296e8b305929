/* Direct tests of the kernels in src/util: half-float conversion, checked
 * arithmetic, unaligned loads and stores, large copies and moves, CPU
 * dispatch and the fast-path counters of the array validation loops. */
#include "quiver/advanced.h"
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "array/array_internal.h"
#include "quiver/buffer.h"
#include "util/checked.h"
#include "util/copy.h"
#include "util/cpu.h"
#include "util/half.h"
#include "util/load.h"

static uint32_t f32_bits(float f) {
  uint32_t b;
  memcpy(&b, &f, 4);
  return b;
}
static float f32_of(uint32_t b) {
  float f;
  memcpy(&f, &b, 4);
  return f;
}
static uint64_t f64_bits(double d) {
  uint64_t b;
  memcpy(&b, &d, 8);
  return b;
}
static double f64_of(uint64_t b) {
  double d;
  memcpy(&d, &b, 8);
  return d;
}

/* ---- half */

static void test_half_round_trip_all(void **state) {
  (void)state;
  for (uint32_t i = 0; i < 65536; i++) {
    uint16_t h = (uint16_t)i;
    float f = qv_half_to_float(h);
    double d = qvi_half_to_double(h);
    /* widening is exact: the float and the double hold the same value */
    if (f == f) assert_true((double)f == d);
    assert_int_equal(qv_float_to_half(f), h);
    assert_int_equal(qvi_double_to_half(d), h);
  }
}

static void test_half_values(void **state) {
  (void)state;
  assert_true(qv_half_to_float(0x3c00) == 1.0f);
  assert_true(qv_half_to_float(0xc000) == -2.0f);
  assert_true(qv_half_to_float(0x7bff) == 65504.0f);
  assert_true(qv_half_to_float(0x0001) == 0x1p-24f);
  assert_true(qv_half_to_float(0x0400) == 0x1p-14f);
  assert_true(isinf(qv_half_to_float(0x7c00)) && qv_half_to_float(0x7c00) > 0);
  assert_int_equal(f32_bits(qv_half_to_float(0x8000)), 0x80000000u);

  /* rounding: to nearest, ties to even, in both widths */
  assert_int_equal(qv_float_to_half(65519.0f), 0x7bff);
  assert_int_equal(qv_float_to_half(65520.0f), 0x7c00);
  assert_int_equal(qvi_double_to_half(65519.99), 0x7bff);
  assert_int_equal(qvi_double_to_half(-1e300), 0xfc00);
  assert_int_equal(qv_float_to_half(1.0f + 0x1p-11f), 0x3c00);     /* tie: to even */
  assert_int_equal(qv_float_to_half(1.0f + 3 * 0x1p-11f), 0x3c02); /* tie: to even */
  assert_int_equal(qv_float_to_half(0x1p-25f), 0x0000);            /* tie: to even (zero) */
  assert_int_equal(qv_float_to_half(0x1.000002p-25f), 0x0001);
  assert_int_equal(qv_float_to_half(3 * 0x1p-25f), 0x0002);        /* subnormal tie: to even */
  assert_int_equal(qvi_double_to_half(0x1p-14 - 0x1p-26), 0x0400);  /* rounds up into the normals */
  assert_int_equal(qv_float_to_half(-0.0f), 0x8000);
  assert_int_equal(qvi_double_to_half(1e-30), 0x0000);
  /* a double converts directly: through float, 1 + 2^-11 + 2^-40 would
   * round to the tie 1 + 2^-11 first and then down to 1.0 */
  assert_int_equal(qvi_double_to_half(1.0 + 0x1p-11 + 0x1p-40), 0x3c01);

  /* every float agrees with its (exact) double; not NaNs, which the
   * hardware's float -> double conversion quietens */
  uint32_t x = 12345;
  for (int i = 0; i < 200000; i++) {
    x = x * 1103515245u + 12345u;
    float f = f32_of(x);
    if (f != f) continue;
    assert_int_equal(qv_float_to_half(f), qvi_double_to_half((double)f));
  }
}

static void test_half_nan_policy(void **state) {
  (void)state;
  /* the top ten payload bits are kept, with the sign */
  assert_int_equal(qv_float_to_half(f32_of(0x7fc12345u)), 0x7e00 | ((0x412345u >> 13) & 0x3ff));
  assert_int_equal(qv_float_to_half(f32_of(0xffa00000u)), 0xfd00);
  assert_int_equal(qvi_double_to_half(f64_of(UINT64_C(0x7ff4000000000000))), 0x7d00);
  /* a signalling half NaN stays signalling through float and double */
  assert_int_equal(f32_bits(qv_half_to_float(0x7c01)), 0x7f802000u);
  assert_int_equal(f64_bits(qvi_half_to_double(0xfc01)), UINT64_C(0xfff0040000000000));
  /* a payload below the kept bits: the quiet bit keeps it a NaN */
  assert_int_equal(qv_float_to_half(f32_of(0x7f800001u)), 0x7e00);
  assert_int_equal(qvi_double_to_half(f64_of(UINT64_C(0xfff0000000000001))), 0xfe00);
  assert_int_equal(qv_float_to_half(NAN) & 0x7e00, 0x7e00);
}

/* ---- checked arithmetic */

static void test_checked(void **state) {
  (void)state;
  int64_t r = 42;
  assert_true(qvi_mul_i64(INT64_MAX, 1, &r) && r == INT64_MAX);
  assert_true(qvi_mul_i64(0, INT64_MAX, &r) && r == 0);
  assert_true(qvi_mul_i64(INT64_C(3037000499), INT64_C(3037000499), &r));
  r = 42;
  assert_false(qvi_mul_i64(INT64_C(3037000500), INT64_C(3037000500), &r));
  assert_false(qvi_mul_i64(INT64_MAX / 2 + 1, 2, &r));
  assert_false(qvi_mul_i64(-1, 0, &r));
  assert_false(qvi_mul_i64(0, -1, &r));
  assert_false(qvi_mul_i64(INT64_MIN, -1, &r));
  assert_int_equal(r, 42); /* untouched on failure */
  assert_true(qvi_add_i64(INT64_MAX, 0, &r) && r == INT64_MAX);
  assert_true(qvi_add_i64(INT64_MAX - 5, 5, &r) && r == INT64_MAX);
  r = 7;
  assert_false(qvi_add_i64(INT64_MAX, 1, &r));
  assert_false(qvi_add_i64(-1, 1, &r));
  assert_false(qvi_add_i64(1, -1, &r));
  assert_int_equal(r, 7);
  assert_true(qvi_mul_add_i64(INT64_MAX / 2, 2, 1, &r) && r == INT64_MAX);
  assert_false(qvi_mul_add_i64(INT64_MAX / 2, 2, 2, &r));
  assert_false(qvi_mul_add_i64(2, 3, -1, &r));
  assert_true(qvi_mul_add_i64(0, 0, 0, &r) && r == 0);
  size_t z = 9;
  assert_true(qvi_mul_size(SIZE_MAX, 1, &z) && z == SIZE_MAX);
  assert_false(qvi_mul_size(SIZE_MAX / 2 + 1, 2, &z));
  assert_true(qvi_add_size(SIZE_MAX - 1, 1, &z) && z == SIZE_MAX);
  assert_false(qvi_add_size(SIZE_MAX, 1, &z));
  assert_int_equal(z, SIZE_MAX);
  assert_true(qvi_i64_to_size(INT64_MAX, &z) && z == (size_t)INT64_MAX);
  assert_false(qvi_i64_to_size(-1, &z));
}

/* ---- loads and stores */

static uint64_t le_bytes(const uint8_t *p, int n) {
  uint64_t v = 0;
  for (int i = n - 1; i >= 0; i--) v = v << 8 | p[i];
  return v;
}

static void test_loads_odd_addresses(void **state) {
  (void)state;
  _Alignas(16) uint8_t buf[48];
  for (int i = 0; i < 48; i++) buf[i] = (uint8_t)(0x81 + i * 37);
  for (int off = 0; off < 16; off++) {
    const uint8_t *p = buf + off;
    assert_int_equal(qvi_le_u16(p), le_bytes(p, 2));
    assert_int_equal(qvi_le_u32(p), le_bytes(p, 4));
    assert_true(qvi_le_u64(p) == le_bytes(p, 8));
    assert_int_equal(qvi_le_i32(p), (int32_t)(uint32_t)le_bytes(p, 4));
    assert_true(qvi_le_i64(p) == (int64_t)le_bytes(p, 8));
    if (!QV_HOST_BIG_ENDIAN) {
      assert_int_equal(qvi_ld_u16(p), le_bytes(p, 2));
      assert_int_equal(qvi_ld_i16(p), (int16_t)le_bytes(p, 2));
      assert_int_equal(qvi_ld_u32(p), le_bytes(p, 4));
      assert_true(qvi_ld_i64(p) == (int64_t)le_bytes(p, 8));
      assert_true(qvi_ld_bits(p, 1) == p[0]);
      assert_true(qvi_ld_bits(p, 2) == le_bytes(p, 2));
      assert_true(qvi_ld_bits(p, 4) == le_bytes(p, 4));
      assert_true(qvi_ld_bits(p, 8) == le_bytes(p, 8));
      assert_true(qvi_ld_offset(p, 4, 2) == (int32_t)(uint32_t)le_bytes(p + 8, 4));
      assert_true(qvi_ld_offset(p, 8, 3) == (int64_t)le_bytes(p + 24, 8));
    }
    assert_int_equal(qvi_ld_i8(p), (int8_t)p[0]);
    float f = qvi_ld_f32(p);
    double d = qvi_ld_f64(p);
    assert_memory_equal(&f, p, 4);
    assert_memory_equal(&d, p, 8);
  }
  /* stores at odd addresses touch exactly their bytes */
  for (int off = 1; off < 8; off += 2) {
    uint8_t out[24];
    memset(out, 0xee, sizeof out);
    qvi_st_le_u16(out + off, 0x1234);
    qvi_st_le_u32(out + off + 2, 0x89abcdefu);
    qvi_st_le_u64(out + off + 6, UINT64_C(0x0102030405060708));
    assert_int_equal(le_bytes(out + off, 2), 0x1234);
    assert_int_equal(le_bytes(out + off + 2, 4), 0x89abcdefu);
    assert_true(le_bytes(out + off + 6, 8) == UINT64_C(0x0102030405060708));
    assert_int_equal(out[off - 1], 0xee);
    assert_int_equal(out[off + 14], 0xee);
    for (size_t w = 1; w <= 8; w *= 2) {
      memset(out, 0xee, sizeof out);
      qvi_st_bits(out + off, w, UINT64_C(0xa1b2c3d4e5f60718));
      uint64_t mask = w == 8 ? UINT64_MAX : (UINT64_C(1) << (8 * w)) - 1;
      assert_true(qvi_ld_bits(out + off, w) == (UINT64_C(0xa1b2c3d4e5f60718) & mask));
      assert_int_equal(out[off + w], 0xee);
      assert_int_equal(out[off - 1], 0xee);
    }
  }
}

/* ---- CPU dispatch */

static unsigned detected(void) {
  unsigned f = 0;
#ifdef QV_X86_DISPATCH
  if (__builtin_cpu_supports("avx2")) f |= QV_CPU_AVX2;
  if (__builtin_cpu_supports("popcnt")) f |= QV_CPU_POPCNT;
#endif
  return f;
}

static void test_cpu_override(void **state) {
  (void)state;
  assert_int_equal(qvi_cpu_features(), detected());
  assert_int_equal(qvi_cpu_override(0), QV_CPU_ALL);
  assert_int_equal(qvi_cpu_features(), 0);
  assert_false(qvi_cpu_has(QV_CPU_AVX2));
  assert_true(qvi_cpu_has(0));
  assert_int_equal(qvi_cpu_override(QV_CPU_POPCNT), 0);
  assert_int_equal(qvi_cpu_features(), detected() & QV_CPU_POPCNT);
  assert_false(qvi_cpu_has(QV_CPU_AVX2));
  assert_int_equal(qvi_cpu_override(QV_CPU_ALL), QV_CPU_POPCNT);
  assert_int_equal(qvi_cpu_features(), detected());
}

/* The validation loops of array/util.c: with the feature, the vector path
 * runs (its counter moves); with it masked, the portable path gives the same
 * answers and the counter stays. */
typedef struct Answers {
  bool mono4, mono8, mono4_bad, mono8_bad;
  int ascii, utf8, bad_utf8;
  int64_t count, count_odd;
} Answers;

static Answers validate_all(void) {
  enum { N = 5000 };
  static int32_t o4[N + 1];
  static int64_t o8[N + 1];
  static uint8_t text[N], bits[N];
  for (int i = 0; i <= N; i++) {
    o4[i] = i * 3;
    o8[i] = (int64_t)i * 5;
  }
  for (int i = 0; i < N; i++) {
    text[i] = (uint8_t)('a' + i % 26);
    bits[i] = (uint8_t)(i * 73 + (i >> 3));
  }
  Answers a;
  a.mono4 = qvi_offsets_monotonic((const uint8_t *)o4, 4, 0, N);
  a.mono8 = qvi_offsets_monotonic((const uint8_t *)o8, 8, 0, N);
  o4[3001] = 0;
  o8[4999] = 0;
  a.mono4_bad = qvi_offsets_monotonic((const uint8_t *)o4, 4, 0, N);
  a.mono8_bad = qvi_offsets_monotonic((const uint8_t *)o8, 8, 0, N);
  a.ascii = qvi_utf8_classify(text, N);
  memcpy(text + 4000, "\xc3\xa9", 2); /* é */
  a.utf8 = qvi_utf8_classify(text, N);
  text[4500] = 0xff;
  a.bad_utf8 = qvi_utf8_classify(text, N);
  a.count = qv_bitmap_count_set(bits, 0, 8 * N);
  a.count_odd = qv_bitmap_count_set(bits, 3, 8 * N - 11);
  return a;
}

static void test_validation_fast_paths(void **state) {
  (void)state;
  if (!qvi_cpu_has(QV_CPU_AVX2 | QV_CPU_POPCNT)) {
    print_message("this CPU has no AVX2/POPCNT: the vector paths cannot run here\n");
    skip();
  }
  uint64_t off0 = qvi_path_count(QV_PATH_OFFSETS_AVX2), asc0 = qvi_path_count(QV_PATH_ASCII_AVX2),
           pop0 = qvi_path_count(QV_PATH_POPCNT);
  Answers fast = validate_all();
  assert_int_equal(qvi_path_count(QV_PATH_OFFSETS_AVX2), off0 + 4);
  assert_int_equal(qvi_path_count(QV_PATH_ASCII_AVX2), asc0 + 3);
  assert_int_equal(qvi_path_count(QV_PATH_POPCNT), pop0 + 2);

  qvi_cpu_override(0);
  Answers portable = validate_all();
  qvi_cpu_override(QV_CPU_ALL);
  assert_int_equal(qvi_path_count(QV_PATH_OFFSETS_AVX2), off0 + 4);
  assert_int_equal(qvi_path_count(QV_PATH_ASCII_AVX2), asc0 + 3);
  assert_int_equal(qvi_path_count(QV_PATH_POPCNT), pop0 + 2);

  assert_true(fast.mono4 && fast.mono8);
  assert_false(fast.mono4_bad || fast.mono8_bad);
  assert_int_equal(fast.ascii, 1);
  assert_int_equal(fast.utf8, 2);
  assert_int_equal(fast.bad_utf8, 0);
  assert_int_equal(fast.mono4, portable.mono4);
  assert_int_equal(fast.mono8, portable.mono8);
  assert_int_equal(fast.mono4_bad, portable.mono4_bad);
  assert_int_equal(fast.mono8_bad, portable.mono8_bad);
  assert_int_equal(fast.ascii, portable.ascii);
  assert_int_equal(fast.utf8, portable.utf8);
  assert_int_equal(fast.bad_utf8, portable.bad_utf8);
  assert_int_equal(fast.count, portable.count);
  assert_int_equal(fast.count_odd, portable.count_odd);
  /* the count against a bit-by-bit reference */
  enum { N = 5000 };
  static uint8_t bits[N];
  for (int i = 0; i < N; i++) bits[i] = (uint8_t)(i * 73 + (i >> 3));
  int64_t ref = 0;
  for (int64_t i = 3; i < 8 * N - 8; i++) ref += (bits[i >> 3] >> (i & 7)) & 1;
  assert_int_equal(fast.count_odd, ref);
}

/* ---- large aligned allocations */

#if defined(__x86_64__) && defined(__linux__)
/* Whether the mapping holding p carries MADV_HUGEPAGE ("hg" in VmFlags of
 * /proc/self/smaps): 1 yes, 0 no, -1 unknown (no smaps, p not found). */
static int vma_has_hugepage_advice(const void *p) {
  FILE *f = fopen("/proc/self/smaps", "r");
  if (f == NULL) return -1;
  char line[512];
  int found = 0, result = -1;
  uintptr_t a = (uintptr_t)p;
  while (fgets(line, sizeof line, f)) {
    unsigned long lo, hi;
    if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, '-') < strchr(line, ' ')) {
      found = a >= lo && a < hi;
      continue;
    }
    if (found && strncmp(line, "VmFlags:", 8) == 0) {
      result = strstr(line, " hg") != NULL;
      break;
    }
  }
  fclose(f);
  return result;
}
#endif

/* Buffers of 2 MiB and more start on a 2 MiB boundary with huge-page
 * advice, up to their last byte when rounding up to whole huge pages adds
 * at most a quarter (4 MB, 9 MiB; the advice of a 2.2 MB buffer's tail
 * depends on what its memory held before); small ones keep 64-byte
 * alignment; all are free()d by qv_free. */
static void test_aligned_alloc_large(void **state) {
  (void)state;
  uint8_t *small = qv_aligned_alloc(1000);
  assert_non_null(small);
  assert_int_equal((uintptr_t)small % 64, 0);
  static const size_t sizes[] = {(size_t)9 << 20, 4000000, 2200000};
  for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
    size_t n = sizes[k];
    uint8_t *big = qv_aligned_alloc(n);
    assert_non_null(big);
    memset(big, 1, n);
    assert_int_equal(big[n - 1], 1);
#if defined(__x86_64__) && defined(__linux__)
    assert_int_equal((uintptr_t)big % ((uintptr_t)2 << 20), 0);
    int head = vma_has_hugepage_advice(big), tail = vma_has_hugepage_advice(big + n - 1);
    qv_free(big);
    if (head < 0 || tail < 0) skip(); /* no /proc/self/smaps here */
    assert_int_equal(head, 1);
    if (n != 2200000 && tail != 1) fail_msg("%zu bytes: the last byte lacks huge-page advice", n);
#else
    qv_free(big);
#endif
  }
  qv_free(small);
}

/* qvi_move_down_large: overlapping moves down by every awkward distance
 * (under a vector, a block, a page) and sizes under and over the streaming
 * threshold, with AVX2 and without, give memmove's bytes; moves up fall
 * back to memmove. */
static void test_move_down_large(void **state) {
  (void)state;
  static const size_t sizes[] = {300, ((size_t)1 << 20) + 77, ((size_t)3 << 20) + 5};
  static const size_t gaps[] = {0, 1, 7, 31, 32, 33, 127, 128, 129, 4099};
  size_t cap = ((size_t)3 << 20) + 5 + 4099 + 64;
  uint8_t *got = malloc(cap), *want = malloc(cap);
  assert_non_null(got);
  assert_non_null(want);
  for (int masked = 0; masked < 2; masked++) {
    unsigned was = qvi_cpu_override(masked ? 0 : QV_CPU_ALL);
    for (size_t a = 0; a < sizeof sizes / sizeof sizes[0]; a++)
      for (size_t b = 0; b < sizeof gaps / sizeof gaps[0]; b++)
        for (int up = 0; up < 2; up++) {
          for (size_t i = 0; i < cap; i++) got[i] = want[i] = (uint8_t)(i * 131 + (i >> 11));
          size_t lo = 13, hi = lo + gaps[b]; /* an odd start: the head is unaligned */
          uint64_t streamed = qvi_path_count(QV_PATH_STREAM_COPY_AVX2);
          if (up) {
            qvi_move_down_large(got + hi, got + lo, sizes[a]);
            memmove(want + hi, want + lo, sizes[a]);
          } else {
            qvi_move_down_large(got + lo, got + hi, sizes[a]);
            memmove(want + lo, want + hi, sizes[a]);
          }
          if (memcmp(got, want, cap) != 0)
            fail_msg("%zu bytes moved %s by %zu (AVX2 %s): other bytes than memmove", sizes[a],
                     up ? "up" : "down", gaps[b], masked ? "masked" : "allowed");
          bool down = !up || gaps[b] == 0;
          bool avx2 = !masked && down && sizes[a] > 300 && qvi_cpu_has(QV_CPU_AVX2);
          assert_int_equal(qvi_path_count(QV_PATH_STREAM_COPY_AVX2) > streamed, avx2);
        }
    qvi_cpu_override(was);
  }
  free(got);
  free(want);
}

int main(int argc, char **argv) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_half_round_trip_all), cmocka_unit_test(test_half_values),
      cmocka_unit_test(test_half_nan_policy),     cmocka_unit_test(test_checked),
      cmocka_unit_test(test_loads_odd_addresses), cmocka_unit_test(test_cpu_override),
      cmocka_unit_test(test_aligned_alloc_large), cmocka_unit_test(test_move_down_large),
  };
  const struct CMUnitTest vector_tests[] = {
      cmocka_unit_test(test_validation_fast_paths),
  };
  const QvTestGroup groups[] = {
      QV_TEST_GROUP("", tests, NULL, NULL),
      QV_TEST_GROUP("vector", vector_tests, NULL, NULL),
  };
  return qv_test_run_groups(argc, argv, groups, sizeof groups / sizeof groups[0]);
}
