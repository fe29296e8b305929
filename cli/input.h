/* quiver CLI: reading a command's input (a path, or "-" for stdin). */
#ifndef QUIVER_CLI_INPUT_H
#define QUIVER_CLI_INPUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "quiver/error.h"
#include "quiver/io.h"
#include "quiver/ipc.h"
#include "quiver/recordbatch_ipc.h"
#include "quiver/sparse.h"
#include "quiver/tensor.h"

/* Makes an error about an input start with its name ("stdin" for "-"),
 * once (a path source names itself already; a memory source's "<memory>"
 * is replaced). Returns error->code. */
QvStatus cli_error_name_input(const char *path, QvError *error);
/* A source over `path`, or over stdin for "-". */
QvStatus cli_source_new(const char *path, QvSource **src, QvError *error);

/* All of `path` ("-" = stdin) in memory, through the library's sources
 * (qv_source_read_all): a regular file is mapped, a pipe or stdin read to
 * its end. Release with cli_input_free. */
typedef struct QvCliInput {
  const uint8_t *data;
  size_t size;
  QvOwner *owner; /* keeps data alive */
} QvCliInput;
QvStatus cli_input_open(const char *path, QvCliInput *in, QvError *error);
void cli_input_free(QvCliInput *in);
/* For a command whose only argument is one FILE: parses the command line
 * and reads FILE into *in. Returns 0, or the exit status after printing
 * why (usage, or FILE unreadable). *path is FILE as given. */
int cli_open_single_input(const char *cmd, int argc, char **argv, const char **path,
                             QvCliInput *in);
/* True when the first message of the input is a Tensor or SparseTensor.
 * Anything else (a Schema, an Arrow file, a RecordBatch without its Schema,
 * no messages at all) goes to the record batch reader, which says what is
 * wrong with it. */
bool cli_holds_tensors(const uint8_t *data, size_t size);
/* A message reader over bytes the caller keeps alive. */
QvStatus cli_reader_memory(QvIpcReader **r, const uint8_t *data, size_t size, QvError *error);

/* The record batch read options of every command: full validation (a
 * command prints or converts only what it has checked), decompression on
 * cli_threads() threads. */
const QvRbReadOptions *cli_rb_read_options(void);
/* Threads for compressing and decompressing record batch bodies: what
 * --threads set, else every online CPU. */
void cli_set_threads(int threads);
/* --accept-decimal-overflow: QvRbReadOptions.accept_decimal_overflow (and
 * QvJsonReadOptions' for integration). */
void cli_set_accept_decimal_overflow(bool accept);
bool cli_accept_decimal_overflow(void);
int cli_threads(void);
/* A record batch reader with those options over bytes the caller keeps
 * alive (zero-copy): a file reader into *file when `file` is not NULL, else
 * a stream reader into *stream. */
QvStatus cli_rb_reader_memory(const uint8_t *data, size_t size, struct ArrowArrayStream *stream,
                                 QvRbFileReader **file, QvError *error);

/* Message `index` of an Arrow input ("-" = stdin) as a dense or a sparse
 * tensor; other message kinds are an error naming what the message is. */
typedef struct QvCliTensor {
  bool is_sparse;
  QvTensor dense;
  QvSparseTensor sparse;
} QvCliTensor;
QvStatus cli_read_tensor(const char *path, int64_t index, QvCliTensor *out, QvError *error);
void cli_tensor_free(QvCliTensor *t);

#endif
