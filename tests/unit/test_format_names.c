/* Display names of the format's enums and the short type descriptions. */
#include <string.h>

#include "quiver/format.h"
#include "test_util.h"

static void test_enum_names(void **state) {
  (void)state;
  assert_string_equal(qv_header_type_name(QV_HEADER_NONE), "NONE");
  assert_string_equal(qv_header_type_name(QV_HEADER_SCHEMA), "Schema");
  assert_string_equal(qv_header_type_name(QV_HEADER_DICTIONARY_BATCH), "DictionaryBatch");
  assert_string_equal(qv_header_type_name(QV_HEADER_RECORD_BATCH), "RecordBatch");
  assert_string_equal(qv_header_type_name(QV_HEADER_TENSOR), "Tensor");
  assert_string_equal(qv_header_type_name(QV_HEADER_SPARSE_TENSOR), "SparseTensor");
  assert_string_equal(qv_header_type_name(6), "?");
  assert_string_equal(qv_header_type_name(255), "?");

  /* names in union-tag order, as Schema.fbs declares the Type union */
  static const char *const types[QV_TYPE_ID_COUNT] = {
      "NONE",        "Null",       "Int",          "FloatingPoint", "Binary",
      "Utf8",        "Bool",       "Decimal",      "Date",          "Time",
      "Timestamp",   "Interval",   "List",         "Struct_",       "Union",
      "FixedSizeBinary", "FixedSizeList", "Map",   "Duration",      "LargeBinary",
      "LargeUtf8",   "LargeList",  "RunEndEncoded", "BinaryView",   "Utf8View",
      "ListView",    "LargeListView"};
  for (int i = 0; i < QV_TYPE_ID_COUNT; i++)
    assert_string_equal(qv_type_id_name((QvTypeId)i), types[i]);
  assert_string_equal(qv_type_id_name(QV_TYPE_ID_COUNT), "?");
  assert_string_equal(qv_type_id_name((QvTypeId)-1), "?");

  assert_string_equal(qv_metadata_version_name(QV_METADATA_V1), "V1");
  assert_string_equal(qv_metadata_version_name(QV_METADATA_V5), "V5");
  assert_string_equal(qv_metadata_version_name(5), "?");
  assert_string_equal(qv_metadata_version_name(-1), "?");

  assert_string_equal(qv_sparse_format_name(QV_SPARSE_COO), "coo");
  assert_string_equal(qv_sparse_format_name(QV_SPARSE_CSR), "csr");
  assert_string_equal(qv_sparse_format_name(QV_SPARSE_CSC), "csc");
  assert_string_equal(qv_sparse_format_name(QV_SPARSE_CSF), "csf");
  assert_string_equal(qv_sparse_format_name(5), "?");
}

static QvType make(QvTypeId id) {
  QvType t;
  memset(&t, 0, sizeof t);
  t.id = id;
  return t;
}

static void expect_describe(const QvType *t, const char *want) {
  char buf[128];
  assert_string_equal(qv_type_describe(t, buf, sizeof buf), want);
}

static void test_describe(void **state) {
  (void)state;
  QvType t = make(QV_TYPE_INT);
  t.u.int_.bit_width = 32;
  t.u.int_.is_signed = true;
  expect_describe(&t, "int32");
  t.u.int_.bit_width = 8;
  t.u.int_.is_signed = false;
  expect_describe(&t, "uint8");
  t = make(QV_TYPE_FLOATING_POINT);
  expect_describe(&t, "float16");
  t.u.floating_point.precision = QV_PRECISION_DOUBLE;
  expect_describe(&t, "float64");
  t = make(QV_TYPE_DECIMAL);
  t.u.decimal.precision = 10;
  t.u.decimal.scale = 2;
  t.u.decimal.bit_width = 128;
  expect_describe(&t, "decimal128(10, 2)");
  t = make(QV_TYPE_DATE);
  expect_describe(&t, "date32[day]");
  t.u.date.unit = QV_DATE_MILLISECOND;
  expect_describe(&t, "date64[ms]");
  t = make(QV_TYPE_TIME);
  t.u.time.unit = QV_TIME_NANOSECOND;
  t.u.time.bit_width = 64;
  expect_describe(&t, "time64[ns]");
  t = make(QV_TYPE_TIMESTAMP);
  t.u.timestamp.unit = QV_TIME_MICROSECOND;
  expect_describe(&t, "timestamp[us]");
  t.u.timestamp.timezone = "UTC";
  t.u.timestamp.timezone_len = 3;
  expect_describe(&t, "timestamp[us, tz=UTC]");
  t = make(QV_TYPE_INTERVAL);
  t.u.interval.unit = QV_INTERVAL_MONTH_DAY_NANO;
  expect_describe(&t, "interval[month_day_nano]");
  t = make(QV_TYPE_UNION);
  t.u.union_.mode = QV_UNION_DENSE;
  expect_describe(&t, "dense_union");
  t = make(QV_TYPE_FIXED_SIZE_BINARY);
  t.u.fixed_size_binary.byte_width = 16;
  expect_describe(&t, "fixed_size_binary[16]");
  t = make(QV_TYPE_FIXED_SIZE_LIST);
  t.u.fixed_size_list.list_size = 3;
  expect_describe(&t, "fixed_size_list[3]");
  t = make(QV_TYPE_MAP);
  t.u.map.keys_sorted = true;
  expect_describe(&t, "map[sorted]");
  t = make(QV_TYPE_DURATION);
  t.u.duration.unit = QV_TIME_SECOND;
  expect_describe(&t, "duration[s]");
  t = make(QV_TYPE_UTF8_VIEW);
  expect_describe(&t, "utf8_view");
  t = make(QV_TYPE_LARGE_LIST_VIEW);
  expect_describe(&t, "large_list_view");
  t = make(QV_TYPE_NONE);
  expect_describe(&t, "?");
  /* every member has a description of its own, and a short buffer truncates */
  char seen[QV_TYPE_ID_COUNT][64];
  for (int i = 1; i < QV_TYPE_ID_COUNT; i++) {
    t = make((QvTypeId)i);
    qv_type_describe(&t, seen[i], sizeof seen[i]);
    assert_string_not_equal(seen[i], "?");
    for (int j = 1; j < i; j++) assert_string_not_equal(seen[i], seen[j]);
  }
  char small[4];
  t = make(QV_TYPE_LARGE_BINARY);
  assert_string_equal(qv_type_describe(&t, small, sizeof small), "lar");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_enum_names),
      cmocka_unit_test(test_describe),
  };
  return qv_test_run(tests, NULL, NULL);
}
