/* NumPy .npy reader and writer (the header parser is npy_header.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/options.h"
#include "numpy/npy_header.h"
#include "quiver/npy.h"
#include "util/copy.h"

#define DATA_ALIGN 64

/* ---- reading */

static void free_aligned(void *p) { qv_free(p); }

static void swap_bytes(uint8_t *p, int64_t n, size_t elsize) {
  for (int64_t i = 0; i < n; i += (int64_t)elsize) {
    uint8_t *e = p + i;
    for (size_t a = 0, b = elsize - 1; a < b; a++, b--) {
      uint8_t t = e[a];
      e[a] = e[b];
      e[b] = t;
    }
  }
}

QvStatus qvi_npy_read_bytes(const uint8_t *data, size_t size, QvOwner *owner, QvTensor *out,
                           size_t *consumed, QvError *error) {
  return qvi_npy_read_bytes_ex(data, size, owner, false, out, consumed, error);
}

QvStatus qvi_npy_read_bytes_ex(const uint8_t *data, size_t size, QvOwner *owner,
                              bool keep_misaligned, QvTensor *out, size_t *consumed,
                              QvError *error) {
  if (out == NULL) return qv_error_set(error, QV_EARG, "NULL output tensor");
  memset(out, 0, sizeof *out);
  if (consumed) *consumed = 0;
  QvNpyHeader h;
  QvStatus st = qv_npy_parse_header(data, size, &h, error);
  if (st) return st;
  if ((uint64_t)h.data_size > size - h.data_offset)
    return qv_error_set(error, QV_ETRUNCATED,
                        ".npy: data holds %zu bytes but shape and dtype '%s' need %lld",
                        size - h.data_offset, h.descr, (long long)h.data_size);
  int64_t strides[QV_TENSOR_MAX_NDIM];
  if ((st = qv_tensor_compute_strides(h.type, h.ndim, h.shape, h.fortran_order, strides, error)))
    return qv_error_prefix(error, ".npy");
  size_t elsize = qv_arrow_type_size(h.type);
  const uint8_t *p = data + h.data_offset;
  bool swap = elsize > 1 && h.big_endian != qvi_npy_host_big_endian();
  QvOwner *copy_owner = NULL;
  if (h.data_size > 0 && (swap || (!keep_misaligned && (uintptr_t)p % elsize != 0))) {
    uint8_t *copy = qv_aligned_alloc((size_t)h.data_size);
    if (copy == NULL) return qv_error_set(error, QV_ENOMEM, "out of memory reading .npy data");
    /* misaligned data (a stored .npz member) sits at another offset within
     * the page than its copy: qvi_copy_large is fast there, memcpy is not */
    qvi_copy_large(copy, p, (size_t)h.data_size);
    if (swap) swap_bytes(copy, h.data_size, elsize);
    copy_owner = qv_owner_new(free_aligned, copy);
    if (copy_owner == NULL) {
      qv_free(copy);
      return qv_error_set(error, QV_ENOMEM, "out of memory");
    }
    p = copy;
    owner = copy_owner;
  }
  st = qv_tensor_init(out, &(QvTensorDesc){.type = h.type, .ndim = h.ndim, .shape = h.shape,
                                           .strides = strides, .data = p, .data_size = h.data_size,
                                           .owner = owner}, error);
  qv_owner_free(copy_owner);
  if (st) return qv_error_prefix(error, ".npy");
  if (consumed) *consumed = h.data_offset + (size_t)h.data_size;
  return QV_OK;
}

QvStatus qvi_npy_read_source(QvSource *source, int64_t max_input_size, QvNpyParseFn parse, void *out,
                             QvError *error) {
  if (source == NULL) return qv_error_set(error, QV_EARG, "NULL source");
  const uint8_t *data;
  size_t size;
  QvOwner *owner;
  /* a view of memory or a mapping; a pipe read whole, as np.load reads it
   * (max_input_size bounds only what is read) */
  int64_t max = qv_source_has_view(source) ? 0 : max_input_size;
  QvStatus st = qv_source_read_all(source, max, &data, &size, &owner, error);
  if (st) return st;
  st = parse(data, size, owner, out, error);
  qv_owner_free(owner); /* what parse made keeps its own references */
  if (st) return qv_error_prefix(error, "%s", qv_source_name(source));
  return QV_OK;
}

static QvStatus parse_npy(const uint8_t *data, size_t size, QvOwner *owner, void *out,
                          QvError *error) {
  if (size == 0) return qv_error_set(error, QV_EINVAL, "not a .npy file: empty");
  return qvi_npy_read_bytes(data, size, owner, out, NULL, error);
}

QvStatus qv_npy_read(QvSource *source, const QvNpyReadOptions *options, QvTensor *out,
                     QvError *error) {
  if (out == NULL) return qv_error_set(error, QV_EARG, "NULL output tensor");
  memset(out, 0, sizeof *out);
  QvNpyReadOptions o;
  QvStatus st = QV_OPTIONS_LOAD(&o, options, QvNpyReadOptions, error);
  if (st) return st;
  return qvi_npy_read_source(source, o.max_input_size, parse_npy, out, error);
}

/* ---- writing */

typedef struct NpyPlan {
  char header[2048 + DATA_ALIGN]; /* preamble + dict + padding */
  size_t header_size;
  int64_t data_len;
  bool direct; /* data_len bytes at t->data, in the order the header says */
} NpyPlan;

static QvStatus plan_npy(const QvTensor *t, const QvNpyWriteOptions *options, NpyPlan *p,
                         QvError *error) {
  memset(p, 0, sizeof *p);
  QvNpyWriteOptions o;
  QvStatus st = QV_OPTIONS_LOAD(&o, options, QvNpyWriteOptions, error);
  if (st) return st;
  if (t == NULL) return qv_error_set(error, QV_EARG, "NULL tensor");
  if (t->type < QV_ARROW_INT8 || t->type >= QV_ARROW_NUMERIC_END)
    return qv_error_set(error, QV_EARG, "tensor has an invalid value type %d", (int)t->type);
  if (t->ndim < 0 || t->ndim > QV_TENSOR_MAX_NDIM || (t->ndim > 0 && t->shape == NULL))
    return qv_error_set(error, QV_EARG, "tensor has an invalid shape");
  static const char *codes[QV_ARROW_NUMERIC_END] = {
      [QV_ARROW_INT8] = "i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8", "f2", "f4", "f8"};
  size_t elsize = qv_arrow_type_size(t->type);
  char order = elsize == 1 ? '|' : qvi_npy_host_big_endian() ? '>' : '<';
  int64_t size = qv_tensor_n_elements(t);
  if (size < 0 || (size > 0 && size > INT64_MAX / (int64_t)elsize))
    return qv_error_set(error, QV_EARG, "tensor size overflows");
  p->data_len = size * (int64_t)elsize;
  if (size > 0 && t->data == NULL) return qv_error_set(error, QV_EARG, "tensor has no data");
  bool fortran = !o.c_order && !qv_tensor_is_row_major(t) && qv_tensor_is_column_major(t);
  p->direct = size == 0 || qv_tensor_is_row_major(t) || fortran;

  char dict[2048]; /* 64 dims of 19 digits and the fixed text fit */
  int n = snprintf(dict, sizeof dict, "{'descr': '%c%s', 'fortran_order': %s, 'shape': (", order,
                   codes[t->type], fortran ? "True" : "False");
  for (int32_t i = 0; i < t->ndim; i++)
    n += snprintf(dict + n, sizeof dict - (size_t)n, "%s%lld", i ? ", " : "",
                  (long long)t->shape[i]);
  n += snprintf(dict + n, sizeof dict - (size_t)n, "%s), }", t->ndim == 1 ? "," : "");
  size_t dict_len = (size_t)n;
  size_t pre = 10;
  size_t total = (pre + dict_len + 1 + DATA_ALIGN - 1) / DATA_ALIGN * DATA_ALIGN;
  size_t hl = total - pre;
  uint8_t *h = (uint8_t *)p->header;
  memcpy(h, qvi_npy_magic, sizeof qvi_npy_magic);
  h[6] = 1;
  h[7] = 0;
  h[8] = (uint8_t)(hl & 0xFF);
  h[9] = (uint8_t)(hl >> 8);
  memcpy(h + pre, dict, dict_len);
  memset(h + pre + dict_len, ' ', hl - dict_len - 1);
  h[total - 1] = '\n';
  p->header_size = total;
  return QV_OK;
}

QvStatus qvi_npy_write_header(const QvTensor *t, uint8_t out[QV_NPY_WRITE_HEADER_MAX], size_t *len,
                             bool *direct, QvError *error) {
  NpyPlan p;
  QvStatus st = plan_npy(t, NULL, &p, error);
  if (st) return st;
  memcpy(out, p.header, p.header_size);
  *len = p.header_size;
  *direct = p.direct;
  return QV_OK;
}

QvStatus qv_npy_write_size(const QvTensor *t, const QvNpyWriteOptions *options, size_t *size,
                           QvError *error) {
  if (size == NULL) return qv_error_set(error, QV_EARG, "NULL size");
  *size = 0;
  NpyPlan p;
  QvStatus st = plan_npy(t, options, &p, error);
  if (st) return st;
  if ((uint64_t)p.data_len > (uint64_t)SIZE_MAX - p.header_size)
    return qv_error_set(error, QV_ELIMIT, ".npy image does not fit in memory");
  *size = p.header_size + (size_t)p.data_len;
  return QV_OK;
}

QvStatus qv_npy_write(const QvTensor *t, QvSink *sink, const QvNpyWriteOptions *options,
                      QvError *error) {
  if (sink == NULL) return qv_error_set(error, QV_EARG, "NULL sink");
  NpyPlan p;
  QvStatus st = plan_npy(t, options, &p, error);
  if (st) return st;
  if ((st = qv_sink_write(sink, p.header, p.header_size, error))) return st;
  if (p.data_len == 0) return QV_OK;
  if (p.direct) return qv_sink_write(sink, t->data, (size_t)p.data_len, error);
  QvTensor copy;
  if ((st = qv_tensor_copy(t, false, &copy, error))) return st;
  st = qv_sink_write(sink, copy.data, (size_t)p.data_len, error);
  qv_tensor_reset(&copy);
  return st;
}
