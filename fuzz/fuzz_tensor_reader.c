/* libFuzzer target: Tensor messages over arbitrary bytes.
 *
 * Reads the first few messages as tensors from memory, and from the same
 * bytes as a file (pread + one body mapping), which must agree. Every tensor that is
 * accepted must be fully readable: all its elements are copied out (which
 * walks every reachable byte under ASan), and it must survive a round trip
 * through the writer unchanged (same type, shape, values and names). */
#define _GNU_SOURCE /* memfd_create */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "quiver/tensor_ipc.h"

#define NAME "fuzz_tensor_reader"

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
  int64_t n = qv_tensor_n_elements(t);
  CHECK(n >= 0);
  if (n > MAX_ELEMENTS) return;
  size_t bytes = (size_t)n * qv_arrow_type_size(t->type);
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
  CHECK(qv_tensor_write_size(t, NULL, &size, &err) == QV_OK);
  uint8_t *msg = qv_aligned_alloc(size);
  CHECK(msg != NULL);
  QvSink *sink;
  CHECK(qv_sink_new_buffer(&sink, msg, size, &err) == QV_OK);
  CHECK(qv_tensor_write(t, sink, NULL, &err) == QV_OK);
  CHECK(qv_sink_bytes_written(sink) == (int64_t)size);
  qv_sink_free(sink);
  QvSource *src;
  CHECK(qv_source_new_memory(&src, msg, size, NULL, &err) == QV_OK);
  QvTensor back;
  QvStatus st = qv_tensor_read(src, 0, NULL, &back, &err);
  qv_source_free(src);
  if (st) fprintf(stderr, "fuzz_tensor_reader: re-read failed: %s\n", err.message);
  CHECK(st == QV_OK);
  CHECK((uintptr_t)back.data % 64 == 0);
  CHECK(back.type == t->type && back.ndim == t->ndim);
  for (int32_t i = 0; i < t->ndim; i++) CHECK(back.shape[i] == t->shape[i]);
  CHECK(qv_tensor_equal(t, &back, true));
  CHECK((t->dim_names == NULL) == (back.dim_names == NULL));
  if (t->dim_names)
    for (int32_t i = 0; i < t->ndim; i++) CHECK(strcmp(t->dim_names[i], back.dim_names[i]) == 0);
  qv_tensor_reset(&back);
  qv_free(msg);
}

/* The same bytes as a file opened by path (a memfd), which the readers take
 * through pread and a mapping of only the chosen body: it must agree with
 * memory on every input. NULL when no such file can be made. */
static QvSource *path_source(const uint8_t *data, size_t size) {
  static int fd = -2;
  if (fd == -2) fd = memfd_create(NAME, MFD_CLOEXEC);
  if (fd < 0 || ftruncate(fd, 0) != 0) return NULL;
  for (size_t done = 0; done < size;) {
    ssize_t k = pwrite(fd, data + done, size - done, (off_t)done);
    if (k <= 0) return NULL;
    done += (size_t)k;
  }
  char path[64];
  snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
  QvSource *s;
  return qv_source_new_path(&s, path, NULL) == QV_OK ? s : NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  QvSource *src;
  QvError err;
  CHECK(qv_source_new_memory(&src, data, size, NULL, &err) == QV_OK);
  QvSource *file = path_source(data, size);
  for (int64_t index = 0; index < 4; index++) {
    QvTensor t;
    QvStatus st = qv_tensor_read(src, index, NULL, &t, &err);
    if (file) {
      QvTensor tp;
      QvError perr;
      CHECK(qv_tensor_read(file, index, NULL, &tp, &perr) == st);
      if (st == QV_OK) {
        CHECK(t.type == tp.type && t.ndim == tp.ndim && t.data_size == tp.data_size);
        for (int32_t i = 0; i < t.ndim; i++)
          CHECK(t.shape[i] == tp.shape[i] && t.strides[i] == tp.strides[i]);
        /* a broadcast tensor may claim more elements than can be compared */
        if (qv_tensor_n_elements(&t) <= MAX_ELEMENTS) CHECK(qv_tensor_equal(&t, &tp, true));
      }
      qv_tensor_reset(&tp);
    }
    if (st != QV_OK) {
      CHECK(err.message[0] != '\0');
      CHECK(t.data == NULL && t.owner == NULL && t.private_data == NULL);
      continue;
    }
    check_tensor(&t);
    qv_tensor_reset(&t);
  }
  qv_source_free(src);
  qv_source_free(file);
  return 0;
}
