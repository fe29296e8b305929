/* quiver._Sparse (a sparse tensor held by quiver, the owner of the memory
 * its buffers() view) and the sparse tensor functions: read, convert, from
 * dense arrays or SciPy's buffers, write. */
#include "qvpy.h"

#include <string.h>

#include "quiver/format.h"
#include "quiver/ipc.h"
#include "quiver/sparse_ipc.h"
#include "quiver/tensor_ipc.h"

/* ---- _Sparse: a sparse tensor held by quiver */

static void Sparse_dealloc(QvPySparse *self) {
  qv_sparse_reset(&self->s);
  qvpy_free_instance((PyObject *)self);
}

QvPySparse *qvpy_sparse_new(QvPyState *qs) {
  QvPySparse *self = PyObject_New(QvPySparse, qs->SparseType);
  if (self) memset(&self->s, 0, sizeof self->s);
  return self;
}

/* The C side of making a sparse tensor, run without the GIL. */
typedef QvStatus (*SparseCall)(const void *ctx, QvSparseTensor *out, QvError *err);

/* A new _Sparse filled by call(ctx) with the GIL released; NULL with the
 * error raised. */
static PyObject *new_sparse(QvPyState *qs, SparseCall call, const void *ctx) {
  QvPySparse *r = qvpy_sparse_new(qs);
  if (!r) return NULL;
  QvError err;
  qv_error_clear(&err);
  QvStatus st;
  QVPY_BEGIN_CALL
  st = call(ctx, &r->s, &err);
  QVPY_END_CALL
  if (st) {
    Py_DECREF(r);
    return qvpy_raise(qs, st, &err);
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
static int parse_convert(QvPyState *qs, PyObject *fmt, PyObject *it, PyObject *ao, int64_t ndim,
                         SparseConvert *c) {
  memset(&c->o, 0, sizeof c->o);
  c->o.struct_size = sizeof c->o;
  if (qvpy_parse_format(fmt, &c->f) < 0 || qvpy_parse_value_type(qs, it, &c->o.index_type) < 0) return -1;
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
    if (v < 0 || v >= ndim) {
      PyErr_Format(PyExc_ValueError, "axis_order[%d] = %ld is not a dim in [0, %lld)", i, v,
                   (long long)ndim);
      Py_DECREF(seq);
      return -1;
    }
    c->axis[i] = (int32_t)v;
  }
  Py_DECREF(seq);
  c->o.axis_order = c->axis;
  return 0;
}


static PyObject *Sparse_buffers(QvPySparse *self, PyObject *unused) {
  (void)unused;
  const QvSparseTensor *s = &self->s;
  PyObject *o = (PyObject *)self, *d = PyDict_New();
  if (!d) return NULL;
  if (qvpy_dict_put(d, "data", qvpy_view_1d(o, s->values, s->value_type, s->nnz)) < 0) goto fail;
  if (s->format == QV_SPARSE_COO) {
    npy_intp dims[2] = {(npy_intp)s->nnz, s->ndim}, st[2] = {(npy_intp)s->coords_strides[0], (npy_intp)s->coords_strides[1]};
    if (qvpy_dict_put(d, "coords", qvpy_view(o, s->coords, s->index_type, 2, dims, st)) < 0) goto fail;
  } else if (s->format == QV_SPARSE_CSR || s->format == QV_SPARSE_CSC) {
    if (qvpy_dict_put(d, "indptr", qvpy_view_1d(o, s->indptr, s->indptr_type, s->indptr_len)) < 0) goto fail;
    if (qvpy_dict_put(d, "indices", qvpy_view_1d(o, s->indices, s->index_type, s->indices_len)) < 0) goto fail;
  } else {
    PyObject *ip = PyList_New(0), *ix = PyList_New(0);
    if (qvpy_dict_put(d, "indptr", ip) < 0 || qvpy_dict_put(d, "indices", ix) < 0) goto fail;
    for (int l = 0; l < s->ndim; l++) {
      if (l < s->ndim - 1) {
        PyObject *a = qvpy_view_1d(o, s->csf_indptr[l], s->indptr_type, s->csf_indptr_len[l]);
        if (!a || PyList_Append(ip, a) < 0) {
          Py_XDECREF(a);
          goto fail;
        }
        Py_DECREF(a);
      }
      PyObject *a = qvpy_view_1d(o, s->csf_indices[l], s->index_type, s->csf_indices_len[l]);
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

static PyObject *Sparse_to_dense(QvPySparse *self, PyObject *unused) {
  (void)unused;
  QvPyState *qs = qvpy_state_of((PyObject *)self);
  const QvSparseTensor *s = &self->s;
  npy_intp dims[QV_TENSOR_MAX_NDIM];
  if (s->ndim > NPY_MAXDIMS) {
    PyErr_SetString(qs->NotSupportedError, "more dimensions than NumPy supports");
    return NULL;
  }
  for (int i = 0; i < s->ndim; i++) dims[i] = (npy_intp)s->shape[i];
  PyObject *arr = PyArray_SimpleNew(s->ndim, dims, qvpy_npy_type_of(s->value_type));
  if (!arr) return NULL;
  QvError err;
  qv_error_clear(&err);
  QvStatus st;
  void *dst = PyArray_DATA((PyArrayObject *)arr);
  size_t n = (size_t)PyArray_NBYTES((PyArrayObject *)arr);
  QVPY_BEGIN_CALL
  st = qv_sparse_to_dense_into(s, dst, n, NULL, &err);
  QVPY_END_CALL
  if (st) {
    Py_DECREF(arr);
    return qvpy_raise(qs, st, &err);
  }
  return arr;
}

static QvStatus convert_call(const void *ctx, QvSparseTensor *out, QvError *err) {
  const SparseConvert *c = ctx;
  return qv_sparse_convert(c->in, c->f, &c->o, out, err);
}

static PyObject *Sparse_convert(QvPySparse *self, PyObject *args, PyObject *kwargs) {
  static char *kw[] = {"format", "index_type", "axis_order", NULL};
  PyObject *fmt, *it = Py_None, *ao = Py_None;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|OO", kw, &fmt, &it, &ao)) return NULL;
  QvPyState *qs = qvpy_state_of((PyObject *)self);
  SparseConvert c = {.in = &self->s};
  if (parse_convert(qs, fmt, it, ao, self->s.ndim, &c) < 0) return NULL;
  return new_sparse(qs, convert_call, &c);
}

#define SPARSE_GET(name, expr)                              \
  static PyObject *Sparse_get_##name(QvPySparse *self, void *c) { \
    (void)c;                                                \
    const QvSparseTensor *s = &self->s;                     \
    return expr;                                            \
  }
SPARSE_GET(format, PyUnicode_FromString(qv_sparse_format_name(s->format)))
SPARSE_GET(shape, qvpy_int64_tuple(s->shape, s->ndim))
SPARSE_GET(ndim, PyLong_FromLong(s->ndim))
SPARSE_GET(nnz, PyLong_FromLongLong(s->nnz))
SPARSE_GET(dim_names, qvpy_names_tuple(s->dim_names, s->ndim))
SPARSE_GET(value_type, PyUnicode_FromString(qv_arrow_type_name(s->value_type)))
SPARSE_GET(index_type, PyUnicode_FromString(qv_arrow_type_name(s->index_type)))
SPARSE_GET(is_canonical, PyBool_FromLong(s->format == QV_SPARSE_COO ? s->is_canonical : 1))

static PyObject *Sparse_get_axis_order(QvPySparse *self, void *c) {
  (void)c;
  const QvSparseTensor *s = &self->s;
  if (s->format != QV_SPARSE_CSF) Py_RETURN_NONE;
  int64_t v[QV_TENSOR_MAX_NDIM];
  for (int i = 0; i < s->ndim; i++) v[i] = s->axis_order[i];
  return qvpy_int64_tuple(v, s->ndim);
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

/* Python's slots are void pointers, functions included (ISO C leaves the
 * conversion to the platform; every platform CPython runs on allows it). */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpedantic"
static PyType_Slot Sparse_slots[] = {
    {Py_tp_dealloc, (void *)Sparse_dealloc},
    {Py_tp_doc, (void *)"A sparse tensor held by quiver (the owner of the memory its buffers() view)."},
    {Py_tp_methods, Sparse_methods},
    {Py_tp_getset, Sparse_getset},
    {0, NULL}};
#pragma GCC diagnostic pop

static PyType_Spec Sparse_spec = {"quiver._Sparse", sizeof(QvPySparse), 0,
                                  Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE |
                                      Py_TPFLAGS_DISALLOW_INSTANTIATION,
                                  Sparse_slots};

int qvpy_sparse_exec(PyObject *module, QvPyState *qs) {
  qs->SparseType = qvpy_add_type(module, &Sparse_spec, true);
  return qs->SparseType ? 0 : -1;
}
/* ---- module functions: sparse */

static QvStatus read_sparse_call(QvSource *src, void *ctx, QvError *err) {
  QvPyIndexRead *r = ctx;
  return qv_sparse_read(src, r->index, NULL, r->out, err);
}

static PyObject *py_read_sparse(PyObject *m, PyObject *args, PyObject *kwargs) {
  QvPyState *qs = qvpy_state(m);
  PyObject *source;
  long long index;
  if (qvpy_parse_source_index(args, kwargs, &source, &index) < 0) return NULL;
  QvPySparse *s = qvpy_sparse_new(qs);
  return qvpy_read_object(qs, (PyObject *)s, s ? &s->s : NULL, source, index, read_sparse_call);
}

static QvStatus read_message_call(QvSource *src, void *ctx, QvError *err) {
  QvPyIndexRead *a = ctx;
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
  QvPyState *qs = qvpy_state(m);
  PyObject *source;
  long long index;
  if (qvpy_parse_source_index(args, kwargs, &source, &index) < 0) return NULL;
  QvIpcMessage msg;
  memset(&msg, 0, sizeof msg);
  QvPyIndexRead a = {&msg, index};
  if (qvpy_with_source(qs, source, read_message_call, &a) < 0) return NULL;
  QvError err;
  qv_error_clear(&err);
  QvStatus st;
  PyObject *out = NULL;
  if (msg.message.header_type == QV_HEADER_TENSOR) {
    QvPyTensor *t = qvpy_tensor_new(qs);
    if (t && (st = qv_tensor_from_message(&msg, &t->t, &err)) != QV_OK) {
      Py_CLEAR(t);
      qvpy_raise(qs, st, &err);
    }
    out = (PyObject *)t;
  } else if (msg.message.header_type == QV_HEADER_SPARSE_TENSOR) {
    QvPySparse *s = qvpy_sparse_new(qs);
    if (s && (st = qv_sparse_from_message(&msg, &s->s, NULL, &err)) != QV_OK) {
      Py_CLEAR(s);
      qvpy_raise(qs, st, &err);
    }
    out = (PyObject *)s;
  } else {
    PyErr_Format(qs->InvalidError, "message %lld is a %s, not a Tensor or SparseTensor", index,
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
  QvPyState *qs = qvpy_state(m);
  static char *kw[] = {"array", "format", "index_type", "axis_order", NULL};
  PyObject *obj, *fmt, *it = Py_None, *ao = Py_None;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OO|OO", kw, &obj, &fmt, &it, &ao)) return NULL;
  QvTensor t;
  memset(&t, 0, sizeof t);
  PyArrayObject *a = NULL;
  if (PyObject_TypeCheck(obj, qs->TensorType)) {
    if (qvpy_tensor_share(qs, obj, &t) < 0) return NULL;
  } else {
    a = qvpy_usable_array(qs, obj);
    if (!a) return NULL;
    if (qvpy_tensor_from_array(qs, a, NULL, &t) < 0) return Py_DECREF(a), NULL;
  }
  SparseConvert c = {.in = &t};
  PyObject *result = NULL;
  if (parse_convert(qs, fmt, it, ao, t.ndim, &c) == 0) result = new_sparse(qs, from_dense_call, &c);
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

static PyArrayObject *index_array(QvPyState *qs, PyObject *obj, int nd, const char *what) {
  PyArrayObject *a = (PyArrayObject *)PyArray_FromAny(obj, NULL, nd, nd, NPY_ARRAY_ALIGNED, NULL);
  if (!a) return NULL;
  QvArrowType vt;
  if (qvpy_value_type_of_array(qs, a, &vt) < 0 || vt > QV_ARROW_UINT64) {
    if (!PyErr_Occurred()) PyErr_Format(qs->NotSupportedError, "%s must hold integers", what);
    Py_DECREF(a);
    return NULL;
  }
  return a;
}

static QvStatus init_call(const void *ctx, QvSparseTensor *out, QvError *err) {
  return qv_sparse_init(out, ctx, err);
}

static PyObject *py_sparse_from_buffers(PyObject *m, PyObject *args, PyObject *kwargs) {
  QvPyState *qs = qvpy_state(m);
  static char *kw[] = {"format", "shape", "data", "indptr", "indices", "coords", "is_canonical",
                       "dim_names", NULL};
  PyObject *fmt, *shape_obj, *data_obj, *indptr_obj = Py_None, *indices_obj = Py_None,
                                        *coords_obj = Py_None, *names_obj = Py_None;
  int canonical = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OOO|OOOpO", kw, &fmt, &shape_obj, &data_obj,
                                   &indptr_obj, &indices_obj, &coords_obj, &canonical, &names_obj))
    return NULL;
  QvSparseFormat f;
  if (qvpy_parse_format(fmt, &f) < 0) return NULL;
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
  if (qvpy_value_type_of_array(qs, data, &d.value_type) < 0) goto done;
  if (qvpy_parse_names(names_obj, nd, names, &names_keep) < 0) goto done;
  if (names_keep) d.dim_names = names;
  int64_t cstrides[2];
  if (f == QV_SPARSE_COO) {
    coords = index_array(qs, coords_obj, 2, "coords");
    if (!coords) goto done;
    if (PyArray_DIM(coords, 0) != d.nnz || PyArray_DIM(coords, 1) != nd ||
        PyArray_STRIDE(coords, 0) < 0 || PyArray_STRIDE(coords, 1) < 0) {
      PyErr_SetString(PyExc_ValueError, "coords must be an nnz x ndim array with non-negative strides");
      goto done;
    }
    qvpy_value_type_of_array(qs, coords, &d.index_type);
    cstrides[0] = PyArray_STRIDE(coords, 0);
    cstrides[1] = PyArray_STRIDE(coords, 1);
    d.coords = PyArray_DATA(coords);
    d.coords_strides = cstrides;
  } else {
    indptr = index_array(qs, indptr_obj, 1, "indptr");
    indices = indptr ? index_array(qs, indices_obj, 1, "indices") : NULL;
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
    qvpy_value_type_of_array(qs, indptr, &d.indptr_type);
    qvpy_value_type_of_array(qs, indices, &d.index_type);
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
  result = new_sparse(qs, init_call, &d);
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
  QvPyState *qs = qvpy_state(m);
  static char *kw[] = {"dest", "tensor", "csf_lengths_in_bytes", "fsync", NULL};
  PyObject *dest, *obj;
  int bytes = 0, fsync = 1;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OO!|p$p", kw, &dest, qs->SparseType, &obj, &bytes,
                                   &fsync))
    return NULL;
  SparseWrite w = {&((QvPySparse *)obj)->s,
                   {.struct_size = sizeof w.o,
                    .csf_lengths = bytes ? QV_CSF_LENGTHS_BYTES : QV_CSF_LENGTHS_ELEMENTS}};
  return qvpy_with_sink(qs, dest, fsync, write_sparse_call, &w);
}

PyMethodDef qvpy_sparse_methods[] = {
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
    {NULL, NULL, 0, NULL}};
