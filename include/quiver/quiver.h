/** @file
 * quiver: the whole public API in one include.
 *
 * quiver reads and writes the Apache Arrow IPC format in C11: dense tensors
 * (Tensor messages), sparse tensors (SparseTensor messages: COO, CSR, CSC,
 * CSF) and record batches (the stream and file formats), with zero-copy
 * views of the caller's memory or of a memory-mapped file wherever the
 * format allows, and every input checked before it is trusted.
 *
 * Four headers to start from:
 *  - quiver/io.h: where bytes come from (QvSource: memory, a path, a file
 *    descriptor) and where they go (QvSink: memory, a path replaced
 *    atomically, a descriptor, a callback). Every reader takes a source,
 *    every writer a sink.
 *  - quiver/tensor_ipc.h: qv_tensor_read and qv_tensor_write, a QvTensor
 *    (quiver/tensor.h) to and from a Tensor message.
 *  - quiver/sparse_ipc.h: qv_sparse_read and qv_sparse_write; conversions
 *    between dense and every sparse format are in quiver/sparse.h.
 *  - quiver/recordbatch_ipc.h: record batches as Arrow C Data Interface
 *    structs (quiver/c_data.h): a stream reader that is an ArrowArrayStream,
 *    a file reader with random access, and a writer.
 *
 * Every fallible function returns a QvStatus and fills an optional QvError
 * (quiver/error.h) with a message naming what was wrong and where. Options
 * structs start with `struct_size`; NULL means every default. Memory the
 * library hands out is freed with qv_free or the object's own reset/free
 * function. Conventions shared by all headers are in quiver/common.h; the
 * low-level kernels in quiver/advanced.h. examples/c/ holds a complete
 * program for each of the four headers above.
 *
 * Including this header is the same as including every header it lists;
 * include the individual headers to keep compile times and namespaces
 * small. */
#ifndef QUIVER_QUIVER_H
#define QUIVER_QUIVER_H

#include "quiver/common.h"
#include "quiver/version.h"
#include "quiver/error.h"
#include "quiver/buffer.h"
#include "quiver/io.h"
#include "quiver/c_data.h"
#include "quiver/c_device.h"
#include "quiver/format.h"
#include "quiver/ipc.h"
#include "quiver/compression.h"
#include "quiver/tensor.h"
#include "quiver/tensor_ipc.h"
#include "quiver/tensor_dlpack.h"
#include "quiver/sparse.h"
#include "quiver/sparse_ipc.h"
#include "quiver/array.h"
#include "quiver/recordbatch_ipc.h"
#include "quiver/tensor_column.h"
#include "quiver/table_tensor.h"
#include "quiver/sparse_column.h"
#include "quiver/migrate.h"
#include "quiver/npy.h"
#include "quiver/npz.h"
#include "quiver/integration_json.h"
#include "quiver/flight.h"
#include "quiver/validate.h"
#include "quiver/advanced.h"

#endif
