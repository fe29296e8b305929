/* quiver.Tensor (a dense tensor read by quiver, the base of its ndarrays,
 * a DLPack producer) and the dense tensor functions. */
#include "qvpy.h"

#include <dlpack/dlpack.h>
#include <string.h>

#include "quiver/tensor_dlpack.h"
#include "quiver/tensor_ipc.h"

/* An ndarray quiver can describe as a QvTensor: native value type, no
 * negative strides (copied to C order otherwise). New reference. */
PyArrayObject *qvpy_usable_array(QvPyState *qs, PyObject *obj) {
  PyArrayObject *a = (PyArrayObject *)PyArray_FromAny(obj, NULL, 0, 0, 0, NULL);
  if (!a) return NULL;
  if (PyArray_ISBYTESWAPPED(a) && !PyDataType_HASFIELDS(PyArray_DESCR(a))) {
    /* Arrow tensors are in the writer's byte order: swap a copy to native */
    PyArray_Descr *native = PyArray_DescrNewByteorder(PyArray_DESCR(a), NPY_NATIVE);
    PyArrayObject *c = native ? (PyArrayObject *)PyArray_CastToType(a, native, 0) : NULL;
    Py_DECREF(a);
    if (!c) return NULL;
    a = c;
  }
  QvArrowType vt;
  if (qvpy_value_type_of_array(qs, a, &vt) < 0) return Py_DECREF(a), NULL;
  if (PyArray_NDIM(a) > QV_TENSOR_MAX_NDIM) {
    Py_DECREF(a);
    PyErr_SetString(qs->NotSupportedError, "more dimensions than quiver supports");
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

int qvpy_tensor_from_array(QvPyState *qs, PyArrayObject *a, const char *const *names, QvTensor *out) {
  QvArrowType vt;
  if (qvpy_value_type_of_array(qs, a, &vt) < 0) return -1;
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
  if (st) return qvpy_raise(qs, st, &err), -1;
  return 0;
}
/* ---- Tensor: a dense tensor read by quiver, the base of its ndarrays */

static void Tensor_dealloc(QvPyTensor *self) {
  qv_tensor_reset(&self->t);
  qvpy_free_instance((PyObject *)self);
}

QvPyTensor *qvpy_tensor_new(QvPyState *qs) {
  QvPyTensor *self = PyObject_New(QvPyTensor, qs->TensorType);
  if (self) memset(&self->t, 0, sizeof self->t);
  return self;
}

int qvpy_tensor_share(QvPyState *qs, PyObject *obj, QvTensor *t) {
  const QvTensor *s = &((QvPyTensor *)obj)->t;
  QvError e;
  QvStatus st = qv_tensor_init(t, &(QvTensorDesc){.type = s->type, .ndim = s->ndim,
                                                  .shape = s->shape, .strides = s->strides,
                                                  .dim_names = s->dim_names, .data = s->data,
                                                  .data_size = s->data_size, .owner = s->owner},
                               &e);
  if (st) return qvpy_raise(qs, st, &e), -1;
  return 0;
}


PyObject *qvpy_tensor_to_numpy(QvPyTensor *self, PyObject *unused) {
  (void)unused;
  QvPyState *qs = qvpy_state_of((PyObject *)self);
  const QvTensor *t = &self->t;
  if (t->ndim > NPY_MAXDIMS) {
    PyErr_Format(qs->NotSupportedError, "a tensor of %d dimensions has more than NumPy's %d",
                 (int)t->ndim, NPY_MAXDIMS);
    return NULL;
  }
  npy_intp dims[NPY_MAXDIMS], strides[NPY_MAXDIMS];
  for (int i = 0; i < t->ndim; i++) {
    dims[i] = (npy_intp)t->shape[i];
    strides[i] = (npy_intp)t->strides[i];
  }
  PyArray_Descr *d = PyArray_DescrFromType(qvpy_npy_type_of(t->type));
  if (!d) return NULL;
  void *data = t->data ? (void *)t->data : qvpy_zero_size_data;
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

static PyObject *Tensor_info(QvPyTensor *self, PyObject *unused) {
  (void)unused;
  const QvTensor *t = &self->t;
  PyObject *shape = qvpy_int64_tuple(t->shape, t->ndim), *strides = qvpy_int64_tuple(t->strides, t->ndim);
  PyObject *names = qvpy_names_tuple(t->dim_names, t->ndim);
  PyObject *dtype = (PyObject *)PyArray_DescrFromType(qvpy_npy_type_of(t->type));
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

/* ---- the array protocols: __array__, the buffer protocol */

static PyObject *Tensor_array(QvPyTensor *self, PyObject *args, PyObject *kwargs) {
  static char *kw[] = {"dtype", "copy", NULL};
  PyObject *dtype = Py_None, *copy = Py_None;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|O$O", kw, &dtype, &copy)) return NULL;
  PyObject *a = qvpy_tensor_to_numpy(self, NULL);
  if (!a) return NULL;
  if (dtype != Py_None || copy == Py_True) {
    PyArray_Descr *d = NULL;
    if (dtype != Py_None && !PyArray_DescrConverter(dtype, &d)) {
      Py_DECREF(a);
      return NULL;
    }
    if (!d) d = PyArray_DESCR((PyArrayObject *)a), Py_INCREF(d);
    PyObject *c = PyArray_CastToType((PyArrayObject *)a, d, 0); /* steals d; a new array */
    Py_DECREF(a);
    return c;
  }
  return a; /* read-only: the memory may be a read-only file mapping */
}

static int Tensor_getbuffer(QvPyTensor *self, Py_buffer *view, int flags) {
  const QvTensor *t = &self->t;
  if (flags & PyBUF_WRITABLE) {
    PyErr_SetString(PyExc_BufferError, "a quiver.Tensor is read-only (often a file mapping)");
    view->obj = NULL;
    return -1;
  }
  static const char *formats[] = {
      [QV_ARROW_INT8] = "b",  [QV_ARROW_INT16] = "h",  [QV_ARROW_INT32] = "i",
      [QV_ARROW_INT64] = "q", [QV_ARROW_UINT8] = "B",  [QV_ARROW_UINT16] = "H",
      [QV_ARROW_UINT32] = "I", [QV_ARROW_UINT64] = "Q", [QV_ARROW_FLOAT16] = "e",
      [QV_ARROW_FLOAT32] = "f", [QV_ARROW_FLOAT64] = "d"};
  bool c = qv_tensor_is_row_major(t), f = qv_tensor_is_column_major(t);
  if ((flags & PyBUF_C_CONTIGUOUS) == PyBUF_C_CONTIGUOUS && !c) {
    PyErr_SetString(PyExc_BufferError, "the tensor is not C-contiguous");
    view->obj = NULL;
    return -1;
  }
  if ((flags & PyBUF_F_CONTIGUOUS) == PyBUF_F_CONTIGUOUS && !f) {
    PyErr_SetString(PyExc_BufferError, "the tensor is not Fortran-contiguous");
    view->obj = NULL;
    return -1;
  }
  if ((flags & PyBUF_ANY_CONTIGUOUS) == PyBUF_ANY_CONTIGUOUS && !c && !f) {
    PyErr_SetString(PyExc_BufferError, "the tensor is not contiguous");
    view->obj = NULL;
    return -1;
  }
  if (!(flags & PyBUF_STRIDES) && !c) {
    PyErr_SetString(PyExc_BufferError, "the tensor is strided: ask for strides (PyBUF_STRIDES)");
    view->obj = NULL;
    return -1;
  }
  int64_t es = (int64_t)qv_arrow_type_size(t->type);
  view->buf = t->data ? (void *)t->data : qvpy_zero_size_data;
  view->obj = (PyObject *)self;
  Py_INCREF(self);
  view->len = (Py_ssize_t)(qv_tensor_n_elements(t) * es);
  view->readonly = 1;
  view->itemsize = (Py_ssize_t)es;
  view->format = (flags & PyBUF_FORMAT) ? (char *)formats[t->type] : NULL;
  view->ndim = t->ndim;
  /* Py_ssize_t is int64_t on every platform quiver builds its module for */
  view->shape = (flags & PyBUF_ND) ? (Py_ssize_t *)(void *)t->shape : NULL;
  view->strides = (flags & PyBUF_STRIDES) ? (Py_ssize_t *)(void *)t->strides : NULL;
  view->suboffsets = NULL;
  view->internal = NULL;
  return 0;
}

static Py_ssize_t Tensor_len(QvPyTensor *self) {
  if (self->t.ndim == 0) {
    PyErr_SetString(PyExc_TypeError, "len() of a 0-d tensor");
    return -1;
  }
  return (Py_ssize_t)self->t.shape[0];
}

static PyObject *Tensor_repr(QvPyTensor *self) {
  const QvTensor *t = &self->t;
  char shape[512];
  size_t n = 0;
  shape[0] = '\0';
  for (int32_t i = 0; i < t->ndim && n < sizeof shape; i++)
    n += (size_t)snprintf(shape + n, sizeof shape - n, "%s%lld", i ? ", " : "", (long long)t->shape[i]);
  if (t->ndim == 1 && n < sizeof shape) snprintf(shape + n, sizeof shape - n, ",");
  PyObject *names = NULL;
  if (t->dim_names) {
    PyObject *tuple = qvpy_names_tuple(t->dim_names, t->ndim);
    if (!tuple) return NULL;
    names = PyObject_Repr(tuple);
    Py_DECREF(tuple);
    if (!names) return NULL;
  }
  PyObject *r = names ? PyUnicode_FromFormat("quiver.Tensor(%s, shape=(%s), %s, dim_names=%U)",
                                             qv_arrow_type_name(t->type), shape, layout_name(t), names)
                      : PyUnicode_FromFormat("quiver.Tensor(%s, shape=(%s), %s)",
                                             qv_arrow_type_name(t->type), shape, layout_name(t));
  Py_XDECREF(names);
  return r;
}

static PyObject *Tensor_dlpack_device(QvPyTensor *self, PyObject *unused) {
  (void)self;
  (void)unused;
  return Py_BuildValue("(ii)", (int)kDLCPU, 0);
}

static PyObject *Tensor_get_shape(QvPyTensor *self, void *c) {
  (void)c;
  return qvpy_int64_tuple(self->t.shape, self->t.ndim);
}
static PyObject *Tensor_get_strides(QvPyTensor *self, void *c) {
  (void)c;
  return qvpy_int64_tuple(self->t.strides, self->t.ndim);
}
static PyObject *Tensor_get_dim_names(QvPyTensor *self, void *c) {
  (void)c;
  return qvpy_names_tuple(self->t.dim_names, self->t.ndim);
}
static PyObject *Tensor_get_type(QvPyTensor *self, void *c) {
  (void)c;
  return PyUnicode_FromString(qv_arrow_type_name(self->t.type));
}

static PyMethodDef Tensor_methods[] = {
    {"to_numpy", (PyCFunction)qvpy_tensor_to_numpy, METH_NOARGS,
     "to_numpy()\n--\n\nA read-only ndarray viewing the tensor's memory (no copy); its base is this object."},
    {"info", (PyCFunction)Tensor_info, METH_NOARGS,
     "info()\n--\n\nA dict: type, dtype, shape, strides (bytes), dim_names, layout, nbytes."},
    {"__dlpack__", (PyCFunction)(void (*)(void))qvpy_tensor_dlpack, METH_VARARGS | METH_KEYWORDS,
     "__dlpack__(stream=None, *, max_version=None, dl_device=None, copy=None)\n--\n\n"
     "A DLPack capsule viewing the tensor (no copy), as the array API standard specifies: a "
     "'dltensor_versioned' capsule (DLPack 1.x, flagged read-only: the memory is often a file "
     "mapping) when max_version >= (1, 0), the DLPack 0.6 'dltensor' one otherwise (consumers must "
     "not write to it). copy=True exports a writable copy; a dl_device other than (kDLCPU, 0) "
     "is a BufferError."},
    {"__array__", (PyCFunction)(void (*)(void))Tensor_array, METH_VARARGS | METH_KEYWORDS,
     "__array__(dtype=None, *, copy=None)\n--\n\nA read-only ndarray viewing the tensor (a cast "
     "copy with dtype= or copy=True)."},
    {"__dlpack_device__", (PyCFunction)Tensor_dlpack_device, METH_NOARGS,
     "__dlpack_device__()\n--\n\n(kDLCPU, 0)."},
    {NULL, NULL, 0, NULL}};

static PyObject *Tensor_get_dtype(QvPyTensor *self, void *c) {
  (void)c;
  return (PyObject *)PyArray_DescrFromType(qvpy_npy_type_of(self->t.type));
}

static PyObject *Tensor_get_ndim(QvPyTensor *self, void *c) {
  (void)c;
  return PyLong_FromLong(self->t.ndim);
}

static PyObject *Tensor_get_nbytes(QvPyTensor *self, void *c) {
  (void)c;
  return PyLong_FromLongLong(qv_tensor_n_elements(&self->t) * (int64_t)qv_arrow_type_size(self->t.type));
}

static PyGetSetDef Tensor_getset[] = {
    {"shape", (getter)Tensor_get_shape, NULL, "Shape (tuple of int).", NULL},
    {"strides", (getter)Tensor_get_strides, NULL, "Strides in bytes (tuple of int).", NULL},
    {"dim_names", (getter)Tensor_get_dim_names, NULL, "Dimension names, or None.", NULL},
    {"type", (getter)Tensor_get_type, NULL, "Value type name ('int8' ... 'float64').", NULL},
    {"dtype", (getter)Tensor_get_dtype, NULL, "The NumPy dtype of the values.", NULL},
    {"ndim", (getter)Tensor_get_ndim, NULL, "Number of dimensions.", NULL},
    {"nbytes", (getter)Tensor_get_nbytes, NULL, "Bytes of the values (elements x item size).", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

/* Python's slots are void pointers, functions included (ISO C leaves the
 * conversion to the platform; every platform CPython runs on allows it). */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpedantic"
static PyType_Slot Tensor_slots[] = {
    {Py_tp_dealloc, (void *)Tensor_dealloc},
    {Py_tp_doc, (void *)"A dense Arrow tensor read by quiver: the owner of the memory its ndarrays view "
                        "(a file mapping or the caller's buffer). Supports DLPack."},
    {Py_tp_methods, Tensor_methods},
    {Py_tp_getset, Tensor_getset},
    {Py_tp_repr, (void *)Tensor_repr},
    {Py_sq_length, (void *)Tensor_len},
    {Py_mp_length, (void *)Tensor_len},
    {Py_bf_getbuffer, (void *)Tensor_getbuffer},
    {0, NULL}};
#pragma GCC diagnostic pop

static PyType_Spec Tensor_spec = {"quiver.Tensor", sizeof(QvPyTensor), 0,
                                  Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE |
                                      Py_TPFLAGS_DISALLOW_INSTANTIATION,
                                  Tensor_slots};

int qvpy_tensor_exec(PyObject *module, QvPyState *qs) {
  qs->TensorType = qvpy_add_type(module, &Tensor_spec, true);
  return qs->TensorType ? 0 : -1;
}
/* ---- module functions: tensors */


static QvStatus read_tensor_call(QvSource *src, void *ctx, QvError *err) {
  QvPyIndexRead *r = ctx;
  return qv_tensor_read(src, r->index, NULL, r->out, err);
}

/* The arguments (source, index=0) of the readers of one message. */
int qvpy_parse_source_index(PyObject *args, PyObject *kwargs, PyObject **source, long long *index) {
  static char *kw[] = {"source", "index", NULL};
  *index = 0;
  return PyArg_ParseTupleAndKeywords(args, kwargs, "O|L", kw, source, index) ? 0 : -1;
}

/* obj (new, NULL when its allocation failed) with `out`, its tensor, read
 * from message `index` of `source` by `call`; on failure NULL, obj
 * released. */
PyObject *qvpy_read_object(QvPyState *qs, PyObject *obj, void *out, PyObject *source, long long index,
                           QvPySourceCall call) {
  if (!obj) return NULL;
  QvPyIndexRead r = {out, index};
  if (qvpy_with_source(qs, source, call, &r) < 0) {
    Py_DECREF(obj);
    return NULL;
  }
  return obj;
}

static PyObject *py_read_tensor_object(PyObject *m, PyObject *args, PyObject *kwargs) {
  QvPyState *qs = qvpy_state(m);
  PyObject *source;
  long long index;
  if (qvpy_parse_source_index(args, kwargs, &source, &index) < 0) return NULL;
  QvPyTensor *t = qvpy_tensor_new(qs);
  return qvpy_read_object(qs, (PyObject *)t, t ? &t->t : NULL, source, index, read_tensor_call);
}

static PyObject *py_read_tensor(PyObject *m, PyObject *args, PyObject *kwargs) {
  PyObject *t = py_read_tensor_object(m, args, kwargs);
  if (!t) return NULL;
  PyObject *a = qvpy_tensor_to_numpy((QvPyTensor *)t, NULL);
  Py_DECREF(t);
  return a;
}

static PyObject *py_read_tensor_info(PyObject *m, PyObject *args, PyObject *kwargs) {
  PyObject *t = py_read_tensor_object(m, args, kwargs);
  if (!t) return NULL;
  PyObject *i = Tensor_info((QvPyTensor *)t, NULL);
  Py_DECREF(t);
  return i;
}

static QvStatus write_tensor_call(QvSink *sink, void *ctx, QvError *err) {
  return qv_tensor_write(ctx, sink, NULL, err);
}

static PyObject *py_write_tensor(PyObject *m, PyObject *args, PyObject *kwargs) {
  QvPyState *qs = qvpy_state(m);
  static char *kw[] = {"dest", "array", "dim_names", "fsync", NULL};
  PyObject *dest, *obj, *names_obj = Py_None;
  int fsync = 1;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OO|O$p", kw, &dest, &obj, &names_obj, &fsync))
    return NULL;
  QvTensor t;
  memset(&t, 0, sizeof t);
  PyArrayObject *a = NULL;
  PyObject *keep = NULL;
  if (PyObject_TypeCheck(obj, qs->TensorType) && names_obj == Py_None) {
    if (qvpy_tensor_share(qs, obj, &t) < 0) return NULL;
  } else {
    a = qvpy_usable_array(qs, obj);
    if (!a) return NULL;
    const char *names[QV_TENSOR_MAX_NDIM];
    if (qvpy_parse_names(names_obj, PyArray_NDIM(a), names, &keep) < 0 ||
        qvpy_tensor_from_array(qs, a, keep ? names : NULL, &t) < 0) {
      Py_DECREF(a);
      Py_XDECREF(keep);
      return NULL;
    }
  }
  PyObject *result = qvpy_with_sink(qs, dest, fsync, write_tensor_call, &t);
  qv_tensor_reset(&t);
  Py_XDECREF(a);
  Py_XDECREF(keep);
  return result;
}

PyMethodDef qvpy_tensor_methods[] = {
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
    {NULL, NULL, 0, NULL}};
