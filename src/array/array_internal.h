/* Internals shared by src/array/: private data of arrays made by quiver,
 * layout classification, bit and load helpers. */
#ifndef QUIVER_ARRAY_INTERNAL_H
#define QUIVER_ARRAY_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "quiver/array.h"
#include "util/checked.h"
#include "util/load.h"

/* Physical layouts (Columnar.rst) */
typedef enum QvLayout {
  QV_LAYOUT_NULL,
  QV_LAYOUT_BOOL,
  QV_LAYOUT_FIXED,       /* byte_width bytes per value */
  QV_LAYOUT_BINARY,      /* int32 offsets + data */
  QV_LAYOUT_LARGE_BINARY,
  QV_LAYOUT_VIEW,
  QV_LAYOUT_LIST,        /* int32 offsets + child (list, map) */
  QV_LAYOUT_LARGE_LIST,
  QV_LAYOUT_LIST_VIEW,
  QV_LAYOUT_LARGE_LIST_VIEW,
  QV_LAYOUT_FIXED_LIST,
  QV_LAYOUT_STRUCT,
  QV_LAYOUT_SPARSE_UNION,
  QV_LAYOUT_DENSE_UNION,
  QV_LAYOUT_REE
} QvLayout;

QvLayout qv_layout_of(QvArrowType storage_type);
/* Whether the layout has a validity bitmap in slot 0. */
bool qv_layout_has_validity(QvLayout layout);
/* Number of buffers an ArrowArray of this layout carries (views: without
 * the variadic buffers and the trailing sizes buffer). */
int qv_layout_n_buffers(QvLayout layout);
/* Byte width of the offsets of a binary/list-like layout (4 or 8), else 0. */
int qv_layout_offset_width(QvLayout layout);

static inline QvLayout qv_view_layout(const QvArrayView *v) {
  return qv_layout_of(v->type.storage_type);
}

/* Growable, 64-byte aligned buffer used by builders. */
typedef struct QvGrowBuf {
  uint8_t *data;
  int64_t size;
  int64_t capacity;
} QvGrowBuf;

QvStatus qv_growbuf_reserve(QvGrowBuf *b, int64_t additional);
QvStatus qv_growbuf_append(QvGrowBuf *b, const void *data, int64_t n);
QvStatus qv_growbuf_append_zeros(QvGrowBuf *b, int64_t n);
void qv_growbuf_free(QvGrowBuf *b);

/* Builder state of one node while it is being built. */
typedef struct QvBuilder {
  QvSchemaView type;
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

void qv_builder_free(QvBuilder *b);

/* Private data of every ArrowArray node made by quiver. */
typedef struct QvArrayPrivate {
  const void **buffer_ptrs;
  int64_t *variadic_sizes; /* views: owned copy of the trailing sizes buffer */
  struct ArrowArray **child_ptrs;
  struct ArrowArray *child_storage;
  struct ArrowArray *dictionary_storage;
  QvOwner *owner; /* keeps the buffers alive; NULL for static memory */
  QvBuilder *builder; /* non-NULL while building */
} QvArrayPrivate;

/* Allocates an ArrowArray node with quiver's release callback, n_buffers
 * buffer pointers (zeroed) and n_children child structs (release NULL). */
QvStatus qv_array_alloc_node(struct ArrowArray *array, int64_t n_buffers, int64_t n_children,
                             bool with_dictionary, QvError *error);

/* A 64-byte aligned block of zeros for empty buffers that must not be NULL. */
extern const uint64_t qv_zero_block[8];

static inline int64_t qv_bitmap_bytes(int64_t bits) { return bits / 8 + (bits % 8 != 0); }

static inline bool qv_bit_get(const uint8_t *bits, int64_t i) {
  return (bits[i >> 3] >> (i & 7)) & 1;
}
static inline void qv_bit_set(uint8_t *bits, int64_t i, bool v) {
  if (v)
    bits[i >> 3] |= (uint8_t)(1u << (i & 7));
  else
    bits[i >> 3] &= (uint8_t)~(1u << (i & 7));
}
/* Number of set bits in bits[start, start + length). */
int64_t qv_bitmap_count_set(const uint8_t *bits, int64_t start, int64_t length);

/* Reads an integer of byte width 1/2/4/8 (signed or not) as int64 (uint64
 * values above INT64_MAX come back negative; callers check). */
int64_t qv_ld_int(const uint8_t *p, int width, bool is_signed);

/* Validates UTF-8; true when valid. */
bool qv_utf8_valid(const uint8_t *s, int64_t n);
/* 0: invalid UTF-8, 1: valid and ASCII only, 2: valid with multi-byte
 * characters. */
int qv_utf8_classify(const uint8_t *s, int64_t n);
/* Offsets [from, to] of a 4- or 8-byte offsets buffer never decrease. */
bool qv_offsets_monotonic(const uint8_t *o, int w, int64_t from, int64_t to);

/* Validation with or without descending into dictionaries (a reader checks
 * each dictionary once, when it arrives, not with every batch). */
QvStatus qv_array_view_validate_ex(const QvArrayView *view, QvValidateLevel level,
                                   bool dictionaries, QvError *error);

/* Float16 bits to double. */

#endif
