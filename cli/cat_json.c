/* quiver cat --json: the values of an Arrow input as JSON for scripts (jq).
 *
 * Record batches (a stream or a file) print as Arrow's integration JSON
 * (quiver/integration_json.h). Tensors and sparse tensors, which have no
 * integration JSON in Arrow, print as one document:
 *
 *   {"messages": [
 *     {"message": 0, "kind": "tensor", "type": "float64", "shape": [2, 3],
 *      "strides": [24, 8], "dim_names": ["row", "col"] | null,
 *      "values": [[1, 2, 3], [4, 5, 6]]},
 *     {"message": 1, "kind": "sparse_tensor", "format": "coo" | "csr" | "csc" | "csf",
 *      "type": "float64", "index_type": "int64", "indptr_type": "int64" (not COO),
 *      "shape": [3, 4], "dim_names": null, "nnz": 2,
 *      COO: "coords": [[0, 1], [2, 3]] (nnz rows of ndim), "canonical": true,
 *      CSR/CSC: "indptr": [...], "indices": [...],
 *      CSF: "axis_order": [...], "indptr": [[...], ...] (ndim-1), "indices": [[...], ...] (ndim),
 *      "values": [1.5, 2.5]},
 *     {"message": 2, "kind": "Schema"}  (other messages: their kind only)
 *   ]}
 *
 * Dense values nest one array per dimension in logical (row-major) order
 * whatever the strides; a 0-d tensor's values is its one number. Integers
 * are JSON numbers (64-bit ones exactly as written; jq before 1.7 rounds
 * past 2^53); float16 values are widened to float; NaN and infinities, which
 * JSON cannot hold, are the strings "NaN", "Infinity", "-Infinity", as in
 * the integration JSON. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "quiver/advanced.h"
#include "args.h"
#include "cli.h"
#include "input.h"
#include "output.h"
#include "quiver/integration_json.h"
#include "quiver/sparse.h"
#include "quiver/sparse_ipc.h"
#include "quiver/tensor.h"
#include "quiver/tensor_ipc.h"

/* Output through two passes: the first counts the bytes (f == NULL) and
 * stops once they pass --max-output, so nothing is printed unless all of
 * it may be; the second prints. Loops over values stop early (`over`), and
 * a block of n values, which takes at least 3n - 2 bytes ("0, " each), is
 * refused before it is walked: a [100000, 100000] tensor of zero strides
 * costs nothing to refuse. */
typedef struct Emit {
  FILE *f; /* NULL: count only */
  int64_t total, limit;
  bool over;
} Emit;

static void emit_n(Emit *e, const char *s, size_t n) {
  if (e->over) return;
  if ((int64_t)n > e->limit - e->total) {
    e->over = true;
    return;
  }
  e->total += (int64_t)n;
  if (e->f) fwrite(s, 1, n, e->f);
}

static void emit_puts(Emit *e, const char *s) { emit_n(e, s, strlen(s)); }

static void emit_putc(Emit *e, int c) {
  char ch = (char)c;
  emit_n(e, &ch, 1);
}

__attribute__((format(printf, 2, 3))) static void emit_printf(Emit *e, const char *fmt, ...) {
  char buf[128];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  if (n > 0) emit_n(e, buf, (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1);
}

/* n values of at least 3 bytes each are next: over when they cannot fit. */
static void expect(Emit *e, int64_t n) {
  if (!e->over && n > 0 && n > (e->limit - e->total) / 3) e->over = true;
}

static void put_string(Emit *f, const char *s) {
  emit_putc(f, '"');
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    if (*p == '"' || *p == '\\') emit_printf(f, "\\%c", *p);
    else if (*p < 0x20) emit_printf(f, "\\u%04x", *p);
    else emit_putc(f, *p);
  }
  emit_putc(f, '"');
}

static void put_double(Emit *f, double v) {
  if (isnan(v)) emit_puts(f, "\"NaN\"");
  else if (isinf(v)) emit_puts(f, v > 0 ? "\"Infinity\"" : "\"-Infinity\"");
  else emit_printf(f, "%.17g", v);
}

/* One element of type t at p (any alignment). */
static void put_value(Emit *f, QvArrowType t, const uint8_t *p) {
  switch (t) {
    case QV_ARROW_INT8: emit_printf(f, "%d", (int)*(const int8_t *)p); break;
    case QV_ARROW_UINT8: emit_printf(f, "%u", (unsigned)*p); break;
    case QV_ARROW_INT16: { int16_t v; memcpy(&v, p, 2); emit_printf(f, "%d", (int)v); break; }
    case QV_ARROW_UINT16: { uint16_t v; memcpy(&v, p, 2); emit_printf(f, "%u", (unsigned)v); break; }
    case QV_ARROW_INT32: { int32_t v; memcpy(&v, p, 4); emit_printf(f, "%" PRId32, v); break; }
    case QV_ARROW_UINT32: { uint32_t v; memcpy(&v, p, 4); emit_printf(f, "%" PRIu32, v); break; }
    case QV_ARROW_INT64: { int64_t v; memcpy(&v, p, 8); emit_printf(f, "%" PRId64, v); break; }
    case QV_ARROW_UINT64: { uint64_t v; memcpy(&v, p, 8); emit_printf(f, "%" PRIu64, v); break; }
    case QV_ARROW_FLOAT16: { uint16_t h; memcpy(&h, p, 2); put_double(f, qv_half_to_float(h)); break; }
    case QV_ARROW_FLOAT32: { float v; memcpy(&v, p, 4); put_double(f, v); break; }
    case QV_ARROW_FLOAT64: { double v; memcpy(&v, p, 8); put_double(f, v); break; }
    default: emit_puts(f, "null"); break;
  }
}

/* An index buffer entry as a number (index types are integers). */
static int64_t index_at(QvArrowType t, const uint8_t *p) {
  switch (t) {
    case QV_ARROW_INT8: return *(const int8_t *)p;
    case QV_ARROW_UINT8: return *p;
    case QV_ARROW_INT16: { int16_t v; memcpy(&v, p, 2); return v; }
    case QV_ARROW_UINT16: { uint16_t v; memcpy(&v, p, 2); return v; }
    case QV_ARROW_INT32: { int32_t v; memcpy(&v, p, 4); return v; }
    case QV_ARROW_UINT32: { uint32_t v; memcpy(&v, p, 4); return v; }
    default: { int64_t v; memcpy(&v, p, 8); return v; }
  }
}

static void put_int_list(Emit *f, const int64_t *v, int64_t n) {
  emit_putc(f, '[');
  for (int64_t i = 0; i < n; i++) emit_printf(f, "%s%" PRId64, i ? ", " : "", v[i]);
  emit_putc(f, ']');
}

static void put_index_buffer(Emit *f, QvArrowType t, const uint8_t *p, int64_t n) {
  size_t w = qv_arrow_type_size(t);
  emit_putc(f, '[');
  expect(f, n);
  for (int64_t i = 0; i < n && !f->over; i++)
    emit_printf(f, "%s%" PRId64, i ? ", " : "", index_at(t, p + (size_t)i * w));
  emit_putc(f, ']');
}

static void put_dim_names(Emit *f, const char *const *names, int32_t ndim) {
  if (names == NULL) {
    emit_puts(f, "null");
    return;
  }
  emit_putc(f, '[');
  for (int32_t d = 0; d < ndim; d++) {
    if (d) emit_puts(f, ", ");
    put_string(f, names[d] ? names[d] : "");
  }
  emit_putc(f, ']');
}

static void put_dense(Emit *f, const QvTensor *t, int32_t d, const uint8_t *p) {
  if (d == t->ndim) {
    put_value(f, t->type, p);
    return;
  }
  emit_putc(f, '[');
  for (int64_t i = 0; i < t->shape[d] && !f->over; i++) {
    if (i) emit_puts(f, ", ");
    put_dense(f, t, d + 1, p + i * t->strides[d]);
  }
  emit_putc(f, ']');
}

static void put_tensor(Emit *f, int64_t i, const QvTensor *t) {
  emit_printf(f, "{\"message\": %" PRId64 ", \"kind\": \"tensor\", \"type\": \"%s\", \"shape\": ", i,
          qv_arrow_type_name(t->type));
  put_int_list(f, t->shape, t->ndim);
  emit_puts(f, ", \"strides\": ");
  put_int_list(f, t->strides, t->ndim);
  emit_puts(f, ", \"dim_names\": ");
  put_dim_names(f, t->dim_names, t->ndim);
  emit_puts(f, ", \"values\": ");
  /* an empty dimension leaves nothing to read */
  expect(f, qv_tensor_n_elements(t));
  put_dense(f, t, 0, t->data);
  emit_putc(f, '}');
}

static void put_sparse(Emit *f, int64_t i, const QvSparseTensor *t) {
  emit_printf(f, "{\"message\": %" PRId64 ", \"kind\": \"sparse_tensor\", \"format\": \"%s\", "
             "\"type\": \"%s\", \"index_type\": \"%s\", ",
          i, qv_sparse_format_name(t->format), qv_arrow_type_name(t->value_type),
          qv_arrow_type_name(t->index_type));
  if (t->format != QV_SPARSE_COO) emit_printf(f, "\"indptr_type\": \"%s\", ", qv_arrow_type_name(t->indptr_type));
  emit_puts(f, "\"shape\": ");
  put_int_list(f, t->shape, t->ndim);
  emit_puts(f, ", \"dim_names\": ");
  put_dim_names(f, t->dim_names, t->ndim);
  emit_printf(f, ", \"nnz\": %" PRId64, t->nnz);
  switch (t->format) {
    case QV_SPARSE_COO:
      emit_puts(f, ", \"coords\": [");
      expect(f, t->nnz);
      for (int64_t k = 0; k < t->nnz && !f->over; k++) {
        emit_puts(f, k ? ", [" : "[");
        for (int32_t d = 0; d < t->ndim; d++)
          emit_printf(f, "%s%" PRId64, d ? ", " : "",
                  index_at(t->index_type, t->coords + k * t->coords_strides[0] + d * t->coords_strides[1]));
        emit_putc(f, ']');
      }
      emit_printf(f, "], \"canonical\": %s", t->is_canonical ? "true" : "false");
      break;
    case QV_SPARSE_CSR:
    case QV_SPARSE_CSC:
      emit_puts(f, ", \"indptr\": ");
      put_index_buffer(f, t->indptr_type, t->indptr, t->indptr_len);
      emit_puts(f, ", \"indices\": ");
      put_index_buffer(f, t->index_type, t->indices, t->indices_len);
      break;
    default: /* CSF */
      emit_puts(f, ", \"axis_order\": [");
      for (int32_t d = 0; d < t->ndim; d++) emit_printf(f, "%s%d", d ? ", " : "", (int)t->axis_order[d]);
      emit_puts(f, "], \"indptr\": [");
      for (int32_t d = 0; d + 1 < t->ndim; d++) {
        if (d) emit_puts(f, ", ");
        put_index_buffer(f, t->indptr_type, t->csf_indptr[d], t->csf_indptr_len[d]);
      }
      emit_puts(f, "], \"indices\": [");
      for (int32_t d = 0; d < t->ndim; d++) {
        if (d) emit_puts(f, ", ");
        put_index_buffer(f, t->index_type, t->csf_indices[d], t->csf_indices_len[d]);
      }
      emit_putc(f, ']');
      break;
  }
  emit_puts(f, ", \"values\": [");
  size_t w = qv_arrow_type_size(t->value_type);
  expect(f, t->nnz);
  for (int64_t k = 0; k < t->nnz && !f->over; k++) {
    if (k) emit_puts(f, ", ");
    put_value(f, t->value_type, t->values + (size_t)k * w);
  }
  emit_puts(f, "]}");
}

static QvStatus print_tensors(const QvCliInput *in, Emit *f, QvError *err) {
  QvIpcReader *r;
  QvStatus st = cli_reader_memory(&r, in->data, in->size, err);
  if (st) return st;
  /* each message is checked before anything of it is printed; the
   * document is whole only when every message was */
  emit_puts(f, "{\"messages\": [");
  for (int64_t i = 0;; i++) {
    QvIpcMessage msg;
    st = qv_ipc_reader_next(r, &msg, err);
    if (st == QV_EOS) {
      st = QV_OK;
      break;
    }
    if (st) break;
    uint8_t kind = msg.message.header_type;
    emit_puts(f, i ? ",\n  " : "\n  ");
    if (kind == QV_HEADER_TENSOR) {
      QvTensor t;
      memset(&t, 0, sizeof t);
      st = qv_tensor_from_message(&msg, &t, err);
      if (!st) put_tensor(f, i, &t);
      qv_tensor_reset(&t);
    } else if (kind == QV_HEADER_SPARSE_TENSOR) {
      QvSparseTensor t;
      memset(&t, 0, sizeof t);
      st = qv_sparse_from_message(&msg, &t, NULL, err);
      if (!st && !(st = qv_sparse_validate(&t, err))) put_sparse(f, i, &t);
      qv_sparse_reset(&t);
    } else {
      emit_printf(f, "{\"message\": %" PRId64 ", \"kind\": \"%s\"}", i, qv_header_type_name(kind));
    }
    if (st) qv_error_prefix(err, "message %" PRId64 " at offset %" PRId64, i, msg.offset);
    qv_ipc_message_reset(&msg);
    if (st) break;
  }
  qv_ipc_reader_free(r);
  if (!st) emit_puts(f, "\n]}\n");
  return st;
}

/* Tensors: a counting pass over every message, then the printing one. */
static QvStatus print_all_tensors(const QvCliInput *in, int64_t limit, QvError *err) {
  Emit count = {NULL, 0, limit, false};
  QvStatus st = print_tensors(in, &count, err);
  if (st) return st;
  if (count.over)
    return qv_error_set(err, QV_ELIMIT,
                        "JSON output of more than %" PRId64 " bytes exceeds the limit of %" PRId64
                        " (--max-output)", limit, limit);
  Emit out = {stdout, 0, limit, false};
  return print_tensors(in, &out, err);
}

/* Record batches: the integration JSON of the whole input, streamed to
 * stdout (the library counts it against the limit first). */
static QvStatus print_batches(const QvCliInput *in, int64_t limit, QvError *err) {
  struct ArrowArrayStream s;
  QvStatus st = cli_rb_reader_memory(in->data, in->size, &s, NULL, err);
  if (st) return st;
  struct ArrowSchema schema;
  struct ArrowArray *b = NULL;
  const struct ArrowArray **bp = NULL;
  int64_t n = 0, cap = 0;
  st = qv_rb_stream_get_schema(&s, &schema, err);
  while (!st) {
    if (n == cap) {
      cap = cap ? cap * 2 : 8;
      struct ArrowArray *nb = realloc(b, (size_t)cap * sizeof *nb);
      if (nb == NULL) {
        st = qv_error_set(err, QV_ENOMEM, "out of memory");
        break;
      }
      b = nb;
    }
    st = qv_rb_stream_get_next(&s, &b[n], err);
    if (!st) n++;
  }
  if (st == QV_EOS) st = QV_OK;
  if (!st && n > 0 && (bp = malloc((size_t)n * sizeof *bp)) == NULL)
    st = qv_error_set(err, QV_ENOMEM, "out of memory");
  QvSink *sink = NULL;
  if (!st) st = qv_sink_new_fd(&sink, STDOUT_FILENO, err);
  if (!st) {
    for (int64_t i = 0; i < n; i++) bp[i] = &b[i];
    QvJsonData d;
    memset(&d, 0, sizeof d);
    d.schema = &schema;
    d.batches = bp;
    d.n_batches = n;
    qv_rb_stream_dictionary_ids(&s, &d.dictionary_ids, &d.n_dictionary_ids);
    QvJsonWriteOptions o = {.struct_size = sizeof o, .max_output_size = limit};
    st = qv_json_write(&d, sink, &o, err);
    if (!st) st = qv_sink_finish(sink, err);
    if (st == QV_ELIMIT) cli_name_max_output(err);
  }
  qv_sink_free(sink);
  for (int64_t i = 0; i < n; i++) b[i].release(&b[i]);
  free(b);
  free(bp);
  if (schema.release) schema.release(&schema);
  s.release(&s);
  return st;
}

int qv_cmd_cat_json(int argc, char **argv) {
  const char *path = NULL, *p;
  int64_t max_output = 0;
  QvCliArgs a;
  cli_args_init(&a, "cat", argc, argv);
  while (cli_args_next(&a)) {
    if (cli_args_flag(&a, "--json")) continue;
    if (cli_args_threads(&a)) continue;
    if (cli_args_quirks(&a)) continue;
    if (cli_args_size(&a, "--max-output", &max_output)) continue;
    if ((p = cli_args_positional(&a)) != NULL && path == NULL) path = p;
    else if (p != NULL) cli_args_error(&a, "takes one FILE");
    else cli_args_unknown(&a);
  }
  if (a.status) return a.status;
  if (path == NULL) return cli_usage_error("cat", "needs a FILE ('-' for stdin)");
  int64_t limit = max_output > 0 ? max_output : QV_DEFAULT_MAX_OUTPUT_SIZE;
  QvError err;
  qv_error_clear(&err);
  QvCliInput in;
  if (cli_input_open(path, &in, &err)) return cli_fail("cat", &err); /* names FILE */
  fflush(stdout); /* batches go to the descriptor itself */
  QvStatus st = cli_holds_tensors(in.data, in.size) ? print_all_tensors(&in, limit, &err)
                                                        : print_batches(&in, limit, &err);
  cli_input_free(&in);
  fflush(stdout);
  if (st) {
    fprintf(stderr, "quiver cat: %s: %s\n", strcmp(path, "-") ? path : "stdin", err.message);
    return cli_exit_code(st);
  }
  return QV_EXIT_OK;
}
