/** @file
 * quiver: sparse tensors as Arrow IPC SparseTensor messages
 * (SparseTensor.fbs, Other.rst).
 *
 * A sparse tensor is written as one standalone encapsulated message, like a
 * dense tensor (tensor_ipc.h):
 *
 * @verbatim
 *   <0xFFFFFFFF> <int32 length> <Message{SparseTensor} + padding> <body>
 * @endverbatim
 *
 * The body starts at a multiple of 64 bytes from the start of the message,
 * every buffer inside it (the sparse index buffers, then the data) starts
 * at a multiple of 64 within the body, and the body is padded to a multiple
 * of 64. Buffer order: COO indices, data; CSR/CSC indptr, indices, data;
 * CSF indptr[0..ndim-2], indices[0..ndim-1], data.
 *
 * COO indices are written as a row-major nnz x ndim matrix with
 * indicesStrides [ndim * width, width]. Index and indptr types are the
 * tensor's own (uint64 included, although Arrow C++ refuses to read it).
 *
 * CSF buffer lengths: the format defines Buffer.length in bytes, but Arrow
 * C++ writes (and reads) indptrBuffers[i].length and indicesBuffers[i].length
 * as element counts. quiver writes element counts by default, so that Arrow
 * C++ and pyarrow read its files, and bytes on request. The reader accepts
 * both: the last level's indices hold exactly nnz values, so its length is
 * nnz in the element convention and nnz * width in the byte one (identical
 * for 8-bit indices, where the two conventions coincide).
 *
 * Reading accepts what Arrow C++ writes: buffers aligned to 8 only, and
 * COO/CSX/data Buffer.length including padding (element counts come from
 * non_zero_length and the shape; a buffer only has to be long enough).
 * Everything is validated before a tensor is handed out: buffers inside the
 * body (overflow-safe), lengths consistent with nnz, shape and index width,
 * then qv_sparse_validate (coordinates in range, canonical COO sorted and
 * unique, indptr well formed, indices sorted, CSF levels consistent, axis
 * order a permutation). Messages name the buffer and position. */
#ifndef QUIVER_SPARSE_IPC_H
#define QUIVER_SPARSE_IPC_H

#include "quiver/common.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "quiver/buffer.h"
#include "quiver/error.h"
#include "quiver/ipc.h"
#include "quiver/sparse.h"

#ifdef __cplusplus
extern "C" {
#endif

/** How CSF index buffer lengths are written. */
typedef enum QvCsfLengths {
  QV_CSF_LENGTHS_ELEMENTS = 0, /**< element counts, as Arrow C++ (the default) */
  QV_CSF_LENGTHS_BYTES = 1     /**< bytes, as Buffer is defined */
} QvCsfLengths;

/** Options of qv_sparse_write and qv_sparse_write_size; NULL or a zeroed
 * struct means every default. */
typedef struct QvSparseWriteOptions {
  size_t struct_size;       /**< 0 or sizeof(QvSparseWriteOptions) */
  QvCsfLengths csf_lengths; /**< 0 = QV_CSF_LENGTHS_ELEMENTS */
} QvSparseWriteOptions;

/* ---- reading */

/** NULL or a zeroed struct means every default. */
typedef struct QvSparseReadOptions {
  size_t struct_size;             /**< 0 or sizeof(QvSparseReadOptions) */
  const QvIpcReaderOptions *ipc; /**< the message reader's limits; NULL: defaults */
} QvSparseReadOptions;

/** Builds a view of the sparse tensor in a decoded SparseTensor message;
 * the tensor retains msg->owner, so msg may be released afterwards. Buffers
 * not aligned to their element size (only in hand-made files) are served
 * from an aligned copy of the body. *csf_lengths (may be NULL) receives the
 * convention a CSF message used (QV_CSF_LENGTHS_ELEMENTS for other kinds). */
QV_API QvStatus qv_sparse_from_message(const QvIpcMessage *msg, QvSparseTensor *out,
                                QvCsfLengths *csf_lengths, QvError *error);

/** Reads message number `index` (0-based, counting every message) of
 * `source` as a sparse tensor; an error when that message is not a
 * SparseTensor ("message 0 is a Tensor, not a SparseTensor") or the input
 * holds fewer messages. Zero-copy from memory and from a path (only the
 * chosen body is mapped; the mapping lives until the tensor is reset);
 * from an fd or pipe the body is copied into 64-byte-aligned memory owned
 * by the tensor. Errors from a path name the file. */
QV_API QvStatus qv_sparse_read(QvSource *source, int64_t index, const QvSparseReadOptions *options,
                               QvSparseTensor *out, QvError *error);

/* ---- writing (options may be NULL: defaults) */

/** The tensor is validated first (qv_sparse_validate); a COO whose
 * is_canonical flag is set is written with isCanonical true. */
QV_API QvStatus qv_sparse_write_size(const QvSparseTensor *t, const QvSparseWriteOptions *options,
                                size_t *size, QvError *error);
/** Writes the message to `sink` (not finished: call qv_sink_finish after the
 * last message); every buffer is written straight from the tensor's memory
 * (a COO index matrix with other strides is copied to row-major first). A
 * buffer sink too small for the message fails with QV_ELIMIT. */
QV_API QvStatus qv_sparse_write(const QvSparseTensor *t, QvSink *sink,
                                const QvSparseWriteOptions *options, QvError *error);

#ifdef __cplusplus
}
#endif

#endif
