/* qv_sparse_validate: every invariant of the four index kinds, checked with
 * overflow-safe arithmetic and without reading outside what nnz, the shape
 * and the declared lengths say the buffers hold. */
#include <inttypes.h>
#include <stdio.h>

#include "quiver/advanced.h"
#include "sparse/sparse_internal.h"
#include "sparse/sparse_pool.h"
#include "util/cpu.h"
#include "util/pool.h"

/* Index entries come from qvi_sp_index_ld: uint64 values above INT64_MAX
 * load negative, which every range check below rejects. */

#define SP_EACH_INDEX_TYPE(X) \
  X(QV_ARROW_INT8) X(QV_ARROW_UINT8) X(QV_ARROW_INT16) X(QV_ARROW_UINT16) \
  X(QV_ARROW_INT32) X(QV_ARROW_UINT32) X(QV_ARROW_INT64) X(QV_ARROW_UINT64)

/* ---- COO */

/* Index of the first out-of-range coordinate (i * ndim + d), or -1. */
SP_INLINE int64_t coo_range_scan(const uint8_t *coords, int64_t s0, int64_t s1, int32_t ndim,
                                 int64_t nnz, const int64_t *shape, QvArrowType type) {
  for (int64_t i = 0; i < nnz; i++) {
    const uint8_t *row = coords + i * s0;
    for (int32_t d = 0; d < ndim; d++) {
      int64_t v = qvi_sp_index_ld(row + d * s1, type, 0);
      if ((uint64_t)v >= (uint64_t)shape[d]) return i * ndim + d;
    }
  }
  return -1;
}

/* First i >= 1 whose row is not strictly after row i-1, or -1. */
SP_INLINE int64_t coo_order_scan(const uint8_t *coords, int64_t s0, int64_t s1, int32_t ndim,
                                 int64_t nnz, QvArrowType type) {
  for (int64_t i = 1; i < nnz; i++) {
    const uint8_t *a = coords + (i - 1) * s0, *b = coords + i * s0;
    int32_t d = 0;
    for (; d < ndim; d++) {
      int64_t x = qvi_sp_index_ld(a + d * s1, type, 0), y = qvi_sp_index_ld(b + d * s1, type, 0);
      if (y > x) break;
      if (y < x) return i;
    }
    if (d == ndim) return i;
  }
  return -1;
}

static QvStatus validate_coo(const QvSparseTensor *t, bool coords, QvError *error) {
  int64_t isize = (int64_t)qv_arrow_type_size(t->index_type);
  int64_t s0 = t->coords_strides[0], s1 = t->coords_strides[1];
  if (t->nnz == 0) return QV_OK; /* no coordinates to read; Arrow writes any strides here */
  if (t->coords == NULL) return qv_error_set(error, QV_EINVAL, "COO coords: buffer is NULL");
  if (s0 < 0 || s1 < 0)
    return qv_error_set(error, QV_EINVAL, "COO coords: negative strides [%" PRId64 ", %" PRId64 "]",
                        s0, s1);
  int64_t last, span;
  if (!qvi_mul_add_i64(t->nnz - 1, s0, 0, &last) || !qvi_mul_add_i64((int64_t)t->ndim - 1, s1, isize, &span) ||
      last > INT64_MAX - span)
    return qv_error_set(error, QV_EINVAL,
                        "COO coords: %" PRId64 " x %d entries with strides [%" PRId64 ", %" PRId64
                        "] overflow int64 byte offsets",
                        t->nnz, (int)t->ndim, s0, s1);
  int64_t bad = -1;
  switch (coords ? t->index_type : QV_ARROW_NUMERIC_END) {
#define X(T) \
  case T: bad = coo_range_scan(t->coords, s0, s1, t->ndim, t->nnz, t->shape, T); break;
    SP_EACH_INDEX_TYPE(X)
#undef X
    default: break;
  }
  if (bad >= 0) {
    int64_t i = bad / t->ndim;
    int32_t d = (int32_t)(bad % t->ndim);
    char v[32];
    qvi_sp_index_str(t->coords + i * s0 + d * s1, t->index_type, 0, v);
    return qv_error_set(error, QV_EINVAL,
                        "COO coords: coordinate %s of dim %d at non-zero %" PRId64
                        " is out of range [0, %" PRId64 ")",
                        v, (int)d, i, t->shape[d]);
  }
  if (t->is_canonical) {
    switch (t->index_type) {
#define X(T) case T: bad = coo_order_scan(t->coords, s0, s1, t->ndim, t->nnz, T); break;
      SP_EACH_INDEX_TYPE(X)
#undef X
      default: break;
    }
    if (bad >= 0) {
      const uint8_t *a = t->coords + (bad - 1) * s0, *b = t->coords + bad * s0;
      bool dup = true;
      for (int32_t d = 0; d < t->ndim; d++)
        if (qv_index_load(a + d * s1, t->index_type, 0) != qv_index_load(b + d * s1, t->index_type, 0))
          dup = false;
      return qv_error_set(error, QV_EINVAL,
                          "COO coords: flagged canonical but non-zero %" PRId64 " %s non-zero %" PRId64
                          " (canonical means sorted row-major without duplicates)",
                          bad, dup ? "duplicates" : "sorts before", bad - 1);
    }
  }
  return QV_OK;
}

/* ---- indptr / sorted segments, shared by CSX and CSF */

static bool indptr_fast_ok(const uint8_t *p, QvArrowType type, int64_t n, int64_t end);

/* indptr: n entries, [0] == 0, non-decreasing, last == end. */
static QvStatus check_indptr(const char *what, const uint8_t *p, QvArrowType type, int64_t n,
                             int64_t end, const char *end_name, QvError *error) {
  if (n < 1) return qv_error_set(error, QV_EINVAL, "%s: %" PRId64 " entries, need at least 1", what, n);
  if (p == NULL) return qv_error_set(error, QV_EINVAL, "%s: buffer is NULL", what);
  /* the vector pass names nothing: a refusal runs the loop below */
  if (indptr_fast_ok(p, type, n, end)) return QV_OK;
  char a[32], b[32];
  int64_t prev = 0;
  for (int64_t k = 0; k < n; k++) {
    int64_t v = qv_index_load(p, type, k);
    if (v < 0) {
      qvi_sp_index_str(p, type, k, a);
      return qv_error_set(error, QV_EINVAL, "%s: value %s at position %" PRId64 " is %s", what, a, k,
                          type == QV_ARROW_UINT64 ? "too large" : "negative");
    }
    if (k == 0 && v != 0)
      return qv_error_set(error, QV_EINVAL, "%s: starts at %" PRId64 ", must start at 0", what, v);
    if (v < prev) {
      snprintf(a, sizeof a, "%" PRId64, v);
      snprintf(b, sizeof b, "%" PRId64, prev);
      return qv_error_set(error, QV_EINVAL, "%s is decreasing at position %" PRId64 " (%s after %s)",
                          what, k, a, b);
    }
    prev = v;
  }
  if (prev != end)
    return qv_error_set(error, QV_EINVAL, "%s: ends at %" PRId64 ", must end at %" PRId64 " (%s)", what,
                        prev, end, end_name);
  return QV_OK;
}

/* Entries [lo, hi) of an index buffer: each in [0, extent), strictly
 * increasing unless `any_order`. `group` names the segment in messages. */
static QvStatus check_segment(const char *what, const char *group, int64_t gi, const uint8_t *p,
                              QvArrowType type, int64_t lo, int64_t hi, int64_t extent,
                              bool any_order, QvError *error) {
  int64_t prev = -1;
  for (int64_t k = lo; k < hi; k++) {
    int64_t v = qv_index_load(p, type, k);
    if (v < 0 || v >= extent) {
      char s[32];
      qvi_sp_index_str(p, type, k, s);
      return qv_error_set(error, QV_EINVAL,
                          "%s: %s at position %" PRId64 " (%s %" PRId64 ") is out of range [0, %" PRId64 ")",
                          what, s, k, group, gi, extent);
    }
    if (v <= prev && !any_order)
      return qv_error_set(error, QV_EINVAL,
                          "%s: %s within %s %" PRId64 " at position %" PRId64 " (%" PRId64 " after %" PRId64 ")",
                          what, v == prev ? "duplicate" : "not sorted", group, gi, k, v, prev);
    prev = v;
  }
  return QV_OK;
}

static QvStatus check_len(const char *what, int64_t n, QvArrowType type, QvError *error) {
  int64_t bytes;
  if (n < 0 || !qvi_mul_add_i64(n, (int64_t)qv_arrow_type_size(type), 0, &bytes))
    return qv_error_set(error, QV_EINVAL, "%s: invalid length %" PRId64, what, n);
  return QV_OK;
}

/* ---- CSR / CSC */

/* The scan of every segment for the index types SciPy and Arrow C++ write,
 * as two counts that need no per-segment loop (rows average a few dozen
 * entries, too few for a vector loop each; a branch per entry cost ~1 ns,
 * which was a tenth of reading a 10^7-entry CSR .npz):
 *   pairs:  positions k in [1, nnz) with indices[k] <= indices[k - 1],
 *   starts: those of them where a segment starts (distinct indptr values
 *           inside (0, nnz)).
 * Every segment is strictly increasing iff the counts are equal; then every
 * segment lies in [0, extent) iff every entry does, which the first pass
 * checks along. Both counts come from one pass, a cache-sized block of
 * entries at a time (csx_fused), split into independent ranges of entries,
 * so it runs on a pool. */

#if defined(__GNUC__)
/* generic vectors: GCC and clang lower them to the target's SIMD (SSE2 on
 * baseline x86-64), so the pass runs near memory speed at -O2 */
typedef int32_t sp_v4i32 __attribute__((vector_size(16)));
typedef int64_t sp_v2i64 __attribute__((vector_size(16)));
#define SP_HAVE_VECTORS 1
#endif

/* Whether an int32 / int64 indptr of n >= 1 entries starts at 0, never
 * decreases and ends at `end` (so no entry is negative), in one branch-free
 * pass; false for other types too. */
static bool indptr_fast_ok(const uint8_t *p, QvArrowType type, int64_t n, int64_t end) {
  if (type != QV_ARROW_INT32 && type != QV_ARROW_INT64) return false;
  if (qvi_sp_index_ld(p, type, 0) != 0 || qvi_sp_index_ld(p, type, n - 1) != end) return false;
  int64_t k = 1;
  bool down = false;
#ifdef SP_HAVE_VECTORS
  if (type == QV_ARROW_INT32) {
    sp_v4i32 any = {0, 0, 0, 0};
    for (; k + 4 <= n; k += 4) {
      sp_v4i32 cur, prev;
      memcpy(&cur, p + 4 * k, sizeof cur);
      memcpy(&prev, p + 4 * (k - 1), sizeof prev);
      any |= cur < prev;
    }
    down = (any[0] | any[1] | any[2] | any[3]) != 0;
  } else {
    sp_v2i64 any = {0, 0};
    for (; k + 2 <= n; k += 2) {
      sp_v2i64 cur, prev;
      memcpy(&cur, p + 8 * k, sizeof cur);
      memcpy(&prev, p + 8 * (k - 1), sizeof prev);
      any |= cur < prev;
    }
    down = (any[0] | any[1]) != 0;
  }
#endif
  for (; k < n; k++) down |= qvi_sp_index_ld(p, type, k) < qvi_sp_index_ld(p, type, k - 1);
  return !down;
}

/* Positions in [max(k0, 1), k1) whose entry is not above the one before;
 * *bad when an entry of [k0, k1) is outside [0, lim]. */
SP_INLINE int64_t csx_pairs(const uint8_t *x, QvArrowType it, int64_t k0, int64_t k1, int64_t lim,
                            bool *bad) {
  int64_t count = 0, k = k0 > 1 ? k0 : 1;
  bool out = false;
  if (k0 == 0 && k1 > 0) {
    int64_t v = qvi_sp_index_ld(x, it, 0);
    out = v < 0 || v > lim;
  }
#ifdef SP_HAVE_VECTORS
  /* lanes count as -1 per hit; blocks of 2^20 positions keep them in range */
  if (it == QV_ARROW_INT32) {
    int32_t l32 = lim > INT32_MAX ? INT32_MAX : (int32_t)lim;
    sp_v4i32 vl = {l32, l32, l32, l32}, any = {0, 0, 0, 0};
    while (k + 4 <= k1) {
      int64_t end = k1 - k > ((int64_t)1 << 20) ? k + ((int64_t)1 << 20) : k1;
      sp_v4i32 acc = {0, 0, 0, 0};
      for (; k + 4 <= end; k += 4) {
        sp_v4i32 cur, prev;
        memcpy(&cur, x + 4 * k, sizeof cur);
        memcpy(&prev, x + 4 * (k - 1), sizeof prev);
        acc += cur <= prev;
        any |= (cur < 0) | (cur > vl);
      }
      count -= (int64_t)acc[0] + acc[1] + acc[2] + acc[3];
    }
    out |= (any[0] | any[1] | any[2] | any[3]) != 0;
  } else {
    sp_v2i64 vl = {lim, lim}, any = {0, 0}, acc = {0, 0};
    for (; k + 2 <= k1; k += 2) {
      sp_v2i64 cur, prev;
      memcpy(&cur, x + 8 * k, sizeof cur);
      memcpy(&prev, x + 8 * (k - 1), sizeof prev);
      acc += cur <= prev;
      any |= (cur < 0) | (cur > vl);
    }
    count -= acc[0] + acc[1];
    out |= (any[0] | any[1]) != 0;
  }
#endif
  for (; k < k1; k++) {
    int64_t v = qvi_sp_index_ld(x, it, k);
    count += v <= qvi_sp_index_ld(x, it, k - 1);
    out |= v < 0 || v > lim;
  }
  *bad = out;
  return count;
}

/* Entries a block of the fused pass covers: the indices the segment starts
 * of the block compare are still in L1/L2 from the block's pair count (a
 * second pass over the whole array read them from memory again). */
#define CSX_BLOCK ((int64_t)1 << 14)

/* The first r in [1, nmajor) with indptr[r] >= k (nmajor when none): indptr
 * is non-decreasing (checked already). */
static int64_t csx_first_row(const uint8_t *p, QvArrowType pt, int64_t nmajor, int64_t k) {
  int64_t lo = 1, hi = nmajor;
  while (lo < hi) {
    int64_t mid = lo + (hi - lo) / 2;
    if (qvi_sp_index_ld(p, pt, mid) < k)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

/* One fused pass over entries [k0, k1), a cache-sized block at a time: the
 * block's pairs, then the segment starts inside the block (distinct indptr
 * values s in [max(k0, 1), k1), rows r < nmajor) whose entry is not above
 * the one before it. Each start belongs to the one slice holding its
 * entry, so the slices' counts add up to the whole array's. */
SP_INLINE void csx_fused(const uint8_t *p, QvArrowType pt, const uint8_t *x, QvArrowType it,
                         int64_t k0, int64_t k1, int64_t nmajor, int64_t lim, int64_t *pairs,
                         int64_t *starts, bool *bad) {
  int64_t np = 0, ns = 0;
  bool out = false;
  int64_t r = csx_first_row(p, pt, nmajor, k0 > 1 ? k0 : 1);
  int64_t last = r < nmajor ? qvi_sp_index_ld(p, pt, r - 1) : 0;
  for (int64_t kb = k0; kb < k1; kb += CSX_BLOCK) {
    int64_t ke = k1 - kb > CSX_BLOCK ? kb + CSX_BLOCK : k1;
    bool b;
    np += csx_pairs(x, it, kb, ke, lim, &b);
    out |= b;
    for (; r < nmajor; r++) {
      int64_t st = qvi_sp_index_ld(p, pt, r);
      if (st >= ke) break;
      if (st != last) ns += qvi_sp_index_ld(x, it, st) <= qvi_sp_index_ld(x, it, st - 1);
      last = st;
    }
  }
  *pairs = np;
  *starts = ns;
  *bad = out;
}

/* One slice of the scan: entries [k0, k1) and the segment starts among them. */
typedef struct CsxSlice {
  int64_t k0, k1;
  int64_t pairs, starts;
  bool bad;
} CsxSlice;

typedef struct CsxJob {
  const QvSparseTensor *t;
  int64_t nmajor, lim;
  CsxSlice *slices;
} CsxJob;

#define QV_CSX_SLICE(PT, IT) \
  if (t->indptr_type == PT && t->index_type == IT) { \
    csx_fused(t->indptr, PT, t->indices, IT, c->k0, c->k1, j->nmajor, j->lim, &c->pairs, \
              &c->starts, &c->bad); \
    return; \
  }

static void csx_slice(void *ctx, size_t i) {
  CsxJob *j = ctx;
  const QvSparseTensor *t = j->t;
  CsxSlice *c = &j->slices[i];
  QV_CSX_SLICE(QV_ARROW_INT32, QV_ARROW_INT32)
  QV_CSX_SLICE(QV_ARROW_INT64, QV_ARROW_INT64)
  QV_CSX_SLICE(QV_ARROW_INT32, QV_ARROW_INT64)
  QV_CSX_SLICE(QV_ARROW_INT64, QV_ARROW_INT32)
}
#undef QV_CSX_SLICE

#define CSX_MAX_SLICES 64

/* Whether every segment is in range and strictly increasing (indptr is
 * valid already). False also for the index types without a fast scan:
 * the caller's loop then checks, and names the first bad entry. */
static bool csx_fast_ok(const QvSparseTensor *t, int64_t nmajor, int64_t nminor, QvPool *pool) {
  bool fast = (t->indptr_type == QV_ARROW_INT32 || t->indptr_type == QV_ARROW_INT64) &&
              (t->index_type == QV_ARROW_INT32 || t->index_type == QV_ARROW_INT64);
  if (!fast) return false;
  if (t->nnz == 0) return true;
  if (nminor == 0) return false;
  CsxSlice slices[CSX_MAX_SLICES];
  int threads = t->nnz >= QVI_SP_VALIDATE_POOL_MIN_NNZ ? qvi_pool_threads(pool) : 1;
  /* a few slices a thread, so a thread that starts late still gets work */
  int64_t n = threads > 1 ? (int64_t)threads * 4 : 1;
  if (n > CSX_MAX_SLICES) n = CSX_MAX_SLICES;
  for (int64_t i = 0; i < n; i++)
    slices[i] = (CsxSlice){.k0 = t->nnz / n * i + (t->nnz % n) * i / n,
                           .k1 = t->nnz / n * (i + 1) + (t->nnz % n) * (i + 1) / n};
  CsxJob j = {t, nmajor, nminor - 1, slices};
  if (n > 1)
    qvi_pool_run(pool, (size_t)n, csx_slice, &j);
  else
    csx_slice(&j, 0);
  int64_t pairs = 0, starts = 0;
  for (int64_t i = 0; i < n; i++) {
    if (slices[i].bad) return false;
    pairs += slices[i].pairs;
    starts += slices[i].starts;
  }
  /* counted when the split scan accepts: a kernel that wrongly refused
   * valid input would only send it to the slow loop, unseen otherwise */
  if (pairs == starts && n > 1) qvi_path_hit(QV_PATH_SPARSE_VALIDATE_THREADS);
  return pairs == starts;
}

bool qvi_sp_csx_entries_ok(const QvSparseTensor *t, int64_t nmajor, int64_t nminor) {
  return csx_fast_ok(t, nmajor, nminor, qvi_sp_pool_current());
}

static QvStatus validate_csx(const QvSparseTensor *t, bool any_order, QvPool *pool, QvError *error) {
  bool csr = t->format == QV_SPARSE_CSR;
  const char *fmt = csr ? "CSR" : "CSC";
  if (t->ndim != 2)
    return qv_error_set(error, QV_EINVAL, "%s: needs a 2-D shape, got %d dims", fmt, (int)t->ndim);
  if (!qvi_sp_is_index_type(t->indptr_type))
    return qv_error_set(error, QV_EINVAL, "%s indptr: type %s is not an integer type", fmt,
                        qv_arrow_type_name(t->indptr_type));
  int64_t nmajor = t->shape[csr ? 0 : 1], nminor = t->shape[csr ? 1 : 0];
  char what[32];
  snprintf(what, sizeof what, "%s indptr", fmt);
  if (nmajor == INT64_MAX || t->indptr_len != nmajor + 1)
    return qv_error_set(error, QV_EINVAL, "%s has %" PRId64 " entries, expected %" PRId64 " (%s + 1)",
                        what, t->indptr_len, nmajor == INT64_MAX ? nmajor : nmajor + 1,
                        csr ? "rows" : "columns");
  QvStatus st = check_len(what, t->indptr_len, t->indptr_type, error);
  if (st != QV_OK) return st;
  if (t->indices_len != t->nnz)
    return qv_error_set(error, QV_EINVAL, "%s indices has %" PRId64 " entries, expected nnz %" PRId64,
                        fmt, t->indices_len, t->nnz);
  st = check_indptr(what, t->indptr, t->indptr_type, t->indptr_len, t->nnz, "nnz", error);
  if (st != QV_OK) return st;
  if (t->nnz > 0 && t->indices == NULL)
    return qv_error_set(error, QV_EINVAL, "%s indices: buffer is NULL", fmt);
  /* indptr is checked above: 0, non-decreasing, up to nnz */
  if (!any_order && csx_fast_ok(t, nmajor, nminor, pool)) return QV_OK;
  snprintf(what, sizeof what, "%s indices", fmt);
  for (int64_t r = 0; r < nmajor; r++) {
    int64_t lo = qv_index_load(t->indptr, t->indptr_type, r);
    int64_t hi = qv_index_load(t->indptr, t->indptr_type, r + 1);
    st = check_segment(what, csr ? "row" : "column", r, t->indices, t->index_type, lo, hi, nminor,
                       any_order, error);
    if (st != QV_OK) return st;
  }
  return QV_OK;
}

/* ---- CSF */

static QvStatus validate_csf(const QvSparseTensor *t, QvError *error) {
  int32_t n = t->ndim;
  if (!qvi_sp_is_index_type(t->indptr_type))
    return qv_error_set(error, QV_EINVAL, "CSF indptr: type %s is not an integer type",
                        qv_arrow_type_name(t->indptr_type));
  if (t->axis_order == NULL) return qv_error_set(error, QV_EINVAL, "CSF axis_order is NULL");
  if (t->csf_indices == NULL || t->csf_indices_len == NULL ||
      (n > 1 && (t->csf_indptr == NULL || t->csf_indptr_len == NULL)))
    return qv_error_set(error, QV_EINVAL, "CSF: indptr or indices buffer list is NULL");
  bool seen[QV_TENSOR_MAX_NDIM] = {false};
  for (int32_t l = 0; l < n; l++) {
    int32_t a = t->axis_order[l];
    if (a < 0 || a >= n)
      return qv_error_set(error, QV_EINVAL,
                          "CSF axis_order is not a permutation: %d at position %d is out of range [0, %d)",
                          (int)a, (int)l, (int)n);
    if (seen[a])
      return qv_error_set(error, QV_EINVAL,
                          "CSF axis_order is not a permutation: %d appears twice (position %d)", (int)a,
                          (int)l);
    seen[a] = true;
  }
  char what[40];
  for (int32_t l = 0; l < n; l++) {
    snprintf(what, sizeof what, "CSF indices[%d]", (int)l);
    QvStatus st = check_len(what, t->csf_indices_len[l], t->index_type, error);
    if (st != QV_OK) return st;
    if (t->csf_indices_len[l] > 0 && t->csf_indices[l] == NULL)
      return qv_error_set(error, QV_EINVAL, "%s: buffer is NULL", what);
  }
  if (t->csf_indices_len[n - 1] != t->nnz)
    return qv_error_set(error, QV_EINVAL,
                        "CSF indices[%d] (last level) has %" PRId64 " entries, must equal nnz %" PRId64,
                        (int)(n - 1), t->csf_indices_len[n - 1], t->nnz);
  for (int32_t l = 0; l + 1 < n; l++) {
    snprintf(what, sizeof what, "CSF indptr[%d]", (int)l);
    int64_t want = t->csf_indices_len[l] + 1; /* no overflow: check_len bounded it */
    if (t->csf_indptr_len[l] != want)
      return qv_error_set(error, QV_EINVAL,
                          "%s has %" PRId64 " entries, expected %" PRId64 " (entries in indices[%d] + 1)",
                          what, t->csf_indptr_len[l], want, (int)l);
    QvStatus st = check_len(what, want, t->indptr_type, error);
    if (st != QV_OK) return st;
    st = check_indptr(what, t->csf_indptr[l], t->indptr_type, want, t->csf_indices_len[l + 1],
                      "entries in the next level", error);
    if (st != QV_OK) return st;
  }
  for (int32_t l = 0; l < n; l++) {
    snprintf(what, sizeof what, "CSF indices[%d]", (int)l);
    int64_t extent = t->shape[t->axis_order[l]];
    QvStatus st;
    if (l == 0) {
      st = check_segment(what, "level", 0, t->csf_indices[0], t->index_type, 0, t->csf_indices_len[0],
                         extent, false, error);
    } else {
      st = QV_OK;
      int64_t parents = t->csf_indices_len[l - 1];
      for (int64_t p = 0; p < parents && st == QV_OK; p++) {
        int64_t lo = qv_index_load(t->csf_indptr[l - 1], t->indptr_type, p);
        int64_t hi = qv_index_load(t->csf_indptr[l - 1], t->indptr_type, p + 1);
        st = check_segment(what, "children of node", p, t->csf_indices[l], t->index_type, lo, hi,
                           extent, false, error);
      }
    }
    if (st != QV_OK) return st;
  }
  return QV_OK;
}

static QvStatus validate(const QvSparseTensor *t, bool coords, bool any_order, QvPool *pool,
                         QvError *error) {
  if (t == NULL) return qv_error_set(error, QV_EARG, "sparse tensor is NULL");
  if (t->format < QV_SPARSE_COO || t->format > QV_SPARSE_CSF)
    return qv_error_set(error, QV_EINVAL, "sparse tensor: unknown format %d", (int)t->format);
  if (t->value_type < QV_ARROW_INT8 || t->value_type >= QV_ARROW_NUMERIC_END)
    return qv_error_set(error, QV_EINVAL, "sparse tensor: invalid value type %d", (int)t->value_type);
  if (!qvi_sp_is_index_type(t->index_type))
    return qv_error_set(error, QV_EINVAL, "sparse tensor: index type %s is not an integer type",
                        qv_arrow_type_name(t->index_type));
  if (t->ndim < 1 || t->ndim > QV_TENSOR_MAX_NDIM)
    return qv_error_set(error, t->ndim < 1 ? QV_EINVAL : QV_ELIMIT,
                        "sparse tensor: ndim %d outside [1, %d]", (int)t->ndim, QV_TENSOR_MAX_NDIM);
  if (t->shape == NULL) return qv_error_set(error, QV_EINVAL, "sparse tensor: shape is NULL");
  for (int32_t d = 0; d < t->ndim; d++) {
    if (t->shape[d] < 0)
      return qv_error_set(error, QV_EINVAL, "sparse tensor: shape[%d] = %" PRId64 " is negative", (int)d,
                          t->shape[d]);
    if (t->dim_names != NULL && t->dim_names[d] == NULL)
      return qv_error_set(error, QV_EINVAL, "sparse tensor: dim_names[%d] is NULL", (int)d);
  }
  int64_t vbytes;
  if (t->nnz < 0 || !qvi_mul_add_i64(t->nnz, (int64_t)qv_arrow_type_size(t->value_type), 0, &vbytes))
    return qv_error_set(error, QV_EINVAL, "sparse tensor: invalid nnz %" PRId64, t->nnz);
  if (t->nnz > 0 && t->values == NULL)
    return qv_error_set(error, QV_EINVAL, "sparse tensor: values buffer is NULL with nnz %" PRId64,
                        t->nnz);
  switch (t->format) {
    case QV_SPARSE_COO: return validate_coo(t, coords || t->is_canonical, error);
    case QV_SPARSE_CSR:
    case QV_SPARSE_CSC: return validate_csx(t, any_order, pool, error);
    default: return validate_csf(t, error);
  }
}

QvStatus qvi_sp_validate_pool(const QvSparseTensor *t, bool coords, QvPool *pool,
                             QvError *error) {
  return validate(t, coords, false, pool, error);
}

QvStatus qvi_sp_validate_any_order(const QvSparseTensor *t, QvError *error) {
  return validate(t, true, true, NULL, error);
}

QvStatus qvi_sp_validate(const QvSparseTensor *t, bool coords, QvError *error) {
  return qvi_sp_validate_pool(t, coords, NULL, error);
}

QvStatus qv_sparse_validate(const QvSparseTensor *t, QvError *error) { return qvi_sp_validate(t, true, error); }
