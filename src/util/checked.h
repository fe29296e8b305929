/* Checked arithmetic for sizes and counts, written once for the library.
 * The _i64 forms take non-negative operands (element counts, byte sizes,
 * offsets) and fail on a negative operand as on overflow, so a hostile
 * length cannot sneak through a subtraction later; *out is written only on
 * success. */
#ifndef QUIVER_UTIL_CHECKED_H
#define QUIVER_UTIL_CHECKED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

static inline bool qvi_mul_i64(int64_t a, int64_t b, int64_t *out) {
  int64_t r;
  if (a < 0 || b < 0 || __builtin_mul_overflow(a, b, &r)) return false;
  *out = r;
  return true;
}
static inline bool qvi_add_i64(int64_t a, int64_t b, int64_t *out) {
  int64_t r;
  if (a < 0 || b < 0 || __builtin_add_overflow(a, b, &r)) return false;
  *out = r;
  return true;
}
/* a * b + c */
static inline bool qvi_mul_add_i64(int64_t a, int64_t b, int64_t c, int64_t *out) {
  int64_t p;
  return qvi_mul_i64(a, b, &p) && qvi_add_i64(p, c, out);
}
static inline bool qvi_mul_size(size_t a, size_t b, size_t *out) {
  size_t r;
  if (__builtin_mul_overflow(a, b, &r)) return false;
  *out = r;
  return true;
}
static inline bool qvi_add_size(size_t a, size_t b, size_t *out) {
  size_t r;
  if (__builtin_add_overflow(a, b, &r)) return false;
  *out = r;
  return true;
}
/* A non-negative int64 as size_t (false when negative or too large). */
static inline bool qvi_i64_to_size(int64_t v, size_t *out) {
  if (v < 0 || (uint64_t)v > SIZE_MAX) return false;
  *out = (size_t)v;
  return true;
}

#endif
