/* Pipe sources enlarge their pipe (QV_PATH_SOURCE_PIPE_ENLARGED): a pipe
 * handed to qv_source_new_fd, or a FIFO opened by qv_source_new_path, is
 * raised to /proc/sys/fs/pipe-max-size (F_GETPIPE_SZ after says so), so a
 * writer and the reader take turns every MiB rather than every 64 KiB. A
 * pipe already larger than that size is not shrunk; a refused size keeps
 * the old one and the source is made all the same; a regular file and a
 * socket pair are not touched; a second source on an enlarged pipe changes
 * nothing; and the batches read through the enlarged pipe, with short
 * reads injected, are those written. */
#define _GNU_SOURCE /* F_GETPIPE_SZ, F_SETPIPE_SZ */
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include "ipc/source_internal.h"
#include "quiver/io.h"
#include "test_rb_helpers.h"
#include "test_util.h"
#include "util/cpu.h"

static int max_size(void) {
  FILE *f = fopen("/proc/sys/fs/pipe-max-size", "r");
  assert_non_null(f);
  int v = 0;
  assert_int_equal(fscanf(f, "%d", &v), 1);
  fclose(f);
  return v;
}

/* qv_source_new_fd on fd; returns how often the enlarge path ran. */
static uint64_t source_on(int fd) {
  uint64_t before = qvi_path_count(QV_PATH_SOURCE_PIPE_ENLARGED);
  QvSource *src;
  QvError err;
  assert_int_equal(qv_source_new_fd(&src, fd, &err), QV_OK);
  qv_source_free(src);
  return qvi_path_count(QV_PATH_SOURCE_PIPE_ENLARGED) - before;
}

static void test_pipe_enlarged(void **state) {
  (void)state;
  int p[2];
  assert_int_equal(pipe(p), 0);
  int max = max_size();
  assert_true(fcntl(p[0], F_GETPIPE_SZ) < max); /* 64 KiB by default */
  assert_int_equal(source_on(p[0]), 1);
  assert_int_equal(fcntl(p[0], F_GETPIPE_SZ), max);
  assert_int_equal(fcntl(p[1], F_GETPIPE_SZ), max); /* one pipe, both ends */
  /* already at the size: nothing to do */
  assert_int_equal(source_on(p[0]), 0);
  assert_int_equal(fcntl(p[0], F_GETPIPE_SZ), max);
  close(p[0]);
  close(p[1]);
}

static void test_pipe_not_shrunk(void **state) {
  (void)state;
  int p[2];
  assert_int_equal(pipe(p), 0);
  assert_true(fcntl(p[0], F_SETPIPE_SZ, 1 << 20) >= 0);
  qvi_source_test_pipe_target((size_t)256 << 10);
  assert_int_equal(source_on(p[0]), 0);
  assert_int_equal(fcntl(p[0], F_GETPIPE_SZ), 1 << 20);
  close(p[0]);
  close(p[1]);
  /* the target is what a smaller pipe is raised to */
  assert_int_equal(pipe(p), 0);
  assert_true(fcntl(p[0], F_SETPIPE_SZ, 64 << 10) >= 0);
  assert_int_equal(source_on(p[0]), 1);
  assert_int_equal(fcntl(p[0], F_GETPIPE_SZ), 256 << 10);
  qvi_source_test_pipe_target(0);
  close(p[0]);
  close(p[1]);
}

/* Above pipe-max-size an unprivileged process is refused (EPERM; one with
 * CAP_SYS_RESOURCE is not): the source is made either way, the pipe keeps
 * its size unless the kernel granted the new one. */
static void test_refusal_keeps_size(void **state) {
  (void)state;
  int p[2];
  assert_int_equal(pipe(p), 0);
  int was = fcntl(p[0], F_GETPIPE_SZ);
  size_t want = (size_t)max_size() * 4;
  qvi_source_test_pipe_target(want);
  uint64_t hits = source_on(p[0]);
  qvi_source_test_pipe_target(0);
  int now = fcntl(p[0], F_GETPIPE_SZ);
  if (hits == 0)
    assert_int_equal(now, was);
  else
    assert_int_equal(now, (int)want);
  close(p[0]);
  close(p[1]);
}

static void test_file_and_socket_untouched(void **state) {
  (void)state;
  char path[] = "/tmp/qv_source_pipe_XXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  unlink(path);
  assert_int_equal(write(fd, "abc", 3), 3);
  assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
  assert_int_equal(source_on(fd), 0);
  close(fd);
  int s[2];
  assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, s), 0);
  int rcv0 = 0, rcv1 = 0;
  socklen_t len = sizeof rcv0;
  assert_int_equal(getsockopt(s[0], SOL_SOCKET, SO_RCVBUF, &rcv0, &len), 0);
  assert_int_equal(source_on(s[0]), 0);
  len = sizeof rcv1;
  assert_int_equal(getsockopt(s[0], SOL_SOCKET, SO_RCVBUF, &rcv1, &len), 0);
  assert_int_equal(rcv0, rcv1);
  close(s[0]);
  close(s[1]);
}

/* A FIFO through qv_source_new_path: this end is opened read-write first, so
 * the source's open does not wait for a writer. */
static void test_fifo_path(void **state) {
  (void)state;
  QvTestDir d;
  qv_test_dir_make(&d, "fifo");
  const char *path = d.file;
  assert_int_equal(mkfifo(path, 0600), 0);
  int w = open(path, O_RDWR);
  assert_true(w >= 0);
  assert_true(fcntl(w, F_GETPIPE_SZ) < max_size());
  uint64_t before = qvi_path_count(QV_PATH_SOURCE_PIPE_ENLARGED);
  QvSource *src;
  QvError err;
  assert_int_equal(qv_source_new_path(&src, path, &err), QV_OK);
  assert_int_equal(qvi_path_count(QV_PATH_SOURCE_PIPE_ENLARGED) - before, 1);
  assert_int_equal(fcntl(w, F_GETPIPE_SZ), max_size());
  assert_int_equal(qv_source_kind(src), QV_SOURCE_STREAM);
  qv_source_free(src);
  close(w);
  qv_test_dir_remove(&d);
}

enum { N_BATCHES = 4 };

/* Batches of several MiB through the enlarged pipe, short reads injected,
 * read back cell for cell. */
static void test_batches_through_pipe(void **state) {
  (void)state;
  static const char *const specs[] = {"l", "u", "g"};
  struct ArrowSchema schema;
  rbt_batch_schema(&schema, specs, 3);
  struct ArrowArray b[N_BATCHES], *pb[N_BATCHES];
  for (int i = 0; i < N_BATCHES; i++) {
    rbt_build(&b[i], &schema, 40000 + 1000 * i, i * 7);
    pb[i] = &b[i];
  }
  QvRbWriteOptions wo = rbt_write_options(QV_IPC_FORMAT_STREAM, QV_COMPRESSION_NONE, 0, 0);
  uint8_t *data;
  size_t size;
  rbt_write(&schema, pb, N_BATCHES, &wo, &data, &size);
  assert_true(size > ((size_t)2 << 20));
  for (int short_reads = 0; short_reads < 2; short_reads++) {
    qvi_source_test_short_reads(short_reads ? 65521 : 0);
    int p[2];
    assert_int_equal(pipe(p), 0);
    QvTestWriter wr;
    uint64_t before = qvi_path_count(QV_PATH_SOURCE_PIPE_ENLARGED);
    QvSource *src;
    QvError err;
    assert_int_equal(qv_source_new_fd(&src, p[0], &err), QV_OK);
    assert_int_equal(qvi_path_count(QV_PATH_SOURCE_PIPE_ENLARGED) - before, 1);
    qv_test_writer_start(&wr, p[1], data, size, 0);
    QvRbReadOptions o;
    memset(&o, 0, sizeof o);
    o.validate = QV_VALIDATE_FULL;
    struct ArrowArrayStream s;
    rbt_check(qv_rb_stream_reader_new(&s, src, &o, &err), &err, "stream reader");
    qv_source_free(src);
    for (int i = 0; i < N_BATCHES; i++) {
      struct ArrowArray got;
      assert_false(rbt_next(&s, &got));
      RbtCells want = rbt_cells(&b[i], &schema), have = rbt_cells(&got, &schema);
      rbt_assert_same_cells(&want, &have, "through the pipe");
      rbt_cells_free(&want);
      rbt_cells_free(&have);
      got.release(&got);
    }
    struct ArrowArray end;
    assert_true(rbt_next(&s, &end));
    s.release(&s);
    qv_test_writer_join(&wr);
    close(p[0]);
  }
  qvi_source_test_short_reads(0);
  free(data);
  for (int i = 0; i < N_BATCHES; i++) b[i].release(&b[i]);
  schema.release(&schema);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_pipe_enlarged),
      cmocka_unit_test(test_pipe_not_shrunk),
      cmocka_unit_test(test_refusal_keeps_size),
      cmocka_unit_test(test_file_and_socket_untouched),
      cmocka_unit_test(test_fifo_path),
      cmocka_unit_test(test_batches_through_pipe),
  };
  return qv_test_run(tests, NULL, NULL);
}
