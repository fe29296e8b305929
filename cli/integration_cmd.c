/* quiver integration: the command line through which Arrow's integration
 * tests drive an implementation (archery's tester for Arrow C++ passes the
 * same options):
 *
 *   quiver integration --mode=validate      --json=F.json --arrow=F.arrow_file
 *   quiver integration --mode=json-to-arrow --json=F.json --arrow=F.arrow_file
 *   quiver integration --mode=arrow-to-json --arrow=F.arrow_file --json=F.json
 *
 * JSON input may be gzip-compressed (.json.gz). The Arrow input is read with
 * full validation; a stream is accepted where a file is expected. Shared
 * dictionaries keep their ids in both directions, and validate checks that
 * the fields sharing one in the JSON share one in the Arrow file. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "cli.h"
#include "output.h"
#include "quiver/integration_json.h"
#include "quiver/io.h"
#include "quiver/ipc.h"
#include "quiver/recordbatch_ipc.h"

#define CMD "integration"

/* Everything an Arrow file or stream holds, read in full. */
typedef struct ArrowInput {
  struct ArrowSchema schema;
  struct ArrowArray *batches;
  const struct ArrowArray **ptrs;
  int64_t n_batches, cap;
  int64_t *ids; /* copied: the reader that knows them goes first */
  int64_t n_ids;
} ArrowInput;

static void arrow_input_reset(ArrowInput *in) {
  if (in->schema.release) in->schema.release(&in->schema);
  for (int64_t i = 0; i < in->n_batches; i++)
    if (in->batches[i].release) in->batches[i].release(&in->batches[i]);
  free(in->batches);
  free(in->ptrs);
  free(in->ids);
  memset(in, 0, sizeof *in);
}

static QvStatus keep_ids(ArrowInput *in, const int64_t *ids, int64_t n, QvError *error) {
  if (n == 0) return QV_OK;
  in->ids = malloc((size_t)n * sizeof *ids);
  if (in->ids == NULL) return qv_error_set(error, QV_ENOMEM, "out of memory");
  memcpy(in->ids, ids, (size_t)n * sizeof *ids);
  in->n_ids = n;
  return QV_OK;
}

/* Room for one more batch; the new slot is zeroed. */
static struct ArrowArray *next_slot(ArrowInput *in, QvError *error) {
  if (in->n_batches == in->cap) {
    int64_t cap = in->cap ? in->cap * 2 : 8;
    struct ArrowArray *b = realloc(in->batches, (size_t)cap * sizeof *b);
    if (b == NULL) {
      qv_error_set(error, QV_ENOMEM, "out of memory");
      return NULL;
    }
    in->batches = b;
    in->cap = cap;
  }
  struct ArrowArray *slot = &in->batches[in->n_batches];
  memset(slot, 0, sizeof *slot);
  return slot;
}

static QvStatus read_file(QvSource *src, ArrowInput *in, QvError *error) {
  QvRbFileReader *r;
  QvStatus st = qv_rb_file_reader_new(&r, src, cli_rb_read_options(), error);
  if (st) return st;
  const int64_t *ids;
  int64_t n_ids;
  qv_rb_file_dictionary_ids(r, &ids, &n_ids);
  st = keep_ids(in, ids, n_ids, error);
  if (!st) st = qv_rb_file_get_schema(r, &in->schema, error);
  for (int64_t i = 0; !st && i < qv_rb_file_n_batches(r); i++) {
    struct ArrowArray *slot = next_slot(in, error);
    if (slot == NULL) st = QV_ENOMEM;
    else if (!(st = qv_rb_file_read_batch(r, i, slot, error))) in->n_batches++;
  }
  qv_rb_file_reader_free(r);
  return st;
}

static QvStatus read_stream(QvSource *src, ArrowInput *in, QvError *error) {
  struct ArrowArrayStream s;
  QvStatus st = qv_rb_stream_reader_new(&s, src, cli_rb_read_options(), error);
  if (st) return st;
  const int64_t *ids;
  int64_t n_ids;
  qv_rb_stream_dictionary_ids(&s, &ids, &n_ids);
  st = keep_ids(in, ids, n_ids, error);
  if (!st) st = qv_rb_stream_get_schema(&s, &in->schema, error);
  while (!st) {
    struct ArrowArray *slot = next_slot(in, error);
    if (slot == NULL) {
      st = QV_ENOMEM;
      break;
    }
    st = qv_rb_stream_get_next(&s, slot, error);
    if (!st) in->n_batches++;
  }
  s.release(&s);
  return st == QV_EOS ? QV_OK : st;
}

static QvStatus read_arrow(const char *path, ArrowInput *in, QvError *error) {
  memset(in, 0, sizeof *in);
  QvSource *src;
  QvStatus st = qv_source_new_path(&src, path, error);
  if (st) return st;
  /* the format decides the reader: archery hands files, people streams too */
  QvIpcReader *probe;
  st = qv_ipc_reader_new(&probe, src, NULL, error);
  bool file = !st && qv_ipc_reader_format(probe) == QV_IPC_FORMAT_FILE;
  if (!st) qv_ipc_reader_free(probe);
  if (!st) st = file ? read_file(src, in, error) : read_stream(src, in, error);
  qv_source_free(src);
  if (!st && in->n_batches > 0) {
    in->ptrs = malloc((size_t)in->n_batches * sizeof *in->ptrs);
    if (in->ptrs == NULL) st = qv_error_set(error, QV_ENOMEM, "out of memory");
    for (int64_t i = 0; !st && i < in->n_batches; i++) in->ptrs[i] = &in->batches[i];
  }
  if (st) {
    arrow_input_reset(in);
    if (strncmp(error->message, path, strlen(path)) != 0) qv_error_prefix(error, "%s", path);
  }
  return st;
}

static void arrow_input_data(const ArrowInput *in, QvJsonData *d) {
  memset(d, 0, sizeof *d);
  d->schema = &in->schema;
  d->batches = in->ptrs;
  d->n_batches = in->n_batches;
  d->dictionary_ids = in->ids;
  d->n_dictionary_ids = in->n_ids;
}

/* --accept-unsigned-spelling: arrow-js's spelling of negative 64-bit values
 * and decimals (-1 as 2^64 - 1) is read as the bits it spells. */
static bool g_unsigned_spelling;

static QvStatus read_json(const char *path, QvJsonFile **out, QvError *error) {
  QvJsonReadOptions o = {.struct_size = sizeof o, .accept_unsigned_spelling = g_unsigned_spelling,
                         .accept_decimal_overflow = cli_accept_decimal_overflow()};
  QvSource *src;
  QvStatus st = qv_source_new_path(&src, path, error);
  if (st) return st;
  st = qv_json_read(out, src, &o, error);
  qv_source_free(src);
  if (st && strncmp(error->message, path, strlen(path)) != 0) qv_error_prefix(error, "%s", path);
  return st;
}

/* ---- the modes */

static int validate(const char *json, const char *arrow) {
  QvError e;
  qv_error_clear(&e);
  QvJsonFile *jf;
  if (read_json(json, &jf, &e)) return cli_fail(CMD, &e);
  ArrowInput in;
  if (read_arrow(arrow, &in, &e)) {
    qv_json_file_free(jf);
    return cli_fail(CMD, &e);
  }
  QvJsonData expected, found;
  qv_json_file_data(jf, &expected);
  arrow_input_data(&in, &found);
  QvStatus st = qv_json_compare(&expected, &found, NULL, &e);
  arrow_input_reset(&in);
  qv_json_file_free(jf);
  if (st) {
    /* a difference is the answer "invalid", whatever status carried it */
    if (st == QV_EINVAL) qv_error_prefix(&e, "%s differs from %s", arrow, json);
    return cli_fail(CMD, &e);
  }
  return QV_EXIT_OK;
}

typedef struct JsonToArrow {
  const QvJsonData *data;
} JsonToArrow;

static QvStatus write_arrow(QvSink *sink, const void *ctx, QvError *error) {
  const QvJsonData *d = ((const JsonToArrow *)ctx)->data;
  QvRbWriteOptions o;
  memset(&o, 0, sizeof o);
  o.format = QV_IPC_FORMAT_FILE;
  o.dictionary_ids = d->dictionary_ids;
  o.n_dictionary_ids = d->dictionary_ids ? d->n_dictionary_ids : 0;
  QvRbWriter *w;
  QvStatus st = qv_rb_writer_new(&w, d->schema, sink, &o, error);
  if (st) return st;
  for (int64_t i = 0; !st && i < d->n_batches; i++) {
    st = qv_rb_writer_write(w, d->batches[i], error);
    if (st) qv_error_prefix(error, "batch %lld", (long long)i);
  }
  if (!st) st = qv_rb_writer_finish(w, error);
  qv_rb_writer_free(w);
  return st;
}

static int json_to_arrow(const char *json, const char *arrow) {
  int rc = cli_check_output(CMD, arrow);
  if (rc) return rc;
  QvError e;
  qv_error_clear(&e);
  QvJsonFile *jf;
  if (read_json(json, &jf, &e)) return cli_fail(CMD, &e);
  QvJsonData d;
  qv_json_file_data(jf, &d);
  JsonToArrow ctx = {&d};
  QvStatus st = cli_write_output(arrow, write_arrow, &ctx, &e);
  qv_json_file_free(jf);
  return st ? cli_fail(CMD, &e) : QV_EXIT_OK;
}

typedef struct ArrowToJson {
  const QvJsonData *data;
  const QvJsonWriteOptions *options;
} ArrowToJson;

static QvStatus write_json(QvSink *sink, const void *ctx, QvError *error) {
  const ArrowToJson *a = ctx;
  return qv_json_write(a->data, sink, a->options, error);
}

/* The text streams to OUT (never whole in memory); --max-output bounds it. */
static int arrow_to_json(const char *arrow, const char *json, int64_t max_output) {
  QvError e;
  qv_error_clear(&e);
  ArrowInput in;
  if (read_arrow(arrow, &in, &e)) return cli_fail(CMD, &e);
  QvJsonData d;
  arrow_input_data(&in, &d);
  QvJsonWriteOptions o = {.struct_size = sizeof o, .max_output_size = max_output};
  ArrowToJson ctx = {&d, &o};
  QvStatus st = cli_write_output(json, write_json, &ctx, &e);
  arrow_input_reset(&in);
  if (st == QV_ELIMIT) cli_name_max_output(&e);
  return st ? cli_fail(CMD, &e) : QV_EXIT_OK;
}

int qv_cmd_integration(int argc, char **argv) {
  static const char *const modes[] = {"validate", "json-to-arrow", "arrow-to-json", NULL};
  int mode = -1;
  const char *json = NULL, *arrow = NULL, *v;
  int64_t max_output = 0;
  QvCliArgs a;
  cli_args_init(&a, CMD, argc, argv);
  while (cli_args_next(&a)) {
    int k;
    if ((k = cli_args_choice(&a, "--mode", modes)) >= 0) mode = k;
    else if ((v = cli_args_value(&a, "--json")) != NULL) json = v;
    else if ((v = cli_args_value(&a, "--arrow")) != NULL) arrow = v;
    else if (cli_args_size(&a, "--max-output", &max_output)) continue;
    else if (cli_args_flag(&a, "--accept-unsigned-spelling")) g_unsigned_spelling = true;
    else if (cli_args_quirks(&a)) continue;
    else if (cli_args_no_fsync(&a)) continue;
    else cli_args_unknown(&a);
  }
  if (a.status) return a.status;
  if (mode < 0) return cli_usage_error(CMD, "needs --mode=validate|json-to-arrow|arrow-to-json");
  if (json == NULL || arrow == NULL) return cli_usage_error(CMD, "needs --json=FILE and --arrow=FILE");
  /* inputs are read by path (gzip is recognised by its magic); only an
   * output may be '-' */
  if ((mode != 2 && strcmp(json, "-") == 0) || (mode != 1 && strcmp(arrow, "-") == 0))
    return cli_usage_error(CMD, "an input must be a file, not '-'");
  if (max_output && mode != 2) return cli_usage_error(CMD, "--max-output applies to arrow-to-json");
  if (g_unsigned_spelling && mode == 2)
    return cli_usage_error(CMD, "--accept-unsigned-spelling applies to reading JSON (validate, "
                              "json-to-arrow)");
  switch (mode) {
    case 0: return validate(json, arrow);
    case 1: return json_to_arrow(json, arrow);
    default: return arrow_to_json(arrow, json, max_output);
  }
}
