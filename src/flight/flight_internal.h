/* What the Flight client and server share. */
#ifndef QUIVER_FLIGHT_FLIGHT_INTERNAL_H
#define QUIVER_FLIGHT_FLIGHT_INTERNAL_H

#include <stdbool.h>

#include "flight/flight_data.h"
#include "grpc/grpc.h"

/* "grpc://h:p", "grpc+tcp://h:p", "grpc+tls://h:p" ("[v6]:p"): *host
 * malloc'd. */
QvStatus qvi_flight_parse_location(const char *location, char **host, int *port, bool *tls,
                                   QvError *error);
/* FlightData out on a call: each message's head with send_begin, the body
 * with send_more. */
QviFlightEmit qvi_flight_emit_call(QviGrpcCall *call);

/* An ArrowSchema as an encapsulated IPC Schema message (continuation
 * marker, length, FlatBuffer, padding): *out qv_free'd by the caller. */
QvStatus qvi_flight_schema_encode(const struct ArrowSchema *schema, uint8_t **out, size_t *size,
                                  QvError *error);

#endif
