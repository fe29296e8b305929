/* Hostile input for the FlatBuffers verifier and reader: every structural
 * violation is rejected with QV_EINVAL/QV_ELIMIT and a message naming the
 * path and the problem, and the accessors stay inside the buffer on input
 * that was never verified (every mutated buffer lives in an allocation of
 * exactly its size, so an over-read is an ASan error in sanitizer builds). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "test_util.h"
#include "../data/flatbuf/qvtest_schema.h"

/* ------------------------------------------------------------ helpers */

static void put16(uint8_t *buf, size_t pos, uint16_t v) {
  buf[pos] = (uint8_t)v;
  buf[pos + 1] = (uint8_t)(v >> 8);
}
static void put32(uint8_t *buf, size_t pos, uint32_t v) {
  for (int i = 0; i < 4; i++) buf[pos + (size_t)i] = (uint8_t)(v >> (8 * i));
}
static uint16_t get16(const uint8_t *buf, size_t pos) {
  return (uint16_t)(buf[pos] | buf[pos + 1] << 8);
}
static uint32_t get32(const uint8_t *buf, size_t pos) { return (uint32_t)qvi_le_i32(buf + pos); }

static uint8_t *finish_copy(QvFbBuilder *b, QvFbRef root, size_t *size) {
  const uint8_t *out;
  QvError err;
  qv_error_clear(&err);
  QvStatus st = qvi_fb_finish(b, root, &out, size, &err);
  if (st) print_message("finish: %s\n", err.message);
  assert_int_equal(st, QV_OK);
  uint8_t *copy = malloc(*size);
  assert_non_null(copy);
  memcpy(copy, out, *size);
  qvi_fb_builder_reset(b);
  return copy;
}

/* full.json as built by quiver: the valid starting point of most tests. */
static uint8_t *full_buffer(size_t *size) {
  QvFbBuilder b;
  qvi_fb_builder_init(&b);
  return finish_copy(&b, qvt_build_full(&b, -1), size);
}

static QvFbTable root_of(const uint8_t *buf, size_t size) {
  QvFbTable r;
  assert_true(qvi_fb_root(buf, size, &r));
  return r;
}

/* Position of a field's bytes in the root table (asserted present). */
static size_t field_at(const uint8_t *buf, size_t size, unsigned slot) {
  size_t pos = qvi_fb_field_pos(root_of(buf, size), slot, 1);
  assert_true(pos != 0);
  return pos;
}

/* Object an offset field of the root table points to. */
static size_t target_of(const uint8_t *buf, size_t size, unsigned slot) {
  size_t pos = field_at(buf, size, slot);
  return pos + get32(buf, pos);
}

/* Runs every accessor over a buffer that may be garbage. */
static uint64_t read_anyway(const uint8_t *buf, size_t size) {
  uint64_t d = 0;
  (void)qvt_walk(buf, size, false, &d);
  qvt_probe(buf, size, &d);
  return d;
}

static QvStatus verify(const uint8_t *buf, size_t size, const QvFbTableDesc *desc,
                       const QvFbVerifyOptions *opt, QvError *err) {
  qv_error_clear(err);
  return qvi_fb_verify(buf, size, desc, opt, err);
}

static void expect_ok(const uint8_t *buf, size_t size, const QvFbTableDesc *desc,
                      const QvFbVerifyOptions *opt) {
  QvError err;
  QvStatus st = verify(buf, size, desc, opt, &err);
  if (st) print_message("unexpected: %s\n", err.message);
  assert_int_equal(st, QV_OK);
}

/* Asserts the status and that the message contains both substrings; then
 * reads the rejected buffer anyway. */
static void expect_fail_desc(const uint8_t *buf, size_t size, const QvFbTableDesc *desc,
                             const QvFbVerifyOptions *opt, QvStatus code, const char *s1,
                             const char *s2) {
  QvError err;
  QvStatus st = verify(buf, size, desc, opt, &err);
  if (st != code || !strstr(err.message, s1) || (s2 && !strstr(err.message, s2)))
    print_message("expected %s with \"%s\"%s%s%s, got %s: %s\n", qv_status_name(code), s1,
                  s2 ? " and \"" : "", s2 ? s2 : "", s2 ? "\"" : "", qv_status_name(st),
                  err.message);
  assert_int_equal(st, code);
  assert_int_equal(err.code, code);
  assert_non_null(strstr(err.message, s1));
  if (s2) assert_non_null(strstr(err.message, s2));
  if (buf) read_anyway(buf, size);
}

static void expect_fail(const uint8_t *buf, size_t size, const char *s1, const char *s2) {
  expect_fail_desc(buf, size, &qvt_root_desc, NULL, QV_EINVAL, s1, s2);
}

/* ------------------------------------------------------- buffer level */

static void test_null_and_tiny(void **state) {
  (void)state;
  expect_fail(NULL, 0, "Root: buffer of 0 bytes is too small", NULL);
  expect_fail(NULL, 100, "too small", NULL);
  size_t size;
  uint8_t *full = full_buffer(&size);
  expect_ok(full, size, &qvt_root_desc, NULL);
  for (size_t n = 0; n < 8; n++) {
    uint8_t *p = malloc(n ? n : 1);
    memcpy(p, full, n);
    char want[64];
    snprintf(want, sizeof want, "buffer of %zu bytes is too small", n);
    expect_fail(p, n, want, NULL);
    QvFbTable r;
    assert_false(qvi_fb_root(p, n, &r));
    assert_false(qvi_fb_table_valid(r));
    free(p);
  }
  /* over the 32-bit offset range: refused before any byte is read */
  expect_fail_desc(full, QV_FB_MAX_SIZE + 1, &qvt_root_desc, NULL, QV_ELIMIT, "2 GiB", NULL);
  QvFbTable r;
  assert_false(qvi_fb_root(full, QV_FB_MAX_SIZE + 1, &r));
  QvError err;
  assert_int_equal(qvi_fb_verify(full, size, NULL, NULL, &err), QV_EARG);
  free(full);
}

static void test_root_offset(void **state) {
  (void)state;
  size_t size;
  uint8_t *buf = full_buffer(&size);
  uint32_t root = get32(buf, 0);

  put32(buf, 0, (uint32_t)size);
  expect_fail(buf, size, "Root: root offset", "points outside the buffer");
  put32(buf, 0, 0xFFFFFFF0u);
  expect_fail(buf, size, "root offset 4294967280", "points outside the buffer");
  put32(buf, 0, 0);
  expect_fail(buf, size, "root offset at 0 is zero", NULL);
  put32(buf, 0, root + 2);
  expect_fail(buf, size, "Root: table at", "is not 4-byte aligned");
  put32(buf, 0, root);
  expect_ok(buf, size, &qvt_root_desc, NULL);
  free(buf);
}

/* -------------------------------------------------- tables and vtables */

static void test_vtable_outside(void **state) {
  (void)state;
  size_t size;
  uint8_t *buf = full_buffer(&size);
  QvFbTable r = root_of(buf, size);
  uint32_t soff = get32(buf, r.pos);

  put32(buf, r.pos, (uint32_t)(r.pos + 4)); /* vtable before the buffer */
  expect_fail(buf, size, "Root: vtable of table at", "is outside the buffer");
  put32(buf, r.pos, (uint32_t)-(int32_t)(size - r.pos)); /* vtable at the end */
  expect_fail(buf, size, "vtable of table at", "is outside the buffer");
  put32(buf, r.pos, (uint32_t)-(int32_t)(size - r.pos - 2)); /* 2 bytes of it inside */
  expect_fail(buf, size, "vtable of table at", "is outside the buffer");
  put32(buf, r.pos, soff - 1); /* odd position */
  expect_fail(buf, size, "Root: vtable at", "is not 2-byte aligned");
  put32(buf, r.pos, soff);
  expect_ok(buf, size, &qvt_root_desc, NULL);
  free(buf);
}

static void test_vtable_sizes(void **state) {
  (void)state;
  size_t size;
  uint8_t *buf = full_buffer(&size);
  QvFbTable r = root_of(buf, size);
  uint16_t vt_size = get16(buf, r.vt), table_size = get16(buf, r.vt + 2);

  static const uint16_t bad[] = {0, 2, 3, 5, 77};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    put16(buf, r.vt, bad[i]);
    char want[64];
    snprintf(want, sizeof want, "has invalid size %u", bad[i]);
    expect_fail(buf, size, "Root: vtable at", want);
  }
  put16(buf, r.vt, 0xFFFE);
  expect_fail(buf, size, "(65534 bytes) runs past the end of the buffer", NULL);
  put16(buf, r.vt, vt_size);

  put16(buf, r.vt + 2, 0xFFFC);
  expect_fail(buf, size, "Root: table at", "(65532 bytes) runs past the end of the buffer");
  put16(buf, r.vt + 2, 2);
  expect_fail(buf, size, "(2 bytes) runs past the end", NULL);
  put16(buf, r.vt + 2, table_size);

  /* a vtable shorter than the schema: the missing fields read as absent */
  put16(buf, r.vt, 4 + 2 * QVT_NAME);
  expect_fail(buf, size, "Root.name: required string field is missing", NULL);
  put16(buf, r.vt, vt_size);
  expect_ok(buf, size, &qvt_root_desc, NULL);
  free(buf);
}

static void test_vtable_entry_outside_table(void **state) {
  (void)state;
  size_t size;
  uint8_t *buf = full_buffer(&size);
  QvFbTable r = root_of(buf, size);
  uint16_t table_size = get16(buf, r.vt + 2);
  size_t entry = r.vt + 4 + 2 * QVT_F_INT;
  uint16_t off = get16(buf, entry);

  put16(buf, entry, table_size);
  expect_fail(buf, size, "Root.f_int: field of 4 bytes at offset", "lies outside its table");
  put16(buf, entry, (uint16_t)(table_size - 2)); /* straddles the end */
  expect_fail(buf, size, "Root.f_int: field of 4 bytes", "lies outside its table");
  put16(buf, entry, 0xFFFF);
  expect_fail(buf, size, "Root.f_int", "lies outside its table");
  put16(buf, entry, 2); /* inside the table's own soffset */
  expect_fail(buf, size, "Root.f_int: field at offset 2 overlaps", NULL);
  put16(buf, entry, off);

  /* the same for an offset field and a struct */
  entry = r.vt + 4 + 2 * QVT_MIXED;
  off = get16(buf, entry);
  put16(buf, entry, (uint16_t)(table_size - 16));
  expect_fail(buf, size, "Root.mixed: field of 24 bytes", "lies outside its table");
  put16(buf, entry, off);
  entry = r.vt + 4 + 2 * QVT_TREE;
  off = get16(buf, entry);
  put16(buf, entry, table_size);
  expect_fail(buf, size, "Root.tree: field of 4 bytes", "lies outside its table");
  put16(buf, entry, off);
  expect_ok(buf, size, &qvt_root_desc, NULL);
  free(buf);
}

/* ------------------------------------------------------ strings, vectors */

static void test_strings(void **state) {
  (void)state;
  size_t size;
  uint8_t *buf = full_buffer(&size);
  size_t s = target_of(buf, size, QVT_NAME);
  uint32_t len = get32(buf, s);
  assert_int_equal(len, 4); /* "root" */

  buf[s + 4 + len] = '!';
  expect_fail(buf, size, "Root.name: string at", "is not NUL-terminated");
  QvFbTable r = root_of(buf, size);
  assert_null(qvi_fb_string(r, QVT_NAME).data); /* the reader refuses it too */
  buf[s + 4 + len] = 0;

  put32(buf, s, (uint32_t)size);
  expect_fail(buf, size, "Root.name: string of length", "runs past the end of the buffer");
  put32(buf, s, (uint32_t)(size - s - 4)); /* room for the bytes, not the NUL */
  expect_fail(buf, size, "runs past the end of the buffer", NULL);
  put32(buf, s, 0xFFFFFFFFu);
  expect_fail(buf, size, "string of length 4294967295", "runs past the end");
  put32(buf, s, len);

  size_t at = field_at(buf, size, QVT_NAME);
  uint32_t rel = get32(buf, at);
  put32(buf, at, rel + 1);
  expect_fail(buf, size, "Root.name: string at", "is not 4-byte aligned");
  put32(buf, at, (uint32_t)(size - at)); /* exactly at the end */
  expect_fail(buf, size, "Root.name: string offset", "points outside the buffer");
  put32(buf, at, (uint32_t)(size - at - 4)); /* length fits, NUL does not */
  expect_fail(buf, size, "Root.name", "runs past the end");
  put32(buf, at, rel);

  /* strings inside a vector of strings and a union member */
  size_t v = target_of(buf, size, QVT_V_STRING);
  size_t e1 = v + 8; /* element 1 */
  size_t s1 = e1 + get32(buf, e1);
  put32(buf, s1, 1000);
  expect_fail(buf, size, "Root.v_string[1]: string of length 1000", NULL);
  put32(buf, s1, 0);
  expect_ok(buf, size, &qvt_root_desc, NULL);
  free(buf);
}

static void test_vectors(void **state) {
  (void)state;
  size_t size;
  uint8_t *buf = full_buffer(&size);

  static const struct {
    unsigned slot;
    const char *path;
    size_t elem;
  } vecs[] = {{QVT_V_UBYTE, "Root.v_ubyte", 1},  {QVT_V_INT, "Root.v_int", 4},
              {QVT_V_LONG, "Root.v_long", 8},    {QVT_V_MIXED, "Root.v_mixed", 24},
              {QVT_V_STRING, "Root.v_string", 4}, {QVT_V_LEAF, "Root.v_leaf", 4}};
  static const uint32_t lens[] = {1000000, 0x40000000u, 0x80000000u, 0xFFFFFFFFu};
  for (size_t i = 0; i < sizeof vecs / sizeof vecs[0]; i++) {
    size_t v = target_of(buf, size, vecs[i].slot);
    uint32_t len = get32(buf, v);
    for (size_t k = 0; k < sizeof lens / sizeof lens[0]; k++) {
      put32(buf, v, lens[k]);
      char want[128];
      snprintf(want, sizeof want, "%s: vector of %u elements of %zu bytes", vecs[i].path, lens[k],
               vecs[i].elem);
      expect_fail(buf, size, want, "runs past the end of the buffer");
      /* the unverified reader clamps the length to what the buffer holds */
      QvFbVector rv = qvi_fb_vector(root_of(buf, size), vecs[i].slot, vecs[i].elem);
      assert_true(rv.len <= (size - v - 4) / vecs[i].elem);
    }
    put32(buf, v, len);

    size_t at = field_at(buf, size, vecs[i].slot);
    uint32_t rel = get32(buf, at);
    put32(buf, at, rel + 2);
    char want[128];
    snprintf(want, sizeof want, "%s: vector at", vecs[i].path);
    expect_fail(buf, size, want, "is not 4-byte aligned");
    put32(buf, at, (uint32_t)(size - at));
    snprintf(want, sizeof want, "%s: vector offset", vecs[i].path);
    expect_fail(buf, size, want, "points outside the buffer");
    put32(buf, at, 0);
    expect_fail(buf, size, want, "is zero");
    put32(buf, at, rel);
  }
  expect_ok(buf, size, &qvt_root_desc, NULL);
  free(buf);
}

/* A buffer whose 8-byte-element vector (built with only 4-byte alignment)
 * starts at a position that is 4 mod 8. */
static uint8_t *misaligned_vector_buffer(unsigned slot, size_t *size) {
  for (size_t shift = 0; shift < 8; shift++) {
    QvFbBuilder b;
    qvi_fb_builder_init(&b);
    uint8_t data[2 * QVT_MIXED_SIZE] = {0};
    QvFbRef v = slot == QVT_V_MIXED
                    ? qvi_fb_create_struct_vector(&b, data, 2, QVT_MIXED_SIZE, 4)
                    : qvi_fb_create_vector(&b, data, 6, 8, 4);
    QvFbRef pad = qvi_fb_create_string(&b, "1234567", shift);
    QvFbRef name = qvt_str(&b, "n");
    qvi_fb_table_start(&b);
    qvi_fb_add_ref(&b, QVT_NAME, name);
    qvi_fb_add_ref(&b, QVT_UTF8, pad);
    qvi_fb_add_ref(&b, slot, v);
    uint8_t *buf = finish_copy(&b, qvi_fb_table_end(&b), size);
    if ((target_of(buf, *size, slot) + 4) % 8 != 0) return buf;
    free(buf);
  }
  fail_msg("could not produce a misaligned vector");
  return NULL;
}

static void test_misaligned_8_byte_data(void **state) {
  (void)state;
  size_t size;
  uint8_t *buf = misaligned_vector_buffer(QVT_V_MIXED, &size);
  expect_fail(buf, size, "Root.v_mixed: vector elements at", "are not 8-byte aligned");
  free(buf);
  buf = misaligned_vector_buffer(QVT_V_LONG, &size);
  expect_fail(buf, size, "Root.v_long: vector elements at", "are not 8-byte aligned");
  free(buf);

  /* scalars and structs in a table: move the vtable entry by 4 (or 1) */
  buf = full_buffer(&size);
  QvFbTable r = root_of(buf, size);
  uint16_t table_size = get16(buf, r.vt + 2);
  static const struct {
    unsigned slot;
    size_t width;
    uint16_t move;
    const char *want;
  } cases[] = {{QVT_F_LONG, 8, 4, "Root.f_long: field at"},
               {QVT_F_ULONG, 8, 4, "Root.f_ulong: field at"},
               {QVT_F_DOUBLE, 8, 4, "Root.f_double: field at"},
               {QVT_MIXED, 24, 4, "Root.mixed: field at"},
               {QVT_F_INT, 4, 2, "Root.f_int: field at"},
               {QVT_F_SHORT, 2, 1, "Root.f_short: field at"},
               {QVT_SMALL, 4, 1, "Root.small: field at"},
               {QVT_V_INT, 4, 2, "Root.v_int: field at"},
               {QVT_TREE, 4, 1, "Root.tree: field at"}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    size_t entry = r.vt + 4 + 2 * cases[i].slot;
    uint16_t off = get16(buf, entry);
    uint16_t moved = off + cases[i].move + cases[i].width <= table_size
                         ? (uint16_t)(off + cases[i].move)
                         : (uint16_t)(off - cases[i].move);
    assert_true(moved >= 4);
    put16(buf, entry, moved);
    char align[32];
    snprintf(align, sizeof align, "is not %zu-byte aligned",
             cases[i].slot == QVT_MIXED ? (size_t)8 : cases[i].slot == QVT_SMALL ? 2 : cases[i].width);
    expect_fail(buf, size, cases[i].want, align);
    put16(buf, entry, off);
  }
  expect_ok(buf, size, &qvt_root_desc, NULL);

  /* a sub-table at a misaligned position, past the end, at offset zero */
  size_t at = field_at(buf, size, QVT_TREE);
  uint32_t rel = get32(buf, at);
  put32(buf, at, rel + 2);
  expect_fail(buf, size, "Root.tree: table at", "is not 4-byte aligned");
  put32(buf, at, (uint32_t)(size - at));
  expect_fail(buf, size, "Root.tree: table offset", "points outside the buffer");
  put32(buf, at, 0);
  expect_fail(buf, size, "Root.tree: table offset", "is zero");
  put32(buf, at, rel);
  expect_ok(buf, size, &qvt_root_desc, NULL);
  free(buf);
}

/* --------------------------------------------------- schema-level rules */

static QvFbRef root_with(QvFbBuilder *b, bool name, unsigned slot, QvFbRef ref, uint8_t tag) {
  QvFbRef n = name ? qvt_str(b, "n") : 0;
  qvi_fb_table_start(b);
  qvi_fb_add_ref(b, QVT_NAME, n);
  if (slot) qvi_fb_add_ref(b, slot, ref);
  if (tag) qvi_fb_add_u8(b, slot - 1, tag, 0);
  return qvi_fb_table_end(b);
}

static void test_required_fields(void **state) {
  (void)state;
  QvFbBuilder b;
  size_t size;
  uint8_t *buf;

  qvi_fb_builder_init(&b);
  buf = finish_copy(&b, root_with(&b, false, 0, 0, 0), &size);
  expect_fail(buf, size, "Root.name: required string field is missing", NULL);
  free(buf);

  qvi_fb_builder_init(&b); /* Leaf.name missing in v_leaf[1] */
  QvFbRef leaves[2] = {qvt_build_leaf(&b, "ok", 1), 0};
  qvi_fb_table_start(&b);
  qvi_fb_add_i32(&b, QVT_LEAF_VALUE, 5, QVT_DEF_LEAF_VALUE);
  leaves[1] = qvi_fb_table_end(&b);
  QvFbRef v = qvi_fb_create_vector_refs(&b, leaves, 2);
  buf = finish_copy(&b, root_with(&b, true, QVT_V_LEAF, v, 0), &size);
  expect_fail(buf, size, "Root.v_leaf[1].name: required string field is missing", NULL);
  free(buf);

  qvi_fb_builder_init(&b); /* deep: tree.child.leaf.name */
  qvi_fb_table_start(&b);
  QvFbRef bad_leaf = qvi_fb_table_end(&b);
  QvFbRef d1 = qvt_build_node(&b, 1, 0, bad_leaf);
  QvFbRef d0 = qvt_build_node(&b, 0, d1, 0);
  buf = finish_copy(&b, root_with(&b, true, QVT_TREE, d0, 0), &size);
  expect_fail(buf, size, "Root.tree.child.leaf.name: required string field is missing", NULL);
  free(buf);

  qvi_fb_builder_init(&b); /* inside a union member */
  qvi_fb_table_start(&b);
  qvi_fb_add_i32(&b, QVT_SQUARE_SIDE, 3, QVT_DEF_SIDE);
  QvFbRef sq = qvi_fb_table_end(&b);
  buf = finish_copy(&b, root_with(&b, true, QVT_SHAPE, sq, QVT_SHAPE_SQUARE), &size);
  expect_fail(buf, size, "Root.shape(Square).label: required string field is missing", NULL);
  free(buf);
}

static void test_unions(void **state) {
  (void)state;
  size_t size;
  uint8_t *buf = full_buffer(&size);
  size_t tag = field_at(buf, size, QVT_SHAPE_TYPE);
  assert_int_equal(buf[tag], QVT_SHAPE_SQUARE);
  buf[tag] = 9;
  expect_fail(buf, size, "Root.shape: union type 9 is not a known Shape", NULL);
  buf[tag] = 4; /* one past the last member */
  expect_fail(buf, size, "Root.shape: union type 4 is not a known Shape", NULL);
  buf[tag] = 255;
  expect_fail(buf, size, "union type 255 is not a known Shape", NULL);
  /* a known but wrong member: the Square read as a Polygon has a "points"
   * offset where Square keeps its int side (5): misaligned */
  buf[tag] = QVT_SHAPE_POLYGON;
  expect_fail(buf, size, "Root.shape(Polygon).points: vector", NULL);
  buf[tag] = QVT_SHAPE_SQUARE;
  expect_ok(buf, size, &qvt_root_desc, NULL);
  free(buf);

  QvFbBuilder b;
  qvi_fb_builder_init(&b); /* tag without value */
  buf = finish_copy(&b, root_with(&b, true, QVT_SHAPE, 0, QVT_SHAPE_CIRCLE), &size);
  expect_fail(buf, size, "Root.shape: union type 1 is set but the Shape value is missing", NULL);
  free(buf);

  qvi_fb_builder_init(&b); /* value without tag: ignored, as flatc does */
  qvi_fb_table_start(&b);
  QvFbRef c = qvi_fb_table_end(&b);
  buf = finish_copy(&b, root_with(&b, true, QVT_SHAPE2, c, 0), &size);
  expect_ok(buf, size, &qvt_root_desc, NULL);
  free(buf);

  /* a required union */
  static const QvFbFieldDesc req_fields[] = {
      {"shape", QVT_SHAPE, QV_FB_UNION, 1, 0, 0, NULL, &qvt_shape_desc}};
  static const QvFbTableDesc req = {"Req", 1, req_fields};
  qvi_fb_builder_init(&b);
  buf = finish_copy(&b, root_with(&b, true, 0, 0, 0), &size);
  expect_fail_desc(buf, size, &req, NULL, QV_EINVAL, "Req.shape: required union is NONE", NULL);
  free(buf);
}

/* ---------------------------------------------------------------- limits */

/* Root.tree -> `n` nested Nodes. */
static uint8_t *chain_buffer(int n, size_t *size) {
  QvFbBuilder b;
  qvi_fb_builder_init(&b);
  QvFbRef child = 0;
  for (int i = n - 1; i >= 0; i--) child = qvt_build_node(&b, i % 200, child, 0);
  return finish_copy(&b, root_with(&b, true, QVT_TREE, child, 0), size);
}

static void test_depth_limit(void **state) {
  (void)state;
  size_t size;
  uint8_t *buf = chain_buffer(10, &size); /* Root + 10 Nodes: 11 levels */
  QvFbVerifyOptions opt = {11, 0};
  expect_ok(buf, size, &qvt_root_desc, &opt);
  opt.max_depth = 10;
  expect_fail_desc(buf, size, &qvt_root_desc, &opt, QV_ELIMIT,
                   "Root.tree.child.child.child.child.child.child.child.child.child: "
                   "tables nested deeper than 10",
                   NULL);
  opt.max_depth = 1;
  expect_fail_desc(buf, size, &qvt_root_desc, &opt, QV_ELIMIT, "Root.tree: tables nested deeper than 1",
                   NULL);
  free(buf);

  /* the default is 64 levels */
  buf = chain_buffer(63, &size);
  expect_ok(buf, size, &qvt_root_desc, NULL);
  free(buf);
  buf = chain_buffer(64, &size);
  expect_fail_desc(buf, size, &qvt_root_desc, NULL, QV_ELIMIT, "tables nested deeper than 64",
                   NULL);
  free(buf);

  /* very deep (callers may raise the limit; recursion depth follows it): the
   * path is truncated, not overflowed */
  buf = chain_buffer(2000, &size);
  opt.max_depth = 100000;
  expect_ok(buf, size, &qvt_root_desc, &opt);
  opt.max_depth = 1000;
  expect_fail_desc(buf, size, &qvt_root_desc, &opt, QV_ELIMIT, "Root.tree.child.child", NULL);
  free(buf);
}

/* A vector of `n` references to one shared object: tiny buffer, n visits. */
static uint8_t *dag_buffer(unsigned slot, size_t n, size_t *size) {
  QvFbBuilder b;
  qvi_fb_builder_init(&b);
  QvFbRef shared = slot == QVT_V_LEAF ? qvt_build_leaf(&b, "shared", 1) : qvt_str(&b, "shared");
  QvFbRef *refs = malloc(n * sizeof *refs);
  assert_non_null(refs);
  for (size_t i = 0; i < n; i++) refs[i] = shared;
  QvFbRef v = qvi_fb_create_vector_refs(&b, refs, n);
  free(refs);
  return finish_copy(&b, root_with(&b, true, slot, v, 0), size);
}

static void test_shared_objects_limit(void **state) {
  (void)state;
  size_t size;
  /* Root + its name + 1000 x (Leaf + its name) = 2002 objects */
  uint8_t *buf = dag_buffer(QVT_V_LEAF, 1000, &size);
  assert_true(size < 8000);
  QvFbVerifyOptions opt = {0, 2002};
  expect_ok(buf, size, &qvt_root_desc, &opt);
  opt.max_tables = 2001;
  expect_fail_desc(buf, size, &qvt_root_desc, &opt, QV_ELIMIT,
                   "Root.v_leaf[999].name: more than 2001 tables and strings", NULL);
  opt.max_tables = 100;
  expect_fail_desc(buf, size, &qvt_root_desc, &opt, QV_ELIMIT, "Root.v_leaf[49]", "more than 100");
  free(buf);

  /* shared strings count too: Root + name + 5000 */
  buf = dag_buffer(QVT_V_STRING, 5000, &size);
  opt.max_tables = 5002;
  expect_ok(buf, size, &qvt_root_desc, &opt);
  opt.max_tables = 5001;
  expect_fail_desc(buf, size, &qvt_root_desc, &opt, QV_ELIMIT,
                   "Root.v_string[4999]: more than 5001 tables and strings", NULL);
  free(buf);

  /* the default limit (1,000,000) stops a 4 MB buffer of shared references */
  buf = dag_buffer(QVT_V_LEAF, 600000, &size);
  expect_fail_desc(buf, size, &qvt_root_desc, NULL, QV_ELIMIT, "more than 1000000", NULL);
  free(buf);
}

/* Work per visit is bounded by the schema, not by the vtable: a shared table
 * with a 64 KiB vtable referenced 200,000 times verifies quickly (unknown
 * vtable entries are not scanned). */
static void test_wide_vtable_dag(void **state) {
  (void)state;
  static const QvFbTableDesc empty = {"T", 0, NULL};
  static const QvFbFieldDesc root_fields[] = {{"v", 0, QV_FB_VEC_TABLE, 0, 0, 0, &empty, NULL}};
  static const QvFbTableDesc root = {"R", 1, root_fields};
  const size_t n = 200000, vt_size = 65534;
  /* [root uoffset][pad][R vtable 6][pad][R table: soffset, v][vector][T vtable][T] */
  size_t vec = 24, vt = vec + 4 + 4 * n, t = (vt + vt_size + 3) & ~(size_t)3, size = t + 4;
  uint8_t *buf = calloc(1, size);
  assert_non_null(buf);
  put32(buf, 0, 16);
  put16(buf, 8, 6);
  put16(buf, 10, 8);
  put16(buf, 12, 4);
  put32(buf, 16, 16 - 8);
  put32(buf, 20, (uint32_t)(vec - 20));
  put32(buf, vec, (uint32_t)n);
  put16(buf, vt, (uint16_t)vt_size);
  put16(buf, vt + 2, 4);
  put32(buf, t, (uint32_t)(t - vt));
  for (size_t i = 0; i < n; i++) put32(buf, vec + 4 + 4 * i, (uint32_t)(t - (vec + 4 + 4 * i)));
  clock_t start = clock();
  expect_ok(buf, size, &root, NULL);
  double secs = (double)(clock() - start) / CLOCKS_PER_SEC;
  if (secs >= 5.0) print_message("verification took %.2f s\n", secs);
  assert_true(secs < 5.0);
  free(buf);
}

static void test_bad_descriptions(void **state) {
  (void)state;
  size_t size;
  uint8_t *buf = full_buffer(&size);
  static const QvFbFieldDesc zero_elem[] = {{"v", QVT_V_INT, QV_FB_VEC_SCALAR, 0, 0, 0, NULL, NULL}};
  static const QvFbTableDesc d1 = {"D", 1, zero_elem};
  expect_fail_desc(buf, size, &d1, NULL, QV_EINVAL, "D.v: bad field description", NULL);
  static const QvFbFieldDesc no_union[] = {{"u", QVT_SHAPE, QV_FB_UNION, 0, 0, 0, NULL, NULL}};
  static const QvFbTableDesc d2 = {"D", 1, no_union};
  expect_fail_desc(buf, size, &d2, NULL, QV_EINVAL, "D.u: bad field description", NULL);
  static const QvFbFieldDesc no_table[] = {{"t", QVT_TREE, QV_FB_TABLE, 0, 0, 0, NULL, NULL}};
  static const QvFbTableDesc d3 = {"D", 1, no_table};
  expect_fail_desc(buf, size, &d3, NULL, QV_EINVAL, "D.t: bad field description", NULL);
  static const QvFbFieldDesc bad_kind[] = {{"k", 0, 42, 0, 4, 0, NULL, NULL}};
  static const QvFbTableDesc d4 = {"D", 1, bad_kind};
  expect_fail_desc(buf, size, &d4, NULL, QV_EINVAL, "D.k: bad field description", NULL);
  free(buf);
}

/* ------------------------------------------------------ mutation sweeps */

/* Exact-size copy so that any over-read leaves the allocation. */
static uint8_t *exact_copy(const uint8_t *src, size_t n) {
  uint8_t *p = malloc(n ? n : 1);
  assert_non_null(p);
  if (n) memcpy(p, src, n);
  return p;
}

/* If accepted, a buffer must read consistently. Returns the status. */
static QvStatus check_any(const uint8_t *src, size_t n, uint64_t *digest) {
  uint8_t *p = exact_copy(src, n);
  QvError err;
  QvStatus st = verify(p, n, &qvt_root_desc, NULL, &err);
  assert_true(st == QV_OK || st == QV_EINVAL || st == QV_ELIMIT);
  if (st == QV_OK) {
    uint64_t d = 0;
    const char *bad = qvt_walk(p, n, true, &d);
    if (bad) print_message("verified but unreadable at %s\n", bad);
    assert_null(bad);
    if (digest) *digest = d;
  } else {
    assert_true(strlen(err.message) > 0);
    assert_non_null(strstr(err.message, "Root"));
  }
  read_anyway(p, n);
  free(p);
  return st;
}

static void test_truncated_prefixes(void **state) {
  (void)state;
  size_t size;
  uint8_t *buf = full_buffer(&size);
  uint64_t whole = 0;
  assert_int_equal(check_any(buf, size, &whole), QV_OK);
  size_t accepted = 0;
  for (size_t n = 0; n < size; n++) {
    uint64_t d = 0;
    if (check_any(buf, n, &d) == QV_OK) {
      /* only trailing padding may be cut: everything still reads the same */
      accepted++;
      assert_true(size - n < 8);
      assert_true(d == whole);
    }
  }
  assert_true(accepted < 8);
  free(buf);
}

static void test_bit_flips(void **state) {
  (void)state;
  size_t size;
  uint8_t *buf = full_buffer(&size);
  size_t rejected = 0, total = 0;
  for (size_t i = 0; i < size; i++) {
    for (int bit = 0; bit < 8; bit++) {
      buf[i] ^= (uint8_t)(1u << bit);
      rejected += check_any(buf, size, NULL) != QV_OK;
      total++;
      buf[i] ^= (uint8_t)(1u << bit);
    }
    static const uint8_t values[] = {0x00, 0xFF, 0x80, 0x7F, 0x04};
    uint8_t orig = buf[i];
    for (size_t k = 0; k < sizeof values; k++) {
      buf[i] = values[k];
      rejected += check_any(buf, size, NULL) != QV_OK;
      total++;
    }
    buf[i] = orig;
  }
  /* many flips hit values (accepted); many hit structure (rejected) */
  print_message("bit flips: %zu of %zu rejected\n", rejected, total);
  assert_true(rejected > total / 20);
  assert_true(rejected < total);
  free(buf);
}

static uint32_t rng_next(uint64_t *s) {
  *s = *s * 6364136223846793005u + 1442695040888963407u;
  return (uint32_t)(*s >> 33);
}

static void test_random_garbage(void **state) {
  (void)state;
  uint64_t seed = 0x5eed;
  size_t fsize;
  uint8_t *full = full_buffer(&fsize);
  uint8_t buf[1024];
  assert_true(fsize <= sizeof buf);
  for (int iter = 0; iter < 20000; iter++) {
    size_t n = rng_next(&seed) % 300;
    int mode = iter % 3;
    if (mode == 0) { /* pure noise */
      for (size_t i = 0; i < n; i++) buf[i] = (uint8_t)rng_next(&seed);
    } else if (mode == 1) { /* small values: plausible offsets and sizes */
      for (size_t i = 0; i < n; i++) buf[i] = (uint8_t)(rng_next(&seed) % 24);
    } else { /* a valid buffer with a few random bytes and a random cut */
      n = fsize - rng_next(&seed) % 64;
      memcpy(buf, full, n);
      for (int k = 0; k < 4; k++) buf[rng_next(&seed) % n] = (uint8_t)rng_next(&seed);
    }
    check_any(buf, n, NULL);
  }
  free(full);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_null_and_tiny),
      cmocka_unit_test(test_root_offset),
      cmocka_unit_test(test_vtable_outside),
      cmocka_unit_test(test_vtable_sizes),
      cmocka_unit_test(test_vtable_entry_outside_table),
      cmocka_unit_test(test_strings),
      cmocka_unit_test(test_vectors),
      cmocka_unit_test(test_misaligned_8_byte_data),
      cmocka_unit_test(test_required_fields),
      cmocka_unit_test(test_unions),
      cmocka_unit_test(test_depth_limit),
      cmocka_unit_test(test_shared_objects_limit),
      cmocka_unit_test(test_wide_vtable_dag),
      cmocka_unit_test(test_bad_descriptions),
      cmocka_unit_test(test_truncated_prefixes),
      cmocka_unit_test(test_bit_flips),
      cmocka_unit_test(test_random_garbage),
  };
  return qv_test_run(tests, NULL, NULL);
}
