/* qv_tensor_cast: a dense tensor's values in another numeric type, through
 * the one cast kernel (util/value_cast.h). */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "quiver/tensor.h"
#include "util/value_cast.h"

QvStatus qv_tensor_cast(const QvTensor *src, QvArrowType value_type, QvTensor *out,
                        QvError *error) {
  memset(out, 0, sizeof *out);
  if (!(value_type >= QV_ARROW_INT8 && value_type < QV_ARROW_NUMERIC_END))
    return qv_error_set(error, QV_EINVAL, "a tensor's value type must be numeric, not %s",
                        qv_arrow_type_name(value_type));
  int32_t ndim = src->ndim;
  /* column-major stays column-major; anything else becomes row-major */
  bool col = ndim > 1 && qv_tensor_is_column_major(src) && !qv_tensor_is_row_major(src);
  void *data = NULL;
  QvStatus st =
      qv_tensor_alloc(out, value_type, ndim, src->shape, src->dim_names, col, &data, error);
  if (st) return st;
  int64_t n = qv_tensor_n_elements(src);
  if (n == 0) return QV_OK;
  /* walk the source in the output's order, one run along the fastest dim
   * (the last for row-major, the first for column-major) at a time */
  int inner = ndim == 0 ? -1 : col ? 0 : ndim - 1;
  int64_t run = inner < 0 ? 1 : src->shape[inner];
  int64_t run_stride = inner < 0 ? 0 : src->strides[inner];
  int64_t idx[QV_TENSOR_MAX_NDIM] = {0};
  size_t out_size = qv_arrow_type_size(value_type);
  uint8_t *dst = data;
  for (int64_t done = 0; done < n; done += run) {
    int64_t off = 0;
    for (int32_t k = 0; k < ndim; k++) off += idx[k] * src->strides[k];
    int64_t bad = 0;
    if ((st = qvi_values_cast(src->type, src->data + off, run_stride, value_type,
                              dst + (size_t)done * out_size, run, &bad, error))) {
      if (inner >= 0) idx[inner] = bad;
      char where[32 * QV_TENSOR_MAX_NDIM + 4];
      size_t w = 0;
      where[w++] = '[';
      for (int32_t k = 0; k < ndim && w < sizeof where - 24; k++)
        w += (size_t)snprintf(where + w, sizeof where - w, "%s%" PRId64, k ? ", " : "", idx[k]);
      snprintf(where + w, sizeof where - w, "]");
      qv_tensor_reset(out);
      return qv_error_prefix(error, "element %s", where);
    }
    /* next run: odometer over the other dims, in the output's order */
    if (col) {
      for (int32_t k = 1; k < ndim; k++) {
        if (++idx[k] < src->shape[k]) break;
        idx[k] = 0;
      }
    } else {
      for (int32_t k = ndim - 2; k >= 0; k--) {
        if (++idx[k] < src->shape[k]) break;
        idx[k] = 0;
      }
    }
  }
  return QV_OK;
}
