/* quiver.flight's C side: an Arrow Flight client and the directory server
 * (quiver/flight.h). Clients and servers are PyCapsules held by the Python
 * classes of quiver/flight.py; every network call runs with the GIL
 * released. */
#include "qvpy.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "quiver/c_data.h"
#include "quiver/flight.h"
#include "quiver/recordbatch_ipc.h"

#define CLIENT_CAPSULE "quiver._flight_client"
#define SERVER_CAPSULE "quiver._flight_server"

static void client_capsule_free(PyObject *cap) {
  QvFlightClient *c = PyCapsule_GetPointer(cap, CLIENT_CAPSULE);
  if (c == NULL) {
    PyErr_Clear();
    return;
  }
  QVPY_BEGIN_CALL
  qv_flight_client_free(c);
  QVPY_END_CALL
}

static QvFlightClient *client_of(PyObject *cap) {
  return PyCapsule_GetPointer(cap, CLIENT_CAPSULE);
}

/* _flight_connect(uri, token, tls_ca, headers, timeout_ms) */
static PyObject *py_connect(PyObject *module, PyObject *args) {
  QvPyState *qs = qvpy_state(module);
  const char *uri, *token = NULL, *ca = NULL;
  PyObject *headers;
  long long timeout_ms = 0;
  if (!PyArg_ParseTuple(args, "szzOL", &uri, &token, &ca, &headers, &timeout_ms)) return NULL;
  PyObject *seq = PySequence_Fast(headers, "headers must be a sequence of (name, value)");
  if (seq == NULL) return NULL;
  Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
  QvFlightHeader *h = n ? calloc((size_t)n, sizeof *h) : NULL;
  if (n && h == NULL) {
    Py_DECREF(seq);
    return PyErr_NoMemory();
  }
  for (Py_ssize_t i = 0; i < n; i++) {
    PyObject *item = PySequence_Fast_GET_ITEM(seq, i);
    if (!PyArg_ParseTuple(item, "ss", &h[i].name, &h[i].value)) {
      free(h);
      Py_DECREF(seq);
      return NULL;
    }
  }
  QvFlightClientOptions o = {.struct_size = sizeof o, .tls_ca_file = ca, .token = token,
                             .headers = h, .n_headers = (size_t)n, .timeout_ms = timeout_ms,
                             .connect_timeout_ms = timeout_ms};
  QvFlightClient *c = NULL;
  QvError err = {0};
  QvStatus st;
  QVPY_BEGIN_CALL
  st = qv_flight_client_new(&c, uri, &o, &err);
  QVPY_END_CALL
  free(h);
  Py_DECREF(seq);
  if (st) return qvpy_raise(qs, st, &err);
  PyObject *cap = PyCapsule_New(c, CLIENT_CAPSULE, client_capsule_free);
  if (cap == NULL) qv_flight_client_free(c);
  return cap;
}

/* A FlightInfo as a dict. */
static PyObject *info_dict(const QvFlightInfo *f) {
  PyObject *d = PyDict_New();
  if (d == NULL) return NULL;
  PyObject *path = Py_None;
  Py_INCREF(Py_None);
  if (f->has_descriptor && f->descriptor.type == QV_FLIGHT_DESCRIPTOR_PATH) {
    char *p = qv_flight_descriptor_path_string(&f->descriptor);
    Py_DECREF(Py_None);
    path = p ? PyUnicode_DecodeUTF8(p, (Py_ssize_t)strlen(p), "surrogateescape") : PyErr_NoMemory();
    qv_free(p);
  }
  PyObject *tickets = PyList_New((Py_ssize_t)f->n_endpoints);
  for (size_t i = 0; tickets && i < f->n_endpoints; i++) {
    PyObject *t = PyBytes_FromStringAndSize((const char *)f->endpoints[i].ticket.data,
                                            (Py_ssize_t)f->endpoints[i].ticket.size);
    if (t == NULL) {
      Py_CLEAR(tickets);
      break;
    }
    PyList_SET_ITEM(tickets, (Py_ssize_t)i, t);
  }
  if (qvpy_dict_put(d, "path", path) || qvpy_dict_put(d, "total_records",
                                                      PyLong_FromLongLong(f->total_records)) ||
      qvpy_dict_put(d, "total_bytes", PyLong_FromLongLong(f->total_bytes)) ||
      qvpy_dict_put(d, "schema", PyBytes_FromStringAndSize((const char *)f->schema.data,
                                                            (Py_ssize_t)f->schema.size)) ||
      qvpy_dict_put(d, "tickets", tickets)) {
    Py_DECREF(d);
    return NULL;
  }
  return d;
}

static PyObject *py_list(PyObject *module, PyObject *args) {
  QvPyState *qs = qvpy_state(module);
  PyObject *cap;
  if (!PyArg_ParseTuple(args, "O", &cap)) return NULL;
  QvFlightClient *c = client_of(cap);
  if (c == NULL) return NULL;
  QvFlightInfo *infos = NULL;
  size_t n = 0;
  QvError err = {0};
  QvStatus st;
  QVPY_BEGIN_CALL
  st = qv_flight_list_flights(c, NULL, 0, &infos, &n, &err);
  QVPY_END_CALL
  if (st) return qvpy_raise(qs, st, &err);
  PyObject *list = PyList_New((Py_ssize_t)n);
  for (size_t i = 0; list && i < n; i++) {
    PyObject *d = info_dict(&infos[i]);
    if (d == NULL) {
      Py_CLEAR(list);
      break;
    }
    PyList_SET_ITEM(list, (Py_ssize_t)i, d);
  }
  qv_flight_info_list_free(infos, n);
  return list;
}

/* A PATH descriptor of "a/b" (segments point into *buf). */
static int descriptor_of(const char *path, QvFlightDescriptor *d, char **buf, char ***segs) {
  *buf = strdup(path);
  size_t n = 1;
  for (const char *p = path; *p; p++) n += *p == '/';
  *segs = calloc(n, sizeof **segs);
  if (*buf == NULL || *segs == NULL) {
    free(*buf);
    free(*segs);
    PyErr_NoMemory();
    return -1;
  }
  size_t k = 0;
  for (char *s = *buf, *slash;; s = slash + 1) {
    (*segs)[k++] = s;
    slash = strchr(s, '/');
    if (slash == NULL) break;
    *slash = 0;
  }
  *d = (QvFlightDescriptor){.type = QV_FLIGHT_DESCRIPTOR_PATH, .path = *segs, .n_path = k};
  return 0;
}

static PyObject *py_info(PyObject *module, PyObject *args) {
  QvPyState *qs = qvpy_state(module);
  PyObject *cap;
  const char *path;
  if (!PyArg_ParseTuple(args, "Os", &cap, &path)) return NULL;
  QvFlightClient *c = client_of(cap);
  if (c == NULL) return NULL;
  QvFlightDescriptor d;
  char *buf, **segs;
  if (descriptor_of(path, &d, &buf, &segs)) return NULL;
  QvFlightInfo info;
  QvError err = {0};
  QvStatus st;
  QVPY_BEGIN_CALL
  st = qv_flight_get_flight_info(c, &d, &info, &err);
  QVPY_END_CALL
  free(buf);
  free(segs);
  if (st) return qvpy_raise(qs, st, &err);
  PyObject *r = info_dict(&info);
  qv_flight_info_reset(&info);
  return r;
}

static void stream_capsule_free(PyObject *cap) {
  struct ArrowArrayStream *s = PyCapsule_GetPointer(cap, "arrow_array_stream");
  if (s == NULL) {
    PyErr_Clear();
    return;
  }
  if (s->release) {
    QVPY_BEGIN_CALL
    s->release(s);
    QVPY_END_CALL
  }
  free(s);
}

/* A stream that keeps the client's capsule alive: its batches arrive on
 * the client's connection, and a consumer (pyarrow) may keep the stream
 * after every Python object of quiver's is gone. */
typedef struct Held {
  struct ArrowArrayStream inner;
  PyObject *client;
} Held;

static int held_schema(struct ArrowArrayStream *s, struct ArrowSchema *out) {
  Held *h = s->private_data;
  return h->inner.get_schema(&h->inner, out);
}

static int held_next(struct ArrowArrayStream *s, struct ArrowArray *out) {
  Held *h = s->private_data;
  return h->inner.get_next(&h->inner, out);
}

static const char *held_error(struct ArrowArrayStream *s) {
  Held *h = s->private_data;
  return h->inner.get_last_error(&h->inner);
}

static void held_release(struct ArrowArrayStream *s) {
  if (s == NULL || s->release == NULL) return;
  Held *h = s->private_data;
  h->inner.release(&h->inner);
  PyGILState_STATE g = PyGILState_Ensure();
  Py_DECREF(h->client);
  PyGILState_Release(g);
  free(h);
  s->release = NULL;
}

/* _flight_get(client, path, parallel): a PyCapsule "arrow_array_stream" of
 * every endpoint of the flight. The stream uses the client: the Python
 * object keeps the client's capsule alive as long as the stream's. */
static PyObject *py_get(PyObject *module, PyObject *args) {
  QvPyState *qs = qvpy_state(module);
  PyObject *cap;
  const char *path;
  int parallel = 0;
  if (!PyArg_ParseTuple(args, "Osi", &cap, &path, &parallel)) return NULL;
  QvFlightClient *c = client_of(cap);
  if (c == NULL) return NULL;
  QvFlightDescriptor d;
  char *buf, **segs;
  if (descriptor_of(path, &d, &buf, &segs)) return NULL;
  struct ArrowArrayStream *s = calloc(1, sizeof *s);
  if (s == NULL) {
    free(buf);
    free(segs);
    return PyErr_NoMemory();
  }
  QvFlightInfo info;
  QvError err = {0};
  QvStatus st;
  QVPY_BEGIN_CALL
  st = qv_flight_get_flight_info(c, &d, &info, &err);
  if (!st) {
    st = qv_flight_read_endpoints(c, &info, parallel, s, &err);
    qv_flight_info_reset(&info);
  }
  QVPY_END_CALL
  free(buf);
  free(segs);
  if (st) {
    free(s);
    return qvpy_raise(qs, st, &err);
  }
  Held *h = malloc(sizeof *h);
  if (h == NULL) {
    s->release(s);
    free(s);
    return PyErr_NoMemory();
  }
  h->inner = *s;
  Py_INCREF(cap);
  h->client = cap;
  *s = (struct ArrowArrayStream){.get_schema = held_schema, .get_next = held_next,
                                 .get_last_error = held_error, .release = held_release,
                                 .private_data = h};
  PyObject *r = PyCapsule_New(s, "arrow_array_stream", stream_capsule_free);
  if (r == NULL) {
    s->release(s);
    free(s);
  }
  return r;
}

typedef struct Results {
  PyObject *list; /* appended to with the GIL taken */
  bool failed;
} Results;

static void on_result(void *ctx, const uint8_t *data, size_t size) {
  Results *r = ctx;
  PyGILState_STATE g = PyGILState_Ensure();
  PyObject *b = PyBytes_FromStringAndSize((const char *)data, (Py_ssize_t)size);
  if (b == NULL || PyList_Append(r->list, b) < 0) {
    r->failed = true;
    PyErr_Clear();
  }
  Py_XDECREF(b);
  PyGILState_Release(g);
}

/* _flight_put(client, path, stream_capsule): the PutResults as bytes. */
static PyObject *py_put(PyObject *module, PyObject *args) {
  QvPyState *qs = qvpy_state(module);
  PyObject *cap, *scap;
  const char *path;
  if (!PyArg_ParseTuple(args, "OsO", &cap, &path, &scap)) return NULL;
  QvFlightClient *c = client_of(cap);
  if (c == NULL) return NULL;
  struct ArrowArrayStream *in = PyCapsule_GetPointer(scap, "arrow_array_stream");
  if (in == NULL) return NULL;
  if (in->release == NULL) {
    PyErr_SetString(PyExc_ValueError, "the stream was released already");
    return NULL;
  }
  QvFlightDescriptor d;
  char *buf, **segs;
  if (descriptor_of(path, &d, &buf, &segs)) return NULL;
  Results r = {.list = PyList_New(0)};
  if (r.list == NULL) {
    free(buf);
    free(segs);
    return NULL;
  }
  QvError err = {0};
  QvStatus st;
  QVPY_BEGIN_CALL
  st = qv_flight_do_put(c, &d, in, on_result, &r, &err);
  QVPY_END_CALL
  free(buf);
  free(segs);
  if (st || r.failed) {
    Py_DECREF(r.list);
    return st ? qvpy_raise(qs, st, &err) : PyErr_NoMemory();
  }
  return r.list;
}

static PyObject *py_action(PyObject *module, PyObject *args) {
  QvPyState *qs = qvpy_state(module);
  PyObject *cap;
  const char *type;
  Py_buffer body;
  if (!PyArg_ParseTuple(args, "Osy*", &cap, &type, &body)) return NULL;
  QvFlightClient *c = client_of(cap);
  if (c == NULL) {
    PyBuffer_Release(&body);
    return NULL;
  }
  QvFlightAction a = {.type = (char *)type, .body = {(uint8_t *)body.buf, (size_t)body.len}};
  QvFlightBytes *res = NULL;
  size_t n = 0;
  QvError err = {0};
  QvStatus st;
  QVPY_BEGIN_CALL
  st = qv_flight_do_action(c, &a, &res, &n, &err);
  QVPY_END_CALL
  PyBuffer_Release(&body);
  if (st) return qvpy_raise(qs, st, &err);
  PyObject *list = PyList_New((Py_ssize_t)n);
  for (size_t i = 0; list && i < n; i++) {
    PyObject *b = PyBytes_FromStringAndSize((const char *)res[i].data, (Py_ssize_t)res[i].size);
    if (b == NULL) {
      Py_CLEAR(list);
      break;
    }
    PyList_SET_ITEM(list, (Py_ssize_t)i, b);
  }
  qv_flight_bytes_list_free(res, n);
  return list;
}

/* ---- the directory server, on a thread of its own */

typedef struct Served {
  QvFlightServer *server;
  pthread_t thread;
  bool running;
} Served;

static void *serve_thread(void *arg) {
  Served *s = arg;
  qv_flight_server_run(s->server, NULL);
  return NULL;
}

static void served_stop(Served *s) {
  if (s->running) {
    qv_flight_server_stop(s->server);
    pthread_join(s->thread, NULL);
    s->running = false;
  }
}

static void server_capsule_free(PyObject *cap) {
  Served *s = PyCapsule_GetPointer(cap, SERVER_CAPSULE);
  if (s == NULL) {
    PyErr_Clear();
    return;
  }
  QVPY_BEGIN_CALL
  served_stop(s);
  qv_flight_server_free(s->server);
  QVPY_END_CALL
  free(s);
}

/* _flight_serve(dir, host, port, token, allow_put): a capsule; serving has
 * started when it returns. */
static PyObject *py_serve(PyObject *module, PyObject *args) {
  QvPyState *qs = qvpy_state(module);
  const char *dir, *host, *token = NULL;
  int port, allow_put;
  if (!PyArg_ParseTuple(args, "ssizp", &dir, &host, &port, &token, &allow_put)) return NULL;
  Served *s = calloc(1, sizeof *s);
  if (s == NULL) return PyErr_NoMemory();
  QvFlightServerOptions so = {.struct_size = sizeof so, .token = token};
  QvFlightDirOptions dopt = {.struct_size = sizeof dopt, .allow_put = allow_put != 0};
  QvError err = {0};
  QvStatus st;
  QVPY_BEGIN_CALL
  st = qv_flight_dir_server_new(&s->server, dir, host, port, &so, &dopt, &err);
  QVPY_END_CALL
  if (st) {
    free(s);
    return qvpy_raise(qs, st, &err);
  }
  if (pthread_create(&s->thread, NULL, serve_thread, s) != 0) {
    qv_flight_server_free(s->server);
    free(s);
    PyErr_SetString(PyExc_OSError, "cannot start the server's thread");
    return NULL;
  }
  s->running = true;
  PyObject *cap = PyCapsule_New(s, SERVER_CAPSULE, server_capsule_free);
  if (cap == NULL) {
    served_stop(s);
    qv_flight_server_free(s->server);
    free(s);
  }
  return cap;
}

static PyObject *py_server_port(PyObject *module, PyObject *args) {
  (void)module;
  PyObject *cap;
  if (!PyArg_ParseTuple(args, "O", &cap)) return NULL;
  Served *s = PyCapsule_GetPointer(cap, SERVER_CAPSULE);
  return s ? PyLong_FromLong(qv_flight_server_port(s->server)) : NULL;
}

static PyObject *py_server_stop(PyObject *module, PyObject *args) {
  (void)module;
  PyObject *cap;
  if (!PyArg_ParseTuple(args, "O", &cap)) return NULL;
  Served *s = PyCapsule_GetPointer(cap, SERVER_CAPSULE);
  if (s == NULL) return NULL;
  QVPY_BEGIN_CALL
  served_stop(s);
  QVPY_END_CALL
  Py_RETURN_NONE;
}

PyMethodDef qvpy_flight_methods[] = {
    {"_flight_connect", py_connect, METH_VARARGS, "quiver.flight.connect's C side."},
    {"_flight_list", py_list, METH_VARARGS, "ListFlights as dicts."},
    {"_flight_info", py_info, METH_VARARGS, "GetFlightInfo of a path as a dict."},
    {"_flight_get", py_get, METH_VARARGS, "Every endpoint of a path as an arrow_array_stream."},
    {"_flight_put", py_put, METH_VARARGS, "DoPut of an arrow_array_stream; the PutResults."},
    {"_flight_action", py_action, METH_VARARGS, "DoAction; the Results' bodies."},
    {"_flight_serve", py_serve, METH_VARARGS, "Starts the directory server on a thread."},
    {"_flight_server_port", py_server_port, METH_VARARGS, "The server's port."},
    {"_flight_server_stop", py_server_stop, METH_VARARGS, "Stops the server and waits for it."},
    {NULL, NULL, 0, NULL}};
