/* The benchmark record batches shared by bench_recordbatch and
 * bench_compression: int64 ids, float64 values, short utf8 names and a
 * nullable int32 count (every tenth row null); about 31 MB of buffers per
 * million rows. Header-only: each .c file in bench/ is its own program. */
#ifndef QV_BENCH_RB_DATA_H
#define QV_BENCH_RB_DATA_H

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "quiver/array.h"

static void bench_rb_check(QvStatus st, const QvError *e, const char *what) {
  if (st == QV_OK) return;
  fprintf(stderr, "bench: %s: %s (%s)\n", what, e->message, qv_status_name(st));
  exit(1);
}

static void bench_rb_schema(struct ArrowSchema *s) {
  QvError e;
  bench_rb_check(qv_arrow_schema_init(s, "+s", "", 0, 4, &e), &e, "schema");
  bench_rb_check(qv_arrow_schema_init(s->children[0], "l", "id", 0, 0, &e), &e, "schema");
  bench_rb_check(qv_arrow_schema_init(s->children[1], "g", "value", 0, 0, &e), &e, "schema");
  bench_rb_check(qv_arrow_schema_init(s->children[2], "u", "name", 0, 0, &e), &e, "schema");
  bench_rb_check(qv_arrow_schema_init(s->children[3], "i", "count", ARROW_FLAG_NULLABLE, 0, &e), &e,
                 "schema");
}

/* Rows [first, first + rows) of the benchmark table. */
static void bench_rb_batch(const struct ArrowSchema *s, int64_t first, int64_t rows,
                           struct ArrowArray *out) {
  QvError e;
  bench_rb_check(qv_array_init_from_schema(out, s, &e), &e, "init");
  char text[32];
  for (int64_t r = first; r < first + rows; r++) {
    bench_rb_check(qv_array_append_int(out->children[0], r, &e), &e, "append");
    bench_rb_check(qv_array_append_double(out->children[1], (double)r * 0.5, &e), &e, "append");
    int n = snprintf(text, sizeof text, "n%" PRId64, (r * 7919) % 1000000);
    bench_rb_check(qv_array_append_bytes(out->children[2], text, n, &e), &e, "append");
    if (r % 10 == 3)
      bench_rb_check(qv_array_append_null(out->children[3], 1, &e), &e, "append");
    else
      bench_rb_check(qv_array_append_int(out->children[3], (int32_t)(r % 100000), &e), &e, "append");
    bench_rb_check(qv_array_finish_element(out, &e), &e, "append");
  }
  bench_rb_check(qv_array_finish_building(out, QV_VALIDATE_NONE, &e), &e, "finish");
}

#endif
