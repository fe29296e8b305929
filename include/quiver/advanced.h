/**
 * @file quiver/advanced.h
 * @brief The advanced tier: low-level kernels the library is built from.
 *
 * These are stable and exported, but they are building blocks, not the way
 * in: most programs never need them. They take raw pointers and trust them
 * (no QvError), so the caller answers for bounds.
 */
#ifndef QUIVER_ADVANCED_H
#define QUIVER_ADVANCED_H

#include "quiver/common.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** @defgroup advanced Advanced: kernels
 * @{ */

/** CPUs this process may run on (its affinity mask, so `taskset` and
 * container CPU sets count), at least 1 and at most 256: a caller's natural
 * value for the `threads` option of readers and writers. */
QV_API int qv_cpu_count(void);

/** Number of set bits in bits[start, start + length) (start in bits). */
QV_API int64_t qv_bitmap_count_set(const uint8_t *bits, int64_t start, int64_t length);

/** Reads entry i of an integer buffer of type `index_type`
 * (QV_ARROW_INT8 .. QV_ARROW_UINT64) as int64; uint64 values above INT64_MAX read as -1. */
QV_API int64_t qv_index_load(const uint8_t *buf, QvArrowType index_type, int64_t i);

/** IEEE half -> float. Keeps a NaN's payload exactly, so every half
 * round-trips bit for bit through qv_float_to_half. */
QV_API float qv_half_to_float(uint16_t h);
/** float -> IEEE half: round to nearest, ties to even; values from 65520 up
 * become infinity. A NaN keeps its sign and the top ten bits of its payload
 * and is always made quiet (so a signalling NaN whose kept payload bits are
 * zero cannot turn into infinity). */
QV_API uint16_t qv_float_to_half(float f);

/** The length of the UTF-8 sequence at s[0, n) with its code point in *cp,
 * or 0 when there is none (RFC 3629: no overlong forms, no surrogates
 * U+D800..DFFF, nothing past U+10FFFF, no sequence cut by n; 0 too for a
 * NULL s or cp, or n == 0). The decoder the validators use. */
QV_API size_t qv_utf8_decode(const uint8_t *s, size_t n, uint32_t *cp);
/** Whether code point cp changes how the text around it is shown without
 * being seen: C1 controls, bidirectional marks, embeddings, overrides and
 * isolates (U+202E shows the text after it reversed), zero-width and other
 * format characters, line and paragraph separators, tags. quiver's printers
 * (values, names in the CLI) escape exactly these. */
QV_API bool qv_unicode_is_invisible(uint32_t cp);

/** @} */

#ifdef __cplusplus
}
#endif

#endif
