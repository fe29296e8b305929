/* Sparse column extension types (quiver/sparse_column.h): metadata JSON
 * (util/json.h), storage type checks, and the field builder. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adapters/sparse_column_internal.h"
#include "adapters/tensor_column_internal.h"
#include "quiver/sparse_column.h"
#include "util/json.h"

void qv_sparse_column_type_reset(QvSparseColumnType *type) {
  if (type == NULL) return;
  free(type->private_data);
  memset(type, 0, sizeof *type);
}

QvStatus qv_sparse_column_type_set_names(QvSparseColumnType *type, const char *const *names,
                                         int32_t n, QvError *error) {
  if (type == NULL || n < 0 || n > QV_TENSOR_MAX_NDIM)
    return qv_error_set(error, QV_EARG, "qv_sparse_column_type_set_names: bad arguments");
  free(type->private_data);
  type->private_data = NULL;
  type->dim_names = NULL;
  type->n_dim_names = 0;
  if (names == NULL || n == 0) return QV_OK;
  char **block;
  QvStatus st = qvi_ext_names_copy(names, n, &block, error);
  if (st != QV_OK) return qv_error_prefix(error, "qv_sparse_column_type_set_names");
  type->private_data = block;
  type->dim_names = (const char *const *)block;
  type->n_dim_names = n;
  return QV_OK;
}

/* The format names of the metadata: exact, lower case. */
static bool parse_format(const char *s, QvSparseFormat *out) {
  for (int f = QV_SPARSE_COO; f <= QV_SPARSE_CSF; f++)
    if (strcmp(s, qv_sparse_format_name((QvSparseFormat)f)) == 0) {
      *out = (QvSparseFormat)f;
      return true;
    }
  return false;
}

static QvStatus parse_object(const QviJson *root, int kind_, int32_t ndim, void *out_,
                             QvError *error) {
  QvSparseColumnKind kind = (QvSparseColumnKind)kind_;
  QvSparseColumnType *out = out_;
  const char *what = qvi_sparse_column_kind_name(kind);
  if (root->kind != QVI_JSON_OBJECT)
    return qv_error_set(error, QV_EINVAL, "%s metadata: not a JSON object", what);
  if (kind == QV_SPARSE_COLUMN_TENSOR) {
    const QviJson *f = qvi_json_get(root, "format");
    if (f == NULL || f->kind != QVI_JSON_STRING)
      return qv_error_set(error, QV_EINVAL,
                          "%s metadata: \"format\" (\"coo\", \"csr\", \"csc\" or \"csf\") is "
                          "missing",
                          what);
    if (!parse_format(f->u.s, &out->format))
      return qv_error_set(error, QV_EINVAL,
                          "%s metadata: \"format\" is \"%.32s\", not \"coo\", \"csr\", \"csc\" "
                          "or \"csf\"",
                          what, f->u.s);
    if ((out->format == QV_SPARSE_CSR || out->format == QV_SPARSE_CSC) && ndim != 2)
      return qv_error_set(error, QV_EINVAL, "%s metadata: format \"%s\" needs ndim 2, not %d",
                          what, qv_sparse_format_name(out->format), (int)ndim);
    out->ndim = ndim;
  } else {
    const QviJson *s = qvi_json_get(root, "size");
    if (s == NULL) return qv_error_set(error, QV_EINVAL, "%s metadata: \"size\" is missing", what);
    if (s->kind != QVI_JSON_INT)
      return qv_error_set(error, QV_EINVAL, "%s metadata: \"size\" is not an integer", what);
    if (s->u.i < 0)
      return qv_error_set(error, QV_EINVAL, "%s metadata: \"size\" = %lld is negative", what,
                          (long long)s->u.i);
    out->format = QV_SPARSE_CSR;
    out->ndim = 1;
    out->size = s->u.i;
  }
  int32_t n_names = kind == QV_SPARSE_COLUMN_VECTOR ? 2 : ndim;
  const QviJson *arr = qvi_json_get(root, "dim_names");
  if (arr == NULL) return QV_OK;
  if (arr->kind != QVI_JSON_ARRAY)
    return qv_error_set(error, QV_EINVAL, "%s metadata: \"dim_names\" is not an array", what);
  if (arr->n != (size_t)n_names)
    return qv_error_set(error, QV_EINVAL, "%s metadata: \"dim_names\" has %zu elements, not %d",
                        what, arr->n, (int)n_names);
  const char *names[QV_TENSOR_MAX_NDIM];
  QvStatus st = qvi_ext_meta_names(arr, n_names, what, names, error);
  if (st != QV_OK) return st;
  return qv_sparse_column_type_set_names(out, names, n_names, error);
}

QvStatus qv_sparse_column_type_parse(QvSparseColumnKind kind, const char *json, size_t len,
                                     int32_t ndim, QvSparseColumnType *out, QvError *error) {
  if (out == NULL) return qv_error_set(error, QV_EARG, "qv_sparse_column_type_parse: out is NULL");
  memset(out, 0, sizeof *out);
  if (kind != QV_SPARSE_COLUMN_TENSOR && kind != QV_SPARSE_COLUMN_VECTOR)
    return qv_error_set(error, QV_EARG, "qv_sparse_column_type_parse: kind %d is no sparse kind",
                        (int)kind);
  out->kind = kind;
  const char *what = qvi_sparse_column_kind_name(kind);
  if (kind == QV_SPARSE_COLUMN_TENSOR && (ndim < 1 || ndim > QV_TENSOR_MAX_NDIM))
    return qv_error_set(error, ndim < 1 ? QV_EINVAL : QV_ELIMIT, "%s: ndim %d is outside [1, %d]",
                        what, (int)ndim, QV_TENSOR_MAX_NDIM);
  QvStatus st = qvi_ext_meta_parse(json, len, what, parse_object, kind, ndim, out, error);
  if (st != QV_OK) {
    qv_sparse_column_type_reset(out);
    out->kind = kind;
  }
  return st;
}

QvStatus qv_sparse_column_type_to_json(const QvSparseColumnType *type, char **json,
                                       QvError *error) {
  if (json == NULL || type == NULL)
    return qv_error_set(error, QV_EARG, "qv_sparse_column_type_to_json: NULL argument");
  *json = NULL;
  QvStrBuf b = {0};
  qvi_strbuf_put(&b, "{", 1);
  if (type->kind == QV_SPARSE_COLUMN_TENSOR) {
    bool bad_utf8;
    const char *name = qv_sparse_format_name(type->format);
    qvi_ext_meta_key(&b, "format");
    qvi_json_put_string(&b, name, strlen(name), &bad_utf8);
  } else {
    qvi_ext_meta_key(&b, "size");
    qvi_json_put_int(&b, type->size);
  }
  QvStatus st = qvi_ext_meta_put_names(&b, type->dim_names, type->n_dim_names,
                                       qvi_sparse_column_kind_name(type->kind), error);
  return qvi_ext_meta_finish(&b, st, json, error);
}

/* ---- storage types */

static bool is_list(const struct ArrowSchema *s, bool *large) {
  if (s->format == NULL || s->n_children != 1) return false;
  if (strcmp(s->format, "+l") == 0) return true;
  if (strcmp(s->format, "+L") == 0) {
    *large = true;
    return true;
  }
  return false;
}

/* A FixedSizeList of `size` elements of format `item`. */
static bool is_fixed_list(const struct ArrowSchema *s, int32_t size, const char *item) {
  char fmt[24];
  snprintf(fmt, sizeof fmt, "+w:%d", (int)size);
  return s->format != NULL && strcmp(s->format, fmt) == 0 && s->n_children == 1 &&
         s->children[0]->format != NULL && strcmp(s->children[0]->format, item) == 0;
}

static QvArrowType integer_type(const char *format) {
  QvArrowType t = qvi_tensor_value_from_format(format);
  return t >= QV_ARROW_INT8 && t <= QV_ARROW_UINT64 ? t : QV_ARROW_NONE;
}

static QvStatus child_error(QvError *error, const char *what, const char *field,
                            const char *child, const char *expect) {
  return qv_error_set(error, QV_EINVAL, "field '%s': %s storage child '%s' is not %s",
                      field ? field : "", what, child, expect);
}

/* The element type of a List (depth 1) or List<List> (depth 2) child. */
static QvArrowType list_leaf(const struct ArrowSchema *s, int depth, bool *large, bool numeric) {
  for (int d = 0; d < depth; d++) {
    if (!is_list(s, large)) return QV_ARROW_NONE;
    s = s->children[0];
  }
  return numeric ? qvi_tensor_value_from_format(s->format) : integer_type(s->format);
}

static QvStatus tensor_storage(const struct ArrowSchema *field, QvSparseColumnType *out,
                               QvError *error) {
  const char *what = QV_SPARSE_TENSOR_EXTENSION, *name = field->name;
  const char *const *names;
  int n = qvi_sparse_column_children(out->format, &names);
  if (field->n_children != n)
    return qv_error_set(error, QV_EINVAL,
                        "field '%s': %s storage of format %s is a Struct of %d children, not %lld",
                        name ? name : "", what, qv_sparse_format_name(out->format), n,
                        (long long)field->n_children);
  for (int i = 0; i < n; i++) {
    const char *cn = field->children[i]->name;
    if (cn == NULL || strcmp(cn, names[i]) != 0)
      return qv_error_set(error, QV_EINVAL,
                          "field '%s': %s storage child %d is '%s', format %s needs '%s' there",
                          name ? name : "", what, i, cn ? cn : "", qv_sparse_format_name(out->format),
                          names[i]);
  }
  int32_t nd = out->ndim;
  bool large = false;
  if (out->format == QV_SPARSE_COO) {
    if (strcmp(field->children[1]->format, "b") != 0)
      return child_error(error, what, name, "canonical", "Bool");
    const struct ArrowSchema *c = field->children[2];
    char fmt[24];
    snprintf(fmt, sizeof fmt, "+w:%d", (int)nd);
    if (!is_list(c, &large) || strcmp(c->children[0]->format, fmt) != 0 ||
        c->children[0]->n_children != 1 ||
        (out->index_type = integer_type(c->children[0]->children[0]->format)) == QV_ARROW_NONE)
      return child_error(error, what, name, "coords",
                         "a List of FixedSizeList<integer>[ndim]");
    out->indptr_type = out->index_type;
  } else {
    int depth = out->format == QV_SPARSE_CSF ? 2 : 1;
    int base = out->format == QV_SPARSE_CSF ? 2 : 1;
    if (out->format == QV_SPARSE_CSF && !is_fixed_list(field->children[1], nd, "i"))
      return child_error(error, what, name, "axis_order", "FixedSizeList<int32>[ndim]");
    const char *expect = depth == 2 ? "a List of Lists of an integer type"
                                    : "a List of an integer type";
    if ((out->indptr_type = list_leaf(field->children[base], depth, &large, false)) ==
        QV_ARROW_NONE)
      return child_error(error, what, name, "indptr", expect);
    if ((out->index_type = list_leaf(field->children[base + 1], depth, &large, false)) ==
        QV_ARROW_NONE)
      return child_error(error, what, name, "indices", expect);
  }
  if ((out->value_type = list_leaf(field->children[n - 1], 1, &large, true)) == QV_ARROW_NONE)
    return child_error(error, what, name, "values", "a List of a numeric tensor value type");
  out->large_lists = large;
  return QV_OK;
}

static QvStatus vector_storage(const struct ArrowSchema *field, QvSparseColumnType *out,
                               QvError *error) {
  const char *what = QV_SPARSE_VECTOR_EXTENSION, *name = field->name;
  bool large = false;
  const struct ArrowSchema *s = is_list(field, &large) ? field->children[0] : NULL;
  if (s == NULL || strcmp(s->format, "+s") != 0 || s->n_children != 2 ||
      s->children[0]->name == NULL || strcmp(s->children[0]->name, "index") != 0 ||
      s->children[1]->name == NULL || strcmp(s->children[1]->name, "value") != 0)
    return qv_error_set(error, QV_EINVAL,
                        "field '%s': %s storage is not a List of Struct{index, value}",
                        name ? name : "", what);
  if ((out->index_type = integer_type(s->children[0]->format)) == QV_ARROW_NONE)
    return child_error(error, what, name, "index", "of an integer type");
  if ((out->value_type = qvi_tensor_value_from_format(s->children[1]->format)) == QV_ARROW_NONE)
    return child_error(error, what, name, "value", "of a numeric tensor value type");
  out->large_lists = large;
  out->indptr_type = large ? QV_ARROW_INT64 : QV_ARROW_INT32;
  return QV_OK;
}

QvStatus qv_sparse_column_type_from_field(const struct ArrowSchema *field, QvSparseColumnType *out,
                                          QvError *error) {
  if (out == NULL || field == NULL)
    return qv_error_set(error, QV_EARG, "qv_sparse_column_type_from_field: NULL argument");
  memset(out, 0, sizeof *out);
  QvArrowSchemaView v;
  QvStatus st = qv_arrow_schema_validate(field, error);
  if (st == QV_OK) st = qv_arrow_schema_view_init(&v, field, error);
  if (st != QV_OK) return st;
  if (v.extension_name == NULL) return QV_OK;
  QvSparseColumnKind kind = QV_SPARSE_COLUMN_NONE;
#define NAME_IS(s) (v.extension_name_len == strlen(s) && memcmp(v.extension_name, s, strlen(s)) == 0)
  if (NAME_IS(QV_SPARSE_TENSOR_EXTENSION)) kind = QV_SPARSE_COLUMN_TENSOR;
  if (NAME_IS(QV_SPARSE_VECTOR_EXTENSION)) kind = QV_SPARSE_COLUMN_VECTOR;
#undef NAME_IS
  if (kind == QV_SPARSE_COLUMN_NONE) return QV_OK;
  const char *name = field->name ? field->name : "";
  int32_t ndim = 0;
  if (kind == QV_SPARSE_COLUMN_TENSOR) {
    const struct ArrowSchema *shape = v.type == QV_ARROW_STRUCT && field->n_children > 0
                                          ? field->children[0]
                                          : NULL;
    QvArrowSchemaView sv;
    if (shape == NULL || shape->name == NULL || strcmp(shape->name, "shape") != 0 ||
        qv_arrow_schema_view_init(&sv, shape, NULL) != QV_OK || sv.type != QV_ARROW_FIXED_SIZE_LIST ||
        strcmp(shape->children[0]->format, "l") != 0)
      return qv_error_set(error, QV_EINVAL,
                          "field '%s': %s storage is not a Struct whose first child is "
                          "shape: FixedSizeList<int64>[ndim]",
                          name, QV_SPARSE_TENSOR_EXTENSION);
    ndim = sv.fixed_size;
  }
  st = qv_sparse_column_type_parse(kind, v.extension_metadata, v.extension_metadata_len, ndim,
                                   out, error);
  if (st != QV_OK) return qv_error_prefix(error, "field '%s'", name);
  st = kind == QV_SPARSE_COLUMN_TENSOR ? tensor_storage(field, out, error)
                                       : vector_storage(field, out, error);
  if (st != QV_OK) qv_sparse_column_type_reset(out);
  return st;
}

/* ---- building the field */

static QvStatus list_field(struct ArrowSchema *s, const char *name, bool large, int depth,
                           const char *leaf, QvError *error) {
  QvStatus st = QV_OK;
  for (int d = 0; d < depth && st == QV_OK; d++) {
    st = qv_arrow_schema_init(s, large ? "+L" : "+l", d == 0 ? name : "item", 0, 1, error);
    if (st == QV_OK) s = s->children[0];
  }
  if (st == QV_OK) st = qv_arrow_schema_init(s, leaf, "item", 0, 0, error);
  return st;
}

static QvStatus fixed_field(struct ArrowSchema *s, const char *name, int32_t size,
                            const char *leaf, QvError *error) {
  char fmt[24];
  snprintf(fmt, sizeof fmt, "+w:%d", (int)size);
  QvStatus st = qv_arrow_schema_init(s, fmt, name, 0, 1, error);
  if (st == QV_OK) st = qv_arrow_schema_init(s->children[0], leaf, "item", 0, 0, error);
  return st;
}

static QvStatus tensor_children(struct ArrowSchema *out, const char *name,
                                const QvSparseColumnType *t, const char *vf, const char *xf,
                                const char *pf, QvError *error) {
  const char *const *names;
  int n = qvi_sparse_column_children(t->format, &names);
  bool L = t->large_lists;
  QvStatus st = qv_arrow_schema_init(out, "+s", name, ARROW_FLAG_NULLABLE, n, error);
  if (st == QV_OK) st = fixed_field(out->children[0], "shape", t->ndim, "l", error);
  if (st != QV_OK) return st;
  if (t->format == QV_SPARSE_COO) {
    char fmt[24];
    snprintf(fmt, sizeof fmt, "+w:%d", (int)t->ndim);
    struct ArrowSchema *c = out->children[2];
    if ((st = qv_arrow_schema_init(out->children[1], "b", "canonical", 0, 0, error)) == QV_OK &&
        (st = qv_arrow_schema_init(c, L ? "+L" : "+l", "coords", 0, 1, error)) == QV_OK)
      st = fixed_field(c->children[0], "item", t->ndim, xf, error);
  } else if (t->format == QV_SPARSE_CSF) {
    if ((st = fixed_field(out->children[1], "axis_order", t->ndim, "i", error)) == QV_OK &&
        (st = list_field(out->children[2], "indptr", L, 2, pf, error)) == QV_OK)
      st = list_field(out->children[3], "indices", L, 2, xf, error);
  } else {
    if ((st = list_field(out->children[1], "indptr", L, 1, pf, error)) == QV_OK)
      st = list_field(out->children[2], "indices", L, 1, xf, error);
  }
  if (st == QV_OK) st = list_field(out->children[n - 1], "values", L, 1, vf, error);
  return st;
}

QvStatus qv_sparse_column_schema_init(struct ArrowSchema *out, const char *name,
                                      const QvSparseColumnType *type, QvError *error) {
  if (out == NULL || type == NULL)
    return qv_error_set(error, QV_EARG, "qv_sparse_column_schema_init: NULL argument");
  memset(out, 0, sizeof *out);
  const char *vf = qvi_tensor_value_format(type->value_type);
  const char *xf = integer_type(qvi_tensor_value_format(type->index_type)) != QV_ARROW_NONE
                       ? qvi_tensor_value_format(type->index_type)
                       : NULL;
  QvArrowType pt = type->format == QV_SPARSE_COO ? type->index_type : type->indptr_type;
  const char *pf = integer_type(qvi_tensor_value_format(pt)) != QV_ARROW_NONE
                       ? qvi_tensor_value_format(pt)
                       : NULL;
  bool tensor = type->kind == QV_SPARSE_COLUMN_TENSOR;
  if ((!tensor && type->kind != QV_SPARSE_COLUMN_VECTOR) || vf == NULL || xf == NULL ||
      (tensor && pf == NULL) || (tensor && (type->ndim < 1 || type->ndim > QV_TENSOR_MAX_NDIM)) ||
      (tensor && (type->format < QV_SPARSE_COO || type->format > QV_SPARSE_CSF)) ||
      (tensor && (type->format == QV_SPARSE_CSR || type->format == QV_SPARSE_CSC) &&
       type->ndim != 2) ||
      (!tensor && type->size < 0))
    return qv_error_set(error, QV_EARG,
                        "sparse column type: bad kind, format, ndim, size, value or index type");
  QvStatus st;
  if (tensor) {
    st = tensor_children(out, name ? name : "", type, vf, xf, pf, error);
  } else {
    st = qv_arrow_schema_init(out, type->large_lists ? "+L" : "+l", name ? name : "",
                        ARROW_FLAG_NULLABLE, 1, error);
    struct ArrowSchema *s = st == QV_OK ? out->children[0] : NULL;
    if (st == QV_OK && (st = qv_arrow_schema_init(s, "+s", "entries", 0, 2, error)) == QV_OK &&
        (st = qv_arrow_schema_init(s->children[0], xf, "index", 0, 0, error)) == QV_OK)
      st = qv_arrow_schema_init(s->children[1], vf, "value", 0, 0, error);
  }
  char *json = NULL;
  if (st == QV_OK) st = qv_sparse_column_type_to_json(type, &json, error);
  st = qvi_ext_field_finish(out, st, qvi_sparse_column_kind_name(type->kind), json, error);
  free(json);
  return st;
}
