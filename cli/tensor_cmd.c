/* quiver tensor from-npy / to-npy / from-npz / to-npz: NumPy .npy and SciPy
 * .npz <-> Arrow Tensor and SparseTensor messages. */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "input.h"
#include "quiver/npy.h"
#include "quiver/npz.h"
#include "quiver/sparse_ipc.h"
#include "quiver/tensor_ipc.h"

/* ---- writers */

static QvStatus write_npy(QvSink *sink, const void *tensor, QvError *error) {
  return qv_npy_write(tensor, sink, NULL, error);
}

static QvStatus write_npz(QvSink *sink, const void *tensor_and_opts, QvError *error) {
  const void *const *p = tensor_and_opts;
  return qv_npz_write(p[0], sink, p[1], error);
}

/* ---- subcommands */

static int from_npy(const char *in, const char *out, bool sparse, QvSparseFormat format,
                    const QvCliSparseArgs *a) {
  QvError err;
  qv_error_clear(&err);
  QvCliTensor t;
  memset(&t, 0, sizeof t);
  QvSource *src = NULL;
  QvStatus st = cli_source_new(in, &src, &err);
  if (st == QV_OK) st = qv_npy_read(src, NULL, &t.dense, &err);
  qv_source_free(src);
  int rc;
  if (st) {
    rc = cli_fail("tensor from-npy", &err);
  } else if (sparse) {
    rc = cli_convert_and_write("tensor from-npy", &t, false, format, a, QV_ARROW_NONE, out);
  } else {
    st = cli_check_dense_output(t.dense.ndim, t.dense.shape, t.dense.type, a->max_output, &err);
    if (st == QV_OK) st = cli_write_output(out, cli_write_tensor, &t.dense, &err);
    rc = st ? cli_fail("tensor from-npy", &err) : 0;
  }
  cli_tensor_free(&t);
  return rc;
}

static int to_npy(const char *in, const char *out, int64_t index, int64_t max_output) {
  QvError err;
  qv_error_clear(&err);
  QvCliTensor t;
  QvStatus st = cli_read_tensor(in, index, &t, &err);
  if (st) return cli_fail("tensor to-npy", &err);
  QvTensor dense;
  /* the .npy holds the row-major copy, whatever the strides */
  if (t.is_sparse)
    st = cli_check_dense_output(t.sparse.ndim, t.sparse.shape, t.sparse.value_type, max_output,
                                   &err);
  else
    st = cli_check_dense_output(t.dense.ndim, t.dense.shape, t.dense.type, max_output, &err);
  if (st) {
    cli_tensor_free(&t);
    return cli_fail("tensor to-npy", &err);
  }
  if (t.is_sparse) {
    QvSparseOptions so = {.struct_size = sizeof so, .threads = cli_threads()};
    st = qv_sparse_to_dense(&t.sparse, &so, &dense, &err);
  } else {
    dense = t.dense;
  }
  if (st == QV_OK) {
    st = cli_write_output(out, write_npy, &dense, &err);
    if (t.is_sparse) qv_tensor_reset(&dense);
  }
  cli_tensor_free(&t);
  return st ? cli_fail("tensor to-npy", &err) : 0;
}

static int from_npz(const char *in, const char *out, bool verify_crc) {
  QvError err;
  qv_error_clear(&err);
  QvSparseTensor t;
  QvSource *src = NULL;
  QvStatus st = cli_source_new(in, &src, &err);
  QvNpzReadInfo info = {.struct_size = sizeof info};
  QvNpzReadOptions o = {.struct_size = sizeof o, .threads = cli_threads(),
                        .verify_crc = verify_crc,
                        /* the tensor only goes to qv_sparse_write, which writes bytes */
                        .keep_misaligned = true};
  if (st == QV_OK) st = qv_npz_read(src, &o, &t, &info, &err);
  qv_source_free(src);
  if (st) return cli_fail("tensor from-npz", &err);
  if (info.sorted) {
    const char *within = t.format == QV_SPARSE_CSC ? "columns" : "rows";
    if (info.duplicates_summed > 0)
      fprintf(stderr,
              "quiver tensor from-npz: %s: indices were not sorted within %s; sorted (and %" PRId64
              " duplicates summed) as SciPy's sum_duplicates does\n",
              in, within, info.duplicates_summed);
    else
      fprintf(stderr,
              "quiver tensor from-npz: %s: indices were not sorted within %s; sorted as SciPy's "
              "sum_duplicates does\n",
              in, within);
  }
  QvCliSparseOut so = {&t, {sizeof so.options, QV_CSF_LENGTHS_ELEMENTS}};
  st = cli_write_output(out, cli_write_sparse, &so, &err);
  qv_sparse_reset(&t);
  return st ? cli_fail("tensor from-npz", &err) : 0;
}

static int to_npz(const char *in, const char *out, int64_t index, bool stored,
                  int64_t max_output) {
  QvError err;
  qv_error_clear(&err);
  QvCliTensor t;
  QvStatus st = cli_read_tensor(in, index, &t, &err);
  if (st) return cli_fail("tensor to-npz", &err);
  if (!t.is_sparse) {
    cli_tensor_free(&t);
    qv_error_set(&err, QV_EINVAL,
                 "message %lld is a dense Tensor; an .npz holds a sparse matrix: convert it "
                 "first (quiver convert IN OUT --to=csr)",
                 (long long)index);
    return cli_fail("tensor to-npz", &err);
  }
  st = cli_check_sparse_output(&t.sparse, max_output, &err);
  if (st) {
    cli_tensor_free(&t);
    return cli_fail("tensor to-npz", &err);
  }
  QvNpzWriteOptions o = {.struct_size = sizeof o, .stored = stored,
                         .threads = cli_threads()};
  const void *ctx[2] = {&t.sparse, &o};
  st = cli_write_output(out, write_npz, ctx, &err);
  cli_tensor_free(&t);
  return st ? cli_fail("tensor to-npz", &err) : 0;
}

int qv_cmd_tensor(int argc, char **argv) {
  static const char *const subs[] = {"from-npy", "to-npy", "from-npz", "to-npz", NULL};
  static const char *const formats[] = {"coo", "csr", "csc", "csf", NULL};
  if (argc < 1)
    return cli_usage_error("tensor", "needs a subcommand: from-npy, to-npy, from-npz, to-npz, "
                              "stack, unstack or from-table");
  /* the tensor column subcommands live in tensorcol_cmd.c */
  if (strcmp(argv[0], "stack") == 0) return qv_cmd_tensor_stack(argc - 1, argv + 1);
  if (strcmp(argv[0], "unstack") == 0) return qv_cmd_tensor_unstack(argc - 1, argv + 1);
  if (strcmp(argv[0], "from-table") == 0) return qv_cmd_tensor_from_table(argc - 1, argv + 1);
  if (strcmp(argv[0], "from-npy") == 0)
    for (int k = 1; k < argc && strcmp(argv[k], "--") != 0; k++)
      if (strcmp(argv[k], "--as-column") == 0) return qv_cmd_tensor_npy_column(argc - 1, argv + 1);
  int which = -1;
  for (int k = 0; subs[k]; k++)
    if (strcmp(argv[0], subs[k]) == 0) which = k;
  if (which < 0)
    return cli_usage_error("tensor", "'%s' is not one of from-npy, to-npy, from-npz, to-npz, stack, unstack, from-table",
                              argv[0]);
  bool is_from_npy = which == 0, is_to_npy = which == 1, is_from_npz = which == 2;
  bool is_to_npz = which == 3;
  char cmd[32];
  snprintf(cmd, sizeof cmd, "tensor %s", subs[which]);
  const char *pos[2];
  int npos = 0, sparse = -1;
  int64_t index = 0;
  bool has_index = false, stored = false, verify_crc = false, has_threads = false;
  QvCliSparseArgs sa;
  memset(&sa, 0, sizeof sa);
  QvCliArgs a;
  cli_args_init(&a, cmd, argc - 1, argv + 1);
  while (cli_args_next(&a)) {
    int k;
    if (cli_args_in_out_arg(&a, pos, &npos)) continue;
    else if (cli_args_index(&a, "--index", &index)) has_index = true;
    else if ((k = cli_args_choice(&a, "--sparse", formats)) >= 0) sparse = k;
    else if (cli_args_flag(&a, "--stored")) stored = true;
    else if (cli_args_flag(&a, "--verify-crc")) verify_crc = true;
    else if (cli_args_threads(&a)) has_threads = true;
    else if (cli_args_sparse(&a, &sa)) continue;
    else if (cli_args_output(&a, &sa.max_output)) continue;
    else cli_args_unknown(&a);
  }
  int usage = cli_args_in_out(&a, npos, NULL);
  if (usage) return usage;
  if (has_index && !is_to_npy && !is_to_npz)
    return cli_usage_error(cmd, "--index applies to to-npy and to-npz only");
  if ((sparse >= 0 || cli_sparse_args_given(&sa)) && !is_from_npy)
    return cli_usage_error(cmd, "--sparse and its options apply to from-npy only");
  if (cli_sparse_args_given(&sa) && sparse < 0)
    return cli_usage_error(cmd, "--index-type, --axis-order and --csf-lengths need --sparse");
  if (stored && !is_to_npz) return cli_usage_error(cmd, "--stored applies to to-npz only");
  if (verify_crc && !is_from_npz)
    return cli_usage_error(cmd, "--verify-crc applies to from-npz only");
  if (has_threads && !is_from_npz && !is_to_npz)
    return cli_usage_error(cmd, "--threads applies to from-npz and to-npz only");
  int rc = cli_check_output(cmd, pos[1]);
  if (rc) return rc;
  QvSparseFormat format = QV_SPARSE_COO;
  if (sparse >= 0) qv_sparse_format_parse(formats[sparse], &format, NULL);
  if (is_from_npy) return from_npy(pos[0], pos[1], sparse >= 0, format, &sa);
  if (is_to_npy) return to_npy(pos[0], pos[1], index, sa.max_output);
  if (is_from_npz) {
    if (sa.max_output) return cli_usage_error(cmd, "--max-output applies to from-npy, to-npy and to-npz");
    return from_npz(pos[0], pos[1], verify_crc);
  }
  return to_npz(pos[0], pos[1], index, stored, sa.max_output);
}
