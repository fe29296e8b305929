/* Deep equality of decoded metadata. Values are compared, never pointers;
 * an absent string differs from an empty one, and the has_* flags count,
 * because the encoder writes them differently. Members that the struct marks
 * as unused (the index type of a dictionary without one, method
 * without compression, the parameters of another union member) are ignored. */
#include <stdio.h>
#include <string.h>

#include "quiver/format.h"
#include "util/load.h"
#include "util/errpath.h"

typedef struct Cmp {
  QvErrPath path;
  char *where;
  size_t where_size;
} Cmp;

/* Records the first difference at path + "." + name. */
static bool differ(Cmp *c, const char *name) {
  if (c->where && c->where_size) {
    snprintf(c->where, c->where_size, "%s%s%s", c->path.text, c->path.len && name[0] ? "." : "", name);
  }
  return false;
}

/* Records the first difference at element i of the array `name`. */
static bool differ_at(Cmp *c, const char *name, int64_t i) {
  size_t old = qvi_errpath_push(&c->path, "%s%s[%lld]", c->path.len ? "." : "", name, (long long)i);
  differ(c, "");
  qvi_errpath_pop(&c->path, old);
  return false;
}

#define SAME(c, a, b, name) \
  do {                      \
    if ((a) != (b)) return differ((c), (name)); \
  } while (0)

static bool same_string(Cmp *c, const char *a, size_t alen, const char *b, size_t blen,
                        const char *name) {
  if ((a == NULL) != (b == NULL)) return differ(c, name);
  if (a == NULL) return true;
  if (alen != blen || (alen && memcmp(a, b, alen) != 0)) return differ(c, name);
  return true;
}

/* Element-wise equality of two counted integer arrays, one body for both widths. */
#define SAME_INTS(fn, T)                                                                   \
  static bool fn(Cmp *c, int64_t na, const T *a, int64_t nb, const T *b, const char *name) { \
    SAME(c, na, nb, name);                                                                 \
    for (int64_t i = 0; i < na; i++)                                                       \
      if (a[i] != b[i]) return differ_at(c, name, i);                                      \
    return true;                                                                           \
  }
SAME_INTS(same_i64s, int64_t)
SAME_INTS(same_i32s, int32_t)

static bool same_buffers(Cmp *c, int64_t na, const QvBuffer *a, int64_t nb, const QvBuffer *b,
                         const char *name) {
  SAME(c, na, nb, name);
  for (int64_t i = 0; i < na; i++) {
    if (a[i].offset != b[i].offset || a[i].length != b[i].length) return differ_at(c, name, i);
  }
  return true;
}

static bool same_buffer(Cmp *c, QvBuffer a, QvBuffer b, const char *name) {
  if (a.offset != b.offset || a.length != b.length) return differ(c, name);
  return true;
}

static bool same_metadata(Cmp *c, int64_t na, const QvKeyValue *a, int64_t nb,
                          const QvKeyValue *b) {
  SAME(c, na, nb, "custom_metadata");
  for (int64_t i = 0; i < na; i++) {
    size_t old = qvi_errpath_push(&c->path, "%scustom_metadata[%lld]", c->path.len ? "." : "", (long long)i);
    bool ok = same_string(c, a[i].key, a[i].key_len, b[i].key, b[i].key_len, "key") &&
              same_string(c, a[i].value, a[i].value_len, b[i].value, b[i].value_len, "value");
    qvi_errpath_pop(&c->path, old);
    if (!ok) return false;
  }
  return true;
}

static bool same_int(Cmp *c, QvIntType a, QvIntType b, const char *name) {
  if (a.bit_width != b.bit_width || a.is_signed != b.is_signed) return differ(c, name);
  return true;
}

static bool same_type(Cmp *c, const QvType *a, const QvType *b) {
  SAME(c, a->id, b->id, "id");
  switch (a->id) {
    case QV_TYPE_INT:
      return same_int(c, a->u.int_, b->u.int_, "int");
    case QV_TYPE_FLOATING_POINT:
      SAME(c, a->u.floating_point.precision, b->u.floating_point.precision, "precision");
      return true;
    case QV_TYPE_DECIMAL:
      SAME(c, a->u.decimal.precision, b->u.decimal.precision, "precision");
      SAME(c, a->u.decimal.scale, b->u.decimal.scale, "scale");
      SAME(c, a->u.decimal.bit_width, b->u.decimal.bit_width, "bitWidth");
      return true;
    case QV_TYPE_DATE:
      SAME(c, a->u.date.unit, b->u.date.unit, "unit");
      return true;
    case QV_TYPE_TIME:
      SAME(c, a->u.time.unit, b->u.time.unit, "unit");
      SAME(c, a->u.time.bit_width, b->u.time.bit_width, "bitWidth");
      return true;
    case QV_TYPE_TIMESTAMP:
      SAME(c, a->u.timestamp.unit, b->u.timestamp.unit, "unit");
      return same_string(c, a->u.timestamp.timezone, a->u.timestamp.timezone_len,
                         b->u.timestamp.timezone, b->u.timestamp.timezone_len, "timezone");
    case QV_TYPE_INTERVAL:
      SAME(c, a->u.interval.unit, b->u.interval.unit, "unit");
      return true;
    case QV_TYPE_DURATION:
      SAME(c, a->u.duration.unit, b->u.duration.unit, "unit");
      return true;
    case QV_TYPE_FIXED_SIZE_BINARY:
      SAME(c, a->u.fixed_size_binary.byte_width, b->u.fixed_size_binary.byte_width, "byteWidth");
      return true;
    case QV_TYPE_FIXED_SIZE_LIST:
      SAME(c, a->u.fixed_size_list.list_size, b->u.fixed_size_list.list_size, "listSize");
      return true;
    case QV_TYPE_MAP:
      SAME(c, a->u.map.keys_sorted, b->u.map.keys_sorted, "keysSorted");
      return true;
    case QV_TYPE_UNION:
      SAME(c, a->u.union_.mode, b->u.union_.mode, "mode");
      SAME(c, a->u.union_.has_type_ids, b->u.union_.has_type_ids, "typeIds");
      return same_i32s(c, a->u.union_.n_type_ids, a->u.union_.type_ids, b->u.union_.n_type_ids,
                       b->u.union_.type_ids, "typeIds");
    default:
      return true;
  }
}

static bool same_type_at(Cmp *c, const QvType *a, const QvType *b, const char *name) {
  size_t old = qvi_errpath_push(&c->path, "%s%s", c->path.len ? "." : "", name);
  bool ok = same_type(c, a, b);
  qvi_errpath_pop(&c->path, old);
  return ok;
}

static bool same_fields(Cmp *c, int64_t na, const QvField *a, int64_t nb, const QvField *b,
                        const char *name);

static bool same_field(Cmp *c, const QvField *a, const QvField *b) {
  if (!same_string(c, a->name, a->name_len, b->name, b->name_len, "name")) return false;
  SAME(c, a->nullable, b->nullable, "nullable");
  if (!same_type_at(c, &a->type, &b->type, "type")) return false;
  if ((a->dictionary == NULL) != (b->dictionary == NULL)) return differ(c, "dictionary");
  if (a->dictionary) {
    const QvDictionaryEncoding *x = a->dictionary, *y = b->dictionary;
    size_t old = qvi_errpath_push(&c->path, ".dictionary");
    bool ok = true;
    if (x->id != y->id) ok = differ(c, "id");
    else if (x->has_index_type != y->has_index_type) ok = differ(c, "indexType");
    else if (x->has_index_type && !same_int(c, x->index_type, y->index_type, "indexType"))
      ok = false;
    else if (x->is_ordered != y->is_ordered) ok = differ(c, "isOrdered");
    else if (x->kind != y->kind) ok = differ(c, "dictionaryKind");
    qvi_errpath_pop(&c->path, old);
    if (!ok) return false;
  }
  if (!same_fields(c, a->n_children, a->children, b->n_children, b->children, "children"))
    return false;
  return same_metadata(c, a->n_metadata, a->metadata, b->n_metadata, b->metadata);
}

static bool same_fields(Cmp *c, int64_t na, const QvField *a, int64_t nb, const QvField *b,
                        const char *name) {
  SAME(c, na, nb, name);
  for (int64_t i = 0; i < na; i++) {
    size_t old = qvi_errpath_push(&c->path, "%s%s[%lld]", c->path.len ? "." : "", name, (long long)i);
    bool ok = same_field(c, &a[i], &b[i]);
    qvi_errpath_pop(&c->path, old);
    if (!ok) return false;
  }
  return true;
}

/* A hand-built schema's NATIVE is the host's order, which is what the
 * encoder writes for it and the decoder then says. */
static QvEndianness byte_order(QvEndianness e) {
  if (e != QV_ENDIAN_NATIVE) return e;
  return QV_HOST_BIG_ENDIAN ? QV_ENDIAN_BIG : QV_ENDIAN_LITTLE;
}

static bool same_schema(Cmp *c, const QvSchema *a, const QvSchema *b) {
  SAME(c, byte_order(a->endianness), byte_order(b->endianness), "endianness");
  if (!same_fields(c, a->n_fields, a->fields, b->n_fields, b->fields, "fields")) return false;
  if (!same_metadata(c, a->n_metadata, a->metadata, b->n_metadata, b->metadata)) return false;
  return same_i64s(c, a->n_features, a->features, b->n_features, b->features, "features");
}

static bool same_record_batch(Cmp *c, const QvRecordBatch *a, const QvRecordBatch *b) {
  SAME(c, a->length, b->length, "length");
  SAME(c, a->n_nodes, b->n_nodes, "nodes");
  for (int64_t i = 0; i < a->n_nodes; i++) {
    if (a->nodes[i].length != b->nodes[i].length ||
        a->nodes[i].null_count != b->nodes[i].null_count) {
      size_t old = qvi_errpath_push(&c->path, "%snodes[%lld]", c->path.len ? "." : "", (long long)i);
      differ(c, "");
      qvi_errpath_pop(&c->path, old);
      return false;
    }
  }
  if (!same_buffers(c, a->n_buffers, a->buffers, b->n_buffers, b->buffers, "buffers"))
    return false;
  SAME(c, a->compression != QV_COMPRESSION_NONE, b->compression != QV_COMPRESSION_NONE,
       "compression");
  if (a->compression != QV_COMPRESSION_NONE) {
    SAME(c, a->compression, b->compression, "compression.codec");
    SAME(c, a->method, b->method, "compression.method");
  }
  SAME(c, a->has_variadic_buffer_counts, b->has_variadic_buffer_counts, "variadicBufferCounts");
  return same_i64s(c, a->n_variadic_buffer_counts, a->variadic_buffer_counts,
                   b->n_variadic_buffer_counts, b->variadic_buffer_counts,
                   "variadicBufferCounts");
}

static bool same_shape(Cmp *c, int64_t na, const QvTensorDim *a, int64_t nb,
                       const QvTensorDim *b) {
  SAME(c, na, nb, "shape");
  for (int64_t i = 0; i < na; i++) {
    size_t old = qvi_errpath_push(&c->path, "%sshape[%lld]", c->path.len ? "." : "", (long long)i);
    bool ok = a[i].size == b[i].size ? true : differ(c, "size");
    ok = ok && same_string(c, a[i].name, a[i].name_len, b[i].name, b[i].name_len, "name");
    qvi_errpath_pop(&c->path, old);
    if (!ok) return false;
  }
  return true;
}

static bool same_tensor(Cmp *c, const QvTensorMeta *a, const QvTensorMeta *b) {
  if (!same_type_at(c, &a->type, &b->type, "type")) return false;
  if (!same_shape(c, a->ndim, a->shape, b->ndim, b->shape)) return false;
  SAME(c, a->has_strides, b->has_strides, "strides");
  if (!same_i64s(c, a->n_strides, a->strides, b->n_strides, b->strides, "strides")) return false;
  return same_buffer(c, a->data, b->data, "data");
}

static bool same_sparse_index(Cmp *c, const QvSparseTensorMeta *a, const QvSparseTensorMeta *b) {
  switch (a->format) {
    case QV_SPARSE_COO: {
      const QvSparseCOO *x = &a->index.coo, *y = &b->index.coo;
      if (!same_int(c, x->indices_type, y->indices_type, "indicesType")) return false;
      SAME(c, x->has_indices_strides, y->has_indices_strides, "indicesStrides");
      if (!same_i64s(c, x->n_indices_strides, x->indices_strides, y->n_indices_strides,
                     y->indices_strides, "indicesStrides"))
        return false;
      if (!same_buffer(c, x->indices_buffer, y->indices_buffer, "indicesBuffer")) return false;
      SAME(c, x->is_canonical, y->is_canonical, "isCanonical");
      return true;
    }
    case QV_SPARSE_CSR:
    case QV_SPARSE_CSC: {
      const QvSparseCSX *x = &a->index.csx, *y = &b->index.csx;
      return same_int(c, x->indptr_type, y->indptr_type, "indptrType") &&
             same_buffer(c, x->indptr_buffer, y->indptr_buffer, "indptrBuffer") &&
             same_int(c, x->indices_type, y->indices_type, "indicesType") &&
             same_buffer(c, x->indices_buffer, y->indices_buffer, "indicesBuffer");
    }
    case QV_SPARSE_CSF: {
      const QvSparseCSF *x = &a->index.csf, *y = &b->index.csf;
      return same_int(c, x->indptr_type, y->indptr_type, "indptrType") &&
             same_buffers(c, x->n_indptr_buffers, x->indptr_buffers, y->n_indptr_buffers,
                          y->indptr_buffers, "indptrBuffers") &&
             same_int(c, x->indices_type, y->indices_type, "indicesType") &&
             same_buffers(c, x->n_indices_buffers, x->indices_buffers, y->n_indices_buffers,
                          y->indices_buffers, "indicesBuffers") &&
             same_i32s(c, x->n_axis_order, x->axis_order, y->n_axis_order, y->axis_order,
                       "axisOrder");
    }
    default:
      return true;
  }
}

static bool same_sparse_tensor(Cmp *c, const QvSparseTensorMeta *a,
                               const QvSparseTensorMeta *b) {
  if (!same_type_at(c, &a->type, &b->type, "type")) return false;
  if (!same_shape(c, a->ndim, a->shape, b->ndim, b->shape)) return false;
  SAME(c, a->non_zero_length, b->non_zero_length, "non_zero_length");
  SAME(c, a->format, b->format, "format");
  size_t old = qvi_errpath_push(&c->path, ".sparseIndex");
  bool ok = same_sparse_index(c, a, b);
  qvi_errpath_pop(&c->path, old);
  return ok && same_buffer(c, a->data, b->data, "data");
}

static bool same_header(Cmp *c, const QvMessage *a, const QvMessage *b) {
  switch (a->header_type) {
    case QV_HEADER_SCHEMA:
      return same_schema(c, &a->header.schema, &b->header.schema);
    case QV_HEADER_RECORD_BATCH:
      return same_record_batch(c, &a->header.record_batch, &b->header.record_batch);
    case QV_HEADER_DICTIONARY_BATCH: {
      const QvDictionaryBatch *x = &a->header.dictionary_batch, *y = &b->header.dictionary_batch;
      SAME(c, x->id, y->id, "id");
      SAME(c, x->is_delta, y->is_delta, "isDelta");
      size_t old = qvi_errpath_push(&c->path, ".data");
      bool ok = same_record_batch(c, &x->data, &y->data);
      qvi_errpath_pop(&c->path, old);
      return ok;
    }
    case QV_HEADER_TENSOR:
      return same_tensor(c, &a->header.tensor, &b->header.tensor);
    case QV_HEADER_SPARSE_TENSOR:
      return same_sparse_tensor(c, &a->header.sparse_tensor, &b->header.sparse_tensor);
    default:
      return true;
  }
}

static void cmp_init(Cmp *c, const char *root, char *where, size_t where_size) {
  qvi_errpath_clear(&c->path);
  c->where = where;
  c->where_size = where_size;
  if (where && where_size) where[0] = '\0';
  qvi_errpath_push(&c->path, "%s", root);
}

bool qv_type_equal(const QvType *a, const QvType *b) {
  Cmp c;
  cmp_init(&c, "", NULL, 0);
  return same_type(&c, a, b);
}

bool qv_schema_equal(const QvSchema *a, const QvSchema *b, char *where, size_t where_size) {
  Cmp c;
  cmp_init(&c, "Schema", where, where_size);
  return same_schema(&c, a, b);
}

bool qv_message_equal(const QvMessage *a, const QvMessage *b, char *where, size_t where_size) {
  Cmp c;
  cmp_init(&c, "Message", where, where_size);
  SAME(&c, a->version, b->version, "version");
  SAME(&c, a->header_type, b->header_type, "header_type");
  SAME(&c, a->body_length, b->body_length, "bodyLength");
  if (!same_metadata(&c, a->n_metadata, a->metadata, b->n_metadata, b->metadata)) return false;
  size_t old = qvi_errpath_push(&c.path, ".header(%s)", qv_header_type_name(a->header_type));
  bool ok = same_header(&c, a, b);
  qvi_errpath_pop(&c.path, old);
  return ok;
}

static bool same_blocks(Cmp *c, int64_t na, const QvBlock *a, int64_t nb, const QvBlock *b,
                        const char *name) {
  SAME(c, na, nb, name);
  for (int64_t i = 0; i < na; i++) {
    if (a[i].offset != b[i].offset || a[i].meta_data_length != b[i].meta_data_length ||
        a[i].body_length != b[i].body_length) {
      size_t old = qvi_errpath_push(&c->path, ".%s[%lld]", name, (long long)i);
      differ(c, "");
      qvi_errpath_pop(&c->path, old);
      return false;
    }
  }
  return true;
}

bool qv_footer_equal(const QvFooter *a, const QvFooter *b, char *where, size_t where_size) {
  Cmp c;
  cmp_init(&c, "Footer", where, where_size);
  SAME(&c, a->version, b->version, "version");
  SAME(&c, a->has_schema, b->has_schema, "schema");
  if (a->has_schema) {
    size_t old = qvi_errpath_push(&c.path, ".schema");
    bool ok = same_schema(&c, &a->schema, &b->schema);
    qvi_errpath_pop(&c.path, old);
    if (!ok) return false;
  }
  if (!same_blocks(&c, a->n_dictionaries, a->dictionaries, b->n_dictionaries, b->dictionaries,
                   "dictionaries"))
    return false;
  if (!same_blocks(&c, a->n_record_batches, a->record_batches, b->n_record_batches,
                   b->record_batches, "recordBatches"))
    return false;
  return same_metadata(&c, a->n_metadata, a->metadata, b->n_metadata, b->metadata);
}
