/* Record batches read from Python without pyarrow: the C half of
 * quiver.RecordBatch / quiver.Column (python/quiver/_records.py).
 *
 * A batch is a PyCapsule "quiver._batch" holding the batch's ArrowArray, a
 * copy of its schema and a QvArrayView over both. Arrays produced by the
 * library keep their memory (the file mapping, the caller's buffer) alive
 * through their owners, so a batch outlives its reader and its source, and
 * every ndarray viewing a batch has the capsule as its base.
 *
 * Columns are addressed as (batch, column index, start, length): `start` is
 * the row of the batch (slices only move it), the view's own offsets are
 * applied here. The batch was fully validated by the stream reader, so the
 * getters of quiver/array.h are safe on every index in range. */
#include "qvpy.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "quiver/advanced.h"
#include "quiver/array.h"
#include "quiver/c_data.h"

#define BATCH_CAPSULE "quiver._batch"

typedef struct BatchHold {
  struct ArrowSchema schema;
  struct ArrowArray array;
  QvArrayView view;
  bool view_ready;
} BatchHold;

static void batch_hold_free(BatchHold *h) {
  if (h->view_ready) qv_array_view_reset(&h->view);
  if (h->array.release) h->array.release(&h->array);
  if (h->schema.release) h->schema.release(&h->schema);
  free(h);
}

static void batch_capsule_free(PyObject *cap) {
  BatchHold *h = PyCapsule_GetPointer(cap, BATCH_CAPSULE);
  if (!h) {
    PyErr_Clear();
    return;
  }
  batch_hold_free(h);
}

/* A batch capsule's hold; schema-only capsules (read_json's schema) have
 * no array and serve _schema_fields only. */
static BatchHold *get_batch(PyObject *cap) {
  BatchHold *h = PyCapsule_GetPointer(cap, BATCH_CAPSULE);
  if (h && !h->array.release) {
    PyErr_SetString(PyExc_ValueError, "this capsule holds a schema, not a batch");
    return NULL;
  }
  return h;
}

PyObject *qvpy_batch_capsule(QvPyState *qs, const struct ArrowSchema *schema,
                             const struct ArrowArray *batch, QvValidateLevel level) {
  BatchHold *h = calloc(1, sizeof *h);
  if (!h) return PyErr_NoMemory();
  QvError err;
  qv_error_clear(&err);
  QvStatus st = qv_arrow_schema_copy(schema, &h->schema, &err);
  if (st == QV_OK && batch) st = qv_array_share(batch, &h->array, &err);
  if (st == QV_OK && batch) st = qv_array_view_init(&h->view, &h->schema, &err);
  if (st == QV_OK && batch) {
    h->view_ready = true;
    st = qv_array_view_set_array(&h->view, &h->array, level, &err);
  }
  if (st == QV_OK && strcmp(h->schema.format, "+s") != 0)
    st = qv_error_set(&err, QV_EINVAL, "a record batch must be a struct array, not format '%s'",
                      h->schema.format);
  if (st) {
    batch_hold_free(h);
    return qvpy_raise(qs, st, &err);
  }
  PyObject *c = PyCapsule_New(h, BATCH_CAPSULE, batch_capsule_free);
  if (!c) batch_hold_free(h);
  return c;
}

/* ---- _stream_next(stream_capsule): the next batch capsule, or None */

typedef struct NextCall {
  struct ArrowArrayStream *stream;
  BatchHold *h;
} NextCall;

static QvStatus next_call(struct ArrowArrayStream *s, BatchHold *h, QvError *err) {
  QvStatus st = qv_rb_stream_get_next(s, &h->array, err);
  if (st == QV_EOS || (st == QV_OK && !h->array.release)) {
    qv_error_clear(err);
    return QV_OK; /* the end: no array */
  }
  if (st) return st;
  st = qv_rb_stream_get_schema(s, &h->schema, err);
  if (st == QV_OK) st = qv_array_view_init(&h->view, &h->schema, err);
  if (st == QV_OK) {
    h->view_ready = true;
    /* the stream reader validated the batch in full; this derives sizes */
    st = qv_array_view_set_array(&h->view, &h->array, QV_VALIDATE_CHEAP, err);
  }
  if (st == QV_OK && h->view.type.type != QV_ARROW_STRUCT)
    st = qv_error_set(err, QV_EINVAL, "a record batch must be a struct array, not format '%s'",
                      h->schema.format);
  return st;
}

static PyObject *py_stream_next(PyObject *m, PyObject *cap) {
  QvPyState *qs = qvpy_state(m);
  struct ArrowArrayStream *s = PyCapsule_GetPointer(cap, "arrow_array_stream");
  if (!s) return NULL;
  if (!s->release) {
    PyErr_SetString(PyExc_ValueError, "the stream capsule was already consumed");
    return NULL;
  }
  BatchHold *h = calloc(1, sizeof *h);
  if (!h) return PyErr_NoMemory();
  QvError err;
  qv_error_clear(&err);
  QvStatus st;
  QVPY_BEGIN_CALL
  st = next_call(s, h, &err);
  QVPY_END_CALL
  if (st) {
    batch_hold_free(h);
    return qvpy_raise(qs, st, &err);
  }
  if (!h->array.release) {
    batch_hold_free(h);
    Py_RETURN_NONE;
  }
  PyObject *c = PyCapsule_New(h, BATCH_CAPSULE, batch_capsule_free);
  if (!c) batch_hold_free(h);
  return c;
}

/* ---- schemas as plain Python values */

static PyObject *text(const char *s, Py_ssize_t n) {
  return PyUnicode_DecodeUTF8(s, n, "surrogateescape");
}

static PyObject *metadata_dict(const char *md) {
  PyObject *d = PyDict_New();
  if (!d || !md) return d;
  QvArrowMetadataIter it;
  qv_arrow_metadata_iter_init(&it, md);
  const char *k, *v;
  int32_t kn, vn;
  while (qv_arrow_metadata_iter_next(&it, &k, &kn, &v, &vn)) {
    PyObject *ko = text(k, kn), *vo = ko ? text(v, vn) : NULL;
    int rc = vo ? PyDict_SetItem(d, ko, vo) : -1;
    Py_XDECREF(ko);
    Py_XDECREF(vo);
    if (rc < 0) return Py_DECREF(d), NULL;
  }
  return d;
}

/* The type as Arrow C++'s DataType::ToString spells it. */
static PyObject *type_text(QvPyState *qs, const struct ArrowSchema *s) {
  char *t = NULL;
  QvError err;
  qv_error_clear(&err);
  QvStatus st = qv_arrow_schema_to_string_alloc(s, 0, &t, &err);
  if (st) return qvpy_raise(qs, st, &err);
  PyObject *r = text(t, (Py_ssize_t)strlen(t));
  qv_free(t);
  return r;
}

/* {name, format, type, nullable, metadata, children, dictionary, ordered} */
static PyObject *field_dict(QvPyState *qs, const struct ArrowSchema *s, int depth) {
  if (depth > QV_ARRAY_MAX_DEPTH) {
    PyErr_SetString(PyExc_ValueError, "schema nested too deeply");
    return NULL;
  }
  PyObject *d = PyDict_New();
  if (!d) return NULL;
  const char *name = s->name ? s->name : "";
  if (qvpy_dict_put(d, "name", text(name, (Py_ssize_t)strlen(name))) < 0 ||
      qvpy_dict_put(d, "format", text(s->format, (Py_ssize_t)strlen(s->format))) < 0 ||
      qvpy_dict_put(d, "type", type_text(qs, s)) < 0 ||
      qvpy_dict_put(d, "nullable", PyBool_FromLong((s->flags & ARROW_FLAG_NULLABLE) != 0)) < 0 ||
      qvpy_dict_put(d, "ordered", PyBool_FromLong((s->flags & ARROW_FLAG_DICTIONARY_ORDERED) != 0)) < 0 ||
      qvpy_dict_put(d, "metadata", metadata_dict(s->metadata)) < 0)
    return Py_DECREF(d), NULL;
  PyObject *children = PyList_New(0);
  if (qvpy_dict_put(d, "children", children) < 0) return Py_DECREF(d), NULL;
  for (int64_t i = 0; i < s->n_children; i++) {
    PyObject *c = field_dict(qs, s->children[i], depth + 1);
    int rc = c ? PyList_Append(children, c) : -1;
    Py_XDECREF(c);
    if (rc < 0) return Py_DECREF(d), NULL;
  }
  PyObject *dict = s->dictionary ? field_dict(qs, s->dictionary, depth + 1) : Py_NewRef(Py_None);
  if (qvpy_dict_put(d, "dictionary", dict) < 0) return Py_DECREF(d), NULL;
  return d;
}

static const struct ArrowSchema *schema_of(QvPyState *qs, PyObject *cap, long long column);

/* _schema_fields(schema_capsule or batch capsule): the root's field dict */
static PyObject *py_schema_fields(PyObject *m, PyObject *cap) {
  QvPyState *qs = qvpy_state(m);
  const struct ArrowSchema *s = schema_of(qs, cap, -1);
  return s ? field_dict(qs, s, 0) : NULL;
}

/* ---- columns */

typedef struct ColumnRef {
  BatchHold *h;
  const QvArrayView *v; /* the column's view */
  int64_t start, length; /* logical rows of v */
} ColumnRef;

/* (batch, index, start, length) checked against the batch. */
static int parse_column(PyObject *args, ColumnRef *c, PyObject **cap, PyObject **extra) {
  long long index, start, length;
  *extra = NULL;
  if (!PyArg_ParseTuple(args, "OLLL|O", cap, &index, &start, &length, extra)) return -1;
  BatchHold *h = get_batch(*cap);
  if (!h) return -1;
  if (index < 0 || index >= h->view.n_children) {
    PyErr_Format(PyExc_IndexError, "column %lld out of range (the batch has %lld)", index,
                 (long long)h->view.n_children);
    return -1;
  }
  if (start < 0 || length < 0 || start > h->view.length || length > h->view.length - start) {
    PyErr_Format(PyExc_IndexError, "rows [%lld, %lld + %lld) outside the batch's %lld", start, start,
                 length, (long long)h->view.length);
    return -1;
  }
  c->h = h;
  c->v = &h->view.children[index];
  /* row r of a struct is row offset + r of its children */
  c->start = h->view.offset + start;
  c->length = length;
  return 0;
}

static bool has_nulls(const QvArrayView *v, int64_t start, int64_t n) {
  if (v->type.type == QV_ARROW_NULL) return n > 0;
  for (int64_t i = 0; i < n; i++)
    if (qv_array_view_is_null(v, start + i)) return true;
  return false;
}

/* ---- to_pylist */

typedef struct PyConv {
  QvPyState *qs;
  PyObject *values; /* the quiver._values module */
} PyConv;

static PyObject *call_helper(PyConv *cv, const char *fn, const char *fmt, ...) {
  PyObject *f = PyObject_GetAttrString(cv->values, fn);
  if (!f) return NULL;
  va_list ap;
  va_start(ap, fmt);
  PyObject *a = Py_VaBuildValue(fmt, ap);
  va_end(ap);
  PyObject *r = a ? PyObject_CallObject(f, a) : NULL;
  Py_XDECREF(a);
  Py_DECREF(f);
  return r;
}

static PyObject *py_value(PyConv *cv, const QvArrayView *v, int64_t i, int depth);

static PyObject *list_of(PyConv *cv, const QvArrayView *child, int64_t start, int64_t n, int depth) {
  PyObject *l = PyList_New((Py_ssize_t)n);
  for (int64_t j = 0; l && j < n; j++) {
    PyObject *x = py_value(cv, child, start + j, depth + 1);
    if (!x) Py_CLEAR(l);
    else PyList_SET_ITEM(l, (Py_ssize_t)j, x);
  }
  return l;
}

static PyObject *py_value(PyConv *cv, const QvArrayView *v, int64_t i, int depth) {
  if (depth > QV_ARRAY_MAX_DEPTH) {
    PyErr_SetString(cv->qs->InvalidError, "value nested too deeply");
    return NULL;
  }
  if (qv_array_view_is_null(v, i)) Py_RETURN_NONE;
  const QvArrowSchemaView *t = &v->type;
  const char *tz = NULL;
  switch (t->type) {
    case QV_ARROW_NULL: Py_RETURN_NONE;
    case QV_ARROW_DICTIONARY:
      return py_value(cv, v->dictionary, (int64_t)qv_array_view_get_uint(v, i), depth + 1);
    case QV_ARROW_BOOL: return PyBool_FromLong(qv_array_view_get_int(v, i) != 0);
    case QV_ARROW_INT8:
    case QV_ARROW_INT16:
    case QV_ARROW_INT32:
    case QV_ARROW_INT64:
    case QV_ARROW_UINT8:
    case QV_ARROW_UINT16:
    case QV_ARROW_UINT32: return PyLong_FromLongLong(qv_array_view_get_int(v, i));
    case QV_ARROW_UINT64: return PyLong_FromUnsignedLongLong(qv_array_view_get_uint(v, i));
    case QV_ARROW_FLOAT16:
    case QV_ARROW_FLOAT32:
    case QV_ARROW_FLOAT64: return PyFloat_FromDouble(qv_array_view_get_double(v, i));
    case QV_ARROW_STRING:
    case QV_ARROW_LARGE_STRING:
    case QV_ARROW_STRING_VIEW: {
      QvBytes b = qv_array_view_get_bytes(v, i);
      return PyUnicode_DecodeUTF8((const char *)b.data, (Py_ssize_t)b.size, "strict");
    }
    case QV_ARROW_BINARY:
    case QV_ARROW_LARGE_BINARY:
    case QV_ARROW_BINARY_VIEW:
    case QV_ARROW_FIXED_SIZE_BINARY: {
      QvBytes b = qv_array_view_get_bytes(v, i);
      return PyBytes_FromStringAndSize((const char *)b.data, (Py_ssize_t)b.size);
    }
    case QV_ARROW_DECIMAL32:
    case QV_ARROW_DECIMAL64:
    case QV_ARROW_DECIMAL128:
    case QV_ARROW_DECIMAL256: {
      char *s = NULL;
      QvError err;
      qv_error_clear(&err);
      QvStatus st = qv_array_view_format_human(v, i, 0, &s, &err);
      if (st) return qvpy_raise(cv->qs, st, &err);
      PyObject *r = call_helper(cv, "decimal_from", "(s)", s);
      qv_free(s);
      return r;
    }
    case QV_ARROW_DATE32: return call_helper(cv, "date_from_days", "(L)", (long long)qv_array_view_get_int(v, i));
    case QV_ARROW_DATE64: return call_helper(cv, "date_from_ms", "(L)", (long long)qv_array_view_get_int(v, i));
    case QV_ARROW_TIME32:
    case QV_ARROW_TIME64:
      return call_helper(cv, "time_from", "(Li)", (long long)qv_array_view_get_int(v, i), (int)t->time_unit);
    case QV_ARROW_TIMESTAMP:
      if (t->timezone && t->timezone_len > 0) tz = t->timezone;
      return call_helper(cv, "datetime_from", "(Lis#)", (long long)qv_array_view_get_int(v, i),
                         (int)t->time_unit, tz, (Py_ssize_t)(tz ? t->timezone_len : 0));
    case QV_ARROW_DURATION:
      return call_helper(cv, "timedelta_from", "(Li)", (long long)qv_array_view_get_int(v, i), (int)t->time_unit);
    case QV_ARROW_INTERVAL_MONTHS: return PyLong_FromLongLong(qv_array_view_get_int(v, i));
    case QV_ARROW_INTERVAL_DAY_TIME: {
      QvBytes b = qv_array_view_get_bytes(v, i);
      int32_t d[2];
      memcpy(d, b.data, sizeof d);
      return call_helper(cv, "day_time", "(ii)", (int)d[0], (int)d[1]);
    }
    case QV_ARROW_INTERVAL_MONTH_DAY_NANO: {
      QvBytes b = qv_array_view_get_bytes(v, i);
      int32_t md[2];
      int64_t ns;
      memcpy(md, b.data, sizeof md);
      memcpy(&ns, b.data + 8, sizeof ns);
      return call_helper(cv, "month_day_nano", "(iiL)", (int)md[0], (int)md[1], (long long)ns);
    }
    case QV_ARROW_LIST:
    case QV_ARROW_LARGE_LIST:
    case QV_ARROW_LIST_VIEW:
    case QV_ARROW_LARGE_LIST_VIEW:
    case QV_ARROW_FIXED_SIZE_LIST: {
      int64_t s, n;
      qv_array_view_get_list(v, i, &s, &n);
      return list_of(cv, &v->children[0], s, n, depth);
    }
    case QV_ARROW_MAP: {
      int64_t s, n;
      qv_array_view_get_list(v, i, &s, &n);
      const QvArrayView *entries = &v->children[0];
      PyObject *l = PyList_New((Py_ssize_t)n);
      for (int64_t j = 0; l && j < n; j++) {
        int64_t r = entries->offset + s + j;
        PyObject *k = py_value(cv, &entries->children[0], r, depth + 2);
        PyObject *x = k ? py_value(cv, &entries->children[1], r, depth + 2) : NULL;
        PyObject *pair = x ? PyTuple_Pack(2, k, x) : NULL;
        Py_XDECREF(k);
        Py_XDECREF(x);
        if (!pair) Py_CLEAR(l);
        else PyList_SET_ITEM(l, (Py_ssize_t)j, pair);
      }
      return l;
    }
    case QV_ARROW_STRUCT: {
      PyObject *d = PyDict_New();
      for (int64_t c = 0; d && c < v->n_children; c++) {
        const char *name = v->children[c].type.schema->name;
        if (!name) name = "";
        PyObject *k = text(name, (Py_ssize_t)strlen(name));
        PyObject *x = k ? py_value(cv, &v->children[c], v->offset + i, depth + 1) : NULL;
        if (!x || PyDict_SetItem(d, k, x) < 0) Py_CLEAR(d);
        Py_XDECREF(k);
        Py_XDECREF(x);
      }
      return d;
    }
    case QV_ARROW_SPARSE_UNION:
    case QV_ARROW_DENSE_UNION: {
      int64_t child, idx;
      qv_array_view_get_union(v, i, &child, &idx);
      if (child < 0) Py_RETURN_NONE;
      return py_value(cv, &v->children[child], idx, depth + 1);
    }
    case QV_ARROW_RUN_END_ENCODED:
      return py_value(cv, &v->children[1], qv_array_view_get_run(v, i), depth + 1);
    default: break;
  }
  PyErr_Format(cv->qs->NotSupportedError, "to_pylist: format '%s' is not supported",
               t->schema ? t->schema->format : "?");
  return NULL;
}

/* _column_pylist(batch, index, start, length) */
static PyObject *py_column_pylist(PyObject *m, PyObject *args) {
  ColumnRef c;
  PyObject *cap, *extra;
  if (parse_column(args, &c, &cap, &extra) < 0) return NULL;
  PyConv cv = {qvpy_state(m), PyImport_ImportModule("quiver._values")};
  if (!cv.values) return NULL;
  PyObject *l = list_of(&cv, c.v, c.start, c.length, 0);
  Py_DECREF(cv.values);
  return l;
}

/* _column_null_count(batch, index, start, length) */
static PyObject *py_column_null_count(PyObject *m, PyObject *args) {
  (void)m;
  ColumnRef c;
  PyObject *cap, *extra;
  if (parse_column(args, &c, &cap, &extra) < 0) return NULL;
  int64_t n = 0;
  if (c.v->type.type == QV_ARROW_NULL) n = c.length;
  else if (c.v->null_count != 0 || c.v->type.type == QV_ARROW_DICTIONARY ||
           c.v->type.type == QV_ARROW_SPARSE_UNION || c.v->type.type == QV_ARROW_DENSE_UNION ||
           c.v->type.type == QV_ARROW_RUN_END_ENCODED)
    for (int64_t i = 0; i < c.length; i++) n += qv_array_view_is_null(c.v, c.start + i);
  return PyLong_FromLongLong(n);
}

/* ---- to_numpy */

/* The NumPy dtype of a fixed-width leaf and whether its values can be
 * viewed as they are (else they are widened into a new array). */
static PyArray_Descr *leaf_descr(const QvArrowSchemaView *t, bool *view) {
  static const char *const units[] = {"s", "ms", "us", "ns"};
  char spec[16];
  *view = true;
  int npy = qvpy_npy_type_of(t->type);
  if (npy >= 0) return PyArray_DescrFromType(npy);
  switch (t->type) {
    case QV_ARROW_BOOL: *view = false; return PyArray_DescrFromType(NPY_BOOL);
    case QV_ARROW_DATE32: *view = false; snprintf(spec, sizeof spec, "M8[D]"); break;
    case QV_ARROW_DATE64: snprintf(spec, sizeof spec, "M8[ms]"); break;
    case QV_ARROW_TIMESTAMP: snprintf(spec, sizeof spec, "M8[%s]", units[t->time_unit & 3]); break;
    case QV_ARROW_DURATION: snprintf(spec, sizeof spec, "m8[%s]", units[t->time_unit & 3]); break;
    case QV_ARROW_TIME32:
      *view = false;
      snprintf(spec, sizeof spec, "m8[%s]", units[t->time_unit & 3]);
      break;
    case QV_ARROW_TIME64: snprintf(spec, sizeof spec, "m8[%s]", units[t->time_unit & 3]); break;
    default: return NULL;
  }
  PyObject *s = PyUnicode_FromString(spec);
  PyArray_Descr *d = NULL;
  if (s && !PyArray_DescrConverter(s, &d)) d = NULL;
  Py_XDECREF(s);
  return d;
}

static PyObject *null_mask(const QvArrayView *v, int64_t start, int64_t n) {
  if (!has_nulls(v, start, n)) Py_RETURN_NONE;
  npy_intp dims[1] = {(npy_intp)n};
  PyObject *mask = PyArray_ZEROS(1, dims, NPY_BOOL, 0);
  if (!mask) return NULL;
  npy_bool *p = PyArray_DATA((PyArrayObject *)mask);
  for (int64_t i = 0; i < n; i++) p[i] = qv_array_view_is_null(v, start + i);
  return mask;
}

static PyObject *leaf_array(QvPyState *qs, PyObject *cap, const QvArrayView *v, int64_t start, int64_t n);

/* Values of a dictionary column: the dictionary's values taken at the
 * indices (a copy). */
static PyObject *dictionary_array(QvPyState *qs, PyObject *cap, const QvArrayView *v, int64_t start,
                                  int64_t n) {
  const QvArrayView *dict = v->dictionary;
  if (has_nulls(dict, 0, dict->length)) {
    PyErr_SetString(qs->NotSupportedError,
                    "to_numpy: the column's dictionary holds nulls (use to_pylist())");
    return NULL;
  }
  PyObject *values = leaf_array(qs, cap, dict, 0, dict->length);
  if (!values) return NULL;
  npy_intp dims[1] = {(npy_intp)n};
  PyObject *idx = PyArray_ZEROS(1, dims, NPY_INTP, 0);
  if (!idx) return Py_DECREF(values), NULL;
  npy_intp *p = PyArray_DATA((PyArrayObject *)idx);
  /* null rows take index 0 (masked by the caller); the dictionary may then be empty */
  bool any_null = false;
  for (int64_t i = 0; i < n; i++) {
    bool null = qv_array_view_is_null(v, start + i);
    any_null |= null;
    p[i] = null ? 0 : (npy_intp)qv_array_view_get_uint(v, start + i);
  }
  PyObject *r;
  if (any_null && dict->length == 0) {
    PyArray_Descr *d = PyArray_DESCR((PyArrayObject *)values);
    Py_INCREF(d);
    r = PyArray_Zeros(1, dims, d, 0);
  } else {
    r = PyObject_GetItem(values, idx);
  }
  Py_DECREF(values);
  Py_DECREF(idx);
  return r;
}

/* The values of rows [start, start + n) of a fixed-width view (nested
 * fixed-size lists of them become trailing dimensions). */
static PyObject *leaf_array(QvPyState *qs, PyObject *cap, const QvArrayView *v, int64_t start, int64_t n) {
  if (v->type.type == QV_ARROW_DICTIONARY) return dictionary_array(qs, cap, v, start, n);
  npy_intp dims[QV_ARRAY_MAX_DEPTH + 1];
  int nd = 1;
  dims[0] = (npy_intp)n;
  int64_t count = n;
  while (v->type.type == QV_ARROW_FIXED_SIZE_LIST) {
    if (nd > 1 && has_nulls(v, start, count)) {
      PyErr_SetString(qs->NotSupportedError,
                      "to_numpy: null lists inside the cells of a fixed-size list (use to_pylist())");
      return NULL;
    }
    if (nd >= QV_ARRAY_MAX_DEPTH) {
      PyErr_SetString(qs->InvalidError, "fixed-size lists nested too deeply");
      return NULL;
    }
    int32_t size = v->type.fixed_size;
    dims[nd++] = size;
    /* the cells of rows [start, start + count) */
    start = (v->offset + start) * size;
    count *= size;
    v = &v->children[0];
  }
  bool view;
  PyArray_Descr *d = leaf_descr(&v->type, &view);
  if (!d) {
    if (!PyErr_Occurred())
      PyErr_Format(qs->NotSupportedError,
                   "to_numpy: format '%s' has no NumPy dtype (numeric, boolean, temporal and "
                   "fixed-size lists of them do; use to_pylist())",
                   v->type.schema->format);
    return NULL;
  }
  if (nd > 1 && has_nulls(v, start, count)) {
    Py_DECREF(d);
    PyErr_SetString(qs->NotSupportedError,
                    "to_numpy: null values inside the cells of a fixed-size list (use to_pylist())");
    return NULL;
  }
  int64_t p = v->offset + start;
  if (view) {
    const uint8_t *data = v->buffer[1] ? v->buffer[1] + (size_t)p * (size_t)d->elsize : NULL;
    if (count == 0 || !data) data = (const uint8_t *)qvpy_zero_size_data;
    PyObject *arr = PyArray_NewFromDescr(&PyArray_Type, d, nd, dims, NULL, (void *)data, 0, NULL);
    if (!arr) return NULL;
    Py_INCREF(cap);
    if (PyArray_SetBaseObject((PyArrayObject *)arr, cap) < 0) return Py_DECREF(arr), NULL;
    return arr;
  }
  PyObject *arr = PyArray_NewFromDescr(&PyArray_Type, d, nd, dims, NULL, NULL, 0, NULL);
  if (!arr) return NULL;
  char *out = PyArray_DATA((PyArrayObject *)arr);
  for (int64_t i = 0; i < count; i++) {
    if (v->type.type == QV_ARROW_BOOL) {
      ((npy_bool *)out)[i] = qv_array_view_get_int(v, start + i) != 0;
    } else {
      int64_t x = qv_array_view_get_int(v, start + i);
      memcpy(out + 8 * i, &x, 8);
    }
  }
  return arr;
}

/* _column_numpy(batch, index, start, length) -> (values, mask or None): a
 * view when the type allows it; mask True where a row is null. */
static PyObject *py_column_numpy(PyObject *m, PyObject *args) {
  QvPyState *qs = qvpy_state(m);
  ColumnRef c;
  PyObject *cap, *extra;
  if (parse_column(args, &c, &cap, &extra) < 0) return NULL;
  PyObject *values = leaf_array(qs, cap, c.v, c.start, c.length);
  if (!values) return NULL;
  PyObject *mask = null_mask(c.v, c.start, c.length);
  if (!mask) return Py_DECREF(values), NULL;
  return Py_BuildValue("(NN)", values, mask);
}

/* _batch_length(batch) */
static PyObject *py_batch_length(PyObject *m, PyObject *cap) {
  (void)m;
  BatchHold *h = get_batch(cap);
  if (!h) return NULL;
  return PyLong_FromLongLong(h->view.length);
}

/* ---- exports: the Arrow PyCapsule interface of RecordBatch, Column and
 * Table (python/quiver/_records.py). An export shares the batch's memory
 * (qv_array_share: reference counts on the mapping or the caller's buffer),
 * so it lives past the RecordBatch, the reader and the source; a window
 * (a slice) only moves offsets and lengths, no buffer is copied. */

/* The physical null count of rows [p0, p0 + n) of `v` (p0 counted from the
 * buffers' start, the array's offset included). */
static int64_t window_null_count(const QvArrayView *v, int64_t p0, int64_t n) {
  if (v->null_count == 0 || n == 0) return 0;
  if (v->type.type == QV_ARROW_NULL) return n;
  if (qv_layout_has_validity(qv_layout_of(v->type.storage_type)) && v->buffer[0])
    return n - qv_bitmap_count_set(v->buffer[0], p0, n);
  return -1; /* unknown: the C Data Interface lets a consumer count */
}

/* *out: a share of rows [start, start + n) of the batch (column < 0) or of
 * its column `column`; the caller checked the window against the batch. A
 * batch's window moves into its children (the struct keeps offset 0, as
 * record batches are usually read), unless the struct has a validity
 * bitmap of its own. */
static QvStatus export_window(const BatchHold *h, int64_t column, int64_t start, int64_t n,
                              struct ArrowArray *out, QvError *err) {
  const QvArrayView *root = &h->view;
  if (column >= 0) {
    const QvArrayView *v = &root->children[column];
    QvStatus st = qv_array_share(h->array.children[column], out, err);
    if (st) return st;
    int64_t p0 = v->offset + root->offset + start;
    out->offset = p0;
    out->length = n;
    out->null_count = window_null_count(v, p0, n);
    return QV_OK;
  }
  QvStatus st = qv_array_share(&h->array, out, err);
  if (st) return st;
  if (root->buffer[0]) {
    out->offset = root->offset + start;
    out->null_count = window_null_count(root, out->offset, n);
  } else {
    for (int64_t i = 0; i < out->n_children; i++) {
      const QvArrayView *v = &root->children[i];
      struct ArrowArray *c = out->children[i];
      c->offset = v->offset + root->offset + start;
      c->length = n;
      c->null_count = window_null_count(v, c->offset, n);
    }
    out->offset = 0;
    out->null_count = 0;
  }
  out->length = n;
  return QV_OK;
}

/* (batch, column, start, length) checked: the hold, or NULL raised. */
static BatchHold *parse_window(PyObject *cap, long long column, long long start, long long length) {
  BatchHold *h = get_batch(cap);
  if (!h) return NULL;
  if (column < -1 || column >= h->view.n_children) {
    PyErr_Format(PyExc_IndexError, "column %lld out of range (the batch has %lld)", column,
                 (long long)h->view.n_children);
    return NULL;
  }
  if (start < 0 || length < 0 || start > h->view.length || length > h->view.length - start) {
    PyErr_Format(PyExc_IndexError, "rows [%lld, %lld + %lld) outside the batch's %lld", start, start,
                 length, (long long)h->view.length);
    return NULL;
  }
  return h;
}

/* The schema of a batch capsule (a schema-only one too) or an arrow_schema
 * capsule (not consumed): the root, or field `column` (>= 0). */
static const struct ArrowSchema *schema_of(QvPyState *qs, PyObject *cap, long long column) {
  const struct ArrowSchema *s;
  if (PyCapsule_IsValid(cap, BATCH_CAPSULE)) {
    s = &((BatchHold *)PyCapsule_GetPointer(cap, BATCH_CAPSULE))->schema;
  } else {
    const struct ArrowSchema *p = PyCapsule_GetPointer(cap, "arrow_schema");
    if (!p) return NULL;
    if (!p->release) {
      PyErr_SetString(PyExc_ValueError, "the schema capsule was already released");
      return NULL;
    }
    QvError err;
    qv_error_clear(&err);
    QvStatus st = qv_arrow_schema_validate(p, &err);
    if (st) return qvpy_raise(qs, st, &err), NULL;
    s = p;
  }
  if (column < -1 || column >= s->n_children) {
    PyErr_Format(PyExc_IndexError, "column %lld out of range (the schema has %lld)", column,
                 (long long)s->n_children);
    return NULL;
  }
  return column < 0 ? s : s->children[column];
}

/* _schema_capsule(capsule, column=-1): a new arrow_schema capsule holding a
 * copy of the capsule's schema (or of its field `column`). */
static PyObject *py_schema_capsule(PyObject *m, PyObject *args) {
  QvPyState *qs = qvpy_state(m);
  PyObject *cap;
  long long column = -1;
  if (!PyArg_ParseTuple(args, "O|L", &cap, &column)) return NULL;
  const struct ArrowSchema *s = schema_of(qs, cap, column);
  return s ? qvpy_schema_capsule(qs, s) : NULL;
}

/* _export_array(batch, column, start, length): a new arrow_array capsule of
 * the window (column -1: the whole batch as a struct array). */
static PyObject *py_export_array(PyObject *m, PyObject *args) {
  QvPyState *qs = qvpy_state(m);
  PyObject *cap;
  long long column, start, length;
  if (!PyArg_ParseTuple(args, "OLLL", &cap, &column, &start, &length)) return NULL;
  BatchHold *h = parse_window(cap, column, start, length);
  if (!h) return NULL;
  struct ArrowArray a;
  QvError err;
  qv_error_clear(&err);
  QvStatus st = export_window(h, column, start, length, &a, &err);
  if (st) return qvpy_raise(qs, st, &err);
  return qvpy_array_capsule(&a);
}

/* A stream over arrays made in advance (a Table's windows): get_next moves
 * them out in order; release frees those never taken. */
typedef struct ListStream {
  struct ArrowSchema schema;
  struct ArrowArray *arrays;
  int64_t n, next;
  char error[256];
} ListStream;

static void list_stream_free(ListStream *p) {
  for (int64_t i = 0; i < p->n; i++)
    if (p->arrays[i].release) p->arrays[i].release(&p->arrays[i]);
  if (p->schema.release) p->schema.release(&p->schema);
  free(p->arrays);
  free(p);
}

static int list_stream_get_schema(struct ArrowArrayStream *s, struct ArrowSchema *out) {
  ListStream *p = s->private_data;
  QvError err;
  qv_error_clear(&err);
  QvStatus st = qv_arrow_schema_copy(&p->schema, out, &err);
  if (st == QV_OK) return 0;
  snprintf(p->error, sizeof p->error, "%s", err.message);
  return st == QV_ENOMEM ? ENOMEM : EINVAL;
}

static int list_stream_get_next(struct ArrowArrayStream *s, struct ArrowArray *out) {
  ListStream *p = s->private_data;
  if (p->next == p->n) {
    memset(out, 0, sizeof *out); /* the end: release NULL */
    return 0;
  }
  *out = p->arrays[p->next];
  p->arrays[p->next++].release = NULL;
  return 0;
}

static const char *list_stream_get_last_error(struct ArrowArrayStream *s) {
  ListStream *p = s->private_data;
  return p->error[0] ? p->error : NULL;
}

static void list_stream_release(struct ArrowArrayStream *s) {
  if (!s->release) return;
  list_stream_free(s->private_data);
  s->release = NULL;
}

/* A new arrow_array_stream capsule reading p's arrays (it takes p). */
static PyObject *list_stream_capsule(ListStream *p) {
  struct ArrowArrayStream s = {.get_schema = list_stream_get_schema,
                               .get_next = list_stream_get_next,
                               .get_last_error = list_stream_get_last_error,
                               .release = list_stream_release,
                               .private_data = p};
  return qvpy_stream_capsule(&s);
}

/* Whether two schemas spell the same types (names included). */
static QvStatus same_schema(const struct ArrowSchema *a, const struct ArrowSchema *b, int64_t i,
                            QvError *err) {
  char *ta = NULL, *tb = NULL;
  QvStatus st = qv_arrow_schema_to_string_alloc(a, 0, &ta, err);
  if (st == QV_OK) st = qv_arrow_schema_to_string_alloc(b, 0, &tb, err);
  if (st == QV_OK && strcmp(ta, tb) != 0)
    st = qv_error_set(err, QV_EINVAL, "batch %lld is %s, not the stream's %s", (long long)i, tb, ta);
  qv_free(ta);
  qv_free(tb);
  return st;
}

/* _windows_stream(schema_capsule, [(batch, column, start, length), ...]): a
 * new arrow_array_stream capsule handing out each window (an export as
 * _export_array makes it) under a copy of the schema capsule's schema (the
 * capsule stays the caller's). A window whose type is not the schema's is
 * InvalidError. */
static PyObject *py_windows_stream(PyObject *m, PyObject *args) {
  QvPyState *qs = qvpy_state(m);
  PyObject *schema_cap, *items;
  if (!PyArg_ParseTuple(args, "OO!", &schema_cap, &PyList_Type, &items)) return NULL;
  const struct ArrowSchema *schema = schema_of(qs, schema_cap, -1);
  if (!schema) return NULL;
  Py_ssize_t n = PyList_GET_SIZE(items);
  ListStream *p = calloc(1, sizeof *p);
  if (p) p->arrays = calloc((size_t)n + 1, sizeof *p->arrays);
  if (!p || !p->arrays) {
    free(p);
    return PyErr_NoMemory();
  }
  QvError err;
  qv_error_clear(&err);
  QvStatus st = qv_arrow_schema_copy(schema, &p->schema, &err);
  for (Py_ssize_t i = 0; st == QV_OK && i < n; i++) {
    PyObject *cap;
    long long column, start, length;
    if (!PyArg_ParseTuple(PyList_GET_ITEM(items, i), "OLLL;a window is (batch, column, start, length)",
                          &cap, &column, &start, &length))
      goto raised;
    BatchHold *h = parse_window(cap, column, start, length);
    if (!h) goto raised;
    st = same_schema(&p->schema, column < 0 ? &h->schema : h->schema.children[column], i, &err);
    if (st == QV_OK) st = export_window(h, column, start, length, &p->arrays[i], &err);
    if (st == QV_OK) p->n = i + 1;
  }
  if (st) {
    list_stream_free(p);
    return qvpy_raise(qs, st, &err);
  }
  return list_stream_capsule(p);
raised:
  list_stream_free(p);
  return NULL;
}

/* _array_stream(schema_capsule, array_capsule): one producer's batch (an
 * __arrow_c_array__ pair, any producer's) moved into a new one-batch
 * arrow_array_stream capsule, for the consumers of streams (the writers,
 * table_to_tensor, write_json, Flight's put). The schema is validated
 * first; on any error nothing moves (the capsules keep their structs). */
static PyObject *py_array_stream(PyObject *m, PyObject *args) {
  QvPyState *qs = qvpy_state(m);
  PyObject *schema_cap, *array_cap;
  if (!PyArg_ParseTuple(args, "OO", &schema_cap, &array_cap)) return NULL;
  struct ArrowSchema *ps = PyCapsule_GetPointer(schema_cap, "arrow_schema");
  struct ArrowArray *pa = ps ? PyCapsule_GetPointer(array_cap, "arrow_array") : NULL;
  if (!pa) return NULL;
  if (!ps->release || !pa->release) {
    PyErr_SetString(PyExc_ValueError, "the capsules were already consumed");
    return NULL;
  }
  QvError err;
  qv_error_clear(&err);
  QvStatus st = qv_arrow_schema_validate(ps, &err);
  if (st) return qvpy_raise(qs, st, &err);
  ListStream *p = calloc(1, sizeof *p);
  if (p) p->arrays = calloc(1, sizeof *p->arrays);
  if (!p || !p->arrays) {
    free(p);
    return PyErr_NoMemory();
  }
  p->schema = *ps;
  ps->release = NULL;
  p->arrays[0] = *pa;
  pa->release = NULL;
  p->n = 1;
  return list_stream_capsule(p);
}

PyMethodDef qvpy_batch_methods[] = {
    {"_stream_next", (PyCFunction)py_stream_next, METH_O,
     "_stream_next(stream_capsule)\n--\n\nThe stream's next batch as a quiver._batch capsule, or None."},
    {"_schema_fields", (PyCFunction)py_schema_fields, METH_O,
     "_schema_fields(capsule)\n--\n\nThe root field of a schema or batch capsule as nested dicts."},
    {"_batch_length", (PyCFunction)py_batch_length, METH_O, "_batch_length(batch)\n--\n\nRows of a batch."},
    {"_column_pylist", (PyCFunction)py_column_pylist, METH_VARARGS,
     "_column_pylist(batch, index, start, length)\n--\n\nRows of a column as Python objects."},
    {"_column_numpy", (PyCFunction)py_column_numpy, METH_VARARGS,
     "_column_numpy(batch, index, start, length)\n--\n\n(ndarray, null mask or None)."},
    {"_column_null_count", (PyCFunction)py_column_null_count, METH_VARARGS,
     "_column_null_count(batch, index, start, length)\n--\n\nNull rows of a column."},
    {"_schema_capsule", (PyCFunction)py_schema_capsule, METH_VARARGS,
     "_schema_capsule(capsule, column=-1)\n--\n\nA new arrow_schema capsule: a copy of a batch's "
     "or schema capsule's schema, or of its field `column`."},
    {"_export_array", (PyCFunction)py_export_array, METH_VARARGS,
     "_export_array(batch, column, start, length)\n--\n\nA new arrow_array capsule sharing the "
     "window's memory (column -1: the batch as a struct array)."},
    {"_array_stream", (PyCFunction)py_array_stream, METH_VARARGS,
     "_array_stream(schema_capsule, array_capsule)\n--\n\nA producer's schema and array moved "
     "into a new one-batch arrow_array_stream capsule."},
    {"_windows_stream", (PyCFunction)py_windows_stream, METH_VARARGS,
     "_windows_stream(schema_capsule, windows)\n--\n\nA new arrow_array_stream capsule of the "
     "windows (batch, column, start, length), in order."},
    {NULL, NULL, 0, NULL}};
