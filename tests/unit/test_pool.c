/* The thread pool (src/util/pool.h): every index runs exactly once per
 * run, tasks really run at the same time on a pool of two, runs from two
 * threads on one pool are serialised, many short runs in a row (the
 * late-waking worker case) never mix jobs, and a NULL or one-thread pool
 * runs on the caller. Background groups: submit returns while the workers
 * run the group, groups kept two in flight (the writer's pipeline) run
 * every index once with their own function, and a caller waiting for one
 * group runs the next group's tasks meanwhile. */
#include "quiver/advanced.h"
#include "test_util.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util/pool.h"

typedef struct Counts {
  size_t n;
  uint32_t *hits;
  pthread_t *who;
} Counts;

static void count_task(void *ctx, size_t i) {
  Counts *c = ctx;
  __atomic_fetch_add(&c->hits[i], 1, __ATOMIC_RELAXED);
  if (c->who) c->who[i] = pthread_self();
}

static void check_once(QvPool *pool, size_t n) {
  Counts c = {n, calloc(n ? n : 1, sizeof(uint32_t)), NULL};
  assert_non_null(c.hits);
  qvi_pool_run(pool, n, count_task, &c);
  for (size_t i = 0; i < n; i++) assert_int_equal(c.hits[i], 1);
  free(c.hits);
}

static void test_every_index_once(void **state) {
  (void)state;
  for (int threads = 0; threads <= 4; threads++) {
    QvPool *pool = NULL;
    QvError err = {0};
    assert_int_equal(qvi_pool_new(&pool, threads, &err), QV_OK);
    assert_int_equal(qvi_pool_threads(pool), threads < 1 ? 1 : threads);
    size_t sizes[] = {0, 1, 2, 3, 7, 64, 1000, 100000};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) check_once(pool, sizes[k]);
    qvi_pool_free(pool);
  }
  check_once(NULL, 100);
  assert_int_equal(qvi_pool_threads(NULL), 1);
  qvi_pool_free(NULL);
}

/* One thread: everything on the caller. */
static void test_one_thread_runs_on_caller(void **state) {
  (void)state;
  QvPool *pool = NULL;
  assert_int_equal(qvi_pool_new(&pool, 1, NULL), QV_OK);
  enum { N = 50 };
  uint32_t hits[N] = {0};
  pthread_t who[N];
  Counts c = {N, hits, who};
  qvi_pool_run(pool, N, count_task, &c);
  for (int i = 0; i < N; i++) assert_true(pthread_equal(who[i], pthread_self()));
  qvi_pool_free(pool);
}

/* Tasks 0 and 1 each wait for the other to have started: this finishes
 * only when two threads run tasks at once (a serial pool would wait out
 * the deadline and fail). */
typedef struct Rendezvous {
  int arrived[2];
  int met[2];
} Rendezvous;

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void rendezvous_task(void *ctx, size_t i) {
  Rendezvous *r = ctx;
  __atomic_store_n(&r->arrived[i], 1, __ATOMIC_RELEASE);
  double deadline = now_s() + 20.0;
  while (!__atomic_load_n(&r->arrived[1 - i], __ATOMIC_ACQUIRE)) {
    if (now_s() > deadline) return;
    sched_yield();
  }
  r->met[i] = 1;
}

static void test_tasks_run_concurrently(void **state) {
  (void)state;
  QvPool *pool = NULL;
  assert_int_equal(qvi_pool_new(&pool, 2, NULL), QV_OK);
  Rendezvous r = {{0, 0}, {0, 0}};
  qvi_pool_run(pool, 2, rendezvous_task, &r);
  assert_true(r.met[0] && r.met[1]);
  qvi_pool_free(pool);
}

/* Many tiny runs back to back, each with its own context: a worker that
 * wakes late for run k must not run run k+1's indices with run k's
 * function or context. Each run writes its own tag; any cross-run task
 * would leave a wrong tag or a double hit. */
typedef struct Tagged {
  uint32_t tag;
  uint32_t slots[8];
} Tagged;

static void tag_task(void *ctx, size_t i) {
  Tagged *t = ctx;
  __atomic_fetch_add(&t->slots[i], t->tag, __ATOMIC_RELAXED);
}

static void test_back_to_back_runs(void **state) {
  (void)state;
  QvPool *pool = NULL;
  assert_int_equal(qvi_pool_new(&pool, 3, NULL), QV_OK);
  for (uint32_t k = 1; k <= 20000; k++) {
    Tagged t;
    memset(&t, 0, sizeof t);
    t.tag = k;
    size_t n = 1 + k % 8;
    qvi_pool_run(pool, n, tag_task, &t);
    for (size_t i = 0; i < 8; i++) assert_int_equal(t.slots[i], i < n ? k : 0);
  }
  qvi_pool_free(pool);
}

/* Two threads run jobs on one pool at once: both complete, each index of
 * each job exactly once. */
typedef struct Runner {
  QvPool *pool;
  int ok;
} Runner;

static void *runner_main(void *arg) {
  Runner *r = arg;
  r->ok = 1;
  for (int k = 0; k < 500; k++) {
    enum { N = 37 };
    uint32_t hits[N] = {0};
    Counts c = {N, hits, NULL};
    qvi_pool_run(r->pool, N, count_task, &c);
    for (int i = 0; i < N; i++)
      if (hits[i] != 1) r->ok = 0;
  }
  return NULL;
}

static void test_runs_from_two_threads(void **state) {
  (void)state;
  QvPool *pool = NULL;
  assert_int_equal(qvi_pool_new(&pool, 2, NULL), QV_OK);
  Runner a = {pool, 0}, b = {pool, 0};
  pthread_t ta, tb;
  assert_int_equal(pthread_create(&ta, NULL, runner_main, &a), 0);
  assert_int_equal(pthread_create(&tb, NULL, runner_main, &b), 0);
  pthread_join(ta, NULL);
  pthread_join(tb, NULL);
  assert_true(a.ok && b.ok);
  qvi_pool_free(pool);
}

/* Submit returns at once: the group's tasks wait for a flag the caller
 * sets only after qvi_pool_submit returned, so a submit that ran them
 * itself would never return (the deadline then fails the test). */
typedef struct Gate {
  int open;
  int ran[4];
  int timed_out;
} Gate;

static void gated_task(void *ctx, size_t i) {
  Gate *g = ctx;
  double deadline = now_s() + 20.0;
  while (!__atomic_load_n(&g->open, __ATOMIC_ACQUIRE)) {
    if (now_s() > deadline) {
      __atomic_store_n(&g->timed_out, 1, __ATOMIC_RELAXED);
      break;
    }
    sched_yield();
  }
  __atomic_fetch_add(&g->ran[i], 1, __ATOMIC_RELAXED);
}

static void test_submit_returns_before_tasks(void **state) {
  (void)state;
  QvPool *pool = NULL;
  assert_int_equal(qvi_pool_new(&pool, 2, NULL), QV_OK);
  Gate gate;
  memset(&gate, 0, sizeof gate);
  QvPoolGroup g;
  qvi_pool_submit(pool, &g, 1, gated_task, &gate);
  /* the worker holds the task: not done until the gate opens */
  assert_false(qvi_pool_done(pool, &g));
  __atomic_store_n(&gate.open, 1, __ATOMIC_RELEASE);
  qvi_pool_wait(pool, &g);
  assert_true(qvi_pool_done(pool, &g));
  assert_int_equal(gate.ran[0], 1);
  assert_int_equal(gate.timed_out, 0);
  qvi_pool_free(pool);
}

/* Group A's one task waits for group B's task to have run; B is queued
 * after A. Whoever takes A, the other thread must run B: the worker, or
 * the caller inside qvi_pool_wait(A), which helps with later groups. */
typedef struct Chain {
  int b_ran;
  int a_saw_b;
} Chain;

static void chain_a(void *ctx, size_t i) {
  (void)i;
  Chain *c = ctx;
  double deadline = now_s() + 20.0;
  while (!__atomic_load_n(&c->b_ran, __ATOMIC_ACQUIRE) && now_s() < deadline) sched_yield();
  c->a_saw_b = __atomic_load_n(&c->b_ran, __ATOMIC_ACQUIRE);
}

static void chain_b(void *ctx, size_t i) {
  (void)i;
  __atomic_store_n(&((Chain *)ctx)->b_ran, 1, __ATOMIC_RELEASE);
}

static void test_wait_helps_later_groups(void **state) {
  (void)state;
  QvPool *pool = NULL;
  assert_int_equal(qvi_pool_new(&pool, 2, NULL), QV_OK);
  for (int k = 0; k < 200; k++) {
    Chain c = {0, 0};
    QvPoolGroup a, b;
    qvi_pool_submit(pool, &a, 1, chain_a, &c);
    qvi_pool_submit(pool, &b, 1, chain_b, &c);
    qvi_pool_wait(pool, &a);
    assert_true(c.a_saw_b);
    qvi_pool_wait(pool, &b);
  }
  qvi_pool_free(pool);
}

/* The writer's pattern: group k + 1 submitted before group k is waited
 * for, thousands of times, each group with its own context and size. */
static void test_two_groups_in_flight(void **state) {
  (void)state;
  for (int threads = 1; threads <= 4; threads++) {
    QvPool *pool = NULL;
    assert_int_equal(qvi_pool_new(&pool, threads, NULL), QV_OK);
    enum { ROUNDS = 5000 };
    Tagged *t = calloc(ROUNDS, sizeof *t);
    QvPoolGroup *g = calloc(ROUNDS, sizeof *g);
    assert_non_null(t);
    assert_non_null(g);
    for (uint32_t k = 0; k < ROUNDS; k++) {
      t[k].tag = k + 1;
      qvi_pool_submit(pool, &g[k], k % 9, tag_task, &t[k]); /* 0..8 tasks, 0 included */
      if (k > 0) qvi_pool_wait(pool, &g[k - 1]);
    }
    qvi_pool_wait(pool, &g[ROUNDS - 1]);
    for (uint32_t k = 0; k < ROUNDS; k++)
      for (size_t i = 0; i < 8; i++) assert_int_equal(t[k].slots[i], i < k % 9 ? k + 1 : 0);
    free(t);
    free(g);
    qvi_pool_free(pool);
  }
  /* no pool: submit runs the group */
  Tagged one;
  memset(&one, 0, sizeof one);
  one.tag = 7;
  QvPoolGroup g;
  qvi_pool_submit(NULL, &g, 3, tag_task, &one);
  assert_true(qvi_pool_done(NULL, &g));
  assert_int_equal(one.slots[2], 7);
  qvi_pool_wait(NULL, &g);
}

static void test_limits(void **state) {
  (void)state;
  QvPool *pool = (QvPool *)1;
  QvError err = {0};
  assert_int_equal(qvi_pool_new(&pool, QV_POOL_MAX_THREADS + 1, &err), QV_EARG);
  assert_null(pool);
  assert_non_null(strstr(err.message, "threads"));
  assert_int_equal(qvi_pool_new(NULL, 2, &err), QV_EARG);
  int cpus = qv_cpu_count();
  assert_true(cpus >= 1 && cpus <= QV_POOL_MAX_THREADS);
}

int main(int argc, char **argv) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_every_index_once),      cmocka_unit_test(test_one_thread_runs_on_caller),
      cmocka_unit_test(test_tasks_run_concurrently), cmocka_unit_test(test_back_to_back_runs),
      cmocka_unit_test(test_runs_from_two_threads), cmocka_unit_test(test_limits),
      cmocka_unit_test(test_submit_returns_before_tasks),
      cmocka_unit_test(test_wait_helps_later_groups), cmocka_unit_test(test_two_groups_in_flight),
  };
  const QvTestGroup groups[] = {QV_TEST_GROUP("", tests, NULL, NULL)};
  return qv_test_run_groups(argc, argv, groups, sizeof groups / sizeof groups[0]);
}
