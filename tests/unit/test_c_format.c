/* qvi_type_c_format (util/c_format.c), the one Arrow type -> C Data
 * Interface format string mapping behind the IPC record batch reader and
 * the integration JSON reader: every QvTypeId with its parameters, the
 * union checks, truncation, and the ids that are no type. */
#include <string.h>

#include "test_util.h"
#include "util/c_format.h"

static const int32_t kIds[3] = {5, 0, 127};

typedef struct Case {
  QvType type;
  int64_t n_children;
  const char *want;
} Case;

#define T(...) {__VA_ARGS__}
static const Case kCases[] = {
    {T(.id = QV_TYPE_NULL), 0, "n"},
    {T(.id = QV_TYPE_INT, .u.int_ = {8, true}), 0, "c"},
    {T(.id = QV_TYPE_INT, .u.int_ = {8, false}), 0, "C"},
    {T(.id = QV_TYPE_INT, .u.int_ = {16, true}), 0, "s"},
    {T(.id = QV_TYPE_INT, .u.int_ = {16, false}), 0, "S"},
    {T(.id = QV_TYPE_INT, .u.int_ = {32, true}), 0, "i"},
    {T(.id = QV_TYPE_INT, .u.int_ = {32, false}), 0, "I"},
    {T(.id = QV_TYPE_INT, .u.int_ = {64, true}), 0, "l"},
    {T(.id = QV_TYPE_INT, .u.int_ = {64, false}), 0, "L"},
    {T(.id = QV_TYPE_FLOATING_POINT, .u.floating_point = {QV_PRECISION_HALF}), 0, "e"},
    {T(.id = QV_TYPE_FLOATING_POINT, .u.floating_point = {QV_PRECISION_SINGLE}), 0, "f"},
    {T(.id = QV_TYPE_FLOATING_POINT, .u.floating_point = {QV_PRECISION_DOUBLE}), 0, "g"},
    {T(.id = QV_TYPE_BINARY), 0, "z"},
    {T(.id = QV_TYPE_UTF8), 0, "u"},
    {T(.id = QV_TYPE_BOOL), 0, "b"},
    {T(.id = QV_TYPE_DECIMAL, .u.decimal = {38, 10, 128}), 0, "d:38,10"},
    {T(.id = QV_TYPE_DECIMAL, .u.decimal = {76, -3, 256}), 0, "d:76,-3,256"},
    {T(.id = QV_TYPE_DECIMAL, .u.decimal = {9, 2, 32}), 0, "d:9,2,32"},
    {T(.id = QV_TYPE_DATE, .u.date = {QV_DATE_DAY}), 0, "tdD"},
    {T(.id = QV_TYPE_DATE, .u.date = {QV_DATE_MILLISECOND}), 0, "tdm"},
    {T(.id = QV_TYPE_TIME, .u.time = {QV_TIME_SECOND, 32}), 0, "tts"},
    {T(.id = QV_TYPE_TIME, .u.time = {QV_TIME_MILLISECOND, 32}), 0, "ttm"},
    {T(.id = QV_TYPE_TIME, .u.time = {QV_TIME_MICROSECOND, 64}), 0, "ttu"},
    {T(.id = QV_TYPE_TIME, .u.time = {QV_TIME_NANOSECOND, 64}), 0, "ttn"},
    {T(.id = QV_TYPE_TIMESTAMP, .u.timestamp = {QV_TIME_MICROSECOND, NULL, 0}), 0, "tsu:"},
    /* the time zone is a counted string: the bytes past its length are not read */
    {T(.id = QV_TYPE_TIMESTAMP, .u.timestamp = {QV_TIME_SECOND, "UTCxyz", 3}), 0, "tss:UTC"},
    {T(.id = QV_TYPE_TIMESTAMP, .u.timestamp = {QV_TIME_NANOSECOND, "Europe/Paris", 12}), 0,
     "tsn:Europe/Paris"},
    {T(.id = QV_TYPE_INTERVAL, .u.interval = {QV_INTERVAL_YEAR_MONTH}), 0, "tiM"},
    {T(.id = QV_TYPE_INTERVAL, .u.interval = {QV_INTERVAL_DAY_TIME}), 0, "tiD"},
    {T(.id = QV_TYPE_INTERVAL, .u.interval = {QV_INTERVAL_MONTH_DAY_NANO}), 0, "tin"},
    {T(.id = QV_TYPE_LIST), 1, "+l"},
    {T(.id = QV_TYPE_STRUCT), 3, "+s"},
    {T(.id = QV_TYPE_UNION, .u.union_ = {QV_UNION_SPARSE, false, 0, NULL}), 2, "+us:0,1"},
    {T(.id = QV_TYPE_UNION, .u.union_ = {QV_UNION_DENSE, true, 3, kIds}), 3, "+ud:5,0,127"},
    {T(.id = QV_TYPE_UNION, .u.union_ = {QV_UNION_DENSE, false, 0, NULL}), 0, "+ud:"},
    {T(.id = QV_TYPE_FIXED_SIZE_BINARY, .u.fixed_size_binary = {16}), 0, "w:16"},
    {T(.id = QV_TYPE_FIXED_SIZE_LIST, .u.fixed_size_list = {4}), 1, "+w:4"},
    {T(.id = QV_TYPE_MAP, .u.map = {true}), 1, "+m"},
    {T(.id = QV_TYPE_DURATION, .u.duration = {QV_TIME_SECOND}), 0, "tDs"},
    {T(.id = QV_TYPE_DURATION, .u.duration = {QV_TIME_MILLISECOND}), 0, "tDm"},
    {T(.id = QV_TYPE_DURATION, .u.duration = {QV_TIME_MICROSECOND}), 0, "tDu"},
    {T(.id = QV_TYPE_DURATION, .u.duration = {QV_TIME_NANOSECOND}), 0, "tDn"},
    {T(.id = QV_TYPE_LARGE_BINARY), 0, "Z"},
    {T(.id = QV_TYPE_LARGE_UTF8), 0, "U"},
    {T(.id = QV_TYPE_LARGE_LIST), 1, "+L"},
    {T(.id = QV_TYPE_RUN_END_ENCODED), 2, "+r"},
    {T(.id = QV_TYPE_BINARY_VIEW), 0, "vz"},
    {T(.id = QV_TYPE_UTF8_VIEW), 0, "vu"},
    {T(.id = QV_TYPE_LIST_VIEW), 1, "+vl"},
    {T(.id = QV_TYPE_LARGE_LIST_VIEW), 1, "+vL"},
};
#define N_CASES (sizeof kCases / sizeof kCases[0])

static void test_every_type(void **state) {
  (void)state;
  bool seen[QV_TYPE_ID_COUNT] = {false};
  for (size_t i = 0; i < N_CASES; i++) {
    char buf[64];
    memset(buf, 'x', sizeof buf);
    QvError e = {0};
    QvStatus st = qvi_type_c_format(&kCases[i].type, kCases[i].n_children, buf, sizeof buf, &e);
    if (st != QV_OK || strcmp(buf, kCases[i].want) != 0)
      fail_msg("case %zu (type id %d): status %d, \"%s\", want \"%s\" (%s)", i,
               (int)kCases[i].type.id, (int)st, st == QV_OK ? buf : "", kCases[i].want,
               e.message);
    seen[kCases[i].type.id] = true;
  }
  /* a type added to QvTypeId without a case here (and in the mapping) fails */
  for (int id = QV_TYPE_NONE + 1; id < QV_TYPE_ID_COUNT; id++)
    if (!seen[id]) fail_msg("type id %d has no case", id);
}

static void test_int_formats(void **state) {
  (void)state;
  assert_string_equal(qvi_int_c_format((QvIntType){8, true}), "c");
  assert_string_equal(qvi_int_c_format((QvIntType){16, false}), "S");
  assert_string_equal(qvi_int_c_format((QvIntType){32, true}), "i");
  assert_string_equal(qvi_int_c_format((QvIntType){64, false}), "L");
}

static void test_no_type(void **state) {
  (void)state;
  char buf[16];
  QvError e = {0};
  QvType t = {.id = QV_TYPE_NONE};
  assert_int_equal(qvi_type_c_format(&t, 0, buf, sizeof buf, &e), QV_EINVAL);
  assert_string_equal(e.message, "field has no type");
  t.id = QV_TYPE_ID_COUNT;
  assert_int_equal(qvi_type_c_format(&t, 0, buf, sizeof buf, &e), QV_EINVAL);
}

static void test_union_checks(void **state) {
  (void)state;
  char buf[1024];
  QvError e = {0};
  QvType t = {.id = QV_TYPE_UNION, .u.union_ = {QV_UNION_SPARSE, true, 3, kIds}};
  assert_int_equal(qvi_type_c_format(&t, 2, buf, sizeof buf, &e), QV_EINVAL);
  assert_string_equal(e.message, "union has 3 type ids for 2 children");
  int32_t bad[2] = {1, 128};
  t = (QvType){.id = QV_TYPE_UNION, .u.union_ = {QV_UNION_DENSE, true, 2, bad}};
  assert_int_equal(qvi_type_c_format(&t, 2, buf, sizeof buf, &e), QV_EINVAL);
  assert_string_equal(e.message, "union type id 128 is outside 0..127");
  bad[1] = -1;
  assert_int_equal(qvi_type_c_format(&t, 2, buf, sizeof buf, &e), QV_EINVAL);
  t = (QvType){.id = QV_TYPE_UNION, .u.union_ = {QV_UNION_DENSE, false, 0, NULL}};
  assert_int_equal(qvi_type_c_format(&t, 129, buf, sizeof buf, &e), QV_EINVAL);
  assert_string_equal(e.message, "union has 129 children, at most 128 fit int8 type ids");
  /* 128 children without type ids: 0..127, the longest union format */
  assert_int_equal(qvi_type_c_format(&t, 128, buf, sizeof buf, &e), QV_OK);
  assert_int_equal(strncmp(buf, "+ud:0,1,2,", 10), 0);
  size_t n = strlen(buf);
  assert_true(n < 16 + 128 * 4);
  assert_string_equal(buf + n - 8, ",126,127");
}

static void test_truncation(void **state) {
  (void)state;
  char buf[6];
  QvError e = {0};
  QvType t = {.id = QV_TYPE_TIMESTAMP, .u.timestamp = {QV_TIME_SECOND, "Europe/Paris", 12}};
  assert_int_equal(qvi_type_c_format(&t, 0, buf, sizeof buf, &e), QV_OK);
  assert_string_equal(buf, "tss:E");
  QvType u = {.id = QV_TYPE_UNION, .u.union_ = {QV_UNION_SPARSE, false, 0, NULL}};
  assert_int_equal(qvi_type_c_format(&u, 100, buf, sizeof buf, &e), QV_OK);
  assert_string_equal(buf, "+us:0");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_every_type),   cmocka_unit_test(test_int_formats),
      cmocka_unit_test(test_no_type),      cmocka_unit_test(test_union_checks),
      cmocka_unit_test(test_truncation),
  };
  return qv_test_run(tests, NULL, NULL);
}
