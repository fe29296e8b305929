/* Sparse -> sparse conversions, COO canonicalization and value equality:
 * 2-D tensors through CSX arrays (sparse_csx.c), others through the
 * entries working form (sparse_entries.c); never through the dense tensor,
 * except qv_sparse_equal_dense which has a dense operand anyway. */
#include <stdlib.h>

#include "sparse/sparse_internal.h"
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

QvStatus qv_sparse_canonicalize(const QvSparseTensor *coo, const QvSparseOptions *options, QvSparseTensor *out,
                                QvError *error) {
  if (coo == NULL || out == NULL) return qv_error_set(error, QV_EARG, "COO canonicalize: NULL argument");
  memset(out, 0, sizeof *out);
  if (coo->format != QV_SPARSE_COO)
    return qv_error_set(error, QV_EARG, "COO canonicalize: input is %s, not COO",
                        qv_sparse_format_name(coo->format));
  QvSparseOptions o;
  int threads;
  QvStatus st = qvi_sp_load_options(options, &o, &threads, error);
  if (st != QV_OK) return st;
  o.struct_size = sizeof o;
  if (o.index_type == QV_ARROW_NONE) o.index_type = coo->index_type; /* kept unless asked */
  return qv_sparse_convert(coo, QV_SPARSE_COO, &o, out, error);
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
