/* The gRPC layer (src/grpc): a server and a client in one process over
 * loopback: unary and streaming calls, headers, status with a
 * percent-encoded message, a message over the receive limit, a deadline on
 * a server that never answers, cancellation, many concurrent calls, and a
 * client that goes away mid-stream. (The independent peer, grpcio, is in
 * tests/scripts/test_flight_grpcio.sh.) */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "grpc/grpc.h"
#include "test_util.h"
#include "util/cpu.h"

static QviGrpcServer *server;
static pthread_t server_thread;
static int port;

static void sleep_ms(int ms) {
  struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000};
  nanosleep(&ts, NULL);
}

static void handler(void *ctx, QviGrpcCall *call) {
  (void)ctx;
  const char *path = qvi_grpc_call_path(call);
  QviGrpcMessage m;
  if (strcmp(path, "/t/Echo") == 0) {
    QvStatus st;
    while ((st = qvi_grpc_call_recv(call, &m, NULL)) == QV_OK) {
      struct iovec v[2] = {{(void *)m.data, m.size / 2}, {(void *)(m.data + m.size / 2), m.size - m.size / 2}};
      st = qvi_grpc_call_send(call, v, 2, NULL);
      qvi_grpc_message_reset(&m);
      if (st) break;
    }
    if (st == QV_ELIMIT) qvi_grpc_call_finish(call, QVI_GRPC_RESOURCE_EXHAUSTED, "too big");
    else qvi_grpc_call_finish(call, st == QV_EOS ? QVI_GRPC_OK : QVI_GRPC_INTERNAL, NULL);
  } else if (strcmp(path, "/t/Fail") == 0) {
    qvi_grpc_call_finish(call, QVI_GRPC_INVALID_ARGUMENT, "bad thing: 100% wrong\nsecond line");
  } else if (strcmp(path, "/t/Hang") == 0) {
    while (!qvi_grpc_call_cancelled(call)) sleep_ms(5);
    /* the server sees the deadline too (grpc-timeout): on a loaded machine
     * its status may reach the client before the client's own timer fires */
    int64_t dl = qvi_grpc_call_deadline(call);
    qvi_grpc_call_finish(call,
                         dl && qvi_grpc_now_ms() >= dl ? QVI_GRPC_DEADLINE_EXCEEDED
                                                       : QVI_GRPC_CANCELLED,
                         NULL);
  } else if (strcmp(path, "/t/Header") == 0) {
    const char *v = qvi_grpc_call_header(call, "x-test");
    qvi_grpc_call_set_response_header(call, "x-answer", "42", NULL);
    struct iovec io = {(void *)(v ? v : "none"), strlen(v ? v : "none")};
    qvi_grpc_call_send(call, &io, 1, NULL);
    qvi_grpc_call_finish(call, QVI_GRPC_OK, NULL);
  } else if (strcmp(path, "/t/Stream") == 0) {
    /* 200 messages of 64 KiB; stops when the client goes away */
    static uint8_t block[65536];
    int sent = 0;
    for (; sent < 200; sent++) {
      struct iovec io = {block, sizeof block};
      if (qvi_grpc_call_send(call, &io, 1, NULL)) break;
    }
    qvi_grpc_call_finish(call, sent == 200 ? QVI_GRPC_OK : QVI_GRPC_CANCELLED, NULL);
  } else if (strcmp(path, "/t/Pieces") == 0) {
    /* one 300 000-byte message in pieces (from a buffer reused between
     * pieces: each is written before send_more returns), misuse refused */
    static uint8_t piece[100000];
    QvStatus st = QV_OK;
    memset(piece, 'a', 10);
    struct iovec head = {piece, 10};
    st |= qvi_grpc_call_send_begin(call, 300000, &head, 1, NULL);
    struct iovec whole = {piece, 5};
    st |= qvi_grpc_call_send(call, &whole, 1, NULL) == QV_EARG ? 0 : 1;
    for (int i = 0; i < 3 && !st; i++) {
      memset(piece, 'b' + i, sizeof piece);
      struct iovec v[2] = {{piece, i == 2 ? 99990 - 50000 : 50000}, {piece, 50000}};
      st |= qvi_grpc_call_send_more(call, v, 2, NULL);
    }
    struct iovec extra = {piece, 1};
    st |= qvi_grpc_call_send_more(call, &extra, 1, NULL) == QV_EARG ? 0 : 1;
    qvi_grpc_call_finish(call, st ? QVI_GRPC_INTERNAL : QVI_GRPC_OK, NULL);
  } else {
    qvi_grpc_call_finish(call, QVI_GRPC_UNIMPLEMENTED, path);
  }
}

static void *run_server(void *arg) {
  (void)arg;
  qvi_grpc_server_run(server, NULL);
  return NULL;
}

static int setup(void **state) {
  (void)state;
  QvError err = {0};
  QviGrpcLimits lim = {.max_receive_size = 1 << 20};
  if (qvi_grpc_server_new(&server, "127.0.0.1", 0, NULL, &lim, handler, NULL, &err)) {
    fprintf(stderr, "server: %s\n", err.message);
    return -1;
  }
  port = qvi_grpc_server_port(server);
  return pthread_create(&server_thread, NULL, run_server, NULL) == 0 ? 0 : -1;
}

static int teardown(void **state) {
  (void)state;
  qvi_grpc_server_stop(server);
  pthread_join(server_thread, NULL);
  qvi_grpc_server_free(server);
  return 0;
}

static QviGrpcChannel *connect_local(const QviGrpcLimits *lim) {
  QviGrpcChannel *ch = NULL;
  QvError err = {0};
  QvStatus st = qvi_grpc_channel_new(&ch, "127.0.0.1", port, NULL, lim, 0, &err);
  if (st) fprintf(stderr, "connect: %s\n", err.message);
  assert_int_equal(st, QV_OK);
  return ch;
}

static void test_echo_stream(void **state) {
  (void)state;
  QviGrpcChannel *ch = connect_local(NULL);
  QviGrpcCall *call;
  QvError err = {0};
  assert_int_equal(qvi_grpc_call_start(&call, ch, "/t/Echo", NULL, 0, 0, &err), QV_OK);
  size_t sizes[] = {0, 1, 4095, 4096, 4097, 100000, 1 << 20};
  uint8_t *buf = malloc(1 << 20);
  for (size_t i = 0; i < (1 << 20); i++) buf[i] = (uint8_t)(i * 7);
  for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
    struct iovec v = {buf, sizes[k]};
    assert_int_equal(qvi_grpc_call_send(call, &v, 1, &err), QV_OK);
    QviGrpcMessage m;
    assert_int_equal(qvi_grpc_call_recv(call, &m, &err), QV_OK);
    assert_int_equal(m.size, sizes[k]);
    if (m.size) assert_memory_equal(m.data, buf, m.size);
    qvi_grpc_message_reset(&m);
  }
  assert_int_equal(qvi_grpc_call_close_send(call, &err), QV_OK);
  QviGrpcMessage m;
  assert_int_equal(qvi_grpc_call_recv(call, &m, &err), QV_EOS);
  assert_int_equal(qvi_grpc_call_status(call), QVI_GRPC_OK);
  qvi_grpc_call_free(call);
  free(buf);
  qvi_grpc_channel_free(ch);
}

/* Large DATA payloads are read from the socket straight into their message
 * (QV_PATH_GRPC_DIRECT_READ); two calls on one connection interleave their
 * frames, and every message arrives whole and in order on its own call. */
static void test_direct_reads(void **state) {
  (void)state;
  QviGrpcChannel *ch = connect_local(NULL);
  QviGrpcCall *call[2];
  QvError err = {0};
  for (int k = 0; k < 2; k++)
    assert_int_equal(qvi_grpc_call_start(&call[k], ch, "/t/Echo", NULL, 0, 0, &err), QV_OK);
  size_t n = (1 << 20) - 5;
  uint8_t *buf = malloc(2 * n);
  for (size_t i = 0; i < 2 * n; i++) buf[i] = (uint8_t)(i * 13 + (i >> 16));
  uint64_t before = qvi_path_count(QV_PATH_GRPC_DIRECT_READ);
  for (int round = 0; round < 3; round++) {
    size_t size[2] = {n - (size_t)round * 100003, 700001 + (size_t)round};
    for (int k = 0; k < 2; k++) {
      struct iovec v = {buf + (size_t)k * n, size[k]};
      assert_int_equal(qvi_grpc_call_send(call[k], &v, 1, &err), QV_OK);
    }
    for (int k = 0; k < 2; k++) {
      QviGrpcMessage m;
      assert_int_equal(qvi_grpc_call_recv(call[k], &m, &err), QV_OK);
      assert_int_equal(m.size, size[k]);
      assert_memory_equal(m.data, buf + (size_t)k * n, m.size);
      qvi_grpc_message_reset(&m);
    }
  }
  /* both directions of both calls took the direct path */
  assert_true(qvi_path_count(QV_PATH_GRPC_DIRECT_READ) >= before + 4);
  for (int k = 0; k < 2; k++) {
    assert_int_equal(qvi_grpc_call_close_send(call[k], &err), QV_OK);
    QviGrpcMessage m;
    assert_int_equal(qvi_grpc_call_recv(call[k], &m, &err), QV_EOS);
    assert_int_equal(qvi_grpc_call_status(call[k]), QVI_GRPC_OK);
    qvi_grpc_call_free(call[k]);
  }
  free(buf);
  qvi_grpc_channel_free(ch);
}

/* The fuzz target's server (qvi_grpc_fuzz_server) on its seed of a
 * 40 000-byte message in three DATA frames: their payloads take the direct
 * path there too, so fuzzing exercises it. */
static void test_fuzz_server_direct(void **state) {
  (void)state;
  const char *names[] = {"large_message.bin"};
  for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
    char path[1024];
    snprintf(path, sizeof path, "%s/fuzz/corpus/fuzz_grpc_frames/%s", QV_SOURCE_DIR, names[k]);
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    static uint8_t data[1 << 20];
    size_t n = fread(data, 1, sizeof data, f);
    fclose(f);
    uint64_t before = qvi_path_count(QV_PATH_GRPC_DIRECT_READ);
    qvi_grpc_fuzz_server(data, n);
    assert_true(qvi_path_count(QV_PATH_GRPC_DIRECT_READ) > before);
  }
}

static void test_status_message(void **state) {
  (void)state;
  QviGrpcChannel *ch = connect_local(NULL);
  QviGrpcCall *call;
  QvError err = {0};
  assert_int_equal(qvi_grpc_call_start(&call, ch, "/t/Fail", NULL, 0, 0, &err), QV_OK);
  assert_int_equal(qvi_grpc_call_close_send(call, &err), QV_OK);
  QviGrpcMessage m;
  assert_int_equal(qvi_grpc_call_recv(call, &m, &err), QV_EINVAL);
  assert_string_equal(err.message, "INVALID_ARGUMENT: bad thing: 100% wrong\nsecond line");
  assert_int_equal(qvi_grpc_call_status(call), QVI_GRPC_INVALID_ARGUMENT);
  qvi_grpc_call_free(call);
  /* an unknown method */
  assert_int_equal(qvi_grpc_call_start(&call, ch, "/t/Nope", NULL, 0, 0, &err), QV_OK);
  assert_int_equal(qvi_grpc_call_recv(call, &m, &err), QV_ENOTSUP);
  assert_non_null(strstr(err.message, "UNIMPLEMENTED: /t/Nope"));
  qvi_grpc_call_free(call);
  qvi_grpc_channel_free(ch);
}

static void test_headers(void **state) {
  (void)state;
  QviGrpcChannel *ch = connect_local(NULL);
  QviGrpcCall *call;
  QvError err = {0};
  QviGrpcHeader h = {"x-test", "hello there"};
  assert_int_equal(qvi_grpc_call_start(&call, ch, "/t/Header", &h, 1, 0, &err), QV_OK);
  QviGrpcMessage m;
  assert_int_equal(qvi_grpc_call_recv(call, &m, &err), QV_OK);
  assert_int_equal(m.size, 11);
  assert_memory_equal(m.data, "hello there", 11);
  /* the server's extra response header reaches the client */
  assert_non_null(qvi_grpc_call_header(call, "x-answer"));
  assert_string_equal(qvi_grpc_call_header(call, "x-answer"), "42");
  assert_null(qvi_grpc_call_header(call, "grpc-status"));
  qvi_grpc_message_reset(&m);
  assert_int_equal(qvi_grpc_call_recv(call, &m, &err), QV_EOS);
  qvi_grpc_call_free(call);
  qvi_grpc_channel_free(ch);
}

static void test_receive_limit(void **state) {
  (void)state;
  /* the server's limit is 1 MiB: it answers RESOURCE_EXHAUSTED */
  QviGrpcChannel *ch = connect_local(NULL);
  QviGrpcCall *call;
  QvError err = {0};
  assert_int_equal(qvi_grpc_call_start(&call, ch, "/t/Echo", NULL, 0, 0, &err), QV_OK);
  size_t n = (1 << 20) + 1;
  uint8_t *buf = calloc(1, n);
  struct iovec v = {buf, n};
  QvStatus st = qvi_grpc_call_send(call, &v, 1, &err);
  QviGrpcMessage m;
  if (st == QV_OK) st = qvi_grpc_call_recv(call, &m, &err);
  assert_int_equal(st, QV_ELIMIT);
  assert_non_null(strstr(err.message, "RESOURCE_EXHAUSTED"));
  qvi_grpc_call_free(call);
  qvi_grpc_channel_free(ch);
  /* the client's own limit: 1000 bytes, the echo sends 4000 back */
  QviGrpcLimits lim = {.max_receive_size = 1000};
  ch = connect_local(&lim);
  assert_int_equal(qvi_grpc_call_start(&call, ch, "/t/Echo", NULL, 0, 0, &err), QV_OK);
  v.iov_len = 4000;
  /* the echo may come back, over the limit, before the send returns (the
   * connection thread fails the call): either call then reports it */
  st = qvi_grpc_call_send(call, &v, 1, &err);
  if (st == QV_OK) st = qvi_grpc_call_recv(call, &m, &err);
  assert_int_equal(st, QV_ELIMIT);
  assert_non_null(strstr(err.message, "4000 bytes exceeds the receive limit of 1000"));
  qvi_grpc_call_free(call);
  qvi_grpc_channel_free(ch);
  free(buf);
}

static void test_deadline(void **state) {
  (void)state;
  QviGrpcChannel *ch = connect_local(NULL);
  QviGrpcCall *call;
  QvError err = {0};
  int64_t t0 = qvi_grpc_now_ms();
  assert_int_equal(qvi_grpc_call_start(&call, ch, "/t/Hang", NULL, 0, t0 + 300, &err), QV_OK);
  QviGrpcMessage m;
  assert_int_equal(qvi_grpc_call_recv(call, &m, &err), QV_EIO);
  int64_t took = qvi_grpc_now_ms() - t0;
  if (strstr(err.message, "DEADLINE_EXCEEDED") == NULL) fail_msg("after %lld ms: %s", (long long)took, err.message);
  assert_true(took >= 290 && took < 3000);
  assert_int_equal(qvi_grpc_call_status(call), QVI_GRPC_DEADLINE_EXCEEDED);
  qvi_grpc_call_free(call);
  /* the channel still works */
  assert_int_equal(qvi_grpc_call_start(&call, ch, "/t/Header", NULL, 0, 0, &err), QV_OK);
  assert_int_equal(qvi_grpc_call_recv(call, &m, &err), QV_OK);
  qvi_grpc_message_reset(&m);
  qvi_grpc_call_free(call);
  qvi_grpc_channel_free(ch);
}

static void test_cancel_mid_stream(void **state) {
  (void)state;
  QviGrpcChannel *ch = connect_local(NULL);
  QviGrpcCall *call;
  QvError err = {0};
  assert_int_equal(qvi_grpc_call_start(&call, ch, "/t/Stream", NULL, 0, 0, &err), QV_OK);
  QviGrpcMessage m;
  for (int i = 0; i < 3; i++) {
    assert_int_equal(qvi_grpc_call_recv(call, &m, &err), QV_OK);
    assert_int_equal(m.size, 65536);
    qvi_grpc_message_reset(&m);
  }
  qvi_grpc_call_cancel(call);
  assert_int_not_equal(qvi_grpc_call_recv(call, &m, &err), QV_OK);
  qvi_grpc_call_free(call);
  /* a whole stream afterwards on the same channel */
  assert_int_equal(qvi_grpc_call_start(&call, ch, "/t/Stream", NULL, 0, 0, &err), QV_OK);
  int n = 0;
  QvStatus st;
  while ((st = qvi_grpc_call_recv(call, &m, &err)) == QV_OK) {
    n++;
    qvi_grpc_message_reset(&m);
  }
  assert_int_equal(st, QV_EOS);
  assert_int_equal(n, 200);
  qvi_grpc_call_free(call);
  qvi_grpc_channel_free(ch);
  /* a channel closed mid-stream: the server serves others afterwards */
  ch = connect_local(NULL);
  assert_int_equal(qvi_grpc_call_start(&call, ch, "/t/Stream", NULL, 0, 0, &err), QV_OK);
  assert_int_equal(qvi_grpc_call_recv(call, &m, &err), QV_OK);
  qvi_grpc_message_reset(&m);
  qvi_grpc_channel_free(ch); /* the call is left open: it fails */
  assert_int_not_equal(qvi_grpc_call_recv(call, &m, &err), QV_OK);
  qvi_grpc_call_free(call);
}

typedef struct Par {
  int ok;
} Par;

static void *parallel_client(void *arg) {
  Par *p = arg;
  QviGrpcChannel *ch = NULL;
  if (qvi_grpc_channel_new(&ch, "127.0.0.1", port, NULL, NULL, 0, NULL)) return NULL;
  for (int k = 0; k < 5; k++) {
    QviGrpcCall *call;
    if (qvi_grpc_call_start(&call, ch, "/t/Stream", NULL, 0, qvi_grpc_now_ms() + 20000, NULL))
      break;
    QviGrpcMessage m;
    int n = 0;
    QvStatus st;
    while ((st = qvi_grpc_call_recv(call, &m, NULL)) == QV_OK) {
      n++;
      qvi_grpc_message_reset(&m);
    }
    if (st == QV_EOS && n == 200) p->ok++;
    qvi_grpc_call_free(call);
  }
  qvi_grpc_channel_free(ch);
  return NULL;
}

static void test_concurrent_clients(void **state) {
  (void)state;
  pthread_t t[8];
  Par p[8];
  memset(p, 0, sizeof p);
  for (int i = 0; i < 8; i++) pthread_create(&t[i], NULL, parallel_client, &p[i]);
  for (int i = 0; i < 8; i++) pthread_join(t[i], NULL);
  for (int i = 0; i < 8; i++) assert_int_equal(p[i].ok, 5);
}

static void test_helpers(void **state) {
  (void)state;
  char out[64];
  qvi_grpc_percent_decode("a%20b%zz%4", 10, out, sizeof out);
  assert_string_equal(out, "a b%zz%4");
  qvi_grpc_percent_encode("50% \x01", out, sizeof out);
  assert_string_equal(out, "50%25 %01");
  int64_t ms;
  assert_true(qvi_grpc_timeout_parse("10S", &ms) && ms == 10000);
  assert_true(qvi_grpc_timeout_parse("1500u", &ms) && ms == 2);
  assert_true(qvi_grpc_timeout_parse("2M", &ms) && ms == 120000);
  assert_false(qvi_grpc_timeout_parse("10", &ms));
  assert_false(qvi_grpc_timeout_parse("123456789S", &ms));
  assert_false(qvi_grpc_timeout_parse("1x", &ms));
  assert_int_equal(qvi_grpc_status_to_qv(QVI_GRPC_UNIMPLEMENTED), QV_ENOTSUP);
  assert_string_equal(qvi_grpc_status_name(16), "UNAUTHENTICATED");
}

static void test_send_in_pieces(void **state) {
  (void)state;
  QviGrpcLimits lim = {.max_receive_size = 1 << 20};
  QviGrpcChannel *ch = connect_local(&lim);
  QviGrpcCall *call;
  QvError err = {0};
  assert_int_equal(qvi_grpc_call_start(&call, ch, "/t/Pieces", NULL, 0, 0, &err), QV_OK);
  assert_int_equal(qvi_grpc_call_close_send(call, &err), QV_OK);
  QviGrpcMessage m;
  assert_int_equal(qvi_grpc_call_recv(call, &m, &err), QV_OK);
  assert_int_equal(m.size, 300000);
  for (size_t i = 0; i < 10; i++) assert_int_equal(m.data[i], 'a');
  /* piece i's two iovecs hold 100 000 bytes of 'b' + i (the last 99 990) */
  assert_int_equal(m.data[10], 'b');
  assert_int_equal(m.data[10 + 99999], 'b');
  assert_int_equal(m.data[10 + 100000], 'c');
  assert_int_equal(m.data[299999], 'd');
  qvi_grpc_message_reset(&m);
  assert_int_equal(qvi_grpc_call_recv(call, &m, &err), QV_EOS);
  assert_int_equal(qvi_grpc_call_status(call), QVI_GRPC_OK);
  qvi_grpc_call_free(call);
  qvi_grpc_channel_free(ch);
}

static void test_connect_refused(void **state) {
  (void)state;
  QviGrpcChannel *ch = NULL;
  QvError err = {0};
  /* port 1 on loopback: nothing listens there */
  assert_int_equal(qvi_grpc_channel_new(&ch, "127.0.0.1", 1, NULL, NULL, 0, &err), QV_EIO);
  assert_non_null(strstr(err.message, "cannot connect to 127.0.0.1:1"));
  assert_null(ch);
}

int main(int argc, char **argv) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_helpers),        cmocka_unit_test(test_echo_stream),
      cmocka_unit_test(test_status_message), cmocka_unit_test(test_headers),
      cmocka_unit_test(test_receive_limit),  cmocka_unit_test(test_deadline),
      cmocka_unit_test(test_cancel_mid_stream), cmocka_unit_test(test_concurrent_clients),
      cmocka_unit_test(test_connect_refused), cmocka_unit_test(test_send_in_pieces),
      cmocka_unit_test(test_direct_reads), cmocka_unit_test(test_fuzz_server_direct),
  };
  const QvTestGroup groups[] = {QV_TEST_GROUP("", tests, setup, teardown)};
  return qv_test_run_groups(argc, argv, groups, sizeof groups / sizeof groups[0]);
}
