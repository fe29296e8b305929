/* struct_size: an options struct as an older caller compiled it (a prefix
 * of today's) is read with the missing fields at their defaults; one
 * smaller than the struct ever was is refused, and a newer caller's is
 * accepted only while the fields this library does not know are zero. */
#include "test_util.h"

#include <string.h>

#include "quiver/table_tensor.h"
#include "quiver/migrate.h"
#include "quiver/tensor_column.h"
#include "util/options.h"

/* QvTensorUnstackOptions as 0.3 published it: before `threads`. */
typedef struct OldUnstackOptions {
  size_t struct_size;
  const char *name;
  bool contiguous;
} OldUnstackOptions;

static QvStatus unstack(const void *options, char *name, size_t name_size, QvError *e) {
  static const float values[6] = {1, 2, 3, 4, 5, 6};
  QvTensor t;
  QvStatus st = qv_tensor_init(&t, &(QvTensorDesc){.type = QV_ARROW_FLOAT32, .ndim = 2,
                                                   .shape = (int64_t[]){2, 3}, .data = values,
                                                   .data_size = sizeof values}, e);
  if (st) return st;
  struct ArrowSchema schema;
  struct ArrowArray array;
  st = qv_tensor_column_unstack(&t, options, &schema, &array, e);
  qv_tensor_reset(&t);
  if (st) return st;
  snprintf(name, name_size, "%s", schema.name ? schema.name : "");
  assert_int_equal(array.length, 2);
  schema.release(&schema);
  array.release(&array);
  return QV_OK;
}

static void test_older_layout_is_read(void **state) {
  (void)state;
  /* zeroed whole first, as common.h asks: an older layout's tail padding
   * may lie where a later member now is */
  OldUnstackOptions old;
  memset(&old, 0, sizeof old);
  old.struct_size = sizeof old;
  old.name = "cells";
  char name[32];
  QvError e;
  assert_int_equal(unstack(&old, name, sizeof name, &e), QV_OK);
  assert_string_equal(name, "cells");
  /* 0 means the first size too */
  old.struct_size = 0;
  assert_int_equal(unstack(&old, name, sizeof name, &e), QV_OK);
  assert_string_equal(name, "cells");
}

static void test_smaller_than_ever_is_refused(void **state) {
  (void)state;
  OldUnstackOptions old = {sizeof(size_t) + sizeof(const char *), "cells", false};
  char name[32];
  QvError e;
  assert_int_equal(unstack(&old, name, sizeof name, &e), QV_EARG);
  assert_non_null(strstr(e.message, "QvTensorUnstackOptions: struct_size"));
}

static void test_newer_caller(void **state) {
  (void)state;
  struct {
    QvTensorUnstackOptions known;
    int64_t later_field;
  } newer;
  memset(&newer, 0, sizeof newer);
  newer.known.struct_size = sizeof newer;
  newer.known.name = "n";
  char name[32];
  QvError e;
  assert_int_equal(unstack(&newer, name, sizeof name, &e), QV_OK); /* unknown field zero */
  assert_string_equal(name, "n");
  newer.later_field = 1;
  assert_int_equal(unstack(&newer, name, sizeof name, &e), QV_ENOTSUP);
  assert_non_null(strstr(e.message, "newer than this library knows"));
}

/* The loader itself: bytes past the caller's size stay zero. */
static void test_loader_zero_fills(void **state) {
  (void)state;
  QvTensorStackOptions src, dst;
  memset(&src, 0x7f, sizeof src); /* past the first size: what must not be read */
  src.struct_size = QVI_FIRST_QvTensorStackOptions;
  src.null_fill = true;
  src.contiguous = false;
  src.leading_name = "rows";
  QvError e;
  assert_int_equal(QV_OPTIONS_LOAD(&dst, &src, QvTensorStackOptions, &e), QV_OK);
  assert_int_equal(dst.struct_size, sizeof dst);
  assert_int_equal(dst.max_output_size, 0);
  assert_int_equal(dst.threads, 0);
  assert_true(dst.null_fill && !dst.contiguous);
  assert_string_equal(dst.leading_name, "rows");
  assert_int_equal(QV_OPTIONS_LOAD(&dst, NULL, QvTensorStackOptions, &e), QV_OK);
  assert_null(dst.leading_name);
}

/* QvTableToTensorOptions: its first layout is today's; a prefix is refused,
 * the whole struct read as given. */
static void test_table_tensor_options(void **state) {
  (void)state;
  QvTableToTensorOptions src, dst;
  memset(&src, 0x7f, sizeof src);
  src.struct_size = QVI_FIRST_QvTableToTensorOptions;
  src.null_to_nan = true;
  src.column_major = false;
  src.columns = NULL;
  src.n_columns = 0;
  src.max_output_size = 99;
  QvError e;
  assert_int_equal(QV_OPTIONS_LOAD(&dst, &src, QvTableToTensorOptions, &e), QV_OK);
  assert_true(dst.null_to_nan && !dst.column_major);
  assert_int_equal(dst.max_output_size, 99);
  src.struct_size = offsetof(QvTableToTensorOptions, max_output_size);
  assert_int_equal(QV_OPTIONS_LOAD(&dst, &src, QvTableToTensorOptions, &e), QV_EARG);
  assert_int_equal(QV_OPTIONS_LOAD(&dst, NULL, QvTableToTensorOptions, &e), QV_OK);
  assert_false(dst.null_to_nan);
  assert_int_equal(dst.max_output_size, 0);
}

/* QvMigrateOptions (quiver/migrate.h): its first size is the whole struct
 * of 0.5; NULL means every default. */
static void test_migrate_options(void **state) {
  (void)state;
  QvMigrateOptions src, dst;
  memset(&src, 0, sizeof src);
  src.struct_size = QVI_FIRST_QvMigrateOptions;
  src.format = QV_IPC_FORMAT_FILE;
  src.threads = 2;
  QvError e;
  assert_int_equal(QV_OPTIONS_LOAD(&dst, &src, QvMigrateOptions, &e), QV_OK);
  assert_int_equal(dst.format, QV_IPC_FORMAT_FILE);
  assert_int_equal(dst.threads, 2);
  src.struct_size = QVI_FIRST_QvMigrateOptions - 1;
  assert_int_equal(QV_OPTIONS_LOAD(&dst, &src, QvMigrateOptions, &e), QV_EARG);
  assert_int_equal(QV_OPTIONS_LOAD(&dst, NULL, QvMigrateOptions, &e), QV_OK);
  assert_int_equal(dst.format, QV_IPC_FORMAT_STREAM);
  assert_null(dst.notice);
}

/* Flight's client options (0.5): their first size is the whole struct. */
static void test_flight_client_options(void **state) {
  (void)state;
  QvFlightClientOptions src, dst;
  memset(&src, 0, sizeof src);
  src.struct_size = QVI_FIRST_QvFlightClientOptions;
  src.timeout_ms = 1500;
  src.token = "t";
  QvError e;
  assert_int_equal(QV_OPTIONS_LOAD(&dst, &src, QvFlightClientOptions, &e), QV_OK);
  assert_true(dst.timeout_ms == 1500);
  assert_string_equal(dst.token, "t");
  assert_int_equal(QVI_FIRST_QvFlightClientOptions, sizeof(QvFlightClientOptions));
  src.struct_size = QVI_FIRST_QvFlightClientOptions - 1;
  assert_int_equal(QV_OPTIONS_LOAD(&dst, &src, QvFlightClientOptions, &e), QV_EARG);
  assert_int_equal(QV_OPTIONS_LOAD(&dst, NULL, QvFlightClientOptions, &e), QV_OK);
  assert_null(dst.token);
}

int main(int argc, char **argv) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_older_layout_is_read),
      cmocka_unit_test(test_smaller_than_ever_is_refused),
      cmocka_unit_test(test_newer_caller),
      cmocka_unit_test(test_loader_zero_fills),
      cmocka_unit_test(test_table_tensor_options),
      cmocka_unit_test(test_migrate_options),
      cmocka_unit_test(test_flight_client_options),
  };
  const QvTestGroup groups[] = {QV_TEST_GROUP("", tests, NULL, NULL)};
  return qv_test_run_groups(argc, argv, groups, sizeof groups / sizeof groups[0]);
}
