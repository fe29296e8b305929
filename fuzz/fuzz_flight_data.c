/* libFuzzer target: FlightData -> IPC (src/flight/flight_data.h) and the
 * Flight messages' decoders (src/flight/flight_pb.h).
 *
 * The input is a sequence of received gRPC messages, each a 4-byte little
 * endian length and that many bytes (a last length running past the end
 * takes what is left). Each is placed in a 64-byte-aligned buffer where
 * qvi_flight_data_placement says, as src/grpc does, and the sequence is
 * read as a Flight record batch stream with full validation; every byte of
 * every accepted batch is touched (ASan checks the promised bounds) and
 * its first rows formatted. The first message is also decoded as each of
 * the other Flight messages; what a decoder accepts is encoded again and
 * must decode to an encoding of the same bytes. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flight/flight_data.h"
#include "flight/flight_pb.h"
#include "quiver/buffer.h"

#define FUZZ_NAME "fuzz_flight_data"
#include "rb_fuzz_util.h"

#define MAX_MESSAGES 64

typedef struct In {
  const uint8_t *p, *end;
  int n;
} In;

static void free_buf(void *p) { qv_free(p); }

static QvStatus recv_one(void *ctx, const uint8_t **data, size_t *size, QvOwner **owner,
                         QvError *error) {
  In *in = ctx;
  if (in->end - in->p < 4 || in->n >= MAX_MESSAGES) return QV_EOS;
  size_t len = (size_t)in->p[0] | (size_t)in->p[1] << 8 | (size_t)in->p[2] << 16 |
               (size_t)in->p[3] << 24;
  in->p += 4;
  if (len > (size_t)(in->end - in->p)) len = (size_t)(in->end - in->p);
  size_t head = len < 4096 ? len : 4096;
  size_t shift = qvi_flight_data_placement(NULL, in->p, head, len);
  CHECK(shift < 64);
  uint8_t *buf = qv_aligned_alloc(len + shift + 1);
  if (buf == NULL) return qv_error_set(error, QV_ENOMEM, "out of memory");
  if (len) memcpy(buf + shift, in->p, len);
  in->p += len;
  in->n++;
  *data = buf + shift;
  *size = len;
  *owner = qv_owner_new(free_buf, buf);
  if (*owner == NULL) {
    qv_free(buf);
    return qv_error_set(error, QV_ENOMEM, "out of memory");
  }
  return QV_OK;
}

#define ROUND_TRIP(type, decode, put, reset)                         \
  do {                                                               \
    type a, b;                                                       \
    if (decode(data, size, &a, NULL) == QV_OK) {                     \
      QviPbWriter w1, w2;                                            \
      qvi_pb_writer_init(&w1);                                       \
      qvi_pb_writer_init(&w2);                                       \
      put(&w1, &a);                                                  \
      CHECK(decode(w1.data, w1.size, &b, NULL) == QV_OK);            \
      put(&w2, &b);                                                  \
      CHECK(w1.size == w2.size && (w1.size == 0 || memcmp(w1.data, w2.data, w1.size) == 0)); \
      reset(&b);                                                     \
      reset(&a);                                                     \
      qvi_pb_writer_reset(&w1);                                      \
      qvi_pb_writer_reset(&w2);                                      \
    }                                                                \
  } while (0)

static void messages(const uint8_t *data, size_t size) {
  ROUND_TRIP(QvFlightDescriptor, qvi_flight_decode_descriptor, qvi_flight_put_descriptor,
             qv_flight_descriptor_reset);
  ROUND_TRIP(QvFlightEndpoint, qvi_flight_decode_endpoint, qvi_flight_put_endpoint,
             qv_flight_endpoint_reset);
  ROUND_TRIP(QvFlightInfo, qvi_flight_decode_info, qvi_flight_put_info, qv_flight_info_reset);
  ROUND_TRIP(QvFlightPollInfo, qvi_flight_decode_poll_info, qvi_flight_put_poll_info,
             qv_flight_poll_info_reset);
  ROUND_TRIP(QvFlightActionType, qvi_flight_decode_action_type, qvi_flight_put_action_type,
             qv_flight_action_type_reset);
  ROUND_TRIP(QvFlightAction, qvi_flight_decode_action, qvi_flight_put_action,
             qv_flight_action_reset);
  ROUND_TRIP(QvFlightHandshake, qvi_flight_decode_handshake, qvi_flight_put_handshake,
             qv_flight_handshake_reset);
  QvFlightBytes b;
  if (qvi_flight_decode_single(data, size, "Location", true, &b, NULL) == QV_OK) {
    CHECK(b.data[b.size] == 0 && strlen((char *)b.data) == b.size);
    qv_flight_bytes_reset(&b);
  }
  (void)qvi_flight_decode_empty(data, size, NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size >= 4) {
    size_t len = (size_t)data[0] | (size_t)data[1] << 8 | (size_t)data[2] << 16 |
                 (size_t)data[3] << 24;
    if (len > size - 4) len = size - 4;
    messages(data + 4, len);
  }
  In in = {data, data + size, 0};
  QviFlightReadHooks hooks = {.recv = recv_one, .ctx = &in};
  QvRbReadOptions o;
  memset(&o, 0, sizeof o);
  o.validate = QV_VALIDATE_FULL;
  o.max_decompressed_size = 16 << 20;
  struct ArrowArrayStream s;
  QvError e;
  if (qvi_flight_stream_reader_new(&s, &hooks, &o, &e) != QV_OK) return 0;
  struct ArrowSchema schema;
  CHECK(qv_rb_stream_get_schema(&s, &schema, &e) == QV_OK);
  QvArrayView v;
  CHECK(qv_array_view_init(&v, &schema, &e) == QV_OK);
  for (int n = 0; n < MAX_BATCHES; n++) {
    struct ArrowArray batch;
    if (qv_rb_stream_get_next(&s, &batch, &e) != QV_OK) break;
    QvStatus st = qv_array_view_set_array(&v, &batch, QV_VALIDATE_FULL, &e);
    if (st) fprintf(stderr, "fuzz_flight_data: accepted batch is invalid: %s\n", e.message);
    CHECK(st == QV_OK);
    rb_fuzz_touch(&v);
    int64_t rows = v.length < MAX_ROWS ? v.length : MAX_ROWS;
    rb_fuzz_free_cells(rb_fuzz_cells(&v, rows), rows * v.n_children);
    batch.release(&batch);
  }
  qv_array_view_reset(&v);
  schema.release(&schema);
  s.release(&s);
  return 0;
}
