/** @file
 * quiver: dense tensors (N-d arrays) in memory.
 *
 * A QvTensor is a value type, a shape, byte strides, optional dimension names
 * and a data pointer whose memory is kept alive by a QvOwner (release
 * callback + private data), so a tensor can be a zero-copy view of a file
 * mapping or of a caller's buffer. Construction validates like Arrow's
 * Tensor::Make: non-negative dims and strides, one stride per dim, names
 * count 0 or ndim, no int64 overflow, buffer covering every reachable byte. */
#ifndef QUIVER_TENSOR_H
#define QUIVER_TENSOR_H

#include "quiver/common.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "quiver/buffer.h"
#include "quiver/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A tensor's value type is one of QvArrowType's numeric members,
 * QV_ARROW_INT8 .. QV_ARROW_NUMERIC_END - 1 (quiver/common.h); QV_ARROW_NONE
 * in an options struct means "the default", and a tensor never has it. */

/** Documented limit: more dimensions than this are rejected (Arrow C++ has
 * no limit; NumPy's is 64). */
#define QV_TENSOR_MAX_NDIM 64

/** A dense tensor in memory: a strided view of `data` (made by
 * qv_tensor_init, the readers and the conversions). */
typedef struct QvTensor {
  QvArrowType type;             /**< the value type, a numeric QvArrowType */
  int32_t ndim;                 /**< dimensions, 0..QV_TENSOR_MAX_NDIM (0: a scalar) */
  const int64_t *shape;         /**< ndim entries */
  const int64_t *strides;       /**< ndim entries, in bytes (always filled in) */
  const char *const *dim_names; /**< NULL, or ndim NUL-terminated names */
  const uint8_t *data;          /**< address of the element at index (0, ..., 0) */
  int64_t data_size;            /**< bytes readable from `data` */
  QvOwner *owner;               /**< keeps `data` alive; may be NULL */
  void *private_data;           /**< shape/strides/names storage; owned */
} QvTensor;

/** What qv_tensor_init builds a view from. */
typedef struct QvTensorDesc {
  QvArrowType type;             /**< the value type, a numeric QvArrowType */
  int64_t ndim;                 /**< int64 so decoded metadata needs no narrowing */
  const int64_t *shape;         /**< ndim entries (may be NULL when ndim is 0) */
  const int64_t *strides;       /**< bytes; NULL = row-major */
  const char *const *dim_names; /**< NULL = unnamed */
  const void *data;             /**< address of the element at index (0, ..., 0) */
  int64_t data_size;            /**< bytes readable from `data` */
  QvOwner *owner;               /**< retained; NULL: the caller keeps `data` alive */
  /** Lengths of strides / dim_names for callers holding decoded metadata,
   * whose arrays may not match ndim: 0 = the array (when not NULL) has ndim
   * entries; otherwise it must equal ndim (QV_EINVAL naming both). */
  int64_t n_strides;
  int64_t n_dim_names;          /**< entries of `dim_names` (see n_strides) */
} QvTensorDesc;

/** Builds a view. Shape, strides and names are copied, so the arrays in the
 * descriptor may be temporary; `data` need not be aligned. On failure *out
 * is zeroed (qv_tensor_reset on it is a no-op).
 *
 * Checks, each failing with a message naming the offending dim:
 *   a real value type (QV_ARROW_NONE is QV_EINVAL);
 *   ndim in [0, QV_TENSOR_MAX_NDIM] (QV_EINVAL when negative, QV_ELIMIT above);
 *   shape[i] >= 0 and strides[i] >= 0 ("negative strides not supported");
 *   the product of the non-zero extents times the element size fits in
 *   int64 (as NumPy: so every partial product of the shape fits too);
 *   when the tensor has elements: data != NULL and the largest reachable
 *   byte, sum((shape[i] - 1) * strides[i]) + element size, fits in int64 and
 *   in data_size. Zero strides (broadcasting) and overlapping strides are
 *   accepted as Arrow does. A tensor with a zero-length dim needs no bytes. */
QV_API QvStatus qv_tensor_init(QvTensor *out, const QvTensorDesc *desc, QvError *error);
/** Allocates a zero-filled, 64-byte-aligned, contiguous tensor the caller
 * fills: *data (when `data` is not NULL) is its writable buffer, which the
 * tensor owns. */
QV_API QvStatus qv_tensor_alloc(QvTensor *out, QvArrowType type, int32_t ndim, const int64_t *shape,
                                const char *const *dim_names, bool column_major, void **data,
                                QvError *error);
/** Frees the private storage and drops the owner reference; zeroes *tensor.
 * NULL-safe and safe on a zeroed tensor. */
QV_API void qv_tensor_reset(QvTensor *tensor);

QV_API int64_t qv_tensor_n_elements(const QvTensor *t); /**< number of elements */
/** Layout queries follow NumPy's flags rather than Arrow's exact stride
 * comparison: a dim of extent 1 does not constrain its stride (a 1x5
 * row-major tensor is also column-major), and a tensor without elements is
 * both row- and column-major whatever its strides. A 0-d tensor is both. */
QV_API bool qv_tensor_is_row_major(const QvTensor *t);
/** Whether the strides are column-major (see qv_tensor_is_row_major). */
QV_API bool qv_tensor_is_column_major(const QvTensor *t);
QV_API bool qv_tensor_is_contiguous(const QvTensor *t); /**< row- or column-major */
/** Fills out[ndim] with the row-major (or column-major) strides for a shape;
 * QV_EINVAL on overflow or a negative dim. As Arrow's ComputeRowMajorStrides,
 * a shape with a zero-length dim gets every stride equal to the element size
 * (what Arrow C++ writes in files for such tensors). */
QV_API QvStatus qv_tensor_compute_strides(QvArrowType type, int32_t ndim, const int64_t *shape,
                                   bool column_major, int64_t *out, QvError *error);

/** Byte offset of an index (bounds-checked; index may be NULL for 0-d). */
QV_API QvStatus qv_tensor_byte_offset(const QvTensor *t, const int64_t *index, int64_t *offset,
                               QvError *error);
/** Typed element access; values are converted (float16 decoded).
 * get_double is lossy above 2^53 for 64-bit integers. get_int64/get_uint64
 * fail with QV_EINVAL when the value is not representable: uint64 above
 * INT64_MAX, negatives for get_uint64, and floats that are NaN, infinite,
 * fractional or out of range (floats are never truncated). */
QV_API QvStatus qv_tensor_get_double(const QvTensor *t, const int64_t *index, double *out, QvError *error);
/** Element at `index` as int64 (see qv_tensor_get_double). */
QV_API QvStatus qv_tensor_get_int64(const QvTensor *t, const int64_t *index, int64_t *out, QvError *error);
/** Element at `index` as uint64 (see qv_tensor_get_double). */
QV_API QvStatus qv_tensor_get_uint64(const QvTensor *t, const int64_t *index, uint64_t *out,
                              QvError *error);

/** Zero by value: -0.0 counts as zero, NaN does not. */
QV_API int64_t qv_tensor_count_nonzero(const QvTensor *t);
/** Same type, shape and values, whatever the layouts; floats compare by value
 * (-0.0 == 0.0), NaN equal to NaN only when nans_equal. Names are ignored. */
QV_API bool qv_tensor_equal(const QvTensor *a, const QvTensor *b, bool nans_equal);

/** A new contiguous tensor (column-major when `src` is, else row-major,
 * keeping names) holding the values of `src` cast to `value_type` (a
 * numeric type), exact or refused as qv_sparse_cast (quiver/sparse.h)
 * describes; the first value that does not fit is QV_EINVAL naming its
 * index: "element [1, 2]: value 300 does not fit uint8". The size of the
 * output is not checked here: check it first (quiver convert does, against
 * --max-output). */
QV_API QvStatus qv_tensor_cast(const QvTensor *src, QvArrowType value_type, QvTensor *out,
                               QvError *error);
/** Copies into a new contiguous tensor (row- or column-major), keeping names.
 * The new tensor owns a 64-byte-aligned buffer. */
QV_API QvStatus qv_tensor_copy(const QvTensor *src, bool column_major, QvTensor *out, QvError *error);
/** Copies the values into dst (dst_size >= size * elsize) in the given order.
 * dst must not overlap the source data; it need not be aligned. */
QV_API QvStatus qv_tensor_copy_to(const QvTensor *src, bool column_major, void *dst, size_t dst_size,
                           QvError *error);


#ifdef __cplusplus
}
#endif

#endif
