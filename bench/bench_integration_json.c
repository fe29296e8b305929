/* Integration JSON throughput: a 1,000,000-row batch of mixed types (int64,
 * float64, short utf8, nullable int32, bool, dictionary-encoded utf8)
 *   JSON -> Arrow: qv_json_read of the text + writing an Arrow file to memory
 *   Arrow -> JSON: reading that file + qv_json_write
 * each against jansson alone on the same text in the same run: json_loadb
 * with the reader's flags plus json_decref (parse to a tree and free it, as
 * the reader must) for the first, json_dumps of that tree for the second.
 * The conversion should cost at most 1.5x what jansson alone costs. The
 * ratios compare process CPU time (both sides run on this one thread), so
 * that other processes on a shared machine do not skew them; wall times are
 * printed too.
 *
 *   bench_integration_json [rows]
 *
 * Each figure is the best of REPEAT repetitions; the ratio of each
 * repetition is printed too, to show the spread. */
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "quiver/integration_json.h"
#include "quiver/io.h"
#include "quiver/recordbatch_ipc.h"

#define REPEAT 5

typedef struct Stamp {
  double wall, cpu;
} Stamp;

static double seconds(clockid_t clock) {
  struct timespec ts;
  clock_gettime(clock, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static Stamp stamp(void) {
  Stamp s = {seconds(CLOCK_MONOTONIC), seconds(CLOCK_PROCESS_CPUTIME_ID)};
  return s;
}

static Stamp since(Stamp a, Stamp b) {
  Stamp s = {b.wall - a.wall, b.cpu - a.cpu};
  return s;
}

typedef Stamp Best;
#define BEST_INIT {1e30, 1e30}

static void keep(Best *best, Stamp s) {
  if (s.wall < best->wall) best->wall = s.wall;
  if (s.cpu < best->cpu) best->cpu = s.cpu;
}

static QvError error;

static void die(const char *what, QvStatus st) {
  fprintf(stderr, "bench_integration_json: %s: %s (%s)\n", what, error.message,
          qv_status_name(st));
  exit(1);
}

#define TRY(what, call)             \
  do {                              \
    QvStatus st_ = (call);          \
    if (st_) die(what, st_);        \
  } while (0)

static void make_schema(struct ArrowSchema *s) {
  TRY("schema", qv_arrow_schema_init(s, "+s", "", 0, 6, &error));
  TRY("schema", qv_arrow_schema_init(s->children[0], "l", "id", 0, 0, &error));
  TRY("schema", qv_arrow_schema_init(s->children[1], "g", "value", 0, 0, &error));
  TRY("schema", qv_arrow_schema_init(s->children[2], "u", "name", 0, 0, &error));
  TRY("schema", qv_arrow_schema_init(s->children[3], "i", "count", ARROW_FLAG_NULLABLE, 0, &error));
  TRY("schema", qv_arrow_schema_init(s->children[4], "b", "flag", 0, 0, &error));
  TRY("schema", qv_arrow_schema_init(s->children[5], "s", "kind", ARROW_FLAG_NULLABLE, 0, &error));
  TRY("schema", qv_arrow_schema_alloc_dictionary(s->children[5], &error));
  TRY("schema", qv_arrow_schema_init(s->children[5]->dictionary, "u", "", ARROW_FLAG_NULLABLE, 0, &error));
}

static void make_batch(const struct ArrowSchema *s, int64_t rows, struct ArrowArray *out) {
  TRY("init", qv_array_init_from_schema(out, s, &error));
  static const char *const kinds[] = {"alpha", "beta", "gamma", "delta"};
  struct ArrowArray *dict = out->children[5]->dictionary;
  for (int k = 0; k < 4; k++) qv_array_append_bytes(dict, kinds[k], (int64_t)strlen(kinds[k]), NULL);
  char text[32];
  for (int64_t r = 0; r < rows; r++) {
    qv_array_append_int(out->children[0], r * 1000003, NULL);
    qv_array_append_double(out->children[1], (double)(r % 100000) * 0.25, NULL);
    int n = snprintf(text, sizeof text, "n%" PRId64, (r * 7919) % 1000000);
    qv_array_append_bytes(out->children[2], text, n, NULL);
    if (r % 10 == 3)
      qv_array_append_null(out->children[3], 1, NULL);
    else
      qv_array_append_int(out->children[3], (int32_t)(r % 65536), NULL);
    qv_array_append_int(out->children[4], r % 3 == 0, NULL);
    qv_array_append_int(out->children[5], r % 4, NULL);
    qv_array_finish_element(out, NULL);
  }
  TRY("finish", qv_array_finish_building(out, QV_VALIDATE_FULL, &error));
}

/* JSON -> Arrow: parse and convert, then write an Arrow file to memory. */
static void json_to_arrow(const char *text, size_t len, uint8_t **bytes, size_t *size) {
  QvJsonFile *f;
  QvSource *src;
  TRY("json source", qv_source_new_memory(&src, text, len, NULL, &error));
  TRY("json read", qv_json_read(&f, src, NULL, &error));
  qv_source_free(src);
  QvJsonData d;
  qv_json_file_data(f, &d);
  QvRbWriteOptions o;
  memset(&o, 0, sizeof o);
  o.format = QV_IPC_FORMAT_FILE;
  o.dictionary_ids = d.dictionary_ids;
  o.n_dictionary_ids = d.n_dictionary_ids;
  QvSink *sink;
  QvRbWriter *w;
  TRY("sink", qv_sink_new_memory(&sink, &error));
  TRY("writer", qv_rb_writer_new(&w, d.schema, sink, &o, &error));
  for (int64_t i = 0; i < d.n_batches; i++) TRY("write", qv_rb_writer_write(w, d.batches[i], &error));
  TRY("finish", qv_rb_writer_finish(w, &error));
  qv_rb_writer_free(w);
  TRY("take", qv_sink_memory_take(sink, bytes, size, &error));
  qv_sink_free(sink);
  qv_json_file_free(f);
}

/* Arrow -> JSON: read the file (full validation, as the CLI does) and
 * write its JSON. */
static void arrow_to_json(const uint8_t *bytes, size_t size, char **text, size_t *len) {
  QvSource *src;
  TRY("source", qv_source_new_memory(&src, bytes, size, NULL, &error));
  QvRbReadOptions ro;
  memset(&ro, 0, sizeof ro);
  ro.validate = QV_VALIDATE_FULL;
  QvRbFileReader *r;
  TRY("reader", qv_rb_file_reader_new(&r, src, &ro, &error));
  qv_source_free(src);
  struct ArrowSchema schema;
  TRY("schema", qv_rb_file_get_schema(r, &schema, &error));
  int64_t n = qv_rb_file_n_batches(r);
  struct ArrowArray *b = calloc((size_t)(n ? n : 1), sizeof *b);
  const struct ArrowArray **bp = calloc((size_t)(n ? n : 1), sizeof *bp);
  if (b == NULL || bp == NULL) abort();
  for (int64_t i = 0; i < n; i++) {
    TRY("batch", qv_rb_file_read_batch(r, i, &b[i], &error));
    bp[i] = &b[i];
  }
  QvJsonData d;
  memset(&d, 0, sizeof d);
  d.schema = &schema;
  d.batches = bp;
  d.n_batches = n;
  qv_rb_file_dictionary_ids(r, &d.dictionary_ids, &d.n_dictionary_ids);
  QvJsonWriteOptions wo;
  memset(&wo, 0, sizeof wo);
  wo.indent = -1;
  QvSink *sink;
  TRY("json sink", qv_sink_new_memory(&sink, &error));
  TRY("json write", qv_json_write(&d, sink, &wo, &error));
  TRY("json take", qv_sink_memory_take(sink, (uint8_t **)text, len, &error));
  qv_sink_free(sink);
  for (int64_t i = 0; i < n; i++) b[i].release(&b[i]);
  free(b);
  free(bp);
  schema.release(&schema);
  qv_rb_file_reader_free(r);
}

int main(int argc, char **argv) {
  int64_t rows = argc > 1 ? strtoll(argv[1], NULL, 10) : 1000000;
  if (rows <= 0) {
    fprintf(stderr, "usage: bench_integration_json [rows]\n");
    return 2;
  }
  struct ArrowSchema schema;
  struct ArrowArray batch;
  make_schema(&schema);
  make_batch(&schema, rows, &batch);
  const struct ArrowArray *bp[1] = {&batch};
  QvJsonData d = {&schema, bp, 1, NULL, 0};
  QvJsonWriteOptions wo;
  memset(&wo, 0, sizeof wo);
  wo.indent = -1;
  char *text;
  size_t len;
  QvSink *sink;
  TRY("json sink", qv_sink_new_memory(&sink, &error));
  TRY("json write", qv_json_write(&d, sink, &wo, &error));
  TRY("json take", qv_sink_memory_take(sink, (uint8_t **)&text, &len, &error));
  qv_sink_free(sink);
  printf("%" PRId64 " rows (int64, float64, utf8, nullable int32, bool, dictionary utf8): "
         "%.1f MB of JSON\n", rows, (double)len / 1e6);

  /* best wall and CPU time of each step; the ratios use process CPU time,
   * which time slices lost to other processes on a shared machine do not
   * inflate (both sides run on this one thread) */
  Best load = BEST_INIT, parse = BEST_INIT, dump = BEST_INIT, j2a = BEST_INIT, a2j = BEST_INIT;
  double ratio_j2a[REPEAT], ratio_a2j[REPEAT];
  uint8_t *arrow = NULL;
  size_t arrow_size = 0;
  for (int rep = 0; rep < REPEAT; rep++) {
    /* jansson alone: parse the text to a tree, dump the tree back, free
     * it; the flags the reader parses with, the tree freed as the reader
     * must */
    Stamp t0 = stamp();
    json_error_t je;
    json_t *root = json_loadb(text, len, JSON_ALLOW_NUL | JSON_REJECT_DUPLICATES, &je);
    Stamp t1 = stamp();
    if (root == NULL) {
      fprintf(stderr, "jansson: %s\n", je.text);
      return 1;
    }
    char *dumped = json_dumps(root, JSON_COMPACT);
    Stamp t2 = stamp();
    if (dumped == NULL) abort();
    free(dumped);
    json_decref(root);
    Stamp t3 = stamp();
    Stamp p = {t1.wall - t0.wall + t3.wall - t2.wall, t1.cpu - t0.cpu + t3.cpu - t2.cpu};
    Stamp d = since(t1, t2);
    keep(&load, since(t0, t1));
    keep(&parse, p);
    keep(&dump, d);

    if (arrow) qv_free(arrow);
    t0 = stamp();
    json_to_arrow(text, len, &arrow, &arrow_size);
    t1 = stamp();
    char *back;
    size_t back_len;
    arrow_to_json(arrow, arrow_size, &back, &back_len);
    t2 = stamp();
    if (back_len != len || memcmp(back, text, len) != 0) {
      fprintf(stderr, "bench_integration_json: the round trip changed the JSON\n");
      return 1;
    }
    free(back);
    keep(&j2a, since(t0, t1));
    keep(&a2j, since(t1, t2));
    ratio_j2a[rep] = since(t0, t1).cpu / p.cpu;
    ratio_a2j[rep] = since(t1, t2).cpu / d.cpu;
  }
  printf("jansson json_loadb:         %8.1f ms (cpu %.1f ms)\n", load.wall * 1e3, load.cpu * 1e3);
  printf("jansson json_loadb + free:  %8.1f ms (cpu %.1f ms; the parse the ratio uses)\n",
         parse.wall * 1e3, parse.cpu * 1e3);
  printf("jansson json_dumps:         %8.1f ms (cpu %.1f ms)\n", dump.wall * 1e3, dump.cpu * 1e3);
  printf("JSON -> Arrow file:         %8.1f ms (cpu %.1f ms)  %6.2f Mrows/s  "
         "%.2fx jansson parse (target <= 1.5x)\n",
         j2a.wall * 1e3, j2a.cpu * 1e3, (double)rows / j2a.cpu / 1e6, j2a.cpu / parse.cpu);
  printf("Arrow file -> JSON:         %8.1f ms (cpu %.1f ms)  %6.2f Mrows/s  "
         "%.2fx jansson dump (target <= 1.5x)\n",
         a2j.wall * 1e3, a2j.cpu * 1e3, (double)rows / a2j.cpu / 1e6, a2j.cpu / dump.cpu);
  printf("per repetition (cpu), JSON -> Arrow:");
  for (int rep = 0; rep < REPEAT; rep++) printf(" %.2fx", ratio_j2a[rep]);
  printf("; Arrow -> JSON:");
  for (int rep = 0; rep < REPEAT; rep++) printf(" %.2fx", ratio_a2j[rep]);
  printf("\n");
  qv_free(arrow);
  qv_free(text);
  batch.release(&batch);
  schema.release(&schema);
  return 0;
}
