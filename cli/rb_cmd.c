/* quiver record batch commands:
 *   validate FILE|-               full validation: exit 0 valid, 1 invalid,
 *                                 3 valid but not supported
 *   stream-to-file [options]      stdin (stream) -> stdout (file)
 *   file-to-stream [options] FILE FILE (file) -> stdout (stream) */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "quiver/recordbatch_ipc.h"
#include "quiver/sparse_column.h"
#include "quiver/sparse_ipc.h"
#include "quiver/tensor_column.h"
#include "quiver/tensor_ipc.h"
#include "quiver/validate.h"

/* ---- validate: the library's verdict (quiver/validate.h) */

int qv_cmd_validate(int argc, char **argv) {
  const char *path = NULL, *p;
  QvCliArgs a;
  cli_args_init(&a, "validate", argc, argv);
  while (cli_args_next(&a)) {
    if ((p = cli_args_positional(&a)) != NULL && path == NULL) path = p;
    else if (cli_args_flag(&a, "--stream")) continue; /* accepted; files go by their footer */
    else if (cli_args_threads(&a)) continue;
    else if (cli_args_quirks(&a)) continue;
    else cli_args_unknown(&a);
  }
  if (a.status) return a.status;
  if (path == NULL) return cli_usage_error("validate", "needs a FILE ('-' for stdin)");
  QvCliInput in;
  QvError error;
  qv_error_clear(&error);
  if (cli_input_open(path, &in, &error)) return cli_fail("validate", &error);
  QvSource *src = NULL;
  QvIpcValidateReport report;
  QvStatus st = qv_source_new_memory(&src, in.data, in.size, in.owner, &error);
  if (st == QV_OK) st = qv_ipc_validate(src, cli_rb_read_options(), &report, &error);
  qv_source_free(src);
  cli_input_free(&in);
  const char *name = strcmp(path, "-") == 0 ? "stdin" : path;
  if (st) {
    /* valid but beyond quiver (big-endian, say) is not "invalid" */
    fprintf(stderr, "quiver validate: %s: %s: %s\n", name,
            st == QV_ENOTSUP ? "not supported" : "invalid", error.message);
    return cli_exit_code(st);
  }
  char verdict[160];
  qv_ipc_validate_summary(&report, verdict, sizeof verdict);
  /* the record batch verdict always named the path as given ('-') */
  printf("%s: %s\n", report.tensors ? name : path, verdict);
  return 0;
}

/* ---- conversions */

/* Walks the arguments of stream-to-file / file-to-stream: --compression,
 * --level, --align, --endianness, --threads, and up to `max_pos`
 * positionals. Returns 0 or the usage status. */
static int parse_convert_args(const char *cmd, int argc, char **argv, QvRbWriteOptions *o,
                              const char **pos, int max_pos, int *npos) {
  static const char *const codecs[] = {"none", "lz4", "zstd", NULL};
  static const QvCompression codec_ids[] = {QV_COMPRESSION_NONE, QV_COMPRESSION_LZ4_FRAME,
                                            QV_COMPRESSION_ZSTD};
  static const char *const aligns[] = {"8", "64", NULL};
  static const char *const orders[] = {"native", "little", "big", NULL};
  static const int order_ids[] = {QV_ENDIAN_NATIVE, QV_ENDIAN_LITTLE, QV_ENDIAN_BIG};
  memset(o, 0, sizeof *o);
  o->validate = QV_VALIDATE_NONE; /* the reader validated in full already */
  const char *level, *level_arg = NULL;
  *npos = 0;
  QvCliArgs a;
  cli_args_init(&a, cmd, argc, argv);
  while (cli_args_next(&a)) {
    const char *p;
    int k;
    if ((p = cli_args_positional(&a)) != NULL && *npos < max_pos) pos[(*npos)++] = p;
    else if ((k = cli_args_choice(&a, "--compression", codecs)) >= 0) o->compression = codec_ids[k];
    else if ((k = cli_args_choice(&a, "--align", aligns)) >= 0) o->alignment = k ? 64 : 8;
    else if ((k = cli_args_choice(&a, "--endianness", orders)) >= 0) o->endianness = order_ids[k];
    else if ((level = cli_args_value(&a, "--level")) != NULL) level_arg = level;
    else if (cli_args_threads(&a)) continue;
    else if (cli_args_quirks(&a)) continue;
    else cli_args_unknown(&a);
  }
  if (a.status) return a.status;
  if (level_arg) {
    /* the codecs' own ranges (ZSTD 1..22, LZ4 frame 1..12: 3 and up is LZ4 HC) */
    int max = o->compression == QV_COMPRESSION_ZSTD ? 22 : 12;
    int64_t v;
    if (o->compression == QV_COMPRESSION_NONE)
      return cli_usage_error(cmd, "--level needs --compression lz4 or zstd");
    if (!cli_parse_index(level_arg, &v) || v < 1 || v > max)
      return cli_usage_error(cmd, "--level: '%s' is not a %s level from 1 to %d", level_arg,
                                o->compression == QV_COMPRESSION_ZSTD ? "zstd" : "lz4", max);
    o->compression_level = (int)v;
  }
  o->threads = cli_threads();
  return cli_check_output(cmd, "-");
}

int qv_cmd_stream_to_file(int argc, char **argv) {
  QvRbWriteOptions wo;
  int npos;
  int rc = parse_convert_args("stream-to-file", argc, argv, &wo, NULL, 0, &npos);
  if (rc) return rc;
  wo.format = QV_IPC_FORMAT_FILE;
  QvError error;
  qv_error_clear(&error);
  struct ArrowArrayStream s;
  QvSource *src;
  QvStatus st = cli_source_new("-", &src, &error);
  if (!st) {
    st = qv_rb_stream_reader_new(&s, src, cli_rb_read_options(), &error);
    qv_source_free(src);
  }
  if (st) return cli_fail("stream-to-file", &error);
  st = cli_write_batches("-", &s, &wo, &error);
  s.release(&s);
  return st ? cli_fail("stream-to-file", &error) : 0;
}

/* An ArrowArrayStream over the batches of a file reader, in footer order. */
typedef struct FileStream {
  QvRbFileReader *f;
  int64_t next;
  QvError error;
} FileStream;

/* The stream interface speaks errno; the writer maps it back, so "not
 * supported" has to survive the trip for the exit status to be 3. */
static int stream_errno(QvStatus st) {
  switch (st) {
    case QV_OK: return 0;
    case QV_ENOMEM: return ENOMEM;
    case QV_EIO: return EIO;
    case QV_ENOTSUP: return ENOTSUP;
    default: return EINVAL;
  }
}

static int fs_get_schema(struct ArrowArrayStream *s, struct ArrowSchema *out) {
  FileStream *p = s->private_data;
  return stream_errno(qv_rb_file_get_schema(p->f, out, &p->error));
}

static int fs_get_next(struct ArrowArrayStream *s, struct ArrowArray *out) {
  FileStream *p = s->private_data;
  memset(out, 0, sizeof *out);
  if (p->next >= qv_rb_file_n_batches(p->f)) return 0;
  return stream_errno(qv_rb_file_read_batch(p->f, p->next++, out, &p->error));
}

static const char *fs_last_error(struct ArrowArrayStream *s) {
  FileStream *p = s->private_data;
  return p->error.message;
}

static void fs_release(struct ArrowArrayStream *s) { s->release = NULL; }

int qv_cmd_file_to_stream(int argc, char **argv) {
  QvRbWriteOptions wo;
  const char *path;
  int npos;
  int rc = parse_convert_args("file-to-stream", argc, argv, &wo, &path, 1, &npos);
  if (rc) return rc;
  if (npos != 1) return cli_usage_error("file-to-stream", "needs a FILE ('-' for stdin)");
  wo.format = QV_IPC_FORMAT_STREAM;
  QvError error;
  qv_error_clear(&error);
  QvCliInput in;
  if (cli_input_open(path, &in, &error)) return cli_fail("file-to-stream", &error);
  FileStream fs;
  memset(&fs, 0, sizeof fs);
  QvStatus st = cli_rb_reader_memory(in.data, in.size, NULL, &fs.f, &error);
  if (st) cli_error_name_input(path, &error); /* errors about the input carry its path */
  if (!st) {
    /* fields that share a dictionary in the file share it in the stream */
    qv_rb_file_dictionary_ids(fs.f, &wo.dictionary_ids, &wo.n_dictionary_ids);
    struct ArrowArrayStream s = {fs_get_schema, fs_get_next, fs_last_error, fs_release, &fs};
    st = cli_write_batches("-", &s, &wo, &error);
    qv_rb_file_reader_free(fs.f);
  }
  cli_input_free(&in);
  return st ? cli_fail("file-to-stream", &error) : 0;
}
