/* Hand-made SparseTensor messages (qv_message_encode + framing) that break
 * one rule each: every one must be refused by the IPC reader with a message
 * naming the buffer and the position. A few odd but valid ones are read. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "quiver/ipc.h"
#include "quiver/sparse_ipc.h"
#include "test_util.h"

/* A message under construction: metadata plus a body built buffer by
 * buffer at 8-aligned offsets (as Arrow C++ lays them out). */
typedef struct Hand {
  QvMessage msg;
  QvTensorDim dims[8];
  int64_t strides[3];
  QvBuffer ptrs[8], idxs[8];
  int32_t axis[8];
  uint8_t body[4096];
  int64_t body_len;
} Hand;

static QvBuffer put(Hand *h, const void *p, size_t n) {
  QvBuffer b = {h->body_len, (int64_t)n};
  assert_true(h->body_len + (int64_t)n + 8 <= (int64_t)sizeof h->body);
  if (n) memcpy(h->body + h->body_len, p, n);
  h->body_len += ((int64_t)n + 7) / 8 * 8;
  return b;
}

static void base(Hand *h, int ndim, const int64_t *shape, int64_t nnz) {
  memset(h, 0, sizeof *h);
  h->msg.version = QV_METADATA_V5;
  h->msg.header_type = QV_HEADER_SPARSE_TENSOR;
  QvSparseTensorMeta *m = &h->msg.header.sparse_tensor;
  m->type.id = QV_TYPE_FLOATING_POINT;
  m->type.u.floating_point.precision = QV_PRECISION_DOUBLE;
  for (int i = 0; i < ndim; i++) h->dims[i].size = shape[i];
  m->ndim = ndim;
  m->shape = h->dims;
  m->non_zero_length = nnz;
}

static QvIntType i64 = {64, true};

/* 3x4 COO, int64, canonical: (0,1)=1 (1,0)=2 (2,3)=3 */
static void coo(Hand *h, const int64_t *coords, size_t ncoords, bool canonical) {
  const int64_t shape[2] = {3, 4};
  base(h, 2, shape, 3);
  QvSparseTensorMeta *m = &h->msg.header.sparse_tensor;
  m->format = QV_SPARSE_COO;
  QvSparseCOO *c = &m->index.coo;
  c->indices_type = i64;
  h->strides[0] = 16;
  h->strides[1] = 8;
  c->has_indices_strides = true;
  c->n_indices_strides = 2;
  c->indices_strides = h->strides;
  c->is_canonical = canonical;
  c->indices_buffer = put(h, coords, ncoords * 8);
  const double data[3] = {1, 2, 3};
  m->data = put(h, data, sizeof data);
}

static const int64_t coo_ok[6] = {0, 1, 1, 0, 2, 3};

/* The 6x4 CSR example of SparseTensor.fbs. */
static const int64_t csr_ptr[7] = {0, 2, 3, 5, 5, 8, 9};
static const int64_t csr_idx[9] = {1, 2, 2, 1, 3, 0, 2, 3, 1};

static void csr(Hand *h, const int64_t *ptr, size_t nptr, const int64_t *idx, size_t nidx,
                int64_t nnz) {
  const int64_t shape[2] = {6, 4};
  base(h, 2, shape, nnz);
  QvSparseTensorMeta *m = &h->msg.header.sparse_tensor;
  m->format = QV_SPARSE_CSR;
  QvSparseCSX *c = &m->index.csx;
  c->indptr_type = i64;
  c->indices_type = i64;
  c->indptr_buffer = put(h, ptr, nptr * 8);
  c->indices_buffer = put(h, idx, nidx * 8);
  double data[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  m->data = put(h, data, (size_t)nnz * 8 <= sizeof data ? (size_t)nnz * 8 : sizeof data);
}

/* The 2x3x4x5 CSF example, int64 indices, lengths as element counts. */
static const int64_t csf_ptr[3][5] = {{0, 2, 3}, {0, 1, 3, 4}, {0, 2, 4, 5, 8}};
static const int64_t csf_ptr_n[3] = {3, 4, 5};
static const int64_t csf_idx[4][8] = {{0, 1}, {0, 1, 1}, {0, 0, 1, 1}, {1, 2, 0, 2, 0, 0, 1, 2}};
static const int64_t csf_idx_n[4] = {2, 3, 4, 8};

static void csf(Hand *h, bool bytes) {
  const int64_t shape[4] = {2, 3, 4, 5};
  base(h, 4, shape, 8);
  QvSparseTensorMeta *m = &h->msg.header.sparse_tensor;
  m->format = QV_SPARSE_CSF;
  QvSparseCSF *c = &m->index.csf;
  c->indptr_type = i64;
  c->indices_type = i64;
  for (int l = 0; l < 3; l++) {
    h->ptrs[l] = put(h, csf_ptr[l], (size_t)csf_ptr_n[l] * 8);
    if (!bytes) h->ptrs[l].length = csf_ptr_n[l];
  }
  for (int l = 0; l < 4; l++) {
    h->idxs[l] = put(h, csf_idx[l], (size_t)csf_idx_n[l] * 8);
    if (!bytes) h->idxs[l].length = csf_idx_n[l];
    h->axis[l] = l;
  }
  c->n_indptr_buffers = 3;
  c->indptr_buffers = h->ptrs;
  c->n_indices_buffers = 4;
  c->indices_buffers = h->idxs;
  c->n_axis_order = 4;
  c->axis_order = h->axis;
  const double data[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  m->data = put(h, data, sizeof data);
}

static uint8_t *frame(Hand *h, size_t *size) {
  h->msg.body_length = h->body_len;
  uint8_t *meta;
  size_t meta_size;
  QvError err;
  QvStatus st = qv_ipc_frame_message(&h->msg, 8, &meta, &meta_size, &err);
  if (st) fail_msg("frame: %s", err.message);
  uint8_t *buf = qv_aligned_alloc(meta_size + (size_t)h->body_len);
  assert_non_null(buf);
  memcpy(buf, meta, meta_size);
  memcpy(buf + meta_size, h->body, (size_t)h->body_len);
  free(meta);
  *size = meta_size + (size_t)h->body_len;
  return buf;
}

static void expect_reject(Hand *h, const char *needle) {
  size_t size;
  uint8_t *buf = frame(h, &size);
  QvSparseTensor t;
  QvError err;
  qv_error_clear(&err);
  QvStatus st = qv_test_sparse_read_memory(buf, size, NULL, 0, &t, &err);
  if (st == QV_OK) {
    qv_sparse_reset(&t);
    fail_msg("accepted a message that should fail with '%s'", needle);
  }
  if (strstr(err.message, needle) == NULL)
    fail_msg("error '%s' does not mention '%s'", err.message, needle);
  assert_true(st == QV_EINVAL || st == QV_ELIMIT);
  assert_null(t.values);
  assert_null(t.private_data);
  qv_free(buf);
}

/* The accepted tensor views accept_buf: freed after release. */
static uint8_t *accept_buf;
static void accept(Hand *h, QvSparseTensor *t) {
  size_t size;
  accept_buf = frame(h, &size);
  QvError err;
  QvStatus st = qv_test_sparse_read_memory(accept_buf, size, NULL, 0, t, &err);
  if (st) fail_msg("refused: %s", err.message);
}
static void accept_done(QvSparseTensor *t) {
  qv_sparse_reset(t);
  qv_free(accept_buf);
  accept_buf = NULL;
}

/* ---- the valid bases */

static void test_bases_are_valid(void **state) {
  (void)state;
  Hand h;
  QvSparseTensor t;
  coo(&h, coo_ok, 6, true);
  accept(&h, &t);
  assert_int_equal(t.format, QV_SPARSE_COO);
  assert_int_equal(t.nnz, 3);
  accept_done(&t);
  csr(&h, csr_ptr, 7, csr_idx, 9, 9);
  accept(&h, &t);
  assert_int_equal(t.format, QV_SPARSE_CSR);
  accept_done(&t);
  csf(&h, false);
  accept(&h, &t);
  assert_int_equal(t.csf_indices_len[3], 8);
  accept_done(&t);
  csf(&h, true);
  accept(&h, &t);
  assert_int_equal(t.csf_indices_len[0], 2);
  accept_done(&t);
}

/* ---- general */

static void test_not_sparse(void **state) {
  (void)state;
  Hand h;
  coo(&h, coo_ok, 6, true);
  h.msg.header_type = QV_HEADER_TENSOR;
  QvTensorMeta *m = &h.msg.header.tensor;
  memset(m, 0, sizeof *m);
  m->type.id = QV_TYPE_INT;
  m->type.u.int_ = i64;
  expect_reject(&h, "is a Tensor, not a SparseTensor");
}

static void test_type_and_shape(void **state) {
  (void)state;
  Hand h;
  coo(&h, coo_ok, 6, true);
  h.msg.header.sparse_tensor.type.id = QV_TYPE_UTF8;
  expect_reject(&h, "SparseTensor.type");
  coo(&h, coo_ok, 6, true);
  h.msg.header.sparse_tensor.ndim = 0;
  expect_reject(&h, "needs at least one dimension");
  coo(&h, coo_ok, 6, true);
  h.dims[0].name = "a\0b";
  h.dims[0].name_len = 3;
  expect_reject(&h, "shape[0].name contains a NUL byte");
}

static void test_data_buffer(void **state) {
  (void)state;
  Hand h;
  coo(&h, coo_ok, 6, true);
  h.msg.header.sparse_tensor.data.length = 16; /* 3 doubles need 24 */
  expect_reject(&h, "SparseTensor.data holds 16 bytes but the tensor needs 24");
  coo(&h, coo_ok, 6, true);
  h.msg.header.sparse_tensor.data.offset = h.body_len - 16;
  expect_reject(&h, "SparseTensor.data (offset");
  coo(&h, coo_ok, 6, true);
  h.msg.header.sparse_tensor.non_zero_length = INT64_MAX / 4;
  expect_reject(&h, "overflow");
  coo(&h, coo_ok, 6, true);
  h.msg.header.sparse_tensor.non_zero_length = 4; /* data holds 3 */
  expect_reject(&h, "SparseTensor.data holds 24 bytes but the tensor needs 32");
}

/* ---- COO */

static void test_coo(void **state) {
  (void)state;
  Hand h;
  const int64_t out_of_range[6] = {0, 1, 1, 0, 3, 3};
  coo(&h, out_of_range, 6, false);
  expect_reject(&h, "coordinate 3 of dim 0 at non-zero 2 is out of range [0, 3)");
  const int64_t negative[6] = {0, 1, 1, -1, 2, 3};
  coo(&h, negative, 6, false);
  expect_reject(&h, "coordinate -1 of dim 1 at non-zero 1");
  const int64_t unsorted[6] = {1, 0, 0, 1, 2, 3};
  coo(&h, unsorted, 6, true);
  expect_reject(&h, "flagged canonical but non-zero 1 sorts before non-zero 0");
  const int64_t dup[6] = {0, 1, 0, 1, 2, 3};
  coo(&h, dup, 6, true);
  expect_reject(&h, "flagged canonical but non-zero 1 duplicates non-zero 0");
  /* the same unsorted and duplicate entries are fine when not canonical */
  QvSparseTensor t;
  coo(&h, dup, 6, false);
  accept(&h, &t);
  assert_false(t.is_canonical);
  accept_done(&t);
  coo(&h, coo_ok, 4, true); /* 2 of 3 rows */
  expect_reject(&h, "SparseTensorIndexCOO.indicesBuffer holds 32 bytes but the tensor needs 48");
  coo(&h, coo_ok, 6, true);
  h.msg.header.sparse_tensor.index.coo.indices_buffer.length = h.body_len + 8;
  expect_reject(&h, "extends past the body");
  coo(&h, coo_ok, 6, true);
  h.strides[0] = -16;
  expect_reject(&h, "indicesStrides [-16, 8] has a negative entry");
  coo(&h, coo_ok, 6, true);
  h.msg.header.sparse_tensor.index.coo.n_indices_strides = 3;
  h.strides[2] = 8;
  expect_reject(&h, "indicesStrides has 3 entries");
  coo(&h, coo_ok, 6, true);
  h.strides[0] = INT64_MAX / 2;
  expect_reject(&h, "overflow int64 byte offsets");
  coo(&h, coo_ok, 6, true);
  h.strides[0] = 24; /* reaches past the buffer */
  expect_reject(&h, "indicesBuffer holds 48 bytes but the tensor needs 64");
  /* uint64 coordinates: read when the values fit */
  coo(&h, coo_ok, 6, true);
  h.msg.header.sparse_tensor.index.coo.indices_type.is_signed = false;
  accept(&h, &t);
  assert_int_equal(t.index_type, QV_ARROW_UINT64);
  accept_done(&t);
  const int64_t huge[6] = {0, 1, 1, 0, -2, 3}; /* 2^64 - 2 as uint64 */
  coo(&h, huge, 6, false);
  h.msg.header.sparse_tensor.index.coo.indices_type.is_signed = false;
  expect_reject(&h, "coordinate 18446744073709551614 of dim 0 at non-zero 2");
  /* absent strides mean row-major */
  coo(&h, coo_ok, 6, true);
  h.msg.header.sparse_tensor.index.coo.has_indices_strides = false;
  h.msg.header.sparse_tensor.index.coo.n_indices_strides = 0;
  accept(&h, &t);
  assert_int_equal(t.coords_strides[0], 16);
  accept_done(&t);
}

/* ---- CSR / CSC */

static void test_csx(void **state) {
  (void)state;
  Hand h;
  const int64_t decreasing[7] = {0, 2, 3, 5, 4, 8, 9};
  csr(&h, decreasing, 7, csr_idx, 9, 9);
  expect_reject(&h, "indptr is decreasing at position 4");
  const int64_t ends_10[7] = {0, 2, 3, 5, 5, 8, 10};
  csr(&h, ends_10, 7, csr_idx, 9, 9);
  expect_reject(&h, "ends at 10, must end at 9");
  const int64_t starts_1[7] = {1, 2, 3, 5, 5, 8, 9};
  csr(&h, starts_1, 7, csr_idx, 9, 9);
  expect_reject(&h, "starts at 1, must start at 0");
  csr(&h, csr_ptr, 6, csr_idx, 9, 9); /* 6 of 7 entries */
  expect_reject(&h, "SparseMatrixIndexCSX.indptrBuffer holds 48 bytes but the tensor needs 56");
  csr(&h, csr_ptr, 7, csr_idx, 8, 9);
  expect_reject(&h, "SparseMatrixIndexCSX.indicesBuffer holds 64 bytes but the tensor needs 72");
  const int64_t out_of_range[9] = {1, 2, 2, 1, 3, 0, 2, 4, 1};
  csr(&h, csr_ptr, 7, out_of_range, 9, 9);
  expect_reject(&h, "4 at position 7 (row 4) is out of range [0, 4)");
  const int64_t unsorted[9] = {2, 1, 2, 1, 3, 0, 2, 3, 1};
  csr(&h, csr_ptr, 7, unsorted, 9, 9);
  expect_reject(&h, "not sorted within row 0 at position 1");
  const int64_t dup[9] = {1, 2, 2, 1, 3, 0, 3, 3, 1};
  csr(&h, csr_ptr, 7, dup, 9, 9);
  expect_reject(&h, "duplicate within row 4 at position 7");
  /* CSC of the same buffers: the indptr must have cols + 1 = 5 entries;
   * the buffer holds 7 (padding is allowed), but its values then run on */
  csr(&h, csr_ptr, 7, csr_idx, 9, 9);
  h.msg.header.sparse_tensor.format = QV_SPARSE_CSC;
  expect_reject(&h, "CSC indptr: ends at 5, must end at 9");
  csr(&h, csr_ptr, 7, csr_idx, 9, 9);
  const int64_t shape3[3] = {6, 4, 1};
  h.dims[2].size = shape3[2];
  h.msg.header.sparse_tensor.ndim = 3;
  expect_reject(&h, "needs a 2-D shape, the tensor has 3 dimensions");
  /* uint64 indptr above INT64_MAX */
  const int64_t huge[7] = {0, 2, 3, 5, 5, 8, -1};
  csr(&h, huge, 7, csr_idx, 9, 9);
  h.msg.header.sparse_tensor.index.csx.indptr_type.is_signed = false;
  expect_reject(&h, "value 18446744073709551615 at position 6 is too large");
  /* a padded Buffer.length, as Arrow C++ writes, is fine */
  QvSparseTensor t;
  csr(&h, csr_ptr, 7, csr_idx, 9, 9);
  h.msg.header.sparse_tensor.index.csx.indptr_buffer.length += 8;
  accept(&h, &t);
  assert_int_equal(t.indptr_len, 7);
  accept_done(&t);
}

/* ---- CSF */

static void test_csf(void **state) {
  (void)state;
  Hand h;
  csf(&h, false);
  h.msg.header.sparse_tensor.index.csf.n_indptr_buffers = 2;
  expect_reject(&h, "indptrBuffers has 2 buffers, expected 3");
  csf(&h, false);
  h.msg.header.sparse_tensor.index.csf.n_indices_buffers = 3;
  expect_reject(&h, "indicesBuffers has 3 buffers, expected 4");
  csf(&h, false);
  h.msg.header.sparse_tensor.index.csf.n_axis_order = 3;
  expect_reject(&h, "axisOrder has 3 entries, expected 4");
  csf(&h, false);
  h.axis[2] = 1;
  expect_reject(&h, "axis_order is not a permutation: 1 appears twice");
  csf(&h, false);
  h.axis[3] = 4;
  expect_reject(&h, "axis_order is not a permutation: 4 at position 3 is out of range");
  csf(&h, false);
  h.idxs[3].length = 7;
  expect_reject(&h, "indicesBuffers[3].length 7 fits neither convention");
  csf(&h, true);
  h.idxs[1].length = 20;
  expect_reject(&h, "indicesBuffers[1].length 20 is not a multiple of the index width 8");
  csf(&h, false);
  h.ptrs[1].length = 5; /* 4 nodes at level 1 + 1 expected... level 1 has 3 */
  expect_reject(&h, "CSF indptr[1] has 5 entries, expected 4");
  csf(&h, false);
  h.idxs[3].offset = h.body_len - 32; /* 8 entries from there run past the body */
  expect_reject(&h, "indicesBuffers[3] (offset");
  csf(&h, true);
  h.idxs[2].length = 48; /* 6 entries claimed, 5 in the indptr's last value... */
  h.idxs[2].offset = 0;
  expect_reject(&h, "CSF indptr[1]: ends at 4, must end at 6");
  /* values inside the index buffers */
  Hand g;
  csf(&g, false);
  int64_t bad_ptr[5] = {0, 2, 4, 3, 8};
  memcpy(g.body + g.ptrs[2].offset, bad_ptr, sizeof bad_ptr);
  expect_reject(&g, "CSF indptr[2] is decreasing at position 3");
  csf(&g, false);
  int64_t bad_idx[8] = {1, 2, 0, 2, 0, 0, 2, 1};
  memcpy(g.body + g.idxs[3].offset, bad_idx, sizeof bad_idx);
  expect_reject(&g, "CSF indices[3]: not sorted within children of node 3 at position 7");
  csf(&g, false);
  int64_t range_idx[3] = {0, 1, 3};
  memcpy(g.body + g.idxs[1].offset, range_idx, sizeof range_idx);
  expect_reject(&g, "CSF indices[1]: 3 at position 2");
  csf(&g, false);
  int64_t top[2] = {1, 0};
  memcpy(g.body + g.idxs[0].offset, top, sizeof top);
  expect_reject(&g, "CSF indices[0]: not sorted within level 0 at position 1");
  /* lengths in bytes, the Arrow C++ reading of them would run past the body */
  csf(&g, true);
  QvSparseTensor t;
  accept(&g, &t);
  assert_int_equal(t.csf_indptr_len[2], 5);
  accept_done(&t);
}

/* Buffers off their element alignment (hand-made only) are served from an
 * aligned copy with the right values. */
static void test_misaligned_buffers_copied(void **state) {
  (void)state;
  Hand h;
  csr(&h, csr_ptr, 7, csr_idx, 9, 9);
  /* shift the data by 4 bytes */
  QvSparseTensorMeta *m = &h.msg.header.sparse_tensor;
  double data[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  m->data.offset = h.body_len + 4;
  m->data.length = sizeof data;
  memcpy(h.body + h.body_len + 4, data, sizeof data);
  h.body_len += sizeof data + 8;
  QvSparseTensor t;
  accept(&h, &t);
  assert_int_equal((uintptr_t)t.values % 8, 0);
  assert_memory_equal(t.values, data, sizeof data);
  assert_int_equal((uintptr_t)t.indptr % 8, 0);
  accept_done(&t);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_bases_are_valid),
      cmocka_unit_test(test_not_sparse),
      cmocka_unit_test(test_type_and_shape),
      cmocka_unit_test(test_data_buffer),
      cmocka_unit_test(test_coo),
      cmocka_unit_test(test_csx),
      cmocka_unit_test(test_csf),
      cmocka_unit_test(test_misaligned_buffers_copied),
  };
  return qv_test_run(tests, NULL, NULL);
}
