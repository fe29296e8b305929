/* libFuzzer target: the integration JSON reader over arbitrary bytes.
 *
 * A rejected input must say why. An accepted one must survive the writer,
 * read back, and compare equal to itself and to what was read first; files
 * whose logical size is large (a huge `count` of nulls or runs, which the
 * reader accepts without allocating) skip the round trip to keep each run
 * short. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "quiver/integration_json.h"

#define MAX_ROWS ((int64_t)1 << 16)

#define CHECK(cond)                                                                      \
  do {                                                                                   \
    if (!(cond)) {                                                                       \
      fprintf(stderr, "fuzz_integration_json: %s:%d: check failed: %s\n", __FILE__,     \
              __LINE__, #cond);                                                          \
      abort();                                                                           \
    }                                                                                    \
  } while (0)

static int64_t max_length(const struct ArrowArray *a, int depth) {
  if (a == NULL || depth > 80) return 0;
  int64_t m = a->length;
  for (int64_t i = 0; i < a->n_children; i++) {
    int64_t c = max_length(a->children[i], depth + 1);
    if (c > m) m = c;
  }
  int64_t d = max_length(a->dictionary, depth + 1);
  return d > m ? d : m;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  QvJsonFile *f = NULL;
  QvError err;
  QvJsonReadOptions opt = {.struct_size = sizeof opt, .max_size = 1 << 20};
  QvSource *src;
  CHECK(qv_source_new_memory(&src, data, size, NULL, &err) == QV_OK);
  QvStatus st = qv_json_read(&f, src, &opt, &err);
  qv_source_free(src);
  if (st != QV_OK) {
    CHECK(f == NULL);
    CHECK(err.message[0] != '\0');
    return 0;
  }
  QvJsonData d;
  qv_json_file_data(f, &d);
  bool small = true;
  for (int64_t b = 0; b < d.n_batches; b++)
    if (max_length(d.batches[b], 0) > MAX_ROWS) small = false;
  if (small) {
    CHECK(qv_json_compare(&d, &d, NULL, &err) == QV_OK);
    uint8_t *text = NULL;
    size_t len = 0;
    QvSink *sink;
    CHECK(qv_sink_new_memory(&sink, &err) == QV_OK);
    CHECK(qv_json_write(&d, sink, NULL, &err) == QV_OK);
    CHECK(qv_sink_memory_take(sink, &text, &len, &err) == QV_OK);
    qv_sink_free(sink);
    QvJsonFile *g = NULL;
    CHECK(qv_source_new_memory(&src, text, len, NULL, &err) == QV_OK);
    st = qv_json_read(&g, src, NULL, &err);
    qv_source_free(src);
    if (st != QV_OK) fprintf(stderr, "re-read failed: %s\n", err.message);
    CHECK(st == QV_OK);
    QvJsonData dg;
    qv_json_file_data(g, &dg);
    QvJsonCompareOptions exact = {sizeof exact, -1};
    st = qv_json_compare(&d, &dg, &exact, &err);
    if (st != QV_OK) fprintf(stderr, "round trip differs: %s\n", err.message);
    CHECK(st == QV_OK);
    qv_json_file_free(g);
    qv_free(text);
  }
  qv_json_file_free(f);
  return 0;
}
