/* Sparse -> sparse conversions, COO canonicalization and value equality:
 * 2-D tensors through CSX arrays (sparse_csx.c), others through the
 * entries working form (sparse_entries.c); never through the dense tensor,
 * except qv_sparse_equal_dense which has a dense operand anyway. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "sparse/sparse_internal.h"
#include "sparse/sparse_pool.h"
#include "sparse/sparse_seal.h"
#include "util/cpu.h"

QvStatus qv_sparse_convert(const QvSparseTensor *t, QvSparseFormat format,
                           const QvSparseOptions *options, QvSparseTensor *out, QvError *error) {
  if (out == NULL) return qv_error_set(error, QV_EARG, "sparse conversion: out is NULL");
  if (out == t) return qv_error_set(error, QV_EARG, "sparse conversion: out must not be the input");
  memset(out, 0, sizeof *out);
  if (t == NULL) return qv_error_set(error, QV_EARG, "sparse conversion: tensor is NULL");
  /* 2-D through CSX arrays, whose indptr is O(extent): always for CSR/CSC
   * outputs (they have that indptr anyway), otherwise only while the
   * extents are O(nnz) so that memory stays proportional to nnz */
  int64_t lim = t->nnz > (INT64_MAX - 65536) / 2 ? INT64_MAX : 2 * t->nnz + 65536;
  bool small = t->ndim == 2 && t->shape != NULL && t->shape[0] <= lim && t->shape[1] <= lim;
  bool pipeline = t->ndim == 2 && (small || format == QV_SPARSE_CSR || format == QV_SPARSE_CSC);
  /* a sealed tensor (a library reader's, or a conversion's result, both
   * unchanged since) is valid: its scan would cost ~10% of a transpose.
   * Grouping a non-canonical COO range-checks every pair in its first pass. */
  if (qvi_sp_sealed(t)) {
    qvi_path_hit(QV_PATH_SPARSE_CONVERT_SEALED);
  } else {
    qvi_path_hit(QV_PATH_SPARSE_CONVERT_VALIDATED);
    QvStatus st = qvi_sp_validate(t, !(pipeline && t->format == QV_SPARSE_COO), error);
    if (st != QV_OK) return st;
  }
  return qvi_sp_produce(NULL, t, pipeline, format, options, out, error);
}

/* A writable int64 copy of n entries of an index buffer (validated). */
static int64_t *int64_copy(const uint8_t *src, QvArrowType type, int64_t n, QvError *error) {
  const int64_t *view;
  int64_t *owned;
  if (qvi_sp_int64_view(src, type, n, &view, &owned, error) != QV_OK) return NULL;
  if (owned != NULL) return owned;
  int64_t *w = qvi_sp_malloc(n, 8);
  if (w == NULL) {
    qvi_sp_nomem(error, "sparse index", n, 8);
    return NULL;
  }
  if (n > 0) memcpy(w, view, (size_t)n * 8);
  return w;
}

/* CSR/CSC canonicalization: the indices within each row (column) sorted,
 * repeated ones summed in entry order (qvi_sp_csx_sum_rows), into new
 * buffers of the input's types (or options' index type for both). */
static QvStatus canonicalize_csx(const QvSparseTensor *t, const QvSparseOptions *o, int threads,
                                 QvSparseTensor *out, QvError *error) {
  const char *fmt = t->format == QV_SPARSE_CSR ? "CSR" : "CSC";
  QvStatus st = qvi_sp_validate_any_order(t, error);
  if (st != QV_OK) return st;
  QvArrowType pt = o->index_type != QV_ARROW_NONE ? o->index_type : t->indptr_type;
  QvArrowType it = o->index_type != QV_ARROW_NONE ? o->index_type : t->index_type;
  if (o->index_type != QV_ARROW_NONE && !qvi_sp_is_index_type(o->index_type))
    return qv_error_set(error, QV_EARG, "sparse conversion: index type %s is not an integer type",
                        qv_arrow_type_name(o->index_type));
  if (o->max_output_size < 0)
    return qv_error_set(error, QV_EARG, "sparse conversion: max_output_size is negative");
  int64_t nmajor = t->indptr_len - 1, nminor = t->shape[t->format == QV_SPARSE_CSR ? 1 : 0];
  size_t vs = qv_arrow_type_size(t->value_type);
  /* the output is at most as large as the input: bound it by that */
  int64_t limit = o->max_output_size ? o->max_output_size : QV_DEFAULT_MAX_OUTPUT_SIZE, bound;
  if (!qvi_mul_add_i64(t->nnz, (int64_t)(qv_arrow_type_size(it) + vs),
                       (nmajor + 1) * (int64_t)qv_arrow_type_size(pt), &bound))
    bound = INT64_MAX;
  if (bound > limit)
    return qv_error_set(error, QV_ELIMIT,
                        "sparse conversion: output of up to %" PRId64
                        " bytes exceeds the limit of %" PRId64 " (max_output_size)",
                        bound, limit);
  char what[32];
  snprintf(what, sizeof what, "%s indices", fmt);
  if (nminor - 1 > qvi_sp_index_max(it) && t->nnz > 0) {
    /* a narrower index type than the input's: the first index too big */
    for (int64_t k = 0; k < t->nnz; k++) {
      int64_t v = qv_index_load(t->indices, t->index_type, k);
      if (v > qvi_sp_index_max(it)) {
        char where[48];
        snprintf(where, sizeof where, "at position %" PRId64, k);
        return qvi_sp_fit_error(error, what, v, where, it);
      }
    }
  }
  if (t->nnz > qvi_sp_index_max(pt)) {
    snprintf(what, sizeof what, "%s indptr", fmt);
    return qvi_sp_fit_error(error, what, t->nnz, "(nnz, the last indptr entry)", pt);
  }
  st = qvi_sp_begin(out, t->format, t->value_type, 2, t->shape, t->dim_names, error);
  if (st != QV_OK) return st;
  QvPool *pool = NULL;
  if (threads > 1 && t->nnz >= SP_MIN_THREADED_NNZ) (void)qvi_pool_new(&pool, threads, NULL);
  QvPool *prev_pool = qvi_sp_pool_enter(pool);
  QvSparseWorkspace *prev = qvi_sp_ws_enter(o->workspace);
  int64_t *ptr = int64_copy(t->indptr, t->indptr_type, nmajor + 1, error);
  int64_t *idx = ptr ? int64_copy(t->indices, t->index_type, t->nnz, error) : NULL;
  uint8_t *vals = idx ? qvi_sp_malloc(t->nnz, vs) : NULL;
  uint8_t *p = NULL, *x = NULL;
  if (ptr == NULL || idx == NULL) {
    st = QV_ENOMEM; /* int64_copy said so */
  } else if (vals == NULL) {
    st = qvi_sp_nomem(error, fmt, t->nnz, vs);
  } else {
    if (t->nnz > 0) memcpy(vals, t->values, (size_t)t->nnz * vs);
    int64_t nnz = qvi_sp_csx_sum_rows(ptr, nmajor, idx, vals, t->value_type);
    bool tp = false, tx = false;
    if (nnz < 0) {
      st = qvi_sp_nomem(error, fmt, t->nnz, 32);
    } else if ((p = qvi_sp_narrow(ptr, true, nmajor + 1, 1, pt, &tp)) == NULL ||
               (x = qvi_sp_narrow(idx, true, nnz, 1, it, &tx)) == NULL) {
      st = qvi_sp_nomem(error, fmt, t->nnz, 8);
    } else {
      qvi_sp_own(out, p);
      qvi_sp_own(out, x);
      qvi_sp_own(out, vals);
      out->values = vals;
      vals = NULL;
      out->indptr_type = pt;
      out->index_type = it;
      out->indptr = p;
      out->indices = x;
      out->indptr_len = nmajor + 1;
      out->indices_len = nnz;
      out->nnz = nnz;
      p = x = NULL;
    }
    if (tp) ptr = NULL;
    if (tx) idx = NULL;
  }
  qvi_sp_free(ptr);
  qvi_sp_free(idx);
  qvi_sp_free(vals);
  qvi_sp_free(p);
  qvi_sp_free(x);
  /* the result is checked as every reader's is; it is the library's own
   * memory, so a writer need not check it again (sparse_seal.h) */
  if (st == QV_OK) st = qvi_sp_validate_pool(out, true, pool, error);
  if (st == QV_OK) qvi_sp_seal(out);
  qvi_sp_ws_leave(prev);
  qvi_sp_pool_leave(prev_pool);
  qvi_pool_free(pool);
  if (st != QV_OK) qv_sparse_reset(out);
  return st;
}

QvStatus qv_sparse_canonicalize(const QvSparseTensor *t, const QvSparseOptions *options, QvSparseTensor *out,
                                QvError *error) {
  if (t == NULL || out == NULL) return qv_error_set(error, QV_EARG, "canonicalize: NULL argument");
  if (out == t) return qv_error_set(error, QV_EARG, "canonicalize: out must not be the input");
  memset(out, 0, sizeof *out);
  if (t->format != QV_SPARSE_COO && t->format != QV_SPARSE_CSR && t->format != QV_SPARSE_CSC)
    return qv_error_set(error, QV_EARG, "canonicalize: input is %s, not COO, CSR or CSC",
                        qv_sparse_format_name(t->format));
  QvSparseOptions o;
  int threads;
  QvStatus st = qvi_sp_load_options(options, &o, &threads, error);
  if (st != QV_OK) return st;
  if (t->format != QV_SPARSE_COO) return canonicalize_csx(t, &o, threads, out, error);
  o.struct_size = sizeof o;
  if (o.index_type == QV_ARROW_NONE) o.index_type = t->index_type; /* kept unless asked */
  return qv_sparse_convert(t, QV_SPARSE_COO, &o, out, error);
}

/* Entries in canonical order (sorted row-major, duplicates summed). */
static bool canonical_entries(const QvSparseTensor *t, SpEntries *e) {
  if (qvi_sp_entries_from_sparse(t, e, NULL) != QV_OK) return false;
  int32_t ident[QV_TENSOR_MAX_NDIM];
  for (int32_t d = 0; d < t->ndim; d++) ident[d] = d;
  if (qvi_sp_entries_sort(e, ident, NULL) != QV_OK) {
    qvi_sp_entries_free(e);
    return false;
  }
  return true;
}

static bool same_shape(const QvSparseTensor *a, int32_t ndim, const int64_t *shape) {
  if (a->ndim != ndim) return false;
  for (int32_t d = 0; d < ndim; d++)
    if (a->shape[d] != shape[d]) return false;
  return true;
}

bool qv_sparse_equal(const QvSparseTensor *a, const QvSparseTensor *b) {
  if (a == NULL || b == NULL || qv_sparse_validate(a, NULL) != QV_OK || qv_sparse_validate(b, NULL) != QV_OK)
    return false;
  if (a->value_type != b->value_type || !same_shape(a, b->ndim, b->shape)) return false;
  SpEntries ea, eb;
  if (!canonical_entries(a, &ea)) return false;
  if (!canonical_entries(b, &eb)) {
    qvi_sp_entries_free(&ea);
    return false;
  }
  /* merge walk over both canonical lists, explicit zeros skipped */
  uint64_t mask = qvi_sp_zero_mask(a->value_type);
  size_t vs = ea.vsize;
  int32_t nd = a->ndim;
  int64_t i = 0, j = 0;
  bool eq = true;
  for (;;) {
    while (i < ea.n && (qvi_ld_bits(ea.values + (size_t)i * vs, vs) & mask) == 0) i++;
    while (j < eb.n && (qvi_ld_bits(eb.values + (size_t)j * vs, vs) & mask) == 0) j++;
    if (i == ea.n || j == eb.n) {
      eq = i == ea.n && j == eb.n;
      break;
    }
    if (memcmp(ea.coords + i * nd, eb.coords + j * nd, (size_t)nd * 8) != 0 ||
        !qvi_sp_value_equal(a->value_type, ea.values + (size_t)i * vs, eb.values + (size_t)j * vs)) {
      eq = false;
      break;
    }
    i++;
    j++;
  }
  qvi_sp_entries_free(&ea);
  qvi_sp_entries_free(&eb);
  return eq;
}

bool qv_sparse_equal_dense(const QvSparseTensor *t, const QvTensor *dense) {
  if (t == NULL || dense == NULL || qv_sparse_validate(t, NULL) != QV_OK) return false;
  if (t->value_type != dense->type || !same_shape(t, dense->ndim, dense->shape)) return false;
  QvTensor tmp;
  if (qv_sparse_to_dense(t, NULL, &tmp, NULL) != QV_OK) return false;
  bool eq = qv_tensor_equal(&tmp, dense, true);
  qv_tensor_reset(&tmp);
  return eq;
}
