/* Grouping entries by a key (the major index of a CSR/CSC output): a
 * stable counting sort from COO pairs (rows then sorted, duplicates summed
 * in entry order) or from the other CSX orientation (a transpose). Small
 * inputs scatter directly and sort rows afterwards; large ones go through
 * cache-sized buckets (see group_bucketed). */
#include <stdlib.h>

#include "sparse/sparse_internal.h"

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
      uint64_t v = sp_load_bits(val + (size_t)i * vs, vs);
      int64_t j = i;
      while (j > 0 && idx[j - 1] > k) {
        idx[j] = idx[j - 1];
        sp_store_bits(val + (size_t)j * vs, vs, sp_load_bits(val + (size_t)(j - 1) * vs, vs));
        j--;
      }
      idx[j] = k;
      sp_store_bits(val + (size_t)j * vs, vs, v);
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
 * duplicates and compacts to *w, rewriting ptr[r0..r1-1] (ptr[r1] is still
 * the old end of row r1 - 1; the caller sets ptr[nmajor] last). False on
 * allocation failure. */
SP_INLINE bool finish_rows(int64_t *ptr, int64_t r0, int64_t r1, int64_t *idx, uint8_t *val,
                           size_t vs, QvValueType vtype, int64_t *wp, SegTmp *tmp) {
  int64_t w = *wp, lo = ptr[r0];
  for (int64_t r = r0; r < r1; r++) {
    int64_t hi = ptr[r + 1];
    int64_t n = hi - lo;
    bool sorted = true, dup = false;
    for (int64_t k = lo + 1; k < hi; k++) {
      if (idx[k] < idx[k - 1]) sorted = false;
      if (idx[k] == idx[k - 1]) dup = true;
    }
    if (!sorted) {
      if (n > 32 && n > tmp->cap) {
        sp_free(tmp->keys);
        sp_free(tmp->vals);
        tmp->keys = sp_malloc(n, 32); /* (key, pos) pairs, twice */
        tmp->vals = sp_malloc(n, vs);
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
          sp_value_add(vtype, val + (size_t)(w - 1) * vs, val + (size_t)k * vs);
        } else {
          idx[w] = idx[k];
          sp_store_bits(val + (size_t)w * vs, vs, sp_load_bits(val + (size_t)k * vs, vs));
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
SP_INLINE bool finish_range(int64_t *ptr, int64_t r0, int64_t r1, int64_t *idx, uint8_t *val,
                            size_t vs, QvValueType vtype, int64_t *wp, SegTmp *tmp) {
  int64_t lo = ptr[r0], hi = ptr[r1];
  bool clean = true;
  for (int64_t r = r0; r < r1 && clean; r++)
    for (int64_t k = ptr[r] + 1; k < ptr[r + 1]; k++) clean &= idx[k] > idx[k - 1];
  if (!clean) return finish_rows(ptr, r0, r1, idx, val, vs, vtype, wp, tmp);
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
} Src;

#define SP_FOR_EACH(src, CSX, KEY, MINOR, I, BODY)                           \
  do {                                                                        \
    if (CSX) {                                                                \
      const int64_t *sp_ = (src)->sptr, *si_ = (src)->sidx;                   \
      int64_t lo_ = sp_[0];                                                   \
      for (int64_t r_ = 0; r_ < (src)->nsrc; r_++) {                          \
        int64_t hi_ = sp_[r_ + 1]; /* local: stores below may alias */        \
        for (int64_t k_ = lo_; k_ < hi_; k_++) {                              \
          int64_t KEY = si_[k_], MINOR = r_, I = k_;                          \
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

/* Small inputs: one stable scatter with a cursor per key. */
SP_INLINE bool group_direct(const Src *src, bool csx, int64_t nkeys, int64_t *ptr, int64_t *idx,
                            uint8_t *val, size_t vs) {
  int64_t *cur = sp_malloc(nkeys, 8);
  if (cur == NULL) return false;
  if (nkeys > 0) memcpy(cur, ptr, (size_t)nkeys * 8);
  SP_FOR_EACH(src, csx, key, minor, i, {
    int64_t pos = cur[key]++;
    idx[pos] = minor;
    sp_store_bits(val + (size_t)pos * vs, vs, sp_load_bits(src->values + (size_t)i * vs, vs));
  });
  sp_free(cur);
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
enum { DIGIT = 11 };

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
    sp_store_bits(bv + (size_t)pos * vs, vs, sp_load_bits(av + (size_t)j * vs, vs));
    if (!packed) bl[pos] = al[j];
  }
}

SP_INLINE bool group_bucketed(const Src *src, bool csx, bool counted, bool packed, int64_t nkeys,
                              int64_t nminor, int64_t *ptr, int64_t *idx, uint8_t *val, size_t vs,
                              QvValueType vtype, int64_t *wp) {
  enum { MAXB = 512 };
  int s = 0;
  while (((nkeys - 1) >> s) >= MAXB) s++;
  int64_t nb = ((nkeys - 1) >> s) + 1, R = (int64_t)1 << s, n = src->n;
  int64_t cur[MAXB + 1], start[MAXB + 1], maxlen = 0;
  if (counted) {
    for (int64_t k = 0; k < nkeys; k++) ptr[k + 1] += ptr[k];
    for (int64_t b = 0; b < nb; b++) start[b] = ptr[b << s];
  } else {
    int64_t bc[MAXB + 1] = {0};
    bool bad = false;
    SP_FOR_EACH(src, csx, key, minor, i, {
      (void)i;
      bool in = (uint64_t)key < (uint64_t)nkeys && (uint64_t)minor < (uint64_t)nminor;
      bad |= !in;
      bc[in ? key >> s : 0] += in;
    });
    if (bad) {
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
  uint32_t *low = packed ? NULL : sp_malloc(n, 4);
  uint32_t *slow = packed ? NULL : sp_malloc(2 * maxlen, 4);
  int64_t *cnt = sp_malloc(1 << DIGIT, 8);
  int64_t *sidx = sp_malloc(2 * maxlen, 8), *lc = sp_malloc(R + 1, 8);
  uint8_t *sval = sp_malloc(2 * maxlen, vs);
  bool ok = (packed || (low && slow)) && cnt && sidx && lc && sval;
  SegTmp tmp = {NULL, NULL, 0};
  if (ok) {
    uint32_t mask = (uint32_t)(R - 1);
    SP_FOR_EACH(src, csx, key, minor, i, {
      int64_t pos = cur[key >> s]++;
      sp_store_bits(val + (size_t)pos * vs, vs, sp_load_bits(src->values + (size_t)i * vs, vs));
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
#define SP_LOW(J) (packed ? (int64_t)((uint64_t)ai[J] >> mbits) : (int64_t)al[J])
      /* key starts of this bucket (when not counted by the caller) */
      if (!counted) {
        memset(lc, 0, (size_t)(r1 - r0 + 1) * 8);
        for (int64_t j = 0; j < len; j++) lc[SP_LOW(j) + 1]++;
        lc[0] = lo;
        for (int64_t r = r0; r < r1; r++) {
          lc[r - r0 + 1] += lc[r - r0];
          ptr[r] = lc[r - r0];
        }
        ptr[r1] = lo + len;
      } else {
        memcpy(lc, ptr + r0, (size_t)(r1 - r0) * 8);
      }
      for (int64_t j = 0; j < len; j++) {
        int64_t pos = lc[SP_LOW(j)]++;
        idx[pos] = (int64_t)((uint64_t)ai[j] & mmask);
        sp_store_bits(val + (size_t)pos * vs, vs, sp_load_bits(av + (size_t)j * vs, vs));
      }
#undef SP_LOW
      if (!csx) ok = finish_range(ptr, r0, r1, idx, val, vs, vtype, wp, &tmp);
    }
  }
  sp_free(tmp.keys);
  sp_free(tmp.vals);
  sp_free(low);
  sp_free(cnt);
  sp_free(sidx);
  sp_free(lc);
  sp_free(sval);
  sp_free(slow);
  return ok;
}

/* Below these sizes the direct scatter's working set fits in the cache. */
static bool use_buckets(int64_t n, int64_t nkeys) { return n >= (1 << 18) && nkeys > 4096; }

SP_INLINE int64_t group(const Src *src, bool csx, bool in_order, bool counted, int64_t nkeys,
                        int64_t nminor, int64_t *ptr, int64_t *idx, uint8_t *val, size_t vs,
                        QvValueType vtype) {
  int64_t w = 0;
  bool ok;
  if (!in_order && use_buckets(src->n, nkeys)) {
    int s = 0, mbits = 0;
    while (((nkeys - 1) >> s) >= 512) s++;
    while (mbits < 63 && ((uint64_t)(nminor - 1) >> mbits) != 0) mbits++;
    if (s + mbits <= 63)
      ok = group_bucketed(src, csx, counted, true, nkeys, nminor, ptr, idx, val, vs, vtype, &w);
    else
      ok = group_bucketed(src, csx, counted, false, nkeys, nminor, ptr, idx, val, vs, vtype, &w);
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
      ok = finish_rows(ptr, 0, nkeys, idx, val, vs, vtype, &w, &tmp);
      sp_free(tmp.keys);
      sp_free(tmp.vals);
    }
  }
  if (!ok) return w == -2 ? -2 : -1;
  if (csx) return src->n; /* a transpose keeps every entry, already sorted */
  ptr[nkeys] = w;
  return w;
}

int64_t sp_group_coo(const int64_t *coords, const uint8_t *values, int64_t n, int M, int64_t nkeys,
                     int64_t nminor, size_t vs, QvValueType vtype, bool in_order, int64_t *ptr,
                     int64_t *idx, uint8_t *val) {
  Src src = {coords, M, NULL, NULL, 0, values, n};
  switch (vs) {
    case 1: return group(&src, false, in_order, false, nkeys, nminor, ptr, idx, val, 1, vtype);
    case 2: return group(&src, false, in_order, false, nkeys, nminor, ptr, idx, val, 2, vtype);
    case 4: return group(&src, false, in_order, false, nkeys, nminor, ptr, idx, val, 4, vtype);
    default: return group(&src, false, in_order, false, nkeys, nminor, ptr, idx, val, 8, vtype);
  }
}

int64_t sp_group_csx(const int64_t *sptr, const int64_t *sidx, const uint8_t *values, int64_t nsrc,
                     int64_t nkeys, size_t vs, bool counted, int64_t *ptr, int64_t *idx, uint8_t *val) {
  Src src = {NULL, 0, sptr, sidx, nsrc, values, sptr[nsrc]};
  switch (vs) {
    case 1: return group(&src, true, false, counted, nkeys, nsrc, ptr, idx, val, 1, QV_VALUE_UINT8);
    case 2: return group(&src, true, false, counted, nkeys, nsrc, ptr, idx, val, 2, QV_VALUE_UINT16);
    case 4: return group(&src, true, false, counted, nkeys, nsrc, ptr, idx, val, 4, QV_VALUE_UINT32);
    default: return group(&src, true, false, counted, nkeys, nsrc, ptr, idx, val, 8, QV_VALUE_UINT64);
  }
}
