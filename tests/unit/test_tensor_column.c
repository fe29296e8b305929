/* Tensor columns: metadata and storage validation (one message per
 * violation), cell views, stack/unstack (zero copy where promised), the
 * builder for every kind and value type with permutation and dim names, and
 * round trips through an Arrow IPC stream and the C Data Interface. */
#include "quiver/advanced.h"
#include "test_util.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "quiver/io.h"
#include "quiver/recordbatch_ipc.h"
#include "quiver/tensor.h"
#include "quiver/tensor_column.h"
#include "util/copy.h"
#include "util/cpu.h"
#include "util/load.h"

static void assert_error(QvStatus st, const QvError *err, QvStatus code, const char *substr) {
  assert_int_equal(st, code);
  if (strstr(err->message, substr) == NULL)
    fail_msg("message '%s' lacks '%s'", err->message, substr);
}

static void parse_fails(QvTensorColumnKind kind, const char *json, int32_t ndim, QvStatus code,
                        const char *substr) {
  QvTensorColumnType t;
  QvError err = {0};
  assert_error(qv_tensor_column_type_parse(kind, json, strlen(json), ndim, &t, &err), &err, code,
               substr);
  assert_null(t.private_data);
  qv_tensor_column_type_reset(&t);
}

static void test_metadata(void **state) {
  (void)state;
  QvTensorColumnType t;
  QvError err = {0};
  const char *ok = "{\"shape\": [2, 3, 4], \"dim_names\": [\"C\", \"H\", \"W\"], "
                   "\"permutation\": [2, 0, 1]}";
  assert_int_equal(qv_tensor_column_type_parse(QV_TENSOR_COLUMN_FIXED_SHAPE, ok, strlen(ok), 0,
                                               &t, &err),
                   QV_OK);
  assert_int_equal(t.ndim, 3);
  assert_int_equal(t.shape[2], 4);
  assert_true(t.has_permutation);
  assert_int_equal(t.permutation[0], 2);
  assert_string_equal(t.dim_names[1], "H");
  assert_int_equal(qv_tensor_column_type_cell_n_elements(&t), 24);
  char *json;
  assert_int_equal(qv_tensor_column_type_to_json(&t, &json, &err), QV_OK);
  assert_string_equal(json, "{\"shape\":[2,3,4],\"dim_names\":[\"C\",\"H\",\"W\"],"
                            "\"permutation\":[2,0,1]}");
  free(json);
  qv_tensor_column_type_reset(&t);

  const QvTensorColumnKind F = QV_TENSOR_COLUMN_FIXED_SHAPE, V = QV_TENSOR_COLUMN_VARIABLE_SHAPE,
                           C = QV_TENSOR_COLUMN_CELL;
  parse_fails(F, "{\"shape\": [2, 3", 0, QV_EINVAL, "malformed JSON at line 1");
  parse_fails(F, "[1]", 0, QV_EINVAL, "not a JSON object");
  parse_fails(F, "{}", 0, QV_EINVAL, "\"shape\" is missing");
  parse_fails(F, "{\"shape\": 3}", 0, QV_EINVAL, "\"shape\" is not an array");
  parse_fails(F, "{\"shape\": [2, -2]}", 0, QV_EINVAL, "shape[1] = -2 is negative");
  parse_fails(F, "{\"shape\": [2, 1.5]}", 0, QV_EINVAL, "shape[1] is not an integer");
  parse_fails(F, "{\"shape\": [4294967296, 4294967296]}", 0, QV_EINVAL,
              "product of \"shape\" overflows");
  parse_fails(F, "{\"shape\": [2, 3], \"permutation\": [0, 0]}", 0, QV_EINVAL,
              "permutation[1] = 0 repeats permutation[0]: not a permutation");
  parse_fails(F, "{\"shape\": [2, 3], \"permutation\": [0, 2]}", 0, QV_EINVAL,
              "permutation[1] = 2 is not a dim in [0, 2)");
  parse_fails(F, "{\"shape\": [2, 3], \"permutation\": [1]}", 0, QV_EINVAL,
              "\"permutation\" has 1 elements for 2 dims");
  parse_fails(F, "{\"shape\": [2, 3], \"dim_names\": [\"a\", \"b\", \"c\"]}", 0, QV_EINVAL,
              "\"dim_names\" has 3 elements for 2 dims");
  parse_fails(F, "{\"shape\": [2, 3], \"dim_names\": [\"a\", 7]}", 0, QV_EINVAL,
              "dim_names[1] is not a string");
  parse_fails(F, "{\"shape\": [2], \"shape\": [3]}", 0, QV_EINVAL, "malformed JSON");
  char big[400] = "{\"shape\": [1";
  for (int i = 0; i < 64; i++) strcat(big, ",1");
  strcat(big, "]}");
  parse_fails(F, big, 0, QV_ELIMIT, "\"shape\" has 65 dims, over 64");
  parse_fails(V, "{\"uniform_shape\": [2, null]}", 3, QV_EINVAL,
              "\"uniform_shape\" has 2 elements for 3 dims");
  parse_fails(V, "{\"uniform_shape\": [2, -1, null]}", 3, QV_EINVAL,
              "uniform_shape[1] = -1 is negative");
  parse_fails(V, "{\"permutation\": [1, 1]}", 2, QV_EINVAL, "repeats");
  parse_fails(V, "{}", 65, QV_ELIMIT, "ndim 65");
  parse_fails(C, "{\"shape\": [4, 5]}", 0, QV_EINVAL, "\"type\" (a value type name) is missing");
  parse_fails(C, "{\"type\": \"int7\", \"shape\": [4, 5]}", 0, QV_EINVAL, "\"type\"");

  /* variable shape: empty metadata is allowed */
  assert_int_equal(qv_tensor_column_type_parse(V, "", 0, 2, &t, &err), QV_OK);
  assert_int_equal(t.ndim, 2);
  assert_int_equal(t.shape[0], -1);
  qv_tensor_column_type_reset(&t);
  const char *u = "{\"dim_names\": [\"H\", \"W\", \"C\"], \"uniform_shape\": [400, null, 3]}";
  assert_int_equal(qv_tensor_column_type_parse(V, u, strlen(u), 3, &t, &err), QV_OK);
  assert_int_equal(t.shape[0], 400);
  assert_int_equal(t.shape[1], -1);
  assert_int_equal(qv_tensor_column_type_to_json(&t, &json, &err), QV_OK);
  assert_string_equal(json, "{\"uniform_shape\":[400,null,3],\"dim_names\":[\"H\",\"W\",\"C\"]}");
  free(json);
  qv_tensor_column_type_reset(&t);
}

/* A tensor of `type` and `shape` (row-major) with values seed + i. */
static void make(QvArrowType type, int32_t ndim, const int64_t *shape, int seed, QvTensor *t) {
  void *data;
  QvError err = {0};
  assert_int_equal(qv_tensor_alloc(t, type, ndim, shape, NULL, false, &data, &err), QV_OK);
  size_t es = qv_arrow_type_size(type);
  int64_t n = qv_tensor_n_elements(t);
  for (int64_t i = 0; i < n; i++) {
    int64_t v = (seed + i) % 100;
    uint8_t *p = (uint8_t *)data + i * (int64_t)es;
    switch (type) {
      case QV_ARROW_FLOAT16: { uint16_t h = qv_float_to_half((float)v); memcpy(p, &h, 2); break; }
      case QV_ARROW_FLOAT32: { float f = (float)v; memcpy(p, &f, 4); break; }
      case QV_ARROW_FLOAT64: { double d = (double)v; memcpy(p, &d, 8); break; }
      default: qvi_st_bits(p, es, (uint64_t)v); break; /* small values, host order */
    }
  }
}

/* A physical cell [ps] read through `perm` equals the logical view. */
static void assert_permuted(const QvTensor *physical, const QvTensor *logical,
                            const int32_t *perm) {
  assert_int_equal(physical->ndim, logical->ndim);
  int64_t n = qv_tensor_n_elements(physical);
  int64_t idx[QV_TENSOR_MAX_NDIM] = {0}, lidx[QV_TENSOR_MAX_NDIM];
  QvError err = {0};
  for (int64_t e = 0; e < n; e++) {
    for (int32_t k = 0; k < logical->ndim; k++) lidx[k] = idx[perm[k]];
    double a, b;
    assert_int_equal(qv_tensor_get_double(physical, idx, &a, &err), QV_OK);
    assert_int_equal(qv_tensor_get_double(logical, lidx, &b, &err), QV_OK);
    if (a != b) fail_msg("element %lld: physical %g, logical %g", (long long)e, a, b);
    for (int32_t k = physical->ndim - 1; k >= 0; k--) {
      if (++idx[k] < physical->shape[k]) break;
      idx[k] = 0;
    }
  }
}

/* Writes a column as a one-column IPC stream and reads it back. */
static void ipc_roundtrip(struct ArrowSchema *field, struct ArrowArray *array,
                          struct ArrowSchema *field_back, struct ArrowArray *array_back) {
  QvError err = {0};
  struct ArrowSchema bs;
  struct ArrowArray ba;
  assert_int_equal(qv_tensor_column_to_batch(field, array, &bs, &ba, &err), QV_OK);
  QvSink *sink;
  assert_int_equal(qv_sink_new_memory(&sink, &err), QV_OK);
  QvRbWriter *w;
  assert_int_equal(qv_rb_writer_new(&w, &bs, sink, NULL, &err), QV_OK);
  assert_int_equal(qv_rb_writer_write(w, &ba, &err), QV_OK);
  assert_int_equal(qv_rb_writer_finish(w, &err), QV_OK);
  qv_rb_writer_free(w);
  uint8_t *bytes;
  size_t size;
  assert_int_equal(qv_sink_memory_take(sink, &bytes, &size, &err), QV_OK);
  qv_sink_free(sink);
  bs.release(&bs);
  ba.release(&ba);
  /* the arrays read are views of `bytes`: the owner frees them with the last */
  QvOwner *owner = qv_owner_new(qv_free, bytes);
  QvSource *src;
  assert_int_equal(qv_source_new_memory(&src, bytes, size, owner, &err), QV_OK);
  qv_owner_free(owner);
  struct ArrowArrayStream stream;
  assert_int_equal(qv_rb_stream_reader_new(&stream, src, NULL, &err), QV_OK);
  struct ArrowSchema s;
  struct ArrowArray a;
  assert_int_equal(stream.get_schema(&stream, &s), 0);
  assert_int_equal(stream.get_next(&stream, &a), 0);
  assert_non_null(a.release);
  /* move the only column out of the batch */
  assert_int_equal(qv_arrow_schema_copy(s.children[0], field_back, &err), QV_OK);
  assert_int_equal(qv_array_share(a.children[0], array_back, &err), QV_OK);
  a.release(&a);
  s.release(&s);
  stream.release(&stream);
  qv_source_free(src);
}

static void test_fixed_every_type(void **state) {
  (void)state;
  for (int ty = QV_ARROW_INT8; ty < QV_ARROW_NUMERIC_END; ty++) {
    QvError err = {0};
    QvTensorColumnType type;
    const char *j = "{\"shape\": [2, 3, 4], \"dim_names\": [\"C\", \"H\", \"W\"], "
                    "\"permutation\": [1, 2, 0]}";
    assert_int_equal(qv_tensor_column_type_parse(QV_TENSOR_COLUMN_FIXED_SHAPE, j, strlen(j), 0,
                                                 &type, &err),
                     QV_OK);
    type.value_type = (QvArrowType)ty;
    QvTensor cells[3];
    const QvTensor *ptrs[4];
    for (int i = 0; i < 3; i++) {
      make((QvArrowType)ty, 3, type.shape, 7 * i, &cells[i]);
      ptrs[i] = &cells[i];
    }
    ptrs[3] = NULL; /* a null cell */
    struct ArrowSchema field, f2;
    struct ArrowArray array, a2;
    assert_int_equal(qv_tensor_column_build(&type, "images", NULL, ptrs, 4, &field, &array, &err),
                     QV_OK);
    ipc_roundtrip(&field, &array, &f2, &a2);
    QvTensorColumn col;
    assert_int_equal(qv_tensor_column_init(&col, &f2, &a2, NULL, &err), QV_OK);
    assert_null(a2.release); /* moved */
    f2.release(&f2);
    assert_int_equal(col.length, 4);
    assert_int_equal(col.null_count, 1);
    assert_string_equal(col.type.dim_names[2], "W");
    assert_int_equal(col.type.permutation[2], 0);
    for (int i = 0; i < 3; i++) {
      QvTensor c;
      assert_int_equal(qv_tensor_column_cell(&col, i, &c, &err), QV_OK);
      assert_int_equal(c.shape[0], 3); /* logical [H, W, C] */
      assert_int_equal(c.shape[2], 2);
      assert_string_equal(c.dim_names[0], "H");
      assert_string_equal(c.dim_names[2], "C");
      assert_permuted(&cells[i], &c, type.permutation);
      qv_tensor_reset(&c);
    }
    QvTensor c;
    assert_error(qv_tensor_column_cell(&col, 3, &c, &err), &err, QV_EINVAL, "cell 3 is null");
    assert_error(qv_tensor_column_cell(&col, 4, &c, &err), &err, QV_EARG, "outside");
    /* stack: nulls refused, or filled */
    QvTensor st;
    assert_error(qv_tensor_column_stack(&col, NULL, &st, &err), &err, QV_EINVAL,
                 "cell 3 is null (1 null cells)");
    QvTensorStackOptions so = {.struct_size = sizeof so, .null_fill = true, .leading_name = "N"};
    assert_int_equal(qv_tensor_column_stack(&col, &so, &st, &err), QV_OK);
    assert_int_equal(st.ndim, 4);
    assert_int_equal(st.shape[0], 4);
    assert_int_equal(st.shape[1], 3);
    assert_string_equal(st.dim_names[0], "N");
    assert_string_equal(st.dim_names[3], "C");
    assert_int_equal(qv_tensor_count_nonzero(&st) <= 3 * 24, true);
    double zero = 1;
    assert_int_equal(qv_tensor_get_double(&st, (int64_t[]){3, 2, 3, 1}, &zero, &err), QV_OK);
    assert_true(zero == 0);
    /* unstack the stacked tensor: its layout is a permutation, kept as one */
    struct ArrowSchema uf;
    struct ArrowArray ua;
    QvTensorUnstackOptions uo = {.struct_size = sizeof uo, .name = "again"};
    assert_int_equal(qv_tensor_column_unstack(&st, &uo, &uf, &ua, &err), QV_OK);
    assert_ptr_equal(ua.children[0]->buffers[1], st.data); /* no copy */
    QvTensorColumn back;
    assert_int_equal(qv_tensor_column_init(&back, &uf, &ua, NULL, &err), QV_OK);
    uf.release(&uf);
    assert_int_equal(back.type.permutation[0], 1);
    assert_int_equal(back.type.shape[0], 2);
    assert_string_equal(back.type.dim_names[0], "C");
    for (int i = 0; i < 3; i++) {
      QvTensor c2;
      assert_int_equal(qv_tensor_column_cell(&back, i, &c2, &err), QV_OK);
      assert_permuted(&cells[i], &c2, type.permutation);
      qv_tensor_reset(&c2);
    }
    qv_tensor_column_reset(&back);
    qv_tensor_reset(&st);
    /* contiguous: a row-major copy, same values */
    so.contiguous = true;
    assert_int_equal(qv_tensor_column_stack(&col, &so, &st, &err), QV_OK);
    assert_true(qv_tensor_is_row_major(&st));
    QvTensor c0, s0;
    assert_int_equal(qv_tensor_column_cell(&col, 1, &c0, &err), QV_OK);
    assert_int_equal(qv_tensor_init(&s0, &(QvTensorDesc){.type = st.type, .ndim = 3,
                                                         .shape = st.shape + 1,
                                                         .strides = st.strides + 1,
                                                         .data = st.data + st.strides[0],
                                                         .data_size = st.strides[0]},
                                    &err),
                     QV_OK);
    assert_true(qv_tensor_equal(&c0, &s0, true));
    qv_tensor_reset(&c0);
    qv_tensor_reset(&s0);
    qv_tensor_reset(&st);
    qv_tensor_column_reset(&col);
    for (int i = 0; i < 3; i++) qv_tensor_reset(&cells[i]);
    qv_tensor_column_type_reset(&type);
  }
}

static void test_stack_zero_copy(void **state) {
  (void)state;
  QvError err = {0};
  int64_t shape[3] = {5, 4, 3};
  QvTensor t;
  make(QV_ARROW_FLOAT32, 3, shape, 1, &t);
  struct ArrowSchema f;
  struct ArrowArray a;
  assert_int_equal(qv_tensor_column_unstack(&t, NULL, &f, &a, &err), QV_OK);
  assert_ptr_equal(a.children[0]->buffers[1], t.data);
  QvTensorColumn col;
  assert_int_equal(qv_tensor_column_init(&col, &f, &a, NULL, &err), QV_OK);
  f.release(&f);
  QvTensor s;
  assert_int_equal(qv_tensor_column_stack(&col, NULL, &s, &err), QV_OK);
  assert_ptr_equal(s.data, t.data);
  assert_true(qv_tensor_equal(&s, &t, false));
  QvTensor cell;
  assert_int_equal(qv_tensor_column_cell(&col, 2, &cell, &err), QV_OK);
  assert_ptr_equal(cell.data, t.data + 2 * 12 * 4);
  qv_tensor_column_reset(&col);
  qv_tensor_reset(&t);
  /* the views keep the memory alive */
  double v;
  assert_int_equal(qv_tensor_get_double(&cell, (int64_t[]){3, 2}, &v, &err), QV_OK);
  assert_true(v == 1 + 24 + 11);
  qv_tensor_reset(&cell);
  qv_tensor_reset(&s);

  /* a column-major tensor is no permutation with the leading dim outermost: copied */
  QvTensor cm;
  void *data;
  assert_int_equal(qv_tensor_alloc(&cm, QV_ARROW_INT16, 3, shape, NULL, true, &data, &err), QV_OK);
  assert_int_equal(qv_tensor_column_unstack(&cm, NULL, &f, &a, &err), QV_OK);
  assert_ptr_not_equal(a.children[0]->buffers[1], cm.data);
  a.release(&a);
  f.release(&f);
  qv_tensor_reset(&cm);
  /* 0-d */
  float x = 1;
  assert_int_equal(qv_tensor_init(&t, &(QvTensorDesc){.type = QV_ARROW_FLOAT32, .data = &x,
                                                      .data_size = 4},
                                  &err),
                   QV_OK);
  assert_error(qv_tensor_column_unstack(&t, NULL, &f, &a, &err), &err, QV_EINVAL, "0-d tensor");
  qv_tensor_reset(&t);
}

static void test_variable_and_cell(void **state) {
  (void)state;
  for (int ty = QV_ARROW_INT8; ty < QV_ARROW_NUMERIC_END; ty++) {
    QvError err = {0};
    QvTensorColumnType type;
    const char *j = "{\"dim_names\": [\"H\", \"W\"], \"uniform_shape\": [2, null], "
                    "\"permutation\": [1, 0]}";
    assert_int_equal(qv_tensor_column_type_parse(QV_TENSOR_COLUMN_VARIABLE_SHAPE, j, strlen(j), 2,
                                                 &type, &err),
                     QV_OK);
    type.value_type = (QvArrowType)ty;
    QvTensor cells[3];
    const QvTensor *ptrs[4] = {&cells[0], NULL, &cells[1], &cells[2]};
    for (int i = 0; i < 3; i++) make((QvArrowType)ty, 2, (int64_t[]){2, i + 1}, i, &cells[i]);
    struct ArrowSchema f, f2;
    struct ArrowArray a, a2;
    assert_int_equal(qv_tensor_column_build(&type, "v", NULL, ptrs, 4, &f, &a, &err), QV_OK);
    ipc_roundtrip(&f, &a, &f2, &a2);
    QvTensorColumn col;
    assert_int_equal(qv_tensor_column_init(&col, &f2, &a2, NULL, &err), QV_OK);
    f2.release(&f2);
    assert_int_equal(col.type.shape[0], 2);
    assert_true(qv_tensor_column_is_null(&col, 1));
    for (int i = 0, c = 0; i < 4; i++) {
      if (i == 1) continue;
      QvTensor v;
      assert_int_equal(qv_tensor_column_cell(&col, i, &v, &err), QV_OK);
      assert_int_equal(v.shape[0], c + 1);
      assert_string_equal(v.dim_names[0], "W");
      assert_permuted(&cells[c], &v, type.permutation);
      qv_tensor_reset(&v);
      c++;
    }
    /* stacking: the null cell 1, then cells of different shapes */
    QvTensor s;
    assert_error(qv_tensor_column_stack(&col, NULL, &s, &err), &err, QV_EINVAL,
                 "cell 1 is null (1 null cells)");
    assert_error(qv_tensor_column_stack(&col, &(QvTensorStackOptions){.null_fill = true}, &s,
                                        &err),
                 &err, QV_EINVAL,
                 "arrow.variable_shape_tensor cell 2 has shape [2, 2], cell 0 has [2, 1]: the "
                 "cells of one tensor need one shape");
    qv_tensor_column_reset(&col);
    /* a cell that breaks uniform_shape is refused by the builder */
    QvTensor odd;
    make((QvArrowType)ty, 2, (int64_t[]){3, 1}, 0, &odd);
    const QvTensor *bad[1] = {&odd};
    assert_error(qv_tensor_column_build(&type, "v", NULL, bad, 1, &f, &a, &err), &err, QV_EINVAL,
                 "cell 0: shape[0] = 3, the column's is 2");
    qv_tensor_reset(&odd);
    qv_tensor_column_type_reset(&type);

    /* the cell form, under a caller's name */
    const char *cj = "{\"type\": \"x\", \"shape\": [2, 2]}";
    (void)cj;
    memset(&type, 0, sizeof type);
    qv_tensor_column_type_reset(&type);
    type.kind = QV_TENSOR_COLUMN_CELL;
    type.value_type = (QvArrowType)ty;
    type.ndim = 2;
    type.shape[0] = 2, type.shape[1] = 1;
    const QvTensor *two[3] = {&cells[0], NULL, &cells[0]};
    assert_int_equal(qv_tensor_column_build(&type, "blob", "my.tensor", two, 3, &f, &a, &err),
                     QV_OK);
    ipc_roundtrip(&f, &a, &f2, &a2);
    struct ArrowArray keep;
    assert_int_equal(qv_array_share(&a2, &keep, &err), QV_OK);
    /* without the name it is no tensor column */
    assert_error(qv_tensor_column_init(&col, &f2, &a2, NULL, &err), &err, QV_EINVAL,
                 "field 'blob' is not a tensor column (extension 'my.tensor')");
    assert_non_null(a2.release); /* still the caller's */
    QvTensorColumnOptions o = {.struct_size = sizeof o, .cell_extension = "my.tensor"};
    assert_int_equal(qv_tensor_column_init(&col, &f2, &a2, &o, &err), QV_OK);
    QvTensor v;
    assert_int_equal(qv_tensor_column_cell(&col, 2, &v, &err), QV_OK);
    assert_true(qv_tensor_equal(&v, &cells[0], false));
    qv_tensor_reset(&v);
    assert_int_equal(qv_tensor_column_stack(&col, &(QvTensorStackOptions){.null_fill = true}, &v,
                                            &err),
                     QV_OK);
    assert_int_equal(v.shape[0], 3);
    qv_tensor_reset(&v);
    qv_tensor_column_reset(&col);
    /* the metadata must agree with the FixedSizeBinary width */
    qv_arrow_schema_set_metadata(&f2, NULL, &err);
    const char *wrong = "{\"type\": \"int64\", \"shape\": [5, 5]}";
    assert_int_equal(qv_arrow_schema_add_metadata(&f2, "ARROW:extension:name", 20, "my.tensor", 9, &err),
                     QV_OK);
    assert_int_equal(qv_arrow_schema_add_metadata(&f2, "ARROW:extension:metadata", 24, wrong,
                                            strlen(wrong), &err),
                     QV_OK);
    assert_error(qv_tensor_column_init(&col, &f2, &keep, &o, &err), &err, QV_EINVAL,
                 "FixedSizeBinary width");
    keep.release(&keep);
    f2.release(&f2);
    qv_tensor_column_type_reset(&type);
    for (int i = 0; i < 3; i++) qv_tensor_reset(&cells[i]);
  }
}

/* Storage that disagrees with the metadata, and variable shape cells that
 * lie, built by hand. */
static void test_storage_errors(void **state) {
  (void)state;
  QvError err = {0};
  struct ArrowSchema f;
  assert_int_equal(qv_arrow_schema_init(&f, "+w:6", "x", ARROW_FLAG_NULLABLE, 1, &err), QV_OK);
  assert_int_equal(qv_arrow_schema_init(f.children[0], "f", "item", ARROW_FLAG_NULLABLE, 0, &err), QV_OK);
  const char *m = "{\"shape\": [2, 4]}";
  qv_arrow_schema_add_metadata(&f, "ARROW:extension:name", 20, QV_FIXED_SHAPE_TENSOR,
                         strlen(QV_FIXED_SHAPE_TENSOR), &err);
  qv_arrow_schema_add_metadata(&f, "ARROW:extension:metadata", 24, m, strlen(m), &err);
  QvTensorColumnType t;
  assert_error(qv_tensor_column_type_from_field(&f, NULL, &t, &err), &err, QV_EINVAL,
               "FixedSizeList size 6 but shape has 8 values");
  f.release(&f);
  assert_int_equal(qv_arrow_schema_init(&f, "+w:4", "x", ARROW_FLAG_NULLABLE, 1, &err), QV_OK);
  assert_int_equal(qv_arrow_schema_init(f.children[0], "u", "item", ARROW_FLAG_NULLABLE, 0, &err), QV_OK);
  m = "{\"shape\": [4]}";
  qv_arrow_schema_add_metadata(&f, "ARROW:extension:name", 20, QV_FIXED_SHAPE_TENSOR,
                         strlen(QV_FIXED_SHAPE_TENSOR), &err);
  qv_arrow_schema_add_metadata(&f, "ARROW:extension:metadata", 24, m, strlen(m), &err);
  assert_error(qv_tensor_column_type_from_field(&f, NULL, &t, &err), &err, QV_EINVAL,
               "value type 'u' is not a numeric tensor type");
  f.release(&f);
  assert_int_equal(qv_arrow_schema_init(&f, "i", "x", ARROW_FLAG_NULLABLE, 0, &err), QV_OK);
  qv_arrow_schema_add_metadata(&f, "ARROW:extension:name", 20, QV_VARIABLE_SHAPE_TENSOR,
                         strlen(QV_VARIABLE_SHAPE_TENSOR), &err);
  assert_error(qv_tensor_column_type_from_field(&f, NULL, &t, &err), &err, QV_EINVAL,
               "storage is not a Struct");
  f.release(&f);

  /* variable shape: build a valid column, then make a cell lie */
  QvTensorColumnType vt;
  assert_int_equal(qv_tensor_column_type_parse(QV_TENSOR_COLUMN_VARIABLE_SHAPE, "", 0, 2, &vt,
                                               &err),
                   QV_OK);
  vt.value_type = QV_ARROW_INT32;
  QvTensor c0, c1;
  make(QV_ARROW_INT32, 2, (int64_t[]){2, 5}, 0, &c0);
  make(QV_ARROW_INT32, 2, (int64_t[]){1, 3}, 0, &c1);
  const QvTensor *cells[2] = {&c0, &c1};
  struct ArrowArray a;
  assert_int_equal(qv_tensor_column_build(&vt, "v", NULL, cells, 2, &f, &a, &err), QV_OK);
  /* shape child values: [2, 5, 1, 3]; make cell 1 claim [1, 4] */
  int32_t *shape_values = (int32_t *)a.children[1]->children[0]->buffers[1];
  shape_values[3] = 4;
  QvTensorColumn col;
  assert_error(qv_tensor_column_init(&col, &f, &a, NULL, &err), &err, QV_EINVAL,
               "arrow.variable_shape_tensor cell 1: shape [1, 4] holds 4 values, data has 3");
  shape_values[3] = -3;
  assert_error(qv_tensor_column_init(&col, &f, &a, NULL, &err), &err, QV_EINVAL,
               "cell 1: shape[1] = -3 is negative");
  shape_values[3] = 3;
  /* uniform_shape [2, null] disagrees with cell 1's [1, 3] */
  const char *um = "{\"uniform_shape\": [2, null]}";
  qv_arrow_schema_set_metadata(&f, NULL, &err);
  qv_arrow_schema_add_metadata(&f, "ARROW:extension:name", 20, QV_VARIABLE_SHAPE_TENSOR,
                         strlen(QV_VARIABLE_SHAPE_TENSOR), &err);
  qv_arrow_schema_add_metadata(&f, "ARROW:extension:metadata", 24, um, strlen(um), &err);
  assert_error(qv_tensor_column_init(&col, &f, &a, NULL, &err), &err, QV_EINVAL,
               "cell 1: shape[0] = 1, uniform_shape[0] = 2");
  a.release(&a);
  f.release(&f);
  qv_tensor_reset(&c0);
  qv_tensor_reset(&c1);
  qv_tensor_column_type_reset(&vt);
}

/* ---- the plane kernels and permuted stacks */

/* Byte b of element i of a test pattern: distinct across elements. */
static uint8_t pattern(int64_t i, int b) { return (uint8_t)(i * 7 + b * 61 + (i >> 8) * 13); }

/* One call of a plane kernel bumps exactly one of the two counters: the
 * AVX2 one for k = 2, 3, 4, 8 when AVX2 is allowed and present. */
static void assert_planes_path(uint64_t avx0, uint64_t port0, int k) {
  bool avx2 = qvi_cpu_has(QV_CPU_AVX2) && (k == 2 || k == 3 || k == 4 || k == 8);
  assert_int_equal(qvi_path_count(QV_PATH_PLANES_AVX2), avx0 + (avx2 ? 1 : 0));
  assert_int_equal(qvi_path_count(QV_PATH_PLANES_PORTABLE), port0 + (avx2 ? 0 : 1));
}

/* Every element size, k = 2..8, with and without streaming (n past a
 * scratch chunk and not a multiple of it), data at odd addresses, n = 0, 1:
 * deinterleave then interleave back, element by element. Both the AVX2 and
 * the portable kernels (qvi_cpu_override). */
static void test_planes_kernels(void **state) {
  (void)state;
  const int64_t ns[] = {0, 1, 7, 33, 1500};
  for (int pass = 0; pass < 2; pass++) {
    unsigned prev = qvi_cpu_override(pass == 0 ? QV_CPU_ALL : 0);
    for (size_t e = 1; e <= 8; e *= 2)
      for (int k = 2; k <= QV_PLANES_MAX; k++)
        for (size_t ni = 0; ni < sizeof ns / sizeof ns[0]; ni++)
          for (int mode = 0; mode < 3; mode++) {
            int64_t n = ns[ni];
            bool stream = mode != 0, odd = mode == 2;
            /* plane stride: a multiple of 16 (streams) or not (odd) */
            int64_t ps = n * (int64_t)e + (odd ? 3 : 16 - (n * (int64_t)e) % 16);
            size_t gbytes = (size_t)(n * k) * e;
            uint8_t *groups = malloc(gbytes + 64), *back = malloc(gbytes + 64);
            uint8_t *planes = malloc((size_t)(ps * k) + 64);
            uint8_t *g = groups + (odd ? 1 : 0), *b = back + (odd ? 3 : 0);
            uint8_t *pl = (uint8_t *)(((uintptr_t)planes + 15) & ~(uintptr_t)15) + (odd ? 5 : 0);
            for (int64_t i = 0; i < n * k; i++)
              for (size_t x = 0; x < e; x++) g[i * (int64_t)e + (int64_t)x] = pattern(i, (int)x);
            uint64_t a0 = qvi_path_count(QV_PATH_PLANES_AVX2);
            uint64_t p0 = qvi_path_count(QV_PATH_PLANES_PORTABLE);
            qvi_copy_deinterleave(pl, ps, g, n, k, e, stream);
            assert_planes_path(a0, p0, k);
            for (int64_t j = 0; j < n; j++)
              for (int c = 0; c < k; c++)
                for (size_t x = 0; x < e; x++)
                  if (pl[c * ps + j * (int64_t)e + (int64_t)x] != pattern(j * k + c, (int)x))
                    fail_msg("deinterleave e=%zu k=%d n=%lld mode %d: group %lld element %d",
                             e, k, (long long)n, mode, (long long)j, c);
            a0 = qvi_path_count(QV_PATH_PLANES_AVX2);
            p0 = qvi_path_count(QV_PATH_PLANES_PORTABLE);
            qvi_copy_interleave(b, pl, ps, n, k, e, stream);
            assert_planes_path(a0, p0, k);
            if (gbytes > 0 && memcmp(b, g, gbytes) != 0)
              fail_msg("interleave e=%zu k=%d n=%lld mode %d", e, k, (long long)n, mode);
            free(groups);
            free(back);
            free(planes);
          }
    qvi_cpu_override(prev);
  }
}

/* k = 3 float32 planes streamed straight from AVX2 registers: 16 groups a
 * step and a tail (n = 1, 15, 16, 17, 1500), source groups at an odd
 * address; taken (QV_PATH_PLANES_AVX2_DIRECT) exactly when AVX2 is there and
 * the planes (deinterleave) or the groups (interleave) are 32-byte aligned,
 * else the scratch-block kernel; the same values either way. */
static void test_planes_direct(void **state) {
  (void)state;
  const int64_t ns[] = {1, 15, 16, 17, 1500};
  for (int pass = 0; pass < 2; pass++) {
    unsigned prev = qvi_cpu_override(pass == 0 ? QV_CPU_ALL : 0);
    for (size_t ni = 0; ni < sizeof ns / sizeof ns[0]; ni++)
      for (int shift = 0; shift <= 16; shift += 16) {
        int64_t n = ns[ni], ps = (n * 4 + 31) / 32 * 32 + shift; /* shift 16: 16-aligned only */
        uint8_t *groups = malloc((size_t)(n * 12) + 64), *back = malloc((size_t)(n * 12) + 96);
        uint8_t *planes = malloc((size_t)(ps * 3) + 96);
        uint8_t *g = groups + 1;
        uint8_t *pl = (uint8_t *)(((uintptr_t)planes + 31) & ~(uintptr_t)31) + shift;
        uint8_t *b = (uint8_t *)(((uintptr_t)back + 31) & ~(uintptr_t)31) + shift;
        for (int64_t i = 0; i < n * 3; i++)
          for (int x = 0; x < 4; x++) g[i * 4 + x] = pattern(i, x);
        bool direct = qvi_cpu_has(QV_CPU_AVX2) && shift == 0;
        uint64_t d0 = qvi_path_count(QV_PATH_PLANES_AVX2_DIRECT);
        qvi_copy_deinterleave(pl, ps, g, n, 3, 4, true);
        assert_int_equal(qvi_path_count(QV_PATH_PLANES_AVX2_DIRECT) - d0, direct ? 1 : 0);
        for (int64_t j = 0; j < n; j++)
          for (int c = 0; c < 3; c++)
            for (int x = 0; x < 4; x++)
              if (pl[c * ps + j * 4 + x] != pattern(j * 3 + c, x))
                fail_msg("deinterleave n=%lld shift %d: group %lld element %d", (long long)n,
                         shift, (long long)j, c);
        d0 = qvi_path_count(QV_PATH_PLANES_AVX2_DIRECT);
        qvi_copy_interleave(b, pl, ps, n, 3, 4, true);
        assert_int_equal(qvi_path_count(QV_PATH_PLANES_AVX2_DIRECT) - d0, direct ? 1 : 0);
        if (memcmp(b, g, (size_t)(n * 12)) != 0)
          fail_msg("interleave n=%lld shift %d", (long long)n, shift);
        free(groups);
        free(back);
        free(planes);
      }
    qvi_cpu_override(prev);
  }
}

/* Transposing copies whose short source side is more than half a line
 * (float32 12 of 16, float16 20 of 32, uint8 40 of 64) go through partial
 * micro-blocks (QV_PATH_TRANSPOSE_EDGE), with and without streaming stores
 * (9.6 MB, destination lines 16-byte aligned); narrower ones (uint8 20 of
 * 64) keep the element loop. Every copy equals its source element by
 * element. */
static void test_transpose_edge(void **state) {
  (void)state;
  static const struct {
    QvArrowType type;
    int64_t a, b; /* a row-major [a, b] read as [b, a] */
    bool edge;
  } cases[] = {
      {QV_ARROW_FLOAT32, 40, 12, true},  {QV_ARROW_FLOAT32, 37, 15, true},
      {QV_ARROW_FLOAT16, 50, 20, true},  {QV_ARROW_UINT8, 70, 40, true},
      {QV_ARROW_UINT8, 70, 20, false},   {QV_ARROW_FLOAT32, 200004, 12, true},
  };
  for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {
    int64_t shape[2] = {cases[ci].a, cases[ci].b};
    QvTensor phys;
    make(cases[ci].type, 2, shape, (int)ci, &phys);
    int64_t vshape[2] = {cases[ci].b, cases[ci].a};
    int64_t vstrides[2] = {phys.strides[1], phys.strides[0]};
    QvError err = {0};
    QvTensor view, copy;
    assert_int_equal(qv_tensor_init(&view, &(QvTensorDesc){.type = phys.type, .ndim = 2,
                                                           .shape = vshape, .strides = vstrides,
                                                           .data = phys.data,
                                                           .data_size = phys.data_size},
                                    &err),
                     QV_OK);
    uint64_t e0 = qvi_path_count(QV_PATH_TRANSPOSE_EDGE);
    assert_int_equal(qv_tensor_copy(&view, false, &copy, &err), QV_OK);
    assert_int_equal(qvi_path_count(QV_PATH_TRANSPOSE_EDGE) - e0, cases[ci].edge ? 1 : 0);
    size_t es = qv_arrow_type_size(phys.type);
    for (int64_t i = 0; i < cases[ci].b; i++)
      for (int64_t j = 0; j < cases[ci].a; j++)
        if (memcmp(copy.data + (i * cases[ci].a + j) * (int64_t)es,
                   phys.data + (j * cases[ci].b + i) * (int64_t)es, es) != 0)
          fail_msg("case %zu: element [%lld, %lld] differs", ci, (long long)i, (long long)j);
    qv_tensor_reset(&copy);
    qv_tensor_reset(&view);
    qv_tensor_reset(&phys);
  }
}

/* A fixed_shape_tensor column over `data` (n row-major physical cells; the
 * column does not own it) with metadata `json`; with `null_cells`, its
 * validity bitmap (in `bitmap`, (n + 7) / 8 bytes) nulls the cells listed
 * under n (-1 ends the list). */
static void column_with_nulls(QvArrowType type, const void *data, int64_t n,
                              const int64_t *null_cells, uint8_t *bitmap, const char *json,
                              QvTensorColumn *col) {
  QvError err = {0};
  QvTensorColumnType t;
  assert_int_equal(qv_tensor_column_type_parse(QV_TENSOR_COLUMN_FIXED_SHAPE, json, strlen(json),
                                               0, &t, &err),
                   QV_OK);
  t.value_type = type;
  struct ArrowSchema f;
  assert_int_equal(qv_tensor_column_schema_init(&f, "c", &t, NULL, &err), QV_OK);
  QvArrayView v;
  assert_int_equal(qv_array_view_init(&v, &f, &err), QV_OK);
  int64_t nulls = 0;
  if (null_cells) {
    memset(bitmap, 0xff, (size_t)(n + 7) / 8);
    for (const int64_t *c = null_cells; *c >= 0; c++)
      if (*c < n) {
        bitmap[*c / 8] &= (uint8_t)~(1u << (*c % 8));
        nulls++;
      }
    v.buffer[0] = bitmap;
    v.buffer_size[0] = (n + 7) / 8;
  }
  int64_t cell = qv_tensor_column_type_cell_n_elements(&t);
  v.length = n;
  v.null_count = nulls;
  v.children[0].length = n * cell;
  v.children[0].null_count = 0;
  v.children[0].buffer[1] = data;
  v.children[0].buffer_size[1] = n * cell * (int64_t)qv_arrow_type_size(type);
  struct ArrowArray a;
  assert_int_equal(qv_array_export_view(&v, NULL, &a, &err), QV_OK);
  qv_array_view_reset(&v);
  assert_int_equal(qv_tensor_column_init(col, &f, &a, NULL, &err), QV_OK);
  f.release(&f);
  qv_tensor_column_type_reset(&t);
}

static void column_over(QvArrowType type, const void *data, int64_t n, const char *json,
                        QvTensorColumn *col) {
  column_with_nulls(type, data, n, NULL, NULL, json, col);
}

/* Next permutation of perm[0..n) in lexicographic order; false after the last. */
static bool next_perm(int32_t *perm, int n) {
  int i = n - 2;
  while (i >= 0 && perm[i] >= perm[i + 1]) i--;
  if (i < 0) return false;
  int j = n - 1;
  while (perm[j] <= perm[i]) j--;
  int32_t t = perm[i];
  perm[i] = perm[j];
  perm[j] = t;
  for (int a = i + 1, b = n - 1; a < b; a++, b--) t = perm[a], perm[a] = perm[b], perm[b] = t;
  return true;
}

/* Stacks of permuted columns as row-major copies: every element size, every
 * permutation of rank 2-4 cells, extents that divide no tile (and a short
 * side of 2..8 that takes the plane kernels), n = 0, 1, 3; each stacked cell
 * checked against the physical cell through the permutation. */
static void test_stack_permuted_copy(void **state) {
  (void)state;
  static const int64_t shapes[][4] = {
      {3, 37}, {17, 5}, {70, 67},  {5, 7, 3}, {3, 9, 33}, {2, 65, 17}, {2, 3, 5, 7}, {4, 1, 6, 3},
  };
  static const int ranks[] = {2, 2, 2, 3, 3, 3, 4, 4};
  static const QvArrowType types[] = {QV_ARROW_INT8, QV_ARROW_FLOAT16, QV_ARROW_UINT32,
                                      QV_ARROW_FLOAT64};
  uint64_t planes0 = qvi_path_count(QV_PATH_PLANES_AVX2) + qvi_path_count(QV_PATH_PLANES_PORTABLE);
  for (size_t ti = 0; ti < sizeof types / sizeof types[0]; ti++)
    for (size_t si = 0; si < sizeof ranks / sizeof ranks[0]; si++)
      for (int64_t n = 0; n <= 3; n += (n == 1 ? 2 : 1)) {
        int r = ranks[si];
        int64_t full[5] = {n};
        memcpy(full + 1, shapes[si], (size_t)r * sizeof(int64_t));
        QvTensor phys;
        make(types[ti], r + 1, full, (int)si, &phys);
        int32_t perm[4] = {0, 1, 2, 3};
        do {
          char json[200];
          int len = snprintf(json, sizeof json, "{\"shape\": [");
          for (int k = 0; k < r; k++)
            len += snprintf(json + len, sizeof json - (size_t)len, "%s%lld", k ? ", " : "",
                            (long long)shapes[si][k]);
          len += snprintf(json + len, sizeof json - (size_t)len, "], \"permutation\": [");
          for (int k = 0; k < r; k++)
            len += snprintf(json + len, sizeof json - (size_t)len, "%s%d", k ? ", " : "",
                            (int)perm[k]);
          snprintf(json + len, sizeof json - (size_t)len, "]}");
          QvTensorColumn col;
          column_over(types[ti], phys.data, n, json, &col);
          QvError err = {0};
          QvTensor st;
          QvTensorStackOptions so = {.struct_size = sizeof so, .contiguous = true};
          assert_int_equal(qv_tensor_column_stack(&col, &so, &st, &err), QV_OK);
          assert_true(qv_tensor_is_row_major(&st));
          assert_int_equal(st.shape[0], n);
          for (int64_t i = 0; i < n; i++) {
            QvTensor pc, sc;
            int64_t off = i * phys.strides[0];
            assert_int_equal(
                qv_tensor_init(&pc, &(QvTensorDesc){.type = phys.type, .ndim = r,
                                                    .shape = phys.shape + 1,
                                                    .strides = phys.strides + 1,
                                                    .data = phys.data + off,
                                                    .data_size = phys.strides[0]},
                               &err),
                QV_OK);
            assert_int_equal(
                qv_tensor_init(&sc, &(QvTensorDesc){.type = st.type, .ndim = r,
                                                    .shape = st.shape + 1,
                                                    .strides = st.strides + 1,
                                                    .data = st.data + i * st.strides[0],
                                                    .data_size = st.strides[0]},
                               &err),
                QV_OK);
            assert_permuted(&pc, &sc, perm);
            qv_tensor_reset(&pc);
            qv_tensor_reset(&sc);
          }
          qv_tensor_reset(&st);
          qv_tensor_column_reset(&col);
        } while (next_perm(perm, r));
        qv_tensor_reset(&phys);
      }
  /* the short sides (3, 5, 7, 2, ...) went through the plane kernels */
  assert_true(qvi_path_count(QV_PATH_PLANES_AVX2) + qvi_path_count(QV_PATH_PLANES_PORTABLE) >
              planes0);

  /* one stack, a copy large enough to stream: HWC float32 cells read as
   * CHW and CHW cells read as HWC, each kernel proven by its counter */
  int64_t big[4] = {14, 224, 224, 3};
  QvTensor phys;
  make(QV_ARROW_FLOAT32, 4, big, 5, &phys);
  const char *jsons[2] = {"{\"shape\": [224, 224, 3], \"permutation\": [2, 0, 1]}",
                          "{\"shape\": [3, 224, 224], \"permutation\": [1, 2, 0]}"};
  for (int w = 0; w < 2; w++) {
    QvTensorColumn col;
    column_over(QV_ARROW_FLOAT32, phys.data, 14, jsons[w], &col);
    QvError err = {0};
    QvTensor view, st;
    assert_int_equal(qv_tensor_column_stack(&col, NULL, &view, &err), QV_OK);
    uint64_t a0 = qvi_path_count(QV_PATH_PLANES_AVX2), p0 = qvi_path_count(QV_PATH_PLANES_PORTABLE);
    uint64_t d0 = qvi_path_count(QV_PATH_PLANES_AVX2_DIRECT);
    QvTensorStackOptions so = {.struct_size = sizeof so, .contiguous = true};
    assert_int_equal(qv_tensor_column_stack(&col, &so, &st, &err), QV_OK);
    /* streamed straight from registers: the result and its planes are
     * 32-byte aligned */
    if (qvi_cpu_has(QV_CPU_AVX2))
      assert_int_equal(qvi_path_count(QV_PATH_PLANES_AVX2_DIRECT) - d0, 14);
    /* one kernel call per cell */
    assert_int_equal(qvi_path_count(QV_PATH_PLANES_AVX2) - a0 +
                         qvi_path_count(QV_PATH_PLANES_PORTABLE) - p0,
                     14);
    if (qvi_cpu_has(QV_CPU_AVX2)) assert_int_equal(qvi_path_count(QV_PATH_PLANES_AVX2) - a0, 14);
    assert_true(qv_tensor_is_row_major(&st));
    assert_true(qv_tensor_equal(&view, &st, false));
    qv_tensor_reset(&st);
    qv_tensor_reset(&view);
    qv_tensor_column_reset(&col);
  }
  qv_tensor_reset(&phys);
}

/* Slice i of a stacked tensor as a tensor of its cell dims. */
static void slice(const QvTensor *st, int64_t i, QvTensor *out) {
  QvError err = {0};
  assert_int_equal(qv_tensor_init(out, &(QvTensorDesc){.type = st->type, .ndim = st->ndim - 1,
                                                       .shape = st->shape + 1,
                                                       .strides = st->strides + 1,
                                                       .data = st->data + i * st->strides[0],
                                                       .data_size = st->strides[0]},
                                  &err),
                   QV_OK);
}

/* Slice i of `st` holds zeros only. */
static void assert_zero_slice(const QvTensor *st, int64_t i) {
  QvTensor z;
  slice(st, i, &z);
  assert_int_equal(qv_tensor_count_nonzero(&z), 0);
  qv_tensor_reset(&z);
}

/* Every non-null cell of `col` equals its slice of `st`, in the cell's
 * logical layout. */
static void assert_stacked(const QvTensorColumn *col, const QvTensor *st) {
  QvError err = {0};
  assert_int_equal(st->shape[0], col->length);
  for (int64_t i = 0; i < col->length; i++) {
    if (qv_tensor_column_is_null(col, i)) {
      assert_zero_slice(st, i);
      continue;
    }
    QvTensor c, sl;
    assert_int_equal(qv_tensor_column_cell(col, i, &c, &err), QV_OK);
    slice(st, i, &sl);
    if (!qv_tensor_equal(&c, &sl, true)) fail_msg("stacked cell %lld differs", (long long)i);
    qv_tensor_reset(&c);
    qv_tensor_reset(&sl);
  }
}

/* A variable shape column of `type` (value type set) from n cells. */
static void variable_column(const QvTensorColumnType *type, const QvTensor *const *cells,
                            int64_t n, QvTensorColumn *col) {
  QvError err = {0};
  struct ArrowSchema f;
  struct ArrowArray a;
  assert_int_equal(qv_tensor_column_build(type, "v", NULL, cells, n, &f, &a, &err), QV_OK);
  assert_int_equal(qv_tensor_column_init(col, &f, &a, NULL, &err), QV_OK);
  f.release(&f);
}

/* Variable shape columns whose cells share a shape, and Binary cell-form
 * columns, stack into one tensor: a view when no cell is null (and the
 * cells are aligned), else one copy; every value type, with permutation and
 * dim names, n = 0, 1, 4; nulls refused or filled; uniform_shape fixing the
 * shape of an all-null column; shapes that differ; the output limit. */
static void test_stack_variable_and_binary(void **state) {
  (void)state;
  for (int ty = QV_ARROW_INT8; ty < QV_ARROW_NUMERIC_END; ty++) {
    QvError err = {0};
    QvArrowType vt = (QvArrowType)ty;
    int64_t es = (int64_t)qv_arrow_type_size(vt);
    QvTensorColumnType type;
    const char *j = "{\"dim_names\": [\"H\", \"W\", \"C\"], \"permutation\": [2, 0, 1]}";
    assert_int_equal(qv_tensor_column_type_parse(QV_TENSOR_COLUMN_VARIABLE_SHAPE, j, strlen(j), 3,
                                                 &type, &err),
                     QV_OK);
    type.value_type = vt;
    QvTensor cells[4];
    for (int i = 0; i < 4; i++) make(vt, 3, (int64_t[]){5, 3, 2}, 10 * i, &cells[i]);
    const QvTensor *all[4] = {&cells[0], &cells[1], &cells[2], &cells[3]};
    for (int64_t n = 0; n <= 4; n += (n == 1 ? 3 : 1)) {
      QvTensorColumn col;
      variable_column(&type, all, n, &col);
      QvTensor st;
      if (n == 0) {
        /* nothing gives the shape */
        assert_error(qv_tensor_column_stack(&col, NULL, &st, &err), &err, QV_EINVAL,
                     "none of them non-null: the stacked shape is unknown (uniform_shape does "
                     "not fix dim 0)");
        qv_tensor_column_reset(&col);
        continue;
      }
      QvTensorStackOptions so = {.struct_size = sizeof so, .leading_name = "N"};
      assert_int_equal(qv_tensor_column_stack(&col, &so, &st, &err), QV_OK);
      /* a view of the storage: cell 0's data, logical [n, C, H, W] */
      QvTensor c0;
      assert_int_equal(qv_tensor_column_cell(&col, 0, &c0, &err), QV_OK);
      assert_ptr_equal(st.data, c0.data);
      qv_tensor_reset(&c0);
      assert_int_equal(st.ndim, 4);
      assert_int_equal(st.shape[1], 2);
      assert_int_equal(st.shape[2], 5);
      assert_int_equal(st.shape[3], 3);
      assert_string_equal(st.dim_names[0], "N");
      assert_string_equal(st.dim_names[1], "C");
      assert_stacked(&col, &st);
      for (int64_t i = 0; i < n; i++) {
        QvTensor sl;
        slice(&st, i, &sl);
        assert_permuted(&cells[i], &sl, type.permutation);
        qv_tensor_reset(&sl);
      }
      qv_tensor_reset(&st);
      so.contiguous = true;
      assert_int_equal(qv_tensor_column_stack(&col, &so, &st, &err), QV_OK);
      assert_true(qv_tensor_is_row_major(&st));
      assert_stacked(&col, &st);
      qv_tensor_reset(&st);
      qv_tensor_column_reset(&col);
    }
    /* a null cell: refused, or zeros; the null cell's own shape is ignored */
    QvTensor other;
    make(vt, 3, (int64_t[]){5, 3, 2}, 3, &other);
    const QvTensor *with_null[4] = {&cells[0], NULL, &cells[2], &cells[3]};
    QvTensorColumn col;
    variable_column(&type, with_null, 4, &col);
    QvTensor st;
    assert_error(qv_tensor_column_stack(&col, NULL, &st, &err), &err, QV_EINVAL,
                 "cell 1 is null (1 null cells)");
    QvTensorStackOptions fill = {.struct_size = sizeof fill, .null_fill = true};
    assert_int_equal(qv_tensor_column_stack(&col, &fill, &st, &err), QV_OK);
    assert_stacked(&col, &st);
    qv_tensor_reset(&st);
    fill.max_output_size = 4 * 30 * es - 1;
    assert_error(qv_tensor_column_stack(&col, &fill, &st, &err), &err, QV_ELIMIT,
                 "over the limit of");
    qv_tensor_column_reset(&col);
    qv_tensor_reset(&other);
    /* shapes that differ: the first cell that differs, and both shapes */
    QvTensor small;
    make(vt, 3, (int64_t[]){5, 2, 2}, 0, &small);
    const QvTensor *differ[4] = {NULL, &cells[1], &cells[2], &small};
    variable_column(&type, differ, 4, &col);
    assert_error(qv_tensor_column_stack(&col, &(QvTensorStackOptions){.null_fill = true}, &st,
                                        &err),
                 &err, QV_EINVAL,
                 "cell 3 has shape [5, 2, 2], cell 1 has [5, 3, 2]: the cells of one tensor need "
                 "one shape");
    qv_tensor_column_reset(&col);
    qv_tensor_reset(&small);
    qv_tensor_column_type_reset(&type);

    /* uniform_shape fixes the shape of a column of null cells */
    j = "{\"uniform_shape\": [4, 3]}";
    assert_int_equal(qv_tensor_column_type_parse(QV_TENSOR_COLUMN_VARIABLE_SHAPE, j, strlen(j), 2,
                                                 &type, &err),
                     QV_OK);
    type.value_type = vt;
    const QvTensor *nulls[3] = {NULL, NULL, NULL};
    variable_column(&type, nulls, 3, &col);
    assert_int_equal(qv_tensor_column_stack(&col, &(QvTensorStackOptions){.null_fill = true}, &st,
                                            &err),
                     QV_OK);
    assert_int_equal(st.shape[0], 3);
    assert_int_equal(st.shape[1], 4);
    assert_int_equal(st.shape[2], 3);
    assert_stacked(&col, &st);
    qv_tensor_reset(&st);
    qv_tensor_column_reset(&col);
    /* n = 0: uniform_shape alone gives [0, 4, 3] */
    variable_column(&type, nulls, 0, &col);
    assert_int_equal(qv_tensor_column_stack(&col, NULL, &st, &err), QV_OK);
    assert_int_equal(st.shape[0], 0);
    assert_int_equal(st.shape[1], 4);
    qv_tensor_reset(&st);
    qv_tensor_column_reset(&col);
    qv_tensor_column_type_reset(&type);

    /* Binary cell form: cells of [3, 2] at offsets from `lead` (0: aligned,
     * a view; 1: unaligned for elements over a byte, a copy), cell 2 null */
    for (int lead = 0; lead < 2; lead++)
      for (int with_nulls = 0; with_nulls < 2; with_nulls++) {
        struct ArrowSchema f;
        assert_int_equal(qv_arrow_schema_init(&f, "z", "b", ARROW_FLAG_NULLABLE, 0, &err), QV_OK);
        char meta[100];
        snprintf(meta, sizeof meta, "{\"type\": \"%s\", \"shape\": [3, 2]}",
                 qv_arrow_type_name(vt));
        assert_int_equal(qv_arrow_schema_add_metadata(&f, "ARROW:extension:name", 20, "my.tensor", 9,
                                                &err),
                         QV_OK);
        assert_int_equal(qv_arrow_schema_add_metadata(&f, "ARROW:extension:metadata", 24, meta,
                                                strlen(meta), &err),
                         QV_OK);
        int64_t cb = 6 * es, n = 4;
        uint8_t *bytes = qv_aligned_alloc((size_t)(n * cb + 1));
        int32_t offsets[5];
        uint8_t bitmap = with_nulls ? 0x0b : 0x0f;
        for (int64_t i = 0; i <= n; i++) {
          /* a null cell takes no bytes */
          int64_t before = i > 2 && with_nulls ? i - 1 : i;
          offsets[i] = (int32_t)(lead + before * cb);
        }
        QvTensor phys;
        make(vt, 3, (int64_t[]){4, 3, 2}, 1, &phys);
        bytes[0] = 0x55;
        memcpy(bytes + lead, phys.data, (size_t)(2 * cb));
        memcpy(bytes + lead + 2 * cb, phys.data + (with_nulls ? 3 : 2) * cb,
               (size_t)((with_nulls ? 1 : 2) * cb));
        QvArrayView v;
        assert_int_equal(qv_array_view_init(&v, &f, &err), QV_OK);
        v.length = n;
        v.null_count = with_nulls;
        v.buffer[0] = &bitmap;
        v.buffer_size[0] = 1;
        v.buffer[1] = (const uint8_t *)offsets;
        v.buffer_size[1] = sizeof offsets;
        v.buffer[2] = bytes;
        v.buffer_size[2] = offsets[n];
        struct ArrowArray a;
        assert_int_equal(qv_array_export_view(&v, NULL, &a, &err), QV_OK);
        qv_array_view_reset(&v);
        QvTensorColumnOptions o = {.struct_size = sizeof o, .cell_extension = "my.tensor"};
        assert_int_equal(qv_tensor_column_init(&col, &f, &a, &o, &err), QV_OK);
        f.release(&f);
        if (with_nulls)
          assert_error(qv_tensor_column_stack(&col, NULL, &st, &err), &err, QV_EINVAL,
                       "cell 2 is null");
        assert_int_equal(qv_tensor_column_stack(
                             &col, &(QvTensorStackOptions){.null_fill = with_nulls != 0}, &st,
                             &err),
                         QV_OK);
        assert_int_equal(st.shape[0], 4);
        assert_int_equal(st.shape[1], 3);
        assert_int_equal(st.shape[2], 2);
        if (!with_nulls && (lead == 0 || es == 1))
          assert_ptr_equal(st.data, bytes + lead); /* a view */
        else
          assert_ptr_not_equal(st.data, bytes + lead);
        assert_stacked(&col, &st);
        for (int64_t i = 0; i < n; i++) {
          if (with_nulls && i == 2) continue;
          QvTensor sl, pc;
          slice(&st, i, &sl);
          slice(&phys, i, &pc);
          assert_true(qv_tensor_equal(&sl, &pc, true));
          qv_tensor_reset(&sl);
          qv_tensor_reset(&pc);
        }
        qv_tensor_reset(&st);
        qv_tensor_column_reset(&col);
        qv_tensor_reset(&phys);
        qv_free(bytes);
      }
    for (int i = 0; i < 4; i++) qv_tensor_reset(&cells[i]);
  }
}

/* A sliced variable-shape column (the storage struct's offset set, its
 * children whole, as a C Data Interface producer slices): cell i is row
 * offset + i of the data and shape children. */
static void test_variable_sliced(void **state) {
  (void)state;
  QvError err = {0};
  QvTensorColumnType type;
  const char *j = "{}";
  assert_int_equal(qv_tensor_column_type_parse(QV_TENSOR_COLUMN_VARIABLE_SHAPE, j, strlen(j), 2,
                                               &type, &err),
                   QV_OK);
  type.value_type = QV_ARROW_INT32;
  QvTensor cells[4];
  for (int i = 0; i < 4; i++) make(QV_ARROW_INT32, 2, (int64_t[]){2, i + 1}, 7 * i, &cells[i]);
  const QvTensor *ptrs[4] = {&cells[0], &cells[1], &cells[2], &cells[3]};
  struct ArrowSchema f;
  struct ArrowArray a;
  assert_int_equal(qv_tensor_column_build(&type, "v", NULL, ptrs, 4, &f, &a, &err), QV_OK);
  a.offset = 2;
  a.length = 2;
  a.null_count = -1;
  QvTensorColumn col;
  assert_int_equal(qv_tensor_column_init(&col, &f, &a, NULL, &err), QV_OK);
  f.release(&f);
  assert_int_equal(col.length, 2);
  for (int i = 0; i < 2; i++) {
    QvTensor v;
    assert_int_equal(qv_tensor_column_cell(&col, i, &v, &err), QV_OK);
    assert_int_equal(v.shape[1], i + 3);
    assert_true(qv_tensor_equal(&v, &cells[i + 2], true));
    qv_tensor_reset(&v);
  }
  /* cells 2 and 3 differ in shape: the message names the column's rows */
  QvTensor st;
  assert_error(qv_tensor_column_stack(&col, NULL, &st, &err), &err, QV_EINVAL,
               "cell 1 has shape [2, 4], cell 0 has [2, 3]");
  qv_tensor_column_reset(&col);
  for (int i = 0; i < 4; i++) qv_tensor_reset(&cells[i]);
  qv_tensor_column_type_reset(&type);
}

/* Copying stacks and unstacks split over threads (options.threads): null
 * fill (null runs across the range boundaries), permuted stacks made
 * row-major both ways, the two at once, and the row-major copy of an
 * unstack; the output of 2..5 threads is byte for byte that of 1 thread,
 * and QV_PATH_TENSOR_COPY_THREADS proves the split ran (once per copy; never
 * for 1 thread, nor under 4 MiB). Out-of-range counts are caller errors. */
static void test_stack_threads(void **state) {
  (void)state;
  enum { N = 14 }; /* 14 cells of 224 x 224 x 3 float32: 8.4 MiB */
  int64_t big[4] = {N, 224, 224, 3};
  QvTensor phys;
  make(QV_ARROW_FLOAT32, 4, big, 11, &phys);
  size_t bytes = (size_t)phys.data_size;
  uint8_t bitmap[2];
  static const int64_t none[] = {-1}, nulls[] = {0, 3, 4, 5, 13, -1};
  static const struct {
    const char *json;
    const int64_t *nulls;
    bool contiguous;
    int copies; /* copies a stack makes */
  } cases[] = {
      {"{\"shape\": [224, 224, 3]}", nulls, false, 1},
      {"{\"shape\": [224, 224, 3], \"permutation\": [2, 0, 1]}", none, true, 1},
      {"{\"shape\": [3, 224, 224], \"permutation\": [1, 2, 0]}", none, true, 1},
      {"{\"shape\": [224, 224, 3], \"permutation\": [2, 0, 1]}", nulls, true, 2},
  };
  for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {
    QvTensorColumn col;
    column_with_nulls(QV_ARROW_FLOAT32, phys.data, N, cases[ci].nulls, bitmap, cases[ci].json, &col);
    QvError err = {0};
    QvTensor one;
    QvTensorStackOptions so = {.struct_size = sizeof so, .null_fill = true,
                               .contiguous = cases[ci].contiguous};
    for (int threads = 0; threads <= 5; threads++) {
      so.threads = threads;
      uint64_t split0 = qvi_path_count(QV_PATH_TENSOR_COPY_THREADS);
      QvTensor st;
      assert_int_equal(qv_tensor_column_stack(&col, &so, &st, &err), QV_OK);
      assert_int_equal(qvi_path_count(QV_PATH_TENSOR_COPY_THREADS) - split0,
                       threads > 1 ? cases[ci].copies : 0);
      assert_int_equal((size_t)st.data_size, bytes);
      if (threads == 0) {
        assert_stacked(&col, &st);
        one = st;
        continue;
      }
      assert_int_equal(st.ndim, one.ndim);
      assert_memory_equal(st.shape, one.shape, sizeof st.shape[0] * (size_t)st.ndim);
      assert_memory_equal(st.strides, one.strides, sizeof st.strides[0] * (size_t)st.ndim);
      if (memcmp(st.data, one.data, bytes) != 0)
        fail_msg("case %zu: %d threads differ from one", ci, threads);
      qv_tensor_reset(&st);
    }
    qv_tensor_reset(&one);
    /* a 1 MiB copy (2 cells) stays on the caller */
    QvTensorColumn small;
    column_with_nulls(QV_ARROW_FLOAT32, phys.data, 2, cases[ci].nulls, bitmap, cases[ci].json, &small);
    so.threads = 4;
    uint64_t split0 = qvi_path_count(QV_PATH_TENSOR_COPY_THREADS);
    assert_int_equal(qv_tensor_column_stack(&small, &so, &one, &err), QV_OK);
    assert_int_equal(qvi_path_count(QV_PATH_TENSOR_COPY_THREADS), split0);
    assert_stacked(&small, &one);
    qv_tensor_reset(&one);
    qv_tensor_column_reset(&small);
    so.threads = -1;
    assert_error(qv_tensor_column_stack(&col, &so, &one, &err), &err, QV_EARG,
                 "threads must be 0..256, not -1");
    so.threads = QV_TENSOR_COLUMN_MAX_THREADS + 1;
    assert_error(qv_tensor_column_stack(&col, &so, &one, &err), &err, QV_EARG,
                 "threads must be 0..256, not 257");
    qv_tensor_column_reset(&col);
  }

  /* unstack of [224, N, 224, 3] (dims 0 and 1 of phys swapped): the
   * leading dim is not outermost, so the cells are copied row-major */
  int64_t shape[4] = {224, N, 224, 3};
  int64_t strides[4] = {phys.strides[1], phys.strides[0], phys.strides[2], phys.strides[3]};
  QvError err = {0};
  QvTensor swapped;
  assert_int_equal(qv_tensor_init(&swapped, &(QvTensorDesc){.type = phys.type, .ndim = 4,
                                                           .shape = shape, .strides = strides,
                                                           .data = phys.data,
                                                           .data_size = phys.data_size},
                                  &err),
                   QV_OK);
  uint8_t *first = NULL;
  for (int threads = 1; threads <= 5; threads++) {
    QvTensorUnstackOptions uo = {.struct_size = sizeof uo, .threads = threads};
    struct ArrowSchema f;
    struct ArrowArray a;
    uint64_t split0 = qvi_path_count(QV_PATH_TENSOR_COPY_THREADS);
    assert_int_equal(qv_tensor_column_unstack(&swapped, &uo, &f, &a, &err), QV_OK);
    assert_int_equal(qvi_path_count(QV_PATH_TENSOR_COPY_THREADS) - split0, threads > 1 ? 1 : 0);
    const uint8_t *values = a.children[0]->buffers[1];
    assert_non_null(values);
    if (threads == 1) {
      /* row-major [224, N, 224, 3]: element (i, j, ...) of swapped */
      QvTensor back;
      int64_t rm[4];
      assert_int_equal(qv_tensor_compute_strides(QV_ARROW_FLOAT32, 4, shape, false, rm, &err),
                       QV_OK);
      assert_int_equal(qv_tensor_init(&back, &(QvTensorDesc){.type = phys.type, .ndim = 4,
                                                            .shape = shape, .strides = rm,
                                                            .data = values,
                                                            .data_size = phys.data_size},
                                      &err),
                       QV_OK);
      assert_true(qv_tensor_equal(&back, &swapped, false));
      qv_tensor_reset(&back);
      first = malloc(bytes);
      assert_non_null(first);
      memcpy(first, values, bytes);
    } else if (memcmp(values, first, bytes) != 0) {
      fail_msg("unstack: %d threads differ from one", threads);
    }
    a.release(&a);
    f.release(&f);
  }
  QvTensorUnstackOptions bad = {.struct_size = sizeof bad, .threads = 300};
  struct ArrowSchema f;
  struct ArrowArray a;
  assert_error(qv_tensor_column_unstack(&swapped, &bad, &f, &a, &err), &err, QV_EARG,
               "threads must be 0..256, not 300");
  free(first);
  qv_tensor_reset(&swapped);
  qv_tensor_reset(&phys);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_metadata),          cmocka_unit_test(test_fixed_every_type),
      cmocka_unit_test(test_stack_zero_copy),   cmocka_unit_test(test_variable_and_cell),
      cmocka_unit_test(test_storage_errors),    cmocka_unit_test(test_planes_kernels),
      cmocka_unit_test(test_stack_permuted_copy), cmocka_unit_test(test_stack_variable_and_binary),
      cmocka_unit_test(test_variable_sliced),     cmocka_unit_test(test_stack_threads),
      cmocka_unit_test(test_planes_direct),       cmocka_unit_test(test_transpose_edge),
  };
  return qv_test_run(tests, NULL, NULL);
}
