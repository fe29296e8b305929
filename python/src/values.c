/* Value types <-> NumPy dtypes, and the small conversions every concept
 * file uses (tuples, dimension names, sparse format names, views). */
#include "qvpy.h"

#include <string.h>

/* ---- value types <-> NumPy */

int qvpy_npy_type_of(QvArrowType t) {
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
int qvpy_value_type_of_array(QvPyState *qs, PyArrayObject *a, QvArrowType *out) {
  PyArray_Descr *d = PyArray_DESCR(a);
  int size = (int)d->elsize;
  QvArrowType t = QV_ARROW_NONE;
  if (d->kind == 'i') t = size == 1 ? QV_ARROW_INT8 : size == 2 ? QV_ARROW_INT16 : size == 4 ? QV_ARROW_INT32 : size == 8 ? QV_ARROW_INT64 : 0;
  if (d->kind == 'u') t = size == 1 ? QV_ARROW_UINT8 : size == 2 ? QV_ARROW_UINT16 : size == 4 ? QV_ARROW_UINT32 : size == 8 ? QV_ARROW_UINT64 : 0;
  if (d->kind == 'f') t = size == 2 ? QV_ARROW_FLOAT16 : size == 4 ? QV_ARROW_FLOAT32 : size == 8 ? QV_ARROW_FLOAT64 : 0;
  if (t == QV_ARROW_NONE || d->byteorder == '>' || PyDataType_HASFIELDS(d)) {
    PyObject *repr = PyObject_Str((PyObject *)d);
    PyErr_Format(qs->NotSupportedError,
                 "dtype %S is not an Arrow tensor value type (native int8..int64, uint8..uint64, "
                 "float16, float32, float64)",
                 repr ? repr : Py_None);
    Py_XDECREF(repr);
    return -1;
  }
  *out = t;
  return 0;
}

int qvpy_parse_value_type(QvPyState *qs, PyObject *obj, QvArrowType *out) {
  *out = QV_ARROW_NONE;
  if (obj == NULL || obj == Py_None) return 0;
  PyArray_Descr *d = NULL;
  if (!PyArray_DescrConverter(obj, &d)) return -1;
  PyArrayObject *tmp = (PyArrayObject *)PyArray_NewFromDescr(&PyArray_Type, d, 0, NULL, NULL, NULL, 0, NULL);
  if (!tmp) return -1;
  int rc = qvpy_value_type_of_array(qs, tmp, out);
  Py_DECREF(tmp);
  return rc;
}
/* ---- helpers */

PyObject *qvpy_int64_tuple(const int64_t *v, int64_t n) {
  PyObject *t = PyTuple_New((Py_ssize_t)n);
  if (!t) return NULL;
  for (int64_t i = 0; i < n; i++) {
    PyObject *x = PyLong_FromLongLong(v[i]);
    if (!x) return Py_DECREF(t), NULL;
    PyTuple_SET_ITEM(t, (Py_ssize_t)i, x);
  }
  return t;
}

PyObject *qvpy_names_tuple(const char *const *names, int64_t n) {
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
int qvpy_parse_names(PyObject *obj, int64_t ndim, const char **names, PyObject **keep) {
  *keep = NULL;
  if (obj == NULL || obj == Py_None) return 0;
  if (PyUnicode_Check(obj) || PyBytes_Check(obj)) {
    /* a str is a sequence of 1-character names: almost never meant */
    PyErr_SetString(PyExc_TypeError, "dim_names must be a list of str, not a str");
    return -1;
  }
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

int qvpy_parse_format(PyObject *obj, QvSparseFormat *out) {
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
char qvpy_zero_size_data[64];
/* A read-only ndarray over memory `self` keeps alive. */
PyObject *qvpy_view(PyObject *self, const void *data, QvArrowType type, int nd, const npy_intp *dims,
                    const npy_intp *strides) {
  PyArray_Descr *d = PyArray_DescrFromType(qvpy_npy_type_of(type));
  if (!d) return NULL;
  PyObject *arr = PyArray_NewFromDescr(&PyArray_Type, d, nd, (npy_intp *)dims, (npy_intp *)strides,
                                       data ? (void *)data : qvpy_zero_size_data, 0, NULL);
  if (!arr) return NULL;
  Py_INCREF(self);
  if (PyArray_SetBaseObject((PyArrayObject *)arr, self) < 0) return Py_DECREF(arr), NULL;
  return arr;
}

PyObject *qvpy_view_1d(PyObject *self, const void *data, QvArrowType type, int64_t n) {
  npy_intp dims[1] = {(npy_intp)n};
  return qvpy_view(self, data, type, 1, dims, NULL);
}

int qvpy_dict_put(PyObject *d, const char *k, PyObject *v) {
  if (!v) return -1;
  int rc = PyDict_SetItemString(d, k, v);
  Py_DECREF(v);
  return rc;
}
