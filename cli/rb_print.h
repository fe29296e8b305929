/* quiver CLI: printing record batches as a table. */
#ifndef QUIVER_CLI_RB_PRINT_H
#define QUIVER_CLI_RB_PRINT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "quiver/error.h"
#include "quiver/sparse_column.h"
#include "quiver/tensor_column.h"

/* Prints an Arrow record batch stream or file held in memory: a schema line,
 * a header, then one line per row (long inputs keep their first and last
 * rows, with a line saying how many were left out), then a summary line.
 * Every batch is validated in full before anything of it is printed; when
 * one is invalid, the rows of the batches before it are printed (the
 * summary line ends "before the error") and its error is returned. */
QvStatus cli_print_record_batches(const uint8_t *data, size_t size, FILE *out, QvError *error);

/* For every sparse column of a record batch stream or file in memory, one
 * line per cell ("  emb batch 0 row 3: [1000] nnz=12", at most 10 a batch,
 * then how many more), each batch validated as the column's type first.
 * Prints nothing for a table without sparse columns. */
QvStatus cli_print_sparse_cells(const uint8_t *data, size_t size, FILE *out, QvError *error);

#endif
