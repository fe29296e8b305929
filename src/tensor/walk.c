/* Strided walks over tensors: count_nonzero, equals, copy. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "quiver/tensor.h"
#include "tensor/equals_tiles.h"
#include "tensor/tensor_internal.h"
#include "util/copy.h"
#include "util/cpu.h"

bool qvi_walk_init(QvWalk *w, int ndim, const int64_t *shape, int nops,
                  const int64_t *const *strides) {
  w->nops = nops;
  w->ndim = 0;
  for (int i = 0; i < ndim; i++) {
    if (shape[i] == 0) return false;
    if (shape[i] == 1) continue; /* contributes no offset */
    int d = w->ndim++;
    /* insertion sort by operand 0's stride, largest first (stable) */
    while (d > 0 && w->strides[0][d - 1] < strides[0][i]) {
      w->shape[d] = w->shape[d - 1];
      for (int k = 0; k < nops; k++) w->strides[k][d] = w->strides[k][d - 1];
      d--;
    }
    w->shape[d] = shape[i];
    for (int k = 0; k < nops; k++) w->strides[k][d] = strides[k][i];
  }
  /* merge d into d+1 when stepping d equals stepping over all of d+1 */
  int n = 0;
  for (int d = 0; d < w->ndim; d++) {
    if (n > 0) {
      bool merge = true;
      for (int k = 0; k < nops; k++) {
        int64_t span;
        if (__builtin_mul_overflow(w->strides[k][d], w->shape[d], &span) ||
            w->strides[k][n - 1] != span)
          merge = false;
      }
      if (merge) {
        w->shape[n - 1] *= w->shape[d];
        for (int k = 0; k < nops; k++) w->strides[k][n - 1] = w->strides[k][d];
        continue;
      }
    }
    w->shape[n] = w->shape[d];
    for (int k = 0; k < nops; k++) w->strides[k][n] = w->strides[k][d];
    n++;
  }
  w->ndim = n;
  return true;
}

/* Odometer over dims [0, n) of a walk, tracking one byte offset per operand. */
typedef struct Odometer {
  int n;
  int64_t idx[QV_TENSOR_MAX_NDIM];
  int64_t off[2];
} Odometer;

static void odo_init(Odometer *o, int n) {
  o->n = n;
  memset(o->idx, 0, sizeof o->idx);
  o->off[0] = o->off[1] = 0;
}

/* Advances; false after the last position. Offsets stay within the
 * validated extent: (shape - 1) * stride, never shape * stride. */
static bool odo_next(Odometer *o, const QvWalk *w) {
  for (int d = o->n - 1; d >= 0; d--) {
    if (o->idx[d] + 1 < w->shape[d]) {
      o->idx[d]++;
      for (int k = 0; k < w->nops; k++) o->off[k] += w->strides[k][d];
      return true;
    }
    for (int k = 0; k < w->nops; k++) o->off[k] -= w->strides[k][d] * (w->shape[d] - 1);
    o->idx[d] = 0;
  }
  return false;
}

/* ---- count_nonzero ---- */

/* Every value type is zero exactly when its bits under `mask` are zero:
 * integers use all bits, floats drop the sign bit (so -0.0 is zero and NaN,
 * which has exponent and mantissa bits set, is not). NZ(x) is 1 when x != 0,
 * written as the top bit of x | -x because GCC vectorises that form for
 * 64-bit lanes at -O2 and not the comparison. Fixed-size blocks let the
 * vectoriser's cheap cost model (-O2) accept the loop; the block counter is
 * as wide as the element so the lanes match (128 still fits in a byte). */
#define QV_NZ_BLOCK 128
#define NZ(bits, x) ((uint##bits##_t)((x) | (uint##bits##_t)(0u - (x))) >> ((bits)-1))
#define DEFINE_COUNT(bits)                                                   \
  static int64_t count_nz##bits(const uint8_t *p, int64_t n, int64_t stride, \
                                uint##bits##_t mask) {                       \
    int64_t total = 0;                                                       \
    if (stride == (bits) / 8) {                                              \
      int64_t i = 0;                                                         \
      for (; i + QV_NZ_BLOCK <= n; i += QV_NZ_BLOCK) {                       \
        const uint8_t *b = p + i * ((bits) / 8);                             \
        uint##bits##_t c = 0;                                                \
        for (int j = 0; j < QV_NZ_BLOCK; j++) {                              \
          uint##bits##_t v;                                                  \
          memcpy(&v, b + j * ((bits) / 8), sizeof v);                        \
          v &= mask;                                                         \
          c = (uint##bits##_t)(c + NZ(bits, v));                             \
        }                                                                    \
        total += c;                                                          \
      }                                                                      \
      for (; i < n; i++) {                                                   \
        uint##bits##_t v;                                                    \
        memcpy(&v, p + i * ((bits) / 8), sizeof v);                          \
        total += (v & mask) != 0;                                            \
      }                                                                      \
    } else {                                                                 \
      for (int64_t i = 0; i < n; i++) {                                      \
        uint##bits##_t v;                                                    \
        memcpy(&v, p + i * stride, sizeof v);                                \
        total += (v & mask) != 0;                                            \
      }                                                                      \
    }                                                                        \
    return total;                                                            \
  }
DEFINE_COUNT(8)
DEFINE_COUNT(16)
DEFINE_COUNT(32)
DEFINE_COUNT(64)

int64_t qv_tensor_count_nonzero(const QvTensor *t) {
  QvWalk w;
  const int64_t *strides[1] = {t->strides};
  if (!qvi_walk_init(&w, t->ndim, t->shape, 1, strides)) return 0;
  uint64_t mask = UINT64_MAX;
  if (t->type == QV_ARROW_FLOAT16) mask = 0x7fffu;
  if (t->type == QV_ARROW_FLOAT32) mask = 0x7fffffffu;
  if (t->type == QV_ARROW_FLOAT64) mask = UINT64_MAX >> 1;
  size_t elsize = qv_arrow_type_size(t->type);
  int64_t n = 1, stride = (int64_t)elsize; /* a 0-d or all-ones tensor is one element */
  int outer = 0;
  if (w.ndim > 0) {
    outer = w.ndim - 1;
    n = w.shape[outer];
    stride = w.strides[0][outer];
  }
  Odometer o;
  odo_init(&o, outer);
  int64_t total = 0;
  do {
    const uint8_t *p = t->data + o.off[0];
    switch (elsize) {
      case 1: total += count_nz8(p, n, stride, (uint8_t)mask); break;
      case 2: total += count_nz16(p, n, stride, (uint16_t)mask); break;
      case 4: total += count_nz32(p, n, stride, (uint32_t)mask); break;
      default: total += count_nz64(p, n, stride, mask); break;
    }
  } while (odo_next(&o, &w));
  return total;
}

/* ---- copy ---- */

/* Transpose kernel. A micro-block is one cache line of the source by one
 * cache line of the destination (8 x 8 float64, 64 x 64 int8): its source
 * lines are transposed into a small buffer whose lines are then written out
 * whole, so each line is touched once. Writing destination columns element
 * by element instead keeps many lines alive that are a large power of two
 * apart, which share an L1 set and evict each other.
 * Micro-blocks are grouped in QV_TILE x QV_TILE tiles to bound the number
 * of pages and prefetch streams in use at once. Outputs larger than the
 * caches are written with non-temporal stores where the compiler targets
 * SSE2 (every x86-64): they skip the read-for-ownership of each
 * destination line, which otherwise costs as much as the reads. */
#define QV_LINE 64
/* Inlining the micro-kernels into their callers' loops spills registers. */
#if defined(__GNUC__)
#define QV_NOINLINE __attribute__((noinline))
#else
#define QV_NOINLINE
#endif
#define QV_TILE 64
#define QV_NT_THRESHOLD ((int64_t)8 << 20)

#if defined(__SSE2__)
#include <emmintrin.h>
#define QV_HAVE_SSE2 1
#define LOAD128(p) _mm_loadu_si128((const __m128i *)(const void *)(p))
/* one 64-byte line to a 16-byte-aligned address, bypassing the caches */
static inline void stream_line(uint8_t *d, const uint8_t *s) {
  for (int i = 0; i < QV_LINE; i += 16)
    _mm_stream_si128((__m128i *)(void *)(d + i), LOAD128(s + i));
}
#else
#define QV_HAVE_SSE2 0
static inline void stream_line(uint8_t *d, const uint8_t *s) {
  memcpy(d, s, QV_LINE);
}
#endif

/* out = in transposed, both M x M (one cache line per row). SSE2 has
 * 2 x 2 (64-bit) and 4 x 4 (32-bit) transposes in a few unpacks; the
 * portable loops are the fallback and the 8- and 16-bit versions. */
#define DEFINE_TRANSPOSE_C(bits)                                                        \
  static void transpose##bits(uint##bits##_t *restrict out, const uint8_t *restrict in, \
                              int64_t in_r) {                                           \
    enum { M = QV_LINE / (bits / 8) };                                                  \
    for (int c = 0; c < M; c++)                                                         \
      for (int r = 0; r < M; r++)                                                       \
        memcpy(&out[c * M + r], in + r * in_r + c * (bits / 8), bits / 8);              \
  }
DEFINE_TRANSPOSE_C(8)
DEFINE_TRANSPOSE_C(16)
#if QV_HAVE_SSE2
static void transpose64(uint64_t *restrict out, const uint8_t *restrict in, int64_t in_r) {
  for (int r = 0; r < 8; r += 2)
    for (int c = 0; c < 8; c += 2) {
      __m128i a = LOAD128(in + r * in_r + c * 8);
      __m128i b = LOAD128(in + (r + 1) * in_r + c * 8);
      _mm_storeu_si128((__m128i *)(void *)&out[c * 8 + r], _mm_unpacklo_epi64(a, b));
      _mm_storeu_si128((__m128i *)(void *)&out[(c + 1) * 8 + r], _mm_unpackhi_epi64(a, b));
    }
}
static void transpose32(uint32_t *restrict out, const uint8_t *restrict in, int64_t in_r) {
  for (int r = 0; r < 16; r += 4)
    for (int c = 0; c < 16; c += 4) {
      __m128i a = LOAD128(in + r * in_r + c * 4);
      __m128i b = LOAD128(in + (r + 1) * in_r + c * 4);
      __m128i x = LOAD128(in + (r + 2) * in_r + c * 4);
      __m128i y = LOAD128(in + (r + 3) * in_r + c * 4);
      __m128i ab0 = _mm_unpacklo_epi32(a, b), ab1 = _mm_unpackhi_epi32(a, b);
      __m128i xy0 = _mm_unpacklo_epi32(x, y), xy1 = _mm_unpackhi_epi32(x, y);
      _mm_storeu_si128((__m128i *)(void *)&out[c * 16 + r], _mm_unpacklo_epi64(ab0, xy0));
      _mm_storeu_si128((__m128i *)(void *)&out[(c + 1) * 16 + r], _mm_unpackhi_epi64(ab0, xy0));
      _mm_storeu_si128((__m128i *)(void *)&out[(c + 2) * 16 + r], _mm_unpacklo_epi64(ab1, xy1));
      _mm_storeu_si128((__m128i *)(void *)&out[(c + 3) * 16 + r], _mm_unpackhi_epi64(ab1, xy1));
    }
}
#else
DEFINE_TRANSPOSE_C(32)
DEFINE_TRANSPOSE_C(64)
#endif

/* Copies a rows x cols block, element (r, c) from s + r*s_r + c*s_c to
 * d + r*elsize + c*d_c: the destination is contiguous along r. micro##bits
 * does one M x M micro-block, tile_copy##bits the whole block. */
#define DEFINE_KERNELS(bits)                                                                       \
  enum { M##bits = QV_LINE / (bits / 8) };                                                         \
  static void block_copy##bits(uint8_t *d, int64_t d_c, const uint8_t *s, int64_t s_r,             \
                               int64_t s_c, int64_t rows, int64_t cols) {                          \
    for (int64_t c = 0; c < cols; c++)                                                             \
      for (int64_t r = 0; r < rows; r++) {                                                         \
        uint##bits##_t v;                                                                          \
        memcpy(&v, s + r * s_r + c * s_c, sizeof v);                                               \
        memcpy(d + r * (int64_t)sizeof v + c * d_c, &v, sizeof v);                                 \
      }                                                                                            \
  }                                                                                                \
  QV_NOINLINE static void micro##bits(uint8_t *restrict d, int64_t d_c, const uint8_t *restrict s, \
                                      int64_t s_r, int64_t s_c, bool stream) {                     \
    uint##bits##_t out[M##bits * M##bits];                                                         \
    if (s_c == (int64_t)sizeof out[0]) {                                                           \
      transpose##bits(out, s, s_r);                                                                \
    } else {                                                                                       \
      /* gather the strided source into lines first */                                             \
      uint##bits##_t in[M##bits * M##bits];                                                        \
      for (int r = 0; r < M##bits; r++)                                                            \
        for (int c = 0; c < M##bits; c++)                                                          \
          memcpy(&in[r * M##bits + c], s + r * s_r + c * s_c, sizeof in[0]);                       \
      transpose##bits(out, (const uint8_t *)in, QV_LINE);                                          \
    }                                                                                              \
    if (stream) {                                                                                  \
      for (int c = 0; c < M##bits; c++)                                                            \
        stream_line(d + c * d_c, (const uint8_t *)&out[c * M##bits]);                              \
    } else {                                                                                       \
      for (int c = 0; c < M##bits; c++) memcpy(d + c * d_c, &out[c * M##bits], QV_LINE);           \
    }                                                                                              \
  }                                                                                                \
  /* M rows by nc < M columns: the micro-block's transpose through a     \
   * buffer whose missing columns are zeros (never written out), so a     \
   * short source side of more than half a line (and more than the 8 the  \
   * plane kernels take) still writes whole destination lines: the element \
   * loop makes one strided pass over the source per column. float32, 9-15 \
   * values a group, 64 MiB: 3.3-5.7x -> 1.2-4.0x memcpy; uint8, 48 and 63: \
   * 16.8x -> 8.5x, 24.0x -> 8.2x (CPU time, loaded machine). Narrower     \
   * sides (uint8, 9-24: 4-6x slower through a 64 x 64 byte transpose),   \
   * the right edges of wider blocks and short destination sides (the     \
   * bottom edge) keep the element loop. */                               \
  QV_NOINLINE static void edge##bits(uint8_t *restrict d, int64_t d_c, const uint8_t *restrict s,  \
                                     int64_t s_r, int64_t s_c, int nc, bool stream) {              \
    enum { M = M##bits, E = bits / 8 };                                                            \
    uint##bits##_t in[M * M], out[M * M];                                                          \
    for (int r = 0; r < M; r++) {                                                                  \
      uint##bits##_t *line = &in[r * M];                                                           \
      if (s_c == E) {                                                                              \
        memcpy(line, s + r * s_r, (size_t)nc * E);                                                 \
      } else {                                                                                     \
        for (int c = 0; c < nc; c++) memcpy(&line[c], s + r * s_r + c * s_c, E);                   \
      }                                                                                            \
      memset(line + nc, 0, (size_t)(M - nc) * E);                                                  \
    }                                                                                              \
    transpose##bits(out, (const uint8_t *)in, QV_LINE);                                            \
    for (int c = 0; c < nc; c++) {                                                                 \
      if (stream)                                                                                  \
        stream_line(d + c * d_c, (const uint8_t *)&out[c * M]);                                    \
      else                                                                                         \
        memcpy(d + c * d_c, &out[c * M], QV_LINE);                                                 \
    }                                                                                              \
  }                                                                                                \
  static void tile_copy##bits(uint8_t *d, int64_t d_c, const uint8_t *s, int64_t s_r, int64_t s_c, \
                              int64_t rows, int64_t cols, bool stream) {                           \
    const int64_t e = bits / 8;                                                                    \
    int64_t full_r = rows - rows % M##bits, full_c = cols - cols % M##bits;                        \
    for (int64_t r0 = 0; r0 < full_r; r0 += QV_TILE)                                               \
      for (int64_t c0 = 0; c0 < full_c; c0 += QV_TILE) {                                           \
        int64_t r1 = r0 + QV_TILE < full_r ? r0 + QV_TILE : full_r;                                \
        int64_t c1 = c0 + QV_TILE < full_c ? c0 + QV_TILE : full_c;                                \
        for (int64_t rb = r0; rb < r1; rb += M##bits)                                              \
          for (int64_t cb = c0; cb < c1; cb += M##bits)                                            \
            micro##bits(d + rb * e + cb * d_c, d_c, s + rb * s_r + cb * s_c, s_r, s_c, stream);    \
      }                                                                                            \
    /* edges narrower than a micro-block: the columns past full_c of the   \
     * full rows, then the rows past full_r */                             \
    if (full_c == 0 && cols > QV_PLANES_MAX && 2 * cols > M##bits && full_r > 0) {                 \
      qvi_path_hit(QV_PATH_TRANSPOSE_EDGE);                                                         \
      for (int64_t rb = 0; rb < full_r; rb += M##bits)                                             \
        edge##bits(d + rb * e + full_c * d_c, d_c, s + rb * s_r + full_c * s_c, s_r, s_c,          \
                   (int)(cols - full_c), stream);                                                  \
    } else if (full_c < cols) {                                                                    \
      block_copy##bits(d + full_c * d_c, d_c, s + full_c * s_c, s_r, s_c, full_r, cols - full_c);  \
    }                                                                                              \
    if (full_r < rows)                                                                             \
      block_copy##bits(d + full_r * e, d_c, s + full_r * s_r, s_r, s_c, rows - full_r, cols);      \
  }                                                                                                \
  static void run_copy##bits(uint8_t *d, int64_t d_s, const uint8_t *s, int64_t s_s, int64_t n) {  \
    for (int64_t i = 0; i < n; i++) {                                                              \
      uint##bits##_t v;                                                                            \
      memcpy(&v, s + i * s_s, sizeof v);                                                           \
      memcpy(d + i * d_s, &v, sizeof v);                                                           \
    }                                                                                              \
  }
DEFINE_KERNELS(8)
DEFINE_KERNELS(16)
DEFINE_KERNELS(32)
DEFINE_KERNELS(64)

/* ---- equals ---- */

/* Element equality by value on the raw bits, written without branches so
 * that fixed-length blocks vectorise: integers are equal when their bits
 * are; floats when they compare equal (so -0.0 == 0.0 and NaN != NaN), or
 * both are NaN and nans_equal. float16 has no native compare: equal bits
 * that are not NaN, or both zeros (sign ignored), or two NaNs. */
#define F16_NAN(x) (((x) & 0x7fffu) > 0x7c00u)
#define EQ_INT(x, y) ((x) == (y))
#define EQ_F16(x, y) \
  ((((x) == (y)) & !F16_NAN(x)) | ((((x) | (y)) & 0x7fffu) == 0) | (ne & F16_NAN(x) & F16_NAN(y)))
#define EQ_FLT(x, y) (((x) == (y)) | (ne & ((x) != (x)) & ((y) != (y))))
#define EQ_BLOCK 64
/* Tiles of micro-blocks for equals: larger than the copy's, since equals
 * reads both operands across pages and longer runs per page measured
 * faster here (256: 0.32-0.37x memcpy, 64: 0.23-0.25x, machine loaded);
 * 256 x 256 float64 is 512 KiB per operand, about L2. */
#define EQ_TILE 256

/* NAME_blk: cnt contiguous elements of each (cnt a constant after
 * inlining), in a form the compiler vectorises at -O2 for SSE2: integers
 * OR their XORs; float64 compares need SSE2 intrinsics (no 64-bit lane
 * compare the vectoriser would use without SSE4). */
#define DEFINE_BLK_INT(NAME, T)                                                    \
  static inline int NAME##_blk(const uint8_t *a, const uint8_t *b, int cnt, int ne) { \
    T d = 0;                                                                       \
    for (int j = 0; j < cnt; j++) {                                                \
      T x, y;                                                                      \
      memcpy(&x, a + j * (int64_t)sizeof x, sizeof x);                             \
      memcpy(&y, b + j * (int64_t)sizeof y, sizeof y);                             \
      d = (T)(d | (x ^ y));                                                        \
    }                                                                              \
    (void)ne;                                                                      \
    return d == 0;                                                                 \
  }
#define DEFINE_BLK_FORM(NAME, T, EQ)                                               \
  static inline int NAME##_blk(const uint8_t *a, const uint8_t *b, int cnt, int ne) { \
    int ok = 1;                                                                    \
    for (int j = 0; j < cnt; j++) {                                                \
      T x, y;                                                                      \
      memcpy(&x, a + j * (int64_t)sizeof x, sizeof x);                             \
      memcpy(&y, b + j * (int64_t)sizeof y, sizeof y);                             \
      ok &= EQ(x, y);                                                              \
    }                                                                              \
    return ok;                                                                     \
  }
DEFINE_BLK_INT(eq_i8, uint8_t)
DEFINE_BLK_INT(eq_i16, uint16_t)
DEFINE_BLK_INT(eq_i32, uint32_t)
DEFINE_BLK_INT(eq_i64, uint64_t)
DEFINE_BLK_FORM(eq_f16, uint16_t, EQ_F16)
DEFINE_BLK_FORM(eq_f32, float, EQ_FLT)
#if QV_HAVE_SSE2
static inline int eq_f64_blk(const uint8_t *a, const uint8_t *b, int cnt, int ne) {
  const __m128d nem = _mm_castsi128_pd(_mm_set1_epi64x(ne ? -1 : 0));
  __m128d all = _mm_castsi128_pd(_mm_set1_epi64x(-1));
  int j = 0;
  for (; j + 2 <= cnt; j += 2) {
    __m128d x = _mm_loadu_pd((const double *)(const void *)(a + j * 8));
    __m128d y = _mm_loadu_pd((const double *)(const void *)(b + j * 8));
    __m128d nans = _mm_and_pd(_mm_cmpunord_pd(x, x), _mm_cmpunord_pd(y, y));
    all = _mm_and_pd(all, _mm_or_pd(_mm_cmpeq_pd(x, y), _mm_and_pd(nans, nem)));
  }
  int ok = _mm_movemask_pd(all) == 3;
  for (; j < cnt; j++) {
    double x, y;
    memcpy(&x, a + j * 8, 8);
    memcpy(&y, b + j * 8, 8);
    ok &= EQ_FLT(x, y);
  }
  return ok;
}
#else
DEFINE_BLK_FORM(eq_f64, double, EQ_FLT)
#endif

/* An 8 x 8 micro-block of 64-bit elements compared in registers (SSE2):
 * each 2 x 2 block of b (two rows r, r + 1 along its lines) is unpacked
 * into two columns, which are a's lines c and c + 1 at rows r, r + 1.
 * Half the memory operations of transposing through a buffer. */
#if QV_HAVE_SSE2
static int eq64_direct(const uint8_t *a, int64_t a_c, const uint8_t *b, int64_t b_r, int isf, int ne) {
  const __m128i nem = _mm_set1_epi64x(ne ? -1 : 0);
  __m128i all = _mm_set1_epi64x(-1);
  for (int r = 0; r < 8; r += 2)
    for (int c = 0; c < 8; c += 2) {
      __m128i b0 = LOAD128(b + r * b_r + c * 8), b1 = LOAD128(b + (r + 1) * b_r + c * 8);
      __m128i y0 = _mm_unpacklo_epi64(b0, b1), y1 = _mm_unpackhi_epi64(b0, b1);
      __m128i x0 = LOAD128(a + c * a_c + r * 8), x1 = LOAD128(a + (c + 1) * a_c + r * 8);
      if (isf) {
        __m128d fx0 = _mm_castsi128_pd(x0), fy0 = _mm_castsi128_pd(y0);
        __m128d fx1 = _mm_castsi128_pd(x1), fy1 = _mm_castsi128_pd(y1);
        __m128d n0 = _mm_and_pd(_mm_cmpunord_pd(fx0, fx0), _mm_cmpunord_pd(fy0, fy0));
        __m128d n1 = _mm_and_pd(_mm_cmpunord_pd(fx1, fx1), _mm_cmpunord_pd(fy1, fy1));
        __m128d e0 = _mm_or_pd(_mm_cmpeq_pd(fx0, fy0), _mm_and_pd(n0, _mm_castsi128_pd(nem)));
        __m128d e1 = _mm_or_pd(_mm_cmpeq_pd(fx1, fy1), _mm_and_pd(n1, _mm_castsi128_pd(nem)));
        all = _mm_and_si128(all, _mm_castpd_si128(_mm_and_pd(e0, e1)));
      } else {
        /* equal 64-bit lanes: both 32-bit halves equal */
        all = _mm_and_si128(all, _mm_and_si128(_mm_cmpeq_epi32(x0, y0), _mm_cmpeq_epi32(x1, y1)));
      }
    }
  return _mm_movemask_epi8(all) == 0xffff;
}
#else
static int eq64_direct(const uint8_t *a, int64_t a_c, const uint8_t *b, int64_t b_r, int isf, int ne) {
  (void)a, (void)a_c, (void)b, (void)b_r, (void)isf, (void)ne;
  return 0; /* never called: the caller checks QV_HAVE_SSE2 */
}
#endif

/* Per element form: NAME_one compares one element at each pointer,
 * NAME_run n elements at byte strides sa / sb (fixed-length blocks when
 * both are contiguous). Across layouts, NAME_tile works like the
 * transposing copy: micro-blocks of one cache line of each operand (M x M
 * elements) along rows r (a's fastest dim) and columns c (b's fastest);
 * b's block is transposed into a buffer in a's order (the copy's transpose
 * kernels), then compared with a's lines, so every line of both operands
 * is read once and whole. */
#define DEFINE_EQ(NAME, T, EQ, bits, ISF)                                                                  \
  static inline int NAME##_one(const uint8_t *a, const uint8_t *b, int ne) {                          \
    T x, y;                                                                                           \
    memcpy(&x, a, sizeof x);                                                                          \
    memcpy(&y, b, sizeof y);                                                                          \
    (void)ne;                                                                                         \
    return EQ(x, y);                                                                                  \
  }                                                                                                   \
  static bool NAME##_run(const uint8_t *a, int64_t sa, const uint8_t *b, int64_t sb, int64_t n,       \
                         int ne) {                                                                    \
    const int64_t e = (int64_t)sizeof(T);                                                             \
    int64_t i = 0;                                                                                    \
    if (sa == e && sb == e)                                                                           \
      for (; i + EQ_BLOCK <= n; i += EQ_BLOCK)                                                        \
        if (!NAME##_blk(a + i * e, b + i * e, EQ_BLOCK, ne)) return false;                            \
    for (; i < n; i++)                                                                                \
      if (!NAME##_one(a + i * sa, b + i * sb, ne)) return false;                                      \
    return true;                                                                                      \
  }                                                                                                   \
  QV_NOINLINE static bool NAME##_micro(const uint8_t *a, int64_t a_r, int64_t a_c, const uint8_t *b, \
                                       int64_t b_r, int64_t b_c, int ne) {                            \
    enum { M = M##bits };                                                                             \
    if (bits == 64 && QV_HAVE_SSE2 && b_c == 8 && a_r == 8) return eq64_direct(a, a_c, b, b_r, ISF, ne); \
    uint##bits##_t t[M * M], g[M];                                                                    \
    if (b_c == (int64_t)sizeof t[0]) {                                                                \
      transpose##bits(t, b, b_r);                                                                     \
    } else {                                                                                          \
      uint##bits##_t in[M * M];                                                                       \
      for (int r = 0; r < M; r++)                                                                     \
        for (int c = 0; c < M; c++) memcpy(&in[r * M + c], b + r * b_r + c * b_c, sizeof in[0]);      \
      transpose##bits(t, (const uint8_t *)in, QV_LINE);                                               \
    }                                                                                                 \
    int ok = 1;                                                                                       \
    for (int c = 0; c < M; c++) {                                                                     \
      const uint8_t *line = a + c * a_c;                                                              \
      if (a_r != (int64_t)sizeof g[0]) {                                                              \
        for (int r = 0; r < M; r++) memcpy(&g[r], line + r * a_r, sizeof g[0]);                       \
        line = (const uint8_t *)g;                                                                    \
      }                                                                                               \
      ok &= NAME##_blk(line, (const uint8_t *)&t[c * M], M, ne);                                      \
    }                                                                                                 \
    return ok;                                                                                        \
  }                                                                                                   \
  static bool NAME##_tile(const uint8_t *a, int64_t a_r, int64_t a_c, const uint8_t *b, int64_t b_r,  \
                          int64_t b_c, int64_t rows, int64_t cols, int ne) {                          \
    int64_t full_r = rows - rows % M##bits, full_c = cols - cols % M##bits;                           \
    for (int64_t r0 = 0; r0 < full_r; r0 += EQ_TILE)                                                \
      for (int64_t c0 = 0; c0 < full_c; c0 += EQ_TILE) {                                            \
        int64_t r1 = r0 + EQ_TILE < full_r ? r0 + EQ_TILE : full_r;                               \
        int64_t c1 = c0 + EQ_TILE < full_c ? c0 + EQ_TILE : full_c;                               \
        for (int64_t rb = r0; rb < r1; rb += M##bits)                                                 \
          for (int64_t cb = c0; cb < c1; cb += M##bits) {                                             \
            if (!NAME##_micro(a + rb * a_r + cb * a_c, a_r, a_c, b + rb * b_r + cb * b_c, b_r, b_c,  \
                              ne))                                                                    \
              return false;                                                                           \
          }                                                                                           \
      }                                                                                               \
    /* edges narrower than a micro-block, along a's lines */                                          \
    for (int64_t c = 0; c < cols; c++) {                                                              \
      int64_t r = c < full_c ? full_r : 0;                                                            \
      if (!NAME##_run(a + r * a_r + c * a_c, a_r, b + r * b_r + c * b_c, b_r, rows - r, ne))          \
        return false;                                                                                 \
    }                                                                                                 \
    return true;                                                                                      \
  }
DEFINE_EQ(eq_i8, uint8_t, EQ_INT, 8, 0)
DEFINE_EQ(eq_i16, uint16_t, EQ_INT, 16, 0)
DEFINE_EQ(eq_i32, uint32_t, EQ_INT, 32, 0)
DEFINE_EQ(eq_i64, uint64_t, EQ_INT, 64, 0)
DEFINE_EQ(eq_f16, uint16_t, EQ_F16, 16, 0)
DEFINE_EQ(eq_f32, float, EQ_FLT, 32, 0)
DEFINE_EQ(eq_f64, double, EQ_FLT, 64, 1)

typedef struct EqKind {
  int (*one)(const uint8_t *, const uint8_t *, int);
  bool (*run)(const uint8_t *, int64_t, const uint8_t *, int64_t, int64_t, int);
  bool (*tile)(const uint8_t *, int64_t, int64_t, const uint8_t *, int64_t, int64_t, int64_t, int64_t, int);
} EqKind;
#define EQ_KIND(NAME) ((EqKind){NAME##_one, NAME##_run, NAME##_tile})

static EqKind eq_kind(QvArrowType type) {
  switch (type) {
    case QV_ARROW_FLOAT64: return EQ_KIND(eq_f64);
    case QV_ARROW_FLOAT32: return EQ_KIND(eq_f32);
    case QV_ARROW_FLOAT16: return EQ_KIND(eq_f16);
    default: break;
  }
  switch (qv_arrow_type_size(type)) {
    case 1: return EQ_KIND(eq_i8);
    case 2: return EQ_KIND(eq_i16);
    case 4: return EQ_KIND(eq_i32);
    default: return EQ_KIND(eq_i64);
  }
}

bool qv_tensor_equal(const QvTensor *a, const QvTensor *b, bool nans_equal) {
  if (a->type != b->type || a->ndim != b->ndim) return false;
  for (int32_t i = 0; i < a->ndim; i++)
    if (a->shape[i] != b->shape[i]) return false;
  QvWalk w;
  const int64_t *strides[2] = {a->strides, b->strides};
  if (!qvi_walk_init(&w, a->ndim, a->shape, 2, strides)) return true;
  EqKind k = eq_kind(a->type);
  int ne = nans_equal;
  if (w.ndim == 0) return k.one(a->data, b->data, ne);
  int q = w.ndim - 1; /* a's fastest dim (sorted last) */
  int p = q;          /* b's fastest dim */
  for (int d = 0; d < w.ndim; d++)
    if (w.strides[1][d] < w.strides[1][p]) p = d;
  if (p == q || w.strides[1][p] == 0 || w.strides[0][q] == 0) {
    /* the same fastest dim (or a broadcast one): runs along q */
    Odometer o;
    odo_init(&o, q);
    int64_t n = w.shape[q], sa = w.strides[0][q], sb = w.strides[1][q];
    do {
      if (!k.run(a->data + o.off[0], sa, b->data + o.off[1], sb, n, ne)) return false;
    } while (odo_next(&o, &w));
    return true;
  }
  /* 2-D tiles over (q, p), the other dims by odometer */
  qvi_path_hit(QV_PATH_EQUALS_TILED);
  QvWalk outer = w;
  int m = 0;
  for (int d = 0; d < w.ndim; d++) {
    if (d == p || d == q) continue;
    outer.shape[m] = w.shape[d];
    outer.strides[0][m] = w.strides[0][d];
    outer.strides[1][m] = w.strides[1][d];
    m++;
  }
  outer.ndim = m;
  Odometer o;
  odo_init(&o, m);
  int64_t rows = w.shape[q], cols = w.shape[p];
  int64_t a_r = w.strides[0][q], a_c = w.strides[0][p], b_r = w.strides[1][q], b_c = w.strides[1][p];
  do {
    const uint8_t *pa = a->data + o.off[0], *pb = b->data + o.off[1];
    int fast = qvi_tensor_equals_tiles(a->type, pa, a_r, a_c, pb, b_r, b_c, rows, cols, nans_equal);
    bool eq = fast >= 0 ? fast == 1 : k.tile(pa, a_r, a_c, pb, b_r, b_c, rows, cols, ne);
    if (!eq) return false;
  } while (odo_next(&o, &outer));
  return true;
}

/* Walk operand 0 is the destination, operand 1 the source. */
static void copy_walk(const QvWalk *w, uint8_t *dst, const uint8_t *src, size_t elsize,
                      int64_t total_bytes) {
  if (w->ndim == 0) {
    memcpy(dst, src, elsize);
    return;
  }
  int q = w->ndim - 1; /* the destination's fastest dim (sorted last) */
  int p = q;           /* the source's fastest dim */
  for (int d = 0; d < w->ndim; d++)
    if (w->strides[1][d] < w->strides[1][p]) p = d;
  int64_t e = (int64_t)elsize;
  if (p == q) {
    /* runs along q; outer dims by odometer */
    Odometer o;
    odo_init(&o, q);
    int64_t n = w->shape[q], ds = w->strides[0][q], ss = w->strides[1][q];
    do {
      uint8_t *dp = dst + o.off[0];
      const uint8_t *sp = src + o.off[1];
      if (ds == e && ss == e) {
        memcpy(dp, sp, (size_t)(n * e));
        continue;
      }
      switch (elsize) {
        case 1: run_copy8(dp, ds, sp, ss, n); break;
        case 2: run_copy16(dp, ds, sp, ss, n); break;
        case 4: run_copy32(dp, ds, sp, ss, n); break;
        default: run_copy64(dp, ds, sp, ss, n); break;
      }
    } while (odo_next(&o, w));
    return;
  }
  /* 2-D tiles over (q, p): rows along the destination's fastest dim, columns
   * along the source's; the other dims by odometer */
  QvWalk outer = *w;
  int m = 0;
  for (int d = 0; d < w->ndim; d++) {
    if (d == p || d == q) continue;
    outer.shape[m] = w->shape[d];
    outer.strides[0][m] = w->strides[0][d];
    outer.strides[1][m] = w->strides[1][d];
    m++;
  }
  outer.ndim = m;
  Odometer o;
  odo_init(&o, m);
  int64_t rows = w->shape[q], cols = w->shape[p];
  int64_t d_c = w->strides[0][p];
  int64_t s_r = w->strides[1][q], s_c = w->strides[1][p];
  /* streaming needs 16-byte-aligned line starts; whole lines when 64-aligned */
  bool stream =
      QV_HAVE_SSE2 && total_bytes >= QV_NT_THRESHOLD && (uintptr_t)dst % 16 == 0 && d_c % 16 == 0;
  /* A short side of at most QV_PLANES_MAX contiguous elements (e.g. 3
   * channels) leaves the tiles nothing but their element-by-element edge:
   * (de)interleave planes instead. */
  bool big = total_bytes >= QV_NT_THRESHOLD;
  if (cols <= QV_PLANES_MAX && s_c == e && s_r == cols * e) {
    do
      qvi_copy_deinterleave(dst + o.off[0], d_c, src + o.off[1], rows, (int)cols, elsize, big);
    while (odo_next(&o, &outer));
    return;
  }
  if (rows <= QV_PLANES_MAX && s_c == e && d_c == rows * e) {
    do
      qvi_copy_interleave(dst + o.off[0], src + o.off[1], s_r, cols, (int)rows, elsize, big);
    while (odo_next(&o, &outer));
    return;
  }
  do {
    uint8_t *dp = dst + o.off[0];
    const uint8_t *sp = src + o.off[1];
    bool st = stream && (uintptr_t)dp % 16 == 0;
    switch (elsize) {
      case 1: tile_copy8(dp, d_c, sp, s_r, s_c, rows, cols, st); break;
      case 2: tile_copy16(dp, d_c, sp, s_r, s_c, rows, cols, st); break;
      case 4: tile_copy32(dp, d_c, sp, s_r, s_c, rows, cols, st); break;
      default: tile_copy64(dp, d_c, sp, s_r, s_c, rows, cols, st); break;
    }
  } while (odo_next(&o, &outer));
#if QV_HAVE_SSE2
  if (stream) _mm_sfence(); /* order the streamed stores before later ones */
#endif
}

/* Leading indices [a, b) of src copied to their place in dst (natural
 * strides dstrides); `total` is the whole copy's size in bytes, which
 * picks streaming stores the same way for every range. */
static void copy_leading(const QvTensor *src, const int64_t *dstrides, uint8_t *dst, int64_t a,
                         int64_t b, int64_t total) {
  int64_t shape[QV_TENSOR_MAX_NDIM];
  memcpy(shape, src->shape, (size_t)src->ndim * sizeof shape[0]);
  shape[0] = b - a;
  QvWalk w;
  const int64_t *strides[2] = {dstrides, src->strides};
  if (!qvi_walk_init(&w, src->ndim, shape, 2, strides)) return;
  copy_walk(&w, dst + a * dstrides[0], src->data + a * src->strides[0],
            qv_arrow_type_size(src->type), total);
}

typedef struct CopyRanges {
  const QvTensor *src;
  const int64_t *dstrides;
  uint8_t *dst;
  int64_t per;   /* leading indices per task */
  int64_t total; /* bytes of the whole copy */
} CopyRanges;

static void copy_range_task(void *ctx, size_t t) {
  const CopyRanges *c = ctx;
  int64_t a = (int64_t)t * c->per, n = c->src->shape[0];
  copy_leading(c->src, c->dstrides, c->dst, a, n - a < c->per ? n : a + c->per, c->total);
}

int64_t qvi_tensor_copy_tasks(int64_t leading, int64_t total, int threads) {
  if (threads <= 1 || leading <= 1 || total < QV_COPY_THREADS_MIN) return 1;
  /* a few ranges per thread, so that a thread the machine delays leaves
   * its share to the others; none under QV_COPY_TASK_MIN bytes */
  int64_t tasks = (int64_t)threads * 4, most = total / QV_COPY_TASK_MIN;
  if (tasks > most) tasks = most;
  if (tasks > leading) tasks = leading;
  return tasks < 1 ? 1 : tasks;
}

QvStatus qvi_tensor_copy_to_pool(const QvTensor *src, bool column_major, void *dst,
                                size_t dst_size, QvPool *pool, QvError *error) {
  int64_t size = qv_tensor_n_elements(src);
  size_t elsize = qv_arrow_type_size(src->type);
  uint64_t need = (uint64_t)size * elsize;
  if (dst_size < need)
    return qv_error_set(error, QV_EARG,
                        "Tensor copy: destination has %zu bytes, %" PRIu64 " needed", dst_size,
                        need);
  if (size == 0) return QV_OK;
  if (dst == NULL) return qv_error_set(error, QV_EARG, "Tensor copy: destination is NULL");
  /* natural strides of the destination (size > 0 so none is zero-sized) */
  int64_t dstrides[QV_TENSOR_MAX_NDIM];
  QvStatus st =
      qv_tensor_compute_strides(src->type, src->ndim, src->shape, column_major, dstrides, error);
  if (st != QV_OK) return st;
  /* Ranges of the leading index are whole slabs of a row-major
   * destination: each thread writes (and first touches) its own pages. */
  int64_t tasks = column_major || src->ndim == 0
                      ? 1
                      : qvi_tensor_copy_tasks(src->shape[0], (int64_t)need, qvi_pool_threads(pool));
  if (tasks > 1) {
    qvi_path_hit(QV_PATH_TENSOR_COPY_THREADS);
    CopyRanges c = {src, dstrides, dst, (src->shape[0] + tasks - 1) / tasks, (int64_t)need};
    qvi_pool_run(pool, (size_t)((src->shape[0] + c.per - 1) / c.per), copy_range_task, &c);
    return QV_OK;
  }
  QvWalk w;
  const int64_t *strides[2] = {dstrides, src->strides};
  qvi_walk_init(&w, src->ndim, src->shape, 2, strides);
  copy_walk(&w, dst, src->data, elsize, (int64_t)need);
  return QV_OK;
}

QvStatus qv_tensor_copy_to(const QvTensor *src, bool column_major, void *dst, size_t dst_size,
                           QvError *error) {
  return qvi_tensor_copy_to_pool(src, column_major, dst, dst_size, NULL, error);
}

QvStatus qvi_tensor_copy_pool(const QvTensor *src, bool column_major, QvPool *pool, QvTensor *out,
                             QvError *error) {
  if (out == NULL) return qv_error_set(error, QV_EARG, "Tensor copy: output is NULL");
  memset(out, 0, sizeof *out);
  /* Not qv_tensor_alloc: it zeroes its buffer, and the copy writes every
   * byte anyway; that zeroing pass took the page faults and wrote the
   * output twice (a 1 GiB permuted stack: +~25% over allocate + memcpy). */
  int64_t strides[QV_TENSOR_MAX_NDIM];
  QvStatus st =
      qv_tensor_compute_strides(src->type, src->ndim, src->shape, column_major, strides, error);
  if (st != QV_OK) return st;
  size_t bytes = (size_t)qv_tensor_n_elements(src) * qv_arrow_type_size(src->type);
  void *dst = qv_aligned_alloc(bytes);
  QvOwner *owner = dst ? qv_owner_new(qv_free, dst) : NULL;
  if (owner == NULL) {
    qv_free(dst);
    return qv_error_set(error, QV_ENOMEM, "Tensor copy: cannot allocate %zu bytes", bytes);
  }
  st = qvi_tensor_copy_to_pool(src, column_major, dst, bytes, pool, error);
  QvTensorDesc desc = {.type = src->type, .ndim = src->ndim, .shape = src->shape,
                       .strides = strides, .dim_names = src->dim_names, .data = dst,
                       .data_size = (int64_t)bytes, .owner = owner};
  if (st == QV_OK) st = qv_tensor_init(out, &desc, error);
  qv_owner_free(owner); /* the tensor holds its own reference */
  if (st != QV_OK) memset(out, 0, sizeof *out);
  return st;
}

QvStatus qv_tensor_copy(const QvTensor *src, bool column_major, QvTensor *out, QvError *error) {
  return qvi_tensor_copy_pool(src, column_major, NULL, out, error);
}
