/* libFuzzer target: the SciPy .npz reader over arbitrary bytes.
 *
 * Every archive that is accepted must hold a valid 2-D sparse tensor that
 * densifies (when small) consistently and survives a round trip through the
 * .npz writer unchanged (float16 too, written as SciPy's save_npz writes
 * it). Accepted archives are read again on two threads
 * with stored members' CRCs checked: the same tensor or a CRC error. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "quiver/npz.h"
#include "quiver/sparse_ipc.h"

#define MAX_DENSE ((int64_t)1 << 20)

#define CHECK(cond)                                                                  \
  do {                                                                               \
    if (!(cond)) {                                                                   \
      fprintf(stderr, "fuzz_npz: %s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
      abort();                                                                       \
    }                                                                                \
  } while (0)

static QvStatus read_memory(const uint8_t *data, size_t size, QvSparseTensor *t, QvError *err) {
  QvSource *src;
  QvStatus st = qv_source_new_memory(&src, data, size, NULL, err);
  if (st) return st;
  st = qv_npz_read(src, NULL, t, NULL, err);
  qv_source_free(src);
  return st;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  QvSparseTensor t;
  QvError err;
  QvStatus st = read_memory(data, size, &t, &err);
  if (st != QV_OK) {
    CHECK(err.message[0] != '\0');
    CHECK(t.values == NULL && t.owner == NULL && t.private_data == NULL);
    return 0;
  }
  /* two threads and stored CRCs checked: the same tensor, or a CRC error
   * (a zero-copy read leaves stored members' CRCs alone by default) */
  {
    QvSource *src;
    CHECK(qv_source_new_memory(&src, data, size, NULL, &err) == QV_OK);
    QvNpzReadOptions o = {.struct_size = sizeof o, .threads = 2, .verify_crc = true};
    QvSparseTensor again;
    st = qv_npz_read(src, &o, &again, NULL, &err);
    qv_source_free(src);
    if (st == QV_OK) {
      CHECK(qv_sparse_equal(&t, &again));
      qv_sparse_reset(&again);
    } else {
      CHECK(st == QV_EINVAL && strstr(err.message, "CRC-32") != NULL);
    }
  }
  /* misaligned stored members kept in place: the same tensor, which the
   * IPC writer (unaligned loads, a seal or its own validation) writes */
  {
    QvSource *src;
    CHECK(qv_source_new_memory(&src, data, size, NULL, &err) == QV_OK);
    QvNpzReadOptions o = {.struct_size = sizeof o, .keep_misaligned = true};
    QvSparseTensor kept;
    st = qv_npz_read(src, &o, &kept, NULL, &err);
    qv_source_free(src);
    CHECK(st == QV_OK);
    CHECK(qv_sparse_equal(&t, &kept));
    QvSink *sink;
    CHECK(qv_sink_new_memory(&sink, &err) == QV_OK);
    CHECK(qv_sparse_write(&kept, sink, NULL, &err) == QV_OK);
    qv_sink_free(sink);
    qv_sparse_reset(&kept);
  }
  CHECK(t.ndim == 2);
  CHECK(t.format == QV_SPARSE_CSR || t.format == QV_SPARSE_CSC || t.format == QV_SPARSE_COO);
  CHECK(qv_sparse_validate(&t, &err) == QV_OK);
  if (t.shape[0] == 0 || t.shape[1] == 0 || t.shape[0] <= MAX_DENSE / t.shape[1]) {
    QvTensor dense;
    CHECK(qv_sparse_to_dense(&t, NULL, &dense, &err) == QV_OK);
    CHECK(qv_sparse_equal_dense(&t, &dense));
    qv_tensor_reset(&dense);
  }
  QvSink *sink;
  CHECK(qv_sink_new_memory(&sink, &err) == QV_OK);
  /* every value type is written, float16 as SciPy's save_npz writes it */
  st = qv_npz_write(&t, sink, NULL, &err);
  CHECK(st == QV_OK);
  uint8_t *out;
  size_t n;
  CHECK(qv_sink_memory_take(sink, &out, &n, &err) == QV_OK);
  QvSparseTensor back;
  st = read_memory(out, n, &back, &err);
  if (st) fprintf(stderr, "fuzz_npz: re-read failed: %s\n", err.message);
  CHECK(st == QV_OK);
  CHECK(back.format == t.format && back.value_type == t.value_type);
  CHECK(back.index_type == t.index_type && back.nnz == t.nnz);
  CHECK(back.shape[0] == t.shape[0] && back.shape[1] == t.shape[1]);
  CHECK(qv_sparse_equal(&t, &back));
  qv_sparse_reset(&back);
  qv_free(out);
  qv_sink_free(sink);
  qv_sparse_reset(&t);
  return 0;
}
