/* Builders, the value formatter, schema helpers, sharing and concatenation. */
#include <math.h>

#include "test_rb_helpers.h"
#include "test_util.h"
#include "util/load.h"

/* Builds a one-node array of `format` with the given appends done by `fill`
 * and returns the JSON text of every value joined by " ". */
static char *values_text(const struct ArrowSchema *s, const struct ArrowArray *a) {
  QvArrayView v;
  QvError e;
  rbt_check(qv_array_view_init(&v, s, &e), &e, "view");
  rbt_check(qv_array_view_set_array(&v, a, QV_VALIDATE_FULL, &e), &e, "validate");
  size_t cap = 4096, len = 0;
  char *out = calloc(1, cap);
  for (int64_t i = 0; i < v.length; i++) {
    char *cell;
    rbt_check(qv_array_view_format_value(&v, i, 0, &cell, &e), &e, "format");
    len += (size_t)snprintf(out + len, cap - len, "%s%s", i ? " " : "", cell);
    free(cell);
  }
  qv_array_view_reset(&v);
  return out;
}

static void start(struct ArrowSchema *s, struct ArrowArray *a, const char *spec) {
  QvError e;
  rbt_schema(s, spec, "x");
  rbt_check(qv_array_init_from_schema(a, s, &e), &e, "init");
}

static void finish_and_expect(struct ArrowSchema *s, struct ArrowArray *a, const char *want) {
  QvError e;
  rbt_check(qv_array_finish_building(a, QV_VALIDATE_FULL, &e), &e, "finish");
  char *got = values_text(s, a);
  assert_string_equal(got, want);
  free(got);
  a->release(a);
  s->release(s);
}

static void test_primitives_and_formatting(void **state) {
  (void)state;
  struct ArrowSchema s;
  struct ArrowArray a;
  start(&s, &a, "c");
  assert_int_equal(qv_array_append_int(&a, -128, NULL), QV_OK);
  assert_int_equal(qv_array_append_int(&a, 127, NULL), QV_OK);
  assert_int_equal(qv_array_append_int(&a, 128, NULL), QV_EINVAL);
  assert_int_equal(qv_array_append_double(&a, 1.0, NULL), QV_EINVAL);
  assert_int_equal(qv_array_append_string(&a, "x", NULL), QV_EINVAL);
  assert_int_equal(qv_array_append_null(&a, 2, NULL), QV_OK);
  finish_and_expect(&s, &a, "-128 127 null null");

  start(&s, &a, "L");
  assert_int_equal(qv_array_append_uint(&a, UINT64_MAX, NULL), QV_OK);
  assert_int_equal(qv_array_append_int(&a, -1, NULL), QV_EINVAL);
  assert_int_equal(qv_array_append_empty(&a, 1, NULL), QV_OK);
  finish_and_expect(&s, &a, "18446744073709551615 0");

  start(&s, &a, "b");
  qv_array_append_int(&a, 1, NULL);
  qv_array_append_null(&a, 1, NULL);
  qv_array_append_int(&a, 0, NULL);
  assert_int_equal(qv_array_append_int(&a, 2, NULL), QV_EINVAL);
  finish_and_expect(&s, &a, "true null false");

  start(&s, &a, "g");
  qv_array_append_double(&a, 0.1, NULL);
  qv_array_append_double(&a, -0.0, NULL);
  qv_array_append_double(&a, NAN, NULL);
  qv_array_append_double(&a, -INFINITY, NULL);
  qv_array_append_double(&a, 1e300, NULL);
  finish_and_expect(&s, &a, "0.1 -0 \"NaN\" \"-Infinity\" 1e+300");

  start(&s, &a, "f");
  qv_array_append_double(&a, 0.1, NULL);
  qv_array_append_double(&a, 16777217.0, NULL);
  finish_and_expect(&s, &a, "0.1 16777216");

  /* float16: exact values, rounding, subnormals, overflow; each printed as
   * the shortest text that reads back as the same half (0.1 rounds to
   * 0.0999755859375, printed "0.1") */
  start(&s, &a, "e");
  const double halves[] = {1.0, -2.5, 65504.0, 1e6, 0.1, 5.960464477539063e-08, 1e-9, NAN};
  for (size_t i = 0; i < sizeof halves / sizeof halves[0]; i++) qv_array_append_double(&a, halves[i], NULL);
  finish_and_expect(&s, &a,
                    "1 -2.5 65504 \"Infinity\" 0.1 6e-08 0 \"NaN\"");

  start(&s, &a, "d:9,2,32");
  qv_array_append_int(&a, 12345, NULL);
  qv_array_append_int(&a, -5, NULL);
  qv_array_append_int(&a, 0, NULL);
  finish_and_expect(&s, &a, "\"123.45\" \"-0.05\" \"0.00\"");

  start(&s, &a, "d:76,-3,256");
  qv_array_append_int(&a, -42, NULL);
  qv_array_append_int(&a, INT64_MAX, NULL);
  finish_and_expect(&s, &a, "\"-42000\" \"9223372036854775807000\"");

  start(&s, &a, "d:38,20");
  /* 10^38 - 1, the largest that fits precision 38 (full validation refuses
   * more), little-endian then in host order */
  static const uint8_t max38[16] = {0xff, 0xff, 0xff, 0xff, 0x3f, 0x22, 0x8a, 0x09,
                                    0x7a, 0xc4, 0x86, 0x5a, 0xa8, 0x4c, 0x3b, 0x4b};
  uint8_t big[16];
  for (int k = 0; k < 16; k++) big[QV_HOST_BIG_ENDIAN ? 15 - k : k] = max38[k];
  qv_array_append_bytes(&a, big, 16, NULL);
  assert_int_equal(qv_array_append_bytes(&a, big, 8, NULL), QV_EINVAL);
  finish_and_expect(&s, &a, "\"999999999999999999.99999999999999999999\"");

  start(&s, &a, "tiD");
  qv_array_append_interval_day_time(&a, 3, -7, NULL);
  assert_int_equal(qv_array_append_interval_month_day_nano(&a, 1, 2, 3, NULL), QV_EINVAL);
  finish_and_expect(&s, &a, "{\"days\": 3, \"milliseconds\": -7}");

  start(&s, &a, "tin");
  qv_array_append_interval_month_day_nano(&a, -1, 2, 3000000000LL, NULL);
  finish_and_expect(&s, &a, "{\"months\": -1, \"days\": 2, \"nanoseconds\": 3000000000}");

  start(&s, &a, "w:3");
  qv_array_append_bytes(&a, "\x01\xab\xff", 3, NULL);
  assert_int_equal(qv_array_append_bytes(&a, "ab", 2, NULL), QV_EINVAL);
  qv_array_append_null(&a, 1, NULL);
  finish_and_expect(&s, &a, "\"01abff\" null");

  start(&s, &a, "u");
  qv_array_append_string(&a, "tab\there \"quoted\" \\ \x01 \xc3\xa9", NULL);
  qv_array_append_string(&a, "", NULL);
  finish_and_expect(&s, &a, "\"tab\\there \\\"quoted\\\" \\\\ \\u0001 \xc3\xa9\" \"\"");

  start(&s, &a, "n");
  qv_array_append_null(&a, 2, NULL);
  assert_int_equal(qv_array_append_int(&a, 1, NULL), QV_EINVAL);
  finish_and_expect(&s, &a, "null null");
}

static void test_nested_builders(void **state) {
  (void)state;
  struct ArrowSchema s;
  struct ArrowArray a;
  start(&s, &a, "+l(+s(i;u))");
  struct ArrowArray *st = a.children[0];
  qv_array_append_int(st->children[0], 1, NULL);
  qv_array_append_string(st->children[1], "a", NULL);
  qv_array_finish_element(st, NULL);
  qv_array_append_null(st, 1, NULL);
  qv_array_finish_element(&a, NULL);
  qv_array_append_null(&a, 1, NULL);
  qv_array_finish_element(&a, NULL);
  /* a struct whose children disagree cannot be closed */
  qv_array_append_int(st->children[0], 2, NULL);
  assert_int_equal(qv_array_finish_element(st, NULL), QV_EINVAL);
  qv_array_append_string(st->children[1], "b", NULL);
  assert_int_equal(qv_array_finish_element(st, NULL), QV_OK);
  qv_array_finish_element(&a, NULL);
  finish_and_expect(&s, &a,
                    "[{\"c0\": 1, \"c1\": \"a\"}, null] null [] [{\"c0\": 2, \"c1\": \"b\"}]");

  start(&s, &a, "+w:2(i)");
  qv_array_append_int(a.children[0], 1, NULL);
  assert_int_equal(qv_array_finish_element(&a, NULL), QV_EINVAL);
  qv_array_append_int(a.children[0], 2, NULL);
  qv_array_finish_element(&a, NULL);
  qv_array_append_null(&a, 1, NULL);
  finish_and_expect(&s, &a, "[1, 2] null");

  start(&s, &a, "+vl(u)");
  qv_array_append_string(a.children[0], "p", NULL);
  qv_array_append_string(a.children[0], "q", NULL);
  qv_array_finish_element(&a, NULL);
  qv_array_append_null(&a, 1, NULL);
  qv_array_append_string(a.children[0], "r", NULL);
  qv_array_finish_element(&a, NULL);
  finish_and_expect(&s, &a, "[\"p\", \"q\"] null [\"r\"]");

  start(&s, &a, "+m(+s(u;i))");
  struct ArrowArray *entries = a.children[0];
  qv_array_append_string(entries->children[0], "k", NULL);
  qv_array_append_int(entries->children[1], 5, NULL);
  qv_array_finish_element(entries, NULL);
  qv_array_finish_element(&a, NULL);
  finish_and_expect(&s, &a, "[{\"key\": \"k\", \"value\": 5}]");

  start(&s, &a, "+us:4,9(i;u)");
  qv_array_append_int(a.children[0], 7, NULL);
  assert_int_equal(qv_array_finish_union_element(&a, 5, NULL), QV_EINVAL);
  qv_array_finish_union_element(&a, 4, NULL);
  qv_array_append_string(a.children[1], "z", NULL);
  qv_array_finish_union_element(&a, 9, NULL);
  qv_array_append_null(&a, 1, NULL);
  assert_int_equal(a.children[0]->length, 3);
  assert_int_equal(a.children[1]->length, 3);
  finish_and_expect(&s, &a, "7 \"z\" null");

  start(&s, &a, "+ud:4,9(i;u)");
  qv_array_append_string(a.children[1], "z", NULL);
  qv_array_finish_union_element(&a, 9, NULL);
  qv_array_append_int(a.children[0], 7, NULL);
  qv_array_finish_union_element(&a, 4, NULL);
  qv_array_append_string(a.children[1], "y", NULL);
  qv_array_finish_union_element(&a, 9, NULL);
  assert_int_equal(a.children[0]->length, 1);
  finish_and_expect(&s, &a, "\"z\" 7 \"y\"");

  start(&s, &a, "+r(s;u)");
  assert_int_equal(qv_array_finish_run(&a, 2, NULL), QV_EINVAL); /* no value yet */
  qv_array_append_string(a.children[1], "a", NULL);
  qv_array_finish_run(&a, 2, NULL);
  qv_array_append_null(&a, 3, NULL);
  qv_array_extend_run(&a, 1, NULL);
  qv_array_append_string(a.children[1], "b", NULL);
  qv_array_finish_run(&a, 1, NULL);
  assert_int_equal(a.length, 7);
  finish_and_expect(&s, &a, "\"a\" \"a\" null null null null \"b\"");

  start(&s, &a, "s{u}");
  qv_array_append_string(a.dictionary, "x", NULL);
  qv_array_append_string(a.dictionary, "y", NULL);
  qv_array_append_int(&a, 1, NULL);
  qv_array_append_int(&a, 0, NULL);
  qv_array_append_null(&a, 1, NULL);
  qv_array_append_int(&a, 1, NULL);
  finish_and_expect(&s, &a, "\"y\" \"x\" null \"y\"");

  /* an index outside the dictionary fails full validation at finish */
  start(&s, &a, "s{u}");
  qv_array_append_string(a.dictionary, "x", NULL);
  qv_array_append_int(&a, 1, NULL);
  QvError e;
  assert_int_equal(qv_array_finish_building(&a, QV_VALIDATE_FULL, &e), QV_EINVAL);
  a.release(&a);
  s.release(&s);
}

static void test_views_spill_to_several_buffers(void **state) {
  (void)state;
  struct ArrowSchema s;
  struct ArrowArray a;
  start(&s, &a, "vz");
  char blob[1000];
  for (int i = 0; i < 100; i++) {
    memset(blob, 'a' + i % 26, sizeof blob);
    qv_array_append_bytes(&a, blob, 500 + i, NULL);
    qv_array_append_bytes(&a, blob, i % 13, NULL);
  }
  QvError e;
  rbt_check(qv_array_finish_building(&a, QV_VALIDATE_FULL, &e), &e, "finish");
  assert_true(a.n_buffers >= 3 + 2); /* > 32 KiB of long values */
  const int64_t *sizes = a.buffers[a.n_buffers - 1];
  int64_t total = 0;
  for (int64_t k = 0; k < a.n_buffers - 3; k++) total += sizes[k];
  assert_int_equal(total, 100 * 500 + 99 * 100 / 2);
  QvArrayView v;
  rbt_check(qv_array_view_init(&v, &s, &e), &e, "view");
  rbt_check(qv_array_view_set_array(&v, &a, QV_VALIDATE_FULL, &e), &e, "set");
  QvBytes b = qv_array_view_get_bytes(&v, 2 * 77);
  assert_int_equal(b.size, 577);
  assert_int_equal(b.data[576], 'a' + 77 % 26);
  qv_array_view_reset(&v);
  a.release(&a);
  s.release(&s);
}

static void test_format_truncation(void **state) {
  (void)state;
  struct ArrowSchema s;
  struct ArrowArray a;
  start(&s, &a, "+l(u)");
  for (int i = 0; i < 50; i++) qv_array_append_string(a.children[0], "abcdefgh", NULL);
  qv_array_finish_element(&a, NULL);
  QvError e;
  rbt_check(qv_array_finish_building(&a, QV_VALIDATE_FULL, &e), &e, "finish");
  QvArrayView v;
  rbt_check(qv_array_view_init(&v, &s, &e), &e, "view");
  rbt_check(qv_array_view_set_array(&v, &a, QV_VALIDATE_FULL, &e), &e, "set");
  char *text;
  rbt_check(qv_array_view_format_value(&v, 0, 30, &text, &e), &e, "format");
  assert_int_equal(strlen(text), 33);
  assert_string_equal(text + 30, "...");
  free(text);
  assert_int_equal(qv_array_view_format_value(&v, 1, 0, &text, &e), QV_EARG);
  qv_array_view_reset(&v);
  a.release(&a);
  s.release(&s);
}

static void test_schema_helpers(void **state) {
  (void)state;
  struct ArrowSchema s, c;
  QvError e;
  rbt_schema(&s, "+s(i{u};+l(d:10,2))", "root");
  rbt_check(qv_arrow_schema_add_metadata(&s, "k1", 2, "v1", 2, &e), &e, "meta");
  rbt_check(qv_arrow_schema_add_metadata(&s, "empty", 5, "", 0, &e), &e, "meta");
  rbt_check(qv_arrow_schema_copy(&s, &c, &e), &e, "copy");
  s.release(&s);
  assert_string_equal(c.name, "root");
  assert_string_equal(c.children[0]->dictionary->format, "u");
  assert_string_equal(c.children[1]->children[0]->format, "d:10,2");
  assert_int_equal(qv_arrow_metadata_size(c.metadata), 4 + (4 + 2 + 4 + 2) + (4 + 5 + 4 + 0));
  const char *v;
  int32_t vl;
  assert_true(qv_arrow_metadata_get(c.metadata, "empty", &v, &vl));
  assert_int_equal(vl, 0);
  assert_false(qv_arrow_metadata_get(c.metadata, "k", &v, &vl));
  QvArrowMetadataIter it;
  qv_arrow_metadata_iter_init(&it, c.metadata);
  const char *k;
  int32_t kl;
  int n = 0;
  while (qv_arrow_metadata_iter_next(&it, &k, &kl, &v, &vl)) n++;
  assert_int_equal(n, 2);
  assert_int_equal(qv_arrow_schema_validate(&c, &e), QV_OK);
  c.release(&c);
  /* a foreign array cannot be shared */
  struct ArrowArray foreign;
  memset(&foreign, 0, sizeof foreign);
  struct ArrowArray out;
  assert_int_equal(qv_array_share(&foreign, &out, &e), QV_EARG);
  assert_false(qv_array_is_quiver(&foreign));
}

static void test_concat_and_append_view(void **state) {
  (void)state;
  const char *specs[] = {"+l(u)", "i{u}", "+ud:0,1(i;+s(u;b))", "+r(i;vu)", "+s(i;+w:2(b))", "n"};
  for (size_t k = 0; k < sizeof specs / sizeof specs[0]; k++) {
    struct ArrowSchema s;
    rbt_schema(&s, specs[k], "x");
    struct ArrowArray a, b, c;
    QvError e;
    rbt_check(qv_array_init_from_schema(&a, &s, &e), &e, "init");
    rbt_check(qv_array_init_from_schema(&b, &s, &e), &e, "init");
    for (int64_t i = 0; i < 13; i++) rbt_append(&a, &s, i, true, 0);
    for (int64_t i = 13; i < 20; i++) rbt_append(&b, &s, i, true, 0);
    rbt_check(qv_array_finish_building(&a, QV_VALIDATE_FULL, &e), &e, "finish a");
    rbt_check(qv_array_finish_building(&b, QV_VALIDATE_FULL, &e), &e, "finish b");
    rbt_check(qv_array_concat(&a, &b, &s, &c, &e), &e, "concat");
    assert_int_equal(c.length, 20);
    char *ta = values_text(&s, &a), *tb = values_text(&s, &b), *tc = values_text(&s, &c);
    char joined[8192];
    snprintf(joined, sizeof joined, "%s %s", ta, tb);
    assert_string_equal(tc, joined);
    free(ta);
    free(tb);
    free(tc);
    /* a slice of c appended to a new builder */
    struct ArrowArray d;
    QvArrayView v;
    rbt_check(qv_array_view_init(&v, &s, &e), &e, "view");
    rbt_check(qv_array_view_set_array(&v, &c, QV_VALIDATE_FULL, &e), &e, "set");
    rbt_check(qv_array_init_from_schema(&d, &s, &e), &e, "init");
    rbt_check(qv_array_append_view(&d, &v, 5, 9, &e), &e, "append_view");
    rbt_check(qv_array_finish_building(&d, QV_VALIDATE_FULL, &e), &e, "finish d");
    struct ArrowArray slice;
    rbt_check(qv_array_share(&c, &slice, &e), &e, "share");
    slice.offset = 5;
    slice.length = 9;
    slice.null_count = -1;
    char *td = values_text(&s, &d), *ts = values_text(&s, &slice);
    assert_string_equal(td, ts);
    free(td);
    free(ts);
    assert_int_equal(qv_array_append_view(&d, &v, 15, 9, &e), QV_EARG);
    qv_array_view_reset(&v);
    slice.release(&slice);
    d.release(&d);
    a.release(&a);
    b.release(&b);
    c.release(&c);
    s.release(&s);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_primitives_and_formatting),
      cmocka_unit_test(test_nested_builders),
      cmocka_unit_test(test_views_spill_to_several_buffers),
      cmocka_unit_test(test_format_truncation),
      cmocka_unit_test(test_schema_helpers),
      cmocka_unit_test(test_concat_and_append_view),
  };
  return qv_test_run(tests, NULL, NULL);
}
