/* Stride kernels shared by the adapters that turn tensors into columns
 * (adapters/migrate.c, adapters/tensor_column.c). */
#ifndef QUIVER_UTIL_STRIDES_H
#define QUIVER_UTIL_STRIDES_H

#include <stdbool.h>
#include <stdint.h>

/* Whether dims shape[0, nd) with byte strides strides[0, nd) of
 * `elem_size`-byte elements are a permutation of a row-major layout: fills
 * order[k] = the dim at physical position k. The dims of extent > 1 are
 * stably sorted by stride, largest first, and put back in their own
 * places; an extent-1 dim (whose stride means nothing) keeps its place, so
 * a C-order [3, 1, 3] needs no permutation. */
#define QVI_STRIDES_MAX_NDIM 64 /* QV_TENSOR_MAX_NDIM: callers check it statically */
bool qvi_permuted_row_major(int32_t nd, const int64_t *shape, const int64_t *strides,
                            int64_t elem_size, int32_t *order);

#endif
