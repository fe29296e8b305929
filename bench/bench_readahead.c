/* Read-ahead on fd sources (issue 26): does reading message k+1 while the
 * caller works on batch k pay on this machine, and which way? The 10-batch
 * benchmark stream (bench_rb_data.h, about 300 MB) is read through
 * qv_source_new_fd from a regular file, from a pipe and from a socket pair
 * fed by a writer process, and each batch goes to a consumer that does a
 * fixed amount of work (sums the float64 column `passes` times). Every
 * figure is related to the reference "memcpy of the stream + the same
 * consumer work" measured in the same run. The ways compared:
 *   - nothing: the fd source as it is (on a pipe it raises the pipe to
 *     /proc/sys/fs/pipe-max-size, 1 MiB by default);
 *   - pipe, 64 KiB: the pipe as pipe(2) makes it, read by a callback source
 *     whose read is read(2) on the descriptor (the fd source before it
 *     enlarged pipes; the same reads, no extra copy);
 *   - posix_fadvise(SEQUENTIAL + WILLNEED) on the regular file;
 *   - SO_RCVBUF 4 MiB on the socket's read end (capped by
 *     net.core.rmem_max for a process without CAP_NET_ADMIN);
 *   - a reader thread: a bench-side thread reads the descriptor into a
 *     bounded ring (at most `ring` bytes ahead) and a callback source hands
 *     the bytes to the reader. This costs one extra copy (ring -> the
 *     reader's buffer) that a thread inside the source would not pay, so it
 *     is an upper bound on what such a thread costs. The time of that copy,
 *     measured on the caller's thread, is also taken out to estimate such a
 *     thread (an estimate: it also drops the copy's cache effects). The
 *     column "bound" gives the best any read-ahead could do: max(read,
 *     work). On a pipe
 *     the thread reads the pipe enlarged as the fd source does.
 *
 *   bench_readahead [passes] [dir]   (QV_BENCH_COLD=1: also the file
 *   evicted from the page cache before each read)
 *
 * Each figure is the best of REPEAT runs; "switches" (this process and the
 * writer), "CPU ms" (this process: the reader, its threads and the
 * consumer's work) and "writer" (the writer process's CPU), the fewest of
 * the runs with work, count what the machine's load changes less than wall
 * time. */
#define _GNU_SOURCE /* F_SETPIPE_SZ */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
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

#include "bench_rb_data.h"
#include "quiver/recordbatch_ipc.h"

#define REPEAT 5
#define ROWS 10000000
#define PER_BATCH 1000000

static QvError error;

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double best(double a, double b) { return a < b ? a : b; }

#define TRY(what, call) bench_rb_check((call), &error, what)

static int passes = 1;
static volatile double sink_sum;

/* The caller's work on one batch: sums the float64 column `passes` times. */
static double consume(const struct ArrowArray *a) {
  const struct ArrowArray *c = a->children[1];
  const double *v = (const double *)c->buffers[1] + c->offset;
  double s = 0;
  for (int p = 0; p < passes; p++)
    for (int64_t i = 0; i < c->length; i++) s += v[i];
  return s;
}

/* Reads every batch from `src` (dropped here), consuming each when `work`. */
static double drain(QvSource *src, bool work, int64_t *rows) {
  QvRbReadOptions o;
  memset(&o, 0, sizeof o);
  o.validate = QV_VALIDATE_CHEAP;
  struct ArrowArrayStream s;
  TRY("open", qv_rb_stream_reader_new(&s, src, &o, &error));
  qv_source_free(src);
  double sum = 0;
  *rows = 0;
  for (;;) {
    struct ArrowArray a;
    QvStatus st = qv_rb_stream_get_next(&s, &a, &error);
    if (st == QV_EOS) break;
    TRY("next", st);
    *rows += a.length;
    if (work) sum += consume(&a);
    a.release(&a);
  }
  s.release(&s);
  sink_sum = sum;
  return sum;
}

/* A writer process that writes the stream into a pipe (or a socket pair);
 * returns the read end. */
static int pipe_from_writer(const uint8_t *data, size_t size, bool socket, pid_t *pid) {
  int p[2];
  if (socket ? socketpair(AF_UNIX, SOCK_STREAM, 0, p) != 0 : pipe(p) != 0) exit(1);
  *pid = fork();
  if (*pid < 0) exit(1);
  if (*pid == 0) {
    close(p[0]);
    size_t off = 0;
    while (off < size) {
      size_t n = size - off < (1u << 20) ? size - off : (1u << 20);
      ssize_t w = write(p[1], data + off, n);
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) _exit(1);
      off += (size_t)w;
    }
    _exit(0);
  }
  close(p[1]);
  return p[0];
}

static void reap(pid_t pid) {
  int status;
  if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    fprintf(stderr, "bench_readahead: the writer process failed\n");
    exit(1);
  }
}

/* The reader thread's ring: one producer (the thread, read(2) on fd), one
 * consumer (the callback source's read, on the caller's thread). */
typedef struct Ring {
  int fd;
  uint8_t *buf;
  size_t cap, head, tail; /* head: next byte to hand out; tail: next to fill (both grow) */
  bool eof;
  int err;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  pthread_t thread;
} Ring;

static size_t ring_chunk = 1u << 20;

static void *ring_main(void *arg) {
  Ring *r = arg;
  for (;;) {
    pthread_mutex_lock(&r->mu);
    while (r->tail - r->head == r->cap) pthread_cond_wait(&r->cv, &r->mu);
    size_t pos = r->tail % r->cap, room = r->cap - (r->tail - r->head);
    pthread_mutex_unlock(&r->mu);
    size_t n = room < r->cap - pos ? room : r->cap - pos;
    if (n > ring_chunk) n = ring_chunk;
    ssize_t got = read(r->fd, r->buf + pos, n);
    if (got < 0 && errno == EINTR) continue;
    pthread_mutex_lock(&r->mu);
    if (got <= 0) {
      r->eof = true;
      r->err = got < 0 ? errno : 0;
    } else {
      r->tail += (size_t)got;
    }
    pthread_cond_broadcast(&r->cv);
    bool done = r->eof;
    pthread_mutex_unlock(&r->mu);
    if (done) return NULL;
  }
}

/* Time the caller's thread spent in the ring's copy during the last run:
 * taken out, it estimates a thread that reads into the reader's buffer. */
static double ring_copy_time;

static QvStatus ring_read(void *ctx, void *buf, size_t n, size_t *got, QvError *e) {
  Ring *r = ctx;
  pthread_mutex_lock(&r->mu);
  while (r->tail == r->head && !r->eof) pthread_cond_wait(&r->cv, &r->mu);
  size_t have = r->tail - r->head, pos = r->head % r->cap;
  int err = r->err;
  pthread_mutex_unlock(&r->mu);
  if (have == 0 && err != 0) {
    e->code = QV_EIO;
    snprintf(e->message, sizeof e->message, "read: %s", strerror(err));
    return QV_EIO;
  }
  size_t k = n < have ? n : have;
  if (k > r->cap - pos) k = r->cap - pos;
  double t0 = now();
  memcpy(buf, r->buf + pos, k);
  ring_copy_time += now() - t0;
  pthread_mutex_lock(&r->mu);
  r->head += k;
  pthread_cond_broadcast(&r->cv);
  pthread_mutex_unlock(&r->mu);
  *got = k;
  return QV_OK;
}

static Ring *ring_start(int fd, size_t cap) {
  Ring *r = calloc(1, sizeof *r);
  r->fd = fd;
  r->cap = cap;
  r->buf = malloc(cap);
  if (r->buf == NULL) exit(1);
  memset(r->buf, 0, cap);
  pthread_mutex_init(&r->mu, NULL);
  pthread_cond_init(&r->cv, NULL);
  if (pthread_create(&r->thread, NULL, ring_main, r) != 0) exit(1);
  return r;
}

/* The reader read to the end, so the thread has seen EOF and returns. */
static void ring_stop(Ring *r) {
  pthread_join(r->thread, NULL);
  pthread_mutex_destroy(&r->mu);
  pthread_cond_destroy(&r->cv);
  free(r->buf);
  free(r);
}

/* The callback source of WAY_PIPE_64K: read(2), as the fd source does. */
static QvStatus fd_read(void *ctx, void *buf, size_t n, size_t *got, QvError *e) {
  int fd = *(int *)ctx;
  for (;;) {
    ssize_t k = read(fd, buf, n);
    if (k < 0 && errno == EINTR) continue;
    if (k < 0) {
      e->code = QV_EIO;
      snprintf(e->message, sizeof e->message, "read: %s", strerror(errno));
      return QV_EIO;
    }
    *got = (size_t)k;
    return QV_OK;
  }
}

enum Way { WAY_NONE, WAY_FADVISE, WAY_THREAD, WAY_PIPE_64K, WAY_RCVBUF };
static const char *way_names[] = {"nothing", "posix_fadvise SEQUENTIAL+WILLNEED", "reader thread (ring)",
                                  "64 KiB pipe (callback read(2))", "SO_RCVBUF 4 MiB"};
enum Via { VIA_FILE, VIA_PIPE, VIA_SOCKET };
static const char *via_names[] = {"file fd", "pipe", "socketpair"};
static size_t ring_cap;

/* Context switches and CPU seconds of this process and its reaped children
 * (the writer): counts the load of the shared machine changes less than
 * wall time. */
typedef struct Usage {
  double switches, cpu[2]; /* cpu: this process (the reader), the writer */
} Usage;

static Usage usage_now(void) {
  Usage u = {0, {0, 0}};
  int who[2] = {RUSAGE_SELF, RUSAGE_CHILDREN};
  for (int i = 0; i < 2; i++) {
    struct rusage ru;
    getrusage(who[i], &ru);
    u.switches += (double)(ru.ru_nvcsw + ru.ru_nivcsw);
    u.cpu[i] = (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
               (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6;
  }
  return u;
}

static Usage last_usage; /* of the last run */

/* One read of the stream from `path` (or from a pipe or socket pair fed with
 * data/size) the given way; the time from open to the last batch. */
static double run(enum Via via, const char *path, const uint8_t *data, size_t size, enum Way way,
                  bool work, bool cold) {
  pid_t pid = 0;
  int fd = -1;
  Usage u0 = usage_now();
  if (via == VIA_FILE) {
    fd = open(path, O_RDONLY);
    if (fd < 0) exit(1);
    if (cold) posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
  }
  double t0 = now();
  if (via != VIA_FILE) fd = pipe_from_writer(data, size, via == VIA_SOCKET, &pid);
  /* the ring's thread reads the pipe as large as the fd source makes it */
  if (way == WAY_THREAD && via == VIA_PIPE && fcntl(fd, F_SETPIPE_SZ, 1 << 20) < 0)
    perror("F_SETPIPE_SZ");
  if (way == WAY_RCVBUF) {
    int v = 4 << 20;
    if (setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &v, sizeof v) != 0) perror("SO_RCVBUF");
  }
  if (way == WAY_FADVISE) {
    posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
    posix_fadvise(fd, 0, 0, POSIX_FADV_WILLNEED);
  }
  QvSource *src;
  Ring *r = NULL;
  ring_copy_time = 0;
  if (way == WAY_THREAD) {
    r = ring_start(fd, ring_cap);
    TRY("callback source", qv_source_new_callback(&src, ring_read, NULL, NULL, r, "<ring>", &error));
  } else if (way == WAY_PIPE_64K) {
    TRY("callback source", qv_source_new_callback(&src, fd_read, NULL, NULL, &fd, "<pipe>", &error));
  } else {
    TRY("fd source", qv_source_new_fd(&src, fd, &error));
  }
  int64_t rows;
  drain(src, work, &rows);
  if (r) ring_stop(r);
  double t = now() - t0;
  close(fd);
  if (pid) reap(pid);
  Usage u1 = usage_now();
  last_usage = (Usage){u1.switches - u0.switches, {u1.cpu[0] - u0.cpu[0], u1.cpu[1] - u0.cpu[1]}};
  if (rows != ROWS) {
    fprintf(stderr, "bench_readahead: %" PRId64 " rows, expected %d\n", rows, ROWS);
    exit(1);
  }
  return t;
}

int main(int argc, char **argv) {
  passes = argc > 1 ? atoi(argv[1]) : 1;
  const char *dir = argc > 2 ? argv[2] : "/tmp";
  if (passes <= 0) {
    fprintf(stderr, "usage: bench_readahead [passes] [dir]\n");
    return 2;
  }
  signal(SIGPIPE, SIG_IGN);
  struct ArrowSchema schema;
  bench_rb_schema(&schema);
  int64_t nb = ROWS / PER_BATCH;
  struct ArrowArray *batches = calloc((size_t)nb, sizeof *batches);
  for (int64_t i = 0; i < nb; i++) bench_rb_batch(&schema, i * PER_BATCH, PER_BATCH, &batches[i]);
  QvSink *sink;
  TRY("memory sink", qv_sink_new_memory(&sink, &error));
  QvRbWriteOptions wo;
  memset(&wo, 0, sizeof wo);
  wo.format = QV_IPC_FORMAT_STREAM;
  QvRbWriter *w;
  TRY("writer", qv_rb_writer_new(&w, &schema, sink, &wo, &error));
  for (int64_t i = 0; i < nb; i++) TRY("write", qv_rb_writer_write(w, &batches[i], &error));
  TRY("finish", qv_rb_writer_finish(w, &error));
  qv_rb_writer_free(w);
  size_t size = (size_t)qv_sink_bytes_written(sink);
  uint8_t *data = malloc(size), *dst = malloc(size);
  if (data == NULL || dst == NULL) return 1;
  memset(dst, 1, size);
  /* the bytes back: a path sink to a file, then read it into memory */
  char path[512];
  snprintf(path, sizeof path, "%s/qv_bench_readahead_%d.arrows", dir, (int)getpid());
  qv_sink_free(sink);
  TRY("path sink", qv_sink_new_path(&sink, path, QV_SINK_NO_FSYNC, &error));
  TRY("writer", qv_rb_writer_new(&w, &schema, sink, &wo, &error));
  for (int64_t i = 0; i < nb; i++) TRY("write", qv_rb_writer_write(w, &batches[i], &error));
  TRY("finish", qv_rb_writer_finish(w, &error));
  qv_rb_writer_free(w);
  TRY("file finish", qv_sink_finish(sink, &error));
  qv_sink_free(sink);
  int fd = open(path, O_RDONLY);
  size_t off = 0;
  while (fd >= 0 && off < size) {
    ssize_t g = read(fd, data + off, size - off);
    if (g <= 0) break;
    off += (size_t)g;
  }
  if (fd < 0 || off != size) return 1;
  close(fd);
  /* at most one message ahead: the largest message is about size / nb */
  ring_cap = size / (size_t)nb + (1u << 20);

  double t_memcpy = 1e9, t_work = 1e9;
  for (int r = 0; r < REPEAT; r++) {
    double t0 = now();
    memcpy(dst, data, size);
    t_memcpy = best(t_memcpy, now() - t0);
    t0 = now();
    double s = 0;
    for (int64_t i = 0; i < nb; i++) s += consume(&batches[i]);
    sink_sum = s;
    t_work = best(t_work, now() - t0);
  }
  double ref = t_memcpy + t_work;
  printf("stream %.1f MB in %" PRId64 " batches; consumer: %d pass(es) over the float64 column; "
         "ring %.1f MB\n", (double)size / 1e6, nb, passes, (double)ring_cap / 1e6);
  printf("%-58s %8.2f ms\n", "memcpy of the stream", t_memcpy * 1e3);
  printf("%-58s %8.2f ms\n", "consumer work alone", t_work * 1e3);
  printf("%-58s %8.2f ms  (the reference)\n", "memcpy + consumer work", ref * 1e3);

  static const struct {
    enum Via via;
    enum Way way;
    int base; /* the case whose "read only" bounds a thread's overlap */
  } cases[] = {{VIA_FILE, WAY_NONE, 0},    {VIA_FILE, WAY_FADVISE, 1},   {VIA_FILE, WAY_THREAD, 0},
               {VIA_PIPE, WAY_PIPE_64K, 3}, {VIA_PIPE, WAY_NONE, 4},     {VIA_PIPE, WAY_THREAD, 4},
               {VIA_SOCKET, WAY_NONE, 6},   {VIA_SOCKET, WAY_RCVBUF, 7}, {VIA_SOCKET, WAY_THREAD, 6}};
  enum { NC = sizeof cases / sizeof cases[0] };
  double tw[NC], tr[NC], tx[NC], sw[NC], cpu[NC], wcpu[NC];
  for (int c = 0; c < NC; c++) tw[c] = tr[c] = tx[c] = sw[c] = cpu[c] = wcpu[c] = 1e9;
  /* round-robin, so a burst of load on the shared machine hits every way */
  for (int r = 0; r < REPEAT; r++)
    for (int c = 0; c < NC; c++) {
      tr[c] = best(tr[c], run(cases[c].via, path, data, size, cases[c].way, false, false));
      double t = run(cases[c].via, path, data, size, cases[c].way, true, false);
      tw[c] = best(tw[c], t);
      tx[c] = best(tx[c], t - ring_copy_time);
      sw[c] = best(sw[c], last_usage.switches);
      cpu[c] = best(cpu[c], last_usage.cpu[0]);
      wcpu[c] = best(wcpu[c], last_usage.cpu[1]);
    }
  printf("%-48s %10s %10s %9s %9s %9s %8s %8s\n", "source, way", "read only", "+ work", "x ref", "bound",
         "switches", "CPU ms", "writer");
  for (int c = 0; c < NC; c++) {
    /* the best any overlap could do: the slower of reading and working */
    double bound = tr[cases[c].base] > t_work ? tr[cases[c].base] : t_work;
    char name[96];
    snprintf(name, sizeof name, "%s, %s", via_names[cases[c].via], way_names[cases[c].way]);
    printf("%-48s %7.2f ms %7.2f ms %8.3fx %8.3fx %9.0f %8.1f %8.1f\n", name, tr[c] * 1e3, tw[c] * 1e3,
           tw[c] / ref, bound / ref, sw[c], cpu[c] * 1e3, wcpu[c] * 1e3);
    if (cases[c].way == WAY_THREAD)
      printf("%-48s %10s %7.2f ms %8.3fx\n", "  the same, the ring's extra copy taken out", "", tx[c] * 1e3,
             tx[c] / ref);
  }
  printf("gain with work (a / b): pipe enlarged (64 KiB / nothing) %.3fx; read-ahead thread: file "
         "%.3fx, pipe %.3fx, socket %.3fx (its copy taken out: %.3fx, %.3fx, %.3fx); file fadvise "
         "%.3fx; socket SO_RCVBUF %.3fx\n",
         tw[3] / tw[4], tw[0] / tw[2], tw[4] / tw[5], tw[6] / tw[8], tw[0] / tx[2], tw[4] / tx[5],
         tw[6] / tx[8], tw[0] / tw[1], tw[6] / tw[7]);
  if (getenv("QV_BENCH_COLD") != NULL) {
    double tc[3] = {1e9, 1e9, 1e9};
    for (int r = 0; r < 3; r++)
      for (int c = 0; c < 3; c++) tc[c] = best(tc[c], run(VIA_FILE, path, data, size, cases[c].way, true, true));
    printf("file evicted from the page cache before each read, + work (best of 3):\n");
    for (int c = 0; c < 3; c++)
      printf("  %-38s %7.2f ms %8.3fx ref\n", way_names[c], tc[c] * 1e3, tc[c] / ref);
  }
  unlink(path);
  free(data);
  free(dst);
  for (int64_t i = 0; i < nb; i++) batches[i].release(&batches[i]);
  free(batches);
  schema.release(&schema);
  return 0;
}
