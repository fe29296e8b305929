/* Decoding hostile or invalid metadata built by hand with the generic
 * FlatBuffers builder: every case must fail with a message naming the
 * offending field, and leave the output empty and releasable. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flatbuf/flatbuf.h"
#include "quiver/format.h"
#include "test_util.h"

/* Slots, restated from FORMAT-NOTES.md rather than taken from the library's
 * own descriptors, so a wrong slot there cannot hide here. */
enum { M_VERSION = 0, M_HEADER_TYPE = 1, M_HEADER = 2, M_BODY_LENGTH = 3, M_METADATA = 4 };
enum { S_ENDIANNESS = 0, S_FIELDS = 1, S_METADATA = 2, S_FEATURES = 3 };
enum { F_NAME = 0, F_NULLABLE = 1, F_TYPE_TYPE = 2, F_TYPE = 3, F_DICTIONARY = 4, F_CHILDREN = 5 };
enum { RB_LENGTH = 0, RB_NODES = 1, RB_BUFFERS = 2, RB_COMPRESSION = 3, RB_VARIADIC = 4 };
enum { T_TYPE_TYPE = 0, T_TYPE = 1, T_SHAPE = 2, T_STRIDES = 3, T_DATA = 4 };
enum { ST_TYPE_TYPE = 0, ST_TYPE = 1, ST_SHAPE = 2, ST_NNZ = 3, ST_INDEX_TYPE = 4, ST_INDEX = 5,
       ST_DATA = 6 };

#define OMIT INT64_MIN /* a scalar that is not written at all */

typedef struct Sc {
  unsigned slot;
  unsigned size; /* 1, 2, 4 or 8 */
  int64_t value;
} Sc;

/* A table of scalars, each written explicitly (even when it equals the
 * default) unless its value is OMIT. */
static QvFbRef scalars(QvFbBuilder *b, const Sc *sc, int n) {
  qvi_fb_table_start(b);
  for (int i = 0; i < n; i++) {
    if (sc[i].value == OMIT) continue;
    int8_t v8 = (int8_t)sc[i].value;
    int16_t v16 = (int16_t)sc[i].value;
    int32_t v32 = (int32_t)sc[i].value;
    int64_t v64 = sc[i].value;
    const void *p = sc[i].size == 1 ? (const void *)&v8
                    : sc[i].size == 2 ? (const void *)&v16
                    : sc[i].size == 4 ? (const void *)&v32
                                      : (const void *)&v64;
    qvi_fb_add_scalar(b, sc[i].slot, p, sc[i].size);
  }
  return qvi_fb_table_end(b);
}

static QvFbRef empty_table(QvFbBuilder *b) { return scalars(b, NULL, 0); }

static QvFbRef int_table(QvFbBuilder *b, int32_t bit_width, bool is_signed) {
  Sc sc[] = {{0, 4, bit_width}, {1, 1, is_signed}};
  return scalars(b, sc, 2);
}

static QvFbRef field_table(QvFbBuilder *b, const char *name, uint8_t type_tag, QvFbRef type,
                           QvFbRef dict, QvFbRef children) {
  QvFbRef n = name ? qvi_fb_create_string(b, name, strlen(name)) : 0;
  qvi_fb_table_start(b);
  qvi_fb_add_ref(b, F_NAME, n);
  qvi_fb_add_bool(b, F_NULLABLE, true, false);
  qvi_fb_add_scalar(b, F_TYPE_TYPE, &type_tag, 1);
  qvi_fb_add_ref(b, F_TYPE, type);
  qvi_fb_add_ref(b, F_DICTIONARY, dict);
  qvi_fb_add_ref(b, F_CHILDREN, children);
  return qvi_fb_table_end(b);
}

static QvFbRef schema_table(QvFbBuilder *b, int64_t endianness, QvFbRef field) {
  QvFbRef fields = field ? qvi_fb_create_vector_refs(b, &field, 1) : 0;
  qvi_fb_table_start(b);
  if (endianness != OMIT) {
    int16_t e = (int16_t)endianness;
    qvi_fb_add_scalar(b, S_ENDIANNESS, &e, 2);
  }
  qvi_fb_add_ref(b, S_FIELDS, fields);
  return qvi_fb_table_end(b);
}

typedef struct Built {
  uint8_t *data;
  size_t size;
} Built;

/* Finishes a Message table and copies the bytes out. */
static Built message(QvFbBuilder *b, int64_t version, uint8_t header_tag, QvFbRef header,
                     int64_t body_length) {
  qvi_fb_table_start(b);
  if (version != OMIT) {
    int16_t v = (int16_t)version;
    qvi_fb_add_scalar(b, M_VERSION, &v, 2);
  }
  if (header_tag) qvi_fb_add_scalar(b, M_HEADER_TYPE, &header_tag, 1);
  qvi_fb_add_ref(b, M_HEADER, header);
  if (body_length != OMIT) qvi_fb_add_scalar(b, M_BODY_LENGTH, &body_length, 8);
  QvFbRef root = qvi_fb_table_end(b);
  const uint8_t *p;
  Built out = {NULL, 0};
  QvError e;
  if (qvi_fb_finish(b, root, &p, &out.size, &e)) fail_msg("builder: %s", e.message);
  out.data = malloc(out.size);
  assert_non_null(out.data);
  memcpy(out.data, p, out.size);
  qvi_fb_builder_reset(b);
  return out;
}

static Built schema_with_type(uint8_t tag, const Sc *sc, int n) {
  QvFbBuilder b;
  qvi_fb_builder_init(&b);
  QvFbRef t = scalars(&b, sc, n);
  QvFbRef f = field_table(&b, "col", tag, t, 0, 0);
  QvFbRef s = schema_table(&b, OMIT, f);
  return message(&b, 4, 1, s, 0);
}

static int is_zero(const void *p, size_t n) {
  const uint8_t *c = p;
  for (size_t i = 0; i < n; i++)
    if (c[i]) return 0;
  return 1;
}

/* Decoding must fail with `code` (or any error when code < 0) and a message
 * containing every one of the NULL-terminated substrings. */
static void expect_fail_opts(Built in, const QvDecodeOptions *opts, QvStatus code, ...) {
  QvMessage m;
  memset(&m, 0xAB, sizeof m); /* garbage in: decode must reset it */
  QvError e;
  QvStatus st = qv_message_decode(in.data, in.size, opts, &m, &e);
  if (st == QV_OK) fail_msg("decoded successfully, expected an error");
  if (code >= 0 && st != code)
    fail_msg("status %s (%s), expected %s", qv_status_name(st), e.message, qv_status_name(code));
  assert_int_equal(e.code, st);
  va_list ap;
  va_start(ap, code);
  for (const char *want; (want = va_arg(ap, const char *)) != NULL;) {
    if (strstr(e.message, want) == NULL) fail_msg("message \"%s\" lacks \"%s\"", e.message, want);
  }
  va_end(ap);
  assert_true(is_zero(&m, sizeof m));
  qv_message_reset(&m); /* releasing the emptied output is allowed */
  qv_message_reset(&m);
  /* a NULL error pointer gives the same status */
  assert_int_equal(qv_message_decode(in.data, in.size, opts, &m, NULL), st);
  qv_message_reset(&m);
  free(in.data);
}

#define expect_fail(in, code, ...) expect_fail_opts((in), NULL, (code), __VA_ARGS__, NULL)

static void test_unknown_header_tag(void **state) {
  (void)state;
  for (unsigned tag = 6; tag <= 255; tag += 3) {
    QvFbBuilder b;
    qvi_fb_builder_init(&b);
    QvFbRef h = empty_table(&b);
    Built in = message(&b, 4, (uint8_t)tag, h, 0);
    char want[64];
    snprintf(want, sizeof want, "union type %u is not a known MessageHeader", tag);
    expect_fail(in, QV_EINVAL, want, "Message.header");
  }
  QvFbBuilder b;
  qvi_fb_builder_init(&b);
  QvFbRef h = empty_table(&b);
  expect_fail(message(&b, 4, 9, h, 0), QV_EINVAL,
              "Message.header: union type 9 is not a known MessageHeader");
}

static void test_header_none_or_missing(void **state) {
  (void)state;
  QvFbBuilder b;
  qvi_fb_builder_init(&b);
  expect_fail(message(&b, 4, 0, 0, 0), QV_EINVAL, "Message.header", "NONE");
  /* a header value without its tag is ignored, so still NONE */
  qvi_fb_builder_init(&b);
  QvFbRef s = schema_table(&b, OMIT, 0);
  expect_fail(message(&b, 4, 0, s, 0), QV_EINVAL, "Message.header", "NONE");
  /* a tag without its value */
  qvi_fb_builder_init(&b);
  expect_fail(message(&b, 4, 1, 0, 0), QV_EINVAL, "Message.header", "missing");
}

static void test_unknown_type_tag(void **state) {
  (void)state;
  expect_fail(schema_with_type(27, NULL, 0), QV_EINVAL,
              "Schema).fields[0].type: union type 27 is not a known Type");
  expect_fail(schema_with_type(255, NULL, 0), QV_EINVAL, "union type 255 is not a known Type");
  /* a field without a type */
  QvFbBuilder b;
  qvi_fb_builder_init(&b);
  QvFbRef f = field_table(&b, "col", 0, 0, 0, 0);
  QvFbRef s = schema_table(&b, OMIT, f);
  expect_fail(message(&b, 4, 1, s, 0), QV_EINVAL, "Schema.fields[0].type", "NONE");
}

/* The field paths in messages are joined without printf (decode.c's join):
 * indexes of one, two and three digits under a nested field come out whole. */
static void test_field_paths_past_nine(void **state) {
  (void)state;
  for (size_t bad = 0; bad < 120; bad += 11) {
    QvFbBuilder b;
    qvi_fb_builder_init(&b);
    QvFbRef kids[120];
    QvFbRef ok_type = int_table(&b, 32, true), bad_type = int_table(&b, 7, true);
    for (size_t i = 0; i <= bad; i++)
      kids[i] = field_table(&b, "k", 2, i == bad ? bad_type : ok_type, 0, 0);
    QvFbRef vec = qvi_fb_create_vector_refs(&b, kids, bad + 1);
    QvFbRef st = empty_table(&b);
    QvFbRef parent = field_table(&b, "p", 13 /* Struct_ */, st, 0, vec);
    Built in = message(&b, 4, 1, schema_table(&b, OMIT, parent), 0);
    char want[96];
    snprintf(want, sizeof want, "Schema.fields[0].children[%zu].type: Int.bitWidth 7", bad);
    expect_fail(in, QV_EINVAL, want);
  }
}

static void test_bad_type_parameters(void **state) {
  (void)state;
  Sc int7[] = {{0, 4, 7}, {1, 1, 1}};
  expect_fail(schema_with_type(2, int7, 2), QV_EINVAL, "Schema.fields[0].type", "Int.bitWidth 7");
  Sc int_absent[] = {{1, 1, 1}};
  expect_fail(schema_with_type(2, int_absent, 1), QV_EINVAL, "Int.bitWidth 0");
  Sc fp5[] = {{0, 2, 5}};
  expect_fail(schema_with_type(3, fp5, 1), QV_EINVAL, "Schema.fields[0].type",
              "FloatingPoint.precision 5");
  Sc fpneg[] = {{0, 2, -1}};
  expect_fail(schema_with_type(3, fpneg, 1), QV_EINVAL, "FloatingPoint.precision -1");
  Sc dec100[] = {{0, 4, 10}, {1, 4, 2}, {2, 4, 100}};
  expect_fail(schema_with_type(7, dec100, 3), QV_EINVAL, "Decimal.bitWidth 100");
  Sc dec_p0[] = {{0, 4, 0}, {1, 4, 2}, {2, 4, 128}};
  expect_fail(schema_with_type(7, dec_p0, 3), QV_EINVAL, "Decimal.precision 0");
  Sc dec_p39[] = {{0, 4, 39}, {1, 4, 2}, {2, 4, OMIT}}; /* default width 128 */
  expect_fail(schema_with_type(7, dec_p39, 3), QV_EINVAL, "Decimal.precision 39", "128");
  Sc dec_p10_32[] = {{0, 4, 10}, {2, 4, 32}};
  expect_fail(schema_with_type(7, dec_p10_32, 2), QV_EINVAL, "Decimal.precision 10");
  Sc date2[] = {{0, 2, 2}};
  expect_fail(schema_with_type(8, date2, 1), QV_EINVAL, "DateUnit 2");
  /* Time: unit and bitWidth must agree */
  Sc time_s64[] = {{0, 2, 0}, {1, 4, 64}};
  expect_fail(schema_with_type(9, time_s64, 2), QV_EINVAL, "Time.bitWidth 64", "expected 32");
  Sc time_ns_default[] = {{0, 2, 3}}; /* bitWidth defaults to 32 */
  expect_fail(schema_with_type(9, time_ns_default, 1), QV_EINVAL, "Time.bitWidth 32",
              "expected 64");
  Sc time_us32[] = {{0, 2, 2}, {1, 4, 32}};
  expect_fail(schema_with_type(9, time_us32, 2), QV_EINVAL, "Time.bitWidth 32");
  Sc time_unit9[] = {{0, 2, 9}, {1, 4, 64}};
  expect_fail(schema_with_type(9, time_unit9, 2), QV_EINVAL, "TimeUnit 9");
  Sc ts_neg[] = {{0, 2, -1}};
  expect_fail(schema_with_type(10, ts_neg, 1), QV_EINVAL, "TimeUnit -1");
  Sc interval3[] = {{0, 2, 3}};
  expect_fail(schema_with_type(11, interval3, 1), QV_EINVAL, "IntervalUnit 3");
  Sc union2[] = {{0, 2, 2}};
  expect_fail(schema_with_type(14, union2, 1), QV_EINVAL, "UnionMode 2");
  Sc fsb_neg[] = {{0, 4, -1}};
  expect_fail(schema_with_type(15, fsb_neg, 1), QV_EINVAL, "FixedSizeBinary.byteWidth -1");
  Sc fsl_neg[] = {{0, 4, -8}};
  expect_fail(schema_with_type(16, fsl_neg, 1), QV_EINVAL, "FixedSizeList.listSize -8");
  Sc dur4[] = {{0, 2, 4}};
  expect_fail(schema_with_type(18, dur4, 1), QV_EINVAL, "TimeUnit 4");
}

static void test_bad_dictionary_encoding(void **state) {
  (void)state;
  for (int kind = 0; kind < 3; kind++) {
    QvFbBuilder b;
    qvi_fb_builder_init(&b);
    QvFbRef t = int_table(&b, 32, true);
    QvFbRef it = int_table(&b, kind == 2 ? 12 : 16, true);
    int16_t dk = kind == 0 ? 1 : 0;
    int64_t id = 3;
    qvi_fb_table_start(&b);
    qvi_fb_add_scalar(&b, 0, &id, 8);
    qvi_fb_add_ref(&b, 1, it);
    qvi_fb_add_scalar(&b, 3, &dk, 2);
    QvFbRef dict = qvi_fb_table_end(&b);
    QvFbRef f = field_table(&b, "d", 2, t, dict, 0);
    QvFbRef s = schema_table(&b, OMIT, f);
    Built in = message(&b, 4, 1, s, 0);
    if (kind == 0) {
      expect_fail(in, QV_EINVAL, "Schema.fields[0].dictionary", "DictionaryKind 1");
    } else if (kind == 1) {
      QvMessage m;
      QvError e;
      assert_int_equal(qv_message_decode(in.data, in.size, NULL, &m, &e), QV_OK);
      assert_int_equal(m.header.schema.fields[0].dictionary->index_type.bit_width, 16);
      assert_int_equal(m.header.schema.fields[0].dictionary->id, 3);
      qv_message_reset(&m);
      free(in.data);
    } else {
      expect_fail(in, QV_EINVAL, "Schema.fields[0].dictionary.indexType", "Int.bitWidth 12");
    }
  }
}

static void test_bad_schema(void **state) {
  (void)state;
  QvFbBuilder b;
  qvi_fb_builder_init(&b);
  QvFbRef s = schema_table(&b, 2, 0);
  expect_fail(message(&b, 4, 1, s, 0), QV_EINVAL, "Schema.endianness 2");
}

static void test_bad_message_scalars(void **state) {
  (void)state;
  static const int64_t versions[] = {5, -1, 100};
  for (int i = 0; i < 3; i++) {
    QvFbBuilder b;
    qvi_fb_builder_init(&b);
    QvFbRef s = schema_table(&b, OMIT, 0);
    char want[64];
    snprintf(want, sizeof want, "Message.version %d", (int)versions[i]);
    /* after V5 is a newer format (not supported), below V1 is corrupt */
    expect_fail(message(&b, versions[i], 1, s, 0), versions[i] < 0 ? QV_EINVAL : QV_ENOTSUP, want,
                "MetadataVersion");
  }
  QvFbBuilder b;
  qvi_fb_builder_init(&b);
  QvFbRef s = schema_table(&b, OMIT, 0);
  expect_fail(message(&b, 4, 1, s, -1), QV_EINVAL, "Message.bodyLength -1");
  qvi_fb_builder_init(&b);
  s = schema_table(&b, OMIT, 0);
  expect_fail(message(&b, 4, 1, s, INT64_MIN + 1), QV_EINVAL, "Message.bodyLength");
}

typedef struct RbSpec {
  int64_t length;
  int n_nodes;
  int64_t nodes[4][2];
  int n_buffers;
  int64_t buffers[4][2];
  int64_t codec;  /* OMIT: no compression table */
  int64_t method;
  int n_variadic;
  int64_t variadic[3];
} RbSpec;

/* A Buffer struct field {offset: long, length: long}, little-endian. */
static void add_buffer(QvFbBuilder *b, unsigned slot, int64_t offset, int64_t length) {
  uint8_t raw[16];
  qvi_st_le_u64(raw, (uint64_t)offset);
  qvi_st_le_u64(raw + 8, (uint64_t)length);
  qvi_fb_add_struct(b, slot, raw, 16, 8);
}

/* A vector of structs of two longs (FieldNode, Buffer) in wire order;
 * `pairs` is an int64_t[n][2]. */
static QvFbRef pairs_vector(QvFbBuilder *b, const void *pairs, int n) {
  const int64_t *v = pairs;
  uint8_t raw[4 * 16];
  assert_true(n >= 0 && n <= 4);
  for (int i = 0; i < n; i++) {
    qvi_st_le_u64(raw + 16 * i, (uint64_t)v[2 * i]);
    qvi_st_le_u64(raw + 16 * i + 8, (uint64_t)v[2 * i + 1]);
  }
  return qvi_fb_create_struct_vector(b, raw, (size_t)n, 16, 8);
}

static QvFbRef record_batch_table(QvFbBuilder *b, const RbSpec *r) {
  QvFbRef nodes = pairs_vector(b, r->nodes, r->n_nodes);
  QvFbRef bufs = pairs_vector(b, r->buffers, r->n_buffers);
  QvFbRef var = r->n_variadic ? qvi_fb_create_vector(b, r->variadic, (size_t)r->n_variadic, 8, 8)
                              : 0;
  QvFbRef comp = 0;
  if (r->codec != OMIT) {
    Sc sc[] = {{0, 1, r->codec}, {1, 1, r->method}};
    comp = scalars(b, sc, 2);
  }
  qvi_fb_table_start(b);
  qvi_fb_add_scalar(b, RB_LENGTH, &r->length, 8);
  qvi_fb_add_ref(b, RB_NODES, nodes);
  qvi_fb_add_ref(b, RB_BUFFERS, bufs);
  qvi_fb_add_ref(b, RB_COMPRESSION, comp);
  qvi_fb_add_ref(b, RB_VARIADIC, var);
  return qvi_fb_table_end(b);
}

static Built record_batch_message(const RbSpec *r) {
  QvFbBuilder b;
  qvi_fb_builder_init(&b);
  QvFbRef rb = record_batch_table(&b, r);
  return message(&b, 4, 3, rb, 64);
}

static void test_bad_record_batch(void **state) {
  (void)state;
  RbSpec ok = {5, 2, {{5, 0}, {5, 5}}, 2, {{0, 8}, {8, 40}}, OMIT, OMIT, 0, {0}};
  QvMessage m;
  QvError e;
  Built in = record_batch_message(&ok);
  assert_int_equal(qv_message_decode(in.data, in.size, NULL, &m, &e), QV_OK);
  assert_int_equal(m.header.record_batch.nodes[1].null_count, 5);
  qv_message_reset(&m);
  free(in.data);

  RbSpec r = ok;
  r.length = -5;
  expect_fail(record_batch_message(&r), QV_EINVAL, "RecordBatch.length -5");
  r = ok;
  r.nodes[1][1] = 6; /* null_count > length */
  expect_fail(record_batch_message(&r), QV_EINVAL, "RecordBatch.nodes[1]", "null_count 6");
  r = ok;
  r.nodes[0][0] = -1;
  expect_fail(record_batch_message(&r), QV_EINVAL, "RecordBatch.nodes[0]");
  r = ok;
  r.nodes[0][1] = -2;
  expect_fail(record_batch_message(&r), QV_EINVAL, "RecordBatch.nodes[0]", "null_count -2");
  /* -1 is "unknown" (Arrow C++'s kUnknownNullCount; apache-arrow JS writes it) */
  r = ok;
  r.nodes[0][1] = -1;
  in = record_batch_message(&r);
  assert_int_equal(qv_message_decode(in.data, in.size, NULL, &m, &e), QV_OK);
  assert_int_equal(m.header.record_batch.nodes[0].null_count, -1);
  qv_message_reset(&m);
  free(in.data);
  r = ok;
  r.buffers[1][0] = -8;
  expect_fail(record_batch_message(&r), QV_EINVAL, "RecordBatch.buffers[1]", "negative");
  r = ok;
  r.buffers[0][1] = -1;
  expect_fail(record_batch_message(&r), QV_EINVAL, "RecordBatch.buffers[0]", "negative");
  r = ok;
  r.buffers[1][0] = INT64_MAX;
  expect_fail(record_batch_message(&r), QV_EINVAL, "RecordBatch.buffers[1]", "overflows");
  r = ok;
  r.codec = 7;
  r.method = 0;
  expect_fail(record_batch_message(&r), QV_ENOTSUP, "RecordBatch.compression.codec 7");
  r.codec = -1;
  expect_fail(record_batch_message(&r), QV_EINVAL, "RecordBatch.compression.codec -1");
  r.codec = 1;
  r.method = 1;
  expect_fail(record_batch_message(&r), QV_ENOTSUP, "RecordBatch.compression.method 1");
  r = ok;
  r.n_variadic = 3;
  r.variadic[0] = 1;
  r.variadic[2] = -2;
  expect_fail(record_batch_message(&r), QV_EINVAL, "RecordBatch.variadicBufferCounts[2]");
}

static void test_bad_dictionary_batch(void **state) {
  (void)state;
  RbSpec bad = {-1, 0, {{0}}, 0, {{0}}, OMIT, OMIT, 0, {0}};
  for (int variant = 0; variant < 2; variant++) {
    QvFbBuilder b;
    qvi_fb_builder_init(&b);
    QvFbRef data = variant == 0 ? record_batch_table(&b, &bad) : 0;
    int64_t id = 1;
    qvi_fb_table_start(&b);
    qvi_fb_add_scalar(&b, 0, &id, 8);
    qvi_fb_add_ref(&b, 1, data);
    QvFbRef db = qvi_fb_table_end(&b);
    Built in = message(&b, 4, 2, db, 0);
    if (variant == 0)
      expect_fail(in, QV_EINVAL, "DictionaryBatch.data.length -1");
    else
      expect_fail(in, QV_EINVAL, "DictionaryBatch.data", "missing");
  }
}

/* Tensor pieces; a negative member is left out. */
typedef struct TensorSpec {
  bool type, shape, data;
  int64_t dims[3];
  int n_dims;
  int64_t data_offset, data_length;
  uint8_t type_tag;
} TensorSpec;

static QvFbRef shape_vector(QvFbBuilder *b, const int64_t *dims, int n) {
  QvFbRef refs[8];
  for (int i = 0; i < n; i++) {
    Sc sc[] = {{0, 8, dims[i]}};
    refs[i] = scalars(b, sc, 1);
  }
  return qvi_fb_create_vector_refs(b, refs, (size_t)n);
}

static Built tensor_message(const TensorSpec *t) {
  QvFbBuilder b;
  qvi_fb_builder_init(&b);
  Sc fp[] = {{0, 2, 2}};
  QvFbRef type = t->type ? scalars(&b, fp, 1) : 0;
  QvFbRef shape = t->shape ? shape_vector(&b, t->dims, t->n_dims) : 0;
  qvi_fb_table_start(&b);
  if (t->type) qvi_fb_add_scalar(&b, T_TYPE_TYPE, &t->type_tag, 1);
  qvi_fb_add_ref(&b, T_TYPE, type);
  qvi_fb_add_ref(&b, T_SHAPE, shape);
  if (t->data) add_buffer(&b, T_DATA, t->data_offset, t->data_length);
  QvFbRef h = qvi_fb_table_end(&b);
  return message(&b, 4, 4, h, 48);
}

static void test_bad_tensor(void **state) {
  (void)state;
  TensorSpec ok = {true, true, true, {2, 3, 0}, 2, 0, 48, 3};
  QvMessage m;
  QvError e;
  Built in = tensor_message(&ok);
  if (qv_message_decode(in.data, in.size, NULL, &m, &e)) fail_msg("%s", e.message);
  assert_int_equal(m.header.tensor.ndim, 2);
  assert_int_equal(m.header.tensor.shape[1].size, 3);
  assert_int_equal(m.header.tensor.type.u.floating_point.precision, QV_PRECISION_DOUBLE);
  assert_false(m.header.tensor.has_strides);
  qv_message_reset(&m);
  free(in.data);

  TensorSpec t = ok;
  t.shape = false;
  expect_fail(tensor_message(&t), QV_EINVAL, "Tensor).shape", "required");
  t = ok;
  t.data = false;
  expect_fail(tensor_message(&t), QV_EINVAL, "Tensor).data", "required");
  t = ok;
  t.type = false;
  expect_fail(tensor_message(&t), QV_EINVAL, "Tensor).type", "required");
  t = ok;
  t.dims[1] = -2;
  expect_fail(tensor_message(&t), QV_EINVAL, "Tensor.shape[1].size -2");
  t = ok;
  t.data_length = -48;
  expect_fail(tensor_message(&t), QV_EINVAL, "Tensor.data", "negative");
  t = ok;
  t.type_tag = 40;
  expect_fail(tensor_message(&t), QV_EINVAL, "Tensor).type", "union type 40");
}

/* SparseTensor with a chosen index table builder. */
typedef QvFbRef (*IndexFn)(QvFbBuilder *b, int variant);

static Built sparse_message(uint8_t index_tag, IndexFn index, int variant, int64_t nnz,
                            int64_t dim0) {
  QvFbBuilder b;
  qvi_fb_builder_init(&b);
  Sc fp[] = {{0, 2, 2}};
  QvFbRef type = scalars(&b, fp, 1);
  int64_t dims[2] = {dim0, 4};
  QvFbRef shape = shape_vector(&b, dims, 2);
  QvFbRef ix = index ? index(&b, variant) : 0;
  uint8_t type_tag = 3;
  qvi_fb_table_start(&b);
  qvi_fb_add_scalar(&b, ST_TYPE_TYPE, &type_tag, 1);
  qvi_fb_add_ref(&b, ST_TYPE, type);
  qvi_fb_add_ref(&b, ST_SHAPE, shape);
  if (nnz != OMIT) qvi_fb_add_scalar(&b, ST_NNZ, &nnz, 8);
  if (index_tag) qvi_fb_add_scalar(&b, ST_INDEX_TYPE, &index_tag, 1);
  qvi_fb_add_ref(&b, ST_INDEX, ix);
  add_buffer(&b, ST_DATA, 64, 72);
  QvFbRef h = qvi_fb_table_end(&b);
  return message(&b, 4, 5, h, 136);
}

/* variant 0: valid; 1: no indicesType; 2: negative indicesBuffer offset;
 * 3: no indicesBuffer; 4: indicesType uint128 */
static QvFbRef coo_index(QvFbBuilder *b, int variant) {
  QvFbRef it = variant == 1 ? 0 : int_table(b, variant == 4 ? 128 : 64, true);
  bool canonical = true;
  qvi_fb_table_start(b);
  qvi_fb_add_ref(b, 0, it);
  if (variant != 3) add_buffer(b, 2, variant == 2 ? -64 : 0, 64);
  qvi_fb_add_bool(b, 3, canonical, false);
  return qvi_fb_table_end(b);
}

/* variant 0: valid; 1: compressedAxis 3; 2: no indptrType; 3: negative
 * indicesBuffer length; 4: compressedAxis -1 */
static QvFbRef csx_index(QvFbBuilder *b, int variant) {
  QvFbRef pt = variant == 2 ? 0 : int_table(b, 32, true);
  QvFbRef it = int_table(b, 32, true);
  int16_t axis = variant == 1 ? 3 : variant == 4 ? -1 : 1;
  qvi_fb_table_start(b);
  qvi_fb_add_scalar(b, 0, &axis, 2);
  qvi_fb_add_ref(b, 1, pt);
  add_buffer(b, 2, 0, 28);
  qvi_fb_add_ref(b, 3, it);
  add_buffer(b, 4, 32, variant == 3 ? -1 : 36);
  return qvi_fb_table_end(b);
}

/* variant 0: valid; 1: no axisOrder; 2: negative indicesBuffers[1] offset;
 * 3: no indptrBuffers; 4: indicesType bitWidth 1 */
static QvFbRef csf_index(QvFbBuilder *b, int variant) {
  QvFbRef pt = int_table(b, 32, true);
  QvFbRef it = int_table(b, variant == 4 ? 1 : 32, true);
  int64_t indptr[1][2] = {{0, 12}};
  int64_t indices[2][2] = {{16, 8}, {variant == 2 ? -24 : 24, 12}};
  int32_t axis[2] = {0, 1};
  QvFbRef p = variant == 3 ? 0 : pairs_vector(b, indptr, 1);
  QvFbRef i = pairs_vector(b, indices, 2);
  QvFbRef a = variant == 1 ? 0 : qvi_fb_create_vector(b, axis, 2, 4, 4);
  qvi_fb_table_start(b);
  qvi_fb_add_ref(b, 0, pt);
  qvi_fb_add_ref(b, 1, p);
  qvi_fb_add_ref(b, 2, it);
  qvi_fb_add_ref(b, 3, i);
  qvi_fb_add_ref(b, 4, a);
  return qvi_fb_table_end(b);
}

static void expect_ok_sparse(Built in, uint8_t kind) {
  QvMessage m;
  QvError e;
  if (qv_message_decode(in.data, in.size, NULL, &m, &e)) fail_msg("%s", e.message);
  assert_int_equal(m.header.sparse_tensor.format, kind);
  assert_int_equal(m.header.sparse_tensor.non_zero_length, 9);
  assert_int_equal(m.header.sparse_tensor.data.length, 72);
  qv_message_reset(&m);
  free(in.data);
}

static void test_bad_sparse_tensor(void **state) {
  (void)state;
  expect_ok_sparse(sparse_message(1, coo_index, 0, 9, 6), QV_SPARSE_COO);
  expect_ok_sparse(sparse_message(2, csx_index, 0, 9, 6), QV_SPARSE_CSC); /* axis Column */
  expect_ok_sparse(sparse_message(3, csf_index, 0, 9, 6), QV_SPARSE_CSF);

  expect_fail(sparse_message(0, NULL, 0, 9, 6), QV_EINVAL, "SparseTensor).sparseIndex",
              "required");
  expect_fail(sparse_message(1, NULL, 0, 9, 6), QV_EINVAL, "sparseIndex", "missing");
  expect_fail(sparse_message(4, coo_index, 0, 9, 6), QV_EINVAL,
              "union type 4 is not a known SparseTensorIndex");
  expect_fail(sparse_message(1, coo_index, 0, -1, 6), QV_EINVAL,
              "SparseTensor.non_zero_length -1");
  expect_fail(sparse_message(1, coo_index, 0, 9, -6), QV_EINVAL, "SparseTensor.shape[0].size -6");
  expect_fail(sparse_message(1, coo_index, 1, 9, 6), QV_EINVAL, "(SparseTensorIndexCOO).indicesType",
              "required");
  expect_fail(sparse_message(1, coo_index, 2, 9, 6), QV_EINVAL,
              "SparseTensorIndexCOO.indicesBuffer", "negative");
  expect_fail(sparse_message(1, coo_index, 3, 9, 6), QV_EINVAL, "indicesBuffer", "required");
  expect_fail(sparse_message(1, coo_index, 4, 9, 6), QV_EINVAL,
              "SparseTensorIndexCOO.indicesType", "Int.bitWidth 128");
  expect_fail(sparse_message(2, csx_index, 1, 9, 6), QV_EINVAL,
              "SparseMatrixIndexCSX.compressedAxis 3");
  expect_fail(sparse_message(2, csx_index, 4, 9, 6), QV_EINVAL,
              "SparseMatrixIndexCSX.compressedAxis -1");
  expect_fail(sparse_message(2, csx_index, 2, 9, 6), QV_EINVAL, "indptrType", "required");
  expect_fail(sparse_message(2, csx_index, 3, 9, 6), QV_EINVAL,
              "SparseMatrixIndexCSX.indicesBuffer", "negative");
  expect_fail(sparse_message(3, csf_index, 1, 9, 6), QV_EINVAL, "axisOrder", "required");
  expect_fail(sparse_message(3, csf_index, 2, 9, 6), QV_EINVAL,
              "SparseTensorIndexCSF.indicesBuffers[1]", "negative");
  expect_fail(sparse_message(3, csf_index, 3, 9, 6), QV_EINVAL, "indptrBuffers", "required");
  expect_fail(sparse_message(3, csf_index, 4, 9, 6), QV_EINVAL,
              "SparseTensorIndexCSF.indicesType", "Int.bitWidth 1");
}

/* Fields nested `depth` levels below the schema (a Struct_ chain). */
static Built nested_fields(int depth) {
  QvFbBuilder b;
  qvi_fb_builder_init(&b);
  QvFbRef t = int_table(&b, 8, true);
  QvFbRef f = field_table(&b, "leaf", 2, t, 0, 0);
  for (int i = 0; i < depth; i++) {
    QvFbRef kids = qvi_fb_create_vector_refs(&b, &f, 1);
    QvFbRef st = empty_table(&b);
    f = field_table(&b, "s", 13, st, 0, kids);
  }
  QvFbRef s = schema_table(&b, OMIT, f);
  return message(&b, 4, 1, s, 0);
}

static void test_deep_nesting(void **state) {
  (void)state;
  /* 100 levels: the FlatBuffers table depth limit stops it */
  expect_fail(nested_fields(100), QV_ELIMIT, "nested deeper");
  /* with a generous table depth, the field depth limit does */
  QvDecodeOptions opts = {.max_depth = 1000};
  expect_fail_opts(nested_fields(100), &opts, QV_ELIMIT, "fields nested deeper than 64", NULL);
  expect_fail_opts(nested_fields(65), &opts, QV_ELIMIT, "fields nested deeper than 64", NULL);
  Built in = nested_fields(64);
  QvMessage m;
  QvError e;
  assert_int_equal(qv_message_decode(in.data, in.size, &opts, &m, &e), QV_OK);
  const QvField *f = &m.header.schema.fields[0];
  for (int i = 0; i < 64; i++) {
    assert_int_equal(f->n_children, 1);
    f = &f->children[0];
  }
  assert_string_equal(f->name, "leaf");
  qv_message_reset(&m);
  free(in.data);
  /* a modest nesting passes the default limits */
  in = nested_fields(40);
  assert_int_equal(qv_message_decode(in.data, in.size, NULL, &m, &e), QV_OK);
  qv_message_reset(&m);
  free(in.data);
  /* table-count limit */
  QvDecodeOptions few = {.max_tables = 10};
  expect_fail_opts(nested_fields(40), &few, QV_ELIMIT, "more than 10 tables", NULL);
}

/* Shared sub-objects are decoded once per reference; the decoder bounds the
 * total so that a small input cannot demand a huge output. */
static void test_shared_object_amplification(void **state) {
  (void)state;
  /* one 4000-byte string behind 1000 KeyValue references: 4 MB from 8 KB */
  QvFbBuilder b;
  qvi_fb_builder_init(&b);
  char *big = malloc(4000);
  memset(big, 'x', 4000);
  QvFbRef str = qvi_fb_create_string(&b, big, 4000);
  free(big);
  qvi_fb_table_start(&b);
  qvi_fb_add_ref(&b, 0, str);
  qvi_fb_add_ref(&b, 1, str);
  QvFbRef kv = qvi_fb_table_end(&b);
  QvFbRef refs[1000];
  for (int i = 0; i < 1000; i++) refs[i] = kv;
  QvFbRef md = qvi_fb_create_vector_refs(&b, refs, 1000);
  QvFbRef s = schema_table(&b, OMIT, 0);
  qvi_fb_table_start(&b);
  int16_t version = 4;
  uint8_t tag = 1;
  qvi_fb_add_scalar(&b, M_VERSION, &version, 2);
  qvi_fb_add_scalar(&b, M_HEADER_TYPE, &tag, 1);
  qvi_fb_add_ref(&b, M_HEADER, s);
  qvi_fb_add_ref(&b, M_METADATA, md);
  QvFbRef root = qvi_fb_table_end(&b);
  const uint8_t *p;
  Built in;
  QvError e;
  assert_int_equal(qvi_fb_finish(&b, root, &p, &in.size, &e), QV_OK);
  assert_true(in.size < 10000);
  in.data = malloc(in.size);
  memcpy(in.data, p, in.size);
  qvi_fb_builder_reset(&b);
  expect_fail(in, QV_ELIMIT, "decoded metadata would exceed");

  /* 1000 references to a field with 200 references to one leaf: 200,000
   * fields from a few kilobytes */
  qvi_fb_builder_init(&b);
  QvFbRef t = int_table(&b, 8, true);
  QvFbRef leaf = field_table(&b, NULL, 2, t, 0, 0);
  QvFbRef kids_refs[200];
  for (int i = 0; i < 200; i++) kids_refs[i] = leaf;
  QvFbRef kids = qvi_fb_create_vector_refs(&b, kids_refs, 200);
  QvFbRef st = empty_table(&b);
  QvFbRef mid = field_table(&b, NULL, 13, st, 0, kids);
  for (int i = 0; i < 1000; i++) refs[i] = mid;
  QvFbRef fields = qvi_fb_create_vector_refs(&b, refs, 1000);
  qvi_fb_table_start(&b);
  qvi_fb_add_ref(&b, S_FIELDS, fields);
  s = qvi_fb_table_end(&b);
  in = message(&b, 4, 1, s, 0);
  assert_true(in.size < 10000);
  expect_fail(in, QV_ELIMIT, "decoded metadata would exceed");
}

/* Not FlatBuffers at all, or cut short: always an error, never a crash. */
static void test_malformed_buffers(void **state) {
  (void)state;
  QvMessage m;
  QvError e;
  assert_int_not_equal(qv_message_decode(NULL, 0, NULL, &m, &e), QV_OK);
  assert_true(is_zero(&m, sizeof m));
  static const uint8_t tiny[4] = {4, 0, 0, 0};
  assert_int_equal(qv_message_decode(tiny, sizeof tiny, NULL, &m, &e), QV_EINVAL);
  static const uint8_t root_out[16] = {0xF0, 0xFF, 0, 0};
  assert_int_equal(qv_message_decode(root_out, sizeof root_out, NULL, &m, &e), QV_EINVAL);
  assert_non_null(strstr(e.message, "Message"));

  /* every truncation of a valid message */
  QvFbBuilder b;
  qvi_fb_builder_init(&b);
  QvFbRef t = int_table(&b, 32, true);
  QvFbRef f = field_table(&b, "column", 2, t, 0, 0);
  QvFbRef s = schema_table(&b, 1, f);
  Built in = message(&b, 4, 1, s, 0);
  assert_int_equal(qv_message_decode(in.data, in.size, NULL, &m, &e), QV_OK);
  qv_message_reset(&m);
  for (size_t n = 0; n < in.size; n++) {
    uint8_t *copy = malloc(n ? n : 1); /* exact size, so ASan sees over-reads */
    memcpy(copy, in.data, n);
    QvStatus st = qv_message_decode(copy, n, NULL, &m, &e);
    if (st == QV_OK) qv_message_reset(&m);
    else assert_true(is_zero(&m, sizeof m));
    /* the root table sits near the end of a FlatBuffer, so cutting it off
     * can never leave a decodable message */
    assert_int_not_equal(st, QV_OK);
    free(copy);
  }
  /* every single-byte corruption: decode or fail, never crash */
  int failures = 0;
  for (size_t i = 0; i < in.size; i++) {
    for (int v = 0; v < 3; v++) {
      uint8_t *copy = malloc(in.size);
      memcpy(copy, in.data, in.size);
      copy[i] = v == 0 ? 0xFF : v == 1 ? 0x00 : (uint8_t)(copy[i] ^ 0x80);
      QvStatus st = qv_message_decode(copy, in.size, NULL, &m, &e);
      if (st) failures++;
      qv_message_reset(&m);
      free(copy);
    }
  }
  assert_true(failures > 0);
  free(in.data);
}

/* Footers are checked the same way. */
static void test_bad_footer(void **state) {
  (void)state;
  for (int variant = 0; variant < 4; variant++) {
    QvFbBuilder b;
    qvi_fb_builder_init(&b);
    QvFbRef schema = schema_table(&b, variant == 3 ? 5 : OMIT, 0);
    const int64_t bk[2][3] = {{8, 200, 40},
                              {248, variant == 1 ? -1 : 200, variant == 2 ? -1 : 8}};
    uint8_t blocks[2][24] = {{0}}; /* Block {offset: long, metaDataLength: int, pad, bodyLength: long} */
    for (int k = 0; k < 2; k++) {
      qvi_st_le_u64(blocks[k], (uint64_t)bk[k][0]);
      qvi_st_le_u32(blocks[k] + 8, (uint32_t)bk[k][1]);
      qvi_st_le_u64(blocks[k] + 16, (uint64_t)bk[k][2]);
    }
    QvFbRef bl = qvi_fb_create_struct_vector(&b, blocks, 2, 24, 8);
    int16_t version = variant == 0 ? 5 : 4;
    qvi_fb_table_start(&b);
    qvi_fb_add_scalar(&b, 0, &version, 2);
    qvi_fb_add_ref(&b, 1, schema);
    qvi_fb_add_ref(&b, 3, bl);
    QvFbRef root = qvi_fb_table_end(&b);
    const uint8_t *p;
    size_t n;
    QvError e;
    assert_int_equal(qvi_fb_finish(&b, root, &p, &n, &e), QV_OK);
    QvFooter f;
    memset(&f, 0x5A, sizeof f);
    QvStatus st = qv_footer_decode(p, n, NULL, &f, &e);
    /* a version after V5 is a newer format: not supported */
    assert_int_equal(st, variant == 0 ? QV_ENOTSUP : QV_EINVAL);
    assert_true(is_zero(&f, sizeof f));
    qv_footer_reset(&f);
    const char *want = variant == 0   ? "Footer.version 5"
                       : variant == 3 ? "Schema.endianness 5"
                                      : "Footer.recordBatches[1]";
    if (strstr(e.message, want) == NULL) fail_msg("\"%s\" lacks \"%s\"", e.message, want);
    qvi_fb_builder_reset(&b);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_unknown_header_tag),
      cmocka_unit_test(test_header_none_or_missing),
      cmocka_unit_test(test_unknown_type_tag),
      cmocka_unit_test(test_field_paths_past_nine),
      cmocka_unit_test(test_bad_type_parameters),
      cmocka_unit_test(test_bad_dictionary_encoding),
      cmocka_unit_test(test_bad_schema),
      cmocka_unit_test(test_bad_message_scalars),
      cmocka_unit_test(test_bad_record_batch),
      cmocka_unit_test(test_bad_dictionary_batch),
      cmocka_unit_test(test_bad_tensor),
      cmocka_unit_test(test_bad_sparse_tensor),
      cmocka_unit_test(test_deep_nesting),
      cmocka_unit_test(test_shared_object_amplification),
      cmocka_unit_test(test_malformed_buffers),
      cmocka_unit_test(test_bad_footer),
  };
  return qv_test_run(tests, NULL, NULL);
}
