/* Types as text, spelled as Arrow C++'s DataType::ToString spells them
 * (cpp/src/arrow/type.cc, cpp/src/arrow/extension/): "list<item: int32>",
 * "fixed_size_list<item: int32>[2]", "sparse_union<x: int32=5>",
 * "timestamp[ms, tz=UTC]", "dictionary<values=string, indices=int8,
 * ordered=0>", "map<string, int32>", and the tensor extension types with
 * their parameters. quiver's own extension types follow the same pattern
 * ("extension<quiver.sparse_tensor[value_type=double, format=csr, ...]>");
 * an extension type quiver does not know, or whose metadata does not fit
 * its storage, is "extension<NAME[storage_type=...]>".
 *
 * One kernel, used by every printer (quiver cat, quiver inspect, messages
 * naming types, Python's schema text). The text is not escaped: names come
 * from the file, and a printer that sends them to a terminal escapes them. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "quiver/array.h"
#include "quiver/sparse.h"
#include "quiver/sparse_column.h"
#include "quiver/tensor_column.h"
#include "util/grow.h"

/* A text that counts every byte and keeps what fits (snprintf's rule). */
typedef struct Out {
  char *buf;
  size_t cap, len;
} Out;

static void put_n(Out *o, const char *s, size_t n) {
  if (o->len < o->cap) {
    size_t room = o->cap - o->len;
    memcpy(o->buf + o->len, s, n < room ? n : room);
  }
  o->len += n;
}

static void put_s(Out *o, const char *s) { put_n(o, s, strlen(s)); }

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static void put_f(Out *o, const char *fmt, ...) {
  char tmp[QVI_SHORT_TEXT];
  va_list ap;
  va_start(ap, fmt);
  size_t n = qvi_format_short(tmp, fmt, ap);
  va_end(ap);
  put_n(o, tmp, n);
}

/* Arrow C++'s names of the parameterless types. */
static const char *leaf_name(QvArrowType t) {
  switch (t) {
    case QV_ARROW_NULL: return "null";
    case QV_ARROW_BOOL: return "bool";
    case QV_ARROW_INT8: return "int8";
    case QV_ARROW_INT16: return "int16";
    case QV_ARROW_INT32: return "int32";
    case QV_ARROW_INT64: return "int64";
    case QV_ARROW_UINT8: return "uint8";
    case QV_ARROW_UINT16: return "uint16";
    case QV_ARROW_UINT32: return "uint32";
    case QV_ARROW_UINT64: return "uint64";
    case QV_ARROW_FLOAT16: return "halffloat";
    case QV_ARROW_FLOAT32: return "float";
    case QV_ARROW_FLOAT64: return "double";
    case QV_ARROW_DATE32: return "date32[day]";
    case QV_ARROW_DATE64: return "date64[ms]";
    case QV_ARROW_INTERVAL_MONTHS: return "month_interval";
    case QV_ARROW_INTERVAL_DAY_TIME: return "day_time_interval";
    case QV_ARROW_INTERVAL_MONTH_DAY_NANO: return "month_day_nano_interval";
    case QV_ARROW_BINARY: return "binary";
    case QV_ARROW_STRING: return "string";
    case QV_ARROW_LARGE_BINARY: return "large_binary";
    case QV_ARROW_LARGE_STRING: return "large_string";
    case QV_ARROW_BINARY_VIEW: return "binary_view";
    case QV_ARROW_STRING_VIEW: return "string_view";
    default: return NULL;
  }
}

const char *qv_arrow_type_cpp_name(QvArrowType type) {
  const char *n = leaf_name(type);
  return n ? n : "?";
}

static const char *unit_name(QvTimeUnit u) {
  static const char *const names[4] = {"s", "ms", "us", "ns"};
  return (unsigned)u < 4 ? names[u] : "?";
}

static QvStatus type_text(Out *o, const struct ArrowSchema *s, int depth, bool use_extension,
                          QvError *error);

static QvStatus field_text(Out *o, const struct ArrowSchema *s, int depth, QvError *error) {
  if (s->name) put_s(o, s->name);
  put_s(o, ": ");
  QvStatus st = type_text(o, s, depth + 1, true, error);
  if (st) return st;
  if (!(s->flags & ARROW_FLAG_NULLABLE)) put_s(o, " not null");
  return QV_OK;
}

/* Map's key or item: the type, then the field's name in parentheses when it
 * is not the standard one. */
static void map_name(Out *o, const struct ArrowSchema *s, const char *standard) {
  const char *name = s->name ? s->name : "";
  if (strcmp(name, standard) != 0) {
    put_s(o, " ('");
    put_s(o, name);
    put_s(o, "')");
  }
}

static void int_list(Out *o, const char *label, int32_t n, const int64_t *v) {
  put_s(o, label);
  put_s(o, "[");
  for (int32_t i = 0; i < n; i++) {
    if (i) put_s(o, ",");
    if (v[i] < 0)
      put_s(o, "null");
    else
      put_f(o, "%" PRId64, v[i]);
  }
  put_s(o, "]");
}

static void names_list(Out *o, int32_t n, const char *const *names) {
  put_s(o, ", dim_names=[");
  for (int32_t i = 0; i < n; i++) {
    if (i) put_s(o, ",");
    put_s(o, names[i] ? names[i] : "");
  }
  put_s(o, "]");
}

/* A registered extension type's text; false when the field is none or its
 * metadata does not fit its storage. */
static bool extension_text(Out *o, const struct ArrowSchema *s, const QvArrowSchemaView *v) {
  QvTensorColumnType tt;
  memset(&tt, 0, sizeof tt);
  if (qv_tensor_column_type_from_field(s, NULL, &tt, NULL) == QV_OK &&
      (tt.kind == QV_TENSOR_COLUMN_FIXED_SHAPE || tt.kind == QV_TENSOR_COLUMN_VARIABLE_SHAPE)) {
    put_s(o, "extension<");
    put_n(o, v->extension_name, v->extension_name_len);
    put_s(o, "[value_type=");
    put_s(o, qv_arrow_type_cpp_name(tt.value_type));
    if (tt.kind == QV_TENSOR_COLUMN_FIXED_SHAPE)
      int_list(o, ", shape=", tt.ndim, tt.shape);
    else
      put_f(o, ", ndim=%d", (int)tt.ndim);
    if (tt.has_permutation) {
      int64_t p[QV_TENSOR_MAX_NDIM];
      for (int32_t i = 0; i < tt.ndim; i++) p[i] = tt.permutation[i];
      int_list(o, ", permutation=", tt.ndim, p);
    }
    if (tt.dim_names) names_list(o, tt.ndim, tt.dim_names);
    if (tt.kind == QV_TENSOR_COLUMN_VARIABLE_SHAPE && tt.has_uniform_shape)
      int_list(o, ", uniform_shape=", tt.ndim, tt.shape);
    put_s(o, "]>");
    qv_tensor_column_type_reset(&tt);
    return true;
  }
  qv_tensor_column_type_reset(&tt);
  QvSparseColumnType sp;
  memset(&sp, 0, sizeof sp);
  if (qv_sparse_column_type_from_field(s, &sp, NULL) == QV_OK &&
      sp.kind != QV_SPARSE_COLUMN_NONE) {
    put_s(o, "extension<");
    put_n(o, v->extension_name, v->extension_name_len);
    put_s(o, "[value_type=");
    put_s(o, qv_arrow_type_cpp_name(sp.value_type));
    if (sp.kind == QV_SPARSE_COLUMN_VECTOR) {
      put_f(o, ", size=%" PRId64, sp.size);
      put_s(o, ", index_type=");
      put_s(o, qv_arrow_type_cpp_name(sp.index_type));
    } else {
      put_s(o, ", format=");
      put_s(o, qv_sparse_format_name(sp.format));
      put_f(o, ", ndim=%d", (int)sp.ndim);
      put_s(o, ", index_type=");
      put_s(o, qv_arrow_type_cpp_name(sp.index_type));
      if (sp.format != QV_SPARSE_COO) {
        put_s(o, ", indptr_type=");
        put_s(o, qv_arrow_type_cpp_name(sp.indptr_type));
      }
    }
    if (sp.dim_names) names_list(o, sp.n_dim_names, sp.dim_names);
    put_s(o, "]>");
    qv_sparse_column_type_reset(&sp);
    return true;
  }
  qv_sparse_column_type_reset(&sp);
  if (v->extension_name_len == 10 && memcmp(v->extension_name, "arrow.json", 10) == 0 &&
      (v->storage_type == QV_ARROW_STRING || v->storage_type == QV_ARROW_LARGE_STRING ||
       v->storage_type == QV_ARROW_STRING_VIEW) && v->type != QV_ARROW_DICTIONARY) {
    put_s(o, "extension<arrow.json>");
    return true;
  }
  if (v->extension_name_len == 10 && memcmp(v->extension_name, "arrow.uuid", 10) == 0 &&
      v->type == QV_ARROW_FIXED_SIZE_BINARY && v->byte_width == 16) {
    put_s(o, "extension<arrow.uuid>");
    return true;
  }
  if (v->extension_name_len == 11 && memcmp(v->extension_name, "arrow.bool8", 11) == 0 &&
      v->type == QV_ARROW_INT8) {
    put_s(o, "extension<arrow.bool8>");
    return true;
  }
  return false;
}

static QvStatus type_text(Out *o, const struct ArrowSchema *s, int depth, bool use_extension,
                          QvError *error) {
  if (depth > QV_ARRAY_MAX_DEPTH)
    return qv_error_set(error, QV_ELIMIT, "type nested deeper than %d", QV_ARRAY_MAX_DEPTH);
  QvArrowSchemaView v;
  QvStatus st = qv_arrow_schema_view_init(&v, s, error);
  if (st) return st;
  if (use_extension && v.extension_name) {
    if (extension_text(o, s, &v)) return QV_OK;
    put_s(o, "extension<");
    put_n(o, v.extension_name, v.extension_name_len);
    put_s(o, "[storage_type=");
    if ((st = type_text(o, s, depth + 1, false, error))) return st;
    put_s(o, "]>");
    return QV_OK;
  }
  if (v.type == QV_ARROW_DICTIONARY) {
    if (s->dictionary == NULL)
      return qv_error_set(error, QV_EINVAL, "dictionary type without its value type");
    put_s(o, "dictionary<values=");
    if ((st = type_text(o, s->dictionary, depth + 1, true, error))) return st;
    put_s(o, ", indices=");
    put_s(o, qv_arrow_type_cpp_name(v.storage_type));
    put_s(o, (s->flags & ARROW_FLAG_DICTIONARY_ORDERED) ? ", ordered=1>" : ", ordered=0>");
    return QV_OK;
  }
  const char *leaf = leaf_name(v.type);
  if (leaf) {
    put_s(o, leaf);
    return QV_OK;
  }
  switch (v.type) {
    case QV_ARROW_DECIMAL32:
    case QV_ARROW_DECIMAL64:
    case QV_ARROW_DECIMAL128:
    case QV_ARROW_DECIMAL256:
      put_f(o, "decimal%d(%d, %d)", (int)v.decimal_bit_width, (int)v.decimal_precision,
            (int)v.decimal_scale);
      return QV_OK;
    case QV_ARROW_TIME32: put_f(o, "time32[%s]", unit_name(v.time_unit)); return QV_OK;
    case QV_ARROW_TIME64: put_f(o, "time64[%s]", unit_name(v.time_unit)); return QV_OK;
    case QV_ARROW_DURATION: put_f(o, "duration[%s]", unit_name(v.time_unit)); return QV_OK;
    case QV_ARROW_TIMESTAMP:
      put_f(o, "timestamp[%s", unit_name(v.time_unit));
      if (v.timezone_len) {
        put_s(o, ", tz=");
        put_n(o, v.timezone, v.timezone_len);
      }
      put_s(o, "]");
      return QV_OK;
    case QV_ARROW_FIXED_SIZE_BINARY:
      put_f(o, "fixed_size_binary[%d]", (int)v.byte_width);
      return QV_OK;
    case QV_ARROW_LIST:
    case QV_ARROW_LARGE_LIST:
    case QV_ARROW_LIST_VIEW:
    case QV_ARROW_LARGE_LIST_VIEW:
      put_s(o, v.type == QV_ARROW_LIST         ? "list<"
               : v.type == QV_ARROW_LARGE_LIST ? "large_list<"
               : v.type == QV_ARROW_LIST_VIEW  ? "list_view<"
                                               : "large_list_view<");
      if ((st = field_text(o, s->children[0], depth, error))) return st;
      put_s(o, ">");
      return QV_OK;
    case QV_ARROW_FIXED_SIZE_LIST:
      put_s(o, "fixed_size_list<");
      if ((st = field_text(o, s->children[0], depth, error))) return st;
      put_f(o, ">[%d]", (int)v.fixed_size);
      return QV_OK;
    case QV_ARROW_MAP: {
      const struct ArrowSchema *entries = s->children[0];
      if (entries->n_children != 2)
        return qv_error_set(error, QV_EINVAL, "map entries have %" PRId64 " fields, not 2",
                            entries->n_children);
      put_s(o, "map<");
      if ((st = type_text(o, entries->children[0], depth + 2, true, error))) return st;
      map_name(o, entries->children[0], "key");
      put_s(o, ", ");
      if ((st = type_text(o, entries->children[1], depth + 2, true, error))) return st;
      map_name(o, entries->children[1], "value");
      if (s->flags & ARROW_FLAG_MAP_KEYS_SORTED) put_s(o, ", keys_sorted");
      map_name(o, entries, "entries");
      put_s(o, ">");
      return QV_OK;
    }
    case QV_ARROW_STRUCT:
    case QV_ARROW_SPARSE_UNION:
    case QV_ARROW_DENSE_UNION: {
      bool is_union = v.type != QV_ARROW_STRUCT;
      put_s(o, v.type == QV_ARROW_STRUCT         ? "struct<"
               : v.type == QV_ARROW_SPARSE_UNION ? "sparse_union<"
                                                 : "dense_union<");
      for (int64_t i = 0; i < s->n_children; i++) {
        if (i) put_s(o, ", ");
        if ((st = field_text(o, s->children[i], depth, error))) return st;
        if (is_union) put_f(o, "=%d", (int)v.union_type_ids[i]);
      }
      put_s(o, ">");
      return QV_OK;
    }
    case QV_ARROW_RUN_END_ENCODED:
      put_s(o, "run_end_encoded<run_ends: ");
      if ((st = type_text(o, s->children[0], depth + 1, true, error))) return st;
      put_s(o, ", values: ");
      if ((st = type_text(o, s->children[1], depth + 1, true, error))) return st;
      put_s(o, ">");
      return QV_OK;
    default:
      return qv_error_set(error, QV_EINVAL, "no text for type %s", qv_arrow_type_name(v.type));
  }
}

QvStatus qv_arrow_schema_to_string(const struct ArrowSchema *schema, unsigned flags, char *buf,
                                   size_t cap, size_t *length, QvError *error) {
  if (length) *length = 0;
  if (cap && buf) buf[0] = '\0';
  if (schema == NULL || schema->release == NULL)
    return qv_error_set(error, QV_EINVAL, "no schema");
  Out o = {buf, buf ? cap : 0, 0};
  QvStatus st = (flags & QV_TYPE_STRING_FIELD) ? field_text(&o, schema, 0, error)
                                               : type_text(&o, schema, 0, true, error);
  if (st) {
    if (cap && buf) buf[0] = '\0';
    return st;
  }
  if (o.cap) o.buf[o.len < o.cap ? o.len : o.cap - 1] = '\0';
  if (length) *length = o.len;
  return QV_OK;
}

QvStatus qv_arrow_schema_to_string_alloc(const struct ArrowSchema *schema, unsigned flags,
                                         char **out, QvError *error) {
  *out = NULL;
  size_t n = 0;
  QvStatus st = qv_arrow_schema_to_string(schema, flags, NULL, 0, &n, error);
  if (st) return st;
  char *text = malloc(n + 1);
  if (text == NULL) return qv_error_set(error, QV_ENOMEM, "out of memory");
  if ((st = qv_arrow_schema_to_string(schema, flags, text, n + 1, &n, error))) {
    free(text);
    return st;
  }
  *out = text;
  return QV_OK;
}
