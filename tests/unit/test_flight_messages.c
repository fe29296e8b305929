/* Arrow Flight's protobuf messages (src/flight/flight_pb.h) and FlightData
 * <-> IPC (src/flight/flight_data.h): bytes written out by hand from
 * Flight.proto's field numbers, round trips of every message, the strict
 * decoder's refusals, the body placement, and record batch streams cut
 * into FlightData and read back with the batch buffers pointing into the
 * received messages (no copy). */
#include <stdlib.h>
#include <string.h>

#include "flight/flight_data.h"
#include "flight/flight_pb.h"
#include "quiver/buffer.h"
#include "test_rb_helpers.h"
#include "test_util.h"

static QvFlightBytes bytes_of(const char *s) {
  return (QvFlightBytes){(uint8_t *)s, strlen(s)};
}

static void test_descriptor_bytes(void **state) {
  (void)state;
  char *path[] = {"dir", "a.arrow"};
  QvFlightDescriptor d = {.type = QV_FLIGHT_DESCRIPTOR_PATH, .path = path, .n_path = 2};
  QviPbWriter w;
  qvi_pb_writer_init(&w);
  qvi_flight_put_descriptor(&w, &d);
  /* type = 1 (08 01), path = 3 (1a len ...) */
  const uint8_t want[] = {0x08, 0x01, 0x1a, 0x03, 'd', 'i', 'r', 0x1a, 0x07,
                          'a',  '.',  'a',  'r',  'r', 'o', 'w'};
  assert_int_equal(w.size, sizeof want);
  assert_memory_equal(w.data, want, sizeof want);
  QvFlightDescriptor got;
  QvError err = {0};
  assert_int_equal(qvi_flight_decode_descriptor(w.data, w.size, &got, &err), QV_OK);
  assert_int_equal(got.type, QV_FLIGHT_DESCRIPTOR_PATH);
  assert_int_equal(got.n_path, 2);
  assert_string_equal(got.path[0], "dir");
  assert_string_equal(got.path[1], "a.arrow");
  assert_int_equal(got.cmd.size, 0);
  assert_non_null(got.cmd.data); /* absent bytes: empty, NUL-terminated */
  char *joined = qv_flight_descriptor_path_string(&got);
  assert_string_equal(joined, "dir/a.arrow");
  qv_free(joined);
  qv_flight_descriptor_reset(&got);
  qvi_pb_writer_reset(&w);

  /* a CMD descriptor: 08 02 12 03 "sql" */
  const uint8_t cmd[] = {0x08, 0x02, 0x12, 0x03, 's', 'q', 'l'};
  assert_int_equal(qvi_flight_decode_descriptor(cmd, sizeof cmd, &got, &err), QV_OK);
  assert_int_equal(got.type, QV_FLIGHT_DESCRIPTOR_CMD);
  assert_int_equal(got.cmd.size, 3);
  assert_memory_equal(got.cmd.data, "sql", 4); /* with its NUL */
  assert_null(qv_flight_descriptor_path_string(&got));
  qv_flight_descriptor_reset(&got);
}

static void test_info_round_trip(void **state) {
  (void)state;
  char *path[] = {"t.arrow"};
  char *locs[] = {"grpc://127.0.0.1:1234", "arrow-flight-reuse-connection://?"};
  QvFlightEndpoint eps[2] = {
      {.ticket = bytes_of("t.arrow"), .locations = locs, .n_locations = 2,
       .expiration_time = {.present = true, .seconds = 1700000000, .nanos = 5},
       .app_metadata = bytes_of("m")},
      {.ticket = bytes_of("second")},
  };
  QvFlightInfo info = {.schema = {(uint8_t *)"\xff\xff\xff\xff\x04\x00\x00\x00zzzz", 12},
                       .has_descriptor = true,
                       .descriptor = {.type = QV_FLIGHT_DESCRIPTOR_PATH, .path = path, .n_path = 1},
                       .endpoints = eps,
                       .n_endpoints = 2,
                       .total_records = 42,
                       .total_bytes = -1,
                       .ordered = true,
                       .app_metadata = bytes_of("info")};
  QviPbWriter w;
  qvi_pb_writer_init(&w);
  qvi_flight_put_info(&w, &info);
  assert_int_equal(qvi_pb_writer_status(&w, NULL), QV_OK);
  QvFlightInfo got;
  QvError err = {0};
  assert_int_equal(qvi_flight_decode_info(w.data, w.size, &got, &err), QV_OK);
  assert_int_equal(got.schema.size, 12);
  assert_memory_equal(got.schema.data, info.schema.data, 12);
  assert_true(got.has_descriptor);
  assert_string_equal(got.descriptor.path[0], "t.arrow");
  assert_int_equal(got.n_endpoints, 2);
  assert_int_equal(got.endpoints[0].ticket.size, 7);
  assert_memory_equal(got.endpoints[0].ticket.data, "t.arrow", 7);
  assert_int_equal(got.endpoints[0].n_locations, 2);
  assert_string_equal(got.endpoints[0].locations[1], "arrow-flight-reuse-connection://?");
  assert_true(got.endpoints[0].expiration_time.present);
  assert_true(got.endpoints[0].expiration_time.seconds == 1700000000);
  assert_int_equal(got.endpoints[0].expiration_time.nanos, 5);
  assert_string_equal((char *)got.endpoints[0].app_metadata.data, "m");
  assert_false(got.endpoints[1].expiration_time.present);
  assert_int_equal(got.endpoints[1].n_locations, 0);
  assert_true(got.total_records == 42);
  assert_true(got.total_bytes == -1);
  assert_true(got.ordered);
  assert_string_equal((char *)got.app_metadata.data, "info");

  /* PollInfo around it */
  QvFlightPollInfo poll = {.has_info = true, .info = info, .has_progress = true, .progress = 0.25,
                           .expiration_time = {.present = true, .seconds = 9}};
  QviPbWriter pw;
  qvi_pb_writer_init(&pw);
  qvi_flight_put_poll_info(&pw, &poll);
  QvFlightPollInfo pgot;
  assert_int_equal(qvi_flight_decode_poll_info(pw.data, pw.size, &pgot, &err), QV_OK);
  assert_true(pgot.has_info && !pgot.has_descriptor && pgot.has_progress);
  assert_true(pgot.progress == 0.25);
  assert_int_equal(pgot.info.n_endpoints, 2);
  assert_true(pgot.expiration_time.present && pgot.expiration_time.seconds == 9);
  qv_flight_poll_info_reset(&pgot);
  qvi_pb_writer_reset(&pw);

  /* an empty FlightInfo decodes to zeros (proto3 defaults) */
  QvFlightInfo empty;
  assert_int_equal(qvi_flight_decode_info(NULL, 0, &empty, &err), QV_OK);
  assert_int_equal(empty.n_endpoints, 0);
  assert_false(empty.has_descriptor);
  assert_true(empty.total_records == 0);
  qv_flight_info_reset(&empty);
  qv_flight_info_reset(&got);
  qvi_pb_writer_reset(&w);
}

static void test_small_messages(void **state) {
  (void)state;
  QvError err = {0};
  QviPbWriter w;
  qvi_pb_writer_init(&w);
  QvFlightAction a = {.type = "refresh", .body = bytes_of("\x01\x02")};
  qvi_flight_put_action(&w, &a);
  const uint8_t want_action[] = {0x0a, 7, 'r', 'e', 'f', 'r', 'e', 's', 'h', 0x12, 2, 1, 2};
  assert_int_equal(w.size, sizeof want_action);
  assert_memory_equal(w.data, want_action, sizeof want_action);
  QvFlightAction ga;
  assert_int_equal(qvi_flight_decode_action(w.data, w.size, &ga, &err), QV_OK);
  assert_string_equal(ga.type, "refresh");
  assert_int_equal(ga.body.size, 2);
  qv_flight_action_reset(&ga);

  w.size = 0;
  QvFlightActionType t = {.type = "x", .description = "does x"};
  qvi_flight_put_action_type(&w, &t);
  QvFlightActionType gt;
  assert_int_equal(qvi_flight_decode_action_type(w.data, w.size, &gt, &err), QV_OK);
  assert_string_equal(gt.type, "x");
  assert_string_equal(gt.description, "does x");
  qv_flight_action_type_reset(&gt);

  w.size = 0;
  QvFlightHandshake h = {.protocol_version = 3, .payload = bytes_of("tok")};
  qvi_flight_put_handshake(&w, &h);
  const uint8_t want_hs[] = {0x08, 3, 0x12, 3, 't', 'o', 'k'};
  assert_int_equal(w.size, sizeof want_hs);
  assert_memory_equal(w.data, want_hs, sizeof want_hs);
  QvFlightHandshake gh;
  assert_int_equal(qvi_flight_decode_handshake(w.data, w.size, &gh, &err), QV_OK);
  assert_true(gh.protocol_version == 3);
  assert_string_equal((char *)gh.payload.data, "tok");
  qv_flight_handshake_reset(&gh);

  /* Ticket / Result / PutResult / SchemaResult / Criteria: field 1 */
  w.size = 0;
  qvi_flight_put_single(&w, "abc", 3);
  const uint8_t want_single[] = {0x0a, 3, 'a', 'b', 'c'};
  assert_memory_equal(w.data, want_single, sizeof want_single);
  QvFlightBytes b;
  assert_int_equal(qvi_flight_decode_single(w.data, w.size, "Ticket", false, &b, &err), QV_OK);
  assert_string_equal((char *)b.data, "abc");
  qv_flight_bytes_reset(&b);
  /* Empty with an unknown field is fine; with a lying length it is not */
  const uint8_t unknown[] = {0x08, 0x01};
  assert_int_equal(qvi_flight_decode_empty(unknown, sizeof unknown, &err), QV_OK);
  const uint8_t lying[] = {0x0a, 0x05, 'a'};
  assert_int_equal(qvi_flight_decode_empty(lying, sizeof lying, &err), QV_ETRUNCATED);
  qvi_pb_writer_reset(&w);
}

static void test_hostile(void **state) {
  (void)state;
  QvError err = {0};
  QvFlightDescriptor d;
  /* type as a LEN field */
  const uint8_t wire[] = {0x0a, 0x00};
  assert_int_equal(qvi_flight_decode_descriptor(wire, sizeof wire, &d, &err), QV_EINVAL);
  assert_non_null(strstr(err.message, "FlightDescriptor.type"));
  /* type 7 */
  const uint8_t bad_enum[] = {0x08, 0x07};
  assert_int_equal(qvi_flight_decode_descriptor(bad_enum, sizeof bad_enum, &d, &err), QV_EINVAL);
  /* a path segment that is not UTF-8, and one holding a NUL */
  const uint8_t bad_utf8[] = {0x1a, 0x02, 0xC0, 0x80};
  assert_int_equal(qvi_flight_decode_descriptor(bad_utf8, sizeof bad_utf8, &d, &err), QV_EINVAL);
  assert_non_null(strstr(err.message, "UTF-8"));
  const uint8_t nul[] = {0x1a, 0x02, 'a', 0};
  assert_int_equal(qvi_flight_decode_descriptor(nul, sizeof nul, &d, &err), QV_EINVAL);
  /* a nested endpoint whose ticket's length lies */
  const uint8_t nested[] = {0x1a, 0x04, 0x0a, 0x02, 0x0a, 0x09};
  QvFlightInfo info;
  assert_int_equal(qvi_flight_decode_info(nested, sizeof nested, &info, &err), QV_ETRUNCATED);
  assert_non_null(strstr(err.message, "Ticket"));
  /* a timestamp's nanos out of range */
  const uint8_t nanos[] = {0x1a, 0x0d, 0x1a, 0x0b, 0x10, 0xFF, 0xFF, 0xFF, 0xFF,
                           0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01};
  assert_int_equal(qvi_flight_decode_info(nanos, sizeof nanos, &info, &err), QV_EINVAL);
  /* progress as a varint */
  const uint8_t progress[] = {0x18, 0x01};
  QvFlightPollInfo p;
  assert_int_equal(qvi_flight_decode_poll_info(progress, sizeof progress, &p, &err), QV_EINVAL);
  /* FlightData: data_body as a varint */
  const uint8_t fd_bad[] = {0xC0, 0x3E, 0x01};
  QviFlightData fd;
  assert_int_equal(qvi_flight_data_decode(fd_bad, sizeof fd_bad, &fd, &err), QV_EINVAL);
}

/* ---- FlightData */

static void test_placement(void **state) {
  (void)state;
  for (size_t hn = 0; hn < 200; hn += 7) {
    uint8_t *header = calloc(1, hn + 1);
    QviPbWriter w;
    qvi_pb_writer_init(&w);
    if (hn) qvi_pb_put_bytes(&w, QVI_FD_HEADER, header, hn);
    qvi_pb_put_bytes(&w, QVI_FD_APP_METADATA, "md", 2);
    size_t body_at = w.size + qvi_pb_len_prefix_size(QVI_FD_BODY, 100);
    qvi_pb_put_len_prefix(&w, QVI_FD_BODY, 100);
    uint8_t body[100] = {0};
    qvi_pb_put_raw(&w, body, sizeof body);
    size_t shift = qvi_flight_data_placement(NULL, w.data, w.size, w.size);
    assert_true(shift < 64);
    assert_int_equal((shift + body_at) % 64, 0);
    /* the first bytes only (as gRPC hands them over): same answer while
     * the body's tag and length are inside */
    assert_int_equal(qvi_flight_data_placement(NULL, w.data, body_at, w.size), shift);
    /* the body's start not seen: 0 */
    assert_int_equal(qvi_flight_data_placement(NULL, w.data, body_at - 1, w.size), 0);
    QviFlightData fd;
    assert_int_equal(qvi_flight_data_decode(w.data, w.size, &fd, NULL), QV_OK);
    assert_ptr_equal(fd.body, w.data + body_at);
    assert_int_equal(fd.body_size, 100);
    assert_int_equal(fd.header_size, hn);
    assert_int_equal(fd.app_metadata_size, 2);
    qvi_pb_writer_reset(&w);
    free(header);
  }
}

/* Received FlightData, each in a 64-byte-aligned buffer at the offset the
 * placement asks for, as src/grpc places them. */
typedef struct Wire {
  uint8_t **msg;
  size_t *size;
  size_t n, cap;
  uint8_t *cur; /* being assembled */
  size_t cur_total, cur_n;
  size_t next; /* reader position */
  int64_t metadata_seen;
  uint8_t **bufs; /* what the messages' owners free */
} Wire;

static QvStatus wire_begin(void *ctx, size_t total, const uint8_t *head, size_t head_n,
                           QvError *error) {
  (void)error;
  Wire *w = ctx;
  assert_null(w->cur);
  if (w->n == w->cap) {
    w->cap = w->cap ? 2 * w->cap : 8;
    w->msg = realloc(w->msg, w->cap * sizeof *w->msg);
    w->size = realloc(w->size, w->cap * sizeof *w->size);
    w->bufs = realloc(w->bufs, w->cap * sizeof *w->bufs);
  }
  size_t shift = qvi_flight_data_placement(NULL, head, head_n, total);
  uint8_t *buf = qv_aligned_alloc(total + shift + 1);
  w->bufs[w->n] = buf;
  w->cur = buf + shift;
  w->cur_total = total;
  memcpy(w->cur, head, head_n);
  w->cur_n = head_n;
  if (w->cur_n == w->cur_total) {
    w->msg[w->n] = w->cur;
    w->size[w->n++] = total;
    w->cur = NULL;
  }
  return QV_OK;
}

static QvStatus wire_more(void *ctx, const uint8_t *data, size_t n, QvError *error) {
  (void)error;
  Wire *w = ctx;
  assert_non_null(w->cur);
  assert_true(w->cur_n + n <= w->cur_total);
  memcpy(w->cur + w->cur_n, data, n);
  w->cur_n += n;
  if (w->cur_n == w->cur_total) {
    w->msg[w->n] = w->cur;
    w->size[w->n++] = w->cur_total;
    w->cur = NULL;
  }
  return QV_OK;
}

static void free_buf(void *p) { qv_free(p); }

static QvStatus wire_recv(void *ctx, const uint8_t **data, size_t *size, QvOwner **owner,
                          QvError *error) {
  (void)error;
  Wire *w = ctx;
  if (w->next == w->n) return QV_EOS;
  size_t i = w->next++;
  *data = w->msg[i];
  *size = w->size[i];
  *owner = qv_owner_new(free_buf, w->bufs[i]);
  w->bufs[i] = NULL; /* the owner frees it */
  return QV_OK;
}

static void wire_on_data(void *ctx, const QviFlightData *fd) {
  Wire *w = ctx;
  if (fd->app_metadata_size) w->metadata_seen++;
}

static void wire_free(Wire *w) {
  for (size_t i = 0; i < w->n; i++) qv_free(w->bufs[i]);
  free(w->msg);
  free(w->size);
  free(w->bufs);
  memset(w, 0, sizeof *w);
}

static QviFlightEmit wire_emit(Wire *w) {
  return (QviFlightEmit){.ctx = w, .begin = wire_begin, .more = wire_more};
}

/* Writes two batches of `specs` as an IPC stream, then as FlightData. */
static void make_flight(Wire *w, const char *const *specs, int n_specs, struct ArrowSchema *schema,
                        struct ArrowArray *batches, const QvFlightDescriptor *desc) {
  rbt_batch_schema(schema, specs, n_specs);
  rbt_build(&batches[0], schema, 100, 1);
  rbt_build(&batches[1], schema, 37, 2);
  struct ArrowArray *list[2] = {&batches[0], &batches[1]};
  uint8_t *ipc;
  size_t ipc_size;
  rbt_write(schema, list, 2, NULL, &ipc, &ipc_size);
  struct ArrowArrayStream in;
  QvError err = {0};
  rbt_check(rbt_stream_open(&in, ipc, ipc_size, NULL, &err), &err, "open");
  QviFlightEmit emit = wire_emit(w);
  rbt_check(qvi_flight_write_stream(&in, &emit, desc, &err), &err, "flight write");
  in.release(&in);
  free(ipc);
}

static bool inside_a_message(const Wire *w, const void *p) {
  for (size_t i = 0; i < w->n; i++)
    if ((const uint8_t *)p >= w->msg[i] && (const uint8_t *)p < w->msg[i] + w->size[i]) return true;
  return false;
}

static void test_stream_round_trip(void **state) {
  (void)state;
  const char *specs[] = {"l", "u", "+l(i)", "d:10,2", "b"};
  Wire w = {0};
  struct ArrowSchema schema;
  struct ArrowArray batches[2];
  char *path[] = {"up", "x.arrow"};
  QvFlightDescriptor desc = {.type = QV_FLIGHT_DESCRIPTOR_PATH, .path = path, .n_path = 2};
  make_flight(&w, specs, 5, &schema, batches, &desc);
  assert_int_equal(w.n, 3); /* schema + 2 batches, no end-of-stream marker */
  QvError err = {0};
  /* the descriptor rides on the first FlightData only */
  QviFlightData fd;
  assert_int_equal(qvi_flight_data_decode(w.msg[0], w.size[0], &fd, &err), QV_OK);
  assert_true(fd.has_descriptor);
  QvFlightDescriptor got_desc;
  assert_int_equal(qvi_flight_decode_descriptor(fd.descriptor, fd.descriptor_size, &got_desc, &err),
                   QV_OK);
  assert_string_equal(got_desc.path[1], "x.arrow");
  qv_flight_descriptor_reset(&got_desc);
  assert_int_equal(fd.body_size, 0);
  assert_int_equal(qvi_flight_data_decode(w.msg[1], w.size[1], &fd, &err), QV_OK);
  assert_false(fd.has_descriptor);
  assert_true(fd.body_size > 0);
  assert_int_equal((uintptr_t)fd.body % 64, 0); /* placed */

  QviFlightReadHooks hooks = {.recv = wire_recv, .on_data = wire_on_data, .ctx = &w};
  struct ArrowArrayStream s;
  rbt_check(qvi_flight_stream_reader_new(&s, &hooks, NULL, &err), &err, "flight reader");
  struct ArrowSchema got_schema;
  rbt_check(qv_rb_stream_get_schema(&s, &got_schema, &err), &err, "schema");
  for (int b = 0; b < 2; b++) {
    struct ArrowArray got;
    assert_false(rbt_next(&s, &got));
    RbtCells want = rbt_cells(&batches[b], &schema);
    RbtCells have = rbt_cells(&got, &got_schema);
    rbt_assert_same_cells(&want, &have, "flight batch");
    rbt_cells_free(&want);
    rbt_cells_free(&have);
    /* same address: the int64 column's values are the received bytes */
    const struct ArrowArray *col = got.children[0];
    assert_true(inside_a_message(&w, col->buffers[1]));
    assert_int_equal((uintptr_t)col->buffers[1] % 8, 0);
    got.release(&got);
    batches[b].release(&batches[b]);
  }
  struct ArrowArray end;
  assert_true(rbt_next(&s, &end));
  s.release(&s);
  got_schema.release(&got_schema);
  schema.release(&schema);
  wire_free(&w);
}

/* Arrow C++ sends data_header as the bare Message flatbuffer, whose length
 * may be 4 mod 8 (quiver pads it to 8): FlightData rewritten that way, the
 * descriptor and app_metadata kept, still read back value for value, the
 * bodies placed on 64-byte boundaries and used in place. */
static void test_header_4_mod_8(void **state) {
  (void)state;
  const char *specs[] = {"l", "u", "+l(i)", "d:10,2", "b"};
  Wire w = {0};
  struct ArrowSchema schema;
  struct ArrowArray batches[2];
  char *path[] = {"x.arrow"};
  QvFlightDescriptor desc = {.type = QV_FLIGHT_DESCRIPTOR_PATH, .path = path, .n_path = 1};
  make_flight(&w, specs, 5, &schema, batches, &desc);
  QvError err = {0};
  Wire cpp = {0};
  int trimmed = 0;
  for (size_t i = 0; i < w.n; i++) {
    QviFlightData fd;
    assert_int_equal(qvi_flight_data_decode(w.msg[i], w.size[i], &fd, &err), QV_OK);
    /* the Schema (no 8-byte scalars, so its flatbuffer may be 4 mod 8 long
     * as Arrow C++ builds it): the same flatbuffer 4 bytes further on (the
     * root offset grows by 4, every offset inside is relative). A batch
     * (its int64 fields keep its flatbuffer a multiple of 8): 4 bytes past
     * its end, so that its body follows a header 4 mod 8 long. */
    size_t hn = fd.header_size + 4;
    uint8_t *h = calloc(1, hn);
    if (i == 0) {
      /* the root offset is little-endian on every host */
      uint32_t root = (uint32_t)fd.header[0] | (uint32_t)fd.header[1] << 8 |
                      (uint32_t)fd.header[2] << 16 | (uint32_t)fd.header[3] << 24;
      root += 4;
      for (int k = 0; k < 4; k++) h[k] = (uint8_t)(root >> (8 * k));
      memcpy(h + 8, fd.header + 4, fd.header_size - 4);
    } else {
      memcpy(h, fd.header, fd.header_size);
    }
    if (hn % 8 == 4) trimmed++;
    QviPbWriter pw;
    qvi_pb_writer_init(&pw);
    if (fd.has_descriptor) qvi_pb_put_bytes(&pw, QVI_FD_DESCRIPTOR, fd.descriptor, fd.descriptor_size);
    qvi_pb_put_bytes(&pw, QVI_FD_HEADER, h, hn);
    free(h);
    if (fd.app_metadata_size) qvi_pb_put_bytes(&pw, QVI_FD_APP_METADATA, fd.app_metadata, fd.app_metadata_size);
    if (fd.body_size) qvi_pb_put_bytes(&pw, QVI_FD_BODY, fd.body, fd.body_size);
    assert_int_equal(wire_begin(&cpp, pw.size, pw.data, pw.size, &err), QV_OK);
    QviFlightData again;
    assert_int_equal(qvi_flight_data_decode(cpp.msg[i], cpp.size[i], &again, &err), QV_OK);
    assert_int_equal(again.header_size, hn);
    if (again.body_size) assert_int_equal((uintptr_t)again.body % 64, 0);
    qvi_pb_writer_reset(&pw);
  }
  assert_int_equal(trimmed, (int)w.n); /* every header is 4 mod 8 long now */

  QviFlightReadHooks hooks = {.recv = wire_recv, .ctx = &cpp};
  struct ArrowArrayStream s;
  rbt_check(qvi_flight_stream_reader_new(&s, &hooks, NULL, &err), &err, "flight reader");
  struct ArrowSchema got_schema;
  rbt_check(qv_rb_stream_get_schema(&s, &got_schema, &err), &err, "schema");
  for (int b = 0; b < 2; b++) {
    struct ArrowArray got;
    assert_false(rbt_next(&s, &got));
    RbtCells want = rbt_cells(&batches[b], &schema);
    RbtCells have = rbt_cells(&got, &got_schema);
    rbt_assert_same_cells(&want, &have, "4-mod-8 batch");
    rbt_cells_free(&want);
    rbt_cells_free(&have);
    assert_true(inside_a_message(&cpp, got.children[0]->buffers[1]));
    got.release(&got);
    batches[b].release(&batches[b]);
  }
  struct ArrowArray end;
  assert_true(rbt_next(&s, &end));
  s.release(&s);
  got_schema.release(&got_schema);
  schema.release(&schema);
  wire_free(&cpp);
  wire_free(&w);
}

static void test_metadata_only_and_errors(void **state) {
  (void)state;
  const char *specs[] = {"i"};
  Wire w = {0};
  struct ArrowSchema schema;
  struct ArrowArray batches[2];
  make_flight(&w, specs, 1, &schema, batches, NULL);
  batches[0].release(&batches[0]);
  batches[1].release(&batches[1]);
  schema.release(&schema);
  QvError err = {0};

  /* a metadata-only FlightData in the middle is skipped and reported */
  QviFlightWriter *fw;
  QvSink *sink;
  Wire extra = {0};
  QviFlightEmit emit = wire_emit(&extra);
  assert_int_equal(qvi_flight_writer_new(&fw, &sink, &emit, NULL, &err), QV_OK);
  assert_int_equal(qvi_flight_writer_metadata_only(fw, "hello", 5, &err), QV_OK);
  assert_int_equal(qvi_flight_writer_count(fw), 1);
  qv_sink_free(sink);
  qvi_flight_writer_free(fw);
  assert_int_equal(extra.n, 1);
  Wire mixed = {0};
  mixed.cap = 8;
  mixed.msg = calloc(8, sizeof *mixed.msg);
  mixed.size = calloc(8, sizeof *mixed.size);
  mixed.bufs = calloc(8, sizeof *mixed.bufs);
  size_t order[4] = {0, 1, 99, 2};
  for (int i = 0; i < 4; i++) {
    Wire *from = order[i] == 99 ? &extra : &w;
    size_t k = order[i] == 99 ? 0 : order[i];
    mixed.msg[i] = from->msg[k];
    mixed.size[i] = from->size[k];
    mixed.bufs[i] = from->bufs[k];
    from->bufs[k] = NULL;
  }
  mixed.n = 4;
  wire_free(&w);
  QviFlightReadHooks hooks = {.recv = wire_recv, .on_data = wire_on_data, .ctx = &mixed};
  struct ArrowArrayStream s;
  rbt_check(qvi_flight_stream_reader_new(&s, &hooks, NULL, &err), &err, "reader");
  struct ArrowArray a;
  assert_false(rbt_next(&s, &a));
  a.release(&a);
  assert_false(rbt_next(&s, &a));
  a.release(&a);
  assert_true(rbt_next(&s, &a));
  assert_int_equal(mixed.metadata_seen, 1);
  s.release(&s);
  wire_free(&mixed);
  wire_free(&extra);

  /* a body shorter than bodyLength: truncated */
  make_flight(&w, specs, 1, &schema, batches, NULL);
  batches[0].release(&batches[0]);
  batches[1].release(&batches[1]);
  schema.release(&schema);
  QviFlightData fd;
  assert_int_equal(qvi_flight_data_decode(w.msg[1], w.size[1], &fd, &err), QV_OK);
  QviPbWriter pw;
  qvi_pb_writer_init(&pw);
  qvi_pb_put_bytes(&pw, QVI_FD_HEADER, fd.header, fd.header_size);
  qvi_pb_put_bytes(&pw, QVI_FD_BODY, fd.body, fd.body_size - 8);
  QviFlightData shortfd;
  assert_int_equal(qvi_flight_data_decode(pw.data, pw.size, &shortfd, &err), QV_OK);
  QvIpcMessage msg;
  assert_int_equal(qvi_flight_data_to_ipc(&shortfd, NULL, 1, NULL, &msg, &err), QV_ETRUNCATED);
  assert_non_null(strstr(err.message, "bodyLength"));
  /* a longer body is fine: the bytes past bodyLength are not used */
  pw.size = 0;
  qvi_pb_put_bytes(&pw, QVI_FD_HEADER, fd.header, fd.header_size);
  uint8_t *longer = calloc(1, fd.body_size + 16);
  memcpy(longer, fd.body, fd.body_size);
  qvi_pb_put_bytes(&pw, QVI_FD_BODY, longer, fd.body_size + 16);
  free(longer);
  assert_int_equal(qvi_flight_data_decode(pw.data, pw.size, &shortfd, &err), QV_OK);
  assert_int_equal(qvi_flight_data_to_ipc(&shortfd, NULL, 1, NULL, &msg, &err), QV_OK);
  assert_true(msg.body_length == (int64_t)fd.body_size);
  qv_ipc_message_reset(&msg);
  /* garbage as the header */
  pw.size = 0;
  qvi_pb_put_bytes(&pw, QVI_FD_HEADER, "\x04\x00\x00\x00garbage!", 12);
  assert_int_equal(qvi_flight_data_decode(pw.data, pw.size, &shortfd, &err), QV_OK);
  assert_int_not_equal(qvi_flight_data_to_ipc(&shortfd, NULL, 1, NULL, &msg, &err), QV_OK);
  /* a header over the limit */
  QvIpcReaderOptions lim = {.struct_size = sizeof lim, .max_metadata_size = 8};
  assert_int_equal(qvi_flight_data_to_ipc(&shortfd, NULL, 1, &lim, &msg, &err), QV_ELIMIT);
  qvi_pb_writer_reset(&pw);

  /* a stream that starts with a batch: no schema */
  w.next = 1;
  hooks = (QviFlightReadHooks){.recv = wire_recv, .ctx = &w};
  assert_int_equal(qvi_flight_stream_reader_new(&s, &hooks, NULL, &err), QV_EINVAL);
  assert_non_null(strstr(err.message, "Schema"));
  /* an empty stream */
  w.next = w.n;
  assert_int_equal(qvi_flight_stream_reader_new(&s, &hooks, NULL, &err), QV_EINVAL);
  wire_free(&w);
}

int main(int argc, char **argv) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_descriptor_bytes),  cmocka_unit_test(test_info_round_trip),
      cmocka_unit_test(test_small_messages),    cmocka_unit_test(test_hostile),
      cmocka_unit_test(test_placement),         cmocka_unit_test(test_stream_round_trip),
      cmocka_unit_test(test_header_4_mod_8),
      cmocka_unit_test(test_metadata_only_and_errors),
  };
  const QvTestGroup groups[] = {QV_TEST_GROUP("", tests, NULL, NULL)};
  return qv_test_run_groups(argc, argv, groups, sizeof groups / sizeof groups[0]);
}
