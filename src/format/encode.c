/* Message / Footer encoding with the FlatBuffers builder. Children are built
 * before their parents (the builder writes back to front). Scalars equal to
 * their schema default are omitted, as flatc-generated builders do. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flatbuf/flatbuf.h"
#include "format/descriptors.h"
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
      switch (t->index_kind) {
        case QV_SPARSE_INDEX_COO:
          return check_array(c, "SparseTensorIndexCOO.indicesStrides",
                             t->index.coo.n_indices_strides, t->index.coo.indices_strides);
        case QV_SPARSE_INDEX_CSX:
          return QV_OK;
        case QV_SPARSE_INDEX_CSF: {
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
          snprintf(msg2, sizeof msg2, "sparse index kind %u is not a SparseTensorIndex member",
                   t->index_kind);
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

/* Records a failure in the builder (the first one wins); qv_fb_finish then
 * reports it. Argument errors are normally caught by check_message first. */
static void fail(QvFbBuilder *b, QvStatus status) {
  if (!b->failed) b->fail_status = status;
  b->failed = true;
}

static QvFbRef string_ref(QvFbBuilder *b, const char *s, size_t len) {
  return s ? qv_fb_create_string(b, s, len) : 0;
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
    qv_fb_table_start(b);
    qv_fb_add_ref(b, KV_KEY, k);
    qv_fb_add_ref(b, KV_VALUE, v);
    refs[i] = qv_fb_table_end(b);
  }
  QvFbRef r = qv_fb_create_vector_refs(b, refs, (size_t)n);
  free(refs);
  return r;
}

static QvFbRef encode_int(QvFbBuilder *b, QvIntType t) {
  qv_fb_table_start(b);
  qv_fb_add_i32(b, 0, t.bit_width, 0);
  qv_fb_add_bool(b, 1, t.is_signed, false);
  return qv_fb_table_end(b);
}

static QvFbRef encode_type(QvFbBuilder *b, const QvType *t) {
  QvFbRef sub = 0;
  if (t->id == QV_TYPE_INT) return encode_int(b, t->u.int_);
  if (t->id == QV_TYPE_TIMESTAMP)
    sub = string_ref(b, t->u.timestamp.timezone, t->u.timestamp.timezone_len);
  if (t->id == QV_TYPE_UNION && t->u.union_.has_type_ids)
    sub = qv_fb_create_vector(b, t->u.union_.type_ids, (size_t)t->u.union_.n_type_ids, 4, 4);
  qv_fb_table_start(b);
  switch (t->id) {
    case QV_TYPE_FLOATING_POINT:
      qv_fb_add_i16(b, 0, t->u.floating_point.precision, 0);
      break;
    case QV_TYPE_DECIMAL:
      qv_fb_add_i32(b, 0, t->u.decimal.precision, 0);
      qv_fb_add_i32(b, 1, t->u.decimal.scale, 0);
      qv_fb_add_i32(b, 2, t->u.decimal.bit_width, 128);
      break;
    case QV_TYPE_DATE:
      qv_fb_add_i16(b, 0, t->u.date.unit, QV_DATE_MILLISECOND);
      break;
    case QV_TYPE_TIME:
      qv_fb_add_i16(b, 0, t->u.time.unit, QV_TIME_MILLISECOND);
      qv_fb_add_i32(b, 1, t->u.time.bit_width, 32);
      break;
    case QV_TYPE_TIMESTAMP:
      qv_fb_add_i16(b, 0, t->u.timestamp.unit, QV_TIME_SECOND);
      qv_fb_add_ref(b, 1, sub);
      break;
    case QV_TYPE_INTERVAL:
      qv_fb_add_i16(b, 0, t->u.interval.unit, 0);
      break;
    case QV_TYPE_DURATION:
      qv_fb_add_i16(b, 0, t->u.duration.unit, QV_TIME_MILLISECOND);
      break;
    case QV_TYPE_FIXED_SIZE_BINARY:
      qv_fb_add_i32(b, 0, t->u.fixed_size_binary.byte_width, 0);
      break;
    case QV_TYPE_FIXED_SIZE_LIST:
      qv_fb_add_i32(b, 0, t->u.fixed_size_list.list_size, 0);
      break;
    case QV_TYPE_MAP:
      qv_fb_add_bool(b, 0, t->u.map.keys_sorted, false);
      break;
    case QV_TYPE_UNION:
      qv_fb_add_i16(b, 0, t->u.union_.mode, QV_UNION_SPARSE);
      qv_fb_add_ref(b, 1, sub);
      break;
    default:
      break;
  }
  return qv_fb_table_end(b);
}

static QvFbRef encode_fields(QvFbBuilder *b, int64_t n, const QvField *fields);

static QvFbRef encode_field(QvFbBuilder *b, const QvField *f) {
  QvFbRef name = string_ref(b, f->name, f->name_len);
  QvFbRef type = encode_type(b, &f->type);
  QvFbRef dict = 0;
  if (f->dictionary) {
    QvFbRef it = f->dictionary->has_index_type ? encode_int(b, f->dictionary->index_type) : 0;
    qv_fb_table_start(b);
    qv_fb_add_i64(b, DICT_ID, f->dictionary->id, 0);
    qv_fb_add_ref(b, DICT_INDEX_TYPE, it);
    qv_fb_add_bool(b, DICT_IS_ORDERED, f->dictionary->is_ordered, false);
    qv_fb_add_i16(b, DICT_KIND, f->dictionary->kind, 0);
    dict = qv_fb_table_end(b);
  }
  /* Arrow writers always emit the children vector, even when empty. */
  QvFbRef children = encode_fields(b, f->n_children, f->children);
  QvFbRef md = encode_metadata(b, f->n_metadata, f->metadata);
  qv_fb_table_start(b);
  qv_fb_add_ref(b, FIELD_NAME, name);
  qv_fb_add_bool(b, FIELD_NULLABLE, f->nullable, false);
  qv_fb_add_u8(b, FIELD_TYPE_TYPE, (uint8_t)f->type.id, 0);
  qv_fb_add_ref(b, FIELD_TYPE, type);
  qv_fb_add_ref(b, FIELD_DICTIONARY, dict);
  qv_fb_add_ref(b, FIELD_CHILDREN, children);
  qv_fb_add_ref(b, FIELD_CUSTOM_METADATA, md);
  return qv_fb_table_end(b);
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
  QvFbRef r = qv_fb_create_vector_refs(b, refs, (size_t)n);
  free(refs);
  return r;
}

static QvFbRef encode_schema(QvFbBuilder *b, const QvSchema *s) {
  QvFbRef fields = encode_fields(b, s->n_fields, s->fields);
  QvFbRef md = encode_metadata(b, s->n_metadata, s->metadata);
  QvFbRef features =
      s->n_features > 0 ? qv_fb_create_vector(b, s->features, (size_t)s->n_features, 8, 8) : 0;
  qv_fb_table_start(b);
  qv_fb_add_i16(b, SCHEMA_ENDIANNESS, s->endianness, QV_ENDIAN_LITTLE);
  qv_fb_add_ref(b, SCHEMA_FIELDS, fields);
  qv_fb_add_ref(b, SCHEMA_CUSTOM_METADATA, md);
  qv_fb_add_ref(b, SCHEMA_FEATURES, features);
  return qv_fb_table_end(b);
}

/* Structs are written field by field, little-endian, so host padding never
 * leaks and a big-endian host writes the same bytes. */
static void pack_buffer(uint8_t *out, QvBuffer buf) {
  qv_st_le_u64(out, (uint64_t)buf.offset);
  qv_st_le_u64(out + 8, (uint64_t)buf.length);
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
  QvFbRef r = qv_fb_create_struct_vector(b, raw, (size_t)n, 16, 8);
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
    qv_st_le_u64(raw + 16 * i, (uint64_t)rb->nodes[i].length);
    qv_st_le_u64(raw + 16 * i + 8, (uint64_t)rb->nodes[i].null_count);
  }
  nodes = qv_fb_create_struct_vector(b, raw, (size_t)rb->n_nodes, 16, 8);
  free(raw);
  QvFbRef buffers = encode_buffer_vector(b, rb->n_buffers, rb->buffers);
  QvFbRef comp = 0;
  if (rb->compression != QV_COMPRESSION_NONE) {
    /* CompressionType: LZ4_FRAME = 0, ZSTD = 1 */
    int8_t codec = rb->compression == QV_COMPRESSION_ZSTD ? 1 : 0;
    qv_fb_table_start(b);
    qv_fb_add_scalar(b, COMP_CODEC, &codec, 1); /* explicit, as Arrow C++ writes it */
    qv_fb_add_u8(b, COMP_METHOD, (uint8_t)rb->method, 0);
    comp = qv_fb_table_end(b);
  }
  QvFbRef variadic = 0;
  if (rb->has_variadic_buffer_counts || rb->n_variadic_buffer_counts > 0)
    variadic = qv_fb_create_vector(b, rb->variadic_buffer_counts,
                                   (size_t)rb->n_variadic_buffer_counts, 8, 8);
  qv_fb_table_start(b);
  qv_fb_add_i64(b, RB_LENGTH, rb->length, 0);
  qv_fb_add_ref(b, RB_NODES, nodes);
  qv_fb_add_ref(b, RB_BUFFERS, buffers);
  qv_fb_add_ref(b, RB_COMPRESSION, comp);
  qv_fb_add_ref(b, RB_VARIADIC, variadic);
  return qv_fb_table_end(b);
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
    qv_fb_table_start(b);
    qv_fb_add_i64(b, DIM_SIZE, shape[i].size, 0);
    qv_fb_add_ref(b, DIM_NAME, name);
    refs[i] = qv_fb_table_end(b);
  }
  QvFbRef r = qv_fb_create_vector_refs(b, refs, (size_t)ndim);
  free(refs);
  return r;
}

static QvFbRef encode_tensor(QvFbBuilder *b, const QvTensorMeta *t) {
  QvFbRef type = encode_type(b, &t->type);
  QvFbRef shape = encode_shape(b, t->ndim, t->shape);
  QvFbRef strides = 0;
  if (t->has_strides || t->n_strides > 0)
    strides = qv_fb_create_vector(b, t->strides, (size_t)t->n_strides, 8, 8);
  uint8_t data[16];
  pack_buffer(data, t->data);
  qv_fb_table_start(b);
  qv_fb_add_u8(b, TENSOR_TYPE_TYPE, (uint8_t)t->type.id, 0);
  qv_fb_add_ref(b, TENSOR_TYPE, type);
  qv_fb_add_ref(b, TENSOR_SHAPE, shape);
  qv_fb_add_ref(b, TENSOR_STRIDES, strides);
  qv_fb_add_struct(b, TENSOR_DATA, data, 16, 8);
  return qv_fb_table_end(b);
}

static QvFbRef encode_sparse_index(QvFbBuilder *b, const QvSparseTensorMeta *t) {
  uint8_t buf1[16], buf2[16];
  switch (t->index_kind) {
    case QV_SPARSE_INDEX_COO: {
      const QvSparseCOO *c = &t->index.coo;
      QvFbRef it = encode_int(b, c->indices_type);
      QvFbRef strides = 0;
      if (c->has_indices_strides || c->n_indices_strides > 0)
        strides = qv_fb_create_vector(b, c->indices_strides, (size_t)c->n_indices_strides, 8, 8);
      pack_buffer(buf1, c->indices_buffer);
      qv_fb_table_start(b);
      qv_fb_add_ref(b, COO_INDICES_TYPE, it);
      qv_fb_add_ref(b, COO_INDICES_STRIDES, strides);
      qv_fb_add_struct(b, COO_INDICES_BUFFER, buf1, 16, 8);
      qv_fb_add_bool(b, COO_IS_CANONICAL, c->is_canonical, false);
      return qv_fb_table_end(b);
    }
    case QV_SPARSE_INDEX_CSX: {
      const QvSparseCSX *c = &t->index.csx;
      QvFbRef pt = encode_int(b, c->indptr_type);
      QvFbRef it = encode_int(b, c->indices_type);
      pack_buffer(buf1, c->indptr_buffer);
      pack_buffer(buf2, c->indices_buffer);
      qv_fb_table_start(b);
      qv_fb_add_i16(b, CSX_AXIS, c->compressed_axis, QV_CSX_ROW);
      qv_fb_add_ref(b, CSX_INDPTR_TYPE, pt);
      qv_fb_add_struct(b, CSX_INDPTR_BUFFER, buf1, 16, 8);
      qv_fb_add_ref(b, CSX_INDICES_TYPE, it);
      qv_fb_add_struct(b, CSX_INDICES_BUFFER, buf2, 16, 8);
      return qv_fb_table_end(b);
    }
    case QV_SPARSE_INDEX_CSF: {
      const QvSparseCSF *c = &t->index.csf;
      QvFbRef pt = encode_int(b, c->indptr_type);
      QvFbRef it = encode_int(b, c->indices_type);
      QvFbRef indptr = encode_buffer_vector(b, c->n_indptr_buffers, c->indptr_buffers);
      QvFbRef indices = encode_buffer_vector(b, c->n_indices_buffers, c->indices_buffers);
      QvFbRef axis = qv_fb_create_vector(b, c->axis_order, (size_t)c->n_axis_order, 4, 4);
      qv_fb_table_start(b);
      qv_fb_add_ref(b, CSF_INDPTR_TYPE, pt);
      qv_fb_add_ref(b, CSF_INDPTR_BUFFERS, indptr);
      qv_fb_add_ref(b, CSF_INDICES_TYPE, it);
      qv_fb_add_ref(b, CSF_INDICES_BUFFERS, indices);
      qv_fb_add_ref(b, CSF_AXIS_ORDER, axis);
      return qv_fb_table_end(b);
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
  qv_fb_table_start(b);
  qv_fb_add_u8(b, ST_TYPE_TYPE, (uint8_t)t->type.id, 0);
  qv_fb_add_ref(b, ST_TYPE, type);
  qv_fb_add_ref(b, ST_SHAPE, shape);
  qv_fb_add_i64(b, ST_NNZ, t->non_zero_length, 0);
  qv_fb_add_u8(b, ST_INDEX_TYPE, t->index_kind, 0);
  qv_fb_add_ref(b, ST_INDEX, index);
  qv_fb_add_struct(b, ST_DATA, data, 16, 8);
  return qv_fb_table_end(b);
}

static QvStatus finish(QvFbBuilder *b, QvFbRef root, uint8_t **out, size_t *out_size,
                       QvError *error) {
  const uint8_t *data;
  size_t size;
  QvStatus st = qv_fb_finish(b, root, &data, &size, error);
  if (st == QV_OK) {
    *out = malloc(size);
    if (*out == NULL) {
      st = qv_error_set(error, QV_ENOMEM, "out of memory while encoding metadata");
    } else {
      memcpy(*out, data, size);
      *out_size = size;
    }
  }
  qv_fb_builder_reset(b);
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
  qv_fb_builder_init(&b);
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
      qv_fb_table_start(&b);
      qv_fb_add_i64(&b, DB_ID, db->id, 0);
      qv_fb_add_ref(&b, DB_DATA, data);
      qv_fb_add_bool(&b, DB_IS_DELTA, db->is_delta, false);
      header = qv_fb_table_end(&b);
      break;
    }
    case QV_HEADER_TENSOR:
      header = encode_tensor(&b, &msg->header.tensor);
      break;
    case QV_HEADER_SPARSE_TENSOR:
      header = encode_sparse_tensor(&b, &msg->header.sparse_tensor);
      break;
    default:
      qv_fb_builder_reset(&b);
      return qv_error_set(error, QV_EARG, "Message.header: cannot encode header type %u",
                          msg->header_type);
  }
  QvFbRef md = encode_metadata(&b, msg->n_metadata, msg->metadata);
  qv_fb_table_start(&b);
  qv_fb_add_i16(&b, MESSAGE_VERSION, msg->version, QV_METADATA_V1);
  qv_fb_add_u8(&b, MESSAGE_HEADER_TYPE, msg->header_type, 0);
  qv_fb_add_ref(&b, MESSAGE_HEADER, header);
  qv_fb_add_i64(&b, MESSAGE_BODY_LENGTH, msg->body_length, 0);
  qv_fb_add_ref(&b, MESSAGE_CUSTOM_METADATA, md);
  QvFbRef root = qv_fb_table_end(&b);
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
  qv_fb_builder_init(&b);
  QvFbRef schema = footer->has_schema ? encode_schema(&b, &footer->schema) : 0;
  QvFbRef blocks[2] = {0, 0};
  const QvBlock *lists[2] = {footer->dictionaries, footer->record_batches};
  int64_t counts[2] = {footer->n_dictionaries, footer->n_record_batches};
  for (int k = 0; k < 2; k++) {
    uint8_t *raw = calloc((size_t)counts[k] + 1, 24);
    if (raw == NULL) {
      qv_fb_builder_reset(&b);
      return qv_error_set(error, QV_ENOMEM, "out of memory while encoding footer");
    }
    for (int64_t i = 0; i < counts[k]; i++) {
      qv_st_le_u64(raw + 24 * i, (uint64_t)lists[k][i].offset);
      qv_st_le_u32(raw + 24 * i + 8, (uint32_t)lists[k][i].meta_data_length);
      qv_st_le_u64(raw + 24 * i + 16, (uint64_t)lists[k][i].body_length);
    }
    blocks[k] = qv_fb_create_struct_vector(&b, raw, (size_t)counts[k], 24, 8);
    free(raw);
  }
  QvFbRef md = encode_metadata(&b, footer->n_metadata, footer->metadata);
  qv_fb_table_start(&b);
  qv_fb_add_i16(&b, FOOTER_VERSION, footer->version, QV_METADATA_V1);
  qv_fb_add_ref(&b, FOOTER_SCHEMA, schema);
  qv_fb_add_ref(&b, FOOTER_DICTIONARIES, blocks[0]);
  qv_fb_add_ref(&b, FOOTER_RECORD_BATCHES, blocks[1]);
  qv_fb_add_ref(&b, FOOTER_CUSTOM_METADATA, md);
  QvFbRef root = qv_fb_table_end(&b);
  return finish(&b, root, out, out_size, error);
}
