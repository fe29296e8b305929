/* An int64 -> int64 hash map (open addressing, linear probing) for the
 * record batch reader and writer's dictionary ids: a schema may hold
 * hundreds of thousands of dictionary-encoded fields, and a linear search
 * per field made reading and writing them quadratic. */
#ifndef QUIVER_UTIL_IDMAP_H
#define QUIVER_UTIL_IDMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct QvIdMap {
  int64_t *keys;
  int64_t *vals;
  bool *used;
  size_t cap; /* a power of two, or 0 */
  size_t n;
} QvIdMap;

/* A zeroed struct is an empty map. */
bool qvi_idmap_get(const QvIdMap *m, int64_t key, int64_t *val);
/* Inserts or replaces; false when out of memory (the map is unchanged). */
bool qvi_idmap_put(QvIdMap *m, int64_t key, int64_t val);
/* Frees and zeroes the map. */
void qvi_idmap_free(QvIdMap *m);

#endif
