/* ArrowSchema + ArrowArrays -> integration JSON text.
 *
 * The text is emitted directly (no JSON tree is built). Every batch is
 * validated in full first, so the values read here are in bounds and utf8
 * values are valid UTF-8. Values under null slots are written when they are
 * plain bits (fixed-width types, list ranges); null binary/utf8 values and
 * views are written empty, which keeps the text valid JSON whatever bytes
 * such a slot holds (the format allows any value there). */
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "integration/json_internal.h"
#include "quiver/sparse.h"
#include "util/grow.h"
#include "util/load.h"
#include "util/options.h"

/* The text goes out in two passes: the first only counts its bytes and
 * stops as soon as they pass the limit (so a batch of 2^40 rows whose text
 * would take terabytes is refused at once, before any output), the second
 * writes it to the sink in chunks. */
typedef struct Out {
  QvStrBuf text;  /* the second pass's pending chunk */
  int indent;  /* spaces per level, < 0: one line */
  int level;
  bool counting;  /* the first pass: count, store nothing */
  int64_t total;  /* bytes produced so far */
  int64_t limit;  /* the most bytes allowed */
  bool over;      /* total passed limit: stop */
  bool stop;      /* over, nomem or a sink error: nothing more is produced */
  QvSink *sink;   /* the second pass's destination */
  QvStatus sink_status;
  QvError *error;
} Out;

#define SINK_CHUNK ((size_t)1 << 16)

static void flush_out(Out *o) {
  if (o->text.len == 0 || o->stop) return;
  o->sink_status = qv_sink_write(o->sink, o->text.data, o->text.len, o->error);
  o->text.len = 0;
  if (o->sink_status) o->stop = true;
}

static void put(Out *o, const char *s, size_t n) {
  if (o->stop || n == 0) return;
  if ((int64_t)n > o->limit - o->total) {
    o->over = o->stop = true;
    return;
  }
  o->total += (int64_t)n;
  if (o->counting) return;
  if (!qvi_strbuf_put(&o->text, s, n)) {
    o->stop = true;
    return;
  }
  if (o->text.len >= SINK_CHUNK) flush_out(o);
}

/* While counting, `items` values of at least `each` bytes apiece (their
 * separators included) are about to be written: when that alone passes
 * the limit, stop now rather than walk them. */
static void expect(Out *o, int64_t items, int64_t each) {
  if (!o->counting || o->stop || items <= 0) return;
  if (items > (o->limit - o->total) / each) o->over = o->stop = true;
}

static int puts_(Out *o, const char *s) {
  put(o, s, strlen(s));
  return 0;
}

static int putf(Out *o, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
static int putf(Out *o, const char *fmt, ...) {
  char buf[QVI_SHORT_TEXT];
  va_list ap;
  va_start(ap, fmt);
  size_t n = qvi_format_short(buf, fmt, ap);
  va_end(ap);
  put(o, buf, n);
  return 0;
}

static void newline(Out *o) {
  if (o->indent < 0) return;
  put(o, "\n", 1);
  for (int i = 0; i < o->level * o->indent; i++) put(o, " ", 1);
}

/* Opens an object or array; members follow with `key`. */
static void open_(Out *o, char c) {
  put(o, &c, 1);
  o->level++;
}
static void close_(Out *o, char c) {
  o->level--;
  newline(o);
  put(o, &c, 1);
}
/* A member key on its own line (first: no comma before it). */
static void key(Out *o, bool *first, const char *k) {
  if (!*first) put(o, ",", 1);
  *first = false;
  newline(o);
  putf(o, "\"%s\": ", k);
}

static void put_string(Out *o, const uint8_t *s, int64_t n) {
  if (s == NULL) s = (const uint8_t *)""; /* empty values may have no buffer */
  put(o, "\"", 1);
  int64_t run = 0;
  for (int64_t i = 0; i < n; i++) {
    uint8_t c = s[i];
    if (c >= 0x20 && c != '"' && c != '\\') {
      run++;
      continue;
    }
    put(o, (const char *)s + i - run, (size_t)run);
    run = 0;
    switch (c) {
      case '"': puts_(o, "\\\""); break;
      case '\\': puts_(o, "\\\\"); break;
      case '\n': puts_(o, "\\n"); break;
      case '\t': puts_(o, "\\t"); break;
      case '\r': puts_(o, "\\r"); break;
      default: putf(o, "\\u%04x", c);
    }
  }
  put(o, (const char *)s + n - run, (size_t)run);
  put(o, "\"", 1);
}

static void put_cstring(Out *o, const char *s) {
  put_string(o, (const uint8_t *)(s ? s : ""), (int64_t)strlen(s ? s : ""));
}

static void put_hex(Out *o, const uint8_t *p, int64_t n) {
  static const char digits[] = "0123456789ABCDEF";
  put(o, "\"", 1);
  char buf[256];
  int k = 0;
  for (int64_t i = 0; i < n; i++) {
    buf[k++] = digits[p[i] >> 4];
    buf[k++] = digits[p[i] & 15];
    if (k == sizeof buf) {
      put(o, buf, (size_t)k);
      k = 0;
    }
  }
  put(o, buf, (size_t)k);
  put(o, "\"", 1);
}

/* Shortest text that reads back to the same value (JSON has no NaN or
 * infinities: those become strings, read back by the reader). */
static int put_double(Out *o, double d, bool single) {
  if (isnan(d)) return puts_(o, "\"NaN\"");
  if (isinf(d)) return puts_(o, d > 0 ? "\"Infinity\"" : "\"-Infinity\"");
  char buf[40];
  for (int prec = single ? 6 : 15; prec <= 17; prec++) {
    snprintf(buf, sizeof buf, "%.*g", prec, d);
    if (single ? (float)strtod(buf, NULL) == (float)d : strtod(buf, NULL) == d) break;
  }
  /* "1" would read back as an integer and "-0" as 0: keep it a real */
  if (strpbrk(buf, ".eE") == NULL) strcat(buf, ".0");
  return puts_(o, buf);
}

/* Host-order two's complement of `width` bytes -> decimal text. */
static void put_decimal(Out *o, const uint8_t *p, int width) {
  uint32_t w[8] = {0};
  int nw = width / 4;
  uint8_t le[32];
  qvi_le_bytes(le, p, (size_t)width);
  for (int k = 0; k < nw; k++) w[k] = qvi_le_u32(le + 4 * k); /* little-endian words */
  bool neg = (w[nw - 1] >> 31) != 0;
  if (neg) qvi_ij_negate_words(w, nw);
  char digits[90];
  int nd = 0;
  for (;;) {
    bool zero = true;
    uint64_t rem = 0;
    for (int k = nw - 1; k >= 0; k--) {
      uint64_t x = (rem << 32) | w[k];
      w[k] = (uint32_t)(x / 10);
      rem = x % 10;
      if (w[k]) zero = false;
    }
    digits[nd++] = (char)('0' + rem);
    if (zero) break;
  }
  char text[92];
  int n = 0;
  text[n++] = '"';
  if (neg) text[n++] = '-';
  while (nd > 0) text[n++] = digits[--nd];
  text[n++] = '"';
  put(o, text, (size_t)n);
}

/* ---- schema */

static const char *unit_name(int unit) {
  static const char *const names[] = {"SECOND", "MILLISECOND", "MICROSECOND", "NANOSECOND"};
  return names[unit & 3];
}

static int put_int_type(Out *o, QvArrowType t) {
  int bits = 0;
  bool is_signed = false;
  switch (t) {
    case QV_ARROW_INT8: bits = 8; is_signed = true; break;
    case QV_ARROW_UINT8: bits = 8; break;
    case QV_ARROW_INT16: bits = 16; is_signed = true; break;
    case QV_ARROW_UINT16: bits = 16; break;
    case QV_ARROW_INT32: bits = 32; is_signed = true; break;
    case QV_ARROW_UINT32: bits = 32; break;
    case QV_ARROW_INT64: bits = 64; is_signed = true; break;
    default: bits = 64; break;
  }
  return putf(o, "{\"name\": \"int\", \"bitWidth\": %d, \"isSigned\": %s}", bits,
              is_signed ? "true" : "false");
}

/* The Type object of a (value) schema node. */
static int put_type(Out *o, const QvArrowSchemaView *v) {
  const struct ArrowSchema *s = v->schema;
  switch (v->type) {
    case QV_ARROW_NULL: return puts_(o, "{\"name\": \"null\"}");
    case QV_ARROW_BOOL: return puts_(o, "{\"name\": \"bool\"}");
    case QV_ARROW_INT8: case QV_ARROW_UINT8: case QV_ARROW_INT16: case QV_ARROW_UINT16:
    case QV_ARROW_INT32: case QV_ARROW_UINT32: case QV_ARROW_INT64: case QV_ARROW_UINT64:
      return put_int_type(o, v->type);
    case QV_ARROW_FLOAT16: return puts_(o, "{\"name\": \"floatingpoint\", \"precision\": \"HALF\"}");
    case QV_ARROW_FLOAT32: return puts_(o, "{\"name\": \"floatingpoint\", \"precision\": \"SINGLE\"}");
    case QV_ARROW_FLOAT64: return puts_(o, "{\"name\": \"floatingpoint\", \"precision\": \"DOUBLE\"}");
    case QV_ARROW_DECIMAL32: case QV_ARROW_DECIMAL64: case QV_ARROW_DECIMAL128:
    case QV_ARROW_DECIMAL256:
      return putf(o, "{\"name\": \"decimal\", \"precision\": %d, \"scale\": %d, \"bitWidth\": %d}",
                  v->decimal_precision, v->decimal_scale, v->decimal_bit_width);
    case QV_ARROW_DATE32: return puts_(o, "{\"name\": \"date\", \"unit\": \"DAY\"}");
    case QV_ARROW_DATE64: return puts_(o, "{\"name\": \"date\", \"unit\": \"MILLISECOND\"}");
    case QV_ARROW_TIME32: case QV_ARROW_TIME64:
      return putf(o, "{\"name\": \"time\", \"unit\": \"%s\", \"bitWidth\": %d}",
                  unit_name(v->time_unit), v->type == QV_ARROW_TIME32 ? 32 : 64);
    case QV_ARROW_TIMESTAMP:
      putf(o, "{\"name\": \"timestamp\", \"unit\": \"%s\"", unit_name(v->time_unit));
      if (v->timezone_len > 0) {
        puts_(o, ", \"timezone\": ");
        put_string(o, (const uint8_t *)v->timezone, (int64_t)v->timezone_len);
      }
      return puts_(o, "}");
    case QV_ARROW_DURATION:
      return putf(o, "{\"name\": \"duration\", \"unit\": \"%s\"}", unit_name(v->time_unit));
    case QV_ARROW_INTERVAL_MONTHS: return puts_(o, "{\"name\": \"interval\", \"unit\": \"YEAR_MONTH\"}");
    case QV_ARROW_INTERVAL_DAY_TIME: return puts_(o, "{\"name\": \"interval\", \"unit\": \"DAY_TIME\"}");
    case QV_ARROW_INTERVAL_MONTH_DAY_NANO:
      return puts_(o, "{\"name\": \"interval\", \"unit\": \"MONTH_DAY_NANO\"}");
    case QV_ARROW_BINARY: return puts_(o, "{\"name\": \"binary\"}");
    case QV_ARROW_STRING: return puts_(o, "{\"name\": \"utf8\"}");
    case QV_ARROW_LARGE_BINARY: return puts_(o, "{\"name\": \"largebinary\"}");
    case QV_ARROW_LARGE_STRING: return puts_(o, "{\"name\": \"largeutf8\"}");
    case QV_ARROW_BINARY_VIEW: return puts_(o, "{\"name\": \"binaryview\"}");
    case QV_ARROW_STRING_VIEW: return puts_(o, "{\"name\": \"utf8view\"}");
    case QV_ARROW_FIXED_SIZE_BINARY:
      return putf(o, "{\"name\": \"fixedsizebinary\", \"byteWidth\": %d}", v->byte_width);
    case QV_ARROW_LIST: return puts_(o, "{\"name\": \"list\"}");
    case QV_ARROW_LARGE_LIST: return puts_(o, "{\"name\": \"largelist\"}");
    case QV_ARROW_LIST_VIEW: return puts_(o, "{\"name\": \"listview\"}");
    case QV_ARROW_LARGE_LIST_VIEW: return puts_(o, "{\"name\": \"largelistview\"}");
    case QV_ARROW_FIXED_SIZE_LIST:
      return putf(o, "{\"name\": \"fixedsizelist\", \"listSize\": %d}", v->fixed_size);
    case QV_ARROW_STRUCT: return puts_(o, "{\"name\": \"struct\"}");
    case QV_ARROW_MAP:
      return putf(o, "{\"name\": \"map\", \"keysSorted\": %s}",
                  (s->flags & ARROW_FLAG_MAP_KEYS_SORTED) ? "true" : "false");
    case QV_ARROW_SPARSE_UNION: case QV_ARROW_DENSE_UNION:
      putf(o, "{\"name\": \"union\", \"mode\": \"%s\", \"typeIds\": [",
           v->type == QV_ARROW_DENSE_UNION ? "DENSE" : "SPARSE");
      for (int64_t i = 0; i < v->n_children; i++) putf(o, "%s%d", i ? ", " : "", v->union_type_ids[i]);
      return puts_(o, "]}");
    case QV_ARROW_RUN_END_ENCODED: return puts_(o, "{\"name\": \"runendencoded\"}");
    default: return puts_(o, "{\"name\": \"null\"}");
  }
}

static void put_metadata(Out *o, bool *first, const char *md) {
  if (md == NULL) return;
  QvArrowMetadataIter it;
  const char *k, *v;
  int32_t kl, vl;
  qv_arrow_metadata_iter_init(&it, md);
  if (!qv_arrow_metadata_iter_next(&it, &k, &kl, &v, &vl)) return;
  key(o, first, "metadata");
  open_(o, '[');
  bool f = true;
  qv_arrow_metadata_iter_init(&it, md);
  while (qv_arrow_metadata_iter_next(&it, &k, &kl, &v, &vl)) {
    if (!f) put(o, ",", 1);
    f = false;
    newline(o);
    puts_(o, "{\"key\": ");
    put_string(o, (const uint8_t *)k, kl);
    puts_(o, ", \"value\": ");
    put_string(o, (const uint8_t *)v, vl);
    puts_(o, "}");
  }
  close_(o, ']');
}

typedef struct Writer {
  Out out;
  QvError *error;
  const struct ArrowSchema **dict_nodes;
  const int64_t *ids;
  int64_t n_dict_nodes;
  /* one dictionary per id: the first view seen */
  int64_t *dict_id;
  const QvArrayView **dict_view;
  int64_t n_dicts;
} Writer;

static int64_t node_id(const Writer *w, const struct ArrowSchema *node) {
  for (int64_t k = 0; k < w->n_dict_nodes; k++)
    if (w->dict_nodes[k] == node) return w->ids[k];
  return 0;
}

static void put_field(Writer *w, const struct ArrowSchema *s) {
  Out *o = &w->out;
  const struct ArrowSchema *value = s->dictionary ? s->dictionary : s;
  QvArrowSchemaView v, iv;
  qv_arrow_schema_view_init(&v, value, NULL); /* validated by the caller */
  open_(o, '{');
  bool first = true;
  key(o, &first, "name");
  put_cstring(o, s->name);
  key(o, &first, "nullable");
  puts_(o, (s->flags & ARROW_FLAG_NULLABLE) ? "true" : "false");
  key(o, &first, "type");
  put_type(o, &v);
  key(o, &first, "children");
  if (value->n_children == 0) {
    puts_(o, "[]");
  } else {
    open_(o, '[');
    for (int64_t i = 0; i < value->n_children; i++) {
      if (i) put(o, ",", 1);
      newline(o);
      put_field(w, value->children[i]);
    }
    close_(o, ']');
  }
  if (s->dictionary) {
    qv_arrow_schema_view_init(&iv, s, NULL);
    key(o, &first, "dictionary");
    putf(o, "{\"id\": %" PRId64 ", \"indexType\": ", node_id(w, s));
    put_int_type(o, iv.storage_type);
    putf(o, ", \"isOrdered\": %s}", (s->flags & ARROW_FLAG_DICTIONARY_ORDERED) ? "true" : "false");
  }
  put_metadata(o, &first, s->metadata);
  close_(o, '}');
}

/* ---- columns */

static void put_int_value(Out *o, const QvArrayView *v, int64_t i) {
  switch (v->type.storage_type) {
    case QV_ARROW_INT64: putf(o, "\"%" PRId64 "\"", qv_array_view_get_int(v, i)); break;
    case QV_ARROW_UINT64: putf(o, "\"%" PRIu64 "\"", qv_array_view_get_uint(v, i)); break;
    default: putf(o, "%" PRId64, qv_array_view_get_int(v, i)); break;
  }
}

static void put_value(Out *o, const QvArrayView *v, int64_t i) {
  QvArrowType t = v->type.storage_type;
  switch (t) {
    case QV_ARROW_BOOL: puts_(o, qv_array_view_get_int(v, i) ? "true" : "false"); return;
    case QV_ARROW_FLOAT16: case QV_ARROW_FLOAT64:
      put_double(o, qv_array_view_get_double(v, i), false);
      return;
    case QV_ARROW_FLOAT32: put_double(o, qv_array_view_get_double(v, i), true); return;
    case QV_ARROW_DECIMAL32: case QV_ARROW_DECIMAL64: case QV_ARROW_DECIMAL128:
    case QV_ARROW_DECIMAL256:
      put_decimal(o, qv_array_view_get_bytes(v, i).data, v->type.byte_width);
      return;
    case QV_ARROW_FIXED_SIZE_BINARY: {
      QvBytes b = qv_array_view_get_bytes(v, i);
      put_hex(o, b.data, b.size);
      return;
    }
    case QV_ARROW_INTERVAL_DAY_TIME: {
      int32_t p[2];
      memcpy(p, qv_array_view_get_bytes(v, i).data, 8);
      putf(o, "{\"days\": %d, \"milliseconds\": %d}", p[0], p[1]);
      return;
    }
    case QV_ARROW_INTERVAL_MONTH_DAY_NANO: {
      const uint8_t *b = qv_array_view_get_bytes(v, i).data;
      int32_t p[2];
      int64_t ns;
      memcpy(p, b, 8);
      memcpy(&ns, b + 8, 8);
      /* a bare number, as the gold files have it; readers parse it exactly */
      putf(o, "{\"months\": %d, \"days\": %d, \"nanoseconds\": %" PRId64 "}", p[0], p[1], ns);
      return;
    }
    default: put_int_value(o, v, i); return;
  }
}

/* Each value on its own in a JSON array: items separated by ", ". */
#define SEP(i) \
  do {         \
    if (i) puts_(o, ", "); \
  } while (0)

static void put_validity(Out *o, bool *first, const QvArrayView *v, int64_t start, int64_t len) {
  key(o, first, "VALIDITY");
  put(o, "[", 1);
  if (o->counting && len > 0) {
    /* "1" or "0" and ", " between them: the size is known without a walk */
    expect(o, len, 3);
    if (!o->stop) o->total += 3 * len - 2;
    put(o, "]", 1);
    return;
  }
  for (int64_t i = 0; i < len && !o->stop; i++) {
    SEP(i);
    put(o, qvi_ij_valid(v, start + i) ? "1" : "0", 1);
  }
  put(o, "]", 1);
}

static void put_column(Writer *w, const QvArrayView *v, int64_t start, int64_t len,
                       const char *name);

static void put_children(Writer *w, bool *first, const QvArrayView *v, const int64_t *starts,
                         const int64_t *lens) {
  Out *o = &w->out;
  key(o, first, "children");
  if (v->n_children == 0) {
    puts_(o, "[]");
    return;
  }
  open_(o, '[');
  for (int64_t i = 0; i < v->n_children; i++) {
    if (i) put(o, ",", 1);
    newline(o);
    const struct ArrowSchema *cs = v->children[i].type.schema;
    put_column(w, &v->children[i], starts[i], lens[i], cs->name);
  }
  close_(o, ']');
}

static void put_column(Writer *w, const QvArrayView *v, int64_t start, int64_t len,
                       const char *name) {
  Out *o = &w->out;
  QvArrowType t = v->type.storage_type;
  open_(o, '{');
  bool first = true;
  key(o, &first, "name");
  put_cstring(o, name);
  key(o, &first, "count");
  putf(o, "%" PRId64, len);
  if (qvi_ij_has_validity(t)) put_validity(o, &first, v, start, len);
  int64_t one_start[1], one_len[1];
  switch (t) {
    case QV_ARROW_NULL: break;
    case QV_ARROW_BINARY: case QV_ARROW_STRING: case QV_ARROW_LARGE_BINARY:
    case QV_ARROW_LARGE_STRING: {
      bool large = t == QV_ARROW_LARGE_BINARY || t == QV_ARROW_LARGE_STRING;
      bool utf8 = t == QV_ARROW_STRING || t == QV_ARROW_LARGE_STRING;
      key(o, &first, "OFFSET");
      put(o, "[", 1);
      int64_t pos = 0;
      expect(o, len + 1, 3);
      for (int64_t i = 0; i <= len && !o->stop; i++) {
        SEP(i);
        if (large)
          putf(o, "\"%" PRId64 "\"", pos);
        else
          putf(o, "%" PRId64, pos);
        if (i < len && qvi_ij_valid(v, start + i)) pos += qv_array_view_get_bytes(v, start + i).size;
      }
      put(o, "]", 1);
      key(o, &first, "DATA");
      put(o, "[", 1);
      expect(o, len, 3);
      for (int64_t i = 0; i < len && !o->stop; i++) {
        SEP(i);
        QvBytes b = {NULL, 0};
        if (qvi_ij_valid(v, start + i)) b = qv_array_view_get_bytes(v, start + i);
        if (utf8)
          put_string(o, b.data, b.size);
        else
          put_hex(o, b.data, b.size);
      }
      put(o, "]", 1);
      break;
    }
    case QV_ARROW_BINARY_VIEW: case QV_ARROW_STRING_VIEW: {
      bool utf8 = t == QV_ARROW_STRING_VIEW;
      key(o, &first, "VIEWS");
      open_(o, '[');
      expect(o, len, 3);
      for (int64_t i = 0; i < len && !o->stop; i++) {
        if (i) put(o, ",", 1);
        newline(o);
        const uint8_t *p = v->buffer[1] + 16 * (v->offset + start + i);
        int32_t size, bi, off;
        memcpy(&size, p, 4);
        if (!qvi_ij_valid(v, start + i)) size = 0;
        if (size <= 12) {
          putf(o, "{\"SIZE\": %d, \"INLINED\": ", size);
          if (utf8)
            put_string(o, p + 4, size);
          else
            put_hex(o, p + 4, size);
          puts_(o, "}");
        } else {
          memcpy(&bi, p + 8, 4);
          memcpy(&off, p + 12, 4);
          putf(o, "{\"SIZE\": %d, \"PREFIX_HEX\": ", size);
          put_hex(o, p + 4, 4);
          putf(o, ", \"BUFFER_INDEX\": %d, \"OFFSET\": %d}", bi, off);
        }
      }
      close_(o, ']');
      key(o, &first, "VARIADIC_DATA_BUFFERS");
      put(o, "[", 1);
      for (int64_t k = 0; k < v->n_variadic; k++) {
        SEP(k);
        put_hex(o, v->variadic[k], v->variadic_size[k]);
      }
      put(o, "]", 1);
      break;
    }
    case QV_ARROW_LIST: case QV_ARROW_LARGE_LIST: case QV_ARROW_MAP: {
      /* offsets rebased to the first list's start */
      bool large = t == QV_ARROW_LARGE_LIST;
      int64_t s0 = 0, l0 = 0, cs = 0, ce = 0;
      if (len > 0) {
        qv_array_view_get_list(v, start, &cs, &l0);
        qv_array_view_get_list(v, start + len - 1, &s0, &l0);
        ce = s0 + l0;
      }
      key(o, &first, "OFFSET");
      put(o, "[", 1);
      expect(o, len + 1, 3);
      for (int64_t i = 0; i <= len && !o->stop; i++) {
        SEP(i);
        int64_t x = 0;
        if (i > 0) {
          qv_array_view_get_list(v, start + i - 1, &s0, &l0);
          x = s0 + l0 - cs;
        }
        if (large)
          putf(o, "\"%" PRId64 "\"", x);
        else
          putf(o, "%" PRId64, x);
      }
      put(o, "]", 1);
      one_start[0] = cs;
      one_len[0] = ce - cs;
      put_children(w, &first, v, one_start, one_len);
      break;
    }
    case QV_ARROW_LIST_VIEW: case QV_ARROW_LARGE_LIST_VIEW: {
      bool large = t == QV_ARROW_LARGE_LIST_VIEW;
      int64_t s0, l0;
      for (int pass = 0; pass < 2; pass++) {
        key(o, &first, pass ? "SIZE" : "OFFSET");
        put(o, "[", 1);
        expect(o, len, 3);
      for (int64_t i = 0; i < len && !o->stop; i++) {
          SEP(i);
          qv_array_view_get_list(v, start + i, &s0, &l0);
          int64_t x = pass ? l0 : s0;
          if (large)
            putf(o, "\"%" PRId64 "\"", x);
          else
            putf(o, "%" PRId64, x);
        }
        put(o, "]", 1);
      }
      one_start[0] = 0;
      one_len[0] = v->children[0].length;
      put_children(w, &first, v, one_start, one_len);
      break;
    }
    case QV_ARROW_FIXED_SIZE_LIST:
      /* a child's index is the parent's physical index (offset included) */
      one_start[0] = (v->offset + start) * v->type.fixed_size;
      one_len[0] = len * v->type.fixed_size;
      put_children(w, &first, v, one_start, one_len);
      break;
    case QV_ARROW_STRUCT: case QV_ARROW_SPARSE_UNION: case QV_ARROW_DENSE_UNION: {
      int64_t n = v->n_children;
      int64_t *starts = malloc((size_t)(n ? n : 1) * sizeof *starts);
      int64_t *lens = malloc((size_t)(n ? n : 1) * sizeof *lens);
      if (starts == NULL || lens == NULL) {
        o->text.nomem = true;
        free(starts);
        free(lens);
        break;
      }
      bool dense = t == QV_ARROW_DENSE_UNION;
      for (int64_t i = 0; i < n; i++) {
        starts[i] = dense ? 0 : v->offset + start;
        lens[i] = dense ? v->children[i].length : len;
      }
      if (t != QV_ARROW_STRUCT) {
        key(o, &first, "TYPE_ID");
        put(o, "[", 1);
        expect(o, len, 3);
      for (int64_t i = 0; i < len && !o->stop; i++) {
          SEP(i);
          putf(o, "%d", (int8_t)v->buffer[1][v->offset + start + i]);
        }
        put(o, "]", 1);
        if (dense) {
          key(o, &first, "OFFSET");
          put(o, "[", 1);
          expect(o, len, 3);
      for (int64_t i = 0; i < len && !o->stop; i++) {
            SEP(i);
            int32_t x;
            memcpy(&x, v->buffer[2] + 4 * (v->offset + start + i), 4);
            putf(o, "%d", x);
          }
          put(o, "]", 1);
        }
      }
      put_children(w, &first, v, starts, lens);
      free(starts);
      free(lens);
      break;
    }
    case QV_ARROW_RUN_END_ENCODED: {
      /* the runs that cover [start, start + len), run ends made relative */
      const QvArrayView *re = &v->children[0];
      int64_t r0 = len ? qv_array_view_get_run(v, start) : 0;
      int64_t r1 = len ? qv_array_view_get_run(v, start + len - 1) + 1 : 0;
      int64_t base = v->offset + start;
      key(o, &first, "children");
      open_(o, '[');
      newline(o);
      open_(o, '{');
      bool f2 = true;
      key(o, &f2, "name");
      put_cstring(o, re->type.schema->name);
      key(o, &f2, "count");
      putf(o, "%" PRId64, r1 - r0);
      put_validity(o, &f2, re, r0, r1 - r0);
      key(o, &f2, "DATA");
      put(o, "[", 1);
      for (int64_t k = r0; k < r1 && !o->stop; k++) {
        SEP(k - r0);
        int64_t e = qv_array_view_get_int(re, k) - base;
        if (e > len) e = len;
        if (re->type.storage_type == QV_ARROW_INT64)
          putf(o, "\"%" PRId64 "\"", e);
        else
          putf(o, "%" PRId64, e);
      }
      put(o, "]", 1);
      close_(o, '}');
      put(o, ",", 1);
      newline(o);
      put_column(w, &v->children[1], r0, r1 - r0, v->children[1].type.schema->name);
      close_(o, ']');
      break;
    }
    default:
      key(o, &first, "DATA");
      put(o, "[", 1);
      expect(o, len, 3);
      for (int64_t i = 0; i < len && !o->stop; i++) {
        SEP(i);
        put_value(o, v, start + i);
      }
      put(o, "]", 1);
      break;
  }
  close_(o, '}');
}

/* ---- dictionaries */

static QvStatus note_dictionaries(Writer *w, const QvArrayView *v, int depth) {
  if (depth > QV_ARRAY_MAX_DEPTH) return qv_error_set(w->error, QV_ELIMIT, "nested too deep");
  QvStatus st;
  if (v->dictionary) {
    int64_t id = node_id(w, v->type.schema);
    int64_t k = 0;
    while (k < w->n_dicts && w->dict_id[k] != id) k++;
    if (k == w->n_dicts) {
      w->dict_id[k] = id;
      w->dict_view[k] = v->dictionary;
      w->n_dicts++;
    } else if (w->dict_view[k]->array != v->dictionary->array) {
      const QvArrayView *a = w->dict_view[k], *b = v->dictionary;
      QvError e;
      if (a->length != b->length ||
          (a->type.schema != b->type.schema && !qvi_ij_same_type(a->type.schema, b->type.schema)) ||
          qvi_ij_compare_range(a, 0, b, 0, a->length, -1, "", &e))
        return qv_error_set(w->error, QV_ENOTSUP,
                            "dictionary id %" PRId64 " holds different values in two places; "
                            "integration JSON has one dictionary per id", id);
    }
    if ((st = note_dictionaries(w, v->dictionary, depth + 1))) return st;
  }
  for (int64_t i = 0; i < v->n_children; i++)
    if ((st = note_dictionaries(w, &v->children[i], depth + 1))) return st;
  return QV_OK;
}

/* The whole document, through w->out. */
static void emit_document(Writer *w, const QvJsonData *data, const QvArrayView *views) {
  const struct ArrowSchema *schema = data->schema;
  Out *o = &w->out;
  open_(o, '{');
  bool first = true;
  key(o, &first, "schema");
  open_(o, '{');
  bool f2 = true;
  key(o, &f2, "fields");
  if (schema->n_children == 0) {
    puts_(o, "[]");
  } else {
    open_(o, '[');
    for (int64_t i = 0; i < schema->n_children; i++) {
      if (i) put(o, ",", 1);
      newline(o);
      put_field(w, schema->children[i]);
    }
    close_(o, ']');
  }
  put_metadata(o, &f2, schema->metadata);
  close_(o, '}');
  if (w->n_dicts > 0) {
    key(o, &first, "dictionaries");
    open_(o, '[');
    for (int64_t k = 0; k < w->n_dicts; k++) {
      const QvArrayView *dv = w->dict_view[k];
      if (k) put(o, ",", 1);
      newline(o);
      open_(o, '{');
      bool f3 = true;
      key(o, &f3, "id");
      putf(o, "%" PRId64, w->dict_id[k]);
      key(o, &f3, "data");
      open_(o, '{');
      bool f4 = true;
      key(o, &f4, "count");
      putf(o, "%" PRId64, dv->length);
      key(o, &f4, "columns");
      open_(o, '[');
      newline(o);
      char name[32];
      snprintf(name, sizeof name, "DICT%" PRId64, w->dict_id[k]);
      put_column(w, dv, 0, dv->length, name);
      close_(o, ']');
      close_(o, '}');
      close_(o, '}');
    }
    close_(o, ']');
  }
  key(o, &first, "batches");
  if (data->n_batches == 0) {
    puts_(o, "[]");
  } else {
    open_(o, '[');
    for (int64_t b = 0; b < data->n_batches; b++) {
      const QvArrayView *v = &views[b];
      if (b) put(o, ",", 1);
      newline(o);
      open_(o, '{');
      bool f3 = true;
      key(o, &f3, "count");
      putf(o, "%" PRId64, v->length);
      key(o, &f3, "columns");
      if (v->n_children == 0) {
        puts_(o, "[]");
      } else {
        open_(o, '[');
        for (int64_t i = 0; i < v->n_children; i++) {
          if (i) put(o, ",", 1);
          newline(o);
          put_column(w, &v->children[i], v->offset, v->length, schema->children[i]->name);
        }
        close_(o, ']');
      }
      close_(o, '}');
    }
    close_(o, ']');
  }
  close_(o, '}');
  put(o, "\n", 1);
}

static QvStatus write_json(const QvJsonData *data, const QvJsonWriteOptions *options, QvSink *sink,
                           QvError *error) {
  if (data == NULL || data->schema == NULL ||
      (data->n_batches > 0 && data->batches == NULL) || data->n_batches < 0)
    return qv_error_set(error, QV_EARG, "qv_json_write: data and its schema are required");
  QvJsonWriteOptions opt;
  QvStatus st = QV_OPTIONS_LOAD(&opt, options, QvJsonWriteOptions, error);
  if (st) return st;
  const struct ArrowSchema *schema = data->schema;
  if ((st = qv_arrow_schema_validate(schema, error))) return st;
  if (schema->format == NULL || strcmp(schema->format, "+s") != 0)
    return qv_error_set(error, QV_EINVAL, "the schema must be a struct (\"+s\"), not \"%.32s\"",
                        schema->format ? schema->format : "");
  Writer w;
  memset(&w, 0, sizeof w);
  w.error = error;
  w.out.indent = opt.indent == 0 ? 2 : opt.indent < 0 ? -1 : opt.indent;
  w.out.limit = opt.max_output_size > 0 ? opt.max_output_size : QV_DEFAULT_MAX_OUTPUT_SIZE;
  w.out.sink = sink;
  w.out.error = error;
  int64_t *default_ids = NULL;
  QvArrayView *views = NULL;
  int64_t n_views = 0;
  if ((st = qvi_ij_dictionary_nodes(schema, &w.dict_nodes, &w.n_dict_nodes, error))) return st;
  for (int64_t k = 0; k < w.n_dict_nodes; k++)
    if (w.dict_nodes[k]->dictionary->dictionary) {
      /* a field has one "dictionary" member: its values cannot be encoded again */
      st = qv_error_set(error, QV_ENOTSUP, "field \"%.64s\": a dictionary whose values are "
                        "dictionary-encoded has no integration JSON form",
                        w.dict_nodes[k]->name ? w.dict_nodes[k]->name : "");
      goto done;
    }
  if (data->dictionary_ids) {
    if (data->n_dictionary_ids != w.n_dict_nodes) {
      st = qv_error_set(error, QV_EARG, "%" PRId64 " dictionary ids for %" PRId64
                        " dictionary-encoded nodes", data->n_dictionary_ids, w.n_dict_nodes);
      goto done;
    }
    w.ids = data->dictionary_ids;
  } else {
    default_ids = malloc((size_t)(w.n_dict_nodes ? w.n_dict_nodes : 1) * sizeof *default_ids);
    if (default_ids == NULL) goto nomem;
    for (int64_t k = 0; k < w.n_dict_nodes; k++) default_ids[k] = k;
    w.ids = default_ids;
  }
  w.dict_id = malloc((size_t)(w.n_dict_nodes ? w.n_dict_nodes : 1) * sizeof *w.dict_id);
  w.dict_view = malloc((size_t)(w.n_dict_nodes ? w.n_dict_nodes : 1) * sizeof *w.dict_view);
  views = calloc((size_t)(data->n_batches ? data->n_batches : 1), sizeof *views);
  if (w.dict_id == NULL || w.dict_view == NULL || views == NULL) goto nomem;
  for (int64_t b = 0; b < data->n_batches; b++) {
    if ((st = qv_array_view_init(&views[b], schema, error))) goto done;
    n_views++;
    /* in full, but a decimal beyond its precision is written as it is */
    if ((st = qv_array_view_set_array(&views[b], data->batches[b], QV_VALIDATE_NONE, error)) ||
        (st = qv_array_view_validate(&views[b], QV_VALIDATE_FULL, QV_VALIDATE_DECIMALS_UNBOUNDED,
                                     error))) {
      qv_error_prefix(error, "batch %" PRId64, b);
      goto done;
    }
    if (views[b].null_count > 0 ||
        (views[b].buffer[0] && views[b].null_count < 0)) {
      for (int64_t i = 0; i < views[b].length; i++)
        if (!qvi_ij_valid(&views[b], i)) {
          st = qv_error_set(error, QV_EINVAL, "batch %" PRId64 ": row %" PRId64
                            " is null at the top level (a batch has no validity)", b, i);
          goto done;
        }
    }
    if ((st = note_dictionaries(&w, &views[b], 0))) goto done;
  }

  for (int pass = 0; pass < 2; pass++) {
    w.out.counting = pass == 0;
    w.out.total = 0;
    w.out.level = 0;
    emit_document(&w, data, views);
    flush_out(&w.out);
    if (w.out.text.nomem) goto nomem;
    if (w.out.sink_status) {
      st = w.out.sink_status;
      goto done;
    }
    if (w.out.over) {
      st = qv_error_set(error, QV_ELIMIT,
                        "JSON output of more than %" PRId64 " bytes exceeds the limit of %" PRId64
                        " (max_output_size)", w.out.limit, w.out.limit);
      goto done;
    }
  }
  st = QV_OK;
  goto done;
nomem:
  st = qv_error_set(error, QV_ENOMEM, "out of memory");
done:
  for (int64_t b = 0; b < n_views; b++) qv_array_view_reset(&views[b]);
  free(views);
  free(default_ids);
  free(w.dict_id);
  free(w.dict_view);
  free(w.dict_nodes);
  free(w.out.text.data);
  return st;
}

QvStatus qv_json_write(const QvJsonData *data, QvSink *sink, const QvJsonWriteOptions *options,
                       QvError *error) {
  if (sink == NULL) return qv_error_set(error, QV_EARG, "qv_json_write: sink is required");
  return write_json(data, options, sink, error);
}
