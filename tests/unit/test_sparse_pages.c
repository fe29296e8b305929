/* Pages of large sparse results (Linux; not under AddressSanitizer, where
 * the sparse buffers are heap blocks it can watch, so this file is skipped
 * there as a whole and test_sparse_threads is not): huge-page advice, and
 * the output pages a grouping on threads faults in by disjoint parts before
 * its scatter. */
#if defined(__linux__)
#define _GNU_SOURCE /* MAP_ANONYMOUS */
#include <errno.h>
#include <sys/mman.h>
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "quiver/advanced.h"
#include "quiver/buffer.h"
#include "quiver/sparse.h"
#include "test_util.h"
#include "util/cpu.h"

#if defined(__linux__) && !defined(__SANITIZE_ADDRESS__)
#define QV_PAGES 1
#endif

#if defined(QV_PAGES)
#include "test_sparse_fixture.h"

#endif

/* Large results ask for transparent huge pages (first touch then faults
 * once per 2 MiB): a conversion's buffers of 2 MiB and more, and
 * qv_aligned_alloc blocks. Linux only; not under AddressSanitizer, where the
 * sparse buffers are heap blocks it can watch. */
static void test_large_results_huge_advised(void **state) {
  (void)state;
#if !defined(QV_PAGES)
  skip();
#else
  uint64_t before = qvi_path_count(QV_PATH_HUGE_ADVISED);
  void *p = qv_aligned_alloc((size_t)8 << 20);
  assert_non_null(p);
  assert_true(qvi_path_count(QV_PATH_HUGE_ADVISED) > before);
  qv_free(p);
  Coo c;
  make_coo(&c, QV_ARROW_FLOAT64, 300000, 20000, 30000, false, 14); /* 4.8 MB of indices and values */
  QvSparseTensor out;
  QvError err;
  before = qvi_path_count(QV_PATH_HUGE_ADVISED);
  assert_int_equal(convert(&c.t, QV_SPARSE_CSC, 1, QV_ARROW_NONE, &out, &err), QV_OK);
  assert_true(qvi_path_count(QV_PATH_HUGE_ADVISED) >= before + 2);
  qv_sparse_reset(&out);
  free_coo(&c);
#endif
}

#if defined(QV_PAGES)
/* MADV_POPULATE_WRITE (Linux 5.14) known to this kernel. */
static bool populate_supported(void) {
  void *m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) return false;
  bool ok = madvise(m, 4096, 23 /* MADV_POPULATE_WRITE */) == 0;
  munmap(m, 4096);
  return ok;
}
#endif

/* COO -> CSR and CSR -> CSC on 2 and 3 threads into fresh outputs of over
 * 2 MiB: the threads fault in their parts of the output first (counted),
 * and the bytes are the one-thread ones. Outputs a workspace serves again
 * are not populated again (their pages are there). */
static void test_threaded_output_populated(void **state) {
  (void)state;
#if !defined(QV_PAGES)
  skip();
#else
  if (!populate_supported()) skip();
  Coo c;
  make_coo(&c, QV_ARROW_FLOAT64, 400000, 20000, 30000, false, 21); /* 6.4 MB of indices and values */
  QvError err;
  QvSparseTensor ref, got, tref, tgot;
  assert_int_equal(convert(&c.t, QV_SPARSE_CSR, 1, QV_ARROW_NONE, &ref, &err), QV_OK);
  assert_true(ref.nnz >= 2 * (1 << 17)); /* large enough to go on threads */
  assert_int_equal(convert(&ref, QV_SPARSE_CSC, 1, QV_ARROW_NONE, &tref, &err), QV_OK);
  for (int threads = 2; threads <= 3; threads++) {
    uint64_t before = qvi_path_count(QV_PATH_SPARSE_POPULATED);
    assert_int_equal(convert(&c.t, QV_SPARSE_CSR, threads, QV_ARROW_NONE, &got, &err), QV_OK);
    assert_true(qvi_path_count(QV_PATH_SPARSE_POPULATED) > before);
    assert_same_csx(&got, &ref);
    before = qvi_path_count(QV_PATH_SPARSE_POPULATED);
    assert_int_equal(convert(&got, QV_SPARSE_CSC, threads, QV_ARROW_NONE, &tgot, &err), QV_OK);
    assert_true(qvi_path_count(QV_PATH_SPARSE_POPULATED) > before);
    assert_same_csx(&tgot, &tref);
    qv_sparse_reset(&got);
    qv_sparse_reset(&tgot);
  }
  /* one workspace: the second transpose writes into the first one's pages */
  QvSparseWorkspace *ws;
  assert_int_equal(qv_sparse_workspace_new(&ws, &err), QV_OK);
  QvSparseOptions o = {.struct_size = sizeof o, .threads = 2, .workspace = ws};
  uint64_t before = qvi_path_count(QV_PATH_SPARSE_POPULATED);
  assert_int_equal(qv_sparse_convert(&ref, QV_SPARSE_CSC, &o, &tgot, &err), QV_OK);
  assert_true(qvi_path_count(QV_PATH_SPARSE_POPULATED) > before);
  assert_same_csx(&tgot, &tref);
  qv_sparse_reset(&tgot);
  before = qvi_path_count(QV_PATH_SPARSE_POPULATED);
  assert_int_equal(qv_sparse_convert(&ref, QV_SPARSE_CSC, &o, &tgot, &err), QV_OK);
  assert_int_equal(qvi_path_count(QV_PATH_SPARSE_POPULATED), before);
  assert_same_csx(&tgot, &tref);
  qv_sparse_reset(&tgot);
  qv_sparse_workspace_free(ws);
  qv_sparse_reset(&ref);
  qv_sparse_reset(&tref);
  free_coo(&c);
#endif
}

/* dense -> CSC of a row-major float64 matrix (the strip sort) on 2 and 3
 * threads into fresh outputs of over 2 MiB: the threads fault in their
 * parts of the output before pass 2 (counted), the bytes are the
 * one-thread ones; one thread populates nothing, and outputs a workspace
 * serves again are not populated again. */
static void test_dense_csc_output_populated(void **state) {
  (void)state;
#if !defined(QV_PAGES)
  skip();
#else
  if (!populate_supported()) skip();
  enum { R = 1500, C = 1300 };
  int64_t shape[2] = {R, C}, strides[2] = {C * 8, 8};
  double *d = calloc((size_t)R * C, sizeof *d);
  assert_non_null(d);
  uint64_t x = 88172645463325252u;
  for (size_t i = 0; i < (size_t)R * C; i++) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    if (x % 5 == 0) d[i] = (double)(x >> 40) + 1.0; /* 20%: 390000 entries, 3.1 MB per buffer */
  }
  QvTensor dt = {.type = QV_ARROW_FLOAT64, .ndim = 2, .shape = shape, .strides = strides, .data = (uint8_t *)d,
                 .data_size = (int64_t)((size_t)R * C * 8)};
  QvError err;
  QvSparseTensor ref, got;
  QvSparseOptions o1 = {.struct_size = sizeof o1, .threads = 1};
  uint64_t before = qvi_path_count(QV_PATH_DENSE_POPULATED);
  assert_int_equal(qv_sparse_from_dense(&dt, QV_SPARSE_CSC, &o1, &ref, &err), QV_OK);
  assert_int_equal(qvi_path_count(QV_PATH_DENSE_POPULATED), before);
  assert_true(ref.nnz * 8 > (2 << 20));
  for (int threads = 2; threads <= 3; threads++) {
    QvSparseOptions o = {.struct_size = sizeof o, .threads = threads};
    before = qvi_path_count(QV_PATH_DENSE_POPULATED);
    assert_int_equal(qv_sparse_from_dense(&dt, QV_SPARSE_CSC, &o, &got, &err), QV_OK);
    assert_true(qvi_path_count(QV_PATH_DENSE_POPULATED) > before);
    assert_same_csx(&got, &ref);
    qv_sparse_reset(&got);
  }
  QvSparseWorkspace *ws;
  assert_int_equal(qv_sparse_workspace_new(&ws, &err), QV_OK);
  QvSparseOptions o = {.struct_size = sizeof o, .threads = 2, .workspace = ws};
  assert_int_equal(qv_sparse_from_dense(&dt, QV_SPARSE_CSC, &o, &got, &err), QV_OK);
  assert_same_csx(&got, &ref);
  qv_sparse_reset(&got);
  before = qvi_path_count(QV_PATH_DENSE_POPULATED);
  assert_int_equal(qv_sparse_from_dense(&dt, QV_SPARSE_CSC, &o, &got, &err), QV_OK);
  assert_int_equal(qvi_path_count(QV_PATH_DENSE_POPULATED), before);
  assert_same_csx(&got, &ref);
  qv_sparse_reset(&got);
  qv_sparse_workspace_free(ws);
  qv_sparse_reset(&ref);
  free(d);
#endif
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_large_results_huge_advised),
      cmocka_unit_test(test_threaded_output_populated),
      cmocka_unit_test(test_dense_csc_output_populated),
  };
  return qv_test_run(tests, NULL, NULL);
}
