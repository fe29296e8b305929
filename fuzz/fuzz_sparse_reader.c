/* libFuzzer target: SparseTensor messages over arbitrary bytes.
 *
 * Reads the first few messages as sparse tensors from memory, and from the
 * same bytes as a file (pread + one body mapping), which must agree. Every tensor
 * that is accepted must be consistent: it validates again, densifies (when
 * its dense form is small) into a buffer that agrees with it, converts to a
 * canonical COO holding the same values, and survives a round trip through
 * the writer (both CSF length conventions) unchanged. */
#define _GNU_SOURCE /* memfd_create */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "quiver/sparse_ipc.h"

#define NAME "fuzz_sparse_reader"

/* Dense forms up to this many elements are built. */
#define MAX_DENSE ((int64_t)1 << 20)
/* CSR/CSC conversions allocate major + 1 indptr entries. */
#define MAX_MAJOR ((int64_t)1 << 16)

#define CHECK(cond)                                                                     \
  do {                                                                                  \
    if (!(cond)) {                                                                      \
      fprintf(stderr, "fuzz_sparse_reader: %s:%d: check failed: %s\n", __FILE__, __LINE__, \
              #cond);                                                                   \
      abort();                                                                          \
    }                                                                                   \
  } while (0)

static int64_t dense_size(const QvSparseTensor *t) {
  int64_t n = 1;
  for (int32_t d = 0; d < t->ndim; d++) {
    if (t->shape[d] == 0) return 0;
    if (t->shape[d] > MAX_DENSE || n > MAX_DENSE / t->shape[d]) return MAX_DENSE + 1;
    n *= t->shape[d];
  }
  return n;
}

static void roundtrip(const QvSparseTensor *t, QvCsfLengths lengths) {
  QvSparseWriteOptions o = {sizeof o, lengths};
  QvError err;
  size_t size;
  CHECK(qv_sparse_write_size(t, &o, &size, &err) == QV_OK);
  uint8_t *buf = qv_aligned_alloc(size);
  CHECK(buf != NULL);
  QvSink *sink;
  CHECK(qv_sink_new_buffer(&sink, buf, size, &err) == QV_OK);
  CHECK(qv_sparse_write(t, sink, &o, &err) == QV_OK);
  CHECK(qv_sink_bytes_written(sink) == (int64_t)size);
  qv_sink_free(sink);
  QvSource *src;
  CHECK(qv_source_new_memory(&src, buf, size, NULL, &err) == QV_OK);
  QvSparseTensor back;
  QvStatus st = qv_sparse_read(src, 0, NULL, &back, &err);
  qv_source_free(src);
  if (st) fprintf(stderr, "fuzz_sparse_reader: re-read failed: %s\n", err.message);
  CHECK(st == QV_OK);
  CHECK(back.format == t->format && back.value_type == t->value_type);
  CHECK(back.index_type == t->index_type && back.nnz == t->nnz && back.ndim == t->ndim);
  for (int32_t d = 0; d < t->ndim; d++) CHECK(back.shape[d] == t->shape[d]);
  CHECK(qv_sparse_equal(t, &back));
  if (t->nnz > 0) CHECK((uintptr_t)back.values % 64 == 0);
  qv_sparse_reset(&back);
  qv_free(buf);
}

static void check_tensor(const QvSparseTensor *t) {
  QvError err;
  CHECK(qv_sparse_validate(t, &err) == QV_OK);
  int64_t n = dense_size(t);
  if (n <= MAX_DENSE) {
    size_t bytes = (size_t)n * qv_arrow_type_size(t->value_type);
    uint8_t *dense = malloc(bytes ? bytes : 1);
    CHECK(dense != NULL);
    CHECK(qv_sparse_to_dense_into(t, dense, bytes, NULL, &err) == QV_OK);
    QvTensor view;
    CHECK(qv_tensor_init(&view, &(QvTensorDesc){.type = t->value_type, .ndim = t->ndim,
                                                .shape = t->shape, .data = dense,
                                                .data_size = (int64_t)bytes}, &err) == QV_OK);
    CHECK(qv_sparse_equal_dense(t, &view));
    qv_tensor_reset(&view);
    free(dense);
  }
  QvSparseTensor coo;
  QvSparseOptions o = {.index_type = QV_ARROW_INT64};
  if (qv_sparse_convert(t, QV_SPARSE_COO, &o, &coo, &err) == QV_OK) {
    CHECK(coo.is_canonical);
    CHECK(qv_sparse_equal(t, &coo));
    qv_sparse_reset(&coo);
  } else {
    CHECK(err.message[0] != '\0');
  }
  if (t->ndim == 2 && t->shape[0] <= MAX_MAJOR && t->shape[1] <= MAX_MAJOR) {
    QvSparseTensor csr;
    if (qv_sparse_convert(t, QV_SPARSE_CSR, &o, &csr, &err) == QV_OK) {
      CHECK(qv_sparse_equal(t, &csr));
      qv_sparse_reset(&csr);
    }
  }
  roundtrip(t, QV_CSF_LENGTHS_ELEMENTS);
  if (t->format == QV_SPARSE_CSF) roundtrip(t, QV_CSF_LENGTHS_BYTES);
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
  for (int64_t index = 0; index < 3; index++) {
    QvSparseTensor t;
    QvStatus st = qv_sparse_read(src, index, NULL, &t, &err);
    if (file) {
      QvSparseTensor tp;
      QvError perr;
      CHECK(qv_sparse_read(file, index, NULL, &tp, &perr) == st);
      if (st == QV_OK) CHECK(qv_sparse_equal(&t, &tp));
      qv_sparse_reset(&tp);
    }
    if (st != QV_OK) {
      CHECK(err.message[0] != '\0');
      CHECK(t.values == NULL && t.owner == NULL && t.private_data == NULL);
      continue;
    }
    check_tensor(&t);
    qv_sparse_reset(&t);
  }
  qv_source_free(src);
  qv_source_free(file);
  return 0;
}
