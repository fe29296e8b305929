/* qv_metadata_tool: the C half of the metadata interop test against the
 * apache-arrow npm package (tests/scripts/test_js_interop.sh).
 *
 *   qv_metadata_tool write DIR      encode the sample messages below with quiver:
 *                                   DIR/NAME.bin (Message FlatBuffer) and
 *                                   DIR/NAME.json (every value that was encoded)
 *   qv_metadata_tool dump FILE.bin  decode with quiver, print the same JSON shape
 *
 * The JSON shape is documented in tests/interop/README.md. The .json of `write`
 * is produced from the structs handed to the encoder, the output of `dump` from
 * the structs the decoder returned, through the same describe functions, so a
 * difference between the two is a difference in the values themselves. */
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "quiver/format.h"

/* ---------------------------------------------------------------- JSON --- */

/* Set when any JSON value could not be made (allocation, invalid UTF-8), so
 * that a partial description is never printed as if it were complete. */
static bool json_failed;

static void set(json_t *obj, const char *key, json_t *value) {
  if (value == NULL || json_object_set_new(obj, key, value) != 0) json_failed = true;
}

static void append(json_t *arr, json_t *value) {
  if (value == NULL || json_array_append_new(arr, value) != 0) json_failed = true;
}

/* 64-bit integers as decimal strings: JavaScript numbers would round them. */
static json_t *j_i64(int64_t v) {
  char buf[32];
  snprintf(buf, sizeof buf, "%" PRId64, v);
  return json_string(buf);
}

static json_t *j_str(const char *s, size_t len) { return s ? json_stringn(s, len) : json_null(); }

static json_t *j_i64_array(int64_t n, const int64_t *v) {
  json_t *a = json_array();
  for (int64_t i = 0; a && i < n; i++) append(a, j_i64(v[i]));
  return a;
}

/* Names as spelled in the .fbs files (and in the JS enums). */
static const char *const type_names[QV_TYPE_ID_COUNT] = {
    "NONE",     "Null",      "Int",           "FloatingPoint",   "Binary",       "Utf8",
    "Bool",     "Decimal",   "Date",          "Time",            "Timestamp",    "Interval",
    "List",     "Struct_",   "Union",         "FixedSizeBinary", "FixedSizeList", "Map",
    "Duration", "LargeBinary", "LargeUtf8",   "LargeList",       "RunEndEncoded", "BinaryView",
    "Utf8View", "ListView",  "LargeListView"};
static const char *const header_names[] = {"NONE",   "Schema",      "DictionaryBatch",
                                           "RecordBatch", "Tensor", "SparseTensor"};
/* the SparseTensorIndex member each QvSparseFormat is written as */
static const char *const sparse_index_names[] = {
    [QV_SPARSE_COO] = "SparseTensorIndexCOO", [QV_SPARSE_CSR] = "SparseMatrixIndexCSX",
    [QV_SPARSE_CSC] = "SparseMatrixIndexCSX", [QV_SPARSE_CSF] = "SparseTensorIndexCSF"};

static json_t *describe_int(QvIntType t) {
  json_t *o = json_object();
  set(o, "bitWidth", json_integer(t.bit_width));
  set(o, "isSigned", json_boolean(t.is_signed));
  return o;
}

static json_t *describe_type(const QvType *t) {
  if ((unsigned)t->id >= QV_TYPE_ID_COUNT) return NULL;
  json_t *o = json_object();
  set(o, "name", json_string(type_names[t->id]));
  switch (t->id) {
    case QV_TYPE_INT:
      set(o, "bitWidth", json_integer(t->u.int_.bit_width));
      set(o, "isSigned", json_boolean(t->u.int_.is_signed));
      break;
    case QV_TYPE_FLOATING_POINT:
      set(o, "precision", json_integer(t->u.floating_point.precision));
      break;
    case QV_TYPE_DECIMAL:
      set(o, "precision", json_integer(t->u.decimal.precision));
      set(o, "scale", json_integer(t->u.decimal.scale));
      set(o, "bitWidth", json_integer(t->u.decimal.bit_width));
      break;
    case QV_TYPE_DATE:
      set(o, "unit", json_integer(t->u.date.unit));
      break;
    case QV_TYPE_TIME:
      set(o, "unit", json_integer(t->u.time.unit));
      set(o, "bitWidth", json_integer(t->u.time.bit_width));
      break;
    case QV_TYPE_TIMESTAMP:
      set(o, "unit", json_integer(t->u.timestamp.unit));
      set(o, "timezone", j_str(t->u.timestamp.timezone, t->u.timestamp.timezone_len));
      break;
    case QV_TYPE_INTERVAL:
      set(o, "unit", json_integer(t->u.interval.unit));
      break;
    case QV_TYPE_DURATION:
      set(o, "unit", json_integer(t->u.duration.unit));
      break;
    case QV_TYPE_FIXED_SIZE_BINARY:
      set(o, "byteWidth", json_integer(t->u.fixed_size_binary.byte_width));
      break;
    case QV_TYPE_FIXED_SIZE_LIST:
      set(o, "listSize", json_integer(t->u.fixed_size_list.list_size));
      break;
    case QV_TYPE_MAP:
      set(o, "keysSorted", json_boolean(t->u.map.keys_sorted));
      break;
    case QV_TYPE_UNION: {
      set(o, "mode", json_integer(t->u.union_.mode));
      json_t *ids = json_null();
      if (t->u.union_.has_type_ids) {
        ids = json_array();
        for (int64_t i = 0; ids && i < t->u.union_.n_type_ids; i++)
          append(ids, json_integer(t->u.union_.type_ids[i]));
      }
      set(o, "typeIds", ids);
      break;
    }
    default:
      break;
  }
  return o;
}

static json_t *describe_metadata(int64_t n, const QvKeyValue *kv) {
  json_t *a = json_array();
  for (int64_t i = 0; a && i < n; i++) {
    json_t *o = json_object();
    set(o, "key", j_str(kv[i].key, kv[i].key_len));
    set(o, "value", j_str(kv[i].value, kv[i].value_len));
    append(a, o);
  }
  return a;
}

static json_t *describe_fields(int64_t n, const QvField *fields);

static json_t *describe_field(const QvField *f) {
  json_t *o = json_object();
  set(o, "name", j_str(f->name, f->name_len));
  set(o, "nullable", json_boolean(f->nullable));
  set(o, "type", describe_type(&f->type));
  json_t *dict = json_null();
  if (f->dictionary) {
    dict = json_object();
    set(dict, "id", j_i64(f->dictionary->id));
    set(dict, "indexType",
        f->dictionary->has_index_type ? describe_int(f->dictionary->index_type) : json_null());
    set(dict, "isOrdered", json_boolean(f->dictionary->is_ordered));
    set(dict, "dictionaryKind", json_integer(f->dictionary->kind));
  }
  set(o, "dictionary", dict);
  set(o, "children", describe_fields(f->n_children, f->children));
  set(o, "customMetadata", describe_metadata(f->n_metadata, f->metadata));
  return o;
}

static json_t *describe_fields(int64_t n, const QvField *fields) {
  json_t *a = json_array();
  for (int64_t i = 0; a && i < n; i++) append(a, describe_field(&fields[i]));
  return a;
}

static json_t *describe_schema(const QvSchema *s) {
  json_t *o = json_object();
  /* the wire value (Schema.fbs: Little 0, Big 1) */
  set(o, "endianness", json_integer(s->endianness == QV_ENDIAN_BIG ? 1 : 0));
  set(o, "fields", describe_fields(s->n_fields, s->fields));
  set(o, "customMetadata", describe_metadata(s->n_metadata, s->metadata));
  set(o, "features", j_i64_array(s->n_features, s->features));
  return o;
}

static json_t *describe_buffer(QvBuffer b) {
  json_t *o = json_object();
  set(o, "offset", j_i64(b.offset));
  set(o, "length", j_i64(b.length));
  return o;
}

static json_t *describe_buffers(int64_t n, const QvBuffer *b) {
  json_t *a = json_array();
  for (int64_t i = 0; a && i < n; i++) append(a, describe_buffer(b[i]));
  return a;
}

static json_t *describe_record_batch(const QvRecordBatch *rb) {
  json_t *o = json_object();
  set(o, "length", j_i64(rb->length));
  json_t *nodes = json_array();
  for (int64_t i = 0; nodes && i < rb->n_nodes; i++) {
    json_t *n = json_object();
    set(n, "length", j_i64(rb->nodes[i].length));
    set(n, "nullCount", j_i64(rb->nodes[i].null_count));
    append(nodes, n);
  }
  set(o, "nodes", nodes);
  set(o, "buffers", describe_buffers(rb->n_buffers, rb->buffers));
  json_t *comp = json_null();
  if (rb->compression != QV_COMPRESSION_NONE) {
    comp = json_object();
    /* the .fbs CompressionType number: LZ4_FRAME = 0, ZSTD = 1 */
    set(comp, "codec", json_integer(rb->compression == QV_COMPRESSION_ZSTD ? 1 : 0));
    set(comp, "method", json_integer(rb->method));
  }
  set(o, "compression", comp);
  set(o, "variadicBufferCounts",
      rb->has_variadic_buffer_counts
          ? j_i64_array(rb->n_variadic_buffer_counts, rb->variadic_buffer_counts)
          : json_null());
  return o;
}

static json_t *describe_shape(int64_t ndim, const QvTensorDim *shape) {
  json_t *a = json_array();
  for (int64_t i = 0; a && i < ndim; i++) {
    json_t *d = json_object();
    set(d, "size", j_i64(shape[i].size));
    set(d, "name", j_str(shape[i].name, shape[i].name_len));
    append(a, d);
  }
  return a;
}

static json_t *describe_tensor(const QvTensorMeta *t) {
  json_t *o = json_object();
  set(o, "type", describe_type(&t->type));
  set(o, "shape", describe_shape(t->ndim, t->shape));
  set(o, "strides", t->has_strides ? j_i64_array(t->n_strides, t->strides) : json_null());
  set(o, "data", describe_buffer(t->data));
  return o;
}

static json_t *describe_sparse_index(const QvSparseTensorMeta *t) {
  json_t *o = json_object();
  switch (t->format) {
    case QV_SPARSE_COO: {
      const QvSparseCOO *c = &t->index.coo;
      set(o, "indicesType", describe_int(c->indices_type));
      set(o, "indicesStrides",
          c->has_indices_strides ? j_i64_array(c->n_indices_strides, c->indices_strides)
                                 : json_null());
      set(o, "indicesBuffer", describe_buffer(c->indices_buffer));
      set(o, "isCanonical", json_boolean(c->is_canonical));
      break;
    }
    case QV_SPARSE_CSR:
    case QV_SPARSE_CSC: {
      const QvSparseCSX *c = &t->index.csx;
      set(o, "compressedAxis", json_integer(t->format == QV_SPARSE_CSC ? 1 : 0));
      set(o, "indptrType", describe_int(c->indptr_type));
      set(o, "indptrBuffer", describe_buffer(c->indptr_buffer));
      set(o, "indicesType", describe_int(c->indices_type));
      set(o, "indicesBuffer", describe_buffer(c->indices_buffer));
      break;
    }
    case QV_SPARSE_CSF: {
      const QvSparseCSF *c = &t->index.csf;
      set(o, "indptrType", describe_int(c->indptr_type));
      set(o, "indptrBuffers", describe_buffers(c->n_indptr_buffers, c->indptr_buffers));
      set(o, "indicesType", describe_int(c->indices_type));
      set(o, "indicesBuffers", describe_buffers(c->n_indices_buffers, c->indices_buffers));
      json_t *axes = json_array();
      for (int64_t i = 0; axes && i < c->n_axis_order; i++)
        append(axes, json_integer(c->axis_order[i]));
      set(o, "axisOrder", axes);
      break;
    }
    default:
      json_decref(o);
      return NULL;
  }
  return o;
}

static json_t *describe_sparse_tensor(const QvSparseTensorMeta *t) {
  json_t *o = json_object();
  set(o, "type", describe_type(&t->type));
  set(o, "shape", describe_shape(t->ndim, t->shape));
  set(o, "nonZeroLength", j_i64(t->non_zero_length));
  set(o, "sparseIndexType",
      t->format >= QV_SPARSE_COO && t->format <= QV_SPARSE_CSF
          ? json_string(sparse_index_names[t->format])
          : NULL);
  set(o, "sparseIndex", describe_sparse_index(t));
  set(o, "data", describe_buffer(t->data));
  return o;
}

static json_t *describe_message(const QvMessage *m) {
  json_t *o = json_object();
  set(o, "version", json_integer(m->version));
  set(o, "bodyLength", j_i64(m->body_length));
  set(o, "customMetadata", describe_metadata(m->n_metadata, m->metadata));
  json_t *h = NULL;
  switch (m->header_type) {
    case QV_HEADER_SCHEMA:
      h = describe_schema(&m->header.schema);
      break;
    case QV_HEADER_DICTIONARY_BATCH:
      h = json_object();
      set(h, "id", j_i64(m->header.dictionary_batch.id));
      set(h, "data", describe_record_batch(&m->header.dictionary_batch.data));
      set(h, "isDelta", json_boolean(m->header.dictionary_batch.is_delta));
      break;
    case QV_HEADER_RECORD_BATCH:
      h = describe_record_batch(&m->header.record_batch);
      break;
    case QV_HEADER_TENSOR:
      h = describe_tensor(&m->header.tensor);
      break;
    case QV_HEADER_SPARSE_TENSOR:
      h = describe_sparse_tensor(&m->header.sparse_tensor);
      break;
    default:
      break;
  }
  set(o, "headerType",
      m->header_type <= QV_HEADER_SPARSE_TENSOR ? json_string(header_names[m->header_type])
                                                : NULL);
  set(o, "header", h);
  return o;
}

/* Writes the description to `out`; false (with a message) when incomplete. */
static bool print_description(const QvMessage *m, FILE *out, const char *what) {
  json_failed = false;
  json_t *j = describe_message(m);
  bool ok = j != NULL && !json_failed;
  if (ok) ok = json_dumpf(j, out, JSON_INDENT(1) | JSON_SORT_KEYS) == 0 && fputc('\n', out) != EOF;
  json_decref(j);
  if (!ok) fprintf(stderr, "qv_metadata_tool: %s: could not describe the message as JSON\n", what);
  return ok;
}

/* ------------------------------------------------------------- samples --- */

#define NAME(s) .name = (s), .name_len = sizeof(s) - 1
#define KV(k, v) {.key = (k), .key_len = sizeof(k) - 1, .value = (v), .value_len = sizeof(v) - 1}
#define COUNT(a) ((int64_t)(sizeof(a) / sizeof((a)[0])))
#define T_INT(bw, s) {.id = QV_TYPE_INT, .u.int_ = {(bw), (s)}}
#define T_FP(p) {.id = QV_TYPE_FLOATING_POINT, .u.floating_point = {(p)}}
#define T_(id_) {.id = (id_)}
#define INT_T(bw, s) {(bw), (s)}

/* Schema with every Type member, nesting, metadata at each level. */
static const QvKeyValue md_temperature[] = {KV("unit", "\xc2\xb0" "C"), KV("origin", "sensor-7")};
static const QvKeyValue md_nested[] = {KV("depth", "2")};
static const QvKeyValue md_schema[] = {KV("writer", "quiver"), KV("purpose", "js interop"),
                                       KV("quote\"and\\slash", "line1\nline2\ttab")};
static const QvKeyValue md_message[] = {KV("message-level", "yes")};

static const QvField f_list_item[] = {{NAME("item"), .nullable = true, .type = T_INT(32, true)}};
static const QvField f_large_list_item[] = {{NAME("item"), .nullable = true, .type = T_(QV_TYPE_UTF8)}};
static const QvField f_inner_struct[] = {
    {NAME("c"), .nullable = false,
     .type = {.id = QV_TYPE_FIXED_SIZE_BINARY, .u.fixed_size_binary = {16}}},
    {NAME("d"), .nullable = true, .type = T_(QV_TYPE_NULL), .n_metadata = COUNT(md_nested),
     .metadata = md_nested}};
static const QvField f_struct[] = {
    {NAME("a"), .nullable = true, .type = T_(QV_TYPE_BOOL)},
    {NAME("b"), .nullable = true, .type = T_(QV_TYPE_STRUCT), .n_children = COUNT(f_inner_struct),
     .children = f_inner_struct}};
static const int32_t dense_type_ids[] = {5, 7, 2};
static const QvField f_dense_union[] = {
    {NAME("u_i64"), .nullable = true, .type = T_INT(64, true)},
    {NAME("u_str"), .nullable = true, .type = T_(QV_TYPE_UTF8)},
    {NAME("u_f32"), .nullable = true, .type = T_FP(QV_PRECISION_SINGLE)}};
static const QvField f_sparse_union[] = {
    {NAME("s_bool"), .nullable = true, .type = T_(QV_TYPE_BOOL)},
    {NAME("s_bin"), .nullable = true, .type = T_(QV_TYPE_BINARY)}};
static const QvField f_fsl_item[] = {{NAME("v"), .nullable = false, .type = T_FP(QV_PRECISION_SINGLE)}};
static const QvField f_map_kv[] = {{NAME("key"), .nullable = false, .type = T_(QV_TYPE_UTF8)},
                                   {NAME("value"), .nullable = true, .type = T_INT(64, true)}};
static const QvField f_map_entries[] = {{NAME("entries"), .nullable = false,
                                         .type = T_(QV_TYPE_STRUCT), .n_children = 2,
                                         .children = f_map_kv}};
static const QvField f_ree[] = {{NAME("run_ends"), .nullable = false, .type = T_INT(32, true)},
                                {NAME("values"), .nullable = true, .type = T_(QV_TYPE_UTF8)}};
static const QvField f_list_view_item[] = {{NAME("item"), .nullable = true, .type = T_INT(8, false)}};
static const QvField f_large_list_view_item[] = {
    {NAME("item"), .nullable = true, .type = T_(QV_TYPE_BINARY_VIEW)}};

static const QvField schema_types_fields[] = {
    {NAME("i8"), .nullable = true, .type = T_INT(8, true), .n_metadata = COUNT(md_temperature),
     .metadata = md_temperature},
    {NAME("u16"), .nullable = false, .type = T_INT(16, false)},
    {NAME("i32"), .nullable = true, .type = T_INT(32, true)},
    {NAME("u64"), .nullable = false, .type = T_INT(64, false)},
    {NAME("f16"), .nullable = true, .type = T_FP(QV_PRECISION_HALF)},
    {NAME("f32"), .nullable = true, .type = T_FP(QV_PRECISION_SINGLE)},
    {NAME("f64"), .nullable = true, .type = T_FP(QV_PRECISION_DOUBLE)},
    {NAME("utf8"), .nullable = true, .type = T_(QV_TYPE_UTF8)},
    {NAME("binary"), .nullable = true, .type = T_(QV_TYPE_BINARY)},
    {NAME("bool"), .nullable = false, .type = T_(QV_TYPE_BOOL)},
    {NAME("null"), .nullable = true, .type = T_(QV_TYPE_NULL)},
    {NAME("dec128"), .nullable = true,
     .type = {.id = QV_TYPE_DECIMAL, .u.decimal = {.precision = 38, .scale = 10, .bit_width = 128}}},
    {NAME("dec256"), .nullable = true,
     .type = {.id = QV_TYPE_DECIMAL, .u.decimal = {.precision = 76, .scale = -5, .bit_width = 256}}},
    {NAME("dec32"), .nullable = true,
     .type = {.id = QV_TYPE_DECIMAL, .u.decimal = {.precision = 9, .scale = 2, .bit_width = 32}}},
    {NAME("dec64"), .nullable = true,
     .type = {.id = QV_TYPE_DECIMAL, .u.decimal = {.precision = 18, .scale = 0, .bit_width = 64}}},
    {NAME("date_day"), .nullable = true, .type = {.id = QV_TYPE_DATE, .u.date = {QV_DATE_DAY}}},
    {NAME("date_ms"), .nullable = true, .type = {.id = QV_TYPE_DATE, .u.date = {QV_DATE_MILLISECOND}}},
    {NAME("time_s"), .nullable = true, .type = {.id = QV_TYPE_TIME, .u.time = {QV_TIME_SECOND, 32}}},
    {NAME("time_ms"), .nullable = true,
     .type = {.id = QV_TYPE_TIME, .u.time = {QV_TIME_MILLISECOND, 32}}},
    {NAME("time_ns"), .nullable = true,
     .type = {.id = QV_TYPE_TIME, .u.time = {QV_TIME_NANOSECOND, 64}}},
    {NAME("ts_tz"), .nullable = true,
     .type = {.id = QV_TYPE_TIMESTAMP,
              .u.timestamp = {QV_TIME_MICROSECOND, "Europe/Paris", sizeof("Europe/Paris") - 1}}},
    {NAME("ts_offset"), .nullable = true,
     .type = {.id = QV_TYPE_TIMESTAMP, .u.timestamp = {QV_TIME_SECOND, "+07:30", 6}}},
    {NAME("ts_naive"), .nullable = true,
     .type = {.id = QV_TYPE_TIMESTAMP, .u.timestamp = {QV_TIME_NANOSECOND, NULL, 0}}},
    {NAME("ts_empty_tz"), .nullable = true,
     .type = {.id = QV_TYPE_TIMESTAMP, .u.timestamp = {QV_TIME_MILLISECOND, "", 0}}},
    {NAME("iv_ym"), .nullable = true,
     .type = {.id = QV_TYPE_INTERVAL, .u.interval = {QV_INTERVAL_YEAR_MONTH}}},
    {NAME("iv_dt"), .nullable = true,
     .type = {.id = QV_TYPE_INTERVAL, .u.interval = {QV_INTERVAL_DAY_TIME}}},
    {NAME("iv_mdn"), .nullable = true,
     .type = {.id = QV_TYPE_INTERVAL, .u.interval = {QV_INTERVAL_MONTH_DAY_NANO}}},
    {NAME("dur_s"), .nullable = true, .type = {.id = QV_TYPE_DURATION, .u.duration = {QV_TIME_SECOND}}},
    {NAME("dur_ms"), .nullable = true,
     .type = {.id = QV_TYPE_DURATION, .u.duration = {QV_TIME_MILLISECOND}}},
    {NAME("dur_ns"), .nullable = true,
     .type = {.id = QV_TYPE_DURATION, .u.duration = {QV_TIME_NANOSECOND}}},
    {NAME("list"), .nullable = true, .type = T_(QV_TYPE_LIST), .n_children = 1,
     .children = f_list_item},
    {NAME("large_list"), .nullable = false, .type = T_(QV_TYPE_LARGE_LIST), .n_children = 1,
     .children = f_large_list_item},
    {NAME("struct"), .nullable = true, .type = T_(QV_TYPE_STRUCT), .n_children = COUNT(f_struct),
     .children = f_struct},
    {NAME("dense_union"), .nullable = false,
     .type = {.id = QV_TYPE_UNION,
              .u.union_ = {QV_UNION_DENSE, true, COUNT(dense_type_ids), dense_type_ids}},
     .n_children = COUNT(f_dense_union), .children = f_dense_union},
    {NAME("sparse_union"), .nullable = false,
     .type = {.id = QV_TYPE_UNION, .u.union_ = {QV_UNION_SPARSE, false, 0, NULL}},
     .n_children = COUNT(f_sparse_union), .children = f_sparse_union},
    {NAME("fsb"), .nullable = true, .type = {.id = QV_TYPE_FIXED_SIZE_BINARY, .u.fixed_size_binary = {16}}},
    {NAME("fsl"), .nullable = true, .type = {.id = QV_TYPE_FIXED_SIZE_LIST, .u.fixed_size_list = {4}},
     .n_children = 1, .children = f_fsl_item},
    {NAME("map"), .nullable = true, .type = {.id = QV_TYPE_MAP, .u.map = {true}}, .n_children = 1,
     .children = f_map_entries},
    {NAME("large_utf8"), .nullable = true, .type = T_(QV_TYPE_LARGE_UTF8)},
    {NAME("large_binary"), .nullable = true, .type = T_(QV_TYPE_LARGE_BINARY)},
    {NAME("ree"), .nullable = true, .type = T_(QV_TYPE_RUN_END_ENCODED), .n_children = 2,
     .children = f_ree},
    {NAME("binary_view"), .nullable = true, .type = T_(QV_TYPE_BINARY_VIEW)},
    {NAME("utf8_view"), .nullable = true, .type = T_(QV_TYPE_UTF8_VIEW)},
    {NAME("list_view"), .nullable = true, .type = T_(QV_TYPE_LIST_VIEW), .n_children = 1,
     .children = f_list_view_item},
    {NAME("large_list_view"), .nullable = true, .type = T_(QV_TYPE_LARGE_LIST_VIEW),
     .n_children = 1, .children = f_large_list_view_item},
};
static const int64_t schema_features[] = {QV_FEATURE_DICTIONARY_REPLACEMENT,
                                          QV_FEATURE_COMPRESSED_BODY};

/* Dictionary encodings, big endian, names and metadata with unusual strings. */
static const QvDictionaryEncoding dict_default = {.id = 0, .has_index_type = false,
                                                  .index_type = {32, true}, .is_ordered = false};
static const QvDictionaryEncoding dict_u8 = {.id = 1, .has_index_type = true,
                                             .index_type = {8, false}, .is_ordered = true};
static const QvDictionaryEncoding dict_i64 = {.id = INT64_C(9007199254740993),
                                              .has_index_type = true, .index_type = {64, true}};
static const QvDictionaryEncoding dict_nested = {.id = 3, .has_index_type = true,
                                                 .index_type = {16, true}, .is_ordered = true};
static const QvKeyValue md_odd[] = {
    KV("empty-value", ""),
    KV("", "empty-key"),
    KV("nul", "before\0after"),
    KV("unicode-\xe2\x98\x83", "\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e \xf0\x9f\x8e\x89"),
    {.key = "absent-value", .key_len = 12, .value = NULL, .value_len = 0},
    {.key = NULL, .key_len = 0, .value = "absent-key", .value_len = 10}};
static const QvField f_dict_list_item[] = {
    {NAME("item"), .nullable = true, .type = T_(QV_TYPE_LARGE_UTF8), .dictionary = &dict_nested}};
static const QvField schema_dict_fields[] = {
    {NAME("dict_default_index"), .nullable = true, .type = T_(QV_TYPE_UTF8),
     .dictionary = &dict_default},
    {NAME("dict_u8_ordered"), .nullable = false, .type = T_(QV_TYPE_UTF8), .dictionary = &dict_u8},
    {NAME("dict_i64_big_id"), .nullable = true, .type = T_(QV_TYPE_BINARY), .dictionary = &dict_i64,
     .n_metadata = COUNT(md_odd), .metadata = md_odd},
    {NAME("list_of_dict"), .nullable = true, .type = T_(QV_TYPE_LIST), .n_children = 1,
     .children = f_dict_list_item},
    {.name = NULL, .nullable = true, .type = T_INT(16, true)},
    {NAME("na\xc3\xafve \xe2\x98\x83 \xe6\x97\xa5\xe6\x9c\xac"), .nullable = false,
     .type = T_(QV_TYPE_BOOL)},
    {NAME(""), .nullable = false, .type = T_FP(QV_PRECISION_DOUBLE)},
};
static const QvKeyValue md_schema_dict[] = {KV("dictionaries", "4")};

/* Record batches and dictionary batches. */
static const QvFieldNode rb_nodes[] = {{INT64_C(5000000000), 3}, {10, 0}, {0, 0}, {7, 7}};
static const QvBuffer rb_buffers[] = {
    {0, 0}, {0, 64}, {64, 1024}, {1088, INT64_C(4294967296)}, {INT64_C(4294968384), 8}};
static const int64_t rb_variadic[] = {2, 0, INT64_C(9007199254740993)};
static const QvFieldNode rb2_nodes[] = {{1, 0}};
static const QvBuffer rb2_buffers[] = {{0, 8}, {8, 8}};
static const QvFieldNode db_nodes[] = {{3, 1}};
static const QvBuffer db_buffers[] = {{0, 8}, {8, 16}, {24, 40}};
static const int64_t db_variadic[] = {1};

/* Tensors. */
static const QvTensorDim tensor_shape[] = {{2, "batch", 5}, {3, "row", 3}, {4, "col", 3}};
static const int64_t tensor_strides[] = {96, 32, 8};
static const QvTensorDim tensor2_shape[] = {{5, NULL, 0}, {7, NULL, 0}};

/* Sparse tensors. */
static const QvTensorDim coo_shape[] = {{10, "x", 1}, {20, "y", 1}, {30, "z", 1}};
static const int64_t coo_strides[] = {24, 8};
static const QvTensorDim csx_shape[] = {{100, NULL, 0}, {200, "cols", 4}};
static const QvTensorDim csf_shape[] = {{4, "a", 1}, {5, "b", 1}, {6, "c", 1}, {7, "d", 1}};
static const QvBuffer csf_indptr[] = {{0, 24}, {64, 40}, {128, 72}};
static const QvBuffer csf_indices[] = {{192, 12}, {256, 20}, {320, 36}, {384, 36}};
static const int32_t csf_axis_order[] = {2, 0, 3, 1};

typedef struct Sample {
  const char *name;
  QvMessage msg;
} Sample;

static const Sample samples[] = {
    {"schema_types",
     {.version = QV_METADATA_V5, .header_type = QV_HEADER_SCHEMA,
      .header.schema = {.endianness = QV_ENDIAN_LITTLE, .n_fields = COUNT(schema_types_fields),
                        .fields = schema_types_fields, .n_metadata = COUNT(md_schema),
                        .metadata = md_schema, .n_features = COUNT(schema_features),
                        .features = schema_features},
      .n_metadata = COUNT(md_message), .metadata = md_message}},
    {"schema_dictionary",
     {.version = QV_METADATA_V5, .header_type = QV_HEADER_SCHEMA,
      .header.schema = {.endianness = QV_ENDIAN_BIG, .n_fields = COUNT(schema_dict_fields),
                        .fields = schema_dict_fields, .n_metadata = COUNT(md_schema_dict),
                        .metadata = md_schema_dict}}},
    {"schema_empty_v4",
     {.version = QV_METADATA_V4, .header_type = QV_HEADER_SCHEMA,
      .header.schema = {.endianness = QV_ENDIAN_LITTLE}}},
    {"record_batch_zstd",
     {.version = QV_METADATA_V5, .header_type = QV_HEADER_RECORD_BATCH,
      .header.record_batch = {.length = INT64_C(5000000000), .n_nodes = COUNT(rb_nodes),
                              .nodes = rb_nodes, .n_buffers = COUNT(rb_buffers),
                              .buffers = rb_buffers, .compression = QV_COMPRESSION_ZSTD,
                              .method = QV_COMPRESSION_METHOD_BUFFER,
                              .has_variadic_buffer_counts = true,
                              .n_variadic_buffer_counts = COUNT(rb_variadic),
                              .variadic_buffer_counts = rb_variadic},
      .body_length = INT64_C(4294968392), .n_metadata = COUNT(md_message), .metadata = md_message}},
    {"record_batch_lz4",
     {.version = QV_METADATA_V5, .header_type = QV_HEADER_RECORD_BATCH,
      .header.record_batch = {.length = 1, .n_nodes = COUNT(rb2_nodes), .nodes = rb2_nodes,
                              .n_buffers = COUNT(rb2_buffers), .buffers = rb2_buffers,
                              .compression = QV_COMPRESSION_LZ4_FRAME},
      .body_length = 16}},
    {"record_batch_plain_empty_variadic",
     {.version = QV_METADATA_V5, .header_type = QV_HEADER_RECORD_BATCH,
      .header.record_batch = {.length = 0, .has_variadic_buffer_counts = true}}},
    {"dictionary_batch_delta",
     {.version = QV_METADATA_V5, .header_type = QV_HEADER_DICTIONARY_BATCH,
      .header.dictionary_batch = {.id = 42,
                                  .data = {.length = 3, .n_nodes = COUNT(db_nodes),
                                           .nodes = db_nodes, .n_buffers = COUNT(db_buffers),
                                           .buffers = db_buffers, .compression = QV_COMPRESSION_ZSTD,
                                           .has_variadic_buffer_counts = true,
                                           .n_variadic_buffer_counts = COUNT(db_variadic),
                                           .variadic_buffer_counts = db_variadic},
                                  .is_delta = true},
      .body_length = 64}},
    {"dictionary_batch_replace",
     {.version = QV_METADATA_V4, .header_type = QV_HEADER_DICTIONARY_BATCH,
      .header.dictionary_batch = {.id = 0,
                                  .data = {.length = 1, .n_nodes = COUNT(rb2_nodes),
                                           .nodes = rb2_nodes, .n_buffers = COUNT(rb2_buffers),
                                           .buffers = rb2_buffers},
                                  .is_delta = false},
      .body_length = 16}},
    {"tensor_f64",
     {.version = QV_METADATA_V5, .header_type = QV_HEADER_TENSOR,
      .header.tensor = {.type = T_FP(QV_PRECISION_DOUBLE), .ndim = COUNT(tensor_shape),
                        .shape = tensor_shape, .has_strides = true,
                        .n_strides = COUNT(tensor_strides), .strides = tensor_strides,
                        .data = {0, 192}},
      .body_length = 192}},
    {"tensor_u16_unnamed",
     {.version = QV_METADATA_V5, .header_type = QV_HEADER_TENSOR,
      .header.tensor = {.type = T_INT(16, false), .ndim = COUNT(tensor2_shape),
                        .shape = tensor2_shape, .data = {64, 70}},
      .body_length = 136}},
    {"tensor_scalar_empty_strides",
     {.version = QV_METADATA_V5, .header_type = QV_HEADER_TENSOR,
      .header.tensor = {.type = T_(QV_TYPE_BOOL), .ndim = 0, .has_strides = true,
                        .data = {0, 1}},
      .body_length = 8}},
    {"sparse_coo",
     {.version = QV_METADATA_V5, .header_type = QV_HEADER_SPARSE_TENSOR,
      .header.sparse_tensor = {.type = T_FP(QV_PRECISION_DOUBLE), .ndim = COUNT(coo_shape),
                               .shape = coo_shape, .non_zero_length = 17,
                               .format = QV_SPARSE_COO,
                               .index.coo = {.indices_type = INT_T(64, true),
                                             .has_indices_strides = true,
                                             .n_indices_strides = COUNT(coo_strides),
                                             .indices_strides = coo_strides,
                                             .indices_buffer = {0, 408},
                                             .is_canonical = true},
                               .data = {448, 136}},
      .body_length = 584}},
    {"sparse_csr",
     {.version = QV_METADATA_V5, .header_type = QV_HEADER_SPARSE_TENSOR,
      .header.sparse_tensor = {.type = T_FP(QV_PRECISION_SINGLE), .ndim = COUNT(csx_shape),
                               .shape = csx_shape, .non_zero_length = 55,
                               .format = QV_SPARSE_CSR,
                               .index.csx = {.indptr_type = INT_T(32, true),
                                             .indptr_buffer = {0, 404},
                                             .indices_type = INT_T(64, true),
                                             .indices_buffer = {448, 440}},
                               .data = {896, 220}},
      .body_length = 1152}},
    {"sparse_csc",
     {.version = QV_METADATA_V5, .header_type = QV_HEADER_SPARSE_TENSOR,
      .header.sparse_tensor = {.type = T_INT(32, true), .ndim = COUNT(csx_shape),
                               .shape = csx_shape, .non_zero_length = 9,
                               .format = QV_SPARSE_CSC,
                               .index.csx = {.indptr_type = INT_T(64, true),
                                             .indptr_buffer = {0, 1608},
                                             .indices_type = INT_T(16, false),
                                             .indices_buffer = {1664, 18}},
                               .data = {1728, 36}},
      .body_length = 1792}},
    {"sparse_csf",
     {.version = QV_METADATA_V5, .header_type = QV_HEADER_SPARSE_TENSOR,
      .header.sparse_tensor = {.type = T_INT(8, true), .ndim = COUNT(csf_shape),
                               .shape = csf_shape, .non_zero_length = 9,
                               .format = QV_SPARSE_CSF,
                               .index.csf = {.indptr_type = INT_T(64, true),
                                             .n_indptr_buffers = COUNT(csf_indptr),
                                             .indptr_buffers = csf_indptr,
                                             .indices_type = INT_T(32, true),
                                             .n_indices_buffers = COUNT(csf_indices),
                                             .indices_buffers = csf_indices,
                                             .n_axis_order = COUNT(csf_axis_order),
                                             .axis_order = csf_axis_order},
                               .data = {448, 9}},
      .body_length = 512}},
};

/* ------------------------------------------------------------ commands --- */

static bool write_file(const char *path, const uint8_t *data, size_t size) {
  FILE *f = fopen(path, "wb");
  if (f == NULL) {
    fprintf(stderr, "qv_metadata_tool: cannot create %s: %s\n", path, strerror(errno));
    return false;
  }
  bool ok = fwrite(data, 1, size, f) == size;
  if (fclose(f) != 0) ok = false;
  if (!ok) fprintf(stderr, "qv_metadata_tool: cannot write %s\n", path);
  return ok;
}

static int cmd_write(const char *dir) {
  if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
    fprintf(stderr, "qv_metadata_tool: cannot create directory %s: %s\n", dir, strerror(errno));
    return 1;
  }
  char path[4096];
  for (size_t i = 0; i < sizeof samples / sizeof samples[0]; i++) {
    const Sample *s = &samples[i];
    uint8_t *bytes = NULL;
    size_t size = 0;
    QvError err;
    qv_error_clear(&err);
    if (qv_message_encode(&s->msg, &bytes, &size, &err) != QV_OK) {
      fprintf(stderr, "qv_metadata_tool: encoding %s failed: %s\n", s->name, err.message);
      return 1;
    }
    snprintf(path, sizeof path, "%s/%s.bin", dir, s->name);
    bool ok = write_file(path, bytes, size);
    free(bytes);
    if (!ok) return 1;
    snprintf(path, sizeof path, "%s/%s.json", dir, s->name);
    FILE *f = fopen(path, "w");
    if (f == NULL) {
      fprintf(stderr, "qv_metadata_tool: cannot create %s: %s\n", path, strerror(errno));
      return 1;
    }
    ok = print_description(&s->msg, f, s->name);
    if (fclose(f) != 0) ok = false;
    if (!ok) return 1;
  }
  printf("wrote %zu messages to %s\n", sizeof samples / sizeof samples[0], dir);
  return 0;
}

static uint8_t *read_file(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  if (f == NULL) {
    fprintf(stderr, "qv_metadata_tool: cannot open %s: %s\n", path, strerror(errno));
    return NULL;
  }
  size_t cap = 4096, len = 0;
  uint8_t *buf = malloc(cap);
  while (buf) {
    len += fread(buf + len, 1, cap - len, f);
    if (len < cap) break;
    uint8_t *bigger = realloc(buf, cap * 2);
    if (bigger == NULL) {
      free(buf);
      buf = NULL;
    } else {
      buf = bigger;
      cap *= 2;
    }
  }
  bool failed = buf == NULL || ferror(f);
  fclose(f);
  if (failed) {
    fprintf(stderr, "qv_metadata_tool: cannot read %s\n", path);
    free(buf);
    return NULL;
  }
  *size = len;
  return buf;
}

static int cmd_dump(const char *path) {
  size_t size = 0;
  uint8_t *bytes = read_file(path, &size);
  if (bytes == NULL) return 1;
  QvMessage msg;
  QvError err;
  qv_error_clear(&err);
  QvStatus st = qv_message_decode(bytes, size, NULL, &msg, &err);
  free(bytes);
  if (st != QV_OK) {
    fprintf(stderr, "qv_metadata_tool: %s: decode failed (%s): %s\n", path, qv_status_name(st),
            err.message);
    return 1;
  }
  bool ok = print_description(&msg, stdout, path);
  qv_message_reset(&msg);
  if (fflush(stdout) != 0) ok = false;
  return ok ? 0 : 1;
}

int main(int argc, char **argv) {
  if (argc == 3 && strcmp(argv[1], "write") == 0) return cmd_write(argv[2]);
  if (argc == 3 && strcmp(argv[1], "dump") == 0) return cmd_dump(argv[2]);
  fprintf(stderr, "usage: qv_metadata_tool write DIR | dump FILE.bin\n");
  return 2;
}
