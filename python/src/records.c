/* quiver.RecordBatchReader and the record batch writer, both speaking the
 * Arrow PyCapsule interface (arrow_schema, arrow_array, arrow_array_stream). */
#include "qvpy.h"

#include <stdlib.h>
#include <string.h>

#include "quiver/c_data.h"
#include "quiver/recordbatch_ipc.h"

/* ---- record batches: capsules of the Arrow PyCapsule interface. Each
 * destructor releases a struct no consumer took (a consumer moves it out and
 * leaves release NULL), so an unconsumed capsule leaks nothing. */

static void schema_capsule_free(PyObject *cap) {
  struct ArrowSchema *s = PyCapsule_GetPointer(cap, "arrow_schema");
  if (!s) {
    PyErr_Clear();
    return;
  }
  if (s->release) s->release(s);
  free(s);
}

static void array_capsule_free(PyObject *cap) {
  struct ArrowArray *a = PyCapsule_GetPointer(cap, "arrow_array");
  if (!a) {
    PyErr_Clear();
    return;
  }
  if (a->release) a->release(a);
  free(a);
}

static void stream_capsule_free(PyObject *cap) {
  struct ArrowArrayStream *s = PyCapsule_GetPointer(cap, "arrow_array_stream");
  if (!s) {
    PyErr_Clear();
    return;
  }
  if (s->release) s->release(s);
  free(s);
}

PyObject *qvpy_schema_capsule(QvPyState *qs, const struct ArrowSchema *src) {
  struct ArrowSchema *s = calloc(1, sizeof *s);
  if (!s) return PyErr_NoMemory();
  QvError err;
  qv_error_clear(&err);
  QvStatus st = qv_arrow_schema_copy(src, s, &err);
  if (st) {
    free(s);
    return qvpy_raise(qs, st, &err);
  }
  PyObject *cap = PyCapsule_New(s, "arrow_schema", schema_capsule_free);
  if (!cap) {
    s->release(s);
    free(s);
  }
  return cap;
}

PyObject *qvpy_array_capsule(struct ArrowArray *array) {
  struct ArrowArray *a = malloc(sizeof *a);
  PyObject *cap = a ? PyCapsule_New(a, "arrow_array", array_capsule_free) : PyErr_NoMemory();
  if (!cap) {
    free(a);
    array->release(array);
    return NULL;
  }
  *a = *array;
  array->release = NULL;
  return cap;
}

PyObject *qvpy_stream_capsule(struct ArrowArrayStream *stream) {
  struct ArrowArrayStream *s = malloc(sizeof *s);
  PyObject *cap = s ? PyCapsule_New(s, "arrow_array_stream", stream_capsule_free) : PyErr_NoMemory();
  if (!cap) {
    free(s);
    stream->release(stream);
    return NULL;
  }
  *s = *stream;
  stream->release = NULL;
  return cap;
}

static const QvRbReadOptions full_validation = {.struct_size = sizeof(QvRbReadOptions),
                                                .validate = QV_VALIDATE_FULL};

/* A new stream over `src` from its first batch. The stream reader reads an
 * Arrow file through its footer, and qv_rb_write_all recognises its streams
 * (keeping shared dictionary ids), so files go through it too. */
static QvStatus open_batches(QvSource *src, struct ArrowArrayStream *out, QvError *err) {
  memset(out, 0, sizeof *out);
  return qv_rb_stream_reader_new(out, src, &full_validation, err);
}

typedef struct {
  PyObject_HEAD
  QvSource *src;
  bool file;
  /* a file object read as a stream is read once: the stream that read the
   * schema is kept in `first` and handed to the first __arrow_c_stream__ */
  bool one_pass;
  struct ArrowArrayStream first;
  /* a seekable file object and where its input started: a later pass
   * seeks it back there and reads it through a new source */
  PyObject *rewind;
  long long rewind_to;
  int64_t num_batches;
  struct ArrowSchema schema;
} ReaderObject;

static void Reader_dealloc(ReaderObject *self) {
  if (self->first.release) self->first.release(&self->first);
  if (self->schema.release) self->schema.release(&self->schema);
  Py_XDECREF(self->rewind);
  qv_source_free(self->src);
  qvpy_free_instance((PyObject *)self);
}

/* Keeps the source in the Reader and reads its schema (and a file's batch
 * count). */
static QvStatus open_reader_call(QvSource *src, void *ctx, QvError *err) {
  ReaderObject *self = ctx;
  QvStatus st = QV_OK;
  if (self->one_pass && self->file) {
    /* an Arrow file is read from its footer, at the end: a file object's
     * bytes are taken whole, and the batches then view them */
    const uint8_t *data;
    size_t size;
    QvOwner *owner;
    if ((st = qv_source_read_all(src, 0, &data, &size, &owner, err))) return st;
    st = qv_source_new_memory(&self->src, data, size, owner, err);
    qv_owner_free(owner);
    if (st) return st;
    src = self->src;
    self->one_pass = false;
  } else {
    qv_source_retain(src);
    self->src = src;
  }
  if (self->file) {
    /* the file reader checks both magics and the footer */
    QvRbFileReader *f = NULL;
    st = qv_rb_file_reader_new(&f, src, &full_validation, err);
    if (st == QV_OK) self->num_batches = qv_rb_file_n_batches(f);
    qv_rb_file_reader_free(f);
  }
  struct ArrowArrayStream s;
  if (st == QV_OK) st = open_batches(src, &s, err);
  if (st == QV_OK) {
    st = qv_rb_stream_get_schema(&s, &self->schema, err);
    if (st == QV_OK && self->one_pass) self->first = s;
    else s.release(&s);
  }
  return st;
}

static PyObject *open_reader(QvPyState *qs, PyObject *source, bool file) {
  ReaderObject *self = PyObject_New(ReaderObject, qs->ReaderType);
  if (!self) return NULL;
  self->src = NULL;
  self->file = file;
  self->one_pass = qvpy_is_file_object(source);
  memset(&self->first, 0, sizeof self->first);
  self->rewind = NULL;
  self->rewind_to = -1;
  if (self->one_pass && !file && qvpy_file_position(source, &self->rewind_to)) {
    Py_INCREF(source);
    self->rewind = source;
  }
  self->num_batches = -1;
  memset(&self->schema, 0, sizeof self->schema);
  if (qvpy_with_source(qs, source, open_reader_call, self) < 0) {
    Py_DECREF(self);
    return NULL;
  }
  return (PyObject *)self;
}

static PyObject *py_read_stream(PyObject *m, PyObject *args, PyObject *kwargs) {
  QvPyState *qs = qvpy_state(m);
  static char *kw[] = {"source", NULL};
  PyObject *source;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O", kw, &source)) return NULL;
  return open_reader(qs, source, false);
}

static PyObject *py_read_file(PyObject *m, PyObject *args, PyObject *kwargs) {
  QvPyState *qs = qvpy_state(m);
  static char *kw[] = {"source", NULL};
  PyObject *source;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O", kw, &source)) return NULL;
  return open_reader(qs, source, true);
}

static PyObject *Reader_c_schema(ReaderObject *self, PyObject *unused) {
  (void)unused;
  return qvpy_schema_capsule(qvpy_state_of((PyObject *)self), &self->schema);
}

static PyObject *Reader_c_stream(ReaderObject *self, PyObject *args, PyObject *kwargs) {
  static char *kw[] = {"requested_schema", NULL};
  PyObject *req = Py_None;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|O", kw, &req)) return NULL;
  QvPyState *qs = qvpy_state_of((PyObject *)self);
  /* requested_schema is a hint (the interface lets a producer ignore it):
   * quiver hands out the types the file holds. */
  struct ArrowArrayStream s;
  QvError err;
  qv_error_clear(&err);
  QvStatus st;
  if (self->first.release) {
    s = self->first; /* moved */
    memset(&self->first, 0, sizeof self->first);
    st = QV_OK;
  } else if (self->rewind) {
    /* the earlier pass consumed the source: a new one from the start */
    PyObject *r = PyObject_CallMethod(self->rewind, "seek", "L", self->rewind_to);
    if (!r) return NULL;
    Py_DECREF(r);
    QvSource *again;
    if (qvpy_open_source(qs, self->rewind, &again) < 0) return NULL;
    QVPY_BEGIN_CALL
    qv_source_free(self->src);
    self->src = again;
    st = open_batches(self->src, &s, &err);
    QVPY_END_CALL
  } else if (self->one_pass) {
    st = qv_error_set(&err, QV_EIO, "%s: a file object that cannot seek is read once, and this "
                      "reader's batches were handed out already (read from a path, bytes or a "
                      "seekable file to read them again)",
                      qv_source_name(self->src));
  } else {
    QVPY_BEGIN_CALL
    st = open_batches(self->src, &s, &err);
    QVPY_END_CALL
  }
  if (st) return qvpy_raise(qs, st, &err);
  return qvpy_stream_capsule(&s);
}

static PyObject *Reader_get_num_batches(ReaderObject *self, void *c) {
  (void)c;
  if (self->num_batches < 0) Py_RETURN_NONE;
  return PyLong_FromLongLong(self->num_batches);
}

static PyObject *Reader_get_columns(ReaderObject *self, void *c) {
  (void)c;
  PyObject *l = PyList_New(0);
  for (int64_t i = 0; l && i < self->schema.n_children; i++) {
    const struct ArrowSchema *ch = self->schema.children[i];
    PyObject *t = Py_BuildValue("(Ns)", PyUnicode_DecodeUTF8(ch->name ? ch->name : "", (Py_ssize_t)strlen(ch->name ? ch->name : ""), "surrogateescape"), ch->format);
    if (!t || PyList_Append(l, t) < 0) Py_CLEAR(l);
    Py_XDECREF(t);
  }
  return l;
}

/* Iteration, read_all() and .schema are written in Python over batch.c
 * (quiver/_records.py): each calls the function of that module named `fn`. */
static PyObject *call_records(PyObject *self, const char *fn) {
  PyObject *mod = PyImport_ImportModule("quiver._records");
  PyObject *r = mod ? PyObject_CallMethod(mod, fn, "O", self) : NULL;
  Py_XDECREF(mod);
  return r;
}

static PyObject *Reader_iter(PyObject *self) {
  return call_records(self, "iter_batches");
}

static PyObject *Reader_read_all(PyObject *self, PyObject *unused) {
  (void)unused;
  return call_records(self, "read_all");
}

static PyObject *Reader_get_schema(PyObject *self, void *c) {
  (void)c;
  return call_records(self, "reader_schema");
}

static PyMethodDef Reader_methods[] = {
    {"read_all", (PyCFunction)Reader_read_all, METH_NOARGS,
     "read_all()\n--\n\nEvery batch as a quiver.Table (the batches, not concatenated)."},
    {"__arrow_c_schema__", (PyCFunction)Reader_c_schema, METH_NOARGS,
     "__arrow_c_schema__()\n--\n\nA PyCapsule 'arrow_schema' holding a copy of the schema."},
    {"__arrow_c_stream__", (PyCFunction)(void (*)(void))Reader_c_stream, METH_VARARGS | METH_KEYWORDS,
     "__arrow_c_stream__(requested_schema=None)\n--\n\nA PyCapsule 'arrow_array_stream' reading the "
     "batches from the start (zero-copy views of the mapping or buffer, fully validated). Each call "
     "starts a new stream."},
    {"__arrow_c_device_stream__", (PyCFunction)(void (*)(void))qvpy_reader_c_device_stream,
     METH_VARARGS | METH_KEYWORDS,
     "__arrow_c_device_stream__(requested_schema=None, **kwargs)\n--\n\nA PyCapsule "
     "'arrow_device_array_stream' of CPU device arrays (device_type 1, device_id -1), as "
     "__arrow_c_stream__ reads them; keywords other than None raise NotImplementedError."},
    {NULL, NULL, 0, NULL}};

static PyGetSetDef Reader_getset[] = {
    {"num_batches", (getter)Reader_get_num_batches, NULL, "Batches in an Arrow file (None for a stream).", NULL},
    {"schema", (getter)Reader_get_schema, NULL, "The quiver.Schema of the batches.", NULL},
    {"columns", (getter)Reader_get_columns, NULL, "[(name, Arrow format string)] of the top-level columns.", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

/* Python's slots are void pointers, functions included (ISO C leaves the
 * conversion to the platform; every platform CPython runs on allows it). */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpedantic"
static PyType_Slot Reader_slots[] = {
    {Py_tp_dealloc, (void *)Reader_dealloc},
    {Py_tp_doc, (void *)"Record batches of an Arrow IPC stream or file: iterating gives quiver.RecordBatch "
                        "objects (each pass from the start), and the Arrow PyCapsule interface "
                        "(__arrow_c_schema__, __arrow_c_stream__) exports them."},
    {Py_tp_methods, Reader_methods},
    {Py_tp_getset, Reader_getset},
    {Py_tp_iter, (void *)Reader_iter},
    {0, NULL}};
#pragma GCC diagnostic pop

static PyType_Spec Reader_spec = {"quiver.RecordBatchReader", sizeof(ReaderObject), 0,
                                  Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE |
                                      Py_TPFLAGS_DISALLOW_INSTANTIATION,
                                  Reader_slots};

int qvpy_records_exec(PyObject *module, QvPyState *qs) {
  qs->ReaderType = qvpy_add_type(module, &Reader_spec, true);
  return qs->ReaderType ? 0 : -1;
}

typedef struct StreamWrite {
  const QvRbWriteOptions *o;
  struct ArrowArrayStream *stream;
} StreamWrite;

static int parse_write_options(int file, PyObject *compression, QvRbWriteOptions *o) {
  memset(o, 0, sizeof *o);
  o->struct_size = sizeof *o;
  o->format = file ? QV_IPC_FORMAT_FILE : QV_IPC_FORMAT_STREAM;
  if (compression == Py_None) return 0;
  const char *c = PyUnicode_Check(compression) ? PyUnicode_AsUTF8(compression) : NULL;
  if (c && (strcmp(c, "lz4") == 0 || strcmp(c, "lz4_frame") == 0)) o->compression = QV_COMPRESSION_LZ4_FRAME;
  else if (c && strcmp(c, "zstd") == 0) o->compression = QV_COMPRESSION_ZSTD;
  else {
    PyErr_Format(PyExc_ValueError, "compression must be None, 'lz4' or 'zstd', not %R", compression);
    return -1;
  }
  return 0;
}

static QvStatus write_batches_call(QvSink *sink, void *ctx, QvError *err) {
  const StreamWrite *w = ctx;
  return qv_rb_write_all(w->stream, sink, w->o, err);
}

static PyObject *py_write_batches(PyObject *m, PyObject *args, PyObject *kwargs) {
  QvPyState *qs = qvpy_state(m);
  static char *kw[] = {"dest", "stream", "file", "compression", "fsync", NULL};
  PyObject *dest, *stream_cap, *compression = Py_None;
  int file = 0, fsync = 1;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OO|pO$p", kw, &dest, &stream_cap, &file,
                                   &compression, &fsync))
    return NULL;
  QvRbWriteOptions o;
  if (parse_write_options(file, compression, &o) < 0) return NULL;
  /* move the producer's stream out of the capsule (the consumer's job) */
  struct ArrowArrayStream *p = PyCapsule_GetPointer(stream_cap, "arrow_array_stream");
  if (!p) return NULL;
  if (!p->release) {
    PyErr_SetString(PyExc_ValueError, "the stream capsule was already consumed");
    return NULL;
  }
  struct ArrowArrayStream stream = *p;
  p->release = NULL;
  StreamWrite w = {&o, &stream};
  PyObject *result = qvpy_with_sink(qs, dest, fsync, write_batches_call, &w);
  /* a producer's release callback may be Python code (ctypes, cffi): it
   * must not run with the write's exception pending */
  PyObject *type, *value, *tb;
  PyErr_Fetch(&type, &value, &tb);
  if (stream.release) stream.release(&stream);
  PyErr_Restore(type, value, tb);
  return result;
}

PyMethodDef qvpy_records_methods[] = {
    {"read_stream", (PyCFunction)(void (*)(void))py_read_stream, METH_VARARGS | METH_KEYWORDS,
     "read_stream(source)\n--\n\nA RecordBatchReader over an Arrow IPC stream (or file, read in "
     "order) implementing the Arrow PyCapsule interface."},
    {"read_file", (PyCFunction)(void (*)(void))py_read_file, METH_VARARGS | METH_KEYWORDS,
     "read_file(source)\n--\n\nA RecordBatchReader over an Arrow IPC file (through its footer)."},
    {"_write_batches", (PyCFunction)(void (*)(void))py_write_batches, METH_VARARGS | METH_KEYWORDS,
     "_write_batches(dest, stream, file=False, compression=None)\n--\n\n"
     "Writes a stream capsule as an Arrow stream or file."},
    {NULL, NULL, 0, NULL}};
