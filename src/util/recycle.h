/* A cache of large aligned buffers (qv_aligned_alloc) handed back by their
 * users, for the next allocation of about the same size: a buffer whose
 * pages are already faulted in costs no first-touch fault and zeroing (a
 * reader decompressing batch after batch into fresh memory paid ~12% over
 * the codec for it). Shared by reference: its creator and every holder of
 * a buffer from it; thread-safe. Holds at most `limit` bytes, raised by
 * qvi_recycler_allow, and nothing once closed. */
#ifndef QUIVER_UTIL_RECYCLE_H
#define QUIVER_UTIL_RECYCLE_H

#include <stddef.h>

typedef struct QvRecycler QvRecycler;

/* Buffers under this size are not worth keeping: malloc serves them warm. */
#define QV_RECYCLE_MIN ((size_t)1 << 16)

QvRecycler *qvi_recycler_new(void); /* NULL: out of memory */
void qvi_recycler_retain(QvRecycler *r);
/* Drops a reference; the last one frees the cache and what it holds. */
void qvi_recycler_release(QvRecycler *r);
/* Frees what it holds and keeps nothing from now on (its creator is done
 * with it; buffers still out are freed when they come back). */
void qvi_recycler_close(QvRecycler *r);
/* Raises the most it may hold to `limit` bytes (never lowers it). */
void qvi_recycler_allow(QvRecycler *r, size_t limit);
/* A buffer of at least `size` bytes: a kept one of capacity in
 * [size, 2 * size] (the smallest), else a fresh one; *capacity is what to
 * hand back with qvi_recycler_put. NULL: out of memory. r may be NULL. */
void *qvi_recycler_get(QvRecycler *r, size_t size, size_t *capacity);
/* A kept buffer of capacity in [size, 2 * size] (the smallest), or NULL
 * when none is kept (nothing is allocated). r may be NULL. */
void *qvi_recycler_take(QvRecycler *r, size_t size, size_t *capacity);
/* Hands a buffer back: kept when there is room, freed otherwise. */
void qvi_recycler_put(QvRecycler *r, void *p, size_t capacity);

#endif
