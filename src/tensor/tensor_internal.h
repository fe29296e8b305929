/* Shared between the tensor sources: loading one element and the strided
 * walk used by count_nonzero, equals and copy. */
#ifndef QUIVER_TENSOR_INTERNAL_H
#define QUIVER_TENSOR_INTERNAL_H

#include <stdint.h>
#include <string.h>

#include "quiver/advanced.h"
#include "quiver/tensor.h"
#include "tensor/tensor_copy.h"
#include "util/load.h"
#include "util/pool.h"

/* Reads one element as double (data may be unaligned). */
static inline double qvi_tensor_load_double(QvArrowType type, const uint8_t *p) {
  switch (type) {
    case QV_ARROW_INT8: return qvi_ld_i8(p);
    case QV_ARROW_INT16: return qvi_ld_i16(p);
    case QV_ARROW_INT32: return qvi_ld_i32(p);
    case QV_ARROW_INT64: return (double)qvi_ld_i64(p);
    case QV_ARROW_UINT8: return *p;
    case QV_ARROW_UINT16: return qvi_ld_u16(p);
    case QV_ARROW_UINT32: return qvi_ld_u32(p);
    case QV_ARROW_UINT64: return (double)qvi_ld_u64(p);
    case QV_ARROW_FLOAT16: return qv_half_to_float(qvi_ld_u16(p));
    case QV_ARROW_FLOAT32: return qvi_ld_f32(p);
    case QV_ARROW_FLOAT64: return qvi_ld_f64(p);
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
bool qvi_walk_init(QvWalk *w, int ndim, const int64_t *shape, int nops,
                  const int64_t *const *strides);

#endif
