/* libFuzzer target: record batch files over arbitrary bytes.
 *
 * Opens the input as an Arrow file (footer, schema) and reads its batches by
 * index, last first, with full validation. Each accepted batch must be
 * entirely readable: every byte of every buffer is touched (ASan checks the
 * bounds the validator promised), the first rows are formatted, and the
 * batch must survive a write + read round trip with the same values. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "quiver/recordbatch_ipc.h"

#define FUZZ_NAME "fuzz_file_reader"
#include "rb_fuzz_util.h"

/* this input's threads and round-trip codec (rb_fuzz_pick) */
static QvRbWriteOptions g_write;
static int g_threads;

/* Writes the batch as a file, reads it back and compares the first rows. */
static void roundtrip(const struct ArrowSchema *schema, const struct ArrowArray *batch,
                      char **want, int64_t rows) {
  QvSink *sink;
  QvRbWriter *w;
  QvError e;
  CHECK(qv_sink_new_memory(&sink, &e) == QV_OK);
  QvRbWriteOptions wo = g_write;
  wo.format = QV_IPC_FORMAT_FILE;
  QvStatus st = qv_rb_writer_new(&w, schema, sink, &wo, &e);
  if (st) fprintf(stderr, "fuzz_file_reader: writer open: %s\n", e.message);
  CHECK(st == QV_OK);
  st = qv_rb_writer_write(w, batch, &e);
  if (st) fprintf(stderr, "fuzz_file_reader: write: %s\n", e.message);
  CHECK(st == QV_OK);
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
  QvRbFileReader *f;
  st = rb_fuzz_file_open(&f, bytes, n_bytes, &o, &e);
  if (st) fprintf(stderr, "fuzz_file_reader: re-open: %s\n", e.message);
  CHECK(st == QV_OK);
  CHECK(qv_rb_file_n_batches(f) == 1);
  struct ArrowArray back;
  st = qv_rb_file_read_batch(f, 0, &back, &e);
  if (st) fprintf(stderr, "fuzz_file_reader: re-read: %s\n", e.message);
  CHECK(st == QV_OK);
  CHECK(back.length == batch->length);
  QvArrayView v;
  CHECK(qv_array_view_init(&v, schema, &e) == QV_OK);
  CHECK(qv_array_view_set_array(&v, &back, QV_VALIDATE_FULL, &e) == QV_OK);
  char **got = rb_fuzz_cells(&v, rows);
  for (int64_t i = 0; i < rows * v.n_children; i++) {
    if (strcmp(got[i], want[i]) != 0)
      fprintf(stderr, "fuzz_file_reader: cell %lld: %s != %s\n", (long long)i, got[i], want[i]);
    CHECK(strcmp(got[i], want[i]) == 0);
  }
  rb_fuzz_free_cells(got, rows * v.n_children);
  qv_array_view_reset(&v);
  back.release(&back);
  qv_rb_file_reader_free(f);
  qv_free(bytes);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  QvRbReadOptions o;
  memset(&o, 0, sizeof o);
  o.validate = QV_VALIDATE_FULL;
  o.max_decompressed_size = 16 << 20;
  rb_fuzz_pick(data, size, &o, &g_write);
  g_threads = o.threads;
  QvRbFileReader *f;
  QvError e;
  if (rb_fuzz_file_open(&f, data, size, &o, &e) != QV_OK) return 0;
  struct ArrowSchema schema;
  CHECK(qv_rb_file_get_schema(f, &schema, &e) == QV_OK);
  QvArrayView v;
  CHECK(qv_array_view_init(&v, &schema, &e) == QV_OK);
  int64_t n = qv_rb_file_n_batches(f);
  CHECK(n >= 0);
  if (n > MAX_BATCHES) n = MAX_BATCHES;
  for (int64_t i = n - 1; i >= 0; i--) {
    struct ArrowArray batch;
    if (qv_rb_file_read_batch(f, i, &batch, &e) != QV_OK) continue;
    QvStatus st = qv_array_view_set_array(&v, &batch, QV_VALIDATE_FULL, &e);
    if (st) fprintf(stderr, "fuzz_file_reader: accepted batch is invalid: %s\n", e.message);
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
  qv_rb_file_reader_free(f);
  return 0;
}
