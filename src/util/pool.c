/* See pool.h. The pool is a FIFO queue of groups with unclaimed tasks,
 * under one lock: a task is claimed (and its group dequeued once all of
 * its tasks are claimed) and finished under the lock, so nothing runs a
 * task of a group it did not take from the queue. The tasks are coarse
 * (a buffer to compress, an archive member to inflate), so two uncontended
 * lock round trips per task cost nothing measurable. qvi_pool_run is a
 * group on the caller's stack, submitted and waited for. */
#define _GNU_SOURCE /* sched_getaffinity, CPU_COUNT */
#include "quiver/advanced.h"
#include "util/pool.h"

#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct QvPool {
  int threads; /* the caller's included */
  int started; /* workers created */
  pthread_t *workers;
  pthread_mutex_t run_lock; /* one qvi_pool_run at a time */
  pthread_mutex_t lock;     /* everything below and every queued group's counters */
  pthread_cond_t wake;      /* a group was queued, or stop */
  pthread_cond_t finished;  /* a group's last task returned */
  bool stop;
  QvPoolGroup *head, *tail; /* groups with unclaimed tasks, oldest first */
};

/* Under the lock, with a group queued: the next task. */
static QvPoolGroup *claim(QvPool *pool, size_t *index) {
  QvPoolGroup *g = pool->head;
  *index = g->claimed++;
  if (g->claimed == g->n) {
    pool->head = g->next_queued;
    if (pool->head == NULL) pool->tail = NULL;
  }
  return g;
}

/* Runs one claimed task outside the lock; returns with the lock held. The
 * group may be freed by its waiter as soon as the lock is released after
 * its last task, so it is not touched after that. */
static void run_claimed(QvPool *pool, QvPoolGroup *g, size_t i) {
  pthread_mutex_unlock(&pool->lock);
  g->fn(g->ctx, i);
  pthread_mutex_lock(&pool->lock);
  if (++g->done == g->n) pthread_cond_broadcast(&pool->finished);
}

static void *worker_main(void *arg) {
  QvPool *pool = arg;
  pthread_mutex_lock(&pool->lock);
  for (;;) {
    while (!pool->stop && pool->head == NULL) pthread_cond_wait(&pool->wake, &pool->lock);
    if (pool->stop) break;
    size_t i;
    QvPoolGroup *g = claim(pool, &i);
    run_claimed(pool, g, i);
  }
  pthread_mutex_unlock(&pool->lock);
  return NULL;
}

static void stop_workers(QvPool *pool) {
  pthread_mutex_lock(&pool->lock);
  pool->stop = true;
  pthread_cond_broadcast(&pool->wake);
  pthread_mutex_unlock(&pool->lock);
  for (int i = 0; i < pool->started; i++) pthread_join(pool->workers[i], NULL);
  pool->started = 0;
}

QvStatus qvi_pool_new(QvPool **out, int threads, QvError *error) {
  if (!out) return qv_error_set(error, QV_EARG, "qvi_pool_new: out is NULL");
  *out = NULL;
  if (threads > QV_POOL_MAX_THREADS)
    return qv_error_set(error, QV_EARG, "thread pool: %d threads (at most %d)", threads,
                        QV_POOL_MAX_THREADS);
  if (threads < 1) threads = 1;
  QvPool *pool = calloc(1, sizeof *pool);
  if (!pool) return qv_error_set(error, QV_ENOMEM, "thread pool: out of memory");
  pool->threads = threads;
  pthread_mutex_init(&pool->run_lock, NULL);
  pthread_mutex_init(&pool->lock, NULL);
  pthread_cond_init(&pool->wake, NULL);
  pthread_cond_init(&pool->finished, NULL);
  QvStatus st = QV_OK;
  if (threads > 1) {
    pool->workers = calloc((size_t)threads - 1, sizeof *pool->workers);
    if (!pool->workers) {
      st = qv_error_set(error, QV_ENOMEM, "thread pool: out of memory");
    } else {
      /* Workers inherit the creator's signal mask: block everything while
       * creating them, so a signal meant for the program (SIGINT, SIGXFSZ)
       * is never delivered to a library thread. */
      sigset_t all, old;
      sigfillset(&all);
      pthread_sigmask(SIG_SETMASK, &all, &old);
      for (int i = 0; i < threads - 1; i++) {
        int rc = pthread_create(&pool->workers[i], NULL, worker_main, pool);
        if (rc != 0) {
          st = qv_error_set(error, QV_ENOMEM, "thread pool: cannot create thread %d of %d: %s", i + 2,
                            threads, strerror(rc));
          break;
        }
        pool->started++;
      }
      pthread_sigmask(SIG_SETMASK, &old, NULL);
    }
  }
  if (st != QV_OK) {
    qvi_pool_free(pool);
    return st;
  }
  *out = pool;
  return QV_OK;
}

void qvi_pool_free(QvPool *pool) {
  if (!pool) return;
  stop_workers(pool);
  free(pool->workers);
  pthread_cond_destroy(&pool->finished);
  pthread_cond_destroy(&pool->wake);
  pthread_mutex_destroy(&pool->lock);
  pthread_mutex_destroy(&pool->run_lock);
  free(pool);
}

int qvi_pool_threads(const QvPool *pool) { return pool ? pool->threads : 1; }

void qvi_pool_submit(QvPool *pool, QvPoolGroup *g, size_t n, void (*fn)(void *ctx, size_t i),
                    void *ctx) {
  memset(g, 0, sizeof *g);
  g->fn = fn;
  g->ctx = ctx;
  g->n = n;
  if (n == 0) return;
  if (!pool || pool->started == 0) { /* no workers: now, on the caller */
    for (size_t i = 0; i < n; i++) fn(ctx, i);
    g->claimed = g->done = n;
    return;
  }
  pthread_mutex_lock(&pool->lock);
  if (pool->tail)
    pool->tail->next_queued = g;
  else
    pool->head = g;
  pool->tail = g;
  if (n == 1)
    pthread_cond_signal(&pool->wake);
  else
    pthread_cond_broadcast(&pool->wake);
  pthread_mutex_unlock(&pool->lock);
}

void qvi_pool_wait(QvPool *pool, QvPoolGroup *g) {
  if (!pool || pool->started == 0 || g->n == 0) return; /* ran in qvi_pool_submit */
  pthread_mutex_lock(&pool->lock);
  while (g->done < g->n) {
    if (pool->head) { /* help: g's own tasks come first in the queue */
      size_t i;
      QvPoolGroup *t = claim(pool, &i);
      run_claimed(pool, t, i);
    } else {
      pthread_cond_wait(&pool->finished, &pool->lock);
    }
  }
  pthread_mutex_unlock(&pool->lock);
}

bool qvi_pool_done(QvPool *pool, QvPoolGroup *g) {
  if (!pool || pool->started == 0 || g->n == 0) return true;
  pthread_mutex_lock(&pool->lock);
  bool done = g->done == g->n;
  pthread_mutex_unlock(&pool->lock);
  return done;
}

void qvi_pool_run(QvPool *pool, size_t n, void (*fn)(void *ctx, size_t i), void *ctx) {
  if (n == 0) return;
  if (!pool || pool->started == 0 || n == 1) {
    for (size_t i = 0; i < n; i++) fn(ctx, i);
    return;
  }
  QvPoolGroup g;
  pthread_mutex_lock(&pool->run_lock);
  qvi_pool_submit(pool, &g, n, fn, ctx);
  qvi_pool_wait(pool, &g);
  pthread_mutex_unlock(&pool->run_lock);
}

int qv_cpu_count(void) {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0) {
    int n = CPU_COUNT(&set);
    if (n > 0) return n > QV_POOL_MAX_THREADS ? QV_POOL_MAX_THREADS : n;
  }
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? (int)(n > QV_POOL_MAX_THREADS ? QV_POOL_MAX_THREADS : n) : 1;
}
