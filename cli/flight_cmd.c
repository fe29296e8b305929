/* quiver flight serve / list / info / get / put / action: Arrow Flight from
 * the command line (quiver/flight.h). */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "quiver/flight.h"

#define MAX_HEADERS 32

/* ---- serve */

static QvFlightServer *volatile g_server;

static void on_signal(int sig) {
  (void)sig;
  QvFlightServer *s = g_server;
  if (s) qv_flight_server_stop(s);
}

static bool parse_port(const char *v, int *out) {
  int64_t p;
  if (!cli_parse_index(v, &p) || p > 65535) return false;
  *out = (int)p;
  return true;
}

static int cmd_serve(int argc, char **argv) {
  const char *cmd = "flight serve", *dir = NULL, *host = "127.0.0.1", *cert = NULL, *key = NULL,
             *token = NULL, *v;
  int port = 0;
  bool allow_put = false;
  QvCliArgs a;
  cli_args_init(&a, cmd, argc, argv);
  while (cli_args_next(&a)) {
    if ((v = cli_args_positional(&a)) != NULL) {
      if (dir) cli_args_error(&a, "takes one DIR");
      dir = v;
    } else if ((v = cli_args_value(&a, "--host")) != NULL) {
      host = v;
    } else if ((v = cli_args_value(&a, "--port")) != NULL) {
      if (!parse_port(v, &port)) cli_args_error(&a, "--port takes 0..65535, not '%s'", v);
    } else if ((v = cli_args_value(&a, "--tls-cert")) != NULL) {
      cert = v;
    } else if ((v = cli_args_value(&a, "--tls-key")) != NULL) {
      key = v;
    } else if ((v = cli_args_value(&a, "--token")) != NULL) {
      token = v;
    } else if (cli_args_flag(&a, "--allow-put")) {
      allow_put = true;
    } else {
      cli_args_unknown(&a);
    }
  }
  if (a.status) return a.status;
  if (dir == NULL) return cli_usage_error(cmd, "needs a DIR");
  if ((cert == NULL) != (key == NULL))
    return cli_usage_error(cmd, "--tls-cert and --tls-key go together");
  QvFlightServerOptions so = {.struct_size = sizeof so, .tls_cert_file = cert,
                              .tls_key_file = key, .token = token};
  QvFlightDirOptions dopt = {.struct_size = sizeof dopt, .allow_put = allow_put};
  QvFlightServer *server;
  QvError err = {0};
  QvStatus st = qv_flight_dir_server_new(&server, dir, host, port, &so, &dopt, &err);
  if (st) return cli_fail(cmd, &err);
  g_server = server;
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
  signal(SIGPIPE, SIG_IGN);
  bool v6 = strchr(host, ':') != NULL;
  int rc = QV_EXIT_OK;
  if (printf("%s://%s%s%s:%d\n", cert ? "grpc+tls" : "grpc", v6 ? "[" : "", host, v6 ? "]" : "",
             qv_flight_server_port(server)) < 0 ||
      fflush(stdout) != 0) {
    fprintf(stderr, "quiver %s: writing stdout failed\n", cmd);
    rc = QV_EXIT_INVALID;
  } else {
    st = qv_flight_server_run(server, &err);
    if (st) rc = cli_fail(cmd, &err);
  }
  g_server = NULL;
  qv_flight_server_free(server);
  return rc;
}

/* ---- client commands */

typedef struct ClientArgs {
  const char *token, *ca;
  QvFlightHeader headers[MAX_HEADERS];
  char *header_buf[MAX_HEADERS];
  size_t n_headers;
  int64_t timeout_ms;
} ClientArgs;

/* The options every client command takes; true when the current argument
 * was one of them. */
static bool client_option(QvCliArgs *a, ClientArgs *c) {
  const char *v;
  if ((v = cli_args_value(a, "--token")) != NULL) {
    c->token = v;
  } else if ((v = cli_args_value(a, "--tls-ca")) != NULL) {
    c->ca = v;
  } else if ((v = cli_args_value(a, "--header")) != NULL) {
    const char *eq = strchr(v, '=');
    if (eq == NULL || eq == v) {
      cli_args_error(a, "--header takes K=V, not '%s'", v);
    } else if (c->n_headers == MAX_HEADERS) {
      cli_args_error(a, "at most %d --header options", MAX_HEADERS);
    } else {
      char *copy = strdup(v);
      if (copy == NULL) {
        cli_args_error(a, "out of memory");
        return true;
      }
      copy[eq - v] = 0;
      c->header_buf[c->n_headers] = copy;
      c->headers[c->n_headers++] = (QvFlightHeader){copy, copy + (eq - v) + 1};
    }
  } else if ((v = cli_args_value(a, "--timeout")) != NULL) {
    char *end;
    double s = strtod(v, &end);
    if (end == v || *end || !(s > 0) || s > 86400.0 * 365)
      cli_args_error(a, "--timeout takes seconds (> 0), not '%s'", v);
    else
      c->timeout_ms = (int64_t)(s * 1000 + 0.5) > 0 ? (int64_t)(s * 1000 + 0.5) : 1;
  } else {
    return false;
  }
  return true;
}

static void client_args_free(ClientArgs *c) {
  for (size_t i = 0; i < c->n_headers; i++) free(c->header_buf[i]);
}

static QvStatus client_open(const char *uri, const ClientArgs *c, QvFlightClient **out,
                            QvError *err) {
  QvFlightClientOptions o = {.struct_size = sizeof o, .tls_ca_file = c->ca, .token = c->token,
                             .headers = c->headers, .n_headers = c->n_headers,
                             .timeout_ms = c->timeout_ms, .connect_timeout_ms = c->timeout_ms};
  return qv_flight_client_new(out, uri, &o, err);
}

/* PATH "a/b.arrow" as a PATH descriptor (segments point into *buf). */
static QvStatus path_descriptor(const char *path, QvFlightDescriptor *d, char **buf, char ***segs,
                                QvError *err) {
  *buf = strdup(path);
  size_t n = 1;
  for (const char *p = path; *p; p++) n += *p == '/';
  *segs = calloc(n, sizeof **segs);
  if (*buf == NULL || *segs == NULL) return qv_error_set(err, QV_ENOMEM, "out of memory");
  size_t k = 0;
  for (char *s = *buf, *slash;; s = slash + 1) {
    (*segs)[k++] = s;
    slash = strchr(s, '/');
    if (slash == NULL) break;
    *slash = 0;
  }
  *d = (QvFlightDescriptor){.type = QV_FLIGHT_DESCRIPTOR_PATH, .path = *segs, .n_path = k};
  return QV_OK;
}

/* Positional arguments of a client command: between min and max. */
typedef struct Positional {
  const char *v[4];
  int n;
} Positional;

/* writes_file: the command writes OUT, so it takes --no-fsync too. */
static int parse_client(const char *cmd, int argc, char **argv, int min, int max, Positional *p,
                        ClientArgs *c, const char *what, bool writes_file) {
  QvCliArgs a;
  cli_args_init(&a, cmd, argc, argv);
  const char *v;
  while (cli_args_next(&a)) {
    if ((v = cli_args_positional(&a)) != NULL) {
      if (p->n == max) cli_args_error(&a, "takes %s", what);
      else p->v[p->n++] = v;
    } else if (writes_file && cli_args_no_fsync(&a)) {
      continue;
    } else if (!client_option(&a, c)) {
      cli_args_unknown(&a);
    }
  }
  if (a.status) return a.status;
  if (p->n < min) return cli_usage_error(cmd, "takes %s", what);
  return QV_EXIT_OK;
}

/* One client command's state, from its arguments to its exit code. */
typedef struct Call {
  const char *cmd;
  Positional p;
  ClientArgs c;
  QvError err;
  QvFlightClient *cl;
  QvFlightDescriptor d; /* PATH (p.v[1]) once call_descriptor ran */
  char *buf, **segs;
} Call;

/* Parses the arguments (min..max positionals): 0 or the usage exit code. */
static int call_parse(Call *k, const char *cmd, int argc, char **argv, int min, int max,
                      const char *what, bool writes_file) {
  memset(k, 0, sizeof *k);
  k->cmd = cmd;
  int rc = parse_client(cmd, argc, argv, min, max, &k->p, &k->c, what, writes_file);
  if (rc) client_args_free(&k->c);
  return rc;
}

static QvStatus call_descriptor(Call *k) {
  return path_descriptor(k->p.v[1], &k->d, &k->buf, &k->segs, &k->err);
}

static QvStatus call_connect(Call *k) { return client_open(k->p.v[0], &k->c, &k->cl, &k->err); }

/* Releases the call and answers its exit code. */
static int call_end(Call *k, QvStatus st) {
  qv_flight_client_free(k->cl);
  free(k->buf);
  free(k->segs);
  client_args_free(&k->c);
  return st ? cli_fail(k->cmd, &k->err) : QV_EXIT_OK;
}

static int cmd_list(int argc, char **argv) {
  Call k;
  int rc = call_parse(&k, "flight list", argc, argv, 1, 1, "URI", false);
  if (rc) return rc;
  QvFlightInfo *infos = NULL;
  size_t n = 0;
  QvStatus st = call_connect(&k);
  if (!st) st = qv_flight_list_flights(k.cl, NULL, 0, &infos, &n, &k.err);
  for (size_t i = 0; !st && i < n; i++) {
    const QvFlightInfo *f = &infos[i];
    char *path = f->has_descriptor ? qv_flight_descriptor_path_string(&f->descriptor) : NULL;
    int w = printf("%s\t%lld rows\t%lld bytes\n", path ? path : "(command)",
                   (long long)f->total_records, (long long)f->total_bytes);
    qv_free(path);
    if (w < 0) st = qv_error_set(&k.err, QV_EIO, "writing stdout failed");
  }
  qv_flight_info_list_free(infos, n);
  return call_end(&k, st);
}

static void print_field(const struct ArrowSchema *f, int depth, bool *failed) {
  if (printf("%*s%s: %s%s\n", 2 * depth, "", f->name ? f->name : "", f->format,
             (f->flags & 2) ? "" : " not null") < 0)
    *failed = true;
  for (int64_t i = 0; i < f->n_children; i++) print_field(f->children[i], depth + 1, failed);
}

static int cmd_info(int argc, char **argv) {
  Call k;
  int rc = call_parse(&k, "flight info", argc, argv, 2, 2, "URI PATH", false);
  if (rc) return rc;
  QvFlightInfo info = {0};
  QvStatus st = call_descriptor(&k);
  if (!st) st = call_connect(&k);
  if (!st) st = qv_flight_get_flight_info(k.cl, &k.d, &info, &k.err);
  struct ArrowSchema schema = {0};
  if (!st) st = qv_flight_schema_decode(info.schema.data, info.schema.size, &schema, &k.err);
  if (!st) {
    bool failed = printf("path: %s\nrows: %lld\nbytes: %lld\nendpoints: %zu\nschema:\n",
                         k.p.v[1], (long long)info.total_records, (long long)info.total_bytes,
                         info.n_endpoints) < 0;
    for (int64_t i = 0; i < schema.n_children; i++) print_field(schema.children[i], 1, &failed);
    if (failed) st = qv_error_set(&k.err, QV_EIO, "writing stdout failed");
  }
  if (schema.release) schema.release(&schema);
  qv_flight_info_reset(&info);
  return call_end(&k, st);
}

static int cmd_get(int argc, char **argv) {
  Call k;
  int rc = call_parse(&k, "flight get", argc, argv, 2, 3, "URI PATH [OUT]", true);
  if (rc) return rc;
  const char *out = k.p.n == 3 ? k.p.v[2] : "-";
  if ((rc = cli_check_output(k.cmd, out)) != 0) {
    client_args_free(&k.c);
    return rc;
  }
  QvFlightInfo info = {0};
  QvStatus st = call_descriptor(&k);
  if (!st) st = call_connect(&k);
  if (!st) st = qv_flight_get_flight_info(k.cl, &k.d, &info, &k.err);
  struct ArrowArrayStream s = {0};
  if (!st) st = qv_flight_read_endpoints(k.cl, &info, 0, &s, &k.err);
  if (!st) st = cli_write_batches(out, &s, NULL, &k.err);
  if (s.release) s.release(&s);
  qv_flight_info_reset(&info);
  return call_end(&k, st);
}

static void print_result(void *ctx, const uint8_t *data, size_t size) {
  bool *failed = ctx;
  if (size && (fwrite(data, 1, size, stdout) != size || putchar('\n') == EOF)) *failed = true;
}

static int cmd_put(int argc, char **argv) {
  Call k;
  int rc = call_parse(&k, "flight put", argc, argv, 2, 3, "URI PATH [IN]", false);
  if (rc) return rc;
  const char *in = k.p.n == 3 ? k.p.v[2] : "-";
  QvSource *src = NULL;
  struct ArrowArrayStream s = {0};
  QvStatus st = call_descriptor(&k);
  if (!st) st = cli_source_new(in, &src, &k.err);
  if (!st) st = qv_rb_stream_reader_new(&s, src, cli_rb_read_options(), &k.err);
  qv_source_free(src);
  if (!st) st = call_connect(&k);
  bool failed = false;
  if (!st) st = qv_flight_do_put(k.cl, &k.d, &s, print_result, &failed, &k.err);
  if (!st && failed) st = qv_error_set(&k.err, QV_EIO, "writing stdout failed");
  if (s.release) s.release(&s);
  return call_end(&k, st);
}

static int cmd_action(int argc, char **argv) {
  Call k;
  int rc = call_parse(&k, "flight action", argc, argv, 2, 3, "URI TYPE [BODY]", false);
  if (rc) return rc;
  QvStatus st = call_connect(&k);
  QvFlightAction act = {.type = (char *)k.p.v[1]};
  if (k.p.n == 3) act.body = (QvFlightBytes){(uint8_t *)k.p.v[2], strlen(k.p.v[2])};
  QvFlightBytes *res = NULL;
  size_t n = 0;
  if (!st) st = qv_flight_do_action(k.cl, &act, &res, &n, &k.err);
  bool failed = false;
  for (size_t i = 0; !st && i < n; i++) print_result(&failed, res[i].data, res[i].size);
  if (!st && failed) st = qv_error_set(&k.err, QV_EIO, "writing stdout failed");
  qv_flight_bytes_list_free(res, n);
  return call_end(&k, st);
}

int qv_cmd_flight(int argc, char **argv) {
  if (argc < 1) return cli_usage_error("flight", "needs a subcommand: serve, list, info, get, put or action");
  const char *sub = argv[0];
  if (strcmp(sub, "serve") == 0) return cmd_serve(argc - 1, argv + 1);
  if (strcmp(sub, "list") == 0) return cmd_list(argc - 1, argv + 1);
  if (strcmp(sub, "info") == 0) return cmd_info(argc - 1, argv + 1);
  if (strcmp(sub, "get") == 0) return cmd_get(argc - 1, argv + 1);
  if (strcmp(sub, "put") == 0) return cmd_put(argc - 1, argv + 1);
  if (strcmp(sub, "action") == 0) return cmd_action(argc - 1, argv + 1);
  return cli_usage_error("flight", "unknown subcommand '%s' (serve, list, info, get, put, action)",
                         sub);
}
