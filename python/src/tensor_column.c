/* quiver._quiver: tensor columns (arrow.fixed_shape_tensor and
 * arrow.variable_shape_tensor, quiver/tensor_column.h) from Python.
 *
 *   _read_tensor_column(source, column, batch, fill) -> (list of ndarrays, one
 *       per batch read, each [rows, *cell]; list of null cell indices per batch)
 *   _read_tensor_cells(source, column) -> list of ndarrays / None
 *   _write_tensor_column(dest, data, name, dim_names, file)
 *
 * Reading keeps the views: a batch's stacked tensor (or a cell) holds the
 * column's owner, which holds the record batch, which holds the source (the
 * mapping or the caller's buffer); quiver/__init__.py concatenates several
 * batches (the one copy) and writes `fill` into null cells. */
#include "qvpy.h"

#include <stdlib.h>
#include <string.h>

#include "quiver/c_data.h"
#include "quiver/recordbatch_ipc.h"
#include "quiver/tensor_column.h"

/* The reader runs the cheap checks (every buffer's bounds, child lengths,
 * first/last offsets: O(buffers)) on every column of every batch; the one
 * column handed out is then validated in full by qv_tensor_column_init
 * (offsets, null counts, each variable-shape cell against its shape), which
 * for a fixed_shape_tensor column of numbers is O(1): its values need no
 * check. Full validation in the reader would also announce a full read, so a
 * mapped file would be faulted in whole (MADV_POPULATE_READ) before a
 * zero-copy view of it is made: time proportional to the file. */
static const QvRbReadOptions reader_checks = {.struct_size = sizeof(QvRbReadOptions),
                                              .validate = QV_VALIDATE_CHEAP};

/* ---- reading */

typedef struct ColumnRead {
  const char *column; /* NULL: the only tensor column */
  long long batch;    /* -1: every batch */
  bool null_fill;
  bool cells;         /* every cell (read_tensor_cells) instead of a stack */
  /* results: one QvTensor per batch (stacks) or per cell (cells), and which
   * are null */
  QvTensor *tensors;
  bool *is_null;
  int64_t n, cap;
  /* stacks: the null rows of each stack (null_stack[k] is the stack that
   * null_row[k] belongs to) */
  int64_t *null_row, *null_stack;
  int64_t n_nulls, nulls_cap;
} ColumnRead;

static void column_read_reset(ColumnRead *r) {
  for (int64_t i = 0; i < r->n; i++) qv_tensor_reset(&r->tensors[i]);
  free(r->tensors);
  free(r->is_null);
  free(r->null_row);
  free(r->null_stack);
  memset(r, 0, sizeof *r);
}

static QvStatus push(ColumnRead *r, QvError *err) {
  if (r->n == r->cap) {
    int64_t nc = r->cap ? r->cap * 2 : 16;
    QvTensor *t = realloc(r->tensors, (size_t)nc * sizeof *t);
    if (!t) return qv_error_set(err, QV_ENOMEM, "out of memory");
    r->tensors = t;
    bool *b = realloc(r->is_null, (size_t)nc * sizeof *b);
    if (!b) return qv_error_set(err, QV_ENOMEM, "out of memory");
    r->is_null = b;
    r->cap = nc;
  }
  memset(&r->tensors[r->n], 0, sizeof r->tensors[r->n]);
  r->is_null[r->n] = false;
  r->n++;
  return QV_OK;
}

static QvStatus push_null(ColumnRead *r, int64_t stack, int64_t row, QvError *err) {
  if (r->n_nulls == r->nulls_cap) {
    int64_t nc = r->nulls_cap ? r->nulls_cap * 2 : 16;
    int64_t *a = realloc(r->null_row, (size_t)nc * sizeof *a);
    if (!a) return qv_error_set(err, QV_ENOMEM, "out of memory");
    r->null_row = a;
    int64_t *b = realloc(r->null_stack, (size_t)nc * sizeof *b);
    if (!b) return qv_error_set(err, QV_ENOMEM, "out of memory");
    r->null_stack = b;
    r->nulls_cap = nc;
  }
  r->null_row[r->n_nulls] = row;
  r->null_stack[r->n_nulls] = stack;
  r->n_nulls++;
  return QV_OK;
}

/* The index of the tensor column to read: `column` by name, or the only
 * fixed/variable shape tensor column (an error naming them when there are
 * several, or naming the columns when there is none). */
static QvStatus find_column(const struct ArrowSchema *schema, const char *column, int64_t *out,
                            QvError *err) {
  int64_t found = -1, count = 0;
  char names[512];
  size_t len = 0;
  names[0] = '\0';
  for (int64_t i = 0; i < schema->n_children; i++) {
    const struct ArrowSchema *f = schema->children[i];
    const char *nm = f->name ? f->name : "";
    if (column != NULL) {
      if (strcmp(nm, column) == 0) {
        found = i;
        count++;
      }
      if (len < sizeof names)
        len += (size_t)snprintf(names + len, sizeof names - len, "%s'%s'", i ? ", " : "", nm);
      continue;
    }
    QvTensorColumnType t;
    bool is_tensor = qv_tensor_column_type_from_field(f, NULL, &t, NULL) == QV_OK &&
                     t.kind != QV_TENSOR_COLUMN_NONE;
    qv_tensor_column_type_reset(&t);
    if (!is_tensor) continue;
    if (found < 0) found = i;
    if (len < sizeof names)
      len += (size_t)snprintf(names + len, sizeof names - len, "%s'%s'", count ? ", " : "", nm);
    count++;
  }
  if (column != NULL) {
    if (count == 0)
      return qv_error_set(err, QV_EINVAL, "no column named '%s' (columns: %s)", column, names);
    if (count > 1)
      return qv_error_set(err, QV_EINVAL, "%lld columns are named '%s'", (long long)count, column);
  } else {
    if (count == 0)
      return qv_error_set(err, QV_EINVAL,
                          "no tensor column (arrow.fixed_shape_tensor or "
                          "arrow.variable_shape_tensor) in the table");
    if (count > 1)
      return qv_error_set(err, QV_EINVAL, "%lld tensor columns (%s): name one with column=",
                          (long long)count, names);
  }
  *out = found;
  return QV_OK;
}

/* Batch b's column as a QvTensorColumn (the column shares the batch's
 * buffers; the batch is released). */
static QvStatus batch_column(struct ArrowArray *batch, const struct ArrowSchema *schema,
                             int64_t idx, QvTensorColumn *col, QvError *err) {
  struct ArrowArray cells;
  QvStatus st = qv_array_share(batch->children[idx], &cells, err);
  batch->release(batch);
  if (st) return st;
  st = qv_tensor_column_init(col, schema->children[idx], &cells, NULL, err);
  if (cells.release) cells.release(&cells);
  return st;
}

static QvStatus read_column_call(QvSource *src, void *ctx, QvError *err) {
  ColumnRead *r = ctx;
  struct ArrowArrayStream s;
  memset(&s, 0, sizeof s);
  QvStatus st = qv_rb_stream_reader_new(&s, src, &reader_checks, err);
  if (st) return st;
  struct ArrowSchema schema;
  memset(&schema, 0, sizeof schema);
  int64_t idx = -1;
  st = qv_rb_stream_get_schema(&s, &schema, err);
  if (st == QV_OK) st = find_column(&schema, r->column, &idx, err);
  for (long long b = 0; st == QV_OK; b++) {
    struct ArrowArray batch;
    st = qv_rb_stream_get_next(&s, &batch, err);
    if (st == QV_EOS) {
      st = QV_OK;
      if (r->batch >= 0 && b <= r->batch)
        st = qv_error_set(err, QV_EARG, "batch=%lld: the table has %lld record batches",
                          r->batch, b);
      break;
    }
    if (st) break;
    if (r->batch >= 0 && b != r->batch) {
      batch.release(&batch);
      continue;
    }
    QvTensorColumn col;
    if ((st = batch_column(&batch, &schema, idx, &col, err)) != QV_OK) {
      qv_error_prefix(err, "batch %lld, column '%s'", b, schema.children[idx]->name ? schema.children[idx]->name : "");
      break;
    }
    if (r->cells) {
      for (int64_t i = 0; st == QV_OK && i < col.length; i++) {
        if ((st = push(r, err)) != QV_OK) break;
        if (qv_tensor_column_is_null(&col, i))
          r->is_null[r->n - 1] = true;
        else
          st = qv_tensor_column_cell(&col, i, &r->tensors[r->n - 1], err);
      }
    } else {
      st = push(r, err);
      if (st == QV_OK) {
        QvTensorStackOptions so = {.struct_size = sizeof so, .null_fill = r->null_fill};
        st = qv_tensor_column_stack(&col, &so, &r->tensors[r->n - 1], err);
        /* is_null of a stack: copied for its null cells (the caller's own memory) */
        r->is_null[r->n - 1] = col.null_count > 0;
        for (int64_t i = 0; st == QV_OK && col.null_count > 0 && i < col.length; i++)
          if (qv_tensor_column_is_null(&col, i)) st = push_null(r, r->n - 1, i, err);
      }
      if (st) qv_error_prefix(err, "batch %lld, column '%s'", b, schema.children[idx]->name ? schema.children[idx]->name : "");
    }
    qv_tensor_column_reset(&col);
    if (r->batch >= 0) break;
  }
  if (schema.release) schema.release(&schema);
  s.release(&s);
  return st;
}

/* An ndarray viewing *t (moved into a new quiver.Tensor, its base). */
static PyObject *array_of(QvPyState *qs, QvTensor *t, bool writable) {
  QvPyTensor *obj = qvpy_tensor_new(qs);
  if (!obj) {
    qv_tensor_reset(t);
    return NULL;
  }
  obj->t = *t;
  memset(t, 0, sizeof *t);
  PyObject *a = qvpy_tensor_to_numpy(obj, NULL);
  Py_DECREF(obj);
  if (a && writable) PyArray_ENABLEFLAGS((PyArrayObject *)a, NPY_ARRAY_WRITEABLE);
  return a;
}

static int parse_column(PyObject *obj, const char **out) {
  *out = NULL;
  if (obj == Py_None) return 0;
  if (!PyUnicode_Check(obj)) {
    PyErr_Format(PyExc_TypeError, "column must be a str or None, not %.100s", Py_TYPE(obj)->tp_name);
    return -1;
  }
  Py_ssize_t n;
  *out = PyUnicode_AsUTF8AndSize(obj, &n);
  if (!*out) return -1;
  if ((size_t)n != strlen(*out)) {
    PyErr_SetString(PyExc_ValueError, "column must not contain NUL");
    return -1;
  }
  return 0;
}

static PyObject *py_read_tensor_column(PyObject *m, PyObject *args, PyObject *kwargs) {
  QvPyState *qs = qvpy_state(m);
  static char *kw[] = {"source", "column", "batch", "null_fill", NULL};
  PyObject *source, *column = Py_None, *batch = Py_None;
  int null_fill = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|OOp", kw, &source, &column, &batch, &null_fill))
    return NULL;
  ColumnRead r;
  memset(&r, 0, sizeof r);
  r.batch = -1;
  r.null_fill = null_fill != 0;
  if (parse_column(column, &r.column) < 0) return NULL;
  if (batch != Py_None) {
    r.batch = PyLong_AsLongLong(batch);
    if (r.batch == -1 && PyErr_Occurred()) return NULL;
    if (r.batch < 0) {
      PyErr_Format(PyExc_IndexError, "batch=%lld is negative", r.batch);
      return NULL;
    }
  }
  if (qvpy_with_source(qs, source, read_column_call, &r) < 0) {
    column_read_reset(&r);
    return NULL;
  }
  PyObject *arrays = PyList_New(r.n), *nulls = PyList_New(r.n);
  for (int64_t i = 0; arrays && nulls && i < r.n; i++) {
    PyObject *a = array_of(qs, &r.tensors[i], r.is_null[i]);
    PyObject *l = PyList_New(0);
    if (!a || !l) {
      Py_XDECREF(a);
      Py_XDECREF(l);
      Py_CLEAR(arrays);
      break;
    }
    PyList_SET_ITEM(arrays, i, a);
    PyList_SET_ITEM(nulls, i, l);
  }
  for (int64_t k = 0; arrays && nulls && k < r.n_nulls; k++) {
    PyObject *v = PyLong_FromLongLong(r.null_row[k]);
    if (!v || PyList_Append(PyList_GET_ITEM(nulls, r.null_stack[k]), v) < 0) Py_CLEAR(arrays);
    Py_XDECREF(v);
  }
  column_read_reset(&r);
  if (!arrays || !nulls) {
    Py_XDECREF(arrays);
    Py_XDECREF(nulls);
    return NULL;
  }
  return Py_BuildValue("(NN)", arrays, nulls);
}

static PyObject *py_read_tensor_cells(PyObject *m, PyObject *args, PyObject *kwargs) {
  QvPyState *qs = qvpy_state(m);
  static char *kw[] = {"source", "column", NULL};
  PyObject *source, *column = Py_None;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|O", kw, &source, &column)) return NULL;
  ColumnRead r;
  memset(&r, 0, sizeof r);
  r.batch = -1;
  r.cells = true;
  if (parse_column(column, &r.column) < 0) return NULL;
  if (qvpy_with_source(qs, source, read_column_call, &r) < 0) {
    column_read_reset(&r);
    return NULL;
  }
  PyObject *list = PyList_New(r.n);
  for (int64_t i = 0; list && i < r.n; i++) {
    PyObject *a;
    if (r.is_null[i]) {
      Py_INCREF(Py_None);
      a = Py_None;
    } else {
      a = array_of(qs, &r.tensors[i], false);
    }
    if (!a) {
      Py_CLEAR(list);
      break;
    }
    PyList_SET_ITEM(list, i, a);
  }
  column_read_reset(&r);
  return list;
}

/* ---- writing */

/* dim_names: None or a sequence of n str (a str itself is a TypeError). */
static int parse_cell_names(PyObject *obj, int64_t n, const char **names, PyObject **keep) {
  *keep = NULL;
  if (obj == Py_None) return 0;
  if (PyUnicode_Check(obj) || PyBytes_Check(obj)) {
    PyErr_SetString(PyExc_TypeError, "dim_names must be a list of str, not a str");
    return -1;
  }
  return qvpy_parse_names(obj, n, names, keep);
}

/* A variable_shape_tensor column from a list of arrays (None: null). */
static int build_variable(QvPyState *qs, PyObject *seq, PyObject *dim_names, const char *name,
                          QvPyBatchWrite *w) {
  Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
  PyArrayObject **arrays = calloc((size_t)(n ? n : 1), sizeof *arrays);
  QvTensor *cells = calloc((size_t)(n ? n : 1), sizeof *cells);
  const QvTensor **ptrs = calloc((size_t)(n ? n : 1), sizeof *ptrs);
  PyObject *keep = NULL;
  int rc = -1;
  if (!arrays || !cells || !ptrs) {
    PyErr_NoMemory();
    goto out;
  }
  QvTensorColumnType type;
  memset(&type, 0, sizeof type);
  type.kind = QV_TENSOR_COLUMN_VARIABLE_SHAPE;
  int first = -1;
  for (Py_ssize_t i = 0; i < n; i++) {
    PyObject *item = PySequence_Fast_GET_ITEM(seq, i);
    if (item == Py_None) continue;
    arrays[i] = qvpy_usable_array(qs, item);
    if (!arrays[i]) goto out;
    QvArrowType vt;
    if (qvpy_value_type_of_array(qs, arrays[i], &vt) < 0) goto out;
    int nd = PyArray_NDIM(arrays[i]);
    if (first < 0) {
      if (nd == 0) {
        PyErr_Format(PyExc_ValueError, "data[%zd] is 0-d: a tensor cell has at least one dim", i);
        goto out;
      }
      first = (int)i;
      type.value_type = vt;
      type.ndim = nd;
      type.has_uniform_shape = true;
      for (int k = 0; k < nd; k++) type.shape[k] = PyArray_DIMS(arrays[i])[k];
    } else {
      if (nd != type.ndim || vt != type.value_type) {
        PyErr_Format(PyExc_ValueError,
                     "data[%zd] is a %d-d %s array, data[%d] a %d-d %s one: the cells of a column "
                     "share a dtype and a number of dims",
                     i, nd, qv_arrow_type_name(vt), first, (int)type.ndim,
                     qv_arrow_type_name(type.value_type));
        goto out;
      }
      for (int k = 0; k < nd; k++)
        if (type.shape[k] != PyArray_DIMS(arrays[i])[k]) type.shape[k] = -1;
    }
    if (qvpy_tensor_from_array(qs, arrays[i], NULL, &cells[i]) < 0) goto out;
    ptrs[i] = &cells[i];
  }
  if (first < 0) {
    PyErr_SetString(PyExc_ValueError,
                    "no cell that is not None: the dtype and dims of the column are unknown");
    goto out;
  }
  /* uniform_shape only when some extent agrees across the cells */
  bool any = false;
  for (int k = 0; k < type.ndim; k++) any |= type.shape[k] >= 0;
  type.has_uniform_shape = any;
  if (!any)
    for (int k = 0; k < type.ndim; k++) type.shape[k] = -1;
  const char *names[QV_TENSOR_MAX_NDIM];
  if (parse_cell_names(dim_names, type.ndim, names, &keep) < 0) goto out;
  if (keep) type.dim_names = names;
  QvError err;
  qv_error_clear(&err);
  struct ArrowSchema field;
  struct ArrowArray column;
  QvStatus st;
  QVPY_BEGIN_CALL
  st = qv_tensor_column_build(&type, name, NULL, ptrs, n, &field, &column, &err);
  if (st == QV_OK) {
    st = qv_tensor_column_to_batch(&field, &column, &w->schema, &w->batch, &err);
    if (st) {
      field.release(&field);
      column.release(&column);
    }
  }
  QVPY_END_CALL
  if (st) {
    qvpy_raise(qs, st, &err);
    goto out;
  }
  rc = 0;
out:
  for (Py_ssize_t i = 0; arrays && cells && i < n; i++) {
    qv_tensor_reset(&cells[i]);
    Py_XDECREF(arrays[i]);
  }
  free(arrays);
  free(cells);
  free(ptrs);
  Py_XDECREF(keep);
  return rc;
}

/* A fixed_shape_tensor column from an ndarray [n, ...]: a view of it, the
 * layout as `permutation` when it is a permuted row-major one. `a` must
 * outlive the write (the batch views its memory). */
static int build_fixed(QvPyState *qs, PyArrayObject *a, PyObject *dim_names, const char *name,
                       QvPyBatchWrite *w) {
  int nd = PyArray_NDIM(a);
  if (nd < 2) {
    PyErr_Format(PyExc_ValueError,
                 "data must be an array [n, ...] of at least 2 dims (cells of at least one dim), "
                 "not %d-d",
                 nd);
    return -1;
  }
  const char *names[QV_TENSOR_MAX_NDIM];
  PyObject *keep = NULL;
  if (parse_cell_names(dim_names, nd - 1, names + 1, &keep) < 0) return -1;
  names[0] = "";
  QvTensor t;
  if (qvpy_tensor_from_array(qs, a, keep ? names : NULL, &t) < 0) {
    Py_XDECREF(keep);
    return -1;
  }
  QvError err;
  qv_error_clear(&err);
  struct ArrowSchema field;
  struct ArrowArray column;
  QvTensorUnstackOptions uo = {.struct_size = sizeof uo, .name = name};
  QvStatus st;
  QVPY_BEGIN_CALL
  st = qv_tensor_column_unstack(&t, &uo, &field, &column, &err);
  if (st == QV_OK) {
    st = qv_tensor_column_to_batch(&field, &column, &w->schema, &w->batch, &err);
    if (st) {
      field.release(&field);
      column.release(&column);
    }
  }
  QVPY_END_CALL
  qv_tensor_reset(&t);
  Py_XDECREF(keep);
  if (st) return qvpy_raise(qs, st, &err), -1;
  return 0;
}

static PyObject *py_write_tensor_column(PyObject *m, PyObject *args, PyObject *kwargs) {
  QvPyState *qs = qvpy_state(m);
  static char *kw[] = {"dest", "data", "name", "dim_names", "file", "fsync", NULL};
  PyObject *dest, *data, *dim_names = Py_None;
  const char *name = "tensor";
  int file = 0, fsync = 1;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OO|sOp$p", kw, &dest, &data, &name, &dim_names,
                                   &file, &fsync))
    return NULL;
  QvPyBatchWrite w;
  memset(&w, 0, sizeof w);
  w.file = file != 0;
  PyArrayObject *a = NULL;
  int rc;
  if (PyList_Check(data) || PyTuple_Check(data)) {
    PyObject *seq = PySequence_Fast(data, "data must be an ndarray or a list of ndarrays");
    if (!seq) return NULL;
    rc = build_variable(qs, seq, dim_names, name, &w);
    Py_DECREF(seq);
  } else {
    a = qvpy_usable_array(qs, data);
    if (!a) return NULL;
    rc = build_fixed(qs, a, dim_names, name, &w);
  }
  PyObject *result = NULL;
  if (rc == 0) result = qvpy_with_sink(qs, dest, fsync, qvpy_write_batch_call, &w);
  if (w.batch.release) w.batch.release(&w.batch);
  if (w.schema.release) w.schema.release(&w.schema);
  Py_XDECREF(a);
  return result;
}

PyMethodDef qvpy_tensor_column_methods[] = {
    {"_read_tensor_column", (PyCFunction)(void (*)(void))py_read_tensor_column,
     METH_VARARGS | METH_KEYWORDS,
     "_read_tensor_column(source, column=None, batch=None, null_fill=False)\n--\n\n"
     "([one ndarray per batch read], [the null rows of each]) (see quiver.read_tensor_column)."},
    {"_read_tensor_cells", (PyCFunction)(void (*)(void))py_read_tensor_cells,
     METH_VARARGS | METH_KEYWORDS,
     "_read_tensor_cells(source, column=None)\n--\n\nEvery cell as a read-only view, None for "
     "null cells (see quiver.read_tensor_cells)."},
    {"_write_tensor_column", (PyCFunction)(void (*)(void))py_write_tensor_column,
     METH_VARARGS | METH_KEYWORDS,
     "_write_tensor_column(dest, data, name='tensor', dim_names=None, file=False)\n--\n\n"
     "See quiver.write_tensor_column."},
    {NULL, NULL, 0, NULL}};
