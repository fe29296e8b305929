/* Dictionaries: unchanged, grown (delta batches), replaced, nested; what the
 * file format refuses; batches that refer to dictionaries that never came. */
#include "test_rb_helpers.h"
#include "test_util.h"

/* Root struct with one column: int32 indices into a utf8 dictionary. */
static void dict_schema(struct ArrowSchema *s) {
  const char *spec = "i{u}";
  rbt_batch_schema(s, &spec, 1);
}

static void dict_batch(const struct ArrowSchema *s, const char *const *values, int n_values,
                       const int *indices, int n, struct ArrowArray *out) {
  QvError e;
  rbt_check(qv_array_init_from_schema(out, s, &e), &e, "init");
  struct ArrowArray *dict = out->children[0]->dictionary;
  for (int i = 0; i < n_values; i++) /* NULL: a null value */
    assert_int_equal(values[i] ? qv_array_append_string(dict, values[i], NULL) : qv_array_append_null(dict, 1, NULL),
                     QV_OK);
  rbt_dict_indices(out, indices, n);
}

static void expect_values(const uint8_t *data, size_t size, const char *const *want_rows, int n) {
  struct ArrowSchema s;
  struct ArrowArray batches[8];
  int nb = rbt_read_stream(data, size, &s, batches, 8);
  int row = 0;
  for (int b = 0; b < nb; b++) {
    RbtCells c = rbt_cells(&batches[b], &s);
    for (int64_t r = 0; r < c.rows; r++, row++) {
      assert_true(row < n);
      assert_string_equal(c.cells[r], want_rows[row]);
    }
    rbt_cells_free(&c);
    batches[b].release(&batches[b]);
  }
  assert_int_equal(row, n);
  s.release(&s);
}

static void test_unchanged_grown_replaced(void **state) {
  (void)state;
  struct ArrowSchema s;
  dict_schema(&s);
  const char *v1[] = {"a", "b", "c"}, *v2[] = {"a", "b", "c", "d"}, *v3[] = {"x", "y"};
  int i1[] = {0, 2, -1}, i2[] = {3, 1}, i3[] = {1, 0, 1};
  struct ArrowArray b[5];
  dict_batch(&s, v1, 3, i1, 3, &b[0]);
  dict_batch(&s, v1, 3, i1, 3, &b[1]); /* same dictionary: nothing resent */
  dict_batch(&s, v2, 4, i2, 2, &b[2]); /* grown: a delta */
  dict_batch(&s, v3, 2, i3, 3, &b[3]); /* different: a replacement */
  struct ArrowArray *p[4] = {&b[0], &b[1], &b[2], &b[3]};
  const char *want[] = {"\"a\"", "\"c\"", "null", "\"a\"", "\"c\"", "null", "\"d\"", "\"b\"",
                        "\"y\"", "\"x\"", "\"y\""};
  QvRbWriteOptions o;
  memset(&o, 0, sizeof o);
  uint8_t *data;
  size_t size;
  char kinds[32];
  rbt_write(&s, p, 4, &o, &data, &size);
  rbt_message_kinds(data, size, kinds, sizeof kinds);
  assert_string_equal(kinds, "SDRRdRDR");
  expect_values(data, size, want, 11);
  free(data);

  /* with deltas switched off the grown dictionary is sent again in full */
  o.no_dictionary_deltas = true;
  o.compression = QV_COMPRESSION_LZ4_FRAME;
  rbt_write(&s, p, 4, &o, &data, &size);
  rbt_message_kinds(data, size, kinds, sizeof kinds);
  assert_string_equal(kinds, "SDRRDRDR");
  expect_values(data, size, want, 11);
  free(data);

  /* files allow deltas but not replacements */
  memset(&o, 0, sizeof o);
  o.format = QV_IPC_FORMAT_FILE;
  rbt_write(&s, p, 3, &o, &data, &size);
  rbt_message_kinds(data, size, kinds, sizeof kinds);
  assert_string_equal(kinds, "SDRRdR");
  QvRbFileReader *f;
  QvError e;
  rbt_check(rbt_file_open(&f, data, size, NULL, &e), &e, "open");
  assert_int_equal(qv_rb_file_n_dictionaries(f), 2);
  struct ArrowArray a;
  struct ArrowSchema fs;
  rbt_check(qv_rb_file_get_schema(f, &fs, &e), &e, "schema");
  rbt_check(qv_rb_file_read_batch(f, 2, &a, &e), &e, "batch 2");
  RbtCells c = rbt_cells(&a, &fs);
  assert_string_equal(c.cells[0], "\"d\"");
  rbt_cells_free(&c);
  a.release(&a);
  rbt_check(qv_rb_file_read_batch(f, 0, &a, &e), &e, "batch 0");
  c = rbt_cells(&a, &fs);
  assert_string_equal(c.cells[1], "\"c\"");
  assert_int_equal(a.children[0]->dictionary->length, 4); /* the file's final dictionary */
  rbt_cells_free(&c);
  a.release(&a);
  fs.release(&fs);
  qv_rb_file_reader_free(f);
  free(data);

  QvSink *sink;
  rbt_check(qv_sink_new_memory(&sink, &e), &e, "memory sink");
  QvRbWriter *w;
  rbt_check(qv_rb_writer_new(&w, &s, sink, &o, &e), &e, "open");
  rbt_check(qv_rb_writer_write(w, &b[0], &e), &e, "write");
  assert_int_equal(qv_rb_writer_write(w, &b[3], &e), QV_EINVAL);
  assert_non_null(strstr(e.message, "only allows it to grow"));
  /* the writer stays failed */
  assert_int_equal(qv_rb_writer_finish(w, &e), QV_EINVAL);
  qv_rb_writer_free(w);
  qv_sink_free(sink);
  for (int i = 0; i < 4; i++) b[i].release(&b[i]);
  s.release(&s);
}

/* A dictionary with nulls among its values grows by delta batches too, in
 * streams and files: the validity byte its last old value shares holds the
 * new values' bits, which the comparison must not see. */
static void test_grown_with_null_values(void **state) {
  (void)state;
  struct ArrowSchema s;
  dict_schema(&s);
  const char *v1[] = {"a", NULL, "c"}, *v2[] = {"a", NULL, "c", "d", NULL};
  int i1[] = {0, 1, 2}, i2[] = {3, 4, 1};
  struct ArrowArray b[2];
  dict_batch(&s, v1, 3, i1, 3, &b[0]);
  dict_batch(&s, v2, 5, i2, 3, &b[1]);
  struct ArrowArray *p[2] = {&b[0], &b[1]};
  const char *want[] = {"\"a\"", "null", "\"c\"", "\"d\"", "null", "null"};
  for (int file = 0; file < 2; file++) {
    QvRbWriteOptions o;
    memset(&o, 0, sizeof o);
    o.format = file ? QV_IPC_FORMAT_FILE : QV_IPC_FORMAT_STREAM;
    uint8_t *data;
    size_t size;
    char kinds[32];
    rbt_write(&s, p, 2, &o, &data, &size);
    rbt_message_kinds(data, size, kinds, sizeof kinds);
    assert_string_equal(kinds, "SDRdR");
    if (!file) expect_values(data, size, want, 6);
    free(data);
  }
  for (int i = 0; i < 2; i++) b[i].release(&b[i]);
  s.release(&s);
}

/* Dictionaries inside lists, structs, dictionary values and run-end values,
 * with the inner dictionary replaced between batches. */
static void test_nested_dictionaries(void **state) {
  (void)state;
  const char *specs[] = {"+l(i{u})", "i{+s(c{u};i)}", "+r(i;s{u})", "+m(+s(u;C{g}))"};
  struct ArrowSchema s;
  rbt_batch_schema(&s, specs, 4);
  struct ArrowArray b[3];
  for (int i = 0; i < 3; i++) {
    rbt_dict_seed = i == 2; /* batch 2 gets other dictionaries */
    rbt_build(&b[i], &s, 12 + i, i * 17);
  }
  rbt_dict_seed = 0;
  struct ArrowArray *p[3] = {&b[0], &b[1], &b[2]};
  QvRbWriteOptions o;
  memset(&o, 0, sizeof o);
  uint8_t *data;
  size_t size;
  rbt_write(&s, p, 3, &o, &data, &size);
  char kinds[64];
  rbt_message_kinds(data, size, kinds, sizeof kinds);
  /* five dictionaries, sent once, then replaced before batch 2 */
  assert_string_equal(kinds, "SDDDDDRRDDDDDR");
  struct ArrowSchema gs;
  struct ArrowArray got[3];
  assert_int_equal(rbt_read_stream(data, size, &gs, got, 3), 3);
  for (int i = 0; i < 3; i++) {
    RbtCells want = rbt_cells(&b[i], &s), have = rbt_cells(&got[i], &gs);
    rbt_assert_same_cells(&want, &have, "nested dictionaries");
    rbt_cells_free(&want);
    rbt_cells_free(&have);
    got[i].release(&got[i]);
  }
  gs.release(&gs);
  free(data);
  /* the file format takes the first two batches, not the replacement */
  o.format = QV_IPC_FORMAT_FILE;
  rbt_write(&s, p, 2, &o, &data, &size);
  rbt_message_kinds(data, size, kinds, sizeof kinds);
  assert_string_equal(kinds, "SDDDDDRR");
  free(data);
  for (int i = 0; i < 3; i++) b[i].release(&b[i]);
  s.release(&s);
}

/* Rewrites a stream message by message: drop = index of a message to leave
 * out (-1: none); a dictionary batch's id can be changed. */
static uint8_t *rewrite(const uint8_t *data, size_t size, int drop, int change_dict,
                        int64_t new_id, bool make_delta, size_t *out_size) {
  QvIpcReader *r;
  QvError e;
  rbt_check(qv_test_reader_memory(&r, data, size, &e), &e, "ipc open");
  QvSink *mem;
  rbt_check(qv_sink_new_memory(&mem, &e), &e, "memory sink");
  QvIpcMessage m;
  for (int i = 0; qv_ipc_reader_next(r, &m, &e) == QV_OK; i++) {
    if (i != drop) {
      if (i == change_dict) {
        assert_int_equal(m.message.header_type, QV_HEADER_DICTIONARY_BATCH);
        m.message.header.dictionary_batch.id = new_id;
        m.message.header.dictionary_batch.is_delta = make_delta;
      }
      rbt_put_message(mem, &m.message, m.body, (size_t)m.body_length);
    }
    qv_ipc_message_reset(&m);
  }
  qv_ipc_reader_free(r);
  return rbt_end_stream(mem, out_size);
}

static QvStatus read_all(const uint8_t *data, size_t size, QvError *e) {
  struct ArrowArrayStream s;
  QvStatus st = rbt_stream_open(&s, data, size, NULL, e);
  if (st) return st;
  for (;;) {
    struct ArrowArray a;
    if ((st = qv_rb_stream_get_next(&s, &a, e))) break;
    a.release(&a);
  }
  if (st == QV_EOS) st = QV_OK;
  if (st) {
    /* the generic interface reports the same failure */
    struct ArrowArray a;
    assert_int_not_equal(s.get_next(&s, &a), 0);
    assert_non_null(s.get_last_error(&s));
  }
  s.release(&s);
  return st;
}

static void test_missing_and_unknown_dictionaries(void **state) {
  (void)state;
  struct ArrowSchema s;
  dict_schema(&s);
  const char *v[] = {"a", "b"};
  int idx[] = {1, 0, 1};
  struct ArrowArray b;
  dict_batch(&s, v, 2, idx, 3, &b);
  struct ArrowArray *p = &b;
  QvRbWriteOptions o;
  memset(&o, 0, sizeof o);
  uint8_t *data;
  size_t size;
  rbt_write(&s, &p, 1, &o, &data, &size);
  QvError e;
  assert_int_equal(read_all(data, size, &e), QV_OK);

  size_t n;
  uint8_t *bad = rewrite(data, size, 1, -1, 0, false, &n); /* no dictionary batch */
  assert_int_equal(read_all(bad, n, &e), QV_EINVAL);
  assert_non_null(strstr(e.message, "dictionary id 0, which has not been sent"));
  free(bad);

  bad = rewrite(data, size, -1, 1, 42, false, &n); /* dictionary for an unknown id */
  assert_int_equal(read_all(bad, n, &e), QV_EINVAL);
  assert_non_null(strstr(e.message, "dictionary batch for id 42, which no field uses"));
  free(bad);

  bad = rewrite(data, size, -1, 1, 0, true, &n); /* a delta before any dictionary */
  assert_int_equal(read_all(bad, n, &e), QV_EINVAL);
  assert_non_null(strstr(e.message, "delta dictionary batch for id 0 before"));
  free(bad);

  free(data);
  b.release(&b);
  s.release(&s);
}

/* A dictionary of 2^40 empty structs costs no bytes; a delta of the same
 * must be refused rather than copied. */
static void test_delta_without_bytes(void **state) {
  (void)state;
  struct ArrowSchema s;
  const char *spec = "i{+s()}";
  rbt_batch_schema(&s, &spec, 1);
  QvRbWriteOptions o;
  memset(&o, 0, sizeof o);
  uint8_t *schema_only;
  size_t n;
  rbt_write(&s, NULL, 0, &o, &schema_only, &n);
  QvError e;
  QvSink *mem;
  rbt_check(qv_sink_new_memory(&mem, &e), &e, "memory sink");
  rbt_check(qv_sink_write(mem, schema_only, n - 8, &e), &e, "write"); /* without the end marker */
  free(schema_only);
  for (int delta = 0; delta < 2; delta++) {
    QvFieldNode node = {(int64_t)1 << 40, 0};
    QvBuffer validity = {0, 0};
    QvMessage m;
    memset(&m, 0, sizeof m);
    m.version = QV_METADATA_V5;
    m.header_type = QV_HEADER_DICTIONARY_BATCH;
    m.header.dictionary_batch.id = 0;
    m.header.dictionary_batch.is_delta = delta;
    m.header.dictionary_batch.data.length = node.length;
    m.header.dictionary_batch.data.n_nodes = 1;
    m.header.dictionary_batch.data.nodes = &node;
    m.header.dictionary_batch.data.n_buffers = 1;
    m.header.dictionary_batch.data.buffers = &validity;
    uint8_t *meta;
    size_t meta_size;
    rbt_check(qv_ipc_frame_message(&m, 8, &meta, &meta_size, &e), &e, "frame");
    rbt_check(qv_sink_write(mem, meta, meta_size, &e), &e, "write");
    free(meta);
  }
  rbt_check(qv_sink_write(mem, qv_ipc_eos, 8, &e), &e, "write");
  uint8_t *bytes;
  size_t bytes_size;
  rbt_take(mem, &bytes, &bytes_size);
  qv_sink_free(mem);
  assert_int_equal(read_all(bytes, bytes_size, &e), QV_ELIMIT);
  assert_non_null(strstr(e.message, "would grow it past"));
  free(bytes);
  s.release(&s);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_unchanged_grown_replaced),
      cmocka_unit_test(test_nested_dictionaries),
      cmocka_unit_test(test_missing_and_unknown_dictionaries),
      cmocka_unit_test(test_delta_without_bytes),
      cmocka_unit_test(test_grown_with_null_values),
  };
  return qv_test_run(tests, NULL, NULL);
}
