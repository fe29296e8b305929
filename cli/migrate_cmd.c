/* quiver migrate: Tensor / SparseTensor messages -> one-column tables, and
 * back with --to-messages (quiver/migrate.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "quiver/migrate.h"

static void print_notice(void *ctx, const char *message) {
  (void)ctx;
  fprintf(stderr, "quiver migrate: %s\n", message);
}

/* --split: OUT.<group>.ext for each group, each through a path sink
 * (qv_migrate_split finishes and frees it). */
static QvStatus open_group(void *ctx, const char *group, QvSink **sink, QvError *error) {
  const char *out = ctx;
  char *path;
  QvStatus st = qv_migrate_split_path(out, group, &path, error);
  if (st) return st;
  st = qv_sink_new_path(sink, path, 0, error);
  if (st == QV_OK) fprintf(stderr, "quiver migrate: %s -> %s\n", group, path);
  free(path);
  return st;
}

int qv_cmd_migrate(int argc, char **argv) {
  const char *cmd = "migrate", *pos[2], *name = NULL, *v;
  int npos = 0;
  bool split = false, back = false, file = false, threads = false;
  int64_t max_output = 0;
  QvCliArgs a;
  cli_args_init(&a, cmd, argc, argv);
  while (cli_args_next(&a)) {
    if (cli_args_in_out_arg(&a, pos, &npos)) continue;
    else if (cli_args_flag(&a, "--split")) split = true;
    else if (cli_args_flag(&a, "--to-messages")) back = true;
    else if (cli_args_flag(&a, "--file")) file = true;
    else if ((v = cli_args_value(&a, "--name")) != NULL) name = v;
    else if (cli_args_output(&a, &max_output)) continue;
    else if (cli_args_threads(&a)) threads = true;
    else cli_args_unknown(&a);
  }
  int usage = cli_args_in_out(&a, npos, NULL);
  if (usage) return usage;
  if (back && (split || file || name))
    return cli_usage_error(cmd, "--to-messages writes messages: --split, --file and --name "
                                "apply to tables");
  if (split && strcmp(pos[1], "-") == 0)
    return cli_usage_error(cmd, "--split writes one file per group: OUT must be a path");
  int rc = cli_check_output(cmd, pos[1]);
  if (rc) return rc;
  (void)threads;
  QvMigrateOptions o = {.struct_size = sizeof o,
                        .format = file ? QV_IPC_FORMAT_FILE : QV_IPC_FORMAT_STREAM,
                        .name = name, .max_output_size = max_output,
                        .threads = cli_threads(), .notice = print_notice};
  QvError err = {0};
  QvSource *src;
  QvStatus st = cli_source_new(pos[0], &src, &err);
  if (st) return cli_fail(cmd, &err);
  if (split) {
    st = qv_migrate_split(src, open_group, (void *)pos[1], &o, NULL, &err);
  } else {
    QvSink *sink;
    st = cli_output_open(pos[1], &sink, &err);
    if (st == QV_OK) {
      st = back ? qv_migrate_to_messages(src, sink, &o, NULL, &err)
                : qv_migrate(src, sink, &o, NULL, &err);
      if (st == QV_OK)
        st = cli_output_close(pos[1], sink, st, &err);
      else
        qv_sink_free(sink); /* the error is the input's: OUT is left as it was */
    }
  }
  qv_source_free(src);
  if (st == QV_ELIMIT) cli_name_max_output(&err);
  return st ? cli_fail(cmd, &err) : 0;
}
