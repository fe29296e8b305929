/* quiver._quiver: the CPython face of libquiver (C API only).
 *
 * Views: a tensor or sparse tensor read by quiver lives in a Tensor or
 * _Sparse object, and every ndarray handed out points into it with that
 * object as its base, so the file mapping (or the caller's buffer) lives as
 * long as any array does. Sources made from a Python buffer hold the
 * Py_buffer in a QvOwner whose release takes the GIL, because the library
 * may drop the last reference from a call made with the GIL released. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>

#include <dlpack/dlpack.h>
#include <stdlib.h>
#include <string.h>

#include "quiver/buffer.h"
#include "quiver/c_data.h"
#include "quiver/error.h"
#include "quiver/format.h"
#include "quiver/io.h"
#include "quiver/ipc.h"
#include "quiver/recordbatch_ipc.h"
#include "quiver/sparse.h"
#include "quiver/sparse_ipc.h"
#include "quiver/tensor.h"
#include "quiver/tensor_dlpack.h"
#include "quiver/tensor_ipc.h"

/* ---- exceptions */

static PyObject *Error, *ArrowInvalid, *ArrowNotSupported, *ArrowIOError, *ArrowCapacityError,
    *ArrowMemoryError;

static PyObject *raise_qv(QvStatus st, const QvError *err) {
  PyObject *type = ArrowInvalid;
  switch (st) {
    case QV_EIO: type = ArrowIOError; break;
    case QV_ENOTSUP: type = ArrowNotSupported; break;
    case QV_ELIMIT: type = ArrowCapacityError; break;
    case QV_ENOMEM: type = ArrowMemoryError; break;
    default: break;
  }
  const char *msg = err && err->message[0] ? err->message : qv_status_name(st);
  PyErr_SetString(type, msg);
  return NULL;
}

/* ---- value types <-> NumPy */

static int npy_type_of(QvArrowType t) {
  switch (t) {
    case QV_ARROW_INT8: return NPY_INT8;
    case QV_ARROW_INT16: return NPY_INT16;
    case QV_ARROW_INT32: return NPY_INT32;
    case QV_ARROW_INT64: return NPY_INT64;
    case QV_ARROW_UINT8: return NPY_UINT8;
    case QV_ARROW_UINT16: return NPY_UINT16;
    case QV_ARROW_UINT32: return NPY_UINT32;
    case QV_ARROW_UINT64: return NPY_UINT64;
    case QV_ARROW_FLOAT16: return NPY_HALF;
    case QV_ARROW_FLOAT32: return NPY_FLOAT32;
    case QV_ARROW_FLOAT64: return NPY_FLOAT64;
    default: return -1;
  }
}

/* By kind and width, so C long and long long (both int64 here) both map. */
static int value_type_of_array(PyArrayObject *a, QvArrowType *out) {
  PyArray_Descr *d = PyArray_DESCR(a);
  int size = (int)d->elsize;
  QvArrowType t = QV_ARROW_NONE;
  if (d->kind == 'i') t = size == 1 ? QV_ARROW_INT8 : size == 2 ? QV_ARROW_INT16 : size == 4 ? QV_ARROW_INT32 : size == 8 ? QV_ARROW_INT64 : 0;
  if (d->kind == 'u') t = size == 1 ? QV_ARROW_UINT8 : size == 2 ? QV_ARROW_UINT16 : size == 4 ? QV_ARROW_UINT32 : size == 8 ? QV_ARROW_UINT64 : 0;
  if (d->kind == 'f') t = size == 2 ? QV_ARROW_FLOAT16 : size == 4 ? QV_ARROW_FLOAT32 : size == 8 ? QV_ARROW_FLOAT64 : 0;
  if (t == QV_ARROW_NONE || d->byteorder == '>' || PyDataType_HASFIELDS(d)) {
    PyObject *repr = PyObject_Str((PyObject *)d);
    PyErr_Format(ArrowNotSupported,
                 "dtype %S is not an Arrow tensor value type (native int8..int64, uint8..uint64, "
                 "float16, float32, float64)",
                 repr ? repr : Py_None);
    Py_XDECREF(repr);
    return -1;
  }
  *out = t;
  return 0;
}

static int parse_value_type(PyObject *obj, QvArrowType *out) {
  *out = QV_ARROW_NONE;
  if (obj == NULL || obj == Py_None) return 0;
  PyArray_Descr *d = NULL;
  if (!PyArray_DescrConverter(obj, &d)) return -1;
  PyArrayObject *tmp = (PyArrayObject *)PyArray_NewFromDescr(&PyArray_Type, d, 0, NULL, NULL, NULL, 0, NULL);
  if (!tmp) return -1;
  int rc = value_type_of_array(tmp, out);
  Py_DECREF(tmp);
  return rc;
}

/* ---- sources */

typedef struct BufferHold {
  Py_buffer view;
} BufferHold;

static void buffer_hold_release(void *p) {
  BufferHold *h = p;
  PyGILState_STATE g = PyGILState_Ensure();
  PyBuffer_Release(&h->view);
  PyGILState_Release(g);
  free(h);
}

/* A path (str or os.PathLike) is mapped; anything exporting a contiguous
 * buffer is read in place. */
static int open_source(PyObject *obj, QvSource **out) {
  QvError err;
  qv_error_clear(&err);
  QvStatus st;
  *out = NULL;
  if (PyObject_CheckBuffer(obj)) {
    BufferHold *h = calloc(1, sizeof *h);
    if (!h) return PyErr_NoMemory(), -1;
    if (PyObject_GetBuffer(obj, &h->view, PyBUF_SIMPLE) < 0) {
      free(h);
      return -1;
    }
    QvOwner *owner = qv_owner_new(buffer_hold_release, h);
    if (!owner) {
      PyBuffer_Release(&h->view);
      free(h);
      return PyErr_NoMemory(), -1;
    }
    st = qv_source_new_memory(out, h->view.buf, (size_t)h->view.len, owner, &err);
    qv_owner_free(owner);
    if (st) return raise_qv(st, &err), -1;
    return 0;
  }
  PyObject *path = NULL;
  if (!PyUnicode_FSConverter(obj, &path)) {
    PyErr_Clear();
    PyErr_Format(PyExc_TypeError, "source must be a path or a bytes-like object, not %.100s",
                 Py_TYPE(obj)->tp_name);
    return -1;
  }
  const char *p = PyBytes_AS_STRING(path);
  Py_BEGIN_ALLOW_THREADS
  st = qv_source_new_path(out, p, &err);
  Py_END_ALLOW_THREADS
  Py_DECREF(path);
  if (st) return raise_qv(st, &err), -1;
  return 0;
}

/* The C side of a reader, run on an open source without the GIL (it may
 * retain the source; the caller's reference is dropped after it). */
typedef QvStatus (*SourceCall)(QvSource *src, void *ctx, QvError *err);

/* Opens `source`, runs call(src, ctx) with the GIL released and raises its
 * error: 0, or -1 with an exception set. */
static int with_source(PyObject *source, SourceCall call, void *ctx) {
  QvSource *src;
  if (open_source(source, &src) < 0) return -1;
  QvError err;
  qv_error_clear(&err);
  QvStatus st;
  Py_BEGIN_ALLOW_THREADS
  st = call(src, ctx, &err);
  qv_source_free(src);
  Py_END_ALLOW_THREADS
  if (st) return raise_qv(st, &err), -1;
  return 0;
}

/* ---- sinks: a path (atomic replace) or a file object's write() */

typedef struct SinkCtx {
  PyObject *file; /* borrowed */
  PyObject *exc_type, *exc_value, *exc_tb;
} SinkCtx;

static QvStatus file_write(void *p, const void *data, size_t size, QvError *error) {
  SinkCtx *ctx = p;
  PyGILState_STATE g = PyGILState_Ensure();
  QvStatus st = QV_OK;
  const char *d = data;
  while (size > 0 && st == QV_OK) {
    Py_ssize_t chunk = size > ((size_t)1 << 30) ? (Py_ssize_t)1 << 30 : (Py_ssize_t)size;
    PyObject *mv = PyMemoryView_FromMemory((char *)d, chunk, PyBUF_READ);
    PyObject *r = mv ? PyObject_CallMethod(ctx->file, "write", "O", mv) : NULL;
    Py_ssize_t n = chunk;
    if (r && r != Py_None) n = PyLong_AsSsize_t(r);
    bool failed = !r || n < 0 || PyErr_Occurred();
    if (failed && !ctx->exc_type) PyErr_Fetch(&ctx->exc_type, &ctx->exc_value, &ctx->exc_tb);
    PyErr_Clear();
    /* The memory is ours only for this call: a write() that kept the view
     * must not be able to read it later (release() fails if it exported it). */
    if (mv) {
      PyObject *rel = PyObject_CallMethod(mv, "release", NULL);
      if (!rel) {
        if (!ctx->exc_type) PyErr_Fetch(&ctx->exc_type, &ctx->exc_value, &ctx->exc_tb);
        PyErr_Clear();
        failed = true;
      }
      Py_XDECREF(rel);
    }
    Py_XDECREF(mv);
    if (failed) {
      st = qv_error_set(error, QV_EIO, "writing to the file object failed");
    } else if (n == 0 || n > chunk) {
      st = qv_error_set(error, QV_EIO, "the file object's write() returned %zd for %zd bytes", n, chunk);
    } else {
      d += n;
      size -= (size_t)n;
    }
    Py_XDECREF(r);
  }
  PyGILState_Release(g);
  return st;
}

static int open_sink(PyObject *dest, SinkCtx *ctx, QvSink **out) {
  QvError err;
  qv_error_clear(&err);
  memset(ctx, 0, sizeof *ctx);
  QvStatus st;
  if (PyObject_HasAttrString(dest, "write")) {
    ctx->file = dest;
    st = qv_sink_new_callback(out, file_write, ctx, &err);
    if (st) return raise_qv(st, &err), -1;
    return 0;
  }
  PyObject *path = NULL;
  if (!PyUnicode_FSConverter(dest, &path)) {
    PyErr_Clear();
    PyErr_Format(PyExc_TypeError, "dest must be a path or a writable file object, not %.100s",
                 Py_TYPE(dest)->tp_name);
    return -1;
  }
  const char *p = PyBytes_AS_STRING(path);
  Py_BEGIN_ALLOW_THREADS
  st = qv_sink_new_path(out, p, 0, &err);
  Py_END_ALLOW_THREADS
  Py_DECREF(path);
  if (st) return raise_qv(st, &err), -1;
  return 0;
}

/* Called with the GIL held after a write: the file object's own exception
 * wins over quiver's message. */
static PyObject *sink_fail(SinkCtx *ctx, QvStatus st, const QvError *err) {
  if (ctx->exc_type) {
    PyErr_Restore(ctx->exc_type, ctx->exc_value, ctx->exc_tb);
    ctx->exc_type = ctx->exc_value = ctx->exc_tb = NULL;
    return NULL;
  }
  return raise_qv(st, err);
}

static void sink_ctx_clear(SinkCtx *ctx) {
  Py_CLEAR(ctx->exc_type);
  Py_CLEAR(ctx->exc_value);
  Py_CLEAR(ctx->exc_tb);
}

/* The C side of a writer, run on an open sink without the GIL. */
typedef QvStatus (*SinkCall)(QvSink *sink, void *ctx, QvError *err);

/* Opens `dest`, runs call(sink, ctx) and finishes the sink with the GIL
 * released: None, or NULL with the exception (the file object's own
 * first). */
static PyObject *with_sink(PyObject *dest, SinkCall call, void *ctx) {
  SinkCtx sc;
  QvSink *sink;
  if (open_sink(dest, &sc, &sink) < 0) return NULL;
  QvError err;
  qv_error_clear(&err);
  QvStatus st;
  Py_BEGIN_ALLOW_THREADS
  st = call(sink, ctx, &err);
  if (st == QV_OK) st = qv_sink_finish(sink, &err);
  qv_sink_free(sink);
  Py_END_ALLOW_THREADS
  PyObject *r = st ? sink_fail(&sc, st, &err) : (Py_INCREF(Py_None), Py_None);
  sink_ctx_clear(&sc);
  return r;
}

/* ---- helpers */

static PyObject *int64_tuple(const int64_t *v, int64_t n) {
  PyObject *t = PyTuple_New((Py_ssize_t)n);
  if (!t) return NULL;
  for (int64_t i = 0; i < n; i++) {
    PyObject *x = PyLong_FromLongLong(v[i]);
    if (!x) return Py_DECREF(t), NULL;
    PyTuple_SET_ITEM(t, (Py_ssize_t)i, x);
  }
  return t;
}

static PyObject *names_tuple(const char *const *names, int64_t n) {
  if (!names) Py_RETURN_NONE;
  PyObject *t = PyTuple_New((Py_ssize_t)n);
  if (!t) return NULL;
  for (int64_t i = 0; i < n; i++) {
    /* names come from files: undecodable bytes are kept as surrogates */
    PyObject *x = PyUnicode_DecodeUTF8(names[i], (Py_ssize_t)strlen(names[i]), "surrogateescape");
    if (!x) return Py_DECREF(t), NULL;
    PyTuple_SET_ITEM(t, (Py_ssize_t)i, x);
  }
  return t;
}

/* Parses an optional sequence of ndim names into storage that lives as long
 * as `keep` (a list of bytes objects). */
static int parse_names(PyObject *obj, int64_t ndim, const char **names, PyObject **keep) {
  *keep = NULL;
  if (obj == NULL || obj == Py_None) return 0;
  PyObject *seq = PySequence_Fast(obj, "dim_names must be a sequence of str");
  if (!seq) return -1;
  if (PySequence_Fast_GET_SIZE(seq) != ndim) {
    PyErr_Format(PyExc_ValueError, "dim_names has %zd names for %lld dimensions",
                 PySequence_Fast_GET_SIZE(seq), (long long)ndim);
    Py_DECREF(seq);
    return -1;
  }
  PyObject *list = PyList_New(0);
  if (!list) return Py_DECREF(seq), -1;
  for (int64_t i = 0; i < ndim; i++) {
    PyObject *s = PySequence_Fast_GET_ITEM(seq, i);
    PyObject *b = PyUnicode_Check(s) ? PyUnicode_AsUTF8String(s) : NULL;
    if (!b) {
      if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "dim_names must be str");
      Py_DECREF(seq);
      Py_DECREF(list);
      return -1;
    }
    if ((Py_ssize_t)strlen(PyBytes_AS_STRING(b)) != PyBytes_GET_SIZE(b)) {
      PyErr_SetString(PyExc_ValueError, "dim_names must not contain NUL");
      Py_DECREF(b);
      Py_DECREF(seq);
      Py_DECREF(list);
      return -1;
    }
    names[i] = PyBytes_AS_STRING(b);
    PyList_Append(list, b);
    Py_DECREF(b);
  }
  Py_DECREF(seq);
  *keep = list;
  return 0;
}

static int parse_format(PyObject *obj, QvSparseFormat *out) {
  if (!PyUnicode_Check(obj)) {
    PyErr_SetString(PyExc_TypeError, "format must be 'coo', 'csr', 'csc' or 'csf'");
    return -1;
  }
  QvError err;
  if (qv_sparse_format_parse(PyUnicode_AsUTF8(obj), out, &err)) {
    PyErr_Format(PyExc_ValueError, "unknown sparse format %R: 'coo', 'csr', 'csc' or 'csf'", obj);
    return -1;
  }
  return 0;
}

/* An ndarray quiver can describe as a QvTensor: native value type, no
 * negative strides (copied to C order otherwise). New reference. */
static PyArrayObject *usable_array(PyObject *obj) {
  PyArrayObject *a = (PyArrayObject *)PyArray_FromAny(obj, NULL, 0, 0, 0, NULL);
  if (!a) return NULL;
  QvArrowType vt;
  if (value_type_of_array(a, &vt) < 0) return Py_DECREF(a), NULL;
  if (PyArray_NDIM(a) > QV_TENSOR_MAX_NDIM) {
    Py_DECREF(a);
    PyErr_SetString(ArrowNotSupported, "more dimensions than quiver supports");
    return NULL;
  }
  for (int i = 0; i < PyArray_NDIM(a); i++) {
    if (PyArray_STRIDES(a)[i] < 0) {
      PyArrayObject *c = (PyArrayObject *)PyArray_NewCopy(a, NPY_CORDER);
      Py_DECREF(a);
      return c;
    }
  }
  return a;
}

static int tensor_from_array(PyArrayObject *a, const char *const *names, QvTensor *out) {
  QvArrowType vt;
  if (value_type_of_array(a, &vt) < 0) return -1;
  int nd = PyArray_NDIM(a);
  int64_t shape[QV_TENSOR_MAX_NDIM], strides[QV_TENSOR_MAX_NDIM];
  int64_t span = nd == 0 ? 1 : 0;
  bool empty = false;
  for (int i = 0; i < nd; i++) {
    shape[i] = PyArray_DIMS(a)[i];
    strides[i] = PyArray_STRIDES(a)[i];
    if (shape[i] == 0) empty = true;
  }
  if (!empty) {
    span = 0;
    for (int i = 0; i < nd; i++) span += (shape[i] - 1) * strides[i];
    span += (int64_t)qv_arrow_type_size(vt);
  }
  QvTensorDesc d = {.type = vt, .ndim = nd, .shape = shape, .strides = strides, .dim_names = names,
                    .data = PyArray_DATA(a), .data_size = empty ? 0 : span};
  QvError err;
  qv_error_clear(&err);
  QvStatus st = qv_tensor_init(out, &d, &err);
  if (st) return raise_qv(st, &err), -1;
  return 0;
}

/* ---- Tensor: a dense tensor read by quiver, the base of its ndarrays */

typedef struct {
  PyObject_HEAD
  QvTensor t;
} TensorObject;

static PyTypeObject TensorType;

static void Tensor_dealloc(TensorObject *self) {
  qv_tensor_reset(&self->t);
  Py_TYPE(self)->tp_free((PyObject *)self);
}

static TensorObject *tensor_new(void) {
  TensorObject *self = PyObject_New(TensorObject, &TensorType);
  if (self) memset(&self->t, 0, sizeof self->t);
  return self;
}

/* *t: a view of a Tensor's tensor sharing its owner (reset it). */
static int tensor_share(PyObject *obj, QvTensor *t) {
  const QvTensor *s = &((TensorObject *)obj)->t;
  QvError e;
  QvStatus st = qv_tensor_init(t, &(QvTensorDesc){.type = s->type, .ndim = s->ndim,
                                                  .shape = s->shape, .strides = s->strides,
                                                  .dim_names = s->dim_names, .data = s->data,
                                                  .data_size = s->data_size, .owner = s->owner},
                               &e);
  if (st) return raise_qv(st, &e), -1;
  return 0;
}

static char zero_size_data[64];

static PyObject *Tensor_to_numpy(TensorObject *self, PyObject *unused) {
  (void)unused;
  const QvTensor *t = &self->t;
  if (t->ndim > NPY_MAXDIMS) {
    PyErr_Format(ArrowNotSupported, "a tensor of %d dimensions has more than NumPy's %d",
                 (int)t->ndim, NPY_MAXDIMS);
    return NULL;
  }
  npy_intp dims[NPY_MAXDIMS], strides[NPY_MAXDIMS];
  for (int i = 0; i < t->ndim; i++) {
    dims[i] = (npy_intp)t->shape[i];
    strides[i] = (npy_intp)t->strides[i];
  }
  PyArray_Descr *d = PyArray_DescrFromType(npy_type_of(t->type));
  if (!d) return NULL;
  void *data = t->data ? (void *)t->data : zero_size_data;
  /* read-only: the memory may be a read-only file mapping */
  PyObject *arr = PyArray_NewFromDescr(&PyArray_Type, d, t->ndim, dims, strides, data, 0, NULL);
  if (!arr) return NULL;
  Py_INCREF(self);
  if (PyArray_SetBaseObject((PyArrayObject *)arr, (PyObject *)self) < 0) {
    Py_DECREF(arr);
    return NULL;
  }
  return arr;
}

static const char *layout_name(const QvTensor *t) {
  return qv_tensor_is_row_major(t) ? "row-major" : qv_tensor_is_column_major(t) ? "column-major" : "strided";
}

static PyObject *Tensor_info(TensorObject *self, PyObject *unused) {
  (void)unused;
  const QvTensor *t = &self->t;
  PyObject *shape = int64_tuple(t->shape, t->ndim), *strides = int64_tuple(t->strides, t->ndim);
  PyObject *names = names_tuple(t->dim_names, t->ndim);
  PyObject *dtype = (PyObject *)PyArray_DescrFromType(npy_type_of(t->type));
  PyObject *r = NULL;
  if (shape && strides && names && dtype)
    r = Py_BuildValue("{s:s,s:O,s:O,s:O,s:O,s:s,s:L}", "type", qv_arrow_type_name(t->type), "dtype",
                      dtype, "shape", shape, "strides", strides, "dim_names", names, "layout",
                      layout_name(t), "nbytes",
                      (long long)(qv_tensor_n_elements(t) * (int64_t)qv_arrow_type_size(t->type)));
  Py_XDECREF(shape);
  Py_XDECREF(strides);
  Py_XDECREF(names);
  Py_XDECREF(dtype);
  return r;
}

static void dl_capsule_destructor(PyObject *cap) {
  /* a consumer renames the capsule "used_dltensor" and owns the tensor */
  if (!PyCapsule_IsValid(cap, "dltensor")) return;
  DLManagedTensor *m = PyCapsule_GetPointer(cap, "dltensor");
  if (m && m->deleter) m->deleter(m);
}

static PyObject *Tensor_dlpack(TensorObject *self, PyObject *args, PyObject *kwargs) {
  static char *kw[] = {"stream", "max_version", "dl_device", "copy", NULL};
  PyObject *stream = Py_None, *maxv = Py_None, *dev = Py_None, *copy = Py_None;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|O$OOO", kw, &stream, &maxv, &dev, &copy))
    return NULL;
  if (stream != Py_None) {
    PyErr_SetString(PyExc_RuntimeError, "stream must be None for a CPU tensor");
    return NULL;
  }
  if (copy == Py_True) {
    PyErr_SetString(PyExc_BufferError, "quiver exports its tensors without a copy only");
    return NULL;
  }
  /* quiver's export (DLPack 0.6) holds a reference to the tensor's owner:
   * the file mapping or the caller's buffer, whose release takes the GIL
   * itself, so the deleter may run on any thread */
  DLManagedTensor *m;
  QvError err;
  qv_error_clear(&err);
  QvStatus st = qv_tensor_to_dlpack(&self->t, &m, &err);
  if (st) {
    /* e.g. byte strides that are not whole elements */
    PyErr_SetString(PyExc_BufferError, err.message);
    return NULL;
  }
  /* an empty tensor may have no data; consumers want a pointer */
  if (m->dl_tensor.data == NULL) m->dl_tensor.data = zero_size_data;
  PyObject *cap = PyCapsule_New(m, "dltensor", dl_capsule_destructor);
  if (!cap) m->deleter(m);
  return cap;
}

static PyObject *Tensor_dlpack_device(TensorObject *self, PyObject *unused) {
  (void)self;
  (void)unused;
  return Py_BuildValue("(ii)", (int)kDLCPU, 0);
}

static PyObject *Tensor_get_shape(TensorObject *self, void *c) {
  (void)c;
  return int64_tuple(self->t.shape, self->t.ndim);
}
static PyObject *Tensor_get_strides(TensorObject *self, void *c) {
  (void)c;
  return int64_tuple(self->t.strides, self->t.ndim);
}
static PyObject *Tensor_get_dim_names(TensorObject *self, void *c) {
  (void)c;
  return names_tuple(self->t.dim_names, self->t.ndim);
}
static PyObject *Tensor_get_type(TensorObject *self, void *c) {
  (void)c;
  return PyUnicode_FromString(qv_arrow_type_name(self->t.type));
}

static PyMethodDef Tensor_methods[] = {
    {"to_numpy", (PyCFunction)Tensor_to_numpy, METH_NOARGS,
     "to_numpy()\n--\n\nA read-only ndarray viewing the tensor's memory (no copy); its base is this object."},
    {"info", (PyCFunction)Tensor_info, METH_NOARGS,
     "info()\n--\n\nA dict: type, dtype, shape, strides (bytes), dim_names, layout, nbytes."},
    {"__dlpack__", (PyCFunction)(void (*)(void))Tensor_dlpack, METH_VARARGS | METH_KEYWORDS,
     "__dlpack__(stream=None)\n--\n\nA DLPack capsule viewing the tensor (no copy). The memory is "
     "read-only (often a file mapping): consumers must not write to it."},
    {"__dlpack_device__", (PyCFunction)Tensor_dlpack_device, METH_NOARGS,
     "__dlpack_device__()\n--\n\n(kDLCPU, 0)."},
    {NULL, NULL, 0, NULL}};

static PyGetSetDef Tensor_getset[] = {
    {"shape", (getter)Tensor_get_shape, NULL, "Shape (tuple of int).", NULL},
    {"strides", (getter)Tensor_get_strides, NULL, "Strides in bytes (tuple of int).", NULL},
    {"dim_names", (getter)Tensor_get_dim_names, NULL, "Dimension names, or None.", NULL},
    {"type", (getter)Tensor_get_type, NULL, "Value type name ('int8' ... 'float64').", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

static PyTypeObject TensorType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "quiver.Tensor",
    .tp_basicsize = sizeof(TensorObject),
    .tp_dealloc = (destructor)Tensor_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A dense Arrow tensor read by quiver: the owner of the memory its ndarrays view "
              "(a file mapping or the caller's buffer). Supports DLPack.",
    .tp_methods = Tensor_methods,
    .tp_getset = Tensor_getset,
};

/* ---- _Sparse: a sparse tensor held by quiver */

typedef struct {
  PyObject_HEAD
  QvSparseTensor s;
} SparseObject;

static PyTypeObject SparseType;

static void Sparse_dealloc(SparseObject *self) {
  qv_sparse_reset(&self->s);
  Py_TYPE(self)->tp_free((PyObject *)self);
}

static SparseObject *sparse_new(void) {
  SparseObject *self = PyObject_New(SparseObject, &SparseType);
  if (self) memset(&self->s, 0, sizeof self->s);
  return self;
}

/* The C side of making a sparse tensor, run without the GIL. */
typedef QvStatus (*SparseCall)(const void *ctx, QvSparseTensor *out, QvError *err);

/* A new _Sparse filled by call(ctx) with the GIL released; NULL with the
 * error raised. */
static PyObject *new_sparse(SparseCall call, const void *ctx) {
  SparseObject *r = sparse_new();
  if (!r) return NULL;
  QvError err;
  qv_error_clear(&err);
  QvStatus st;
  Py_BEGIN_ALLOW_THREADS
  st = call(ctx, &r->s, &err);
  Py_END_ALLOW_THREADS
  if (st) {
    Py_DECREF(r);
    return raise_qv(st, &err);
  }
  return (PyObject *)r;
}

/* A conversion to `f` with options `o` of a dense or sparse tensor. */
typedef struct SparseConvert {
  const void *in;
  QvSparseFormat f;
  QvSparseOptions o;
  int32_t axis[QV_TENSOR_MAX_NDIM];
} SparseConvert;

/* format, index_type and axis_order (ndim entries, or None) of a
 * conversion: 0, or -1 with an exception set. */
static int parse_convert(PyObject *fmt, PyObject *it, PyObject *ao, int64_t ndim,
                         SparseConvert *c) {
  memset(&c->o, 0, sizeof c->o);
  c->o.struct_size = sizeof c->o;
  if (parse_format(fmt, &c->f) < 0 || parse_value_type(it, &c->o.index_type) < 0) return -1;
  if (ao == Py_None) return 0;
  PyObject *seq = PySequence_Fast(ao, "axis_order must be a sequence of int");
  if (!seq) return -1;
  if (PySequence_Fast_GET_SIZE(seq) != ndim) {
    Py_DECREF(seq);
    PyErr_SetString(PyExc_ValueError, "axis_order needs one entry per dimension");
    return -1;
  }
  for (int i = 0; i < ndim; i++) {
    long v = PyLong_AsLong(PySequence_Fast_GET_ITEM(seq, i));
    if (v == -1 && PyErr_Occurred()) return Py_DECREF(seq), -1;
    c->axis[i] = (int32_t)(v < 0 || v > QV_TENSOR_MAX_NDIM ? -1 : v);
  }
  Py_DECREF(seq);
  c->o.axis_order = c->axis;
  return 0;
}

/* A read-only ndarray over memory `self` keeps alive. */
static PyObject *view_of(PyObject *self, const void *data, QvArrowType type, int nd, const npy_intp *dims,
                         const npy_intp *strides) {
  PyArray_Descr *d = PyArray_DescrFromType(npy_type_of(type));
  if (!d) return NULL;
  PyObject *arr = PyArray_NewFromDescr(&PyArray_Type, d, nd, (npy_intp *)dims, (npy_intp *)strides,
                                       data ? (void *)data : zero_size_data, 0, NULL);
  if (!arr) return NULL;
  Py_INCREF(self);
  if (PyArray_SetBaseObject((PyArrayObject *)arr, self) < 0) return Py_DECREF(arr), NULL;
  return arr;
}

static PyObject *view_1d(PyObject *self, const void *data, QvArrowType type, int64_t n) {
  npy_intp dims[1] = {(npy_intp)n};
  return view_of(self, data, type, 1, dims, NULL);
}

static int dict_put(PyObject *d, const char *k, PyObject *v) {
  if (!v) return -1;
  int rc = PyDict_SetItemString(d, k, v);
  Py_DECREF(v);
  return rc;
}

static PyObject *Sparse_buffers(SparseObject *self, PyObject *unused) {
  (void)unused;
  const QvSparseTensor *s = &self->s;
  PyObject *o = (PyObject *)self, *d = PyDict_New();
  if (!d) return NULL;
  if (dict_put(d, "data", view_1d(o, s->values, s->value_type, s->nnz)) < 0) goto fail;
  if (s->format == QV_SPARSE_COO) {
    npy_intp dims[2] = {(npy_intp)s->nnz, s->ndim}, st[2] = {(npy_intp)s->coords_strides[0], (npy_intp)s->coords_strides[1]};
    if (dict_put(d, "coords", view_of(o, s->coords, s->index_type, 2, dims, st)) < 0) goto fail;
  } else if (s->format == QV_SPARSE_CSR || s->format == QV_SPARSE_CSC) {
    if (dict_put(d, "indptr", view_1d(o, s->indptr, s->indptr_type, s->indptr_len)) < 0) goto fail;
    if (dict_put(d, "indices", view_1d(o, s->indices, s->index_type, s->indices_len)) < 0) goto fail;
  } else {
    PyObject *ip = PyList_New(0), *ix = PyList_New(0);
    if (dict_put(d, "indptr", ip) < 0 || dict_put(d, "indices", ix) < 0) goto fail;
    for (int l = 0; l < s->ndim; l++) {
      if (l < s->ndim - 1) {
        PyObject *a = view_1d(o, s->csf_indptr[l], s->indptr_type, s->csf_indptr_len[l]);
        if (!a || PyList_Append(ip, a) < 0) {
          Py_XDECREF(a);
          goto fail;
        }
        Py_DECREF(a);
      }
      PyObject *a = view_1d(o, s->csf_indices[l], s->index_type, s->csf_indices_len[l]);
      if (!a || PyList_Append(ix, a) < 0) {
        Py_XDECREF(a);
        goto fail;
      }
      Py_DECREF(a);
    }
  }
  return d;
fail:
  Py_DECREF(d);
  return NULL;
}

static PyObject *Sparse_to_dense(SparseObject *self, PyObject *unused) {
  (void)unused;
  const QvSparseTensor *s = &self->s;
  npy_intp dims[QV_TENSOR_MAX_NDIM];
  if (s->ndim > NPY_MAXDIMS) {
    PyErr_SetString(ArrowNotSupported, "more dimensions than NumPy supports");
    return NULL;
  }
  for (int i = 0; i < s->ndim; i++) dims[i] = (npy_intp)s->shape[i];
  PyObject *arr = PyArray_SimpleNew(s->ndim, dims, npy_type_of(s->value_type));
  if (!arr) return NULL;
  QvError err;
  qv_error_clear(&err);
  QvStatus st;
  void *dst = PyArray_DATA((PyArrayObject *)arr);
  size_t n = (size_t)PyArray_NBYTES((PyArrayObject *)arr);
  Py_BEGIN_ALLOW_THREADS
  st = qv_sparse_to_dense_into(s, dst, n, &err);
  Py_END_ALLOW_THREADS
  if (st) {
    Py_DECREF(arr);
    return raise_qv(st, &err);
  }
  return arr;
}

static QvStatus convert_call(const void *ctx, QvSparseTensor *out, QvError *err) {
  const SparseConvert *c = ctx;
  return qv_sparse_convert(c->in, c->f, &c->o, out, err);
}

static PyObject *Sparse_convert(SparseObject *self, PyObject *args, PyObject *kwargs) {
  static char *kw[] = {"format", "index_type", "axis_order", NULL};
  PyObject *fmt, *it = Py_None, *ao = Py_None;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|OO", kw, &fmt, &it, &ao)) return NULL;
  SparseConvert c = {.in = &self->s};
  if (parse_convert(fmt, it, ao, self->s.ndim, &c) < 0) return NULL;
  return new_sparse(convert_call, &c);
}

#define SPARSE_GET(name, expr)                              \
  static PyObject *Sparse_get_##name(SparseObject *self, void *c) { \
    (void)c;                                                \
    const QvSparseTensor *s = &self->s;                     \
    return expr;                                            \
  }
SPARSE_GET(format, PyUnicode_FromString(qv_sparse_format_name(s->format)))
SPARSE_GET(shape, int64_tuple(s->shape, s->ndim))
SPARSE_GET(ndim, PyLong_FromLong(s->ndim))
SPARSE_GET(nnz, PyLong_FromLongLong(s->nnz))
SPARSE_GET(dim_names, names_tuple(s->dim_names, s->ndim))
SPARSE_GET(value_type, PyUnicode_FromString(qv_arrow_type_name(s->value_type)))
SPARSE_GET(index_type, PyUnicode_FromString(qv_arrow_type_name(s->index_type)))
SPARSE_GET(is_canonical, PyBool_FromLong(s->format == QV_SPARSE_COO ? s->is_canonical : 1))

static PyObject *Sparse_get_axis_order(SparseObject *self, void *c) {
  (void)c;
  const QvSparseTensor *s = &self->s;
  if (s->format != QV_SPARSE_CSF) Py_RETURN_NONE;
  int64_t v[QV_TENSOR_MAX_NDIM];
  for (int i = 0; i < s->ndim; i++) v[i] = s->axis_order[i];
  return int64_tuple(v, s->ndim);
}

static PyMethodDef Sparse_methods[] = {
    {"buffers", (PyCFunction)Sparse_buffers, METH_NOARGS,
     "buffers()\n--\n\nA dict of read-only ndarrays viewing the buffers (no copy): 'data', and "
     "'coords' (COO, nnz x ndim), 'indptr'/'indices' (CSR/CSC arrays, CSF lists per level)."},
    {"to_dense", (PyCFunction)Sparse_to_dense, METH_NOARGS,
     "to_dense()\n--\n\nA new row-major ndarray (duplicates of a non-canonical COO summed)."},
    {"convert", (PyCFunction)(void (*)(void))Sparse_convert, METH_VARARGS | METH_KEYWORDS,
     "convert(format, index_type=None, axis_order=None)\n--\n\nA new sparse tensor in another "
     "format or index type (O(nnz), in C)."},
    {NULL, NULL, 0, NULL}};

static PyGetSetDef Sparse_getset[] = {
    {"format", (getter)Sparse_get_format, NULL, "'coo', 'csr', 'csc' or 'csf'.", NULL},
    {"shape", (getter)Sparse_get_shape, NULL, "Shape (tuple of int).", NULL},
    {"ndim", (getter)Sparse_get_ndim, NULL, "Number of dimensions.", NULL},
    {"nnz", (getter)Sparse_get_nnz, NULL, "Number of stored values.", NULL},
    {"dim_names", (getter)Sparse_get_dim_names, NULL, "Dimension names, or None.", NULL},
    {"value_type", (getter)Sparse_get_value_type, NULL, "Value type name.", NULL},
    {"index_type", (getter)Sparse_get_index_type, NULL, "Index type name.", NULL},
    {"is_canonical", (getter)Sparse_get_is_canonical, NULL, "COO: sorted without duplicates.", NULL},
    {"axis_order", (getter)Sparse_get_axis_order, NULL, "CSF level order, else None.", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

static PyTypeObject SparseType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "quiver._Sparse",
    .tp_basicsize = sizeof(SparseObject),
    .tp_dealloc = (destructor)Sparse_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A sparse tensor held by quiver (the owner of the memory its buffers() view).",
    .tp_methods = Sparse_methods,
    .tp_getset = Sparse_getset,
};

/* ---- module functions: tensors */

/* What a read of message `index` fills. */
typedef struct IndexRead {
  void *out;
  long long index;
} IndexRead;

static QvStatus read_tensor_call(QvSource *src, void *ctx, QvError *err) {
  IndexRead *r = ctx;
  return qv_tensor_read(src, r->index, NULL, r->out, err);
}

/* The arguments (source, index=0) of the readers of one message. */
static int parse_source_index(PyObject *args, PyObject *kwargs, PyObject **source,
                              long long *index) {
  static char *kw[] = {"source", "index", NULL};
  *index = 0;
  return PyArg_ParseTupleAndKeywords(args, kwargs, "O|L", kw, source, index) ? 0 : -1;
}

/* obj (new, NULL when its allocation failed) with `out`, its tensor, read
 * from message `index` of `source` by `call`; on failure NULL, obj
 * released. */
static PyObject *read_object(PyObject *obj, void *out, PyObject *source, long long index,
                             SourceCall call) {
  if (!obj) return NULL;
  IndexRead r = {out, index};
  if (with_source(source, call, &r) < 0) {
    Py_DECREF(obj);
    return NULL;
  }
  return obj;
}

static PyObject *py_read_tensor_object(PyObject *m, PyObject *args, PyObject *kwargs) {
  (void)m;
  PyObject *source;
  long long index;
  if (parse_source_index(args, kwargs, &source, &index) < 0) return NULL;
  TensorObject *t = tensor_new();
  return read_object((PyObject *)t, t ? &t->t : NULL, source, index, read_tensor_call);
}

static PyObject *py_read_tensor(PyObject *m, PyObject *args, PyObject *kwargs) {
  PyObject *t = py_read_tensor_object(m, args, kwargs);
  if (!t) return NULL;
  PyObject *a = Tensor_to_numpy((TensorObject *)t, NULL);
  Py_DECREF(t);
  return a;
}

static PyObject *py_read_tensor_info(PyObject *m, PyObject *args, PyObject *kwargs) {
  PyObject *t = py_read_tensor_object(m, args, kwargs);
  if (!t) return NULL;
  PyObject *i = Tensor_info((TensorObject *)t, NULL);
  Py_DECREF(t);
  return i;
}

static QvStatus write_tensor_call(QvSink *sink, void *ctx, QvError *err) {
  return qv_tensor_write(ctx, sink, NULL, err);
}

static PyObject *py_write_tensor(PyObject *m, PyObject *args, PyObject *kwargs) {
  (void)m;
  static char *kw[] = {"dest", "array", "dim_names", NULL};
  PyObject *dest, *obj, *names_obj = Py_None;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OO|O", kw, &dest, &obj, &names_obj)) return NULL;
  QvTensor t;
  memset(&t, 0, sizeof t);
  PyArrayObject *a = NULL;
  PyObject *keep = NULL;
  if (PyObject_TypeCheck(obj, &TensorType) && names_obj == Py_None) {
    if (tensor_share(obj, &t) < 0) return NULL;
  } else {
    a = usable_array(obj);
    if (!a) return NULL;
    const char *names[QV_TENSOR_MAX_NDIM];
    if (parse_names(names_obj, PyArray_NDIM(a), names, &keep) < 0 ||
        tensor_from_array(a, keep ? names : NULL, &t) < 0) {
      Py_DECREF(a);
      Py_XDECREF(keep);
      return NULL;
    }
  }
  PyObject *result = with_sink(dest, write_tensor_call, &t);
  qv_tensor_reset(&t);
  Py_XDECREF(a);
  Py_XDECREF(keep);
  return result;
}

/* ---- module functions: sparse */

static QvStatus read_sparse_call(QvSource *src, void *ctx, QvError *err) {
  IndexRead *r = ctx;
  return qv_sparse_read(src, r->index, NULL, r->out, err);
}

static PyObject *py_read_sparse(PyObject *m, PyObject *args, PyObject *kwargs) {
  (void)m;
  PyObject *source;
  long long index;
  if (parse_source_index(args, kwargs, &source, &index) < 0) return NULL;
  SparseObject *s = sparse_new();
  return read_object((PyObject *)s, s ? &s->s : NULL, source, index, read_sparse_call);
}

static QvStatus read_message_call(QvSource *src, void *ctx, QvError *err) {
  IndexRead *a = ctx;
  if (a->index < 0) return qv_error_set(err, QV_EARG, "index %lld is negative", a->index);
  QvIpcReader *r = NULL;
  QvStatus st = qv_ipc_reader_new(&r, src, NULL, err);
  if (st == QV_OK) st = qv_ipc_reader_nth(r, a->index, a->out, err);
  qv_ipc_reader_free(r);
  if (st == QV_EOS) st = qv_error_set(err, QV_EINVAL, "no message %lld in the input", a->index);
  return st;
}

/* Either kind of tensor message at `index`: a Tensor or a _Sparse. */
static PyObject *py_read_any(PyObject *m, PyObject *args, PyObject *kwargs) {
  (void)m;
  PyObject *source;
  long long index;
  if (parse_source_index(args, kwargs, &source, &index) < 0) return NULL;
  QvIpcMessage msg;
  memset(&msg, 0, sizeof msg);
  IndexRead a = {&msg, index};
  if (with_source(source, read_message_call, &a) < 0) return NULL;
  QvError err;
  qv_error_clear(&err);
  QvStatus st;
  PyObject *out = NULL;
  if (msg.message.header_type == QV_HEADER_TENSOR) {
    TensorObject *t = tensor_new();
    if (t && (st = qv_tensor_from_message(&msg, &t->t, &err)) != QV_OK) {
      Py_CLEAR(t);
      raise_qv(st, &err);
    }
    out = (PyObject *)t;
  } else if (msg.message.header_type == QV_HEADER_SPARSE_TENSOR) {
    SparseObject *s = sparse_new();
    if (s && (st = qv_sparse_from_message(&msg, &s->s, NULL, &err)) != QV_OK) {
      Py_CLEAR(s);
      raise_qv(st, &err);
    }
    out = (PyObject *)s;
  } else {
    PyErr_Format(ArrowInvalid, "message %lld is a %s, not a Tensor or SparseTensor", index,
                 qv_header_type_name(msg.message.header_type));
  }
  qv_ipc_message_reset(&msg);
  return out;
}

static QvStatus from_dense_call(const void *ctx, QvSparseTensor *out, QvError *err) {
  const SparseConvert *c = ctx;
  return qv_sparse_from_dense(c->in, c->f, &c->o, out, err);
}

static PyObject *py_sparse_from_dense(PyObject *m, PyObject *args, PyObject *kwargs) {
  (void)m;
  static char *kw[] = {"array", "format", "index_type", "axis_order", NULL};
  PyObject *obj, *fmt, *it = Py_None, *ao = Py_None;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OO|OO", kw, &obj, &fmt, &it, &ao)) return NULL;
  QvTensor t;
  memset(&t, 0, sizeof t);
  PyArrayObject *a = NULL;
  if (PyObject_TypeCheck(obj, &TensorType)) {
    if (tensor_share(obj, &t) < 0) return NULL;
  } else {
    a = usable_array(obj);
    if (!a) return NULL;
    if (tensor_from_array(a, NULL, &t) < 0) return Py_DECREF(a), NULL;
  }
  SparseConvert c = {.in = &t};
  PyObject *result = NULL;
  if (parse_convert(fmt, it, ao, t.ndim, &c) == 0) result = new_sparse(from_dense_call, &c);
  qv_tensor_reset(&t);
  Py_XDECREF(a);
  return result;
}

/* The owner of arrays lent to a sparse view: drops them under the GIL. */
static void arrays_release(void *p) {
  PyGILState_STATE g = PyGILState_Ensure();
  Py_XDECREF((PyObject *)p);
  PyGILState_Release(g);
}

static PyArrayObject *index_array(PyObject *obj, int nd, const char *what) {
  PyArrayObject *a = (PyArrayObject *)PyArray_FromAny(obj, NULL, nd, nd, NPY_ARRAY_ALIGNED, NULL);
  if (!a) return NULL;
  QvArrowType vt;
  if (value_type_of_array(a, &vt) < 0 || vt > QV_ARROW_UINT64) {
    if (!PyErr_Occurred()) PyErr_Format(ArrowNotSupported, "%s must hold integers", what);
    Py_DECREF(a);
    return NULL;
  }
  return a;
}

static QvStatus init_call(const void *ctx, QvSparseTensor *out, QvError *err) {
  return qv_sparse_init(out, ctx, err);
}

static PyObject *py_sparse_from_buffers(PyObject *m, PyObject *args, PyObject *kwargs) {
  (void)m;
  static char *kw[] = {"format", "shape", "data", "indptr", "indices", "coords", "is_canonical",
                       "dim_names", NULL};
  PyObject *fmt, *shape_obj, *data_obj, *indptr_obj = Py_None, *indices_obj = Py_None,
                                        *coords_obj = Py_None, *names_obj = Py_None;
  int canonical = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OOO|OOOpO", kw, &fmt, &shape_obj, &data_obj,
                                   &indptr_obj, &indices_obj, &coords_obj, &canonical, &names_obj))
    return NULL;
  QvSparseFormat f;
  if (parse_format(fmt, &f) < 0) return NULL;
  if (f == QV_SPARSE_CSF) {
    PyErr_SetString(PyExc_ValueError, "CSF tensors are made with convert() or from dense arrays");
    return NULL;
  }
  PyObject *seq = PySequence_Fast(shape_obj, "shape must be a sequence of int");
  if (!seq) return NULL;
  int64_t shape[QV_TENSOR_MAX_NDIM];
  Py_ssize_t nd = PySequence_Fast_GET_SIZE(seq);
  if (nd < 1 || nd > QV_TENSOR_MAX_NDIM) {
    Py_DECREF(seq);
    PyErr_SetString(PyExc_ValueError, "shape must have 1 to 64 dimensions");
    return NULL;
  }
  for (Py_ssize_t i = 0; i < nd; i++) {
    shape[i] = PyLong_AsLongLong(PySequence_Fast_GET_ITEM(seq, i));
    if (shape[i] == -1 && PyErr_Occurred()) return Py_DECREF(seq), NULL;
  }
  Py_DECREF(seq);
  PyArrayObject *data = NULL, *indptr = NULL, *indices = NULL, *coords = NULL;
  PyObject *keep = NULL, *names_keep = NULL, *result = NULL;
  const char *names[QV_TENSOR_MAX_NDIM];
  data = (PyArrayObject *)PyArray_FromAny(data_obj, NULL, 1, 1, NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_ALIGNED, NULL);
  if (!data) goto done;
  QvSparseDesc d = {.format = f, .ndim = (int32_t)nd, .shape = shape, .nnz = PyArray_DIM(data, 0),
                    .values = PyArray_DATA(data), .is_canonical = canonical != 0};
  if (value_type_of_array(data, &d.value_type) < 0) goto done;
  if (parse_names(names_obj, nd, names, &names_keep) < 0) goto done;
  if (names_keep) d.dim_names = names;
  int64_t cstrides[2];
  if (f == QV_SPARSE_COO) {
    coords = index_array(coords_obj, 2, "coords");
    if (!coords) goto done;
    if (PyArray_DIM(coords, 0) != d.nnz || PyArray_DIM(coords, 1) != nd ||
        PyArray_STRIDE(coords, 0) < 0 || PyArray_STRIDE(coords, 1) < 0) {
      PyErr_SetString(PyExc_ValueError, "coords must be an nnz x ndim array with non-negative strides");
      goto done;
    }
    value_type_of_array(coords, &d.index_type);
    cstrides[0] = PyArray_STRIDE(coords, 0);
    cstrides[1] = PyArray_STRIDE(coords, 1);
    d.coords = PyArray_DATA(coords);
    d.coords_strides = cstrides;
  } else {
    indptr = index_array(indptr_obj, 1, "indptr");
    indices = indptr ? index_array(indices_obj, 1, "indices") : NULL;
    if (!indices) goto done;
    if (!PyArray_IS_C_CONTIGUOUS(indptr) || !PyArray_IS_C_CONTIGUOUS(indices)) {
      PyErr_SetString(PyExc_ValueError, "indptr and indices must be contiguous");
      goto done;
    }
    if (nd != 2) {
      PyErr_SetString(PyExc_ValueError, "CSR and CSC are 2-D");
      goto done;
    }
    int64_t want = shape[f == QV_SPARSE_CSR ? 0 : 1] + 1;
    if (PyArray_DIM(indptr, 0) != want || PyArray_DIM(indices, 0) != d.nnz) {
      PyErr_Format(PyExc_ValueError, "indptr must hold %lld entries and indices %lld (nnz)",
                   (long long)want, (long long)d.nnz);
      goto done;
    }
    value_type_of_array(indptr, &d.indptr_type);
    value_type_of_array(indices, &d.index_type);
    d.indptr = PyArray_DATA(indptr);
    d.indices = PyArray_DATA(indices);
  }
  keep = Py_BuildValue("(OOOOO)", data, indptr ? (PyObject *)indptr : Py_None,
                       indices ? (PyObject *)indices : Py_None, coords ? (PyObject *)coords : Py_None,
                       names_keep ? names_keep : Py_None);
  if (!keep) goto done;
  QvOwner *owner = qv_owner_new(arrays_release, keep);
  if (!owner) {
    PyErr_NoMemory();
    goto done;
  }
  keep = NULL; /* the owner has it now */
  d.owner = owner;
  result = new_sparse(init_call, &d);
  qv_owner_free(owner);
done:
  Py_XDECREF(data);
  Py_XDECREF(indptr);
  Py_XDECREF(indices);
  Py_XDECREF(coords);
  Py_XDECREF(keep);
  Py_XDECREF(names_keep);
  return result;
}

typedef struct SparseWrite {
  const QvSparseTensor *s;
  QvSparseWriteOptions o;
} SparseWrite;

static QvStatus write_sparse_call(QvSink *sink, void *ctx, QvError *err) {
  SparseWrite *w = ctx;
  return qv_sparse_write(w->s, sink, &w->o, err);
}

static PyObject *py_write_sparse_object(PyObject *m, PyObject *args, PyObject *kwargs) {
  (void)m;
  static char *kw[] = {"dest", "tensor", "csf_lengths_in_bytes", NULL};
  PyObject *dest, *obj;
  int bytes = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OO!|p", kw, &dest, &SparseType, &obj, &bytes))
    return NULL;
  SparseWrite w = {&((SparseObject *)obj)->s,
                   {.struct_size = sizeof w.o,
                    .csf_lengths = bytes ? QV_CSF_LENGTHS_BYTES : QV_CSF_LENGTHS_ELEMENTS}};
  return with_sink(dest, write_sparse_call, &w);
}

/* ---- messages */

static void put_dims(PyObject *d, const QvTensorDim *dims, int64_t n) {
  PyObject *shape = PyList_New(0), *names = PyList_New(0);
  bool named = false;
  for (int64_t i = 0; shape && names && i < n; i++) {
    PyObject *x = PyLong_FromLongLong(dims[i].size);
    if (x) PyList_Append(shape, x);
    Py_XDECREF(x);
    named |= dims[i].name && dims[i].name_len;
    PyObject *s = dims[i].name ? PyUnicode_DecodeUTF8(dims[i].name, (Py_ssize_t)dims[i].name_len, "surrogateescape")
                               : PyUnicode_FromString("");
    if (s) PyList_Append(names, s);
    Py_XDECREF(s);
  }
  if (shape) dict_put(d, "shape", PyList_AsTuple(shape));
  if (names && named) dict_put(d, "dim_names", PyList_AsTuple(names));
  Py_XDECREF(shape);
  Py_XDECREF(names);
}

static PyObject *message_dict(const QvIpcMessage *m, int64_t i) {
  const QvMessage *msg = &m->message;
  char type[128];
  PyObject *d = Py_BuildValue("{s:L,s:L,s:s,s:s,s:i,s:L,s:O}", "index", (long long)i, "offset",
                              (long long)m->offset, "kind", qv_header_type_name(msg->header_type),
                              "version", qv_metadata_version_name(msg->version), "metadata_length",
                              (int)m->metadata_length, "body_length", (long long)m->body_length,
                              "legacy_prefix", m->legacy_prefix ? Py_True : Py_False);
  if (!d) return NULL;
  switch (msg->header_type) {
    case QV_HEADER_SCHEMA: {
      const QvSchema *s = &msg->header.schema;
      PyObject *fields = PyList_New(0);
      for (int64_t k = 0; fields && k < s->n_fields; k++) {
        const QvField *f = &s->fields[k];
        PyObject *t = Py_BuildValue("(NsO)",
                                    f->name ? PyUnicode_DecodeUTF8(f->name, (Py_ssize_t)f->name_len, "surrogateescape")
                                            : PyUnicode_FromString(""),
                                    qv_type_describe(&f->type, type, sizeof type),
                                    f->nullable ? Py_True : Py_False);
        if (t) PyList_Append(fields, t);
        Py_XDECREF(t);
      }
      dict_put(d, "fields", fields);
      break;
    }
    case QV_HEADER_DICTIONARY_BATCH:
    case QV_HEADER_RECORD_BATCH: {
      const QvRecordBatch *rb = &msg->header.record_batch;
      if (msg->header_type == QV_HEADER_DICTIONARY_BATCH) {
        rb = &msg->header.dictionary_batch.data;
        dict_put(d, "id", PyLong_FromLongLong(msg->header.dictionary_batch.id));
        dict_put(d, "is_delta", PyBool_FromLong(msg->header.dictionary_batch.is_delta));
      }
      dict_put(d, "length", PyLong_FromLongLong(rb->length));
      dict_put(d, "nodes", PyLong_FromLongLong(rb->n_nodes));
      dict_put(d, "buffers", PyLong_FromLongLong(rb->n_buffers));
      const char *c = rb->compression == QV_COMPRESSION_ZSTD ? "zstd" : rb->compression ? "lz4" : NULL;
      if (c) dict_put(d, "compression", PyUnicode_FromString(c));
      break;
    }
    case QV_HEADER_TENSOR: {
      const QvTensorMeta *te = &msg->header.tensor;
      dict_put(d, "type", PyUnicode_FromString(qv_type_describe(&te->type, type, sizeof type)));
      put_dims(d, te->shape, te->ndim);
      if (te->has_strides) dict_put(d, "strides", int64_tuple(te->strides, te->n_strides));
      break;
    }
    case QV_HEADER_SPARSE_TENSOR: {
      const QvSparseTensorMeta *s = &msg->header.sparse_tensor;
      const char *fmt = qv_sparse_format_name(s->format);
      dict_put(d, "format", PyUnicode_FromString(fmt));
      dict_put(d, "type", PyUnicode_FromString(qv_type_describe(&s->type, type, sizeof type)));
      put_dims(d, s->shape, s->ndim);
      dict_put(d, "nnz", PyLong_FromLongLong(s->non_zero_length));
      break;
    }
    default: break;
  }
  if (PyErr_Occurred()) return Py_DECREF(d), NULL;
  return d;
}

static QvStatus open_messages_call(QvSource *src, void *ctx, QvError *err) {
  return qv_ipc_reader_new(ctx, src, NULL, err); /* the reader retains src */
}

/* messages(): an iterator that decodes one message per next(), so the
 * first item costs one message whatever the stream's length. */
typedef struct {
  PyObject_HEAD
  QvIpcReader *reader; /* NULL once exhausted or failed */
  int64_t index;
} MessageIterObject;

static void MessageIter_dealloc(MessageIterObject *self) {
  qv_ipc_reader_free(self->reader);
  Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *MessageIter_next(MessageIterObject *self) {
  if (self->reader == NULL) return NULL;
  QvError err;
  qv_error_clear(&err);
  QvIpcMessage msg;
  QvStatus st;
  Py_BEGIN_ALLOW_THREADS
  st = qv_ipc_reader_next(self->reader, &msg, &err);
  Py_END_ALLOW_THREADS
  if (st) {
    qv_ipc_reader_free(self->reader);
    self->reader = NULL;
    return st == QV_EOS ? NULL : raise_qv(st, &err);
  }
  PyObject *d = message_dict(&msg, self->index++);
  qv_ipc_message_reset(&msg);
  return d;
}

static PyTypeObject MessageIterType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "quiver._MessageIter",
    .tp_basicsize = sizeof(MessageIterObject),
    .tp_dealloc = (destructor)MessageIter_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "The messages of an Arrow stream or file, decoded one per next().",
    .tp_iter = PyObject_SelfIter,
    .tp_iternext = (iternextfunc)MessageIter_next,
};

static PyObject *py_messages(PyObject *m, PyObject *args, PyObject *kwargs) {
  (void)m;
  static char *kw[] = {"source", NULL};
  PyObject *source;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O", kw, &source)) return NULL;
  MessageIterObject *it = PyObject_New(MessageIterObject, &MessageIterType);
  if (!it) return NULL;
  it->reader = NULL;
  it->index = 0;
  if (with_source(source, open_messages_call, &it->reader) < 0) {
    Py_DECREF(it);
    return NULL;
  }
  return (PyObject *)it;
}

/* ---- record batches: capsules of the Arrow PyCapsule interface */

static void schema_capsule_free(PyObject *cap) {
  struct ArrowSchema *s = PyCapsule_GetPointer(cap, "arrow_schema");
  if (!s) {
    PyErr_Clear();
    return;
  }
  if (s->release) s->release(s);
  free(s);
}

static void stream_capsule_free(PyObject *cap) {
  struct ArrowArrayStream *s = PyCapsule_GetPointer(cap, "arrow_array_stream");
  if (!s) {
    PyErr_Clear();
    return;
  }
  if (s->release) s->release(s);
  free(s);
}

static const QvRbReadOptions full_validation = {.struct_size = sizeof(QvRbReadOptions),
                                                .validate = QV_VALIDATE_FULL};

/* A new stream over `src` from its first batch. The stream reader reads an
 * Arrow file through its footer, and qv_rb_write_all recognises its streams
 * (keeping shared dictionary ids), so files go through it too. */
static QvStatus open_batches(QvSource *src, struct ArrowArrayStream *out, QvError *err) {
  memset(out, 0, sizeof *out);
  return qv_rb_stream_reader_new(out, src, &full_validation, err);
}

typedef struct {
  PyObject_HEAD
  QvSource *src;
  bool file;
  int64_t num_batches;
  struct ArrowSchema schema;
} ReaderObject;

static PyTypeObject ReaderType;

static void Reader_dealloc(ReaderObject *self) {
  if (self->schema.release) self->schema.release(&self->schema);
  qv_source_free(self->src);
  Py_TYPE(self)->tp_free((PyObject *)self);
}

/* Keeps the source in the Reader and reads its schema (and a file's batch
 * count). */
static QvStatus open_reader_call(QvSource *src, void *ctx, QvError *err) {
  ReaderObject *self = ctx;
  qv_source_retain(src);
  self->src = src;
  QvStatus st = QV_OK;
  if (self->file) {
    /* the file reader checks both magics and the footer */
    QvRbFileReader *f = NULL;
    st = qv_rb_file_reader_new(&f, src, &full_validation, err);
    if (st == QV_OK) self->num_batches = qv_rb_file_n_batches(f);
    qv_rb_file_reader_free(f);
  }
  struct ArrowArrayStream s;
  if (st == QV_OK) st = open_batches(src, &s, err);
  if (st == QV_OK) {
    st = qv_rb_stream_get_schema(&s, &self->schema, err);
    s.release(&s);
  }
  return st;
}

static PyObject *open_reader(PyObject *source, bool file) {
  ReaderObject *self = PyObject_New(ReaderObject, &ReaderType);
  if (!self) return NULL;
  self->src = NULL;
  self->file = file;
  self->num_batches = -1;
  memset(&self->schema, 0, sizeof self->schema);
  if (with_source(source, open_reader_call, self) < 0) {
    Py_DECREF(self);
    return NULL;
  }
  return (PyObject *)self;
}

static PyObject *py_read_stream(PyObject *m, PyObject *args, PyObject *kwargs) {
  (void)m;
  static char *kw[] = {"source", NULL};
  PyObject *source;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O", kw, &source)) return NULL;
  return open_reader(source, false);
}

static PyObject *py_read_file(PyObject *m, PyObject *args, PyObject *kwargs) {
  (void)m;
  static char *kw[] = {"source", NULL};
  PyObject *source;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O", kw, &source)) return NULL;
  return open_reader(source, true);
}

static PyObject *Reader_c_schema(ReaderObject *self, PyObject *unused) {
  (void)unused;
  struct ArrowSchema *s = calloc(1, sizeof *s);
  if (!s) return PyErr_NoMemory();
  QvError err;
  qv_error_clear(&err);
  QvStatus st = qv_arrow_schema_copy(&self->schema, s, &err);
  if (st) {
    free(s);
    return raise_qv(st, &err);
  }
  PyObject *cap = PyCapsule_New(s, "arrow_schema", schema_capsule_free);
  if (!cap) {
    s->release(s);
    free(s);
  }
  return cap;
}

static PyObject *Reader_c_stream(ReaderObject *self, PyObject *args, PyObject *kwargs) {
  static char *kw[] = {"requested_schema", NULL};
  PyObject *req = Py_None;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|O", kw, &req)) return NULL;
  /* requested_schema is a hint (the interface lets a producer ignore it):
   * quiver hands out the types the file holds. */
  struct ArrowArrayStream *s = calloc(1, sizeof *s);
  if (!s) return PyErr_NoMemory();
  QvError err;
  qv_error_clear(&err);
  QvStatus st;
  Py_BEGIN_ALLOW_THREADS
  st = open_batches(self->src, s, &err);
  Py_END_ALLOW_THREADS
  if (st) {
    free(s);
    return raise_qv(st, &err);
  }
  PyObject *cap = PyCapsule_New(s, "arrow_array_stream", stream_capsule_free);
  if (!cap) {
    s->release(s);
    free(s);
  }
  return cap;
}

static PyObject *Reader_get_num_batches(ReaderObject *self, void *c) {
  (void)c;
  if (self->num_batches < 0) Py_RETURN_NONE;
  return PyLong_FromLongLong(self->num_batches);
}

static PyObject *Reader_get_columns(ReaderObject *self, void *c) {
  (void)c;
  PyObject *l = PyList_New(0);
  for (int64_t i = 0; l && i < self->schema.n_children; i++) {
    const struct ArrowSchema *ch = self->schema.children[i];
    PyObject *t = Py_BuildValue("(Ns)", PyUnicode_DecodeUTF8(ch->name ? ch->name : "", (Py_ssize_t)strlen(ch->name ? ch->name : ""), "surrogateescape"), ch->format);
    if (!t || PyList_Append(l, t) < 0) Py_CLEAR(l);
    Py_XDECREF(t);
  }
  return l;
}

static PyMethodDef Reader_methods[] = {
    {"__arrow_c_schema__", (PyCFunction)Reader_c_schema, METH_NOARGS,
     "__arrow_c_schema__()\n--\n\nA PyCapsule 'arrow_schema' holding a copy of the schema."},
    {"__arrow_c_stream__", (PyCFunction)(void (*)(void))Reader_c_stream, METH_VARARGS | METH_KEYWORDS,
     "__arrow_c_stream__(requested_schema=None)\n--\n\nA PyCapsule 'arrow_array_stream' reading the "
     "batches from the start (zero-copy views of the mapping or buffer, fully validated). Each call "
     "starts a new stream."},
    {NULL, NULL, 0, NULL}};

static PyGetSetDef Reader_getset[] = {
    {"num_batches", (getter)Reader_get_num_batches, NULL, "Batches in an Arrow file (None for a stream).", NULL},
    {"columns", (getter)Reader_get_columns, NULL, "[(name, Arrow format string)] of the top-level columns.", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

static PyTypeObject ReaderType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "quiver.RecordBatchReader",
    .tp_basicsize = sizeof(ReaderObject),
    .tp_dealloc = (destructor)Reader_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Record batches of an Arrow IPC stream or file, exported through the Arrow PyCapsule "
              "interface (__arrow_c_schema__, __arrow_c_stream__).",
    .tp_methods = Reader_methods,
    .tp_getset = Reader_getset,
};

static int parse_write_options(int file, PyObject *compression, QvRbWriteOptions *o) {
  memset(o, 0, sizeof *o);
  o->struct_size = sizeof *o;
  o->format = file ? QV_IPC_FORMAT_FILE : QV_IPC_FORMAT_STREAM;
  if (compression == Py_None) return 0;
  const char *c = PyUnicode_Check(compression) ? PyUnicode_AsUTF8(compression) : NULL;
  if (c && (strcmp(c, "lz4") == 0 || strcmp(c, "lz4_frame") == 0)) o->compression = QV_COMPRESSION_LZ4_FRAME;
  else if (c && strcmp(c, "zstd") == 0) o->compression = QV_COMPRESSION_ZSTD;
  else {
    PyErr_Format(PyExc_ValueError, "compression must be None, 'lz4' or 'zstd', not %R", compression);
    return -1;
  }
  return 0;
}

/* A stream, or one schema and one batch. */
typedef struct BatchesWrite {
  const QvRbWriteOptions *o;
  struct ArrowArrayStream *stream;
  const struct ArrowSchema *schema;
  struct ArrowArray *array;
} BatchesWrite;

static QvStatus write_batches_call(QvSink *sink, void *ctx, QvError *err) {
  BatchesWrite *b = ctx;
  if (b->stream->release) return qv_rb_write_all(b->stream, sink, b->o, err);
  QvRbWriter *w = NULL;
  QvStatus st = qv_rb_writer_new(&w, b->schema, sink, b->o, err);
  if (st == QV_OK) st = qv_rb_writer_write(w, b->array, err);
  if (st == QV_OK) st = qv_rb_writer_finish(w, err);
  qv_rb_writer_free(w);
  return st;
}

static PyObject *py_write_batches(PyObject *m, PyObject *args, PyObject *kwargs) {
  (void)m;
  static char *kw[] = {"dest", "stream", "schema", "array", "file", "compression", NULL};
  PyObject *dest, *stream_cap = Py_None, *schema_cap = Py_None, *array_cap = Py_None,
                  *compression = Py_None;
  int file = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|OOOpO", kw, &dest, &stream_cap, &schema_cap,
                                   &array_cap, &file, &compression))
    return NULL;
  QvRbWriteOptions o;
  if (parse_write_options(file, compression, &o) < 0) return NULL;
  /* move the producer's structs out of the capsules (the consumer's job) */
  struct ArrowArrayStream stream;
  struct ArrowSchema schema;
  struct ArrowArray array;
  memset(&stream, 0, sizeof stream);
  memset(&schema, 0, sizeof schema);
  memset(&array, 0, sizeof array);
  if (stream_cap != Py_None) {
    struct ArrowArrayStream *p = PyCapsule_GetPointer(stream_cap, "arrow_array_stream");
    if (!p) return NULL;
    if (!p->release) {
      PyErr_SetString(PyExc_ValueError, "the stream capsule was already consumed");
      return NULL;
    }
    stream = *p;
    p->release = NULL;
  } else {
    struct ArrowSchema *ps = PyCapsule_GetPointer(schema_cap, "arrow_schema");
    struct ArrowArray *pa = ps ? PyCapsule_GetPointer(array_cap, "arrow_array") : NULL;
    if (!pa) return NULL;
    if (!ps->release || !pa->release) {
      PyErr_SetString(PyExc_ValueError, "the capsules were already consumed");
      return NULL;
    }
    schema = *ps;
    ps->release = NULL;
    array = *pa;
    pa->release = NULL;
  }
  BatchesWrite w = {&o, &stream, &schema, &array};
  PyObject *result = with_sink(dest, write_batches_call, &w);
  if (stream.release) stream.release(&stream);
  if (schema.release) schema.release(&schema);
  if (array.release) array.release(&array);
  return result;
}

/* ---- module */

static PyMethodDef module_methods[] = {
    {"read_tensor", (PyCFunction)(void (*)(void))py_read_tensor, METH_VARARGS | METH_KEYWORDS,
     "read_tensor(source, index=0)\n--\n\n"
     "Message `index` of `source` (a path, or bytes/memoryview/any buffer) as a read-only ndarray "
     "viewing the file mapping or the buffer, without a copy. Strides and column-major layouts are "
     "kept; the array's base (a quiver.Tensor, which also exports DLPack) keeps the memory alive."},
    {"read_tensor_object", (PyCFunction)(void (*)(void))py_read_tensor_object, METH_VARARGS | METH_KEYWORDS,
     "read_tensor_object(source, index=0)\n--\n\nThe quiver.Tensor itself (shape, strides, "
     "dim_names, to_numpy(), __dlpack__)."},
    {"read_tensor_info", (PyCFunction)(void (*)(void))py_read_tensor_info, METH_VARARGS | METH_KEYWORDS,
     "read_tensor_info(source, index=0)\n--\n\nA dict describing the tensor (type, dtype, shape, "
     "strides in bytes, dim_names, layout, nbytes) without touching its data."},
    {"write_tensor", (PyCFunction)(void (*)(void))py_write_tensor, METH_VARARGS | METH_KEYWORDS,
     "write_tensor(dest, array, dim_names=None)\n--\n\n"
     "Writes an ndarray (one of the 11 Arrow tensor value types, any layout) as one Tensor message to "
     "`dest`: a path (written to a temporary file renamed over it) or a writable file object. Row- "
     "and column-major arrays are written as they are; other layouts as a row-major copy."},
    {"_read_sparse", (PyCFunction)(void (*)(void))py_read_sparse, METH_VARARGS | METH_KEYWORDS,
     "_read_sparse(source, index=0)\n--\n\nThe sparse tensor at `index` as a quiver._Sparse."},
    {"_read_any", (PyCFunction)(void (*)(void))py_read_any, METH_VARARGS | METH_KEYWORDS,
     "_read_any(source, index=0)\n--\n\nThe Tensor or _Sparse at `index`."},
    {"_sparse_from_dense", (PyCFunction)(void (*)(void))py_sparse_from_dense, METH_VARARGS | METH_KEYWORDS,
     "_sparse_from_dense(array, format, index_type=None, axis_order=None)\n--\n\nDense -> sparse in C."},
    {"_sparse_from_buffers", (PyCFunction)(void (*)(void))py_sparse_from_buffers, METH_VARARGS | METH_KEYWORDS,
     "_sparse_from_buffers(format, shape, data, indptr=None, indices=None, coords=None, "
     "is_canonical=False, dim_names=None)\n--\n\nA validated _Sparse viewing the given arrays."},
    {"_write_sparse", (PyCFunction)(void (*)(void))py_write_sparse_object, METH_VARARGS | METH_KEYWORDS,
     "_write_sparse(dest, tensor, csf_lengths_in_bytes=False)\n--\n\nWrites a _Sparse."},
    {"messages_iter", (PyCFunction)(void (*)(void))py_messages, METH_VARARGS | METH_KEYWORDS,
     "messages_iter(source)\n--\n\nAn iterator of the messages of a stream or file, as dicts."},
    {"read_stream", (PyCFunction)(void (*)(void))py_read_stream, METH_VARARGS | METH_KEYWORDS,
     "read_stream(source)\n--\n\nA RecordBatchReader over an Arrow IPC stream (or file, read in "
     "order) implementing the Arrow PyCapsule interface."},
    {"read_file", (PyCFunction)(void (*)(void))py_read_file, METH_VARARGS | METH_KEYWORDS,
     "read_file(source)\n--\n\nA RecordBatchReader over an Arrow IPC file (through its footer)."},
    {"_write_batches", (PyCFunction)(void (*)(void))py_write_batches, METH_VARARGS | METH_KEYWORDS,
     "_write_batches(dest, stream=None, schema=None, array=None, file=False, compression=None)\n--\n\n"
     "Writes a stream capsule, or a schema and array capsule, as an Arrow stream or file."},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module_def = {PyModuleDef_HEAD_INIT, "_quiver",
                                        "quiver's C extension (see the quiver package).", -1,
                                        module_methods, NULL, NULL, NULL, NULL};

static PyObject *new_error(PyObject *m, const char *name, PyObject *base, const char *doc) {
  char full[64];
  snprintf(full, sizeof full, "quiver.%s", name);
  PyObject *bases = base ? PyTuple_Pack(2, Error, base) : PyTuple_Pack(1, PyExc_Exception);
  if (!bases) return NULL;
  PyObject *e = PyErr_NewExceptionWithDoc(full, doc, bases, NULL);
  Py_DECREF(bases);
  if (!e) return NULL;
  Py_INCREF(e);
  if (PyModule_AddObject(m, name, e) < 0) {
    Py_DECREF(e);
    Py_DECREF(e);
    return NULL;
  }
  return e;
}

PyMODINIT_FUNC PyInit__quiver(void) {
  import_array();
  if (PyType_Ready(&TensorType) < 0 || PyType_Ready(&SparseType) < 0 || PyType_Ready(&ReaderType) < 0 ||
      PyType_Ready(&MessageIterType) < 0)
    return NULL;
  PyObject *m = PyModule_Create(&module_def);
  if (!m) return NULL;
  if (!(Error = new_error(m, "Error", NULL, "Base of every quiver exception.")) ||
      !(ArrowInvalid = new_error(m, "ArrowInvalid", PyExc_ValueError, "Malformed or truncated input, or an invalid argument.")) ||
      !(ArrowNotSupported = new_error(m, "ArrowNotSupported", PyExc_ValueError, "Well-formed input quiver does not support.")) ||
      !(ArrowCapacityError = new_error(m, "ArrowCapacityError", PyExc_ValueError, "A size limit was exceeded.")) ||
      !(ArrowIOError = new_error(m, "ArrowIOError", PyExc_OSError, "Reading or writing failed.")) ||
      !(ArrowMemoryError = new_error(m, "ArrowMemoryError", PyExc_MemoryError, "Out of memory."))) {
    Py_DECREF(m);
    return NULL;
  }
  Py_INCREF(&TensorType);
  Py_INCREF(&SparseType);
  Py_INCREF(&ReaderType);
  if (PyModule_AddObject(m, "Tensor", (PyObject *)&TensorType) < 0 ||
      PyModule_AddObject(m, "_Sparse", (PyObject *)&SparseType) < 0 ||
      PyModule_AddObject(m, "RecordBatchReader", (PyObject *)&ReaderType) < 0) {
    Py_DECREF(m);
    return NULL;
  }
  return m;
}
