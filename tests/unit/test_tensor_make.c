/* Tensor construction: validation (one message per violation), ownership,
 * allocation, strides, value types and their Arrow mapping. */
#include "test_util.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "quiver/tensor.h"
#include "adapters/value_type_arrow.h"

static void assert_error(QvStatus st, const QvError *err, QvStatus code, const char *substr) {
  assert_int_equal(st, code);
  assert_int_equal(err->code, code);
  if (strstr(err->message, substr) == NULL)
    fail_msg("message '%s' lacks '%s'", err->message, substr);
}

static void assert_zeroed(const QvTensor *t) {
  assert_null(t->shape);
  assert_null(t->strides);
  assert_null(t->private_data);
  assert_null(t->owner);
  assert_int_equal(t->ndim, 0);
}

static double buf[64];

static void test_row_major_default(void **state) {
  (void)state;
  QvTensor t;
  QvError err = {0};
  int64_t shape[2] = {3, 4};
  assert_int_equal(qv_tensor_init(&t, &(QvTensorDesc){.type = QV_ARROW_FLOAT64, .ndim = 2,
                                                      .shape = shape, .data = buf,
                                                      .data_size = 96}, &err),
                   QV_OK);
  assert_int_equal(t.ndim, 2);
  assert_int_equal(t.shape[0], 3);
  assert_int_equal(t.shape[1], 4);
  assert_int_equal(t.strides[0], 32);
  assert_int_equal(t.strides[1], 8);
  assert_null(t.dim_names);
  assert_ptr_equal(t.data, (const uint8_t *)buf);
  assert_int_equal(t.data_size, 96);
  assert_int_equal(qv_tensor_n_elements(&t), 12);
  /* shape was copied */
  assert_ptr_not_equal(t.shape, shape);
  qv_tensor_reset(&t);
  assert_zeroed(&t);
  qv_tensor_reset(&t); /* no-op on a released tensor */
  qv_tensor_reset(NULL);
}

static void test_names_are_copied(void **state) {
  (void)state;
  char n0[8] = "rows", n1[8] = "";
  const char *names[2] = {n0, n1};
  int64_t shape[2] = {2, 3};
  QvTensor t;
  QvError err = {0};
  assert_int_equal(qv_tensor_init(&t, &(QvTensorDesc){.type = QV_ARROW_INT32, .ndim = 2,
                                                      .shape = shape, .dim_names = names,
                                                      .data = buf, .data_size = 24}, &err),
                   QV_OK);
  strcpy(n0, "xxxx");
  names[1] = "changed";
  assert_string_equal(t.dim_names[0], "rows");
  assert_string_equal(t.dim_names[1], "");
  QvTensor c;
  assert_int_equal(qv_tensor_copy(&t, true, &c, &err), QV_OK);
  assert_string_equal(c.dim_names[0], "rows");
  assert_string_equal(c.dim_names[1], "");
  qv_tensor_reset(&t);
  assert_string_equal(c.dim_names[0], "rows"); /* independent storage */
  qv_tensor_reset(&c);
}

static void test_validation_errors(void **state) {
  (void)state;
  QvTensor t;
  QvError err = {0};
  int64_t shape[2] = {3, 4};
  int64_t strides[2] = {32, 8};

  assert_error(qv_tensor_init(&t, &(QvTensorDesc){.type = QV_ARROW_FLOAT64, .ndim = -1,
                                                  .shape = shape, .data = buf,
                                                  .data_size = 96}, &err),
               &err, QV_EINVAL, "ndim -1 is negative");
  assert_zeroed(&t);
  int64_t big_shape[QV_TENSOR_MAX_NDIM + 1];
  for (int i = 0; i <= QV_TENSOR_MAX_NDIM; i++) big_shape[i] = 1;
  assert_error(qv_tensor_init(&t, &(QvTensorDesc){.type = QV_ARROW_FLOAT64,
                                                  .ndim = QV_TENSOR_MAX_NDIM + 1,
                                                  .shape = big_shape, .data = buf,
                                                  .data_size = 8}, &err),
               &err, QV_ELIMIT, "ndim 65 exceeds the limit of 64");
  assert_int_equal(qv_tensor_init(&t, &(QvTensorDesc){.type = QV_ARROW_FLOAT64,
                                                      .ndim = QV_TENSOR_MAX_NDIM,
                                                      .shape = big_shape, .data = buf,
                                                      .data_size = 8}, &err),
                   QV_OK);
  assert_int_equal(qv_tensor_n_elements(&t), 1);
  assert_true(qv_tensor_is_row_major(&t));
  qv_tensor_reset(&t);

  assert_error(qv_tensor_init(&t, &(QvTensorDesc){.type = QV_ARROW_FLOAT64, .ndim = 2, .data = buf,
                                                  .data_size = 96}, &err), &err,
               QV_EARG, "shape is NULL");
  assert_error(qv_tensor_init(&t, &(QvTensorDesc){.type = (QvArrowType)99, .ndim = 2,
                                                  .shape = shape, .data = buf,
                                                  .data_size = 96}, &err), &err,
               QV_EINVAL, "unknown value type 99");

  int64_t neg_shape[3] = {3, 4, -2};
  assert_error(qv_tensor_init(&t, &(QvTensorDesc){.type = QV_ARROW_FLOAT64, .ndim = 3,
                                                  .shape = neg_shape, .data = buf,
                                                  .data_size = 96}, &err),
               &err, QV_EINVAL, "shape[2] = -2 is negative");

  int64_t neg_strides[2] = {32, -8};
  assert_error(
      qv_tensor_init(&t, &(QvTensorDesc){.type = QV_ARROW_FLOAT64, .ndim = 2, .shape = shape,
                                         .strides = neg_strides, .data = buf,
                                         .data_size = 96}, &err), &err,
      QV_ENOTSUP, "strides[1] = -8 is negative (negative strides not supported)");

  /* counted arrays (decoded metadata) must match ndim */
  QvTensorDesc counted = {.type = QV_ARROW_FLOAT64, .ndim = 2, .shape = shape, .strides = strides,
                          .n_strides = 1, .data = buf, .data_size = 96};
  assert_error(qv_tensor_init(&t, &counted, &err), &err, QV_EINVAL, "1 strides for 2 dims");
  counted.n_strides = 3;
  assert_error(qv_tensor_init(&t, &counted, &err), &err, QV_EINVAL, "3 strides for 2 dims");
  counted.strides = NULL;
  assert_error(qv_tensor_init(&t, &counted, &err), &err, QV_EARG,
               "strides is NULL but 3 are counted");
  const char *names[2] = {"a", "b"};
  counted.n_strides = 0;
  counted.dim_names = names;
  counted.n_dim_names = 1;
  assert_error(qv_tensor_init(&t, &counted, &err), &err, QV_EINVAL, "1 dim names for 2 dims");
  counted.dim_names = NULL;
  assert_error(qv_tensor_init(&t, &counted, &err), &err, QV_EARG,
               "dim_names is NULL but 1 are counted");
  counted.dim_names = names;
  counted.n_dim_names = 2;
  assert_int_equal(qv_tensor_init(&t, &counted, &err), QV_OK);
  assert_string_equal(t.dim_names[1], "b");
  qv_tensor_reset(&t);
  assert_error(qv_tensor_init(&t, NULL, &err), &err, QV_EARG, "descriptor is NULL");
  assert_error(qv_tensor_init(&t, &(QvTensorDesc){.ndim = 2, .shape = shape, .data = buf,
                                                   .data_size = 96},
                              &err),
               &err, QV_EINVAL, "unknown value type 0");
  const char *null_name[2] = {"a", NULL};
  assert_error(qv_tensor_init(&t, &(QvTensorDesc){.type = QV_ARROW_FLOAT64, .ndim = 2,
                                                  .shape = shape, .dim_names = null_name,
                                                  .data = buf, .data_size = 96}, &err),
               &err, QV_EINVAL, "dim_names[1] is NULL");
  /* no strides, no names: row-major, unnamed */
  assert_int_equal(qv_tensor_init(&t,
                                  &(QvTensorDesc){.type = QV_ARROW_FLOAT64, .ndim = 2,
                                                  .shape = shape, .data = buf, .data_size = 96},
                                  &err),
                   QV_OK);
  assert_int_equal(t.strides[0], 32);
  assert_null(t.dim_names);
  qv_tensor_reset(&t);
  assert_error(qv_tensor_init(&t,
                              &(QvTensorDesc){.type = QV_ARROW_FLOAT64, .ndim = 100, .data = buf,
                                              .data_size = 96},
                              &err),
               &err, QV_ELIMIT, "ndim 100");

  /* the shape's byte size must fit in int64, zero dims notwithstanding */
  int64_t huge[2] = {INT64_C(1) << 40, INT64_C(1) << 40};
  assert_error(qv_tensor_init(&t, &(QvTensorDesc){.type = QV_ARROW_INT8, .ndim = 2, .shape = huge,
                                                  .data = buf, .data_size = 96}, &err), &err,
               QV_EINVAL, "shape[1] = 1099511627776: the shape's byte size overflows int64");
  int64_t huge_empty[3] = {0, INT64_C(1) << 40, INT64_C(1) << 40};
  assert_error(qv_tensor_init(&t, &(QvTensorDesc){.type = QV_ARROW_INT8, .ndim = 3,
                                                  .shape = huge_empty}, &err),
               &err, QV_EINVAL, "shape[2]");
  /* the element size counts: 2^60 float64 elements are 2^63 bytes */
  int64_t elems[1] = {INT64_C(1) << 60};
  assert_error(qv_tensor_init(&t, &(QvTensorDesc){.type = QV_ARROW_FLOAT64, .ndim = 1,
                                                  .shape = elems, .data = buf,
                                                  .data_size = 96}, &err),
               &err, QV_EINVAL, "overflows int64");

  /* the byte extent must fit in int64 */
  int64_t ext_shape[2] = {3, 2};
  int64_t ext_strides[2] = {INT64_C(1) << 62, 8};
  assert_error(qv_tensor_init(&t, &(QvTensorDesc){.type = QV_ARROW_FLOAT64, .ndim = 2,
                                                  .shape = ext_shape, .strides = ext_strides,
                                                  .data = buf, .data_size = INT64_MAX}, &err),
               &err, QV_EINVAL, "strides[0] = 4611686018427387904 with shape[0] = 3");
  assert_true(strstr(err.message, "offsets overflow int64") != NULL);
  int64_t ext2_shape[2] = {2, 2};
  int64_t ext2_strides[2] = {INT64_C(1) << 62, (INT64_C(1) << 62) - 4};
  assert_error(qv_tensor_init(&t, &(QvTensorDesc){.type = QV_ARROW_FLOAT64, .ndim = 2,
                                                  .shape = ext2_shape, .strides = ext2_strides,
                                                  .data = buf, .data_size = INT64_MAX}, &err),
               &err, QV_EINVAL,
               "strides[1] = 4611686018427387900 with shape[1] = 2: offsets overflow");

  /* the buffer must cover the largest reachable byte (the Arrow test file
   * tensor_float64_3x4_strides_overrun: strides [64, 8] need 160 bytes) */
  int64_t over[2] = {64, 8};
  assert_error(qv_tensor_init(&t, &(QvTensorDesc){.type = QV_ARROW_FLOAT64, .ndim = 2,
                                                  .shape = shape, .strides = over, .data = buf,
                                                  .data_size = 96}, &err),
               &err, QV_EINVAL, "reach 160 bytes but data has 96");
  assert_true(strstr(err.message, "buffer over run") != NULL);
  assert_int_equal(qv_tensor_init(&t, &(QvTensorDesc){.type = QV_ARROW_FLOAT64, .ndim = 2,
                                                      .shape = shape, .strides = over, .data = buf,
                                                      .data_size = 160}, &err),
                   QV_OK);
  qv_tensor_reset(&t);
  assert_error(qv_tensor_init(&t, &(QvTensorDesc){.type = QV_ARROW_FLOAT64, .ndim = 2,
                                                  .shape = shape, .data = buf,
                                                  .data_size = 95}, &err),
               &err, QV_EINVAL, "reach 96 bytes but data has 95");
  assert_error(qv_tensor_init(&t, &(QvTensorDesc){.type = QV_ARROW_FLOAT64, .ndim = 2,
                                                  .shape = shape, .data_size = 96}, &err),
               &err, QV_EINVAL, "data is NULL but the tensor has 12 elements");
  assert_error(qv_tensor_init(&t, &(QvTensorDesc){.type = QV_ARROW_FLOAT64, .ndim = 2,
                                                  .shape = shape, .data = buf,
                                                  .data_size = -1}, &err),
               &err, QV_EINVAL, "data_size -1 is negative");
  assert_error(qv_tensor_init(NULL, &(QvTensorDesc){.type = QV_ARROW_FLOAT64, .ndim = 2,
                                                    .shape = shape, .data = buf,
                                                    .data_size = 96}, &err),
               &err, QV_EARG, "output is NULL");
  /* errors are reported without an error struct too */
  assert_int_equal(qv_tensor_init(&t, &(QvTensorDesc){.type = QV_ARROW_FLOAT64, .ndim = 2,
                                                      .shape = shape, .strides = over, .data = buf,
                                                      .data_size = 96}, NULL),
                   QV_EINVAL);
}

static void test_accepted_shapes(void **state) {
  (void)state;
  QvTensor t;
  QvError err = {0};
  /* 0-d scalar */
  assert_int_equal(qv_tensor_init(&t, &(QvTensorDesc){.type = QV_ARROW_FLOAT64, .data = buf,
                                                      .data_size = 8}, &err),
                   QV_OK);
  assert_int_equal(qv_tensor_n_elements(&t), 1);
  qv_tensor_reset(&t);
  assert_int_equal(qv_tensor_init(&t, &(QvTensorDesc){.type = QV_ARROW_FLOAT64, .data = buf,
                                                      .data_size = 7}, &err),
                   QV_EINVAL);
  /* zero-length dims need no bytes, even with odd strides */
  int64_t s30[2] = {3, 0}, s04[2] = {0, 4}, s302[3] = {3, 0, 2};
  int64_t wild[3] = {1000, 999999, 7};
  assert_int_equal(qv_tensor_init(&t, &(QvTensorDesc){.type = QV_ARROW_INT32, .ndim = 2,
                                                      .shape = s30}, &err),
                   QV_OK);
  assert_int_equal(qv_tensor_n_elements(&t), 0);
  assert_int_equal(t.strides[0], 4); /* Arrow: every stride = element size */
  assert_int_equal(t.strides[1], 4);
  qv_tensor_reset(&t);
  assert_int_equal(qv_tensor_init(&t, &(QvTensorDesc){.type = QV_ARROW_UINT8, .ndim = 2,
                                                      .shape = s04}, &err),
                   QV_OK);
  qv_tensor_reset(&t);
  assert_int_equal(qv_tensor_init(&t, &(QvTensorDesc){.type = QV_ARROW_FLOAT64, .ndim = 3,
                                                      .shape = s302, .strides = wild,
                                                      .data = buf}, &err),
                   QV_OK);
  assert_int_equal(t.strides[1], 999999);
  qv_tensor_reset(&t);
  /* unaligned data, buffer exactly covering the extent */
  int64_t shape[2] = {2, 3};
  const uint8_t *odd = (const uint8_t *)buf + 1;
  assert_int_equal(qv_tensor_init(&t, &(QvTensorDesc){.type = QV_ARROW_FLOAT64, .ndim = 2,
                                                      .shape = shape, .data = odd,
                                                      .data_size = 48}, &err),
                   QV_OK);
  qv_tensor_reset(&t);
  /* zero strides (broadcasting) and overlapping strides, as Arrow */
  int64_t bshape[2] = {4, 3}, bstrides[2] = {0, 4};
  assert_int_equal(
      qv_tensor_init(&t, &(QvTensorDesc){.type = QV_ARROW_INT32, .ndim = 2, .shape = bshape,
                                         .strides = bstrides, .data = buf,
                                         .data_size = 12}, &err), QV_OK);
  qv_tensor_reset(&t);
  int64_t ostrides[2] = {4, 4};
  assert_int_equal(
      qv_tensor_init(&t, &(QvTensorDesc){.type = QV_ARROW_INT32, .ndim = 2, .shape = bshape,
                                         .strides = ostrides, .data = buf,
                                         .data_size = 24}, &err), QV_OK);
  qv_tensor_reset(&t);
  assert_int_equal(
      qv_tensor_init(&t, &(QvTensorDesc){.type = QV_ARROW_INT32, .ndim = 2, .shape = bshape,
                                         .strides = ostrides, .data = buf, .data_size = 23}, &err),
      QV_EINVAL);
}

static int release_count;
static void count_release(void *p) {
  assert_ptr_equal(p, &release_count);
  release_count++;
}

static void test_owner_released_once(void **state) {
  (void)state;
  release_count = 0;
  QvOwner *owner = qv_owner_new(count_release, &release_count);
  assert_non_null(owner);
  int64_t shape[1] = {4};
  QvTensor a, b, bad;
  QvError err = {0};
  assert_int_equal(qv_tensor_init(&a, &(QvTensorDesc){.type = QV_ARROW_INT16, .ndim = 1,
                                                      .shape = shape, .data = buf, .data_size = 8,
                                                      .owner = owner}, &err),
                   QV_OK);
  assert_ptr_equal(a.owner, owner);
  assert_int_equal(qv_tensor_init(&b, &(QvTensorDesc){.type = QV_ARROW_INT16, .ndim = 1,
                                                      .shape = shape, .data = buf, .data_size = 8,
                                                      .owner = owner}, &err),
                   QV_OK);
  /* a failed make does not take a reference */
  assert_int_equal(qv_tensor_init(&bad, &(QvTensorDesc){.type = QV_ARROW_INT16, .ndim = 1,
                                                        .shape = shape, .data = buf, .data_size = 7,
                                                        .owner = owner}, &err),
                   QV_EINVAL);
  qv_owner_free(owner); /* the creator's reference */
  assert_int_equal(release_count, 0);
  qv_tensor_reset(&a);
  assert_int_equal(release_count, 0);
  qv_tensor_reset(&b);
  assert_int_equal(release_count, 1);
  qv_tensor_reset(&b);
  qv_tensor_reset(&bad);
  assert_int_equal(release_count, 1);
}

static void test_alloc(void **state) {
  (void)state;
  QvTensor t;
  QvError err = {0};
  int64_t shape[3] = {2, 3, 5};
  const char *names[3] = {"a", "b", "c"};
  void *data = NULL;
  assert_int_equal(qv_tensor_alloc(&t, QV_ARROW_FLOAT32, 3, shape, names, true, &data, &err), QV_OK);
  /* the caller's writable pointer is the tensor's buffer */
  assert_ptr_equal(data, t.data);
  assert_int_equal((uintptr_t)t.data % 64, 0);
  assert_int_equal(t.data_size, 2 * 3 * 5 * 4);
  assert_int_equal(t.strides[0], 4);
  assert_int_equal(t.strides[1], 8);
  assert_int_equal(t.strides[2], 24);
  assert_true(qv_tensor_is_column_major(&t));
  assert_false(qv_tensor_is_row_major(&t));
  assert_string_equal(t.dim_names[2], "c");
  for (int64_t i = 0; i < t.data_size; i++) assert_int_equal(t.data[i], 0);
  ((float *)data)[29] = 2.5f;
  double v;
  assert_int_equal(qv_tensor_get_double(&t, (const int64_t[]){1, 2, 4}, &v, &err), QV_OK);
  assert_true(v == 2.5);
  assert_non_null(t.owner);
  qv_tensor_reset(&t);

  assert_int_equal(qv_tensor_alloc(&t, QV_ARROW_UINT8, 3, shape, NULL, false, NULL, &err), QV_OK);
  assert_int_equal(t.strides[0], 15);
  assert_int_equal(t.strides[1], 5);
  assert_int_equal(t.strides[2], 1);
  assert_true(qv_tensor_is_row_major(&t));
  qv_tensor_reset(&t);

  assert_int_equal(qv_tensor_alloc(&t, QV_ARROW_FLOAT64, 0, NULL, NULL, false, NULL, &err), QV_OK);
  assert_int_equal(t.data_size, 8);
  qv_tensor_reset(&t);
  int64_t empty[2] = {0, 7};
  assert_int_equal(qv_tensor_alloc(&t, QV_ARROW_FLOAT64, 2, empty, NULL, false, NULL, &err), QV_OK);
  assert_int_equal(t.data_size, 0);
  assert_non_null(t.data);
  qv_tensor_reset(&t);

  /* zero-size but with extents whose product overflows: rejected as make does */
  int64_t huge_empty[3] = {INT64_C(1) << 40, INT64_C(1) << 40, 0};
  assert_error(qv_tensor_alloc(&t, QV_ARROW_FLOAT64, 3, huge_empty, NULL, false, NULL, &err), &err,
               QV_EINVAL, "shape[1] = 1099511627776: the shape's byte size overflows int64");
  assert_null(t.private_data);

  int64_t neg[1] = {-1};
  assert_error(qv_tensor_alloc(&t, QV_ARROW_FLOAT64, 1, neg, NULL, false, NULL, &err), &err, QV_EINVAL,
               "shape[0] = -1 is negative");
  int64_t huge[2] = {INT64_C(1) << 31, INT64_C(1) << 31};
  assert_error(qv_tensor_alloc(&t, QV_ARROW_FLOAT64, 2, huge, NULL, false, NULL, &err), &err, QV_EINVAL,
               "overflow int64");
}

static void test_compute_strides(void **state) {
  (void)state;
  QvError err = {0};
  int64_t out[4];
  int64_t shape[4] = {2, 3, 4, 5};
  assert_int_equal(qv_tensor_compute_strides(QV_ARROW_INT16, 4, shape, false, out, &err), QV_OK);
  assert_int_equal(out[0], 120);
  assert_int_equal(out[1], 40);
  assert_int_equal(out[2], 10);
  assert_int_equal(out[3], 2);
  assert_int_equal(qv_tensor_compute_strides(QV_ARROW_INT16, 4, shape, true, out, &err), QV_OK);
  assert_int_equal(out[0], 2);
  assert_int_equal(out[1], 4);
  assert_int_equal(out[2], 12);
  assert_int_equal(out[3], 48);
  int64_t zero[3] = {3, 0, 2};
  assert_int_equal(qv_tensor_compute_strides(QV_ARROW_FLOAT64, 3, zero, false, out, &err), QV_OK);
  assert_int_equal(out[0], 8);
  assert_int_equal(out[1], 8);
  assert_int_equal(out[2], 8);
  int64_t big[2] = {INT64_C(1) << 32, INT64_C(1) << 32};
  assert_error(qv_tensor_compute_strides(QV_ARROW_INT8, 2, big, false, out, &err), &err, QV_EINVAL,
               "shape[0] = 4294967296: the row-major strides of the shape overflow int64");
  assert_error(qv_tensor_compute_strides(QV_ARROW_INT8, 2, big, true, out, &err), &err, QV_EINVAL,
               "shape[1] = 4294967296: the column-major strides");
  assert_int_equal(qv_tensor_compute_strides(QV_ARROW_INT8, 0, NULL, false, NULL, &err), QV_OK);
}

static void test_value_types(void **state) {
  (void)state;
  static const struct {
    const char *name;
    size_t size;
    QvTypeId id;
    int bits;
    bool is_signed;
    int precision;
  } expect[QV_ARROW_NUMERIC_END] = {
      [QV_ARROW_INT8] = {"int8", 1, QV_TYPE_INT, 8, true, 0},
      {"int16", 2, QV_TYPE_INT, 16, true, 0},
      {"int32", 4, QV_TYPE_INT, 32, true, 0},
      {"int64", 8, QV_TYPE_INT, 64, true, 0},
      {"uint8", 1, QV_TYPE_INT, 8, false, 0},
      {"uint16", 2, QV_TYPE_INT, 16, false, 0},
      {"uint32", 4, QV_TYPE_INT, 32, false, 0},
      {"uint64", 8, QV_TYPE_INT, 64, false, 0},
      {"float16", 2, QV_TYPE_FLOATING_POINT, 0, false, QV_PRECISION_HALF},
      {"float32", 4, QV_TYPE_FLOATING_POINT, 0, false, QV_PRECISION_SINGLE},
      {"float64", 8, QV_TYPE_FLOATING_POINT, 0, false, QV_PRECISION_DOUBLE},
  };
  QvError err = {0};
  for (int i = QV_ARROW_INT8; i < QV_ARROW_NUMERIC_END; i++) {
    QvArrowType vt = (QvArrowType)i;
    assert_string_equal(qv_arrow_type_name(vt), expect[i].name);
    assert_int_equal(qv_arrow_type_size(vt), expect[i].size);
    QvArrowType parsed;
    assert_int_equal(qv_arrow_type_parse(expect[i].name, &parsed, &err), QV_OK);
    assert_int_equal(parsed, vt);
    QvType at;
    qvi_value_type_to_arrow(vt, &at);
    assert_int_equal(at.id, expect[i].id);
    if (at.id == QV_TYPE_INT) {
      assert_int_equal(at.u.int_.bit_width, expect[i].bits);
      assert_int_equal(at.u.int_.is_signed, expect[i].is_signed);
    } else {
      assert_int_equal(at.u.floating_point.precision, expect[i].precision);
    }
    QvArrowType back;
    assert_int_equal(qvi_value_type_from_arrow(&at, &back, &err), QV_OK);
    assert_int_equal(back, vt);
  }
  assert_string_equal(qv_arrow_type_name(QV_ARROW_TYPE_COUNT), "?");
  assert_int_equal(qv_arrow_type_size(QV_ARROW_NUMERIC_END), 0); /* null: not numeric */
  assert_int_equal(qv_arrow_type_size(QV_ARROW_TYPE_COUNT), 0);
  QvArrowType vt;
  assert_error(qv_arrow_type_parse("float128", &vt, &err), &err, QV_EINVAL,
               "unknown value type 'float128'");
  QvType utf8 = {.id = QV_TYPE_UTF8};
  assert_error(qvi_value_type_from_arrow(&utf8, &vt, &err), &err, QV_EINVAL,
               "Tensor.type: Utf8 is not a numeric tensor type");
  QvType boolean = {.id = QV_TYPE_BOOL};
  assert_error(qvi_value_type_from_arrow(&boolean, &vt, &err), &err, QV_EINVAL,
               "Tensor.type: Bool is not a numeric tensor type");
  QvType int12 = {.id = QV_TYPE_INT};
  int12.u.int_.bit_width = 12;
  assert_error(qvi_value_type_from_arrow(&int12, &vt, &err), &err, QV_EINVAL, "Int bitWidth 12");
  QvType fp9 = {.id = QV_TYPE_FLOATING_POINT};
  fp9.u.floating_point.precision = 9;
  assert_error(qvi_value_type_from_arrow(&fp9, &vt, &err), &err, QV_EINVAL,
               "FloatingPoint precision 9");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_row_major_default),   cmocka_unit_test(test_names_are_copied),
      cmocka_unit_test(test_validation_errors),   cmocka_unit_test(test_accepted_shapes),
      cmocka_unit_test(test_owner_released_once), cmocka_unit_test(test_alloc),
      cmocka_unit_test(test_compute_strides),     cmocka_unit_test(test_value_types),
  };
  return qv_test_run(tests, NULL, NULL);
}
