/* Bounds-checked FlatBuffers accessors. None of them trusts the buffer: a
 * field whose bytes would fall outside it reads as absent. */
#include <string.h>

#include "flatbuf/flatbuf.h"


static bool in_bounds(size_t size, size_t pos, size_t width) {
  return pos <= size && width <= size - pos;
}

/* Resolves a table at `pos`: reads its vtable and checks the header fits. */
static QvFbTable table_at(const uint8_t *buf, size_t size, size_t pos) {
  QvFbTable t = {0};
  if (!in_bounds(size, pos, 4)) return t;
  int64_t vt = (int64_t)pos - (int64_t)qvi_le_i32(buf + pos);
  if (vt < 0 || !in_bounds(size, (size_t)vt, 4)) return t;
  uint16_t vt_size = qvi_le_u16(buf + vt);
  if (vt_size < 4 || (vt_size & 1) || !in_bounds(size, (size_t)vt, vt_size)) return t;
  t.buf = buf;
  t.size = size;
  t.pos = pos;
  t.vt = (size_t)vt;
  t.vt_size = vt_size;
  return t;
}

bool qvi_fb_root(const uint8_t *buf, size_t size, QvFbTable *out) {
  QvFbTable none = {0};
  *out = none;
  if (buf == NULL || size < 8 || size > QV_FB_MAX_SIZE) return false;
  *out = table_at(buf, size, qvi_le_u32(buf));
  return out->buf != NULL;
}

size_t qvi_fb_field_pos(QvFbTable t, unsigned slot, size_t width) {
  if (t.buf == NULL) return 0;
  size_t entry = 4 + 2 * (size_t)slot;
  if (entry + 2 > t.vt_size) return 0;
  uint16_t off = qvi_le_u16(t.buf + t.vt + entry);
  if (off == 0) return 0;
  size_t pos = t.pos + off;
  if (!in_bounds(t.size, pos, width)) return 0;
  return pos;
}

bool qvi_fb_has(QvFbTable t, unsigned slot) { return qvi_fb_field_pos(t, slot, 1) != 0; }

/* Wire scalars are little-endian: reverse the bytes on a big-endian host. */
static void load_le(void *dst, const uint8_t *src, size_t width) {
  if (QV_HOST_BIG_ENDIAN) {
    for (size_t i = 0; i < width; i++) ((uint8_t *)dst)[i] = src[width - 1 - i];
  } else {
    memcpy(dst, src, width);
  }
}

#define SCALAR_GETTER(name, type, width)                          \
  type name(QvFbTable t, unsigned slot, type def) {               \
    size_t pos = qvi_fb_field_pos(t, slot, width);                 \
    if (pos == 0) return def;                                     \
    type v;                                                       \
    load_le(&v, t.buf + pos, width);                              \
    return v;                                                     \
  }

SCALAR_GETTER(qvi_fb_u8, uint8_t, 1)
SCALAR_GETTER(qvi_fb_i8, int8_t, 1)
SCALAR_GETTER(qvi_fb_i16, int16_t, 2)
SCALAR_GETTER(qvi_fb_u16, uint16_t, 2)
SCALAR_GETTER(qvi_fb_i32, int32_t, 4)
SCALAR_GETTER(qvi_fb_u32, uint32_t, 4)
SCALAR_GETTER(qvi_fb_i64, int64_t, 8)
SCALAR_GETTER(qvi_fb_u64, uint64_t, 8)
SCALAR_GETTER(qvi_fb_f32, float, 4)
SCALAR_GETTER(qvi_fb_f64, double, 8)

bool qvi_fb_bool(QvFbTable t, unsigned slot, bool def) {
  return qvi_fb_u8(t, slot, def ? 1 : 0) != 0;
}

const uint8_t *qvi_fb_struct(QvFbTable t, unsigned slot, size_t size) {
  size_t pos = qvi_fb_field_pos(t, slot, size);
  return pos ? t.buf + pos : NULL;
}

/* Follows the uoffset stored at `pos`; returns 0 when it leaves the buffer. */
static size_t follow(const uint8_t *buf, size_t size, size_t pos) {
  if (!in_bounds(size, pos, 4)) return 0;
  uint32_t rel = qvi_le_u32(buf + pos);
  if (rel == 0) return 0;
  if (rel >= size - pos) return 0;
  return pos + rel;
}

QvFbTable qvi_fb_table(QvFbTable t, unsigned slot) {
  QvFbTable none = {0};
  size_t pos = qvi_fb_field_pos(t, slot, 4);
  if (pos == 0) return none;
  size_t target = follow(t.buf, t.size, pos);
  return target ? table_at(t.buf, t.size, target) : none;
}

static QvFbString string_at(const uint8_t *buf, size_t size, size_t pos) {
  QvFbString s = {0};
  if (pos == 0 || !in_bounds(size, pos, 4)) return s;
  uint32_t len = qvi_le_u32(buf + pos);
  /* len bytes plus the terminating NUL, which is required so that callers
   * may treat data as a C string even on unverified input */
  if (!in_bounds(size, pos + 4, (size_t)len + 1) || buf[pos + 4 + len] != 0) return s;
  s.data = (const char *)buf + pos + 4;
  s.len = len;
  return s;
}

QvFbString qvi_fb_string(QvFbTable t, unsigned slot) {
  QvFbString none = {0};
  size_t pos = qvi_fb_field_pos(t, slot, 4);
  if (pos == 0) return none;
  return string_at(t.buf, t.size, follow(t.buf, t.size, pos));
}

QvFbVector qvi_fb_vector(QvFbTable t, unsigned slot, size_t elem_size) {
  QvFbVector v = {0};
  size_t pos = qvi_fb_field_pos(t, slot, 4);
  if (pos == 0 || elem_size == 0) return v;
  size_t target = follow(t.buf, t.size, pos);
  if (target == 0 || !in_bounds(t.size, target, 4)) return v;
  size_t len = qvi_le_u32(t.buf + target);
  size_t avail = (t.size - target - 4) / elem_size;
  v.buf = t.buf;
  v.size = t.size;
  v.pos = target + 4;
  v.len = len < avail ? len : avail;
  v.elem_size = elem_size;
  return v;
}

const uint8_t *qvi_fb_vec_at(QvFbVector v, size_t i) {
  if (v.buf == NULL || i >= v.len) return NULL;
  return v.buf + v.pos + i * v.elem_size;
}

uint8_t qvi_fb_vec_u8(QvFbVector v, size_t i) {
  const uint8_t *p = qvi_fb_vec_at(v, i);
  return p && v.elem_size >= 1 ? p[0] : 0;
}

int16_t qvi_fb_vec_i16(QvFbVector v, size_t i) {
  const uint8_t *p = qvi_fb_vec_at(v, i);
  return p && v.elem_size >= 2 ? (int16_t)qvi_le_u16(p) : 0;
}

int32_t qvi_fb_vec_i32(QvFbVector v, size_t i) {
  const uint8_t *p = qvi_fb_vec_at(v, i);
  return p && v.elem_size >= 4 ? qvi_le_i32(p) : 0;
}

int64_t qvi_fb_vec_i64(QvFbVector v, size_t i) {
  const uint8_t *p = qvi_fb_vec_at(v, i);
  return p && v.elem_size >= 8 ? qvi_le_i64(p) : 0;
}

double qvi_fb_vec_f64(QvFbVector v, size_t i) {
  const uint8_t *p = qvi_fb_vec_at(v, i);
  double d = 0;
  if (p && v.elem_size >= 8) load_le(&d, p, 8);
  return d;
}

QvFbTable qvi_fb_vec_table(QvFbVector v, size_t i) {
  QvFbTable none = {0};
  const uint8_t *p = qvi_fb_vec_at(v, i);
  if (p == NULL || v.elem_size != 4) return none;
  size_t target = follow(v.buf, v.size, (size_t)(p - v.buf));
  return target ? table_at(v.buf, v.size, target) : none;
}

QvFbString qvi_fb_vec_string(QvFbVector v, size_t i) {
  QvFbString none = {0};
  const uint8_t *p = qvi_fb_vec_at(v, i);
  if (p == NULL || v.elem_size != 4) return none;
  return string_at(v.buf, v.size, follow(v.buf, v.size, (size_t)(p - v.buf)));
}
