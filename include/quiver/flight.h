/* quiver: Arrow Flight (format/Flight.proto, docs/source/format/Flight.rst).
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

#include "quiver/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Bytes owned by a decoded message: data[size] is a NUL byte (data is
 * never NULL in a decoded message, also when size is 0). For encoding,
 * data may be NULL when size is 0. */
typedef struct QvFlightBytes {
  uint8_t *data;
  size_t size;
} QvFlightBytes;

/* FlightDescriptor.DescriptorType. */
typedef enum QvFlightDescriptorType {
  QV_FLIGHT_DESCRIPTOR_UNKNOWN = 0,
  QV_FLIGHT_DESCRIPTOR_PATH = 1,
  QV_FLIGHT_DESCRIPTOR_CMD = 2
} QvFlightDescriptorType;

/* FlightDescriptor: a path (segments) or an opaque command. */
typedef struct QvFlightDescriptor {
  QvFlightDescriptorType type;
  QvFlightBytes cmd;
  char **path; /* n_path NUL-terminated UTF-8 segments */
  size_t n_path;
} QvFlightDescriptor;

/* google.protobuf.Timestamp, with whether it was present. */
typedef struct QvFlightTimestamp {
  bool present;
  int64_t seconds;
  int32_t nanos;
} QvFlightTimestamp;

/* FlightEndpoint: a ticket and where it can be redeemed (no locations:
 * the service that was asked). */
typedef struct QvFlightEndpoint {
  QvFlightBytes ticket; /* Ticket.ticket */
  char **locations;     /* Location.uri values */
  size_t n_locations;
  QvFlightTimestamp expiration_time;
  QvFlightBytes app_metadata;
} QvFlightEndpoint;

/* FlightInfo. `schema` holds an encapsulated IPC Schema message (with or
 * without the continuation marker); total_records and total_bytes are -1
 * when unknown. */
typedef struct QvFlightInfo {
  QvFlightBytes schema;
  bool has_descriptor;
  QvFlightDescriptor descriptor;
  QvFlightEndpoint *endpoints;
  size_t n_endpoints;
  int64_t total_records;
  int64_t total_bytes;
  bool ordered;
  QvFlightBytes app_metadata;
} QvFlightInfo;

/* PollInfo: the FlightInfo so far, the descriptor to poll next (absent:
 * the query is complete), progress 0..1 when known. */
typedef struct QvFlightPollInfo {
  bool has_info;
  QvFlightInfo info;
  bool has_descriptor;
  QvFlightDescriptor descriptor;
  bool has_progress;
  double progress;
  QvFlightTimestamp expiration_time;
} QvFlightPollInfo;

/* ActionType: an action's name and what it does. */
typedef struct QvFlightActionType {
  char *type;
  char *description;
} QvFlightActionType;

/* Action: a type name and an opaque body. */
typedef struct QvFlightAction {
  char *type;
  QvFlightBytes body;
} QvFlightAction;

/* HandshakeRequest and HandshakeResponse (same fields). */
typedef struct QvFlightHandshake {
  uint64_t protocol_version;
  QvFlightBytes payload;
} QvFlightHandshake;

/* Frees what a decoded message owns and zeroes it (NULL is a no-op). */
QV_API void qv_flight_bytes_reset(QvFlightBytes *b);
/* As qv_flight_bytes_reset, for a FlightDescriptor. */
QV_API void qv_flight_descriptor_reset(QvFlightDescriptor *d);
/* As qv_flight_bytes_reset, for a FlightEndpoint. */
QV_API void qv_flight_endpoint_reset(QvFlightEndpoint *e);
/* As qv_flight_bytes_reset, for a FlightInfo. */
QV_API void qv_flight_info_reset(QvFlightInfo *info);
/* As qv_flight_bytes_reset, for a PollInfo. */
QV_API void qv_flight_poll_info_reset(QvFlightPollInfo *p);
/* As qv_flight_bytes_reset, for an ActionType. */
QV_API void qv_flight_action_type_reset(QvFlightActionType *t);
/* As qv_flight_bytes_reset, for an Action. */
QV_API void qv_flight_action_reset(QvFlightAction *a);
/* As qv_flight_bytes_reset, for a HandshakeRequest/Response. */
QV_API void qv_flight_handshake_reset(QvFlightHandshake *h);

/* A path descriptor's segments joined with '/' into a new string (free
 * it with qv_free); NULL when out of memory or not a PATH descriptor. */
QV_API char *qv_flight_descriptor_path_string(const QvFlightDescriptor *d);

#ifdef __cplusplus
}
#endif

#endif
