/* Shared by the sparse column files (src/adapters/sparse_column*.c). */
#ifndef QUIVER_ADAPTERS_SPARSE_COLUMN_INTERNAL_H
#define QUIVER_ADAPTERS_SPARSE_COLUMN_INTERNAL_H

#include "quiver/sparse_column.h"

/* "quiver.sparse_tensor" / "quiver.sparse_vector" for messages. */
const char *qvi_sparse_column_kind_name(QvSparseColumnKind kind);
/* The storage children of a sparse tensor column of a format, in order;
 * returns their count. */
int qvi_sparse_column_children(QvSparseFormat format, const char *const **names);

#endif
