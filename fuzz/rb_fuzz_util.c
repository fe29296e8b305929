/* Helpers shared by the record batch fuzz targets (rb_fuzz_util.h). */
#define FUZZ_NAME "rb_fuzz_util"
#include "rb_fuzz_util.h"

#include <string.h>

#include "ipc/compression_internal.h"

/* keeps the sums of rb_fuzz_touch from being optimized away */
static volatile unsigned g_sink;

void rb_fuzz_touch(const QvArrayView *v) {
  unsigned sum = 0;
  for (int k = 0; k < 3; k++)
    for (int64_t i = 0; i < v->buffer_size[k]; i++) sum += v->buffer[k][i];
  for (int64_t b = 0; b < v->n_variadic; b++)
    for (int64_t i = 0; i < v->variadic_size[b]; i++) sum += v->variadic[b][i];
  g_sink += sum;
  for (int64_t c = 0; c < v->n_children; c++) rb_fuzz_touch(&v->children[c]);
  if (v->dictionary) rb_fuzz_touch(v->dictionary);
}

char **rb_fuzz_cells(const QvArrayView *root, int64_t rows) {
  char **out = calloc((size_t)(rows * root->n_children + 1), sizeof(char *));
  CHECK(out != NULL);
  QvError e;
  for (int64_t r = 0; r < rows; r++)
    for (int64_t c = 0; c < root->n_children; c++)
      CHECK(qv_array_view_format_value(&root->children[c], root->offset + r, 512,
                                       &out[r * root->n_children + c], &e) == QV_OK);
  return out;
}

void rb_fuzz_free_cells(char **c, int64_t n) {
  for (int64_t i = 0; i < n; i++) free(c[i]);
  free(c);
}

QvStatus rb_fuzz_stream_open(struct ArrowArrayStream *s, const uint8_t *data, size_t size,
                             const QvRbReadOptions *o, QvError *e) {
  QvSource *src;
  QvStatus st = qv_source_new_memory(&src, data, size, NULL, e);
  if (st) return st;
  st = qv_rb_stream_reader_new(s, src, o, e);
  qv_source_free(src);
  return st;
}

QvStatus rb_fuzz_file_open(QvRbFileReader **f, const uint8_t *data, size_t size,
                           const QvRbReadOptions *o, QvError *e) {
  QvSource *src;
  QvStatus st = qv_source_new_memory(&src, data, size, NULL, e);
  if (st) return st;
  st = qv_rb_file_reader_new(f, src, o, e);
  qv_source_free(src);
  return st;
}

void rb_fuzz_pick(const uint8_t *data, size_t size, QvRbReadOptions *read,
                  QvRbWriteOptions *write) {
  qvi_codec_set_parallel_min(0);
  unsigned b = size ? data[size / 2] : 0;
  read->threads = 1 + (int)(b % 3);
  memset(write, 0, sizeof *write);
  write->threads = 1 + (int)(b / 3 % 3);
  static const QvCompression codecs[] = {QV_COMPRESSION_NONE, QV_COMPRESSION_LZ4_FRAME,
                                         QV_COMPRESSION_ZSTD};
  write->compression = codecs[b / 9 % 3];
}
