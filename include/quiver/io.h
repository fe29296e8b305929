/** @file
 * quiver: where bytes come from (QvSource) and where they go (QvSink).
 *
 * Every reader in quiver takes a QvSource and every writer a QvSink, in the
 * style of nanoarrow's ArrowIpcInputStream / ArrowIpcOutputStream:
 *
 *   source                 reading
 *   ---------------------  -----------------------------------------------
 *   caller memory          zero-copy: views point into the caller's bytes
 *   path, regular file     zero-copy: the file is memory-mapped (lazily, and
 *                          only the part a reader needs when it can tell)
 *   path, FIFO or device   read sequentially, like an fd
 *   fd or pipe             read sequentially from its current position;
 *                          bodies are copied into 64-byte-aligned memory
 *
 * Views handed out by readers hold a reference to the memory they point into
 * (a QvOwner), so they outlive the source and the reader. A mapped file must
 * not be truncated while views of it live (the usual mmap rule); replace it
 * by renaming a new file over it, which is what a path sink does.
 *
 *   sink                   writing
 *   ---------------------  -----------------------------------------------
 *   caller buffer          QV_ELIMIT once it is full
 *   memory                 grows; 64-byte aligned; qv_sink_memory_take
 *   fd                     write(2) at the current position, not closed
 *   path                   a temporary file next to the target, renamed
 *                          over it by qv_sink_finish (atomic replace)
 *   callback               the caller's write function
 *
 * Writers never finish a sink: the caller calls qv_sink_finish once, after
 * the last message, so one sink can take several messages. A sink that
 * failed stays failed: later writes and qv_sink_finish return the first
 * error again. */
#ifndef QUIVER_IO_H
#define QUIVER_IO_H

#include "quiver/common.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "quiver/buffer.h"
#include "quiver/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- sources (reference-counted, library-allocated) */

/** An opaque input (memory, a path, a descriptor or callbacks). */
typedef struct QvSource QvSource;

/** Zero-copy view of data[0..size); `owner` (may be NULL: the caller keeps
 * the bytes alive while the source and every view from it are used) is
 * retained. */
QV_API QvStatus qv_source_new_memory(QvSource **out, const void *data, size_t size, QvOwner *owner,
                                     QvError *error);
/** A regular file is mapped read-only when a reader first needs its bytes;
 * a FIFO or character device (/dev/stdin) is read sequentially. A FIFO (or
 * /dev/stdin on a pipe) is enlarged as qv_source_new_fd does. A directory
 * or a missing file is QV_EIO naming the path. */
QV_API QvStatus qv_source_new_path(QvSource **out, const char *path, QvError *error);
/** Reads from the descriptor's current position (the input starts there);
 * the descriptor is not closed. Pipes are fine. On a seekable regular file
 * readers may also pread (an Arrow file's footer, for instance). A pipe or
 * FIFO is enlarged (F_SETPIPE_SZ, Linux) to /proc/sys/fs/pipe-max-size,
 * 1 MiB by default, so that its writer and this reader take turns less
 * often; the pipe keeps that size after the source is freed. It is never
 * shrunk, and a refusal keeps the old size quietly. Each enlarged pipe
 * counts against the user's /proc/sys/fs/pipe-user-pages-soft (64 MiB by
 * default, so about 64 such pipes open at once), past which the kernel
 * refuses enlargements (EPERM) and gives new pipes a page or two. Sockets
 * and other descriptors are left as they are. */
QV_API QvStatus qv_source_new_fd(QvSource **out, int fd, QvError *error);
/** A callback source's read: up to `n` bytes at the current position into
 * `buf`, the count in *got (0 only at the end of the input; fewer than `n`
 * is fine, the source asks again). QV_OK, or an error set in `error`. */
typedef QvStatus (*QvSourceReadFn)(void *ctx, void *buf, size_t n, size_t *got, QvError *error);
/** A callback source's seek, as lseek(2): `whence` is SEEK_SET, SEEK_CUR or
 * SEEK_END; the new position from the input's start goes to *position. */
typedef QvStatus (*QvSourceSeekFn)(void *ctx, int64_t offset, int whence, int64_t *position,
                                   QvError *error);
/** A source that reads through the caller's code (a Python file object, a
 * decompressor, a transport of its own). `read` is required. With `seek`
 * (NULL: sequential only) the source learns its size at creation (seek to
 * the end and back) and readers may read at offsets, as they do on a
 * regular file (an Arrow file's footer); each such read seeks back, so
 * sequential reading is never disturbed. The callbacks are called by one
 * thread at a time. `release` (may be NULL) is called with `ctx` once, when
 * the last reference is dropped, or at once when creation fails. `name`
 * (NULL: "<callback>") names the input in messages. */
QV_API QvStatus qv_source_new_callback(QvSource **out, QvSourceReadFn read, QvSourceSeekFn seek,
                                       void (*release)(void *ctx), void *ctx, const char *name,
                                       QvError *error);
/** Takes one more reference (each qv_source_free drops one). */
QV_API void qv_source_retain(QvSource *s);
/** Drops the caller's reference; readers hold their own. NULL is a no-op. */
QV_API void qv_source_free(QvSource *s);
/** For messages: the path, "<memory>" or "<fd 3>". */
QV_API const char *qv_source_name(const QvSource *s);
/** Whether qv_source_read_all hands this source's bytes out as they are
 * (caller memory, a regular file opened by path: a view, nothing is read)
 * rather than reading them into a block (a descriptor, a pipe or FIFO, a
 * callback source): a bound on the bytes read then has nothing to bound
 * (QvNpyReadOptions.max_input_size). False for NULL. */
QV_API bool qv_source_has_view(const QvSource *s);
/** The whole input as one block, for formats that are read whole (JSON, a
 * .npz read from a pipe): caller memory and a regular file are handed out
 * as they are (a view, no copy); a pipe or fd is read from its position to
 * its end into a 64-byte-aligned block that grows with what arrives, so a
 * short input never costs a large allocation. More than max_size bytes
 * (0: no bound) is QV_ELIMIT. *owner keeps *data alive (qv_owner_free it
 * when done; NULL when the input is empty). */
QV_API QvStatus qv_source_read_all(QvSource *s, int64_t max_size, const uint8_t **data,
                                   size_t *size, QvOwner **owner, QvError *error);

/** @name Source access (advanced)
 * How a source reads: for edge readers that tune how a large input is
 * brought into memory (the .npz reader populates a mapped archive on its
 * own threads, leaving out what it copies file to file). Readers choose well
 * by themselves; most programs never call these.
 * @{ */

/** What kind of input a source reads (qv_source_kind). */
typedef enum QvSourceKind {
  /** Caller memory (qv_source_new_memory): a view; its owner may still
   * write the bytes. */
  QV_SOURCE_MEMORY = 0,
  /** A regular file opened by path: mapped read-only on first use (a view),
   * read at offsets, read in order through a cursor. */
  QV_SOURCE_FILE,
  /** A descriptor, pipe, FIFO, device or callbacks: read in order; at
   * offsets too when the descriptor is a seekable file or a seek callback
   * was given. */
  QV_SOURCE_STREAM
} QvSourceKind;

/** The source's kind; QV_SOURCE_STREAM for NULL. */
QV_API QvSourceKind qv_source_kind(const QvSource *s);
/** The input's size in bytes (from where the source starts) when it can be
 * read at offsets, else -1 (a pipe; NULL). */
QV_API int64_t qv_source_size(const QvSource *s);
/** Whether the source's whole-input view exists already, so that using it
 * maps nothing: caller memory, or a file an earlier read mapped. False for
 * NULL. */
QV_API bool qv_source_is_mapped(const QvSource *s);

/** How a QV_SOURCE_FILE source makes its whole-file view. Mapping pages of
 * the page cache costs a fault per page (or per fault-around block) on first
 * touch, which dominates a reader that touches every byte; a reader that
 * touches few bytes wants the plain mapping, which costs nothing until used.
 * Advice only: a hint the kernel refuses leaves the plain mapping. */
typedef enum QvSourceAdvice {
  /** Not chosen yet: a plain mapping, unless a reader announces a full
   * read (qv_source_expect_full_read). */
  QV_SOURCE_ADVICE_DEFAULT = 0,
  QV_SOURCE_ADVICE_NONE,       /**< a plain mapping */
  QV_SOURCE_ADVICE_SEQUENTIAL, /**< a mapping read in order (MADV_SEQUENTIAL) */
  QV_SOURCE_ADVICE_WILLNEED,   /**< a mapping read ahead by the kernel (MADV_WILLNEED) */
  /** A mapping whose pages are populated at once (MADV_POPULATE_READ,
   * Linux 5.14+; on an older kernel WILLNEED). */
  QV_SOURCE_ADVICE_POPULATE,
  QV_SOURCE_ADVICE_READ /**< no mapping: the whole file read into fresh memory */
} QvSourceAdvice;

/** Sets how the whole-file view will be made: effective for a view made
 * after the call (a view made already stays as it is). Other kinds keep the
 * value, which has no effect there; NULL or an unknown value changes
 * nothing. */
QV_API void qv_source_set_advice(QvSource *s, QvSourceAdvice advice);
/** The advice in force; QV_SOURCE_ADVICE_DEFAULT for NULL. */
QV_API QvSourceAdvice qv_source_get_advice(const QvSource *s);
/** Announces a reader about to read every byte: a QV_SOURCE_FILE source
 * whose advice is still DEFAULT takes the advice full reads measure best
 * with (QV_SOURCE_ADVICE_POPULATE). NULL is a no-op. */
QV_API void qv_source_expect_full_read(QvSource *s);
/** Faults in bytes [offset, offset + length) of a QV_SOURCE_FILE source's
 * whole-file mapping, made already (MADV_POPULATE_READ, as
 * QV_SOURCE_ADVICE_POPULATE does for the whole view): a reader with threads
 * maps the file with QV_SOURCE_ADVICE_NONE, then populates a slice per
 * thread. Safe to call from several threads at once. Advice only: nothing
 * for other sources, NULL, a file read into memory, no view yet, or a range
 * outside the file (clipped to it). */
QV_API void qv_source_populate(QvSource *s, int64_t offset, int64_t length);

/** @} */

/* ---- sinks (library-allocated) */

/** An opaque output (memory, a path, a descriptor or callbacks). */
typedef struct QvSink QvSink;

/** Path sink flags. */
#define QV_SINK_NO_FSYNC 1u /**< skip the fsyncs (scratch output, benchmarks) */

/** Writes into dst[0..capacity); a write that does not fit fails with
 * QV_ELIMIT and writes nothing. Writers may use the bytes past what is
 * written as scratch (record batch writers compress there). */
QV_API QvStatus qv_sink_new_buffer(QvSink **out, void *dst, size_t capacity, QvError *error);
/** A growing 64-byte-aligned buffer; qv_sink_memory_take hands it out. */
QV_API QvStatus qv_sink_new_memory(QvSink **out, QvError *error);
/** write(2) at the descriptor's current position; not closed. */
QV_API QvStatus qv_sink_new_fd(QvSink **out, int fd, QvError *error);
/** Writes a temporary file in the target's directory (created with
 * O_EXCL under an unpredictable name, with the existing target's mode or
 * 0666 & ~umask); qv_sink_finish fsyncs it, renames it over the target and
 * fsyncs the directory. qv_sink_free without a successful finish, or any
 * failure, removes the temporary file, so the old target is untouched.
 * Reading a file zero-copy and writing it back to the same path is safe:
 * the views keep the old file's pages. A target that exists and is not a
 * regular file (a FIFO, /dev/stdout) is opened and written in place.
 * A write of 1 MiB or more into the temporary file allocates its blocks
 * first (fallocate, the size kept) where the filesystem can.
 * Without QV_SINK_NO_FSYNC the writeback of every 8 MiB written is started
 * as the writing goes on, so the final fsync waits only for the tail.
 * Large writes (1 MiB on) of bytes that lie in a mapped file source's view
 * are copied file to file (copy_file_range) where the kernel does that at
 * least as fast (always on tmpfs; elsewhere when the two file offsets agree
 * within a page), for this sink and qv_sink_new_fd's.
 * flags: 0 or QV_SINK_NO_FSYNC. */
QV_API QvStatus qv_sink_new_path(QvSink **out, const char *path, unsigned flags, QvError *error);
/** Every write is passed to `write` (which returns QV_OK or an error it set
 * in `error`). */
QV_API QvStatus qv_sink_new_callback(QvSink **out,
                                     QvStatus (*write)(void *ctx, const void *data, size_t size,
                                                       QvError *error),
                                     void *ctx, QvError *error);

/** All `size` bytes or an error (which the sink then keeps). */
QV_API QvStatus qv_sink_write(QvSink *sink, const void *data, size_t size, QvError *error);
/** Bytes accepted so far. */
QV_API int64_t qv_sink_bytes_written(const QvSink *sink);
/** Commits: a path sink fsyncs, renames and fsyncs the directory; the others
 * have nothing to do. After a successful finish further writes are QV_EARG;
 * finishing again is a no-op. */
QV_API QvStatus qv_sink_finish(QvSink *sink, QvError *error);
/** Memory sink: hands out the bytes written so far (*data is NULL when none;
 * free it with qv_free) and leaves the sink empty. QV_EARG for
 * another kind of sink. */
QV_API QvStatus qv_sink_memory_take(QvSink *sink, uint8_t **data, size_t *size, QvError *error);
/** NULL is a no-op. A path sink not finished removes its temporary file. */
QV_API void qv_sink_free(QvSink *sink);

#ifdef __cplusplus
}
#endif

#endif
