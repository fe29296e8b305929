/* Tensor columns (quiver/tensor_column.h): validation of storage arrays,
 * cell views, and the column <-> dense tensor bridges. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "quiver/advanced.h"
#include "adapters/tensor_column_internal.h"
#include "quiver/sparse.h" /* QV_DEFAULT_MAX_OUTPUT_SIZE */
#include "quiver/tensor_column.h"
#include "tensor/tensor_copy.h"
#include "util/copy.h"
#include "util/cpu.h"
#include "util/options.h"
#include "util/pool.h"
#include "util/strides.h"

/* What the column's owner keeps alive: the moved storage array and a view of
 * it. Cell views retain the owner, so the array outlives the column. */
typedef struct ColumnStore {
  struct ArrowArray array;
  QvArrayView view;
  int data_child; /* variable shape: index of "data" / "shape" in the struct */
  int shape_child;
} ColumnStore;

static void store_release(void *p) {
  ColumnStore *s = p;
  qv_array_view_reset(&s->view);
  if (s->array.release != NULL) s->array.release(&s->array);
  free(s);
}

static const ColumnStore *store_of(const QvTensorColumn *col) { return col->private_data; }

void qv_tensor_column_reset(QvTensorColumn *col) {
  if (col == NULL) return;
  qv_tensor_column_type_reset(&col->type);
  qv_owner_free(col->owner);
  memset(col, 0, sizeof *col);
}

bool qv_tensor_column_is_null(const QvTensorColumn *col, int64_t i) {
  const ColumnStore *s = store_of(col);
  return s != NULL && i >= 0 && i < col->length && qv_array_view_is_null(&s->view, i);
}

/* Variable shape: row i of the storage struct is row offset + i of its
 * children (a sliced struct keeps its children whole). */
static int64_t child_row(const ColumnStore *s, int64_t i) { return s->view.offset + i; }

/* Variable shape: the extents of cell i (from the shape child). */
static void cell_shape(const ColumnStore *s, int32_t ndim, int64_t i, int64_t *shape) {
  const QvArrayView *sv = &s->view.children[s->shape_child];
  int64_t start, len;
  qv_array_view_get_list(sv, child_row(s, i), &start, &len);
  for (int32_t k = 0; k < ndim; k++) shape[k] = qv_array_view_get_int(&sv->children[0], start + k);
}

static void format_shape(char *buf, size_t size, int32_t ndim, const int64_t *shape) {
  size_t n = 0;
  n += (size_t)snprintf(buf + n, size - n, "[");
  for (int32_t k = 0; k < ndim && n < size; k++)
    n += (size_t)snprintf(buf + n, size - n, "%s%lld", k ? ", " : "", (long long)shape[k]);
  if (n < size) snprintf(buf + n, size - n, "]");
}

/* Checks every non-null cell against the type. */
static QvStatus check_cells(const QvTensorColumn *col, const ColumnStore *s, QvError *error) {
  const QvTensorColumnType *t = &col->type;
  const char *what = qvi_tensor_column_kind_name(t->kind);
  int64_t es = (int64_t)qv_arrow_type_size(t->value_type);
  for (int64_t i = 0; i < col->length; i++) {
    if (qv_array_view_is_null(&s->view, i)) continue;
    if (t->kind == QV_TENSOR_COLUMN_VARIABLE_SHAPE) {
      int64_t shape[QV_TENSOR_MAX_NDIM], n = 1;
      cell_shape(s, t->ndim, i, shape);
      char text[256];
      for (int32_t k = 0; k < t->ndim; k++) {
        if (shape[k] < 0)
          return qv_error_set(error, QV_EINVAL, "%s cell %lld: shape[%d] = %lld is negative", what,
                              (long long)i, (int)k, (long long)shape[k]);
        if (t->shape[k] >= 0 && shape[k] != t->shape[k])
          return qv_error_set(error, QV_EINVAL,
                              "%s cell %lld: shape[%d] = %lld, uniform_shape[%d] = %lld", what,
                              (long long)i, (int)k, (long long)shape[k], (int)k,
                              (long long)t->shape[k]);
        n *= shape[k]; /* int32 extents, <= 64 dims: checked below before it can wrap */
        if (n > INT64_MAX / INT32_MAX) n = INT64_MAX / INT32_MAX;
      }
      int64_t start, len;
      qv_array_view_get_list(&s->view.children[s->data_child], child_row(s, i), &start, &len);
      if (len != n) {
        format_shape(text, sizeof text, t->ndim, shape);
        return qv_error_set(error, QV_EINVAL, "%s cell %lld: shape %s holds %lld values, data has %lld",
                            what, (long long)i, text, (long long)n, (long long)len);
      }
    } else if (t->kind == QV_TENSOR_COLUMN_CELL) {
      QvBytes b = qv_array_view_get_bytes(&s->view, i);
      int64_t want = qv_tensor_column_type_cell_n_elements(t) * es;
      if (b.size != want)
        return qv_error_set(error, QV_EINVAL, "cell tensor cell %lld has %lld bytes, a %s tensor of "
                            "its shape has %lld", (long long)i, (long long)b.size,
                            qv_arrow_type_name(t->value_type), (long long)want);
    }
  }
  return QV_OK;
}

QvStatus qv_tensor_column_init(QvTensorColumn *out, const struct ArrowSchema *field,
                               struct ArrowArray *array, const QvTensorColumnOptions *options,
                               QvError *error) {
  if (out == NULL) return qv_error_set(error, QV_EARG, "qv_tensor_column_init: out is NULL");
  memset(out, 0, sizeof *out);
  if (field == NULL || array == NULL || array->release == NULL)
    return qv_error_set(error, QV_EARG, "qv_tensor_column_init: no field or no (live) array");
  QvTensorColumnOptions opts;
  QvStatus st = QV_OPTIONS_LOAD(&opts, options, QvTensorColumnOptions, error);
  if (st != QV_OK) return st;
  if ((st = qv_tensor_column_type_from_field(field, opts.cell_extension, &out->type, error)) !=
      QV_OK)
    return st;
  if (out->type.kind == QV_TENSOR_COLUMN_NONE) {
    QvArrowSchemaView v;
    qv_arrow_schema_view_init(&v, field, NULL);
    return qv_error_set(error, QV_EINVAL, "field '%s' is not a tensor column (extension '%.*s')",
                        field->name ? field->name : "",
                        v.extension_name ? (int)v.extension_name_len : 4,
                        v.extension_name ? v.extension_name : "none");
  }
  ColumnStore *s = calloc(1, sizeof *s);
  if (s == NULL) {
    qv_tensor_column_type_reset(&out->type);
    return qv_error_set(error, QV_ENOMEM, "out of memory for a tensor column");
  }
  s->array = *array; /* moved: given back below on failure */
  array->release = NULL;
  s->data_child = 0;
  s->shape_child = 1;
  if (out->type.kind == QV_TENSOR_COLUMN_VARIABLE_SHAPE && field->children[0]->name != NULL &&
      strcmp(field->children[0]->name, "shape") == 0) {
    s->data_child = 1;
    s->shape_child = 0;
  }
  if ((st = qv_array_view_init(&s->view, field, error)) == QV_OK &&
      (st = qv_array_view_set_array(&s->view, &s->array, QV_VALIDATE_FULL, error)) == QV_OK) {
    out->length = s->array.length;
    /* fixed shape cells are fully checked by the storage validation */
    if (out->type.kind != QV_TENSOR_COLUMN_FIXED_SHAPE) st = check_cells(out, s, error);
  }
  if (st == QV_OK) {
    out->owner = qv_owner_new(store_release, s);
    if (out->owner == NULL) st = qv_error_set(error, QV_ENOMEM, "out of memory for a tensor column");
  }
  if (st != QV_OK) {
    qv_array_view_reset(&s->view);
    *array = s->array;
    free(s);
    qv_tensor_column_type_reset(&out->type);
    memset(out, 0, sizeof *out);
    return st;
  }
  out->private_data = s;
  /* without a validity bitmap there are no nulls (no per-cell walk) */
  out->null_count = 0;
  if (s->view.buffer[0] != NULL)
    for (int64_t i = 0; i < out->length; i++) out->null_count += qv_array_view_is_null(&s->view, i);
  return QV_OK;
}

/* Physical row-major strides of a shape, then the logical (permuted) shape,
 * strides and names. */
static QvStatus logical_layout(const QvTensorColumnType *t, const int64_t *physical,
                               int64_t *shape, int64_t *strides, const char **names,
                               QvError *error) {
  int64_t pst[QV_TENSOR_MAX_NDIM];
  QvStatus st = qv_tensor_compute_strides(t->value_type, t->ndim, physical, false, pst, error);
  if (st != QV_OK) return st;
  for (int32_t k = 0; k < t->ndim; k++) {
    int32_t p = t->permutation[k];
    shape[k] = physical[p];
    strides[k] = pst[p];
    if (t->dim_names != NULL) names[k] = t->dim_names[p];
  }
  return QV_OK;
}

/* Builds a view; when the data is not aligned to the element size (a Binary
 * cell at an odd offset), the view is copied into aligned memory (split
 * over `pool`, which may be NULL). */
static QvStatus view_or_copy(QvTensorDesc *d, QvPool *pool, QvTensor *out, QvError *error) {
  QvStatus st = qv_tensor_init(out, d, error);
  if (st != QV_OK) return st;
  size_t es = qv_arrow_type_size(d->type);
  if (out->data != NULL && (uintptr_t)out->data % es != 0) {
    QvTensor copy;
    st = qvi_tensor_copy_pool(out, false, pool, &copy, error);
    qv_tensor_reset(out);
    if (st != QV_OK) return st;
    *out = copy;
  }
  return QV_OK;
}

QvStatus qv_tensor_column_cell(const QvTensorColumn *col, int64_t i, QvTensor *out,
                               QvError *error) {
  if (out == NULL) return qv_error_set(error, QV_EARG, "qv_tensor_column_cell: out is NULL");
  memset(out, 0, sizeof *out);
  const ColumnStore *s = col ? store_of(col) : NULL;
  if (s == NULL) return qv_error_set(error, QV_EARG, "qv_tensor_column_cell: no column");
  if (i < 0 || i >= col->length)
    return qv_error_set(error, QV_EARG, "cell %lld is outside the column's %lld cells",
                        (long long)i, (long long)col->length);
  if (qv_array_view_is_null(&s->view, i))
    return qv_error_set(error, QV_EINVAL, "cell %lld is null", (long long)i);
  const QvTensorColumnType *t = &col->type;
  int64_t es = (int64_t)qv_arrow_type_size(t->value_type);
  int64_t physical[QV_TENSOR_MAX_NDIM];
  const uint8_t *data;
  int64_t size;
  if (t->kind == QV_TENSOR_COLUMN_CELL) {
    memcpy(physical, t->shape, sizeof physical);
    QvBytes b = qv_array_view_get_bytes(&s->view, i);
    data = b.data;
    size = b.size;
  } else {
    const QvArrayView *lv = t->kind == QV_TENSOR_COLUMN_FIXED_SHAPE
                                ? &s->view
                                : &s->view.children[s->data_child];
    if (t->kind == QV_TENSOR_COLUMN_FIXED_SHAPE)
      memcpy(physical, t->shape, sizeof physical);
    else
      cell_shape(s, t->ndim, i, physical);
    int64_t start, len;
    qv_array_view_get_list(lv, lv == &s->view ? i : child_row(s, i), &start, &len);
    const QvArrayView *values = &lv->children[0];
    data = values->buffer[1] ? values->buffer[1] + (values->offset + start) * es : NULL;
    size = len * es;
  }
  int64_t shape[QV_TENSOR_MAX_NDIM], strides[QV_TENSOR_MAX_NDIM];
  const char *names[QV_TENSOR_MAX_NDIM];
  QvStatus st = logical_layout(t, physical, shape, strides, names, error);
  if (st != QV_OK) return st;
  QvTensorDesc d = {.type = t->value_type, .ndim = t->ndim, .shape = shape, .strides = strides,
                    .dim_names = t->dim_names ? names : NULL, .data = data, .data_size = size,
                    .owner = col->owner};
  st = view_or_copy(&d, NULL, out, error);
  if (st != QV_OK) qv_error_prefix(error, "cell %lld", (long long)i);
  return st;
}

/* Where cell i's values start (its bytes for the cell form). */
static const uint8_t *cell_data(const ColumnStore *s, const QvTensorColumnType *t, int64_t i) {
  if (t->kind == QV_TENSOR_COLUMN_CELL) return qv_array_view_get_bytes(&s->view, i).data;
  const QvArrayView *lv =
      t->kind == QV_TENSOR_COLUMN_FIXED_SHAPE ? &s->view : &s->view.children[s->data_child];
  int64_t start, len;
  qv_array_view_get_list(lv, lv == &s->view ? i : child_row(s, i), &start, &len);
  const QvArrayView *values = &lv->children[0];
  int64_t es = (int64_t)qv_arrow_type_size(t->value_type);
  return values->buffer[1] ? values->buffer[1] + (values->offset + start) * es : NULL;
}

/* The physical shape of the stacked cells: the type's, or for variable
 * shape that of every non-null cell (they must agree), else uniform_shape
 * when it fixes every dim. */
static QvStatus stack_shape(const QvTensorColumn *col, const ColumnStore *s, int64_t *physical,
                            QvError *error) {
  const QvTensorColumnType *t = &col->type;
  memcpy(physical, t->shape, sizeof t->shape);
  if (t->kind != QV_TENSOR_COLUMN_VARIABLE_SHAPE) return QV_OK;
  int64_t first = -1, shape[QV_TENSOR_MAX_NDIM];
  for (int64_t i = 0; i < col->length; i++) {
    if (qv_array_view_is_null(&s->view, i)) continue;
    cell_shape(s, t->ndim, i, shape);
    if (first < 0) {
      first = i;
      memcpy(physical, shape, (size_t)t->ndim * sizeof shape[0]);
      continue;
    }
    if (memcmp(shape, physical, (size_t)t->ndim * sizeof shape[0]) != 0) {
      char a[256], b[256];
      format_shape(a, sizeof a, t->ndim, shape);
      format_shape(b, sizeof b, t->ndim, physical);
      return qv_error_set(error, QV_EINVAL,
                          "%s cell %lld has shape %s, cell %lld has %s: the cells of one tensor "
                          "need one shape",
                          QV_VARIABLE_SHAPE_TENSOR, (long long)i, a, (long long)first, b);
    }
  }
  if (first < 0)
    for (int32_t k = 0; k < t->ndim; k++)
      if (physical[k] < 0)
        return qv_error_set(error, QV_EINVAL,
                            "%s column of %lld cells, none of them non-null: the stacked shape "
                            "is unknown (uniform_shape does not fix dim %d)",
                            QV_VARIABLE_SHAPE_TENSOR, (long long)col->length, (int)k);
  return QV_OK;
}

static QvStatus check_output(int64_t total, int64_t limit, const char *why, QvError *error) {
  if (total <= limit) return QV_OK;
  return qv_error_set(error, QV_ELIMIT,
                      "stacking %s takes %lld bytes, over the limit of %lld (max_output_size)",
                      why, (long long)total, (long long)limit);
}

static QvStatus check_threads(int threads, QvError *error) {
  if (threads >= 0 && threads <= QV_TENSOR_COLUMN_MAX_THREADS) return QV_OK;
  return qv_error_set(error, QV_EARG, "threads must be 0..%d, not %d",
                      QV_TENSOR_COLUMN_MAX_THREADS, threads);
}

/* Starts *pool (when still NULL) for a copy of `total` bytes over
 * `leading` leading indices, when that copy would be split: no more
 * threads than it has ranges. */
static QvStatus copy_pool(int threads, int64_t leading, int64_t total, QvPool **pool,
                          QvError *error) {
  if (*pool != NULL) return QV_OK;
  int64_t tasks = qvi_tensor_copy_tasks(leading, total, threads);
  if (tasks <= 1) return QV_OK;
  return qvi_pool_new(pool, tasks < threads ? (int)tasks : threads, error);
}

/* The null fill of cells [a, b): runs of valid cells copied, runs of null
 * ones zeroed, so each byte is written once. */
typedef struct FillJob {
  const ColumnStore *s;
  const QvTensorColumnType *t;
  uint8_t *buf;
  int64_t n, cell_bytes, per; /* cells, bytes per cell, cells per task */
} FillJob;

static void fill_cells(const FillJob *f, int64_t a, int64_t b) {
  for (int64_t i = a; i < b;) {
    bool null = qv_array_view_is_null(&f->s->view, i);
    int64_t j = i + 1;
    while (j < b && qv_array_view_is_null(&f->s->view, j) == null) j++;
    size_t off = (size_t)(i * f->cell_bytes), len = (size_t)((j - i) * f->cell_bytes);
    if (null)
      memset(f->buf + off, 0, len);
    else
      qvi_copy_large(f->buf + off, cell_data(f->s, f->t, i), len);
    i = j;
  }
}

static void fill_task(void *ctx, size_t k) {
  const FillJob *f = ctx;
  int64_t a = (int64_t)k * f->per;
  fill_cells(f, a, f->n - a < f->per ? f->n : a + f->per);
}

QvStatus qv_tensor_column_stack(const QvTensorColumn *col, const QvTensorStackOptions *options,
                                QvTensor *out, QvError *error) {
  if (out == NULL) return qv_error_set(error, QV_EARG, "qv_tensor_column_stack: out is NULL");
  memset(out, 0, sizeof *out);
  const ColumnStore *s = col ? store_of(col) : NULL;
  if (s == NULL) return qv_error_set(error, QV_EARG, "qv_tensor_column_stack: no column");
  QvTensorStackOptions opts;
  QvStatus st = QV_OPTIONS_LOAD(&opts, options, QvTensorStackOptions, error);
  if (st != QV_OK || (st = check_threads(opts.threads, error)) != QV_OK) return st;
  int64_t limit = opts.max_output_size > 0 ? opts.max_output_size : QV_DEFAULT_MAX_OUTPUT_SIZE;
  const QvTensorColumnType *t = &col->type;
  if (t->ndim + 1 > QV_TENSOR_MAX_NDIM)
    return qv_error_set(error, QV_ELIMIT, "cells of %d dims stack into more than %d dims",
                        (int)t->ndim, QV_TENSOR_MAX_NDIM);
  int64_t n = col->length;
  if (col->null_count > 0 && !opts.null_fill) {
    int64_t first = 0;
    while (!qv_array_view_is_null(&s->view, first)) first++;
    return qv_error_set(error, QV_EINVAL,
                        "cell %lld is null (%lld null cells): a tensor has no nulls (null_fill "
                        "makes them zeros)",
                        (long long)first, (long long)col->null_count);
  }
  int64_t physical[QV_TENSOR_MAX_NDIM];
  if ((st = stack_shape(col, s, physical, error)) != QV_OK) return st;
  /* [n, ...shape] in bytes; uniform_shape alone (all cells null) bounds
   * nothing, so every product is checked */
  int64_t es = (int64_t)qv_arrow_type_size(t->value_type), cell_bytes = es, total;
  bool empty = false;
  for (int32_t k = 0; k < t->ndim; k++) empty |= physical[k] == 0;
  for (int32_t k = 0; k < t->ndim && !empty; k++)
    if (__builtin_mul_overflow(cell_bytes, physical[k], &cell_bytes))
      return qv_error_set(error, QV_ELIMIT, "a cell of the stacked tensor overflows int64 bytes");
  if (empty) cell_bytes = 0; /* a zero extent empties the cell, whatever the others */
  if (__builtin_mul_overflow(n, cell_bytes, &total))
    return qv_error_set(error, QV_ELIMIT, "%lld cells of %lld bytes overflow int64 bytes",
                        (long long)n, (long long)cell_bytes);
  /* Cells that are not null follow one another in the storage: lists and
   * binaries of one length have consecutive offsets. */
  const uint8_t *base = n > 0 ? cell_data(s, t, 0) : NULL;
  int64_t shape[QV_TENSOR_MAX_NDIM], strides[QV_TENSOR_MAX_NDIM];
  const char *names[QV_TENSOR_MAX_NDIM];
  shape[0] = n;
  strides[0] = cell_bytes;
  names[0] = opts.leading_name ? opts.leading_name : "";
  if ((st = logical_layout(t, physical, shape + 1, strides + 1, names + 1, error)) != QV_OK)
    return st;
  QvTensorDesc d = {.type = t->value_type, .ndim = t->ndim + 1, .shape = shape,
                    .strides = strides, .dim_names = t->dim_names ? names : NULL, .data = base,
                    .data_size = total, .owner = col->owner};
  QvOwner *filled_owner = NULL;
  QvPool *pool = NULL; /* started by the first copy that is split */
  if (col->null_count > 0) {
    if ((st = check_output(total, limit, "with null cells filled", error)) != QV_OK) return st;
    /* One copy of the storage, null cells zeroed; the strides stay. */
    uint8_t *buf = qv_aligned_alloc(total > 0 ? (size_t)total : 1);
    QvOwner *owner = buf ? qv_owner_new(qv_free, buf) : NULL;
    if (owner == NULL) {
      qv_free(buf);
      return qv_error_set(error, QV_ENOMEM, "out of memory filling %lld null cells (%lld bytes)",
                          (long long)col->null_count, (long long)total);
    }
    if ((st = copy_pool(opts.threads, n, total, &pool, error)) != QV_OK) {
      qv_owner_free(owner);
      return st;
    }
    FillJob f = {s, t, buf, n, cell_bytes, n};
    int64_t tasks = qvi_tensor_copy_tasks(n, total, qvi_pool_threads(pool));
    if (cell_bytes > 0 && tasks > 1) {
      qvi_path_hit(QV_PATH_TENSOR_COPY_THREADS);
      f.per = (n + tasks - 1) / tasks;
      qvi_pool_run(pool, (size_t)((n + f.per - 1) / f.per), fill_task, &f);
    } else if (cell_bytes > 0) {
      fill_cells(&f, 0, n);
    }
    filled_owner = owner;
    d.data = buf;
    d.owner = owner;
  } else if (d.data != NULL && (uintptr_t)d.data % (uintptr_t)es != 0) {
    if ((st = check_output(total, limit, "unaligned cells (a copy)", error)) != QV_OK ||
        (st = copy_pool(opts.threads, n, total, &pool, error)) != QV_OK)
      return st;
  }
  st = view_or_copy(&d, pool, out, error);
  qv_owner_free(filled_owner); /* the view holds its own reference */
  if (st == QV_OK && opts.contiguous && !qv_tensor_is_row_major(out)) {
    QvTensor copy;
    if ((st = check_output(total, limit, "as a row-major copy", error)) == QV_OK &&
        (st = copy_pool(opts.threads, n, total, &pool, error)) == QV_OK)
      st = qvi_tensor_copy_pool(out, false, pool, &copy, error);
    qv_tensor_reset(out);
    if (st == QV_OK) *out = copy;
  }
  qvi_pool_free(pool);
  return st;
}

/* Whether t's cells (dims 1..) are a permutation of a row-major layout whose
 * cells follow one another: fills the physical order (order[k] = the cell dim
 * at physical position k). */
static bool permuted_row_major(const QvTensor *t, int64_t cell_bytes, int32_t *order) {
  _Static_assert(QV_TENSOR_MAX_NDIM <= QVI_STRIDES_MAX_NDIM, "util/strides.h's limit");
  if (!qvi_permuted_row_major(t->ndim - 1, t->shape + 1, t->strides + 1,
                              (int64_t)qv_arrow_type_size(t->type), order))
    return false;
  return t->shape[0] <= 1 || t->strides[0] == cell_bytes;
}

QvStatus qv_tensor_column_unstack(const QvTensor *t, const QvTensorUnstackOptions *options,
                           struct ArrowSchema *schema, struct ArrowArray *array, QvError *error) {
  if (schema == NULL || array == NULL || t == NULL)
    return qv_error_set(error, QV_EARG, "qv_tensor_column_unstack: NULL argument");
  memset(schema, 0, sizeof *schema);
  memset(array, 0, sizeof *array);
  QvTensorUnstackOptions opts;
  QvStatus st = QV_OPTIONS_LOAD(&opts, options, QvTensorUnstackOptions, error);
  if (st != QV_OK || (st = check_threads(opts.threads, error)) != QV_OK) return st;
  if (t->ndim < 1)
    return qv_error_set(error, QV_EINVAL, "a 0-d tensor has no leading dim to unstack");
  QvTensorColumnType type;
  memset(&type, 0, sizeof type);
  qv_tensor_column_type_reset(&type);
  type.kind = QV_TENSOR_COLUMN_FIXED_SHAPE;
  type.value_type = t->type;
  type.ndim = t->ndim - 1;
  int64_t es = (int64_t)qv_arrow_type_size(t->type);
  int64_t cell = 1;
  for (int32_t k = 1; k < t->ndim; k++) cell *= t->shape[k]; /* fits: qv_tensor_init checked */
  int32_t order[QV_TENSOR_MAX_NDIM];
  QvTensor copy = {0};
  const QvTensor *src = t;
  if (opts.contiguous || qv_tensor_n_elements(t) == 0 || !permuted_row_major(t, cell * es, order)) {
    if (!qv_tensor_is_row_major(t) || qv_tensor_n_elements(t) == 0) {
      QvPool *pool = NULL;
      int64_t bytes = qv_tensor_n_elements(t) * es; /* fits: qv_tensor_init checked */
      if ((st = copy_pool(opts.threads, t->shape[0], bytes, &pool, error)) == QV_OK)
        st = qvi_tensor_copy_pool(t, false, pool, &copy, error);
      qvi_pool_free(pool);
      if (st != QV_OK) return st;
      src = &copy;
    }
    for (int32_t k = 0; k < type.ndim; k++) order[k] = k;
  }
  /* physical dim k is logical (cell) dim order[k]: permutation[order[k]] = k */
  const char *names[QV_TENSOR_MAX_NDIM];
  for (int32_t k = 0; k < type.ndim; k++) {
    type.shape[k] = t->shape[1 + order[k]];
    type.permutation[order[k]] = k;
    if (order[k] != k) type.has_permutation = true;
    if (t->dim_names) names[k] = t->dim_names[1 + order[k]];
  }
  if (t->dim_names && (st = qvi_tensor_column_set_names(&type, names, error)) != QV_OK) goto done;
  /* no name: the leading dim's, so that stacking the column (whose leading
   * dim takes the column's name) gives the tensor its names back */
  const char *field_name = opts.name ? opts.name
                           : t->dim_names && t->dim_names[0] && t->dim_names[0][0] ? t->dim_names[0]
                                                                                 : "tensor";
  if ((st = qv_tensor_column_schema_init(schema, field_name, &type, NULL, error)) != QV_OK)
    goto done;
  QvArrayView v;
  if ((st = qv_array_view_init(&v, schema, error)) != QV_OK) goto done;
  v.length = t->shape[0];
  v.offset = 0;
  v.null_count = 0;
  v.children[0].length = t->shape[0] * cell;
  v.children[0].null_count = 0;
  v.children[0].buffer[1] = src->data;
  v.children[0].buffer_size[1] = t->shape[0] * cell * es;
  st = qv_array_export_view(&v, src->owner, array, error);
  qv_array_view_reset(&v);
done:
  if (st != QV_OK && schema->release != NULL) schema->release(schema);
  qv_tensor_column_type_reset(&type);
  qv_tensor_reset(&copy);
  return st;
}

/* Appends count values of `type` from row-major bytes. */
static QvStatus append_values(struct ArrowArray *a, QvArrowType type, const uint8_t *p,
                              int64_t count, QvError *error) {
  QvStatus st = QV_OK;
  for (int64_t i = 0; i < count && st == QV_OK; i++) {
    switch (type) {
      case QV_ARROW_INT8: st = qv_array_append_int(a, ((const int8_t *)p)[i], error); break;
      case QV_ARROW_INT16: { int16_t v; memcpy(&v, p + 2 * i, 2); st = qv_array_append_int(a, v, error); break; }
      case QV_ARROW_INT32: { int32_t v; memcpy(&v, p + 4 * i, 4); st = qv_array_append_int(a, v, error); break; }
      case QV_ARROW_INT64: { int64_t v; memcpy(&v, p + 8 * i, 8); st = qv_array_append_int(a, v, error); break; }
      case QV_ARROW_UINT8: st = qv_array_append_uint(a, p[i], error); break;
      case QV_ARROW_UINT16: { uint16_t v; memcpy(&v, p + 2 * i, 2); st = qv_array_append_uint(a, v, error); break; }
      case QV_ARROW_UINT32: { uint32_t v; memcpy(&v, p + 4 * i, 4); st = qv_array_append_uint(a, v, error); break; }
      case QV_ARROW_UINT64: { uint64_t v; memcpy(&v, p + 8 * i, 8); st = qv_array_append_uint(a, v, error); break; }
      case QV_ARROW_FLOAT16: { uint16_t v; memcpy(&v, p + 2 * i, 2); st = qv_array_append_double(a, qv_half_to_float(v), error); break; }
      case QV_ARROW_FLOAT32: { float v; memcpy(&v, p + 4 * i, 4); st = qv_array_append_double(a, v, error); break; }
      case QV_ARROW_FLOAT64: { double v; memcpy(&v, p + 8 * i, 8); st = qv_array_append_double(a, v, error); break; }
      default: st = QV_EARG; break;
    }
  }
  return st;
}

QvStatus qv_tensor_column_build(const QvTensorColumnType *type, const char *name,
                                const char *cell_extension, const QvTensor *const *cells,
                                int64_t n, struct ArrowSchema *schema, struct ArrowArray *array,
                                QvError *error) {
  if (schema == NULL || array == NULL || type == NULL || (cells == NULL && n > 0) || n < 0)
    return qv_error_set(error, QV_EARG, "qv_tensor_column_build: bad arguments");
  memset(array, 0, sizeof *array);
  QvStatus st = qv_tensor_column_schema_init(schema, name, type, cell_extension, error);
  if (st != QV_OK) return st;
  if ((st = qv_array_init_from_schema(array, schema, error)) != QV_OK) goto fail;
  int64_t es = (int64_t)qv_arrow_type_size(type->value_type);
  uint8_t *buf = NULL;
  for (int64_t i = 0; i < n && st == QV_OK; i++) {
    const QvTensor *c = cells[i];
    if (c == NULL) {
      st = qv_array_append_null(array, 1, error);
      if (st != QV_OK) qv_error_set(error, st, "appending null cell %lld", (long long)i);
      continue;
    }
    if (c->type != type->value_type || c->ndim != type->ndim) {
      st = qv_error_set(error, QV_EINVAL, "cell %lld is a %s tensor of %d dims, the column holds %s "
                        "tensors of %d dims", (long long)i, qv_arrow_type_name(c->type),
                        (int)c->ndim, qv_arrow_type_name(type->value_type), (int)type->ndim);
      break;
    }
    for (int32_t k = 0; k < c->ndim; k++) {
      bool fixed = type->kind != QV_TENSOR_COLUMN_VARIABLE_SHAPE;
      if ((fixed || type->shape[k] >= 0) && c->shape[k] != type->shape[k]) {
        st = qv_error_set(error, QV_EINVAL, "cell %lld: shape[%d] = %lld, the column's is %lld",
                          (long long)i, (int)k, (long long)c->shape[k], (long long)type->shape[k]);
        break;
      }
      if (!fixed && c->shape[k] > INT32_MAX) {
        st = qv_error_set(error, QV_ELIMIT, "cell %lld: shape[%d] = %lld does not fit int32",
                          (long long)i, (int)k, (long long)c->shape[k]);
        break;
      }
    }
    if (st != QV_OK) break;
    int64_t count = qv_tensor_n_elements(c);
    free(buf);
    buf = malloc((size_t)(count * es) + 1);
    if (buf == NULL) {
      st = qv_error_set(error, QV_ENOMEM, "out of memory building a tensor column");
      break;
    }
    if ((st = qv_tensor_copy_to(c, false, buf, (size_t)(count * es), error)) != QV_OK) break;
    switch (type->kind) {
      case QV_TENSOR_COLUMN_FIXED_SHAPE:
        if ((st = append_values(array->children[0], c->type, buf, count, error)) == QV_OK)
          st = qv_array_finish_element(array, error);
        break;
      case QV_TENSOR_COLUMN_VARIABLE_SHAPE: {
        struct ArrowArray *data = array->children[0], *shape = array->children[1];
        if ((st = append_values(data->children[0], c->type, buf, count, error)) == QV_OK &&
            (st = qv_array_finish_element(data, error)) == QV_OK) {
          for (int32_t k = 0; k < c->ndim && st == QV_OK; k++)
            st = qv_array_append_int(shape->children[0], c->shape[k], error);
          if (st == QV_OK) st = qv_array_finish_element(shape, error);
          if (st == QV_OK) st = qv_array_finish_element(array, error);
        }
        break;
      }
      default:
        st = qv_array_append_bytes(array, buf, count * es, error);
        break;
    }
    if (st != QV_OK && error != NULL && error->code == QV_OK)
      qv_error_set(error, st, "appending cell %lld", (long long)i);
  }
  free(buf);
  if (st == QV_OK) st = qv_array_finish_building(array, QV_VALIDATE_FULL, error);
  if (st == QV_OK) return QV_OK;
fail:
  if (array->release != NULL) array->release(array);
  if (schema->release != NULL) schema->release(schema);
  return st;
}

/* The batch node around a moved column: the child lives in the same block. */
typedef struct BatchNode {
  struct ArrowArray child;
  struct ArrowArray *children[1];
  const void *buffers[1];
} BatchNode;

static void batch_release(struct ArrowArray *a) {
  BatchNode *b = a->private_data;
  if (b->child.release != NULL) b->child.release(&b->child);
  free(b);
  a->release = NULL;
}

QvStatus qv_tensor_column_to_batch(struct ArrowSchema *field, struct ArrowArray *column,
                                   struct ArrowSchema *batch_schema, struct ArrowArray *batch,
                                   QvError *error) {
  if (field == NULL || column == NULL || batch_schema == NULL || batch == NULL ||
      field->release == NULL || column->release == NULL)
    return qv_error_set(error, QV_EARG, "qv_tensor_column_to_batch: NULL or released argument");
  memset(batch, 0, sizeof *batch);
  BatchNode *b = calloc(1, sizeof *b);
  if (b == NULL) return qv_error_set(error, QV_ENOMEM, "out of memory for a record batch");
  QvStatus st = qv_arrow_schema_init(batch_schema, "+s", "", 0, 1, error);
  if (st != QV_OK) {
    free(b);
    return st;
  }
  *batch_schema->children[0] = *field;
  field->release = NULL;
  b->child = *column;
  column->release = NULL;
  b->children[0] = &b->child;
  b->buffers[0] = NULL;
  batch->length = b->child.length;
  batch->null_count = 0;
  batch->offset = 0;
  batch->n_buffers = 1;
  batch->n_children = 1;
  batch->buffers = b->buffers;
  batch->children = b->children;
  batch->release = batch_release;
  batch->private_data = b;
  return QV_OK;
}
