#include "quiver/advanced.h"
#include "util/half.h"

#include <string.h>

/* The one NaN rule for both widths: `top10` are the payload's top ten bits. */
static uint16_t nan_to_half(uint16_t sign, uint32_t top10) {
  return (uint16_t)(sign | 0x7c00u | (top10 != 0 ? top10 : 0x200u));
}

float qv_half_to_float(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t man = h & 0x3ffu;
  uint32_t bits;
  if (exp == 0) {
    /* zero or subnormal: man * 2^-24 is exact in float */
    float f = (float)man * 0x1p-24f;
    memcpy(&bits, &f, sizeof bits);
    bits |= sign;
  } else if (exp == 31) {
    bits = sign | 0x7f800000u | (man << 13); /* inf, or NaN keeping its payload */
  } else {
    bits = sign | ((exp + 112u) << 23) | (man << 13); /* rebias 15 -> 127 */
  }
  float out;
  memcpy(&out, &bits, sizeof out);
  return out;
}

double qvi_half_to_double(uint16_t h) {
  if ((h & 0x7c00u) == 0x7c00u && (h & 0x3ffu) != 0) {
    /* NaN built by bits: a float -> double conversion would quieten it */
    uint64_t bits = ((uint64_t)(h & 0x8000u) << 48) | UINT64_C(0x7ff0000000000000) |
                    ((uint64_t)(h & 0x3ffu) << 42);
    double d;
    memcpy(&d, &bits, sizeof d);
    return d;
  }
  return (double)qv_half_to_float(h); /* exact */
}

uint16_t qvi_double_to_half(double d) {
  uint64_t x;
  memcpy(&x, &d, sizeof x);
  uint16_t sign = (uint16_t)((x >> 48) & 0x8000u);
  uint64_t ax = x & UINT64_C(0x7fffffffffffffff);
  if (ax >= UINT64_C(0x7ff0000000000000)) {
    if (ax == UINT64_C(0x7ff0000000000000)) return (uint16_t)(sign | 0x7c00u);
    return nan_to_half(sign, (uint32_t)(ax >> 42) & 0x3ffu);
  }
  /* 65520 = 0x40effe0000000000 rounds up to infinity */
  if (ax >= UINT64_C(0x40effe0000000000)) return (uint16_t)(sign | 0x7c00u);
  int64_t e = (int64_t)(ax >> 52); /* biased by 1023 */
  uint64_t m = (ax & UINT64_C(0xfffffffffffff)) | (UINT64_C(1) << 52);
  if (e < 1023 - 14) {
    /* below 2^-14: a half subnormal, in units of 2^-24 */
    if (ax <= UINT64_C(0x3e60000000000000)) return sign; /* <= 2^-25: ties to even go to zero */
    /* value = m * 2^(e - 1075) = (m >> shift) * 2^-24 with shift = 1051 - e (43 ..= 53) */
    unsigned shift = (unsigned)(1051 - e);
    uint64_t q = m >> shift;
    uint64_t rem = m & ((UINT64_C(1) << shift) - 1u);
    uint64_t halfway = UINT64_C(1) << (shift - 1u);
    if (rem > halfway || (rem == halfway && (q & 1u))) q++; /* may carry into the normal 0x400 */
    return (uint16_t)(sign | q);
  }
  uint64_t h = ((uint64_t)(e - 1008) << 10) | ((ax >> 42) & 0x3ffu); /* rebias 1023 -> 15 */
  uint64_t rem = ax & ((UINT64_C(1) << 42) - 1u);
  uint64_t halfway = UINT64_C(1) << 41;
  if (rem > halfway || (rem == halfway && (h & 1u))) h++; /* carry into the exponent is right */
  return (uint16_t)(sign | h);
}

uint16_t qv_float_to_half(float f) {
  uint32_t x;
  memcpy(&x, &f, sizeof x);
  if ((x & 0x7f800000u) == 0x7f800000u && (x & 0x7fffffu) != 0)
    return nan_to_half((uint16_t)((x >> 16) & 0x8000u), (x >> 13) & 0x3ffu);
  return qvi_double_to_half((double)f); /* exact widening, then the one rounding */
}
