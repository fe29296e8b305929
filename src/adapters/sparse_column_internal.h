/* Shared by the sparse column files (src/adapters/sparse_column*.c); static
 * inline, so the library exports nothing new. */
#ifndef QUIVER_ADAPTERS_SPARSE_COLUMN_INTERNAL_H
#define QUIVER_ADAPTERS_SPARSE_COLUMN_INTERNAL_H

#include "quiver/sparse_column.h"

/* "quiver.sparse_tensor" / "quiver.sparse_vector" for messages. */
static inline const char *qvi_sparse_column_kind_name(QvSparseColumnKind kind) {
  return kind == QV_SPARSE_COLUMN_TENSOR   ? QV_SPARSE_TENSOR_EXTENSION
         : kind == QV_SPARSE_COLUMN_VECTOR ? QV_SPARSE_VECTOR_EXTENSION
                                           : "?";
}

/* The storage children of a sparse tensor column of a format, in order;
 * returns their count. */
static inline int qvi_sparse_column_children(QvSparseFormat format, const char *const **names) {
  static const char *const coo[] = {"shape", "canonical", "coords", "values"};
  static const char *const csx[] = {"shape", "indptr", "indices", "values"};
  static const char *const csf[] = {"shape", "axis_order", "indptr", "indices", "values"};
  switch (format) {
    case QV_SPARSE_COO: *names = coo; return 4;
    case QV_SPARSE_CSF: *names = csf; return 5;
    default: *names = csx; return 4;
  }
}

#endif
