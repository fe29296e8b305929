/** @file
 * quiver: SciPy sparse matrices in .npz files (scipy.sparse.save_npz /
 * load_npz) <-> sparse tensors.
 *
 * A library configured with -DQV_WITH_NUMPY=OFF keeps these functions, and
 * each returns QV_ENOTSUP saying the build left the NumPy formats out.
 *
 * An .npz is a zip archive of .npy members (numpy.savez; deflate-compressed
 * by savez_compressed, which save_npz uses by default). SciPy's sparse
 * layout, one member per key:
 *
 *   CSR / CSC   indices.npy  indptr.npy  format.npy  shape.npy  data.npy
 *   COO         row.npy      col.npy     format.npy  shape.npy  data.npy
 *
 * `format` is a 0-d string array holding "csr", "csc" or "coo" (SciPy 1.10
 * writes bytes, dtype '|S3'; a unicode '<U3' is read too), `shape` a 1-D
 * integer array (rows, cols), the others 1-D arrays. Index arrays keep their
 * dtypes both ways (SciPy's loader picks int32 or int64 by itself); values
 * are the numeric dtypes of npy.h. Other members (SciPy's `_is_array`) are
 * ignored; BSR and DIA matrices are refused.
 *
 * Reading parses the zip strictly before any member is read: one end
 * record (zip64 when present), a central directory ending where it says,
 * every local header agreeing with its central directory entry (name,
 * flags, method, CRC and sizes), every member inside the archive and no two
 * overlapping, no encryption; members stored or deflated only, one member
 * per name. Each .npy is parsed strictly with nothing after its data,
 * shapes must agree (indptr rows+1 or cols+1 long, indices and data as long
 * as indptr's last value, row/col/data equally long), then
 * qv_sparse_validate runs. Zip bombs: a member is read only when its
 * declared uncompressed size is at most what the members read before it
 * imply (a .npy header plus the entries the shape/nnz allow), at most 1032
 * times its compressed size (deflate's limit; equal for stored ones), and
 * the bytes inflated must match the declared size and CRC-32 exactly. A
 * COO may hold at most as many entries as its shape has cells.
 *
 * Stored members are not copied: a tensor read from a path (memory map) or
 * from memory points into the input when the member's data is aligned for
 * its dtype (quiver's writer aligns them to 64 bytes; numpy.savez does not
 * align, and such members are copied), and keeps the mapping (or the
 * source's owner) alive. Deflated members are inflated with libdeflate
 * straight into the tensor's buffers. */
#ifndef QUIVER_NPZ_H
#define QUIVER_NPZ_H

#include "quiver/common.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "quiver/error.h"
#include "quiver/io.h"
#include "quiver/sparse.h"

#ifdef __cplusplus
extern "C" {
#endif

/** What qv_npz_read changed to make the input valid. struct_size: 0 or
 * sizeof; the reader sets it to sizeof and every other field. */
typedef struct QvNpzReadInfo {
  size_t struct_size;        /**< 0 or sizeof(QvNpzReadInfo); set to sizeof by the reader */
  bool sorted;               /**< a CSR row's (CSC column's) indices were out of order
                                or repeated: sorted, as SciPy's sum_duplicates does */
  int64_t duplicates_summed; /**< entries merged into an earlier one with the same index */
} QvNpzReadInfo;


/** NULL or a zeroed struct means every default. */
typedef struct QvNpzReadOptions {
  size_t struct_size; /**< 0 or sizeof(QvNpzReadOptions) */
  /** Threads decoding members (inflating, copying misaligned ones, checking
   * CRCs) at once: 0 (default) or 1 reads on the caller's thread; more runs
   * the two big members after the first concurrently. */
  int threads;
  /** Check the CRC-32 of stored members too (one more pass over their
   * bytes, which a zero-copy read otherwise never touches). Deflated
   * members are always checked. */
  bool verify_crc;
  /** Leave stored members whose data is not aligned to its element size
   * (SciPy's always are: zipfile does not align) as views of the archive
   * instead of copying them: no copy, no fresh memory, but the tensor's
   * buffers may then be misaligned. Only for callers that pass them on as
   * bytes or read them with unaligned loads: qv_sparse_validate and
   * qv_sparse_write do (the CLI's from-npz sets it). false (default):
   * every buffer is aligned to its element size. */
  bool keep_misaligned;
} QvNpzReadOptions;

/** CSR/CSC: indices are sorted within each row (column) and repeated ones
 * summed in entry order in the value type's arithmetic (integers wrap), as
 * scipy.sparse's sum_duplicates does; zero sums are kept. `info` (may be
 * NULL) says whether that happened. The result is then validated strictly.
 * A COO read from an .npz is left as stored and flagged canonical when its
 * entries are sorted row-major without duplicates (SciPy does not store the
 * flag). Its coordinates are column-major (coords_strides {width, nnz *
 * width}): row then col, each one contiguous. Buffers are owned by the
 * tensor. */
QV_API QvStatus qv_npz_read(QvSource *source, const QvNpzReadOptions *options, QvSparseTensor *out,
                            QvNpzReadInfo *info, QvError *error);

/** NULL or a zeroed struct means every default. */
typedef struct QvNpzWriteOptions {
  size_t struct_size; /**< 0 or sizeof(QvNpzWriteOptions) */
  bool stored;        /**< false (default): deflate, as save_npz(compressed=True) */
  /** Members deflated (or, stored, checksummed) at once, one thread each: 0
   * (default) or 1 works on the caller's thread. The bytes written are the
   * same for every value. */
  int threads;
} QvNpzWriteOptions;

/** Writes a 2-D CSR, CSC or COO tensor the way save_npz does (same member
 * names, order and .npy headers) to `sink` (quiver/io.h; not finished:
 * qv_sink_finish commits a path sink), front to back, without building the
 * archive in memory: stored members go from the tensor's buffers to the
 * sink (their data aligned to 64 bytes in the archive by a padding extra
 * field), deflated ones (libdeflate, level 6) are each compressed into one
 * buffer, so memory peaks at about the compressed size. Other kinds and ndim fail with
 * QV_EINVAL naming what to convert to; float16 values too (scipy.sparse
 * refuses them). Dimension names are dropped. options may be NULL. */
QV_API QvStatus qv_npz_write(const QvSparseTensor *t, QvSink *sink,
                             const QvNpzWriteOptions *options, QvError *error);

#ifdef __cplusplus
}
#endif

#endif
