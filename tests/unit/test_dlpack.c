/* Dense tensors <-> DLPack: round trips for every value type (plain and
 * versioned), zero copy (same address), owner lifetime through the deleter,
 * and every refused DLTensor. */
#include "quiver/advanced.h"
#include "test_util.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "quiver/tensor.h"
#include "quiver/tensor_dlpack.h"
#include "util/load.h"

static void assert_error(QvStatus st, const QvError *err, QvStatus code, const char *substr) {
  assert_int_equal(st, code);
  if (strstr(err->message, substr) == NULL)
    fail_msg("message '%s' lacks '%s'", err->message, substr);
}

static int released;
static void count_release(void *p) {
  (void)p;
  released++;
}

/* A 2x3 tensor of `type` with values 1..6 in a column-major layout (so
 * strides survive the trip), owned by a counting owner. */
static void make_tensor(QvArrowType type, QvTensor *t, uint8_t *buf) {
  size_t es = qv_arrow_type_size(type);
  int64_t shape[2] = {2, 3};
  int64_t strides[2] = {(int64_t)es, (int64_t)(2 * es)};
  for (int i = 0; i < 6; i++) {
    uint64_t v = (uint64_t)(i + 1);
    if (type == QV_ARROW_FLOAT16) {
      uint16_t h = qv_float_to_half((float)v);
      memcpy(buf + i * es, &h, 2);
    } else if (type == QV_ARROW_FLOAT32) {
      float f = (float)v;
      memcpy(buf + i * es, &f, 4);
    } else if (type == QV_ARROW_FLOAT64) {
      double d = (double)v;
      memcpy(buf + i * es, &d, 8);
    } else {
      qvi_st_bits(buf + i * es, es, v); /* host order */
    }
  }
  QvOwner *owner = qv_owner_new(count_release, NULL);
  const char *names[2] = {"rows", "cols"};
  QvError err = {0};
  assert_int_equal(qv_tensor_init(t, &(QvTensorDesc){.type = type, .ndim = 2, .shape = shape,
                                                     .strides = strides, .dim_names = names,
                                                     .data = buf, .data_size = (int64_t)(6 * es),
                                                     .owner = owner},
                                  &err),
                   QV_OK);
  qv_owner_free(owner); /* the tensor holds the reference now */
}

static void test_roundtrip_every_type(void **state) {
  (void)state;
  for (int ty = QV_ARROW_INT8; ty < QV_ARROW_NUMERIC_END; ty++) {
    for (int versioned = 0; versioned < 2; versioned++) {
      uint8_t buf[48];
      QvTensor t, back;
      QvError err = {0};
      released = 0;
      make_tensor((QvArrowType)ty, &t, buf);
      DLManagedTensor *m = NULL;
      QvDLManagedTensorVersioned *mv = NULL;
      DLTensor *dl;
      if (versioned) {
        assert_int_equal(qv_tensor_to_dlpack_versioned(&t, &mv, &err), QV_OK);
        assert_int_equal(mv->version.major, 1);
        assert_true(mv->flags & QV_DLPACK_FLAG_READ_ONLY);
        dl = &mv->dl_tensor;
      } else {
        assert_int_equal(qv_tensor_to_dlpack(&t, &m, &err), QV_OK);
        dl = &m->dl_tensor;
      }
      qv_tensor_reset(&t); /* the export keeps the owner */
      assert_int_equal(released, 0);
      assert_ptr_equal(dl->data, buf);
      assert_int_equal(dl->device.device_type, kDLCPU);
      assert_int_equal(dl->ndim, 2);
      assert_int_equal(dl->shape[0], 2);
      assert_int_equal(dl->shape[1], 3);
      assert_int_equal(dl->strides[0], 1);
      assert_int_equal(dl->strides[1], 2);
      assert_int_equal(dl->dtype.bits, qv_arrow_type_size((QvArrowType)ty) * 8);
      assert_int_equal(dl->dtype.lanes, 1);
      assert_int_equal(dl->dtype.code, ty >= QV_ARROW_FLOAT16  ? kDLFloat
                                       : ty >= QV_ARROW_UINT8 ? kDLUInt
                                                              : kDLInt);
      if (versioned)
        assert_int_equal(qv_tensor_from_dlpack_versioned(mv, NULL, &back, &err), QV_OK);
      else
        assert_int_equal(qv_tensor_from_dlpack(m, NULL, &back, &err), QV_OK);
      assert_int_equal(back.type, ty);
      assert_ptr_equal(back.data, buf);
      for (int64_t i = 0; i < 2; i++)
        for (int64_t j = 0; j < 3; j++) {
          int64_t idx[2] = {i, j}, v;
          assert_int_equal(qv_tensor_get_int64(&back, idx, &v, &err), QV_OK);
          assert_int_equal(v, 1 + i + 2 * j);
        }
      assert_int_equal(released, 0);
      qv_tensor_reset(&back);
      assert_int_equal(released, 1);
    }
  }
}

/* A foreign producer: its deleter runs once, when the last view goes. */
typedef struct Foreign {
  DLManagedTensor m;
  int64_t shape[3];
  int64_t strides[3];
  int deleted;
} Foreign;
static void foreign_deleter(DLManagedTensor *self) { ((Foreign *)self->manager_ctx)->deleted++; }

static double fdata[24];

static void foreign_init(Foreign *f) {
  memset(f, 0, sizeof *f);
  for (int i = 0; i < 24; i++) fdata[i] = i * 0.5;
  f->shape[0] = 2, f->shape[1] = 3, f->shape[2] = 4;
  f->m.dl_tensor.data = fdata;
  f->m.dl_tensor.device.device_type = kDLCPU;
  f->m.dl_tensor.ndim = 3;
  f->m.dl_tensor.dtype = (DLDataType){.code = kDLFloat, .bits = 64, .lanes = 1};
  f->m.dl_tensor.shape = f->shape;
  f->m.dl_tensor.strides = NULL;
  f->m.manager_ctx = f;
  f->m.deleter = foreign_deleter;
}

static void test_import_foreign(void **state) {
  (void)state;
  Foreign f;
  foreign_init(&f);
  f.m.dl_tensor.byte_offset = 8; /* starts at fdata[1]; shape 2x3x4 needs 23 more */
  f.shape[2] = 3;
  QvTensor t, copy;
  QvError err = {0};
  QvDlpackImportOptions opts = {.struct_size = sizeof opts, .data_size = sizeof fdata};
  assert_int_equal(qv_tensor_from_dlpack(&f.m, &opts, &t, &err), QV_OK);
  assert_ptr_equal(t.data, (const uint8_t *)&fdata[1]);
  assert_int_equal(t.strides[0], 72);
  assert_int_equal(t.strides[2], 8);
  double v;
  assert_int_equal(qv_tensor_get_double(&t, (int64_t[]){1, 2, 2}, &v, &err), QV_OK);
  assert_true(v == fdata[1 + 9 + 6 + 2]);
  /* a copy does not hold the producer, a second view would (owner shared) */
  assert_int_equal(qv_tensor_copy(&t, false, &copy, &err), QV_OK);
  qv_tensor_reset(&t);
  assert_int_equal(f.deleted, 1);
  qv_tensor_reset(&copy);
  assert_int_equal(f.deleted, 1);

  /* explicit element strides, column-major */
  foreign_init(&f);
  f.strides[0] = 1, f.strides[1] = 2, f.strides[2] = 6;
  f.m.dl_tensor.strides = f.strides;
  assert_int_equal(qv_tensor_from_dlpack(&f.m, NULL, &t, &err), QV_OK);
  assert_true(qv_tensor_is_column_major(&t));
  qv_tensor_reset(&t);
  assert_int_equal(f.deleted, 1);

  /* a NULL deleter: the producer keeps its memory, no owner */
  foreign_init(&f);
  f.m.deleter = NULL;
  assert_int_equal(qv_tensor_from_dlpack(&f.m, NULL, &t, &err), QV_OK);
  assert_null(t.owner);
  qv_tensor_reset(&t);
  assert_int_equal(f.deleted, 0);
}

/* Every refusal leaves `managed` with the caller (deleter not run). */
static void expect_refused(Foreign *f, const QvDlpackImportOptions *o, QvStatus code,
                           const char *substr) {
  QvTensor t;
  QvError err = {0};
  assert_error(qv_tensor_from_dlpack(&f->m, o, &t, &err), &err, code, substr);
  assert_int_equal(f->deleted, 0);
  assert_null(t.owner);
  assert_null(t.private_data);
}

static void test_import_refused(void **state) {
  (void)state;
  Foreign f;
  foreign_init(&f);
  f.m.dl_tensor.device.device_type = kDLCUDA;
  expect_refused(&f, NULL, QV_ENOTSUP, "device_type 2 is not the CPU");
  foreign_init(&f);
  f.m.dl_tensor.dtype = (DLDataType){.code = kDLBfloat, .bits = 16, .lanes = 1};
  expect_refused(&f, NULL, QV_ENOTSUP, "dtype code 4 (bfloat) with 16 bits");
  foreign_init(&f);
  f.m.dl_tensor.dtype = (DLDataType){.code = kDLComplex, .bits = 64, .lanes = 1};
  expect_refused(&f, NULL, QV_ENOTSUP, "(complex)");
  foreign_init(&f);
  f.m.dl_tensor.dtype = (DLDataType){.code = kDLFloat, .bits = 8, .lanes = 1};
  expect_refused(&f, NULL, QV_ENOTSUP, "(float) with 8 bits");
  foreign_init(&f);
  f.m.dl_tensor.dtype = (DLDataType){.code = kDLInt, .bits = 32, .lanes = 4};
  expect_refused(&f, NULL, QV_ENOTSUP, "lanes = 4");
  foreign_init(&f);
  f.m.dl_tensor.ndim = 65;
  expect_refused(&f, NULL, QV_ELIMIT, "ndim 65 is over quiver's limit of 64");
  foreign_init(&f);
  f.m.dl_tensor.ndim = -1;
  expect_refused(&f, NULL, QV_EINVAL, "ndim -1 is negative");
  foreign_init(&f);
  f.shape[1] = -3;
  expect_refused(&f, NULL, QV_EINVAL, "shape[1] = -3 is negative");
  foreign_init(&f);
  f.strides[0] = 12, f.strides[1] = -4, f.strides[2] = 1;
  f.m.dl_tensor.strides = f.strides;
  expect_refused(&f, NULL, QV_ENOTSUP, "strides[1] = -4: negative strides");
  foreign_init(&f);
  f.m.dl_tensor.data = NULL;
  expect_refused(&f, NULL, QV_EINVAL, "data is NULL");
  foreign_init(&f);
  f.m.dl_tensor.shape = NULL;
  expect_refused(&f, NULL, QV_EINVAL, "shape is NULL for ndim 3");
  QvDlpackImportOptions o = {.struct_size = sizeof o, .data_size = sizeof fdata};
  foreign_init(&f);
  f.m.dl_tensor.byte_offset = sizeof fdata + 8;
  expect_refused(&f, &o, QV_EINVAL, "byte_offset 200 is past the data (192 bytes)");
  foreign_init(&f);
  f.m.dl_tensor.byte_offset = 8; /* 24 doubles from fdata[1]: one too many */
  expect_refused(&f, &o, QV_EINVAL, "reach 192 bytes from byte_offset 8, past the data");
  foreign_init(&f);
  f.shape[0] = 1000; /* a lying shape, caught by the known size */
  expect_refused(&f, &o, QV_EINVAL, "past the data (192 bytes)");
  foreign_init(&f);
  f.shape[0] = INT64_MAX / 2; /* a shape no memory can hold */
  f.strides[0] = 12, f.strides[1] = 4, f.strides[2] = 1;
  f.m.dl_tensor.strides = f.strides;
  expect_refused(&f, NULL, QV_EINVAL, "a shape that cannot be true");
  foreign_init(&f);
  f.m.dl_tensor.byte_offset = UINT64_MAX - 4;
  expect_refused(&f, NULL, QV_EINVAL, "byte_offset 18446744073709551611 overflows int64");
  foreign_init(&f);
  o.data_size = -1;
  expect_refused(&f, &o, QV_EARG, "data_size -1 is negative");

  /* versioned: an unknown major version is not read at all */
  QvDLManagedTensorVersioned v = {0};
  v.version.major = 2;
  QvTensor t;
  QvError err = {0};
  assert_error(qv_tensor_from_dlpack_versioned(&v, NULL, &t, &err), &err, QV_ENOTSUP,
               "DLPack version 2.0");
}

static void test_export_refused(void **state) {
  (void)state;
  /* a byte stride that is not a whole number of elements */
  uint8_t buf[64] = {0};
  QvTensor t;
  QvError err = {0};
  int64_t shape[1] = {3}, strides[1] = {3};
  assert_int_equal(qv_tensor_init(&t, &(QvTensorDesc){.type = QV_ARROW_INT16, .ndim = 1,
                                                      .shape = shape, .strides = strides,
                                                      .data = buf, .data_size = 64},
                                  &err),
                   QV_OK);
  DLManagedTensor *m = (DLManagedTensor *)&err; /* must be set to NULL */
  assert_error(qv_tensor_to_dlpack(&t, &m, &err), &err, QV_ENOTSUP,
               "stride 0 is 3 bytes, not a multiple of the int16 element size 2");
  assert_null(m);
  qv_tensor_reset(&t);

  /* 0-d and empty tensors export and come back */
  int64_t none[1] = {0};
  assert_int_equal(qv_tensor_init(&t, &(QvTensorDesc){.type = QV_ARROW_FLOAT32, .ndim = 1,
                                                      .shape = none, .data = NULL},
                                  &err),
                   QV_OK);
  assert_int_equal(qv_tensor_to_dlpack(&t, &m, &err), QV_OK);
  qv_tensor_reset(&t);
  QvTensor back;
  assert_int_equal(qv_tensor_from_dlpack(m, NULL, &back, &err), QV_OK);
  assert_int_equal(qv_tensor_n_elements(&back), 0);
  qv_tensor_reset(&back);
  float x = 2.5f;
  assert_int_equal(qv_tensor_init(&t, &(QvTensorDesc){.type = QV_ARROW_FLOAT32, .ndim = 0,
                                                      .data = &x, .data_size = 4},
                                  &err),
                   QV_OK);
  assert_int_equal(qv_tensor_to_dlpack(&t, &m, &err), QV_OK);
  assert_int_equal(m->dl_tensor.ndim, 0);
  assert_int_equal(qv_tensor_from_dlpack(m, NULL, &back, &err), QV_OK);
  double d;
  assert_int_equal(qv_tensor_get_double(&back, NULL, &d, &err), QV_OK);
  assert_true(d == 2.5);
  qv_tensor_reset(&back);
  qv_tensor_reset(&t);
}

/* An exported struct dropped by its consumer without import frees cleanly
 * and releases the owner once. */
static void test_deleter_releases(void **state) {
  (void)state;
  uint8_t buf[48];
  QvTensor t;
  QvError err = {0};
  released = 0;
  make_tensor(QV_ARROW_INT32, &t, buf);
  DLManagedTensor *a, *b;
  QvDLManagedTensorVersioned *c;
  assert_int_equal(qv_tensor_to_dlpack(&t, &a, &err), QV_OK);
  assert_int_equal(qv_tensor_to_dlpack(&t, &b, &err), QV_OK);
  assert_int_equal(qv_tensor_to_dlpack_versioned(&t, &c, &err), QV_OK);
  qv_tensor_reset(&t);
  a->deleter(a);
  c->deleter(c);
  assert_int_equal(released, 0);
  b->deleter(b);
  assert_int_equal(released, 1);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_roundtrip_every_type), cmocka_unit_test(test_import_foreign),
      cmocka_unit_test(test_import_refused),       cmocka_unit_test(test_export_refused),
      cmocka_unit_test(test_deleter_releases),
  };
  return qv_test_run(tests, NULL, NULL);
}
