/* What writers use of a QvSink beyond the public header. */
#ifndef QUIVER_IPC_SINK_INTERNAL_H
#define QUIVER_IPC_SINK_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "quiver/io.h"

/* n bytes of the sink's own memory to fill in place (buffer and memory
 * sinks), so a writer that builds bytes (a strided copy) needs no staging
 * buffer: *ptr points at them and they count as written. For other sinks
 * *ptr is NULL (write with qv_sink_write instead). Fails as a write would
 * (QV_ELIMIT when a buffer is full, sticky). */
QvStatus qvi_sink_reserve(QvSink *sink, size_t n, uint8_t **ptr, QvError *error);
/* Bytes qvi_sink_reserve can still take without failing: what is left of a
 * buffer sink, SIZE_MAX for a memory sink (it grows), 0 for other sinks and
 * for a failed or finished sink. */
size_t qvi_sink_room(const QvSink *sink);
/* Gives back the last n bytes of the latest qvi_sink_reserve (a writer that
 * reserved for the worst case): they no longer count as written. */
void qvi_sink_unreserve(QvSink *sink, size_t n);

/* The sink's own memory past what is written, for a writer that fills it
 * out of order and moves the pieces into place with qv_sink_write (frames
 * compressed on several threads at worst-case offsets): a pointer to the
 * first unwritten byte with at least `need` bytes of capacity from it, or
 * NULL when the sink has no such memory (not a buffer or memory sink, a
 * buffer sink with less room left, a failed sink, or a memory sink that
 * would have to grow when may_grow is false or cannot). Nothing counts as
 * written. The memory stays put until a write, reservation or window goes
 * past the capacity ensured here (a memory sink then moves, copying only
 * what was written). */
uint8_t *qvi_sink_window(QvSink *sink, size_t need, bool may_grow);

#endif
