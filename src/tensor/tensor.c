/* Dense tensors: construction (validated like Arrow's Tensor::Make), layout
 * queries and element access. */
#include <inttypes.h>
#include <stdalign.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "quiver/tensor.h"
#include "tensor/tensor_internal.h"
#include "util/copy.h"

QvStatus qv_tensor_compute_strides(QvArrowType type, int32_t ndim, const int64_t *shape,
                                   bool column_major, int64_t *out, QvError *error) {
  int64_t elsize = (int64_t)qv_arrow_type_size(type);
  if (elsize == 0)
    return qv_error_set(error, QV_EINVAL, "Tensor: unknown value type %d", (int)type);
  if (ndim < 0 || ndim > QV_TENSOR_MAX_NDIM)
    return qv_error_set(error, QV_EINVAL, "Tensor: ndim %d out of range [0, %d]", (int)ndim,
                        QV_TENSOR_MAX_NDIM);
  if (ndim > 0 && (shape == NULL || out == NULL))
    return qv_error_set(error, QV_EARG, "Tensor: shape or strides array is NULL");
  bool empty = false;
  for (int32_t i = 0; i < ndim; i++) {
    if (shape[i] < 0)
      return qv_error_set(error, QV_EINVAL, "Tensor: shape[%d] = %" PRId64 " is negative", (int)i,
                          shape[i]);
    if (shape[i] == 0) empty = true;
  }
  if (empty) {
    /* Arrow's convention for tensors without elements */
    for (int32_t i = 0; i < ndim; i++) out[i] = elsize;
    return QV_OK;
  }
  int64_t acc = elsize;
  for (int32_t k = 0; k < ndim; k++) {
    int32_t i = column_major ? k : ndim - 1 - k;
    out[i] = acc;
    if (__builtin_mul_overflow(acc, shape[i], &acc))
      return qv_error_set(error, QV_EINVAL,
                          "Tensor: shape[%d] = %" PRId64
                          ": the %s strides of the shape overflow int64",
                          (int)i, shape[i], column_major ? "column-major" : "row-major");
  }
  return QV_OK;
}

/* shape, strides, name pointers, then the name characters */
static void *alloc_private(int64_t ndim, const char *const *names, const int64_t **shape,
                           const int64_t **strides, const char *const **name_ptrs) {
  size_t n = (size_t)ndim;
  size_t chars = 0;
  if (names)
    for (size_t i = 0; i < n; i++) chars += strlen(names[i]) + 1;
  _Static_assert(alignof(const char *) <= alignof(int64_t), "pointer alignment");
  size_t ptrs_off = 2 * n * sizeof(int64_t);
  size_t chars_off = ptrs_off + (names ? n * sizeof(char *) : 0);
  size_t total = chars_off + chars;
  uint8_t *block = malloc(total ? total : 1);
  if (block == NULL) return NULL;
  *shape = (const int64_t *)(void *)block;
  *strides = (const int64_t *)(void *)(block + n * sizeof(int64_t));
  *name_ptrs = NULL;
  if (names) {
    const char **ptrs = (const char **)(void *)(block + ptrs_off);
    qvi_copy_names(names, n, ptrs, (char *)block + chars_off);
    *name_ptrs = (const char *const *)ptrs;
  }
  return block;
}

/* Entries of a descriptor's strides or dim_names: 0 when the array is
 * absent, else the count given (0 meaning ndim), which must be ndim. */
static QvStatus array_count(const void *array, int64_t counted, int64_t ndim, const char *field,
                            const char *what, const char *rule, int64_t *n, QvError *error) {
  *n = array == NULL ? 0 : counted != 0 ? counted : ndim;
  if (array == NULL && counted > 0)
    return qv_error_set(error, QV_EARG, "Tensor: %s is NULL but %" PRId64 " are counted", field,
                        counted);
  if (*n != 0 && *n != ndim)
    return qv_error_set(error, QV_EINVAL, "Tensor: %" PRId64 " %s for %" PRId64 " dims (%s)", *n,
                        what, ndim, rule);
  return QV_OK;
}

QvStatus qv_tensor_init(QvTensor *out, const QvTensorDesc *desc, QvError *error) {
  if (out == NULL) return qv_error_set(error, QV_EARG, "Tensor: output is NULL");
  memset(out, 0, sizeof *out);
  if (desc == NULL) return qv_error_set(error, QV_EARG, "Tensor: descriptor is NULL");
  QvArrowType type = desc->type;
  int64_t ndim = desc->ndim;
  const int64_t *shape = desc->shape, *strides = desc->strides;
  const char *const *dim_names = desc->dim_names;
  const void *data = desc->data;
  int64_t data_size = desc->data_size;
  int64_t elsize = (int64_t)qv_arrow_type_size(type);
  if (elsize == 0)
    return qv_error_set(error, QV_EINVAL, "Tensor: unknown value type %d", (int)type);
  if (ndim < 0) return qv_error_set(error, QV_EINVAL, "Tensor: ndim %" PRId64 " is negative", ndim);
  if (ndim > QV_TENSOR_MAX_NDIM)
    return qv_error_set(error, QV_ELIMIT,
                        "Tensor: ndim %" PRId64 " exceeds the limit of %d dimensions", ndim,
                        QV_TENSOR_MAX_NDIM);
  if (ndim > 0 && shape == NULL)
    return qv_error_set(error, QV_EARG, "Tensor: shape is NULL but ndim is %" PRId64, ndim);
  for (int64_t i = 0; i < ndim; i++) {
    if (shape[i] < 0)
      return qv_error_set(error, QV_EINVAL, "Tensor: shape[%" PRId64 "] = %" PRId64 " is negative",
                          i, shape[i]);
  }
  int64_t n_strides, n_names;
  QvStatus status = array_count(strides, desc->n_strides, ndim, "strides", "strides",
                                "strides must have the same length as shape", &n_strides, error);
  if (status == QV_OK)
    status = array_count(dim_names, desc->n_dim_names, ndim, "dim_names", "dim names",
                         "need 0 or one per dim", &n_names, error);
  if (status != QV_OK) return status;
  for (int64_t i = 0; i < n_strides; i++) {
    if (strides[i] < 0)
      return qv_error_set(error, QV_ENOTSUP,
                          "Tensor: strides[%" PRId64 "] = %" PRId64
                          " is negative (negative strides not supported)",
                          i, strides[i]);
  }
  for (int64_t i = 0; i < n_names; i++) {
    if (dim_names[i] == NULL)
      return qv_error_set(error, QV_EINVAL, "Tensor: dim_names[%" PRId64 "] is NULL", i);
  }
  /* Bounding the non-zero extents keeps every later product in range. */
  int64_t bytes = elsize, size = 1;
  for (int64_t i = 0; i < ndim; i++) {
    if (shape[i] != 0 && __builtin_mul_overflow(bytes, shape[i], &bytes))
      return qv_error_set(error, QV_EINVAL,
                          "Tensor: shape[%" PRId64 "] = %" PRId64
                          ": the shape's byte size overflows int64",
                          i, shape[i]);
    size *= shape[i]; /* <= bytes, or 0 */
  }
  if (data_size < 0)
    return qv_error_set(error, QV_EINVAL, "Tensor: data_size %" PRId64 " is negative", data_size);
  if (size > 0) {
    if (data == NULL)
      return qv_error_set(error, QV_EINVAL,
                          "Tensor: data is NULL but the tensor has %" PRId64 " elements", size);
    int64_t reach = elsize; /* one past the largest reachable byte */
    if (n_strides == 0) {
      reach = bytes;
    } else {
      for (int64_t i = 0; i < ndim; i++) {
        int64_t dim_reach;
        if (__builtin_mul_overflow(shape[i] - 1, strides[i], &dim_reach) ||
            __builtin_add_overflow(reach, dim_reach, &reach))
          return qv_error_set(error, QV_EINVAL,
                              "Tensor: strides[%" PRId64 "] = %" PRId64 " with shape[%" PRId64
                              "] = %" PRId64 ": offsets overflow int64",
                              i, strides[i], i, shape[i]);
      }
    }
    if (reach > data_size)
      return qv_error_set(error, QV_EINVAL,
                          "Tensor: shape and strides reach %" PRId64 " bytes but data has %" PRId64
                          " (strides must not involve buffer over run)",
                          reach, data_size);
  }

  const int64_t *sh, *st;
  const char *const *names;
  void *priv = alloc_private(ndim, n_names > 0 ? dim_names : NULL, &sh, &st, &names);
  if (priv == NULL) return qv_error_set(error, QV_ENOMEM, "Tensor: out of memory");
  if (ndim > 0) memcpy((void *)sh, shape, (size_t)ndim * sizeof *shape);
  if (n_strides > 0) {
    memcpy((void *)st, strides, (size_t)ndim * sizeof *strides);
  } else {
    /* cannot fail: the shape was checked above */
    qv_tensor_compute_strides(type, (int32_t)ndim, shape, false, (int64_t *)st, NULL);
  }
  out->type = type;
  out->ndim = (int32_t)ndim;
  out->shape = sh;
  out->strides = st;
  out->dim_names = names;
  out->data = data;
  out->data_size = data_size;
  out->owner = desc->owner;
  out->private_data = priv;
  qv_owner_retain(desc->owner);
  return QV_OK;
}

static void free_aligned_owner(void *p) {
  qv_free(p);
}

QvStatus qv_tensor_alloc(QvTensor *out, QvArrowType type, int32_t ndim, const int64_t *shape,
                         const char *const *dim_names, bool column_major, void **data_out,
                         QvError *error) {
  if (data_out) *data_out = NULL;
  if (out == NULL) return qv_error_set(error, QV_EARG, "Tensor: output is NULL");
  memset(out, 0, sizeof *out);
  int64_t strides[QV_TENSOR_MAX_NDIM];
  if (ndim > QV_TENSOR_MAX_NDIM)
    return qv_error_set(error, QV_ELIMIT, "Tensor: ndim %d exceeds the limit of %d dimensions",
                        (int)ndim, QV_TENSOR_MAX_NDIM);
  QvStatus st = qv_tensor_compute_strides(type, ndim, shape, column_major, strides, error);
  if (st != QV_OK) return st;
  /* with no zero dim, compute_strides bounded size * elsize; with one,
   * the other extents may be huge (make rejects those) */
  int64_t size = 1;
  for (int32_t i = 0; i < ndim; i++)
    if (shape[i] == 0) size = 0;
  for (int32_t i = 0; i < ndim && size > 0; i++) size *= shape[i];
  int64_t bytes = size * (int64_t)qv_arrow_type_size(type);
  if ((uint64_t)bytes > SIZE_MAX)
    return qv_error_set(error, QV_ENOMEM, "Tensor: %" PRId64 " bytes do not fit in memory", bytes);
  void *data = qv_aligned_alloc((size_t)bytes);
  if (data == NULL)
    return qv_error_set(error, QV_ENOMEM, "Tensor: cannot allocate %" PRId64 " bytes", bytes);
  memset(data, 0, (size_t)bytes);
  QvOwner *owner = qv_owner_new(free_aligned_owner, data);
  if (owner == NULL) {
    qv_free(data);
    return qv_error_set(error, QV_ENOMEM, "Tensor: out of memory");
  }
  QvTensorDesc desc = {.type = type, .ndim = ndim, .shape = shape, .strides = strides,
                       .dim_names = dim_names, .data = data, .data_size = bytes, .owner = owner};
  st = qv_tensor_init(out, &desc, error);
  qv_owner_free(owner); /* the tensor holds the only reference now */
  if (st == QV_OK && data_out) *data_out = data;
  return st;
}

void qv_tensor_reset(QvTensor *tensor) {
  if (tensor == NULL) return;
  free(tensor->private_data);
  qv_owner_free(tensor->owner);
  memset(tensor, 0, sizeof *tensor);
}

int64_t qv_tensor_n_elements(const QvTensor *t) {
  int64_t n = 1;
  for (int32_t i = 0; i < t->ndim; i++) n *= t->shape[i];
  return n;
}

static bool has_layout(const QvTensor *t, bool column_major) {
  if (qv_tensor_n_elements(t) == 0) return true;
  int64_t expect = (int64_t)qv_arrow_type_size(t->type);
  for (int32_t k = 0; k < t->ndim; k++) {
    int32_t i = column_major ? k : t->ndim - 1 - k;
    if (t->shape[i] != 1 && t->strides[i] != expect) return false;
    expect *= t->shape[i];
  }
  return true;
}

bool qv_tensor_is_row_major(const QvTensor *t) {
  return has_layout(t, false);
}
bool qv_tensor_is_column_major(const QvTensor *t) {
  return has_layout(t, true);
}
bool qv_tensor_is_contiguous(const QvTensor *t) {
  return has_layout(t, false) || has_layout(t, true);
}

/* "(1, 2, 3)" for messages */
static const char *format_index(const QvTensor *t, const int64_t *index, char *buf, size_t size) {
  size_t used = 0;
  buf[0] = '\0';
  used += (size_t)snprintf(buf, size, "(");
  for (int32_t i = 0; i < t->ndim && used < size; i++)
    used += (size_t)snprintf(buf + used, size - used, "%s%" PRId64, i ? ", " : "", index[i]);
  if (used < size) snprintf(buf + used, size - used, ")");
  return buf;
}

QvStatus qv_tensor_byte_offset(const QvTensor *t, const int64_t *index, int64_t *offset,
                               QvError *error) {
  if (t->ndim > 0 && index == NULL)
    return qv_error_set(error, QV_EARG, "Tensor: index is NULL for a %d-d tensor", (int)t->ndim);
  int64_t off = 0;
  for (int32_t i = 0; i < t->ndim; i++) {
    if (index[i] < 0 || index[i] >= t->shape[i])
      return qv_error_set(error, QV_EINVAL,
                          "Tensor: index[%d] = %" PRId64 " out of range for shape[%d] = %" PRId64,
                          (int)i, index[i], (int)i, t->shape[i]);
    off += index[i] * t->strides[i]; /* below the checked extent */
  }
  *offset = off;
  return QV_OK;
}

QvStatus qv_tensor_get_double(const QvTensor *t, const int64_t *index, double *out,
                              QvError *error) {
  int64_t off;
  QvStatus st = qv_tensor_byte_offset(t, index, &off, error);
  if (st != QV_OK) return st;
  *out = qvi_tensor_load_double(t->type, t->data + off);
  return QV_OK;
}

static bool is_float(QvArrowType type) {
  return type == QV_ARROW_FLOAT16 || type == QV_ARROW_FLOAT32 || type == QV_ARROW_FLOAT64;
}

/* Integers read exactly: signed into *s (is_neg set), unsigned into *u. */
static void load_integer(QvArrowType type, const uint8_t *p, int64_t *s, uint64_t *u,
                         bool *is_signed) {
  *is_signed = type <= QV_ARROW_INT64;
  switch (type) {
    case QV_ARROW_INT8: *s = qvi_ld_i8(p); break;
    case QV_ARROW_INT16: *s = qvi_ld_i16(p); break;
    case QV_ARROW_INT32: *s = qvi_ld_i32(p); break;
    case QV_ARROW_INT64: *s = qvi_ld_i64(p); break;
    case QV_ARROW_UINT8: *u = *p; break;
    case QV_ARROW_UINT16: *u = qvi_ld_u16(p); break;
    case QV_ARROW_UINT32: *u = qvi_ld_u32(p); break;
    default: *u = qvi_ld_u64(p); break;
  }
}

static QvStatus get_integer(const QvTensor *t, const int64_t *index, bool want_signed,
                            int64_t *s_out, uint64_t *u_out, QvError *error) {
  int64_t off;
  QvStatus st = qv_tensor_byte_offset(t, index, &off, error);
  if (st != QV_OK) return st;
  const uint8_t *p = t->data + off;
  const char *target = want_signed ? "int64" : "uint64";
  char where[64 * 24];
  if (is_float(t->type)) {
    double v = qvi_tensor_load_double(t->type, p);
    bool ok = want_signed ? (v >= -0x1p63 && v < 0x1p63) : (v >= 0.0 && v < 0x1p64);
    /* the range test is false for NaN; in range, the cast is defined */
    if (ok) ok = want_signed ? (double)(int64_t)v == v : (double)(uint64_t)v == v;
    if (!ok)
      return qv_error_set(
          error, QV_EINVAL, "Tensor: %s value %.17g at %s is not representable as %s",
          qv_arrow_type_name(t->type), v, format_index(t, index, where, sizeof where), target);
    if (want_signed)
      *s_out = (int64_t)v;
    else
      *u_out = (uint64_t)v;
    return QV_OK;
  }
  int64_t s = 0;
  uint64_t u = 0;
  bool is_signed;
  load_integer(t->type, p, &s, &u, &is_signed);
  if (want_signed) {
    if (!is_signed && u > (uint64_t)INT64_MAX)
      return qv_error_set(error, QV_EINVAL,
                          "Tensor: uint64 value %" PRIu64 " at %s does not fit in int64", u,
                          format_index(t, index, where, sizeof where));
    *s_out = is_signed ? s : (int64_t)u;
  } else {
    if (is_signed && s < 0)
      return qv_error_set(
          error, QV_EINVAL, "Tensor: %s value %" PRId64 " at %s does not fit in uint64",
          qv_arrow_type_name(t->type), s, format_index(t, index, where, sizeof where));
    *u_out = is_signed ? (uint64_t)s : u;
  }
  return QV_OK;
}

QvStatus qv_tensor_get_int64(const QvTensor *t, const int64_t *index, int64_t *out,
                             QvError *error) {
  return get_integer(t, index, true, out, NULL, error);
}

QvStatus qv_tensor_get_uint64(const QvTensor *t, const int64_t *index, uint64_t *out,
                              QvError *error) {
  return get_integer(t, index, false, NULL, out, error);
}
