/* Record batch throughput: writes and reads a 10,000,000-row stream
 * (int64, float64, short utf8 strings, nullable int32; about 300 MB of
 * buffers) to/from memory and a memory-mapped file, and relates every time
 * to a memcpy of the same number of body bytes measured in the same run:
 * one memcpy of the whole stream, and (for writing) one memcpy per buffer,
 * which is what a writer has to do at least (large single copies use
 * non-temporal stores and are faster than several smaller ones).
 *
 *   bench_recordbatch [rows] [rows_per_batch] [dir]
 *   (QV_BENCH_COLD=1: also full validation by path with the file evicted
 *   from the page cache before each read)
 *
 * Each figure is the best of several repetitions. */
#include <fcntl.h>
#include <inttypes.h>
#include <sys/resource.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench_rb_data.h"
#include "ipc/source_internal.h"
#include "util/load.h"
#include "quiver/recordbatch_ipc.h"

#define REPEAT 5

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void die(const char *what, QvStatus st, const QvError *e) {
  fprintf(stderr, "bench_recordbatch: %s: %s (%s)\n", what, e->message, qv_status_name(st));
  exit(1);
}

#define TRY(what, call)                 \
  do {                                  \
    QvStatus st_ = (call);              \
    if (st_) die(what, st_, &error);    \
  } while (0)

static QvError error;

/* The serialized output: bytes and their count. */
typedef struct Mem {
  uint8_t *data;
  size_t size;
} Mem;

typedef struct Data {
  struct ArrowSchema schema;
  struct ArrowArray *batches;
  int64_t n_batches, rows;
} Data;

/* Writes every batch into dst[0, cap) (a buffer sink) or, with dst NULL,
 * a growing memory sink; *size receives the bytes written. */
/* Byte order of what write_once writes (QV_RB_ENDIAN_*). */
static int write_endianness = QV_ENDIAN_NATIVE;

static double write_once(const Data *d, uint8_t *dst, size_t cap, QvIpcFormat format,
                         size_t *size) {
  QvSink *sink;
  if (dst)
    TRY("buffer sink", qv_sink_new_buffer(&sink, dst, cap, &error));
  else
    TRY("memory sink", qv_sink_new_memory(&sink, &error));
  QvRbWriteOptions o;
  memset(&o, 0, sizeof o);
  o.format = format;
  o.endianness = write_endianness;
  double t0 = now();
  QvRbWriter *w;
  TRY("writer new", qv_rb_writer_new(&w, &d->schema, sink, &o, &error));
  for (int64_t i = 0; i < d->n_batches; i++) TRY("write", qv_rb_writer_write(w, &d->batches[i], &error));
  TRY("finish", qv_rb_writer_finish(w, &error));
  double t = now() - t0;
  qv_rb_writer_free(w);
  *size = (size_t)qv_sink_bytes_written(sink);
  qv_sink_free(sink);
  return t;
}

/* Readers over memory or a path (the source is dropped once the reader
 * holds it). */
static QvSource *source_of(const uint8_t *data, size_t size, const char *path) {
  QvSource *src;
  if (path)
    TRY("path source", qv_source_new_path(&src, path, &error));
  else
    TRY("memory source", qv_source_new_memory(&src, data, size, NULL, &error));
  return src;
}

/* Reads every batch; with `touch` sums a byte of each buffer. */
static double read_stream(const uint8_t *data, size_t size, const char *path, QvValidateLevel level,
                          int64_t *rows) {
  QvRbReadOptions o;
  memset(&o, 0, sizeof o);
  o.validate = level;
  double t0 = now();
  struct ArrowArrayStream s;
  QvSource *src = source_of(data, size, path);
  TRY("open", qv_rb_stream_reader_new(&s, src, &o, &error));
  qv_source_free(src);
  *rows = 0;
  for (;;) {
    struct ArrowArray a;
    QvStatus st = qv_rb_stream_get_next(&s, &a, &error);
    if (st == QV_EOS) break;
    TRY("next", st);
    *rows += a.length;
    a.release(&a);
  }
  s.release(&s);
  return now() - t0;
}

/* The stream file through a descriptor (qv_source_new_fd: read(2), the
 * path every pipe and socket takes; issue 26's fd source), the file in the
 * page cache. */
static double read_stream_fd(const char *path, QvValidateLevel level, int64_t *rows) {
  QvRbReadOptions o;
  memset(&o, 0, sizeof o);
  o.validate = level;
  double t0 = now();
  int fd = open(path, O_RDONLY);
  if (fd < 0) {
    fprintf(stderr, "bench_recordbatch: cannot open %s\n", path);
    exit(1);
  }
  QvSource *src;
  TRY("fd source", qv_source_new_fd(&src, fd, &error));
  struct ArrowArrayStream s;
  TRY("open", qv_rb_stream_reader_new(&s, src, &o, &error));
  qv_source_free(src);
  *rows = 0;
  for (;;) {
    struct ArrowArray a;
    QvStatus st = qv_rb_stream_get_next(&s, &a, &error);
    if (st == QV_EOS) break;
    TRY("next", st);
    *rows += a.length;
    a.release(&a);
  }
  s.release(&s);
  close(fd);
  return now() - t0;
}

/* The stream file by path with the whole-file view made one way
 * (QvSourceAdvice); DEFAULT lets the reader choose. */
static double read_stream_advised(const char *path, QvValidateLevel level, QvSourceAdvice advice,
                                  int64_t *rows) {
  QvRbReadOptions o;
  memset(&o, 0, sizeof o);
  o.validate = level;
  double t0 = now();
  struct ArrowArrayStream s;
  QvSource *src = source_of(NULL, 0, path);
  qv_source_set_advice(src, advice);
  TRY("open", qv_rb_stream_reader_new(&s, src, &o, &error));
  qv_source_free(src);
  *rows = 0;
  for (;;) {
    struct ArrowArray a;
    QvStatus st = qv_rb_stream_get_next(&s, &a, &error);
    if (st == QV_EOS) break;
    TRY("next", st);
    *rows += a.length;
    a.release(&a);
  }
  s.release(&s);
  return now() - t0;
}

static double read_file(const char *path, QvValidateLevel level, int64_t *rows) {
  QvRbReadOptions o;
  memset(&o, 0, sizeof o);
  o.validate = level;
  double t0 = now();
  QvRbFileReader *f;
  QvSource *src = source_of(NULL, 0, path);
  TRY("open", qv_rb_file_reader_new(&f, src, &o, &error));
  qv_source_free(src);
  *rows = 0;
  for (int64_t i = 0; i < qv_rb_file_n_batches(f); i++) {
    struct ArrowArray a;
    TRY("batch", qv_rb_file_read_batch(f, i, &a, &error));
    *rows += a.length;
    a.release(&a);
  }
  qv_rb_file_reader_free(f);
  return now() - t0;
}

static double best(double a, double b) { return a < b ? a : b; }

/* The floor under full validation: one read of exactly the bytes it has to
 * look at (the utf8 column's offsets and characters, the nullable column's
 * validity bitmap; fixed-width values need no inspection), as fast as this
 * CPU reads (widest vectors available, several accumulators). */
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
__attribute__((target("avx2"))) static uint64_t or_bytes_avx2(const uint8_t *p, size_t n) {
  __m256i a = _mm256_setzero_si256(), b = a, c = a, e = a;
  size_t i = 0;
  for (; i + 128 <= n; i += 128) {
    a = _mm256_or_si256(a, _mm256_loadu_si256((const __m256i *)(const void *)(p + i)));
    b = _mm256_or_si256(b, _mm256_loadu_si256((const __m256i *)(const void *)(p + i + 32)));
    c = _mm256_or_si256(c, _mm256_loadu_si256((const __m256i *)(const void *)(p + i + 64)));
    e = _mm256_or_si256(e, _mm256_loadu_si256((const __m256i *)(const void *)(p + i + 96)));
  }
  a = _mm256_or_si256(_mm256_or_si256(a, b), _mm256_or_si256(c, e));
  uint64_t r = (uint64_t)_mm256_extract_epi64(a, 0) | (uint64_t)_mm256_extract_epi64(a, 1) |
               (uint64_t)_mm256_extract_epi64(a, 2) | (uint64_t)_mm256_extract_epi64(a, 3);
  for (; i < n; i++) r |= p[i];
  return r;
}
#endif

static uint64_t or_bytes(const uint8_t *p, size_t n) {
#if defined(__x86_64__) && defined(__GNUC__)
  if (__builtin_cpu_supports("avx2")) return or_bytes_avx2(p, n);
#endif
  uint64_t r = 0, w;
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    memcpy(&w, p + i, 8);
    r |= w;
  }
  for (; i < n; i++) r |= p[i];
  return r;
}

/* Times the floor pass over the buffers of the stream in `data`; *bytes is
 * how much it read. */
static double read_floor(const uint8_t *data, size_t size, int64_t *bytes) {
  QvRbReadOptions o;
  memset(&o, 0, sizeof o);
  o.validate = QV_VALIDATE_CHEAP;
  struct ArrowArrayStream s;
  QvSource *src = source_of(data, size, NULL);
  TRY("open", qv_rb_stream_reader_new(&s, src, &o, &error));
  qv_source_free(src);
  enum { MAXB = 4096 };
  static struct ArrowArray batches[MAXB];
  int64_t n = 0;
  for (; n < MAXB; n++) {
    QvStatus st = qv_rb_stream_get_next(&s, &batches[n], &error);
    if (st == QV_EOS) break;
    TRY("next", st);
  }
  double t0 = now();
  uint64_t acc = 0;
  *bytes = 0;
  for (int64_t i = 0; i < n; i++) {
    const struct ArrowArray *u = batches[i].children[2], *c = batches[i].children[3];
    const int32_t *off = u->buffers[1];
    size_t ob = (size_t)(u->offset + u->length + 1) * 4, db = (size_t)off[u->offset + u->length];
    size_t vb = c->buffers[0] ? (size_t)(c->offset + c->length + 7) / 8 : 0;
    acc |= or_bytes(u->buffers[1], ob) | or_bytes(u->buffers[2], db);
    if (vb) acc |= or_bytes(c->buffers[0], vb);
    *bytes += (int64_t)(ob + db + vb);
  }
  double t = now() - t0;
  for (int64_t i = 0; i < n; i++) batches[i].release(&batches[i]);
  s.release(&s);
  if (acc == 0) return -1; /* keeps the reads; never true for this data */
  return t;
}

/* memcpy of every buffer of every batch, one call per buffer, into `dst`
 * with the writer's 8-byte padding: the copying a writer cannot avoid. */
static double copy_buffers(const Data *d, uint8_t *dst) {
  QvArrayView v;
  TRY("view", qv_array_view_init(&v, &d->schema, &error));
  double t0 = now();
  size_t pos = 0;
  for (int64_t b = 0; b < d->n_batches; b++) {
    TRY("view", qv_array_view_set_array(&v, &d->batches[b], QV_VALIDATE_NONE, &error));
    for (int64_t c = 0; c < v.n_children; c++)
      for (int k = 0; k < 3; k++) {
        size_t n = (size_t)v.children[c].buffer_size[k];
        if (v.children[c].buffer[k] == NULL || n == 0) continue;
        memcpy(dst + pos, v.children[c].buffer[k], n);
        pos += (n + 7) & ~(size_t)7;
      }
  }
  double t = now() - t0;
  qv_array_view_reset(&v);
  return t;
}

static void report(const char *what, double t, double memcpy_t, int64_t rows) {
  printf("%-50s %9.2f ms  %8.1f Mrows/s  %6.3fx memcpy\n", what, t * 1e3, (double)rows / t / 1e6,
         t / memcpy_t);
}

static void write_file(const char *path, const uint8_t *data, size_t size) {
  QvSink *sink;
  TRY("path sink", qv_sink_new_path(&sink, path, QV_SINK_NO_FSYNC, &error));
  TRY("file write", qv_sink_write(sink, data, size, &error));
  TRY("file finish", qv_sink_finish(sink, &error));
  qv_sink_free(sink);
}

int main(int argc, char **argv) {
  int64_t rows = argc > 1 ? atoll(argv[1]) : 10000000;
  int64_t per_batch = argc > 2 ? atoll(argv[2]) : 1000000;
  const char *dir = argc > 3 ? argv[3] : "/tmp";
  if (rows <= 0 || per_batch <= 0) {
    fprintf(stderr, "usage: bench_recordbatch [rows] [rows_per_batch] [dir]\n");
    return 2;
  }
  Data d;
  memset(&d, 0, sizeof d);
  bench_rb_schema(&d.schema);
  d.rows = rows;
  d.n_batches = (rows + per_batch - 1) / per_batch;
  d.batches = calloc((size_t)d.n_batches, sizeof *d.batches);
  for (int64_t i = 0; i < d.n_batches; i++) {
    int64_t n = rows - i * per_batch < per_batch ? rows - i * per_batch : per_batch;
    bench_rb_batch(&d.schema, i * per_batch, n, &d.batches[i]);
  }

  /* size the output, then pre-fault the destination buffers */
  Mem mem;
  write_once(&d, NULL, 0, QV_IPC_FORMAT_STREAM, &mem.size);
  size_t cap = mem.size + (1 << 20);
  mem.data = malloc(cap);
  uint8_t *copy_dst = malloc(cap);
  if (mem.data == NULL || copy_dst == NULL) {
    fprintf(stderr, "bench_recordbatch: out of memory\n");
    return 1;
  }
  memset(mem.data, 1, cap);
  memset(copy_dst, 1, cap);
  write_once(&d, mem.data, cap, QV_IPC_FORMAT_STREAM, &mem.size);
  /* the same body bytes: one memcpy of the whole serialized stream */
  double t_memcpy = 1e9;
  for (int r = 0; r < REPEAT; r++) {
    double t0 = now();
    memcpy(copy_dst, mem.data, mem.size);
    t_memcpy = best(t_memcpy, now() - t0);
    if (copy_dst[mem.size / 2] != mem.data[mem.size / 2]) return 1;
  }
  printf("rows %" PRId64 " in %" PRId64 " batches of %" PRId64 "; stream %.1f MB; columns int64, "
         "float64, utf8, nullable int32\n",
         rows, d.n_batches, per_batch, (double)mem.size / 1e6);
  printf("%-50s %9.2f ms  %8.2f GB/s\n", "memcpy of the stream bytes (baseline)", t_memcpy * 1e3,
         (double)mem.size / t_memcpy / 1e9);

  double t_buffers = 1e9;
  for (int r = 0; r < REPEAT; r++) t_buffers = best(t_buffers, copy_buffers(&d, copy_dst));
  report("memcpy of each batch buffer (per-buffer)", t_buffers, t_memcpy, rows);
  double t = 1e9;
  for (int r = 0; r < REPEAT; r++)
    t = best(t, write_once(&d, mem.data, cap, QV_IPC_FORMAT_STREAM, &mem.size));
  report("write stream to pre-faulted memory", t, t_memcpy, rows);
  printf("%-50s %9s     %8s         %6.3fx per-buffer memcpy\n", "", "", "", t / t_buffers);

  int64_t got;
  double tc = 1e9, tf = 1e9;
  for (int r = 0; r < REPEAT; r++) {
    tc = best(tc, read_stream(mem.data, mem.size, NULL, QV_VALIDATE_CHEAP, &got));
    tf = best(tf, read_stream(mem.data, mem.size, NULL, QV_VALIDATE_FULL, &got));
  }
  if (got != rows) return 1;
  report("read stream from memory, cheap checks", tc, t_memcpy, rows);
  report("read stream from memory, full validation", tf, t_memcpy, rows);
  /* the same stream written in the foreign byte order: the reader swaps
   * every multi-byte buffer in one pass (issue 12's target: <= 1.3x memcpy) */
  write_endianness = QV_HOST_BIG_ENDIAN ? QV_ENDIAN_LITTLE : QV_ENDIAN_BIG;
  size_t native_size = mem.size;
  write_once(&d, mem.data, cap, QV_IPC_FORMAT_STREAM, &mem.size);
  double tsw = 1e9;
  for (int r = 0; r < REPEAT; r++) tsw = best(tsw, read_stream(mem.data, mem.size, NULL, QV_VALIDATE_CHEAP, &got));
  if (got != rows || mem.size != native_size) return 1;
  report("read foreign-order stream (swap), cheap checks", tsw, t_memcpy, rows);
  write_endianness = QV_ENDIAN_NATIVE;
  write_once(&d, mem.data, cap, QV_IPC_FORMAT_STREAM, &mem.size);
  double t_floor = 1e9;
  int64_t floor_bytes = 0;
  for (int r = 0; r < REPEAT; r++) t_floor = best(t_floor, read_floor(mem.data, mem.size, &floor_bytes));
  char floor_what[64];
  snprintf(floor_what, sizeof floor_what, "floor: one read of the %.0f MB to check", (double)floor_bytes / 1e6);
  report(floor_what, t_floor, t_memcpy, rows);
  printf("%-50s %9s     %8s         %6.3fx the floor\n", "full validation from memory", "", "", tf / t_floor);

  /* files: a stream file and an Arrow file, read through mmap */
  char spath[512], fpath[512];
  snprintf(spath, sizeof spath, "%s/qv_bench_rb_%d.arrows", dir, (int)getpid());
  snprintf(fpath, sizeof fpath, "%s/qv_bench_rb_%d.arrow", dir, (int)getpid());
  write_file(spath, mem.data, mem.size);
  write_once(&d, mem.data, cap, QV_IPC_FORMAT_FILE, &mem.size);
  write_file(fpath, mem.data, mem.size);
  double ts = 1e9, tfc = 1e9, tff = 1e9, tsf = 1e9;
  for (int r = 0; r < REPEAT; r++) {
    ts = best(ts, read_stream(NULL, 0, spath, QV_VALIDATE_CHEAP, &got));
    tsf = best(tsf, read_stream(NULL, 0, spath, QV_VALIDATE_FULL, &got));
    tfc = best(tfc, read_file(fpath, QV_VALIDATE_CHEAP, &got));
    tff = best(tff, read_file(fpath, QV_VALIDATE_FULL, &got));
  }
  report("read stream from mmap, cheap checks", ts, t_memcpy, rows);
  report("read stream from mmap, full validation", tsf, t_memcpy, rows);
  double tfdc = 1e9, tdf = 1e9;
  for (int r = 0; r < REPEAT; r++) {
    tfdc = best(tfdc, read_stream_fd(spath, QV_VALIDATE_CHEAP, &got));
    tdf = best(tdf, read_stream_fd(spath, QV_VALIDATE_FULL, &got));
  }
  if (got != rows) return 1;
  /* issue 26's targets: <= 1.1x memcpy (cheap), <= 1.3x (full) */
  report("read stream from an fd (read(2)), cheap checks", tfdc, t_memcpy, rows);
  report("read stream from an fd (read(2)), full validation", tdf, t_memcpy, rows);
  report("read file from mmap (footer), cheap checks", tfc, t_memcpy, rows);
  report("read file from mmap (footer), full validation", tff, t_memcpy, rows);
  /* Full validation by path touches every page of the mapping once:
   * each way of making the view, timed round-robin (a new source, so new
   * page tables, every time; the file is in the page cache), against the
   * same validation from memory measured above. */
  static const struct {
    QvSourceAdvice advice;
    const char *name;
  } ways[] = {
      {QV_SOURCE_ADVICE_NONE, "mmap, no hint"},
      {QV_SOURCE_ADVICE_SEQUENTIAL, "mmap + MADV_SEQUENTIAL"},
      {QV_SOURCE_ADVICE_WILLNEED, "mmap + MADV_WILLNEED"},
      {QV_SOURCE_ADVICE_POPULATE, "mmap + MADV_POPULATE_READ"},
      {QV_SOURCE_ADVICE_READ, "read(2) into aligned memory"},
      {QV_SOURCE_ADVICE_DEFAULT, "default (the reader's choice)"},
  };
  enum { NWAYS = sizeof ways / sizeof ways[0], ROUNDS = 3 * REPEAT /* short runs: more of them */ };
  double tw[NWAYS], tmem = 1e9;
  long faults[NWAYS] = {0};
  for (int w = 0; w < NWAYS; w++) tw[w] = 1e9;
  for (int r = 0; r < ROUNDS; r++) {
    /* the reference in the same rounds: full validation from memory */
    tmem = best(tmem, read_stream(mem.data, mem.size, NULL, QV_VALIDATE_FULL, &got));
    for (int w = 0; w < NWAYS; w++) {
      struct rusage u0, u1;
      getrusage(RUSAGE_SELF, &u0);
      tw[w] = best(tw[w], read_stream_advised(spath, QV_VALIDATE_FULL, ways[w].advice, &got));
      getrusage(RUSAGE_SELF, &u1);
      faults[w] += u1.ru_minflt - u0.ru_minflt;
      if (got != rows) return 1;
    }
  }
  printf("read stream by path, full validation, by how the view is made (best of %d; from memory "
         "%.2f ms in the same rounds):\n", ROUNDS, tmem * 1e3);
  for (int w = 0; w < NWAYS; w++)
    printf("  %-40s %9.2f ms  %6.2fx memory  %7ld page faults a read\n", ways[w].name, tw[w] * 1e3,
           tw[w] / tmem, faults[w] / ROUNDS);
  if (!qvi_source_populate_supported())
    printf("  (this kernel lacks MADV_POPULATE_READ: that line fell back to MADV_WILLNEED)\n");
  double tdc = 1e9;
  int64_t maps0 = qvi_source_count_view_maps();
  for (int r = 0; r < REPEAT; r++)
    tdc = best(tdc, read_stream_advised(spath, QV_VALIDATE_CHEAP, QV_SOURCE_ADVICE_DEFAULT, &got));
  bool zero_copy = qvi_source_count_view_maps() - maps0 == REPEAT;
  /* The same with the file evicted from the page cache before every read
   * (posix_fadvise DONTNEED after fdatasync: no privileges needed), so
   * pages come from the disk: where hints that read ahead can matter. */
  if (getenv("QV_BENCH_COLD") != NULL) {
    int fd = open(spath, O_RDONLY);
    if (fd < 0 || fdatasync(fd) != 0) return 1;
    double tc_w[NWAYS];
    for (int w = 0; w < NWAYS; w++) tc_w[w] = 1e9;
    for (int r = 0; r < 3; r++)
      for (int w = 0; w < NWAYS; w++) {
        posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
        tc_w[w] = best(tc_w[w], read_stream_advised(spath, QV_VALIDATE_FULL, ways[w].advice, &got));
      }
    close(fd);
    printf("the same, file evicted from the page cache before each read (best of 3):\n");
    for (int w = 0; w < NWAYS; w++)
      printf("  %-40s %9.2f ms  %6.2fx memory\n", ways[w].name, tc_w[w] * 1e3, tc_w[w] / tmem);
  }
  printf("read by path, full validation (default): %.2fx memory (target: the fastest way above)\n",
         tw[NWAYS - 1] / tmem);
  printf("read by path, cheap checks (default): %.3f ms, %s\n", tdc * 1e3,
         zero_copy ? "a plain mapping (zero-copy)" : "NOT A PLAIN MAPPING");
  int64_t buffers = d.n_batches * 9;
  printf("cheap reads do not touch the data: %.2f us per batch, %.3f us per buffer (%" PRId64
         " buffers)\n",
         tfc * 1e6 / (double)d.n_batches, tfc * 1e6 / (double)buffers, buffers);
  unlink(spath);
  unlink(fpath);
  free(mem.data);
  free(copy_dst);
  for (int64_t i = 0; i < d.n_batches; i++) d.batches[i].release(&d.batches[i]);
  free(d.batches);
  d.schema.release(&d.schema);
  return 0;
}
