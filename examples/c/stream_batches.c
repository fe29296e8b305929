/* Streams the record batches of an Arrow IPC stream or file, one at a time,
 * and writes them again as a zstd-compressed stream.
 *
 *   stream_batches IN OUT
 *
 * The reader is an ArrowArrayStream (the Arrow C Stream Interface), so the
 * same loop works with any producer; each batch is an ArrowArray whose
 * buffers view the mapped input. */
#include <quiver/quiver.h>

#include <inttypes.h>
#include <stdio.h>

static QvStatus count(QvSource *src, QvError *err) {
  struct ArrowArrayStream stream = {0};
  struct ArrowSchema schema = {0};
  QvStatus st = qv_rb_stream_reader_new(&stream, src, NULL, err);
  if (st == QV_OK) st = qv_rb_stream_get_schema(&stream, &schema, err);
  if (st == QV_OK) {
    printf("%" PRId64 " columns:", schema.n_children);
    for (int64_t i = 0; i < schema.n_children; i++)
      printf(" %s (%s)", schema.children[i]->name, schema.children[i]->format);
    printf("\n");
  }
  int64_t batches = 0, rows = 0;
  while (st == QV_OK) {
    struct ArrowArray batch = {0};
    st = qv_rb_stream_get_next(&stream, &batch, err);
    if (st != QV_OK) break;
    batches++;
    rows += batch.length;
    batch.release(&batch);
  }
  if (st == QV_EOS) {
    st = QV_OK;
    printf("%" PRId64 " batches, %" PRId64 " rows\n", batches, rows);
  }
  if (schema.release) schema.release(&schema);
  if (stream.release) stream.release(&stream);
  return st;
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s IN OUT\n", argv[0]);
    return 2;
  }
  QvError err;
  qv_error_clear(&err);
  QvSource *src = NULL;
  QvSink *sink = NULL;
  QvStatus st = qv_source_new_path(&src, argv[1], &err);
  if (st == QV_OK) st = count(src, &err);
  /* the same batches through the writer: qv_rb_write_all pulls them from a
   * new stream and writes each as it arrives */
  struct ArrowArrayStream stream = {0};
  QvRbWriteOptions wo = {.struct_size = sizeof wo, .format = QV_IPC_FORMAT_STREAM,
                         .compression = QV_COMPRESSION_ZSTD};
  if (st == QV_OK) st = qv_rb_stream_reader_new(&stream, src, NULL, &err);
  if (st == QV_OK) st = qv_sink_new_path(&sink, argv[2], 0, &err);
  if (st == QV_OK) st = qv_rb_write_all(&stream, sink, &wo, &err);
  if (st == QV_OK) st = qv_sink_finish(sink, &err);
  qv_sink_free(sink);
  if (stream.release) stream.release(&stream);
  qv_source_free(src);
  src = NULL;
  /* and read back */
  if (st == QV_OK) st = qv_source_new_path(&src, argv[2], &err);
  if (st == QV_OK) st = count(src, &err);
  qv_source_free(src);
  if (st != QV_OK) {
    fprintf(stderr, "%s: %s\n", argv[0], err.message);
    return 1;
  }
  return 0;
}
