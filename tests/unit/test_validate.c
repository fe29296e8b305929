/* qv_ipc_validate and qv_ipc_validate_summary (quiver/validate.h): the
 * verdict `quiver validate` prints, as a library call. */
#include "test_util.h"

#include <stdlib.h>
#include <string.h>

#include "quiver/validate.h"
#include "test_rb_helpers.h"

static QvStatus validate_memory(const uint8_t *data, size_t size, QvIpcValidateReport *r, QvError *e) {
  QvSource *src;
  QvStatus st = qv_source_new_memory(&src, data, size, NULL, e);
  if (st) return st;
  st = qv_ipc_validate(src, NULL, r, e);
  qv_source_free(src);
  return st;
}

static void test_record_batches(void **state) {
  (void)state;
  const char *specs[] = {"i", "u", "+l(i)"};
  struct ArrowSchema schema;
  rbt_batch_schema(&schema, specs, 3);
  struct ArrowArray b1, b2;
  rbt_build(&b1, &schema, 10, 1);
  rbt_build(&b2, &schema, 7, 2);
  struct ArrowArray *batches[2] = {&b1, &b2};
  for (int file = 0; file < 2; file++) {
    QvRbWriteOptions o = rbt_write_options(file ? QV_IPC_FORMAT_FILE : QV_IPC_FORMAT_STREAM,
                                           QV_COMPRESSION_NONE, 0, 1);
    uint8_t *data;
    size_t size;
    rbt_write(&schema, batches, 2, &o, &data, &size);
    QvIpcValidateReport r;
    QvError e;
    assert_int_equal(validate_memory(data, size, &r, &e), QV_OK);
    assert_true(r.is_file == (file == 1));
    assert_false(r.tensors);
    assert_int_equal(r.batches, 2);
    assert_int_equal(r.rows, 17);
    char text[128];
    size_t n = qv_ipc_validate_summary(&r, text, sizeof text);
    assert_string_equal(text, file ? "valid Arrow file (2 record batches, 17 rows)"
                                   : "valid Arrow stream (2 record batches, 17 rows)");
    assert_int_equal(n, strlen(text));
    /* snprintf's rule: measured with no room, cut with little */
    assert_int_equal(qv_ipc_validate_summary(&r, NULL, 0), n);
    char small[8];
    qv_ipc_validate_summary(&r, small, sizeof small);
    assert_string_equal(small, "valid A");
    /* truncated: invalid, and the report is left alone */
    QvIpcValidateReport untouched = {.batches = 99};
    assert_int_equal(validate_memory(data, size - 9, &untouched, &e), QV_ETRUNCATED);
    assert_int_equal(untouched.batches, 99);
    assert_true(strlen(e.message) > 0);
    free(data);
  }
  b1.release(&b1);
  b2.release(&b2);
  schema.release(&schema);
}

static void test_tensors_and_saturation(void **state) {
  (void)state;
  const int64_t shape[2] = {3, 4};
  QvTensor t;
  QvError e;
  assert_int_equal(qv_tensor_alloc(&t, QV_ARROW_INT32, 2, shape, NULL, false, NULL, &e), QV_OK);
  memset((void *)(uintptr_t)t.data, 0, 48);
  size_t need, written;
  assert_int_equal(qv_tensor_write_size(&t, NULL, &need, &e), QV_OK);
  uint8_t *buf = qv_aligned_alloc(need);
  assert_non_null(buf);
  assert_int_equal(qv_test_tensor_write_buffer(&t, buf, need, &written, &e), QV_OK);
  QvIpcValidateReport r;
  assert_int_equal(validate_memory(buf, written, &r, &e), QV_OK);
  assert_true(r.tensors);
  assert_int_equal(r.batches, 1);
  assert_int_equal(r.rows, 0);
  char text[128];
  qv_ipc_validate_summary(&r, text, sizeof text);
  assert_string_equal(text, "valid Arrow stream (1 Tensor, 0 SparseTensor messages)");
  qv_free(buf);
  qv_tensor_reset(&t);
  QvIpcValidateReport big = {.batches = 3, .rows = INT64_MAX};
  qv_ipc_validate_summary(&big, text, sizeof text);
  assert_string_equal(text, "valid Arrow stream (3 record batches, at least 9223372036854775807 rows)");
  /* not Arrow at all, and nothing */
  assert_int_equal(validate_memory((const uint8_t *)"hello, world", 12, &r, &e), QV_EINVAL);
  assert_int_equal(validate_memory((const uint8_t *)"", 0, &r, &e), QV_EINVAL);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_record_batches),
      cmocka_unit_test(test_tensors_and_saturation),
  };
  return qv_test_run(tests, NULL, NULL);
}
