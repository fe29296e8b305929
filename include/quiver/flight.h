/** @file
 * quiver: Arrow Flight (format/Flight.proto, docs/source/format/Flight.rst).
 *
 * The messages of service arrow.flight.protocol.FlightService, decoded
 * from and encoded to protobuf by quiver's own strict codec. Decoded
 * messages own their memory (copies of the strings and bytes, each
 * followed by a NUL byte so that text can be used as a C string); free
 * them with their qv_flight_*_reset. FlightData, the message that carries
 * the Arrow data, is not here: quiver turns it into IPC messages itself,
 * the body taken in place without a copy.
 *
 * Decoding is strict: a field with the wrong wire type, a string that is
 * not UTF-8, an enum or int32 out of range, and the protobuf codec's own
 * refusals (lying lengths, overlong varints, groups) are QV_EINVAL or
 * QV_ETRUNCATED naming the message and field. Unknown fields are skipped,
 * as protobuf requires; a non-repeated field given twice keeps the last
 * value. */
#ifndef QUIVER_FLIGHT_H
#define QUIVER_FLIGHT_H

#include "quiver/common.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "quiver/c_data.h"
#include "quiver/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Bytes owned by a decoded message: data[size] is a NUL byte (data is
 * never NULL in a decoded message, also when size is 0). For encoding,
 * data may be NULL when size is 0. */
typedef struct QvFlightBytes {
  uint8_t *data; /**< malloc'd when decoded or handed to the server (qv_flight_bytes_reset frees it) */
  size_t size;   /**< bytes, without the NUL a decoded message adds */
} QvFlightBytes;

/** FlightDescriptor.DescriptorType. */
typedef enum QvFlightDescriptorType {
  QV_FLIGHT_DESCRIPTOR_UNKNOWN = 0, /**< not set (protobuf's default) */
  QV_FLIGHT_DESCRIPTOR_PATH = 1, /**< names a dataset by path segments (`path`) */
  QV_FLIGHT_DESCRIPTOR_CMD = 2 /**< an opaque command for the service (`cmd`) */
} QvFlightDescriptorType;

/** FlightDescriptor: a path (segments) or an opaque command. */
typedef struct QvFlightDescriptor {
  QvFlightDescriptorType type; /**< which of `cmd` and `path` applies */
  QvFlightBytes cmd;           /**< CMD: the command's bytes */
  char **path; /**< n_path NUL-terminated UTF-8 segments */
  size_t n_path;               /**< entries of `path` */
} QvFlightDescriptor;

/** google.protobuf.Timestamp, with whether it was present. */
typedef struct QvFlightTimestamp {
  bool present;    /**< the message carried the field; else the others are 0 */
  int64_t seconds; /**< seconds since 1970-01-01T00:00:00Z */
  int32_t nanos;   /**< nanoseconds after `seconds`, 0..999,999,999 */
} QvFlightTimestamp;

/** FlightEndpoint: a ticket and where it can be redeemed (no locations:
 * the service that was asked). */
typedef struct QvFlightEndpoint {
  QvFlightBytes ticket; /**< Ticket.ticket */
  char **locations;     /**< Location.uri values */
  size_t n_locations;   /**< entries of `locations` */
  QvFlightTimestamp expiration_time; /**< when the ticket expires, if the service says (`present`) */
  QvFlightBytes app_metadata;        /**< opaque application bytes */
} QvFlightEndpoint;

/** FlightInfo. `schema` holds an encapsulated IPC Schema message (with or
 * without the continuation marker); total_records and total_bytes are -1
 * when unknown. */
typedef struct QvFlightInfo {
  QvFlightBytes schema;          /**< the encapsulated IPC Schema message (see above) */
  bool has_descriptor;           /**< the descriptor field is present */
  QvFlightDescriptor descriptor; /**< the flight this describes */
  QvFlightEndpoint *endpoints;   /**< where the data can be fetched, in its order */
  size_t n_endpoints;            /**< entries of `endpoints` */
  int64_t total_records;         /**< rows in all endpoints; -1: unknown */
  int64_t total_bytes;           /**< bytes of all endpoints' data; -1: unknown */
  bool ordered;                  /**< the endpoints' data must be read in order */
  QvFlightBytes app_metadata;    /**< opaque application bytes */
} QvFlightInfo;

/** PollInfo: the FlightInfo so far, the descriptor to poll next (absent:
 * the query is complete), progress 0..1 when known. */
typedef struct QvFlightPollInfo {
  bool has_info;                 /**< `info` is present */
  QvFlightInfo info;             /**< the FlightInfo of the query so far */
  bool has_descriptor;           /**< the query is not complete: poll `descriptor` again */
  QvFlightDescriptor descriptor; /**< what to poll next */
  bool has_progress;             /**< `progress` is present */
  double progress;               /**< completed fraction, 0..1 */
  QvFlightTimestamp expiration_time; /**< after it the server may refuse `descriptor`, if the service says */
} QvFlightPollInfo;

/** ActionType: an action's name and what it does. */
typedef struct QvFlightActionType {
  char *type;        /**< the action's name, NUL-terminated */
  char *description; /**< what it does, NUL-terminated */
} QvFlightActionType;

/** Action: a type name and an opaque body. */
typedef struct QvFlightAction {
  char *type;         /**< the action's name, NUL-terminated */
  QvFlightBytes body; /**< the action's argument, opaque */
} QvFlightAction;

/** HandshakeRequest and HandshakeResponse (same fields). */
typedef struct QvFlightHandshake {
  uint64_t protocol_version; /**< the application's protocol version (opaque to quiver) */
  QvFlightBytes payload;     /**< opaque credentials or answer */
} QvFlightHandshake;

/** Frees what a decoded message owns and zeroes it (NULL is a no-op). */
QV_API void qv_flight_bytes_reset(QvFlightBytes *b);
/** As qv_flight_bytes_reset, for a FlightDescriptor. */
QV_API void qv_flight_descriptor_reset(QvFlightDescriptor *d);
/** As qv_flight_bytes_reset, for a FlightEndpoint. */
QV_API void qv_flight_endpoint_reset(QvFlightEndpoint *e);
/** As qv_flight_bytes_reset, for a FlightInfo. */
QV_API void qv_flight_info_reset(QvFlightInfo *info);
/** As qv_flight_bytes_reset, for a PollInfo. */
QV_API void qv_flight_poll_info_reset(QvFlightPollInfo *p);
/** As qv_flight_bytes_reset, for an ActionType. */
QV_API void qv_flight_action_type_reset(QvFlightActionType *t);
/** As qv_flight_bytes_reset, for an Action. */
QV_API void qv_flight_action_reset(QvFlightAction *a);
/** As qv_flight_bytes_reset, for a HandshakeRequest/Response. */
QV_API void qv_flight_handshake_reset(QvFlightHandshake *h);

/** A path descriptor's segments joined with '/' into a new string (free
 * it with qv_free); NULL when out of memory or not a PATH descriptor. */
QV_API char *qv_flight_descriptor_path_string(const QvFlightDescriptor *d);

/* ---- client */

/** gRPC's default receive limit is 4 MiB, far below a record batch; quiver
 * takes messages (one FlightData each) up to this size unless told
 * otherwise (at most 4 GiB - 1, gRPC's length prefix). */
#define QV_FLIGHT_DEFAULT_MAX_RECEIVE ((size_t)256 << 20)

/** A call header: name (lower case) and value. */
typedef struct QvFlightHeader {
  const char *name;  /**< NUL-terminated, lower case ("x-request-id") */
  const char *value; /**< NUL-terminated */
} QvFlightHeader;

/** Client options: NULL or a zeroed struct means every default. */
typedef struct QvFlightClientOptions {
  size_t struct_size;          /**< 0 or sizeof(QvFlightClientOptions) */
  const char *tls_ca_file;     /**< grpc+tls: CAs to trust (PEM); NULL: the system's */
  const char *tls_server_name; /**< grpc+tls: name the certificate must carry (and SNI);
                                  NULL: the location's host */
  const char *token;           /**< sent as "authorization: Bearer TOKEN"; NULL: none */
  const QvFlightHeader *headers; /**< sent with every call */
  size_t n_headers;            /**< entries of `headers` */
  int64_t timeout_ms;          /**< deadline of each call; 0: none */
  size_t max_receive_size;     /**< 0: QV_FLIGHT_DEFAULT_MAX_RECEIVE */
  int64_t connect_timeout_ms;  /**< 0: 30 s */
} QvFlightClientOptions;

/** A connection to one Flight service. Its calls may run on several threads
 * at once (they share one HTTP/2 connection). */
typedef struct QvFlightClient QvFlightClient;

/** Connects to "grpc://host:port", "grpc+tcp://host:port" or
 * "grpc+tls://host:port" (an IPv6 host in brackets). The strings of
 * `options` are copied. Failures of the connection are QV_EIO. */
QV_API QvStatus qv_flight_client_new(QvFlightClient **out, const char *location,
                                     const QvFlightClientOptions *options, QvError *error);
/** Closes the connection (NULL is a no-op). Streams handed out must be
 * released first. */
QV_API void qv_flight_client_free(QvFlightClient *client);
/** Replaces the bearer token sent with later calls (NULL: none). */
QV_API QvStatus qv_flight_client_set_token(QvFlightClient *client, const char *token,
                                           QvError *error);

/** Handshake with basic credentials: the call carries "authorization:
 * Basic base64(user:password)" and a HandshakeRequest whose payload is the
 * BasicAuth message; the token the server answers with (its
 * "authorization: Bearer" response header, else the HandshakeResponse
 * payload) becomes the client's token. A refusal is the server's status
 * (UNAUTHENTICATED: QV_EIO with "UNAUTHENTICATED: ..."). */
QV_API QvStatus qv_flight_handshake_basic(QvFlightClient *client, const char *user,
                                          const char *password, QvError *error);

/* Errors of every call: the server's gRPC status and message as
 * "CODE: message" with the QvStatus qv_flight_status_of(code) gives;
 * malformed responses are QV_EINVAL, a deadline QV_EIO
 * ("DEADLINE_EXCEEDED: ..."). */

/** The QvStatus a gRPC status code means: OK QV_OK; INVALID_ARGUMENT,
 * NOT_FOUND, ALREADY_EXISTS, FAILED_PRECONDITION, OUT_OF_RANGE, DATA_LOSS
 * QV_EINVAL; RESOURCE_EXHAUSTED QV_ELIMIT; UNIMPLEMENTED QV_ENOTSUP; the
 * others (UNAUTHENTICATED, PERMISSION_DENIED, UNAVAILABLE, ...) QV_EIO. */
QV_API QvStatus qv_flight_status_of(int grpc_code);
/** The gRPC status code the client's last failed call ended with (0 when
 * it succeeded, -1 when it failed before or without a status). */
QV_API int qv_flight_client_last_code(const QvFlightClient *client);

/** ListFlights: every FlightInfo the service lists for `criteria` (NULL/0:
 * all) into *out (*n_out of them; free with qv_flight_info_list_free). */
QV_API QvStatus qv_flight_list_flights(QvFlightClient *client, const void *criteria,
                                       size_t criteria_size, QvFlightInfo **out, size_t *n_out,
                                       QvError *error);
/** Frees a list of n FlightInfo (NULL is a no-op). */
QV_API void qv_flight_info_list_free(QvFlightInfo *infos, size_t n);
/** GetFlightInfo. */
QV_API QvStatus qv_flight_get_flight_info(QvFlightClient *client,
                                          const QvFlightDescriptor *descriptor, QvFlightInfo *out,
                                          QvError *error);
/** PollFlightInfo. */
QV_API QvStatus qv_flight_poll_flight_info(QvFlightClient *client,
                                           const QvFlightDescriptor *descriptor,
                                           QvFlightPollInfo *out, QvError *error);
/** GetSchema, converted to an ArrowSchema (a struct whose children are the
 * columns). */
QV_API QvStatus qv_flight_get_schema(QvFlightClient *client, const QvFlightDescriptor *descriptor,
                                     struct ArrowSchema *out, QvError *error);
/** A FlightInfo's or SchemaResult's schema bytes (an encapsulated IPC
 * Schema message, continuation marker optional) as an ArrowSchema. */
QV_API QvStatus qv_flight_schema_decode(const void *data, size_t size, struct ArrowSchema *out,
                                        QvError *error);

/** DoGet: the ticket's stream as an ArrowArrayStream (quiver's stream
 * reader: batches point into the received messages, no copy). The stream
 * holds the call; release it to end the call (a stream not read to its end
 * cancels it). It must be released before the client is freed. */
QV_API QvStatus qv_flight_do_get(QvFlightClient *client, const void *ticket, size_t ticket_size,
                                 struct ArrowArrayStream *out, QvError *error);

/** Every endpoint of `info` as one stream, in endpoint order: endpoints
 * without locations (or with arrow-flight-reuse-connection://?) are
 * fetched from this client's service, others from their first location
 * (a connection with this client's options). With parallel > 1 up to that
 * many endpoints are fetched at once, each read whole into memory ahead
 * of the caller (memory: those endpoints' batches); with 0 or 1 one
 * endpoint after the other, streamed. Every endpoint's schema must equal
 * the first one's. */
QV_API QvStatus qv_flight_read_endpoints(QvFlightClient *client, const QvFlightInfo *info,
                                         int parallel, struct ArrowArrayStream *out,
                                         QvError *error);

/** Called with each PutResult's app_metadata (DoPut) or each received
 * FlightData's app_metadata (DoExchange); NULL: ignored. */
typedef void (*QvFlightMetadataFn)(void *ctx, const uint8_t *data, size_t size);

/** DoPut: sends `descriptor` and every batch of `stream` (read, not
 * released), then waits for the server's PutResults (passed to
 * on_result) and status. Bodies go from the batches to the socket. */
QV_API QvStatus qv_flight_do_put(QvFlightClient *client, const QvFlightDescriptor *descriptor,
                                 struct ArrowArrayStream *stream, QvFlightMetadataFn on_result,
                                 void *ctx, QvError *error);

/** DoExchange: sends `descriptor` and the batches of `input` (may be NULL:
 * the descriptor alone) on a thread of its own while the server's
 * FlightData are read into *out (a stream as DoGet's; a server that sends
 * no Schema makes this call fail). on_metadata sees each received
 * FlightData's app_metadata. `input` must stay valid until *out is
 * released. */
QV_API QvStatus qv_flight_do_exchange(QvFlightClient *client, const QvFlightDescriptor *descriptor,
                                      struct ArrowArrayStream *input, struct ArrowArrayStream *out,
                                      QvFlightMetadataFn on_metadata, void *ctx, QvError *error);

/** DoAction: the Result bodies into *out (*n_out; free with
 * qv_flight_bytes_list_free). */
QV_API QvStatus qv_flight_do_action(QvFlightClient *client, const QvFlightAction *action,
                                    QvFlightBytes **out, size_t *n_out, QvError *error);
/** Frees a list of n QvFlightBytes (NULL is a no-op). */
QV_API void qv_flight_bytes_list_free(QvFlightBytes *list, size_t n);
/** ListActions into *out (*n_out; free with qv_flight_action_type_list_free). */
QV_API QvStatus qv_flight_list_actions(QvFlightClient *client, QvFlightActionType **out,
                                       size_t *n_out, QvError *error);
/** Frees a list of n QvFlightActionType (NULL is a no-op). */
QV_API void qv_flight_action_type_list_free(QvFlightActionType *list, size_t n);

/* ---- server */

/** gRPC status codes a server handler can end a call with. */
typedef enum QvFlightCode {
  QV_FLIGHT_OK = 0, /**< success */
  QV_FLIGHT_CANCELLED = 1, /**< the call was cancelled (by the caller) */
  QV_FLIGHT_UNKNOWN = 2, /**< an error of no other code */
  QV_FLIGHT_INVALID_ARGUMENT = 3, /**< the request is invalid whatever the server's state */
  QV_FLIGHT_DEADLINE_EXCEEDED = 4, /**< the deadline passed before the call completed */
  QV_FLIGHT_NOT_FOUND = 5, /**< the requested entity (a flight, a path) does not exist */
  QV_FLIGHT_ALREADY_EXISTS = 6, /**< the entity to create exists already */
  QV_FLIGHT_PERMISSION_DENIED = 7, /**< the caller, authenticated, may not do this */
  QV_FLIGHT_RESOURCE_EXHAUSTED = 8, /**< a quota or limit (memory, message size) was exceeded */
  QV_FLIGHT_FAILED_PRECONDITION = 9, /**< the server is not in the state the call needs */
  QV_FLIGHT_ABORTED = 10, /**< aborted by a concurrency conflict */
  QV_FLIGHT_OUT_OF_RANGE = 11, /**< past the valid range (a position after the end) */
  QV_FLIGHT_UNIMPLEMENTED = 12, /**< the method is not served (a NULL handler) */
  QV_FLIGHT_INTERNAL = 13, /**< an invariant of the server broke */
  QV_FLIGHT_UNAVAILABLE = 14, /**< the service is unavailable for now; retrying may help */
  QV_FLIGHT_DATA_LOSS = 15, /**< unrecoverable data loss or corruption */
  QV_FLIGHT_UNAUTHENTICATED = 16 /**< no valid credentials (token) came with the call */
} QvFlightCode;

/** One call a handler serves. */
typedef struct QvFlightCall QvFlightCall;

/** The handlers of a server: each NULL one answers UNIMPLEMENTED. They run
 * on a thread per call, several at once. A handler returns QV_OK, or a
 * status with its message in `error`, which the client receives with the
 * gRPC code set by qv_flight_call_set_code, else the status's code
 * (QV_EINVAL INVALID_ARGUMENT, QV_ENOTSUP UNIMPLEMENTED, QV_ELIMIT
 * RESOURCE_EXHAUSTED, QV_EARG INVALID_ARGUMENT, others INTERNAL). */
typedef struct QvFlightHandlers {
  void *ctx; /**< passed to every handler as its first argument */
  /** called with ctx when the server is freed, or when qv_flight_server_new
   * fails (NULL: none) */
  void (*release)(void *ctx);
  /** ListFlights: qv_flight_call_send_info for each */
  QvStatus (*list_flights)(void *ctx, QvFlightCall *call, const uint8_t *criteria, size_t size,
                           QvError *error);
  /** GetFlightInfo: fills the zeroed *out with malloc'd members; the server
   * sends it and frees it with qv_flight_info_reset */
  QvStatus (*get_flight_info)(void *ctx, QvFlightCall *call, const QvFlightDescriptor *d,
                              QvFlightInfo *out, QvError *error);
  /** PollFlightInfo: as get_flight_info (qv_flight_poll_info_reset frees *out) */
  QvStatus (*poll_flight_info)(void *ctx, QvFlightCall *call, const QvFlightDescriptor *d,
                               QvFlightPollInfo *out, QvError *error);
  /** GetSchema: initializes *out; the server encodes it, then releases it */
  QvStatus (*get_schema)(void *ctx, QvFlightCall *call, const QvFlightDescriptor *d,
                         struct ArrowSchema *out, QvError *error);
  /** DoGet: *out is written to the client (then released by the server) */
  QvStatus (*do_get)(void *ctx, QvFlightCall *call, const uint8_t *ticket, size_t size,
                     struct ArrowArrayStream *out, QvError *error);
  /** DoPut: `in` holds the client's batches (released by the server);
   * qv_flight_call_send_put_result answers */
  QvStatus (*do_put)(void *ctx, QvFlightCall *call, const QvFlightDescriptor *d,
                     struct ArrowArrayStream *in, QvError *error);
  /** DoExchange: `in` (NULL when the client sent no Schema) is the
   * client's stream; qv_flight_call_write_stream answers */
  QvStatus (*do_exchange)(void *ctx, QvFlightCall *call, const QvFlightDescriptor *d,
                          struct ArrowArrayStream *in, QvError *error);
  /** DoAction: qv_flight_call_send_result for each Result */
  QvStatus (*do_action)(void *ctx, QvFlightCall *call, const QvFlightAction *action,
                        QvError *error);
  /** ListActions: qv_flight_call_send_action_type for each */
  QvStatus (*list_actions)(void *ctx, QvFlightCall *call, QvError *error);
} QvFlightHandlers;

/** Server options: NULL or a zeroed struct means every default. */
typedef struct QvFlightServerOptions {
  size_t struct_size;        /**< 0 or sizeof(QvFlightServerOptions) */
  const char *tls_cert_file; /**< both set: TLS (PEM certificate chain and key) */
  const char *tls_key_file;  /**< the private key (PEM) of tls_cert_file */
  /** Every call but Handshake needs "authorization: Bearer TOKEN"
   * (UNAUTHENTICATED otherwise); NULL: no authentication. */
  const char *token;
  /** Handshake with these basic credentials answers the token (both NULL:
   * the token is the credential, as the BasicAuth password or the bearer
   * token; no token: every Handshake succeeds). */
  const char *user;
  const char *password; /**< the basic credentials' password (see `user`) */
  size_t max_receive_size; /**< 0: QV_FLIGHT_DEFAULT_MAX_RECEIVE */
} QvFlightServerOptions;

/** An opaque running server (qv_flight_server_new, qv_flight_server_free). */
typedef struct QvFlightServer QvFlightServer;

/** Listens on host:port (port 0: a free one; host NULL: 127.0.0.1). The
 * handlers struct and the option strings are copied. */
QV_API QvStatus qv_flight_server_new(QvFlightServer **out, const char *host, int port,
                                     const QvFlightHandlers *handlers,
                                     const QvFlightServerOptions *options, QvError *error);
/** The port it listens on. */
QV_API int qv_flight_server_port(const QvFlightServer *server);
/** Serves until qv_flight_server_stop, then ends every call and returns. */
QV_API QvStatus qv_flight_server_run(QvFlightServer *server, QvError *error);
/** Thread-safe and async-signal-safe (for a SIGINT handler). */
QV_API void qv_flight_server_stop(QvFlightServer *server);
/** After run returned (NULL is a no-op). */
QV_API void qv_flight_server_free(QvFlightServer *server);

/** Options of the directory server. */
typedef struct QvFlightDirOptions {
  size_t struct_size; /**< 0 or sizeof(QvFlightDirOptions) */
  bool allow_put;     /**< DoPut creates new files (else PERMISSION_DENIED) */
  bool allow_replace; /**< DoPut may replace an existing file (else ALREADY_EXISTS) */
} QvFlightDirOptions;

/** A server over the Arrow files below `dir` (quiver flight serve):
 * ListFlights (every Arrow file or stream, hidden names skipped, 8 levels
 * deep), GetFlightInfo / PollFlightInfo (schema, rows from the messages'
 * metadata, the file's size; one endpoint whose ticket is the relative
 * path), GetSchema, DoGet (a file of Tensor messages as a one-column
 * table of tensor cells, a batch per tensor), DoPut (validated in full,
 * written as a hidden temporary file then linked, or renamed, into place;
 * a failed or cancelled upload leaves nothing; ".arrows" or ".stream"
 * names get the stream format, others the file format), ListActions and
 * DoAction "list-paths". A PATH descriptor's segments name the file;
 * empty, "." ".." and hidden segments are refused. */
QV_API QvStatus qv_flight_dir_server_new(QvFlightServer **out, const char *dir, const char *host,
                                         int port, const QvFlightServerOptions *server_options,
                                         const QvFlightDirOptions *dir_options, QvError *error);

/** The gRPC code the call ends with when its handler fails. */
QV_API void qv_flight_call_set_code(QvFlightCall *call, QvFlightCode code);
/** A request header (name lower case), NULL when absent. */
QV_API const char *qv_flight_call_header(const QvFlightCall *call, const char *name);
/** True once the client cancelled or went away. */
QV_API bool qv_flight_call_cancelled(const QvFlightCall *call);
/** ListFlights: one FlightInfo to the client. */
QV_API QvStatus qv_flight_call_send_info(QvFlightCall *call, const QvFlightInfo *info,
                                         QvError *error);
/** DoPut: one PutResult. */
QV_API QvStatus qv_flight_call_send_put_result(QvFlightCall *call, const void *app_metadata,
                                               size_t size, QvError *error);
/** DoAction: one Result. */
QV_API QvStatus qv_flight_call_send_result(QvFlightCall *call, const void *body, size_t size,
                                           QvError *error);
/** ListActions: one ActionType. */
QV_API QvStatus qv_flight_call_send_action_type(QvFlightCall *call, const QvFlightActionType *t,
                                                QvError *error);
/** DoExchange: every batch of `stream` (not released) as FlightData. */
QV_API QvStatus qv_flight_call_write_stream(QvFlightCall *call, struct ArrowArrayStream *stream,
                                            QvError *error);

#ifdef __cplusplus
}
#endif

#endif
