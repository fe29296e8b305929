/* quiver: Arrow IPC message framing (Columnar.rst, "Encapsulated message
 * format") and a message reader over memory, a memory-mapped file or a file
 * descriptor.
 *
 *   <0xFFFFFFFF> <int32 metadata length> <Message FlatBuffer + padding> <body>
 *
 * The legacy form (pre-0.15 writers) omits the continuation marker. The end
 * of a stream is 0xFFFFFFFF 0x00000000 (or a bare int32 0). The file format
 * wraps a stream in "ARROW1\0\0" ... <Footer> <int32 footer length> "ARROW1". */
#ifndef QUIVER_IPC_H
#define QUIVER_IPC_H

#include "quiver/common.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "quiver/buffer.h"
#include "quiver/error.h"
#include "quiver/format.h"

#ifdef __cplusplus
extern "C" {
#endif

#define QV_IPC_CONTINUATION 0xFFFFFFFFu
#define QV_IPC_MAGIC "ARROW1"
#define QV_IPC_MAGIC_SIZE 6

/* Default limits: generous for real data, small enough that a lying length
 * cannot make the reader allocate without bound. */
#define QV_IPC_DEFAULT_MAX_METADATA_SIZE ((int64_t)64 << 20)
#define QV_IPC_DEFAULT_MAX_BODY_SIZE ((int64_t)1 << 40)

typedef struct QvIpcReaderOptions {
  int64_t max_metadata_size; /* 0 = default */
  int64_t max_body_size;     /* 0 = default; for fd reads this bounds an allocation */
  QvDecodeOptions decode;
} QvIpcReaderOptions;

typedef enum QvIpcFormat { QV_IPC_FORMAT_STREAM = 0, QV_IPC_FORMAT_FILE = 1 } QvIpcFormat;

/* One framed message: its position, raw metadata, body and decoded header.
 * The body stays valid until qv_ipc_message_release (it holds a reference to
 * the memory it points into). */
typedef struct QvIpcMessage {
  int64_t offset;          /* of the prefix, from the start of the input */
  bool legacy_prefix;      /* no continuation marker */
  int32_t metadata_length; /* the length field: FlatBuffer + padding */
  const uint8_t *metadata;
  int64_t body_offset;     /* from the start of the input */
  const uint8_t *body;
  int64_t body_length;
  QvMessage message;
  QvOwner *owner;          /* keeps `body` (and `metadata`) alive */
} QvIpcMessage;

QV_API void qv_ipc_message_release(QvIpcMessage *msg);

typedef struct QvIpcReader QvIpcReader;

/* Reads from caller memory. `owner` (may be NULL: the caller keeps the bytes
 * alive) is retained by every message handed out. Zero-copy. */
QV_API QvStatus qv_ipc_reader_open_memory(QvIpcReader **out, const uint8_t *data, size_t size,
                                   QvOwner *owner, const QvIpcReaderOptions *options,
                                   QvError *error);
/* Maps a file read-only; the mapping lives until the reader and every
 * message (and view) from it are released. Zero-copy. */
QV_API QvStatus qv_ipc_reader_open_path(QvIpcReader **out, const char *path,
                                 const QvIpcReaderOptions *options, QvError *error);
/* Reads a file descriptor or pipe sequentially from its current position
 * (not closed by the reader); each body is copied into a 64-byte-aligned
 * allocation that grows with the bytes actually read, so a lying length
 * cannot make it allocate much more than the input holds. For the file
 * format on a seekable regular file the footer is located with pread, so
 * messages stop at the footer and qv_ipc_reader_footer works; on a pipe the
 * file format needs its end-of-stream marker before the footer. */
QV_API QvStatus qv_ipc_reader_open_fd(QvIpcReader **out, int fd, const QvIpcReaderOptions *options,
                               QvError *error);
QV_API void qv_ipc_reader_close(QvIpcReader *reader);

/* Next message: QV_OK, QV_EOS at the end-of-stream marker / end of input /
 * start of a file footer, or an error. Both are final: after QV_EOS every
 * call returns QV_EOS, and after an error every call returns the same code
 * and message (the reader does not resynchronise). On anything but QV_OK
 * *out is empty. */
QV_API QvStatus qv_ipc_reader_next(QvIpcReader *reader, QvIpcMessage *out, QvError *error);

/* Skips to message `index` (0-based, counting every message) and returns it.
 * Past the end: QV_EINVAL, "no message 3: input holds 2 messages". */
QV_API QvStatus qv_ipc_reader_nth(QvIpcReader *reader, int64_t index, QvIpcMessage *out,
                           QvError *error);

/* Stream or file (decided from the first bytes). */
QV_API QvIpcFormat qv_ipc_reader_format(const QvIpcReader *reader);
/* For the file format read from memory, a path or a seekable file
 * descriptor: decodes the footer (independent of next()). QV_EARG for a
 * stream or a pipe. */
QV_API QvStatus qv_ipc_reader_footer(QvIpcReader *reader, QvFooter *out, int64_t *footer_offset,
                              int32_t *footer_length, QvError *error);

/* ---- writing */

/* Size of prefix + metadata + padding for a FlatBuffer of fb_size bytes so
 * that the total is a multiple of `alignment` (8, or 64 for Tensor and
 * SparseTensor bodies). */
QV_API size_t qv_ipc_framed_metadata_size(size_t fb_size, size_t alignment);

/* Encodes `msg` and frames it: *out (malloc'd) holds the continuation
 * marker, the length, the FlatBuffer and zero padding; the body follows. */
QV_API QvStatus qv_ipc_frame_message(const QvMessage *msg, size_t alignment, uint8_t **out,
                              size_t *out_size, QvError *error);

/* The 8-byte end-of-stream marker. */
QV_API extern const uint8_t qv_ipc_eos[8];

#ifdef __cplusplus
}
#endif

#endif
