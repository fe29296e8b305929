/* Round trips of every table kind and every Type union member through
 * qv_message_encode / qv_message_decode (and the footer pair): the decoded
 * value must equal the original field by field, and re-encoding the decoded
 * value must give byte-identical output. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "quiver/format.h"
#include "test_util.h"
#include "util/load.h"

#define N(a) ((int64_t)(sizeof(a) / sizeof((a)[0])))
#define S(str) str, sizeof(str) - 1

/* With QV_FORMAT_DUMP_DIR set, every encoded message is also written there
 * (rt_NNN.fb): that is how fuzz/corpus/fuzz_message/ got its synthetic seeds,
 * and how the bytes were cross-checked with `flatc --json --raw-binary`. */
static void dump(const uint8_t *buf, size_t size) {
  static int counter;
  const char *dir = getenv("QV_FORMAT_DUMP_DIR");
  if (dir == NULL) return;
  char path[4096];
  snprintf(path, sizeof path, "%s/rt_%03d.fb", dir, counter++);
  FILE *f = fopen(path, "wb");
  assert_non_null(f);
  assert_int_equal(fwrite(buf, 1, size, f), size);
  fclose(f);
}

/* Encodes, decodes, compares, re-encodes; the decoded message is returned in
 * *out (release it) so callers can check values against literals too. */
static void roundtrip_into(const QvMessage *m, QvMessage *out) {
  uint8_t *b1 = NULL, *b2 = NULL;
  size_t n1 = 0, n2 = 0;
  QvError e;
  QvStatus st = qv_message_encode(m, &b1, &n1, &e);
  if (st) fail_msg("encode: %s", e.message);
  dump(b1, n1);
  st = qv_message_decode(b1, n1, NULL, out, &e);
  if (st) fail_msg("decode: %s", e.message);
  char where[512];
  if (!qv_message_equal(m, out, where, sizeof where)) fail_msg("decoded differs at %s", where);
  st = qv_message_encode(out, &b2, &n2, &e);
  if (st) fail_msg("re-encode: %s", e.message);
  assert_int_equal(n1, n2);
  assert_memory_equal(b1, b2, n1);
  /* and a third time from the re-encoded bytes */
  QvMessage again;
  assert_int_equal(qv_message_decode(b2, n2, NULL, &again, &e), QV_OK);
  assert_true(qv_message_equal(out, &again, where, sizeof where));
  qv_message_reset(&again);
  free(b1);
  free(b2);
}

static QvMessage schema_message(int64_t n, const QvField *fields) {
  QvMessage m;
  memset(&m, 0, sizeof m);
  m.version = QV_METADATA_V5;
  m.header_type = QV_HEADER_SCHEMA;
  m.header.schema.n_fields = n;
  m.header.schema.fields = fields;
  return m;
}

static QvType int_type(int32_t bw, bool is_signed) {
  QvType t;
  memset(&t, 0, sizeof t);
  t.id = QV_TYPE_INT;
  t.u.int_.bit_width = bw;
  t.u.int_.is_signed = is_signed;
  return t;
}

static QvIntType int_of(int32_t bw, bool is_signed) {
  QvIntType t = {bw, is_signed};
  return t;
}

static QvType simple_type(QvTypeId id) {
  QvType t;
  memset(&t, 0, sizeof t);
  t.id = id;
  return t;
}

static QvField leaf(const char *name, QvType t) {
  QvField f;
  memset(&f, 0, sizeof f);
  f.name = name;
  f.name_len = strlen(name);
  f.nullable = true;
  f.type = t;
  return f;
}

/* Every parameterless member and every parameter variant of the others,
 * each alone in a schema. */
static void test_every_type_alone(void **state) {
  (void)state;
  QvType types[128];
  int n = 0;
  static const QvTypeId plain[] = {
      QV_TYPE_NULL,        QV_TYPE_BINARY,          QV_TYPE_UTF8,       QV_TYPE_BOOL,
      QV_TYPE_LIST,        QV_TYPE_STRUCT,          QV_TYPE_LARGE_BINARY, QV_TYPE_LARGE_UTF8,
      QV_TYPE_LARGE_LIST,  QV_TYPE_RUN_END_ENCODED, QV_TYPE_BINARY_VIEW, QV_TYPE_UTF8_VIEW,
      QV_TYPE_LIST_VIEW,   QV_TYPE_LARGE_LIST_VIEW};
  for (size_t i = 0; i < sizeof plain / sizeof plain[0]; i++) types[n++] = simple_type(plain[i]);
  static const int32_t widths[] = {8, 16, 32, 64};
  for (int i = 0; i < 4; i++) {
    types[n++] = int_type(widths[i], true);
    types[n++] = int_type(widths[i], false);
  }
  for (int16_t p = QV_PRECISION_HALF; p <= QV_PRECISION_DOUBLE; p++) {
    types[n] = simple_type(QV_TYPE_FLOATING_POINT);
    types[n++].u.floating_point.precision = p;
  }
  static const int32_t dec[][3] = {{9, 2, 32}, {18, -3, 64}, {38, 10, 128}, {76, 0, 256},
                                   {1, 0, 128}};
  for (int i = 0; i < 5; i++) {
    types[n] = simple_type(QV_TYPE_DECIMAL);
    types[n].u.decimal.precision = dec[i][0];
    types[n].u.decimal.scale = dec[i][1];
    types[n++].u.decimal.bit_width = dec[i][2];
  }
  for (int16_t u = QV_DATE_DAY; u <= QV_DATE_MILLISECOND; u++) {
    types[n] = simple_type(QV_TYPE_DATE);
    types[n++].u.date.unit = u;
  }
  for (int16_t u = QV_TIME_SECOND; u <= QV_TIME_NANOSECOND; u++) {
    types[n] = simple_type(QV_TYPE_TIME);
    types[n].u.time.unit = u;
    types[n++].u.time.bit_width = u <= QV_TIME_MILLISECOND ? 32 : 64;
    types[n] = simple_type(QV_TYPE_TIMESTAMP);
    types[n++].u.timestamp.unit = u;
    types[n] = simple_type(QV_TYPE_TIMESTAMP);
    types[n].u.timestamp.unit = u;
    types[n].u.timestamp.timezone = "America/New_York";
    types[n++].u.timestamp.timezone_len = strlen("America/New_York");
    types[n] = simple_type(QV_TYPE_DURATION);
    types[n++].u.duration.unit = u;
  }
  /* an empty timezone is distinct from none */
  types[n] = simple_type(QV_TYPE_TIMESTAMP);
  types[n].u.timestamp.unit = QV_TIME_MICROSECOND;
  types[n].u.timestamp.timezone = "";
  types[n++].u.timestamp.timezone_len = 0;
  for (int16_t u = QV_INTERVAL_YEAR_MONTH; u <= QV_INTERVAL_MONTH_DAY_NANO; u++) {
    types[n] = simple_type(QV_TYPE_INTERVAL);
    types[n++].u.interval.unit = u;
  }
  static const int32_t ids[] = {5, 7, 2147483647};
  for (int16_t mode = QV_UNION_SPARSE; mode <= QV_UNION_DENSE; mode++) {
    types[n] = simple_type(QV_TYPE_UNION);
    types[n++].u.union_.mode = mode;
    types[n] = simple_type(QV_TYPE_UNION);
    types[n].u.union_.mode = mode;
    types[n].u.union_.has_type_ids = true;
    types[n].u.union_.n_type_ids = 3;
    types[n++].u.union_.type_ids = ids;
    types[n] = simple_type(QV_TYPE_UNION); /* present but empty typeIds */
    types[n].u.union_.mode = mode;
    types[n++].u.union_.has_type_ids = true;
  }
  static const int32_t sizes[] = {0, 1, 16, 2147483647};
  for (int i = 0; i < 4; i++) {
    types[n] = simple_type(QV_TYPE_FIXED_SIZE_BINARY);
    types[n++].u.fixed_size_binary.byte_width = sizes[i];
    types[n] = simple_type(QV_TYPE_FIXED_SIZE_LIST);
    types[n++].u.fixed_size_list.list_size = sizes[i];
  }
  types[n] = simple_type(QV_TYPE_MAP);
  types[n++].u.map.keys_sorted = false;
  types[n] = simple_type(QV_TYPE_MAP);
  types[n++].u.map.keys_sorted = true;
  assert_true(n <= 128);

  for (int i = 0; i < n; i++) {
    QvField f = leaf("x", types[i]);
    QvMessage m = schema_message(1, &f);
    QvMessage d;
    roundtrip_into(&m, &d);
    assert_int_equal(d.header_type, QV_HEADER_SCHEMA);
    assert_int_equal(d.header.schema.n_fields, 1);
    assert_true(qv_type_equal(&d.header.schema.fields[0].type, &types[i]));
    qv_message_reset(&d);
  }
}

/* A schema exercising nesting, dictionaries, metadata, features and Big
 * endianness, with literal checks on the decoded values. */
static void test_nested_schema(void **state) {
  (void)state;
  static const QvKeyValue field_md[] = {{S("k1"), S("v1")}, {S("empty"), S("")},
                                        {S("no value"), NULL, 0}};
  static const QvKeyValue schema_md[] = {{S("ARROW:extension:name"), S("quiver.test")}};
  static const QvKeyValue msg_md[] = {{NULL, 0, S("keyless")}, {S("utf8 \xc3\xa9"), S("\xe2\x82\xac")}};
  static const int64_t features[] = {QV_FEATURE_DICTIONARY_REPLACEMENT,
                                     QV_FEATURE_COMPRESSED_BODY};

  QvDictionaryEncoding dict_plain = {7, false, {0, false}, false, QV_DICTIONARY_KIND_DENSE_ARRAY};
  QvDictionaryEncoding dict_typed = {-1, true, {8, false}, true, QV_DICTIONARY_KIND_DENSE_ARRAY};
  QvDictionaryEncoding dict_i64 = {INT64_MAX, true, {64, true}, false, 0};

  QvField struct_kids[3];
  struct_kids[0] = leaf("a", int_type(32, true));
  struct_kids[1] = leaf("b", simple_type(QV_TYPE_UTF8));
  struct_kids[1].nullable = false;
  struct_kids[1].dictionary = &dict_typed;
  struct_kids[2] = leaf("", simple_type(QV_TYPE_BOOL)); /* empty name */
  struct_kids[2].n_metadata = N(field_md);
  struct_kids[2].metadata = field_md;

  QvField list_item = leaf("item", int_type(64, true));
  QvField entries_kids[2] = {leaf("key", simple_type(QV_TYPE_UTF8)),
                             leaf("value", simple_type(QV_TYPE_FLOATING_POINT))};
  entries_kids[0].nullable = false;
  entries_kids[1].type.u.floating_point.precision = QV_PRECISION_DOUBLE;
  QvField entries = leaf("entries", simple_type(QV_TYPE_STRUCT));
  entries.nullable = false;
  entries.n_children = 2;
  entries.children = entries_kids;
  QvField ree_kids[2] = {leaf("run_ends", int_type(32, true)),
                         leaf("values", simple_type(QV_TYPE_UTF8_VIEW))};
  static const int32_t union_ids[] = {3, 9};
  QvField union_kids[2] = {leaf("i", int_type(16, false)), leaf("s", simple_type(QV_TYPE_BINARY_VIEW))};
  QvType union_t = simple_type(QV_TYPE_UNION);
  union_t.u.union_.mode = QV_UNION_DENSE;
  union_t.u.union_.has_type_ids = true;
  union_t.u.union_.n_type_ids = 2;
  union_t.u.union_.type_ids = union_ids;

  QvField deep_leaf = leaf("deep", simple_type(QV_TYPE_NULL));
  deep_leaf.name = NULL; /* absent name */
  deep_leaf.name_len = 0;
  QvField deep_list = leaf("l", simple_type(QV_TYPE_LARGE_LIST_VIEW));
  deep_list.n_children = 1;
  deep_list.children = &deep_leaf;

  QvField fields[8];
  fields[0] = leaf("st", simple_type(QV_TYPE_STRUCT));
  fields[0].n_children = 3;
  fields[0].children = struct_kids;
  fields[1] = leaf("list", simple_type(QV_TYPE_LIST));
  fields[1].n_children = 1;
  fields[1].children = &list_item;
  fields[2] = leaf("map", simple_type(QV_TYPE_MAP));
  fields[2].type.u.map.keys_sorted = true;
  fields[2].n_children = 1;
  fields[2].children = &entries;
  fields[3] = leaf("ree", simple_type(QV_TYPE_RUN_END_ENCODED));
  fields[3].n_children = 2;
  fields[3].children = ree_kids;
  fields[4] = leaf("u", union_t);
  fields[4].n_children = 2;
  fields[4].children = union_kids;
  fields[5] = leaf("dict", int_type(16, true));
  fields[5].dictionary = &dict_plain;
  fields[6] = leaf("dict64", simple_type(QV_TYPE_LARGE_UTF8));
  fields[6].dictionary = &dict_i64;
  fields[6].n_metadata = 1;
  fields[6].metadata = schema_md;
  fields[7] = leaf("lv", simple_type(QV_TYPE_LIST_VIEW));
  fields[7].n_children = 1;
  fields[7].children = &deep_list;

  QvMessage m = schema_message(N(fields), fields);
  m.header.schema.endianness = QV_ENDIAN_BIG;
  m.header.schema.n_metadata = N(schema_md);
  m.header.schema.metadata = schema_md;
  m.header.schema.n_features = N(features);
  m.header.schema.features = features;
  m.n_metadata = N(msg_md);
  m.metadata = msg_md;

  QvMessage d;
  roundtrip_into(&m, &d);
  const QvSchema *s = &d.header.schema;
  assert_int_equal(d.version, QV_METADATA_V5);
  assert_int_equal(s->endianness, QV_ENDIAN_BIG);
  assert_int_equal(s->n_fields, 8);
  assert_int_equal(s->n_features, 2);
  assert_int_equal(s->features[1], QV_FEATURE_COMPRESSED_BODY);
  assert_string_equal(s->metadata[0].key, "ARROW:extension:name");
  assert_string_equal(s->metadata[0].value, "quiver.test");
  assert_null(d.metadata[0].key);
  assert_string_equal(d.metadata[0].value, "keyless");
  const QvField *st = &s->fields[0];
  assert_string_equal(st->name, "st");
  assert_int_equal(st->type.id, QV_TYPE_STRUCT);
  assert_int_equal(st->n_children, 3);
  assert_false(st->children[1].nullable);
  assert_non_null(st->children[1].dictionary);
  assert_true(st->children[1].dictionary->is_ordered);
  assert_int_equal(st->children[1].dictionary->id, -1);
  assert_int_equal(st->children[1].dictionary->index_type.bit_width, 8);
  assert_false(st->children[1].dictionary->index_type.is_signed);
  assert_non_null(st->children[2].name);
  assert_int_equal(st->children[2].name_len, 0);
  assert_int_equal(st->children[2].n_metadata, 3);
  assert_string_equal(st->children[2].metadata[1].value, "");
  assert_null(st->children[2].metadata[2].value);
  /* absent indexType decodes as signed 32-bit */
  const QvDictionaryEncoding *de = s->fields[5].dictionary;
  assert_non_null(de);
  assert_false(de->has_index_type);
  assert_int_equal(de->index_type.bit_width, 32);
  assert_true(de->index_type.is_signed);
  assert_int_equal(de->id, 7);
  assert_int_equal(s->fields[6].dictionary->id, INT64_MAX);
  assert_int_equal(s->fields[4].type.u.union_.type_ids[1], 9);
  assert_int_equal(s->fields[4].type.u.union_.mode, QV_UNION_DENSE);
  assert_null(s->fields[7].children[0].children[0].name);
  assert_int_equal(s->fields[7].children[0].type.id, QV_TYPE_LARGE_LIST_VIEW);
  assert_null(s->fields[1].dictionary);
  qv_message_reset(&d);
}

static void test_empty_schema(void **state) {
  (void)state;
  QvMessage m = schema_message(0, NULL);
  QvMessage d;
  roundtrip_into(&m, &d);
  assert_int_equal(d.header.schema.n_fields, 0);
  assert_null(d.header.schema.fields);
  /* NATIVE is written as the host's order, so a big-endian host reads BIG. */
  assert_int_equal(d.header.schema.endianness, QV_HOST_BIG_ENDIAN ? QV_ENDIAN_BIG : QV_ENDIAN_LITTLE);
  qv_message_reset(&d);
}

static void test_versions_and_body_length(void **state) {
  (void)state;
  static const int64_t lengths[] = {0, 1, 8, 123456789, INT64_MAX};
  for (int16_t v = QV_METADATA_V1; v <= QV_METADATA_V5; v++) {
    for (int i = 0; i < 5; i++) {
      QvMessage m;
      memset(&m, 0, sizeof m);
      m.version = v;
      m.header_type = QV_HEADER_RECORD_BATCH;
      m.body_length = lengths[i];
      m.header.record_batch.length = 3;
      QvMessage d;
      roundtrip_into(&m, &d);
      assert_int_equal(d.version, v);
      assert_int_equal(d.body_length, lengths[i]);
      assert_int_equal(d.header.record_batch.length, 3);
      qv_message_reset(&d);
    }
  }
}

static void test_record_batch(void **state) {
  (void)state;
  static const QvFieldNode nodes[] = {{5, 1}, {0, 0}, {INT64_MAX, INT64_MAX}};
  static const QvBuffer buffers[] = {{0, 8}, {8, 0}, {64, 4096}, {0, 0}};
  static const int64_t variadic[] = {2, 0, 7};
  for (int variant = 0; variant < 6; variant++) {
    QvMessage m;
    memset(&m, 0, sizeof m);
    m.version = QV_METADATA_V5;
    m.header_type = QV_HEADER_RECORD_BATCH;
    m.body_length = 4160;
    QvRecordBatch *rb = &m.header.record_batch;
    rb->length = 5;
    rb->n_nodes = N(nodes);
    rb->nodes = nodes;
    rb->n_buffers = N(buffers);
    rb->buffers = buffers;
    if (variant == 1 || variant == 2) {
      rb->compression = variant == 1 ? QV_COMPRESSION_LZ4_FRAME : QV_COMPRESSION_ZSTD;
      rb->method = QV_COMPRESSION_METHOD_BUFFER;
    }
    if (variant == 3) {
      rb->has_variadic_buffer_counts = true;
      rb->n_variadic_buffer_counts = N(variadic);
      rb->variadic_buffer_counts = variadic;
    }
    if (variant == 4) rb->has_variadic_buffer_counts = true; /* present, empty */
    if (variant == 5) {                                       /* nothing at all */
      rb->n_nodes = 0;
      rb->nodes = NULL;
      rb->n_buffers = 0;
      rb->buffers = NULL;
      rb->length = 0;
    }
    QvMessage d;
    roundtrip_into(&m, &d);
    const QvRecordBatch *r = &d.header.record_batch;
    assert_int_equal(r->compression, variant == 1   ? QV_COMPRESSION_LZ4_FRAME
                                     : variant == 2 ? QV_COMPRESSION_ZSTD
                                                    : QV_COMPRESSION_NONE);
    assert_int_equal(r->has_variadic_buffer_counts, variant == 3 || variant == 4);
    if (variant == 3) assert_int_equal(r->variadic_buffer_counts[2], 7);
    if (variant != 5) {
      assert_int_equal(r->n_nodes, 3);
      assert_int_equal(r->nodes[2].null_count, INT64_MAX);
      assert_int_equal(r->n_buffers, 4);
      assert_int_equal(r->buffers[2].offset, 64);
      assert_int_equal(r->buffers[2].length, 4096);
    }
    qv_message_reset(&d);
  }
}

static void test_dictionary_batch(void **state) {
  (void)state;
  static const QvFieldNode nodes[] = {{3, 0}};
  static const QvBuffer buffers[] = {{0, 0}, {0, 16}, {16, 8}};
  static const int64_t ids[] = {0, 1, -5, INT64_MIN};
  for (int i = 0; i < 4; i++) {
    for (int delta = 0; delta <= 1; delta++) {
      QvMessage m;
      memset(&m, 0, sizeof m);
      m.version = QV_METADATA_V4;
      m.header_type = QV_HEADER_DICTIONARY_BATCH;
      m.body_length = 24;
      QvDictionaryBatch *db = &m.header.dictionary_batch;
      db->id = ids[i];
      db->is_delta = delta;
      db->data.length = 3;
      db->data.n_nodes = 1;
      db->data.nodes = nodes;
      db->data.n_buffers = 3;
      db->data.buffers = buffers;
      db->data.compression = delta ? QV_COMPRESSION_ZSTD : QV_COMPRESSION_NONE;
      QvMessage d;
      roundtrip_into(&m, &d);
      assert_int_equal(d.header.dictionary_batch.id, ids[i]);
      assert_int_equal(d.header.dictionary_batch.is_delta, delta);
      assert_int_equal(d.header.dictionary_batch.data.n_buffers, 3);
      qv_message_reset(&d);
    }
  }
}

static void test_tensor(void **state) {
  (void)state;
  QvTensorDim dims[3] = {{2, S("rows")}, {3, NULL, 0}, {0, S("")}};
  static const int64_t strides[] = {24, 8, 8};
  for (int variant = 0; variant < 4; variant++) {
    QvMessage m;
    memset(&m, 0, sizeof m);
    m.version = QV_METADATA_V5;
    m.header_type = QV_HEADER_TENSOR;
    m.body_length = 48;
    QvTensorMeta *t = &m.header.tensor;
    t->type = simple_type(QV_TYPE_FLOATING_POINT);
    t->type.u.floating_point.precision = QV_PRECISION_DOUBLE;
    if (variant == 2) t->type = int_type(8, false);
    t->ndim = variant == 3 ? 0 : 3;
    t->shape = variant == 3 ? NULL : dims;
    if (variant == 0) {
      t->has_strides = true;
      t->n_strides = 3;
      t->strides = strides;
    }
    if (variant == 3) t->has_strides = true; /* 0-d: strides [] */
    t->data.offset = 0;
    t->data.length = 48;
    QvMessage d;
    roundtrip_into(&m, &d);
    const QvTensorMeta *r = &d.header.tensor;
    assert_int_equal(r->ndim, variant == 3 ? 0 : 3);
    assert_int_equal(r->has_strides, variant == 0 || variant == 3);
    if (variant == 0) assert_int_equal(r->strides[0], 24);
    if (variant != 3) {
      assert_string_equal(r->shape[0].name, "rows");
      assert_null(r->shape[1].name);
      assert_non_null(r->shape[2].name);
      assert_int_equal(r->shape[1].size, 3);
    }
    assert_int_equal(r->data.length, 48);
    qv_message_reset(&d);
  }
}

static QvMessage sparse_message(uint8_t kind) {
  static QvTensorDim dims[2] = {{6, S("r")}, {4, S("c")}};
  QvMessage m;
  memset(&m, 0, sizeof m);
  m.version = QV_METADATA_V5;
  m.header_type = QV_HEADER_SPARSE_TENSOR;
  m.body_length = 256;
  QvSparseTensorMeta *t = &m.header.sparse_tensor;
  t->type = simple_type(QV_TYPE_FLOATING_POINT);
  t->type.u.floating_point.precision = QV_PRECISION_SINGLE;
  t->ndim = 2;
  t->shape = dims;
  t->non_zero_length = 9;
  t->format = kind;
  t->data.offset = 192;
  t->data.length = 36;
  return m;
}

static void test_sparse_coo(void **state) {
  (void)state;
  static const int64_t strides[] = {16, 8};
  for (int variant = 0; variant < 3; variant++) {
    QvMessage m = sparse_message(QV_SPARSE_COO);
    QvSparseCOO *c = &m.header.sparse_tensor.index.coo;
    c->indices_type = int_of(variant == 1 ? 32 : 64, variant != 2);
    c->indices_buffer.offset = 0;
    c->indices_buffer.length = 144;
    c->is_canonical = variant != 1;
    if (variant == 0) {
      c->has_indices_strides = true;
      c->n_indices_strides = 2;
      c->indices_strides = strides;
    }
    if (variant == 2) c->has_indices_strides = true;
    QvMessage d;
    roundtrip_into(&m, &d);
    const QvSparseTensorMeta *r = &d.header.sparse_tensor;
    assert_int_equal(r->format, QV_SPARSE_COO);
    assert_int_equal(r->non_zero_length, 9);
    assert_int_equal(r->index.coo.is_canonical, variant != 1);
    assert_int_equal(r->index.coo.has_indices_strides, variant != 1);
    assert_int_equal(r->index.coo.indices_buffer.length, 144);
    assert_int_equal(r->data.offset, 192);
    assert_string_equal(r->shape[1].name, "c");
    qv_message_reset(&d);
  }
}

static void test_sparse_csx(void **state) {
  (void)state;
  for (QvSparseFormat f = QV_SPARSE_CSR; f <= QV_SPARSE_CSC; f++) {
    QvMessage m = sparse_message(f);
    QvSparseCSX *c = &m.header.sparse_tensor.index.csx;
    c->indptr_type = int_of(32, true);
    c->indptr_buffer.offset = 0;
    c->indptr_buffer.length = 28;
    c->indices_type = int_of(16, false);
    c->indices_buffer.offset = 32;
    c->indices_buffer.length = 18;
    QvMessage d;
    roundtrip_into(&m, &d);
    const QvSparseCSX *r = &d.header.sparse_tensor.index.csx;
    assert_int_equal(d.header.sparse_tensor.format, f);
    assert_int_equal(r->indices_type.bit_width, 16);
    assert_int_equal(r->indices_buffer.offset, 32);
    qv_message_reset(&d);
  }
}

static void test_sparse_csf(void **state) {
  (void)state;
  static const QvBuffer indptr[] = {{0, 3}, {16, 4}, {32, 5}};
  static const QvBuffer indices[] = {{56, 2}, {64, 3}, {80, 4}, {96, 8}};
  static const int32_t axis_order[] = {3, 0, 2, 1};
  QvTensorDim dims[4] = {{2, NULL, 0}, {3, NULL, 0}, {4, NULL, 0}, {5, NULL, 0}};
  QvMessage m = sparse_message(QV_SPARSE_CSF);
  QvSparseTensorMeta *t = &m.header.sparse_tensor;
  t->ndim = 4;
  t->shape = dims;
  t->non_zero_length = 8;
  QvSparseCSF *c = &t->index.csf;
  c->indptr_type = int_of(32, true);
  c->indices_type = int_of(64, true);
  c->n_indptr_buffers = 3;
  c->indptr_buffers = indptr;
  c->n_indices_buffers = 4;
  c->indices_buffers = indices;
  c->n_axis_order = 4;
  c->axis_order = axis_order;
  QvMessage d;
  roundtrip_into(&m, &d);
  const QvSparseCSF *r = &d.header.sparse_tensor.index.csf;
  assert_int_equal(r->n_indices_buffers, 4);
  assert_int_equal(r->indices_buffers[3].offset, 96);
  assert_int_equal(r->axis_order[0], 3);
  assert_int_equal(r->indices_type.bit_width, 64);
  assert_null(d.header.sparse_tensor.shape[0].name);
  qv_message_reset(&d);
}

static void test_footer(void **state) {
  (void)state;
  static const QvBlock dicts[] = {{8, 200, 40}};
  static const QvBlock batches[] = {{248, 312, 360}, {920, 264, INT64_MAX}};
  static const QvKeyValue md[] = {{S("writer"), S("quiver")}};
  QvField fields[2] = {leaf("a", int_type(32, true)), leaf("b", simple_type(QV_TYPE_UTF8))};
  for (int variant = 0; variant < 3; variant++) {
    QvFooter f;
    memset(&f, 0, sizeof f);
    f.version = QV_METADATA_V5;
    if (variant != 2) {
      f.has_schema = true;
      f.schema.n_fields = 2;
      f.schema.fields = fields;
      f.schema.endianness = variant == 1 ? QV_ENDIAN_BIG : QV_ENDIAN_LITTLE;
      f.n_dictionaries = N(dicts);
      f.dictionaries = dicts;
      f.n_record_batches = N(batches);
      f.record_batches = batches;
    }
    if (variant == 1) {
      f.n_metadata = 1;
      f.metadata = md;
    }
    uint8_t *b1, *b2;
    size_t n1, n2;
    QvError e;
    assert_int_equal(qv_footer_encode(&f, &b1, &n1, &e), QV_OK);
    QvFooter d;
    if (qv_footer_decode(b1, n1, NULL, &d, &e)) fail_msg("footer decode: %s", e.message);
    char where[256];
    if (!qv_footer_equal(&f, &d, where, sizeof where)) fail_msg("footer differs at %s", where);
    assert_int_equal(qv_footer_encode(&d, &b2, &n2, &e), QV_OK);
    assert_int_equal(n1, n2);
    assert_memory_equal(b1, b2, n1);
    assert_int_equal(d.has_schema, variant != 2);
    if (variant != 2) {
      assert_int_equal(d.n_record_batches, 2);
      assert_int_equal(d.record_batches[1].body_length, INT64_MAX);
      assert_int_equal(d.record_batches[1].meta_data_length, 264);
      assert_int_equal(d.dictionaries[0].offset, 8);
      assert_string_equal(d.schema.fields[1].name, "b");
    }
    qv_footer_reset(&d);
    free(b1);
    free(b2);
  }
}

/* Encoding twice gives the same bytes, and they do not depend on garbage in
 * members the struct marks unused. */
static void test_determinism_ignores_unused_members(void **state) {
  (void)state;
  QvDictionaryEncoding d1 = {1, false, {0, false}, false, 0};
  QvDictionaryEncoding d2 = {1, false, {16, true}, false, 0};
  QvField f1 = leaf("x", int_type(8, true));
  QvField f2 = f1;
  f1.dictionary = &d1;
  f2.dictionary = &d2;
  QvMessage m1 = schema_message(1, &f1), m2 = schema_message(1, &f2);
  uint8_t *b1, *b2, *b3;
  size_t n1, n2, n3;
  QvError e;
  assert_int_equal(qv_message_encode(&m1, &b1, &n1, &e), QV_OK);
  assert_int_equal(qv_message_encode(&m2, &b2, &n2, &e), QV_OK);
  assert_int_equal(qv_message_encode(&m1, &b3, &n3, &e), QV_OK);
  assert_int_equal(n1, n2);
  assert_memory_equal(b1, b2, n1);
  assert_memory_equal(b1, b3, n1);
  assert_true(qv_message_equal(&m1, &m2, NULL, 0));
  free(b1);
  free(b2);
  free(b3);
}

static void expect_encode_error(const QvMessage *m, QvStatus code, const char *want) {
  uint8_t *out = (uint8_t *)&out; /* anything but NULL */
  size_t size = 99;
  QvError e;
  QvStatus st = qv_message_encode(m, &out, &size, &e);
  if (st != code) fail_msg("status %s, expected %s", qv_status_name(st), qv_status_name(code));
  if (strstr(e.message, want) == NULL) fail_msg("\"%s\" lacks \"%s\"", e.message, want);
  assert_null(out);
  assert_int_equal(size, 0);
}

/* What cannot be encoded at all is refused with a message naming it. */
static void test_encode_rejects_bad_arguments(void **state) {
  (void)state;
  QvMessage m;
  memset(&m, 0, sizeof m);
  expect_encode_error(&m, QV_EARG, "Message.header");
  m.header_type = 6;
  expect_encode_error(&m, QV_EARG, "cannot encode header type 6");

  QvField f = leaf("x", simple_type(QV_TYPE_NONE));
  m = schema_message(1, &f);
  expect_encode_error(&m, QV_EARG, "Schema.fields[0].type: type id 0");
  f.type.id = QV_TYPE_ID_COUNT;
  expect_encode_error(&m, QV_EARG, "type id 27");
  f.type = simple_type(QV_TYPE_UNION);
  f.type.u.union_.has_type_ids = true;
  f.type.u.union_.n_type_ids = 2;
  expect_encode_error(&m, QV_EARG, "Schema.fields[0].type");
  f.type = simple_type(QV_TYPE_LIST);
  f.n_children = -1;
  expect_encode_error(&m, QV_EARG, "Schema.fields[0].children: negative count");
  f.n_children = 1;
  expect_encode_error(&m, QV_EARG, "Schema.fields[0].children: positive count but NULL");
  f.n_children = 0;
  f.n_metadata = 3;
  expect_encode_error(&m, QV_EARG, "Schema.fields[0].custom_metadata");
  m = schema_message(2, NULL);
  expect_encode_error(&m, QV_EARG, "Schema.fields");

  /* nesting beyond what the decoder accepts */
  QvField chain[70];
  for (int i = 0; i < 70; i++) {
    chain[i] = leaf("c", simple_type(QV_TYPE_STRUCT));
    chain[i].n_children = i + 1 < 70 ? 1 : 0;
    chain[i].children = i + 1 < 70 ? &chain[i + 1] : NULL;
  }
  m = schema_message(1, chain);
  expect_encode_error(&m, QV_ELIMIT, "nested deeper than 64");
  chain[64].n_children = 0; /* 64 levels below the top: exactly the limit */
  uint8_t *out;
  size_t size;
  QvError e;
  assert_int_equal(qv_message_encode(&m, &out, &size, &e), QV_OK);
  QvMessage d;
  QvDecodeOptions deep = {.max_depth = 1000};
  assert_int_equal(qv_message_decode(out, size, &deep, &d, &e), QV_OK);
  qv_message_reset(&d);
  free(out);

  m = sparse_message(0);
  expect_encode_error(&m, QV_EARG, "SparseTensor.sparseIndex");
  m = sparse_message(7);
  expect_encode_error(&m, QV_EARG, "sparse format 7");
  m = sparse_message(QV_SPARSE_CSF);
  m.header.sparse_tensor.index.csf.n_axis_order = 2;
  expect_encode_error(&m, QV_EARG, "SparseTensorIndexCSF.axisOrder");
  m = sparse_message(QV_SPARSE_COO);
  m.header.sparse_tensor.type.id = QV_TYPE_NONE;
  expect_encode_error(&m, QV_EARG, "SparseTensor.type");

  memset(&m, 0, sizeof m);
  m.header_type = QV_HEADER_TENSOR;
  m.header.tensor.type = simple_type(QV_TYPE_BOOL);
  m.header.tensor.ndim = -1;
  expect_encode_error(&m, QV_EARG, "Tensor.shape: negative count");
  m.header.tensor.ndim = 0;
  m.header.tensor.n_strides = 1;
  expect_encode_error(&m, QV_EARG, "Tensor.strides");

  memset(&m, 0, sizeof m);
  m.header_type = QV_HEADER_DICTIONARY_BATCH;
  m.header.dictionary_batch.data.n_buffers = 1;
  expect_encode_error(&m, QV_EARG, "DictionaryBatch.data.buffers");
  memset(&m, 0, sizeof m);
  m.header_type = QV_HEADER_RECORD_BATCH;
  m.header.record_batch.n_nodes = -2;
  expect_encode_error(&m, QV_EARG, "RecordBatch.nodes");
  m.header.record_batch.n_nodes = 0;
  m.n_metadata = 1;
  expect_encode_error(&m, QV_EARG, "Message.custom_metadata");

  QvFooter ft;
  memset(&ft, 0, sizeof ft);
  ft.n_record_batches = 1;
  out = (uint8_t *)&out;
  assert_int_equal(qv_footer_encode(&ft, &out, &size, &e), QV_EARG);
  assert_non_null(strstr(e.message, "Footer.recordBatches"));
  assert_null(out);
  ft.n_record_batches = 0;
  ft.has_schema = true;
  ft.schema.n_fields = 1;
  assert_int_equal(qv_footer_encode(&ft, &out, &size, &e), QV_EARG);
  assert_non_null(strstr(e.message, "Footer.schema.fields"));
}

/* The comparison used above must notice a change in any member. */
static void test_compare_detects_differences(void **state) {
  (void)state;
  QvField kids[1] = {leaf("k", simple_type(QV_TYPE_UTF8))};
  QvField f = leaf("f", simple_type(QV_TYPE_LIST));
  f.n_children = 1;
  f.children = kids;
  QvMessage a = schema_message(1, &f);
  char where[256];
  assert_true(qv_message_equal(&a, &a, where, sizeof where));
  assert_string_equal(where, "");

  QvField kids2[1] = {leaf("k", simple_type(QV_TYPE_LARGE_UTF8))};
  QvField g = f;
  g.children = kids2;
  QvMessage b = schema_message(1, &g);
  assert_false(qv_message_equal(&a, &b, where, sizeof where));
  assert_string_equal(where, "Message.header(Schema).fields[0].children[0].type.id");

  g = f;
  g.name = "F";
  assert_false(qv_message_equal(&a, &b, where, sizeof where));
  assert_string_equal(where, "Message.header(Schema).fields[0].name");
  g.name = NULL;
  g.name_len = 0;
  assert_false(qv_message_equal(&a, &b, where, sizeof where));

  g = f;
  g.nullable = false;
  assert_false(qv_message_equal(&a, &b, where, sizeof where));
  assert_string_equal(where, "Message.header(Schema).fields[0].nullable");

  QvDictionaryEncoding de = {1, true, {8, true}, false, 0};
  g = f;
  g.dictionary = &de;
  assert_false(qv_message_equal(&a, &b, where, sizeof where));
  assert_string_equal(where, "Message.header(Schema).fields[0].dictionary");
  QvField h = g;
  QvDictionaryEncoding de2 = de;
  de2.index_type.is_signed = false;
  h.dictionary = &de2;
  QvMessage c = schema_message(1, &h);
  assert_false(qv_message_equal(&b, &c, where, sizeof where));
  assert_string_equal(where, "Message.header(Schema).fields[0].dictionary.indexType");
  de2 = de;
  de2.is_ordered = true;
  assert_false(qv_message_equal(&b, &c, where, sizeof where));
  assert_string_equal(where, "Message.header(Schema).fields[0].dictionary.isOrdered");

  static const QvKeyValue md1[] = {{S("k"), S("v")}}, md2[] = {{S("k"), S("w")}};
  QvMessage x = a, y = a;
  x.n_metadata = y.n_metadata = 1;
  x.metadata = md1;
  y.metadata = md2;
  assert_false(qv_message_equal(&x, &y, where, sizeof where));
  assert_string_equal(where, "Message.custom_metadata[0].value");
  y = x;
  y.body_length = 1;
  assert_false(qv_message_equal(&x, &y, where, sizeof where));
  assert_string_equal(where, "Message.bodyLength");
  y = x;
  y.version = QV_METADATA_V4;
  assert_false(qv_message_equal(&x, &y, where, sizeof where));
  assert_string_equal(where, "Message.version");

  /* type parameters */
  QvType t1 = simple_type(QV_TYPE_TIMESTAMP), t2;
  t1.u.timestamp.timezone = "UTC";
  t1.u.timestamp.timezone_len = 3;
  t2 = t1;
  assert_true(qv_type_equal(&t1, &t2));
  t2.u.timestamp.timezone = NULL;
  t2.u.timestamp.timezone_len = 0;
  assert_false(qv_type_equal(&t1, &t2));
  t2 = t1;
  t2.u.timestamp.unit = QV_TIME_NANOSECOND;
  assert_false(qv_type_equal(&t1, &t2));
  static const int32_t ids1[] = {1, 2}, ids2[] = {1, 3};
  t1 = simple_type(QV_TYPE_UNION);
  t1.u.union_.has_type_ids = true;
  t1.u.union_.n_type_ids = 2;
  t1.u.union_.type_ids = ids1;
  t2 = t1;
  t2.u.union_.type_ids = ids2;
  assert_false(qv_type_equal(&t1, &t2));
  t2 = t1;
  t2.u.union_.has_type_ids = false;
  t2.u.union_.n_type_ids = 0;
  assert_false(qv_type_equal(&t1, &t2));

  /* record batch members */
  static const QvFieldNode n1[] = {{1, 0}}, n2[] = {{1, 1}};
  static const QvBuffer bu1[] = {{0, 8}}, bu2[] = {{0, 16}};
  QvMessage r1, r2;
  memset(&r1, 0, sizeof r1);
  r1.header_type = QV_HEADER_RECORD_BATCH;
  r1.header.record_batch.n_nodes = 1;
  r1.header.record_batch.nodes = n1;
  r1.header.record_batch.n_buffers = 1;
  r1.header.record_batch.buffers = bu1;
  r2 = r1;
  r2.header.record_batch.nodes = n2;
  assert_false(qv_message_equal(&r1, &r2, where, sizeof where));
  assert_string_equal(where, "Message.header(RecordBatch).nodes[0]");
  r2 = r1;
  r2.header.record_batch.buffers = bu2;
  assert_false(qv_message_equal(&r1, &r2, where, sizeof where));
  assert_string_equal(where, "Message.header(RecordBatch).buffers[0]");
  r2 = r1;
  r2.header.record_batch.compression = QV_COMPRESSION_LZ4_FRAME;
  assert_false(qv_message_equal(&r1, &r2, where, sizeof where));
  r1.header.record_batch.compression = QV_COMPRESSION_LZ4_FRAME;
  r2.header.record_batch.compression = QV_COMPRESSION_ZSTD;
  assert_false(qv_message_equal(&r1, &r2, where, sizeof where));
  assert_string_equal(where, "Message.header(RecordBatch).compression.codec");
  r2 = r1;
  r2.header.record_batch.has_variadic_buffer_counts = true;
  assert_false(qv_message_equal(&r1, &r2, where, sizeof where));

  /* sparse index members */
  QvMessage s1 = sparse_message(QV_SPARSE_CSR), s2;
  s2 = s1;
  s2.header.sparse_tensor.format = QV_SPARSE_CSC;
  assert_false(qv_message_equal(&s1, &s2, where, sizeof where));
  assert_string_equal(where, "Message.header(SparseTensor).format");
  s2 = s1;
  s2.header.sparse_tensor.non_zero_length = 10;
  assert_false(qv_message_equal(&s1, &s2, where, sizeof where));
  s2 = s1;
  QvTensorDim dims[2] = {{6, S("r")}, {4, S("C")}};
  s2.header.sparse_tensor.shape = dims;
  assert_false(qv_message_equal(&s1, &s2, where, sizeof where));
  assert_string_equal(where, "Message.header(SparseTensor).shape[1].name");

  /* footer blocks */
  static const QvBlock bl1[] = {{8, 16, 24}}, bl2[] = {{8, 17, 24}};
  QvFooter f1, f2;
  memset(&f1, 0, sizeof f1);
  f1.n_record_batches = 1;
  f1.record_batches = bl1;
  f2 = f1;
  f2.record_batches = bl2;
  assert_false(qv_footer_equal(&f1, &f2, where, sizeof where));
  assert_string_equal(where, "Footer.recordBatches[0]");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_every_type_alone),
      cmocka_unit_test(test_nested_schema),
      cmocka_unit_test(test_empty_schema),
      cmocka_unit_test(test_versions_and_body_length),
      cmocka_unit_test(test_record_batch),
      cmocka_unit_test(test_dictionary_batch),
      cmocka_unit_test(test_tensor),
      cmocka_unit_test(test_sparse_coo),
      cmocka_unit_test(test_sparse_csx),
      cmocka_unit_test(test_sparse_csf),
      cmocka_unit_test(test_footer),
      cmocka_unit_test(test_determinism_ignores_unused_members),
      cmocka_unit_test(test_encode_rejects_bad_arguments),
      cmocka_unit_test(test_compare_detects_differences),
  };
  return qv_test_run(tests, NULL, NULL);
}
