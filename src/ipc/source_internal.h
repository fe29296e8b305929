/* What readers (the message reader, the adapters, the NumPy formats) use of a
 * QvSource beyond the public header: a whole-input zero-copy view, random
 * access (pread and mapping a range) and sequential reads. */
#ifndef QUIVER_IPC_SOURCE_INTERNAL_H
#define QUIVER_IPC_SOURCE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "quiver/io.h"

/* How a source can be read:
 *  MEMORY  caller bytes: view, pread, ranges, sequential reads.
 *  FILE    a regular file opened by path: view (the whole file, mapped on
 *          first use), pread, mapping a range, sequential reads (pread at a
 *          cursor).
 *  STREAM  an fd, pipe, FIFO or device: sequential reads only; pread too
 *          when the descriptor is a seekable regular file. */
typedef enum QvSourceKind { QV_SOURCE_MEMORY, QV_SOURCE_FILE, QV_SOURCE_STREAM } QvSourceKind;

QvSourceKind qvi_source_kind(const QvSource *s);

/* Whether qvi_source_pread works, and the input's size then (bytes from the
 * start of the input: an fd source starts at the descriptor's position when
 * the source was made). */
bool qvi_source_seekable(const QvSource *s);
int64_t qvi_source_size(const QvSource *s);

/* Whether a whole-input view is available (MEMORY, FILE) and whether it
 * exists already without mapping anything (MEMORY, or a FILE mapped by an
 * earlier call). */
bool qvi_source_has_view(const QvSource *s);
bool qvi_source_is_mapped(const QvSource *s);

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

/* How a FILE source makes its whole-file view (qvi_source_view). Mapping
 * pages of the page cache costs a fault per page (or per fault-around
 * block) on first touch, which dominates a reader that touches every byte
 * (full validation) on a VM; readers that touch few bytes (cheap checks)
 * want the plain mapping, which costs nothing until used.
 *   DEFAULT     not chosen yet: a plain mapping, unless a reader announces
 *               a full read (qvi_source_expect_full_read)
 *   NONE        a plain mapping
 *   SEQUENTIAL  mapping + MADV_SEQUENTIAL
 *   WILLNEED    mapping + MADV_WILLNEED
 *   POPULATE    mapping + MADV_POPULATE_READ (Linux 5.14+; on EINVAL the
 *               kernel lacks it: WILLNEED, and not tried again)
 *   READ        no mapping: pread of the whole file into fresh memory */
typedef enum QvSourceAdvice {
  QV_SOURCE_ADVICE_DEFAULT = 0,
  QV_SOURCE_ADVICE_NONE,
  QV_SOURCE_ADVICE_SEQUENTIAL,
  QV_SOURCE_ADVICE_WILLNEED,
  QV_SOURCE_ADVICE_POPULATE,
  QV_SOURCE_ADVICE_READ
} QvSourceAdvice;

/* What a full read gets (measured by bench/bench_recordbatch, see
 * docs/benchmark-notes.md). */
#define QV_SOURCE_FULL_READ_ADVICE QV_SOURCE_ADVICE_POPULATE

/* Sets how the view will be made (effective for a view made after the
 * call; a view made already stays as it is). */
void qvi_source_set_advice(QvSource *s, QvSourceAdvice advice);
QvSourceAdvice qvi_source_get_advice(const QvSource *s);
/* A reader about to read every byte of the input: a FILE source whose
 * advice is still DEFAULT takes QV_SOURCE_FULL_READ_ADVICE. */
void qvi_source_expect_full_read(QvSource *s);
/* False once MADV_POPULATE_READ was refused with EINVAL (an older kernel). */
bool qvi_source_populate_supported(void);

/* Faults in bytes [offset, offset + length) of a FILE source's whole-file
 * mapping made already (MADV_POPULATE_READ, as QV_SOURCE_ADVICE_POPULATE
 * does for the whole view), so that a reader with a thread pool populates
 * the slices of a large input on several threads at once: a view made
 * with QV_SOURCE_ADVICE_NONE, then a slice per task. Advisory: nothing
 * for other sources, a copy read into memory, or no view yet. */
void qvi_source_populate(QvSource *s, int64_t offset, int64_t length);

/* How many whole-input mappings and range mappings this process made, and
 * how many qvi_source_populate calls populated something (for tests that
 * must know which path a read took). */
int64_t qvi_source_count_view_maps(void);
int64_t qvi_source_count_range_maps(void);
int64_t qvi_source_count_populates(void);
/* Test hook: from now on every read(2) and pread(2) of a descriptor asks
 * for at most `max` bytes, varying between 1 and max (0: no limit, as
 * usual), so tests see the short reads pipes and sockets give. Process-wide. */
void qvi_source_test_short_reads(size_t max);

#endif
