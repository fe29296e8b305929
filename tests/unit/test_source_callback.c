/* qv_source_new_callback: a stream read through the caller's read function
 * in short pieces, reads at an offset through read + seek (as an Arrow
 * file's footer is read) with sequential reading going on where it stood, the input
 * starting at the callbacks' current position, qv_source_read_all, and the
 * failures: a read error carries the source's name, a read that reports
 * more bytes than asked is refused, a missing read function is QV_EARG;
 * `release` runs exactly once in every case; the file reader over a callback
 * source or a pipe, and the stream reader over a seekable callback source
 * holding a file (read whole first). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ipc/source_internal.h"
#include "test_rb_helpers.h"
#include "test_util.h"

typedef struct Feed {
  const uint8_t *data;
  int64_t size, pos;
  size_t chunk;      /* most bytes handed out per read */
  int64_t fail_at;   /* a read at or past this position fails (-1: never) */
  bool lie;          /* report one byte more than asked */
  int releases, seeks;
} Feed;

static QvStatus feed_read(void *ctx, void *buf, size_t n, size_t *got, QvError *error) {
  Feed *f = ctx;
  if (f->fail_at >= 0 && f->pos >= f->fail_at)
    return qv_error_set(error, QV_EIO, "device gone at %lld", (long long)f->pos);
  size_t left = f->pos < f->size ? (size_t)(f->size - f->pos) : 0;
  size_t k = n < f->chunk ? n : f->chunk;
  if (k > left) k = left;
  memcpy(buf, f->data + f->pos, k);
  f->pos += (int64_t)k;
  *got = f->lie && k ? n + 1 : k;
  return QV_OK;
}

static QvStatus feed_seek(void *ctx, int64_t offset, int whence, int64_t *position,
                          QvError *error) {
  Feed *f = ctx;
  int64_t to = whence == SEEK_SET ? offset : whence == SEEK_CUR ? f->pos + offset : f->size + offset;
  if (to < 0) return qv_error_set(error, QV_EIO, "seek before the start");
  f->pos = to;
  f->seeks++;
  *position = to;
  return QV_OK;
}

static void feed_release(void *ctx) { ((Feed *)ctx)->releases++; }

static struct ArrowSchema g_schema;
static uint8_t *g_stream, *g_file;
static size_t g_stream_size, g_file_size;
static RbtCells g_cells[2];

static int setup(void **state) {
  (void)state;
  static const char *const specs[] = {"l", "u", "i"};
  rbt_batch_schema(&g_schema, specs, 3);
  struct ArrowArray b[2];
  rbt_build(&b[0], &g_schema, 700, 1);
  rbt_build(&b[1], &g_schema, 333, 2);
  struct ArrowArray *bp[2] = {&b[0], &b[1]};
  rbt_write(&g_schema, bp, 2, NULL, &g_stream, &g_stream_size);
  QvRbWriteOptions o;
  memset(&o, 0, sizeof o);
  o.format = QV_IPC_FORMAT_FILE;
  rbt_write(&g_schema, bp, 2, &o, &g_file, &g_file_size);
  for (int i = 0; i < 2; i++) {
    g_cells[i] = rbt_cells(&b[i], &g_schema);
    b[i].release(&b[i]);
  }
  return 0;
}

static int teardown(void **state) {
  (void)state;
  for (int i = 0; i < 2; i++) rbt_cells_free(&g_cells[i]);
  free(g_stream);
  free(g_file);
  g_schema.release(&g_schema);
  return 0;
}

static Feed feed(const uint8_t *data, size_t size, size_t chunk) {
  Feed f = {data, (int64_t)size, 0, chunk, -1, false, 0, 0};
  return f;
}

static void test_stream_in_short_reads(void **state) {
  (void)state;
  Feed f = feed(g_stream, g_stream_size, 7);
  QvSource *src;
  QvError e;
  rbt_check(qv_source_new_callback(&src, feed_read, NULL, feed_release, &f, "feed", &e), &e,
            "callback source");
  assert_string_equal(qv_source_name(src), "feed");
  struct ArrowArrayStream s;
  rbt_check(qv_rb_stream_reader_new(&s, src, NULL, &e), &e, "stream reader");
  qv_source_free(src); /* the reader holds its own reference */
  assert_int_equal(f.releases, 0);
  for (int i = 0; i < 2; i++) {
    struct ArrowArray a;
    assert_false(rbt_next(&s, &a));
    RbtCells got = rbt_cells(&a, &g_schema);
    rbt_assert_same_cells(&g_cells[i], &got, "callback stream batch");
    rbt_cells_free(&got);
    a.release(&a);
  }
  struct ArrowArray end;
  assert_true(rbt_next(&s, &end));
  s.release(&s);
  assert_int_equal(f.releases, 1);
  assert_int_equal(f.pos, (int64_t)g_stream_size);
}

/* The file begins 5 bytes into what the callbacks hold: the input starts at
 * their position when the source is made. */
static void test_file_through_seek(void **state) {
  (void)state;
  uint8_t *shifted = malloc(g_file_size + 5);
  assert_non_null(shifted);
  memcpy(shifted, "junk!", 5);
  memcpy(shifted + 5, g_file, g_file_size);
  Feed f = feed(shifted, g_file_size + 5, 1000);
  f.pos = 5;
  QvSource *src;
  QvError e;
  rbt_check(qv_source_new_callback(&src, feed_read, feed_seek, feed_release, &f, NULL, &e), &e,
            "seekable callback source");
  assert_string_equal(qv_source_name(src), "<callback>");
  assert_int_equal(f.pos, 5); /* the size probe seeks back */
  /* As on a seekable descriptor: reads at an offset (an Arrow file's
   * footer) leave sequential reading where it stood. */
  uint8_t head[8], tail[10], next[8];
  size_t got;
  rbt_check(qvi_source_read(src, head, sizeof head, &got, &e), &e, "sequential read");
  assert_int_equal(got, 8);
  assert_memory_equal(head, g_file, 8);
  assert_int_equal(qv_source_size(src), (int64_t)g_file_size);
  rbt_check(qvi_source_pread(src, tail, sizeof tail, (int64_t)g_file_size - 10, &got, &e), &e,
            "read at an offset");
  assert_int_equal(got, 10);
  assert_memory_equal(tail, g_file + g_file_size - 10, 10);
  assert_memory_equal(tail + 4, "ARROW1", 6);
  rbt_check(qvi_source_read(src, next, sizeof next, &got, &e), &e, "sequential read after");
  assert_int_equal(got, 8);
  assert_memory_equal(next, g_file + 8, 8);
  assert_true(f.seeks >= 5); /* the size probe (3), the offset read and the way back */
  /* the whole file through read_all from where reading stands */
  const uint8_t *rest;
  size_t n;
  QvOwner *owner;
  rbt_check(qv_source_read_all(src, 0, &rest, &n, &owner, &e), &e, "read the rest");
  assert_int_equal(n, g_file_size - 16);
  assert_memory_equal(rest, g_file + 16, n);
  qv_owner_free(owner);
  qv_source_free(src);
  assert_int_equal(f.releases, 1);
  free(shifted);
}

static void test_read_all(void **state) {
  (void)state;
  Feed f = feed(g_stream, g_stream_size, 4096);
  QvSource *src;
  QvError e;
  rbt_check(qv_source_new_callback(&src, feed_read, NULL, feed_release, &f, "feed", &e), &e,
            "callback source");
  assert_false(qv_source_has_view(src)); /* read into a block */
  const uint8_t *data;
  size_t size;
  QvOwner *owner;
  rbt_check(qv_source_read_all(src, 0, &data, &size, &owner, &e), &e, "read all");
  assert_int_equal(size, g_stream_size);
  assert_memory_equal(data, g_stream, size);
  qv_owner_free(owner);
  qv_source_free(src);
  assert_int_equal(f.releases, 1);
  /* over the bound */
  f = feed(g_stream, g_stream_size, 4096);
  rbt_check(qv_source_new_callback(&src, feed_read, NULL, feed_release, &f, "feed", &e), &e,
            "callback source");
  assert_int_equal(qv_source_read_all(src, 100, &data, &size, &owner, &e), QV_ELIMIT);
  qv_source_free(src);
  assert_int_equal(f.releases, 1);
}

static void test_failures(void **state) {
  (void)state;
  QvSource *src;
  QvError e;
  /* a read error mid-stream: the reader fails with the callback's reason */
  Feed f = feed(g_stream, g_stream_size, 64);
  f.fail_at = (int64_t)g_stream_size / 2;
  rbt_check(qv_source_new_callback(&src, feed_read, NULL, feed_release, &f, "feed", &e), &e,
            "callback source");
  struct ArrowArrayStream s;
  QvStatus st = qv_rb_stream_reader_new(&s, src, NULL, &e);
  int batches = 0;
  while (st == QV_OK) {
    struct ArrowArray a;
    st = qv_rb_stream_get_next(&s, &a, &e);
    if (st == QV_OK) {
      batches++;
      a.release(&a);
    }
  }
  assert_int_equal(st, QV_EIO);
  assert_non_null(strstr(e.message, "feed"));
  assert_non_null(strstr(e.message, "device gone"));
  assert_true(batches < 2);
  s.release(&s);
  qv_source_free(src);
  assert_int_equal(f.releases, 1);

  /* a read that claims more than it was asked for */
  f = feed(g_stream, g_stream_size, 64);
  f.lie = true;
  rbt_check(qv_source_new_callback(&src, feed_read, NULL, feed_release, &f, "liar", &e), &e,
            "callback source");
  const uint8_t *data;
  size_t size;
  QvOwner *owner;
  assert_int_equal(qv_source_read_all(src, 0, &data, &size, &owner, &e), QV_EIO);
  assert_non_null(strstr(e.message, "liar"));
  qv_source_free(src);
  assert_int_equal(f.releases, 1);

  /* no read function: refused, and release still runs */
  f = feed(g_stream, g_stream_size, 64);
  assert_int_equal(qv_source_new_callback(&src, NULL, NULL, feed_release, &f, "x", &e), QV_EARG);
  assert_int_equal(f.releases, 1);
  assert_int_equal(qv_source_new_callback(NULL, feed_read, NULL, feed_release, &f, "x", &e),
                   QV_EARG);
  assert_int_equal(f.releases, 2);
}

/* The file reader over sources that cannot be read at an offset the way a
 * mapping can (a callback source with and without seek, a pipe): the file
 * is taken whole, and every batch reads back; a truncated file says which
 * input it was. */
static void check_file_batches(QvSource *src, const char *what) {
  QvError e;
  QvRbFileReader *r;
  rbt_check(qv_rb_file_reader_new(&r, src, NULL, &e), &e, what);
  assert_int_equal(qv_rb_file_n_batches(r), 2);
  for (int i = 1; i >= 0; i--) { /* random access: the last batch first */
    struct ArrowArray a;
    rbt_check(qv_rb_file_read_batch(r, i, &a, &e), &e, what);
    RbtCells got = rbt_cells(&a, &g_schema);
    rbt_assert_same_cells(&g_cells[i], &got, what);
    rbt_cells_free(&got);
    a.release(&a);
  }
  qv_rb_file_reader_free(r);
}

static void test_file_reader_over_streams(void **state) {
  (void)state;
  QvSource *src;
  QvError e;
  Feed f = feed(g_file, g_file_size, 13);
  rbt_check(qv_source_new_callback(&src, feed_read, NULL, feed_release, &f, "feed", &e), &e,
            "callback source");
  check_file_batches(src, "file reader, sequential callback source");
  qv_source_free(src);
  assert_int_equal(f.releases, 1);

  f = feed(g_file, g_file_size, 13);
  rbt_check(qv_source_new_callback(&src, feed_read, feed_seek, feed_release, &f, "feed", &e), &e,
            "seekable callback source");
  check_file_batches(src, "file reader, seekable callback source");
  qv_source_free(src);
  assert_int_equal(f.releases, 1);

  /* the stream reader too reads a file through its footer: from the block */
  f = feed(g_file, g_file_size, 13);
  rbt_check(qv_source_new_callback(&src, feed_read, feed_seek, feed_release, &f, "feed", &e), &e,
            "seekable callback source");
  struct ArrowArrayStream s;
  rbt_check(qv_rb_stream_reader_new(&s, src, NULL, &e), &e, "stream reader, seekable callback file");
  qv_source_free(src);
  for (int i = 0; i < 2; i++) {
    struct ArrowArray a;
    assert_false(rbt_next(&s, &a));
    RbtCells got = rbt_cells(&a, &g_schema);
    rbt_assert_same_cells(&g_cells[i], &got, "stream reader, seekable callback file");
    rbt_cells_free(&got);
    a.release(&a);
  }
  struct ArrowArray end;
  assert_true(rbt_next(&s, &end));
  s.release(&s);
  assert_int_equal(f.releases, 1);

  int fds[2];
  assert_int_equal(pipe(fds), 0);
  /* the file fits the pipe's buffer (64 KiB on Linux): written before it is read */
  assert_true(g_file_size < 65536);
  assert_int_equal(write(fds[1], g_file, g_file_size), (ssize_t)g_file_size);
  close(fds[1]);
  rbt_check(qv_source_new_fd(&src, fds[0], &e), &e, "pipe source");
  check_file_batches(src, "file reader, pipe");
  qv_source_free(src);
  close(fds[0]);

  f = feed(g_file, g_file_size - 20, 13);
  rbt_check(qv_source_new_callback(&src, feed_read, NULL, feed_release, &f, "cut", &e), &e,
            "callback source");
  QvRbFileReader *r = NULL;
  assert_int_not_equal(qv_rb_file_reader_new(&r, src, NULL, &e), QV_OK);
  assert_null(r);
  assert_true(strncmp(e.message, "cut: ", 5) == 0);
  qv_source_free(src);
  assert_int_equal(f.releases, 1);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_stream_in_short_reads),
      cmocka_unit_test(test_file_through_seek),
      cmocka_unit_test(test_read_all),
      cmocka_unit_test(test_failures),
      cmocka_unit_test(test_file_reader_over_streams),
  };
  return qv_test_run(tests, setup, teardown);
}
