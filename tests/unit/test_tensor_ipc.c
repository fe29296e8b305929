/* Tensor IPC messages: writes tensors of every type and layout, reads them
 * back through memory, a path (mmap) and a file descriptor, checks the
 * byte layout (64-byte body alignment, strides and names written), and
 * feeds hand-made hostile messages to the reader. */
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "quiver/ipc.h"
#include "quiver/tensor_ipc.h"
#include "test_util.h"

/* ---- helpers */

static void fill_pattern(QvTensor *t, uint8_t seed) {
  int64_t n = qv_tensor_n_elements(t) * (int64_t)qv_arrow_type_size(t->type);
  uint8_t *p = (uint8_t *)t->data;
  for (int64_t i = 0; i < n; i++) p[i] = (uint8_t)(seed + i * 13 + (i >> 7));
}

static char *temp_path(const char *tag) {
  static int counter;
  char *p = malloc(256);
  assert_non_null(p);
  snprintf(p, 256, "%s/tio_%s_%d_%d.arrow", QV_BINARY_DIR, tag, (int)getpid(), counter++);
  return p;
}

/* Writes t into a fresh buffer of exactly qv_tensor_write_size bytes. */
static uint8_t *write_buffer(const QvTensor *t, size_t *size) {
  QvError err;
  size_t need = 0;
  assert_int_equal(qv_tensor_write_size(t, NULL, &need, &err), QV_OK);
  uint8_t *buf = qv_aligned_alloc(need);
  assert_non_null(buf);
  memset(buf, 0xAB, need);
  size_t written = 0;
  QvStatus st = qv_test_tensor_write_buffer(t, buf, need, &written, &err);
  if (st) fail_msg("write_to_buffer: %s", err.message);
  assert_int_equal(written, need);
  *size = need;
  return buf;
}

/* Decodes the single message in buf for metadata checks. */
static void first_message(const uint8_t *buf, size_t size, QvIpcMessage *msg) {
  QvIpcReader *r;
  QvError err;
  assert_int_equal(qv_test_reader_memory(&r, buf, size, &err), QV_OK);
  QvStatus st = qv_ipc_reader_next(r, msg, &err);
  if (st) fail_msg("reading back: %s", err.message);
  qv_ipc_reader_free(r);
}

/* Frames a hand-made message and appends a body. */
static uint8_t *build(const QvMessage *msg, const void *body, size_t body_size, size_t *size) {
  uint8_t *meta;
  size_t meta_size;
  QvError err;
  QvStatus st = qv_ipc_frame_message(msg, 64, &meta, &meta_size, &err);
  if (st) fail_msg("frame: %s", err.message);
  uint8_t *buf = qv_aligned_alloc(meta_size + body_size);
  assert_non_null(buf);
  memcpy(buf, meta, meta_size);
  if (body_size) memcpy(buf + meta_size, body, body_size);
  free(meta);
  *size = meta_size + body_size;
  return buf;
}

typedef struct Hand {
  QvMessage msg;
  QvTensorDim dims[QV_TENSOR_MAX_NDIM + 2];
  int64_t strides[QV_TENSOR_MAX_NDIM + 2];
} Hand;

/* A float64 tensor message description; callers adjust fields. */
static void hand_init(Hand *h, int ndim, const int64_t *shape, const int64_t *strides,
                      int n_strides, int64_t data_offset, int64_t data_length,
                      int64_t body_length) {
  memset(h, 0, sizeof *h);
  h->msg.version = QV_METADATA_V5;
  h->msg.header_type = QV_HEADER_TENSOR;
  QvTensorMeta *m = &h->msg.header.tensor;
  m->type.id = QV_TYPE_FLOATING_POINT;
  m->type.u.floating_point.precision = QV_PRECISION_DOUBLE;
  for (int i = 0; i < ndim; i++) h->dims[i].size = shape[i];
  for (int i = 0; i < n_strides; i++) h->strides[i] = strides[i];
  m->ndim = ndim;
  m->shape = h->dims;
  m->has_strides = n_strides > 0;
  m->n_strides = n_strides;
  m->strides = h->strides;
  m->data.offset = data_offset;
  m->data.length = data_length;
  h->msg.body_length = body_length;
}

/* Expects reading the hand-made message to fail with `code` and a message
 * containing `needle`. */
static void expect_reject(const Hand *h, size_t body_size, QvStatus code, const char *needle) {
  uint8_t *body = calloc(1, body_size ? body_size : 1);
  assert_non_null(body);
  size_t size;
  uint8_t *buf = build(&h->msg, body, body_size, &size);
  QvTensor t;
  QvError err;
  qv_error_clear(&err);
  QvStatus st = qv_test_tensor_read_memory(buf, size, NULL, 0, &t, &err);
  if (st == QV_OK) {
    qv_tensor_reset(&t);
    fail_msg("accepted a message that should fail with '%s'", needle);
  }
  assert_int_equal(st, code);
  if (strstr(err.message, needle) == NULL)
    fail_msg("error '%s' does not mention '%s'", err.message, needle);
  assert_null(t.data);
  qv_free(buf);
  free(body);
}

/* ---- round trips */

static void roundtrip_type(QvArrowType type, bool column_major) {
  const int64_t shape[3] = {2, 3, 5};
  const char *names[3] = {"a", "b", "c"};
  QvTensor t;
  QvError err;
  assert_int_equal(qv_tensor_alloc(&t, type, 3, shape, names, column_major, NULL, &err), QV_OK);
  fill_pattern(&t, (uint8_t)type);
  size_t size;
  uint8_t *buf = write_buffer(&t, &size);

  QvIpcMessage msg;
  first_message(buf, size, &msg);
  assert_int_equal(msg.body_offset % 64, 0);
  assert_int_equal(msg.body_length % 64, 0);
  assert_true(msg.message.header.tensor.has_strides);
  assert_int_equal(msg.message.header.tensor.n_strides, 3);
  assert_int_equal(msg.message.header.tensor.data.length,
                   30 * (int64_t)qv_arrow_type_size(type));
  assert_string_equal(msg.message.header.tensor.shape[1].name, "b");
  /* the body is the tensor's memory, byte for byte */
  assert_memory_equal(msg.body, t.data, 30 * qv_arrow_type_size(type));
  qv_ipc_message_reset(&msg);

  QvTensor back;
  QvStatus st = qv_test_tensor_read_memory(buf, size, NULL, 0, &back, &err);
  if (st) fail_msg("read: %s", err.message);
  assert_int_equal(back.type, type);
  assert_int_equal(back.ndim, 3);
  for (int i = 0; i < 3; i++) {
    assert_int_equal(back.shape[i], shape[i]);
    assert_int_equal(back.strides[i], t.strides[i]);
    assert_string_equal(back.dim_names[i], names[i]);
  }
  assert_true(back.data >= buf && back.data < buf + size); /* zero-copy */
  assert_int_equal(((uintptr_t)back.data) % 64, 0);
  assert_true(column_major ? qv_tensor_is_column_major(&back) : qv_tensor_is_row_major(&back));
  assert_true(qv_tensor_equal(&t, &back, true));
  assert_memory_equal(back.data, t.data, 30 * qv_arrow_type_size(type));
  qv_tensor_reset(&back);
  qv_tensor_reset(&t);
  qv_free(buf);
}

static void test_every_type_row_major(void **state) {
  (void)state;
  for (int ty = QV_ARROW_INT8; ty < QV_ARROW_NUMERIC_END; ty++) roundtrip_type((QvArrowType)ty, false);
}

static void test_every_type_column_major(void **state) {
  (void)state;
  for (int ty = QV_ARROW_INT8; ty < QV_ARROW_NUMERIC_END; ty++) roundtrip_type((QvArrowType)ty, true);
}

/* Every other column of a 4x6 matrix: written as a row-major copy with
 * row-major strides, names kept (Arrow C++ drops them). */
static void test_strided_view_written_row_major(void **state) {
  (void)state;
  double base[24];
  for (int i = 0; i < 24; i++) base[i] = i * 1.5 - 7;
  const int64_t shape[2] = {4, 3}, strides[2] = {48, 16};
  const char *names[2] = {"r", "c"};
  QvTensor view;
  QvError err;
  assert_int_equal(qv_tensor_init(&view, &(QvTensorDesc){.type = QV_ARROW_FLOAT64, .ndim = 2,
                                                         .shape = shape, .strides = strides,
                                                         .dim_names = names, .data = base,
                                                         .data_size = sizeof base}, &err),
                   QV_OK);
  assert_false(qv_tensor_is_contiguous(&view));
  size_t size;
  uint8_t *buf = write_buffer(&view, &size);
  QvIpcMessage msg;
  first_message(buf, size, &msg);
  assert_int_equal(msg.message.header.tensor.strides[0], 24);
  assert_int_equal(msg.message.header.tensor.strides[1], 8);
  assert_int_equal(msg.message.header.tensor.data.length, 96);
  const double *body = (const double *)msg.body;
  for (int r = 0; r < 4; r++)
    for (int c = 0; c < 3; c++) assert_true(body[r * 3 + c] == base[r * 6 + c * 2]);
  qv_ipc_message_reset(&msg);

  QvTensor back;
  assert_int_equal(qv_test_tensor_read_memory(buf, size, NULL, 0, &back, &err), QV_OK);
  assert_true(qv_tensor_is_row_major(&back));
  assert_non_null(back.dim_names);
  assert_string_equal(back.dim_names[0], "r");
  assert_string_equal(back.dim_names[1], "c");
  assert_true(qv_tensor_equal(&view, &back, true));
  qv_tensor_reset(&back);

  /* the fd writer produces the same bytes */
  char *path = temp_path("strided");
  assert_int_equal(qv_test_tensor_write_path(&view, path, &err), QV_OK);
  size_t fsize;
  uint8_t *file = qv_test_read_file(path, &fsize);
  assert_non_null(file);
  assert_int_equal(fsize, size);
  assert_memory_equal(file, buf, size);
  free(file);
  unlink(path);
  free(path);
  qv_tensor_reset(&view);
  qv_free(buf);
}

/* A non-contiguous tensor bigger than the writer's copy slab goes out in
 * several pieces; the file must still hold the whole row-major copy. */
static void test_large_strided_fd_write(void **state) {
  (void)state;
  const int64_t rows = 1024, cols = 2048;
  double *base = malloc((size_t)(rows * cols) * sizeof *base);
  assert_non_null(base);
  for (int64_t i = 0; i < rows * cols; i++) base[i] = (double)i;
  const int64_t shape[2] = {rows - 1, cols / 2}, strides[2] = {cols * 8, 16};
  QvTensor view;
  QvError err;
  assert_int_equal(qv_tensor_init(&view, &(QvTensorDesc){.type = QV_ARROW_FLOAT64, .ndim = 2,
                                                         .shape = shape, .strides = strides,
                                                         .data = base + 1,
                                                         .data_size = (rows * cols - 1) * 8}, &err),
                   QV_OK);
  char *path = temp_path("bigstrided");
  QvStatus st = qv_test_tensor_write_path(&view, path, &err);
  if (st) fail_msg("write: %s", err.message);
  QvTensor back;
  assert_int_equal(qv_test_tensor_read_path(path, 0, &back, &err), QV_OK);
  assert_true(qv_tensor_is_row_major(&back));
  assert_true(qv_tensor_equal(&view, &back, true));
  const double *d = (const double *)back.data;
  assert_true(d[0] == 1.0);
  assert_true(d[(rows - 1) * (cols / 2) - 1] == (double)((rows - 2) * cols + 1 + (cols - 2)));
  qv_tensor_reset(&back);
  unlink(path);
  free(path);
  qv_tensor_reset(&view);
  free(base);
}

/* Bodies of several MiB take the streaming copy; any destination
 * alignment and a tail that is not a multiple of the block size. */
static void test_large_buffer_write(void **state) {
  (void)state;
  const int64_t shape[1] = {(5 << 20) / 8 + 3};
  QvTensor t;
  QvError err;
  assert_int_equal(qv_tensor_alloc(&t, QV_ARROW_FLOAT64, 1, shape, NULL, false, NULL, &err), QV_OK);
  fill_pattern(&t, 5);
  size_t need;
  assert_int_equal(qv_tensor_write_size(&t, NULL, &need, &err), QV_OK);
  uint8_t *buf = qv_aligned_alloc(need + 64);
  assert_non_null(buf);
  const size_t shifts[3] = {0, 1, 40};
  for (int k = 0; k < 3; k++) {
    uint8_t *dst = buf + shifts[k];
    memset(buf, 0xEE, need + 64);
    size_t written;
    assert_int_equal(qv_test_tensor_write_buffer(&t, dst, need, &written, &err), QV_OK);
    assert_int_equal(written, need);
    QvTensor back;
    assert_int_equal(qv_test_tensor_read_memory(dst, need, NULL, 0, &back, &err), QV_OK);
    assert_memory_equal(back.data, t.data, (size_t)shape[0] * 8);
    qv_tensor_reset(&back);
    /* nothing written past the message */
    for (size_t i = need + shifts[k]; i < need + 64; i++) assert_int_equal(buf[i], 0xEE);
  }
  qv_free(buf);
  qv_tensor_reset(&t);
}

static void test_zero_dim(void **state) {
  (void)state;
  double v = 42.5;
  QvTensor t;
  QvError err;
  assert_int_equal(qv_tensor_init(&t, &(QvTensorDesc){.type = QV_ARROW_FLOAT64, .data = &v,
                                                      .data_size = 8}, &err),
                   QV_OK);
  size_t size;
  uint8_t *buf = write_buffer(&t, &size);
  QvTensor back;
  assert_int_equal(qv_test_tensor_read_memory(buf, size, NULL, 0, &back, &err), QV_OK);
  assert_int_equal(back.ndim, 0);
  assert_int_equal(qv_tensor_n_elements(&back), 1);
  double got;
  assert_int_equal(qv_tensor_get_double(&back, NULL, &got, &err), QV_OK);
  assert_true(got == 42.5);
  qv_tensor_reset(&back);
  qv_tensor_reset(&t);
  qv_free(buf);
}

static void test_zero_length_dims(void **state) {
  (void)state;
  const int64_t shapes[3][3] = {{3, 0, 2}, {0, 0, 0}, {0, 5, 1}};
  for (int k = 0; k < 3; k++) {
    QvTensor t;
    QvError err;
    assert_int_equal(qv_tensor_alloc(&t, QV_ARROW_INT16, 3, shapes[k], NULL, false, NULL, &err), QV_OK);
    size_t size;
    uint8_t *buf = write_buffer(&t, &size);
    QvIpcMessage msg;
    first_message(buf, size, &msg);
    assert_int_equal(msg.body_length, 0);
    assert_int_equal(msg.message.header.tensor.data.length, 0);
    assert_int_equal(size % 64, 0);
    qv_ipc_message_reset(&msg);
    QvTensor back;
    assert_int_equal(qv_test_tensor_read_memory(buf, size, NULL, 0, &back, &err), QV_OK);
    assert_int_equal(qv_tensor_n_elements(&back), 0);
    for (int i = 0; i < 3; i++) assert_int_equal(back.shape[i], shapes[k][i]);
    qv_tensor_reset(&back);
    qv_tensor_reset(&t);
    qv_free(buf);
  }
}

/* What Arrow C++ writes for a 3x0 tensor: strides [8, 8], empty body. */
static void test_arrow_empty_strides_accepted(void **state) {
  (void)state;
  const int64_t shape[2] = {3, 0}, strides[2] = {8, 8};
  Hand h;
  hand_init(&h, 2, shape, strides, 2, 0, 0, 0);
  size_t size;
  uint8_t *buf = build(&h.msg, NULL, 0, &size);
  QvTensor t;
  QvError err;
  QvStatus st = qv_test_tensor_read_memory(buf, size, NULL, 0, &t, &err);
  if (st) fail_msg("%s", err.message);
  assert_int_equal(qv_tensor_n_elements(&t), 0);
  assert_int_equal(t.strides[0], 8);
  qv_tensor_reset(&t);
  qv_free(buf);

  /* any non-negative strides: nothing is reachable */
  const int64_t wild[2] = {1 << 30, 0};
  hand_init(&h, 2, shape, wild, 2, 0, 0, 0);
  buf = build(&h.msg, NULL, 0, &size);
  assert_int_equal(qv_test_tensor_read_memory(buf, size, NULL, 0, &t, &err), QV_OK);
  qv_tensor_reset(&t);
  qv_free(buf);
}

/* Absent strides mean row-major; Arrow's unpadded body length is fine. */
static void test_absent_strides_unpadded_body(void **state) {
  (void)state;
  const int64_t shape[2] = {2, 3};
  double body[6] = {1, 2, 3, 4, 5, 6};
  Hand h;
  hand_init(&h, 2, shape, NULL, 0, 0, 48, 48);
  h.dims[0].name = "";
  h.dims[1].name = "";
  size_t size;
  uint8_t *buf = build(&h.msg, body, sizeof body, &size);
  QvTensor t;
  QvError err;
  assert_int_equal(qv_test_tensor_read_memory(buf, size, NULL, 0, &t, &err), QV_OK);
  assert_int_equal(t.strides[0], 24);
  assert_int_equal(t.strides[1], 8);
  assert_null(t.dim_names); /* all-empty names are no names */
  int64_t idx[2] = {1, 2};
  double v;
  assert_int_equal(qv_tensor_get_double(&t, idx, &v, &err), QV_OK);
  assert_true(v == 6.0);
  qv_tensor_reset(&t);
  qv_free(buf);
}

/* Partial names survive a round trip ("" stays unnamed). */
static void test_partial_names(void **state) {
  (void)state;
  const int64_t shape[3] = {1, 2, 1};
  const char *names[3] = {"x", "", "z"};
  QvTensor t;
  QvError err;
  assert_int_equal(qv_tensor_alloc(&t, QV_ARROW_UINT8, 3, shape, names, false, NULL, &err), QV_OK);
  size_t size;
  uint8_t *buf = write_buffer(&t, &size);
  QvTensor back;
  assert_int_equal(qv_test_tensor_read_memory(buf, size, NULL, 0, &back, &err), QV_OK);
  assert_non_null(back.dim_names);
  assert_string_equal(back.dim_names[0], "x");
  assert_string_equal(back.dim_names[1], "");
  assert_string_equal(back.dim_names[2], "z");
  qv_tensor_reset(&back);
  qv_tensor_reset(&t);
  qv_free(buf);

  /* no names at all: none written */
  assert_int_equal(qv_tensor_alloc(&t, QV_ARROW_UINT8, 3, shape, NULL, false, NULL, &err), QV_OK);
  buf = write_buffer(&t, &size);
  QvIpcMessage msg;
  first_message(buf, size, &msg);
  for (int i = 0; i < 3; i++) assert_null(msg.message.header.tensor.shape[i].name);
  qv_ipc_message_reset(&msg);
  qv_tensor_reset(&t);
  qv_free(buf);
}

/* An extent-1 dim with an odd stride is still row-major; the file gets
 * canonical strides. */
static void test_canonical_strides_written(void **state) {
  (void)state;
  int32_t data[5] = {1, 2, 3, 4, 5};
  const int64_t shape[2] = {1, 5}, strides[2] = {4000, 4};
  QvTensor t;
  QvError err;
  assert_int_equal(qv_tensor_init(&t, &(QvTensorDesc){.type = QV_ARROW_INT32, .ndim = 2,
                                                      .shape = shape, .strides = strides,
                                                      .data = data,
                                                      .data_size = sizeof data}, &err),
                   QV_OK);
  size_t size;
  uint8_t *buf = write_buffer(&t, &size);
  QvIpcMessage msg;
  first_message(buf, size, &msg);
  assert_int_equal(msg.message.header.tensor.strides[0], 20);
  assert_int_equal(msg.message.header.tensor.strides[1], 4);
  assert_memory_equal(msg.body, data, sizeof data);
  qv_ipc_message_reset(&msg);
  qv_tensor_reset(&t);
  qv_free(buf);
}

static void test_buffer_too_small(void **state) {
  (void)state;
  const int64_t shape[1] = {10};
  QvTensor t;
  QvError err;
  assert_int_equal(qv_tensor_alloc(&t, QV_ARROW_FLOAT32, 1, shape, NULL, false, NULL, &err), QV_OK);
  size_t need;
  assert_int_equal(qv_tensor_write_size(&t, NULL, &need, &err), QV_OK);
  uint8_t *buf = malloc(need);
  assert_non_null(buf);
  size_t written = 99;
  assert_int_equal(qv_test_tensor_write_buffer(&t, buf, need - 1, &written, &err), QV_ELIMIT);
  assert_int_equal(written, 0);
  assert_non_null(strstr(err.message, "exceed the capacity"));
  free(buf);
  qv_tensor_reset(&t);
}

/* ---- several tensors in one file; memory, path and fd readers */

static void test_several_tensors_one_file(void **state) {
  (void)state;
  QvError err;
  const int64_t s0[2] = {3, 7}, s1[1] = {5}, s2[3] = {2, 2, 3};
  QvTensor t[3];
  assert_int_equal(qv_tensor_alloc(&t[0], QV_ARROW_INT8, 2, s0, NULL, false, NULL, &err), QV_OK);
  assert_int_equal(qv_tensor_alloc(&t[1], QV_ARROW_FLOAT64, 1, s1, NULL, false, NULL, &err), QV_OK);
  assert_int_equal(qv_tensor_alloc(&t[2], QV_ARROW_UINT16, 3, s2, NULL, true, NULL, &err), QV_OK);
  for (int i = 0; i < 3; i++) fill_pattern(&t[i], (uint8_t)(i * 50));
  char *path = temp_path("several");
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  assert_true(fd >= 0);
  for (int i = 0; i < 3; i++) assert_int_equal(qv_test_tensor_write_fd(&t[i], fd, &err), QV_OK);
  close(fd);

  /* every body starts at a multiple of 64 in the file */
  QvIpcReader *r;
  assert_int_equal(qv_test_reader_path(&r, path, &err), QV_OK);
  int n = 0;
  QvIpcMessage msg;
  while (qv_ipc_reader_next(r, &msg, &err) == QV_OK) {
    assert_int_equal(msg.body_offset % 64, 0);
    assert_int_equal(msg.offset % 64, 0);
    qv_ipc_message_reset(&msg);
    n++;
  }
  assert_int_equal(n, 3);
  qv_ipc_reader_free(r);

  size_t fsize;
  uint8_t *bytes = qv_test_read_file(path, &fsize);
  assert_non_null(bytes);
  for (int i = 0; i < 3; i++) {
    QvTensor back;
    /* path: mmap, 64-byte-aligned data */
    QvStatus st = qv_test_tensor_read_path(path, i, &back, &err);
    if (st) fail_msg("read_path %d: %s", i, err.message);
    assert_int_equal((uintptr_t)back.data % 64, 0);
    assert_true(qv_tensor_equal(&t[i], &back, true));
    assert_int_equal(back.strides[back.ndim - 1], t[i].strides[t[i].ndim - 1]);
    qv_tensor_reset(&back);
    /* memory */
    assert_int_equal(qv_test_tensor_read_memory(bytes, fsize, NULL, i, &back, &err), QV_OK);
    assert_true(qv_tensor_equal(&t[i], &back, true));
    qv_tensor_reset(&back);
    /* fd: copied into aligned memory owned by the tensor */
    fd = open(path, O_RDONLY);
    assert_true(fd >= 0);
    assert_int_equal(qv_test_tensor_read_fd(fd, i, &back, &err), QV_OK);
    close(fd);
    assert_int_equal((uintptr_t)back.data % 64, 0);
    assert_true(qv_tensor_equal(&t[i], &back, true));
    qv_tensor_reset(&back);
  }
  QvTensor none;
  assert_int_equal(qv_test_tensor_read_path(path, 3, &none, &err), QV_EINVAL);
  assert_non_null(strstr(err.message, "holds 3 messages"));
  assert_int_equal(qv_test_tensor_read_memory(bytes, fsize, NULL, -1, &none, &err), QV_EARG);
  free(bytes);
  unlink(path);
  free(path);
  for (int i = 0; i < 3; i++) qv_tensor_reset(&t[i]);
}

/* The mapping outlives the file name and the reader: the tensor keeps it. */
static void test_path_view_outlives_file(void **state) {
  (void)state;
  const int64_t shape[2] = {16, 16};
  QvTensor t;
  QvError err;
  assert_int_equal(qv_tensor_alloc(&t, QV_ARROW_FLOAT32, 2, shape, NULL, false, NULL, &err), QV_OK);
  fill_pattern(&t, 9);
  char *path = temp_path("outlive");
  assert_int_equal(qv_test_tensor_write_path(&t, path, &err), QV_OK);
  QvTensor back;
  assert_int_equal(qv_test_tensor_read_path(path, 0, &back, &err), QV_OK);
  unlink(path);
  assert_non_null(back.owner);
  assert_memory_equal(back.data, t.data, 16 * 16 * 4);
  qv_tensor_reset(&back);
  free(path);
  qv_tensor_reset(&t);
}

static void test_fd_reader_pipe(void **state) {
  (void)state;
  const int64_t shape[2] = {4, 5};
  QvTensor t[2];
  QvError err;
  assert_int_equal(qv_tensor_alloc(&t[0], QV_ARROW_INT64, 2, shape, NULL, false, NULL, &err), QV_OK);
  assert_int_equal(qv_tensor_alloc(&t[1], QV_ARROW_UINT32, 2, shape, NULL, true, NULL, &err), QV_OK);
  fill_pattern(&t[0], 1);
  fill_pattern(&t[1], 2);
  int fds[2];
  assert_int_equal(pipe(fds), 0);
  /* small tensors fit in the pipe buffer, so one thread can do both ends */
  assert_int_equal(qv_test_tensor_write_fd(&t[0], fds[1], &err), QV_OK);
  assert_int_equal(qv_test_tensor_write_fd(&t[1], fds[1], &err), QV_OK);
  close(fds[1]);
  QvTensor back;
  assert_int_equal(qv_test_tensor_read_fd(fds[0], 1, &back, &err), QV_OK);
  close(fds[0]);
  assert_true(qv_tensor_is_column_major(&back));
  assert_true(qv_tensor_equal(&t[1], &back, true));
  qv_tensor_reset(&back);
  qv_tensor_reset(&t[0]);
  qv_tensor_reset(&t[1]);
}

/* The path reader reads prefixes and metadata itself (pread) and maps only
 * the body; it must agree with the memory reader on every input: a valid
 * multi-message file, each truncation of it and each single-byte
 * corruption of its first messages. */
static void test_path_reader_agrees_with_memory(void **state) {
  (void)state;
  QvError err;
  const int64_t s0[2] = {2, 3}, s1[1] = {0};
  QvTensor t[2];
  assert_int_equal(qv_tensor_alloc(&t[0], QV_ARROW_INT16, 2, s0, NULL, true, NULL, &err), QV_OK);
  assert_int_equal(qv_tensor_alloc(&t[1], QV_ARROW_FLOAT32, 1, s1, NULL, false, NULL, &err), QV_OK);
  fill_pattern(&t[0], 3);
  size_t n0, n1;
  uint8_t *m0 = write_buffer(&t[0], &n0), *m1 = write_buffer(&t[1], &n1);
  size_t size = n0 + n1 + 8 + n0;
  uint8_t *file = malloc(size);
  assert_non_null(file);
  memcpy(file, m0, n0);
  memcpy(file + n0, m1, n1);
  memcpy(file + n0 + n1, qv_ipc_eos, 8); /* what follows the marker is never read */
  memcpy(file + n0 + n1 + 8, m0, n0);
  char *path = temp_path("agree");
  uint8_t *work = malloc(size);
  assert_non_null(work);
  int cases = 0;
  for (size_t variant = 0; variant < size + n0 + n1; variant++) {
    size_t len = size;
    memcpy(work, file, size);
    if (variant < size) {
      len = variant; /* truncated */
    } else {
      work[variant - size] ^= 0x5A; /* one corrupted byte */
    }
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(work, 1, len, f), len);
    fclose(f);
    for (int64_t index = 0; index < 3; index++) {
      QvTensor a, b;
      QvError ea, eb;
      QvStatus sa = qv_test_tensor_read_memory(work, len, NULL, index, &a, &ea);
      QvStatus sb = qv_test_tensor_read_path(path, index, &b, &eb);
      if (sa != sb)
        fail_msg("variant %zu index %lld: memory %d (%s), path %d (%s)", variant,
                 (long long)index, sa, sa ? ea.message : "", sb, sb ? eb.message : "");
      if (sa == QV_OK) {
        assert_true(qv_tensor_equal(&a, &b, true));
        assert_int_equal((uintptr_t)b.data % 64, 0);
        qv_tensor_reset(&a);
        qv_tensor_reset(&b);
      }
      cases++;
    }
  }
  assert_true(cases > 1000);
  /* index 2 is after the end-of-stream marker */
  QvTensor x;
  assert_int_equal(qv_test_tensor_read_memory(file, size, NULL, 2, &x, &err), QV_EINVAL);
  assert_non_null(strstr(err.message, "holds 2 messages"));
  unlink(path);
  free(path);
  free(work);
  free(file);
  qv_free(m0);
  qv_free(m1);
  qv_tensor_reset(&t[0]);
  qv_tensor_reset(&t[1]);
}

/* Legacy prefix (no continuation marker) through the path reader. */
static void test_legacy_prefix_path(void **state) {
  (void)state;
  const int64_t shape[1] = {4};
  QvTensor t;
  QvError err;
  assert_int_equal(qv_tensor_alloc(&t, QV_ARROW_UINT8, 1, shape, NULL, false, NULL, &err), QV_OK);
  fill_pattern(&t, 77);
  size_t size;
  uint8_t *buf = write_buffer(&t, &size);
  char *path = temp_path("legacy");
  FILE *f = fopen(path, "wb");
  assert_non_null(f);
  /* drop the continuation marker: the int32 length now starts the message */
  assert_int_equal(fwrite(buf + 4, 1, size - 4, f), size - 4);
  fclose(f);
  QvTensor back;
  QvStatus st = qv_test_tensor_read_path(path, 0, &back, &err);
  if (st) fail_msg("%s", err.message);
  assert_true(qv_tensor_equal(&t, &back, true));
  qv_tensor_reset(&back);
  unlink(path);
  free(path);
  qv_free(buf);
  qv_tensor_reset(&t);
}

/* Memory reader with an owner: the tensor keeps the caller's buffer. */
static int owner_released;
static void release_buf(void *p) {
  owner_released++;
  qv_free(p);
}

static void test_memory_owner_retained(void **state) {
  (void)state;
  const int64_t shape[1] = {3};
  QvTensor t;
  QvError err;
  assert_int_equal(qv_tensor_alloc(&t, QV_ARROW_INT32, 1, shape, NULL, false, NULL, &err), QV_OK);
  size_t size;
  uint8_t *buf = write_buffer(&t, &size);
  owner_released = 0;
  QvOwner *owner = qv_owner_new(release_buf, buf);
  assert_non_null(owner);
  QvTensor back;
  assert_int_equal(qv_test_tensor_read_memory(buf, size, owner, 0, &back, &err), QV_OK);
  qv_owner_free(owner);
  assert_int_equal(owner_released, 0);
  assert_true(qv_tensor_equal(&t, &back, true));
  qv_tensor_reset(&back);
  assert_int_equal(owner_released, 1);
  qv_tensor_reset(&t);
}

/* ---- hostile input */

static void test_truncated_metadata_and_body(void **state) {
  (void)state;
  const int64_t shape[2] = {3, 4};
  QvTensor t;
  QvError err;
  assert_int_equal(qv_tensor_alloc(&t, QV_ARROW_FLOAT64, 2, shape, NULL, false, NULL, &err), QV_OK);
  size_t size;
  uint8_t *buf = write_buffer(&t, &size);
  QvIpcMessage msg;
  first_message(buf, size, &msg);
  size_t body_at = (size_t)msg.body_offset;
  qv_ipc_message_reset(&msg);
  /* every cut short of the full message fails cleanly */
  for (size_t cut = 0; cut < size; cut++) {
    QvTensor back;
    qv_error_clear(&err);
    QvStatus st = qv_test_tensor_read_memory(buf, cut, NULL, 0, &back, &err);
    assert_int_not_equal(st, QV_OK);
    assert_true(err.message[0] != '\0');
    if (cut > 8 && cut < body_at) assert_int_equal(st, QV_ETRUNCATED);
    if (cut > body_at) {
      assert_int_equal(st, QV_ETRUNCATED);
      assert_non_null(strstr(err.message, "body"));
    }
  }
  qv_free(buf);
  qv_tensor_reset(&t);
}

static void test_body_shorter_than_extent(void **state) {
  (void)state;
  const int64_t shape[2] = {3, 4}, strides[2] = {64, 8};
  Hand h;
  hand_init(&h, 2, shape, strides, 2, 0, 96, 96);
  expect_reject(&h, 96, QV_EINVAL, "reach 160 bytes");
  /* row-major strides but the data buffer is one element short */
  const int64_t rm[2] = {32, 8};
  hand_init(&h, 2, shape, rm, 2, 0, 88, 96);
  expect_reject(&h, 96, QV_EINVAL, "Tensor.data holds 88");
}

static void test_data_buffer_outside_body(void **state) {
  (void)state;
  const int64_t shape[1] = {4};
  Hand h;
  hand_init(&h, 1, shape, NULL, 0, 8, 32, 32);
  expect_reject(&h, 32, QV_EINVAL, "extends past the body");
  hand_init(&h, 1, shape, NULL, 0, INT64_MAX - 4, 4, 32);
  expect_reject(&h, 32, QV_EINVAL, "extends past the body");
}

/* MetadataVersion V1-V3 (before Arrow 0.8): refused as Arrow C++ refuses
 * them, naming the version; V4 reads. */
static void test_old_metadata_versions(void **state) {
  (void)state;
  Hand h;
  const int64_t shape[2] = {2, 4};
  static const char *const names[] = {"V1", "V2", "V3"};
  for (int v = QV_METADATA_V1; v <= QV_METADATA_V3; v++) {
    hand_init(&h, 2, shape, NULL, 0, 0, 64, 64);
    h.msg.version = (int16_t)v;
    char want[64];
    snprintf(want, sizeof want, "MetadataVersion %s is not supported", names[v]);
    expect_reject(&h, 64, QV_ENOTSUP, want);
  }
}

static void test_negative_and_overflowing_dims(void **state) {
  (void)state;
  Hand h;
  const int64_t neg[2] = {3, -1};
  hand_init(&h, 2, neg, NULL, 0, 0, 0, 0);
  expect_reject(&h, 0, QV_EINVAL, "negative");
  /* row-major strides of this shape overflow */
  const int64_t big[2] = {INT64_MAX / 4, 16};
  hand_init(&h, 2, big, NULL, 0, 0, 64, 64);
  expect_reject(&h, 64, QV_EINVAL, "overflow");
  /* explicit strides whose extent overflows */
  const int64_t huge[2] = {(int64_t)1 << 40, (int64_t)1 << 40};
  const int64_t hs[2] = {(int64_t)1 << 30, 8};
  hand_init(&h, 2, huge, hs, 2, 0, 64, 64);
  expect_reject(&h, 64, QV_EINVAL, "overflow");
  const int64_t negstride[2] = {-8, 8};
  const int64_t s22[2] = {2, 2};
  hand_init(&h, 2, s22, negstride, 2, 0, 64, 64);
  /* the format allows negative strides; quiver, like Arrow C++, does not */
  expect_reject(&h, 64, QV_ENOTSUP, "negative (not supported)");
}

static void test_too_many_dims(void **state) {
  (void)state;
  int64_t shape[QV_TENSOR_MAX_NDIM + 1];
  for (int i = 0; i <= QV_TENSOR_MAX_NDIM; i++) shape[i] = 1;
  Hand h;
  hand_init(&h, QV_TENSOR_MAX_NDIM + 1, shape, NULL, 0, 0, 8, 8);
  expect_reject(&h, 8, QV_ELIMIT, "exceed the limit");
  /* exactly the limit is fine */
  hand_init(&h, QV_TENSOR_MAX_NDIM, shape, NULL, 0, 0, 8, 8);
  size_t size;
  double one = 1;
  uint8_t *buf = build(&h.msg, &one, 8, &size);
  QvTensor t;
  QvError err;
  assert_int_equal(qv_test_tensor_read_memory(buf, size, NULL, 0, &t, &err), QV_OK);
  assert_int_equal(t.ndim, QV_TENSOR_MAX_NDIM);
  qv_tensor_reset(&t);
  qv_free(buf);
}

static void test_non_numeric_type(void **state) {
  (void)state;
  const int64_t shape[1] = {2};
  Hand h;
  hand_init(&h, 1, shape, NULL, 0, 0, 16, 16);
  h.msg.header.tensor.type.id = QV_TYPE_UTF8;
  expect_reject(&h, 16, QV_EINVAL, "Tensor.type: Utf8 is not a numeric tensor type");
  h.msg.header.tensor.type.id = QV_TYPE_BOOL;
  expect_reject(&h, 16, QV_EINVAL, "not a numeric tensor type");
  h.msg.header.tensor.type.id = QV_TYPE_INT;
  h.msg.header.tensor.type.u.int_.bit_width = 24;
  h.msg.header.tensor.type.u.int_.is_signed = true;
  expect_reject(&h, 16, QV_EINVAL, "Tensor.type");
}

static void test_strides_count_mismatch(void **state) {
  (void)state;
  const int64_t shape[2] = {2, 3}, strides[3] = {24, 8, 8};
  Hand h;
  hand_init(&h, 2, shape, strides, 1, 0, 48, 48);
  expect_reject(&h, 48, QV_EINVAL, "1 entries for 2 dimensions");
  hand_init(&h, 2, shape, strides, 3, 0, 48, 48);
  expect_reject(&h, 48, QV_EINVAL, "3 entries for 2 dimensions");
}

static void test_not_a_tensor_message(void **state) {
  (void)state;
  QvMessage msg;
  memset(&msg, 0, sizeof msg);
  msg.version = QV_METADATA_V5;
  msg.header_type = QV_HEADER_SCHEMA;
  size_t size;
  uint8_t *buf = build(&msg, NULL, 0, &size);
  QvTensor t;
  QvError err;
  assert_int_equal(qv_test_tensor_read_memory(buf, size, NULL, 0, &t, &err), QV_EINVAL);
  assert_non_null(strstr(err.message, "is a Schema, not a Tensor"));
  qv_free(buf);
  assert_int_equal(qv_test_tensor_read_memory(NULL, 0, NULL, 0, &t, &err), QV_EINVAL);
  assert_non_null(strstr(err.message, "empty input (0 bytes)"));
}

/* A data buffer at an odd offset is copied so the pointer is aligned. */
static void test_misaligned_data_copied(void **state) {
  (void)state;
  const int64_t shape[1] = {3};
  uint8_t body[32] = {0};
  int32_t vals[3] = {-5, 70000, 3};
  memcpy(body + 1, vals, sizeof vals);
  Hand h;
  hand_init(&h, 1, shape, NULL, 0, 1, 12, 32);
  h.msg.header.tensor.type.id = QV_TYPE_INT;
  h.msg.header.tensor.type.u.int_.bit_width = 32;
  h.msg.header.tensor.type.u.int_.is_signed = true;
  size_t size;
  uint8_t *buf = build(&h.msg, body, sizeof body, &size);
  QvTensor t;
  QvError err;
  assert_int_equal(qv_test_tensor_read_memory(buf, size, NULL, 0, &t, &err), QV_OK);
  assert_int_equal((uintptr_t)t.data % 4, 0);
  assert_memory_equal(t.data, vals, sizeof vals);
  qv_tensor_reset(&t);
  qv_free(buf);
}

/* ---- Arrow C++ files */

static void test_arrow_cpp_files(void **state) {
  (void)state;
  if (!qv_test_have_shared()) {
    print_message("shared Arrow C++ test data absent: skipped\n");
    skip();
  }
  static const char *files[] = {
      "tensor_float64_3x4_rowmajor.arrow",   "tensor_float64_3x4_colmajor.arrow",
      "tensor_float16_extremes_6.arrow",     "tensor_int32_2x3x4_rowmajor_dimnames_partial.arrow",
      "tensor_float64_3x0x2_rowmajor.arrow", "tensor_float64_scalar_0d.arrow",
      "tensor_uint64_extremes_5.arrow",      "tensor_float64_4x3_strided_dimnames.arrow"};
  for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
    QvTensor t;
    QvError err;
    QvStatus st = qv_test_tensor_read_path(qv_test_shared_path(files[i]), 0, &t, &err);
    if (st) fail_msg("%s: %s", files[i], err.message);
    assert_int_equal((uintptr_t)t.data % 64, 0);
    /* write it again and read that back: same values, layout and names */
    size_t size;
    uint8_t *buf = write_buffer(&t, &size);
    QvTensor back;
    assert_int_equal(qv_test_tensor_read_memory(buf, size, NULL, 0, &back, &err), QV_OK);
    assert_true(qv_tensor_equal(&t, &back, true));
    assert_int_equal(qv_tensor_is_column_major(&t) && !qv_tensor_is_row_major(&t),
                     qv_tensor_is_column_major(&back) && !qv_tensor_is_row_major(&back));
    assert_int_equal(t.dim_names == NULL, back.dim_names == NULL);
    qv_tensor_reset(&back);
    qv_free(buf);
    qv_tensor_reset(&t);
  }
  /* spot values */
  QvTensor t;
  QvError err;
  assert_int_equal(
      qv_test_tensor_read_path(qv_test_shared_path("tensor_uint64_extremes_5.arrow"), 0, &t, &err),
      QV_OK);
  int64_t idx = 1;
  uint64_t u;
  assert_int_equal(qv_tensor_get_uint64(&t, &idx, &u, &err), QV_OK);
  assert_true(u == UINT64_MAX);
  qv_tensor_reset(&t);
  assert_int_equal(qv_test_tensor_read_path(
                       qv_test_shared_path("tensor_int32_2x3x4_rowmajor_dimnames_partial.arrow"),
                       0, &t, &err),
                   QV_OK);
  assert_non_null(t.dim_names);
  assert_string_equal(t.dim_names[0], "x");
  assert_string_equal(t.dim_names[1], "");
  qv_tensor_reset(&t);
  assert_int_equal(
      qv_test_tensor_read_path(qv_test_shared_path("tensor_float64_3x4_rowmajor.arrow"), 0, &t, &err),
      QV_OK);
  assert_null(t.dim_names);
  qv_tensor_reset(&t);

  static const char *bad[] = {"invalid/tensor_float64_3x4_truncated_body.arrow",
                              "invalid/tensor_float64_3x4_strides_overrun.arrow"};
  for (size_t i = 0; i < 2; i++) {
    qv_error_clear(&err);
    assert_int_not_equal(qv_test_tensor_read_path(qv_test_shared_path(bad[i]), 0, &t, &err), QV_OK);
    assert_true(err.message[0] != '\0');
  }
  assert_int_equal(
      qv_test_tensor_read_path(qv_test_shared_path("sparse_coo_float64_idx_int64_6x4.arrow"), 0, &t,
                          &err),
      QV_EINVAL);
  assert_non_null(strstr(err.message, "SparseTensor, not a Tensor"));
}

int main(int argc, char **argv) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_every_type_row_major),
      cmocka_unit_test(test_every_type_column_major),
      cmocka_unit_test(test_strided_view_written_row_major),
      cmocka_unit_test(test_large_strided_fd_write),
      cmocka_unit_test(test_large_buffer_write),
      cmocka_unit_test(test_zero_dim),
      cmocka_unit_test(test_zero_length_dims),
      cmocka_unit_test(test_arrow_empty_strides_accepted),
      cmocka_unit_test(test_absent_strides_unpadded_body),
      cmocka_unit_test(test_partial_names),
      cmocka_unit_test(test_canonical_strides_written),
      cmocka_unit_test(test_buffer_too_small),
      cmocka_unit_test(test_several_tensors_one_file),
      cmocka_unit_test(test_path_view_outlives_file),
      cmocka_unit_test(test_fd_reader_pipe),
      cmocka_unit_test(test_memory_owner_retained),
      cmocka_unit_test(test_path_reader_agrees_with_memory),
      cmocka_unit_test(test_legacy_prefix_path),
      cmocka_unit_test(test_truncated_metadata_and_body),
      cmocka_unit_test(test_body_shorter_than_extent),
      cmocka_unit_test(test_data_buffer_outside_body),
      cmocka_unit_test(test_negative_and_overflowing_dims),
      cmocka_unit_test(test_old_metadata_versions),
      cmocka_unit_test(test_too_many_dims),
      cmocka_unit_test(test_non_numeric_type),
      cmocka_unit_test(test_strides_count_mismatch),
      cmocka_unit_test(test_not_a_tensor_message),
      cmocka_unit_test(test_misaligned_data_copied),
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
