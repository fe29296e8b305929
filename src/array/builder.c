/* Builders: ArrowArrays in the building state, appended to value by value. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "quiver/advanced.h"
#include "array/array_internal.h"
#include "util/half.h"

/* Views longer than this start a new variadic data buffer (Arrow C++ uses
 * the same block size). */
#define VIEW_BLOCK_SIZE (32 * 1024)

void qvi_builder_free(QvBuilder *b) {
  if (b == NULL) return;
  qvi_growbuf_free(&b->validity);
  qvi_growbuf_free(&b->buf1);
  qvi_growbuf_free(&b->buf2);
  for (int64_t k = 0; k < b->n_variadic; k++) qvi_growbuf_free(&b->variadic[k]);
  free(b->variadic);
  if (b->schema) {
    if (b->schema->release) b->schema->release(b->schema);
    free(b->schema);
  }
  free(b);
}

static QvBuilder *builder_of(struct ArrowArray *a) {
  if (!qv_array_is_quiver(a)) return NULL;
  return ((QvArrayPrivate *)a->private_data)->builder;
}

static QvStatus append_offset(QvGrowBuf *g, int width, int64_t value) {
  if (width == 4) {
    if (value > INT32_MAX) return QV_ELIMIT;
    int32_t v = (int32_t)value;
    return qvi_growbuf_append(g, &v, 4);
  }
  return qvi_growbuf_append(g, &value, 8);
}

static QvStatus init_node(struct ArrowArray *a, const struct ArrowSchema *s, int depth,
                          QvError *error) {
  if (depth > QV_ARRAY_MAX_DEPTH)
    return qv_error_set(error, QV_ELIMIT, "schema nested deeper than %d", QV_ARRAY_MAX_DEPTH);
  QvArrowSchemaView type;
  QvStatus st = qv_arrow_schema_view_init(&type, s, error);
  if (st) return st;
  QvLayout L = qv_layout_of(type.storage_type);
  if ((st = qvi_array_alloc_node(a, qv_layout_n_buffers(L), type.n_children, s->dictionary != NULL,
                                error)))
    return st;
  QvArrayPrivate *p = a->private_data;
  QvBuilder *b = calloc(1, sizeof *b);
  if (b == NULL) {
    a->release(a);
    return qv_error_set(error, QV_ENOMEM, "out of memory");
  }
  p->builder = b;
  /* the schema may go away while building: keep no pointers into it */
  b->type = type;
  b->type.schema = NULL;
  b->type.timezone = NULL;
  b->type.extension_name = NULL;
  b->type.extension_metadata = NULL;
  b->layout = L;
  int ow = qv_layout_offset_width(L);
  if ((L == QV_LAYOUT_BINARY || L == QV_LAYOUT_LARGE_BINARY || L == QV_LAYOUT_LIST ||
       L == QV_LAYOUT_LARGE_LIST) &&
      append_offset(&b->buf1, ow, 0) != QV_OK) {
    a->release(a);
    return qv_error_set(error, QV_ENOMEM, "out of memory");
  }
  for (int64_t i = 0; i < type.n_children; i++) {
    if ((st = init_node(a->children[i], s->children[i], depth + 1, error))) {
      a->release(a);
      return qv_error_prefix(error, "child %lld", (long long)i);
    }
  }
  if (s->dictionary && (st = init_node(a->dictionary, s->dictionary, depth + 1, error))) {
    a->release(a);
    return qv_error_prefix(error, "dictionary");
  }
  return QV_OK;
}

QvStatus qv_array_init_from_schema(struct ArrowArray *array, const struct ArrowSchema *schema,
                                   QvError *error) {
  memset(array, 0, sizeof *array);
  QvStatus st = qv_arrow_schema_validate(schema, error);
  if (st) return st;
  struct ArrowSchema *copy = malloc(sizeof *copy);
  if (copy == NULL) return qv_error_set(error, QV_ENOMEM, "out of memory");
  if ((st = qv_arrow_schema_copy(schema, copy, error))) {
    free(copy);
    return st;
  }
  if ((st = init_node(array, copy, 0, error))) {
    copy->release(copy);
    free(copy);
    return st;
  }
  builder_of(array)->schema = copy;
  return QV_OK;
}

/* ---- validity */

/* Sets bits [from, from + n) to v, whole bytes at a time. */
static void bits_fill(uint8_t *bits, int64_t from, int64_t n, bool v) {
  int64_t i = from, end = from + n;
  while (i < end && (i & 7)) qvi_bit_set(bits, i++, v);
  int64_t bytes = (end - i) / 8;
  if (bytes > 0) {
    memset(bits + i / 8, v ? 0xFF : 0, (size_t)bytes);
    i += bytes * 8;
  }
  while (i < end) qvi_bit_set(bits, i++, v);
}

static QvStatus push_validity(QvBuilder *b, struct ArrowArray *a, int64_t n, bool valid) {
  if (n <= 0) return QV_OK;
  if (!valid && !b->has_validity) {
    /* first null: materialize a bitmap with every earlier element valid */
    int64_t bytes = qvi_bitmap_bytes(a->length);
    QvStatus st = qvi_growbuf_reserve(&b->validity, bytes + 8);
    if (st) return st;
    memset(b->validity.data, 0xFF, (size_t)bytes);
    b->validity.size = bytes;
    if (a->length % 8) b->validity.data[bytes - 1] = (uint8_t)((1u << (a->length % 8)) - 1);
    b->has_validity = true;
  }
  if (b->has_validity) {
    int64_t need = qvi_bitmap_bytes(a->length + n);
    if (need > b->validity.size) {
      QvStatus st = qvi_growbuf_append_zeros(&b->validity, need - b->validity.size);
      if (st) return st;
    }
    bits_fill(b->validity.data, a->length, n, valid);
  }
  if (!valid) b->null_count += n;
  return QV_OK;
}

/* Appends the validity of src[start, start + n) (physical positions of a
 * bitmap, or all valid when bits is NULL) without changing a->length. */
static QvStatus push_validity_from(QvBuilder *b, struct ArrowArray *a, const uint8_t *bits,
                                   int64_t start, int64_t n) {
  if (bits == NULL) return push_validity(b, a, n, true);
  int64_t valid = qv_bitmap_count_set(bits, start, n);
  if (valid == n) return push_validity(b, a, n, true);
  QvStatus st = push_validity(b, a, 1, false); /* materializes the bitmap */
  if (st) return st;
  b->null_count--;
  int64_t need = qvi_bitmap_bytes(a->length + n);
  if (need > b->validity.size && (st = qvi_growbuf_append_zeros(&b->validity, need - b->validity.size)))
    return st;
  for (int64_t i = 0; i < n; i++) qvi_bit_set(b->validity.data, a->length + i, qvi_bit_get(bits, start + i));
  b->null_count += n - valid;
  return QV_OK;
}

/* ---- appends */

static QvStatus fill(struct ArrowArray *a, int64_t n, bool valid);

static QvStatus fill_bits(QvGrowBuf *g, int64_t from, int64_t n) {
  int64_t need = qvi_bitmap_bytes(from + n);
  if (need > g->size) return qvi_growbuf_append_zeros(g, need - g->size);
  for (int64_t i = from; i < from + n; i++) qvi_bit_set(g->data, i, false);
  return QV_OK;
}

/* Appends n null (valid == false) or empty (valid == true) elements. */
static QvStatus fill(struct ArrowArray *a, int64_t n, bool valid) {
  QvBuilder *b = builder_of(a);
  if (b == NULL) return QV_EARG;
  if (n < 0) return QV_EARG;
  if (n == 0) return QV_OK;
  QvStatus st = QV_OK;
  int ow = qv_layout_offset_width(b->layout);
  switch (b->layout) {
    case QV_LAYOUT_NULL:
      b->null_count += n;
      a->length += n;
      return QV_OK;
    case QV_LAYOUT_BOOL: st = fill_bits(&b->buf1, a->length, n); break;
    case QV_LAYOUT_FIXED: {
      int64_t bytes;
      if (!qvi_mul_i64(n, b->type.byte_width, &bytes)) return QV_ELIMIT;
      st = qvi_growbuf_append_zeros(&b->buf1, bytes);
      break;
    }
    case QV_LAYOUT_BINARY:
    case QV_LAYOUT_LARGE_BINARY:
    case QV_LAYOUT_LIST:
    case QV_LAYOUT_LARGE_LIST: {
      int64_t last = qvi_ld_offset(b->buf1.data, ow, a->length);
      for (int64_t i = 0; i < n && !st; i++) st = append_offset(&b->buf1, ow, last);
      break;
    }
    case QV_LAYOUT_LIST_VIEW:
    case QV_LAYOUT_LARGE_LIST_VIEW: {
      int64_t start = a->children[0]->length;
      b->list_child_start = start;
      for (int64_t i = 0; i < n && !st; i++) {
        st = append_offset(&b->buf1, ow, start);
        if (!st) st = append_offset(&b->buf2, ow, 0);
      }
      break;
    }
    case QV_LAYOUT_VIEW: {
      int64_t bytes;
      if (!qvi_mul_i64(n, 16, &bytes)) return QV_ELIMIT;
      st = qvi_growbuf_append_zeros(&b->buf1, bytes);
      break;
    }
    case QV_LAYOUT_FIXED_LIST: {
      int64_t k;
      if (!qvi_mul_i64(n, b->type.fixed_size, &k)) return QV_ELIMIT;
      st = fill(a->children[0], k, valid);
      break;
    }
    case QV_LAYOUT_STRUCT:
      for (int64_t i = 0; i < a->n_children && !st; i++) st = fill(a->children[i], n, valid);
      break;
    case QV_LAYOUT_SPARSE_UNION:
    case QV_LAYOUT_DENSE_UNION: {
      if (a->n_children == 0) return QV_EINVAL;
      int8_t code = b->type.union_type_ids[0];
      bool dense = b->layout == QV_LAYOUT_DENSE_UNION;
      for (int64_t i = 0; i < n && !st; i++) {
        st = fill(a->children[0], 1, valid);
        if (!st) st = qvi_growbuf_append(&b->buf1, &code, 1);
        if (!st && dense) {
          int32_t off = (int32_t)(a->children[0]->length - 1);
          st = qvi_growbuf_append(&b->buf2, &off, 4);
        }
      }
      if (!st && !dense)
        for (int64_t k = 1; k < a->n_children && !st; k++) st = fill(a->children[k], n, false);
      if (!st) a->length += n;
      return st;
    }
    case QV_LAYOUT_REE:
      st = fill(a->children[1], 1, valid);
      if (!st) st = qv_array_finish_run(a, n, NULL); /* the caller names the failure */
      return st;
  }
  if (!st) st = push_validity(b, a, n, valid);
  if (!st) a->length += n;
  return st;
}

static QvStatus append_null_(struct ArrowArray *array, int64_t n, QvError *error) {
  (void)error;
  return fill(array, n, false);
}
static QvStatus append_empty_(struct ArrowArray *array, int64_t n, QvError *error) {
  (void)error;
  return fill(array, n, true);
}

/* Stores one valid fixed-width value. */
static QvStatus push_fixed(QvBuilder *b, struct ArrowArray *a, const void *bytes, int64_t w) {
  QvStatus st = qvi_growbuf_append(&b->buf1, bytes, w);
  if (!st) st = push_validity(b, a, 1, true);
  if (!st) a->length++;
  return st;
}

static QvStatus append_int_(struct ArrowArray *a, int64_t v, QvError *error) {
  (void)error; /* set by nested builder calls only */
  QvBuilder *b = builder_of(a);
  if (b == NULL) return QV_EARG;
  switch (b->type.storage_type) {
    case QV_ARROW_BOOL: {
      if (v != 0 && v != 1) return QV_EINVAL;
      int64_t need = qvi_bitmap_bytes(a->length + 1);
      if (need > b->buf1.size && qvi_growbuf_append_zeros(&b->buf1, need - b->buf1.size))
        return QV_ENOMEM;
      qvi_bit_set(b->buf1.data, a->length, v != 0);
      QvStatus st = push_validity(b, a, 1, true);
      if (!st) a->length++;
      return st;
    }
    case QV_ARROW_INT8:
      if (v < INT8_MIN || v > INT8_MAX) return QV_EINVAL;
      return push_fixed(b, a, &(int8_t){(int8_t)v}, 1);
    case QV_ARROW_UINT8:
      if (v < 0 || v > UINT8_MAX) return QV_EINVAL;
      return push_fixed(b, a, &(uint8_t){(uint8_t)v}, 1);
    case QV_ARROW_INT16:
      if (v < INT16_MIN || v > INT16_MAX) return QV_EINVAL;
      return push_fixed(b, a, &(int16_t){(int16_t)v}, 2);
    case QV_ARROW_UINT16:
      if (v < 0 || v > UINT16_MAX) return QV_EINVAL;
      return push_fixed(b, a, &(uint16_t){(uint16_t)v}, 2);
    case QV_ARROW_INT32:
    case QV_ARROW_INTERVAL_MONTHS:
      if (v < INT32_MIN || v > INT32_MAX) return QV_EINVAL;
      return push_fixed(b, a, &(int32_t){(int32_t)v}, 4);
    case QV_ARROW_UINT32:
      if (v < 0 || v > (int64_t)UINT32_MAX) return QV_EINVAL;
      return push_fixed(b, a, &(uint32_t){(uint32_t)v}, 4);
    case QV_ARROW_INT64: return push_fixed(b, a, &v, 8);
    case QV_ARROW_UINT64:
      if (v < 0) return QV_EINVAL;
      return push_fixed(b, a, &v, 8);
    case QV_ARROW_FLOAT16:
    case QV_ARROW_FLOAT32:
    case QV_ARROW_FLOAT64: return qv_array_append_double(a, (double)v, error);
    case QV_ARROW_DECIMAL32:
    case QV_ARROW_DECIMAL64:
    case QV_ARROW_DECIMAL128:
    case QV_ARROW_DECIMAL256: {
      uint8_t le[32], bytes[32];
      memset(le, v < 0 ? 0xFF : 0, sizeof le);
      int w = b->type.byte_width;
      if (w == 4) {
        if (v < INT32_MIN || v > INT32_MAX) return QV_EINVAL;
        qvi_st_le_u32(le, (uint32_t)v);
      } else {
        qvi_st_le_u64(le, (uint64_t)v);
      }
      qvi_le_bytes(bytes, le, (size_t)w); /* the whole integer in host order */
      return push_fixed(b, a, bytes, w);
    }
    default: return QV_EINVAL;
  }
}

static QvStatus append_uint_(struct ArrowArray *a, uint64_t v, QvError *error) {
  (void)error; /* set by nested builder calls only */
  QvBuilder *b = builder_of(a);
  if (b == NULL) return QV_EARG;
  if (b->type.storage_type == QV_ARROW_UINT64) return push_fixed(b, a, &v, 8);
  if (v > INT64_MAX) return QV_EINVAL;
  return qv_array_append_int(a, (int64_t)v, error);
}

static QvStatus append_double_(struct ArrowArray *a, double v, QvError *error) {
  (void)error; /* set by nested builder calls only */
  QvBuilder *b = builder_of(a);
  if (b == NULL) return QV_EARG;
  switch (b->type.storage_type) {
    case QV_ARROW_FLOAT16: return push_fixed(b, a, &(uint16_t){qvi_double_to_half(v)}, 2);
    case QV_ARROW_FLOAT32: return push_fixed(b, a, &(float){(float)v}, 4);
    case QV_ARROW_FLOAT64: return push_fixed(b, a, &v, 8);
    default: return QV_EINVAL;
  }
}

static QvStatus push_view(QvBuilder *b, const uint8_t *data, int64_t size) {
  uint8_t view[16];
  memset(view, 0, sizeof view);
  int32_t len = (int32_t)size;
  memcpy(view, &len, 4);
  if (size <= 12) {
    if (size) memcpy(view + 4, data, (size_t)size);
    return qvi_growbuf_append(&b->buf1, view, 16);
  }
  QvGrowBuf *cur = b->n_variadic ? &b->variadic[b->n_variadic - 1] : NULL;
  if (cur == NULL || (cur->size > 0 && cur->size + size > VIEW_BLOCK_SIZE) ||
      cur->size + size > INT32_MAX) {
    if (b->n_variadic == b->variadic_capacity) {
      size_t cap = (size_t)b->variadic_capacity;
      QvGrowBuf *nv = qvi_grow_array(b->variadic, &cap, cap + 1, 4, sizeof *nv);
      if (nv == NULL) return QV_ENOMEM;
      b->variadic = nv;
      b->variadic_capacity = (int64_t)cap;
    }
    cur = &b->variadic[b->n_variadic++];
    memset(cur, 0, sizeof *cur);
  }
  int32_t index = (int32_t)(b->n_variadic - 1), off = (int32_t)cur->size;
  memcpy(view + 4, data, 4);
  memcpy(view + 8, &index, 4);
  memcpy(view + 12, &off, 4);
  QvStatus st = qvi_growbuf_append(cur, data, size);
  if (!st) st = qvi_growbuf_append(&b->buf1, view, 16);
  return st;
}

static QvStatus append_bytes_(struct ArrowArray *a, const void *data, int64_t size, QvError *error) {
  (void)error; /* set by nested builder calls only */
  QvBuilder *b = builder_of(a);
  if (b == NULL || size < 0 || (data == NULL && size > 0)) return QV_EARG;
  QvStatus st;
  switch (b->layout) {
    case QV_LAYOUT_BINARY:
    case QV_LAYOUT_LARGE_BINARY: {
      int ow = qv_layout_offset_width(b->layout);
      if ((st = qvi_growbuf_append(&b->buf2, data, size))) return st;
      if ((st = append_offset(&b->buf1, ow, b->buf2.size))) {
        b->buf2.size -= size;
        return st;
      }
      break;
    }
    case QV_LAYOUT_VIEW:
      if (size > INT32_MAX) return QV_ELIMIT;
      if ((st = push_view(b, data, size))) return st;
      break;
    case QV_LAYOUT_FIXED: {
      QvArrowType t = b->type.storage_type;
      bool raw = t == QV_ARROW_FIXED_SIZE_BINARY || (t >= QV_ARROW_DECIMAL32 && t <= QV_ARROW_DECIMAL256) ||
                 t == QV_ARROW_INTERVAL_MONTHS || t == QV_ARROW_INTERVAL_DAY_TIME ||
                 t == QV_ARROW_INTERVAL_MONTH_DAY_NANO;
      if (!raw || size != b->type.byte_width) return QV_EINVAL;
      return push_fixed(b, a, data, size);
    }
    default: return QV_EINVAL;
  }
  st = push_validity(b, a, 1, true);
  if (!st) a->length++;
  return st;
}

static QvStatus append_string_(struct ArrowArray *a, const char *s, QvError *error) {
  (void)error; /* set by nested builder calls only */
  return qv_array_append_bytes(a, s, (int64_t)strlen(s), error);
}

static QvStatus append_interval_day_time_(struct ArrowArray *a, int32_t days, int32_t ms, QvError *error) {
  (void)error; /* set by nested builder calls only */
  QvBuilder *b = builder_of(a);
  if (b == NULL) return QV_EARG;
  if (b->type.storage_type != QV_ARROW_INTERVAL_DAY_TIME) return QV_EINVAL;
  uint8_t bytes[8];
  memcpy(bytes, &days, 4);
  memcpy(bytes + 4, &ms, 4);
  return push_fixed(b, a, bytes, 8);
}

static QvStatus append_interval_month_day_nano_(struct ArrowArray *a, int32_t months,
                                                 int32_t days, int64_t ns, QvError *error) {
  (void)error; /* set by nested builder calls only */
  QvBuilder *b = builder_of(a);
  if (b == NULL) return QV_EARG;
  if (b->type.storage_type != QV_ARROW_INTERVAL_MONTH_DAY_NANO) return QV_EINVAL;
  uint8_t bytes[16];
  memcpy(bytes, &months, 4);
  memcpy(bytes + 4, &days, 4);
  memcpy(bytes + 8, &ns, 8);
  return push_fixed(b, a, bytes, 16);
}

static QvStatus finish_element_(struct ArrowArray *a, QvError *error) {
  (void)error; /* set by nested builder calls only */
  QvBuilder *b = builder_of(a);
  if (b == NULL) return QV_EARG;
  QvStatus st = QV_OK;
  int ow = qv_layout_offset_width(b->layout);
  switch (b->layout) {
    case QV_LAYOUT_LIST:
    case QV_LAYOUT_LARGE_LIST:
      st = append_offset(&b->buf1, ow, a->children[0]->length);
      break;
    case QV_LAYOUT_LIST_VIEW:
    case QV_LAYOUT_LARGE_LIST_VIEW: {
      int64_t end = a->children[0]->length;
      st = append_offset(&b->buf1, ow, b->list_child_start);
      if (!st) st = append_offset(&b->buf2, ow, end - b->list_child_start);
      b->list_child_start = end;
      break;
    }
    case QV_LAYOUT_FIXED_LIST:
      if (a->children[0]->length != (a->length + 1) * (int64_t)b->type.fixed_size) return QV_EINVAL;
      break;
    case QV_LAYOUT_STRUCT:
      for (int64_t i = 0; i < a->n_children; i++)
        if (a->children[i]->length != a->length + 1) return QV_EINVAL;
      break;
    default: return QV_EINVAL;
  }
  if (!st) st = push_validity(b, a, 1, true);
  if (!st) a->length++;
  return st;
}

static QvStatus finish_union_element_(struct ArrowArray *a, int8_t code, QvError *error) {
  (void)error; /* set by nested builder calls only */
  QvBuilder *b = builder_of(a);
  if (b == NULL) return QV_EARG;
  if (b->layout != QV_LAYOUT_SPARSE_UNION && b->layout != QV_LAYOUT_DENSE_UNION) return QV_EINVAL;
  int child = code >= 0 ? b->type.union_child_index[code] : -1;
  if (child < 0) return QV_EINVAL;
  QvStatus st;
  if (b->layout == QV_LAYOUT_SPARSE_UNION) {
    if (a->children[child]->length != a->length + 1) return QV_EINVAL;
    for (int64_t k = 0; k < a->n_children; k++) {
      if (k == child) continue;
      int64_t missing = a->length + 1 - a->children[k]->length;
      if (missing < 0) return QV_EINVAL;
      if ((st = fill(a->children[k], missing, false))) return st;
    }
  } else {
    int64_t off = a->children[child]->length - 1;
    if (off < 0 || off > INT32_MAX) return QV_EINVAL;
    int32_t o = (int32_t)off;
    if ((st = qvi_growbuf_append(&b->buf2, &o, 4))) return st;
  }
  if ((st = qvi_growbuf_append(&b->buf1, &code, 1))) return st;
  a->length++;
  return QV_OK;
}

static QvStatus finish_run_(struct ArrowArray *a, int64_t run_length, QvError *error) {
  (void)error; /* set by nested builder calls only */
  QvBuilder *b = builder_of(a);
  if (b == NULL) return QV_EARG;
  if (b->layout != QV_LAYOUT_REE || run_length <= 0) return QV_EINVAL;
  if (a->children[1]->length != a->children[0]->length + 1) return QV_EINVAL;
  int64_t end;
  if (!qvi_add_i64(a->length, run_length, &end)) return QV_ELIMIT;
  QvStatus st = qv_array_append_int(a->children[0], end, error);
  if (st) return st;
  a->length = end;
  return QV_OK;
}

static QvStatus extend_run_(struct ArrowArray *a, int64_t n, QvError *error) {
  (void)error; /* set by nested builder calls only */
  QvBuilder *b = builder_of(a);
  if (b == NULL) return QV_EARG;
  if (b->layout != QV_LAYOUT_REE || n <= 0 || a->children[0]->length == 0) return QV_EINVAL;
  QvBuilder *rb = builder_of(a->children[0]);
  if (rb == NULL) return QV_EARG;
  int64_t end;
  if (!qvi_add_i64(a->length, n, &end)) return QV_ELIMIT;
  int w = rb->type.byte_width;
  uint8_t *last = rb->buf1.data + (size_t)(a->children[0]->length - 1) * (size_t)w;
  if (w == 2) {
    if (end > INT16_MAX) return QV_ELIMIT;
    int16_t x = (int16_t)end;
    memcpy(last, &x, 2);
  } else if (w == 4) {
    if (end > INT32_MAX) return QV_ELIMIT;
    int32_t x = (int32_t)end;
    memcpy(last, &x, 4);
  } else {
    memcpy(last, &end, 8);
  }
  a->length = end;
  return QV_OK;
}

/* ---- appending from a view */

static QvStatus append_view(struct ArrowArray *a, const QvArrayView *src, int64_t start,
                            int64_t length, QvError *error);

static QvStatus st_err(QvStatus st, QvError *error) {
  if (st == QV_OK) return QV_OK;
  return qv_error_set(error, st, "appending values to a builder failed (%s)",
                      qv_status_name(st));
}

static QvStatus attach_dictionary(struct ArrowArray *a, const QvArrayView *src, QvError *error) {
  const QvArrayView *d = src->dictionary;
  QvArrayPrivate *p = a->private_data;
  if (d->array && qv_array_is_quiver(d->array) &&
      ((QvArrayPrivate *)d->array->private_data)->builder == NULL) {
    struct ArrowArray shared;
    QvStatus st = qv_array_share(d->array, &shared, error);
    if (st) return st;
    if (a->dictionary->release) a->dictionary->release(a->dictionary);
    *p->dictionary_storage = shared;
    return QV_OK;
  }
  if (builder_of(a->dictionary) && a->dictionary->length == 0)
    return append_view(a->dictionary, d, 0, d->length, error);
  return QV_OK;
}

static QvStatus append_view(struct ArrowArray *a, const QvArrayView *src, int64_t start,
                            int64_t length, QvError *error) {
  QvBuilder *b = builder_of(a);
  if (b == NULL) return qv_error_set(error, QV_EARG, "not a building array");
  if (b->type.storage_type != src->type.storage_type || a->n_children != src->n_children)
    return qv_error_set(error, QV_EINVAL, "cannot append a %s array to a %s builder",
                        qv_arrow_type_name(src->type.type), qv_arrow_type_name(b->type.type));
  if (start < 0 || length < 0 || start > src->length - length)
    return qv_error_set(error, QV_EARG, "range %lld+%lld outside an array of %lld", (long long)start,
                        (long long)length, (long long)src->length);
  QvStatus st = QV_OK;
  int64_t end = start + length;
  if (src->dictionary && (st = attach_dictionary(a, src, error))) return st;
  switch (b->layout) {
    case QV_LAYOUT_NULL: return st_err(fill(a, length, false), error);
    case QV_LAYOUT_STRUCT:
    case QV_LAYOUT_FIXED_LIST: {
      int64_t k = b->layout == QV_LAYOUT_STRUCT ? 1 : b->type.fixed_size;
      for (int64_t c = 0; c < a->n_children; c++)
        if ((st = append_view(a->children[c], &src->children[c], (src->offset + start) * k,
                              length * k, error)))
          return st;
      st = push_validity_from(b, a, src->buffer[0], src->offset + start, length);
      if (!st) a->length += length;
      return st_err(st, error);
    }
    case QV_LAYOUT_FIXED: {
      /* bulk: values (nulls included) then validity */
      int64_t w = b->type.byte_width;
      if (length * w > 0)
        st = qvi_growbuf_append(&b->buf1, src->buffer[1] + (src->offset + start) * w, length * w);
      if (!st) st = push_validity_from(b, a, src->buffer[0], src->offset + start, length);
      if (!st) a->length += length;
      return st_err(st, error);
    }
    case QV_LAYOUT_SPARSE_UNION:
      for (int64_t c = 0; c < a->n_children; c++)
        if ((st = append_view(a->children[c], &src->children[c], src->offset + start, length,
                              error)))
          return st;
      st = qvi_growbuf_append(&b->buf1, src->buffer[1] + src->offset + start, length);
      if (!st) a->length += length;
      return st_err(st, error);
    case QV_LAYOUT_REE: {
      int64_t i = start;
      while (i < end && !st) {
        int64_t run = qv_array_view_get_run(src, i);
        const QvArrayView *re = &src->children[0];
        int64_t run_end = qvi_ld_int(re->buffer[1] + (size_t)(re->offset + run) * (size_t)re->type.byte_width,
                                    re->type.byte_width, true) - src->offset;
        int64_t n = (run_end < end ? run_end : end) - i;
        if ((st = append_view(a->children[1], &src->children[1], run, 1, error))) return st;
        st = qv_array_finish_run(a, n, error);
        i += n;
      }
      return st_err(st, error);
    }
    default: break;
  }
  for (int64_t i = start; i < end && !st; i++) {
    if (b->layout != QV_LAYOUT_DENSE_UNION && qv_array_view_is_null(src, i)) {
      st = fill(a, 1, false);
      continue;
    }
    switch (b->layout) {
      case QV_LAYOUT_BOOL: st = qv_array_append_int(a, qv_array_view_get_int(src, i), error); break;
      case QV_LAYOUT_BINARY:
      case QV_LAYOUT_LARGE_BINARY:
      case QV_LAYOUT_VIEW: {
        QvBytes v = qv_array_view_get_bytes(src, i);
        st = qv_array_append_bytes(a, v.data, v.size, error);
        break;
      }
      case QV_LAYOUT_LIST:
      case QV_LAYOUT_LARGE_LIST:
      case QV_LAYOUT_LIST_VIEW:
      case QV_LAYOUT_LARGE_LIST_VIEW: {
        int64_t cs, cl;
        qv_array_view_get_list(src, i, &cs, &cl);
        if ((st = append_view(a->children[0], &src->children[0], cs, cl, error))) return st;
        st = qv_array_finish_element(a, error);
        break;
      }
      case QV_LAYOUT_DENSE_UNION: {
        int64_t child, idx;
        qv_array_view_get_union(src, i, &child, &idx);
        if ((st = append_view(a->children[child], &src->children[child], idx, 1, error))) return st;
        st = qv_array_finish_union_element(a, b->type.union_type_ids[child], error);
        break;
      }
      default: st = QV_EINVAL;
    }
  }
  return st_err(st, error);
}


/* ---- the public builders: their failures with a message
 *
 * The steps above return bare codes (a growing buffer cannot say which
 * value failed); the caller is told which call failed and why. A message
 * set deeper (a nested builder call) is kept. */
static QvStatus builder_failed(QvStatus st, const struct ArrowArray *a, const char *what,
                               QvError *error) {
  if (st == QV_OK || (error && error->code == st && error->message[0])) return st;
  QvBuilder *b = builder_of((struct ArrowArray *)a);
  const char *type = b ? qv_arrow_type_name(b->type.type) : "?";
  switch (st) {
    case QV_ENOMEM: return qv_error_set(error, st, "qv_array_%s: out of memory", what);
    case QV_ELIMIT:
      return qv_error_set(error, st,
                          "qv_array_%s: a %s array would exceed its format's limits (32-bit "
                          "offsets or sizes, int64 lengths)",
                          what, type);
    case QV_EARG:
      return qv_error_set(error, st,
                          "qv_array_%s: not an array in the building state "
                          "(qv_array_init_from_schema), or a negative count or NULL data",
                          what);
    default:
      return qv_error_set(error, st,
                          "qv_array_%s: not valid for a %s array here (a value out of the "
                          "type's range, a call this layout does not take, or children that "
                          "disagree in length)",
                          what, type);
  }
}

QvStatus qv_array_append_null(struct ArrowArray *array, int64_t n, QvError *error) {
  if (error) qv_error_clear(error);
  return builder_failed(append_null_(array, n, error), array, "append_null", error);
}

QvStatus qv_array_append_empty(struct ArrowArray *array, int64_t n, QvError *error) {
  if (error) qv_error_clear(error);
  return builder_failed(append_empty_(array, n, error), array, "append_empty", error);
}

QvStatus qv_array_append_int(struct ArrowArray *a, int64_t v, QvError *error) {
  if (error) qv_error_clear(error);
  return builder_failed(append_int_(a, v, error), a, "append_int", error);
}

QvStatus qv_array_append_uint(struct ArrowArray *a, uint64_t v, QvError *error) {
  if (error) qv_error_clear(error);
  return builder_failed(append_uint_(a, v, error), a, "append_uint", error);
}

QvStatus qv_array_append_double(struct ArrowArray *a, double v, QvError *error) {
  if (error) qv_error_clear(error);
  return builder_failed(append_double_(a, v, error), a, "append_double", error);
}

QvStatus qv_array_append_bytes(struct ArrowArray *a, const void *data, int64_t size, QvError *error) {
  if (error) qv_error_clear(error);
  return builder_failed(append_bytes_(a, data, size, error), a, "append_bytes", error);
}

QvStatus qv_array_append_string(struct ArrowArray *a, const char *s, QvError *error) {
  if (error) qv_error_clear(error);
  return builder_failed(append_string_(a, s, error), a, "append_string", error);
}

QvStatus qv_array_append_interval_day_time(struct ArrowArray *a, int32_t days, int32_t ms, QvError *error) {
  if (error) qv_error_clear(error);
  return builder_failed(append_interval_day_time_(a, days, ms, error), a, "append_interval_day_time", error);
}

QvStatus qv_array_append_interval_month_day_nano(struct ArrowArray *a, int32_t months,
                                                 int32_t days, int64_t ns, QvError *error) {
  if (error) qv_error_clear(error);
  return builder_failed(append_interval_month_day_nano_(a, months, days, ns, error), a, "append_interval_month_day_nano", error);
}

QvStatus qv_array_finish_element(struct ArrowArray *a, QvError *error) {
  if (error) qv_error_clear(error);
  return builder_failed(finish_element_(a, error), a, "finish_element", error);
}

QvStatus qv_array_finish_union_element(struct ArrowArray *a, int8_t code, QvError *error) {
  if (error) qv_error_clear(error);
  return builder_failed(finish_union_element_(a, code, error), a, "finish_union_element", error);
}

QvStatus qv_array_finish_run(struct ArrowArray *a, int64_t run_length, QvError *error) {
  if (error) qv_error_clear(error);
  return builder_failed(finish_run_(a, run_length, error), a, "finish_run", error);
}

QvStatus qv_array_extend_run(struct ArrowArray *a, int64_t n, QvError *error) {
  if (error) qv_error_clear(error);
  return builder_failed(extend_run_(a, n, error), a, "extend_run", error);
}

QvStatus qv_array_append_view(struct ArrowArray *array, const QvArrayView *src, int64_t start,
                              int64_t length, QvError *error) {
  return append_view(array, src, start, length, error);
}

/* ---- finishing */

typedef struct Holder {
  int64_t n;
  uint8_t *bufs[];
} Holder;

static void holder_free(void *p) {
  Holder *h = p;
  for (int64_t i = 0; i < h->n; i++) qv_free(h->bufs[i]);
  free(h);
}

static const void *or_zero(const uint8_t *p) { return p ? (const void *)p : (const void *)qvi_zero_block; }

static QvStatus finish_node(struct ArrowArray *a, QvError *error) {
  QvArrayPrivate *p = a->private_data;
  QvBuilder *b = p->builder;
  if (b == NULL) return QV_OK; /* already finished (e.g. a shared dictionary) */
  QvStatus st;
  for (int64_t i = 0; i < a->n_children; i++)
    if ((st = finish_node(a->children[i], error))) return st;
  if (a->dictionary && (st = finish_node(a->dictionary, error))) return st;
  int64_t nb = a->n_buffers;
  if (b->layout == QV_LAYOUT_VIEW) {
    nb = 3 + b->n_variadic;
    const void **ptrs;
    if (p->buffer_ptrs_apart) {
      ptrs = realloc(p->buffer_ptrs, (size_t)nb * sizeof *ptrs);
    } else { /* the pointers in the node's block stay there, unused */
      ptrs = malloc((size_t)nb * sizeof *ptrs);
      if (ptrs) memcpy(ptrs, p->buffer_ptrs, (size_t)(a->n_buffers < nb ? a->n_buffers : nb) * sizeof *ptrs);
    }
    if (ptrs == NULL) return qv_error_set(error, QV_ENOMEM, "out of memory");
    p->buffer_ptrs = ptrs;
    p->buffer_ptrs_apart = true;
    a->buffers = ptrs;
    a->n_buffers = nb;
    if (b->n_variadic > 0) {
      p->variadic_sizes = malloc((size_t)b->n_variadic * sizeof(int64_t));
      if (p->variadic_sizes == NULL) return qv_error_set(error, QV_ENOMEM, "out of memory");
    }
  }
  Holder *h = malloc(sizeof *h + (size_t)(3 + b->n_variadic) * sizeof(uint8_t *));
  if (h == NULL) return qv_error_set(error, QV_ENOMEM, "out of memory");
  QvOwner *owner = qv_owner_new(holder_free, h);
  if (owner == NULL) {
    free(h);
    return qv_error_set(error, QV_ENOMEM, "out of memory");
  }
  /* from here on the memory belongs to the owner */
  h->n = 0;
  bool nulls = b->has_validity && b->null_count > 0;
  const uint8_t *validity = nulls ? b->validity.data : NULL;
  h->bufs[h->n++] = b->validity.data;
  h->bufs[h->n++] = b->buf1.data;
  h->bufs[h->n++] = b->buf2.data;
  const void **ptr = p->buffer_ptrs;
  switch (b->layout) {
    case QV_LAYOUT_NULL:
    case QV_LAYOUT_REE: break;
    case QV_LAYOUT_STRUCT:
    case QV_LAYOUT_FIXED_LIST: ptr[0] = validity; break;
    case QV_LAYOUT_BOOL:
    case QV_LAYOUT_FIXED:
    case QV_LAYOUT_LIST:
    case QV_LAYOUT_LARGE_LIST:
      ptr[0] = validity;
      ptr[1] = or_zero(b->buf1.data);
      break;
    case QV_LAYOUT_BINARY:
    case QV_LAYOUT_LARGE_BINARY:
    case QV_LAYOUT_LIST_VIEW:
    case QV_LAYOUT_LARGE_LIST_VIEW:
      ptr[0] = validity;
      ptr[1] = or_zero(b->buf1.data);
      ptr[2] = or_zero(b->buf2.data);
      break;
    case QV_LAYOUT_VIEW:
      ptr[0] = validity;
      ptr[1] = or_zero(b->buf1.data);
      for (int64_t k = 0; k < b->n_variadic; k++) {
        h->bufs[h->n++] = b->variadic[k].data;
        ptr[2 + k] = or_zero(b->variadic[k].data);
        p->variadic_sizes[k] = b->variadic[k].size;
      }
      ptr[2 + b->n_variadic] = p->variadic_sizes ? (const void *)p->variadic_sizes : qvi_zero_block;
      if (b->n_variadic) memset(b->variadic, 0, (size_t)b->n_variadic * sizeof *b->variadic);
      break;
    case QV_LAYOUT_SPARSE_UNION: ptr[0] = or_zero(b->buf1.data); break;
    case QV_LAYOUT_DENSE_UNION:
      ptr[0] = or_zero(b->buf1.data);
      ptr[1] = or_zero(b->buf2.data);
      break;
  }
  a->null_count = b->layout == QV_LAYOUT_NULL ? a->length : b->null_count;
  a->offset = 0;
  memset(&b->validity, 0, sizeof b->validity);
  memset(&b->buf1, 0, sizeof b->buf1);
  memset(&b->buf2, 0, sizeof b->buf2);
  p->owner = owner;
  p->builder = NULL;
  qvi_builder_free(b);
  return QV_OK;
}

QvStatus qv_array_finish_building(struct ArrowArray *array, QvValidateLevel level,
                                  QvError *error) {
  QvBuilder *b = builder_of(array);
  if (b == NULL) return qv_error_set(error, QV_EARG, "array is not being built");
  struct ArrowSchema *schema = b->schema;
  b->schema = NULL;
  QvStatus st = finish_node(array, error);
  if (st == QV_OK && schema) st = qv_array_validate(array, schema, level, error);
  if (schema) {
    schema->release(schema);
    free(schema);
  }
  return st;
}
