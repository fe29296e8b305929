/* Tensor value type <-> Arrow Type, used by the tensor and sparse tensor
 * adapters only (so quiver/tensor.h does not need quiver/format.h). */
#ifndef QUIVER_ADAPTERS_VALUE_TYPE_ARROW_H
#define QUIVER_ADAPTERS_VALUE_TYPE_ARROW_H

#include "quiver/error.h"
#include "quiver/format.h"
#include "quiver/tensor.h"

/* Arrow Type (Int / FloatingPoint) -> value type. Other types: QV_EINVAL
 * ("Tensor.type: Utf8 is not a numeric tensor type"). */
QvStatus qvi_value_type_from_arrow(const QvType *type, QvArrowType *out, QvError *error);
/* Value type -> Arrow Type; QV_TYPE_NONE for QV_ARROW_NONE and
 * out-of-range values. */
void qvi_value_type_to_arrow(QvArrowType type, QvType *out);

#endif
