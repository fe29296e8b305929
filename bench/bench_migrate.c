/* quiver migrate and the sparse-vector bridges (issue #23), each figure
 * against a reference measured in the same run:
 *   1. qv_migrate of a file holding one 1 GiB float32 Tensor message (path
 *      source, mapped; path sink, QV_SINK_NO_FSYNC) vs copying the file's
 *      bytes cp-like (mmap the input, write(2) it to a temporary file,
 *      rename; no fsync either). Target: <= 1.2x: the body becomes the
 *      column's value buffer, so the writer's copy is the only one
 *      (stats.gathered_bytes must be 0). The same for a 1 GiB file of 64
 *      messages of equal shape: one fixed shape column whose values the
 *      writer sends to the sink body by body from the mapping (no gather).
 *   2. qv_sparse_vector_stack (a quiver.sparse_vector column -> one CSR
 *      tensor) and qv_sparse_vector_unstack (a CSR tensor read from a file,
 *      sealed by the reader -> the column) at 10^5 and 10^7 non-zeros:
 *      views, so the same microseconds at both sizes (target: ratio ~1).
 *      Column validation on ingest (qv_sparse_column_init) is not timed.
 * Times are best of RUNS (files in the page cache).
 *
 *   make bench  (or: cmake --build build --target bench_migrate)
 *   build/bench_migrate [DIR] [MiB]   (scratch files in DIR, default /tmp;
 *                                      tensor size, default 1024) */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "quiver/io.h"
#include "quiver/migrate.h"
#include "quiver/sparse.h"
#include "quiver/sparse_column.h"
#include "quiver/sparse_ipc.h"
#include "quiver/tensor_ipc.h"

#define RUNS 5
#define REPS 2000

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void die(const char *what, const QvError *err) {
  fprintf(stderr, "bench_migrate: %s: %s\n", what, err ? err->message : "failed");
  exit(1);
}

/* cp-like: map IN, one write(2) of it into a temporary next to OUT, rename. */
static double copy_file(const char *in, const char *out) {
  double t0 = now();
  int fd = open(in, O_RDONLY);
  struct stat st;
  if (fd < 0 || fstat(fd, &st) != 0) die("open input", NULL);
  void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
  if (m == MAP_FAILED) die("mmap", NULL);
  char tmp[1100];
  snprintf(tmp, sizeof tmp, "%s.tmpXXXXXX", out);
  int o = mkstemp(tmp);
  if (o < 0) die("mkstemp", NULL);
  size_t done = 0;
  while (done < (size_t)st.st_size) {
    ssize_t k = write(o, (const char *)m + done, (size_t)st.st_size - done);
    if (k <= 0) die("write", NULL);
    done += (size_t)k;
  }
  close(o);
  if (rename(tmp, out) != 0) die("rename", NULL);
  munmap(m, (size_t)st.st_size);
  close(fd);
  return now() - t0;
}

static double migrate_file(const char *in, const char *out) {
  QvError err;
  double t0 = now();
  QvSource *src;
  QvSink *sink;
  if (qv_source_new_path(&src, in, &err)) die("source", &err);
  if (qv_sink_new_path(&sink, out, QV_SINK_NO_FSYNC, &err)) die("sink", &err);
  QvMigrateStats stats;
  if (qv_migrate(src, sink, NULL, &stats, &err)) die("migrate", &err);
  if (qv_sink_finish(sink, &err)) die("finish", &err);
  qv_sink_free(sink);
  qv_source_free(src);
  double t = now() - t0;
  if (stats.gathered_bytes != 0) {
    fprintf(stderr, "bench_migrate: %lld bytes gathered: the zero-copy path was not taken\n",
            (long long)stats.gathered_bytes);
    exit(1);
  }
  return t;
}

/* A file of `messages` float32 Tensor messages, mib MiB of values in all
 * (equal shapes: one fixed shape column), migrated vs copied. */
static void bench_migrate(const char *dir, size_t mib, int messages) {
  char in[1024], out[1024], cp[1024];
  snprintf(in, sizeof in, "%s/bench_migrate_in.arrow", dir);
  snprintf(out, sizeof out, "%s/bench_migrate_out.arrows", dir);
  snprintf(cp, sizeof cp, "%s/bench_migrate_cp.arrow", dir);
  QvError err;
  QvTensor t;
  void *data;
  /* float32: 4 KiB a row */
  int64_t shape[2] = {(int64_t)(mib * 256) / messages, 1024};
  if (shape[0] == 0) shape[0] = 1;
  if (qv_tensor_alloc(&t, QV_ARROW_FLOAT32, 2, shape, NULL, false, &data, &err)) die("alloc", &err);
  float *f = data;
  QvSink *s;
  if (qv_sink_new_path(&s, in, QV_SINK_NO_FSYNC, &err)) die("write input", &err);
  for (int m = 0; m < messages; m++) {
    for (int64_t i = 0; i < shape[0] * shape[1]; i++) f[i] = (float)((i + m) & 1023);
    if (qv_tensor_write(&t, s, NULL, &err)) die("write input", &err);
  }
  if (qv_sink_finish(s, &err)) die("write input", &err);
  qv_sink_free(s);
  qv_tensor_reset(&t);
  double best_m = 1e30, best_c = 1e30;
  for (int r = 0; r < RUNS; r++) {
    double c = copy_file(in, cp), m = migrate_file(in, out);
    if (c < best_c) best_c = c;
    if (m < best_m) best_m = m;
  }
  double gib = (double)(shape[0] * messages) / 262144.0;
  printf("migrate %.2f GiB dense tensor file of %d message%s: %.3f s (%.2f GB/s); cp-like copy "
         "%.3f s; ratio %.2fx (target <= 1.2x)\n",
         gib, messages, messages == 1 ? "" : "s", best_m, gib * 1.073741824 / best_m, best_c,
         best_m / best_c);
  unlink(in);
  unlink(out);
  unlink(cp);
}

/* A rows x cols CSR matrix with nnz non-zeros (nnz / rows a row), written to
 * PATH. */
static void write_csr(const char *path, int64_t rows, int64_t cols, int64_t nnz) {
  QvError err;
  int64_t per = nnz / rows;
  int64_t *indptr = malloc((size_t)(rows + 1) * 8);
  int32_t *indices = malloc((size_t)nnz * 4);
  float *values = malloc((size_t)nnz * 4);
  if (!indptr || !indices || !values) die("malloc", NULL);
  for (int64_t i = 0; i <= rows; i++) indptr[i] = i * per;
  for (int64_t i = 0; i < rows; i++)
    for (int64_t k = 0; k < per; k++) {
      indices[i * per + k] = (int32_t)(k * (cols / per));
      values[i * per + k] = (float)(k + 1);
    }
  QvSparseTensor t;
  QvSparseDesc d = {.format = QV_SPARSE_CSR, .value_type = QV_ARROW_FLOAT32,
                    .index_type = QV_ARROW_INT32, .indptr_type = QV_ARROW_INT64, .ndim = 2,
                    .shape = (int64_t[]){rows, cols}, .nnz = rows * per, .values = values,
                    .indptr = indptr, .indices = indices};
  if (qv_sparse_init(&t, &d, &err)) die("sparse init", &err);
  QvSink *s;
  if (qv_sink_new_path(&s, path, QV_SINK_NO_FSYNC, &err) || qv_sparse_write(&t, s, NULL, &err) ||
      qv_sink_finish(s, &err))
    die("write csr", &err);
  qv_sink_free(s);
  qv_sparse_reset(&t);
  free(indptr);
  free(indices);
  free(values);
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* Median microseconds of unstack (sealed CSR -> column) and stack (column ->
 * CSR) at nnz non-zeros. */
static void bench_bridges(const char *dir, int64_t nnz, double *unstack_us, double *stack_us) {
  char path[1024];
  snprintf(path, sizeof path, "%s/bench_migrate_csr.arrow", dir);
  write_csr(path, 10000, 1 << 20, nnz);
  QvError err;
  QvSource *src;
  QvSparseTensor t;
  if (qv_source_new_path(&src, path, &err) || qv_sparse_read(src, 0, NULL, &t, &err))
    die("read csr", &err);
  qv_source_free(src);
  static double u[REPS], s[REPS];
  struct ArrowSchema schema;
  struct ArrowArray array;
  for (int r = 0; r < REPS; r++) {
    double t0 = now();
    if (qv_sparse_vector_unstack(&t, NULL, &schema, &array, &err)) die("unstack", &err);
    u[r] = now() - t0;
    if (r + 1 < REPS) {
      schema.release(&schema);
      array.release(&array);
    }
  }
  QvSparseColumn col;
  if (qv_sparse_column_init(&col, &schema, &array, NULL, &err)) die("column", &err);
  schema.release(&schema);
  for (int r = 0; r < REPS; r++) {
    QvSparseTensor csr;
    double t0 = now();
    if (qv_sparse_vector_stack(&col, NULL, &csr, &err)) die("stack", &err);
    s[r] = now() - t0;
    if (csr.values != t.values) die("stack copied the values", NULL);
    qv_sparse_reset(&csr);
  }
  qv_sparse_column_reset(&col);
  qv_sparse_reset(&t);
  unlink(path);
  qsort(u, REPS, sizeof u[0], cmp_double);
  qsort(s, REPS, sizeof s[0], cmp_double);
  *unstack_us = u[REPS / 2] * 1e6;
  *stack_us = s[REPS / 2] * 1e6;
}

int main(int argc, char **argv) {
  const char *dir = argc > 1 ? argv[1] : "/tmp";
  size_t mib = argc > 2 ? (size_t)strtoul(argv[2], NULL, 10) : 1024;
  if (mib == 0) mib = 1024;
  bench_migrate(dir, mib, 1);
  bench_migrate(dir, mib, 64); /* the bodies written from the mapping, no gather */
  double u5, s5, u7, s7;
  bench_bridges(dir, 100000, &u5, &s5);
  bench_bridges(dir, 10000000, &u7, &s7);
  printf("sparse-vector unstack (sealed CSR -> column): %.2f us at 1e5 nnz, %.2f us at 1e7; "
         "ratio %.2fx (target ~1: constant time)\n", u5, u7, u7 / u5);
  printf("sparse-vector stack (column -> CSR): %.2f us at 1e5 nnz, %.2f us at 1e7; "
         "ratio %.2fx (target ~1: constant time)\n", s5, s7, s7 / s5);
  return 0;
}
