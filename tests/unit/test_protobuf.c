/* The generic protobuf wire codec (src/protobuf/pb.h): every wire type,
 * nested messages, unknown fields skipped, and the hostile inputs it must
 * refuse (lying lengths, overlong varints, bad field numbers, groups,
 * over-limit sizes). Expected bytes are written out by hand from the
 * protobuf encoding rules. */
#include <stdlib.h>
#include <string.h>

#include "protobuf/pb.h"
#include "test_util.h"

static void test_varints(void **state) {
  (void)state;
  const struct { uint64_t v; size_t n; uint8_t b[10]; } cases[] = {
      {0, 1, {0}},
      {1, 1, {1}},
      {127, 1, {0x7F}},
      {128, 2, {0x80, 0x01}},
      {300, 2, {0xAC, 0x02}},
      {UINT64_MAX, 10, {0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01}},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    uint8_t buf[10];
    assert_int_equal(qvi_pb_varint_size(cases[i].v), cases[i].n);
    assert_int_equal(qvi_pb_varint_put(buf, cases[i].v), cases[i].n);
    assert_memory_equal(buf, cases[i].b, cases[i].n);
    uint64_t got = 12345;
    assert_int_equal(qvi_pb_varint_decode(buf, cases[i].n, &got), cases[i].n);
    assert_true(got == cases[i].v);
    /* one byte short: truncated */
    assert_int_equal(qvi_pb_varint_decode(buf, cases[i].n - 1, &got), 0);
  }
  /* 11 bytes, and a tenth byte above 1 (bits past 63) */
  const uint8_t long11[11] = {0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01};
  uint64_t v;
  assert_int_equal(qvi_pb_varint_decode(long11, 11, &v), 0);
  const uint8_t over[10] = {0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x02};
  assert_int_equal(qvi_pb_varint_decode(over, 10, &v), 0);
  /* non-minimal encodings are valid protobuf */
  const uint8_t padded[3] = {0x81, 0x80, 0x00};
  assert_int_equal(qvi_pb_varint_decode(padded, 3, &v), 3);
  assert_true(v == 1);
}

static void test_every_wire_type(void **state) {
  (void)state;
  QviPbWriter w;
  qvi_pb_writer_init(&w);
  qvi_pb_put_uint(&w, 1, 150);
  qvi_pb_put_bytes(&w, 2, "testing", 7);
  qvi_pb_put_double(&w, 3, 0.5);
  qvi_pb_put_uint(&w, 1000, (uint64_t)-2); /* int64 -2 */
  assert_int_equal(qvi_pb_writer_status(&w, NULL), QV_OK);
  /* field 1 varint 150 is 08 96 01 (the protobuf docs' example), field 2
   * "testing" 12 07 74 65 73 74 69 6e 67, field 3 fixed64 is tag 0x19 */
  const uint8_t head[] = {0x08, 0x96, 0x01, 0x12, 0x07, 't', 'e', 's', 't', 'i', 'n', 'g', 0x19};
  assert_memory_equal(w.data, head, sizeof head);
  /* tag of field 1000 varint: (1000 << 3) | 0 = 8000 = C0 3E */
  assert_int_equal(w.data[sizeof head + 8], 0xC0);
  assert_int_equal(w.data[sizeof head + 9], 0x3E);

  QviPbReader r;
  QviPbField f;
  QvError err = {0};
  assert_int_equal(qvi_pb_reader_init(&r, w.data, w.size, 0, &err), QV_OK);
  assert_int_equal(qvi_pb_next(&r, &f, &err), QV_OK);
  assert_true(f.number == 1 && f.wire == QVI_PB_VARINT && f.value == 150);
  assert_int_equal(qvi_pb_next(&r, &f, &err), QV_OK);
  assert_true(f.number == 2 && f.wire == QVI_PB_LEN && f.size == 7);
  assert_memory_equal(f.data, "testing", 7);
  assert_ptr_equal(f.data, w.data + 5); /* a view into the input */
  assert_int_equal(qvi_pb_next(&r, &f, &err), QV_OK);
  assert_true(f.number == 3 && f.wire == QVI_PB_FIXED64);
  assert_true(qvi_pb_double(&f) == 0.5);
  assert_int_equal(qvi_pb_next(&r, &f, &err), QV_OK);
  assert_true(f.number == 1000 && qvi_pb_int64(&f) == -2);
  int32_t i32;
  assert_int_equal(qvi_pb_int32(&f, &i32, "x", &err), QV_OK);
  assert_int_equal(i32, -2);
  assert_int_equal(qvi_pb_next(&r, &f, &err), QV_EOS);
  assert_int_equal(qvi_pb_next(&r, &f, &err), QV_EOS);
  assert_int_equal(qvi_pb_expect(&f, QVI_PB_LEN, "the thing", &err), QV_EINVAL);
  assert_non_null(strstr(err.message, "the thing"));
  qvi_pb_writer_reset(&w);
}

static void test_fixed32_and_nested(void **state) {
  (void)state;
  QviPbWriter inner, outer;
  qvi_pb_writer_init(&inner);
  qvi_pb_writer_init(&outer);
  qvi_pb_put_bytes(&inner, 3, "a", 1);
  qvi_pb_put_bytes(&inner, 3, "bc", 2);
  qvi_pb_put_message(&outer, 1, &inner);
  /* an unknown fixed32 field and an unknown nested field are skipped */
  const uint8_t fixed32[] = {0x15, 1, 2, 3, 4}; /* field 2, wire 5 */
  qvi_pb_put_raw(&outer, fixed32, sizeof fixed32);
  qvi_pb_put_uint(&outer, 4, 7);
  QviPbReader r, sub;
  QviPbField f;
  assert_int_equal(qvi_pb_reader_init(&r, outer.data, outer.size, 0, NULL), QV_OK);
  assert_int_equal(qvi_pb_next(&r, &f, NULL), QV_OK);
  assert_int_equal(f.number, 1);
  qvi_pb_reader_sub(&sub, &r, &f);
  QviPbField g;
  assert_int_equal(qvi_pb_next(&sub, &g, NULL), QV_OK);
  assert_true(g.size == 1 && g.data[0] == 'a');
  assert_int_equal(g.offset, 2); /* offsets are those of the outermost message */
  assert_int_equal(qvi_pb_next(&sub, &g, NULL), QV_OK);
  assert_true(g.size == 2 && memcmp(g.data, "bc", 2) == 0);
  assert_int_equal(qvi_pb_next(&sub, &g, NULL), QV_EOS);
  assert_int_equal(qvi_pb_next(&r, &f, NULL), QV_OK);
  assert_true(f.number == 2 && f.wire == QVI_PB_FIXED32 && f.value == 0x04030201u);
  assert_int_equal(qvi_pb_next(&r, &f, NULL), QV_OK);
  assert_true(f.number == 4 && f.value == 7);
  assert_int_equal(qvi_pb_next(&r, &f, NULL), QV_EOS);
  qvi_pb_writer_reset(&inner);
  qvi_pb_writer_reset(&outer);
}

static QvStatus first_error(const uint8_t *p, size_t n, QvError *err) {
  QviPbReader r;
  QviPbField f;
  QvStatus st = qvi_pb_reader_init(&r, p, n, 0, err);
  while (st == QV_OK) st = qvi_pb_next(&r, &f, err);
  return st == QV_EOS ? QV_OK : st;
}

static void test_hostile(void **state) {
  (void)state;
  QvError err = {0};
  /* a length that runs past the end: 12 (field 2, LEN), length 100, 3 bytes */
  const uint8_t lying[] = {0x12, 100, 'a', 'b', 'c'};
  assert_int_equal(first_error(lying, sizeof lying, &err), QV_ETRUNCATED);
  assert_non_null(strstr(err.message, "length 100 runs past the end"));
  /* a length near 2^64 */
  const uint8_t huge[] = {0x12, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01, 0};
  assert_int_equal(first_error(huge, sizeof huge, &err), QV_ETRUNCATED);
  /* field number 0 */
  const uint8_t zero[] = {0x00, 0x01};
  assert_int_equal(first_error(zero, sizeof zero, &err), QV_EINVAL);
  assert_non_null(strstr(err.message, "field number 0"));
  /* field number 2^29 (above the largest) */
  uint8_t big[8];
  size_t n = qvi_pb_varint_put(big, ((uint64_t)1 << 29) << 3);
  big[n] = 0;
  assert_int_equal(first_error(big, n + 1, &err), QV_EINVAL);
  /* groups (wire types 3 and 4) and the unused types 6, 7 */
  for (uint8_t wt = 3; wt <= 7; wt++) {
    if (wt == 5) continue;
    uint8_t g[2] = {(uint8_t)(0x08 | wt), 0};
    assert_int_equal(first_error(g, sizeof g, &err), QV_EINVAL);
    assert_non_null(strstr(err.message, "wire type"));
  }
  /* truncated varint value, truncated fixed64, truncated tag */
  const uint8_t tv[] = {0x08, 0x80};
  assert_int_equal(first_error(tv, sizeof tv, &err), QV_ETRUNCATED);
  const uint8_t tf[] = {0x09, 1, 2, 3};
  assert_int_equal(first_error(tf, sizeof tf, &err), QV_ETRUNCATED);
  const uint8_t tt[] = {0x80};
  assert_int_equal(first_error(tt, sizeof tt, &err), QV_ETRUNCATED);
  /* an overlong varint value */
  const uint8_t ov[] = {0x08, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01};
  assert_int_equal(first_error(ov, sizeof ov, &err), QV_EINVAL);
  /* over the caller's limit */
  QviPbReader r;
  const uint8_t ok[] = {0x08, 0x01, 0x08, 0x02};
  assert_int_equal(qvi_pb_reader_init(&r, ok, sizeof ok, 3, &err), QV_ELIMIT);
  assert_int_equal(qvi_pb_reader_init(&r, ok, sizeof ok, 4, &err), QV_OK);
  /* an int32 that does not fit */
  QviPbField f = {.number = 1, .wire = QVI_PB_VARINT, .value = (uint64_t)1 << 40};
  int32_t v;
  assert_int_equal(qvi_pb_int32(&f, &v, "count", &err), QV_EINVAL);
  /* an empty message is fine */
  assert_int_equal(first_error(NULL, 0, &err), QV_OK);
}

static void test_len_prefix(void **state) {
  (void)state;
  QviPbWriter w;
  qvi_pb_writer_init(&w);
  qvi_pb_put_len_prefix(&w, 1000, 300);
  assert_int_equal(w.size, qvi_pb_len_prefix_size(1000, 300));
  const uint8_t want[] = {0xC2, 0x3E, 0xAC, 0x02};
  assert_int_equal(w.size, sizeof want);
  assert_memory_equal(w.data, want, sizeof want);
  qvi_pb_writer_reset(&w);
}

int main(int argc, char **argv) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_varints),        cmocka_unit_test(test_every_wire_type),
      cmocka_unit_test(test_fixed32_and_nested), cmocka_unit_test(test_hostile),
      cmocka_unit_test(test_len_prefix),
  };
  const QvTestGroup groups[] = {QV_TEST_GROUP("", tests, NULL, NULL)};
  return qv_test_run_groups(argc, argv, groups, sizeof groups / sizeof groups[0]);
}
