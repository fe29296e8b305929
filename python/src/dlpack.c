/* quiver._quiver: DLPack both ways, as the Python array API standard
 * specifies the protocol (quiver/tensor_dlpack.h underneath).
 *
 *   Tensor.__dlpack__(stream=None, max_version=None, dl_device=None, copy=None)
 *       a "dltensor_versioned" capsule (DLPack 1.x, READ_ONLY set: quiver's
 *       memory is often a read-only mapping) when max_version asks for 1.x,
 *       the 0.6 "dltensor" capsule otherwise; copy=True exports a copy
 *       (writable, IS_COPIED); a dl_device other than (kDLCPU, 0) is a
 *       BufferError.
 *   _from_dlpack(capsule) -> Tensor: both capsule kinds, zero-copy; the
 *       capsule is renamed "used_..." as the protocol asks.
 *   _as_dlpack(ndarray) -> Tensor viewing the array's memory (it keeps the
 *       array alive): the one-call path from an ndarray quiver handed out
 *       (read-only, which NumPy 1.x refuses to export) to any consumer.
 *
 * Deleters of imported tensors run with the GIL: some producers' deleters
 * (NumPy 1.24's) drop Python references without taking it. */
#include "qvpy.h"

#include <stdlib.h>
#include <string.h>

#include <dlpack/dlpack.h>

#include "quiver/buffer.h"
#include "quiver/tensor_dlpack.h"

/* ---- export */

static void capsule_destructor(PyObject *cap) {
  /* a consumer renames the capsule "used_dltensor" and owns the tensor */
  if (PyCapsule_IsValid(cap, "dltensor")) {
    DLManagedTensor *m = PyCapsule_GetPointer(cap, "dltensor");
    if (m && m->deleter) m->deleter(m);
  } else if (PyCapsule_IsValid(cap, "dltensor_versioned")) {
    QvDLManagedTensorVersioned *m = PyCapsule_GetPointer(cap, "dltensor_versioned");
    if (m && m->deleter) m->deleter(m);
  }
}

/* (major, minor) or None; -1 with TypeError for anything else. */
static int parse_version(PyObject *obj, long *major) {
  *major = 0;
  if (obj == Py_None) return 0;
  if (!PyTuple_Check(obj) || PyTuple_GET_SIZE(obj) != 2 || !PyLong_Check(PyTuple_GET_ITEM(obj, 0)) ||
      !PyLong_Check(PyTuple_GET_ITEM(obj, 1))) {
    PyErr_SetString(PyExc_TypeError, "max_version must be None or a (major, minor) tuple of int");
    return -1;
  }
  *major = PyLong_AsLong(PyTuple_GET_ITEM(obj, 0));
  return *major == -1 && PyErr_Occurred() ? -1 : 0;
}

PyObject *qvpy_tensor_dlpack(PyObject *self_obj, PyObject *args, PyObject *kwargs) {
  QvPyTensor *self = (QvPyTensor *)self_obj;
  static char *kw[] = {"stream", "max_version", "dl_device", "copy", NULL};
  PyObject *stream = Py_None, *maxv = Py_None, *dev = Py_None, *copy = Py_None;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|O$OOO", kw, &stream, &maxv, &dev, &copy))
    return NULL;
  if (stream != Py_None) {
    PyErr_SetString(PyExc_BufferError, "stream must be None for a CPU tensor");
    return NULL;
  }
  long major;
  if (parse_version(maxv, &major) < 0) return NULL;
  if (dev != Py_None) {
    int type = -1, id = -1;
    if (!PyTuple_Check(dev) || !PyArg_ParseTuple(dev, "ii", &type, &id)) {
      PyErr_Clear();
      PyErr_SetString(PyExc_TypeError, "dl_device must be None or a (device_type, device_id) tuple");
      return NULL;
    }
    if (type != kDLCPU || id != 0) {
      PyErr_Format(PyExc_BufferError,
                   "quiver tensors live on the CPU (kDLCPU, 0): cannot export to device (%d, %d)",
                   type, id);
      return NULL;
    }
  }
  if (copy != Py_None && !PyBool_Check(copy)) {
    PyErr_SetString(PyExc_TypeError, "copy must be None, True or False");
    return NULL;
  }
  const QvTensor *src = &self->t;
  QvTensor copied;
  memset(&copied, 0, sizeof copied);
  QvError err;
  qv_error_clear(&err);
  QvStatus st = QV_OK;
  bool is_copy = copy == Py_True;
  if (is_copy) {
    QVPY_BEGIN_CALL
    st = qv_tensor_copy(src, false, &copied, &err);
    QVPY_END_CALL
    if (st) return qvpy_raise(qvpy_state_of(self_obj), st, &err);
    src = &copied;
  }
  /* the export holds a reference to the tensor's owner (the file mapping or
   * the caller's buffer, whose release takes the GIL itself), so the
   * deleter may run on any thread */
  PyObject *cap = NULL;
  if (major >= 1) {
    QvDLManagedTensorVersioned *m;
    st = qv_tensor_to_dlpack_versioned(src, &m, &err);
    if (st == QV_OK) {
      if (m->dl_tensor.data == NULL) m->dl_tensor.data = qvpy_zero_size_data;
      if (is_copy) m->flags = QV_DLPACK_FLAG_IS_COPIED; /* the copy is the consumer's to write */
      cap = PyCapsule_New(m, "dltensor_versioned", capsule_destructor);
      if (!cap) m->deleter(m);
    }
  } else {
    DLManagedTensor *m;
    st = qv_tensor_to_dlpack(src, &m, &err);
    if (st == QV_OK) {
      if (m->dl_tensor.data == NULL) m->dl_tensor.data = qvpy_zero_size_data;
      cap = PyCapsule_New(m, "dltensor", capsule_destructor);
      if (!cap) m->deleter(m);
    }
  }
  qv_tensor_reset(&copied);
  if (st) {
    /* e.g. byte strides that are not whole elements */
    PyErr_SetString(PyExc_BufferError, err.message);
    return NULL;
  }
  return cap;
}

/* ---- import */

/* A stand-in the library owns: its deleter calls the producer's with the
 * GIL held. */
typedef struct Wrapped {
  DLManagedTensor self; /* or the versioned struct below */
  QvDLManagedTensorVersioned vself;
  DLManagedTensor *orig;
  QvDLManagedTensorVersioned *vorig;
} Wrapped;

static void wrapped_delete(Wrapped *w) {
  PyGILState_STATE g = PyGILState_Ensure();
  if (w->orig && w->orig->deleter) w->orig->deleter(w->orig);
  if (w->vorig && w->vorig->deleter) w->vorig->deleter(w->vorig);
  PyGILState_Release(g);
  free(w);
}
static void wrapped_deleter(DLManagedTensor *m) { wrapped_delete(m->manager_ctx); }
static void wrapped_vdeleter(QvDLManagedTensorVersioned *m) { wrapped_delete(m->manager_ctx); }

static PyObject *from_capsule(QvPyState *qs, PyObject *cap) {
  bool versioned = PyCapsule_IsValid(cap, "dltensor_versioned");
  if (!versioned && !PyCapsule_IsValid(cap, "dltensor")) {
    const char *name = PyCapsule_GetName(cap);
    PyErr_Clear();
    if (name && (strcmp(name, "used_dltensor") == 0 || strcmp(name, "used_dltensor_versioned") == 0))
      PyErr_SetString(qs->InvalidError, "the DLPack capsule was already consumed");
    else
      PyErr_Format(PyExc_TypeError, "a capsule named %s is no DLPack tensor", name ? name : "NULL");
    return NULL;
  }
  Wrapped *w = calloc(1, sizeof *w);
  if (!w) return PyErr_NoMemory();
  QvPyTensor *t = qvpy_tensor_new(qs);
  if (!t) {
    free(w);
    return NULL;
  }
  QvError err;
  qv_error_clear(&err);
  QvStatus st;
  if (versioned) {
    QvDLManagedTensorVersioned *m = PyCapsule_GetPointer(cap, "dltensor_versioned");
    w->vorig = m;
    w->vself = *m;
    w->vself.manager_ctx = w;
    w->vself.deleter = wrapped_vdeleter;
    st = m ? qv_tensor_from_dlpack_versioned(&w->vself, NULL, &t->t, &err)
           : qv_error_set(&err, QV_EINVAL, "the capsule holds NULL");
  } else {
    DLManagedTensor *m = PyCapsule_GetPointer(cap, "dltensor");
    w->orig = m;
    w->self = *m;
    w->self.manager_ctx = w;
    w->self.deleter = wrapped_deleter;
    st = m ? qv_tensor_from_dlpack(&w->self, NULL, &t->t, &err)
           : qv_error_set(&err, QV_EINVAL, "the capsule holds NULL");
  }
  if (st) {
    /* the producer still owns its tensor: the capsule's destructor frees it */
    free(w);
    Py_DECREF(t);
    return qvpy_raise(qs, st, &err); /* InvalidError, NotSupportedError: ValueError */
  }
  /* consumed: the capsule's destructor must leave it alone */
  if (PyCapsule_SetName(cap, versioned ? "used_dltensor_versioned" : "used_dltensor") < 0) {
    Py_DECREF(t);
    return NULL;
  }
  return (PyObject *)t;
}

static PyObject *py_from_dlpack(PyObject *m, PyObject *cap) {
  QvPyState *qs = qvpy_state(m);
  if (!PyCapsule_CheckExact(cap)) {
    PyErr_Format(PyExc_TypeError, "_from_dlpack takes a DLPack capsule, not %.100s",
                 Py_TYPE(cap)->tp_name);
    return NULL;
  }
  return from_capsule(qs, cap);
}

/* ---- ndarray -> Tensor view */

static void array_release(void *p) {
  PyGILState_STATE g = PyGILState_Ensure();
  Py_DECREF((PyObject *)p);
  PyGILState_Release(g);
}

static PyObject *py_as_dlpack(PyObject *m, PyObject *obj) {
  QvPyState *qs = qvpy_state(m);
  if (PyObject_TypeCheck(obj, qs->TensorType)) {
    Py_INCREF(obj);
    return obj;
  }
  if (!PyArray_Check(obj)) {
    PyErr_Format(PyExc_TypeError, "as_dlpack takes an ndarray or a quiver.Tensor, not %.100s",
                 Py_TYPE(obj)->tp_name);
    return NULL;
  }
  PyArrayObject *a = (PyArrayObject *)obj;
  for (int i = 0; i < PyArray_NDIM(a); i++)
    if (PyArray_STRIDES(a)[i] < 0) {
      PyErr_SetString(PyExc_BufferError,
                      "the array has negative strides, which DLPack consumers and quiver refuse "
                      "(copy it first)");
      return NULL;
    }
  QvTensor view;
  if (qvpy_tensor_from_array(qs, a, NULL, &view) < 0) return NULL;
  Py_INCREF(obj);
  QvOwner *owner = qv_owner_new(array_release, obj);
  if (!owner) {
    Py_DECREF(obj);
    qv_tensor_reset(&view);
    return PyErr_NoMemory();
  }
  QvPyTensor *t = qvpy_tensor_new(qs);
  QvError err;
  qv_error_clear(&err);
  QvStatus st = t ? qv_tensor_init(&t->t, &(QvTensorDesc){.type = view.type, .ndim = view.ndim,
                                                          .shape = view.shape,
                                                          .strides = view.strides,
                                                          .data = view.data,
                                                          .data_size = view.data_size,
                                                          .owner = owner},
                                   &err)
                  : QV_ENOMEM;
  qv_owner_free(owner); /* the tensor holds its own reference */
  qv_tensor_reset(&view);
  if (!t) return NULL;
  if (st) {
    Py_DECREF(t);
    return qvpy_raise(qs, st, &err);
  }
  return (PyObject *)t;
}

PyMethodDef qvpy_dlpack_methods[] = {
    {"_from_dlpack", (PyCFunction)py_from_dlpack, METH_O,
     "_from_dlpack(capsule)\n--\n\nA quiver.Tensor viewing a DLPack capsule's tensor (both "
     "versions; the capsule is consumed)."},
    {"_as_dlpack", (PyCFunction)py_as_dlpack, METH_O,
     "_as_dlpack(array)\n--\n\nA quiver.Tensor viewing an ndarray's memory (see quiver.as_dlpack)."},
    {NULL, NULL, 0, NULL}};
