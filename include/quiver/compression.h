/** @file
 * quiver: body compression codecs of the Arrow IPC format (Message.fbs
 * BodyCompression, one buffer at a time).
 *
 * One enum serves the metadata structs (quiver/format.h: a RecordBatch's
 * `compression`, NONE when the message has no BodyCompression table; the
 * codec number in the FlatBuffer is mapped by the decoder and encoder) and
 * the record batch writer's options. */
#ifndef QUIVER_COMPRESSION_H
#define QUIVER_COMPRESSION_H

#include "quiver/common.h"

#include <stddef.h>
#include <stdint.h>

#include "quiver/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/** A body compression codec. The numbers are quiver's, not the
 * FlatBuffer's CompressionType (LZ4_FRAME 0, ZSTD 1 there). */
typedef enum QvCompression {
  QV_COMPRESSION_NONE = 0,      /**< buffers stored as they are (no BodyCompression table) */
  QV_COMPRESSION_LZ4_FRAME = 1, /**< each buffer one LZ4 frame (liblz4) */
  QV_COMPRESSION_ZSTD = 2       /**< each buffer one Zstandard frame (libzstd) */
} QvCompression;

/** Decompresses `src` (an LZ4 frame or a ZSTD frame) into exactly dst_size
 * bytes; any other output size is an error. */
QV_API QvStatus qv_decompress(QvCompression codec, const uint8_t *src, size_t src_size,
                              uint8_t *dst, size_t dst_size, QvError *error);
/** Upper bound of the compressed size of n bytes. */
QV_API size_t qv_compress_bound(QvCompression codec, size_t n);
/** Compresses into dst (capacity >= qv_compress_bound); level 0 = default. */
QV_API QvStatus qv_compress(QvCompression codec, int level, const uint8_t *src, size_t n,
                            uint8_t *dst, size_t capacity, size_t *out_size, QvError *error);

#ifdef __cplusplus
}
#endif

#endif
