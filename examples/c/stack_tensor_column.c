/* A tensor column (arrow.fixed_shape_tensor) and back: a [4, 2, 3] tensor
 * becomes a column of four 2 x 3 cells, and stacking the column gives a
 * [4, 2, 3] tensor again, both without copying the values.
 *
 *   stack_tensor_column */
#include <quiver/quiver.h>

#include <inttypes.h>
#include <stdio.h>

int main(void) {
  QvError err;
  qv_error_clear(&err);
  int32_t values[4 * 2 * 3];
  for (int i = 0; i < 24; i++) values[i] = i;
  const int64_t shape[3] = {4, 2, 3};
  const char *names[3] = {"frame", "y", "x"};
  QvTensor t = {0}, stacked = {0}, cell = {0};
  QvTensorColumn col = {0};
  struct ArrowSchema field = {0};
  struct ArrowArray array = {0};
  QvStatus st = qv_tensor_init(&t,
                               &(QvTensorDesc){.type = QV_ARROW_INT32, .ndim = 3, .shape = shape,
                                               .dim_names = names, .data = values,
                                               .data_size = sizeof values},
                               &err);
  /* tensor -> column: the array's buffer is `values` itself */
  if (st == QV_OK) st = qv_tensor_column_unstack(&t, NULL, &field, &array, &err);
  /* column -> cells and -> one tensor (the array moves into the column) */
  if (st == QV_OK) st = qv_tensor_column_init(&col, &field, &array, NULL, &err);
  if (st == QV_OK) st = qv_tensor_column_cell(&col, 2, &cell, &err);
  if (st == QV_OK)
    printf("%" PRId64 " cells of [%" PRId64 ", %" PRId64 "]; cell 2 starts with %d\n", col.length,
           cell.shape[0], cell.shape[1], (int)*(const int32_t *)cell.data);
  QvTensorStackOptions so = {.struct_size = sizeof so, .leading_name = "frame"};
  if (st == QV_OK) st = qv_tensor_column_stack(&col, &so, &stacked, &err);
  if (st == QV_OK && !qv_tensor_equal(&t, &stacked, false))
    st = qv_error_set(&err, QV_EINVAL, "the stacked tensor differs from the input");
  if (st == QV_OK)
    printf("stacked: [%" PRId64 ", %" PRId64 ", %" PRId64 "], dims %s/%s/%s, %s\n",
           stacked.shape[0], stacked.shape[1], stacked.shape[2], stacked.dim_names[0],
           stacked.dim_names[1], stacked.dim_names[2],
           stacked.data == (const uint8_t *)values ? "a view of the input (no copy)" : "a copy");
  qv_tensor_reset(&cell);
  qv_tensor_reset(&stacked);
  qv_tensor_column_reset(&col);
  if (array.release) array.release(&array);
  if (field.release) field.release(&field);
  qv_tensor_reset(&t);
  if (st != QV_OK) {
    fprintf(stderr, "stack_tensor_column: %s\n", err.message);
    return 1;
  }
  return 0;
}
