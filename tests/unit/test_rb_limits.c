/* The record batch writer never writes what the default readers refuse:
 * a chain of nested structs is written and read back at every depth the
 * writer accepts, and the first depth it refuses is QV_ELIMIT with a
 * message, before anything reaches the sink. */
#include "test_rb_helpers.h"
#include "test_util.h"

static char *nested_spec(int depth, const char *leaf) {
  size_t n = (size_t)depth * 4 + strlen(leaf) + 1;
  char *spec = malloc(n);
  assert_non_null(spec);
  spec[0] = '\0';
  for (int i = 0; i < depth; i++) strcat(spec, "+s(");
  strcat(spec, leaf);
  for (int i = 0; i < depth; i++) strcat(spec, ")");
  return spec;
}

static void check_chain(const char *leaf) {
  int accepted = 0, refused = 0;
  for (int depth = 40; depth <= 70 && !refused; depth++) {
    char *spec = nested_spec(depth, leaf);
    const char *specs[] = {spec};
    struct ArrowSchema schema;
    rbt_batch_schema(&schema, specs, 1);
    struct ArrowArray batch;
    rbt_build(&batch, &schema, 3, 1);
    QvSink *sink = NULL;
    QvError e;
    rbt_check(qv_sink_new_memory(&sink, &e), &e, "memory sink");
    QvRbWriter *w = NULL;
    QvStatus st = qv_rb_writer_new(&w, &schema, sink, NULL, &e);
    if (st == QV_OK) {
      rbt_check(qv_rb_writer_write(w, &batch, &e), &e, "write");
      rbt_check(qv_rb_writer_finish(w, &e), &e, "finish");
      qv_rb_writer_free(w);
      uint8_t *bytes;
      size_t size;
      rbt_take(sink, &bytes, &size);
      struct ArrowSchema got_schema;
      struct ArrowArray got[1];
      /* fails the test unless the default reader takes it */
      assert_int_equal(rbt_read_stream(bytes, size, &got_schema, got, 1), 1);
      got[0].release(&got[0]);
      got_schema.release(&got_schema);
      free(bytes);
      accepted = depth;
    } else {
      assert_int_equal(st, QV_ELIMIT);
      assert_non_null(strstr(e.message, "readers with default limits"));
      assert_int_equal(qv_sink_bytes_written(sink), 0);
      refused = depth;
    }
    qv_sink_free(sink);
    batch.release(&batch);
    schema.release(&schema);
    free(spec);
  }
  /* the limit lies where FlatBuffers nesting puts it, not far below */
  assert_true(accepted >= 55);
  assert_int_equal(refused, accepted + 1);
}

static void test_nested_structs(void **state) {
  (void)state;
  check_chain("i");
}

/* A dictionary at the bottom costs two more tables (the encoding and its
 * index type). */
static void test_nested_dictionary(void **state) {
  (void)state;
  check_chain("i{u}");
}

int main(int argc, char **argv) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_nested_structs),
      cmocka_unit_test(test_nested_dictionary),
  };
  const QvTestGroup groups[] = {QV_TEST_GROUP("", tests, NULL, NULL)};
  return qv_test_run_groups(argc, argv, groups, sizeof groups / sizeof groups[0]);
}
