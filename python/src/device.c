/* The Arrow C Device Data Interface in the PyCapsule interface: capsules
 * "arrow_device_array" and "arrow_device_array_stream" made from (and
 * turned back into) the plain capsules, RecordBatchReader's
 * __arrow_c_device_stream__, and the checks that refuse non-CPU data before
 * a writer reads it (NotSupportedError, a ValueError). */
#include "qvpy.h"

#include <stdlib.h>
#include <string.h>

#include "quiver/c_data.h"
#include "quiver/c_device.h"

#define DEVICE_ARRAY "arrow_device_array"
#define DEVICE_STREAM "arrow_device_array_stream"

static void device_array_capsule_free(PyObject *cap) {
  struct ArrowDeviceArray *a = PyCapsule_GetPointer(cap, DEVICE_ARRAY);
  if (!a) {
    PyErr_Clear();
    return;
  }
  if (a->array.release) a->array.release(&a->array);
  free(a);
}

static void device_stream_capsule_free(PyObject *cap) {
  struct ArrowDeviceArrayStream *s = PyCapsule_GetPointer(cap, DEVICE_STREAM);
  if (!s) {
    PyErr_Clear();
    return;
  }
  if (s->release) s->release(s);
  free(s);
}

/* The device methods' **kwargs: only keywords left at None (the interface
 * reserves them for the future); anything else is NotImplementedError. */
int qvpy_device_kwargs_none(PyObject *kwargs) {
  if (!kwargs) return 0;
  PyObject *key, *value;
  Py_ssize_t pos = 0;
  while (PyDict_Next(kwargs, &pos, &key, &value)) {
    if (value != Py_None) {
      PyErr_Format(PyExc_NotImplementedError, "unsupported keyword argument %R", key);
      return -1;
    }
  }
  return 0;
}

/* A stream capsule moved into a new device stream capsule. */
static PyObject *device_stream_of(QvPyState *qs, PyObject *stream_cap) {
  struct ArrowArrayStream *p = PyCapsule_GetPointer(stream_cap, "arrow_array_stream");
  if (!p) return NULL;
  if (!p->release) {
    PyErr_SetString(PyExc_ValueError, "the stream capsule was already consumed");
    return NULL;
  }
  struct ArrowDeviceArrayStream *d = calloc(1, sizeof *d);
  if (!d) return PyErr_NoMemory();
  QvError err;
  qv_error_clear(&err);
  QvStatus st = qv_device_stream_from_cpu(p, d, &err);
  if (st) {
    free(d);
    return qvpy_raise(qs, st, &err);
  }
  PyObject *cap = PyCapsule_New(d, DEVICE_STREAM, device_stream_capsule_free);
  if (!cap) {
    d->release(d);
    free(d);
  }
  return cap;
}

/* RecordBatchReader.__arrow_c_device_stream__ (records.c's method table
 * points here): the reader's __arrow_c_stream__ as a CPU device stream. */
PyObject *qvpy_reader_c_device_stream(PyObject *self, PyObject *args, PyObject *kwargs) {
  PyObject *req = Py_None;
  if (!PyArg_ParseTuple(args, "|O", &req)) return NULL;
  PyObject *rest = NULL;
  if (kwargs) {
    rest = PyDict_Copy(kwargs);
    if (!rest) return NULL;
    PyObject *r = PyDict_GetItemString(rest, "requested_schema");
    if (r) {
      if (PyTuple_GET_SIZE(args) > 0) {
        Py_DECREF(rest);
        PyErr_SetString(PyExc_TypeError, "requested_schema given twice");
        return NULL;
      }
      req = r;
      Py_INCREF(req);
      PyDict_DelItemString(rest, "requested_schema");
    } else {
      Py_INCREF(req);
    }
  } else {
    Py_INCREF(req);
  }
  int bad = qvpy_device_kwargs_none(rest);
  Py_XDECREF(rest);
  if (bad < 0) {
    Py_DECREF(req);
    return NULL;
  }
  PyObject *stream = PyObject_CallMethod(self, "__arrow_c_stream__", "O", req);
  Py_DECREF(req);
  if (!stream) return NULL;
  PyObject *out = device_stream_of(qvpy_state_of(self), stream);
  Py_DECREF(stream);
  return out;
}

/* _device_stream(capsule): an arrow_array_stream capsule's stream moved
 * into a new arrow_device_array_stream capsule (CPU). */
static PyObject *py_device_stream(PyObject *m, PyObject *cap) {
  return device_stream_of(qvpy_state(m), cap);
}

/* _device_array(capsule): an arrow_array capsule's array moved into a new
 * arrow_device_array capsule (CPU). */
static PyObject *py_device_array(PyObject *m, PyObject *cap) {
  (void)m;
  struct ArrowArray *p = PyCapsule_GetPointer(cap, "arrow_array");
  if (!p) return NULL;
  if (!p->release) {
    PyErr_SetString(PyExc_ValueError, "the array capsule was already consumed");
    return NULL;
  }
  struct ArrowDeviceArray *d = calloc(1, sizeof *d);
  if (!d) return PyErr_NoMemory();
  qv_device_array_from_cpu(p, d);
  PyObject *out = PyCapsule_New(d, DEVICE_ARRAY, device_array_capsule_free);
  if (!out) {
    d->array.release(&d->array);
    free(d);
  }
  return out;
}

/* _device_stream_to_cpu(capsule): an arrow_device_array_stream capsule of
 * CPU data as a new arrow_array_stream capsule whose get_next refuses a
 * non-CPU array; a non-CPU stream is NotSupportedError (the capsule keeps
 * it). */
static PyObject *py_device_stream_to_cpu(PyObject *m, PyObject *cap) {
  QvPyState *qs = qvpy_state(m);
  struct ArrowDeviceArrayStream *p = PyCapsule_GetPointer(cap, DEVICE_STREAM);
  if (!p) return NULL;
  if (!p->release) {
    PyErr_SetString(PyExc_ValueError, "the device stream capsule was already consumed");
    return NULL;
  }
  struct ArrowArrayStream s;
  QvError err;
  qv_error_clear(&err);
  QvStatus st = qv_device_stream_to_cpu(p, &s, &err);
  if (st) return qvpy_raise(qs, st, &err);
  return qvpy_stream_capsule(&s);
}

/* _device_array_to_cpu(capsule): an arrow_device_array capsule of CPU data
 * as a new arrow_array capsule; another device (or a sync event) is
 * NotSupportedError and the capsule keeps its array. */
static PyObject *py_device_array_to_cpu(PyObject *m, PyObject *cap) {
  QvPyState *qs = qvpy_state(m);
  struct ArrowDeviceArray *p = PyCapsule_GetPointer(cap, DEVICE_ARRAY);
  if (!p) return NULL;
  if (!p->array.release) {
    PyErr_SetString(PyExc_ValueError, "the device array capsule was already consumed");
    return NULL;
  }
  struct ArrowArray a;
  QvError err;
  qv_error_clear(&err);
  QvStatus st = qv_device_array_to_cpu(p, &a, &err);
  if (st) return qvpy_raise(qs, st, &err);
  return qvpy_array_capsule(&a);
}

PyMethodDef qvpy_device_methods[] = {
    {"_device_stream", (PyCFunction)py_device_stream, METH_O,
     "_device_stream(capsule)\n--\n\nAn arrow_array_stream capsule moved into a new "
     "arrow_device_array_stream capsule (CPU)."},
    {"_device_array", (PyCFunction)py_device_array, METH_O,
     "_device_array(capsule)\n--\n\nAn arrow_array capsule moved into a new arrow_device_array "
     "capsule (CPU)."},
    {"_device_stream_to_cpu", (PyCFunction)py_device_stream_to_cpu, METH_O,
     "_device_stream_to_cpu(capsule)\n--\n\nAn arrow_device_array_stream capsule of CPU data as an "
     "arrow_array_stream capsule (NotSupportedError for another device)."},
    {"_device_array_to_cpu", (PyCFunction)py_device_array_to_cpu, METH_O,
     "_device_array_to_cpu(capsule)\n--\n\nAn arrow_device_array capsule of CPU data as an "
     "arrow_array capsule (NotSupportedError for another device)."},
    {NULL, NULL, 0, NULL}};
