/* QvArrayView: decoded views of arrays, their validation (cheap and full)
 * and value access. Everything that reads a buffer checks, before it reads,
 * that the buffer is large enough: views of hostile data are validated
 * before any value is read. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "quiver/advanced.h"
#include "array/array_internal.h"
#include "util/utf8.h"
#include "util/half.h"

/* ---- init / reset */

static QvStatus view_init(QvArrayView *v, const struct ArrowSchema *s, int depth,
                          QvError *error) {
  memset(v, 0, sizeof *v);
  if (depth > QV_ARRAY_MAX_DEPTH)
    return qv_error_set(error, QV_ELIMIT, "schema nested deeper than %d", QV_ARRAY_MAX_DEPTH);
  QvStatus st = qv_arrow_schema_view_init(&v->type, s, error);
  if (st) return st;
  v->null_count = 0;
  if (v->type.n_children > 0) {
    v->children = calloc((size_t)v->type.n_children, sizeof *v->children);
    if (v->children == NULL) return qv_error_set(error, QV_ENOMEM, "out of memory");
    v->n_children = v->type.n_children;
    for (int64_t i = 0; i < v->n_children; i++)
      if ((st = view_init(&v->children[i], s->children[i], depth + 1, error)))
        return qv_error_prefix(error, "child %lld", (long long)i);
  }
  if (s->dictionary) {
    v->dictionary = calloc(1, sizeof *v->dictionary);
    if (v->dictionary == NULL) return qv_error_set(error, QV_ENOMEM, "out of memory");
    if ((st = view_init(v->dictionary, s->dictionary, depth + 1, error)))
      return qv_error_prefix(error, "dictionary");
  }
  return QV_OK;
}

QvStatus qv_array_view_init(QvArrayView *view, const struct ArrowSchema *schema,
                            QvError *error) {
  QvStatus st = view_init(view, schema, 0, error);
  if (st) qv_array_view_reset(view);
  return st;
}

void qv_array_view_reset(QvArrayView *v) {
  if (v == NULL) return;
  for (int64_t i = 0; i < v->n_children; i++) qv_array_view_reset(&v->children[i]);
  free(v->children);
  if (v->dictionary) {
    qv_array_view_reset(v->dictionary);
    free(v->dictionary);
  }
  free(v->variadic);
  free(v->variadic_size);
  memset(v, 0, sizeof *v);
}

QvStatus qv_array_view_reserve_variadic(QvArrayView *v, int64_t n, QvError *error) {
  if (n <= v->variadic_capacity) return QV_OK;
  if (n > (int64_t)(SIZE_MAX / 16))
    return qv_error_set(error, QV_ELIMIT, "%lld variadic buffers", (long long)n);
  const uint8_t **p = realloc(v->variadic, (size_t)n * sizeof *p);
  if (p == NULL) return qv_error_set(error, QV_ENOMEM, "out of memory");
  v->variadic = p;
  int64_t *s = realloc(v->variadic_size, (size_t)n * sizeof *s);
  if (s == NULL) return qv_error_set(error, QV_ENOMEM, "out of memory");
  v->variadic_size = s;
  v->variadic_capacity = n;
  return QV_OK;
}

/* ---- set from an ArrowArray */

static QvStatus set_array(QvArrayView *v, const struct ArrowArray *a, int depth,
                          QvError *error) {
  if (depth > QV_ARRAY_MAX_DEPTH)
    return qv_error_set(error, QV_ELIMIT, "array nested deeper than %d", QV_ARRAY_MAX_DEPTH);
  if (a == NULL || a->release == NULL)
    return qv_error_set(error, QV_EINVAL, "array is NULL or released");
  const char *tn = qv_arrow_type_name(v->type.type);
  v->array = a;
  v->offset = a->offset;
  v->length = a->length;
  v->null_count = a->null_count;
  v->n_variadic = 0;
  memset(v->buffer, 0, sizeof v->buffer);
  memset(v->buffer_size, 0, sizeof v->buffer_size);
  int64_t end;
  if (a->length < 0 || a->offset < 0 || !qvi_add_i64(a->offset, a->length, &end))
    return qv_error_set(error, QV_EINVAL, "%s array: bad length %lld / offset %lld", tn,
                        (long long)a->length, (long long)a->offset);
  if (a->null_count < -1 || a->null_count > a->length)
    return qv_error_set(error, QV_EINVAL, "%s array: null_count %lld outside -1..%lld", tn,
                        (long long)a->null_count, (long long)a->length);
  QvLayout L = qvi_view_layout(v);
  int64_t nb = qv_layout_n_buffers(L);
  if (L == QV_LAYOUT_VIEW) {
    if (a->n_buffers < 3)
      return qv_error_set(error, QV_EINVAL, "%s array: %lld buffers, needs at least 3", tn,
                          (long long)a->n_buffers);
  } else if (a->n_buffers != nb) {
    return qv_error_set(error, QV_EINVAL, "%s array: %lld buffers, expected %lld", tn,
                        (long long)a->n_buffers, (long long)nb);
  }
  if (a->n_buffers > 0 && a->buffers == NULL)
    return qv_error_set(error, QV_EINVAL, "%s array: buffers pointer is NULL", tn);
  if (a->n_children != v->n_children)
    return qv_error_set(error, QV_EINVAL, "%s array: %lld children, schema has %lld", tn,
                        (long long)a->n_children, (long long)v->n_children);
  if (a->n_children > 0 && a->children == NULL)
    return qv_error_set(error, QV_EINVAL, "%s array: children pointer is NULL", tn);
  if ((a->dictionary != NULL) != (v->dictionary != NULL))
    return qv_error_set(error, QV_EINVAL, "%s array: dictionary %s but the schema %s", tn,
                        a->dictionary ? "present" : "missing",
                        v->dictionary ? "has one" : "has none");
  QvStatus st;
  for (int64_t i = 0; i < v->n_children; i++)
    if ((st = set_array(&v->children[i], a->children[i], depth + 1, error)))
      return qv_error_prefix(error, "child %lld", (long long)i);
  if (v->dictionary && (st = set_array(v->dictionary, a->dictionary, depth + 1, error)))
    return qv_error_prefix(error, "dictionary");

  const uint8_t *const *b = (const uint8_t *const *)a->buffers;
  bool ok = true;
  if (qv_layout_has_validity(L)) {
    v->buffer[0] = b[0];
    v->buffer_size[0] = b[0] ? qvi_bitmap_bytes(end) : 0;
  }
  int ow = qv_layout_offset_width(L);
  switch (L) {
    case QV_LAYOUT_NULL:
    case QV_LAYOUT_REE:
    case QV_LAYOUT_STRUCT:
    case QV_LAYOUT_FIXED_LIST: break;
    case QV_LAYOUT_BOOL:
      v->buffer[1] = b[1];
      v->buffer_size[1] = qvi_bitmap_bytes(end);
      break;
    case QV_LAYOUT_FIXED:
      v->buffer[1] = b[1];
      ok = qvi_mul_i64(end, v->type.byte_width, &v->buffer_size[1]);
      break;
    case QV_LAYOUT_BINARY:
    case QV_LAYOUT_LARGE_BINARY:
    case QV_LAYOUT_LIST:
    case QV_LAYOUT_LARGE_LIST:
      v->buffer[1] = b[1];
      if (a->length > 0 || b[1] != NULL) ok = qvi_mul_i64(end + 1, ow, &v->buffer_size[1]);
      if (ok && (L == QV_LAYOUT_BINARY || L == QV_LAYOUT_LARGE_BINARY)) {
        v->buffer[2] = b[2];
        int64_t last = (b[1] && v->buffer_size[1] > 0) ? qvi_ld_offset(b[1], ow, end) : 0;
        v->buffer_size[2] = last > 0 ? last : 0;
      }
      break;
    case QV_LAYOUT_LIST_VIEW:
    case QV_LAYOUT_LARGE_LIST_VIEW:
      v->buffer[1] = b[1];
      v->buffer[2] = b[2];
      ok = qvi_mul_i64(end, ow, &v->buffer_size[1]);
      v->buffer_size[2] = v->buffer_size[1];
      break;
    case QV_LAYOUT_VIEW: {
      v->buffer[1] = b[1];
      ok = qvi_mul_i64(end, 16, &v->buffer_size[1]);
      int64_t nv = a->n_buffers - 3;
      if ((st = qv_array_view_reserve_variadic(v, nv, error))) return st;
      const uint8_t *sizes = b[a->n_buffers - 1];
      if (nv > 0 && sizes == NULL)
        return qv_error_set(error, QV_EINVAL, "%s array: variadic sizes buffer is NULL", tn);
      for (int64_t k = 0; k < nv; k++) {
        v->variadic[k] = b[2 + k];
        v->variadic_size[k] = qvi_ld_i64(sizes + 8 * k);
        if (v->variadic_size[k] < 0 || (v->variadic_size[k] > 0 && b[2 + k] == NULL))
          return qv_error_set(error, QV_EINVAL, "%s array: variadic buffer %lld is invalid", tn,
                              (long long)k);
      }
      v->n_variadic = nv;
      break;
    }
    case QV_LAYOUT_SPARSE_UNION:
      v->buffer[1] = b[0];
      v->buffer_size[1] = end;
      break;
    case QV_LAYOUT_DENSE_UNION:
      v->buffer[1] = b[0];
      v->buffer_size[1] = end;
      v->buffer[2] = b[1];
      ok = qvi_mul_i64(end, 4, &v->buffer_size[2]);
      break;
  }
  if (!ok) return qv_error_set(error, QV_EINVAL, "%s array: buffer size overflows", tn);
  for (int k = 1; k < 3; k++)
    if (v->buffer[k] == NULL && v->buffer_size[k] > 0)
      return qv_error_set(error, QV_EINVAL, "%s array: buffer %d is NULL but needs %lld bytes",
                          tn, k, (long long)v->buffer_size[k]);
  return QV_OK;
}

QvStatus qv_array_view_set_array(QvArrayView *view, const struct ArrowArray *array,
                                 QvValidateLevel level, QvError *error) {
  QvStatus st = set_array(view, array, 0, error);
  if (st) return st;
  return qv_array_view_validate(view, level, 0, error);
}

/* ---- validation */

typedef struct Ctx {
  QvValidateLevel level;
  bool dictionaries;
  bool decimal_precision; /* not QV_VALIDATE_DECIMALS_UNBOUNDED */
  QvError *error;
} Ctx;

#define FAIL(...) qv_error_set(c->error, QV_EINVAL, __VA_ARGS__)

static QvStatus check_size(Ctx *c, const QvArrayView *v, int slot, int64_t need_bytes,
                           const char *what) {
  if (v->buffer_size[slot] < need_bytes)
    return FAIL("%s array: %s buffer has %lld bytes, needs %lld for offset %lld + length %lld",
                qv_arrow_type_name(v->type.type), what, (long long)v->buffer_size[slot],
                (long long)need_bytes, (long long)v->offset, (long long)v->length);
  if (need_bytes > 0 && v->buffer[slot] == NULL)
    return FAIL("%s array: %s buffer is missing", qv_arrow_type_name(v->type.type), what);
  return QV_OK;
}

static QvStatus first_bad_offset(Ctx *c, const QvArrayView *v, const uint8_t *o, int w) {
  int64_t end = v->offset + v->length;
  for (int64_t i = v->offset + 1; i <= end; i++)
    if (qvi_ld_offset(o, w, i) < qvi_ld_offset(o, w, i - 1))
      return FAIL("%s array: offsets decrease at index %lld (%lld after %lld)",
                  qv_arrow_type_name(v->type.type), (long long)(i - 1 - v->offset),
                  (long long)qvi_ld_offset(o, w, i), (long long)qvi_ld_offset(o, w, i - 1));
  return QV_OK;
}

/* Offsets-based layouts: the range [first, last] must lie inside a target
 * of `limit` elements/bytes. */
static QvStatus check_offsets(Ctx *c, const QvArrayView *v, int64_t limit, const char *target) {
  QvLayout L = qvi_view_layout(v);
  int w = qv_layout_offset_width(L);
  int64_t end = v->offset + v->length;
  if (v->length == 0) {
    /* an empty array may omit its offsets */
    if (v->buffer_size[1] == 0) return QV_OK;
  }
  int64_t need;
  if (!qvi_mul_i64(end + 1, w, &need)) return FAIL("offsets size overflows");
  QvStatus st = check_size(c, v, 1, need, "offsets");
  if (st) return st;
  const uint8_t *o = v->buffer[1];
  int64_t first = qvi_ld_offset(o, w, v->offset), last = qvi_ld_offset(o, w, end);
  if (first < 0 || first > last || last > limit)
    return FAIL("%s array: offsets run from %lld to %lld, outside the %lld %s",
                qv_arrow_type_name(v->type.type), (long long)first, (long long)last,
                (long long)limit, target);
  if (c->level >= QV_VALIDATE_FULL && !qvi_offsets_monotonic(o, w, v->offset, end))
    return first_bad_offset(c, v, o, w);
  return QV_OK;
}

/* UTF-8 of each non-null string of an offsets-based string array. */
static QvStatus check_utf8_offsets(Ctx *c, const QvArrayView *v) {
  if (v->length == 0) return QV_OK;
  int w = qv_layout_offset_width(qvi_view_layout(v));
  const uint8_t *o = v->buffer[1], *d = v->buffer[2];
  int64_t end = v->offset + v->length;
  int64_t first = qvi_ld_offset(o, w, v->offset), last = qvi_ld_offset(o, w, end);
  /* Fast path: the whole span is valid UTF-8 and every string starts on a
   * character boundary, which is the same as every string being valid. */
  if (last == first) return QV_OK;
  int kind = qvi_utf8_classify(d + first, last - first);
  if (kind == 1) return QV_OK; /* ASCII only: every offset is a boundary */
  if (kind == 2) {
    bool bad = false;
    for (int64_t i = v->offset; i < end; i++) {
      int64_t s = qvi_ld_offset(o, w, i);
      bad |= s < last && (d[s] & 0xC0) == 0x80;
    }
    if (!bad) return QV_OK;
  }
  for (int64_t i = v->offset; i < end; i++) {
    if (v->buffer[0] && !qvi_bit_get(v->buffer[0], i)) continue;
    int64_t s = qvi_ld_offset(o, w, i), e = qvi_ld_offset(o, w, i + 1);
    if (!qvi_utf8_valid(d + s, e - s))
      return FAIL("%s array: value %lld is not valid UTF-8", qv_arrow_type_name(v->type.type),
                  (long long)(i - v->offset));
  }
  return QV_OK;
}

static QvStatus check_views(Ctx *c, const QvArrayView *v) {
  int64_t end = v->offset + v->length;
  const uint8_t *views = v->buffer[1];
  bool utf8 = v->type.storage_type == QV_ARROW_STRING_VIEW;
  for (int64_t i = v->offset; i < end; i++) {
    if (v->buffer[0] && !qvi_bit_get(v->buffer[0], i)) continue;
    const uint8_t *p = views + 16 * i;
    int32_t len = qvi_ld_i32(p);
    const uint8_t *data;
    if (len < 0) return FAIL("view %lld has negative length %d", (long long)(i - v->offset), len);
    if (len <= 12) {
      data = p + 4;
    } else {
      int32_t bi = qvi_ld_i32(p + 8), off = qvi_ld_i32(p + 12);
      if (bi < 0 || bi >= v->n_variadic)
        return FAIL("view %lld refers to data buffer %d of %lld", (long long)(i - v->offset), bi,
                    (long long)v->n_variadic);
      if (off < 0 || (int64_t)off + len > v->variadic_size[bi])
        return FAIL("view %lld: bytes %d..%lld are outside data buffer %d (%lld bytes)",
                    (long long)(i - v->offset), off, (long long)off + len, bi,
                    (long long)v->variadic_size[bi]);
      data = v->variadic[bi] + off;
      if (memcmp(data, p + 4, 4) != 0)
        return FAIL("view %lld: prefix does not match its data", (long long)(i - v->offset));
    }
    if (utf8 && !qvi_utf8_valid(data, len))
      return FAIL("utf8_view array: value %lld is not valid UTF-8", (long long)(i - v->offset));
  }
  return QV_OK;
}

static QvStatus validate_node(Ctx *c, const QvArrayView *v, int depth);

static QvStatus validate_children(Ctx *c, const QvArrayView *v, int depth) {
  for (int64_t i = 0; i < v->n_children; i++) {
    QvStatus st = validate_node(c, &v->children[i], depth + 1);
    if (st) {
      const struct ArrowSchema *s = v->children[i].type.schema;
      return qv_error_prefix(c->error, "child %lld (%.64s)", (long long)i,
                             s && s->name ? s->name : "");
    }
  }
  return QV_OK;
}

static QvStatus check_ree(Ctx *c, const QvArrayView *v) {
  const QvArrayView *re = &v->children[0], *values = &v->children[1];
  if (re->length != values->length)
    return FAIL("run-end encoded array: %lld run ends but %lld values", (long long)re->length,
                (long long)values->length);
  if (re->null_count > 0 || (re->null_count < 0 && re->buffer[0] && c->level >= QV_VALIDATE_FULL &&
                             qv_bitmap_count_set(re->buffer[0], re->offset, re->length) != re->length))
    return FAIL("run-end encoded array: run ends contain nulls");
  int64_t end = v->offset + v->length;
  if (v->length == 0) return QV_OK;
  if (re->length == 0)
    return FAIL("run-end encoded array of length %lld has no runs", (long long)v->length);
  int w = re->type.byte_width;
  const uint8_t *d = re->buffer[1] + (size_t)re->offset * (size_t)w;
  int64_t last = qvi_ld_int(d + (size_t)(re->length - 1) * (size_t)w, w, true);
  if (last < end)
    return FAIL("run-end encoded array: last run end %lld is before offset + length %lld",
                (long long)last, (long long)end);
  if (c->level < QV_VALIDATE_FULL) return QV_OK;
  int64_t prev = 0;
  for (int64_t i = 0; i < re->length; i++) {
    int64_t r = qvi_ld_int(d + (size_t)i * (size_t)w, w, true);
    if (r <= prev)
      return FAIL("run-end encoded array: run end %lld (%lld) is not greater than %lld",
                  (long long)i, (long long)r, (long long)prev);
    prev = r;
  }
  return QV_OK;
}

static QvStatus check_union(Ctx *c, const QvArrayView *v) {
  int64_t end = v->offset + v->length;
  QvStatus st = check_size(c, v, 1, end, "type ids");
  if (st) return st;
  bool dense = v->type.storage_type == QV_ARROW_DENSE_UNION;
  if (dense) {
    int64_t need;
    if (!qvi_mul_i64(end, 4, &need)) return FAIL("union offsets size overflows");
    if ((st = check_size(c, v, 2, need, "offsets"))) return st;
  } else {
    for (int64_t k = 0; k < v->n_children; k++)
      if (v->children[k].length < end)
        return FAIL("sparse union: child %lld has %lld values, needs %lld", (long long)k,
                    (long long)v->children[k].length, (long long)end);
  }
  if (c->level < QV_VALIDATE_FULL) return QV_OK;
  const int8_t *ids = (const int8_t *)v->buffer[1];
  for (int64_t i = v->offset; i < end; i++) {
    int8_t id = ids[i];
    int child = id >= 0 ? v->type.union_child_index[id] : -1;
    if (child < 0)
      return FAIL("union: value %lld has unknown type code %d", (long long)(i - v->offset), id);
    if (dense) {
      int32_t off = qvi_ld_i32(v->buffer[2] + 4 * i);
      if (off < 0 || off >= v->children[child].length)
        return FAIL("dense union: value %lld has offset %d outside child %d of %lld values",
                    (long long)(i - v->offset), off, child,
                    (long long)v->children[child].length);
    }
  }
  return QV_OK;
}

static QvStatus check_dictionary_indices(Ctx *c, const QvArrayView *v) {
  int64_t dict_len = v->dictionary->length;
  int w = v->type.byte_width;
  bool is_signed = v->type.storage_type == QV_ARROW_INT8 || v->type.storage_type == QV_ARROW_INT16 ||
                   v->type.storage_type == QV_ARROW_INT32 || v->type.storage_type == QV_ARROW_INT64;
  int64_t end = v->offset + v->length;
  const uint8_t *d = v->buffer[1];
  const uint8_t *valid = v->buffer[0];
  bool bad = false;
  if (valid == NULL) {
    for (int64_t i = v->offset; i < end; i++) {
      int64_t x = qvi_ld_int(d + (size_t)i * (size_t)w, w, is_signed);
      bad |= (is_signed || w < 8) ? (x < 0 || x >= dict_len) : ((uint64_t)x >= (uint64_t)dict_len);
    }
    if (!bad) return QV_OK;
  }
  for (int64_t i = v->offset; i < end; i++) {
    if (valid && !qvi_bit_get(valid, i)) continue;
    int64_t x = qvi_ld_int(d + (size_t)i * (size_t)w, w, is_signed);
    bool out = (is_signed || w < 8) ? (x < 0 || x >= dict_len) : ((uint64_t)x >= (uint64_t)dict_len);
    if (out && !is_signed && w == 8) /* a uint64 index from 2^63 is shown as itself */
      return FAIL("dictionary index %llu at %lld is outside the dictionary of %lld values",
                  (unsigned long long)x, (long long)(i - v->offset), (long long)dict_len);
    if (out)
      return FAIL("dictionary index %lld at %lld is outside the dictionary of %lld values",
                  (long long)x, (long long)(i - v->offset), (long long)dict_len);
  }
  return QV_OK;
}

/* Full validation: every non-null decimal's magnitude is below
 * 10^precision, as Arrow C++'s ValidateFull checks ("Decimal value 1234567.89
 * does not fit in precision of 5"). Values are host-order two's complement
 * of bit_width bits, compared as 256-bit magnitudes. */
static QvStatus check_decimals(Ctx *c, const QvArrayView *v) {
  int n = v->type.byte_width;
  int32_t precision = v->type.decimal_precision;
  if (n < 4 || n > 32 || precision <= 0 || precision > 76) return QV_OK; /* the type is checked elsewhere */
  uint32_t l32[8] = {1, 0, 0, 0, 0, 0, 0, 0}; /* 10^precision < 2^256 */
  for (int32_t k = 0; k < precision; k++) {
    uint64_t carry = 0;
    for (int w = 0; w < 8; w++) {
      uint64_t t = (uint64_t)l32[w] * 10u + carry;
      l32[w] = (uint32_t)t;
      carry = t >> 32;
    }
  }
  uint64_t limit[4];
  for (int w = 0; w < 4; w++) limit[w] = (uint64_t)l32[2 * w] | (uint64_t)l32[2 * w + 1] << 32;
  const uint8_t *d = v->buffer[1], *valid = v->buffer[0];
  int64_t end = v->offset + v->length;
  for (int64_t i = v->offset; i < end; i++) {
    if (valid && !qvi_bit_get(valid, i)) continue;
    uint8_t le[32];
    qvi_le_bytes(le, d + (size_t)i * (size_t)n, (size_t)n);
    bool neg = (le[n - 1] & 0x80) != 0;
    memset(le + n, neg ? 0xFF : 0, (size_t)(32 - n));
    uint64_t m[4];
    for (int w = 0; w < 4; w++) m[w] = qvi_le_u64(le + 8 * w);
    if (neg) { /* magnitude = ~x + 1 */
      uint64_t carry = 1;
      for (int w = 0; w < 4; w++) {
        m[w] = ~m[w] + carry;
        carry = carry && m[w] == 0;
      }
    }
    bool fits = false;
    for (int w = 3; w >= 0; w--) {
      if (m[w] != limit[w]) {
        fits = m[w] < limit[w];
        break;
      }
    }
    if (fits) continue;
    char *text = NULL;
    QvError ignored;
    if (qv_array_view_format_human(v, i - v->offset, 0, &text, &ignored) != QV_OK) text = NULL;
    QvStatus st = FAIL("%s array: value %s at %lld does not fit in precision %d", qv_arrow_type_name(v->type.type),
                       text ? text : "?", (long long)(i - v->offset), (int)precision);
    free(text);
    return st;
  }
  return QV_OK;
}

static QvStatus validate_node(Ctx *c, const QvArrayView *v, int depth) {
  if (depth > QV_ARRAY_MAX_DEPTH)
    return FAIL("array nested deeper than %d", QV_ARRAY_MAX_DEPTH);
  const char *tn = qv_arrow_type_name(v->type.type);
  int64_t end;
  if (v->length < 0 || v->offset < 0 || !qvi_add_i64(v->offset, v->length, &end))
    return FAIL("%s array: bad length %lld / offset %lld", tn, (long long)v->length,
                (long long)v->offset);
  if (v->null_count < -1 || v->null_count > v->length)
    return FAIL("%s array: null_count %lld outside 0..%lld", tn, (long long)v->null_count,
                (long long)v->length);
  QvStatus st = validate_children(c, v, depth);
  if (st) return st;
  if (v->dictionary && c->dictionaries) {
    if ((st = validate_node(c, v->dictionary, depth + 1)))
      return qv_error_prefix(c->error, "dictionary");
  }
  QvLayout L = qvi_view_layout(v);
  if (qv_layout_has_validity(L)) {
    if (v->buffer[0] == NULL || v->buffer_size[0] == 0) {
      if (v->null_count > 0)
        return FAIL("%s array: null_count is %lld but there is no validity bitmap", tn,
                    (long long)v->null_count);
    } else if (v->length > 0) {
      if ((st = check_size(c, v, 0, qvi_bitmap_bytes(end), "validity"))) return st;
      if (c->level >= QV_VALIDATE_FULL && v->null_count >= 0) {
        int64_t nulls = v->length - qv_bitmap_count_set(v->buffer[0], v->offset, v->length);
        if (nulls != v->null_count)
          return FAIL("%s array: null_count is %lld but the bitmap has %lld nulls", tn,
                      (long long)v->null_count, (long long)nulls);
      }
    }
  }
  int64_t need;
  switch (L) {
    case QV_LAYOUT_NULL: return QV_OK;
    case QV_LAYOUT_BOOL: return check_size(c, v, 1, qvi_bitmap_bytes(end), "values");
    case QV_LAYOUT_FIXED:
      if (!qvi_mul_i64(end, v->type.byte_width, &need)) return FAIL("%s array: size overflows", tn);
      if ((st = check_size(c, v, 1, need, "values"))) return st;
      if (v->type.type == QV_ARROW_DICTIONARY && v->dictionary && c->level >= QV_VALIDATE_FULL)
        return check_dictionary_indices(c, v);
      if (c->level >= QV_VALIDATE_FULL && c->decimal_precision &&
          (v->type.storage_type == QV_ARROW_DECIMAL32 || v->type.storage_type == QV_ARROW_DECIMAL64 ||
           v->type.storage_type == QV_ARROW_DECIMAL128 || v->type.storage_type == QV_ARROW_DECIMAL256))
        return check_decimals(c, v);
      return QV_OK;
    case QV_LAYOUT_BINARY:
    case QV_LAYOUT_LARGE_BINARY:
      if ((st = check_offsets(c, v, v->buffer_size[2], "bytes of data"))) return st;
      if (v->buffer[2] == NULL && v->buffer_size[2] > 0) return FAIL("%s array: no data buffer", tn);
      if (c->level >= QV_VALIDATE_FULL && (v->type.storage_type == QV_ARROW_STRING ||
                                           v->type.storage_type == QV_ARROW_LARGE_STRING))
        return check_utf8_offsets(c, v);
      return QV_OK;
    case QV_LAYOUT_VIEW:
      if (!qvi_mul_i64(end, 16, &need)) return FAIL("%s array: size overflows", tn);
      if ((st = check_size(c, v, 1, need, "views"))) return st;
      for (int64_t k = 0; k < v->n_variadic; k++)
        if (v->variadic_size[k] < 0 || (v->variadic_size[k] > 0 && v->variadic[k] == NULL))
          return FAIL("%s array: data buffer %lld is invalid", tn, (long long)k);
      if (c->level >= QV_VALIDATE_FULL) return check_views(c, v);
      return QV_OK;
    case QV_LAYOUT_LIST:
    case QV_LAYOUT_LARGE_LIST:
      if ((st = check_offsets(c, v, v->children[0].length, "child values"))) return st;
      if (v->type.type == QV_ARROW_MAP) {
        const QvArrayView *keys = &v->children[0].children[0];
        if (keys->null_count > 0)
          return FAIL("map array: %lld keys are null", (long long)keys->null_count);
        if (c->level >= QV_VALIDATE_FULL && keys->buffer[0] &&
            qv_layout_has_validity(qvi_view_layout(keys)) &&
            qv_bitmap_count_set(keys->buffer[0], keys->offset, keys->length) != keys->length)
          return FAIL("map array: some keys are null");
      }
      return QV_OK;
    case QV_LAYOUT_LIST_VIEW:
    case QV_LAYOUT_LARGE_LIST_VIEW: {
      int w = qv_layout_offset_width(L);
      if (!qvi_mul_i64(end, w, &need)) return FAIL("%s array: size overflows", tn);
      if ((st = check_size(c, v, 1, need, "offsets"))) return st;
      if ((st = check_size(c, v, 2, need, "sizes"))) return st;
      if (c->level < QV_VALIDATE_FULL) return QV_OK;
      int64_t child_len = v->children[0].length;
      for (int64_t i = v->offset; i < end; i++) {
        int64_t o = qvi_ld_offset(v->buffer[1], w, i), s = qvi_ld_offset(v->buffer[2], w, i);
        if (v->buffer[0] && !qvi_bit_get(v->buffer[0], i) && s == 0) continue;
        if (o < 0 || s < 0 || o > child_len || s > child_len - o)
          return FAIL("%s array: element %lld (offset %lld, size %lld) is outside the child of "
                      "%lld values", tn, (long long)(i - v->offset), (long long)o, (long long)s,
                      (long long)child_len);
      }
      return QV_OK;
    }
    case QV_LAYOUT_FIXED_LIST:
      if (!qvi_mul_i64(end, v->type.fixed_size, &need)) return FAIL("%s array: size overflows", tn);
      if (v->children[0].length < need)
        return FAIL("fixed_size_list array: child has %lld values, needs %lld",
                    (long long)v->children[0].length, (long long)need);
      return QV_OK;
    case QV_LAYOUT_STRUCT:
      for (int64_t k = 0; k < v->n_children; k++)
        if (v->children[k].length < end)
          return FAIL("struct array: child %lld has %lld values, needs %lld", (long long)k,
                      (long long)v->children[k].length, (long long)end);
      return QV_OK;
    case QV_LAYOUT_SPARSE_UNION:
    case QV_LAYOUT_DENSE_UNION: return check_union(c, v);
    case QV_LAYOUT_REE: return check_ree(c, v);
  }
  return QV_OK;
}

QvStatus qv_array_view_validate(const QvArrayView *view, QvValidateLevel level, unsigned flags,
                                QvError *error) {
  if (flags & ~(QV_VALIDATE_SKIP_DICTIONARIES | QV_VALIDATE_DECIMALS_UNBOUNDED))
    return qv_error_set(error, QV_EARG, "qv_array_view_validate: unknown flags 0x%x", flags);
  if (level == QV_VALIDATE_NONE) return QV_OK;
  Ctx c = {level, !(flags & QV_VALIDATE_SKIP_DICTIONARIES),
           !(flags & QV_VALIDATE_DECIMALS_UNBOUNDED), error};
  return validate_node(&c, view, 0);
}

QvStatus qv_array_validate_flags(const struct ArrowArray *array, const struct ArrowSchema *schema,
                                 QvValidateLevel level, unsigned flags, QvError *error) {
  QvArrayView v;
  QvStatus st = qv_array_view_init(&v, schema, error);
  if (st) return st;
  st = set_array(&v, array, 0, error);
  if (st == QV_OK) st = qv_array_view_validate(&v, level, flags, error);
  qv_array_view_reset(&v);
  return st;
}

QvStatus qv_array_validate(const struct ArrowArray *array, const struct ArrowSchema *schema,
                           QvValidateLevel level, QvError *error) {
  return qv_array_validate_flags(array, schema, level, 0, error);
}

/* ---- value access */

bool qv_array_view_is_null(const QvArrayView *v, int64_t i) {
  QvLayout L = qvi_view_layout(v);
  switch (L) {
    case QV_LAYOUT_NULL: return true;
    case QV_LAYOUT_SPARSE_UNION:
    case QV_LAYOUT_DENSE_UNION: {
      int64_t child, idx;
      qv_array_view_get_union(v, i, &child, &idx);
      if (child < 0) return true;
      return qv_array_view_is_null(&v->children[child], idx);
    }
    case QV_LAYOUT_REE:
      return qv_array_view_is_null(&v->children[1], qv_array_view_get_run(v, i));
    default:
      return v->buffer[0] != NULL && !qvi_bit_get(v->buffer[0], v->offset + i);
  }
}

int64_t qv_array_view_get_int(const QvArrayView *v, int64_t i) {
  int64_t p = v->offset + i;
  switch (v->type.storage_type) {
    case QV_ARROW_BOOL: return qvi_bit_get(v->buffer[1], p);
    case QV_ARROW_INT8: return (int8_t)v->buffer[1][p];
    case QV_ARROW_UINT8: return v->buffer[1][p];
    case QV_ARROW_INT16: return qvi_ld_i16(v->buffer[1] + 2 * p);
    case QV_ARROW_UINT16: return qvi_ld_u16(v->buffer[1] + 2 * p);
    case QV_ARROW_INT32:
    case QV_ARROW_INTERVAL_MONTHS: return qvi_ld_i32(v->buffer[1] + 4 * p);
    case QV_ARROW_UINT32: return qvi_ld_u32(v->buffer[1] + 4 * p);
    case QV_ARROW_INT64:
    case QV_ARROW_UINT64: return qvi_ld_i64(v->buffer[1] + 8 * p);
    case QV_ARROW_FLOAT16:
    case QV_ARROW_FLOAT32:
    case QV_ARROW_FLOAT64: return (int64_t)qv_array_view_get_double(v, i);
    default: return 0;
  }
}

uint64_t qv_array_view_get_uint(const QvArrayView *v, int64_t i) {
  if (v->type.storage_type == QV_ARROW_UINT64) return qvi_ld_u64(v->buffer[1] + 8 * (v->offset + i));
  return (uint64_t)qv_array_view_get_int(v, i);
}

double qv_array_view_get_double(const QvArrayView *v, int64_t i) {
  int64_t p = v->offset + i;
  switch (v->type.storage_type) {
    case QV_ARROW_FLOAT16: return qvi_half_to_double(qvi_ld_u16(v->buffer[1] + 2 * p));
    case QV_ARROW_FLOAT32: {
      float f;
      memcpy(&f, v->buffer[1] + 4 * p, 4);
      return f;
    }
    case QV_ARROW_FLOAT64: {
      double d;
      memcpy(&d, v->buffer[1] + 8 * p, 8);
      return d;
    }
    case QV_ARROW_UINT64: return (double)qv_array_view_get_uint(v, i);
    default: return (double)qv_array_view_get_int(v, i);
  }
}

QvBytes qv_array_view_get_bytes(const QvArrayView *v, int64_t i) {
  QvBytes r = {(const uint8_t *)qvi_zero_block, 0};
  int64_t p = v->offset + i;
  QvLayout L = qvi_view_layout(v);
  if (L == QV_LAYOUT_BINARY || L == QV_LAYOUT_LARGE_BINARY) {
    int w = qv_layout_offset_width(L);
    int64_t s = qvi_ld_offset(v->buffer[1], w, p), e = qvi_ld_offset(v->buffer[1], w, p + 1);
    if (v->buffer[2]) r.data = v->buffer[2] + s;
    r.size = e - s;
  } else if (L == QV_LAYOUT_VIEW) {
    const uint8_t *view = v->buffer[1] + 16 * p;
    int32_t len = qvi_ld_i32(view);
    r.size = len;
    if (len <= 12)
      r.data = view + 4;
    else
      r.data = v->variadic[qvi_ld_i32(view + 8)] + qvi_ld_i32(view + 12);
  } else if (L == QV_LAYOUT_FIXED) {
    r.size = v->type.byte_width;
    if (v->buffer[1]) r.data = v->buffer[1] + (size_t)p * (size_t)v->type.byte_width;
  }
  return r;
}

void qv_array_view_get_list(const QvArrayView *v, int64_t i, int64_t *start, int64_t *length) {
  int64_t p = v->offset + i;
  QvLayout L = qvi_view_layout(v);
  int w = qv_layout_offset_width(L);
  *start = 0;
  *length = 0;
  switch (L) {
    case QV_LAYOUT_LIST:
    case QV_LAYOUT_LARGE_LIST:
      *start = qvi_ld_offset(v->buffer[1], w, p);
      *length = qvi_ld_offset(v->buffer[1], w, p + 1) - *start;
      break;
    case QV_LAYOUT_LIST_VIEW:
    case QV_LAYOUT_LARGE_LIST_VIEW:
      *start = qvi_ld_offset(v->buffer[1], w, p);
      *length = qvi_ld_offset(v->buffer[2], w, p);
      break;
    case QV_LAYOUT_FIXED_LIST:
      *start = p * v->type.fixed_size;
      *length = v->type.fixed_size;
      break;
    default: break;
  }
}

void qv_array_view_get_union(const QvArrayView *v, int64_t i, int64_t *child, int64_t *index) {
  int64_t p = v->offset + i;
  int8_t id = (int8_t)v->buffer[1][p];
  *child = id >= 0 ? v->type.union_child_index[id] : -1;
  if (v->type.storage_type == QV_ARROW_DENSE_UNION)
    *index = qvi_ld_i32(v->buffer[2] + 4 * p);
  else
    *index = p;
}

int64_t qv_array_view_get_run(const QvArrayView *v, int64_t i) {
  const QvArrayView *re = &v->children[0];
  int w = re->type.byte_width;
  const uint8_t *d = re->buffer[1] + (size_t)re->offset * (size_t)w;
  int64_t p = v->offset + i;
  /* first run whose end is > p */
  int64_t lo = 0, hi = re->length;
  while (lo < hi) {
    int64_t mid = lo + (hi - lo) / 2;
    if (qvi_ld_int(d + (size_t)mid * (size_t)w, w, true) > p)
      hi = mid;
    else
      lo = mid + 1;
  }
  return lo < re->length ? lo : re->length - 1;
}
