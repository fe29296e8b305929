/* Tensor IPC throughput, each number compared with a baseline measured in
 * the same run:
 *   1. writing a 256 MiB float64 tensor into a caller-provided, pre-faulted
 *      buffer vs memcpy of the same bytes (target: >= 0.9x memcpy speed);
 *   2. writing it to a file through a path sink (a temporary file renamed
 *      over the target; QV_SINK_NO_FSYNC, so neither side waits for the
 *      disk) vs the same syscalls by hand on a plain buffer of the same size:
 *      open(O_EXCL) a temporary, write(2), close, rename (page-cache speed,
 *      like dd);
 *   3. zero-copy reads: qv_source_new_path + qv_tensor_read + reset + free
 *      (open, pread the metadata, mmap the body, decode, view, release) of a
 *      1 MiB and a 1 GiB file: the time must not grow with the size (target:
 *      < 20 us each).
 *
 * Build and run (from the repository root, after building the library):
 *   cc -O2 -std=c11 -D_POSIX_C_SOURCE=200809L -I include bench/bench_tensor_io.c \
 *      build/libquiver.a -llz4 -lzstd -lm -o /tmp/bench_tensor_io
 *   /tmp/bench_tensor_io [DIR]     (scratch files go to DIR, default /tmp)
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "quiver/io.h"
#include "quiver/tensor_ipc.h"

#define MIB ((size_t)1 << 20)

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void die(const char *what, const QvError *err) {
  fprintf(stderr, "bench_tensor_io: %s: %s\n", what, err ? err->message : "failed");
  exit(1);
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static void make_tensor(QvTensor *t, size_t bytes) {
  int64_t shape[2] = {(int64_t)(bytes / 8 / 1024), 1024};
  QvError err;
  void *data;
  if (qv_tensor_alloc(t, QV_ARROW_FLOAT64, 2, shape, NULL, false, &data, &err)) die("alloc", &err);
  double *d = data;
  for (int64_t i = 0; i < shape[0] * shape[1]; i++) d[i] = (double)i * 0.5;
}

/* What a path sink does, by hand: a temporary file next to the target,
 * written in one write(2), renamed over the target. */
static double write_file_plain(const char *path, const void *buf, size_t n) {
  char tmp[1100];
  snprintf(tmp, sizeof tmp, "%s.plain-tmp", path);
  double t0 = now();
  int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL, 0644);
  if (fd < 0) die(tmp, NULL);
  const char *p = buf;
  size_t left = n;
  while (left > 0) {
    ssize_t k = write(fd, p, left);
    if (k <= 0) die("write", NULL);
    p += k;
    left -= (size_t)k;
  }
  close(fd);
  if (rename(tmp, path) != 0) die("rename", NULL);
  return now() - t0;
}

static void write_path(const QvTensor *t, const char *path) {
  QvSink *sink;
  QvError err;
  if (qv_sink_new_path(&sink, path, QV_SINK_NO_FSYNC, &err)) die(path, &err);
  if (qv_tensor_write(t, sink, NULL, &err) || qv_sink_finish(sink, &err)) die("write_path", &err);
  qv_sink_free(sink);
}

/* Median and minimum time of a zero-copy read from a path + release, in us. */
static void time_reads(const char *path, int runs, double *median_us, double *min_us) {
  double *t = malloc((size_t)runs * sizeof *t);
  if (t == NULL) die("malloc", NULL);
  for (int i = 0; i < runs; i++) {
    QvTensor v;
    QvError err;
    double t0 = now();
    QvSource *src;
    if (qv_source_new_path(&src, path, &err)) die(path, &err);
    if (qv_tensor_read(src, 0, NULL, &v, &err)) die(path, &err);
    qv_source_free(src);
    qv_tensor_reset(&v);
    t[i] = (now() - t0) * 1e6;
  }
  qsort(t, (size_t)runs, sizeof *t, cmp_double);
  *median_us = t[runs / 2];
  *min_us = t[0];
  free(t);
}

int main(int argc, char **argv) {
  const char *dir = argc > 1 ? argv[1] : "/tmp";
  char path[1024], plain[1024], small[1024], large[1024];
  snprintf(path, sizeof path, "%s/bench_tensor_%d.arrow", dir, (int)getpid());
  snprintf(plain, sizeof plain, "%s/bench_plain_%d.bin", dir, (int)getpid());
  snprintf(small, sizeof small, "%s/bench_1mib_%d.arrow", dir, (int)getpid());
  snprintf(large, sizeof large, "%s/bench_1gib_%d.arrow", dir, (int)getpid());
  QvError err;
  const int rounds = 7;

  /* 1. into a caller buffer vs memcpy */
  QvTensor t;
  make_tensor(&t, 256 * MIB);
  size_t msg_size;
  if (qv_tensor_write_size(&t, NULL, &msg_size, &err)) die("message_size", &err);
  uint8_t *dst = qv_aligned_alloc(msg_size);
  if (dst == NULL) die("alloc", NULL);
  memset(dst, 1, msg_size); /* pre-fault */
  size_t body_at = msg_size - 256 * MIB; /* the body fills the rest exactly */
  double best_copy = 1e9, best_write = 1e9, best_copy_at = 1e9;
  for (int r = 0; r < rounds; r++) {
    double tb = now();
    memcpy(dst + body_at, t.data, 256 * MIB);
    double t0 = now();
    memcpy(dst, t.data, 256 * MIB);
    double t1 = now();
    QvSink *sink;
    if (qv_sink_new_buffer(&sink, dst, msg_size, &err)) die("buffer sink", &err);
    if (qv_tensor_write(&t, sink, NULL, &err)) die("write to a buffer", &err);
    qv_sink_free(sink);
    double t2 = now();
    if (t0 - tb < best_copy_at) best_copy_at = t0 - tb;
    if (t1 - t0 < best_copy) best_copy = t1 - t0;
    if (t2 - t1 < best_write) best_write = t2 - t1;
  }
  printf("write 256 MiB float64 tensor to a buffer: %.2f ms (%.2f GB/s); memcpy %.2f ms "
         "(%.2f GB/s); speed ratio %.3fx memcpy (best of %d)\n",
         best_write * 1e3, 256 * MIB / best_write / 1e9, best_copy * 1e3,
         256 * MIB / best_copy / 1e9, best_copy / best_write, rounds);
  printf("  (for reference: glibc memcpy to the body's place, offset %zu in the buffer: %.2f ms, "
         "%.3fx)\n",
         body_at, best_copy_at * 1e3, best_copy / best_copy_at);

  /* 2. to a file vs plain write(2) */
  double best_file = 1e9, best_plain = 1e9;
  for (int r = 0; r < rounds; r++) {
    double tp = write_file_plain(plain, dst, msg_size);
    double t0 = now();
    write_path(&t, path);
    double tf = now() - t0;
    if (tp < best_plain) best_plain = tp;
    if (tf < best_file) best_file = tf;
  }
  printf("write 256 MiB float64 tensor to a file (path sink, no fsync): %.2f ms (%.2f GB/s); "
         "the same syscalls on a plain buffer of the same %zu bytes %.2f ms (%.2f GB/s); speed "
         "ratio %.3fx (best of %d)\n",
         best_file * 1e3, (double)msg_size / best_file / 1e9, msg_size, best_plain * 1e3,
         (double)msg_size / best_plain / 1e9, best_plain / best_file, rounds);
  unlink(plain);
  unlink(path);
  qv_free(dst);
  qv_tensor_reset(&t);

  /* 3. zero-copy reads of a small and a large file */
  make_tensor(&t, MIB);
  write_path(&t, small);
  qv_tensor_reset(&t);
  make_tensor(&t, 1024 * MIB);
  write_path(&t, large);
  qv_tensor_reset(&t);
  double med_s, min_s, med_l, min_l;
  time_reads(small, 2000, &med_s, &min_s); /* warms the path lookups too */
  time_reads(large, 2000, &med_l, &min_l);
  time_reads(small, 2000, &med_s, &min_s);
  printf("zero-copy qv_tensor_read from a path + release, 1 MiB file: median %.2f us, min %.2f us\n",
         med_s, min_s);
  printf("zero-copy qv_tensor_read from a path + release, 1 GiB file: median %.2f us, min %.2f us "
         "(ratio 1 GiB / 1 MiB: %.2f)\n",
         med_l, min_l, med_l / med_s);
  unlink(small);
  unlink(large);
  return 0;
}
