/* ArrowSchema: format string parsing (QvArrowSchemaView), construction, copy and
 * metadata blobs. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array/array_internal.h"

static const char *const type_names[QV_ARROW_TYPE_COUNT] = {
    [QV_ARROW_NONE] = "none",
    [QV_ARROW_NULL] = "null",
    [QV_ARROW_BOOL] = "bool",
    [QV_ARROW_INT8] = "int8",
    [QV_ARROW_UINT8] = "uint8",
    [QV_ARROW_INT16] = "int16",
    [QV_ARROW_UINT16] = "uint16",
    [QV_ARROW_INT32] = "int32",
    [QV_ARROW_UINT32] = "uint32",
    [QV_ARROW_INT64] = "int64",
    [QV_ARROW_UINT64] = "uint64",
    [QV_ARROW_FLOAT16] = "float16",
    [QV_ARROW_FLOAT32] = "float32",
    [QV_ARROW_FLOAT64] = "float64",
    [QV_ARROW_DECIMAL32] = "decimal32",
    [QV_ARROW_DECIMAL64] = "decimal64",
    [QV_ARROW_DECIMAL128] = "decimal128",
    [QV_ARROW_DECIMAL256] = "decimal256",
    [QV_ARROW_DATE32] = "date32",
    [QV_ARROW_DATE64] = "date64",
    [QV_ARROW_TIME32] = "time32",
    [QV_ARROW_TIME64] = "time64",
    [QV_ARROW_TIMESTAMP] = "timestamp",
    [QV_ARROW_DURATION] = "duration",
    [QV_ARROW_INTERVAL_MONTHS] = "interval_months",
    [QV_ARROW_INTERVAL_DAY_TIME] = "interval_day_time",
    [QV_ARROW_INTERVAL_MONTH_DAY_NANO] = "interval_month_day_nano",
    [QV_ARROW_BINARY] = "binary",
    [QV_ARROW_STRING] = "utf8",
    [QV_ARROW_LARGE_BINARY] = "large_binary",
    [QV_ARROW_LARGE_STRING] = "large_utf8",
    [QV_ARROW_BINARY_VIEW] = "binary_view",
    [QV_ARROW_STRING_VIEW] = "utf8_view",
    [QV_ARROW_FIXED_SIZE_BINARY] = "fixed_size_binary",
    [QV_ARROW_LIST] = "list",
    [QV_ARROW_LARGE_LIST] = "large_list",
    [QV_ARROW_LIST_VIEW] = "list_view",
    [QV_ARROW_LARGE_LIST_VIEW] = "large_list_view",
    [QV_ARROW_FIXED_SIZE_LIST] = "fixed_size_list",
    [QV_ARROW_STRUCT] = "struct",
    [QV_ARROW_MAP] = "map",
    [QV_ARROW_SPARSE_UNION] = "sparse_union",
    [QV_ARROW_DENSE_UNION] = "dense_union",
    [QV_ARROW_RUN_END_ENCODED] = "run_end_encoded",
    [QV_ARROW_DICTIONARY] = "dictionary",
};

const char *qv_arrow_type_name(QvArrowType type) {
  if ((int)type < 0 || type >= QV_ARROW_TYPE_COUNT) return "?";
  return type_names[type];
}

QvLayout qv_layout_of(QvArrowType t) {
  switch (t) {
    case QV_ARROW_NULL: return QV_LAYOUT_NULL;
    case QV_ARROW_BOOL: return QV_LAYOUT_BOOL;
    case QV_ARROW_BINARY:
    case QV_ARROW_STRING: return QV_LAYOUT_BINARY;
    case QV_ARROW_LARGE_BINARY:
    case QV_ARROW_LARGE_STRING: return QV_LAYOUT_LARGE_BINARY;
    case QV_ARROW_BINARY_VIEW:
    case QV_ARROW_STRING_VIEW: return QV_LAYOUT_VIEW;
    case QV_ARROW_LIST:
    case QV_ARROW_MAP: return QV_LAYOUT_LIST;
    case QV_ARROW_LARGE_LIST: return QV_LAYOUT_LARGE_LIST;
    case QV_ARROW_LIST_VIEW: return QV_LAYOUT_LIST_VIEW;
    case QV_ARROW_LARGE_LIST_VIEW: return QV_LAYOUT_LARGE_LIST_VIEW;
    case QV_ARROW_FIXED_SIZE_LIST: return QV_LAYOUT_FIXED_LIST;
    case QV_ARROW_STRUCT: return QV_LAYOUT_STRUCT;
    case QV_ARROW_SPARSE_UNION: return QV_LAYOUT_SPARSE_UNION;
    case QV_ARROW_DENSE_UNION: return QV_LAYOUT_DENSE_UNION;
    case QV_ARROW_RUN_END_ENCODED: return QV_LAYOUT_REE;
    default: return QV_LAYOUT_FIXED;
  }
}

bool qv_layout_has_validity(QvLayout l) {
  return l != QV_LAYOUT_NULL && l != QV_LAYOUT_SPARSE_UNION && l != QV_LAYOUT_DENSE_UNION &&
         l != QV_LAYOUT_REE;
}

int qv_layout_n_buffers(QvLayout l) {
  switch (l) {
    case QV_LAYOUT_NULL:
    case QV_LAYOUT_REE: return 0;
    case QV_LAYOUT_FIXED_LIST:
    case QV_LAYOUT_STRUCT:
    case QV_LAYOUT_SPARSE_UNION: return 1;
    case QV_LAYOUT_BINARY:
    case QV_LAYOUT_LARGE_BINARY:
    case QV_LAYOUT_LIST_VIEW:
    case QV_LAYOUT_LARGE_LIST_VIEW: return 3;
    default: return 2; /* bool, fixed, view (+ variadic), list, dense union */
  }
}

int qv_layout_offset_width(QvLayout l) {
  switch (l) {
    case QV_LAYOUT_BINARY:
    case QV_LAYOUT_LIST:
    case QV_LAYOUT_LIST_VIEW: return 4;
    case QV_LAYOUT_LARGE_BINARY:
    case QV_LAYOUT_LARGE_LIST:
    case QV_LAYOUT_LARGE_LIST_VIEW: return 8;
    default: return 0;
  }
}

/* ---- format strings */

/* Parses a non-negative decimal int32 at *p; advances *p. */
static bool parse_int(const char **p, int32_t *out) {
  const char *s = *p;
  if (*s < '0' || *s > '9') return false;
  int64_t v = 0;
  while (*s >= '0' && *s <= '9') {
    v = v * 10 + (*s - '0');
    if (v > INT32_MAX) return false;
    s++;
  }
  *p = s;
  *out = (int32_t)v;
  return true;
}

static QvStatus bad_format(const char *format, QvError *error, const char *why) {
  return qv_error_set(error, QV_EINVAL, "format string \"%.64s\": %s", format, why);
}

static int unit_of(char c) {
  switch (c) {
    case 's': return QV_TIME_SECOND;
    case 'm': return QV_TIME_MILLISECOND;
    case 'u': return QV_TIME_MICROSECOND;
    case 'n': return QV_TIME_NANOSECOND;
    default: return -1;
  }
}

static QvStatus parse_union(QvArrowSchemaView *v, const char *format, const char *p,
                            QvError *error) {
  int64_t n = 0;
  if (*p == '\0') {
    v->n_children = 0;
    return QV_OK;
  }
  for (;;) {
    int32_t code;
    if (!parse_int(&p, &code) || code > 127) return bad_format(format, error, "bad union type code");
    if (n >= 128) return bad_format(format, error, "more than 128 union members");
    if (v->union_child_index[code] != -1)
      return bad_format(format, error, "duplicate union type code");
    v->union_child_index[code] = (int8_t)n;
    v->union_type_ids[n++] = (int8_t)code;
    if (*p == '\0') break;
    if (*p != ',') return bad_format(format, error, "bad union type code list");
    p++;
  }
  v->n_children = n;
  return QV_OK;
}

static QvStatus parse_format(QvArrowSchemaView *v, const char *f, QvError *error) {
  size_t n = strlen(f);
  v->byte_width = 0;
  if (n == 1) {
    static const struct { char c; QvArrowType t; int32_t w; } simple[] = {
        {'n', QV_ARROW_NULL, 0},          {'b', QV_ARROW_BOOL, 0},
        {'c', QV_ARROW_INT8, 1},          {'C', QV_ARROW_UINT8, 1},
        {'s', QV_ARROW_INT16, 2},         {'S', QV_ARROW_UINT16, 2},
        {'i', QV_ARROW_INT32, 4},         {'I', QV_ARROW_UINT32, 4},
        {'l', QV_ARROW_INT64, 8},         {'L', QV_ARROW_UINT64, 8},
        {'e', QV_ARROW_FLOAT16, 2},    {'f', QV_ARROW_FLOAT32, 4},
        {'g', QV_ARROW_FLOAT64, 8},        {'z', QV_ARROW_BINARY, 0},
        {'Z', QV_ARROW_LARGE_BINARY, 0},  {'u', QV_ARROW_STRING, 0},
        {'U', QV_ARROW_LARGE_STRING, 0}};
    for (size_t i = 0; i < sizeof simple / sizeof simple[0]; i++)
      if (simple[i].c == f[0]) {
        v->type = v->storage_type = simple[i].t;
        v->byte_width = simple[i].w;
        return QV_OK;
      }
    return bad_format(f, error, "unknown type");
  }
  if (strcmp(f, "vz") == 0) {
    v->type = v->storage_type = QV_ARROW_BINARY_VIEW;
    return QV_OK;
  }
  if (strcmp(f, "vu") == 0) {
    v->type = v->storage_type = QV_ARROW_STRING_VIEW;
    return QV_OK;
  }
  if (f[0] == 'd' && f[1] == ':') {
    const char *p = f + 2;
    int32_t prec, scale, bw = 128;
    if (!parse_int(&p, &prec) || *p++ != ',') return bad_format(f, error, "bad decimal");
    bool neg = *p == '-';
    if (neg) p++;
    if (!parse_int(&p, &scale)) return bad_format(f, error, "bad decimal scale");
    if (neg) scale = -scale;
    if (*p == ',') {
      p++;
      if (!parse_int(&p, &bw)) return bad_format(f, error, "bad decimal bit width");
    }
    if (*p != '\0') return bad_format(f, error, "trailing characters");
    int32_t max_prec;
    switch (bw) {
      case 32: v->type = QV_ARROW_DECIMAL32; max_prec = 9; break;
      case 64: v->type = QV_ARROW_DECIMAL64; max_prec = 18; break;
      case 128: v->type = QV_ARROW_DECIMAL128; max_prec = 38; break;
      case 256: v->type = QV_ARROW_DECIMAL256; max_prec = 76; break;
      default: return bad_format(f, error, "decimal bit width is not 32, 64, 128 or 256");
    }
    if (prec < 1 || prec > max_prec) return bad_format(f, error, "decimal precision out of range");
    v->storage_type = v->type;
    v->decimal_precision = prec;
    v->decimal_scale = scale;
    v->decimal_bit_width = bw;
    v->byte_width = bw / 8;
    return QV_OK;
  }
  if (f[0] == 'w' && f[1] == ':') {
    const char *p = f + 2;
    int32_t w;
    if (!parse_int(&p, &w) || *p != '\0') return bad_format(f, error, "bad fixed-size binary width");
    v->type = v->storage_type = QV_ARROW_FIXED_SIZE_BINARY;
    v->byte_width = w;
    return QV_OK;
  }
  if (f[0] == 't') {
    if (f[1] == 'd' && n == 3 && (f[2] == 'D' || f[2] == 'm')) {
      v->type = f[2] == 'D' ? QV_ARROW_DATE32 : QV_ARROW_DATE64;
      v->storage_type = f[2] == 'D' ? QV_ARROW_INT32 : QV_ARROW_INT64;
      v->byte_width = f[2] == 'D' ? 4 : 8;
      return QV_OK;
    }
    if (f[1] == 't' && n == 3 && unit_of(f[2]) >= 0) {
      v->time_unit = unit_of(f[2]);
      bool t32 = v->time_unit <= QV_TIME_MILLISECOND;
      v->type = t32 ? QV_ARROW_TIME32 : QV_ARROW_TIME64;
      v->storage_type = t32 ? QV_ARROW_INT32 : QV_ARROW_INT64;
      v->byte_width = t32 ? 4 : 8;
      return QV_OK;
    }
    if (f[1] == 's' && n >= 4 && unit_of(f[2]) >= 0 && f[3] == ':') {
      v->time_unit = unit_of(f[2]);
      v->type = QV_ARROW_TIMESTAMP;
      v->storage_type = QV_ARROW_INT64;
      v->byte_width = 8;
      v->timezone = f + 4;
      v->timezone_len = n - 4;
      return QV_OK;
    }
    if (f[1] == 'D' && n == 3 && unit_of(f[2]) >= 0) {
      v->time_unit = unit_of(f[2]);
      v->type = QV_ARROW_DURATION;
      v->storage_type = QV_ARROW_INT64;
      v->byte_width = 8;
      return QV_OK;
    }
    if (f[1] == 'i' && n == 3) {
      switch (f[2]) {
        case 'M': v->type = QV_ARROW_INTERVAL_MONTHS; v->byte_width = 4; break;
        case 'D': v->type = QV_ARROW_INTERVAL_DAY_TIME; v->byte_width = 8; break;
        case 'n': v->type = QV_ARROW_INTERVAL_MONTH_DAY_NANO; v->byte_width = 16; break;
        default: return bad_format(f, error, "unknown interval unit");
      }
      v->storage_type = v->type;
      return QV_OK;
    }
    return bad_format(f, error, "unknown temporal type");
  }
  if (f[0] == '+') {
    QvArrowType t = QV_ARROW_NONE;
    if (strcmp(f, "+l") == 0) t = QV_ARROW_LIST;
    else if (strcmp(f, "+L") == 0) t = QV_ARROW_LARGE_LIST;
    else if (strcmp(f, "+vl") == 0) t = QV_ARROW_LIST_VIEW;
    else if (strcmp(f, "+vL") == 0) t = QV_ARROW_LARGE_LIST_VIEW;
    else if (strcmp(f, "+s") == 0) t = QV_ARROW_STRUCT;
    else if (strcmp(f, "+m") == 0) t = QV_ARROW_MAP;
    else if (strcmp(f, "+r") == 0) t = QV_ARROW_RUN_END_ENCODED;
    if (t != QV_ARROW_NONE) {
      v->type = v->storage_type = t;
      return QV_OK;
    }
    if (f[1] == 'w' && f[2] == ':') {
      const char *p = f + 3;
      int32_t size;
      if (!parse_int(&p, &size) || *p != '\0') return bad_format(f, error, "bad fixed-size list size");
      v->type = v->storage_type = QV_ARROW_FIXED_SIZE_LIST;
      v->fixed_size = size;
      return QV_OK;
    }
    if (f[1] == 'u' && (f[2] == 'd' || f[2] == 's') && f[3] == ':') {
      v->type = v->storage_type = f[2] == 'd' ? QV_ARROW_DENSE_UNION : QV_ARROW_SPARSE_UNION;
      return parse_union(v, f, f + 4, error);
    }
    return bad_format(f, error, "unknown nested type");
  }
  return bad_format(f, error, "unknown type");
}

static bool is_integer(QvArrowType t) { return t >= QV_ARROW_INT8 && t <= QV_ARROW_UINT64; }

QvStatus qv_arrow_schema_view_init(QvArrowSchemaView *v, const struct ArrowSchema *schema, QvError *error) {
  memset(v, 0, sizeof *v);
  memset(v->union_child_index, -1, sizeof v->union_child_index);
  if (schema == NULL || schema->release == NULL)
    return qv_error_set(error, QV_EARG, "schema is NULL or released");
  if (schema->format == NULL) return qv_error_set(error, QV_EINVAL, "schema has no format string");
  if (schema->n_children < 0 || (schema->n_children > 0 && schema->children == NULL))
    return qv_error_set(error, QV_EINVAL, "schema has %lld children but no child pointers",
                        (long long)schema->n_children);
  v->schema = schema;
  QvStatus st = parse_format(v, schema->format, error);
  if (st) return st;
  bool is_union = v->type == QV_ARROW_SPARSE_UNION || v->type == QV_ARROW_DENSE_UNION;
  int64_t want = -1;
  switch (v->type) {
    case QV_ARROW_LIST:
    case QV_ARROW_LARGE_LIST:
    case QV_ARROW_LIST_VIEW:
    case QV_ARROW_LARGE_LIST_VIEW:
    case QV_ARROW_FIXED_SIZE_LIST:
    case QV_ARROW_MAP: want = 1; break;
    case QV_ARROW_RUN_END_ENCODED: want = 2; break;
    case QV_ARROW_STRUCT: break;
    default: want = is_union ? v->n_children : 0;
  }
  if (want >= 0 && schema->n_children != want)
    return qv_error_set(error, QV_EINVAL, "type %s (\"%.64s\") needs %lld children, schema has %lld",
                        qv_arrow_type_name(v->type), schema->format, (long long)want,
                        (long long)schema->n_children);
  v->n_children = schema->n_children;
  for (int64_t i = 0; i < v->n_children; i++)
    if (schema->children[i] == NULL || schema->children[i]->release == NULL ||
        schema->children[i]->format == NULL)
      return qv_error_set(error, QV_EINVAL, "schema child %lld is missing or released",
                          (long long)i);
  if (v->type == QV_ARROW_MAP) {
    const struct ArrowSchema *e = schema->children[0];
    if (strcmp(e->format, "+s") != 0 || e->n_children != 2)
      return qv_error_set(error, QV_EINVAL, "map entries must be a struct of key and value");
    if (e->children[0] == NULL || e->children[0]->format == NULL)
      return qv_error_set(error, QV_EINVAL, "map key field is missing");
  }
  if (v->type == QV_ARROW_RUN_END_ENCODED) {
    const char *rf = schema->children[0]->format;
    if (strcmp(rf, "s") != 0 && strcmp(rf, "i") != 0 && strcmp(rf, "l") != 0)
      return qv_error_set(error, QV_EINVAL,
                          "run-end encoded run ends must be int16, int32 or int64, not \"%.16s\"",
                          rf);
  }
  if (schema->dictionary != NULL) {
    if (!is_integer(v->type))
      return qv_error_set(error, QV_EINVAL,
                          "dictionary index type must be an integer, not \"%.64s\"",
                          schema->format);
    if (schema->dictionary->release == NULL || schema->dictionary->format == NULL)
      return qv_error_set(error, QV_EINVAL, "schema dictionary is released");
    v->type = QV_ARROW_DICTIONARY;
  }
  const char *val;
  int32_t len;
  if (schema->metadata && qv_arrow_metadata_get(schema->metadata, "ARROW:extension:name", &val, &len)) {
    v->extension_name = val;
    v->extension_name_len = (size_t)len;
    if (qv_arrow_metadata_get(schema->metadata, "ARROW:extension:metadata", &val, &len)) {
      v->extension_metadata = val;
      v->extension_metadata_len = (size_t)len;
    }
  }
  return QV_OK;
}

static QvStatus validate_tree(const struct ArrowSchema *s, int depth, QvError *error) {
  if (depth > QV_ARRAY_MAX_DEPTH)
    return qv_error_set(error, QV_ELIMIT, "schema nested deeper than %d", QV_ARRAY_MAX_DEPTH);
  QvArrowSchemaView v;
  QvStatus st = qv_arrow_schema_view_init(&v, s, error);
  if (st) return st;
  for (int64_t i = 0; i < s->n_children; i++) {
    if ((st = validate_tree(s->children[i], depth + 1, error)))
      return qv_error_prefix(error, "child %lld (%.64s)", (long long)i,
                             s->children[i]->name ? s->children[i]->name : "");
  }
  if (s->dictionary && (st = validate_tree(s->dictionary, depth + 1, error)))
    return qv_error_prefix(error, "dictionary");
  return QV_OK;
}

QvStatus qv_arrow_schema_validate(const struct ArrowSchema *schema, QvError *error) {
  return validate_tree(schema, 0, error);
}

/* ---- metadata blobs */

void qv_arrow_metadata_iter_init(QvArrowMetadataIter *it, const char *metadata) {
  it->next = metadata;
  it->remaining = 0;
  if (metadata) {
    int32_t n;
    memcpy(&n, metadata, 4);
    it->remaining = n > 0 ? n : 0;
    it->next = metadata + 4;
  }
}

bool qv_arrow_metadata_iter_next(QvArrowMetadataIter *it, const char **key, int32_t *key_len,
                           const char **value, int32_t *value_len) {
  if (it->remaining <= 0) return false;
  memcpy(key_len, it->next, 4);
  *key = it->next + 4;
  it->next += 4 + (*key_len > 0 ? *key_len : 0);
  memcpy(value_len, it->next, 4);
  *value = it->next + 4;
  it->next += 4 + (*value_len > 0 ? *value_len : 0);
  it->remaining--;
  return true;
}

int64_t qv_arrow_metadata_size(const char *metadata) {
  if (metadata == NULL) return 0;
  QvArrowMetadataIter it;
  qv_arrow_metadata_iter_init(&it, metadata);
  const char *k, *v;
  int32_t kl, vl;
  while (qv_arrow_metadata_iter_next(&it, &k, &kl, &v, &vl)) {
  }
  return (int64_t)(it.next - metadata);
}

bool qv_arrow_metadata_get(const char *metadata, const char *key, const char **value,
                     int32_t *value_len) {
  QvArrowMetadataIter it;
  qv_arrow_metadata_iter_init(&it, metadata);
  const char *k, *v;
  int32_t kl, vl;
  size_t n = strlen(key);
  while (qv_arrow_metadata_iter_next(&it, &k, &kl, &v, &vl)) {
    if ((size_t)kl == n && memcmp(k, key, n) == 0) {
      *value = v;
      *value_len = vl;
      return true;
    }
  }
  return false;
}

/* ---- schemas made by quiver */

typedef struct SchemaPrivate {
  char *format;
  char *name;
  char *metadata;
} SchemaPrivate;

static void schema_release(struct ArrowSchema *s) {
  if (s == NULL || s->release == NULL) return;
  for (int64_t i = 0; i < s->n_children; i++) {
    struct ArrowSchema *c = s->children[i];
    if (c) {
      if (c->release) c->release(c);
      free(c);
    }
  }
  free(s->children);
  if (s->dictionary) {
    if (s->dictionary->release) s->dictionary->release(s->dictionary);
    free(s->dictionary);
  }
  SchemaPrivate *p = s->private_data;
  if (p) {
    free(p->format);
    free(p->name);
    free(p->metadata);
    free(p);
  }
  s->release = NULL;
}

static char *dup_str(const char *s) {
  size_t n = strlen(s);
  char *d = malloc(n + 1);
  if (d) memcpy(d, s, n + 1);
  return d;
}

QvStatus qv_arrow_schema_init(struct ArrowSchema *schema, const char *format, const char *name,
                        int64_t flags, int64_t n_children, QvError *error) {
  memset(schema, 0, sizeof *schema);
  if (format == NULL || n_children < 0 || n_children > (1 << 24))
    return qv_error_set(error, QV_EARG, "qv_arrow_schema_init: bad format or child count");
  SchemaPrivate *p = calloc(1, sizeof *p);
  if (p == NULL) return qv_error_set(error, QV_ENOMEM, "out of memory");
  schema->private_data = p;
  schema->release = schema_release;
  schema->flags = flags;
  p->format = dup_str(format);
  p->name = name ? dup_str(name) : NULL;
  if (p->format == NULL || (name && p->name == NULL)) goto nomem;
  schema->format = p->format;
  schema->name = p->name;
  if (n_children > 0) {
    schema->children = calloc((size_t)n_children, sizeof *schema->children);
    if (schema->children == NULL) goto nomem;
    schema->n_children = n_children;
    for (int64_t i = 0; i < n_children; i++) {
      schema->children[i] = calloc(1, sizeof(struct ArrowSchema));
      if (schema->children[i] == NULL) goto nomem;
    }
  }
  return QV_OK;
nomem:
  schema_release(schema);
  return qv_error_set(error, QV_ENOMEM, "out of memory");
}

QvStatus qv_arrow_schema_alloc_dictionary(struct ArrowSchema *schema, QvError *error) {
  if (schema->release != schema_release || schema->dictionary != NULL)
    return qv_error_set(error, QV_EARG, "dictionary already set or schema not made by quiver");
  schema->dictionary = calloc(1, sizeof *schema->dictionary);
  if (schema->dictionary == NULL) return qv_error_set(error, QV_ENOMEM, "out of memory");
  return QV_OK;
}

QvStatus qv_arrow_schema_add_metadata(struct ArrowSchema *schema, const char *key, size_t key_len,
                                const char *value, size_t value_len, QvError *error) {
  if (schema->release != schema_release)
    return qv_error_set(error, QV_EARG, "schema not made by quiver");
  if (key_len > INT32_MAX || value_len > INT32_MAX)
    return qv_error_set(error, QV_ELIMIT, "metadata key or value too long");
  SchemaPrivate *p = schema->private_data;
  int64_t old = qv_arrow_metadata_size(p->metadata);
  int32_t count = 0;
  if (p->metadata) memcpy(&count, p->metadata, 4);
  if (old == 0) old = 4;
  size_t add = 8 + key_len + value_len;
  char *m = realloc(p->metadata, (size_t)old + add);
  if (m == NULL) return qv_error_set(error, QV_ENOMEM, "out of memory");
  int32_t kl = (int32_t)key_len, vl = (int32_t)value_len;
  count++;
  memcpy(m, &count, 4);
  char *w = m + old;
  memcpy(w, &kl, 4);
  if (key_len) memcpy(w + 4, key, key_len);
  memcpy(w + 4 + key_len, &vl, 4);
  if (value_len) memcpy(w + 8 + key_len, value, value_len);
  p->metadata = m;
  schema->metadata = m;
  return QV_OK;
}

QvStatus qv_arrow_schema_set_metadata(struct ArrowSchema *schema, const char *metadata,
                                QvError *error) {
  if (schema->release != schema_release)
    return qv_error_set(error, QV_EARG, "schema not made by quiver");
  SchemaPrivate *p = schema->private_data;
  char *copy = NULL;
  int64_t n = qv_arrow_metadata_size(metadata);
  if (n > 0) {
    copy = malloc((size_t)n);
    if (copy == NULL) return qv_error_set(error, QV_ENOMEM, "out of memory");
    memcpy(copy, metadata, (size_t)n);
  }
  free(p->metadata);
  p->metadata = copy;
  schema->metadata = copy;
  return QV_OK;
}

static QvStatus copy_tree(const struct ArrowSchema *src, struct ArrowSchema *dst, int depth,
                          QvError *error) {
  if (depth > QV_ARRAY_MAX_DEPTH)
    return qv_error_set(error, QV_ELIMIT, "schema nested deeper than %d", QV_ARRAY_MAX_DEPTH);
  if (src == NULL || src->release == NULL || src->format == NULL)
    return qv_error_set(error, QV_EARG, "cannot copy a released schema");
  if (src->n_children < 0 || (src->n_children > 0 && src->children == NULL))
    return qv_error_set(error, QV_EINVAL, "schema has a bad child list");
  QvStatus st = qv_arrow_schema_init(dst, src->format, src->name, src->flags, src->n_children, error);
  if (st) return st;
  if (src->metadata && (st = qv_arrow_schema_set_metadata(dst, src->metadata, error))) goto fail;
  for (int64_t i = 0; i < src->n_children; i++)
    if ((st = copy_tree(src->children[i], dst->children[i], depth + 1, error))) goto fail;
  if (src->dictionary) {
    if ((st = qv_arrow_schema_alloc_dictionary(dst, error))) goto fail;
    if ((st = copy_tree(src->dictionary, dst->dictionary, depth + 1, error))) goto fail;
  }
  return QV_OK;
fail:
  dst->release(dst);
  return st;
}

QvStatus qv_arrow_schema_copy(const struct ArrowSchema *src, struct ArrowSchema *dst, QvError *error) {
  memset(dst, 0, sizeof *dst);
  return copy_tree(src, dst, 0, error);
}
