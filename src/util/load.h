/* Loads and stores at any alignment, written once for the library.
 *
 * qvi_ld_* / qvi_st_*: values in the host's byte order (memory that a
 *   program or the C Data Interface hands over; Arrow bodies once read,
 *   which the reader swaps when the file's order is not the host's).
 * qvi_le_* / qvi_st_le_*: little-endian wire fields (FlatBuffers, message
 *   framing, zip and .npy headers), correct on any host.
 * qvi_ld_bits / qvi_st_bits: raw value bits of width 1, 2, 4 or 8 bytes, for
 *   type-generic kernels (the width is a constant after inlining).
 * qvi_le_bytes: a whole n-byte integer (decimals) to or from little-endian.
 *
 * All go through memcpy, which compilers turn into one plain load/store. */
#ifndef QUIVER_UTIL_LOAD_H
#define QUIVER_UTIL_LOAD_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#if defined(__GNUC__) || defined(__clang__)
#define QV_LOAD_INLINE static inline __attribute__((always_inline))
#else
#define QV_LOAD_INLINE static inline
#endif

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define QV_HOST_BIG_ENDIAN 1
#else
#define QV_HOST_BIG_ENDIAN 0
#endif

QV_LOAD_INLINE int8_t qvi_ld_i8(const void *p) { return *(const int8_t *)p; }
QV_LOAD_INLINE uint8_t qvi_ld_u8(const void *p) { return *(const uint8_t *)p; }
QV_LOAD_INLINE int16_t qvi_ld_i16(const void *p) { int16_t v; memcpy(&v, p, 2); return v; }
QV_LOAD_INLINE int32_t qvi_ld_i32(const void *p) { int32_t v; memcpy(&v, p, 4); return v; }
QV_LOAD_INLINE int64_t qvi_ld_i64(const void *p) { int64_t v; memcpy(&v, p, 8); return v; }
QV_LOAD_INLINE uint16_t qvi_ld_u16(const void *p) { uint16_t v; memcpy(&v, p, 2); return v; }
QV_LOAD_INLINE uint32_t qvi_ld_u32(const void *p) { uint32_t v; memcpy(&v, p, 4); return v; }
QV_LOAD_INLINE uint64_t qvi_ld_u64(const void *p) { uint64_t v; memcpy(&v, p, 8); return v; }
QV_LOAD_INLINE float qvi_ld_f32(const void *p) { float v; memcpy(&v, p, 4); return v; }
QV_LOAD_INLINE double qvi_ld_f64(const void *p) { double v; memcpy(&v, p, 8); return v; }

QV_LOAD_INLINE void qvi_st_u16(void *p, uint16_t v) { memcpy(p, &v, 2); }
QV_LOAD_INLINE void qvi_st_u32(void *p, uint32_t v) { memcpy(p, &v, 4); }
QV_LOAD_INLINE void qvi_st_u64(void *p, uint64_t v) { memcpy(p, &v, 8); }

QV_LOAD_INLINE uint64_t qvi_ld_bits(const void *p, size_t w) {
  switch (w) {
    case 1: return qvi_ld_u8(p);
    case 2: return qvi_ld_u16(p);
    case 4: return qvi_ld_u32(p);
    default: return qvi_ld_u64(p);
  }
}
QV_LOAD_INLINE void qvi_st_bits(void *p, size_t w, uint64_t v) {
  switch (w) {
    case 1: *(uint8_t *)p = (uint8_t)v; break;
    case 2: qvi_st_u16(p, (uint16_t)v); break;
    case 4: qvi_st_u32(p, (uint32_t)v); break;
    default: qvi_st_u64(p, v); break;
  }
}

/* Entry i of a 4- or 8-byte offsets buffer. */
QV_LOAD_INLINE int64_t qvi_ld_offset(const void *offsets, int width, int64_t i) {
  return width == 4 ? (int64_t)qvi_ld_i32((const uint8_t *)offsets + 4 * i)
                    : qvi_ld_i64((const uint8_t *)offsets + 8 * i);
}

QV_LOAD_INLINE uint16_t qvi_le_u16(const void *p) {
  uint16_t v = qvi_ld_u16(p);
  return QV_HOST_BIG_ENDIAN ? __builtin_bswap16(v) : v;
}
QV_LOAD_INLINE uint32_t qvi_le_u32(const void *p) {
  uint32_t v = qvi_ld_u32(p);
  return QV_HOST_BIG_ENDIAN ? __builtin_bswap32(v) : v;
}
QV_LOAD_INLINE uint64_t qvi_le_u64(const void *p) {
  uint64_t v = qvi_ld_u64(p);
  return QV_HOST_BIG_ENDIAN ? __builtin_bswap64(v) : v;
}
QV_LOAD_INLINE int32_t qvi_le_i32(const void *p) { return (int32_t)qvi_le_u32(p); }
QV_LOAD_INLINE int64_t qvi_le_i64(const void *p) { return (int64_t)qvi_le_u64(p); }

QV_LOAD_INLINE void qvi_st_le_u16(void *p, uint16_t v) {
  qvi_st_u16(p, QV_HOST_BIG_ENDIAN ? __builtin_bswap16(v) : v);
}
QV_LOAD_INLINE void qvi_st_le_u32(void *p, uint32_t v) {
  qvi_st_u32(p, QV_HOST_BIG_ENDIAN ? __builtin_bswap32(v) : v);
}
QV_LOAD_INLINE void qvi_st_le_u64(void *p, uint64_t v) {
  qvi_st_u64(p, QV_HOST_BIG_ENDIAN ? __builtin_bswap64(v) : v);
}

/* An n-byte host-order integer (a decimal) as little-endian bytes, or back:
 * the same whole-word reversal both ways on a big-endian host, a copy on a
 * little-endian one. dst and src must not overlap. */
QV_LOAD_INLINE void qvi_le_bytes(void *dst, const void *src, size_t n) {
  if (QV_HOST_BIG_ENDIAN) {
    for (size_t i = 0; i < n; i++) ((uint8_t *)dst)[i] = ((const uint8_t *)src)[n - 1 - i];
  } else {
    memcpy(dst, src, n);
  }
}

#endif
