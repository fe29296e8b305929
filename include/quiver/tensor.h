/* quiver: dense tensors (N-d arrays) in memory.
 *
 * A QvTensor is a value type, a shape, byte strides, optional dimension names
 * and a data pointer whose memory is kept alive by a QvOwner (release
 * callback + private data), so a tensor can be a zero-copy view of a file
 * mapping or of a caller's buffer. Construction validates like Arrow's
 * Tensor::Make: non-negative dims and strides, one stride per dim, names
 * count 0 or ndim, no int64 overflow, buffer covering every reachable byte. */
#ifndef QUIVER_TENSOR_H
#define QUIVER_TENSOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "quiver/buffer.h"
#include "quiver/error.h"
#include "quiver/format.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The fixed-width numeric types Arrow allows in a Tensor. */
typedef enum QvValueType {
  QV_VALUE_INT8 = 0,
  QV_VALUE_INT16,
  QV_VALUE_INT32,
  QV_VALUE_INT64,
  QV_VALUE_UINT8,
  QV_VALUE_UINT16,
  QV_VALUE_UINT32,
  QV_VALUE_UINT64,
  QV_VALUE_FLOAT16,
  QV_VALUE_FLOAT32,
  QV_VALUE_FLOAT64,
  QV_VALUE_TYPE_COUNT
} QvValueType;

/* Documented limit: more dimensions than this are rejected (Arrow C++ has
 * no limit; NumPy's is 64). */
#define QV_TENSOR_MAX_NDIM 64

size_t qv_value_type_size(QvValueType type);
/* "int8" ... "float64"; "?" when out of range. */
const char *qv_value_type_name(QvValueType type);
/* Parses the names above; QV_EINVAL when unknown. */
QvStatus qv_value_type_parse(const char *name, QvValueType *out, QvError *error);
/* Arrow Type (Int / FloatingPoint) <-> value type. Other types: QV_EINVAL
 * ("Tensor.type: Utf8 is not a numeric tensor type"). */
QvStatus qv_value_type_from_arrow(const QvType *type, QvValueType *out, QvError *error);
void qv_value_type_to_arrow(QvValueType type, QvType *out);

typedef struct QvTensor {
  QvValueType type;
  int32_t ndim;
  const int64_t *shape;     /* ndim entries */
  const int64_t *strides;   /* ndim entries, in bytes (always filled in) */
  const char *const *dim_names; /* NULL, or ndim NUL-terminated names */
  const uint8_t *data;      /* address of the element at index (0, ..., 0) */
  int64_t data_size;        /* bytes readable from `data` */
  QvOwner *owner;           /* keeps `data` alive; may be NULL */
  void *private_data;       /* shape/strides/names storage; owned */
} QvTensor;

/* Builds a view. strides NULL = row-major; dim_names NULL = unnamed. `owner`
 * is retained (NULL: the caller keeps `data` alive). */
QvStatus qv_tensor_make(QvTensor *out, QvValueType type, int32_t ndim, const int64_t *shape,
                        const int64_t *strides, const char *const *dim_names, const void *data,
                        int64_t data_size, QvOwner *owner, QvError *error);
/* Allocates a zero-filled, 64-byte-aligned, contiguous tensor. */
QvStatus qv_tensor_alloc(QvTensor *out, QvValueType type, int32_t ndim, const int64_t *shape,
                         const char *const *dim_names, bool column_major, QvError *error);
void qv_tensor_release(QvTensor *tensor);

int64_t qv_tensor_size(const QvTensor *t); /* number of elements */
bool qv_tensor_is_row_major(const QvTensor *t);
bool qv_tensor_is_column_major(const QvTensor *t);
bool qv_tensor_is_contiguous(const QvTensor *t); /* row- or column-major */
/* Fills out[ndim] with the row-major (or column-major) strides for a shape;
 * QV_EINVAL on overflow. */
QvStatus qv_tensor_compute_strides(QvValueType type, int32_t ndim, const int64_t *shape,
                                   bool column_major, int64_t *out, QvError *error);

/* Byte offset of an index (bounds-checked). */
QvStatus qv_tensor_byte_offset(const QvTensor *t, const int64_t *index, int64_t *offset,
                               QvError *error);
/* Typed element access; values are converted (float16 decoded). */
QvStatus qv_tensor_get_double(const QvTensor *t, const int64_t *index, double *out,
                              QvError *error);
QvStatus qv_tensor_get_int64(const QvTensor *t, const int64_t *index, int64_t *out,
                             QvError *error);
QvStatus qv_tensor_get_uint64(const QvTensor *t, const int64_t *index, uint64_t *out,
                              QvError *error);

/* Zero by value: -0.0 counts as zero, NaN does not. */
int64_t qv_tensor_count_nonzero(const QvTensor *t);
/* Same type, shape and values, whatever the layouts; floats compare by value
 * (-0.0 == 0.0), NaN equal to NaN only when nans_equal. Names are ignored. */
bool qv_tensor_equals(const QvTensor *a, const QvTensor *b, bool nans_equal);

/* Copies into a new contiguous tensor (row- or column-major), keeping names. */
QvStatus qv_tensor_copy(const QvTensor *src, bool column_major, QvTensor *out, QvError *error);
/* Copies the values into dst (dst_size >= size * elsize) in the given order. */
QvStatus qv_tensor_copy_to(const QvTensor *src, bool column_major, void *dst, size_t dst_size,
                           QvError *error);

/* IEEE half <-> float helpers. */
float qv_half_to_float(uint16_t h);
uint16_t qv_float_to_half(float f);

#ifdef __cplusplus
}
#endif

#endif
