/* What writers use of a QvSink beyond the public header. */
#ifndef QUIVER_IPC_SINK_INTERNAL_H
#define QUIVER_IPC_SINK_INTERNAL_H

#include <stddef.h>

#include "quiver/io.h"

/* n bytes of the sink's own memory to fill in place (buffer and memory
 * sinks), so a writer that builds bytes (a strided copy) needs no staging
 * buffer: *ptr points at them and they count as written. For other sinks
 * *ptr is NULL (write with qv_sink_write instead). Fails as a write would
 * (QV_ELIMIT when a buffer is full, sticky). */
QvStatus qv_sink_reserve(QvSink *sink, size_t n, uint8_t **ptr, QvError *error);

#endif
