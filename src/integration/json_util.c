/* Integration JSON: message paths, the dictionary pre-order, type equality
 * and half-precision conversion. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "integration/json_internal.h"

size_t qv_ij_path_push(QvIjPath *p, const char *fmt, ...) {
  size_t old = p->len;
  if (p->len < sizeof p->text - 1) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(p->text + p->len, sizeof p->text - p->len, fmt, ap);
    va_end(ap);
    if (n > 0) p->len += (size_t)n;
    if (p->len > sizeof p->text - 1) p->len = sizeof p->text - 1;
  }
  return old;
}

void qv_ij_path_pop(QvIjPath *p, size_t len) {
  p->len = len;
  p->text[len] = '\0';
}

typedef struct NodeList {
  const struct ArrowSchema **items;
  int64_t n, cap;
} NodeList;

static QvStatus collect(const struct ArrowSchema *s, NodeList *l, int depth, QvError *error) {
  if (depth > QV_ARRAY_MAX_DEPTH)
    return qv_error_set(error, QV_ELIMIT, "schema nested deeper than %d", QV_ARRAY_MAX_DEPTH);
  if (s->dictionary) {
    if (l->n == l->cap) {
      int64_t cap = l->cap ? 2 * l->cap : 8;
      const struct ArrowSchema **p = realloc(l->items, (size_t)cap * sizeof *p);
      if (p == NULL) return qv_error_set(error, QV_ENOMEM, "out of memory");
      l->items = p;
      l->cap = cap;
    }
    l->items[l->n++] = s;
    QvStatus st = collect(s->dictionary, l, depth + 1, error);
    if (st) return st;
  }
  for (int64_t i = 0; i < s->n_children; i++) {
    QvStatus st = collect(s->children[i], l, depth + 1, error);
    if (st) return st;
  }
  return QV_OK;
}

QvStatus qv_ij_dictionary_nodes(const struct ArrowSchema *schema,
                                const struct ArrowSchema ***nodes, int64_t *n, QvError *error) {
  NodeList l = {NULL, 0, 0};
  QvStatus st = collect(schema, &l, 0, error);
  if (st) {
    free(l.items);
    l.items = NULL;
    l.n = 0;
  }
  *nodes = l.items;
  *n = l.n;
  return st;
}

static bool same_str(const char *a, const char *b) {
  return strcmp(a ? a : "", b ? b : "") == 0;
}

static bool same_type_at(const struct ArrowSchema *a, const struct ArrowSchema *b, int depth) {
  if (depth > QV_ARRAY_MAX_DEPTH) return false;
  if (!same_str(a->format, b->format) || !same_str(a->name, b->name) || a->flags != b->flags ||
      a->n_children != b->n_children || (a->dictionary == NULL) != (b->dictionary == NULL))
    return false;
  int64_t ma = qv_metadata_size(a->metadata), mb = qv_metadata_size(b->metadata);
  if (ma != mb || (ma > 0 && memcmp(a->metadata, b->metadata, (size_t)ma) != 0)) return false;
  for (int64_t i = 0; i < a->n_children; i++)
    if (!same_type_at(a->children[i], b->children[i], depth + 1)) return false;
  return a->dictionary == NULL || same_type_at(a->dictionary, b->dictionary, depth + 1);
}

bool qv_ij_same_type(const struct ArrowSchema *a, const struct ArrowSchema *b) {
  return same_type_at(a, b, 0);
}

double qv_ij_half_to_double(uint16_t h) {
  int sign = h >> 15, exp = (h >> 10) & 0x1f, frac = h & 0x3ff;
  double v;
  if (exp == 0)
    v = ldexp(frac, -24);
  else if (exp == 31)
    v = frac ? NAN : INFINITY;
  else
    v = ldexp(frac | 0x400, exp - 25);
  return sign ? -v : v;
}

uint16_t qv_ij_double_to_half(double d) {
  uint16_t sign = signbit(d) ? 0x8000 : 0;
  if (isnan(d)) return (uint16_t)(sign | 0x7e00);
  double a = fabs(d);
  if (a >= 65520.0) return (uint16_t)(sign | 0x7c00); /* rounds to infinity */
  if (a < ldexp(1, -14)) {
    /* subnormal: units of 2^-24, rounded to nearest even by rint */
    return (uint16_t)(sign | (uint16_t)rint(ldexp(a, 24)));
  }
  int e;
  double m = frexp(a, &e); /* a = m * 2^e, m in [0.5, 1) */
  double units = rint(ldexp(m, 11));  /* 11 significant bits, nearest even */
  if (units >= 2048) {
    units /= 2;
    e++;
  }
  int biased = e - 1 + 15;
  if (biased >= 31) return (uint16_t)(sign | 0x7c00);
  return (uint16_t)(sign | (uint16_t)(biased << 10) | ((uint16_t)units & 0x3ff));
}
