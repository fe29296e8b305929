/* Issue 9's data-loss case, for dense and sparse tensors: read a file
 * zero-copy (the data is a mapping of the file), write it back to the same
 * path through a path sink, and the file holds the same bytes while the
 * view stays valid; a write that fails (the disk fills up) leaves the old
 * file byte-identical and no temporary file behind. Also: a path read maps
 * only the chosen message's body, and contiguous data goes to a sink
 * straight from the tensor's memory, with no staging copy. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ipc/source_internal.h"
#include "quiver/io.h"
#include "quiver/sparse_ipc.h"
#include "quiver/tensor_ipc.h"
#include "test_util.h"

/* ---- helpers */

/* A float64 rows x cols tensor with distinct values. */
static void make_tensor(QvTensor *t, int64_t rows, int64_t cols) {
  const int64_t shape[2] = {rows, cols};
  const char *names[2] = {"row", "col"};
  QvError err;
  void *data;
  assert_int_equal(qv_tensor_alloc(t, QV_ARROW_FLOAT64, 2, shape, names, false, &data, &err), QV_OK);
  double *d = data;
  for (int64_t i = 0; i < rows * cols; i++) d[i] = (double)i * 0.25 - 7;
}

/* A CSR matrix from a dense one with about a third of it non-zero. */
static void make_sparse(QvSparseTensor *s, QvTensor *dense, int64_t rows, int64_t cols) {
  const int64_t shape[2] = {rows, cols};
  QvError err;
  void *data;
  assert_int_equal(qv_tensor_alloc(dense, QV_ARROW_FLOAT32, 2, shape, NULL, false, &data, &err),
                   QV_OK);
  float *d = data;
  for (int64_t i = 0; i < rows * cols; i++) d[i] = i % 3 == 0 ? (float)(i + 1) : 0.0f;
  assert_int_equal(qv_sparse_from_dense(dense, QV_SPARSE_CSR, NULL, s, &err), QV_OK);
}

static QvStatus write_tensor_to(const QvTensor *t, const char *path, QvError *err) {
  QvSink *sink;
  QvStatus st = qv_sink_new_path(&sink, path, 0, err);
  if (st) return st;
  st = qv_tensor_write(t, sink, NULL, err);
  if (st == QV_OK) st = qv_sink_finish(sink, err);
  qv_sink_free(sink);
  return st;
}

static QvStatus write_sparse_to(const QvSparseTensor *t, const char *path, QvError *err) {
  QvSink *sink;
  QvStatus st = qv_sink_new_path(&sink, path, 0, err);
  if (st) return st;
  st = qv_sparse_write(t, sink, NULL, err);
  if (st == QV_OK) st = qv_sink_finish(sink, err);
  qv_sink_free(sink);
  return st;
}

/* ---- dense */

static void test_tensor_same_path_roundtrip(void **state) {
  (void)state;
  QvTestDir d;
  qv_test_dir_make(&d, "tensor.arrow");
  QvTensor t;
  make_tensor(&t, 300, 70);
  QvError err;
  assert_int_equal(write_tensor_to(&t, d.file, &err), QV_OK);
  size_t size;
  uint8_t *before = qv_test_slurp(d.file, &size);

  QvSource *src;
  assert_int_equal(qv_source_new_path(&src, d.file, &err), QV_OK);
  int64_t views = qvi_source_count_view_maps(), ranges = qvi_source_count_range_maps();
  QvTensor view;
  QvStatus st = qv_tensor_read(src, 0, NULL, &view, &err);
  if (st) fail_msg("read: %s", err.message);
  qv_source_free(src);
  /* zero-copy: a mapping of the file, of the body only, 64-byte aligned */
  assert_true(qv_test_is_mapping_of(view.data, d.file));
  assert_int_equal(qvi_source_count_view_maps(), views);
  assert_int_equal(qvi_source_count_range_maps(), ranges + 1);
  assert_int_equal((uintptr_t)view.data % 64, 0);

  /* the view written back over the very file it maps */
  st = write_tensor_to(&view, d.file, &err);
  if (st) fail_msg("write back: %s", err.message);
  qv_test_file_kept(&d, before, size);
  assert_true(qv_tensor_equal(&view, &t, true)); /* the old pages live on */
  qv_tensor_reset(&view);
  free(before);
  qv_tensor_reset(&t);
  qv_test_dir_remove(&d);
}

/* Child: the disk "fills up" (RLIMIT_FSIZE, SIGXFSZ ignored: write(2) fails
 * with EFBIG) while a zero-copy view of the file is written back to it. */
static int fail_tensor_write(const char *path) {
  QvSource *src;
  QvError err;
  if (qv_source_new_path(&src, path, &err)) return 2;
  QvTensor view;
  QvStatus st = qv_tensor_read(src, 0, NULL, &view, &err);
  qv_source_free(src);
  if (st) return 3;
  if (qv_test_fill_disk_at(65536) != 0) return 4;
  st = write_tensor_to(&view, path, &err);
  if (st != QV_EIO || strstr(err.message, "File too large") == NULL) return 5;
  qv_tensor_reset(&view);
  return 0;
}

/* Child: the same for a sparse tensor. */
static int fail_sparse_write(const char *path) {
  QvSource *src;
  QvError err;
  if (qv_source_new_path(&src, path, &err)) return 2;
  QvSparseTensor view;
  QvStatus st = qv_sparse_read(src, 0, NULL, &view, &err);
  qv_source_free(src);
  if (st) return 3;
  if (qv_test_fill_disk_at(65536) != 0) return 4;
  st = write_sparse_to(&view, path, &err);
  if (st != QV_EIO || strstr(err.message, "File too large") == NULL) return 5;
  qv_sparse_reset(&view);
  return 0;
}

static void test_tensor_failed_write_keeps_file(void **state) {
  (void)state;
  QvTestDir d;
  qv_test_dir_make(&d, "keep.arrow");
  QvTensor t;
  make_tensor(&t, 512, 64); /* 256 KiB: over the child's 64 KiB limit */
  QvError err;
  assert_int_equal(write_tensor_to(&t, d.file, &err), QV_OK);
  qv_test_failed_write_keeps(&d, 65536, fail_tensor_write);
  qv_tensor_reset(&t);
  qv_test_dir_remove(&d);
}

/* A contiguous body reaches the sink as the tensor's own memory. */
typedef struct Seen {
  const void *ptr[16];
  size_t size[16];
  int n;
} Seen;

static QvStatus record(void *ctx, const void *data, size_t size, QvError *error) {
  (void)error;
  Seen *s = ctx;
  if (s->n < 16) {
    s->ptr[s->n] = data;
    s->size[s->n] = size;
  }
  s->n++;
  return QV_OK;
}

static bool was_written(const Seen *s, const void *p, size_t size) {
  for (int i = 0; i < s->n && i < 16; i++)
    if (s->ptr[i] == p && s->size[i] == size) return true;
  return false;
}

static void test_tensor_body_written_without_copy(void **state) {
  (void)state;
  QvTensor t;
  make_tensor(&t, 41, 30); /* 9840 bytes: the body needs padding */
  Seen seen = {0};
  QvSink *sink;
  QvError err;
  assert_int_equal(qv_sink_new_callback(&sink, record, &seen, &err), QV_OK);
  assert_int_equal(qv_tensor_write(&t, sink, NULL, &err), QV_OK);
  assert_true(was_written(&seen, t.data, 41 * 30 * 8));
  assert_int_equal(seen.n, 3); /* metadata, body, padding */
  qv_sink_free(sink);
  qv_tensor_reset(&t);
}

/* ---- sparse */

static void test_sparse_same_path_roundtrip(void **state) {
  (void)state;
  QvTestDir d;
  qv_test_dir_make(&d, "sparse.arrow");
  QvTensor dense;
  QvSparseTensor s;
  make_sparse(&s, &dense, 200, 90);
  QvError err;
  assert_int_equal(write_sparse_to(&s, d.file, &err), QV_OK);
  size_t size;
  uint8_t *before = qv_test_slurp(d.file, &size);

  QvSource *src;
  assert_int_equal(qv_source_new_path(&src, d.file, &err), QV_OK);
  int64_t views = qvi_source_count_view_maps(), ranges = qvi_source_count_range_maps();
  QvSparseTensor view;
  QvStatus st = qv_sparse_read(src, 0, NULL, &view, &err);
  if (st) fail_msg("read: %s", err.message);
  qv_source_free(src);
  assert_true(qv_test_is_mapping_of(view.values, d.file));
  assert_true(qv_test_is_mapping_of(view.indptr, d.file));
  assert_int_equal(qvi_source_count_view_maps(), views);
  assert_int_equal(qvi_source_count_range_maps(), ranges + 1);
  assert_int_equal((uintptr_t)view.values % 64, 0);

  st = write_sparse_to(&view, d.file, &err);
  if (st) fail_msg("write back: %s", err.message);
  qv_test_file_kept(&d, before, size);
  assert_true(qv_sparse_equal_dense(&view, &dense));
  qv_sparse_reset(&view);
  free(before);
  qv_sparse_reset(&s);
  qv_tensor_reset(&dense);
  qv_test_dir_remove(&d);
}

static void test_sparse_failed_write_keeps_file(void **state) {
  (void)state;
  QvTestDir d;
  qv_test_dir_make(&d, "keep_sparse.arrow");
  QvTensor dense;
  QvSparseTensor s;
  make_sparse(&s, &dense, 300, 300); /* 30000 nnz: ~360 KiB */
  QvError err;
  assert_int_equal(write_sparse_to(&s, d.file, &err), QV_OK);
  qv_test_failed_write_keeps(&d, 65536, fail_sparse_write);
  qv_sparse_reset(&s);
  qv_tensor_reset(&dense);
  qv_test_dir_remove(&d);
}

static void test_sparse_buffers_written_without_copy(void **state) {
  (void)state;
  QvTensor dense;
  QvSparseTensor s;
  make_sparse(&s, &dense, 20, 30);
  Seen seen = {0};
  QvSink *sink;
  QvError err;
  assert_int_equal(qv_sink_new_callback(&sink, record, &seen, &err), QV_OK);
  assert_int_equal(qv_sparse_write(&s, sink, NULL, &err), QV_OK);
  assert_true(was_written(&seen, s.indptr, (size_t)s.indptr_len * 8));
  assert_true(was_written(&seen, s.indices, (size_t)s.nnz * 8));
  assert_true(was_written(&seen, s.values, (size_t)s.nnz * 4));
  qv_sink_free(sink);
  qv_sparse_reset(&s);
  qv_tensor_reset(&dense);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_tensor_same_path_roundtrip),
      cmocka_unit_test(test_tensor_failed_write_keeps_file),
      cmocka_unit_test(test_tensor_body_written_without_copy),
      cmocka_unit_test(test_sparse_same_path_roundtrip),
      cmocka_unit_test(test_sparse_failed_write_keeps_file),
      cmocka_unit_test(test_sparse_buffers_written_without_copy),
  };
  return qv_test_run(tests, NULL, NULL);
}
