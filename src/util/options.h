/* Loading a caller's options struct (see quiver/common.h): every options
 * struct begins with `size_t struct_size`, 0 or the size the caller was
 * compiled with. */
#ifndef QUIVER_UTIL_OPTIONS_H
#define QUIVER_UTIL_OPTIONS_H

#include <stddef.h>

#include "quiver/error.h"

/* Fills dst (dst_size bytes, this library's struct) from src: zeroes dst,
 * then copies the caller's bytes. src NULL or struct_size 0: defaults (a
 * zeroed struct) or, for 0, the caller's fields up to first_size, the size
 * the struct had when it was first published. A struct_size below
 * first_size is QV_EARG; one above dst_size (a newer caller) is accepted when
 * the fields this library does not know are all zero, otherwise QV_ENOTSUP.
 * `what` names the struct in messages ("QvRbReadOptions"). */
QvStatus qv_options_load(void *dst, size_t dst_size, size_t first_size, const void *src,
                         const char *what, QvError *error);

/* The usual call: QV_OPTIONS_LOAD(&local, caller_ptr, "QvXxxOptions", error). */
#define QV_OPTIONS_LOAD(dst, src, what, error) \
  qv_options_load((dst), sizeof *(dst), sizeof *(dst), (src), (what), (error))

#endif
