/* A path into nested data for error messages ("batches[0].columns[2].DATA",
 * "root.fields[3].type"), grown and cut back like a stack as a walk goes
 * down and up: push returns the length pop goes back to. A path longer than
 * the buffer is cut, never overflowed; a path 64 levels deep fits whole. */
#ifndef QUIVER_UTIL_ERRPATH_H
#define QUIVER_UTIL_ERRPATH_H

#include <stddef.h>

#include "quiver/error.h"

typedef struct QvErrPath {
  char text[QV_ERROR_MESSAGE_SIZE];
  size_t len;
} QvErrPath;

/* Empties the path. */
void qvi_errpath_clear(QvErrPath *path);
/* Appends printf-style; returns the length before. */
size_t qvi_errpath_push(QvErrPath *path, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* Cuts back to `len`, a value push returned. */
void qvi_errpath_pop(QvErrPath *path, size_t len);

#endif
