/* Tensor equals across layouts, 8- and 4-byte values, AVX2: 4 x 4 blocks
 * (8 x 8 of 4-byte values) compared in registers (b's 32-byte rows
 * transposed by unpacks, shuffles and lane permutes into a's lines), in
 * tiles of TR x TC elements, while the
 * next tile's lines are prefetched into L2 a few at a time. Each operand
 * is read as runs of a few hundred bytes across pages, which the hardware
 * prefetchers do not follow: without the software prefetch the loads wait
 * on memory (0.35-0.5x memcpy here; with it 0.6-0.65x, 4096 x 4096
 * float64). Tile shapes measured: 32x32 0.46-0.51x, 64x64 0.58-0.60x,
 * 64x128 0.59x, 128x128 0.60x, 64 (r) x 128 (c) 0.64-0.65x, 256x256 0.47x
 * (thread CPU time, load 4-5). */
#include <string.h>

#include "tensor/equals_tiles.h"
#include "util/cpu.h"

#ifdef QV_X86_DISPATCH
#include <immintrin.h>

enum { TR = 64, TC = 128 };

static int eq_one(const uint8_t *x, const uint8_t *y, int isf, int ne) {
  if (!isf) return memcmp(x, y, 8) == 0;
  double u, v;
  memcpy(&u, x, 8);
  memcpy(&v, y, 8);
  return u == v || (ne && u != u && v != v);
}

static int eq_one32(const uint8_t *x, const uint8_t *y, int isf, int ne) {
  if (!isf) return memcmp(x, y, 4) == 0;
  float u, v;
  memcpy(&u, x, 4);
  memcpy(&v, y, 4);
  return u == v || (ne && u != u && v != v);
}

/* The lines of the next tile, walked a few per block: `runs` runs of
 * `lines` cache lines per operand, runs `stride` bytes apart. Addresses
 * are formed as integers: a prefetch never faults, and the last line
 * prefetched may lie past a run's end. */
typedef struct Prefetch {
  uintptr_t base[2];
  int64_t stride[2], runs[2], lines[2];
  int op;
  int64_t run, line;
} Prefetch;

static inline void prefetch_some(Prefetch *p, int n) {
  for (; n > 0 && p->op < 2; n--) {
    _mm_prefetch((const char *)(p->base[p->op] + (uintptr_t)(p->run * p->stride[p->op] + p->line * 64)),
                 _MM_HINT_T2);
    if (++p->line < p->lines[p->op]) continue;
    p->line = 0;
    if (++p->run < p->runs[p->op]) continue;
    p->run = 0;
    p->op++;
  }
}

/* The prefetch plan of the tile after rows [r0, r1) of columns [c0, c1)
 * (tiles go down the rows, then right; tr x tc elements of es bytes): b's
 * rows and a's columns of it, spread over this tile's bk x bk blocks
 * (*per lines a block). */
static Prefetch next_tile(const uint8_t *a, int64_t a_c, const uint8_t *b, int64_t b_r, int64_t es,
                          int64_t r0, int64_t r1, int64_t c0, int64_t c1, int64_t fr, int64_t fc,
                          int64_t tr, int64_t tc, int64_t bk, int *per) {
  int64_t nr0 = r1, nc0 = c0;
  if (nr0 >= fr) nr0 = 0, nc0 = c1;
  int64_t nr1 = nr0 + tr < fr ? nr0 + tr : fr, nc1 = nc0 + tc < fc ? nc0 + tc : fc;
  Prefetch pf = {{(uintptr_t)b + (uintptr_t)(nr0 * b_r + nc0 * es), (uintptr_t)a + (uintptr_t)(nc0 * a_c + nr0 * es)},
                 {b_r, a_c},
                 {nr1 - nr0, nc1 - nc0},
                 {(nc1 - nc0) * es / 64 + 1, (nr1 - nr0) * es / 64 + 1},
                 nc0 < fc ? 0 : 2,
                 0,
                 0};
  int64_t total = pf.runs[0] * pf.lines[0] + pf.runs[1] * pf.lines[1];
  int64_t blocks = ((c1 - c0) / bk) * ((r1 - r0) / bk); /* >= 1: tiles hold whole blocks */
  *per = (int)((total + blocks - 1) / blocks);
  return pf;
}

QV_TARGET_AVX2 static int tiles64(const uint8_t *a, int64_t a_c, const uint8_t *b, int64_t b_r, int64_t rows,
                                  int64_t cols, int isf, int ne) {
  const __m256d nem = _mm256_castsi256_pd(_mm256_set1_epi64x(ne ? -1 : 0));
  const __m256i ones = _mm256_set1_epi64x(-1);
  int64_t fr = rows & ~(int64_t)3, fc = cols & ~(int64_t)3;
  for (int64_t c0 = 0; c0 < fc; c0 += TC) {
    int64_t c1 = c0 + TC < fc ? c0 + TC : fc;
    for (int64_t r0 = 0; r0 < fr; r0 += TR) {
      int64_t r1 = r0 + TR < fr ? r0 + TR : fr;
      int per;
      Prefetch pf = next_tile(a, a_c, b, b_r, 8, r0, r1, c0, c1, fr, fc, TR, TC, 4, &per);
      __m256i all = ones;
      for (int64_t c = c0; c < c1; c += 4) {
        const uint8_t *pa = a + c * a_c;
        for (int64_t r = r0; r < r1; r += 4) {
          prefetch_some(&pf, per);
          const uint8_t *pb = b + r * b_r + c * 8;
          __m256d b0 = _mm256_loadu_pd((const double *)(const void *)pb);
          __m256d b1 = _mm256_loadu_pd((const double *)(const void *)(pb + b_r));
          __m256d b2 = _mm256_loadu_pd((const double *)(const void *)(pb + 2 * b_r));
          __m256d b3 = _mm256_loadu_pd((const double *)(const void *)(pb + 3 * b_r));
          __m256d t0 = _mm256_unpacklo_pd(b0, b1), t1 = _mm256_unpackhi_pd(b0, b1);
          __m256d t2 = _mm256_unpacklo_pd(b2, b3), t3 = _mm256_unpackhi_pd(b2, b3);
          __m256d y[4] = {_mm256_permute2f128_pd(t0, t2, 0x20), _mm256_permute2f128_pd(t1, t3, 0x20),
                          _mm256_permute2f128_pd(t0, t2, 0x31), _mm256_permute2f128_pd(t1, t3, 0x31)};
          for (int k = 0; k < 4; k++) {
            __m256d x = _mm256_loadu_pd((const double *)(const void *)(pa + k * a_c + r * 8));
            __m256i e;
            if (isf) {
              __m256d nans = _mm256_and_pd(_mm256_cmp_pd(x, x, _CMP_UNORD_Q), _mm256_cmp_pd(y[k], y[k], _CMP_UNORD_Q));
              e = _mm256_castpd_si256(_mm256_or_pd(_mm256_cmp_pd(x, y[k], _CMP_EQ_OQ), _mm256_and_pd(nans, nem)));
            } else {
              e = _mm256_cmpeq_epi64(_mm256_castpd_si256(x), _mm256_castpd_si256(y[k]));
            }
            all = _mm256_and_si256(all, e);
          }
        }
      }
      if (_mm256_movemask_epi8(all) != -1) return 0;
    }
  }
  /* edges narrower than a block */
  for (int64_t c = 0; c < cols; c++)
    for (int64_t r = c < fc ? fr : 0; r < rows; r++)
      if (!eq_one(a + r * 8 + c * a_c, b + r * b_r + c * 8, isf, ne)) return 0;
  return 1;
}

/* The same for 4-byte values: 8 x 8 blocks, tiles of the same bytes. */
enum { TR32 = 128, TC32 = 128 };

QV_TARGET_AVX2 static int tiles32(const uint8_t *a, int64_t a_c, const uint8_t *b, int64_t b_r, int64_t rows,
                                  int64_t cols, int isf, int ne) {
  const __m256 nem = _mm256_castsi256_ps(_mm256_set1_epi32(ne ? -1 : 0));
  const __m256i ones = _mm256_set1_epi32(-1);
  int64_t fr = rows & ~(int64_t)7, fc = cols & ~(int64_t)7;
  for (int64_t c0 = 0; c0 < fc; c0 += TC32) {
    int64_t c1 = c0 + TC32 < fc ? c0 + TC32 : fc;
    for (int64_t r0 = 0; r0 < fr; r0 += TR32) {
      int64_t r1 = r0 + TR32 < fr ? r0 + TR32 : fr;
      int per;
      Prefetch pf = next_tile(a, a_c, b, b_r, 4, r0, r1, c0, c1, fr, fc, TR32, TC32, 8, &per);
      __m256i all = ones;
      for (int64_t c = c0; c < c1; c += 8) {
        const uint8_t *pa = a + c * a_c;
        for (int64_t r = r0; r < r1; r += 8) {
          prefetch_some(&pf, per);
          const uint8_t *pb = b + r * b_r + c * 4;
          __m256 x[8], t[8], u[8];
          for (int k = 0; k < 8; k++) x[k] = _mm256_loadu_ps((const float *)(const void *)(pb + k * b_r));
          for (int k = 0; k < 8; k += 2) {
            t[k] = _mm256_unpacklo_ps(x[k], x[k + 1]);
            t[k + 1] = _mm256_unpackhi_ps(x[k], x[k + 1]);
          }
          for (int k = 0; k < 8; k += 4) {
            u[k] = _mm256_shuffle_ps(t[k], t[k + 2], 0x44);
            u[k + 1] = _mm256_shuffle_ps(t[k], t[k + 2], 0xee);
            u[k + 2] = _mm256_shuffle_ps(t[k + 1], t[k + 3], 0x44);
            u[k + 3] = _mm256_shuffle_ps(t[k + 1], t[k + 3], 0xee);
          }
          /* y[j]: column j of the block, rows r .. r + 7 */
          __m256 y8[8] = {_mm256_permute2f128_ps(u[0], u[4], 0x20), _mm256_permute2f128_ps(u[1], u[5], 0x20),
                          _mm256_permute2f128_ps(u[2], u[6], 0x20), _mm256_permute2f128_ps(u[3], u[7], 0x20),
                          _mm256_permute2f128_ps(u[0], u[4], 0x31), _mm256_permute2f128_ps(u[1], u[5], 0x31),
                          _mm256_permute2f128_ps(u[2], u[6], 0x31), _mm256_permute2f128_ps(u[3], u[7], 0x31)};
          for (int j = 0; j < 8; j++) {
            __m256 y = y8[j];
            __m256 v = _mm256_loadu_ps((const float *)(const void *)(pa + j * a_c + r * 4));
            __m256i e;
            if (isf) {
              __m256 nans = _mm256_and_ps(_mm256_cmp_ps(v, v, _CMP_UNORD_Q), _mm256_cmp_ps(y, y, _CMP_UNORD_Q));
              e = _mm256_castps_si256(_mm256_or_ps(_mm256_cmp_ps(v, y, _CMP_EQ_OQ), _mm256_and_ps(nans, nem)));
            } else {
              e = _mm256_cmpeq_epi32(_mm256_castps_si256(v), _mm256_castps_si256(y));
            }
            all = _mm256_and_si256(all, e);
          }
        }
      }
      if (_mm256_movemask_epi8(all) != -1) return 0;
    }
  }
  for (int64_t c = 0; c < cols; c++)
    for (int64_t r = c < fc ? fr : 0; r < rows; r++)
      if (!eq_one32(a + r * 4 + c * a_c, b + r * b_r + c * 4, isf, ne)) return 0;
  return 1;
}

int qvi_tensor_equals_tiles(QvArrowType type, const uint8_t *a, int64_t a_r, int64_t a_c,
                           const uint8_t *b, int64_t b_r, int64_t b_c, int64_t rows, int64_t cols,
                           bool nans_equal) {
  int64_t e = (int64_t)qv_arrow_type_size(type);
  if ((e != 8 && e != 4) || a_r != e || b_c != e || type == QV_ARROW_FLOAT16 || !qvi_cpu_has(QV_CPU_AVX2))
    return -1;
  qvi_path_hit(QV_PATH_EQUALS_AVX2);
  if (e == 4) return tiles32(a, a_c, b, b_r, rows, cols, type == QV_ARROW_FLOAT32, nans_equal);
  return tiles64(a, a_c, b, b_r, rows, cols, type == QV_ARROW_FLOAT64, nans_equal);
}

#else

int qvi_tensor_equals_tiles(QvArrowType type, const uint8_t *a, int64_t a_r, int64_t a_c,
                           const uint8_t *b, int64_t b_r, int64_t b_c, int64_t rows, int64_t cols,
                           bool nans_equal) {
  (void)type, (void)a, (void)a_r, (void)a_c, (void)b, (void)b_r, (void)b_c, (void)rows, (void)cols;
  (void)nans_equal;
  return -1;
}

#endif
