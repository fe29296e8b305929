/** @file
 * quiver: dense tensors as Arrow IPC Tensor messages (Tensor.fbs, Other.rst).
 *
 * A tensor is written as one standalone encapsulated message:
 *
 * @verbatim
 *   <0xFFFFFFFF> <int32 length> <Message{Tensor} FlatBuffer + padding> <body>
 * @endverbatim
 *
 * The metadata is padded so that the body starts at a multiple of 64 bytes
 * from the start of the message, and the body is padded to a multiple of 64
 * bytes, so tensors written one after another into a file all keep 64-byte
 * aligned data when the file is memory-mapped. Several tensor messages may
 * follow one another in one file or stream (no end-of-stream marker is
 * written, like Arrow C++'s WriteTensor; readers accept one).
 *
 * Reading is zero-copy: the tensor is a view of the message body and holds a
 * reference to the memory (caller buffer, file mapping or fd-read body) it
 * points into. Sources and sinks: quiver/io.h. */
#ifndef QUIVER_TENSOR_IPC_H
#define QUIVER_TENSOR_IPC_H

#include "quiver/common.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "quiver/buffer.h"
#include "quiver/error.h"
#include "quiver/ipc.h"
#include "quiver/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- reading */

/** NULL or a zeroed struct means every default. */
typedef struct QvTensorReadOptions {
  size_t struct_size;     /**< 0 or sizeof(QvTensorReadOptions) */
  const QvIpcReaderOptions *ipc; /**< the message reader's limits; NULL: defaults */
} QvTensorReadOptions;

/** Builds a view of the tensor in a decoded Tensor message; the tensor
 * retains msg->owner, so msg may be released afterwards. Validates: the
 * header is a Tensor, its type is numeric (Int or FloatingPoint), ndim <=
 * QV_TENSOR_MAX_NDIM, strides (when present and non-empty) has one entry per
 * dimension, the data buffer lies inside the body and every element the
 * shape and strides reach lies inside the data buffer. Absent or empty
 * strides mean row-major. A tensor without elements (a zero-length
 * dimension) accepts any non-negative strides. Dimension names: a dim whose
 * name is absent or "" is unnamed; when no dim is named the tensor has
 * dim_names == NULL, otherwise unnamed dims get "".
 * When the data pointer is not aligned to the element size (only possible
 * in hand-made files), the values are copied into aligned memory so typed
 * access through the pointer stays valid. */
QV_API QvStatus qv_tensor_from_message(const QvIpcMessage *msg, QvTensor *out, QvError *error);

/** Reads message number `index` (0-based, counting every message of the
 * stream whatever its kind) of `source` (quiver/io.h) and returns it as a
 * tensor. It is an error when that message is not a Tensor (e.g. "message 1
 * is a SparseTensor, not a Tensor") or when the input holds fewer messages.
 * A file-format input (ARROW1 magic) is read through its message area.
 *
 * Caller memory: a zero-copy view (the tensor retains the source's owner).
 * A path: reads the prefixes and metadata with pread and memory-maps only
 *   the chosen message's body (no page is touched until the caller reads the
 *   data); the mapping lives until the tensor is reset. A file written by
 *   quiver (or by Arrow C++'s WriteTensor) gives a 64-byte-aligned data
 *   pointer. Writing the tensor back to the same path through a path sink is
 *   safe (the sink renames a new file over the old one).
 * An fd or pipe: reads sequentially (the descriptor is not closed); the body
 *   is copied into 64-byte-aligned memory owned by the tensor.
 * Errors from a path name the file. */
QV_API QvStatus qv_tensor_read(QvSource *source, int64_t index, const QvTensorReadOptions *options,
                               QvTensor *out, QvError *error);

/* ---- writing */

/** NULL or a zeroed struct means every default. */
typedef struct QvTensorWriteOptions {
  size_t struct_size; /**< 0 or sizeof(QvTensorWriteOptions) */
  /** Write every tensor row-major (a column-major one as a row-major copy),
   * for readers that ignore strides. false: contiguous layouts as they are. */
  bool row_major;
} QvTensorWriteOptions;

/** Bytes qv_tensor_write writes for `t` with these options (framed metadata
 * + padded body). */
QV_API QvStatus qv_tensor_write_size(const QvTensor *t, const QvTensorWriteOptions *options,
                                     size_t *size, QvError *error);

/** Writes the message for `t` to `sink` (not finished: call qv_sink_finish
 * after the last message; several tensors may go into one sink). Row- or
 * column-major tensors are written as they are, with their strides, straight
 * from the tensor's memory; other layouts are written as a row-major copy
 * with row-major strides (built in place in a memory or buffer sink, slab by
 * slab otherwise). Strides are always written, dimension names when the
 * tensor has them. A buffer sink too small for the message fails with
 * QV_ELIMIT. */
QV_API QvStatus qv_tensor_write(const QvTensor *t, QvSink *sink, const QvTensorWriteOptions *options,
                                QvError *error);

#ifdef __cplusplus
}
#endif

#endif
