/* libFuzzer target: the sparse column validator and its bridges.
 *
 * Input: an Arrow IPC stream. Every field the reader accepts that is a
 * quiver.sparse_tensor or quiver.sparse_vector column goes through
 * qv_sparse_column_init; a column it accepts must hand out every non-null
 * row as a valid sparse tensor (qv_sparse_validate) with the nnz
 * qv_sparse_column_cell_nnz reports, rebuild (qv_sparse_column_build) into a
 * column that validates and holds equal rows, and, for a sparse-vector column
 * without nulls, stack into a valid CSR matrix whose rows equal the cells and
 * unstack back. A rejected column must come back (array not moved) with a
 * message. Seeds: streams test_sparse_column writes when
 * QV_SPARSE_COLUMN_SEEDS names a directory. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "quiver/advanced.h"
#include "quiver/io.h"
#include "quiver/recordbatch_ipc.h"
#include "quiver/sparse_column.h"

#define CHECK(cond)                                                                          \
  do {                                                                                       \
    if (!(cond)) {                                                                           \
      fprintf(stderr, "fuzz_sparse_column: %s:%d: check failed: %s\n", __FILE__, __LINE__, \
              #cond);                                                                        \
      abort();                                                                               \
    }                                                                                        \
  } while (0)

static void rebuild(const QvSparseColumn *col, QvSparseTensor *cells, const bool *valid) {
  QvError err;
  const QvSparseTensor **ptrs = calloc((size_t)col->length + 1, sizeof *ptrs);
  for (int64_t i = 0; i < col->length; i++) ptrs[i] = valid[i] ? &cells[i] : NULL;
  QvSparseBuildOptions bo = {.struct_size = sizeof bo, .kind = col->type.kind,
                             .size = col->type.size, .format = col->type.format,
                             .value_type = col->type.value_type,
                             .index_type = col->type.index_type,
                             .indptr_type = col->type.indptr_type, .ndim = col->type.ndim,
                             .dim_names = col->type.dim_names,
                             .n_dim_names = col->type.n_dim_names,
                             .max_output_size = (int64_t)1 << 26};
  struct ArrowSchema f;
  struct ArrowArray a;
  QvStatus st = qv_sparse_column_build(ptrs, col->length, &bo, &f, &a, &err);
  free(ptrs);
  if (st == QV_ELIMIT) return;
  CHECK(st == QV_OK);
  QvSparseColumn back;
  CHECK(qv_sparse_column_init(&back, &f, &a, NULL, &err) == QV_OK);
  CHECK(back.length == col->length && back.null_count == col->null_count);
  for (int64_t i = 0; i < col->length; i++) {
    if (!valid[i]) continue;
    QvSparseTensor t;
    CHECK(qv_sparse_column_cell(&back, i, &t, &err) == QV_OK);
    CHECK(qv_sparse_equal(&t, &cells[i]));
    qv_sparse_reset(&t);
  }
  qv_sparse_column_reset(&back);
  f.release(&f);
}

static void vectors(const QvSparseColumn *col, QvSparseTensor *cells) {
  QvError err;
  QvSparseTensor csr;
  CHECK(qv_sparse_vector_stack(col, NULL, &csr, &err) == QV_OK);
  CHECK(qv_sparse_validate(&csr, &err) == QV_OK);
  CHECK(csr.shape[0] == col->length && csr.shape[1] == col->type.size);
  for (int64_t i = 0; i < col->length; i++) {
    int64_t a = qv_index_load(csr.indptr, csr.indptr_type, i);
    int64_t b = qv_index_load(csr.indptr, csr.indptr_type, i + 1);
    CHECK(b - a == cells[i].nnz);
  }
  struct ArrowSchema f;
  struct ArrowArray arr;
  CHECK(qv_sparse_vector_unstack(&csr, NULL, &f, &arr, &err) == QV_OK);
  QvSparseColumn back;
  CHECK(qv_sparse_column_init(&back, &f, &arr, NULL, &err) == QV_OK);
  CHECK(back.length == col->length);
  qv_sparse_column_reset(&back);
  f.release(&f);
  qv_sparse_reset(&csr);
}

static void column(const struct ArrowSchema *field, const struct ArrowArray *batch_child) {
  QvError err;
  struct ArrowArray a;
  CHECK(qv_array_share(batch_child, &a, &err) == QV_OK);
  QvSparseColumn col;
  QvStatus st = qv_sparse_column_init(&col, field, &a, NULL, &err);
  if (st != QV_OK) {
    CHECK(err.message[0] != '\0' && a.release != NULL);
    a.release(&a);
    return;
  }
  CHECK(a.release == NULL);
  if (col.length > 4096) {
    qv_sparse_column_reset(&col);
    return;
  }
  QvSparseTensor *cells = calloc((size_t)col.length + 1, sizeof *cells);
  bool *valid = calloc((size_t)col.length + 1, sizeof *valid);
  for (int64_t i = 0; i < col.length; i++) {
    valid[i] = !qv_sparse_column_is_null(&col, i);
    st = qv_sparse_column_cell(&col, i, &cells[i], &err);
    CHECK((st == QV_OK) == valid[i]);
    if (st != QV_OK) continue;
    CHECK(qv_sparse_validate(&cells[i], &err) == QV_OK);
    CHECK(cells[i].nnz == qv_sparse_column_cell_nnz(&col, i));
  }
  rebuild(&col, cells, valid);
  if (col.type.kind == QV_SPARSE_COLUMN_VECTOR && col.null_count == 0) vectors(&col, cells);
  for (int64_t i = 0; i < col.length; i++) qv_sparse_reset(&cells[i]);
  free(cells);
  free(valid);
  qv_sparse_column_reset(&col);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  QvError err;
  QvSource *src;
  if (qv_source_new_memory(&src, data, size, NULL, &err) != QV_OK) return 0;
  struct ArrowArrayStream stream;
  if (qv_rb_stream_reader_new(&stream, src, NULL, &err) != QV_OK) {
    qv_source_free(src);
    return 0;
  }
  struct ArrowSchema schema;
  if (stream.get_schema(&stream, &schema) == 0) {
    for (int batches = 0; batches < 4; batches++) {
      struct ArrowArray batch;
      if (stream.get_next(&stream, &batch) != 0 || batch.release == NULL) break;
      for (int64_t k = 0; k < schema.n_children && k < batch.n_children; k++)
        column(schema.children[k], batch.children[k]);
      batch.release(&batch);
    }
    schema.release(&schema);
  }
  stream.release(&stream);
  qv_source_free(src);
  return 0;
}
