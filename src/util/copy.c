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

/* Both: memmove for the unaligned head and the tail, which may overlap the
 * source when qvi_move_down_large moves bytes down. The streamed blocks are
 * safe then too: each loads its 128 bytes before storing them, and a store
 * below the source never reaches bytes not yet loaded. */
static void copy_forward(void *dst, const void *src, size_t n) {
#if QV_STREAM_COPY
  if (n >= STREAM_COPY_MIN) {
    uint8_t *d = dst;
    const uint8_t *s = src;
    size_t head = (32 - ((uintptr_t)d & 31)) & 31;
    memmove(d, s, head);
    d += head;
    s += head;
    n -= head;
    size_t blocks = n / 128;
    if (qvi_cpu_has(QV_CPU_AVX2)) {
      qvi_path_hit(QV_PATH_STREAM_COPY_AVX2);
      stream_avx2(d, s, blocks);
    } else {
      stream_sse2(d, s, blocks);
    }
    memmove(d + blocks * 128, s + blocks * 128, n % 128);
    return;
  }
#endif
  if (n) memmove(dst, src, n);
}

void qvi_copy_large(void *dst, const void *src, size_t n) { copy_forward(dst, src, n); }

void qvi_move_down_large(void *dst, const void *src, size_t n) {
  if ((uintptr_t)dst > (uintptr_t)src) { /* not down: only memmove is right */
    memmove(dst, src, n);
    return;
  }
  copy_forward(dst, src, n);
}

/* ---- planes <-> interleaved groups ---- */

#if defined(__SSE2__)
#include <emmintrin.h>
#define QV_PLANES_STREAM 1
#endif

#if defined(__GNUC__) && !defined(__clang__)
/* GCC's -O2 cost model ("very cheap") turns down the permutes these loops
 * vectorise with; the dynamic model takes them where they pay (float32,
 * k = 3, AVX2: 3.5x faster, at memcpy speed in cache). Clang's -O2 model
 * takes them as it is. */
#define QV_VECTORIZE __attribute__((optimize("tree-vectorize", "vect-cost-model=dynamic")))
#else
#define QV_VECTORIZE
#endif

/* One function per element size E and group size K, the planes passed as
 * restrict parameters (the vectoriser then needs no alias checks; planes
 * c >= K are NULL and never touched). Constant E and K let the compiler
 * turn a group into vector loads and permutes: it does for K = 2, 3, 4, 8
 * with AVX2, and for most of those with SSE2. Other k take the generic loop. */
#define PLANE_PARAMS(Q)                                                                        \
  Q uint8_t *restrict p0, Q uint8_t *restrict p1, Q uint8_t *restrict p2, Q uint8_t *restrict p3, \
      Q uint8_t *restrict p4, Q uint8_t *restrict p5, Q uint8_t *restrict p6,                    \
      Q uint8_t *restrict p7
#define TO_PLANE(c, E, K) \
  if ((K) > (c)) memcpy(p##c + j * (E), g + (c) * (E), (E));
#define FROM_PLANE(c, E, K) \
  if ((K) > (c)) memcpy(g + (c) * (E), p##c + j * (E), (E));
#define DEFINE_PLANES(SUF, ATTRS, E, K)                                                      \
  ATTRS static void deint_##SUF##_##E##_##K(PLANE_PARAMS(), const uint8_t *restrict s,        \
                                            int64_t n) {                                    \
    for (int64_t j = 0; j < n; j++) {                                                       \
      const uint8_t *g = s + j * (K) * (E);                                                 \
      TO_PLANE(0, E, K) TO_PLANE(1, E, K) TO_PLANE(2, E, K) TO_PLANE(3, E, K)               \
      TO_PLANE(4, E, K) TO_PLANE(5, E, K) TO_PLANE(6, E, K) TO_PLANE(7, E, K)               \
    }                                                                                       \
  }                                                                                         \
  ATTRS static void inter_##SUF##_##E##_##K(PLANE_PARAMS(const), uint8_t *restrict d,       \
                                            int64_t n) {                                    \
    for (int64_t j = 0; j < n; j++) {                                                       \
      uint8_t *g = d + j * (K) * (E);                                                       \
      FROM_PLANE(0, E, K) FROM_PLANE(1, E, K) FROM_PLANE(2, E, K) FROM_PLANE(3, E, K)       \
      FROM_PLANE(4, E, K) FROM_PLANE(5, E, K) FROM_PLANE(6, E, K) FROM_PLANE(7, E, K)       \
    }                                                                                       \
  }
#define DEFINE_PLANES_K(SUF, ATTRS, E)                                          \
  DEFINE_PLANES(SUF, ATTRS, E, 2) DEFINE_PLANES(SUF, ATTRS, E, 3)               \
  DEFINE_PLANES(SUF, ATTRS, E, 4) DEFINE_PLANES(SUF, ATTRS, E, 8)
#define DEFINE_PLANES_ALL(SUF, ATTRS)                                           \
  DEFINE_PLANES_K(SUF, ATTRS, 1) DEFINE_PLANES_K(SUF, ATTRS, 2)                 \
  DEFINE_PLANES_K(SUF, ATTRS, 4) DEFINE_PLANES_K(SUF, ATTRS, 8)

typedef void (*DeintFn)(PLANE_PARAMS(), const uint8_t *restrict s, int64_t n);
typedef void (*InterFn)(PLANE_PARAMS(const), uint8_t *restrict d, int64_t n);

#define PLANES_ROW(SUF, E, F)                                                  \
  { F##_##SUF##_##E##_2, F##_##SUF##_##E##_3, F##_##SUF##_##E##_4, F##_##SUF##_##E##_8 }
#define PLANES_TABLE(SUF, F)                                                   \
  { PLANES_ROW(SUF, 1, F), PLANES_ROW(SUF, 2, F), PLANES_ROW(SUF, 4, F), PLANES_ROW(SUF, 8, F) }

DEFINE_PLANES_ALL(port, QV_VECTORIZE)
static const DeintFn deint_port[4][4] = PLANES_TABLE(port, deint);
static const InterFn inter_port[4][4] = PLANES_TABLE(port, inter);
#ifdef QV_X86_DISPATCH
DEFINE_PLANES_ALL(avx2, QV_TARGET_AVX2 QV_VECTORIZE)
static const DeintFn deint_avx2[4][4] = PLANES_TABLE(avx2, deint);
static const InterFn inter_avx2[4][4] = PLANES_TABLE(avx2, inter);
#endif

/* Table slots: elsize 1, 2, 4, 8 -> 0..3; k 2, 3, 4, 8 -> 0..3, other k -1. */
static int size_slot(size_t e) { return e == 1 ? 0 : e == 2 ? 1 : e == 4 ? 2 : 3; }
static int k_slot(int k) { return k == 2 ? 0 : k == 3 ? 1 : k == 4 ? 2 : k == 8 ? 3 : -1; }

/* Any k: one loop, the element copy of a constant size. */
#define GENERIC_PLANES(E)                                                                 \
  static void deint_any_##E(uint8_t *base, int64_t stride, int k, const uint8_t *s,       \
                            int64_t n) {                                                  \
    for (int64_t j = 0; j < n; j++)                                                       \
      for (int c = 0; c < k; c++)                                                         \
        memcpy(base + c * stride + j * (E), s + (j * k + c) * (E), (E));                  \
  }                                                                                       \
  static void inter_any_##E(uint8_t *d, const uint8_t *base, int64_t stride, int k,       \
                            int64_t n) {                                                  \
    for (int64_t j = 0; j < n; j++)                                                       \
      for (int c = 0; c < k; c++)                                                         \
        memcpy(d + (j * k + c) * (E), base + c * stride + j * (E), (E));                  \
  }
GENERIC_PLANES(1)
GENERIC_PLANES(2)
GENERIC_PLANES(4)
GENERIC_PLANES(8)

typedef struct Planes {
  DeintFn deint; /* NULL: the generic loop */
  InterFn inter;
  size_t e;
  int k;
} Planes;

static Planes pick_planes(int k, size_t e) {
  Planes p = {NULL, NULL, e, k};
  int ks = k_slot(k), es = size_slot(e);
#ifdef QV_X86_DISPATCH
  if (ks >= 0 && qvi_cpu_has(QV_CPU_AVX2)) {
    qvi_path_hit(QV_PATH_PLANES_AVX2);
    p.deint = deint_avx2[es][ks];
    p.inter = inter_avx2[es][ks];
    return p;
  }
#endif
  qvi_path_hit(QV_PATH_PLANES_PORTABLE);
  if (ks >= 0) {
    p.deint = deint_port[es][ks];
    p.inter = inter_port[es][ks];
  }
  return p;
}

/* n groups at s -> planes base + c * stride. */
static void run_deint(const Planes *p, uint8_t *base, int64_t stride, const uint8_t *s,
                      int64_t n) {
  if (p->deint != NULL) {
    uint8_t *q[QV_PLANES_MAX] = {NULL};
    for (int c = 0; c < p->k; c++) q[c] = base + c * stride;
    p->deint(q[0], q[1], q[2], q[3], q[4], q[5], q[6], q[7], s, n);
    return;
  }
  switch (p->e) {
    case 1: deint_any_1(base, stride, p->k, s, n); break;
    case 2: deint_any_2(base, stride, p->k, s, n); break;
    case 4: deint_any_4(base, stride, p->k, s, n); break;
    default: deint_any_8(base, stride, p->k, s, n); break;
  }
}

/* planes base + c * stride -> n groups at d. */
static void run_inter(const Planes *p, uint8_t *d, const uint8_t *base, int64_t stride,
                      int64_t n) {
  if (p->inter != NULL) {
    const uint8_t *q[QV_PLANES_MAX] = {NULL};
    for (int c = 0; c < p->k; c++) q[c] = base + c * stride;
    p->inter(q[0], q[1], q[2], q[3], q[4], q[5], q[6], q[7], d, n);
    return;
  }
  switch (p->e) {
    case 1: inter_any_1(d, base, stride, p->k, n); break;
    case 2: inter_any_2(d, base, stride, p->k, n); break;
    case 4: inter_any_4(d, base, stride, p->k, n); break;
    default: inter_any_8(d, base, stride, p->k, n); break;
  }
}

/* Streaming goes through a scratch block that stays in L1: PLANE_CHUNK
 * bytes per plane. */
#define PLANE_CHUNK 2048

#if QV_PLANES_STREAM
/* d 16-byte aligned. */
static void stream_bytes(uint8_t *d, const uint8_t *s, size_t len) {
  size_t i = 0;
  for (; i + 64 <= len; i += 64) {
    __m128i a = _mm_loadu_si128((const __m128i *)(const void *)(s + i));
    __m128i b = _mm_loadu_si128((const __m128i *)(const void *)(s + i + 16));
    __m128i c = _mm_loadu_si128((const __m128i *)(const void *)(s + i + 32));
    __m128i e = _mm_loadu_si128((const __m128i *)(const void *)(s + i + 48));
    _mm_stream_si128((__m128i *)(void *)(d + i), a);
    _mm_stream_si128((__m128i *)(void *)(d + i + 16), b);
    _mm_stream_si128((__m128i *)(void *)(d + i + 32), c);
    _mm_stream_si128((__m128i *)(void *)(d + i + 48), e);
  }
  for (; i + 16 <= len; i += 16)
    _mm_stream_si128((__m128i *)(void *)(d + i),
                     _mm_loadu_si128((const __m128i *)(const void *)(s + i)));
  memcpy(d + i, s + i, len - i);
}
#endif

#ifdef QV_X86_DISPATCH
/* k = 3, 32-bit elements, AVX2, streamed straight from registers (no
 * scratch pass). In 8 groups held in x0..x2, each register holds elements
 * of every plane at fixed lanes (x0: plane 0 at lanes 0, 3, 6, plane 1 at
 * 1, 4, 7, plane 2 at 2, 5; x1 and x2 the same rotated), so two blends
 * gather a plane's 8 elements and one permute puts them in order; the
 * interleave runs the same steps backwards. 16 groups per step: a whole
 * 64-byte line of each plane is written by two consecutive stores. The
 * scratch pass below cost 1.07-1.24x a memcpy into a pre-faulted 1 GiB
 * buffer (CPU time; HWC <-> CHW float32 images), this ~1.0x. */
#define B147 0x92 /* blend lanes 1, 4, 7 */
#define B25 0x24  /* lanes 2, 5 */
#define B036 0x49 /* lanes 0, 3, 6 */
QV_TARGET_AVX2 static void deint3_stream_avx2(uint8_t *p0, uint8_t *p1, uint8_t *p2,
                                              const uint8_t *s, int64_t blocks) {
  const __m256i ia = _mm256_setr_epi32(0, 3, 6, 1, 4, 7, 2, 5);
  const __m256i ib = _mm256_setr_epi32(1, 4, 7, 2, 5, 0, 3, 6);
  const __m256i ic = _mm256_setr_epi32(2, 5, 0, 3, 6, 1, 4, 7);
  for (int64_t i = 0; i < blocks; i++, s += 192, p0 += 64, p1 += 64, p2 += 64) {
    for (int h = 0; h < 2; h++) {
      const __m256i *g = (const __m256i *)(const void *)(s + h * 96);
      __m256i x0 = _mm256_loadu_si256(g), x1 = _mm256_loadu_si256(g + 1),
              x2 = _mm256_loadu_si256(g + 2);
      __m256i a = _mm256_blend_epi32(_mm256_blend_epi32(x0, x1, B147), x2, B25);
      __m256i b = _mm256_blend_epi32(_mm256_blend_epi32(x0, x1, B25), x2, B036);
      __m256i c = _mm256_blend_epi32(_mm256_blend_epi32(x0, x1, B036), x2, B147);
      _mm256_stream_si256((__m256i *)(void *)(p0 + h * 32), _mm256_permutevar8x32_epi32(a, ia));
      _mm256_stream_si256((__m256i *)(void *)(p1 + h * 32), _mm256_permutevar8x32_epi32(b, ib));
      _mm256_stream_si256((__m256i *)(void *)(p2 + h * 32), _mm256_permutevar8x32_epi32(c, ic));
    }
  }
}

QV_TARGET_AVX2 static void inter3_stream_avx2(uint8_t *d, const uint8_t *p0, const uint8_t *p1,
                                              const uint8_t *p2, int64_t blocks) {
  const __m256i ia = _mm256_setr_epi32(0, 3, 6, 1, 4, 7, 2, 5);
  const __m256i ib = _mm256_setr_epi32(5, 0, 3, 6, 1, 4, 7, 2);
  const __m256i ic = _mm256_setr_epi32(2, 5, 0, 3, 6, 1, 4, 7);
  for (int64_t i = 0; i < blocks; i++, d += 192, p0 += 64, p1 += 64, p2 += 64) {
    for (int h = 0; h < 2; h++) {
      __m256i a = _mm256_permutevar8x32_epi32(
          _mm256_loadu_si256((const __m256i *)(const void *)(p0 + h * 32)), ia);
      __m256i b = _mm256_permutevar8x32_epi32(
          _mm256_loadu_si256((const __m256i *)(const void *)(p1 + h * 32)), ib);
      __m256i c = _mm256_permutevar8x32_epi32(
          _mm256_loadu_si256((const __m256i *)(const void *)(p2 + h * 32)), ic);
      __m256i *g = (__m256i *)(void *)(d + h * 96);
      _mm256_stream_si256(g, _mm256_blend_epi32(_mm256_blend_epi32(a, b, B147), c, B25));
      _mm256_stream_si256(g + 1, _mm256_blend_epi32(_mm256_blend_epi32(a, b, B25), c, B036));
      _mm256_stream_si256(g + 2, _mm256_blend_epi32(_mm256_blend_epi32(a, b, B036), c, B147));
    }
  }
}
#endif

void qvi_copy_deinterleave(void *planes, int64_t plane_stride, const void *groups, int64_t n,
                          int k, size_t elsize, bool stream) {
  Planes p = pick_planes(k, elsize);
  uint8_t *d = planes;
  const uint8_t *s = groups;
  if (n <= 0) return;
#ifdef QV_X86_DISPATCH
  if (stream && k == 3 && elsize == 4 && (uintptr_t)d % 32 == 0 && plane_stride % 32 == 0 &&
      qvi_cpu_has(QV_CPU_AVX2)) {
    qvi_path_hit(QV_PATH_PLANES_AVX2_DIRECT);
    int64_t blocks = n / 16;
    deint3_stream_avx2(d, d + plane_stride, d + 2 * plane_stride, s, blocks);
    _mm_sfence(); /* order the streamed stores before later ones */
    run_deint(&p, d + blocks * 64, plane_stride, s + blocks * 192, n % 16);
    return;
  }
#endif
#if QV_PLANES_STREAM
  if (stream && (uintptr_t)d % 16 == 0 && plane_stride % 16 == 0) {
    _Alignas(64) uint8_t scratch[QV_PLANES_MAX * PLANE_CHUNK];
    int64_t chunk = PLANE_CHUNK / (int64_t)elsize;
    for (int64_t i = 0; i < n; i += chunk) {
      int64_t m = n - i < chunk ? n - i : chunk;
      run_deint(&p, scratch, PLANE_CHUNK, s + i * k * (int64_t)elsize, m);
      for (int c = 0; c < k; c++)
        stream_bytes(d + c * plane_stride + i * (int64_t)elsize, scratch + c * PLANE_CHUNK,
                     (size_t)m * elsize);
    }
    _mm_sfence(); /* order the streamed stores before later ones */
    return;
  }
#else
  (void)stream;
#endif
  run_deint(&p, d, plane_stride, s, n);
}

void qvi_copy_interleave(void *groups, const void *planes, int64_t plane_stride, int64_t n, int k,
                        size_t elsize, bool stream) {
  Planes p = pick_planes(k, elsize);
  uint8_t *d = groups;
  const uint8_t *s = planes;
  if (n <= 0) return;
#ifdef QV_X86_DISPATCH
  if (stream && k == 3 && elsize == 4 && (uintptr_t)d % 32 == 0 && qvi_cpu_has(QV_CPU_AVX2)) {
    qvi_path_hit(QV_PATH_PLANES_AVX2_DIRECT);
    int64_t blocks = n / 16;
    inter3_stream_avx2(d, s, s + plane_stride, s + 2 * plane_stride, blocks);
    _mm_sfence();
    run_inter(&p, d + blocks * 192, s + blocks * 64, plane_stride, n % 16);
    return;
  }
#endif
#if QV_PLANES_STREAM
  if (stream && (uintptr_t)d % 16 == 0) {
    _Alignas(64) uint8_t scratch[QV_PLANES_MAX * PLANE_CHUNK];
    int64_t chunk = PLANE_CHUNK / (int64_t)elsize;
    for (int64_t i = 0; i < n; i += chunk) {
      int64_t m = n - i < chunk ? n - i : chunk;
      run_inter(&p, scratch, s + i * (int64_t)elsize, plane_stride, m);
      stream_bytes(d + i * k * (int64_t)elsize, scratch, (size_t)(m * k) * elsize);
    }
    _mm_sfence();
    return;
  }
#else
  (void)stream;
#endif
  run_inter(&p, d, s, plane_stride, n);
}

void qvi_copy_names(const char *const *names, size_t n, const char **ptrs, char *text) {
  for (size_t i = 0; i < n; i++) {
    size_t len = strlen(names[i]) + 1;
    memcpy(text, names[i], len);
    ptrs[i] = text;
    text += len;
  }
}
