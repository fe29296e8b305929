/* Vector kernels of the dense scan: compare a group of values with zero,
 * move the non-zeros to the front with a permutation and store the whole
 * group unmasked, advancing by the number of non-zeros. Branch-free, so
 * their speed does not depend on where the non-zeros are. x86-64 with AVX2
 * only (checked at run time); elsewhere the callers' scalar scans run. */
#include "sparse/sparse_internal.h"
#include "util/cpu.h"

#ifdef QV_X86_DISPATCH
#include <immintrin.h>

/* By the 4-bit mask of non-zero lanes: the source lane of each output lane
 * (set lanes first), and the same as pairs of 32-bit lanes. */
static const uint32_t lane4[16][4] __attribute__((aligned(16))) = {
    {0, 0, 0, 0}, {0, 0, 0, 0}, {1, 0, 0, 0}, {0, 1, 0, 0}, {2, 0, 0, 0}, {0, 2, 0, 0},
    {1, 2, 0, 0}, {0, 1, 2, 0}, {3, 0, 0, 0}, {0, 3, 0, 0}, {1, 3, 0, 0}, {0, 1, 3, 0},
    {2, 3, 0, 0}, {0, 2, 3, 0}, {1, 2, 3, 0}, {0, 1, 2, 3}};
static const uint32_t pair4[16][8] __attribute__((aligned(32))) = {
    {0, 1, 0, 1, 0, 1, 0, 1}, {0, 1, 0, 1, 0, 1, 0, 1}, {2, 3, 0, 1, 0, 1, 0, 1}, {0, 1, 2, 3, 0, 1, 0, 1},
    {4, 5, 0, 1, 0, 1, 0, 1}, {0, 1, 4, 5, 0, 1, 0, 1}, {2, 3, 4, 5, 0, 1, 0, 1}, {0, 1, 2, 3, 4, 5, 0, 1},
    {6, 7, 0, 1, 0, 1, 0, 1}, {0, 1, 6, 7, 0, 1, 0, 1}, {2, 3, 6, 7, 0, 1, 0, 1}, {0, 1, 2, 3, 6, 7, 0, 1},
    {4, 5, 6, 7, 0, 1, 0, 1}, {0, 1, 4, 5, 6, 7, 0, 1}, {2, 3, 4, 5, 6, 7, 0, 1}, {0, 1, 2, 3, 4, 5, 6, 7}};

/* Software prefetch distance in bytes (measured: without it the scan of a
 * 122 MB float64 matrix ran 15-20% slower). Past the end of a line it
 * fetches the start of the next row of a row-major input; a prefetch never
 * faults, and the address is formed as an integer. */
enum { PREFETCH = 8192 };

#define SP_AVX2 QV_TARGET_AVX2_POPCNT
#define SP_AVX2_INLINE static inline __attribute__((always_inline)) QV_TARGET_AVX2_POPCNT

/* Stores the indices c0 .. c0 + 3 of the lanes in mask m, set lanes first. */
SP_AVX2_INLINE void put_index(void *ci, int64_t k, bool wide, int64_t c0, unsigned m) {
  __m128i l = _mm_load_si128((const __m128i *)(const void *)lane4[m]);
  if (wide)
    _mm256_storeu_si256((__m256i *)(void *)((int64_t *)ci + k),
                        _mm256_add_epi64(_mm256_set1_epi64x((long long)c0), _mm256_cvtepu32_epi64(l)));
  else
    _mm_storeu_si128((__m128i *)(void *)((uint32_t *)ci + k),
                     _mm_add_epi32(_mm_set1_epi32((int)(uint32_t)c0), l));
}

/* vs 8 or 4, wide: int64 indices, else uint32. */
SP_AVX2_INLINE int64_t scan_avx2(const uint8_t *p, int64_t len, size_t vs, uint64_t mask, int64_t c0, void *ci,
                                 bool wide, uint8_t *vals) {
  int64_t k = 0, j = 0;
  if (vs == 8) {
    const __m256i m = _mm256_set1_epi64x((long long)mask), z = _mm256_setzero_si256();
    for (; j + 8 <= len; j += 8) {
      _mm_prefetch((const char *)((uintptr_t)p + (uintptr_t)(j * 8 + PREFETCH)), _MM_HINT_T0);
      __m256i a = _mm256_loadu_si256((const __m256i *)(const void *)(p + j * 8));
      __m256i b = _mm256_loadu_si256((const __m256i *)(const void *)(p + j * 8 + 32));
      __m256i za = _mm256_cmpeq_epi64(_mm256_and_si256(a, m), z);
      __m256i zb = _mm256_cmpeq_epi64(_mm256_and_si256(b, m), z);
      unsigned na = 15u ^ (unsigned)_mm256_movemask_pd(_mm256_castsi256_pd(za));
      unsigned nb = 15u ^ (unsigned)_mm256_movemask_pd(_mm256_castsi256_pd(zb));
      __m256i pa = _mm256_load_si256((const __m256i *)(const void *)pair4[na]);
      __m256i pb = _mm256_load_si256((const __m256i *)(const void *)pair4[nb]);
      _mm256_storeu_si256((__m256i *)(void *)(vals + k * 8), _mm256_permutevar8x32_epi32(a, pa));
      put_index(ci, k, wide, c0 + j, na);
      k += _mm_popcnt_u32(na);
      _mm256_storeu_si256((__m256i *)(void *)(vals + k * 8), _mm256_permutevar8x32_epi32(b, pb));
      put_index(ci, k, wide, c0 + j + 4, nb);
      k += _mm_popcnt_u32(nb);
    }
  } else {
    const __m256i m = _mm256_set1_epi32((int)(uint32_t)mask), z = _mm256_setzero_si256();
    for (; j + 8 <= len; j += 8) {
      _mm_prefetch((const char *)((uintptr_t)p + (uintptr_t)(j * 4 + PREFETCH)), _MM_HINT_T0);
      __m256i a = _mm256_loadu_si256((const __m256i *)(const void *)(p + j * 4));
      __m256i za = _mm256_cmpeq_epi32(_mm256_and_si256(a, m), z);
      unsigned nz = 255u ^ (unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(za));
      unsigned na = nz & 15u, nb = nz >> 4;
      __m128 lo = _mm256_castps256_ps128(_mm256_castsi256_ps(a));
      __m128 hi = _mm256_extractf128_ps(_mm256_castsi256_ps(a), 1);
      __m128i pa = _mm_load_si128((const __m128i *)(const void *)lane4[na]);
      __m128i pb = _mm_load_si128((const __m128i *)(const void *)lane4[nb]);
      _mm_storeu_ps((float *)(void *)(vals + k * 4), _mm_permutevar_ps(lo, pa));
      put_index(ci, k, wide, c0 + j, na);
      k += _mm_popcnt_u32(na);
      _mm_storeu_ps((float *)(void *)(vals + k * 4), _mm_permutevar_ps(hi, pb));
      put_index(ci, k, wide, c0 + j + 4, nb);
      k += _mm_popcnt_u32(nb);
    }
  }
  for (; j < len; j++) {
    uint64_t v = qvi_ld_bits(p + (size_t)j * vs, vs);
    if (wide)
      ((int64_t *)ci)[k] = c0 + j;
    else
      ((uint32_t *)ci)[k] = (uint32_t)(c0 + j);
    qvi_st_bits(vals + (size_t)k * vs, vs, v);
    k += (v & mask) != 0;
  }
  return k;
}

static SP_AVX2 int64_t scan_avx2_u32_8(const uint8_t *p, int64_t len, uint64_t mask, uint32_t c0, uint32_t *ci,
                                       uint8_t *vals) {
  return scan_avx2(p, len, 8, mask, c0, ci, false, vals);
}
static SP_AVX2 int64_t scan_avx2_u32_4(const uint8_t *p, int64_t len, uint64_t mask, uint32_t c0, uint32_t *ci,
                                       uint8_t *vals) {
  return scan_avx2(p, len, 4, mask, c0, ci, false, vals);
}
static SP_AVX2 int64_t scan_avx2_i64_8(const uint8_t *p, int64_t len, uint64_t mask, int64_t c0, int64_t *ci,
                                       uint8_t *vals) {
  return scan_avx2(p, len, 8, mask, c0, ci, true, vals);
}
static SP_AVX2 int64_t scan_avx2_i64_4(const uint8_t *p, int64_t len, uint64_t mask, int64_t c0, int64_t *ci,
                                       uint8_t *vals) {
  return scan_avx2(p, len, 4, mask, c0, ci, true, vals);
}

static bool have_avx2(void) {
  if (!qvi_cpu_has(QV_CPU_AVX2 | QV_CPU_POPCNT)) return false;
  qvi_path_hit(QV_PATH_SCAN_AVX2);
  return true;
}

int64_t qvi_sp_scan_vec_u32(const uint8_t *p, int64_t len, size_t vs, uint64_t mask, uint32_t c0, uint32_t *ci,
                        uint8_t *vals) {
  if ((vs != 8 && vs != 4) || !have_avx2()) return -1;
  return vs == 8 ? scan_avx2_u32_8(p, len, mask, c0, ci, vals) : scan_avx2_u32_4(p, len, mask, c0, ci, vals);
}

int64_t qvi_sp_scan_vec_i64(const uint8_t *p, int64_t len, size_t vs, uint64_t mask, int64_t c0, int64_t *ci,
                        uint8_t *vals) {
  if ((vs != 8 && vs != 4) || !have_avx2()) return -1;
  return vs == 8 ? scan_avx2_i64_8(p, len, mask, c0, ci, vals) : scan_avx2_i64_4(p, len, mask, c0, ci, vals);
}

#else

int64_t qvi_sp_scan_vec_u32(const uint8_t *p, int64_t len, size_t vs, uint64_t mask, uint32_t c0, uint32_t *ci,
                        uint8_t *vals) {
  (void)p, (void)len, (void)vs, (void)mask, (void)c0, (void)ci, (void)vals;
  return -1;
}

int64_t qvi_sp_scan_vec_i64(const uint8_t *p, int64_t len, size_t vs, uint64_t mask, int64_t c0, int64_t *ci,
                        uint8_t *vals) {
  (void)p, (void)len, (void)vs, (void)mask, (void)c0, (void)ci, (void)vals;
  return -1;
}

#endif
