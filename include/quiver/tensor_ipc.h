/* quiver: dense tensors as Arrow IPC Tensor messages (Tensor.fbs, Other.rst).
 *
 * A tensor is written as one standalone encapsulated message:
 *
 *   <0xFFFFFFFF> <int32 length> <Message{Tensor} FlatBuffer + padding> <body>
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
 * points into. */
#ifndef QUIVER_TENSOR_IPC_H
#define QUIVER_TENSOR_IPC_H

#include "quiver/common.h"

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

/* Builds a view of the tensor in a decoded Tensor message; the tensor
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

/* Reads message number `index` (0-based, counting every message of the
 * stream whatever its kind) and returns it as a tensor. It is an error when
 * that message is not a Tensor (e.g. "message 1 is a SparseTensor, not a
 * Tensor") or when the input holds fewer messages. A file-format input
 * (ARROW1 magic) is read through its message area.
 *
 * _memory: zero-copy view of `data` (owner may be NULL: the caller keeps
 *   the bytes alive while the tensor is used; otherwise it is retained).
 * _path: reads the prefixes and metadata with pread and memory-maps only the
 *   chosen message's body (no page is touched until the caller reads the
 *   data); the mapping lives until the tensor is released. A file written
 *   by quiver (or by Arrow C++'s WriteTensor) gives a 64-byte-aligned data
 *   pointer. The tensor must not outlive a truncation of the file (the
 *   usual mmap rule: replace files by renaming a new one over them).
 * _fd: reads sequentially from a descriptor or pipe (not closed); the body
 *   is copied into 64-byte-aligned memory owned by the tensor. */
QV_API QvStatus qv_tensor_read_memory(const uint8_t *data, size_t size, QvOwner *owner, int64_t index,
                               QvTensor *out, QvError *error);
QV_API QvStatus qv_tensor_read_path(const char *path, int64_t index, QvTensor *out, QvError *error);
QV_API QvStatus qv_tensor_read_fd(int fd, int64_t index, QvTensor *out, QvError *error);

/* ---- writing */

/* Bytes qv_tensor_write_to_buffer needs for `t` (framed metadata + padded
 * body). */
QV_API QvStatus qv_tensor_message_size(const QvTensor *t, size_t *size, QvError *error);

/* Writes the message for `t` into dst. Row- or column-major tensors are
 * written as they are (one memcpy of the body) with their strides;
 * other layouts are written as a row-major copy with row-major strides.
 * Strides are always written, dimension names when the tensor has them.
 * *written (may be NULL) receives the message size. QV_EARG when dst_size
 * is too small (nothing useful is written then). */
QV_API QvStatus qv_tensor_write_to_buffer(const QvTensor *t, void *dst, size_t dst_size, size_t *written,
                                   QvError *error);

/* Same bytes, written with write(2) at the descriptor's current position
 * (not closed). A contiguous body is written straight from the tensor's
 * memory. Call repeatedly to put several tensors into one file. */
QV_API QvStatus qv_tensor_write_fd(const QvTensor *t, int fd, QvError *error);

/* Creates or truncates `path` and writes one tensor message into it. */
QV_API QvStatus qv_tensor_write_path(const QvTensor *t, const char *path, QvError *error);

#ifdef __cplusplus
}
#endif

#endif
