/* Integration JSON -> ArrowSchema + ArrowArrays.
 *
 * jansson parses the text into a tree; the schema is built with the schema
 * builders, and every column's buffers are decoded straight from the JSON
 * into memory owned by the batch (one QvOwner per batch and per dictionary),
 * described by a QvArrayView and exported with qv_array_export_view. Buffers
 * are kept exactly as the JSON gives them (list-view and dense-union offsets,
 * views and their data buffers, values under null slots), so a file written
 * back is the file read. Nothing is trusted: lengths are checked against
 * `count` before anything is allocated, offsets, type codes and run ends are
 * checked here with the JSON path in the message, and every finished array
 * is validated in full (QV_VALIDATE_FULL: UTF-8, dictionary indices, view
 * bounds) before it is handed out. */
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <libdeflate.h>

#include "integration/json_internal.h"
#include "quiver/buffer.h"
#include "quiver/io.h"
#include "util/c_format.h"
#include "util/grow.h"
#include "util/half.h"
#include "util/load.h"
#include "util/options.h"

#define DEFAULT_MAX_SIZE ((int64_t)2 << 30)

/* ---- memory of one batch or dictionary */

typedef struct BufList {
  void **items;
  size_t n, cap;
} BufList;

static void buflist_free(void *p) {
  BufList *l = p;
  if (l == NULL) return;
  for (size_t i = 0; i < l->n; i++) qv_free(l->items[i]);
  free(l->items);
  free(l);
}

typedef struct Dict {
  int64_t id;
  const json_t *column;   /* dictionaries[k].data.columns[0] */
  size_t entry;           /* k */
  int64_t count;
  const struct ArrowSchema *type; /* value type of the first field that declares the id */
  int state;              /* 0 not built, 1 building, 2 built */
  struct ArrowArray values;
} Dict;

struct QvJsonFile {
  struct ArrowSchema schema;
  struct ArrowArray *batches;
  const struct ArrowArray **batch_ptrs;
  int64_t n_batches;
  /* dictionary-encoded nodes in pre-order and their ids */
  const struct ArrowSchema **dict_nodes;
  int64_t *dict_ids;
  int64_t n_dict_nodes, cap_dict_nodes;
  /* paths of the declaring fields, for messages */
  char **dict_paths;
  Dict *dicts;
  int64_t n_dicts;
};

typedef struct Reader {
  QvJsonFile *file;
  QvError *error;
  QvErrPath path;
  BufList *bufs;
  /* The value a loop over a buffer is reading: its "[i]" joins the path at
   * elem_at only when a message is made (formatting it for every value cost
   * more than the whole conversion). -1: no loop. */
  int64_t elem;
  size_t elem_at;
  bool unsigned_spelling; /* QvJsonReadOptions.accept_unsigned_spelling */
  bool decimal_overflow;  /* QvJsonReadOptions.accept_decimal_overflow */
} Reader;

static void elem_begin(Reader *r) { r->elem_at = r->path.len; }
static void elem_end(Reader *r) { r->elem = -1; }

static QvStatus fail(Reader *r, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

static QvStatus fail(Reader *r, const char *fmt, ...) {
  char msg[QV_ERROR_MESSAGE_SIZE];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  if (r->elem >= 0 && r->elem_at <= r->path.len)
    return qv_error_set(r->error, QV_EINVAL, "%.*s[%" PRId64 "]%s: %s", (int)r->elem_at,
                        r->path.text, r->elem, r->path.text + r->elem_at, msg);
  return qv_error_set(r->error, QV_EINVAL, "%s: %s", r->path.len ? r->path.text : "(top)", msg);
}

static QvStatus nomem(Reader *r) { return qv_error_set(r->error, QV_ENOMEM, "out of memory"); }

/* Zeroed, 64-byte aligned, owned by the current batch. */
static void *alloc_buf(Reader *r, int64_t size) {
  if (size < 0 || (uint64_t)size > SIZE_MAX - 64) return NULL;
  BufList *l = r->bufs;
  if (l->n == l->cap) {
    void **p = qvi_grow_array(l->items, &l->cap, l->cap + 1, 16, sizeof *p);
    if (p == NULL) return NULL;
    l->items = p;
  }
  void *b = qv_aligned_alloc((size_t)(size > 0 ? size : 1));
  if (b == NULL) return NULL;
  memset(b, 0, (size_t)(size > 0 ? size : 1));
  l->items[l->n++] = b;
  return b;
}

/* ---- scalar decoding */

static const char *kind_name(const json_t *v) {
  switch (json_typeof(v)) {
    case JSON_OBJECT: return "an object";
    case JSON_ARRAY: return "an array";
    case JSON_STRING: return "a string";
    case JSON_INTEGER: return "an integer";
    case JSON_REAL: return "a number";
    case JSON_TRUE:
    case JSON_FALSE: return "a boolean";
    default: return "null";
  }
}

/* Exact decimal text -> int64 / uint64. */
static bool parse_i64(const char *s, size_t n, int64_t *out) {
  size_t i = 0;
  bool neg = false;
  if (i < n && (s[i] == '-' || s[i] == '+')) neg = s[i++] == '-';
  if (i == n) return false;
  uint64_t v = 0, limit = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
  for (; i < n; i++) {
    if (s[i] < '0' || s[i] > '9') return false;
    unsigned d = (unsigned)(s[i] - '0');
    if (v > (limit - d) / 10) return false;
    v = v * 10 + d;
  }
  *out = neg ? (int64_t)(0 - v) : (int64_t)v;
  return true;
}

static bool parse_u64(const char *s, size_t n, uint64_t *out) {
  size_t i = 0;
  if (i < n && s[i] == '+') i++;
  if (i == n) return false;
  uint64_t v = 0;
  for (; i < n; i++) {
    if (s[i] < '0' || s[i] > '9') return false;
    unsigned d = (unsigned)(s[i] - '0');
    if (v > (UINT64_MAX - d) / 10) return false;
    v = v * 10 + d;
  }
  *out = v;
  return true;
}

/* An integer given as a JSON integer or as a decimal string. */
static QvStatus get_i64(Reader *r, const json_t *v, int64_t *out) {
  if (json_is_integer(v)) {
    *out = (int64_t)json_integer_value(v);
    return QV_OK;
  }
  if (json_is_string(v)) {
    if (parse_i64(json_string_value(v), json_string_length(v), out)) return QV_OK;
    return fail(r, "\"%.40s\" is not a 64-bit integer", json_string_value(v));
  }
  return fail(r, "expected an integer, found %s", kind_name(v));
}

static QvStatus get_u64(Reader *r, const json_t *v, uint64_t *out) {
  if (json_is_integer(v)) {
    json_int_t x = json_integer_value(v);
    if (x < 0) return fail(r, "%" JSON_INTEGER_FORMAT " is negative", x);
    *out = (uint64_t)x;
    return QV_OK;
  }
  if (json_is_string(v)) {
    if (parse_u64(json_string_value(v), json_string_length(v), out)) return QV_OK;
    return fail(r, "\"%.40s\" is not an unsigned 64-bit integer", json_string_value(v));
  }
  return fail(r, "expected an integer, found %s", kind_name(v));
}

/* Decimal text of an integer -> `width` bytes of host-order two's
 * complement; fails when the value does not fit the storage. A
 * non-negative value of the full unsigned width (arrow-js writes negative
 * values that way: -1 as 2^128 - 1) is taken as the bits it spells when
 * `unsigned_ok`, else refused with *unsigned_spelling set. */
static bool parse_decimal(const char *s, size_t n, uint8_t *out, int width, bool unsigned_ok,
                          bool *unsigned_spelling) {
  *unsigned_spelling = false;
  size_t i = 0;
  bool neg = false;
  if (i < n && (s[i] == '-' || s[i] == '+')) neg = s[i++] == '-';
  if (i == n) return false;
  uint32_t w[8] = {0}; /* magnitude, little-endian 32-bit words */
  int nw = width / 4;
  for (; i < n; i++) {
    if (s[i] < '0' || s[i] > '9') return false;
    uint64_t carry = (uint64_t)(s[i] - '0');
    for (int k = 0; k < nw; k++) {
      uint64_t x = (uint64_t)w[k] * 10 + carry;
      w[k] = (uint32_t)x;
      carry = x >> 32;
    }
    if (carry) return false;
  }
  /* a negative magnitude may reach 2^(bits-1), no further */
  bool top = (w[nw - 1] >> 31) != 0;
  if (top && !neg && !unsigned_ok) {
    *unsigned_spelling = true;
    return false;
  }
  if (top && neg) {
    if (w[nw - 1] != 0x80000000u) return false;
    for (int k = 0; k < nw - 1; k++)
      if (w[k]) return false;
  }
  if (neg) qvi_ij_negate_words(w, nw);
  uint8_t le[32];
  for (int k = 0; k < nw; k++) qvi_st_le_u32(le + 4 * k, w[k]);
  qvi_le_bytes(out, le, (size_t)width); /* the whole integer in host order */
  return true;
}

static int hex_val(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

/* Hex string -> bytes (out may be NULL to only check); returns the byte
 * count or -1. */
static int64_t decode_hex(const char *s, size_t n, uint8_t *out) {
  if (n % 2) return -1;
  for (size_t i = 0; i < n; i += 2) {
    int hi = hex_val(s[i]), lo = hex_val(s[i + 1]);
    if (hi < 0 || lo < 0) return -1;
    if (out) out[i / 2] = (uint8_t)(hi << 4 | lo);
  }
  return (int64_t)(n / 2);
}

static QvStatus get_double(Reader *r, const json_t *v, double *out) {
  if (json_is_real(v)) {
    *out = json_real_value(v);
    return QV_OK;
  }
  if (json_is_integer(v)) {
    *out = (double)json_integer_value(v);
    return QV_OK;
  }
  if (json_is_string(v)) {
    const char *s = json_string_value(v);
    if (strcmp(s, "NaN") == 0) *out = NAN;
    else if (strcmp(s, "Infinity") == 0) *out = INFINITY;
    else if (strcmp(s, "-Infinity") == 0) *out = -INFINITY;
    else return fail(r, "\"%.40s\" is not a number", s);
    return QV_OK;
  }
  return fail(r, "expected a number, found %s", kind_name(v));
}

/* ---- object members */

static const json_t *member(const json_t *obj, const char *key) { return json_object_get(obj, key); }

static QvStatus need_member(Reader *r, const json_t *obj, const char *key, json_type type,
                            const json_t **out) {
  const json_t *v = json_object_get(obj, key);
  if (v == NULL) return fail(r, "\"%s\" is missing", key);
  bool ok = type == JSON_TRUE ? json_is_boolean(v) : json_typeof(v) == type;
  if (type == JSON_INTEGER && !json_is_integer(v)) ok = false;
  if (!ok) {
    size_t m = qvi_errpath_push(&r->path, ".%s", key);
    const char *want = type == JSON_OBJECT ? "an object" : type == JSON_ARRAY ? "an array"
                       : type == JSON_STRING ? "a string" : type == JSON_INTEGER ? "an integer"
                       : "a boolean";
    QvStatus st = fail(r, "expected %s, found %s", want, kind_name(v));
    qvi_errpath_pop(&r->path, m);
    return st;
  }
  *out = v;
  return QV_OK;
}

static QvStatus need_int_member(Reader *r, const json_t *obj, const char *key, int64_t lo,
                                int64_t hi, int64_t *out) {
  const json_t *v;
  QvStatus st = need_member(r, obj, key, JSON_INTEGER, &v);
  if (st) return st;
  json_int_t x = json_integer_value(v);
  if (x < lo || x > hi) {
    size_t m = qvi_errpath_push(&r->path, ".%s", key);
    st = fail(r, "%" JSON_INTEGER_FORMAT " is outside %" PRId64 "..%" PRId64, x, lo, hi);
    qvi_errpath_pop(&r->path, m);
    return st;
  }
  *out = (int64_t)x;
  return QV_OK;
}

/* ---- schema */

static QvStatus add_metadata(Reader *r, const json_t *field, struct ArrowSchema *s) {
  const json_t *md = member(field, "metadata");
  if (md == NULL || json_is_null(md)) return QV_OK;
  size_t m = qvi_errpath_push(&r->path, ".metadata");
  QvStatus st = QV_OK;
  if (!json_is_array(md)) {
    st = fail(r, "expected an array or null, found %s", kind_name(md));
    goto out;
  }
  for (size_t i = 0; i < json_array_size(md); i++) {
    size_t m2 = qvi_errpath_push(&r->path, "[%zu]", i);
    const json_t *kv = json_array_get(md, i), *k, *v;
    if (!json_is_object(kv)) {
      st = fail(r, "expected an object, found %s", kind_name(kv));
      goto out;
    }
    if ((st = need_member(r, kv, "key", JSON_STRING, &k)) ||
        (st = need_member(r, kv, "value", JSON_STRING, &v)))
      goto out;
    if ((st = qv_arrow_schema_add_metadata(s, json_string_value(k), json_string_length(k),
                                     json_string_value(v), json_string_length(v), r->error)))
      goto out;
    qvi_errpath_pop(&r->path, m2);
  }
out:
  if (st == QV_OK) qvi_errpath_pop(&r->path, m);
  return st;
}

static QvStatus time_unit(Reader *r, const json_t *type, QvTimeUnit *out) {
  const json_t *u;
  QvStatus st = need_member(r, type, "unit", JSON_STRING, &u);
  if (st) return st;
  const char *s = json_string_value(u);
  if (strcmp(s, "SECOND") == 0) *out = QV_TIME_SECOND;
  else if (strcmp(s, "MILLISECOND") == 0) *out = QV_TIME_MILLISECOND;
  else if (strcmp(s, "MICROSECOND") == 0) *out = QV_TIME_MICROSECOND;
  else if (strcmp(s, "NANOSECOND") == 0) *out = QV_TIME_NANOSECOND;
  else {
    size_t m = qvi_errpath_push(&r->path, ".unit");
    st = fail(r, "unknown time unit \"%.32s\"", s);
    qvi_errpath_pop(&r->path, m);
  }
  return st;
}

static bool get_bool_member(const json_t *obj, const char *key, bool dflt) {
  const json_t *v = member(obj, key);
  return json_is_boolean(v) ? json_is_true(v) : dflt;
}

/* A Type object as the QvType the IPC schema would hold (ids: room for a
 * union's 128 type ids, which t points into); *n_children: the children
 * the type needs (-1: any). */
static QvStatus parse_type(Reader *r, const json_t *type, QvType *t, int32_t *ids,
                           int64_t *n_children) {
  const json_t *name;
  QvStatus st = need_member(r, type, "name", JSON_STRING, &name);
  if (st) return st;
  const char *n = json_string_value(name);
  memset(t, 0, sizeof *t);
  *n_children = 0;
  static const struct { const char *name; QvTypeId id; int children; } simple[] = {
      {"null", QV_TYPE_NULL, 0},
      {"bool", QV_TYPE_BOOL, 0},
      {"utf8", QV_TYPE_UTF8, 0},
      {"largeutf8", QV_TYPE_LARGE_UTF8, 0},
      {"binary", QV_TYPE_BINARY, 0},
      {"largebinary", QV_TYPE_LARGE_BINARY, 0},
      {"utf8view", QV_TYPE_UTF8_VIEW, 0},
      {"binaryview", QV_TYPE_BINARY_VIEW, 0},
      {"list", QV_TYPE_LIST, 1},
      {"largelist", QV_TYPE_LARGE_LIST, 1},
      {"listview", QV_TYPE_LIST_VIEW, 1},
      {"largelistview", QV_TYPE_LARGE_LIST_VIEW, 1},
      {"struct", QV_TYPE_STRUCT, -1},
      {"map", QV_TYPE_MAP, 1},
      {"runendencoded", QV_TYPE_RUN_END_ENCODED, 2},
      /* arrow-js writes its own type name for struct (and reads both) */
      {"struct_", QV_TYPE_STRUCT, -1}};
  for (size_t i = 0; i < sizeof simple / sizeof simple[0]; i++)
    if (strcmp(n, simple[i].name) == 0) {
      t->id = simple[i].id;
      *n_children = simple[i].children;
      return QV_OK;
    }
  int64_t x;
  if (strcmp(n, "int") == 0) {
    const json_t *sg;
    if ((st = need_int_member(r, type, "bitWidth", 8, 64, &x)) ||
        (st = need_member(r, type, "isSigned", JSON_TRUE, &sg)))
      return st;
    if (x != 8 && x != 16 && x != 32 && x != 64)
      return fail(r, "int bitWidth %" PRId64 " is not 8, 16, 32 or 64", x);
    t->id = QV_TYPE_INT;
    t->u.int_ = (QvIntType){.bit_width = (int32_t)x, .is_signed = json_is_true(sg)};
    return QV_OK;
  }
  if (strcmp(n, "floatingpoint") == 0) {
    const json_t *p;
    if ((st = need_member(r, type, "precision", JSON_STRING, &p))) return st;
    const char *s = json_string_value(p);
    if (strcmp(s, "HALF") == 0) t->u.floating_point.precision = QV_PRECISION_HALF;
    else if (strcmp(s, "SINGLE") == 0) t->u.floating_point.precision = QV_PRECISION_SINGLE;
    else if (strcmp(s, "DOUBLE") == 0) t->u.floating_point.precision = QV_PRECISION_DOUBLE;
    else return fail(r, "unknown floating-point precision \"%.32s\"", s);
    t->id = QV_TYPE_FLOATING_POINT;
    return QV_OK;
  }
  if (strcmp(n, "decimal") == 0) {
    int64_t p, s, bw = 128;
    if ((st = need_int_member(r, type, "precision", 1, 76, &p)) ||
        (st = need_int_member(r, type, "scale", INT32_MIN, INT32_MAX, &s)))
      return st;
    /* 0.14.1 files have no bitWidth: 128 */
    if (member(type, "bitWidth") && (st = need_int_member(r, type, "bitWidth", 32, 256, &bw)))
      return st;
    if (bw != 32 && bw != 64 && bw != 128 && bw != 256)
      return fail(r, "decimal bitWidth %" PRId64 " is not 32, 64, 128 or 256", bw);
    t->id = QV_TYPE_DECIMAL;
    t->u.decimal.precision = (int32_t)p;
    t->u.decimal.scale = (int32_t)s;
    t->u.decimal.bit_width = (int32_t)bw;
    return QV_OK;
  }
  if (strcmp(n, "fixedsizebinary") == 0) {
    if ((st = need_int_member(r, type, "byteWidth", 0, INT32_MAX, &x))) return st;
    t->id = QV_TYPE_FIXED_SIZE_BINARY;
    t->u.fixed_size_binary.byte_width = (int32_t)x;
    return QV_OK;
  }
  if (strcmp(n, "fixedsizelist") == 0) {
    if ((st = need_int_member(r, type, "listSize", 0, INT32_MAX, &x))) return st;
    t->id = QV_TYPE_FIXED_SIZE_LIST;
    t->u.fixed_size_list.list_size = (int32_t)x;
    *n_children = 1;
    return QV_OK;
  }
  if (strcmp(n, "date") == 0) {
    const json_t *u;
    if ((st = need_member(r, type, "unit", JSON_STRING, &u))) return st;
    const char *s = json_string_value(u);
    if (strcmp(s, "DAY") == 0) t->u.date.unit = QV_DATE_DAY;
    else if (strcmp(s, "MILLISECOND") == 0) t->u.date.unit = QV_DATE_MILLISECOND;
    else return fail(r, "unknown date unit \"%.32s\"", s);
    t->id = QV_TYPE_DATE;
    return QV_OK;
  }
  if (strcmp(n, "time") == 0) {
    QvTimeUnit u;
    if ((st = time_unit(r, type, &u))) return st;
    int64_t want = (u == QV_TIME_SECOND || u == QV_TIME_MILLISECOND) ? 32 : 64;
    if ((st = need_int_member(r, type, "bitWidth", 0, 64, &x))) return st;
    if (x != want)
      return fail(r, "time bitWidth %" PRId64 " does not match the unit (needs %" PRId64 ")", x,
                  want);
    t->id = QV_TYPE_TIME;
    t->u.time.unit = u;
    t->u.time.bit_width = (int32_t)x;
    return QV_OK;
  }
  if (strcmp(n, "timestamp") == 0) {
    QvTimeUnit u;
    if ((st = time_unit(r, type, &u))) return st;
    const json_t *tz = member(type, "timezone");
    if (tz && !json_is_null(tz) && !json_is_string(tz))
      return fail(r, "timestamp timezone is %s, not a string", kind_name(tz));
    if (json_is_string(tz) && json_string_length(tz) > 200)
      return fail(r, "timestamp timezone longer than 200 bytes");
    t->id = QV_TYPE_TIMESTAMP;
    t->u.timestamp.unit = u;
    if (json_is_string(tz)) {
      t->u.timestamp.timezone = json_string_value(tz);
      t->u.timestamp.timezone_len = json_string_length(tz);
    }
    return QV_OK;
  }
  if (strcmp(n, "duration") == 0) {
    QvTimeUnit u;
    if ((st = time_unit(r, type, &u))) return st;
    t->id = QV_TYPE_DURATION;
    t->u.duration.unit = u;
    return QV_OK;
  }
  if (strcmp(n, "interval") == 0) {
    const json_t *u;
    if ((st = need_member(r, type, "unit", JSON_STRING, &u))) return st;
    const char *s = json_string_value(u);
    if (strcmp(s, "YEAR_MONTH") == 0) t->u.interval.unit = QV_INTERVAL_YEAR_MONTH;
    else if (strcmp(s, "DAY_TIME") == 0) t->u.interval.unit = QV_INTERVAL_DAY_TIME;
    else if (strcmp(s, "MONTH_DAY_NANO") == 0) t->u.interval.unit = QV_INTERVAL_MONTH_DAY_NANO;
    else return fail(r, "unknown interval unit \"%.32s\"", s);
    t->id = QV_TYPE_INTERVAL;
    return QV_OK;
  }
  if (strcmp(n, "union") == 0) {
    const json_t *mode, *jids;
    if ((st = need_member(r, type, "mode", JSON_STRING, &mode)) ||
        (st = need_member(r, type, "typeIds", JSON_ARRAY, &jids)))
      return st;
    const char *m = json_string_value(mode);
    if (strcmp(m, "SPARSE") != 0 && strcmp(m, "DENSE") != 0)
      return fail(r, "unknown union mode \"%.32s\"", m);
    size_t nids = json_array_size(jids);
    if (nids > 128) return fail(r, "union with %zu members (at most 128)", nids);
    for (size_t i = 0; i < nids; i++) {
      const json_t *id = json_array_get(jids, i);
      if (!json_is_integer(id) || json_integer_value(id) < 0 || json_integer_value(id) > 127)
        return fail(r, "typeIds[%zu] is not a type code in 0..127", i);
      ids[i] = (int32_t)json_integer_value(id);
    }
    t->id = QV_TYPE_UNION;
    t->u.union_.mode = m[0] == 'S' ? QV_UNION_SPARSE : QV_UNION_DENSE;
    t->u.union_.has_type_ids = true;
    t->u.union_.n_type_ids = (int64_t)nids;
    t->u.union_.type_ids = ids;
    *n_children = (int64_t)nids;
    return QV_OK;
  }
  return fail(r, "unknown type \"%.32s\"", n);
}

/* The format string of a Type object (the one mapping, util/c_format.h);
 * *n_children as parse_type's. The format needs at most 16 + 128 * 4 bytes. */
static QvStatus type_format(Reader *r, const json_t *type, char *fmt, size_t cap,
                            int64_t *n_children) {
  QvType t;
  int32_t ids[128];
  QvStatus st = parse_type(r, type, &t, ids, n_children);
  if (st) return st;
  /* a union has as many children as type ids here: no check can fail */
  return qvi_type_c_format(&t, t.id == QV_TYPE_UNION ? *n_children : 0, fmt, cap, r->error);
}

static QvStatus register_dictionary(Reader *r, const struct ArrowSchema *node, int64_t id) {
  QvJsonFile *f = r->file;
  if (f->n_dict_nodes == f->cap_dict_nodes) {
    size_t cap = (size_t)f->cap_dict_nodes;
    const struct ArrowSchema **n = qvi_grow_array(f->dict_nodes, &cap, cap + 1, 8, sizeof *n);
    if (n == NULL) return nomem(r);
    f->dict_nodes = n;
    int64_t *ids = realloc(f->dict_ids, (size_t)cap * sizeof *ids);
    if (ids == NULL) return nomem(r);
    f->dict_ids = ids;
    char **p = realloc(f->dict_paths, (size_t)cap * sizeof *p);
    if (p == NULL) return nomem(r);
    f->dict_paths = p;
    f->cap_dict_nodes = (int64_t)cap;
  }
  char *path = malloc(r->path.len + 1);
  if (path == NULL) return nomem(r);
  memcpy(path, r->path.text, r->path.len + 1);
  f->dict_nodes[f->n_dict_nodes] = node;
  f->dict_ids[f->n_dict_nodes] = id;
  f->dict_paths[f->n_dict_nodes] = path;
  f->n_dict_nodes++;
  return QV_OK;
}

/* Fields that share a dictionary id must agree on its value type. */
static QvStatus check_dictionary_type(Reader *r, int64_t k) {
  QvJsonFile *f = r->file;
  for (int64_t j = 0; j < k; j++) {
    if (f->dict_ids[j] != f->dict_ids[k]) continue;
    if (!qvi_ij_same_type(f->dict_nodes[j]->dictionary, f->dict_nodes[k]->dictionary))
      return fail(r, "dictionary id %" PRId64 " is also used by %s with another value type "
                  "(\"%.32s\" here, \"%.32s\" there)", f->dict_ids[k], f->dict_paths[j],
                  f->dict_nodes[k]->dictionary->format, f->dict_nodes[j]->dictionary->format);
    break;
  }
  return QV_OK;
}

static QvStatus parse_field(Reader *r, const json_t *field, struct ArrowSchema *out, int depth);

static QvStatus parse_children(Reader *r, const json_t *children, struct ArrowSchema *s,
                               int depth) {
  size_t m = qvi_errpath_push(&r->path, ".children");
  for (int64_t i = 0; i < s->n_children; i++) {
    size_t m2 = qvi_errpath_push(&r->path, "[%" PRId64 "]", i);
    QvStatus st = parse_field(r, json_array_get(children, (size_t)i), s->children[i], depth + 1);
    if (st) return st;
    qvi_errpath_pop(&r->path, m2);
  }
  qvi_errpath_pop(&r->path, m);
  return QV_OK;
}

static QvStatus parse_field(Reader *r, const json_t *field, struct ArrowSchema *out, int depth) {
  if (depth > QV_ARRAY_MAX_DEPTH) return fail(r, "fields nested deeper than %d", QV_ARRAY_MAX_DEPTH);
  if (!json_is_object(field)) return fail(r, "expected a field object, found %s", kind_name(field));
  const json_t *name, *nullable, *type, *children = member(field, "children");
  QvStatus st;
  /* arrow-js writes an empty field name as null */
  const char *fname = "";
  size_t fname_len = 0;
  name = member(field, "name");
  if (!json_is_null(name)) {
    if ((st = need_member(r, field, "name", JSON_STRING, &name))) return st;
    fname = json_string_value(name);
    fname_len = json_string_length(name);
  }
  if ((st = need_member(r, field, "nullable", JSON_TRUE, &nullable)) ||
      (st = need_member(r, field, "type", JSON_OBJECT, &type)))
    return st;
  if (children && !json_is_array(children))
    return fail(r, "\"children\" is %s, not an array", kind_name(children));
  char fmt[16 + 128 * 4];
  int64_t want;
  size_t m = qvi_errpath_push(&r->path, ".type");
  if ((st = type_format(r, type, fmt, sizeof fmt, &want))) return st;
  qvi_errpath_pop(&r->path, m);
  int64_t nc = children ? (int64_t)json_array_size(children) : 0;
  if (want >= 0 && nc != want)
    return fail(r, "type \"%s\" needs %" PRId64 " children, the field has %" PRId64,
                json_string_value(json_object_get(type, "name")), want, nc);
  int64_t flags = json_is_true(nullable) ? ARROW_FLAG_NULLABLE : 0;
  if (fmt[0] == '+' && fmt[1] == 'm' && get_bool_member(type, "keysSorted", false))
    flags |= ARROW_FLAG_MAP_KEYS_SORTED;
  if (strlen(fname) != fname_len)
    return fail(r, "field name contains a NUL character");

  const json_t *dict = member(field, "dictionary");
  struct ArrowSchema *value = out;
  if (dict && !json_is_null(dict)) {
    /* the node carries the index type; its dictionary the value type */
    m = qvi_errpath_push(&r->path, ".dictionary");
    if (!json_is_object(dict)) return fail(r, "expected an object, found %s", kind_name(dict));
    const json_t *idx;
    int64_t id;
    if ((st = need_int_member(r, dict, "id", INT64_MIN, INT64_MAX, &id)) ||
        (st = need_member(r, dict, "indexType", JSON_OBJECT, &idx)))
      return st;
    char ifmt[16];
    int64_t inc;
    size_t m2 = qvi_errpath_push(&r->path, ".indexType");
    const json_t *iname = member(idx, "name");
    if (!json_is_string(iname) || strcmp(json_string_value(iname), "int") != 0)
      return fail(r, "a dictionary index type must be an int");
    if ((st = type_format(r, idx, ifmt, sizeof ifmt, &inc))) return st;
    qvi_errpath_pop(&r->path, m2);
    if (get_bool_member(dict, "isOrdered", false)) flags |= ARROW_FLAG_DICTIONARY_ORDERED;
    qvi_errpath_pop(&r->path, m);
    if ((st = qv_arrow_schema_init(out, ifmt, fname, flags, 0, r->error)) ||
        (st = qv_arrow_schema_alloc_dictionary(out, r->error)) ||
        (st = qv_arrow_schema_init(out->dictionary, fmt, NULL, ARROW_FLAG_NULLABLE, nc, r->error)))
      return st;
    value = out->dictionary;
    if (fmt[0] == '+' && fmt[1] == 'm' && get_bool_member(type, "keysSorted", false))
      value->flags |= ARROW_FLAG_MAP_KEYS_SORTED;
    if ((st = add_metadata(r, field, out))) return st;
    /* registered before the value type's children: pre-order */
    int64_t k = r->file->n_dict_nodes;
    if ((st = register_dictionary(r, out, id))) return st;
    if ((st = parse_children(r, children, value, depth))) return st;
    QvArrowSchemaView sv;
    if ((st = qv_arrow_schema_view_init(&sv, value, r->error)))
      return qv_error_prefix(r->error, "%s", r->path.text);
    if ((st = check_dictionary_type(r, k))) return st;
  } else {
    if ((st = qv_arrow_schema_init(out, fmt, fname, flags, nc, r->error))) return st;
    if ((st = add_metadata(r, field, out))) return st;
    if ((st = parse_children(r, children, out, depth))) return st;
  }
  QvArrowSchemaView sv;
  if ((st = qv_arrow_schema_view_init(&sv, out, r->error)))
    return qv_error_prefix(r->error, "%s", r->path.text);
  (void)value;
  return QV_OK;
}

static QvStatus parse_schema(Reader *r, const json_t *root) {
  const json_t *schema, *fields;
  QvStatus st;
  if ((st = need_member(r, root, "schema", JSON_OBJECT, &schema))) return st;
  size_t m = qvi_errpath_push(&r->path, "schema");
  if ((st = need_member(r, schema, "fields", JSON_ARRAY, &fields))) return st;
  int64_t n = (int64_t)json_array_size(fields);
  struct ArrowSchema *s = &r->file->schema;
  if ((st = qv_arrow_schema_init(s, "+s", "", 0, n, r->error))) return st;
  if ((st = add_metadata(r, schema, s))) return st;
  size_t m2 = qvi_errpath_push(&r->path, ".fields");
  for (int64_t i = 0; i < n; i++) {
    size_t m3 = qvi_errpath_push(&r->path, "[%" PRId64 "]", i);
    if ((st = parse_field(r, json_array_get(fields, (size_t)i), s->children[i], 1))) return st;
    qvi_errpath_pop(&r->path, m3);
  }
  qvi_errpath_pop(&r->path, m2);
  qvi_errpath_pop(&r->path, m);
  return qv_arrow_schema_validate(s, r->error);
}

/* ---- columns */

static QvStatus build_column(Reader *r, const json_t *col, QvArrayView *v, int64_t want_count,
                             int depth);
static QvStatus get_dictionary(Reader *r, int64_t id, const struct ArrowArray **out);

/* A buffer member that must be an array of `n` entries. */
static QvStatus need_buffer(Reader *r, const json_t *col, const char *key, int64_t n,
                            const json_t **out) {
  const json_t *b = member(col, key);
  if (b == NULL) {
    if (n == 0) {
      *out = NULL;
      return QV_OK;
    }
    return fail(r, "%s is missing", key);
  }
  size_t m = qvi_errpath_push(&r->path, ".%s", key);
  QvStatus st = QV_OK;
  if (!json_is_array(b))
    st = fail(r, "expected an array, found %s", kind_name(b));
  else if ((int64_t)json_array_size(b) != n)
    st = fail(r, "%zu values, count is %" PRId64, json_array_size(b), n);
  if (st == QV_OK) qvi_errpath_pop(&r->path, m);
  *out = b;
  return st;
}

static QvStatus read_bit(Reader *r, const json_t *x, bool *bit) {
  if (json_is_boolean(x)) {
    *bit = json_is_true(x);
    return QV_OK;
  }
  if (json_is_integer(x) && (json_integer_value(x) == 0 || json_integer_value(x) == 1)) {
    *bit = json_integer_value(x) == 1;
    return QV_OK;
  }
  return fail(r, "expected 0 or 1, found %s", kind_name(x));
}

/* VALIDITY -> bitmap (NULL when every slot is valid) and null count. */
static QvStatus read_validity(Reader *r, const json_t *col, QvArrayView *v, int64_t count) {
  const json_t *b;
  QvStatus st = need_buffer(r, col, "VALIDITY", count, &b);
  if (st) return st;
  v->null_count = 0;
  if (b == NULL) return QV_OK;
  uint8_t *bits = alloc_buf(r, (count + 7) / 8);
  if (bits == NULL) return nomem(r);
  size_t m = qvi_errpath_push(&r->path, ".VALIDITY");
  elem_begin(r);
  int64_t nulls = 0;
  for (int64_t i = 0; i < count; i++) {
    bool bit;
    r->elem = i;
    if ((st = read_bit(r, json_array_get(b, (size_t)i), &bit))) return st;
    if (bit)
      bits[i >> 3] |= (uint8_t)(1u << (i & 7));
    else
      nulls++;
  }
  elem_end(r);
  qvi_errpath_pop(&r->path, m);
  v->null_count = nulls;
  v->buffer[0] = nulls ? bits : NULL;
  v->buffer_size[0] = nulls ? (count + 7) / 8 : 0;
  return QV_OK;
}

/* Unions and run-end encoded arrays have no validity; 0.17.1 unions still
 * carry an all-ones VALIDITY, which is accepted. */
static QvStatus no_validity(Reader *r, const json_t *col, int64_t count) {
  const json_t *b = member(col, "VALIDITY");
  if (b == NULL) return QV_OK;
  QvStatus st = need_buffer(r, col, "VALIDITY", count, &b);
  if (st) return st;
  for (int64_t i = 0; i < count; i++) {
    bool bit;
    if ((st = read_bit(r, json_array_get(b, (size_t)i), &bit))) return st;
    if (!bit)
      return fail(r, "VALIDITY[%" PRId64 "] is 0, but this type has no validity bitmap", i);
  }
  return QV_OK;
}

/* Integer range of a storage type. */
static void int_range(QvArrowType t, int64_t *lo, int64_t *hi) {
  switch (t) {
    case QV_ARROW_INT8: *lo = INT8_MIN; *hi = INT8_MAX; break;
    case QV_ARROW_UINT8: *lo = 0; *hi = UINT8_MAX; break;
    case QV_ARROW_INT16: *lo = INT16_MIN; *hi = INT16_MAX; break;
    case QV_ARROW_UINT16: *lo = 0; *hi = UINT16_MAX; break;
    case QV_ARROW_INT32:
    case QV_ARROW_INTERVAL_MONTHS: *lo = INT32_MIN; *hi = INT32_MAX; break;
    case QV_ARROW_UINT32: *lo = 0; *hi = UINT32_MAX; break;
    default: *lo = INT64_MIN; *hi = INT64_MAX; break;
  }
}

static QvStatus read_int_obj(Reader *r, const json_t *obj, const char *key, int64_t lo, int64_t hi,
                             int64_t *out) {
  const json_t *x = member(obj, key);
  /* the common case without touching the path (it is read for every value) */
  if (json_is_integer(x) && json_integer_value(x) >= lo && json_integer_value(x) <= hi) {
    *out = (int64_t)json_integer_value(x);
    return QV_OK;
  }
  if (x == NULL) return fail(r, "\"%s\" is missing", key);
  size_t m = qvi_errpath_push(&r->path, ".%s", key);
  QvStatus st = get_i64(r, x, out);
  if (st == QV_OK && (*out < lo || *out > hi))
    st = fail(r, "%" PRId64 " does not fit 32 bits", *out);
  if (st == QV_OK) qvi_errpath_pop(&r->path, m);
  return st;
}

/* One DATA value of a fixed-width type into dst. */
static QvStatus read_fixed_value(Reader *r, const QvArrayView *v, const json_t *x, uint8_t *dst) {
  QvArrowType t = v->type.storage_type;
  QvStatus st;
  switch (t) {
    case QV_ARROW_INT8: case QV_ARROW_UINT8: case QV_ARROW_INT16: case QV_ARROW_UINT16:
    case QV_ARROW_INT32: case QV_ARROW_UINT32:
    case QV_ARROW_INTERVAL_MONTHS: {
      int64_t lo, hi, val = 0;
      int_range(t, &lo, &hi);
      if ((st = get_i64(r, x, &val))) return st;
      if (val < lo || val > hi)
        return fail(r, "%" PRId64 " does not fit %s", val, qv_arrow_type_name(t));
      qvi_st_bits(dst, (size_t)v->type.byte_width, (uint64_t)val); /* the low bytes, host order */
      return QV_OK;
    }
    case QV_ARROW_INT64:
      if (json_is_string(x)) {
        /* 2^63..2^64-1 are out of range, unless asked for: then, as for
         * decimals, the bits of a negative value (arrow-js writes -1 as
         * "18446744073709551615") */
        uint64_t u;
        int64_t val;
        if (!parse_i64(json_string_value(x), json_string_length(x), &val)) {
          if (!parse_u64(json_string_value(x), json_string_length(x), &u))
            return fail(r, "\"%.40s\" is not a 64-bit integer", json_string_value(x));
          if (!r->unsigned_spelling)
            return fail(r, "\"%.40s\" is out of the range of %s (2^63 and up: arrow-js's "
                        "unsigned spelling of a negative value is read only when asked for)",
                        json_string_value(x), qv_arrow_type_name(v->type.type));
          memcpy(&val, &u, 8);
        }
        memcpy(dst, &val, 8);
        return QV_OK;
      } else {
        int64_t val = 0;
        if ((st = get_i64(r, x, &val))) return st;
        memcpy(dst, &val, 8);
        return QV_OK;
      }
    case QV_ARROW_UINT64: {
      uint64_t val = 0;
      if ((st = get_u64(r, x, &val))) return st;
      memcpy(dst, &val, 8);
      return QV_OK;
    }
    case QV_ARROW_FLOAT16: case QV_ARROW_FLOAT32: case QV_ARROW_FLOAT64: {
      double d = 0;
      if ((st = get_double(r, x, &d))) return st;
      if (t == QV_ARROW_FLOAT64) {
        memcpy(dst, &d, 8);
      } else if (t == QV_ARROW_FLOAT32) {
        /* jansson has already rounded the text to a double; the second
         * rounding to float can differ from strtof only for decimals that
         * lie within 2^-54 relative of a float midpoint */
        float f = (float)d;
        memcpy(dst, &f, 4);
      } else {
        uint16_t h = qvi_double_to_half(d);
        memcpy(dst, &h, 2);
      }
      return QV_OK;
    }
    case QV_ARROW_DECIMAL32: case QV_ARROW_DECIMAL64: case QV_ARROW_DECIMAL128:
    case QV_ARROW_DECIMAL256: {
      char buf[32];
      const char *s;
      size_t n;
      if (json_is_string(x)) {
        s = json_string_value(x);
        n = json_string_length(x);
      } else if (json_is_integer(x)) {
        n = (size_t)snprintf(buf, sizeof buf, "%" JSON_INTEGER_FORMAT, json_integer_value(x));
        s = buf;
      } else {
        return fail(r, "expected a decimal string, found %s", kind_name(x));
      }
      bool spelled_unsigned;
      if (!parse_decimal(s, n, dst, v->type.byte_width, r->unsigned_spelling, &spelled_unsigned)) {
        if (spelled_unsigned)
          return fail(r, "\"%.80s\" is out of the range of a signed %d-bit decimal (arrow-js's "
                      "unsigned spelling of a negative value is read only when asked for)", s,
                      v->type.byte_width * 8);
        return fail(r, "\"%.80s\" is not an integer of %d bits", s, v->type.byte_width * 8);
      }
      return QV_OK;
    }
    case QV_ARROW_FIXED_SIZE_BINARY: {
      if (!json_is_string(x)) return fail(r, "expected a hex string, found %s", kind_name(x));
      size_t n = json_string_length(x);
      if (n != 2 * (size_t)v->type.byte_width || decode_hex(json_string_value(x), n, dst) < 0)
        return fail(r, "\"%.40s\" is not %d bytes of hex", json_string_value(x),
                    v->type.byte_width);
      return QV_OK;
    }
    case QV_ARROW_INTERVAL_DAY_TIME: {
      if (!json_is_object(x)) return fail(r, "expected an object, found %s", kind_name(x));
      int64_t days, ms;
      if ((st = read_int_obj(r, x, "days", INT32_MIN, INT32_MAX, &days)) ||
          (st = read_int_obj(r, x, "milliseconds", INT32_MIN, INT32_MAX, &ms)))
        return st;
      int32_t p[2] = {(int32_t)days, (int32_t)ms};
      memcpy(dst, p, 8);
      return QV_OK;
    }
    case QV_ARROW_INTERVAL_MONTH_DAY_NANO: {
      if (!json_is_object(x)) return fail(r, "expected an object, found %s", kind_name(x));
      int64_t months, days, ns;
      if ((st = read_int_obj(r, x, "months", INT32_MIN, INT32_MAX, &months)) ||
          (st = read_int_obj(r, x, "days", INT32_MIN, INT32_MAX, &days)) ||
          (st = read_int_obj(r, x, "nanoseconds", INT64_MIN, INT64_MAX, &ns)))
        return st;
      int32_t p[2] = {(int32_t)months, (int32_t)days};
      memcpy(dst, p, 8);
      memcpy(dst + 8, &ns, 8);
      return QV_OK;
    }
    default: return fail(r, "no fixed-width encoding for %s", qv_arrow_type_name(t));
  }
}

/* A JSON null standing for the value of a null slot: not read (Arrow C++
 * does not read null slots' values either); the slot stays zero. */
static bool null_slot_value(const QvArrayView *v, const json_t *x, int64_t i) {
  return json_is_null(x) && v->buffer[0] != NULL && !((v->buffer[0][i >> 3] >> (i & 7)) & 1);
}

static QvStatus read_fixed(Reader *r, const json_t *col, QvArrayView *v, int64_t count) {
  const json_t *d;
  QvStatus st = need_buffer(r, col, "DATA", count, &d);
  if (st) return st;
  int64_t w = v->type.byte_width, size;
  if (__builtin_mul_overflow(count, w, &size)) return fail(r, "DATA size overflows");
  uint8_t *buf = alloc_buf(r, size);
  if (buf == NULL) return nomem(r);
  size_t m = qvi_errpath_push(&r->path, ".DATA");
  elem_begin(r);
  for (int64_t i = 0; i < count; i++) {
    r->elem = i;
    const json_t *x = json_array_get(d, (size_t)i);
    if (null_slot_value(v, x, i)) continue;
    if ((st = read_fixed_value(r, v, x, buf + i * w))) return st;
  }
  elem_end(r);
  qvi_errpath_pop(&r->path, m);
  v->buffer[1] = buf;
  v->buffer_size[1] = size;
  return QV_OK;
}

static QvStatus read_bool(Reader *r, const json_t *col, QvArrayView *v, int64_t count) {
  const json_t *d;
  QvStatus st = need_buffer(r, col, "DATA", count, &d);
  if (st) return st;
  uint8_t *bits = alloc_buf(r, (count + 7) / 8);
  if (bits == NULL) return nomem(r);
  size_t m = qvi_errpath_push(&r->path, ".DATA");
  elem_begin(r);
  for (int64_t i = 0; i < count; i++) {
    bool bit;
    r->elem = i;
    const json_t *x = json_array_get(d, (size_t)i);
    if (null_slot_value(v, x, i)) continue;
    if ((st = read_bit(r, x, &bit))) return st;
    if (bit) bits[i >> 3] |= (uint8_t)(1u << (i & 7));
  }
  elem_end(r);
  qvi_errpath_pop(&r->path, m);
  v->buffer[1] = bits;
  v->buffer_size[1] = (count + 7) / 8;
  return QV_OK;
}

/* OFFSET (n entries): 32-bit offsets are JSON integers, 64-bit ones
 * strings. Each entry must lie in 0..limit (limit < 0: no bound). */
static QvStatus read_offsets(Reader *r, const json_t *col, const char *key, int64_t n, int width,
                             int64_t limit, uint8_t **out, int64_t *vals_first) {
  const json_t *o;
  QvStatus st = need_buffer(r, col, key, n, &o);
  if (st) return st;
  uint8_t *buf = alloc_buf(r, n * width);
  if (buf == NULL) return nomem(r);
  size_t m = qvi_errpath_push(&r->path, ".%s", key);
  elem_begin(r);
  for (int64_t i = 0; i < n; i++) {
    r->elem = i;
    int64_t x;
    if ((st = get_i64(r, json_array_get(o, (size_t)i), &x))) return st;
    if (x < 0 || (width == 4 && x > INT32_MAX) || (limit >= 0 && x > limit))
      return fail(r, "%" PRId64 " is outside 0..%" PRId64, x,
                  limit >= 0 ? limit : (width == 4 ? (int64_t)INT32_MAX : INT64_MAX));
    if (width == 4) {
      int32_t y = (int32_t)x;
      memcpy(buf + 4 * i, &y, 4);
    } else {
      memcpy(buf + 8 * i, &x, 8);
    }
    if (i == 0 && vals_first) *vals_first = x;
  }
  elem_end(r);
  qvi_errpath_pop(&r->path, m);
  *out = buf;
  return QV_OK;
}

static int64_t ld_off(const uint8_t *b, int w, int64_t i) {
  if (w == 4) {
    int32_t x;
    memcpy(&x, b + 4 * i, 4);
    return x;
  }
  int64_t x;
  memcpy(&x, b + 8 * i, 8);
  return x;
}

/* Offsets must not decrease. */
static QvStatus check_monotonic(Reader *r, const char *key, const uint8_t *o, int w, int64_t n) {
  for (int64_t i = 1; i < n; i++)
    if (ld_off(o, w, i) < ld_off(o, w, i - 1))
      return fail(r, "%s[%" PRId64 "]: %" PRId64 " is less than the offset before it", key, i,
                  ld_off(o, w, i));
  return QV_OK;
}

static QvStatus read_binary(Reader *r, const json_t *col, QvArrayView *v, int64_t count) {
  bool utf8 = v->type.storage_type == QV_ARROW_STRING || v->type.storage_type == QV_ARROW_LARGE_STRING;
  int w = (v->type.storage_type == QV_ARROW_LARGE_BINARY ||
           v->type.storage_type == QV_ARROW_LARGE_STRING) ? 8 : 4;
  const json_t *d;
  QvStatus st = need_buffer(r, col, "DATA", count, &d);
  if (st) return st;
  uint8_t *off;
  if (member(col, "OFFSET") || count > 0) {
    if ((st = read_offsets(r, col, "OFFSET", count + 1, w, -1, &off, NULL))) return st;
    if ((st = check_monotonic(r, "OFFSET", off, w, count + 1))) return st;
  } else {
    off = alloc_buf(r, w);
    if (off == NULL) return nomem(r);
  }
  /* the data buffer holds exactly what DATA says; OFFSET must agree with
   * the length of every value */
  int64_t total = 0;
  size_t m = qvi_errpath_push(&r->path, ".DATA");
  elem_begin(r);
  for (int64_t i = 0; i < count; i++) {
    const json_t *x = json_array_get(d, (size_t)i);
    r->elem = i;
    int64_t span = ld_off(off, w, i + 1) - ld_off(off, w, i);
    if (null_slot_value(v, x, i)) { /* the bytes OFFSET gives it, zero */
      total += span;
      continue;
    }
    if (!json_is_string(x)) return fail(r, "expected a string, found %s", kind_name(x));
    int64_t n = utf8 ? (int64_t)json_string_length(x)
                     : decode_hex(json_string_value(x), json_string_length(x), NULL);
    if (n < 0) return fail(r, "\"%.40s\" is not hex", json_string_value(x));
    if (span != n)
      return fail(r, "%" PRId64 " bytes, but OFFSET[%" PRId64 "..%" PRId64 "] spans %" PRId64, n,
                  i, i + 1, span);
    total += n;
  }
  elem_end(r);
  qvi_errpath_pop(&r->path, m);
  if (w == 4 && total > INT32_MAX) return fail(r, "DATA holds more than 2^31 - 1 bytes");
  uint8_t *data = alloc_buf(r, total);
  if (data == NULL) return nomem(r);
  /* rebase the offsets to 0 (the differences were checked) */
  int64_t first = ld_off(off, w, 0), pos = 0;
  for (int64_t i = 0; i < count; i++) {
    const json_t *x = json_array_get(d, (size_t)i);
    if (null_slot_value(v, x, i)) {
      pos += ld_off(off, w, i + 1) - ld_off(off, w, i); /* zeroed by alloc_buf */
      continue;
    }
    size_t n = json_string_length(x);
    if (utf8) {
      memcpy(data + pos, json_string_value(x), n);
      pos += (int64_t)n;
    } else {
      pos += decode_hex(json_string_value(x), n, data + pos);
    }
  }
  for (int64_t i = 0; i <= count; i++) {
    int64_t x = ld_off(off, w, i) - first;
    if (w == 4) {
      int32_t y = (int32_t)x;
      memcpy(off + 4 * i, &y, 4);
    } else {
      memcpy(off + 8 * i, &x, 8);
    }
  }
  v->buffer[1] = off;
  v->buffer_size[1] = (count + 1) * w;
  v->buffer[2] = data;
  v->buffer_size[2] = total;
  return QV_OK;
}

static QvStatus read_views(Reader *r, const json_t *col, QvArrayView *v, int64_t count) {
  bool utf8 = v->type.storage_type == QV_ARROW_STRING_VIEW;
  const json_t *views, *bufs = member(col, "VARIADIC_DATA_BUFFERS");
  QvStatus st = need_buffer(r, col, "VIEWS", count, &views);
  if (st) return st;
  size_t nb = 0;
  if (bufs) {
    if (!json_is_array(bufs)) return fail(r, "VARIADIC_DATA_BUFFERS is not an array");
    nb = json_array_size(bufs);
  }
  if ((st = qv_array_view_reserve_variadic(v, (int64_t)nb, r->error))) return st;
  for (size_t k = 0; k < nb; k++) {
    const json_t *x = json_array_get(bufs, k);
    size_t n = json_is_string(x) ? json_string_length(x) : 1;
    int64_t bytes = json_is_string(x) ? decode_hex(json_string_value(x), n, NULL) : -1;
    if (bytes < 0 || bytes > INT32_MAX)
      return fail(r, "VARIADIC_DATA_BUFFERS[%zu] is not a hex string of at most 2^31 - 1 bytes",
                  k);
    uint8_t *b = alloc_buf(r, bytes);
    if (b == NULL) return nomem(r);
    decode_hex(json_string_value(x), n, b);
    v->variadic[k] = b;
    v->variadic_size[k] = bytes;
  }
  v->n_variadic = (int64_t)nb;
  uint8_t *vb = alloc_buf(r, count * 16);
  if (vb == NULL) return nomem(r);
  size_t m = qvi_errpath_push(&r->path, ".VIEWS");
  elem_begin(r);
  for (int64_t i = 0; i < count; i++) {
    const json_t *x = json_array_get(views, (size_t)i);
    r->elem = i;
    if (null_slot_value(v, x, i)) continue; /* an empty view */
    if (!json_is_object(x)) return fail(r, "expected a view object, found %s", kind_name(x));
    int64_t size;
    if ((st = read_int_obj(r, x, "SIZE", 0, INT32_MAX, &size))) return st;
    uint8_t *p = vb + 16 * i;
    int32_t s32 = (int32_t)size;
    memcpy(p, &s32, 4);
    if (size <= 12) {
      const json_t *in = member(x, "INLINED");
      if (!json_is_string(in)) return fail(r, "INLINED is missing or not a string");
      size_t n = json_string_length(in);
      int64_t bytes = utf8 ? (int64_t)n : decode_hex(json_string_value(in), n, NULL);
      if (bytes != size)
        return fail(r, "INLINED holds %" PRId64 " bytes, SIZE is %" PRId64, bytes, size);
      if (utf8)
        memcpy(p + 4, json_string_value(in), n);
      else
        decode_hex(json_string_value(in), n, p + 4);
    } else {
      const json_t *prefix = member(x, "PREFIX_HEX");
      int64_t bi, off;
      if (!json_is_string(prefix) || json_string_length(prefix) != 8 ||
          decode_hex(json_string_value(prefix), 8, p + 4) != 4)
        return fail(r, "PREFIX_HEX is missing or not 4 bytes of hex");
      if ((st = read_int_obj(r, x, "BUFFER_INDEX", 0, INT32_MAX, &bi)) ||
          (st = read_int_obj(r, x, "OFFSET", 0, INT32_MAX, &off)))
        return st;
      int32_t b32 = (int32_t)bi, o32 = (int32_t)off;
      memcpy(p + 8, &b32, 4);
      memcpy(p + 12, &o32, 4);
    }
  }
  elem_end(r);
  qvi_errpath_pop(&r->path, m);
  v->buffer[1] = vb;
  v->buffer_size[1] = count * 16;
  return QV_OK;
}

/* "children": one column per child of the type. */
static QvStatus need_children(Reader *r, const json_t *col, const QvArrayView *v,
                              const char *key, const json_t **out) {
  const json_t *c = member(col, key);
  if (c == NULL && v->n_children == 0) {
    *out = NULL;
    return QV_OK;
  }
  if (!json_is_array(c)) return fail(r, "\"%s\" is missing or not an array", key);
  if ((int64_t)json_array_size(c) != v->n_children)
    return fail(r, "%zu %s, the type has %" PRId64, json_array_size(c), key, v->n_children);
  *out = c;
  return QV_OK;
}

static QvStatus build_child(Reader *r, const json_t *children, QvArrayView *v, int64_t i,
                            int64_t want, int depth) {
  /* a batch (depth 0) is a struct whose children are its "columns" */
  size_t m = qvi_errpath_push(&r->path, ".%s[%" PRId64 "]", depth ? "children" : "columns", i);
  QvStatus st = build_column(r, json_array_get(children, (size_t)i), &v->children[i], want,
                             depth + 1);
  if (st == QV_OK) qvi_errpath_pop(&r->path, m);
  return st;
}

static int64_t dict_id_of(Reader *r, const struct ArrowSchema *node) {
  for (int64_t k = 0; k < r->file->n_dict_nodes; k++)
    if (r->file->dict_nodes[k] == node) return k;
  return -1;
}

static QvStatus build_column(Reader *r, const json_t *col, QvArrayView *v, int64_t want_count,
                             int depth) {
  if (depth > QV_ARRAY_MAX_DEPTH) return fail(r, "columns nested deeper than %d", QV_ARRAY_MAX_DEPTH);
  if (!json_is_object(col)) return fail(r, "expected a column object, found %s", kind_name(col));
  const json_t *cj;
  QvStatus st = need_member(r, col, "count", JSON_INTEGER, &cj);
  if (st) return st;
  int64_t count = (int64_t)json_integer_value(cj);
  if (count < 0) return fail(r, "count %" PRId64 " is negative", count);
  if (want_count >= 0 && count != want_count)
    return fail(r, "count is %" PRId64 ", expected %" PRId64, count, want_count);
  v->length = count;
  v->offset = 0;
  v->null_count = 0;
  QvArrowType t = v->type.storage_type;
  if (depth > 0 && qvi_ij_has_validity(t) && (st = read_validity(r, col, v, count))) return st;
  const json_t *children = NULL;
  if (v->n_children > 0 &&
      (st = need_children(r, col, v, depth ? "children" : "columns", &children)))
    return st;

  if (v->type.type == QV_ARROW_DICTIONARY) {
    int64_t k = dict_id_of(r, v->type.schema);
    const struct ArrowArray *dict;
    if (k < 0) return fail(r, "internal: dictionary node not registered");
    if ((st = read_fixed(r, col, v, count))) return st;
    if ((st = get_dictionary(r, r->file->dict_ids[k], &dict))) return st;
    v->dictionary->array = dict;
    v->dictionary->length = dict->length;
    return QV_OK;
  }
  int64_t w;
  switch (t) {
    case QV_ARROW_NULL: return QV_OK;
    case QV_ARROW_BOOL: return read_bool(r, col, v, count);
    case QV_ARROW_BINARY: case QV_ARROW_STRING: case QV_ARROW_LARGE_BINARY:
    case QV_ARROW_LARGE_STRING: return read_binary(r, col, v, count);
    case QV_ARROW_BINARY_VIEW: case QV_ARROW_STRING_VIEW: return read_views(r, col, v, count);
    case QV_ARROW_LIST: case QV_ARROW_LARGE_LIST: case QV_ARROW_MAP: {
      w = t == QV_ARROW_LARGE_LIST ? 8 : 4;
      if ((st = build_child(r, children, v, 0, -1, depth))) return st;
      uint8_t *off;
      if (count == 0 && member(col, "OFFSET") == NULL) {
        off = alloc_buf(r, w);
        if (off == NULL) return nomem(r);
      } else {
        if ((st = read_offsets(r, col, "OFFSET", count + 1, (int)w, v->children[0].length, &off,
                               NULL)) ||
            (st = check_monotonic(r, "OFFSET", off, (int)w, count + 1)))
          return st;
      }
      v->buffer[1] = off;
      v->buffer_size[1] = (count + 1) * w;
      return QV_OK;
    }
    case QV_ARROW_LIST_VIEW: case QV_ARROW_LARGE_LIST_VIEW: {
      w = t == QV_ARROW_LARGE_LIST_VIEW ? 8 : 4;
      if ((st = build_child(r, children, v, 0, -1, depth))) return st;
      int64_t clen = v->children[0].length;
      uint8_t *off, *sz;
      if ((st = read_offsets(r, col, "OFFSET", count, (int)w, clen, &off, NULL)) ||
          (st = read_offsets(r, col, "SIZE", count, (int)w, clen, &sz, NULL)))
        return st;
      for (int64_t i = 0; i < count; i++)
        if (ld_off(sz, (int)w, i) > clen - ld_off(off, (int)w, i))
          return fail(r, "element %" PRId64 " (OFFSET %" PRId64 ", SIZE %" PRId64
                      ") ends past the child's %" PRId64 " values", i, ld_off(off, (int)w, i),
                      ld_off(sz, (int)w, i), clen);
      v->buffer[1] = off;
      v->buffer[2] = sz;
      v->buffer_size[1] = v->buffer_size[2] = count * w;
      return QV_OK;
    }
    case QV_ARROW_FIXED_SIZE_LIST: {
      int64_t n;
      if (__builtin_mul_overflow(count, (int64_t)v->type.fixed_size, &n))
        return fail(r, "count * listSize overflows");
      return build_child(r, children, v, 0, n, depth);
    }
    case QV_ARROW_STRUCT:
      for (int64_t i = 0; i < v->n_children; i++)
        if ((st = build_child(r, children, v, i, count, depth))) return st;
      return QV_OK;
    case QV_ARROW_SPARSE_UNION: case QV_ARROW_DENSE_UNION: {
      bool dense = t == QV_ARROW_DENSE_UNION;
      if ((st = no_validity(r, col, count))) return st;
      for (int64_t i = 0; i < v->n_children; i++)
        if ((st = build_child(r, children, v, i, dense ? -1 : count, depth))) return st;
      const json_t *ids;
      if ((st = need_buffer(r, col, "TYPE_ID", count, &ids))) return st;
      uint8_t *codes = alloc_buf(r, count);
      if (codes == NULL) return nomem(r);
      for (int64_t i = 0; i < count; i++) {
        const json_t *x = json_array_get(ids, (size_t)i);
        json_int_t c = json_is_integer(x) ? json_integer_value(x) : -1;
        if (c < 0 || c > 127 || v->type.union_child_index[c] < 0)
          return fail(r, "TYPE_ID[%" PRId64 "] is not one of the union's typeIds", i);
        codes[i] = (uint8_t)c;
      }
      v->buffer[1] = codes;
      v->buffer_size[1] = count;
      if (dense) {
        uint8_t *off;
        if ((st = read_offsets(r, col, "OFFSET", count, 4, -1, &off, NULL))) return st;
        for (int64_t i = 0; i < count; i++) {
          int64_t child = v->type.union_child_index[codes[i]];
          if (ld_off(off, 4, i) >= v->children[child].length)
            return fail(r, "OFFSET[%" PRId64 "]: %" PRId64 " is past the %" PRId64
                        " values of child %" PRId64, i, ld_off(off, 4, i),
                        v->children[child].length, child);
        }
        v->buffer[2] = off;
        v->buffer_size[2] = count * 4;
      }
      return QV_OK;
    }
    case QV_ARROW_RUN_END_ENCODED: {
      if ((st = no_validity(r, col, count))) return st;
      if ((st = build_child(r, children, v, 0, -1, depth))) return st;
      const QvArrayView *re = &v->children[0];
      if ((st = build_child(r, children, v, 1, re->length, depth))) return st;
      if (re->null_count > 0) return fail(r, "children[0] (run ends) has nulls");
      int64_t prev = 0;
      for (int64_t i = 0; i < re->length; i++) {
        int64_t e = qv_array_view_get_int(re, i);
        if (e <= prev)
          return fail(r, "run end %" PRId64 " (%" PRId64 ") is not greater than %" PRId64, i, e,
                      prev);
        prev = e;
      }
      if (prev < count)
        return fail(r, "the runs end at %" PRId64 ", count is %" PRId64, prev, count);
      return QV_OK;
    }
    default: return read_fixed(r, col, v, count);
  }
}

/* Builds one column into an ArrowArray of its own memory, validated. */
static QvStatus build_array(Reader *r, const json_t *col, const struct ArrowSchema *type,
                            int64_t want_count, int depth, struct ArrowArray *out) {
  QvArrayView v;
  BufList *saved = r->bufs;
  BufList *bufs = calloc(1, sizeof *bufs);
  if (bufs == NULL) return nomem(r);
  r->bufs = bufs;
  QvStatus st = qv_array_view_init(&v, type, r->error);
  if (st) {
    r->bufs = saved;
    buflist_free(bufs);
    return st;
  }
  if ((st = build_column(r, col, &v, want_count, depth)) == QV_OK) {
    QvOwner *owner = qv_owner_new(buflist_free, bufs);
    if (owner == NULL) {
      st = nomem(r);
    } else {
      bufs = NULL;
      st = qv_array_export_view(&v, owner, out, r->error);
      qv_owner_free(owner);
      if (st == QV_OK && (st = qv_array_validate_flags(out, type, QV_VALIDATE_FULL,
                                                             r->decimal_overflow ? QV_VALIDATE_DECIMALS_UNBOUNDED : 0u,
                                                             r->error))) {
        qv_error_prefix(r->error, "%s", r->path.text);
        out->release(out);
      }
    }
  }
  qv_array_view_reset(&v);
  buflist_free(bufs);
  r->bufs = saved;
  return st;
}

static QvStatus get_dictionary(Reader *r, int64_t id, const struct ArrowArray **out) {
  QvJsonFile *f = r->file;
  Dict *d = NULL;
  for (int64_t k = 0; k < f->n_dicts; k++)
    if (f->dicts[k].id == id) d = &f->dicts[k];
  if (d == NULL) return fail(r, "dictionary id %" PRId64 " has no entry in \"dictionaries\"", id);
  if (d->state == 1) return fail(r, "dictionary %" PRId64 " contains itself", id);
  if (d->state == 0) {
    QvErrPath saved = r->path;
    r->path.len = 0;
    qvi_errpath_push(&r->path, "dictionaries[%zu].data.columns[0]", d->entry);
    d->state = 1;
    QvStatus st = build_array(r, d->column, d->type, d->count, 1, &d->values);
    if (st) return st;
    d->state = 2;
    r->path = saved;
  }
  *out = &d->values;
  return QV_OK;
}

static QvStatus parse_dictionaries(Reader *r, const json_t *root) {
  QvJsonFile *f = r->file;
  const json_t *dicts = member(root, "dictionaries");
  if (dicts == NULL || json_is_null(dicts)) return QV_OK;
  size_t m = qvi_errpath_push(&r->path, "dictionaries");
  if (!json_is_array(dicts)) return fail(r, "expected an array, found %s", kind_name(dicts));
  size_t n = json_array_size(dicts);
  f->dicts = calloc(n ? n : 1, sizeof *f->dicts);
  if (f->dicts == NULL) return nomem(r);
  QvStatus st;
  for (size_t i = 0; i < n; i++) {
    size_t m2 = qvi_errpath_push(&r->path, "[%zu]", i);
    const json_t *e = json_array_get(dicts, i), *data, *cols, *cnt;
    if (!json_is_object(e)) return fail(r, "expected an object, found %s", kind_name(e));
    int64_t id;
    if ((st = need_int_member(r, e, "id", INT64_MIN, INT64_MAX, &id))) return st;
    /* Integration.rst shows "data" as a list of batches; every writer
     * (and the gold files) writes one batch object */
    data = member(e, "data");
    if (json_is_array(data) && json_array_size(data) == 1) data = json_array_get(data, 0);
    if (!json_is_object(data)) return fail(r, "\"data\" is missing or not an object");
    size_t m3 = qvi_errpath_push(&r->path, ".data");
    if ((st = need_member(r, data, "count", JSON_INTEGER, &cnt)) ||
        (st = need_member(r, data, "columns", JSON_ARRAY, &cols)))
      return st;
    if (json_array_size(cols) != 1)
      return fail(r, "\"columns\" has %zu entries, a dictionary has one", json_array_size(cols));
    qvi_errpath_pop(&r->path, m3);
    for (int64_t k = 0; k < f->n_dicts; k++)
      if (f->dicts[k].id == id)
        return fail(r, "dictionary id %" PRId64 " appears twice (dictionaries[%zu])", id,
                    f->dicts[k].entry);
    const struct ArrowSchema *type = NULL;
    for (int64_t k = 0; k < f->n_dict_nodes && type == NULL; k++)
      if (f->dict_ids[k] == id) type = f->dict_nodes[k]->dictionary;
    if (type == NULL) return fail(r, "no field uses dictionary id %" PRId64, id);
    if (json_integer_value(cnt) < 0) return fail(r, "data.count is negative");
    Dict *d = &f->dicts[f->n_dicts++];
    d->id = id;
    d->column = json_array_get(cols, 0);
    d->entry = i;
    d->count = (int64_t)json_integer_value(cnt);
    d->type = type;
    qvi_errpath_pop(&r->path, m2);
  }
  qvi_errpath_pop(&r->path, m);
  /* build all of them now, so an unused dictionary is checked too */
  for (int64_t k = 0; k < f->n_dicts; k++) {
    const struct ArrowArray *a;
    if ((st = get_dictionary(r, f->dicts[k].id, &a))) return st;
  }
  return QV_OK;
}

static QvStatus parse_batches(Reader *r, const json_t *root) {
  QvJsonFile *f = r->file;
  const json_t *batches;
  QvStatus st = need_member(r, root, "batches", JSON_ARRAY, &batches);
  if (st) return st;
  size_t n = json_array_size(batches);
  f->batches = calloc(n ? n : 1, sizeof *f->batches);
  f->batch_ptrs = calloc(n ? n : 1, sizeof *f->batch_ptrs);
  if (f->batches == NULL || f->batch_ptrs == NULL) return nomem(r);
  for (size_t i = 0; i < n; i++) {
    size_t m = qvi_errpath_push(&r->path, "batches[%zu]", i);
    const json_t *b = json_array_get(batches, i), *cols, *cnt;
    if (!json_is_object(b)) return fail(r, "expected an object, found %s", kind_name(b));
    if ((st = need_member(r, b, "count", JSON_INTEGER, &cnt)) ||
        (st = need_member(r, b, "columns", JSON_ARRAY, &cols)))
      return st;
    if ((int64_t)json_array_size(cols) != f->schema.n_children)
      return fail(r, "%zu columns, the schema has %" PRId64 " fields", json_array_size(cols),
                  f->schema.n_children);
    if ((st = build_array(r, b, &f->schema, -1, 0, &f->batches[i]))) return st;
    f->batch_ptrs[i] = &f->batches[i];
    f->n_batches++;
    qvi_errpath_pop(&r->path, m);
  }
  return QV_OK;
}

void qv_json_file_free(QvJsonFile *f) {
  if (f == NULL) return;
  for (int64_t i = 0; i < f->n_batches; i++)
    if (f->batches[i].release) f->batches[i].release(&f->batches[i]);
  for (int64_t k = 0; k < f->n_dicts; k++)
    if (f->dicts[k].values.release) f->dicts[k].values.release(&f->dicts[k].values);
  for (int64_t k = 0; k < f->n_dict_nodes; k++) free(f->dict_paths[k]);
  if (f->schema.release) f->schema.release(&f->schema);
  free(f->batches);
  free(f->batch_ptrs);
  free(f->dict_nodes);
  free(f->dict_ids);
  free(f->dict_paths);
  free(f->dicts);
  free(f);
}

static QvStatus parse_text(QvJsonFile **out, const char *text, size_t len, int64_t max,
                           bool unsigned_spelling, bool decimal_overflow, QvError *error) {
  QvStatus st;
  if ((uint64_t)len > (uint64_t)max)
    return qv_error_set(error, QV_ELIMIT, "JSON text of %zu bytes is over the limit of %" PRId64,
                        len, max);
  json_error_t jerr;
  /* NUL characters are legal inside JSON strings (utf8 values); duplicate
   * keys would make the file ambiguous */
  json_t *root = json_loadb(text ? text : "", len, JSON_ALLOW_NUL | JSON_REJECT_DUPLICATES, &jerr);
  if (root == NULL)
    return qv_error_set(error, QV_EINVAL, "malformed JSON at line %d, column %d: %s", jerr.line,
                        jerr.column, jerr.text);
  QvJsonFile *f = calloc(1, sizeof *f);
  Reader r;
  memset(&r, 0, sizeof r);
  r.file = f;
  r.error = error;
  r.elem = -1;
  r.unsigned_spelling = unsigned_spelling;
  r.decimal_overflow = decimal_overflow;
  if (f == NULL) {
    st = nomem(&r);
  } else if (!json_is_object(root)) {
    st = fail(&r, "expected an object, found %s", kind_name(root));
  } else if ((st = parse_schema(&r, root)) == QV_OK && (st = parse_dictionaries(&r, root)) == QV_OK) {
    st = parse_batches(&r, root);
  }
  json_decref(root);
  if (st) {
    qv_json_file_free(f);
    return st;
  }
  *out = f;
  return QV_OK;
}

/* gzip members (RFC 1952, `.json.gz`), one after another, into one
 * buffer; each member's ISIZE trailer (its size mod 2^32) is the first
 * guess at its size, and the buffer grows while libdeflate says it is too
 * small, up to `max` bytes in all. */
static QvStatus gunzip(const uint8_t *in, size_t in_size, int64_t max, char **out, size_t *out_len,
                       QvError *error) {
  *out = NULL;
  *out_len = 0;
  struct libdeflate_decompressor *d = libdeflate_alloc_decompressor();
  if (d == NULL) return qv_error_set(error, QV_ENOMEM, "out of memory");
  char *buf = NULL;
  size_t len = 0, cap = 0;
  QvStatus st = QV_OK;
  while (st == QV_OK && in_size > 0) {
    if (in_size < 18 || in[0] != 0x1f || in[1] != 0x8b) {
      st = qv_error_set(error, QV_EINVAL, "gzip: trailing bytes after member are not a gzip member");
      break;
    }
    uint32_t isize = (uint32_t)in[in_size - 4] | (uint32_t)in[in_size - 3] << 8 |
                     (uint32_t)in[in_size - 2] << 16 | (uint32_t)in[in_size - 1] << 24;
    size_t want = len + (isize ? isize : 4096) + 1;
    for (;;) {
      if ((int64_t)want - 1 > max) want = (size_t)max + 1;
      if (want > cap) {
        char *b = realloc(buf, want);
        if (b == NULL) {
          st = qv_error_set(error, QV_ENOMEM, "out of memory inflating %zu bytes", want);
          break;
        }
        buf = b;
        cap = want;
      }
      size_t used = 0, produced = 0;
      enum libdeflate_result r = libdeflate_gzip_decompress_ex(d, in, in_size, buf + len,
                                                                cap - 1 - len, &used, &produced);
      if (r == LIBDEFLATE_SUCCESS) {
        len += produced;
        in += used;
        in_size -= used;
        break;
      }
      if (r != LIBDEFLATE_INSUFFICIENT_SPACE) {
        st = qv_error_set(error, QV_EINVAL, "gzip: the compressed data is corrupt");
        break;
      }
      if ((int64_t)(cap - 1) >= max) {
        st = qv_error_set(error, QV_ELIMIT,
                          "JSON text is over the limit of %" PRId64 " bytes once inflated", max);
        break;
      }
      want = cap * 2;
    }
  }
  libdeflate_free_decompressor(d);
  if (st) {
    free(buf);
    return st;
  }
  *out = buf;
  *out_len = len;
  return QV_OK;
}

QvStatus qv_json_read(QvJsonFile **out, QvSource *source, const QvJsonReadOptions *options,
                      QvError *error) {
  if (out == NULL || source == NULL)
    return qv_error_set(error, QV_EARG, "qv_json_read: out and source are required");
  *out = NULL;
  QvJsonReadOptions opt;
  QvStatus st = QV_OPTIONS_LOAD(&opt, options, QvJsonReadOptions, error);
  if (st) return st;
  int64_t max = opt.max_size > 0 ? opt.max_size : DEFAULT_MAX_SIZE;
  const uint8_t *data;
  size_t size;
  QvOwner *owner;
  if ((st = qv_source_read_all(source, max, &data, &size, &owner, error))) return st;
  if (size >= 2 && data[0] == 0x1f && data[1] == 0x8b) {
    char *text;
    size_t len;
    st = gunzip(data, size, max, &text, &len, error);
    qv_owner_free(owner);
    if (st == QV_OK) {
      st = parse_text(out, text, len, max, opt.accept_unsigned_spelling,
                      opt.accept_decimal_overflow, error);
      free(text);
    }
  } else {
    st = parse_text(out, (const char *)data, size, max, opt.accept_unsigned_spelling,
                      opt.accept_decimal_overflow, error);
    qv_owner_free(owner);
  }
  if (st && st != QV_ENOMEM) qv_error_prefix(error, "%s", qv_source_name(source));
  return st;
}

void qv_json_file_data(const QvJsonFile *f, QvJsonData *out) {
  memset(out, 0, sizeof *out);
  if (f == NULL) return;
  out->schema = &f->schema;
  out->batches = f->batch_ptrs;
  out->n_batches = f->n_batches;
  out->dictionary_ids = f->dict_ids;
  out->n_dictionary_ids = f->n_dict_nodes;
}

int64_t qv_json_file_n_dictionaries(const QvJsonFile *f) { return f ? f->n_dicts : 0; }

QvStatus qv_json_file_dictionary(const QvJsonFile *f, int64_t i, int64_t *id,
                                 const struct ArrowArray **values,
                                 const struct ArrowSchema **value_type, QvError *error) {
  if (f == NULL || i < 0 || i >= f->n_dicts)
    return qv_error_set(error, QV_EARG, "dictionary %" PRId64 " out of range", i);
  if (id) *id = f->dicts[i].id;
  if (values) *values = &f->dicts[i].values;
  if (value_type) *value_type = f->dicts[i].type;
  return QV_OK;
}
