/* NumPy .npy: reads hand-made files of every dtype, both orders, both byte
 * orders and format versions 1.0/2.0/3.0; round-trips tensors through the
 * writer; rejects corrupt headers with a message naming the problem. */
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "quiver/advanced.h"
#include "numpy/npy_header.h"
#include "quiver/npy.h"
#include "test_util.h"
#include "util/load.h"

/* Byte order of the host's values in a descr: tests that hand host-order
 * data to the reader must say so, or a big-endian host reads it swapped. */
#if QV_HOST_BIG_ENDIAN
#define NATIVE ">"
#else
#define NATIVE "<"
#endif

/* qv_npy_read over caller memory (zero-copy: views point into buf). */
static QvStatus read_mem(const uint8_t *buf, size_t size, QvTensor *t, QvError *err) {
  QvSource *src;
  QvStatus st = qv_source_new_memory(&src, buf, size, NULL, err);
  if (st) return st;
  st = qv_npy_read(src, NULL, t, err);
  qv_source_free(src); /* a view keeps no reference to caller memory */
  return st;
}

static QvStatus read_path(const char *path, QvTensor *t, QvError *err) {
  QvSource *src;
  QvStatus st = qv_source_new_path(&src, path, err);
  if (st) return st;
  st = qv_npy_read(src, NULL, t, err);
  qv_source_free(src); /* a view holds its own reference to the mapping */
  return st;
}

/* qv_npy_write into buf[0, cap); *written: the bytes written. */
static QvStatus write_buf(const QvTensor *t, void *buf, size_t cap, size_t *written,
                          QvError *err) {
  QvSink *sink;
  QvStatus st = qv_sink_new_buffer(&sink, buf, cap, err);
  if (st) return st;
  st = qv_npy_write(t, sink, NULL, err);
  *written = (size_t)qv_sink_bytes_written(sink);
  qv_sink_free(sink);
  return st;
}

static QvStatus write_path(const QvTensor *t, const char *path, QvError *err) {
  QvSink *sink;
  QvStatus st = qv_sink_new_path(&sink, path, 0, err);
  if (st) return st;
  st = qv_npy_write(t, sink, NULL, err);
  if (st == QV_OK) st = qv_sink_finish(sink, err);
  qv_sink_free(sink);
  return st;
}


/* Builds a .npy image: preamble for `major`, the dict text padded with
 * spaces and '\n' so the data starts at a multiple of 64, then data. */
static uint8_t *make_npy(int major, const char *dict, const void *data, size_t data_len,
                         size_t *size) {
  size_t pre = major == 1 ? 10 : 12;
  size_t dl = strlen(dict);
  size_t total_hdr = (pre + dl + 1 + 63) / 64 * 64;
  size_t hl = total_hdr - pre;
  uint8_t *buf = qv_aligned_alloc(total_hdr + data_len);
  assert_non_null(buf);
  memcpy(buf, "\x93NUMPY", 6);
  buf[6] = (uint8_t)major;
  buf[7] = 0;
  buf[8] = (uint8_t)hl;
  buf[9] = (uint8_t)(hl >> 8);
  if (major != 1) {
    buf[10] = (uint8_t)(hl >> 16);
    buf[11] = (uint8_t)(hl >> 24);
  }
  memcpy(buf + pre, dict, dl);
  memset(buf + pre + dl, ' ', hl - dl - 1);
  buf[total_hdr - 1] = '\n';
  if (data_len) memcpy(buf + total_hdr, data, data_len);
  *size = total_hdr + data_len;
  return buf;
}

/* Native bytes of logical element i. */
static void native_elem(int i, size_t elsize, uint8_t *out) {
  for (size_t k = 0; k < elsize && k < 8; k++) out[k] = (uint8_t)(i * 31 + (int)k * 7 + 1);
}

static const struct {
  QvArrowType type;
  const char *code;
} dtypes[] = {{QV_ARROW_INT8, "i1"},     {QV_ARROW_INT16, "i2"},   {QV_ARROW_INT32, "i4"},
              {QV_ARROW_INT64, "i8"},    {QV_ARROW_UINT8, "u1"},   {QV_ARROW_UINT16, "u2"},
              {QV_ARROW_UINT32, "u4"},   {QV_ARROW_UINT64, "u8"},  {QV_ARROW_FLOAT16, "f2"},
              {QV_ARROW_FLOAT32, "f4"},  {QV_ARROW_FLOAT64, "f8"}};
#define N_DTYPES (sizeof dtypes / sizeof dtypes[0])

/* 2x3 array, element i = r*3 + c. */
static void check_case(int major, size_t d, char order, bool fortran) {
  QvArrowType type = dtypes[d].type;
  size_t elsize = qv_arrow_type_size(type);
  bool big = order == '>' || ((order == '|' || order == '=') && QV_HOST_BIG_ENDIAN);
  bool swap = big != QV_HOST_BIG_ENDIAN;
  uint8_t data[6 * 8];
  for (int r = 0; r < 2; r++)
    for (int c = 0; c < 3; c++) {
      int i = r * 3 + c;
      int pos = fortran ? c * 2 + r : i;
      uint8_t e[8];
      native_elem(i, elsize, e);
      for (size_t k = 0; k < elsize; k++) data[pos * elsize + k] = swap ? e[elsize - 1 - k] : e[k];
    }
  char dict[160];
  snprintf(dict, sizeof dict, "{'descr': '%c%s', 'fortran_order': %s, 'shape': (2, 3), }", order,
           dtypes[d].code, fortran ? "True" : "False");
  size_t size;
  uint8_t *buf = make_npy(major, dict, data, 6 * elsize, &size);
  QvTensor t;
  QvError err;
  size_t consumed = 0;
  /* the internal reader npz.c uses tells where the array ends */
  QvStatus st = qvi_npy_read_bytes(buf, size, NULL, &t, &consumed, &err);
  if (st) fail_msg("v%d %s: %s", major, dict, err.message);
  assert_int_equal(consumed, size);
  qv_tensor_reset(&t);
  st = read_mem(buf, size, &t, &err);
  if (st) fail_msg("v%d %s: %s", major, dict, err.message);
  assert_int_equal(t.type, type);
  assert_int_equal(t.ndim, 2);
  assert_int_equal(t.shape[0], 2);
  assert_int_equal(t.shape[1], 3);
  if (fortran) {
    assert_true(qv_tensor_is_column_major(&t));
    assert_false(qv_tensor_is_row_major(&t));
  } else {
    assert_true(qv_tensor_is_row_major(&t));
  }
  bool view = !swap || elsize == 1;
  if (view)
    assert_ptr_equal(t.data, buf + size - 6 * elsize); /* zero-copy */
  else
    assert_true(t.data < buf || t.data >= buf + size);
  assert_int_equal((uintptr_t)t.data % elsize, 0);
  for (int r = 0; r < 2; r++)
    for (int c = 0; c < 3; c++) {
      int64_t idx[2] = {r, c};
      int64_t off;
      assert_int_equal(qv_tensor_byte_offset(&t, idx, &off, &err), QV_OK);
      uint8_t e[8];
      native_elem(r * 3 + c, elsize, e);
      assert_memory_equal(t.data + off, e, elsize);
    }
  qv_tensor_reset(&t);
  qv_free(buf);
}

static void test_every_dtype_order_endianness_version(void **state) {
  (void)state;
  static const char orders[] = {'<', '>', '|', '='};
  for (int major = 1; major <= 3; major++)
    for (size_t d = 0; d < N_DTYPES; d++)
      for (size_t o = 0; o < sizeof orders; o++)
        for (int f = 0; f < 2; f++) check_case(major, d, orders[o], f == 1);
}

/* Header spellings NumPy and older writers produce. */
static void test_header_variants(void **state) {
  (void)state;
  static const char *dicts[] = {
      "{'descr': '" NATIVE "i4', 'fortran_order': False, 'shape': (2, 3), }",
      "{'descr':'" NATIVE "i4','fortran_order':False,'shape':(2,3)}",
      "{\"descr\": \"" NATIVE "i4\", \"fortran_order\": False, \"shape\": (2, 3)}",
      "{'shape': (2L, 3L), 'fortran_order': False, 'descr': '" NATIVE "i4'}",
      "{ 'descr' : '" NATIVE "i4' ,\n 'fortran_order' : False ,\t'shape' : ( 2 , 3 , ) , }",
      "{'descr': 'i4', 'fortran_order': False, 'shape': (2, 3), }",
  };
  int32_t data[6] = {1, 2, 3, 4, 5, 6};
  for (size_t i = 0; i < sizeof dicts / sizeof dicts[0]; i++) {
    size_t size;
    uint8_t *buf = make_npy(1, dicts[i], data, sizeof data, &size);
    QvTensor t;
    QvError err;
    QvStatus st = read_mem(buf, size, &t, &err);
    if (st) fail_msg("%s: %s", dicts[i], err.message);
    assert_int_equal(t.shape[1], 3);
    assert_memory_equal(t.data, data, sizeof data);
    qv_tensor_reset(&t);
    qv_free(buf);
  }
}

static void test_scalar_and_empty(void **state) {
  (void)state;
  double v = -0.0;
  size_t size;
  uint8_t *buf =
      make_npy(1, "{'descr': '" NATIVE "f8', 'fortran_order': False, 'shape': (), }", &v, 8, &size);
  QvTensor t;
  QvError err;
  assert_int_equal(read_mem(buf, size, &t, &err), QV_OK);
  assert_int_equal(t.ndim, 0);
  assert_memory_equal(t.data, &v, 8);
  qv_tensor_reset(&t);
  qv_free(buf);

  buf = make_npy(1, "{'descr': '|u1', 'fortran_order': True, 'shape': (3, 0), }", NULL, 0, &size);
  assert_int_equal(read_mem(buf, size, &t, &err), QV_OK);
  assert_int_equal(qv_tensor_n_elements(&t), 0);
  assert_int_equal(t.shape[0], 3);
  qv_tensor_reset(&t);
  qv_free(buf);

  /* a 1-tuple */
  int16_t d1[4] = {1, -2, 3, -4};
  buf = make_npy(2, "{'descr': '" NATIVE "i2', 'fortran_order': False, 'shape': (4,), }", d1, 8, &size);
  assert_int_equal(read_mem(buf, size, &t, &err), QV_OK);
  assert_int_equal(t.ndim, 1);
  assert_int_equal(t.shape[0], 4);
  qv_tensor_reset(&t);
  qv_free(buf);
}

/* Two arrays appended to one file (np.save twice on one handle). */
static void test_consumed_and_concatenated(void **state) {
  (void)state;
  uint8_t a[3] = {1, 2, 3}, b[2] = {9, 8};
  size_t s1, s2;
  uint8_t *f1 = make_npy(1, "{'descr': '|u1', 'fortran_order': False, 'shape': (3,), }", a, 3, &s1);
  uint8_t *f2 = make_npy(1, "{'descr': '|i1', 'fortran_order': False, 'shape': (2,), }", b, 2, &s2);
  uint8_t *both = malloc(s1 + s2);
  assert_non_null(both);
  memcpy(both, f1, s1);
  memcpy(both + s1, f2, s2);
  QvTensor t;
  QvError err;
  size_t used;
  assert_int_equal(qvi_npy_read_bytes(both, s1 + s2, NULL, &t, &used, &err), QV_OK);
  assert_int_equal(used, s1);
  assert_int_equal(t.type, QV_ARROW_UINT8);
  qv_tensor_reset(&t);
  assert_int_equal(qvi_npy_read_bytes(both + used, s2, NULL, &t, &used, &err), QV_OK);
  assert_int_equal(t.type, QV_ARROW_INT8);
  assert_memory_equal(t.data, b, 2);
  qv_tensor_reset(&t);
  free(both);
  qv_free(f1);
  qv_free(f2);
}

/* ---- writer */

static void roundtrip(const QvTensor *t, bool expect_fortran) {
  QvError err;
  size_t need;
  assert_int_equal(qv_npy_write_size(t, NULL, &need, &err), QV_OK);
  uint8_t *buf = qv_aligned_alloc(need);
  assert_non_null(buf);
  size_t written;
  assert_int_equal(write_buf(t, buf, need, &written, &err), QV_OK);
  assert_int_equal(written, need);
  QvNpyHeader h;
  assert_int_equal(qv_npy_parse_header(buf, need, &h, &err), QV_OK);
  assert_int_equal(h.major, 1);
  assert_int_equal(h.data_offset % 64, 0);
  assert_int_equal(buf[h.data_offset - 1], '\n');
  assert_int_equal(h.fortran_order, expect_fortran);
  assert_int_equal(h.type, t->type);
  QvTensor back;
  assert_int_equal(read_mem(buf, need, &back, &err), QV_OK);
  assert_ptr_equal(back.data, buf + h.data_offset);
  assert_true(qv_tensor_equal(t, &back, true));
  assert_int_equal(back.ndim, t->ndim);
  qv_tensor_reset(&back);
  assert_int_equal(write_buf(t, buf, need - 1, &written, &err), QV_ELIMIT);
  qv_free(buf);
}

static void test_writer_roundtrip(void **state) {
  (void)state;
  const int64_t shape[3] = {3, 1, 4};
  for (size_t d = 0; d < N_DTYPES; d++) {
    for (int col = 0; col < 2; col++) {
      QvTensor t;
      QvError err;
      void *data;
      assert_int_equal(qv_tensor_alloc(&t, dtypes[d].type, 3, shape, NULL, col == 1, &data, &err),
                       QV_OK);
      uint8_t *p = data;
      for (int64_t i = 0; i < 12 * (int64_t)qv_arrow_type_size(t.type); i++)
        p[i] = (uint8_t)(i * 11 + d);
      if (dtypes[d].type >= QV_ARROW_FLOAT16) {
        /* keep NaN payloads out: equals compares float values */
        for (int64_t i = 0; i < 12; i++) {
          int64_t idx[3] = {i / 4, 0, i % 4};
          int64_t off;
          assert_int_equal(qv_tensor_byte_offset(&t, idx, &off, &err), QV_OK);
          if (t.type == QV_ARROW_FLOAT16) {
            uint16_t h = qv_float_to_half((float)i - 5.5f);
            memcpy(p + off, &h, 2);
          } else if (t.type == QV_ARROW_FLOAT32) {
            float f = (float)i / 3.0f;
            memcpy(p + off, &f, 4);
          } else {
            double x = (double)i * 1e300;
            memcpy(p + off, &x, 8);
          }
        }
      }
      roundtrip(&t, col == 1);
      qv_tensor_reset(&t);
    }
  }
}

/* A large array goes through the streaming copy in the writer. */
static void test_writer_large(void **state) {
  (void)state;
  const int64_t shape[2] = {(6 << 20) / 4 / 1000, 1000};
  QvTensor t;
  QvError err;
  void *data;
  assert_int_equal(qv_tensor_alloc(&t, QV_ARROW_FLOAT32, 2, shape, NULL, true, &data, &err), QV_OK);
  float *f = data;
  for (int64_t i = 0; i < shape[0] * shape[1]; i++) f[i] = (float)i * 0.25f;
  roundtrip(&t, true);
  qv_tensor_reset(&t);
}

static void test_writer_header_text(void **state) {
  (void)state;
  const int64_t shape[1] = {5};
  QvTensor t;
  QvError err;
  assert_int_equal(qv_tensor_alloc(&t, QV_ARROW_INT32, 1, shape, NULL, false, NULL, &err), QV_OK);
  uint8_t buf[256];
  size_t written;
  assert_int_equal(write_buf(&t, buf, sizeof buf, &written, &err), QV_OK);
  assert_int_equal(written, 128 + 20);
  const char *expect = QV_HOST_BIG_ENDIAN ? "{'descr': '>i4', 'fortran_order': False, 'shape': (5,), }"
                                  : "{'descr': '<i4', 'fortran_order': False, 'shape': (5,), }";
  assert_memory_equal(buf, "\x93NUMPY\x01\x00\x76\x00", 10);
  assert_memory_equal(buf + 10, expect, strlen(expect));
  qv_tensor_reset(&t);

  /* 0-d and 1-byte types */
  uint8_t one = 7;
  assert_int_equal(qv_tensor_init(&t, &(QvTensorDesc){.type = QV_ARROW_UINT8, .data = &one,
                                                      .data_size = 1}, &err),
                   QV_OK);
  assert_int_equal(write_buf(&t, buf, sizeof buf, &written, &err), QV_OK);
  const char *e0 = "{'descr': '|u1', 'fortran_order': False, 'shape': (), }";
  assert_memory_equal(buf + 10, e0, strlen(e0));
  assert_int_equal(buf[128], 7);
  qv_tensor_reset(&t);
}

/* Non-contiguous: written as a C-order copy. */
static void test_writer_strided(void **state) {
  (void)state;
  int32_t base[4][6];
  for (int r = 0; r < 4; r++)
    for (int c = 0; c < 6; c++) base[r][c] = r * 100 + c;
  const int64_t shape[2] = {3, 2}, strides[2] = {24, 12};
  QvTensor view;
  QvError err;
  assert_int_equal(qv_tensor_init(&view, &(QvTensorDesc){.type = QV_ARROW_INT32, .ndim = 2,
                                                         .shape = shape, .strides = strides,
                                                         .data = &base[1][1],
                                                         .data_size = (int64_t)sizeof base - 28}, &err),
                   QV_OK);
  roundtrip(&view, false);
  char path[256];
  snprintf(path, sizeof path, "%s/tio_npy_%d.npy", QV_BINARY_DIR, (int)getpid());
  assert_int_equal(write_path(&view, path, &err), QV_OK);
  QvTensor back;
  assert_int_equal(read_path(path, &back, &err), QV_OK);
  unlink(path);
  assert_int_equal((uintptr_t)back.data % 64, 0);
  const int32_t *d = (const int32_t *)back.data;
  int32_t expect[6] = {101, 104, 201, 204, 301, 304};
  assert_memory_equal(d, expect, sizeof expect);
  qv_tensor_reset(&back);
  qv_tensor_reset(&view);
}

static void test_read_path_errors(void **state) {
  (void)state;
  QvTensor t;
  QvError err;
  assert_int_equal(read_path("/nonexistent/x.npy", &t, &err), QV_EIO);
  assert_non_null(strstr(err.message, "/nonexistent/x.npy"));
  char path[256];
  snprintf(path, sizeof path, "%s/tio_empty_%d.npy", QV_BINARY_DIR, (int)getpid());
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  assert_true(fd >= 0);
  close(fd);
  assert_int_equal(read_path(path, &t, &err), QV_EINVAL);
  assert_non_null(strstr(err.message, "empty"));
  unlink(path);
}

/* ---- corrupt input */

static void expect_bad(int major, const char *dict, size_t data_len, QvStatus code,
                       const char *needle) {
  uint8_t data[64] = {0};
  size_t size;
  uint8_t *buf = make_npy(major, dict, data, data_len, &size);
  QvTensor t;
  QvError err;
  qv_error_clear(&err);
  QvStatus st = read_mem(buf, size, &t, &err);
  if (st == QV_OK) {
    qv_tensor_reset(&t);
    fail_msg("accepted %s", dict);
  }
  if (st != code) fail_msg("%s: status %d (%s), expected %d", dict, st, err.message, code);
  if (strstr(err.message, needle) == NULL)
    fail_msg("%s: error '%s' does not mention '%s'", dict, err.message, needle);
  qv_free(buf);
}

static void test_corrupt_headers(void **state) {
  (void)state;
  /* dtypes NumPy writes and quiver does not read: not supported */
  expect_bad(1, "{'descr': '<U3', 'fortran_order': False, 'shape': (2,), }", 24, QV_ENOTSUP,
             "unsupported dtype '<U3'");
  expect_bad(1, "{'descr': '|O', 'fortran_order': False, 'shape': (2,), }", 16, QV_ENOTSUP,
             "unsupported dtype '|O'");
  expect_bad(1, "{'descr': '|b1', 'fortran_order': False, 'shape': (2,), }", 2, QV_ENOTSUP,
             "unsupported dtype '|b1'");
  expect_bad(1, "{'descr': '<c16', 'fortran_order': False, 'shape': (2,), }", 32, QV_ENOTSUP,
             "unsupported dtype");
  expect_bad(1, "{'descr': '<f16', 'fortran_order': False, 'shape': (2,), }", 32, QV_ENOTSUP,
             "unsupported dtype");
  expect_bad(1, "{'descr': '<zz', 'fortran_order': False, 'shape': (2,), }", 32, QV_EINVAL,
             "unknown dtype '<zz'");
  expect_bad(1, "{'descr': [('a', '<i4')], 'fortran_order': False, 'shape': (2,), }", 8,
             QV_ENOTSUP, "structured");
  expect_bad(1, "{'descr': '<i4', 'fortran_order': False, 'shape': (-2,), }", 8, QV_EINVAL,
             "negative");
  expect_bad(1, "{'descr': '<i4', 'fortran_order': False, 'shape': (99999999999999999999,), }",
             8, QV_EINVAL, "overflows");
  expect_bad(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (4611686018427387904, 4), }",
             8, QV_EINVAL, "overflows");
  /* a zero extent does not excuse the others from fitting int64 bytes
   * (found by fuzz_npy: the header parser and the reader disagreed) */
  expect_bad(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (0, 1099511627776, 1099511627776), }",
             0, QV_EINVAL, "overflows");
  {
    QvNpyHeader h;
    QvError e;
    size_t n;
    uint8_t none[1] = {0};
    uint8_t *b = make_npy(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (0, 1099511627776, 1099511627776), }", none, 0, &n);
    assert_int_equal(qv_npy_parse_header(b, n, &h, &e), QV_EINVAL);
    qv_free(b);
  }
  expect_bad(1, "{'descr': '<i4', 'fortran_order': False, 'shape': (2, 3), }", 20,
             QV_ETRUNCATED, "data holds 20 bytes");
  expect_bad(1, "{'descr': '<i4', 'fortran_order': False, 'shape': (3), }", 12, QV_EINVAL,
             "not a tuple");
  expect_bad(1, "{'descr': '<i4', 'fortran_order': False, 'shape': [3], }", 12, QV_EINVAL,
             "tuple");
  expect_bad(1, "{'descr': '<i4', 'fortran_order': 0, 'shape': (3,), }", 12, QV_EINVAL,
             "True or False");
  expect_bad(1, "{'descr': '<i4', 'fortran_order': Falsey, 'shape': (3,), }", 12, QV_EINVAL,
             "True or False");
  expect_bad(1, "{'descr': '<i4', 'shape': (3,), }", 12, QV_EINVAL, "missing key 'fortran_order'");
  expect_bad(1, "{'fortran_order': False, 'shape': (3,), }", 12, QV_EINVAL, "missing key 'descr'");
  expect_bad(1, "{'descr': '<i4', 'fortran_order': False, }", 12, QV_EINVAL, "missing key 'shape'");
  expect_bad(1, "{'descr': '<i4', 'fortran_order': False, 'shape': (3,), 'x': 1}", 12, QV_EINVAL,
             "unexpected key 'x'");
  expect_bad(1, "{'descr': '<i4', 'descr': '<i4', 'fortran_order': False, 'shape': (3,)}", 12,
             QV_EINVAL, "duplicate key 'descr'");
  expect_bad(1, "{'descr': '<i4', 'fortran_order': False, 'shape': (3,), } x", 12, QV_EINVAL,
             "after the dictionary");
  expect_bad(1, "{'descr': '<i4', 'fortran_order': False, 'shape': (3,), ", 12, QV_EINVAL,
             "expected a quoted string");
  expect_bad(1, "{'descr': '<i4, 'fortran_order': False, 'shape': (3,), }", 12, QV_EINVAL,
             "");
  expect_bad(1, "{'descr': '<i4', 'fortran_order': False, 'shape': (03,), }", 12, QV_EINVAL,
             "leading zero");
  expect_bad(1, "{'descr': '<i4', 'fortran_order': False, 'shape': (3x,), }", 12, QV_EINVAL,
             "not an integer");
  expect_bad(1, "{'descr': '<\\x69\\x34', 'fortran_order': False, 'shape': (3,), }", 12,
             QV_ENOTSUP, "escape");
  {
    /* '<f8\0' (a raw NUL inside the quotes): NumPy refuses it; read as a C
     * string it would pass for '<f8' */
    uint8_t data[16] = {0};
    size_t n;
    uint8_t *b = make_npy(1, "{'descr': '<f8@', 'fortran_order': False, 'shape': (2,), }", data,
                          16, &n);
    uint8_t *at = memchr(b, '@', n);
    assert_non_null(at);
    *at = '\0';
    QvTensor t;
    QvError e;
    qv_error_clear(&e);
    assert_int_equal(read_mem(b, n, &t, &e), QV_EINVAL);
    assert_non_null(strstr(e.message, "NUL byte"));
    qv_free(b);
  }
  expect_bad(1, "['descr', '<i4']", 12, QV_EINVAL, "expected '{'");
  expect_bad(1, "", 12, QV_EINVAL, "expected '{'");
  expect_bad(1, "{'descr': '<i4', 'fortran_order': False, 'shape': (3,), } \xe9", 12, QV_EINVAL,
             "non-ASCII");
  /* too many dims */
  char dict[512];
  int n = snprintf(dict, sizeof dict, "{'descr': '<i4', 'fortran_order': False, 'shape': (");
  for (int i = 0; i < QV_TENSOR_MAX_NDIM + 1; i++) n += snprintf(dict + n, sizeof dict - (size_t)n, "1,");
  snprintf(dict + n, sizeof dict - (size_t)n, "), }");
  expect_bad(1, dict, 4, QV_ELIMIT, "more than 64 dimensions");
}

static void test_corrupt_preamble(void **state) {
  (void)state;
  int32_t data[3] = {1, 2, 3};
  size_t size;
  uint8_t *good = make_npy(1, "{'descr': '<i4', 'fortran_order': False, 'shape': (3,), }", data,
                           sizeof data, &size);
  QvTensor t;
  QvError err;
  /* every truncation fails cleanly */
  for (size_t cut = 0; cut < size; cut++) {
    qv_error_clear(&err);
    assert_int_not_equal(read_mem(good, cut, &t, &err), QV_OK);
    assert_true(err.message[0] != '\0');
  }
  uint8_t *bad = malloc(size);
  assert_non_null(bad);
  memcpy(bad, good, size);
  bad[1] = 'X';
  assert_int_equal(read_mem(bad, size, &t, &err), QV_EINVAL);
  assert_non_null(strstr(err.message, "bad magic"));
  memcpy(bad, good, size);
  bad[6] = 4;
  assert_int_equal(read_mem(bad, size, &t, &err), QV_ENOTSUP);
  assert_non_null(strstr(err.message, "version 4.0"));
  memcpy(bad, good, size);
  bad[7] = 1;
  assert_int_equal(read_mem(bad, size, &t, &err), QV_ENOTSUP);
  assert_non_null(strstr(err.message, "version 1.1"));
  memcpy(bad, good, size);
  bad[8] = 0xF0;
  bad[9] = 0x00;
  assert_int_equal(read_mem(bad, size, &t, &err), QV_ETRUNCATED);
  assert_non_null(strstr(err.message, "past the end"));
  /* a 2.0 file whose uint32 length is huge */
  free(bad);
  qv_free(good);
  good = make_npy(2, "{'descr': '<i4', 'fortran_order': False, 'shape': (3,), }", data,
                  sizeof data, &size);
  good[11] = 0x7F;
  assert_int_equal(read_mem(good, size, &t, &err), QV_ELIMIT);
  assert_non_null(strstr(err.message, "exceeds the limit"));
  qv_free(good);
}

/* Data at an offset that is not a multiple of the element size (a header
 * from a writer that does not pad) is copied into aligned memory. */
static void test_unaligned_data_copied(void **state) {
  (void)state;
  const char *dict = "{'descr':'" NATIVE "f8','fortran_order':False,'shape':(2,)}\n";
  size_t dl = strlen(dict);
  double vals[2] = {1.5, -2.25};
  uint8_t *buf = qv_aligned_alloc(10 + dl + 16);
  assert_non_null(buf);
  memcpy(buf, "\x93NUMPY\x01\x00", 8);
  buf[8] = (uint8_t)dl;
  buf[9] = 0;
  memcpy(buf + 10, dict, dl);
  memcpy(buf + 10 + dl, vals, 16);
  assert_int_not_equal((10 + dl) % 8, 0);
  QvTensor t;
  QvError err;
  assert_int_equal(read_mem(buf, 10 + dl + 16, &t, &err), QV_OK);
  assert_int_equal((uintptr_t)t.data % 8, 0);
  assert_memory_equal(t.data, vals, 16);
  qv_tensor_reset(&t);
  qv_free(buf);
}

/* A pipe is read to its end (np.load needs the whole file too). */
static void test_read_pipe(void **state) {
  (void)state;
  const int64_t shape[1] = {1000};
  QvTensor t;
  QvError err;
  void *data;
  assert_int_equal(qv_tensor_alloc(&t, QV_ARROW_INT32, 1, shape, NULL, false, &data, &err), QV_OK);
  for (int i = 0; i < 1000; i++) ((int32_t *)data)[i] = i * 7 - 3;
  int fds[2];
  assert_int_equal(pipe(fds), 0);
  QvSink *sink;
  assert_int_equal(qv_sink_new_fd(&sink, fds[1], &err), QV_OK);
  assert_int_equal(qv_npy_write(&t, sink, NULL, &err), QV_OK); /* 4 KB: fits the pipe */
  qv_sink_free(sink);
  close(fds[1]);
  QvSource *src;
  assert_int_equal(qv_source_new_fd(&src, fds[0], &err), QV_OK);
  QvTensor back;
  QvStatus st = qv_npy_read(src, NULL, &back, &err);
  if (st) fail_msg("read: %s", err.message);
  qv_source_free(src);
  close(fds[0]);
  assert_int_equal((uintptr_t)back.data % 64, 0);
  assert_true(qv_tensor_equal(&t, &back, true));
  qv_tensor_reset(&back);
  qv_tensor_reset(&t);
}

/* ---- same path: issue 9's data-loss case */

/* A float64 200 x 100 tensor (160 KB) with distinct values. */
static void make_big(QvTensor *t) {
  const int64_t shape[2] = {200, 100};
  QvError err;
  void *data;
  assert_int_equal(qv_tensor_alloc(t, QV_ARROW_FLOAT64, 2, shape, NULL, false, &data, &err),
                   QV_OK);
  double *d = data;
  for (int64_t i = 0; i < 200 * 100; i++) d[i] = (double)i * 0.5 - 11;
}

/* Read zero-copy from a path (the data is the file's mapping), written back
 * to the same path: same bytes, and the view still reads the old pages. */
static void test_same_path_roundtrip(void **state) {
  (void)state;
  QvTestDir d;
  qv_test_dir_make(&d, "same.npy");
  QvTensor t;
  make_big(&t);
  QvError err;
  assert_int_equal(write_path(&t, d.file, &err), QV_OK);
  size_t size;
  uint8_t *before = qv_test_slurp(d.file, &size);
  QvTensor view;
  assert_int_equal(read_path(d.file, &view, &err), QV_OK);
  assert_true(qv_test_is_mapping_of(view.data, d.file));
  QvStatus st = write_path(&view, d.file, &err);
  if (st) fail_msg("write back: %s", err.message);
  qv_test_file_kept(&d, before, size);
  assert_true(qv_tensor_equal(&view, &t, true));
  qv_tensor_reset(&view);
  qv_tensor_reset(&t);
  free(before);
  qv_test_dir_remove(&d);
}

/* Child: the disk fills up while the zero-copy view is written back. */
static int fail_write(const char *path) {
  QvTensor view;
  QvError err;
  if (read_path(path, &view, &err)) return 2;
  if (qv_test_fill_disk_at(65536) != 0) return 4;
  QvStatus st = write_path(&view, path, &err);
  if (st != QV_EIO || strstr(err.message, "File too large") == NULL) return 5;
  qv_tensor_reset(&view);
  return 0;
}

static void test_failed_write_keeps_file(void **state) {
  (void)state;
  QvTestDir d;
  qv_test_dir_make(&d, "keep.npy");
  QvTensor t;
  make_big(&t);
  QvError err;
  assert_int_equal(write_path(&t, d.file, &err), QV_OK);
  qv_test_failed_write_keeps(&d, 65536, fail_write);
  qv_tensor_reset(&t);
  qv_test_dir_remove(&d);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_every_dtype_order_endianness_version),
      cmocka_unit_test(test_header_variants),
      cmocka_unit_test(test_scalar_and_empty),
      cmocka_unit_test(test_consumed_and_concatenated),
      cmocka_unit_test(test_writer_roundtrip),
      cmocka_unit_test(test_writer_large),
      cmocka_unit_test(test_writer_header_text),
      cmocka_unit_test(test_writer_strided),
      cmocka_unit_test(test_read_path_errors),
      cmocka_unit_test(test_corrupt_headers),
      cmocka_unit_test(test_corrupt_preamble),
      cmocka_unit_test(test_unaligned_data_copied),
      cmocka_unit_test(test_read_pipe),
      cmocka_unit_test(test_same_path_roundtrip),
      cmocka_unit_test(test_failed_write_keeps_file),
  };
  return qv_test_run(tests, NULL, NULL);
}
