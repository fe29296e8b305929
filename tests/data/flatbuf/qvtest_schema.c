/* quiver_test.fbs as seen by quiver's FlatBuffers layer: the verifier
 * description, builders and walkers declared in qvtest_schema.h. */
#include "qvtest_schema.h"

#include <stdbool.h>

QvtMixed qvt_load_mixed(const uint8_t *p) {
  QvtMixed m;
  m.a = (int8_t)p[0];
  m.b = qvi_le_i64(p + 8);
  m.c = (int16_t)(p[16] | p[17] << 8);
  return m;
}

/* Serialises Mixed as flatc lays it out (padding zeroed). */
void qvt_store_mixed(uint8_t *p, QvtMixed m) {
  memset(p, 0, QVT_MIXED_SIZE);
  p[0] = (uint8_t)m.a;
  uint64_t b = (uint64_t)m.b;
  for (int i = 0; i < 8; i++) p[8 + i] = (uint8_t)(b >> (8 * i));
  p[16] = (uint8_t)((uint16_t)m.c & 0xFF);
  p[17] = (uint8_t)((uint16_t)m.c >> 8);
}

/* ------------------------------------------------------ descriptions */

#define QVT_FIELD(name, slot, kind, req, size, align, table, un) \
  { name, slot, kind, req, size, align, table, un }

static const QvFbFieldDesc qvt_leaf_fields[] = {
    QVT_FIELD("name", QVT_LEAF_NAME, QV_FB_STRING, 1, 0, 0, NULL, NULL),
    QVT_FIELD("value", QVT_LEAF_VALUE, QV_FB_SCALAR, 0, 4, 0, NULL, NULL),
};
static const QvFbTableDesc qvt_leaf_desc = {"Leaf", 2, qvt_leaf_fields};

/* Node refers to itself: a tentative definition first. */
static const QvFbTableDesc qvt_node_desc;
static const QvFbFieldDesc qvt_node_fields[] = {
    QVT_FIELD("label", QVT_NODE_LABEL, QV_FB_STRING, 0, 0, 0, NULL, NULL),
    QVT_FIELD("child", QVT_NODE_CHILD, QV_FB_TABLE, 0, 0, 0, &qvt_node_desc, NULL),
    QVT_FIELD("leaf", QVT_NODE_LEAF, QV_FB_TABLE, 0, 0, 0, &qvt_leaf_desc, NULL),
    QVT_FIELD("depth", QVT_NODE_DEPTH, QV_FB_SCALAR, 0, 1, 0, NULL, NULL),
};
static const QvFbTableDesc qvt_node_desc = {"Node", 4, qvt_node_fields};

static const QvFbFieldDesc qvt_circle_fields[] = {
    QVT_FIELD("radius", QVT_CIRCLE_RADIUS, QV_FB_SCALAR, 0, 8, 0, NULL, NULL),
};
static const QvFbTableDesc qvt_circle_desc = {"Circle", 1, qvt_circle_fields};

static const QvFbFieldDesc qvt_square_fields[] = {
    QVT_FIELD("side", QVT_SQUARE_SIDE, QV_FB_SCALAR, 0, 4, 0, NULL, NULL),
    QVT_FIELD("label", QVT_SQUARE_LABEL, QV_FB_STRING, 1, 0, 0, NULL, NULL),
};
static const QvFbTableDesc qvt_square_desc = {"Square", 2, qvt_square_fields};

static const QvFbFieldDesc qvt_polygon_fields[] = {
    QVT_FIELD("points", QVT_POLYGON_POINTS, QV_FB_VEC_STRUCT, 0, QVT_MIXED_SIZE, QVT_MIXED_ALIGN,
              NULL, NULL),
    QVT_FIELD("names", QVT_POLYGON_NAMES, QV_FB_VEC_STRING, 0, 0, 0, NULL, NULL),
};
static const QvFbTableDesc qvt_polygon_desc = {"Polygon", 2, qvt_polygon_fields};

static const QvFbTableDesc *const qvt_shape_members[] = {NULL, &qvt_circle_desc,
                                                         &qvt_square_desc, &qvt_polygon_desc};
const QvFbUnionDesc qvt_shape_desc = {"Shape", 4, qvt_shape_members};

static const QvFbFieldDesc qvt_root_fields[] = {
    QVT_FIELD("f_bool", QVT_F_BOOL, QV_FB_SCALAR, 0, 1, 0, NULL, NULL),
    QVT_FIELD("f_byte", QVT_F_BYTE, QV_FB_SCALAR, 0, 1, 0, NULL, NULL),
    QVT_FIELD("f_ubyte", QVT_F_UBYTE, QV_FB_SCALAR, 0, 1, 0, NULL, NULL),
    QVT_FIELD("f_short", QVT_F_SHORT, QV_FB_SCALAR, 0, 2, 0, NULL, NULL),
    QVT_FIELD("f_ushort", QVT_F_USHORT, QV_FB_SCALAR, 0, 2, 0, NULL, NULL),
    QVT_FIELD("f_int", QVT_F_INT, QV_FB_SCALAR, 0, 4, 0, NULL, NULL),
    QVT_FIELD("f_uint", QVT_F_UINT, QV_FB_SCALAR, 0, 4, 0, NULL, NULL),
    QVT_FIELD("f_long", QVT_F_LONG, QV_FB_SCALAR, 0, 8, 0, NULL, NULL),
    QVT_FIELD("f_ulong", QVT_F_ULONG, QV_FB_SCALAR, 0, 8, 0, NULL, NULL),
    QVT_FIELD("f_float", QVT_F_FLOAT, QV_FB_SCALAR, 0, 4, 0, NULL, NULL),
    QVT_FIELD("f_double", QVT_F_DOUBLE, QV_FB_SCALAR, 0, 8, 0, NULL, NULL),
    QVT_FIELD("color", QVT_COLOR, QV_FB_SCALAR, 0, 1, 0, NULL, NULL),
    QVT_FIELD("level", QVT_LEVEL, QV_FB_SCALAR, 0, 2, 0, NULL, NULL),
    QVT_FIELD("mixed", QVT_MIXED, QV_FB_STRUCT, 0, QVT_MIXED_SIZE, QVT_MIXED_ALIGN, NULL, NULL),
    QVT_FIELD("name", QVT_NAME, QV_FB_STRING, 1, 0, 0, NULL, NULL),
    QVT_FIELD("empty", QVT_EMPTY, QV_FB_STRING, 0, 0, 0, NULL, NULL),
    QVT_FIELD("utf8", QVT_UTF8, QV_FB_STRING, 0, 0, 0, NULL, NULL),
    QVT_FIELD("v_ubyte", QVT_V_UBYTE, QV_FB_VEC_SCALAR, 0, 1, 0, NULL, NULL),
    QVT_FIELD("v_short", QVT_V_SHORT, QV_FB_VEC_SCALAR, 0, 2, 0, NULL, NULL),
    QVT_FIELD("v_int", QVT_V_INT, QV_FB_VEC_SCALAR, 0, 4, 0, NULL, NULL),
    QVT_FIELD("v_long", QVT_V_LONG, QV_FB_VEC_SCALAR, 0, 8, 0, NULL, NULL),
    QVT_FIELD("v_double", QVT_V_DOUBLE, QV_FB_VEC_SCALAR, 0, 8, 0, NULL, NULL),
    QVT_FIELD("v_mixed", QVT_V_MIXED, QV_FB_VEC_STRUCT, 0, QVT_MIXED_SIZE, QVT_MIXED_ALIGN, NULL,
              NULL),
    QVT_FIELD("v_small", QVT_V_SMALL, QV_FB_VEC_STRUCT, 0, QVT_SMALL_SIZE, QVT_SMALL_ALIGN, NULL,
              NULL),
    QVT_FIELD("v_string", QVT_V_STRING, QV_FB_VEC_STRING, 0, 0, 0, NULL, NULL),
    QVT_FIELD("v_leaf", QVT_V_LEAF, QV_FB_VEC_TABLE, 0, 0, 0, &qvt_leaf_desc, NULL),
    QVT_FIELD("tree", QVT_TREE, QV_FB_TABLE, 0, 0, 0, &qvt_node_desc, NULL),
    QVT_FIELD("shape", QVT_SHAPE, QV_FB_UNION, 0, 0, 0, NULL, &qvt_shape_desc),
    QVT_FIELD("shape2", QVT_SHAPE2, QV_FB_UNION, 0, 0, 0, NULL, &qvt_shape_desc),
    QVT_FIELD("small", QVT_SMALL, QV_FB_STRUCT, 0, QVT_SMALL_SIZE, QVT_SMALL_ALIGN, NULL, NULL),
    QVT_FIELD("v_bool", QVT_V_BOOL, QV_FB_VEC_SCALAR, 0, 1, 0, NULL, NULL),
};
const QvFbTableDesc qvt_root_desc = {
    "Root", sizeof qvt_root_fields / sizeof qvt_root_fields[0], qvt_root_fields};

/* ------------------------------------------------------------ builders */

/* The documents of tests/data/flatbuf/{full,minimal,circle}.json, built by
 * quiver's builder. */

QvFbRef qvt_str(QvFbBuilder *b, const char *s) {
  return qvi_fb_create_string(b, s, strlen(s));
}

QvFbRef qvt_build_leaf(QvFbBuilder *b, const char *name, int32_t value) {
  QvFbRef n = qvt_str(b, name);
  qvi_fb_table_start(b);
  qvi_fb_add_ref(b, QVT_LEAF_NAME, n);
  qvi_fb_add_i32(b, QVT_LEAF_VALUE, value, QVT_DEF_LEAF_VALUE);
  return qvi_fb_table_end(b);
}

QvFbRef qvt_build_node(QvFbBuilder *b, int depth, QvFbRef child, QvFbRef leaf) {
  char label[8];
  snprintf(label, sizeof label, "d%d", depth);
  QvFbRef l = qvt_str(b, label);
  qvi_fb_table_start(b);
  qvi_fb_add_ref(b, QVT_NODE_LABEL, l);
  qvi_fb_add_ref(b, QVT_NODE_CHILD, child);
  qvi_fb_add_ref(b, QVT_NODE_LEAF, leaf);
  qvi_fb_add_u8(b, QVT_NODE_DEPTH, (uint8_t)depth, 0);
  return qvi_fb_table_end(b);
}

/* n <= 4 */
QvFbRef qvt_mixed_vector(QvFbBuilder *b, const QvtMixed *m, size_t n) {
  uint8_t raw[4 * QVT_MIXED_SIZE];
  if (n > 4) return 0;
  for (size_t i = 0; i < n; i++) qvt_store_mixed(raw + i * QVT_MIXED_SIZE, m[i]);
  return qvi_fb_create_struct_vector(b, raw, n, QVT_MIXED_SIZE, QVT_MIXED_ALIGN);
}

/* n <= 8 */
static QvFbRef qvt_string_vector(QvFbBuilder *b, const char *const *s, size_t n) {
  QvFbRef refs[8];
  if (n > 8) return 0;
  for (size_t i = 0; i < n; i++) refs[i] = qvt_str(b, s[i]);
  return qvi_fb_create_vector_refs(b, refs, n);
}

/* full.json, built by quiver. `old_field` >= 0 also sets the field the
 * schema marks deprecated (as an old writer would). */
QvFbRef qvt_build_full(QvFbBuilder *b, int32_t old_field) {
  QvFbRef name = qvt_str(b, "root");
  QvFbRef empty = qvt_str(b, "");
  QvFbRef utf8 = qvt_str(b, QVT_UTF8_TEXT);
  static const uint8_t ub[] = {0, 1, 127, 128, 255};
  QvFbRef v_ubyte = qvi_fb_create_vector(b, ub, 5, 1, 1);
  static const int16_t sh[] = {-32768, -1, 0, 1, 32767};
  QvFbRef v_short = qvi_fb_create_vector(b, sh, 5, 2, 2);
  static const int32_t in[] = {INT32_MIN, 0, INT32_MAX};
  QvFbRef v_int = qvi_fb_create_vector(b, in, 3, 4, 4);
  static const int64_t lo[] = {INT64_MIN, -1, INT64_MAX};
  QvFbRef v_long = qvi_fb_create_vector(b, lo, 3, 8, 8);
  static const double db[] = {0.5, -1.25, 1e300};
  QvFbRef v_double = qvi_fb_create_vector(b, db, 3, 8, 8);
  static const QvtMixed vm[] = {{1, -2, 3}, {-128, INT64_MAX, -32768}};
  QvFbRef v_mixed = qvt_mixed_vector(b, vm, 2);
  /* Small {x: short, y: ubyte} + 1 byte of padding */
  static const uint8_t vs[] = {10, 0, 20, 0, 0xF6, 0xFF, 255, 0, 0, 0, 0, 0};
  QvFbRef v_small = qvi_fb_create_struct_vector(b, vs, 3, QVT_SMALL_SIZE, QVT_SMALL_ALIGN);
  static const char *const strs[] = {"alpha", "", QVT_UNICODE_TEXT};
  QvFbRef v_string = qvt_string_vector(b, strs, 3);
  QvFbRef leaves[3] = {qvt_build_leaf(b, "l0", 0), qvt_build_leaf(b, "l1", QVT_DEF_LEAF_VALUE),
                       qvt_build_leaf(b, "l2", -9)};
  QvFbRef v_leaf = qvi_fb_create_vector_refs(b, leaves, 3);

  QvFbRef d3 = qvt_build_node(b, 3, 0, qvt_build_leaf(b, "leaf3", 33));
  QvFbRef d2 = qvt_build_node(b, 2, d3, 0);
  QvFbRef d1 = qvt_build_node(b, 1, d2, qvt_build_leaf(b, "leaf1", 11));
  QvFbRef d0 = qvt_build_node(b, 0, d1, 0);

  QvFbRef sq_label = qvt_str(b, "sq");
  qvi_fb_table_start(b);
  qvi_fb_add_i32(b, QVT_SQUARE_SIDE, 5, QVT_DEF_SIDE);
  qvi_fb_add_ref(b, QVT_SQUARE_LABEL, sq_label);
  QvFbRef square = qvi_fb_table_end(b);

  static const QvtMixed pts[] = {{4, 40, 400}};
  QvFbRef points = qvt_mixed_vector(b, pts, 1);
  static const char *const pn[] = {"p", "q"};
  QvFbRef names = qvt_string_vector(b, pn, 2);
  qvi_fb_table_start(b);
  qvi_fb_add_ref(b, QVT_POLYGON_POINTS, points);
  qvi_fb_add_ref(b, QVT_POLYGON_NAMES, names);
  QvFbRef polygon = qvi_fb_table_end(b);

  static const uint8_t bools[] = {1, 0, 1};
  QvFbRef v_bool = qvi_fb_create_vector(b, bools, 3, 1, 1);

  uint8_t mixed[QVT_MIXED_SIZE];
  qvt_store_mixed(mixed, (QvtMixed){-7, 1234567890123456789, -300});
  static const uint8_t small[] = {0xFE, 0xFF, 3, 0};

  qvi_fb_table_start(b);
  qvi_fb_add_bool(b, QVT_F_BOOL, false, QVT_DEF_BOOL);
  qvi_fb_add_i8(b, QVT_F_BYTE, -128, QVT_DEF_BYTE);
  qvi_fb_add_u8(b, QVT_F_UBYTE, 255, QVT_DEF_UBYTE);
  qvi_fb_add_i16(b, QVT_F_SHORT, -32768, QVT_DEF_SHORT);
  qvi_fb_add_u16(b, QVT_F_USHORT, 65535, QVT_DEF_USHORT);
  qvi_fb_add_i32(b, QVT_F_INT, INT32_MIN, QVT_DEF_INT);
  qvi_fb_add_u32(b, QVT_F_UINT, UINT32_MAX, QVT_DEF_UINT);
  qvi_fb_add_i64(b, QVT_F_LONG, INT64_MIN, QVT_DEF_LONG);
  qvi_fb_add_u64(b, QVT_F_ULONG, UINT64_MAX, QVT_DEF_ULONG);
  qvi_fb_add_f32(b, QVT_F_FLOAT, -0.75f, QVT_DEF_FLOAT);
  qvi_fb_add_f64(b, QVT_F_DOUBLE, 6.02214076e+23, QVT_DEF_DOUBLE);
  if (old_field >= 0) qvi_fb_add_i32(b, QVT_OLD_FIELD, old_field, 0);
  qvi_fb_add_i8(b, QVT_COLOR, QVT_COLOR_BLUE, QVT_DEF_COLOR);
  qvi_fb_add_u16(b, QVT_LEVEL, QVT_LEVEL_HIGH, QVT_DEF_LEVEL);
  qvi_fb_add_struct(b, QVT_MIXED, mixed, QVT_MIXED_SIZE, QVT_MIXED_ALIGN);
  qvi_fb_add_ref(b, QVT_NAME, name);
  qvi_fb_add_ref(b, QVT_EMPTY, empty);
  qvi_fb_add_ref(b, QVT_UTF8, utf8);
  qvi_fb_add_ref(b, QVT_V_UBYTE, v_ubyte);
  qvi_fb_add_ref(b, QVT_V_SHORT, v_short);
  qvi_fb_add_ref(b, QVT_V_INT, v_int);
  qvi_fb_add_ref(b, QVT_V_LONG, v_long);
  qvi_fb_add_ref(b, QVT_V_DOUBLE, v_double);
  qvi_fb_add_ref(b, QVT_V_MIXED, v_mixed);
  qvi_fb_add_ref(b, QVT_V_SMALL, v_small);
  qvi_fb_add_ref(b, QVT_V_STRING, v_string);
  qvi_fb_add_ref(b, QVT_V_LEAF, v_leaf);
  qvi_fb_add_ref(b, QVT_TREE, d0);
  qvi_fb_add_u8(b, QVT_SHAPE_TYPE, QVT_SHAPE_SQUARE, QVT_SHAPE_NONE);
  qvi_fb_add_ref(b, QVT_SHAPE, square);
  qvi_fb_add_u8(b, QVT_SHAPE2_TYPE, QVT_SHAPE_POLYGON, QVT_SHAPE_NONE);
  qvi_fb_add_ref(b, QVT_SHAPE2, polygon);
  qvi_fb_add_struct(b, QVT_SMALL, small, QVT_SMALL_SIZE, QVT_SMALL_ALIGN);
  qvi_fb_add_ref(b, QVT_V_BOOL, v_bool);
  return qvi_fb_table_end(b);
}

/* minimal.json: only the required name. */
QvFbRef qvt_build_minimal(QvFbBuilder *b) {
  QvFbRef name = qvt_str(b, "");
  qvi_fb_table_start(b);
  qvi_fb_add_ref(b, QVT_NAME, name);
  return qvi_fb_table_end(b);
}

/* circle.json: zero values that differ from their defaults, empty vectors. */
QvFbRef qvt_build_circle(QvFbBuilder *b) {
  QvFbRef name = qvt_str(b, "c");
  QvFbRef v_leaf = qvi_fb_create_vector_refs(b, NULL, 0);
  QvFbRef v_string = qvi_fb_create_vector_refs(b, NULL, 0);
  QvFbRef v_mixed = qvi_fb_create_struct_vector(b, NULL, 0, QVT_MIXED_SIZE, QVT_MIXED_ALIGN);
  QvFbRef circles[2];
  for (int i = 0; i < 2; i++) {
    qvi_fb_table_start(b);
    qvi_fb_add_f64(b, QVT_CIRCLE_RADIUS, i ? 2.5 : 0.0, QVT_DEF_RADIUS);
    circles[i] = qvi_fb_table_end(b);
  }
  qvi_fb_table_start(b);
  qvi_fb_add_i32(b, QVT_F_INT, 0, QVT_DEF_INT);
  qvi_fb_add_f64(b, QVT_F_DOUBLE, 0.0, QVT_DEF_DOUBLE);
  qvi_fb_add_ref(b, QVT_NAME, name);
  qvi_fb_add_ref(b, QVT_V_LEAF, v_leaf);
  qvi_fb_add_ref(b, QVT_V_STRING, v_string);
  qvi_fb_add_ref(b, QVT_V_MIXED, v_mixed);
  qvi_fb_add_u8(b, QVT_SHAPE_TYPE, QVT_SHAPE_CIRCLE, QVT_SHAPE_NONE);
  qvi_fb_add_ref(b, QVT_SHAPE, circles[0]);
  qvi_fb_add_u8(b, QVT_SHAPE2_TYPE, QVT_SHAPE_CIRCLE, QVT_SHAPE_NONE);
  qvi_fb_add_ref(b, QVT_SHAPE2, circles[1]);
  return qvi_fb_table_end(b);
}

/* ------------------------------------------------------------ walkers */

/* Folds values into a digest so that no read can be optimised away. */
static void qvt_mix(uint64_t *d, uint64_t v) {
  *d = (*d ^ v) * 0x100000001B3u;
}

/* Raw vector length stored in the buffer (unclamped), or -1 when the field's
 * offset does not lead inside the buffer. */
static int64_t qvt_raw_vector_len(QvFbTable t, unsigned slot) {
  size_t pos = qvi_fb_field_pos(t, slot, 4);
  if (pos == 0) return -1;
  uint32_t rel = (uint32_t)qvi_le_i32(t.buf + pos);
  if (rel == 0 || rel >= t.size - pos || t.size - pos - rel < 4) return -1;
  return (int64_t)(uint32_t)qvi_le_i32(t.buf + pos + rel);
}

/* In strict mode (the buffer verified against qvt_root_desc) a present
 * field must read as present and complete; returns the first field that
 * does not, else NULL. In lax mode only the digest matters. */
#define QVT_CHECK(cond, what) \
  do {                        \
    if (strict && !(cond)) return what; \
  } while (0)

static const char *qvt_walk_string(QvFbString s, bool present, bool strict,
                                          uint64_t *d, const char *what) {
  QVT_CHECK(!present || s.data != NULL, what);
  if (s.data) {
    QVT_CHECK(s.data[s.len] == '\0', what);
    for (size_t i = 0; i < s.len; i++) qvt_mix(d, (uint8_t)s.data[i]);
    qvt_mix(d, s.len);
  }
  return NULL;
}

static const char *qvt_walk_leaf(QvFbTable t, bool strict, uint64_t *d) {
  QVT_CHECK(qvi_fb_table_valid(t), "Leaf");
  const char *e = qvt_walk_string(qvi_fb_string(t, QVT_LEAF_NAME), true, strict, d, "Leaf.name");
  if (e) return e;
  qvt_mix(d, (uint32_t)qvi_fb_i32(t, QVT_LEAF_VALUE, QVT_DEF_LEAF_VALUE));
  return NULL;
}

static const char *qvt_walk_string_vector(QvFbTable t, unsigned slot, bool strict,
                                                 uint64_t *d, const char *what) {
  QvFbVector v = qvi_fb_vector(t, slot, 4);
  QVT_CHECK(!qvi_fb_has(t, slot) || (v.buf != NULL && (int64_t)v.len == qvt_raw_vector_len(t, slot)),
            what);
  for (size_t i = 0; i < v.len; i++) {
    const char *e = qvt_walk_string(qvi_fb_vec_string(v, i), true, strict, d, what);
    if (e) return e;
  }
  return NULL;
}

static const char *qvt_walk_scalar_vector(QvFbTable t, unsigned slot, size_t elem,
                                                 bool strict, uint64_t *d, const char *what) {
  QvFbVector v = qvi_fb_vector(t, slot, elem);
  QVT_CHECK(!qvi_fb_has(t, slot) || (v.buf != NULL && (int64_t)v.len == qvt_raw_vector_len(t, slot)),
            what);
  for (size_t i = 0; i < v.len; i++) {
    switch (elem) {
      case 1: qvt_mix(d, qvi_fb_vec_u8(v, i)); break;
      case 2: qvt_mix(d, (uint16_t)qvi_fb_vec_i16(v, i)); break;
      case 4: qvt_mix(d, (uint32_t)qvi_fb_vec_i32(v, i)); break;
      default: {
        double f = qvi_fb_vec_f64(v, i);
        uint64_t bits;
        memcpy(&bits, &f, 8);
        qvt_mix(d, bits ^ (uint64_t)qvi_fb_vec_i64(v, i));
        break;
      }
    }
  }
  return NULL;
}

static const char *qvt_walk_shape(QvFbTable t, unsigned slot, bool strict, uint64_t *d) {
  uint8_t tag = qvi_fb_u8(t, slot - 1, QVT_SHAPE_NONE);
  QvFbTable s = qvi_fb_table(t, slot);
  qvt_mix(d, tag);
  const char *e;
  switch (tag) {
    case QVT_SHAPE_CIRCLE: {
      QVT_CHECK(qvi_fb_table_valid(s), "Circle");
      double r = qvi_fb_f64(s, QVT_CIRCLE_RADIUS, QVT_DEF_RADIUS);
      uint64_t bits;
      memcpy(&bits, &r, 8);
      qvt_mix(d, bits);
      return NULL;
    }
    case QVT_SHAPE_SQUARE:
      QVT_CHECK(qvi_fb_table_valid(s), "Square");
      qvt_mix(d, (uint32_t)qvi_fb_i32(s, QVT_SQUARE_SIDE, QVT_DEF_SIDE));
      return qvt_walk_string(qvi_fb_string(s, QVT_SQUARE_LABEL), true, strict, d, "Square.label");
    case QVT_SHAPE_POLYGON: {
      QVT_CHECK(qvi_fb_table_valid(s), "Polygon");
      QvFbVector pts = qvi_fb_vector(s, QVT_POLYGON_POINTS, QVT_MIXED_SIZE);
      QVT_CHECK(!qvi_fb_has(s, QVT_POLYGON_POINTS) || pts.buf != NULL, "Polygon.points");
      for (size_t i = 0; i < pts.len; i++) {
        const uint8_t *p = qvi_fb_vec_at(pts, i);
        QVT_CHECK(p != NULL, "Polygon.points[i]");
        if (p) {
          QvtMixed m = qvt_load_mixed(p);
          qvt_mix(d, (uint64_t)m.a ^ (uint64_t)m.b ^ (uint64_t)m.c);
        }
      }
      if ((e = qvt_walk_string_vector(s, QVT_POLYGON_NAMES, strict, d, "Polygon.names")))
        return e;
      return NULL;
    }
    default:
      /* NONE, or a tag the verifier would reject: still read the value */
      qvt_mix(d, qvi_fb_table_valid(s));
      return NULL;
  }
}

/* Walks every field of a Root buffer through the typed accessors. */
const char *qvt_walk(const uint8_t *buf, size_t size, bool strict, uint64_t *d) {
  QvFbTable r;
  bool ok = qvi_fb_root(buf, size, &r);
  QVT_CHECK(ok, "Root");
  if (!ok) return NULL;
  const char *e;
  qvt_mix(d, qvi_fb_bool(r, QVT_F_BOOL, QVT_DEF_BOOL));
  qvt_mix(d, (uint8_t)qvi_fb_i8(r, QVT_F_BYTE, QVT_DEF_BYTE));
  qvt_mix(d, qvi_fb_u8(r, QVT_F_UBYTE, QVT_DEF_UBYTE));
  qvt_mix(d, (uint16_t)qvi_fb_i16(r, QVT_F_SHORT, QVT_DEF_SHORT));
  qvt_mix(d, qvi_fb_u16(r, QVT_F_USHORT, QVT_DEF_USHORT));
  qvt_mix(d, (uint32_t)qvi_fb_i32(r, QVT_F_INT, QVT_DEF_INT));
  qvt_mix(d, qvi_fb_u32(r, QVT_F_UINT, QVT_DEF_UINT));
  qvt_mix(d, (uint64_t)qvi_fb_i64(r, QVT_F_LONG, QVT_DEF_LONG));
  qvt_mix(d, qvi_fb_u64(r, QVT_F_ULONG, QVT_DEF_ULONG));
  float f = qvi_fb_f32(r, QVT_F_FLOAT, QVT_DEF_FLOAT);
  double g = qvi_fb_f64(r, QVT_F_DOUBLE, QVT_DEF_DOUBLE);
  uint32_t fb;
  uint64_t gb;
  memcpy(&fb, &f, 4);
  memcpy(&gb, &g, 8);
  qvt_mix(d, fb);
  qvt_mix(d, gb);
  qvt_mix(d, (uint32_t)qvi_fb_i32(r, QVT_OLD_FIELD, 0));
  qvt_mix(d, (uint8_t)qvi_fb_i8(r, QVT_COLOR, QVT_DEF_COLOR));
  qvt_mix(d, qvi_fb_u16(r, QVT_LEVEL, QVT_DEF_LEVEL));

  const uint8_t *mixed = qvi_fb_struct(r, QVT_MIXED, QVT_MIXED_SIZE);
  QVT_CHECK(!qvi_fb_has(r, QVT_MIXED) || mixed != NULL, "Root.mixed");
  if (mixed) {
    QvtMixed m = qvt_load_mixed(mixed);
    qvt_mix(d, (uint64_t)m.a ^ (uint64_t)m.b ^ (uint64_t)m.c);
  }
  const uint8_t *small = qvi_fb_struct(r, QVT_SMALL, QVT_SMALL_SIZE);
  QVT_CHECK(!qvi_fb_has(r, QVT_SMALL) || small != NULL, "Root.small");
  if (small) qvt_mix(d, qvi_le_i32(small));

  if ((e = qvt_walk_string(qvi_fb_string(r, QVT_NAME), true, strict, d, "Root.name"))) return e;
  if ((e = qvt_walk_string(qvi_fb_string(r, QVT_EMPTY), qvi_fb_has(r, QVT_EMPTY), strict, d,
                           "Root.empty")))
    return e;
  if ((e = qvt_walk_string(qvi_fb_string(r, QVT_UTF8), qvi_fb_has(r, QVT_UTF8), strict, d,
                           "Root.utf8")))
    return e;

  if ((e = qvt_walk_scalar_vector(r, QVT_V_UBYTE, 1, strict, d, "Root.v_ubyte"))) return e;
  if ((e = qvt_walk_scalar_vector(r, QVT_V_SHORT, 2, strict, d, "Root.v_short"))) return e;
  if ((e = qvt_walk_scalar_vector(r, QVT_V_INT, 4, strict, d, "Root.v_int"))) return e;
  if ((e = qvt_walk_scalar_vector(r, QVT_V_LONG, 8, strict, d, "Root.v_long"))) return e;
  if ((e = qvt_walk_scalar_vector(r, QVT_V_DOUBLE, 8, strict, d, "Root.v_double"))) return e;
  if ((e = qvt_walk_scalar_vector(r, QVT_V_BOOL, 1, strict, d, "Root.v_bool"))) return e;

  QvFbVector vm = qvi_fb_vector(r, QVT_V_MIXED, QVT_MIXED_SIZE);
  QVT_CHECK(!qvi_fb_has(r, QVT_V_MIXED) ||
                (vm.buf != NULL && (int64_t)vm.len == qvt_raw_vector_len(r, QVT_V_MIXED)),
            "Root.v_mixed");
  for (size_t i = 0; i < vm.len; i++) {
    const uint8_t *p = qvi_fb_vec_at(vm, i);
    QVT_CHECK(p != NULL, "Root.v_mixed[i]");
    if (p) {
      QvtMixed m = qvt_load_mixed(p);
      qvt_mix(d, (uint64_t)m.a ^ (uint64_t)m.b ^ (uint64_t)m.c);
    }
  }
  QvFbVector vs = qvi_fb_vector(r, QVT_V_SMALL, QVT_SMALL_SIZE);
  QVT_CHECK(!qvi_fb_has(r, QVT_V_SMALL) ||
                (vs.buf != NULL && (int64_t)vs.len == qvt_raw_vector_len(r, QVT_V_SMALL)),
            "Root.v_small");
  for (size_t i = 0; i < vs.len; i++) {
    qvt_mix(d, (uint16_t)qvi_fb_vec_i16(vs, i));
    const uint8_t *p = qvi_fb_vec_at(vs, i);
    if (p) qvt_mix(d, p[2]);
  }

  if ((e = qvt_walk_string_vector(r, QVT_V_STRING, strict, d, "Root.v_string"))) return e;

  QvFbVector vl = qvi_fb_vector(r, QVT_V_LEAF, 4);
  QVT_CHECK(!qvi_fb_has(r, QVT_V_LEAF) ||
                (vl.buf != NULL && (int64_t)vl.len == qvt_raw_vector_len(r, QVT_V_LEAF)),
            "Root.v_leaf");
  for (size_t i = 0; i < vl.len; i++)
    if ((e = qvt_walk_leaf(qvi_fb_vec_table(vl, i), strict, d))) return e;

  /* Offsets only point forward, so the chain ends; the bound is for safety. */
  QvFbTable n = qvi_fb_table(r, QVT_TREE);
  QVT_CHECK(!qvi_fb_has(r, QVT_TREE) || qvi_fb_table_valid(n), "Root.tree");
  for (int depth = 0; qvi_fb_table_valid(n) && depth < 1000; depth++) {
    if ((e = qvt_walk_string(qvi_fb_string(n, QVT_NODE_LABEL), qvi_fb_has(n, QVT_NODE_LABEL),
                             strict, d, "Node.label")))
      return e;
    qvt_mix(d, qvi_fb_u8(n, QVT_NODE_DEPTH, 0));
    QvFbTable leaf = qvi_fb_table(n, QVT_NODE_LEAF);
    QVT_CHECK(!qvi_fb_has(n, QVT_NODE_LEAF) || qvi_fb_table_valid(leaf), "Node.leaf");
    if (qvi_fb_table_valid(leaf) && (e = qvt_walk_leaf(leaf, strict, d))) return e;
    QvFbTable child = qvi_fb_table(n, QVT_NODE_CHILD);
    QVT_CHECK(!qvi_fb_has(n, QVT_NODE_CHILD) || qvi_fb_table_valid(child), "Node.child");
    n = child;
  }

  if ((e = qvt_walk_shape(r, QVT_SHAPE, strict, d))) return e;
  if ((e = qvt_walk_shape(r, QVT_SHAPE2, strict, d))) return e;
  return NULL;
}

/* Schema-blind probing: every accessor on every slot with every width, and
 * into the sub-tables found (fields, and the first element of vectors of
 * offsets), `depth` levels deep. For unverified input; the element loop
 * is capped to keep a fuzzing iteration cheap. */
static void qvt_probe_table(QvFbTable t, int depth, uint64_t *d) {
  static const size_t widths[] = {1, 2, 3, 4, 8, 24};
  for (unsigned slot = 0; slot < QVT_ROOT_SLOTS + 2; slot++) {
    qvt_mix(d, qvi_fb_has(t, slot));
    qvt_mix(d, qvi_fb_u8(t, slot, 1) ^ (uint8_t)qvi_fb_i8(t, slot, 2) ^ qvi_fb_bool(t, slot, true));
    qvt_mix(d, (uint16_t)qvi_fb_i16(t, slot, 3) ^ qvi_fb_u16(t, slot, 4));
    qvt_mix(d, (uint32_t)qvi_fb_i32(t, slot, 5) ^ qvi_fb_u32(t, slot, 6));
    qvt_mix(d, (uint64_t)qvi_fb_i64(t, slot, 7) ^ qvi_fb_u64(t, slot, 8));
    float f = qvi_fb_f32(t, slot, 9.0f);
    double g = qvi_fb_f64(t, slot, 10.0);
    uint32_t fb;
    uint64_t gb;
    memcpy(&fb, &f, 4);
    memcpy(&gb, &g, 8);
    qvt_mix(d, fb ^ gb);
    QvFbString s = qvi_fb_string(t, slot);
    for (size_t i = 0; s.data && i <= s.len; i++) qvt_mix(d, (uint8_t)s.data[i]);
    for (size_t w = 0; w < sizeof widths / sizeof widths[0]; w++) {
      qvt_mix(d, qvi_fb_field_pos(t, slot, widths[w]));
      const uint8_t *p = qvi_fb_struct(t, slot, widths[w]);
      for (size_t i = 0; p && i < widths[w]; i++) qvt_mix(d, p[i]);
      QvFbVector v = qvi_fb_vector(t, slot, widths[w]);
      size_t n = v.len < 6 ? v.len : 6;
      for (size_t i = 0; i <= n; i++) { /* one past the end on purpose */
        const uint8_t *e = qvi_fb_vec_at(v, i);
        for (size_t k = 0; e && k < widths[w]; k++) qvt_mix(d, e[k]);
        if (i != 0 && i != n) continue; /* the typed getters: first and past-the-end */
        qvt_mix(d, qvi_fb_vec_u8(v, i) ^ (uint16_t)qvi_fb_vec_i16(v, i));
        qvt_mix(d, (uint32_t)qvi_fb_vec_i32(v, i) ^ (uint64_t)qvi_fb_vec_i64(v, i));
        double x = qvi_fb_vec_f64(v, i);
        memcpy(&gb, &x, 8);
        qvt_mix(d, gb);
        QvFbString vs = qvi_fb_vec_string(v, i);
        for (size_t k = 0; vs.data && k <= vs.len; k++) qvt_mix(d, (uint8_t)vs.data[k]);
        QvFbTable vt = qvi_fb_vec_table(v, i);
        if (depth > 0 && widths[w] == 4 && i == 0 && qvi_fb_table_valid(vt))
          qvt_probe_table(vt, depth - 1, d);
      }
    }
    QvFbTable sub = qvi_fb_table(t, slot);
    if (depth > 0 && qvi_fb_table_valid(sub)) qvt_probe_table(sub, depth - 1, d);
  }
}

void qvt_probe(const uint8_t *buf, size_t size, uint64_t *d) {
  QvFbTable r;
  if (qvi_fb_root(buf, size, &r)) qvt_probe_table(r, 1, d);
  qvt_mix(d, r.vt_size);
}

#undef QVT_CHECK
