/* The Flight client and server library (quiver/flight.h), quiver against
 * quiver over loopback: every RPC, statuses with the server's message,
 * token auth and Handshake, a deadline on a handler that never answers,
 * endpoints fetched in parallel, DoPut's PutResults, DoExchange echoing.
 * (The independent peer, grpcio: test_flight_peer.c and tests/scripts/test_flight_grpcio.sh.) */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "quiver/flight.h"
#include "util/cpu.h"
#include "test_rb_helpers.h"
#include "test_util.h"

static uint8_t *g_ipc;
static size_t g_ipc_size;
static struct ArrowSchema g_schema;
static struct ArrowArray g_batches[2];
/* "big": BIG_N batches of 2 MiB, more than a stream's 16 MiB window */
#define BIG_N 12
#define BIG_ROWS ((int64_t)1 << 18)
static uint8_t *g_big;
static size_t g_big_size;

static void sleep_ms(int ms) {
  struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000};
  nanosleep(&ts, NULL);
}

/* ---- handlers */

static QvStatus h_list(void *ctx, QvFlightCall *call, const uint8_t *crit, size_t n,
                       QvError *error) {
  (void)ctx;
  for (int i = 0; i < 2; i++) {
    char name[32];
    snprintf(name, sizeof name, "f%d%.*s", i, (int)n, (const char *)crit);
    char *path[] = {name};
    QvFlightInfo info = {.has_descriptor = true,
                         .descriptor = {.type = QV_FLIGHT_DESCRIPTOR_PATH, .path = path, .n_path = 1},
                         .total_records = 137, .total_bytes = -1};
    QvStatus st = qv_flight_call_send_info(call, &info, error);
    if (st) return st;
  }
  return QV_OK;
}

static char *loc_reuse[] = {"arrow-flight-reuse-connection://?"};

static QvStatus h_info(void *ctx, QvFlightCall *call, const QvFlightDescriptor *d,
                       QvFlightInfo *out, QvError *error) {
  (void)ctx;
  if (d->n_path != 1 || strcmp(d->path[0], "t") != 0) {
    qv_flight_call_set_code(call, QV_FLIGHT_NOT_FOUND);
    return qv_error_set(error, QV_EINVAL, "no flight named %s", d->n_path ? d->path[0] : "?");
  }
  /* two endpoints: the same stream twice, one with the reuse location */
  out->endpoints = calloc(2, sizeof *out->endpoints);
  out->n_endpoints = 2;
  for (int i = 0; i < 2; i++) {
    out->endpoints[i].ticket.data = (uint8_t *)strdup("t");
    out->endpoints[i].ticket.size = 1;
  }
  out->endpoints[1].locations = calloc(1, sizeof(char *));
  out->endpoints[1].locations[0] = strdup(loc_reuse[0]);
  out->endpoints[1].n_locations = 1;
  out->total_records = 137;
  out->total_bytes = (int64_t)g_ipc_size;
  return QV_OK;
}

static QvStatus h_poll(void *ctx, QvFlightCall *call, const QvFlightDescriptor *d,
                       QvFlightPollInfo *out, QvError *error) {
  out->has_info = true;
  out->has_progress = true;
  out->progress = 1.0;
  return h_info(ctx, call, d, &out->info, error);
}

static QvStatus h_schema(void *ctx, QvFlightCall *call, const QvFlightDescriptor *d,
                         struct ArrowSchema *out, QvError *error) {
  (void)ctx;
  (void)call;
  (void)d;
  return qv_arrow_schema_copy(&g_schema, out, error);
}

static QvStatus h_get(void *ctx, QvFlightCall *call, const uint8_t *ticket, size_t n,
                      struct ArrowArrayStream *out, QvError *error) {
  (void)ctx;
  if (n == 3 && memcmp(ticket, "big", 3) == 0)
    return rbt_stream_open(out, g_big, g_big_size, NULL, error);
  if (n != 1 || ticket[0] != 't') {
    qv_flight_call_set_code(call, QV_FLIGHT_NOT_FOUND);
    return qv_error_set(error, QV_EINVAL, "unknown ticket");
  }
  return rbt_stream_open(out, g_ipc, g_ipc_size, NULL, error);
}

static QvStatus h_put(void *ctx, QvFlightCall *call, const QvFlightDescriptor *d,
                      struct ArrowArrayStream *in, QvError *error) {
  (void)ctx;
  int64_t rows = 0;
  struct ArrowArray a;
  QvStatus st;
  while ((st = qv_rb_stream_get_next(in, &a, error)) == QV_OK) {
    rows += a.length;
    a.release(&a);
    /* one PutResult per batch, while the client still sends */
    if ((st = qv_flight_call_send_put_result(call, "batch", 5, error))) return st;
  }
  if (st != QV_EOS) return st;
  char msg[64];
  snprintf(msg, sizeof msg, "%s:%lld", d->n_path ? d->path[0] : "?", (long long)rows);
  return qv_flight_call_send_put_result(call, msg, strlen(msg), error);
}

static QvStatus h_exchange(void *ctx, QvFlightCall *call, const QvFlightDescriptor *d,
                           struct ArrowArrayStream *in, QvError *error) {
  (void)ctx;
  (void)d;
  if (in == NULL) {
    struct ArrowArrayStream s;
    QvStatus st = rbt_stream_open(&s, g_ipc, g_ipc_size, NULL, error);
    if (st) return st;
    st = qv_flight_call_write_stream(call, &s, error);
    s.release(&s);
    return st;
  }
  return qv_flight_call_write_stream(call, in, error);
}

static QvStatus h_action(void *ctx, QvFlightCall *call, const QvFlightAction *a, QvError *error) {
  (void)ctx;
  if (strcmp(a->type, "hang") == 0) {
    while (!qv_flight_call_cancelled(call)) sleep_ms(5);
    return qv_error_set(error, QV_EIO, "cancelled");
  }
  if (strcmp(a->type, "echo") != 0) {
    qv_flight_call_set_code(call, QV_FLIGHT_INVALID_ARGUMENT);
    return qv_error_set(error, QV_EINVAL, "unknown action '%s'", a->type);
  }
  QvStatus st = qv_flight_call_send_result(call, a->body.data, a->body.size, error);
  if (!st) st = qv_flight_call_send_result(call, "done", 4, error);
  return st;
}

static QvStatus h_actions(void *ctx, QvFlightCall *call, QvError *error) {
  (void)ctx;
  QvFlightActionType t = {.type = "echo", .description = "sends the body back"};
  return qv_flight_call_send_action_type(call, &t, error);
}

static const QvFlightHandlers handlers = {
    .list_flights = h_list, .get_flight_info = h_info, .poll_flight_info = h_poll,
    .get_schema = h_schema, .do_get = h_get,           .do_put = h_put,
    .do_exchange = h_exchange, .do_action = h_action, .list_actions = h_actions};

typedef struct Srv {
  QvFlightServer *s;
  pthread_t t;
  char uri[64];
} Srv;

static void *run(void *arg) {
  qv_flight_server_run(arg, NULL);
  return NULL;
}

static void srv_start(Srv *v, const QvFlightServerOptions *o) {
  QvError err = {0};
  QvStatus st = qv_flight_server_new(&v->s, "127.0.0.1", 0, &handlers, o, &err);
  if (st) fail_msg("server: %s", err.message);
  snprintf(v->uri, sizeof v->uri, "grpc://127.0.0.1:%d", qv_flight_server_port(v->s));
  assert_int_equal(pthread_create(&v->t, NULL, run, v->s), 0);
}

static void srv_stop(Srv *v) {
  qv_flight_server_stop(v->s);
  pthread_join(v->t, NULL);
  qv_flight_server_free(v->s);
}

static Srv g_srv;

static int setup(void **state) {
  (void)state;
  const char *specs[] = {"l", "u", "+l(i)"};
  rbt_batch_schema(&g_schema, specs, 3);
  rbt_build(&g_batches[0], &g_schema, 100, 1);
  rbt_build(&g_batches[1], &g_schema, 37, 2);
  struct ArrowArray *list[2] = {&g_batches[0], &g_batches[1]};
  rbt_write(&g_schema, list, 2, NULL, &g_ipc, &g_ipc_size);
  struct ArrowSchema big_schema;
  struct ArrowArray big;
  const char *big_spec[] = {"l"};
  rbt_batch_schema(&big_schema, big_spec, 1);
  rbt_build(&big, &big_schema, BIG_ROWS, 3);
  struct ArrowArray *big_list[BIG_N];
  for (int i = 0; i < BIG_N; i++) big_list[i] = &big;
  rbt_write(&big_schema, big_list, BIG_N, NULL, &g_big, &g_big_size);
  big.release(&big);
  big_schema.release(&big_schema);
  srv_start(&g_srv, NULL);
  return 0;
}

static int teardown(void **state) {
  (void)state;
  srv_stop(&g_srv);
  g_batches[0].release(&g_batches[0]);
  g_batches[1].release(&g_batches[1]);
  g_schema.release(&g_schema);
  free(g_ipc);
  free(g_big);
  return 0;
}

static QvFlightClient *connect_to(const char *uri, const QvFlightClientOptions *o) {
  QvFlightClient *c;
  QvError err = {0};
  QvStatus st = qv_flight_client_new(&c, uri, o, &err);
  if (st) fail_msg("connect: %s", err.message);
  return c;
}

/* Reads a stream and checks it holds g_batches `times` times over. */
static void check_stream(struct ArrowArrayStream *s, int times) {
  QvError err = {0};
  struct ArrowSchema sch;
  rbt_check(qv_rb_stream_get_schema(s, &sch, &err), &err, "schema");
  for (int k = 0; k < 2 * times; k++) {
    struct ArrowArray got;
    assert_false(rbt_next(s, &got));
    RbtCells want = rbt_cells(&g_batches[k % 2], &g_schema);
    RbtCells have = rbt_cells(&got, &sch);
    rbt_assert_same_cells(&want, &have, "batch");
    rbt_cells_free(&want);
    rbt_cells_free(&have);
    got.release(&got);
  }
  struct ArrowArray end;
  assert_true(rbt_next(s, &end));
  sch.release(&sch);
}

static void test_metadata_rpcs(void **state) {
  (void)state;
  QvFlightClient *c = connect_to(g_srv.uri, NULL);
  QvError err = {0};
  QvFlightInfo *infos;
  size_t n;
  rbt_check(qv_flight_list_flights(c, "x", 1, &infos, &n, &err), &err, "list");
  assert_int_equal(n, 2);
  assert_string_equal(infos[1].descriptor.path[0], "f1x");
  assert_true(infos[0].total_records == 137);
  qv_flight_info_list_free(infos, n);

  char *path[] = {"t"};
  QvFlightDescriptor d = {.type = QV_FLIGHT_DESCRIPTOR_PATH, .path = path, .n_path = 1};
  QvFlightInfo info;
  rbt_check(qv_flight_get_flight_info(c, &d, &info, &err), &err, "info");
  assert_int_equal(info.n_endpoints, 2);
  assert_true(info.total_bytes == (int64_t)g_ipc_size);
  qv_flight_info_reset(&info);

  QvFlightPollInfo poll;
  rbt_check(qv_flight_poll_flight_info(c, &d, &poll, &err), &err, "poll");
  assert_true(poll.has_info && poll.has_progress && poll.progress == 1.0);
  qv_flight_poll_info_reset(&poll);

  struct ArrowSchema sch;
  rbt_check(qv_flight_get_schema(c, &d, &sch, &err), &err, "schema");
  assert_int_equal(sch.n_children, 3);
  assert_string_equal(sch.children[2]->format, "+l");
  sch.release(&sch);

  /* the server's status and message */
  char *missing[] = {"nope"};
  QvFlightDescriptor dm = {.type = QV_FLIGHT_DESCRIPTOR_PATH, .path = missing, .n_path = 1};
  assert_int_equal(qv_flight_get_flight_info(c, &dm, &info, &err), QV_EINVAL);
  assert_non_null(strstr(err.message, "NOT_FOUND"));
  assert_non_null(strstr(err.message, "no flight named nope"));
  assert_int_equal(qv_flight_client_last_code(c), QV_FLIGHT_NOT_FOUND);

  QvFlightAction a = {.type = "echo", .body = {(uint8_t *)"hi", 2}};
  QvFlightBytes *res;
  rbt_check(qv_flight_do_action(c, &a, &res, &n, &err), &err, "action");
  assert_int_equal(n, 2);
  assert_string_equal((char *)res[0].data, "hi");
  assert_string_equal((char *)res[1].data, "done");
  qv_flight_bytes_list_free(res, n);
  a.type = "other";
  assert_int_equal(qv_flight_do_action(c, &a, &res, &n, &err), QV_EINVAL);
  assert_non_null(strstr(err.message, "INVALID_ARGUMENT: unknown action 'other'"));

  QvFlightActionType *types;
  rbt_check(qv_flight_list_actions(c, &types, &n, &err), &err, "actions");
  assert_int_equal(n, 1);
  assert_string_equal(types[0].description, "sends the body back");
  qv_flight_action_type_list_free(types, n);
  qv_flight_client_free(c);
}

typedef struct Acc {
  char *last;
  int *n;
} Acc;

static void on_result(void *ctx, const uint8_t *data, size_t size) {
  Acc *acc = ctx;
  snprintf(acc->last, 64, "%.*s", (int)size, (const char *)data);
  (*acc->n)++;
}

static void test_data_rpcs(void **state) {
  (void)state;
  QvFlightClient *c = connect_to(g_srv.uri, NULL);
  QvError err = {0};
  struct ArrowArrayStream s;
  rbt_check(qv_flight_do_get(c, "t", 1, &s, &err), &err, "doget");
  check_stream(&s, 1);
  s.release(&s);
  /* an unknown ticket: the server's status at the first read */
  QvStatus st = qv_flight_do_get(c, "zz", 2, &s, &err);
  assert_int_equal(st, QV_EINVAL);
  assert_non_null(strstr(err.message, "NOT_FOUND: unknown ticket"));

  /* every endpoint, one after the other and two at once */
  char *path[] = {"t"};
  QvFlightDescriptor d = {.type = QV_FLIGHT_DESCRIPTOR_PATH, .path = path, .n_path = 1};
  QvFlightInfo info;
  rbt_check(qv_flight_get_flight_info(c, &d, &info, &err), &err, "info");
  for (int parallel = 0; parallel <= 2; parallel += 2) {
    rbt_check(qv_flight_read_endpoints(c, &info, parallel, &s, &err), &err, "endpoints");
    check_stream(&s, 2);
    s.release(&s);
  }
  qv_flight_info_reset(&info);

  /* DoPut: a PutResult per batch, then the count */
  struct ArrowArrayStream in;
  rbt_check(rbt_stream_open(&in, g_ipc, g_ipc_size, NULL, &err), &err, "open");
  char *up[] = {"up.arrow"};
  QvFlightDescriptor dp = {.type = QV_FLIGHT_DESCRIPTOR_PATH, .path = up, .n_path = 1};
  char last[64] = "";
  int n_results = 0;
  Acc acc = {last, &n_results};
  rbt_check(qv_flight_do_put(c, &dp, &in, on_result, &acc, &err), &err, "doput");
  in.release(&in);
  assert_int_equal(n_results, 3);
  assert_string_equal(last, "up.arrow:137");

  /* DoExchange: echoed; and with no input the server's own stream */
  rbt_check(rbt_stream_open(&in, g_ipc, g_ipc_size, NULL, &err), &err, "open");
  rbt_check(qv_flight_do_exchange(c, &dp, &in, &s, NULL, NULL, &err), &err, "exchange");
  check_stream(&s, 1);
  s.release(&s);
  in.release(&in);
  rbt_check(qv_flight_do_exchange(c, &dp, NULL, &s, NULL, NULL, &err), &err, "exchange empty");
  check_stream(&s, 1);
  s.release(&s);
  qv_flight_client_free(c);
}

static void test_auth_and_deadline(void **state) {
  (void)state;
  Srv v;
  QvFlightServerOptions so = {.struct_size = sizeof so, .token = "s3cret", .user = "ann",
                              .password = "pw"};
  srv_start(&v, &so);
  QvError err = {0};
  QvFlightClient *c = connect_to(v.uri, NULL);
  QvFlightActionType *types;
  size_t n;
  assert_int_equal(qv_flight_list_actions(c, &types, &n, &err), QV_EIO);
  assert_non_null(strstr(err.message, "UNAUTHENTICATED"));
  assert_int_equal(qv_flight_client_last_code(c), QV_FLIGHT_UNAUTHENTICATED);
  assert_int_not_equal(qv_flight_handshake_basic(c, "ann", "wrong", &err), QV_OK);
  assert_non_null(strstr(err.message, "UNAUTHENTICATED"));
  rbt_check(qv_flight_handshake_basic(c, "ann", "pw", &err), &err, "handshake");
  rbt_check(qv_flight_list_actions(c, &types, &n, &err), &err, "after handshake");
  qv_flight_action_type_list_free(types, n);
  qv_flight_client_free(c);
  /* a wrong token; the right one given as an option */
  QvFlightClientOptions co = {.struct_size = sizeof co, .token = "nope"};
  c = connect_to(v.uri, &co);
  assert_int_equal(qv_flight_list_actions(c, &types, &n, &err), QV_EIO);
  qv_flight_client_free(c);
  QvFlightHeader hdr = {"X-Extra", "1"};
  co = (QvFlightClientOptions){.struct_size = sizeof co, .token = "s3cret", .headers = &hdr,
                               .n_headers = 1, .timeout_ms = 300};
  c = connect_to(v.uri, &co);
  struct ArrowArrayStream s;
  rbt_check(qv_flight_do_get(c, "t", 1, &s, &err), &err, "doget with token");
  check_stream(&s, 1);
  s.release(&s);
  /* a handler that never answers: the deadline ends the call */
  QvFlightAction a = {.type = "hang"};
  QvFlightBytes *res;
  assert_int_equal(qv_flight_do_action(c, &a, &res, &n, &err), QV_EIO);
  if (strstr(err.message, "DEADLINE_EXCEEDED") == NULL) fail_msg("hang: %s", err.message);
  qv_flight_client_free(c);
  srv_stop(&v);
}

/* DoGet's bodies arrive where the IPC reader uses them: on a 64-byte
 * boundary of the received message (the placement callback), counted, and
 * the arrays' buffers point there (aligned, no realigning copy). */
static void test_body_in_place(void **state) {
  (void)state;
  QvFlightClient *c = connect_to(g_srv.uri, NULL);
  QvError err = {0};
  uint64_t before = qvi_path_count(QV_PATH_FLIGHT_BODY_PLACED);
  struct ArrowArrayStream s;
  rbt_check(qv_flight_do_get(c, "t", 1, &s, &err), &err, "doget");
  struct ArrowArray a;
  int batches = 0;
  while (!rbt_next(&s, &a)) {
    const struct ArrowArray *col = a.children[0]; /* int64 */
    assert_int_equal((uintptr_t)col->buffers[1] % 8, 0);
    a.release(&a);
    batches++;
  }
  s.release(&s);
  assert_int_equal(batches, 2);
  /* both batches' bodies (the server's placement is the client's concern:
   * these are the client's receptions) */
  assert_true(qvi_path_count(QV_PATH_FLIGHT_BODY_PLACED) >= before + 2);
  qv_flight_client_free(c);
}

/* Message buffers come back: a stream longer than the stream window must
 * wait for the reader, whose earlier batches are released by then, so the
 * later messages are received into their recycled buffers (pages already
 * in, no first-touch faults) and still read back right. */
static void test_buffers_recycled(void **state) {
  (void)state;
  QvFlightClient *c = connect_to(g_srv.uri, NULL);
  QvError err = {0};
  uint64_t before = qvi_path_count(QV_PATH_RECYCLED_BUFFER);
  struct ArrowArrayStream s;
  rbt_check(qv_flight_do_get(c, "big", 3, &s, &err), &err, "doget big");
  struct ArrowArray a;
  int batches = 0;
  while (!rbt_next(&s, &a)) {
    assert_int_equal(a.length, BIG_ROWS);
    const int64_t *v = a.children[0]->buffers[1];
    /* the same batch each time: its values do not depend on the buffer */
    static int64_t want[4];
    if (batches == 0) memcpy(want, v + BIG_ROWS - 4, sizeof want);
    else assert_memory_equal(want, v + BIG_ROWS - 4, sizeof want);
    a.release(&a);
    batches++;
  }
  s.release(&s);
  assert_int_equal(batches, BIG_N);
  assert_true(qvi_path_count(QV_PATH_RECYCLED_BUFFER) > before);
  qv_flight_client_free(c);
}

/* A request whose header block is over the server's limit (64 KiB): the
 * call fails with a status saying so, within its deadline, and the server
 * goes on serving (the same connection's next call and other clients). */
static void test_oversized_headers(void **state) {
  (void)state;
  /* five fields of 16 KiB: each under HPACK's field limit, together over
   * the block's */
  size_t one = (size_t)16 << 10;
  char *value = malloc(one + 1);
  memset(value, 'v', one);
  value[one] = 0;
  QvFlightHeader hdr[5] = {{"x-huge-1", value}, {"x-huge-2", value}, {"x-huge-3", value},
                           {"x-huge-4", value}, {"x-huge-5", value}};
  QvFlightClientOptions co = {.struct_size = sizeof co, .headers = hdr, .n_headers = 5,
                              .timeout_ms = 20000};
  QvFlightClient *c = connect_to(g_srv.uri, &co);
  QvError err = {0};
  QvFlightAction a = {.type = "echo", .body = {(uint8_t *)"hi", 2}};
  QvFlightBytes *res = NULL;
  size_t n = 0;
  assert_int_equal(qv_flight_do_action(c, &a, &res, &n, &err), QV_ELIMIT);
  assert_non_null(strstr(err.message, "RESOURCE_EXHAUSTED"));
  assert_non_null(strstr(err.message, "header block exceeds the limit of 65536 bytes"));
  /* the same connection again: refused again, not broken */
  assert_int_equal(qv_flight_do_action(c, &a, &res, &n, &err), QV_ELIMIT);
  qv_flight_client_free(c);
  free(value);
  c = connect_to(g_srv.uri, NULL);
  rbt_check(qv_flight_do_action(c, &a, &res, &n, &err), &err, "action after");
  assert_int_equal(n, 2);
  qv_flight_bytes_list_free(res, n);
  qv_flight_client_free(c);
}

typedef struct Load {
  int ok;
} Load;

static void *load_one(void *arg) {
  Load *l = arg;
  QvFlightClient *c;
  QvError err = {0};
  if (qv_flight_client_new(&c, g_srv.uri, NULL, &err)) return NULL;
  for (int k = 0; k < 4; k++) {
    struct ArrowArrayStream s;
    if (qv_flight_do_get(c, "t", 1, &s, &err)) break;
    struct ArrowArray a;
    int n = 0;
    QvStatus st;
    while ((st = qv_rb_stream_get_next(&s, &a, &err)) == QV_OK) {
      n++;
      a.release(&a);
    }
    s.release(&s);
    if (st == QV_EOS && n == 2) l->ok++;
  }
  qv_flight_client_free(c);
  return NULL;
}

/* A bounded load: 16 clients at once, 4 DoGets each. */
static void test_concurrent_clients(void **state) {
  (void)state;
  pthread_t t[16];
  Load l[16];
  memset(l, 0, sizeof l);
  for (int i = 0; i < 16; i++) assert_int_equal(pthread_create(&t[i], NULL, load_one, &l[i]), 0);
  for (int i = 0; i < 16; i++) pthread_join(t[i], NULL);
  for (int i = 0; i < 16; i++) assert_int_equal(l[i].ok, 4);
}

static void test_bad_locations(void **state) {
  (void)state;
  QvFlightClient *c;
  QvError err = {0};
  assert_int_equal(qv_flight_client_new(&c, "http://x:1", NULL, &err), QV_EARG);
  assert_int_equal(qv_flight_client_new(&c, "grpc://x", NULL, &err), QV_EARG);
  assert_int_equal(qv_flight_client_new(&c, "grpc://x:99999", NULL, &err), QV_EARG);
  assert_int_equal(qv_flight_client_new(&c, "grpc+tcp://[::1:5", NULL, &err), QV_EARG);
}

int main(int argc, char **argv) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_metadata_rpcs),
      cmocka_unit_test(test_data_rpcs),
      cmocka_unit_test(test_auth_and_deadline),
      cmocka_unit_test(test_bad_locations),
      cmocka_unit_test(test_body_in_place),
      cmocka_unit_test(test_buffers_recycled),
      cmocka_unit_test(test_oversized_headers),
      cmocka_unit_test(test_concurrent_clients),
  };
  const QvTestGroup groups[] = {QV_TEST_GROUP("", tests, setup, teardown)};
  return qv_test_run_groups(argc, argv, groups, sizeof groups / sizeof groups[0]);
}
