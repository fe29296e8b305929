/* See pool.h. One job at a time: qv_pool_run publishes (fn, ctx, n) under
 * the lock with a new generation number and resets the task counter only
 * when no worker is inside a job, so a worker that wakes late, still
 * holding the previous job, finds that job's counter exhausted and never
 * runs a task of the next one with the wrong function. */
#define _GNU_SOURCE /* sched_getaffinity, CPU_COUNT */
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
  pthread_mutex_t run_lock; /* one run at a time */
  pthread_mutex_t lock;     /* everything below */
  pthread_cond_t wake;      /* a new job, or stop */
  pthread_cond_t idle;      /* active dropped to zero */
  uint64_t generation;
  bool stop;
  int active; /* workers inside a job */
  void (*fn)(void *ctx, size_t i);
  void *ctx;
  size_t n;
  size_t next; /* atomic: the next unclaimed index */
};

typedef struct Job {
  void (*fn)(void *ctx, size_t i);
  void *ctx;
  size_t n;
} Job;

static void work(QvPool *pool, Job job) {
  for (;;) {
    size_t i = __atomic_fetch_add(&pool->next, 1, __ATOMIC_RELAXED);
    if (i >= job.n) return;
    job.fn(job.ctx, i);
  }
}

static void *worker_main(void *arg) {
  QvPool *pool = arg;
  /* Generation 0 is "no job yet": a worker scheduled only after the first
   * run was published must still take that run. */
  uint64_t seen = 0;
  pthread_mutex_lock(&pool->lock);
  for (;;) {
    while (!pool->stop && pool->generation == seen) pthread_cond_wait(&pool->wake, &pool->lock);
    if (pool->stop) break;
    seen = pool->generation;
    Job job = {pool->fn, pool->ctx, pool->n};
    pool->active++;
    pthread_mutex_unlock(&pool->lock);
    work(pool, job);
    pthread_mutex_lock(&pool->lock);
    if (--pool->active == 0) pthread_cond_broadcast(&pool->idle);
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

QvStatus qv_pool_new(QvPool **out, int threads, QvError *error) {
  if (!out) return qv_error_set(error, QV_EARG, "qv_pool_new: out is NULL");
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
  pthread_cond_init(&pool->idle, NULL);
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
    qv_pool_free(pool);
    return st;
  }
  *out = pool;
  return QV_OK;
}

void qv_pool_free(QvPool *pool) {
  if (!pool) return;
  stop_workers(pool);
  free(pool->workers);
  pthread_cond_destroy(&pool->idle);
  pthread_cond_destroy(&pool->wake);
  pthread_mutex_destroy(&pool->lock);
  pthread_mutex_destroy(&pool->run_lock);
  free(pool);
}

int qv_pool_threads(const QvPool *pool) { return pool ? pool->threads : 1; }

void qv_pool_run(QvPool *pool, size_t n, void (*fn)(void *ctx, size_t i), void *ctx) {
  if (n == 0) return;
  if (!pool || pool->started == 0 || n == 1) {
    for (size_t i = 0; i < n; i++) fn(ctx, i);
    return;
  }
  pthread_mutex_lock(&pool->run_lock);
  pthread_mutex_lock(&pool->lock);
  while (pool->active > 0) pthread_cond_wait(&pool->idle, &pool->lock);
  pool->fn = fn;
  pool->ctx = ctx;
  pool->n = n;
  __atomic_store_n(&pool->next, 0, __ATOMIC_RELAXED);
  pool->generation++;
  pthread_cond_broadcast(&pool->wake);
  pthread_mutex_unlock(&pool->lock);

  work(pool, (Job){fn, ctx, n});

  /* Every task is claimed; wait for the workers still running theirs. A
   * worker that claimed one incremented `active` before claiming. */
  pthread_mutex_lock(&pool->lock);
  while (pool->active > 0) pthread_cond_wait(&pool->idle, &pool->lock);
  pthread_mutex_unlock(&pool->lock);
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
