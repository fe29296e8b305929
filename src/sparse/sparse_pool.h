/* The sparse model's checks on a thread pool (qv_sparse_init with
 * desc->threads): the full validation of a large CSR/CSC splits its index
 * scan across the pool's threads. The result, and the message naming the
 * first bad entry, are those of one thread. */
#ifndef QV_SPARSE_POOL_H
#define QV_SPARSE_POOL_H

#include <stdbool.h>

#include "quiver/sparse.h"
#include "util/pool.h"

/* Below this many entries one thread scans (a run of the pool costs a few
 * microseconds of wake-ups). */
#define QVI_SP_VALIDATE_POOL_MIN_NNZ ((int64_t)1 << 18)

/* qv_sparse_validate (coords: see qvi_sp_validate) with pool (may be NULL). */
QvStatus qvi_sp_validate_pool(const QvSparseTensor *t, bool coords, QvPool *pool, QvError *error);

#endif
