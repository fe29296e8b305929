/* The random COO matrices and the comparison the sparse thread tests share
 * (test_sparse_threads, test_sparse_pages): one copy, static in each. */
#ifndef QV_TEST_SPARSE_FIXTURE_H
#define QV_TEST_SPARSE_FIXTURE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "quiver/sparse.h"
#include "test_util.h"

static uint64_t rng_state;
static uint64_t rnd(void) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return rng_state;
}

typedef struct Coo {
  int64_t shape[2];
  int64_t *coords;
  uint8_t *values;
  QvSparseTensor t;
} Coo;

/* n entries; rows drawn from [0, rows) (skew: half of them in row 7),
 * columns from [0, cols); every 16th entry repeats an earlier one. */
static void make_coo(Coo *c, QvArrowType vt, int64_t n, int64_t rows, int64_t cols, bool skew, uint64_t seed) {
  rng_state = seed;
  c->shape[0] = rows;
  c->shape[1] = cols;
  c->coords = malloc((size_t)n * 16);
  size_t vs = qv_arrow_type_size(vt);
  c->values = malloc((size_t)n * vs);
  for (int64_t i = 0; i < n; i++) {
    if (i > 0 && i % 16 == 0) {
      int64_t j = (int64_t)(rnd() % (uint64_t)i);
      c->coords[2 * i] = c->coords[2 * j];
      c->coords[2 * i + 1] = c->coords[2 * j + 1];
    } else {
      c->coords[2 * i] = skew && (rnd() & 1) ? 7 : (int64_t)(rnd() % (uint64_t)rows);
      c->coords[2 * i + 1] = (int64_t)(rnd() % (uint64_t)cols);
    }
    uint64_t bits = rnd();
    if (vt == QV_ARROW_FLOAT64) {
      double d = (double)(bits >> 11) * 0x1p-40 - 4096.0;
      memcpy(c->values + (size_t)i * vs, &d, 8);
    } else if (vt == QV_ARROW_FLOAT32) {
      float f = (float)(bits >> 40) * 0x1p-10f;
      memcpy(c->values + (size_t)i * vs, &f, 4);
    } else if (vt == QV_ARROW_FLOAT16) {
      uint16_t h = (uint16_t)(0x3c00 + (bits & 0x3ff)); /* 1.0 .. 2.0 */
      memcpy(c->values + (size_t)i * vs, &h, 2);
    } else {
      memcpy(c->values + (size_t)i * vs, &bits, vs);
    }
  }
  QvError err;
  assert_int_equal(qv_sparse_init(&c->t,
                                  &(QvSparseDesc){.format = QV_SPARSE_COO, .value_type = vt,
                                                  .index_type = QV_ARROW_INT64, .ndim = 2, .shape = c->shape,
                                                  .nnz = n, .coords = c->coords, .values = c->values},
                                  &err),
                   QV_OK);
}

static void free_coo(Coo *c) {
  qv_sparse_reset(&c->t);
  free(c->coords);
  free(c->values);
}

static void assert_same_csx(const QvSparseTensor *a, const QvSparseTensor *b) {
  assert_int_equal(a->format, b->format);
  assert_int_equal(a->nnz, b->nnz);
  assert_int_equal(a->indptr_len, b->indptr_len);
  assert_int_equal(a->index_type, b->index_type);
  size_t is = qv_arrow_type_size(a->index_type), vs = qv_arrow_type_size(a->value_type);
  assert_memory_equal(a->indptr, b->indptr, (size_t)a->indptr_len * is);
  assert_memory_equal(a->indices, b->indices, (size_t)a->nnz * is);
  assert_memory_equal(a->values, b->values, (size_t)a->nnz * vs);
}

static QvStatus convert(const QvSparseTensor *in, QvSparseFormat f, int threads, QvArrowType itype,
                        QvSparseTensor *out, QvError *err) {
  QvSparseOptions o = {.struct_size = sizeof o, .index_type = itype, .threads = threads};
  return qv_sparse_convert(in, f, &o, out, err);
}

#endif
