/* Converts a dense Tensor message to a sparse tensor and writes it.
 *
 *   convert_sparse IN OUT [coo|csr|csc|csf]
 *
 * The conversion reads the dense tensor in memory order (any layout) and
 * produces the sparse buffers once; the writer replaces OUT atomically (a
 * temporary file renamed over it), so a failure leaves OUT as it was. The
 * result is read back and compared with the input. */
#include <quiver/quiver.h>

#include <inttypes.h>
#include <stdio.h>

int main(int argc, char **argv) {
  if (argc < 3 || argc > 4) {
    fprintf(stderr, "usage: %s IN OUT [coo|csr|csc|csf]\n", argv[0]);
    return 2;
  }
  QvError err;
  qv_error_clear(&err);
  QvSparseFormat format = QV_SPARSE_CSR;
  if (argc == 4 && qv_sparse_format_parse(argv[3], &format, &err) != QV_OK) {
    fprintf(stderr, "%s: %s\n", argv[0], err.message);
    return 2;
  }
  QvSource *src = NULL;
  QvSink *sink = NULL;
  QvTensor dense = {0};
  QvSparseTensor sparse = {0}, back = {0};
  QvStatus st = qv_source_new_path(&src, argv[1], &err);
  if (st == QV_OK) st = qv_tensor_read(src, 0, NULL, &dense, &err);
  qv_source_free(src);
  src = NULL;
  /* NULL options: int64 indices, canonical order */
  if (st == QV_OK) st = qv_sparse_from_dense(&dense, format, NULL, &sparse, &err);
  if (st == QV_OK) st = qv_sink_new_path(&sink, argv[2], 0, &err);
  if (st == QV_OK) st = qv_sparse_write(&sparse, sink, NULL, &err);
  if (st == QV_OK) st = qv_sink_finish(sink, &err);
  qv_sink_free(sink);
  if (st == QV_OK) st = qv_source_new_path(&src, argv[2], &err);
  if (st == QV_OK) st = qv_sparse_read(src, 0, NULL, &back, &err);
  qv_source_free(src);
  if (st == QV_OK && !qv_sparse_equal_dense(&back, &dense))
    st = qv_error_set(&err, QV_EINVAL, "%s does not hold the values of %s", argv[2], argv[1]);
  if (st == QV_OK)
    printf("%s: %s, %" PRId64 " non-zeros of %" PRId64 " (density %.3f)\n", argv[2],
           qv_sparse_format_name(back.format), back.nnz, qv_tensor_n_elements(&dense),
           qv_sparse_density(&back));
  qv_sparse_reset(&back);
  qv_sparse_reset(&sparse);
  qv_tensor_reset(&dense);
  if (st != QV_OK) {
    fprintf(stderr, "%s: %s\n", argv[0], err.message);
    return 1;
  }
  return 0;
}
