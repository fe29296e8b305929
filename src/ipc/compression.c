/* Body compression codecs of the IPC format: LZ4 frames (liblz4 frame API)
 * and ZSTD frames (libzstd). Decompression must produce exactly the length
 * the buffer declares, so a hostile buffer can never make us write or
 * allocate more than the caller sized for. */
#include <lz4frame.h>
#include <string.h>
#include <zstd.h>
#include <zstd_errors.h>

#include "quiver/compression.h"

static QvStatus lz4_decompress(const uint8_t *src, size_t src_size, uint8_t *dst,
                               size_t dst_size, QvError *error) {
  LZ4F_dctx *ctx = NULL;
  if (LZ4F_isError(LZ4F_createDecompressionContext(&ctx, LZ4F_VERSION)))
    return qv_error_set(error, QV_ENOMEM, "LZ4: cannot create a decompression context");
  size_t in_done = 0, out_done = 0;
  QvStatus st = QV_OK;
  for (;;) {
    size_t in = src_size - in_done, out = dst_size - out_done;
    size_t r = LZ4F_decompress(ctx, dst + out_done, &out, src + in_done, &in, NULL);
    if (LZ4F_isError(r)) {
      st = qv_error_set(error, QV_EINVAL, "LZ4 frame is corrupt: %s", LZ4F_getErrorName(r));
      break;
    }
    in_done += in;
    out_done += out;
    if (r == 0) { /* frame complete */
      if (out_done != dst_size)
        st = qv_error_set(error, QV_EINVAL,
                          "LZ4 frame decompresses to %zu bytes, the buffer declares %zu",
                          out_done, dst_size);
      else if (in_done != src_size)
        st = qv_error_set(error, QV_EINVAL, "LZ4 frame is followed by %zu extra bytes",
                          src_size - in_done);
      break;
    }
    if (in == 0 && out == 0) {
      st = out_done == dst_size
               ? qv_error_set(error, QV_EINVAL,
                              "LZ4 frame decompresses to more than the declared %zu bytes",
                              dst_size)
               : qv_error_set(error, QV_EINVAL,
                              "LZ4 frame is truncated (%zu of %zu bytes decompressed)",
                              out_done, dst_size);
      break;
    }
  }
  LZ4F_freeDecompressionContext(ctx);
  return st;
}

static QvStatus zstd_decompress(const uint8_t *src, size_t src_size, uint8_t *dst,
                                size_t dst_size, QvError *error) {
  unsigned long long declared = ZSTD_getFrameContentSize(src, src_size);
  if (declared == ZSTD_CONTENTSIZE_ERROR)
    return qv_error_set(error, QV_EINVAL, "ZSTD frame header is invalid");
  if (declared != ZSTD_CONTENTSIZE_UNKNOWN && declared != dst_size)
    return qv_error_set(error, QV_EINVAL,
                        "ZSTD frame holds %llu bytes, the buffer declares %zu", declared,
                        dst_size);
  size_t r = ZSTD_decompress(dst, dst_size, src, src_size);
  if (ZSTD_isError(r)) {
    if (ZSTD_getErrorCode(r) == ZSTD_error_dstSize_tooSmall)
      return qv_error_set(error, QV_EINVAL,
                          "ZSTD frame decompresses to more than the declared %zu bytes",
                          dst_size);
    return qv_error_set(error, QV_EINVAL, "ZSTD frame is corrupt: %s", ZSTD_getErrorName(r));
  }
  if (r != dst_size)
    return qv_error_set(error, QV_EINVAL, "ZSTD frame decompresses to %zu bytes, the buffer declares %zu",
                        r, dst_size);
  return QV_OK;
}

QvStatus qv_decompress(QvCompression codec, const uint8_t *src, size_t src_size,
                          uint8_t *dst, size_t dst_size, QvError *error) {
  switch (codec) {
    case QV_COMPRESSION_LZ4_FRAME: return lz4_decompress(src, src_size, dst, dst_size, error);
    case QV_COMPRESSION_ZSTD: return zstd_decompress(src, src_size, dst, dst_size, error);
    default: return qv_error_set(error, QV_EARG, "unknown compression codec %d", (int)codec);
  }
}

static LZ4F_preferences_t lz4_prefs(int level, size_t n) {
  LZ4F_preferences_t p;
  memset(&p, 0, sizeof p);
  p.compressionLevel = level;
  p.frameInfo.contentSize = n;
  return p;
}

size_t qv_compress_bound(QvCompression codec, size_t n) {
  if (codec == QV_COMPRESSION_LZ4_FRAME) {
    LZ4F_preferences_t p = lz4_prefs(0, n);
    return LZ4F_compressFrameBound(n, &p);
  }
  if (codec == QV_COMPRESSION_ZSTD) return ZSTD_compressBound(n);
  return n;
}

QvStatus qv_compress(QvCompression codec, int level, const uint8_t *src, size_t n,
                        uint8_t *dst, size_t capacity, size_t *out_size, QvError *error) {
  *out_size = 0;
  if (codec == QV_COMPRESSION_LZ4_FRAME) {
    LZ4F_preferences_t p = lz4_prefs(level, n);
    size_t r = LZ4F_compressFrame(dst, capacity, src, n, &p);
    if (LZ4F_isError(r))
      return qv_error_set(error, QV_EINVAL, "LZ4 compression failed: %s", LZ4F_getErrorName(r));
    *out_size = r;
    return QV_OK;
  }
  if (codec == QV_COMPRESSION_ZSTD) {
    size_t r = ZSTD_compress(dst, capacity, src, n, level ? level : 1);
    if (ZSTD_isError(r))
      return qv_error_set(error, QV_EINVAL, "ZSTD compression failed: %s", ZSTD_getErrorName(r));
    *out_size = r;
    return QV_OK;
  }
  return qv_error_set(error, QV_EARG, "unknown compression codec %d", (int)codec);
}
