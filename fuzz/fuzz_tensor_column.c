/* libFuzzer target: tensor extension metadata and the column -> tensor bridge.
 *
 * Input: byte 0 picks the kind (and for variable shape the ndim), byte 1 the
 * number of cells (0..15), byte 2 the validity bits of the first 8 cells;
 * then the metadata JSON up to a NUL byte; the rest is cell data.
 * Accepted metadata must survive qv_tensor_column_type_to_json and parse to
 * the same type; a fixed shape column over the data bytes must stack (nulls
 * filled) to a tensor whose every row equals the cell view of that row. A
 * variable shape column built from cells whose shapes the data bytes pick
 * (often one shape, sometimes not) must stack exactly when every non-null
 * cell has one shape (or, all null, uniform_shape fixes it), else fail
 * naming the cells; a Binary cell-form column over the data bytes (at an odd
 * offset when byte 2 says so) must stack like the fixed shape one. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "quiver/array.h"
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
  int64_t cell = qv_tensor_column_type_cell_n_elements(type);
  if (cell < 0 || cell > 4096 || type->ndim >= QV_TENSOR_MAX_NDIM) return;
  QvTensorColumnType t = *type;
  t.private_data = NULL; /* borrowed names: never freed through t */
  t.value_type = QV_ARROW_FLOAT32;
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
      CHECK(qv_tensor_equal(&c, &row, true));
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

/* Checks a stack (nulls filled) of col: rows equal the cell views, null
 * rows are zeros. */
static void check_rows(const QvTensorColumn *col, const QvTensor *s) {
  QvError err;
  CHECK(s->ndim == col->type.ndim + 1 && s->shape[0] == col->length);
  for (int64_t i = 0; i < col->length; i++) {
    QvTensor c, row;
    QvStatus st = qv_tensor_column_cell(col, i, &c, &err);
    CHECK((st == QV_OK) == !qv_tensor_column_is_null(col, i));
    /* rows of an empty tensor are empty (its strides may be those of a
     * layout with the zero extents replaced) */
    bool empty = qv_tensor_n_elements(s) == 0;
    QvTensorDesc d = {.type = s->type, .ndim = s->ndim - 1, .shape = s->shape + 1,
                      .strides = s->strides + 1,
                      .data = empty ? s->data : s->data + i * s->strides[0],
                      .data_size = empty ? 0 : s->data_size - i * s->strides[0]};
    CHECK(qv_tensor_init(&row, &d, &err) == QV_OK);
    if (st == QV_OK)
      CHECK(qv_tensor_equal(&c, &row, true));
    else
      CHECK(qv_tensor_count_nonzero(&row) == 0);
    qv_tensor_reset(&row);
    qv_tensor_reset(&c);
  }
}

/* The bytes of [n, ...shape] of es-byte values, saturated; *overflows when
 * the non-zero extents' byte size passes int64 (tensors refuse that even
 * with a zero extent elsewhere). */
static int64_t stack_bytes(int64_t es, int64_t n, int32_t ndim, const int64_t *shape,
                           bool *overflows) {
  int64_t bytes = es;
  bool zero = n == 0;
  *overflows = false;
  if (n > 0) *overflows |= __builtin_mul_overflow(bytes, n, &bytes);
  for (int32_t d = 0; d < ndim; d++) {
    zero |= shape[d] == 0;
    if (shape[d] > 0) *overflows |= __builtin_mul_overflow(bytes, shape[d], &bytes);
  }
  return zero ? 0 : *overflows ? INT64_MAX : bytes;
}

#define FUZZ_LIMIT ((int64_t)1 << 20)

static void variable_bridge(const QvTensorColumnType *type, int64_t n, uint8_t valid,
                            const uint8_t *data, size_t size) {
  QvTensorColumnType t = *type;
  t.private_data = NULL; /* borrowed names */
  t.value_type = QV_ARROW_FLOAT32;
  for (int32_t k = 0; k < t.ndim; k++)
    if (t.shape[k] > 16) return; /* cells are built: keep them small */
  QvTensor cells[16];
  const QvTensor *ptrs[16];
  int64_t shape[QV_TENSOR_MAX_NDIM], first_shape[QV_TENSOR_MAX_NDIM];
  int64_t first = -1;
  bool one_shape = true;
  size_t pos = 0;
  QvError err;
  uint8_t bits[2] = {valid, 0xff};
  for (int64_t i = 0; i < n; i++) {
    ptrs[i] = NULL;
    if (!(bits[i / 8] >> (i % 8) & 1)) continue;
    uint8_t pick = pos < size ? data[pos++] : 1;
    for (int32_t k = 0; k < t.ndim; k++) {
      uint8_t b = pos < size ? data[pos++] : 1;
      shape[k] = t.shape[k] >= 0 ? t.shape[k] : b % 4;
      if (first >= 0 && (pick & 1)) shape[k] = first_shape[k]; /* mostly one shape */
    }
    if (first < 0) {
      first = i;
      memcpy(first_shape, shape, sizeof shape);
    } else if (memcmp(shape, first_shape, (size_t)t.ndim * sizeof shape[0]) != 0) {
      one_shape = false;
    }
    void *p;
    CHECK(qv_tensor_alloc(&cells[i], QV_ARROW_FLOAT32, t.ndim, shape, NULL, false, &p, &err) ==
          QV_OK);
    for (int64_t j = 0; j < qv_tensor_n_elements(&cells[i]); j++) ((float *)p)[j] = (float)(i * 64 + j);
    ptrs[i] = &cells[i];
  }
  struct ArrowSchema f;
  struct ArrowArray a;
  CHECK(qv_tensor_column_build(&t, "v", NULL, ptrs, n, &f, &a, &err) == QV_OK);
  for (int64_t i = 0; i < n; i++)
    if (ptrs[i]) qv_tensor_reset(&cells[i]);
  QvTensorColumn col;
  CHECK(qv_tensor_column_init(&col, &f, &a, NULL, &err) == QV_OK);
  f.release(&f);
  QvTensor s;
  QvTensorStackOptions o = {.struct_size = sizeof o, .null_fill = true,
                            .max_output_size = FUZZ_LIMIT};
  QvStatus st = qv_tensor_column_stack(&col, &o, &s, &err);
  bool known = first >= 0;
  if (first < 0) {
    known = true;
    for (int32_t k = 0; k < t.ndim; k++) known &= t.shape[k] >= 0;
    memcpy(first_shape, t.shape, sizeof first_shape);
  }
  if (!one_shape) {
    CHECK(st == QV_EINVAL && strstr(err.message, "need one shape") != NULL);
  } else if (!known) {
    CHECK(st == QV_EINVAL && strstr(err.message, "shape is unknown") != NULL);
  } else {
    bool overflows;
    int64_t bytes = stack_bytes(4, n, t.ndim, first_shape, &overflows);
    if (st != QV_OK) {
      /* refused only past the limit (a copy: there are nulls) or overflow */
      CHECK(err.code == st && err.message[0] != '\0');
      CHECK(overflows || (col.null_count > 0 && bytes > FUZZ_LIMIT));
    } else {
      check_rows(&col, &s);
      qv_tensor_reset(&s);
    }
    if (col.null_count > 0) {
      CHECK(qv_tensor_column_stack(&col, NULL, &s, &err) == QV_EINVAL);
      CHECK(strstr(err.message, "is null") != NULL);
    }
  }
  qv_tensor_column_reset(&col);
}

static void binary_bridge(const QvTensorColumnType *type, int64_t n, uint8_t valid,
                          const uint8_t *data, size_t size) {
  int64_t cell = qv_tensor_column_type_cell_n_elements(type);
  int64_t es = (int64_t)qv_arrow_type_size(type->value_type);
  if (cell < 0 || cell > 1024 || type->ndim >= QV_TENSOR_MAX_NDIM) return;
  int64_t cb = cell * es, lead = valid >> 7; /* an odd offset: unaligned cells */
  QvTensorColumnType t = *type;
  t.private_data = NULL;
  QvError err;
  struct ArrowSchema f;
  char *json;
  CHECK(qv_tensor_column_type_to_json(&t, &json, &err) == QV_OK);
  CHECK(qv_arrow_schema_init(&f, "z", "b", ARROW_FLAG_NULLABLE, 0, &err) == QV_OK);
  CHECK(qv_arrow_schema_add_metadata(&f, "ARROW:extension:name", 20, "fuzz.tensor", 11, &err) == QV_OK);
  CHECK(qv_arrow_schema_add_metadata(&f, "ARROW:extension:metadata", 24, json, strlen(json), &err) ==
        QV_OK);
  free(json);
  int32_t offsets[17];
  offsets[0] = (int32_t)lead;
  int64_t nulls = 0;
  uint8_t bits[2] = {valid, 0xff};
  for (int64_t i = 0; i < n; i++) {
    bool null = !(bits[i / 8] >> (i % 8) & 1);
    nulls += null;
    offsets[i + 1] = offsets[i] + (int32_t)(null ? 0 : cb);
  }
  if ((size_t)offsets[n] > size + (size_t)lead) {
    f.release(&f);
    return;
  }
  uint8_t *bytes = malloc((size_t)offsets[n] + 1);
  bytes[0] = 0;
  memcpy(bytes + lead, data, (size_t)(offsets[n] - lead));
  QvArrayView v;
  CHECK(qv_array_view_init(&v, &f, &err) == QV_OK);
  v.length = n;
  v.null_count = nulls;
  v.buffer[0] = bits;
  v.buffer_size[0] = 2;
  v.buffer[1] = (const uint8_t *)offsets;
  v.buffer_size[1] = (n + 1) * 4;
  v.buffer[2] = bytes;
  v.buffer_size[2] = offsets[n];
  struct ArrowArray a;
  CHECK(qv_array_export_view(&v, NULL, &a, &err) == QV_OK);
  qv_array_view_reset(&v);
  QvTensorColumn col;
  QvTensorColumnOptions co = {.struct_size = sizeof co, .cell_extension = "fuzz.tensor"};
  CHECK(qv_tensor_column_init(&col, &f, &a, &co, &err) == QV_OK);
  f.release(&f);
  QvTensor s;
  QvTensorStackOptions o = {.struct_size = sizeof o, .null_fill = true,
                            .max_output_size = FUZZ_LIMIT};
  bool overflows;
  int64_t shape[QV_TENSOR_MAX_NDIM];
  memcpy(shape, t.shape, sizeof shape);
  (void)stack_bytes(es, n, t.ndim, shape, &overflows);
  QvStatus st = qv_tensor_column_stack(&col, &o, &s, &err);
  if (st != QV_OK) {
    CHECK(overflows && err.code == st && err.message[0] != '\0');
  } else {
    check_rows(&col, &s);
    qv_tensor_reset(&s);
  }
  qv_tensor_column_reset(&col);
  free(bytes);
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
  if (kind != QV_TENSOR_COLUMN_CELL) t.value_type = QV_ARROW_FLOAT32;
  char *text;
  CHECK(qv_tensor_column_type_to_json(&t, &text, &err) == QV_OK);
  CHECK(qv_tensor_column_type_parse(kind, text, strlen(text), t.ndim, &back, &err) == QV_OK);
  if (kind != QV_TENSOR_COLUMN_CELL) back.value_type = QV_ARROW_FLOAT32;
  same_type(&t, &back);
  free(text);
  qv_tensor_column_type_reset(&back);
  if (kind == QV_TENSOR_COLUMN_FIXED_SHAPE) bridge(&t, n, valid, rest, rest_size);
  if (kind == QV_TENSOR_COLUMN_VARIABLE_SHAPE) variable_bridge(&t, n, valid, rest, rest_size);
  if (kind == QV_TENSOR_COLUMN_CELL) binary_bridge(&t, n, valid, rest, rest_size);
  qv_tensor_column_type_reset(&t);
  return 0;
}
