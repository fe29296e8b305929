/* util/strides.c: qvi_permuted_row_major, the one "is this a permuted
 * row-major layout" kernel of the tensor-to-column adapters: row-major,
 * column-major and other permutations, extent-1 dims in place, gaps and
 * overlaps refused. */
#include <string.h>

#include "test_util.h"
#include "util/strides.h"

static void expect_order(int32_t nd, const int64_t *shape, const int64_t *strides, int64_t es,
                         const int32_t *want) {
  int32_t order[8];
  memset(order, 0x55, sizeof order);
  assert_true(qvi_permuted_row_major(nd, shape, strides, es, order));
  for (int32_t k = 0; k < nd; k++) assert_int_equal(order[k], want[k]);
}

static void test_permutations(void **state) {
  (void)state;
  /* row-major [2, 3, 4] of 8-byte values */
  expect_order(3, (int64_t[]){2, 3, 4}, (int64_t[]){96, 32, 8}, 8, (int32_t[]){0, 1, 2});
  /* column-major: the last dim is outermost */
  expect_order(3, (int64_t[]){2, 3, 4}, (int64_t[]){8, 16, 48}, 8, (int32_t[]){2, 1, 0});
  /* [2, 3, 4] stored as [3, 2, 4] */
  expect_order(3, (int64_t[]){2, 3, 4}, (int64_t[]){32, 64, 8}, 8, (int32_t[]){1, 0, 2});
  /* an extent-1 dim keeps its place whatever its stride */
  expect_order(3, (int64_t[]){3, 1, 3}, (int64_t[]){12, 999, 4}, 4, (int32_t[]){0, 1, 2});
  expect_order(3, (int64_t[]){3, 1, 2}, (int64_t[]){4, 0, 12}, 4, (int32_t[]){2, 1, 0});
  /* no dims: nothing to order */
  assert_true(qvi_permuted_row_major(0, NULL, NULL, 4, NULL));
}

static void test_refused(void **state) {
  (void)state;
  int32_t order[4];
  /* a gap between rows */
  assert_false(qvi_permuted_row_major(2, (int64_t[]){2, 3}, (int64_t[]){32, 8}, 8, order));
  /* overlapping rows (a broadcast) */
  assert_false(qvi_permuted_row_major(2, (int64_t[]){2, 3}, (int64_t[]){0, 8}, 8, order));
  /* strided elements */
  assert_false(qvi_permuted_row_major(1, (int64_t[]){3}, (int64_t[]){16}, 8, order));
  /* more dims than the kernel orders */
  assert_false(qvi_permuted_row_major(QVI_STRIDES_MAX_NDIM + 1, NULL, NULL, 8, order));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_permutations),
      cmocka_unit_test(test_refused),
  };
  return qv_test_run(tests, NULL, NULL);
}
