/* Grouping entries by a key (the major index of a CSR/CSC output): a
 * stable counting sort from COO pairs (rows then sorted, duplicates summed
 * in entry order) or from the other CSX orientation (a transpose). Small
 * inputs scatter directly and sort rows afterwards; large ones go through
 * cache-sized buckets (see group_bucketed). */
#include <sched.h>
#include <stdlib.h>

#include "sparse/sparse_internal.h"
#include "util/cpu.h"
#include "util/pool.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

/* Per-segment sort of (index, value) pairs, stable. Small segments use an
 * insertion sort in place; larger ones a merge sort of (index, position)
 * pairs followed by a gather through `tmp`. VS is constant per
 * instantiation so value moves compile to plain loads and stores. */
typedef struct SegTmp {
  int64_t *keys;  /* 4 * cap int64: (key, pos) pairs, twice */
  uint8_t *vals;  /* cap * vsize */
  int64_t cap;
} SegTmp;

static void merge_pairs(int64_t *a, int64_t *b, int64_t n) {
  /* bottom-up merge sort of n (key, pos) pairs; result ends in a */
  int64_t *src = a, *dst = b;
  for (int64_t width = 1; width < n; width *= 2) {
    for (int64_t lo = 0; lo < n; lo += 2 * width) {
      int64_t mid = lo + width < n ? lo + width : n;
      int64_t hi = lo + 2 * width < n ? lo + 2 * width : n;
      int64_t i = lo, j = mid, k = lo;
      while (i < mid && j < hi) {
        if (src[2 * j] < src[2 * i]) {
          dst[2 * k] = src[2 * j], dst[2 * k + 1] = src[2 * j + 1], j++;
        } else {
          dst[2 * k] = src[2 * i], dst[2 * k + 1] = src[2 * i + 1], i++;
        }
        k++;
      }
      while (i < mid) dst[2 * k] = src[2 * i], dst[2 * k + 1] = src[2 * i + 1], i++, k++;
      while (j < hi) dst[2 * k] = src[2 * j], dst[2 * k + 1] = src[2 * j + 1], j++, k++;
    }
    int64_t *t = src;
    src = dst;
    dst = t;
  }
  if (src != a) memcpy(a, src, (size_t)n * 16);
}

SP_INLINE void seg_sort(int64_t *idx, uint8_t *val, int64_t n, size_t vs, SegTmp *tmp) {
  if (n <= 32) {
    for (int64_t i = 1; i < n; i++) {
      int64_t k = idx[i];
      uint64_t v = qvi_ld_bits(val + (size_t)i * vs, vs);
      int64_t j = i;
      while (j > 0 && idx[j - 1] > k) {
        idx[j] = idx[j - 1];
        qvi_st_bits(val + (size_t)j * vs, vs, qvi_ld_bits(val + (size_t)(j - 1) * vs, vs));
        j--;
      }
      idx[j] = k;
      qvi_st_bits(val + (size_t)j * vs, vs, v);
    }
    return;
  }
  int64_t *a = tmp->keys, *b = tmp->keys + 2 * n;
  for (int64_t i = 0; i < n; i++) a[2 * i] = idx[i], a[2 * i + 1] = i;
  merge_pairs(a, b, n);
  memcpy(tmp->vals, val, (size_t)n * vs);
  for (int64_t i = 0; i < n; i++) {
    idx[i] = a[2 * i];
    memcpy(val + (size_t)i * vs, tmp->vals + (size_t)a[2 * i + 1] * vs, vs);
  }
}

/* After bucketing, rows [r0, r1): sorts each row that needs it, sums
 * duplicates and compacts to *w, rewriting ptr[r0..r1-1] (`end` is the old
 * end of row r1 - 1; ptr[r1] is neither read nor written, so buckets on
 * other threads may own it; the caller sets ptr[nmajor] last). False on
 * allocation failure. */
SP_INLINE bool finish_rows(int64_t *ptr, int64_t r0, int64_t r1, int64_t end, int64_t *idx, uint8_t *val,
                           size_t vs, QvArrowType vtype, int64_t *wp, SegTmp *tmp) {
  int64_t w = *wp, lo = ptr[r0];
  for (int64_t r = r0; r < r1; r++) {
    int64_t hi = r + 1 < r1 ? ptr[r + 1] : end;
    int64_t n = hi - lo;
    bool sorted = true, dup = false;
    for (int64_t k = lo + 1; k < hi; k++) {
      if (idx[k] < idx[k - 1]) sorted = false;
      if (idx[k] == idx[k - 1]) dup = true;
    }
    if (!sorted) {
      if (n > 32 && n > tmp->cap) {
        qvi_sp_free(tmp->keys);
        qvi_sp_free(tmp->vals);
        tmp->keys = qvi_sp_malloc(n, 32); /* (key, pos) pairs, twice */
        tmp->vals = qvi_sp_malloc(n, vs);
        tmp->cap = n;
        if (tmp->keys == NULL || tmp->vals == NULL) return false;
      }
      seg_sort(idx + lo, val + (size_t)lo * vs, n, vs, tmp);
      dup = false;
      for (int64_t k = lo + 1; k < hi && !dup; k++) dup = idx[k] == idx[k - 1];
    }
    ptr[r] = w;
    if (!dup && w == lo) {
      w = hi;
    } else {
      for (int64_t k = lo; k < hi; k++) {
        if (k > lo && idx[k] == idx[w - 1]) {
          qvi_sp_value_add(vtype, val + (size_t)(w - 1) * vs, val + (size_t)k * vs);
        } else {
          idx[w] = idx[k];
          qvi_st_bits(val + (size_t)w * vs, vs, qvi_ld_bits(val + (size_t)k * vs, vs));
          w++;
        }
      }
    }
    lo = hi;
  }
  *wp = w;
  return true;
}

/* finish_rows for a range whose rows are usually clean (sorted, no
 * duplicates, as the bucketed path produces them): then the whole range
 * moves down to *wp with one memmove, else row by row. */
SP_INLINE bool finish_range(int64_t *ptr, int64_t r0, int64_t r1, int64_t end, int64_t *idx, uint8_t *val,
                            size_t vs, QvArrowType vtype, int64_t *wp, SegTmp *tmp) {
  int64_t lo = ptr[r0], hi = end;
  bool clean = true;
  for (int64_t r = r0; r < r1 && clean; r++)
    for (int64_t k = ptr[r] + 1, e = r + 1 < r1 ? ptr[r + 1] : end; k < e; k++) clean &= idx[k] > idx[k - 1];
  if (!clean) return finish_rows(ptr, r0, r1, end, idx, val, vs, vtype, wp, tmp);
  int64_t shift = lo - *wp;
  if (shift != 0) {
    memmove(idx + *wp, idx + lo, (size_t)(hi - lo) * 8);
    memmove(val + (size_t)*wp * vs, val + (size_t)lo * vs, (size_t)(hi - lo) * vs);
    for (int64_t r = r0; r < r1; r++) ptr[r] -= shift;
  }
  *wp += hi - lo;
  return true;
}

/* Where the entries to group come from: COO pairs (key coords[2i + M],
 * minor coords[2i + 1 - M], value i) or CSX rows (key idx[k], minor r for
 * k in [sptr[r], sptr[r + 1]), value k). */
typedef struct Src {
  const int64_t *coords;
  int M;
  const int64_t *sptr, *sidx;
  int64_t nsrc;
  const uint8_t *values;
  int64_t n;
  int64_t row0; /* CSX: the source row of sptr[0] (a chunk of the rows) */
  /* CSX: the entries [kbeg, kend) of those rows: a chunk of a thread may
   * start and end inside a row (the whole source: sptr[0], sptr[nsrc]) */
  int64_t kbeg, kend;
} Src;

#define SP_FOR_EACH(src, CSX, KEY, MINOR, I, BODY)                           \
  do {                                                                        \
    if (CSX) {                                                                \
      const int64_t *sp_ = (src)->sptr, *si_ = (src)->sidx;                   \
      int64_t lo_ = (src)->kbeg, end_ = (src)->kend;                          \
      for (int64_t r_ = 0; r_ < (src)->nsrc; r_++) {                          \
        int64_t hi_ = sp_[r_ + 1]; /* local: stores below may alias */        \
        hi_ = hi_ < end_ ? hi_ : end_;                                        \
        for (int64_t k_ = lo_; k_ < hi_; k_++) {                              \
          int64_t KEY = si_[k_], MINOR = (src)->row0 + r_, I = k_;                       \
          BODY                                                                \
        }                                                                     \
        lo_ = hi_;                                                            \
      }                                                                       \
    } else {                                                                  \
      const int64_t *c_ = (src)->coords;                                      \
      int M_ = (src)->M;                                                      \
      for (int64_t i_ = 0; i_ < (src)->n; i_++) {                             \
        int64_t KEY = c_[2 * i_ + M_], MINOR = c_[2 * i_ + 1 - M_], I = i_;   \
        BODY                                                                  \
      }                                                                       \
    }                                                                         \
  } while (0)

/* Pass 0: the entries of each bucket (2^s keys) into bc. True if an entry
 * is out of range (it is not counted). The rows of a CSX source do not
 * matter here, so its keys [kbeg, kend) are read as one flat array: a loop
 * per row would mispredict its exit at every row end (about one entry in
 * ten in a typical matrix). */
static bool count_buckets(const Src *src, bool csx, int64_t nkeys, int64_t nminor, int s, int64_t *bc) {
  bool bad = false;
  if (csx) {
    for (int64_t k = src->kbeg; k < src->kend; k++) {
      uint64_t key = (uint64_t)src->sidx[k];
      bool in = key < (uint64_t)nkeys;
      bad |= !in;
      bc[in ? key >> s : 0] += in;
    }
    qvi_path_hit(QV_PATH_SPARSE_FLAT_COUNT);
    return bad;
  }
  SP_FOR_EACH(src, false, key, minor, i, {
    (void)i;
    bool in = (uint64_t)key < (uint64_t)nkeys && (uint64_t)minor < (uint64_t)nminor;
    bad |= !in;
    bc[in ? key >> s : 0] += in;
  });
  return bad;
}

/* Small inputs: one stable scatter with a cursor per key. */
SP_INLINE bool group_direct(const Src *src, bool csx, int64_t nkeys, int64_t *ptr, int64_t *idx,
                            uint8_t *val, size_t vs) {
  int64_t *cur = qvi_sp_malloc(nkeys, 8);
  if (cur == NULL) return false;
  if (nkeys > 0) memcpy(cur, ptr, (size_t)nkeys * 8);
  SP_FOR_EACH(src, csx, key, minor, i, {
    int64_t pos = cur[key]++;
    idx[pos] = minor;
    qvi_st_bits(val + (size_t)pos * vs, vs, qvi_ld_bits(src->values + (size_t)i * vs, vs));
  });
  qvi_sp_free(cur);
  return true;
}

/* Large inputs: a fully random scatter into the output misses the cache on
 * every entry, so it is split. Keys are grouped into at most 512 buckets of
 * 2^s consecutive keys. Pass 0 counts entries per bucket (unless the caller
 * counted per key). Pass 1 streams every entry into its bucket's region of
 * the output (one write stream per bucket and array), keeping the key's low
 * s bits: packed above the minor index when both fit in 63 bits (always,
 * short of astronomically large shapes), else in a 32-bit side array.
 * Pass 2 works on one bucket at a time in a scratch copy small enough for
 * the cache: from COO pairs it first orders the bucket by minor index
 * (stable LSD counting passes on 11-bit digits), then by key into the final
 * positions, so every row arrives sorted and only duplicates remain to be
 * summed while the bucket is cached. */
enum { DIGIT = 11, MAX_BUCKETS = 512 };

/* One stable counting pass of bucket entries by digit (minor >> shift). */
SP_INLINE void digit_pass(const int64_t *ai, const uint8_t *av, const uint32_t *al, int64_t *bi,
                          uint8_t *bv, uint32_t *bl, int64_t len, uint64_t mmask, int shift,
                          int64_t *cnt, size_t vs, bool packed) {
  uint64_t dm = (1u << DIGIT) - 1;
  memset(cnt, 0, sizeof(int64_t) << DIGIT);
  for (int64_t j = 0; j < len; j++) cnt[(((uint64_t)ai[j] & mmask) >> shift) & dm]++;
  int64_t acc = 0;
  for (uint64_t d = 0; d <= dm; d++) {
    int64_t c = cnt[d];
    cnt[d] = acc;
    acc += c;
  }
  for (int64_t j = 0; j < len; j++) {
    int64_t pos = cnt[(((uint64_t)ai[j] & mmask) >> shift) & dm]++;
    bi[pos] = ai[j];
    qvi_st_bits(bv + (size_t)pos * vs, vs, qvi_ld_bits(av + (size_t)j * vs, vs));
    if (!packed) bl[pos] = al[j];
  }
}

/* The ND least-significant-digit passes over a bucket's minor digits, with
 * the digit counts already in h (ND tables of hn): the first pass builds
 * the items (packed key << pb | position in the bucket) from `src`; the
 * sorted items end in *a, *b is the other scratch array. */
SP_INLINE void minor_digit_passes(uint32_t *h, const int ND, int64_t hn, int pb, int dw,
                                  uint64_t dm, const uint64_t *src, int64_t len, uint64_t **a,
                                  uint64_t **b) {
  uint64_t *from = *a, *to = *b;
  for (int d = 0; d < ND; d++) {
    uint32_t *hd = h + d * hn, acc = 0;
    for (int64_t k = 0; k < hn; k++) {
      uint32_t c = hd[k];
      hd[k] = acc;
      acc += c;
    }
    int sh = pb + d * dw;
    if (d == 0) {
      for (int64_t j = 0; j < len; j++) {
        uint64_t it = src[j] << pb | (uint64_t)j;
        to[hd[(it >> sh) & dm]++] = it;
      }
    } else {
      for (int64_t j = 0; j < len; j++) {
        uint64_t it = from[j];
        to[hd[(it >> sh) & dm]++] = it;
      }
    }
    uint64_t *sw = from;
    from = to;
    to = sw;
  }
  *a = from;
  *b = to;
}

typedef struct BucketScratch {
  uint64_t *a, *b;  /* items, maxlen each */
  uint8_t *vals;    /* the bucket's values, maxlen * vs */
  uint32_t *hist;   /* ND << DIGIT minor digit counts */
  uint32_t *key;    /* per key of the bucket: count, then next position */
} BucketScratch;

/* The sort of one bucket of packed items (key low bits above the mbits
 * minor bits, above the pb bits of the position in the bucket), for the
 * one-thread and the threaded pass 2: one read of the bucket (src) builds
 * every minor digit histogram and the per-key counts at once, its values
 * are copied to vals (where the positions point), LSD passes order the
 * minors and a last stable pass by key leaves the items in (key, minor)
 * order. Returns them (in a or b, where the passes end); kc[k] is then the
 * end of key k in the bucket. ND and dw are constants per instantiation,
 * so the histogram loop unrolls. */
SP_INLINE uint64_t *sort_bucket_items(const uint64_t *src, const uint8_t *values, int64_t len,
                                      const int ND, int dw, int pb, int mbits, int64_t nk, uint32_t *h,
                                      uint32_t *kc, uint64_t *a, uint64_t *b, uint8_t *vals,
                                      size_t vs) {
  uint64_t dm = ((uint64_t)1 << dw) - 1;
  int64_t hn = (int64_t)1 << dw;
  memset(h, 0, (size_t)(ND * hn) * 4);
  memset(kc, 0, (size_t)nk * 4);
  for (int64_t j = 0; j < len; j++) {
    uint64_t x = src[j];
    h[x & dm]++;
    if (ND > 1) h[hn + ((x >> dw) & dm)]++;
    if (ND > 2) h[2 * hn + ((x >> (2 * dw)) & dm)]++;
    kc[x >> mbits]++;
  }
  memcpy(vals, values, (size_t)len * vs);
  /* the first pass builds the items from the bucket as pass 1 left it */
  minor_digit_passes(h, ND, hn, pb, dw, dm, src, len, &a, &b);
  uint32_t acc = 0;
  for (int64_t k = 0; k < nk; k++) {
    uint32_t c = kc[k];
    kc[k] = acc;
    acc += c;
  }
  int kshift = pb + mbits;
  for (int64_t j = 0; j < len; j++) {
    uint64_t it = a[j];
    b[kc[it >> kshift]++] = it;
  }
  return b;
}

/* ND (1..3) minor digits of `dw` bits each; constant per instantiation so
 * the histogram loop unrolls. Counts are 32-bit (buckets hold < 2^31). */
SP_INLINE bool bucket_items_nd(BucketScratch *t, const int ND, int64_t r0, int64_t r1, int mbits, int dw,
                               int pb, int64_t lo, int64_t len, int64_t *ptr, int64_t *idx, uint8_t *val,
                               size_t vs, QvArrowType vtype, int64_t *wp, SegTmp *tmp) {
  uint64_t pmask = ((uint64_t)1 << pb) - 1, mmask = ((uint64_t)1 << mbits) - 1;
  int64_t nk = r1 - r0;
  uint32_t *kc = t->key;
  const uint64_t *b = sort_bucket_items((const uint64_t *)idx + lo, val + (size_t)lo * vs, len, ND, dw,
                                        pb, mbits, nk, t->hist, kc, t->a, t->b, t->vals, vs);
  /* rows start at the write position; one sequential pass writes indices
   * and values and spots duplicates as equal neighbours */
  int64_t base = *wp;
  for (int64_t k = 0; k < nk; k++) ptr[r0 + k] = base + (k > 0 ? kc[k - 1] : 0);
  bool dup = false;
  int64_t *out = idx + base;
  uint8_t *vout = val + (size_t)base * vs;
  uint64_t prev = ~(uint64_t)0;
  for (int64_t j = 0; j < len; j++) {
    uint64_t it = b[j], kv = it >> pb;
    dup |= kv == prev;
    prev = kv;
    out[j] = (int64_t)(kv & mmask);
    qvi_st_bits(vout + (size_t)j * vs, vs, qvi_ld_bits(t->vals + (size_t)(it & pmask) * vs, vs));
  }
  if (!dup) {
    *wp = base + len;
    return true;
  }
  return finish_rows(ptr, r0, r1, base + len, idx, val, vs, vtype, wp, tmp);
}

/* Pass 2 for one bucket of COO entries (the common case: key low bits,
 * minor index and position in the bucket packed in one 64-bit item). One
 * read of the bucket builds every digit histogram at once; LSD passes then
 * move 8-byte items only (minor digits, then key), and one sequential pass
 * writes indices and values to their final place at *wp, which is below
 * the bucket's own region once earlier buckets lost duplicates, so no
 * second compaction pass is needed. Duplicates show up there as equal
 * neighbours and only then are summed by finish_rows. */
SP_INLINE bool finish_bucket_items(BucketScratch *t, int64_t r0, int64_t r1, int mbits, int pb, int64_t lo,
                                   int64_t len, int64_t *ptr, int64_t *idx, uint8_t *val, size_t vs,
                                   QvArrowType vtype, int64_t *wp, SegTmp *tmp) {
  int nd = (mbits + DIGIT - 1) / DIGIT, dw = nd > 0 ? (mbits + nd - 1) / nd : 1;
  switch (nd) {
    case 0: /* a single column: one digit of width 1 sorts nothing */
    case 1: return bucket_items_nd(t, 1, r0, r1, mbits, dw, pb, lo, len, ptr, idx, val, vs, vtype, wp, tmp);
    case 2: return bucket_items_nd(t, 2, r0, r1, mbits, dw, pb, lo, len, ptr, idx, val, vs, vtype, wp, tmp);
    default: return bucket_items_nd(t, 3, r0, r1, mbits, dw, pb, lo, len, ptr, idx, val, vs, vtype, wp, tmp);
  }
}

/* Pass 1 for COO entries with packed keys, 8-byte values: each bucket
 * collects its entries in a cache-resident line of 8 (index and value)
 * and writes full, aligned lines with non-temporal stores. The output
 * lines are then never read from memory before being overwritten (a plain
 * scatter reads every line it writes) and do not evict the staging area.
 * Entries before a bucket's first aligned line, and the partial last line,
 * are written directly. */
#if defined(__SSE2__)
static void scatter_coo_lines(const int64_t *coords, int M, const uint8_t *values, int64_t n, int s,
                              uint32_t mask, int mbits, int64_t nb, int64_t *cur, int64_t *idx,
                              uint64_t *val, uint64_t *stage) {
  /* stage: nb blocks of 16 words (8 indices, then 8 values), 64-aligned */
  int64_t head_end[MAX_BUCKETS];
  for (int64_t b = 0; b < nb; b++) head_end[b] = (cur[b] + 7) & ~(int64_t)7;
  for (int64_t i = 0; i < n; i++) {
    int64_t key = coords[2 * i + M], minor = coords[2 * i + 1 - M];
    int64_t b = key >> s, pos = cur[b]++;
    uint64_t packed = ((uint64_t)key & mask) << mbits | (uint64_t)minor, v;
    memcpy(&v, values + 8 * i, 8); /* the caller's values need not be aligned */
    if (pos < head_end[b]) {
      idx[pos] = (int64_t)packed;
      val[pos] = v;
      continue;
    }
    uint64_t *line = stage + 16 * b;
    line[pos & 7] = packed;
    line[8 + (pos & 7)] = v;
    if ((pos & 7) == 7) {
      __m128i *di = (__m128i *)(void *)(idx + (pos & ~(int64_t)7));
      __m128i *dv = (__m128i *)(void *)(val + (pos & ~(int64_t)7));
      const __m128i *sl = (const __m128i *)(const void *)line;
      _mm_stream_si128(di, _mm_load_si128(sl));
      _mm_stream_si128(di + 1, _mm_load_si128(sl + 1));
      _mm_stream_si128(di + 2, _mm_load_si128(sl + 2));
      _mm_stream_si128(di + 3, _mm_load_si128(sl + 3));
      _mm_stream_si128(dv, _mm_load_si128(sl + 4));
      _mm_stream_si128(dv + 1, _mm_load_si128(sl + 5));
      _mm_stream_si128(dv + 2, _mm_load_si128(sl + 6));
      _mm_stream_si128(dv + 3, _mm_load_si128(sl + 7));
    }
  }
  _mm_sfence();
  /* partial last lines */
  for (int64_t b = 0; b < nb; b++) {
    int64_t end = cur[b], from = end & ~(int64_t)7;
    if (from < head_end[b]) continue;
    for (int64_t p = from; p < end; p++) {
      idx[p] = (int64_t)stage[16 * b + (p & 7)];
      val[p] = stage[16 * b + 8 + (p & 7)];
    }
  }
}
#endif

/* ---- the same grouping on several threads (QvSparseOptions.threads)
 *
 * Partitioned counting, as ScanTrans does for a CSR transposition: the
 * source is cut into one chunk per thread (COO: equal entry ranges; CSX:
 * row ranges of about equal entry counts), each thread counts its chunk's
 * entries per bucket, and a prefix over (bucket, chunk) gives every chunk
 * its own cursor in every bucket, so pass 1 scatters with no sharing and
 * each bucket ends up holding its entries in source order, exactly as the
 * one-thread scatter leaves it. Pass 2 then hands whole buckets to the
 * threads. A transpose writes every bucket in its own region. From COO
 * pairs a bucket's place depends on the duplicates summed in the buckets
 * before it: each bucket sorts in its scratch, counts its distinct
 * (key, minor) pairs, takes its start from the bucket before it (buckets
 * are claimed in order, so that one is always already running), publishes
 * the next bucket's start and writes its entries straight to their final
 * place, summing duplicates in entry order as finish_rows does. The output
 * is the one-thread output byte for byte. */
enum { PAR_MIN_PER_THREAD = 1 << 17 };

typedef struct ParScratch {
  int64_t *sidx, *lc;
  uint8_t *sval;
  uint32_t *bhist, *bkey;
  uint64_t *stage;
} ParScratch;

typedef struct ParGroup {
  const Src *src;
  Src *chunks;     /* T */
  bool csx, counted, items;
  int T, s, mbits, pb;
  int64_t nkeys, nminor, nb, R, maxlen;
  uint32_t mask;
  uint64_t mmask;
  size_t vs;
  QvArrowType vtype;
  int64_t *bcount; /* T x nb: entries of chunk t in bucket b, then chunk t's cursor there */
  bool *bad;       /* T */
  int64_t *start;  /* nb + 1 */
  int64_t *wstart; /* nb + 1: COO, where each bucket's output starts (-1 until known) */
  int64_t next;    /* the next bucket to claim (atomic) */
  int populated;   /* threads that faulted in their part of the output (atomic) */
  ParScratch *scr; /* T */
  int64_t *ptr, *idx;
  uint8_t *val;
} ParGroup;

/* First row r of the source with sptr[r] >= e (rows 0..nsrc). */
static int64_t par_row_at(const Src *src, int64_t e) {
  int64_t lo = 0, hi = src->nsrc;
  while (lo < hi) {
    int64_t mid = lo + (hi - lo) / 2;
    if (src->sptr[mid] < e) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/* n * t / T without overflow. */
static int64_t par_split(int64_t n, int t, int T) { return n / T * t + n % T * t / T; }

static void par_count(void *ctx, size_t t) {
  ParGroup *g = ctx;
  const Src *c = &g->chunks[t];
  int64_t *bc = g->bcount + (int64_t)t * g->nb, nkeys = g->nkeys, nminor = g->nminor;
  g->bad[t] = count_buckets(c, g->csx, nkeys, nminor, g->s, bc);
}

SP_INLINE void par_scatter_vs(ParGroup *g, size_t t, size_t vs) {
  const Src *c = &g->chunks[t];
  int64_t *cur = g->bcount + (int64_t)t * g->nb, *idx = g->idx;
  uint8_t *val = g->val;
  int s = g->s, mbits = g->mbits;
  uint32_t mask = g->mask;
#if defined(__SSE2__)
  if (g->scr[t].stage != NULL) {
    scatter_coo_lines(c->coords, c->M, c->values, c->n, s, mask, mbits, g->nb, cur, idx,
                      (uint64_t *)(void *)val, g->scr[t].stage);
    return;
  }
#endif
  SP_FOR_EACH(c, g->csx, key, minor, i, {
    int64_t pos = cur[key >> s]++;
    qvi_st_bits(val + (size_t)pos * vs, vs, qvi_ld_bits(c->values + (size_t)i * vs, vs));
    idx[pos] = (int64_t)(((uint64_t)key & mask) << mbits | (uint64_t)minor);
  });
}

/* Thread t faults in its part of every output buffer before the scatter:
 * the scatter's threads write into the same huge pages at once (each
 * thread has a cursor in every bucket), and concurrent first writes of one
 * huge page each zero 2 MiB, all but one in vain. Parts own whole huge
 * pages, so the zeroing is done once and split over the threads. */
static void par_populate(void *ctx, size_t t) {
  ParGroup *g = ctx;
  void *buf[3] = {g->idx, g->val, g->ptr};
  size_t bytes[3] = {(size_t)g->src->n * 8, (size_t)g->src->n * g->vs, (size_t)(g->nkeys + 1) * 8};
  if (qvi_sp_populate_parts(buf, bytes, 3, (int)t, g->T))
    __atomic_fetch_add(&g->populated, 1, __ATOMIC_RELAXED);
}

static void par_scatter(void *ctx, size_t t) {
  ParGroup *g = ctx;
  switch (g->vs) {
    case 1: par_scatter_vs(g, t, 1); break;
    case 2: par_scatter_vs(g, t, 2); break;
    case 4: par_scatter_vs(g, t, 4); break;
    default: par_scatter_vs(g, t, 8); break;
  }
}

/* The last step of one bucket (keys r0..r1, output from lo), for the
 * one-thread and the threaded paths: its keys' starts (into ptr, unless the
 * caller counted them there already), then each of its len entries, in
 * order, at the next place of its key. Entry j is ai[j]/av[j] with its
 * key's low bits in al[j], or, when packed (a constant at each call), in
 * ai[j] above the mbits minor bits. */
SP_INLINE void place_bucket(bool packed, const int64_t *ai, const uint32_t *al, const uint8_t *av,
                            int64_t len, int64_t lo, int64_t r0, int64_t r1, bool counted, int mbits,
                            uint64_t mmask, int64_t *lc, int64_t *ptr, int64_t *idx, uint8_t *val,
                            size_t vs) {
#define SP_LOW(J) (packed ? (int64_t)((uint64_t)ai[J] >> mbits) : (int64_t)al[J])
  if (!counted) {
    memset(lc, 0, (size_t)(r1 - r0 + 1) * 8);
    for (int64_t j = 0; j < len; j++) lc[SP_LOW(j) + 1]++;
    lc[0] = lo;
    for (int64_t r = r0; r < r1; r++) {
      lc[r - r0 + 1] += lc[r - r0];
      ptr[r] = lc[r - r0];
    }
  } else {
    memcpy(lc, ptr + r0, (size_t)(r1 - r0) * 8);
  }
  for (int64_t j = 0; j < len; j++) {
    int64_t pos = lc[SP_LOW(j)]++;
    idx[pos] = (int64_t)((uint64_t)ai[j] & mmask);
    qvi_st_bits(val + (size_t)pos * vs, vs, qvi_ld_bits(av + (size_t)j * vs, vs));
  }
#undef SP_LOW
}

/* Pass 2 of one transpose bucket (its rows arrive in source order, so each
 * key's minors come out increasing): keys' starts, then the entries. */
SP_INLINE void par_csx_bucket(ParGroup *g, ParScratch *sc, int64_t b, size_t vs) {
  int64_t r0 = b << g->s, r1 = r0 + g->R < g->nkeys ? r0 + g->R : g->nkeys;
  int64_t lo = g->start[b], len = g->start[b + 1] - lo;
  int64_t *ai = sc->sidx, *lc = sc->lc, *ptr = g->ptr, *idx = g->idx;
  uint8_t *av = sc->sval, *val = g->val;
  int mbits = g->mbits;
  uint64_t mmask = g->mmask;
  memcpy(ai, idx + lo, (size_t)len * 8);
  memcpy(av, val + (size_t)lo * vs, (size_t)len * vs);
  place_bucket(true, ai, NULL, av, len, lo, r0, r1, g->counted, mbits, mmask, lc, ptr, idx, val, vs);
}

/* The start of bucket b's output, once the bucket before it has counted. */
static int64_t par_wait_start(int64_t *wstart, int64_t b) {
  int64_t v;
  unsigned spins = 0;
  while ((v = __atomic_load_n(&wstart[b], __ATOMIC_ACQUIRE)) < 0)
    if (++spins > 64) sched_yield();
  return v;
}

/* Pass 2 of one COO bucket of packed items (bucket_items_nd's sort, then
 * the write to the place the earlier buckets leave). */
SP_INLINE void par_items_nd(ParGroup *g, ParScratch *sc, const int ND, int dw, int64_t b, size_t vs) {
  int64_t r0 = b << g->s, r1 = r0 + g->R < g->nkeys ? r0 + g->R : g->nkeys;
  int64_t lo = g->start[b], len = g->start[b + 1] - lo;
  int mbits = g->mbits, pb = g->pb;
  uint64_t pmask = ((uint64_t)1 << pb) - 1, mmask = ((uint64_t)1 << mbits) - 1;
  int64_t nk = r1 - r0;
  uint32_t *kc = sc->bkey;
  uint8_t *tv = sc->sval;
  int64_t *ptr = g->ptr, *idx = g->idx;
  uint8_t *val = g->val;
  const uint64_t *bb =
      sort_bucket_items((const uint64_t *)idx + lo, val + (size_t)lo * vs, len, ND, dw, pb, mbits, nk,
                        sc->bhist, kc, (uint64_t *)sc->sidx, (uint64_t *)(sc->sidx + g->maxlen), tv, vs);
  /* the bucket's entries are all in scratch now: count, then take a place */
  int64_t distinct = 0;
  uint64_t prev = ~(uint64_t)0;
  for (int64_t j = 0; j < len; j++) {
    uint64_t kv = bb[j] >> pb;
    distinct += kv != prev;
    prev = kv;
  }
  int64_t base = par_wait_start(g->wstart, b);
  __atomic_store_n(&g->wstart[b + 1], base + distinct, __ATOMIC_RELEASE);
  int64_t *out = idx + base;
  uint8_t *vout = val + (size_t)base * vs;
  if (distinct == len) {
    /* kc[k] is now the end of key k in the bucket */
    for (int64_t k = 0; k < nk; k++) ptr[r0 + k] = base + (k > 0 ? kc[k - 1] : 0);
    for (int64_t j = 0; j < len; j++) {
      uint64_t it = bb[j];
      out[j] = (int64_t)((it >> pb) & mmask);
      qvi_st_bits(vout + (size_t)j * vs, vs, qvi_ld_bits(tv + (size_t)(it & pmask) * vs, vs));
    }
    return;
  }
  int64_t w = 0, krow = 0;
  prev = ~(uint64_t)0;
  for (int64_t j = 0; j < len; j++) {
    uint64_t it = bb[j], kv = it >> pb;
    const uint8_t *v = tv + (size_t)(it & pmask) * vs;
    if (kv == prev) {
      qvi_sp_value_add(g->vtype, vout + (size_t)(w - 1) * vs, v);
      continue;
    }
    prev = kv;
    int64_t key = (int64_t)(kv >> mbits);
    while (krow <= key) ptr[r0 + krow++] = base + w;
    out[w] = (int64_t)(kv & mmask);
    qvi_st_bits(vout + (size_t)w * vs, vs, qvi_ld_bits(v, vs));
    w++;
  }
  while (krow < nk) ptr[r0 + krow++] = base + w;
}

SP_INLINE void par_finish_vs(ParGroup *g, ParScratch *sc, size_t vs) {
  int nd = (g->mbits + DIGIT - 1) / DIGIT, dw = nd > 0 ? (g->mbits + nd - 1) / nd : 1;
  for (;;) {
    int64_t b = __atomic_fetch_add(&g->next, 1, __ATOMIC_RELAXED);
    if (b >= g->nb) return;
    if (g->csx) par_csx_bucket(g, sc, b, vs);
    else if (nd <= 1) par_items_nd(g, sc, 1, dw, b, vs);
    else if (nd == 2) par_items_nd(g, sc, 2, dw, b, vs);
    else par_items_nd(g, sc, 3, dw, b, vs);
  }
}

static void par_finish(void *ctx, size_t t) {
  ParGroup *g = ctx;
  ParScratch *sc = &g->scr[t];
  switch (g->vs) {
    case 1: par_finish_vs(g, sc, 1); break;
    case 2: par_finish_vs(g, sc, 2); break;
    case 4: par_finish_vs(g, sc, 4); break;
    default: par_finish_vs(g, sc, 8); break;
  }
}

static void par_free(ParGroup *g) {
  for (int t = 0; g->scr != NULL && t < g->T; t++) {
    ParScratch *sc = &g->scr[t];
    qvi_sp_free(sc->sidx);
    qvi_sp_free(sc->lc);
    qvi_sp_free(sc->sval);
    qvi_sp_free(sc->bhist);
    qvi_sp_free(sc->bkey);
    qvi_sp_free(sc->stage);
  }
  qvi_sp_free(g->scr);
  qvi_sp_free(g->chunks);
  qvi_sp_free(g->bcount);
  qvi_sp_free(g->bad);
  qvi_sp_free(g->start);
  qvi_sp_free(g->wstart);
}

/* The packed bucketed grouping on the pool: 1 done, 0 failed (*wp = -2 for
 * an entry out of range), -1 when this grouping needs the one-thread path
 * (COO buckets too large for packed items). Allocation happens on the
 * calling thread, so a workspace serves every buffer. */
static int group_par(const Src *src, bool csx, bool counted, int64_t nkeys, int64_t nminor, int64_t *ptr,
                     int64_t *idx, uint8_t *val, size_t vs, QvArrowType vtype, int64_t *wp, QvPool *pool) {
  ParGroup g;
  memset(&g, 0, sizeof g);
  g.src = src;
  g.csx = csx;
  g.counted = counted;
  g.nkeys = nkeys;
  g.nminor = nminor;
  g.vs = vs;
  g.vtype = vtype;
  g.ptr = ptr;
  g.idx = idx;
  g.val = val;
  while (((nkeys - 1) >> g.s) >= MAX_BUCKETS) g.s++;
  while (g.mbits < 63 && ((uint64_t)(nminor - 1) >> g.mbits) != 0) g.mbits++;
  if (!csx && (g.s > 16 || g.mbits > 3 * DIGIT)) return -1;
  g.nb = ((nkeys - 1) >> g.s) + 1;
  g.R = (int64_t)1 << g.s;
  g.mask = (uint32_t)(g.R - 1);
  g.mmask = (UINT64_C(1) << g.mbits) - 1;
  int T = qvi_pool_threads(pool);
  if (src->n / PAR_MIN_PER_THREAD < T) T = (int)(src->n / PAR_MIN_PER_THREAD);
  g.T = T;
  g.chunks = qvi_sp_malloc(T, sizeof(Src));
  g.bcount = qvi_sp_calloc((int64_t)T * g.nb, 8);
  g.bad = qvi_sp_calloc(T, sizeof(bool));
  g.start = qvi_sp_malloc(g.nb + 1, 8);
  g.wstart = qvi_sp_malloc(g.nb + 1, 8);
  g.scr = qvi_sp_calloc(T, sizeof(ParScratch));
  if (!g.chunks || !g.bcount || !g.bad || !g.start || !g.wstart || !g.scr) {
    par_free(&g);
    return 0;
  }
  bool row_cut = false;
  for (int t = 0; t < T; t++) {
    Src c = *src;
    if (csx) {
      /* equal ranges of entries, as ScanTrans splits: a row may be cut
       * between two threads (one dense row is shared, not one thread's).
       * Each bucket still holds its entries in source order, the first
       * part of a cut row before the second, so the bytes do not change. */
      int64_t e0 = src->kbeg + par_split(src->n, t, T), e1 = src->kbeg + par_split(src->n, t + 1, T);
      int64_t rlo = par_row_at(src, e0 + 1) - 1; /* the row holding entry e0 */
      int64_t rhi = par_row_at(src, e1);         /* past the row holding entry e1 - 1 */
      if (rlo < 0) rlo = 0;
      row_cut |= t > 0 && src->sptr[rlo] < e0;
      c.sptr = src->sptr + rlo;
      c.nsrc = rhi - rlo;
      c.row0 = src->row0 + rlo;
      c.kbeg = e0;
      c.kend = e1;
      c.n = e1 - e0;
    } else {
      int64_t i0 = par_split(src->n, t, T), i1 = par_split(src->n, t + 1, T);
      c.coords = src->coords + 2 * i0;
      c.values = src->values + (size_t)i0 * vs;
      c.n = i1 - i0;
    }
    g.chunks[t] = c;
  }
  /* pass 0: per chunk and bucket */
  qvi_pool_run(pool, (size_t)T, par_count, &g);
  bool bad = false;
  for (int t = 0; t < T; t++) bad |= g.bad[t];
  if (bad && !counted) {
    par_free(&g);
    *wp = -2;
    return 0;
  }
  if (counted)
    for (int64_t k = 0; k < nkeys; k++) ptr[k + 1] += ptr[k];
  int64_t acc = 0;
  for (int64_t b = 0; b < g.nb; b++) {
    g.start[b] = acc;
    for (int t = 0; t < T; t++) {
      int64_t c = g.bcount[(int64_t)t * g.nb + b];
      g.bcount[(int64_t)t * g.nb + b] = acc;
      acc += c;
    }
    if (acc - g.start[b] > g.maxlen) g.maxlen = acc - g.start[b];
  }
  g.start[g.nb] = acc;
  while (g.pb < 63 && ((uint64_t)(g.maxlen > 0 ? g.maxlen - 1 : 0) >> g.pb) != 0) g.pb++;
  if (!csx && !(g.pb <= 31 && g.s + g.mbits + g.pb <= 64)) {
    /* the caller's one-thread path counts again: undo the counted prefix */
    if (counted)
      for (int64_t k = nkeys; k > 0; k--) ptr[k] -= ptr[k - 1];
    par_free(&g);
    return -1;
  }
  g.items = !csx;
  bool ok = true;
  for (int t = 0; t < T && ok; t++) {
    ParScratch *sc = &g.scr[t];
    sc->sidx = qvi_sp_malloc(2 * g.maxlen, 8);
    sc->sval = qvi_sp_malloc(g.maxlen, vs);
    sc->lc = csx ? qvi_sp_malloc(g.R + 1, 8) : NULL;
    sc->bhist = csx ? NULL : qvi_sp_malloc(3 << DIGIT, 4);
    sc->bkey = csx ? NULL : qvi_sp_malloc(g.R, 4);
#if defined(__SSE2__)
    sc->stage = !csx && vs == 8 ? qvi_sp_malloc(16 * g.nb, 8) : NULL;
    ok = !(!csx && vs == 8 && sc->stage == NULL);
#endif
    ok = ok && sc->sidx && sc->sval && (csx ? sc->lc != NULL : sc->bhist && sc->bkey);
  }
  if (!ok) {
    par_free(&g);
    return 0;
  }
  qvi_pool_run(pool, (size_t)T, par_populate, &g);
  if (g.populated > 0) qvi_path_hit(QV_PATH_SPARSE_POPULATED);
  /* pass 1: every chunk into its cursors */
  qvi_pool_run(pool, (size_t)T, par_scatter, &g);
  /* pass 2: buckets claimed in order */
  for (int64_t b = 0; b <= g.nb; b++) g.wstart[b] = b == 0 ? 0 : -1;
  g.next = 0;
  qvi_pool_run(pool, (size_t)T, par_finish, &g);
  *wp = csx ? src->n : g.wstart[g.nb];
  par_free(&g);
  qvi_path_hit(QV_PATH_SPARSE_THREADS);
  if (row_cut) qvi_path_hit(QV_PATH_SPARSE_ROW_CUT);
  return 1;
}

SP_INLINE bool group_bucketed(const Src *src, bool csx, bool counted, bool packed, int64_t nkeys,
                              int64_t nminor, int64_t *ptr, int64_t *idx, uint8_t *val, size_t vs,
                              QvArrowType vtype, int64_t *wp, QvPool *pool) {
  if (packed && qvi_pool_threads(pool) > 1 && src->n >= PAR_MIN_PER_THREAD * 2) {
    int r = group_par(src, csx, counted, nkeys, nminor, ptr, idx, val, vs, vtype, wp, pool);
    if (r >= 0) return r == 1;
  }
  int s = 0;
  while (((nkeys - 1) >> s) >= MAX_BUCKETS) s++;
  int64_t nb = ((nkeys - 1) >> s) + 1, R = (int64_t)1 << s, n = src->n;
  int64_t cur[MAX_BUCKETS + 1], start[MAX_BUCKETS + 1], maxlen = 0;
  if (counted) {
    for (int64_t k = 0; k < nkeys; k++) ptr[k + 1] += ptr[k];
    for (int64_t b = 0; b < nb; b++) start[b] = ptr[b << s];
  } else {
    int64_t bc[MAX_BUCKETS + 1] = {0};
    if (count_buckets(src, csx, nkeys, nminor, s, bc)) {
      *wp = -2;
      return false;
    }
    int64_t acc = 0;
    for (int64_t b = 0; b < nb; b++) {
      start[b] = acc;
      acc += bc[b];
    }
  }
  start[nb] = n;
  for (int64_t b = 0; b < nb; b++) {
    cur[b] = start[b];
    if (start[b + 1] - start[b] > maxlen) maxlen = start[b + 1] - start[b];
  }
  int mbits = 0;
  while (mbits < 63 && ((uint64_t)(nminor - 1) >> mbits) != 0) mbits++;
  uint64_t mmask = packed ? (UINT64_C(1) << mbits) - 1 : UINT64_MAX;
  /* minor digits to sort by (COO input only; a transpose is sorted) */
  int npass = csx ? 0 : (mbits + DIGIT - 1) / DIGIT;
  uint32_t *low = packed ? NULL : qvi_sp_malloc(n, 4);
  uint32_t *slow = packed ? NULL : qvi_sp_malloc(2 * maxlen, 4);
  /* COO with packed keys: per-bucket passes on (key, minor, position) items */
  int pb = 0;
  while (pb < 63 && ((uint64_t)(maxlen > 0 ? maxlen - 1 : 0) >> pb) != 0) pb++;
  /* 32-bit counts, at most 3 minor digits of <= DIGIT bits */
  bool items = !csx && packed && s <= 16 && pb <= 31 && mbits <= 3 * DIGIT && s + mbits + pb <= 64;
  int64_t *cnt = qvi_sp_malloc(1 << DIGIT, 8);
  uint32_t *bhist = items ? qvi_sp_malloc(3 << DIGIT, 4) : NULL, *bkey = items ? qvi_sp_malloc(R, 4) : NULL;
  items = items && bhist != NULL && bkey != NULL;
  int64_t *sidx = qvi_sp_malloc(2 * maxlen, 8), *lc = qvi_sp_malloc(R + 1, 8);
  uint8_t *sval = qvi_sp_malloc(2 * maxlen, vs);
  bool ok = (packed || (low && slow)) && cnt && sidx && lc && sval;
  SegTmp tmp = {NULL, NULL, 0};
  BucketScratch bs = {(uint64_t *)sidx, (uint64_t *)(sidx + maxlen), sval, bhist, bkey};
  if (ok) {
    uint32_t mask = (uint32_t)(R - 1);
#if defined(__SSE2__)
    uint64_t *stage = items && vs == 8 ? qvi_sp_malloc(16 * nb, 8) : NULL;
    if (stage != NULL) {
      scatter_coo_lines(src->coords, src->M, src->values, n, s, mask, mbits, nb,
                        cur, idx, (uint64_t *)(void *)val, stage);
      qvi_sp_free(stage);
    } else
#endif
    SP_FOR_EACH(src, csx, key, minor, i, {
      int64_t pos = cur[key >> s]++;
      qvi_st_bits(val + (size_t)pos * vs, vs, qvi_ld_bits(src->values + (size_t)i * vs, vs));
      if (packed) {
        idx[pos] = (int64_t)(((uint64_t)key & mask) << mbits | (uint64_t)minor);
      } else {
        idx[pos] = minor;
        low[pos] = (uint32_t)key & mask;
      }
    });
    for (int64_t b = 0; b < nb && ok; b++) {
      int64_t r0 = b << s, r1 = r0 + R < nkeys ? r0 + R : nkeys;
      int64_t lo = start[b], len = start[b + 1] - lo;
      if (items) {
        ok = finish_bucket_items(&bs, r0, r1, mbits, pb, lo, len, ptr, idx, val, vs, vtype, wp, &tmp);
        continue;
      }
      /* two scratch halves: A = [0, maxlen), B = [maxlen, 2 * maxlen) */
      int64_t *ai = sidx, *bi = sidx + maxlen;
      uint8_t *av = sval, *bv = sval + (size_t)maxlen * vs;
      uint32_t *al = packed ? NULL : slow, *bl = packed ? NULL : slow + maxlen;
      if (npass == 0) {
        memcpy(ai, idx + lo, (size_t)len * 8);
        memcpy(av, val + (size_t)lo * vs, (size_t)len * vs);
        if (!packed) memcpy(al, low + lo, (size_t)len * 4);
      }
      for (int p = 0; p < npass; p++) {
        /* the first pass reads the bucket where pass 1 left it */
        if (p == 0)
          digit_pass(idx + lo, val + (size_t)lo * vs, packed ? NULL : low + lo, ai, av, al, len, mmask, 0, cnt,
                     vs, packed);
        else
          digit_pass(ai, av, al, bi, bv, bl, len, mmask, p * DIGIT, cnt, vs, packed);
        if (p == 0) continue;
        int64_t *ti = ai;
        ai = bi;
        bi = ti;
        uint8_t *tv = av;
        av = bv;
        bv = tv;
        uint32_t *tl = al;
        al = bl;
        bl = tl;
      }
      place_bucket(packed, ai, al, av, len, lo, r0, r1, counted, mbits, mmask, lc, ptr, idx, val, vs);
      if (!csx) ok = finish_range(ptr, r0, r1, lo + len, idx, val, vs, vtype, wp, &tmp);
    }
  }
  qvi_sp_free(tmp.keys);
  qvi_sp_free(tmp.vals);
  qvi_sp_free(bhist);
  qvi_sp_free(bkey);
  qvi_sp_free(low);
  qvi_sp_free(cnt);
  qvi_sp_free(sidx);
  qvi_sp_free(lc);
  qvi_sp_free(sval);
  qvi_sp_free(slow);
  return ok;
}

/* Below these sizes the direct scatter's working set fits in the cache. */
static bool use_buckets(int64_t n, int64_t nkeys) { return n >= (1 << 18) && nkeys > 4096; }

SP_INLINE int64_t group(const Src *src, bool csx, bool in_order, bool counted, int64_t nkeys,
                        int64_t nminor, int64_t *ptr, int64_t *idx, uint8_t *val, size_t vs,
                        QvArrowType vtype) {
  int64_t w = 0;
  bool ok;
  if (!in_order && use_buckets(src->n, nkeys)) {
    qvi_path_hit(QV_PATH_GROUP_BUCKETED);
    int s = 0, mbits = 0;
    while (((nkeys - 1) >> s) >= MAX_BUCKETS) s++;
    while (mbits < 63 && ((uint64_t)(nminor - 1) >> mbits) != 0) mbits++;
    if (s + mbits <= 63)
      ok = group_bucketed(src, csx, counted, true, nkeys, nminor, ptr, idx, val, vs, vtype, &w,
                          qvi_sp_pool_current());
    else
      ok = group_bucketed(src, csx, counted, false, nkeys, nminor, ptr, idx, val, vs, vtype, &w, NULL);
  } else {
    /* key counts (unless the caller has them in ptr[key + 1]), then
     * starts: ptr[k] = first position of key k */
    bool bad = false;
    if (!counted)
      SP_FOR_EACH(src, csx, key, minor, i, {
        (void)i;
        bool in = (uint64_t)key < (uint64_t)nkeys && (csx || (uint64_t)minor < (uint64_t)nminor);
        bad |= !in;
        ptr[in ? key + 1 : 0] += in;
      });
    if (bad) return -2;
    for (int64_t k = 0; k < nkeys; k++) ptr[k + 1] += ptr[k];
    ok = group_direct(src, csx, nkeys, ptr, idx, val, vs);
    if (ok && !csx) {
      SegTmp tmp = {NULL, NULL, 0};
      ok = finish_rows(ptr, 0, nkeys, ptr[nkeys], idx, val, vs, vtype, &w, &tmp);
      qvi_sp_free(tmp.keys);
      qvi_sp_free(tmp.vals);
    }
  }
  if (!ok) return w == -2 ? -2 : -1;
  if (csx) { /* a transpose keeps every entry, already sorted */
    ptr[nkeys] = src->n;
    return src->n;
  }
  ptr[nkeys] = w;
  return w;
}

int64_t qvi_sp_group_coo(const int64_t *coords, const uint8_t *values, int64_t n, int M, int64_t nkeys,
                     int64_t nminor, size_t vs, QvArrowType vtype, bool in_order, int64_t *ptr,
                     int64_t *idx, uint8_t *val) {
  Src src = {coords, M, NULL, NULL, 0, values, n, 0, 0, 0};
  switch (vs) {
    case 1: return group(&src, false, in_order, false, nkeys, nminor, ptr, idx, val, 1, vtype);
    case 2: return group(&src, false, in_order, false, nkeys, nminor, ptr, idx, val, 2, vtype);
    case 4: return group(&src, false, in_order, false, nkeys, nminor, ptr, idx, val, 4, vtype);
    default: return group(&src, false, in_order, false, nkeys, nminor, ptr, idx, val, 8, vtype);
  }
}

int64_t qvi_sp_group_csx(const int64_t *sptr, const int64_t *sidx, const uint8_t *values, int64_t nsrc,
                     int64_t nkeys, size_t vs, bool counted, int64_t *ptr, int64_t *idx, uint8_t *val) {
  Src src = {NULL, 0, sptr, sidx, nsrc, values, sptr[nsrc], 0, sptr[0], sptr[nsrc]};
  switch (vs) {
    case 1: return group(&src, true, false, counted, nkeys, nsrc, ptr, idx, val, 1, QV_ARROW_UINT8);
    case 2: return group(&src, true, false, counted, nkeys, nsrc, ptr, idx, val, 2, QV_ARROW_UINT16);
    case 4: return group(&src, true, false, counted, nkeys, nsrc, ptr, idx, val, 4, QV_ARROW_UINT32);
    default: return group(&src, true, false, counted, nkeys, nsrc, ptr, idx, val, 8, QV_ARROW_UINT64);
  }
}

/* ---- sorting and summing within the segments of CSX arrays (the
 * canonicalisation of a CSR/CSC whose rows are unsorted or repeat) */

#define SUM_MAX_PARTS 64

typedef struct SumRows {
  int64_t *ptr, *idx;
  uint8_t *val;
  QvArrowType vtype;
  size_t vs;
  int64_t r[SUM_MAX_PARTS + 1]; /* part p: rows [r[p], r[p + 1]) */
  int64_t end[SUM_MAX_PARTS];   /* the old end of its last row */
  int64_t w[SUM_MAX_PARTS];     /* where its compacted entries end */
  bool ok[SUM_MAX_PARTS];
} SumRows;

SP_INLINE bool sum_part_vs(SumRows *j, size_t p, size_t vs) {
  SegTmp tmp = {NULL, NULL, 0};
  j->w[p] = j->ptr[j->r[p]];
  bool ok = finish_rows(j->ptr, j->r[p], j->r[p + 1], j->end[p], j->idx, j->val, vs, j->vtype, &j->w[p],
                        &tmp);
  qvi_sp_free(tmp.keys);
  qvi_sp_free(tmp.vals);
  return ok;
}

static void sum_part(void *ctx, size_t p) {
  SumRows *j = ctx;
  switch (j->vs) {
    case 1: j->ok[p] = sum_part_vs(j, p, 1); break;
    case 2: j->ok[p] = sum_part_vs(j, p, 2); break;
    case 4: j->ok[p] = sum_part_vs(j, p, 4); break;
    default: j->ok[p] = sum_part_vs(j, p, 8); break;
  }
}

int64_t qvi_sp_csx_sum_rows(int64_t *ptr, int64_t nmajor, int64_t *idx, uint8_t *val,
                            QvArrowType vtype) {
  SumRows j = {.ptr = ptr, .idx = idx, .val = val, .vtype = vtype, .vs = qv_arrow_type_size(vtype)};
  int64_t nnz = ptr[nmajor];
  QvPool *pool = qvi_sp_pool_current();
  int threads = qvi_pool_threads(pool);
  /* a few parts a thread, so a thread that starts late still gets work */
  int64_t parts = threads > 1 && nnz >= SP_MIN_THREADED_NNZ && nmajor > 1 ? (int64_t)threads * 4 : 1;
  if (parts > SUM_MAX_PARTS) parts = SUM_MAX_PARTS;
  if (parts > nmajor) parts = nmajor > 0 ? nmajor : 1;
  /* parts of about nnz / parts entries each: part p starts at the first
   * row whose indptr reaches p * nnz / parts */
  j.r[0] = 0;
  j.r[parts] = nmajor;
  for (int64_t p = 1; p < parts; p++) {
    int64_t k = nnz / parts * p + nnz % parts * p / parts, lo = j.r[p - 1], hi = nmajor;
    while (lo < hi) {
      int64_t mid = lo + (hi - lo) / 2;
      if (ptr[mid] < k)
        lo = mid + 1;
      else
        hi = mid;
    }
    j.r[p] = lo;
  }
  for (int64_t p = 0; p < parts; p++) j.end[p] = ptr[j.r[p + 1]];
  if (parts > 1) {
    qvi_pool_run(pool, (size_t)parts, sum_part, &j);
    qvi_path_hit(QV_PATH_SPARSE_THREADS);
  } else {
    sum_part(&j, 0);
  }
  /* each part compacted within its own entries: move them down, in order */
  int64_t w = 0;
  for (int64_t p = 0; p < parts; p++) {
    if (!j.ok[p]) return -1;
    int64_t lo = ptr[j.r[p]], n = j.w[p] - lo, shift = lo - w;
    if (shift != 0 && n > 0) {
      memmove(idx + w, idx + lo, (size_t)n * 8);
      memmove(val + (size_t)w * j.vs, val + (size_t)lo * j.vs, (size_t)n * j.vs);
    }
    if (shift != 0)
      for (int64_t r = j.r[p]; r < j.r[p + 1]; r++) ptr[r] -= shift;
    w += n;
  }
  ptr[nmajor] = w;
  return w;
}
