/* quiver: sparse tensors in memory (SparseTensor.fbs index kinds).
 *
 *  COO  an nnz x ndim matrix of coordinates (with its own byte strides) and
 *       nnz values; `is_canonical` = sorted row-major lexicographically with
 *       no duplicates.
 *  CSR / CSC  (SparseMatrixIndexCSX, 2-D only) indptr of length
 *       rows+1 (CSR) or cols+1 (CSC), indices of length nnz, sorted within
 *       each row/column.
 *  CSF  ndim levels in `axis_order`; indptr[l] (l < ndim-1) and indices[l]
 *       (l < ndim), the last level's indices holding exactly nnz entries.
 *
 * Values are the dense value types of tensor.h; index types are the integer
 * ones (int8..uint64; int64 by default). Memory is kept alive by a QvOwner,
 * so a sparse tensor can be a zero-copy view of a file. Zero means zero by
 * value: -0.0 is a zero, NaN is not. */
#ifndef QUIVER_SPARSE_H
#define QUIVER_SPARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "quiver/buffer.h"
#include "quiver/error.h"
#include "quiver/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum QvSparseFormat {
  QV_SPARSE_COO = 1,
  QV_SPARSE_CSR = 2,
  QV_SPARSE_CSC = 3,
  QV_SPARSE_CSF = 4
} QvSparseFormat;

/* "coo", "csr", "csc", "csf" */
const char *qv_sparse_format_name(QvSparseFormat format);
QvStatus qv_sparse_format_parse(const char *name, QvSparseFormat *out, QvError *error);

typedef struct QvSparseTensor {
  QvSparseFormat format;
  QvValueType value_type;
  QvValueType index_type;  /* COO coordinates; CSX/CSF indices */
  QvValueType indptr_type; /* CSX/CSF indptr (unused for COO) */
  int32_t ndim;
  const int64_t *shape;
  const char *const *dim_names; /* NULL or ndim names */
  int64_t nnz;
  const uint8_t *values;        /* nnz contiguous values */

  /* COO */
  const uint8_t *coords;        /* element (i, d) at coords + i*coords_strides[0] + d*coords_strides[1] */
  int64_t coords_strides[2];    /* bytes; row-major is {ndim*isize, isize} */
  bool is_canonical;

  /* CSR / CSC */
  const uint8_t *indptr;        /* rows+1 (CSR) or cols+1 (CSC) entries */
  const uint8_t *indices;       /* nnz entries */

  /* CSF: levels follow axis_order */
  const int32_t *axis_order;            /* ndim entries, a permutation */
  const uint8_t *const *csf_indptr;     /* ndim-1 buffers */
  const int64_t *csf_indptr_len;        /* entries per indptr buffer */
  const uint8_t *const *csf_indices;    /* ndim buffers */
  const int64_t *csf_indices_len;       /* entries per indices buffer; last == nnz */

  QvOwner *owner;     /* keeps the buffers alive; may be NULL */
  void *private_data; /* owned storage */
} QvSparseTensor;

void qv_sparse_release(QvSparseTensor *t);

/* Full validation: buffer lengths consistent with nnz/ndim/index width, every
 * coordinate inside the shape, a COO marked canonical really sorted and
 * unique, CSX indptr of the right length starting at 0, non-decreasing,
 * ending at nnz, indices in range and sorted within each row/column, CSF
 * levels consistent and axis_order a permutation. The message names the
 * buffer and position ("indptr is decreasing at position 4"). */
QvStatus qv_sparse_validate(const QvSparseTensor *t, QvError *error);

/* Views over caller memory (retaining `owner`), validated. */
QvStatus qv_sparse_make_coo(QvSparseTensor *out, QvValueType value_type, QvValueType index_type,
                            int32_t ndim, const int64_t *shape, const char *const *dim_names,
                            int64_t nnz, const void *coords, const int64_t *coords_strides,
                            bool is_canonical, const void *values, QvOwner *owner,
                            QvError *error);
QvStatus qv_sparse_make_csx(QvSparseTensor *out, QvSparseFormat format /* CSR or CSC */,
                            QvValueType value_type, QvValueType indptr_type,
                            QvValueType index_type, const int64_t shape[2],
                            const char *const *dim_names, int64_t nnz, const void *indptr,
                            const void *indices, const void *values, QvOwner *owner,
                            QvError *error);
QvStatus qv_sparse_make_csf(QvSparseTensor *out, QvValueType value_type,
                            QvValueType indptr_type, QvValueType index_type, int32_t ndim,
                            const int64_t *shape, const char *const *dim_names,
                            const int32_t *axis_order, int64_t nnz,
                            const void *const *indptr, const int64_t *indptr_len,
                            const void *const *indices, const int64_t *indices_len,
                            const void *values, QvOwner *owner, QvError *error);

/* Options for conversions. */
typedef struct QvSparseOptions {
  QvValueType index_type;    /* default (0-initialised struct): see below */
  bool index_type_set;       /* false: int64 */
  const int32_t *axis_order; /* CSF: NULL = 0..ndim-1 */
} QvSparseOptions;

/* dense -> COO (canonical), CSR, CSC (2-D), CSF (any ndim >= 1, any axis
 * order). A value that does not fit the index type is an error naming it. */
QvStatus qv_sparse_from_dense(const QvTensor *dense, QvSparseFormat format,
                              const QvSparseOptions *options, QvSparseTensor *out,
                              QvError *error);
/* sparse -> dense (new row-major tensor, names kept). */
QvStatus qv_sparse_to_dense(const QvSparseTensor *t, QvTensor *out, QvError *error);
/* sparse -> dense into caller memory, row-major, dst_size >= size*elsize. */
QvStatus qv_sparse_to_dense_into(const QvSparseTensor *t, void *dst, size_t dst_size,
                                 QvError *error);
/* sparse -> sparse without building the dense tensor (memory O(nnz)). */
QvStatus qv_sparse_convert(const QvSparseTensor *t, QvSparseFormat format,
                           const QvSparseOptions *options, QvSparseTensor *out, QvError *error);
/* COO canonicalization: sort row-major, sum duplicates (as SciPy does). */
QvStatus qv_sparse_canonicalize(const QvSparseTensor *coo, QvSparseTensor *out, QvError *error);

double qv_sparse_density(const QvSparseTensor *t);
/* Value equality (explicit zeros in the sparse form compare equal to absent
 * entries); same shape and value type required. */
bool qv_sparse_equals_dense(const QvSparseTensor *t, const QvTensor *dense);
bool qv_sparse_equals(const QvSparseTensor *a, const QvSparseTensor *b);

/* Reads index entry i of an integer buffer of the given type as int64
 * (uint64 values above INT64_MAX read as -1). */
int64_t qv_index_load(const uint8_t *buf, QvValueType index_type, int64_t i);

#ifdef __cplusplus
}
#endif

#endif
