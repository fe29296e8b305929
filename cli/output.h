/* quiver CLI: what a command hands back: its exit status and messages, and
 * (once the commands write through sinks) its output files. */
#ifndef QUIVER_CLI_OUTPUT_H
#define QUIVER_CLI_OUTPUT_H

#include "args.h"
#include "quiver/error.h"

/* The exit status for a library status, the one mapping every command uses:
 * QV_OK 0, QV_ENOTSUP 3 (valid but not supported), anything else 1. Usage
 * errors (2) are the command line parser's to find, not the library's: a
 * QV_EARG is a value the parser let through that the input contradicts, or
 * a bug, and both are failures. */
int qv_cli_exit_code(QvStatus status);

/* Prints "quiver <cmd>: <message>" to stderr and returns
 * qv_cli_exit_code(error->code). */
int qv_cli_fail(const char *cmd, const QvError *error);

#endif
