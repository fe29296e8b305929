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
/* Bytes qv_sink_reserve can still take without failing: what is left of a
 * buffer sink, SIZE_MAX for a memory sink (it grows), 0 for other sinks and
 * for a failed or finished sink. */
size_t qv_sink_room(const QvSink *sink);
/* Gives back the last n bytes of the latest qv_sink_reserve (a writer that
 * reserved for the worst case): they no longer count as written. */
void qv_sink_unreserve(QvSink *sink, size_t n);

#endif
