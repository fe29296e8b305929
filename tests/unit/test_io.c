/* Sources and sinks (quiver/io.h): every kind, what each one may do
 * (views, pread, mapping a range, sequential reads), lifetimes, and the path
 * sink's promise: the target is replaced by a rename or not at all, also
 * when the disk is full, the directory is read-only or the sink is freed
 * without being finished. */
/* fallocate, to tell a filesystem without it from a sink that skipped it */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ipc/sink_internal.h"
#include "ipc/source_internal.h"
#include "quiver/io.h"
#include "test_util.h"
#include "util/cpu.h"

/* ---- helpers */

static uint8_t pattern(size_t i) { return (uint8_t)(i * 31 + (i >> 9)); }

static void fill(uint8_t *p, size_t n, size_t from) {
  for (size_t i = 0; i < n; i++) p[i] = pattern(from + i);
}

static void write_file(const char *path, const void *data, size_t size, mode_t mode) {
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);
  assert_true(fd >= 0);
  assert_int_equal(write(fd, data, size), (ssize_t)size);
  assert_int_equal(fchmod(fd, mode), 0);
  close(fd);
}

/* A fresh directory under /tmp (0755, so another user can enter it). */
static void make_dir(char *dir) {
  strcpy(dir, "/tmp/qv_test_io_XXXXXX");
  assert_non_null(mkdtemp(dir));
  assert_int_equal(chmod(dir, 0755), 0);
}

/* Names in dir other than "." and "..". */
static int count_entries(const char *dir) {
  DIR *d = opendir(dir);
  assert_non_null(d);
  int n = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL)
    if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) n++;
  closedir(d);
  return n;
}

static void remove_dir(const char *dir) {
  DIR *d = opendir(dir);
  if (d == NULL) return;
  struct dirent *e;
  char path[512];
  while ((e = readdir(d)) != NULL) {
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    unlink(path);
  }
  closedir(d);
  rmdir(dir);
}

static void expect_file(const char *path, const void *data, size_t size) {
  size_t got;
  uint8_t *bytes = qv_test_read_file(path, &got);
  assert_non_null(bytes);
  assert_int_equal(got, size);
  if (size) assert_memory_equal(bytes, data, size);
  free(bytes);
}

static int g_released;
static void count_release(void *p) {
  (void)p;
  g_released++;
}

/* Reads the whole source sequentially with reads of `chunk` bytes. */
static void expect_sequential(QvSource *s, const uint8_t *want, size_t size, size_t chunk) {
  /* room for a whole chunk past the end: each read may fill all it asks for
   * (qemu-user checks the whole range, EFAULT, where a host kernel does not) */
  uint8_t *buf = malloc(size + chunk);
  assert_non_null(buf);
  size_t done = 0;
  QvError err;
  for (;;) {
    size_t got;
    QvStatus st = qvi_source_read(s, buf + done, chunk, &got, &err);
    if (st != QV_OK) fail_msg("read at %zu: %s (%s)", done, err.message, qv_status_name(st));
    done += got;
    if (got < chunk) break;
  }
  assert_int_equal(done, size);
  if (size) assert_memory_equal(buf, want, size);
  assert_int_equal(qvi_source_position(s), (int64_t)size);
  free(buf);
}

/* ---- sources */

static void test_source_memory(void **state) {
  (void)state;
  uint8_t data[1000];
  fill(data, sizeof data, 0);
  g_released = 0;
  QvOwner *owner = qv_owner_new(count_release, NULL);
  QvSource *s;
  QvError err;
  assert_int_equal(qv_source_new_memory(&s, data, sizeof data, owner, &err), QV_OK);
  assert_true(qv_source_has_view(s)); /* read_all hands the memory out */
  qv_owner_free(owner);
  assert_int_equal(g_released, 0); /* the source holds it */
  assert_string_equal(qv_source_name(s), "<memory>");
  assert_int_equal(qv_source_kind(s), QV_SOURCE_MEMORY);
  assert_true(qvi_source_seekable(s));
  assert_true(qv_source_is_mapped(s));
  assert_int_equal(qv_source_size(s), 1000);
  const uint8_t *view;
  size_t size;
  QvOwner *vo;
  assert_int_equal(qvi_source_view(s, &view, &size, &vo, &err), QV_OK);
  assert_ptr_equal(view, data); /* zero-copy */
  assert_int_equal(size, 1000);
  assert_ptr_equal(vo, owner);
  uint8_t buf[64];
  size_t got;
  assert_int_equal(qvi_source_pread(s, buf, 64, 990, &got, &err), QV_OK);
  assert_int_equal(got, 10);
  assert_memory_equal(buf, data + 990, 10);
  const uint8_t *range;
  QvOwner *ro;
  assert_int_equal(qvi_source_map_range(s, 100, 50, &range, &ro, &err), QV_OK);
  assert_ptr_equal(range, data + 100);
  assert_ptr_equal(ro, owner); /* a reference for the range's user */
  qv_owner_free(ro);
  assert_int_equal(qvi_source_map_range(s, 990, 11, &range, &ro, &err), QV_EARG);
  /* peek, then the same bytes again through read; skip */
  assert_int_equal(qvi_source_peek(s, buf, 8, &got, &err), QV_OK);
  assert_int_equal(got, 8);
  assert_memory_equal(buf, data, 8);
  assert_int_equal(qvi_source_position(s), 0);
  int64_t skipped;
  assert_int_equal(qvi_source_read(s, buf, 3, &got, &err), QV_OK);
  assert_memory_equal(buf, data, 3);
  assert_int_equal(qvi_source_skip(s, 500, &skipped, &err), QV_OK);
  assert_int_equal(skipped, 500);
  assert_int_equal(qvi_source_read(s, buf, 4, &got, &err), QV_OK);
  assert_memory_equal(buf, data + 503, 4);
  assert_int_equal(qvi_source_skip(s, 1000, &skipped, &err), QV_OK);
  assert_int_equal(skipped, 1000 - 507);
  assert_int_equal(qvi_source_read(s, buf, 4, &got, &err), QV_OK);
  assert_int_equal(got, 0);
  /* a second reference keeps it alive */
  qv_source_retain(s);
  qv_source_free(s);
  assert_int_equal(g_released, 0);
  qv_source_free(s);
  assert_int_equal(g_released, 1);
  /* an empty input */
  assert_int_equal(qv_source_new_memory(&s, NULL, 0, NULL, &err), QV_OK);
  assert_int_equal(qvi_source_view(s, &view, &size, &vo, &err), QV_OK);
  assert_int_equal(size, 0);
  qv_source_free(s);
}

static void test_source_path_regular(void **state) {
  (void)state;
  char dir[64], path[128];
  make_dir(dir);
  snprintf(path, sizeof path, "%s/data.bin", dir);
  size_t n = 3 * 4096 + 123;
  uint8_t *data = malloc(n);
  fill(data, n, 0);
  write_file(path, data, n, 0644);
  QvSource *s;
  QvError err;
  assert_int_equal(qv_source_new_path(&s, path, &err), QV_OK);
  assert_true(qv_source_has_view(s)); /* a regular file: a mapping */
  assert_string_equal(qv_source_name(s), path);
  assert_int_equal(qv_source_kind(s), QV_SOURCE_FILE);
  assert_int_equal(qv_source_size(s), (int64_t)n);
  /* nothing is mapped until asked for */
  assert_false(qv_source_is_mapped(s));
  uint8_t buf[100];
  size_t got;
  assert_int_equal(qvi_source_pread(s, buf, 100, 4090, &got, &err), QV_OK);
  assert_int_equal(got, 100);
  assert_memory_equal(buf, data + 4090, 100);
  /* a range maps only its pages; the pointer is exact */
  int64_t ranges = qvi_source_count_range_maps(), views = qvi_source_count_view_maps();
  const uint8_t *range;
  QvOwner *ro;
  assert_int_equal(qvi_source_map_range(s, 4096 + 7, 5000, &range, &ro, &err), QV_OK);
  assert_int_equal(qvi_source_count_range_maps(), ranges + 1);
  assert_false(qv_source_is_mapped(s));
  assert_memory_equal(range, data + 4096 + 7, 5000);
  /* the whole view, once */
  const uint8_t *view, *again;
  size_t size;
  QvOwner *vo;
  assert_int_equal(qvi_source_view(s, &view, &size, &vo, &err), QV_OK);
  assert_int_equal(qvi_source_view(s, &again, &size, &vo, &err), QV_OK);
  assert_ptr_equal(view, again);
  assert_int_equal(qvi_source_count_view_maps(), views + 1);
  assert_int_equal(size, n);
  assert_memory_equal(view, data, n);
  /* once mapped whole, a range points into the view */
  QvOwner *ro2;
  assert_int_equal(qvi_source_map_range(s, 10, 10, &range, &ro2, &err), QV_OK);
  assert_ptr_equal(range, view + 10);
  assert_int_equal(qvi_source_count_range_maps(), ranges + 1);
  expect_sequential(s, data, n, 1000);
  /* views outlive the source, and the file's name */
  qv_owner_retain(vo);
  qv_source_free(s);
  unlink(path);
  assert_memory_equal(view, data, n);
  assert_memory_equal(range, data + 10, 10);
  qv_owner_free(vo);
  qv_owner_free(ro);
  qv_owner_free(ro2);
  /* an empty file */
  write_file(path, data, 0, 0644);
  assert_int_equal(qv_source_new_path(&s, path, &err), QV_OK);
  assert_int_equal(qvi_source_view(s, &view, &size, &vo, &err), QV_OK);
  assert_null(view);
  assert_int_equal(size, 0);
  qv_source_free(s);
  free(data);
  remove_dir(dir);
}

static pid_t spawn_writer(int fd, const uint8_t *data, size_t size) {
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    for (size_t done = 0; done < size;) {
      size_t k = size - done < 1000 ? size - done : 1000;
      ssize_t w = write(fd, data + done, k);
      if (w <= 0) _exit(1);
      done += (size_t)w;
    }
    _exit(0);
  }
  return pid;
}

static void test_source_path_fifo(void **state) {
  (void)state;
  char dir[64], path[128];
  make_dir(dir);
  snprintf(path, sizeof path, "%s/fifo", dir);
  assert_int_equal(mkfifo(path, 0600), 0);
  size_t n = 200000; /* more than a pipe buffer */
  uint8_t *data = malloc(n);
  fill(data, n, 5);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    int w = open(path, O_WRONLY);
    if (w < 0) _exit(1);
    int status;
    waitpid(spawn_writer(w, data, n), &status, 0);
    _exit(WIFEXITED(status) ? WEXITSTATUS(status) : 1);
  }
  QvSource *s;
  QvError err;
  assert_int_equal(qv_source_new_path(&s, path, &err), QV_OK);
  assert_false(qv_source_has_view(s)); /* a FIFO is read */
  assert_int_equal(qv_source_kind(s), QV_SOURCE_STREAM);
  assert_false(qvi_source_seekable(s));
  const uint8_t *view;
  size_t size;
  QvOwner *vo;
  assert_int_equal(qvi_source_view(s, &view, &size, &vo, &err), QV_EARG);
  uint8_t buf[8];
  size_t got;
  assert_int_equal(qvi_source_pread(s, buf, 8, 0, &got, &err), QV_EARG);
  assert_int_equal(qvi_source_peek(s, buf, 8, &got, &err), QV_OK);
  assert_memory_equal(buf, data, 8);
  expect_sequential(s, data, n, 4096 + 3);
  qv_source_free(s);
  int status;
  assert_int_equal(waitpid(pid, &status, 0), pid);
  assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  free(data);
  remove_dir(dir);
}

static void test_source_fd(void **state) {
  (void)state;
  /* a pipe: sequential only, not closed by the source */
  int p[2];
  assert_int_equal(pipe(p), 0);
  size_t n = 100000;
  uint8_t *data = malloc(n);
  fill(data, n, 9);
  pid_t pid = spawn_writer(p[1], data, n);
  close(p[1]);
  QvSource *s;
  QvError err;
  assert_int_equal(qv_source_new_fd(&s, p[0], &err), QV_OK);
  assert_false(qv_source_has_view(s)); /* a descriptor is read */
  char name[32];
  snprintf(name, sizeof name, "<fd %d>", p[0]);
  assert_string_equal(qv_source_name(s), name);
  assert_false(qvi_source_seekable(s));
  int64_t skipped;
  assert_int_equal(qvi_source_skip(s, 77777, &skipped, &err), QV_OK);
  assert_int_equal(skipped, 77777);
  uint8_t buf[16];
  size_t got;
  assert_int_equal(qvi_source_read(s, buf, 16, &got, &err), QV_OK);
  assert_memory_equal(buf, data + 77777, 16);
  qv_source_free(s);
  assert_int_not_equal(fcntl(p[0], F_GETFD), -1); /* still open */
  close(p[0]);
  waitpid(pid, NULL, 0);

  /* a regular file positioned at 100: the input starts there */
  char dir[64], path[128];
  make_dir(dir);
  snprintf(path, sizeof path, "%s/f", dir);
  write_file(path, data, 5000, 0644);
  int fd = open(path, O_RDONLY);
  assert_true(fd >= 0);
  assert_int_equal(lseek(fd, 100, SEEK_SET), 100);
  assert_int_equal(qv_source_new_fd(&s, fd, &err), QV_OK);
  assert_true(qvi_source_seekable(s));
  assert_int_equal(qv_source_kind(s), QV_SOURCE_STREAM);
  assert_int_equal(qv_source_size(s), 4900);
  assert_int_equal(qvi_source_pread(s, buf, 16, 0, &got, &err), QV_OK);
  assert_memory_equal(buf, data + 100, 16);
  expect_sequential(s, data + 100, 4900, 999);
  qv_source_free(s);
  assert_int_equal(lseek(fd, 0, SEEK_CUR), 5000); /* reads moved the descriptor */
  close(fd);
  free(data);
  remove_dir(dir);
}

static void test_source_errors(void **state) {
  (void)state;
  QvSource *s = (QvSource *)&s;
  QvError err;
  assert_int_equal(qv_source_new_path(&s, "/nonexistent/x", &err), QV_EIO);
  assert_null(s);
  assert_non_null(strstr(err.message, "/nonexistent/x"));
  assert_int_equal(qv_source_new_path(&s, "/", &err), QV_EIO);
  assert_int_equal(qv_source_new_path(&s, NULL, &err), QV_EARG);
  assert_false(qv_source_has_view(NULL));
  /* the access group answers for NULL as for a source that can do least */
  assert_int_equal(qv_source_kind(NULL), QV_SOURCE_STREAM);
  assert_int_equal(qv_source_size(NULL), -1);
  assert_false(qv_source_is_mapped(NULL));
  assert_int_equal(qv_source_get_advice(NULL), QV_SOURCE_ADVICE_DEFAULT);
  qv_source_set_advice(NULL, QV_SOURCE_ADVICE_READ);
  qv_source_expect_full_read(NULL);
  qv_source_populate(NULL, 0, 1);
  /* an unknown advice changes nothing */
  uint8_t byte = 7;
  assert_int_equal(qv_source_new_memory(&s, &byte, 1, NULL, &err), QV_OK);
  qv_source_set_advice(s, QV_SOURCE_ADVICE_NONE);
  qv_source_set_advice(s, (QvSourceAdvice)99);
  assert_int_equal(qv_source_get_advice(s), QV_SOURCE_ADVICE_NONE);
  qv_source_free(s);
  assert_int_equal(qv_source_new_fd(&s, -3, &err), QV_EARG);
  assert_int_equal(qv_source_new_memory(&s, NULL, 1, NULL, &err), QV_EARG);
  assert_int_equal(qv_source_new_memory(NULL, "x", 1, NULL, &err), QV_EARG);
  qv_source_free(NULL);
  qv_source_retain(NULL);
}

/* ---- sinks */

static void test_sink_buffer(void **state) {
  (void)state;
  uint8_t dst[10];
  memset(dst, 0xEE, sizeof dst);
  QvSink *k;
  QvError err;
  assert_int_equal(qv_sink_new_buffer(&k, dst, 8, &err), QV_OK);
  assert_int_equal(qv_sink_write(k, "abcde", 5, &err), QV_OK);
  assert_int_equal(qv_sink_write(k, "", 0, &err), QV_OK);
  /* does not fit: nothing written, and the sink stays failed */
  assert_int_equal(qv_sink_write(k, "fghi", 4, &err), QV_ELIMIT);
  assert_non_null(strstr(err.message, "capacity of 8"));
  assert_int_equal(dst[5], 0xEE);
  assert_int_equal(qv_sink_bytes_written(k), 5);
  QvError again;
  assert_int_equal(qv_sink_write(k, "f", 1, &again), QV_ELIMIT);
  assert_string_equal(again.message, err.message);
  assert_int_equal(qv_sink_finish(k, &again), QV_ELIMIT);
  assert_memory_equal(dst, "abcde", 5);
  qv_sink_free(k);
  /* exactly full is fine */
  assert_int_equal(qv_sink_new_buffer(&k, dst, 3, &err), QV_OK);
  assert_int_equal(qv_sink_write(k, "xyz", 3, &err), QV_OK);
  assert_int_equal(qv_sink_finish(k, &err), QV_OK);
  assert_int_equal(qv_sink_finish(k, &err), QV_OK);
  assert_int_equal(qv_sink_write(k, "", 0, &err), QV_EARG); /* finished */
  uint8_t *taken;
  size_t size;
  assert_int_equal(qv_sink_memory_take(k, &taken, &size, &err), QV_EARG);
  qv_sink_free(k);
  assert_int_equal(qv_sink_new_buffer(&k, NULL, 4, &err), QV_EARG);
  assert_null(k);
}

static QvStatus swallow(void *ctx, const void *data, size_t size, QvError *error) {
  (void)ctx;
  (void)data;
  (void)size;
  (void)error;
  return QV_OK;
}

/* qvi_sink_window: the free memory past what is written, which a writer
 * fills out of order and moves into place with qv_sink_write. */
static void test_sink_window(void **state) {
  (void)state;
  QvError err;
  QvSink *k;
  /* a buffer sink: its own room, never more; nothing counts as written */
  uint8_t dst[64];
  assert_int_equal(qv_sink_new_buffer(&k, dst, sizeof dst, &err), QV_OK);
  assert_int_equal(qv_sink_write(k, "head", 4, &err), QV_OK);
  uint8_t *win = qvi_sink_window(k, 60, false);
  assert_ptr_equal(win, dst + 4);
  assert_ptr_equal(qvi_sink_window(k, 60, true), dst + 4);
  assert_null(qvi_sink_window(k, 61, true));
  assert_int_equal(qv_sink_bytes_written(k), 4);
  /* filled out of order, then moved down into place over itself */
  memcpy(win + 10, "0123456789", 10);
  assert_int_equal(qv_sink_write(k, win + 10, 10, &err), QV_OK);
  assert_memory_equal(dst, "head0123456789", 14);
  assert_int_equal(qv_sink_finish(k, &err), QV_OK);
  assert_null(qvi_sink_window(k, 1, true)); /* finished */
  qv_sink_free(k);
  /* a memory sink grows for a window only when allowed, keeping what was
   * written; the window stays put until something goes past it */
  assert_int_equal(qv_sink_new_memory(&k, &err), QV_OK);
  uint8_t first[1000];
  fill(first, sizeof first, 0);
  assert_int_equal(qv_sink_write(k, first, sizeof first, &err), QV_OK);
  size_t need = (size_t)5 << 20;
  assert_null(qvi_sink_window(k, need, false));
  win = qvi_sink_window(k, need, true);
  assert_non_null(win);
  assert_ptr_equal(qvi_sink_window(k, need, false), win);
  fill(win + need - ((size_t)2 << 20), (size_t)2 << 20, sizeof first); /* streamed: over 1 MiB */
  assert_int_equal(qv_sink_write(k, win + need - ((size_t)2 << 20), (size_t)2 << 20, &err), QV_OK);
  assert_int_equal(qv_sink_bytes_written(k), (int64_t)(sizeof first + ((size_t)2 << 20)));
  uint8_t *taken;
  size_t size;
  assert_int_equal(qv_sink_finish(k, &err), QV_OK);
  assert_int_equal(qv_sink_memory_take(k, &taken, &size, &err), QV_OK);
  assert_int_equal(size, sizeof first + ((size_t)2 << 20));
  for (size_t i = 0; i < size; i++)
    if (taken[i] != pattern(i)) fail_msg("byte %zu differs", i);
  qv_free(taken);
  qv_sink_free(k);
  /* a failed sink and sinks without memory of their own have none */
  assert_int_equal(qv_sink_new_buffer(&k, dst, 2, &err), QV_OK);
  assert_int_equal(qv_sink_write(k, "abc", 3, &err), QV_ELIMIT);
  assert_null(qvi_sink_window(k, 0, true));
  qv_sink_free(k);
  assert_int_equal(qv_sink_new_callback(&k, swallow, NULL, &err), QV_OK);
  assert_null(qvi_sink_window(k, 0, true));
  qv_sink_free(k);
}

static void test_sink_memory(void **state) {
  (void)state;
  QvSink *k;
  QvError err;
  assert_int_equal(qv_sink_new_memory(&k, &err), QV_OK);
  uint8_t *taken;
  size_t size;
  assert_int_equal(qv_sink_memory_take(k, &taken, &size, &err), QV_OK);
  assert_null(taken);
  assert_int_equal(size, 0);
  /* many small writes and a large one; the buffer grows and stays aligned */
  uint8_t chunk[777];
  size_t total = 0;
  for (int i = 0; i < 100; i++) {
    fill(chunk, sizeof chunk, total);
    assert_int_equal(qv_sink_write(k, chunk, sizeof chunk, &err), QV_OK);
    total += sizeof chunk;
  }
  uint8_t *big = malloc(1 << 20);
  fill(big, 1 << 20, total);
  assert_int_equal(qv_sink_write(k, big, 1 << 20, &err), QV_OK);
  total += 1 << 20;
  assert_int_equal(qv_sink_bytes_written(k), (int64_t)total);
  assert_int_equal(qv_sink_finish(k, &err), QV_OK);
  assert_int_equal(qv_sink_memory_take(k, &taken, &size, &err), QV_OK);
  assert_int_equal(size, total);
  assert_int_equal((uintptr_t)taken % 64, 0);
  for (size_t i = 0; i < total; i++)
    if (taken[i] != pattern(i)) fail_msg("byte %zu differs", i);
  qv_free(taken);
  /* taken: the sink is empty again */
  assert_int_equal(qv_sink_memory_take(k, &taken, &size, &err), QV_OK);
  assert_null(taken);
  qv_sink_free(k);
  /* freed with bytes in it: no leak (ASan) */
  assert_int_equal(qv_sink_new_memory(&k, &err), QV_OK);
  assert_int_equal(qv_sink_write(k, big, 100, &err), QV_OK);
  qv_sink_free(k);
  qv_sink_free(NULL);
  free(big);
}

static void test_sink_fd(void **state) {
  (void)state;
  char dir[64], path[128];
  make_dir(dir);
  snprintf(path, sizeof path, "%s/out", dir);
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  assert_true(fd >= 0);
  assert_int_equal(write(fd, "head", 4), 4);
  QvSink *k;
  QvError err;
  assert_int_equal(qv_sink_new_fd(&k, fd, &err), QV_OK);
  assert_int_equal(qv_sink_write(k, "body", 4, &err), QV_OK);
  assert_int_equal(qv_sink_finish(k, &err), QV_OK);
  qv_sink_free(k);
  assert_int_not_equal(fcntl(fd, F_GETFD), -1); /* not closed */
  close(fd);
  expect_file(path, "headbody", 8);
  /* a write error: a read-only descriptor */
  fd = open(path, O_RDONLY);
  assert_int_equal(qv_sink_new_fd(&k, fd, &err), QV_OK);
  assert_int_equal(qv_sink_write(k, "x", 1, &err), QV_EIO);
  assert_int_equal(qv_sink_finish(k, &err), QV_EIO);
  qv_sink_free(k);
  close(fd);
  assert_int_equal(qv_sink_new_fd(&k, -1, &err), QV_EARG);
  assert_null(k);
  remove_dir(dir);
}

typedef struct Collect {
  uint8_t bytes[64];
  size_t n;
  int calls;
  bool fail_next;
} Collect;

static QvStatus collect(void *ctx, const void *data, size_t size, QvError *error) {
  Collect *c = ctx;
  c->calls++;
  if (c->fail_next) return qv_error_set(error, QV_EIO, "collector refused %zu bytes", size);
  if (c->n + size > sizeof c->bytes) return QV_ENOMEM; /* no message: the sink adds one */
  memcpy(c->bytes + c->n, data, size);
  c->n += size;
  return QV_OK;
}

static void test_sink_callback(void **state) {
  (void)state;
  Collect c;
  memset(&c, 0, sizeof c);
  QvSink *k;
  QvError err;
  assert_int_equal(qv_sink_new_callback(&k, collect, &c, &err), QV_OK);
  assert_int_equal(qv_sink_write(k, "one", 3, &err), QV_OK);
  assert_int_equal(qv_sink_write(k, "two", 3, &err), QV_OK);
  assert_int_equal(c.n, 6);
  assert_memory_equal(c.bytes, "onetwo", 6);
  c.fail_next = true;
  assert_int_equal(qv_sink_write(k, "three", 5, &err), QV_EIO);
  assert_string_equal(err.message, "collector refused 5 bytes");
  c.fail_next = false;
  int calls = c.calls;
  assert_int_equal(qv_sink_write(k, "four", 4, &err), QV_EIO); /* sticky */
  assert_int_equal(c.calls, calls);
  assert_int_equal(qv_sink_bytes_written(k), 6);
  qv_sink_free(k);
  /* a callback that fails without a message still gives one */
  memset(&c, 0, sizeof c);
  assert_int_equal(qv_sink_new_callback(&k, collect, &c, &err), QV_OK);
  uint8_t big[100] = {0};
  assert_int_equal(qv_sink_write(k, big, sizeof big, &err), QV_ENOMEM);
  assert_true(strlen(err.message) > 0);
  qv_sink_free(k);
  assert_int_equal(qv_sink_new_callback(&k, NULL, NULL, &err), QV_EARG);
}

/* The temporary file of a path sink: "." + the target's name + ".…tmp". */
static int count_temps(const char *dir, const char *name) {
  DIR *d = opendir(dir);
  assert_non_null(d);
  int n = 0;
  struct dirent *e;
  size_t len = strlen(name);
  while ((e = readdir(d)) != NULL)
    if (e->d_name[0] == '.' && strncmp(e->d_name + 1, name, len) == 0 &&
        strstr(e->d_name, ".tmp") != NULL)
      n++;
  closedir(d);
  return n;
}

static void test_sink_path_replaces_by_rename(void **state) {
  (void)state;
  char dir[64], path[128];
  make_dir(dir);
  snprintf(path, sizeof path, "%s/target.arrow", dir);
  write_file(path, "old contents", 12, 0640);
  struct stat before;
  assert_int_equal(stat(path, &before), 0);
  for (unsigned flags = 0; flags <= QV_SINK_NO_FSYNC; flags += QV_SINK_NO_FSYNC) {
    QvSink *k;
    QvError err;
    assert_int_equal(qv_sink_new_path(&k, path, flags, &err), QV_OK);
    assert_int_equal(qv_sink_write(k, "new ", 4, &err), QV_OK);
    assert_int_equal(qv_sink_write(k, "contents!", 9, &err), QV_OK);
    /* until finish the target is the old file, and a temporary sits next to it */
    expect_file(path, "old contents", 12);
    assert_int_equal(count_temps(dir, "target.arrow"), 1);
    assert_int_equal(qv_sink_finish(k, &err), QV_OK);
    assert_int_equal(count_temps(dir, "target.arrow"), 0);
    expect_file(path, "new contents!", 13);
    assert_int_equal(qv_sink_bytes_written(k), 13);
    qv_sink_free(k);
    struct stat after;
    assert_int_equal(stat(path, &after), 0);
    assert_int_equal(after.st_mode & 07777, 0640); /* the target's mode is kept */
    assert_int_not_equal(after.st_ino, before.st_ino); /* a new file, renamed over */
    write_file(path, "old contents", 12, 0640);
    assert_int_equal(stat(path, &before), 0);
  }
  /* a new target: 0666 & ~umask */
  snprintf(path, sizeof path, "%s/new.arrow", dir);
  mode_t old_mask = umask(027);
  QvSink *k;
  QvError err;
  assert_int_equal(qv_sink_new_path(&k, path, 0, &err), QV_OK);
  assert_int_equal(qv_sink_finish(k, &err), QV_OK); /* empty output is fine */
  qv_sink_free(k);
  umask(old_mask);
  struct stat sb;
  assert_int_equal(stat(path, &sb), 0);
  assert_int_equal(sb.st_mode & 07777, 0640);
  assert_int_equal(sb.st_size, 0);
  /* a relative path (temporary in the current directory) */
  char cwd[512];
  assert_non_null(getcwd(cwd, sizeof cwd));
  assert_int_equal(chdir(dir), 0);
  assert_int_equal(qv_sink_new_path(&k, "rel.bin", QV_SINK_NO_FSYNC, &err), QV_OK);
  assert_int_equal(qv_sink_write(k, "r", 1, &err), QV_OK);
  assert_int_equal(qv_sink_finish(k, &err), QV_OK);
  qv_sink_free(k);
  assert_int_equal(chdir(cwd), 0);
  snprintf(path, sizeof path, "%s/rel.bin", dir);
  expect_file(path, "r", 1);
  remove_dir(dir);
}

/* A large write into a path sink allocates its blocks first (fallocate,
 * size kept: the file is exactly what was written); small writes do not. */
static void test_sink_path_preallocates_large_writes(void **state) {
  (void)state;
  char dir[64], path[128];
  make_dir(dir);
  snprintf(path, sizeof path, "%s/probe", dir);
  int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0644);
  assert_true(fd >= 0);
  bool supported = fallocate(fd, FALLOC_FL_KEEP_SIZE, 0, 1 << 20) == 0;
  close(fd);
  unlink(path);
  struct statfs fs; /* tmpfs is left unallocated (test_sink_copy_range) */
  if (statfs(dir, &fs) == 0 && fs.f_type == 0x01021994 /* TMPFS_MAGIC */) supported = false;
  if (!supported) {
    remove_dir(dir);
    print_message("skipped: %s has no fallocate, or is a tmpfs\n", dir);
    skip();
  }
  size_t big = (size_t)3 << 20;
  uint8_t *data = malloc(big + 200);
  assert_non_null(data);
  for (size_t i = 0; i < big + 200; i++) data[i] = (uint8_t)(i * 131 + (i >> 12));
  snprintf(path, sizeof path, "%s/big.bin", dir);
  for (unsigned flags = 0; flags <= QV_SINK_NO_FSYNC; flags += QV_SINK_NO_FSYNC) {
    QvSink *k;
    QvError err;
    assert_int_equal(qv_sink_new_path(&k, path, flags, &err), QV_OK);
    uint64_t before = qvi_path_count(QV_PATH_SINK_PREALLOCATED);
    assert_int_equal(qv_sink_write(k, data, 100, &err), QV_OK);
    assert_int_equal(qvi_path_count(QV_PATH_SINK_PREALLOCATED), before);
    assert_int_equal(qv_sink_write(k, data + 100, big, &err), QV_OK);
    assert_int_equal(qvi_path_count(QV_PATH_SINK_PREALLOCATED), before + 1);
    assert_int_equal(qv_sink_write(k, data + 100 + big, 100, &err), QV_OK);
    assert_int_equal(qvi_path_count(QV_PATH_SINK_PREALLOCATED), before + 1);
    assert_int_equal(qv_sink_finish(k, &err), QV_OK);
    qv_sink_free(k);
    struct stat sb;
    assert_int_equal(stat(path, &sb), 0);
    assert_int_equal(sb.st_size, (off_t)(big + 200));
    expect_file(path, data, big + 200);
    assert_int_equal(count_entries(dir), 1);
  }
  /* a sink freed without finishing leaves no preallocated file behind */
  QvSink *k;
  QvError err;
  assert_int_equal(qv_sink_new_path(&k, path, 0, &err), QV_OK);
  assert_int_equal(qv_sink_write(k, data, big, &err), QV_OK);
  qv_sink_free(k);
  assert_int_equal(count_entries(dir), 1);
  expect_file(path, data, big + 200);
  free(data);
  remove_dir(dir);
}

/* The replacement keeps the target's owner when the writer may give it
 * (root here; anyone else keeps files they own anyway). */
static void test_sink_path_keeps_owner(void **state) {
  (void)state;
  char dir[64], path[128];
  make_dir(dir);
  snprintf(path, sizeof path, "%s/owned.bin", dir);
  write_file(path, "x", 1, 0644);
  uid_t uid = getuid() == 0 ? 65534 : getuid();
  gid_t gid = getuid() == 0 ? 65534 : getgid();
  assert_int_equal(chown(path, uid, gid), 0);
  QvSink *k;
  QvError err;
  assert_int_equal(qv_sink_new_path(&k, path, QV_SINK_NO_FSYNC, &err), QV_OK);
  assert_int_equal(qv_sink_write(k, "yy", 2, &err), QV_OK);
  assert_int_equal(qv_sink_finish(k, &err), QV_OK);
  qv_sink_free(k);
  struct stat sb;
  assert_int_equal(stat(path, &sb), 0);
  assert_int_equal(sb.st_uid, uid);
  assert_int_equal(sb.st_gid, gid);
  assert_int_equal(sb.st_mode & 07777, 0644);
  expect_file(path, "yy", 2);
  remove_dir(dir);
}

static void test_sink_path_free_without_finish(void **state) {
  (void)state;
  char dir[64], path[128], fresh[128];
  make_dir(dir);
  snprintf(path, sizeof path, "%s/keep.bin", dir);
  snprintf(fresh, sizeof fresh, "%s/never.bin", dir);
  write_file(path, "original", 8, 0644);
  QvSink *k;
  QvError err;
  assert_int_equal(qv_sink_new_path(&k, path, 0, &err), QV_OK);
  assert_int_equal(qv_sink_write(k, "partial", 7, &err), QV_OK);
  qv_sink_free(k);
  expect_file(path, "original", 8);
  /* a target that did not exist is not created */
  assert_int_equal(qv_sink_new_path(&k, fresh, 0, &err), QV_OK);
  assert_int_equal(qv_sink_write(k, "partial", 7, &err), QV_OK);
  qv_sink_free(k);
  assert_int_equal(access(fresh, F_OK), -1);
  assert_int_equal(count_entries(dir), 1);
  remove_dir(dir);
}

/* Writing through a symlink replaces the file it points to; the link stays. */
static void test_sink_path_symlink(void **state) {
  (void)state;
  char dir[64], real[128], link[128];
  make_dir(dir);
  snprintf(real, sizeof real, "%s/real.bin", dir);
  snprintf(link, sizeof link, "%s/link.bin", dir);
  write_file(real, "a", 1, 0600);
  assert_int_equal(symlink(real, link), 0);
  QvSink *k;
  QvError err;
  assert_int_equal(qv_sink_new_path(&k, link, QV_SINK_NO_FSYNC, &err), QV_OK);
  assert_int_equal(qv_sink_write(k, "bb", 2, &err), QV_OK);
  assert_int_equal(qv_sink_finish(k, &err), QV_OK);
  qv_sink_free(k);
  struct stat sb;
  assert_int_equal(lstat(link, &sb), 0);
  assert_true(S_ISLNK(sb.st_mode));
  expect_file(real, "bb", 2);
  assert_int_equal(stat(real, &sb), 0);
  assert_int_equal(sb.st_mode & 07777, 0600);
  remove_dir(dir);
}

/* A target that is not a regular file is written in place. */
static void test_sink_path_device_in_place(void **state) {
  (void)state;
  QvSink *k;
  QvError err;
  assert_int_equal(qv_sink_new_path(&k, "/dev/null", 0, &err), QV_OK);
  assert_int_equal(qv_sink_write(k, "discarded", 9, &err), QV_OK);
  assert_int_equal(qv_sink_finish(k, &err), QV_OK);
  qv_sink_free(k);
  struct stat sb;
  assert_int_equal(stat("/dev/null", &sb), 0);
  assert_true(S_ISCHR(sb.st_mode));
  /* a FIFO: a reader child sees the bytes */
  char dir[64], path[128];
  make_dir(dir);
  snprintf(path, sizeof path, "%s/fifo", dir);
  assert_int_equal(mkfifo(path, 0600), 0);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    int r = open(path, O_RDONLY);
    char buf[16];
    ssize_t n = r < 0 ? -1 : read(r, buf, sizeof buf);
    _exit(n == 5 && memcmp(buf, "hello", 5) == 0 ? 0 : 1);
  }
  assert_int_equal(qv_sink_new_path(&k, path, 0, &err), QV_OK);
  assert_int_equal(qv_sink_write(k, "hello", 5, &err), QV_OK);
  assert_int_equal(qv_sink_finish(k, &err), QV_OK);
  qv_sink_free(k);
  int status;
  assert_int_equal(waitpid(pid, &status, 0), pid);
  assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  assert_int_equal(count_entries(dir), 1);
  remove_dir(dir);
}

static void test_sink_path_errors(void **state) {
  (void)state;
  QvSink *k = (QvSink *)&k;
  QvError err;
  assert_int_equal(qv_sink_new_path(&k, "/nonexistent-dir/x.arrow", 0, &err), QV_EIO);
  assert_null(k);
  assert_non_null(strstr(err.message, "/nonexistent-dir/x.arrow"));
  assert_int_equal(qv_sink_new_path(&k, "/tmp", 0, &err), QV_EIO);
  assert_int_equal(qv_sink_new_path(&k, NULL, 0, &err), QV_EARG);
  assert_int_equal(qv_sink_new_path(&k, "", 0, &err), QV_EARG);
  assert_int_equal(qv_sink_new_path(&k, "/tmp/x", 0x100, &err), QV_EARG);
}

/* Runs fn in a child; returns its exit status (77: skipped). */
static int in_child(int (*fn)(const char *), const char *arg) {
  fflush(NULL);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) _exit(fn(arg));
  int status;
  assert_int_equal(waitpid(pid, &status, 0), pid);
  assert_true(WIFEXITED(status));
  return WEXITSTATUS(status);
}

/* Child: a file size limit below the output makes write(2) fail with EFBIG
 * (SIGXFSZ ignored), as a full disk makes it fail with ENOSPC. */
static int write_past_limit(const char *path) {
  signal(SIGXFSZ, SIG_IGN);
  struct rlimit rl = {4096, 4096};
  if (setrlimit(RLIMIT_FSIZE, &rl) != 0) return 2;
  QvSink *k;
  QvError err;
  if (qv_sink_new_path(&k, path, 0, &err) != QV_OK) return 3;
  static uint8_t big[100000];
  QvStatus st = qv_sink_write(k, big, sizeof big, &err);
  if (st != QV_EIO || strstr(err.message, path) == NULL) return 4;
  /* finish repeats the failure and renames nothing */
  if (qv_sink_finish(k, &err) != QV_EIO) return 5;
  qv_sink_free(k);
  return 0;
}

static void test_sink_path_full_disk(void **state) {
  (void)state;
  char dir[64], path[128];
  make_dir(dir);
  snprintf(path, sizeof path, "%s/precious.bin", dir);
  uint8_t original[10000];
  fill(original, sizeof original, 3);
  write_file(path, original, sizeof original, 0644);
  assert_int_equal(in_child(write_past_limit, path), 0);
  expect_file(path, original, sizeof original);
  assert_int_equal(count_entries(dir), 1); /* no temporary left behind */
  remove_dir(dir);
}

/* Child: as an unprivileged user, replace a file in a directory it cannot
 * write. */
static int write_readonly_dir(const char *path) {
  if (getuid() == 0 && (setgid(65534) != 0 || setuid(65534) != 0)) return 77;
  QvSink *k = (QvSink *)&k;
  QvError err;
  QvStatus st = qv_sink_new_path(&k, path, 0, &err);
  if (st != QV_EIO || k != NULL) return 1;
  if (strstr(err.message, "Permission denied") == NULL) return 2;
  return 0;
}

static void test_sink_path_readonly_dir(void **state) {
  (void)state;
  char dir[64], path[128];
  make_dir(dir);
  snprintf(path, sizeof path, "%s/ro.bin", dir);
  write_file(path, "unchanged", 9, 0666);
  /* root ignores permissions, so the child drops to nobody; anyone else
   * just loses write permission on the directory */
  if (getuid() != 0) assert_int_equal(chmod(dir, 0555), 0);
  int rc = in_child(write_readonly_dir, path);
  chmod(dir, 0755);
  if (rc == 77) {
    remove_dir(dir);
    print_message("skipped: cannot switch to uid 65534\n");
    skip();
  }
  assert_int_equal(rc, 0);
  expect_file(path, "unchanged", 9);
  assert_int_equal(count_entries(dir), 1);
  remove_dir(dir);
}

/* The reason for the rename: a zero-copy view of a file stays valid and
 * unchanged while a path sink replaces the same file. */
static void test_same_path_view_survives(void **state) {
  (void)state;
  char dir[64], path[128];
  make_dir(dir);
  snprintf(path, sizeof path, "%s/same.bin", dir);
  size_t n = 50000;
  uint8_t *data = malloc(n);
  fill(data, n, 11);
  write_file(path, data, n, 0644);
  QvSource *s;
  QvError err;
  assert_int_equal(qv_source_new_path(&s, path, &err), QV_OK);
  const uint8_t *view;
  size_t size;
  QvOwner *vo;
  assert_int_equal(qvi_source_view(s, &view, &size, &vo, &err), QV_OK);
  qv_owner_retain(vo);
  qv_source_free(s);
  /* write the bytes back reversed, from the view itself */
  QvSink *k;
  assert_int_equal(qv_sink_new_path(&k, path, 0, &err), QV_OK);
  for (size_t i = n; i-- > 0;) assert_int_equal(qv_sink_write(k, view + i, 1, &err), QV_OK);
  assert_int_equal(qv_sink_finish(k, &err), QV_OK);
  qv_sink_free(k);
  assert_memory_equal(view, data, n); /* the old pages */
  qv_owner_free(vo);
  uint8_t *rev = malloc(n);
  for (size_t i = 0; i < n; i++) rev[i] = data[n - 1 - i];
  expect_file(path, rev, n);
  free(rev);
  free(data);
  remove_dir(dir);
}

int main(int argc, char **argv) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_source_memory),
      cmocka_unit_test(test_source_path_regular),
      cmocka_unit_test(test_source_path_fifo),
      cmocka_unit_test(test_source_fd),
      cmocka_unit_test(test_source_errors),
      cmocka_unit_test(test_sink_buffer),
      cmocka_unit_test(test_sink_memory),
      cmocka_unit_test(test_sink_window),
      cmocka_unit_test(test_sink_fd),
      cmocka_unit_test(test_sink_callback),
      cmocka_unit_test(test_sink_path_replaces_by_rename),
      cmocka_unit_test(test_sink_path_keeps_owner),
      cmocka_unit_test(test_sink_path_preallocates_large_writes),
      cmocka_unit_test(test_sink_path_free_without_finish),
      cmocka_unit_test(test_sink_path_symlink),
      cmocka_unit_test(test_sink_path_device_in_place),
      cmocka_unit_test(test_sink_path_errors),
      cmocka_unit_test(test_sink_path_full_disk),
      cmocka_unit_test(test_same_path_view_survives),
  };
  /* skipped when root cannot switch to an unprivileged uid */
  const struct CMUnitTest readonly[] = {
      cmocka_unit_test(test_sink_path_readonly_dir),
  };
  const QvTestGroup groups[] = {
      QV_TEST_GROUP("", tests, NULL, NULL),
      QV_TEST_GROUP("readonly", readonly, NULL, NULL),
  };
  return qv_test_run_groups(argc, argv, groups, sizeof groups / sizeof groups[0]);
}
