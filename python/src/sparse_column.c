/* Sparse columns (quiver.sparse_tensor / quiver.sparse_vector,
 * docs/sparse-tensor-extension.md) and quiver migrate for Python:
 *   _read_sparse_column(source, column=None) -> (kind, [_Sparse or None])
 *     a vector column: one CSR _Sparse per record batch, viewing the
 *     column's buffers (the list offsets are the indptr); a tensor column:
 *     one _Sparse per row (a view of the cell), None for a null row;
 *   _write_sparse_column(dest, tensors, name, vector, file)
 *     a vector column of one CSR tensor is a view of its buffers; otherwise
 *     the cells are copied once into the column (qv_sparse_column_build);
 *   _migrate(source, dest, to_messages, split, file, name, max_output,
 *            threads) -> [paths written]. */
#include "qvpy.h"

#include <stdlib.h>
#include <string.h>

#include "quiver/migrate.h"
#include "quiver/recordbatch_ipc.h"
#include "quiver/sparse_column.h"
#include "quiver/tensor_column.h"

/* ---- reading */

typedef struct SparseRead {
  const char *column; /* NULL: the only sparse column */
  QvSparseColumnKind kind;
  QvSparseTensor *items;
  bool *null;
  int64_t n, cap;
} SparseRead;

static void sparse_read_free(SparseRead *r) {
  for (int64_t i = 0; i < r->n; i++) qv_sparse_reset(&r->items[i]);
  free(r->items);
  free(r->null);
}

static QvStatus push(SparseRead *r, QvError *err) {
  if (r->n == r->cap) {
    int64_t nc = r->cap ? 2 * r->cap : 16;
    QvSparseTensor *ni = realloc(r->items, (size_t)nc * sizeof *ni);
    if (ni == NULL) return qv_error_set(err, QV_ENOMEM, "out of memory");
    r->items = ni;
    bool *nn = realloc(r->null, (size_t)nc * sizeof *nn);
    if (nn == NULL) return qv_error_set(err, QV_ENOMEM, "out of memory");
    r->null = nn;
    r->cap = nc;
  }
  memset(&r->items[r->n], 0, sizeof r->items[r->n]);
  r->null[r->n] = false;
  r->n++;
  return QV_OK;
}

static QvStatus find_sparse(const struct ArrowSchema *schema, const char *column, int64_t *out,
                            QvSparseColumnKind *kind, QvError *err) {
  int64_t idx = -1;
  for (int64_t i = 0; i < schema->n_children; i++) {
    const struct ArrowSchema *f = schema->children[i];
    QvSparseColumnType t;
    memset(&t, 0, sizeof t);
    QvStatus st = qv_sparse_column_type_from_field(f, &t, err);
    QvSparseColumnKind k = t.kind;
    qv_sparse_column_type_reset(&t);
    if (column != NULL) {
      if (f->name == NULL || strcmp(f->name, column) != 0) continue;
      if (st) return st;
      if (k == QV_SPARSE_COLUMN_NONE)
        return qv_error_set(err, QV_EINVAL, "column '%s' is no quiver.sparse_tensor or "
                            "quiver.sparse_vector column", column);
      *out = i;
      *kind = k;
      return QV_OK;
    }
    if (st != QV_OK || k == QV_SPARSE_COLUMN_NONE) continue;
    if (idx >= 0)
      return qv_error_set(err, QV_EINVAL, "several sparse columns: name one with column=");
    idx = i;
    *kind = k;
  }
  if (idx < 0)
    return column ? qv_error_set(err, QV_EINVAL, "no column named '%s'", column)
                  : qv_error_set(err, QV_EINVAL, "no quiver.sparse_tensor or "
                                                 "quiver.sparse_vector column");
  *out = idx;
  return QV_OK;
}

static QvStatus read_call(QvSource *src, void *ctx, QvError *err) {
  SparseRead *r = ctx;
  struct ArrowArrayStream s;
  /* the reader's cheap checks (bounds of every buffer), then the sparse
   * column's full check (qv_sparse_column_init: offsets, indices, every
   * rule) once: the reader's full check would scan the offsets a second time
   * and pre-fault the value buffers, which nothing else here touches */
  QvRbReadOptions ro = {.struct_size = sizeof ro, .validate = QV_VALIDATE_CHEAP};
  QvStatus st = qv_rb_stream_reader_new(&s, src, &ro, err);
  if (st) return st;
  struct ArrowSchema schema;
  memset(&schema, 0, sizeof schema);
  int64_t idx = -1;
  st = qv_rb_stream_get_schema(&s, &schema, err);
  if (st == QV_OK) st = find_sparse(&schema, r->column, &idx, &r->kind, err);
  for (int64_t b = 0; st == QV_OK; b++) {
    struct ArrowArray batch;
    st = qv_rb_stream_get_next(&s, &batch, err);
    if (st == QV_EOS) {
      st = QV_OK;
      break;
    }
    if (st) break;
    struct ArrowArray cells;
    st = qv_array_share(batch.children[idx], &cells, err);
    batch.release(&batch);
    if (st) break;
    QvSparseColumn col;
    st = qv_sparse_column_init(&col, schema.children[idx], &cells, NULL, err);
    if (cells.release) cells.release(&cells);
    if (st) break;
    if (r->kind == QV_SPARSE_COLUMN_VECTOR) {
      if ((st = push(r, err)) == QV_OK)
        st = qv_sparse_vector_stack(&col, NULL, &r->items[r->n - 1], err);
      if (st) qv_error_prefix(err, "batch %lld", (long long)b);
    } else {
      for (int64_t i = 0; i < col.length && st == QV_OK; i++) {
        if ((st = push(r, err)) != QV_OK) break;
        if (qv_sparse_column_is_null(&col, i))
          r->null[r->n - 1] = true;
        else
          st = qv_sparse_column_cell(&col, i, &r->items[r->n - 1], err);
      }
    }
    qv_sparse_column_reset(&col);
  }
  if (schema.release) schema.release(&schema);
  s.release(&s);
  return st;
}

static PyObject *py_read_sparse_column(PyObject *m, PyObject *args, PyObject *kwargs) {
  QvPyState *qs = qvpy_state(m);
  static char *kw[] = {"source", "column", NULL};
  PyObject *source, *column = Py_None;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|O", kw, &source, &column)) return NULL;
  SparseRead r;
  memset(&r, 0, sizeof r);
  if (column != Py_None && (r.column = PyUnicode_AsUTF8(column)) == NULL) return NULL;
  if (qvpy_with_source(qs, source, read_call, &r) < 0) {
    sparse_read_free(&r);
    return NULL;
  }
  PyObject *list = PyList_New(r.n);
  for (int64_t i = 0; list && i < r.n; i++) {
    PyObject *item;
    if (r.null[i]) {
      Py_INCREF(Py_None);
      item = Py_None;
    } else {
      QvPySparse *sp = qvpy_sparse_new(qs);
      if (sp == NULL) {
        Py_CLEAR(list);
        break;
      }
      sp->s = r.items[i]; /* moved */
      memset(&r.items[i], 0, sizeof r.items[i]);
      item = (PyObject *)sp;
    }
    PyList_SET_ITEM(list, i, item);
  }
  sparse_read_free(&r);
  if (list == NULL) return NULL;
  return Py_BuildValue("(sN)", r.kind == QV_SPARSE_COLUMN_VECTOR ? "vector" : "tensor", list);
}

/* ---- writing */

static PyObject *py_write_sparse_column(PyObject *m, PyObject *args, PyObject *kwargs) {
  QvPyState *qs = qvpy_state(m);
  static char *kw[] = {"dest", "tensors", "name", "vector", "file", "fsync", NULL};
  PyObject *dest, *tensors;
  const char *name = "sparse";
  int vector = 0, file = 0, fsync = 1;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OO|spp$p", kw, &dest, &tensors, &name, &vector,
                                   &file, &fsync))
    return NULL;
  PyObject *seq = PySequence_Fast(tensors, "tensors must be a sequence of _Sparse or None");
  if (seq == NULL) return NULL;
  Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
  const QvSparseTensor **cells = calloc((size_t)n + 1, sizeof *cells);
  if (cells == NULL) {
    Py_DECREF(seq);
    return PyErr_NoMemory();
  }
  for (Py_ssize_t i = 0; i < n; i++) {
    PyObject *o = PySequence_Fast_GET_ITEM(seq, i);
    if (o == Py_None) continue;
    if (!PyObject_TypeCheck(o, qs->SparseType)) {
      free(cells);
      Py_DECREF(seq);
      PyErr_Format(PyExc_TypeError, "tensors[%zd] is no quiver._Sparse", i);
      return NULL;
    }
    cells[i] = &((QvPySparse *)o)->s;
  }
  QvPyBatchWrite w;
  memset(&w, 0, sizeof w);
  w.file = file;
  struct ArrowSchema field;
  struct ArrowArray col;
  QvError err;
  qv_error_clear(&err);
  QvStatus st;
  bool view = vector && n == 1 && cells[0] != NULL && cells[0]->format == QV_SPARSE_CSR;
  QVPY_BEGIN_CALL
  if (view) {
    QvSparseUnstackOptions uo = {.struct_size = sizeof uo, .name = name};
    st = qv_sparse_vector_unstack(cells[0], &uo, &field, &col, &err);
  } else {
    QvSparseBuildOptions bo = {.struct_size = sizeof bo, .name = name,
                               .kind = vector ? QV_SPARSE_COLUMN_VECTOR : QV_SPARSE_COLUMN_TENSOR};
    st = qv_sparse_column_build(cells, (int64_t)n, &bo, &field, &col, &err);
  }
  if (st == QV_OK) {
    st = qv_tensor_column_to_batch(&field, &col, &w.schema, &w.batch, &err);
    if (st) {
      field.release(&field);
      col.release(&col);
    }
  }
  QVPY_END_CALL
  free(cells);
  if (st) {
    Py_DECREF(seq);
    return qvpy_raise(qs, st, &err);
  }
  PyObject *r = qvpy_with_sink(qs, dest, fsync, qvpy_write_batch_call, &w);
  w.batch.release(&w.batch);
  w.schema.release(&w.schema);
  Py_DECREF(seq); /* after the write: the view's tensors are the caller's */
  return r;
}

/* ---- migrate */

typedef struct MigrateCall {
  const char *dest; /* NULL: a file object's sink (migrate_sink_call) */
  QvSource *src;    /* the source of migrate_sink_call */
  bool back, split;
  unsigned sink_flags; /* QV_SINK_NO_FSYNC after fsync=False */
  QvMigrateOptions o;
  char **paths;
  int n_paths;
  QvMigrateStats stats;
} MigrateCall;

static QvStatus open_group(void *ctx, const char *group, QvSink **sink, QvError *err) {
  MigrateCall *c = ctx;
  char *path;
  QvStatus st = qv_migrate_split_path(c->dest, group, &path, err);
  if (st) return st;
  char **np = realloc(c->paths, (size_t)(c->n_paths + 1) * sizeof *np);
  if (np == NULL) {
    free(path);
    return qv_error_set(err, QV_ENOMEM, "out of memory");
  }
  c->paths = np;
  c->paths[c->n_paths++] = path;
  return qv_sink_new_path(sink, path, c->sink_flags, err);
}

static QvStatus migrate_call(QvSource *src, void *ctx, QvError *err) {
  MigrateCall *c = ctx;
  if (c->split) return qv_migrate_split(src, open_group, c, &c->o, &c->stats, err);
  QvSink *sink;
  QvStatus st = qv_sink_new_path(&sink, c->dest, c->sink_flags, err);
  if (st) return st;
  st = c->back ? qv_migrate_to_messages(src, sink, &c->o, &c->stats, err)
               : qv_migrate(src, sink, &c->o, &c->stats, err);
  if (st == QV_OK) st = qv_sink_finish(sink, err);
  qv_sink_free(sink);
  if (st == QV_OK) {
    c->paths = malloc(sizeof *c->paths);
    if (c->paths == NULL || (c->paths[0] = strdup(c->dest)) == NULL)
      return qv_error_set(err, QV_ENOMEM, "out of memory");
    c->n_paths = 1;
  }
  return st;
}

/* A file object as dest: the table (or the messages) written through its
 * write() as they are made, no gathered copy. */
static QvStatus migrate_sink_call(QvSink *sink, void *ctx, QvError *err) {
  MigrateCall *c = ctx;
  return c->back ? qv_migrate_to_messages(c->src, sink, &c->o, &c->stats, err)
                 : qv_migrate(c->src, sink, &c->o, &c->stats, err);
}

static void migrate_notice(void *ctx, const char *message) {
  (void)ctx;
  PyGILState_STATE g = PyGILState_Ensure();
  PyErr_WarnEx(PyExc_UserWarning, message, 1);
  PyErr_Clear(); /* a warning filter set to "error" cannot stop the copy */
  PyGILState_Release(g);
}

static PyObject *py_migrate(PyObject *m, PyObject *args, PyObject *kwargs) {
  QvPyState *qs = qvpy_state(m);
  static char *kw[] = {"source", "dest", "to_messages", "split", "file", "name",
                       "max_output", "threads", "fsync", NULL};
  PyObject *source, *dest_obj, *name_obj = Py_None;
  int back = 0, split = 0, file = 0, threads = 0, fsync = 1;
  long long max_output = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OO|pppOLi$p", kw, &source, &dest_obj, &back,
                                   &split, &file, &name_obj, &max_output, &threads, &fsync))
    return NULL;
  bool to_object = PyObject_HasAttrString(dest_obj, "write");
  if (to_object && split) {
    PyErr_SetString(PyExc_TypeError, "split writes one file per group: dest must be a path");
    return NULL;
  }
  PyObject *dest_bytes = NULL;
  if (!to_object && !PyUnicode_FSConverter(dest_obj, &dest_bytes)) return NULL;
  MigrateCall c;
  memset(&c, 0, sizeof c);
  c.dest = dest_bytes ? PyBytes_AS_STRING(dest_bytes) : NULL;
  c.back = back;
  c.split = split;
  c.sink_flags = fsync ? 0 : QV_SINK_NO_FSYNC;
  c.o.struct_size = sizeof c.o;
  c.o.format = file ? QV_IPC_FORMAT_FILE : QV_IPC_FORMAT_STREAM;
  c.o.max_output_size = max_output;
  c.o.threads = threads;
  c.o.notice = migrate_notice;
  if (name_obj != Py_None && (c.o.name = PyUnicode_AsUTF8(name_obj)) == NULL) {
    Py_XDECREF(dest_bytes);
    return NULL;
  }
  if (to_object) {
    if (qvpy_open_source(qs, source, &c.src) < 0) return NULL;
    PyObject *r = qvpy_with_sink(qs, dest_obj, fsync, migrate_sink_call, &c);
    QVPY_BEGIN_CALL
    qv_source_free(c.src);
    QVPY_END_CALL
    if (r == NULL) return NULL;
    Py_DECREF(r);
    return Py_BuildValue("[O]", dest_obj);
  }
  int rc = qvpy_with_source(qs, source, migrate_call, &c);
  Py_DECREF(dest_bytes);
  PyObject *list = rc < 0 ? NULL : PyList_New(c.n_paths);
  for (int i = 0; i < c.n_paths; i++) {
    if (list) {
      PyObject *p = PyUnicode_DecodeFSDefault(c.paths[i]);
      if (p == NULL) Py_CLEAR(list);
      else PyList_SET_ITEM(list, i, p);
    }
    free(c.paths[i]);
  }
  free(c.paths);
  return list;
}

PyMethodDef qvpy_sparse_column_methods[] = {
    {"_read_sparse_column", (PyCFunction)(void (*)(void))py_read_sparse_column,
     METH_VARARGS | METH_KEYWORDS,
     "_read_sparse_column(source, column=None)\n--\n\n('vector', [CSR _Sparse per batch]) or "
     "('tensor', [_Sparse or None per row]) (see quiver.read_sparse_column)."},
    {"_write_sparse_column", (PyCFunction)(void (*)(void))py_write_sparse_column,
     METH_VARARGS | METH_KEYWORDS,
     "_write_sparse_column(dest, tensors, name='sparse', vector=False, file=False)\n--\n\n"
     "See quiver.write_sparse_column."},
    {"_migrate", (PyCFunction)(void (*)(void))py_migrate, METH_VARARGS | METH_KEYWORDS,
     "_migrate(source, dest, to_messages=False, split=False, file=False, name=None, "
     "max_output=0, threads=0)\n--\n\nSee quiver.migrate; the paths written (or [dest], a "
     "file object)."},
    {NULL, NULL, 0, NULL}};
