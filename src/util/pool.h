/* A fixed pool of worker threads for data-parallel loops: compressing the
 * buffers of one record batch, inflating the members of one .npz.
 *
 * The workers are created once, in qvi_pool_new, and wait on a condition
 * variable between runs, so a reader or writer that owns a pool pays for
 * thread creation once, not per batch. qvi_pool_run is a parallel for: the
 * calling thread takes part, so a pool of `threads` uses threads - 1
 * workers, and a NULL pool or one of 1 thread runs everything on the
 * caller with no synchronisation at all.
 *
 * Tasks are claimed in index order from one atomic counter; callers that
 * want the largest tasks first sort their task list. A task reports
 * failure through ctx (a status slot per index, say): the pool knows
 * nothing of statuses, so the caller picks, deterministically, which
 * failure to report.
 *
 * Background groups: qvi_pool_submit queues a group of tasks and returns at
 * once; the workers run them while the caller does something else (reads
 * or serializes the next batch), and qvi_pool_wait blocks until the group's
 * tasks have all returned, running queued tasks on the caller meanwhile.
 * Groups run in submission order (a group's tasks before any later
 * group's), so a caller that keeps two groups in flight and waits for the
 * older one keeps every thread busy across the seam between them: while
 * the last task of group k runs on a worker, the waiting caller already
 * runs tasks of group k + 1. That is the use: a writer compressing batch
 * k + 1 while batch k's tail finishes and is written (rb_writer.c), a
 * reader decompressing ahead. The caller owns the group struct; it must
 * stay alive, and not be submitted again, until qvi_pool_wait returned.
 * Submit and wait from one thread per pool (the pool's owner): at most
 * `threads` tasks then run at once, which the codec runner's per-thread
 * contexts rely on. qvi_pool_run is a submit and a wait. */
#ifndef QUIVER_UTIL_POOL_H
#define QUIVER_UTIL_POOL_H

#include <stdbool.h>
#include <stddef.h>

#include "quiver/advanced.h"
#include "quiver/common.h"
#include "quiver/error.h"

/* More threads than this is a caller error. */
#define QV_POOL_MAX_THREADS 256

typedef struct QvPool QvPool;

/* A background group: caller-allocated, its fields are the pool's. */
typedef struct QvPoolGroup {
  void (*fn)(void *ctx, size_t i);
  void *ctx;
  size_t n;
  size_t claimed; /* tasks handed out (under the pool's lock) */
  size_t done;    /* tasks returned (under the pool's lock) */
  struct QvPoolGroup *next_queued;
} QvPoolGroup;

/* threads <= 1: no workers; qvi_pool_run runs the tasks on the caller.
 * The workers block every signal, so signals stay with the caller's
 * threads. QV_EARG over QV_POOL_MAX_THREADS, QV_ENOMEM when a thread
 * cannot be created. */
QvStatus qvi_pool_new(QvPool **out, int threads, QvError *error);
/* Joins the workers. NULL is a no-op. Not while a run is in progress or
 * a submitted group has not been waited for. */
void qvi_pool_free(QvPool *pool);
/* The threads a run uses, the caller's included; 1 for NULL. */
int qvi_pool_threads(const QvPool *pool);
/* Runs fn(ctx, i) for every i in [0, n) and returns when all have
 * returned. pool may be NULL. Runs on one pool from several threads are
 * serialised; fn must not run the same pool (it would wait for itself). */
void qvi_pool_run(QvPool *pool, size_t n, void (*fn)(void *ctx, size_t i), void *ctx);

/* Queues fn(ctx, i) for every i in [0, n) as `group` and returns; with no
 * workers (NULL pool, one thread) runs them all on the caller first. */
void qvi_pool_submit(QvPool *pool, QvPoolGroup *group, size_t n, void (*fn)(void *ctx, size_t i),
                    void *ctx);
/* Returns when every task of `group` has returned; until then the caller
 * runs queued tasks (this group's first, then later groups'). */
void qvi_pool_wait(QvPool *pool, QvPoolGroup *group);
/* Whether every task of `group` has returned (never blocks for long). */
bool qvi_pool_done(QvPool *pool, QvPoolGroup *group);

/* qv_cpu_count is public: quiver/common.h. */

#endif
