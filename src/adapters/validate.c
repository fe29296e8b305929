/* qv_ipc_validate: the verdict of `quiver validate` (quiver/validate.h). */
#include "quiver/validate.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "quiver/array.h"
#include "quiver/format.h"
#include "quiver/ipc.h"
#include "quiver/sparse_column.h"
#include "quiver/sparse_ipc.h"
#include "quiver/tensor_column.h"
#include "quiver/tensor_ipc.h"
#include "util/options.h"

/* The registered extension types quiver knows of `f` and every field inside
 * it: metadata that parses and agrees with the storage (a shape whose
 * product is the FixedSizeList size, a permutation that is one, ...), as
 * Arrow C++ refuses such a field when it reads it. */
static QvStatus check_extension_types(const struct ArrowSchema *f, const char *where,
                                      QvError *error) {
  char here[256];
  snprintf(here, sizeof here, "%s%s'%s'", where, where[0] ? " > " : "", f->name ? f->name : "");
  QvTensorColumnType t;
  QvStatus st = qv_tensor_column_type_from_field(f, NULL, &t, error);
  qv_tensor_column_type_reset(&t);
  if (st == QV_OK) {
    QvSparseColumnType sp;
    st = qv_sparse_column_type_from_field(f, &sp, error);
    qv_sparse_column_type_reset(&sp);
  }
  if (st) return qv_error_prefix(error, "field %s", here);
  for (int64_t i = 0; i < f->n_children; i++)
    if ((st = check_extension_types(f->children[i], here, error))) return st;
  return QV_OK;
}

/* Column `i` of a batch against its extension type, when it is a tensor or
 * sparse column: every cell (variable shape data lengths, sparse indices in
 * range and ordered, ...). The column is shared, the batch keeps its own. */
static QvStatus check_extension_column(const struct ArrowSchema *f, const struct ArrowArray *c,
                                       QvError *error) {
  QvTensorColumnType t;
  QvSparseColumnType sp;
  bool tensor = qv_tensor_column_type_from_field(f, NULL, &t, NULL) == QV_OK &&
                t.kind != QV_TENSOR_COLUMN_NONE;
  qv_tensor_column_type_reset(&t);
  bool sparse = qv_sparse_column_type_from_field(f, &sp, NULL) == QV_OK &&
                sp.kind != QV_SPARSE_COLUMN_NONE;
  qv_sparse_column_type_reset(&sp);
  if (!tensor && !sparse) return QV_OK;
  struct ArrowArray cells;
  QvStatus st = qv_array_share(c, &cells, error);
  if (st) return st;
  if (tensor) {
    QvTensorColumn col;
    st = qv_tensor_column_init(&col, f, &cells, NULL, error);
    if (st == QV_OK) qv_tensor_column_reset(&col);
  } else {
    QvSparseColumn col;
    st = qv_sparse_column_init(&col, f, &cells, NULL, error);
    if (st == QV_OK) qv_sparse_column_reset(&col);
  }
  if (cells.release) cells.release(&cells);
  return st ? qv_error_prefix(error, "column '%s'", f->name ? f->name : "") : QV_OK;
}

/* Reads every batch in full validation; counts rows. A file is read through
 * its footer (qv_rb_stream_reader_new sniffs the format). */
static QvStatus validate_batches(QvSource *src, const QvRbReadOptions *o, int64_t *batches,
                                 int64_t *rows, QvError *error) {
  struct ArrowArrayStream s;
  memset(&s, 0, sizeof s);
  QvStatus st = qv_rb_stream_reader_new(&s, src, o, error);
  if (st) return st;
  struct ArrowSchema schema;
  memset(&schema, 0, sizeof schema);
  if ((st = qv_rb_stream_get_schema(&s, &schema, error)) == QV_OK) {
    for (int64_t i = 0; i < schema.n_children && st == QV_OK; i++)
      st = check_extension_types(schema.children[i], "", error);
  }
  for (int64_t b = 0; st == QV_OK;) {
    struct ArrowArray a;
    if ((st = qv_rb_stream_get_next(&s, &a, error))) break;
    (*batches)++;
    /* batches of 2^62 rows that take no memory are valid: the total saturates */
    *rows = a.length > INT64_MAX - *rows ? INT64_MAX : *rows + a.length;
    for (int64_t i = 0; i < schema.n_children && i < a.n_children && st == QV_OK; i++)
      st = check_extension_column(schema.children[i], a.children[i], error);
    if (st) qv_error_prefix(error, "record batch %lld", (long long)b);
    a.release(&a);
    b++;
  }
  if (schema.release) schema.release(&schema);
  s.release(&s);
  return st == QV_EOS ? QV_OK : st;
}

/* Tensor and SparseTensor messages: every message read and validated in
 * full (dense: type, shape, strides and every element the strides reach
 * inside the body; sparse: qv_sparse_validate). */
static QvStatus validate_tensors(QvSource *src, int64_t *dense, int64_t *sparse, QvError *error) {
  QvIpcReader *r;
  QvStatus st = qv_ipc_reader_new(&r, src, NULL, error);
  if (st) return st;
  for (int64_t i = 0;; i++) {
    QvIpcMessage msg;
    st = qv_ipc_reader_next(r, &msg, error);
    if (st == QV_EOS) {
      st = QV_OK;
      break;
    }
    if (st) break;
    uint8_t kind = msg.message.header_type;
    if (kind == QV_HEADER_TENSOR) {
      QvTensor t;
      st = qv_tensor_from_message(&msg, &t, error);
      if (st == QV_OK) qv_tensor_reset(&t);
      (*dense)++;
    } else if (kind == QV_HEADER_SPARSE_TENSOR) {
      QvSparseTensor t;
      st = qv_sparse_from_message(&msg, &t, NULL, error);
      if (st == QV_OK) st = qv_sparse_validate(&t, error);
      qv_sparse_reset(&t);
      (*sparse)++;
    } else {
      st = qv_error_set(error, QV_ENOTSUP,
                        "a %s message among tensors: validate checks streams of record batches, "
                        "or of Tensor and SparseTensor messages",
                        qv_header_type_name(kind));
    }
    if (st) qv_error_prefix(error, "message %lld at offset %lld", (long long)i, (long long)msg.offset);
    qv_ipc_message_reset(&msg);
    if (st) break;
  }
  qv_ipc_reader_free(r);
  return st;
}

/* Whether the first message is a Tensor or SparseTensor. */
static bool holds_tensors(QvSource *src) {
  QvIpcReader *r;
  if (qv_ipc_reader_new(&r, src, NULL, NULL) != QV_OK) return false;
  QvIpcMessage msg;
  bool tensor = false;
  if (qv_ipc_reader_next(r, &msg, NULL) == QV_OK) {
    uint8_t kind = msg.message.header_type;
    tensor = kind == QV_HEADER_TENSOR || kind == QV_HEADER_SPARSE_TENSOR;
    qv_ipc_message_reset(&msg);
  }
  qv_ipc_reader_free(r);
  return tensor;
}

QvStatus qv_ipc_validate(QvSource *source, const QvRbReadOptions *options,
                         QvIpcValidateReport *report, QvError *error) {
  QvRbReadOptions o;
  QvStatus st = QV_OPTIONS_LOAD(&o, options, QvRbReadOptions, error);
  if (st) return st;
  o.validate = QV_VALIDATE_FULL;
  /* the whole input once (a view of memory or a mapped file, a pipe read
   * to its end), so it can be read twice: the sniff, then the validation */
  const uint8_t *data;
  size_t size;
  QvOwner *owner = NULL;
  st = qv_source_read_all(source, 0, &data, &size, &owner, error);
  if (st) return st;
  QvSource *mem = NULL;
  st = qv_source_new_memory(&mem, size ? data : (const void *)"", size, owner, error);
  qv_owner_free(owner);
  if (st) return st;
  QvIpcValidateReport r;
  memset(&r, 0, sizeof r);
  r.is_file = size >= 6 && memcmp(data, "ARROW1", 6) == 0;
  r.tensors = holds_tensors(mem);
  st = r.tensors ? validate_tensors(mem, &r.batches, &r.rows, error)
                 : validate_batches(mem, &o, &r.batches, &r.rows, error);
  qv_source_free(mem);
  if (st == QV_OK && report) *report = r;
  return st;
}

size_t qv_ipc_validate_summary(const QvIpcValidateReport *r, char *buf, size_t cap) {
  int n;
  if (r->tensors)
    n = snprintf(buf, cap, "valid Arrow %s (%" PRId64 " Tensor, %" PRId64 " SparseTensor messages)",
                 r->is_file ? "file" : "stream", r->batches, r->rows);
  else
    n = snprintf(buf, cap, "valid Arrow %s (%" PRId64 " record batches, %s%" PRId64 " rows)",
                 r->is_file ? "file" : "stream", r->batches, r->rows == INT64_MAX ? "at least " : "",
                 r->rows);
  return n < 0 ? 0 : (size_t)n;
}
