/* quiver CLI: what a command hands back: its output file, its exit status
 * and its error messages. */
#ifndef QUIVER_CLI_OUTPUT_H
#define QUIVER_CLI_OUTPUT_H

#include <stdbool.h>

#include "args.h"
#include "input.h"
#include "quiver/error.h"
#include "quiver/io.h"
#include "quiver/recordbatch_ipc.h"
#include "quiver/sparse.h"
#include "quiver/sparse_ipc.h"
#include "quiver/tensor.h"

/* The exit status for a library status, the one mapping every command uses:
 * QV_OK 0, QV_ENOTSUP 3 (valid but not supported), anything else 1. Usage
 * errors (2) are the command line parser's to find, not the library's: a
 * QV_EARG is a value the parser let through that the input contradicts, or
 * a bug, and both are failures. */
int cli_exit_code(QvStatus status);

/* Prints "quiver <cmd>: <message>" to stderr and returns
 * cli_exit_code(error->code). */
int cli_fail(const char *cmd, const QvError *error);

/* Binary output is not sent to a terminal: QV_EXIT_USAGE (message printed)
 * when OUT is "-" and stdout is one, else 0. Commands check before they
 * read their input. */
int cli_check_output(const char *cmd, const char *out);

/* From now on output files are committed without fsync (--no-fsync). */
void cli_set_no_fsync(void);
/* Opens OUT: "-" is stdout through an fd sink, anything else a path sink
 * (a temporary file renamed over OUT by cli_output_close: the input may
 * be a memory-mapped view of OUT itself, and a failed write leaves the old
 * OUT as it was; an existing OUT that is not a regular file, such as
 * /dev/null or a FIFO, is written in place). */
QvStatus cli_output_open(const char *out, QvSink **sink, QvError *error);
/* Finishes the sink when `status` is QV_OK (commits a path sink), frees it
 * and returns the first error; errors name OUT. */
QvStatus cli_output_close(const char *out, QvSink *sink, QvStatus status, QvError *error);

/* Opens OUT, writes it with write_fn and closes it. */
typedef QvStatus (*QvCliWriteFn)(QvSink *sink, const void *ctx, QvError *error);
QvStatus cli_write_output(const char *out, QvCliWriteFn write_fn, const void *ctx,
                             QvError *error);
/* Writes every batch of `s` to OUT with qv_rb_write_all. */
QvStatus cli_write_batches(const char *out, struct ArrowArrayStream *s,
                              const QvRbWriteOptions *options, QvError *error);
/* Write functions for cli_write_output: ctx is a QvTensor / a QvCliSparseOut. */
typedef struct QvCliSparseOut {
  const QvSparseTensor *tensor;
  QvSparseWriteOptions options;
} QvCliSparseOut;
QvStatus cli_write_tensor(QvSink *sink, const void *tensor, QvError *error);
QvStatus cli_write_sparse(QvSink *sink, const void *sparse_out, QvError *error);

/* --max-output for a dense output (a Tensor message body or an .npy holds
 * the row-major copy, whatever the input's strides): QV_ELIMIT naming both
 * sizes when shape x element size exceeds max_output (0 = the default). */
QvStatus cli_check_dense_output(int32_t ndim, const int64_t *shape, QvArrowType type,
                                   int64_t max_output, QvError *error);
/* The same for a sparse output's buffers (an .npz of `t`). */
QvStatus cli_check_sparse_output(const QvSparseTensor *t, int64_t max_output, QvError *error);

/* A library message names its option "(max_output_size)"; the user typed
 * --max-output: the message is changed to say so. */
void cli_name_max_output(QvError *error);

/* Converts `in` to a dense tensor (to_dense) or to `format` as `args` ask,
 * its values cast to `value_type` (QV_ARROW_NONE: kept; qv_tensor_cast /
 * qv_sparse_cast: exact or refused), and writes it to OUT; returns the exit
 * status (messages printed, prefixed "quiver <cmd>"). Options that do not
 * apply to the output are a usage error. */
int cli_convert_and_write(const char *cmd, const QvCliTensor *in, bool to_dense,
                             QvSparseFormat format, const QvCliSparseArgs *args,
                             QvArrowType value_type, const char *out);

#endif
