/* The sparse model's checks on a thread pool, for library readers that
 * have one (the .npz reader): the full validation of a large CSR/CSC
 * splits its index scan across the pool's threads. The result, and the
 * message naming the first bad entry, are those of one thread. */
#ifndef QV_SPARSE_POOL_H
#define QV_SPARSE_POOL_H

#include <stdbool.h>

#include "quiver/sparse.h"
#include "util/pool.h"

/* qv_sparse_validate (coords: see qvi_sp_validate) with pool (may be NULL). */
QvStatus qvi_sp_validate_pool(const QvSparseTensor *t, bool coords, QvPool *pool, QvError *error);
/* qv_sparse_init, validating with pool (may be NULL). */
QvStatus qvi_sp_init_pool(QvSparseTensor *out, const QvSparseDesc *desc, QvPool *pool,
                         QvError *error);

#endif
