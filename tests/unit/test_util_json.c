/* util/json.c, the strict JSON reader and writer: the corpus shared with
 * fuzz/fuzz_json_util (fuzz/corpus/fuzz_json_util/: y_* parse and round
 * trip, n_* are refused), the error codes and positions of each kind of
 * refusal, the decoded values, the writer's escapes byte for byte (as
 * jansson's JSON_COMPACT | JSON_ENSURE_ASCII wrote the metadata) and large
 * inputs (many keys, long arrays). */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"
#include "util/json.h"

#define CORPUS QV_SOURCE_DIR "/fuzz/corpus/fuzz_json_util"

static QvStatus parse(const char *text, size_t len, QvArena *arena, const QviJson **root,
                      size_t *pos, QvError *e) {
  return qvi_json_parse(text, len, arena, root, pos, e);
}

/* text must parse; writing the tree and parsing that gives the same tree,
 * and writing it again the same bytes. */
static void round_trip(const char *text, size_t len, const char *name) {
  QvArena *arena = qvi_arena_new();
  const QviJson *a, *b;
  QvError e = {0};
  if (parse(text, len, arena, &a, NULL, &e) != QV_OK) fail_msg("%s: %s", name, e.message);
  QvStrBuf w1 = {0}, w2 = {0};
  assert_true(qvi_json_write(&w1, a));
  if (parse(w1.data, w1.len, arena, &b, NULL, &e) != QV_OK)
    fail_msg("%s: the written text does not parse: %s", name, e.message);
  if (!qvi_json_equal(a, b)) fail_msg("%s: the round trip changed the tree", name);
  assert_true(qvi_json_write(&w2, b));
  assert_int_equal(w1.len, w2.len);
  assert_memory_equal(w1.data, w2.data, w1.len);
  free(w1.data);
  free(w2.data);
  qvi_arena_free(arena);
}

static char *read_file(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  assert_non_null(f);
  char *buf = malloc(1 << 16);
  assert_non_null(buf);
  *len = fread(buf, 1, 1 << 16, f);
  assert_true(feof(f));
  fclose(f);
  return buf;
}

static void test_corpus(void **state) {
  (void)state;
  DIR *d = opendir(CORPUS);
  assert_non_null(d);
  int n_yes = 0, n_no = 0;
  struct dirent *ent;
  while ((ent = readdir(d)) != NULL) {
    const char *name = ent->d_name;
    if (name[0] != 'y' && name[0] != 'n') continue;
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", CORPUS, name);
    size_t len;
    char *text = read_file(path, &len);
    if (name[0] == 'y') {
      round_trip(text, len, name);
      n_yes++;
    } else {
      QvArena *arena = qvi_arena_new();
      const QviJson *root = (const QviJson *)1;
      QvError e = {0};
      size_t pos = SIZE_MAX;
      QvStatus st = parse(text, len, arena, &root, &pos, &e);
      if (st == QV_OK) fail_msg("%s was accepted", name);
      assert_true(st == QV_EINVAL || st == QV_ELIMIT);
      assert_null(root);
      assert_true(pos <= len);
      assert_non_null(strstr(e.message, "malformed JSON at line"));
      qvi_arena_free(arena);
      n_no++;
    }
    free(text);
  }
  closedir(d);
  /* the corpus is there: every kind of case the comments above name */
  assert_true(n_yes >= 20);
  assert_true(n_no >= 50);
}

/* text is refused with `code` at byte `pos`, the message holding `want`. */
static void refused(const char *text, size_t len, QvStatus code, size_t pos, const char *want) {
  QvArena *arena = qvi_arena_new();
  const QviJson *root;
  QvError e = {0};
  size_t at = SIZE_MAX;
  QvStatus st = parse(text, len, arena, &root, &at, &e);
  if (st != code || at != pos || strstr(e.message, want) == NULL)
    fail_msg("%.*s: status %d at %zu (%s), wanted %d at %zu (%s)", (int)len, text, (int)st, at,
             e.message, (int)code, pos, want);
  qvi_arena_free(arena);
}
#define REFUSED(lit, code, pos, want) refused(lit, sizeof lit - 1, code, pos, want)

static void test_refusals(void **state) {
  (void)state;
  REFUSED("", QV_EINVAL, 0, "the input ends where a value was expected");
  REFUSED("[1,]", QV_EINVAL, 3, "a trailing comma");
  REFUSED("{\"a\":1,}", QV_EINVAL, 7, "a trailing comma");
  REFUSED("[01]", QV_EINVAL, 1, "leading zero");
  REFUSED("[9223372036854775808]", QV_EINVAL, 1, "an integer outside int64");
  REFUSED("[-9223372036854775809]", QV_EINVAL, 1, "an integer outside int64");
  REFUSED("[1, 99999999999999999999999999999999999999]", QV_EINVAL, 4, "outside int64");
  REFUSED("{\"a\":1,\"b\":2,\"a\":3}", QV_EINVAL, 17, "a duplicate key");
  REFUSED("{\"x\":{\"k\":[],\"\\u006b\":0}}", QV_EINVAL, 22, "a duplicate key");
  REFUSED("[\"ok\",\"\xff\"]", QV_EINVAL, 7, "invalid UTF-8");
  REFUSED("[\"\xc0\xaf\"]", QV_EINVAL, 2, "invalid UTF-8");
  REFUSED("[\"\xed\xa0\x80\"]", QV_EINVAL, 2, "invalid UTF-8");
  REFUSED("[\"\xf4\x90\x80\x80\"]", QV_EINVAL, 2, "invalid UTF-8");
  REFUSED("[\"ab\xe2\x82\"]", QV_EINVAL, 4, "invalid UTF-8");
  REFUSED("[\"\\uD800\"]", QV_EINVAL, 2, "a high surrogate escape without its low half");
  REFUSED("[\"\\uD800\\u0041\"]", QV_EINVAL, 2, "without its low half");
  REFUSED("[\"x\\uDFFF\"]", QV_EINVAL, 3, "a lone low surrogate");
  REFUSED("[\"a\0b\"]", QV_EINVAL, 3, "a control character in a string");
  REFUSED("[\"\\u00G0\"]", QV_EINVAL, 2, "four hex digits");
  REFUSED("[\"\\q\"]", QV_EINVAL, 2, "an unknown escape");
  REFUSED("[\"abc", QV_EINVAL, 1, "without its closing quote");
  REFUSED("[\"\\", QV_EINVAL, 1, "without its closing quote");
  REFUSED("{} x", QV_EINVAL, 3, "text after the value");
  REFUSED("{1:2}", QV_EINVAL, 1, "a string key expected");
  REFUSED("{\"a\" 1}", QV_EINVAL, 5, "':' expected");
  REFUSED("[1 2]", QV_EINVAL, 3, "',' or ']' expected");
  REFUSED("[tru]", QV_EINVAL, 1, "an unknown literal");
  REFUSED("[1.]", QV_EINVAL, 3, "a fraction without digits");
  REFUSED("[1e+]", QV_EINVAL, 4, "an exponent without digits");
  REFUSED("[-]", QV_EINVAL, 1, "a number without digits");
  REFUSED("[1,2", QV_EINVAL, 4, "the input ends inside an array");
  /* line and column count from 1, the column in bytes */
  REFUSED("{\n  \"a\": x}", QV_EINVAL, 9, "at line 2 column 8 (byte 9)");
  /* deep nesting: the limit, not the stack, stops it */
  char deep[2 * QVI_JSON_MAX_DEPTH + 3];
  memset(deep, '[', QVI_JSON_MAX_DEPTH + 1);
  memset(deep + QVI_JSON_MAX_DEPTH + 1, ']', QVI_JSON_MAX_DEPTH + 1);
  refused(deep, 2 * QVI_JSON_MAX_DEPTH + 2, QV_ELIMIT, QVI_JSON_MAX_DEPTH, "nested deeper than 64");
  round_trip(deep + 1, 2 * QVI_JSON_MAX_DEPTH, "64 levels");
  size_t big = 1 << 20;
  char *huge = malloc(big);
  assert_non_null(huge);
  memset(huge, '[', big); /* far past the limit: refused at the limit, quickly */
  refused(huge, big, QV_ELIMIT, QVI_JSON_MAX_DEPTH, "nested deeper");
  free(huge);
}

static void test_values(void **state) {
  (void)state;
  QvArena *arena = qvi_arena_new();
  const QviJson *r;
  const char text[] =
      "{\"i\":[-9223372036854775808,9223372036854775807,-0,0,17],"
      "\"r\":[1.50,-2e-3],"
      "\"s\":\"\\\"\\\\\\/\\b\\f\\n\\r\\t\\u00e9\\uD83D\\uDE00\xe2\x82\xac\","
      "\"nul\":\"a\\u0000b\",\"t\":true,\"f\":false,\"z\":null}";
  assert_int_equal(parse(text, sizeof text - 1, arena, &r, NULL, NULL), QV_OK);
  assert_int_equal(r->kind, QVI_JSON_OBJECT);
  assert_int_equal(r->n, 7);
  assert_string_equal(r->u.members[3].key, "nul"); /* members keep the input's order */
  const QviJson *i = qvi_json_get(r, "i");
  assert_non_null(i);
  assert_int_equal(i->kind, QVI_JSON_ARRAY);
  assert_int_equal(i->n, 5);
  assert_true(i->u.items[0].kind == QVI_JSON_INT && i->u.items[0].u.i == INT64_MIN);
  assert_true(i->u.items[1].u.i == INT64_MAX);
  assert_true(i->u.items[2].kind == QVI_JSON_INT && i->u.items[2].u.i == 0);
  assert_int_equal(i->u.items[4].u.i, 17);
  assert_int_equal(i->u.items[4].pos, 52);
  const QviJson *re = qvi_json_get(r, "r");
  /* fraction or exponent: the text, never rounded or read as an integer */
  assert_int_equal(re->u.items[0].kind, QVI_JSON_REAL);
  assert_string_equal(re->u.items[0].u.s, "1.50");
  assert_string_equal(re->u.items[1].u.s, "-2e-3");
  const QviJson *s = qvi_json_get(r, "s");
  assert_int_equal(s->kind, QVI_JSON_STRING);
  assert_string_equal(s->u.s, "\"\\/\b\f\n\r\t\xc3\xa9\xf0\x9f\x98\x80\xe2\x82\xac");
  assert_true(qvi_json_is_c_string(s));
  const QviJson *nul = qvi_json_get(r, "nul");
  assert_int_equal(nul->n, 3);
  assert_memory_equal(nul->u.s, "a\0b", 4);
  assert_false(qvi_json_is_c_string(nul));
  assert_int_equal(qvi_json_get(r, "t")->kind, QVI_JSON_TRUE);
  assert_int_equal(qvi_json_get(r, "f")->kind, QVI_JSON_FALSE);
  assert_int_equal(qvi_json_get(r, "z")->kind, QVI_JSON_NULL);
  assert_null(qvi_json_get(r, "missing"));
  assert_null(qvi_json_get(r, "nu"));
  assert_null(qvi_json_get(i, "i")); /* not an object */
  /* written back compact, ASCII, in order; -0 is the integer 0 */
  QvStrBuf w = {0};
  assert_true(qvi_json_write(&w, r));
  assert_string_equal(w.data,
                      "{\"i\":[-9223372036854775808,9223372036854775807,0,0,17],"
                      "\"r\":[1.50,-2e-3],"
                      "\"s\":\"\\\"\\\\/\\b\\f\\n\\r\\t\\u00E9\\uD83D\\uDE00\\u20AC\","
                      "\"nul\":\"a\\u0000b\",\"t\":true,\"f\":false,\"z\":null}");
  free(w.data);
  qvi_arena_free(arena);
}

static void test_writer(void **state) {
  (void)state;
  QvStrBuf b = {0};
  bool bad = true;
  /* every control character escaped, DEL and '/' as they are, uppercase hex
   * (the bytes jansson wrote, so metadata is written as before) */
  const char s[] = "\x01\x1f\x7f/ \xc3\xa9\xef\xbf\xbf\xf4\x8f\xbf\xbf";
  assert_true(qvi_json_put_string(&b, s, sizeof s - 1, &bad));
  assert_false(bad);
  assert_string_equal(b.data, "\"\\u0001\\u001F\x7f/ \\u00E9\\uFFFF\\uDBFF\\uDFFF\"");
  free(b.data);
  memset(&b, 0, sizeof b);
  const char *invalid[] = {"\xff", "\xc0\xaf", "\xed\xa0\x80", "ab\xe2\x82", "\xf4\x90\x80\x80"};
  for (size_t k = 0; k < sizeof invalid / sizeof *invalid; k++) {
    bad = false;
    b.len = 0;
    assert_false(qvi_json_put_string(&b, invalid[k], strlen(invalid[k]), &bad));
    assert_true(bad);
    assert_false(b.nomem);
  }
  free(b.data);
  memset(&b, 0, sizeof b);
  assert_true(qvi_json_put_int(&b, INT64_MIN));
  assert_string_equal(b.data, "-9223372036854775808");
  free(b.data);
  /* out of memory before: nothing is written, every writer says so */
  QvStrBuf full = {.nomem = true};
  assert_false(qvi_json_put_string(&full, "x", 1, &bad));
  assert_false(bad);
  assert_false(qvi_json_put_int(&full, 1));
  assert_null(full.data);
}

/* Wide inputs: the duplicate check sorts (many keys), long arrays grow. */
static void test_large(void **state) {
  (void)state;
  enum { N = 50000 };
  QvStrBuf b = {0};
  qvi_strbuf_put(&b, "{", 1);
  for (int k = 0; k < N; k++) {
    char m[32];
    int n = snprintf(m, sizeof m, "%s\"k%d\":[%d]", k ? "," : "", k, k);
    qvi_strbuf_put(&b, m, (size_t)n);
  }
  size_t open_len = b.len;
  qvi_strbuf_put(&b, "}", 1);
  assert_false(b.nomem);
  QvArena *arena = qvi_arena_new();
  const QviJson *r;
  assert_int_equal(parse(b.data, b.len, arena, &r, NULL, NULL), QV_OK);
  assert_int_equal(r->n, N);
  assert_int_equal(qvi_json_get(r, "k49999")->u.items[0].u.i, 49999);
  round_trip(b.data, b.len, "50000 keys");
  /* the same with one key repeated at the end */
  b.len = open_len;
  qvi_strbuf_put(&b, ",\"k123\":0}", 10);
  size_t pos;
  assert_int_equal(parse(b.data, b.len, arena, &r, &pos, NULL), QV_EINVAL);
  assert_int_equal(pos, b.len - 2);
  free(b.data);
  qvi_arena_free(arena);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_corpus),  cmocka_unit_test(test_refusals), cmocka_unit_test(test_values),
      cmocka_unit_test(test_writer), cmocka_unit_test(test_large),
  };
  return qv_test_run(tests, NULL, NULL);
}
