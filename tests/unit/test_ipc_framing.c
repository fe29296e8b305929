/* Writing side of the encapsulated message format: sizes, prefix, padding. */
#include <stdlib.h>
#include <string.h>

#include "quiver/ipc.h"
#include "test_util.h"

static uint32_t le32(const uint8_t *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void test_framed_metadata_size(void **state) {
  (void)state;
  const size_t aligns[] = {8, 64};
  for (size_t a = 0; a < 2; a++) {
    for (size_t fb = 0; fb <= 300; fb++) {
      size_t total = qv_ipc_framed_metadata_size(fb, aligns[a]);
      assert_int_equal(total % aligns[a], 0);
      assert_true(total >= 8 + fb);
      assert_true(total - (8 + fb) < aligns[a]); /* minimal padding */
    }
  }
  /* smaller alignments still give the 8 the format requires */
  assert_int_equal(qv_ipc_framed_metadata_size(1, 1), 16);
  assert_int_equal(qv_ipc_framed_metadata_size(0, 0), 8);
  assert_int_equal(qv_ipc_framed_metadata_size(56, 64), 64);
  assert_int_equal(qv_ipc_framed_metadata_size(57, 64), 128);
}

static QvMessage schema_message(QvField *field) {
  memset(field, 0, sizeof *field);
  field->name = "value";
  field->name_len = 5;
  field->nullable = true;
  field->type.id = QV_TYPE_INT;
  field->type.u.int_.bit_width = 32;
  field->type.u.int_.is_signed = true;
  QvMessage m;
  memset(&m, 0, sizeof m);
  m.version = QV_METADATA_V5;
  m.header_type = QV_HEADER_SCHEMA;
  m.header.schema.n_fields = 1;
  m.header.schema.fields = field;
  return m;
}

static QvMessage tensor_message(QvTensorDim dims[2]) {
  memset(dims, 0, 2 * sizeof *dims);
  dims[0].size = 3;
  dims[1].size = 4;
  QvMessage m;
  memset(&m, 0, sizeof m);
  m.version = QV_METADATA_V5;
  m.header_type = QV_HEADER_TENSOR;
  m.header.tensor.type.id = QV_TYPE_FLOATING_POINT;
  m.header.tensor.type.u.floating_point.precision = QV_PRECISION_DOUBLE;
  m.header.tensor.ndim = 2;
  m.header.tensor.shape = dims;
  m.header.tensor.data.length = 96;
  m.body_length = 96;
  return m;
}

static void check_framed(const QvMessage *m, size_t alignment) {
  uint8_t *fb;
  size_t fb_size;
  QvError err;
  assert_int_equal(qv_message_encode(m, &fb, &fb_size, &err), QV_OK);
  uint8_t *buf;
  size_t size;
  assert_int_equal(qv_ipc_frame_message(m, alignment, &buf, &size, &err), QV_OK);
  assert_int_equal(size % alignment, 0);
  assert_int_equal(size, qv_ipc_framed_metadata_size(fb_size, alignment));
  assert_int_equal(le32(buf), QV_IPC_CONTINUATION);
  /* the length field counts the FlatBuffer and its padding */
  assert_int_equal(le32(buf + 4), size - 8);
  assert_memory_equal(buf + 8, fb, fb_size);
  for (size_t i = 8 + fb_size; i < size; i++) assert_int_equal(buf[i], 0);
  /* the padded metadata decodes to the same message */
  QvMessage back;
  assert_int_equal(qv_message_decode(buf + 8, size - 8, NULL, &back, &err), QV_OK);
  assert_int_equal(back.header_type, m->header_type);
  assert_int_equal(back.body_length, m->body_length);
  assert_int_equal(back.version, m->version);
  qv_message_reset(&back);
  free(buf);
  free(fb);
}

static void test_frame_message_alignment(void **state) {
  (void)state;
  QvField field;
  QvTensorDim dims[2];
  QvMessage s = schema_message(&field);
  QvMessage t = tensor_message(dims);
  check_framed(&s, 8);
  check_framed(&s, 64);
  check_framed(&t, 8);
  check_framed(&t, 64);
}

static void test_frame_message_bad_args(void **state) {
  (void)state;
  QvField field;
  QvMessage s = schema_message(&field);
  uint8_t *buf = (uint8_t *)&field;
  size_t size = 99;
  QvError err;
  assert_int_equal(qv_ipc_frame_message(&s, 16, &buf, &size, &err), QV_EARG);
  assert_null(buf);
  assert_int_equal(size, 0);
  assert_non_null(strstr(err.message, "16"));
  /* an unencodable header is reported, nothing is returned */
  QvMessage bad;
  memset(&bad, 0, sizeof bad);
  bad.header_type = 42;
  assert_int_equal(qv_ipc_frame_message(&bad, 8, &buf, &size, &err), QV_EARG);
  assert_null(buf);
}

static void test_eos_marker(void **state) {
  (void)state;
  assert_int_equal(le32(qv_ipc_eos), QV_IPC_CONTINUATION);
  assert_int_equal(le32(qv_ipc_eos + 4), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_framed_metadata_size),
      cmocka_unit_test(test_frame_message_alignment),
      cmocka_unit_test(test_frame_message_bad_args),
      cmocka_unit_test(test_eos_marker),
  };
  return qv_test_run(tests, NULL, NULL);
}
