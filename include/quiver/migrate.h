/* quiver: from the deprecated Tensor / SparseTensor IPC messages to tables
 * and back (issue #23, `quiver migrate`).
 *
 * A file or stream of Tensor and SparseTensor messages becomes one table of
 * one column, row i = message i:
 *  - dense messages: arrow.fixed_shape_tensor when every shape is equal,
 *    else arrow.variable_shape_tensor (quiver/tensor_column.h); dim names
 *    become `dim_names`; a column-major or transposed layout becomes
 *    `permutation` (no copy); a layout that no permutation of a row-major
 *    one describes (strided, broadcast) is copied row-major, and the notice
 *    callback says so;
 *  - sparse messages: a quiver.sparse_tensor column (quiver/sparse_column.h)
 *    of their format, value and index types.
 * Messages that cannot share one column (dense and sparse, other value
 * types, ndim, dim names, sparse format or index types) form groups: one
 * group is one table; qv_migrate refuses several (QV_EINVAL listing them),
 * qv_migrate_split writes one table per group.
 *
 * Copies: one message whose body holds the tensor row-major or in a
 * permuted row-major layout becomes the column's value buffer as it is (a
 * view of the input: a path input is mapped), so the only copy is the
 * writer's, from the input's pages to the output; stats->gathered_bytes
 * says 0. Several dense messages are not gathered either: the column's
 * value buffer is written to the sink body by body, each from where the
 * input holds it (the mapping, or the buffer an fd read filled), so the
 * writer's copy is again the only one. A message whose layout differs from
 * the column's (the column keeps a permutation only when every message
 * with elements shares it, else it is row-major) is copied in the column's
 * layout first, on `threads`, and counted in gathered_bytes and relaid.
 * Sparse messages go through qv_sparse_column_build (one message: views;
 * several: its copies, counted in gathered_bytes).
 *
 * qv_migrate_to_messages goes back: every row of a one-column table of
 * those types becomes one message, equal in value, type, shape, dim names,
 * sparse format, index types, canonical flag and CSF axis order to the
 * message it was made from. */
#ifndef QUIVER_MIGRATE_H
#define QUIVER_MIGRATE_H

#include "quiver/common.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "quiver/error.h"
#include "quiver/io.h"
#include "quiver/ipc.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Receives one line of text (no newline) when a message's layout had to be
 * copied row-major. */
typedef void (*QvMigrateNoticeFn)(void *ctx, const char *message);

/** Options of every qv_migrate function; NULL or a zeroed struct means every
 * default. */
typedef struct QvMigrateOptions {
  size_t struct_size; /**< 0 or sizeof(QvMigrateOptions) */
  QvIpcFormat format; /**< tables: stream (default) or file */
  const char *name;   /**< column name; NULL: "tensor" (dense) or "sparse" */
  /** Bytes of column data (values, indices, offsets, shapes) every table
   * together may take, or (to messages) bytes of the messages, checked before
   * anything is written (QV_ELIMIT naming both); 0: QV_DEFAULT_MAX_OUTPUT_SIZE. */
  int64_t max_output_size;
  /** Threads that copy a dense message whose layout is not the column's
   * (a copy of 4 MiB or more is split by its leading index; the bytes are
   * the same for any count), 0..QV_TENSOR_COLUMN_MAX_THREADS (0 or 1: the
   * calling thread). */
  int threads;
  QvMigrateNoticeFn notice; /**< NULL: notices are dropped */
  void *notice_ctx;         /**< passed to `notice` as its first argument */
  const QvIpcReaderOptions *ipc; /**< the message reader's limits; NULL: defaults */
} QvMigrateOptions;

/** What a qv_migrate function did (zeroed first). */
typedef struct QvMigrateStats {
  int64_t messages;       /**< messages read (to tables) or written (to messages) */
  int64_t tables;         /**< tables written */
  int64_t relaid;         /**< dense messages copied into the column's layout (not theirs) */
  int64_t gathered_bytes; /**< bytes copied into column buffers before writing */
} QvMigrateStats;

/** Opens the sink of one group's table for qv_migrate_split. `group` names
 * the group ("tensor_float32_2d", "csr_float64_int64_int64_2d"; see
 * qv_migrate). qv_migrate_split finishes (on success) and frees the sink. */
typedef QvStatus (*QvMigrateOpenFn)(void *ctx, const char *group, QvSink **sink,
                                    QvError *error);

/** Reads every message of `in` (Tensor and SparseTensor only: any other
 * message is QV_EINVAL naming it) and writes them as one table to `out` (not
 * finished). Several groups are QV_EINVAL: "messages of 2 groups:
 * tensor_float32_2d (3 messages, first 0), coo_float64_int64_3d (1 message,
 * first 1): --split writes one table per group". No message: QV_EINVAL.
 * A shape extent past int32 in a variable shape column: QV_ENOTSUP. stats
 * may be NULL. */
QV_API QvStatus qv_migrate(QvSource *in, QvSink *out, const QvMigrateOptions *options,
                           QvMigrateStats *stats, QvError *error);
/** As qv_migrate, one table per group in order of first message, each to
 * the sink `open` gives for its group name (two groups of one name, which
 * differ by dim names only, are told apart by "_2", "_3", ...). */
QV_API QvStatus qv_migrate_split(QvSource *in, QvMigrateOpenFn open, void *ctx,
                                 const QvMigrateOptions *options, QvMigrateStats *stats,
                                 QvError *error);
/** The path of a group's table next to `out`: the group name goes before
 * out's extension ("m.arrow" -> "m.tensor_float32_2d.arrow"; "m" ->
 * "m.tensor_float32_2d"). *path is malloc'd (free()). */
QV_API QvStatus qv_migrate_split_path(const char *out, const char *group, char **path,
                                      QvError *error);
/** Reads a table (stream or file) of one column, arrow.fixed_shape_tensor,
 * arrow.variable_shape_tensor or quiver.sparse_tensor / quiver.sparse_vector
 * (a vector row is a 1-D COO), and writes one Tensor or SparseTensor message
 * per row to `out` (not finished). A null row, another column type or
 * another column count: QV_EINVAL. options->format and name are unused. */
QV_API QvStatus qv_migrate_to_messages(QvSource *in, QvSink *out,
                                       const QvMigrateOptions *options, QvMigrateStats *stats,
                                       QvError *error);

#ifdef __cplusplus
}
#endif

#endif
