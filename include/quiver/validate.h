/** @file
 * quiver: the verdict of `quiver validate` as a library call, so every
 * front end (the CLI, the Python module) says the same thing about an input.
 *
 * An input of record batches (stream or file) is read with full validation
 * (every batch, every dictionary), with the registered extension types quiver
 * knows (arrow.fixed_shape_tensor, arrow.variable_shape_tensor,
 * quiver.sparse_tensor, quiver.sparse_vector) checked against their storage
 * and every cell; an input of Tensor and SparseTensor messages has every
 * message validated in full. */
#ifndef QUIVER_VALIDATE_H
#define QUIVER_VALIDATE_H

#include "quiver/common.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "quiver/error.h"
#include "quiver/io.h"
#include "quiver/recordbatch_ipc.h"

#ifdef __cplusplus
extern "C" {
#endif

/** What qv_ipc_validate found in a valid input. */
typedef struct QvIpcValidateReport {
  bool is_file;    /**< an Arrow file (it starts with "ARROW1"), else a stream */
  bool tensors;    /**< Tensor / SparseTensor messages rather than record batches */
  int64_t batches; /**< record batches; with `tensors`, Tensor messages */
  /** rows of all the batches (INT64_MAX when the total saturates); with
   * `tensors`, SparseTensor messages */
  int64_t rows;
} QvIpcValidateReport;

/** Validates the whole input in full (see the file comment). `options` (may
 * be NULL: full validation, one thread) are the record batch reader's; its
 * `validate` is raised to QV_VALIDATE_FULL. *report (may be NULL) is filled
 * when the input is valid. QV_EINVAL with the first problem (prefixed with
 * the batch or message it is in), QV_ENOTSUP for a valid input quiver cannot
 * read (big-endian data, say, or a record batch among tensors). */
QV_API QvStatus qv_ipc_validate(QvSource *source, const QvRbReadOptions *options,
                                QvIpcValidateReport *report, QvError *error);

/** The verdict `quiver validate` prints after "PATH: " for a valid input:
 * "valid Arrow file (2 record batches, 6 rows)", "valid Arrow stream (1
 * Tensor, 0 SparseTensor messages)", with "at least " before a saturated row
 * count. snprintf's rule: at most `cap` bytes including the NUL; returns the
 * length of the whole text. */
QV_API size_t qv_ipc_validate_summary(const QvIpcValidateReport *report, char *buf, size_t cap);

#ifdef __cplusplus
}
#endif

#endif
