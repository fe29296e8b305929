/* quiver tensor from-table: the numeric columns of a table (an Arrow stream
 * or file) as one 2-D Tensor message, as Arrow C++'s RecordBatch::ToTensor
 * makes it (quiver/table_tensor.h). A subcommand of `quiver tensor`. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "quiver/table_tensor.h"
#include "quiver/tensor_ipc.h"

/* --columns a,b,c: the names, split in place in `buf` (an empty name is a
 * usage error). */
static int split_columns(const char *cmd, char *buf, const char ***out, int64_t *n) {
  int64_t count = 1;
  for (const char *p = buf; *p; p++) count += *p == ',';
  const char **names = malloc((size_t)count * sizeof *names);
  if (names == NULL) {
    fprintf(stderr, "quiver %s: out of memory\n", cmd);
    return 1;
  }
  int64_t k = 0;
  for (char *p = buf;;) {
    char *comma = strchr(p, ',');
    if (comma) *comma = '\0';
    if (*p == '\0') {
      free(names);
      return cli_usage_error(cmd, "--columns needs names separated by commas, without empty ones");
    }
    names[k++] = p;
    if (!comma) break;
    p = comma + 1;
  }
  *out = names;
  *n = k;
  return 0;
}

/* cli_threads() is at most QV_RB_MAX_THREADS, which the copy takes. */
_Static_assert(QV_RB_MAX_THREADS <= QV_TABLE_TENSOR_MAX_THREADS, "--threads beyond the table limit");

int qv_cmd_tensor_from_table(int argc, char **argv) {
  const char *cmd = "tensor from-table", *pos[2], *columns = NULL, *v;
  int npos = 0;
  bool column_major = false, null_to_nan = false;
  int64_t max_output = 0;
  QvCliArgs a;
  cli_args_init(&a, cmd, argc, argv);
  while (cli_args_next(&a)) {
    if (cli_args_in_out_arg(&a, pos, &npos)) continue;
    else if ((v = cli_args_value(&a, "--columns")) != NULL) columns = v;
    else if (cli_args_flag(&a, "--column-major")) column_major = true;
    else if (cli_args_flag(&a, "--null-to-nan")) null_to_nan = true;
    else if (cli_args_output(&a, &max_output)) continue;
    else if (cli_args_threads(&a)) continue;
    else cli_args_unknown(&a);
  }
  int rc = cli_args_in_out(&a, npos, pos[1]);
  if (rc) return rc;
  char *buf = NULL;
  const char **names = NULL;
  int64_t n_names = 0;
  if (columns != NULL) {
    buf = strdup(columns);
    if (buf == NULL) {
      fprintf(stderr, "quiver %s: out of memory\n", cmd);
      return 1;
    }
    if ((rc = split_columns(cmd, buf, &names, &n_names)) != 0) {
      free(buf);
      return rc;
    }
  }
  QvTableToTensorOptions o = {.struct_size = sizeof o, .null_to_nan = null_to_nan,
                              .column_major = column_major, .columns = names,
                              .n_columns = n_names, .max_output_size = max_output,
                              .threads = cli_threads()}; /* --threads, else every CPU */
  QvError err = {0};
  QvSource *src;
  QvStatus st = cli_source_new(pos[0], &src, &err);
  struct ArrowArrayStream stream;
  memset(&stream, 0, sizeof stream);
  if (st == QV_OK) {
    /* the copy reads every byte of the columns on its threads: they fault
     * the file's pages in as they go, in parallel, faster than a full
     * validation's populate of the whole mapping on one thread first */
    if (o.threads > 1 && qv_source_get_advice(src) == QV_SOURCE_ADVICE_DEFAULT)
      qv_source_set_advice(src, QV_SOURCE_ADVICE_NONE);
    st = qv_rb_stream_reader_new(&stream, src, cli_rb_read_options(), &err);
    qv_source_free(src);
    if (st && strcmp(pos[0], "-") != 0 && strncmp(err.message, pos[0], strlen(pos[0])) != 0)
      qv_error_prefix(&err, "%s", pos[0]);
  }
  QvTensor t;
  memset(&t, 0, sizeof t);
  if (st == QV_OK) st = qv_table_stream_to_tensor(&stream, &o, &t, &err);
  if (stream.release) stream.release(&stream);
  QvSink *sink;
  if (st == QV_OK && (st = cli_output_open(pos[1], &sink, &err)) == QV_OK)
    st = cli_output_close(pos[1], sink, qv_tensor_write(&t, sink, NULL, &err), &err);
  qv_tensor_reset(&t);
  free(names);
  free(buf);
  return st ? cli_fail(cmd, &err) : 0;
}
