/* QvSparseWorkspace: conversions with a reused workspace give results
 * identical (buffer for buffer) to the plain ones, really reuse buffers
 * (the workspace's counters and the addresses), survive the workspace's
 * free, errors and two threads sharing one workspace, and trim. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "quiver/sparse.h"
#include "test_util.h"

static uint64_t rng_state = 0x9e3779b97f4a7c15u;
static uint64_t rnd(void) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return rng_state;
}

static const QvSparseFormat kFormats[4] = {QV_SPARSE_COO, QV_SPARSE_CSR, QV_SPARSE_CSC, QV_SPARSE_CSF};

/* A row-major dense tensor with about pct % non-zeros (owned by t). */
static void make_dense(QvTensor *t, QvArrowType type, int32_t ndim, const int64_t *shape, int pct) {
  QvError err;
  void *data;
  assert_int_equal(qv_tensor_alloc(t, type, ndim, shape, NULL, false, &data, &err), QV_OK);
  size_t w = qv_arrow_type_size(type);
  int64_t n = qv_tensor_n_elements(t);
  uint8_t *p = data;
  memset(p, 0, (size_t)n * w);
  for (int64_t i = 0; i < n; i++)
    if ((int)(rnd() % 100) < pct) {
      uint64_t v = rnd() | 1;
      memcpy(p + (size_t)i * w, &v, w);
    }
}

static size_t isz(QvArrowType t) { return qv_arrow_type_size(t); }

/* Same format, types, shape, and byte-identical buffers. */
static void assert_identical(const QvSparseTensor *a, const QvSparseTensor *b) {
  assert_int_equal(a->format, b->format);
  assert_int_equal(a->value_type, b->value_type);
  assert_int_equal(a->index_type, b->index_type);
  assert_int_equal(a->ndim, b->ndim);
  assert_int_equal(a->nnz, b->nnz);
  assert_memory_equal(a->shape, b->shape, (size_t)a->ndim * 8);
  assert_int_equal(a->is_canonical, b->is_canonical);
  int64_t nnz = a->nnz;
  if (nnz > 0) assert_memory_equal(a->values, b->values, (size_t)nnz * isz(a->value_type));
  switch (a->format) {
    case QV_SPARSE_COO:
      assert_memory_equal(a->coords_strides, b->coords_strides, sizeof a->coords_strides);
      if (nnz > 0) assert_memory_equal(a->coords, b->coords, (size_t)(nnz * a->ndim) * isz(a->index_type));
      break;
    case QV_SPARSE_CSR:
    case QV_SPARSE_CSC:
      assert_int_equal(a->indptr_len, b->indptr_len);
      assert_int_equal(a->indices_len, b->indices_len);
      assert_memory_equal(a->indptr, b->indptr, (size_t)a->indptr_len * isz(a->indptr_type));
      if (nnz > 0) assert_memory_equal(a->indices, b->indices, (size_t)a->indices_len * isz(a->index_type));
      break;
    default:
      assert_memory_equal(a->axis_order, b->axis_order, (size_t)a->ndim * 4);
      for (int32_t l = 0; l < a->ndim; l++) {
        assert_int_equal(a->csf_indices_len[l], b->csf_indices_len[l]);
        if (a->csf_indices_len[l] > 0)
          assert_memory_equal(a->csf_indices[l], b->csf_indices[l],
                              (size_t)a->csf_indices_len[l] * isz(a->index_type));
        if (l + 1 < a->ndim) {
          assert_int_equal(a->csf_indptr_len[l], b->csf_indptr_len[l]);
          assert_memory_equal(a->csf_indptr[l], b->csf_indptr[l],
                              (size_t)a->csf_indptr_len[l] * isz(a->indptr_type));
        }
      }
  }
}

static QvSparseOptions ws_options(QvSparseWorkspace *ws, QvArrowType itype) {
  QvSparseOptions o = {.struct_size = sizeof o, .index_type = itype, .workspace = ws};
  return o;
}

/* Every dense -> sparse and sparse -> sparse conversion, three rounds with
 * one workspace: identical to the plain conversion each time; from the
 * second round on nothing new is obtained from the system. */
static void check_all_conversions(QvArrowType vtype, int32_t ndim, const int64_t *shape, int pct,
                                  QvArrowType itype) {
  QvTensor d;
  make_dense(&d, vtype, ndim, shape, pct);
  QvSparseWorkspace *ws;
  QvError err;
  assert_int_equal(qv_sparse_workspace_new(&ws, &err), QV_OK);
  QvSparseOptions plain = {.struct_size = sizeof plain, .index_type = itype};
  QvSparseOptions o = ws_options(ws, itype);
  int64_t allocated_after_first = -1;
  for (int round = 0; round < 3; round++) {
    for (int f = 0; f < 4; f++) {
      QvSparseFormat fmt = kFormats[f];
      if (ndim != 2 && (fmt == QV_SPARSE_CSR || fmt == QV_SPARSE_CSC)) continue;
      QvSparseTensor a, b;
      assert_int_equal(qv_sparse_from_dense(&d, fmt, &plain, &a, &err), QV_OK);
      assert_int_equal(qv_sparse_from_dense(&d, fmt, &o, &b, &err), QV_OK);
      assert_int_equal(qv_sparse_validate(&b, &err), QV_OK);
      assert_identical(&a, &b);
      for (int g = 0; g < 4; g++) {
        QvSparseFormat to = kFormats[g];
        if (ndim != 2 && (to == QV_SPARSE_CSR || to == QV_SPARSE_CSC)) continue;
        QvSparseTensor c, e;
        assert_int_equal(qv_sparse_convert(&a, to, &plain, &c, &err), QV_OK);
        assert_int_equal(qv_sparse_convert(&b, to, &o, &e, &err), QV_OK);
        assert_identical(&c, &e);
        qv_sparse_reset(&c);
        qv_sparse_reset(&e);
      }
      qv_sparse_reset(&a);
      qv_sparse_reset(&b);
    }
    QvSparseWorkspaceStats st;
    qv_sparse_workspace_stats(ws, &st);
    assert_int_equal(st.outstanding, 0);
    if (round == 0) {
      allocated_after_first = st.allocated;
      assert_true(st.allocated > 0);
    } else {
      /* the same conversions again: every buffer comes from the cache */
      assert_int_equal(st.allocated, allocated_after_first);
      assert_true(st.reused > 0);
    }
  }
  qv_sparse_workspace_free(ws);
  qv_tensor_reset(&d);
}

static void test_identical_results(void **state) {
  (void)state;
  static const QvArrowType types[] = {QV_ARROW_INT8, QV_ARROW_FLOAT16, QV_ARROW_INT32, QV_ARROW_FLOAT32,
                                      QV_ARROW_FLOAT64, QV_ARROW_UINT64};
  static const int64_t s_small[2] = {7, 13}, s_empty[2] = {0, 5}, s_mid[2] = {300, 257};
  static const int64_t s_3d[3] = {9, 11, 6};
  for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
    check_all_conversions(types[i], 2, s_small, 30, QV_ARROW_NONE);
    check_all_conversions(types[i], 2, s_mid, 10, QV_ARROW_INT32);
    check_all_conversions(types[i], 3, s_3d, 20, QV_ARROW_NONE);
  }
  check_all_conversions(QV_ARROW_FLOAT64, 2, s_empty, 50, QV_ARROW_NONE);
  /* large enough for the mapped (huge page) buffers and several blocks of
   * the dense -> CSC transpose */
  static const int64_t s_big[2] = {1100, 1500};
  check_all_conversions(QV_ARROW_FLOAT64, 2, s_big, 10, QV_ARROW_NONE);
}

/* A released result's buffers serve the next conversion: the same
 * addresses come back. */
static void test_addresses_reused(void **state) {
  (void)state;
  static const int64_t shape[2] = {1000, 1200};
  QvTensor d;
  make_dense(&d, QV_ARROW_FLOAT64, 2, shape, 10);
  QvSparseWorkspace *ws;
  QvError err;
  assert_int_equal(qv_sparse_workspace_new(&ws, &err), QV_OK);
  QvSparseOptions o = ws_options(ws, QV_ARROW_NONE);
  QvSparseTensor a, b;
  assert_int_equal(qv_sparse_from_dense(&d, QV_SPARSE_CSC, &o, &a, &err), QV_OK);
  const void *old[3] = {a.indptr, a.indices, a.values};
  qv_sparse_reset(&a);
  QvSparseWorkspaceStats st0, st1;
  qv_sparse_workspace_stats(ws, &st0);
  assert_int_equal(st0.outstanding, 0);
  assert_true(st0.cached >= 3);
  assert_true(st0.cached_bytes > (int64_t)(shape[0] * shape[1] / 10) * 16);
  assert_int_equal(qv_sparse_from_dense(&d, QV_SPARSE_CSC, &o, &b, &err), QV_OK);
  /* a large buffer of the new result is one of the old result's (which
   * one, and the small indptr, depend on best fit among the cached blocks:
   * under ASan buffers grow by doubling, so several sizes are cached) */
  const void *now[2] = {b.indices, b.values};
  bool found = false;
  for (int i = 0; i < 2; i++)
    for (int j = 0; j < 3; j++) found = found || now[i] == old[j];
  assert_true(found);
  qv_sparse_workspace_stats(ws, &st1);
  assert_int_equal(st1.allocated, st0.allocated);
  assert_true(st1.reused > st0.reused);
  /* a result kept while converting again: its buffers are not handed out */
  QvSparseTensor c;
  assert_int_equal(qv_sparse_from_dense(&d, QV_SPARSE_CSC, &o, &c, &err), QV_OK);
  assert_ptr_not_equal(c.values, b.values);
  assert_ptr_not_equal(c.indices, b.indices);
  assert_true(qv_sparse_equal(&b, &c));
  assert_true(qv_sparse_equal_dense(&c, &d));
  qv_sparse_reset(&b);
  qv_sparse_reset(&c);
  qv_sparse_workspace_free(ws);
  qv_tensor_reset(&d);
}

/* Results stay valid after qv_sparse_workspace_free; the workspace goes
 * with the last of them (ASan's leak check sees the rest). */
static void test_result_outlives_workspace(void **state) {
  (void)state;
  static const int64_t shape[2] = {800, 900};
  QvTensor d;
  make_dense(&d, QV_ARROW_FLOAT32, 2, shape, 15);
  QvSparseWorkspace *ws;
  QvError err;
  assert_int_equal(qv_sparse_workspace_new(&ws, &err), QV_OK);
  QvSparseOptions o = ws_options(ws, QV_ARROW_NONE);
  QvSparseTensor a, b, warm;
  assert_int_equal(qv_sparse_from_dense(&d, QV_SPARSE_COO, &o, &warm, &err), QV_OK);
  qv_sparse_reset(&warm); /* something in the cache, released by free below */
  assert_int_equal(qv_sparse_from_dense(&d, QV_SPARSE_CSR, &o, &a, &err), QV_OK);
  assert_int_equal(qv_sparse_convert(&a, QV_SPARSE_CSF, &o, &b, &err), QV_OK);
  qv_sparse_workspace_free(ws);
  /* every byte of the results is still readable and right */
  assert_int_equal(qv_sparse_validate(&a, &err), QV_OK);
  assert_int_equal(qv_sparse_validate(&b, &err), QV_OK);
  assert_true(qv_sparse_equal_dense(&a, &d));
  assert_true(qv_sparse_equal_dense(&b, &d));
  qv_sparse_reset(&a);
  assert_true(qv_sparse_equal_dense(&b, &d));
  qv_sparse_reset(&b);
  qv_sparse_workspace_free(NULL);
  qv_sparse_workspace_trim(NULL);
  QvSparseWorkspaceStats st;
  qv_sparse_workspace_stats(NULL, &st);
  assert_int_equal(st.cached, 0);
  qv_tensor_reset(&d);
}

/* A conversion that fails (an index type too small, a limit) gives every
 * buffer back. */
static void test_errors_return_buffers(void **state) {
  (void)state;
  static const int64_t shape[2] = {300, 400};
  QvTensor d;
  make_dense(&d, QV_ARROW_FLOAT64, 2, shape, 10);
  QvSparseWorkspace *ws;
  QvError err;
  assert_int_equal(qv_sparse_workspace_new(&ws, &err), QV_OK);
  for (int f = 0; f < 4; f++) {
    QvSparseOptions o = ws_options(ws, QV_ARROW_INT8);
    QvSparseTensor s;
    assert_int_equal(qv_sparse_from_dense(&d, kFormats[f], &o, &s, &err), QV_EINVAL);
    o.index_type = QV_ARROW_NONE;
    o.max_output_size = 100;
    assert_int_equal(qv_sparse_from_dense(&d, kFormats[f], &o, &s, &err), QV_ELIMIT);
    QvSparseWorkspaceStats st;
    qv_sparse_workspace_stats(ws, &st);
    assert_int_equal(st.outstanding, 0);
  }
  QvSparseWorkspaceStats st;
  qv_sparse_workspace_stats(ws, &st);
  assert_true(st.cached > 0);
  qv_sparse_workspace_trim(ws);
  qv_sparse_workspace_stats(ws, &st);
  assert_int_equal(st.cached, 0);
  assert_int_equal(st.cached_bytes, 0);
  /* usable after a trim: the next conversion obtains fresh buffers */
  int64_t before = st.allocated;
  QvSparseOptions o = ws_options(ws, QV_ARROW_NONE);
  QvSparseTensor s;
  assert_int_equal(qv_sparse_from_dense(&d, QV_SPARSE_CSC, &o, &s, &err), QV_OK);
  qv_sparse_workspace_stats(ws, &st);
  assert_true(st.allocated > before);
  assert_true(qv_sparse_equal_dense(&s, &d));
  qv_sparse_reset(&s);
  qv_sparse_workspace_free(ws);
  qv_tensor_reset(&d);
  assert_int_equal(qv_sparse_workspace_new(NULL, &err), QV_EARG);
}

/* Two threads converting with one workspace at once (documented as
 * allowed: the cache is locked), different sizes so buffers move between
 * them; results released on the other thread. */
typedef struct Job {
  QvSparseWorkspace *ws;
  const QvTensor *dense;
  QvSparseFormat format;
  QvSparseTensor keep[8];
  int failures;
} Job;

static void *run_job(void *arg) {
  Job *j = arg;
  QvSparseOptions o = ws_options(j->ws, QV_ARROW_NONE);
  for (int r = 0; r < 40; r++) {
    QvSparseTensor s;
    QvError err;
    if (qv_sparse_from_dense(j->dense, j->format, &o, &s, &err) != QV_OK || !qv_sparse_equal_dense(&s, j->dense)) {
      j->failures++;
      continue;
    }
    if (r < 8)
      j->keep[r] = s; /* released by the main thread */
    else
      qv_sparse_reset(&s);
  }
  return NULL;
}

static void test_two_threads_one_workspace(void **state) {
  (void)state;
  static const int64_t s1[2] = {400, 500}, s2[2] = {130, 70};
  QvTensor d1, d2;
  make_dense(&d1, QV_ARROW_FLOAT64, 2, s1, 10);
  make_dense(&d2, QV_ARROW_INT16, 2, s2, 40);
  QvSparseWorkspace *ws;
  QvError err;
  assert_int_equal(qv_sparse_workspace_new(&ws, &err), QV_OK);
  Job a = {.ws = ws, .dense = &d1, .format = QV_SPARSE_CSC};
  Job b = {.ws = ws, .dense = &d2, .format = QV_SPARSE_COO};
  pthread_t ta, tb;
  assert_int_equal(pthread_create(&ta, NULL, run_job, &a), 0);
  assert_int_equal(pthread_create(&tb, NULL, run_job, &b), 0);
  pthread_join(ta, NULL);
  pthread_join(tb, NULL);
  assert_int_equal(a.failures, 0);
  assert_int_equal(b.failures, 0);
  QvSparseWorkspaceStats st;
  qv_sparse_workspace_stats(ws, &st);
  assert_true(st.reused > 0);
  assert_true(st.outstanding > 0);
  qv_sparse_workspace_free(ws); /* results still held: the workspace waits for them */
  for (int i = 0; i < 8; i++) {
    assert_true(qv_sparse_equal_dense(&a.keep[i], &d1));
    assert_true(qv_sparse_equal_dense(&b.keep[i], &d2));
    qv_sparse_reset(&a.keep[i]);
    qv_sparse_reset(&b.keep[i]);
  }
  qv_tensor_reset(&d1);
  qv_tensor_reset(&d2);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_identical_results),
      cmocka_unit_test(test_addresses_reused),
      cmocka_unit_test(test_result_outlives_workspace),
      cmocka_unit_test(test_errors_return_buffers),
      cmocka_unit_test(test_two_threads_one_workspace),
  };
  return qv_test_run(tests, NULL, NULL);
}
