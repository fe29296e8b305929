/* Validation of untrusted arrays: what the cheap checks catch, what only the
 * full checks catch, and the structural checks of qv_array_view_set_array. */
#include "test_rb_helpers.h"
#include "test_util.h"

/* An array built from one spec, shared so that buffers can be swapped for
 * corrupted copies (freed by the fixture). */
typedef struct Fixture {
  struct ArrowSchema schema;
  struct ArrowArray built, array;
  void *copies[8];
  int n_copies;
} Fixture;

static void fixture(Fixture *f, const char *spec, int64_t rows) {
  memset(f, 0, sizeof *f);
  rbt_schema(&f->schema, spec, "x");
  QvError e;
  rbt_check(qv_array_init_from_schema(&f->built, &f->schema, &e), &e, "init");
  for (int64_t i = 0; i < rows; i++) rbt_append(&f->built, &f->schema, i, true, 0);
  rbt_check(qv_array_finish_building(&f->built, QV_VALIDATE_FULL, &e), &e, "finish");
  rbt_check(qv_array_share(&f->built, &f->array, &e), &e, "share");
}

static void fixture_free(Fixture *f) {
  f->array.release(&f->array);
  f->built.release(&f->built);
  f->schema.release(&f->schema);
  for (int i = 0; i < f->n_copies; i++) free(f->copies[i]);
}

/* Replaces buffer b of `node` with a writable copy of `size` bytes. */
static uint8_t *writable(Fixture *f, struct ArrowArray *node, int b, size_t size) {
  uint8_t *p = calloc(1, size + 64);
  memcpy(p, node->buffers[b], size);
  node->buffers[b] = p;
  f->copies[f->n_copies++] = p;
  return p;
}

static QvStatus validate(const struct ArrowSchema *s, const struct ArrowArray *a,
                         QvValidateLevel level, QvError *e) {
  qv_error_clear(e);
  return qv_array_validate(a, s, level, e);
}

static void expect(Fixture *f, QvValidateLevel level, QvStatus want, const char *msg) {
  QvError e;
  QvStatus st = validate(&f->schema, &f->array, level, &e);
  if (st != want) fail_msg("expected %s, got %s: %s", qv_status_name(want), qv_status_name(st), e.message);
  if (msg && strstr(e.message, msg) == NULL) fail_msg("message \"%s\" lacks \"%s\"", e.message, msg);
}

static void test_utf8_offsets_and_contents(void **state) {
  (void)state;
  Fixture f;
  fixture(&f, "u", 20);
  expect(&f, QV_VALIDATE_FULL, QV_OK, NULL);
  uint8_t *off = writable(&f, &f.array, 1, 21 * 4);
  int32_t v = 0;
  memcpy(&v, off + 4 * 5, 4);
  int32_t bigger = v + 3;
  memcpy(off + 4 * 4, &bigger, 4); /* offsets[4] > offsets[5] */
  expect(&f, QV_VALIDATE_CHEAP, QV_OK, NULL);
  expect(&f, QV_VALIDATE_FULL, QV_EINVAL, "offsets decrease at index 4");
  fixture_free(&f);

  fixture(&f, "u", 20);
  int32_t o[21];
  memcpy(o, f.array.buffers[1], sizeof o);
  uint8_t *data = writable(&f, &f.array, 2, (size_t)o[20]);
  /* row 1 is "v1-a": make it invalid UTF-8 */
  data[o[1]] = 0xC3;
  data[o[1] + 1] = 0x28;
  expect(&f, QV_VALIDATE_CHEAP, QV_OK, NULL);
  expect(&f, QV_VALIDATE_FULL, QV_EINVAL, "value 1 is not valid UTF-8");
  /* the same bytes under a null slot do not matter */
  uint8_t *valid = writable(&f, &f.array, 0, 3);
  valid[0] &= (uint8_t)~2u;
  f.array.null_count++;
  expect(&f, QV_VALIDATE_FULL, QV_OK, NULL);
  /* a character cut in two by an offset */
  fixture_free(&f);
  fixture(&f, "u", 20);
  memcpy(o, f.array.buffers[1], sizeof o);
  off = writable(&f, &f.array, 1, sizeof o);
  /* row 4 starts with a two-byte character: start it one byte later */
  int32_t cut = o[4] + 1;
  memcpy(off + 16, &cut, 4);
  expect(&f, QV_VALIDATE_FULL, QV_EINVAL, "not valid UTF-8");
  fixture_free(&f);
}

/* Long buffers take the vectorised loops (and their scalar tails): a
 * decrease, a bad byte or a wrong null count anywhere is still found. */
static void test_long_buffers_every_position(void **state) {
  (void)state;
  static const char *specs[2] = {"u", "U"};
  enum { ROWS = 1000 };
  for (int t = 0; t < 2; t++) {
    int w = t == 0 ? 4 : 8;
    for (int64_t k = 1; k < ROWS; k += (k < 80 || k > ROWS - 80) ? 1 : 37) {
      Fixture f;
      fixture(&f, specs[t], ROWS);
      uint8_t *off = writable(&f, &f.array, 1, (size_t)(ROWS + 1) * (size_t)w);
      /* offsets[k - 1] one past offsets[k] */
      if (w == 4) {
        int32_t v;
        memcpy(&v, off + 4 * k, 4);
        v++;
        memcpy(off + 4 * (k - 1), &v, 4);
      } else {
        int64_t v;
        memcpy(&v, off + 8 * k, 8);
        v++;
        memcpy(off + 8 * (k - 1), &v, 8);
      }
      char msg[64];
      snprintf(msg, sizeof msg, "offsets decrease at index %lld", (long long)(k - 1));
      expect(&f, QV_VALIDATE_FULL, QV_EINVAL, msg);
      fixture_free(&f);
    }
  }
  Fixture f;
  fixture(&f, "u", ROWS);
  int32_t last;
  memcpy(&last, (const uint8_t *)f.array.buffers[1] + 4 * ROWS, 4);
  assert_true(last > 600);
  uint8_t *data = writable(&f, &f.array, 2, (size_t)last);
  memset(data, 'a', (size_t)last); /* all ASCII: the block test's fast path */
  expect(&f, QV_VALIDATE_FULL, QV_OK, NULL);
  for (int32_t pos = 0; pos < last; pos += pos < 300 || pos > last - 300 ? 1 : 97) {
    uint8_t keep = data[pos];
    data[pos] = 0xFF; /* never valid in UTF-8 */
    expect(&f, QV_VALIDATE_FULL, QV_EINVAL, "not valid UTF-8");
    data[pos] = keep;
    expect(&f, QV_VALIDATE_FULL, QV_OK, NULL);
  }
  fixture_free(&f);
  fixture(&f, "i", ROWS);
  assert_true(f.array.null_count > 0);
  uint8_t *valid = writable(&f, &f.array, 0, (ROWS + 7) / 8);
  for (int64_t bit = 0; bit < ROWS; bit += bit < 80 || bit > ROWS - 80 ? 1 : 41) {
    valid[bit / 8] ^= (uint8_t)(1u << (bit % 8));
    expect(&f, QV_VALIDATE_FULL, QV_EINVAL, "the bitmap has");
    valid[bit / 8] ^= (uint8_t)(1u << (bit % 8));
    expect(&f, QV_VALIDATE_FULL, QV_OK, NULL);
  }
  fixture_free(&f);
}

static void test_null_counts(void **state) {
  (void)state;
  Fixture f;
  fixture(&f, "i", 30);
  assert_true(f.array.null_count > 0);
  f.array.null_count += 1;
  expect(&f, QV_VALIDATE_CHEAP, QV_OK, NULL);
  expect(&f, QV_VALIDATE_FULL, QV_EINVAL, "the bitmap has");
  f.array.null_count = -1; /* unknown is fine */
  expect(&f, QV_VALIDATE_FULL, QV_OK, NULL);
  f.array.null_count = 3;
  f.array.buffers[0] = NULL;
  expect(&f, QV_VALIDATE_CHEAP, QV_EINVAL, "no validity bitmap");
  f.array.null_count = 31;
  expect(&f, QV_VALIDATE_CHEAP, QV_EINVAL, "null_count 31");
  fixture_free(&f);
}

static void test_structure(void **state) {
  (void)state;
  Fixture f;
  fixture(&f, "+l(i)", 10);
  f.array.n_buffers = 3;
  expect(&f, QV_VALIDATE_NONE, QV_EINVAL, "3 buffers, expected 2");
  f.array.n_buffers = 2;
  f.array.n_children = 0;
  expect(&f, QV_VALIDATE_NONE, QV_EINVAL, "0 children");
  f.array.n_children = 1;
  f.array.buffers[1] = NULL;
  expect(&f, QV_VALIDATE_NONE, QV_EINVAL, "buffer 1 is NULL");
  fixture_free(&f);

  fixture(&f, "i{u}", 10);
  struct ArrowArray *dict = f.array.dictionary;
  f.array.dictionary = NULL;
  expect(&f, QV_VALIDATE_NONE, QV_EINVAL, "dictionary missing");
  f.array.dictionary = dict;
  f.array.length = -1;
  expect(&f, QV_VALIDATE_NONE, QV_EINVAL, "bad length");
  fixture_free(&f);
}

static void test_list_and_struct_bounds(void **state) {
  (void)state;
  Fixture f;
  fixture(&f, "+l(i)", 12);
  f.array.children[0]->length -= 1; /* the last offset now points past the child */
  expect(&f, QV_VALIDATE_CHEAP, QV_EINVAL, "outside the");
  fixture_free(&f);

  fixture(&f, "+s(i;u)", 12);
  f.array.children[1]->length = 11;
  expect(&f, QV_VALIDATE_CHEAP, QV_EINVAL, "child 1 has 11 values, needs 12");
  fixture_free(&f);

  fixture(&f, "+w:3(i)", 5);
  f.array.children[0]->length = 14;
  expect(&f, QV_VALIDATE_CHEAP, QV_EINVAL, "needs 15");
  fixture_free(&f);

  fixture(&f, "+vl(i)", 12);
  uint8_t *sizes = writable(&f, &f.array, 2, 12 * 4);
  int32_t huge = 1000;
  memcpy(sizes + 4 * 2, &huge, 4);
  expect(&f, QV_VALIDATE_CHEAP, QV_OK, NULL);
  expect(&f, QV_VALIDATE_FULL, QV_EINVAL, "element 2");
  fixture_free(&f);

  fixture(&f, "+m(+s(u;i))", 12);
  expect(&f, QV_VALIDATE_FULL, QV_OK, NULL);
  struct ArrowArray *keys = f.array.children[0]->children[0];
  assert_null(keys->buffers[0]);
  size_t nb = (size_t)(keys->length / 8 + 1);
  uint8_t *kv = malloc(nb);
  memset(kv, 0xFF, nb);
  kv[0] = 0xFE; /* one null key */
  f.copies[f.n_copies++] = kv;
  keys->buffers[0] = kv;
  keys->null_count = 1;
  expect(&f, QV_VALIDATE_CHEAP, QV_EINVAL, "keys are null");
  fixture_free(&f);
}

static void test_unions(void **state) {
  (void)state;
  Fixture f;
  fixture(&f, "+ud:2,5(i;u)", 10);
  expect(&f, QV_VALIDATE_FULL, QV_OK, NULL);
  uint8_t *ids = writable(&f, &f.array, 0, 10);
  ids[3] = 4;
  expect(&f, QV_VALIDATE_CHEAP, QV_OK, NULL);
  expect(&f, QV_VALIDATE_FULL, QV_EINVAL, "unknown type code 4");
  ids[3] = 5;
  uint8_t *offs = writable(&f, &f.array, 1, 40);
  int32_t bad = 99;
  memcpy(offs + 4 * 6, &bad, 4);
  expect(&f, QV_VALIDATE_FULL, QV_EINVAL, "offset 99 outside child");
  fixture_free(&f);

  fixture(&f, "+us:0,1(i;u)", 10);
  f.array.children[1]->length = 9;
  expect(&f, QV_VALIDATE_CHEAP, QV_EINVAL, "child 1 has 9 values");
  fixture_free(&f);
}

static void test_run_end_encoded(void **state) {
  (void)state;
  Fixture f;
  fixture(&f, "+r(i;u)", 16);
  expect(&f, QV_VALIDATE_FULL, QV_OK, NULL);
  struct ArrowArray *re = f.array.children[0];
  assert_int_equal(re->length, 4);
  int32_t ends[4];
  memcpy(ends, re->buffers[1], sizeof ends);
  uint8_t *w = writable(&f, re, 1, sizeof ends);
  int32_t dup = ends[0];
  memcpy(w + 4, &dup, 4); /* run 1 ends where run 0 ends */
  expect(&f, QV_VALIDATE_CHEAP, QV_OK, NULL);
  expect(&f, QV_VALIDATE_FULL, QV_EINVAL, "is not greater than");
  memcpy(w + 4, &ends[1], 4);
  int32_t short_end = 15;
  memcpy(w + 12, &short_end, 4);
  expect(&f, QV_VALIDATE_CHEAP, QV_EINVAL, "last run end 15");
  fixture_free(&f);

  fixture(&f, "+r(i;u)", 16);
  f.array.children[1]->length = 3;
  expect(&f, QV_VALIDATE_CHEAP, QV_EINVAL, "4 run ends but 3 values");
  fixture_free(&f);
}

static void test_dictionary_indices(void **state) {
  (void)state;
  Fixture f;
  fixture(&f, "c{u}", 20);
  expect(&f, QV_VALIDATE_FULL, QV_OK, NULL);
  uint8_t *idx = writable(&f, &f.array, 1, 20);
  idx[2] = 5; /* the dictionary has 5 values */
  expect(&f, QV_VALIDATE_CHEAP, QV_OK, NULL);
  expect(&f, QV_VALIDATE_FULL, QV_EINVAL, "index 5 at 2");
  idx[2] = (uint8_t)-1;
  expect(&f, QV_VALIDATE_FULL, QV_EINVAL, "index -1 at 2");
  /* out-of-range indices under nulls are ignored */
  idx[2] = 0;
  idx[3] = 77;
  expect(&f, QV_VALIDATE_FULL, QV_OK, NULL);
  fixture_free(&f);
}

static void test_views(void **state) {
  (void)state;
  Fixture f;
  fixture(&f, "vu", 20);
  expect(&f, QV_VALIDATE_FULL, QV_OK, NULL);
  assert_true(f.array.n_buffers >= 4);
  uint8_t *views = writable(&f, &f.array, 1, 20 * 16);
  /* row 12 is long enough to live in a data buffer */
  int32_t len;
  memcpy(&len, views + 16 * 12, 4);
  assert_true(len > 12);
  int32_t bad_index = 3;
  memcpy(views + 16 * 12 + 8, &bad_index, 4);
  expect(&f, QV_VALIDATE_CHEAP, QV_OK, NULL);
  expect(&f, QV_VALIDATE_FULL, QV_EINVAL, "data buffer 3 of 1");
  int32_t zero = 0, far = 1 << 20;
  memcpy(views + 16 * 12 + 8, &zero, 4);
  memcpy(views + 16 * 12 + 12, &far, 4);
  expect(&f, QV_VALIDATE_FULL, QV_EINVAL, "outside data buffer 0");
  fixture_free(&f);

  fixture(&f, "vu", 20);
  views = writable(&f, &f.array, 1, 20 * 16);
  views[16 * 12 + 4] ^= 1; /* prefix differs from the data */
  expect(&f, QV_VALIDATE_FULL, QV_EINVAL, "prefix");
  fixture_free(&f);

  fixture(&f, "vu", 20);
  views = writable(&f, &f.array, 1, 20 * 16);
  views[16 * 1 + 4] = 0xFF; /* inline bytes of row 1 */
  expect(&f, QV_VALIDATE_FULL, QV_EINVAL, "not valid UTF-8");
  fixture_free(&f);
}

/* Views filled in by hand, as the IPC reader does: declared buffer sizes. */
static void test_declared_buffer_sizes(void **state) {
  (void)state;
  struct ArrowSchema s;
  rbt_schema(&s, "u", "x");
  QvArrayView v;
  QvError e;
  rbt_check(qv_array_view_init(&v, &s, &e), &e, "init");
  static const int32_t offsets[4] = {0, 2, 5, 9};
  static const uint8_t data[9] = "abcdefghi";
  static const uint8_t bits[1] = {0x05};
  v.length = 3;
  v.null_count = 1;
  v.buffer[0] = bits;
  v.buffer_size[0] = 1;
  v.buffer[1] = (const uint8_t *)offsets;
  v.buffer_size[1] = 16;
  v.buffer[2] = data;
  v.buffer_size[2] = 9;
  assert_int_equal(qv_array_view_validate(&v, QV_VALIDATE_FULL, 0, &e), QV_OK);
  v.buffer_size[2] = 8;
  assert_int_equal(qv_array_view_validate(&v, QV_VALIDATE_CHEAP, 0, &e), QV_EINVAL);
  assert_non_null(strstr(e.message, "outside the 8 bytes of data"));
  v.buffer_size[2] = 9;
  v.buffer_size[1] = 12;
  assert_int_equal(qv_array_view_validate(&v, QV_VALIDATE_CHEAP, 0, &e), QV_EINVAL);
  assert_non_null(strstr(e.message, "offsets buffer has 12 bytes, needs 16"));
  v.buffer_size[1] = 16;
  v.offset = 1;
  v.length = 3;
  assert_int_equal(qv_array_view_validate(&v, QV_VALIDATE_CHEAP, 0, &e), QV_EINVAL);
  v.offset = 0;
  v.buffer_size[0] = 0;
  assert_int_equal(qv_array_view_validate(&v, QV_VALIDATE_CHEAP, 0, &e), QV_EINVAL);
  assert_non_null(strstr(e.message, "no validity bitmap"));
  /* lengths that overflow the size arithmetic */
  v.buffer_size[0] = 1;
  v.length = INT64_MAX;
  v.null_count = 0;
  assert_int_equal(qv_array_view_validate(&v, QV_VALIDATE_FULL, 0, &e), QV_EINVAL);
  v.offset = INT64_MAX;
  v.length = 1;
  assert_int_equal(qv_array_view_validate(&v, QV_VALIDATE_FULL, 0, &e), QV_EINVAL);
  qv_array_view_reset(&v);
  s.release(&s);
}

static void test_format_strings(void **state) {
  (void)state;
  static const char *const bad[] = {"",      "x",       "d:0,1",  "d:39,1",  "d:5,1,100", "w:",
                                    "w:-1",  "+w:",     "tsx:",   "tss",     "tdX",       "ti",
                                    "+us:0,0", "+ud:200", "+u:",  "vv",      "zz",        "d:5",
                                    "+us:1,", "tDx"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    struct ArrowSchema s;
    QvError e;
    rbt_check(qv_arrow_schema_init(&s, bad[i], "x", 0, 0, &e), &e, "init");
    QvArrowSchemaView v;
    if (qv_arrow_schema_view_init(&v, &s, &e) != QV_EINVAL) fail_msg("format \"%s\" was accepted", bad[i]);
    s.release(&s);
  }
  static const struct {
    const char *format;
    QvArrowType type, storage;
    int32_t width;
  } good[] = {
      {"tdD", QV_ARROW_DATE32, QV_ARROW_INT32, 4},     {"tdm", QV_ARROW_DATE64, QV_ARROW_INT64, 8},
      {"ttn", QV_ARROW_TIME64, QV_ARROW_INT64, 8},     {"tsu:UTC", QV_ARROW_TIMESTAMP, QV_ARROW_INT64, 8},
      {"d:5,-2,64", QV_ARROW_DECIMAL64, QV_ARROW_DECIMAL64, 8}, {"w:7", QV_ARROW_FIXED_SIZE_BINARY, QV_ARROW_FIXED_SIZE_BINARY, 7},
      {"tin", QV_ARROW_INTERVAL_MONTH_DAY_NANO, QV_ARROW_INTERVAL_MONTH_DAY_NANO, 16},
      {"e", QV_ARROW_FLOAT16, QV_ARROW_FLOAT16, 2},
  };
  for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
    struct ArrowSchema s;
    QvError e;
    rbt_check(qv_arrow_schema_init(&s, good[i].format, "x", 0, 0, &e), &e, "init");
    QvArrowSchemaView v;
    rbt_check(qv_arrow_schema_view_init(&v, &s, &e), &e, good[i].format);
    assert_int_equal(v.type, good[i].type);
    assert_int_equal(v.storage_type, good[i].storage);
    assert_int_equal(v.byte_width, good[i].width);
    s.release(&s);
  }
  /* child counts the types require */
  struct ArrowSchema s;
  QvError e;
  rbt_check(qv_arrow_schema_init(&s, "+l", "x", 0, 2, &e), &e, "init");
  rbt_check(qv_arrow_schema_init(s.children[0], "i", "a", 0, 0, &e), &e, "init");
  rbt_check(qv_arrow_schema_init(s.children[1], "i", "b", 0, 0, &e), &e, "init");
  assert_int_equal(qv_arrow_schema_validate(&s, &e), QV_EINVAL);
  assert_non_null(strstr(e.message, "needs 1 children"));
  s.release(&s);
  rbt_schema(&s, "+r(u;i)", "x");
  assert_int_equal(qv_arrow_schema_validate(&s, &e), QV_EINVAL);
  assert_non_null(strstr(e.message, "run ends must be"));
  s.release(&s);
  rbt_schema(&s, "g{u}", "x");
  assert_int_equal(qv_arrow_schema_validate(&s, &e), QV_EINVAL);
  assert_non_null(strstr(e.message, "index type must be an integer"));
  s.release(&s);
}

static void test_depth_limit(void **state) {
  (void)state;
  char spec[1024] = "";
  for (int i = 0; i < QV_ARRAY_MAX_DEPTH + 2; i++) strcat(spec, "+l(");
  strcat(spec, "i");
  for (int i = 0; i < QV_ARRAY_MAX_DEPTH + 2; i++) strcat(spec, ")");
  struct ArrowSchema s;
  rbt_schema(&s, spec, "deep");
  QvError e;
  assert_int_equal(qv_arrow_schema_validate(&s, &e), QV_ELIMIT);
  struct ArrowArray a;
  assert_int_equal(qv_array_init_from_schema(&a, &s, &e), QV_ELIMIT);
  s.release(&s);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_utf8_offsets_and_contents),
      cmocka_unit_test(test_long_buffers_every_position),
      cmocka_unit_test(test_null_counts),
      cmocka_unit_test(test_structure),
      cmocka_unit_test(test_list_and_struct_bounds),
      cmocka_unit_test(test_unions),
      cmocka_unit_test(test_run_end_encoded),
      cmocka_unit_test(test_dictionary_indices),
      cmocka_unit_test(test_views),
      cmocka_unit_test(test_declared_buffer_sizes),
      cmocka_unit_test(test_format_strings),
      cmocka_unit_test(test_depth_limit),
  };
  return qv_test_run(tests, NULL, NULL);
}
