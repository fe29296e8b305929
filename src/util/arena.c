#include "util/arena.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct Block {
  struct Block *next;
  size_t used, cap;
  max_align_t data[];
} Block;

struct QvArena {
  Block *head;
  size_t next_cap; /* of the next block: doubles from ARENA_FIRST to ARENA_MAX */
};

/* The first block is small: a record batch's metadata takes a few hundred
 * bytes, and glibc serves blocks under 1 KiB from its small bins, where a
 * 4 KiB request first consolidated the fast bins (a tenth of the decode). */
enum { ARENA_FIRST = 1024 - 64, ARENA_MAX = 64 * 1024 };

QvArena *qvi_arena_new(void) { return calloc(1, sizeof(QvArena)); }

void qvi_arena_free(QvArena *arena) {
  if (arena == NULL) return;
  Block *b = arena->head;
  while (b) {
    Block *n = b->next;
    free(b);
    b = n;
  }
  free(arena);
}

void *qvi_arena_alloc(QvArena *arena, size_t count, size_t size) {
  if (arena == NULL || (size && count > SIZE_MAX / size)) return NULL;
  size_t n = count * size;
  if (n > SIZE_MAX - 64) return NULL;
  n = (n + 7) & ~(size_t)7;
  if (n == 0) n = 8;
  Block *b = arena->head;
  if (b == NULL || b->cap - b->used < n) {
    size_t cap = arena->next_cap ? arena->next_cap : ARENA_FIRST;
    if (cap < ARENA_MAX) arena->next_cap = cap * 2;
    if (cap < n) cap = n;
    b = malloc(sizeof(Block) + cap);
    if (b == NULL) return NULL;
    b->used = 0;
    b->cap = cap;
    b->next = arena->head;
    arena->head = b;
  }
  void *p = (char *)b->data + b->used;
  b->used += n;
  memset(p, 0, n);
  return p;
}

char *qvi_arena_strndup(QvArena *arena, const char *s, size_t len) {
  if (len == SIZE_MAX) return NULL;
  char *p = qvi_arena_alloc(arena, len + 1, 1);
  if (p == NULL) return NULL;
  if (len) memcpy(p, s, len);
  p[len] = '\0';
  return p;
}
