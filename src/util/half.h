/* IEEE 754 binary16 ("half") conversions, written once for the whole
 * library. One NaN policy: a NaN keeps its sign and as much of its payload
 * as the narrower format holds (the top bits, quiet bit included); when
 * narrowing leaves no payload bit set, the quiet bit is set so the value
 * stays a NaN instead of becoming infinity. Widening is exact, so every one
 * of the 65536 halves survives half -> float/double -> half bit for bit.
 * Narrowing rounds to nearest, ties to even; magnitudes from 65520 up
 * become infinity.
 *
 * The public qv_half_to_float / qv_float_to_half (quiver/tensor.h) are
 * defined here too. */
#ifndef QUIVER_UTIL_HALF_H
#define QUIVER_UTIL_HALF_H

#include <stdint.h>

#include "quiver/advanced.h"
#include "quiver/common.h"

double qvi_half_to_double(uint16_t h);
uint16_t qvi_double_to_half(double d);

#endif
