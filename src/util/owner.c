#define _DEFAULT_SOURCE /* madvise, MADV_HUGEPAGE */
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "quiver/buffer.h"
#include "util/cpu.h"

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

/* Large buffers (tensor copies, stacks, decoded bodies) start on a 2 MiB
 * boundary and ask for transparent huge pages, as NumPy's allocator does:
 * first touch then takes one fault per 2 MiB instead of one per 4 KiB,
 * which is most of the cost of filling fresh memory on a virtual machine.
 * The block is rounded up to whole huge pages, all of them advised, when
 * that adds at most a quarter: a tail left in 4 KiB pages (up to 2 MiB
 * less 4 KiB of each buffer) took ~500 faults per buffer, and a reader's
 * first batch (4-8 MB buffers) was mostly tails. Still plain
 * posix_memalign memory, so free() (qv_free) owns it. */
#define HUGE_ALIGN ((size_t)2 << 20)
#define HUGE_FROM HUGE_ALIGN

void *qv_aligned_alloc(size_t size) {
  void *p = NULL;
#ifdef MADV_HUGEPAGE
  if (size >= HUGE_FROM && size <= SIZE_MAX - HUGE_ALIGN) {
    size_t whole = (size + HUGE_ALIGN - 1) & ~(HUGE_ALIGN - 1);
    if (whole - size > size / 4) whole = size; /* the whole huge pages inside it only */
    if (posix_memalign(&p, HUGE_ALIGN, whole) != 0) return NULL;
    if (madvise(p, whole & ~(HUGE_ALIGN - 1), MADV_HUGEPAGE) == 0) /* advice: failure changes nothing */
      qvi_path_hit(QV_PATH_HUGE_ADVISED);
    return p;
  }
#endif
  /* posix_memalign(0) may return NULL; always ask for at least one line */
  if (posix_memalign(&p, 64, size ? size : 64) != 0) return NULL;
  return p;
}

void qv_free(void *p) { free(p); }
