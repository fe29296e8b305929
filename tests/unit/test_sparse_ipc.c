/* SparseTensor IPC messages: every index kind x value type x index type
 * written and read back through memory, a path (mmap) and a descriptor;
 * the byte layout (64-byte aligned body and buffers, non_zero_length,
 * COO indicesStrides, CSF lengths in both conventions); several messages
 * in one file; Arrow C++'s files. Hostile messages: test_sparse_ipc_hostile.c. */
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "quiver/advanced.h"
#include "quiver/ipc.h"
#include "quiver/sparse_ipc.h"
#include "quiver/tensor_ipc.h"
#include "test_util.h"
#include "util/load.h"

/* ---- helpers */

static char *temp_path(const char *tag) {
  static int counter;
  char *p = malloc(256);
  assert_non_null(p);
  snprintf(p, 256, "%s/sio_%s_%d_%d.arrow", QV_BINARY_DIR, tag, (int)getpid(), counter++);
  return p;
}

/* Sets element k of a contiguous tensor to the small integer v. */
static void set_value(QvTensor *t, int64_t k, int v) {
  uint8_t *p = (uint8_t *)t->data + k * (int64_t)qv_arrow_type_size(t->type);
  switch (t->type) {
    case QV_ARROW_INT8: { int8_t x = (int8_t)v; memcpy(p, &x, 1); break; }
    case QV_ARROW_UINT8: { uint8_t x = (uint8_t)v; memcpy(p, &x, 1); break; }
    case QV_ARROW_INT16: { int16_t x = (int16_t)v; memcpy(p, &x, 2); break; }
    case QV_ARROW_UINT16: { uint16_t x = (uint16_t)v; memcpy(p, &x, 2); break; }
    case QV_ARROW_INT32: { int32_t x = v; memcpy(p, &x, 4); break; }
    case QV_ARROW_UINT32: { uint32_t x = (uint32_t)v; memcpy(p, &x, 4); break; }
    case QV_ARROW_INT64: { int64_t x = v; memcpy(p, &x, 8); break; }
    case QV_ARROW_UINT64: { uint64_t x = (uint64_t)v; memcpy(p, &x, 8); break; }
    case QV_ARROW_FLOAT16: { uint16_t x = qv_float_to_half((float)v); memcpy(p, &x, 2); break; }
    case QV_ARROW_FLOAT32: { float x = (float)v; memcpy(p, &x, 4); break; }
    default: { double x = v; memcpy(p, &x, 8); break; }
  }
}

/* A dense tensor with roughly a third of its elements non-zero. */
static void make_dense(QvTensor *t, QvArrowType type, int32_t ndim, const int64_t *shape,
                       const char *const *names) {
  QvError err;
  QvStatus st = qv_tensor_alloc(t, type, ndim, shape, names, false, NULL, &err);
  if (st) fail_msg("alloc: %s", err.message);
  int64_t n = qv_tensor_n_elements(t);
  bool is_signed = type <= QV_ARROW_INT64 || type >= QV_ARROW_FLOAT16;
  for (int64_t k = 0; k < n; k++) {
    int v = (k * 7) % 3 == 1 ? (int)(k % 9) + 1 : 0;
    if (is_signed && k % 2) v = -v;
    set_value(t, k, v);
  }
}

static uint8_t *write_buffer(const QvSparseTensor *t, const QvSparseWriteOptions *o,
                             size_t *size) {
  QvError err;
  size_t need = 0;
  QvStatus st = qv_sparse_write_size(t, o, &need, &err);
  if (st) fail_msg("message_size: %s", err.message);
  uint8_t *buf = qv_aligned_alloc(need);
  assert_non_null(buf);
  memset(buf, 0xAB, need);
  size_t written = 0;
  st = qv_test_sparse_write_buffer(t, o, buf, need, &written, &err);
  if (st) fail_msg("write_to_buffer: %s", err.message);
  assert_int_equal(written, need);
  /* one byte short is refused by the buffer sink */
  assert_int_equal(qv_test_sparse_write_buffer(t, o, buf, need - 1, &written, &err), QV_ELIMIT);
  assert_int_equal(written, 0);
  st = qv_test_sparse_write_buffer(t, o, buf, need, &written, &err);
  assert_int_equal(st, QV_OK);
  *size = need;
  return buf;
}

static void first_message(const uint8_t *buf, size_t size, QvIpcMessage *msg) {
  QvIpcReader *r;
  QvError err;
  assert_int_equal(qv_test_reader_memory(&r, buf, size, &err), QV_OK);
  QvStatus st = qv_ipc_reader_next(r, msg, &err);
  if (st) fail_msg("reading back: %s", err.message);
  qv_ipc_reader_free(r);
}

static void assert_same_sparse(const QvSparseTensor *a, const QvSparseTensor *b) {
  assert_int_equal(a->format, b->format);
  assert_int_equal(a->value_type, b->value_type);
  assert_int_equal(a->index_type, b->index_type);
  if (a->format != QV_SPARSE_COO) assert_int_equal(a->indptr_type, b->indptr_type);
  assert_int_equal(a->ndim, b->ndim);
  for (int32_t d = 0; d < a->ndim; d++) {
    assert_int_equal(a->shape[d], b->shape[d]);
    if (a->dim_names) assert_string_equal(a->dim_names[d], b->dim_names[d]);
  }
  assert_true((a->dim_names == NULL) == (b->dim_names == NULL));
  assert_int_equal(a->nnz, b->nnz);
  assert_true(qv_sparse_equal(a, b));
  if (a->format == QV_SPARSE_COO) assert_int_equal(a->is_canonical, b->is_canonical);
  if (a->format == QV_SPARSE_CSF)
    for (int32_t d = 0; d < a->ndim; d++) assert_int_equal(a->axis_order[d], b->axis_order[d]);
}

/* Layout facts of a message quiver wrote. */
static void check_layout(const QvIpcMessage *msg, const QvSparseTensor *t, QvCsfLengths lengths) {
  assert_int_equal(msg->message.header_type, QV_HEADER_SPARSE_TENSOR);
  assert_int_equal(msg->body_offset % 64, 0);
  assert_int_equal(msg->body_length % 64, 0);
  const QvSparseTensorMeta *m = &msg->message.header.sparse_tensor;
  assert_int_equal(m->non_zero_length, t->nnz);
  assert_int_equal(m->ndim, t->ndim);
  int64_t iw = (int64_t)qv_arrow_type_size(t->index_type);
  int64_t pw = (int64_t)qv_arrow_type_size(t->indptr_type);
  assert_int_equal(m->data.offset % 64, 0);
  assert_int_equal(m->data.length, t->nnz * (int64_t)qv_arrow_type_size(t->value_type));
  switch (t->format) {
    case QV_SPARSE_COO: {
      const QvSparseCOO *c = &m->index.coo;
      assert_int_equal(m->format, QV_SPARSE_COO);
      assert_int_equal(c->indices_type.bit_width, iw * 8);
      assert_int_equal(c->indices_type.is_signed, t->index_type <= QV_ARROW_INT64);
      assert_true(c->has_indices_strides);
      assert_int_equal(c->n_indices_strides, 2);
      /* Arrow C++'s row-major strides of an empty 0 x ndim matrix are the
       * element size in both entries; it refuses any other form */
      assert_int_equal(c->indices_strides[0], t->nnz == 0 ? iw : t->ndim * iw);
      assert_int_equal(c->indices_strides[1], iw);
      assert_int_equal(c->indices_buffer.offset % 64, 0);
      assert_int_equal(c->indices_buffer.length, t->nnz * t->ndim * iw);
      assert_int_equal(c->is_canonical, t->is_canonical);
      /* row-major N x ndim: entry (i, d) as the tensor has it */
      for (int64_t i = 0; i < t->nnz; i++)
        for (int32_t d = 0; d < t->ndim; d++)
          assert_int_equal(
              qv_index_load(msg->body + c->indices_buffer.offset, t->index_type, i * t->ndim + d),
              qv_index_load(t->coords + i * t->coords_strides[0] + d * t->coords_strides[1],
                            t->index_type, 0));
      break;
    }
    case QV_SPARSE_CSR:
    case QV_SPARSE_CSC: {
      const QvSparseCSX *c = &m->index.csx;
      assert_int_equal(m->format, t->format);
      assert_int_equal(c->indptr_buffer.offset % 64, 0);
      assert_int_equal(c->indices_buffer.offset % 64, 0);
      assert_int_equal(c->indptr_buffer.length, t->indptr_len * pw);
      assert_int_equal(c->indices_buffer.length, t->nnz * iw);
      assert_memory_equal(msg->body + c->indptr_buffer.offset, t->indptr, (size_t)(t->indptr_len * pw));
      break;
    }
    default: {
      const QvSparseCSF *c = &m->index.csf;
      assert_int_equal(m->format, QV_SPARSE_CSF);
      assert_int_equal(c->n_indptr_buffers, t->ndim - 1);
      assert_int_equal(c->n_indices_buffers, t->ndim);
      assert_int_equal(c->n_axis_order, t->ndim);
      bool bytes = lengths == QV_CSF_LENGTHS_BYTES;
      for (int32_t l = 0; l < t->ndim; l++) {
        assert_int_equal(c->indices_buffers[l].offset % 64, 0);
        assert_int_equal(c->indices_buffers[l].length, t->csf_indices_len[l] * (bytes ? iw : 1));
        assert_int_equal(c->axis_order[l], t->axis_order[l]);
        if (l + 1 < t->ndim) {
          assert_int_equal(c->indptr_buffers[l].offset % 64, 0);
          assert_int_equal(c->indptr_buffers[l].length, t->csf_indptr_len[l] * (bytes ? pw : 1));
        }
      }
      break;
    }
  }
}

/* Writes t, checks the layout, reads it back from memory (zero-copy). */
static void roundtrip_memory(const QvSparseTensor *t, const QvTensor *dense, QvCsfLengths lengths) {
  QvSparseWriteOptions o = {sizeof o, lengths};
  size_t size;
  uint8_t *buf = write_buffer(t, &o, &size);
  QvIpcMessage msg;
  first_message(buf, size, &msg);
  check_layout(&msg, t, lengths);
  QvSparseTensor back;
  QvCsfLengths seen = QV_CSF_LENGTHS_BYTES;
  QvError err;
  QvStatus st = qv_sparse_from_message(&msg, &back, &seen, &err);
  if (st) fail_msg("from_message: %s", err.message);
  /* 8-bit indices: the two conventions are the same bytes, read as elements */
  bool same = qv_arrow_type_size(t->index_type) == 1 && qv_arrow_type_size(t->indptr_type) == 1;
  assert_int_equal(seen, t->format == QV_SPARSE_CSF && !same ? lengths : QV_CSF_LENGTHS_ELEMENTS);
  qv_ipc_message_reset(&msg);
  assert_same_sparse(t, &back);
  assert_true(qv_sparse_equal_dense(&back, dense));
  qv_sparse_reset(&back);

  st = qv_test_sparse_read_memory(buf, size, NULL, 0, &back, &err);
  if (st) fail_msg("read_memory: %s", err.message);
  assert_same_sparse(t, &back);
  if (t->nnz > 0) {
    /* zero-copy: a view of the buffer, 64-byte aligned */
    assert_true(back.values > buf && back.values < buf + size);
    assert_int_equal((uintptr_t)back.values % 64, 0);
  }
  qv_sparse_reset(&back);
  qv_free(buf);
}

static void roundtrip_files(const QvSparseTensor *t, QvCsfLengths lengths) {
  QvSparseWriteOptions o = {sizeof o, lengths};
  QvError err;
  size_t size;
  uint8_t *buf = write_buffer(t, &o, &size);
  char *path = temp_path("rt");
  QvStatus st = qv_test_sparse_write_path(t, &o, path, &err);
  if (st) fail_msg("write_path: %s", err.message);
  size_t fsize;
  uint8_t *file = qv_test_read_file(path, &fsize);
  assert_non_null(file);
  assert_int_equal(fsize, size);
  assert_memory_equal(file, buf, size); /* path, fd and buffer writers agree */
  free(file);

  QvSparseTensor back;
  st = qv_test_sparse_read_path(path, 0, &back, &err);
  if (st) fail_msg("read_path: %s", err.message);
  assert_same_sparse(t, &back);
  if (t->nnz > 0) assert_int_equal((uintptr_t)back.values % 64, 0);
  qv_sparse_reset(&back);

  int fd = open(path, O_RDONLY);
  assert_true(fd >= 0);
  st = qv_test_sparse_read_fd(fd, 0, &back, &err);
  close(fd);
  if (st) fail_msg("read_fd: %s", err.message);
  assert_same_sparse(t, &back);
  qv_sparse_reset(&back);
  unlink(path);
  free(path);
  qv_free(buf);
}

static const QvSparseFormat kinds[4] = {QV_SPARSE_COO, QV_SPARSE_CSR, QV_SPARSE_CSC,
                                         QV_SPARSE_CSF};

static void roundtrip_all(bool files) {
  const int64_t shape2[2] = {5, 6}, shape3[3] = {3, 4, 5};
  const char *names[3] = {"x", "y", "z"};
  for (int k = 0; k < 4; k++) {
    QvSparseFormat f = kinds[k];
    bool two_d = f == QV_SPARSE_CSR || f == QV_SPARSE_CSC;
    for (int vt = QV_ARROW_INT8; vt < QV_ARROW_NUMERIC_END; vt++) {
      for (int it = QV_ARROW_INT8; it <= QV_ARROW_UINT64; it++) {
        if (files && vt != QV_ARROW_FLOAT64 && it != QV_ARROW_INT32) continue;
        QvTensor dense;
        make_dense(&dense, (QvArrowType)vt, two_d ? 2 : 3, two_d ? shape2 : shape3,
                   vt % 2 ? names : NULL);
        QvSparseOptions o = {.index_type = (QvArrowType)it};
        const int32_t axis[3] = {2, 0, 1};
        if (f == QV_SPARSE_CSF && it % 2) o.axis_order = axis;
        QvSparseTensor s;
        QvError err;
        QvStatus st = qv_sparse_from_dense(&dense, f, &o, &s, &err);
        if (st) fail_msg("from_dense %d/%d/%d: %s", k, vt, it, err.message);
        assert_true(s.nnz > 0);
        if (files) {
          roundtrip_files(&s, QV_CSF_LENGTHS_ELEMENTS);
          if (f == QV_SPARSE_CSF) roundtrip_files(&s, QV_CSF_LENGTHS_BYTES);
        } else {
          roundtrip_memory(&s, &dense, QV_CSF_LENGTHS_ELEMENTS);
          if (f == QV_SPARSE_CSF) roundtrip_memory(&s, &dense, QV_CSF_LENGTHS_BYTES);
        }
        qv_sparse_reset(&s);
        qv_tensor_reset(&dense);
      }
    }
  }
}

static void test_roundtrip_memory_every_kind_type_index(void **state) {
  (void)state;
  roundtrip_all(false);
}

static void test_roundtrip_path_and_fd(void **state) {
  (void)state;
  roundtrip_all(true);
}

/* nnz 0, a zero-length dim, 1-D COO and CSF. */
static void test_roundtrip_edge_shapes(void **state) {
  (void)state;
  const int64_t shapes[][3] = {{3, 0, 0}, {4, 5, 0}, {7, 0, 0}, {1, 1, 0}};
  const int32_t ndims[] = {2, 2, 1, 2};
  for (int s = 0; s < 4; s++) {
    for (int k = 0; k < 4; k++) {
      if ((kinds[k] == QV_SPARSE_CSR || kinds[k] == QV_SPARSE_CSC) && ndims[s] != 2) continue;
      QvTensor dense;
      QvError err;
      assert_int_equal(qv_tensor_alloc(&dense, QV_ARROW_FLOAT32, ndims[s], shapes[s], NULL, false, NULL, &err),
                       QV_OK);
      if (s == 2) set_value(&dense, 6, 3); /* 1-D: one non-zero at the end */
      QvSparseTensor sp;
      QvStatus st = qv_sparse_from_dense(&dense, kinds[k], NULL, &sp, &err);
      if (st) fail_msg("from_dense: %s", err.message);
      roundtrip_memory(&sp, &dense, QV_CSF_LENGTHS_ELEMENTS);
      roundtrip_memory(&sp, &dense, QV_CSF_LENGTHS_BYTES);
      qv_sparse_reset(&sp);
      qv_tensor_reset(&dense);
    }
  }
}

/* COO without non-zeros: written with Arrow C++'s strides [w, w] (checked in
 * check_layout), and the form quiver wrote before, [ndim * w, w], still
 * reads: the message is re-encoded with those strides and read back. */
static void test_coo_empty_both_stride_forms(void **state) {
  (void)state;
  const int64_t shape[3] = {4, 0, 5};
  QvTensor dense;
  QvError err;
  assert_int_equal(qv_tensor_alloc(&dense, QV_ARROW_FLOAT64, 3, shape, NULL, false, NULL, &err), QV_OK);
  QvSparseTensor sp;
  assert_int_equal(qv_sparse_from_dense(&dense, QV_SPARSE_COO, NULL, &sp, &err), QV_OK);
  assert_int_equal(sp.nnz, 0);
  roundtrip_memory(&sp, &dense, QV_CSF_LENGTHS_ELEMENTS);
  size_t size;
  uint8_t *buf = write_buffer(&sp, NULL, &size);
  QvIpcMessage msg;
  first_message(buf, size, &msg);
  QvSparseCOO *c = &msg.message.header.sparse_tensor.index.coo;
  int64_t iw = (int64_t)qv_arrow_type_size(sp.index_type);
  assert_int_equal(c->indices_strides[0], iw);
  int64_t old_form[2] = {3 * iw, iw};
  c->indices_strides = old_form;
  uint8_t *meta;
  size_t meta_size;
  assert_int_equal(qv_ipc_frame_message(&msg.message, 64, &meta, &meta_size, &err), QV_OK);
  size_t total = meta_size + (size_t)msg.body_length;
  uint8_t *old = qv_aligned_alloc(total);
  assert_non_null(old);
  memcpy(old, meta, meta_size);
  memcpy(old + meta_size, msg.body, (size_t)msg.body_length);
  free(meta);
  qv_ipc_message_reset(&msg);
  QvSparseTensor back;
  QvStatus st = qv_test_sparse_read_memory(old, total, NULL, 0, &back, &err);
  if (st) fail_msg("old form: %s", err.message);
  assert_same_sparse(&sp, &back);
  qv_sparse_reset(&back);
  qv_free(old);
  qv_free(buf);
  qv_sparse_reset(&sp);
  qv_tensor_reset(&dense);
}

/* A COO view with column-major coordinates (as Arrow C++ may hold them) is
 * written as a row-major matrix; a non-canonical one keeps its flag. */
static void test_coo_column_major_coords_written_row_major(void **state) {
  (void)state;
  const int64_t shape[3] = {2, 3, 4};
  /* 3 entries, column-major: all dim-0 coordinates, then dim 1, then dim 2 */
  const int16_t coords[9] = {1, 0, 1, 2, 0, 1, 3, 1, 0};
  const float values[3] = {1.5f, -2, 4};
  const int64_t strides[2] = {2, 6};
  QvSparseTensor t;
  QvError err;
  QvStatus st = qv_sparse_init(&t, &(QvSparseDesc){.format = QV_SPARSE_COO,
                                                   .value_type = QV_ARROW_FLOAT32,
                                                   .index_type = QV_ARROW_INT16, .ndim = 3,
                                                   .shape = shape, .nnz = 3, .coords = coords,
                                                   .coords_strides = strides,
                                                   .values = values}, &err);
  if (st) fail_msg("make_coo: %s", err.message);
  size_t size;
  uint8_t *buf = write_buffer(&t, NULL, &size);
  QvIpcMessage msg;
  first_message(buf, size, &msg);
  check_layout(&msg, &t, QV_CSF_LENGTHS_ELEMENTS);
  const QvSparseCOO *c = &msg.message.header.sparse_tensor.index.coo;
  const int16_t want[9] = {1, 2, 3, 0, 0, 1, 1, 1, 0};
  assert_memory_equal(msg.body + c->indices_buffer.offset, want, sizeof want);
  assert_false(c->is_canonical);
  qv_ipc_message_reset(&msg);
  QvSparseTensor back;
  assert_int_equal(qv_test_sparse_read_memory(buf, size, NULL, 0, &back, &err), QV_OK);
  assert_same_sparse(&t, &back);
  qv_sparse_reset(&back);
  qv_sparse_reset(&t);
  qv_free(buf);
}

/* ---- CSF length conventions */

/* The CSF example of SparseTensor.fbs, with the given index widths. */
static const int64_t fbs_shape[4] = {2, 3, 4, 5};
static const int64_t fbs_ptr[3][5] = {{0, 2, 3}, {0, 1, 3, 4}, {0, 2, 4, 5, 8}};
static const int64_t fbs_ptr_len[3] = {3, 4, 5};
static const int64_t fbs_idx[4][8] = {{0, 1}, {0, 1, 1}, {0, 0, 1, 1}, {1, 2, 0, 2, 0, 0, 1, 2}};
static const int64_t fbs_idx_len[4] = {2, 3, 4, 8};
static const double fbs_data[8] = {1, 2, 3, 4, 5, 6, 7, 8};

static void store(uint8_t *p, QvArrowType t, int64_t i, int64_t v) {
  size_t w = qv_arrow_type_size(t);
  qvi_st_bits(p + i * (int64_t)w, w, (uint64_t)v); /* the low bytes, host order */
}

typedef struct FbsCsf {
  uint8_t ptr[3][64], idx[4][64];
  QvSparseTensor t;
} FbsCsf;

static void make_fbs_csf(FbsCsf *f, QvArrowType ptype, QvArrowType itype) {
  const void *ptrs[3], *idxs[4];
  for (int l = 0; l < 4; l++) {
    for (int64_t i = 0; i < fbs_idx_len[l]; i++) store(f->idx[l], itype, i, fbs_idx[l][i]);
    idxs[l] = f->idx[l];
    if (l < 3) {
      for (int64_t i = 0; i < fbs_ptr_len[l]; i++) store(f->ptr[l], ptype, i, fbs_ptr[l][i]);
      ptrs[l] = f->ptr[l];
    }
  }
  const int32_t axis[4] = {0, 1, 2, 3};
  QvError err;
  QvStatus st = qv_sparse_init(&f->t, &(QvSparseDesc){.format = QV_SPARSE_CSF,
                                                      .value_type = QV_ARROW_FLOAT64,
                                                      .indptr_type = ptype, .index_type = itype,
                                                      .ndim = 4, .shape = fbs_shape,
                                                      .axis_order = axis, .nnz = 8,
                                                      .csf_indptr = ptrs,
                                                      .csf_indptr_len = fbs_ptr_len,
                                                      .csf_indices = idxs,
                                                      .csf_indices_len = fbs_idx_len,
                                                      .values = fbs_data}, &err);
  if (st) fail_msg("make_csf: %s", err.message);
}

static void assert_fbs_csf(const QvSparseTensor *t) {
  assert_int_equal(t->format, QV_SPARSE_CSF);
  assert_int_equal(t->nnz, 8);
  for (int l = 0; l < 4; l++) {
    assert_int_equal(t->csf_indices_len[l], fbs_idx_len[l]);
    for (int64_t i = 0; i < fbs_idx_len[l]; i++)
      assert_int_equal(qv_index_load(t->csf_indices[l], t->index_type, i), fbs_idx[l][i]);
    if (l < 3) {
      assert_int_equal(t->csf_indptr_len[l], fbs_ptr_len[l]);
      for (int64_t i = 0; i < fbs_ptr_len[l]; i++)
        assert_int_equal(qv_index_load(t->csf_indptr[l], t->indptr_type, i), fbs_ptr[l][i]);
    }
  }
  assert_memory_equal(t->values, fbs_data, sizeof fbs_data);
}

static void test_csf_lengths_both_ways(void **state) {
  (void)state;
  const QvArrowType pairs[][2] = {{QV_ARROW_INT64, QV_ARROW_INT64}, {QV_ARROW_INT64, QV_ARROW_INT16},
                                  {QV_ARROW_UINT8, QV_ARROW_UINT32}, {QV_ARROW_INT32, QV_ARROW_UINT8},
                                  {QV_ARROW_UINT16, QV_ARROW_INT64}, {QV_ARROW_UINT64, QV_ARROW_UINT64}};
  for (size_t p = 0; p < sizeof pairs / sizeof pairs[0]; p++) {
    FbsCsf f;
    make_fbs_csf(&f, pairs[p][0], pairs[p][1]);
    QvTensor dense;
    QvError err;
    assert_int_equal(qv_sparse_to_dense(&f.t, NULL, &dense, &err), QV_OK);
    size_t n_el, n_by;
    QvSparseWriteOptions el = {sizeof el, QV_CSF_LENGTHS_ELEMENTS}, by = {sizeof by, QV_CSF_LENGTHS_BYTES};
    uint8_t *a = write_buffer(&f.t, &el, &n_el);
    uint8_t *b = write_buffer(&f.t, &by, &n_by);
    assert_int_equal(n_el, n_by);
    QvIpcMessage ma, mb;
    first_message(a, n_el, &ma);
    first_message(b, n_by, &mb);
    check_layout(&ma, &f.t, QV_CSF_LENGTHS_ELEMENTS);
    check_layout(&mb, &f.t, QV_CSF_LENGTHS_BYTES);
    /* the bodies are identical, only the lengths differ */
    assert_int_equal(ma.body_length, mb.body_length);
    assert_memory_equal(ma.body, mb.body, (size_t)ma.body_length);
    QvSparseTensor ra, rb;
    QvCsfLengths ca, cb;
    assert_int_equal(qv_sparse_from_message(&ma, &ra, &ca, &err), QV_OK);
    assert_int_equal(qv_sparse_from_message(&mb, &rb, &cb, &err), QV_OK);
    assert_int_equal(ca, QV_CSF_LENGTHS_ELEMENTS);
    assert_int_equal(cb, QV_CSF_LENGTHS_BYTES); /* 8-bit indices: told apart by indptr */
    assert_fbs_csf(&ra);
    assert_fbs_csf(&rb);
    assert_true(qv_sparse_equal_dense(&ra, &dense));
    assert_true(qv_sparse_equal_dense(&rb, &dense));
    qv_sparse_reset(&ra);
    qv_sparse_reset(&rb);
    qv_ipc_message_reset(&ma);
    qv_ipc_message_reset(&mb);
    assert_memory_not_equal(a, b, n_el); /* the metadata differs */
    qv_free(a);
    qv_free(b);
    qv_tensor_reset(&dense);
    qv_sparse_reset(&f.t);
  }
  /* 8-bit indptr and indices: both conventions write the same bytes */
  FbsCsf f;
  make_fbs_csf(&f, QV_ARROW_INT8, QV_ARROW_UINT8);
  size_t n1, n2;
  QvSparseWriteOptions el = {sizeof el, QV_CSF_LENGTHS_ELEMENTS}, by = {sizeof by, QV_CSF_LENGTHS_BYTES};
  uint8_t *a = write_buffer(&f.t, &el, &n1);
  uint8_t *b = write_buffer(&f.t, &by, &n2);
  assert_int_equal(n1, n2);
  assert_memory_equal(a, b, n1);
  qv_free(a);
  qv_free(b);
  qv_sparse_reset(&f.t);
}

/* ---- several messages */

static void test_several_messages_in_one_file(void **state) {
  (void)state;
  const int64_t shape[2] = {5, 6};
  QvTensor dense;
  make_dense(&dense, QV_ARROW_INT32, 2, shape, NULL);
  QvSparseTensor csr, coo;
  QvError err;
  assert_int_equal(qv_sparse_from_dense(&dense, QV_SPARSE_CSR, NULL, &csr, &err), QV_OK);
  assert_int_equal(qv_sparse_from_dense(&dense, QV_SPARSE_COO, NULL, &coo, &err), QV_OK);
  char *path = temp_path("multi");
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  assert_true(fd >= 0);
  assert_int_equal(qv_test_sparse_write_fd(&csr, NULL, fd, &err), QV_OK);
  assert_int_equal(qv_test_tensor_write_fd(&dense, fd, &err), QV_OK);
  assert_int_equal(qv_test_sparse_write_fd(&coo, NULL, fd, &err), QV_OK);
  assert_int_equal(close(fd), 0);

  QvSparseTensor back;
  assert_int_equal(qv_test_sparse_read_path(path, 0, &back, &err), QV_OK);
  assert_same_sparse(&csr, &back);
  qv_sparse_reset(&back);
  assert_int_equal(qv_test_sparse_read_path(path, 2, &back, &err), QV_OK);
  assert_same_sparse(&coo, &back);
  assert_int_equal((uintptr_t)back.values % 64, 0);
  qv_sparse_reset(&back);
  assert_int_equal(qv_test_sparse_read_path(path, 1, &back, &err), QV_EINVAL);
  assert_non_null(strstr(err.message, "is a Tensor, not a SparseTensor"));
  assert_null(back.values);
  assert_int_equal(qv_test_sparse_read_path(path, 3, &back, &err), QV_EINVAL);
  assert_non_null(strstr(err.message, "input holds 3 messages"));
  fd = open(path, O_RDONLY);
  assert_true(fd >= 0);
  assert_int_equal(qv_test_sparse_read_fd(fd, 2, &back, &err), QV_OK);
  close(fd);
  assert_same_sparse(&coo, &back);
  qv_sparse_reset(&back);
  /* the dense reader sees the SparseTensor messages for what they are */
  QvTensor t;
  assert_int_equal(qv_test_tensor_read_path(path, 0, &t, &err), QV_EINVAL);
  assert_non_null(strstr(err.message, "SparseTensor, not a Tensor"));
  assert_int_equal(qv_test_sparse_read_path(path, -1, &back, &err), QV_EARG);
  unlink(path);
  free(path);
  qv_sparse_reset(&csr);
  qv_sparse_reset(&coo);
  qv_tensor_reset(&dense);
}

/* The writer refuses a tensor that does not validate. */
static void test_writer_validates(void **state) {
  (void)state;
  const int64_t shape[2] = {2, 2};
  const int64_t indptr[3] = {0, 2, 1};
  const int64_t indices[2] = {0, 1};
  const double values[2] = {1, 2};
  QvSparseTensor t;
  memset(&t, 0, sizeof t);
  t.format = QV_SPARSE_CSR;
  t.value_type = QV_ARROW_FLOAT64;
  t.index_type = t.indptr_type = QV_ARROW_INT64;
  t.ndim = 2;
  t.shape = shape;
  t.nnz = 2;
  t.values = (const uint8_t *)values;
  t.indptr = (const uint8_t *)indptr;
  t.indices = (const uint8_t *)indices;
  t.indptr_len = 3;
  t.indices_len = 2;
  size_t size = 1;
  QvError err;
  assert_int_equal(qv_sparse_write_size(&t, NULL, &size, &err), QV_EINVAL);
  assert_int_equal(size, 0);
  assert_non_null(strstr(err.message, "decreasing at position 2"));
  char *path = temp_path("bad");
  assert_int_equal(qv_test_sparse_write_path(&t, NULL, path, &err), QV_EINVAL);
  assert_int_equal(access(path, F_OK), -1); /* nothing left behind */
  free(path);
  QvSparseWriteOptions o = {sizeof o, (QvCsfLengths)7};
  t.indptr = (const uint8_t *)(const int64_t[3]){0, 1, 2};
  assert_int_equal(qv_sparse_write_size(&t, &o, &size, &err), QV_EARG);
  assert_int_equal(qv_sparse_write_size(NULL, NULL, &size, &err), QV_EARG);
}

/* ---- Arrow C++'s files */

static void test_arrow_cpp_files(void **state) {
  (void)state;
  if (!qv_test_have_shared()) {
    print_message("shared Arrow C++ test data not found: skipped\n");
    skip();
  }
  if (QV_HOST_BIG_ENDIAN) {
    /* SparseTensor messages carry no byte order: bodies are read in the
     * host's, and these files come from a little-endian Arrow C++ */
    print_message("skipped: little-endian SparseTensor files on a big-endian host\n");
    skip();
  }
  /* the CSF example in every index type Arrow writes, lengths as elements */
  const char *csf[] = {"sparse_csf_float64_idx_int8_fbs_example_2x3x4x5.arrow",
                       "sparse_csf_float64_idx_uint8_fbs_example_2x3x4x5.arrow",
                       "sparse_csf_float64_idx_int16_fbs_example_2x3x4x5.arrow",
                       "sparse_csf_float64_idx_uint16_fbs_example_2x3x4x5.arrow",
                       "sparse_csf_float64_idx_int32_fbs_example_2x3x4x5.arrow",
                       "sparse_csf_float64_idx_uint32_fbs_example_2x3x4x5.arrow",
                       "sparse_csf_float64_idx_int64_fbs_example_2x3x4x5.arrow",
                       "invalid/sparse_csf_buffer_lengths_in_bytes.arrow"};
  for (size_t i = 0; i < sizeof csf / sizeof csf[0]; i++) {
    QvSparseTensor t;
    QvError err;
    QvStatus st = qv_test_sparse_read_path(qv_test_shared_path(csf[i]), 0, &t, &err);
    if (st) fail_msg("%s: %s", csf[i], err.message);
    assert_fbs_csf(&t);
    /* Arrow's body is only 8-aligned, but a mapping of it still is */
    assert_int_equal((uintptr_t)t.values % 8, 0);
    /* quiver writes it back 64-aligned; reading that gives the same */
    size_t size;
    uint8_t *buf = write_buffer(&t, NULL, &size);
    QvSparseTensor back;
    assert_int_equal(qv_test_sparse_read_memory(buf, size, NULL, 0, &back, &err), QV_OK);
    assert_same_sparse(&t, &back);
    qv_sparse_reset(&back);
    qv_free(buf);
    qv_sparse_reset(&t);
  }
  /* CSR example: indptr, indices and data as stored */
  QvSparseTensor t;
  QvError err;
  assert_int_equal(qv_test_sparse_read_path(qv_test_shared_path(
                                           "sparse_csr_float64_idx_int64_fbs_example_6x4.arrow"),
                                       0, &t, &err),
                   QV_OK);
  const int64_t ptr[7] = {0, 2, 3, 5, 5, 8, 9}, idx[9] = {1, 2, 2, 1, 3, 0, 2, 3, 1};
  assert_int_equal(t.format, QV_SPARSE_CSR);
  assert_memory_equal(t.indptr, ptr, sizeof ptr);
  assert_memory_equal(t.indices, idx, sizeof idx);
  qv_sparse_reset(&t);
  /* COO with column-major indices (indicesStrides [4, 24]) */
  assert_int_equal(
      qv_test_sparse_read_path(
          qv_test_shared_path(
              "sparse_coo_float64_idx_int32_fbs_example_2x3x4x5_canonical_colmajor_indices.arrow"),
          0, &t, &err),
      QV_OK);
  assert_int_equal(t.coords_strides[0], 4);
  assert_int_equal(t.coords_strides[1], 24);
  assert_true(t.is_canonical);
  const int32_t last[4] = {1, 2, 0, 4};
  for (int d = 0; d < 4; d++)
    assert_int_equal(qv_index_load(t.coords + 5 * 4 + d * 24, QV_ARROW_INT32, 0), last[d]);
  qv_sparse_reset(&t);
  /* a dense tensor file is not sparse */
  assert_int_equal(qv_test_sparse_read_path(qv_test_shared_path("tensor_float64_3x4_rowmajor.arrow"), 0,
                                       &t, &err),
                   QV_EINVAL);
  assert_non_null(strstr(err.message, "is a Tensor, not a SparseTensor"));
}

int main(int argc, char **argv) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_roundtrip_memory_every_kind_type_index),
      cmocka_unit_test(test_roundtrip_path_and_fd),
      cmocka_unit_test(test_roundtrip_edge_shapes),
      cmocka_unit_test(test_coo_column_major_coords_written_row_major),
      cmocka_unit_test(test_coo_empty_both_stride_forms),
      cmocka_unit_test(test_csf_lengths_both_ways),
      cmocka_unit_test(test_several_messages_in_one_file),
      cmocka_unit_test(test_writer_validates),
  };
  /* skipped when ../shared is absent */
  const struct CMUnitTest shared[] = {
      cmocka_unit_test(test_arrow_cpp_files),
  };
  const QvTestGroup groups[] = {
      QV_TEST_GROUP("", tests, NULL, NULL),
      QV_TEST_GROUP("shared", shared, NULL, NULL),
  };
  return qv_test_run_groups(argc, argv, groups, sizeof groups / sizeof groups[0]);
}
