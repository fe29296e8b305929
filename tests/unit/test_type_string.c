/* qv_arrow_schema_to_string: every type spelled as Arrow C++'s
 * DataType::ToString spells it. The expected strings are Arrow C++'s own
 * (cpp/src/arrow/type_test.cc and the extension tests) where those tests have
 * one; the rest follow type.cc's ToString code. */
#include <stdlib.h>
#include <string.h>

#include "quiver/array.h"
#include "quiver/sparse_column.h"
#include "quiver/tensor_column.h"
#include "test_util.h"

/* A node: format, name, flags, then n children (moved in). */
static struct ArrowSchema *node(const char *format, const char *name, int64_t flags, int n, ...) {
  struct ArrowSchema *s = calloc(1, sizeof *s);
  QvError e;
  assert_int_equal(qv_arrow_schema_init(s, format, name, flags, n, &e), QV_OK);
  va_list ap;
  va_start(ap, n);
  for (int i = 0; i < n; i++) {
    struct ArrowSchema *c = va_arg(ap, struct ArrowSchema *);
    memcpy(s->children[i], c, sizeof *c);
    free(c);
  }
  va_end(ap);
  return s;
}

#define NUL ARROW_FLAG_NULLABLE

static struct ArrowSchema *leaf(const char *format) { return node(format, "x", NUL, 0); }

static void ext(struct ArrowSchema *s, const char *name, const char *meta) {
  QvError e;
  assert_int_equal(qv_arrow_schema_add_metadata(s, "ARROW:extension:name", 20, name, strlen(name), &e), QV_OK);
  if (meta)
    assert_int_equal(
        qv_arrow_schema_add_metadata(s, "ARROW:extension:metadata", 24, meta, strlen(meta), &e),
        QV_OK);
}

/* Checks the text, frees the schema. */
static void expect(struct ArrowSchema *s, unsigned flags, const char *want) {
  QvError e;
  char buf[512];
  size_t len = 0;
  QvStatus st = qv_arrow_schema_to_string(s, flags, buf, sizeof buf, &len, &e);
  if (st != QV_OK) fail_msg("%s: %s", want, e.message);
  assert_string_equal(buf, want);
  assert_int_equal(len, strlen(want));
  char *a = NULL;
  assert_int_equal(qv_arrow_schema_to_string_alloc(s, flags, &a, &e), QV_OK);
  assert_string_equal(a, want);
  qv_free(a);
  s->release(s);
  free(s);
}

static void test_leaves(void **state) {
  (void)state;
  static const char *const table[][2] = {
      {"n", "null"},
      {"b", "bool"},
      {"c", "int8"},
      {"s", "int16"},
      {"i", "int32"},
      {"l", "int64"},
      {"C", "uint8"},
      {"S", "uint16"},
      {"I", "uint32"},
      {"L", "uint64"},
      {"e", "halffloat"},
      {"f", "float"},
      {"g", "double"},
      {"z", "binary"},
      {"Z", "large_binary"},
      {"u", "string"},
      {"U", "large_string"},
      {"vz", "binary_view"},
      {"vu", "string_view"},
      {"w:16", "fixed_size_binary[16]"},
      {"d:5,2", "decimal128(5, 2)"},
      {"d:38,4,256", "decimal256(38, 4)"},
      {"d:9,2,32", "decimal32(9, 2)"},
      {"d:18,3,64", "decimal64(18, 3)"},
      {"tdD", "date32[day]"},
      {"tdm", "date64[ms]"},
      {"tts", "time32[s]"},
      {"ttm", "time32[ms]"},
      {"ttu", "time64[us]"},
      {"ttn", "time64[ns]"},
      {"tss:", "timestamp[s]"},
      {"tsn:", "timestamp[ns]"},
      {"tsm:UTC", "timestamp[ms, tz=UTC]"},
      {"tsu:America/New_York", "timestamp[us, tz=America/New_York]"},
      {"tDs", "duration[s]"},
      {"tDm", "duration[ms]"},
      {"tDu", "duration[us]"},
      {"tDn", "duration[ns]"},
      {"tiM", "month_interval"},
      {"tiD", "day_time_interval"},
      {"tin", "month_day_nano_interval"},
  };
  for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) expect(leaf(table[i][0]), 0, table[i][1]);
  expect(node("i", "f0", 0, 0), QV_TYPE_STRING_FIELD, "f0: int32 not null");
  expect(node("u", "s", NUL, 0), QV_TYPE_STRING_FIELD, "s: string");
  assert_string_equal(qv_arrow_type_cpp_name(QV_ARROW_FLOAT16), "halffloat");
  assert_string_equal(qv_arrow_type_cpp_name(QV_ARROW_LIST), "?");
}

static void test_nested(void **state) {
  (void)state;
  expect(node("+l", "x", NUL, 1, node("i", "item", NUL, 0)), 0, "list<item: int32>");
  expect(node("+L", "x", NUL, 1, node("s", "item", 0, 0)), 0, "large_list<item: int16 not null>");
  expect(node("+vl", "x", NUL, 1, node("i", "item", NUL, 0)), 0, "list_view<item: int32>");
  expect(node("+vL", "x", NUL, 1, node("f", "item", NUL, 0)), 0, "large_list_view<item: float>");
  expect(node("+w:2", "x", NUL, 1, node("i", "item", NUL, 0)), 0, "fixed_size_list<item: int32>[2]");
  expect(node("+l", "x", NUL, 1, node("+l", "item", NUL, 1, node("s", "item", NUL, 0))), 0,
         "list<item: list<item: int16>>");
  expect(node("+s", "x", NUL, 2, node("i", "a", NUL, 0), node("u", "b", 0, 0)), 0,
         "struct<a: int32, b: string not null>");
  expect(node("+s", "x", NUL, 0), 0, "struct<>");
  expect(node("+us:5,7", "x", NUL, 2, node("i", "x", NUL, 0), node("u", "y", NUL, 0)), 0,
         "sparse_union<x: int32=5, y: string=7>");
  expect(node("+ud:0,1", "x", NUL, 2, node("c", "a", 0, 0), node("f", "b", NUL, 0)), 0,
         "dense_union<a: int8 not null=0, b: float=1>");
  /* type_test.cc TestMapType::Basics */
  expect(node("+m", "x", NUL, 1,
              node("+s", "entries", 0, 2, node("u", "key", 0, 0), node("u", "value", NUL, 0))),
         0, "map<string, string>");
  expect(node("+m", "x", NUL | ARROW_FLAG_MAP_KEYS_SORTED, 1,
              node("+s", "entries", 0, 2, node("u", "key", 0, 0), node("u", "value", NUL, 0))),
         0, "map<string, string, keys_sorted>");
  expect(node("+m", "x", NUL, 1,
              node("+s", "some_entries", 0, 2, node("u", "some_key", 0, 0),
                   node("u", "some_value", NUL, 0))),
         0, "map<string ('some_key'), string ('some_value') ('some_entries')>");
  expect(node("+r", "x", NUL, 2, node("i", "run_ends", 0, 0), node("u", "values", NUL, 0)), 0,
         "run_end_encoded<run_ends: int32, values: string>");
  expect(node("+s", "x", NUL, 1, node("+w:3", "fl", 0, 1, node("tsm:UTC", "t", NUL, 0))),
         QV_TYPE_STRING_FIELD, "x: struct<fl: fixed_size_list<t: timestamp[ms, tz=UTC]>[3] not null>");
}

static struct ArrowSchema *dict(const char *index, int64_t flags, struct ArrowSchema *values) {
  struct ArrowSchema *s = node(index, "d", flags, 0);
  QvError e;
  assert_int_equal(qv_arrow_schema_alloc_dictionary(s, &e), QV_OK);
  memcpy(s->dictionary, values, sizeof *values);
  free(values);
  return s;
}

static void test_dictionaries(void **state) {
  (void)state;
  /* type_test.cc TestDictionaryType::ToString */
  expect(dict("c", NUL, node("u", "", NUL, 0)), 0, "dictionary<values=string, indices=int8, ordered=0>");
  expect(dict("S", NUL | ARROW_FLAG_DICTIONARY_ORDERED, node("l", "", NUL, 0)), 0,
         "dictionary<values=int64, indices=uint16, ordered=1>");
  expect(dict("i", NUL, node("+l", "", NUL, 1, node("u", "item", NUL, 0))), 0,
         "dictionary<values=list<item: string>, indices=int32, ordered=0>");
  expect(node("+l", "x", NUL, 1, dict("c", NUL, node("u", "", NUL, 0))), 0,
         "list<d: dictionary<values=string, indices=int8, ordered=0>>");
}

static void test_extensions(void **state) {
  (void)state;
  /* fixed_shape_tensor_test.cc ToString */
  struct ArrowSchema *s = node("+w:84", "x", NUL, 1, node("s", "item", 0, 0));
  ext(s, QV_FIXED_SHAPE_TENSOR, "{\"shape\":[3,4,7]}");
  expect(s, 0, "extension<arrow.fixed_shape_tensor[value_type=int16, shape=[3,4,7]]>");
  s = node("+w:84", "x", NUL, 1, node("i", "item", 0, 0));
  ext(s, QV_FIXED_SHAPE_TENSOR, "{\"shape\":[3,4,7],\"permutation\":[1,0,2]}");
  expect(s, 0, "extension<arrow.fixed_shape_tensor[value_type=int32, shape=[3,4,7], permutation=[1,0,2]]>");
  s = node("+w:84", "x", NUL, 1, node("l", "item", 0, 0));
  ext(s, QV_FIXED_SHAPE_TENSOR, "{\"shape\":[3,4,7],\"dim_names\":[\"C\",\"H\",\"W\"]}");
  expect(s, 0, "extension<arrow.fixed_shape_tensor[value_type=int64, shape=[3,4,7], dim_names=[C,H,W]]>");
  /* metadata that does not fit the storage: not the tensor type */
  s = node("+w:2", "x", NUL, 1, node("f", "item", 0, 0));
  ext(s, QV_FIXED_SHAPE_TENSOR, "{\"shape\":[3]}");
  expect(s, 0, "extension<arrow.fixed_shape_tensor[storage_type=fixed_size_list<item: float not null>[2]]>");
  /* variable_shape_tensor ToString (extension_type_test.cc) */
  s = node("+s", "x", NUL, 2, node("+l", "data", 0, 1, node("l", "item", 0, 0)),
           node("+w:3", "shape", 0, 1, node("i", "item", 0, 0)));
  ext(s, QV_VARIABLE_SHAPE_TENSOR, "{\"dim_names\":[\"C\",\"H\",\"W\"]}");
  expect(s, 0, "extension<arrow.variable_shape_tensor[value_type=int64, ndim=3, dim_names=[C,H,W]]>");
  s = node("+s", "x", NUL, 2, node("+l", "data", 0, 1, node("l", "item", 0, 0)),
           node("+w:3", "shape", 0, 1, node("i", "item", 0, 0)));
  ext(s, QV_VARIABLE_SHAPE_TENSOR, "{\"uniform_shape\":[null,1,null]}");
  expect(s, 0, "extension<arrow.variable_shape_tensor[value_type=int64, ndim=3, uniform_shape=[null,1,null]]>");
  s = node("w:16", "x", NUL, 0);
  ext(s, "arrow.uuid", "");
  expect(s, 0, "extension<arrow.uuid>");
  s = node("c", "x", NUL, 0);
  ext(s, "arrow.bool8", "");
  expect(s, 0, "extension<arrow.bool8>");
  s = node("u", "x", NUL, 0);
  ext(s, "arrow.json", "");
  expect(s, 0, "extension<arrow.json>");
  s = node("i", "x", NUL, 0);
  ext(s, "my.ext", "abc");
  expect(s, 0, "extension<my.ext[storage_type=int32]>");
  s = dict("c", NUL, node("u", "", NUL, 0));
  ext(s, "dict-extension", "");
  expect(s, QV_TYPE_STRING_FIELD,
         "d: extension<dict-extension[storage_type=dictionary<values=string, indices=int8, ordered=0>]>");
  /* quiver's sparse columns */
  QvSparseColumnType t;
  memset(&t, 0, sizeof t);
  t.kind = QV_SPARSE_COLUMN_TENSOR;
  t.format = QV_SPARSE_CSR;
  t.value_type = QV_ARROW_FLOAT64;
  t.index_type = QV_ARROW_INT32;
  t.indptr_type = QV_ARROW_INT64;
  t.ndim = 2;
  QvError e;
  s = calloc(1, sizeof *s);
  assert_int_equal(qv_sparse_column_schema_init(s, "m", &t, &e), QV_OK);
  expect(s, 0, "extension<quiver.sparse_tensor[value_type=double, format=csr, ndim=2, index_type=int32, indptr_type=int64]>");
  memset(&t, 0, sizeof t);
  t.kind = QV_SPARSE_COLUMN_VECTOR;
  t.format = QV_SPARSE_CSR;
  t.value_type = QV_ARROW_FLOAT32;
  t.index_type = QV_ARROW_INT32;
  t.indptr_type = QV_ARROW_INT32;
  t.ndim = 1;
  t.size = 5;
  s = calloc(1, sizeof *s);
  assert_int_equal(qv_sparse_column_schema_init(s, "v", &t, &e), QV_OK);
  expect(s, QV_TYPE_STRING_FIELD, "v: extension<quiver.sparse_vector[value_type=float, size=5, index_type=int32]>");
}

static void test_truncation_and_errors(void **state) {
  (void)state;
  struct ArrowSchema *s = node("+l", "x", NUL, 1, node("i", "item", NUL, 0));
  char buf[6];
  size_t len = 0;
  QvError e;
  assert_int_equal(qv_arrow_schema_to_string(s, 0, buf, sizeof buf, &len, &e), QV_OK);
  assert_string_equal(buf, "list<");
  assert_int_equal(len, strlen("list<item: int32>"));
  assert_int_equal(qv_arrow_schema_to_string(s, 0, NULL, 0, &len, &e), QV_OK);
  assert_int_equal(len, strlen("list<item: int32>"));
  s->release(s);
  free(s);
  /* a bad format string */
  s = node("?x", "x", NUL, 0);
  assert_int_equal(qv_arrow_schema_to_string(s, 0, buf, sizeof buf, &len, &e), QV_EINVAL);
  assert_string_equal(buf, "");
  s->release(s);
  free(s);
  /* deeper than QV_ARRAY_MAX_DEPTH */
  s = node("i", "item", NUL, 0);
  for (int i = 0; i < QV_ARRAY_MAX_DEPTH + 2; i++) s = node("+l", "item", NUL, 1, s);
  assert_int_equal(qv_arrow_schema_to_string(s, 0, NULL, 0, &len, &e), QV_ELIMIT);
  s->release(s);
  free(s);
  struct ArrowSchema released = {0};
  assert_int_equal(qv_arrow_schema_to_string(&released, 0, buf, sizeof buf, &len, &e), QV_EINVAL);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_leaves),
      cmocka_unit_test(test_nested),
      cmocka_unit_test(test_dictionaries),
      cmocka_unit_test(test_extensions),
      cmocka_unit_test(test_truncation_and_errors),
  };
  return qv_test_run(tests, NULL, NULL);
}
