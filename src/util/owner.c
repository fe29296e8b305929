#include <stdatomic.h>
#include <stdlib.h>

#include "quiver/buffer.h"

struct QvOwner {
  atomic_long refs;
  void (*release)(void *);
  void *private_data;
};

QvOwner *qv_owner_new(void (*release)(void *private_data), void *private_data) {
  QvOwner *o = malloc(sizeof *o);
  if (o == NULL) return NULL;
  atomic_init(&o->refs, 1);
  o->release = release;
  o->private_data = private_data;
  return o;
}

void qv_owner_retain(QvOwner *owner) {
  if (owner) atomic_fetch_add_explicit(&owner->refs, 1, memory_order_relaxed);
}

void qv_owner_free(QvOwner *owner) {
  if (owner == NULL) return;
  if (atomic_fetch_sub_explicit(&owner->refs, 1, memory_order_acq_rel) == 1) {
    if (owner->release) owner->release(owner->private_data);
    free(owner);
  }
}

void *qv_aligned_alloc(size_t size) {
  void *p = NULL;
  /* posix_memalign(0) may return NULL; always ask for at least one line */
  if (posix_memalign(&p, 64, size ? size : 64) != 0) return NULL;
  return p;
}

void qv_aligned_free(void *p) { free(p); }
