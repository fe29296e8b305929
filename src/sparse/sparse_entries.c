/* The entries working form, used for every ndim but 2 (and for 2-D shapes
 * too large for CSX arrays): loading any validated sparse tensor into int64
 * coordinates, stable counting/radix sorts, duplicate summing, and the COO
 * and CSF builders (with the index type fit checks). Every step is O(nnz)
 * time and memory, plus bucket arrays bounded by max(nnz, 65536). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "quiver/advanced.h"
#include "sparse/sparse_internal.h"

void qvi_sp_entries_free(SpEntries *e) {
  if (e->own_coords) qvi_sp_free(e->coords);
  if (e->own_values) qvi_sp_free(e->values);
  e->coords = NULL;
  e->values = NULL;
  e->own_coords = e->own_values = false;
}

/* Widens n index entries into int64 (validated inputs: all values fit). */
static void widen(const uint8_t *src, QvArrowType type, int64_t n, int64_t *dst) {
  switch (type) {
    case QV_ARROW_INT64:
    case QV_ARROW_UINT64: memcpy(dst, src, (size_t)n * 8); break;
    case QV_ARROW_INT32: for (int64_t i = 0; i < n; i++) { int32_t v; memcpy(&v, src + i * 4, 4); dst[i] = v; } break;
    case QV_ARROW_UINT32: for (int64_t i = 0; i < n; i++) { uint32_t v; memcpy(&v, src + i * 4, 4); dst[i] = v; } break;
    case QV_ARROW_INT16: for (int64_t i = 0; i < n; i++) { int16_t v; memcpy(&v, src + i * 2, 2); dst[i] = v; } break;
    case QV_ARROW_UINT16: for (int64_t i = 0; i < n; i++) { uint16_t v; memcpy(&v, src + i * 2, 2); dst[i] = v; } break;
    case QV_ARROW_INT8: for (int64_t i = 0; i < n; i++) dst[i] = (int8_t)src[i]; break;
    default: for (int64_t i = 0; i < n; i++) dst[i] = src[i]; break;
  }
}

/* An int64 view of an index buffer: borrowed when it already is one. */
QvStatus qvi_sp_int64_view(const uint8_t *src, QvArrowType type, int64_t n, const int64_t **out,
                       int64_t **owned, QvError *error) {
  *owned = NULL;
  if ((type == QV_ARROW_INT64 || type == QV_ARROW_UINT64) && ((uintptr_t)src & 7u) == 0) {
    *out = (const int64_t *)(const void *)src;
    return QV_OK;
  }
  int64_t *w = qvi_sp_malloc(n, 8);
  if (w == NULL) return qvi_sp_nomem(error, "sparse index", n, 8);
  if (n > 0) widen(src, type, n, w);
  *out = *owned = w;
  return QV_OK;
}

/* Lexicographic comparison of two coordinate rows. */
static int row_cmp(const int64_t *a, const int64_t *b, int32_t nd) {
  for (int32_t d = 0; d < nd; d++)
    if (a[d] != b[d]) return a[d] < b[d] ? -1 : 1;
  return 0;
}

static QvStatus load_coo(const QvSparseTensor *t, SpEntries *e, QvError *error) {
  int64_t n = t->nnz;
  int32_t nd = t->ndim;
  bool wide = t->index_type == QV_ARROW_INT64 || t->index_type == QV_ARROW_UINT64;
  if (n > 0 && wide && t->coords_strides[1] == 8 && t->coords_strides[0] == 8 * (int64_t)nd &&
      ((uintptr_t)t->coords & 7u) == 0) {
    e->coords = (int64_t *)(uintptr_t)t->coords; /* borrowed: never written */
  } else {
    if (n > INT64_MAX / nd) return qvi_sp_nomem(error, "COO coordinates", n, (size_t)nd * 8);
    e->coords = qvi_sp_malloc(n * nd, 8);
    if (e->coords == NULL) return qvi_sp_nomem(error, "COO coordinates", n * nd, 8);
    e->own_coords = true;
    for (int64_t i = 0; i < n; i++)
      for (int32_t d = 0; d < nd; d++) {
        const uint8_t *p = t->coords + i * t->coords_strides[0] + d * t->coords_strides[1];
        e->coords[i * nd + d] = qv_index_load(p, t->index_type, 0);
      }
  }
  for (int32_t d = 0; d < nd; d++) e->order[d] = d;
  if (t->is_canonical) {
    e->sorted = e->unique = true;
  } else {
    /* a flag left false on sorted data (as Arrow writes sometimes) costs one
     * cheap scan instead of a sort */
    e->sorted = e->unique = true;
    for (int64_t i = 1; i < n; i++) {
      int c = row_cmp(e->coords + (i - 1) * nd, e->coords + i * nd, nd);
      if (c > 0) {
        e->sorted = e->unique = false;
        break;
      }
      if (c == 0) e->unique = false;
    }
  }
  return QV_OK;
}

static QvStatus load_csx(const QvSparseTensor *t, SpEntries *e, QvError *error) {
  int M = t->format == QV_SPARSE_CSR ? 0 : 1, m = 1 - M;
  int64_t nmajor = t->shape[M], n = t->nnz;
  const int64_t *ptr, *idx;
  int64_t *ptr_own, *idx_own;
  QvStatus st = qvi_sp_int64_view(t->indptr, t->indptr_type, nmajor + 1, &ptr, &ptr_own, error);
  if (st != QV_OK) return st;
  st = qvi_sp_int64_view(t->indices, t->index_type, n, &idx, &idx_own, error);
  if (st != QV_OK) {
    qvi_sp_free(ptr_own);
    return st;
  }
  e->coords = n > INT64_MAX / 2 ? NULL : qvi_sp_malloc(n * 2, 8);
  if (e->coords == NULL) {
    qvi_sp_free(ptr_own);
    qvi_sp_free(idx_own);
    return qvi_sp_nomem(error, "CSX coordinates", n, 16);
  }
  e->own_coords = true;
  for (int64_t r = 0; r < nmajor; r++)
    for (int64_t k = ptr[r]; k < ptr[r + 1]; k++) {
      e->coords[2 * k + M] = r;
      e->coords[2 * k + m] = idx[k];
    }
  qvi_sp_free(ptr_own);
  qvi_sp_free(idx_own);
  e->order[0] = M;
  e->order[1] = m;
  e->sorted = e->unique = true;
  return QV_OK;
}

/* Expands the CSF trie: leaf j is entry j; the leaves under node p of level
 * l form the contiguous range [leaf[p], leaf[p + 1]), found bottom-up from
 * the indptr buffers. */
static QvStatus load_csf(const QvSparseTensor *t, SpEntries *e, QvError *error) {
  int32_t nd = t->ndim;
  int64_t n = t->nnz;
  if (n > INT64_MAX / nd) return qvi_sp_nomem(error, "CSF coordinates", n, (size_t)nd * 8);
  e->coords = qvi_sp_malloc(n * nd, 8);
  if (e->coords == NULL) return qvi_sp_nomem(error, "CSF coordinates", n * nd, 8);
  e->own_coords = true;
  const uint8_t *last = t->csf_indices[nd - 1];
  for (int64_t j = 0; j < n; j++) e->coords[j * nd + t->axis_order[nd - 1]] = qv_index_load(last, t->index_type, j);
  int64_t *leaf = NULL; /* leaf ranges of the level below the one being filled */
  for (int32_t l = nd - 2; l >= 0; l--) {
    int64_t cnt = t->csf_indices_len[l];
    int64_t *nl = qvi_sp_malloc(cnt + 1, 8);
    if (nl == NULL) {
      qvi_sp_free(leaf);
      return qvi_sp_nomem(error, "CSF expansion", cnt + 1, 8);
    }
    for (int64_t p = 0; p <= cnt; p++) {
      int64_t c = qv_index_load(t->csf_indptr[l], t->indptr_type, p);
      nl[p] = leaf ? leaf[c] : c;
    }
    qvi_sp_free(leaf);
    leaf = nl;
    int32_t dim = t->axis_order[l];
    for (int64_t p = 0; p < cnt; p++) {
      int64_t v = qv_index_load(t->csf_indices[l], t->index_type, p);
      for (int64_t j = leaf[p]; j < leaf[p + 1]; j++) e->coords[j * nd + dim] = v;
    }
  }
  qvi_sp_free(leaf);
  memcpy(e->order, t->axis_order, (size_t)nd * sizeof *e->order);
  e->sorted = e->unique = true;
  return QV_OK;
}

QvStatus qvi_sp_entries_from_sparse(const QvSparseTensor *t, SpEntries *e, QvError *error) {
  memset(e, 0, sizeof *e);
  e->ndim = t->ndim;
  e->shape = t->shape;
  e->vtype = t->value_type;
  e->vsize = qv_arrow_type_size(t->value_type);
  e->n = t->nnz;
  e->values = (uint8_t *)(uintptr_t)t->values; /* borrowed: copied before any write */
  QvStatus st;
  switch (t->format) {
    case QV_SPARSE_COO: st = load_coo(t, e, error); break;
    case QV_SPARSE_CSR:
    case QV_SPARSE_CSC: st = load_csx(t, e, error); break;
    default: st = load_csf(t, e, error); break;
  }
  if (st != QV_OK) qvi_sp_entries_free(e);
  return st;
}

/* ---- sorting */

/* Dims of a key that matter (extent > 1), in key order. */
static int nontrivial(const SpEntries *e, const int32_t *key, int32_t *out) {
  int k = 0;
  for (int32_t i = 0; i < e->ndim; i++)
    if (e->shape[key[i]] > 1) out[k++] = key[i];
  return k;
}

/* Number of least significant dims of `key` the entries are already sorted
 * by (as a prefix of their own order): those LSD passes can be skipped. */
static int presorted(const SpEntries *e, const int32_t *key) {
  if (!e->sorted) return 0;
  int32_t kf[QV_TENSOR_MAX_NDIM], of[QV_TENSOR_MAX_NDIM];
  int len = nontrivial(e, key, kf);
  nontrivial(e, e->order, of);
  for (int m = len; m > 0; m--) {
    bool ok = true;
    for (int i = 0; i < m && ok; i++) ok = kf[len - m + i] == of[i];
    if (ok) return m;
  }
  return 0;
}

typedef struct SortPass {
  int32_t dim;
  int shift;
  int64_t buckets; /* 0: the whole coordinate is the key */
} SortPass;

/* One stable counting-sort pass per digit, permutation type P (uint32_t
 * when it can index every entry, halving the working memory). */
#define SP_DEFINE_PERM_SORT(NAME, P)                                                           \
  static P *NAME(const SpEntries *e, const SortPass *passes, int npass, int64_t maxb) {        \
    int64_t n = e->n;                                                                          \
    int32_t nd = e->ndim;                                                                      \
    P *a = qvi_sp_malloc(n, sizeof(P)), *b = qvi_sp_malloc(n, sizeof(P));                              \
    P *cnt = qvi_sp_malloc(maxb + 1, sizeof(P));                                                   \
    if (a == NULL || b == NULL || cnt == NULL) {                                               \
      qvi_sp_free(a);                                                                                 \
      qvi_sp_free(b);                                                                                 \
      qvi_sp_free(cnt);                                                                               \
      return NULL;                                                                             \
    }                                                                                          \
    const int64_t *c = e->coords;                                                              \
    for (int p = 0; p < npass; p++) {                                                          \
      int32_t d = passes[p].dim;                                                               \
      int sh = passes[p].shift;                                                                \
      int64_t nb = passes[p].buckets ? passes[p].buckets : e->shape[d];                        \
      uint64_t mask = passes[p].buckets ? (uint64_t)passes[p].buckets - 1 : UINT64_MAX;        \
      memset(cnt, 0, (size_t)(nb + 1) * sizeof(P));                                            \
      if (p == 0) {                                                                            \
        for (int64_t i = 0; i < n; i++) cnt[(((uint64_t)c[i * nd + d] >> sh) & mask) + 1]++;   \
      } else {                                                                                 \
        for (int64_t i = 0; i < n; i++)                                                        \
          cnt[(((uint64_t)c[(int64_t)a[i] * nd + d] >> sh) & mask) + 1]++;                     \
      }                                                                                        \
      for (int64_t k = 0; k < nb; k++) cnt[k + 1] += cnt[k];                                   \
      if (p == 0) {                                                                            \
        for (int64_t i = 0; i < n; i++) b[cnt[((uint64_t)c[i * nd + d] >> sh) & mask]++] = (P)i; \
      } else {                                                                                 \
        for (int64_t i = 0; i < n; i++) {                                                      \
          P s = a[i];                                                                          \
          b[cnt[((uint64_t)c[(int64_t)s * nd + d] >> sh) & mask]++] = s;                       \
        }                                                                                      \
      }                                                                                        \
      P *tmp = a;                                                                              \
      a = b;                                                                                   \
      b = tmp;                                                                                 \
    }                                                                                          \
    qvi_sp_free(b);                                                                                   \
    qvi_sp_free(cnt);                                                                                 \
    return a;                                                                                  \
  }

SP_DEFINE_PERM_SORT(perm_sort32, uint32_t)
SP_DEFINE_PERM_SORT(perm_sort64, int64_t)

#define SP_DEFINE_GATHER(NAME, P)                                                              \
  static void NAME(const SpEntries *e, const P *perm, int64_t *coords, uint8_t *values) {      \
    int32_t nd = e->ndim;                                                                      \
    size_t vs = e->vsize;                                                                      \
    for (int64_t i = 0; i < e->n; i++) {                                                       \
      int64_t s = (int64_t)perm[i];                                                            \
      memcpy(coords + i * nd, e->coords + s * nd, (size_t)nd * 8);                             \
      memcpy(values + (size_t)i * vs, e->values + (size_t)s * vs, vs);                         \
    }                                                                                          \
  }
SP_DEFINE_GATHER(gather32, uint32_t)
SP_DEFINE_GATHER(gather64, int64_t)

/* Makes coords and values owned (copies borrowed ones) so they can be
 * modified in place. */
static QvStatus own_all(SpEntries *e, QvError *error) {
  if (!e->own_coords) {
    int64_t *c = qvi_sp_malloc(e->n * e->ndim, 8);
    if (c == NULL) return qvi_sp_nomem(error, "sparse coordinates", e->n * e->ndim, 8);
    if (e->n > 0) memcpy(c, e->coords, (size_t)(e->n * e->ndim) * 8);
    e->coords = c;
    e->own_coords = true;
  }
  if (!e->own_values) {
    uint8_t *v = qvi_sp_malloc(e->n, e->vsize);
    if (v == NULL) return qvi_sp_nomem(error, "sparse values", e->n, e->vsize);
    if (e->n > 0) memcpy(v, e->values, (size_t)e->n * e->vsize);
    e->values = v;
    e->own_values = true;
  }
  return QV_OK;
}

/* Sums runs of equal coordinates (adjacent after sorting) into their first
 * entry, in entry order, as SciPy's sum_duplicates does. */
static QvStatus sum_duplicates(SpEntries *e, QvError *error) {
  QvStatus st = own_all(e, error);
  if (st != QV_OK) return st;
  int32_t nd = e->ndim;
  size_t vs = e->vsize;
  int64_t w = e->n > 0 ? 1 : 0;
  for (int64_t i = 1; i < e->n; i++) {
    if (row_cmp(e->coords + (w - 1) * nd, e->coords + i * nd, nd) == 0) {
      qvi_sp_value_add(e->vtype, e->values + (size_t)(w - 1) * vs, e->values + (size_t)i * vs);
    } else {
      if (w != i) {
        memcpy(e->coords + w * nd, e->coords + i * nd, (size_t)nd * 8);
        memcpy(e->values + (size_t)w * vs, e->values + (size_t)i * vs, vs);
      }
      w++;
    }
  }
  e->n = w;
  e->unique = true;
  return QV_OK;
}

QvStatus qvi_sp_entries_sort(SpEntries *e, const int32_t *key, QvError *error) {
  int32_t kf[QV_TENSOR_MAX_NDIM];
  int len = nontrivial(e, key, kf);
  int skip = presorted(e, key);
  SortPass passes[QV_TENSOR_MAX_NDIM * 4];
  int np = 0;
  int64_t maxb = 1;
  int64_t direct = e->n > 65536 ? e->n : 65536; /* largest bucket array for one pass */
  for (int j = len - 1 - skip; j >= 0; j--) {
    int64_t ext = e->shape[kf[j]];
    if (ext <= direct) {
      passes[np++] = (SortPass){kf[j], 0, 0};
      if (ext > maxb) maxb = ext;
    } else {
      /* 16-bit digits, least significant first */
      for (int sh = 0; sh < 64 && ((uint64_t)(ext - 1) >> sh) != 0; sh += 16)
        passes[np++] = (SortPass){kf[j], sh, 65536};
      if (maxb < 65536) maxb = 65536;
    }
  }
  if (np > 0 && e->n > 1) {
    int64_t *nc = qvi_sp_malloc(e->n * e->ndim, 8);
    uint8_t *nv = qvi_sp_malloc(e->n, e->vsize);
    bool narrow = e->n <= (int64_t)UINT32_MAX;
    void *perm = nc && nv ? (narrow ? (void *)perm_sort32(e, passes, np, maxb)
                                    : (void *)perm_sort64(e, passes, np, maxb))
                          : NULL;
    if (perm == NULL) {
      qvi_sp_free(nc);
      qvi_sp_free(nv);
      return qvi_sp_nomem(error, "sparse sort", e->n, 8 * (size_t)e->ndim + e->vsize);
    }
    if (narrow)
      gather32(e, perm, nc, nv);
    else
      gather64(e, perm, nc, nv);
    qvi_sp_free(perm);
    qvi_sp_entries_free(e);
    e->coords = nc;
    e->values = nv;
    e->own_coords = e->own_values = true;
  }
  memcpy(e->order, key, (size_t)e->ndim * sizeof *key);
  e->sorted = true;
  if (!e->unique) return sum_duplicates(e, error);
  return QV_OK;
}

/* ---- builders */

/* Copies n int64 values (src[i * stride]) into a buffer of the index type;
 * the int64 source itself is handed over when it is owned and dense. The
 * caller has checked that every value fits. */
uint8_t *qvi_sp_narrow(int64_t *src, bool src_owned, int64_t n, int64_t stride, QvArrowType type,
                       bool *took) {
  size_t w = qv_arrow_type_size(type);
  *took = false;
  if (w == 8 && stride == 1 && src_owned) {
    *took = true;
    return (uint8_t *)src;
  }
  uint8_t *out = qvi_sp_malloc(n, w);
  if (out == NULL) return NULL;
  switch (w) {
    case 1: for (int64_t i = 0; i < n; i++) out[i] = (uint8_t)src[i * stride]; break;
    case 2: for (int64_t i = 0; i < n; i++) { uint16_t v = (uint16_t)src[i * stride]; memcpy(out + 2 * i, &v, 2); } break;
    case 4: for (int64_t i = 0; i < n; i++) { uint32_t v = (uint32_t)src[i * stride]; memcpy(out + 4 * i, &v, 4); } break;
    default: for (int64_t i = 0; i < n; i++) memcpy(out + 8 * i, &src[i * stride], 8); break;
  }
  return out;
}

/* First position (i such that src[i * stride] > max), or -1. */
int64_t qvi_sp_first_too_big(const int64_t *src, int64_t n, int64_t stride, int64_t max) {
  for (int64_t i = 0; i < n; i++)
    if (src[i * stride] > max) return i;
  return -1;
}

QvStatus qvi_sp_fit_error(QvError *error, const char *what, int64_t value, const char *where,
                          QvArrowType type) {
  return qv_error_set(error, QV_EINVAL,
                      "%s: value %" PRId64 " %s does not fit index type %s (max %" PRId64
                      "); choose a wider index type",
                      what, value, where, qv_arrow_type_name(type), qvi_sp_index_max(type));
}

/* Hands the values buffer to out (or copies a borrowed one). */
static QvStatus take_values(SpEntries *e, QvSparseTensor *out, QvError *error) {
  if (!e->own_values) {
    uint8_t *v = qvi_sp_malloc(e->n, e->vsize);
    if (v == NULL) return qvi_sp_nomem(error, "sparse values", e->n, e->vsize);
    if (e->n > 0) memcpy(v, e->values, (size_t)e->n * e->vsize);
    e->values = v;
  }
  e->own_values = false;
  qvi_sp_own(out, e->values);
  out->values = e->values;
  out->nnz = e->n;
  return QV_OK;
}

static void set_coo(QvSparseTensor *t, QvArrowType index_type, uint8_t *coords, bool canonical) {
  int64_t w = (int64_t)qv_arrow_type_size(index_type);
  t->index_type = t->indptr_type = index_type;
  t->coords = coords;
  t->coords_strides[0] = w * t->ndim;
  t->coords_strides[1] = w;
  t->is_canonical = canonical;
}

static QvStatus build_coo(SpEntries *e, QvSparseTensor *out, QvArrowType itype, QvError *error) {
  int32_t nd = e->ndim;
  int64_t max = qvi_sp_index_max(itype);
  for (int32_t d = 0; d < nd; d++) {
    if (e->shape[d] - 1 <= max) continue;
    int64_t i = qvi_sp_first_too_big(e->coords + d, e->n, nd, max);
    if (i >= 0) {
      char where[96];
      snprintf(where, sizeof where, "(coordinate of dim %d at non-zero %" PRId64 ")", (int)d, i);
      return qvi_sp_fit_error(error, "COO coords", e->coords[i * nd + d], where, itype);
    }
  }
  bool took;
  uint8_t *c = qvi_sp_narrow(e->coords, e->own_coords, e->n * nd, 1, itype, &took);
  if (c == NULL) return qvi_sp_nomem(error, "COO coords", e->n * nd, qv_arrow_type_size(itype));
  if (took) e->own_coords = false;
  qvi_sp_own(out, c);
  QvStatus st = take_values(e, out, error);
  if (st != QV_OK) return st;
  set_coo(out, itype, c, true);
  return QV_OK;
}


/* Entries sorted by axis_order and unique: a new trie node at level l for
 * every entry whose coordinates differ from the previous one's at level l
 * or above. Counted first, then filled, so each level is allocated once. */
static QvStatus build_csf(SpEntries *e, QvSparseTensor *out, QvArrowType itype,
                          const int32_t *axis, QvError *error) {
  int32_t nd = e->ndim;
  SpStore *s = (SpStore *)out->private_data;
  int64_t cnt[QV_TENSOR_MAX_NDIM] = {0};
  const int64_t *c = e->coords;
  for (int64_t i = 0; i < e->n; i++) {
    int32_t l = 0;
    if (i > 0)
      while (l < nd - 1 && c[i * nd + axis[l]] == c[(i - 1) * nd + axis[l]]) l++;
    for (; l < nd; l++) cnt[l]++;
  }
  int64_t max = qvi_sp_index_max(itype);
  for (int32_t l = 0; l + 1 < nd; l++)
    if (cnt[l + 1] > max) {
      char what[32];
      snprintf(what, sizeof what, "CSF indptr[%d]", (int)l);
      return qvi_sp_fit_error(error, what, cnt[l + 1], "(its last entry)", itype);
    }
  int64_t *ind[QV_TENSOR_MAX_NDIM] = {NULL}, *ptr[QV_TENSOR_MAX_NDIM] = {NULL};
  QvStatus st = QV_OK;
  for (int32_t l = 0; l < nd && st == QV_OK; l++) {
    ind[l] = qvi_sp_malloc(cnt[l], 8);
    if (l + 1 < nd) ptr[l] = qvi_sp_malloc(cnt[l] + 1, 8);
    if (ind[l] == NULL || (l + 1 < nd && ptr[l] == NULL)) st = qvi_sp_nomem(error, "CSF level", cnt[l], 16);
  }
  if (st == QV_OK) {
    int64_t pos[QV_TENSOR_MAX_NDIM] = {0};
    for (int64_t i = 0; i < e->n; i++) {
      int32_t l = 0;
      if (i > 0)
        while (l < nd - 1 && c[i * nd + axis[l]] == c[(i - 1) * nd + axis[l]]) l++;
      for (; l < nd; l++) {
        if (l + 1 < nd) ptr[l][pos[l]] = pos[l + 1];
        ind[l][pos[l]++] = c[i * nd + axis[l]];
      }
    }
    for (int32_t l = 0; l + 1 < nd; l++) ptr[l][cnt[l]] = cnt[l + 1];
    for (int32_t l = 0; l < nd && st == QV_OK; l++) {
      int64_t ext = e->shape[axis[l]];
      if (ext - 1 > max) {
        int64_t i = qvi_sp_first_too_big(ind[l], cnt[l], 1, max);
        if (i >= 0) {
          char what[32], where[64];
          snprintf(what, sizeof what, "CSF indices[%d]", (int)l);
          snprintf(where, sizeof where, "at position %" PRId64 " (dim %d)", i, (int)axis[l]);
          st = qvi_sp_fit_error(error, what, ind[l][i], where, itype);
        }
      }
    }
  }
  for (int32_t l = 0; l < nd && st == QV_OK; l++) {
    bool took;
    uint8_t *x = qvi_sp_narrow(ind[l], true, cnt[l], 1, itype, &took);
    if (x == NULL) {
      st = qvi_sp_nomem(error, "CSF indices", cnt[l], 8);
      break;
    }
    if (took) ind[l] = NULL;
    qvi_sp_own(out, x);
    s->csf_indices[l] = x;
    s->csf_indices_len[l] = cnt[l];
    if (l + 1 < nd) {
      x = qvi_sp_narrow(ptr[l], true, cnt[l] + 1, 1, itype, &took);
      if (x == NULL) {
        st = qvi_sp_nomem(error, "CSF indptr", cnt[l] + 1, 8);
        break;
      }
      if (took) ptr[l] = NULL;
      qvi_sp_own(out, x);
      s->csf_indptr[l] = x;
      s->csf_indptr_len[l] = cnt[l] + 1;
    }
  }
  for (int32_t l = 0; l < nd; l++) {
    qvi_sp_free(ind[l]);
    qvi_sp_free(ptr[l]);
  }
  if (st != QV_OK) return st;
  memcpy(s->axis_order, axis, (size_t)nd * sizeof *axis);
  out->index_type = out->indptr_type = itype;
  qvi_sp_point_csf(out);
  return take_values(e, out, error);
}

QvStatus qvi_sp_build(SpEntries *e, QvSparseTensor *out, QvArrowType index_type,
                  const int32_t *axis_order, QvError *error) {
  int32_t ident[QV_TENSOR_MAX_NDIM];
  for (int32_t d = 0; d < e->ndim; d++) ident[d] = d;
  QvStatus st;
  switch (out->format) {
    case QV_SPARSE_COO:
      st = qvi_sp_entries_sort(e, ident, error);
      return st == QV_OK ? build_coo(e, out, index_type, error) : st;
    case QV_SPARSE_CSR:
    case QV_SPARSE_CSC: /* 2-D only: built through qvi_sp_csx_emit */
      return qv_error_set(error, QV_EARG, "internal: CSR/CSC are built from CSX arrays");
    default:
      if (axis_order == NULL) axis_order = ident;
      st = qvi_sp_entries_sort(e, axis_order, error);
      return st == QV_OK ? build_csf(e, out, index_type, axis_order, error) : st;
  }
}
