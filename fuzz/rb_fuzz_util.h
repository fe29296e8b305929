/* Helpers shared by the record batch fuzz targets (fuzz_stream_reader.c,
 * fuzz_file_reader.c); defined in rb_fuzz_util.c. Define FUZZ_NAME before
 * including (it names the target in CHECK failures). */
#ifndef QV_FUZZ_RB_UTIL_H
#define QV_FUZZ_RB_UTIL_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "quiver/recordbatch_ipc.h"

#define MAX_BATCHES 32
#define MAX_ROWS 16

#define CHECK(cond)                                                                         \
  do {                                                                                      \
    if (!(cond)) {                                                                          \
      fprintf(stderr, FUZZ_NAME ": %s:%d: check failed: %s\n", __FILE__, __LINE__, \
              #cond);                                                                       \
      abort();                                                                              \
    }                                                                                       \
  } while (0)

/* Reads every byte of every buffer of v and its children (ASan checks that
 * what the reader accepted is readable). */
void rb_fuzz_touch(const QvArrayView *v);
/* The first `rows` rows of every column formatted as JSON; free with
 * rb_fuzz_free_cells(c, rows * root->n_children). */
char **rb_fuzz_cells(const QvArrayView *root, int64_t rows);
void rb_fuzz_free_cells(char **c, int64_t n);

/* Threads and codecs for one input, from one of its bytes (deterministic):
 * 1..3 reader threads, and for the round trip's writer 1..3 threads and no
 * compression, LZ4 or ZSTD. The threaded path also takes small messages
 * (its size threshold is lowered for fuzzing). */
void rb_fuzz_pick(const uint8_t *data, size_t size, QvRbReadOptions *read,
                  QvRbWriteOptions *write);

/* Readers over caller memory (the source is freed here; readers hold their
 * own reference). */
QvStatus rb_fuzz_stream_open(struct ArrowArrayStream *s, const uint8_t *data, size_t size,
                             const QvRbReadOptions *o, QvError *e);
QvStatus rb_fuzz_file_open(QvRbFileReader **f, const uint8_t *data, size_t size,
                           const QvRbReadOptions *o, QvError *e);

#endif
