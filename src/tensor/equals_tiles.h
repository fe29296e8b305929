/* Tensor equals across layouts with a wider instruction set
 * (equals_tiles.c), called by the portable tiled walk in walk.c. */
#ifndef QUIVER_TENSOR_EQUALS_TILES_H
#define QUIVER_TENSOR_EQUALS_TILES_H

#include <stdbool.h>
#include <stdint.h>

#include "quiver/tensor.h"

/* Compares a rows x cols block, element (r, c) at a + r * a_r + c * a_c
 * and b + r * b_r + c * b_c, with qv_tensor_equal' value semantics.
 * Returns 1 (equal) or 0, or -1 when no kernel serves the case (the caller
 * runs the portable tiles): 8- and 4-byte values (not float16's 2), a
 * contiguous along r and b along c, on a CPU with AVX2. Bumps
 * QV_PATH_EQUALS_AVX2 when it runs. */
int qvi_tensor_equals_tiles(QvArrowType type, const uint8_t *a, int64_t a_r, int64_t a_c,
                           const uint8_t *b, int64_t b_r, int64_t b_c, int64_t rows, int64_t cols,
                           bool nans_equal);

#endif
