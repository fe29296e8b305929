/* Shared between the tensor sources: loading one element and the strided
 * walk used by count_nonzero, equals and copy. */
#ifndef QUIVER_TENSOR_INTERNAL_H
#define QUIVER_TENSOR_INTERNAL_H

#include <stdint.h>
#include <string.h>

#include "quiver/tensor.h"

/* Reads one element as double (data may be unaligned). */
static inline double qv_tensor_load_double(QvValueType type, const uint8_t *p) {
  switch (type) {
    case QV_VALUE_INT8: {
      int8_t v;
      memcpy(&v, p, 1);
      return v;
    }
    case QV_VALUE_INT16: {
      int16_t v;
      memcpy(&v, p, 2);
      return v;
    }
    case QV_VALUE_INT32: {
      int32_t v;
      memcpy(&v, p, 4);
      return v;
    }
    case QV_VALUE_INT64: {
      int64_t v;
      memcpy(&v, p, 8);
      return (double)v;
    }
    case QV_VALUE_UINT8: return *p;
    case QV_VALUE_UINT16: {
      uint16_t v;
      memcpy(&v, p, 2);
      return v;
    }
    case QV_VALUE_UINT32: {
      uint32_t v;
      memcpy(&v, p, 4);
      return v;
    }
    case QV_VALUE_UINT64: {
      uint64_t v;
      memcpy(&v, p, 8);
      return (double)v;
    }
    case QV_VALUE_FLOAT16: {
      uint16_t v;
      memcpy(&v, p, 2);
      return qv_half_to_float(v);
    }
    case QV_VALUE_FLOAT32: {
      float v;
      memcpy(&v, p, 4);
      return v;
    }
    case QV_VALUE_FLOAT64: {
      double v;
      memcpy(&v, p, 8);
      return v;
    }
    default: return 0.0;
  }
}

/* Up to two operands walked over the same index space. Normalising drops
 * extent-1 dims, orders dims by operand 0's stride (largest first) and
 * merges neighbours that are contiguous in every operand, so that e.g. a
 * row-major tensor becomes one run. Iteration order is not the logical
 * order; callers either do not care (count, equals) or write through the
 * operand-0 strides (copy). */
typedef struct QvWalk {
  int ndim;
  int nops;
  int64_t shape[QV_TENSOR_MAX_NDIM];
  int64_t strides[2][QV_TENSOR_MAX_NDIM];
} QvWalk;

/* Returns false when the index space is empty. */
bool qv_walk_init(QvWalk *w, int ndim, const int64_t *shape, int nops,
                  const int64_t *const *strides);

#endif
