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
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "cli.h"
#include "input.h"
#include "output.h"
#include "quiver/integration_json.h"
#include "quiver/sparse.h"
#include "quiver/sparse_ipc.h"
#include "quiver/tensor.h"
#include "quiver/tensor_ipc.h"

static void put_string(FILE *f, const char *s) {
  fputc('"', f);
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    if (*p == '"' || *p == '\\') fprintf(f, "\\%c", *p);
    else if (*p < 0x20) fprintf(f, "\\u%04x", *p);
    else fputc(*p, f);
  }
  fputc('"', f);
}

static void put_double(FILE *f, double v) {
  if (isnan(v)) fputs("\"NaN\"", f);
  else if (isinf(v)) fputs(v > 0 ? "\"Infinity\"" : "\"-Infinity\"", f);
  else fprintf(f, "%.17g", v);
}

/* One element of type t at p (any alignment). */
static void put_value(FILE *f, QvValueType t, const uint8_t *p) {
  switch (t) {
    case QV_VALUE_INT8: fprintf(f, "%d", (int)*(const int8_t *)p); break;
    case QV_VALUE_UINT8: fprintf(f, "%u", (unsigned)*p); break;
    case QV_VALUE_INT16: { int16_t v; memcpy(&v, p, 2); fprintf(f, "%d", (int)v); break; }
    case QV_VALUE_UINT16: { uint16_t v; memcpy(&v, p, 2); fprintf(f, "%u", (unsigned)v); break; }
    case QV_VALUE_INT32: { int32_t v; memcpy(&v, p, 4); fprintf(f, "%" PRId32, v); break; }
    case QV_VALUE_UINT32: { uint32_t v; memcpy(&v, p, 4); fprintf(f, "%" PRIu32, v); break; }
    case QV_VALUE_INT64: { int64_t v; memcpy(&v, p, 8); fprintf(f, "%" PRId64, v); break; }
    case QV_VALUE_UINT64: { uint64_t v; memcpy(&v, p, 8); fprintf(f, "%" PRIu64, v); break; }
    case QV_VALUE_FLOAT16: { uint16_t h; memcpy(&h, p, 2); put_double(f, qv_half_to_float(h)); break; }
    case QV_VALUE_FLOAT32: { float v; memcpy(&v, p, 4); put_double(f, v); break; }
    case QV_VALUE_FLOAT64: { double v; memcpy(&v, p, 8); put_double(f, v); break; }
    default: fputs("null", f); break;
  }
}

/* An index buffer entry as a number (index types are integers). */
static int64_t index_at(QvValueType t, const uint8_t *p) {
  switch (t) {
    case QV_VALUE_INT8: return *(const int8_t *)p;
    case QV_VALUE_UINT8: return *p;
    case QV_VALUE_INT16: { int16_t v; memcpy(&v, p, 2); return v; }
    case QV_VALUE_UINT16: { uint16_t v; memcpy(&v, p, 2); return v; }
    case QV_VALUE_INT32: { int32_t v; memcpy(&v, p, 4); return v; }
    case QV_VALUE_UINT32: { uint32_t v; memcpy(&v, p, 4); return v; }
    default: { int64_t v; memcpy(&v, p, 8); return v; }
  }
}

static void put_int_list(FILE *f, const int64_t *v, int64_t n) {
  fputc('[', f);
  for (int64_t i = 0; i < n; i++) fprintf(f, "%s%" PRId64, i ? ", " : "", v[i]);
  fputc(']', f);
}

static void put_index_buffer(FILE *f, QvValueType t, const uint8_t *p, int64_t n) {
  size_t w = qv_value_type_size(t);
  fputc('[', f);
  for (int64_t i = 0; i < n; i++) fprintf(f, "%s%" PRId64, i ? ", " : "", index_at(t, p + (size_t)i * w));
  fputc(']', f);
}

static void put_dim_names(FILE *f, const char *const *names, int32_t ndim) {
  if (names == NULL) {
    fputs("null", f);
    return;
  }
  fputc('[', f);
  for (int32_t d = 0; d < ndim; d++) {
    if (d) fputs(", ", f);
    put_string(f, names[d] ? names[d] : "");
  }
  fputc(']', f);
}

static void put_dense(FILE *f, const QvTensor *t, int32_t d, const uint8_t *p) {
  if (d == t->ndim) {
    put_value(f, t->type, p);
    return;
  }
  fputc('[', f);
  for (int64_t i = 0; i < t->shape[d]; i++) {
    if (i) fputs(", ", f);
    put_dense(f, t, d + 1, p + i * t->strides[d]);
  }
  fputc(']', f);
}

static void put_tensor(FILE *f, int64_t i, const QvTensor *t) {
  fprintf(f, "{\"message\": %" PRId64 ", \"kind\": \"tensor\", \"type\": \"%s\", \"shape\": ", i,
          qv_value_type_name(t->type));
  put_int_list(f, t->shape, t->ndim);
  fputs(", \"strides\": ", f);
  put_int_list(f, t->strides, t->ndim);
  fputs(", \"dim_names\": ", f);
  put_dim_names(f, t->dim_names, t->ndim);
  fputs(", \"values\": ", f);
  /* an empty dimension leaves nothing to read */
  put_dense(f, t, 0, t->data);
  fputc('}', f);
}

static void put_sparse(FILE *f, int64_t i, const QvSparseTensor *t) {
  fprintf(f, "{\"message\": %" PRId64 ", \"kind\": \"sparse_tensor\", \"format\": \"%s\", "
             "\"type\": \"%s\", \"index_type\": \"%s\", ",
          i, qv_sparse_format_name(t->format), qv_value_type_name(t->value_type),
          qv_value_type_name(t->index_type));
  if (t->format != QV_SPARSE_COO) fprintf(f, "\"indptr_type\": \"%s\", ", qv_value_type_name(t->indptr_type));
  fputs("\"shape\": ", f);
  put_int_list(f, t->shape, t->ndim);
  fputs(", \"dim_names\": ", f);
  put_dim_names(f, t->dim_names, t->ndim);
  fprintf(f, ", \"nnz\": %" PRId64, t->nnz);
  switch (t->format) {
    case QV_SPARSE_COO:
      fputs(", \"coords\": [", f);
      for (int64_t k = 0; k < t->nnz; k++) {
        fputs(k ? ", [" : "[", f);
        for (int32_t d = 0; d < t->ndim; d++)
          fprintf(f, "%s%" PRId64, d ? ", " : "",
                  index_at(t->index_type, t->coords + k * t->coords_strides[0] + d * t->coords_strides[1]));
        fputc(']', f);
      }
      fprintf(f, "], \"canonical\": %s", t->is_canonical ? "true" : "false");
      break;
    case QV_SPARSE_CSR:
    case QV_SPARSE_CSC:
      fputs(", \"indptr\": ", f);
      put_index_buffer(f, t->indptr_type, t->indptr, t->indptr_len);
      fputs(", \"indices\": ", f);
      put_index_buffer(f, t->index_type, t->indices, t->indices_len);
      break;
    default: /* CSF */
      fputs(", \"axis_order\": [", f);
      for (int32_t d = 0; d < t->ndim; d++) fprintf(f, "%s%d", d ? ", " : "", (int)t->axis_order[d]);
      fputs("], \"indptr\": [", f);
      for (int32_t d = 0; d + 1 < t->ndim; d++) {
        if (d) fputs(", ", f);
        put_index_buffer(f, t->indptr_type, t->csf_indptr[d], t->csf_indptr_len[d]);
      }
      fputs("], \"indices\": [", f);
      for (int32_t d = 0; d < t->ndim; d++) {
        if (d) fputs(", ", f);
        put_index_buffer(f, t->index_type, t->csf_indices[d], t->csf_indices_len[d]);
      }
      fputc(']', f);
      break;
  }
  fputs(", \"values\": [", f);
  size_t w = qv_value_type_size(t->value_type);
  for (int64_t k = 0; k < t->nnz; k++) {
    if (k) fputs(", ", f);
    put_value(f, t->value_type, t->values + (size_t)k * w);
  }
  fputs("]}", f);
}

static QvStatus print_tensors(const QvCliInput *in, FILE *f, QvError *err) {
  QvIpcReader *r;
  QvStatus st = qv_cli_reader_memory(&r, in->data, in->size, err);
  if (st) return st;
  /* each message is checked before anything of it is printed; the
   * document is whole only when every message was */
  fputs("{\"messages\": [", f);
  for (int64_t i = 0;; i++) {
    QvIpcMessage msg;
    st = qv_ipc_reader_next(r, &msg, err);
    if (st == QV_EOS) {
      st = QV_OK;
      break;
    }
    if (st) break;
    uint8_t kind = msg.message.header_type;
    fputs(i ? ",\n  " : "\n  ", f);
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
      fprintf(f, "{\"message\": %" PRId64 ", \"kind\": \"%s\"}", i, qv_header_type_name(kind));
    }
    if (st) qv_error_prefix(err, "message %" PRId64 " at offset %" PRId64, i, msg.offset);
    qv_ipc_message_reset(&msg);
    if (st) break;
  }
  qv_ipc_reader_free(r);
  if (!st) fputs("\n]}\n", f);
  return st;
}

/* Record batches: the integration JSON of the whole input. */
static QvStatus print_batches(const QvCliInput *in, FILE *f, QvError *err) {
  struct ArrowArrayStream s;
  QvStatus st = qv_cli_rb_reader_memory(in->data, in->size, &s, NULL, err);
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
  char *text = NULL;
  size_t len = 0;
  if (!st) {
    for (int64_t i = 0; i < n; i++) bp[i] = &b[i];
    QvJsonData d;
    memset(&d, 0, sizeof d);
    d.schema = &schema;
    d.batches = bp;
    d.n_batches = n;
    qv_rb_stream_dictionary_ids(&s, &d.dictionary_ids, &d.n_dictionary_ids);
    st = qv_json_write(&d, NULL, &text, &len, err);
  }
  if (!st && fwrite(text, 1, len, f) != len) st = qv_error_set(err, QV_EIO, "cannot write the output");
  free(text);
  for (int64_t i = 0; i < n; i++) b[i].release(&b[i]);
  free(b);
  free(bp);
  if (schema.release) schema.release(&schema);
  s.release(&s);
  return st;
}

int qv_cmd_cat_json(int argc, char **argv) {
  const char *path = NULL, *p;
  QvCliArgs a;
  qv_cli_args_init(&a, "cat", argc, argv);
  while (qv_cli_args_next(&a)) {
    if (qv_cli_args_flag(&a, "--json")) continue;
    if (qv_cli_args_threads(&a)) continue;
    if ((p = qv_cli_args_positional(&a)) != NULL && path == NULL) path = p;
    else if (p != NULL) qv_cli_args_error(&a, "takes one FILE");
    else qv_cli_args_unknown(&a);
  }
  if (a.status) return a.status;
  if (path == NULL) return qv_cli_usage_error("cat", "needs a FILE ('-' for stdin)");
  QvError err;
  qv_error_clear(&err);
  QvCliInput in;
  if (qv_cli_input_open(path, &in, &err)) return qv_cli_fail("cat", &err); /* names FILE */
  QvStatus st = qv_cli_holds_tensors(in.data, in.size) ? print_tensors(&in, stdout, &err)
                                                        : print_batches(&in, stdout, &err);
  qv_cli_input_free(&in);
  fflush(stdout);
  if (st) {
    fprintf(stderr, "quiver cat: %s: %s\n", strcmp(path, "-") ? path : "stdin", err.message);
    return qv_cli_exit_code(st);
  }
  return QV_EXIT_OK;
}
