/* The generic FlatBuffers layer against flatc (the reference implementation):
 * flatc-written binaries read back field by field through our reader and
 * verifier, our builder's binaries rendered to JSON by flatc and compared
 * with flatc's rendering of its own binaries of the same data, plus builder
 * properties (determinism, vtable sharing, alignment, defaults). The schema
 * is tests/data/flatbuf/quiver_test.fbs. Tests needing flatc skip without it. */
#include <dirent.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test_util.h"
#include "../data/flatbuf/qvtest_schema.h"

#define DATA_DIR QV_SOURCE_DIR "/tests/data/flatbuf"
#define SCHEMA DATA_DIR "/quiver_test.fbs"

#define UTF8_TEXT QVT_UTF8_TEXT
#define UNICODE_TEXT QVT_UNICODE_TEXT

/* ------------------------------------------------------------ helpers */

static char g_tmp[4096];    /* per-run scratch directory */
static char g_flatc[4096];  /* flatc path, "" when absent */
static char g_python[4096]; /* python3 path, "" when absent */

static int run(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;
static int run(const char *fmt, ...) {
  char cmd[16384];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(cmd, sizeof cmd, fmt, ap);
  va_end(ap);
  int st = system(cmd);
  return st != -1 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void find_tool(const char *name, char *out, size_t cap) {
  char cmd[128];
  snprintf(cmd, sizeof cmd, "command -v %s 2>/dev/null", name);
  FILE *p = popen(cmd, "r");
  out[0] = '\0';
  if (p) {
    if (fgets(out, (int)cap, p) == NULL) out[0] = '\0';
    pclose(p);
    out[strcspn(out, "\r\n")] = '\0';
  }
}

static int group_setup(void **state) {
  (void)state;
  find_tool("flatc", g_flatc, sizeof g_flatc);
  /* Debian's python3 (the project's tests use no other) */
  if (access("/usr/bin/python3", X_OK) == 0) snprintf(g_python, sizeof g_python, "/usr/bin/python3");
  snprintf(g_tmp, sizeof g_tmp, "%s/test_flatbuf.XXXXXX", QV_BINARY_DIR);
  return mkdtemp(g_tmp) ? 0 : -1;
}

/* The scratch directory holds plain files only. */
static int group_teardown(void **state) {
  (void)state;
  DIR *dir = opendir(g_tmp);
  if (dir == NULL) return 0;
  struct dirent *e;
  char path[8192];
  while ((e = readdir(dir)) != NULL) {
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
    snprintf(path, sizeof path, "%s/%s", g_tmp, e->d_name);
    unlink(path);
  }
  closedir(dir);
  rmdir(g_tmp);
  return 0;
}

static bool need_flatc(void) {
  if (g_flatc[0]) return true;
  print_message("skipped: flatc is not installed (Debian package flatbuffers-compiler)\n");
  return false;
}

static bool need_python(void) {
  if (g_python[0]) return true;
  print_message("skipped: /usr/bin/python3 is not installed (Debian package python3)\n");
  return false;
}

static char *tmp_path(const char *name) {
  static char paths[4][8192];
  static int next;
  char *p = paths[next++ % 4];
  snprintf(p, sizeof paths[0], "%s/%s", g_tmp, name);
  return p;
}

/* flatc JSON -> binary; returns the malloc'd binary. */
static uint8_t *flatc_binary(const char *json_name, size_t *size) {
  assert_int_equal(run("'%s' -b -o '%s' '%s' '%s/%s.json'", g_flatc, g_tmp, SCHEMA, DATA_DIR,
                       json_name),
                   0);
  char bin[64];
  snprintf(bin, sizeof bin, "%s.bin", json_name);
  uint8_t *buf = qv_test_read_file(tmp_path(bin), size);
  assert_non_null(buf);
  return buf;
}

static void write_file(const char *path, const uint8_t *data, size_t size) {
  FILE *f = fopen(path, "wb");
  assert_non_null(f);
  assert_int_equal(fwrite(data, 1, size, f), size);
  assert_int_equal(fclose(f), 0);
}

/* Binary -> JSON text by flatc (--strict-json); malloc'd, NUL-terminated. */
static char *flatc_json(const char *bin_name, bool defaults) {
  assert_int_equal(run("'%s' --json --strict-json --raw-binary %s -o '%s' '%s' -- '%s'", g_flatc,
                       defaults ? "--defaults-json" : "", g_tmp, SCHEMA, tmp_path(bin_name)),
                   0);
  char json[64];
  snprintf(json, sizeof json, "%.*s.json", (int)(strlen(bin_name) - 4), bin_name);
  size_t n;
  uint8_t *text = qv_test_read_file(tmp_path(json), &n);
  assert_non_null(text);
  char *s = realloc(text, n + 1);
  assert_non_null(s);
  s[n] = '\0';
  return s;
}

static void assert_str(QvFbString s, const char *expect) {
  assert_non_null(s.data);
  assert_int_equal(s.len, strlen(expect));
  assert_memory_equal(s.data, expect, s.len);
  assert_int_equal(s.data[s.len], 0);
}

static void assert_verifies(const uint8_t *buf, size_t size) {
  QvError err;
  qv_error_clear(&err);
  QvStatus st = qvi_fb_verify(buf, size, &qvt_root_desc, NULL, &err);
  if (st != QV_OK) print_message("verifier: %s\n", err.message);
  assert_int_equal(st, QV_OK);
  uint64_t d = 0;
  const char *bad = qvt_walk(buf, size, true, &d);
  if (bad) print_message("verified but unreadable: %s\n", bad);
  assert_null(bad);
}

static void assert_mixed(const uint8_t *p, int8_t a, int64_t b, int16_t c) {
  assert_non_null(p);
  QvtMixed m = qvt_load_mixed(p);
  assert_int_equal(m.a, a);
  assert_true(m.b == b);
  assert_int_equal(m.c, c);
}

/* --------------------------------------------- expected data: full.json */

/* Every field of tests/data/flatbuf/full.json, through every accessor kind. */
static void check_fields(const uint8_t *buf, size_t size, bool expect_old);
static void check_full(const uint8_t *buf, size_t size) { check_fields(buf, size, false); }
static void check_full_except_old(const uint8_t *buf, size_t size) {
  check_fields(buf, size, true);
}

static void check_fields(const uint8_t *buf, size_t size, bool expect_old) {
  QvFbTable r;
  assert_true(qvi_fb_root(buf, size, &r));
  assert_false(qvi_fb_bool(r, QVT_F_BOOL, QVT_DEF_BOOL));
  assert_true(qvi_fb_has(r, QVT_F_BOOL));
  assert_int_equal(qvi_fb_i8(r, QVT_F_BYTE, QVT_DEF_BYTE), -128);
  assert_int_equal(qvi_fb_u8(r, QVT_F_UBYTE, QVT_DEF_UBYTE), 255);
  assert_int_equal(qvi_fb_i16(r, QVT_F_SHORT, QVT_DEF_SHORT), -32768);
  assert_int_equal(qvi_fb_u16(r, QVT_F_USHORT, QVT_DEF_USHORT), 65535);
  assert_true(qvi_fb_i32(r, QVT_F_INT, QVT_DEF_INT) == INT32_MIN);
  assert_true(qvi_fb_u32(r, QVT_F_UINT, QVT_DEF_UINT) == UINT32_MAX);
  assert_true(qvi_fb_i64(r, QVT_F_LONG, QVT_DEF_LONG) == INT64_MIN);
  assert_true(qvi_fb_u64(r, QVT_F_ULONG, QVT_DEF_ULONG) == UINT64_MAX);
  assert_true(qvi_fb_f32(r, QVT_F_FLOAT, QVT_DEF_FLOAT) == -0.75f);
  assert_true(qvi_fb_f64(r, QVT_F_DOUBLE, QVT_DEF_DOUBLE) == 6.02214076e+23);
  assert_int_equal(qvi_fb_has(r, QVT_OLD_FIELD), expect_old);
  assert_int_equal(qvi_fb_i8(r, QVT_COLOR, QVT_DEF_COLOR), QVT_COLOR_BLUE);
  assert_int_equal(qvi_fb_u16(r, QVT_LEVEL, QVT_DEF_LEVEL), QVT_LEVEL_HIGH);

  const uint8_t *mixed = qvi_fb_struct(r, QVT_MIXED, QVT_MIXED_SIZE);
  assert_mixed(mixed, -7, 1234567890123456789, -300);
  const uint8_t *small = qvi_fb_struct(r, QVT_SMALL, QVT_SMALL_SIZE);
  assert_non_null(small);
  assert_int_equal((int16_t)(small[0] | small[1] << 8), -2);
  assert_int_equal(small[2], 3);

  assert_str(qvi_fb_string(r, QVT_NAME), "root");
  assert_str(qvi_fb_string(r, QVT_EMPTY), "");
  assert_str(qvi_fb_string(r, QVT_UTF8), UTF8_TEXT);

  static const uint8_t ub[] = {0, 1, 127, 128, 255};
  QvFbVector v = qvi_fb_vector(r, QVT_V_UBYTE, 1);
  assert_int_equal(v.len, 5);
  for (size_t i = 0; i < 5; i++) assert_int_equal(qvi_fb_vec_u8(v, i), ub[i]);
  assert_int_equal(qvi_fb_vec_u8(v, 5), 0); /* past the end reads as 0 */

  static const int16_t sh[] = {-32768, -1, 0, 1, 32767};
  v = qvi_fb_vector(r, QVT_V_SHORT, 2);
  assert_int_equal(v.len, 5);
  for (size_t i = 0; i < 5; i++) assert_int_equal(qvi_fb_vec_i16(v, i), sh[i]);

  static const int32_t in[] = {INT32_MIN, 0, INT32_MAX};
  v = qvi_fb_vector(r, QVT_V_INT, 4);
  assert_int_equal(v.len, 3);
  for (size_t i = 0; i < 3; i++) assert_true(qvi_fb_vec_i32(v, i) == in[i]);

  static const int64_t lo[] = {INT64_MIN, -1, INT64_MAX};
  v = qvi_fb_vector(r, QVT_V_LONG, 8);
  assert_int_equal(v.len, 3);
  for (size_t i = 0; i < 3; i++) assert_true(qvi_fb_vec_i64(v, i) == lo[i]);

  static const double db[] = {0.5, -1.25, 1e300};
  v = qvi_fb_vector(r, QVT_V_DOUBLE, 8);
  assert_int_equal(v.len, 3);
  for (size_t i = 0; i < 3; i++) assert_true(qvi_fb_vec_f64(v, i) == db[i]);

  v = qvi_fb_vector(r, QVT_V_MIXED, QVT_MIXED_SIZE);
  assert_int_equal(v.len, 2);
  assert_mixed(qvi_fb_vec_at(v, 0), 1, -2, 3);
  assert_mixed(qvi_fb_vec_at(v, 1), -128, INT64_MAX, -32768);
  assert_null(qvi_fb_vec_at(v, 2));

  static const int16_t sx[] = {10, -10, 0};
  static const uint8_t sy[] = {20, 255, 0};
  v = qvi_fb_vector(r, QVT_V_SMALL, QVT_SMALL_SIZE);
  assert_int_equal(v.len, 3);
  for (size_t i = 0; i < 3; i++) {
    assert_int_equal(qvi_fb_vec_i16(v, i), sx[i]);
    assert_int_equal(qvi_fb_vec_at(v, i)[2], sy[i]);
  }

  v = qvi_fb_vector(r, QVT_V_STRING, 4);
  assert_int_equal(v.len, 3);
  assert_str(qvi_fb_vec_string(v, 0), "alpha");
  assert_str(qvi_fb_vec_string(v, 1), "");
  assert_str(qvi_fb_vec_string(v, 2), UNICODE_TEXT);
  assert_null(qvi_fb_vec_string(v, 3).data);

  v = qvi_fb_vector(r, QVT_V_LEAF, 4);
  assert_int_equal(v.len, 3);
  static const char *const ln[] = {"l0", "l1", "l2"};
  static const int32_t lv[] = {0, QVT_DEF_LEAF_VALUE, -9};
  for (size_t i = 0; i < 3; i++) {
    QvFbTable leaf = qvi_fb_vec_table(v, i);
    assert_true(qvi_fb_table_valid(leaf));
    assert_str(qvi_fb_string(leaf, QVT_LEAF_NAME), ln[i]);
    assert_int_equal(qvi_fb_i32(leaf, QVT_LEAF_VALUE, QVT_DEF_LEAF_VALUE), lv[i]);
  }
  assert_false(qvi_fb_has(qvi_fb_vec_table(v, 1), QVT_LEAF_VALUE));
  assert_false(qvi_fb_table_valid(qvi_fb_vec_table(v, 3)));

  /* tree: d0 -> d1 (leaf1 = 11) -> d2 -> d3 (leaf3 = 33) */
  QvFbTable n = qvi_fb_table(r, QVT_TREE);
  for (int depth = 0; depth < 4; depth++) {
    char label[8];
    snprintf(label, sizeof label, "d%d", depth);
    assert_true(qvi_fb_table_valid(n));
    assert_str(qvi_fb_string(n, QVT_NODE_LABEL), label);
    assert_int_equal(qvi_fb_u8(n, QVT_NODE_DEPTH, 0), depth);
    assert_int_equal(qvi_fb_has(n, QVT_NODE_DEPTH), depth != 0); /* 0 is the default */
    QvFbTable leaf = qvi_fb_table(n, QVT_NODE_LEAF);
    if (depth == 1 || depth == 3) {
      assert_str(qvi_fb_string(leaf, QVT_LEAF_NAME), depth == 1 ? "leaf1" : "leaf3");
      assert_int_equal(qvi_fb_i32(leaf, QVT_LEAF_VALUE, QVT_DEF_LEAF_VALUE), depth * 11);
    } else {
      assert_false(qvi_fb_table_valid(leaf));
    }
    n = qvi_fb_table(n, QVT_NODE_CHILD);
  }
  assert_false(qvi_fb_table_valid(n));

  assert_int_equal(qvi_fb_u8(r, QVT_SHAPE_TYPE, 0), QVT_SHAPE_SQUARE);
  QvFbTable sq = qvi_fb_table(r, QVT_SHAPE);
  assert_int_equal(qvi_fb_i32(sq, QVT_SQUARE_SIDE, QVT_DEF_SIDE), 5);
  assert_str(qvi_fb_string(sq, QVT_SQUARE_LABEL), "sq");

  assert_int_equal(qvi_fb_u8(r, QVT_SHAPE2_TYPE, 0), QVT_SHAPE_POLYGON);
  QvFbTable poly = qvi_fb_table(r, QVT_SHAPE2);
  v = qvi_fb_vector(poly, QVT_POLYGON_POINTS, QVT_MIXED_SIZE);
  assert_int_equal(v.len, 1);
  assert_mixed(qvi_fb_vec_at(v, 0), 4, 40, 400);
  v = qvi_fb_vector(poly, QVT_POLYGON_NAMES, 4);
  assert_int_equal(v.len, 2);
  assert_str(qvi_fb_vec_string(v, 0), "p");
  assert_str(qvi_fb_vec_string(v, 1), "q");

  v = qvi_fb_vector(r, QVT_V_BOOL, 1);
  assert_int_equal(v.len, 3);
  assert_int_equal(qvi_fb_vec_u8(v, 0), 1);
  assert_int_equal(qvi_fb_vec_u8(v, 1), 0);
  assert_int_equal(qvi_fb_vec_u8(v, 2), 1);

  /* wrong-width element reads are refused rather than over-reading */
  v = qvi_fb_vector(r, QVT_V_UBYTE, 1);
  assert_int_equal(qvi_fb_vec_i64(v, 0), 0);
}

typedef QvFbRef (*BuildFn)(QvFbBuilder *b);
static QvFbRef build_full_plain(QvFbBuilder *b) { return qvt_build_full(b, -1); }
static QvFbRef build_full_old(QvFbBuilder *b) { return qvt_build_full(b, 4242); }
static QvFbRef build_minimal(QvFbBuilder *b) { return qvt_build_minimal(b); }
static QvFbRef build_circle(QvFbBuilder *b) { return qvt_build_circle(b); }
static QvFbRef build_leaf(QvFbBuilder *b, const char *name, int32_t value) {
  return qvt_build_leaf(b, name, value);
}
static QvFbRef str(QvFbBuilder *b, const char *s) { return qvt_str(b, s); }
static QvFbRef mixed_vector(QvFbBuilder *b, const QvtMixed *m, size_t n) {
  return qvt_mixed_vector(b, m, n);
}

/* Finishes into a malloc'd copy. */
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
  return copy;
}

static uint8_t *build(BuildFn fn, size_t *size) {
  QvFbBuilder b;
  qvi_fb_builder_init(&b);
  uint8_t *copy = finish_copy(&b, fn(&b), size);
  qvi_fb_builder_reset(&b);
  return copy;
}

/* ------------------------------------------- (a) flatc -> quiver reader */

static void test_flatc_full_read(void **state) {
  (void)state;
  if (!need_flatc()) skip();
  size_t size;
  uint8_t *buf = flatc_binary("full", &size);
  assert_memory_equal(buf + 4, "QVT1", 4); /* file_identifier: root offset skips it */
  assert_verifies(buf, size);
  check_full(buf, size);
  free(buf);
}

static void test_flatc_minimal_defaults(void **state) {
  (void)state;
  if (!need_flatc()) skip();
  size_t size;
  uint8_t *buf = flatc_binary("minimal", &size);
  assert_verifies(buf, size);
  QvFbTable r;
  assert_true(qvi_fb_root(buf, size, &r));
  for (unsigned slot = 0; slot < QVT_ROOT_SLOTS; slot++)
    assert_int_equal(qvi_fb_has(r, slot), slot == QVT_NAME);
  assert_str(qvi_fb_string(r, QVT_NAME), "");
  assert_true(qvi_fb_bool(r, QVT_F_BOOL, QVT_DEF_BOOL));
  assert_int_equal(qvi_fb_i8(r, QVT_F_BYTE, QVT_DEF_BYTE), -5);
  assert_int_equal(qvi_fb_u8(r, QVT_F_UBYTE, QVT_DEF_UBYTE), 200);
  assert_int_equal(qvi_fb_i16(r, QVT_F_SHORT, QVT_DEF_SHORT), -1234);
  assert_int_equal(qvi_fb_u16(r, QVT_F_USHORT, QVT_DEF_USHORT), 60000);
  assert_int_equal(qvi_fb_i32(r, QVT_F_INT, QVT_DEF_INT), -100000);
  assert_true(qvi_fb_u32(r, QVT_F_UINT, QVT_DEF_UINT) == 4000000000u);
  assert_true(qvi_fb_i64(r, QVT_F_LONG, QVT_DEF_LONG) == -5000000000);
  assert_true(qvi_fb_u64(r, QVT_F_ULONG, QVT_DEF_ULONG) == 10000000000000000000u);
  assert_true(qvi_fb_f32(r, QVT_F_FLOAT, QVT_DEF_FLOAT) == 3.25f);
  assert_true(qvi_fb_f64(r, QVT_F_DOUBLE, QVT_DEF_DOUBLE) == -2.5e100);
  assert_int_equal(qvi_fb_i8(r, QVT_COLOR, QVT_DEF_COLOR), QVT_COLOR_GREEN);
  assert_int_equal(qvi_fb_u16(r, QVT_LEVEL, QVT_DEF_LEVEL), QVT_LEVEL_MID);
  assert_null(qvi_fb_struct(r, QVT_MIXED, QVT_MIXED_SIZE));
  assert_null(qvi_fb_string(r, QVT_UTF8).data);
  assert_null(qvi_fb_vector(r, QVT_V_INT, 4).buf);
  assert_false(qvi_fb_table_valid(qvi_fb_table(r, QVT_TREE)));
  assert_int_equal(qvi_fb_u8(r, QVT_SHAPE_TYPE, QVT_SHAPE_NONE), QVT_SHAPE_NONE);
  free(buf);
}

static void test_flatc_union_and_empty(void **state) {
  (void)state;
  if (!need_flatc()) skip();
  size_t size;
  uint8_t *buf = flatc_binary("circle", &size);
  assert_verifies(buf, size);
  QvFbTable r;
  assert_true(qvi_fb_root(buf, size, &r));
  /* zeros that differ from the defaults are stored and read back */
  assert_true(qvi_fb_has(r, QVT_F_INT));
  assert_int_equal(qvi_fb_i32(r, QVT_F_INT, QVT_DEF_INT), 0);
  assert_true(qvi_fb_f64(r, QVT_F_DOUBLE, QVT_DEF_DOUBLE) == 0.0);
  assert_int_equal(qvi_fb_u8(r, QVT_SHAPE_TYPE, 0), QVT_SHAPE_CIRCLE);
  QvFbTable c = qvi_fb_table(r, QVT_SHAPE);
  assert_true(qvi_fb_has(c, QVT_CIRCLE_RADIUS));
  assert_true(qvi_fb_f64(c, QVT_CIRCLE_RADIUS, QVT_DEF_RADIUS) == 0.0);
  c = qvi_fb_table(r, QVT_SHAPE2);
  assert_true(qvi_fb_f64(c, QVT_CIRCLE_RADIUS, QVT_DEF_RADIUS) == 2.5);
  /* present but empty vectors */
  static const unsigned empty[] = {QVT_V_LEAF, QVT_V_STRING, QVT_V_MIXED};
  for (size_t i = 0; i < 3; i++) {
    QvFbVector v = qvi_fb_vector(r, empty[i], empty[i] == QVT_V_MIXED ? QVT_MIXED_SIZE : 4);
    assert_non_null(v.buf);
    assert_int_equal(v.len, 0);
    assert_null(qvi_fb_vec_at(v, 0));
  }
  free(buf);
}

/* ------------------------------------------- (b) quiver builder -> flatc */

static void flatc_compare(const char *json_name, BuildFn fn, bool defaults) {
  if (!defaults && !need_python()) skip();
  size_t ref_size, our_size;
  uint8_t *ref = flatc_binary(json_name, &ref_size);
  uint8_t *ours = build(fn, &our_size);
  assert_verifies(ours, our_size);

  /* rename flatc's binary so that both JSON renderings can coexist */
  char ref_bin[64], our_bin[64];
  snprintf(ref_bin, sizeof ref_bin, "ref_%s.bin", json_name);
  snprintf(our_bin, sizeof our_bin, "our_%s.bin", json_name);
  write_file(tmp_path(ref_bin), ref, ref_size);
  write_file(tmp_path(our_bin), ours, our_size);
  char *ref_json = flatc_json(ref_bin, defaults);
  char *our_json = flatc_json(our_bin, defaults);
  if (strcmp(ref_json, our_json) != 0) {
    print_message("flatc renders quiver's %s differently:\n", json_name);
    run("diff -u '%s/ref_%s.json' '%s/our_%s.json' >&2", g_tmp, json_name, g_tmp, json_name);
  }
  assert_string_equal(ref_json, our_json);

  /* Parsed, our rendering must also equal the source JSON itself (which
   * lists no default values), independently of flatc's binary writer. */
  if (!defaults) {
    int rc = run("'%s' -c 'import json, sys\n"
                 "a = json.load(open(sys.argv[1], encoding=\"utf-8\"))\n"
                 "b = json.load(open(sys.argv[2], encoding=\"utf-8\"))\n"
                 "d = [k for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)]\n"
                 "print(\"fields differing from the source JSON:\", d) if d else None\n"
                 "sys.exit(1 if d else 0)' '%s/%s.json' '%s/our_%s.json'",
                 g_python, DATA_DIR, json_name, g_tmp, json_name);
    assert_int_equal(rc, 0);
  }

  /* and the same values through our reader */
  uint64_t d_ref = 0, d_ours = 0;
  assert_null(qvt_walk(ref, ref_size, true, &d_ref));
  assert_null(qvt_walk(ours, our_size, true, &d_ours));
  assert_true(d_ref == d_ours);
  free(ref_json);
  free(our_json);
  free(ref);
  free(ours);
}

/* The JSON text of an expected field must appear in flatc's rendering. */
static void assert_json_has(const char *json, const char *needle, bool expect) {
  bool found = strstr(json, needle) != NULL;
  if (found != expect) print_message("%s %s in:\n%s\n", needle, expect ? "missing" : "present", json);
  assert_int_equal(found, expect);
}

static void test_builder_full_through_flatc(void **state) {
  (void)state;
  if (!need_flatc()) skip();
  flatc_compare("full", build_full_plain, false);
  flatc_compare("full", build_full_plain, true);
  size_t size;
  uint8_t *ours = build(build_full_plain, &size);
  check_full(ours, size);
  free(ours);
}

/* A deprecated field written anyway (an old writer): our verifier, whose
 * description omits it, accepts the buffer and the reader still sees it;
 * flatc 2.0.8 renders it too (it prints every field present, deprecated or
 * not), and otherwise the rendering is that of full.json. */
static void test_builder_deprecated_field(void **state) {
  (void)state;
  size_t size;
  uint8_t *ours = build(build_full_old, &size);
  assert_verifies(ours, size);
  check_full_except_old(ours, size);
  QvFbTable r;
  assert_true(qvi_fb_root(ours, size, &r));
  assert_int_equal(qvi_fb_i32(r, QVT_OLD_FIELD, 0), 4242);
  free(ours);
}

static void test_builder_deprecated_field_flatc(void **state) {
  (void)state;
  if (!need_flatc()) skip();
  size_t size;
  uint8_t *ours = build(build_full_old, &size);
  write_file(tmp_path("old.bin"), ours, size);
  char *json = flatc_json("old.bin", false);
  assert_json_has(json, "\"old_field\": 4242", true);
  assert_json_has(json, "\"f_int\": -2147483648", true);
  assert_json_has(json, "\"label\": \"sq\"", true);
  free(json);
  free(ours);
}

static void test_builder_minimal_through_flatc(void **state) {
  (void)state;
  if (!need_flatc()) skip();
  flatc_compare("minimal", build_minimal, false);
  flatc_compare("minimal", build_minimal, true);
}

static void test_builder_union_through_flatc(void **state) {
  (void)state;
  if (!need_flatc()) skip();
  flatc_compare("circle", build_circle, false);
  flatc_compare("circle", build_circle, true);
}

/* qvi_fb_add_scalar stores a default value anyway; flatc then prints it even
 * without --defaults-json, since it prints every field present. */
static QvFbRef build_forced(QvFbBuilder *b) {
  QvFbRef name = str(b, "forced");
  qvi_fb_table_start(b);
  int32_t def_int = QVT_DEF_INT;
  qvi_fb_add_scalar(b, QVT_F_INT, &def_int, 4);
  qvi_fb_add_i64(b, QVT_F_LONG, QVT_DEF_LONG, QVT_DEF_LONG); /* omitted */
  uint8_t none = QVT_SHAPE_NONE;
  qvi_fb_add_scalar(b, QVT_SHAPE_TYPE, &none, 1);
  qvi_fb_add_ref(b, QVT_NAME, name);
  return qvi_fb_table_end(b);
}

static void test_builder_forced_scalar(void **state) {
  (void)state;
  size_t size;
  uint8_t *buf = build(build_forced, &size);
  assert_verifies(buf, size);
  QvFbTable r;
  assert_true(qvi_fb_root(buf, size, &r));
  assert_true(qvi_fb_has(r, QVT_F_INT));
  assert_int_equal(qvi_fb_i32(r, QVT_F_INT, 0), QVT_DEF_INT);
  assert_true(qvi_fb_has(r, QVT_SHAPE_TYPE));
  assert_false(qvi_fb_has(r, QVT_F_LONG));
  free(buf);
}

static void test_builder_forced_scalar_flatc(void **state) {
  (void)state;
  if (!need_flatc()) skip();
  size_t size;
  uint8_t *buf = build(build_forced, &size);
  write_file(tmp_path("forced.bin"), buf, size);
  char *json = flatc_json("forced.bin", false);
  assert_json_has(json, "\"f_int\": -100000", true);
  assert_json_has(json, "\"shape_type\": \"NONE\"", true);
  assert_json_has(json, "f_long", false);
  assert_json_has(json, "\"name\": \"forced\"", true);
  free(json);
  free(buf);
}

/* A string with an embedded NUL keeps its length; flatc escapes the NUL. */
static QvFbRef build_nul_name(QvFbBuilder *b) {
  QvFbRef name = qvi_fb_create_string(b, "a\0b", 3);
  qvi_fb_table_start(b);
  qvi_fb_add_ref(b, QVT_NAME, name);
  return qvi_fb_table_end(b);
}

static void test_builder_string_with_nul(void **state) {
  (void)state;
  size_t size;
  uint8_t *buf = build(build_nul_name, &size);
  assert_verifies(buf, size);
  QvFbTable r;
  assert_true(qvi_fb_root(buf, size, &r));
  QvFbString s = qvi_fb_string(r, QVT_NAME);
  assert_int_equal(s.len, 3);
  assert_memory_equal(s.data, "a\0b", 4);
  free(buf);
}

static void test_builder_string_with_nul_flatc(void **state) {
  (void)state;
  if (!need_flatc()) skip();
  size_t size;
  uint8_t *buf = build(build_nul_name, &size);
  write_file(tmp_path("nul.bin"), buf, size);
  char *json = flatc_json("nul.bin", false);
  assert_json_has(json, "\"name\": \"a\\u0000b\"", true);
  free(json);
  free(buf);
}

/* ------------------------------------------------ (c) builder properties */

static void test_builder_deterministic(void **state) {
  (void)state;
  size_t n1, n2;
  uint8_t *a = build(build_full_plain, &n1);
  uint8_t *b = build(build_full_plain, &n2);
  assert_int_equal(n1, n2);
  assert_memory_equal(a, b, n1);
  /* a builder reused after release produces the same bytes again */
  QvFbBuilder bl;
  qvi_fb_builder_init(&bl);
  build_circle(&bl);
  qvi_fb_builder_reset(&bl);
  uint8_t *c = finish_copy(&bl, qvt_build_full(&bl, -1), &n2);
  qvi_fb_builder_reset(&bl);
  assert_int_equal(n1, n2);
  assert_memory_equal(a, c, n1);
  free(a);
  free(b);
  free(c);
}

static void test_builder_vtable_dedup(void **state) {
  (void)state;
  QvFbBuilder b;
  qvi_fb_builder_init(&b);
  QvFbRef l[4] = {build_leaf(&b, "a", 1), build_leaf(&b, "bb", 2),
                  build_leaf(&b, "c", QVT_DEF_LEAF_VALUE), /* other layout */
                  build_leaf(&b, "dddd", 3)};
  assert_int_equal(b.n_vtables, 2);
  QvFbRef v = qvi_fb_create_vector_refs(&b, l, 4);
  qvi_fb_table_start(&b);
  qvi_fb_add_ref(&b, QVT_V_LEAF, v);
  size_t size;
  uint8_t *buf = finish_copy(&b, qvi_fb_table_end(&b), &size);
  qvi_fb_builder_reset(&b);

  QvFbTable r;
  assert_true(qvi_fb_root(buf, size, &r));
  QvFbVector vec = qvi_fb_vector(r, QVT_V_LEAF, 4);
  assert_int_equal(vec.len, 4);
  QvFbTable t[4];
  for (int i = 0; i < 4; i++) t[i] = qvi_fb_vec_table(vec, (size_t)i);
  assert_int_equal(t[0].vt, t[1].vt);
  assert_int_equal(t[0].vt, t[3].vt);
  assert_true(t[2].vt != t[0].vt);
  assert_int_equal(t[0].vt_size, 8); /* 2 slots */
  assert_int_equal(t[2].vt_size, 6); /* trailing absent slot trimmed */
  assert_int_equal(qvi_fb_i32(t[3], QVT_LEAF_VALUE, 0), 3);
  assert_int_equal(qvi_fb_i32(t[2], QVT_LEAF_VALUE, QVT_DEF_LEAF_VALUE), QVT_DEF_LEAF_VALUE);
  /* shared vtables are negative soffsets: vtable after the table */
  assert_true(t[0].vt > t[0].pos || t[1].vt > t[1].pos);
  free(buf);

  /* A shared vtable saves exactly its size: one more leaf of an existing
   * layout adds only the table and its string (both 4-aligned). */
  size_t sizes[2];
  for (int extra = 0; extra < 2; extra++) {
    qvi_fb_builder_init(&b);
    QvFbRef refs[2];
    for (int i = 0; i <= extra; i++) refs[i] = build_leaf(&b, "xyz", 1 + i);
    v = qvi_fb_create_vector_refs(&b, refs, (size_t)extra + 1);
    qvi_fb_table_start(&b);
    qvi_fb_add_ref(&b, QVT_V_LEAF, v);
    buf = finish_copy(&b, qvi_fb_table_end(&b), &sizes[extra]);
    assert_int_equal(b.n_vtables, 2);
    qvi_fb_builder_reset(&b);
    free(buf);
  }
  /* string "xyz" 4+4, table soffset+name+value 12, vector element 4 */
  assert_int_equal(sizes[1] - sizes[0], 8 + 12 + 4);
}

/* A short vtable near the end of the buffer, then a long one: the
 * deduplication must not compare past the short one (it used to read up to
 * the new vtable's size beyond it, out of the allocation). */
static void test_builder_dedup_short_then_long(void **state) {
  (void)state;
  QvFbBuilder b;
  qvi_fb_builder_init(&b);
  qvi_fb_table_start(&b);
  QvFbRef empty = qvi_fb_table_end(&b);
  qvi_fb_table_start(&b);
  qvi_fb_add_i32(&b, 0, 1, 0);
  qvi_fb_add_ref(&b, 900, empty);
  size_t size;
  uint8_t *buf = finish_copy(&b, qvi_fb_table_end(&b), &size);
  qvi_fb_builder_reset(&b);
  QvFbTable r;
  assert_true(qvi_fb_root(buf, size, &r));
  assert_int_equal(r.vt_size, 4 + 2 * 901);
  assert_int_equal(qvi_fb_i32(r, 0, 0), 1);
  QvFbTable e = qvi_fb_table(r, 900);
  assert_true(qvi_fb_table_valid(e));
  assert_int_equal(e.vt_size, 4);
  free(buf);
}

/* 8-byte scalars, structs and vectors of them stay 8-aligned from the
 * buffer start whatever precedes them. */
static void test_builder_alignment(void **state) {
  (void)state;
  for (size_t shift = 0; shift < 16; shift++) {
    QvFbBuilder b;
    qvi_fb_builder_init(&b);
    char pad[16];
    memset(pad, 'x', sizeof pad);
    QvFbRef s = qvi_fb_create_string(&b, pad, shift);
    uint8_t bytes[16] = {0};
    QvFbRef vb = qvi_fb_create_vector(&b, bytes, shift, 1, 1);
    static const QvtMixed m[] = {{1, 2, 3}, {4, 5, 6}, {7, 8, 9}};
    QvFbRef vm = mixed_vector(&b, m, 3);
    static const int64_t lo[] = {1, 2};
    QvFbRef vl = qvi_fb_create_vector(&b, lo, 2, 8, 8);
    uint8_t mixed[QVT_MIXED_SIZE];
    qvt_store_mixed(mixed, m[1]);
    qvi_fb_table_start(&b);
    qvi_fb_add_u8(&b, QVT_F_UBYTE, (uint8_t)shift, QVT_DEF_UBYTE);
    qvi_fb_add_i64(&b, QVT_F_LONG, 1, QVT_DEF_LONG);
    qvi_fb_add_i16(&b, QVT_F_SHORT, 1, QVT_DEF_SHORT);
    qvi_fb_add_struct(&b, QVT_MIXED, mixed, QVT_MIXED_SIZE, QVT_MIXED_ALIGN);
    qvi_fb_add_bool(&b, QVT_F_BOOL, false, true);
    qvi_fb_add_f64(&b, QVT_F_DOUBLE, 1.0, QVT_DEF_DOUBLE);
    qvi_fb_add_u64(&b, QVT_F_ULONG, 1, QVT_DEF_ULONG);
    qvi_fb_add_ref(&b, QVT_NAME, s);
    qvi_fb_add_ref(&b, QVT_V_UBYTE, vb);
    qvi_fb_add_ref(&b, QVT_V_MIXED, vm);
    qvi_fb_add_ref(&b, QVT_V_LONG, vl);
    size_t size;
    uint8_t *buf = finish_copy(&b, qvi_fb_table_end(&b), &size);
    qvi_fb_builder_reset(&b);

    assert_int_equal(size % 8, 0);
    assert_verifies(buf, size); /* the verifier checks alignment too */
    QvFbTable r;
    assert_true(qvi_fb_root(buf, size, &r));
    assert_int_equal(r.pos % 4, 0);
    assert_int_equal(qvi_fb_field_pos(r, QVT_F_LONG, 8) % 8, 0);
    assert_int_equal(qvi_fb_field_pos(r, QVT_F_DOUBLE, 8) % 8, 0);
    assert_int_equal(qvi_fb_field_pos(r, QVT_F_ULONG, 8) % 8, 0);
    assert_int_equal(qvi_fb_field_pos(r, QVT_F_SHORT, 2) % 2, 0);
    assert_int_equal(qvi_fb_field_pos(r, QVT_MIXED, QVT_MIXED_SIZE) % 8, 0);
    QvFbVector v = qvi_fb_vector(r, QVT_V_MIXED, QVT_MIXED_SIZE);
    assert_int_equal(v.len, 3);
    assert_int_equal(v.pos % 8, 0);
    assert_mixed(qvi_fb_vec_at(v, 2), 7, 8, 9);
    v = qvi_fb_vector(r, QVT_V_LONG, 8);
    assert_int_equal(v.pos % 8, 0);
    assert_int_equal(qvi_fb_vec_i64(v, 1), 2);
    v = qvi_fb_vector(r, QVT_V_UBYTE, 1);
    assert_int_equal(v.len, shift);
    assert_int_equal((v.pos - 4) % 4, 0);
    assert_int_equal(qvi_fb_string(r, QVT_NAME).len, shift);
    assert_int_equal(qvi_fb_u8(r, QVT_F_UBYTE, QVT_DEF_UBYTE), shift == QVT_DEF_UBYTE ? 200 : shift);
    free(buf);
  }
}

static void test_builder_defaults_omitted(void **state) {
  (void)state;
  QvFbBuilder b;
  qvi_fb_builder_init(&b);
  QvFbRef name = str(&b, "n");
  qvi_fb_table_start(&b);
  qvi_fb_add_bool(&b, QVT_F_BOOL, QVT_DEF_BOOL, QVT_DEF_BOOL);
  qvi_fb_add_i8(&b, QVT_F_BYTE, QVT_DEF_BYTE, QVT_DEF_BYTE);
  qvi_fb_add_u8(&b, QVT_F_UBYTE, QVT_DEF_UBYTE, QVT_DEF_UBYTE);
  qvi_fb_add_i16(&b, QVT_F_SHORT, QVT_DEF_SHORT, QVT_DEF_SHORT);
  qvi_fb_add_u16(&b, QVT_F_USHORT, QVT_DEF_USHORT, QVT_DEF_USHORT);
  qvi_fb_add_i32(&b, QVT_F_INT, QVT_DEF_INT, QVT_DEF_INT);
  qvi_fb_add_u32(&b, QVT_F_UINT, QVT_DEF_UINT, QVT_DEF_UINT);
  qvi_fb_add_i64(&b, QVT_F_LONG, QVT_DEF_LONG, QVT_DEF_LONG);
  qvi_fb_add_u64(&b, QVT_F_ULONG, QVT_DEF_ULONG, QVT_DEF_ULONG);
  qvi_fb_add_f32(&b, QVT_F_FLOAT, QVT_DEF_FLOAT, QVT_DEF_FLOAT);
  qvi_fb_add_f64(&b, QVT_F_DOUBLE, QVT_DEF_DOUBLE, QVT_DEF_DOUBLE);
  qvi_fb_add_ref(&b, QVT_TREE, 0); /* a null ref is no field */
  /* -0.0 differs from a 0.0 default bitwise and is kept */
  qvi_fb_add_f64(&b, QVT_V_DOUBLE + 100, -0.0, 0.0);
  qvi_fb_add_ref(&b, QVT_NAME, name);
  size_t size;
  uint8_t *buf = finish_copy(&b, qvi_fb_table_end(&b), &size);
  qvi_fb_builder_reset(&b);
  QvFbTable r;
  assert_true(qvi_fb_root(buf, size, &r));
  for (unsigned slot = 0; slot < QVT_ROOT_SLOTS; slot++)
    assert_int_equal(qvi_fb_has(r, slot), slot == QVT_NAME);
  double z = qvi_fb_f64(r, QVT_V_DOUBLE + 100, 1.0);
  assert_true(z == 0.0 && signbit(z));
  /* root offset, vtable (4 + 2 * 123 slots), table (soffset, name, 8 for
   * the double + alignment), string: small */
  assert_true(size <= 4 + 250 + 24 + 8 + 8);
  free(buf);
}

static void expect_misuse(QvFbBuilder *b, QvFbRef root, QvStatus code) {
  const uint8_t *out = NULL;
  size_t size = 0;
  QvError err;
  qv_error_clear(&err);
  assert_int_equal(qvi_fb_finish(b, root, &out, &size, &err), code);
  assert_int_equal(err.code, code);
  assert_true(strlen(err.message) > 0);
  assert_null(out);
  qvi_fb_builder_reset(b);
}

static void test_builder_misuse(void **state) {
  (void)state;
  QvFbBuilder b;

  qvi_fb_builder_init(&b); /* string inside a table */
  qvi_fb_table_start(&b);
  str(&b, "late");
  expect_misuse(&b, qvi_fb_table_end(&b), QV_EARG);

  qvi_fb_builder_init(&b); /* nested table_start */
  qvi_fb_table_start(&b);
  qvi_fb_table_start(&b);
  expect_misuse(&b, qvi_fb_table_end(&b), QV_EARG);

  qvi_fb_builder_init(&b); /* finish inside a table */
  qvi_fb_table_start(&b);
  expect_misuse(&b, 8, QV_EARG);

  qvi_fb_builder_init(&b); /* no root */
  expect_misuse(&b, 0, QV_EARG);

  qvi_fb_builder_init(&b); /* slot set twice */
  qvi_fb_table_start(&b);
  qvi_fb_add_i32(&b, 1, 5, 0);
  qvi_fb_add_i32(&b, 1, 6, 0);
  expect_misuse(&b, qvi_fb_table_end(&b), QV_EARG);

  qvi_fb_builder_init(&b); /* slot out of range */
  qvi_fb_table_start(&b);
  qvi_fb_add_i32(&b, 5000, 5, 0);
  expect_misuse(&b, qvi_fb_table_end(&b), QV_EARG);

  qvi_fb_builder_init(&b); /* scalar of an impossible size */
  qvi_fb_table_start(&b);
  uint8_t three[3] = {0};
  qvi_fb_add_scalar(&b, 0, three, 3);
  expect_misuse(&b, qvi_fb_table_end(&b), QV_EARG);

  qvi_fb_builder_init(&b); /* ref to nothing written yet */
  qvi_fb_table_start(&b);
  qvi_fb_add_ref(&b, 0, 4096);
  expect_misuse(&b, qvi_fb_table_end(&b), QV_EARG);

  qvi_fb_builder_init(&b); /* a null element in a vector of refs */
  QvFbRef refs[2] = {str(&b, "ok"), 0};
  qvi_fb_create_vector_refs(&b, refs, 2);
  qvi_fb_table_start(&b);
  expect_misuse(&b, qvi_fb_table_end(&b), QV_EARG);

  qvi_fb_builder_init(&b); /* vector count over the 32-bit range */
  uint8_t one = 1;
  assert_int_equal(qvi_fb_create_vector(&b, &one, (size_t)UINT32_MAX + 1, 1, 1), 0);
  qvi_fb_table_start(&b);
  expect_misuse(&b, qvi_fb_table_end(&b), QV_ELIMIT);

  qvi_fb_builder_init(&b); /* finish twice */
  QvFbRef root = build_minimal(&b);
  const uint8_t *out;
  size_t size;
  assert_int_equal(qvi_fb_finish(&b, root, &out, &size, NULL), QV_OK);
  QvError err;
  assert_int_equal(qvi_fb_finish(&b, root, &out, &size, &err), QV_EARG);
  assert_non_null(strstr(err.message, "twice"));
  qvi_fb_builder_reset(&b);
}

/* Tables past 64 KiB cannot be addressed by a vtable: refused. */
static void test_builder_table_too_large(void **state) {
  (void)state;
  QvFbBuilder b;
  qvi_fb_builder_init(&b);
  static const uint8_t big[70000];
  qvi_fb_table_start(&b);
  qvi_fb_add_struct(&b, 0, big, sizeof big, 1);
  expect_misuse(&b, qvi_fb_table_end(&b), QV_ELIMIT);
}

int main(int argc, char **argv) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_builder_deprecated_field),
      cmocka_unit_test(test_builder_forced_scalar),
      cmocka_unit_test(test_builder_string_with_nul),
      cmocka_unit_test(test_builder_deterministic),
      cmocka_unit_test(test_builder_vtable_dedup),
      cmocka_unit_test(test_builder_dedup_short_then_long),
      cmocka_unit_test(test_builder_alignment),
      cmocka_unit_test(test_builder_defaults_omitted),
      cmocka_unit_test(test_builder_misuse),
      cmocka_unit_test(test_builder_table_too_large),
  };
  /* skipped when flatc (or, for the JSON comparison, /usr/bin/python3) is absent */
  const struct CMUnitTest flatc[] = {
      cmocka_unit_test(test_flatc_full_read),
      cmocka_unit_test(test_flatc_minimal_defaults),
      cmocka_unit_test(test_flatc_union_and_empty),
      cmocka_unit_test(test_builder_full_through_flatc),
      cmocka_unit_test(test_builder_deprecated_field_flatc),
      cmocka_unit_test(test_builder_minimal_through_flatc),
      cmocka_unit_test(test_builder_union_through_flatc),
      cmocka_unit_test(test_builder_forced_scalar_flatc),
      cmocka_unit_test(test_builder_string_with_nul_flatc),
  };
  const QvTestGroup groups[] = {
      QV_TEST_GROUP("", tests, group_setup, group_teardown),
      QV_TEST_GROUP("flatc", flatc, group_setup, group_teardown),
  };
  return qv_test_run_groups(argc, argv, groups, sizeof groups / sizeof groups[0]);
}
