/* gRPC calls over nghttp2 sessions (grpc.h): connections with their own
 * thread, calls with message queues, client channels and the server. */
#include "grpc/grpc.h"

#include <errno.h>
#include <nghttp2/nghttp2.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <netdb.h>
#include <time.h>
#include <unistd.h>
#include <fcntl.h>

#include "grpc/transport.h"
#include "util/cpu.h"
#include "util/recycle.h"

#define HEAD_STAGE 4096
#define MAX_HEADERS 64
#define CONN_WINDOW ((int32_t)128 << 20)
#define MAX_FRAME ((uint32_t)1 << 20)
#define MAX_STREAMS 100
#define MAX_SEND_IOV 256
#define READ_CHUNK ((size_t)256 << 10)

/* ---- small helpers */

int64_t qvi_grpc_now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static const char *const STATUS_NAMES[] = {
    "OK",        "CANCELLED",         "UNKNOWN",          "INVALID_ARGUMENT",
    "DEADLINE_EXCEEDED", "NOT_FOUND", "ALREADY_EXISTS",   "PERMISSION_DENIED",
    "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION", "ABORTED", "OUT_OF_RANGE",
    "UNIMPLEMENTED", "INTERNAL",      "UNAVAILABLE",      "DATA_LOSS",
    "UNAUTHENTICATED"};

const char *qvi_grpc_status_name(int code) {
  if (code >= 0 && code <= 16) return STATUS_NAMES[code];
  return "UNKNOWN_STATUS";
}

QvStatus qvi_grpc_status_to_qv(int code) {
  switch (code) {
    case QVI_GRPC_OK: return QV_OK;
    case QVI_GRPC_INVALID_ARGUMENT:
    case QVI_GRPC_NOT_FOUND:
    case QVI_GRPC_ALREADY_EXISTS:
    case QVI_GRPC_FAILED_PRECONDITION:
    case QVI_GRPC_OUT_OF_RANGE:
    case QVI_GRPC_DATA_LOSS: return QV_EINVAL;
    case QVI_GRPC_RESOURCE_EXHAUSTED: return QV_ELIMIT;
    case QVI_GRPC_UNIMPLEMENTED: return QV_ENOTSUP;
    default: return QV_EIO;
  }
}

static int hexval(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

void qvi_grpc_percent_decode(const char *in, size_t n, char *out, size_t out_size) {
  size_t o = 0;
  if (out_size == 0) return;
  for (size_t i = 0; i < n && o + 1 < out_size; i++) {
    int h, l;
    if (in[i] == '%' && i + 2 < n && (h = hexval(in[i + 1])) >= 0 &&
        (l = hexval(in[i + 2])) >= 0) {
      out[o++] = (char)(h * 16 + l);
      i += 2;
    } else {
      out[o++] = in[i];
    }
  }
  out[o] = '\0';
}

void qvi_grpc_percent_encode(const char *in, char *out, size_t out_size) {
  static const char hex[] = "0123456789ABCDEF";
  size_t o = 0;
  if (out_size == 0) return;
  for (; *in; in++) {
    unsigned char c = (unsigned char)*in;
    if (c >= 0x20 && c <= 0x7E && c != '%') {
      if (o + 1 >= out_size) break;
      out[o++] = (char)c;
    } else {
      if (o + 3 >= out_size) break;
      out[o++] = '%';
      out[o++] = hex[c >> 4];
      out[o++] = hex[c & 15];
    }
  }
  out[o] = '\0';
}

bool qvi_grpc_timeout_parse(const char *v, int64_t *ms) {
  size_t n = strlen(v);
  if (n < 2 || n > 9) return false;
  int64_t x = 0;
  for (size_t i = 0; i + 1 < n; i++) {
    if (v[i] < '0' || v[i] > '9') return false;
    x = x * 10 + (v[i] - '0');
  }
  switch (v[n - 1]) {
    case 'H': *ms = x * 3600000; break;
    case 'M': *ms = x * 60000; break;
    case 'S': *ms = x * 1000; break;
    case 'm': *ms = x; break;
    case 'u': *ms = (x + 999) / 1000; break;
    case 'n': *ms = (x + 999999) / 1000000; break;
    default: return false;
  }
  return true;
}

static void format_timeout(int64_t ms, char *buf, size_t size) {
  if (ms < 1) ms = 1;
  if (ms <= 99999999) snprintf(buf, size, "%lldm", (long long)ms);
  else if (ms / 1000 <= 99999999) snprintf(buf, size, "%lldS", (long long)(ms / 1000));
  else snprintf(buf, size, "%lldH", (long long)(ms / 3600000 > 99999999 ? 99999999 : ms / 3600000));
}

void qvi_grpc_message_reset(QviGrpcMessage *m) {
  if (m == NULL) return;
  qv_owner_free(m->owner);
  memset(m, 0, sizeof *m);
}

/* ---- connections and calls */

typedef struct Msg {
  struct Msg *next;
  uint8_t *buf;
  size_t size, shift;
  size_t capacity;     /* of buf, for the recycler */
  QvRecycler *recycle; /* where buf goes back (a reference), or NULL */
} Msg;

typedef struct Conn Conn;

/* The frame boundaries of the bytes handed to nghttp2, followed beside it
 * so that a DATA payload can be read from the socket straight into the
 * message it belongs to (the bytes still go through nghttp2, which checks
 * them and keeps flow control; deliver() then finds them in place). */
typedef struct FrameTrack {
  size_t preface_left; /* server: the client's connection preface still to come */
  uint8_t hdr[9];
  size_t hdr_n;
  uint32_t left; /* payload bytes of the current frame still to come */
  uint8_t type, flags;
  int32_t stream_id;
} FrameTrack;

struct QviGrpcCall {
  Conn *conn;
  struct QviGrpcCall *prev, *next; /* the connection's calls */
  int32_t stream_id;
  bool server;
  bool user_freed; /* the caller (client) or handler (server) let go */
  bool handler_started;
  pthread_cond_t cond;
  int64_t deadline;
  /* request (client: to send; server: received) */
  char *path;
  QviGrpcHeader headers[MAX_HEADERS];
  size_t n_headers;
  nghttp2_nv *nva;
  size_t n_nva;
  size_t header_bytes;
  bool header_overflow; /* server: the request's header block is over the limit */
  /* response state */
  int http_status;
  bool content_type_ok;
  bool got_headers;
  int grpc_status; /* -1 until known */
  char grpc_message[512];
  /* receiving */
  uint8_t prefix[5];
  size_t prefix_n;
  bool assembling;
  size_t msg_total, msg_got, msg_shift;
  uint8_t *msg_buf;
  size_t msg_cap;
  /* buffers of messages the caller let go of, for the next ones (their
   * pages are faulted in already): at most one, of the largest message */
  QvRecycler *recycle;
  size_t recycle_largest;
  uint8_t stage[HEAD_STAGE];
  size_t stage_n;
  Msg *q_head, *q_tail;
  size_t q_count;
  size_t owed; /* received bytes not yet given back to the peer's window */
  bool need_consume;
  bool remote_closed; /* END_STREAM received */
  bool stream_closed; /* nghttp2 closed the stream */
  uint32_t rst_code;
  bool failed; /* a local failure (limit, protocol): error holds it */
  QvError error;
  /* sending */
  uint8_t send_prefix[5];
  uint64_t send_owed;
  char *resp_name, *resp_value; /* server: one extra response header */ /* bytes the message begun last still needs (send_begin) */
  struct iovec send_iov[MAX_SEND_IOV + 1];
  int send_n, send_i;
  bool send_active;
  bool deferred;
  bool want_resume;
  bool want_submit;
  bool submitted;
  bool close_send;
  bool finishing;
  int finish_code;
  char finish_msg[1024];
  bool response_sent;
  bool trailers_sent; /* server: trailers (END_STREAM) written */
  bool want_cancel;
  bool cancelled;
  QviGrpcPlacement place;
  void *place_ctx;
  bool direct_pin; /* the connection thread is reading into msg_buf unlocked */
};

struct Conn {
  pthread_mutex_t mu;
  nghttp2_session *session;
  QviTransport tr;
  bool memory; /* fuzz: no socket */
  int wake[2];
  bool server;
  struct QviGrpcServer *srv;
  pthread_t thread;
  bool thread_started;
  bool dead;
  QvError dead_error;
  bool closing;
  bool goaway_sent;
  QviGrpcCall *calls;
  int refs;
  size_t max_recv, max_hdr;
  char authority[300];
  bool tls;
  int64_t write_stall_start;
  struct Conn *srv_next; /* the server's connections */
  FrameTrack in;         /* where the received bytes stand in the frame sequence */
};

struct QviGrpcChannel {
  Conn *conn;
};

struct QviGrpcServer {
  int listen_fd;
  int port;
  int stop_pipe[2];
  void *ssl_ctx;
  QviGrpcLimits limits;
  QviGrpcHandler handler;
  void *ctx;
  pthread_mutex_t mu;
  pthread_cond_t cond;
  Conn *conns;
  int n_handlers;
  bool stopping;
};

static void wake(Conn *c) {
  if (c->memory) return;
  char b = 1;
  ssize_t r = write(c->wake[1], &b, 1);
  (void)r; /* a full pipe already wakes the thread */
}

static void conn_release_locked(Conn *c, bool *freed);

/* A message's memory once nobody holds it: back to its call's recycler
 * (kept while the call lives and there is room), else freed. */
static void msg_free(Msg *m) {
  if (m->recycle) {
    qvi_recycler_put(m->recycle, m->buf, m->capacity);
    qvi_recycler_release(m->recycle);
  } else {
    qv_free(m->buf);
  }
  free(m);
}

static void msg_free_owner(void *p) { msg_free(p); }

static void call_free_memory(QviGrpcCall *call) {
  for (Msg *m = call->q_head; m;) {
    Msg *n = m->next;
    msg_free(m);
    m = n;
  }
  qv_free(call->msg_buf);
  qvi_recycler_close(call->recycle);
  qvi_recycler_release(call->recycle);
  free(call->path);
  free(call->resp_name);
  free(call->resp_value);
  for (size_t i = 0; i < call->n_headers; i++) {
    free((char *)call->headers[i].name);
    free((char *)call->headers[i].value);
  }
  if (call->nva) {
    for (size_t i = 0; i < call->n_nva; i++) {
      free(call->nva[i].name);
      free(call->nva[i].value);
    }
    free(call->nva);
  }
  pthread_cond_destroy(&call->cond);
  free(call);
}

/* Unlinks and frees a call once nobody needs it: its user let go and its
 * stream is gone (closed, never opened, or the connection died). */
static void call_maybe_free(QviGrpcCall *call, bool *conn_freed) {
  Conn *c = call->conn;
  *conn_freed = false;
  if (!call->user_freed || call->direct_pin) return;
  if (!(call->stream_closed || !call->submitted || c->dead)) return;
  if (call->stream_id > 0 && c->session && !call->stream_closed)
    nghttp2_session_set_stream_user_data(c->session, call->stream_id, NULL);
  if (call->prev) call->prev->next = call->next;
  else c->calls = call->next;
  if (call->next) call->next->prev = call->prev;
  call_free_memory(call);
  conn_release_locked(c, conn_freed);
}

static QviGrpcCall *call_new(Conn *c, bool server) {
  QviGrpcCall *call = calloc(1, sizeof *call);
  if (call == NULL) return NULL;
  call->conn = c;
  call->server = server;
  call->grpc_status = -1;
  pthread_cond_init(&call->cond, NULL);
  call->next = c->calls;
  if (c->calls) c->calls->prev = call;
  c->calls = call;
  c->refs++;
  return call;
}

static void call_fail(QviGrpcCall *call, QvStatus st, const char *fmt, const char *detail) {
  if (call->failed) return;
  call->failed = true;
  qv_error_set(&call->error, st, fmt, detail);
}

/* ---- nghttp2 callbacks (connection thread, mutex held) */

static ssize_t h2_send(nghttp2_session *s, const uint8_t *data, size_t length, int flags,
                       void *user);
static int h2_send_data(nghttp2_session *s, nghttp2_frame *frame, const uint8_t *framehd,
                        size_t length, nghttp2_data_source *source, void *user);

static size_t send_remaining(const QviGrpcCall *call) {
  size_t n = 0;
  for (int i = call->send_i; i < call->send_n; i++) n += call->send_iov[i].iov_len;
  return n;
}

static int submit_trailers(Conn *c, QviGrpcCall *call) {
  char code[16], msg[3 * 1024];
  snprintf(code, sizeof code, "%d", call->finish_code);
  qvi_grpc_percent_encode(call->finish_msg, msg, sizeof msg);
  nghttp2_nv nv[2] = {
      {(uint8_t *)"grpc-status", (uint8_t *)code, 11, strlen(code), NGHTTP2_NV_FLAG_NONE},
      {(uint8_t *)"grpc-message", (uint8_t *)msg, 12, strlen(msg), NGHTTP2_NV_FLAG_NONE}};
  return nghttp2_submit_trailer(c->session, call->stream_id, nv, msg[0] ? 2 : 1);
}

static ssize_t data_read(nghttp2_session *s, int32_t stream_id, uint8_t *buf, size_t length,
                         uint32_t *flags, nghttp2_data_source *source, void *user) {
  (void)s;
  (void)stream_id;
  (void)buf;
  Conn *c = user;
  QviGrpcCall *call = source->ptr;
  if (call == NULL) return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
  if (call->send_active) {
    size_t left = send_remaining(call);
    if (left > 0) {
      *flags |= NGHTTP2_DATA_FLAG_NO_COPY;
      return (ssize_t)(left < length ? left : length);
    }
  }
  if (!call->server && call->close_send) {
    *flags |= NGHTTP2_DATA_FLAG_EOF;
    return 0;
  }
  if (call->server && call->finishing) {
    *flags |= NGHTTP2_DATA_FLAG_EOF | NGHTTP2_DATA_FLAG_NO_END_STREAM;
    if (submit_trailers(c, call) != 0) return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
    return 0;
  }
  call->deferred = true;
  return NGHTTP2_ERR_DEFERRED;
}

static ssize_t read_length(nghttp2_session *s, uint8_t frame_type, int32_t stream_id,
                           int32_t session_window, int32_t stream_window, uint32_t max_frame,
                           void *user) {
  (void)s;
  (void)frame_type;
  (void)stream_id;
  (void)user;
  int64_t n = max_frame;
  if (session_window < n) n = session_window;
  if (stream_window < n) n = stream_window;
  return n < 1 ? 1 : (ssize_t)n;
}

/* Appends received bytes to the message being assembled, and finished
 * messages to the queue. */
static int deliver(Conn *c, QviGrpcCall *call, const uint8_t *data, size_t len) {
  while (len > 0) {
    if (!call->assembling) {
      size_t take = 5 - call->prefix_n;
      if (take > len) take = len;
      memcpy(call->prefix + call->prefix_n, data, take);
      call->prefix_n += take;
      data += take;
      len -= take;
      if (call->prefix_n < 5) return 0;
      uint32_t size = ((uint32_t)call->prefix[1] << 24) | ((uint32_t)call->prefix[2] << 16) |
                      ((uint32_t)call->prefix[3] << 8) | call->prefix[4];
      if (call->prefix[0] != 0) {
        call_fail(call, QV_ENOTSUP, "%s",
                  call->prefix[0] == 1 ? "received a compressed gRPC message (quiver accepts "
                                         "identity encoding only)"
                                       : "bad gRPC message flag");
        return -1;
      }
      if (size > c->max_recv) {
        char m[160];
        snprintf(m, sizeof m, "gRPC message of %u bytes exceeds the receive limit of %zu bytes",
                 size, c->max_recv);
        call_fail(call, QV_ELIMIT, "%s", m);
        return -1;
      }
      call->assembling = true;
      call->msg_total = size;
      call->msg_got = 0;
      call->stage_n = 0;
      call->msg_buf = NULL;
    }
    if (call->msg_buf == NULL) {
      size_t want = call->msg_total < HEAD_STAGE ? call->msg_total : HEAD_STAGE;
      size_t take = want - call->stage_n;
      if (take > len) take = len;
      memcpy(call->stage + call->stage_n, data, take);
      call->stage_n += take;
      data += take;
      len -= take;
      if (call->stage_n < want) return 0;
      size_t shift = call->place ? call->place(call->place_ctx, call->stage, call->stage_n,
                                               call->msg_total) : 0;
      if (shift > 63) shift = 0;
      size_t need = call->msg_total + shift + 1;
      call->msg_buf = NULL;
      call->msg_cap = need;
      if (need >= QV_RECYCLE_MIN) {
        if (call->recycle == NULL) call->recycle = qvi_recycler_new(); /* NULL: no reuse */
        if (call->recycle && need > call->recycle_largest) {
          /* room for one: the message a caller holds while the next one
           * arrives into the buffer of the one before */
          call->recycle_largest = need;
          qvi_recycler_allow(call->recycle, need);
        }
        call->msg_buf = qvi_recycler_get(call->recycle, need, &call->msg_cap);
      } else {
        call->msg_buf = qv_aligned_alloc(need);
      }
      if (call->msg_buf == NULL) {
        call_fail(call, QV_ENOMEM, "%s", "out of memory for a gRPC message");
        return -1;
      }
      call->msg_shift = shift;
      memcpy(call->msg_buf + shift, call->stage, call->stage_n);
      call->msg_got = call->stage_n;
    }
    size_t take = call->msg_total - call->msg_got;
    if (take > len) take = len;
    uint8_t *to = call->msg_buf + call->msg_shift + call->msg_got;
    if (to != data) memcpy(to, data, take); /* equal: read there directly */
    call->msg_got += take;
    data += take;
    len -= take;
    if (call->msg_got == call->msg_total) {
      Msg *m = calloc(1, sizeof *m);
      if (m == NULL) {
        call_fail(call, QV_ENOMEM, "%s", "out of memory");
        return -1;
      }
      m->buf = call->msg_buf;
      m->size = call->msg_total;
      m->shift = call->msg_shift;
      m->capacity = call->msg_cap;
      if (call->recycle && m->capacity >= QV_RECYCLE_MIN) {
        qvi_recycler_retain(call->recycle);
        m->recycle = call->recycle;
      }
      call->msg_buf = NULL;
      if (call->q_tail) call->q_tail->next = m;
      else call->q_head = m;
      call->q_tail = m;
      call->q_count++;
      call->assembling = false;
      call->prefix_n = 0;
      pthread_cond_broadcast(&call->cond);
    }
  }
  return 0;
}

static int on_data_chunk(nghttp2_session *s, uint8_t flags, int32_t stream_id,
                         const uint8_t *data, size_t len, void *user) {
  (void)flags;
  Conn *c = user;
  QviGrpcCall *call = nghttp2_session_get_stream_user_data(s, stream_id);
  if (call == NULL || call->failed || call->cancelled) {
    nghttp2_session_consume(s, stream_id, len);
    return 0;
  }
  /* the window reopens as bytes are taken while nothing waits for the
   * caller; otherwise once the caller takes the waiting message */
  if (call->q_count == 0) nghttp2_session_consume(s, stream_id, len);
  else call->owed += len;
  if (deliver(c, call, data, len) != 0) {
    /* a server's handler answers with a status; a client stops the stream */
    if (!c->server) nghttp2_submit_rst_stream(s, NGHTTP2_FLAG_NONE, stream_id, NGHTTP2_CANCEL);
    pthread_cond_broadcast(&call->cond);
  }
  return 0;
}

static int on_begin_headers(nghttp2_session *s, const nghttp2_frame *frame, void *user) {
  Conn *c = user;
  if (!c->server || frame->hd.type != NGHTTP2_HEADERS ||
      frame->headers.cat != NGHTTP2_HCAT_REQUEST)
    return 0;
  if (c->closing) return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
  QviGrpcCall *call = call_new(c, true);
  if (call == NULL) return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
  call->stream_id = frame->hd.stream_id;
  call->submitted = true;
  nghttp2_session_set_stream_user_data(s, frame->hd.stream_id, call);
  return 0;
}

/* Keeps a header for the caller while there is room (MAX_HEADERS); one
 * that cannot be copied is dropped, as one past the room is. */
static void keep_header(QviGrpcCall *call, const char *n, const char *v) {
  if (call->n_headers >= MAX_HEADERS) return;
  QviGrpcHeader *h = &call->headers[call->n_headers];
  h->name = strdup(n);
  h->value = strdup(v);
  if (h->name && h->value) call->n_headers++;
  else {
    free((char *)h->name);
    free((char *)h->value);
  }
}

static int on_header(nghttp2_session *s, const nghttp2_frame *frame, const uint8_t *name,
                     size_t namelen, const uint8_t *value, size_t valuelen, uint8_t flags,
                     void *user) {
  (void)flags;
  Conn *c = user;
  QviGrpcCall *call = nghttp2_session_get_stream_user_data(s, frame->hd.stream_id);
  if (call == NULL) return 0;
  if (call->header_overflow) return 0;
  call->header_bytes += namelen + valuelen + 32;
  if (call->header_bytes > c->max_hdr && c->server) {
    /* the request is answered RESOURCE_EXHAUSTED once its headers are in
     * (on_frame_recv); nothing more of them is kept */
    call->header_overflow = true;
    return 0;
  }
  if (call->header_bytes > c->max_hdr) {
    char m[128];
    snprintf(m, sizeof m, "header block exceeds the limit of %zu bytes", c->max_hdr);
    call_fail(call, QV_ELIMIT, "%s", m);
    return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
  }
  const char *n = (const char *)name, *v = (const char *)value;
  if (c->server) {
    if (strcmp(n, ":path") == 0) {
      free(call->path);
      call->path = strdup(v);
    } else if (strcmp(n, "grpc-timeout") == 0) {
      int64_t ms;
      if (qvi_grpc_timeout_parse(v, &ms)) call->deadline = qvi_grpc_now_ms() + ms;
    } else if (strcmp(n, "content-type") == 0) {
      call->content_type_ok = strncmp(v, "application/grpc", 16) == 0;
    }
    if (n[0] != ':') keep_header(call, n, v);
    return 0;
  }
  /* response headers and trailers, for the caller (an auth token) */
  if (n[0] != ':' && strncmp(n, "grpc-", 5) != 0) keep_header(call, n, v);
  if (strcmp(n, ":status") == 0) call->http_status = atoi(v);
  else if (strcmp(n, "content-type") == 0)
    call->content_type_ok = strncmp(v, "application/grpc", 16) == 0;
  else if (strcmp(n, "grpc-status") == 0) {
    char *end;
    long code = strtol(v, &end, 10);
    call->grpc_status = (*end || code < 0 || code > 16) ? QVI_GRPC_UNKNOWN : (int)code;
  } else if (strcmp(n, "grpc-message") == 0) {
    qvi_grpc_percent_decode(v, valuelen, call->grpc_message, sizeof call->grpc_message);
  }
  return 0;
}

static void *handler_thread(void *arg);

static int on_frame_recv(nghttp2_session *s, const nghttp2_frame *frame, void *user) {
  Conn *c = user;
  if (frame->hd.stream_id == 0) return 0;
  QviGrpcCall *call = nghttp2_session_get_stream_user_data(s, frame->hd.stream_id);
  if (call == NULL) return 0;
  if (frame->hd.type == NGHTTP2_HEADERS) {
    if (c->server && frame->headers.cat == NGHTTP2_HCAT_REQUEST && call->header_overflow) {
      /* headers over the limit: no handler; a trailers-only answer says
       * why (as gRPC servers do), the connection goes on */
      char code[8], msg[160], enc[480];
      snprintf(code, sizeof code, "%d", QVI_GRPC_RESOURCE_EXHAUSTED);
      snprintf(msg, sizeof msg, "the request's header block exceeds the limit of %zu bytes",
               c->max_hdr);
      qvi_grpc_percent_encode(msg, enc, sizeof enc);
      nghttp2_nv nv[4] = {
          {(uint8_t *)":status", (uint8_t *)"200", 7, 3, NGHTTP2_NV_FLAG_NONE},
          {(uint8_t *)"content-type", (uint8_t *)"application/grpc", 12, 16, NGHTTP2_NV_FLAG_NONE},
          {(uint8_t *)"grpc-status", (uint8_t *)code, 11, strlen(code), NGHTTP2_NV_FLAG_NONE},
          {(uint8_t *)"grpc-message", (uint8_t *)enc, 12, strlen(enc), NGHTTP2_NV_FLAG_NONE}};
      call->user_freed = true;
      call->response_sent = true;
      if (nghttp2_submit_response(s, frame->hd.stream_id, nv, 4, NULL) != 0)
        nghttp2_submit_rst_stream(s, NGHTTP2_FLAG_NONE, frame->hd.stream_id,
                                  NGHTTP2_REFUSED_STREAM);
    } else if (c->server && frame->headers.cat == NGHTTP2_HCAT_REQUEST) {
      /* a request: its handler starts on a thread of its own */
      pthread_t t;
      pthread_attr_t attr;
      pthread_attr_init(&attr);
      pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
      pthread_mutex_lock(&c->srv->mu);
      c->srv->n_handlers++;
      pthread_mutex_unlock(&c->srv->mu);
      if (pthread_create(&t, &attr, handler_thread, call) != 0) {
        pthread_mutex_lock(&c->srv->mu);
        c->srv->n_handlers--;
        pthread_mutex_unlock(&c->srv->mu);
        nghttp2_submit_rst_stream(s, NGHTTP2_FLAG_NONE, frame->hd.stream_id,
                                  NGHTTP2_REFUSED_STREAM);
        call->user_freed = true;
      } else {
        call->handler_started = true;
      }
      pthread_attr_destroy(&attr);
    } else if (!c->server) {
      call->got_headers = true;
      if (frame->headers.cat == NGHTTP2_HCAT_RESPONSE && call->grpc_status < 0) {
        if (call->http_status != 200) {
          char m[64];
          snprintf(m, sizeof m, "HTTP status %d", call->http_status);
          call_fail(call, QV_EIO, "the server answered with %s, not a gRPC response", m);
        } else if (!call->content_type_ok) {
          call_fail(call, QV_EIO, "%s", "the server's response is not application/grpc");
        }
        if (call->failed)
          nghttp2_submit_rst_stream(s, NGHTTP2_FLAG_NONE, frame->hd.stream_id,
                                    NGHTTP2_PROTOCOL_ERROR);
      }
    }
  }
  if ((frame->hd.type == NGHTTP2_HEADERS || frame->hd.type == NGHTTP2_DATA) &&
      (frame->hd.flags & NGHTTP2_FLAG_END_STREAM)) {
    call->remote_closed = true;
    if (call->assembling && !call->failed)
      call_fail(call, QV_ETRUNCATED, "%s", "the stream ended inside a gRPC message");
    pthread_cond_broadcast(&call->cond);
  }
  return 0;
}

static int on_frame_send(nghttp2_session *s, const nghttp2_frame *frame, void *user) {
  (void)user;
  if (frame->hd.stream_id == 0) return 0;
  QviGrpcCall *call = nghttp2_session_get_stream_user_data(s, frame->hd.stream_id);
  if (call == NULL) return 0;
  if (call->server && frame->hd.type == NGHTTP2_HEADERS &&
      (frame->hd.flags & NGHTTP2_FLAG_END_STREAM)) {
    call->trailers_sent = true;
    /* the answer is complete: a request still open is closed */
    if (!call->remote_closed)
      nghttp2_submit_rst_stream(s, NGHTTP2_FLAG_NONE, frame->hd.stream_id, NGHTTP2_NO_ERROR);
    pthread_cond_broadcast(&call->cond);
  }
  return 0;
}

static int on_stream_close(nghttp2_session *s, int32_t stream_id, uint32_t code, void *user) {
  (void)user;
  QviGrpcCall *call = nghttp2_session_get_stream_user_data(s, stream_id);
  if (call == NULL) return 0;
  call->stream_closed = true;
  call->rst_code = code;
  call->send_active = false;
  nghttp2_session_set_stream_user_data(s, stream_id, NULL);
  pthread_cond_broadcast(&call->cond);
  bool freed;
  call_maybe_free(call, &freed);
  return 0;
}

/* ---- the connection thread */

typedef struct WaitCtx {
  Conn *c;
  int64_t start;
} WaitCtx;

/* The socket is full: wait for it with the mutex released (callers may
 * queue work meanwhile; nghttp2 is touched by this thread alone). */
static bool write_wait(void *ctx, int fd, short events) {
  WaitCtx *w = ctx;
  Conn *c = w->c;
  pthread_mutex_unlock(&c->mu);
  struct pollfd p = {.fd = fd, .events = events};
  int r = poll(&p, 1, 100);
  pthread_mutex_lock(&c->mu);
  if (r > 0) {
    w->start = qvi_grpc_now_ms();
    return true;
  }
  if (c->closing && c->server) return false;
  return qvi_grpc_now_ms() - w->start < QVI_TRANSPORT_STALL_MS;
}

static QvStatus conn_write(Conn *c, struct iovec *iov, int n, QvError *error) {
  if (c->memory) return QV_OK;
  WaitCtx w = {c, qvi_grpc_now_ms()};
  return qvi_transport_writev(&c->tr, iov, n, write_wait, &w, error);
}

static ssize_t h2_send(nghttp2_session *s, const uint8_t *data, size_t length, int flags,
                       void *user) {
  (void)s;
  (void)flags;
  Conn *c = user;
  struct iovec iov = {(void *)data, length};
  if (conn_write(c, &iov, 1, &c->dead_error)) return NGHTTP2_ERR_CALLBACK_FAILURE;
  return (ssize_t)length;
}

/* A DATA frame straight from the caller's memory: the frame header, then
 * the caller's pieces (no copy into nghttp2). */
static int h2_send_data(nghttp2_session *s, nghttp2_frame *frame, const uint8_t *framehd,
                        size_t length, nghttp2_data_source *source, void *user) {
  (void)s;
  Conn *c = user;
  QviGrpcCall *call = source->ptr;
  struct iovec iov[MAX_SEND_IOV + 3];
  int n = 0;
  iov[n++] = (struct iovec){(void *)framehd, 9};
  uint8_t pad_len = 0;
  if (frame->data.padlen > 0) {
    pad_len = (uint8_t)(frame->data.padlen - 1);
    iov[n++] = (struct iovec){&pad_len, 1};
  }
  size_t left = length;
  int i = call->send_i;
  while (left > 0 && i < call->send_n) {
    struct iovec *v = &call->send_iov[i];
    size_t take = v->iov_len < left ? v->iov_len : left;
    iov[n++] = (struct iovec){v->iov_base, take};
    left -= take;
    if (take == v->iov_len) i++;
    else break;
  }
  static const uint8_t zeros[256];
  if (frame->data.padlen > 1) iov[n++] = (struct iovec){(void *)zeros, frame->data.padlen - 1};
  if (conn_write(c, iov, n, &c->dead_error)) return NGHTTP2_ERR_CALLBACK_FAILURE;
  /* advance the caller's queue by what was written */
  left = length;
  while (left > 0 && call->send_i < call->send_n) {
    struct iovec *v = &call->send_iov[call->send_i];
    size_t take = v->iov_len < left ? v->iov_len : left;
    v->iov_base = (uint8_t *)v->iov_base + take;
    v->iov_len -= take;
    left -= take;
    if (v->iov_len == 0) call->send_i++;
  }
  if (send_remaining(call) == 0) {
    call->send_active = false;
    pthread_cond_broadcast(&call->cond);
  }
  return 0;
}

static nghttp2_data_provider provider(QviGrpcCall *call) {
  nghttp2_data_provider p;
  p.source.ptr = call;
  p.read_callback = data_read;
  return p;
}

/* Work the callers queued: requests, responses, resumed data, window
 * updates, resets. */
static void apply_pending(Conn *c) {
  for (QviGrpcCall *call = c->calls, *next; call; call = next) {
    next = call->next;
    nghttp2_session *s = c->session;
    if (call->want_submit && !call->submitted) {
      call->want_submit = false;
      nghttp2_data_provider p = provider(call);
      int32_t id = nghttp2_submit_request(s, NULL, call->nva, call->n_nva, &p, call);
      if (id < 0) {
        call_fail(call, QV_EIO, "cannot start the call: %s", nghttp2_strerror(id));
        call->stream_closed = true;
        pthread_cond_broadcast(&call->cond);
      } else {
        call->stream_id = id;
        call->submitted = true;
      }
    }
    if (call->stream_closed || !call->submitted) goto maybe_free;
    if (call->want_cancel && !call->cancelled) {
      call->cancelled = true;
      nghttp2_submit_rst_stream(s, NGHTTP2_FLAG_NONE, call->stream_id, NGHTTP2_CANCEL);
      pthread_cond_broadcast(&call->cond);
    }
    if (call->server && !call->response_sent && !call->cancelled &&
        (call->send_active || call->finishing)) {
      call->response_sent = true;
      if (!call->send_active) {
        /* trailers-only: the status goes in the response headers */
        char code[16], msg[3 * 1024];
        snprintf(code, sizeof code, "%d", call->finish_code);
        qvi_grpc_percent_encode(call->finish_msg, msg, sizeof msg);
        nghttp2_nv nv[5] = {
            {(uint8_t *)":status", (uint8_t *)"200", 7, 3, NGHTTP2_NV_FLAG_NONE},
            {(uint8_t *)"content-type", (uint8_t *)"application/grpc", 12, 16,
             NGHTTP2_NV_FLAG_NONE},
            {(uint8_t *)"grpc-status", (uint8_t *)code, 11, strlen(code), NGHTTP2_NV_FLAG_NONE},
            {0},
            {0}};
        size_t k = 3;
        if (msg[0])
          nv[k++] = (nghttp2_nv){(uint8_t *)"grpc-message", (uint8_t *)msg, 12, strlen(msg),
                                 NGHTTP2_NV_FLAG_NONE};
        if (call->resp_name)
          nv[k++] = (nghttp2_nv){(uint8_t *)call->resp_name, (uint8_t *)call->resp_value,
                                 strlen(call->resp_name), strlen(call->resp_value),
                                 NGHTTP2_NV_FLAG_NONE};
        nghttp2_submit_response(s, call->stream_id, nv, k, NULL);
      } else {
        nghttp2_nv nv[3] = {
            {(uint8_t *)":status", (uint8_t *)"200", 7, 3, NGHTTP2_NV_FLAG_NONE},
            {(uint8_t *)"content-type", (uint8_t *)"application/grpc", 12, 16,
             NGHTTP2_NV_FLAG_NONE},
            {0}};
        size_t k = 2;
        if (call->resp_name)
          nv[k++] = (nghttp2_nv){(uint8_t *)call->resp_name, (uint8_t *)call->resp_value,
                                 strlen(call->resp_name), strlen(call->resp_value),
                                 NGHTTP2_NV_FLAG_NONE};
        nghttp2_data_provider p = provider(call);
        nghttp2_submit_response(s, call->stream_id, nv, k, &p);
      }
    } else if (call->want_resume && call->deferred) {
      call->deferred = false;
      nghttp2_session_resume_data(s, call->stream_id);
    }
    call->want_resume = false;
    if (call->need_consume) {
      call->need_consume = false;
      if (call->owed) nghttp2_session_consume(s, call->stream_id, call->owed);
      call->owed = 0;
    }
  maybe_free:;
    bool freed;
    call_maybe_free(call, &freed);
    if (freed) return;
  }
}

static void conn_die(Conn *c, const char *why) {
  if (!c->dead) {
    c->dead = true;
    if (!c->dead_error.code) qv_error_set(&c->dead_error, QV_EIO, "%s", why);
  }
  for (QviGrpcCall *call = c->calls; call; call = call->next) {
    call->send_active = false;
    pthread_cond_broadcast(&call->cond);
  }
}

/* Calls whose stream is gone with the connection, and requests that never
 * got a handler, are let go of. */
static void conn_drop_calls(Conn *c) {
  for (QviGrpcCall *call = c->calls, *next; call; call = next) {
    next = call->next;
    call->stream_closed = true;
    call->send_active = false;
    if (call->server && !call->handler_started) call->user_freed = true;
    pthread_cond_broadcast(&call->cond);
    bool freed;
    call_maybe_free(call, &freed);
  }
}

/* Bytes of a DATA payload worth a read of their own into the message. */
#define DIRECT_MIN ((size_t)16 << 10)

static void track_frames(FrameTrack *t, const uint8_t *p, size_t n) {
  while (n > 0) {
    size_t k;
    if (t->preface_left > 0) {
      k = n < t->preface_left ? n : t->preface_left;
      t->preface_left -= k;
    } else if (t->left > 0) {
      k = n < t->left ? n : t->left;
      t->left -= (uint32_t)k;
    } else {
      k = 9 - t->hdr_n < n ? 9 - t->hdr_n : n;
      memcpy(t->hdr + t->hdr_n, p, k);
      t->hdr_n += k;
      if (t->hdr_n == 9) {
        t->left = (uint32_t)t->hdr[0] << 16 | (uint32_t)t->hdr[1] << 8 | t->hdr[2];
        t->type = t->hdr[3];
        t->flags = t->hdr[4];
        t->stream_id = (int32_t)(((uint32_t)t->hdr[5] & 0x7f) << 24 | (uint32_t)t->hdr[6] << 16 |
                                 (uint32_t)t->hdr[7] << 8 | t->hdr[8]);
        t->hdr_n = 0;
      }
    }
    p += k;
    n -= k;
  }
}

/* Where the next received bytes may go instead of the connection's read
 * buffer: the rest of an unpadded DATA payload (at most the rest of the
 * message) whose stream is assembling a message into its own buffer. The
 * call is pinned (never freed) until the caller clears direct_pin. */
static QviGrpcCall *direct_target(Conn *c, uint8_t **into, size_t *n) {
  const FrameTrack *t = &c->in;
  size_t least = c->memory ? 1 : DIRECT_MIN; /* the fuzz server takes every payload */
  if (t->preface_left || t->hdr_n || t->left < least || t->type != NGHTTP2_DATA ||
      (t->flags & NGHTTP2_FLAG_PADDED))
    return NULL;
  QviGrpcCall *call = nghttp2_session_get_stream_user_data(c->session, t->stream_id);
  if (call == NULL || call->failed || call->cancelled || !call->assembling ||
      call->msg_buf == NULL)
    return NULL;
  size_t rest = call->msg_total - call->msg_got;
  if (rest > t->left) rest = t->left;
  if (rest < least) return NULL;
  *into = call->msg_buf + call->msg_shift + call->msg_got;
  *n = rest;
  call->direct_pin = true;
  return call;
}

static void *conn_thread(void *arg) {
  Conn *c = arg;
  /* large reads: fewer poll/read rounds per received byte (heap: the
   * thread's stack stays small) */
  uint8_t *buf = malloc(READ_CHUNK);
  /* a write to a socket the peer closed fails with EPIPE instead of
   * raising SIGPIPE in the process */
  sigset_t all;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, NULL);
  pthread_mutex_lock(&c->mu);
  if (buf == NULL) {
    qv_error_set(&c->dead_error, QV_ENOMEM, "%s", "out of memory for the connection");
  }
  for (;;) {
    if (buf == NULL) break;
    if (c->closing && !c->goaway_sent) {
      c->goaway_sent = true;
      for (QviGrpcCall *call = c->calls; call; call = call->next) call->want_cancel = true;
      nghttp2_submit_goaway(c->session, NGHTTP2_FLAG_NONE,
                            nghttp2_session_get_last_proc_stream_id(c->session),
                            NGHTTP2_NO_ERROR, NULL, 0);
    }
    apply_pending(c);
    int rv = nghttp2_session_send(c->session);
    if (rv != 0) {
      conn_die(c, nghttp2_strerror(rv));
      break;
    }
    if (c->closing && (c->calls == NULL || !c->server)) break;
    if (!nghttp2_session_want_read(c->session) && !nghttp2_session_want_write(c->session)) {
      conn_die(c, "the connection closed");
      break;
    }
    /* the rest of a large DATA payload goes straight into its message */
    uint8_t *into = buf;
    size_t room = READ_CHUNK;
    QviGrpcCall *pinned = direct_target(c, &into, &room);
    bool pending = qvi_transport_pending(&c->tr);
    pthread_mutex_unlock(&c->mu);
    struct pollfd p[2] = {{.fd = c->tr.fd, .events = POLLIN}, {.fd = c->wake[0], .events = POLLIN}};
    int r = pending ? 1 : poll(p, 2, 1000);
    if (r > 0 && (p[1].revents & POLLIN)) {
      char drain[64];
      while (read(c->wake[0], drain, sizeof drain) > 0) {
      }
    }
    ssize_t got = 0;
    QvError err = {0};
    if (pending || (r > 0 && (p[0].revents & (POLLIN | POLLHUP | POLLERR))))
      got = qvi_transport_read(&c->tr, into, room, &err);
    pthread_mutex_lock(&c->mu);
    /* nothing else frees a call whose stream is open, so it is still here */
    if (pinned) pinned->direct_pin = false;
    if (got == -1) {
      conn_die(c, "the peer closed the connection");
      break;
    }
    if (got == -2) {
      c->dead_error = err;
      conn_die(c, err.message);
      break;
    }
    if (got > 0) {
      if (pinned) qvi_path_hit(QV_PATH_GRPC_DIRECT_READ);
      track_frames(&c->in, into, (size_t)got);
      ssize_t used = nghttp2_session_mem_recv(c->session, into, (size_t)got);
      if (used < 0) {
        /* a protocol error: nghttp2 queued a GOAWAY; send it and stop */
        qv_error_set(&c->dead_error, QV_EIO, "HTTP/2: %s", nghttp2_strerror((int)used));
        nghttp2_session_send(c->session);
        conn_die(c, c->dead_error.message);
        break;
      }
    }
  }
  free(buf);
  conn_die(c, "the connection closed");
  /* the calls still held learn of it; the last reference frees the conn */
  conn_drop_calls(c);
  QviGrpcServer *srv = c->server ? c->srv : NULL;
  bool freed;
  conn_release_locked(c, &freed);
  if (!freed) pthread_mutex_unlock(&c->mu);
  if (srv) {
    pthread_mutex_lock(&srv->mu);
    pthread_cond_broadcast(&srv->cond);
    pthread_mutex_unlock(&srv->mu);
  }
  return NULL;
}

static void conn_destroy(Conn *c) {
  if (c->session) nghttp2_session_del(c->session);
  qvi_transport_close(&c->tr);
  if (!c->memory) {
    close(c->wake[0]);
    close(c->wake[1]);
  }
}

/* Drops one reference (mutex held; released and the conn freed at 0). */
static void conn_release_locked(Conn *c, bool *freed) {
  *freed = false;
  if (--c->refs > 0) return;
  *freed = true;
  QviGrpcServer *srv = c->server ? c->srv : NULL;
  if (srv) {
    pthread_mutex_lock(&srv->mu);
    Conn **pp = &srv->conns;
    while (*pp && *pp != c) pp = &(*pp)->srv_next;
    if (*pp) *pp = c->srv_next;
    pthread_cond_broadcast(&srv->cond);
    pthread_mutex_unlock(&srv->mu);
  }
  conn_destroy(c);
  pthread_mutex_unlock(&c->mu);
  pthread_mutex_destroy(&c->mu);
  free(c);
}

static QvStatus conn_init(Conn *c, bool server, const QviGrpcLimits *limits, bool memory,
                          QvError *error) {
  pthread_mutex_init(&c->mu, NULL);
  c->server = server;
  c->memory = memory;
  c->in.preface_left = server ? NGHTTP2_CLIENT_MAGIC_LEN : 0;
  c->refs = 1;
  c->wake[0] = c->wake[1] = -1;
  c->max_recv = limits && limits->max_receive_size ? limits->max_receive_size
                                                    : QVI_GRPC_DEFAULT_MAX_RECEIVE;
  if (c->max_recv > QVI_GRPC_MAX_RECEIVE_LIMIT) c->max_recv = QVI_GRPC_MAX_RECEIVE_LIMIT;
  c->max_hdr = limits && limits->max_header_list_size ? limits->max_header_list_size
                                                       : QVI_GRPC_DEFAULT_MAX_HEADER_LIST;
  if (!memory) {
    if (pipe(c->wake) != 0)
      return qv_error_set(error, QV_EIO, "pipe: %s", strerror(errno));
    fcntl(c->wake[0], F_SETFL, O_NONBLOCK);
    fcntl(c->wake[1], F_SETFL, O_NONBLOCK);
    fcntl(c->wake[0], F_SETFD, FD_CLOEXEC);
    fcntl(c->wake[1], F_SETFD, FD_CLOEXEC);
  }
  nghttp2_session_callbacks *cb;
  if (nghttp2_session_callbacks_new(&cb) != 0)
    return qv_error_set(error, QV_ENOMEM, "out of memory");
  nghttp2_session_callbacks_set_send_callback(cb, h2_send);
  nghttp2_session_callbacks_set_send_data_callback(cb, h2_send_data);
  nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cb, on_data_chunk);
  nghttp2_session_callbacks_set_on_begin_headers_callback(cb, on_begin_headers);
  nghttp2_session_callbacks_set_on_header_callback(cb, on_header);
  nghttp2_session_callbacks_set_on_frame_recv_callback(cb, on_frame_recv);
  nghttp2_session_callbacks_set_on_frame_send_callback(cb, on_frame_send);
  nghttp2_session_callbacks_set_on_stream_close_callback(cb, on_stream_close);
  nghttp2_session_callbacks_set_data_source_read_length_callback(cb, read_length);
  nghttp2_option *opt;
  if (nghttp2_option_new(&opt) != 0) {
    nghttp2_session_callbacks_del(cb);
    return qv_error_set(error, QV_ENOMEM, "out of memory");
  }
  nghttp2_option_set_no_auto_window_update(opt, 1);
  nghttp2_option_set_max_send_header_block_length(opt, 1 << 20);
  int rv = server ? nghttp2_session_server_new2(&c->session, cb, c, opt)
                  : nghttp2_session_client_new2(&c->session, cb, c, opt);
  nghttp2_option_del(opt);
  nghttp2_session_callbacks_del(cb);
  if (rv != 0) return qv_error_set(error, QV_ENOMEM, "HTTP/2: %s", nghttp2_strerror(rv));
  nghttp2_settings_entry iv[4] = {
      {NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, MAX_STREAMS},
      {NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, (uint32_t)QVI_GRPC_STREAM_WINDOW},
      {NGHTTP2_SETTINGS_MAX_FRAME_SIZE, MAX_FRAME},
      {NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE, (uint32_t)c->max_hdr}};
  nghttp2_submit_settings(c->session, NGHTTP2_FLAG_NONE, iv, 4);
  nghttp2_session_set_local_window_size(c->session, NGHTTP2_FLAG_NONE, 0, CONN_WINDOW);
  return QV_OK;
}

/* ---- waiting (caller threads) */

/* Waits on the call's condition until `deadline` (0: none); false on
 * timeout. */
static bool call_wait(QviGrpcCall *call, int64_t deadline) {
  Conn *c = call->conn;
  if (deadline == 0) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += 1;
    pthread_cond_timedwait(&call->cond, &c->mu, &ts);
    return true;
  }
  int64_t left = deadline - qvi_grpc_now_ms();
  if (left <= 0) return false;
  if (left > 1000) left = 1000;
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  ts.tv_sec += left / 1000;
  ts.tv_nsec += (left % 1000) * 1000000;
  if (ts.tv_nsec >= 1000000000) {
    ts.tv_sec++;
    ts.tv_nsec -= 1000000000;
  }
  pthread_cond_timedwait(&call->cond, &c->mu, &ts);
  return true;
}

static void set_local_status(QviGrpcCall *call, int code) {
  if (call->grpc_status < 0) call->grpc_status = code;
}

/* The error a call that cannot go on reports (mutex held). */
static QvStatus call_error(QviGrpcCall *call, QvError *error) {
  Conn *c = call->conn;
  if (call->failed) {
    set_local_status(call, call->error.code == QV_ELIMIT ? QVI_GRPC_RESOURCE_EXHAUSTED
                                                          : QVI_GRPC_INTERNAL);
    if (error) *error = call->error;
    return call->error.code;
  }
  if (!call->server && call->grpc_status > 0 && (call->remote_closed || call->stream_closed)) {
    return qv_error_set(error, qvi_grpc_status_to_qv(call->grpc_status), "%s: %s",
                        qvi_grpc_status_name(call->grpc_status),
                        call->grpc_message[0] ? call->grpc_message : "(no message)");
  }
  bool cancelled = call->cancelled || call->want_cancel;
  if (cancelled && call->grpc_status == QVI_GRPC_DEADLINE_EXCEEDED)
    return qv_error_set(error, QV_EIO, "DEADLINE_EXCEEDED: the call's deadline passed");
  if (cancelled) {
    set_local_status(call, QVI_GRPC_CANCELLED);
    return qv_error_set(error, QV_EIO, "CANCELLED: the call was cancelled");
  }
  if (call->stream_closed && !c->dead) {
    /* a server resets a call at its deadline (grpc-timeout); that may
     * arrive before this side's own timer: the deadline is the reason */
    if (!call->server && call->deadline > 0 && qvi_grpc_now_ms() >= call->deadline) {
      set_local_status(call, QVI_GRPC_DEADLINE_EXCEEDED);
      return qv_error_set(error, QV_EIO, "%s",
                          "DEADLINE_EXCEEDED: the call's deadline passed (the peer reset the stream)");
    }
    set_local_status(call, call->rst_code == NGHTTP2_CANCEL ? QVI_GRPC_CANCELLED
                                                            : QVI_GRPC_INTERNAL);
    return qv_error_set(error, QV_EIO, "%s: the peer reset the stream (HTTP/2 error %u)",
                        qvi_grpc_status_name(call->grpc_status), call->rst_code);
  }
  set_local_status(call, QVI_GRPC_UNAVAILABLE);
  return qv_error_set(error, QV_EIO, "UNAVAILABLE: %s",
                      c->dead_error.message[0] ? c->dead_error.message : "connection closed");
}

static bool call_over(const QviGrpcCall *call) {
  return call->failed || call->cancelled || call->want_cancel || call->conn->dead ||
         (call->stream_closed && !(call->remote_closed && call->q_count > 0));
}

static QvStatus deadline_passed(QviGrpcCall *call, QvError *error) {
  call->want_cancel = true;
  set_local_status(call, QVI_GRPC_DEADLINE_EXCEEDED);
  wake(call->conn);
  return qv_error_set(error, QV_EIO, "DEADLINE_EXCEEDED: no answer within the deadline");
}

/* Sends iov[0..n) as the bytes of a message: with the 5-byte prefix
 * (with_prefix, for a message of `total` bytes) or as the next bytes of
 * the message begun last (call->send_owed counts what it still needs). */
static QvStatus send_pieces(QviGrpcCall *call, bool with_prefix, uint64_t total,
                            const struct iovec *iov, int n, QvError *error) {
  if (n < 0 || n > MAX_SEND_IOV) return qv_error_set(error, QV_EARG, "too many pieces");
  size_t sum = 0;
  for (int i = 0; i < n; i++) sum += iov[i].iov_len;
  if (with_prefix && total > UINT32_MAX)
    return qv_error_set(error, QV_ELIMIT, "message too large for gRPC");
  Conn *c = call->conn;
  pthread_mutex_lock(&c->mu);
  QvStatus st = QV_OK;
  if (call_over(call) || call->close_send || call->finishing) {
    st = call->close_send || call->finishing ? qv_error_set(error, QV_EARG, "the call's sending ended")
                                             : call_error(call, error);
    pthread_mutex_unlock(&c->mu);
    return st;
  }
  if (with_prefix ? call->send_owed != 0 || sum > total : sum > call->send_owed) {
    pthread_mutex_unlock(&c->mu);
    return qv_error_set(error, QV_EARG, with_prefix ? "the message begun last is not complete"
                                                     : "more bytes than the message holds");
  }
  call->send_owed = with_prefix ? total - sum : call->send_owed - sum;
  int k = 0;
  if (with_prefix) {
    call->send_prefix[0] = 0;
    call->send_prefix[1] = (uint8_t)(total >> 24);
    call->send_prefix[2] = (uint8_t)(total >> 16);
    call->send_prefix[3] = (uint8_t)(total >> 8);
    call->send_prefix[4] = (uint8_t)total;
    call->send_iov[k++] = (struct iovec){call->send_prefix, 5};
  }
  for (int i = 0; i < n; i++) call->send_iov[k++] = iov[i];
  call->send_n = k;
  call->send_i = 0;
  call->send_active = true;
  call->want_resume = true;
  wake(c);
  while (call->send_active) {
    if (call_over(call)) break;
    if (!call_wait(call, call->deadline)) {
      st = deadline_passed(call, error);
      /* the connection thread may be writing from the caller's memory:
       * wait until it let go of it */
      while (call->send_active && !call->stream_closed && !c->dead) call_wait(call, 0);
      call->send_active = false;
      pthread_mutex_unlock(&c->mu);
      return st;
    }
  }
  if (call->send_active || call_over(call)) {
    /* the bytes may be half written; the stream cannot go on */
    if (call->send_active && !call->stream_closed && !c->dead) {
      call->want_cancel = true;
      wake(c);
      while (call->send_active && !call->stream_closed && !c->dead) call_wait(call, 0);
    }
    call->send_active = false;
    st = call_error(call, error);
  }
  pthread_mutex_unlock(&c->mu);
  return st;
}

QvStatus qvi_grpc_call_send(QviGrpcCall *call, const struct iovec *iov, int n, QvError *error) {
  uint64_t total = 0;
  for (int i = 0; i < n && i <= MAX_SEND_IOV; i++) total += iov[i].iov_len;
  return send_pieces(call, true, total, iov, n, error);
}

QvStatus qvi_grpc_call_send_begin(QviGrpcCall *call, size_t total, const struct iovec *iov, int n,
                                  QvError *error) {
  return send_pieces(call, true, total, iov, n, error);
}

QvStatus qvi_grpc_call_send_more(QviGrpcCall *call, const struct iovec *iov, int n,
                                 QvError *error) {
  return send_pieces(call, false, 0, iov, n, error);
}

QvStatus qvi_grpc_call_close_send(QviGrpcCall *call, QvError *error) {
  Conn *c = call->conn;
  pthread_mutex_lock(&c->mu);
  QvStatus st = QV_OK;
  if (call_over(call)) st = call_error(call, error);
  else if (call->send_owed)
    st = qv_error_set(error, QV_EARG, "the message begun last is not complete");
  else {
    call->close_send = true;
    call->want_resume = true;
    wake(c);
  }
  pthread_mutex_unlock(&c->mu);
  return st;
}

QvStatus qvi_grpc_call_recv(QviGrpcCall *call, QviGrpcMessage *out, QvError *error) {
  memset(out, 0, sizeof *out);
  Conn *c = call->conn;
  pthread_mutex_lock(&c->mu);
  QvStatus st;
  for (;;) {
    if (call->want_cancel || call->cancelled) {
      st = call_error(call, error);
      break;
    }
    if (call->q_head) {
      Msg *m = call->q_head;
      call->q_head = m->next;
      if (call->q_head == NULL) call->q_tail = NULL;
      call->q_count--;
      if (call->q_count == 0 && call->owed) {
        call->need_consume = true;
        wake(c);
      }
      QvOwner *owner = qv_owner_new(msg_free_owner, m);
      if (owner == NULL) {
        msg_free(m);
        st = qv_error_set(error, QV_ENOMEM, "out of memory");
        break;
      }
      out->data = m->buf + m->shift;
      out->size = m->size;
      out->owner = owner;
      st = QV_OK;
      break;
    }
    if (call->failed) {
      st = call_error(call, error);
      break;
    }
    if (call->remote_closed) {
      if (call->server) {
        st = QV_EOS;
      } else if (call->grpc_status < 0) {
        set_local_status(call, QVI_GRPC_INTERNAL);
        st = qv_error_set(error, QV_EIO, "INTERNAL: the server ended the call without a status");
      } else if (call->grpc_status == 0) {
        st = QV_EOS;
      } else {
        st = call_error(call, error);
      }
      break;
    }
    if (call_over(call)) {
      st = call_error(call, error);
      break;
    }
    if (!call_wait(call, call->deadline)) {
      st = deadline_passed(call, error);
      break;
    }
  }
  pthread_mutex_unlock(&c->mu);
  return st;
}

void qvi_grpc_call_set_placement(QviGrpcCall *call, QviGrpcPlacement place, void *ctx) {
  pthread_mutex_lock(&call->conn->mu);
  call->place = place;
  call->place_ctx = ctx;
  pthread_mutex_unlock(&call->conn->mu);
}

void qvi_grpc_call_cancel(QviGrpcCall *call) {
  pthread_mutex_lock(&call->conn->mu);
  call->want_cancel = true;
  set_local_status(call, QVI_GRPC_CANCELLED);
  wake(call->conn);
  pthread_mutex_unlock(&call->conn->mu);
}

int qvi_grpc_call_status(const QviGrpcCall *call) { return call->grpc_status; }
int64_t qvi_grpc_call_deadline(const QviGrpcCall *call) { return call->deadline; }
const char *qvi_grpc_call_path(const QviGrpcCall *call) { return call->path ? call->path : ""; }

const char *qvi_grpc_call_header(const QviGrpcCall *call, const char *name) {
  for (size_t i = 0; i < call->n_headers; i++)
    if (strcmp(call->headers[i].name, name) == 0) return call->headers[i].value;
  return NULL;
}

QvStatus qvi_grpc_call_set_response_header(QviGrpcCall *call, const char *name, const char *value,
                                           QvError *error) {
  Conn *c = call->conn;
  pthread_mutex_lock(&c->mu);
  QvStatus st = QV_OK;
  if (call->response_sent) {
    st = qv_error_set(error, QV_EARG, "the response headers are sent already");
  } else {
    free(call->resp_name);
    free(call->resp_value);
    call->resp_name = strdup(name);
    call->resp_value = strdup(value);
    if (!call->resp_name || !call->resp_value) {
      free(call->resp_name);
      free(call->resp_value);
      call->resp_name = call->resp_value = NULL;
      st = qv_error_set(error, QV_ENOMEM, "out of memory");
    }
  }
  pthread_mutex_unlock(&c->mu);
  return st;
}

bool qvi_grpc_call_cancelled(const QviGrpcCall *call) {
  Conn *c = call->conn;
  pthread_mutex_lock(&c->mu);
  bool r = call->cancelled || call->want_cancel || c->dead ||
           (call->stream_closed && !call->trailers_sent) ||
           (call->deadline && qvi_grpc_now_ms() > call->deadline);
  pthread_mutex_unlock(&c->mu);
  return r;
}

void qvi_grpc_call_free(QviGrpcCall *call) {
  if (call == NULL) return;
  Conn *c = call->conn;
  pthread_mutex_lock(&c->mu);
  if (call->submitted && !call->stream_closed && !c->dead) {
    call->want_cancel = true;
    wake(c);
  }
  call->user_freed = true;
  bool freed;
  call_maybe_free(call, &freed);
  if (!freed) pthread_mutex_unlock(&c->mu);
}

void qvi_grpc_call_finish(QviGrpcCall *call, int code, const char *message) {
  Conn *c = call->conn;
  QviGrpcServer *srv = c->srv;
  /* A call that failed after its deadline ended for that reason, whatever
   * the handler reports (it saw the call cancelled), as gRPC servers say. */
  if (code != QVI_GRPC_OK && call->deadline && qvi_grpc_now_ms() >= call->deadline) {
    code = QVI_GRPC_DEADLINE_EXCEEDED;
    message = "the call's deadline passed";
  }
  pthread_mutex_lock(&c->mu);
  call->finish_code = code;
  snprintf(call->finish_msg, sizeof call->finish_msg, "%s", message ? message : "");
  call->finishing = true;
  call->want_resume = true;
  wake(c);
  while (!call->trailers_sent && !call->stream_closed && !call->cancelled && !c->dead) {
    if (!call_wait(call, call->deadline)) {
      call->want_cancel = true;
      wake(c);
      break;
    }
  }
  call->user_freed = true;
  bool freed;
  call_maybe_free(call, &freed);
  if (!freed) pthread_mutex_unlock(&c->mu);
  if (srv) {
    pthread_mutex_lock(&srv->mu);
    srv->n_handlers--;
    pthread_cond_broadcast(&srv->cond);
    pthread_mutex_unlock(&srv->mu);
  }
}

/* ---- client */

static QvStatus start_thread(Conn *c, QvError *error) {
  c->refs++;
  if (pthread_create(&c->thread, NULL, conn_thread, c) != 0) {
    c->refs--;
    return qv_error_set(error, QV_EIO, "cannot start the connection thread");
  }
  c->thread_started = true;
  return QV_OK;
}

QvStatus qvi_grpc_channel_new(QviGrpcChannel **out, const char *host, int port,
                              const QviGrpcTls *tls, const QviGrpcLimits *limits,
                              int64_t deadline, QvError *error) {
  *out = NULL;
  QviGrpcChannel *ch = calloc(1, sizeof *ch);
  Conn *c = calloc(1, sizeof *c);
  if (ch == NULL || c == NULL) {
    free(ch);
    free(c);
    return qv_error_set(error, QV_ENOMEM, "out of memory");
  }
  if (deadline == 0) deadline = qvi_grpc_now_ms() + 30000;
  QvStatus st = qvi_transport_connect(&c->tr, host, port, tls, deadline, error);
  if (st) {
    free(ch);
    free(c);
    return st;
  }
  c->tls = tls && tls->enabled;
  bool v6 = strchr(host, ':') != NULL;
  snprintf(c->authority, sizeof c->authority, v6 ? "[%s]:%d" : "%s:%d", host, port);
  st = conn_init(c, false, limits, false, error);
  if (!st) st = start_thread(c, error);
  if (st) {
    conn_destroy(c);
    pthread_mutex_destroy(&c->mu);
    free(c);
    free(ch);
    return st;
  }
  ch->conn = c;
  *out = ch;
  return QV_OK;
}

void qvi_grpc_channel_free(QviGrpcChannel *ch) {
  if (ch == NULL) return;
  Conn *c = ch->conn;
  pthread_mutex_lock(&c->mu);
  c->closing = true;
  wake(c);
  pthread_t t = c->thread;
  bool started = c->thread_started;
  pthread_mutex_unlock(&c->mu);
  if (started) pthread_join(t, NULL);
  pthread_mutex_lock(&c->mu);
  bool freed;
  conn_release_locked(c, &freed);
  if (!freed) pthread_mutex_unlock(&c->mu);
  free(ch);
}

static int nv_set(nghttp2_nv *nv, const char *name, const char *value) {
  nv->name = (uint8_t *)strdup(name);
  nv->value = (uint8_t *)strdup(value);
  nv->namelen = strlen(name);
  nv->valuelen = strlen(value);
  nv->flags = NGHTTP2_NV_FLAG_NONE;
  return nv->name && nv->value ? 0 : -1;
}

QvStatus qvi_grpc_call_start(QviGrpcCall **out, QviGrpcChannel *ch, const char *path,
                             const QviGrpcHeader *headers, size_t n_headers, int64_t deadline,
                             QvError *error) {
  *out = NULL;
  Conn *c = ch->conn;
  if (n_headers > MAX_HEADERS) return qv_error_set(error, QV_EARG, "too many headers");
  pthread_mutex_lock(&c->mu);
  if (c->dead) {
    QvStatus st = qv_error_set(error, QV_EIO, "UNAVAILABLE: %s", c->dead_error.message);
    pthread_mutex_unlock(&c->mu);
    return st;
  }
  QviGrpcCall *call = call_new(c, false);
  if (call == NULL) {
    pthread_mutex_unlock(&c->mu);
    return qv_error_set(error, QV_ENOMEM, "out of memory");
  }
  call->deadline = deadline;
  call->nva = calloc(8 + n_headers, sizeof *call->nva);
  int bad = call->nva == NULL;
  size_t k = 0;
  if (!bad) {
    char timeout[24];
    bad |= nv_set(&call->nva[k++], ":method", "POST");
    bad |= nv_set(&call->nva[k++], ":scheme", c->tls ? "https" : "http");
    bad |= nv_set(&call->nva[k++], ":path", path);
    bad |= nv_set(&call->nva[k++], ":authority", c->authority);
    bad |= nv_set(&call->nva[k++], "content-type", "application/grpc");
    bad |= nv_set(&call->nva[k++], "te", "trailers");
    bad |= nv_set(&call->nva[k++], "user-agent", "quiver-grpc");
    if (deadline) {
      format_timeout(deadline - qvi_grpc_now_ms(), timeout, sizeof timeout);
      bad |= nv_set(&call->nva[k++], "grpc-timeout", timeout);
    }
    for (size_t i = 0; i < n_headers; i++) bad |= nv_set(&call->nva[k++], headers[i].name, headers[i].value);
  }
  call->n_nva = k;
  if (bad) {
    call->user_freed = true;
    bool freed;
    call_maybe_free(call, &freed);
    if (!freed) pthread_mutex_unlock(&c->mu);
    return qv_error_set(error, QV_ENOMEM, "out of memory");
  }
  call->want_submit = true;
  wake(c);
  pthread_mutex_unlock(&c->mu);
  *out = call;
  return QV_OK;
}

/* ---- server */

static void *handler_thread(void *arg) {
  QviGrpcCall *call = arg;
  QviGrpcServer *srv = call->conn->srv;
  sigset_t all;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, NULL);
  if (srv->handler) srv->handler(srv->ctx, call);
  else qvi_grpc_call_finish(call, QVI_GRPC_UNIMPLEMENTED, "no handler");
  return NULL;
}

QvStatus qvi_grpc_server_new(QviGrpcServer **out, const char *host, int port,
                             const QviGrpcTls *tls, const QviGrpcLimits *limits,
                             QviGrpcHandler handler, void *ctx, QvError *error) {
  *out = NULL;
  QviGrpcServer *s = calloc(1, sizeof *s);
  if (s == NULL) return qv_error_set(error, QV_ENOMEM, "out of memory");
  s->listen_fd = -1;
  s->stop_pipe[0] = s->stop_pipe[1] = -1;
  s->handler = handler;
  s->ctx = ctx;
  if (limits) s->limits = *limits;
  pthread_mutex_init(&s->mu, NULL);
  pthread_cond_init(&s->cond, NULL);
  QvStatus st = QV_OK;
  if (tls && tls->enabled) {
    if (!tls->cert_file || !tls->key_file) {
      qvi_grpc_server_free(s);
      return qv_error_set(error, QV_EARG, "TLS needs a certificate and a key");
    }
    if ((st = qvi_transport_server_ctx(&s->ssl_ctx, tls->cert_file, tls->key_file, error))) {
      qvi_grpc_server_free(s);
      return st;
    }
  }
  char service[16];
  snprintf(service, sizeof service, "%d", port);
  struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
                           .ai_flags = AI_PASSIVE};
  struct addrinfo *res = NULL;
  int gr = getaddrinfo(host, service, &hints, &res);
  if (gr != 0) {
    qvi_grpc_server_free(s);
    return qv_error_set(error, QV_EIO, "cannot resolve %s: %s", host ? host : "*", gai_strerror(gr));
  }
  int err = 0;
  for (struct addrinfo *a = res; a && s->listen_fd < 0; a = a->ai_next) {
    int fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) {
      err = errno;
      continue;
    }
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (bind(fd, a->ai_addr, a->ai_addrlen) == 0 && listen(fd, 128) == 0) {
      s->listen_fd = fd;
    } else {
      err = errno;
      close(fd);
    }
  }
  freeaddrinfo(res);
  if (s->listen_fd < 0) {
    qvi_grpc_server_free(s);
    return qv_error_set(error, QV_EIO, "cannot listen on %s:%d: %s", host ? host : "*", port,
                        strerror(err));
  }
  struct sockaddr_storage ss;
  socklen_t sl = sizeof ss;
  getsockname(s->listen_fd, (struct sockaddr *)&ss, &sl);
  s->port = ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
                                           : ((struct sockaddr_in *)&ss)->sin_port);
  if (pipe(s->stop_pipe) != 0) {
    qvi_grpc_server_free(s);
    return qv_error_set(error, QV_EIO, "pipe: %s", strerror(errno));
  }
  fcntl(s->stop_pipe[0], F_SETFD, FD_CLOEXEC);
  fcntl(s->stop_pipe[1], F_SETFD, FD_CLOEXEC);
  fcntl(s->stop_pipe[1], F_SETFL, O_NONBLOCK);
  *out = s;
  return QV_OK;
}

int qvi_grpc_server_port(const QviGrpcServer *s) { return s->port; }

void qvi_grpc_server_stop(QviGrpcServer *s) {
  char b = 1;
  ssize_t r = write(s->stop_pipe[1], &b, 1);
  (void)r;
}

typedef struct Accepted {
  QviGrpcServer *srv;
  int fd;
} Accepted;

/* Handshakes an accepted socket on a thread of its own (a slow TLS client
 * does not hold up the accept loop), then runs the connection there. */
static void *accept_thread(void *arg) {
  Accepted a = *(Accepted *)arg;
  free(arg);
  sigset_t all;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, NULL);
  QviGrpcServer *s = a.srv;
  Conn *c = calloc(1, sizeof *c);
  QvError err = {0};
  if (c == NULL || qvi_transport_accept(&c->tr, a.fd, s->ssl_ctx, qvi_grpc_now_ms() + 10000, &err) ||
      conn_init(c, true, &s->limits, false, &err)) {
    if (c) {
      conn_destroy(c);
      pthread_mutex_destroy(&c->mu);
      free(c);
    } else {
      close(a.fd);
    }
    pthread_mutex_lock(&s->mu);
    s->n_handlers--;
    pthread_cond_broadcast(&s->cond);
    pthread_mutex_unlock(&s->mu);
    return NULL;
  }
  c->srv = s;
  pthread_mutex_lock(&s->mu);
  c->srv_next = s->conns;
  s->conns = c;
  c->closing = s->stopping;
  s->n_handlers--;
  pthread_cond_broadcast(&s->cond);
  pthread_mutex_unlock(&s->mu);
  conn_thread(c);
  return NULL;
}

QvStatus qvi_grpc_server_run(QviGrpcServer *s, QvError *error) {
  (void)error;
  for (;;) {
    struct pollfd p[2] = {{.fd = s->listen_fd, .events = POLLIN},
                          {.fd = s->stop_pipe[0], .events = POLLIN}};
    int r = poll(p, 2, -1);
    if (r < 0 && errno == EINTR) continue;
    if (r > 0 && (p[1].revents & POLLIN)) break;
    if (r > 0 && (p[0].revents & POLLIN)) {
      int fd = accept(s->listen_fd, NULL, NULL);
      if (fd < 0) continue;
      fcntl(fd, F_SETFD, FD_CLOEXEC);
      Accepted *a = malloc(sizeof *a);
      pthread_t t;
      pthread_attr_t attr;
      pthread_attr_init(&attr);
      pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
      pthread_mutex_lock(&s->mu);
      s->n_handlers++; /* counts the accept thread until its conn is listed */
      pthread_mutex_unlock(&s->mu);
      if (a == NULL || (a->srv = s, a->fd = fd, pthread_create(&t, &attr, accept_thread, a) != 0)) {
        free(a);
        close(fd);
        pthread_mutex_lock(&s->mu);
        s->n_handlers--;
        pthread_mutex_unlock(&s->mu);
      }
      pthread_attr_destroy(&attr);
    }
  }
  /* shutdown: every connection cancels its calls and says GOAWAY; wait
   * until the handlers and connections are gone */
  pthread_mutex_lock(&s->mu);
  s->stopping = true;
  close(s->listen_fd);
  s->listen_fd = -1;
  for (;;) {
    for (Conn *c = s->conns; c; c = c->srv_next) {
      /* lock order is conn then server elsewhere: only flag and wake here */
      c->closing = true;
      wake(c);
    }
    if (s->conns == NULL && s->n_handlers == 0) break;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_nsec += 50 * 1000000;
    if (ts.tv_nsec >= 1000000000) {
      ts.tv_sec++;
      ts.tv_nsec -= 1000000000;
    }
    pthread_cond_timedwait(&s->cond, &s->mu, &ts);
  }
  pthread_mutex_unlock(&s->mu);
  return QV_OK;
}

void qvi_grpc_server_free(QviGrpcServer *s) {
  if (s == NULL) return;
  if (s->listen_fd >= 0) close(s->listen_fd);
  if (s->stop_pipe[0] >= 0) close(s->stop_pipe[0]);
  if (s->stop_pipe[1] >= 0) close(s->stop_pipe[1]);
  if (s->ssl_ctx) qvi_transport_ctx_free(s->ssl_ctx);
  pthread_cond_destroy(&s->cond);
  pthread_mutex_destroy(&s->mu);
  free(s);
}

/* ---- fuzz entry */

static void fuzz_handler(void *ctx, QviGrpcCall *call) {
  (void)ctx;
  QviGrpcMessage m;
  while (qvi_grpc_call_recv(call, &m, NULL) == QV_OK) {
    struct iovec v = {(void *)m.data, m.size < 64 ? m.size : 64};
    qvi_grpc_call_send(call, &v, 1, NULL);
    qvi_grpc_message_reset(&m);
  }
  qvi_grpc_call_finish(call, QVI_GRPC_OK, NULL);
}

void qvi_grpc_fuzz_server(const uint8_t *data, size_t size) {
  QviGrpcServer srv;
  memset(&srv, 0, sizeof srv);
  srv.handler = fuzz_handler;
  srv.limits.max_receive_size = 1 << 20;
  srv.limits.max_header_list_size = 8192;
  pthread_mutex_init(&srv.mu, NULL);
  pthread_cond_init(&srv.cond, NULL);
  Conn *c = calloc(1, sizeof *c);
  if (c == NULL) return;
  c->tr.fd = -1;
  if (conn_init(c, true, &srv.limits, true, NULL)) {
    conn_destroy(c);
    free(c);
    return;
  }
  c->srv = &srv;
  srv.conns = c;
  pthread_mutex_lock(&c->mu);
  c->refs++; /* this function's */
  /* in pieces, as a socket would deliver them */
  size_t off = 0;
  while (off < size && !c->dead) {
    size_t n = size - off < 4096 ? size - off : 4096;
    /* what the connection thread reads into a message directly: copied
     * there first, so that deliver() finds it in place */
    uint8_t *into;
    size_t room;
    QviGrpcCall *pinned = direct_target(c, &into, &room);
    const uint8_t *from = data + off;
    /* a frame header on its own, so that its payload can go direct */
    if (!pinned && c->in.left == 0 && c->in.preface_left == 0 && n > 9 - c->in.hdr_n)
      n = 9 - c->in.hdr_n;
    if (pinned) {
      pinned->direct_pin = false;
      if (n > room) n = room;
      memcpy(into, from, n);
      from = into;
      qvi_path_hit(QV_PATH_GRPC_DIRECT_READ);
    }
    track_frames(&c->in, from, n);
    ssize_t used = nghttp2_session_mem_recv(c->session, from, n);
    if (used < 0) break;
    off += n;
    apply_pending(c);
    if (nghttp2_session_send(c->session) != 0) break;
  }
  /* the client goes away: the handlers see it and finish */
  conn_die(c, "end of fuzz input");
  conn_drop_calls(c);
  pthread_mutex_unlock(&c->mu);
  pthread_mutex_lock(&srv.mu);
  while (srv.n_handlers > 0) pthread_cond_wait(&srv.cond, &srv.mu);
  pthread_mutex_unlock(&srv.mu);
  pthread_mutex_lock(&c->mu);
  /* the handlers let go of their calls (freed then); this function's and
   * the connection's own references remain */
  conn_drop_calls(c);
  srv.conns = NULL;
  c->srv = NULL;
  bool freed;
  conn_release_locked(c, &freed);
  if (!freed) conn_release_locked(c, &freed);
  if (!freed) pthread_mutex_unlock(&c->mu);
  pthread_cond_destroy(&srv.cond);
  pthread_mutex_destroy(&srv.mu);
}
