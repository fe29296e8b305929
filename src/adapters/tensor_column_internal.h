/* Shared by the tensor column files (src/adapters/tensor_column*.c). */
#ifndef QUIVER_ADAPTERS_TENSOR_COLUMN_INTERNAL_H
#define QUIVER_ADAPTERS_TENSOR_COLUMN_INTERNAL_H

#include "quiver/tensor_column.h"

/* "arrow.fixed_shape_tensor", ... for messages. */
const char *qvi_tensor_column_kind_name(QvTensorColumnKind kind);
/* Arrow format string of a value type ("f" for float32); NULL for none. */
const char *qvi_tensor_value_format(QvArrowType t);
/* The value type of a format string; QV_ARROW_NONE when not numeric. */
QvArrowType qvi_tensor_value_from_format(const char *format);
/* Replaces type->dim_names with a copy of ndim names (NULL: none). */
QvStatus qvi_tensor_column_set_names(QvTensorColumnType *type, const char *const *names,
                                    QvError *error);

#endif
