/* Large copies into memory that is not read back soon (message bodies), and
 * the plane (de)interleaving kernels of tensor copies. */
#ifndef QUIVER_UTIL_COPY_H
#define QUIVER_UTIL_COPY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* memcpy, with cache-bypassing (non-temporal) stores from 1 MiB on where the
 * CPU has them: they save the read-for-ownership of every destination line,
 * and glibc's memcpy ran 2-4x slower here on large copies whose source and
 * destination sit at different offsets within a page, the usual case for a
 * body placed after its metadata. */
void qvi_copy_large(void *dst, const void *src, size_t n);
/* memmove, the same way, for ranges that may overlap with dst below src
 * (frames moving into place inside a sink's memory); dst above src falls
 * back to memmove. */
void qvi_move_down_large(void *dst, const void *src, size_t n);

/* k planes <-> n interleaved groups of k elements (elsize 1, 2, 4 or 8
 * bytes; 2 <= k <= QV_PLANES_MAX): element c of group j sits at
 * groups + (j * k + c) * elsize, and at planes + c * plane_stride + j *
 * elsize. A transpose whose short side is k: the tiled transposes need both
 * sides at least a cache line long, and a strided element loop runs at a
 * fraction of memory speed. `stream`: the destination is large and not read
 * back soon; it is then written with non-temporal stores where it is
 * 16-byte aligned (planes: plane_stride too). Data may be unaligned. Both
 * bump QV_PATH_PLANES_AVX2 or QV_PATH_PLANES_PORTABLE once per call, and
 * QV_PATH_PLANES_AVX2_DIRECT when k = 3 32-bit elements stream straight from
 * registers (AVX2, destination 32-byte aligned, plane_stride too). */
#define QV_PLANES_MAX 8
void qvi_copy_deinterleave(void *planes, int64_t plane_stride, const void *groups, int64_t n,
                          int k, size_t elsize, bool stream);
void qvi_copy_interleave(void *groups, const void *planes, int64_t plane_stride, int64_t n, int k,
                        size_t elsize, bool stream);

/* Packs n NUL-terminated names into text (which has room for every name and
 * its NUL: sum of strlen + 1) and points ptrs[i] at each copy. */
void qvi_copy_names(const char *const *names, size_t n, const char **ptrs, char *text);

#endif
