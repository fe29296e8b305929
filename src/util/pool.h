/* A fixed pool of worker threads for data-parallel loops: compressing the
 * buffers of one record batch, inflating the members of one .npz.
 *
 * The workers are created once, in qv_pool_new, and wait on a condition
 * variable between runs, so a reader or writer that owns a pool pays for
 * thread creation once, not per batch. qv_pool_run is a parallel for: the
 * calling thread takes part, so a pool of `threads` uses threads - 1
 * workers, and a NULL pool or one of 1 thread runs everything on the
 * caller with no synchronisation at all.
 *
 * Tasks are claimed in index order from one atomic counter; callers that
 * want the largest tasks first sort their task list. A task reports
 * failure through ctx (a status slot per index, say): the pool knows
 * nothing of statuses, so the caller picks, deterministically, which
 * failure to report. */
#ifndef QUIVER_UTIL_POOL_H
#define QUIVER_UTIL_POOL_H

#include <stddef.h>

#include "quiver/common.h"
#include "quiver/error.h"

/* More threads than this is a caller error. */
#define QV_POOL_MAX_THREADS 256

typedef struct QvPool QvPool;

/* threads <= 1: no workers; qv_pool_run runs the tasks on the caller.
 * The workers block every signal, so signals stay with the caller's
 * threads. QV_EARG over QV_POOL_MAX_THREADS, QV_ENOMEM when a thread
 * cannot be created. */
QvStatus qv_pool_new(QvPool **out, int threads, QvError *error);
/* Joins the workers. NULL is a no-op. Not while a run is in progress. */
void qv_pool_free(QvPool *pool);
/* The threads a run uses, the caller's included; 1 for NULL. */
int qv_pool_threads(const QvPool *pool);
/* Runs fn(ctx, i) for every i in [0, n) and returns when all have
 * returned. pool may be NULL. Runs on one pool from several threads are
 * serialised; fn must not run the same pool (it would wait for itself). */
void qv_pool_run(QvPool *pool, size_t n, void (*fn)(void *ctx, size_t i), void *ctx);

/* qv_cpu_count is public: quiver/common.h. */

#endif
