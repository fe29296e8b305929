/* A bump allocator: many small allocations released together. Used for
 * decoded metadata, whose pieces all share one lifetime. */
#ifndef QUIVER_ARENA_H
#define QUIVER_ARENA_H

#include <stddef.h>

typedef struct QvArena QvArena;

QvArena *qvi_arena_new(void);
void qvi_arena_free(QvArena *arena);
/* 8-byte aligned, zeroed; NULL on failure or overflow. */
void *qvi_arena_alloc(QvArena *arena, size_t count, size_t size);
/* Copies len bytes and adds a NUL. */
char *qvi_arena_strndup(QvArena *arena, const char *s, size_t len);

#endif
