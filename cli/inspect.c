/* quiver inspect FILE|-: one line per message of a stream or file. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "rb_print.h"
#include "text.h"
#include "quiver/format.h"
#include "quiver/ipc.h"
#include "quiver/recordbatch_ipc.h"
#include "quiver/sparse_column.h"
#include "quiver/tensor.h"
#include "quiver/tensor_column.h"

typedef struct Text {
  char buf[4096];
  size_t len;
} Text;

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static void put(Text *t, const char *fmt, ...) {
  if (t->len >= sizeof t->buf - 1) return;
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(t->buf + t->len, sizeof t->buf - t->len, fmt, ap);
  va_end(ap);
  if (n > 0) t->len += (size_t)n;
  if (t->len >= sizeof t->buf) {
    t->len = sizeof t->buf - 4;
    memcpy(t->buf + t->len, "...", 4);
    t->len += 3;
  }
}

/* Names come from the file: escaped, never sent to the terminal as they are. */
static void put_name(Text *t, const char *name, size_t len) {
  QvCliText e = {0};
  if (name) cli_text_put_name(&e, name, len);
  put(t, "%s", e.failed ? "?" : cli_text_str(&e));
  cli_text_free(&e);
}

/* An extension field whose metadata does not parse: the reason (the type
 * text, "extension<NAME[storage_type=...]>", says only that it was not
 * recognized). */
static void put_extension_problem(Text *t, const QvField *f) {
  const QvKeyValue *name = NULL, *meta = NULL;
  for (int64_t i = 0; i < f->n_metadata; i++) {
    const QvKeyValue *kv = &f->metadata[i];
    if (kv->key == NULL || kv->value == NULL) continue;
    if (kv->key_len == 20 && memcmp(kv->key, "ARROW:extension:name", 20) == 0) name = kv;
    if (kv->key_len == 24 && memcmp(kv->key, "ARROW:extension:metadata", 24) == 0) meta = kv;
  }
  if (name == NULL) return;
#define IS(s) (name->value_len == strlen(s) && memcmp(name->value, s, name->value_len) == 0)
  QvError err;
  QvStatus st = QV_OK;
  int32_t ndim = 0;
  for (int64_t i = 0; i < f->n_children; i++)
    if (f->children[i].name_len == 5 && memcmp(f->children[i].name, "shape", 5) == 0 &&
        f->children[i].type.id == QV_TYPE_FIXED_SIZE_LIST)
      ndim = f->children[i].type.u.fixed_size_list.list_size;
  if (IS(QV_FIXED_SHAPE_TENSOR) || IS(QV_VARIABLE_SHAPE_TENSOR)) {
    QvTensorColumnType type;
    st = qv_tensor_column_type_parse(IS(QV_FIXED_SHAPE_TENSOR) ? QV_TENSOR_COLUMN_FIXED_SHAPE
                                                               : QV_TENSOR_COLUMN_VARIABLE_SHAPE,
                                     meta ? meta->value : "", meta ? meta->value_len : 0, ndim,
                                     &type, &err);
    qv_tensor_column_type_reset(&type);
  } else if (IS(QV_SPARSE_TENSOR_EXTENSION) || IS(QV_SPARSE_VECTOR_EXTENSION)) {
    QvSparseColumnType type;
    st = qv_sparse_column_type_parse(IS(QV_SPARSE_TENSOR_EXTENSION) ? QV_SPARSE_COLUMN_TENSOR
                                                                    : QV_SPARSE_COLUMN_VECTOR,
                                     meta ? meta->value : "", meta ? meta->value_len : 0,
                                     ndim ? ndim : 1, &type, &err);
    qv_sparse_column_type_reset(&type);
  }
#undef IS
  if (st == QV_OK) return;
  put(t, " [invalid: ");
  put_name(t, err.message, strlen(err.message));
  put(t, "]");
}

/* Whether a top-level field is a quiver sparse column (its cells get a line
 * each). */
static bool schema_has_sparse_column(const QvSchema *schema) {
  for (int64_t i = 0; i < schema->n_fields; i++) {
    const QvField *f = &schema->fields[i];
    for (int64_t k = 0; k < f->n_metadata; k++) {
      const QvKeyValue *kv = &f->metadata[k];
      if (kv->key == NULL || kv->value == NULL || kv->key_len != 20 ||
          memcmp(kv->key, "ARROW:extension:name", 20) != 0)
        continue;
      if ((kv->value_len == strlen(QV_SPARSE_TENSOR_EXTENSION) &&
           memcmp(kv->value, QV_SPARSE_TENSOR_EXTENSION, kv->value_len) == 0) ||
          (kv->value_len == strlen(QV_SPARSE_VECTOR_EXTENSION) &&
           memcmp(kv->value, QV_SPARSE_VECTOR_EXTENSION, kv->value_len) == 0))
        return true;
    }
  }
  return false;
}

/* Dictionary ids of a field and its children, depth first. */
static void collect_dict_ids(const QvField *f, int64_t *ids, int *n, int max, int depth) {
  if (depth > QV_ARRAY_MAX_DEPTH) return;
  if (f->dictionary && *n < max) ids[(*n)++] = f->dictionary->id;
  for (int64_t i = 0; i < f->n_children; i++) collect_dict_ids(&f->children[i], ids, n, max, depth + 1);
}

/* "name: type" in Arrow C++'s spelling (qv_arrow_schema_to_string, as
 * `quiver cat` prints it), then the dictionary ids, which a type does not
 * carry; a field that no reader could read is described by its IPC type
 * and the reason. */
static void put_field(Text *t, const QvField *f) {
  struct ArrowSchema s;
  QvError err;
  char *text = NULL;
  QvStatus st = qv_rb_field_to_schema(f, &s, &err);
  if (st == QV_OK) {
    st = qv_arrow_schema_to_string_alloc(&s, QV_TYPE_STRING_FIELD, &text, &err);
    s.release(&s);
  }
  if (st == QV_OK) {
    put_name(t, text, strlen(text));
  } else {
    char type[128];
    put_name(t, f->name, f->name_len);
    put(t, ": %s [invalid: ", qv_type_describe(&f->type, type, sizeof type));
    put_name(t, err.message, strlen(err.message));
    put(t, "]");
  }
  qv_free(text);
  int64_t ids[16];
  int n = 0;
  collect_dict_ids(f, ids, &n, 16, 0);
  for (int i = 0; i < n; i++) put(t, "%s%" PRId64, i ? "," : n > 1 ? " [dictionary ids=" : " [dictionary id=", ids[i]);
  if (n) put(t, "]");
  put_extension_problem(t, f);
}

static void put_shape(Text *t, int64_t ndim, const QvTensorDim *shape) {
  put(t, "shape=[");
  for (int64_t i = 0; i < ndim; i++) put(t, "%s%" PRId64, i ? ", " : "", shape[i].size);
  put(t, "]");
  bool named = false;
  for (int64_t i = 0; i < ndim; i++) named |= shape[i].name && shape[i].name[0];
  if (named) {
    put(t, " names=[");
    for (int64_t i = 0; i < ndim; i++) {
      if (i) put(t, ", ");
      put_name(t, shape[i].name, shape[i].name_len);
    }
    put(t, "]");
  }
}

static void put_int_type(Text *t, const char *label, QvIntType it) {
  put(t, " %s=%sint%d", label, it.is_signed ? "" : "u", it.bit_width);
}

/* Offset of a buffer inside the body and its alignment in the input. */
static void put_buffer(Text *t, const char *name, QvBuffer b, int64_t body_offset) {
  int64_t abs = body_offset + b.offset;
  put(t, " %s@%" PRId64 "+%" PRId64 "(%s)", name, b.offset, b.length,
      abs % 64 == 0 ? "64-aligned" : abs % 8 == 0 ? "8-aligned" : "unaligned");
}

/* A value type of the element width of a tensor's Arrow type (only the
 * width matters for strides); false for what no tensor can hold. */
static bool width_type(const QvType *type, QvArrowType *out) {
  int bits = 0;
  if (type->id == QV_TYPE_INT) bits = type->u.int_.bit_width;
  if (type->id == QV_TYPE_FLOATING_POINT) {
    int16_t p = type->u.floating_point.precision;
    bits = p == QV_PRECISION_HALF ? 16 : p == QV_PRECISION_SINGLE ? 32 : p == QV_PRECISION_DOUBLE ? 64 : 0;
  }
  switch (bits) {
    case 8: *out = QV_ARROW_UINT8; return true;
    case 16: *out = QV_ARROW_UINT16; return true;
    case 32: *out = QV_ARROW_UINT32; return true;
    case 64: *out = QV_ARROW_UINT64; return true;
    default: return false;
  }
}

/* "row-major", "column-major" or "strided", from the strides in the file. */
static const char *tensor_layout(const QvTensorMeta *te) {
  QvArrowType vt;
  if (!te->has_strides || te->n_strides == 0) return "row-major";
  if (te->n_strides != te->ndim || te->ndim > QV_TENSOR_MAX_NDIM || !width_type(&te->type, &vt))
    return "invalid";
  int64_t shape[QV_TENSOR_MAX_NDIM], want[QV_TENSOR_MAX_NDIM];
  for (int64_t i = 0; i < te->ndim; i++) shape[i] = te->shape[i].size;
  for (int col = 0; col < 2; col++) {
    if (qv_tensor_compute_strides(vt, (int32_t)te->ndim, shape, col == 1, want, NULL) != QV_OK)
      return "invalid";
    if (memcmp(want, te->strides, (size_t)te->ndim * sizeof *want) == 0)
      return col ? "column-major" : "row-major";
  }
  return "strided";
}

static double density(const QvSparseTensorMeta *s) {
  double total = 1;
  for (int64_t i = 0; i < s->ndim; i++) total *= (double)s->shape[i].size;
  return total > 0 ? (double)s->non_zero_length / total : 0.0;
}

/* Compressed vs uncompressed body bytes of a compressed batch: each
 * buffer's little-endian length prefix (-1: stored uncompressed); left out
 * when a buffer lies outside the body (the readers say why). */
static void put_compressed_size(Text *t, const QvRecordBatch *rb, const QvIpcMessage *m) {
  int64_t packed = 0, unpacked = 0;
  for (int64_t i = 0; i < rb->n_buffers; i++) {
    QvBuffer b = rb->buffers[i];
    if (b.length == 0) continue;
    if (m->body == NULL || b.offset < 0 || b.length < 8 || b.offset > m->body_length ||
        b.length > m->body_length - b.offset)
      return;
    const uint8_t *p = m->body + b.offset;
    uint64_t u = 0;
    for (int k = 7; k >= 0; k--) u = u << 8 | p[k];
    int64_t n = (int64_t)u;
    if (n < -1) return;
    packed += b.length;
    unpacked += n == -1 ? b.length - 8 : n;
  }
  put(t, " body=%" PRId64 " bytes compressed, %" PRId64 " uncompressed", packed, unpacked);
}

/* One line per buffer of a compressed batch, under the message's line: the
 * frame's bytes (after the length prefix) and what it decompresses to, as
 * the prefix declares (only reading it would tell whether the frame agrees;
 * `quiver validate` does). */
static void print_buffers(const QvIpcMessage *m) {
  const QvMessage *msg = &m->message;
  const QvRecordBatch *rb = msg->header_type == QV_HEADER_RECORD_BATCH ? &msg->header.record_batch
                            : msg->header_type == QV_HEADER_DICTIONARY_BATCH
                                ? &msg->header.dictionary_batch.data
                                : NULL;
  if (rb == NULL || rb->compression == QV_COMPRESSION_NONE) return;
  for (int64_t i = 0; i < rb->n_buffers; i++) {
    QvBuffer b = rb->buffers[i];
    printf("%-10s   buffer %" PRId64 ": ", "", i);
    if (b.length == 0) {
      printf("empty\n");
      continue;
    }
    if (m->body == NULL || b.offset < 0 || b.length < 0 || b.offset > m->body_length ||
        b.length > m->body_length - b.offset) {
      printf("outside the body (offset %" PRId64 ", length %" PRId64 ")\n", b.offset, b.length);
      continue;
    }
    if (b.length < 8) {
      printf("%" PRId64 " bytes, too short for its length prefix\n", b.length);
      continue;
    }
    const uint8_t *p = m->body + b.offset;
    uint64_t u = 0;
    for (int k = 7; k >= 0; k--) u = u << 8 | p[k];
    int64_t n = (int64_t)u;
    if (n == -1)
      printf("stored uncompressed, %" PRId64 " byte%s\n", b.length - 8, b.length == 9 ? "" : "s");
    else if (n < -1)
      printf("invalid uncompressed length %" PRId64 "\n", n);
    else
      printf("compressed %" PRId64 ", uncompressed %" PRId64 " bytes\n", b.length - 8, n);
  }
}

static void summarize(Text *t, const QvIpcMessage *m) {
  char type[128];
  const QvMessage *msg = &m->message;
  switch (msg->header_type) {
    case QV_HEADER_SCHEMA: {
      const QvSchema *s = &msg->header.schema;
      put(t, "%" PRId64 " field%s", s->n_fields, s->n_fields == 1 ? "" : "s");
      put(t, s->endianness == QV_ENDIAN_BIG ? " (big-endian)" : " (little-endian)");
      for (int64_t i = 0; i < s->n_fields; i++) {
        put(t, i ? ", " : ": ");
        put_field(t, &s->fields[i]);
      }
      break;
    }
    case QV_HEADER_RECORD_BATCH:
    case QV_HEADER_DICTIONARY_BATCH: {
      const QvRecordBatch *rb = &msg->header.record_batch;
      if (msg->header_type == QV_HEADER_DICTIONARY_BATCH) {
        rb = &msg->header.dictionary_batch.data;
        put(t, "id=%" PRId64 "%s ", msg->header.dictionary_batch.id,
            msg->header.dictionary_batch.is_delta ? " delta" : "");
      }
      put(t, "length=%" PRId64 " nodes=%" PRId64 " buffers=%" PRId64, rb->length, rb->n_nodes,
          rb->n_buffers);
      if (rb->compression != QV_COMPRESSION_NONE) {
        put(t, " compression=%s", rb->compression == QV_COMPRESSION_ZSTD ? "zstd" : "lz4");
        put_compressed_size(t, rb, m);
      }
      if (rb->n_variadic_buffer_counts) put(t, " variadic=%" PRId64, rb->n_variadic_buffer_counts);
      break;
    }
    case QV_HEADER_TENSOR: {
      const QvTensorMeta *te = &msg->header.tensor;
      put(t, "%s ", qv_type_describe(&te->type, type, sizeof type));
      put_shape(t, te->ndim, te->shape);
      if (te->has_strides) {
        put(t, " strides=[");
        for (int64_t i = 0; i < te->n_strides; i++)
          put(t, "%s%" PRId64, i ? ", " : "", te->strides[i]);
        put(t, "]");
      }
      put(t, " (%s)", tensor_layout(te));
      put_buffer(t, "data", te->data, m->body_offset);
      break;
    }
    case QV_HEADER_SPARSE_TENSOR: {
      const QvSparseTensorMeta *s = &msg->header.sparse_tensor;
      static const char *const formats[] = {
          [QV_SPARSE_COO] = "COO", [QV_SPARSE_CSR] = "CSR", [QV_SPARSE_CSC] = "CSC",
          [QV_SPARSE_CSF] = "CSF"};
      const char *format = formats[s->format]; /* the decoder gives one of these */
      put(t, "%s %s ", format, qv_type_describe(&s->type, type, sizeof type));
      put_shape(t, s->ndim, s->shape);
      put(t, " nnz=%" PRId64 " density=%.4g", s->non_zero_length, density(s));
      if (s->format == QV_SPARSE_COO) {
        put_int_type(t, "index", s->index.coo.indices_type);
        put(t, " canonical=%s", s->index.coo.is_canonical ? "yes" : "no");
        put_buffer(t, "indices", s->index.coo.indices_buffer, m->body_offset);
      } else if (s->format == QV_SPARSE_CSR || s->format == QV_SPARSE_CSC) {
        put_int_type(t, "indptr", s->index.csx.indptr_type);
        put_int_type(t, "index", s->index.csx.indices_type);
        put_buffer(t, "indptr", s->index.csx.indptr_buffer, m->body_offset);
        put_buffer(t, "indices", s->index.csx.indices_buffer, m->body_offset);
      } else if (s->format == QV_SPARSE_CSF) {
        const QvSparseCSF *c = &s->index.csf;
        put_int_type(t, "indptr", c->indptr_type);
        put_int_type(t, "index", c->indices_type);
        put(t, " axis_order=[");
        for (int64_t i = 0; i < c->n_axis_order; i++)
          put(t, "%s%d", i ? ", " : "", c->axis_order[i]);
        put(t, "]");
        char name[32];
        for (int64_t i = 0; i < c->n_indptr_buffers; i++) {
          snprintf(name, sizeof name, "indptr%" PRId64, i);
          put_buffer(t, name, c->indptr_buffers[i], m->body_offset);
        }
        for (int64_t i = 0; i < c->n_indices_buffers; i++) {
          snprintf(name, sizeof name, "indices%" PRId64, i);
          put_buffer(t, name, c->indices_buffers[i], m->body_offset);
        }
      }
      put_buffer(t, "data", s->data, m->body_offset);
      break;
    }
    default:
      break;
  }
}

int qv_cmd_inspect(int argc, char **argv) {
  const char *path;
  QvCliInput in;
  int status = cli_open_single_input("inspect", argc, argv, &path, &in);
  if (status) return status;
  QvError err;
  qv_error_clear(&err);

  QvIpcReader *r = NULL;
  int rc = 0;
  if (cli_reader_memory(&r, in.data, in.size, &err)) {
    cli_error_name_input(path, &err);
    rc = cli_fail("inspect", &err);
    goto done;
  }
  bool is_file = qv_ipc_reader_format(r) == QV_IPC_FORMAT_FILE;
  int64_t count = 0;
  bool has_sparse_column = false;
  for (;;) {
    QvIpcMessage m;
    QvStatus st = qv_ipc_reader_next(r, &m, &err);
    if (st && st != QV_EOS && count == 0) {
      /* input whose first message cannot be read is not listed as Arrow */
      cli_error_name_input(path, &err);
      rc = cli_fail("inspect", &err);
      goto done;
    }
    if (count == 0) {
      printf("%s: Arrow %s, %zu bytes\n", strcmp(path, "-") == 0 ? "stdin" : path,
             is_file ? "file" : "stream", in.size);
      printf("%-10s %-15s %-8s %-10s %-10s %s\n", "offset", "kind", "version", "metadata",
             "body", "summary");
    }
    if (st == QV_EOS) break;
    if (st) {
      fflush(stdout);
      rc = cli_fail("inspect", &err);
      goto done;
    }
    Text t = {.len = 0};
    t.buf[0] = '\0';
    summarize(&t, &m);
    if (m.message.header_type == QV_HEADER_SCHEMA && schema_has_sparse_column(&m.message.header.schema))
      has_sparse_column = true;
    printf("%-10" PRId64 " %-15s %-8s %-10d %-10" PRId64 " %s%s\n", m.offset,
           qv_header_type_name(m.message.header_type),
           qv_metadata_version_name(m.message.version), m.metadata_length, m.body_length,
           m.legacy_prefix ? "(legacy prefix) " : "", t.buf);
    print_buffers(&m);
    count++;
    qv_ipc_message_reset(&m);
  }
  if (is_file) {
    QvFooter footer;
    int64_t foff;
    int32_t flen;
    if (qv_ipc_reader_footer(r, &footer, &foff, &flen, &err)) {
      fflush(stdout);
      rc = cli_fail("inspect", &err);
      goto done;
    }
    printf("%-10" PRId64 " %-15s %-8s %-10d %-10s schema: %" PRId64 " fields, %" PRId64
           " dictionary blocks, %" PRId64 " record batch blocks\n",
           foff, "Footer", qv_metadata_version_name(footer.version), flen, "-",
           footer.has_schema ? footer.schema.n_fields : 0, footer.n_dictionaries,
           footer.n_record_batches);
    qv_footer_reset(&footer);
    /* the file's verdict is the file reader's, as for cat and validate
     * (the footer's schema; the first message's version, and its schema agreeing) */
    QvRbFileReader *f;
    if (cli_rb_reader_memory(in.data, in.size, NULL, &f, &err)) {
      fflush(stdout);
      rc = cli_fail("inspect", &err);
      goto done;
    }
    qv_rb_file_reader_free(f);
  }
  /* sparse columns: format, shape and nnz per cell (a table; tensor
   * messages have no schema and nothing is printed) */
  if (count > 0 && has_sparse_column) {
    if (cli_print_sparse_cells(in.data, in.size, stdout, &err)) {
      fflush(stdout);
      rc = cli_fail("inspect", &err);
      goto done;
    }
  }
  printf("%" PRId64 " message%s\n", count, count == 1 ? "" : "s");
done:
  qv_ipc_reader_free(r);
  cli_input_free(&in);
  return rc;
}
