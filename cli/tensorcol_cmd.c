/* quiver tensor stack / unstack / from-npy --as-column: tensor columns
 * (arrow.fixed_shape_tensor and friends, quiver/tensor_column.h) <-> Tensor
 * messages. Subcommands of `quiver tensor` (tensor_cmd.c hands them argv). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "quiver/npy.h"
#include "quiver/sparse_column.h"
#include "quiver/sparse_ipc.h"
#include "quiver/tensor_column.h"
#include "quiver/tensor_ipc.h"

/* The batches of `in`, each column `name` (or the only tensor column) as a
 * stacked tensor, one Tensor message per batch. */
static QvStatus open_batches(const char *in, struct ArrowArrayStream *stream, QvError *err) {
  QvSource *src;
  QvStatus st = cli_source_new(in, &src, err);
  if (st) return st;
  st = qv_rb_stream_reader_new(stream, src, cli_rb_read_options(), err);
  qv_source_free(src);
  if (st && strcmp(in, "-") != 0 && strncmp(err->message, in, strlen(in)) != 0)
    qv_error_prefix(err, "%s", in);
  return st;
}

/* The index of column `column` (NULL: the only tensor column) in *schema,
 * which is read from the stream. */
static QvStatus find_column(struct ArrowArrayStream *stream, const char *column,
                            const char *extension, struct ArrowSchema *schema, int64_t *out,
                            QvError *err) {
  QvStatus st = qv_rb_stream_get_schema(stream, schema, err);
  if (st) return st;
  int64_t idx = -1;
  /* a tensor column whose metadata or storage is wrong is the problem to
   * report, not "no tensor column" */
  QvError bad;
  QvStatus bad_st = QV_OK;
  for (int64_t i = 0; i < schema->n_children; i++) {
    const struct ArrowSchema *f = schema->children[i];
    if (column != NULL) {
      if (f->name != NULL && strcmp(f->name, column) == 0) idx = i;
      continue;
    }
    QvTensorColumnType t;
    QvError e;
    QvStatus ts = qv_tensor_column_type_from_field(f, extension, &t, &e);
    bool is_tensor = ts == QV_OK && t.kind != QV_TENSOR_COLUMN_NONE;
    qv_tensor_column_type_reset(&t);
    QvSparseColumnType sp;
    memset(&sp, 0, sizeof sp);
    QvError se;
    QvStatus ss = qv_sparse_column_type_from_field(f, &sp, &se);
    is_tensor |= ss == QV_OK && sp.kind != QV_SPARSE_COLUMN_NONE;
    qv_sparse_column_type_reset(&sp);
    if (ts == QV_OK && ss != QV_OK) {
      ts = ss;
      e = se;
    }
    if (ts != QV_OK && bad_st == QV_OK) {
      bad_st = ts;
      bad = e;
      qv_error_prefix(&bad, "column %lld '%s'", (long long)i, f->name ? f->name : "");
    }
    if (is_tensor && idx >= 0)
      return qv_error_set(err, QV_EINVAL, "several tensor columns: name one with --column");
    if (is_tensor) idx = i;
  }
  if (idx < 0 && bad_st != QV_OK) {
    *err = bad;
    return bad_st;
  }
  if (idx < 0)
    return column ? qv_error_set(err, QV_EINVAL, "no column named '%s'", column)
                  : qv_error_set(err, QV_EINVAL, "no tensor or sparse column (a cell tensor column "
                                                 "needs "
                                                 "--extension NAME)");
  *out = idx;
  return QV_OK;
}

/* A quiver.sparse_vector column as one CSR SparseTensor message (a view:
 * the list offsets are the indptr, the struct's children indices and
 * values). */
static QvStatus stack_sparse(const struct ArrowSchema *field, struct ArrowArray *cells,
                             QvSink *sink, int64_t max_output, bool *input_error, QvError *err) {
  QvSparseColumn col;
  QvStatus st = qv_sparse_column_init(&col, field, cells, NULL, err);
  if (st) return st;
  QvSparseTensor csr;
  QvSparseStackOptions so = {.struct_size = sizeof so, .max_output_size = max_output};
  st = qv_sparse_vector_stack(&col, &so, &csr, err);
  qv_sparse_column_reset(&col);
  if (st == QV_OK && (st = qv_sparse_write(&csr, sink, NULL, err))) *input_error = false;
  qv_sparse_reset(&csr);
  return st;
}

/* Column idx of every batch as a stacked tensor, one Tensor message per
 * batch (a sparse-vector column: one CSR SparseTensor message). */
static QvStatus stack_all(struct ArrowArrayStream *s, const struct ArrowSchema *schema,
                          int64_t idx, QvSink *sink, const char *extension, bool fill,
                          int64_t max_output, bool *input_error, QvError *err) {
  *input_error = true; /* every step but the writes reads the input */
  QvStatus st = QV_OK;
  int64_t batches = 0;
  QvSparseColumnType sp;
  memset(&sp, 0, sizeof sp);
  if ((st = qv_sparse_column_type_from_field(schema->children[idx], &sp, err)) != QV_OK)
    return st;
  QvSparseColumnKind sparse = sp.kind;
  qv_sparse_column_type_reset(&sp);
  if (sparse == QV_SPARSE_COLUMN_TENSOR)
    return qv_error_set(err, QV_EINVAL, "column '%s' is a quiver.sparse_tensor column (one "
                        "tensor per row): stack takes a quiver.sparse_vector column; "
                        "quiver migrate --to-messages writes the rows as messages",
                        schema->children[idx]->name ? schema->children[idx]->name : "");
  for (;;) {
    struct ArrowArray batch;
    st = qv_rb_stream_get_next(s, &batch, err);
    if (st == QV_EOS) {
      st = QV_OK;
      break;
    }
    if (st) break;
    struct ArrowArray cells;
    st = qv_array_share(batch.children[idx], &cells, err);
    batch.release(&batch);
    if (st) break;
    if (sparse == QV_SPARSE_COLUMN_VECTOR) {
      st = stack_sparse(schema->children[idx], &cells, sink, max_output, input_error, err);
      if (cells.release) cells.release(&cells);
      if (st) {
        qv_error_prefix(err, "batch %lld", (long long)batches);
        break;
      }
      batches++;
      continue;
    }
    QvTensorColumn col;
    QvTensorColumnOptions co = {.struct_size = sizeof co, .cell_extension = extension};
    st = qv_tensor_column_init(&col, schema->children[idx], &cells, &co, err);
    if (cells.release) cells.release(&cells);
    if (st) break;
    QvTensor t;
    QvTensorStackOptions so = {.struct_size = sizeof so, .null_fill = fill,
                               .leading_name = schema->children[idx]->name,
                               .max_output_size = max_output, .threads = cli_threads()};
    st = qv_tensor_column_stack(&col, &so, &t, err);
    qv_tensor_column_reset(&col);
    char *opt = st ? strstr(err->message, "(null_fill makes them zeros)") : NULL;
    if (opt) snprintf(opt, sizeof err->message - (size_t)(opt - err->message),
                      "(--fill-nulls makes them zeros)");
    if (st == QV_OK) {
      st = qv_tensor_write(&t, sink, NULL, err);
      if (st) *input_error = false;
    }
    qv_tensor_reset(&t);
    if (st) {
      qv_error_prefix(err, "batch %lld", (long long)batches);
      break;
    }
    batches++;
  }
  return st;
}

int qv_cmd_tensor_stack(int argc, char **argv) {
  const char *cmd = "tensor stack", *pos[2], *column = NULL, *extension = NULL, *v;
  int npos = 0;
  bool fill = false;
  int64_t max_output = 0;
  QvCliArgs a;
  cli_args_init(&a, cmd, argc, argv);
  while (cli_args_next(&a)) {
    if (cli_args_in_out_arg(&a, pos, &npos)) continue;
    else if ((v = cli_args_value(&a, "--column")) != NULL) column = v;
    else if ((v = cli_args_value(&a, "--extension")) != NULL) extension = v;
    else if (cli_args_flag(&a, "--fill-nulls")) fill = true;
    else if (cli_args_output(&a, &max_output)) continue;
    else if (cli_args_threads(&a)) continue;
    else cli_args_unknown(&a);
  }
  int rc = cli_args_in_out(&a, npos, pos[1]);
  if (rc) return rc;
  QvError err = {0};
  struct ArrowArrayStream stream;
  QvStatus st = open_batches(pos[0], &stream, &err);
  if (st) return cli_fail(cmd, &err);
  struct ArrowSchema schema;
  memset(&schema, 0, sizeof schema);
  int64_t idx = -1;
  QvSink *sink;
  st = find_column(&stream, column, extension, &schema, &idx, &err);
  if (st) cli_error_name_input(pos[0], &err);
  if (st == QV_OK) st = cli_output_open(pos[1], &sink, &err);
  if (st == QV_OK) {
    bool input_error;
    st = stack_all(&stream, &schema, idx, sink, extension, fill, max_output, &input_error, &err);
    if (st && input_error) {
      /* about the input: named by its path; the unfinished output goes */
      qv_sink_free(sink);
      cli_error_name_input(pos[0], &err);
    } else {
      st = cli_output_close(pos[1], sink, st, &err);
    }
  }
  if (schema.release) schema.release(&schema);
  stream.release(&stream);
  return st ? cli_fail(cmd, &err) : 0;
}

/* Writes `field` and `column` (taken over) to `out` as a table of one
 * column and one batch, an Arrow file when `file`. */
static QvStatus write_table(struct ArrowSchema *field, struct ArrowArray *column, bool file,
                            const char *out, QvError *err) {
  struct ArrowSchema bs;
  struct ArrowArray batch;
  QvStatus st = qv_tensor_column_to_batch(field, column, &bs, &batch, err);
  if (st != QV_OK) {
    field->release(field);
    column->release(column);
    return st;
  }
  QvSink *sink;
  if ((st = cli_output_open(out, &sink, err)) == QV_OK) {
    QvRbWriter *w = NULL;
    QvRbWriteOptions wo = {.struct_size = sizeof wo,
                           .format = file ? QV_IPC_FORMAT_FILE : QV_IPC_FORMAT_STREAM};
    QvStatus ws = qv_rb_writer_new(&w, &bs, sink, &wo, err);
    if (ws == QV_OK) ws = qv_rb_writer_write(w, &batch, err);
    if (ws == QV_OK) ws = qv_rb_writer_finish(w, err);
    qv_rb_writer_free(w);
    st = cli_output_close(out, sink, ws, err);
  }
  batch.release(&batch);
  bs.release(&bs);
  return st;
}

/* Writes `t` as a one-column table. */
static QvStatus write_column(const QvTensor *t, const char *name, bool file, const char *out,
                             QvError *err) {
  struct ArrowSchema field;
  struct ArrowArray column;
  QvTensorUnstackOptions uo = {.struct_size = sizeof uo, .name = name,
                               .threads = cli_threads()};
  QvStatus st = qv_tensor_column_unstack(t, &uo, &field, &column, err);
  if (st) return st;
  return write_table(&field, &column, file, out, err);
}

/* A CSR SparseTensor message as a one-column quiver.sparse_vector table: read
 * through a source (a path is mapped, and the reader's validation seals the
 * tensor, so the column is made in constant time), the column a view of its
 * buffers. Another format: a one-row quiver.sparse_tensor column. */
static QvStatus write_sparse_column(const char *in, int64_t index, const char *name, bool file,
                                    int64_t max_output, const char *out, QvError *err) {
  QvSource *src;
  QvStatus st = cli_source_new(in, &src, err);
  if (st) return st;
  QvSparseTensor t;
  st = qv_sparse_read(src, index, NULL, &t, err);
  qv_source_free(src);
  if (st) return st;
  struct ArrowSchema field;
  struct ArrowArray column;
  if (t.format == QV_SPARSE_CSR) {
    QvSparseUnstackOptions uo = {.struct_size = sizeof uo, .name = name ? name : "sparse",
                                 .max_output_size = max_output};
    st = qv_sparse_vector_unstack(&t, &uo, &field, &column, err);
  } else {
    /* no rows to split: the tensor is the one cell of a quiver.sparse_tensor
     * column (docs/sparse-tensor-extension.md) */
    const QvSparseTensor *cells[1] = {&t};
    QvSparseBuildOptions bo = {.struct_size = sizeof bo, .name = name ? name : "sparse",
                               .kind = QV_SPARSE_COLUMN_TENSOR, .max_output_size = max_output};
    st = qv_sparse_column_build(cells, 1, &bo, &field, &column, err);
  }
  qv_sparse_reset(&t);
  if (st) return st;
  return write_table(&field, &column, file, out, err);
}

/* unstack (a Tensor message) and from-npy --as-column (a .npy). */
static int to_column(const char *cmd, bool npy, int argc, char **argv) {
  const char *pos[2], *name = NULL, *v;
  int npos = 0;
  int64_t index = 0, max_output = 0;
  bool file = false;
  QvCliArgs a;
  cli_args_init(&a, cmd, argc, argv);
  while (cli_args_next(&a)) {
    if (cli_args_in_out_arg(&a, pos, &npos)) continue;
    else if ((v = cli_args_value(&a, "--name")) != NULL) name = v;
    else if (cli_args_flag(&a, "--file")) file = true;
    else if (npy && cli_args_flag(&a, "--as-column")) continue;
    else if (!npy && cli_args_index(&a, "--index", &index)) continue;
    else if (cli_args_output(&a, &max_output)) continue;
    else if (cli_args_threads(&a)) continue;
    else cli_args_unknown(&a);
  }
  int rc = cli_args_in_out(&a, npos, pos[1]);
  if (rc) return rc;
  QvError err = {0};
  QvCliTensor in;
  memset(&in, 0, sizeof in);
  QvStatus st;
  if (npy) {
    QvSource *src;
    st = cli_source_new(pos[0], &src, &err);
    if (st == QV_OK) {
      st = qv_npy_read(src, NULL, &in.dense, &err);
      qv_source_free(src);
    }
  } else {
    st = cli_read_tensor(pos[0], index, &in, &err);
    if (st == QV_OK && in.is_sparse) {
      cli_tensor_free(&in);
      st = write_sparse_column(pos[0], index, name, file, max_output, pos[1], &err);
      if (st == QV_ELIMIT) cli_name_max_output(&err);
      return st ? cli_fail(cmd, &err) : 0;
    }
  }
  /* the column holds every element whatever the input's strides (a
   * zero-stride tensor of 264 bytes can stand for terabytes) */
  if (st == QV_OK)
    st = cli_check_dense_output(in.dense.ndim, in.dense.shape, in.dense.type, max_output, &err);
  if (st == QV_OK) st = write_column(&in.dense, name, file, pos[1], &err);
  cli_tensor_free(&in);
  return st ? cli_fail(cmd, &err) : 0;
}

int qv_cmd_tensor_unstack(int argc, char **argv) {
  return to_column("tensor unstack", false, argc, argv);
}

int qv_cmd_tensor_npy_column(int argc, char **argv) {
  return to_column("tensor from-npy", true, argc, argv);
}
