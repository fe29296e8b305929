/* quiver_test.fbs (namespace QvTest) as seen by quiver's FlatBuffers layer:
 * slot numbers, the verifier description, and walkers that call every
 * accessor. Shared by tests/unit/test_flatbuf*.c and
 * fuzz/fuzz_flatbuf_verifier.c (definitions in qvtest_schema.c). */
#ifndef QVTEST_SCHEMA_H
#define QVTEST_SCHEMA_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "flatbuf/flatbuf.h"

/* ------------------------------------------------------------ slots */

enum { QVT_LEAF_NAME = 0, QVT_LEAF_VALUE = 1 };
enum { QVT_NODE_LABEL = 0, QVT_NODE_CHILD = 1, QVT_NODE_LEAF = 2, QVT_NODE_DEPTH = 3 };
enum { QVT_CIRCLE_RADIUS = 0 };
enum { QVT_SQUARE_SIDE = 0, QVT_SQUARE_LABEL = 1 };
enum { QVT_POLYGON_POINTS = 0, QVT_POLYGON_NAMES = 1 };
enum { QVT_SHAPE_NONE = 0, QVT_SHAPE_CIRCLE = 1, QVT_SHAPE_SQUARE = 2, QVT_SHAPE_POLYGON = 3 };
enum { QVT_COLOR_RED = 0, QVT_COLOR_GREEN = 1, QVT_COLOR_BLUE = 2 };
enum { QVT_LEVEL_LOW = 1, QVT_LEVEL_MID = 100, QVT_LEVEL_HIGH = 60000 };

enum {
  QVT_F_BOOL = 0,
  QVT_F_BYTE = 1,
  QVT_F_UBYTE = 2,
  QVT_F_SHORT = 3,
  QVT_F_USHORT = 4,
  QVT_F_INT = 5,
  QVT_F_UINT = 6,
  QVT_F_LONG = 7,
  QVT_F_ULONG = 8,
  QVT_F_FLOAT = 9,
  QVT_F_DOUBLE = 10,
  QVT_OLD_FIELD = 11, /* deprecated: never described, never written by flatc */
  QVT_COLOR = 12,
  QVT_LEVEL = 13,
  QVT_MIXED = 14,
  QVT_NAME = 15,
  QVT_EMPTY = 16,
  QVT_UTF8 = 17,
  QVT_V_UBYTE = 18,
  QVT_V_SHORT = 19,
  QVT_V_INT = 20,
  QVT_V_LONG = 21,
  QVT_V_DOUBLE = 22,
  QVT_V_MIXED = 23,
  QVT_V_SMALL = 24,
  QVT_V_STRING = 25,
  QVT_V_LEAF = 26,
  QVT_TREE = 27,
  QVT_SHAPE_TYPE = 28,
  QVT_SHAPE = 29,
  QVT_SHAPE2_TYPE = 30,
  QVT_SHAPE2 = 31,
  QVT_SMALL = 32,
  QVT_V_BOOL = 33,
  QVT_ROOT_SLOTS = 34
};

/* Schema defaults. */
#define QVT_DEF_BOOL true
#define QVT_DEF_BYTE ((int8_t)-5)
#define QVT_DEF_UBYTE ((uint8_t)200)
#define QVT_DEF_SHORT ((int16_t)-1234)
#define QVT_DEF_USHORT ((uint16_t)60000)
#define QVT_DEF_INT ((int32_t)-100000)
#define QVT_DEF_UINT ((uint32_t)4000000000u)
#define QVT_DEF_LONG ((int64_t)-5000000000)
#define QVT_DEF_ULONG ((uint64_t)10000000000000000000u)
#define QVT_DEF_FLOAT 3.25f
#define QVT_DEF_DOUBLE (-2.5e100)
#define QVT_DEF_COLOR QVT_COLOR_GREEN
#define QVT_DEF_LEVEL QVT_LEVEL_MID
#define QVT_DEF_LEAF_VALUE 7
#define QVT_DEF_RADIUS 1.5
#define QVT_DEF_SIDE 2

/* struct Mixed { a: byte; b: long; c: short; }: a@0, b@8, c@16. */
#define QVT_UTF8_TEXT "Gr\xc3\xbc\xc3\x9f" "e, \xe4\xb8\x96\xe7\x95\x8c \xf0\x9f\x90\x9f"
#define QVT_UNICODE_TEXT "\xc3\xbcn\xc3\xaf" "c\xc3\xb6" "d\xc3\xa9"

#define QVT_MIXED_SIZE 24
#define QVT_MIXED_ALIGN 8
/* struct Small { x: short; y: ubyte; }: x@0, y@2. */
#define QVT_SMALL_SIZE 4
#define QVT_SMALL_ALIGN 2

typedef struct QvtMixed {
  int8_t a;
  int64_t b;
  int16_t c;
} QvtMixed;

/* Declarations; the descriptions and helpers live in qvtest_schema.c. */
QvtMixed qvt_load_mixed(const uint8_t *p);
void qvt_store_mixed(uint8_t *p, QvtMixed m);
extern const QvFbUnionDesc qvt_shape_desc;
extern const QvFbTableDesc qvt_root_desc;
QvFbRef qvt_str(QvFbBuilder *b, const char *s);
QvFbRef qvt_build_leaf(QvFbBuilder *b, const char *name, int32_t value);
QvFbRef qvt_build_node(QvFbBuilder *b, int depth, QvFbRef child, QvFbRef leaf);
QvFbRef qvt_mixed_vector(QvFbBuilder *b, const QvtMixed *m, size_t n);
QvFbRef qvt_build_full(QvFbBuilder *b, int32_t old_field);
QvFbRef qvt_build_minimal(QvFbBuilder *b);
QvFbRef qvt_build_circle(QvFbBuilder *b);
const char *qvt_walk(const uint8_t *buf, size_t size, bool strict, uint64_t *d);
void qvt_probe(const uint8_t *buf, size_t size, uint64_t *d);

#endif
