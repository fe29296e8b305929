/* Sparse columns (quiver/sparse_column.h): validation of the storage, cell
 * views, the sparse-vector column <-> CSR bridges, and the builder. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "quiver/advanced.h"
#include "adapters/sparse_column_internal.h"
#include "quiver/sparse_column.h"
#include "sparse/sparse_parts.h"
#include "sparse/sparse_seal.h"
#include "util/cpu.h"
#include "util/options.h"

/* What a column's owner keeps alive: the moved storage array and its view. */
typedef struct ColStore {
  struct ArrowArray array;
  QvArrayView view;
} ColStore;

static void store_release(void *p) {
  ColStore *s = p;
  qv_array_view_reset(&s->view);
  if (s->array.release != NULL) s->array.release(&s->array);
  free(s);
}

static const ColStore *store_of(const QvSparseColumn *col) {
  return col ? col->private_data : NULL;
}

void qv_sparse_column_reset(QvSparseColumn *col) {
  if (col == NULL) return;
  qv_sparse_column_type_reset(&col->type);
  qv_owner_free(col->owner);
  memset(col, 0, sizeof *col);
}

bool qv_sparse_column_is_null(const QvSparseColumn *col, int64_t i) {
  const ColStore *s = store_of(col);
  return s != NULL && i >= 0 && i < col->length && qv_array_view_is_null(&s->view, i);
}

/* An empty leaf may have no buffer: views get a valid address anyway. */
static const uint8_t empty_leaf[64] __attribute__((aligned(64)));

/* Element `start` of a primitive leaf (its own offset applied). */
static const uint8_t *leaf_at(const QvArrayView *leaf, int64_t start, size_t w) {
  if (leaf->buffer[1] == NULL) return empty_leaf;
  return leaf->buffer[1] + (leaf->offset + start) * (int64_t)w;
}

/* ---- one cell of a quiver.sparse_tensor column */

typedef struct Cell {
  int64_t shape[QV_TENSOR_MAX_NDIM];
  int32_t axis_order[QV_TENSOR_MAX_NDIM];
  const void *csf_indptr[QV_TENSOR_MAX_NDIM];
  int64_t csf_indptr_len[QV_TENSOR_MAX_NDIM];
  const void *csf_indices[QV_TENSOR_MAX_NDIM];
  int64_t csf_indices_len[QV_TENSOR_MAX_NDIM];
  QvSparseDesc desc;
} Cell;

/* A List (or List<List> level) child's range at row r. */
static void list_range(const QvArrayView *list, int64_t r, int64_t *start, int64_t *len) {
  qv_array_view_get_list(list, r, start, len);
}

/* Fills c->desc for row i (struct row r = offset + i), checking what the
 * descriptor cannot express: extents, shape product, list lengths. */
static QvStatus cell_desc(const QvSparseColumn *col, int64_t i, Cell *c, QvError *error) {
  const ColStore *s = store_of(col);
  const QvSparseColumnType *t = &col->type;
  const QvArrayView *v = &s->view;
  int64_t r = v->offset + i, start, len;
  int32_t nd = t->ndim;
  memset(c, 0, sizeof *c);
  list_range(&v->children[0], r, &start, &len);
  int64_t product = 1;
  bool empty = false;
  for (int32_t k = 0; k < nd; k++) {
    c->shape[k] = qv_array_view_get_int(&v->children[0].children[0], start + k);
    if (c->shape[k] < 0)
      return qv_error_set(error, QV_EINVAL, "shape[%d] = %lld is negative", (int)k,
                          (long long)c->shape[k]);
    empty |= c->shape[k] == 0;
  }
  for (int32_t k = 0; k < nd && !empty; k++)
    if (__builtin_mul_overflow(product, c->shape[k], &product))
      return qv_error_set(error, QV_EINVAL, "the product of the shape overflows int64 (shape[%d])",
                          (int)k);
  size_t xw = qv_arrow_type_size(t->index_type), pw = qv_arrow_type_size(t->indptr_type);
  size_t vw = qv_arrow_type_size(t->value_type);
  const char *const *names;
  int n = qvi_sparse_column_children(t->format, &names);
  const QvArrayView *values = &v->children[n - 1];
  int64_t vstart, nnz;
  list_range(values, r, &vstart, &nnz);
  QvSparseDesc *d = &c->desc;
  d->format = t->format;
  d->value_type = t->value_type;
  d->index_type = t->index_type;
  d->indptr_type = t->format == QV_SPARSE_COO ? t->index_type : t->indptr_type;
  d->ndim = nd;
  d->shape = c->shape;
  d->dim_names = t->dim_names;
  d->nnz = nnz;
  d->values = leaf_at(&values->children[0], vstart, vw);
  d->owner = col->owner;
  if (t->format == QV_SPARSE_COO) {
    d->is_canonical = qv_array_view_get_int(&v->children[1], r) != 0;
    const QvArrayView *coords = &v->children[2];
    list_range(coords, r, &start, &len);
    if (len != nnz)
      return qv_error_set(error, QV_EINVAL, "coords has %lld entries, values %lld",
                          (long long)len, (long long)nnz);
    const QvArrayView *fsl = &coords->children[0];
    d->coords = leaf_at(&fsl->children[0], (fsl->offset + start) * nd, xw);
    return QV_OK;
  }
  if (t->format == QV_SPARSE_CSR || t->format == QV_SPARSE_CSC) {
    int64_t major = c->shape[t->format == QV_SPARSE_CSR ? 0 : 1];
    list_range(&v->children[1], r, &start, &len);
    if (major == INT64_MAX || len != major + 1)
      return qv_error_set(error, QV_EINVAL, "indptr has %lld entries, %s %lld + 1 needs %lld",
                          (long long)len, t->format == QV_SPARSE_CSR ? "rows" : "columns",
                          (long long)major, major == INT64_MAX ? -1LL : (long long)(major + 1));
    d->indptr = leaf_at(&v->children[1].children[0], start, pw);
    list_range(&v->children[2], r, &start, &len);
    if (len != nnz)
      return qv_error_set(error, QV_EINVAL, "indices has %lld entries, values %lld",
                          (long long)len, (long long)nnz);
    d->indices = leaf_at(&v->children[2].children[0], start, xw);
    return QV_OK;
  }
  /* CSF */
  list_range(&v->children[1], r, &start, &len);
  for (int32_t k = 0; k < nd; k++)
    c->axis_order[k] = (int32_t)qv_array_view_get_int(&v->children[1].children[0], start + k);
  for (int lv = 0; lv < 2; lv++) {
    const QvArrayView *outer = &v->children[2 + lv];
    int64_t levels = lv == 0 ? nd - 1 : nd;
    list_range(outer, r, &start, &len);
    if (len != levels)
      return qv_error_set(error, QV_EINVAL, "%s has %lld levels, a %d-d CSF has %lld",
                          lv == 0 ? "indptr" : "indices", (long long)len, (int)nd,
                          (long long)levels);
    const QvArrayView *inner = &outer->children[0];
    for (int64_t l = 0; l < levels; l++) {
      int64_t s1, n1;
      list_range(inner, start + l, &s1, &n1);
      const uint8_t *p = leaf_at(&inner->children[0], s1, lv == 0 ? pw : xw);
      if (lv == 0) {
        c->csf_indptr[l] = p;
        c->csf_indptr_len[l] = n1;
      } else {
        c->csf_indices[l] = p;
        c->csf_indices_len[l] = n1;
      }
    }
  }
  if (c->csf_indices_len[nd - 1] != nnz)
    return qv_error_set(error, QV_EINVAL, "indices level %d has %lld entries, values %lld",
                        (int)(nd - 1), (long long)c->csf_indices_len[nd - 1], (long long)nnz);
  d->axis_order = c->axis_order;
  d->csf_indptr = (const void *const *)c->csf_indptr;
  d->csf_indptr_len = c->csf_indptr_len;
  d->csf_indices = (const void *const *)c->csf_indices;
  d->csf_indices_len = c->csf_indices_len;
  return QV_OK;
}

/* Every storage node below the top has no nulls ("path" names it). */
static QvStatus no_nulls(const QvArrayView *v, const char *path, QvError *error) {
  if (v->buffer[0] != NULL && qv_layout_has_validity(qv_layout_of(v->type.storage_type)) &&
      qv_bitmap_count_set(v->buffer[0], v->offset, v->length) != v->length)
    return qv_error_set(error, QV_EINVAL, "storage child '%s' has nulls (only rows may be null)",
                        path);
  for (int64_t k = 0; k < v->n_children; k++) {
    char sub[256];
    const char *cn = v->children[k].type.schema->name;
    snprintf(sub, sizeof sub, "%s.%s", path, cn ? cn : "");
    QvStatus st = no_nulls(&v->children[k], sub, error);
    if (st != QV_OK) return st;
  }
  return QV_OK;
}

/* A vector column's entries of row i: the index and value leaves and the
 * range. */
typedef struct Entries {
  const uint8_t *index, *value; /* entry 0 of the row */
  int64_t start, len;
} Entries;

static void vector_entries(const ColStore *s, const QvSparseColumnType *t, int64_t i,
                           Entries *e) {
  const QvArrayView *st = &s->view.children[0];
  list_range(&s->view, i, &e->start, &e->len);
  e->index = leaf_at(&st->children[0], st->offset + e->start, qv_arrow_type_size(t->index_type));
  e->value = leaf_at(&st->children[1], st->offset + e->start, qv_arrow_type_size(t->value_type));
}

/* Without nulls and from offset 0 (a column a reader produced), the rows
 * are one n x size CSR matrix whose indptr (the list offsets) the storage
 * validation proved already: its entries are checked in one vector pass,
 * which names nothing; a refusal (or an index type the pass does not take)
 * falls to the row loop below, which names the row and element. */
static bool vectors_scan_ok(const QvSparseColumn *col, const ColStore *s) {
  const QvSparseColumnType *t = &col->type;
  const QvArrayView *v = &s->view;
  if (col->length == 0 || v->buffer[1] == NULL) return false;
  if (v->buffer[0] != NULL && qv_bitmap_count_set(v->buffer[0], v->offset, v->length) != v->length)
    return false;
  const uint8_t *offsets = v->buffer[1] + v->offset * (t->large_lists ? 8 : 4);
  if (qv_index_load(offsets, t->indptr_type, 0) != 0) return false;
  const QvArrayView *sv = &v->children[0];
  QvSparseTensor m;
  memset(&m, 0, sizeof m);
  m.format = QV_SPARSE_CSR;
  m.index_type = t->index_type;
  m.indptr_type = t->indptr_type;
  m.nnz = qv_index_load(offsets, t->indptr_type, col->length);
  m.indptr = offsets;
  m.indptr_len = col->length + 1;
  m.indices = leaf_at(&sv->children[0], sv->offset, qv_arrow_type_size(t->index_type));
  m.indices_len = m.nnz;
  if (!qvi_sp_csx_entries_ok(&m, col->length, t->size)) return false;
  qvi_path_hit(QV_PATH_SPARSE_COLUMN_SCAN);
  return true;
}

static QvStatus check_vectors(const QvSparseColumn *col, const ColStore *s, QvError *error) {
  const QvSparseColumnType *t = &col->type;
  if (vectors_scan_ok(col, s)) return QV_OK;
  for (int64_t i = 0; i < col->length; i++) {
    if (qv_array_view_is_null(&s->view, i)) continue;
    Entries e;
    vector_entries(s, t, i, &e);
    int64_t prev = -1;
    for (int64_t j = 0; j < e.len; j++) {
      int64_t x = qv_index_load(e.index, t->index_type, j);
      if (x < 0 || x >= t->size) {
        char text[32];
        qvi_sp_index_str(e.index, t->index_type, j, text);
        return qv_error_set(error, QV_EINVAL, "row %lld element %lld: index %s is outside [0, %lld)",
                            (long long)i, (long long)j, text, (long long)t->size);
      }
      if (x <= prev)
        return qv_error_set(error, QV_EINVAL,
                            "row %lld element %lld: index %lld after %lld (the indices of a row "
                            "increase strictly)",
                            (long long)i, (long long)j, (long long)x, (long long)prev);
      prev = x;
    }
  }
  return QV_OK;
}

static QvStatus check_tensors(const QvSparseColumn *col, const ColStore *s, QvError *error) {
  for (int64_t i = 0; i < col->length; i++) {
    if (qv_array_view_is_null(&s->view, i)) continue;
    Cell c;
    QvSparseTensor t;
    QvStatus st = cell_desc(col, i, &c, error);
    if (st == QV_OK) {
      c.desc.owner = NULL; /* a check, not a view */
      st = qv_sparse_init(&t, &c.desc, error);
      qv_sparse_reset(&t);
    }
    if (st != QV_OK) return qv_error_prefix(error, "row %lld", (long long)i);
  }
  return QV_OK;
}

QvStatus qv_sparse_column_init(QvSparseColumn *out, const struct ArrowSchema *field,
                               struct ArrowArray *array, const QvSparseColumnOptions *options,
                               QvError *error) {
  if (out == NULL) return qv_error_set(error, QV_EARG, "qv_sparse_column_init: out is NULL");
  memset(out, 0, sizeof *out);
  if (field == NULL || array == NULL || array->release == NULL)
    return qv_error_set(error, QV_EARG, "qv_sparse_column_init: no field or no (live) array");
  QvSparseColumnOptions opts;
  QvStatus st = QV_OPTIONS_LOAD(&opts, options, QvSparseColumnOptions, error);
  if (st != QV_OK) return st;
  if ((st = qv_sparse_column_type_from_field(field, &out->type, error)) != QV_OK) return st;
  const char *name = field->name ? field->name : "";
  if (out->type.kind == QV_SPARSE_COLUMN_NONE)
    return qv_error_set(error, QV_EINVAL, "field '%s' is not a sparse column", name);
  ColStore *s = calloc(1, sizeof *s);
  if (s == NULL) {
    qv_sparse_column_type_reset(&out->type);
    return qv_error_set(error, QV_ENOMEM, "out of memory for a sparse column");
  }
  s->array = *array; /* moved: given back below on failure */
  array->release = NULL;
  if ((st = qv_array_view_init(&s->view, field, error)) == QV_OK &&
      (st = qv_array_view_set_array(&s->view, &s->array, QV_VALIDATE_FULL, error)) == QV_OK) {
    out->length = s->array.length;
    for (int64_t k = 0; k < s->view.n_children && st == QV_OK; k++) {
      const char *cn = s->view.children[k].type.schema->name;
      st = no_nulls(&s->view.children[k], cn ? cn : "", error);
    }
    if (st == QV_OK) {
      out->private_data = s;
      out->owner = qv_owner_new(store_release, s);
      if (out->owner == NULL) st = qv_error_set(error, QV_ENOMEM, "out of memory for a column");
    }
    if (st == QV_OK)
      st = out->type.kind == QV_SPARSE_COLUMN_VECTOR ? check_vectors(out, s, error)
                                                     : check_tensors(out, s, error);
  }
  if (st != QV_OK) {
    qv_error_prefix(error, "field '%s' (%s)", name, qvi_sparse_column_kind_name(out->type.kind));
    if (out->owner != NULL) {
      /* hand the array back: the owner must not release it */
      *array = s->array;
      s->array.release = NULL;
      qv_owner_free(out->owner);
    } else {
      qv_array_view_reset(&s->view);
      *array = s->array;
      free(s);
    }
    qv_sparse_column_type_reset(&out->type);
    memset(out, 0, sizeof *out);
    return st;
  }
  if (s->view.buffer[0] != NULL)
    out->null_count = out->length - qv_bitmap_count_set(s->view.buffer[0], s->view.offset,
                                                        out->length);
  return QV_OK;
}

int64_t qv_sparse_column_cell_nnz(const QvSparseColumn *col, int64_t i) {
  const ColStore *s = store_of(col);
  if (s == NULL || i < 0 || i >= col->length || qv_array_view_is_null(&s->view, i)) return -1;
  int64_t start, len;
  if (col->type.kind == QV_SPARSE_COLUMN_VECTOR) {
    list_range(&s->view, i, &start, &len);
    return len;
  }
  const char *const *names;
  int n = qvi_sparse_column_children(col->type.format, &names);
  list_range(&s->view.children[n - 1], s->view.offset + i, &start, &len);
  return len;
}

QvStatus qv_sparse_column_cell(const QvSparseColumn *col, int64_t i, QvSparseTensor *out,
                               QvError *error) {
  if (out == NULL) return qv_error_set(error, QV_EARG, "qv_sparse_column_cell: out is NULL");
  memset(out, 0, sizeof *out);
  const ColStore *s = store_of(col);
  if (s == NULL) return qv_error_set(error, QV_EARG, "qv_sparse_column_cell: no column");
  if (i < 0 || i >= col->length)
    return qv_error_set(error, QV_EARG, "row %lld is outside the column's %lld rows",
                        (long long)i, (long long)col->length);
  if (qv_array_view_is_null(&s->view, i))
    return qv_error_set(error, QV_EINVAL, "row %lld is null", (long long)i);
  const QvSparseColumnType *t = &col->type;
  Cell c;
  QvStatus st;
  if (t->kind == QV_SPARSE_COLUMN_VECTOR) {
    Entries e;
    vector_entries(s, t, i, &e);
    memset(&c, 0, sizeof c);
    c.shape[0] = t->size;
    c.desc = (QvSparseDesc){.format = QV_SPARSE_COO, .value_type = t->value_type,
                            .index_type = t->index_type, .indptr_type = t->index_type,
                            .ndim = 1, .shape = c.shape, .nnz = e.len, .values = e.value,
                            .owner = col->owner, .coords = e.index, .is_canonical = true};
    if (t->dim_names != NULL) c.desc.dim_names = t->dim_names + 1;
  } else if ((st = cell_desc(col, i, &c, error)) != QV_OK) {
    return qv_error_prefix(error, "row %lld", (long long)i);
  }
  /* qv_sparse_column_init checked every rule of every non-null row over the
   * storage the column holds: the view is not scanned again */
  st = qvi_sp_init_checked(out, &c.desc, error);
  if (st == QV_OK) qvi_path_hit(QV_PATH_SPARSE_CELL_CHECKED);
  if (st != QV_OK) qv_error_prefix(error, "row %lld", (long long)i);
  return st;
}

/* ---- sparse-vector column <-> CSR */

static int64_t limit_of(int64_t max_output_size) {
  return max_output_size > 0 ? max_output_size : QV_DEFAULT_MAX_OUTPUT_SIZE;
}

QvStatus qv_sparse_vector_stack(const QvSparseColumn *col, const QvSparseStackOptions *options,
                                QvSparseTensor *out, QvError *error) {
  if (out == NULL) return qv_error_set(error, QV_EARG, "qv_sparse_vector_stack: out is NULL");
  memset(out, 0, sizeof *out);
  const ColStore *s = store_of(col);
  if (s == NULL || col->type.kind != QV_SPARSE_COLUMN_VECTOR)
    return qv_error_set(error, QV_EARG, "qv_sparse_vector_stack: not a sparse-vector column");
  QvSparseStackOptions opts;
  QvStatus st = QV_OPTIONS_LOAD(&opts, options, QvSparseStackOptions, error);
  if (st != QV_OK) return st;
  const QvSparseColumnType *t = &col->type;
  if (col->null_count > 0) {
    int64_t first = 0;
    while (!qv_array_view_is_null(&s->view, first)) first++;
    return qv_error_set(error, QV_EINVAL, "row %lld is null: a CSR matrix has no null rows",
                        (long long)first);
  }
  int64_t n = col->length, shape[2] = {n, t->size};
  int ow = t->large_lists ? 8 : 4;
  const uint8_t *offsets = s->view.buffer[1] + s->view.offset * ow;
  int64_t first = qv_index_load(offsets, t->indptr_type, 0);
  int64_t last = qv_index_load(offsets, t->indptr_type, n);
  if ((st = qvi_sp_begin(out, QV_SPARSE_CSR, t->value_type, 2, shape, t->dim_names, error)) !=
      QV_OK)
    return st;
  out->index_type = t->index_type;
  out->indptr_type = t->indptr_type;
  out->nnz = last - first;
  out->indptr_len = n + 1;
  out->indices_len = out->nnz;
  const QvArrayView *sv = &s->view.children[0];
  out->indices = leaf_at(&sv->children[0], sv->offset + first, qv_arrow_type_size(t->index_type));
  out->values = leaf_at(&sv->children[1], sv->offset + first, qv_arrow_type_size(t->value_type));
  out->indptr = offsets;
  if (first != 0) {
    /* a slice: the indptr of a CSR matrix starts at 0, so it is rebased */
    int64_t bytes = (n + 1) * ow;
    if (bytes > limit_of(opts.max_output_size)) {
      qv_sparse_reset(out);
      return qv_error_set(error, QV_ELIMIT,
                          "rebasing the indptr of a sliced column takes %lld bytes, over the "
                          "limit of %lld (max_output_size)",
                          (long long)bytes, (long long)limit_of(opts.max_output_size));
    }
    uint8_t *p = qvi_sp_malloc(n + 1, (size_t)ow);
    if (p == NULL) {
      qv_sparse_reset(out);
      return qvi_sp_nomem(error, "a rebased indptr", n + 1, (size_t)ow);
    }
    for (int64_t k = 0; k <= n; k++) {
      int64_t x = qv_index_load(offsets, t->indptr_type, k) - first;
      if (ow == 4) {
        int32_t y = (int32_t)x;
        memcpy(p + 4 * k, &y, 4);
      } else {
        memcpy(p + 8 * k, &x, 8);
      }
    }
    qvi_sp_own(out, p);
    out->indptr = p;
  }
  out->owner = col->owner;
  qv_owner_retain(col->owner);
  return QV_OK;
}

/* Memory an exported array holds: buffers it made, and a reference to the
 * memory it views. */
#define BAG_MAX 16
typedef struct Bag {
  void *bufs[BAG_MAX];
  int n;
  QvOwner *keep;
} Bag;

static void bag_release(void *p) {
  Bag *b = p;
  for (int i = 0; i < b->n; i++) qv_free(b->bufs[i]);
  qv_owner_free(b->keep);
  free(b);
}

/* A zeroed 64-byte-aligned buffer of `bytes` (at least 1) held by the bag. */
static uint8_t *bag_alloc(Bag *b, int64_t bytes) {
  if (b->n >= BAG_MAX || bytes < 0) return NULL;
  uint8_t *p = qv_aligned_alloc(bytes > 0 ? (size_t)bytes : 1);
  if (p == NULL) return NULL;
  memset(p, 0, bytes > 0 ? (size_t)bytes : 1);
  b->bufs[b->n++] = p;
  return p;
}

static void bag_free(Bag *b) {
  if (b != NULL) bag_release(b);
}

/* Exports a filled view tree, validated at `level`, owned by the bag (the
 * bag is consumed either way). */
static QvStatus export_bag(QvArrayView *v, Bag *bag, QvValidateLevel level,
                           struct ArrowArray *array, QvError *error) {
  QvStatus st = qv_array_view_validate(v, level, 0, error);
  QvOwner *owner = NULL;
  if (st == QV_OK) {
    owner = qv_owner_new(bag_release, bag);
    if (owner == NULL) st = qv_error_set(error, QV_ENOMEM, "out of memory for a column");
  }
  if (st != QV_OK) {
    bag_free(bag);
    return st;
  }
  st = qv_array_export_view(v, owner, array, error);
  qv_owner_free(owner);
  return st;
}

QvStatus qv_sparse_vector_unstack(const QvSparseTensor *csr, const QvSparseUnstackOptions *options,
                                  struct ArrowSchema *schema, struct ArrowArray *array,
                                  QvError *error) {
  if (csr == NULL || schema == NULL || array == NULL)
    return qv_error_set(error, QV_EARG, "qv_sparse_vector_unstack: NULL argument");
  memset(schema, 0, sizeof *schema);
  memset(array, 0, sizeof *array);
  QvSparseUnstackOptions opts;
  QvStatus st = QV_OPTIONS_LOAD(&opts, options, QvSparseUnstackOptions, error);
  if (st != QV_OK) return st;
  if (csr->format != QV_SPARSE_CSR)
    return qv_error_set(error, QV_EINVAL,
                        "a %s sparse tensor is no sparse-vector column: only CSR rows are vectors",
                        qv_sparse_format_name(csr->format));
  if (qvi_sp_sealed(csr))
    qvi_path_hit(QV_PATH_SPARSE_UNSTACK_SEALED);
  else if ((st = qv_sparse_validate(csr, error)) != QV_OK)
    return st;
  int64_t n = csr->shape[0];
  bool large = csr->indptr_type == QV_ARROW_INT64 ||
               (csr->indptr_type != QV_ARROW_INT32 && csr->nnz > INT32_MAX);
  QvSparseColumnType type = {.kind = QV_SPARSE_COLUMN_VECTOR, .format = QV_SPARSE_CSR,
                             .value_type = csr->value_type, .index_type = csr->index_type,
                             .indptr_type = large ? QV_ARROW_INT64 : QV_ARROW_INT32, .ndim = 1,
                             .size = csr->shape[1], .large_lists = large};
  if (csr->dim_names != NULL &&
      (st = qv_sparse_column_type_set_names(&type, csr->dim_names, 2, error)) != QV_OK)
    return st;
  st = qv_sparse_column_schema_init(schema, opts.name ? opts.name : "sparse", &type, error);
  qv_sparse_column_type_set_names(&type, NULL, 0, NULL); /* the scalars stay */
  if (st != QV_OK) return st;
  Bag *bag = calloc(1, sizeof *bag);
  QvArrayView v;
  memset(&v, 0, sizeof v);
  if (bag == NULL) {
    st = qv_error_set(error, QV_ENOMEM, "out of memory for a column");
    goto fail;
  }
  size_t xw = qv_arrow_type_size(csr->index_type), vw = qv_arrow_type_size(csr->value_type);
  int ow = large ? 8 : 4;
  const uint8_t *indptr = csr->indptr, *indices = csr->indices, *values = csr->values;
  bool own_memory = csr->owner == NULL; /* a conversion's buffers go with the tensor */
  int64_t copy = (own_memory ? csr->nnz * (int64_t)(xw + vw) : 0) +
                 (own_memory || csr->indptr_type != type.indptr_type ? (n + 1) * ow : 0);
  if (copy > limit_of(opts.max_output_size)) {
    st = qv_error_set(error, QV_ELIMIT, "the column's copies take %lld bytes, over the limit of "
                      "%lld (max_output_size)", (long long)copy,
                      (long long)limit_of(opts.max_output_size));
    goto fail;
  }
  if (own_memory || csr->indptr_type != type.indptr_type) {
    uint8_t *p = bag_alloc(bag, (n + 1) * ow);
    if (p == NULL) goto nomem;
    for (int64_t k = 0; k <= n; k++) {
      int64_t x = qv_index_load(csr->indptr, csr->indptr_type, k);
      if (ow == 4) {
        int32_t y = (int32_t)x;
        memcpy(p + 4 * k, &y, 4);
      } else {
        memcpy(p + 8 * k, &x, 8);
      }
    }
    indptr = p;
  }
  if (own_memory) {
    uint8_t *pi = bag_alloc(bag, csr->nnz * (int64_t)xw), *pv = bag_alloc(bag, csr->nnz * (int64_t)vw);
    if (pi == NULL || pv == NULL) goto nomem;
    memcpy(pi, csr->indices, (size_t)csr->nnz * xw);
    memcpy(pv, csr->values, (size_t)csr->nnz * vw);
    indices = pi;
    values = pv;
  }
  bag->keep = csr->owner;
  qv_owner_retain(csr->owner);
  if ((st = qv_array_view_init(&v, schema, error)) != QV_OK) goto fail;
  v.length = n;
  v.buffer[1] = indptr;
  v.buffer_size[1] = (n + 1) * ow;
  QvArrayView *sv = &v.children[0];
  sv->length = csr->nnz;
  for (int k = 0; k < 2; k++) {
    sv->children[k].length = csr->nnz;
    sv->children[k].buffer[1] = k == 0 ? indices : values;
    sv->children[k].buffer_size[1] = csr->nnz * (int64_t)(k == 0 ? xw : vw);
  }
  st = export_bag(&v, bag, QV_VALIDATE_CHEAP, array, error);
  bag = NULL;
  qv_array_view_reset(&v);
  if (st != QV_OK) goto fail;
  return QV_OK;
nomem:
  st = qv_error_set(error, QV_ENOMEM, "out of memory copying a CSR tensor into a column");
fail:
  bag_free(bag);
  qv_array_view_reset(&v);
  if (schema->release != NULL) schema->release(schema);
  return st;
}

/* ---- the builder */

/* One primitive leaf of the output: a copy target, or a view of a single
 * cell's buffer. */
typedef struct Leaf {
  uint8_t *data;
  const uint8_t *view;
  int64_t count; /* elements filled so far */
  size_t w;
} Leaf;

static void leaf_put(Leaf *l, const void *src, int64_t count) {
  if (l->data != NULL && count > 0) memcpy(l->data + l->count * (int64_t)l->w, src, (size_t)count * l->w);
  l->count += count;
}

static void put_offset(uint8_t *offsets, bool large, int64_t k, int64_t x) {
  if (large) {
    memcpy(offsets + 8 * k, &x, 8);
  } else {
    int32_t y = (int32_t)x;
    memcpy(offsets + 4 * k, &y, 4);
  }
}

/* Fills a List node of the view (offsets from the bag). */
static void set_list(QvArrayView *v, int64_t length, const uint8_t *offsets, bool large) {
  v->length = length;
  v->null_count = 0;
  v->buffer[1] = offsets;
  v->buffer_size[1] = (length + 1) * (large ? 8 : 4);
}

static void set_leaf(QvArrayView *v, const Leaf *l) {
  v->length = l->count;
  v->null_count = 0;
  v->buffer[1] = l->view ? l->view : l->data;
  v->buffer_size[1] = l->count * (int64_t)l->w;
}

static bool same_names(const char *const *a, const char *const *b, int32_t n) {
  if (a == NULL || b == NULL) return a == b;
  for (int32_t k = 0; k < n; k++)
    if (strcmp(a[k], b[k]) != 0) return false;
  return true;
}

/* The column type from the options and the first non-null cell; checks
 * that every cell agrees. */
static QvStatus tensor_type(const QvSparseTensor *const *cells, int64_t n,
                            const QvSparseBuildOptions *o, QvSparseColumnType *t,
                            QvError *error) {
  const QvSparseTensor *f = NULL;
  for (int64_t i = 0; i < n && f == NULL; i++) f = cells[i];
  *t = (QvSparseColumnType){.kind = QV_SPARSE_COLUMN_TENSOR};
  if (f != NULL) {
    t->format = f->format;
    t->value_type = f->value_type;
    t->index_type = f->index_type;
    t->indptr_type = f->format == QV_SPARSE_COO ? f->index_type : f->indptr_type;
    t->ndim = f->ndim;
  } else {
    t->format = o->format;
    t->value_type = o->value_type;
    t->index_type = o->index_type;
    t->indptr_type = o->format == QV_SPARSE_COO ? o->index_type : o->indptr_type;
    t->ndim = o->ndim;
  }
  const char *const *names = o->dim_names;
  if (o->dim_names != NULL && o->n_dim_names != t->ndim)
    return qv_error_set(error, QV_EARG, "%d dim names for %d dims", (int)o->n_dim_names,
                        (int)t->ndim);
  if (names == NULL)
    for (int64_t i = 0; i < n && names == NULL; i++)
      if (cells[i] != NULL) names = cells[i]->dim_names;
  for (int64_t i = 0; i < n; i++) {
    const QvSparseTensor *c = cells[i];
    if (c == NULL) continue;
    QvArrowType pt = c->format == QV_SPARSE_COO ? c->index_type : c->indptr_type;
    if (c->format != t->format || c->value_type != t->value_type ||
        c->index_type != t->index_type || pt != t->indptr_type || c->ndim != t->ndim)
      return qv_error_set(error, QV_EINVAL,
                          "cell %lld is a %d-d %s tensor of %s (indices %s, indptr %s), the column "
                          "holds %d-d %s of %s (indices %s, indptr %s)",
                          (long long)i, (int)c->ndim, qv_sparse_format_name(c->format),
                          qv_arrow_type_name(c->value_type), qv_arrow_type_name(c->index_type),
                          qv_arrow_type_name(pt), (int)t->ndim, qv_sparse_format_name(t->format),
                          qv_arrow_type_name(t->value_type), qv_arrow_type_name(t->index_type),
                          qv_arrow_type_name(t->indptr_type));
    if (c->dim_names != NULL && !same_names(c->dim_names, names, t->ndim))
      return qv_error_set(error, QV_EINVAL, "cell %lld has other dim names than the column",
                          (long long)i);
    QvStatus st = qv_sparse_validate(c, error);
    if (st != QV_OK) return qv_error_prefix(error, "cell %lld", (long long)i);
  }
  return names ? qv_sparse_column_type_set_names(t, names, t->ndim, error) : QV_OK;
}

/* Element counts of a cell's buffers: [0] indptr entries (CSF: all levels),
 * [1] index entries (COO: nnz * ndim), [2] values. */
static void cell_counts(const QvSparseTensor *c, int64_t *counts) {
  counts[2] = c->nnz;
  switch (c->format) {
    case QV_SPARSE_COO:
      counts[0] = 0;
      counts[1] = c->nnz * c->ndim;
      break;
    case QV_SPARSE_CSF:
      counts[0] = counts[1] = 0;
      for (int32_t l = 0; l < c->ndim; l++) {
        counts[1] += c->csf_indices_len[l];
        if (l < c->ndim - 1) counts[0] += c->csf_indptr_len[l];
      }
      break;
    default:
      counts[0] = c->indptr_len;
      counts[1] = c->nnz;
      break;
  }
}

/* The list offsets of row i: where its entries start in each leaf (CSF:
 * in the inner lists; COO coords: in FixedSizeList elements). */
static void row_offsets(uint8_t *const *off, bool large, int64_t i, QvSparseFormat f, int32_t nd,
                        const Leaf *leaf, const int64_t *lv) {
  if (f == QV_SPARSE_CSF) {
    put_offset(off[0], large, i, lv[0]);
    put_offset(off[1], large, i, lv[1]);
  } else {
    if (f != QV_SPARSE_COO) put_offset(off[0], large, i, leaf[0].count);
    put_offset(off[1], large, i, f == QV_SPARSE_COO ? leaf[1].count / nd : leaf[1].count);
  }
  put_offset(off[2], large, i, leaf[2].count);
}

static bool coo_row_major(const QvSparseTensor *c) {
  int64_t w = (int64_t)qv_arrow_type_size(c->index_type);
  return c->coords_strides[1] == w && (c->nnz <= 1 || c->coords_strides[0] == w * c->ndim);
}

static QvStatus build_tensors(const QvSparseTensor *const *cells, int64_t n,
                              const QvSparseBuildOptions *o, struct ArrowSchema *schema,
                              struct ArrowArray *array, QvError *error) {
  QvSparseColumnType t;
  QvStatus st = tensor_type(cells, n, o, &t, error);
  if (st != QV_OK) {
    qv_sparse_column_type_reset(&t);
    return st;
  }
  int32_t nd = t.ndim;
  int64_t tot[3] = {0, 0, 0}, nulls = 0;
  int64_t levels[2] = {0, 0}; /* CSF: inner lists of indptr, indices */
  for (int64_t i = 0; i < n; i++) {
    if (cells[i] == NULL) {
      nulls++;
      continue;
    }
    int64_t c[3];
    cell_counts(cells[i], c);
    for (int k = 0; k < 3; k++) tot[k] += c[k]; /* each bounded by a validated buffer */
    levels[0] += nd - 1;
    levels[1] += nd;
  }
  bool large = false;
  for (int k = 0; k < 3; k++) large |= tot[k] > INT32_MAX;
  large |= levels[1] > INT32_MAX;
  t.large_lists = large;
  const QvSparseTensor *only = n == 1 ? cells[0] : NULL;
  bool view = only != NULL && only->owner != NULL &&
              (only->format != QV_SPARSE_COO || coo_row_major(only)) &&
              only->format != QV_SPARSE_CSF;
  size_t vw = qv_arrow_type_size(t.value_type), xw = qv_arrow_type_size(t.index_type);
  size_t pw = qv_arrow_type_size(t.indptr_type);
  int ow = large ? 8 : 4;
  int64_t bytes = n * nd * 8 + n * nd * 4 + (n + 1) * ow * 4 + (levels[0] + levels[1] + 2) * ow +
                  (view ? 0 : tot[0] * (int64_t)pw + tot[1] * (int64_t)xw + tot[2] * (int64_t)vw);
  if (bytes > limit_of(o->max_output_size)) {
    qv_sparse_column_type_reset(&t);
    return qv_error_set(error, QV_ELIMIT, "the column takes %lld bytes, over the limit of %lld "
                        "(max_output_size)", (long long)bytes,
                        (long long)limit_of(o->max_output_size));
  }
  st = qv_sparse_column_schema_init(schema, o->name ? o->name : "sparse", &t, error);
  /* only the scalars of t are used below */
  qv_sparse_column_type_set_names(&t, NULL, 0, NULL);
  if (st != QV_OK) return st;
  Bag *bag = calloc(1, sizeof *bag);
  QvArrayView v;
  memset(&v, 0, sizeof v);
  if (bag == NULL) goto nomem;
  uint8_t *validity = nulls ? bag_alloc(bag, (n + 7) / 8) : NULL;
  int64_t *shape = (int64_t *)bag_alloc(bag, n * nd * 8);
  uint8_t *second = t.format == QV_SPARSE_COO   ? bag_alloc(bag, (n + 7) / 8)
                    : t.format == QV_SPARSE_CSF ? bag_alloc(bag, n * nd * 4)
                                                : NULL;
  uint8_t *off[3], *inner[2] = {NULL, NULL};
  for (int k = 0; k < 3; k++) off[k] = bag_alloc(bag, (n + 1) * ow);
  if (t.format == QV_SPARSE_CSF) {
    inner[0] = bag_alloc(bag, (levels[0] + 1) * ow);
    inner[1] = bag_alloc(bag, (levels[1] + 1) * ow);
  }
  Leaf leaf[3] = {{.w = pw}, {.w = xw}, {.w = vw}};
  for (int k = 0; k < 3; k++) {
    if (view) continue;
    if (k == 0 && t.format == QV_SPARSE_COO) continue;
    if ((leaf[k].data = bag_alloc(bag, tot[k] * (int64_t)leaf[k].w)) == NULL) goto nomem;
  }
  if (shape == NULL || (nulls && validity == NULL) || off[0] == NULL || off[1] == NULL ||
      off[2] == NULL || (t.format != QV_SPARSE_CSR && t.format != QV_SPARSE_CSC && second == NULL) ||
      (t.format == QV_SPARSE_CSF && (inner[0] == NULL || inner[1] == NULL)))
    goto nomem;
  if (view) {
    leaf[0].view = only->format == QV_SPARSE_COO ? NULL : only->indptr;
    leaf[1].view = only->format == QV_SPARSE_COO ? only->coords : only->indices;
    leaf[2].view = only->values;
    bag->keep = only->owner;
    qv_owner_retain(only->owner);
  }
  int64_t lv[2] = {0, 0}; /* CSF inner lists so far */
  for (int64_t i = 0; i < n; i++) {
    const QvSparseTensor *c = cells[i];
    int64_t count[3];
    row_offsets(off, large, i, t.format, nd, leaf, lv);
    if (c == NULL) {
      for (int32_t d = 0; d < nd && t.format == QV_SPARSE_CSF; d++)
        memcpy(second + (i * nd + d) * 4, &d, 4);
      continue;
    }
    if (validity) validity[i / 8] |= (uint8_t)(1u << (i % 8));
    memcpy(shape + i * nd, c->shape, (size_t)nd * 8);
    cell_counts(c, count);
    switch (t.format) {
      case QV_SPARSE_COO:
        if (c->is_canonical) second[i / 8] |= (uint8_t)(1u << (i % 8));
        if (coo_row_major(c)) {
          leaf_put(&leaf[1], c->coords, count[1]);
        } else {
          for (int64_t e = 0; e < c->nnz; e++)
            for (int32_t d = 0; d < nd; d++)
              leaf_put(&leaf[1], c->coords + e * c->coords_strides[0] + d * c->coords_strides[1], 1);
        }
        break;
      case QV_SPARSE_CSF:
        memcpy(second + i * nd * 4, c->axis_order, (size_t)nd * 4);
        for (int32_t l = 0; l < nd; l++) {
          if (l < nd - 1) {
            put_offset(inner[0], large, lv[0]++, leaf[0].count);
            leaf_put(&leaf[0], c->csf_indptr[l], c->csf_indptr_len[l]);
          }
          put_offset(inner[1], large, lv[1]++, leaf[1].count);
          leaf_put(&leaf[1], c->csf_indices[l], c->csf_indices_len[l]);
        }
        break;
      default:
        leaf_put(&leaf[0], c->indptr, count[0]);
        leaf_put(&leaf[1], c->indices, count[1]);
        break;
    }
    leaf_put(&leaf[2], c->values, count[2]);
  }
  row_offsets(off, large, n, t.format, nd, leaf, lv);
  if (t.format == QV_SPARSE_CSF) {
    put_offset(inner[0], large, lv[0], leaf[0].count);
    put_offset(inner[1], large, lv[1], leaf[1].count);
  }
  if ((st = qv_array_view_init(&v, schema, error)) != QV_OK) goto fail;
  v.length = n;
  v.null_count = nulls;
  v.buffer[0] = validity;
  v.buffer_size[0] = validity ? (n + 7) / 8 : 0;
  QvArrayView *sh = &v.children[0];
  sh->length = n;
  sh->null_count = 0;
  sh->children[0].length = n * nd;
  sh->children[0].null_count = 0;
  sh->children[0].buffer[1] = (const uint8_t *)shape;
  sh->children[0].buffer_size[1] = n * nd * 8;
  QvArrayView *values = &v.children[t.format == QV_SPARSE_CSF ? 4 : 3];
  set_list(values, n, off[2], large);
  set_leaf(&values->children[0], &leaf[2]);
  if (t.format == QV_SPARSE_COO) {
    v.children[1].length = n;
    v.children[1].null_count = 0;
    v.children[1].buffer[1] = second;
    v.children[1].buffer_size[1] = (n + 7) / 8;
    set_list(&v.children[2], n, off[1], large);
    QvArrayView *fsl = &v.children[2].children[0];
    fsl->length = leaf[1].count / nd;
    fsl->null_count = 0;
    set_leaf(&fsl->children[0], &leaf[1]);
  } else if (t.format == QV_SPARSE_CSF) {
    QvArrayView *ax = &v.children[1];
    ax->length = n;
    ax->null_count = 0;
    ax->children[0].length = n * nd;
    ax->children[0].null_count = 0;
    ax->children[0].buffer[1] = second;
    ax->children[0].buffer_size[1] = n * nd * 4;
    for (int k = 0; k < 2; k++) {
      set_list(&v.children[2 + k], n, off[k], large);
      set_list(&v.children[2 + k].children[0], lv[k], inner[k], large);
      set_leaf(&v.children[2 + k].children[0].children[0], &leaf[k]);
    }
  } else {
    for (int k = 0; k < 2; k++) {
      set_list(&v.children[1 + k], n, off[k], large);
      set_leaf(&v.children[1 + k].children[0], &leaf[k]);
    }
  }
  st = export_bag(&v, bag, QV_VALIDATE_FULL, array, error);
  bag = NULL;
  qv_array_view_reset(&v);
  if (st == QV_OK) return QV_OK;
  goto fail;
nomem:
  st = qv_error_set(error, QV_ENOMEM, "out of memory building a sparse column");
fail:
  bag_free(bag);
  qv_array_view_reset(&v);
  if (schema->release != NULL) schema->release(schema);
  return st;
}

static QvStatus build_vectors(const QvSparseTensor *const *cells, int64_t n,
                              const QvSparseBuildOptions *o, struct ArrowSchema *schema,
                              struct ArrowArray *array, QvError *error) {
  QvSparseTensor *coo = calloc(n > 0 ? (size_t)n : 1, sizeof *coo);
  if (coo == NULL) return qv_error_set(error, QV_ENOMEM, "out of memory building a column");
  QvSparseColumnType t = {.kind = QV_SPARSE_COLUMN_VECTOR, .format = QV_SPARSE_CSR, .ndim = 1,
                          .size = o->size, .value_type = o->value_type,
                          .index_type = o->index_type};
  QvStatus st = QV_OK;
  bool typed = false;
  int64_t nnz = 0, nulls = 0;
  for (int64_t i = 0; i < n && st == QV_OK; i++) {
    const QvSparseTensor *c = cells[i];
    if (c == NULL) {
      nulls++;
      continue;
    }
    if (c->ndim != 1) {
      st = qv_error_set(error, QV_EINVAL, "cell %lld has %d dims, a sparse vector 1",
                        (long long)i, (int)c->ndim);
      break;
    }
    if (!typed) {
      t.value_type = c->value_type;
      t.index_type = c->index_type;
      if (t.size == 0) t.size = c->shape[0];
      typed = true;
    }
    if (c->value_type != t.value_type || c->index_type != t.index_type || c->shape[0] != t.size) {
      st = qv_error_set(error, QV_EINVAL,
                        "cell %lld is a vector of %lld %s (indices %s), the column holds %lld %s "
                        "(indices %s)",
                        (long long)i, (long long)c->shape[0], qv_arrow_type_name(c->value_type),
                        qv_arrow_type_name(c->index_type), (long long)t.size,
                        qv_arrow_type_name(t.value_type), qv_arrow_type_name(t.index_type));
      break;
    }
    QvSparseOptions so = {.struct_size = sizeof so, .index_type = c->index_type,
                          .max_output_size = o->max_output_size};
    if (c->format == QV_SPARSE_COO && c->is_canonical && coo_row_major(c)) {
      st = qv_sparse_validate(c, error);
      coo[i] = *c;
      coo[i].private_data = NULL; /* borrowed: not reset below */
      coo[i].owner = NULL;
    } else {
      st = qv_sparse_convert(c, QV_SPARSE_COO, &so, &coo[i], error);
    }
    if (st != QV_OK) qv_error_prefix(error, "cell %lld", (long long)i);
    else nnz += coo[i].nnz;
  }
  if (st == QV_OK && o->dim_names != NULL)
    st = o->n_dim_names == 2 ? qv_sparse_column_type_set_names(&t, o->dim_names, 2, error)
                             : qv_error_set(error, QV_EARG, "a vector column has 2 dim names, not %d",
                                            (int)o->n_dim_names);
  size_t xw = qv_arrow_type_size(t.index_type), vw = qv_arrow_type_size(t.value_type);
  t.large_lists = nnz > INT32_MAX;
  t.indptr_type = t.large_lists ? QV_ARROW_INT64 : QV_ARROW_INT32;
  int ow = t.large_lists ? 8 : 4;
  int64_t bytes = (n + 1) * ow + nnz * (int64_t)(xw + vw) + (n + 7) / 8;
  if (st == QV_OK && bytes > limit_of(o->max_output_size))
    st = qv_error_set(error, QV_ELIMIT, "the column takes %lld bytes, over the limit of %lld "
                      "(max_output_size)", (long long)bytes, (long long)limit_of(o->max_output_size));
  if (st == QV_OK && (xw == 0 || vw == 0))
    st = qv_error_set(error, QV_EARG, "a vector column of no non-null cell needs the value and "
                      "index types and size in the options");
  if (st == QV_OK) st = qv_sparse_column_schema_init(schema, o->name ? o->name : "sparse", &t, error);
  qv_sparse_column_type_reset(&t);
  Bag *bag = NULL;
  QvArrayView v;
  memset(&v, 0, sizeof v);
  if (st == QV_OK) {
    bag = calloc(1, sizeof *bag);
    uint8_t *validity = bag && nulls ? bag_alloc(bag, (n + 7) / 8) : NULL;
    uint8_t *offsets = bag ? bag_alloc(bag, (n + 1) * ow) : NULL;
    Leaf li = {.w = xw}, lv = {.w = vw};
    li.data = bag ? bag_alloc(bag, nnz * (int64_t)xw) : NULL;
    lv.data = bag ? bag_alloc(bag, nnz * (int64_t)vw) : NULL;
    if (bag == NULL || (nulls && validity == NULL) || offsets == NULL || li.data == NULL ||
        lv.data == NULL) {
      st = qv_error_set(error, QV_ENOMEM, "out of memory building a sparse column");
    } else {
      for (int64_t i = 0; i < n; i++) {
        put_offset(offsets, ow == 8, i, li.count);
        if (cells[i] == NULL) continue;
        if (validity) validity[i / 8] |= (uint8_t)(1u << (i % 8));
        leaf_put(&li, coo[i].coords, coo[i].nnz);
        leaf_put(&lv, coo[i].values, coo[i].nnz);
      }
      put_offset(offsets, ow == 8, n, li.count);
      if ((st = qv_array_view_init(&v, schema, error)) == QV_OK) {
        set_list(&v, n, offsets, ow == 8);
        v.null_count = nulls;
        v.buffer[0] = validity;
        v.buffer_size[0] = validity ? (n + 7) / 8 : 0;
        v.children[0].length = nnz;
        v.children[0].null_count = 0;
        set_leaf(&v.children[0].children[0], &li);
        set_leaf(&v.children[0].children[1], &lv);
        st = export_bag(&v, bag, QV_VALIDATE_FULL, array, error);
        bag = NULL;
      }
    }
  }
  bag_free(bag);
  qv_array_view_reset(&v);
  for (int64_t i = 0; i < n; i++)
    if (coo[i].private_data != NULL) qv_sparse_reset(&coo[i]);
  free(coo);
  if (st != QV_OK && schema->release != NULL) schema->release(schema);
  return st;
}

QvStatus qv_sparse_column_build(const QvSparseTensor *const *cells, int64_t n,
                                const QvSparseBuildOptions *options, struct ArrowSchema *schema,
                                struct ArrowArray *array, QvError *error) {
  if (schema == NULL || array == NULL || (cells == NULL && n > 0) || n < 0)
    return qv_error_set(error, QV_EARG, "qv_sparse_column_build: bad arguments");
  memset(schema, 0, sizeof *schema);
  memset(array, 0, sizeof *array);
  QvSparseBuildOptions opts;
  QvStatus st = QV_OPTIONS_LOAD(&opts, options, QvSparseBuildOptions, error);
  if (st != QV_OK) return st;
  if (opts.kind == QV_SPARSE_COLUMN_VECTOR) return build_vectors(cells, n, &opts, schema, array, error);
  if (opts.kind != QV_SPARSE_COLUMN_NONE && opts.kind != QV_SPARSE_COLUMN_TENSOR)
    return qv_error_set(error, QV_EARG, "qv_sparse_column_build: unknown kind %d", (int)opts.kind);
  return build_tensors(cells, n, &opts, schema, array, error);
}
