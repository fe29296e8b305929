/* Byte order: batches written big-endian (and little-endian) read back equal
 * to the original for every type, with nulls, slices, compression and
 * dictionaries (replacement and delta); the bytes really are swapped; the
 * raw-bytes read option; big-endian inputs that lie. On a big-endian host
 * the same tests run with the roles of the two orders exchanged. */
#include "test_rb_helpers.h"
#include "test_util.h"

#include "quiver/format.h"
#include "util/load.h"



/* Writes `batch` in `order` and reads it back through the stream reader
 * and (files) the file reader; every cell must equal the original's. */
static void roundtrip(const struct ArrowSchema *schema, struct ArrowArray *batch, int order,
                      QvIpcFormat format, QvCompression comp, const char *what) {
  RbtCells want = rbt_cells(batch, schema);
  QvRbWriteOptions o = rbt_write_options(format, comp, 0, 0);
  o.endianness = order;
  o.validate = QV_VALIDATE_FULL;
  uint8_t *data;
  size_t size;
  rbt_write(schema, &batch, 1, &o, &data, &size);
  assert_int_equal(rbt_written_endianness(data, size),
                   order == QV_ENDIAN_BIG ? QV_ENDIAN_BIG : QV_ENDIAN_LITTLE);
  rbt_assert_reads_back(data, size, format == QV_IPC_FORMAT_FILE, &want, 1, what);
  rbt_cells_free(&want);
  free(data);
}

static void test_every_type_both_orders(void **state) {
  (void)state;
  for (int i = 0; i < rbt_n_order_specs; i++) {
    const char *spec = rbt_order_specs[i];
    struct ArrowSchema schema;
    struct ArrowArray batch;
    rbt_spec_batch(spec, 37, 2, &schema, &batch);
    for (int order = QV_ENDIAN_LITTLE; order <= QV_ENDIAN_BIG; order++)
      for (int fmt = 0; fmt < 2; fmt++)
        for (int comp = 0; comp < 2; comp++) {
          char what[128];
          snprintf(what, sizeof what, "%s order=%d fmt=%d comp=%d", spec, order, fmt, comp);
          roundtrip(&schema, &batch, order, fmt ? QV_IPC_FORMAT_FILE : QV_IPC_FORMAT_STREAM,
                    comp ? QV_COMPRESSION_ZSTD : QV_COMPRESSION_NONE, what);
        }
    batch.release(&batch);
    schema.release(&schema);
  }
}

/* Row slices of a batch of every column, written big-endian (the writer
 * rebases offsets, run ends and union offsets before swapping them). */
static void test_slices_big_endian(void **state) {
  (void)state;
  struct ArrowSchema schema;
  rbt_batch_schema(&schema, rbt_order_specs, rbt_n_order_specs);
  struct ArrowArray batch;
  rbt_build(&batch, &schema, 60, 1);
  const int64_t offs[] = {0, 3, 17}, lens[] = {0, 1, 29};
  for (int a = 0; a < 3; a++)
    for (int b = 0; b < 3; b++) {
      struct ArrowArray slice;
      QvError e;
      rbt_check(qv_array_share(&batch, &slice, &e), &e, "share");
      slice.offset = offs[a];
      slice.length = lens[b];
      char what[64];
      snprintf(what, sizeof what, "slice %lld+%lld", (long long)offs[a], (long long)lens[b]);
      roundtrip(&schema, &slice, QV_ENDIAN_BIG, QV_IPC_FORMAT_FILE, QV_COMPRESSION_NONE, what);
      slice.release(&slice);
    }
  batch.release(&batch);
  schema.release(&schema);
}

/* The bodies differ exactly by the swap: an int32, an int64 and a utf8
 * column written both ways, their buffers compared byte by byte. */
static void test_bytes_are_swapped(void **state) {
  (void)state;
  const char *specs[] = {"i", "l", "u"};
  struct ArrowSchema schema;
  rbt_batch_schema(&schema, specs, 3);
  struct ArrowArray batch;
  rbt_build(&batch, &schema, 10, 4);
  struct ArrowArray *p = &batch;
  uint8_t *le, *be;
  size_t le_size, be_size;
  QvRbWriteOptions o;
  memset(&o, 0, sizeof o);
  o.endianness = QV_ENDIAN_LITTLE;
  rbt_write(&schema, &p, 1, &o, &le, &le_size);
  o.endianness = QV_ENDIAN_BIG;
  rbt_write(&schema, &p, 1, &o, &be, &be_size);
  QvIpcReader *rl, *rb;
  QvError e;
  rbt_check(qv_test_reader_memory(&rl, le, le_size, &e), &e, "open le");
  rbt_check(qv_test_reader_memory(&rb, be, be_size, &e), &e, "open be");
  QvIpcMessage ml, mb;
  for (int k = 0; k < 2; k++) {
    rbt_check(qv_ipc_reader_next(rl, &ml, &e), &e, "le message");
    rbt_check(qv_ipc_reader_next(rb, &mb, &e), &e, "be message");
    if (k == 1) {
      const QvRecordBatch *a = &ml.message.header.record_batch, *b = &mb.message.header.record_batch;
      assert_int_equal(a->n_buffers, 7);
      assert_int_equal(b->n_buffers, 7);
      /* buffer: width of its words (0: bytes, compared as they are) */
      const int width[7] = {0, 4, 0, 8, 0, 4, 0};
      for (int j = 0; j < 7; j++) {
        assert_int_equal(a->buffers[j].length, b->buffers[j].length);
        const uint8_t *x = ml.body + a->buffers[j].offset, *y = mb.body + b->buffers[j].offset;
        int w = width[j] ? width[j] : 1;
        for (int64_t q = 0; q < a->buffers[j].length; q++)
          assert_int_equal(x[q], y[q - q % w + (w - 1 - q % w)]);
      }
    }
    qv_ipc_message_reset(&ml);
    qv_ipc_message_reset(&mb);
  }
  qv_ipc_reader_free(rl);
  qv_ipc_reader_free(rb);
  free(le);
  free(be);
  batch.release(&batch);
  schema.release(&schema);
}

/* int16 indices into int64 dictionary values, built row by row. */
static void dict_batch(const struct ArrowSchema *s, const int64_t *values, int n_values,
                       const int *indices, int n, struct ArrowArray *out) {
  QvError e;
  rbt_check(qv_array_init_from_schema(out, s, &e), &e, "init");
  struct ArrowArray *dict = out->children[0]->dictionary;
  for (int i = 0; i < n_values; i++) assert_int_equal(qv_array_append_int(dict, values[i], NULL), QV_OK);
  rbt_dict_indices(out, indices, n);
}

static void test_dictionaries_big_endian(void **state) {
  (void)state;
  struct ArrowSchema s;
  const char *spec = "s{l}";
  rbt_batch_schema(&s, &spec, 1);
  const int64_t v1[] = {1000, -2, 1LL << 40}, v2[] = {1000, -2, 1LL << 40, 77}, v3[] = {5, 6};
  int i1[] = {0, 2, -1}, i2[] = {3, 1}, i3[] = {1, 0, 1};
  struct ArrowArray b[3];
  dict_batch(&s, v1, 3, i1, 3, &b[0]);
  dict_batch(&s, v2, 4, i2, 2, &b[1]); /* grown: a delta */
  dict_batch(&s, v3, 2, i3, 3, &b[2]); /* different: a replacement */
  struct ArrowArray *p[3] = {&b[0], &b[1], &b[2]};
  const char *want[] = {"1000", "1099511627776", "null", "77", "-2", "6", "5", "6"};
  for (int comp = 0; comp < 2; comp++) {
    QvRbWriteOptions o = rbt_write_options(
        QV_IPC_FORMAT_STREAM, comp ? QV_COMPRESSION_LZ4_FRAME : QV_COMPRESSION_NONE, 0, 0);
    o.endianness = QV_ENDIAN_BIG;
    uint8_t *data;
    size_t size;
    rbt_write(&s, p, 3, &o, &data, &size);
    assert_int_equal(rbt_written_endianness(data, size), QV_ENDIAN_BIG);
    struct ArrowSchema gs;
    struct ArrowArray got[4];
    int n = rbt_read_stream(data, size, &gs, got, 4);
    assert_int_equal(n, 3);
    int row = 0;
    for (int k = 0; k < n; k++) {
      RbtCells c = rbt_cells(&got[k], &gs);
      for (int64_t r = 0; r < c.rows; r++, row++) {
        assert_true(row < 8);
        assert_string_equal(c.cells[r], want[row]);
      }
      rbt_cells_free(&c);
      got[k].release(&got[k]);
    }
    assert_int_equal(row, 8);
    gs.release(&gs);
    free(data);
  }
  for (int k = 0; k < 3; k++) b[k].release(&b[k]);
  s.release(&s);
}

/* keep_byte_order: the arrays hold the body's bytes as written, and the
 * schema says so; host-order input gains no key. */
static void test_keep_byte_order(void **state) {
  (void)state;
  const char *spec = "i";
  struct ArrowSchema schema;
  rbt_batch_schema(&schema, &spec, 1);
  struct ArrowArray batch;
  QvError e;
  rbt_check(qv_array_init_from_schema(&batch, &schema, &e), &e, "init");
  for (int i = 0; i < 4; i++) {
    qv_array_append_int(batch.children[0], 0x01020304 + i, NULL);
    qv_array_finish_element(&batch, NULL);
  }
  rbt_check(qv_array_finish_building(&batch, QV_VALIDATE_FULL, &e), &e, "finish");
  struct ArrowArray *p = &batch;
  for (int order = QV_ENDIAN_LITTLE; order <= QV_ENDIAN_BIG; order++) {
    QvRbWriteOptions o;
    memset(&o, 0, sizeof o);
    o.endianness = order;
    uint8_t *data;
    size_t size;
    rbt_write(&schema, &p, 1, &o, &data, &size);
    QvRbReadOptions ro;
    memset(&ro, 0, sizeof ro);
    ro.keep_byte_order = true;
    struct ArrowArrayStream s;
    rbt_check(rbt_stream_open(&s, data, size, &ro, &e), &e, "open");
    struct ArrowSchema gs;
    rbt_check(qv_rb_stream_get_schema(&s, &gs, &e), &e, "schema");
    struct ArrowArray a;
    assert_false(rbt_next(&s, &a));
    const uint8_t *v = a.children[0]->buffers[1];
    bool host_big = QV_HOST_BIG_ENDIAN;
    bool foreign = (order == QV_ENDIAN_BIG) != host_big;
    const char *value;
    int32_t value_len;
    bool has = qv_arrow_metadata_get(gs.metadata, QV_RB_BYTE_ORDER_KEY, &value, &value_len);
    assert_int_equal(has, foreign);
    if (foreign) {
      assert_int_equal(value_len, order == QV_ENDIAN_BIG ? 3 : 6);
      assert_memory_equal(value, order == QV_ENDIAN_BIG ? "big" : "little", (size_t)value_len);
    }
    /* value 0x01020304 as the file holds it */
    const uint8_t be_bytes[4] = {1, 2, 3, 4}, le_bytes[4] = {4, 3, 2, 1};
    assert_memory_equal(v, order == QV_ENDIAN_BIG ? be_bytes : le_bytes, 4);
    a.release(&a);
    gs.release(&gs);
    s.release(&s);
    free(data);
  }
  batch.release(&batch);
  schema.release(&schema);
}

/* ---- hostile big-endian input: message rewriting */

/* Columns "i", "u{...}" -> message 0 schema, 1 dictionary (utf8 values:
 * buffers validity 0, offsets 1, data 2), 2 the batch (i: 0 validity, 1
 * values; the indices: 2 validity, 3 values). */
static void short_int_buffer(QvMessage *m, uint8_t *b, int64_t n) {
  (void)b, (void)n;
  ((QvBuffer *)m->header.record_batch.buffers)[1].length = 6; /* 1.5 values of 4 bytes */
}
static void lying_length(QvMessage *m, uint8_t *b, int64_t n) {
  (void)b, (void)n;
  ((QvFieldNode *)m->header.record_batch.nodes)[0].length += 1000;
  m->header.record_batch.length += 1000;
  ((QvFieldNode *)m->header.record_batch.nodes)[1].length += 1000;
}
static void dictionary_little_endian(QvMessage *m, uint8_t *b, int64_t n) {
  (void)n;
  /* the offsets of the dictionary's values back in little-endian order */
  const QvBuffer *off = &m->header.dictionary_batch.data.buffers[1];
  for (int64_t q = 0; q + 4 <= off->length; q += 4) {
    uint8_t *x = b + off->offset + q, t0 = x[0], t1 = x[1];
    x[0] = x[3];
    x[1] = x[2];
    x[2] = t1;
    x[3] = t0;
  }
}
static void big_index(QvMessage *m, uint8_t *b, int64_t n) {
  (void)n;
  /* index 1000, big-endian: out of the dictionary's range */
  const QvBuffer *vals = &m->header.record_batch.buffers[3];
  const uint8_t big[4] = {0, 0, 0x03, 0xe8};
  memcpy(b + vals->offset, big, 4);
}

static void test_hostile_big_endian(void **state) {
  (void)state;
  const char *specs[] = {"i", "i{u}"};
  struct ArrowSchema schema;
  rbt_batch_schema(&schema, specs, 2);
  struct ArrowArray batch;
  rbt_build(&batch, &schema, 12, 0);
  struct ArrowArray *p = &batch;
  QvRbWriteOptions o;
  memset(&o, 0, sizeof o);
  o.endianness = QV_ENDIAN_BIG;
  uint8_t *data;
  size_t size;
  rbt_write(&schema, &p, 1, &o, &data, &size);
  static const struct {
    int index;
    RbtMessageEdit edit;
    const char *error;
  } cases[] = {
      {2, short_int_buffer, "buffer"},
      {2, lying_length, "needs"},
      {1, dictionary_little_endian, "offsets"},
      {2, big_index, "index"},
  };
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    size_t bad_size;
    uint8_t *bad = rbt_edit_message(data, size, cases[k].index, cases[k].edit, &bad_size);
    QvRbReadOptions ro;
    memset(&ro, 0, sizeof ro);
    ro.validate = QV_VALIDATE_FULL;
    struct ArrowArrayStream s;
    QvError e;
    qv_error_clear(&e);
    QvStatus st = rbt_stream_open(&s, bad, bad_size, &ro, &e);
    if (st == QV_OK) {
      struct ArrowArray a;
      while ((st = qv_rb_stream_get_next(&s, &a, &e)) == QV_OK) a.release(&a);
      s.release(&s);
    }
    if (st != QV_EINVAL || strstr(e.message, cases[k].error) == NULL)
      fail_msg("case %zu: status %s, message '%s', want '%s'", k, qv_status_name(st), e.message,
               cases[k].error);
    free(bad);
  }
  free(data);
  batch.release(&batch);
  schema.release(&schema);
}

static void test_bad_option(void **state) {
  (void)state;
  const char *spec = "i";
  struct ArrowSchema schema;
  rbt_batch_schema(&schema, &spec, 1);
  QvSink *sink;
  QvError e;
  rbt_check(qv_sink_new_memory(&sink, &e), &e, "sink");
  QvRbWriter *w = NULL;
  QvRbWriteOptions o;
  memset(&o, 0, sizeof o);
  o.endianness = 7;
  assert_int_equal(qv_rb_writer_new(&w, &schema, sink, &o, &e), QV_EARG);
  assert_non_null(strstr(e.message, "endianness"));
  qv_sink_free(sink);
  schema.release(&schema);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_every_type_both_orders),
      cmocka_unit_test(test_slices_big_endian),
      cmocka_unit_test(test_bytes_are_swapped),
      cmocka_unit_test(test_dictionaries_big_endian),
      cmocka_unit_test(test_keep_byte_order),
      cmocka_unit_test(test_hostile_big_endian),
      cmocka_unit_test(test_bad_option),
  };
  return qv_test_run(tests, NULL, NULL);
}
