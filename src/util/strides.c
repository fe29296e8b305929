#include "util/strides.h"

bool qvi_permuted_row_major(int32_t nd, const int64_t *shape, const int64_t *strides,
                            int64_t elem_size, int32_t *order) {
  int32_t pos[QVI_STRIDES_MAX_NDIM], dims[QVI_STRIDES_MAX_NDIM], n = 0;
  if (nd < 0 || nd > QVI_STRIDES_MAX_NDIM) return false;
  for (int32_t k = 0; k < nd; k++) {
    order[k] = k;
    if (shape[k] != 1) pos[n] = k, dims[n++] = k;
  }
  for (int32_t a = 1; a < n; a++) {
    int32_t x = dims[a], b = a;
    while (b > 0 && strides[x] > strides[dims[b - 1]]) {
      dims[b] = dims[b - 1];
      b--;
    }
    dims[b] = x;
  }
  for (int32_t k = 0; k < n; k++) order[pos[k]] = dims[k];
  int64_t expect = elem_size;
  for (int32_t k = nd - 1; k >= 0; k--) {
    int64_t ext = shape[order[k]];
    if (ext != 1 && strides[order[k]] != expect) return false;
    expect *= ext;
  }
  return true;
}
