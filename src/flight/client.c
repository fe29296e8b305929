/* The Flight client (quiver/flight.h) on src/grpc. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "flight/flight_data.h"
#include "flight/flight_internal.h"
#include "flight/flight_pb.h"
#include "grpc/grpc.h"
#include "quiver/buffer.h"
#include "util/grow.h"
#include "util/load.h"
#include "util/options.h"

#define MAX_CALL_HEADERS 64

struct QvFlightClient {
  QviGrpcChannel *ch;
  char *location;
  char *host;
  int port;
  bool tls;
  QvFlightClientOptions opt; /* strings below are the client's copies */
  char *ca_file, *server_name;
  QvFlightHeader *headers;
  size_t n_headers;
  pthread_mutex_t mu; /* auth and last_code */
  char *auth;         /* "Bearer <token>" */
  int last_code;
};

QvStatus qv_flight_status_of(int grpc_code) { return qvi_grpc_status_to_qv(grpc_code); }

int qv_flight_client_last_code(const QvFlightClient *c) {
  QvFlightClient *m = (QvFlightClient *)c;
  pthread_mutex_lock(&m->mu);
  int code = c->last_code;
  pthread_mutex_unlock(&m->mu);
  return code;
}

/* ---- locations */

QvStatus qvi_flight_parse_location(const char *location, char **host, int *port, bool *tls,
                                   QvError *error) {
  *host = NULL;
  const char *rest;
  if (strncmp(location, "grpc://", 7) == 0) {
    rest = location + 7;
    *tls = false;
  } else if (strncmp(location, "grpc+tcp://", 11) == 0) {
    rest = location + 11;
    *tls = false;
  } else if (strncmp(location, "grpc+tls://", 11) == 0) {
    rest = location + 11;
    *tls = true;
  } else {
    return qv_error_set(error, QV_EARG,
                        "Flight location '%s': expected grpc://, grpc+tcp:// or grpc+tls://HOST:PORT",
                        location);
  }
  const char *hs, *he, *colon;
  if (rest[0] == '[') {
    hs = rest + 1;
    he = strchr(hs, ']');
    if (he == NULL || he[1] != ':')
      return qv_error_set(error, QV_EARG, "Flight location '%s': bad [IPv6]:PORT", location);
    colon = he + 1;
  } else {
    hs = rest;
    colon = strrchr(rest, ':');
    if (colon == NULL)
      return qv_error_set(error, QV_EARG, "Flight location '%s': no port", location);
    he = colon;
  }
  char *end;
  long p = strtol(colon + 1, &end, 10);
  if (end == colon + 1 || (*end && *end != '/') || p < 1 || p > 65535 || he == hs)
    return qv_error_set(error, QV_EARG, "Flight location '%s': bad host or port", location);
  *host = strndup(hs, (size_t)(he - hs));
  if (*host == NULL) return qv_error_set(error, QV_ENOMEM, "out of memory");
  *port = (int)p;
  return QV_OK;
}

static char *dup_or_null(const char *s) { return s ? strdup(s) : NULL; }

QvStatus qv_flight_client_new(QvFlightClient **out, const char *location,
                              const QvFlightClientOptions *options, QvError *error) {
  if (out == NULL || location == NULL) return qv_error_set(error, QV_EARG, "NULL argument");
  *out = NULL;
  QvFlightClient *c = calloc(1, sizeof *c);
  if (c == NULL) return qv_error_set(error, QV_ENOMEM, "out of memory");
  pthread_mutex_init(&c->mu, NULL);
  QvStatus st = QV_OPTIONS_LOAD(&c->opt, options, QvFlightClientOptions, error);
  if (!st) st = qvi_flight_parse_location(location, &c->host, &c->port, &c->tls, error);
  if (!st) {
    c->location = strdup(location);
    c->ca_file = dup_or_null(c->opt.tls_ca_file);
    c->server_name = dup_or_null(c->opt.tls_server_name);
    if (c->opt.n_headers > MAX_CALL_HEADERS - 1)
      st = qv_error_set(error, QV_EARG, "at most %d call headers", MAX_CALL_HEADERS - 1);
    else if (c->opt.n_headers) {
      c->headers = calloc(c->opt.n_headers, sizeof *c->headers);
      if (c->headers == NULL) st = qv_error_set(error, QV_ENOMEM, "out of memory");
      for (size_t i = 0; !st && i < c->opt.n_headers; i++) {
        const QvFlightHeader *h = &c->opt.headers[i];
        if (h->name == NULL || h->value == NULL || h->name[0] == 0) {
          st = qv_error_set(error, QV_EARG, "call header %zu has no name or value", i);
          break;
        }
        char *name = strdup(h->name);
        c->headers[i].name = name;
        c->headers[i].value = strdup(h->value);
        c->n_headers++;
        if (!name || !c->headers[i].value) st = qv_error_set(error, QV_ENOMEM, "out of memory");
        for (char *p = name; p && *p; p++)
          if (*p >= 'A' && *p <= 'Z') *p = (char)(*p - 'A' + 'a');
      }
    }
    c->opt.headers = c->headers;
    c->opt.tls_ca_file = c->ca_file;
    c->opt.tls_server_name = c->server_name;
    if (!st && c->location == NULL) st = qv_error_set(error, QV_ENOMEM, "out of memory");
  }
  if (!st) st = qv_flight_client_set_token(c, c->opt.token, error);
  c->opt.token = NULL;
  if (!st) {
    QviGrpcTls tls = {.enabled = c->tls, .ca_file = c->ca_file, .server_name = c->server_name};
    QviGrpcLimits lim = {.max_receive_size = c->opt.max_receive_size
                                                 ? c->opt.max_receive_size
                                                 : QV_FLIGHT_DEFAULT_MAX_RECEIVE};
    if (lim.max_receive_size > QVI_GRPC_MAX_RECEIVE_LIMIT)
      st = qv_error_set(error, QV_EARG, "max_receive_size above %zu", QVI_GRPC_MAX_RECEIVE_LIMIT);
    int64_t deadline =
        c->opt.connect_timeout_ms > 0 ? qvi_grpc_now_ms() + c->opt.connect_timeout_ms : 0;
    if (!st) st = qvi_grpc_channel_new(&c->ch, c->host, c->port, &tls, &lim, deadline, error);
    if (st) qv_error_prefix(error, "%s", location);
  }
  if (st) {
    qv_flight_client_free(c);
    return st;
  }
  *out = c;
  return QV_OK;
}

void qv_flight_client_free(QvFlightClient *c) {
  if (c == NULL) return;
  qvi_grpc_channel_free(c->ch);
  for (size_t i = 0; i < c->n_headers; i++) {
    free((char *)c->headers[i].name);
    free((char *)c->headers[i].value);
  }
  free(c->headers);
  free(c->ca_file);
  free(c->server_name);
  free(c->host);
  free(c->location);
  free(c->auth);
  pthread_mutex_destroy(&c->mu);
  free(c);
}

QvStatus qv_flight_client_set_token(QvFlightClient *c, const char *token, QvError *error) {
  char *auth = NULL;
  if (token) {
    if (strpbrk(token, "\r\n") != NULL)
      return qv_error_set(error, QV_EARG, "a token cannot hold line breaks");
    size_t n = strlen(token) + 8;
    auth = malloc(n);
    if (auth == NULL) return qv_error_set(error, QV_ENOMEM, "out of memory");
    snprintf(auth, n, "Bearer %s", token);
  }
  pthread_mutex_lock(&c->mu);
  free(c->auth);
  c->auth = auth;
  pthread_mutex_unlock(&c->mu);
  return QV_OK;
}

/* ---- calls */

static void record(QvFlightClient *c, QviGrpcCall *call, QvStatus st) {
  pthread_mutex_lock(&c->mu);
  c->last_code = st == QV_OK || st == QV_EOS ? 0 : call ? qvi_grpc_call_status(call) : -1;
  pthread_mutex_unlock(&c->mu);
}

/* Starts method with the client's headers; `basic` (may be NULL) replaces
 * the bearer token. */
static QvStatus start_call(QvFlightClient *c, const char *method, const char *basic,
                           QviGrpcCall **call, QvError *error) {
  char path[96];
  snprintf(path, sizeof path, "/arrow.flight.protocol.FlightService/%s", method);
  QviGrpcHeader h[MAX_CALL_HEADERS];
  size_t n = 0;
  pthread_mutex_lock(&c->mu);
  char *auth = basic ? strdup(basic) : c->auth ? strdup(c->auth) : NULL;
  pthread_mutex_unlock(&c->mu);
  if (auth) h[n++] = (QviGrpcHeader){"authorization", auth};
  for (size_t i = 0; i < c->n_headers; i++)
    h[n++] = (QviGrpcHeader){c->headers[i].name, c->headers[i].value};
  int64_t deadline = c->opt.timeout_ms > 0 ? qvi_grpc_now_ms() + c->opt.timeout_ms : 0;
  QvStatus st = qvi_grpc_call_start(call, c->ch, path, h, n, deadline, error);
  free(auth);
  if (st) {
    qv_error_prefix(error, "%s", method);
    record(c, NULL, st);
  }
  return st;
}

static QvStatus send_writer(QviGrpcCall *call, const QviPbWriter *w, QvError *error) {
  QvStatus st = qvi_pb_writer_status(w, error);
  if (st) return st;
  struct iovec v = {w->data, w->size};
  return qvi_grpc_call_send(call, &v, 1, error);
}

/* Sends one request message and closes the sending side. */
static QvStatus request(QviGrpcCall *call, const QviPbWriter *w, QvError *error) {
  QvStatus st = send_writer(call, w, error);
  if (!st) st = qvi_grpc_call_close_send(call, error);
  return st;
}

/* A call's failure: a failed send may hide the server's status (it refused
 * the call before reading it): the status is asked for then. */
static QvStatus call_failed(QviGrpcCall *call, QvStatus st, QvError *error) {
  if (st == QV_EOS) return st;
  QviGrpcMessage m;
  QvError e2 = {0};
  QvStatus st2 = qvi_grpc_call_recv(call, &m, &e2);
  while (st2 == QV_OK) {
    qvi_grpc_message_reset(&m);
    st2 = qvi_grpc_call_recv(call, &m, &e2);
  }
  if (st2 != QV_EOS && qvi_grpc_call_status(call) > 0) {
    if (error) *error = e2;
    return st2;
  }
  return st;
}

typedef QvStatus (*Collect)(void *ctx, const uint8_t *data, size_t size, QvError *error);

/* A call with one request and a stream of responses (unary: max 1). */
static QvStatus call_collect(QvFlightClient *c, const char *method, const char *basic,
                             const QviPbWriter *req, Collect fn, void *ctx, size_t max,
                             QviGrpcCall **keep, QvError *error) {
  QviGrpcCall *call;
  QvStatus st = start_call(c, method, basic, &call, error);
  if (st) return st;
  st = request(call, req, error);
  if (st) st = call_failed(call, st, error);
  size_t got = 0;
  while (!st) {
    QviGrpcMessage m;
    st = qvi_grpc_call_recv(call, &m, error);
    if (st) break;
    if (max && got == max) {
      qvi_grpc_message_reset(&m);
      st = qv_error_set(error, QV_EINVAL, "the server sent more than %zu responses", max);
      break;
    }
    got++;
    st = fn(ctx, m.data, m.size, error);
    qvi_grpc_message_reset(&m);
  }
  if (st == QV_EOS && max == 1 && got == 0)
    st = qv_error_set(error, QV_EINVAL, "the server sent no response");
  if (st == QV_EOS) st = QV_OK;
  record(c, call, st);
  if (st) qv_error_prefix(error, "%s", method);
  if (keep && !st) *keep = call;
  else qvi_grpc_call_free(call);
  return st;
}

/* ---- growing lists */

typedef struct List {
  void *items;
  size_t n, cap, item;
} List;

static void *list_push(List *l) {
  if (l->n == l->cap) {
    void *p = qvi_grow_array(l->items, &l->cap, l->cap + 1, 8, l->item);
    if (p == NULL) return NULL;
    l->items = p;
  }
  void *slot = (uint8_t *)l->items + l->n * l->item;
  memset(slot, 0, l->item);
  return slot;
}

static QvStatus collect_info(void *ctx, const uint8_t *d, size_t n, QvError *error) {
  List *l = ctx;
  QvFlightInfo *slot = list_push(l);
  if (slot == NULL) return qv_error_set(error, QV_ENOMEM, "out of memory");
  QvStatus st = qvi_flight_decode_info(d, n, slot, error);
  if (!st) l->n++;
  return st;
}

void qv_flight_info_list_free(QvFlightInfo *infos, size_t n) {
  for (size_t i = 0; infos && i < n; i++) qv_flight_info_reset(&infos[i]);
  free(infos);
}

QvStatus qv_flight_list_flights(QvFlightClient *c, const void *criteria, size_t criteria_size,
                                QvFlightInfo **out, size_t *n_out, QvError *error) {
  *out = NULL;
  *n_out = 0;
  QviPbWriter w;
  qvi_pb_writer_init(&w);
  qvi_flight_put_single(&w, criteria, criteria_size);
  List l = {.item = sizeof(QvFlightInfo)};
  QvStatus st = call_collect(c, "ListFlights", NULL, &w, collect_info, &l, 0, NULL, error);
  qvi_pb_writer_reset(&w);
  if (st) {
    qv_flight_info_list_free(l.items, l.n);
    return st;
  }
  *out = l.items;
  *n_out = l.n;
  return QV_OK;
}

static QvStatus collect_one_info(void *ctx, const uint8_t *d, size_t n, QvError *error) {
  return qvi_flight_decode_info(d, n, ctx, error);
}

QvStatus qv_flight_get_flight_info(QvFlightClient *c, const QvFlightDescriptor *d,
                                   QvFlightInfo *out, QvError *error) {
  memset(out, 0, sizeof *out);
  QviPbWriter w;
  qvi_pb_writer_init(&w);
  qvi_flight_put_descriptor(&w, d);
  QvStatus st = call_collect(c, "GetFlightInfo", NULL, &w, collect_one_info, out, 1, NULL, error);
  qvi_pb_writer_reset(&w);
  if (st) qv_flight_info_reset(out);
  return st;
}

static QvStatus collect_poll(void *ctx, const uint8_t *d, size_t n, QvError *error) {
  return qvi_flight_decode_poll_info(d, n, ctx, error);
}

QvStatus qv_flight_poll_flight_info(QvFlightClient *c, const QvFlightDescriptor *d,
                                    QvFlightPollInfo *out, QvError *error) {
  memset(out, 0, sizeof *out);
  QviPbWriter w;
  qvi_pb_writer_init(&w);
  qvi_flight_put_descriptor(&w, d);
  QvStatus st = call_collect(c, "PollFlightInfo", NULL, &w, collect_poll, out, 1, NULL, error);
  qvi_pb_writer_reset(&w);
  if (st) qv_flight_poll_info_reset(out);
  return st;
}

/* ---- schemas */

static QvStatus one_message(void *ctx, QvIpcMessage *out, QvError *error) {
  QvIpcMessage *m = ctx;
  if (m->metadata == NULL) return QV_EOS;
  (void)error;
  *out = *m;
  memset(m, 0, sizeof *m);
  return QV_OK;
}

QvStatus qv_flight_schema_decode(const void *data, size_t size, struct ArrowSchema *out,
                                 QvError *error) {
  memset(out, 0, sizeof *out);
  const uint8_t *p = data;
  if (size == 0) return qv_error_set(error, QV_EINVAL, "no schema: the bytes are empty");
  size_t skip = 0;
  if (size >= 8 && qvi_le_u32(p) == QV_IPC_CONTINUATION) skip = 8;
  else if (size >= 4) skip = 4; /* the legacy prefix, a bare length */
  if (size < skip + 1)
    return qv_error_set(error, QV_ETRUNCATED, "schema: %zu bytes hold no message", size);
  uint32_t len = qvi_le_u32(p + skip - 4);
  if (len > size - skip)
    return qv_error_set(error, QV_ETRUNCATED,
                        "schema: the message length %u runs past the %zu bytes given", len, size);
  QvIpcMessage msg = {0};
  QvStatus st = qv_message_decode(p + skip, len, NULL, &msg.message, error);
  if (st) return qv_error_prefix(error, "schema");
  msg.metadata = p + skip;
  msg.metadata_length = (int32_t)len;
  static const uint8_t none[8];
  msg.body = none;
  if (msg.message.header_type != QV_HEADER_SCHEMA) {
    qv_message_reset(&msg.message);
    return qv_error_set(error, QV_EINVAL, "schema: the message is not a Schema");
  }
  struct ArrowArrayStream s;
  st = qv_rb_stream_reader_from_messages(&s, one_message, &msg, NULL, NULL, error);
  qv_ipc_message_reset(&msg);
  if (st) return qv_error_prefix(error, "schema");
  st = qv_rb_stream_get_schema(&s, out, error);
  s.release(&s);
  return st;
}

static QvStatus collect_schema(void *ctx, const uint8_t *d, size_t n, QvError *error) {
  QvFlightBytes b;
  QvStatus st = qvi_flight_decode_single(d, n, "SchemaResult", false, &b, error);
  if (st) return st;
  st = qv_flight_schema_decode(b.data, b.size, ctx, error);
  qv_flight_bytes_reset(&b);
  return st;
}

QvStatus qv_flight_get_schema(QvFlightClient *c, const QvFlightDescriptor *d,
                              struct ArrowSchema *out, QvError *error) {
  memset(out, 0, sizeof *out);
  QviPbWriter w;
  qvi_pb_writer_init(&w);
  qvi_flight_put_descriptor(&w, d);
  QvStatus st = call_collect(c, "GetSchema", NULL, &w, collect_schema, out, 1, NULL, error);
  qvi_pb_writer_reset(&w);
  if (st && out->release) out->release(out);
  return st;
}

/* ---- DoGet */

typedef struct GetCtx {
  QvFlightClient *client;
  QviGrpcCall *call;
  const char *method;
} GetCtx;

static QvStatus get_recv(void *ctx, const uint8_t **data, size_t *size, QvOwner **owner,
                         QvError *error) {
  GetCtx *g = ctx;
  QviGrpcMessage m;
  QvStatus st = qvi_grpc_call_recv(g->call, &m, error);
  if (st) {
    record(g->client, g->call, st);
    if (st != QV_EOS) qv_error_prefix(error, "%s", g->method);
    return st;
  }
  *data = m.data;
  *size = m.size;
  *owner = m.owner;
  return QV_OK;
}

static void get_release(void *ctx) {
  GetCtx *g = ctx;
  qvi_grpc_call_free(g->call);
  free(g);
}

/* The FlightData stream of a started call whose request is sent. */
static QvStatus stream_of_call(QvFlightClient *c, QviGrpcCall *call, const char *method,
                               QviFlightMetadataFn on_data, void *on_ctx,
                               struct ArrowArrayStream *out, QvError *error) {
  GetCtx *g = calloc(1, sizeof *g);
  if (g == NULL) {
    qvi_grpc_call_free(call);
    return qv_error_set(error, QV_ENOMEM, "out of memory");
  }
  g->client = c;
  g->call = call;
  g->method = method;
  (void)on_data;
  (void)on_ctx;
  QviFlightReadHooks hooks = {.recv = get_recv, .ctx = g, .release = get_release};
  return qvi_flight_stream_reader_new(out, &hooks, NULL, error);
}

QvStatus qv_flight_do_get(QvFlightClient *c, const void *ticket, size_t ticket_size,
                          struct ArrowArrayStream *out, QvError *error) {
  memset(out, 0, sizeof *out);
  QviGrpcCall *call;
  QvStatus st = start_call(c, "DoGet", NULL, &call, error);
  if (st) return st;
  qvi_grpc_call_set_placement(call, qvi_flight_data_placement, NULL);
  QviPbWriter w;
  qvi_pb_writer_init(&w);
  qvi_flight_put_single(&w, ticket, ticket_size);
  st = request(call, &w, error);
  qvi_pb_writer_reset(&w);
  if (st) {
    st = call_failed(call, st, error);
    record(c, call, st);
    qvi_grpc_call_free(call);
    return qv_error_prefix(error, "DoGet");
  }
  return stream_of_call(c, call, "DoGet", NULL, NULL, out, error);
}

/* ---- sending FlightData on a call */

static QvStatus emit_begin(void *ctx, size_t total, const uint8_t *head, size_t head_n,
                           QvError *error) {
  struct iovec v = {(void *)head, head_n};
  return qvi_grpc_call_send_begin(ctx, total, &v, 1, error);
}

static QvStatus emit_more(void *ctx, const uint8_t *data, size_t n, QvError *error) {
  struct iovec v = {(void *)data, n};
  return qvi_grpc_call_send_more(ctx, &v, 1, error);
}

QviFlightEmit qvi_flight_emit_call(QviGrpcCall *call) {
  return (QviFlightEmit){.ctx = call, .begin = emit_begin, .more = emit_more};
}

/* ---- DoPut */

typedef struct PutResults {
  QviGrpcCall *call;
  QvFlightMetadataFn fn;
  void *ctx;
  QvStatus st;
  QvError error;
} PutResults;

static void *put_results_thread(void *arg) {
  PutResults *p = arg;
  for (;;) {
    QviGrpcMessage m;
    p->st = qvi_grpc_call_recv(p->call, &m, &p->error);
    if (p->st) break;
    QvFlightBytes b;
    p->st = qvi_flight_decode_single(m.data, m.size, "PutResult", false, &b, &p->error);
    qvi_grpc_message_reset(&m);
    if (p->st) {
      qvi_grpc_call_cancel(p->call);
      break;
    }
    if (p->fn) p->fn(p->ctx, b.data, b.size);
    qv_flight_bytes_reset(&b);
  }
  return NULL;
}

QvStatus qv_flight_do_put(QvFlightClient *c, const QvFlightDescriptor *descriptor,
                          struct ArrowArrayStream *stream, QvFlightMetadataFn on_result, void *ctx,
                          QvError *error) {
  if (descriptor == NULL || stream == NULL || stream->release == NULL)
    return qv_error_set(error, QV_EARG, "DoPut: no descriptor or stream");
  QviGrpcCall *call;
  QvStatus st = start_call(c, "DoPut", NULL, &call, error);
  if (st) return st;
  /* the server's PutResults are read while the batches go out, so that a
   * server answering each batch never waits for the upload to end */
  PutResults pr = {.call = call, .fn = on_result, .ctx = ctx};
  pthread_t t;
  if (pthread_create(&t, NULL, put_results_thread, &pr) != 0) {
    qvi_grpc_call_free(call);
    return qv_error_set(error, QV_EIO, "DoPut: cannot start a thread");
  }
  QviFlightEmit emit = qvi_flight_emit_call(call);
  st = qvi_flight_write_stream(stream, &emit, descriptor, error);
  if (!st) st = qvi_grpc_call_close_send(call, error);
  /* a failed upload is cancelled: the server must not keep a part */
  if (st) qvi_grpc_call_cancel(call);
  pthread_join(t, NULL);
  if (!st || qvi_grpc_call_status(call) > 0) {
    /* the server's status says more than a failed send */
    if (pr.st != QV_EOS || st) {
      if (pr.st != QV_EOS && pr.st != QV_OK) {
        st = pr.st;
        if (error) *error = pr.error;
      }
    }
  }
  if (st == QV_EOS) st = QV_OK;
  record(c, call, st);
  qvi_grpc_call_free(call);
  return st ? qv_error_prefix(error, "DoPut") : QV_OK;
}

/* ---- DoExchange */

typedef struct Exchange {
  GetCtx get; /* first: the reader's context */
  struct ArrowArrayStream *input;
  QvFlightDescriptor descriptor;
  bool has_descriptor;
  QvFlightMetadataFn on_metadata;
  void *md_ctx;
  pthread_t sender;
  bool started;
  QvStatus send_st;
  QvError send_error;
} Exchange;

static QvStatus desc_copy(QvFlightDescriptor *dst, const QvFlightDescriptor *src,
                          QvError *error);

static void *exchange_sender(void *arg) {
  Exchange *x = arg;
  QviGrpcCall *call = x->get.call;
  QviFlightEmit emit = qvi_flight_emit_call(call);
  QvStatus st;
  if (x->input) {
    st = qvi_flight_write_stream(x->input, &emit, x->has_descriptor ? &x->descriptor : NULL,
                                 &x->send_error);
  } else {
    QviFlightWriter *w;
    QvSink *sink;
    st = qvi_flight_writer_new(&w, &sink, &emit, x->has_descriptor ? &x->descriptor : NULL,
                               &x->send_error);
    if (!st) {
      st = qvi_flight_writer_metadata_only(w, NULL, 0, &x->send_error);
      qv_sink_free(sink);
      qvi_flight_writer_free(w);
    }
  }
  if (!st) st = qvi_grpc_call_close_send(call, &x->send_error);
  if (st) qvi_grpc_call_cancel(call);
  x->send_st = st;
  return NULL;
}

static QvStatus exchange_recv(void *ctx, const uint8_t **data, size_t *size, QvOwner **owner,
                              QvError *error) {
  Exchange *x = ctx;
  QvStatus st = get_recv(&x->get, data, size, owner, error);
  if (st && st != QV_EOS && x->send_st && qvi_grpc_call_status(x->get.call) <= 0 && error)
    *error = x->send_error;
  return st;
}

static void exchange_on_data(void *ctx, const QviFlightData *fd) {
  Exchange *x = ctx;
  if (x->on_metadata && fd->app_metadata_size)
    x->on_metadata(x->md_ctx, fd->app_metadata, fd->app_metadata_size);
}

static void exchange_release(void *ctx) {
  Exchange *x = ctx;
  qvi_grpc_call_cancel(x->get.call);
  if (x->started) pthread_join(x->sender, NULL);
  qvi_grpc_call_free(x->get.call);
  qv_flight_descriptor_reset(&x->descriptor);
  free(x);
}

QvStatus qv_flight_do_exchange(QvFlightClient *c, const QvFlightDescriptor *descriptor,
                               struct ArrowArrayStream *input, struct ArrowArrayStream *out,
                               QvFlightMetadataFn on_metadata, void *ctx, QvError *error) {
  memset(out, 0, sizeof *out);
  Exchange *x = calloc(1, sizeof *x);
  if (x == NULL) return qv_error_set(error, QV_ENOMEM, "out of memory");
  QvStatus st = QV_OK;
  if (descriptor) {
    x->has_descriptor = true;
    st = desc_copy(&x->descriptor, descriptor, error);
  }
  QviGrpcCall *call = NULL;
  if (!st) st = start_call(c, "DoExchange", NULL, &call, error);
  if (st) {
    qv_flight_descriptor_reset(&x->descriptor);
    free(x);
    return st;
  }
  qvi_grpc_call_set_placement(call, qvi_flight_data_placement, NULL);
  x->get = (GetCtx){.client = c, .call = call, .method = "DoExchange"};
  x->input = input;
  x->on_metadata = on_metadata;
  x->md_ctx = ctx;
  if (pthread_create(&x->sender, NULL, exchange_sender, x) != 0) {
    exchange_release(x);
    return qv_error_set(error, QV_EIO, "DoExchange: cannot start a thread");
  }
  x->started = true;
  QviFlightReadHooks hooks = {.recv = exchange_recv, .on_data = exchange_on_data, .ctx = x,
                              .release = exchange_release};
  return qvi_flight_stream_reader_new(out, &hooks, NULL, error);
}

/* ---- DoAction, ListActions */

static QvStatus collect_result(void *ctx, const uint8_t *d, size_t n, QvError *error) {
  List *l = ctx;
  QvFlightBytes *slot = list_push(l);
  if (slot == NULL) return qv_error_set(error, QV_ENOMEM, "out of memory");
  QvStatus st = qvi_flight_decode_single(d, n, "Result", false, slot, error);
  if (!st) l->n++;
  return st;
}

void qv_flight_bytes_list_free(QvFlightBytes *list, size_t n) {
  for (size_t i = 0; list && i < n; i++) qv_flight_bytes_reset(&list[i]);
  free(list);
}

QvStatus qv_flight_do_action(QvFlightClient *c, const QvFlightAction *action, QvFlightBytes **out,
                             size_t *n_out, QvError *error) {
  *out = NULL;
  *n_out = 0;
  QviPbWriter w;
  qvi_pb_writer_init(&w);
  qvi_flight_put_action(&w, action);
  List l = {.item = sizeof(QvFlightBytes)};
  QvStatus st = call_collect(c, "DoAction", NULL, &w, collect_result, &l, 0, NULL, error);
  qvi_pb_writer_reset(&w);
  if (st) {
    qv_flight_bytes_list_free(l.items, l.n);
    return st;
  }
  *out = l.items;
  *n_out = l.n;
  return QV_OK;
}

static QvStatus collect_action_type(void *ctx, const uint8_t *d, size_t n, QvError *error) {
  List *l = ctx;
  QvFlightActionType *slot = list_push(l);
  if (slot == NULL) return qv_error_set(error, QV_ENOMEM, "out of memory");
  QvStatus st = qvi_flight_decode_action_type(d, n, slot, error);
  if (!st) l->n++;
  return st;
}

void qv_flight_action_type_list_free(QvFlightActionType *list, size_t n) {
  for (size_t i = 0; list && i < n; i++) qv_flight_action_type_reset(&list[i]);
  free(list);
}

QvStatus qv_flight_list_actions(QvFlightClient *c, QvFlightActionType **out, size_t *n_out,
                                QvError *error) {
  *out = NULL;
  *n_out = 0;
  QviPbWriter w;
  qvi_pb_writer_init(&w);
  List l = {.item = sizeof(QvFlightActionType)};
  QvStatus st = call_collect(c, "ListActions", NULL, &w, collect_action_type, &l, 0, NULL, error);
  if (st) {
    qv_flight_action_type_list_free(l.items, l.n);
    return st;
  }
  *out = l.items;
  *n_out = l.n;
  return QV_OK;
}

/* ---- Handshake */

static void base64(const uint8_t *in, size_t n, char *out) {
  static const char t[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  size_t o = 0;
  for (size_t i = 0; i < n; i += 3) {
    uint32_t v = (uint32_t)in[i] << 16;
    if (i + 1 < n) v |= (uint32_t)in[i + 1] << 8;
    if (i + 2 < n) v |= in[i + 2];
    out[o++] = t[(v >> 18) & 63];
    out[o++] = t[(v >> 12) & 63];
    out[o++] = i + 1 < n ? t[(v >> 6) & 63] : '=';
    out[o++] = i + 2 < n ? t[v & 63] : '=';
  }
  out[o] = 0;
}

static QvStatus collect_handshake(void *ctx, const uint8_t *d, size_t n, QvError *error) {
  return qvi_flight_decode_handshake(d, n, ctx, error);
}

QvStatus qv_flight_handshake_basic(QvFlightClient *c, const char *user, const char *password,
                                   QvError *error) {
  if (user == NULL || password == NULL)
    return qv_error_set(error, QV_EARG, "Handshake: no user or password");
  size_t ul = strlen(user), pl = strlen(password);
  if (ul + pl > 4096) return qv_error_set(error, QV_EARG, "Handshake: credentials too long");
  uint8_t raw[4098];
  memcpy(raw, user, ul);
  raw[ul] = ':';
  memcpy(raw + ul + 1, password, pl);
  char basic[6 + 4 * (sizeof raw / 3 + 1) + 1];
  memcpy(basic, "Basic ", 6);
  base64(raw, ul + 1 + pl, basic + 6);
  /* BasicAuth { username = 2; password = 3 } as the request's payload */
  QviPbWriter auth, w;
  qvi_pb_writer_init(&auth);
  qvi_pb_writer_init(&w);
  qvi_pb_put_bytes(&auth, 2, user, ul);
  qvi_pb_put_bytes(&auth, 3, password, pl);
  QvFlightHandshake req = {.payload = {auth.data, auth.size}};
  qvi_flight_put_handshake(&w, &req);
  QvFlightHandshake resp = {0};
  QviGrpcCall *call = NULL;
  QvStatus st = call_collect(c, "Handshake", basic, &w, collect_handshake, &resp, 1, &call, error);
  qvi_pb_writer_reset(&auth);
  qvi_pb_writer_reset(&w);
  if (st) return st;
  const char *hdr = qvi_grpc_call_header(call, "authorization");
  char *token = NULL;
  if (hdr && strncasecmp(hdr, "Bearer ", 7) == 0) token = strdup(hdr + 7);
  else if (resp.payload.size && memchr(resp.payload.data, 0, resp.payload.size) == NULL)
    token = strdup((char *)resp.payload.data);
  qvi_grpc_call_free(call);
  qv_flight_handshake_reset(&resp);
  if (token == NULL)
    return qv_error_set(error, QV_EINVAL, "Handshake: the server answered without a token");
  st = qv_flight_client_set_token(c, token, error);
  free(token);
  return st;
}

/* ---- several endpoints */

static QvStatus desc_copy(QvFlightDescriptor *dst, const QvFlightDescriptor *src,
                          QvError *error) {
  QviPbWriter w;
  qvi_pb_writer_init(&w);
  qvi_flight_put_descriptor(&w, src);
  QvStatus st = qvi_pb_writer_status(&w, error);
  if (!st) st = qvi_flight_decode_descriptor(w.data, w.size, dst, error);
  qvi_pb_writer_reset(&w);
  return st;
}

typedef struct Slot {
  bool taken, done;
  QvStatus st;
  QvError error;
  struct ArrowSchema schema;
  struct ArrowArray *batches;
  size_t n, cap;
} Slot;

typedef struct Endpoints {
  QvFlightClient *client;
  QvFlightInfo info; /* a copy */
  int parallel;
  pthread_mutex_t mu;
  pthread_cond_t cond;
  pthread_t *workers;
  int n_workers;
  bool stop;
  Slot *slots;
  size_t cur;       /* endpoint being handed out */
  size_t next_take; /* next endpoint a worker takes */
  size_t batch_i;   /* within slots[cur] (parallel) */
  struct ArrowArrayStream live; /* sequential: the current endpoint's stream */
  bool live_open;
  QvFlightClient *live_other; /* its connection when it lives elsewhere */
  struct ArrowSchema schema; /* of the first endpoint */
  bool have_schema;
  QvError error;
  bool failed;
} Endpoints;

static bool is_reuse(const char *loc) {
  return strncmp(loc, "arrow-flight-reuse-connection:", 30) == 0;
}

/* Opens endpoint i's DoGet; *other receives a client to free after the
 * stream when the endpoint lives elsewhere. */
static QvStatus open_endpoint(Endpoints *e, size_t i, QvFlightClient **other,
                              struct ArrowArrayStream *out, QvError *error) {
  *other = NULL;
  const QvFlightEndpoint *ep = &e->info.endpoints[i];
  QvFlightClient *c = e->client;
  if (ep->n_locations && !is_reuse(ep->locations[0]) && strcmp(ep->locations[0], c->location)) {
    QvFlightClientOptions o = c->opt;
    pthread_mutex_lock(&c->mu);
    char *tok = c->auth ? strdup(c->auth + 7) : NULL;
    pthread_mutex_unlock(&c->mu);
    o.token = tok;
    QvStatus st = qv_flight_client_new(other, ep->locations[0], &o, error);
    free(tok);
    if (st) return qv_error_prefix(error, "endpoint %zu", i);
    c = *other;
  }
  QvStatus st = qv_flight_do_get(c, ep->ticket.data, ep->ticket.size, out, error);
  if (st) {
    qv_flight_client_free(*other);
    *other = NULL;
    return qv_error_prefix(error, "endpoint %zu", i);
  }
  return QV_OK;
}

static bool same_schema(const struct ArrowSchema *a, const struct ArrowSchema *b) {
  if (strcmp(a->format, b->format) || (a->name == NULL) != (b->name == NULL) ||
      (a->name && strcmp(a->name, b->name)) || a->n_children != b->n_children ||
      (a->flags & 2) != (b->flags & 2) || (a->dictionary == NULL) != (b->dictionary == NULL))
    return false;
  for (int64_t i = 0; i < a->n_children; i++)
    if (!same_schema(a->children[i], b->children[i])) return false;
  return a->dictionary == NULL || same_schema(a->dictionary, b->dictionary);
}

/* Reads endpoint i whole into its slot. */
static void fetch_slot(Endpoints *e, size_t i) {
  Slot *s = &e->slots[i];
  QvFlightClient *other;
  struct ArrowArrayStream st_;
  QvStatus st = open_endpoint(e, i, &other, &st_, &s->error);
  if (!st) {
    st = qv_rb_stream_get_schema(&st_, &s->schema, &s->error);
    while (!st) {
      pthread_mutex_lock(&e->mu);
      bool stop = e->stop;
      pthread_mutex_unlock(&e->mu);
      if (stop) {
        st = qv_error_set(&s->error, QV_EIO, "stopped");
        break;
      }
      if (s->n == s->cap) {
        struct ArrowArray *p = qvi_grow_array(s->batches, &s->cap, s->cap + 1, 16, sizeof *p);
        if (p == NULL) {
          st = qv_error_set(&s->error, QV_ENOMEM, "out of memory");
          break;
        }
        s->batches = p;
      }
      st = qv_rb_stream_get_next(&st_, &s->batches[s->n], &s->error);
      if (!st) s->n++;
    }
    if (st == QV_EOS) st = QV_OK;
    else qv_error_prefix(&s->error, "endpoint %zu", i);
    st_.release(&st_);
  }
  qv_flight_client_free(other);
  pthread_mutex_lock(&e->mu);
  s->st = st;
  s->done = true;
  pthread_cond_broadcast(&e->cond);
  pthread_mutex_unlock(&e->mu);
}

static void *endpoint_worker(void *arg) {
  Endpoints *e = arg;
  pthread_mutex_lock(&e->mu);
  for (;;) {
    while (!e->stop && e->next_take < e->info.n_endpoints &&
           e->next_take >= e->cur + (size_t)e->parallel)
      pthread_cond_wait(&e->cond, &e->mu);
    if (e->stop || e->next_take >= e->info.n_endpoints) break;
    size_t i = e->next_take++;
    e->slots[i].taken = true;
    pthread_mutex_unlock(&e->mu);
    fetch_slot(e, i);
    pthread_mutex_lock(&e->mu);
  }
  pthread_mutex_unlock(&e->mu);
  return NULL;
}

static void slot_clear(Slot *s) {
  for (size_t k = 0; k < s->n; k++)
    if (s->batches[k].release) s->batches[k].release(&s->batches[k]);
  free(s->batches);
  if (s->schema.release) s->schema.release(&s->schema);
  memset(s, 0, sizeof *s);
}

static QvStatus check_schema(Endpoints *e, const struct ArrowSchema *s, size_t i, QvError *error) {
  if (!e->have_schema) {
    QvStatus st = qv_arrow_schema_copy(s, &e->schema, error);
    if (!st) e->have_schema = true;
    return st;
  }
  if (!same_schema(&e->schema, s))
    return qv_error_set(error, QV_EINVAL, "endpoint %zu's schema differs from endpoint 0's", i);
  return QV_OK;
}

static QvStatus ep_next(Endpoints *e, struct ArrowArray *out, QvError *error) {
  memset(out, 0, sizeof *out);
  if (e->failed) {
    if (error) *error = e->error;
    return e->error.code;
  }
  QvStatus st = QV_EOS;
  while (e->cur < e->info.n_endpoints) {
    if (e->parallel <= 1) {
      if (!e->live_open) {
        st = open_endpoint(e, e->cur, &e->live_other, &e->live, error);
        if (st) break;
        e->live_open = true;
        struct ArrowSchema s;
        if ((st = qv_rb_stream_get_schema(&e->live, &s, error))) break;
        st = check_schema(e, &s, e->cur, error);
        s.release(&s);
        if (st) break;
      }
      st = qv_rb_stream_get_next(&e->live, out, error);
      if (st == QV_OK) return QV_OK;
      if (st != QV_EOS) break;
      e->live.release(&e->live);
      e->live_open = false;
      qv_flight_client_free(e->live_other);
      e->live_other = NULL;
      e->cur++;
      continue;
    }
    Slot *s = &e->slots[e->cur];
    pthread_mutex_lock(&e->mu);
    while (!s->done) pthread_cond_wait(&e->cond, &e->mu);
    pthread_mutex_unlock(&e->mu);
    if (s->st) {
      st = s->st;
      if (error) *error = s->error;
      break;
    }
    if (e->batch_i == 0 && (st = check_schema(e, &s->schema, e->cur, error))) break;
    if (e->batch_i < s->n) {
      *out = s->batches[e->batch_i];
      s->batches[e->batch_i++].release = NULL;
      return QV_OK;
    }
    slot_clear(s);
    e->batch_i = 0;
    pthread_mutex_lock(&e->mu);
    e->cur++;
    pthread_cond_broadcast(&e->cond);
    pthread_mutex_unlock(&e->mu);
    st = QV_EOS;
  }
  if (st != QV_EOS) {
    e->failed = true;
    if (error) e->error = *error;
    e->error.code = st;
  }
  return st;
}

static int ep_errno(QvStatus st) { return st == QV_ENOMEM ? 12 : st == QV_EIO ? 5 : 22; }

static int ep_get_next(struct ArrowArrayStream *s, struct ArrowArray *out) {
  QvError err = {0};
  QvStatus st = ep_next(s->private_data, out, &err);
  return st == QV_OK || st == QV_EOS ? 0 : ep_errno(st);
}

static QvStatus ep_schema(Endpoints *e, struct ArrowSchema *out, QvError *error) {
  if (e->have_schema) return qv_arrow_schema_copy(&e->schema, out, error);
  if (e->info.n_endpoints == 0 || e->failed) {
    if (e->failed) {
      if (error) *error = e->error;
      return e->error.code;
    }
    return qv_flight_schema_decode(e->info.schema.data, e->info.schema.size, out, error);
  }
  /* the first endpoint's schema: open it (sequential) or wait for it */
  if (e->parallel <= 1) {
    QvStatus st = open_endpoint(e, 0, &e->live_other, &e->live, error);
    if (st) return st;
    e->live_open = true;
    struct ArrowSchema s;
    if ((st = qv_rb_stream_get_schema(&e->live, &s, error))) return st;
    st = check_schema(e, &s, 0, error);
    s.release(&s);
    if (st) return st;
  } else {
    Slot *s = &e->slots[0];
    pthread_mutex_lock(&e->mu);
    while (!s->done) pthread_cond_wait(&e->cond, &e->mu);
    pthread_mutex_unlock(&e->mu);
    if (s->st) {
      if (error) *error = s->error;
      return s->st;
    }
    QvStatus st = check_schema(e, &s->schema, 0, error);
    if (st) return st;
  }
  return qv_arrow_schema_copy(&e->schema, out, error);
}

static int ep_get_schema(struct ArrowArrayStream *s, struct ArrowSchema *out) {
  Endpoints *e = s->private_data;
  QvError err = {0};
  QvStatus st = ep_schema(e, out, &err);
  if (st && !e->failed) {
    e->failed = true;
    e->error = err;
  }
  return st ? ep_errno(st) : 0;
}

static const char *ep_last_error(struct ArrowArrayStream *s) {
  Endpoints *e = s->private_data;
  return e->failed ? e->error.message : NULL;
}

static void ep_free(Endpoints *e) {
  pthread_mutex_lock(&e->mu);
  e->stop = true;
  pthread_cond_broadcast(&e->cond);
  pthread_mutex_unlock(&e->mu);
  for (int i = 0; i < e->n_workers; i++) pthread_join(e->workers[i], NULL);
  free(e->workers);
  if (e->slots)
    for (size_t i = 0; i < e->info.n_endpoints; i++) slot_clear(&e->slots[i]);
  free(e->slots);
  if (e->live_open) e->live.release(&e->live);
  qv_flight_client_free(e->live_other);
  if (e->have_schema) e->schema.release(&e->schema);
  qv_flight_info_reset(&e->info);
  pthread_cond_destroy(&e->cond);
  pthread_mutex_destroy(&e->mu);
  free(e);
}

static void ep_release(struct ArrowArrayStream *s) {
  if (s == NULL || s->release == NULL) return;
  ep_free(s->private_data);
  s->release = NULL;
}

QvStatus qv_flight_read_endpoints(QvFlightClient *c, const QvFlightInfo *info, int parallel,
                                  struct ArrowArrayStream *out, QvError *error) {
  memset(out, 0, sizeof *out);
  if (parallel < 0 || parallel > 256)
    return qv_error_set(error, QV_EARG, "parallel must be 0..256");
  Endpoints *e = calloc(1, sizeof *e);
  if (e == NULL) return qv_error_set(error, QV_ENOMEM, "out of memory");
  pthread_mutex_init(&e->mu, NULL);
  pthread_cond_init(&e->cond, NULL);
  e->client = c;
  e->parallel = parallel;
  QviPbWriter w;
  qvi_pb_writer_init(&w);
  qvi_flight_put_info(&w, info);
  QvStatus st = qvi_pb_writer_status(&w, error);
  if (!st) st = qvi_flight_decode_info(w.data, w.size, &e->info, error);
  qvi_pb_writer_reset(&w);
  if (!st && parallel > 1 && e->info.n_endpoints) {
    e->slots = calloc(e->info.n_endpoints, sizeof *e->slots);
    int n = parallel < (int)e->info.n_endpoints ? parallel : (int)e->info.n_endpoints;
    e->workers = calloc((size_t)n, sizeof *e->workers);
    if (e->slots == NULL || e->workers == NULL) st = qv_error_set(error, QV_ENOMEM, "out of memory");
    for (int i = 0; !st && i < n; i++) {
      if (pthread_create(&e->workers[i], NULL, endpoint_worker, e) != 0)
        st = qv_error_set(error, QV_EIO, "cannot start a thread");
      else e->n_workers++;
    }
  }
  if (st) {
    ep_free(e);
    return st;
  }
  out->get_schema = ep_get_schema;
  out->get_next = ep_get_next;
  out->get_last_error = ep_last_error;
  out->release = ep_release;
  out->private_data = e;
  return QV_OK;
}
