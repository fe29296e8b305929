/* Internals shared by src/array/: private data of arrays made by quiver,
 * layout classification, bit and load helpers. */
#ifndef QUIVER_ARRAY_INTERNAL_H
#define QUIVER_ARRAY_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "quiver/array.h"
#include "util/checked.h"
#include "util/grow.h"
#include "util/load.h"

/* Physical layouts: QvLayout and its queries are public (quiver/array.h). */
static inline QvLayout qvi_view_layout(const QvArrayView *v) {
  return qv_layout_of(v->type.storage_type);
}

/* Builder state of one node while it is being built. */
typedef struct QvBuilder {
  QvArrowSchemaView type;
  QvLayout layout;
  QvGrowBuf validity; /* materialized on the first null */
  bool has_validity;
  QvGrowBuf buf1;     /* values / offsets / views / type codes */
  QvGrowBuf buf2;     /* data / sizes / dense offsets */
  int64_t n_variadic;
  int64_t variadic_capacity;
  QvGrowBuf *variadic;
  int64_t null_count;
  int64_t list_child_start; /* list views: child length at the start of an element */
  struct ArrowSchema *schema; /* root only: copy of the schema, for validation */
} QvBuilder;

void qvi_builder_free(QvBuilder *b);

/* Private data of every ArrowArray node made by quiver. */
typedef struct QvArrayPrivate {
  const void **buffer_ptrs;
  int64_t *variadic_sizes; /* views: owned copy of the trailing sizes buffer */
  struct ArrowArray **child_ptrs;
  struct ArrowArray *child_storage;
  struct ArrowArray *dictionary_storage;
  QvOwner *owner; /* keeps the buffers alive; NULL for static memory */
  QvBuilder *builder; /* non-NULL while building */
  bool buffer_ptrs_apart; /* buffer_ptrs was reallocated out of the node's block */
} QvArrayPrivate;

/* Allocates an ArrowArray node with quiver's release callback, n_buffers
 * buffer pointers (zeroed) and n_children child structs (release NULL). */
QvStatus qvi_array_alloc_node(struct ArrowArray *array, int64_t n_buffers, int64_t n_children,
                             bool with_dictionary, QvError *error);

/* A 64-byte aligned block of zeros for empty buffers that must not be NULL. */
extern const uint64_t qvi_zero_block[8];

static inline int64_t qvi_bitmap_bytes(int64_t bits) { return bits / 8 + (bits % 8 != 0); }

static inline bool qvi_bit_get(const uint8_t *bits, int64_t i) {
  return (bits[i >> 3] >> (i & 7)) & 1;
}
static inline void qvi_bit_set(uint8_t *bits, int64_t i, bool v) {
  if (v)
    bits[i >> 3] |= (uint8_t)(1u << (i & 7));
  else
    bits[i >> 3] &= (uint8_t)~(1u << (i & 7));
}

/* Reads an integer of byte width 1/2/4/8 (signed or not) as int64 (uint64
 * values above INT64_MAX come back negative; callers check). */
int64_t qvi_ld_int(const uint8_t *p, int width, bool is_signed);

/* 0: invalid UTF-8, 1: valid and ASCII only, 2: valid with multi-byte
 * characters. */
int qvi_utf8_classify(const uint8_t *s, int64_t n);
/* Offsets [from, to] of a 4- or 8-byte offsets buffer never decrease. */
bool qvi_offsets_monotonic(const uint8_t *o, int w, int64_t from, int64_t to);


/* Float16 bits to double. */

#endif
