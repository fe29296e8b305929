/* Writing side of message framing. */
#include <stdlib.h>
#include <string.h>

#include "quiver/ipc.h"
#include "util/load.h"

const uint8_t qv_ipc_eos[8] = {0xFF, 0xFF, 0xFF, 0xFF, 0, 0, 0, 0};

size_t qv_ipc_framed_metadata_size(size_t fb_size, size_t alignment) {
  if (alignment < 8) alignment = 8;
  size_t total = 8 + fb_size;
  return (total + alignment - 1) / alignment * alignment;
}

QvStatus qv_ipc_frame_message(const QvMessage *msg, size_t alignment, uint8_t **out,
                              size_t *out_size, QvError *error) {
  *out = NULL;
  *out_size = 0;
  if (alignment != 8 && alignment != 64)
    return qv_error_set(error, QV_EARG, "message alignment must be 8 or 64, not %zu", alignment);
  uint8_t *fb;
  size_t fb_size;
  QvStatus st = qv_message_encode(msg, &fb, &fb_size, error);
  if (st) return st;
  size_t total = qv_ipc_framed_metadata_size(fb_size, alignment);
  if (total - 8 > INT32_MAX) {
    free(fb);
    return qv_error_set(error, QV_ELIMIT, "metadata of %zu bytes exceeds the int32 length field",
                        fb_size);
  }
  uint8_t *buf = calloc(1, total);
  if (buf == NULL) {
    free(fb);
    return qv_error_set(error, QV_ENOMEM, "out of memory framing a message");
  }
  qvi_st_le_u32(buf, QV_IPC_CONTINUATION);
  qvi_st_le_u32(buf + 4, (uint32_t)(total - 8));
  memcpy(buf + 8, fb, fb_size);
  free(fb);
  *out = buf;
  *out_size = total;
  return QV_OK;
}
