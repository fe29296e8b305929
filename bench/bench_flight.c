/* Arrow Flight over loopback (#25), quiver to quiver, against a plain TCP
 * loopback transfer of the same bytes measured in the same run:
 *
 *   1. DoGet of a stream of TOTAL bytes (int64 batches of 64 MiB), and
 *   2. DoPut of the same stream, each as throughput and as a ratio to
 *   3. one socket on 127.0.0.1 carrying TOTAL bytes in 1 MiB writes;
 *   4. 32 concurrent DoGets of 64 MiB each from a server in a child
 *      process, whose peak RSS is reported (bounded by HTTP/2 flow control:
 *      the stream's batches are the server's only large memory).
 *
 * Usage: bench_flight [TOTAL_MIB]   (default 1024; the lead runs it quietly)
 *        bench_flight --write FILE TOTAL_MIB   (writes that stream as an
 *        Arrow stream file, for bench_flight_grpcio.sh)
 * Prints ratios, never asserts a timing. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "quiver/buffer.h"
#include "quiver/flight.h"
#include "quiver/io.h"
#include "quiver/recordbatch_ipc.h"

#define BATCH_BYTES ((int64_t)64 << 20)

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void die(const char *what, const QvError *e) {
  fprintf(stderr, "bench_flight: %s: %s\n", what, e ? e->message : "");
  exit(1);
}

/* ---- a stream of n batches of one int64 column over one shared buffer */

static int64_t *g_values;

static void noop_release(struct ArrowArray *a) { a->release = NULL; }
static void schema_release(struct ArrowSchema *s) { s->release = NULL; }

typedef struct Gen {
  int64_t n, i;
  struct ArrowSchema child_schema, *child_schema_p;
  struct ArrowArray child, *child_p;
  const void *child_buffers[2];
  const void *root_buffers[1];
} Gen;

static void fill_schema(struct ArrowSchema *out, Gen *g) {
  g->child_schema = (struct ArrowSchema){.format = "l", .name = "v", .flags = 0,
                                         .release = schema_release};
  g->child_schema_p = &g->child_schema;
  *out = (struct ArrowSchema){.format = "+s", .name = "", .n_children = 1,
                              .children = &g->child_schema_p, .release = schema_release};
}

static int gen_get_schema(struct ArrowArrayStream *s, struct ArrowSchema *out) {
  fill_schema(out, s->private_data);
  return 0;
}

static int gen_get_next(struct ArrowArrayStream *s, struct ArrowArray *out) {
  Gen *g = s->private_data;
  if (g->i == g->n) {
    out->release = NULL;
    return 0;
  }
  g->i++;
  int64_t rows = BATCH_BYTES / 8;
  g->child_buffers[0] = NULL;
  g->child_buffers[1] = g_values;
  g->child = (struct ArrowArray){.length = rows, .n_buffers = 2, .buffers = g->child_buffers,
                                 .release = noop_release};
  g->child_p = &g->child;
  g->root_buffers[0] = NULL;
  *out = (struct ArrowArray){.length = rows, .n_buffers = 1, .n_children = 1,
                             .buffers = g->root_buffers, .children = &g->child_p,
                             .release = noop_release};
  return 0;
}

static const char *gen_error(struct ArrowArrayStream *s) {
  (void)s;
  return NULL;
}

static void gen_release(struct ArrowArrayStream *s) {
  free(s->private_data);
  s->release = NULL;
}

static void gen_stream(struct ArrowArrayStream *out, int64_t n) {
  Gen *g = calloc(1, sizeof *g);
  g->n = n;
  *out = (struct ArrowArrayStream){.get_schema = gen_get_schema, .get_next = gen_get_next,
                                   .get_last_error = gen_error, .release = gen_release,
                                   .private_data = g};
}

/* ---- the server */

static int64_t g_batches;

static QvStatus h_get(void *ctx, QvFlightCall *call, const uint8_t *t, size_t n,
                      struct ArrowArrayStream *out, QvError *error) {
  (void)ctx;
  (void)call;
  (void)error;
  int64_t batches = n == 1 && t[0] == '1' ? 1 : g_batches;
  gen_stream(out, batches);
  return QV_OK;
}

static QvStatus h_put(void *ctx, QvFlightCall *call, const QvFlightDescriptor *d,
                      struct ArrowArrayStream *in, QvError *error) {
  (void)ctx;
  (void)call;
  (void)d;
  struct ArrowArray a;
  QvStatus st;
  while ((st = qv_rb_stream_get_next(in, &a, error)) == QV_OK) a.release(&a);
  return st == QV_EOS ? QV_OK : st;
}

static const QvFlightHandlers handlers = {.do_get = h_get, .do_put = h_put};

static void *run_server(void *s) {
  qv_flight_server_run(s, NULL);
  return NULL;
}

static int64_t drain(QvFlightClient *c, const char *ticket) {
  QvError e = {0};
  struct ArrowArrayStream s;
  if (qv_flight_do_get(c, ticket, strlen(ticket), &s, &e)) die("DoGet", &e);
  int64_t bytes = 0;
  struct ArrowArray a;
  QvStatus st;
  while ((st = qv_rb_stream_get_next(&s, &a, &e)) == QV_OK) {
    bytes += a.length * 8;
    a.release(&a);
  }
  if (st != QV_EOS) die("DoGet read", &e);
  s.release(&s);
  return bytes;
}

/* ---- plain TCP reference */

typedef struct Tcp {
  int fd;
  int64_t total;
} Tcp;

static void *tcp_writer(void *arg) {
  Tcp *t = arg;
  const char *p = (const char *)g_values;
  int64_t left = t->total;
  while (left > 0) {
    size_t n = left < (1 << 20) ? (size_t)left : (1 << 20);
    ssize_t w = write(t->fd, p + (t->total - left) % BATCH_BYTES, n);
    if (w <= 0) break;
    left -= w;
  }
  close(t->fd);
  return NULL;
}

static double tcp_seconds(int64_t total) {
  int ls = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  socklen_t al = sizeof a;
  if (bind(ls, (struct sockaddr *)&a, sizeof a) || listen(ls, 1) ||
      getsockname(ls, (struct sockaddr *)&a, &al))
    die("tcp listen", NULL);
  int c = socket(AF_INET, SOCK_STREAM, 0);
  if (connect(c, (struct sockaddr *)&a, sizeof a)) die("tcp connect", NULL);
  int s = accept(ls, NULL, NULL);
  close(ls);
  char *buf = qv_aligned_alloc(1 << 20);
  double t0 = now_s();
  Tcp t = {c, total};
  pthread_t th;
  pthread_create(&th, NULL, tcp_writer, &t);
  int64_t got = 0;
  for (;;) {
    ssize_t r = read(s, buf, 1 << 20);
    if (r <= 0) break;
    got += r;
  }
  pthread_join(th, NULL);
  double dt = now_s() - t0;
  close(s);
  qv_free(buf);
  if (got != total) die("tcp: short transfer", NULL);
  return dt;
}

/* ---- 32 concurrent DoGets against a server in a child */

typedef struct One {
  const char *uri;
  int64_t bytes;
} One;

static void *one_get(void *arg) {
  One *o = arg;
  QvFlightClient *c;
  QvError e = {0};
  if (qv_flight_client_new(&c, o->uri, NULL, &e)) die("connect", &e);
  o->bytes = drain(c, "1");
  qv_flight_client_free(c);
  return NULL;
}

static void concurrent(void) {
  int fds[2];
  if (pipe(fds)) die("pipe", NULL);
  pid_t pid = fork();
  if (pid == 0) {
    QvFlightServer *s;
    QvError e = {0};
    if (qv_flight_server_new(&s, "127.0.0.1", 0, &handlers, NULL, &e)) die("server", &e);
    int port = qv_flight_server_port(s);
    if (write(fds[1], &port, sizeof port) != sizeof port) _exit(1);
    qv_flight_server_run(s, NULL); /* until SIGTERM */
    _exit(0);
  }
  int port = 0;
  if (read(fds[0], &port, sizeof port) != sizeof port) die("child server", NULL);
  char uri[64];
  snprintf(uri, sizeof uri, "grpc://127.0.0.1:%d", port);
  pthread_t t[32];
  One o[32];
  double t0 = now_s();
  for (int i = 0; i < 32; i++) {
    o[i] = (One){uri, 0};
    pthread_create(&t[i], NULL, one_get, &o[i]);
  }
  int64_t total = 0;
  for (int i = 0; i < 32; i++) {
    pthread_join(t[i], NULL);
    total += o[i].bytes;
  }
  double dt = now_s() - t0;
  kill(pid, SIGKILL);
  int status;
  waitpid(pid, &status, 0);
  struct rusage ru; /* the largest child that ended: the server */
  getrusage(RUSAGE_CHILDREN, &ru);
  printf("32 concurrent DoGets of 64 MiB: %.1f MiB/s in all; server peak RSS %.1f MiB "
         "(its 64 MiB batch buffer included)\n",
         (double)total / (1 << 20) / dt, (double)ru.ru_maxrss / 1024.0);
}

/* The bench's stream as an Arrow stream file. */
static int write_file(const char *path, int64_t total_mib) {
  int64_t n = total_mib / 64 > 0 ? total_mib / 64 : 1;
  g_values = qv_aligned_alloc((size_t)BATCH_BYTES);
  for (int64_t i = 0; i < BATCH_BYTES / 8; i++) g_values[i] = i;
  struct ArrowArrayStream in;
  gen_stream(&in, n);
  QvSink *sink;
  QvError e = {0};
  QvRbWriteOptions wo = {.struct_size = sizeof wo, .format = QV_IPC_FORMAT_STREAM};
  if (qv_sink_new_path(&sink, path, QV_SINK_NO_FSYNC, &e)) die("sink", &e);
  if (qv_rb_write_all(&in, sink, &wo, &e) || qv_sink_finish(sink, &e)) die("write", &e);
  qv_sink_free(sink);
  in.release(&in);
  qv_free(g_values);
  return 0;
}

int main(int argc, char **argv) {
  if (argc == 4 && strcmp(argv[1], "--write") == 0) return write_file(argv[2], atoll(argv[3]));
  int64_t total_mib = argc > 1 ? atoll(argv[1]) : 1024;
  if (total_mib < 64) total_mib = 64;
  g_batches = total_mib / 64;
  int64_t total = g_batches * BATCH_BYTES;
  signal(SIGPIPE, SIG_IGN);
  g_values = qv_aligned_alloc((size_t)BATCH_BYTES);
  for (int64_t i = 0; i < BATCH_BYTES / 8; i++) g_values[i] = i;

  concurrent(); /* first: the child inherits the smallest parent */

  QvFlightServer *s;
  QvError e = {0};
  if (qv_flight_server_new(&s, "127.0.0.1", 0, &handlers, NULL, &e)) die("server", &e);
  pthread_t th;
  pthread_create(&th, NULL, run_server, s);
  char uri[64];
  snprintf(uri, sizeof uri, "grpc://127.0.0.1:%d", qv_flight_server_port(s));
  QvFlightClient *c;
  if (qv_flight_client_new(&c, uri, NULL, &e)) die("connect", &e);

  double tcp = tcp_seconds(total);
  double t0 = now_s();
  int64_t got = drain(c, "all");
  double get = now_s() - t0;
  if (got != total) die("DoGet: short", NULL);

  struct ArrowArrayStream in;
  gen_stream(&in, g_batches);
  char *seg[] = {"bench"};
  QvFlightDescriptor d = {.type = QV_FLIGHT_DESCRIPTOR_PATH, .path = seg, .n_path = 1};
  t0 = now_s();
  if (qv_flight_do_put(c, &d, &in, NULL, NULL, &e)) die("DoPut", &e);
  double put = now_s() - t0;
  in.release(&in);

  double mib = (double)total / (1 << 20);
  printf("plain TCP loopback, %.0f MiB: %.1f MiB/s (the reference)\n", mib, mib / tcp);
  printf("DoGet  %.0f MiB: %.1f MiB/s = %.2fx TCP (target >= 0.7x)\n", mib, mib / get, tcp / get);
  printf("DoPut  %.0f MiB: %.1f MiB/s = %.2fx TCP (target >= 0.7x)\n", mib, mib / put, tcp / put);
  qv_flight_client_free(c);
  qv_flight_server_stop(s);
  pthread_join(th, NULL);
  qv_flight_server_free(s);
  qv_free(g_values);
  return 0;
}
