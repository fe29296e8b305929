#include "util/copy.h"

#include <stdint.h>
#include <string.h>

#include "util/cpu.h"

#ifdef QV_X86_DISPATCH
#include <immintrin.h>
#define QV_STREAM_COPY 1
#endif

#define STREAM_COPY_MIN ((size_t)1 << 20)

#if QV_STREAM_COPY
/* dst 32-byte aligned; copies blocks * 128 bytes. */
QV_TARGET_AVX2 static void stream_avx2(uint8_t *d, const uint8_t *s,
                                                         size_t blocks) {
  for (size_t i = 0; i < blocks; i++, d += 128, s += 128) {
    __m256i a = _mm256_loadu_si256((const __m256i *)(const void *)s);
    __m256i b = _mm256_loadu_si256((const __m256i *)(const void *)(s + 32));
    __m256i c = _mm256_loadu_si256((const __m256i *)(const void *)(s + 64));
    __m256i e = _mm256_loadu_si256((const __m256i *)(const void *)(s + 96));
    _mm256_stream_si256((__m256i *)(void *)d, a);
    _mm256_stream_si256((__m256i *)(void *)(d + 32), b);
    _mm256_stream_si256((__m256i *)(void *)(d + 64), c);
    _mm256_stream_si256((__m256i *)(void *)(d + 96), e);
  }
  _mm_sfence(); /* order the streamed stores before later writes */
}

/* SSE2 (every x86-64): dst 32-byte aligned; copies blocks * 128 bytes. */
static void stream_sse2(uint8_t *d, const uint8_t *s, size_t blocks) {
  for (size_t i = 0; i < blocks * 2; i++, d += 64, s += 64) {
    __m128i a = _mm_loadu_si128((const __m128i *)(const void *)s);
    __m128i b = _mm_loadu_si128((const __m128i *)(const void *)(s + 16));
    __m128i c = _mm_loadu_si128((const __m128i *)(const void *)(s + 32));
    __m128i e = _mm_loadu_si128((const __m128i *)(const void *)(s + 48));
    _mm_stream_si128((__m128i *)(void *)d, a);
    _mm_stream_si128((__m128i *)(void *)(d + 16), b);
    _mm_stream_si128((__m128i *)(void *)(d + 32), c);
    _mm_stream_si128((__m128i *)(void *)(d + 48), e);
  }
  _mm_sfence();
}
#endif

void qv_copy_large(void *dst, const void *src, size_t n) {
#if QV_STREAM_COPY
  if (n >= STREAM_COPY_MIN) {
    uint8_t *d = dst;
    const uint8_t *s = src;
    size_t head = (32 - ((uintptr_t)d & 31)) & 31;
    memcpy(d, s, head);
    d += head;
    s += head;
    n -= head;
    size_t blocks = n / 128;
    if (qv_cpu_has(QV_CPU_AVX2)) {
      qv_path_hit(QV_PATH_STREAM_COPY_AVX2);
      stream_avx2(d, s, blocks);
    } else {
      stream_sse2(d, s, blocks);
    }
    memcpy(d + blocks * 128, s + blocks * 128, n % 128);
    return;
  }
#endif
  if (n) memcpy(dst, src, n);
}
