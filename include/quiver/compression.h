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

typedef enum QvCompression {
  QV_COMPRESSION_NONE = 0,
  QV_COMPRESSION_LZ4_FRAME = 1,
  QV_COMPRESSION_ZSTD = 2
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
