/* qv_sparse_cast: a sparse tensor's values in another numeric type, through
 * the one cast kernel (util/value_cast.h); the index buffers are shared. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "quiver/buffer.h"
#include "quiver/sparse.h"
#include "sparse_internal.h"
#include "sparse_seal.h"
#include "util/value_cast.h"

/* The new values, and the input's owner, which keeps the shared index
 * buffers alive. */
typedef struct CastHold {
  void *values;
  QvOwner *parent;
} CastHold;

static void hold_release(void *p) {
  CastHold *h = p;
  qvi_sp_free(h->values);
  qv_owner_free(h->parent);
  free(h);
}

/* `t` holds buffers of its own (a conversion's result), which it frees on
 * reset: those cannot be shared. */
static bool holds_own_buffers(const QvSparseTensor *t) {
  const SpStore *s = (const SpStore *)t->private_data;
  return t->owner == NULL || (s != NULL && s->n_owned > 0);
}

/* A copy of `t` in its format and index type, whose values are then
 * replaced by the cast ones (a buffer of the copy's own). */
static QvStatus cast_copy(const QvSparseTensor *src, QvArrowType value_type, QvSparseTensor *out,
                          QvError *error) {
  QvSparseOptions o;
  memset(&o, 0, sizeof o);
  o.struct_size = sizeof o;
  o.index_type = src->index_type;
  o.axis_order = src->format == QV_SPARSE_CSF ? src->axis_order : NULL;
  QvStatus st = qv_sparse_convert(src, src->format, &o, out, error);
  if (st) return st;
  bool sealed = qvi_sp_sealed(out); /* new values leave its indices valid */
  size_t size = qv_arrow_type_size(value_type);
  void *values = qvi_sp_malloc(out->nnz, size);
  if (values == NULL) {
    qv_sparse_reset(out);
    return qv_error_set(error, QV_ENOMEM, "out of memory");
  }
  qvi_sp_own(out, values);
  int64_t bad = 0;
  st = qvi_values_cast(out->value_type, out->values, (int64_t)qv_arrow_type_size(out->value_type),
                       value_type, values, out->nnz, &bad, error);
  if (st) {
    int64_t nnz = out->nnz;
    qv_sparse_reset(out);
    return qv_error_prefix(error, "stored value %" PRId64 " of %" PRId64, bad, nnz);
  }
  out->values = values;
  out->value_type = value_type;
  if (sealed) qvi_sp_seal(out);
  return QV_OK;
}

QvStatus qv_sparse_cast(const QvSparseTensor *src, QvArrowType value_type, QvSparseTensor *out,
                        QvError *error) {
  memset(out, 0, sizeof *out);
  if (!(value_type >= QV_ARROW_INT8 && value_type < QV_ARROW_NUMERIC_END))
    return qv_error_set(error, QV_EINVAL, "a sparse tensor's value type must be numeric, not %s",
                        qv_arrow_type_name(value_type));
  if (holds_own_buffers(src)) return cast_copy(src, value_type, out, error);
  size_t size = qv_arrow_type_size(value_type);
  if (src->nnz < 0 || (uint64_t)src->nnz > (SIZE_MAX - 64) / size)
    return qv_error_set(error, QV_ELIMIT, "%" PRId64 " values do not fit in memory", src->nnz);
  CastHold *h = calloc(1, sizeof *h);
  void *values = qvi_sp_malloc(src->nnz, size);
  QvOwner *owner = h && values ? qv_owner_new(hold_release, h) : NULL;
  if (owner == NULL) {
    free(h);
    qvi_sp_free(values);
    return qv_error_set(error, QV_ENOMEM, "out of memory");
  }
  h->values = values;
  h->parent = src->owner;
  qv_owner_retain(src->owner);
  int64_t bad = 0;
  QvStatus st = qvi_values_cast(src->value_type, src->values,
                                (int64_t)qv_arrow_type_size(src->value_type), value_type, values,
                                src->nnz, &bad, error);
  if (st) {
    qv_owner_free(owner);
    return qv_error_prefix(error, "stored value %" PRId64 " of %" PRId64, bad, src->nnz);
  }
  QvSparseDesc d;
  memset(&d, 0, sizeof d);
  d.format = src->format;
  d.value_type = value_type;
  d.index_type = src->index_type;
  d.indptr_type = src->indptr_type;
  d.ndim = src->ndim;
  d.shape = src->shape;
  d.dim_names = src->dim_names;
  d.nnz = src->nnz;
  d.values = values;
  d.owner = owner;
  d.coords = src->coords;
  d.coords_strides = src->coords_strides;
  d.is_canonical = src->is_canonical;
  d.indptr = src->indptr;
  d.indices = src->indices;
  d.axis_order = src->axis_order;
  d.csf_indptr = (const void *const *)src->csf_indptr;
  d.csf_indptr_len = src->csf_indptr_len;
  d.csf_indices = (const void *const *)src->csf_indices;
  d.csf_indices_len = src->csf_indices_len;
  st = qv_sparse_init(out, &d, error);
  qv_owner_free(owner); /* the tensor holds its own reference now */
  return st;
}
