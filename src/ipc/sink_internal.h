/* Shared by the fd and path sinks (and writers that still hold a raw
 * descriptor). */
#ifndef QUIVER_IPC_SINK_INTERNAL_H
#define QUIVER_IPC_SINK_INTERNAL_H

#include <stddef.h>

#include "quiver/io.h"

/* write(2) until all n bytes are written (retrying EINTR). */
QvStatus qv_fd_write_all(int fd, const void *data, size_t n, QvError *error);

#endif
