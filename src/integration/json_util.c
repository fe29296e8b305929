/* Integration JSON: the dictionary pre-order and type equality. */
#include <stdlib.h>
#include <string.h>

#include "integration/json_internal.h"
#include "util/grow.h"

typedef struct NodeList {
  const struct ArrowSchema **items;
  int64_t n, cap;
} NodeList;

static QvStatus collect(const struct ArrowSchema *s, NodeList *l, int depth, QvError *error) {
  if (depth > QV_ARRAY_MAX_DEPTH)
    return qv_error_set(error, QV_ELIMIT, "schema nested deeper than %d", QV_ARRAY_MAX_DEPTH);
  if (s->dictionary) {
    if (l->n == l->cap) {
      size_t cap = (size_t)l->cap;
      const struct ArrowSchema **p = qvi_grow_array(l->items, &cap, cap + 1, 8, sizeof *p);
      if (p == NULL) return qv_error_set(error, QV_ENOMEM, "out of memory");
      l->items = p;
      l->cap = (int64_t)cap;
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

QvStatus qvi_ij_dictionary_nodes(const struct ArrowSchema *schema,
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
  int64_t ma = qv_arrow_metadata_size(a->metadata), mb = qv_arrow_metadata_size(b->metadata);
  if (ma != mb || (ma > 0 && memcmp(a->metadata, b->metadata, (size_t)ma) != 0)) return false;
  for (int64_t i = 0; i < a->n_children; i++)
    if (!same_type_at(a->children[i], b->children[i], depth + 1)) return false;
  return a->dictionary == NULL || same_type_at(a->dictionary, b->dictionary, depth + 1);
}

bool qvi_ij_same_type(const struct ArrowSchema *a, const struct ArrowSchema *b) {
  return same_type_at(a, b, 0);
}
