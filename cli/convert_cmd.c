/* quiver convert IN.arrow OUT.arrow --to=dense|coo|csr|csc|csf: dense and
 * sparse tensors between each other. */
#include <string.h>

#include "cli.h"

int qv_cmd_convert(int argc, char **argv) {
  static const char *const targets[] = {"dense", "coo", "csr", "csc", "csf", NULL};
  const char *pos[2];
  int npos = 0, to = -1;
  int64_t index = 0;
  QvCliSparseArgs sa;
  memset(&sa, 0, sizeof sa);
  QvCliArgs a;
  cli_args_init(&a, "convert", argc, argv);
  while (cli_args_next(&a)) {
    const char *p;
    int k;
    if ((p = cli_args_positional(&a)) != NULL && npos < 2) pos[npos++] = p;
    else if ((k = cli_args_choice(&a, "--to", targets)) >= 0) to = k;
    else if (cli_args_index(&a, "--index", &index)) continue;
    else if (cli_args_sparse(&a, &sa)) continue;
    else if (cli_args_size(&a, "--max-output", &sa.max_output)) continue;
    else if (cli_args_threads(&a)) continue;
    else if (cli_args_no_fsync(&a)) continue;
    else cli_args_unknown(&a);
  }
  if (a.status) return a.status;
  if (npos != 2) return cli_usage_error("convert", "needs IN and OUT ('-' for stdin, stdout)");
  if (to < 0) return cli_usage_error("convert", "needs --to=dense|coo|csr|csc|csf");
  int rc = cli_check_output("convert", pos[1]);
  if (rc) return rc;
  QvSparseFormat format = QV_SPARSE_COO;
  if (to > 0) qv_sparse_format_parse(targets[to], &format, NULL);
  QvError err;
  qv_error_clear(&err);
  QvCliTensor in;
  if (cli_read_tensor(pos[0], index, &in, &err)) return cli_fail("convert", &err);
  rc = cli_convert_and_write("convert", &in, to == 0, format, &sa, pos[1]);
  cli_tensor_free(&in);
  return rc;
}
