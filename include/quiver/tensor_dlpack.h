/** @file
 * quiver: dense tensors <-> DLPack (dlpack.h, the exchange struct of NumPy,
 * PyTorch, JAX, CuPy).
 *
 * Both directions are zero-copy: an exported DLManagedTensor points at the
 * tensor's own bytes and holds a reference to its QvOwner (so a view of a
 * memory-mapped file keeps the mapping alive until the consumer calls the
 * deleter); an imported one becomes a QvTensor whose owner calls the
 * producer's deleter when the last view of it is reset.
 *
 * DLPack strides count elements, quiver's count bytes: a tensor whose byte
 * strides are not multiples of its element size cannot be exported
 * (QV_ENOTSUP). Only CPU memory is accepted (a device pointer is not
 * readable here), and only the types quiver has: int/uint 8..64 bits and
 * float 16/32/64 with one lane.
 *
 * DLPack 1.0 added DLManagedTensorVersioned (a version, read-only flag).
 * Debian 12's libdlpack-dev (0.6) does not have it, so when the included
 * dlpack.h lacks it this header declares QvDLManagedTensorVersioned with the
 * exact DLPack 1.0 layout (the ABI is fixed by the DLPack spec); with a newer
 * dlpack.h it is the header's own DLManagedTensorVersioned. */
#ifndef QUIVER_TENSOR_DLPACK_H
#define QUIVER_TENSOR_DLPACK_H

#include "quiver/common.h"

#include <stdint.h>

#include <dlpack/dlpack.h>

#include "quiver/error.h"
#include "quiver/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

#ifdef DLPACK_MAJOR_VERSION
/** The versioned managed tensor of DLPack 1.0 and later (dlpack.h's own). */
typedef DLManagedTensorVersioned QvDLManagedTensorVersioned;
/** DLManagedTensorVersioned::flags: the consumer must not write the data. */
#define QV_DLPACK_FLAG_READ_ONLY DLPACK_FLAG_BITMASK_READ_ONLY
/** DLManagedTensorVersioned::flags: the data is a copy made for the consumer alone. */
#define QV_DLPACK_FLAG_IS_COPIED DLPACK_FLAG_BITMASK_IS_COPIED
#else
/** DLPack 1.0's DLPackVersion and DLManagedTensorVersioned, field for field. */
typedef struct QvDLPackVersion {
  uint32_t major; /**< incompatible ABI changes; quiver's exports say 1 */
  uint32_t minor; /**< compatible additions; quiver's exports say 0 */
} QvDLPackVersion;
/** A DLTensor with its owner, version and flags (DLPack 1.0's
 * DLManagedTensorVersioned, for a dlpack.h older than 1.0). */
typedef struct QvDLManagedTensorVersioned {
  QvDLPackVersion version; /**< the DLPack version of this struct */
  void *manager_ctx;       /**< the producer's context (quiver: what keeps the data alive) */
  /** called once by the consumer when done; frees the struct and drops the data's reference */
  void (*deleter)(struct QvDLManagedTensorVersioned *self);
  uint64_t flags;          /**< QV_DLPACK_FLAG_* bits */
  DLTensor dl_tensor;      /**< the tensor: data, device, ndim, dtype, shape, strides (in elements) */
} QvDLManagedTensorVersioned;
/** QvDLManagedTensorVersioned::flags: the consumer must not write the data. */
#define QV_DLPACK_FLAG_READ_ONLY ((uint64_t)1 << 0)
/** QvDLManagedTensorVersioned::flags: the data is a copy made for the consumer alone. */
#define QV_DLPACK_FLAG_IS_COPIED ((uint64_t)1 << 1)
#endif

/** The DLPack version quiver's versioned exports carry. */
#define QV_DLPACK_MAJOR 1
/** The minor DLPack version quiver's versioned exports carry. */
#define QV_DLPACK_MINOR 0

/** What quiver checks when importing, beyond what the DLTensor says. */
typedef struct QvDlpackImportOptions {
  size_t struct_size; /**< 0 or sizeof(QvDlpackImportOptions) */
  /** Bytes known to be readable from dl_tensor.data (before byte_offset is
   * added), when the caller knows them (e.g. from the producer's buffer):
   * then a byte_offset past them, or a shape/strides reaching beyond them,
   * is QV_EINVAL. 0 = unknown: the DLTensor's shape is trusted, as every
   * DLPack consumer must. */
  int64_t data_size;
} QvDlpackImportOptions;

/** Exports `t` as a new DLManagedTensor on the CPU (device 0) that points at
 * t's data (byte_offset 0) with t's shape and element strides; the struct
 * retains t->owner, so `t` may be reset at once. The consumer calls
 * (*out)->deleter(*out) exactly once. When t->owner is NULL the caller keeps
 * the data alive until then. Fails (QV_ENOTSUP) for byte strides that are not
 * multiples of the element size. */
QV_API QvStatus qv_tensor_to_dlpack(const QvTensor *t, DLManagedTensor **out, QvError *error);
/** The same as a DLPack 1.0 versioned tensor, version 1.0, flags
 * READ_ONLY (quiver's tensor data is const: file mappings are read-only). */
QV_API QvStatus qv_tensor_to_dlpack_versioned(const QvTensor *t, QvDLManagedTensorVersioned **out,
                                              QvError *error);

/** Imports a DLManagedTensor as a tensor view of its memory (no copy). On
 * success quiver owns `managed`: its deleter runs when the last view made
 * from it is reset (with a NULL deleter the producer keeps the memory alive).
 * On failure the caller still owns it and *out is zeroed. Refused with
 * QV_EINVAL or QV_ENOTSUP naming the field: a non-CPU device, a type quiver
 * lacks (bool, bfloat16, complex, lanes != 1, odd widths), ndim < 0 or over
 * QV_TENSOR_MAX_NDIM (QV_ELIMIT), a negative extent, negative strides, a
 * NULL data pointer with elements, a size overflowing int64, and with
 * options->data_size: a byte_offset past the data or a shape reaching beyond
 * it. Dimension names: none. */
QV_API QvStatus qv_tensor_from_dlpack(DLManagedTensor *managed, const QvDlpackImportOptions *options,
                                      QvTensor *out, QvError *error);
/** The same for DLPack 1.0 versioned tensors: a major version other than 1 is
 * QV_ENOTSUP (the layout past `version` may differ). The READ_ONLY flag needs
 * nothing: quiver never writes through a view. */
QV_API QvStatus qv_tensor_from_dlpack_versioned(QvDLManagedTensorVersioned *managed,
                                                const QvDlpackImportOptions *options,
                                                QvTensor *out, QvError *error);

#ifdef __cplusplus
}
#endif

#endif
