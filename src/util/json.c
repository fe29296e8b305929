/* The strict JSON reader and writer (util/json.h). A recursive descent
 * parser: each array's or object's children are gathered on one shared
 * stack and copied to the arena when the container closes, so the tree
 * takes no more than its items need. */
#include "util/json.h"
#include "util/utf8.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct Parser {
  const unsigned char *start, *p, *end;
  QvArena *arena;
  QviJson *items; /* children of the open arrays */
  size_t n_items, cap_items;
  QviJsonMember *members; /* members of the open objects */
  size_t n_members, cap_members;
  QvStatus code;
  size_t err_at;
  char why[96];
} Parser;

static bool fail_at(Parser *P, const unsigned char *at, QvStatus code, const char *why) {
  if (P->code != QV_OK) return false;
  P->code = code;
  P->err_at = (size_t)(at - P->start);
  snprintf(P->why, sizeof P->why, "%s", why);
  return false;
}

static bool nomem(Parser *P) { return fail_at(P, P->p, QV_ENOMEM, "out of memory"); }

static void skip_ws(Parser *P) {
  while (P->p < P->end && (*P->p == ' ' || *P->p == '\t' || *P->p == '\n' || *P->p == '\r'))
    P->p++;
}

static size_t utf8_encode(uint32_t cp, char *out) {
  if (cp < 0x80) {
    out[0] = (char)cp;
    return 1;
  }
  if (cp < 0x800) {
    out[0] = (char)(0xC0 | (cp >> 6));
    out[1] = (char)(0x80 | (cp & 0x3F));
    return 2;
  }
  if (cp < 0x10000) {
    out[0] = (char)(0xE0 | (cp >> 12));
    out[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
    out[2] = (char)(0x80 | (cp & 0x3F));
    return 3;
  }
  out[0] = (char)(0xF0 | (cp >> 18));
  out[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
  out[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
  out[3] = (char)(0x80 | (cp & 0x3F));
  return 4;
}

/* Four hex digits at s (the caller checked they are in the input). */
static bool hex4(const unsigned char *s, uint32_t *out) {
  uint32_t v = 0;
  for (int i = 0; i < 4; i++) {
    unsigned char c = s[i];
    uint32_t d;
    if (c >= '0' && c <= '9')
      d = (uint32_t)(c - '0');
    else if (c >= 'a' && c <= 'f')
      d = (uint32_t)(c - 'a' + 10);
    else if (c >= 'A' && c <= 'F')
      d = (uint32_t)(c - 'A' + 10);
    else
      return false;
    v = v << 4 | d;
  }
  *out = v;
  return true;
}

/* A string at P->p (a '"'): decoded onto the arena. The decoded text is
 * never longer than the quoted one, which bounds the allocation. */
static bool parse_string(Parser *P, const char **out, size_t *out_len) {
  const unsigned char *q = P->p + 1;
  while (q < P->end && *q != '"') {
    if (*q < 0x20) return fail_at(P, q, QV_EINVAL, "a control character in a string");
    if (*q == '\\' && P->end - q < 2) {
      q = P->end; /* an escape cut by the end */
      break;
    }
    q += *q == '\\' ? 2 : 1;
  }
  if (q >= P->end) return fail_at(P, P->p, QV_EINVAL, "a string without its closing quote");
  char *dst = qvi_arena_alloc(P->arena, (size_t)(q - P->p), 1);
  if (dst == NULL) return nomem(P);
  size_t n = 0;
  const unsigned char *s = P->p + 1;
  while (s < q) {
    if (*s >= 0x80) {
      uint32_t cp;
      size_t k = qvi_utf8_decode(s, (size_t)(q - s), &cp);
      if (k == 0) return fail_at(P, s, QV_EINVAL, "invalid UTF-8 in a string");
      memcpy(dst + n, s, k);
      n += k;
      s += k;
      continue;
    }
    if (*s != '\\') {
      dst[n++] = (char)*s++;
      continue;
    }
    const unsigned char *esc = s;
    char c;
    switch (s[1]) {
      case '"': c = '"'; break;
      case '\\': c = '\\'; break;
      case '/': c = '/'; break;
      case 'b': c = '\b'; break;
      case 'f': c = '\f'; break;
      case 'n': c = '\n'; break;
      case 'r': c = '\r'; break;
      case 't': c = '\t'; break;
      case 'u': {
        uint32_t cp, lo;
        if (q - s < 6 || !hex4(s + 2, &cp))
          return fail_at(P, esc, QV_EINVAL, "a \\u escape without four hex digits");
        s += 6;
        if (cp >= 0xDC00 && cp <= 0xDFFF)
          return fail_at(P, esc, QV_EINVAL, "a lone low surrogate escape");
        if (cp >= 0xD800 && cp <= 0xDBFF) {
          if (q - s < 6 || s[0] != '\\' || s[1] != 'u' || !hex4(s + 2, &lo) || lo < 0xDC00 ||
              lo > 0xDFFF)
            return fail_at(P, esc, QV_EINVAL, "a high surrogate escape without its low half");
          cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
          s += 6;
        }
        n += utf8_encode(cp, dst + n);
        continue;
      }
      default:
        return fail_at(P, esc, QV_EINVAL, "an unknown escape in a string");
    }
    dst[n++] = c;
    s += 2;
  }
  dst[n] = '\0';
  *out = dst;
  *out_len = n;
  P->p = q + 1;
  return true;
}

static bool is_digit(const unsigned char *s, const unsigned char *end) {
  return s < end && *s >= '0' && *s <= '9';
}

static bool parse_number(Parser *P, QviJson *out) {
  const unsigned char *s = P->p, *start = P->p;
  bool neg = s < P->end && *s == '-';
  if (neg) s++;
  if (!is_digit(s, P->end)) return fail_at(P, start, QV_EINVAL, "a number without digits");
  const unsigned char *digits = s;
  if (*s == '0') {
    s++;
    if (is_digit(s, P->end)) return fail_at(P, start, QV_EINVAL, "a number with a leading zero");
  } else {
    while (is_digit(s, P->end)) s++;
  }
  const unsigned char *int_end = s;
  bool real = false;
  if (s < P->end && *s == '.') {
    s++;
    if (!is_digit(s, P->end)) return fail_at(P, s, QV_EINVAL, "a fraction without digits");
    while (is_digit(s, P->end)) s++;
    real = true;
  }
  if (s < P->end && (*s == 'e' || *s == 'E')) {
    s++;
    if (s < P->end && (*s == '+' || *s == '-')) s++;
    if (!is_digit(s, P->end)) return fail_at(P, s, QV_EINVAL, "an exponent without digits");
    while (is_digit(s, P->end)) s++;
    real = true;
  }
  out->pos = (size_t)(start - P->start);
  if (real) {
    out->kind = QVI_JSON_REAL;
    out->n = (size_t)(s - start);
    out->u.s = qvi_arena_strndup(P->arena, (const char *)start, out->n);
    if (out->u.s == NULL) return nomem(P);
  } else {
    /* the magnitude, up to 2^63 for a negative number */
    uint64_t limit = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX, v = 0;
    for (const unsigned char *d = digits; d < int_end; d++) {
      unsigned digit = (unsigned)(*d - '0');
      if (v > (limit - digit) / 10)
        return fail_at(P, start, QV_EINVAL, "an integer outside int64");
      v = v * 10 + digit;
    }
    out->kind = QVI_JSON_INT;
    out->u.i = neg ? (v == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)v) : (int64_t)v;
  }
  P->p = s;
  return true;
}

static bool parse_value(Parser *P, QviJson *out, int depth);

static bool push_item(Parser *P, const QviJson *v) {
  if (P->n_items == P->cap_items) {
    QviJson *g = qvi_grow_array(P->items, &P->cap_items, P->n_items + 1, 16, sizeof *g);
    if (g == NULL) return nomem(P);
    P->items = g;
  }
  P->items[P->n_items++] = *v;
  return true;
}

static bool push_member(Parser *P, const QviJsonMember *m) {
  if (P->n_members == P->cap_members) {
    QviJsonMember *g =
        qvi_grow_array(P->members, &P->cap_members, P->n_members + 1, 16, sizeof *g);
    if (g == NULL) return nomem(P);
    P->members = g;
  }
  P->members[P->n_members++] = *m;
  return true;
}

/* After a ',' or the opening bracket: the next element must not be the
 * closing one ("[1,]"). */
static bool expect_more(Parser *P, char close, bool after_comma) {
  skip_ws(P);
  if (P->p >= P->end) return fail_at(P, P->p, QV_EINVAL, "the input ends inside an array or object");
  if (after_comma && *P->p == close) return fail_at(P, P->p, QV_EINVAL, "a trailing comma");
  return true;
}

static bool parse_array(Parser *P, QviJson *out, int depth) {
  size_t base = P->n_items;
  P->p++;
  skip_ws(P);
  if (P->p < P->end && *P->p == ']') {
    P->p++;
  } else {
    for (;;) {
      QviJson v;
      if (!expect_more(P, ']', P->n_items > base) || !parse_value(P, &v, depth) ||
          !push_item(P, &v))
        return false;
      skip_ws(P);
      if (P->p >= P->end) return fail_at(P, P->p, QV_EINVAL, "the input ends inside an array");
      if (*P->p == ']') {
        P->p++;
        break;
      }
      if (*P->p != ',') return fail_at(P, P->p, QV_EINVAL, "',' or ']' expected in an array");
      P->p++;
    }
  }
  out->kind = QVI_JSON_ARRAY;
  out->n = P->n_items - base;
  if (out->n > 0) {
    out->u.items = qvi_arena_alloc(P->arena, out->n, sizeof(QviJson));
    if (out->u.items == NULL) return nomem(P);
    memcpy(out->u.items, P->items + base, out->n * sizeof(QviJson));
  }
  P->n_items = base;
  return true;
}

static int member_cmp(const void *a, const void *b) {
  const QviJsonMember *x = *(const QviJsonMember *const *)a, *y = *(const QviJsonMember *const *)b;
  if (x->key_len != y->key_len) return x->key_len < y->key_len ? -1 : 1;
  int c = memcmp(x->key, y->key, x->key_len);
  if (c != 0) return c;
  return x->value.pos < y->value.pos ? -1 : x->value.pos > y->value.pos;
}

/* Duplicate keys, found by sorting (an object of many keys costs n log n,
 * not n^2); the error names the later of the two. */
static bool check_duplicates(Parser *P, const QviJsonMember *m, size_t n) {
  if (n < 2) return true;
  const QviJsonMember **order = malloc(n * sizeof *order);
  if (order == NULL) return nomem(P);
  for (size_t i = 0; i < n; i++) order[i] = &m[i];
  qsort(order, n, sizeof *order, member_cmp);
  bool ok = true;
  for (size_t i = 1; i < n && ok; i++)
    if (order[i]->key_len == order[i - 1]->key_len &&
        memcmp(order[i]->key, order[i - 1]->key, order[i]->key_len) == 0)
      ok = fail_at(P, P->start + order[i]->value.pos, QV_EINVAL, "a duplicate key");
  free(order);
  return ok;
}

static bool parse_object(Parser *P, QviJson *out, int depth) {
  size_t base = P->n_members;
  P->p++;
  skip_ws(P);
  if (P->p < P->end && *P->p == '}') {
    P->p++;
  } else {
    for (;;) {
      QviJsonMember m;
      if (!expect_more(P, '}', P->n_members > base)) return false;
      if (*P->p != '"') return fail_at(P, P->p, QV_EINVAL, "a string key expected in an object");
      if (!parse_string(P, &m.key, &m.key_len)) return false;
      skip_ws(P);
      if (P->p >= P->end || *P->p != ':')
        return fail_at(P, P->p, QV_EINVAL, "':' expected after an object key");
      P->p++;
      if (!expect_more(P, '}', false) || !parse_value(P, &m.value, depth) || !push_member(P, &m))
        return false;
      skip_ws(P);
      if (P->p >= P->end) return fail_at(P, P->p, QV_EINVAL, "the input ends inside an object");
      if (*P->p == '}') {
        P->p++;
        break;
      }
      if (*P->p != ',') return fail_at(P, P->p, QV_EINVAL, "',' or '}' expected in an object");
      P->p++;
    }
  }
  out->kind = QVI_JSON_OBJECT;
  out->n = P->n_members - base;
  if (out->n > 0) {
    out->u.members = qvi_arena_alloc(P->arena, out->n, sizeof(QviJsonMember));
    if (out->u.members == NULL) return nomem(P);
    memcpy(out->u.members, P->members + base, out->n * sizeof(QviJsonMember));
    if (!check_duplicates(P, out->u.members, out->n)) return false;
  }
  P->n_members = base;
  return true;
}

static bool literal(Parser *P, const char *word, QviJsonKind kind, QviJson *out) {
  size_t n = strlen(word);
  if ((size_t)(P->end - P->p) < n || memcmp(P->p, word, n) != 0)
    return fail_at(P, P->p, QV_EINVAL, "an unknown literal (true, false or null expected)");
  out->kind = kind;
  P->p += n;
  return true;
}

static bool parse_value(Parser *P, QviJson *out, int depth) {
  memset(out, 0, sizeof *out);
  skip_ws(P);
  if (P->p >= P->end) return fail_at(P, P->p, QV_EINVAL, "the input ends where a value was expected");
  out->pos = (size_t)(P->p - P->start);
  switch (*P->p) {
    case '[':
    case '{':
      if (depth >= QVI_JSON_MAX_DEPTH)
        return fail_at(P, P->p, QV_ELIMIT, "arrays and objects nested deeper than 64");
      return *P->p == '[' ? parse_array(P, out, depth + 1) : parse_object(P, out, depth + 1);
    case '"':
      out->kind = QVI_JSON_STRING;
      return parse_string(P, &out->u.s, &out->n);
    case 't': return literal(P, "true", QVI_JSON_TRUE, out);
    case 'f': return literal(P, "false", QVI_JSON_FALSE, out);
    case 'n': return literal(P, "null", QVI_JSON_NULL, out);
    default:
      if (*P->p == '-' || (*P->p >= '0' && *P->p <= '9')) return parse_number(P, out);
      return fail_at(P, P->p, QV_EINVAL, "a value expected");
  }
}

QvStatus qvi_json_parse(const char *text, size_t len, QvArena *arena, const QviJson **root,
                        size_t *error_pos, QvError *error) {
  *root = NULL;
  if (error_pos != NULL) *error_pos = 0;
  if ((text == NULL && len > 0) || arena == NULL)
    return qv_error_set(error, QV_EARG, "qvi_json_parse: NULL text or arena");
  Parser P = {0};
  P.start = P.p = (const unsigned char *)(text == NULL ? "" : text);
  P.end = P.start + len;
  P.arena = arena;
  QviJson *top = qvi_arena_alloc(arena, 1, sizeof *top);
  bool ok = top != NULL ? parse_value(&P, top, 0) : nomem(&P);
  if (ok) {
    skip_ws(&P);
    if (P.p < P.end) ok = fail_at(&P, P.p, QV_EINVAL, "text after the value");
  }
  free(P.items);
  free(P.members);
  if (!ok) {
    if (error_pos != NULL) *error_pos = P.err_at;
    if (P.code == QV_ENOMEM) return qv_error_set(error, QV_ENOMEM, "JSON: out of memory");
    size_t line = 1, col = 1;
    for (size_t i = 0; i < P.err_at; i++) {
      if (P.start[i] == '\n') {
        line++;
        col = 1;
      } else {
        col++;
      }
    }
    return qv_error_set(error, P.code, "malformed JSON at line %zu column %zu (byte %zu): %s", line,
                        col, P.err_at, P.why);
  }
  *root = top;
  return QV_OK;
}

const QviJson *qvi_json_get(const QviJson *obj, const char *key) {
  if (obj == NULL || obj->kind != QVI_JSON_OBJECT) return NULL;
  size_t n = strlen(key);
  for (size_t i = 0; i < obj->n; i++)
    if (obj->u.members[i].key_len == n && memcmp(obj->u.members[i].key, key, n) == 0)
      return &obj->u.members[i].value;
  return NULL;
}

bool qvi_json_is_c_string(const QviJson *v) {
  return v != NULL && v->kind == QVI_JSON_STRING && strlen(v->u.s) == v->n;
}

bool qvi_json_equal(const QviJson *a, const QviJson *b) {
  if (a->kind != b->kind) return false;
  switch (a->kind) {
    case QVI_JSON_INT: return a->u.i == b->u.i;
    case QVI_JSON_REAL:
    case QVI_JSON_STRING: return a->n == b->n && memcmp(a->u.s, b->u.s, a->n) == 0;
    case QVI_JSON_ARRAY:
      if (a->n != b->n) return false;
      for (size_t i = 0; i < a->n; i++)
        if (!qvi_json_equal(&a->u.items[i], &b->u.items[i])) return false;
      return true;
    case QVI_JSON_OBJECT:
      if (a->n != b->n) return false;
      for (size_t i = 0; i < a->n; i++) {
        const QviJsonMember *x = &a->u.members[i], *y = &b->u.members[i];
        if (x->key_len != y->key_len || memcmp(x->key, y->key, x->key_len) != 0 ||
            !qvi_json_equal(&x->value, &y->value))
          return false;
      }
      return true;
    default: return true;
  }
}

bool qvi_json_put_string(QvStrBuf *b, const char *s, size_t n, bool *bad_utf8) {
  *bad_utf8 = false;
  const unsigned char *u = (const unsigned char *)s;
  if (!qvi_strbuf_put(b, "\"", 1)) return false;
  size_t run = 0; /* bytes copied as they are, put in one piece */
  for (size_t i = 0; i < n;) {
    unsigned char c = u[i];
    if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') {
      run++;
      i++;
      continue;
    }
    if (!qvi_strbuf_put(b, s + i - run, run)) return false;
    run = 0;
    char esc[16];
    size_t k = 2;
    esc[0] = '\\';
    switch (c) {
      case '"': esc[1] = '"'; break;
      case '\\': esc[1] = '\\'; break;
      case '\b': esc[1] = 'b'; break;
      case '\f': esc[1] = 'f'; break;
      case '\n': esc[1] = 'n'; break;
      case '\r': esc[1] = 'r'; break;
      case '\t': esc[1] = 't'; break;
      default: {
        uint32_t cp;
        size_t len = qvi_utf8_decode(u + i, n - i, &cp);
        if (len == 0) {
          *bad_utf8 = true;
          return false;
        }
        /* uppercase hex and surrogate pairs, as jansson writes them */
        if (cp < 0x10000) {
          k = (size_t)snprintf(esc, sizeof esc, "\\u%04X", (unsigned)cp);
        } else {
          cp -= 0x10000;
          k = (size_t)snprintf(esc, sizeof esc, "\\u%04X\\u%04X", (unsigned)(0xD800 | (cp >> 10)),
                               (unsigned)(0xDC00 | (cp & 0x3FF)));
        }
        if (!qvi_strbuf_put(b, esc, k)) return false;
        i += len;
        continue;
      }
    }
    if (!qvi_strbuf_put(b, esc, k)) return false;
    i++;
  }
  return qvi_strbuf_put(b, s + n - run, run) && qvi_strbuf_put(b, "\"", 1);
}

bool qvi_json_put_int(QvStrBuf *b, int64_t v) {
  char buf[24];
  int k = snprintf(buf, sizeof buf, "%" PRId64, v);
  return qvi_strbuf_put(b, buf, (size_t)k);
}

bool qvi_json_write(QvStrBuf *b, const QviJson *v) {
  bool bad;
  switch (v->kind) {
    case QVI_JSON_NULL: return qvi_strbuf_put(b, "null", 4);
    case QVI_JSON_FALSE: return qvi_strbuf_put(b, "false", 5);
    case QVI_JSON_TRUE: return qvi_strbuf_put(b, "true", 4);
    case QVI_JSON_INT: return qvi_json_put_int(b, v->u.i);
    case QVI_JSON_REAL: return qvi_strbuf_put(b, v->u.s, v->n);
    case QVI_JSON_STRING: return qvi_json_put_string(b, v->u.s, v->n, &bad);
    case QVI_JSON_ARRAY:
      if (!qvi_strbuf_put(b, "[", 1)) return false;
      for (size_t i = 0; i < v->n; i++)
        if ((i > 0 && !qvi_strbuf_put(b, ",", 1)) || !qvi_json_write(b, &v->u.items[i]))
          return false;
      return qvi_strbuf_put(b, "]", 1);
    case QVI_JSON_OBJECT:
      if (!qvi_strbuf_put(b, "{", 1)) return false;
      for (size_t i = 0; i < v->n; i++) {
        const QviJsonMember *m = &v->u.members[i];
        if ((i > 0 && !qvi_strbuf_put(b, ",", 1)) ||
            !qvi_json_put_string(b, m->key, m->key_len, &bad) || !qvi_strbuf_put(b, ":", 1) ||
            !qvi_json_write(b, &m->value))
          return false;
      }
      return qvi_strbuf_put(b, "}", 1);
  }
  return false;
}
