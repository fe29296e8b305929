/* Tensor kernel speeds against memcpy measured in the same run:
 *   - row-major <-> column-major copy of a 4096 x 4096 float64 tensor
 *     (target >= 0.5x memcpy bandwidth),
 *   - count_nonzero over 256 MiB of float64 (target >= 0.8x memcpy),
 *   - equals across layouts, row-major vs column-major both ways (target
 *     >= 0.5x memcpy: memcpy time / equals time of the same tensor),
 *   - same-order copy, a strided-view copy and same-layout equals, for
 *     information.
 * Bandwidth is bytes of tensor data processed per second (a copy counts its
 * size once, as memcpy's does). Each operation is timed alternately with a
 * memcpy of the same size and the best of `repeats` runs of each is kept,
 * so that load from other processes affects both sides alike.
 * Usage: bench_tensor_ops [repeats]   (exit status 2 when a target is missed) */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "quiver/tensor.h"

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void *xalloc(size_t n) {
  void *p = qv_aligned_alloc(n);
  if (p == NULL) {
    fprintf(stderr, "out of memory (%zu bytes)\n", n);
    exit(1);
  }
  memset(p, 1, n); /* fault the pages in before timing */
  return p;
}

static void check(QvStatus st, const QvError *err) {
  if (st != QV_OK) {
    fprintf(stderr, "error: %s\n", err->message);
    exit(1);
  }
}

static volatile int64_t sink; /* keeps results observable */

/* What one timed run does. */
typedef struct Job {
  int kind; /* 0 memcpy, 1 copy_to, 2 equals, 3 count_nonzero */
  void *dst;
  const void *src;
  size_t bytes;
  const QvTensor *a, *b;
  bool column_major;
} Job;

static void run(const Job *j) {
  QvError err = {0};
  switch (j->kind) {
    case 0: memcpy(j->dst, j->src, j->bytes); break;
    case 1: check(qv_tensor_copy_to(j->a, j->column_major, j->dst, j->bytes, &err), &err); break;
    case 2: sink = qv_tensor_equal(j->a, j->b, false); break;
    default: sink = qv_tensor_count_nonzero(j->a); break;
  }
}

static double seconds(const Job *j) {
  double t0 = now();
  run(j);
  return now() - t0;
}

static int reps = 7;
static bool all_ok = true;

/* Times `op` (processing op_bytes) against memcpy of copy_bytes from src to
 * dst; prints GB/s and the ratio; target 0 means informational. */
static double measure(const char *name, const Job *op, size_t op_bytes, void *dst, const void *src,
                      size_t copy_bytes, double target) {
  Job mc = {0, dst, src, copy_bytes, NULL, NULL, false};
  double best_op = 1e30, best_mc = 1e30;
  for (int r = 0; r < reps; r++) {
    double t = seconds(&mc);
    if (t < best_mc) best_mc = t;
    t = seconds(op);
    if (t < best_op) best_op = t;
  }
  double op_gbps = (double)op_bytes / best_op / 1e9;
  double mc_gbps = (double)copy_bytes / best_mc / 1e9;
  double ratio = op_gbps / mc_gbps;
  printf("%-44s %6.2f GB/s  memcpy %6.2f GB/s  ratio %.2f", name, op_gbps, mc_gbps, ratio);
  if (target > 0) {
    printf("  (target %.1f: %s)", target, ratio >= target ? "met" : "MISSED");
    if (ratio < target) all_ok = false;
  }
  printf("\n");
  return ratio;
}

int main(int argc, char **argv) {
  if (argc > 1) reps = atoi(argv[1]);
  if (reps < 1) reps = 1;
  QvError err = {0};

  /* ---- copies of a 4096 x 4096 float64 tensor ---- */
  const int64_t n = 4096;
  int64_t shape[2] = {n, n};
  size_t bytes = (size_t)(n * n) * sizeof(double);
  double *a = xalloc(bytes), *b = xalloc(bytes), *c = xalloc(bytes);
  for (int64_t i = 0; i < n * n; i++) a[i] = (double)(i % 1000) - 500.0;

  QvTensor rm, cm, eo;
  check(qv_tensor_init(&rm, &(QvTensorDesc){.type = QV_ARROW_FLOAT64, .ndim = 2, .shape = shape,
                                            .data = a, .data_size = (int64_t)bytes}, &err),
        &err);
  /* c = the same values in column-major order */
  check(qv_tensor_copy_to(&rm, true, c, bytes, &err), &err);
  if (c[7 + 5 * n] != a[7 * n + 5]) {
    fprintf(stderr, "transpose produced a wrong value\n");
    return 1;
  }
  int64_t cm_strides[2] = {8, 8 * n};
  check(qv_tensor_init(&cm, &(QvTensorDesc){.type = QV_ARROW_FLOAT64, .ndim = 2, .shape = shape,
                                            .strides = cm_strides, .data = c,
                                            .data_size = (int64_t)bytes}, &err),
        &err);
  /* every other column of the buffer seen as 2048 x 8192 */
  int64_t half_shape[2] = {n / 2, n};
  int64_t every_other[2] = {16 * n, 16};
  check(qv_tensor_init(&eo, &(QvTensorDesc){.type = QV_ARROW_FLOAT64, .ndim = 2,
                                            .shape = half_shape, .strides = every_other, .data = a,
                                            .data_size = (int64_t)bytes}, &err),
        &err);

  printf("4096 x 4096 float64 (128 MiB), best of %d\n", reps);
  Job r2c = {1, b, NULL, bytes, &rm, NULL, true};
  measure("copy row-major -> column-major", &r2c, bytes, b, a, bytes, 0.5);
  Job c2r = {1, b, NULL, bytes, &cm, NULL, false};
  measure("copy column-major -> row-major", &c2r, bytes, b, a, bytes, 0.5);
  if (memcmp(a, b, bytes) != 0) {
    fprintf(stderr, "column-major -> row-major copy differs from the original\n");
    return 1;
  }
  Job same = {1, b, NULL, bytes, &rm, NULL, false};
  measure("copy row-major -> row-major", &same, bytes, b, a, bytes, 0);
  Job eoj = {1, b, NULL, bytes / 2, &eo, NULL, false};
  measure("copy every-other-column view -> row-major", &eoj, bytes / 2, b, a, bytes / 2, 0);
  /* equals reads both operands (2 x 128 MiB) where memcpy reads one and
   * writes one; the ratio is memcpy time / equals time of the same tensor */
  Job eq = {2, NULL, NULL, 0, &rm, &cm, false};
  double er = measure("equals row-major vs column-major (equal)", &eq, bytes, b, a, bytes, 0.5);
  if (!sink) {
    fprintf(stderr, "equals returned false for equal tensors\n");
    return 1;
  }
  Job eq2 = {2, NULL, NULL, 0, &cm, &rm, false};
  double er2 = measure("equals column-major vs row-major (equal)", &eq2, bytes, b, a, bytes, 0.5);
  if (!sink) {
    fprintf(stderr, "equals returned false for equal tensors\n");
    return 1;
  }
  Job eqs = {2, NULL, NULL, 0, &rm, &rm, false};
  measure("equals row-major vs row-major (same layout)", &eqs, bytes, b, a, bytes, 0);
  printf("equals across layouts: %.2fx memcpy (target >= 0.5)\n", er < er2 ? er : er2);
  qv_tensor_reset(&rm);
  qv_tensor_reset(&cm);
  qv_tensor_reset(&eo);
  qv_free(a);
  qv_free(b);
  qv_free(c);

  /* ---- count_nonzero over 256 MiB ---- */
  size_t big = (size_t)256 << 20;
  int64_t count = (int64_t)(big / sizeof(double));
  double *x = xalloc(big), *y = xalloc(big);
  int64_t expect = 0;
  for (int64_t i = 0; i < count; i++) {
    x[i] = (i % 3 == 0) ? 0.0 : (i % 7 == 0 ? -0.0 : (double)i);
    expect += x[i] != 0.0;
  }
  QvTensor ct;
  int64_t cshape[1] = {count};
  check(qv_tensor_init(&ct, &(QvTensorDesc){.type = QV_ARROW_FLOAT64, .ndim = 1, .shape = cshape,
                                            .data = x, .data_size = (int64_t)big}, &err),
        &err);
  printf("256 MiB float64, best of %d\n", reps);
  Job nz = {3, NULL, NULL, 0, &ct, NULL, false};
  measure("count_nonzero", &nz, big, y, x, big, 0.8);
  if (sink != expect) {
    fprintf(stderr, "count_nonzero = %lld, expected %lld\n", (long long)sink, (long long)expect);
    return 1;
  }
  qv_tensor_reset(&ct);
  qv_free(x);
  qv_free(y);
  printf("%s\n", all_ok ? "all targets met" : "TARGETS MISSED");
  return all_ok ? 0 : 2;
}
