/* The one strict UTF-8 decoder (RFC 3629), for every layer that checks or
 * reads text: the array validator, the extension metadata's JSON, Flight.
 * Inline: the array layer calls it once per multi-byte sequence of a
 * string column, and a caller that ignores the code point loses its
 * arithmetic. */
#ifndef QUIVER_UTIL_UTF8_H
#define QUIVER_UTIL_UTF8_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The length of the UTF-8 sequence at s[0, n) (n >= 1) with its code point
 * in *cp, or 0 when it is not one: no overlong forms, no surrogates
 * (U+D800..DFFF), nothing past U+10FFFF, no sequence cut by n. */
static inline size_t qvi_utf8_decode(const uint8_t *s, size_t n, uint32_t *cp) {
  uint8_t c = s[0];
  if (c < 0x80) {
    *cp = c;
    return 1;
  }
  size_t len;
  uint8_t lo = 0x80, hi = 0xBF; /* the range of the second byte */
  uint32_t v;
  if (c >= 0xC2 && c <= 0xDF) {
    len = 2;
    v = c & 0x1Fu;
  } else if (c >= 0xE0 && c <= 0xEF) {
    len = 3;
    v = c & 0x0Fu;
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    len = 4;
    v = c & 0x07u;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;
  } else {
    return 0;
  }
  if (n < len || s[1] < lo || s[1] > hi) return 0;
  v = (v << 6) | (s[1] & 0x3Fu);
  for (size_t i = 2; i < len; i++) {
    if ((s[i] & 0xC0) != 0x80) return 0;
    v = (v << 6) | (s[i] & 0x3Fu);
  }
  *cp = v;
  return len;
}

/* Whether s[0, n) is UTF-8 as qvi_utf8_decode defines it (ASCII runs 32
 * bytes a step). */
bool qvi_utf8_valid(const uint8_t *s, int64_t n);

#endif
