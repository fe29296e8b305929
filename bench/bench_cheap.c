/* Cheap checks (QV_VALIDATE_CHEAP, O(buffers)) of a record batch stream
 * held in memory: the whole read (source, reader, every batch, release)
 * of bench_recordbatch's 10-batch stream, repeated, median per read.
 * Written with the public API only, so bench/bench_cheap_baseline.sh
 * compiles this same file against an older libquiver.a and runs both on
 * one stream, alternately (issue 26's "0.6x of today's main, side by
 * side").
 *
 *   bench_cheap                          generate the stream, print the median
 *   bench_cheap --write PATH [rows] [rows_per_batch]   write the stream to PATH
 *   bench_cheap --read PATH [runs]       read PATH into memory; print one line:
 *                                        the median microseconds of one read
 *                                        (CPU time, below) */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_rb_data.h"
#include "quiver/recordbatch_ipc.h"

/* CPU time of this thread: on this project's shared 2-core machine the
 * wall time of a 10 ms run includes whatever else was scheduled; the CPU
 * time is the reader's own work (the same figure on a quiet machine). */
static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static QvError error;

#define TRY(what, call)                                                                       \
  do {                                                                                        \
    QvStatus st_ = (call);                                                                    \
    if (st_) {                                                                                \
      fprintf(stderr, "bench_cheap: %s: %s (%s)\n", what, error.message, qv_status_name(st_)); \
      exit(1);                                                                                \
    }                                                                                         \
  } while (0)

/* Writes the benchmark's batches as one stream to sink. */
static void write_stream(struct ArrowSchema *schema, QvSink *sink, int64_t rows, int64_t per_batch) {
  QvRbWriter *w;
  TRY("writer", qv_rb_writer_new(&w, schema, sink, NULL, &error));
  for (int64_t first = 0; first < rows; first += per_batch) {
    struct ArrowArray b;
    bench_rb_batch(schema, first, rows - first < per_batch ? rows - first : per_batch, &b);
    TRY("write", qv_rb_writer_write(w, &b, &error));
    b.release(&b);
  }
  TRY("finish", qv_rb_writer_finish(w, &error));
  qv_rb_writer_free(w);
}

/* The benchmark stream, serialized into 64-byte-aligned memory: written
 * once to learn its size, then again into a buffer of that size. */
static uint8_t *make_stream(int64_t rows, int64_t per_batch, size_t *size) {
  struct ArrowSchema schema;
  bench_rb_schema(&schema);
  QvSink *sink;
  TRY("memory sink", qv_sink_new_memory(&sink, &error));
  write_stream(&schema, sink, rows, per_batch);
  *size = (size_t)qv_sink_bytes_written(sink);
  qv_sink_free(sink);
  /* the same bytes again into a buffer of the right size */
  uint8_t *data = aligned_alloc(64, (*size + 63) & ~(size_t)63);
  if (data == NULL) exit(1);
  TRY("buffer sink", qv_sink_new_buffer(&sink, data, *size, &error));
  write_stream(&schema, sink, rows, per_batch);
  qv_sink_free(sink);
  schema.release(&schema);
  return data;
}

static uint8_t *load(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  if (f == NULL || fseek(f, 0, SEEK_END) != 0) {
    fprintf(stderr, "bench_cheap: cannot open %s\n", path);
    exit(1);
  }
  long n = ftell(f);
  if (n <= 0 || fseek(f, 0, SEEK_SET) != 0) exit(1);
  *size = (size_t)n;
  uint8_t *data = aligned_alloc(64, (*size + 63) & ~(size_t)63);
  if (data == NULL || fread(data, 1, *size, f) != *size) {
    fprintf(stderr, "bench_cheap: cannot read %s\n", path);
    exit(1);
  }
  fclose(f);
  return data;
}

/* One whole cheap read; returns the rows seen. */
static int64_t read_once(const uint8_t *data, size_t size) {
  QvRbReadOptions o;
  memset(&o, 0, sizeof o);
  o.validate = QV_VALIDATE_CHEAP;
  QvSource *src;
  TRY("memory source", qv_source_new_memory(&src, data, size, NULL, &error));
  struct ArrowArrayStream s;
  TRY("open", qv_rb_stream_reader_new(&s, src, &o, &error));
  qv_source_free(src);
  int64_t rows = 0;
  for (;;) {
    struct ArrowArray a;
    QvStatus st = qv_rb_stream_get_next(&s, &a, &error);
    if (st == QV_EOS) break;
    TRY("next", st);
    rows += a.length;
    a.release(&a);
  }
  s.release(&s);
  return rows;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Median over `runs` of the mean time of one read in a run of `inner`. */
static double median_us(const uint8_t *data, size_t size, int runs, int inner, int64_t *rows) {
  double *t = malloc((size_t)runs * sizeof *t);
  if (t == NULL) exit(1);
  for (int i = 0; i < inner; i++) *rows = read_once(data, size); /* warm the allocator */
  for (int r = 0; r < runs; r++) {
    double t0 = now();
    for (int i = 0; i < inner; i++) *rows = read_once(data, size);
    t[r] = (now() - t0) / inner * 1e6;
  }
  qsort(t, (size_t)runs, sizeof *t, cmp_double);
  double m = t[runs / 2];
  free(t);
  return m;
}

int main(int argc, char **argv) {
  if (argc >= 3 && strcmp(argv[1], "--write") == 0) {
    int64_t rows = argc > 3 ? atoll(argv[3]) : 10000000;
    int64_t per_batch = argc > 4 ? atoll(argv[4]) : 1000000;
    if (rows <= 0 || per_batch <= 0) return 2;
    size_t size;
    uint8_t *data = make_stream(rows, per_batch, &size);
    FILE *f = fopen(argv[2], "wb");
    if (f == NULL || fwrite(data, 1, size, f) != size || fclose(f) != 0) {
      fprintf(stderr, "bench_cheap: cannot write %s\n", argv[2]);
      return 1;
    }
    free(data);
    return 0;
  }
  if (argc >= 3 && strcmp(argv[1], "--read") == 0) {
    int runs = argc > 3 ? atoi(argv[3]) : 21;
    if (runs <= 0) return 2;
    size_t size;
    uint8_t *data = load(argv[2], &size);
    int64_t rows;
    double m = median_us(data, size, runs, 200, &rows);
    free(data);
    if (printf("%.3f\n", m) < 0 || fflush(stdout) != 0) return 1;
    return rows > 0 ? 0 : 1;
  }
  if (argc != 1) {
    fprintf(stderr, "usage: bench_cheap [--write PATH [rows] [rows_per_batch] | --read PATH [runs]]\n");
    return 2;
  }
  size_t size;
  uint8_t *data = make_stream(10000000, 1000000, &size);
  int64_t rows;
  double m = median_us(data, size, 21, 200, &rows);
  printf("read stream from memory, cheap checks: %.2f us a read (median CPU time; %" PRId64 " rows, 10 batches, "
         "%.1f MB); bench/bench_cheap_baseline.sh compares it with the parent of #26's first commit\n",
         m, rows, (double)size / 1e6);
  free(data);
  return 0;
}
