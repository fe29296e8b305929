/* quiver command-line tool: the commands, and the shared modules they use.
 *
 * Each command file (inspect.c, cat.c, tensor_cmd.c, convert_cmd.c,
 * rb_cmd.c) defines its commands and calls only the shared modules, never
 * another command file:
 *
 *   main.c --> *_cmd.c, cat.c, inspect.c --> args   (command lines)
 *                                        --> input  (paths, stdin, messages)
 *                                        --> output (sinks, conversion,
 *                                                    exit statuses)
 *                                        --> text, rb_print (printing) */
#ifndef QUIVER_CLI_H
#define QUIVER_CLI_H

#include "args.h"
#include "input.h"
#include "output.h"

/* Each subcommand gets argv after the subcommand name and returns the exit
 * status (QV_EXIT_*, args.h): 0 success, 1 invalid input or failure, 2 usage
 * error, 3 valid but not supported. "--help" never reaches them (main.c). */
int qv_cmd_inspect(int argc, char **argv);
int qv_cmd_tensor(int argc, char **argv);
/* tensor stack / unstack / from-npy --as-column (tensorcol_cmd.c): argv
 * after the subcommand name. */
int qv_cmd_tensor_stack(int argc, char **argv);
int qv_cmd_tensor_unstack(int argc, char **argv);
int qv_cmd_tensor_npy_column(int argc, char **argv);
int qv_cmd_tensor_from_table(int argc, char **argv);
int qv_cmd_cat(int argc, char **argv);
int qv_cmd_convert(int argc, char **argv);
int qv_cmd_validate(int argc, char **argv);
int qv_cmd_stream_to_file(int argc, char **argv);
int qv_cmd_file_to_stream(int argc, char **argv);
int qv_cmd_integration(int argc, char **argv);
/* migrate (migrate_cmd.c) */
int qv_cmd_migrate(int argc, char **argv);
/* flight serve / list / info / get / put / action (flight_cmd.c) */
int qv_cmd_flight(int argc, char **argv);
/* cat --json (cat_json.c) */
int qv_cmd_cat_json(int argc, char **argv);

#endif
