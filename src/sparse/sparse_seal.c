/* Seals of validated tensors (see sparse_seal.h). */
#include "sparse/sparse_seal.h"

#include <string.h>

#include "sparse/sparse_internal.h"

void qvi_sp_seal(QvSparseTensor *t) {
  SpStore *s = t ? (SpStore *)t->private_data : NULL;
  if (s == NULL || t->format == QV_SPARSE_CSF || t->shape != s->shape) return;
  s->seal = *t;
  memcpy(s->seal_shape, s->shape, sizeof s->seal_shape);
  s->sealed = true;
}

bool qvi_sp_sealed(const QvSparseTensor *t) {
  if (t == NULL || t->private_data == NULL) return false;
  const SpStore *s = (const SpStore *)t->private_data;
  const QvSparseTensor *a = &s->seal;
  /* field by field: a struct compare would read padding */
  return s->sealed && t->format == a->format && t->value_type == a->value_type &&
         t->index_type == a->index_type && t->indptr_type == a->indptr_type &&
         t->ndim == a->ndim && t->shape == a->shape && t->dim_names == a->dim_names &&
         t->nnz == a->nnz && t->values == a->values && t->coords == a->coords &&
         t->coords_strides[0] == a->coords_strides[0] &&
         t->coords_strides[1] == a->coords_strides[1] && t->is_canonical == a->is_canonical &&
         t->indptr == a->indptr && t->indices == a->indices && t->indptr_len == a->indptr_len &&
         t->indices_len == a->indices_len && t->axis_order == a->axis_order &&
         t->csf_indptr == a->csf_indptr && t->csf_indptr_len == a->csf_indptr_len &&
         t->csf_indices == a->csf_indices && t->csf_indices_len == a->csf_indices_len &&
         t->owner == a->owner && t->private_data == a->private_data &&
         memcmp(s->shape, s->seal_shape, sizeof s->seal_shape) == 0;
}
