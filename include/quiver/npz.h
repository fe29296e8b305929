/* quiver: SciPy sparse matrices in .npz files (scipy.sparse.save_npz /
 * load_npz) <-> sparse tensors.
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
 * Reading checks everything before handing a tensor out: the zip's
 * consistency (libzip ZIP_CHECKCONS) and CRCs, members stored or deflated
 * only, one member per name, each .npy parsed strictly with nothing after
 * its data, shapes agreeing (indptr rows+1 or cols+1 long, indices and data
 * as long as indptr's last value, row/col/data equally long), then
 * qv_sparse_validate. Zip bombs: a member is read only when its declared
 * uncompressed size is at most what the members read before it imply (a
 * .npy header plus the entries the shape/nnz allow), at most 1032 times its
 * compressed size (deflate's limit; equal for stored ones), and the bytes
 * inflated must match the declared size exactly. A COO may hold at most as
 * many entries as its shape has cells. */
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

/* What qv_npz_read changed to make the input valid. struct_size: 0 or
 * sizeof; the reader sets it to sizeof and every other field. */
typedef struct QvNpzReadInfo {
  size_t struct_size;
  bool sorted;               /* a CSR row's (CSC column's) indices were out of order
                                or repeated: sorted, as SciPy's sum_duplicates does */
  int64_t duplicates_summed; /* entries merged into an earlier one with the same index */
} QvNpzReadInfo;

/* CSR/CSC: indices are sorted within each row (column) and repeated ones
 * summed in entry order in the value type's arithmetic (integers wrap), as
 * scipy.sparse's sum_duplicates does; zero sums are kept. `info` (may be
 * NULL) says whether that happened. The result is then validated strictly.
 * A COO read from an .npz is left as stored and flagged canonical when its
 * entries are sorted row-major without duplicates (SciPy does not store the
 * flag). Its coordinates are column-major (coords_strides {width, nnz *
 * width}): row then col, each one contiguous. Buffers are owned by the
 * tensor. */
QV_API QvStatus qv_npz_read(QvSource *source, QvSparseTensor *out, QvNpzReadInfo *info,
                            QvError *error);

/* NULL or a zeroed struct means every default. */
typedef struct QvNpzWriteOptions {
  size_t struct_size; /* 0 or sizeof(QvNpzWriteOptions) */
  bool stored;        /* false (default): deflate, as save_npz(compressed=True) */
} QvNpzWriteOptions;

/* Writes a 2-D CSR, CSC or COO tensor the way save_npz does (same member
 * names, order and .npy headers) to `sink` (quiver/io.h; not finished:
 * qv_sink_finish commits a path sink). Other kinds and ndim fail with
 * QV_EINVAL naming what to convert to; float16 values too (scipy.sparse
 * refuses them). Dimension names are dropped. options may be NULL. */
QV_API QvStatus qv_npz_write(const QvSparseTensor *t, QvSink *sink,
                             const QvNpzWriteOptions *options, QvError *error);

#ifdef __cplusplus
}
#endif

#endif
