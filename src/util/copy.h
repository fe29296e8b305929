/* Large copies into memory that is not read back soon (message bodies). */
#ifndef QUIVER_UTIL_COPY_H
#define QUIVER_UTIL_COPY_H

#include <stddef.h>

/* memcpy, with cache-bypassing (non-temporal) stores from 1 MiB on where the
 * CPU has them: they save the read-for-ownership of every destination line,
 * and glibc's memcpy ran 2-4x slower here on large copies whose source and
 * destination sit at different offsets within a page, the usual case for a
 * body placed after its metadata. */
void qv_copy_large(void *dst, const void *src, size_t n);

#endif
