/* Arrow's integration JSON from Python (quiver/integration_json.h):
 * quiver.read_json gives the file's batches as quiver.RecordBatch objects
 * (through batch.c's capsules), quiver.write_json writes any
 * __arrow_c_stream__ producer as JSON. */
#include "qvpy.h"

#include <stdlib.h>
#include <string.h>

#include "quiver/integration_json.h"

static QvStatus read_json_call(QvSource *src, void *ctx, QvError *err) {
  return qv_json_read(ctx, src, NULL, err);
}

/* _read_json(source) -> (schema capsule, [batch capsules]) */
static PyObject *py_read_json(PyObject *m, PyObject *source) {
  QvPyState *qs = qvpy_state(m);
  QvJsonFile *f = NULL;
  if (qvpy_with_source(qs, source, read_json_call, &f) < 0) return NULL;
  QvJsonData d;
  qv_json_file_data(f, &d);
  PyObject *schema = qvpy_batch_capsule(qs, d.schema, NULL, QV_VALIDATE_NONE);
  PyObject *batches = schema ? PyList_New(0) : NULL;
  for (int64_t i = 0; batches && i < d.n_batches; i++) {
    /* the JSON reader builds its arrays; checked in full like a file's */
    PyObject *b = qvpy_batch_capsule(qs, d.schema, d.batches[i], QV_VALIDATE_FULL);
    if (!b || PyList_Append(batches, b) < 0) Py_CLEAR(batches);
    Py_XDECREF(b);
  }
  qv_json_file_free(f);
  if (!batches) {
    Py_XDECREF(schema);
    return NULL;
  }
  return Py_BuildValue("(NN)", schema, batches);
}

typedef struct JsonWrite {
  struct ArrowArrayStream stream;
  struct ArrowSchema schema;
  struct ArrowArray *batches;
  int64_t n, cap;
  QvJsonWriteOptions o;
} JsonWrite;

/* Reads the whole stream, then writes it (the JSON holds each dictionary
 * once, before the batches). */
static QvStatus write_json_call(QvSink *sink, void *ctx, QvError *err) {
  JsonWrite *w = ctx;
  QvStatus st = qv_rb_stream_get_schema(&w->stream, &w->schema, err);
  while (st == QV_OK) {
    if (w->n == w->cap) {
      int64_t cap = w->cap ? 2 * w->cap : 8;
      struct ArrowArray *p = realloc(w->batches, (size_t)cap * sizeof *p);
      if (!p) return qv_error_set(err, QV_ENOMEM, "out of memory holding %lld batches", (long long)cap);
      w->batches = p;
      w->cap = cap;
    }
    memset(&w->batches[w->n], 0, sizeof w->batches[w->n]);
    st = qv_rb_stream_get_next(&w->stream, &w->batches[w->n], err);
    if (st == QV_OK) w->n++;
  }
  if (st != QV_EOS) return st;
  qv_error_clear(err);
  const struct ArrowArray **list = calloc((size_t)(w->n ? w->n : 1), sizeof *list);
  if (!list) return qv_error_set(err, QV_ENOMEM, "out of memory");
  for (int64_t i = 0; i < w->n; i++) list[i] = &w->batches[i];
  QvJsonData d = {.schema = &w->schema, .batches = list, .n_batches = w->n};
  qv_rb_stream_dictionary_ids(&w->stream, &d.dictionary_ids, &d.n_dictionary_ids);
  st = qv_json_write(&d, sink, &w->o, err);
  free(list);
  return st;
}

/* _write_json(dest, stream_capsule, indent=2, max_output=0, *, fsync=True) */
static PyObject *py_write_json(PyObject *m, PyObject *args, PyObject *kwargs) {
  QvPyState *qs = qvpy_state(m);
  static char *kw[] = {"dest", "stream", "indent", "max_output", "fsync", NULL};
  PyObject *dest, *cap;
  int indent = 2, fsync = 1;
  long long max_output = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OO|iL$p", kw, &dest, &cap, &indent, &max_output,
                                   &fsync))
    return NULL;
  if (max_output < 0) {
    PyErr_SetString(PyExc_ValueError, "max_output must be >= 0");
    return NULL;
  }
  struct ArrowArrayStream *p = PyCapsule_GetPointer(cap, "arrow_array_stream");
  if (!p) return NULL;
  if (!p->release) {
    PyErr_SetString(PyExc_ValueError, "the stream capsule was already consumed");
    return NULL;
  }
  JsonWrite w;
  memset(&w, 0, sizeof w);
  w.stream = *p;
  p->release = NULL;
  w.o.struct_size = sizeof w.o;
  w.o.indent = indent; /* negative: one line */
  w.o.max_output_size = max_output;
  PyObject *r = qvpy_with_sink(qs, dest, fsync, write_json_call, &w);
  for (int64_t i = 0; i < w.n; i++)
    if (w.batches[i].release) w.batches[i].release(&w.batches[i]);
  free(w.batches);
  if (w.schema.release) w.schema.release(&w.schema);
  if (w.stream.release) w.stream.release(&w.stream);
  return r;
}

PyMethodDef qvpy_json_methods[] = {
    {"_read_json", (PyCFunction)py_read_json, METH_O,
     "_read_json(source)\n--\n\nAn integration JSON file: (schema capsule, [batch capsules])."},
    {"_write_json", (PyCFunction)(void (*)(void))py_write_json, METH_VARARGS | METH_KEYWORDS,
     "_write_json(dest, stream, indent=2, max_output=0)\n--\n\nA stream capsule as integration JSON."},
    {NULL, NULL, 0, NULL}};
