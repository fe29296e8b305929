/* What readers (the message reader, the adapters, the NumPy formats) use of a
 * QvSource beyond the public header: a whole-input zero-copy view, random
 * access (pread and mapping a range) and sequential reads. */
#ifndef QUIVER_IPC_SOURCE_INTERNAL_H
#define QUIVER_IPC_SOURCE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "quiver/io.h"

/* Whether qvi_source_pread works (qv_source_size is the input's size then:
 * an fd source starts at the descriptor's position when it was made). */
bool qvi_source_seekable(const QvSource *s);

/* The whole input, zero-copy: *owner (not retained: it lives as long as the
 * source; retain it for views that must outlive the source) keeps it alive.
 * An empty input gives *data == NULL. QV_EARG for a STREAM source. */
QvStatus qvi_source_view(QvSource *s, const uint8_t **data, size_t *size, QvOwner **owner,
                        QvError *error);

/* Up to n bytes at `offset`; *got < n only at the end of the input. Does not
 * move the sequential position. QV_EARG when the source is not seekable. */
QvStatus qvi_source_pread(QvSource *s, void *buf, size_t n, int64_t offset, size_t *got,
                         QvError *error);

/* bytes [offset, offset + length) without copying: a pointer into the
 * view, or (FILE) a read-only mapping of just the pages holding them.
 * *owner receives one reference (may be NULL for caller memory without an
 * owner). length 0 gives a valid, 64-byte-aligned pointer. QV_EARG for a
 * STREAM source; the range must lie inside the input. */
QvStatus qvi_source_map_range(QvSource *s, int64_t offset, int64_t length, const uint8_t **data,
                             QvOwner **owner, QvError *error);

/* Whether bytes [p, p + n) lie in a FILE source's whole-file view that is
 * still mapped: then *fd is a descriptor on that file (owned by the view:
 * valid while the caller holds what keeps the bytes alive) and *offset the
 * file offset of p, so that a sink can copy them file to file
 * (copy_file_range) instead of writing them from the mapping. */
bool qvi_source_file_bytes(const void *p, size_t n, int *fd, int64_t *offset);

/* Sequential reading from the current position: up to n bytes, *got < n
 * only at the end of the input. */
QvStatus qvi_source_read(QvSource *s, void *buf, size_t n, size_t *got, QvError *error);
/* The next n (<= 16) bytes without consuming them (they are read again by
 * the next qvi_source_read). *got < n only at the end of the input. */
QvStatus qvi_source_peek(QvSource *s, void *buf, size_t n, size_t *got, QvError *error);
/* The rest of the input read sequentially into one 64-byte-aligned
 * allocation that grows with the bytes actually read (for formats a pipe
 * must deliver whole: an Arrow file, .npy, .npz); more than `limit` bytes is
 * QV_ELIMIT. *owner holds one reference to *data (NULL when empty). */
QvStatus qvi_source_read_all(QvSource *s, int64_t limit, const uint8_t **data, size_t *size,
                            QvOwner **owner, QvError *error);
/* Discards up to n bytes; *skipped < n only at the end of the input. */
QvStatus qvi_source_skip(QvSource *s, int64_t n, int64_t *skipped, QvError *error);
/* Bytes consumed by sequential reads so far. */
int64_t qvi_source_position(const QvSource *s);

/* The QvSourceAdvice (quiver/io.h) a full read gets (measured by
 * bench/bench_recordbatch, see docs/benchmark-notes.md). */
#define QV_SOURCE_FULL_READ_ADVICE QV_SOURCE_ADVICE_POPULATE

/* False once MADV_POPULATE_READ was refused with EINVAL (an older kernel). */
bool qvi_source_populate_supported(void);

/* How many whole-input mappings and range mappings this process made, and
 * how many qv_source_populate calls populated something (for tests that
 * must know which path a read took). */
int64_t qvi_source_count_view_maps(void);
int64_t qvi_source_count_range_maps(void);
int64_t qvi_source_count_populates(void);
/* Test hook: from now on every read(2) and pread(2) of a descriptor asks
 * for at most `max` bytes, varying between 1 and max (0: no limit, as
 * usual), so tests see the short reads pipes and sockets give. Process-wide. */
void qvi_source_test_short_reads(size_t max);
/* Test hook: the size pipe and FIFO sources raise their pipe to (0: the
 * default, /proc/sys/fs/pipe-max-size). Process-wide. */
void qvi_source_test_pipe_target(size_t bytes);

#endif
