/* Two-dimensional conversions all go through CSX arrays (int64 indptr and
 * indices plus values) of the orientation the output needs: canonical COO
 * is CSR with the rows spelled out, a 2-D CSF is a CSR (axis order 0, 1)
 * or CSC (1, 0) without its empty rows/columns. Getting there is a copy, a
 * transpose (counting sort), a grouping of COO pairs, a CSF expansion or a
 * dense scan, each O(nnz + extent). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "quiver/advanced.h"
#include "sparse/sparse_internal.h"

void qvi_sp_csx_free(SpCsx *c) {
  qvi_sp_free(c->own_ptr);
  qvi_sp_free(c->own_idx);
  qvi_sp_free(c->own_vals);
  c->own_ptr = c->own_idx = NULL;
  c->own_vals = NULL;
  c->ptr = c->idx = NULL;
  c->vals = NULL;
}

QvStatus qvi_sp_finish_csx(QvSparseTensor *out, int64_t *ptr, int64_t *idx, uint8_t *vals, int64_t nnz,
                       QvArrowType itype, QvError *error) {
  bool csr = out->format == QV_SPARSE_CSR;
  int64_t nmajor = out->shape[csr ? 0 : 1], nminor = out->shape[csr ? 1 : 0];
  const char *fmt = csr ? "CSR" : "CSC";
  int64_t max = qvi_sp_index_max(itype);
  QvStatus st = QV_OK;
  char what[32], where[64];
  if (nnz > max) {
    snprintf(what, sizeof what, "%s indptr", fmt);
    st = qvi_sp_fit_error(error, what, nnz, "(nnz, the last indptr entry)", itype);
  } else if (nminor - 1 > max) {
    int64_t i = qvi_sp_first_too_big(idx, nnz, 1, max);
    if (i >= 0) {
      snprintf(what, sizeof what, "%s indices", fmt);
      snprintf(where, sizeof where, "at position %" PRId64, i);
      st = qvi_sp_fit_error(error, what, idx[i], where, itype);
    }
  }
  uint8_t *p = NULL, *x = NULL;
  bool tp = false, tx = false;
  if (st == QV_OK && (p = qvi_sp_narrow(ptr, true, nmajor + 1, 1, itype, &tp)) == NULL)
    st = qvi_sp_nomem(error, fmt, nmajor + 1, 8);
  if (st == QV_OK && (x = qvi_sp_narrow(idx, true, nnz, 1, itype, &tx)) == NULL)
    st = qvi_sp_nomem(error, fmt, nnz, 8);
  if (!tp) qvi_sp_free(ptr);
  if (!tx) qvi_sp_free(idx);
  if (st != QV_OK) {
    qvi_sp_free(p); /* the handed-over int64 buffer or its narrowed copy */
    qvi_sp_free(x);
    qvi_sp_free(vals);
    return st;
  }
  qvi_sp_own(out, p);
  qvi_sp_own(out, x);
  qvi_sp_own(out, vals);
  out->index_type = out->indptr_type = itype;
  out->indptr = p;
  out->indices = x;
  out->indptr_len = nmajor + 1;
  out->indices_len = nnz;
  out->values = vals;
  out->nnz = nnz;
  return QV_OK;
}

QvStatus qvi_sp_csx_transpose(const int64_t *ptr, const int64_t *idx, const uint8_t *vals, size_t vs,
                          int64_t nmajor, int64_t nminor, int64_t *counts, int64_t **optr,
                          int64_t **oidx, uint8_t **ovals, QvError *error) {
  int64_t nnz = ptr[nmajor];
  int64_t *p = counts ? counts : nminor < INT64_MAX ? qvi_sp_calloc(nminor + 1, 8) : NULL;
  int64_t *x = qvi_sp_malloc(nnz, 8);
  uint8_t *v = qvi_sp_malloc(nnz, vs);
  if (p == NULL || x == NULL || v == NULL ||
      qvi_sp_group_csx(ptr, idx, vals, nmajor, nminor, vs, counts != NULL, p, x, v) < 0) {
    qvi_sp_free(p);
    qvi_sp_free(x);
    qvi_sp_free(v);
    return qv_error_set(error, QV_ENOMEM,
                        "CSR/CSC transpose: cannot allocate %" PRId64 " indptr entries and %" PRId64
                        " non-zeros",
                        nminor, nnz);
  }
  *optr = p;
  *oidx = x;
  *ovals = v;
  return QV_OK;
}

QvStatus qvi_sp_csx_flip(SpCsx *c, int64_t *counts, QvError *error) {
  int64_t *p = NULL, *x = NULL;
  uint8_t *v = NULL;
  QvStatus st =
      qvi_sp_csx_transpose(c->ptr, c->idx, c->vals, c->vs, c->nmajor, c->nminor, counts, &p, &x, &v, error);
  if (st != QV_OK) return st;
  qvi_sp_csx_free(c);
  c->ptr = c->own_ptr = p;
  c->idx = c->own_idx = x;
  c->vals = c->own_vals = v;
  c->M = 1 - c->M;
  int64_t t = c->nmajor;
  c->nmajor = c->nminor;
  c->nminor = t;
  return QV_OK;
}

static void csx_init(SpCsx *c, const QvSparseTensor *t, int M) {
  memset(c, 0, sizeof *c);
  c->M = M;
  c->nmajor = t->shape[M];
  c->nminor = t->shape[1 - M];
  c->vtype = t->value_type;
  c->vs = qv_arrow_type_size(t->value_type);
}

QvStatus qvi_sp_csx_from_sparse(const QvSparseTensor *t, int M, SpCsx *c, QvError *error) {
  QvStatus st = QV_OK;
  if (t->format == QV_SPARSE_CSR || t->format == QV_SPARSE_CSC) {
    csx_init(c, t, t->format == QV_SPARSE_CSR ? 0 : 1);
    c->nnz = t->nnz;
    c->vals = t->values;
    st = qvi_sp_int64_view(t->indptr, t->indptr_type, c->nmajor + 1, &c->ptr, &c->own_ptr, error);
    if (st == QV_OK) st = qvi_sp_int64_view(t->indices, t->index_type, t->nnz, &c->idx, &c->own_idx, error);
  } else if (t->format == QV_SPARSE_CSF) {
    /* level 0 holds the non-empty majors of orientation axis_order[0] */
    csx_init(c, t, t->axis_order[0]);
    c->nnz = t->nnz;
    c->vals = t->values;
    int64_t k = t->csf_indices_len[0];
    int64_t *p = c->nmajor < INT64_MAX ? qvi_sp_calloc(c->nmajor + 1, 8) : NULL;
    if (p == NULL) return qvi_sp_nomem(error, "CSF to CSR/CSC", c->nmajor, 8);
    c->ptr = c->own_ptr = p;
    for (int64_t j = 0; j < k; j++) {
      int64_t a = qv_index_load(t->csf_indices[0], t->index_type, j);
      p[a + 1] = qv_index_load(t->csf_indptr[0], t->indptr_type, j + 1) -
                 qv_index_load(t->csf_indptr[0], t->indptr_type, j);
    }
    for (int64_t r = 0; r < c->nmajor; r++) p[r + 1] += p[r];
    st = qvi_sp_int64_view(t->csf_indices[1], t->index_type, t->nnz, &c->idx, &c->own_idx, error);
  } else {
    csx_init(c, t, M);
    SpEntries e;
    st = qvi_sp_entries_from_sparse(t, &e, error);
    if (st != QV_OK) return st;
    int64_t *p = c->nmajor < INT64_MAX ? qvi_sp_calloc(c->nmajor + 1, 8) : NULL;
    int64_t *x = qvi_sp_malloc(e.n, 8);
    uint8_t *v = qvi_sp_malloc(e.n, c->vs);
    c->ptr = c->own_ptr = p;
    c->idx = c->own_idx = x;
    c->vals = c->own_vals = v;
    if (p == NULL || x == NULL || v == NULL) {
      st = qv_error_set(error, QV_ENOMEM, "COO to CSR/CSC: cannot allocate %" PRId64 " indptr entries and %" PRId64
                        " non-zeros", c->nmajor, e.n);
    } else {
      bool in_order = e.sorted && e.order[0] == M && e.unique;
      c->nnz = qvi_sp_group_coo(e.coords, e.values, e.n, M, c->nmajor, c->nminor, c->vs, c->vtype, in_order, p, x, v);
      if (c->nnz == -2) {
        /* a coordinate outside the shape: the full validation names it */
        st = qv_sparse_validate(t, error);
        if (st == QV_OK) st = qv_error_set(error, QV_EINVAL, "COO coords: coordinate out of range");
      } else if (c->nnz < 0) {
        st = qvi_sp_nomem(error, "COO to CSR/CSC", e.n, 16);
      }
    }
    qvi_sp_entries_free(&e);
  }
  if (st == QV_OK && c->M != M) st = qvi_sp_csx_flip(c, NULL, error);
  if (st != QV_OK) qvi_sp_csx_free(c);
  return st;
}

static int64_t *owned_copy(const int64_t *src, int64_t **own, int64_t n) {
  if (*own != NULL) {
    int64_t *p = *own;
    *own = NULL;
    return p;
  }
  int64_t *d = qvi_sp_malloc(n, 8);
  if (d != NULL && n > 0) memcpy(d, src, (size_t)n * 8);
  return d;
}

static uint8_t *owned_vals(SpCsx *c) {
  if (c->own_vals != NULL) {
    uint8_t *v = c->own_vals;
    c->own_vals = NULL;
    return v;
  }
  uint8_t *v = qvi_sp_malloc(c->nnz, c->vs);
  if (v != NULL && c->nnz > 0) memcpy(v, c->vals, (size_t)c->nnz * c->vs);
  return v;
}

/* CSF of a 2-D tensor: level 0 = the non-empty majors. */
static QvStatus emit_csf(SpCsx *c, QvSparseTensor *out, QvArrowType itype, QvError *error) {
  SpStore *s = (SpStore *)out->private_data;
  int64_t k = 0;
  for (int64_t r = 0; r < c->nmajor; r++) k += c->ptr[r + 1] > c->ptr[r];
  int64_t max = qvi_sp_index_max(itype);
  if (c->nnz > max) return qvi_sp_fit_error(error, "CSF indptr[0]", c->nnz, "(its last entry)", itype);
  int64_t *ind0 = qvi_sp_malloc(k, 8), *ptr0 = qvi_sp_malloc(k + 1, 8);
  int64_t *ind1 = owned_copy(c->idx, &c->own_idx, c->nnz);
  uint8_t *vals = owned_vals(c);
  QvStatus st = QV_OK;
  if (ind0 == NULL || ptr0 == NULL || ind1 == NULL || vals == NULL) st = qvi_sp_nomem(error, "CSF", c->nnz, 16);
  int64_t j = 0;
  for (int64_t r = 0; st == QV_OK && r < c->nmajor; r++)
    if (c->ptr[r + 1] > c->ptr[r]) {
      ind0[j] = r;
      ptr0[j++] = c->ptr[r];
    }
  if (st == QV_OK) {
    ptr0[k] = c->nnz;
    char where[64];
    if (k > 0 && ind0[k - 1] > max) {
      snprintf(where, sizeof where, "at position %" PRId64 " (dim %d)", k - 1, c->M);
      st = qvi_sp_fit_error(error, "CSF indices[0]", ind0[k - 1], where, itype);
    } else if (c->nminor - 1 > max) {
      int64_t i = qvi_sp_first_too_big(ind1, c->nnz, 1, max);
      if (i >= 0) {
        snprintf(where, sizeof where, "at position %" PRId64 " (dim %d)", i, 1 - c->M);
        st = qvi_sp_fit_error(error, "CSF indices[1]", ind1[i], where, itype);
      }
    }
  }
  int64_t *src[3] = {ind0, ptr0, ind1};
  int64_t len[3] = {k, k + 1, c->nnz};
  uint8_t *dst[3] = {NULL, NULL, NULL};
  for (int i = 0; i < 3 && st == QV_OK; i++) {
    bool took;
    dst[i] = qvi_sp_narrow(src[i], true, len[i], 1, itype, &took);
    if (dst[i] == NULL) st = qvi_sp_nomem(error, "CSF", len[i], 8);
    if (took) src[i] = NULL;
  }
  for (int i = 0; i < 3; i++) qvi_sp_free(src[i]);
  if (st != QV_OK) {
    for (int i = 0; i < 3; i++) qvi_sp_free(dst[i]);
    qvi_sp_free(vals);
    return st;
  }
  for (int i = 0; i < 3; i++) qvi_sp_own(out, dst[i]);
  qvi_sp_own(out, vals);
  s->axis_order[0] = c->M;
  s->axis_order[1] = 1 - c->M;
  s->csf_indices[0] = dst[0];
  s->csf_indices_len[0] = k;
  s->csf_indptr[0] = dst[1];
  s->csf_indptr_len[0] = k + 1;
  s->csf_indices[1] = dst[2];
  s->csf_indices_len[1] = c->nnz;
  out->index_type = out->indptr_type = itype;
  qvi_sp_point_csf(out);
  out->values = vals;
  out->nnz = c->nnz;
  return QV_OK;
}

QvStatus qvi_sp_csx_emit(SpCsx *c, QvSparseTensor *out, QvArrowType itype, QvError *error) {
  if (out->format == QV_SPARSE_CSR || out->format == QV_SPARSE_CSC) {
    int64_t *p = owned_copy(c->ptr, &c->own_ptr, c->nmajor + 1);
    int64_t *x = owned_copy(c->idx, &c->own_idx, c->nnz);
    uint8_t *v = owned_vals(c);
    if (p == NULL || x == NULL || v == NULL) {
      qvi_sp_free(p);
      qvi_sp_free(x);
      qvi_sp_free(v);
      return qvi_sp_nomem(error, "CSR/CSC", c->nnz, 16);
    }
    return qvi_sp_finish_csx(out, p, x, v, c->nnz, itype, error);
  }
  if (out->format == QV_SPARSE_CSF) return emit_csf(c, out, itype, error);
  /* COO: the rows of the CSR spelled out */
  SpEntries e;
  memset(&e, 0, sizeof e);
  e.ndim = 2;
  e.shape = out->shape;
  e.vtype = c->vtype;
  e.vsize = c->vs;
  e.n = c->nnz;
  e.coords = c->nnz <= INT64_MAX / 2 ? qvi_sp_malloc(2 * c->nnz, 8) : NULL;
  if (e.coords == NULL) return qvi_sp_nomem(error, "COO coordinates", c->nnz, 16);
  e.own_coords = true;
  e.values = c->own_vals ? c->own_vals : (uint8_t *)(uintptr_t)c->vals;
  e.own_values = c->own_vals != NULL;
  c->own_vals = NULL;
  e.sorted = e.unique = true;
  e.order[0] = 0;
  e.order[1] = 1;
  for (int64_t r = 0; r < c->nmajor; r++)
    for (int64_t k = c->ptr[r]; k < c->ptr[r + 1]; k++) {
      e.coords[2 * k] = r;
      e.coords[2 * k + 1] = c->idx[k];
    }
  QvStatus st = qvi_sp_build(&e, out, itype, NULL, error);
  qvi_sp_entries_free(&e);
  return st;
}

int qvi_sp_csx_orientation(QvSparseFormat format, const int32_t *axis) {
  switch (format) {
    case QV_SPARSE_CSC: return 1;
    case QV_SPARSE_CSF: return axis ? axis[0] : 0;
    default: return 0;
  }
}
