/* Comparison of two (schema, batches) sets, as `quiver integration
 * --mode=validate` needs it: schema first, then dictionaries, then values.
 *
 * Floating point follows Arrow C++'s integration check. There,
 * ValidateArrowVsJson (cpp/src/arrow/integration/json_integration_test.cc)
 * calls RecordBatch::ApproxEquals with the default EqualOptions
 * (cpp/src/arrow/compare.h: atol kDefaultAbsoluteTolerance = 1e-5,
 * signed_zeros_equal = true, nans_equal = false), and FloatingEquality in
 * compare.cc accepts x == y or fabs(x - y) <= atol, computed in the column's
 * own type (float for float32). We do the same, except that NaN equals NaN:
 * the JSON archery generates never holds NaN, so this never changes a
 * verdict there, while our writer does carry NaN and a file must equal
 * itself. Half floats compare at single precision (Arrow C++ compares their
 * bits). Values under null slots are never compared. Run-end encoded data
 * is compared run by run, so a huge logical length costs only its runs. */
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "integration/json_internal.h"
#include "util/grow.h"
#include "util/options.h"

typedef struct Cmp {
  double tol; /* < 0: exact */
  char where[512];   /* path inside the row, built on the way back up */
  char expected[160];
  char found[160];
} Cmp;

static void prepend(Cmp *c, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
static void prepend(Cmp *c, const char *fmt, ...) {
  char seg[160];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(seg, sizeof seg, fmt, ap);
  va_end(ap);
  if (n < 0) return;
  size_t sl = strlen(seg), wl = strlen(c->where);
  if (sl + wl + 1 > sizeof c->where) return; /* keep the innermost part */
  memmove(c->where + sl, c->where, wl + 1);
  memcpy(c->where, seg, sl);
}

static void format_value(const QvArrayView *v, int64_t i, char *buf, size_t cap) {
  char *text = NULL;
  if (qv_array_view_format_value(v, i, 120, &text, NULL) == QV_OK && text) {
    snprintf(buf, cap, "%s", text);
  } else {
    snprintf(buf, cap, "?");
  }
  free(text);
}

static bool differ(Cmp *c, const QvArrayView *e, int64_t i, const QvArrayView *f, int64_t j) {
  format_value(e, i, c->expected, sizeof c->expected);
  format_value(f, j, c->found, sizeof c->found);
  return false;
}

static bool float_eq(double x, double y, double tol, bool single) {
  if (x == y) return true;
  if (isnan(x) && isnan(y)) return true;
  if (tol < 0) return false;
  if (single) return fabsf((float)x - (float)y) <= (float)tol;
  return fabs(x - y) <= tol;
}

static const char *child_name(const QvArrayView *v, int64_t k) {
  const struct ArrowSchema *s = v->children[k].type.schema;
  return s && s->name ? s->name : "";
}

static bool range_eq(Cmp *c, const QvArrayView *e, int64_t es, const QvArrayView *f, int64_t fs,
                     int64_t n, bool top, int64_t *bad);

static bool elem_eq(Cmp *c, const QvArrayView *e, int64_t i, const QvArrayView *f, int64_t j) {
  QvArrowType t = e->type.storage_type;
  if (qvi_ij_has_validity(t)) {
    bool ve = qvi_ij_valid(e, i), vf = qvi_ij_valid(f, j);
    if (!ve || !vf) return ve == vf ? true : differ(c, e, i, f, j);
  }
  if (e->type.type == QV_ARROW_DICTIONARY) {
    int64_t a = t == QV_ARROW_UINT64 ? (int64_t)qv_array_view_get_uint(e, i) : qv_array_view_get_int(e, i);
    int64_t b = f->type.storage_type == QV_ARROW_UINT64 ? (int64_t)qv_array_view_get_uint(f, j)
                                                        : qv_array_view_get_int(f, j);
    if (!range_eq(c, e->dictionary, a, f->dictionary, b, 1, false, NULL)) {
      prepend(c, ".dictionary");
      return false;
    }
    return true;
  }
  switch (t) {
    case QV_ARROW_NULL: return true;
    case QV_ARROW_UINT64:
      return qv_array_view_get_uint(e, i) == qv_array_view_get_uint(f, j) ? true
                                                                          : differ(c, e, i, f, j);
    case QV_ARROW_FLOAT16: case QV_ARROW_FLOAT32: case QV_ARROW_FLOAT64:
      return float_eq(qv_array_view_get_double(e, i), qv_array_view_get_double(f, j), c->tol,
                      t != QV_ARROW_FLOAT64) ? true : differ(c, e, i, f, j);
    case QV_ARROW_BOOL: case QV_ARROW_INT8: case QV_ARROW_UINT8: case QV_ARROW_INT16:
    case QV_ARROW_UINT16: case QV_ARROW_INT32: case QV_ARROW_UINT32: case QV_ARROW_INT64:
    case QV_ARROW_INTERVAL_MONTHS:
      return qv_array_view_get_int(e, i) == qv_array_view_get_int(f, j) ? true
                                                                        : differ(c, e, i, f, j);
    case QV_ARROW_LIST: case QV_ARROW_LARGE_LIST: case QV_ARROW_LIST_VIEW:
    case QV_ARROW_LARGE_LIST_VIEW: case QV_ARROW_FIXED_SIZE_LIST: case QV_ARROW_MAP: {
      int64_t se, le, sf, lf;
      qv_array_view_get_list(e, i, &se, &le);
      qv_array_view_get_list(f, j, &sf, &lf);
      if (le != lf) return differ(c, e, i, f, j);
      if (!range_eq(c, &e->children[0], se, &f->children[0], sf, le, false, NULL)) {
        prepend(c, ".\"%.64s\"", child_name(e, 0));
        return false;
      }
      return true;
    }
    case QV_ARROW_STRUCT:
      for (int64_t k = 0; k < e->n_children; k++)
        if (!range_eq(c, &e->children[k], e->offset + i, &f->children[k], f->offset + j, 1, false,
                      NULL)) {
          prepend(c, ".\"%.64s\"", child_name(e, k));
          return false;
        }
      return true;
    case QV_ARROW_SPARSE_UNION: case QV_ARROW_DENSE_UNION: {
      int64_t ce, ie, cf, jf;
      qv_array_view_get_union(e, i, &ce, &ie);
      qv_array_view_get_union(f, j, &cf, &jf);
      if (ce != cf || ce < 0) {
        snprintf(c->expected, sizeof c->expected, "type code %d",
                 ce >= 0 ? e->type.union_type_ids[ce] : -1);
        snprintf(c->found, sizeof c->found, "type code %d",
                 cf >= 0 ? f->type.union_type_ids[cf] : -1);
        return false;
      }
      if (!range_eq(c, &e->children[ce], ie, &f->children[cf], jf, 1, false, NULL)) {
        prepend(c, ".\"%.64s\"", child_name(e, ce));
        return false;
      }
      return true;
    }
    case QV_ARROW_RUN_END_ENCODED: return range_eq(c, e, i, f, j, 1, false, NULL);
    default: {
      /* decimals, fixed-size binary, intervals, binary and utf8 of every
       * flavour: the bytes */
      QvBytes a = qv_array_view_get_bytes(e, i), b = qv_array_view_get_bytes(f, j);
      if (a.size != b.size || (a.size > 0 && memcmp(a.data, b.data, (size_t)a.size) != 0))
        return differ(c, e, i, f, j);
      return true;
    }
  }
}

static int64_t run_end(const QvArrayView *v, int64_t run) {
  return qv_array_view_get_int(&v->children[0], run);
}

static bool range_eq(Cmp *c, const QvArrayView *e, int64_t es, const QvArrayView *f, int64_t fs,
                     int64_t n, bool top, int64_t *bad) {
  QvArrowType t = e->type.storage_type;
  if (t == QV_ARROW_NULL) return true;
  if (t == QV_ARROW_RUN_END_ENCODED) {
    int64_t p = 0;
    while (p < n) {
      int64_t re = qv_array_view_get_run(e, es + p), rf = qv_array_view_get_run(f, fs + p);
      int64_t ee = run_end(e, re) - e->offset - es, fe = run_end(f, rf) - f->offset - fs;
      int64_t next = ee < fe ? ee : fe;
      if (next <= p) next = p + 1; /* validated run ends always advance */
      if (!range_eq(c, &e->children[1], re, &f->children[1], rf, 1, false, NULL)) {
        prepend(c, ".values");
        if (top) {
          if (bad) *bad = p;
        } else {
          prepend(c, "[%" PRId64 "]", es + p);
        }
        return false;
      }
      p = next;
    }
    return true;
  }
  for (int64_t k = 0; k < n; k++) {
    if (!elem_eq(c, e, es + k, f, fs + k)) {
      if (top) {
        if (bad) *bad = k;
      } else {
        prepend(c, "[%" PRId64 "]", es + k);
      }
      return false;
    }
  }
  return true;
}

QvStatus qvi_ij_compare_range(const QvArrayView *e, int64_t es, const QvArrayView *f, int64_t fs,
                             int64_t n, double tolerance, const char *what, QvError *error) {
  Cmp c;
  memset(&c, 0, sizeof c);
  c.tol = tolerance;
  int64_t bad = 0;
  if (range_eq(&c, e, es, f, fs, n, true, &bad)) return QV_OK;
  return qv_error_set(error, QV_EINVAL, "%s[%" PRId64 "]%s: expected %s, found %s", what, es + bad,
                      c.where, c.expected, c.found);
}

/* ---- schemas */

typedef struct SchemaCmp {
  QvError *error;
  /* dictionary nodes in pre-order with their paths, for the sharing check,
   * and whether each is inside another dictionary's values */
  char **paths;
  bool *nested;
  int64_t n_paths, cap_paths;
  int in_dictionary; /* how many dictionaries' values the walk is inside */
} SchemaCmp;

/* A node's type in Arrow C++'s spelling (quiver/array.h) and its format
 * string: "int8 (\"c\")". */
static QvStatus type_text(const struct ArrowSchema *s, char *buf, size_t cap) {
  char text[160];
  if (qv_arrow_schema_to_string(s, 0, text, sizeof text, NULL, NULL) == QV_OK)
    snprintf(buf, cap, "%s (\"%.64s\")", text, s->format);
  else
    snprintf(buf, cap, "\"%.64s\"", s->format ? s->format : "");
  return QV_OK;
}

typedef struct MetaEntry {
  const char *k, *v;
  int32_t kl, vl;
} MetaEntry;

static int bytes_cmp(const char *a, int32_t al, const char *b, int32_t bl) {
  int c = memcmp(a, b, (size_t)(al < bl ? al : bl));
  return c ? c : (al > bl) - (al < bl);
}

static int entry_cmp(const void *pa, const void *pb) {
  const MetaEntry *a = pa, *b = pb;
  int c = bytes_cmp(a->k, a->kl, b->k, b->kl);
  return c ? c : bytes_cmp(a->v, a->vl, b->v, b->vl);
}

/* The entries of a metadata blob, sorted by key then value (NULL when empty). */
static QvStatus meta_sorted(SchemaCmp *sc, const char *blob, MetaEntry **out, int64_t *n) {
  *out = NULL;
  *n = 0;
  QvArrowMetadataIter it;
  qv_arrow_metadata_iter_init(&it, blob);
  if (it.remaining == 0) return QV_OK;
  MetaEntry *e = malloc((size_t)it.remaining * sizeof *e);
  if (e == NULL) return qv_error_set(sc->error, QV_ENOMEM, "out of memory");
  while (qv_arrow_metadata_iter_next(&it, &e[*n].k, &e[*n].kl, &e[*n].v, &e[*n].vl)) (*n)++;
  qsort(e, (size_t)*n, sizeof *e, entry_cmp);
  *out = e;
  return QV_OK;
}

/* The entry of `e` (sorted) with key m's, or NULL. */
static const MetaEntry *meta_find_key(const MetaEntry *e, int64_t n, const MetaEntry *m) {
  int64_t lo = 0, hi = n;
  while (lo < hi) {
    int64_t mid = lo + (hi - lo) / 2;
    if (bytes_cmp(e[mid].k, e[mid].kl, m->k, m->kl) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo < n && bytes_cmp(e[lo].k, e[lo].kl, m->k, m->kl) == 0 ? &e[lo] : NULL;
}

/* How many entries of `e` (sorted) equal m. */
static int64_t meta_count(const MetaEntry *e, int64_t n, const MetaEntry *m) {
  const MetaEntry *p = meta_find_key(e, n, m);
  int64_t c = 0;
  for (; p && p < e + n && bytes_cmp(p->k, p->kl, m->k, m->kl) == 0; p++) c += !entry_cmp(p, m);
  return c;
}

#define META_SHOWN(x) ((x) > 80 ? 80 : (int)(x))

/* Custom metadata is a map, compared as Arrow C++'s KeyValueMetadata::Equals
 * does: the same entries in any order (both sorted, then walked together:
 * O(n log n) for any input). */
static QvStatus metadata_eq(SchemaCmp *sc, const char *path, const char *a, const char *b) {
  MetaEntry *ea, *eb = NULL;
  int64_t na, nb = 0;
  QvStatus st = meta_sorted(sc, a, &ea, &na);
  if (!st) st = meta_sorted(sc, b, &eb, &nb);
  for (int64_t i = 0; !st && (i < na || i < nb); i++) {
    int c = i >= na ? 1 : i >= nb ? -1 : entry_cmp(&ea[i], &eb[i]);
    if (c == 0) continue;
    /* the smaller entry is the one the other side lacks */
    const MetaEntry *m = c < 0 ? &ea[i] : &eb[i];
    const MetaEntry *other = c < 0 ? meta_find_key(eb, nb, m) : meta_find_key(ea, na, m);
    int64_t in_a = meta_count(ea, na, m), in_b = meta_count(eb, nb, m);
    if (in_a && in_b) { /* a duplicated entry: the counts differ */
      st = qv_error_set(sc->error, QV_EINVAL,
                        "%s: metadata: expected %" PRId64 " entries \"%.*s\" = \"%.*s\", found %" PRId64,
                        path, in_a, META_SHOWN(m->kl), m->k, META_SHOWN(m->vl), m->v, in_b);
      break;
    }
    char theirs[200];
    if (other)
      snprintf(theirs, sizeof theirs, "\"%.*s\" = \"%.*s\"", META_SHOWN(other->kl), other->k,
               META_SHOWN(other->vl), other->v);
    else
      snprintf(theirs, sizeof theirs, "no entry \"%.*s\"", META_SHOWN(m->kl), m->k);
    char mine[200];
    snprintf(mine, sizeof mine, "\"%.*s\" = \"%.*s\"", META_SHOWN(m->kl), m->k,
             META_SHOWN(m->vl), m->v);
    st = qv_error_set(sc->error, QV_EINVAL, "%s: metadata: expected %s, found %s", path,
                      c < 0 ? mine : theirs, c < 0 ? theirs : mine);
  }
  free(ea);
  free(eb);
  return st;
}

/* How a node's name is compared: a map's entries, key and value fields have
 * names the format recommends but does not enforce ("entries", "key",
 * "value"), and Arrow C++ compares map types without them (its writer of the
 * gold streams even replaces them): those are not compared. */
typedef enum NameRule { NAME_COMPARED, NAME_MAP_ENTRIES, NAME_MAP_KEY_VALUE } NameRule;

static QvStatus schema_eq(SchemaCmp *sc, const struct ArrowSchema *a, const struct ArrowSchema *b,
                          const char *path, bool value_type, NameRule rule, int depth) {
  if (depth > QV_ARRAY_MAX_DEPTH) return qv_error_set(sc->error, QV_ELIMIT, "schema too deep");
  QvError *err = sc->error;
  const char *na = a->name ? a->name : "", *nb = b->name ? b->name : "";
  if (!value_type && rule == NAME_COMPARED && strcmp(na, nb) != 0)
    return qv_error_set(err, QV_EINVAL, "%s: name: expected \"%.80s\", found \"%.80s\"", path, na,
                        nb);
  if (!value_type && (a->flags & ARROW_FLAG_NULLABLE) != (b->flags & ARROW_FLAG_NULLABLE))
    return qv_error_set(err, QV_EINVAL, "%s: expected %s, found %s", path,
                        (a->flags & ARROW_FLAG_NULLABLE) ? "nullable" : "non-nullable",
                        (b->flags & ARROW_FLAG_NULLABLE) ? "nullable" : "non-nullable");
  if ((a->dictionary == NULL) != (b->dictionary == NULL))
    return qv_error_set(err, QV_EINVAL, "%s: expected %s, found %s", path,
                        a->dictionary ? "dictionary-encoded" : "no dictionary encoding",
                        b->dictionary ? "dictionary-encoded" : "no dictionary encoding");
  if (strcmp(a->format, b->format) != 0) {
    char ta[240], tb[240];
    type_text(a, ta, sizeof ta);
    type_text(b, tb, sizeof tb);
    return qv_error_set(err, QV_EINVAL, "%s: %s: expected %s, found %s", path,
                        a->dictionary ? "index type" : "type", ta, tb);
  }
  int64_t fa = a->flags & (ARROW_FLAG_MAP_KEYS_SORTED | ARROW_FLAG_DICTIONARY_ORDERED);
  int64_t fb = b->flags & (ARROW_FLAG_MAP_KEYS_SORTED | ARROW_FLAG_DICTIONARY_ORDERED);
  if (fa != fb)
    return qv_error_set(err, QV_EINVAL, "%s: %s: expected %s, found %s", path,
                        a->dictionary ? "dictionary ordered flag" : "map keys sorted flag",
                        fa ? "true" : "false", fb ? "true" : "false");
  QvStatus st;
  if (!value_type && (st = metadata_eq(sc, path, a->metadata, b->metadata))) return st;
  if (a->n_children != b->n_children)
    return qv_error_set(err, QV_EINVAL, "%s: expected %" PRId64 " children, found %" PRId64, path,
                        a->n_children, b->n_children);
  char sub[512];
  if (a->dictionary) {
    if (sc->n_paths == sc->cap_paths) {
      size_t cap = (size_t)sc->cap_paths;
      char **p = qvi_grow_array(sc->paths, &cap, cap + 1, 8, sizeof *p);
      if (p == NULL) return qv_error_set(err, QV_ENOMEM, "out of memory");
      sc->paths = p;
      bool *q = realloc(sc->nested, (size_t)cap * sizeof *q);
      if (q == NULL) return qv_error_set(err, QV_ENOMEM, "out of memory");
      sc->nested = q;
      sc->cap_paths = (int64_t)cap;
    }
    sc->nested[sc->n_paths] = sc->in_dictionary > 0;
    size_t n = strlen(path);
    if ((sc->paths[sc->n_paths] = malloc(n + 1)) == NULL)
      return qv_error_set(err, QV_ENOMEM, "out of memory");
    memcpy(sc->paths[sc->n_paths++], path, n + 1);
    snprintf(sub, sizeof sub, "%s (dictionary values)", path);
    sc->in_dictionary++;
    st = schema_eq(sc, a->dictionary, b->dictionary, sub, true, NAME_COMPARED, depth + 1);
    sc->in_dictionary--;
    if (st) return st;
  }
  /* the formats are equal here; a dictionary's map is its values' */
  NameRule child_rule = a->dictionary == NULL && strcmp(a->format, "+m") == 0 ? NAME_MAP_ENTRIES
                        : rule == NAME_MAP_ENTRIES                          ? NAME_MAP_KEY_VALUE
                                                                            : NAME_COMPARED;
  for (int64_t i = 0; i < a->n_children; i++) {
    const char *cn = a->children[i]->name ? a->children[i]->name : "";
    snprintf(sub, sizeof sub, "%s.children[%" PRId64 "] \"%.64s\"", path, i, cn);
    if ((st = schema_eq(sc, a->children[i], b->children[i], sub, false, child_rule, depth + 1)))
      return st;
  }
  return QV_OK;
}

/* ---- dictionary sharing */

typedef struct IdPair {
  int64_t e, f, k; /* the node's id on each side, the node */
} IdPair;

static int cmp_i64(int64_t a, int64_t b) { return (a > b) - (a < b); }

static int by_expected(const void *pa, const void *pb) {
  const IdPair *a = pa, *b = pb;
  int c = cmp_i64(a->e, b->e);
  if (!c) c = cmp_i64(a->f, b->f);
  return c ? c : cmp_i64(a->k, b->k);
}

static int by_found(const void *pa, const void *pb) {
  const IdPair *a = pa, *b = pb;
  int c = cmp_i64(a->f, b->f);
  if (!c) c = cmp_i64(a->e, b->e);
  return c ? c : cmp_i64(a->k, b->k);
}

/* The first pair of nodes that one side's ids group together and the
 * other's do not (p sorted by the grouping side), or -1. */
static int64_t split_group(const IdPair *p, int64_t n, bool expected_side, int64_t *x) {
  int64_t start = 0;
  for (int64_t i = 1; i < n; i++) {
    bool same = expected_side ? p[i].e == p[start].e : p[i].f == p[start].f;
    if (!same) {
      start = i;
      continue;
    }
    bool other = expected_side ? p[i].f == p[start].f : p[i].e == p[start].e;
    if (!other) {
      *x = p[start].k;
      return p[i].k;
    }
  }
  return -1;
}

/* Which dictionary nodes share one dictionary, when both sides give ids:
 * the same grouping on both sides (each side's ids sorted: O(n log n)).
 * Nodes inside another dictionary's values are left out: Arrow C++ gives
 * each of those fields its own id whatever the JSON shares (its gold
 * files do), so there only the values are compared. */
static QvStatus sharing_eq(const SchemaCmp *sc, const int64_t *ide, const int64_t *idf,
                           QvError *error) {
  IdPair *p = malloc((size_t)(sc->n_paths ? sc->n_paths : 1) * sizeof *p);
  if (p == NULL) return qv_error_set(error, QV_ENOMEM, "out of memory");
  int64_t n = 0;
  for (int64_t k = 0; k < sc->n_paths; k++)
    if (!sc->nested[k]) p[n++] = (IdPair){ide[k], idf[k], k};
  QvStatus st = QV_OK;
  int64_t x = -1, y;
  qsort(p, (size_t)n, sizeof *p, by_expected);
  bool shared_expected = (y = split_group(p, n, true, &x)) >= 0;
  if (!shared_expected) {
    qsort(p, (size_t)n, sizeof *p, by_found);
    y = split_group(p, n, false, &x);
  }
  if (y >= 0) {
    int64_t lo = x < y ? x : y, hi = x < y ? y : x;
    st = qv_error_set(error, QV_EINVAL, "%s and %s: expected %s dictionary, found %s",
                      sc->paths[lo], sc->paths[hi], shared_expected ? "one shared" : "separate",
                      shared_expected ? "separate" : "one shared");
  }
  free(p);
  return st;
}

/* ---- whole data sets */

typedef struct DictPass {
  const void **seen_e, **seen_f; /* last compared dictionary arrays per node */
  int64_t next;                  /* pre-order index of the next dictionary node */
} DictPass;

static QvStatus dictionaries_eq(const QvArrayView *e, const QvArrayView *f, DictPass *dp,
                                char **paths, double tol, int64_t batch, int depth,
                                QvError *error) {
  if (depth > QV_ARRAY_MAX_DEPTH) return qv_error_set(error, QV_ELIMIT, "nested too deep");
  QvStatus st;
  if (e->dictionary) {
    int64_t k = dp->next++;
    const QvArrayView *de = e->dictionary, *df = f->dictionary;
    if (dp->seen_e[k] != de->array || dp->seen_f[k] != df->array) {
      dp->seen_e[k] = de->array;
      dp->seen_f[k] = df->array;
      if (de->length != df->length)
        return qv_error_set(error, QV_EINVAL,
                            "batch %" PRId64 ": %s: dictionary: expected %" PRId64
                            " entries, found %" PRId64, batch, paths[k], de->length, df->length);
      char what[600];
      snprintf(what, sizeof what, "batch %" PRId64 ": %s: dictionary", batch, paths[k]);
      if ((st = qvi_ij_compare_range(de, 0, df, 0, de->length, tol, what, error))) return st;
    }
    if ((st = dictionaries_eq(de, df, dp, paths, tol, batch, depth + 1, error))) return st;
  }
  for (int64_t i = 0; i < e->n_children; i++)
    if ((st = dictionaries_eq(&e->children[i], &f->children[i], dp, paths, tol, batch, depth + 1,
                              error)))
      return st;
  return QV_OK;
}


/* A view of a batch checked in full, except decimals against their
 * precision (QV_VALIDATE_DECIMALS_UNBOUNDED). */
static QvStatus view_set(QvArrayView *v, const struct ArrowArray *a, QvError *error) {
  QvStatus st = qv_array_view_set_array(v, a, QV_VALIDATE_NONE, error);
  return st ? st : qv_array_view_validate(v, QV_VALIDATE_FULL, QV_VALIDATE_DECIMALS_UNBOUNDED, error);
}

QvStatus qv_json_compare(const QvJsonData *expected, const QvJsonData *found,
                         const QvJsonCompareOptions *options, QvError *error) {
  if (expected == NULL || found == NULL || expected->schema == NULL || found->schema == NULL ||
      expected->n_batches < 0 || found->n_batches < 0 ||
      (expected->n_batches > 0 && expected->batches == NULL) ||
      (found->n_batches > 0 && found->batches == NULL))
    return qv_error_set(error, QV_EARG, "qv_json_compare: two data sets with schemas are required");
  QvJsonCompareOptions opt;
  QvStatus st = QV_OPTIONS_LOAD(&opt, options, QvJsonCompareOptions, error);
  if (st) return st;
  double tol = opt.float_tolerance == 0 ? 1e-5 : opt.float_tolerance < 0 ? -1 : opt.float_tolerance;
  const struct ArrowSchema *a = expected->schema, *b = found->schema;
  if ((st = qv_arrow_schema_validate(a, error))) return qv_error_prefix(error, "expected schema");
  if ((st = qv_arrow_schema_validate(b, error))) return qv_error_prefix(error, "found schema");
  if (strcmp(a->format, "+s") != 0 || strcmp(b->format, "+s") != 0)
    return qv_error_set(error, QV_EARG, "qv_json_compare: schemas must be structs (\"+s\")");
  SchemaCmp sc = {error, NULL, NULL, 0, 0, 0};
  QvArrayView ve, vf;
  memset(&ve, 0, sizeof ve);
  memset(&vf, 0, sizeof vf);
  DictPass dp = {NULL, NULL, 0};
  if (a->n_children != b->n_children) {
    st = qv_error_set(error, QV_EINVAL, "schema: expected %" PRId64 " fields, found %" PRId64,
                      a->n_children, b->n_children);
    goto done;
  }
  if ((st = metadata_eq(&sc, "schema", a->metadata, b->metadata))) goto done;
  for (int64_t i = 0; i < a->n_children; i++) {
    char path[160];
    snprintf(path, sizeof path, "field %" PRId64 " \"%.64s\"", i,
             a->children[i]->name ? a->children[i]->name : "");
    if ((st = schema_eq(&sc, a->children[i], b->children[i], path, false, NAME_COMPARED, 1)))
      goto done;
  }
  /* which nodes share a dictionary: only when both sides say */
  if (expected->dictionary_ids && found->dictionary_ids &&
      expected->n_dictionary_ids == sc.n_paths && found->n_dictionary_ids == sc.n_paths &&
      (st = sharing_eq(&sc, expected->dictionary_ids, found->dictionary_ids, error)))
    goto done;
  if (expected->n_batches != found->n_batches) {
    st = qv_error_set(error, QV_EINVAL, "expected %" PRId64 " batches, found %" PRId64,
                      expected->n_batches, found->n_batches);
    goto done;
  }
  dp.seen_e = calloc((size_t)(sc.n_paths ? sc.n_paths : 1), sizeof *dp.seen_e);
  dp.seen_f = calloc((size_t)(sc.n_paths ? sc.n_paths : 1), sizeof *dp.seen_f);
  if (dp.seen_e == NULL || dp.seen_f == NULL) {
    st = qv_error_set(error, QV_ENOMEM, "out of memory");
    goto done;
  }
  if ((st = qv_array_view_init(&ve, a, error)) || (st = qv_array_view_init(&vf, b, error)))
    goto done;
  /* memory safety in full; whether decimals fit their precision is the
   * readers' verdict (a comparison reports what differs) */
  for (int64_t bi = 0; bi < expected->n_batches; bi++) {
    if ((st = view_set(&ve, expected->batches[bi], error))) {
      qv_error_prefix(error, "expected batch %" PRId64, bi);
      goto done;
    }
    if ((st = view_set(&vf, found->batches[bi], error))) {
      qv_error_prefix(error, "found batch %" PRId64, bi);
      goto done;
    }
    if (ve.length != vf.length) {
      st = qv_error_set(error, QV_EINVAL, "batch %" PRId64 ": expected %" PRId64 " rows, found %" PRId64,
                        bi, ve.length, vf.length);
      goto done;
    }
    dp.next = 0;
    if ((st = dictionaries_eq(&ve, &vf, &dp, sc.paths, tol, bi, 0, error))) goto done;
    for (int64_t i = 0; i < ve.n_children; i++) {
      Cmp c;
      memset(&c, 0, sizeof c);
      c.tol = tol;
      int64_t bad = 0;
      if (!range_eq(&c, &ve.children[i], ve.offset, &vf.children[i], vf.offset, ve.length, true,
                    &bad)) {
        st = qv_error_set(error, QV_EINVAL,
                          "batch %" PRId64 ", row %" PRId64 ", field %" PRId64
                          " \"%.64s\"%s: expected %s, found %s",
                          bi, bad, i, a->children[i]->name ? a->children[i]->name : "", c.where,
                          c.expected, c.found);
        goto done;
      }
    }
  }
  st = QV_OK;
done:
  qv_array_view_reset(&ve);
  qv_array_view_reset(&vf);
  for (int64_t k = 0; k < sc.n_paths; k++) free(sc.paths[k]);
  free(sc.paths);
  free(sc.nested);
  free(dp.seen_e);
  free(dp.seen_f);
  return st;
}
