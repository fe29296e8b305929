/* quiver: command-line front end. A thin user of the public API.
 *
 * main answers what is the same for every command: `quiver --version`,
 * `quiver help [CMD]` and `quiver CMD --help` (so no command ever takes
 * "--help" for a file name), then hands the rest of argv to the command. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "args.h"
#include "cli.h"
#include "quiver/version.h"

typedef struct Command {
  const char *name;
  int (*run)(int argc, char **argv);
  const char *summary; /* one line of `quiver help` */
  const char *help;    /* `quiver help CMD` */
} Command;

static const Command commands[] = {
    {"inspect", qv_cmd_inspect, "inspect FILE|-        list every message of an Arrow stream or file",
     "usage: quiver inspect FILE|-\n"
     "  One line per message of an Arrow stream or file: offset, kind, metadata\n"
     "  version and length, body length, and a summary (schema fields; batch\n"
     "  length/nodes/buffers; tensor type, shape, strides, names; sparse format,\n"
     "  shape, nnz, density, index types, buffer offsets and alignment); for a\n"
     "  file, its footer. A compressed batch's codec and body sizes follow, and\n"
     "  one line per buffer: its compressed and uncompressed bytes. A sparse\n"
     "  column (quiver.sparse_tensor / quiver.sparse_vector) is described in the\n"
     "  schema line, and its cells follow the messages: format, shape and nnz,\n"
     "  at most 10 a batch. FILE '-' reads stdin.\n"},
    {"tensor", qv_cmd_tensor,
     "tensor from-npy|to-npy|from-npz|to-npz|stack|unstack|from-table IN OUT  .npy/.npz, tensor columns, tables <-> Arrow tensors",
     "usage: quiver tensor from-npy IN.npy OUT.arrow [--sparse=coo|csr|csc|csf]\n"
     "                [--index-type=T] [--axis-order=A,B,...] [--csf-lengths=elements|bytes]\n"
     "                [--max-output SIZE]\n"
     "       quiver tensor to-npy IN.arrow OUT.npy [--index N] [--max-output SIZE]\n"
     "       quiver tensor from-npz IN.npz OUT.arrow [--threads N] [--verify-crc]\n"
     "       quiver tensor to-npz IN.arrow OUT.npz [--index N] [--stored] [--max-output SIZE]\n"
     "                [--threads N]\n"
     "  IN may be '-' for stdin, OUT '-' for stdout. --index N picks message N\n"
     "  (0-based) of a file holding several. from-npy --sparse writes a SparseTensor\n"
     "  (index type int64 unless --index-type: int8 ... int64, uint8 ... uint64;\n"
     "  CSF levels in --axis-order, default 0,1,...; --csf-lengths: how CSF buffer\n"
     "  lengths are written, default elements as Arrow C++ reads them). to-npy\n"
     "  densifies a SparseTensor. .npz files are SciPy's save_npz format (CSR, CSC,\n"
     "  COO matrices); to-npz deflates unless --stored. --threads N: members\n"
     "  inflated/deflated at once (default: every CPU; the output is the same).\n"
     "  --verify-crc: check stored members' CRC-32 too (deflated ones always are).\n"
     "  --max-output SIZE: the most\n"
     "  bytes the output may take (suffix K, M, G, T: binary; default 16G), checked\n"
     "  before anything is produced (exit 1 naming both sizes).\n"
     "       quiver tensor stack IN.arrow OUT.arrow [--column NAME] [--extension NAME]\n"
     "                [--fill-nulls] [--max-output SIZE] [--threads N]\n"
     "       quiver tensor unstack IN.arrow OUT.arrow [--name NAME] [--index N] [--file]\n"
     "                [--max-output SIZE] [--threads N]\n"
     "       quiver tensor from-npy IN.npy OUT.arrow --as-column [--name NAME] [--file]\n"
     "                [--max-output SIZE] [--threads N]\n"
     "  stack: a tensor column (arrow.fixed_shape_tensor, arrow.variable_shape_tensor\n"
     "  whose cells share one shape, or a Binary/FixedSizeBinary column of row-major\n"
     "  cells under the extension --extension names) of each record batch -> one\n"
     "  Tensor message [rows, ...cell shape]; null cells are an error unless\n"
     "  --fill-nulls (zeros; --max-output SIZE bounds that copy, default 16G).\n"
     "  unstack / --as-column: a tensor -> a one-column table\n"
     "  (arrow.fixed_shape_tensor, one cell per leading index; column NAME, default\n"
     "  the leading dim's name, which stack gives back, else 'tensor'), an Arrow\n"
     "  stream, or a file with --file; --max-output SIZE bounds\n"
     "  its values (every element, default 16G), checked before anything is written.\n"
     "  A quiver.sparse_vector column stacks to one CSR SparseTensor message per\n"
     "  batch, and unstack of a CSR SparseTensor message writes such a one-column\n"
     "  table (both views, no copy; docs/sparse-tensor-extension.md); another\n"
     "  sparse format becomes a one-row quiver.sparse_tensor table.\n"
     "  --threads N (stack, unstack, --as-column): threads that copy (null cells\n"
     "  filled, a layout made row-major; default: every CPU; the output is the same).\n"
     "       quiver tensor from-table IN.arrow OUT.arrow [--columns a,b,...] [--column-major]\n"
     "                [--null-to-nan] [--max-output SIZE] [--threads N]\n"
     "  from-table: the numeric columns of a table (every batch of a stream or file)\n"
     "  -> one Tensor [rows, columns] as Arrow C++'s RecordBatch::ToTensor makes it:\n"
     "  the columns' types merged (uint16 + int16 = int32, int32 + float32 = float64),\n"
     "  row-major unless --column-major; a null is an error unless --null-to-nan\n"
     "  (NaN, integers become floats); a non-numeric column is an error (exit 1),\n"
     "  float16 mixed with another type is unsupported (exit 3). --columns picks\n"
     "  and orders the columns by name; --max-output SIZE bounds the tensor (16G).\n"},
    {"cat", qv_cmd_cat, "cat [--json] [--threads N] FILE|-  print tensors NumPy-style, record batches as a table",
     "usage: quiver cat [--json [--max-output SIZE]] [--threads N] FILE|-\n"
     "  Prints the values of every Tensor and SparseTensor message NumPy-style (a\n"
     "  large sparse tensor as its list of non-zeros), and a record batch stream\n"
     "  or file as a table: a schema line, the rows (long inputs keep their first\n"
     "  and last rows), and a summary line; a sparse column's cells show their\n"
     "  format, shape and nnz. FILE '-' reads stdin.\n"
     "  --json: record batches as Arrow's integration JSON; tensors and sparse\n"
     "  tensors as {\"messages\": [...]} with type, shape, strides, dim names and\n"
     "  values (sparse: format, index types, index buffers), see docs/cli.md. The\n"
     "  JSON streams out; its size is counted first and refused past --max-output\n"
     "  SIZE (default 16G; nothing printed, exit 1).\n"
     "  --threads N: threads that decompress compressed record batches (default:\n"
     "  every core).\n"},
    {"convert", qv_cmd_convert,
     "convert IN OUT --to=dense|coo|csr|csc|csf  dense <-> sparse tensors",
     "usage: quiver convert IN.arrow OUT.arrow --to=dense|coo|csr|csc|csf [--index N]\n"
     "           [--index-type=T] [--axis-order=A,B,...] [--csf-lengths=elements|bytes]\n"
     "           [--value-type=T] [--max-output SIZE] [--threads N]\n"
     "  Converts a Tensor or SparseTensor message (message N, default 0) to a dense\n"
     "  tensor or a sparse one. --index-type: int8 ... int64, uint8 ... uint64 (default\n"
     "  int64, or the input's index type for sparse input); --axis-order: the CSF level\n"
     "  order (default 0,1,...); --csf-lengths: how CSF buffer lengths are written\n"
     "  (default elements, as Arrow C++ reads them). --value-type: int8 ... int64,\n"
     "  uint8 ... uint64, float16, float32, float64 (default: the input's): casts\n"
     "  every value exactly or refuses (exit 1 naming the first that does not fit):\n"
     "  integers within range, floats to integers only when whole, integers to floats\n"
     "  only when held exactly; float to float rounds, refusing a finite value beyond\n"
     "  the range. IN may be '-' for stdin, OUT '-'\n"
     "  for stdout; OUT may be IN. --max-output SIZE: the most bytes the output may\n"
     "  take (suffix K, M, G, T: binary; default 16G); a dense output is its shape\n"
     "  times the element size, a sparse one from a dense input is bounded by its\n"
     "  non-zeros (counted when every element being non-zero would exceed it).\n"
     "  --threads N: threads that group COO entries, transpose CSR <-> CSC and\n"
     "  scatter sparse -> dense (default: every CPU; the output is the same for\n"
     "  any N).\n"},
    {"migrate", qv_cmd_migrate,
     "migrate IN OUT [--split] [--to-messages]  Tensor/SparseTensor messages <-> tensor columns",
     "usage: quiver migrate IN OUT [--split] [--file] [--name NAME] [--max-output SIZE]\n"
     "                      [--threads N]\n"
     "       quiver migrate --to-messages IN OUT [--max-output SIZE]\n"
     "  Moves a file or stream of Tensor and SparseTensor messages (deprecated by\n"
     "  Arrow) to one table of one column, row i = message i: dense messages to\n"
     "  arrow.fixed_shape_tensor (every shape equal) or arrow.variable_shape_tensor,\n"
     "  dim names kept, a column-major or transposed layout as `permutation` (no\n"
     "  copy; a layout no permutation describes is copied row-major, said on\n"
     "  stderr); sparse messages to a quiver.sparse_tensor column (see\n"
     "  docs/sparse-tensor-extension.md). Messages that cannot share a column\n"
     "  (dense and sparse, value types, ndim, dim names, sparse format or index\n"
     "  types) are an error listing the groups; --split writes one table per group\n"
     "  to OUT with the group's name before its extension (m.arrow ->\n"
     "  m.tensor_float32_2d.arrow). Tables are Arrow streams, files with --file;\n"
     "  the column is NAME (default tensor / sparse).\n"
     "  --to-messages: the reverse, one message per row of a one-column table of\n"
     "  those types, equal to the originals in values, type, shape, dim names,\n"
     "  sparse format, index types and axis order.\n"
     "  --max-output SIZE: the most bytes the output may take (default 16G),\n"
     "  checked before anything is written. --threads N: threads that copy a\n"
     "  layout row-major (default: every CPU). IN may be '-' for stdin, OUT '-'\n"
     "  for stdout (not with --split).\n"},
    {"validate", qv_cmd_validate, "validate [--threads N] FILE|-  check a record batch or tensor file/stream in full",
     "usage: quiver validate [--threads N] FILE|-\n"
     "  Reads every record batch of an Arrow file or stream with full validation\n"
     "  and prints what it holds. A file is read through its footer, as every\n"
     "  command reads it (--stream is accepted and changes nothing). Tensor\n"
     "  columns and sparse columns (arrow.fixed_shape_tensor,\n"
     "  arrow.variable_shape_tensor, quiver.sparse_tensor, quiver.sparse_vector)\n"
     "  are checked against their metadata, every cell. A stream of Tensor and\n"
     "  SparseTensor messages has every message validated in full. A decimal\n"
     "  beyond its precision is invalid (--accept-decimal-overflow: a quirk for\n"
     "  old files that hold such values).\n"
     "  Exit 0 valid, 1 invalid (the reason on stderr),\n"
     "  3 valid but not supported by quiver. --threads N: threads that\n"
     "  decompress compressed batches (default: every core).\n"},
    {"stream-to-file", qv_cmd_stream_to_file,
     "stream-to-file [--compression none|lz4|zstd] [--level N] [--align 8|64]"
     " [--endianness native|little|big] [--threads N] < IN > OUT",
     "usage: quiver stream-to-file [--compression none|lz4|zstd] [--level N] [--align 8|64]\n"
     "                             [--endianness native|little|big] [--threads N] < IN > OUT\n"
     "  Reads an Arrow stream on stdin (validated in full) and writes it as an\n"
     "  Arrow file on stdout, with the batches' buffers compressed as asked and\n"
     "  aligned to 8 or 64 bytes, in the byte order asked (default: the host's;\n"
     "  input in either byte order is read). --level: the codec's level (zstd\n"
     "  1..22, default 1; lz4 1..12, 3 and up is LZ4 HC, default its fast mode).\n"
     "  --threads N: threads that decompress the input and compress the output\n"
     "  (default: every core; the output is the same for any N).\n"},
    {"file-to-stream", qv_cmd_file_to_stream,
     "file-to-stream [--compression none|lz4|zstd] [--level N] [--align 8|64]"
     " [--endianness native|little|big] [--threads N] FILE|- > OUT",
     "usage: quiver file-to-stream [--compression none|lz4|zstd] [--level N] [--align 8|64]\n"
     "                             [--endianness native|little|big] [--threads N] FILE|- > OUT\n"
     "  Reads an Arrow file (validated in full; its batches in footer order) and\n"
     "  writes it as an Arrow stream on stdout, in the byte order asked\n"
     "  (--endianness; default: the host's). --compression, --level, --align and\n"
     "  --threads as for stream-to-file.\n"},
    {"integration", qv_cmd_integration,
     "integration --mode=M --json=F.json --arrow=F.arrow_file  Arrow's integration test CLI",
     "usage: quiver integration --mode=validate|json-to-arrow|arrow-to-json\n"
     "                          --json=F.json --arrow=F.arrow_file [--max-output SIZE]\n"
     "                          [--accept-unsigned-spelling] [--accept-decimal-overflow]\n"
     "  The command line of Arrow's cross-implementation tests. validate: exit 0\n"
     "  when the Arrow file holds exactly the JSON's schema (names, types, nullability,\n"
     "  metadata, dictionary encoding and sharing) and batches (values, validity),\n"
     "  else exit 1 naming the first difference (field path, batch, row, expected,\n"
     "  found). json-to-arrow writes the JSON as an Arrow file; arrow-to-json the\n"
     "  reverse, streamed, its size counted first against --max-output SIZE (default\n"
     "  16G). JSON input may be gzip-compressed (.json.gz); an output may be '-'.\n"
     "  A JSON value out of its type's range is an error: 2^63 and up in a signed\n"
     "  64-bit type, 2^127 and up in a decimal128; --accept-unsigned-spelling reads\n"
     "  them as the two's complement bits they spell (arrow-js writes -1 as\n"
     "  \"18446744073709551615\").\n"
     "  A decimal beyond its precision is refused (as by Arrow C++'s ValidateFull);\n"
     "  --accept-decimal-overflow, a quirk for the generated_decimal gold files of\n"
     "  Arrow 0.14.1 and 1.0.0, reads it (validate, cat, stream-to-file and\n"
     "  file-to-stream take it too).\n"},
    {"flight", qv_cmd_flight,
     "flight serve|list|info|get|put|action ...  Arrow Flight server and client",
     "usage: quiver flight serve DIR [--host H] [--port P] [--tls-cert F --tls-key F]\n"
     "                           [--token T] [--allow-put]\n"
     "       quiver flight list URI\n"
     "       quiver flight info URI PATH\n"
     "       quiver flight get URI PATH [OUT] [--no-fsync]\n"
     "       quiver flight put URI PATH [IN]\n"
     "       quiver flight action URI TYPE [BODY]\n"
     "  client options: --token T, --tls-ca F, --header K=V (repeatable), --timeout SECONDS\n"
     "  serve puts the Arrow files and streams below DIR on Arrow Flight (gRPC):\n"
     "  a flight per file, named by its path relative to DIR (tensor message files\n"
     "  as one-column tensor tables). Its first line on stdout is its URI\n"
     "  (grpc://HOST:PORT, grpc+tls:// with --tls-cert/--tls-key); --port 0 (the\n"
     "  default) takes a free port, --host defaults to 127.0.0.1. With --token\n"
     "  every call needs 'authorization: Bearer T' (else UNAUTHENTICATED). With\n"
     "  --allow-put DoPut stores new files (through a hidden temporary file; a\n"
     "  failed or cancelled upload leaves nothing, an existing file is never\n"
     "  replaced). SIGINT or SIGTERM ends it cleanly.\n"
     "  URI is grpc://HOST:PORT, grpc+tcp:// or grpc+tls:// (system CAs, or\n"
     "  --tls-ca). list prints 'PATH<TAB>N rows<TAB>N bytes' per flight; info the\n"
     "  flight's rows, bytes, endpoints and schema fields; get writes the flight\n"
     "  (every endpoint) as an Arrow stream to OUT or stdout; put uploads IN (or\n"
     "  stdin: any Arrow file or stream) as PATH and prints the server's\n"
     "  PutResults; action runs DoAction TYPE with BODY and prints each Result.\n"
     "  A server's error is printed with its gRPC status (exit 1, or 3 for\n"
     "  UNIMPLEMENTED).\n"},
};

#define N_COMMANDS (sizeof commands / sizeof commands[0])

static void usage(FILE *f) {
  fprintf(f, "usage: quiver <command> [args]\n"
             "       quiver help <command> | quiver <command> --help\n"
             "       quiver --version\n\ncommands:\n");
  for (size_t i = 0; i < N_COMMANDS; i++) fprintf(f, "  %s\n", commands[i].summary);
  fprintf(f, "\nEvery command that writes a file (convert, tensor, table, migrate,\n"
             "integration, flight get) takes --no-fsync: the output is renamed into place without\n"
             "the fsyncs of the file and its directory (scratch output; the default is\n"
             "durable).\n");
  fprintf(f, "\nexit status: 0 success, 1 invalid input or failure, 2 usage error,\n"
             "3 valid input that quiver does not support\n");
}

static const Command *find(const char *name) {
  for (size_t i = 0; i < N_COMMANDS; i++)
    if (strcmp(name, commands[i].name) == 0) return &commands[i];
  return NULL;
}

static int unknown(const char *name) {
  fprintf(stderr, "quiver: unknown command '%s'\nTry 'quiver help'.\n", name);
  return QV_EXIT_USAGE;
}

/* Text goes to stdout through stdio, whose errors (a full disk, a closed
 * pipe, /dev/full) surface only in ferror() or at the final flush and
 * close: checked here once for every command, so output that was not
 * written never exits 0. */
static int close_stdout(const char *name, int rc) {
  bool failed = ferror(stdout) != 0;
  errno = 0;
  if (fclose(stdout) != 0) failed = true;
  int e = errno;
  if (!failed) return rc;
  if (e)
    fprintf(stderr, "quiver %s: writing stdout: %s\n", name, strerror(e));
  else
    fprintf(stderr, "quiver %s: writing stdout failed\n", name);
  return rc == QV_EXIT_OK ? QV_EXIT_INVALID : rc;
}

static int run(int argc, char **argv) {
  if (argc < 2) {
    usage(stderr);
    return QV_EXIT_USAGE;
  }
  const char *name = argv[1];
  if (strcmp(name, "--version") == 0) {
    if (argc != 2) {
      fprintf(stderr, "quiver: --version takes no arguments\n");
      return QV_EXIT_USAGE;
    }
    printf("quiver %s\n", qv_version());
    return QV_EXIT_OK;
  }
  if (strcmp(name, "-h") == 0 || strcmp(name, "--help") == 0 || strcmp(name, "help") == 0) {
    if (argc == 2) {
      usage(stdout);
      return QV_EXIT_OK;
    }
    const Command *c = find(argv[2]);
    if (c == NULL) return unknown(argv[2]);
    if (argc > 3) {
      fprintf(stderr, "quiver help: takes one command name\n");
      return QV_EXIT_USAGE;
    }
    fputs(c->help, stdout);
    return QV_EXIT_OK;
  }
  const Command *c = find(name);
  if (c == NULL) return unknown(name);
  if (cli_wants_help(argc - 2, argv + 2)) {
    fputs(c->help, stdout);
    return QV_EXIT_OK;
  }
  return c->run(argc - 2, argv + 2);
}

int main(int argc, char **argv) {
  return close_stdout(argc >= 2 ? argv[1] : "", run(argc, argv));
}
