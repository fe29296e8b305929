/* quiver command-line tool: shared declarations of the subcommands. */
#ifndef QUIVER_CLI_H
#define QUIVER_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "args.h"
#include "output.h"
#include "quiver/error.h"
#include "quiver/ipc.h"
#include "quiver/sparse.h"
#include "quiver/sparse_ipc.h"
#include "quiver/tensor.h"

/* Each subcommand gets argv after the subcommand name and returns the exit
 * status (QV_EXIT_*, args.h): 0 success, 1 invalid input or failure, 2 usage
 * error, 3 valid but not supported. "--help" never reaches them (main.c). */
int qv_cmd_inspect(int argc, char **argv);
int qv_cmd_tensor(int argc, char **argv);
int qv_cmd_cat(int argc, char **argv);
int qv_cmd_convert(int argc, char **argv);
int qv_cmd_validate(int argc, char **argv);
int qv_cmd_stream_to_file(int argc, char **argv);
int qv_cmd_file_to_stream(int argc, char **argv);

/* Reads all of `path` ("-" = stdin) into memory: mmap for regular files,
 * a growing buffer otherwise. Release with qv_cli_input_free. */
typedef struct QvCliInput {
  const uint8_t *data;
  size_t size;
  void *mapping;  /* non-NULL when mmap'd */
  uint8_t *heap;  /* non-NULL when read into memory */
} QvCliInput;
QvStatus qv_cli_input_open(const char *path, QvCliInput *in, QvError *error);
void qv_cli_input_free(QvCliInput *in);
/* True when the first message of a stream or file (after the file magic) is a
 * Schema, i.e. the input is columnar rather than tensors. */
bool qv_cli_starts_with_schema(const uint8_t *data, size_t size);
/* A message reader over bytes the caller keeps alive. */
QvStatus qv_cli_reader_memory(QvIpcReader **r, const uint8_t *data, size_t size, QvError *error);

/* Writes OUT ("-" = stdout) with write_fn through a sink, then finishes
 * it. A regular-file OUT goes through a path sink (a temporary file renamed
 * over OUT): the input may be a memory-mapped view of OUT itself, and a
 * failed write leaves the old OUT as it was. Other existing paths
 * (/dev/null, a FIFO) are written in place. */
typedef QvStatus (*QvCliWriteFn)(QvSink *sink, const void *ctx, QvError *error);
QvStatus qv_cli_write_output(const char *out, QvCliWriteFn write_fn, const void *ctx,
                             QvError *error);
/* The same for writers that still take a descriptor (the NumPy formats). */
typedef QvStatus (*QvCliWriteFdFn)(int fd, const void *ctx, QvError *error);
QvStatus qv_cli_write_output_fd(const char *out, QvCliWriteFdFn write_fn, const void *ctx,
                                QvError *error);
/* Write functions for it: ctx is a QvTensor / a QvCliSparseOut. */
typedef struct QvCliSparseOut {
  const QvSparseTensor *tensor;
  QvSparseWriteOptions options;
} QvCliSparseOut;
QvStatus qv_cli_write_tensor(QvSink *sink, const void *tensor, QvError *error);
QvStatus qv_cli_write_sparse(QvSink *sink, const void *sparse_out, QvError *error);

/* Message `index` of an Arrow input ("-" = stdin) as a dense or a sparse
 * tensor; other message kinds are an error naming what the message is. */
typedef struct QvCliTensor {
  bool is_sparse;
  QvTensor dense;
  QvSparseTensor sparse;
} QvCliTensor;
QvStatus qv_cli_read_tensor(const char *path, int64_t index, QvCliTensor *out, QvError *error);
void qv_cli_tensor_free(QvCliTensor *t);

/* Sparse conversion options shared by `tensor from-npy` and `convert`:
 * --index-type=T, --axis-order=A,B,..., --csf-lengths=elements|bytes (each
 * also as two arguments, "--index-type T"). */
typedef struct QvCliSparseArgs {
  bool has_index_type;
  QvValueType index_type;
  int32_t n_axis;
  int32_t axis_order[QV_TENSOR_MAX_NDIM];
  bool has_csf_lengths;
  QvCsfLengths csf_lengths;
} QvCliSparseArgs;
/* 1: argv[*i] was one of these options (consumed, *i advanced past a
 * separate value); 0: it is not; -1: malformed (message printed). */
int qv_cli_sparse_arg(const char *cmd, int argc, char **argv, int *i, QvCliSparseArgs *a);
/* "--name=value" or "--name value": the value (advancing *i), else NULL.
 * *missing is set when the option is given without a value. */
const char *qv_cli_option(const char *name, int argc, char **argv, int *i, bool *missing);
/* Converts `in` to a dense tensor or to `format` and writes it to OUT;
 * returns the exit status (messages printed, prefixed "quiver <cmd>"). */
int qv_cli_convert_and_write(const char *cmd, const QvCliTensor *in, bool to_dense,
                             QvSparseFormat format, const QvCliSparseArgs *args, const char *out);

#endif
