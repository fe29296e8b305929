/* Back-to-front FlatBuffers builder. Objects are written from the end of the
 * buffer towards its start, so children (written first) sit after their
 * parents and every uoffset points forward. A QvFbRef is an object's distance
 * from the end of the buffer, which stays valid as the buffer grows. */
#include <stdlib.h>
#include <string.h>

#include "flatbuf/flatbuf.h"
#include "util/grow.h"

/* Largest slot a table may use; keeps the vtable scratch array on the stack. */
#define MAX_SLOT 1000

void qvi_fb_builder_init(QvFbBuilder *b) {
  memset(b, 0, sizeof *b);
  b->min_align = 1;
}

void qvi_fb_builder_reset(QvFbBuilder *b) {
  if (b == NULL) return;
  free(b->buf);
  free(b->field_offs);
  free(b->vtables);
  qvi_fb_builder_init(b);
}

/* The first failure is the one reported; everything after it is a no-op. */
static void fail(QvFbBuilder *b, QvStatus status) {
  if (!b->failed) b->fail_status = status;
  b->failed = true;
}

static bool reserve(QvFbBuilder *b, size_t n) {
  if (b->failed) return false;
  if (b->finished) {
    fail(b, QV_EARG);
    return false;
  }
  if (n > QV_FB_MAX_SIZE - b->used) {
    fail(b, QV_ELIMIT);
    return false;
  }
  if (b->cap - b->used >= n) return true;
  size_t cap = qvi_grow_capacity(b->cap, b->used + n, 256, 1); /* used + n: checked above */
  uint8_t *nb = malloc(cap);
  if (nb == NULL) {
    fail(b, QV_ENOMEM);
    return false;
  }
  if (b->used) memcpy(nb + cap - b->used, b->buf + b->cap - b->used, b->used);
  free(b->buf);
  b->buf = nb;
  b->cap = cap;
  return true;
}

/* n == 0 returns early: buf may still be NULL, and memcpy/memset on NULL
 * is undefined even for zero bytes. */
static void push(QvFbBuilder *b, const void *data, size_t n) {
  if (n == 0 || !reserve(b, n)) return;
  b->used += n;
  memcpy(b->buf + b->cap - b->used, data, n);
}

static void push_zeros(QvFbBuilder *b, size_t n) {
  if (n == 0 || !reserve(b, n)) return;
  b->used += n;
  memset(b->buf + b->cap - b->used, 0, n);
}

/* Pads so that after `extra` more bytes the write position is `align`-aligned.
 * Positions count from the end; qvi_fb_finish pads the total size to a
 * multiple of min_align, which makes them aligned from the start as well. */
static void align_for(QvFbBuilder *b, size_t align, size_t extra) {
  if (align > b->min_align) b->min_align = align;
  size_t pad = (align - ((b->used + extra) % align)) % align;
  push_zeros(b, pad);
}

static void push_u32(QvFbBuilder *b, uint32_t v) {
  uint8_t le[4];
  qvi_st_le_u32(le, v);
  push(b, le, 4);
}

/* Pushes `count` scalars of `w` bytes stored little-endian: as they are on a
 * little-endian host, byte-reversed one by one on a big-endian host. */
static void push_le(QvFbBuilder *b, const void *data, size_t count, size_t w) {
  if (!QV_HOST_BIG_ENDIAN || w == 1) {
    push(b, data, count * w);
    return;
  }
  if (count == 0 || !reserve(b, count * w)) return;
  b->used += count * w;
  uint8_t *dst = b->buf + b->cap - b->used;
  const uint8_t *src = data;
  for (size_t i = 0; i < count; i++)
    for (size_t k = 0; k < w; k++) dst[i * w + k] = src[i * w + w - 1 - k];
}

/* uoffset from the slot about to be written to the object `ref`, which must
 * already be in the buffer (a 0 or foreign ref would point nowhere). */
static void push_uoffset(QvFbBuilder *b, QvFbRef ref) {
  if (ref == 0 || ref > b->used) {
    fail(b, QV_EARG);
    return;
  }
  align_for(b, 4, 0);
  push_u32(b, (uint32_t)(b->used + 4 - ref));
}

QvFbRef qvi_fb_create_string(QvFbBuilder *b, const char *s, size_t len) {
  if (b->in_table || (s == NULL && len > 0)) fail(b, QV_EARG);
  if (len > QV_FB_MAX_SIZE) fail(b, QV_ELIMIT);
  if (b->failed) return 0;
  align_for(b, 4, len + 1);
  push_zeros(b, 1);
  push(b, s, len);
  push_u32(b, (uint32_t)len);
  return b->failed ? 0 : (QvFbRef)b->used;
}

static QvFbRef create_vector(QvFbBuilder *b, const void *data, size_t count, size_t elem_size,
                             size_t align, bool scalars) {
  if (b->in_table || (data == NULL && count > 0 && elem_size > 0) || (align & (align - 1)) != 0)
    fail(b, QV_EARG);
  if (count > UINT32_MAX || (elem_size && count > QV_FB_MAX_SIZE / elem_size))
    fail(b, QV_ELIMIT);
  if (b->failed) return 0;
  size_t bytes = count * elem_size;
  if (align < 4) align = 4; /* the length prefix is a uint32 */
  /* the elements end where the length starts, so aligning their start to
   * `align` (>= 4) aligns the length too */
  align_for(b, align, bytes);
  if (scalars)
    push_le(b, data, count, elem_size);
  else
    push(b, data, bytes);
  push_u32(b, (uint32_t)count);
  return b->failed ? 0 : (QvFbRef)b->used;
}

QvFbRef qvi_fb_create_vector(QvFbBuilder *b, const void *data, size_t count, size_t elem_size,
                            size_t align) {
  if (elem_size != 1 && elem_size != 2 && elem_size != 4 && elem_size != 8) fail(b, QV_EARG);
  return create_vector(b, data, count, elem_size, align, true);
}

QvFbRef qvi_fb_create_struct_vector(QvFbBuilder *b, const void *data, size_t count,
                                   size_t elem_size, size_t align) {
  return create_vector(b, data, count, elem_size, align, false);
}

QvFbRef qvi_fb_create_vector_refs(QvFbBuilder *b, const QvFbRef *refs, size_t count) {
  if (b->in_table || (refs == NULL && count > 0)) fail(b, QV_EARG);
  if (count > QV_FB_MAX_SIZE / 4) fail(b, QV_ELIMIT);
  if (b->failed) return 0;
  align_for(b, 4, count * 4);
  for (size_t i = count; i-- > 0;) push_uoffset(b, refs[i]);
  push_u32(b, (uint32_t)count);
  return b->failed ? 0 : (QvFbRef)b->used;
}

void qvi_fb_table_start(QvFbBuilder *b) {
  if (b->in_table || b->finished) fail(b, QV_EARG);
  b->in_table = true;
  b->table_start_used = b->used;
  if (b->field_offs) memset(b->field_offs, 0, b->n_slots_cap * sizeof *b->field_offs);
  b->max_slot_plus1 = 0;
}

/* Notes that `slot`'s bytes were just pushed and end at b->used. */
static void record_field(QvFbBuilder *b, unsigned slot) {
  if (b->failed) return;
  if (!b->in_table || slot > MAX_SLOT) {
    fail(b, QV_EARG);
    return;
  }
  if (slot >= b->n_slots_cap) {
    unsigned ncap = (unsigned)qvi_grow_capacity(b->n_slots_cap, (size_t)slot + 1, 16, sizeof(uint32_t));
    uint32_t *n = realloc(b->field_offs, ncap * sizeof *n);
    if (n == NULL) {
      fail(b, QV_ENOMEM);
      return;
    }
    memset(n + b->n_slots_cap, 0, (ncap - b->n_slots_cap) * sizeof *n);
    b->field_offs = n;
    b->n_slots_cap = ncap;
  }
  /* a second value for a slot would leave the first as dead bytes */
  if (b->field_offs[slot] != 0) {
    fail(b, QV_EARG);
    return;
  }
  b->field_offs[slot] = (uint32_t)b->used;
  if (slot + 1 > b->max_slot_plus1) b->max_slot_plus1 = slot + 1;
}

void qvi_fb_add_scalar(QvFbBuilder *b, unsigned slot, const void *v, size_t size) {
  if (!b->in_table || (size != 1 && size != 2 && size != 4 && size != 8) || v == NULL) {
    fail(b, QV_EARG);
    return;
  }
  align_for(b, size, 0);
  push_le(b, v, 1, size);
  record_field(b, slot);
}

/* Defaults are compared bitwise so that floats keep -0.0 and NaN payloads. */
#define ADDER(name, type)                                                  \
  void name(QvFbBuilder *b, unsigned slot, type v, type def) {             \
    if (memcmp(&v, &def, sizeof v) != 0) qvi_fb_add_scalar(b, slot, &v, sizeof v); \
  }

ADDER(qvi_fb_add_u8, uint8_t)
ADDER(qvi_fb_add_i8, int8_t)
ADDER(qvi_fb_add_i16, int16_t)
ADDER(qvi_fb_add_u16, uint16_t)
ADDER(qvi_fb_add_i32, int32_t)
ADDER(qvi_fb_add_u32, uint32_t)
ADDER(qvi_fb_add_i64, int64_t)
ADDER(qvi_fb_add_u64, uint64_t)
ADDER(qvi_fb_add_f32, float)
ADDER(qvi_fb_add_f64, double)

void qvi_fb_add_bool(QvFbBuilder *b, unsigned slot, bool v, bool def) {
  qvi_fb_add_u8(b, slot, v ? 1 : 0, def ? 1 : 0);
}

void qvi_fb_add_struct(QvFbBuilder *b, unsigned slot, const void *data, size_t size,
                      size_t align) {
  if (!b->in_table || data == NULL || size == 0 || (align & (align - 1)) != 0) {
    fail(b, QV_EARG);
    return;
  }
  align_for(b, align ? align : 1, 0);
  push(b, data, size);
  record_field(b, slot);
}

void qvi_fb_add_ref(QvFbBuilder *b, unsigned slot, QvFbRef ref) {
  if (ref == 0) return;
  if (!b->in_table) {
    fail(b, QV_EARG);
    return;
  }
  push_uoffset(b, ref);
  record_field(b, slot);
}

QvFbRef qvi_fb_table_end(QvFbBuilder *b) {
  if (!b->in_table) fail(b, QV_EARG);
  if (b->failed) {
    b->in_table = false;
    return 0;
  }
  align_for(b, 4, 0);
  push_zeros(b, 4); /* soffset to the vtable, patched below */
  b->in_table = false;
  if (b->failed) return 0;
  QvFbRef table_ref = (QvFbRef)b->used;
  size_t table_size = table_ref - b->table_start_used;
  size_t n = b->max_slot_plus1;
  size_t vt_size = 4 + 2 * n;
  if (table_size > UINT16_MAX || vt_size > UINT16_MAX) {
    fail(b, QV_ELIMIT);
    return 0;
  }
  /* the vtable in wire order, so that deduplication compares wire bytes */
  uint8_t vt[2 * (2 + MAX_SLOT + 1)];
  qvi_st_le_u16(vt, (uint16_t)vt_size);
  qvi_st_le_u16(vt + 2, (uint16_t)table_size);
  for (size_t i = 0; i < n; i++)
    qvi_st_le_u16(vt + 4 + 2 * i,
                 b->field_offs[i] ? (uint16_t)(table_ref - b->field_offs[i]) : 0);

  /* Deduplicate against the vtables already written. The sizes are compared
   * first: an older, shorter vtable may sit near the end of the buffer, where
   * comparing vt_size bytes would read past it. */
  QvFbRef vt_ref = 0;
  for (size_t i = 0; i < b->n_vtables; i++) {
    const uint8_t *old = b->buf + b->cap - b->vtables[i];
    uint16_t old_size = qvi_le_u16(old);
    if (old_size == vt_size && memcmp(old, vt, vt_size) == 0) {
      vt_ref = b->vtables[i];
      break;
    }
  }
  if (vt_ref == 0) {
    push(b, vt, vt_size);
    if (b->failed) return 0;
    vt_ref = (QvFbRef)b->used;
    if (b->n_vtables == b->vtables_cap) {
      QvFbRef *nv = qvi_grow_array(b->vtables, &b->vtables_cap, b->vtables_cap + 1, 16, sizeof *nv);
      if (nv == NULL) {
        fail(b, QV_ENOMEM);
        return 0;
      }
      b->vtables = nv;
    }
    b->vtables[b->n_vtables++] = vt_ref;
  }
  /* vtable = table - soffset, in buffer positions (which run opposite to refs) */
  int32_t soff = (int32_t)((int64_t)vt_ref - (int64_t)table_ref);
  qvi_st_le_u32(b->buf + b->cap - table_ref, (uint32_t)soff);
  return table_ref;
}

QvStatus qvi_fb_finish(QvFbBuilder *b, QvFbRef root, const uint8_t **out, size_t *out_size,
                      QvError *error) {
  if (b->finished && !b->failed)
    return qv_error_set(error, QV_EARG, "FlatBuffers builder: finish called twice");
  if (b->in_table && !b->failed)
    return qv_error_set(error, QV_EARG, "FlatBuffers builder: finish called inside a table");
  if (root == 0 && !b->failed)
    return qv_error_set(error, QV_EARG, "FlatBuffers builder: no root table");
  align_for(b, b->min_align, 4);
  push_uoffset(b, root);
  if (b->failed) {
    switch (b->fail_status) {
      case QV_ENOMEM:
        return qv_error_set(error, QV_ENOMEM, "FlatBuffers builder: out of memory");
      case QV_ELIMIT:
        return qv_error_set(error, QV_ELIMIT,
                            "FlatBuffers builder: buffer, table or vtable over its size limit");
      default:
        return qv_error_set(error, QV_EARG,
                            "FlatBuffers builder: misuse (nested table, string or vector "
                            "inside a table, bad slot, ref or size, or a slot set twice)");
    }
  }
  b->finished = true;
  *out = b->buf + b->cap - b->used;
  *out_size = b->used;
  return QV_OK;
}
