/** @file
 * quiver: sparse tensors inside tables, the extension types of
 * docs/sparse-tensor-extension.md, and their bridges to QvSparseTensor.
 *
 *  - quiver.sparse_tensor: one sparse tensor per row, the format fixed by the
 *    type. Storage:
 *    @verbatim
 *    Struct{shape: FixedSizeList<int64>[ndim], then by format
 *      COO  canonical: Bool, coords: List<FixedSizeList<I>[ndim]>, values: List<V>
 *      CSR/CSC  indptr: List<P>, indices: List<I>, values: List<V>
 *      CSF  axis_order: FixedSizeList<int32>[ndim], indptr: List<List<P>>,
 *           indices: List<List<I>>, values: List<V>}
 *    @endverbatim
 *    (every List may be a LargeList), metadata {"format": "csr",
 *    "dim_names": [...]}. Each list holds one buffer of the SparseTensor
 *    message the cell stands for, so a message maps to a cell and back.
 *  - quiver.sparse_vector: one sparse vector of dense length `size` per row.
 *    Storage List<Struct{index: I, value: V}> (or LargeList), metadata
 *    {"size": d, "dim_names": [row name, vector name]}. n rows are an n x d
 *    CSR matrix: the list offsets are its indptr (int32 for List, int64 for
 *    LargeList), the struct's children its indices and values.
 *
 * What copies and what does not:
 *  - a cell -> QvSparseTensor (qv_sparse_column_cell): a view, not scanned
 *    again (qv_sparse_column_init checked every row once; the storage it
 *    holds must not change while the column or a view lives);
 *  - a sparse-vector column -> one CSR tensor (qv_sparse_vector_stack): a
 *    view in constant time, except that the indptr is copied (O(rows)) when
 *    the column is a slice whose first offset is not 0 (a CSR indptr starts
 *    at 0);
 *  - a CSR tensor -> a sparse-vector column (qv_sparse_vector_unstack): a view
 *    when its indptr is int32 or int64 (constant time for a tensor a quiver
 *    reader produced; others are validated first, O(nnz)); another indptr
 *    type is copied to int32 (int64 when nnz needs it);
 *  - the builder (qv_sparse_column_build): a view of a single cell that has
 *    an owner and row-major COO coordinates; otherwise every buffer of every
 *    cell is copied once, concatenated.
 * Columns are ordinary ArrowSchema/ArrowArray pairs (quiver/c_data.h) whose
 * field carries ARROW:extension:name and ARROW:extension:metadata: the C
 * Data Interface export and import are the structs themselves. */
#ifndef QUIVER_SPARSE_COLUMN_H
#define QUIVER_SPARSE_COLUMN_H

#include "quiver/common.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "quiver/array.h"
#include "quiver/buffer.h"
#include "quiver/c_data.h"
#include "quiver/error.h"
#include "quiver/sparse.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Extension name of a column whose rows are sparse tensors. */
#define QV_SPARSE_TENSOR_EXTENSION "quiver.sparse_tensor"
/** Extension name of a column whose rows are sparse vectors of one length. */
#define QV_SPARSE_VECTOR_EXTENSION "quiver.sparse_vector"

/** Which of quiver's sparse extension types a field is. */
typedef enum QvSparseColumnKind {
  QV_SPARSE_COLUMN_NONE = 0, /**< no sparse column (in options: the default) */
  QV_SPARSE_COLUMN_TENSOR, /**< quiver.sparse_tensor */
  QV_SPARSE_COLUMN_VECTOR  /**< quiver.sparse_vector */
} QvSparseColumnKind;

/** The parsed extension type of a sparse column. */
typedef struct QvSparseColumnType {
  QvSparseColumnKind kind;  /**< tensor or vector; NONE for a field that is neither */
  /** tensor: the cells' format; vector: QV_SPARSE_CSR (the stacked matrix) */
  QvSparseFormat format;
  QvArrowType value_type;  /**< the numeric type of the stored values */
  QvArrowType index_type;  /**< COO coords, CSX/CSF indices; vector: index */
  /** CSX/CSF indptr (COO: equal to index_type); vector: int32 for List
   * storage, int64 for LargeList */
  QvArrowType indptr_type;
  int32_t ndim;             /**< dims of a cell; vector: 1 */
  int64_t size;             /**< vector: the dense length d; tensor: 0 */
  /** Storage lists are LargeLists (writing); on reading, set when any is. */
  bool large_lists;
  /** NULL or n_dim_names names: a tensor's ndim dims; a vector column's 2
   * (its rows, then the vector dim: the names of the stacked matrix). */
  const char *const *dim_names;
  int32_t n_dim_names;      /**< entries of `dim_names`; 0 when NULL */
  void *private_data; /**< names storage; owned */
} QvSparseColumnType;

/** Parses extension metadata (JSON text of `len` bytes, not NUL-terminated)
 * of `kind` into *out (zeroed first; free with qv_sparse_column_type_reset).
 * `ndim` is the storage's ndim (tensor: the shape list size; vector: ignored).
 * Sets format (tensor), size (vector) and dim_names; the storage types are
 * not in the metadata. QV_EINVAL naming the key and element: malformed JSON
 * (line and column), a missing or unknown "format" (not "coo", "csr", "csc",
 * "csf"), CSR/CSC with ndim != 2, a missing, negative or non-integer "size",
 * "dim_names" not an array of ndim (vector: 2) strings. Unknown keys are
 * ignored. */
QV_API QvStatus qv_sparse_column_type_parse(QvSparseColumnKind kind, const char *json,
                                            size_t len, int32_t ndim, QvSparseColumnType *out,
                                            QvError *error);
/** Frees what a type holds and zeroes it (NULL and a zeroed struct are fine). */
QV_API void qv_sparse_column_type_reset(QvSparseColumnType *type);
/** Replaces type->dim_names with a copy of n names (NULL or n == 0: none). */
QV_API QvStatus qv_sparse_column_type_set_names(QvSparseColumnType *type,
                                                const char *const *names, int32_t n,
                                                QvError *error);
/** The metadata JSON of a type, compact, keys in the order of the
 * specification (malloc'd, NUL-terminated; free()). */
QV_API QvStatus qv_sparse_column_type_to_json(const QvSparseColumnType *type, char **json,
                                              QvError *error);
/** Recognizes a field by its extension name, parses its metadata and checks
 * its storage type against it (field names, List/LargeList, FixedSizeList
 * sizes equal to ndim, integer index types, numeric value type); errors name
 * the field and the storage child ("field 'x': quiver.sparse_tensor storage
 * child 'indices' is not a List of an integer type"). A field that is no
 * sparse column gives QV_OK with out->kind == QV_SPARSE_COLUMN_NONE. */
QV_API QvStatus qv_sparse_column_type_from_field(const struct ArrowSchema *field,
                                                 QvSparseColumnType *out, QvError *error);
/** Builds the field (name may be NULL: "") of a type: storage format and
 * children, extension name and metadata; the field is nullable, storage
 * children are not. */
QV_API QvStatus qv_sparse_column_schema_init(struct ArrowSchema *out, const char *name,
                                             const QvSparseColumnType *type, QvError *error);

/* ---- columns */

/** Options of qv_sparse_column_init (none yet: pass NULL). */
typedef struct QvSparseColumnOptions {
  size_t struct_size; /**< 0 or sizeof(QvSparseColumnOptions); no options yet */
} QvSparseColumnOptions;

/** A sparse column: its type and its storage array, kept alive by `owner`
 * (cell views retain it). */
typedef struct QvSparseColumn {
  QvSparseColumnType type; /**< the parsed extension type */
  int64_t length;          /**< rows */
  int64_t null_count;      /**< null rows */
  QvOwner *owner;          /**< owns the storage array; cell views retain it */
  void *private_data;      /**< the storage array and its view; owned through `owner` */
} QvSparseColumn;

/** Takes a field and its array (moved: array->release is NULL afterwards,
 * on success only) and validates the storage in full (QV_VALIDATE_FULL) and
 * every non-null row against the type, QV_EINVAL naming field, row and
 * element: nulls inside the storage's children, a negative extent or a shape
 * whose product overflows int64, list lengths that disagree (nnz of the
 * values and of the indices, indptr of rows+1 entries), indptr not from 0,
 * decreasing or not ending at nnz, an index outside the shape, indices not
 * strictly increasing where the format requires it (CSR/CSC rows/columns, CSF
 * siblings, a vector's entries), a COO marked canonical that is unsorted or
 * has duplicates, a CSF axis_order that is no permutation. A field that is no
 * sparse column is QV_EINVAL. Each rule is checked once: a sparse-vector
 * column without nulls whose offsets start at 0 has its entries checked as
 * one CSR matrix in a single vector pass (the row loop runs only to name the
 * first bad row and element); cell views and the stacked CSR matrix trust
 * this check. */
QV_API QvStatus qv_sparse_column_init(QvSparseColumn *out, const struct ArrowSchema *field,
                                      struct ArrowArray *array,
                                      const QvSparseColumnOptions *options, QvError *error);
/** Releases the column (cell views keep the storage alive on their own). */
QV_API void qv_sparse_column_reset(QvSparseColumn *col);
/** Whether row i is null (false outside the column). */
QV_API bool qv_sparse_column_is_null(const QvSparseColumn *col, int64_t i);
/** Row i as a sparse tensor view (no copy; the view retains the storage): a
 * tensor column's cell in its format; a vector column's row as a 1-D
 * canonical COO of shape [size]. A null row is QV_EINVAL ("row 4 is null"),
 * i outside the column QV_EARG. */
QV_API QvStatus qv_sparse_column_cell(const QvSparseColumn *col, int64_t i, QvSparseTensor *out,
                                      QvError *error);
/** nnz of row i without building a view (-1 for a null row or an i
 * outside the column). */
QV_API int64_t qv_sparse_column_cell_nnz(const QvSparseColumn *col, int64_t i);

/** Options of qv_sparse_vector_stack; NULL or a zeroed struct means every default. */
typedef struct QvSparseStackOptions {
  size_t struct_size; /**< 0 or sizeof(QvSparseStackOptions) */
  /** Bytes the indptr copy of a sliced column may take (checked before it is
   * made, QV_ELIMIT naming both sizes); 0: QV_DEFAULT_MAX_OUTPUT_SIZE. */
  int64_t max_output_size;
} QvSparseStackOptions;

/** A sparse-vector column of n rows as one n x size CSR tensor (see the top
 * of this file for the one copy). Dim names are the type's. A null row is
 * QV_EINVAL ("row 3 is null: a CSR matrix has no null rows"); a tensor
 * column is QV_EARG. */
QV_API QvStatus qv_sparse_vector_stack(const QvSparseColumn *col,
                                       const QvSparseStackOptions *options, QvSparseTensor *out,
                                       QvError *error);

/** Options of qv_sparse_vector_unstack; NULL or a zeroed struct means every default. */
typedef struct QvSparseUnstackOptions {
  size_t struct_size; /**< 0 or sizeof(QvSparseUnstackOptions) */
  const char *name;   /**< field name; NULL: "sparse" */
  /** Bytes an indptr copy may take (other indptr types than int32/int64);
   * 0: QV_DEFAULT_MAX_OUTPUT_SIZE. */
  int64_t max_output_size;
} QvSparseUnstackOptions;

/** A CSR tensor as a sparse-vector column of shape[0] rows of size shape[1]
 * (dim names kept). *schema and *array are new; the array shares the
 * tensor's buffers and retains its owner (an indptr of another type than
 * int32/int64 is copied). Not CSR: QV_EINVAL. */
QV_API QvStatus qv_sparse_vector_unstack(const QvSparseTensor *csr,
                                         const QvSparseUnstackOptions *options,
                                         struct ArrowSchema *schema, struct ArrowArray *array,
                                         QvError *error);

/** Options of qv_sparse_column_build; NULL or a zeroed struct means every default. */
typedef struct QvSparseBuildOptions {
  size_t struct_size;      /**< 0 or sizeof(QvSparseBuildOptions) */
  const char *name;        /**< field name; NULL: "sparse" */
  QvSparseColumnKind kind; /**< QV_SPARSE_COLUMN_NONE: TENSOR */
  /** vector: the dense length (0: the cells' shape[0], which must agree) */
  int64_t size;
  /** tensor: the column's dim names (NULL: the first non-null cell's); every
   * cell must have these names or none */
  const char *const *dim_names;
  int32_t n_dim_names;     /**< entries of `dim_names` */
  /** tensor with no non-null cell: what the column holds */
  QvSparseFormat format;
  QvArrowType value_type;  /**< tensor with no non-null cell: the value type */
  QvArrowType index_type;  /**< tensor with no non-null cell: the index type */
  QvArrowType indptr_type; /**< tensor with no non-null cell: the indptr type */
  int32_t ndim;            /**< tensor with no non-null cell: dims of a cell */
  /** Bytes the copied buffers may take (checked before any is made);
   * 0: QV_DEFAULT_MAX_OUTPUT_SIZE. */
  int64_t max_output_size;
} QvSparseBuildOptions;

/** Builds a column of n rows from sparse tensors (cells[i] NULL: a null row),
 * each validated first. Tensor kind: every cell the same format, value type,
 * index types and ndim (QV_EINVAL naming the first cell that differs); a
 * COO's coordinates are written row-major, the canonical flag and a CSF's
 * axis order per cell. Vector kind: 1-D cells of any format, written as
 * sorted unique entries (a non-canonical COO is canonicalized, duplicates
 * summed). Lists are LargeLists when a list's total length needs it. */
QV_API QvStatus qv_sparse_column_build(const QvSparseTensor *const *cells, int64_t n,
                                       const QvSparseBuildOptions *options,
                                       struct ArrowSchema *schema, struct ArrowArray *array,
                                       QvError *error);

#ifdef __cplusplus
}
#endif

#endif
