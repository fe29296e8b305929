/* quiver: command-line front end. A thin user of the public API. */
#include <stdio.h>
#include <string.h>

#include "cli.h"

typedef struct Command {
  const char *name;
  int (*run)(int argc, char **argv);
  const char *help;
} Command;

static const Command commands[] = {
    {"inspect", qv_cmd_inspect, "inspect FILE|-        list every message of an Arrow stream or file"},
    {"tensor", qv_cmd_tensor, "tensor from-npy|to-npy|from-npz|to-npz IN OUT  .npy/.npz <-> Arrow (see tensor --help)"},
    {"cat", qv_cmd_cat, "cat FILE|-            print tensors NumPy-style, record batches as a table"},
    {"convert", qv_cmd_convert, "convert IN OUT --to=dense|coo|csr|csc|csf  dense <-> sparse tensors (see convert --help)"},
    {"validate", qv_cmd_validate, "validate [--stream] FILE|-  check a record batch file/stream in full"},
    {"stream-to-file", qv_cmd_stream_to_file, "stream-to-file [--compression none|lz4|zstd] [--align 8|64] < IN > OUT"},
    {"file-to-stream", qv_cmd_file_to_stream, "file-to-stream [--compression none|lz4|zstd] [--align 8|64] FILE|- > OUT"},
};

static void usage(FILE *f) {
  fprintf(f, "usage: quiver <command> [args]\n\ncommands:\n");
  for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
    fprintf(f, "  %s\n", commands[i].help);
}

int main(int argc, char **argv) {
  if (argc < 2) {
    usage(stderr);
    return 2;
  }
  if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "help") == 0) {
    usage(stdout);
    return 0;
  }
  for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
    if (strcmp(argv[1], commands[i].name) == 0) return commands[i].run(argc - 2, argv + 2);
  fprintf(stderr, "quiver: unknown command '%s'\n", argv[1]);
  usage(stderr);
  return 2;
}
