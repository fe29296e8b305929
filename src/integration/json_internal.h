/* Internals shared by the integration JSON reader, writer and comparison. */
#ifndef QUIVER_INTEGRATION_JSON_INTERNAL_H
#define QUIVER_INTEGRATION_JSON_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "quiver/array.h"
#include "quiver/integration_json.h"
#include "util/errpath.h"

/* The dictionary-encoded nodes of a schema tree in the pre-order of
 * QvJsonData (node, its dictionary's value type, its children): *nodes is
 * malloc'd (free()), NULL when there are none. */
QvStatus qvi_ij_dictionary_nodes(const struct ArrowSchema *schema,
                                const struct ArrowSchema ***nodes, int64_t *n, QvError *error);

/* Whether two schema trees describe the same type: formats, flags, names,
 * metadata and dictionaries, recursively. */
bool qvi_ij_same_type(const struct ArrowSchema *a, const struct ArrowSchema *b);

/* Compares n values of two validated views of one type from es / fs on;
 * QV_EINVAL naming the first difference (prefixed by `what`). */
QvStatus qvi_ij_compare_range(const QvArrayView *e, int64_t es, const QvArrayView *f, int64_t fs,
                             int64_t n, double tolerance, const char *what, QvError *error);

/* Own validity bit of a node (true when it has no bitmap). */
/* Negates a little-endian multiword integer of nw 32-bit words in place
 * (two's complement); decimals are read and written through it. */
static inline void qvi_ij_negate_words(uint32_t *w, int nw) {
  uint64_t carry = 1;
  for (int k = 0; k < nw; k++) {
    uint64_t x = (uint64_t)(uint32_t)~w[k] + carry;
    w[k] = (uint32_t)x;
    carry = x >> 32;
  }
}

static inline bool qvi_ij_valid(const QvArrayView *v, int64_t i) {
  const uint8_t *b = v->buffer[0];
  if (b == NULL) return true;
  int64_t p = v->offset + i;
  return (b[p >> 3] >> (p & 7)) & 1;
}

/* Whether the layout of a storage type has a validity bitmap. */
static inline bool qvi_ij_has_validity(QvArrowType storage) {
  return storage != QV_ARROW_NULL && storage != QV_ARROW_SPARSE_UNION &&
         storage != QV_ARROW_DENSE_UNION && storage != QV_ARROW_RUN_END_ENCODED;
}

#endif
