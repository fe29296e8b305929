/* Message / Footer encoding with the FlatBuffers builder. Children are built
 * before their parents (the builder writes back to front). Scalars equal to
 * their schema default are omitted, as flatc-generated builders do. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flatbuf/flatbuf.h"
#include "format/descriptors.h"
#include "util/load.h"
#include "quiver/format.h"

/* ------------------------------------------------------------ arguments */

/* The builder can only report "failed"; this pass rejects, with a message
 * naming the member, what cannot be encoded at all: unknown union tags,
 * negative counts, NULL arrays with a positive count, runaway nesting. Type
 * parameters are written as given (bit widths, units, ...) so that callers
 * can produce invalid metadata on purpose; the decoder judges those. */
typedef struct Check {
  QvError *error;
} Check;

static QvStatus bad(Check *c, const char *where, const char *what) {
  return qv_error_set(c->error, QV_EARG, "%s: %s", where, what);
}

static QvStatus check_array(Check *c, const char *where, int64_t n, const void *p) {
  if (n < 0) return bad(c, where, "negative count");
  if (n > 0 && p == NULL) return bad(c, where, "positive count but NULL array");
  if (n > (int64_t)UINT32_MAX / 32) return bad(c, where, "too many elements for a FlatBuffer");
  return QV_OK;
}

static QvStatus check_type(Check *c, const char *where, const QvType *t) {
  if (t->id <= QV_TYPE_NONE || t->id >= QV_TYPE_ID_COUNT) {
    char msg[64];
    snprintf(msg, sizeof msg, "type id %d is not a member of the Type union", (int)t->id);
    return bad(c, where, msg);
  }
  if (t->id == QV_TYPE_UNION && t->u.union_.has_type_ids)
    return check_array(c, where, t->u.union_.n_type_ids, t->u.union_.type_ids);
  return QV_OK;
}

static QvStatus check_fields(Check *c, const char *where, int depth, int64_t n,
                             const QvField *fields) {
  QvStatus st = check_array(c, where, n, fields);
  if (st || n == 0) return st;
  if (depth > QV_FORMAT_MAX_FIELD_DEPTH)
    return qv_error_set(c->error, QV_ELIMIT, "%s: fields nested deeper than %d", where,
                        QV_FORMAT_MAX_FIELD_DEPTH);
  for (int64_t i = 0; i < n; i++) {
    char w[256];
    snprintf(w, sizeof w, "%s[%lld].type", where, (long long)i);
    if ((st = check_type(c, w, &fields[i].type))) return st;
    snprintf(w, sizeof w, "%s[%lld].custom_metadata", where, (long long)i);
    if ((st = check_array(c, w, fields[i].n_metadata, fields[i].metadata))) return st;
    snprintf(w, sizeof w, "%s[%lld].children", where, (long long)i);
    if ((st = check_fields(c, w, depth + 1, fields[i].n_children, fields[i].children)))
      return st;
  }
  return QV_OK;
}

static QvStatus check_schema(Check *c, const char *where, const QvSchema *s) {
  char w[128];
  snprintf(w, sizeof w, "%s.fields", where);
  QvStatus st = check_fields(c, w, 0, s->n_fields, s->fields);
  if (st) return st;
  snprintf(w, sizeof w, "%s.custom_metadata", where);
  if ((st = check_array(c, w, s->n_metadata, s->metadata))) return st;
  snprintf(w, sizeof w, "%s.features", where);
  return check_array(c, w, s->n_features, s->features);
}

static QvStatus check_record_batch(Check *c, const char *where, const QvRecordBatch *rb) {
  char w[128];
  snprintf(w, sizeof w, "%s.nodes", where);
  QvStatus st = check_array(c, w, rb->n_nodes, rb->nodes);
  if (st) return st;
  snprintf(w, sizeof w, "%s.buffers", where);
  if ((st = check_array(c, w, rb->n_buffers, rb->buffers))) return st;
  snprintf(w, sizeof w, "%s.variadicBufferCounts", where);
  return check_array(c, w, rb->n_variadic_buffer_counts, rb->variadic_buffer_counts);
}

static QvStatus check_message(Check *c, const QvMessage *msg) {
  QvStatus st = check_array(c, "Message.custom_metadata", msg->n_metadata, msg->metadata);
  if (st) return st;
  switch (msg->header_type) {
    case QV_HEADER_SCHEMA:
      return check_schema(c, "Schema", &msg->header.schema);
    case QV_HEADER_RECORD_BATCH:
      return check_record_batch(c, "RecordBatch", &msg->header.record_batch);
    case QV_HEADER_DICTIONARY_BATCH:
      return check_record_batch(c, "DictionaryBatch.data", &msg->header.dictionary_batch.data);
    case QV_HEADER_TENSOR: {
      const QvTensorMeta *t = &msg->header.tensor;
      if ((st = check_type(c, "Tensor.type", &t->type))) return st;
      if ((st = check_array(c, "Tensor.shape", t->ndim, t->shape))) return st;
      return check_array(c, "Tensor.strides", t->n_strides, t->strides);
    }
    case QV_HEADER_SPARSE_TENSOR: {
      const QvSparseTensorMeta *t = &msg->header.sparse_tensor;
      if ((st = check_type(c, "SparseTensor.type", &t->type))) return st;
      if ((st = check_array(c, "SparseTensor.shape", t->ndim, t->shape))) return st;
      switch (t->format) {
        case QV_SPARSE_COO:
          return check_array(c, "SparseTensorIndexCOO.indicesStrides",
                             t->index.coo.n_indices_strides, t->index.coo.indices_strides);
        case QV_SPARSE_CSR:
        case QV_SPARSE_CSC:
          return QV_OK;
        case QV_SPARSE_CSF: {
          const QvSparseCSF *f = &t->index.csf;
          if ((st = check_array(c, "SparseTensorIndexCSF.indptrBuffers", f->n_indptr_buffers,
                                f->indptr_buffers)))
            return st;
          if ((st = check_array(c, "SparseTensorIndexCSF.indicesBuffers", f->n_indices_buffers,
                                f->indices_buffers)))
            return st;
          return check_array(c, "SparseTensorIndexCSF.axisOrder", f->n_axis_order,
                             f->axis_order);
        }
        default: {
          char msg2[80];
          snprintf(msg2, sizeof msg2, "sparse format %d is not COO, CSR, CSC or CSF",
                   (int)t->format);
          return bad(c, "SparseTensor.sparseIndex", msg2);
        }
      }
    }
    default: {
      char msg2[64];
      snprintf(msg2, sizeof msg2, "cannot encode header type %u", msg->header_type);
      return bad(c, "Message.header", msg2);
    }
  }
}

/* ------------------------------------------------------------- encoding */

/* Records a failure in the builder (the first one wins); qvi_fb_finish then
 * reports it. Argument errors are normally caught by check_message first. */
static void fail(QvFbBuilder *b, QvStatus status) {
  if (!b->failed) b->fail_status = status;
  b->failed = true;
}

static QvFbRef string_ref(QvFbBuilder *b, const char *s, size_t len) {
  return s ? qvi_fb_create_string(b, s, len) : 0;
}

static QvFbRef encode_metadata(QvFbBuilder *b, int64_t n, const QvKeyValue *kv) {
  if (n <= 0 || kv == NULL) return 0;
  QvFbRef *refs = malloc((size_t)n * sizeof *refs);
  if (refs == NULL) {
    fail(b, QV_ENOMEM);
    return 0;
  }
  for (int64_t i = 0; i < n; i++) {
    QvFbRef k = string_ref(b, kv[i].key, kv[i].key_len);
    QvFbRef v = string_ref(b, kv[i].value, kv[i].value_len);
    qvi_fb_table_start(b);
    qvi_fb_add_ref(b, KV_KEY, k);
    qvi_fb_add_ref(b, KV_VALUE, v);
    refs[i] = qvi_fb_table_end(b);
  }
  QvFbRef r = qvi_fb_create_vector_refs(b, refs, (size_t)n);
  free(refs);
  return r;
}

static QvFbRef encode_int(QvFbBuilder *b, QvIntType t) {
  qvi_fb_table_start(b);
  qvi_fb_add_i32(b, 0, t.bit_width, 0);
  qvi_fb_add_bool(b, 1, t.is_signed, false);
  return qvi_fb_table_end(b);
}

static QvFbRef encode_type(QvFbBuilder *b, const QvType *t) {
  QvFbRef sub = 0;
  if (t->id == QV_TYPE_INT) return encode_int(b, t->u.int_);
  if (t->id == QV_TYPE_TIMESTAMP)
    sub = string_ref(b, t->u.timestamp.timezone, t->u.timestamp.timezone_len);
  if (t->id == QV_TYPE_UNION && t->u.union_.has_type_ids)
    sub = qvi_fb_create_vector(b, t->u.union_.type_ids, (size_t)t->u.union_.n_type_ids, 4, 4);
  qvi_fb_table_start(b);
  switch (t->id) {
    case QV_TYPE_FLOATING_POINT:
      qvi_fb_add_i16(b, 0, t->u.floating_point.precision, 0);
      break;
    case QV_TYPE_DECIMAL:
      qvi_fb_add_i32(b, 0, t->u.decimal.precision, 0);
      qvi_fb_add_i32(b, 1, t->u.decimal.scale, 0);
      qvi_fb_add_i32(b, 2, t->u.decimal.bit_width, 128);
      break;
    case QV_TYPE_DATE:
      qvi_fb_add_i16(b, 0, t->u.date.unit, QV_DATE_MILLISECOND);
      break;
    case QV_TYPE_TIME:
      qvi_fb_add_i16(b, 0, t->u.time.unit, QV_TIME_MILLISECOND);
      qvi_fb_add_i32(b, 1, t->u.time.bit_width, 32);
      break;
    case QV_TYPE_TIMESTAMP:
      qvi_fb_add_i16(b, 0, t->u.timestamp.unit, QV_TIME_SECOND);
      qvi_fb_add_ref(b, 1, sub);
      break;
    case QV_TYPE_INTERVAL:
      qvi_fb_add_i16(b, 0, t->u.interval.unit, 0);
      break;
    case QV_TYPE_DURATION:
      qvi_fb_add_i16(b, 0, t->u.duration.unit, QV_TIME_MILLISECOND);
      break;
    case QV_TYPE_FIXED_SIZE_BINARY:
      qvi_fb_add_i32(b, 0, t->u.fixed_size_binary.byte_width, 0);
      break;
    case QV_TYPE_FIXED_SIZE_LIST:
      qvi_fb_add_i32(b, 0, t->u.fixed_size_list.list_size, 0);
      break;
    case QV_TYPE_MAP:
      qvi_fb_add_bool(b, 0, t->u.map.keys_sorted, false);
      break;
    case QV_TYPE_UNION:
      qvi_fb_add_i16(b, 0, t->u.union_.mode, QV_UNION_SPARSE);
      qvi_fb_add_ref(b, 1, sub);
      break;
    default:
      break;
  }
  return qvi_fb_table_end(b);
}

static QvFbRef encode_fields(QvFbBuilder *b, int64_t n, const QvField *fields);

static QvFbRef encode_field(QvFbBuilder *b, const QvField *f) {
  QvFbRef name = string_ref(b, f->name, f->name_len);
  QvFbRef type = encode_type(b, &f->type);
  QvFbRef dict = 0;
  if (f->dictionary) {
    QvFbRef it = f->dictionary->has_index_type ? encode_int(b, f->dictionary->index_type) : 0;
    qvi_fb_table_start(b);
    qvi_fb_add_i64(b, DICT_ID, f->dictionary->id, 0);
    qvi_fb_add_ref(b, DICT_INDEX_TYPE, it);
    qvi_fb_add_bool(b, DICT_IS_ORDERED, f->dictionary->is_ordered, false);
    qvi_fb_add_i16(b, DICT_KIND, f->dictionary->kind, 0);
    dict = qvi_fb_table_end(b);
  }
  /* Arrow writers always emit the children vector, even when empty. */
  QvFbRef children = encode_fields(b, f->n_children, f->children);
  QvFbRef md = encode_metadata(b, f->n_metadata, f->metadata);
  qvi_fb_table_start(b);
  qvi_fb_add_ref(b, FIELD_NAME, name);
  qvi_fb_add_bool(b, FIELD_NULLABLE, f->nullable, false);
  qvi_fb_add_u8(b, FIELD_TYPE_TYPE, (uint8_t)f->type.id, 0);
  qvi_fb_add_ref(b, FIELD_TYPE, type);
  qvi_fb_add_ref(b, FIELD_DICTIONARY, dict);
  qvi_fb_add_ref(b, FIELD_CHILDREN, children);
  qvi_fb_add_ref(b, FIELD_CUSTOM_METADATA, md);
  return qvi_fb_table_end(b);
}

static QvFbRef encode_fields(QvFbBuilder *b, int64_t n, const QvField *fields) {
  if (n < 0 || (n > 0 && fields == NULL)) {
    fail(b, QV_EARG);
    return 0;
  }
  QvFbRef *refs = malloc(((size_t)n + 1) * sizeof *refs);
  if (refs == NULL) {
    fail(b, QV_ENOMEM);
    return 0;
  }
  for (int64_t i = 0; i < n; i++) refs[i] = encode_field(b, &fields[i]);
  QvFbRef r = qvi_fb_create_vector_refs(b, refs, (size_t)n);
  free(refs);
  return r;
}

static QvFbRef encode_schema(QvFbBuilder *b, const QvSchema *s) {
  QvFbRef fields = encode_fields(b, s->n_fields, s->fields);
  QvFbRef md = encode_metadata(b, s->n_metadata, s->metadata);
  QvFbRef features =
      s->n_features > 0 ? qvi_fb_create_vector(b, s->features, (size_t)s->n_features, 8, 8) : 0;
  qvi_fb_table_start(b);
  /* Schema.fbs numbers: Little 0, Big 1 (NATIVE is the host's order) */
  bool big = s->endianness == QV_ENDIAN_BIG ||
             (s->endianness == QV_ENDIAN_NATIVE && QV_HOST_BIG_ENDIAN);
  qvi_fb_add_i16(b, SCHEMA_ENDIANNESS, big ? 1 : 0, 0);
  qvi_fb_add_ref(b, SCHEMA_FIELDS, fields);
  qvi_fb_add_ref(b, SCHEMA_CUSTOM_METADATA, md);
  qvi_fb_add_ref(b, SCHEMA_FEATURES, features);
  return qvi_fb_table_end(b);
}

/* Structs are written field by field, little-endian, so host padding never
 * leaks and a big-endian host writes the same bytes. */
static void pack_buffer(uint8_t *out, QvBuffer buf) {
  qvi_st_le_u64(out, (uint64_t)buf.offset);
  qvi_st_le_u64(out + 8, (uint64_t)buf.length);
}

static QvFbRef encode_buffer_vector(QvFbBuilder *b, int64_t n, const QvBuffer *bufs) {
  if (n < 0 || (n > 0 && bufs == NULL)) {
    fail(b, QV_EARG);
    return 0;
  }
  uint8_t *raw = malloc((size_t)n * 16 + 1);
  if (raw == NULL) {
    fail(b, QV_ENOMEM);
    return 0;
  }
  for (int64_t i = 0; i < n; i++) pack_buffer(raw + 16 * i, bufs[i]);
  QvFbRef r = qvi_fb_create_struct_vector(b, raw, (size_t)n, 16, 8);
  free(raw);
  return r;
}

static QvFbRef encode_record_batch(QvFbBuilder *b, const QvRecordBatch *rb) {
  QvFbRef nodes = 0;
  if (rb->n_nodes < 0 || (rb->n_nodes > 0 && rb->nodes == NULL) ||
      (rb->compression != QV_COMPRESSION_NONE && rb->compression != QV_COMPRESSION_LZ4_FRAME &&
       rb->compression != QV_COMPRESSION_ZSTD)) {
    fail(b, QV_EARG);
    return 0;
  }
  uint8_t *raw = malloc((size_t)rb->n_nodes * 16 + 1);
  if (raw == NULL) {
    fail(b, QV_ENOMEM);
    return 0;
  }
  for (int64_t i = 0; i < rb->n_nodes; i++) {
    qvi_st_le_u64(raw + 16 * i, (uint64_t)rb->nodes[i].length);
    qvi_st_le_u64(raw + 16 * i + 8, (uint64_t)rb->nodes[i].null_count);
  }
  nodes = qvi_fb_create_struct_vector(b, raw, (size_t)rb->n_nodes, 16, 8);
  free(raw);
  QvFbRef buffers = encode_buffer_vector(b, rb->n_buffers, rb->buffers);
  QvFbRef comp = 0;
  if (rb->compression != QV_COMPRESSION_NONE) {
    /* CompressionType: LZ4_FRAME = 0, ZSTD = 1 */
    int8_t codec = rb->compression == QV_COMPRESSION_ZSTD ? 1 : 0;
    qvi_fb_table_start(b);
    qvi_fb_add_scalar(b, COMP_CODEC, &codec, 1); /* explicit, as Arrow C++ writes it */
    qvi_fb_add_u8(b, COMP_METHOD, (uint8_t)rb->method, 0);
    comp = qvi_fb_table_end(b);
  }
  QvFbRef variadic = 0;
  if (rb->has_variadic_buffer_counts || rb->n_variadic_buffer_counts > 0)
    variadic = qvi_fb_create_vector(b, rb->variadic_buffer_counts,
                                   (size_t)rb->n_variadic_buffer_counts, 8, 8);
  qvi_fb_table_start(b);
  qvi_fb_add_i64(b, RB_LENGTH, rb->length, 0);
  qvi_fb_add_ref(b, RB_NODES, nodes);
  qvi_fb_add_ref(b, RB_BUFFERS, buffers);
  qvi_fb_add_ref(b, RB_COMPRESSION, comp);
  qvi_fb_add_ref(b, RB_VARIADIC, variadic);
  return qvi_fb_table_end(b);
}

static QvFbRef encode_shape(QvFbBuilder *b, int64_t ndim, const QvTensorDim *shape) {
  if (ndim < 0 || (ndim > 0 && shape == NULL)) {
    fail(b, QV_EARG);
    return 0;
  }
  QvFbRef *refs = malloc(((size_t)ndim + 1) * sizeof *refs);
  if (refs == NULL) {
    fail(b, QV_ENOMEM);
    return 0;
  }
  for (int64_t i = 0; i < ndim; i++) {
    QvFbRef name = string_ref(b, shape[i].name, shape[i].name_len);
    qvi_fb_table_start(b);
    qvi_fb_add_i64(b, DIM_SIZE, shape[i].size, 0);
    qvi_fb_add_ref(b, DIM_NAME, name);
    refs[i] = qvi_fb_table_end(b);
  }
  QvFbRef r = qvi_fb_create_vector_refs(b, refs, (size_t)ndim);
  free(refs);
  return r;
}

static QvFbRef encode_tensor(QvFbBuilder *b, const QvTensorMeta *t) {
  QvFbRef type = encode_type(b, &t->type);
  QvFbRef shape = encode_shape(b, t->ndim, t->shape);
  QvFbRef strides = 0;
  if (t->has_strides || t->n_strides > 0)
    strides = qvi_fb_create_vector(b, t->strides, (size_t)t->n_strides, 8, 8);
  uint8_t data[16];
  pack_buffer(data, t->data);
  qvi_fb_table_start(b);
  qvi_fb_add_u8(b, TENSOR_TYPE_TYPE, (uint8_t)t->type.id, 0);
  qvi_fb_add_ref(b, TENSOR_TYPE, type);
  qvi_fb_add_ref(b, TENSOR_SHAPE, shape);
  qvi_fb_add_ref(b, TENSOR_STRIDES, strides);
  qvi_fb_add_struct(b, TENSOR_DATA, data, 16, 8);
  return qvi_fb_table_end(b);
}

static QvFbRef encode_sparse_index(QvFbBuilder *b, const QvSparseTensorMeta *t) {
  uint8_t buf1[16], buf2[16];
  switch (t->format) {
    case QV_SPARSE_COO: {
      const QvSparseCOO *c = &t->index.coo;
      QvFbRef it = encode_int(b, c->indices_type);
      QvFbRef strides = 0;
      if (c->has_indices_strides || c->n_indices_strides > 0)
        strides = qvi_fb_create_vector(b, c->indices_strides, (size_t)c->n_indices_strides, 8, 8);
      pack_buffer(buf1, c->indices_buffer);
      qvi_fb_table_start(b);
      qvi_fb_add_ref(b, COO_INDICES_TYPE, it);
      qvi_fb_add_ref(b, COO_INDICES_STRIDES, strides);
      qvi_fb_add_struct(b, COO_INDICES_BUFFER, buf1, 16, 8);
      qvi_fb_add_bool(b, COO_IS_CANONICAL, c->is_canonical, false);
      return qvi_fb_table_end(b);
    }
    case QV_SPARSE_CSR:
    case QV_SPARSE_CSC: {
      const QvSparseCSX *c = &t->index.csx;
      QvFbRef pt = encode_int(b, c->indptr_type);
      QvFbRef it = encode_int(b, c->indices_type);
      pack_buffer(buf1, c->indptr_buffer);
      pack_buffer(buf2, c->indices_buffer);
      qvi_fb_table_start(b);
      qvi_fb_add_i16(b, CSX_AXIS, t->format == QV_SPARSE_CSC ? 1 : 0, 0); /* Row 0, Column 1 */
      qvi_fb_add_ref(b, CSX_INDPTR_TYPE, pt);
      qvi_fb_add_struct(b, CSX_INDPTR_BUFFER, buf1, 16, 8);
      qvi_fb_add_ref(b, CSX_INDICES_TYPE, it);
      qvi_fb_add_struct(b, CSX_INDICES_BUFFER, buf2, 16, 8);
      return qvi_fb_table_end(b);
    }
    case QV_SPARSE_CSF: {
      const QvSparseCSF *c = &t->index.csf;
      QvFbRef pt = encode_int(b, c->indptr_type);
      QvFbRef it = encode_int(b, c->indices_type);
      QvFbRef indptr = encode_buffer_vector(b, c->n_indptr_buffers, c->indptr_buffers);
      QvFbRef indices = encode_buffer_vector(b, c->n_indices_buffers, c->indices_buffers);
      QvFbRef axis = qvi_fb_create_vector(b, c->axis_order, (size_t)c->n_axis_order, 4, 4);
      qvi_fb_table_start(b);
      qvi_fb_add_ref(b, CSF_INDPTR_TYPE, pt);
      qvi_fb_add_ref(b, CSF_INDPTR_BUFFERS, indptr);
      qvi_fb_add_ref(b, CSF_INDICES_TYPE, it);
      qvi_fb_add_ref(b, CSF_INDICES_BUFFERS, indices);
      qvi_fb_add_ref(b, CSF_AXIS_ORDER, axis);
      return qvi_fb_table_end(b);
    }
    default:
      fail(b, QV_EARG);
      return 0;
  }
}

static QvFbRef encode_sparse_tensor(QvFbBuilder *b, const QvSparseTensorMeta *t) {
  QvFbRef type = encode_type(b, &t->type);
  QvFbRef shape = encode_shape(b, t->ndim, t->shape);
  QvFbRef index = encode_sparse_index(b, t);
  uint8_t data[16];
  pack_buffer(data, t->data);
  qvi_fb_table_start(b);
  qvi_fb_add_u8(b, ST_TYPE_TYPE, (uint8_t)t->type.id, 0);
  qvi_fb_add_ref(b, ST_TYPE, type);
  qvi_fb_add_ref(b, ST_SHAPE, shape);
  qvi_fb_add_i64(b, ST_NNZ, t->non_zero_length, 0);
  /* the SparseTensorIndex union tag: COO 1, CSX 2, CSF 3 */
  uint8_t tag = t->format == QV_SPARSE_COO ? 1 : t->format == QV_SPARSE_CSF ? 3 : 2;
  qvi_fb_add_u8(b, ST_INDEX_TYPE, tag, 0);
  qvi_fb_add_ref(b, ST_INDEX, index);
  qvi_fb_add_struct(b, ST_DATA, data, 16, 8);
  return qvi_fb_table_end(b);
}

static QvStatus finish(QvFbBuilder *b, QvFbRef root, uint8_t **out, size_t *out_size,
                       QvError *error) {
  const uint8_t *data;
  size_t size;
  QvStatus st = qvi_fb_finish(b, root, &data, &size, error);
  if (st == QV_OK) {
    *out = malloc(size);
    if (*out == NULL) {
      st = qv_error_set(error, QV_ENOMEM, "out of memory while encoding metadata");
    } else {
      memcpy(*out, data, size);
      *out_size = size;
    }
  }
  qvi_fb_builder_reset(b);
  return st;
}

QvStatus qv_message_encode(const QvMessage *msg, uint8_t **out, size_t *out_size,
                           QvError *error) {
  *out = NULL;
  *out_size = 0;
  Check check = {error};
  QvStatus st = check_message(&check, msg);
  if (st) return st;
  QvFbBuilder b;
  qvi_fb_builder_init(&b);
  QvFbRef header = 0;
  switch (msg->header_type) {
    case QV_HEADER_SCHEMA:
      header = encode_schema(&b, &msg->header.schema);
      break;
    case QV_HEADER_RECORD_BATCH:
      header = encode_record_batch(&b, &msg->header.record_batch);
      break;
    case QV_HEADER_DICTIONARY_BATCH: {
      const QvDictionaryBatch *db = &msg->header.dictionary_batch;
      QvFbRef data = encode_record_batch(&b, &db->data);
      qvi_fb_table_start(&b);
      qvi_fb_add_i64(&b, DB_ID, db->id, 0);
      qvi_fb_add_ref(&b, DB_DATA, data);
      qvi_fb_add_bool(&b, DB_IS_DELTA, db->is_delta, false);
      header = qvi_fb_table_end(&b);
      break;
    }
    case QV_HEADER_TENSOR:
      header = encode_tensor(&b, &msg->header.tensor);
      break;
    case QV_HEADER_SPARSE_TENSOR:
      header = encode_sparse_tensor(&b, &msg->header.sparse_tensor);
      break;
    default:
      qvi_fb_builder_reset(&b);
      return qv_error_set(error, QV_EARG, "Message.header: cannot encode header type %u",
                          msg->header_type);
  }
  QvFbRef md = encode_metadata(&b, msg->n_metadata, msg->metadata);
  qvi_fb_table_start(&b);
  qvi_fb_add_i16(&b, MESSAGE_VERSION, msg->version, QV_METADATA_V1);
  qvi_fb_add_u8(&b, MESSAGE_HEADER_TYPE, msg->header_type, 0);
  qvi_fb_add_ref(&b, MESSAGE_HEADER, header);
  qvi_fb_add_i64(&b, MESSAGE_BODY_LENGTH, msg->body_length, 0);
  qvi_fb_add_ref(&b, MESSAGE_CUSTOM_METADATA, md);
  QvFbRef root = qvi_fb_table_end(&b);
  return finish(&b, root, out, out_size, error);
}

QvStatus qv_footer_encode(const QvFooter *footer, uint8_t **out, size_t *out_size,
                          QvError *error) {
  *out = NULL;
  *out_size = 0;
  Check check = {error};
  QvStatus st = check_array(&check, "Footer.custom_metadata", footer->n_metadata,
                            footer->metadata);
  if (!st) st = check_array(&check, "Footer.dictionaries", footer->n_dictionaries,
                            footer->dictionaries);
  if (!st) st = check_array(&check, "Footer.recordBatches", footer->n_record_batches,
                            footer->record_batches);
  if (!st && footer->has_schema) st = check_schema(&check, "Footer.schema", &footer->schema);
  if (st) return st;
  QvFbBuilder b;
  qvi_fb_builder_init(&b);
  QvFbRef schema = footer->has_schema ? encode_schema(&b, &footer->schema) : 0;
  QvFbRef blocks[2] = {0, 0};
  const QvBlock *lists[2] = {footer->dictionaries, footer->record_batches};
  int64_t counts[2] = {footer->n_dictionaries, footer->n_record_batches};
  for (int k = 0; k < 2; k++) {
    uint8_t *raw = calloc((size_t)counts[k] + 1, 24);
    if (raw == NULL) {
      qvi_fb_builder_reset(&b);
      return qv_error_set(error, QV_ENOMEM, "out of memory while encoding footer");
    }
    for (int64_t i = 0; i < counts[k]; i++) {
      qvi_st_le_u64(raw + 24 * i, (uint64_t)lists[k][i].offset);
      qvi_st_le_u32(raw + 24 * i + 8, (uint32_t)lists[k][i].meta_data_length);
      qvi_st_le_u64(raw + 24 * i + 16, (uint64_t)lists[k][i].body_length);
    }
    blocks[k] = qvi_fb_create_struct_vector(&b, raw, (size_t)counts[k], 24, 8);
    free(raw);
  }
  QvFbRef md = encode_metadata(&b, footer->n_metadata, footer->metadata);
  qvi_fb_table_start(&b);
  qvi_fb_add_i16(&b, FOOTER_VERSION, footer->version, QV_METADATA_V1);
  qvi_fb_add_ref(&b, FOOTER_SCHEMA, schema);
  qvi_fb_add_ref(&b, FOOTER_DICTIONARIES, blocks[0]);
  qvi_fb_add_ref(&b, FOOTER_RECORD_BATCHES, blocks[1]);
  qvi_fb_add_ref(&b, FOOTER_CUSTOM_METADATA, md);
  QvFbRef root = qvi_fb_table_end(&b);
  return finish(&b, root, out, out_size, error);
}
