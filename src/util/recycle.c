#include "util/recycle.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

#include "quiver/buffer.h"
#include "util/cpu.h"

enum { SLOTS = 64 }; /* a batch of up to 64 large buffers, kept whole */

struct QvRecycler {
  pthread_mutex_t lock;
  int refs;
  bool closed;
  size_t limit, held;
  int n;
  void *buf[SLOTS];
  size_t cap[SLOTS];
};

QvRecycler *qvi_recycler_new(void) {
  QvRecycler *r = calloc(1, sizeof *r);
  if (r == NULL) return NULL;
  if (pthread_mutex_init(&r->lock, NULL) != 0) {
    free(r);
    return NULL;
  }
  r->refs = 1;
  return r;
}

void qvi_recycler_retain(QvRecycler *r) {
  if (r == NULL) return;
  pthread_mutex_lock(&r->lock);
  r->refs++;
  pthread_mutex_unlock(&r->lock);
}

static void drop_all(QvRecycler *r) {
  for (int i = 0; i < r->n; i++) qv_free(r->buf[i]);
  r->n = 0;
  r->held = 0;
}

void qvi_recycler_release(QvRecycler *r) {
  if (r == NULL) return;
  pthread_mutex_lock(&r->lock);
  bool last = --r->refs == 0;
  pthread_mutex_unlock(&r->lock);
  if (!last) return;
  drop_all(r);
  pthread_mutex_destroy(&r->lock);
  free(r);
}

void qvi_recycler_close(QvRecycler *r) {
  if (r == NULL) return;
  pthread_mutex_lock(&r->lock);
  r->closed = true;
  drop_all(r);
  pthread_mutex_unlock(&r->lock);
}

void qvi_recycler_allow(QvRecycler *r, size_t limit) {
  if (r == NULL) return;
  pthread_mutex_lock(&r->lock);
  if (limit > r->limit) r->limit = limit;
  pthread_mutex_unlock(&r->lock);
}

void *qvi_recycler_take(QvRecycler *r, size_t size, size_t *capacity) {
  void *p = NULL;
  if (r != NULL && size >= QV_RECYCLE_MIN) {
    pthread_mutex_lock(&r->lock);
    int best = -1;
    for (int i = 0; i < r->n; i++)
      if (r->cap[i] >= size && r->cap[i] / 2 <= size && (best < 0 || r->cap[i] < r->cap[best]))
        best = i;
    if (best >= 0) {
      p = r->buf[best];
      *capacity = r->cap[best];
      r->held -= r->cap[best];
      r->buf[best] = r->buf[--r->n];
      r->cap[best] = r->cap[r->n];
    }
    pthread_mutex_unlock(&r->lock);
    if (p) qvi_path_hit(QV_PATH_RECYCLED_BUFFER);
  }
  return p;
}

void *qvi_recycler_get(QvRecycler *r, size_t size, size_t *capacity) {
  void *kept = qvi_recycler_take(r, size, capacity);
  if (kept != NULL) return kept;
  *capacity = size;
  return qv_aligned_alloc(size);
}

void qvi_recycler_put(QvRecycler *r, void *p, size_t capacity) {
  if (p == NULL) return;
  if (r != NULL && capacity >= QV_RECYCLE_MIN) {
    pthread_mutex_lock(&r->lock);
    bool keep = !r->closed && r->n < SLOTS && r->held <= r->limit && capacity <= r->limit - r->held;
    if (keep) {
      r->buf[r->n] = p;
      r->cap[r->n++] = capacity;
      r->held += capacity;
    }
    pthread_mutex_unlock(&r->lock);
    if (keep) return;
  }
  qv_free(p);
}
