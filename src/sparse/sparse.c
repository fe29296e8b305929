/* Sparse tensors: names, storage, views over caller memory, index loads,
 * density and value helpers. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "quiver/advanced.h"
#include "sparse/sparse_internal.h"
#include "sparse/sparse_pool.h"
#include "sparse/sparse_seal.h"

const char *qv_sparse_format_name(QvSparseFormat format) {
  switch (format) {
    case QV_SPARSE_COO: return "coo";
    case QV_SPARSE_CSR: return "csr";
    case QV_SPARSE_CSC: return "csc";
    case QV_SPARSE_CSF: return "csf";
    default: return "?";
  }
}

QvStatus qv_sparse_format_parse(const char *name, QvSparseFormat *out, QvError *error) {
  if (name == NULL || out == NULL) return qv_error_set(error, QV_EARG, "sparse format: NULL argument");
  static const char *const names[] = {"coo", "csr", "csc", "csf"};
  for (int i = 0; i < 4; i++) {
    const char *a = name, *b = names[i];
    while (*a && *b && (*a | 0x20) == *b) a++, b++; /* ASCII case-insensitive */
    if (*a == 0 && *b == 0) {
      *out = (QvSparseFormat)(i + 1);
      return QV_OK;
    }
  }
  return qv_error_set(error, QV_EINVAL, "unknown sparse format '%.64s' (expected coo, csr, csc or csf)",
                      name);
}

/* ---- allocation and storage */

QvStatus qvi_sp_nomem(QvError *error, const char *what, int64_t n, size_t size) {
  return qv_error_set(error, QV_ENOMEM, "%s: cannot allocate %" PRId64 " x %zu bytes", what, n, size);
}

static void sp_store_free(SpStore *s) {
  if (s == NULL) return;
  for (int i = 0; i < s->n_owned; i++) qvi_sp_free(s->owned[i]);
  free(s->name_block);
  free(s);
}

void qv_sparse_reset(QvSparseTensor *t) {
  if (t == NULL) return;
  sp_store_free((SpStore *)t->private_data);
  qv_owner_free(t->owner);
  memset(t, 0, sizeof *t);
}

void qvi_sp_own(QvSparseTensor *t, void *p) {
  SpStore *s = (SpStore *)t->private_data;
  /* the store has room for every buffer a sparse tensor can have */
  if (s->n_owned < SP_MAX_OWNED) s->owned[s->n_owned++] = p;
}

QvStatus qvi_sp_begin(QvSparseTensor *out, QvSparseFormat format, QvArrowType value_type,
                  int32_t ndim, const int64_t *shape, const char *const *dim_names,
                  QvError *error) {
  memset(out, 0, sizeof *out);
  if (value_type < QV_ARROW_INT8 || value_type >= QV_ARROW_NUMERIC_END)
    return qv_error_set(error, QV_EARG, "sparse tensor: invalid value type %d", (int)value_type);
  if (ndim < 1) return qv_error_set(error, QV_EINVAL, "sparse tensor: ndim %d, need at least 1", (int)ndim);
  if (ndim > QV_TENSOR_MAX_NDIM)
    return qv_error_set(error, QV_ELIMIT, "sparse tensor: ndim %d exceeds the limit of %d", (int)ndim,
                        QV_TENSOR_MAX_NDIM);
  if (shape == NULL) return qv_error_set(error, QV_EARG, "sparse tensor: shape is NULL");
  SpStore *s = calloc(1, sizeof *s);
  if (s == NULL) return qv_error_set(error, QV_ENOMEM, "sparse tensor: out of memory");
  memcpy(s->shape, shape, (size_t)ndim * sizeof *shape);
  if (dim_names != NULL) {
    size_t total = 0;
    for (int32_t i = 0; i < ndim; i++) {
      if (dim_names[i] == NULL) {
        free(s);
        return qv_error_set(error, QV_EARG, "sparse tensor: dim_names[%d] is NULL", (int)i);
      }
      total += strlen(dim_names[i]) + 1;
    }
    s->name_block = malloc(total);
    if (s->name_block == NULL) {
      free(s);
      return qv_error_set(error, QV_ENOMEM, "sparse tensor: out of memory");
    }
    char *p = s->name_block;
    for (int32_t i = 0; i < ndim; i++) {
      size_t len = strlen(dim_names[i]) + 1;
      memcpy(p, dim_names[i], len);
      s->names[i] = p;
      p += len;
    }
  }
  out->format = format;
  out->value_type = value_type;
  out->index_type = QV_ARROW_INT64;
  out->indptr_type = QV_ARROW_INT64;
  out->ndim = ndim;
  out->shape = s->shape;
  out->dim_names = dim_names ? s->names : NULL;
  out->private_data = s;
  return QV_OK;
}

/* ---- index types */

bool qvi_sp_is_index_type(QvArrowType t) { return t >= QV_ARROW_INT8 && t <= QV_ARROW_UINT64; }

int64_t qvi_sp_index_max(QvArrowType t) {
  switch (t) {
    case QV_ARROW_INT8: return INT8_MAX;
    case QV_ARROW_INT16: return INT16_MAX;
    case QV_ARROW_INT32: return INT32_MAX;
    case QV_ARROW_UINT8: return UINT8_MAX;
    case QV_ARROW_UINT16: return UINT16_MAX;
    case QV_ARROW_UINT32: return UINT32_MAX;
    default: return INT64_MAX;
  }
}

int64_t qv_index_load(const uint8_t *buf, QvArrowType index_type, int64_t i) {
  if (!qvi_sp_is_index_type(index_type)) return -1;
  int64_t v = qvi_sp_index_ld(buf, index_type, i);
  return v < 0 && index_type == QV_ARROW_UINT64 ? -1 : v;
}

void qvi_sp_index_str(const uint8_t *buf, QvArrowType type, int64_t i, char out[32]) {
  if (type == QV_ARROW_UINT64) {
    uint64_t v;
    memcpy(&v, buf + i * 8, 8);
    snprintf(out, 32, "%" PRIu64, v);
  } else {
    snprintf(out, 32, "%" PRId64, qv_index_load(buf, type, i));
  }
}

/* ---- values */

uint64_t qvi_sp_zero_mask(QvArrowType type) {
  switch (type) {
    case QV_ARROW_FLOAT16: return 0x7fffu;
    case QV_ARROW_FLOAT32: return 0x7fffffffu;
    case QV_ARROW_FLOAT64: return UINT64_C(0x7fffffffffffffff);
    default: {
      size_t w = qv_arrow_type_size(type);
      return w >= 8 ? UINT64_MAX : (UINT64_C(1) << (8 * w)) - 1;
    }
  }
}

void qvi_sp_value_add(QvArrowType type, uint8_t *dst, const uint8_t *src) {
  switch (type) {
    case QV_ARROW_FLOAT16:
      qvi_st_u16(dst, qv_float_to_half(qv_half_to_float(qvi_ld_u16(dst)) +
                                      qv_half_to_float(qvi_ld_u16(src))));
      break;
    case QV_ARROW_FLOAT32: {
      float r = qvi_ld_f32(dst) + qvi_ld_f32(src);
      memcpy(dst, &r, 4);
      break;
    }
    case QV_ARROW_FLOAT64: {
      double r = qvi_ld_f64(dst) + qvi_ld_f64(src);
      memcpy(dst, &r, 8);
      break;
    }
    default: {
      /* two's complement wrap-around, done unsigned to stay defined */
      size_t w = qv_arrow_type_size(type);
      qvi_st_bits(dst, w, qvi_ld_bits(dst, w) + qvi_ld_bits(src, w));
      break;
    }
  }
}

/* Floats compare by value (-0.0 == 0.0), NaN equal to NaN. */
static bool same_double(double x, double y) { return x == y || (x != x && y != y); }

bool qvi_sp_value_equal(QvArrowType type, const uint8_t *a, const uint8_t *b) {
  switch (type) {
    case QV_ARROW_FLOAT16:
      return same_double(qv_half_to_float(qvi_ld_u16(a)), qv_half_to_float(qvi_ld_u16(b)));
    case QV_ARROW_FLOAT32: return same_double(qvi_ld_f32(a), qvi_ld_f32(b));
    case QV_ARROW_FLOAT64: return same_double(qvi_ld_f64(a), qvi_ld_f64(b));
    default: return memcmp(a, b, qv_arrow_type_size(type)) == 0;
  }
}

/* ---- density */

double qv_sparse_density(const QvSparseTensor *t) {
  if (t == NULL || t->shape == NULL) return 0.0;
  double size = 1.0;
  for (int32_t i = 0; i < t->ndim; i++) size *= (double)t->shape[i];
  return size > 0.0 ? (double)t->nnz / size : 0.0;
}

/* ---- views over caller memory */

static QvStatus init_coo(QvSparseTensor *out, const QvSparseDesc *d) {
  out->coords = d->coords;
  out->is_canonical = d->is_canonical;
  if (d->coords_strides != NULL) {
    out->coords_strides[0] = d->coords_strides[0];
    out->coords_strides[1] = d->coords_strides[1];
  } else {
    int64_t isize = (int64_t)qv_arrow_type_size(d->index_type);
    out->coords_strides[0] = (int64_t)d->ndim * isize;
    out->coords_strides[1] = isize;
  }
  return QV_OK;
}

static QvStatus init_csx(QvSparseTensor *out, const QvSparseDesc *d, QvError *error) {
  if (d->ndim != 2)
    return qv_error_set(error, QV_EINVAL, "sparse %s: ndim %d, a matrix needs 2",
                        qv_sparse_format_name(d->format), (int)d->ndim);
  out->indptr = d->indptr;
  out->indices = d->indices;
  int64_t major = d->shape[d->format == QV_SPARSE_CSR ? 0 : 1];
  out->indptr_len = major >= 0 && major < INT64_MAX ? major + 1 : -1;
  out->indices_len = d->nnz;
  return QV_OK;
}

static QvStatus init_csf(QvSparseTensor *out, const QvSparseDesc *d, QvError *error) {
  int32_t ndim = d->ndim;
  if (d->axis_order == NULL || d->csf_indices == NULL || d->csf_indices_len == NULL ||
      (ndim > 1 && (d->csf_indptr == NULL || d->csf_indptr_len == NULL)))
    return qv_error_set(error, QV_EARG, "sparse CSF: axis_order, indptr or indices array is NULL");
  SpStore *s = (SpStore *)out->private_data;
  for (int32_t l = 0; l < ndim; l++) {
    s->axis_order[l] = d->axis_order[l];
    s->csf_indices[l] = d->csf_indices[l];
    s->csf_indices_len[l] = d->csf_indices_len[l];
    if (l < ndim - 1) {
      s->csf_indptr[l] = d->csf_indptr[l];
      s->csf_indptr_len[l] = d->csf_indptr_len[l];
    }
  }
  qvi_sp_point_csf(out);
  return QV_OK;
}

void qvi_sp_point_csf(QvSparseTensor *t) {
  SpStore *s = (SpStore *)t->private_data;
  t->axis_order = s->axis_order;
  t->csf_indptr = s->csf_indptr;
  t->csf_indptr_len = s->csf_indptr_len;
  t->csf_indices = s->csf_indices;
  t->csf_indices_len = s->csf_indices_len;
}

static QvStatus sp_init(QvSparseTensor *out, const QvSparseDesc *desc, bool validate,
                        QvPool *pool, QvError *error) {
  if (out == NULL) return qv_error_set(error, QV_EARG, "sparse tensor: out is NULL");
  memset(out, 0, sizeof *out);
  if (desc == NULL) return qv_error_set(error, QV_EARG, "sparse tensor: descriptor is NULL");
  QvSparseFormat format = desc->format;
  if (format != QV_SPARSE_COO && format != QV_SPARSE_CSR && format != QV_SPARSE_CSC &&
      format != QV_SPARSE_CSF)
    return qv_error_set(error, QV_EARG, "sparse tensor: unknown format %d", (int)format);
  /* COO has no indptr: it takes the index type (the types are validated below) */
  QvArrowType indptr_type = format == QV_SPARSE_COO ? desc->index_type : desc->indptr_type;
  QvStatus st = qvi_sp_begin(out, format, desc->value_type, desc->ndim, desc->shape,
                            desc->dim_names, error);
  if (st != QV_OK) return st;
  out->index_type = desc->index_type;
  out->indptr_type = indptr_type;
  out->nnz = desc->nnz;
  out->values = desc->values;
  switch (format) {
    case QV_SPARSE_COO: st = init_coo(out, desc); break;
    case QV_SPARSE_CSF: st = init_csf(out, desc, error); break;
    default: st = init_csx(out, desc, error); break;
  }
  if (st != QV_OK) {
    qv_sparse_reset(out);
    return st;
  }
  out->owner = desc->owner;
  qv_owner_retain(desc->owner);
  if (!validate) return QV_OK;
  st = qvi_sp_validate_pool(out, true, pool, error);
  if (st != QV_OK) qv_sparse_reset(out);
  return st;
}

QvStatus qvi_sp_init_checked(QvSparseTensor *out, const QvSparseDesc *desc, QvError *error) {
  return sp_init(out, desc, false, NULL, error);
}

QvStatus qv_sparse_init(QvSparseTensor *out, const QvSparseDesc *desc, QvError *error) {
  if (out != NULL && desc != NULL && (desc->threads < 0 || desc->threads > QV_SPARSE_MAX_THREADS)) {
    memset(out, 0, sizeof *out);
    return qv_error_set(error, QV_EARG, "sparse tensor: threads %d outside 0..%d", desc->threads,
                        QV_SPARSE_MAX_THREADS);
  }
  /* a pool only where the validation splits its scan (its workers cost
   * more than a small scan) */
  QvPool *pool = NULL;
  if (out != NULL && desc != NULL && desc->threads > 1 &&
      (desc->format == QV_SPARSE_CSR || desc->format == QV_SPARSE_CSC) &&
      desc->nnz >= QVI_SP_VALIDATE_POOL_MIN_NNZ) {
    QvStatus st = qvi_pool_new(&pool, desc->threads, error);
    if (st != QV_OK) {
      memset(out, 0, sizeof *out);
      return st;
    }
  }
  QvStatus st = sp_init(out, desc, true, pool, error);
  qvi_pool_free(pool);
  /* the caller vouches that the validated indices stay as they are */
  if (st == QV_OK && desc->immutable) qvi_sp_seal(out);
  return st;
}
