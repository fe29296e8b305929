/* NumPy's files through the library (quiver/npy.h, quiver/npz.h): .npy
 * images as quiver.Tensor (zero-copy where the library reads them so) and
 * SciPy's save_npz archives as quiver._Sparse. The Python faces are
 * quiver.read_npy / write_npy / read_npz / write_npz (quiver/_numpy_files.py). */
#include "qvpy.h"

#include <string.h>

#include "quiver/npy.h"
#include "quiver/npz.h"

static QvStatus read_npy_call(QvSource *src, void *ctx, QvError *err) {
  return qv_npy_read(src, NULL, ctx, err);
}

static PyObject *py_read_npy(PyObject *m, PyObject *source) {
  QvPyState *qs = qvpy_state(m);
  QvPyTensor *t = qvpy_tensor_new(qs);
  if (!t) return NULL;
  if (qvpy_with_source(qs, source, read_npy_call, &t->t) < 0) {
    Py_DECREF(t);
    return NULL;
  }
  return (PyObject *)t;
}

typedef struct NpyWrite {
  QvTensor t;
  QvNpyWriteOptions o;
} NpyWrite;

static QvStatus write_npy_call(QvSink *sink, void *ctx, QvError *err) {
  NpyWrite *w = ctx;
  return qv_npy_write(&w->t, sink, &w->o, err);
}

static PyObject *py_write_npy(PyObject *m, PyObject *args, PyObject *kwargs) {
  QvPyState *qs = qvpy_state(m);
  static char *kw[] = {"dest", "array", "c_order", "fsync", NULL};
  PyObject *dest, *obj;
  int c_order = 0, fsync = 1;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OO|p$p", kw, &dest, &obj, &c_order, &fsync))
    return NULL;
  NpyWrite w;
  memset(&w, 0, sizeof w);
  w.o.struct_size = sizeof w.o;
  w.o.c_order = c_order != 0;
  PyArrayObject *a = NULL;
  if (PyObject_TypeCheck(obj, qs->TensorType)) {
    if (qvpy_tensor_share(qs, obj, &w.t) < 0) return NULL;
  } else {
    a = qvpy_usable_array(qs, obj);
    if (!a) return NULL;
    if (qvpy_tensor_from_array(qs, a, NULL, &w.t) < 0) {
      Py_DECREF(a);
      return NULL;
    }
  }
  PyObject *result = qvpy_with_sink(qs, dest, fsync, write_npy_call, &w);
  qv_tensor_reset(&w.t);
  Py_XDECREF(a);
  return result;
}

static QvStatus read_npz_call(QvSource *src, void *ctx, QvError *err) {
  return qv_npz_read(src, NULL, ctx, NULL, err);
}

static PyObject *py_read_npz(PyObject *m, PyObject *source) {
  QvPyState *qs = qvpy_state(m);
  QvPySparse *s = qvpy_sparse_new(qs);
  if (!s) return NULL;
  if (qvpy_with_source(qs, source, read_npz_call, &s->s) < 0) {
    Py_DECREF(s);
    return NULL;
  }
  return (PyObject *)s;
}

typedef struct NpzWrite {
  const QvSparseTensor *s;
  QvNpzWriteOptions o;
} NpzWrite;

static QvStatus write_npz_call(QvSink *sink, void *ctx, QvError *err) {
  NpzWrite *w = ctx;
  return qv_npz_write(w->s, sink, &w->o, err);
}

static PyObject *py_write_npz(PyObject *m, PyObject *args, PyObject *kwargs) {
  QvPyState *qs = qvpy_state(m);
  static char *kw[] = {"dest", "tensor", "compressed", "fsync", NULL};
  PyObject *dest, *obj;
  int compressed = 1, fsync = 1;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OO!|p$p", kw, &dest, qs->SparseType, &obj,
                                   &compressed, &fsync))
    return NULL;
  NpzWrite w = {&((QvPySparse *)obj)->s, {.struct_size = sizeof w.o, .stored = !compressed}};
  return qvpy_with_sink(qs, dest, fsync, write_npz_call, &w);
}

PyMethodDef qvpy_npy_methods[] = {
    {"_read_npy", (PyCFunction)py_read_npy, METH_O,
     "_read_npy(source)\n--\n\nA .npy image as a quiver.Tensor (a view where the library reads one)."},
    {"_write_npy", (PyCFunction)(void (*)(void))py_write_npy, METH_VARARGS | METH_KEYWORDS,
     "_write_npy(dest, array, c_order=False)\n--\n\nAn ndarray or Tensor as a .npy image."},
    {"_read_npz", (PyCFunction)py_read_npz, METH_O,
     "_read_npz(source)\n--\n\nA save_npz archive as a quiver._Sparse."},
    {"_write_npz", (PyCFunction)(void (*)(void))py_write_npz, METH_VARARGS | METH_KEYWORDS,
     "_write_npz(dest, tensor, compressed=True)\n--\n\nA 2-D _Sparse as a save_npz archive."},
    {NULL, NULL, 0, NULL}};
