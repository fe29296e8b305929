/* The one value cast kernel (numeric types, quiver/common.h's order) behind
 * qv_tensor_cast and qv_sparse_cast: exact or refused, never wrapped or
 * saturated. */
#ifndef QUIVER_UTIL_VALUE_CAST_H
#define QUIVER_UTIL_VALUE_CAST_H

#include <stddef.h>
#include <stdint.h>

#include "quiver/common.h"
#include "quiver/error.h"

/* Casts n values of `from` at src (each src_stride bytes after the last;
 * need not be aligned, native byte order) to n contiguous values of `to` at
 * dst. The rule (docs/cli.md, convert --value-type):
 *  - integer -> integer: the value must be in the target's range;
 *  - float -> integer: whole and in range (NaN and infinities never fit);
 *  - integer -> float: only when the float holds the integer exactly;
 *  - float -> float: rounded to nearest; NaN and infinities stay; a finite
 *    value that rounds beyond the target's range (float16: 65520 and up)
 *    does not fit.
 * On a value that does not fit: QV_EINVAL, *bad = its position (0..n-1) and
 * the error "value V does not fit T" (the caller adds where it is). */
QvStatus qvi_values_cast(QvArrowType from, const uint8_t *src, int64_t src_stride, QvArrowType to,
                         uint8_t *dst, int64_t n, int64_t *bad, QvError *error);

/* A numeric type's value as text for messages (shortest round trip). */
void qvi_value_text(QvArrowType type, const uint8_t *p, char *buf, size_t cap);

#endif
