/* quiver convert IN.arrow OUT.arrow --to=dense|coo|csr|csc|csf
 * [--value-type=T]: dense and sparse tensors between each other, their
 * values cast exactly (or refused) to T. */
#include <string.h>

#include "cli.h"

int qv_cmd_convert(int argc, char **argv) {
  static const char *const targets[] = {"dense", "coo", "csr", "csc", "csf", NULL};
  static const char *const value_types[] = {"int8",    "int16",   "int32",   "int64",
                                            "uint8",   "uint16",  "uint32",  "uint64",
                                            "float16", "float32", "float64", NULL};
  QvArrowType value_type = QV_ARROW_NONE;
  const char *pos[2];
  int npos = 0, to = -1;
  int64_t index = 0;
  QvCliSparseArgs sa;
  memset(&sa, 0, sizeof sa);
  QvCliArgs a;
  cli_args_init(&a, "convert", argc, argv);
  while (cli_args_next(&a)) {
    int k;
    if (cli_args_in_out_arg(&a, pos, &npos)) continue;
    else if ((k = cli_args_choice(&a, "--to", targets)) >= 0) to = k;
    else if ((k = cli_args_choice(&a, "--value-type", value_types)) >= 0)
      qv_arrow_type_parse(value_types[k], &value_type, NULL);
    else if (cli_args_index(&a, "--index", &index)) continue;
    else if (cli_args_sparse(&a, &sa)) continue;
    else if (cli_args_output(&a, &sa.max_output)) continue;
    else if (cli_args_threads(&a)) continue;
    else cli_args_unknown(&a);
  }
  int usage = cli_args_in_out(&a, npos, NULL);
  if (usage) return usage;
  if (to < 0) return cli_usage_error("convert", "needs --to=dense|coo|csr|csc|csf");
  int rc = cli_check_output("convert", pos[1]);
  if (rc) return rc;
  QvSparseFormat format = QV_SPARSE_COO;
  if (to > 0) qv_sparse_format_parse(targets[to], &format, NULL);
  QvError err;
  qv_error_clear(&err);
  QvCliTensor in;
  if (cli_read_tensor(pos[0], index, &in, &err)) return cli_fail("convert", &err);
  rc = cli_convert_and_write("convert", &in, to == 0, format, &sa, value_type, pos[1]);
  cli_tensor_free(&in);
  return rc;
}
