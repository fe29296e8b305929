/* qv_sparse_validate: every invariant of the four index kinds, checked with
 * overflow-safe arithmetic and without reading outside what nnz, the shape
 * and the declared lengths say the buffers hold. */
#include <inttypes.h>
#include <stdio.h>

#include "sparse/sparse_internal.h"

/* Index entries come from qv_sp_index_ld: uint64 values above INT64_MAX
 * load negative, which every range check below rejects. */

#define SP_EACH_INDEX_TYPE(X) \
  X(QV_VALUE_INT8) X(QV_VALUE_UINT8) X(QV_VALUE_INT16) X(QV_VALUE_UINT16) \
  X(QV_VALUE_INT32) X(QV_VALUE_UINT32) X(QV_VALUE_INT64) X(QV_VALUE_UINT64)

/* ---- COO */

/* Index of the first out-of-range coordinate (i * ndim + d), or -1. */
SP_INLINE int64_t coo_range_scan(const uint8_t *coords, int64_t s0, int64_t s1, int32_t ndim,
                                 int64_t nnz, const int64_t *shape, QvValueType type) {
  for (int64_t i = 0; i < nnz; i++) {
    const uint8_t *row = coords + i * s0;
    for (int32_t d = 0; d < ndim; d++) {
      int64_t v = qv_sp_index_ld(row + d * s1, type, 0);
      if ((uint64_t)v >= (uint64_t)shape[d]) return i * ndim + d;
    }
  }
  return -1;
}

/* First i >= 1 whose row is not strictly after row i-1, or -1. */
SP_INLINE int64_t coo_order_scan(const uint8_t *coords, int64_t s0, int64_t s1, int32_t ndim,
                                 int64_t nnz, QvValueType type) {
  for (int64_t i = 1; i < nnz; i++) {
    const uint8_t *a = coords + (i - 1) * s0, *b = coords + i * s0;
    int32_t d = 0;
    for (; d < ndim; d++) {
      int64_t x = qv_sp_index_ld(a + d * s1, type, 0), y = qv_sp_index_ld(b + d * s1, type, 0);
      if (y > x) break;
      if (y < x) return i;
    }
    if (d == ndim) return i;
  }
  return -1;
}

static QvStatus validate_coo(const QvSparseTensor *t, bool coords, QvError *error) {
  int64_t isize = (int64_t)qv_value_type_size(t->index_type);
  int64_t s0 = t->coords_strides[0], s1 = t->coords_strides[1];
  if (t->nnz == 0) return QV_OK; /* no coordinates to read; Arrow writes any strides here */
  if (t->coords == NULL) return qv_error_set(error, QV_EINVAL, "COO coords: buffer is NULL");
  if (s0 < 0 || s1 < 0)
    return qv_error_set(error, QV_EINVAL, "COO coords: negative strides [%" PRId64 ", %" PRId64 "]",
                        s0, s1);
  int64_t last, span;
  if (!qv_mul_add_i64(t->nnz - 1, s0, 0, &last) || !qv_mul_add_i64((int64_t)t->ndim - 1, s1, isize, &span) ||
      last > INT64_MAX - span)
    return qv_error_set(error, QV_EINVAL,
                        "COO coords: %" PRId64 " x %d entries with strides [%" PRId64 ", %" PRId64
                        "] overflow int64 byte offsets",
                        t->nnz, (int)t->ndim, s0, s1);
  int64_t bad = -1;
  switch (coords ? t->index_type : QV_VALUE_TYPE_COUNT) {
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
    qv_sp_index_str(t->coords + i * s0 + d * s1, t->index_type, 0, v);
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

/* indptr: n entries, [0] == 0, non-decreasing, last == end. */
static QvStatus check_indptr(const char *what, const uint8_t *p, QvValueType type, int64_t n,
                             int64_t end, const char *end_name, QvError *error) {
  if (n < 1) return qv_error_set(error, QV_EINVAL, "%s: %" PRId64 " entries, need at least 1", what, n);
  if (p == NULL) return qv_error_set(error, QV_EINVAL, "%s: buffer is NULL", what);
  char a[32], b[32];
  int64_t prev = 0;
  for (int64_t k = 0; k < n; k++) {
    int64_t v = qv_index_load(p, type, k);
    if (v < 0) {
      qv_sp_index_str(p, type, k, a);
      return qv_error_set(error, QV_EINVAL, "%s: value %s at position %" PRId64 " is %s", what, a, k,
                          type == QV_VALUE_UINT64 ? "too large" : "negative");
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
 * increasing. `group` names the segment in messages. */
static QvStatus check_segment(const char *what, const char *group, int64_t gi, const uint8_t *p,
                              QvValueType type, int64_t lo, int64_t hi, int64_t extent,
                              QvError *error) {
  int64_t prev = -1;
  for (int64_t k = lo; k < hi; k++) {
    int64_t v = qv_index_load(p, type, k);
    if (v < 0 || v >= extent) {
      char s[32];
      qv_sp_index_str(p, type, k, s);
      return qv_error_set(error, QV_EINVAL,
                          "%s: %s at position %" PRId64 " (%s %" PRId64 ") is out of range [0, %" PRId64 ")",
                          what, s, k, group, gi, extent);
    }
    if (v <= prev)
      return qv_error_set(error, QV_EINVAL,
                          "%s: %s within %s %" PRId64 " at position %" PRId64 " (%" PRId64 " after %" PRId64 ")",
                          what, v == prev ? "duplicate" : "not sorted", group, gi, k, v, prev);
    prev = v;
  }
  return QV_OK;
}

static QvStatus check_len(const char *what, int64_t n, QvValueType type, QvError *error) {
  int64_t bytes;
  if (n < 0 || !qv_mul_add_i64(n, (int64_t)qv_value_type_size(type), 0, &bytes))
    return qv_error_set(error, QV_EINVAL, "%s: invalid length %" PRId64, what, n);
  return QV_OK;
}

/* ---- CSR / CSC */

/* Every segment in range and strictly increasing, in one pass with both
 * types known at compile time: check_segment's per-entry qv_index_load costs
 * several ns an entry, which dominated reading a 10^7-entry CSR file. False
 * sends the caller to the loop that names the first bad entry. */
SP_INLINE bool csx_scan(const uint8_t *indptr, QvValueType pt, const uint8_t *indices,
                        QvValueType it, int64_t nmajor, int64_t nminor) {
  for (int64_t r = 0; r < nmajor; r++) {
    int64_t lo = qv_sp_index_ld(indptr, pt, r), hi = qv_sp_index_ld(indptr, pt, r + 1), prev = -1;
    for (int64_t k = lo; k < hi; k++) {
      int64_t v = qv_sp_index_ld(indices, it, k);
      if (v <= prev || v >= nminor) return false;
      prev = v;
    }
  }
  return true;
}

/* The index types SciPy and Arrow C++ write; others take the general loop. */
static bool csx_fast_ok(const QvSparseTensor *t, int64_t nmajor, int64_t nminor) {
#define QV_CSX_FAST(PT, IT) \
  if (t->indptr_type == PT && t->index_type == IT) \
    return csx_scan(t->indptr, PT, t->indices, IT, nmajor, nminor);
  QV_CSX_FAST(QV_VALUE_INT32, QV_VALUE_INT32)
  QV_CSX_FAST(QV_VALUE_INT64, QV_VALUE_INT64)
  QV_CSX_FAST(QV_VALUE_INT32, QV_VALUE_INT64)
  QV_CSX_FAST(QV_VALUE_INT64, QV_VALUE_INT32)
#undef QV_CSX_FAST
  return false;
}

static QvStatus validate_csx(const QvSparseTensor *t, QvError *error) {
  bool csr = t->format == QV_SPARSE_CSR;
  const char *fmt = csr ? "CSR" : "CSC";
  if (t->ndim != 2)
    return qv_error_set(error, QV_EINVAL, "%s: needs a 2-D shape, got %d dims", fmt, (int)t->ndim);
  if (!qv_sp_is_index_type(t->indptr_type))
    return qv_error_set(error, QV_EINVAL, "%s indptr: type %s is not an integer type", fmt,
                        qv_value_type_name(t->indptr_type));
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
  if (csx_fast_ok(t, nmajor, nminor)) return QV_OK;
  snprintf(what, sizeof what, "%s indices", fmt);
  for (int64_t r = 0; r < nmajor; r++) {
    int64_t lo = qv_index_load(t->indptr, t->indptr_type, r);
    int64_t hi = qv_index_load(t->indptr, t->indptr_type, r + 1);
    st = check_segment(what, csr ? "row" : "column", r, t->indices, t->index_type, lo, hi, nminor,
                       error);
    if (st != QV_OK) return st;
  }
  return QV_OK;
}

/* ---- CSF */

static QvStatus validate_csf(const QvSparseTensor *t, QvError *error) {
  int32_t n = t->ndim;
  if (!qv_sp_is_index_type(t->indptr_type))
    return qv_error_set(error, QV_EINVAL, "CSF indptr: type %s is not an integer type",
                        qv_value_type_name(t->indptr_type));
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
                         extent, error);
    } else {
      st = QV_OK;
      int64_t parents = t->csf_indices_len[l - 1];
      for (int64_t p = 0; p < parents && st == QV_OK; p++) {
        int64_t lo = qv_index_load(t->csf_indptr[l - 1], t->indptr_type, p);
        int64_t hi = qv_index_load(t->csf_indptr[l - 1], t->indptr_type, p + 1);
        st = check_segment(what, "children of node", p, t->csf_indices[l], t->index_type, lo, hi,
                           extent, error);
      }
    }
    if (st != QV_OK) return st;
  }
  return QV_OK;
}

QvStatus qv_sp_validate(const QvSparseTensor *t, bool coords, QvError *error) {
  if (t == NULL) return qv_error_set(error, QV_EARG, "sparse tensor is NULL");
  if (t->format < QV_SPARSE_COO || t->format > QV_SPARSE_CSF)
    return qv_error_set(error, QV_EINVAL, "sparse tensor: unknown format %d", (int)t->format);
  if (t->value_type < QV_VALUE_INT8 || t->value_type >= QV_VALUE_TYPE_COUNT)
    return qv_error_set(error, QV_EINVAL, "sparse tensor: invalid value type %d", (int)t->value_type);
  if (!qv_sp_is_index_type(t->index_type))
    return qv_error_set(error, QV_EINVAL, "sparse tensor: index type %s is not an integer type",
                        qv_value_type_name(t->index_type));
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
  if (t->nnz < 0 || !qv_mul_add_i64(t->nnz, (int64_t)qv_value_type_size(t->value_type), 0, &vbytes))
    return qv_error_set(error, QV_EINVAL, "sparse tensor: invalid nnz %" PRId64, t->nnz);
  if (t->nnz > 0 && t->values == NULL)
    return qv_error_set(error, QV_EINVAL, "sparse tensor: values buffer is NULL with nnz %" PRId64,
                        t->nnz);
  switch (t->format) {
    case QV_SPARSE_COO: return validate_coo(t, coords || t->is_canonical, error);
    case QV_SPARSE_CSR:
    case QV_SPARSE_CSC: return validate_csx(t, error);
    default: return validate_csf(t, error);
  }
}

QvStatus qv_sparse_validate(const QvSparseTensor *t, QvError *error) { return qv_sp_validate(t, true, error); }
