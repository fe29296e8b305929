/* The shared parts of quiver._quiver, the CPython face of libquiver (C API
 * only). One C file per concept:
 *
 *   quiver_module.c  the module: state, multi-phase init, the method tables
 *   errors.c         the exception classes and QvStatus -> exception
 *   values.c         value types <-> NumPy dtypes, tuples, names, views
 *   io.c             sources and sinks (paths, buffers, file objects) and
 *                    messages(), the message-level iterator
 *   tensor.c         quiver.Tensor and the dense tensor functions
 *   sparse.c         quiver._Sparse and the sparse tensor functions
 *   records.c        quiver.RecordBatchReader and the record batch writer
 *   table_tensor.c   table_to_tensor: the numeric columns of a table as a 2-D ndarray
 *   tensor_column.c  arrow.fixed_shape_tensor / variable_shape_tensor columns
 *   sparse_column.c  quiver.sparse_tensor / sparse_vector columns, migrate
 *   flight.c         Arrow Flight: the client and the directory server (quiver.flight)
 *   dlpack.c         DLPack 0.6 and 1.x both ways (Tensor.__dlpack__, from_dlpack)
 *   batch.c          record batches and columns without pyarrow (quiver/_records.py)
 *   npy.c            .npy and save_npz files (quiver/_numpy_files.py)
 *   json.c           Arrow's integration JSON (quiver/_json.py)
 *   device.c         the C Device Data Interface capsules (__arrow_c_device_stream__)
 *   validate.c       validate(): the verdict of quiver validate
 *
 * A concept file exposes a method table (appended to the module by
 * quiver_module.c) and, when it defines types or needs state, an exec
 * function run at module creation. Every exception class and type lives in
 * the module's state (QvPyState), not in C globals, so the module can be
 * loaded in several interpreters: module functions find it with
 * qvpy_state(module), methods of quiver's types with qvpy_state_of(self).
 *
 * Views: a tensor or sparse tensor read by quiver lives in a Tensor or
 * _Sparse object, and every ndarray handed out points into it with that
 * object as its base, so the file mapping (or the caller's buffer) lives as
 * long as any array does. Sources made from a Python buffer hold the
 * Py_buffer in a QvOwner whose release takes the GIL, because the library
 * may drop the last reference from a call made with the GIL released. */
#ifndef QUIVER_PYTHON_QVPY_H
#define QUIVER_PYTHON_QVPY_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
/* One NumPy C-API table for the whole module, imported by quiver_module.c. */
#define PY_ARRAY_UNIQUE_SYMBOL qvpy_numpy_api
#ifndef QVPY_IMPORT_NUMPY
#define NO_IMPORT_ARRAY
#endif
#include <numpy/arrayobject.h>

#include <stdbool.h>
#include <stdint.h>

#include "quiver/array.h"
#include "quiver/error.h"
#include "quiver/io.h"
#include "quiver/recordbatch_ipc.h"
#include "quiver/sparse.h"
#include "quiver/tensor.h"

/* ---- module state */

typedef struct QvPyState {
  /* exceptions: Error and its subclasses (errors.c) */
  PyObject *Error, *InvalidError, *NotSupportedError, *CapacityError, *InputOutputError,
      *OutOfMemoryError;
  /* types (heap types made from the module, one per module object) */
  PyTypeObject *TensorType, *SparseType, *ReaderType, *MessageIterType;
} QvPyState;

/* The state of quiver's module object `module` (a module function's self). */
QvPyState *qvpy_state(PyObject *module);
/* The state of the module that defined the type of `obj`, an instance of one
 * of quiver's types. */
QvPyState *qvpy_state_of(PyObject *obj);

/* ---- exceptions (errors.c) */

/* Creates Error and its subclasses in `st` and adds them (and the 0.5 names
 * kept as aliases) to `module`: 0, or -1 with an exception set. */
int qvpy_errors_exec(PyObject *module, QvPyState *qs);
/* Raises the exception for `status` with err's message; returns NULL. */
PyObject *qvpy_raise(QvPyState *qs, QvStatus status, const QvError *err);

/* ---- values (values.c) */

/* The NumPy type number of a tensor value type, -1 for others. */
int qvpy_npy_type_of(QvArrowType t);
/* The tensor value type of an ndarray's dtype (by kind and width, so C long
 * and long long both map): 0, or -1 with NotSupportedError set. */
int qvpy_value_type_of_array(QvPyState *qs, PyArrayObject *a, QvArrowType *out);
/* A dtype-like object (or None: QV_ARROW_NONE) as a value type. */
int qvpy_parse_value_type(QvPyState *qs, PyObject *obj, QvArrowType *out);
PyObject *qvpy_int64_tuple(const int64_t *v, int64_t n);
/* names (NULL: None) as a tuple of str, undecodable bytes as surrogates. */
PyObject *qvpy_names_tuple(const char *const *names, int64_t n);
/* An optional sequence of ndim names into storage that lives as long as
 * *keep (NULL when obj is None). */
int qvpy_parse_names(PyObject *obj, int64_t ndim, const char **names, PyObject **keep);
int qvpy_parse_format(PyObject *obj, QvSparseFormat *out);
/* A read-only ndarray over memory `owner` keeps alive (it becomes the base). */
PyObject *qvpy_view(PyObject *owner, const void *data, QvArrowType type, int nd, const npy_intp *dims,
                    const npy_intp *strides);
PyObject *qvpy_view_1d(PyObject *owner, const void *data, QvArrowType type, int64_t n);
/* d[k] = v, v's reference stolen (NULL v: -1 with the exception kept). */
int qvpy_dict_put(PyObject *d, const char *k, PyObject *v);
/* Where an empty ndarray or DLPack tensor points (consumers want a pointer). */
extern char qvpy_zero_size_data[64];

/* ---- sources and sinks (io.c) */

/* A path (str or os.PathLike, memory-mapped), anything exporting a
 * contiguous buffer (read in place) or a binary file object (read(), or
 * readinto(), and seek()/tell() when seekable() says so; read as readers
 * ask, through a callback source that holds the object) as a QvSource: 0,
 * or -1 raised. A file object source reads sequentially: it is read once. */
int qvpy_open_source(QvPyState *qs, PyObject *obj, QvSource **out);
/* Whether qvpy_open_source reads `obj` as a file object. */
bool qvpy_is_file_object(PyObject *obj);
/* A seekable file object's position (tell()): true, or false when it cannot
 * seek (no exception left set). */
bool qvpy_file_position(PyObject *file, long long *position);
/* With the GIL held: when the exception a file object's method raised (in
 * this thread) is what `err` reports, sets it as the current exception
 * (quiver's message added as a note) and returns true. */
bool qvpy_take_source_exception(const QvError *err);
/* Calls into the library that raise what they report (qvpy_raise): how
 * many this thread is inside. A file object's exception is kept for the
 * raise only inside one; raised under any other caller (a C consumer of a
 * reader's stream, on its own thread or not) it is dropped at once and
 * that caller gets its text, so it never outlives the failure (its
 * traceback's frames could hold the reader, and so the exception itself,
 * in a cycle the garbage collector cannot see). */
extern _Thread_local int qvpy_calls;
/* Py_BEGIN/END_ALLOW_THREADS around a call into the library that raises
 * what it reports. */
#define QVPY_BEGIN_CALL \
  {                     \
    qvpy_calls++;       \
    Py_BEGIN_ALLOW_THREADS
#define QVPY_END_CALL  \
  Py_END_ALLOW_THREADS \
  qvpy_calls--;        \
  }
/* The C side of a reader, run on an open source without the GIL (it may
 * retain the source; the caller's reference is dropped after it). */
typedef QvStatus (*QvPySourceCall)(QvSource *src, void *ctx, QvError *err);
/* Opens `source`, runs call(src, ctx) with the GIL released and raises its
 * error: 0, or -1 with an exception set. */
int qvpy_with_source(QvPyState *qs, PyObject *source, QvPySourceCall call, void *ctx);
/* The C side of a writer, run on an open sink without the GIL. */
typedef QvStatus (*QvPySinkCall)(QvSink *sink, void *ctx, QvError *err);
/* Opens `dest` (a path, replaced atomically, or an object with write()),
 * runs call(sink, ctx) and finishes the sink with the GIL released: None, or
 * NULL with the exception (the file object's own first). `fsync` false: a
 * path is committed without fsyncs (QV_SINK_NO_FSYNC, the writers'
 * fsync=False); a file object is never fsynced. */
PyObject *qvpy_with_sink(QvPyState *qs, PyObject *dest, bool fsync, QvPySinkCall call, void *ctx);
/* One schema and one batch written to `sink` (writer, write, finish). */
QvStatus qvpy_write_batch(QvSink *sink, const struct ArrowSchema *schema, struct ArrowArray *batch,
                          const QvRbWriteOptions *options, QvError *err);
/* A QvPySinkCall over a QvPyBatchWrite: its batch as a stream or a file. */
typedef struct QvPyBatchWrite {
  struct ArrowSchema schema;
  struct ArrowArray batch;
  bool file;
} QvPyBatchWrite;
QvStatus qvpy_write_batch_call(QvSink *sink, void *ctx, QvError *err);

/* ---- tensors (tensor.c) */

typedef struct {
  PyObject_HEAD
  QvTensor t;
} QvPyTensor;

int qvpy_tensor_exec(PyObject *module, QvPyState *qs);
/* A new Tensor holding an empty tensor (to be filled). */
QvPyTensor *qvpy_tensor_new(QvPyState *qs);
PyObject *qvpy_tensor_to_numpy(QvPyTensor *self, PyObject *unused);
/* Tensor.__dlpack__ (dlpack.c). */
PyObject *qvpy_tensor_dlpack(PyObject *self, PyObject *args, PyObject *kwargs);
/* *t: a view of a Tensor's tensor sharing its owner (reset it). */
int qvpy_tensor_share(QvPyState *qs, PyObject *tensor, QvTensor *t);
/* An ndarray quiver can describe as a QvTensor: native value type, no
 * negative strides (copied to C order otherwise). New reference. */
PyArrayObject *qvpy_usable_array(QvPyState *qs, PyObject *obj);
/* *out: a tensor viewing a's memory (the caller keeps `a` alive). */
int qvpy_tensor_from_array(QvPyState *qs, PyArrayObject *a, const char *const *names, QvTensor *out);

/* What a read of message `index` fills. */
typedef struct QvPyIndexRead {
  void *out;
  long long index;
} QvPyIndexRead;
/* The arguments (source, index=0) of the readers of one message. */
int qvpy_parse_source_index(PyObject *args, PyObject *kwargs, PyObject **source, long long *index);
/* obj (new, NULL when its allocation failed) with `out` read from message
 * `index` of `source` by `call`; on failure NULL, obj released. */
PyObject *qvpy_read_object(QvPyState *qs, PyObject *obj, void *out, PyObject *source, long long index,
                           QvPySourceCall call);

/* ---- sparse tensors (sparse.c) */

typedef struct {
  PyObject_HEAD
  QvSparseTensor s;
} QvPySparse;

int qvpy_sparse_exec(PyObject *module, QvPyState *qs);
QvPySparse *qvpy_sparse_new(QvPyState *qs);

/* ---- messages (io.c) and record batches (records.c) */

int qvpy_io_exec(PyObject *module, QvPyState *qs);
int qvpy_records_exec(PyObject *module, QvPyState *qs);
/* PyCapsule interface capsules (records.c); each destructor releases a
 * struct no consumer moved out. An "arrow_schema" capsule of a copy of
 * `schema`: */
PyObject *qvpy_schema_capsule(QvPyState *qs, const struct ArrowSchema *schema);
/* *array (or *stream) moved into a new "arrow_array" ("arrow_array_stream")
 * capsule; on failure it is released. NULL raised on failure. */
PyObject *qvpy_array_capsule(struct ArrowArray *array);
PyObject *qvpy_stream_capsule(struct ArrowArrayStream *stream);

/* ---- record batches (batch.c) */

/* A "quiver._batch" capsule (what quiver.RecordBatch wraps) holding a copy
 * of `schema` and a share of `batch` checked at `level`; batch NULL: a
 * capsule of the schema alone. NULL raised on failure. */
PyObject *qvpy_batch_capsule(QvPyState *qs, const struct ArrowSchema *schema,
                             const struct ArrowArray *batch, QvValidateLevel level);

/* ---- the method tables quiver_module.c appends */

extern PyMethodDef qvpy_tensor_methods[];
extern PyMethodDef qvpy_sparse_methods[];
extern PyMethodDef qvpy_io_methods[];
extern PyMethodDef qvpy_records_methods[];
extern PyMethodDef qvpy_table_tensor_methods[]; /* table_tensor.c: tables as tensors */
extern PyMethodDef qvpy_tensor_column_methods[]; /* tensor_column.c: tensor columns */
extern PyMethodDef qvpy_sparse_column_methods[]; /* sparse_column.c: sparse columns, migrate */
extern PyMethodDef qvpy_flight_methods[];        /* flight.c: Arrow Flight client and server */
extern PyMethodDef qvpy_dlpack_methods[];        /* dlpack.c: from_dlpack, as_dlpack */
extern PyMethodDef qvpy_batch_methods[];         /* batch.c: batches and columns */
extern PyMethodDef qvpy_npy_methods[];           /* npy.c: .npy and .npz files */
extern PyMethodDef qvpy_json_methods[];          /* json.c: integration JSON */
extern PyMethodDef qvpy_device_methods[];        /* device.c: device array/stream capsules */
/* device.c: RecordBatchReader.__arrow_c_device_stream__(requested_schema=None, **kwargs) */
PyObject *qvpy_reader_c_device_stream(PyObject *self, PyObject *args, PyObject *kwargs);
extern PyMethodDef qvpy_validate_methods[];      /* validate.c: validate */
extern PyMethodDef qvpy_cast_methods[];          /* cast.c: value casts */

/* A heap type made from `spec` for `module` and added to it under its short
 * name when `add` is true: the new type, or NULL raised. */
PyTypeObject *qvpy_add_type(PyObject *module, PyType_Spec *spec, bool add);

/* The tail of a heap type's dealloc: frees self and drops the type. */
void qvpy_free_instance(PyObject *self);

#endif
