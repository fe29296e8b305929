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
 *    shown against the same single-threaded allocate + memcpy. The 1-thread
 *    lines also give the ratio of the calling thread's CPU times (best of
 *    N each), which the other processes of a loaded machine distort less. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "quiver/advanced.h"
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

typedef struct Best {
  double wall, cpu;
} Best;
#define BEST ((Best){1e9, 1e9})

typedef struct Clock {
  double wall, cpu;
} Clock;

static double thread_cpu(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static Clock start(void) { return (Clock){now(), thread_cpu()}; }

static void stop(const Clock *c, Best *b) {
  double w = now() - c->wall, t = thread_cpu() - c->cpu;
  if (w < b->wall) b->wall = w;
  if (t < b->cpu) b->cpu = t;
}

static void stack_timed(const QvTensorColumn *col, const QvTensorStackOptions *o, Best *b) {
  QvError err = {0};
  QvTensor s;
  Clock c = start();
  if (qv_tensor_column_stack(col, o, &s, &err)) die("stack", &err);
  qv_tensor_reset(&s);
  stop(&c, b);
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
  type.value_type = QV_ARROW_FLOAT32;
  struct ArrowSchema f;
  if (qv_tensor_column_schema_init(&f, "images", &type, NULL, &err)) die("schema", &err);
  QvArrayView v;
  if (qv_array_view_init(&v, &f, &err)) die("view", &err);
  int64_t cell = qv_tensor_column_type_cell_n_elements(&type);
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
  if (qv_tensor_alloc(&t, QV_ARROW_FLOAT32, 4, shape, NULL, false, &data, &err)) die("alloc", &err);
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
    if (qv_tensor_column_unstack(&t, NULL, &f, &a, &err)) die("unstack", &err);
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
  /* best wall time and best CPU time of the calling thread (page faults
   * included: the kernel zeroes pages in the faulting thread) */
  Best ref = BEST, pre_copy = BEST, fill1 = BEST, perm1 = BEST, inter1 = BEST;
  Best perm_pre = BEST, inter_pre = BEST;
  /* the same three stacks on every CPU (wall time only) */
  int cpus = qv_cpu_count();
  Best fill_mt = BEST, perm_mt = BEST, inter_mt = BEST;
  QvTensorStackOptions fill = {.struct_size = sizeof fill, .null_fill = true};
  QvTensorStackOptions contig = {.struct_size = sizeof contig, .contiguous = true};
  QvTensorStackOptions fill_all = fill, contig_all = contig;
  fill_all.threads = contig_all.threads = cpus;
  int rounds = n > 100 ? 5 : 200;
  for (int r = 0; r < rounds; r++) {
    Clock c = start();
    void *dst = qv_aligned_alloc(bytes);
    qvi_copy_large(dst, data, bytes);
    qv_free(dst);
    stop(&c, &ref);
    c = start();
    qvi_copy_large(pre, data, bytes);
    stop(&c, &pre_copy);
    stack_timed(&nulls, &fill, &fill1);
    stack_timed(&perm, &contig, &perm1);
    stack_timed(&inter, &contig, &inter1);
    /* the copies alone, into the pre-faulted buffer */
    c = start();
    if (qv_tensor_copy_to(&perm_view, false, pre, bytes, &err)) die("copy_to", &err);
    stop(&c, &perm_pre);
    c = start();
    if (qv_tensor_copy_to(&inter_view, false, pre, bytes, &err)) die("copy_to", &err);
    stop(&c, &inter_pre);
    if (cpus < 2 || bytes < ((size_t)4 << 20)) continue;
    stack_timed(&nulls, &fill_all, &fill_mt);
    stack_timed(&perm, &contig_all, &perm_mt);
    stack_timed(&inter, &contig_all, &inter_mt);
  }
  double mib = (double)bytes / (1 << 20);
  printf("%8.1f MiB  copying: alloc+memcpy %8.2f ms (pre-faulted memcpy %8.2f ms)\n", mib,
         ref.wall * 1e3, pre_copy.wall * 1e3);
  static const char *const what[3] = {"stack null_fill", "stack permuted [2,0,1] -> row-major",
                                      "stack permuted [1,2,0] -> row-major"};
  const Best *one[3] = {&fill1, &perm1, &inter1}, *all[3] = {&fill_mt, &perm_mt, &inter_mt};
  const Best *alone[3] = {NULL, &perm_pre, &inter_pre};
  for (int k = 0; k < 3; k++) {
    printf("%8.1f MiB  %s, 1 thread: %.2fx alloc+memcpy (target <= 1.2)  [%.2f ms; CPU time "
           "%.2fx",
           mib, what[k], one[k]->wall / ref.wall, one[k]->wall * 1e3, one[k]->cpu / ref.cpu);
    if (alone[k] != NULL)
      printf("; copy alone %.2fx pre-faulted memcpy", alone[k]->wall / pre_copy.wall);
    printf("]\n");
  }
  if (cpus < 2) {
    printf("%8.1f MiB  (one CPU: no multi-threaded figures)\n", mib);
  } else if (bytes < ((size_t)4 << 20)) {
    /* copies under 4 MiB (QV_COPY_THREADS_MIN) are not split */
    printf("%8.1f MiB  (under 4 MiB: copies are not split over threads)\n", mib);
  } else {
    for (int k = 0; k < 3; k++)
      printf("%8.1f MiB  %s, %d threads: %.2fx 1-thread alloc+memcpy (target <= 1.2)  "
             "[%.2f ms]\n",
             mib, what[k], cpus, all[k]->wall / ref.wall, all[k]->wall * 1e3);
  }
  qv_tensor_reset(&perm_view);
  qv_tensor_reset(&inter_view);
  qv_tensor_column_reset(&inter);
  qv_free(pre);
  qv_tensor_column_reset(&nulls);
  qv_tensor_column_reset(&perm);
  free(bitmap);
  qv_tensor_reset(&t);
}

/* A transposing copy whose short source side is 12 float32 (more than the
 * plane kernels take, less than a cache line): [n, 12] read as [12, n] and
 * back, 64 MiB into a pre-faulted buffer, against memcpy into it. No
 * target: how far the partial micro-blocks leave it from memory speed. */
static void short_side(void) {
  QvError err = {0};
  int64_t k = 12, n = ((int64_t)64 << 20) / (4 * k);
  size_t bytes = (size_t)(n * k * 4);
  int64_t shape[2] = {n, k}, tshape[2] = {k, n};
  QvTensor a, b;
  void *pa, *pb;
  if (qv_tensor_alloc(&a, QV_ARROW_FLOAT32, 2, shape, NULL, false, &pa, &err) ||
      qv_tensor_alloc(&b, QV_ARROW_FLOAT32, 2, tshape, NULL, false, &pb, &err))
    die("alloc", &err);
  for (int64_t i = 0; i < n * k; i++) ((float *)pa)[i] = ((float *)pb)[i] = (float)(i % 1000);
  int64_t as[2] = {4, 4 * k}, bs[2] = {4, 4 * n};
  QvTensor av, bv;
  if (qv_tensor_init(&av, &(QvTensorDesc){.type = QV_ARROW_FLOAT32, .ndim = 2, .shape = tshape,
                                           .strides = as, .data = pa, .data_size = a.data_size},
                     &err) ||
      qv_tensor_init(&bv, &(QvTensorDesc){.type = QV_ARROW_FLOAT32, .ndim = 2, .shape = shape,
                                           .strides = bs, .data = pb, .data_size = b.data_size},
                     &err))
    die("view", &err);
  void *dst = qv_aligned_alloc(bytes);
  memset(dst, 1, bytes);
  Best ref = BEST, ab = BEST, ba = BEST;
  for (int r = 0; r < 5; r++) {
    Clock c = start();
    qvi_copy_large(dst, pa, bytes);
    stop(&c, &ref);
    c = start();
    if (qv_tensor_copy_to(&av, false, dst, bytes, &err)) die("copy_to", &err);
    stop(&c, &ab);
    c = start();
    if (qv_tensor_copy_to(&bv, false, dst, bytes, &err)) die("copy_to", &err);
    stop(&c, &ba);
  }
  printf("    64.0 MiB  float32 [n, 12] copied as [12, n] (short source side): %.2fx pre-faulted "
         "memcpy (no target)  [CPU time %.2fx]\n",
         ab.wall / ref.wall, ab.cpu / ref.cpu);
  printf("    64.0 MiB  float32 [12, n] copied as [n, 12] (short destination side): %.2fx "
         "pre-faulted memcpy (no target)  [CPU time %.2fx]\n",
         ba.wall / ref.wall, ba.cpu / ref.cpu);
  qv_free(dst);
  qv_tensor_reset(&av);
  qv_tensor_reset(&bv);
  qv_tensor_reset(&a);
  qv_tensor_reset(&b);
}

int main(int argc, char **argv) {
  (void)argc;
  (void)argv;
  int64_t cell = 224 * 224 * 3 * 4;
  if (getenv("QV_BENCH_SHORT_ONLY") == NULL) run(((int64_t)1 << 20) / cell + 1);  /* ~1 MiB: 2 cells */
  if (getenv("QV_BENCH_SHORT_ONLY") == NULL) run(((int64_t)1 << 30) / cell + 1); /* ~1 GiB */
  short_side();
  return 0;
}
