/* The Flight server library (quiver/flight.h) on src/grpc: a call's path
 * picks the handler, requests are decoded strictly, responses encoded. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "flight/flight_data.h"
#include "flight/flight_internal.h"
#include "flight/flight_pb.h"
#include "grpc/grpc.h"
#include "util/options.h"

struct QvFlightServer {
  QviGrpcServer *grpc;
  QvFlightHandlers h;
  char *token, *user, *password;
  char *bearer; /* "Bearer <token>" */
};

struct QvFlightCall {
  QvFlightServer *server;
  QviGrpcCall *grpc;
  int code; /* set by the handler, -1: from the status */
  /* DoPut / DoExchange: the descriptor of the first FlightData */
  bool have_descriptor;
  QvFlightDescriptor descriptor;
  QvStatus desc_st;
  QvError desc_error;
  int64_t n_headers_seen; /* FlightData with a data_header received */
};

void qv_flight_call_set_code(QvFlightCall *call, QvFlightCode code) { call->code = (int)code; }

const char *qv_flight_call_header(const QvFlightCall *call, const char *name) {
  return qvi_grpc_call_header(call->grpc, name);
}

bool qv_flight_call_cancelled(const QvFlightCall *call) {
  return qvi_grpc_call_cancelled(call->grpc);
}

static QvStatus send_pb(QvFlightCall *call, QviPbWriter *w, QvError *error) {
  QvStatus st = qvi_pb_writer_status(w, error);
  if (!st) {
    struct iovec v = {w->data, w->size};
    st = qvi_grpc_call_send(call->grpc, &v, 1, error);
  }
  qvi_pb_writer_reset(w);
  return st;
}

QvStatus qv_flight_call_send_info(QvFlightCall *call, const QvFlightInfo *info, QvError *error) {
  QviPbWriter w;
  qvi_pb_writer_init(&w);
  qvi_flight_put_info(&w, info);
  return send_pb(call, &w, error);
}

static QvStatus send_single(QvFlightCall *call, const void *data, size_t size, QvError *error) {
  QviPbWriter w;
  qvi_pb_writer_init(&w);
  qvi_flight_put_single(&w, data, size);
  return send_pb(call, &w, error);
}

QvStatus qv_flight_call_send_put_result(QvFlightCall *call, const void *app_metadata, size_t size,
                                        QvError *error) {
  return send_single(call, app_metadata, size, error);
}

QvStatus qv_flight_call_send_result(QvFlightCall *call, const void *body, size_t size,
                                    QvError *error) {
  return send_single(call, body, size, error);
}

QvStatus qv_flight_call_send_action_type(QvFlightCall *call, const QvFlightActionType *t,
                                         QvError *error) {
  QviPbWriter w;
  qvi_pb_writer_init(&w);
  qvi_flight_put_action_type(&w, t);
  return send_pb(call, &w, error);
}

QvStatus qv_flight_call_write_stream(QvFlightCall *call, struct ArrowArrayStream *stream,
                                     QvError *error) {
  QviFlightEmit emit = qvi_flight_emit_call(call->grpc);
  return qvi_flight_write_stream(stream, &emit, NULL, error);
}

/* ---- request decoding */

/* The one request message of a unary or server-streaming call. */
static QvStatus recv_request(QvFlightCall *call, QviGrpcMessage *m, QvError *error) {
  QvStatus st = qvi_grpc_call_recv(call->grpc, m, error);
  if (st == QV_EOS) return qv_error_set(error, QV_EINVAL, "no request message");
  if (st) return st;
  QviGrpcMessage more;
  QvStatus st2 = qvi_grpc_call_recv(call->grpc, &more, error);
  if (st2 == QV_OK) {
    qvi_grpc_message_reset(&more);
    qvi_grpc_message_reset(m);
    return qv_error_set(error, QV_EINVAL, "more than one request message");
  }
  if (st2 != QV_EOS) {
    qvi_grpc_message_reset(m);
    return st2;
  }
  return QV_OK;
}

static int code_of(QvStatus st) {
  switch (st) {
    case QV_OK: return QVI_GRPC_OK;
    case QV_EINVAL:
    case QV_EARG:
    case QV_ETRUNCATED: return QVI_GRPC_INVALID_ARGUMENT;
    case QV_ENOTSUP: return QVI_GRPC_UNIMPLEMENTED;
    case QV_ELIMIT: return QVI_GRPC_RESOURCE_EXHAUSTED;
    default: return QVI_GRPC_INTERNAL;
  }
}

/* ---- FlightData in */

typedef struct PutIn {
  QvFlightCall *call;
  int64_t n;
} PutIn;

static QvStatus put_recv(void *ctx, const uint8_t **data, size_t *size, QvOwner **owner,
                         QvError *error) {
  PutIn *p = ctx;
  QviGrpcMessage m;
  QvStatus st = qvi_grpc_call_recv(p->call->grpc, &m, error);
  if (st) return st;
  *data = m.data;
  *size = m.size;
  *owner = m.owner;
  return QV_OK;
}

static void put_on_data(void *ctx, const QviFlightData *fd) {
  PutIn *p = ctx;
  QvFlightCall *call = p->call;
  if (fd->header_size) call->n_headers_seen++;
  if (p->n++ == 0 && fd->has_descriptor && !call->have_descriptor && !call->desc_st) {
    call->desc_st = qvi_flight_decode_descriptor(fd->descriptor, fd->descriptor_size,
                                                 &call->descriptor, &call->desc_error);
    call->have_descriptor = call->desc_st == QV_OK;
  }
}

static void put_release(void *ctx) { free(ctx); }

static QvStatus open_in(QvFlightCall *call, struct ArrowArrayStream *in, QvError *error) {
  PutIn *p = calloc(1, sizeof *p);
  if (p == NULL) return qv_error_set(error, QV_ENOMEM, "out of memory");
  p->call = call;
  QviFlightReadHooks hooks = {.recv = put_recv, .on_data = put_on_data, .ctx = p,
                              .release = put_release};
  QvStatus st = qvi_flight_stream_reader_new(in, &hooks, NULL, error);
  if (!st && call->desc_st) {
    in->release(in);
    if (error) *error = call->desc_error;
    return call->desc_st;
  }
  return st;
}

/* ---- dispatch */

static bool authorized(QvFlightServer *s, QvFlightCall *call);

static QvStatus handshake(QvFlightServer *s, QvFlightCall *call, QvError *error) {
  QviGrpcMessage m;
  QvStatus st = qvi_grpc_call_recv(call->grpc, &m, error);
  if (st == QV_EOS) return qv_error_set(error, QV_EINVAL, "Handshake: no request");
  if (st) return st;
  QvFlightHandshake req;
  st = qvi_flight_decode_handshake(m.data, m.size, &req, error);
  qvi_grpc_message_reset(&m);
  if (st) return st;
  /* without a user, the token itself is the credential: as the password
   * (or as the bearer token); with neither, anyone gets the (no) token */
  bool ok = s->token == NULL || authorized(s, call);
  if (s->token || s->user) {
    /* the BasicAuth payload { username = 2; password = 3 }, or the header */
    char *user = NULL, *pass = NULL;
    QviPbReader r;
    QviPbField f;
    if (qvi_pb_reader_init(&r, req.payload.data, req.payload.size, 0, NULL) == QV_OK) {
      while (qvi_pb_next(&r, &f, NULL) == QV_OK) {
        if (f.wire != QVI_PB_LEN) continue;
        if (f.number == 2) {
          free(user);
          user = strndup((const char *)f.data, f.size);
        } else if (f.number == 3) {
          free(pass);
          pass = strndup((const char *)f.data, f.size);
        }
      }
    }
    if (s->user)
      ok = ok || (user && pass && strcmp(user, s->user) == 0 && strcmp(pass, s->password) == 0);
    else
      ok = ok || (pass && strcmp(pass, s->token) == 0);
    free(user);
    free(pass);
  }
  qv_flight_handshake_reset(&req);
  if (!ok) {
    qv_flight_call_set_code(call, QV_FLIGHT_UNAUTHENTICATED);
    return qv_error_set(error, QV_EINVAL, "invalid credentials");
  }
  const char *token = s->token ? s->token : "";
  if (s->bearer) qvi_grpc_call_set_response_header(call->grpc, "authorization", s->bearer, NULL);
  QvFlightHandshake resp = {.payload = {(uint8_t *)token, strlen(token)}};
  QviPbWriter w;
  qvi_pb_writer_init(&w);
  qvi_flight_put_handshake(&w, &resp);
  return send_pb(call, &w, error);
}

static bool authorized(QvFlightServer *s, QvFlightCall *call) {
  if (s->bearer == NULL) return true;
  const char *h = qvi_grpc_call_header(call->grpc, "authorization");
  return h && strcmp(h, s->bearer) == 0;
}

/* A method the server was given no handler for: gRPC's UNIMPLEMENTED. */
static QvStatus no_handler(QvFlightCall *call, const char *method, QvError *error) {
  qv_flight_call_set_code(call, QV_FLIGHT_UNIMPLEMENTED);
  return qv_error_set(error, QV_ENOTSUP, "this server has no handler for %s", method);
}

static QvStatus decode_descriptor_request(QvFlightCall *call, QvFlightDescriptor *d,
                                          QvError *error) {
  QviGrpcMessage m;
  QvStatus st = recv_request(call, &m, error);
  if (st) return st;
  st = qvi_flight_decode_descriptor(m.data, m.size, d, error);
  qvi_grpc_message_reset(&m);
  return st;
}

static QvStatus dispatch(QvFlightServer *s, QvFlightCall *call, const char *method,
                         QvError *error) {
  const QvFlightHandlers *h = &s->h;
  if (strcmp(method, "Handshake") == 0) return handshake(s, call, error);
  if (!authorized(s, call)) {
    qv_flight_call_set_code(call, QV_FLIGHT_UNAUTHENTICATED);
    return qv_error_set(error, QV_EINVAL, "a valid bearer token is required");
  }
  QvStatus st;
  QviGrpcMessage m;
  if (strcmp(method, "ListFlights") == 0) {
    if (!h->list_flights) return no_handler(call, method, error);
    if ((st = recv_request(call, &m, error))) return st;
    QvFlightBytes crit;
    st = qvi_flight_decode_single(m.data, m.size, "Criteria", false, &crit, error);
    qvi_grpc_message_reset(&m);
    if (st) return st;
    st = h->list_flights(h->ctx, call, crit.data, crit.size, error);
    qv_flight_bytes_reset(&crit);
    return st;
  }
  if (strcmp(method, "GetFlightInfo") == 0 || strcmp(method, "PollFlightInfo") == 0 ||
      strcmp(method, "GetSchema") == 0) {
    bool info = method[0] == 'G' && method[3] == 'F', poll = method[0] == 'P';
    if ((info && !h->get_flight_info) || (poll && !h->poll_flight_info) ||
        (!info && !poll && !h->get_schema))
      return no_handler(call, method, error);
    QvFlightDescriptor d;
    if ((st = decode_descriptor_request(call, &d, error))) return st;
    QviPbWriter w;
    qvi_pb_writer_init(&w);
    if (info) {
      QvFlightInfo out = {0};
      st = h->get_flight_info(h->ctx, call, &d, &out, error);
      if (!st) qvi_flight_put_info(&w, &out);
      qv_flight_info_reset(&out);
    } else if (poll) {
      QvFlightPollInfo out = {0};
      st = h->poll_flight_info(h->ctx, call, &d, &out, error);
      if (!st) qvi_flight_put_poll_info(&w, &out);
      qv_flight_poll_info_reset(&out);
    } else {
      struct ArrowSchema schema = {0};
      st = h->get_schema(h->ctx, call, &d, &schema, error);
      if (!st) {
        uint8_t *bytes = NULL;
        size_t n = 0;
        st = qvi_flight_schema_encode(&schema, &bytes, &n, error);
        if (!st) qvi_flight_put_single(&w, bytes, n);
        qv_free(bytes);
      }
      if (schema.release) schema.release(&schema);
    }
    qv_flight_descriptor_reset(&d);
    if (!st) st = send_pb(call, &w, error);
    else qvi_pb_writer_reset(&w);
    return st;
  }
  if (strcmp(method, "DoGet") == 0) {
    if (!h->do_get) return no_handler(call, method, error);
    if ((st = recv_request(call, &m, error))) return st;
    QvFlightBytes t;
    st = qvi_flight_decode_single(m.data, m.size, "Ticket", false, &t, error);
    qvi_grpc_message_reset(&m);
    if (st) return st;
    struct ArrowArrayStream out = {0};
    st = h->do_get(h->ctx, call, t.data, t.size, &out, error);
    qv_flight_bytes_reset(&t);
    if (!st) st = qv_flight_call_write_stream(call, &out, error);
    if (out.release) out.release(&out);
    return st;
  }
  if (strcmp(method, "DoPut") == 0 || strcmp(method, "DoExchange") == 0) {
    bool put = method[2] == 'P';
    if ((put && !h->do_put) || (!put && !h->do_exchange)) return no_handler(call, method, error);
    qvi_grpc_call_set_placement(call->grpc, qvi_flight_data_placement, NULL);
    struct ArrowArrayStream in = {0};
    st = open_in(call, &in, error);
    if (st && !put && !call->desc_st && call->n_headers_seen == 0 &&
        qvi_grpc_call_status(call->grpc) < 0 && !qvi_grpc_call_cancelled(call->grpc)) {
      /* DoExchange without data: the handler gets no stream */
      st = QV_OK;
    }
    if (st) return st;
    if (put && !call->have_descriptor) {
      in.release(&in);
      return qv_error_set(error, QV_EINVAL, "DoPut: the first FlightData has no descriptor");
    }
    st = put ? h->do_put(h->ctx, call, &call->descriptor, &in, error)
             : h->do_exchange(h->ctx, call, call->have_descriptor ? &call->descriptor : NULL,
                              in.release ? &in : NULL, error);
    if (in.release) in.release(&in);
    return st;
  }
  if (strcmp(method, "DoAction") == 0) {
    if (!h->do_action) return no_handler(call, method, error);
    if ((st = recv_request(call, &m, error))) return st;
    QvFlightAction a;
    st = qvi_flight_decode_action(m.data, m.size, &a, error);
    qvi_grpc_message_reset(&m);
    if (st) return st;
    st = h->do_action(h->ctx, call, &a, error);
    qv_flight_action_reset(&a);
    return st;
  }
  if (strcmp(method, "ListActions") == 0) {
    if (!h->list_actions) return no_handler(call, method, error);
    if ((st = recv_request(call, &m, error))) return st;
    st = qvi_flight_decode_empty(m.data, m.size, error);
    qvi_grpc_message_reset(&m);
    if (st) return st;
    return h->list_actions(h->ctx, call, error);
  }
  qv_flight_call_set_code(call, QV_FLIGHT_UNIMPLEMENTED);
  return qv_error_set(error, QV_ENOTSUP, "unknown method %s", method);
}

static void serve_call(void *ctx, QviGrpcCall *grpc) {
  QvFlightServer *s = ctx;
  QvFlightCall call = {.server = s, .grpc = grpc, .code = -1};
  const char *path = qvi_grpc_call_path(grpc);
  static const char prefix[] = "/arrow.flight.protocol.FlightService/";
  QvError err = {0};
  QvStatus st;
  if (path == NULL || strncmp(path, prefix, sizeof prefix - 1) != 0) {
    call.code = QVI_GRPC_UNIMPLEMENTED;
    st = qv_error_set(&err, QV_ENOTSUP, "unknown service or method %s", path ? path : "?");
  } else {
    st = dispatch(s, &call, path + sizeof prefix - 1, &err);
  }
  int code = st == QV_OK ? QVI_GRPC_OK : call.code >= 0 ? call.code : code_of(st);
  if (st && qvi_grpc_call_cancelled(grpc)) code = QVI_GRPC_CANCELLED;
  qv_flight_descriptor_reset(&call.descriptor);
  qvi_grpc_call_finish(grpc, code, st ? err.message : NULL);
}

static char *dup_or_null(const char *s) { return s ? strdup(s) : NULL; }

QvStatus qv_flight_server_new(QvFlightServer **out, const char *host, int port,
                              const QvFlightHandlers *handlers,
                              const QvFlightServerOptions *options, QvError *error) {
  if (out == NULL) return qv_error_set(error, QV_EARG, "NULL output");
  *out = NULL;
  QvFlightServerOptions o;
  QvStatus st = QV_OPTIONS_LOAD(&o, options, QvFlightServerOptions, error);
  if (!st && (o.tls_cert_file == NULL) != (o.tls_key_file == NULL))
    st = qv_error_set(error, QV_EARG, "TLS needs both a certificate and a key");
  if (!st && (o.user == NULL) != (o.password == NULL))
    st = qv_error_set(error, QV_EARG, "basic credentials need both a user and a password");
  if (!st && o.token && (strpbrk(o.token, "\r\n") || !*o.token))
    st = qv_error_set(error, QV_EARG, "the token must be one non-empty line");
  QvFlightServer *s = st ? NULL : calloc(1, sizeof *s);
  if (s == NULL) {
    if (handlers && handlers->release) handlers->release(handlers->ctx);
    return st ? st : qv_error_set(error, QV_ENOMEM, "out of memory");
  }
  if (handlers) s->h = *handlers;
  s->token = dup_or_null(o.token);
  s->user = dup_or_null(o.user);
  s->password = dup_or_null(o.password);
  if (o.token) {
    size_t n = strlen(o.token) + 8;
    s->bearer = malloc(n);
    if (s->bearer) snprintf(s->bearer, n, "Bearer %s", o.token);
  }
  if ((o.token && (!s->token || !s->bearer)) || (o.user && (!s->user || !s->password)))
    st = qv_error_set(error, QV_ENOMEM, "out of memory");
  QviGrpcTls tls = {.enabled = o.tls_cert_file != NULL, .cert_file = o.tls_cert_file,
                    .key_file = o.tls_key_file};
  QviGrpcLimits lim = {.max_receive_size = o.max_receive_size ? o.max_receive_size
                                                              : QV_FLIGHT_DEFAULT_MAX_RECEIVE};
  if (!st && lim.max_receive_size > QVI_GRPC_MAX_RECEIVE_LIMIT)
    st = qv_error_set(error, QV_EARG, "max_receive_size above %zu", QVI_GRPC_MAX_RECEIVE_LIMIT);
  if (!st)
    st = qvi_grpc_server_new(&s->grpc, host ? host : "127.0.0.1", port, &tls, &lim, serve_call, s,
                             error);
  if (st) {
    qv_flight_server_free(s);
    return st;
  }
  *out = s;
  return QV_OK;
}

int qv_flight_server_port(const QvFlightServer *s) { return qvi_grpc_server_port(s->grpc); }

QvStatus qv_flight_server_run(QvFlightServer *s, QvError *error) {
  return qvi_grpc_server_run(s->grpc, error);
}

void qv_flight_server_stop(QvFlightServer *s) { qvi_grpc_server_stop(s->grpc); }

void qv_flight_server_free(QvFlightServer *s) {
  if (s == NULL) return;
  qvi_grpc_server_free(s->grpc);
  if (s->h.release) s->h.release(s->h.ctx);
  free(s->token);
  free(s->user);
  free(s->password);
  free(s->bearer);
  free(s);
}
