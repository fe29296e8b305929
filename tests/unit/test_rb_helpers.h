/* Helpers shared by the record batch tests: schemas from a compact spec,
 * deterministic values for any type, writing to memory and reading back,
 * and cell-by-cell comparison through the JSON formatter.
 *
 * Spec grammar: spec := format [ "(" spec { ";" spec } ")" ] [ "{" spec "}" ]
 * where the parenthesized specs are the children and the braced spec is the
 * dictionary (values) of a dictionary-encoded field, e.g. "+l(i)",
 * "+s(u;i{u})", "+m(+s(u;l))", "+us:0,5(i;u)". */
#ifndef QV_TEST_RB_HELPERS_H
#define QV_TEST_RB_HELPERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "quiver/array.h"
#include "quiver/recordbatch_ipc.h"
#include "test_util.h"

/* fail_msg unless st is QV_OK. */
void rbt_check(QvStatus st, const QvError *e, const char *what);
/* qv_rb_stream_get_next: true at the end of the stream (QV_EOS, out
 * released), false with a batch in *out; anything else fails the test. */
bool rbt_next(struct ArrowArrayStream *s, struct ArrowArray *out);

/* Schema of one spec at *p (advanced past it), named `name`. */
void rbt_parse(struct ArrowSchema *out, const char **p, const char *name, bool nullable);
/* Schema of a whole spec. */
void rbt_schema(struct ArrowSchema *out, const char *spec, const char *name);
/* A root struct with one column per spec (names "col0", "col1", ...). */
void rbt_batch_schema(struct ArrowSchema *out, const char *const *specs, int n);

/* Shifts the values generated for dictionaries (to make them differ). */
extern int64_t rbt_dict_seed;
void rbt_ok(QvStatus st, const char *what, const struct ArrowSchema *s);
/* Appends a deterministic value number i (null for some i when allowed). */
void rbt_append(struct ArrowArray *a, const struct ArrowSchema *s, int64_t i, bool allow_null,
                int depth);
/* Builds a batch of `rows` rows for the root struct schema. */
void rbt_build(struct ArrowArray *out, const struct ArrowSchema *schema, int64_t rows,
               int64_t seed);

/* JSON text of every cell, row-major, in one malloc'd string per cell. */
typedef struct RbtCells {
  int64_t rows, cols;
  char **cells;
} RbtCells;

RbtCells rbt_cells(const struct ArrowArray *a, const struct ArrowSchema *s);
void rbt_cells_free(RbtCells *c);
void rbt_assert_same_cells(const RbtCells *want, const RbtCells *got, const char *what);

/* Write options of a format, codec, level and thread count; the rest default. */
QvRbWriteOptions rbt_write_options(QvIpcFormat format, QvCompression codec, int level, int threads);
/* Writes batches through a memory sink (*out: malloc'd, free() it). */
void rbt_write(const struct ArrowSchema *schema, struct ArrowArray *const *batches, int n,
               const QvRbWriteOptions *opt, uint8_t **out, size_t *size);
/* The bytes of a memory sink as a malloc'd copy (free() it). */
void rbt_take(QvSink *sink, uint8_t **out, size_t *size);
/* The messages of an IPC stream or file body as letters: S schema, D
 * dictionary, d delta dictionary, R record batch (at most cap - 1). */
void rbt_message_kinds(const uint8_t *data, size_t size, char *out, size_t cap);

/* Readers over caller memory or a path (the source is freed here: readers
 * hold their own reference). */
QvStatus rbt_stream_open(struct ArrowArrayStream *s, const uint8_t *data, size_t size,
                         const QvRbReadOptions *o, QvError *e);
QvStatus rbt_file_open(QvRbFileReader **f, const uint8_t *data, size_t size,
                       const QvRbReadOptions *o, QvError *e);
QvStatus rbt_stream_open_path(struct ArrowArrayStream *s, const char *path,
                              const QvRbReadOptions *o, QvError *e);
QvStatus rbt_file_open_path(QvRbFileReader **f, const char *path, const QvRbReadOptions *o,
                            QvError *e);
/* Reads every batch of a stream (or file read as a stream) with full
 * validation; returns the count. */
int rbt_read_stream(const uint8_t *data, size_t size, struct ArrowSchema *schema,
                    struct ArrowArray *batches, int max);

/* Asserts that `data` (batches written as a stream, or as a file when
 * `file`) reads back with full validation through the stream reader and
 * (files) the file reader, exactly n <= 8 batches whose cells are
 * want[0, n). */
void rbt_assert_reads_back(const uint8_t *data, size_t size, bool file, const RbtCells *want,
                           int n, const char *what);

/* Schema.endianness of a written stream or file. */
int16_t rbt_written_endianness(const uint8_t *data, size_t size);

/* Every type the byte-order tests write (test_rb_endian, test_rb_pyswap). */
extern const char *const rbt_order_specs[];
extern const int rbt_n_order_specs;
/* The root struct of the one column `spec` and a batch of it. */
void rbt_spec_batch(const char *spec, int64_t rows, int64_t seed, struct ArrowSchema *schema,
                    struct ArrowArray *batch);

/* Completes a root struct of one dictionary-encoded column, initialised
 * from its schema and with the dictionary values appended by the caller:
 * appends the indices (a negative one: null) and finishes the batch with
 * full validation. */
void rbt_dict_indices(struct ArrowArray *out, const int *indices, int n);

/* ---- rewriting streams message by message */

/* Frames one message (8-byte alignment) and its body into a sink. */
void rbt_put_message(QvSink *sink, const QvMessage *m, const void *body, size_t body_length);
/* Ends a stream written into a memory sink with the end-of-stream marker;
 * returns its bytes (malloc'd, free() it) and frees the sink. */
uint8_t *rbt_end_stream(QvSink *sink, size_t *size);
/* An edit of a decoded message and a copy of its body. */
typedef void (*RbtMessageEdit)(QvMessage *m, uint8_t *body, int64_t body_length);
/* Re-frames every message of a stream, applying `edit` to message `index`
 * (its buffers and field nodes are copies the edit may change); returns the
 * new stream (malloc'd, free() it). */
uint8_t *rbt_edit_message(const uint8_t *data, size_t size, int index, RbtMessageEdit edit,
                          size_t *out_size);

#endif
