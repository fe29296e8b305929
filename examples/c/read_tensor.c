/* Reads a Tensor message zero-copy and prints it.
 *
 *   read_tensor FILE [INDEX]
 *
 * From a path, quiver maps only the chosen message's body: the values are
 * read straight from the file mapping, whatever the tensor's layout (this
 * one is column-major as Arrow C++ wrote it). */
#include <quiver/quiver.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  if (argc < 2 || argc > 3) {
    fprintf(stderr, "usage: %s FILE [INDEX]\n", argv[0]);
    return 2;
  }
  int64_t index = argc == 3 ? strtoll(argv[2], NULL, 10) : 0;
  QvError err;
  qv_error_clear(&err);
  QvSource *src = NULL;
  QvTensor t = {0};
  QvStatus st = qv_source_new_path(&src, argv[1], &err);
  if (st == QV_OK) st = qv_tensor_read(src, index, NULL, &t, &err);
  qv_source_free(src); /* the tensor keeps the mapping alive */
  if (st != QV_OK) {
    fprintf(stderr, "%s: %s\n", argv[0], err.message);
    return 1;
  }
  printf("%s tensor, shape [", qv_arrow_type_name(t.type));
  for (int64_t i = 0; i < t.ndim; i++) printf("%s%" PRId64, i ? ", " : "", t.shape[i]);
  printf("], %s\n", qv_tensor_is_row_major(&t) ? "row-major" : qv_tensor_is_column_major(&t) ? "column-major" : "strided");
  if (t.ndim == 2) {
    int64_t at[2];
    for (at[0] = 0; at[0] < t.shape[0]; at[0]++) {
      for (at[1] = 0; at[1] < t.shape[1]; at[1]++) {
        double v;
        if ((st = qv_tensor_get_double(&t, at, &v, &err)) != QV_OK) break;
        printf("%s%g", at[1] ? " " : "", v);
      }
      printf("\n");
      if (st != QV_OK) break;
    }
  }
  qv_tensor_reset(&t);
  if (st != QV_OK) {
    fprintf(stderr, "%s: %s\n", argv[0], err.message);
    return 1;
  }
  return 0;
}
