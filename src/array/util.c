/* Small helpers of the array layer: growable buffers, bit counting, UTF-8. */
#include <stdlib.h>
#include <string.h>

#include "quiver/advanced.h"
#include "array/array_internal.h"
#include "util/cpu.h"
#include "util/utf8.h"

_Alignas(64) const uint64_t qvi_zero_block[8] = {0};

/* Full validation reads every offset, character and validity bit of a
 * batch, so its loops run at memory speed only with the widest loads the
 * CPU has: x86-64 builds carry AVX2/POPCNT variants chosen at run time
 * (the baseline build targets plain x86-64). */
#ifdef QV_X86_DISPATCH
#include <immintrin.h>

QV_TARGET_POPCNT static int64_t popcount_words_popcnt(const uint8_t *p, int64_t nwords) {
  int64_t c0 = 0, c1 = 0;
  int64_t k = 0;
  for (; k + 2 <= nwords; k += 2) {
    uint64_t a, b;
    memcpy(&a, p + 8 * k, 8);
    memcpy(&b, p + 8 * k + 8, 8);
    c0 += __builtin_popcountll(a);
    c1 += __builtin_popcountll(b);
  }
  if (k < nwords) {
    uint64_t a;
    memcpy(&a, p + 8 * k, 8);
    c0 += __builtin_popcountll(a);
  }
  return c0 + c1;
}

/* Length of the leading run of 256-byte blocks without a byte >= 0x80. */
QV_TARGET_AVX2 static int64_t ascii_blocks_avx2(const uint8_t *s, int64_t n) {
  int64_t i = 0;
  for (; i + 256 <= n; i += 256) {
    const __m256i *v = (const __m256i *)(const void *)(s + i);
    __m256i a = _mm256_or_si256(_mm256_loadu_si256(v), _mm256_loadu_si256(v + 1));
    __m256i b = _mm256_or_si256(_mm256_loadu_si256(v + 2), _mm256_loadu_si256(v + 3));
    __m256i c = _mm256_or_si256(_mm256_loadu_si256(v + 4), _mm256_loadu_si256(v + 5));
    __m256i d = _mm256_or_si256(_mm256_loadu_si256(v + 6), _mm256_loadu_si256(v + 7));
    if (_mm256_movemask_epi8(_mm256_or_si256(_mm256_or_si256(a, b), _mm256_or_si256(c, d)))) break;
  }
  return i;
}

/* True when o[i] >= o[i - 1] for i in (from, to]; offsets of w = 4 or 8
 * bytes, 64 bytes of them per step (each compared with its predecessor
 * through a second load shifted by one offset). */
QV_TARGET_AVX2 static bool offsets_monotonic_avx2(const uint8_t *o, int w, int64_t from,
                                                                    int64_t to) {
  int64_t i = from + 1, step = 64 / w;
  __m256i bad = _mm256_setzero_si256();
  for (; i + step <= to + 1; i += step) {
    const uint8_t *q = o + w * i;
    __m256i c0 = _mm256_loadu_si256((const __m256i *)(const void *)q);
    __m256i p0 = _mm256_loadu_si256((const __m256i *)(const void *)(q - w));
    __m256i c1 = _mm256_loadu_si256((const __m256i *)(const void *)(q + 32));
    __m256i p1 = _mm256_loadu_si256((const __m256i *)(const void *)(q + 32 - w));
    __m256i down = w == 4 ? _mm256_or_si256(_mm256_cmpgt_epi32(p0, c0), _mm256_cmpgt_epi32(p1, c1))
                          : _mm256_or_si256(_mm256_cmpgt_epi64(p0, c0), _mm256_cmpgt_epi64(p1, c1));
    bad = _mm256_or_si256(bad, down);
  }
  bool ok = _mm256_testz_si256(bad, bad);
  for (; i <= to; i++) ok &= qvi_ld_offset(o, w, i) >= qvi_ld_offset(o, w, i - 1);
  return ok;
}

#endif

int64_t qv_bitmap_count_set(const uint8_t *bits, int64_t start, int64_t length) {
  int64_t count = 0, i = start, end = start + length;
  while (i < end && (i & 7)) count += qvi_bit_get(bits, i++);
  /* whole bytes, eight at a time */
  const uint8_t *p = bits + (i >> 3);
  int64_t nbytes = (end - i) >> 3;
  int64_t k = 0;
#ifdef QV_X86_DISPATCH
  if (nbytes >= 64 && qvi_cpu_has(QV_CPU_POPCNT)) {
    qvi_path_hit(QV_PATH_POPCNT);
    count += popcount_words_popcnt(p, nbytes >> 3);
    k = nbytes & ~(int64_t)7;
  }
#endif
  for (; k + 8 <= nbytes; k += 8) count += __builtin_popcountll(qvi_ld_u64(p + k));
  for (; k < nbytes; k++) count += __builtin_popcount(p[k]);
  i += nbytes * 8;
  while (i < end) count += qvi_bit_get(bits, i++);
  return count;
}

int64_t qvi_ld_int(const uint8_t *p, int width, bool is_signed) {
  switch (width) {
    case 1: return is_signed ? (int64_t)(int8_t)p[0] : (int64_t)p[0];
    case 2: return is_signed ? (int64_t)qvi_ld_i16(p) : (int64_t)qvi_ld_u16(p);
    case 4: return is_signed ? (int64_t)qvi_ld_i32(p) : (int64_t)qvi_ld_u32(p);
    default: return qvi_ld_i64(p);
  }
}

#if defined(__GNUC__)
/* Generic vectors (GCC and clang lower them to the target's SIMD): the
 * validation loops then run at memory speed even at -O2. */
typedef uint64_t qvi_v2u64 __attribute__((vector_size(16)));
typedef int32_t qvi_v4i32 __attribute__((vector_size(16)));
typedef int64_t qvi_v2i64 __attribute__((vector_size(16)));
#define QV_HAVE_VECTORS 1
#endif

/* Length of the leading run of 128-byte blocks that are pure ASCII. */
static int64_t ascii_prefix(const uint8_t *s, int64_t n) {
  int64_t i = 0;
#ifdef QV_X86_DISPATCH
  if (n >= 256 && qvi_cpu_has(QV_CPU_AVX2)) {
    qvi_path_hit(QV_PATH_ASCII_AVX2);
    i = ascii_blocks_avx2(s, n);
  }
#endif
#ifdef QV_HAVE_VECTORS
  /* four independent accumulators over 256-byte blocks */
  while (i + 256 <= n) {
    qvi_v2u64 a, b, c, d, t;
    memcpy(&a, s + i, 16);
    memcpy(&b, s + i + 16, 16);
    memcpy(&c, s + i + 32, 16);
    memcpy(&d, s + i + 48, 16);
    for (int k = 64; k < 256; k += 64) {
      memcpy(&t, s + i + k, 16);
      a |= t;
      memcpy(&t, s + i + k + 16, 16);
      b |= t;
      memcpy(&t, s + i + k + 32, 16);
      c |= t;
      memcpy(&t, s + i + k + 48, 16);
      d |= t;
    }
    qvi_v2u64 x = (a | b) | (c | d);
    if ((x[0] | x[1]) & 0x8080808080808080ull) break;
    i += 256;
  }
#endif
  while (i + 32 <= n) {
    uint64_t w = qvi_ld_u64(s + i) | qvi_ld_u64(s + i + 8) | qvi_ld_u64(s + i + 16) |
                 qvi_ld_u64(s + i + 24);
    if (w & 0x8080808080808080ull) break;
    i += 32;
  }
  return i;
}

int qvi_utf8_classify(const uint8_t *s, int64_t n) {
  int64_t i = ascii_prefix(s, n);
  bool ascii = true;
  for (int64_t k = i; k < n && ascii; k++) ascii = s[k] < 0x80;
  if (ascii) return 1;
  return qvi_utf8_valid(s + i, n - i) ? 2 : 0;
}

bool qvi_offsets_monotonic(const uint8_t *o, int w, int64_t from, int64_t to) {
#ifdef QV_X86_DISPATCH
  if (to - from >= 64 && qvi_cpu_has(QV_CPU_AVX2)) {
    qvi_path_hit(QV_PATH_OFFSETS_AVX2);
    return offsets_monotonic_avx2(o, w, from, to);
  }
#endif
  int64_t i = from + 1;
  bool bad = false;
#ifdef QV_HAVE_VECTORS
  if (w == 4) {
    qvi_v4i32 acc = {0, 0, 0, 0};
    for (; i + 4 <= to + 1; i += 4) {
      qvi_v4i32 cur, prev;
      memcpy(&cur, o + 4 * i, 16);
      memcpy(&prev, o + 4 * (i - 1), 16);
      acc |= cur < prev;
    }
    for (int k = 0; k < 4; k++) bad |= acc[k] != 0;
  } else {
    qvi_v2i64 acc = {0, 0};
    for (; i + 2 <= to + 1; i += 2) {
      qvi_v2i64 cur, prev;
      memcpy(&cur, o + 8 * i, 16);
      memcpy(&prev, o + 8 * (i - 1), 16);
      acc |= cur < prev;
    }
    bad |= acc[0] != 0 || acc[1] != 0;
  }
#endif
  for (; i <= to; i++) bad |= qvi_ld_offset(o, w, i) < qvi_ld_offset(o, w, i - 1);
  return !bad;
}

