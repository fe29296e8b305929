/* libFuzzer target: Tensor messages over arbitrary bytes.
 *
 * Reads the first few messages as tensors from memory. Every tensor that is
 * accepted must be fully readable: all its elements are copied out (which
 * walks every reachable byte under ASan), and it must survive a round trip
 * through the writer unchanged (same type, shape, values and names). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "quiver/tensor_ipc.h"

/* Tensors with more elements are only checked by metadata: a broadcast
 * (zero-stride) tensor can claim far more elements than the input holds. */
#define MAX_ELEMENTS ((int64_t)1 << 20)

static volatile unsigned g_sink;

#define CHECK(cond)                                                                    \
  do {                                                                                 \
    if (!(cond)) {                                                                     \
      fprintf(stderr, "fuzz_tensor_reader: %s:%d: check failed: %s\n", __FILE__, __LINE__, \
              #cond);                                                                  \
      abort();                                                                         \
    }                                                                                  \
  } while (0)

static void check_tensor(const QvTensor *t) {
  int64_t n = qv_tensor_size(t);
  CHECK(n >= 0);
  if (n > MAX_ELEMENTS) return;
  size_t bytes = (size_t)n * qv_value_type_size(t->type);
  uint8_t *buf = malloc(bytes ? bytes : 1);
  CHECK(buf != NULL);
  QvError err;
  CHECK(qv_tensor_copy_to(t, false, buf, bytes, &err) == QV_OK);
  unsigned sum = 0;
  for (size_t i = 0; i < bytes; i++) sum += buf[i];
  g_sink += sum;
  free(buf);

  /* write and read back */
  size_t size;
  CHECK(qv_tensor_message_size(t, &size, &err) == QV_OK);
  uint8_t *msg = qv_aligned_alloc(size);
  CHECK(msg != NULL);
  QvSink *sink;
  CHECK(qv_sink_new_buffer(&sink, msg, size, &err) == QV_OK);
  CHECK(qv_tensor_write(t, sink, &err) == QV_OK);
  CHECK(qv_sink_bytes_written(sink) == (int64_t)size);
  qv_sink_free(sink);
  QvSource *src;
  CHECK(qv_source_new_memory(&src, msg, size, NULL, &err) == QV_OK);
  QvTensor back;
  QvStatus st = qv_tensor_read(src, 0, &back, &err);
  qv_source_free(src);
  if (st) fprintf(stderr, "fuzz_tensor_reader: re-read failed: %s\n", err.message);
  CHECK(st == QV_OK);
  CHECK((uintptr_t)back.data % 64 == 0);
  CHECK(back.type == t->type && back.ndim == t->ndim);
  for (int32_t i = 0; i < t->ndim; i++) CHECK(back.shape[i] == t->shape[i]);
  CHECK(qv_tensor_equals(t, &back, true));
  CHECK((t->dim_names == NULL) == (back.dim_names == NULL));
  if (t->dim_names)
    for (int32_t i = 0; i < t->ndim; i++) CHECK(strcmp(t->dim_names[i], back.dim_names[i]) == 0);
  qv_tensor_reset(&back);
  qv_aligned_free(msg);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  QvSource *src;
  QvError err;
  CHECK(qv_source_new_memory(&src, data, size, NULL, &err) == QV_OK);
  for (int64_t index = 0; index < 4; index++) {
    QvTensor t;
    QvStatus st = qv_tensor_read(src, index, &t, &err);
    if (st != QV_OK) {
      CHECK(err.message[0] != '\0');
      CHECK(t.data == NULL && t.owner == NULL && t.private_data == NULL);
      continue;
    }
    check_tensor(&t);
    qv_tensor_reset(&t);
  }
  qv_source_free(src);
  return 0;
}
