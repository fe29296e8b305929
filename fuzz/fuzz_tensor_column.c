/* libFuzzer target: tensor extension metadata and the column -> tensor bridge.
 *
 * Input: byte 0 picks the kind (and for variable shape the ndim), byte 1 the
 * number of cells (0..15), byte 2 the validity bits of the first 8 cells;
 * then the metadata JSON up to a NUL byte; the rest is cell data.
 * Accepted metadata must survive qv_tensor_column_type_to_json and parse to
 * the same type; a fixed shape column over the data bytes must stack (nulls
 * filled) to a tensor whose every row equals the cell view of that row. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "quiver/tensor_column.h"

#define CHECK(cond)                                                                         \
  do {                                                                                      \
    if (!(cond)) {                                                                          \
      fprintf(stderr, "fuzz_tensor_column: %s:%d: check failed: %s\n", __FILE__, __LINE__, \
              #cond);                                                                       \
      abort();                                                                              \
    }                                                                                       \
  } while (0)

static void same_type(const QvTensorColumnType *a, const QvTensorColumnType *b) {
  CHECK(a->ndim == b->ndim && a->value_type == b->value_type);
  CHECK(a->has_permutation == b->has_permutation);
  CHECK((a->dim_names == NULL) == (b->dim_names == NULL));
  for (int32_t k = 0; k < a->ndim; k++) {
    CHECK(a->shape[k] == b->shape[k] && a->permutation[k] == b->permutation[k]);
    if (a->dim_names) CHECK(strcmp(a->dim_names[k], b->dim_names[k]) == 0);
  }
}

static void bridge(const QvTensorColumnType *type, int64_t n, uint8_t valid, const uint8_t *data,
                   size_t size) {
  int64_t cell = qv_tensor_column_type_cell_size(type);
  if (cell < 0 || cell > 4096 || type->ndim >= QV_TENSOR_MAX_NDIM) return;
  QvTensorColumnType t = *type;
  t.private_data = NULL; /* borrowed names: never freed through t */
  t.value_type = QV_VALUE_FLOAT32;
  if ((size_t)(n * cell * 4) > size) return;
  QvError err;
  struct ArrowSchema f;
  if (qv_tensor_column_schema_init(&f, "x", &t, NULL, &err) != QV_OK) return;
  QvArrayView v;
  CHECK(qv_array_view_init(&v, &f, &err) == QV_OK);
  uint8_t bits[2] = {valid, 0xff};
  int64_t nulls = 0;
  for (int64_t i = 0; i < n; i++) nulls += !(bits[i / 8] >> (i % 8) & 1);
  float *values = malloc((size_t)(n * cell * 4) + 4);
  memcpy(values, data, (size_t)(n * cell * 4));
  v.length = n;
  v.null_count = nulls;
  v.buffer[0] = bits;
  v.buffer_size[0] = 2;
  v.children[0].length = n * cell;
  v.children[0].null_count = 0;
  v.children[0].buffer[1] = (const uint8_t *)values;
  v.children[0].buffer_size[1] = n * cell * 4;
  struct ArrowArray a;
  CHECK(qv_array_export_view(&v, NULL, &a, &err) == QV_OK);
  qv_array_view_reset(&v);
  QvTensorColumn col;
  CHECK(qv_tensor_column_init(&col, &f, &a, NULL, &err) == QV_OK);
  CHECK(col.null_count == nulls);
  QvTensor s;
  QvTensorStackOptions o = {.struct_size = sizeof o, .null_fill = true};
  /* Stacking may only fail when [n, ...shape] breaks the tensor rule that the
   * non-zero extents' byte size fits in int64 (a shape with a zero extent is
   * valid metadata whatever its other extents are). */
  bool overflows = false;
  int64_t bytes = 4;
  if (n > 0) overflows |= __builtin_mul_overflow(bytes, n, &bytes);
  for (int32_t d = 0; d < t.ndim; d++)
    if (t.shape[d] > 0) overflows |= __builtin_mul_overflow(bytes, t.shape[d], &bytes);
  QvStatus stacked = qv_tensor_column_stack(&col, &o, &s, &err);
  if (overflows && stacked != QV_OK) {
    CHECK(err.code == stacked && err.message[0] != '\0');
    qv_tensor_column_reset(&col);
    f.release(&f);
    free(values);
    return;
  }
  CHECK(stacked == QV_OK);
  CHECK(s.ndim == t.ndim + 1 && s.shape[0] == n);
  for (int64_t i = 0; i < n; i++) {
    QvTensor c, row;
    QvStatus st = qv_tensor_column_cell(&col, i, &c, &err);
    CHECK((st == QV_OK) == !qv_tensor_column_is_null(&col, i));
    QvTensorDesc d = {.type = s.type, .ndim = s.ndim - 1, .shape = s.shape + 1,
                      .strides = s.strides + 1, .data = s.data + i * s.strides[0],
                      .data_size = s.data_size - i * s.strides[0]};
    CHECK(qv_tensor_init(&row, &d, &err) == QV_OK);
    if (st == QV_OK)
      CHECK(qv_tensor_equals(&c, &row, true));
    else
      CHECK(qv_tensor_count_nonzero(&row) == 0);
    qv_tensor_reset(&row);
    qv_tensor_reset(&c);
  }
  qv_tensor_reset(&s);
  qv_tensor_column_reset(&col);
  f.release(&f);
  free(values);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 3) return 0;
  QvTensorColumnKind kind = (QvTensorColumnKind)(1 + data[0] % 3);
  int32_t ndim = (data[0] >> 2) % 8;
  int64_t n = data[1] % 16;
  uint8_t valid = data[2];
  const uint8_t *json = data + 3, *end = memchr(json, 0, size - 3);
  size_t len = end ? (size_t)(end - json) : size - 3;
  const uint8_t *rest = end ? end + 1 : data + size;
  size_t rest_size = (size_t)(data + size - rest);
  QvTensorColumnType t, back;
  QvError err;
  if (qv_tensor_column_type_parse(kind, (const char *)json, len, ndim, &t, &err) != QV_OK) {
    CHECK(err.code != QV_OK && err.message[0] != '\0');
    return 0;
  }
  if (kind != QV_TENSOR_COLUMN_CELL) t.value_type = QV_VALUE_FLOAT32;
  char *text;
  CHECK(qv_tensor_column_type_to_json(&t, &text, &err) == QV_OK);
  CHECK(qv_tensor_column_type_parse(kind, text, strlen(text), t.ndim, &back, &err) == QV_OK);
  if (kind != QV_TENSOR_COLUMN_CELL) back.value_type = QV_VALUE_FLOAT32;
  same_type(&t, &back);
  free(text);
  qv_tensor_column_type_reset(&back);
  if (kind == QV_TENSOR_COLUMN_FIXED_SHAPE) bridge(&t, n, valid, rest, rest_size);
  qv_tensor_column_type_reset(&t);
  return 0;
}
