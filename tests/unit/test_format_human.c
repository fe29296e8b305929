/* qv_array_view_format_human: every temporal type and unit, dates before 1970,
 * negative durations, out-of-range fallbacks, time zones, decimal scales
 * (negative, 256-bit), nan/inf; and that the JSON formatter is unchanged. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "quiver/array.h"
#include "quiver/c_data.h"
#include "test_util.h"
#include "util/load.h"

static void ok(QvStatus st, const QvError *e) {
  if (st != QV_OK) fail_msg("%s", e->message);
}

static void begin(struct ArrowSchema *s, struct ArrowArray *a, const char *format) {
  QvError e;
  ok(qv_arrow_schema_init(s, format, "x", ARROW_FLAG_NULLABLE, 0, &e), &e);
  ok(qv_array_init_from_schema(a, s, &e), &e);
}

/* Finishes the array and checks each value's human text (and, when json is
 * not NULL, its JSON text). Validation is full but for decimals' precision:
 * the decimal cases print the extremes of each bit width, whatever the
 * precision (full validation refuses those: test_integration_json's
 * test_decimal_precision). */
static void expect(struct ArrowSchema *s, struct ArrowArray *a, const char *const *want,
                   const char *const *json) {
  QvError e;
  ok(qv_array_finish_building(a, QV_VALIDATE_CHEAP, &e), &e);
  QvArrayView v;
  ok(qv_array_view_init(&v, s, &e), &e);
  ok(qv_array_view_set_array(&v, a, QV_VALIDATE_NONE, &e), &e);
  ok(qv_array_view_validate(&v, QV_VALIDATE_FULL, QV_VALIDATE_DECIMALS_UNBOUNDED, &e), &e);
  for (int64_t i = 0; i < v.length; i++) {
    char *text;
    ok(qv_array_view_format_human(&v, i, 0, &text, &e), &e);
    if (strcmp(text, want[i]) != 0)
      fail_msg("%s value %lld: got '%s', want '%s'", s->format, (long long)i, text, want[i]);
    free(text);
    if (json) {
      ok(qv_array_view_format_value(&v, i, 0, &text, &e), &e);
      if (strcmp(text, json[i]) != 0)
        fail_msg("%s JSON value %lld: got '%s', want '%s'", s->format, (long long)i, text, json[i]);
      free(text);
    }
  }
  qv_array_view_reset(&v);
  a->release(a);
  s->release(s);
}

static void ints(const char *format, const int64_t *values, int n, const char *const *want) {
  struct ArrowSchema s;
  struct ArrowArray a;
  begin(&s, &a, format);
  for (int i = 0; i < n; i++) assert_int_equal(qv_array_append_int(&a, values[i], NULL), QV_OK);
  expect(&s, &a, want, NULL);
}

#define N(arr) ((int)(sizeof(arr) / sizeof(arr)[0]))

static void test_dates(void **state) {
  (void)state;
  const int64_t d32[] = {0, 19783, -1, -719528, -719529, 2932896, 2932897, INT32_MIN, 11016};
  const char *const w32[] = {"1970-01-01", "2024-03-01", "1969-12-31", "0000-01-01",
                             "-719529 days", "9999-12-31", "2932897 days", "-2147483648 days",
                             "2000-02-29"};
  ints("tdD", d32, N(d32), w32);
  const int64_t d64[] = {0, 1709251200000, 1709300707123, -1, -86400000, INT64_MIN,
                         253402300800000};
  const char *const w64[] = {"1970-01-01", "2024-03-01", "2024-03-01T13:45:07.123",
                             "1969-12-31T23:59:59.999", "1969-12-31",
                             "-9223372036854775808 ms", "253402300800000 ms"};
  ints("tdm", d64, N(d64), w64);
}

static void test_times(void **state) {
  (void)state;
  const int64_t ts[] = {0, 49507, 86399, 86400, -1};
  const char *const ws[] = {"00:00:00", "13:45:07", "23:59:59", "86400 s", "-1 s"};
  ints("tts", ts, N(ts), ws);
  const int64_t tm[] = {49507123, 5};
  const char *const wm[] = {"13:45:07.123", "00:00:00.005"};
  ints("ttm", tm, N(tm), wm);
  const int64_t tu[] = {49507123456, 86399999999};
  const char *const wu[] = {"13:45:07.123456", "23:59:59.999999"};
  ints("ttu", tu, N(tu), wu);
  const int64_t tn[] = {49507123456789, 1, 86400000000000};
  const char *const wn[] = {"13:45:07.123456789", "00:00:00.000000001", "86400000000000 ns"};
  ints("ttn", tn, N(tn), wn);
}

static void test_timestamps(void **state) {
  (void)state;
  const int64_t s[] = {0, 1709300707, -1, -62167219200, -62167219201, 253402300799,
                       253402300800, INT64_MIN, INT64_MAX};
  const char *const ws[] = {"1970-01-01T00:00:00", "2024-03-01T13:45:07", "1969-12-31T23:59:59",
                            "0000-01-01T00:00:00", "-62167219201 s", "9999-12-31T23:59:59",
                            "253402300800 s", "-9223372036854775808 s", "9223372036854775807 s"};
  ints("tss:", s, N(s), ws);
  const int64_t ms[] = {1709300707123, -1};
  const char *const wms[] = {"2024-03-01T13:45:07.123", "1969-12-31T23:59:59.999"};
  ints("tsm:", ms, N(ms), wms);
  const int64_t us[] = {1709300707123456, -1, -86400000001};
  const char *const wus[] = {"2024-03-01T13:45:07.123456", "1969-12-31T23:59:59.999999",
                             "1969-12-30T23:59:59.999999"};
  ints("tsu:", us, N(us), wus);
  const int64_t ns[] = {1709300707123456789, -1, INT64_MIN, INT64_MAX};
  const char *const wns[] = {"2024-03-01T13:45:07.123456789", "1969-12-31T23:59:59.999999999",
                             "1677-09-21T00:12:43.145224192", "2262-04-11T23:47:16.854775807"};
  ints("tsn:", ns, N(ns), wns);
}

static void test_time_zones(void **state) {
  (void)state;
  const int64_t v[] = {1709300707123456, -1};
  const char *const utc[] = {"2024-03-01T13:45:07.123456+00:00", "1969-12-31T23:59:59.999999+00:00"};
  ints("tsu:UTC", v, N(v), utc);
  ints("tsu:Etc/UTC", v, N(v), utc);
  ints("tsu:+00:00", v, N(v), utc);
  /* fixed offsets: the instant shown in that offset */
  const char *const east[] = {"2024-03-01T19:15:07.123456+05:30", "1970-01-01T05:29:59.999999+05:30"};
  ints("tsu:+05:30", v, N(v), east);
  const char *const west[] = {"2024-03-01T05:45:07.123456-08:00", "1969-12-31T15:59:59.999999-08:00"};
  ints("tsu:-08:00", v, N(v), west);
  /* named zones: the UTC instant with the name (no zone database) */
  const char *const paris[] = {"2024-03-01T13:45:07.123456Z[Europe/Paris]",
                               "1969-12-31T23:59:59.999999Z[Europe/Paris]"};
  ints("tsu:Europe/Paris", v, N(v), paris);
  const char *const ctl[] = {"2024-03-01T13:45:07.123456Z[a\\x1bb\\x5d]",
                             "1969-12-31T23:59:59.999999Z[a\\x1bb\\x5d]"};
  ints("tsu:a\x1b" "b]", v, N(v), ctl);
  /* out of range with a zone: the raw value, unit and zone */
  const int64_t far[] = {INT64_MAX};
  const char *const wfar[] = {"9223372036854775807 s [UTC]"};
  ints("tss:UTC", far, 1, wfar);
  /* a shift past int64 falls back to the UTC instant's raw number too */
  const char *const wfar2[] = {"9223372036854775807 ns [+05:30]"};
  ints("tsn:+05:30", far, 1, wfar2);
  /* a long name is cut after 64 bytes; the value itself never is */
  char fmt[128] = "tss:";
  memset(fmt + 4, 'z', 100);
  fmt[104] = '\0';
  char want_long[128];
  snprintf(want_long, sizeof want_long, "1970-01-01T00:00:00Z[%.64s...]", fmt + 4);
  const char *const wlong[] = {want_long};
  const int64_t zero0[] = {0};
  ints(fmt, zero0, 1, wlong);
  /* an offset-looking name that is not one is treated as a name */
  const int64_t zero[] = {0};
  const char *const wbad[] = {"1970-01-01T00:00:00Z[+25:00]"};
  ints("tss:+25:00", zero, 1, wbad);
}

static void test_durations(void **state) {
  (void)state;
  const int64_t s[] = {0, 3723, -3723, 59, 3600, 90000, INT64_MIN, INT64_MAX};
  const char *const ws[] = {"PT0S", "PT1H2M3S", "-PT1H2M3S", "PT59S", "PT1H", "PT25H",
                            "-PT2562047788015215H30M8S", "PT2562047788015215H30M7S"};
  ints("tDs", s, N(s), ws);
  const int64_t ms[] = {3723500, -500, 1};
  const char *const wms[] = {"PT1H2M3.5S", "-PT0.5S", "PT0.001S"};
  ints("tDm", ms, N(ms), wms);
  const int64_t us[] = {1500000, -60000001};
  const char *const wus[] = {"PT1.5S", "-PT1M0.000001S"};
  ints("tDu", us, N(us), wus);
  const int64_t ns[] = {1, -1, 120000000000, INT64_MIN};
  const char *const wns[] = {"PT0.000000001S", "-PT0.000000001S", "PT2M",
                             "-PT2562047H47M16.854775808S"};
  ints("tDn", ns, N(ns), wns);
}

static void test_intervals(void **state) {
  (void)state;
  const int64_t m[] = {14, 1, -1, 0};
  const char *const wm[] = {"14 months", "1 month", "-1 month", "0 months"};
  ints("tiM", m, N(m), wm);
  struct ArrowSchema s;
  struct ArrowArray a;
  begin(&s, &a, "tiD");
  assert_int_equal(qv_array_append_interval_day_time(&a, 3, 1500, NULL), QV_OK);
  assert_int_equal(qv_array_append_interval_day_time(&a, -1, -1, NULL), QV_OK);
  const char *const wd[] = {"3 days 1500 ms", "-1 day -1 ms"};
  const char *const jd[] = {"{\"days\": 3, \"milliseconds\": 1500}",
                            "{\"days\": -1, \"milliseconds\": -1}"};
  expect(&s, &a, wd, jd);
  begin(&s, &a, "tin");
  assert_int_equal(qv_array_append_interval_month_day_nano(&a, 1, 2, 3, NULL), QV_OK);
  assert_int_equal(qv_array_append_interval_month_day_nano(&a, 0, 0, INT64_MIN, NULL), QV_OK);
  const char *const wn[] = {"1 month 2 days 3 ns", "0 months 0 days -9223372036854775808 ns"};
  expect(&s, &a, wn, NULL);
}

/* A little-endian integer of `width` bytes in place -> host order (decimals
 * are host-order integers in memory). */
static void to_host(uint8_t *p, int width) {
  uint8_t t[32];
  qvi_le_bytes(t, p, (size_t)width);
  memcpy(p, t, (size_t)width);
}

/* Host-order two's complement of `v` sign-extended to `width` bytes. */
static void le(uint8_t *out, int width, int64_t v) {
  for (int k = 0; k < width; k++) out[k] = k < 8 ? (uint8_t)((uint64_t)v >> (8 * k)) : (v < 0 ? 0xff : 0);
  to_host(out, width);
}

static void test_decimals(void **state) {
  (void)state;
  static const struct {
    const char *format;
    int width;
    int64_t value;
    const char *human, *json;
  } cases[] = {
      {"d:9,2,32", 4, 12345, "123.45", "\"123.45\""},
      {"d:9,2,32", 4, -12345, "-123.45", "\"-123.45\""},
      {"d:9,2,32", 4, 5, "0.05", "\"0.05\""},
      {"d:9,0,32", 4, 0, "0", "\"0\""},
      {"d:18,-3,64", 8, 12, "12000", "\"12000\""},
      {"d:18,-3,64", 8, -12, "-12000", "\"-12000\""},
      {"d:18,4,64", 8, INT64_MIN, "-922337203685477.5808", "\"-922337203685477.5808\""},
      {"d:38,10", 16, -1, "-0.0000000001", "\"-0.0000000001\""},
      {"d:38,2", 16, 12345, "123.45", "\"123.45\""},
      {"d:18,-3,64", 8, 0, "0", "\"0000\""},
      {"d:76,2,256", 32, 12345, "123.45", "\"123.45\""},
      {"d:76,-2,256", 32, -7, "-700", "\"-700\""},
  };
  for (int c = 0; c < N(cases); c++) {
    struct ArrowSchema s;
    struct ArrowArray a;
    uint8_t b[32];
    begin(&s, &a, cases[c].format);
    le(b, cases[c].width, cases[c].value);
    assert_int_equal(qv_array_append_bytes(&a, b, cases[c].width, NULL), QV_OK);
    const char *const w[] = {cases[c].human};
    const char *const j[] = {cases[c].json};
    expect(&s, &a, w, j);
  }
  /* the largest 256-bit magnitudes: 2^255 - 1 and -2^255 at scale 10 */
  struct ArrowSchema s;
  struct ArrowArray a;
  uint8_t b[32];
  begin(&s, &a, "d:76,10,256");
  memset(b, 0xff, 32);
  b[31] = 0x7f;
  to_host(b, 32);
  assert_int_equal(qv_array_append_bytes(&a, b, 32, NULL), QV_OK);
  memset(b, 0, 32);
  b[31] = 0x80;
  to_host(b, 32);
  assert_int_equal(qv_array_append_bytes(&a, b, 32, NULL), QV_OK);
  const char *const w[] = {
      "5789604461865809771178549250434395392663499233282028201972879200395.6564819967",
      "-5789604461865809771178549250434395392663499233282028201972879200395.6564819968"};
  expect(&s, &a, w, NULL);
}

static void test_floats(void **state) {
  (void)state;
  static const char *const formats[] = {"e", "f", "g"};
  for (int f = 0; f < 3; f++) {
    struct ArrowSchema s;
    struct ArrowArray a;
    begin(&s, &a, formats[f]);
    assert_int_equal(qv_array_append_double(&a, NAN, NULL), QV_OK);
    assert_int_equal(qv_array_append_double(&a, INFINITY, NULL), QV_OK);
    assert_int_equal(qv_array_append_double(&a, -INFINITY, NULL), QV_OK);
    assert_int_equal(qv_array_append_double(&a, 1.5, NULL), QV_OK);
    assert_int_equal(qv_array_append_null(&a, 1, NULL), QV_OK);
    const char *const w[] = {"nan", "inf", "-inf", "1.5", "null"};
    const char *const j[] = {"\"NaN\"", "\"Infinity\"", "\"-Infinity\"", "1.5", "null"};
    expect(&s, &a, w, j);
  }
}

/* Nested values use the human text for their leaves; the JSON formatter
 * keeps numbers for temporal values. */
static void test_nested_and_json_unchanged(void **state) {
  (void)state;
  struct ArrowSchema s;
  struct ArrowArray a;
  QvError e;
  ok(qv_arrow_schema_init(&s, "+l", "x", ARROW_FLAG_NULLABLE, 1, &e), &e);
  ok(qv_arrow_schema_init(s.children[0], "tdD", "item", ARROW_FLAG_NULLABLE, 0, &e), &e);
  ok(qv_array_init_from_schema(&a, &s, &e), &e);
  assert_int_equal(qv_array_append_int(a.children[0], -1, NULL), QV_OK);
  assert_int_equal(qv_array_append_null(a.children[0], 1, NULL), QV_OK);
  assert_int_equal(qv_array_finish_element(&a, NULL), QV_OK);
  const char *const w[] = {"[1969-12-31, null]"};
  const char *const j[] = {"[-1, null]"};
  expect(&s, &a, w, j);
}

/* max_len cuts strings and nested values, never a single number or time */
static void test_max_len(void **state) {
  (void)state;
  struct ArrowSchema s;
  struct ArrowArray a;
  QvError e;
  begin(&s, &a, "tsn:Europe/Paris");
  assert_int_equal(qv_array_append_int(&a, 1709300707123456789, NULL), QV_OK);
  ok(qv_array_finish_building(&a, QV_VALIDATE_FULL, &e), &e);
  QvArrayView v;
  ok(qv_array_view_init(&v, &s, &e), &e);
  ok(qv_array_view_set_array(&v, &a, QV_VALIDATE_FULL, &e), &e);
  char *text;
  ok(qv_array_view_format_human(&v, 0, 10, &text, &e), &e);
  assert_string_equal(text, "2024-03-01T13:45:07.123456789Z[Europe/Paris]");
  free(text);
  ok(qv_array_view_format_value(&v, 0, 10, &text, &e), &e);
  assert_string_equal(text, "1709300707...");
  free(text);
  assert_int_equal(qv_array_view_format_human(&v, 1, 0, &text, &e), QV_EARG);
  qv_array_view_reset(&v);
  a.release(&a);
  s.release(&s);
  begin(&s, &a, "u");
  assert_int_equal(qv_array_append_string(&a, "abcdefghijkl", NULL), QV_OK);
  ok(qv_array_finish_building(&a, QV_VALIDATE_FULL, &e), &e);
  ok(qv_array_view_init(&v, &s, &e), &e);
  ok(qv_array_view_set_array(&v, &a, QV_VALIDATE_FULL, &e), &e);
  ok(qv_array_view_format_human(&v, 0, 6, &text, &e), &e);
  assert_string_equal(text, "\"abcde...");
  free(text);
  qv_array_view_reset(&v);
  a.release(&a);
  s.release(&s);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_dates),      cmocka_unit_test(test_times),
      cmocka_unit_test(test_timestamps), cmocka_unit_test(test_time_zones),
      cmocka_unit_test(test_durations),  cmocka_unit_test(test_intervals),
      cmocka_unit_test(test_decimals),   cmocka_unit_test(test_floats),
      cmocka_unit_test(test_nested_and_json_unchanged), cmocka_unit_test(test_max_len),
  };
  return qv_test_run(tests, NULL, NULL);
}
