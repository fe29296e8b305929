/* quiver CLI: output files, exit statuses and error messages (output.h). */
#include "output.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "quiver/tensor_ipc.h"

int cli_exit_code(QvStatus status) {
  switch (status) {
    case QV_OK: return QV_EXIT_OK;
    case QV_ENOTSUP: return QV_EXIT_UNSUPPORTED;
    default: return QV_EXIT_INVALID;
  }
}

int cli_fail(const char *cmd, const QvError *error) {
  fprintf(stderr, "quiver %s: %s\n", cmd,
          error->message[0] ? error->message : qv_status_name(error->code));
  return cli_exit_code(error->code);
}

int cli_check_output(const char *cmd, const char *out) {
  if (strcmp(out, "-") != 0 || !isatty(STDOUT_FILENO)) return 0;
  return cli_usage_error(cmd, "refusing to write binary data to a terminal");
}

/* ---- sinks */

static unsigned sink_flags; /* QV_SINK_NO_FSYNC after --no-fsync */

void cli_set_no_fsync(void) { sink_flags = QV_SINK_NO_FSYNC; }

QvStatus cli_output_open(const char *out, QvSink **sink, QvError *error) {
  return strcmp(out, "-") == 0 ? qv_sink_new_fd(sink, STDOUT_FILENO, error)
                               : qv_sink_new_path(sink, out, sink_flags, error);
}

QvStatus cli_output_close(const char *out, QvSink *sink, QvStatus status, QvError *error) {
  if (status == QV_OK) status = qv_sink_finish(sink, error);
  qv_sink_free(sink); /* after a failure this removes the temporary file */
  /* the sink's own errors name the file already */
  if (status && strcmp(out, "-") != 0 && error && strncmp(error->message, out, strlen(out)) != 0)
    qv_error_prefix(error, "%s", out);
  return status;
}

QvStatus cli_write_output(const char *out, QvCliWriteFn write_fn, const void *ctx,
                             QvError *err) {
  QvSink *sink;
  QvStatus st = cli_output_open(out, &sink, err);
  if (st) return st;
  return cli_output_close(out, sink, write_fn(sink, ctx, err), err);
}

QvStatus cli_write_batches(const char *out, struct ArrowArrayStream *s,
                              const QvRbWriteOptions *options, QvError *error) {
  QvSink *sink;
  QvStatus st = cli_output_open(out, &sink, error);
  if (st) return st;
  return cli_output_close(out, sink, qv_rb_write_all(s, sink, options, error), error);
}

QvStatus cli_write_tensor(QvSink *sink, const void *tensor, QvError *error) {
  return qv_tensor_write(tensor, sink, NULL, error);
}

QvStatus cli_write_sparse(QvSink *sink, const void *sparse_out, QvError *error) {
  const QvCliSparseOut *so = sparse_out;
  return qv_sparse_write(so->tensor, sink, &so->options, error);
}

/* ---- conversion */

/* The index type for a sparse -> sparse conversion without --index-type:
 * the input's, when its indptr shares it (the conversion uses one type for
 * both), else int64. */
static QvArrowType default_index_type(const QvSparseTensor *t) {
  if (t->format == QV_SPARSE_COO || t->indptr_type == t->index_type) return t->index_type;
  return QV_ARROW_INT64;
}

static QvStatus over_limit(int64_t size, int64_t limit, QvError *error) {
  return qv_error_set(error, QV_ELIMIT, "output of %s%lld bytes exceeds the limit of %lld (--max-output)",
                      size == INT64_MAX ? "more than " : "", (long long)size, (long long)limit);
}

/* a * b saturated at INT64_MAX: only compared with the limit. */
static int64_t sat_mul(int64_t a, int64_t b) {
  return (a != 0 && b > INT64_MAX / a) ? INT64_MAX : a * b;
}

QvStatus cli_check_dense_output(int32_t ndim, const int64_t *shape, QvArrowType type,
                                   int64_t max_output, QvError *error) {
  int64_t limit = max_output > 0 ? max_output : QV_DEFAULT_MAX_OUTPUT_SIZE;
  int64_t size = (int64_t)qv_arrow_type_size(type);
  for (int32_t k = 0; k < ndim; k++) size = sat_mul(size, shape[k] > 0 ? shape[k] : 0);
  return size > limit ? over_limit(size, limit, error) : QV_OK;
}

QvStatus cli_check_sparse_output(const QvSparseTensor *t, int64_t max_output, QvError *error) {
  int64_t limit = max_output > 0 ? max_output : QV_DEFAULT_MAX_OUTPUT_SIZE;
  /* values plus at most ndim indices per entry, and a CSR/CSC indptr */
  int64_t isz = (int64_t)qv_arrow_type_size(t->index_type);
  int64_t per = (int64_t)qv_arrow_type_size(t->value_type) + t->ndim * isz;
  int64_t size = sat_mul(t->nnz, per), major = 0;
  if ((t->format == QV_SPARSE_CSR || t->format == QV_SPARSE_CSC) && t->ndim == 2)
    major = t->shape[t->format == QV_SPARSE_CSR ? 0 : 1];
  int64_t extra = sat_mul(major < INT64_MAX ? major + 1 : major, isz);
  size = size > INT64_MAX - extra ? INT64_MAX : size + extra;
  return size > limit ? over_limit(size, limit, error) : QV_OK;
}

void cli_name_max_output(QvError *err) {
  const char *lib = "(max_output_size)";
  char *p = strstr(err->message, lib);
  if (p != NULL) snprintf(p, sizeof err->message - (size_t)(p - err->message), "(--max-output)");
}

/* A dense tensor's nonzeros as a canonical COO (int64 coordinates) with
 * its values cast to `vt`; a value that does not fit is named by its
 * element ("element [0, 1]: value 1.5 does not fit int64"). */
static QvStatus dense_cast_coo(const QvTensor *dense, QvArrowType vt, int64_t max_output,
                               QvSparseTensor *out, QvError *err) {
  QvSparseOptions o;
  memset(&o, 0, sizeof o);
  o.struct_size = sizeof o;
  o.index_type = QV_ARROW_INT64;
  o.max_output_size = max_output;
  o.threads = cli_threads();
  QvSparseTensor coo;
  QvStatus st = qv_sparse_from_dense(dense, QV_SPARSE_COO, &o, &coo, err);
  if (st) return st;
  QvError cast_err;
  st = qv_sparse_cast(&coo, vt, out, &cast_err);
  if (st == QV_EINVAL) {
    /* "stored value K of N: why" -> "element [i, j]: why" */
    long long k = -1;
    const char *why = strstr(cast_err.message, ": ");
    if (sscanf(cast_err.message, "stored value %lld", &k) == 1 && why && k >= 0 && k < coo.nnz) {
      char where[24 * QV_TENSOR_MAX_NDIM + 4];
      size_t w = 0;
      for (int32_t d = 0; d < coo.ndim && w < sizeof where - 24; d++) {
        int64_t c;
        memcpy(&c, coo.coords + k * coo.coords_strides[0] + d * coo.coords_strides[1], sizeof c);
        w += (size_t)snprintf(where + w, sizeof where - w, "%s%lld", d ? ", " : "", (long long)c);
      }
      qv_error_set(err, QV_EINVAL, "element [%s]: %s", where, why + 2);
    } else {
      *err = cast_err;
    }
  } else if (st) {
    *err = cast_err;
  }
  qv_sparse_reset(&coo);
  return st;
}

/* --value-type's cast failed: say which option and why. */
static int cast_failed(const char *cmd, QvArrowType to, QvError *err) {
  qv_error_prefix(err, "--value-type %s", qv_arrow_type_name(to));
  return cli_fail(cmd, err);
}

int cli_convert_and_write(const char *cmd, const QvCliTensor *in, bool to_dense,
                             QvSparseFormat format, const QvCliSparseArgs *a,
                             QvArrowType value_type, const char *out) {
  if (to_dense && cli_sparse_args_given(a))
    return cli_usage_error(
        cmd, "--index-type, --axis-order and --csf-lengths apply to sparse output only");
  if (!to_dense && format != QV_SPARSE_CSF && (a->n_axis > 0 || a->has_csf_lengths))
    return cli_usage_error(cmd, "--axis-order and --csf-lengths apply to CSF output only");
  int32_t ndim = in->is_sparse ? in->sparse.ndim : in->dense.ndim;
  QvError err;
  qv_error_clear(&err);
  if (a->n_axis > 0 && a->n_axis != ndim) {
    qv_error_set(&err, QV_EINVAL, "--axis-order lists %d axes, the tensor has %d dimensions",
                 (int)a->n_axis, (int)ndim);
    return cli_fail(cmd, &err);
  }
  QvArrowType vt_in = in->is_sparse ? in->sparse.value_type : in->dense.type;
  QvArrowType vt = value_type != QV_ARROW_NONE ? value_type : vt_in;
  bool cast = vt != vt_in;
  QvStatus st;
  /* A sparse input is cast first, in its own format: the new values are no
   * more than nnz (the input's size), and the conversion after it checks
   * its output in the new type. */
  QvSparseTensor cast_in;
  memset(&cast_in, 0, sizeof cast_in);
  const QvSparseTensor *sparse_in = in->is_sparse ? &in->sparse : NULL;
  if (to_dense) {
    const int64_t *shape = in->is_sparse ? in->sparse.shape : in->dense.shape;
    if (cli_check_dense_output(ndim, shape, vt, a->max_output, &err)) return cli_fail(cmd, &err);
  }
  if (sparse_in && cast) {
    /* a non-canonical COO's duplicates are summed first, in the input's
     * type, so that the cast sees (and checks) the sums */
    QvSparseTensor canon;
    memset(&canon, 0, sizeof canon);
    if (sparse_in->format == QV_SPARSE_COO && !sparse_in->is_canonical) {
      if (qv_sparse_canonicalize(sparse_in, NULL, &canon, &err)) return cli_fail(cmd, &err);
      sparse_in = &canon;
    }
    st = qv_sparse_cast(sparse_in, vt, &cast_in, &err);
    qv_sparse_reset(&canon);
    if (st) return cast_failed(cmd, vt, &err);
    sparse_in = &cast_in;
  }
  if (to_dense) {
    QvTensor dense;
    if (sparse_in) {
      QvSparseOptions so = {.struct_size = sizeof so, .threads = cli_threads()};
      st = qv_sparse_to_dense(sparse_in, &so, &dense, &err);
    } else if (cast) {
      st = qv_tensor_cast(&in->dense, vt, &dense, &err);
      if (st) return cast_failed(cmd, vt, &err);
    } else {
      dense = in->dense;
      st = QV_OK;
    }
    qv_sparse_reset(&cast_in);
    if (st) return cli_fail(cmd, &err);
    st = cli_write_output(out, cli_write_tensor, &dense, &err);
    if (in->is_sparse || cast) qv_tensor_reset(&dense);
    return st ? cli_fail(cmd, &err) : 0;
  }
  QvSparseOptions o;
  memset(&o, 0, sizeof o);
  o.index_type = a->index_type != QV_ARROW_NONE ? a->index_type
                 : in->is_sparse                    ? default_index_type(&in->sparse)
                                                    : QV_ARROW_INT64;
  o.axis_order = a->n_axis > 0 ? a->axis_order : NULL;
  o.max_output_size = a->max_output;
  o.threads = cli_threads(); /* the output is the same for any count */
  QvSparseTensor sp;
  if (!in->is_sparse && cast) {
    /* a dense input: its nonzeros as a canonical COO with int64 coordinates
     * (the input's size bounds it), cast there, so that a value that does
     * not fit is named by its element; then the output format */
    if ((st = dense_cast_coo(&in->dense, vt, a->max_output, &cast_in, &err))) {
      if (st == QV_ELIMIT) cli_name_max_output(&err);
      return st == QV_EINVAL && strncmp(err.message, "element [", 9) == 0 ? cast_failed(cmd, vt, &err)
                                                                        : cli_fail(cmd, &err);
    }
    sparse_in = &cast_in;
  }
  st = sparse_in ? qv_sparse_convert(sparse_in, format, &o, &sp, &err)
                 : qv_sparse_from_dense(&in->dense, format, &o, &sp, &err);
  qv_sparse_reset(&cast_in);
  if (st == QV_ELIMIT) cli_name_max_output(&err);
  if (st) return cli_fail(cmd, &err);
  QvCliSparseOut so = {&sp, {sizeof so.options, a->csf_lengths}};
  st = cli_write_output(out, cli_write_sparse, &so, &err);
  qv_sparse_reset(&sp);
  return st ? cli_fail(cmd, &err) : 0;
}
