/* Dense tensors <-> DLPack (quiver/tensor_dlpack.h). Both directions are
 * views: the exported struct points at the tensor's bytes and holds its
 * owner; an imported tensor's owner runs the producer's deleter. */
#include "quiver/tensor_dlpack.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "quiver/buffer.h"
#include "util/options.h"

/* One allocation per export: the managed struct the consumer sees, the
 * shape/strides arrays it points at, and the owner reference. */
typedef struct DlpackExport {
  DLManagedTensor plain;
  QvDLManagedTensorVersioned versioned;
  QvOwner *owner;
  int64_t shape[QV_TENSOR_MAX_NDIM];
  int64_t strides[QV_TENSOR_MAX_NDIM];
} DlpackExport;

static void export_free(DlpackExport *ctx) {
  if (ctx == NULL) return;
  qv_owner_free(ctx->owner);
  free(ctx);
}

static void plain_deleter(DLManagedTensor *self) {
  if (self != NULL) export_free(self->manager_ctx);
}

static void versioned_deleter(QvDLManagedTensorVersioned *self) {
  if (self != NULL) export_free(self->manager_ctx);
}

static bool dtype_of(QvArrowType type, DLDataType *out) {
  out->lanes = 1;
  out->bits = (uint8_t)(qv_arrow_type_size(type) * 8);
  switch (type) {
    case QV_ARROW_INT8: case QV_ARROW_INT16: case QV_ARROW_INT32: case QV_ARROW_INT64:
      out->code = kDLInt;
      return true;
    case QV_ARROW_UINT8: case QV_ARROW_UINT16: case QV_ARROW_UINT32: case QV_ARROW_UINT64:
      out->code = kDLUInt;
      return true;
    case QV_ARROW_FLOAT16: case QV_ARROW_FLOAT32: case QV_ARROW_FLOAT64:
      out->code = kDLFloat;
      return true;
    default:
      return false;
  }
}

static QvStatus value_type_of(DLDataType dt, QvArrowType *out, QvError *error) {
  if (dt.lanes != 1)
    return qv_error_set(error, QV_ENOTSUP, "dtype.lanes = %u: quiver has no vector types",
                        (unsigned)dt.lanes);
  static const QvArrowType ints[4] = {QV_ARROW_INT8, QV_ARROW_INT16, QV_ARROW_INT32, QV_ARROW_INT64};
  static const QvArrowType uints[4] = {QV_ARROW_UINT8, QV_ARROW_UINT16, QV_ARROW_UINT32,
                                       QV_ARROW_UINT64};
  int slot = dt.bits == 8 ? 0 : dt.bits == 16 ? 1 : dt.bits == 32 ? 2 : dt.bits == 64 ? 3 : -1;
  if (dt.code == kDLInt && slot >= 0) {
    *out = ints[slot];
    return QV_OK;
  }
  if (dt.code == kDLUInt && slot >= 0) {
    *out = uints[slot];
    return QV_OK;
  }
  if (dt.code == kDLFloat && slot >= 1) {
    *out = slot == 1 ? QV_ARROW_FLOAT16 : slot == 2 ? QV_ARROW_FLOAT32 : QV_ARROW_FLOAT64;
    return QV_OK;
  }
  static const char *const codes[] = {"int", "uint", "float", "opaque handle", "bfloat",
                                      "complex", "bool"};
  const char *name = dt.code < sizeof codes / sizeof codes[0] ? codes[dt.code] : "unknown";
  return qv_error_set(error, QV_ENOTSUP, "dtype code %u (%s) with %u bits is not a quiver value type",
                      (unsigned)dt.code, name, (unsigned)dt.bits);
}

/* Fills ctx's shape/strides and a DLTensor from t. */
static QvStatus export_fill(const QvTensor *t, DlpackExport *ctx, DLTensor *dl, QvError *error) {
  if (t == NULL || t->ndim < 0 || t->ndim > QV_TENSOR_MAX_NDIM)
    return qv_error_set(error, QV_EARG, "qv_tensor_to_dlpack: no tensor or a bad ndim");
  memset(dl, 0, sizeof *dl);
  if (!dtype_of(t->type, &dl->dtype))
    return qv_error_set(error, QV_EARG, "qv_tensor_to_dlpack: tensor has no value type");
  int64_t elsize = (int64_t)qv_arrow_type_size(t->type);
  for (int32_t i = 0; i < t->ndim; i++) {
    if (t->strides[i] % elsize != 0)
      return qv_error_set(error, QV_ENOTSUP,
                          "stride %d is %lld bytes, not a multiple of the %s element size %lld: "
                          "DLPack strides count elements",
                          (int)i, (long long)t->strides[i], qv_arrow_type_name(t->type),
                          (long long)elsize);
    ctx->shape[i] = t->shape[i];
    ctx->strides[i] = t->strides[i] / elsize;
  }
  dl->data = (void *)t->data; /* DLPack has no const; quiver's consumers get READ_ONLY (v1) */
  dl->device.device_type = kDLCPU;
  dl->device.device_id = 0;
  dl->ndim = (int)t->ndim;
  dl->shape = ctx->shape;
  dl->strides = ctx->strides;
  dl->byte_offset = 0;
  return QV_OK;
}

/* A new export context whose DLTensor (`dl_of(ctx)`) describes t and which
 * holds a reference to t's owner. */
static QvStatus export_start(const QvTensor *t, DlpackExport **out,
                             DLTensor *(*dl_of)(DlpackExport *ctx), QvError *error) {
  DlpackExport *ctx = calloc(1, sizeof *ctx);
  if (ctx == NULL)
    return qv_error_set(error, QV_ENOMEM, "out of memory exporting a tensor to DLPack");
  QvStatus st = export_fill(t, ctx, dl_of(ctx), error);
  if (st != QV_OK) {
    free(ctx);
    return st;
  }
  ctx->owner = t->owner;
  qv_owner_retain(ctx->owner);
  *out = ctx;
  return QV_OK;
}

static DLTensor *plain_dl(DlpackExport *ctx) { return &ctx->plain.dl_tensor; }
static DLTensor *versioned_dl(DlpackExport *ctx) { return &ctx->versioned.dl_tensor; }

QvStatus qv_tensor_to_dlpack(const QvTensor *t, DLManagedTensor **out, QvError *error) {
  if (out == NULL) return qv_error_set(error, QV_EARG, "qv_tensor_to_dlpack: out is NULL");
  *out = NULL;
  DlpackExport *ctx = NULL;
  QvStatus st = export_start(t, &ctx, plain_dl, error);
  if (st != QV_OK) return st;
  ctx->plain.manager_ctx = ctx;
  ctx->plain.deleter = plain_deleter;
  *out = &ctx->plain;
  return QV_OK;
}

QvStatus qv_tensor_to_dlpack_versioned(const QvTensor *t, QvDLManagedTensorVersioned **out,
                                       QvError *error) {
  if (out == NULL) return qv_error_set(error, QV_EARG, "qv_tensor_to_dlpack_versioned: out is NULL");
  *out = NULL;
  DlpackExport *ctx = NULL;
  QvStatus st = export_start(t, &ctx, versioned_dl, error);
  if (st != QV_OK) return st;
  ctx->versioned.version.major = QV_DLPACK_MAJOR;
  ctx->versioned.version.minor = QV_DLPACK_MINOR;
  ctx->versioned.flags = QV_DLPACK_FLAG_READ_ONLY;
  ctx->versioned.manager_ctx = ctx;
  ctx->versioned.deleter = versioned_deleter;
  *out = &ctx->versioned;
  return QV_OK;
}

/* ---- import */

static void release_plain(void *p) {
  DLManagedTensor *m = p;
  if (m->deleter != NULL) m->deleter(m);
}

static void release_versioned(void *p) {
  QvDLManagedTensorVersioned *m = p;
  if (m->deleter != NULL) m->deleter(m);
}

/* Checks a DLTensor and builds a view of it owned by `owner` (retained by
 * the tensor on success). */
static QvStatus import_tensor(const DLTensor *dl, const QvDlpackImportOptions *options,
                              QvOwner *owner, QvTensor *out, QvError *error) {
  QvDlpackImportOptions opts;
  QvStatus st = QV_OPTIONS_LOAD(&opts, options, QvDlpackImportOptions, error);
  if (st != QV_OK) return st;
  if (dl->device.device_type != kDLCPU)
    return qv_error_set(error, QV_ENOTSUP,
                        "device_type %d is not the CPU (kDLCPU = 1): quiver reads host memory only",
                        (int)dl->device.device_type);
  if (dl->ndim < 0) return qv_error_set(error, QV_EINVAL, "ndim %d is negative", dl->ndim);
  if (dl->ndim > QV_TENSOR_MAX_NDIM)
    return qv_error_set(error, QV_ELIMIT, "ndim %d is over quiver's limit of %d dimensions",
                        dl->ndim, QV_TENSOR_MAX_NDIM);
  QvArrowType type = QV_ARROW_NONE;
  st = value_type_of(dl->dtype, &type, error);
  if (st != QV_OK) return st;
  if (dl->ndim > 0 && dl->shape == NULL)
    return qv_error_set(error, QV_EINVAL, "shape is NULL for ndim %d", dl->ndim);
  int64_t elsize = (int64_t)qv_arrow_type_size(type);
  int64_t strides[QV_TENSOR_MAX_NDIM];
  bool empty = false;
  for (int i = 0; i < dl->ndim; i++) {
    if (dl->shape[i] < 0)
      return qv_error_set(error, QV_EINVAL, "shape[%d] = %lld is negative", i,
                          (long long)dl->shape[i]);
    if (dl->shape[i] == 0) empty = true;
  }
  if (dl->strides != NULL) {
    for (int i = 0; i < dl->ndim; i++) {
      if (dl->strides[i] < 0)
        return qv_error_set(error, QV_ENOTSUP,
                            "strides[%d] = %lld: negative strides are not supported", i,
                            (long long)dl->strides[i]);
      if (dl->strides[i] > INT64_MAX / elsize)
        return qv_error_set(error, QV_EINVAL, "strides[%d] = %lld elements overflows int64 bytes",
                            i, (long long)dl->strides[i]);
      strides[i] = dl->strides[i] * elsize;
    }
  } else {
    st = qv_tensor_compute_strides(type, dl->ndim, dl->shape, false, strides, error);
    if (st != QV_OK) return st;
  }
  /* The bytes the shape reaches, from data + byte_offset: the extent a
   * view needs (DLPack carries no buffer size; this is what it claims). */
  int64_t reach = 0;
  if (!empty) {
    reach = elsize;
    for (int i = 0; i < dl->ndim; i++) {
      int64_t span;
      if (__builtin_mul_overflow(dl->shape[i] - 1, strides[i], &span) ||
          __builtin_add_overflow(reach, span, &reach))
        return qv_error_set(error, QV_EINVAL,
                            "shape[%d] = %lld with stride %lld bytes reaches past int64 bytes "
                            "(a shape that cannot be true)",
                            i, (long long)dl->shape[i], (long long)strides[i]);
    }
  }
  if (dl->byte_offset > (uint64_t)INT64_MAX)
    return qv_error_set(error, QV_EINVAL, "byte_offset %llu overflows int64",
                        (unsigned long long)dl->byte_offset);
  int64_t offset = (int64_t)dl->byte_offset;
  if (opts.data_size < 0)
    return qv_error_set(error, QV_EARG, "QvDlpackImportOptions.data_size %lld is negative",
                        (long long)opts.data_size);
  if (opts.data_size > 0) {
    if (offset > opts.data_size)
      return qv_error_set(error, QV_EINVAL, "byte_offset %lld is past the data (%lld bytes)",
                          (long long)offset, (long long)opts.data_size);
    if (reach > opts.data_size - offset)
      return qv_error_set(error, QV_EINVAL,
                          "shape and strides reach %lld bytes from byte_offset %lld, past the "
                          "data (%lld bytes)",
                          (long long)reach, (long long)offset, (long long)opts.data_size);
  }
  if (dl->data == NULL && reach > 0)
    return qv_error_set(error, QV_EINVAL, "data is NULL for a tensor with elements");
  const uint8_t *data = dl->data;
  if (data != NULL) {
    if ((uintptr_t)data > UINTPTR_MAX - (uint64_t)offset - (uint64_t)reach)
      return qv_error_set(error, QV_EINVAL, "byte_offset %lld wraps the address space",
                          (long long)offset);
    data += offset;
  }
  QvTensorDesc desc = {.type = type, .ndim = dl->ndim, .shape = dl->shape, .strides = strides,
                       .data = data, .data_size = reach, .owner = owner};
  return qv_tensor_init(out, &desc, error);
}

/* Validates with no owner, then hands the view an owner that calls the
 * producer's deleter: on any failure the caller still owns `managed`. */
static QvStatus adopt(QvTensor *out, void (*release)(void *), void *managed, bool has_deleter,
                      QvError *error) {
  if (!has_deleter) return QV_OK; /* the producer keeps the memory alive */
  QvOwner *owner = qv_owner_new(release, managed);
  if (owner == NULL) {
    qv_tensor_reset(out);
    return qv_error_set(error, QV_ENOMEM, "out of memory importing a DLPack tensor");
  }
  out->owner = owner; /* the view takes the owner's one reference */
  return QV_OK;
}

/* The import both DLPack versions share. `ours` (the context of one of our
 * own exports coming back) shares the original owner and drops the wrapper
 * with `release`; a foreign tensor is adopted, `release` calling its
 * deleter when the view's last reference goes. */
static QvStatus import_managed(const DLTensor *dl, const QvDlpackImportOptions *options,
                               DlpackExport *ours, void (*release)(void *), void *managed,
                               bool has_deleter, QvTensor *out, QvError *error) {
  QvStatus st = import_tensor(dl, options, ours != NULL ? ours->owner : NULL, out, error);
  if (st != QV_OK) return st;
  if (ours == NULL) return adopt(out, release, managed, has_deleter, error);
  release(managed);
  return QV_OK;
}

QvStatus qv_tensor_from_dlpack(DLManagedTensor *managed, const QvDlpackImportOptions *options,
                               QvTensor *out, QvError *error) {
  if (out == NULL) return qv_error_set(error, QV_EARG, "qv_tensor_from_dlpack: out is NULL");
  memset(out, 0, sizeof *out);
  if (managed == NULL) return qv_error_set(error, QV_EARG, "qv_tensor_from_dlpack: managed is NULL");
  DlpackExport *ours = managed->deleter == plain_deleter ? managed->manager_ctx : NULL;
  return import_managed(&managed->dl_tensor, options, ours, release_plain, managed,
                        managed->deleter != NULL, out, error);
}

QvStatus qv_tensor_from_dlpack_versioned(QvDLManagedTensorVersioned *managed,
                                         const QvDlpackImportOptions *options, QvTensor *out,
                                         QvError *error) {
  if (out == NULL)
    return qv_error_set(error, QV_EARG, "qv_tensor_from_dlpack_versioned: out is NULL");
  memset(out, 0, sizeof *out);
  if (managed == NULL)
    return qv_error_set(error, QV_EARG, "qv_tensor_from_dlpack_versioned: managed is NULL");
  /* Only `version` is at a fixed place across major versions. */
  if (managed->version.major != 1)
    return qv_error_set(error, QV_ENOTSUP, "DLPack version %u.%u: quiver reads major version 1",
                        (unsigned)managed->version.major, (unsigned)managed->version.minor);
  DlpackExport *ours = managed->deleter == versioned_deleter ? managed->manager_ctx : NULL;
  return import_managed(&managed->dl_tensor, options, ours, release_versioned, managed,
                        managed->deleter != NULL, out, error);
}
