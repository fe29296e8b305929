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
};

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
    size_t cap = n > 4096 ? n : 4096;
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
