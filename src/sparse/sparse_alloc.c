/* Buffers of the sparse code: 64-byte aligned (Arrow's recommendation),
 * with a small header in front recording how they were obtained. Large
 * ones (>= 2 MiB) are anonymous mappings advised to use transparent huge
 * pages: first-touch page faults otherwise dominate conversions that
 * produce tens of megabytes (measured ~6 us per 4 KiB page in a VM, more
 * than the time to scan the dense input), and growth is an mremap instead
 * of a copy. Elsewhere, or when mapping fails, posix_memalign is used.
 *
 * Workspaces (QvSparseWorkspace): while a conversion runs with one, every
 * buffer it obtains is tagged with the workspace, and freeing a tagged
 * buffer puts it in the workspace's cache instead of giving it back to the
 * system, so the next conversion writes to pages that are already there
 * (no fault, no kernel zeroing). Tagged buffers never shrink (a shrink
 * only records the size), so a buffer reserved for the worst case serves
 * the next conversion's worst case too. The tag, not the thread, decides
 * where a buffer goes back, so a result released on any thread, or after
 * qv_sparse_workspace_free, is handled right. */
#if defined(__linux__)
#define _GNU_SOURCE /* MAP_ANONYMOUS, MADV_HUGEPAGE, mremap */
#include <sys/mman.h>
#endif
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "sparse/sparse_internal.h"
#include "util/cpu.h"

/* Under AddressSanitizer, heap blocks only (ASan does not watch mappings),
 * with the header and every byte past the requested size poisoned, so the
 * bounds stay exact for recycled blocks too. */
#if defined(__SANITIZE_ADDRESS__)
#define SP_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SP_ASAN 1
#endif
#endif
#if defined(SP_ASAN)
#include <sanitizer/asan_interface.h>
#define SP_POISON(p, n) ASAN_POISON_MEMORY_REGION((p), (n))
#define SP_UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION((p), (n))
#else
#define SP_POISON(p, n) ((void)(p), (void)(n))
#define SP_UNPOISON(p, n) ((void)(p), (void)(n))
#endif
#if defined(__linux__) && !defined(SP_ASAN)
#define SP_MAP 1
#endif

enum { SP_HDR = 64, SP_KIND_HEAP = 1, SP_KIND_MAP = 2, SP_WS_SLOTS = 48 };
#define SP_BIG ((size_t)2 << 20)

typedef struct SpHeader {
  size_t total; /* bytes from the header start (mapping length for SP_KIND_MAP) */
  size_t used;  /* bytes asked for (the capacity is total - SP_HDR) */
  QvSparseWorkspace *ws; /* where the block goes back when freed; NULL: the system */
  int kind;
  bool untouched; /* a mapping none of whose data pages was handed out before */
} SpHeader;

struct QvSparseWorkspace {
  pthread_mutex_t lock;
  bool freed;          /* qv_sparse_workspace_free was called */
  int64_t outstanding; /* tagged blocks handed out and not yet freed */
  int n_cached;
  void *cached[SP_WS_SLOTS]; /* data pointers of free blocks */
  int64_t reused, allocated;
};

/* The workspace of the conversion running on this thread (set around a
 * conversion by qvi_sp_ws_enter), so that the many allocation sites need
 * no extra parameter. */
static _Thread_local QvSparseWorkspace *sp_ws_current;

QvSparseWorkspace *qvi_sp_ws_enter(QvSparseWorkspace *ws) {
  QvSparseWorkspace *prev = sp_ws_current;
  sp_ws_current = ws;
  return prev;
}
void qvi_sp_ws_leave(QvSparseWorkspace *prev) { sp_ws_current = prev; }

/* Likewise the thread pool of the conversion running on this thread. */
static _Thread_local QvPool *sp_pool_current;

QvPool *qvi_sp_pool_enter(QvPool *pool) {
  QvPool *prev = sp_pool_current;
  sp_pool_current = pool;
  return prev;
}
void qvi_sp_pool_leave(QvPool *prev) { sp_pool_current = prev; }
QvPool *qvi_sp_pool_current(void) { return sp_pool_current; }

static SpHeader *hdr_open(void *p) {
  SpHeader *h = (SpHeader *)(void *)((uint8_t *)p - SP_HDR);
  SP_UNPOISON(h, SP_HDR);
  return h;
}
static void hdr_close(SpHeader *h) { SP_POISON(h, SP_HDR); }
static size_t cap_of(const SpHeader *h) { return h->total - SP_HDR; }

/* n * size bytes, at least 1 so that no allocation returns NULL for an
 * empty buffer; false when n is negative or the product overflows (or
 * leaves no room for the header and alignment). */
static bool size_ok(int64_t n, size_t size, size_t *bytes) {
  size_t count;
  if (!qvi_i64_to_size(n, &count) || !qvi_mul_size(count, size, bytes)) return false;
  if (*bytes == 0) *bytes = 1;
  return *bytes <= SIZE_MAX - SP_HDR - 2 * SP_BIG;
}

#if defined(SP_MAP)
static size_t big_round(size_t n) { return (n + SP_BIG - 1) & ~(SP_BIG - 1); }

/* A mapping of a multiple of 2 MiB starting on a 2 MiB boundary, so that
 * transparent huge pages can back all of it. `reserve`: address space only
 * (no commit charge); pages appear when first written. */
static SpHeader *map_block(size_t total, bool reserve) {
  size_t len = big_round(total), span = len + SP_BIG;
  if (len < total || span < len) return NULL;
  int flags = MAP_PRIVATE | MAP_ANONYMOUS | (reserve ? MAP_NORESERVE : 0);
  uint8_t *m = mmap(NULL, span, PROT_READ | PROT_WRITE, flags, -1, 0);
  if (m == MAP_FAILED) return NULL;
  uint8_t *a = (uint8_t *)(((uintptr_t)m + SP_BIG - 1) & ~(uintptr_t)(SP_BIG - 1));
  size_t head = (size_t)(a - m);
  if (head > 0) munmap(m, head);
  if (span - head - len > 0) munmap(a + len, span - head - len);
  if (madvise(a, len, MADV_HUGEPAGE) == 0) qvi_path_hit(QV_PATH_HUGE_ADVISED); /* failure is harmless */
  SpHeader *h = (SpHeader *)(void *)a;
  h->total = len;
  h->kind = SP_KIND_MAP;
  h->untouched = true;
  return h;
}
#endif

/* A new block of `bytes` usable bytes from the system (header filled,
 * left open). */
static SpHeader *block_sys(size_t bytes, bool reserve) {
  size_t total = bytes + SP_HDR;
#if defined(SP_MAP)
  if (total >= SP_BIG) {
    SpHeader *h = map_block(total, reserve);
    if (h != NULL) return h;
  }
#endif
  (void)reserve;
  void *b = NULL;
  if (posix_memalign(&b, SP_HDR, total) != 0) return NULL;
  SpHeader *h = b;
  h->total = total;
  h->kind = SP_KIND_HEAP;
  h->untouched = false;
  return h;
}

static void block_release(SpHeader *h) {
#if defined(SP_MAP)
  if (h->kind == SP_KIND_MAP) {
    munmap(h, h->total);
    return;
  }
#endif
  SP_UNPOISON(h, h->total);
  free(h);
}

static void ws_destroy(QvSparseWorkspace *ws) {
  pthread_mutex_destroy(&ws->lock);
  free(ws);
}

/* Best fit among the cached blocks: the smallest that holds `bytes`, and
 * not one so much larger that a small request would take a big buffer
 * from the next large one. Called with the lock held. */
static SpHeader *ws_take(QvSparseWorkspace *ws, size_t bytes) {
  int best = -1;
  size_t best_cap = 0;
  for (int i = 0; i < ws->n_cached; i++) {
    SpHeader *h = hdr_open(ws->cached[i]);
    size_t cap = cap_of(h);
    hdr_close(h);
    if (cap < bytes || (cap - bytes) / 8 > bytes + 65536) continue;
    if (best < 0 || cap < best_cap) {
      best = i;
      best_cap = cap;
    }
  }
  if (best < 0) return NULL;
  SpHeader *h = hdr_open(ws->cached[best]);
  h->untouched = false;
  ws->cached[best] = ws->cached[--ws->n_cached];
  return h;
}

/* A block of `bytes` usable bytes: from the current workspace's cache when
 * one fits (*fresh false), else new. Returns the data pointer, header set
 * and closed, the bytes past `bytes` poisoned. */
static void *block_get(size_t bytes, bool reserve, bool *fresh) {
  QvSparseWorkspace *ws = sp_ws_current;
  SpHeader *h = NULL;
  *fresh = true;
  if (ws != NULL) {
    pthread_mutex_lock(&ws->lock);
    h = ws_take(ws, bytes);
    if (h != NULL) {
      ws->reused++;
      ws->outstanding++;
      *fresh = false;
    }
    pthread_mutex_unlock(&ws->lock);
  }
  if (h == NULL) {
    h = block_sys(bytes, reserve);
    if (h == NULL) return NULL;
    h->ws = ws;
    if (ws != NULL) {
      pthread_mutex_lock(&ws->lock);
      ws->allocated++;
      ws->outstanding++;
      pthread_mutex_unlock(&ws->lock);
    }
  }
  h->used = bytes;
  uint8_t *p = (uint8_t *)h + SP_HDR;
  SP_UNPOISON(p, bytes);
  SP_POISON(p + bytes, cap_of(h) - bytes);
  hdr_close(h);
  return p;
}

/* Puts a tagged block back in its workspace; the smallest block is let go
 * when the cache is full. Releases the workspace itself after its last
 * block once qv_sparse_workspace_free was called. */
static void ws_put(SpHeader *h) {
  QvSparseWorkspace *ws = h->ws;
  SpHeader *drop = h;
  bool destroy = false;
  pthread_mutex_lock(&ws->lock);
  ws->outstanding--;
  if (ws->freed) {
    destroy = ws->outstanding == 0;
  } else {
    uint8_t *p = (uint8_t *)h + SP_HDR;
    size_t cap = cap_of(h);
    if (ws->n_cached < SP_WS_SLOTS) {
      ws->cached[ws->n_cached++] = p;
      drop = NULL;
    } else {
      int small = 0;
      size_t small_cap = SIZE_MAX;
      for (int i = 0; i < ws->n_cached; i++) {
        SpHeader *c = hdr_open(ws->cached[i]);
        if (cap_of(c) < small_cap) {
          small = i;
          small_cap = cap_of(c);
        }
        hdr_close(c);
      }
      if (small_cap < cap) {
        drop = hdr_open(ws->cached[small]);
        ws->cached[small] = p;
      }
    }
    if (drop != h) {
      size_t total = h->total;
      SP_POISON(h, total); /* a use after the release is a report under ASan */
    }
  }
  pthread_mutex_unlock(&ws->lock);
  if (drop != NULL) block_release(drop);
  if (destroy) ws_destroy(ws);
}

void *qvi_sp_malloc(int64_t n, size_t size) {
  size_t bytes;
  bool fresh;
  return size_ok(n, size, &bytes) ? block_get(bytes, false, &fresh) : NULL;
}

void *qvi_sp_calloc(int64_t n, size_t size) {
  size_t bytes;
  if (!size_ok(n, size, &bytes)) return NULL;
  bool fresh;
  void *p = block_get(bytes, false, &fresh);
  if (p == NULL) return NULL;
  SpHeader *h = hdr_open(p);
  bool zeroed = fresh && h->kind == SP_KIND_MAP; /* fresh mappings are zero-filled by the kernel */
  hdr_close(h);
  if (!zeroed) memset(p, 0, bytes);
  return p;
}

void *qvi_sp_reserve(int64_t n, size_t size) {
  size_t bytes;
  if (!size_ok(n, size, &bytes)) return NULL;
#if defined(SP_MAP)
  if (bytes + SP_HDR >= SP_BIG) {
    bool fresh;
    return block_get(bytes, true, &fresh);
  }
#endif
  return NULL;
}

#if defined(SP_MAP) && !defined(MADV_POPULATE_WRITE)
#define MADV_POPULATE_WRITE 23 /* Linux 5.14; older kernels answer EINVAL */
#endif

/* Faults in bytes [off, off + len) of a fresh mapped block (a heap block
 * or one served again from a workspace: no-op, false). Threads that first-write the same huge page each allocate and
 * zero 2 MiB and all but one throw theirs away, so threads filling one
 * fresh output populate disjoint ranges first (their ends on 2 MiB
 * boundaries, see qvi_sp_populate_parts). The block stays "untouched" for
 * the other parts; a workspace serving it again clears that. */
bool qvi_sp_populate(void *p, size_t off, size_t len) {
#if defined(SP_MAP)
  static int unsupported; /* EINVAL once: an older kernel */
  if (p == NULL || len == 0 || __atomic_load_n(&unsupported, __ATOMIC_RELAXED)) return false;
  SpHeader *h = hdr_open(p);
  bool fresh = h->kind == SP_KIND_MAP && h->untouched;
  size_t total = h->total;
  hdr_close(h);
  if (!fresh) return false; /* a heap block, or pages a conversion before wrote */
  uintptr_t base = (uintptr_t)h, a = ((uintptr_t)p + off) & ~(uintptr_t)4095;
  uintptr_t e = ((uintptr_t)p + off + len + 4095) & ~(uintptr_t)4095;
  if (e > base + total) e = base + total;
  if (e <= a) return false;
  if (madvise((void *)a, e - a, MADV_POPULATE_WRITE) == 0) return true;
  if (errno == EINVAL) __atomic_store_n(&unsupported, 1, __ATOMIC_RELAXED);
  return false;
#else
  (void)p;
  (void)off;
  (void)len;
  return false;
#endif
}

/* Part t of T of a block of `bytes` bytes: [*off, *off + *len), the inner
 * boundaries on 2 MiB (huge page) boundaries of the address, so that no
 * two parts share a huge page. */
static void populate_part(const void *p, size_t bytes, int t, int T, size_t *off, size_t *len) {
  uintptr_t b = (uintptr_t)p, end = b + bytes, at[2];
  for (int k = 0; k < 2; k++) {
    size_t u = (size_t)(t + k), n = (size_t)T;
    uintptr_t x = b + bytes / n * u + bytes % n * u / n; /* bytes * u / n without overflow */
    x = (x + SP_BIG - 1) & ~(uintptr_t)(SP_BIG - 1);
    at[k] = u == 0 ? b : u >= n || x > end ? end : x;
  }
  *off = at[0] - b;
  *len = at[1] > at[0] ? at[1] - at[0] : 0;
}

bool qvi_sp_populate_parts(void *const *buf, const size_t *bytes, int n, int t, int T) {
  bool any = false;
  for (int k = 0; k < n; k++) {
    size_t off, len;
    populate_part(buf[k], bytes[k], t, T, &off, &len);
    any |= qvi_sp_populate(buf[k], off, len);
  }
  return any;
}

void qvi_sp_free(void *p) {
  if (p == NULL) return;
  SpHeader *h = hdr_open(p);
  if (h->ws != NULL)
    ws_put(h);
  else
    block_release(h);
}

void *qvi_sp_realloc(void *p, int64_t n, size_t size) {
  if (p == NULL) return qvi_sp_malloc(n, size);
  size_t bytes;
  if (!size_ok(n, size, &bytes)) return NULL;
  SpHeader *h = hdr_open(p);
  if (h->ws != NULL && bytes <= cap_of(h)) {
    /* a workspace block keeps its capacity for the next conversion */
    SP_UNPOISON(p, bytes);
    SP_POISON((uint8_t *)p + bytes, cap_of(h) - bytes);
    h->used = bytes;
    hdr_close(h);
    return p;
  }
#if defined(SP_MAP)
  if (h->kind == SP_KIND_MAP && bytes + SP_HDR >= SP_BIG) {
    size_t len = big_round(bytes + SP_HDR);
    if (len == h->total) {
      h->used = bytes;
      return p;
    }
    /* shrinking stays in place; growing moves page tables, never data */
    void *m = mremap(h, h->total, len, len < h->total ? 0 : MREMAP_MAYMOVE);
    if (m == MAP_FAILED) return NULL;
    madvise(m, len, MADV_HUGEPAGE);
    h = m;
    h->untouched = false;
    h->total = len;
    h->used = bytes;
    return (uint8_t *)m + SP_HDR;
  }
#endif
  size_t old = h->used;
  hdr_close(h);
  bool fresh;
  void *q = block_get(bytes, false, &fresh);
  if (q == NULL) return NULL;
  memcpy(q, p, old < bytes ? old : bytes);
  qvi_sp_free(p);
  return q;
}

/* ---- the public workspace */

QvStatus qv_sparse_workspace_new(QvSparseWorkspace **out, QvError *error) {
  if (out == NULL) return qv_error_set(error, QV_EARG, "sparse workspace: out is NULL");
  *out = NULL;
  QvSparseWorkspace *ws = calloc(1, sizeof *ws);
  if (ws == NULL) return qv_error_set(error, QV_ENOMEM, "sparse workspace: out of memory");
  if (pthread_mutex_init(&ws->lock, NULL) != 0) {
    free(ws);
    return qv_error_set(error, QV_ENOMEM, "sparse workspace: cannot create its lock");
  }
  *out = ws;
  return QV_OK;
}

/* Takes every cached block out (lock held); the caller releases them. */
static int ws_drain(QvSparseWorkspace *ws, void **blocks) {
  int n = ws->n_cached;
  memcpy(blocks, ws->cached, (size_t)n * sizeof *blocks);
  ws->n_cached = 0;
  return n;
}

static void release_all(void **blocks, int n) {
  for (int i = 0; i < n; i++) block_release(hdr_open(blocks[i]));
}

void qv_sparse_workspace_trim(QvSparseWorkspace *ws) {
  if (ws == NULL) return;
  void *blocks[SP_WS_SLOTS];
  pthread_mutex_lock(&ws->lock);
  int n = ws_drain(ws, blocks);
  pthread_mutex_unlock(&ws->lock);
  release_all(blocks, n);
}

void qv_sparse_workspace_free(QvSparseWorkspace *ws) {
  if (ws == NULL) return;
  void *blocks[SP_WS_SLOTS];
  pthread_mutex_lock(&ws->lock);
  int n = ws_drain(ws, blocks);
  ws->freed = true;
  bool destroy = ws->outstanding == 0;
  pthread_mutex_unlock(&ws->lock);
  release_all(blocks, n);
  if (destroy) ws_destroy(ws);
}

void qv_sparse_workspace_stats(QvSparseWorkspace *ws, QvSparseWorkspaceStats *out) {
  if (out == NULL) return;
  memset(out, 0, sizeof *out);
  if (ws == NULL) return;
  pthread_mutex_lock(&ws->lock);
  out->reused = ws->reused;
  out->allocated = ws->allocated;
  out->outstanding = ws->outstanding;
  out->cached = ws->n_cached;
  for (int i = 0; i < ws->n_cached; i++) {
    SpHeader *h = hdr_open(ws->cached[i]);
    out->cached_bytes += (int64_t)cap_of(h);
    hdr_close(h);
  }
  pthread_mutex_unlock(&ws->lock);
}
