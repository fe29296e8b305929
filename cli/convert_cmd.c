/* quiver convert IN.arrow OUT.arrow --to=dense|coo|csr|csc|csf: dense and
 * sparse tensors between each other; plus the option parsing and tensor
 * input helpers the tensor subcommands share. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "quiver/ipc.h"
#include "quiver/tensor_ipc.h"

/* ---- shared helpers */

const char *qv_cli_option(const char *name, int argc, char **argv, int *i, bool *missing) {
  const char *arg = argv[*i];
  size_t n = strlen(name);
  if (strncmp(arg, name, n) != 0) return NULL;
  if (arg[n] == '=') {
    if (arg[n + 1] == '\0') *missing = true;
    return arg[n + 1] ? arg + n + 1 : NULL;
  }
  if (arg[n] != '\0') return NULL;
  if (*i + 1 >= argc) {
    *missing = true;
    return NULL;
  }
  return argv[++*i];
}

static bool parse_axis_order(const char *s, QvCliSparseArgs *a) {
  a->n_axis = 0;
  while (*s) {
    if (*s < '0' || *s > '9' || a->n_axis >= QV_TENSOR_MAX_NDIM) return false;
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || v >= QV_TENSOR_MAX_NDIM) return false;
    a->axis_order[a->n_axis++] = (int32_t)v;
    if (*end == ',') {
      if (end[1] == '\0') return false;
      end++;
    } else if (*end != '\0') {
      return false;
    }
    s = end;
  }
  return a->n_axis > 0;
}

int qv_cli_sparse_arg(const char *cmd, int argc, char **argv, int *i, QvCliSparseArgs *a) {
  bool missing = false;
  const char *v;
  if ((v = qv_cli_option("--index-type", argc, argv, i, &missing)) != NULL || missing) {
    QvError err;
    if (missing || qv_value_type_parse(v, &a->index_type, &err) != QV_OK ||
        a->index_type > QV_VALUE_UINT64) {
      fprintf(stderr, "quiver %s: --index-type needs an integer type (int8 ... int64, uint8 ... uint64)\n",
              cmd);
      return -1;
    }
    a->has_index_type = true;
    return 1;
  }
  if ((v = qv_cli_option("--axis-order", argc, argv, i, &missing)) != NULL || missing) {
    if (missing || !parse_axis_order(v, a)) {
      fprintf(stderr, "quiver %s: --axis-order needs a comma-separated list of axes, e.g. 2,0,1\n",
              cmd);
      return -1;
    }
    return 1;
  }
  if ((v = qv_cli_option("--csf-lengths", argc, argv, i, &missing)) != NULL || missing) {
    if (!missing && strcmp(v, "elements") == 0) {
      a->csf_lengths = QV_CSF_LENGTHS_ELEMENTS;
    } else if (!missing && strcmp(v, "bytes") == 0) {
      a->csf_lengths = QV_CSF_LENGTHS_BYTES;
    } else {
      fprintf(stderr, "quiver %s: --csf-lengths is 'elements' (Arrow C++'s) or 'bytes'\n", cmd);
      return -1;
    }
    a->has_csf_lengths = true;
    return 1;
  }
  return 0;
}

void qv_cli_tensor_free(QvCliTensor *t) {
  qv_tensor_reset(&t->dense);
  qv_sparse_reset(&t->sparse);
  t->is_sparse = false;
}

QvStatus qv_cli_read_tensor(const char *path, int64_t index, QvCliTensor *out, QvError *error) {
  memset(out, 0, sizeof *out);
  bool in_stdin = strcmp(path, "-") == 0;
  QvSource *src;
  QvStatus st = in_stdin ? qv_source_new_fd(&src, STDIN_FILENO, error)
                         : qv_source_new_path(&src, path, error);
  if (st) return st;
  QvIpcReader *r;
  st = qv_ipc_reader_new(&r, src, NULL, error);
  qv_source_free(src); /* the reader holds its own reference */
  if (st) {
    if (!in_stdin) qv_error_prefix(error, "%s", path);
    return st;
  }
  QvIpcMessage msg;
  st = qv_ipc_reader_nth(r, index, &msg, error);
  if (st == QV_OK) {
    uint8_t kind = msg.message.header_type;
    if (kind == QV_HEADER_TENSOR) {
      st = qv_tensor_from_message(&msg, &out->dense, error);
    } else if (kind == QV_HEADER_SPARSE_TENSOR) {
      out->is_sparse = true;
      st = qv_sparse_from_message(&msg, &out->sparse, NULL, error);
    } else {
      st = qv_error_set(error, QV_EINVAL, "message is a %s, not a Tensor or SparseTensor",
                        qv_header_type_name(kind));
    }
    if (st)
      qv_error_prefix(error, "message %lld at offset %lld", (long long)index, (long long)msg.offset);
    qv_ipc_message_reset(&msg);
  }
  qv_ipc_reader_free(r);
  if (st) {
    qv_cli_tensor_free(out);
    if (!in_stdin) qv_error_prefix(error, "%s", path);
  }
  return st;
}

/* The index type for a sparse -> sparse conversion without --index-type:
 * the input's, when its indptr shares it (the conversion uses one type for
 * both), else int64. */
static QvValueType default_index_type(const QvSparseTensor *t) {
  if (t->format == QV_SPARSE_COO || t->indptr_type == t->index_type) return t->index_type;
  return QV_VALUE_INT64;
}

int qv_cli_convert_and_write(const char *cmd, const QvCliTensor *in, bool to_dense,
                             QvSparseFormat format, const QvCliSparseArgs *a, const char *out) {
  if (to_dense && (a->has_index_type || a->n_axis > 0 || a->has_csf_lengths)) {
    fprintf(stderr,
            "quiver %s: --index-type, --axis-order and --csf-lengths apply to sparse output only\n",
            cmd);
    return 2;
  }
  if (!to_dense && format != QV_SPARSE_CSF && (a->n_axis > 0 || a->has_csf_lengths)) {
    fprintf(stderr, "quiver %s: --axis-order and --csf-lengths apply to CSF output only\n", cmd);
    return 2;
  }
  int32_t ndim = in->is_sparse ? in->sparse.ndim : in->dense.ndim;
  QvError err;
  qv_error_clear(&err);
  if (a->n_axis > 0 && a->n_axis != ndim) {
    qv_error_set(&err, QV_EINVAL, "--axis-order lists %d axes, the tensor has %d dimensions",
                 (int)a->n_axis, (int)ndim);
    return qv_cli_fail(cmd, &err);
  }
  QvStatus st;
  if (to_dense) {
    QvTensor dense;
    if (in->is_sparse) {
      st = qv_sparse_to_dense(&in->sparse, &dense, &err);
      if (st) return qv_cli_fail(cmd, &err);
    } else {
      dense = in->dense;
    }
    st = qv_cli_write_output(out, qv_cli_write_tensor, &dense, &err);
    if (in->is_sparse) qv_tensor_reset(&dense);
    return st ? qv_cli_fail(cmd, &err) : 0;
  }
  QvSparseOptions o;
  memset(&o, 0, sizeof o);
  o.index_type = a->has_index_type ? a->index_type
                 : in->is_sparse   ? default_index_type(&in->sparse)
                                   : QV_VALUE_INT64;
  o.axis_order = a->n_axis > 0 ? a->axis_order : NULL;
  QvSparseTensor sp;
  st = in->is_sparse ? qv_sparse_convert(&in->sparse, format, &o, &sp, &err)
                     : qv_sparse_from_dense(&in->dense, format, &o, &sp, &err);
  if (st) return qv_cli_fail(cmd, &err);
  QvCliSparseOut so = {&sp, {sizeof so.options, a->has_csf_lengths ? a->csf_lengths : QV_CSF_LENGTHS_ELEMENTS}};
  st = qv_cli_write_output(out, qv_cli_write_sparse, &so, &err);
  qv_sparse_reset(&sp);
  return st ? qv_cli_fail(cmd, &err) : 0;
}

/* ---- quiver convert */

static int usage(FILE *f) {
  fprintf(f,
          "usage: quiver convert IN.arrow OUT.arrow --to=dense|coo|csr|csc|csf [--index N]\n"
          "           [--index-type=T] [--axis-order=A,B,...] [--csf-lengths=elements|bytes]\n"
          "  Converts a Tensor or SparseTensor message (message N, default 0) to a dense\n"
          "  tensor or a sparse one. --index-type: int8 ... int64, uint8 ... uint64 (default\n"
          "  int64, or the input's index type for sparse input); --axis-order: the CSF level\n"
          "  order (default 0,1,...); --csf-lengths: how CSF buffer lengths are written\n"
          "  (default elements, as Arrow C++ reads them). IN may be '-' for stdin, OUT '-'\n"
          "  for stdout.\n");
  return 2;
}

int qv_cmd_convert(int argc, char **argv) {
  if (argc >= 1 && (strcmp(argv[0], "-h") == 0 || strcmp(argv[0], "--help") == 0)) {
    usage(stdout);
    return 0;
  }
  const char *pos[2];
  int npos = 0;
  int64_t index = 0;
  const char *to = NULL;
  QvCliSparseArgs a;
  memset(&a, 0, sizeof a);
  for (int i = 0; i < argc; i++) {
    bool missing = false;
    const char *v;
    int k = qv_cli_sparse_arg("convert", argc, argv, &i, &a);
    if (k < 0) return 2;
    if (k > 0) continue;
    if ((v = qv_cli_option("--to", argc, argv, &i, &missing)) != NULL || missing) {
      if (missing) return usage(stderr);
      to = v;
    } else if ((v = qv_cli_option("--index", argc, argv, &i, &missing)) != NULL || missing) {
      if (missing || !qv_cli_parse_index(v, &index)) {
        fprintf(stderr, "quiver convert: --index needs a non-negative integer\n");
        return 2;
      }
    } else if (argv[i][0] == '-' && argv[i][1] != '\0') {
      fprintf(stderr, "quiver convert: unknown option '%s'\n", argv[i]);
      return usage(stderr);
    } else if (npos < 2) {
      pos[npos++] = argv[i];
    } else {
      return usage(stderr);
    }
  }
  if (npos != 2 || to == NULL) return usage(stderr);
  bool to_dense = strcmp(to, "dense") == 0;
  QvSparseFormat format = QV_SPARSE_COO;
  QvError err;
  if (!to_dense && qv_sparse_format_parse(to, &format, &err) != QV_OK) {
    fprintf(stderr, "quiver convert: --to is dense, coo, csr, csc or csf, not '%s'\n", to);
    return 2;
  }
  QvCliTensor in;
  if (qv_cli_read_tensor(pos[0], index, &in, &err)) return qv_cli_fail("convert", &err);
  int rc = qv_cli_convert_and_write("convert", &in, to_dense, format, &a, pos[1]);
  qv_cli_tensor_free(&in);
  return rc;
}
