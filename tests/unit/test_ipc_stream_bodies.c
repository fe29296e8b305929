/* Stream bodies at one copy: a descriptor source (a pipe, a socket pair, a
 * regular file) reads each body straight into a buffer of its size, one
 * that a released earlier message handed back when there is one
 * (QV_PATH_SEQ_BODY_REUSED, the same address again), with short reads
 * injected (qvi_source_test_short_reads) so every read(2) returns a part.
 * The bodies equal those read from memory; a message still held is never
 * written over; a stream cut inside a body is QV_ETRUNCATED. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ipc/source_internal.h"
#include "quiver/io.h"
#include "quiver/ipc.h"
#include "quiver/tensor.h"
#include "test_util.h"
#include "util/cpu.h"

enum { K = 5 };
/* float64 element counts: bodies of 3 MiB, 3 MiB, 2.5 MiB, 3 MiB, 96 KiB */
static const int64_t counts[K] = {393216, 393216, 327680, 393216, 12288};

typedef struct Stream {
  uint8_t *data;
  size_t size;
} Stream;

static void make_stream(Stream *s) {
  size_t cap = 0;
  for (int i = 0; i < K; i++) cap += (size_t)counts[i] * 8 + 4096;
  s->data = malloc(cap);
  s->size = 0;
  for (int i = 0; i < K; i++) {
    QvTensor t;
    QvError err;
    void *data;
    assert_int_equal(qv_tensor_alloc(&t, QV_ARROW_FLOAT64, 1, &counts[i], NULL, false, &data, &err), QV_OK);
    double *d = data;
    for (int64_t j = 0; j < counts[i]; j++) d[j] = (double)(i * 1000003 + j);
    size_t w;
    assert_int_equal(qv_test_tensor_write_buffer(&t, s->data + s->size, cap - s->size, &w, &err), QV_OK);
    s->size += w;
    qv_tensor_reset(&t);
  }
}

typedef enum { VIA_PIPE, VIA_SOCKET, VIA_FILE } Via;

typedef struct Feed {
  int fd;
  bool threaded;
  QvTestWriter w;
  char path[64];
} Feed;

/* A descriptor carrying data[0, size). */
static int feed_open(Feed *f, Via via, const uint8_t *data, size_t size) {
  memset(f, 0, sizeof *f);
  int p[2];
  if (via == VIA_FILE) {
    strcpy(f->path, "/tmp/qv_stream_bodies_XXXXXX");
    int w = mkstemp(f->path);
    assert_true(w >= 0);
    assert_int_equal(write(w, data, size), (ssize_t)size);
    close(w);
    f->fd = open(f->path, O_RDONLY);
    unlink(f->path);
    assert_true(f->fd >= 0);
    return f->fd;
  }
  if (via == VIA_PIPE)
    assert_int_equal(pipe(p), 0);
  else
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, p), 0);
  qv_test_writer_start(&f->w, p[1], data, size, 100000);
  f->threaded = true;
  f->fd = p[0];
  return f->fd;
}

static void feed_close(Feed *f) {
  close(f->fd); /* a writer blocked on a full pipe then fails and ends */
  if (f->threaded) qv_test_writer_join(&f->w);
}

static QvIpcReader *reader_on(int fd) {
  QvSource *src;
  QvError err;
  assert_int_equal(qv_source_new_fd(&src, fd, &err), QV_OK);
  QvIpcReader *r;
  assert_int_equal(qv_ipc_reader_new(&r, src, NULL, &err), QV_OK);
  qv_source_free(src);
  return r;
}

/* The bodies as read from memory. */
static void memory_bodies(const Stream *s, QvIpcMessage *m) {
  QvIpcReader *r;
  QvError err;
  assert_int_equal(qv_test_reader_memory(&r, s->data, s->size, &err), QV_OK);
  for (int i = 0; i < K; i++) assert_int_equal(qv_ipc_reader_next(r, &m[i], &err), QV_OK);
  QvIpcMessage end;
  assert_int_equal(qv_ipc_reader_next(r, &end, &err), QV_EOS);
  qv_ipc_reader_free(r);
}

static void check_via(Via via, size_t short_reads) {
  Stream s;
  make_stream(&s);
  QvIpcMessage ref[K];
  memory_bodies(&s, ref);
  qvi_source_test_short_reads(short_reads);
  /* released one by one: every body after the first reuses a buffer */
  Feed f;
  QvIpcReader *r = reader_on(feed_open(&f, via, s.data, s.size));
  QvError err;
  const uint8_t *first = NULL;
  for (int i = 0; i < K; i++) {
    QvIpcMessage m;
    uint64_t before = qvi_path_count(QV_PATH_SEQ_BODY_REUSED);
    assert_int_equal(qv_ipc_reader_next(r, &m, &err), QV_OK);
    assert_int_equal(m.body_length, ref[i].body_length);
    assert_memory_equal(m.body, ref[i].body, (size_t)m.body_length);
    /* the last body (96 KiB) is under half of every kept buffer */
    bool reused = i > 0 && i < K - 1;
    assert_int_equal(qvi_path_count(QV_PATH_SEQ_BODY_REUSED) - before, reused ? 1 : 0);
    if (i == 0) first = m.body;
    if (reused) assert_ptr_equal(m.body, first); /* the one buffer, again */
    qv_ipc_message_reset(&m);
  }
  QvIpcMessage end;
  assert_int_equal(qv_ipc_reader_next(r, &end, &err), QV_EOS);
  qv_ipc_reader_free(r);
  feed_close(&f);

  /* held: a message kept while the next is read keeps its bytes */
  r = reader_on(feed_open(&f, via, s.data, s.size));
  QvIpcMessage held[K];
  uint64_t before = qvi_path_count(QV_PATH_SEQ_BODY_REUSED);
  for (int i = 0; i < K; i++) assert_int_equal(qv_ipc_reader_next(r, &held[i], &err), QV_OK);
  assert_int_equal(qvi_path_count(QV_PATH_SEQ_BODY_REUSED), before);
  for (int i = 0; i < K; i++) {
    assert_memory_equal(held[i].body, ref[i].body, (size_t)ref[i].body_length);
    if (i > 0) assert_ptr_not_equal(held[i].body, held[i - 1].body);
  }
  qv_ipc_reader_free(r); /* the messages outlive their reader */
  for (int i = 0; i < K; i++) qv_ipc_message_reset(&held[i]);
  feed_close(&f);

  /* cut inside the third body, which would go to a reused buffer */
  size_t cut = (size_t)(ref[2].body - s.data) + (size_t)ref[2].body_length / 2;
  r = reader_on(feed_open(&f, via, s.data, cut));
  for (int i = 0; i < 2; i++) {
    QvIpcMessage m;
    assert_int_equal(qv_ipc_reader_next(r, &m, &err), QV_OK);
    qv_ipc_message_reset(&m);
  }
  QvIpcMessage m;
  before = qvi_path_count(QV_PATH_SEQ_BODY_REUSED);
  assert_int_equal(qv_ipc_reader_next(r, &m, &err), QV_ETRUNCATED);
  assert_int_equal(qvi_path_count(QV_PATH_SEQ_BODY_REUSED) - before, 1);
  assert_non_null(strstr(err.message, "body needs"));
  qv_ipc_message_reset(&m);
  qv_ipc_reader_free(r);
  feed_close(&f);

  qvi_source_test_short_reads(0);
  for (int i = 0; i < K; i++) qv_ipc_message_reset(&ref[i]);
  free(s.data);
}

static void test_pipe(void **state) {
  (void)state;
  check_via(VIA_PIPE, 65521);
}

static void test_socketpair(void **state) {
  (void)state;
  check_via(VIA_SOCKET, 65521);
}

static void test_regular_file(void **state) {
  (void)state;
  check_via(VIA_FILE, 65521);
  check_via(VIA_FILE, 0); /* whole reads */
}

static void test_tiny_reads(void **state) {
  (void)state;
  check_via(VIA_PIPE, 509);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_pipe),
      cmocka_unit_test(test_socketpair),
      cmocka_unit_test(test_regular_file),
      cmocka_unit_test(test_tiny_reads),
  };
  return qv_test_run(tests, NULL, NULL);
}
