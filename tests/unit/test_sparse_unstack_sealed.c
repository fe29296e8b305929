/* A CSR SparseTensor read from a file (or an fd) is validated by the reader
 * and sealed, so making it a sparse-vector column (qv_sparse_vector_unstack)
 * scans nothing again: constant time, proven by the path counter, and a view
 * (same addresses). Caller memory is never sealed (its owner may change the
 * bytes): the column is validated first, and a lying tensor is still
 * refused. */
#include "test_util.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "quiver/io.h"
#include "quiver/sparse.h"
#include "quiver/sparse_column.h"
#include "quiver/sparse_ipc.h"
#include "util/cpu.h"

#define assert_ok(expr)                                                       \
  do {                                                                        \
    QvStatus st_ = (expr);                                                    \
    if (st_ != QV_OK) fail_msg("%s: status %d: %s", #expr, st_, err.message); \
  } while (0)

static const double dense6x4[24] = {0, 1, 2, 0, 0, 0, 3, 0, 0, 4, 0, 5,
                                    0, 0, 0, 0, 6, 0, 7, 8, 0, 9, 0, 0};

static void write_csr(const char *path, QvArrowType index_type) {
  QvError err = {0};
  QvTensor d;
  assert_ok(qv_tensor_init(&d, &(QvTensorDesc){.type = QV_ARROW_FLOAT64, .ndim = 2,
                                               .shape = (int64_t[]){6, 4}, .data = dense6x4,
                                               .data_size = sizeof dense6x4}, &err));
  QvSparseTensor s;
  QvSparseOptions o = {.struct_size = sizeof o, .index_type = index_type};
  assert_ok(qv_sparse_from_dense(&d, QV_SPARSE_CSR, &o, &s, &err));
  assert_ok(qv_test_sparse_write_path(&s, NULL, path, &err));
  qv_sparse_reset(&s);
  qv_tensor_reset(&d);
}

/* Unstacks t; returns whether the sealed path was taken, checks the view. */
static bool unstack(const QvSparseTensor *t) {
  QvError err = {0};
  uint64_t before = qvi_path_count(QV_PATH_SPARSE_UNSTACK_SEALED);
  struct ArrowSchema schema;
  struct ArrowArray array;
  assert_ok(qv_sparse_vector_unstack(t, NULL, &schema, &array, &err));
  bool sealed = qvi_path_count(QV_PATH_SPARSE_UNSTACK_SEALED) > before;
  assert_int_equal(array.length, 6);
  /* List<Struct{index, value}>: offsets are the indptr, children the
   * indices and values, all the tensor's own memory */
  assert_ptr_equal(array.buffers[1], t->indptr);
  assert_ptr_equal(array.children[0]->children[0]->buffers[1], t->indices);
  assert_ptr_equal(array.children[0]->children[1]->buffers[1], t->values);
  QvSparseColumn col;
  assert_ok(qv_sparse_column_init(&col, &schema, &array, NULL, &err));
  assert_int_equal(qv_sparse_column_cell_nnz(&col, 4), 3);
  qv_sparse_column_reset(&col);
  schema.release(&schema);
  return sealed;
}

static void test_file_read_is_sealed(void **state) {
  (void)state;
  QvTestDir dir;
  qv_test_dir_make(&dir, "csr.arrow");
  write_csr(dir.file, QV_ARROW_INT32);
  QvError err = {0};
  QvSparseTensor t;
  assert_ok(qv_test_sparse_read_path(dir.file, 0, &t, &err));
  assert_true(qv_test_is_mapping_of(t.indices, dir.file));
  assert_true(unstack(&t));
  qv_sparse_reset(&t);
  /* an fd: the body is the library's copy, sealed too */
  int fd = open(dir.file, O_RDONLY);
  assert_true(fd >= 0);
  assert_ok(qv_test_sparse_read_fd(fd, 0, &t, &err));
  close(fd);
  assert_true(unstack(&t));
  qv_sparse_reset(&t);
  qv_test_dir_remove(&dir);
}

static void test_caller_memory_is_validated(void **state) {
  (void)state;
  QvTestDir dir;
  qv_test_dir_make(&dir, "csr.arrow");
  write_csr(dir.file, QV_ARROW_INT64);
  size_t size;
  uint8_t *bytes = qv_test_slurp(dir.file, &size);
  QvError err = {0};
  QvSparseTensor t;
  QvOwner *owner = qv_owner_new(free, bytes); /* keeps the bytes for the views */
  assert_non_null(owner);
  assert_ok(qv_test_sparse_read_memory(bytes, size, owner, 0, &t, &err));
  qv_owner_free(owner);
  assert_false(unstack(&t));
  /* the caller's bytes change after the read: an index out of range is
   * found, not trusted */
  int64_t bad = 99;
  memcpy((uint8_t *)t.indices, &bad, sizeof bad);
  struct ArrowSchema schema;
  struct ArrowArray array;
  assert_int_equal(qv_sparse_vector_unstack(&t, NULL, &schema, &array, &err), QV_EINVAL);
  qv_sparse_reset(&t);
  qv_test_dir_remove(&dir);
}

int main(int argc, char **argv) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_file_read_is_sealed),
      cmocka_unit_test(test_caller_memory_is_validated),
  };
  const QvTestGroup groups[] = {QV_TEST_GROUP("", tests, NULL, NULL)};
  return qv_test_run_groups(argc, argv, groups, sizeof groups / sizeof groups[0]);
}
