/* quiver._quiver: tables as tensors (quiver/table_tensor.h) —
 * _table_to_tensor(source, columns, row_major, null_to_nan, threads, out). */
#include "qvpy.h"

#include <stdlib.h>
#include <string.h>

#include "quiver/advanced.h"
#include "quiver/c_data.h"
#include "quiver/recordbatch_ipc.h"
#include "quiver/table_tensor.h"

typedef struct TableCall {
  QvTableToTensorOptions o;
  QvTensor t;
  const QvTableTensorBuffer *into; /* out=: the caller's ndarray; NULL: a new one */
  QvArrowType want;                /* the columns' type when it is not out's dtype */
} TableCall;

/* out='s dtype against the columns' type, from the schema alone, before a
 * batch is read, so that a dtype mismatch is a TypeError (the library's
 * check after reading is QV_EARG, an InvalidError). A table the type rules
 * refuse is left to the conversion, which reports it in Arrow's order. */
static QvStatus check_out_type(struct ArrowArrayStream *s, TableCall *c, QvError *err) {
  struct ArrowSchema schema;
  memset(&schema, 0, sizeof schema);
  if (s->get_schema(s, &schema) != 0) return QV_OK; /* the conversion says why */
  QvArrowType t;
  QvError ignored;
  qv_error_clear(&ignored);
  QvStatus st = qv_table_tensor_type(&schema, &c->o, &t, &ignored);
  schema.release(&schema);
  if (st == QV_OK && t != c->into->type) {
    c->want = t;
    return qv_error_set(err, QV_EARG, "out's dtype is not the columns' type");
  }
  return QV_OK;
}

static QvStatus convert(struct ArrowArrayStream *s, TableCall *c, QvError *err) {
  if (c->into == NULL) return qv_table_stream_to_tensor(s, &c->o, &c->t, err);
  QvStatus st = check_out_type(s, c, err);
  if (st) return st;
  return qv_table_stream_to_tensor_into(s, &c->o, c->into, &c->t, err);
}

static const QvRbReadOptions full_validation = {.struct_size = sizeof(QvRbReadOptions),
                                                .validate = QV_VALIDATE_FULL};

static QvStatus table_call(QvSource *src, void *ctx, QvError *err) {
  TableCall *c = ctx;
  struct ArrowArrayStream s;
  memset(&s, 0, sizeof s);
  /* the copy reads every byte of the columns on its threads: they fault
   * the file's pages in as they go, in parallel, faster than the full
   * validation's populate of the whole mapping on this thread first */
  if (c->o.threads > 1 && qv_source_get_advice(src) == QV_SOURCE_ADVICE_DEFAULT)
    qv_source_set_advice(src, QV_SOURCE_ADVICE_NONE);
  QvStatus st = qv_rb_stream_reader_new(&s, src, &full_validation, err);
  if (st) return st;
  st = convert(&s, c, err);
  s.release(&s);
  return st;
}

/* columns: None or a sequence of str (a str itself is refused: it is no
 * list of names). *names and *keep are freed by the caller. */
static int parse_columns(PyObject *obj, const char ***names, int64_t *n, PyObject **keep) {
  *names = NULL;
  *n = 0;
  *keep = NULL;
  if (obj == Py_None) return 0;
  if (PyUnicode_Check(obj) || PyBytes_Check(obj)) {
    PyErr_SetString(PyExc_TypeError, "columns must be a list of column names, not a str");
    return -1;
  }
  PyObject *seq = PySequence_Fast(obj, "columns must be a list of column names");
  if (!seq) return -1;
  Py_ssize_t len = PySequence_Fast_GET_SIZE(seq);
  const char **out = malloc((size_t)(len ? len : 1) * sizeof *out);
  if (!out) {
    Py_DECREF(seq);
    PyErr_NoMemory();
    return -1;
  }
  for (Py_ssize_t i = 0; i < len; i++) {
    PyObject *item = PySequence_Fast_GET_ITEM(seq, i);
    if (!PyUnicode_Check(item)) {
      PyErr_Format(PyExc_TypeError, "columns[%zd] must be a str, not %.100s", i,
                   Py_TYPE(item)->tp_name);
      free(out);
      Py_DECREF(seq);
      return -1;
    }
    Py_ssize_t sz;
    const char *u = PyUnicode_AsUTF8AndSize(item, &sz);
    if (!u) {
      free(out);
      Py_DECREF(seq);
      return -1;
    }
    if ((size_t)sz != strlen(u)) {
      PyErr_Format(PyExc_ValueError, "columns[%zd] contains NUL", i);
      free(out);
      Py_DECREF(seq);
      return -1;
    }
    out[i] = u; /* kept alive by seq, which holds the items */
  }
  *names = out;
  *n = len;
  *keep = seq;
  return 0;
}

/* out= as the library's buffer: a writable, native-order, 2-D ndarray of
 * a tensor value type, C-contiguous for row-major, F-contiguous for
 * column-major (shape and dtype are checked against the table later, before
 * anything is written). 0, or -1 with TypeError / ValueError set. */
static int parse_out(QvPyState *qs, PyObject *obj, bool row_major, QvTableTensorBuffer *into) {
  if (!PyArray_Check(obj)) {
    PyErr_Format(PyExc_TypeError, "out must be a numpy.ndarray, not %.100s", Py_TYPE(obj)->tp_name);
    return -1;
  }
  PyArrayObject *a = (PyArrayObject *)obj;
  if (PyArray_NDIM(a) != 2) {
    PyErr_Format(PyExc_ValueError, "out must be a 2-D array [rows, columns], not %d-D",
                 PyArray_NDIM(a));
    return -1;
  }
  QvArrowType t;
  if (qvpy_value_type_of_array(qs, a, &t) < 0) {
    /* the same words, as the TypeError a wrong dtype is */
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    PyObject *msg = value ? PyObject_Str(value) : NULL;
    Py_XDECREF(type);
    Py_XDECREF(value);
    Py_XDECREF(tb);
    if (msg) PyErr_Format(PyExc_TypeError, "out: %U", msg);
    Py_XDECREF(msg);
    return -1;
  }
  if (!PyArray_ISWRITEABLE(a)) {
    PyErr_SetString(PyExc_ValueError, "out is read-only");
    return -1;
  }
  if (row_major ? !PyArray_IS_C_CONTIGUOUS(a) : !PyArray_IS_F_CONTIGUOUS(a)) {
    PyErr_SetString(PyExc_ValueError,
                    row_major ? "out must be C-contiguous for row_major=True"
                              : "out must be F-contiguous (Fortran order) for row_major=False");
    return -1;
  }
  *into = (QvTableTensorBuffer){.data = PyArray_DATA(a), .data_size = (int64_t)PyArray_NBYTES(a),
                                .type = t,
                                .shape = {(int64_t)PyArray_DIM(a, 0), (int64_t)PyArray_DIM(a, 1)}};
  return 0;
}

static PyObject *py_table_to_tensor(PyObject *m, PyObject *args, PyObject *kwargs) {
  QvPyState *qs = qvpy_state(m);
  static char *kw[] = {"source", "columns", "row_major", "null_to_nan", "threads", "out", NULL};
  PyObject *source, *columns = Py_None, *out = Py_None;
  int row_major = 1, null_to_nan = 0, threads = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|OppiO", kw, &source, &columns, &row_major,
                                   &null_to_nan, &threads, &out))
    return NULL;
  if (threads < 0 || threads > QV_TABLE_TENSOR_MAX_THREADS) {
    PyErr_Format(PyExc_ValueError, "threads must be from 0 to %d, not %d",
                 QV_TABLE_TENSOR_MAX_THREADS, threads);
    return NULL;
  }
  QvTableTensorBuffer into;
  if (out != Py_None && parse_out(qs, out, row_major != 0, &into) < 0) return NULL;
  const char **names;
  int64_t n;
  PyObject *keep;
  if (parse_columns(columns, &names, &n, &keep) < 0) return NULL;
  TableCall c;
  memset(&c, 0, sizeof c);
  c.o = (QvTableToTensorOptions){.struct_size = sizeof c.o, .null_to_nan = null_to_nan != 0,
                                 .column_major = !row_major, .columns = names, .n_columns = n,
                                 .threads = threads};
  if (columns == Py_None) c.o.columns = NULL;
  if (out != Py_None) c.into = &into;
  int rc;
  if (PyCapsule_IsValid(source, "arrow_array_stream")) {
    /* a producer's stream: moved out of the capsule and read with the GIL
     * held (its callbacks may need it) */
    struct ArrowArrayStream *cs = PyCapsule_GetPointer(source, "arrow_array_stream");
    if (!cs || !cs->release) {
      PyErr_SetString(PyExc_ValueError, "the stream capsule was already consumed");
      rc = -1;
    } else {
      struct ArrowArrayStream s = *cs;
      cs->release = NULL;
      QvError err;
      qv_error_clear(&err);
      qvpy_calls++; /* a file object's exception is raised below */
      QvStatus st = convert(&s, &c, &err);
      qvpy_calls--;
      /* raised before the release, which may free a file object's source
       * and its pending exception; released with no exception set (the
       * producer's callback may run Python code) */
      PyObject *type = NULL, *value = NULL, *tb = NULL;
      if (st) {
        qvpy_raise(qs, st, &err);
        PyErr_Fetch(&type, &value, &tb);
      }
      s.release(&s);
      if (st) PyErr_Restore(type, value, tb);
      rc = st ? -1 : 0;
    }
  } else {
    rc = qvpy_with_source(qs, source, table_call, &c);
  }
  free(names);
  Py_XDECREF(keep);
  if (rc < 0) {
    qv_tensor_reset(&c.t);
    if (c.want != QV_ARROW_NONE) { /* check_out_type's mismatch */
      PyErr_Clear();
      PyArray_Descr *d = PyArray_DescrFromType(qvpy_npy_type_of(c.want));
      PyErr_Format(PyExc_TypeError, "out has dtype %S but the columns give %S",
                   (PyObject *)PyArray_DESCR((PyArrayObject *)out), d ? (PyObject *)d : Py_None);
      Py_XDECREF(d);
    }
    return NULL;
  }
  if (out != Py_None) { /* the library wrote out's buffer: *t is a view of it */
    qv_tensor_reset(&c.t);
    Py_INCREF(out);
    return out;
  }
  QvPyTensor *t = qvpy_tensor_new(qs);
  if (!t) {
    qv_tensor_reset(&c.t);
    return NULL;
  }
  t->t = c.t;
  PyObject *a = qvpy_tensor_to_numpy(t, NULL);
  Py_DECREF(t);
  /* the tensor's buffer is its own: the array may write it */
  if (a) PyArray_ENABLEFLAGS((PyArrayObject *)a, NPY_ARRAY_WRITEABLE);
  return a;
}

/* _cpu_count(): the CPUs this process may run on (qv_cpu_count: the
 * affinity mask, else the online CPUs), the CLI's default --threads. */
static PyObject *py_cpu_count(PyObject *m, PyObject *unused) {
  (void)m;
  (void)unused;
  return PyLong_FromLong(qv_cpu_count());
}

PyMethodDef qvpy_table_tensor_methods[] = {
    {"_cpu_count", py_cpu_count, METH_NOARGS,
     "_cpu_count()\n--\n\nThe CPUs this process may run on (the CLI's default --threads)."},
    {"_table_to_tensor", (PyCFunction)(void (*)(void))py_table_to_tensor,
     METH_VARARGS | METH_KEYWORDS,
     "_table_to_tensor(source, columns=None, row_major=True, null_to_nan=False, threads=0, "
     "out=None)\n--\n\n"
     "The numeric columns of a table (an Arrow stream or file: a path or a buffer, or an "
     "arrow_array_stream capsule) as one new 2-D ndarray, or written into `out` and returned "
     "(see quiver.table_to_tensor)."},
    {NULL, NULL, 0, NULL}};
