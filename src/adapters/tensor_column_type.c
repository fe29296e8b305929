/* Tensor extension types (quiver/tensor_column.h): metadata JSON parsing and
 * writing (util/json.h), storage type checks, and the field builder. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adapters/tensor_column_internal.h"
#include "quiver/tensor_column.h"
#include "util/copy.h"
#include "util/json.h"

static const char *const kind_names[] = {"?", QV_FIXED_SHAPE_TENSOR, QV_VARIABLE_SHAPE_TENSOR,
                                         "cell tensor"};

const char *qvi_tensor_column_kind_name(QvTensorColumnKind kind) {
  return kind >= 0 && kind <= QV_TENSOR_COLUMN_CELL ? kind_names[kind] : "?";
}

/* Arrow format strings of the value types, indexed by QvArrowType. */
static const char *const value_formats[QV_ARROW_NUMERIC_END] = {
    NULL, "c", "s", "i", "l", "C", "S", "I", "L", "e", "f", "g"};

const char *qvi_tensor_value_format(QvArrowType t) {
  return t > QV_ARROW_NONE && t < QV_ARROW_NUMERIC_END ? value_formats[t] : NULL;
}

QvArrowType qvi_tensor_value_from_format(const char *format) {
  for (int t = QV_ARROW_INT8; t < QV_ARROW_NUMERIC_END; t++)
    if (format != NULL && strcmp(format, value_formats[t]) == 0) return (QvArrowType)t;
  return QV_ARROW_NONE;
}

void qv_tensor_column_type_reset(QvTensorColumnType *type) {
  if (type == NULL) return;
  free(type->private_data);
  memset(type, 0, sizeof *type);
  for (int i = 0; i < QV_TENSOR_MAX_NDIM; i++) type->permutation[i] = i;
}

int64_t qv_tensor_column_type_cell_n_elements(const QvTensorColumnType *type) {
  int64_t n = 1;
  for (int32_t i = 0; i < type->ndim; i++) {
    if (type->shape[i] < 0 || (type->shape[i] != 0 && n > INT64_MAX / type->shape[i])) return -1;
    n *= type->shape[i];
  }
  return n;
}

QvStatus qvi_ext_names_copy(const char *const *names, int32_t n, char ***out, QvError *error) {
  *out = NULL;
  size_t total = (size_t)n * sizeof(char *);
  for (int32_t i = 0; i < n; i++) {
    if (names[i] == NULL) return qv_error_set(error, QV_EARG, "dim_names: name %d is NULL", (int)i);
    total += strlen(names[i]) + 1;
  }
  char **block = malloc(total);
  if (block == NULL) return qv_error_set(error, QV_ENOMEM, "out of memory for dim_names");
  qvi_copy_names(names, (size_t)n, (const char **)block, (char *)(block + n));
  *out = block;
  return QV_OK;
}

QvStatus qvi_ext_meta_parse(const char *json, size_t len, const char *what,
                            QvStatus (*parse)(const QviJson *root, int kind, int32_t ndim,
                                              void *out, QvError *error),
                            int kind, int32_t ndim, void *out, QvError *error) {
  if (json == NULL && len > 0) return qv_error_set(error, QV_EARG, "%s metadata: NULL text", what);
  QvArena *arena = qvi_arena_new();
  if (arena == NULL) return qv_error_set(error, QV_ENOMEM, "%s metadata: out of memory", what);
  const QviJson *root;
  QvStatus st = qvi_json_parse(json, len, arena, &root, NULL, error);
  if (st != QV_OK)
    qv_error_prefix(error, "%s metadata", what);
  else
    st = parse(root, kind, ndim, out, error);
  qvi_arena_free(arena);
  return st;
}

QvStatus qvi_ext_meta_names(const QviJson *arr, int32_t n, const char *what, const char **names,
                            QvError *error) {
  for (int32_t i = 0; i < n; i++) {
    const QviJson *v = &arr->u.items[i];
    if (v->kind != QVI_JSON_STRING)
      return qv_error_set(error, QV_EINVAL, "%s metadata: dim_names[%d] is not a string", what,
                          (int)i);
    if (!qvi_json_is_c_string(v))
      return qv_error_set(error, QV_EINVAL, "%s metadata: dim_names[%d] holds a NUL byte", what,
                          (int)i);
    names[i] = v->u.s;
  }
  return QV_OK;
}

void qvi_ext_meta_key(QvStrBuf *b, const char *key) {
  if (b->len > 1) qvi_strbuf_put(b, ",", 1);
  qvi_strbuf_put(b, "\"", 1);
  qvi_strbuf_put(b, key, strlen(key));
  qvi_strbuf_put(b, "\":", 2);
}

QvStatus qvi_ext_meta_put_names(QvStrBuf *b, const char *const *names, int32_t n,
                                const char *what, QvError *error) {
  if (names == NULL) return QV_OK;
  qvi_ext_meta_key(b, "dim_names");
  qvi_strbuf_put(b, "[", 1);
  for (int32_t i = 0; i < n; i++) {
    bool bad_utf8;
    if (i > 0) qvi_strbuf_put(b, ",", 1);
    if (!qvi_json_put_string(b, names[i], strlen(names[i]), &bad_utf8) && bad_utf8)
      return qv_error_set(error, QV_EINVAL, "%s metadata: dim_names[%d] is not UTF-8", what,
                          (int)i);
  }
  qvi_strbuf_put(b, "]", 1);
  return QV_OK;
}

QvStatus qvi_ext_meta_finish(QvStrBuf *b, QvStatus st, char **json, QvError *error) {
  qvi_strbuf_put(b, "}", 1);
  if (st == QV_OK && b->nomem) st = qv_error_set(error, QV_ENOMEM, "out of memory writing metadata");
  if (st != QV_OK) {
    free(b->data);
    return st;
  }
  *json = b->data;
  return QV_OK;
}

QvStatus qvi_ext_field_finish(struct ArrowSchema *out, QvStatus st, const char *ext_name,
                              const char *json, QvError *error) {
  if (st == QV_OK)
    st = qv_arrow_schema_add_metadata(out, "ARROW:extension:name", 20, ext_name,
                                      strlen(ext_name), error);
  if (st == QV_OK)
    st = qv_arrow_schema_add_metadata(out, "ARROW:extension:metadata", 24, json, strlen(json),
                                      error);
  if (st != QV_OK && out->release != NULL) out->release(out);
  return st;
}

/* Copies ndim names into one allocation: the pointer array, then the text. */
QvStatus qvi_tensor_column_set_names(QvTensorColumnType *type, const char *const *names,
                                    QvError *error) {
  free(type->private_data);
  type->private_data = NULL;
  type->dim_names = NULL;
  if (names == NULL || type->ndim == 0) return QV_OK;
  char **block;
  QvStatus st = qvi_ext_names_copy(names, type->ndim, &block, error);
  if (st != QV_OK) return st;
  type->private_data = block;
  type->dim_names = (const char *const *)block;
  return QV_OK;
}

/* A JSON array of ndim elements, or absent. */
static QvStatus get_array(const QviJson *root, const char *key, const char *what, int32_t ndim,
                          const QviJson **out, QvError *error) {
  *out = qvi_json_get(root, key);
  if (*out == NULL) return QV_OK;
  if ((*out)->kind != QVI_JSON_ARRAY)
    return qv_error_set(error, QV_EINVAL, "%s metadata: \"%s\" is not an array", what, key);
  if (ndim >= 0 && (*out)->n != (size_t)ndim)
    return qv_error_set(error, QV_EINVAL, "%s metadata: \"%s\" has %zu elements for %d dims", what,
                        key, (*out)->n, (int)ndim);
  return QV_OK;
}

static QvStatus parse_extent(const QviJson *v, const char *what, const char *key, size_t i,
                             int64_t max, int64_t *out, QvError *error) {
  if (v->kind != QVI_JSON_INT)
    return qv_error_set(error, QV_EINVAL, "%s metadata: %s[%zu] is not an integer", what, key, i);
  int64_t x = v->u.i;
  if (x < 0)
    return qv_error_set(error, QV_EINVAL, "%s metadata: %s[%zu] = %lld is negative", what, key, i,
                        (long long)x);
  if (x > max)
    return qv_error_set(error, QV_EINVAL, "%s metadata: %s[%zu] = %lld is too large", what, key,
                        i, (long long)x);
  *out = (int64_t)x;
  return QV_OK;
}

static QvStatus parse_object(const QviJson *root, int kind_, int32_t ndim, void *out_,
                             QvError *error) {
  QvTensorColumnKind kind = (QvTensorColumnKind)kind_;
  QvTensorColumnType *out = out_;
  const char *what = qvi_tensor_column_kind_name(kind);
  if (root->kind != QVI_JSON_OBJECT)
    return qv_error_set(error, QV_EINVAL, "%s metadata: not a JSON object", what);
  const QviJson *arr;
  QvStatus st;
  if (kind == QV_TENSOR_COLUMN_CELL) {
    const QviJson *t = qvi_json_get(root, "type");
    if (t == NULL || t->kind != QVI_JSON_STRING)
      return qv_error_set(error, QV_EINVAL, "%s metadata: \"type\" (a value type name) is missing",
                          what);
    st = qv_arrow_type_parse(t->u.s, &out->value_type, error);
    if (st != QV_OK) return qv_error_prefix(error, "%s metadata: \"type\"", what);
  }
  if (kind != QV_TENSOR_COLUMN_VARIABLE_SHAPE) {
    if ((st = get_array(root, "shape", what, -1, &arr, error)) != QV_OK) return st;
    if (arr == NULL)
      return qv_error_set(error, QV_EINVAL, "%s metadata: \"shape\" is missing", what);
    if (arr->n > QV_TENSOR_MAX_NDIM)
      return qv_error_set(error, QV_ELIMIT, "%s metadata: \"shape\" has %zu dims, over %d", what,
                          arr->n, QV_TENSOR_MAX_NDIM);
    out->ndim = (int32_t)arr->n;
    for (size_t i = 0; i < arr->n; i++)
      if ((st = parse_extent(&arr->u.items[i], what, "shape", i, INT64_MAX, &out->shape[i],
                             error)) != QV_OK)
        return st;
    if (qv_tensor_column_type_cell_n_elements(out) < 0)
      return qv_error_set(error, QV_EINVAL, "%s metadata: the product of \"shape\" overflows",
                          what);
  } else {
    out->ndim = ndim;
    for (int32_t i = 0; i < ndim; i++) out->shape[i] = -1;
    if ((st = get_array(root, "uniform_shape", what, ndim, &arr, error)) != QV_OK) return st;
    if (arr != NULL) {
      out->has_uniform_shape = true;
      for (size_t i = 0; i < arr->n; i++) {
        const QviJson *v = &arr->u.items[i];
        if (v->kind == QVI_JSON_NULL) continue;
        if ((st = parse_extent(v, what, "uniform_shape", i, INT32_MAX, &out->shape[i], error)) !=
            QV_OK)
          return st;
      }
    }
  }
  if ((st = get_array(root, "permutation", what, out->ndim, &arr, error)) != QV_OK) return st;
  if (arr != NULL) {
    int32_t seen[QV_TENSOR_MAX_NDIM];
    for (int32_t i = 0; i < out->ndim; i++) seen[i] = -1;
    for (int32_t i = 0; i < out->ndim; i++) {
      const QviJson *v = &arr->u.items[i];
      if (v->kind != QVI_JSON_INT)
        return qv_error_set(error, QV_EINVAL, "%s metadata: permutation[%d] is not an integer",
                            what, (int)i);
      int64_t p = v->u.i;
      if (p < 0 || p >= out->ndim)
        return qv_error_set(error, QV_EINVAL,
                            "%s metadata: permutation[%d] = %lld is not a dim in [0, %d): not a "
                            "permutation",
                            what, (int)i, (long long)p, (int)out->ndim);
      if (seen[p] >= 0)
        return qv_error_set(error, QV_EINVAL,
                            "%s metadata: permutation[%d] = %lld repeats permutation[%d]: not a "
                            "permutation",
                            what, (int)i, (long long)p, (int)seen[p]);
      seen[p] = i;
      out->permutation[i] = (int32_t)p;
      if (p != i) out->has_permutation = true;
    }
  }
  if ((st = get_array(root, "dim_names", what, out->ndim, &arr, error)) != QV_OK) return st;
  if (arr != NULL && out->ndim > 0) {
    const char *names[QV_TENSOR_MAX_NDIM];
    if ((st = qvi_ext_meta_names(arr, out->ndim, what, names, error)) != QV_OK) return st;
    if ((st = qvi_tensor_column_set_names(out, names, error)) != QV_OK) return st;
  }
  return QV_OK;
}

QvStatus qv_tensor_column_type_parse(QvTensorColumnKind kind, const char *json, size_t len,
                                     int32_t ndim, QvTensorColumnType *out, QvError *error) {
  if (out == NULL) return qv_error_set(error, QV_EARG, "qv_tensor_column_type_parse: out is NULL");
  memset(out, 0, sizeof *out);
  qv_tensor_column_type_reset(out);
  if (kind < QV_TENSOR_COLUMN_FIXED_SHAPE || kind > QV_TENSOR_COLUMN_CELL)
    return qv_error_set(error, QV_EARG, "qv_tensor_column_type_parse: kind %d is no tensor kind",
                        (int)kind);
  out->kind = kind;
  const char *what = qvi_tensor_column_kind_name(kind);
  if (kind == QV_TENSOR_COLUMN_VARIABLE_SHAPE) {
    if (ndim < 0 || ndim > QV_TENSOR_MAX_NDIM)
      return qv_error_set(error, ndim < 0 ? QV_EINVAL : QV_ELIMIT,
                          "%s: ndim %d is outside [0, %d]", what, (int)ndim, QV_TENSOR_MAX_NDIM);
    if (len == 0) { /* "Minimal metadata is an empty string" */
      out->ndim = ndim;
      for (int32_t i = 0; i < ndim; i++) out->shape[i] = -1;
      return QV_OK;
    }
  }
  QvStatus st = qvi_ext_meta_parse(json, len, what, parse_object, kind, ndim, out, error);
  if (st != QV_OK) {
    qv_tensor_column_type_reset(out);
    out->kind = kind;
  }
  return st;
}

/* An array of integers; with `nulls`, null for an unknown extent (< 0). */
static void put_ints(QvStrBuf *b, const char *key, const int64_t *v, int32_t n, bool nulls) {
  qvi_ext_meta_key(b, key);
  qvi_strbuf_put(b, "[", 1);
  for (int32_t i = 0; i < n; i++) {
    if (i > 0) qvi_strbuf_put(b, ",", 1);
    if (nulls && v[i] < 0)
      qvi_strbuf_put(b, "null", 4);
    else
      qvi_json_put_int(b, v[i]);
  }
  qvi_strbuf_put(b, "]", 1);
}

QvStatus qv_tensor_column_type_to_json(const QvTensorColumnType *type, char **json,
                                       QvError *error) {
  *json = NULL;
  if (type->ndim < 0 || type->ndim > QV_TENSOR_MAX_NDIM)
    return qv_error_set(error, QV_EARG, "tensor column type: ndim %d is outside [0, %d]",
                        (int)type->ndim, QV_TENSOR_MAX_NDIM);
  /* members in the order the metadata has always been written in */
  QvStrBuf b = {0};
  qvi_strbuf_put(&b, "{", 1);
  const char *what = qvi_tensor_column_kind_name(type->kind);
  if (type->kind == QV_TENSOR_COLUMN_CELL) {
    bool bad_utf8;
    const char *name = qv_arrow_type_name(type->value_type);
    qvi_ext_meta_key(&b, "type");
    qvi_json_put_string(&b, name, strlen(name), &bad_utf8);
  }
  if (type->kind != QV_TENSOR_COLUMN_VARIABLE_SHAPE || type->has_uniform_shape)
    put_ints(&b, type->kind == QV_TENSOR_COLUMN_VARIABLE_SHAPE ? "uniform_shape" : "shape",
             type->shape, type->ndim, true);
  QvStatus st = qvi_ext_meta_put_names(&b, type->dim_names, type->ndim, what, error);
  if (type->has_permutation) {
    int64_t perm[QV_TENSOR_MAX_NDIM];
    for (int32_t i = 0; i < type->ndim; i++) perm[i] = type->permutation[i];
    put_ints(&b, "permutation", perm, type->ndim, false);
  }
  return qvi_ext_meta_finish(&b, st, json, error);
}

static QvStatus storage_error(QvError *error, const char *what, const char *field,
                              const char *expect) {
  return qv_error_set(error, QV_EINVAL, "%s field '%s': storage is not %s", what,
                      field ? field : "", expect);
}

QvStatus qv_tensor_column_type_from_field(const struct ArrowSchema *field,
                                          const char *cell_extension, QvTensorColumnType *out,
                                          QvError *error) {
  if (out == NULL || field == NULL)
    return qv_error_set(error, QV_EARG, "qv_tensor_column_type_from_field: NULL argument");
  memset(out, 0, sizeof *out);
  qv_tensor_column_type_reset(out);
  QvArrowSchemaView v;
  QvStatus st = qv_arrow_schema_view_init(&v, field, error);
  if (st != QV_OK) return st;
  if (v.extension_name == NULL) return QV_OK;
  QvTensorColumnKind kind = QV_TENSOR_COLUMN_NONE;
#define NAME_IS(s) (v.extension_name_len == strlen(s) && memcmp(v.extension_name, s, strlen(s)) == 0)
  if (NAME_IS(QV_FIXED_SHAPE_TENSOR))
    kind = QV_TENSOR_COLUMN_FIXED_SHAPE;
  else if (NAME_IS(QV_VARIABLE_SHAPE_TENSOR))
    kind = QV_TENSOR_COLUMN_VARIABLE_SHAPE;
  else if (cell_extension != NULL && NAME_IS(cell_extension))
    kind = QV_TENSOR_COLUMN_CELL;
#undef NAME_IS
  if (kind == QV_TENSOR_COLUMN_NONE) return QV_OK;
  const char *what = qvi_tensor_column_kind_name(kind);
  const char *name = field->name;
  const char *meta = v.extension_metadata;
  size_t meta_len = v.extension_metadata_len;
  if (kind == QV_TENSOR_COLUMN_FIXED_SHAPE) {
    if (v.type != QV_ARROW_FIXED_SIZE_LIST)
      return storage_error(error, what, name, "a FixedSizeList");
    QvArrowType vt = qvi_tensor_value_from_format(field->children[0]->format);
    if (vt == QV_ARROW_NONE)
      return qv_error_set(error, QV_EINVAL,
                          "%s field '%s': value type '%s' is not a numeric tensor type", what,
                          name ? name : "", field->children[0]->format);
    if ((st = qv_tensor_column_type_parse(kind, meta, meta_len, 0, out, error)) != QV_OK)
      return qv_error_prefix(error, "field '%s'", name ? name : "");
    out->value_type = vt;
    int64_t cells = qv_tensor_column_type_cell_n_elements(out);
    if (cells != v.fixed_size) {
      qv_tensor_column_type_reset(out);
      return qv_error_set(error, QV_EINVAL,
                          "%s field '%s': FixedSizeList size %d but shape has %lld values", what,
                          name ? name : "", (int)v.fixed_size, (long long)cells);
    }
    return QV_OK;
  }
  if (kind == QV_TENSOR_COLUMN_VARIABLE_SHAPE) {
    if (v.type != QV_ARROW_STRUCT || field->n_children != 2)
      return storage_error(error, what, name, "a Struct of two fields (data, shape)");
    int data = -1, shape = -1;
    for (int i = 0; i < 2; i++) {
      const char *n = field->children[i]->name;
      if (n != NULL && strcmp(n, "data") == 0) data = i;
      if (n != NULL && strcmp(n, "shape") == 0) shape = i;
    }
    if (data < 0 || shape < 0)
      return storage_error(error, what, name, "a Struct with fields named 'data' and 'shape'");
    QvArrowSchemaView dv, sv;
    if ((st = qv_arrow_schema_view_init(&dv, field->children[data], error)) != QV_OK) return st;
    if ((st = qv_arrow_schema_view_init(&sv, field->children[shape], error)) != QV_OK) return st;
    if (dv.type != QV_ARROW_LIST && dv.type != QV_ARROW_LARGE_LIST)
      return storage_error(error, what, name, "Struct{data: List<...>}");
    if (sv.type != QV_ARROW_FIXED_SIZE_LIST ||
        strcmp(field->children[shape]->children[0]->format, "i") != 0)
      return storage_error(error, what, name, "Struct{shape: FixedSizeList<int32>}");
    QvArrowType vt = qvi_tensor_value_from_format(field->children[data]->children[0]->format);
    if (vt == QV_ARROW_NONE)
      return qv_error_set(error, QV_EINVAL,
                          "%s field '%s': value type '%s' is not a numeric tensor type", what,
                          name ? name : "", field->children[data]->children[0]->format);
    if ((st = qv_tensor_column_type_parse(kind, meta, meta_len, sv.fixed_size, out, error)) !=
        QV_OK)
      return qv_error_prefix(error, "field '%s'", name ? name : "");
    out->value_type = vt;
    return QV_OK;
  }
  if (v.type != QV_ARROW_BINARY && v.type != QV_ARROW_LARGE_BINARY &&
      v.type != QV_ARROW_FIXED_SIZE_BINARY)
    return storage_error(error, what, name, "Binary, LargeBinary or FixedSizeBinary");
  if ((st = qv_tensor_column_type_parse(kind, meta, meta_len, 0, out, error)) != QV_OK)
    return qv_error_prefix(error, "field '%s' (extension '%s')", name ? name : "", cell_extension);
  int64_t cells = qv_tensor_column_type_cell_n_elements(out);
  int64_t es = (int64_t)qv_arrow_type_size(out->value_type);
  if (v.type == QV_ARROW_FIXED_SIZE_BINARY && (cells > INT64_MAX / es || cells * es != v.byte_width)) {
    qv_tensor_column_type_reset(out);
    return qv_error_set(error, QV_EINVAL,
                        "field '%s' (extension '%s'): FixedSizeBinary width %d but a %s tensor of "
                        "that shape has %lld bytes",
                        name ? name : "", cell_extension, (int)v.byte_width,
                        qv_arrow_type_name(out->value_type),
                        cells > INT64_MAX / es ? -1LL : (long long)(cells * es));
  }
  return QV_OK;
}

static const char *ext_name(const QvTensorColumnType *type, const char *cell_extension) {
  return type->kind == QV_TENSOR_COLUMN_FIXED_SHAPE      ? QV_FIXED_SHAPE_TENSOR
         : type->kind == QV_TENSOR_COLUMN_VARIABLE_SHAPE ? QV_VARIABLE_SHAPE_TENSOR
                                                         : cell_extension;
}

QvStatus qv_tensor_column_schema_init(struct ArrowSchema *out, const char *name,
                                      const QvTensorColumnType *type, const char *cell_extension,
                                      QvError *error) {
  if (out == NULL || type == NULL)
    return qv_error_set(error, QV_EARG, "qv_tensor_column_schema_init: NULL argument");
  memset(out, 0, sizeof *out);
  const char *vf = qvi_tensor_value_format(type->value_type);
  if (vf == NULL || type->ndim < 0 || type->ndim > QV_TENSOR_MAX_NDIM)
    return qv_error_set(error, QV_EARG, "tensor column type: no value type or a bad ndim");
  if (type->kind == QV_TENSOR_COLUMN_CELL && (cell_extension == NULL || *cell_extension == '\0'))
    return qv_error_set(error, QV_EARG, "the cell tensor form needs an extension name");
  int64_t cells = qv_tensor_column_type_cell_n_elements(type);
  char fmt[48];
  QvStatus st;
  switch (type->kind) {
    case QV_TENSOR_COLUMN_FIXED_SHAPE:
      if (cells < 0 || cells > INT32_MAX)
        return qv_error_set(error, QV_ELIMIT, "a cell of %lld values does not fit a FixedSizeList",
                            (long long)cells);
      snprintf(fmt, sizeof fmt, "+w:%lld", (long long)cells);
      if ((st = qv_arrow_schema_init(out, fmt, name, ARROW_FLAG_NULLABLE, 1, error)) != QV_OK) return st;
      st = qv_arrow_schema_init(out->children[0], vf, "item", ARROW_FLAG_NULLABLE, 0, error);
      break;
    case QV_TENSOR_COLUMN_VARIABLE_SHAPE:
      if ((st = qv_arrow_schema_init(out, "+s", name, ARROW_FLAG_NULLABLE, 2, error)) != QV_OK) return st;
      snprintf(fmt, sizeof fmt, "+w:%d", (int)type->ndim);
      if ((st = qv_arrow_schema_init(out->children[0], "+l", "data", 0, 1, error)) != QV_OK ||
          (st = qv_arrow_schema_init(out->children[0]->children[0], vf, "item", ARROW_FLAG_NULLABLE, 0,
                               error)) != QV_OK ||
          (st = qv_arrow_schema_init(out->children[1], fmt, "shape", 0, 1, error)) != QV_OK ||
          (st = qv_arrow_schema_init(out->children[1]->children[0], "i", "item", 0, 0, error)) != QV_OK)
        break;
      break;
    default: {
      int64_t es = (int64_t)qv_arrow_type_size(type->value_type);
      if (cells < 0 || cells > INT32_MAX / es)
        return qv_error_set(error, QV_ELIMIT, "a cell of %lld values does not fit FixedSizeBinary",
                            (long long)cells);
      if (cells == 0)
        snprintf(fmt, sizeof fmt, "z"); /* FixedSizeBinary needs a positive width */
      else
        snprintf(fmt, sizeof fmt, "w:%lld", (long long)(cells * es));
      st = qv_arrow_schema_init(out, fmt, name, ARROW_FLAG_NULLABLE, 0, error);
      break;
    }
  }
  char *json = NULL;
  if (st == QV_OK) st = qv_tensor_column_type_to_json(type, &json, error);
  st = qvi_ext_field_finish(out, st, ext_name(type, cell_extension), json, error);
  free(json);
  return st;
}
