/** @file
 * quiver: sparse tensors in memory (SparseTensor.fbs index kinds).
 *
 *  COO  an nnz x ndim matrix of coordinates (with its own byte strides) and
 *       nnz values; `is_canonical` = sorted row-major lexicographically with
 *       no duplicates. A non-canonical COO may hold duplicates: they add up.
 *  CSR / CSC  (SparseMatrixIndexCSX, 2-D only) indptr of length
 *       rows+1 (CSR) or cols+1 (CSC), indices of length nnz, strictly
 *       increasing within each row/column (sorted, no duplicates).
 *  CSF  ndim levels in `axis_order`; indptr[l] (l < ndim-1) and indices[l]
 *       (l < ndim), the last level's indices holding exactly nnz entries;
 *       the children of a node (and the nodes of level 0) have strictly
 *       increasing indices. A 1-D CSF has one level and no indptr.
 *
 * Values are the dense value types of tensor.h; index types are the integer
 * ones (int8..uint64; int64 by default). ndim is 1..QV_TENSOR_MAX_NDIM (a 0-d
 * tensor has no sparse form). Memory is kept alive by a QvOwner, so a sparse
 * tensor can be a zero-copy view of a file; tensors made by conversions own
 * their buffers (private_data, owner NULL). Zero means zero by value: -0.0 is
 * a zero (and so are the float16 patterns 0x0000 / 0x8000), NaN is not.
 *
 * Every function is reentrant; none prints or aborts. Conversions validate
 * their input first (qv_sparse_validate), so a hand-built struct with bad
 * indices is an error, never an out-of-bounds access. */
#ifndef QUIVER_SPARSE_H
#define QUIVER_SPARSE_H

#include "quiver/common.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "quiver/buffer.h"
#include "quiver/error.h"
#include "quiver/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/** A sparse tensor in memory: a view of COO, CSR, CSC or CSF buffers
 * (made by qv_sparse_init, the readers and the conversions). */
typedef struct QvSparseTensor {
  QvSparseFormat format;   /**< which index members below apply */
  QvArrowType value_type;  /**< the numeric type of `values` */
  QvArrowType index_type;  /**< COO coordinates; CSX/CSF indices */
  QvArrowType indptr_type; /**< CSX/CSF indptr (unused for COO) */
  int32_t ndim;            /**< entries of `shape`, 1..QV_TENSOR_MAX_NDIM (CSR/CSC: 2) */
  const int64_t *shape;    /**< the dense shape, outermost first */
  const char *const *dim_names; /**< NULL or ndim names */
  int64_t nnz;             /**< number of stored values (explicit zeros count) */
  const uint8_t *values;        /**< nnz contiguous values */

  /** COO */
  const uint8_t *coords;        /**< element (i, d) at coords + i*coords_strides[0] + d*coords_strides[1] */
  int64_t coords_strides[2];    /**< bytes; row-major is {ndim*isize, isize} */
  bool is_canonical;            /**< coordinates sorted lexicographically, without duplicates */

  /** CSR / CSC */
  const uint8_t *indptr;        /**< rows+1 (CSR) or cols+1 (CSC) entries */
  const uint8_t *indices;       /**< nnz entries */
  int64_t indptr_len;           /**< entries in indptr (qv_sparse_init: rows+1 / cols+1) */
  int64_t indices_len;          /**< entries in indices (qv_sparse_init: nnz) */

  /** CSF: levels follow axis_order */
  const int32_t *axis_order;            /**< ndim entries, a permutation */
  const uint8_t *const *csf_indptr;     /**< ndim-1 buffers */
  const int64_t *csf_indptr_len;        /**< entries per indptr buffer */
  const uint8_t *const *csf_indices;    /**< ndim buffers */
  const int64_t *csf_indices_len;       /**< entries per indices buffer; last == nnz */

  QvOwner *owner;     /**< keeps the buffers alive; may be NULL */
  void *private_data; /**< owned storage */
} QvSparseTensor;

/** Releases the tensor's buffers (its owner, its own storage); the struct is zeroed. */
QV_API void qv_sparse_reset(QvSparseTensor *t);

/** Full validation: buffer lengths consistent with nnz/ndim/index width
 * (overflow-checked; COO byte offsets from the strides fit in int64), every
 * coordinate inside the shape, a COO marked canonical really sorted and
 * unique, CSX indptr of the right length (indptr_len) starting at 0,
 * non-decreasing, ending at nnz (= indices_len), indices in range and
 * strictly increasing within each row/column, CSF axis_order a permutation,
 * indptr[l] of indices_len[l] + 1 entries from 0, non-decreasing, up to
 * indices_len[l + 1], the last level of nnz entries, indices in range and
 * strictly increasing among siblings. Index values are read with their own
 * signedness: negative ones and uint64 ones above INT64_MAX are out of
 * range. QV_EINVAL with a message naming the buffer and position ("CSR
 * indptr is decreasing at position 4 (4 after 5)"); buffers are only read
 * within what nnz, the shape and the declared lengths say they hold. */
QV_API QvStatus qv_sparse_validate(const QvSparseTensor *t, QvError *error);

/** What qv_sparse_init builds a view from: the members every format has,
 * then the members of the format's index. */
typedef struct QvSparseDesc {
  QvSparseFormat format;        /**< which index members below apply */
  QvArrowType value_type;       /**< the numeric type of `values` */
  QvArrowType index_type;       /**< COO coordinates; CSX/CSF indices */
  QvArrowType indptr_type;      /**< CSX/CSF indptr (unused for COO) */
  int32_t ndim;                 /**< CSR/CSC: 2 */
  const int64_t *shape;         /**< ndim entries */
  const char *const *dim_names; /**< NULL or ndim names */
  int64_t nnz;                  /**< number of stored values */
  const void *values;           /**< nnz contiguous values */
  QvOwner *owner;               /**< retained; NULL: the caller keeps the buffers alive */

  /** COO: the nnz x ndim coordinate matrix of index_type */
  const void *coords;
  const int64_t *coords_strides; /**< 2 entries in bytes; NULL = row-major */
  bool is_canonical;            /**< the caller vouches: sorted and unique (validated) */

  /** CSR / CSC: indptr of rows+1 / cols+1 entries, indices of nnz */
  const void *indptr;
  const void *indices;          /**< CSR / CSC: nnz column (CSR) or row (CSC) indices */

  /** CSF: ndim levels in axis_order; indptr[l] for l < ndim - 1 */
  const int32_t *axis_order;
  const void *const *csf_indptr;  /**< CSF: ndim - 1 buffers of indptr_type */
  const int64_t *csf_indptr_len;  /**< CSF: entries of each indptr buffer */
  const void *const *csf_indices; /**< CSF: ndim buffers of index_type, one per level */
  const int64_t *csf_indices_len; /**< CSF: entries of each indices buffer; the last is nnz */

  /** Threads the validation's index scan may use, the caller's included: 0
   * or 1 = one, up to QV_SPARSE_MAX_THREADS. A CSR or CSC of 2^18 entries
   * and more splits its scan across them; the verdict, and the message
   * naming the first bad entry, are those of one thread. */
  int threads;
  /** The caller vouches that nothing writes the index buffers (indptr,
   * indices, coords) while the tensor lives: memory it allocated and hands
   * over with `owner`, or a read-only file mapping. The tensor then keeps
   * the validation's verdict, and writers and conversions do not scan its
   * indices again (until a field of the struct is changed). Leave it false
   * for memory anyone may still change: a change after qv_sparse_init would
   * go unchecked. CSF tensors are validated every time either way. */
  bool immutable;
} QvSparseDesc;

/** Builds a view over caller memory, validated (qv_sparse_validate, on
 * desc->threads threads); shape, names and the CSF pointer/length arrays
 * are copied, the buffers are not.
 * Every type must be given (QV_ARROW_NONE is QV_EINVAL like any other
 * invalid type: a view describes memory that exists, so there is nothing to
 * default). An unknown format, or desc->threads outside 0..QV_SPARSE_MAX_THREADS,
 * is QV_EARG. On failure *out is zeroed and the owner not retained. */
QV_API QvStatus qv_sparse_init(QvSparseTensor *out, const QvSparseDesc *desc, QvError *error);

/** A cache of buffers for callers that convert again and again.
 *
 * A fresh buffer costs a page fault and the kernel's zeroing of every page
 * it touches, about a sixth of a dense -> CSC conversion here and several
 * times that on first use of memory in a VM. A conversion given a
 * workspace (QvSparseOptions.workspace) takes its scratch and output
 * buffers from the workspace's cache and puts its scratch back when done;
 * releasing a result made with it (qv_sparse_reset) puts the result's
 * buffers back too, so the next conversion of a similar size writes to
 * pages that are already mapped:
 *
 *     QvSparseWorkspace *ws;
 *     qv_sparse_workspace_new(&ws, &err);
 *     QvSparseOptions o = {.workspace = ws};
 *     for (each input) {
 *       qv_sparse_from_dense(&dense, QV_SPARSE_CSC, &o, &csc, &err);
 *       ... use csc ...
 *       qv_sparse_reset(&csc);   // its buffers serve the next conversion
 *     }
 *     qv_sparse_workspace_free(ws);
 *
 * Memory: the cache keeps at most 48 buffers (the largest ones when more
 * are put back) for as long as the workspace lives; qv_sparse_workspace_trim
 * gives them back to the system. Buffers of a result made with a workspace
 * keep the capacity they were reserved with (address space for the worst
 * case of the input; only the pages written are resident).
 *
 * Lifetime: a result may outlive its workspace. qv_sparse_workspace_free
 * releases the cached buffers at once; the workspace itself goes when the
 * last result made with it is reset, and those buffers then go back to the
 * system. A workspace must not be used after qv_sparse_workspace_free.
 *
 * Threads: the cache is locked, so a workspace may be used by several
 * threads at once and results may be reset on any thread; they then share
 * one cache (each buffer goes to one conversion at a time), which works but
 * mixes sizes: for speed give each thread its own. */
typedef struct QvSparseWorkspace QvSparseWorkspace;
/** A new workspace (free it with qv_sparse_workspace_free). */
QV_API QvStatus qv_sparse_workspace_new(QvSparseWorkspace **out, QvError *error);
/** NULL is a no-op. */
QV_API void qv_sparse_workspace_free(QvSparseWorkspace *ws);
/** Gives every cached buffer back to the system (buffers in use are not
 * affected); the workspace stays usable. NULL is a no-op. */
QV_API void qv_sparse_workspace_trim(QvSparseWorkspace *ws);

/** Counters of a workspace since it was made (a snapshot). */
typedef struct QvSparseWorkspaceStats {
  int64_t reused;       /**< buffers served from the cache */
  int64_t allocated;    /**< buffers obtained from the system for conversions using it */
  int64_t outstanding;  /**< buffers in use now (held by conversions and results) */
  int64_t cached;       /**< buffers in the cache now */
  int64_t cached_bytes; /**< their capacity in bytes */
} QvSparseWorkspaceStats;
/** Fills *out (zeroed for a NULL workspace). */
QV_API void qv_sparse_workspace_stats(QvSparseWorkspace *ws, QvSparseWorkspaceStats *out);

/** Options for conversions; NULL or a zeroed struct means every default. */
typedef struct QvSparseOptions {
  size_t struct_size;        /**< 0 or sizeof(QvSparseOptions) (quiver/common.h) */
  QvArrowType index_type;    /**< QV_ARROW_NONE: int64 */
  const int32_t *axis_order; /**< CSF: NULL = 0..ndim-1 */
  /** Bytes the output's buffers may take; 0 = QV_DEFAULT_MAX_OUTPUT_SIZE.
   * Checked before anything is allocated: QV_ELIMIT naming both sizes. */
  int64_t max_output_size;
  /** NULL: buffers come from the system and go back when released. Else
   * the conversion's buffers come from and go back to this workspace (see
   * QvSparseWorkspace); the result is the same either way. */
  QvSparseWorkspace *workspace;
  /** Threads a large conversion may use, the caller's included: 0 or 1 =
   * one, up to QV_SPARSE_MAX_THREADS. COO -> CSR/CSC grouping and CSR <->
   * CSC transposition of 2^18 entries and more (over 4096 rows/columns)
   * split their counting, scattering and per-bucket sorting across them;
   * sparse -> dense (qv_sparse_to_dense) splits its scatter; dense ->
   * sparse (qv_sparse_from_dense) of 2^19 elements and more splits its scan
   * by blocks of lines (and, for the orientation across the memory order,
   * its sort by strips of majors).
   * The output is byte for byte the same for every thread count. */
  int threads;
} QvSparseOptions;

/** Largest QvSparseOptions.threads. */
#define QV_SPARSE_MAX_THREADS 256

/** 16 GiB: the default bound on what one conversion may produce. */
#define QV_DEFAULT_MAX_OUTPUT_SIZE ((int64_t)16 << 30)

/* The output bound of a conversion. From a sparse input it is computed from
 * the input's nnz (an output never has more entries). From a dense input the
 * worst case (every element non-zero) is tried first; when that exceeds the
 * limit, the non-zeros are counted and the exact bound decides, so a large
 * but sparse dense tensor still converts. Dimensions of stride 0 (broadcast)
 * are counted once and multiplied; the count is skipped (the worst case
 * refused) when the elements left to walk take more bytes than both the
 * limit and the input's data (overlapping strides), so the check never costs
 * more than reading the input or producing an allowed output. */

/** Conversions choose one index type for every index buffer (indptr and
 * indices alike). A value that does not fit it is QV_EINVAL naming the buffer,
 * the value and its position ("COO coords: value 150 (coordinate of dim 1 at
 * non-zero 1) does not fit index type int8 (max 127)"); only actual values
 * count, so int8 serves a 10x30 matrix. Memory is O(nnz) plus, for CSR/CSC
 * outputs, their indptr; a 10^6 x 10^6 matrix is no problem.
 *
 * dense -> COO (canonical), CSR, CSC (2-D), CSF (any ndim >= 1, any axis
 * order). Any dense layout (row-major, column-major, strided, zero strides)
 * is read in memory order; no explicit zeros are produced. `options.threads`
 * splits a dense input of 2^19 elements and more by blocks of lines (the
 * same bytes for any count). */
QV_API QvStatus qv_sparse_from_dense(const QvTensor *dense, QvSparseFormat format,
                              const QvSparseOptions *options, QvSparseTensor *out,
                              QvError *error);
/** sparse -> dense (new row-major tensor, names kept). Duplicates of a
 * non-canonical COO are summed. QV_ELIMIT when the dense size overflows.
 * `options` (NULL = defaults): only `threads` applies; CSR/CSC and COO
 * without duplicates of 2^18 entries and more scatter on that many threads,
 * the result the same byte for byte. */
QV_API QvStatus qv_sparse_to_dense(const QvSparseTensor *t, const QvSparseOptions *options, QvTensor *out,
                                   QvError *error);
/** sparse -> dense into caller memory, row-major, dst_size >= size*elsize.
 * `options` as for qv_sparse_to_dense; the zeroing of a buffer of 8 MiB and
 * more splits across the threads too. */
QV_API QvStatus qv_sparse_to_dense_into(const QvSparseTensor *t, void *dst, size_t dst_size,
                                        const QvSparseOptions *options, QvError *error);
/** sparse -> sparse without building the dense tensor (memory O(nnz)). COO
 * outputs are canonical; duplicates of a non-canonical COO input are summed
 * in entry order (integers wrap, float16 rounds), as SciPy's sum_duplicates;
 * explicit zeros stored in the input are kept. Same-format conversions copy
 * (changing the index type, or the CSF axis order).
 * The input is validated in full first (qv_sparse_validate), except a COO,
 * CSR or CSC tensor the library itself validated or made and that is
 * unchanged since: one read from a file, a fd or the library's own copy by
 * qv_sparse_read / qv_npz_read (not views of caller memory), and the result of
 * a conversion (qv_sparse_convert, qv_sparse_from_dense,
 * qv_sparse_canonicalize, qv_sparse_cast). Such a tensor is sealed: a
 * snapshot of its fields is kept, and any change to the struct (another
 * buffer pointer, nnz, shape) makes it an ordinary, validated input again.
 * Buffers reached through a sealed tensor's const pointers must not be
 * written. A tensor the caller wraps with qv_sparse_init is never sealed. */
QV_API QvStatus qv_sparse_convert(const QvSparseTensor *t, QvSparseFormat format,
                           const QvSparseOptions *options, QvSparseTensor *out, QvError *error);
/** The tensor with its values cast to `value_type` (a numeric type), in
 * the same format: *out owns new values and shares the index buffers of `t`
 * when an owner keeps them alive (it retains the owner: a tensor read from a
 * file or built over owned memory); a tensor holding buffers of its own (a
 * conversion's result) or without an owner is copied first, as
 * qv_sparse_convert to its own format and index type does (a non-canonical
 * COO then comes out canonical, duplicates summed before the cast).
 * Casts are exact or refused (never wrapped, saturated or truncated):
 * integer to integer within the target's range; float to integer only for
 * whole values in range (NaN and infinities never); integer to float only
 * when the float holds it exactly (float32: up to 2^24, float16: 2048, and
 * other values those types hold); float to float rounds to nearest and keeps
 * NaN and infinities, refusing a finite value beyond the target's range
 * (float16: from 65520). The first value that does not fit is QV_EINVAL:
 * "stored value 5 of 9: value 300 does not fit uint8". The same rule as
 * qv_tensor_cast (quiver/tensor.h); `quiver convert --value-type` and
 * Python's write_sparse(value_type=) use them. */
QV_API QvStatus qv_sparse_cast(const QvSparseTensor *t, QvArrowType value_type,
                               QvSparseTensor *out, QvError *error);
/** Canonicalization, as SciPy's sum_duplicates: duplicates summed in entry
 * order (integers wrap, float16 rounds after each addition), explicit
 * zeros and zero sums kept; *out is a new tensor of the input's format.
 *  COO: sorted row-major (`is_canonical` set).
 *  CSR / CSC: the indices within each row (column) sorted. The input may
 *    break the one rule qv_sparse_validate has for order (a hand-built
 *    struct whose rows are unsorted or repeat an index, as SciPy leaves
 *    them after A[:, perm]: the .npz reader uses this); every other rule
 *    holds, or QV_EINVAL as qv_sparse_validate says. The indptr and index
 *    types are kept.
 * CSF is QV_EARG. `options` (NULL = defaults) as for qv_sparse_convert,
 * except that QV_ARROW_NONE keeps the input's index type (CSR/CSC: a type
 * given is used for indptr and indices); with `threads`, a 2-D COO whose
 * extents are O(nnz), and a CSR/CSC of 2^18 entries and more, sort and sum
 * on that many threads (the same bytes for every count). */
QV_API QvStatus qv_sparse_canonicalize(const QvSparseTensor *t, const QvSparseOptions *options,
                                       QvSparseTensor *out, QvError *error);

/** nnz divided by the number of elements of the dense shape (0 for an empty shape). */
QV_API double qv_sparse_density(const QvSparseTensor *t);
/** Value equality (explicit zeros in the sparse form compare equal to absent
 * entries, -0.0 == 0.0, NaN equals NaN, duplicates of a non-canonical COO
 * summed first); same shape and value type required. False for an invalid
 * tensor or when memory runs out. */
QV_API bool qv_sparse_equal_dense(const QvSparseTensor *t, const QvTensor *dense);
/** Value equality of two sparse tensors, whatever their formats (as qv_sparse_equal_dense). */
QV_API bool qv_sparse_equal(const QvSparseTensor *a, const QvSparseTensor *b);


#ifdef __cplusplus
}
#endif

#endif
