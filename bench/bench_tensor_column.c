/* Tensor columns: stack and unstack of a float32 column of 224x224x3 cells,
 * ~1 MiB (2 cells) and ~1 GiB (1783 cells).
 *
 *  - zero-copy paths (targets: constant time, the same microseconds at both
 *    sizes): unstack (tensor -> column) + column init, stack (column ->
 *    tensor view), one cell view; medians over many runs;
 *  - copying paths (target: <= 1.2x memcpy of the same bytes in the same
 *    run): stack with null cells filled, stack of a permuted column as a
 *    row-major copy, both ways: HWC cells read as CHW (3 planes out of
 *    interleaved channels) and CHW cells read as HWC (3 planes
 *    interleaved). They allocate their result, so the reference is allocate
 *    + memcpy of the same bytes; also shown: the permuted copy alone into a
 *    pre-faulted buffer against memcpy into it (page faults dominate the
 *    1 GiB allocation on a loaded machine). Best of N, reference measured
 *    alternately. Each copying stack runs on 1 thread, then with
 *    QvTensorStackOptions.threads = every CPU (qv_cpu_count()); both are
 *    shown against the same single-threaded allocate + memcpy. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "quiver/tensor_column.h"
#include "util/copy.h"

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void die(const char *what, const QvError *err) {
  fprintf(stderr, "bench_tensor_column: %s: %s\n", what, err ? err->message : "failed");
  exit(1);
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

#define REPS 101

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  return v[n / 2];
}

/* A column of `n` cells over `data` (owner NULL: the bench keeps it), with a
 * validity bitmap when `bitmap` is not NULL, and `json` metadata. */
static void make_column(const float *data, int64_t n, const uint8_t *bitmap, int64_t nulls,
                        const char *json, QvTensorColumn *col) {
  QvError err = {0};
  QvTensorColumnType type;
  if (qv_tensor_column_type_parse(QV_TENSOR_COLUMN_FIXED_SHAPE, json, strlen(json), 0, &type,
                                  &err))
    die("parse", &err);
  type.value_type = QV_VALUE_FLOAT32;
  struct ArrowSchema f;
  if (qv_tensor_column_schema_init(&f, "images", &type, NULL, &err)) die("schema", &err);
  QvArrayView v;
  if (qv_array_view_init(&v, &f, &err)) die("view", &err);
  int64_t cell = qv_tensor_column_type_cell_size(&type);
  v.length = n;
  v.null_count = nulls;
  v.buffer[0] = bitmap;
  v.buffer_size[0] = bitmap ? (n + 7) / 8 : 0;
  v.children[0].length = n * cell;
  v.children[0].null_count = 0;
  v.children[0].buffer[1] = (const uint8_t *)data;
  v.children[0].buffer_size[1] = n * cell * 4;
  struct ArrowArray a;
  if (qv_array_export_view(&v, NULL, &a, &err)) die("export", &err);
  qv_array_view_reset(&v);
  if (qv_tensor_column_init(col, &f, &a, NULL, &err)) die("column", &err);
  f.release(&f);
  qv_tensor_column_type_reset(&type);
}

static void run(int64_t n) {
  QvError err = {0};
  int64_t shape[4] = {n, 224, 224, 3};
  QvTensor t;
  void *data;
  if (qv_tensor_alloc(&t, QV_VALUE_FLOAT32, 4, shape, NULL, false, &data, &err)) die("alloc", &err);
  size_t bytes = (size_t)n * 224 * 224 * 3 * 4;
  for (size_t i = 0; i < bytes / 4; i++) ((float *)data)[i] = (float)(i % 1000);
  double us[REPS];

  /* zero copy: unstack, then column init (full validation of the storage) */
  double init[REPS];
  for (int r = 0; r < REPS; r++) {
    double t0 = now();
    struct ArrowSchema f;
    struct ArrowArray a;
    QvTensorColumn col;
    if (qv_tensor_unstack(&t, NULL, &f, &a, &err)) die("unstack", &err);
    double t1 = now();
    if (qv_tensor_column_init(&col, &f, &a, NULL, &err)) die("init", &err);
    init[r] = (now() - t1) * 1e6;
    qv_tensor_column_reset(&col);
    f.release(&f);
    us[r] = (t1 - t0) * 1e6;
  }
  double unstack_us = median(us, REPS), init_us = median(init, REPS);
  /* zero copy: stack, and one cell view */
  QvTensorColumn col;
  make_column(data, n, NULL, 0, "{\"shape\": [224, 224, 3], \"dim_names\": [\"H\", \"W\", \"C\"]}",
              &col);
  for (int r = 0; r < REPS; r++) {
    double t0 = now();
    QvTensor s;
    if (qv_tensor_column_stack(&col, NULL, &s, &err)) die("stack", &err);
    if (s.data != (const uint8_t *)data) die("stack copied", NULL);
    qv_tensor_reset(&s);
    us[r] = (now() - t0) * 1e6;
  }
  double stack_us = median(us, REPS);
  for (int r = 0; r < REPS; r++) {
    double t0 = now();
    QvTensor c;
    if (qv_tensor_column_cell(&col, n - 1, &c, &err)) die("cell", &err);
    qv_tensor_reset(&c);
    us[r] = (now() - t0) * 1e6;
  }
  double cell_us = median(us, REPS);
  qv_tensor_column_reset(&col);
  printf("%8.1f MiB  zero-copy: unstack %6.2f us  column init %6.2f us  stack %6.2f us  "
         "cell %6.2f us\n",
         (double)bytes / (1 << 20), unstack_us, init_us, stack_us, cell_us);

  /* copying paths vs allocate + memcpy, alternately, best of N */
  uint8_t *bitmap = malloc((size_t)(n + 7) / 8);
  memset(bitmap, 0xff, (size_t)(n + 7) / 8);
  bitmap[0] &= 0xfe; /* cell 0 null */
  QvTensorColumn nulls, perm, inter;
  make_column(data, n, bitmap, 1, "{\"shape\": [224, 224, 3]}", &nulls);
  /* HWC cells read as CHW: 3 planes out of interleaved channels */
  make_column(data, n, NULL, 0, "{\"shape\": [224, 224, 3], \"permutation\": [2, 0, 1]}", &perm);
  /* CHW cells read as HWC: 3 planes interleaved */
  make_column(data, n, NULL, 0, "{\"shape\": [3, 224, 224], \"permutation\": [1, 2, 0]}", &inter);
  void *pre = qv_aligned_alloc(bytes);
  memset(pre, 1, bytes);
  QvTensor perm_view, inter_view;
  if (qv_tensor_column_stack(&perm, NULL, &perm_view, &err)) die("stack view", &err);
  if (qv_tensor_column_stack(&inter, NULL, &inter_view, &err)) die("stack view", &err);
  double best_fill = 1e9, best_perm = 1e9, best_inter = 1e9, best_ref = 1e9, best_pre = 1e9;
  double best_perm_pre = 1e9, best_inter_pre = 1e9;
  /* the same three stacks on every CPU */
  int cpus = qv_cpu_count();
  double best_fill_mt = 1e9, best_perm_mt = 1e9, best_inter_mt = 1e9;
  int rounds = n > 100 ? 5 : 200;
  for (int r = 0; r < rounds; r++) {
    double t0 = now();
    void *dst = qv_aligned_alloc(bytes);
    qv_copy_large(dst, data, bytes);
    qv_aligned_free(dst);
    double ref = now() - t0;
    if (ref < best_ref) best_ref = ref;
    t0 = now();
    qv_copy_large(pre, data, bytes);
    double p = now() - t0;
    if (p < best_pre) best_pre = p;
    QvTensor s;
    QvTensorStackOptions fill = {.struct_size = sizeof fill, .null_fill = true};
    t0 = now();
    if (qv_tensor_column_stack(&nulls, &fill, &s, &err)) die("stack null_fill", &err);
    qv_tensor_reset(&s);
    double f = now() - t0;
    if (f < best_fill) best_fill = f;
    QvTensorStackOptions contig = {.struct_size = sizeof contig, .contiguous = true};
    t0 = now();
    if (qv_tensor_column_stack(&perm, &contig, &s, &err)) die("stack contiguous", &err);
    qv_tensor_reset(&s);
    double pm = now() - t0;
    if (pm < best_perm) best_perm = pm;
    t0 = now();
    if (qv_tensor_column_stack(&inter, &contig, &s, &err)) die("stack contiguous", &err);
    qv_tensor_reset(&s);
    pm = now() - t0;
    if (pm < best_inter) best_inter = pm;
    /* the copies alone, into the pre-faulted buffer */
    t0 = now();
    if (qv_tensor_copy_to(&perm_view, false, pre, bytes, &err)) die("copy_to", &err);
    pm = now() - t0;
    if (pm < best_perm_pre) best_perm_pre = pm;
    t0 = now();
    if (qv_tensor_copy_to(&inter_view, false, pre, bytes, &err)) die("copy_to", &err);
    pm = now() - t0;
    if (pm < best_inter_pre) best_inter_pre = pm;
    if (cpus < 2 || bytes < ((size_t)4 << 20)) continue;
    QvTensorStackOptions fill_mt = fill, contig_mt = contig;
    fill_mt.threads = contig_mt.threads = cpus;
    t0 = now();
    if (qv_tensor_column_stack(&nulls, &fill_mt, &s, &err)) die("stack null_fill", &err);
    qv_tensor_reset(&s);
    pm = now() - t0;
    if (pm < best_fill_mt) best_fill_mt = pm;
    t0 = now();
    if (qv_tensor_column_stack(&perm, &contig_mt, &s, &err)) die("stack contiguous", &err);
    qv_tensor_reset(&s);
    pm = now() - t0;
    if (pm < best_perm_mt) best_perm_mt = pm;
    t0 = now();
    if (qv_tensor_column_stack(&inter, &contig_mt, &s, &err)) die("stack contiguous", &err);
    qv_tensor_reset(&s);
    pm = now() - t0;
    if (pm < best_inter_mt) best_inter_mt = pm;
  }
  double mib = (double)bytes / (1 << 20);
  printf("%8.1f MiB  copying: alloc+memcpy %8.2f ms (pre-faulted memcpy %8.2f ms)\n", mib,
         best_ref * 1e3, best_pre * 1e3);
  printf("%8.1f MiB  stack null_fill, 1 thread: %.2fx alloc+memcpy (target <= 1.2)  [%.2f ms; "
         "%.2fx pre-faulted memcpy]\n",
         mib, best_fill / best_ref, best_fill * 1e3, best_fill / best_pre);
  printf("%8.1f MiB  stack permuted [2,0,1] -> row-major, 1 thread: %.2fx alloc+memcpy (target "
         "<= 1.2)  [%.2f ms; copy alone %.2fx pre-faulted memcpy]\n",
         mib, best_perm / best_ref, best_perm * 1e3, best_perm_pre / best_pre);
  printf("%8.1f MiB  stack permuted [1,2,0] -> row-major, 1 thread: %.2fx alloc+memcpy (target "
         "<= 1.2)  [%.2f ms; copy alone %.2fx pre-faulted memcpy]\n",
         mib, best_inter / best_ref, best_inter * 1e3, best_inter_pre / best_pre);
  if (cpus < 2) {
    printf("%8.1f MiB  (one CPU: no multi-threaded figures)\n", mib);
  } else if (bytes < ((size_t)4 << 20)) {
    /* copies under 4 MiB (QV_COPY_THREADS_MIN) are not split */
    printf("%8.1f MiB  (under 4 MiB: copies are not split over threads)\n", mib);
  } else {
    printf("%8.1f MiB  stack null_fill, %d threads: %.2fx 1-thread alloc+memcpy (target <= 1.2)  "
           "[%.2f ms]\n",
           mib, cpus, best_fill_mt / best_ref, best_fill_mt * 1e3);
    printf("%8.1f MiB  stack permuted [2,0,1] -> row-major, %d threads: %.2fx 1-thread "
           "alloc+memcpy (target <= 1.2)  [%.2f ms]\n",
           mib, cpus, best_perm_mt / best_ref, best_perm_mt * 1e3);
    printf("%8.1f MiB  stack permuted [1,2,0] -> row-major, %d threads: %.2fx 1-thread "
           "alloc+memcpy (target <= 1.2)  [%.2f ms]\n",
           mib, cpus, best_inter_mt / best_ref, best_inter_mt * 1e3);
  }
  qv_tensor_reset(&perm_view);
  qv_tensor_reset(&inter_view);
  qv_tensor_column_reset(&inter);
  qv_aligned_free(pre);
  qv_tensor_column_reset(&nulls);
  qv_tensor_column_reset(&perm);
  free(bitmap);
  qv_tensor_reset(&t);
}

int main(int argc, char **argv) {
  (void)argc;
  (void)argv;
  int64_t cell = 224 * 224 * 3 * 4;
  run(((int64_t)1 << 20) / cell + 1);  /* ~1 MiB: 2 cells */
  run(((int64_t)1 << 30) / cell + 1);  /* ~1 GiB: 1784 cells */
  return 0;
}
