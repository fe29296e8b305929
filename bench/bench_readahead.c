/* Read-ahead on fd sources (issue 26): does reading message k+1 while the
 * caller works on batch k pay on this machine, and which way? The 10-batch
 * benchmark stream (bench_rb_data.h, about 300 MB) is read through
 * qv_source_new_fd from a regular file and from a pipe fed by a writer
 * process, and each batch goes to a consumer that does a fixed amount of
 * work (sums the float64 column `passes` times). Every figure is related
 * to the reference "memcpy of the stream + the same consumer work" measured
 * in the same run. The ways compared:
 *   - nothing (the reader as it is; a pipe already buffers 64 KiB);
 *   - posix_fadvise(SEQUENTIAL + WILLNEED) on the regular file;
 *   - a reader thread: a bench-side thread reads the descriptor into a
 *     bounded ring (at most `ring` bytes ahead) and a callback source hands
 *     the bytes to the reader. This costs one extra copy (ring -> the
 *     reader's buffer) that a thread inside the source would not pay, so it
 *     is an upper bound on what such a thread costs; the column "bound"
 *     gives the best any read-ahead could do: max(read, work);
 *   - for the pipe, also a 1 MiB pipe buffer (F_SETPIPE_SZ on the read end).
 *
 *   bench_readahead [passes] [dir]   (QV_BENCH_COLD=1: also the file
 *   evicted from the page cache before each read)
 *
 * Each figure is the best of REPEAT runs. */
#define _GNU_SOURCE /* F_SETPIPE_SZ */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

/* A writer process that writes the stream into a pipe; returns the read end. */
static int pipe_from_writer(const uint8_t *data, size_t size, pid_t *pid) {
  int p[2];
  if (pipe(p) != 0) exit(1);
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
  memcpy(buf, r->buf + pos, k);
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

enum Way { WAY_NONE, WAY_FADVISE, WAY_THREAD, WAY_PIPE_SIZE };
static const char *way_names[] = {"nothing", "posix_fadvise SEQUENTIAL+WILLNEED", "reader thread (ring)",
                                  "F_SETPIPE_SZ 1 MiB"};
static size_t ring_cap;

/* One read of the stream from `path` (or from a pipe fed with data/size when
 * path is NULL) the given way; the time from open to the last batch. */
static double run(const char *path, const uint8_t *data, size_t size, enum Way way, bool work,
                  bool cold) {
  pid_t pid = 0;
  int fd;
  if (path) {
    fd = open(path, O_RDONLY);
    if (fd < 0) exit(1);
    if (cold) posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
  }
  double t0 = now();
  if (path == NULL) fd = pipe_from_writer(data, size, &pid);
  /* a larger pipe buffer (the reader's end; unprivileged up to
   * /proc/sys/fs/pipe-max-size): fewer switches between writer and reader */
  if (way == WAY_PIPE_SIZE && fcntl(fd, F_SETPIPE_SZ, 1 << 20) < 0) perror("F_SETPIPE_SZ");
  if (way == WAY_FADVISE && path) {
    posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
    posix_fadvise(fd, 0, 0, POSIX_FADV_WILLNEED);
  }
  QvSource *src;
  Ring *r = NULL;
  if (way == WAY_THREAD) {
    r = ring_start(fd, ring_cap);
    TRY("callback source", qv_source_new_callback(&src, ring_read, NULL, NULL, r, "<ring>", &error));
  } else {
    TRY("fd source", qv_source_new_fd(&src, fd, &error));
  }
  int64_t rows;
  drain(src, work, &rows);
  if (r) ring_stop(r);
  double t = now() - t0;
  close(fd);
  if (pid) reap(pid);
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
    bool pipe;
    enum Way way;
  } cases[] = {{false, WAY_NONE}, {false, WAY_FADVISE}, {false, WAY_THREAD},
               {true, WAY_NONE},  {true, WAY_THREAD}, {true, WAY_PIPE_SIZE}};
  enum { NC = sizeof cases / sizeof cases[0] };
  double tw[NC], tr[NC];
  for (int c = 0; c < NC; c++) tw[c] = tr[c] = 1e9;
  /* round-robin, so a burst of load on the shared machine hits every way */
  for (int r = 0; r < REPEAT; r++)
    for (int c = 0; c < NC; c++) {
      const char *p = cases[c].pipe ? NULL : path;
      tr[c] = best(tr[c], run(p, data, size, cases[c].way, false, false));
      tw[c] = best(tw[c], run(p, data, size, cases[c].way, true, false));
    }
  printf("%-40s %10s %10s %9s %9s\n", "source, read-ahead", "read only", "+ work", "x ref", "bound");
  for (int c = 0; c < NC; c++) {
    /* the best any overlap could do: the slower of reading and working */
    double bound = cases[c].way == WAY_FADVISE || cases[c].way == WAY_PIPE_SIZE ? tr[c] : tr[cases[c].pipe ? 3 : 0];
    bound = bound > t_work ? bound : t_work;
    char name[80];
    snprintf(name, sizeof name, "%s, %s", cases[c].pipe ? "pipe" : "file fd", way_names[cases[c].way]);
    printf("%-40s %7.2f ms %7.2f ms %8.3fx %8.3fx\n", name, tr[c] * 1e3, tw[c] * 1e3, tw[c] / ref,
           bound / ref);
  }
  printf("read-ahead gain with work (nothing / way): file fadvise %.3fx, file thread %.3fx, "
         "pipe thread %.3fx, pipe F_SETPIPE_SZ %.3fx\n", tw[0] / tw[1], tw[0] / tw[2], tw[3] / tw[4],
         tw[3] / tw[5]);
  if (getenv("QV_BENCH_COLD") != NULL) {
    double tc[3] = {1e9, 1e9, 1e9};
    for (int r = 0; r < 3; r++)
      for (int c = 0; c < 3; c++) tc[c] = best(tc[c], run(path, data, size, cases[c].way, true, true));
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
