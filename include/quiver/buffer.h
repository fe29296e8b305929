/** @file
 * quiver: shared ownership of memory that zero-copy views point into.
 *
 * Follows the C Data Interface pattern: a release callback plus private
 * data. A QvOwner is reference-counted (thread-safe); the callback runs when
 * the last reference is dropped, e.g. to munmap a file or free a body. */
#ifndef QUIVER_BUFFER_H
#define QUIVER_BUFFER_H

#include "quiver/common.h"

#include <stddef.h>
#include <stdint.h>

#include "quiver/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/** An opaque reference-counted owner of a block of memory (a mapping, a
 * message body); created with qv_owner_new, released with qv_owner_free. */
typedef struct QvOwner QvOwner;

/** New owner with one reference; NULL on allocation failure (the callback
 * is then NOT called: the caller still owns `private_data`). */
QV_API QvOwner *qv_owner_new(void (*release)(void *private_data), void *private_data);
/** Adds a reference. NULL-safe. */
QV_API void qv_owner_retain(QvOwner *owner);
/** Drops the caller's reference; the last one runs the callback and frees
 * the owner. NULL-safe. */
QV_API void qv_owner_free(QvOwner *owner);

/** 64-byte-aligned allocation (Arrow's recommended alignment), freed with
 * qv_free (quiver/common.h). Blocks of 2 MiB and more are advised onto huge
 * pages. NULL when allocation fails. */
QV_API void *qv_aligned_alloc(size_t size);

#ifdef __cplusplus
}
#endif

#endif
