/* Buffers of the sparse code: 64-byte aligned (Arrow's recommendation),
 * with a small header in front recording how they were obtained. Large
 * ones (>= 2 MiB) are anonymous mappings advised to use transparent huge
 * pages: first-touch page faults otherwise dominate conversions that
 * produce tens of megabytes (measured ~6 us per 4 KiB page in a VM, more
 * than the time to scan the dense input), and growth is an mremap instead
 * of a copy. Elsewhere, or when mapping fails, posix_memalign is used. */
#if defined(__linux__)
#define _GNU_SOURCE /* MAP_ANONYMOUS, MADV_HUGEPAGE, mremap */
#include <sys/mman.h>
#endif
#include <stdlib.h>
#include <string.h>

#include "sparse/sparse_internal.h"

/* Under AddressSanitizer, plain malloc so every buffer has exact bounds
 * (ASan does not watch mappings, and a header would hide underflows). */
#if defined(__SANITIZE_ADDRESS__)
#define SP_PLAIN_ALLOC 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SP_PLAIN_ALLOC 1
#endif
#endif

/* n * size bytes, at least 1 so that no allocation returns NULL for an
 * empty buffer; false when n is negative or the product overflows. */
static bool size_ok(int64_t n, size_t size, size_t *bytes) {
  size_t count;
  if (!qv_i64_to_size(n, &count) || !qv_mul_size(count, size, bytes)) return false;
  if (*bytes == 0) *bytes = 1;
  return true;
}

#if defined(SP_PLAIN_ALLOC)

void *qv_sp_malloc(int64_t n, size_t size) {
  size_t bytes;
  return size_ok(n, size, &bytes) ? malloc(bytes) : NULL;
}
void *qv_sp_calloc(int64_t n, size_t size) {
  size_t bytes;
  return size_ok(n, size, &bytes) ? calloc(1, bytes) : NULL;
}
void *qv_sp_realloc(void *p, int64_t n, size_t size) {
  size_t bytes;
  return size_ok(n, size, &bytes) ? realloc(p, bytes) : NULL;
}
void qv_sp_free(void *p) { free(p); }
void *qv_sp_reserve(int64_t n, size_t size) {
  (void)n;
  (void)size;
  return NULL;
}

#else

enum { SP_HDR = 64, SP_KIND_HEAP = 1, SP_KIND_MAP = 2 };
#define SP_BIG ((size_t)2 << 20)

typedef struct SpHeader {
  size_t total; /* bytes from the header start (mapping length for SP_KIND_MAP) */
  int kind;
} SpHeader;

static SpHeader *header_of(void *p) { return (SpHeader *)(void *)((uint8_t *)p - SP_HDR); }


#if defined(__linux__)
static size_t big_round(size_t n) { return (n + SP_BIG - 1) & ~(SP_BIG - 1); }

/* A mapping of a multiple of 2 MiB starting on a 2 MiB boundary, so that
 * transparent huge pages can back all of it. `reserve`: address space only
 * (no commit charge); pages appear when first written. */
static void *map_block(size_t total, bool reserve) {
  size_t len = big_round(total), span = len + SP_BIG;
  if (len < total || span < len) return NULL;
  int flags = MAP_PRIVATE | MAP_ANONYMOUS | (reserve ? MAP_NORESERVE : 0);
  uint8_t *m = mmap(NULL, span, PROT_READ | PROT_WRITE, flags, -1, 0);
  if (m == MAP_FAILED) return NULL;
  uint8_t *a = (uint8_t *)(((uintptr_t)m + SP_BIG - 1) & ~(uintptr_t)(SP_BIG - 1));
  size_t head = (size_t)(a - m);
  if (head > 0) munmap(m, head);
  if (span - head - len > 0) munmap(a + len, span - head - len);
  madvise(a, len, MADV_HUGEPAGE); /* advisory: failure is harmless */
  SpHeader *h = (SpHeader *)(void *)a;
  h->total = len;
  h->kind = SP_KIND_MAP;
  return a + SP_HDR;
}
#endif

/* Returns the data pointer of a new block of `bytes` usable bytes. */
static void *block_new(size_t bytes) {
  if (bytes > SIZE_MAX - SP_HDR - 2 * SP_BIG) return NULL;
  size_t total = bytes + SP_HDR;
#if defined(__linux__)
  if (total >= SP_BIG) {
    void *p = map_block(total, false);
    if (p != NULL) return p;
  }
#endif
  void *b = NULL;
  if (posix_memalign(&b, SP_HDR, total) != 0) return NULL;
  SpHeader *h = b;
  h->total = total;
  h->kind = SP_KIND_HEAP;
  return (uint8_t *)b + SP_HDR;
}

void *qv_sp_malloc(int64_t n, size_t size) {
  size_t bytes;
  return size_ok(n, size, &bytes) ? block_new(bytes) : NULL;
}

void *qv_sp_calloc(int64_t n, size_t size) {
  size_t bytes;
  if (!size_ok(n, size, &bytes)) return NULL;
  void *p = block_new(bytes);
  if (p != NULL && header_of(p)->kind == SP_KIND_HEAP) memset(p, 0, bytes);
  return p; /* fresh mappings are zero-filled by the kernel */
}

void qv_sp_free(void *p) {
  if (p == NULL) return;
  SpHeader *h = header_of(p);
#if defined(__linux__)
  if (h->kind == SP_KIND_MAP) {
    munmap(h, h->total);
    return;
  }
#endif
  free(h);
}

void *qv_sp_realloc(void *p, int64_t n, size_t size) {
  if (p == NULL) return qv_sp_malloc(n, size);
  size_t bytes;
  if (!size_ok(n, size, &bytes) || bytes > SIZE_MAX - SP_HDR - 2 * SP_BIG) return NULL;
  SpHeader *h = header_of(p);
#if defined(__linux__)
  if (h->kind == SP_KIND_MAP && bytes + SP_HDR >= SP_BIG) {
    size_t len = big_round(bytes + SP_HDR);
    if (len == h->total) return p;
    /* shrinking stays in place; growing moves page tables, never data */
    void *m = mremap(h, h->total, len, len < h->total ? 0 : MREMAP_MAYMOVE);
    if (m == MAP_FAILED) return NULL;
    madvise(m, len, MADV_HUGEPAGE);
    h = m;
    h->total = len;
    return (uint8_t *)m + SP_HDR;
  }
#endif
  void *q = block_new(bytes);
  if (q == NULL) return NULL;
  size_t old = h->total - SP_HDR;
  memcpy(q, p, old < bytes ? old : bytes);
  qv_sp_free(p);
  return q;
}

void *qv_sp_reserve(int64_t n, size_t size) {
  size_t bytes;
  if (!size_ok(n, size, &bytes) || bytes > SIZE_MAX - SP_HDR - 2 * SP_BIG) return NULL;
#if defined(__linux__)
  if (bytes + SP_HDR >= SP_BIG) return map_block(bytes + SP_HDR, true);
#endif
  return NULL;
}

#endif
