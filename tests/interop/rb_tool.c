/* rb_tool: the C half of the record batch interop test against the
 * apache-arrow npm package (tests/scripts/test_js_rb_interop.sh).
 *
 *   rb_tool write-stream OUT   build batches with quiver's builders, write them
 *   rb_tool write-file OUT     as an IPC stream / file to OUT and describe
 *                              every value in OUT.json
 *   rb_tool dump FILE          read a stream or file with quiver (full
 *                              validation) and print the same JSON shape
 *
 * JSON shape (shared with tests/interop/js/rb_common.mjs):
 *   {"fields": [{"name", "type"}], "batches": [{"length", "columns": [[cell]]}]}
 * "type" is the C Data Interface format string with children in parentheses
 * and a dictionary's value type in braces, decimals always as d:P,S,W.
 * Cells: null; bool; 8-32 bit integers, date32, time32 and interval months as
 * numbers; 64-bit integers, date64, time64, timestamps and durations as decimal
 * strings (JavaScript numbers would round them); floats as numbers; decimals
 * as the unscaled integer in a string; day-time intervals [days, ms];
 * month-day-nano intervals [months, days, "ns"]; utf8 as strings; binary as
 * lowercase hex; lists as arrays; structs as objects; maps as [[key, value]];
 * unions as [type code, value]; dictionary-encoded cells as their value.
 *
 * write's JSON comes from the arrays handed to the writer, dump's from the
 * arrays the reader returned, through the same describe code. */
#include <inttypes.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "quiver/array.h"
#include "quiver/recordbatch_ipc.h"

static bool json_failed;

static void append(json_t *arr, json_t *value) {
  if (value == NULL || json_array_append_new(arr, value) != 0) json_failed = true;
}

static void set(json_t *obj, const char *key, json_t *value) {
  if (value == NULL || json_object_set_new(obj, key, value) != 0) {
    fprintf(stderr, "rb_tool: no JSON value for key \"%s\"\n", key);
    json_failed = true;
  }
}

static json_t *j_i64(int64_t v) {
  char buf[32];
  snprintf(buf, sizeof buf, "%" PRId64, v);
  return json_string(buf);
}

static json_t *j_u64(uint64_t v) {
  char buf[32];
  snprintf(buf, sizeof buf, "%" PRIu64, v);
  return json_string(buf);
}

static json_t *j_hex(const uint8_t *p, int64_t n) {
  char *s = malloc((size_t)n * 2 + 1);
  if (s == NULL) return NULL;
  for (int64_t k = 0; k < n; k++) snprintf(s + 2 * k, 3, "%02x", p[k]);
  s[2 * n] = '\0';
  json_t *j = json_string(s);
  free(s);
  return j;
}

static int32_t ld_i32(const uint8_t *p) {
  uint32_t v = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
  return (int32_t)v;
}

static int64_t ld_i64(const uint8_t *p) {
  uint64_t v = 0;
  for (int k = 7; k >= 0; k--) v = v << 8 | p[k];
  return (int64_t)v;
}

/* A little-endian two's complement integer of n bytes (n <= 32) as a
 * decimal string, by repeated division of its magnitude by 10. */
static json_t *j_bigint(const uint8_t *p, int n) {
  uint8_t mag[32];
  bool neg = (p[n - 1] & 0x80) != 0;
  unsigned carry = 1;
  for (int k = 0; k < n; k++) {
    unsigned b = neg ? (unsigned)(uint8_t)~p[k] + carry : p[k];
    if (neg) carry = b >> 8;
    mag[k] = (uint8_t)b;
  }
  char digits[100];
  int nd = 0;
  for (;;) {
    bool zero = true;
    unsigned rem = 0;
    for (int k = n - 1; k >= 0; k--) {
      unsigned cur = rem << 8 | mag[k];
      mag[k] = (uint8_t)(cur / 10);
      rem = cur % 10;
      if (mag[k]) zero = false;
    }
    digits[nd++] = (char)('0' + rem);
    if (zero) break;
  }
  char out[102];
  int o = 0;
  if (neg) out[o++] = '-';
  while (nd > 0) out[o++] = digits[--nd];
  out[o] = '\0';
  return json_string(out);
}

/* ---------------------------------------------------------- describing --- */

static json_t *cell(const QvArrayView *v, int64_t i);

static json_t *list_cells(const QvArrayView *child, int64_t start, int64_t len) {
  json_t *a = json_array();
  for (int64_t k = 0; a && k < len; k++) append(a, cell(child, start + k));
  return a;
}

/* The value at logical index i of a (validated) view. */
static json_t *cell(const QvArrayView *v, int64_t i) {
  QvArrowType t = v->type.type;
  if (t == QV_ARROW_SPARSE_UNION || t == QV_ARROW_DENSE_UNION) {
    int64_t child, idx;
    qv_array_view_get_union(v, i, &child, &idx);
    if (child < 0) return NULL;
    json_t *pair = json_array();
    json_t *value = cell(&v->children[child], idx);
    if (value == NULL)
      fprintf(stderr, "rb_tool: union child %lld (%s) index %lld: no JSON value\n", (long long)child,
              v->children[child].type.schema->format, (long long)idx);
    append(pair, json_integer(v->type.union_type_ids[child]));
    append(pair, value);
    return pair;
  }
  if (qv_array_view_is_null(v, i)) return json_null();
  if (t == QV_ARROW_DICTIONARY) {
    int64_t idx = qv_array_view_get_int(v, i);
    return cell(v->dictionary, idx);
  }
  switch (t) {
    case QV_ARROW_BOOL: return json_boolean(qv_array_view_get_int(v, i) != 0);
    case QV_ARROW_INT8:
    case QV_ARROW_INT16:
    case QV_ARROW_INT32:
    case QV_ARROW_UINT8:
    case QV_ARROW_UINT16:
    case QV_ARROW_UINT32:
    case QV_ARROW_DATE32:
    case QV_ARROW_TIME32:
    case QV_ARROW_INTERVAL_MONTHS: return json_integer(qv_array_view_get_int(v, i));
    case QV_ARROW_INT64:
    case QV_ARROW_DATE64:
    case QV_ARROW_TIME64:
    case QV_ARROW_TIMESTAMP:
    case QV_ARROW_DURATION: return j_i64(qv_array_view_get_int(v, i));
    case QV_ARROW_UINT64: return j_u64(qv_array_view_get_uint(v, i));
    case QV_ARROW_FLOAT16:
    case QV_ARROW_FLOAT32:
    case QV_ARROW_FLOAT64: return json_real(qv_array_view_get_double(v, i));
    case QV_ARROW_DECIMAL32:
    case QV_ARROW_DECIMAL64:
    case QV_ARROW_DECIMAL128:
    case QV_ARROW_DECIMAL256: {
      QvBytes b = qv_array_view_get_bytes(v, i);
      return j_bigint(b.data, (int)b.size);
    }
    case QV_ARROW_INTERVAL_DAY_TIME: {
      QvBytes b = qv_array_view_get_bytes(v, i);
      return json_pack("[ii]", (json_int_t)ld_i32(b.data), (json_int_t)ld_i32(b.data + 4));
    }
    case QV_ARROW_INTERVAL_MONTH_DAY_NANO: {
      QvBytes b = qv_array_view_get_bytes(v, i);
      return json_pack("[iio]", (json_int_t)ld_i32(b.data), (json_int_t)ld_i32(b.data + 4),
                       j_i64(ld_i64(b.data + 8)));
    }
    case QV_ARROW_STRING:
    case QV_ARROW_LARGE_STRING:
    case QV_ARROW_STRING_VIEW: {
      QvBytes b = qv_array_view_get_bytes(v, i);
      return json_stringn((const char *)b.data, (size_t)b.size);
    }
    case QV_ARROW_BINARY:
    case QV_ARROW_LARGE_BINARY:
    case QV_ARROW_BINARY_VIEW:
    case QV_ARROW_FIXED_SIZE_BINARY: {
      QvBytes b = qv_array_view_get_bytes(v, i);
      return j_hex(b.data, b.size);
    }
    case QV_ARROW_LIST:
    case QV_ARROW_LARGE_LIST:
    case QV_ARROW_LIST_VIEW:
    case QV_ARROW_LARGE_LIST_VIEW:
    case QV_ARROW_FIXED_SIZE_LIST: {
      int64_t start, len;
      qv_array_view_get_list(v, i, &start, &len);
      return list_cells(&v->children[0], start, len);
    }
    case QV_ARROW_MAP: {
      int64_t start, len;
      qv_array_view_get_list(v, i, &start, &len);
      const QvArrayView *entries = &v->children[0];
      json_t *a = json_array();
      for (int64_t k = 0; a && k < len; k++) {
        /* entries is a struct: its children are indexed through its offset */
        int64_t j = entries->offset + start + k;
        json_t *pair = json_array();
        append(pair, cell(&entries->children[0], j));
        append(pair, cell(&entries->children[1], j));
        append(a, pair);
      }
      return a;
    }
    case QV_ARROW_STRUCT: {
      json_t *o = json_object();
      for (int64_t k = 0; o && k < v->n_children; k++) {
        const char *name = v->children[k].type.schema->name;
        set(o, name ? name : "", cell(&v->children[k], v->offset + i));
      }
      return o;
    }
    default: return NULL; /* a type this test does not cover: fail loudly */
  }
}

/* Format string with children and dictionary, decimals normalized. */
static bool type_string(const struct ArrowSchema *s, char *out, size_t cap) {
  QvArrowSchemaView t;
  QvError e;
  if (qv_arrow_schema_view_init(&t, s, &e) != QV_OK) return false;
  size_t n = 0;
#define PUT(...)                                                       \
  do {                                                                 \
    int w_ = snprintf(out + n, cap - n, __VA_ARGS__);                  \
    if (w_ < 0 || (size_t)w_ >= cap - n) return false;                 \
    n += (size_t)w_;                                                   \
  } while (0)
  if (t.type >= QV_ARROW_DECIMAL32 && t.type <= QV_ARROW_DECIMAL256)
    PUT("d:%d,%d,%d", t.decimal_precision, t.decimal_scale, t.decimal_bit_width);
  else
    PUT("%s", s->format);
  if (s->n_children > 0) {
    PUT("(");
    for (int64_t k = 0; k < s->n_children; k++) {
      if (k) PUT(";");
      if (!type_string(s->children[k], out + n, cap - n)) return false;
      n += strlen(out + n);
    }
    PUT(")");
  }
  if (s->dictionary) {
    PUT("{");
    if (!type_string(s->dictionary, out + n, cap - n)) return false;
    n += strlen(out + n);
    PUT("}");
  }
#undef PUT
  return true;
}

static json_t *describe_fields(const struct ArrowSchema *root) {
  json_t *fields = json_array();
  for (int64_t k = 0; fields && k < root->n_children; k++) {
    char ts[512];
    if (!type_string(root->children[k], ts, sizeof ts)) {
      fprintf(stderr, "rb_tool: field %lld (%s): cannot describe its type\n", (long long)k,
              root->children[k]->format);
      json_failed = true;
      continue;
    }
    append(fields, json_pack("{s:s,s:s}", "name", root->children[k]->name ? root->children[k]->name : "",
                             "type", ts));
  }
  return fields;
}

/* Validates (full) and describes one batch; NULL on failure (message printed). */
static json_t *describe_batch(const struct ArrowSchema *root, const struct ArrowArray *batch) {
  QvArrayView v;
  QvError e;
  if (qv_array_view_init(&v, root, &e) != QV_OK ||
      qv_array_view_set_array(&v, batch, QV_VALIDATE_FULL, &e) != QV_OK) {
    fprintf(stderr, "rb_tool: invalid batch: %s\n", e.message);
    qv_array_view_reset(&v);
    return NULL;
  }
  json_t *cols = json_array();
  for (int64_t k = 0; cols && k < v.n_children; k++) {
    json_t *col = json_array();
    for (int64_t r = 0; col && r < v.length; r++) {
      json_t *c = cell(&v.children[k], v.offset + r);
      if (c == NULL)
        fprintf(stderr, "rb_tool: column %s row %lld: no JSON value\n",
                root->children[k]->name ? root->children[k]->name : "", (long long)r);
      append(col, c);
    }
    append(cols, col);
  }
  qv_array_view_reset(&v);
  return json_pack("{s:I,s:o}", "length", (json_int_t)batch->length, "columns", cols);
}

/* ------------------------------------------------------------ building --- */

typedef struct Column {
  const char *name;
  const char *spec; /* format [ "(" spec {";" spec} ")" ] [ "{" spec "}" ] */
} Column;

static const Column kColumns[] = {
    {"null", "n"},
    {"bool", "b"},
    {"int8", "c"},
    {"uint8", "C"},
    {"int16", "s"},
    {"uint16", "S"},
    {"int32", "i"},
    {"uint32", "I"},
    {"int64", "l"},
    {"uint64", "L"},
    {"float16", "e"},
    {"float32", "f"},
    {"float64", "g"},
    {"decimal128", "d:38,4"},
    {"decimal128_neg_scale", "d:12,-3"},
    {"date32", "tdD"},
    {"date64", "tdm"},
    {"time32_s", "tts"},
    {"time32_ms", "ttm"},
    {"time64_us", "ttu"},
    {"time64_ns", "ttn"},
    {"timestamp_s", "tss:"},
    {"timestamp_ms_utc", "tsm:UTC"},
    {"timestamp_us_ny", "tsu:America/New_York"},
    {"timestamp_ns_offset", "tsn:+05:30"},
    {"duration_s", "tDs"},
    {"duration_ms", "tDm"},
    {"duration_us", "tDu"},
    {"duration_ns", "tDn"},
    {"interval_months", "tiM"},
    {"interval_day_time", "tiD"},
    {"interval_mdn", "tin"},
    {"utf8", "u"},
    {"large_utf8", "U"},
    {"binary", "z"},
    {"large_binary", "Z"},
    {"fixed_binary", "w:3"},
    {"list_int32", "+l(i)"},
    {"large_list_utf8", "+L(u)"},
    {"fixed_list_int16", "+w:2(s)"},
    {"list_of_struct", "+l(+s(i;u))"},
    {"struct", "+s(i;u;+l(g);b)"},
    {"map", "+m(+s(u;i))"},
    {"sparse_union", "+us:0,1,2(i;u;b)"},
    {"dense_union", "+ud:5,9(g;u)"},
    {"dict_utf8", "i{u}"},
    {"dict_int8_utf8", "c{u}"},
    {"list_of_dict", "+l(s{u})"},
};
#define N_COLUMNS ((int)(sizeof kColumns / sizeof kColumns[0]))

static bool fail(const char *what, QvStatus st, const QvError *e) {
  fprintf(stderr, "rb_tool: %s: %s (%s)\n", what, e ? e->message : "", qv_status_name(st));
  return false;
}

static bool parse_spec(struct ArrowSchema *out, const char **p, const char *name, bool nullable) {
  char fmt[64];
  size_t n = 0;
  while (**p && strchr("(){};", **p) == NULL && n < sizeof fmt - 1) fmt[n++] = *(*p)++;
  fmt[n] = '\0';
  struct ArrowSchema kids[8];
  int nk = 0;
  bool is_map = strcmp(fmt, "+m") == 0;
  bool is_entries = name && strcmp(name, "entries") == 0;
  static const char *const kid_names[] = {"a", "b", "c", "d", "e", "f", "g", "h"};
  if (**p == '(') {
    (*p)++;
    for (;;) {
      const char *cname = is_map ? "entries" : is_entries ? (nk == 0 ? "key" : "value")
                          : (fmt[1] == 'l' || fmt[1] == 'L' || fmt[1] == 'w') ? "item"
                                                                              : kid_names[nk];
      /* map entries and their keys cannot be null */
      if (nk >= 8 || !parse_spec(&kids[nk], p, cname, !is_map && !(is_entries && nk == 0)))
        return false;
      nk++;
      if (**p == ';') {
        (*p)++;
        continue;
      }
      if (**p != ')') return false;
      (*p)++;
      break;
    }
  }
  QvError e;
  QvStatus st = qv_arrow_schema_init(out, fmt, name, nullable ? ARROW_FLAG_NULLABLE : 0, nk, &e);
  if (st != QV_OK) return fail("schema", st, &e);
  for (int k = 0; k < nk; k++) memcpy(out->children[k], &kids[k], sizeof kids[k]);
  if (**p == '{') {
    (*p)++;
    st = qv_arrow_schema_alloc_dictionary(out, &e);
    if (st != QV_OK) return fail("dictionary schema", st, &e);
    if (!parse_spec(out->dictionary, p, NULL, true) || **p != '}') return false;
    (*p)++;
  }
  return true;
}

static bool build_schema(struct ArrowSchema *root) {
  QvError e;
  QvStatus st = qv_arrow_schema_init(root, "+s", "", 0, N_COLUMNS, &e);
  if (st != QV_OK) return fail("root schema", st, &e);
  for (int k = 0; k < N_COLUMNS; k++) {
    const char *p = kColumns[k].spec;
    if (!parse_spec(root->children[k], &p, kColumns[k].name, true) || *p != '\0') {
      fprintf(stderr, "rb_tool: bad spec %s\n", kColumns[k].spec);
      return false;
    }
  }
  return true;
}

/* Number of dictionary values of batch b: batch 1 grows the dictionary of
 * batch 0, so quiver writes a delta dictionary batch. */
static int64_t dict_size(int b) { return b == 0 ? 4 : 6; }

static bool append_value(struct ArrowArray *a, const struct ArrowSchema *s, int64_t i, int batch,
                         bool allow_null);

#define TRY(expr)                                                         \
  do {                                                                    \
    QvStatus st_ = (expr);                                                \
    if (st_ != QV_OK) return fail(#expr, st_, NULL);                      \
  } while (0)

/* Appends deterministic value number i (null when i % 5 == 3 if allowed). */
static bool append_value(struct ArrowArray *a, const struct ArrowSchema *s, int64_t i, int batch,
                         bool allow_null) {
  QvArrowSchemaView t;
  QvError e;
  QvStatus st = qv_arrow_schema_view_init(&t, s, &e);
  if (st != QV_OK) return fail("schema view", st, &e);
  if (t.type == QV_ARROW_DICTIONARY) {
    if (a->dictionary->length == 0)
      for (int64_t k = 0; k < dict_size(batch); k++)
        if (!append_value(a->dictionary, s->dictionary, k, batch, false)) return false;
    if (allow_null && i % 5 == 3) TRY(qv_array_append_null(a, 1, NULL));
    else TRY(qv_array_append_int(a, (i * 3 + batch) % a->dictionary->length, NULL));
    return true;
  }
  bool is_union = t.type == QV_ARROW_SPARSE_UNION || t.type == QV_ARROW_DENSE_UNION;
  if (t.type == QV_ARROW_NULL || (allow_null && i % 5 == 3 && !is_union)) {
    TRY(qv_array_append_null(a, 1, NULL));
    return true;
  }
  int64_t sv = (i * 37) % 120 - 60; /* small signed */
  switch (t.type) {
    case QV_ARROW_BOOL: TRY(qv_array_append_int(a, (i * 7 / 3) % 2, NULL)); return true;
    case QV_ARROW_INT8:
    case QV_ARROW_INT16:
    case QV_ARROW_DATE32:
    case QV_ARROW_INTERVAL_MONTHS: TRY(qv_array_append_int(a, sv, NULL)); return true;
    case QV_ARROW_INT32: TRY(qv_array_append_int(a, sv * 30000001, NULL)); return true;
    case QV_ARROW_TIME32: TRY(qv_array_append_int(a, (i * 997) % 86400, NULL)); return true;
    case QV_ARROW_UINT8: TRY(qv_array_append_uint(a, 255 - (uint64_t)i, NULL)); return true;
    case QV_ARROW_UINT16: TRY(qv_array_append_uint(a, 65535 - (uint64_t)i * 3, NULL)); return true;
    case QV_ARROW_UINT32: TRY(qv_array_append_uint(a, 4294967295u - (uint64_t)i * 7, NULL)); return true;
    case QV_ARROW_UINT64: TRY(qv_array_append_uint(a, UINT64_MAX - (uint64_t)i * 1000003, NULL)); return true;
    case QV_ARROW_INT64:
    case QV_ARROW_TIMESTAMP:
    case QV_ARROW_DURATION:
    case QV_ARROW_DATE64:
    case QV_ARROW_TIME64: {
      /* beyond 2^53 (except time64, which is bounded by a day) */
      int64_t v = sv * 153722867280912929LL + 1;
      if (t.type == QV_ARROW_DATE64) v = sv * 86400000LL;
      if (t.type == QV_ARROW_TIME64)
        v = (i * 3600 + 7) * (t.time_unit == QV_TIME_NANOSECOND ? 1000000000LL : 1000000LL) + i;
      TRY(qv_array_append_int(a, v, NULL));
      return true;
    }
    case QV_ARROW_FLOAT16:
    case QV_ARROW_FLOAT32:
    case QV_ARROW_FLOAT64:
      TRY(qv_array_append_double(a, (double)sv * 0.25 + (t.type == QV_ARROW_FLOAT64 ? 1e-9 : 0), NULL));
      return true;
    case QV_ARROW_DECIMAL128: {
      /* some values need all 128 bits (and every value fits its precision,
       * which full validation checks: decimal128(12, -3) holds 12 digits) */
      uint8_t b[16];
      bool wide = t.decimal_precision >= 38;
      int64_t lo = sv * (wide ? 1234567890123LL : 1234567LL), hi = lo < 0 ? -1 : 0;
      if (wide && i % 3 == 1) hi = sv * 1000003;
      for (int k = 0; k < 8; k++) {
        b[k] = (uint8_t)((uint64_t)lo >> (8 * k));
        b[8 + k] = (uint8_t)((uint64_t)hi >> (8 * k));
      }
      TRY(qv_array_append_bytes(a, b, 16, NULL));
      return true;
    }
    case QV_ARROW_INTERVAL_DAY_TIME:
      TRY(qv_array_append_interval_day_time(a, (int32_t)sv, (int32_t)(sv * 1000 + 7), NULL));
      return true;
    case QV_ARROW_INTERVAL_MONTH_DAY_NANO:
      TRY(qv_array_append_interval_month_day_nano(a, (int32_t)i, -(int32_t)sv,
                                                  sv * 86400000000001LL, NULL));
      return true;
    case QV_ARROW_STRING:
    case QV_ARROW_LARGE_STRING:
    case QV_ARROW_BINARY:
    case QV_ARROW_LARGE_BINARY: {
      char text[64];
      int len = snprintf(text, sizeof text, "%s%lld-%.*s", i % 4 == 0 ? "\xc3\xa9\xe2\x82\xac" : "v",
                         (long long)i, (int)(i % 9), "abcdefghijklmnopqrstuvwxyz");
      if (i % 7 == 6) len = 0;
      if (t.type == QV_ARROW_BINARY || t.type == QV_ARROW_LARGE_BINARY) text[0] = (char)0xff;
      TRY(qv_array_append_bytes(a, text, len, NULL));
      return true;
    }
    case QV_ARROW_FIXED_SIZE_BINARY: {
      uint8_t b[16];
      for (int k = 0; k < t.byte_width && k < 16; k++) b[k] = (uint8_t)(i * 13 + k * 101);
      TRY(qv_array_append_bytes(a, b, t.byte_width, NULL));
      return true;
    }
    case QV_ARROW_LIST:
    case QV_ARROW_LARGE_LIST:
    case QV_ARROW_MAP: {
      int64_t n = i % 4;
      for (int64_t k = 0; k < n; k++)
        if (!append_value(a->children[0], s->children[0], i * 4 + k, batch, t.type != QV_ARROW_MAP))
          return false;
      TRY(qv_array_finish_element(a, NULL));
      return true;
    }
    case QV_ARROW_FIXED_SIZE_LIST:
      for (int64_t k = 0; k < t.fixed_size; k++)
        if (!append_value(a->children[0], s->children[0], i * t.fixed_size + k, batch, true))
          return false;
      TRY(qv_array_finish_element(a, NULL));
      return true;
    case QV_ARROW_STRUCT: {
      bool entries = s->name && strcmp(s->name, "entries") == 0;
      for (int64_t k = 0; k < t.n_children; k++)
        if (!append_value(a->children[k], s->children[k], i + k, batch, !(entries && k == 0)))
          return false;
      TRY(qv_array_finish_element(a, NULL));
      return true;
    }
    case QV_ARROW_SPARSE_UNION:
    case QV_ARROW_DENSE_UNION: {
      int64_t c = i % t.n_children;
      if (!append_value(a->children[c], s->children[c], i, batch, true)) return false;
      TRY(qv_array_finish_union_element(a, t.union_type_ids[c], NULL));
      return true;
    }
    default: fprintf(stderr, "rb_tool: no values for %s\n", s->format); return false;
  }
}

static bool build_batch(struct ArrowArray *out, const struct ArrowSchema *root, int64_t rows,
                        int64_t first, int batch) {
  QvError e;
  QvStatus st = qv_array_init_from_schema(out, root, &e);
  if (st != QV_OK) return fail("init_from_schema", st, &e);
  for (int64_t r = 0; r < rows; r++) {
    for (int64_t k = 0; k < root->n_children; k++)
      if (!append_value(out->children[k], root->children[k], first + r, batch, true)) return false;
    TRY(qv_array_finish_element(out, NULL));
  }
  st = qv_array_finish_building(out, QV_VALIDATE_FULL, &e);
  if (st != QV_OK) return fail("finish_building", st, &e);
  return true;
}

/* Batches: 13 rows, an empty batch, 9 rows (with a grown dictionary). */
#define N_BATCHES 3
static const int64_t kRows[N_BATCHES] = {13, 0, 9};

static int cmd_write(const char *out, QvIpcFormat format) {
  struct ArrowSchema root;
  struct ArrowArray batches[N_BATCHES];
  memset(&root, 0, sizeof root);
  memset(batches, 0, sizeof batches);
  int rc = 1;
  json_t *doc = NULL;
  QvSink *sink = NULL;
  QvRbWriter *w = NULL;
  QvError e;
  if (!build_schema(&root)) goto done;
  int64_t first = 0;
  for (int b = 0; b < N_BATCHES; b++) {
    if (kRows[b] == 0) {
      /* an empty slice of batch 0: same dictionaries, so none is rewritten */
      QvStatus st = qv_array_share(&batches[0], &batches[b], &e);
      if (st != QV_OK) {
        fail("share", st, &e);
        goto done;
      }
      batches[b].length = 0;
      continue;
    }
    if (!build_batch(&batches[b], &root, kRows[b], first, b == 0 ? 0 : 1)) goto done;
    first += kRows[b];
  }
  doc = json_object();
  set(doc, "fields", describe_fields(&root));
  json_t *jb = json_array();
  for (int b = 0; b < N_BATCHES; b++) append(jb, describe_batch(&root, &batches[b]));
  set(doc, "batches", jb);
  if (json_failed) {
    fprintf(stderr, "rb_tool: could not describe the batches\n");
    goto done;
  }
  QvRbWriteOptions opt;
  memset(&opt, 0, sizeof opt);
  opt.format = format;
  opt.validate = QV_VALIDATE_FULL;
  QvStatus st = qv_sink_new_path(&sink, out, 0, &e);
  if (st == QV_OK) st = qv_rb_writer_new(&w, &root, sink, &opt, &e);
  for (int b = 0; st == QV_OK && b < N_BATCHES; b++) st = qv_rb_writer_write(w, &batches[b], &e);
  if (st == QV_OK) st = qv_rb_writer_finish(w, &e);
  if (st == QV_OK) st = qv_sink_finish(sink, &e);
  if (st != QV_OK) {
    fail("write", st, &e);
    goto done;
  }
  char path[4096];
  snprintf(path, sizeof path, "%s.json", out);
  if (json_dump_file(doc, path, JSON_INDENT(1)) != 0) {
    fprintf(stderr, "rb_tool: cannot write %s\n", path);
    goto done;
  }
  rc = 0;
done:
  qv_rb_writer_free(w);
  qv_sink_free(sink);
  json_decref(doc);
  for (int b = 0; b < N_BATCHES; b++)
    if (batches[b].release) batches[b].release(&batches[b]);
  if (root.release) root.release(&root);
  return rc;
}

static bool is_file_format(const char *path) {
  FILE *f = fopen(path, "rb");
  char magic[6] = {0};
  bool file = f && fread(magic, 1, 6, f) == 6 && memcmp(magic, "ARROW1", 6) == 0;
  if (f) fclose(f);
  return file;
}

static int cmd_dump(const char *path) {
  QvRbReadOptions ro;
  memset(&ro, 0, sizeof ro);
  ro.validate = QV_VALIDATE_FULL;
  QvError e;
  QvStatus st;
  struct ArrowSchema root;
  memset(&root, 0, sizeof root);
  json_t *batches = json_array();
  bool ok = false;
  if (is_file_format(path)) {
    QvRbFileReader *r = NULL;
    QvSource *src = NULL;
    st = qv_source_new_path(&src, path, &e);
    if (st == QV_OK) st = qv_rb_file_reader_new(&r, src, &ro, &e);
    qv_source_free(src);
    if (st == QV_OK) st = qv_rb_file_get_schema(r, &root, &e);
    for (int64_t b = 0; st == QV_OK && b < qv_rb_file_n_batches(r); b++) {
      struct ArrowArray a;
      st = qv_rb_file_read_batch(r, b, &a, &e);
      if (st != QV_OK) break;
      json_t *d = describe_batch(&root, &a);
      a.release(&a);
      if (d == NULL) st = QV_EINVAL;
      append(batches, d);
    }
    qv_rb_file_reader_free(r);
  } else {
    struct ArrowArrayStream s;
    s.release = NULL;
    QvSource *src = NULL;
    st = qv_source_new_path(&src, path, &e);
    if (st == QV_OK) st = qv_rb_stream_reader_new(&s, src, &ro, &e);
    qv_source_free(src);
    if (st == QV_OK) st = qv_rb_stream_get_schema(&s, &root, &e);
    while (st == QV_OK) {
      struct ArrowArray a;
      st = qv_rb_stream_get_next(&s, &a, &e);
      if (st == QV_EOS) {
        st = QV_OK;
        break;
      }
      if (st != QV_OK) break;
      json_t *d = describe_batch(&root, &a);
      a.release(&a);
      if (d == NULL) st = QV_EINVAL;
      append(batches, d);
    }
    if (s.release) s.release(&s);
  }
  if (st != QV_OK) {
    fprintf(stderr, "rb_tool: %s: %s (%s)\n", path, e.message, qv_status_name(st));
  } else {
    json_t *doc = json_object();
    set(doc, "fields", describe_fields(&root));
    set(doc, "batches", json_incref(batches));
    if (!json_failed && json_dumpf(doc, stdout, JSON_INDENT(1)) == 0) {
      ok = true;
      putchar('\n');
    } else {
      fprintf(stderr, "rb_tool: could not describe %s\n", path);
    }
    json_decref(doc);
  }
  json_decref(batches);
  if (root.release) root.release(&root);
  return ok ? 0 : 1;
}

int main(int argc, char **argv) {
  if (argc == 3 && strcmp(argv[1], "write-stream") == 0) return cmd_write(argv[2], QV_IPC_FORMAT_STREAM);
  if (argc == 3 && strcmp(argv[1], "write-file") == 0) return cmd_write(argv[2], QV_IPC_FORMAT_FILE);
  if (argc == 3 && strcmp(argv[1], "dump") == 0) return cmd_dump(argv[2]);
  fprintf(stderr, "usage: rb_tool write-stream OUT | write-file OUT | dump FILE\n");
  return 2;
}
