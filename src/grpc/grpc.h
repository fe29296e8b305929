/* gRPC over HTTP/2 (PROTOCOL-HTTP2.md of grpc/grpc), on Debian's libnghttp2
 * for the HTTP/2 framing and OpenSSL for TLS. It knows calls, metadata,
 * length-prefixed messages, status and deadlines; nothing of protobuf or of
 * Flight.
 *
 * Threads: every connection (a client channel, or a connection a server
 * accepted) has one thread that owns its socket and nghttp2 session; it is
 * the only thread that calls nghttp2. Callers (the client's threads, the
 * server's handlers, each of which runs on a thread of its own per call)
 * exchange messages with it through per-call queues under the connection's
 * mutex. A call's send blocks until the connection thread has written the
 * caller's bytes (straight from the caller's memory: the bytes are not
 * copied into nghttp2, see send_data in grpc.c), so a body goes from the
 * batch's buffers to the socket. Received bytes are copied once, by the
 * kernel: the rest of a DATA frame's payload (16 KiB or more) is read from
 * the socket (or TLS) straight into the message it belongs to and then
 * handed to nghttp2 where it lies, which checks it and keeps flow control
 * (QV_PATH_GRPC_DIRECT_READ); frame headers and small payloads pass through
 * the connection's read buffer.
 *
 * Memory: received DATA is consumed (WINDOW_UPDATE) as it is assembled into
 * a message only while no whole message waits for the caller, so one call
 * holds at most one waiting message, the one being assembled (allocated
 * whole when its first bytes arrive), further messages within one stream
 * window (QVI_GRPC_STREAM_WINDOW, 16 MiB) and one recycled buffer: a
 * message buffer (64 KiB or more) the caller let go of is kept for the next
 * message of about its size, whose pages are then faulted in already
 * (QV_PATH_RECYCLED_BUFFER), at most one, of the largest message received.
 * A connection's unconsumed bytes are bounded by its window (128 MiB), and
 * its thread reads through one 256 KiB buffer. A message is at most max_receive_size
 * bytes (default QVI_GRPC_DEFAULT_MAX_RECEIVE, 256 MiB; a larger one resets
 * the stream with RESOURCE_EXHAUSTED before anything is allocated for it),
 * and a header block at most max_header_list_size bytes (default 64 KiB; a
 * server answers a request over it RESOURCE_EXHAUSTED without starting a
 * handler, and the connection goes on). */
#ifndef QUIVER_GRPC_GRPC_H
#define QUIVER_GRPC_GRPC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "quiver/buffer.h"
#include "quiver/error.h"

/* gRPC status codes (statuscodes.md). */
enum {
  QVI_GRPC_OK = 0,
  QVI_GRPC_CANCELLED = 1,
  QVI_GRPC_UNKNOWN = 2,
  QVI_GRPC_INVALID_ARGUMENT = 3,
  QVI_GRPC_DEADLINE_EXCEEDED = 4,
  QVI_GRPC_NOT_FOUND = 5,
  QVI_GRPC_ALREADY_EXISTS = 6,
  QVI_GRPC_PERMISSION_DENIED = 7,
  QVI_GRPC_RESOURCE_EXHAUSTED = 8,
  QVI_GRPC_FAILED_PRECONDITION = 9,
  QVI_GRPC_ABORTED = 10,
  QVI_GRPC_OUT_OF_RANGE = 11,
  QVI_GRPC_UNIMPLEMENTED = 12,
  QVI_GRPC_INTERNAL = 13,
  QVI_GRPC_UNAVAILABLE = 14,
  QVI_GRPC_DATA_LOSS = 15,
  QVI_GRPC_UNAUTHENTICATED = 16
};

/* Receive limit of one message: bounded, and far above gRPC's usual 4 MiB
 * so that whole record batches fit (Arrow C++'s Flight lifts it too). */
#define QVI_GRPC_DEFAULT_MAX_RECEIVE ((size_t)256 << 20)
/* gRPC's length prefix is 32 bits. */
#define QVI_GRPC_MAX_RECEIVE_LIMIT ((size_t)UINT32_MAX)
#define QVI_GRPC_DEFAULT_MAX_HEADER_LIST ((size_t)64 << 10)
/* The HTTP/2 receive window of each stream (what a peer may send ahead of
 * what the caller has taken): wide enough that a bulk sender is not held
 * back by WINDOW_UPDATE round trips (at 1 MiB a 1 GiB DoGet spent its time
 * waiting for them); the bytes go into the message being assembled, which
 * is allocated whole anyway. */
#define QVI_GRPC_STREAM_WINDOW ((int32_t)16 << 20)

/* "UNAUTHENTICATED" */
const char *qvi_grpc_status_name(int code);
/* The library status a gRPC status means to a caller. */
QvStatus qvi_grpc_status_to_qv(int code);

/* ---- header metadata */

typedef struct QviGrpcHeader {
  const char *name;  /* lower case */
  const char *value;
} QviGrpcHeader;

/* grpc-message's percent-encoding (PROTOCOL-HTTP2.md): out receives the
 * decoded text, NUL-terminated, cut to out_size - 1 bytes. Malformed
 * escapes are kept as they are. */
void qvi_grpc_percent_decode(const char *in, size_t n, char *out, size_t out_size);
/* Encodes text for grpc-message into out (NUL-terminated, cut at a whole
 * escape). */
void qvi_grpc_percent_encode(const char *in, char *out, size_t out_size);
/* grpc-timeout ("10S", "250m", "5000u"...) in milliseconds (rounded up);
 * false when malformed. */
bool qvi_grpc_timeout_parse(const char *v, int64_t *ms);

/* Monotonic clock in milliseconds (deadlines are absolute values of it). */
int64_t qvi_grpc_now_ms(void);

/* ---- TLS and connection settings */

typedef struct QviGrpcTls {
  bool enabled;
  const char *ca_file;     /* client: CAs to trust; NULL: the system's */
  const char *server_name; /* client: name to check (and SNI); NULL: the host */
  const char *cert_file;   /* server: certificate chain (PEM) */
  const char *key_file;    /* server: private key (PEM) */
} QviGrpcTls;

typedef struct QviGrpcLimits {
  size_t max_receive_size;     /* 0: QVI_GRPC_DEFAULT_MAX_RECEIVE */
  size_t max_header_list_size; /* 0: QVI_GRPC_DEFAULT_MAX_HEADER_LIST */
} QviGrpcLimits;

/* ---- calls */

typedef struct QviGrpcCall QviGrpcCall;

/* A received message: data[0..size) kept alive by `owner` (one reference,
 * the caller's). */
typedef struct QviGrpcMessage {
  const uint8_t *data;
  size_t size;
  QvOwner *owner;
} QviGrpcMessage;

void qvi_grpc_message_reset(QviGrpcMessage *m);

/* Where a received message is placed in its buffer: called once per message
 * with its first bytes (head[0..n), n = min(total, 4096)); returns an offset
 * 0..63 at which the message starts in a 64-byte-aligned buffer, so that a
 * caller can put a part of the message (a body) on an aligned address. */
typedef size_t (*QviGrpcPlacement)(void *ctx, const uint8_t *head, size_t n, size_t total);
void qvi_grpc_call_set_placement(QviGrpcCall *c, QviGrpcPlacement place, void *ctx);

/* Sends one message whose bytes are the concatenation of iov[0..n) (the
 * 5-byte prefix is added). Returns when the bytes are written to the
 * connection (they are not copied first), or on an error: the call was
 * cancelled, reset, timed out or the connection failed. */
QvStatus qvi_grpc_call_send(QviGrpcCall *c, const struct iovec *iov, int n, QvError *error);
/* A message sent in pieces: send_begin sends the prefix of a message of
 * `total` bytes and its first bytes iov[0..n) (may be none), send_more its
 * next bytes, until `total` are sent (more is QV_EARG; so is any other
 * send or close_send before the message is complete). Each returns when
 * its bytes are written, as qvi_grpc_call_send does, so a caller can hand
 * over memory that is valid only during the call. */
QvStatus qvi_grpc_call_send_begin(QviGrpcCall *c, size_t total, const struct iovec *iov, int n,
                                  QvError *error);
QvStatus qvi_grpc_call_send_more(QviGrpcCall *c, const struct iovec *iov, int n, QvError *error);
/* Client: no more messages (END_STREAM on the request). */
QvStatus qvi_grpc_call_close_send(QviGrpcCall *c, QvError *error);
/* The next message: QV_OK, QV_EOS when the peer's messages ended (client:
 * with status OK), or an error. Client: a non-OK status is returned as
 * qvi_grpc_status_to_qv(code) with "CODE: message" (the server's message,
 * percent-decoded). Waits until the call's deadline at most. */
QvStatus qvi_grpc_call_recv(QviGrpcCall *c, QviGrpcMessage *out, QvError *error);
/* Resets the stream (RST_STREAM CANCEL); later sends and receives fail. */
void qvi_grpc_call_cancel(QviGrpcCall *c);
/* The status the call ended with (client: the server's, or the local one
 * for a deadline, cancellation or a failed connection; -1 while running). */
int qvi_grpc_call_status(const QviGrpcCall *c);
/* Absolute deadline (qvi_grpc_now_ms) or 0 for none. */
int64_t qvi_grpc_call_deadline(const QviGrpcCall *c);
/* Client: cancels a call still running and frees it. Server: see
 * qvi_grpc_call_finish. NULL is a no-op. */
void qvi_grpc_call_free(QviGrpcCall *c);

/* Server side: the call's :path and request headers (valid for the call's
 * life). Client side: header returns the response's headers and trailers
 * received so far (not grpc-*), to be read after a recv returned. */
const char *qvi_grpc_call_path(const QviGrpcCall *c);
const char *qvi_grpc_call_header(const QviGrpcCall *c, const char *name);
/* Server: one extra response header (name lower case), before the first
 * send or the finish (QV_EARG after). */
QvStatus qvi_grpc_call_set_response_header(QviGrpcCall *c, const char *name, const char *value,
                                           QvError *error);
/* True once the client has cancelled, reset, timed out or gone away. */
bool qvi_grpc_call_cancelled(const QviGrpcCall *c);
/* Server: ends the call with a status (and message, percent-encoded here),
 * waiting until the trailers are written; frees the call. Every handler
 * ends with exactly one finish. */
void qvi_grpc_call_finish(QviGrpcCall *c, int code, const char *message);

/* ---- client */

typedef struct QviGrpcChannel QviGrpcChannel;

/* Connects (TCP, TLS with ALPN h2 when tls->enabled) and starts the HTTP/2
 * session; `deadline` bounds the connect and handshakes (0: 30 s). */
QvStatus qvi_grpc_channel_new(QviGrpcChannel **out, const char *host, int port,
                              const QviGrpcTls *tls, const QviGrpcLimits *limits,
                              int64_t deadline, QvError *error);
/* Closes the connection (calls still open fail) and frees it. */
void qvi_grpc_channel_free(QviGrpcChannel *ch);

/* Starts a call: :path `path`, the extra headers (names lower case), a
 * deadline (absolute, 0: none; sent as grpc-timeout). */
QvStatus qvi_grpc_call_start(QviGrpcCall **out, QviGrpcChannel *ch, const char *path,
                             const QviGrpcHeader *headers, size_t n_headers, int64_t deadline,
                             QvError *error);

/* ---- server */

typedef struct QviGrpcServer QviGrpcServer;

/* Runs for each call on a thread of its own; ends with qvi_grpc_call_finish. */
typedef void (*QviGrpcHandler)(void *ctx, QviGrpcCall *call);

/* Listens on host:port (port 0: the system picks one). */
QvStatus qvi_grpc_server_new(QviGrpcServer **out, const char *host, int port,
                             const QviGrpcTls *tls, const QviGrpcLimits *limits,
                             QviGrpcHandler handler, void *ctx, QvError *error);
int qvi_grpc_server_port(const QviGrpcServer *s);
/* Accepts and serves until qvi_grpc_server_stop; then cancels every call,
 * waits for the handlers and closes every connection before returning. */
QvStatus qvi_grpc_server_run(QviGrpcServer *s, QvError *error);
/* Thread-safe and async-signal-safe (a write to a pipe). */
void qvi_grpc_server_stop(QviGrpcServer *s);
/* After run returned (or instead of it). */
void qvi_grpc_server_free(QviGrpcServer *s);

/* ---- for the fuzz target: a server connection over bytes in memory */

/* Feeds data (as a client would send it, starting with the connection
 * preface) to a fresh server-side session whose handler receives every
 * message until the end and finishes; output is discarded. Returns when
 * everything is processed and every handler has finished. */
void qvi_grpc_fuzz_server(const uint8_t *data, size_t size);

#endif
