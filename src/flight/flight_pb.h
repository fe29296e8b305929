/* The protobuf messages of Arrow Flight (quiver/flight.h) on the generic
 * wire codec (src/protobuf/pb.h): an encoder and a strict decoder for
 * each. Decoders fill a zeroed struct and leave it zeroed on failure. */
#ifndef QUIVER_FLIGHT_FLIGHT_PB_H
#define QUIVER_FLIGHT_FLIGHT_PB_H

#include <stddef.h>
#include <stdint.h>

#include "protobuf/pb.h"
#include "quiver/flight.h"

/* Field numbers of FlightData (the body is last on the wire). */
enum {
  QVI_FD_DESCRIPTOR = 1,
  QVI_FD_HEADER = 2,
  QVI_FD_APP_METADATA = 3,
  QVI_FD_BODY = 1000
};

/* Writes a message's fields into w (the message itself, not a field
 * holding it). */
void qvi_flight_put_descriptor(QviPbWriter *w, const QvFlightDescriptor *d);
void qvi_flight_put_endpoint(QviPbWriter *w, const QvFlightEndpoint *e);
void qvi_flight_put_info(QviPbWriter *w, const QvFlightInfo *info);
void qvi_flight_put_poll_info(QviPbWriter *w, const QvFlightPollInfo *p);
void qvi_flight_put_action_type(QviPbWriter *w, const QvFlightActionType *t);
void qvi_flight_put_action(QviPbWriter *w, const QvFlightAction *a);
void qvi_flight_put_handshake(QviPbWriter *w, const QvFlightHandshake *h);
/* Ticket, Location, SchemaResult, PutResult, Result and Criteria are one
 * field numbered 1 (bytes, or a string for Location.uri). */
void qvi_flight_put_single(QviPbWriter *w, const void *data, size_t size);

QvStatus qvi_flight_decode_descriptor(const uint8_t *p, size_t n, QvFlightDescriptor *out,
                                      QvError *error);
QvStatus qvi_flight_decode_endpoint(const uint8_t *p, size_t n, QvFlightEndpoint *out,
                                    QvError *error);
QvStatus qvi_flight_decode_info(const uint8_t *p, size_t n, QvFlightInfo *out, QvError *error);
QvStatus qvi_flight_decode_poll_info(const uint8_t *p, size_t n, QvFlightPollInfo *out,
                                     QvError *error);
QvStatus qvi_flight_decode_action_type(const uint8_t *p, size_t n, QvFlightActionType *out,
                                       QvError *error);
QvStatus qvi_flight_decode_action(const uint8_t *p, size_t n, QvFlightAction *out,
                                  QvError *error);
QvStatus qvi_flight_decode_handshake(const uint8_t *p, size_t n, QvFlightHandshake *out,
                                     QvError *error);
/* One of the single-field messages: `what` names it in errors ("Ticket");
 * utf8: the field is a string (Location). */
QvStatus qvi_flight_decode_single(const uint8_t *p, size_t n, const char *what, bool utf8,
                                  QvFlightBytes *out, QvError *error);
/* Empty: any unknown fields are checked and skipped. */
QvStatus qvi_flight_decode_empty(const uint8_t *p, size_t n, QvError *error);

#endif
