/* The sparse model's calls for the adapters that assemble a sparse tensor
 * from parts they checked already (a sparse column's cells): a tensor
 * started with a store, buffers handed to it, the init that skips the
 * validation, and the entry check and index naming qv_sparse_validate
 * uses. The rest of the model's internals stay in sparse_internal.h. */
#ifndef QUIVER_SPARSE_PARTS_H
#define QUIVER_SPARSE_PARTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "quiver/sparse.h"

/* Whether the entries of a CSR/CSC tensor whose indptr is already known
 * valid (starts at 0, non-decreasing, ends at nnz) are in [0, nminor) and
 * strictly increasing within each of the nmajor segments, by the vector
 * scan of qv_sparse_validate. False also when the index types have no such
 * scan (int32/int64 only): the caller then checks entry by entry, and names
 * the first bad one. */
bool qvi_sp_csx_entries_ok(const QvSparseTensor *t, int64_t nmajor, int64_t nminor);

/* qv_sparse_init without the validation: for a descriptor whose every rule
 * the caller proved already over memory that cannot have changed since
 * (a sparse column's cell, checked when the column was made). */
QvStatus qvi_sp_init_checked(QvSparseTensor *out, const QvSparseDesc *desc, QvError *error);

/* Starts *out (zeroed first) with a store holding copies of shape and names. */
QvStatus qvi_sp_begin(QvSparseTensor *out, QvSparseFormat format, QvArrowType value_type,
                  int32_t ndim, const int64_t *shape, const char *const *dim_names,
                  QvError *error);
/* Hands an qvi_sp_malloc'd buffer to the tensor's store (freed on release). */
void qvi_sp_own(QvSparseTensor *t, void *p);

/* Buffers (sparse_alloc.c): n * size bytes, overflow-checked, 64-byte
 * aligned, never NULL for n == 0 (at least 1 byte); NULL on overflow or
 * failure. Released only with qvi_sp_free. Large ones use huge pages. */
void *qvi_sp_malloc(int64_t n, size_t size);
void *qvi_sp_calloc(int64_t n, size_t size);
void *qvi_sp_realloc(void *p, int64_t n, size_t size);
void qvi_sp_free(void *p);

/* QV_ENOMEM naming what n * size bytes were for. */
QvStatus qvi_sp_nomem(QvError *error, const char *what, int64_t n, size_t size);

/* Formats entry i of an index buffer with its own signedness. */
void qvi_sp_index_str(const uint8_t *buf, QvArrowType type, int64_t i, char out[32]);

#endif
