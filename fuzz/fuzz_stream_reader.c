/* libFuzzer target: record batch streams over arbitrary bytes.
 *
 * Reads every batch with full validation. Each accepted batch must be
 * entirely readable: every byte of every buffer is touched (ASan checks the
 * bounds the validator promised), the first rows are formatted, and the
 * batch must survive a write + read round trip with the same values: it is
 * written twice, moved into the writer (qv_rb_writer_write_move, so with
 * threads and a codec the two compress in flight, in the sink's memory),
 * and both copies must read back. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "quiver/recordbatch_ipc.h"

#define FUZZ_NAME "fuzz_stream_reader"
#include "rb_fuzz_util.h"

/* this input's threads and round-trip codec (rb_fuzz_pick) */
static QvRbWriteOptions g_write;
static int g_threads;

static void lent_release(struct ArrowArray *a) { a->release = NULL; }

/* Writes the batch twice as a stream, reads it back and compares the first
 * rows of both copies. */
static void roundtrip(const struct ArrowSchema *schema, const struct ArrowArray *batch,
                      char **want, int64_t rows) {
  QvSink *sink;
  QvRbWriter *w;
  QvError e;
  CHECK(qv_sink_new_memory(&sink, &e) == QV_OK);
  QvStatus st = qv_rb_writer_new(&w, schema, sink, &g_write, &e);
  if (st) fprintf(stderr, "fuzz_stream_reader: writer open: %s\n", e.message);
  CHECK(st == QV_OK);
  for (int copy = 0; copy < 2; copy++) {
    struct ArrowArray lent = *batch; /* the writer releases it: a no-op */
    lent.release = lent_release;
    st = qv_rb_writer_write_move(w, &lent, &e);
    if (st) fprintf(stderr, "fuzz_stream_reader: write: %s\n", e.message);
    CHECK(st == QV_OK && lent.release == NULL);
  }
  CHECK(qv_rb_writer_finish(w, &e) == QV_OK);
  qv_rb_writer_free(w);
  uint8_t *bytes;
  size_t n_bytes;
  CHECK(qv_sink_memory_take(sink, &bytes, &n_bytes, &e) == QV_OK);
  qv_sink_free(sink);
  QvRbReadOptions o;
  memset(&o, 0, sizeof o);
  o.validate = QV_VALIDATE_FULL;
  o.threads = g_threads;
  struct ArrowArrayStream s;
  st = rb_fuzz_stream_open(&s, bytes, n_bytes, &o, &e);
  if (st) fprintf(stderr, "fuzz_stream_reader: re-open: %s\n", e.message);
  CHECK(st == QV_OK);
  QvArrayView v;
  CHECK(qv_array_view_init(&v, schema, &e) == QV_OK);
  for (int copy = 0; copy < 2; copy++) {
    struct ArrowArray back;
    st = qv_rb_stream_get_next(&s, &back, &e);
    if (st) fprintf(stderr, "fuzz_stream_reader: re-read: %s\n", e.message);
    CHECK(st == QV_OK && back.release != NULL);
    CHECK(back.length == batch->length);
    CHECK(qv_array_view_set_array(&v, &back, QV_VALIDATE_FULL, &e) == QV_OK);
    char **got = rb_fuzz_cells(&v, rows);
    for (int64_t i = 0; i < rows * v.n_children; i++) {
      if (strcmp(got[i], want[i]) != 0)
        fprintf(stderr, "fuzz_stream_reader: copy %d, cell %lld: %s != %s\n", copy, (long long)i,
                got[i], want[i]);
      CHECK(strcmp(got[i], want[i]) == 0);
    }
    rb_fuzz_free_cells(got, rows * v.n_children);
    back.release(&back);
  }
  qv_array_view_reset(&v);
  s.release(&s);
  qv_free(bytes);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  QvRbReadOptions o;
  memset(&o, 0, sizeof o);
  o.validate = QV_VALIDATE_FULL;
  o.max_decompressed_size = 16 << 20;
  rb_fuzz_pick(data, size, &o, &g_write);
  g_threads = o.threads;
  struct ArrowArrayStream s;
  QvError e;
  if (rb_fuzz_stream_open(&s, data, size, &o, &e) != QV_OK) return 0;
  struct ArrowSchema schema;
  CHECK(qv_rb_stream_get_schema(&s, &schema, &e) == QV_OK);
  QvArrayView v;
  CHECK(qv_array_view_init(&v, &schema, &e) == QV_OK);
  for (int n = 0; n < MAX_BATCHES; n++) {
    struct ArrowArray batch;
    if (qv_rb_stream_get_next(&s, &batch, &e) != QV_OK) break;
    /* what the reader accepted is a valid array */
    QvStatus st = qv_array_view_set_array(&v, &batch, QV_VALIDATE_FULL, &e);
    if (st) fprintf(stderr, "fuzz_stream_reader: accepted batch is invalid: %s\n", e.message);
    CHECK(st == QV_OK);
    rb_fuzz_touch(&v);
    int64_t rows = v.length < MAX_ROWS ? v.length : MAX_ROWS;
    char **want = rb_fuzz_cells(&v, rows);
    roundtrip(&schema, &batch, want, rows);
    rb_fuzz_free_cells(want, rows * v.n_children);
    batch.release(&batch);
  }
  qv_array_view_reset(&v);
  schema.release(&schema);
  s.release(&s);
  return 0;
}
