/** @file
 * quiver: the Arrow C Device Data Interface (CDeviceDataInterface.rst):
 * ArrowDeviceArray and ArrowDeviceArrayStream, with the specification's
 * guards (ARROW_C_DEVICE_DATA_INTERFACE, ARROW_C_DEVICE_STREAM_INTERFACE)
 * so that they coexist with the same definitions from other projects.
 *
 * quiver's memory is CPU memory. What it exports carries device_type
 * ARROW_DEVICE_CPU, device_id -1 and no sync_event (the reserved bytes are
 * zero). What it imports must be CPU data: a device array or stream of any
 * other device type, or a CPU array with a sync_event (quiver cannot wait
 * on one), is refused with QV_ENOTSUP (valid, but not supported; the CLI's
 * exit 3), and so is a non-CPU array that a stream's get_next returns in the
 * middle of a stream. Lifetimes are those of the C Data Interface: the
 * release callback is that of the embedded ArrowArray, and a moved struct
 * is marked released by setting array.release (stream: release) to NULL
 * without calling it.
 *
 * The readers' and writers' device forms are declared here: record batch
 * streams and files (quiver/recordbatch_ipc.h) and tensor columns
 * (quiver/tensor_column.h). */
#ifndef QUIVER_C_DEVICE_H
#define QUIVER_C_DEVICE_H

#include "quiver/common.h"

#include <stdint.h>

#include "quiver/c_data.h"
#include "quiver/error.h"
#include "quiver/io.h"
#include "quiver/recordbatch_ipc.h"
#include "quiver/tensor.h"
#include "quiver/tensor_column.h"

#ifdef __cplusplus
extern "C" {
#endif

#ifndef ARROW_C_DEVICE_DATA_INTERFACE
/** Defined with the device structs, so another copy of them is not defined twice. */
#define ARROW_C_DEVICE_DATA_INTERFACE

/** Device type of the memory an array's buffers point into (the values of
 * DLPack's DLDeviceType). */
typedef int32_t ArrowDeviceType;

#define ARROW_DEVICE_CPU 1           /**< CPU memory: the same as a plain ArrowArray */
#define ARROW_DEVICE_CUDA 2          /**< CUDA device memory */
#define ARROW_DEVICE_CUDA_HOST 3     /**< CPU memory pinned by CUDA (cudaMallocHost) */
#define ARROW_DEVICE_OPENCL 4        /**< OpenCL device memory */
#define ARROW_DEVICE_VULKAN 7        /**< Vulkan buffer */
#define ARROW_DEVICE_METAL 8         /**< Apple Metal GPU memory */
#define ARROW_DEVICE_VPI 9           /**< Verilog simulator buffer */
#define ARROW_DEVICE_ROCM 10         /**< AMD ROCm GPU memory */
#define ARROW_DEVICE_ROCM_HOST 11    /**< CPU memory pinned by ROCm (hipMallocHost) */
#define ARROW_DEVICE_EXT_DEV 12      /**< reserved for extension devices */
#define ARROW_DEVICE_CUDA_MANAGED 13 /**< CUDA managed (unified) memory */
#define ARROW_DEVICE_ONEAPI 14       /**< oneAPI unified shared memory */
#define ARROW_DEVICE_WEBGPU 15       /**< WebGPU buffer */
#define ARROW_DEVICE_HEXAGON 16      /**< Qualcomm Hexagon DSP memory */

/** An ArrowArray whose buffers live on a device. */
struct ArrowDeviceArray {
  /** The array; its buffers are device pointers, its release callback
   * frees everything (the sync event included). */
  struct ArrowArray array;
  /** Which device of the type (hardware-specific; -1 for the CPU). */
  int64_t device_id;
  /** The device type of the buffers. */
  ArrowDeviceType device_type;
  /** NULL, or an event to synchronize on before reading the buffers. */
  void* sync_event;
  /** Reserved; zero. */
  int64_t reserved[3];
};

#endif /* ARROW_C_DEVICE_DATA_INTERFACE */

#ifndef ARROW_C_DEVICE_STREAM_INTERFACE
/** Defined with ArrowDeviceArrayStream, so another copy is not defined twice. */
#define ARROW_C_DEVICE_STREAM_INTERFACE

/** A stream of ArrowDeviceArrays, all of one device type. */
struct ArrowDeviceArrayStream {
  /** The device type of every array of the stream. */
  ArrowDeviceType device_type;
  /** The stream's schema (0 or an errno code). */
  int (*get_schema)(struct ArrowDeviceArrayStream* self, struct ArrowSchema* out);
  /** The next array; a released one (array.release NULL) at the end. */
  int (*get_next)(struct ArrowDeviceArrayStream* self, struct ArrowDeviceArray* out);
  /** The message of the last error, valid until the next call; or NULL. */
  const char* (*get_last_error)(struct ArrowDeviceArrayStream* self);
  /** Release callback. */
  void (*release)(struct ArrowDeviceArrayStream* self);
  /** Opaque producer-specific data. */
  void* private_data;
};

#endif /* ARROW_C_DEVICE_STREAM_INTERFACE */

/** The device_id quiver gives CPU arrays. */
#define QV_DEVICE_CPU_ID (-1)

/* ---- moving between the plain and the device structs */

/** Moves a CPU array into a device array: out->array takes *array
 * (array->release is NULL afterwards), device CPU, id -1, no sync_event,
 * reserved bytes zero. A released `array` gives a released `out`. */
QV_API void qv_device_array_from_cpu(struct ArrowArray *array, struct ArrowDeviceArray *out);

/** Checks that a device array can be read by quiver: live (release set:
 * QV_EARG otherwise), device_type ARROW_DEVICE_CPU and sync_event NULL
 * (QV_ENOTSUP otherwise, naming the device). Checks nothing of the data. */
QV_API QvStatus qv_device_array_check(const struct ArrowDeviceArray *array, QvError *error);

/** qv_device_array_check, then moves array->array into *out
 * (array->array.release is NULL afterwards). On an error nothing moves: the
 * caller still owns `array`. */
QV_API QvStatus qv_device_array_to_cpu(struct ArrowDeviceArray *array, struct ArrowArray *out,
                                       QvError *error);

/** Moves a CPU stream into a new CPU device stream (stream->release is NULL
 * afterwards, on success only): its get_next hands out each array of
 * `stream` as a CPU device array. Release `out` when done. */
QV_API QvStatus qv_device_stream_from_cpu(struct ArrowArrayStream *stream,
                                          struct ArrowDeviceArrayStream *out, QvError *error);

/** Moves a device stream into a new plain stream (stream->release is NULL
 * afterwards, on success only). A stream whose device_type is not
 * ARROW_DEVICE_CPU is QV_ENOTSUP (nothing moves). The plain stream's
 * get_next refuses an array of another device, or one with a sync_event,
 * with ENOTSUP (the array is released; get_last_error names the device; the
 * qv_rb_stream_get_next status is QV_ENOTSUP). Unwrapping a stream made by
 * qv_device_stream_from_cpu gives back the original stream itself. */
QV_API QvStatus qv_device_stream_to_cpu(struct ArrowDeviceArrayStream *stream,
                                        struct ArrowArrayStream *out, QvError *error);

/* ---- readers */

/** qv_rb_stream_reader_new as a CPU device stream. */
QV_API QvStatus qv_rb_stream_reader_new_device(struct ArrowDeviceArrayStream *out,
                                               QvSource *source, const QvRbReadOptions *options,
                                               QvError *error);
/** qv_rb_file_read_batch as a CPU device array. */
QV_API QvStatus qv_rb_file_read_batch_device(QvRbFileReader *reader, int64_t i,
                                             struct ArrowDeviceArray *out, QvError *error);
/** qv_tensor_column_unstack with the column as a CPU device array. */
QV_API QvStatus qv_tensor_column_unstack_device(const QvTensor *t,
                                                const QvTensorUnstackOptions *options,
                                                struct ArrowSchema *schema,
                                                struct ArrowDeviceArray *array, QvError *error);

/* ---- writers */

/** qv_rb_writer_write of a device array (not released). Non-CPU: QV_ENOTSUP
 * and nothing is written (the writer stays usable). */
QV_API QvStatus qv_rb_writer_write_device(QvRbWriter *writer, const struct ArrowDeviceArray *batch,
                                          QvError *error);
/** qv_rb_writer_write_move of a device array: batch->array.release is NULL
 * on return, whatever the outcome (a refused non-CPU batch is released). */
QV_API QvStatus qv_rb_writer_write_device_move(QvRbWriter *writer, struct ArrowDeviceArray *batch,
                                               QvError *error);
/** qv_rb_write_all of a device stream (not released): a non-CPU stream is
 * QV_ENOTSUP before anything is written; a non-CPU array in the middle of
 * the stream is QV_ENOTSUP when it arrives (what came before it has been
 * handed to the sink; the caller discards the sink, as after any error).
 * A stream of qv_rb_stream_reader_new_device keeps the reader's dictionary
 * ids as qv_rb_write_all does. */
QV_API QvStatus qv_rb_write_all_device(struct ArrowDeviceArrayStream *stream, QvSink *sink,
                                       const QvRbWriteOptions *options, QvError *error);
/** qv_tensor_column_init of a device array: non-CPU is QV_ENOTSUP and
 * nothing moves; otherwise array->array is moved as qv_tensor_column_init
 * moves it (on success only). */
QV_API QvStatus qv_tensor_column_init_device(QvTensorColumn *out, const struct ArrowSchema *field,
                                             struct ArrowDeviceArray *array,
                                             const QvTensorColumnOptions *options,
                                             QvError *error);

#ifdef __cplusplus
}
#endif

#endif
