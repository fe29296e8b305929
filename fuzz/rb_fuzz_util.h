/* Helpers shared by the record batch fuzz targets (fuzz_stream_reader.c,
 * fuzz_file_reader.c). Define FUZZ_NAME before including. */
#ifndef QV_FUZZ_RB_UTIL_H
#define QV_FUZZ_RB_UTIL_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "quiver/recordbatch_ipc.h"

#define MAX_BATCHES 32
#define MAX_ROWS 16

static volatile unsigned g_sink;

#define CHECK(cond)                                                                         \
  do {                                                                                      \
    if (!(cond)) {                                                                          \
      fprintf(stderr, FUZZ_NAME ": %s:%d: check failed: %s\n", __FILE__, __LINE__, \
              #cond);                                                                       \
      abort();                                                                              \
    }                                                                                       \
  } while (0)

static void touch(const QvArrayView *v) {
  unsigned sum = 0;
  for (int k = 0; k < 3; k++)
    for (int64_t i = 0; i < v->buffer_size[k]; i++) sum += v->buffer[k][i];
  for (int64_t b = 0; b < v->n_variadic; b++)
    for (int64_t i = 0; i < v->variadic_size[b]; i++) sum += v->variadic[b][i];
  g_sink += sum;
  for (int64_t c = 0; c < v->n_children; c++) touch(&v->children[c]);
  if (v->dictionary) touch(v->dictionary);
}

static char **cells(const QvArrayView *root, int64_t rows) {
  char **out = calloc((size_t)(rows * root->n_children + 1), sizeof(char *));
  CHECK(out != NULL);
  QvError e;
  for (int64_t r = 0; r < rows; r++)
    for (int64_t c = 0; c < root->n_children; c++)
      CHECK(qv_array_view_format_value(&root->children[c], root->offset + r, 512,
                                       &out[r * root->n_children + c], &e) == QV_OK);
  return out;
}

static void free_cells(char **c, int64_t n) {
  for (int64_t i = 0; i < n; i++) free(c[i]);
  free(c);
}

#endif
