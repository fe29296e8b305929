/* Bytes of a mapped input file written to a file sink are copied file to
 * file (copy_file_range) where that pays: always on tmpfs, elsewhere when
 * the input and output offsets agree within a page; the path counter
 * proves which way ran, and the output is the same bytes either way. The
 * view outlives its source (the registry keeps its own descriptor) and
 * leaves the registry when it is unmapped. A descriptor the kernel will
 * not copy to (O_APPEND) falls back to write(2). A sink to be fsynced
 * starts the writeback of every 8 MiB early (counter), same bytes. A
 * large write is preallocated except on tmpfs (counters). */
#define _GNU_SOURCE /* O_CLOEXEC, statfs */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "ipc/source_internal.h"
#include "test_util.h"
#include "util/cpu.h"

#define IN_SIZE (((size_t)3 << 20) + 5000)
#define TMPFS 0x01021994

static QvTestDir g_dir;
static char g_in[256], g_shm[64];
static uint8_t *g_bytes;

static void put(const char *path, const uint8_t *data, size_t size) {
  FILE *f = fopen(path, "wb");
  assert_non_null(f);
  assert_int_equal(fwrite(data, 1, size, f), size);
  assert_int_equal(fclose(f), 0);
}

static bool on_tmpfs(const char *path) {
  struct statfs f;
  return statfs(path, &f) == 0 && f.f_type == TMPFS;
}

static int setup(void **state) {
  (void)state;
  qv_test_dir_make(&g_dir, "out.bin");
  snprintf(g_in, sizeof g_in, "%s/in.bin", g_dir.path);
  g_bytes = malloc(IN_SIZE);
  if (g_bytes == NULL) return -1;
  uint32_t x = 12345;
  for (size_t i = 0; i < IN_SIZE; i++) {
    x = x * 1103515245u + 12345u;
    g_bytes[i] = (uint8_t)(x >> 16);
  }
  put(g_in, g_bytes, IN_SIZE);
  /* a tmpfs directory too, where every offset copies file to file */
  strcpy(g_shm, "/dev/shm/qv_copy_range_XXXXXX");
  if (!on_tmpfs("/dev/shm") || mkdtemp(g_shm) == NULL) g_shm[0] = '\0';
  return 0;
}

static int teardown(void **state) {
  (void)state;
  unlink(g_in);
  qv_test_dir_remove(&g_dir);
  if (g_shm[0]) rmdir(g_shm);
  free(g_bytes);
  return 0;
}

/* The input's whole-file view, its source already freed. */
static const uint8_t *view_of(const char *path, QvOwner **owner) {
  QvSource *src;
  QvError e;
  assert_int_equal(qv_source_new_path(&src, path, &e), QV_OK);
  const uint8_t *data;
  size_t size;
  assert_int_equal(qvi_source_view(src, &data, &size, owner, &e), QV_OK);
  assert_int_equal(size, IN_SIZE);
  qv_owner_retain(*owner);
  qv_source_free(src);
  return data;
}

/* `head` bytes of the input, then `n` bytes of the view from `off`, to a
 * path sink at `out`; returns how many writes were copied file to file
 * and checks the file holds exactly those bytes. */
static uint64_t write_view(const uint8_t *view, const char *out, size_t head, size_t off,
                           size_t n, unsigned flags) {
  QvSink *sink;
  QvError e;
  assert_int_equal(qv_sink_new_path(&sink, out, flags, &e), QV_OK);
  uint64_t before = qvi_path_count(QV_PATH_SINK_COPY_RANGE);
  assert_int_equal(qv_sink_write(sink, g_bytes, head, &e), QV_OK);
  assert_int_equal(qv_sink_write(sink, view + off, n, &e), QV_OK);
  assert_int_equal(qv_sink_finish(sink, &e), QV_OK);
  qv_sink_free(sink);
  uint64_t hits = qvi_path_count(QV_PATH_SINK_COPY_RANGE) - before;
  size_t got;
  uint8_t *file = qv_test_slurp(out, &got);
  assert_int_equal(got, head + n);
  assert_memory_equal(file, g_bytes, head);
  assert_memory_equal(file + head, g_bytes + off, n);
  free(file);
  assert_int_equal(unlink(out), 0);
  return hits;
}

static void test_offsets(void **state) {
  (void)state;
  QvOwner *owner;
  const uint8_t *view = view_of(g_in, &owner);
  bool tmpfs = on_tmpfs(g_dir.path);
  /* agreeing within a page: copied wherever the file system is */
  assert_true(write_view(view, g_dir.file, 1000, 1000, IN_SIZE - 1000, QV_SINK_NO_FSYNC) >= 1);
  assert_true(write_view(view, g_dir.file, 4096 + 77, 77, (size_t)2 << 20, QV_SINK_NO_FSYNC) >= 1);
  /* not agreeing: copied on tmpfs only, written from the mapping elsewhere */
  uint64_t hits = write_view(view, g_dir.file, 100, 1000, IN_SIZE - 1000, QV_SINK_NO_FSYNC);
  assert_int_equal(hits > 0, tmpfs);
  /* below 1 MiB: written */
  assert_int_equal(write_view(view, g_dir.file, 0, 0, 1000000, QV_SINK_NO_FSYNC), 0);
  /* not bytes of a mapped file: written */
  QvSink *sink;
  QvError e;
  assert_int_equal(qv_sink_new_path(&sink, g_dir.file, QV_SINK_NO_FSYNC, &e), QV_OK);
  uint64_t before = qvi_path_count(QV_PATH_SINK_COPY_RANGE);
  assert_int_equal(qv_sink_write(sink, g_bytes, IN_SIZE, &e), QV_OK);
  assert_int_equal(qvi_path_count(QV_PATH_SINK_COPY_RANGE), before);
  assert_int_equal(qv_sink_finish(sink, &e), QV_OK);
  qv_sink_free(sink);
  assert_int_equal(unlink(g_dir.file), 0);
  /* the view is in the registry until it is unmapped */
  int fd;
  int64_t at;
  assert_true(qvi_source_file_bytes(view + 10, 20, &fd, &at));
  assert_int_equal(at, 10);
  assert_false(qvi_source_file_bytes(view + IN_SIZE - 10, 20, &fd, &at));
  qv_owner_free(owner);
  assert_false(qvi_source_file_bytes(view + 10, 20, &fd, &at));
}

static void test_tmpfs(void **state) {
  (void)state;
  if (!g_shm[0]) {
    print_message("skipped: /dev/shm is not a tmpfs here\n");
    skip();
  }
  char in[128], out[128];
  snprintf(in, sizeof in, "%s/in.bin", g_shm);
  snprintf(out, sizeof out, "%s/out.bin", g_shm);
  put(in, g_bytes, IN_SIZE);
  QvOwner *owner;
  const uint8_t *view = view_of(in, &owner);
  assert_true(write_view(view, out, 100, 1000, IN_SIZE - 1000, QV_SINK_NO_FSYNC) >= 1);
  assert_true(write_view(view, out, 3, 4001, IN_SIZE - 4001, 0) >= 1);
  qv_owner_free(owner);
  unlink(in);
}

/* A large write into a path sink on tmpfs is not preallocated (fallocate
 * there zeroes every page the write fills again); elsewhere it is. The
 * counters say which, the bytes are the same, durable or not. */
static void test_tmpfs_unallocated(void **state) {
  (void)state;
  if (!g_shm[0]) {
    print_message("skipped: /dev/shm is not a tmpfs here\n");
    skip();
  }
  char out[128];
  snprintf(out, sizeof out, "%s/out.bin", g_shm);
  for (unsigned flags = 0; flags <= QV_SINK_NO_FSYNC; flags += QV_SINK_NO_FSYNC) {
    const char *where[2] = {out, g_dir.file};
    for (int w = 0; w < (on_tmpfs(g_dir.path) ? 1 : 2); w++) {
      QvSink *sink;
      QvError e;
      assert_int_equal(qv_sink_new_path(&sink, where[w], flags, &e), QV_OK);
      uint64_t skipped = qvi_path_count(QV_PATH_SINK_TMPFS_UNALLOCATED);
      uint64_t allocated = qvi_path_count(QV_PATH_SINK_PREALLOCATED);
      assert_int_equal(qv_sink_write(sink, g_bytes, 10, &e), QV_OK);
      assert_int_equal(qv_sink_write(sink, g_bytes + 10, IN_SIZE - 10, &e), QV_OK);
      assert_int_equal(qv_sink_finish(sink, &e), QV_OK);
      qv_sink_free(sink);
      assert_int_equal(qvi_path_count(QV_PATH_SINK_TMPFS_UNALLOCATED) - skipped, w == 0 ? 1 : 0);
      assert_int_equal(qvi_path_count(QV_PATH_SINK_PREALLOCATED) - allocated, w == 0 ? 0 : 1);
      size_t got;
      uint8_t *file = qv_test_slurp(where[w], &got);
      assert_int_equal(got, IN_SIZE);
      assert_memory_equal(file, g_bytes, IN_SIZE);
      free(file);
      assert_int_equal(unlink(where[w]), 0);
    }
  }
}

/* An O_APPEND descriptor: copy_file_range refuses it, write(2) takes over. */
static void test_refused(void **state) {
  (void)state;
  QvOwner *owner;
  const uint8_t *view = view_of(g_in, &owner);
  int fd = open(g_dir.file, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  assert_true(fd >= 0);
  QvSink *sink;
  QvError e;
  assert_int_equal(qv_sink_new_fd(&sink, fd, &e), QV_OK);
  uint64_t before = qvi_path_count(QV_PATH_SINK_COPY_RANGE);
  for (int i = 0; i < 2; i++) assert_int_equal(qv_sink_write(sink, view, IN_SIZE, &e), QV_OK);
  assert_int_equal(qvi_path_count(QV_PATH_SINK_COPY_RANGE), before);
  assert_int_equal(qv_sink_finish(sink, &e), QV_OK);
  qv_sink_free(sink);
  assert_int_equal(close(fd), 0);
  size_t got;
  uint8_t *file = qv_test_slurp(g_dir.file, &got);
  assert_int_equal(got, 2 * IN_SIZE);
  assert_memory_equal(file, g_bytes, IN_SIZE);
  assert_memory_equal(file + IN_SIZE, g_bytes, IN_SIZE);
  free(file);
  assert_int_equal(unlink(g_dir.file), 0);
  qv_owner_free(owner);
}

/* 20 MB to a sink that will be fsynced, in small writes and a large one:
 * the writeback starts before the end, the bytes are the same. */
static void test_writeback(void **state) {
  (void)state;
  size_t n = (size_t)20 << 20;
  uint8_t *big = malloc(n);
  assert_non_null(big);
  for (size_t i = 0; i < n; i++) big[i] = g_bytes[i % IN_SIZE];
  QvSink *sink;
  QvError e;
  assert_int_equal(qv_sink_new_path(&sink, g_dir.file, 0, &e), QV_OK);
  uint64_t before = qvi_path_count(QV_PATH_SINK_WRITEBACK);
  size_t small = (size_t)9 << 20, k = 0;
  for (; k < small; k += 4096) assert_int_equal(qv_sink_write(sink, big + k, 4096, &e), QV_OK);
  assert_true(qvi_path_count(QV_PATH_SINK_WRITEBACK) >= before + 1);
  assert_int_equal(qv_sink_write(sink, big + k, n - k, &e), QV_OK);
  assert_true(qvi_path_count(QV_PATH_SINK_WRITEBACK) >= before + 2);
  assert_int_equal(qv_sink_finish(sink, &e), QV_OK);
  qv_sink_free(sink);
  size_t got;
  uint8_t *file = qv_test_slurp(g_dir.file, &got);
  assert_int_equal(got, n);
  assert_memory_equal(file, big, n);
  free(file);
  free(big);
  assert_int_equal(unlink(g_dir.file), 0);
  /* a scratch sink (QV_SINK_NO_FSYNC) leaves the writeback to the kernel */
  assert_int_equal(qv_sink_new_path(&sink, g_dir.file, QV_SINK_NO_FSYNC, &e), QV_OK);
  before = qvi_path_count(QV_PATH_SINK_WRITEBACK);
  for (int i = 0; i < 4; i++) assert_int_equal(qv_sink_write(sink, g_bytes, IN_SIZE, &e), QV_OK);
  assert_int_equal(qvi_path_count(QV_PATH_SINK_WRITEBACK), before);
  assert_int_equal(qv_sink_finish(sink, &e), QV_OK);
  qv_sink_free(sink);
  assert_int_equal(unlink(g_dir.file), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_offsets),
      cmocka_unit_test(test_tmpfs),
      cmocka_unit_test(test_tmpfs_unallocated),
      cmocka_unit_test(test_refused),
      cmocka_unit_test(test_writeback),
  };
  return qv_test_run(tests, setup, teardown);
}
