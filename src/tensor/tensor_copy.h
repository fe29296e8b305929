/* The tensor model's copies split over a thread pool, for the adapters
 * that copy tensors with the threads their options give (tensor columns);
 * the rest of the model's internals stay in tensor_internal.h. */
#ifndef QUIVER_TENSOR_COPY_H
#define QUIVER_TENSOR_COPY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "quiver/tensor.h"
#include "util/pool.h"

/* Copies split over a pool's threads by ranges of the leading index of a
 * row-major destination (qv_tensor_copy_to / qv_tensor_copy otherwise;
 * pool may be NULL). Copies under QV_COPY_THREADS_MIN bytes, column-major
 * ones and 0-d tensors stay on the caller. Bumps QV_PATH_TENSOR_COPY_THREADS
 * once per split copy. The bytes are the same for any pool. */
#define QV_COPY_THREADS_MIN ((int64_t)4 << 20)
#define QV_COPY_TASK_MIN ((int64_t)1 << 20)
QvStatus qvi_tensor_copy_to_pool(const QvTensor *src, bool column_major, void *dst,
                                size_t dst_size, QvPool *pool, QvError *error);
QvStatus qvi_tensor_copy_pool(const QvTensor *src, bool column_major, QvPool *pool, QvTensor *out,
                             QvError *error);
/* How many ranges a copy of `total` bytes over `leading` leading indices
 * takes on `threads` threads (1: no split). */
int64_t qvi_tensor_copy_tasks(int64_t leading, int64_t total, int threads);

#endif
