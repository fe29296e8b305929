/* QvSparseOptions.threads: COO -> CSR/CSC and CSR <-> CSC on several
 * threads give the one-thread output byte for byte (indptr, indices,
 * values), for every value width, with and without duplicates, skewed
 * and empty rows, and the threaded path really ran (its counter); sparse ->
 * dense likewise (qv_sparse_to_dense's options), and dense -> CSR/CSC/COO
 * (qv_sparse_from_dense's options) along and across the memory order. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "quiver/advanced.h"
#include "quiver/buffer.h"
#include "quiver/sparse.h"
#include "sparse/sparse_seal.h"
#include "test_util.h"
#include "util/cpu.h"
#include "util/load.h"

#include "test_sparse_fixture.h"

/* COO -> f with 1, 2, 3 and 4 threads: identical, threaded path counted;
 * then CSR <-> CSC of the result, the same. */
static void check_case(QvArrowType vt, int64_t n, int64_t rows, int64_t cols, bool skew, uint64_t seed) {
  Coo c;
  make_coo(&c, vt, n, rows, cols, skew, seed);
  QvError err;
  for (int fi = 0; fi < 2; fi++) {
    QvSparseFormat f = fi == 0 ? QV_SPARSE_CSR : QV_SPARSE_CSC;
    QvSparseTensor ref, flip_ref;
    uint64_t before = qvi_path_count(QV_PATH_SPARSE_THREADS);
    assert_int_equal(convert(&c.t, f, 1, QV_ARROW_NONE, &ref, &err), QV_OK);
    assert_int_equal(qvi_path_count(QV_PATH_SPARSE_THREADS), before);
    assert_true(ref.nnz < n); /* duplicates were summed */
    QvSparseFormat g = f == QV_SPARSE_CSR ? QV_SPARSE_CSC : QV_SPARSE_CSR;
    /* a bucketed transpose counts its buckets over the keys as one flat
     * array, on one thread as on several */
    bool bucketed = ref.nnz >= (1 << 18) && c.shape[g == QV_SPARSE_CSR ? 0 : 1] > 4096;
    uint64_t flat = qvi_path_count(QV_PATH_SPARSE_FLAT_COUNT);
    assert_int_equal(convert(&ref, g, 1, QV_ARROW_NONE, &flip_ref, &err), QV_OK);
    assert_int_equal(qvi_path_count(QV_PATH_SPARSE_FLAT_COUNT) > flat, bucketed);
    for (int threads = 2; threads <= 4; threads++) {
      QvSparseTensor got, flip;
      before = qvi_path_count(QV_PATH_SPARSE_THREADS);
      assert_int_equal(convert(&c.t, f, threads, QV_ARROW_NONE, &got, &err), QV_OK);
      /* split when large: 2^18 entries, over 4096 keys (output majors) */
      bool split = n >= (1 << 18) && c.shape[f == QV_SPARSE_CSR ? 0 : 1] > 4096;
      assert_int_equal(qvi_path_count(QV_PATH_SPARSE_THREADS) > before, split);
      assert_same_csx(&got, &ref);
      before = qvi_path_count(QV_PATH_SPARSE_THREADS);
      flat = qvi_path_count(QV_PATH_SPARSE_FLAT_COUNT);
      assert_int_equal(convert(&got, g, threads, QV_ARROW_NONE, &flip, &err), QV_OK);
      split = got.nnz >= (1 << 18) && c.shape[g == QV_SPARSE_CSR ? 0 : 1] > 4096;
      assert_int_equal(qvi_path_count(QV_PATH_SPARSE_THREADS) > before, split);
      assert_int_equal(qvi_path_count(QV_PATH_SPARSE_FLAT_COUNT) > flat, bucketed);
      assert_same_csx(&flip, &flip_ref);
      qv_sparse_reset(&got);
      qv_sparse_reset(&flip);
    }
    /* narrower output indices go through the same grouping */
    QvSparseTensor r32, g32;
    assert_int_equal(convert(&c.t, f, 1, QV_ARROW_INT32, &r32, &err), QV_OK);
    assert_int_equal(convert(&c.t, f, 2, QV_ARROW_INT32, &g32, &err), QV_OK);
    assert_same_csx(&g32, &r32);
    qv_sparse_reset(&r32);
    qv_sparse_reset(&g32);
    if (vt != QV_ARROW_FLOAT64 && vt != QV_ARROW_FLOAT32 && vt != QV_ARROW_FLOAT16)
      assert_true(qv_sparse_equal(&c.t, &ref)); /* integer sums: exact whatever the order */
    assert_true(qv_sparse_equal(&ref, &flip_ref));
    qv_sparse_reset(&ref);
    qv_sparse_reset(&flip_ref);
  }
  free_coo(&c);
}

static void test_float64(void **state) {
  (void)state;
  check_case(QV_ARROW_FLOAT64, 400000, 1000000, 1000000, false, 0x9e3779b97f4a7c15u);
}

static void test_value_widths(void **state) {
  (void)state;
  check_case(QV_ARROW_INT8, 300000, 50000, 70000, false, 1);
  check_case(QV_ARROW_FLOAT16, 300000, 50000, 70000, false, 2);
  check_case(QV_ARROW_FLOAT32, 300000, 50000, 70000, false, 3);
  check_case(QV_ARROW_INT64, 300000, 50000, 70000, false, 4);
}

static void test_heavy_duplicates_and_skew(void **state) {
  (void)state;
  /* 16 columns: nearly every entry a duplicate; then half in one row */
  check_case(QV_ARROW_INT32, 300000, 8192, 16, false, 5);
  check_case(QV_ARROW_FLOAT64, 300000, 20000, 5000, true, 6);
  /* rows past the last entry stay empty (ptr runs to nnz) */
  check_case(QV_ARROW_INT16, 300000, 3000000, 40, false, 7);
}

static void test_bad_options_and_input(void **state) {
  (void)state;
  Coo c;
  make_coo(&c, QV_ARROW_FLOAT64, 300000, 10000, 10000, false, 8);
  QvSparseTensor out;
  QvError err;
  assert_int_equal(convert(&c.t, QV_SPARSE_CSR, -1, QV_ARROW_NONE, &out, &err), QV_EARG);
  assert_int_equal(convert(&c.t, QV_SPARSE_CSR, QV_SPARSE_MAX_THREADS + 1, QV_ARROW_NONE, &out, &err), QV_EARG);
  assert_non_null(strstr(err.message, "threads"));
  assert_int_equal(convert(&c.t, QV_SPARSE_CSR, QV_SPARSE_MAX_THREADS, QV_ARROW_NONE, &out, &err), QV_OK);
  qv_sparse_reset(&out);
  /* a coordinate outside the shape, late in the input: one message for
   * every thread count */
  c.coords[2 * 299990 + 1] = 10000;
  QvError e1, e2;
  assert_int_equal(convert(&c.t, QV_SPARSE_CSR, 1, QV_ARROW_NONE, &out, &e1), QV_EINVAL);
  assert_int_equal(convert(&c.t, QV_SPARSE_CSR, 2, QV_ARROW_NONE, &out, &e2), QV_EINVAL);
  assert_string_equal(e1.message, e2.message);
  assert_null(out.private_data);
  free_coo(&c);
}

static void test_small_input_one_thread(void **state) {
  (void)state;
  Coo c;
  make_coo(&c, QV_ARROW_FLOAT64, 1000, 10000, 10000, false, 9);
  QvSparseTensor a, b;
  QvError err;
  uint64_t before = qvi_path_count(QV_PATH_SPARSE_THREADS);
  assert_int_equal(convert(&c.t, QV_SPARSE_CSR, 4, QV_ARROW_NONE, &a, &err), QV_OK);
  assert_int_equal(qvi_path_count(QV_PATH_SPARSE_THREADS), before);
  assert_int_equal(convert(&c.t, QV_SPARSE_CSR, 1, QV_ARROW_NONE, &b, &err), QV_OK);
  assert_same_csx(&a, &b);
  qv_sparse_reset(&a);
  qv_sparse_reset(&b);
  free_coo(&c);
}

/* sparse -> dense of t with 1..4 threads, allocated and into a caller's
 * buffer (first filled with garbage): the same bytes every time, the split
 * counted exactly when `split`. */
static void check_dense(const QvSparseTensor *t, bool split) {
  QvError err;
  QvTensor ref;
  uint64_t before = qvi_path_count(QV_PATH_SPARSE_DENSE_THREADS);
  assert_int_equal(qv_sparse_to_dense(t, NULL, &ref, &err), QV_OK);
  assert_int_equal(qvi_path_count(QV_PATH_SPARSE_DENSE_THREADS), before);
  size_t bytes = (size_t)qv_tensor_n_elements(&ref) * qv_arrow_type_size(ref.type);
  uint8_t *buf = malloc(bytes);
  assert_non_null(buf);
  for (int threads = 1; threads <= 4; threads++) {
    QvSparseOptions o = {.struct_size = sizeof o, .threads = threads};
    QvTensor got;
    before = qvi_path_count(QV_PATH_SPARSE_DENSE_THREADS);
    assert_int_equal(qv_sparse_to_dense(t, &o, &got, &err), QV_OK);
    assert_int_equal(qvi_path_count(QV_PATH_SPARSE_DENSE_THREADS) > before, split && threads > 1);
    assert_memory_equal(got.data, ref.data, bytes);
    qv_tensor_reset(&got);
    memset(buf, 0xa5, bytes);
    before = qvi_path_count(QV_PATH_SPARSE_DENSE_THREADS);
    assert_int_equal(qv_sparse_to_dense_into(t, buf, bytes, &o, &err), QV_OK);
    assert_int_equal(qvi_path_count(QV_PATH_SPARSE_DENSE_THREADS) > before, split && threads > 1);
    assert_memory_equal(buf, ref.data, bytes);
  }
  free(buf);
  qv_tensor_reset(&ref);
}

/* CSR, CSC and canonical COO split their scatter; a COO with duplicates
 * (summed in entry order) and CSF stay on one thread, with equal bytes. */
static void test_to_dense_threads(void **state) {
  (void)state;
  Coo c;
  make_coo(&c, QV_ARROW_FLOAT64, 320000, 2500, 1500, false, 10);
  QvError err;
  check_dense(&c.t, false); /* duplicates: one thread */
  static const QvSparseFormat fs[] = {QV_SPARSE_CSR, QV_SPARSE_CSC, QV_SPARSE_COO, QV_SPARSE_CSF};
  for (size_t k = 0; k < sizeof fs / sizeof fs[0]; k++) {
    QvSparseTensor s;
    assert_int_equal(convert(&c.t, fs[k], 1, QV_ARROW_NONE, &s, &err), QV_OK);
    assert_true(s.nnz >= (1 << 18));
    check_dense(&s, fs[k] != QV_SPARSE_CSF);
    qv_sparse_reset(&s);
  }
  /* small: one thread whatever the option */
  Coo small;
  make_coo(&small, QV_ARROW_INT32, 1000, 300, 200, false, 11);
  QvSparseTensor s;
  assert_int_equal(convert(&small.t, QV_SPARSE_CSR, 1, QV_ARROW_NONE, &s, &err), QV_OK);
  check_dense(&s, false);
  /* the thread count is checked as for every conversion */
  QvSparseOptions bad = {.struct_size = sizeof bad, .threads = -1};
  QvTensor d;
  int32_t buf[300 * 200];
  assert_int_equal(qv_sparse_to_dense(&s, &bad, &d, &err), QV_EARG);
  assert_non_null(strstr(err.message, "threads"));
  assert_int_equal(qv_sparse_to_dense_into(&s, buf, sizeof buf, &bad, &err), QV_EARG);
  bad.threads = QV_SPARSE_MAX_THREADS + 1;
  assert_int_equal(qv_sparse_to_dense_into(&s, buf, sizeof buf, &bad, &err), QV_EARG);
  qv_sparse_reset(&s);
  free_coo(&small);
  free_coo(&c);
}

/* Same sparse tensor, byte for byte: CSX buffers, or COO coordinates
 * (through their strides) and values. */
static void assert_same_sparse(const QvSparseTensor *a, const QvSparseTensor *b) {
  size_t is = qv_arrow_type_size(a->index_type);
  if (a->format == QV_SPARSE_CSF) {
    assert_int_equal(b->format, QV_SPARSE_CSF);
    assert_int_equal(a->nnz, b->nnz);
    assert_int_equal(a->index_type, b->index_type);
    for (int l = 0; l < a->ndim; l++) {
      assert_int_equal(a->csf_indices_len[l], b->csf_indices_len[l]);
      assert_memory_equal(a->csf_indices[l], b->csf_indices[l], (size_t)a->csf_indices_len[l] * is);
      if (l + 1 == a->ndim) break;
      assert_int_equal(a->csf_indptr_len[l], b->csf_indptr_len[l]);
      assert_memory_equal(a->csf_indptr[l], b->csf_indptr[l], (size_t)a->csf_indptr_len[l] * is);
    }
    assert_memory_equal(a->values, b->values, (size_t)a->nnz * qv_arrow_type_size(a->value_type));
    return;
  }
  if (a->format != QV_SPARSE_COO) {
    assert_same_csx(a, b);
    return;
  }
  assert_int_equal(b->format, QV_SPARSE_COO);
  assert_int_equal(a->nnz, b->nnz);
  assert_int_equal(a->index_type, b->index_type);
  for (int64_t i = 0; i < a->nnz; i++)
    for (int d = 0; d < a->ndim; d++)
      assert_int_equal(qv_index_load(a->coords + i * a->coords_strides[0] + d * a->coords_strides[1],
                                     a->index_type, 0),
                       qv_index_load(b->coords + i * b->coords_strides[0] + d * b->coords_strides[1],
                                     b->index_type, 0));
  assert_memory_equal(a->values, b->values, (size_t)a->nnz * qv_arrow_type_size(a->value_type));
}

/* A rows x cols dense tensor (row-major, or column-major when `colmajor`),
 * lines padded by `pad` elements: about one element in `one_in` non-zero
 * (random bits), rows [rows / 8, rows / 4) and column 3 all zero, row 5
 * and column 1 full (a skewed line and a skewed major). Float types also
 * get -0.0 in about one zero in 64 (a zero: never an entry, also inside
 * the all-zero rows and column) and a NaN in about one non-zero in 32 (an
 * entry, its bits kept). */
typedef struct Dense {
  int64_t shape[2], strides[2];
  uint8_t *data;
  QvTensor t;
} Dense;

/* A float32/float64 element of the given bits, in host order. */
static void put_float_bits(uint8_t *at, size_t vs, uint64_t bits) {
  if (vs == 8) {
    memcpy(at, &bits, 8);
  } else {
    uint32_t b = (uint32_t)bits;
    memcpy(at, &b, 4);
  }
}

static void make_dense(Dense *d, QvArrowType vt, int64_t rows, int64_t cols, bool colmajor, int64_t pad,
                       unsigned one_in, uint64_t seed) {
  rng_state = seed;
  size_t vs = qv_arrow_type_size(vt);
  bool fl = vt == QV_ARROW_FLOAT64 || vt == QV_ARROW_FLOAT32;
  int64_t inner = colmajor ? rows : cols, outer = colmajor ? cols : rows, line = inner + pad;
  d->shape[0] = rows;
  d->shape[1] = cols;
  d->strides[colmajor ? 1 : 0] = line * (int64_t)vs;
  d->strides[colmajor ? 0 : 1] = (int64_t)vs;
  size_t bytes = (size_t)(outer * line) * vs;
  d->data = calloc(bytes, 1);
  assert_non_null(d->data);
  for (int64_t r = 0; r < rows; r++) {
    for (int64_t c = 0; c < cols; c++) {
      bool on = r == 5 || c == 1 || rnd() % one_in == 0;
      uint8_t *at = d->data + r * d->strides[0] + c * d->strides[1];
      if (!on || (r >= rows / 8 && r < rows / 4) || c == 3) {
        if (fl && rnd() % 64 == 0) put_float_bits(at, vs, (uint64_t)1 << (8 * vs - 1)); /* -0.0 */
        continue;
      }
      uint64_t bits = rnd() | 1; /* odd: never a zero of any type */
      if (fl && rnd() % 32 == 0) {
        /* exponent all ones, odd mantissa: a NaN */
        put_float_bits(at, vs, vs == 8 ? bits | UINT64_C(0x7ff0000000000000) : (bits & 0xffffffffu) | 0x7f800000u);
        continue;
      }
      memcpy(at, &bits, vs);
    }
  }
  d->t = (QvTensor){.type = vt, .ndim = 2, .shape = d->shape, .strides = d->strides, .data = d->data,
                    .data_size = (int64_t)bytes};
}

/* dense -> CSR, CSC and COO (default and int32 indices) on 1..4 threads:
 * the one-thread bytes; the threaded scan (along the memory order, and
 * every COO: the entries are scanned in memory order, then sorted) or
 * strip sort (across it) counted exactly when `split` and threads > 1. */
static void check_from_dense(const Dense *d, bool colmajor, bool split) {
  static const QvSparseFormat fs[] = {QV_SPARSE_CSR, QV_SPARSE_CSC, QV_SPARSE_COO};
  QvError err;
  for (size_t k = 0; k < 3; k++) {
    bool along = fs[k] == QV_SPARSE_COO || (fs[k] == QV_SPARSE_CSC) == colmajor;
    QvPath path = along ? QV_PATH_DENSE_SCAN_THREADS : QV_PATH_DENSE_ACROSS_THREADS;
    for (int it = 0; it < 2; it++) {
      QvArrowType itype = it == 0 ? QV_ARROW_NONE : QV_ARROW_INT32;
      QvSparseOptions o1 = {.struct_size = sizeof o1, .index_type = itype, .threads = 1};
      QvSparseTensor ref;
      uint64_t before = qvi_path_count(path);
      assert_int_equal(qv_sparse_from_dense(&d->t, fs[k], &o1, &ref, &err), QV_OK);
      assert_int_equal(qvi_path_count(path), before);
      for (int threads = 2; threads <= 4; threads++) {
        QvSparseOptions o = {.struct_size = sizeof o, .index_type = itype, .threads = threads};
        QvSparseTensor got;
        before = qvi_path_count(path);
        assert_int_equal(qv_sparse_from_dense(&d->t, fs[k], &o, &got, &err), QV_OK);
        if ((qvi_path_count(path) > before) != split)
          fail_msg("format %d, index type %d, %d threads: threaded path %s", (int)fs[k], (int)itype, threads,
                   split ? "not counted" : "counted");
        assert_same_sparse(&got, &ref);
        qv_sparse_reset(&got);
      }
      /* with a workspace (the calling thread's buffers come from it, what
       * a worker grows from the system), twice, the second run on the
       * first's recycled buffers: the same bytes */
      if (split) {
        QvSparseWorkspace *ws = NULL;
        assert_int_equal(qv_sparse_workspace_new(&ws, &err), QV_OK);
        for (int run = 0; run < 2; run++) {
          QvSparseOptions ow = {.struct_size = sizeof ow, .index_type = itype, .threads = 3, .workspace = ws};
          QvSparseTensor got;
          assert_int_equal(qv_sparse_from_dense(&d->t, fs[k], &ow, &got, &err), QV_OK);
          assert_same_sparse(&got, &ref);
          qv_sparse_reset(&got);
        }
        qv_sparse_workspace_free(ws);
      }
      /* -0.0 is no entry (a kept one would count here), and it is the
       * dense tensor: back to dense, compared by value, NaNs equal */
      if (it == 0) {
        assert_int_equal(ref.nnz, qv_tensor_count_nonzero(&d->t));
        QvTensor back;
        assert_int_equal(qv_sparse_to_dense(&ref, NULL, &back, &err), QV_OK);
        assert_true(qv_tensor_equal(&back, &d->t, true));
        qv_tensor_reset(&back);
      }
      qv_sparse_reset(&ref);
    }
  }
}

static void test_from_dense_threads(void **state) {
  (void)state;
  static const QvArrowType vts[] = {QV_ARROW_FLOAT64, QV_ARROW_INT8, QV_ARROW_UINT16, QV_ARROW_FLOAT32};
  for (int cm = 0; cm < 2; cm++) {
    for (size_t v = 0; v < sizeof vts / sizeof vts[0]; v++) {
      Dense d;
      /* 1.2 M elements: 4 parts; padded lines for the wider types */
      make_dense(&d, vts[v], 1500, 800, cm == 1, v % 2 == 0 ? 0 : 7, 10, 20 + v + 10 * (uint64_t)cm);
      check_from_dense(&d, cm == 1, true);
      free(d.data);
    }
  }
  /* dense enough that a part holds most of its elements; and very sparse */
  Dense d;
  make_dense(&d, QV_ARROW_INT32, 900, 1300, false, 0, 1, 31);
  check_from_dense(&d, false, true);
  free(d.data);
  make_dense(&d, QV_ARROW_INT64, 3000, 300, true, 0, 5000, 32);
  check_from_dense(&d, true, true);
  free(d.data);
  /* few lines, many majors (a part per line) and more threads than lines */
  make_dense(&d, QV_ARROW_FLOAT64, 3, 300000, false, 0, 10, 33);
  check_from_dense(&d, false, true);
  free(d.data);
  /* small: one thread whatever the option */
  make_dense(&d, QV_ARROW_FLOAT64, 300, 200, false, 0, 10, 34);
  check_from_dense(&d, false, false);
  free(d.data);
}

/* A 3-D dense tensor (and 2-D CSF): COO and CSF on 1..4 threads give the
 * one-thread bytes; the entries scan split along the outermost dim with
 * more than one index (here behind a leading extent-1 dim). */
static void test_from_dense_nd_threads(void **state) {
  (void)state;
  int64_t shape[4] = {1, 70, 90, 110};
  int64_t strides[4] = {70 * 90 * 110 * 2, 90 * 110 * 2, 110 * 2, 2};
  size_t n = 70 * 90 * 110;
  uint16_t *data = calloc(n, 2);
  assert_non_null(data);
  rng_state = 41;
  for (size_t i = 0; i < n; i++)
    if (rnd() % 7 == 0 || (i >= 5000 && i < 7000)) data[i] = (uint16_t)(rnd() | 1);
  for (size_t i = 100000; i < 300000; i++) data[i] = 0; /* an empty slab */
  QvTensor t = {.type = QV_ARROW_UINT16, .ndim = 4, .shape = shape, .strides = strides, .data = (uint8_t *)data,
                .data_size = (int64_t)n * 2};
  static const QvSparseFormat fs[] = {QV_SPARSE_COO, QV_SPARSE_CSF};
  QvError err;
  for (size_t k = 0; k < 2; k++) {
    QvSparseTensor ref;
    QvSparseOptions o1 = {.struct_size = sizeof o1, .threads = 1};
    uint64_t before = qvi_path_count(QV_PATH_DENSE_SCAN_THREADS);
    assert_int_equal(qv_sparse_from_dense(&t, fs[k], &o1, &ref, &err), QV_OK);
    assert_int_equal(qvi_path_count(QV_PATH_DENSE_SCAN_THREADS), before);
    for (int threads = 2; threads <= 4; threads++) {
      QvSparseOptions o = {.struct_size = sizeof o, .threads = threads};
      QvSparseTensor got;
      before = qvi_path_count(QV_PATH_DENSE_SCAN_THREADS);
      assert_int_equal(qv_sparse_from_dense(&t, fs[k], &o, &got, &err), QV_OK);
      assert_true(qvi_path_count(QV_PATH_DENSE_SCAN_THREADS) > before);
      assert_same_sparse(&got, &ref);
      qv_sparse_reset(&got);
    }
    QvTensor back;
    assert_int_equal(qv_sparse_to_dense(&ref, NULL, &back, &err), QV_OK);
    assert_true(qv_tensor_equal(&back, &t, false));
    qv_tensor_reset(&back);
    qv_sparse_reset(&ref);
  }
  /* a 2-D CSF goes through the CSX scan */
  Dense d;
  make_dense(&d, QV_ARROW_FLOAT32, 1200, 700, false, 0, 10, 42);
  QvSparseTensor ref, got;
  QvSparseOptions o1 = {.struct_size = sizeof o1, .threads = 1}, o3 = {.struct_size = sizeof o3, .threads = 3};
  assert_int_equal(qv_sparse_from_dense(&d.t, QV_SPARSE_CSF, &o1, &ref, &err), QV_OK);
  uint64_t before = qvi_path_count(QV_PATH_DENSE_SCAN_THREADS);
  assert_int_equal(qv_sparse_from_dense(&d.t, QV_SPARSE_CSF, &o3, &got, &err), QV_OK);
  assert_true(qvi_path_count(QV_PATH_DENSE_SCAN_THREADS) > before);
  assert_same_sparse(&got, &ref);
  qv_sparse_reset(&got);
  qv_sparse_reset(&ref);
  free(d.data);
  free(data);
}

/* Summing duplicates (qv_sparse_canonicalize) on 1..4 threads: the same
 * coordinates and values, the split counted. */
static void test_canonicalize_threads(void **state) {
  (void)state;
  Coo c;
  make_coo(&c, QV_ARROW_FLOAT64, 300000, 200000, 150000, false, 12);
  QvError err;
  QvSparseTensor ref;
  uint64_t before = qvi_path_count(QV_PATH_SPARSE_THREADS);
  assert_int_equal(qv_sparse_canonicalize(&c.t, NULL, &ref, &err), QV_OK);
  assert_int_equal(qvi_path_count(QV_PATH_SPARSE_THREADS), before);
  assert_true(ref.is_canonical);
  assert_true(ref.nnz < 300000);
  assert_int_equal(ref.index_type, QV_ARROW_INT64);
  for (int threads = 2; threads <= 4; threads++) {
    QvSparseOptions o = {.struct_size = sizeof o, .threads = threads};
    QvSparseTensor got;
    before = qvi_path_count(QV_PATH_SPARSE_THREADS);
    assert_int_equal(qv_sparse_canonicalize(&c.t, &o, &got, &err), QV_OK);
    assert_true(qvi_path_count(QV_PATH_SPARSE_THREADS) > before);
    assert_int_equal(got.nnz, ref.nnz);
    assert_int_equal(got.index_type, ref.index_type);
    for (int64_t i = 0; i < ref.nnz; i++)
      for (int d = 0; d < 2; d++)
        assert_int_equal(qv_index_load(got.coords + i * got.coords_strides[0] + d * got.coords_strides[1],
                                       got.index_type, 0),
                         qv_index_load(ref.coords + i * ref.coords_strides[0] + d * ref.coords_strides[1],
                                       ref.index_type, 0));
    assert_memory_equal(got.values, ref.values, (size_t)ref.nnz * 8);
    qv_sparse_reset(&got);
  }
  /* an index type asked for is honoured; bad thread counts refused */
  QvSparseOptions o32 = {.struct_size = sizeof o32, .index_type = QV_ARROW_INT32, .threads = 2};
  QvSparseTensor n32;
  assert_int_equal(qv_sparse_canonicalize(&c.t, &o32, &n32, &err), QV_OK);
  assert_int_equal(n32.index_type, QV_ARROW_INT32);
  assert_true(qv_sparse_equal(&n32, &ref));
  qv_sparse_reset(&n32);
  QvSparseOptions bad = {.struct_size = sizeof bad, .threads = -1};
  assert_int_equal(qv_sparse_canonicalize(&c.t, &bad, &n32, &err), QV_EARG);
  assert_null(n32.private_data);
  qv_sparse_reset(&ref);
  free_coo(&c);
}

/* Converts in -> f on `threads` threads; returns the status and whether
 * qv_sparse_convert's validation pass ran (its counter), checking that the
 * sealed path was counted exactly when it did not. */
static QvStatus convert_counted(const QvSparseTensor *in, QvSparseFormat f, int threads, QvSparseTensor *out,
                                bool *validated, QvError *err) {
  uint64_t v0 = qvi_path_count(QV_PATH_SPARSE_CONVERT_VALIDATED);
  uint64_t s0 = qvi_path_count(QV_PATH_SPARSE_CONVERT_SEALED);
  QvStatus st = convert(in, f, threads, QV_ARROW_NONE, out, err);
  *validated = qvi_path_count(QV_PATH_SPARSE_CONVERT_VALIDATED) > v0;
  bool skipped = qvi_path_count(QV_PATH_SPARSE_CONVERT_SEALED) > s0;
  assert_true(*validated != skipped);
  return st;
}

/* A conversion's result is sealed, and converting it again skips the
 * validation pass; a tensor the caller wraps (qv_sparse_init over the same
 * buffers) or edits is validated, and refused when wrong. CSF results stay
 * unsealed. */
static void test_convert_sealed_input(void **state) {
  (void)state;
  Coo c;
  make_coo(&c, QV_ARROW_FLOAT64, 300000, 20000, 30000, false, 13);
  QvError err;
  bool validated;
  QvSparseTensor csr, csc, ref;
  assert_false(qvi_sp_sealed(&c.t)); /* caller memory */
  assert_int_equal(convert_counted(&c.t, QV_SPARSE_CSR, 2, &csr, &validated, &err), QV_OK);
  assert_true(validated);
  assert_true(qvi_sp_sealed(&csr));
  for (int threads = 1; threads <= 2; threads++) {
    assert_int_equal(convert_counted(&csr, QV_SPARSE_CSC, threads, &csc, &validated, &err), QV_OK);
    assert_false(validated);
    assert_true(qvi_sp_sealed(&csc));
    qv_sparse_reset(&csc);
  }
  /* the caller's view of the same buffers: validated, the same result */
  QvSparseTensor view;
  QvSparseDesc d = {.format = QV_SPARSE_CSR, .value_type = csr.value_type, .index_type = csr.index_type,
                    .indptr_type = csr.indptr_type, .ndim = 2, .shape = csr.shape, .nnz = csr.nnz,
                    .values = csr.values, .indptr = csr.indptr, .indices = csr.indices};
  assert_int_equal(qv_sparse_init(&view, &d, &err), QV_OK);
  assert_false(qvi_sp_sealed(&view));
  assert_int_equal(convert_counted(&view, QV_SPARSE_CSC, 2, &ref, &validated, &err), QV_OK);
  assert_true(validated);
  assert_int_equal(convert_counted(&csr, QV_SPARSE_CSC, 2, &csc, &validated, &err), QV_OK);
  assert_same_csx(&csc, &ref);
  qv_sparse_reset(&csc);
  qv_sparse_reset(&ref);
  qv_sparse_reset(&view);
  /* a wrapped copy with a column out of range, and edits of the sealed
   * struct: validated and refused */
  size_t is = qv_arrow_type_size(csr.index_type);
  uint8_t *bad = malloc((size_t)csr.nnz * is);
  assert_non_null(bad);
  memcpy(bad, csr.indices, (size_t)csr.nnz * is);
  int64_t big = 30000;
  memcpy(bad + (size_t)(csr.nnz / 2) * is, &big, is);
  d.indices = bad;
  assert_int_equal(qv_sparse_init(&view, &d, &err), QV_EINVAL); /* init validates too */
  QvSparseTensor u = csr;
  u.indices = bad;
  assert_false(qvi_sp_sealed(&u));
  assert_int_equal(convert_counted(&u, QV_SPARSE_CSC, 2, &csc, &validated, &err), QV_EINVAL);
  assert_true(validated);
  assert_non_null(strstr(err.message, "30000"));
  u = csr;
  u.nnz = csr.nnz - 1; /* indptr now ends past nnz */
  assert_int_equal(convert_counted(&u, QV_SPARSE_CSC, 1, &csc, &validated, &err), QV_EINVAL);
  assert_true(validated);
  free(bad);
  /* from dense, canonicalize and cast: sealed; CSF: not */
  int64_t shape[2] = {3, 4};
  double dense[12] = {0, 1, 0, 2, 3, 0, 0, 0, 0, 0, 4, 5};
  int64_t strides[2] = {32, 8};
  QvTensor dt = {.type = QV_ARROW_FLOAT64, .ndim = 2, .shape = shape, .strides = strides, .data = (uint8_t *)dense,
                 .data_size = sizeof dense};
  static const QvSparseFormat fs[] = {QV_SPARSE_COO, QV_SPARSE_CSR, QV_SPARSE_CSC, QV_SPARSE_CSF};
  for (size_t k = 0; k < 4; k++) {
    QvSparseTensor s, back;
    assert_int_equal(qv_sparse_from_dense(&dt, fs[k], NULL, &s, &err), QV_OK);
    assert_int_equal(qvi_sp_sealed(&s), fs[k] != QV_SPARSE_CSF);
    assert_int_equal(convert_counted(&s, QV_SPARSE_CSR, 1, &back, &validated, &err), QV_OK);
    assert_int_equal(validated, fs[k] == QV_SPARSE_CSF);
    assert_true(qv_sparse_equal_dense(&back, &dt));
    qv_sparse_reset(&back);
    QvSparseTensor cast;
    assert_int_equal(qv_sparse_cast(&s, QV_ARROW_INT32, &cast, &err), QV_OK);
    assert_int_equal(qvi_sp_sealed(&cast), fs[k] != QV_SPARSE_CSF);
    qv_sparse_reset(&cast);
    qv_sparse_reset(&s);
  }
  QvSparseTensor canon;
  assert_int_equal(qv_sparse_canonicalize(&c.t, NULL, &canon, &err), QV_OK);
  assert_true(qvi_sp_sealed(&canon));
  qv_sparse_reset(&canon);
  qv_sparse_reset(&csr);
  free_coo(&c);
}

/* A CSR (indptr and indices of type itype) of `rows` x `cols`: row 7 holds
 * about 3/4 of the columns (most of the entries), rows [100, 500) are
 * empty, columns [1000, 2000) too, other rows a sorted run of random
 * columns each. */
typedef struct Csr {
  int64_t shape[2];
  uint8_t *ptr, *idx, *val;
  QvSparseTensor t;
} Csr;

static void make_csr(Csr *c, QvArrowType vt, QvArrowType itype, int64_t rows, int64_t cols, uint64_t seed) {
  rng_state = seed;
  size_t is = qv_arrow_type_size(itype), vs = qv_arrow_type_size(vt);
  int64_t cap = cols + rows * 40, n = 0;
  c->shape[0] = rows;
  c->shape[1] = cols;
  c->ptr = malloc((size_t)(rows + 1) * is);
  c->idx = malloc((size_t)cap * is);
  c->val = malloc((size_t)cap * vs);
  assert_true(c->ptr && c->idx && c->val);
  for (int64_t r = 0; r <= rows; r++) {
    qvi_st_bits(c->ptr + (size_t)r * is, is, (uint64_t)n);
    if (r == rows || (r >= 100 && r < 500)) continue;
    for (int64_t k = r == 7 ? 0 : (int64_t)(rnd() % 64); k < cols && n < cap;
         k += r == 7 ? 1 : 1 + (int64_t)(rnd() % (uint64_t)(cols / 12))) {
      if ((k >= 1000 && k < 2000) || (r == 7 && rnd() % 4 == 0)) continue;
      qvi_st_bits(c->idx + (size_t)n * is, is, (uint64_t)k);
      qvi_st_bits(c->val + (size_t)n * vs, vs, rnd() | 1);
      n++;
    }
  }
  QvError err;
  QvStatus st = qv_sparse_init(&c->t,
                               &(QvSparseDesc){.format = QV_SPARSE_CSR, .value_type = vt, .index_type = itype,
                                               .indptr_type = itype, .ndim = 2, .shape = c->shape, .nnz = n,
                                               .indptr = c->ptr, .indices = c->idx, .values = c->val},
                               &err);
  if (st != QV_OK) fail_msg("%s", err.message);
}

static void free_csr(Csr *c) {
  qv_sparse_reset(&c->t);
  free(c->ptr);
  free(c->idx);
  free(c->val);
}

/* CSR -> CSC with one dense row holding most entries: on 2..4 threads the
 * ranges of entries cut that row between threads (counted), and the bytes
 * are the one-thread ones; back to CSR gives the input. Every value width,
 * int32 and int64 indices. */
static void test_transpose_dense_row_cut(void **state) {
  (void)state;
  static const QvArrowType vts[] = {QV_ARROW_INT8, QV_ARROW_FLOAT16, QV_ARROW_FLOAT32, QV_ARROW_FLOAT64};
  QvError err;
  for (size_t v = 0; v < 4; v++) {
    for (int it = 0; it < 2; it++) {
      QvArrowType itype = it == 0 ? QV_ARROW_INT32 : QV_ARROW_INT64;
      Csr c;
      make_csr(&c, vts[v], itype, 3000, 600000, 50 + v + 10 * (uint64_t)it);
      assert_true(c.t.nnz >= 3 * (1 << 17));
      QvSparseTensor ref;
      assert_int_equal(convert(&c.t, QV_SPARSE_CSC, 1, itype, &ref, &err), QV_OK);
      assert_int_equal(ref.index_type, itype);
      for (int threads = 2; threads <= 4; threads++) {
        QvSparseTensor got, back;
        uint64_t split = qvi_path_count(QV_PATH_SPARSE_THREADS), cut = qvi_path_count(QV_PATH_SPARSE_ROW_CUT);
        assert_int_equal(convert(&c.t, QV_SPARSE_CSC, threads, itype, &got, &err), QV_OK);
        assert_true(qvi_path_count(QV_PATH_SPARSE_THREADS) > split);
        assert_true(qvi_path_count(QV_PATH_SPARSE_ROW_CUT) > cut);
        assert_same_csx(&got, &ref);
        assert_int_equal(convert(&got, QV_SPARSE_CSR, threads, itype, &back, &err), QV_OK);
        assert_same_csx(&back, &c.t);
        qv_sparse_reset(&got);
        qv_sparse_reset(&back);
      }
      qv_sparse_reset(&ref);
      free_csr(&c);
    }
  }
}

/* CSR canonicalization (rows unsorted, indices repeating) on 1..4
 * threads: the same bytes, the split counted, and the values those of
 * the same entries grouped from COO. */
static void test_canonicalize_csr_threads(void **state) {
  (void)state;
  const int64_t rows = 5000, cols = 3000, n = 400000;
  static int64_t shape[2];
  shape[0] = rows;
  shape[1] = cols;
  int32_t *ptr = malloc((size_t)(rows + 1) * 4), *idx = malloc((size_t)n * 4);
  float *val = malloc((size_t)n * 4);
  int64_t *coords = malloc((size_t)n * 16);
  rng_state = 99;
  for (int64_t r = 0; r <= rows; r++) ptr[r] = (int32_t)(n * r / rows);
  for (int64_t r = 0; r < rows; r++)
    for (int64_t k = ptr[r]; k < ptr[r + 1]; k++) {
      /* a narrow column range so that rows repeat indices */
      idx[k] = (int32_t)(rnd() % 60);
      val[k] = (float)(rnd() >> 40) * (float)0x1p-10;
      coords[2 * k] = r;
      coords[2 * k + 1] = idx[k];
    }
  QvSparseTensor raw = {.format = QV_SPARSE_CSR, .value_type = QV_ARROW_FLOAT32,
                        .index_type = QV_ARROW_INT32, .indptr_type = QV_ARROW_INT32, .ndim = 2,
                        .shape = shape, .nnz = n, .values = (const uint8_t *)val,
                        .indptr = (const uint8_t *)ptr, .indices = (const uint8_t *)idx,
                        .indptr_len = rows + 1, .indices_len = n};
  QvError err;
  QvSparseTensor ref, coo, via;
  uint64_t before = qvi_path_count(QV_PATH_SPARSE_THREADS);
  assert_int_equal(qv_sparse_canonicalize(&raw, NULL, &ref, &err), QV_OK);
  assert_int_equal(qvi_path_count(QV_PATH_SPARSE_THREADS), before);
  assert_true(ref.nnz < n);
  assert_int_equal(ref.index_type, QV_ARROW_INT32);
  assert_int_equal(qv_sparse_init(&coo, &(QvSparseDesc){.format = QV_SPARSE_COO,
                                                        .value_type = QV_ARROW_FLOAT32,
                                                        .index_type = QV_ARROW_INT64, .ndim = 2,
                                                        .shape = shape, .nnz = n, .coords = coords,
                                                        .values = val}, &err),
                   QV_OK);
  assert_int_equal(qv_sparse_convert(&coo, QV_SPARSE_CSR, NULL, &via, &err), QV_OK);
  assert_int_equal(via.nnz, ref.nnz);
  assert_memory_equal(via.values, ref.values, (size_t)ref.nnz * 4);
  for (int threads = 2; threads <= 4; threads++) {
    QvSparseOptions o = {.struct_size = sizeof o, .threads = threads};
    QvSparseTensor got;
    before = qvi_path_count(QV_PATH_SPARSE_THREADS);
    assert_int_equal(qv_sparse_canonicalize(&raw, &o, &got, &err), QV_OK);
    assert_true(qvi_path_count(QV_PATH_SPARSE_THREADS) > before);
    assert_int_equal(got.nnz, ref.nnz);
    assert_memory_equal(got.indptr, ref.indptr, (size_t)(rows + 1) * 4);
    assert_memory_equal(got.indices, ref.indices, (size_t)ref.nnz * 4);
    assert_memory_equal(got.values, ref.values, (size_t)ref.nnz * 4);
    qv_sparse_reset(&got);
  }
  qv_sparse_reset(&via);
  qv_sparse_reset(&coo);
  qv_sparse_reset(&ref);
  free(coords);
  free(val);
  free(idx);
  free(ptr);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_canonicalize_threads),
      cmocka_unit_test(test_canonicalize_csr_threads),
      cmocka_unit_test(test_to_dense_threads),
      cmocka_unit_test(test_from_dense_threads),
      cmocka_unit_test(test_from_dense_nd_threads),
      cmocka_unit_test(test_float64),
      cmocka_unit_test(test_value_widths),
      cmocka_unit_test(test_heavy_duplicates_and_skew),
      cmocka_unit_test(test_bad_options_and_input),
      cmocka_unit_test(test_small_input_one_thread),
      cmocka_unit_test(test_convert_sealed_input),
      cmocka_unit_test(test_transpose_dense_row_cut),
  };
  return qv_test_run(tests, NULL, NULL);
}
