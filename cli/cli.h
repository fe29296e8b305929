/* quiver command-line tool: shared declarations of the subcommands. */
#ifndef QUIVER_CLI_H
#define QUIVER_CLI_H

#include <stddef.h>
#include <stdint.h>

#include "quiver/error.h"

/* Each subcommand gets argv after the subcommand name and returns the exit
 * status: 0 success, 1 bad input / failure, 2 usage error. */
int qv_cmd_inspect(int argc, char **argv);
int qv_cmd_tensor(int argc, char **argv);
int qv_cmd_cat(int argc, char **argv);
int qv_cmd_validate(int argc, char **argv);
int qv_cmd_stream_to_file(int argc, char **argv);
int qv_cmd_file_to_stream(int argc, char **argv);

/* Prints "quiver <cmd>: <message>" to stderr and returns 1. */
int qv_cli_fail(const char *cmd, const QvError *error);
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

#endif
