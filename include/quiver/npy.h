/** @file
 * quiver: NumPy .npy files <-> dense tensors.
 *
 * A library configured with -DQV_WITH_NUMPY=OFF keeps these functions, and
 * each returns QV_ENOTSUP saying the build left the NumPy formats out.
 *
 * Format (numpy.lib.format): "\x93NUMPY", major and minor version bytes, a
 * little-endian header length (uint16 for 1.0, uint32 for 2.0 and 3.0), then
 * a Python dict literal such as
 *   {'descr': '<f8', 'fortran_order': False, 'shape': (3, 4), }
 * padded with spaces and ended with '\n', then the raw data in C or Fortran
 * order. Version 3.0 only differs by its header being UTF-8.
 *
 * Supported dtypes: i1 i2 i4 i8 u1 u2 u4 u8 f2 f4 f8 with byte order '<',
 * '>', '|' or '=' ('|' and '=' and a missing order mean the host's). Bool,
 * complex, strings, objects, datetimes and structured dtypes are rejected.
 * The header is parsed strictly: exactly the keys descr, fortran_order and
 * shape, each once; shape a tuple of non-negative integers (a 1-tuple needs
 * its comma, as in Python); nothing but whitespace after the dict. */
#ifndef QUIVER_NPY_H
#define QUIVER_NPY_H

#include "quiver/common.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "quiver/buffer.h"
#include "quiver/error.h"
#include "quiver/io.h"
#include "quiver/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Headers longer than this are rejected (NumPy's own reader refuses
 * headers above 10000 bytes by default). */
#define QV_NPY_MAX_HEADER_SIZE 65536

/** A parsed .npy preamble and header (qv_npy_parse_header). */
typedef struct QvNpyHeader {
  int major;              /**< format version: 1, 2 or 3 */
  int minor;              /**< format version: the minor number, 0 */
  char descr[8];          /**< the dtype string, e.g. "<f8" */
  QvArrowType type;       /**< the numeric type `descr` names */
  bool big_endian;        /**< the data's byte order */
  bool fortran_order;     /**< the data is column-major (first index fastest) */
  int32_t ndim;           /**< entries of `shape` used, 0..QV_TENSOR_MAX_NDIM */
  int64_t shape[QV_TENSOR_MAX_NDIM]; /**< elements along each dimension */
  size_t data_offset;     /**< from the start of the file: preamble + header */
  int64_t data_size;      /**< bytes the shape needs */
} QvNpyHeader;

/** Parses and validates the preamble and header (not the data). */
QV_API QvStatus qv_npy_parse_header(const uint8_t *data, size_t size, QvNpyHeader *out, QvError *error);

/** NULL or a zeroed struct means every default. */
typedef struct QvNpyReadOptions {
  size_t struct_size; /**< 0 or sizeof(QvNpyReadOptions) */
  /** Most bytes read from a pipe or FIFO, which is read to its end before the
   * header is parsed (memory and regular files are views: nothing is read);
   * 0 = no bound beyond the machine's memory. Over it: QV_ELIMIT. */
  int64_t max_input_size;
} QvNpyReadOptions;

/** Reads a .npy image from a source (quiver/io.h). Memory and regular files
 * are read zero-copy: little-endian data (on a little-endian host) aligned
 * to its element size is a view that keeps the caller's memory owner or
 * the file mapping alive; fortran_order gives column-major strides, still
 * without a copy. A pipe is read to its end first. Big-endian data is
 * byte-swapped into a new buffer owned by the tensor. The input must hold
 * at least the bytes the shape needs; bytes after them are ignored (np.save
 * may append several arrays to one file). */
QV_API QvStatus qv_npy_read(QvSource *source, const QvNpyReadOptions *options, QvTensor *out,
                            QvError *error);

/** NULL or a zeroed struct means every default. */
typedef struct QvNpyWriteOptions {
  size_t struct_size; /**< 0 or sizeof(QvNpyWriteOptions) */
  /** Write every tensor in C order (a column-major one as a C-order copy)
   * instead of column-major tensors with fortran_order True. */
  bool c_order;
} QvNpyWriteOptions;

/** Writing: format 1.0 (2.0 when the header would exceed 65535 bytes), the
 * header padded so the data starts at a multiple of 64 bytes, host byte
 * order. Row-major tensors are written in C order, column-major ones with
 * fortran_order True (both as one copy of the memory), other layouts as a
 * C-order copy. Dimension names are dropped (.npy has none). The sink is not
 * finished (qv_sink_finish commits a path sink). */
QV_API QvStatus qv_npy_write(const QvTensor *t, QvSink *sink, const QvNpyWriteOptions *options,
                             QvError *error);
/** Bytes qv_npy_write produces for t with these options. */
QV_API QvStatus qv_npy_write_size(const QvTensor *t, const QvNpyWriteOptions *options, size_t *size,
                                  QvError *error);

#ifdef __cplusplus
}
#endif

#endif
