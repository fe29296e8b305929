/* Sparse tensor conversion benchmark (standalone).
 *
 * Build (one command line, from the repository root; the sparse code needs
 * only these directories, so no compression or zip library is involved) and
 * run:
 *   gcc -O2 -D_POSIX_C_SOURCE=200809L -I include -I src bench/bench_sparse.c
 *       $(find src/util src/flatbuf src/format src/tensor src/sparse -name '*.c') -lm -o /tmp/bs
 *   /tmp/bs [repetitions, default 5] [dense]
 * ("dense": only the dense <-> sparse cases.)
 *
 * Every dense <-> sparse time is given as a ratio to one memcpy of the dense
 * bytes measured in the same run (best of several repetitions each).
 * COO -> CSR of 10^7 random non-zeros is compared with SciPy's tocsr() run
 * through /usr/bin/python3 tests/scripts/bench_sparse_scipy.py (skipped with
 * a note when SciPy is missing or QV_BENCH_NO_SCIPY is set). Peak memory of
 * sparse -> sparse conversions is the growth of the resident set (VmHWM
 * after resetting it through /proc/self/clear_refs) relative to the size of
 * the output buffers. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "quiver/sparse.h"

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static uint64_t rng = 0x243f6a8885a308d3u;
static uint64_t rnd(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return rng;
}

static void die(const char *what, const QvError *err) {
  fprintf(stderr, "bench_sparse: %s: %s\n", what, err ? err->message : "");
  exit(1);
}

static int reps = 5;

static double time_memcpy(void *dst, const void *src, size_t n) {
  double best = 1e30;
  for (int r = 0; r < reps; r++) {
    double t = now();
    memcpy(dst, src, n);
    t = now() - t;
    if (t < best) best = t;
  }
  /* keep the copy observable */
  if (((volatile const uint8_t *)dst)[n / 2] != ((const uint8_t *)src)[n / 2]) die("memcpy", NULL);
  return best;
}

static double time_from_dense(const QvTensor *d, QvSparseFormat f, const QvSparseOptions *o,
                              QvSparseTensor *keep) {
  double best = 1e30;
  for (int r = 0; r < reps; r++) {
    QvSparseTensor s;
    QvError err;
    double t = now();
    if (qv_sparse_from_dense(d, f, o, &s, &err) != QV_OK) die("from_dense", &err);
    t = now() - t;
    if (t < best) best = t;
    if (r == reps - 1)
      *keep = s;
    else
      qv_sparse_reset(&s);
  }
  return best;
}

static double time_to_dense(const QvSparseTensor *s, void *dst, size_t n) {
  double best = 1e30;
  for (int r = 0; r < reps; r++) {
    QvError err;
    double t = now();
    if (qv_sparse_to_dense_into(s, dst, n, NULL, &err) != QV_OK) die("to_dense_into", &err);
    t = now() - t;
    if (t < best) best = t;
  }
  return best;
}

static const char *fmt_name(QvSparseFormat f) {
  static const char *n[] = {"?", "COO", "CSR", "CSC", "CSF"};
  return n[f];
}

static int failures;

static void report(const char *what, double t, double base, double limit) {
  double ratio = t / base;
  bool ok = ratio <= limit;
  if (!ok) failures++;
  printf("  %-34s %9.2f ms  %5.2fx memcpy  %s\n", what, t * 1e3, ratio, ok ? "ok" : "OVER TARGET");
}

/* ws_format (non-zero): also time that conversion with a reused workspace. */
static void dense_case(int32_t ndim, const int64_t *shape, double density, const QvSparseFormat *fmts,
                       int nf, QvSparseFormat ws_format) {
  QvTensor d;
  QvError err;
  void *data;
  if (qv_tensor_alloc(&d, QV_ARROW_FLOAT64, ndim, shape, NULL, false, &data, &err) != QV_OK)
    die("alloc", &err);
  int64_t n = qv_tensor_n_elements(&d);
  double *v = data;
  uint64_t thresh = (uint64_t)(density * 18446744073709551615.0);
  for (int64_t i = 0; i < n; i++)
    if (rnd() < thresh) v[i] = (double)(rnd() >> 11) * 0x1p-53 + 0.5;
  size_t bytes = (size_t)n * 8;
  uint8_t *dst = malloc(bytes);
  memset(dst, 1, bytes); /* fault the pages in */
  double base = time_memcpy(dst, d.data, bytes);
  char title[96];
  if (ndim == 2)
    snprintf(title, sizeof title, "%lldx%lld", (long long)shape[0], (long long)shape[1]);
  else
    snprintf(title, sizeof title, "%lldx%lldx%lld", (long long)shape[0], (long long)shape[1],
             (long long)shape[2]);
  printf("\n%s float64, density %.0f%% (%lld non-zeros): memcpy of %zu MB = %.2f ms\n", title,
         density * 100, (long long)qv_tensor_count_nonzero(&d), bytes >> 20, base * 1e3);
  for (int i = 0; i < nf; i++) {
    QvSparseTensor s;
    double t = time_from_dense(&d, fmts[i], NULL, &s);
    char what[64];
    snprintf(what, sizeof what, "dense -> %s", fmt_name(fmts[i]));
    report(what, t, base, 2.0);
    double b = time_to_dense(&s, dst, bytes);
    if (memcmp(dst, d.data, bytes) != 0) die("round trip mismatch", NULL);
    snprintf(what, sizeof what, "%s -> dense (caller buffer)", fmt_name(fmts[i]));
    report(what, b, base, 2.0);
    qv_sparse_reset(&s);
  }
  if (ws_format != 0) {
    /* repeated conversions with a reused workspace: after the first, the
     * buffers (and their pages) of the previous result serve the next */
    QvSparseWorkspace *ws;
    if (qv_sparse_workspace_new(&ws, &err) != QV_OK) die("workspace", &err);
    QvSparseOptions o = {.struct_size = sizeof o, .workspace = ws};
    QvSparseTensor s, plain;
    /* memcpy timed alternately with the conversion, so that the load of
     * the moment weighs on both */
    double t = 1e30, mc = 1e30, tp = 1e30;
    for (int r = 0; r < 2 * reps; r++) {
      double t0 = now();
      memcpy(dst, d.data, bytes);
      t0 = now() - t0;
      if (t0 < mc) mc = t0;
      t0 = now();
      if (qv_sparse_from_dense(&d, ws_format, NULL, &plain, &err) != QV_OK) die("from_dense", &err);
      t0 = now() - t0;
      if (t0 < tp) tp = t0;
      qv_sparse_reset(&plain);
      double t1 = now();
      if (qv_sparse_from_dense(&d, ws_format, &o, &s, &err) != QV_OK) die("from_dense", &err);
      t1 = now() - t1;
      if (t1 < t) t = t1;
      if (r < 2 * reps - 1) qv_sparse_reset(&s);
    }
    QvSparseWorkspaceStats st;
    qv_sparse_workspace_stats(ws, &st);
    if (st.reused == 0) die("workspace never reused a buffer", NULL);
    time_from_dense(&d, ws_format, NULL, &plain);
    if (!qv_sparse_equal(&s, &plain)) die("workspace result differs", NULL);
    qv_sparse_reset(&plain);
    qv_sparse_reset(&s);
    qv_sparse_workspace_free(ws);
    double ratio = t / mc;
    bool ok = ratio <= 1.2;
    if (!ok) failures++;
    printf("  dense -> %s, fresh buffers: %.2f ms, %.2fx memcpy (%.2f ms, timed alternately)\n", fmt_name(ws_format),
           tp * 1e3, tp / mc, mc * 1e3);
    printf("  dense -> %s, reused workspace: %.2f ms, %.2fx memcpy (target <= 1.2)  %s\n", fmt_name(ws_format),
           t * 1e3, ratio, ok ? "ok" : "OVER TARGET");
  }
  free(dst);
  qv_tensor_reset(&d);
}

/* ---- peak memory */

static long status_kb(const char *key) {
  FILE *f = fopen("/proc/self/status", "r");
  if (f == NULL) return -1;
  char line[256];
  long v = -1;
  size_t k = strlen(key);
  while (fgets(line, sizeof line, f))
    if (strncmp(line, key, k) == 0) v = strtol(line + k, NULL, 10);
  fclose(f);
  return v;
}

static bool reset_peak(void) {
  FILE *f = fopen("/proc/self/clear_refs", "w");
  if (f == NULL) return false;
  bool ok = fputs("5", f) >= 0;
  return fclose(f) == 0 && ok;
}

static size_t output_bytes(const QvSparseTensor *s) {
  size_t is = qv_arrow_type_size(s->index_type), ps = qv_arrow_type_size(s->indptr_type);
  size_t b = (size_t)s->nnz * qv_arrow_type_size(s->value_type);
  switch (s->format) {
    case QV_SPARSE_COO: return b + (size_t)s->nnz * (size_t)s->ndim * is;
    case QV_SPARSE_CSR:
    case QV_SPARSE_CSC: return b + (size_t)s->indptr_len * ps + (size_t)s->indices_len * is;
    default:
      for (int l = 0; l < s->ndim; l++) {
        b += (size_t)s->csf_indices_len[l] * is;
        if (l + 1 < s->ndim) b += (size_t)s->csf_indptr_len[l] * ps;
      }
      return b;
  }
}

/* Converts and reports time and resident-set growth against output size. */
static void convert_case(const QvSparseTensor *in, QvSparseFormat f, QvSparseTensor *out, bool mem) {
  QvError err;
  long rss0 = 0;
  bool peak_ok = mem && reset_peak();
  if (peak_ok) rss0 = status_kb("VmRSS:");
  double t = now();
  if (qv_sparse_convert(in, f, NULL, out, &err) != QV_OK) die("convert", &err);
  t = now() - t;
  size_t ob = output_bytes(out);
  printf("  %s -> %s  %9.2f ms", fmt_name(in->format), fmt_name(f), t * 1e3);
  if (peak_ok) {
    double growth = (double)(status_kb("VmHWM:") - rss0) * 1024.0;
    bool ok = growth <= 2.0 * (double)ob;
    if (!ok) failures++;
    printf("  peak +%.0f MB for %.0f MB of output = %.2fx  %s", growth / 1048576.0, (double)ob / 1048576.0,
           growth / (double)ob, ok ? "ok" : "OVER TARGET");
  }
  printf("\n");
}

static double scipy_tocsr(void) {
  if (getenv("QV_BENCH_NO_SCIPY")) return -1;
  FILE *p = popen("/usr/bin/python3 tests/scripts/bench_sparse_scipy.py 2>&1", "r");
  if (p == NULL) return -1;
  char line[512];
  double s = -1;
  while (fgets(line, sizeof line, p)) {
    if (sscanf(line, "scipy_tocsr_seconds %lf", &s) == 1) continue;
    if (strncmp(line, "scipy_tocsc_seconds", 19) == 0) continue; /* bench_sparse_threads reads it */
    printf("  (python) %s", line);
  }
  pclose(p);
  return s;
}

int main(int argc, char **argv) {
  if (argc > 1) reps = atoi(argv[1]) > 0 ? atoi(argv[1]) : reps;
  printf("quiver sparse benchmark (best of %d; targets: dense<->sparse <= 2x memcpy of the dense bytes,\n"
         "COO->CSR >= 2x faster than SciPy tocsr, sparse->sparse peak memory <= 2x the output)\n",
         reps);
  static const QvSparseFormat all[4] = {QV_SPARSE_COO, QV_SPARSE_CSR, QV_SPARSE_CSC, QV_SPARSE_CSF};
  static const QvSparseFormat nd3[2] = {QV_SPARSE_COO, QV_SPARSE_CSF};
  static const int64_t s2[2] = {4000, 4000}, s3[3] = {200, 200, 200};
  dense_case(2, s2, 0.01, all, 4, 0);
  dense_case(2, s2, 0.10, all, 4, QV_SPARSE_CSC);
  dense_case(3, s3, 0.01, nd3, 2, 0);
  if (argc > 2 && strcmp(argv[2], "dense") == 0) {
    printf("\n%s (dense cases only)\n", failures ? "SOME TARGETS MISSED" : "all targets met");
    return failures ? 1 : 0;
  }

  /* COO -> CSR, 10^7 random non-zeros in 10^6 x 10^6 */
  enum { NNZ = 10000000 };
  static const int64_t big[2] = {1000000, 1000000};
  int64_t *coords = malloc(sizeof(int64_t) * 2 * NNZ);
  double *vals = malloc(sizeof(double) * NNZ);
  for (int64_t i = 0; i < NNZ; i++) {
    coords[2 * i] = (int64_t)(rnd() % 1000000);
    coords[2 * i + 1] = (int64_t)(rnd() % 1000000);
    vals[i] = (double)(rnd() >> 11) * 0x1p-53;
  }
  QvSparseTensor coo;
  QvError err;
  if (qv_sparse_init(&coo, &(QvSparseDesc){.format = QV_SPARSE_COO, .value_type = QV_ARROW_FLOAT64,
                                           .index_type = QV_ARROW_INT64, .ndim = 2, .shape = big,
                                           .nnz = NNZ, .coords = coords,
                                           .values = vals}, &err) != QV_OK)
    die("make_coo", &err);
  printf("\nCOO -> CSR, 10^7 random non-zeros (unsorted, int64 indices) in 10^6 x 10^6 float64:\n");
  double best = 1e30;
  for (int r = 0; r < 5; r++) {
    QvSparseTensor csr;
    double t = now();
    if (qv_sparse_convert(&coo, QV_SPARSE_CSR, NULL, &csr, &err) != QV_OK) die("coo->csr", &err);
    t = now() - t;
    if (t < best) best = t;
    qv_sparse_reset(&csr);
  }
  printf("  quiver qv_sparse_convert: %.1f ms (best of 5)\n", best * 1e3);
  double sp = scipy_tocsr();
  if (sp > 0) {
    bool ok = sp / best >= 2.0;
    if (!ok) failures++;
    printf("  SciPy coo_matrix.tocsr(): %.1f ms -> quiver is %.2fx faster  %s\n", sp * 1e3, sp / best,
           ok ? "ok" : "UNDER TARGET");
  } else {
    printf("  SciPy timing skipped (run: /usr/bin/python3 tests/scripts/bench_sparse_scipy.py)\n");
  }

  /* peak memory: large buffers straight from mmap so freed memory is not
   * silently reused and the resident-set growth is what a conversion used */
#if defined(__GLIBC__)
  mallopt(M_MMAP_THRESHOLD, 1 << 20);
  malloc_trim(0);
#endif
  printf("\nsparse -> sparse on that matrix (time, resident-set growth vs output size):\n");
  QvSparseTensor csr, csc, c2, csf, c3;
  convert_case(&coo, QV_SPARSE_CSR, &csr, true);
  convert_case(&csr, QV_SPARSE_CSC, &csc, true);
  convert_case(&csc, QV_SPARSE_CSR, &c2, true);
  qv_sparse_reset(&c2);
  convert_case(&csr, QV_SPARSE_COO, &c2, true);
  qv_sparse_reset(&c2);
  convert_case(&csc, QV_SPARSE_COO, &c2, true);
  convert_case(&coo, QV_SPARSE_CSF, &csf, true);
  convert_case(&csf, QV_SPARSE_COO, &c3, true);
  qv_sparse_reset(&c3);
  convert_case(&c2, QV_SPARSE_CSC, &c3, true);
  qv_sparse_reset(&c3);
  convert_case(&coo, QV_SPARSE_COO, &c3, true);
  qv_sparse_reset(&c3);
  qv_sparse_reset(&c2);
  qv_sparse_reset(&csf);
  qv_sparse_reset(&csc);
  qv_sparse_reset(&csr);
  qv_sparse_reset(&coo);
  free(coords);
  free(vals);
  printf("\n%s\n", failures ? "SOME TARGETS MISSED" : "all targets met");
  return failures ? 1 : 0;
}
