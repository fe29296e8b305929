/* Message / Footer decoding: verify the FlatBuffer, then copy every field
 * into plain structs, checking the semantic rules the verifier cannot know
 * (enum ranges, non-negative lengths, type parameters). */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "flatbuf/flatbuf.h"
#include "format/descriptors.h"
#include "util/options.h"
#include "quiver/format.h"
#include "util/arena.h"

typedef struct Decoder {
  QvArena *arena;
  QvError *error;
  /* Output budget. FlatBuffers may share a sub-object between many
   * references, and each reference is decoded (copied) on its own, so
   * without a bound a small input (one long string referenced by a million
   * KeyValues) could make the decoder allocate terabytes. Writers that do
   * not share objects (flatc, Arrow C++, quiver) stay far below it. */
  size_t budget, used;
  QvStatus alloc_status; /* why the last allocation failed */
} Decoder;

/* Output bytes allowed per input byte, plus a fixed allowance. */
#define DECODE_BUDGET_FACTOR 16
#define DECODE_BUDGET_BASE ((size_t)64 << 10)

static void decoder_init(Decoder *d, size_t input_size, QvError *error) {
  d->arena = qvi_arena_new();
  d->error = error;
  d->budget = input_size > (SIZE_MAX - DECODE_BUDGET_BASE) / DECODE_BUDGET_FACTOR
                  ? SIZE_MAX
                  : input_size * DECODE_BUDGET_FACTOR + DECODE_BUDGET_BASE;
  d->used = 0;
  d->alloc_status = QV_OK;
}

#define TRY(expr)                       \
  do {                                  \
    QvStatus _st = (expr);              \
    if (_st != QV_OK) return _st;       \
  } while (0)

static QvStatus nomem(Decoder *d) {
  return qv_error_set(d->error, QV_ENOMEM, "out of memory while decoding metadata");
}

/* Zeroed arena memory within the budget; on failure sets the error and
 * d->alloc_status (QV_ELIMIT or QV_ENOMEM) and returns NULL. */
static void *dalloc(Decoder *d, size_t count, size_t size) {
  size_t n = size && count > SIZE_MAX / size ? SIZE_MAX : count * size;
  if (n > d->budget - d->used) {
    d->alloc_status = QV_ELIMIT;
    qv_error_set(d->error, QV_ELIMIT,
                 "decoded metadata would exceed %zu bytes (%d times its encoded size plus %zu: "
                 "sub-objects shared by many references are copied for each)",
                 d->budget, DECODE_BUDGET_FACTOR, DECODE_BUDGET_BASE);
    return NULL;
  }
  void *p = qvi_arena_alloc(d->arena, count, size);
  if (p == NULL) {
    d->alloc_status = nomem(d);
    return NULL;
  }
  d->used += (n + 7) & ~(size_t)7; /* the arena's rounding */
  return p;
}

/* `code` with a message for d->error; invalid() is malformed input,
 * unsupported() an enum or union value the format may define after this
 * version (a new codec, type or MetadataVersion): valid input quiver does
 * not support. */
static QvStatus fail(Decoder *d, QvStatus code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
static QvStatus fail(Decoder *d, QvStatus code, const char *fmt, ...) {
  char msg[QV_ERROR_MESSAGE_SIZE];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return qv_error_set(d->error, code, "%s", msg);
}
#define invalid(d, ...) fail((d), QV_EINVAL, __VA_ARGS__)
#define unsupported(d, ...) fail((d), QV_ENOTSUP, __VA_ARGS__)

/* `where` + `suffix` into w[cap] (cut to fit, as snprintf would): the
 * names of a schema's nested fields, made for every field, without
 * printf's cost (it was a tenth of a cheap read of a 4-column stream). */
static const char *join(char *w, size_t cap, const char *where, const char *suffix) {
  size_t a = strlen(where), b = strlen(suffix);
  if (a > cap - 1) a = cap - 1;
  if (b > cap - 1 - a) b = cap - 1 - a;
  memmove(w, where, a);
  memcpy(w + a, suffix, b);
  w[a + b] = '\0';
  return w;
}

/* `where` + "[i]" into w[cap]. */
static const char *join_index(char *w, size_t cap, const char *where, size_t i) {
  char digits[24], *p = digits + sizeof digits;
  *--p = '\0';
  *--p = ']';
  do *--p = (char)('0' + i % 10); while ((i /= 10) > 0);
  *--p = '[';
  return join(w, cap, where, p);
}

static QvStatus copy_string(Decoder *d, QvFbString s, const char **out, size_t *out_len) {
  *out = NULL;
  *out_len = 0;
  if (s.data == NULL) return QV_OK;
  char *p = dalloc(d, s.len + 1, 1); /* s.len < 2 GiB: no overflow */
  if (p == NULL) return d->alloc_status;
  memcpy(p, s.data, s.len);
  *out = p;
  *out_len = s.len;
  return QV_OK;
}

static QvStatus decode_metadata(Decoder *d, QvFbTable t, unsigned slot, int64_t *n,
                                const QvKeyValue **out) {
  QvFbVector v = qvi_fb_vector(t, slot, 4);
  *n = 0;
  *out = NULL;
  if (v.buf == NULL || v.len == 0) return QV_OK;
  QvKeyValue *kv = dalloc(d, v.len, sizeof *kv);
  if (kv == NULL) return d->alloc_status;
  for (size_t i = 0; i < v.len; i++) {
    QvFbTable e = qvi_fb_vec_table(v, i);
    TRY(copy_string(d, qvi_fb_string(e, KV_KEY), &kv[i].key, &kv[i].key_len));
    TRY(copy_string(d, qvi_fb_string(e, KV_VALUE), &kv[i].value, &kv[i].value_len));
  }
  *n = (int64_t)v.len;
  *out = kv;
  return QV_OK;
}

/* A FlatBuffers integer vector copied into the arena; one body for both
 * widths. */
#define COPY_INT_VECTOR(fn, T, load)                                                 \
  static QvStatus fn(Decoder *d, QvFbVector v, int64_t *n, const T **out) {          \
    *n = 0;                                                                          \
    *out = NULL;                                                                     \
    if (v.buf == NULL || v.len == 0) return QV_OK;                                   \
    T *a = dalloc(d, v.len, sizeof *a);                                              \
    if (a == NULL) return d->alloc_status;                                           \
    for (size_t i = 0; i < v.len; i++) a[i] = load(v, i);                            \
    *n = (int64_t)v.len;                                                             \
    *out = a;                                                                        \
    return QV_OK;                                                                    \
  }
COPY_INT_VECTOR(copy_i64_vector, int64_t, qvi_fb_vec_i64)
COPY_INT_VECTOR(copy_i32_vector, int32_t, qvi_fb_vec_i32)

static QvBuffer load_buffer(const uint8_t *p) {
  QvBuffer b = {0, 0};
  if (p) {
    b.offset = qvi_le_i64(p);
    b.length = qvi_le_i64(p + 8);
  }
  return b;
}

static bool buffer_ok(QvBuffer b) {
  return b.offset >= 0 && b.length >= 0 && b.length <= INT64_MAX - b.offset;
}

static QvStatus check_buffer(Decoder *d, const char *where, QvBuffer b) {
  if (b.offset < 0 || b.length < 0)
    return invalid(d, "%s: negative buffer offset/length (%lld, %lld)", where,
                   (long long)b.offset, (long long)b.length);
  if (b.length > INT64_MAX - b.offset)
    return invalid(d, "%s: buffer offset + length overflows", where);
  return QV_OK;
}

/* `where` + `what` name the vector (joined only for an error message). */
static QvStatus decode_buffer_vector(Decoder *d, const char *where, const char *what, QvFbVector v,
                                     int64_t *n, const QvBuffer **out) {
  *n = 0;
  *out = NULL;
  if (v.buf == NULL || v.len == 0) return QV_OK;
  QvBuffer *a = dalloc(d, v.len, sizeof *a);
  if (a == NULL) return d->alloc_status;
  for (size_t i = 0; i < v.len; i++) {
    a[i] = load_buffer(qvi_fb_vec_at(v, i));
    if (!buffer_ok(a[i])) { /* the path is formatted only when needed */
      char w[256];
      snprintf(w, sizeof w, "%s%s[%zu]", where, what, i);
      return check_buffer(d, w, a[i]);
    }
  }
  *n = (int64_t)v.len;
  *out = a;
  return QV_OK;
}

static QvStatus decode_int(Decoder *d, const char *where, QvFbTable t, QvIntType *out) {
  out->bit_width = qvi_fb_i32(t, 0, 0);
  out->is_signed = qvi_fb_bool(t, 1, false);
  if (out->bit_width != 8 && out->bit_width != 16 && out->bit_width != 32 &&
      out->bit_width != 64)
    return invalid(d, "%s: Int.bitWidth %d is not 8, 16, 32 or 64", where, out->bit_width);
  return QV_OK;
}

static QvStatus check_time_unit(Decoder *d, const char *where, int16_t unit) {
  if (unit < QV_TIME_SECOND || unit > QV_TIME_NANOSECOND)
    return invalid(d, "%s: TimeUnit %d is not a known unit", where, unit);
  return QV_OK;
}

static QvStatus decode_type(Decoder *d, const char *where, uint8_t tag, QvFbTable t,
                            QvType *out) {
  memset(out, 0, sizeof *out);
  if (tag == QV_TYPE_NONE || tag >= QV_TYPE_ID_COUNT)
    return invalid(d, "%s: type is %s", where,
                   tag == QV_TYPE_NONE ? "missing (NONE)" : "not a known Type");
  out->id = (QvTypeId)tag;
  switch (out->id) {
    case QV_TYPE_INT:
      return decode_int(d, where, t, &out->u.int_);
    case QV_TYPE_FLOATING_POINT:
      out->u.floating_point.precision = qvi_fb_i16(t, 0, 0);
      if (out->u.floating_point.precision < 0 || out->u.floating_point.precision > 2)
        return invalid(d, "%s: FloatingPoint.precision %d is not HALF, SINGLE or DOUBLE", where,
                       out->u.floating_point.precision);
      return QV_OK;
    case QV_TYPE_DECIMAL: {
      int32_t bw = qvi_fb_i32(t, 2, 128);
      out->u.decimal.precision = qvi_fb_i32(t, 0, 0);
      out->u.decimal.scale = qvi_fb_i32(t, 1, 0);
      out->u.decimal.bit_width = bw;
      if (bw != 32 && bw != 64 && bw != 128 && bw != 256)
        return invalid(d, "%s: Decimal.bitWidth %d is not 32, 64, 128 or 256", where, bw);
      /* the most decimal digits a two's-complement integer of bw bits holds */
      int32_t max_precision = bw == 32 ? 9 : bw == 64 ? 18 : bw == 128 ? 38 : 76;
      if (out->u.decimal.precision < 1 || out->u.decimal.precision > max_precision)
        return invalid(d, "%s: Decimal.precision %d is outside 1..%d for bitWidth %d", where,
                       out->u.decimal.precision, max_precision, bw);
      return QV_OK;
    }
    case QV_TYPE_DATE:
      out->u.date.unit = qvi_fb_i16(t, 0, QV_DATE_MILLISECOND);
      if (out->u.date.unit != QV_DATE_DAY && out->u.date.unit != QV_DATE_MILLISECOND)
        return invalid(d, "%s: DateUnit %d is not DAY or MILLISECOND", where, out->u.date.unit);
      return QV_OK;
    case QV_TYPE_TIME: {
      int16_t unit = qvi_fb_i16(t, 0, QV_TIME_MILLISECOND);
      int32_t bw = qvi_fb_i32(t, 1, 32);
      out->u.time.unit = unit;
      out->u.time.bit_width = bw;
      TRY(check_time_unit(d, where, unit));
      int32_t want = unit <= QV_TIME_MILLISECOND ? 32 : 64;
      if (bw != want)
        return invalid(d, "%s: Time.bitWidth %d does not match its unit (expected %d)", where,
                       bw, want);
      return QV_OK;
    }
    case QV_TYPE_TIMESTAMP:
      out->u.timestamp.unit = qvi_fb_i16(t, 0, QV_TIME_SECOND);
      TRY(check_time_unit(d, where, out->u.timestamp.unit));
      return copy_string(d, qvi_fb_string(t, 1), &out->u.timestamp.timezone,
                         &out->u.timestamp.timezone_len);
    case QV_TYPE_INTERVAL:
      out->u.interval.unit = qvi_fb_i16(t, 0, 0);
      if (out->u.interval.unit < 0 || out->u.interval.unit > 2)
        return invalid(d, "%s: IntervalUnit %d is not a known unit", where,
                       out->u.interval.unit);
      return QV_OK;
    case QV_TYPE_DURATION:
      out->u.duration.unit = qvi_fb_i16(t, 0, QV_TIME_MILLISECOND);
      return check_time_unit(d, where, out->u.duration.unit);
    case QV_TYPE_FIXED_SIZE_BINARY:
      out->u.fixed_size_binary.byte_width = qvi_fb_i32(t, 0, 0);
      if (out->u.fixed_size_binary.byte_width < 0)
        return invalid(d, "%s: FixedSizeBinary.byteWidth %d is negative", where,
                       out->u.fixed_size_binary.byte_width);
      return QV_OK;
    case QV_TYPE_FIXED_SIZE_LIST:
      out->u.fixed_size_list.list_size = qvi_fb_i32(t, 0, 0);
      if (out->u.fixed_size_list.list_size < 0)
        return invalid(d, "%s: FixedSizeList.listSize %d is negative", where,
                       out->u.fixed_size_list.list_size);
      return QV_OK;
    case QV_TYPE_MAP:
      out->u.map.keys_sorted = qvi_fb_bool(t, 0, false);
      return QV_OK;
    case QV_TYPE_UNION: {
      out->u.union_.mode = qvi_fb_i16(t, 0, QV_UNION_SPARSE);
      if (out->u.union_.mode != QV_UNION_SPARSE && out->u.union_.mode != QV_UNION_DENSE)
        return invalid(d, "%s: UnionMode %d is not Sparse or Dense", where, out->u.union_.mode);
      QvFbVector ids = qvi_fb_vector(t, 1, 4);
      out->u.union_.has_type_ids = ids.buf != NULL;
      return copy_i32_vector(d, ids, &out->u.union_.n_type_ids, &out->u.union_.type_ids);
    }
    default:
      return QV_OK; /* types without parameters */
  }
}

static QvStatus decode_field(Decoder *d, QvFbTable t, const char *where, int depth,
                             QvField *out);

static QvStatus decode_fields(Decoder *d, QvFbVector v, const char *where, int depth,
                              int64_t *n, const QvField **out) {
  *n = 0;
  *out = NULL;
  if (v.buf == NULL || v.len == 0) return QV_OK;
  if (depth > QV_FORMAT_MAX_FIELD_DEPTH)
    return qv_error_set(d->error, QV_ELIMIT, "%s: fields nested deeper than %d", where,
                        QV_FORMAT_MAX_FIELD_DEPTH);
  QvField *f = dalloc(d, v.len, sizeof *f);
  if (f == NULL) return d->alloc_status;
  for (size_t i = 0; i < v.len; i++) {
    char w[256];
    TRY(decode_field(d, qvi_fb_vec_table(v, i), join_index(w, sizeof w, where, i), depth, &f[i]));
  }
  *n = (int64_t)v.len;
  *out = f;
  return QV_OK;
}

static QvStatus decode_field(Decoder *d, QvFbTable t, const char *where, int depth,
                             QvField *out) {
  TRY(copy_string(d, qvi_fb_string(t, FIELD_NAME), &out->name, &out->name_len));
  out->nullable = qvi_fb_bool(t, FIELD_NULLABLE, false);
  char w[256];
  TRY(decode_type(d, join(w, sizeof w, where, ".type"), qvi_fb_u8(t, FIELD_TYPE_TYPE, 0), qvi_fb_table(t, FIELD_TYPE),
                  &out->type));
  QvFbTable dict = qvi_fb_table(t, FIELD_DICTIONARY);
  if (qvi_fb_table_valid(dict)) {
    QvDictionaryEncoding *de = dalloc(d, 1, sizeof *de);
    if (de == NULL) return d->alloc_status;
    de->id = qvi_fb_i64(dict, DICT_ID, 0);
    QvFbTable it = qvi_fb_table(dict, DICT_INDEX_TYPE);
    de->has_index_type = qvi_fb_table_valid(it);
    de->index_type.bit_width = 32;
    de->index_type.is_signed = true;
    if (de->has_index_type)
      TRY(decode_int(d, join(w, sizeof w, where, ".dictionary.indexType"), it, &de->index_type));
    de->is_ordered = qvi_fb_bool(dict, DICT_IS_ORDERED, false);
    de->kind = qvi_fb_i16(dict, DICT_KIND, 0);
    if (de->kind != QV_DICTIONARY_KIND_DENSE_ARRAY)
      return invalid(d, "%s.dictionary: DictionaryKind %d is not DenseArray", where, de->kind);
    out->dictionary = de;
  }
  TRY(decode_fields(d, qvi_fb_vector(t, FIELD_CHILDREN, 4), join(w, sizeof w, where, ".children"), depth + 1, &out->n_children,
                    &out->children));
  return decode_metadata(d, t, FIELD_CUSTOM_METADATA, &out->n_metadata, &out->metadata);
}

static QvStatus decode_schema(Decoder *d, QvFbTable t, QvSchema *out) {
  int16_t endianness = qvi_fb_i16(t, SCHEMA_ENDIANNESS, 0); /* Little 0, Big 1 */
  if (endianness != 0 && endianness != 1)
    return invalid(d, "Schema.endianness %d is not Little or Big", endianness);
  out->endianness = endianness ? QV_ENDIAN_BIG : QV_ENDIAN_LITTLE;
  TRY(decode_fields(d, qvi_fb_vector(t, SCHEMA_FIELDS, 4), "Schema.fields", 0, &out->n_fields,
                    &out->fields));
  TRY(decode_metadata(d, t, SCHEMA_CUSTOM_METADATA, &out->n_metadata, &out->metadata));
  return copy_i64_vector(d, qvi_fb_vector(t, SCHEMA_FEATURES, 8), &out->n_features,
                         &out->features);
}

static QvStatus decode_record_batch(Decoder *d, QvFbTable t, const char *where,
                                    QvRecordBatch *out) {
  out->length = qvi_fb_i64(t, RB_LENGTH, 0);
  if (out->length < 0) return invalid(d, "%s.length %lld is negative", where, (long long)out->length);
  QvFbVector nodes = qvi_fb_vector(t, RB_NODES, 16);
  if (nodes.buf && nodes.len) {
    QvFieldNode *n = dalloc(d, nodes.len, sizeof *n);
    if (n == NULL) return d->alloc_status;
    for (size_t i = 0; i < nodes.len; i++) {
      const uint8_t *p = qvi_fb_vec_at(nodes, i);
      n[i].length = qvi_le_i64(p);
      n[i].null_count = qvi_le_i64(p + 8);
      /* -1 is "unknown", as in Arrow C++ (apache-arrow JS writes it for a
       * sliced Null column); readers count the bitmap when they need it */
      if (n[i].length < 0 || n[i].null_count < -1 || n[i].null_count > n[i].length)
        return invalid(d, "%s.nodes[%zu]: length %lld / null_count %lld is invalid", where, i,
                       (long long)n[i].length, (long long)n[i].null_count);
    }
    out->n_nodes = (int64_t)nodes.len;
    out->nodes = n;
  }
  TRY(decode_buffer_vector(d, where, ".buffers", qvi_fb_vector(t, RB_BUFFERS, 16), &out->n_buffers,
                           &out->buffers));
  QvFbTable comp = qvi_fb_table(t, RB_COMPRESSION);
  out->compression = QV_COMPRESSION_NONE;
  if (qvi_fb_table_valid(comp)) {
    /* CompressionType: LZ4_FRAME = 0 (the default), ZSTD = 1 */
    int8_t codec = qvi_fb_i8(comp, COMP_CODEC, 0);
    out->method = qvi_fb_i8(comp, COMP_METHOD, QV_COMPRESSION_METHOD_BUFFER);
    if (codec < 0)
      return invalid(d, "%s.compression.codec %d is not LZ4_FRAME or ZSTD", where, codec);
    if (codec > 1)
      return unsupported(d, "%s.compression.codec %d is not supported (LZ4_FRAME and ZSTD are)",
                         where, codec);
    out->compression = codec == 0 ? QV_COMPRESSION_LZ4_FRAME : QV_COMPRESSION_ZSTD;
    if (out->method != QV_COMPRESSION_METHOD_BUFFER)
      return unsupported(d, "%s.compression.method %d is not supported (BUFFER is)", where,
                         out->method);
  }
  QvFbVector var = qvi_fb_vector(t, RB_VARIADIC, 8);
  out->has_variadic_buffer_counts = var.buf != NULL;
  TRY(copy_i64_vector(d, var, &out->n_variadic_buffer_counts, &out->variadic_buffer_counts));
  for (int64_t i = 0; i < out->n_variadic_buffer_counts; i++)
    if (out->variadic_buffer_counts[i] < 0)
      return invalid(d, "%s.variadicBufferCounts[%lld] is negative", where, (long long)i);
  return QV_OK;
}

static QvStatus decode_shape(Decoder *d, QvFbTable t, unsigned slot, const char *where,
                             int64_t *ndim, const QvTensorDim **out) {
  QvFbVector v = qvi_fb_vector(t, slot, 4);
  *ndim = 0;
  *out = NULL;
  if (v.len == 0) return QV_OK;
  QvTensorDim *dims = dalloc(d, v.len, sizeof *dims);
  if (dims == NULL) return d->alloc_status;
  for (size_t i = 0; i < v.len; i++) {
    QvFbTable dim = qvi_fb_vec_table(v, i);
    dims[i].size = qvi_fb_i64(dim, DIM_SIZE, 0);
    if (dims[i].size < 0)
      return invalid(d, "%s.shape[%zu].size %lld is negative", where, i,
                     (long long)dims[i].size);
    TRY(copy_string(d, qvi_fb_string(dim, DIM_NAME), &dims[i].name, &dims[i].name_len));
  }
  *ndim = (int64_t)v.len;
  *out = dims;
  return QV_OK;
}

static QvStatus decode_tensor(Decoder *d, QvFbTable t, QvTensorMeta *out) {
  TRY(decode_type(d, "Tensor.type", qvi_fb_u8(t, TENSOR_TYPE_TYPE, 0),
                  qvi_fb_table(t, TENSOR_TYPE), &out->type));
  TRY(decode_shape(d, t, TENSOR_SHAPE, "Tensor", &out->ndim, &out->shape));
  QvFbVector strides = qvi_fb_vector(t, TENSOR_STRIDES, 8);
  out->has_strides = strides.buf != NULL;
  TRY(copy_i64_vector(d, strides, &out->n_strides, &out->strides));
  out->data = load_buffer(qvi_fb_struct(t, TENSOR_DATA, 16));
  return check_buffer(d, "Tensor.data", out->data);
}

static QvStatus decode_sparse_tensor(Decoder *d, QvFbTable t, QvSparseTensorMeta *out) {
  TRY(decode_type(d, "SparseTensor.type", qvi_fb_u8(t, ST_TYPE_TYPE, 0), qvi_fb_table(t, ST_TYPE),
                  &out->type));
  TRY(decode_shape(d, t, ST_SHAPE, "SparseTensor", &out->ndim, &out->shape));
  out->non_zero_length = qvi_fb_i64(t, ST_NNZ, 0);
  if (out->non_zero_length < 0)
    return invalid(d, "SparseTensor.non_zero_length %lld is negative",
                   (long long)out->non_zero_length);
  out->data = load_buffer(qvi_fb_struct(t, ST_DATA, 16));
  TRY(check_buffer(d, "SparseTensor.data", out->data));
  /* SparseTensorIndex union tags: COO 1, CSX 2 (CSR or CSC by its
   * compressedAxis), CSF 3 */
  uint8_t tag = qvi_fb_u8(t, ST_INDEX_TYPE, 0);
  QvFbTable ix = qvi_fb_table(t, ST_INDEX);
  switch (tag) {
    case 1: {
      out->format = QV_SPARSE_COO;
      QvSparseCOO *c = &out->index.coo;
      TRY(decode_int(d, "SparseTensorIndexCOO.indicesType", qvi_fb_table(ix, COO_INDICES_TYPE),
                     &c->indices_type));
      QvFbVector s = qvi_fb_vector(ix, COO_INDICES_STRIDES, 8);
      c->has_indices_strides = s.buf != NULL;
      TRY(copy_i64_vector(d, s, &c->n_indices_strides, &c->indices_strides));
      c->indices_buffer = load_buffer(qvi_fb_struct(ix, COO_INDICES_BUFFER, 16));
      TRY(check_buffer(d, "SparseTensorIndexCOO.indicesBuffer", c->indices_buffer));
      c->is_canonical = qvi_fb_bool(ix, COO_IS_CANONICAL, false);
      return QV_OK;
    }
    case 2: {
      QvSparseCSX *c = &out->index.csx;
      int16_t axis = qvi_fb_i16(ix, CSX_AXIS, 0); /* Row 0, Column 1 */
      if (axis != 0 && axis != 1)
        return invalid(d, "SparseMatrixIndexCSX.compressedAxis %d is not Row or Column", axis);
      out->format = axis == 0 ? QV_SPARSE_CSR : QV_SPARSE_CSC;
      TRY(decode_int(d, "SparseMatrixIndexCSX.indptrType", qvi_fb_table(ix, CSX_INDPTR_TYPE),
                     &c->indptr_type));
      TRY(decode_int(d, "SparseMatrixIndexCSX.indicesType", qvi_fb_table(ix, CSX_INDICES_TYPE),
                     &c->indices_type));
      c->indptr_buffer = load_buffer(qvi_fb_struct(ix, CSX_INDPTR_BUFFER, 16));
      c->indices_buffer = load_buffer(qvi_fb_struct(ix, CSX_INDICES_BUFFER, 16));
      TRY(check_buffer(d, "SparseMatrixIndexCSX.indptrBuffer", c->indptr_buffer));
      return check_buffer(d, "SparseMatrixIndexCSX.indicesBuffer", c->indices_buffer);
    }
    case 3: {
      out->format = QV_SPARSE_CSF;
      QvSparseCSF *c = &out->index.csf;
      TRY(decode_int(d, "SparseTensorIndexCSF.indptrType", qvi_fb_table(ix, CSF_INDPTR_TYPE),
                     &c->indptr_type));
      TRY(decode_int(d, "SparseTensorIndexCSF.indicesType", qvi_fb_table(ix, CSF_INDICES_TYPE),
                     &c->indices_type));
      TRY(decode_buffer_vector(d, "SparseTensorIndexCSF", ".indptrBuffers",
                               qvi_fb_vector(ix, CSF_INDPTR_BUFFERS, 16), &c->n_indptr_buffers,
                               &c->indptr_buffers));
      TRY(decode_buffer_vector(d, "SparseTensorIndexCSF", ".indicesBuffers",
                               qvi_fb_vector(ix, CSF_INDICES_BUFFERS, 16),
                               &c->n_indices_buffers, &c->indices_buffers));
      return copy_i32_vector(d, qvi_fb_vector(ix, CSF_AXIS_ORDER, 4), &c->n_axis_order,
                             &c->axis_order);
    }
    default:
      return invalid(d, "SparseTensor.sparseIndex: union type %u is not a known SparseTensorIndex",
                     tag);
  }
}

static QvStatus verify_and_root(const uint8_t *buf, size_t size, const QvFbTableDesc *desc,
                                const QvDecodeOptions *options, QvFbTable *root,
                                QvError *error) {
  QvDecodeOptions o;
  QvStatus st = QV_OPTIONS_LOAD(&o, options, QvDecodeOptions, error);
  if (st) return st;
  QvFbVerifyOptions vo = {o.max_depth, o.max_tables};
  st = qvi_fb_verify(buf, size, desc, &vo, error);
  if (st) return st;
  if (!qvi_fb_root(buf, size, root))
    return qv_error_set(error, QV_EINVAL, "%s: root table is unreadable", desc->name);
  return QV_OK;
}

/* The MetadataVersion in `slot` of a Message or Footer (V1 when absent):
 * below V1 is not one, after V5 is one quiver does not support. */
static QvStatus decode_version(Decoder *d, QvFbTable root, unsigned slot, const char *table,
                               QvMetadataVersion *out) {
  int16_t version = qvi_fb_i16(root, slot, QV_METADATA_V1);
  if (version < QV_METADATA_V1)
    return invalid(d, "%s.version %d is not a known MetadataVersion", table, version);
  if (version > QV_METADATA_V5)
    return unsupported(d, "%s.version %d is a MetadataVersion after V5 (not supported)", table,
                       version);
  *out = (QvMetadataVersion)version;
  return QV_OK;
}

static QvStatus decode_message_body(Decoder *d, QvFbTable root, void *out_) {
  QvMessage *out = out_;
  TRY(decode_version(d, root, MESSAGE_VERSION, "Message", &out->version));
  out->body_length = qvi_fb_i64(root, MESSAGE_BODY_LENGTH, 0);
  if (out->body_length < 0)
    return invalid(d, "Message.bodyLength %lld is negative", (long long)out->body_length);
  TRY(decode_metadata(d, root, MESSAGE_CUSTOM_METADATA, &out->n_metadata, &out->metadata));
  out->header_type = qvi_fb_u8(root, MESSAGE_HEADER_TYPE, 0);
  QvFbTable h = qvi_fb_table(root, MESSAGE_HEADER);
  switch (out->header_type) {
    case QV_HEADER_SCHEMA:
      return decode_schema(d, h, &out->header.schema);
    case QV_HEADER_RECORD_BATCH:
      return decode_record_batch(d, h, "RecordBatch", &out->header.record_batch);
    case QV_HEADER_DICTIONARY_BATCH: {
      QvDictionaryBatch *db = &out->header.dictionary_batch;
      db->id = qvi_fb_i64(h, DB_ID, 0);
      db->is_delta = qvi_fb_bool(h, DB_IS_DELTA, false);
      QvFbTable data = qvi_fb_table(h, DB_DATA);
      if (!qvi_fb_table_valid(data))
        return invalid(d, "DictionaryBatch.data: required RecordBatch is missing");
      return decode_record_batch(d, data, "DictionaryBatch.data", &db->data);
    }
    case QV_HEADER_TENSOR:
      return decode_tensor(d, h, &out->header.tensor);
    case QV_HEADER_SPARSE_TENSOR:
      return decode_sparse_tensor(d, h, &out->header.sparse_tensor);
    case QV_HEADER_NONE:
      return invalid(d, "Message.header: header is missing (NONE)");
    default:
      return invalid(d, "Message.header: union type %u is not a known MessageHeader",
                     out->header_type);
  }
}

/* Frees a decoded struct's arena and zeroes the struct. */
static void reset_decoded(void *obj, size_t size, void *arena) {
  qvi_arena_free(arena);
  memset(obj, 0, size);
}

/* Verify, then decode the root into `out` (zeroed first; on failure its
 * arena is freed and it is zeroed again): the one body of the message and
 * footer decoders. `arena` is out->private_data. */
static QvStatus decode_root(const uint8_t *buf, size_t size, const QvDecodeOptions *options,
                            const QvFbTableDesc *desc, void *out, size_t out_size, void **arena,
                            QvStatus (*body)(Decoder *, QvFbTable, void *), QvError *error) {
  memset(out, 0, out_size);
  QvFbTable root;
  QvStatus st = verify_and_root(buf, size, desc, options, &root, error);
  if (st) return st;
  Decoder d;
  decoder_init(&d, size, error);
  if (d.arena == NULL) return nomem(&d);
  *arena = d.arena;
  st = body(&d, root, out);
  if (st) reset_decoded(out, out_size, d.arena);
  return st;
}

QvStatus qv_message_decode(const uint8_t *buf, size_t size, const QvDecodeOptions *options,
                           QvMessage *out, QvError *error) {
  if (out == NULL) return qv_error_set(error, QV_EARG, "Message: output is NULL");
  return decode_root(buf, size, options, &qvi_desc_Message, out, sizeof *out, &out->private_data,
                     decode_message_body, error);
}

void qv_message_reset(QvMessage *msg) {
  if (msg) reset_decoded(msg, sizeof *msg, msg->private_data);
}

static QvStatus decode_blocks(Decoder *d, QvFbVector v, const char *where, int64_t *n,
                              const QvBlock **out) {
  *n = 0;
  *out = NULL;
  if (v.buf == NULL || v.len == 0) return QV_OK;
  QvBlock *b = dalloc(d, v.len, sizeof *b);
  if (b == NULL) return d->alloc_status;
  for (size_t i = 0; i < v.len; i++) {
    const uint8_t *p = qvi_fb_vec_at(v, i);
    b[i].offset = qvi_le_i64(p);
    b[i].meta_data_length = qvi_le_i32(p + 8);
    b[i].body_length = qvi_le_i64(p + 16);
    if (b[i].offset < 0 || b[i].meta_data_length < 0 || b[i].body_length < 0)
      return invalid(d, "Footer.%s[%zu]: negative offset or length", where, i);
  }
  *n = (int64_t)v.len;
  *out = b;
  return QV_OK;
}

static QvStatus decode_footer_body(Decoder *d, QvFbTable root, void *out_) {
  QvFooter *out = out_;
  TRY(decode_version(d, root, FOOTER_VERSION, "Footer", &out->version));
  QvFbTable schema = qvi_fb_table(root, FOOTER_SCHEMA);
  out->has_schema = qvi_fb_table_valid(schema);
  if (out->has_schema) TRY(decode_schema(d, schema, &out->schema));
  TRY(decode_blocks(d, qvi_fb_vector(root, FOOTER_DICTIONARIES, 24), "dictionaries",
                    &out->n_dictionaries, &out->dictionaries));
  TRY(decode_blocks(d, qvi_fb_vector(root, FOOTER_RECORD_BATCHES, 24), "recordBatches",
                    &out->n_record_batches, &out->record_batches));
  return decode_metadata(d, root, FOOTER_CUSTOM_METADATA, &out->n_metadata, &out->metadata);
}

QvStatus qv_footer_decode(const uint8_t *buf, size_t size, const QvDecodeOptions *options,
                          QvFooter *out, QvError *error) {
  if (out == NULL) return qv_error_set(error, QV_EARG, "Footer: output is NULL");
  return decode_root(buf, size, options, &qvi_desc_Footer, out, sizeof *out, &out->private_data,
                     decode_footer_body, error);
}

void qv_footer_reset(QvFooter *footer) {
  if (footer) reset_decoded(footer, sizeof *footer, footer->private_data);
}
