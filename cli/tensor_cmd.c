/* quiver tensor from-npy / to-npy / from-npz / to-npz: NumPy .npy and SciPy
 * .npz <-> Arrow Tensor and SparseTensor messages. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "quiver/npy.h"
#include "quiver/npz.h"
#include "quiver/sparse_ipc.h"
#include "quiver/tensor_ipc.h"

static int usage(FILE *f) {
  fprintf(f,
          "usage: quiver tensor from-npy IN.npy OUT.arrow [--sparse=coo|csr|csc|csf]\n"
          "                [--index-type=T] [--axis-order=A,B,...] [--csf-lengths=elements|bytes]\n"
          "       quiver tensor to-npy IN.arrow OUT.npy [--index N]\n"
          "       quiver tensor from-npz IN.npz OUT.arrow\n"
          "       quiver tensor to-npz IN.arrow OUT.npz [--index N] [--stored]\n"
          "  IN may be '-' for stdin, OUT '-' for stdout. --index N picks message N\n"
          "  (0-based) of a file holding several. from-npy --sparse writes a SparseTensor\n"
          "  (index type int64 unless --index-type; CSF levels in --axis-order, default\n"
          "  0,1,...). to-npy densifies a SparseTensor. .npz files are SciPy's save_npz\n"
          "  format (CSR, CSC, COO matrices); to-npz deflates unless --stored.\n");
  return 2;
}

/* ---- output */

QvStatus qv_cli_write_tensor(QvSink *sink, const void *tensor, QvError *error) {
  return qv_tensor_write(tensor, sink, error);
}

QvStatus qv_cli_write_sparse(QvSink *sink, const void *sparse_out, QvError *error) {
  const QvCliSparseOut *so = sparse_out;
  return qv_sparse_write(so->tensor, sink, &so->options, error);
}

static QvStatus write_npy_fd(int fd, const void *tensor, QvError *error) {
  return qv_npy_write_fd(tensor, fd, error);
}

static QvStatus write_npz_fd(int fd, const void *opts_and_tensor, QvError *error) {
  const void *const *p = opts_and_tensor;
  return qv_npz_write_fd(p[0], p[1], fd, error);
}

QvStatus qv_cli_write_output(const char *out, QvCliWriteFn write_fn, const void *ctx,
                             QvError *err) {
  QvSink *sink;
  QvStatus st = strcmp(out, "-") == 0 ? qv_sink_new_fd(&sink, STDOUT_FILENO, err)
                                      : qv_sink_new_path(&sink, out, 0, err);
  if (st) return st;
  st = write_fn(sink, ctx, err);
  if (st == QV_OK) st = qv_sink_finish(sink, err);
  qv_sink_free(sink); /* after a failure this removes the temporary file */
  /* the sink's own errors name the file already */
  if (st && strcmp(out, "-") != 0 && err && strncmp(err->message, out, strlen(out)) != 0)
    qv_error_prefix(err, "%s", out);
  return st;
}

QvStatus qv_cli_write_output_fd(const char *out, QvCliWriteFdFn write_fn, const void *ctx,
                                QvError *err) {
  if (strcmp(out, "-") == 0) return write_fn(STDOUT_FILENO, ctx, err);
  struct stat sb;
  if (stat(out, &sb) == 0 && !S_ISREG(sb.st_mode)) {
    FILE *f = fopen(out, "wb");
    if (f == NULL) return qv_error_set(err, QV_EIO, "%s: %s", out, strerror(errno));
    QvStatus st = write_fn(fileno(f), ctx, err);
    if (fclose(f) != 0 && st == QV_OK)
      st = qv_error_set(err, QV_EIO, "%s: close failed: %s", out, strerror(errno));
    if (st) qv_error_prefix(err, "%s", out);
    return st;
  }
  size_t n = strlen(out);
  /* OUT.tmp + mkstemp's six template characters + NUL */
  char *tmp = malloc(n + 4 + 6 + 1);
  if (tmp == NULL) return qv_error_set(err, QV_ENOMEM, "out of memory");
  memcpy(tmp, out, n);
  memcpy(tmp + n, ".tmp", 4);
  memset(tmp + n + 4, 'X', 6);
  tmp[n + 10] = '\0';
  int fd = mkstemp(tmp);
  if (fd < 0) {
    QvStatus st = qv_error_set(err, QV_EIO, "%s: cannot create a temporary file: %s", out,
                               strerror(errno));
    free(tmp);
    return st;
  }
  mode_t mask = umask(0);
  umask(mask);
  QvStatus st = QV_OK;
  if (fchmod(fd, 0666 & ~mask) != 0)
    st = qv_error_set(err, QV_EIO, "%s: %s", tmp, strerror(errno));
  if (st == QV_OK) st = write_fn(fd, ctx, err);
  if (close(fd) != 0 && st == QV_OK)
    st = qv_error_set(err, QV_EIO, "%s: close failed: %s", tmp, strerror(errno));
  if (st == QV_OK && rename(tmp, out) != 0)
    st = qv_error_set(err, QV_EIO, "%s: %s", out, strerror(errno));
  if (st) {
    unlink(tmp);
    qv_error_prefix(err, "%s", out);
  }
  free(tmp);
  return st;
}

/* ---- subcommands */

static int from_npy(const char *in, const char *out, bool sparse, QvSparseFormat format,
                    const QvCliSparseArgs *a) {
  QvError err;
  qv_error_clear(&err);
  QvCliTensor t;
  memset(&t, 0, sizeof t);
  QvStatus st;
  QvCliInput input = {0};
  if (strcmp(in, "-") == 0) {
    st = qv_cli_input_open(in, &input, &err);
    if (st == QV_OK) st = qv_npy_read_memory(input.data, input.size, NULL, &t.dense, NULL, &err);
  } else {
    st = qv_npy_read_path(in, &t.dense, &err);
  }
  int rc;
  if (st) {
    rc = qv_cli_fail("tensor from-npy", &err);
  } else if (sparse) {
    rc = qv_cli_convert_and_write("tensor from-npy", &t, false, format, a, out);
  } else {
    st = qv_cli_write_output(out, qv_cli_write_tensor, &t.dense, &err);
    rc = st ? qv_cli_fail("tensor from-npy", &err) : 0;
  }
  qv_cli_tensor_free(&t);
  qv_cli_input_free(&input);
  return rc;
}

static int to_npy(const char *in, const char *out, int64_t index) {
  QvError err;
  qv_error_clear(&err);
  QvCliTensor t;
  QvStatus st = qv_cli_read_tensor(in, index, &t, &err);
  if (st) return qv_cli_fail("tensor to-npy", &err);
  QvTensor dense;
  if (t.is_sparse) {
    st = qv_sparse_to_dense(&t.sparse, &dense, &err);
  } else {
    dense = t.dense;
  }
  if (st == QV_OK) {
    st = qv_cli_write_output_fd(out, write_npy_fd, &dense, &err);
    if (t.is_sparse) qv_tensor_reset(&dense);
  }
  qv_cli_tensor_free(&t);
  return st ? qv_cli_fail("tensor to-npy", &err) : 0;
}

static int from_npz(const char *in, const char *out) {
  QvError err;
  qv_error_clear(&err);
  QvSparseTensor t;
  QvStatus st;
  if (strcmp(in, "-") == 0) {
    QvCliInput input = {0};
    st = qv_cli_input_open(in, &input, &err);
    if (st == QV_OK) st = qv_npz_read_memory(input.data, input.size, &t, &err);
    qv_cli_input_free(&input);
  } else {
    st = qv_npz_read_path(in, &t, &err);
  }
  if (st) return qv_cli_fail("tensor from-npz", &err);
  QvCliSparseOut so = {&t, {sizeof so.options, QV_CSF_LENGTHS_ELEMENTS}};
  st = qv_cli_write_output(out, qv_cli_write_sparse, &so, &err);
  qv_sparse_reset(&t);
  return st ? qv_cli_fail("tensor from-npz", &err) : 0;
}

static int to_npz(const char *in, const char *out, int64_t index, bool stored) {
  QvError err;
  qv_error_clear(&err);
  QvCliTensor t;
  QvStatus st = qv_cli_read_tensor(in, index, &t, &err);
  if (st) return qv_cli_fail("tensor to-npz", &err);
  if (!t.is_sparse) {
    qv_cli_tensor_free(&t);
    qv_error_set(&err, QV_EINVAL,
                 "message %lld is a dense Tensor; an .npz holds a sparse matrix: convert it "
                 "first (quiver convert IN OUT --to=csr)",
                 (long long)index);
    return qv_cli_fail("tensor to-npz", &err);
  }
  QvNpzWriteOptions o = {.stored = stored};
  const void *ctx[2] = {&t.sparse, &o};
  st = qv_cli_write_output_fd(out, write_npz_fd, ctx, &err);
  qv_cli_tensor_free(&t);
  return st ? qv_cli_fail("tensor to-npz", &err) : 0;
}

int qv_cmd_tensor(int argc, char **argv) {
  if (argc < 1) return usage(stderr);
  if (strcmp(argv[0], "-h") == 0 || strcmp(argv[0], "--help") == 0) {
    usage(stdout);
    return 0;
  }
  const char *sub = argv[0];
  bool is_from_npy = strcmp(sub, "from-npy") == 0, is_to_npy = strcmp(sub, "to-npy") == 0;
  bool is_from_npz = strcmp(sub, "from-npz") == 0, is_to_npz = strcmp(sub, "to-npz") == 0;
  if (!is_from_npy && !is_to_npy && !is_from_npz && !is_to_npz) {
    fprintf(stderr, "quiver tensor: unknown subcommand '%s'\n", sub);
    return usage(stderr);
  }
  const char *pos[2];
  int npos = 0;
  int64_t index = 0;
  bool has_index = false, stored = false, sparse = false, has_sparse_args = false;
  QvSparseFormat format = QV_SPARSE_COO;
  QvCliSparseArgs a;
  memset(&a, 0, sizeof a);
  for (int i = 1; i < argc; i++) {
    bool missing = false;
    const char *v;
    int k = qv_cli_sparse_arg("tensor", argc, argv, &i, &a);
    if (k < 0) return 2;
    if (k > 0) {
      has_sparse_args = true;
      continue;
    }
    if ((v = qv_cli_option("--index", argc, argv, &i, &missing)) != NULL || missing) {
      if (missing || !qv_cli_parse_index(v, &index)) {
        fprintf(stderr, "quiver tensor: --index needs a non-negative integer\n");
        return 2;
      }
      has_index = true;
    } else if ((v = qv_cli_option("--sparse", argc, argv, &i, &missing)) != NULL || missing) {
      QvError err;
      if (missing || qv_sparse_format_parse(v, &format, &err) != QV_OK) {
        fprintf(stderr, "quiver tensor: --sparse is coo, csr, csc or csf\n");
        return 2;
      }
      sparse = true;
    } else if (strcmp(argv[i], "--stored") == 0) {
      stored = true;
    } else if (argv[i][0] == '-' && argv[i][1] != '\0') {
      fprintf(stderr, "quiver tensor: unknown option '%s'\n", argv[i]);
      return usage(stderr);
    } else if (npos < 2) {
      pos[npos++] = argv[i];
    } else {
      return usage(stderr);
    }
  }
  if (npos != 2) return usage(stderr);
  if (has_index && !is_to_npy && !is_to_npz) {
    fprintf(stderr, "quiver tensor %s: --index applies to to-npy and to-npz only\n", sub);
    return 2;
  }
  if ((sparse || has_sparse_args) && !is_from_npy) {
    fprintf(stderr, "quiver tensor %s: --sparse and its options apply to from-npy only\n", sub);
    return 2;
  }
  if (has_sparse_args && !sparse) {
    fprintf(stderr, "quiver tensor from-npy: --index-type, --axis-order and --csf-lengths need "
                    "--sparse\n");
    return 2;
  }
  if (stored && !is_to_npz) {
    fprintf(stderr, "quiver tensor %s: --stored applies to to-npz only\n", sub);
    return 2;
  }
  if (is_from_npy) return from_npy(pos[0], pos[1], sparse, format, &a);
  if (is_to_npy) return to_npy(pos[0], pos[1], index);
  if (is_from_npz) return from_npz(pos[0], pos[1]);
  return to_npz(pos[0], pos[1], index, stored);
}
