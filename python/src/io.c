/* Sources and sinks: paths (memory-mapped, or replaced atomically),
 * buffers (read in place) and file objects (read through
 * qv_source_new_callback, written through qv_sink_new_callback); and
 * messages(), the message-level iterator of a stream or file. */
#include "qvpy.h"

#include <stdlib.h>
#include <string.h>

#include "quiver/format.h"
#include "quiver/ipc.h"

/* ---- sources */

typedef struct BufferHold {
  Py_buffer view;
} BufferHold;

static void buffer_hold_release(void *p) {
  BufferHold *h = p;
  PyGILState_STATE g = PyGILState_Ensure();
  PyBuffer_Release(&h->view);
  PyGILState_Release(g);
  free(h);
}

/* ---- file objects: read(), readinto(), seek()/tell() through a callback
 * source, so a stream is read as its batches are wanted, not whole. */

typedef struct FileSource {
  PyObject *file;   /* a strong reference: the object lives while the source does */
  bool has_readinto;
  /* qv_source_new_callback is running: a failure releases the source
   * before open_file_source can take the exception, so file_release
   * leaves it (and the struct) to open_file_source */
  bool opening, released;
} FileSource;

/* The exception a file object's method raised, kept for the thread that
 * called the reader: qvpy_raise restores it (with quiver's message as a
 * note) when the error it raises is the one the callback reported. It is
 * kept only inside a call that raises what it reports (qvpy_calls, see
 * qvpy.h): any other caller, such as a C consumer of a reader's stream on
 * a worker thread, gets the text and the exception is dropped at once (in
 * a thread-local slot it stayed with the worker until its next failure,
 * for good once the worker exited). A kept one that no raise took goes
 * with its source (file_release), or at the thread's next failure. One
 * record per thread at most; all of it under the GIL. */
_Thread_local int qvpy_calls;

typedef struct Pending {
  struct Pending *next;
  const FileSource *fs;
  unsigned long thread;
  PyObject *type, *value, *tb;
  char text[160];
} Pending;

static Pending *pending_list;

/* Unlinks *pp (the GIL held). */
static Pending *pending_unlink(Pending **pp) {
  Pending *p = *pp;
  *pp = p->next;
  p->next = NULL;
  return p;
}

/* Frees an unlinked record, after the list is consistent again: the
 * references it drops may run Python code that fails a read too. */
static void pending_free(Pending *p) {
  while (p) {
    Pending *next = p->next;
    Py_XDECREF(p->type);
    Py_XDECREF(p->value);
    Py_XDECREF(p->tb);
    free(p);
    p = next;
  }
}

static Pending **pending_of_thread(unsigned long thread) {
  Pending **pp = &pending_list;
  while (*pp && (*pp)->thread != thread) pp = &(*pp)->next;
  return pp;
}

/* Called with the GIL held and an exception set: keeps it as this thread's
 * pending exception and fills `error` with its text. */
static QvStatus file_failed(const FileSource *fs, const char *method, QvError *error) {
  PyObject *type, *value, *tb;
  PyErr_Fetch(&type, &value, &tb);
  PyErr_NormalizeException(&type, &value, &tb);
  PyObject *text = value ? PyObject_Str(value) : NULL;
  const char *t = text ? PyUnicode_AsUTF8(text) : NULL;
  if (!t) PyErr_Clear();
  char msg[sizeof ((Pending *)0)->text];
  snprintf(msg, sizeof msg, "%s() raised %s%s%s", method,
           type ? ((PyTypeObject *)type)->tp_name : "an exception", t && *t ? ": " : "",
           t ? t : "");
  Py_XDECREF(text);
  unsigned long me = PyThread_get_thread_ident();
  Pending **pp = pending_of_thread(me);
  Pending *old = *pp ? pending_unlink(pp) : NULL; /* an older failure, reported long ago */
  Pending *p = qvpy_calls > 0 ? calloc(1, sizeof *p) : NULL;
  if (p) {
    *p = (Pending){.next = pending_list, .fs = fs, .thread = me, .type = type, .value = value,
                   .tb = tb};
    memcpy(p->text, msg, sizeof msg);
    pending_list = p;
  } else { /* no raise follows (or no memory): the message alone */
    Py_XDECREF(type);
    Py_XDECREF(value);
    Py_XDECREF(tb);
  }
  pending_free(old);
  return qv_error_set(error, QV_EIO, "%s", msg);
}

bool qvpy_take_source_exception(const QvError *err) {
  Pending **pp = pending_of_thread(PyThread_get_thread_ident());
  Pending *p = *pp;
  if (!p) return false;
  if (!err || !strstr(err->message, p->text)) {
    pending_free(pending_unlink(pp)); /* an older failure, reported (or not) long ago */
    return false;
  }
  pending_unlink(pp); /* first: add_note may run Python code */
  PyObject *note = p->value ? PyUnicode_FromFormat("quiver: %s", err->message) : NULL;
  PyObject *r = note ? PyObject_CallMethod(p->value, "add_note", "O", note) : NULL; /* 3.11+ */
  Py_XDECREF(r);
  Py_XDECREF(note);
  PyErr_Clear();
  PyErr_Restore(p->type, p->value, p->tb);
  free(p);
  return true;
}

/* Drops the exceptions `fs` left on any thread (the GIL held). */
static void pending_forget(const FileSource *fs) {
  Pending *gone = NULL;
  for (Pending **pp = &pending_list; *pp;) {
    if ((*pp)->fs == fs) {
      Pending *p = pending_unlink(pp);
      p->next = gone;
      gone = p;
    } else {
      pp = &(*pp)->next;
    }
  }
  pending_free(gone);
}

/* A callback may be asked for more than one Python call should move. */
#define FILE_CHUNK_MAX ((size_t)1 << 30)

static QvStatus file_read(void *p, void *buf, size_t n, size_t *got, QvError *error) {
  FileSource *fs = p;
  *got = 0;
  if (n > FILE_CHUNK_MAX) n = FILE_CHUNK_MAX;
  PyGILState_STATE g = PyGILState_Ensure();
  QvStatus st = QV_OK;
  Py_ssize_t k = 0;
  if (fs->has_readinto) {
    /* straight into the source's buffer: no bytes object in between */
    PyObject *mv = PyMemoryView_FromMemory(buf, (Py_ssize_t)n, PyBUF_WRITE);
    PyObject *r = mv ? PyObject_CallMethod(fs->file, "readinto", "O", mv) : NULL;
    if (!r) {
      st = file_failed(fs, "readinto", error);
    } else if (r == Py_None) {
      st = qv_error_set(error, QV_EIO, "readinto() returned None (a non-blocking stream with no "
                        "data): quiver reads blocking streams");
    } else if ((k = PyLong_AsSsize_t(r)) < 0 || (size_t)k > n) {
      if (PyErr_Occurred()) st = file_failed(fs, "readinto", error);
      else st = qv_error_set(error, QV_EIO, "readinto() returned %zd for %zu bytes", k, n);
    }
    Py_XDECREF(r);
    /* the memory is ours only for this call: a readinto() that kept the
     * view must not write through it later (release() fails if it did) */
    if (mv) {
      PyObject *rel = PyObject_CallMethod(mv, "release", NULL);
      if (!rel && st == QV_OK) st = file_failed(fs, "readinto", error);
      PyErr_Clear();
      Py_XDECREF(rel);
      Py_DECREF(mv);
    }
  } else {
    PyObject *r = PyObject_CallMethod(fs->file, "read", "n", (Py_ssize_t)n);
    Py_buffer v;
    if (!r) {
      st = file_failed(fs, "read", error);
    } else if (r == Py_None) {
      st = qv_error_set(error, QV_EIO, "read() returned None (a non-blocking stream with no data): "
                        "quiver reads blocking streams");
    } else if (PyObject_GetBuffer(r, &v, PyBUF_SIMPLE) < 0) {
      PyErr_Clear();
      st = qv_error_set(error, QV_EIO, "read() returned %.80s, not bytes (is the file open in "
                        "binary mode?)", Py_TYPE(r)->tp_name);
    } else {
      if ((size_t)v.len > n) {
        st = qv_error_set(error, QV_EIO, "read(%zu) returned %zd bytes", n, v.len);
      } else {
        memcpy(buf, v.buf, (size_t)v.len);
        k = v.len;
      }
      PyBuffer_Release(&v);
    }
    Py_XDECREF(r);
  }
  PyGILState_Release(g);
  if (st == QV_OK) *got = (size_t)k;
  return st;
}

static QvStatus file_seek(void *p, int64_t offset, int whence, int64_t *position, QvError *error) {
  FileSource *fs = p;
  PyGILState_STATE g = PyGILState_Ensure();
  QvStatus st = QV_OK;
  PyObject *r = PyObject_CallMethod(fs->file, "seek", "Li", (long long)offset, whence);
  if (r && r == Py_None) { /* seek() of some objects returns nothing: ask tell() */
    Py_DECREF(r);
    r = PyObject_CallMethod(fs->file, "tell", NULL);
  }
  long long at = r ? PyLong_AsLongLong(r) : -1;
  if (!r || (at == -1 && PyErr_Occurred())) st = file_failed(fs, r ? "tell" : "seek", error);
  else *position = at;
  Py_XDECREF(r);
  PyGILState_Release(g);
  return st;
}

/* The source's last reference is gone (the reader freed): the file object
 * and every exception this source left pending go with it. */
static void file_release(void *p) {
  FileSource *fs = p;
  if (fs->opening) { /* open_file_source finishes the job */
    fs->released = true;
    return;
  }
  /* at interpreter exit there is no one left to tell */
  if (Py_IsInitialized()) {
    PyGILState_STATE g = PyGILState_Ensure();
    pending_forget(fs);
    Py_DECREF(fs->file);
    PyGILState_Release(g);
  }
  free(fs);
}

bool qvpy_is_file_object(PyObject *obj) {
  return !PyObject_CheckBuffer(obj) && PyObject_HasAttrString(obj, "read");
}

/* Whether `file` can seek: its seekable() when it has one (a pipe, a socket
 * or a sys.stdin says False), else seek and tell both present. */
static bool file_can_seek(PyObject *file) {
  if (PyObject_HasAttrString(file, "seekable")) {
    PyObject *r = PyObject_CallMethod(file, "seekable", NULL);
    int yes = r ? PyObject_IsTrue(r) : 0;
    Py_XDECREF(r);
    PyErr_Clear();
    return yes == 1;
  }
  return PyObject_HasAttrString(file, "seek") && PyObject_HasAttrString(file, "tell");
}

bool qvpy_file_position(PyObject *file, long long *position) {
  if (!file_can_seek(file)) return false;
  PyObject *r = PyObject_CallMethod(file, "tell", NULL);
  long long at = r ? PyLong_AsLongLong(r) : -1;
  Py_XDECREF(r);
  PyErr_Clear();
  if (at < 0) return false;
  *position = at;
  return true;
}

static int open_file_source(QvPyState *qs, PyObject *file, QvSource **out) {
  FileSource *fs = calloc(1, sizeof *fs);
  if (!fs) return PyErr_NoMemory(), -1;
  Py_INCREF(file);
  fs->file = file;
  fs->has_readinto = PyObject_HasAttrString(file, "readinto");
  bool seek = file_can_seek(file);
  /* messages name the file by its name (open() sets it), else its type */
  char name[256];
  PyObject *n = PyObject_GetAttrString(file, "name");
  const char *ns = n && PyUnicode_Check(n) ? PyUnicode_AsUTF8(n) : NULL;
  if (ns) snprintf(name, sizeof name, "%s", ns);
  else snprintf(name, sizeof name, "<%s object>", Py_TYPE(file)->tp_name);
  Py_XDECREF(n);
  PyErr_Clear();
  QvError err;
  qv_error_clear(&err);
  QvStatus st;
  /* creation may seek (the size of a seekable object): the callbacks take
   * the GIL themselves */
  fs->opening = true;
  QVPY_BEGIN_CALL
  st = qv_source_new_callback(out, file_read, seek ? file_seek : NULL, file_release, fs, name, &err);
  QVPY_END_CALL
  fs->opening = false;
  if (st) { /* file_release ran and left fs to us: the exception first */
    if (!qvpy_take_source_exception(&err)) qvpy_raise(qs, st, &err);
    if (fs->released) {
      PyObject *type, *value, *tb;
      PyErr_Fetch(&type, &value, &tb); /* the object's release may run code */
      file_release(fs);
      PyErr_Restore(type, value, tb);
    }
    return -1;
  }
  return 0;
}

int qvpy_open_source(QvPyState *qs, PyObject *obj, QvSource **out) {
  QvError err;
  qv_error_clear(&err);
  QvStatus st;
  *out = NULL;
  if (PyObject_CheckBuffer(obj)) {
    BufferHold *h = calloc(1, sizeof *h);
    if (!h) return PyErr_NoMemory(), -1;
    if (PyObject_GetBuffer(obj, &h->view, PyBUF_SIMPLE) < 0) {
      free(h);
      return -1;
    }
    QvOwner *owner = qv_owner_new(buffer_hold_release, h);
    if (!owner) {
      PyBuffer_Release(&h->view);
      free(h);
      return PyErr_NoMemory(), -1;
    }
    st = qv_source_new_memory(out, h->view.buf, (size_t)h->view.len, owner, &err);
    qv_owner_free(owner);
    if (st) return qvpy_raise(qs, st, &err), -1;
    return 0;
  }
  if (qvpy_is_file_object(obj)) return open_file_source(qs, obj, out);
  PyObject *path = NULL;
  if (!PyUnicode_FSConverter(obj, &path)) {
    PyErr_Clear();
    PyErr_Format(PyExc_TypeError,
                 "source must be a path, a bytes-like object or a binary file object, not %.100s",
                 Py_TYPE(obj)->tp_name);
    return -1;
  }
  const char *p = PyBytes_AS_STRING(path);
  QVPY_BEGIN_CALL
  st = qv_source_new_path(out, p, &err);
  QVPY_END_CALL
  Py_DECREF(path);
  if (st) return qvpy_raise(qs, st, &err), -1;
  return 0;
}

int qvpy_with_source(QvPyState *qs, PyObject *source, QvPySourceCall call, void *ctx) {
  QvSource *src;
  if (qvpy_open_source(qs, source, &src) < 0) return -1;
  QvError err;
  qv_error_clear(&err);
  QvStatus st;
  QVPY_BEGIN_CALL
  st = call(src, ctx, &err);
  QVPY_END_CALL
  /* raised before the source is freed: freeing it drops the file object's
   * pending exception */
  PyObject *type = NULL, *value = NULL, *tb = NULL;
  if (st) {
    qvpy_raise(qs, st, &err);
    PyErr_Fetch(&type, &value, &tb); /* the object's release may run code */
  }
  QVPY_BEGIN_CALL
  qv_source_free(src);
  QVPY_END_CALL
  if (st) return PyErr_Restore(type, value, tb), -1;
  return 0;
}

/* ---- sinks: a path (atomic replace) or a file object's write() */

typedef struct SinkCtx {
  PyObject *file; /* borrowed */
  PyObject *exc_type, *exc_value, *exc_tb;
} SinkCtx;

static QvStatus file_write(void *p, const void *data, size_t size, QvError *error) {
  SinkCtx *ctx = p;
  PyGILState_STATE g = PyGILState_Ensure();
  QvStatus st = QV_OK;
  const char *d = data;
  while (size > 0 && st == QV_OK) {
    Py_ssize_t chunk = size > ((size_t)1 << 30) ? (Py_ssize_t)1 << 30 : (Py_ssize_t)size;
    PyObject *mv = PyMemoryView_FromMemory((char *)d, chunk, PyBUF_READ);
    PyObject *r = mv ? PyObject_CallMethod(ctx->file, "write", "O", mv) : NULL;
    Py_ssize_t n = chunk;
    if (r && r != Py_None) n = PyLong_AsSsize_t(r);
    bool failed = !r || n < 0 || PyErr_Occurred();
    if (failed && !ctx->exc_type) PyErr_Fetch(&ctx->exc_type, &ctx->exc_value, &ctx->exc_tb);
    PyErr_Clear();
    /* The memory is ours only for this call: a write() that kept the view
     * must not be able to read it later (release() fails if it exported it). */
    if (mv) {
      PyObject *rel = PyObject_CallMethod(mv, "release", NULL);
      if (!rel) {
        if (!ctx->exc_type) PyErr_Fetch(&ctx->exc_type, &ctx->exc_value, &ctx->exc_tb);
        PyErr_Clear();
        failed = true;
      }
      Py_XDECREF(rel);
    }
    Py_XDECREF(mv);
    if (failed) {
      st = qv_error_set(error, QV_EIO, "writing to the file object failed");
    } else if (n == 0 || n > chunk) {
      st = qv_error_set(error, QV_EIO, "the file object's write() returned %zd for %zd bytes", n, chunk);
    } else {
      d += n;
      size -= (size_t)n;
    }
    Py_XDECREF(r);
  }
  PyGILState_Release(g);
  return st;
}

static int open_sink(QvPyState *qs, PyObject *dest, bool fsync, SinkCtx *ctx, QvSink **out) {
  QvError err;
  qv_error_clear(&err);
  memset(ctx, 0, sizeof *ctx);
  QvStatus st;
  if (PyObject_HasAttrString(dest, "write")) {
    ctx->file = dest;
    st = qv_sink_new_callback(out, file_write, ctx, &err);
    if (st) return qvpy_raise(qs, st, &err), -1;
    return 0;
  }
  PyObject *path = NULL;
  if (!PyUnicode_FSConverter(dest, &path)) {
    PyErr_Clear();
    PyErr_Format(PyExc_TypeError, "dest must be a path or a writable file object, not %.100s",
                 Py_TYPE(dest)->tp_name);
    return -1;
  }
  const char *p = PyBytes_AS_STRING(path);
  QVPY_BEGIN_CALL
  st = qv_sink_new_path(out, p, fsync ? 0 : QV_SINK_NO_FSYNC, &err);
  QVPY_END_CALL
  Py_DECREF(path);
  if (st) return qvpy_raise(qs, st, &err), -1;
  return 0;
}

/* Called with the GIL held after a write: the file object's own exception
 * wins over quiver's message. */
static PyObject *sink_fail(QvPyState *qs, SinkCtx *ctx, QvStatus st, const QvError *err) {
  if (ctx->exc_type) {
    PyErr_Restore(ctx->exc_type, ctx->exc_value, ctx->exc_tb);
    ctx->exc_type = ctx->exc_value = ctx->exc_tb = NULL;
    return NULL;
  }
  return qvpy_raise(qs, st, err);
}

static void sink_ctx_clear(SinkCtx *ctx) {
  Py_CLEAR(ctx->exc_type);
  Py_CLEAR(ctx->exc_value);
  Py_CLEAR(ctx->exc_tb);
}

PyObject *qvpy_with_sink(QvPyState *qs, PyObject *dest, bool fsync, QvPySinkCall call, void *ctx) {
  SinkCtx sc;
  QvSink *sink;
  if (open_sink(qs, dest, fsync, &sc, &sink) < 0) return NULL;
  QvError err;
  qv_error_clear(&err);
  QvStatus st;
  QVPY_BEGIN_CALL
  st = call(sink, ctx, &err);
  if (st == QV_OK) st = qv_sink_finish(sink, &err);
  qv_sink_free(sink);
  QVPY_END_CALL
  PyObject *r = st ? sink_fail(qs, &sc, st, &err) : (Py_INCREF(Py_None), Py_None);
  sink_ctx_clear(&sc);
  return r;
}
/* ---- messages */

static void put_dims(PyObject *d, const QvTensorDim *dims, int64_t n) {
  PyObject *shape = PyList_New(0), *names = PyList_New(0);
  bool named = false;
  for (int64_t i = 0; shape && names && i < n; i++) {
    PyObject *x = PyLong_FromLongLong(dims[i].size);
    if (x) PyList_Append(shape, x);
    Py_XDECREF(x);
    named |= dims[i].name && dims[i].name_len;
    PyObject *s = dims[i].name ? PyUnicode_DecodeUTF8(dims[i].name, (Py_ssize_t)dims[i].name_len, "surrogateescape")
                               : PyUnicode_FromString("");
    if (s) PyList_Append(names, s);
    Py_XDECREF(s);
  }
  if (shape) qvpy_dict_put(d, "shape", PyList_AsTuple(shape));
  if (names && named) qvpy_dict_put(d, "dim_names", PyList_AsTuple(names));
  Py_XDECREF(shape);
  Py_XDECREF(names);
}

static PyObject *message_dict(const QvIpcMessage *m, int64_t i) {
  const QvMessage *msg = &m->message;
  char type[128];
  PyObject *d = Py_BuildValue("{s:L,s:L,s:s,s:s,s:i,s:L,s:O}", "index", (long long)i, "offset",
                              (long long)m->offset, "kind", qv_header_type_name(msg->header_type),
                              "version", qv_metadata_version_name(msg->version), "metadata_length",
                              (int)m->metadata_length, "body_length", (long long)m->body_length,
                              "legacy_prefix", m->legacy_prefix ? Py_True : Py_False);
  if (!d) return NULL;
  switch (msg->header_type) {
    case QV_HEADER_SCHEMA: {
      const QvSchema *s = &msg->header.schema;
      PyObject *fields = PyList_New(0);
      for (int64_t k = 0; fields && k < s->n_fields; k++) {
        const QvField *f = &s->fields[k];
        PyObject *t = Py_BuildValue("(NsO)",
                                    f->name ? PyUnicode_DecodeUTF8(f->name, (Py_ssize_t)f->name_len, "surrogateescape")
                                            : PyUnicode_FromString(""),
                                    qv_type_describe(&f->type, type, sizeof type),
                                    f->nullable ? Py_True : Py_False);
        if (t) PyList_Append(fields, t);
        Py_XDECREF(t);
      }
      qvpy_dict_put(d, "fields", fields);
      break;
    }
    case QV_HEADER_DICTIONARY_BATCH:
    case QV_HEADER_RECORD_BATCH: {
      const QvRecordBatch *rb = &msg->header.record_batch;
      if (msg->header_type == QV_HEADER_DICTIONARY_BATCH) {
        rb = &msg->header.dictionary_batch.data;
        qvpy_dict_put(d, "id", PyLong_FromLongLong(msg->header.dictionary_batch.id));
        qvpy_dict_put(d, "is_delta", PyBool_FromLong(msg->header.dictionary_batch.is_delta));
      }
      qvpy_dict_put(d, "length", PyLong_FromLongLong(rb->length));
      qvpy_dict_put(d, "nodes", PyLong_FromLongLong(rb->n_nodes));
      qvpy_dict_put(d, "buffers", PyLong_FromLongLong(rb->n_buffers));
      const char *c = rb->compression == QV_COMPRESSION_ZSTD ? "zstd" : rb->compression ? "lz4" : NULL;
      if (c) qvpy_dict_put(d, "compression", PyUnicode_FromString(c));
      break;
    }
    case QV_HEADER_TENSOR: {
      const QvTensorMeta *te = &msg->header.tensor;
      qvpy_dict_put(d, "type", PyUnicode_FromString(qv_type_describe(&te->type, type, sizeof type)));
      put_dims(d, te->shape, te->ndim);
      if (te->has_strides) qvpy_dict_put(d, "strides", qvpy_int64_tuple(te->strides, te->n_strides));
      break;
    }
    case QV_HEADER_SPARSE_TENSOR: {
      const QvSparseTensorMeta *s = &msg->header.sparse_tensor;
      const char *fmt = qv_sparse_format_name(s->format);
      qvpy_dict_put(d, "format", PyUnicode_FromString(fmt));
      qvpy_dict_put(d, "type", PyUnicode_FromString(qv_type_describe(&s->type, type, sizeof type)));
      put_dims(d, s->shape, s->ndim);
      qvpy_dict_put(d, "nnz", PyLong_FromLongLong(s->non_zero_length));
      break;
    }
    default: break;
  }
  if (PyErr_Occurred()) return Py_DECREF(d), NULL;
  return d;
}

static QvStatus open_messages_call(QvSource *src, void *ctx, QvError *err) {
  return qv_ipc_reader_new(ctx, src, NULL, err); /* the reader retains src */
}

/* messages(): an iterator that decodes one message per next(), so the
 * first item costs one message whatever the stream's length. */
typedef struct {
  PyObject_HEAD
  QvIpcReader *reader; /* NULL once exhausted or failed */
  int64_t index;
} MessageIterObject;

static void MessageIter_dealloc(MessageIterObject *self) {
  qv_ipc_reader_free(self->reader);
  qvpy_free_instance((PyObject *)self);
}

static PyObject *MessageIter_next(MessageIterObject *self) {
  if (self->reader == NULL) return NULL;
  QvError err;
  qv_error_clear(&err);
  QvIpcMessage msg;
  QvStatus st;
  QVPY_BEGIN_CALL
  st = qv_ipc_reader_next(self->reader, &msg, &err);
  QVPY_END_CALL
  if (st) {
    qv_ipc_reader_free(self->reader);
    self->reader = NULL;
    return st == QV_EOS ? NULL : qvpy_raise(qvpy_state_of((PyObject *)self), st, &err);
  }
  PyObject *d = message_dict(&msg, self->index++);
  qv_ipc_message_reset(&msg);
  return d;
}

/* Python's slots are void pointers, functions included (ISO C leaves the
 * conversion to the platform; every platform CPython runs on allows it). */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpedantic"
static PyType_Slot MessageIter_slots[] = {
    {Py_tp_dealloc, (void *)MessageIter_dealloc},
    {Py_tp_doc, (void *)"The messages of an Arrow stream or file, decoded one per next()."},
    {Py_tp_iter, (void *)PyObject_SelfIter},
    {Py_tp_iternext, (void *)MessageIter_next},
    {0, NULL}};
#pragma GCC diagnostic pop

static PyType_Spec MessageIter_spec = {"quiver._MessageIter", sizeof(MessageIterObject), 0,
                                       Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE |
                                           Py_TPFLAGS_DISALLOW_INSTANTIATION,
                                       MessageIter_slots};

static PyObject *py_messages(PyObject *m, PyObject *args, PyObject *kwargs) {
  QvPyState *qs = qvpy_state(m);
  static char *kw[] = {"source", NULL};
  PyObject *source;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O", kw, &source)) return NULL;
  MessageIterObject *it = PyObject_New(MessageIterObject, qs->MessageIterType);
  if (!it) return NULL;
  it->reader = NULL;
  it->index = 0;
  if (qvpy_with_source(qs, source, open_messages_call, &it->reader) < 0) {
    Py_DECREF(it);
    return NULL;
  }
  return (PyObject *)it;
}

int qvpy_io_exec(PyObject *module, QvPyState *qs) {
  qs->MessageIterType = qvpy_add_type(module, &MessageIter_spec, false);
  return qs->MessageIterType ? 0 : -1;
}

PyMethodDef qvpy_io_methods[] = {
    {"messages_iter", (PyCFunction)(void (*)(void))py_messages, METH_VARARGS | METH_KEYWORDS,
     "messages_iter(source)\n--\n\nAn iterator of the messages of a stream or file, as dicts."},
    {NULL, NULL, 0, NULL}};

QvStatus qvpy_write_batch(QvSink *sink, const struct ArrowSchema *schema, struct ArrowArray *batch,
                          const QvRbWriteOptions *options, QvError *err) {
  QvRbWriter *w = NULL;
  QvStatus st = qv_rb_writer_new(&w, schema, sink, options, err);
  if (st == QV_OK) st = qv_rb_writer_write(w, batch, err);
  if (st == QV_OK) st = qv_rb_writer_finish(w, err);
  qv_rb_writer_free(w);
  return st;
}

QvStatus qvpy_write_batch_call(QvSink *sink, void *ctx, QvError *err) {
  QvPyBatchWrite *w = ctx;
  QvRbWriteOptions o = {.struct_size = sizeof o,
                        .format = w->file ? QV_IPC_FORMAT_FILE : QV_IPC_FORMAT_STREAM};
  return qvpy_write_batch(sink, &w->schema, &w->batch, &o, err);
}
