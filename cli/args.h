/* quiver CLI: command-line parsing shared by the commands.
 *
 * Options are "--name=value" or "--name value"; "--" ends the options (what
 * follows is positional, e.g. a file named "-x"); "-" alone is positional
 * (stdin or stdout). "--help" never reaches a command: main.c answers it.
 * A usage error prints one line naming what was wrong (for an option value:
 * the option and the values it takes) and a pointer to `quiver CMD --help`,
 * then the command returns 2. */
#ifndef QUIVER_CLI_ARGS_H
#define QUIVER_CLI_ARGS_H

#include <stdbool.h>
#include <stdint.h>

#include "quiver/sparse_ipc.h"
#include "quiver/tensor.h"

/* Exit statuses of every command (and of `quiver` itself). */
enum {
  QV_EXIT_OK = 0,
  QV_EXIT_INVALID = 1,     /* invalid input or a failure (I/O, memory) */
  QV_EXIT_USAGE = 2,       /* bad command line */
  QV_EXIT_UNSUPPORTED = 3  /* valid input that quiver does not support */
};

/* Walks a command's arguments:
 *
 *   QvCliArgs a;
 *   cli_args_init(&a, "convert", argc, argv);
 *   while (cli_args_next(&a)) {
 *     if ((p = cli_args_positional(&a)) != NULL) ...
 *     else if ((v = cli_args_value(&a, "--index")) != NULL) ...
 *     else if ((k = cli_args_choice(&a, "--to", choices)) >= 0) ...
 *     else if (cli_args_flag(&a, "--stored")) ...
 *     else cli_args_unknown(&a);
 *   }
 *   if (a.status) return a.status;
 *
 * After a usage error (message printed) `status` is QV_EXIT_USAGE, every
 * matcher answers "no" and cli_args_next stops the loop. */
typedef struct QvCliArgs {
  const char *cmd; /* "convert", "tensor from-npy": prefixes messages */
  int argc;
  char **argv;
  int i;             /* the current argument */
  bool options_done; /* after "--" */
  bool positional;   /* the current argument is positional */
  int status;        /* 0, or QV_EXIT_USAGE after a usage error */
} QvCliArgs;

void cli_args_init(QvCliArgs *a, const char *cmd, int argc, char **argv);
/* Moves to the next argument; false at the end or after a usage error. */
bool cli_args_next(QvCliArgs *a);
/* The current argument when it is positional, else NULL. */
const char *cli_args_positional(QvCliArgs *a);
/* For a command of IN and OUT: the current argument when it is one of the
 * first two positionals, stored at pos[*npos] (a third is left to
 * cli_args_unknown). */
bool cli_args_in_out_arg(QvCliArgs *a, const char **pos, int *npos);
/* True when the current argument is the flag `name` ("--stored"). */
bool cli_args_flag(QvCliArgs *a, const char *name);
/* The value of option `name` when the current argument is it (a separate
 * value is consumed), else NULL. Without a value: usage error. */
const char *cli_args_value(QvCliArgs *a, const char *name);
/* Option `name` whose value must be one of `choices` (NULL-terminated): the
 * index of the value; -1 when the current argument is not `name`, or on a
 * usage error naming the option and its choices. */
int cli_args_choice(QvCliArgs *a, const char *name, const char *const *choices);
/* Option `name` with a non-negative decimal value. */
bool cli_args_index(QvCliArgs *a, const char *name, int64_t *out);
/* Option `name` with a size in bytes: a decimal integer >= 1 with an
 * optional binary suffix K, M, G or T (2^10 .. 2^40), e.g. "512M". */
bool cli_args_size(QvCliArgs *a, const char *name, int64_t *out);
/* "--threads N" (1..QV_RB_MAX_THREADS): the threads that compress and
 * decompress record batch bodies, handed to cli_set_threads (input.h). */
bool cli_args_threads(QvCliArgs *a);
/* --accept-decimal-overflow (a quirk for old files: decimals beyond their
 * precision pass full validation): sets it for the record batch readers. */
bool cli_args_quirks(QvCliArgs *a);
/* "--no-fsync" (every command that writes a file): the output file is
 * committed without the fsyncs of the file and its directory (scratch
 * output); handed to cli_set_no_fsync (output.h). */
bool cli_args_no_fsync(QvCliArgs *a);
/* The options of every command that writes an OUT file: "--max-output SIZE"
 * (cli_args_size, into *max_output) and "--no-fsync". */
bool cli_args_output(QvCliArgs *a, int64_t *max_output);
/* The current argument is no option the command has: usage error. */
void cli_args_unknown(QvCliArgs *a);
/* A usage error about the current argument (or the command line as a
 * whole): prints "quiver CMD: <message>" and the pointer to --help, sets
 * status. */
void cli_args_error(QvCliArgs *a, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* The end of a walk for a command of IN and OUT: a->status after a usage
 * error, QV_EXIT_USAGE (message printed) unless npos is 2, then, when
 * `out` is not NULL, cli_check_output's answer for it; else 0. */
int cli_args_in_out(const QvCliArgs *a, int npos, const char *out);

/* For a command whose only argument is one FILE ("-" = stdin): the path, or
 * NULL after a usage error (*status set). */
const char *cli_args_one_file(const char *cmd, int argc, char **argv, int *status);

/* The same message outside a QvCliArgs walk; returns QV_EXIT_USAGE.
 * `cmd` may hold a subcommand ("tensor from-npy"); the --help pointer names
 * its first word. */
int cli_usage_error(const char *cmd, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Sparse output options shared by `tensor from-npy --sparse` and `convert`:
 * --index-type=T, --axis-order=A,B,..., --csf-lengths=elements|bytes. */
typedef struct QvCliSparseArgs {
  QvArrowType index_type; /* QV_ARROW_NONE when not given */
  int32_t n_axis;         /* 0 when --axis-order is not given */
  int32_t axis_order[QV_TENSOR_MAX_NDIM];
  bool has_csf_lengths;
  QvCsfLengths csf_lengths;
  int64_t max_output; /* --max-output (bytes); 0 = QV_DEFAULT_MAX_OUTPUT_SIZE */
} QvCliSparseArgs;
/* True when the current argument is one of those options (its value stored
 * in *s); false when it is not, or on a usage error. */
bool cli_args_sparse(QvCliArgs *a, QvCliSparseArgs *s);
/* Any of them given (--max-output, which every output takes, is not one). */
bool cli_sparse_args_given(const QvCliSparseArgs *s);

/* A non-negative decimal integer that fits int64_t. */
bool cli_parse_index(const char *s, int64_t *out);

/* True when argv (up to a "--") asks for help: "-h" or "--help". */
bool cli_wants_help(int argc, char **argv);

#endif
