/* quiver CLI: printing record batches as a table. */
#ifndef QUIVER_CLI_RB_PRINT_H
#define QUIVER_CLI_RB_PRINT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "quiver/error.h"

/* Prints an Arrow record batch stream or file held in memory: a schema line,
 * a header, then one line per row (long inputs keep their first and last
 * rows, with a line saying how many were left out), then a summary line.
 * Every batch is validated in full before anything of it is printed. */
QvStatus qv_cli_print_record_batches(const uint8_t *data, size_t size, FILE *out, QvError *error);

#endif
