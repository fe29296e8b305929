/* libFuzzer target: the .npy reader over arbitrary bytes.
 *
 * An accepted array must be fully readable (every element copied out) and
 * must survive a round trip through the .npy writer unchanged. The header
 * parser alone must agree with the reader on whether the header is valid. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "numpy/npy_header.h"
#include "quiver/npy.h"

#define MAX_ELEMENTS ((int64_t)1 << 20)

static volatile unsigned g_sink;

#define CHECK(cond)                                                                        \
  do {                                                                                     \
    if (!(cond)) {                                                                         \
      fprintf(stderr, "fuzz_npy: %s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
      abort();                                                                             \
    }                                                                                      \
  } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  QvNpyHeader h;
  QvError err;
  QvStatus hst = qv_npy_parse_header(data, size, &h, &err);
  QvTensor t;
  size_t consumed = 0;
  /* what qv_npy_read does with a memory source, plus where the array ends */
  QvStatus st = qvi_npy_read_bytes(data, size, NULL, &t, &consumed, &err);
  if (st != QV_OK) {
    CHECK(err.message[0] != '\0');
    CHECK(t.data == NULL && t.private_data == NULL);
    /* a valid header can still fail on short data, never the reverse */
    if (hst == QV_OK) CHECK(st == QV_ETRUNCATED);
    return 0;
  }
  CHECK(hst == QV_OK);
  CHECK(consumed == h.data_offset + (size_t)h.data_size && consumed <= size);
  CHECK(t.type == h.type && t.ndim == h.ndim);
  int64_t n = qv_tensor_n_elements(&t);
  if (n <= MAX_ELEMENTS) {
    size_t bytes = (size_t)n * qv_arrow_type_size(t.type);
    uint8_t *buf = malloc(bytes ? bytes : 1);
    CHECK(buf != NULL);
    CHECK(qv_tensor_copy_to(&t, false, buf, bytes, &err) == QV_OK);
    unsigned sum = 0;
    for (size_t i = 0; i < bytes; i++) sum += buf[i];
    g_sink += sum;
    free(buf);

    size_t out_size;
    CHECK(qv_npy_write_size(&t, NULL, &out_size, &err) == QV_OK);
    uint8_t *out = malloc(out_size);
    CHECK(out != NULL);
    QvSink *sink;
    CHECK(qv_sink_new_buffer(&sink, out, out_size, &err) == QV_OK);
    CHECK(qv_npy_write(&t, sink, NULL, &err) == QV_OK);
    CHECK(qv_sink_bytes_written(sink) == (int64_t)out_size);
    qv_sink_free(sink);
    QvTensor back;
    QvSource *src;
    CHECK(qv_source_new_memory(&src, out, out_size, NULL, &err) == QV_OK);
    CHECK(qv_npy_read(src, NULL, &back, &err) == QV_OK);
    qv_source_free(src);
    CHECK(back.type == t.type && back.ndim == t.ndim);
    for (int32_t i = 0; i < t.ndim; i++) CHECK(back.shape[i] == t.shape[i]);
    CHECK(qv_tensor_equal(&t, &back, true));
    qv_tensor_reset(&back);
    free(out);
  }
  qv_tensor_reset(&t);
  return 0;
}
