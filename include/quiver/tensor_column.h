/** @file
 * quiver: tensors inside tables (Arrow's canonical tensor extension types,
 * CanonicalExtensions.rst) and their bridges to dense tensors.
 *
 *  - arrow.fixed_shape_tensor: storage FixedSizeList<value>[prod(shape)],
 *    metadata {"shape": [...], "dim_names": [...], "permutation": [...]}.
 *  - arrow.variable_shape_tensor: storage Struct{data: List<value>,
 *    shape: FixedSizeList<int32>[ndim]}, metadata {"dim_names", "permutation",
 *    "uniform_shape"} (all optional; the metadata may be empty).
 *  - The cell-tensor form (no canonical name: the caller names it): Binary,
 *    LargeBinary or FixedSizeBinary storage, each cell one tensor's row-major
 *    little-endian bytes, metadata {"type": "int8", "shape": [4, 5]}.
 *
 * Shapes, dim_names and uniform_shape describe the physical (row-major)
 * tensor; `permutation` maps logical dim i to physical dim permutation[i]. A
 * cell view is logical: shape[i] = physical shape[permutation[i]], with the
 * physical strides permuted the same way, so it needs no copy.
 *
 * What copies and what does not:
 *  - a cell of any kind -> a tensor: a view (no copy), unless the cell's
 *    bytes are not aligned to the element size (only Binary storage at an odd
 *    offset), in which case the cell is copied into aligned memory;
 *  - a column -> one tensor [n, ...logical shape] (qv_tensor_column_stack):
 *    a view (permutation through strides) when no cell is null, for every
 *    kind: fixed shape cells, variable shape cells that all have one shape,
 *    and cell-form cells all lie one after the other in their storage (a
 *    copy only when they are not aligned to the element size: Binary cells
 *    at odd offsets); with nulls it is refused, or (null_fill) the cells
 *    are copied once and null cells are zeroed; `contiguous` asks for a
 *    row-major copy (e.g. to undo a permutation);
 *  - tensor -> fixed_shape_tensor column: a view when the tensor's layout is
 *    a permutation of a row-major layout with the leading dim outermost
 *    (row-major tensors, and e.g. [n, H, W, C] stored as [n, C, H, W]),
 *    expressed with `permutation`; any other layout is copied row-major;
 *  - the builder (qv_tensor_column_build) copies every cell.
 * Columns are ordinary ArrowSchema/ArrowArray pairs (quiver/c_data.h) whose
 * field carries ARROW:extension:name and ARROW:extension:metadata, so the C
 * Data Interface export and import are the structs themselves. */
#ifndef QUIVER_TENSOR_COLUMN_H
#define QUIVER_TENSOR_COLUMN_H

#include "quiver/common.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "quiver/array.h"
#include "quiver/buffer.h"
#include "quiver/c_data.h"
#include "quiver/error.h"
#include "quiver/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Extension name of Arrow's canonical fixed shape tensor type. */
#define QV_FIXED_SHAPE_TENSOR "arrow.fixed_shape_tensor"
/** Extension name of Arrow's canonical variable shape tensor type. */
#define QV_VARIABLE_SHAPE_TENSOR "arrow.variable_shape_tensor"

/** Which tensor column form a field is. */
typedef enum QvTensorColumnKind {
  QV_TENSOR_COLUMN_NONE = 0,       /**< no tensor column */
  QV_TENSOR_COLUMN_FIXED_SHAPE,    /**< arrow.fixed_shape_tensor */
  QV_TENSOR_COLUMN_VARIABLE_SHAPE, /**< arrow.variable_shape_tensor */
  QV_TENSOR_COLUMN_CELL            /**< Binary/FixedSizeBinary cells, named by the caller */
} QvTensorColumnKind;

/** The parsed extension type of a tensor column. */
typedef struct QvTensorColumnType {
  QvTensorColumnKind kind;  /**< the form; NONE for a field that is no tensor column */
  QvArrowType value_type;   /**< the numeric type of the cells' elements */
  int32_t ndim; /**< dims of one cell (physical = logical count) */
  /** Physical shape: every extent for fixed shape and cell tensors; for
   * variable shape, uniform_shape with -1 for a non-uniform (null) or
   * unspecified extent. */
  int64_t shape[QV_TENSOR_MAX_NDIM];
  bool has_uniform_shape;               /**< variable shape: uniform_shape given */
  bool has_permutation;                 /**< a permutation other than the identity was given */
  int32_t permutation[QV_TENSOR_MAX_NDIM]; /**< identity when absent */
  const char *const *dim_names;          /**< NULL or ndim names (physical order) */
  void *private_data;                    /**< names storage; owned */
} QvTensorColumnType;

/** Parses extension metadata (JSON text of `len` bytes, not NUL-terminated)
 * of a kind into *out (zeroed first; reset with qv_tensor_column_type_reset).
 * For variable shape, `ndim` is the storage's shape list size (the metadata
 * alone does not fix it); other kinds take ndim from "shape" and ignore the
 * argument. Errors (QV_EINVAL) name the field and element: malformed JSON
 * (with its line, column and byte), a missing or non-array "shape", an
 * extent that is negative or not an integer ("shape[1] = -2"), a
 * "permutation" of the wrong length or that is not a permutation
 * ("permutation[2] = 0 repeats permutation[0]"), "dim_names" of the wrong
 * length or with a non-string element, "uniform_shape" of the wrong length
 * or with a negative element, an unknown "type" (cell form), more than
 * QV_TENSOR_MAX_NDIM dims (QV_ELIMIT). Unknown keys are ignored. */
QV_API QvStatus qv_tensor_column_type_parse(QvTensorColumnKind kind, const char *json, size_t len,
                                            int32_t ndim, QvTensorColumnType *out,
                                            QvError *error);
/** Frees what qv_tensor_column_type_parse allocated; NULL is a no-op. */
QV_API void qv_tensor_column_type_reset(QvTensorColumnType *type);
/** Elements in one cell of a fixed shape / cell tensor type (product of the
 * extents); -1 on overflow. */
QV_API int64_t qv_tensor_column_type_cell_n_elements(const QvTensorColumnType *type);

/** Recognizes a field: arrow.fixed_shape_tensor and arrow.variable_shape_tensor
 * by their names, the cell form when the field's extension name equals
 * `cell_extension` (NULL: not recognized). Parses the metadata and checks the
 * storage type against it (FixedSizeList size == product(shape) naming both,
 * value type numeric, Struct children "data"/"shape" with their types, the
 * FixedSizeBinary width == product * element size). A field that is no
 * tensor column gives QV_OK with out->kind == QV_TENSOR_COLUMN_NONE. */
QV_API QvStatus qv_tensor_column_type_from_field(const struct ArrowSchema *field,
                                                 const char *cell_extension,
                                                 QvTensorColumnType *out, QvError *error);
/** Writes the metadata JSON of a type (NUL-terminated; qv_free it). */
QV_API QvStatus qv_tensor_column_type_to_json(const QvTensorColumnType *type, char **json,
                                              QvError *error);
/** Builds the field (name may be NULL) for a type: storage format, children,
 * extension name (`cell_extension` for the cell form; required then) and
 * metadata. Nullable. */
QV_API QvStatus qv_tensor_column_schema_init(struct ArrowSchema *out, const char *name,
                                             const QvTensorColumnType *type,
                                             const char *cell_extension, QvError *error);

/* ---- columns */

/** Options of qv_tensor_column_init; NULL or a zeroed struct means every default. */
typedef struct QvTensorColumnOptions {
  size_t struct_size;         /**< 0 or sizeof(QvTensorColumnOptions) */
  const char *cell_extension; /**< the cell form's extension name; NULL: none */
} QvTensorColumnOptions;

/** A tensor column: its type, and the storage array kept alive by `owner`
 * (cell views retain it). */
typedef struct QvTensorColumn {
  QvTensorColumnType type; /**< the parsed extension type */
  int64_t length;          /**< cells (rows) */
  int64_t null_count;      /**< null cells */
  QvOwner *owner;          /**< owns the storage array; cell views retain it */
  void *private_data;      /**< the storage array and its view; owned through `owner` */
} QvTensorColumn;

/** Takes a field and its array (the array is moved: array->release is NULL
 * afterwards, on success only), validates the storage array fully
 * (QV_VALIDATE_FULL) and against the type: a variable shape cell whose data
 * length is not the product of its shape ("cell 3: shape [2, 5] holds 10
 * values, data has 9"), a negative extent, an extent that differs from
 * uniform_shape ("cell 1: shape[0] = 3, uniform_shape[0] = 2"), a binary
 * cell of the wrong size. A field that is no tensor column is QV_EINVAL. */
QV_API QvStatus qv_tensor_column_init(QvTensorColumn *out, const struct ArrowSchema *field,
                                      struct ArrowArray *array,
                                      const QvTensorColumnOptions *options, QvError *error);
/** Releases the column: its type, and its reference to the storage array
 * qv_tensor_column_init took, which is released once no cell view holds it
 * either. NULL is a no-op. */
QV_API void qv_tensor_column_reset(QvTensorColumn *col);
/** Whether cell i is null. */
QV_API bool qv_tensor_column_is_null(const QvTensorColumn *col, int64_t i);
/** Cell i as a logical tensor view (see the top of this file); a null cell is
 * QV_EINVAL ("cell 4 is null"); i out of range is QV_EARG. Dim names follow
 * the permutation. */
QV_API QvStatus qv_tensor_column_cell(const QvTensorColumn *col, int64_t i, QvTensor *out,
                                      QvError *error);

/** Options of qv_tensor_column_stack; NULL or a zeroed struct means every default. */
typedef struct QvTensorStackOptions {
  size_t struct_size; /**< 0 or sizeof(QvTensorStackOptions) */
  bool null_fill;     /**< null cells become zeros (one copy) instead of an error */
  bool contiguous;    /**< always a row-major copy */
  const char *leading_name; /**< name of the leading dim when cells have dim names; NULL: "" */
  /** The most bytes a copy (null_fill, contiguous, unaligned cells) may
   * allocate, checked before it does (QV_ELIMIT naming both sizes): a
   * variable shape column of null cells takes its shape from uniform_shape
   * alone, so its input bounds nothing. 0: QV_DEFAULT_MAX_OUTPUT_SIZE
   * (quiver/sparse.h, 16 GiB). Views are not limited. */
  int64_t max_output_size;
  /** Threads that copy, 0..QV_TENSOR_COLUMN_MAX_THREADS; 0 or 1 (default):
   * the calling thread alone. A copy (null_fill, contiguous, unaligned
   * cells) of 4 MiB or more is split by ranges of the leading index, each
   * thread writing (and first touching) its own slab of the result. Views
   * start no thread. The result is the same for any count. */
  int threads;
} QvTensorStackOptions;

/** Largest `threads` of QvTensorStackOptions and QvTensorUnstackOptions. */
#define QV_TENSOR_COLUMN_MAX_THREADS 256

/** A tensor column of any kind as one tensor [length, ...logical shape]
 * (see the top of this file for when it copies). Variable shape cells must
 * all have one shape: otherwise QV_EINVAL naming the first cell that
 * differs and both shapes ("cell 2 has shape [2, 3], cell 0 has [2, 2]");
 * null cells do not count, and when every cell is null uniform_shape must
 * fix every dim. A null cell is QV_EINVAL ("cell 4 is null") unless
 * null_fill. */
QV_API QvStatus qv_tensor_column_stack(const QvTensorColumn *col,
                                       const QvTensorStackOptions *options, QvTensor *out,
                                       QvError *error);

/** Options of qv_tensor_column_unstack; NULL or a zeroed struct means every default. */
typedef struct QvTensorUnstackOptions {
  size_t struct_size; /**< 0 or sizeof(QvTensorUnstackOptions) */
  const char *name;   /**< field name; NULL: the tensor's leading dim name when it has
                       * one (stacking the column gives it back), else "tensor" */
  bool contiguous;    /**< never express a layout with `permutation`: copy row-major */
  /** Threads of a row-major copy, as QvTensorStackOptions.threads. */
  int threads;
} QvTensorUnstackOptions;

/** A tensor with ndim >= 1 as a fixed_shape_tensor column of shape[0] cells
 * of shape[1:] (dim names: those of dims 1.. when the tensor has names).
 * *schema and *array are new; the array shares the tensor's memory and
 * retains its owner when it does not copy. */
QV_API QvStatus qv_tensor_column_unstack(const QvTensor *t, const QvTensorUnstackOptions *options,
                                  struct ArrowSchema *schema, struct ArrowArray *array,
                                  QvError *error);

/** Builds a column of `type` (any kind; for variable shape only value_type,
 * ndim, dim names, permutation and uniform_shape matter) from n cells,
 * copying them (cells[i] NULL: a null cell). Each cell is the physical
 * tensor: row-major bytes of its shape in any layout (it is read with its
 * strides). Fixed shape and FixedSizeBinary cells must have the type's
 * shape; every cell the type's value type and ndim. */
QV_API QvStatus qv_tensor_column_build(const QvTensorColumnType *type, const char *name,
                                       const char *cell_extension, const QvTensor *const *cells,
                                       int64_t n, struct ArrowSchema *schema,
                                       struct ArrowArray *array, QvError *error);

/** Moves a column (field + array, e.g. from qv_tensor_column_unstack) into a
 * one-column record batch: a Struct schema and array with the column as
 * their only child (field->release and column->release are NULL after
 * success), ready for qv_rb_writer_write. */
QV_API QvStatus qv_tensor_column_to_batch(struct ArrowSchema *field, struct ArrowArray *column,
                                          struct ArrowSchema *batch_schema,
                                          struct ArrowArray *batch, QvError *error);

#ifdef __cplusplus
}
#endif

#endif
