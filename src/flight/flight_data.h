/* FlightData <-> Arrow IPC messages.
 *
 * In: a FlightData (protobuf) is decoded into views of the received gRPC
 * message; its data_header is the IPC Message FlatBuffer (no continuation
 * marker or length prefix, padded or not) and data_body the body, which
 * the IPC reader uses in place: the received message's buffer becomes the
 * body's owner, and qvi_flight_data_placement puts the body on a 64-byte
 * boundary of that buffer as it is received (src/grpc's placement
 * callback), so record batch buffers are zero-copy views of it. A body
 * shorter than the Message's bodyLength is refused; bytes past bodyLength
 * (a sender's padding) are ignored.
 *
 * Out: the IPC stream a record batch writer produces (quiver/
 * recordbatch_ipc.h) is cut into one FlightData per message through a
 * callback sink; each message's protobuf fields up to its body go out
 * first, then the body's bytes as the writer hands them over, so large
 * buffers go from the batch to the transport without a copy. The stream's
 * end-of-stream marker is dropped (a Flight stream ends with the call). */
#ifndef QUIVER_FLIGHT_FLIGHT_DATA_H
#define QUIVER_FLIGHT_FLIGHT_DATA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "protobuf/pb.h"
#include "quiver/c_data.h"
#include "quiver/flight.h"
#include "quiver/io.h"
#include "quiver/ipc.h"
#include "quiver/recordbatch_ipc.h"

/* A decoded FlightData: views of the input. */
typedef struct QviFlightData {
  bool has_descriptor;
  const uint8_t *descriptor; /* the FlightDescriptor's bytes */
  size_t descriptor_size;
  const uint8_t *header;
  size_t header_size;
  const uint8_t *app_metadata;
  size_t app_metadata_size;
  const uint8_t *body;
  size_t body_size;
} QviFlightData;

QvStatus qvi_flight_data_decode(const uint8_t *p, size_t n, QviFlightData *out, QvError *error);

/* A QviGrpcPlacement for FlightData: the offset that puts data_body on a
 * 64-byte boundary (0 when the body's start is not within `head`). */
size_t qvi_flight_data_placement(void *ctx, const uint8_t *head, size_t n, size_t total);

/* The IPC message of a FlightData with a data_header: metadata and body
 * point into fd's memory, which `owner` keeps alive (retained for out).
 * `index` becomes out->offset (the FlightData's position in its stream,
 * for messages). Limits: QvIpcReaderOptions' (NULL: defaults). */
QvStatus qvi_flight_data_to_ipc(const QviFlightData *fd, QvOwner *owner, int64_t index,
                                const QvIpcReaderOptions *limits, QvIpcMessage *out,
                                QvError *error);

/* ---- reading a stream of FlightData */

/* The next received FlightData message: QV_OK with *data, *size and
 * *owner (one reference, the reader's), QV_EOS at the end of the stream,
 * or an error. */
typedef QvStatus (*QviFlightRecv)(void *ctx, const uint8_t **data, size_t *size, QvOwner **owner,
                                  QvError *error);

/* Called with each FlightData's app_metadata (views valid during the
 * call) and its descriptor when present; may be NULL. */
typedef void (*QviFlightMetadataFn)(void *ctx, const QviFlightData *fd);

typedef struct QviFlightReadHooks {
  QviFlightRecv recv;
  QviFlightMetadataFn on_data; /* NULL: none */
  void *ctx;
  void (*release)(void *ctx); /* when the stream is released (NULL: none) */
} QviFlightReadHooks;

/* A record batch stream reader (ArrowArrayStream) over the FlightData
 * that hooks->recv delivers: the first one with a data_header must carry
 * the Schema (read here); FlightData without a data_header (metadata
 * only) are passed to on_data and otherwise skipped. On failure the
 * hooks' release has been called. */
QvStatus qvi_flight_stream_reader_new(struct ArrowArrayStream *out, const QviFlightReadHooks *hooks,
                                      const QvRbReadOptions *options, QvError *error);

/* ---- writing */

typedef struct QviFlightEmit {
  void *ctx;
  /* a FlightData of `total` bytes starts: head[0..head_n) are its first
   * bytes (every field before the body's bytes) */
  QvStatus (*begin)(void *ctx, size_t total, const uint8_t *head, size_t head_n, QvError *error);
  /* the next n bytes of the body */
  QvStatus (*more)(void *ctx, const uint8_t *data, size_t n, QvError *error);
} QviFlightEmit;

typedef struct QviFlightWriter QviFlightWriter;

/* A sink (*sink, owned by the writer) that takes an IPC stream and emits
 * FlightData. `descriptor` (may be NULL) goes on the first FlightData. */
QvStatus qvi_flight_writer_new(QviFlightWriter **out, QvSink **sink, const QviFlightEmit *emit,
                               const QvFlightDescriptor *descriptor, QvError *error);
/* app_metadata for the next FlightData begun (copied; NULL/0 clears). */
QvStatus qvi_flight_writer_set_app_metadata(QviFlightWriter *w, const void *data, size_t size,
                                            QvError *error);
/* Emits a FlightData holding only app_metadata. */
QvStatus qvi_flight_writer_metadata_only(QviFlightWriter *w, const void *data, size_t size,
                                         QvError *error);
/* QV_OK when the stream ended on a message boundary. */
QvStatus qvi_flight_writer_check_end(const QviFlightWriter *w, QvError *error);
/* FlightData messages emitted so far. */
int64_t qvi_flight_writer_count(const QviFlightWriter *w);
void qvi_flight_writer_free(QviFlightWriter *w);

/* Writes every batch of `stream` (not released) as FlightData through
 * emit (the schema first, with `descriptor` when not NULL). */
QvStatus qvi_flight_write_stream(struct ArrowArrayStream *stream, const QviFlightEmit *emit,
                                 const QvFlightDescriptor *descriptor, QvError *error);

#endif
