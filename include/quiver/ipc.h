/** @file
 * quiver: Arrow IPC message framing (Columnar.rst, "Encapsulated message
 * format") and the message reader over a QvSource (quiver/io.h).
 *
 * @verbatim
 *   <0xFFFFFFFF> <int32 metadata length> <Message FlatBuffer + padding> <body>
 * @endverbatim
 *
 * The legacy form (pre-0.15 writers) omits the continuation marker. The end
 * of a stream is 0xFFFFFFFF 0x00000000 (or a bare int32 0). The file format
 * wraps a stream in `"ARROW1\0\0" ... <Footer> <int32 footer length> "ARROW1"`. */
#ifndef QUIVER_IPC_H
#define QUIVER_IPC_H

#include "quiver/common.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "quiver/buffer.h"
#include "quiver/error.h"
#include "quiver/format.h"
#include "quiver/io.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The continuation marker that starts a message prefix (read as a
 * little-endian uint32); absent in the legacy prefix. */
#define QV_IPC_CONTINUATION 0xFFFFFFFFu
/** The magic at the start (padded to 8 bytes) and end of an Arrow file. */
#define QV_IPC_MAGIC "ARROW1"
/** Bytes of QV_IPC_MAGIC, without a terminating NUL or padding. */
#define QV_IPC_MAGIC_SIZE 6

/** Default limits: generous for real data, small enough that a lying length
 * cannot make the reader allocate without bound. */
#define QV_IPC_DEFAULT_MAX_METADATA_SIZE ((int64_t)64 << 20)
/** Default bound of one message body in bytes (1 TiB). */
#define QV_IPC_DEFAULT_MAX_BODY_SIZE ((int64_t)1 << 40)

/** Options of qv_ipc_reader_new; NULL or a zeroed struct means every default. */
typedef struct QvIpcReaderOptions {
  size_t struct_size;        /**< 0 or sizeof(QvIpcReaderOptions) */
  int64_t max_metadata_size; /**< 0 = QV_IPC_DEFAULT_MAX_METADATA_SIZE */
  int64_t max_body_size;     /**< 0 = QV_IPC_DEFAULT_MAX_BODY_SIZE; for sequential reads this
                                bounds an allocation */
  unsigned max_depth;        /**< FlatBuffers table nesting; 0 = 64 (QvDecodeOptions) */
  size_t max_tables;         /**< tables + strings visited; 0 = 1,000,000 (QvDecodeOptions) */
  /** Path sources: read every prefix and metadata with pread and map only
   * each message's body, instead of mapping the whole file (nth() always
   * reads this way unless the file is mapped already). */
  bool map_each_body;
} QvIpcReaderOptions;

/** The two IPC formats a reader recognises from the first bytes. */
typedef enum QvIpcFormat {
  QV_IPC_FORMAT_STREAM = 0, /**< a sequence of messages, optionally ending in the end-of-stream marker */
  QV_IPC_FORMAT_FILE = 1    /**< "ARROW1" magic, the stream, a Footer, its length and the magic */
} QvIpcFormat;

/** One framed message: its position, raw metadata, body and decoded header.
 * The body stays valid until qv_ipc_message_reset (it holds a reference to
 * the memory it points into). */
typedef struct QvIpcMessage {
  int64_t offset;          /**< of the prefix, from the start of the input */
  bool legacy_prefix;      /**< no continuation marker */
  int32_t metadata_length; /**< the length field: FlatBuffer + padding */
  const uint8_t *metadata; /**< the Message FlatBuffer (after the prefix), metadata_length bytes */
  int64_t body_offset;     /**< from the start of the input */
  const uint8_t *body;     /**< the body, body_length bytes (a view of the input or a copy) */
  int64_t body_length;     /**< bytes of the body, from the Message's bodyLength */
  QvMessage message;       /**< the decoded Message (its own copies; freed by qv_ipc_message_reset) */
  QvOwner *owner;          /**< keeps `body` (and `metadata`) alive */
} QvIpcMessage;

/** Releases what the message holds and zeroes it (NULL and a zeroed message
 * are fine). */
QV_API void qv_ipc_message_reset(QvIpcMessage *msg);

/** An opaque message reader (qv_ipc_reader_new, qv_ipc_reader_free). */
typedef struct QvIpcReader QvIpcReader;

/** A message reader over a source (quiver/io.h); it holds its own reference
 * to the source. How it reads:
 *  - caller memory: zero-copy, messages retain the memory's owner;
 *  - a path to a regular file: zero-copy; next() maps the whole file once,
 *    nth() (and next() with map_each_body) reads prefixes and metadata with
 *    pread and maps only the body it returns, so skipping messages touches
 *    no body page and a tensor read maps nothing else;
 *  - an fd, pipe or FIFO: sequential reads from the current position; each
 *    body is copied into a 64-byte-aligned allocation that grows with the
 *    bytes actually read, so a lying length cannot make it allocate much
 *    more than the input holds. For the file format on a seekable regular
 *    file the footer is located with pread, so messages stop at the footer
 *    and qv_ipc_reader_footer works; on a pipe the file format needs its
 *    end-of-stream marker before the footer.
 * The format (stream or file) is decided from the first bytes: an Arrow
 * file's trailing magic and footer length are checked here. */
QV_API QvStatus qv_ipc_reader_new(QvIpcReader **out, QvSource *source,
                                  const QvIpcReaderOptions *options, QvError *error);
/** NULL is a no-op; messages handed out stay valid. */
QV_API void qv_ipc_reader_free(QvIpcReader *reader);

/** Next message: QV_OK, QV_EOS at the end-of-stream marker / end of input /
 * start of a file footer, or an error. Both are final: after QV_EOS every
 * call returns QV_EOS, and after an error every call returns the same code
 * and message (the reader does not resynchronise). On anything but QV_OK
 * *out is empty. */
QV_API QvStatus qv_ipc_reader_next(QvIpcReader *reader, QvIpcMessage *out, QvError *error);

/** Skips `index` messages (0-based from the reader's position, counting every
 * message) and returns the next one; the skipped bodies are not read when
 * the source allows it. Past the end: QV_EINVAL, "no message 3: input holds
 * 2 messages". Errors are sticky as for next(). */
QV_API QvStatus qv_ipc_reader_nth(QvIpcReader *reader, int64_t index, QvIpcMessage *out,
                                  QvError *error);

/** The message whose prefix starts at input offset `offset` (an Arrow file's
 * footer blocks point at these), without moving or disturbing next(): no
 * sticky error either. The message must lie in the message area (before a
 * file's footer). QV_EOS when an end-of-stream marker is there; QV_EARG for
 * a source that cannot be read at an offset (a pipe). */
QV_API QvStatus qv_ipc_reader_message_at(QvIpcReader *reader, int64_t offset, QvIpcMessage *out,
                                         QvError *error);

/** Stream or file (decided from the first bytes). */
QV_API QvIpcFormat qv_ipc_reader_format(const QvIpcReader *reader);
/** For the file format read from memory, a path or a seekable file
 * descriptor: decodes the footer (independent of next()). QV_EARG for a
 * stream or a pipe. */
QV_API QvStatus qv_ipc_reader_footer(QvIpcReader *reader, QvFooter *out, int64_t *footer_offset,
                                     int32_t *footer_length, QvError *error);

/* ---- writing */

/** Size of prefix + metadata + padding for a FlatBuffer of fb_size bytes so
 * that the total is a multiple of `alignment` (8, or 64 for Tensor and
 * SparseTensor bodies). */
QV_API size_t qv_ipc_framed_metadata_size(size_t fb_size, size_t alignment);

/** Encodes `msg` and frames it: *out (qv_free it) holds the continuation
 * marker, the length, the FlatBuffer and zero padding; the body follows. */
QV_API QvStatus qv_ipc_frame_message(const QvMessage *msg, size_t alignment, uint8_t **out,
                              size_t *out_size, QvError *error);

/** The 8-byte end-of-stream marker. */
QV_API extern const uint8_t qv_ipc_eos[8];

#ifdef __cplusplus
}
#endif

#endif
