/* Issue 9's data-loss case for record batches, stream and file format: read
 * a file zero-copy (the batches' buffers are the file's mapped pages), write
 * the batches back to the same path through a path sink, and the file holds
 * the same bytes while the arrays stay valid; a write that fails (the disk
 * fills up) leaves the old file byte-identical and no temporary file. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "quiver/io.h"
#include "quiver/recordbatch_ipc.h"
#include "test_rb_helpers.h"
#include "test_util.h"

static const char *const kSpecs[] = {"l", "u", "+l(i)", "i{u}", "g"};
#define N_SPECS 5
#define N_BATCHES 3

/* Writes N_BATCHES batches of `rows` rows to path. */
static void write_sample(const char *path, QvIpcFormat format, int64_t rows) {
  struct ArrowSchema s;
  rbt_batch_schema(&s, kSpecs, N_SPECS);
  struct ArrowArray b[N_BATCHES], *p[N_BATCHES];
  for (int i = 0; i < N_BATCHES; i++) {
    rbt_build(&b[i], &s, rows, i * rows);
    p[i] = &b[i];
  }
  QvRbWriteOptions o = {.format = format};
  uint8_t *data;
  size_t size;
  rbt_write(&s, p, N_BATCHES, &o, &data, &size);
  QvSink *sink;
  QvError e;
  rbt_check(qv_sink_new_path(&sink, path, 0, &e), &e, "path sink");
  rbt_check(qv_sink_write(sink, data, size, &e), &e, "write");
  rbt_check(qv_sink_finish(sink, &e), &e, "finish");
  qv_sink_free(sink);
  free(data);
  for (int i = 0; i < N_BATCHES; i++) b[i].release(&b[i]);
  s.release(&s);
}

/* Everything read from a path: the schema and the batches (views of the
 * mapped file). */
typedef struct Read {
  struct ArrowSchema schema;
  struct ArrowArray batches[N_BATCHES];
  int n;
} Read;

static QvStatus read_path(const char *path, QvIpcFormat format, Read *r, QvError *e) {
  memset(r, 0, sizeof *r);
  QvSource *src;
  QvStatus st = qv_source_new_path(&src, path, e);
  if (st) return st;
  QvRbReadOptions o = {.validate = QV_VALIDATE_FULL};
  if (format == QV_IPC_FORMAT_STREAM) {
    struct ArrowArrayStream s;
    st = qv_rb_stream_reader_new(&s, src, &o, e);
    if (st == QV_OK) st = qv_rb_stream_get_schema(&s, &r->schema, e);
    while (st == QV_OK && r->n < N_BATCHES &&
           (st = qv_rb_stream_get_next(&s, &r->batches[r->n], e)) == QV_OK)
      r->n++;
    if (st == QV_EOS) st = QV_OK;
    if (s.release) s.release(&s);
  } else {
    QvRbFileReader *f = NULL;
    st = qv_rb_file_reader_new(&f, src, &o, e);
    if (st == QV_OK) st = qv_rb_file_get_schema(f, &r->schema, e);
    for (int64_t i = 0; st == QV_OK && i < qv_rb_file_n_batches(f) && r->n < N_BATCHES; i++)
      if ((st = qv_rb_file_read_batch(f, i, &r->batches[r->n], e)) == QV_OK) r->n++;
    qv_rb_file_reader_free(f);
  }
  qv_source_free(src); /* the arrays keep the mapping alive */
  return st;
}

static void read_reset(Read *r) {
  for (int i = 0; i < r->n; i++) r->batches[i].release(&r->batches[i]);
  if (r->schema.release) r->schema.release(&r->schema);
  memset(r, 0, sizeof *r);
}

/* Writes the batches of r to path through a path sink. */
static QvStatus write_path(const char *path, QvIpcFormat format, const Read *r, QvError *e) {
  QvSink *sink;
  QvStatus st = qv_sink_new_path(&sink, path, 0, e);
  if (st) return st;
  QvRbWriteOptions o = {.format = format};
  QvRbWriter *w = NULL;
  st = qv_rb_writer_new(&w, &r->schema, sink, &o, e);
  for (int i = 0; st == QV_OK && i < r->n; i++) st = qv_rb_writer_write(w, &r->batches[i], e);
  if (st == QV_OK) st = qv_rb_writer_finish(w, e);
  if (st == QV_OK) st = qv_sink_finish(sink, e);
  qv_rb_writer_free(w);
  qv_sink_free(sink);
  return st;
}

static void same_path_roundtrip(QvIpcFormat format, const char *name) {
  QvTestDir d;
  qv_test_dir_make(&d, name);
  write_sample(d.file, format, 500);
  size_t size;
  uint8_t *before = qv_test_slurp(d.file, &size);
  Read r;
  QvError e;
  rbt_check(read_path(d.file, format, &r, &e), &e, "read");
  assert_int_equal(r.n, N_BATCHES);
  RbtCells want = rbt_cells(&r.batches[1], &r.schema);
  /* zero-copy: the int64 column's values are the file's pages */
  const struct ArrowArray *col0 = r.batches[1].children[0];
  assert_true(qv_test_is_mapping_of(col0->buffers[1], d.file));

  /* the arrays written back over the very file they map */
  rbt_check(write_path(d.file, format, &r, &e), &e, "write back");
  qv_test_file_kept(&d, before, size);
  RbtCells got = rbt_cells(&r.batches[1], &r.schema); /* the old pages live on */
  rbt_assert_same_cells(&want, &got, name);
  rbt_cells_free(&got);
  rbt_cells_free(&want);
  read_reset(&r);
  free(before);
  qv_test_dir_remove(&d);
}

static void test_stream_same_path(void **state) {
  (void)state;
  same_path_roundtrip(QV_IPC_FORMAT_STREAM, "batches.arrows");
}

static void test_file_same_path(void **state) {
  (void)state;
  same_path_roundtrip(QV_IPC_FORMAT_FILE, "batches.arrow");
}

/* Child: the disk fills up while the zero-copy batches are written back. */
static int fail_write(const char *path, QvIpcFormat format) {
  Read r;
  QvError e;
  if (read_path(path, format, &r, &e)) return 2;
  if (r.n != N_BATCHES) return 3;
  if (qv_test_fill_disk_at(65536) != 0) return 4;
  QvStatus st = write_path(path, format, &r, &e);
  if (st != QV_EIO || strstr(e.message, "File too large") == NULL) return 5;
  read_reset(&r);
  return 0;
}

static int fail_stream_write(const char *path) { return fail_write(path, QV_IPC_FORMAT_STREAM); }
static int fail_file_write(const char *path) { return fail_write(path, QV_IPC_FORMAT_FILE); }

static void failed_write_keeps_file(QvIpcFormat format, const char *name,
                                    int (*child)(const char *)) {
  QvTestDir d;
  qv_test_dir_make(&d, name);
  write_sample(d.file, format, 4000);
  qv_test_failed_write_keeps(&d, 65536, child);
  qv_test_dir_remove(&d);
}

static void test_stream_failed_write_keeps_file(void **state) {
  (void)state;
  failed_write_keeps_file(QV_IPC_FORMAT_STREAM, "keep.arrows", fail_stream_write);
}

static void test_file_failed_write_keeps_file(void **state) {
  (void)state;
  failed_write_keeps_file(QV_IPC_FORMAT_FILE, "keep.arrow", fail_file_write);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_stream_same_path),
      cmocka_unit_test(test_file_same_path),
      cmocka_unit_test(test_stream_failed_write_keeps_file),
      cmocka_unit_test(test_file_failed_write_keeps_file),
  };
  return qv_test_run(tests, NULL, NULL);
}
