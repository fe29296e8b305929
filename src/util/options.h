/* Loading a caller's options struct (quiver/common.h): every options
 * struct begins with `size_t struct_size`, 0 or the size the caller was
 * compiled with.
 *
 * A struct may grow at its end in a later release. Each one therefore has
 * a first size, recorded here: the end of its last member as the struct
 * was first published with struct_size (its 0.3 layout where 0.5 kept it a
 * prefix, else 0.5.0, which changed members' types). A caller compiled
 * against any layout since passes a struct_size between the first size and
 * the current one; the fields it does not have read as zero, their
 * defaults. When a struct grows, its line here stays as it is. */
#ifndef QUIVER_UTIL_OPTIONS_H
#define QUIVER_UTIL_OPTIONS_H

#include <stddef.h>

#include "quiver/error.h"

/* Fills dst (dst_size bytes, this library's struct) from src: zeroes dst,
 * then copies the caller's bytes. src NULL: defaults (a zeroed struct).
 * struct_size 0 means the first size. Below the first size: QV_EARG. Above
 * dst_size (a newer caller): accepted when the fields this library does not
 * know are all zero, else QV_ENOTSUP. `what` names the struct in messages. */
QvStatus qvi_options_load(void *dst, size_t dst_size, size_t first_size, const void *src,
                          const char *what, QvError *error);

/* The end of `member` in struct `type`. */
#define QVI_THROUGH(type, member) (offsetof(type, member) + sizeof(((type *)0)->member))

/* The usual call: QV_OPTIONS_LOAD(&local, caller_ptr, QvXxxOptions, error).
 * Every options struct needs its QVI_FIRST_<type> line in the table below
 * (a missing one does not compile). */
#define QV_OPTIONS_LOAD(dst, src, type, error) \
  qvi_options_load((dst), sizeof *(dst), QVI_FIRST_##type, (src), #type, (error))

/* ---- first sizes (see the top of this file) */
#include "quiver/flight.h"
#include "quiver/format.h"
#include "quiver/integration_json.h"
#include "quiver/ipc.h"
#include "quiver/migrate.h"
#include "quiver/npy.h"
#include "quiver/npz.h"
#include "quiver/recordbatch_ipc.h"
#include "quiver/sparse.h"
#include "quiver/sparse_column.h"
#include "quiver/sparse_ipc.h"
#include "quiver/table_tensor.h"
#include "quiver/tensor_column.h"
#include "quiver/tensor_dlpack.h"
#include "quiver/tensor_ipc.h"

#define QVI_FIRST_QvFlightClientOptions QVI_THROUGH(QvFlightClientOptions, connect_timeout_ms)
#define QVI_FIRST_QvFlightServerOptions QVI_THROUGH(QvFlightServerOptions, max_receive_size)
#define QVI_FIRST_QvFlightDirOptions QVI_THROUGH(QvFlightDirOptions, allow_replace)
#define QVI_FIRST_QvDecodeOptions QVI_THROUGH(QvDecodeOptions, max_tables)
#define QVI_FIRST_QvIpcReaderOptions QVI_THROUGH(QvIpcReaderOptions, map_each_body)
#define QVI_FIRST_QvRbReadOptions QVI_THROUGH(QvRbReadOptions, threads)
#define QVI_FIRST_QvRbWriteOptions QVI_THROUGH(QvRbWriteOptions, threads)
#define QVI_FIRST_QvTensorReadOptions QVI_THROUGH(QvTensorReadOptions, ipc)
#define QVI_FIRST_QvTensorWriteOptions QVI_THROUGH(QvTensorWriteOptions, row_major)
#define QVI_FIRST_QvSparseReadOptions QVI_THROUGH(QvSparseReadOptions, ipc)
#define QVI_FIRST_QvSparseWriteOptions QVI_THROUGH(QvSparseWriteOptions, csf_lengths)
#define QVI_FIRST_QvSparseOptions QVI_THROUGH(QvSparseOptions, workspace)
#define QVI_FIRST_QvTensorColumnOptions QVI_THROUGH(QvTensorColumnOptions, cell_extension)
/* 0.3 layouts: max_output_size and threads came in 0.4 */
#define QVI_FIRST_QvTensorStackOptions QVI_THROUGH(QvTensorStackOptions, leading_name)
#define QVI_FIRST_QvTensorUnstackOptions QVI_THROUGH(QvTensorUnstackOptions, contiguous)
#define QVI_FIRST_QvDlpackImportOptions QVI_THROUGH(QvDlpackImportOptions, data_size)
#define QVI_FIRST_QvNpyReadOptions QVI_THROUGH(QvNpyReadOptions, max_input_size)
#define QVI_FIRST_QvNpyWriteOptions QVI_THROUGH(QvNpyWriteOptions, c_order)
#define QVI_FIRST_QvNpzReadOptions QVI_THROUGH(QvNpzReadOptions, keep_misaligned)
#define QVI_FIRST_QvNpzWriteOptions QVI_THROUGH(QvNpzWriteOptions, threads)
#define QVI_FIRST_QvJsonReadOptions QVI_THROUGH(QvJsonReadOptions, max_size)
#define QVI_FIRST_QvJsonWriteOptions QVI_THROUGH(QvJsonWriteOptions, indent)
#define QVI_FIRST_QvJsonCompareOptions QVI_THROUGH(QvJsonCompareOptions, float_tolerance)
#define QVI_FIRST_QvSparseColumnOptions QVI_THROUGH(QvSparseColumnOptions, struct_size)
#define QVI_FIRST_QvSparseStackOptions QVI_THROUGH(QvSparseStackOptions, max_output_size)
#define QVI_FIRST_QvSparseUnstackOptions QVI_THROUGH(QvSparseUnstackOptions, max_output_size)
#define QVI_FIRST_QvTableToTensorOptions QVI_THROUGH(QvTableToTensorOptions, max_output_size)
#define QVI_FIRST_QvSparseBuildOptions QVI_THROUGH(QvSparseBuildOptions, max_output_size)
#define QVI_FIRST_QvMigrateOptions QVI_THROUGH(QvMigrateOptions, ipc)

#endif
