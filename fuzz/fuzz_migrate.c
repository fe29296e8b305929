/* libFuzzer target: quiver migrate over arbitrary bytes (quiver/migrate.h).
 *
 * The bytes are read as Tensor / SparseTensor messages and migrated to a
 * table (one sink, and one per group with split); a table migrate wrote
 * must go back to messages, and those must migrate again. The same bytes
 * are also read as a table for --to-messages. Output is bounded, so a lying
 * shape cannot make the target allocate without bound. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "quiver/io.h"
#include "quiver/migrate.h"

#define CHECK(cond)                                                                   \
  do {                                                                                \
    if (!(cond)) {                                                                    \
      fprintf(stderr, "fuzz_migrate: %s:%d: check failed: %s\n", __FILE__, __LINE__, \
              #cond);                                                                 \
      abort();                                                                        \
    }                                                                                 \
  } while (0)

static const QvMigrateOptions opts = {.struct_size = sizeof(QvMigrateOptions),
                                      .max_output_size = (int64_t)1 << 24};

typedef enum { TO_TABLE, TO_MESSAGES } Way;

/* Runs one direction over bytes; on success *out holds the output. */
static QvStatus run(const uint8_t *data, size_t size, Way way, uint8_t **out, size_t *out_size,
                    QvError *err) {
  QvSource *src;
  QvSink *sink;
  *out = NULL;
  *out_size = 0;
  QvStatus st = qv_source_new_memory(&src, data, size, NULL, err);
  if (st) return st;
  if ((st = qv_sink_new_memory(&sink, err)) == QV_OK) {
    st = way == TO_TABLE ? qv_migrate(src, sink, &opts, NULL, err)
                         : qv_migrate_to_messages(src, sink, &opts, NULL, err);
    if (st == QV_OK) CHECK(qv_sink_memory_take(sink, out, out_size, err) == QV_OK);
    qv_sink_free(sink);
  }
  qv_source_free(src);
  return st;
}

static QvStatus open_memory(void *ctx, const char *group, QvSink **sink, QvError *error) {
  int *n = ctx;
  CHECK(group != NULL && group[0] != '\0');
  (*n)++;
  return qv_sink_new_memory(sink, error);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  QvError err;
  uint8_t *table, *msgs, *again;
  size_t tsize, msize, asize;
  if (run(data, size, TO_TABLE, &table, &tsize, &err) == QV_OK) {
    /* what migrate wrote goes back, and that migrates again */
    QvStatus st = run(table, tsize, TO_MESSAGES, &msgs, &msize, &err);
    if (st != QV_OK) fprintf(stderr, "fuzz_migrate: back: %s\n", err.message);
    CHECK(st == QV_OK);
    st = run(msgs, msize, TO_TABLE, &again, &asize, &err);
    if (st != QV_OK) fprintf(stderr, "fuzz_migrate: again: %s\n", err.message);
    CHECK(st == QV_OK);
    qv_free(again);
    qv_free(msgs);
    qv_free(table);
  }
  QvSource *src;
  if (qv_source_new_memory(&src, data, size, NULL, &err) == QV_OK) {
    int groups = 0;
    QvMigrateStats stats;
    if (qv_migrate_split(src, open_memory, &groups, &opts, &stats, &err) == QV_OK)
      CHECK(stats.tables == groups && groups >= 1);
    qv_source_free(src);
  }
  if (run(data, size, TO_MESSAGES, &msgs, &msize, &err) == QV_OK) qv_free(msgs);
  return 0;
}
