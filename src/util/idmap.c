#include "util/idmap.h"

#include <stdlib.h>
#include <string.h>

static size_t slot_of(int64_t key, size_t cap) {
  uint64_t h = (uint64_t)key * 0x9E3779B97F4A7C15ull; /* Fibonacci hashing */
  return (size_t)(h ^ (h >> 29)) & (cap - 1);
}

bool qvi_idmap_get(const QvIdMap *m, int64_t key, int64_t *val) {
  if (m->cap == 0) return false;
  for (size_t i = slot_of(key, m->cap);; i = (i + 1) & (m->cap - 1)) {
    if (!m->used[i]) return false;
    if (m->keys[i] == key) {
      *val = m->vals[i];
      return true;
    }
  }
}

static bool rehash(QvIdMap *m, size_t cap) {
  QvIdMap b = {calloc(cap, sizeof(int64_t)), calloc(cap, sizeof(int64_t)), calloc(cap, 1), cap, 0};
  if (b.keys == NULL || b.vals == NULL || b.used == NULL) {
    qvi_idmap_free(&b);
    return false;
  }
  for (size_t i = 0; i < m->cap; i++)
    if (m->used[i]) qvi_idmap_put(&b, m->keys[i], m->vals[i]); /* fits: no growth */
  qvi_idmap_free(m);
  *m = b;
  return true;
}

bool qvi_idmap_put(QvIdMap *m, int64_t key, int64_t val) {
  /* keep the load at most 1/2 */
  if ((m->n + 1) * 2 > m->cap && !rehash(m, m->cap ? m->cap * 2 : 16)) return false;
  for (size_t i = slot_of(key, m->cap);; i = (i + 1) & (m->cap - 1)) {
    if (!m->used[i]) {
      m->used[i] = true;
      m->keys[i] = key;
      m->vals[i] = val;
      m->n++;
      return true;
    }
    if (m->keys[i] == key) {
      m->vals[i] = val;
      return true;
    }
  }
}

void qvi_idmap_free(QvIdMap *m) {
  free(m->keys);
  free(m->vals);
  free(m->used);
  memset(m, 0, sizeof *m);
}
