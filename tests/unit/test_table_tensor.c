/* Tables as tensors (quiver/table_tensor.h): Arrow C++'s ToTensor rules for
 * type promotion, nulls and errors; both layouts; several and sliced
 * batches; column choice; the output limit; the memcpy fast path, the
 * row-major tiles and the copy split over threads (counted, the same bytes);
 * the stream form over an IPC stream; and both into a caller's buffer. */
#include "test_rb_helpers.h"
#include "test_util.h"

#include <math.h>

#include "quiver/table_tensor.h"
#include "quiver/tensor.h"
#include "util/cpu.h"

#define NUL_ (-12345.0) /* a null cell in the test tables */

typedef struct Col {
  const char *name;
  const char *format;
  double v[9];
} Col;

/* A batch of `rows` rows of the given columns (NUL_ cells are null; "u"
 * columns get strings). */
static void make(struct ArrowSchema *s, struct ArrowArray *a, const Col *cols, int ncols, int rows) {
  QvError e = {0};
  rbt_check(qv_arrow_schema_init(s, "+s", NULL, 0, ncols, &e), &e, "schema");
  for (int c = 0; c < ncols; c++)
    rbt_check(qv_arrow_schema_init(s->children[c], cols[c].format, cols[c].name,
                                   ARROW_FLAG_NULLABLE, 0, &e),
              &e, "child");
  rbt_check(qv_array_init_from_schema(a, s, &e), &e, "init");
  for (int r = 0; r < rows; r++) {
    for (int c = 0; c < ncols; c++) {
      struct ArrowArray *ch = a->children[c];
      double v = cols[c].v[r];
      char f = cols[c].format[0];
      QvStatus st;
      if (v == NUL_) st = qv_array_append_null(ch, 1, &e);
      else if (f == 'u') st = qv_array_append_string(ch, "x", &e);
      else if (f == 'e' || f == 'f' || f == 'g') st = qv_array_append_double(ch, v, &e);
      else if (f == 'C' || f == 'S' || f == 'I' || f == 'L') st = qv_array_append_uint(ch, (uint64_t)v, &e);
      else st = qv_array_append_int(ch, (int64_t)v, &e);
      rbt_check(st, &e, "append");
    }
    rbt_check(qv_array_finish_element(a, &e), &e, "row");
  }
  rbt_check(qv_array_finish_building(a, QV_VALIDATE_FULL, &e), &e, "finish");
}

static QvStatus convert(const Col *cols, int ncols, int rows, const QvTableToTensorOptions *o,
                        QvTensor *t, QvError *e) {
  struct ArrowSchema s;
  struct ArrowArray a;
  make(&s, &a, cols, ncols, rows);
  const struct ArrowArray *b = &a;
  QvStatus st = qv_table_to_tensor(&s, &b, 1, o, t, e);
  a.release(&a);
  s.release(&s);
  return st;
}

static void expect_values(const QvTensor *t, QvArrowType type, int64_t rows, int64_t cols,
                          bool column_major, const double *want) {
  assert_int_equal(t->type, type);
  assert_int_equal(t->ndim, 2);
  assert_int_equal(t->shape[0], rows);
  assert_int_equal(t->shape[1], cols);
  int64_t es = (int64_t)qv_arrow_type_size(type);
  if (column_major) {
    assert_int_equal(t->strides[0], es);
    assert_int_equal(t->strides[1], es * rows);
  } else {
    assert_int_equal(t->strides[0], es * cols);
    assert_int_equal(t->strides[1], es);
  }
  assert_null(t->dim_names);
  for (int64_t c = 0; c < cols; c++)
    for (int64_t r = 0; r < rows; r++) {
      double got;
      QvError e = {0};
      rbt_check(qv_tensor_get_double(t, (int64_t[]){r, c}, &got, &e), &e, "get");
      double w = want[c * rows + r]; /* want: column by column */
      if (isnan(w)) {
        if (!isnan(got)) fail_msg("[%lld, %lld] = %g, want NaN", (long long)r, (long long)c, got);
      } else if (got != w) {
        fail_msg("[%lld, %lld] = %g, want %g", (long long)r, (long long)c, got, w);
      }
    }
}

static void expect_error(QvStatus st, const QvError *e, QvStatus code, const char *substr) {
  assert_int_equal(st, code);
  if (strstr(e->message, substr) == NULL) fail_msg("message '%s' lacks '%s'", e->message, substr);
}

static const Col u16 = {"f0", "S", {1, 2, 3, 4, 5, 6, 7, 8, 9}};
static const Col i16 = {"f1", "s", {10, 20, 30, 40, 50, 60, 70, 80, 90}};
static const Col f32 = {"f2", "f", {100, 200, 300, NAN, 500, 600, 700, 800, 900}};

static void test_promotion(void **state) {
  (void)state;
  QvTensor t;
  QvError e = {0};
  QvTableToTensorOptions cm = {.struct_size = sizeof cm, .column_major = true};
  /* single column keeps its type */
  rbt_check(convert(&u16, 1, 9, &cm, &t, &e), &e, "u16");
  expect_values(&t, QV_ARROW_UINT16, 9, 1, true, u16.v);
  qv_tensor_reset(&t);
  /* uint16 + int16 = int32 */
  Col two[2] = {u16, i16};
  double want2[18];
  for (int i = 0; i < 9; i++) want2[i] = u16.v[i], want2[9 + i] = i16.v[i];
  rbt_check(convert(two, 2, 9, &cm, &t, &e), &e, "u16+i16");
  expect_values(&t, QV_ARROW_INT32, 9, 2, true, want2);
  qv_tensor_reset(&t);
  /* uint16 + int16 + float32 = float64, NaN values pass through */
  Col three[3] = {u16, i16, f32};
  double want3[27];
  for (int i = 0; i < 9; i++) want3[i] = u16.v[i], want3[9 + i] = i16.v[i], want3[18 + i] = f32.v[i];
  rbt_check(convert(three, 3, 9, NULL, &t, &e), &e, "mixed");
  expect_values(&t, QV_ARROW_FLOAT64, 9, 3, false, want3);
  qv_tensor_reset(&t);

  /* the pairwise rules */
  static const struct {
    const char *a, *b;
    QvArrowType want;
  } pairs[] = {
      {"c", "i", QV_ARROW_INT32},   {"s", "l", QV_ARROW_INT64},   {"C", "S", QV_ARROW_UINT16},
      {"C", "i", QV_ARROW_INT32},   {"I", "s", QV_ARROW_INT64},   {"I", "i", QV_ARROW_INT64},
      {"C", "c", QV_ARROW_INT16},   {"c", "f", QV_ARROW_FLOAT32}, {"s", "f", QV_ARROW_FLOAT32},
      {"i", "f", QV_ARROW_FLOAT64}, {"L", "f", QV_ARROW_FLOAT64}, {"f", "g", QV_ARROW_FLOAT64},
      {"C", "g", QV_ARROW_FLOAT64}, {"e", "e", QV_ARROW_FLOAT16}, {"f", "c", QV_ARROW_FLOAT32},
  };
  for (size_t k = 0; k < sizeof pairs / sizeof pairs[0]; k++) {
    Col p[2] = {{"a", pairs[k].a, {1, 2}}, {"b", pairs[k].b, {3, 4}}};
    rbt_check(convert(p, 2, 2, NULL, &t, &e), &e, pairs[k].a);
    if (t.type != pairs[k].want)
      fail_msg("%s + %s = %s, want %s", pairs[k].a, pairs[k].b, qv_arrow_type_name(t.type),
               qv_arrow_type_name(pairs[k].want));
    expect_values(&t, pairs[k].want, 2, 2, false, (double[]){1, 2, 3, 4});
    qv_tensor_reset(&t);
    QvArrowType only;
    struct ArrowSchema s;
    struct ArrowArray a;
    make(&s, &a, p, 2, 0);
    rbt_check(qv_table_tensor_type(&s, NULL, &only, &e), &e, "type");
    assert_int_equal(only, pairs[k].want);
    a.release(&a);
    s.release(&s);
  }
}

static void test_nulls(void **state) {
  (void)state;
  QvTensor t;
  QvError e = {0};
  Col c[2] = {{"f0", "i", {NUL_, 2, 3, 4, 5, 6, 7, 8, 9}},
              {"f1", "f", {10, 20, 30, 40, NUL_, 60, 70, 80, 90}}};
  expect_error(convert(c, 2, 9, NULL, &t, &e), &e, QV_EINVAL,
               "column 'f0' has a null at row 0: Can only convert a RecordBatch with no nulls");
  assert_null(t.data);
  double want[18];
  for (int i = 0; i < 9; i++) {
    want[i] = i == 0 ? NAN : c[0].v[i];
    want[9 + i] = i == 4 ? NAN : c[1].v[i];
  }
  QvTableToTensorOptions o = {.struct_size = sizeof o, .null_to_nan = true};
  /* int32 + float32 = float64 */
  rbt_check(convert(c, 2, 9, &o, &t, &e), &e, "nan");
  expect_values(&t, QV_ARROW_FLOAT64, 9, 2, false, want);
  qv_tensor_reset(&t);
  o.column_major = true;
  rbt_check(convert(c, 2, 9, &o, &t, &e), &e, "nan cm");
  expect_values(&t, QV_ARROW_FLOAT64, 9, 2, true, want);
  qv_tensor_reset(&t);
  /* int8 + int8 with null_to_nan = float32 (no nulls needed), int32 -> float64 */
  Col i8[2] = {{"a", "c", {NUL_, 2}}, {"b", "c", {3, 4}}};
  rbt_check(convert(i8, 2, 2, &o, &t, &e), &e, "i8");
  expect_values(&t, QV_ARROW_FLOAT32, 2, 2, true, (double[]){NAN, 2, 3, 4});
  qv_tensor_reset(&t);
  Col i32[1] = {{"a", "i", {1, 2}}};
  rbt_check(convert(i32, 1, 2, &o, &t, &e), &e, "i32");
  expect_values(&t, QV_ARROW_FLOAT64, 2, 1, true, (double[]){1, 2});
  qv_tensor_reset(&t);
  /* float16 nulls are the float16 NaN */
  Col h[1] = {{"h", "e", {1.5, NUL_}}};
  rbt_check(convert(h, 1, 2, &o, &t, &e), &e, "f16");
  assert_int_equal(t.type, QV_ARROW_FLOAT16);
  assert_int_equal(((const uint16_t *)(const void *)t.data)[1], 0x7e00);
  expect_values(&t, QV_ARROW_FLOAT16, 2, 1, true, (double[]){1.5, NAN});
  qv_tensor_reset(&t);
}

static void test_errors(void **state) {
  (void)state;
  QvTensor t;
  QvError e = {0};
  expect_error(convert(NULL, 0, 3, NULL, &t, &e), &e, QV_EINVAL,
               "Conversion to Tensor for RecordBatches without columns/schema is not supported.");
  Col s[2] = {{"n", "i", {1, 2}}, {"name", "u", {0, 0}}};
  expect_error(convert(s, 2, 2, NULL, &t, &e), &e, QV_EINVAL,
               "column 'name': DataType is not supported: string");
  Col b[1] = {{"flag", "b", {1, 0}}};
  expect_error(convert(b, 1, 2, NULL, &t, &e), &e, QV_EINVAL, "DataType is not supported: bool");
  Col d[1] = {{"day", "tdD", {1, 0}}};
  expect_error(convert(d, 1, 2, NULL, &t, &e), &e, QV_EINVAL, "DataType is not supported: date32");
  Col h[2] = {{"h", "e", {1, 2}}, {"d", "g", {1, 2}}};
  expect_error(convert(h, 2, 2, NULL, &t, &e), &e, QV_ENOTSUP,
               "Casting from or to halffloat is not supported.");
  Col h2[2] = {{"d", "g", {1, 2}}, {"h", "e", {1, 2}}};
  expect_error(convert(h2, 2, 2, NULL, &t, &e), &e, QV_ENOTSUP,
               "Casting from or to halffloat is not supported.");
  Col u[2] = {{"big", "L", {1, 2}}, {"neg", "l", {1, 2}}};
  expect_error(convert(u, 2, 2, NULL, &t, &e), &e, QV_EINVAL,
               "columns 'big' (uint64) and 'neg' (int64) have no common integer type");
  /* column choice */
  const char *missing[] = {"f1", "nope"};
  QvTableToTensorOptions o = {.struct_size = sizeof o, .columns = missing, .n_columns = 2};
  Col c[2] = {u16, i16};
  expect_error(convert(c, 2, 9, &o, &t, &e), &e, QV_EINVAL,
               "no column named 'nope' (columns: 'f0', 'f1')");
  Col dup[2] = {{"x", "i", {1}}, {"x", "i", {2}}};
  const char *x[] = {"x"};
  o.columns = x;
  o.n_columns = 1;
  expect_error(convert(dup, 2, 1, &o, &t, &e), &e, QV_EINVAL, "2 columns are named 'x'");
  o.n_columns = 0;
  expect_error(convert(c, 2, 9, &o, &t, &e), &e, QV_EINVAL, "without columns");
  /* the output limit, before any allocation */
  QvTableToTensorOptions lim = {.struct_size = sizeof lim, .max_output_size = 8 * 9 * 2 - 1};
  Col g[2] = {{"a", "g", {0}}, {"b", "g", {0}}};
  expect_error(convert(g, 2, 9, &lim, &t, &e), &e, QV_ELIMIT, "exceeds the output limit of 143 bytes");
  lim.max_output_size = 8 * 9 * 2;
  rbt_check(convert(g, 2, 9, &lim, &t, &e), &e, "at the limit");
  qv_tensor_reset(&t);
  /* nulls are checked before types, as Arrow C++ does */
  Col sn[1] = {{"s", "u", {NUL_, 0}}};
  expect_error(convert(sn, 1, 2, NULL, &t, &e), &e, QV_EINVAL, "Can only convert a RecordBatch");
}

static void test_choice_batches_slices(void **state) {
  (void)state;
  QvError e = {0};
  Col c1[3] = {{"a", "i", {1, 2, 3}}, {"b", "g", {4, 5, 6}}, {"c", "c", {7, 8, 9}}};
  Col c2[3] = {{"a", "i", {10, 11, 12}}, {"b", "g", {13, 14, 15}}, {"c", "c", {16, 17, 18}}};
  struct ArrowSchema s1, s2;
  struct ArrowArray a1, a2;
  make(&s1, &a1, c1, 3, 3);
  make(&s2, &a2, c2, 3, 3);
  /* the second batch sliced to its last two rows */
  a2.offset = 1;
  a2.length = 2;
  const struct ArrowArray *batches[2] = {&a1, &a2};
  const char *cols[] = {"c", "a", "c"};
  QvTableToTensorOptions o = {.struct_size = sizeof o, .columns = cols, .n_columns = 3};
  QvTensor t;
  rbt_check(qv_table_to_tensor(&s1, batches, 2, &o, &t, &e), &e, "choice");
  /* int8 + int32 + int8 = int32 */
  expect_values(&t, QV_ARROW_INT32, 5, 3, false,
                (double[]){7, 8, 9, 17, 18, 1, 2, 3, 11, 12, 7, 8, 9, 17, 18});
  qv_tensor_reset(&t);
  /* same-type columns in column-major order are copied with memcpy */
  const char *same[] = {"a"};
  o.columns = same;
  o.n_columns = 1;
  o.column_major = true;
  uint64_t before = qvi_path_count(QV_PATH_TABLE_TENSOR_MEMCPY);
  rbt_check(qv_table_to_tensor(&s1, batches, 2, &o, &t, &e), &e, "memcpy");
  assert_int_equal(qvi_path_count(QV_PATH_TABLE_TENSOR_MEMCPY), before + 1);
  expect_values(&t, QV_ARROW_INT32, 5, 1, true, (double[]){1, 2, 3, 11, 12});
  qv_tensor_reset(&t);
  /* a conversion is not a memcpy */
  before = qvi_path_count(QV_PATH_TABLE_TENSOR_MEMCPY);
  QvTableToTensorOptions o2 = o;
  o2.columns = (const char *[]){"c", "a"};
  o2.n_columns = 2;
  rbt_check(qv_table_to_tensor(&s1, batches, 2, &o2, &t, &e), &e, "convert");
  qv_tensor_reset(&t);
  /* "a" is int32 = the result: that column is a memcpy, "c" is not */
  assert_int_equal(qvi_path_count(QV_PATH_TABLE_TENSOR_MEMCPY), before + 1);
  o2.columns = (const char *[]){"c", "b"};
  rbt_check(qv_table_to_tensor(&s1, batches, 2, &o2, &t, &e), &e, "convert");
  expect_values(&t, QV_ARROW_FLOAT64, 5, 2, true, (double[]){7, 8, 9, 17, 18, 4, 5, 6, 14, 15});
  qv_tensor_reset(&t);
  /* b is float64 = the result: one memcpy column again */
  assert_int_equal(qvi_path_count(QV_PATH_TABLE_TENSOR_MEMCPY), before + 2);
  o2.columns = (const char *[]){"c"};
  o2.n_columns = 1;
  rbt_check(qv_table_to_tensor(&s1, batches, 2, &o2, &t, &e), &e, "int8 only");
  qv_tensor_reset(&t);
  assert_int_equal(qvi_path_count(QV_PATH_TABLE_TENSOR_MEMCPY), before + 3);
  o2.columns = (const char *[]){"c"};
  o2.null_to_nan = true; /* int8 -> float32: no memcpy */
  rbt_check(qv_table_to_tensor(&s1, batches, 2, &o2, &t, &e), &e, "int8 as float");
  expect_values(&t, QV_ARROW_FLOAT32, 5, 1, true, (double[]){7, 8, 9, 17, 18});
  qv_tensor_reset(&t);
  assert_int_equal(qvi_path_count(QV_PATH_TABLE_TENSOR_MEMCPY), before + 3);
  /* no batches: a 0 x n tensor */
  rbt_check(qv_table_to_tensor(&s1, NULL, 0, NULL, &t, &e), &e, "empty");
  assert_int_equal(t.shape[0], 0);
  assert_int_equal(t.shape[1], 3);
  qv_tensor_reset(&t);
  /* a released batch is refused */
  struct ArrowArray gone = {0};
  const struct ArrowArray *bad[1] = {&gone};
  expect_error(qv_table_to_tensor(&s1, bad, 1, NULL, &t, &e), &e, QV_EARG, "released");
  a1.release(&a1);
  a2.release(&a2);
  s1.release(&s1);
  s2.release(&s2);
}

static void test_stream(void **state) {
  (void)state;
  QvError e = {0};
  Col c1[2] = {{"x", "s", {1, 2}}, {"y", "f", {3, 4}}};
  Col c2[2] = {{"x", "s", {5}}, {"y", "f", {NUL_}}};
  struct ArrowSchema s1, s2;
  struct ArrowArray a1, a2;
  make(&s1, &a1, c1, 2, 2);
  make(&s2, &a2, c2, 2, 1);
  struct ArrowArray *batches[2] = {&a1, &a2};
  uint8_t *data;
  size_t size;
  QvRbWriteOptions wo = rbt_write_options(QV_IPC_FORMAT_STREAM, QV_COMPRESSION_NONE, 0, 1);
  rbt_write(&s1, batches, 2, &wo, &data, &size);
  struct ArrowArrayStream st;
  rbt_check(rbt_stream_open(&st, data, size, NULL, &e), &e, "open");
  QvTensor t;
  expect_error(qv_table_stream_to_tensor(&st, NULL, &t, &e), &e, QV_EINVAL,
               "column 'y' has a null at row 2");
  st.release(&st);
  rbt_check(rbt_stream_open(&st, data, size, NULL, &e), &e, "open");
  QvTableToTensorOptions o = {.struct_size = sizeof o, .null_to_nan = true};
  rbt_check(qv_table_stream_to_tensor(&st, &o, &t, &e), &e, "stream");
  /* int16 + float32 = float32 */
  expect_values(&t, QV_ARROW_FLOAT32, 3, 2, false, (double[]){1, 2, 5, 3, 4, NAN});
  qv_tensor_reset(&t);
  st.release(&st);
  free(data);
  a1.release(&a1);
  a2.release(&a2);
  s1.release(&s1);
  s2.release(&s2);
}

/* Row-major over batches longer than a tile (128 KiB of output rows): the
 * gather runs tile by tile (counted), and every element lands, nulls as NaN,
 * across tile and batch edges; a single column, column-major or a batch
 * within one tile is not tiled. The output is not zeroed first, so a missed
 * element would show. */
static void make_long(struct ArrowSchema *s, struct ArrowArray *a, int64_t rows, int64_t base) {
  QvError e = {0};
  rbt_check(qv_arrow_schema_init(s, "+s", NULL, 0, 3, &e), &e, "schema");
  const char *fmt[3] = {"g", "i", "s"}, *nm[3] = {"d", "i", "s"};
  for (int c = 0; c < 3; c++)
    rbt_check(qv_arrow_schema_init(s->children[c], fmt[c], nm[c], ARROW_FLAG_NULLABLE, 0, &e), &e,
              "child");
  rbt_check(qv_array_init_from_schema(a, s, &e), &e, "init");
  for (int64_t r = 0; r < rows; r++) {
    int64_t g = base + r;
    rbt_check(qv_array_append_double(a->children[0], (double)g * 0.5, &e), &e, "d");
    if (g % 7 == 3)
      rbt_check(qv_array_append_null(a->children[1], 1, &e), &e, "null");
    else
      rbt_check(qv_array_append_int(a->children[1], g, &e), &e, "i");
    rbt_check(qv_array_append_int(a->children[2], (int64_t)(g % 30000) - 15000, &e), &e, "s");
    rbt_check(qv_array_finish_element(a, &e), &e, "row");
  }
  rbt_check(qv_array_finish_building(a, QV_VALIDATE_FULL, &e), &e, "finish");
}

static void test_tiled_row_major(void **state) {
  (void)state;
  QvError e = {0};
  struct ArrowSchema s1, s2, s3;
  struct ArrowArray a1, a2, a3;
  const int64_t n1 = 20000, n2 = 9001; /* tiles of 131072 / 24 = 5461 rows */
  make_long(&s1, &a1, n1, 0);
  make_long(&s2, &a2, n2, n1);
  const struct ArrowArray *batches[2] = {&a1, &a2};
  QvTableToTensorOptions o = {.struct_size = sizeof o, .null_to_nan = true};
  QvTensor t;
  uint64_t before = qvi_path_count(QV_PATH_TABLE_TENSOR_TILED);
  rbt_check(qv_table_to_tensor(&s1, batches, 2, &o, &t, &e), &e, "tiled");
  assert_int_equal(qvi_path_count(QV_PATH_TABLE_TENSOR_TILED), before + 1);
  assert_int_equal(t.type, QV_ARROW_FLOAT64);
  assert_int_equal(t.shape[0], n1 + n2);
  assert_int_equal(t.shape[1], 3);
  assert_int_equal(t.strides[0], 24);
  const double *d = (const double *)(const void *)t.data;
  for (int64_t g = 0; g < n1 + n2; g++) {
    if (d[g * 3] != (double)g * 0.5) fail_msg("[%lld, 0] = %g", (long long)g, d[g * 3]);
    if (g % 7 == 3 ? !isnan(d[g * 3 + 1]) : d[g * 3 + 1] != (double)g)
      fail_msg("[%lld, 1] = %g", (long long)g, d[g * 3 + 1]);
    if (d[g * 3 + 2] != (double)((g % 30000) - 15000))
      fail_msg("[%lld, 2] = %g", (long long)g, d[g * 3 + 2]);
  }
  qv_tensor_reset(&t);
  /* column-major, one column, or a batch within one tile: not tiled */
  before = qvi_path_count(QV_PATH_TABLE_TENSOR_TILED);
  QvTableToTensorOptions cm = o;
  cm.column_major = true;
  rbt_check(qv_table_to_tensor(&s1, batches, 2, &cm, &t, &e), &e, "column-major");
  d = (const double *)(const void *)t.data;
  for (int64_t g = 0; g < n1 + n2; g++)
    if (d[g] != (double)g * 0.5 || d[2 * (n1 + n2) + g] != (double)((g % 30000) - 15000) ||
        (g % 7 == 3 ? !isnan(d[n1 + n2 + g]) : d[n1 + n2 + g] != (double)g))
      fail_msg("column-major row %lld", (long long)g);
  qv_tensor_reset(&t);
  QvTableToTensorOptions one = o;
  one.columns = (const char *[]){"s"};
  one.n_columns = 1;
  rbt_check(qv_table_to_tensor(&s1, batches, 2, &one, &t, &e), &e, "one column");
  assert_int_equal(t.type, QV_ARROW_FLOAT32); /* int16 with null_to_nan */
  qv_tensor_reset(&t);
  make_long(&s3, &a3, 5000, 0);
  const struct ArrowArray *small[1] = {&a3};
  rbt_check(qv_table_to_tensor(&s3, small, 1, &o, &t, &e), &e, "one tile");
  d = (const double *)(const void *)t.data;
  for (int64_t g = 0; g < 5000; g++)
    if (d[g * 3] != (double)g * 0.5 || d[g * 3 + 2] != (double)((g % 30000) - 15000))
      fail_msg("one tile row %lld", (long long)g);
  qv_tensor_reset(&t);
  assert_int_equal(qvi_path_count(QV_PATH_TABLE_TENSOR_TILED), before);
  a1.release(&a1);
  a2.release(&a2);
  a3.release(&a3);
  s1.release(&s1);
  s2.release(&s2);
  s3.release(&s3);
}

/* threads: outputs of 4 MiB or more split by ranges of output rows (counted),
 * byte-identical to one thread for 1..4 threads in both layouts, across a
 * batch edge, nulls as NaN and the memcpy path included; a small output
 * stays on the caller; the count is checked; a caller with the struct as
 * it was before `threads` gets one thread. */
static void test_threads(void **state) {
  (void)state;
  QvError e = {0};
  struct ArrowSchema s1, s2, s3;
  struct ArrowArray a1, a2, a3;
  const int64_t n1 = 120000, n2 = 80001; /* 200001 x 3 doubles: 4.8 MB */
  make_long(&s1, &a1, n1, 0);
  make_long(&s2, &a2, n2, n1);
  const struct ArrowArray *batches[2] = {&a1, &a2};
  const char *only_d[] = {"d", "d", "d"}; /* a name may repeat */
  for (int layout = 0; layout < 3; layout++) {
    QvTableToTensorOptions o = {.struct_size = sizeof o, .null_to_nan = true,
                                .column_major = layout != 0};
    if (layout == 2) { /* a double column without nulls: memcpy per range */
      o.columns = only_d;
      o.n_columns = 3;
    }
    QvTensor ref;
    rbt_check(qv_table_to_tensor(&s1, batches, 2, &o, &ref, &e), &e, "one thread");
    size_t bytes = (size_t)(ref.shape[0] * ref.shape[1]) * qv_arrow_type_size(ref.type);
    for (int threads = 1; threads <= 4; threads++) {
      o.threads = threads;
      uint64_t split = qvi_path_count(QV_PATH_TABLE_TENSOR_THREADS);
      uint64_t copied = qvi_path_count(QV_PATH_TABLE_TENSOR_MEMCPY);
      QvTensor t;
      rbt_check(qv_table_to_tensor(&s1, batches, 2, &o, &t, &e), &e, "threads");
      assert_int_equal(qvi_path_count(QV_PATH_TABLE_TENSOR_THREADS), split + (threads > 1));
      if (layout == 2) assert_int_equal(qvi_path_count(QV_PATH_TABLE_TENSOR_MEMCPY), copied + 1);
      assert_int_equal(t.type, ref.type);
      assert_memory_equal(t.shape, ref.shape, sizeof t.shape[0] * 2);
      assert_memory_equal(t.strides, ref.strides, sizeof t.strides[0] * 2);
      if (memcmp(t.data, ref.data, bytes) != 0)
        fail_msg("layout %d, %d threads: the bytes differ from one thread's", layout, threads);
      qv_tensor_reset(&t);
    }
    qv_tensor_reset(&ref);
  }
  /* small: no split */
  make_long(&s3, &a3, 5000, 0);
  const struct ArrowArray *small[1] = {&a3};
  QvTableToTensorOptions o = {.struct_size = sizeof o, .null_to_nan = true, .threads = 4};
  uint64_t split = qvi_path_count(QV_PATH_TABLE_TENSOR_THREADS);
  QvTensor t;
  rbt_check(qv_table_to_tensor(&s3, small, 1, &o, &t, &e), &e, "small");
  qv_tensor_reset(&t);
  assert_int_equal(qvi_path_count(QV_PATH_TABLE_TENSOR_THREADS), split);
  /* the struct before threads: its bytes are not read, one thread */
  QvTableToTensorOptions old = {.struct_size = offsetof(QvTableToTensorOptions, threads),
                                .null_to_nan = true, .threads = 4};
  rbt_check(qv_table_to_tensor(&s1, batches, 2, &old, &t, &e), &e, "old layout");
  qv_tensor_reset(&t);
  assert_int_equal(qvi_path_count(QV_PATH_TABLE_TENSOR_THREADS), split);
  o.threads = QV_TABLE_TENSOR_MAX_THREADS + 1;
  expect_error(qv_table_to_tensor(&s3, small, 1, &o, &t, &e), &e, QV_EARG, "threads must be 0..256");
  o.threads = -1;
  expect_error(qv_table_to_tensor(&s3, small, 1, &o, &t, &e), &e, QV_EARG, "not -1");
  a1.release(&a1);
  a2.release(&a2);
  a3.release(&a3);
  s1.release(&s1);
  s2.release(&s2);
  s3.release(&s3);
}

/* ---- evenly spaced planes: C Data arrays over one buffer of the test's */

enum { PL_COLS = 5 };

typedef struct Planes {
  struct ArrowArray child[PL_COLS + 1], *kids[PL_COLS + 1];
  const void *bufs[PL_COLS + 1][2];
  const void *top[1];
} Planes;

static void no_release(struct ArrowArray *a) { a->release = NULL; }

/* A struct batch of `ncols` columns of `rows` values each, column c at
 * data + c * stride + offset * es (`holes`: column 2 one value further on,
 * so the spacing breaks). */
static void planes_batch(Planes *p, struct ArrowArray *out, const uint8_t *data, int64_t stride,
                         int64_t rows, int64_t offset, int ncols, int64_t es, bool holes) {
  for (int c = 0; c < ncols; c++) {
    p->bufs[c][0] = NULL;
    p->bufs[c][1] = data + c * stride + (holes && c == 2 ? es : 0);
    p->child[c] = (struct ArrowArray){.length = rows, .offset = offset, .n_buffers = 2,
                                      .buffers = p->bufs[c], .release = no_release};
    p->kids[c] = &p->child[c];
  }
  p->top[0] = NULL;
  *out = (struct ArrowArray){.length = rows, .n_buffers = 1, .n_children = ncols,
                             .buffers = p->top, .children = p->kids, .release = no_release};
}

/* Row-major, the chosen columns of the output type without nulls and their
 * values evenly spaced (as an IPC body lays them out): the interleave
 * kernel writes whole rows (counted), in ascending, descending and repeated
 * column order, 1 and 3 threads, two batches, an offset, float64 and int16;
 * every element checked. Spacing broken or column-major: not this path,
 * the same values. A null in evenly spaced float64 columns (null_to_nan):
 * not this path for that batch, NaN in its place. */
static void test_planes_row_major(void **state) {
  (void)state;
  const int64_t rows = 150000, off = 3; /* 5 float64 columns: 6 MB, threaded */
  static const char *const orders[4][PL_COLS] = {{"a", "b", "c", "d", "e"},
                                                 {"e", "d", "c", "b", "a"},
                                                 {"b", "b", "b", "b", "b"},
                                                 {"a", "c", "e", NULL, NULL}};
  static const int counts[4] = {5, 5, 5, 3};
  for (int es = 2; es <= 8; es += 6) {
    const char *fmt = es == 8 ? "g" : "s";
    QvArrowType type = es == 8 ? QV_ARROW_FLOAT64 : QV_ARROW_INT16;
    int64_t stride = (rows + off + 7) * es; /* the planes' spacing */
    uint8_t *data = malloc((size_t)(stride * PL_COLS));
    assert_non_null(data);
    for (int c = 0; c < PL_COLS; c++)
      for (int64_t r = 0; r < rows + off; r++) {
        uint8_t *at = data + c * stride + r * es;
        if (es == 8) {
          double v = (double)(c * 1000003 + r);
          memcpy(at, &v, 8);
        } else {
          int16_t v = (int16_t)(c * 7919 + r);
          memcpy(at, &v, 2);
        }
      }
    QvError e = {0};
    struct ArrowSchema sch;
    rbt_check(qv_arrow_schema_init(&sch, "+s", NULL, 0, PL_COLS, &e), &e, "schema");
    static const char *names[PL_COLS] = {"a", "b", "c", "d", "e"};
    for (int c = 0; c < PL_COLS; c++)
      rbt_check(qv_arrow_schema_init(sch.children[c], fmt, names[c], ARROW_FLAG_NULLABLE, 0, &e),
                &e, "child");
    /* two batches: rows [0, 100000) at offset `off`, then the rest */
    Planes p1, p2;
    struct ArrowArray b1, b2;
    int64_t n1 = 100000;
    /* column c's validity in batch 1 (bit off + r for row r): row 5 null */
    uint8_t valid[(100000 + 3 + 7) / 8];
    memset(valid, 0xFF, sizeof valid);
    const int64_t null_row = 5;
    valid[(off + null_row) / 8] &= (uint8_t)~(1u << ((off + null_row) % 8));
    /* 0: planes, 1: spacing broken, 2: column-major, 3: a null (float64) */
    for (int variant = 0; variant < 4; variant++) {
      if (variant == 3 && es != 8) continue; /* int16 with null_to_nan is float32 */
      planes_batch(&p1, &b1, data, stride, n1, off, PL_COLS, es, variant == 1);
      planes_batch(&p2, &b2, data + (off + n1) * es, stride, rows - n1, 0, PL_COLS, es,
                   variant == 1);
      if (variant == 3) {
        p1.bufs[2][0] = valid;
        p1.child[2].null_count = 1;
      }
      const struct ArrowArray *batches[2] = {&b1, &b2};
      for (int ord = 0; ord < 4; ord++) {
        for (int threads = 1; threads <= 3; threads += 2) {
          QvTableToTensorOptions o = {.struct_size = sizeof o, .columns = orders[ord],
                                      .n_columns = counts[ord], .threads = threads,
                                      .column_major = variant == 2, .null_to_nan = variant == 3};
          uint64_t before = qvi_path_count(QV_PATH_TABLE_TENSOR_PLANES);
          QvTensor t;
          rbt_check(qv_table_to_tensor(&sch, batches, 2, &o, &t, &e), &e, "planes");
          /* a column repeated is evenly spaced by 0, the break elsewhere;
           * with a null in batch 1, batch 2 still is */
          bool even = variant == 0 || variant == 3 || (variant == 1 && ord == 2);
          assert_int_equal(qvi_path_count(QV_PATH_TABLE_TENSOR_PLANES), before + even);
          assert_int_equal(t.type, type);
          /* into a caller's buffer: the same path (counted), the same bytes */
          size_t bytes = (size_t)(rows * counts[ord] * es);
          uint8_t *buf = malloc(bytes);
          assert_non_null(buf);
          memset(buf, 0xA5, bytes);
          QvTableTensorBuffer into = {.data = buf, .data_size = (int64_t)bytes, .type = type,
                                      .shape = {rows, counts[ord]}};
          QvTensor v;
          before = qvi_path_count(QV_PATH_TABLE_TENSOR_PLANES);
          rbt_check(qv_table_to_tensor_into(&sch, batches, 2, &o, &into, &v, &e), &e, "into");
          assert_int_equal(qvi_path_count(QV_PATH_TABLE_TENSOR_PLANES), before + even);
          assert_ptr_equal(v.data, buf);
          if (memcmp(buf, t.data, bytes) != 0)
            fail_msg("es %d variant %d order %d threads %d: into differs", es, variant, ord,
                     threads);
          qv_tensor_reset(&v);
          free(buf);
          int nc = counts[ord];
          for (int k = 0; k < nc; k++) {
            int c = orders[ord][k][0] - 'a';
            for (int64_t r = 0; r < rows; r++) {
              /* batch 2 starts where batch 1 ends: row r lies at r + off */
              int64_t shift = variant == 1 && c == 2 ? 1 : 0;
              const uint8_t *want = data + c * stride + (r + off + shift) * es;
              const uint8_t *got = t.data + (variant == 2 ? (k * rows + r) : (r * nc + k)) * es;
              if (variant == 3 && c == 2 && r == null_row) {
                double v;
                memcpy(&v, got, sizeof v);
                if (!isnan(v)) fail_msg("threads %d order %d: the null is %g", threads, ord, v);
              } else if (memcmp(got, want, (size_t)es) != 0)
                fail_msg("es %d variant %d order %d threads %d: [%lld, %d] differs", es, variant,
                         ord, threads, (long long)r, k);
            }
          }
          qv_tensor_reset(&t);
        }
      }
    }
    sch.release(&sch);
    free(data);
  }
}


/* ---- into a caller's buffer */

/* qv_table_to_tensor_into against qv_table_to_tensor over two batches of
 * 4.8 MB: row-major (tiled), column-major, a column order with a repeat,
 * the memcpy columns, with and without null_to_nan (a table without nulls in
 * the chosen columns), 1..4 threads (the outputs of 4 MiB or more split): a view of the buffer (no owner), the
 * same shape, strides and bytes, the same paths counted (threads, memcpy,
 * tiles). The buffer starts filled with 0xA5, so a missed element shows. */
static void test_into_same_bytes(void **state) {
  (void)state;
  QvError e = {0};
  struct ArrowSchema s1, s2;
  struct ArrowArray a1, a2;
  const int64_t n1 = 120000, n2 = 80001;
  make_long(&s1, &a1, n1, 0);
  make_long(&s2, &a2, n2, n1);
  const struct ArrowArray *batches[2] = {&a1, &a2};
  const char *order[] = {"s", "d", "i", "s"};
  const char *no_nulls[] = {"d", "s"};
  const char *only_d[] = {"d", "d", "d"};
  for (int layout = 0; layout < 10; layout++) {
    QvTableToTensorOptions o = {.struct_size = sizeof o, .null_to_nan = true,
                                .column_major = layout % 2 != 0};
    switch (layout / 2) {
      case 1: o.columns = order, o.n_columns = 4; break;
      case 2: o.columns = only_d, o.n_columns = 3; break; /* memcpy column-major */
      case 3: o.columns = no_nulls, o.n_columns = 2, o.null_to_nan = false; break; /* int16 */
      case 4: o.columns = no_nulls, o.n_columns = 2; break; /* float64 */
      default: break;
    }
    for (int threads = 1; threads <= 4; threads++) {
      o.threads = threads;
      QvTensor ref;
      uint64_t paths[3] = {qvi_path_count(QV_PATH_TABLE_TENSOR_THREADS),
                           qvi_path_count(QV_PATH_TABLE_TENSOR_MEMCPY),
                           qvi_path_count(QV_PATH_TABLE_TENSOR_TILED)};
      rbt_check(qv_table_to_tensor(&s1, batches, 2, &o, &ref, &e), &e, "new buffer");
      uint64_t hits[3] = {qvi_path_count(QV_PATH_TABLE_TENSOR_THREADS) - paths[0],
                          qvi_path_count(QV_PATH_TABLE_TENSOR_MEMCPY) - paths[1],
                          qvi_path_count(QV_PATH_TABLE_TENSOR_TILED) - paths[2]};
      size_t bytes = (size_t)(ref.shape[0] * ref.shape[1]) * qv_arrow_type_size(ref.type);
      assert_int_equal(hits[0], threads > 1 && bytes >= ((size_t)4 << 20));
      if (layout == 5) assert_int_equal(hits[1], 1);
      if (layout == 0) assert_int_equal(hits[2], 1);
      QvArrowType type;
      rbt_check(qv_table_tensor_type(&s1, &o, &type, &e), &e, "type");
      assert_int_equal(type, ref.type);
      uint8_t *buf = malloc(bytes);
      assert_non_null(buf);
      memset(buf, 0xA5, bytes);
      QvTableTensorBuffer into = {.data = buf, .data_size = (int64_t)bytes, .type = type,
                                  .shape = {n1 + n2, o.n_columns ? o.n_columns : 3}};
      QvTensor t;
      paths[0] = qvi_path_count(QV_PATH_TABLE_TENSOR_THREADS);
      paths[1] = qvi_path_count(QV_PATH_TABLE_TENSOR_MEMCPY);
      paths[2] = qvi_path_count(QV_PATH_TABLE_TENSOR_TILED);
      rbt_check(qv_table_to_tensor_into(&s1, batches, 2, &o, &into, &t, &e), &e, "into");
      assert_int_equal(qvi_path_count(QV_PATH_TABLE_TENSOR_THREADS) - paths[0], hits[0]);
      assert_int_equal(qvi_path_count(QV_PATH_TABLE_TENSOR_MEMCPY) - paths[1], hits[1]);
      assert_int_equal(qvi_path_count(QV_PATH_TABLE_TENSOR_TILED) - paths[2], hits[2]);
      assert_ptr_equal(t.data, buf);
      assert_null(t.owner);
      assert_int_equal(t.data_size, (int64_t)bytes);
      assert_int_equal(t.type, ref.type);
      assert_memory_equal(t.shape, ref.shape, sizeof t.shape[0] * 2);
      assert_memory_equal(t.strides, ref.strides, sizeof t.strides[0] * 2);
      if (memcmp(buf, ref.data, bytes) != 0)
        fail_msg("layout %d, %d threads: into differs from the new buffer", layout, threads);
      qv_tensor_reset(&t);
      qv_tensor_reset(&ref);
      free(buf);
    }
  }
  a1.release(&a1);
  a2.release(&a2);
  s1.release(&s1);
  s2.release(&s2);
}

/* Every refusal before the first write (the buffer keeps its 0xA5 bytes,
 * *out is zeroed): bad input first (QV_EINVAL, as qv_table_to_tensor),
 * then the buffer (QV_EARG naming both sides): NULL, type, shape, size,
 * data NULL, misaligned, overlapping a column's values or validity. No
 * output limit (nothing is allocated); an empty output needs no data. The
 * stream form: the same bytes, and the same refusals. */
static void test_into_refusals(void **state) {
  (void)state;
  QvError e = {0};
  Col c[3] = {{"a", "i", {1, 2, NUL_}}, {"b", "g", {4, 5, 6}}, {"c", "u", {0, 0, 0}}};
  struct ArrowSchema s;
  struct ArrowArray a;
  make(&s, &a, c, 3, 3);
  const struct ArrowArray *b[1] = {&a};
  const char *ab[] = {"a", "b"};
  QvTableToTensorOptions o = {.struct_size = sizeof o, .columns = ab, .n_columns = 2};
  double buf[7]; /* one spare: a misaligned start still lies inside */
  memset(buf, 0xA5, sizeof buf);
  uint8_t fill[sizeof buf];
  memset(fill, 0xA5, sizeof fill);
  QvTableTensorBuffer into = {.data = buf, .data_size = 48, .type = QV_ARROW_FLOAT64,
                              .shape = {3, 2}};
  QvTensor t;
#define REFUSED(call, code, text)                                     \
  do {                                                                \
    memset(&t, 0x5A, sizeof t);                                       \
    expect_error((call), &e, (code), (text));                         \
    assert_null(t.data);                                              \
    assert_memory_equal(buf, fill, sizeof buf);                       \
  } while (0)
  /* the input first: a null, then a string column */
  REFUSED(qv_table_to_tensor_into(&s, b, 1, &o, &into, &t, &e), QV_EINVAL,
          "column 'a' has a null at row 2");
  o.null_to_nan = true;
  QvTableToTensorOptions str = o;
  str.columns = (const char *[]){"b", "c"};
  REFUSED(qv_table_to_tensor_into(&s, b, 1, &str, &into, &t, &e), QV_EINVAL,
          "column 'c': DataType is not supported: string");
  REFUSED(qv_table_to_tensor_into(&s, b, 1, &o, NULL, &t, &e), QV_EARG, "into is NULL");
  into.type = QV_ARROW_FLOAT32;
  REFUSED(qv_table_to_tensor_into(&s, b, 1, &o, &into, &t, &e), QV_EARG,
          "the buffer is for float32 values but the columns give float64");
  into.type = QV_ARROW_FLOAT64;
  into.shape[0] = 2;
  into.shape[1] = 3;
  REFUSED(qv_table_to_tensor_into(&s, b, 1, &o, &into, &t, &e), QV_EARG,
          "the buffer is for a [2, 3] tensor but the tables give [3, 2]");
  into.shape[0] = 3;
  into.shape[1] = 2;
  into.data_size = 56;
  REFUSED(qv_table_to_tensor_into(&s, b, 1, &o, &into, &t, &e), QV_EARG,
          "the buffer holds 56 bytes but the [3, 2] float64 tensor takes 48");
  into.data_size = 47;
  REFUSED(qv_table_to_tensor_into(&s, b, 1, &o, &into, &t, &e), QV_EARG, "holds 47 bytes");
  into.data_size = 48;
  into.data = NULL;
  REFUSED(qv_table_to_tensor_into(&s, b, 1, &o, &into, &t, &e), QV_EARG,
          "the buffer's data is NULL (48 bytes)");
  into.data = (uint8_t *)buf + 4;
  REFUSED(qv_table_to_tensor_into(&s, b, 1, &o, &into, &t, &e), QV_EARG,
          "is not aligned to the 8-byte float64 elements");
  /* over the columns the copy reads: values of 'b', validity of 'a' */
  const struct ArrowArray *bcol = a.children[1], *acol = a.children[0];
  into.data = (void *)(uintptr_t)bcol->buffers[1];
  expect_error(qv_table_to_tensor_into(&s, b, 1, &o, &into, &t, &e), &e, QV_EARG,
               "overlaps column 'b' of batch 0");
  into.data = (void *)((uintptr_t)acol->buffers[0] & ~(uintptr_t)7);
  into.data_size = 48;
  expect_error(qv_table_to_tensor_into(&s, b, 1, &o, &into, &t, &e), &e, QV_EARG,
               "overlaps column 'a' of batch 0");
  assert_memory_equal(buf, fill, sizeof buf);
  /* an output limit below the size does not apply: nothing is allocated */
  into.data = buf;
  o.max_output_size = 8;
  rbt_check(qv_table_to_tensor_into(&s, b, 1, &o, &into, &t, &e), &e, "no limit");
  assert_ptr_equal(t.data, (const uint8_t *)buf);
  expect_values(&t, QV_ARROW_FLOAT64, 3, 2, false, (double[]){1, 2, NAN, 4, 5, 6});
  qv_tensor_reset(&t);
  /* no batches: [0, 2], no bytes, data may be NULL */
  QvTableTensorBuffer none = {.type = QV_ARROW_FLOAT64, .shape = {0, 2}};
  rbt_check(qv_table_to_tensor_into(&s, NULL, 0, &o, &none, &t, &e), &e, "empty");
  assert_int_equal(t.shape[0], 0);
  qv_tensor_reset(&t);
  /* the stream form over an IPC stream of the same batch */
  struct ArrowArray *wb[1] = {&a};
  uint8_t *data;
  size_t size;
  QvRbWriteOptions wo = rbt_write_options(QV_IPC_FORMAT_STREAM, QV_COMPRESSION_NONE, 0, 1);
  rbt_write(&s, wb, 1, &wo, &data, &size);
  struct ArrowArrayStream st;
  rbt_check(rbt_stream_open(&st, data, size, NULL, &e), &e, "open");
  memset(buf, 0xA5, sizeof buf);
  into.shape[0] = 2;
  REFUSED(qv_table_stream_to_tensor_into(&st, &o, &into, &t, &e), QV_EARG,
          "the buffer is for a [2, 2] tensor but the tables give [3, 2]");
  st.release(&st);
  REFUSED(qv_table_stream_to_tensor_into(NULL, &o, &into, &t, &e), QV_EARG, "no stream");
  into.shape[0] = 3;
  rbt_check(rbt_stream_open(&st, data, size, NULL, &e), &e, "open");
  REFUSED(qv_table_stream_to_tensor_into(&st, &o, NULL, &t, &e), QV_EARG, "into is NULL");
  rbt_check(qv_table_stream_to_tensor_into(&st, &o, &into, &t, &e), &e, "stream into");
  assert_ptr_equal(t.data, (const uint8_t *)buf);
  expect_values(&t, QV_ARROW_FLOAT64, 3, 2, false, (double[]){1, 2, NAN, 4, 5, 6});
  qv_tensor_reset(&t);
  st.release(&st);
#undef REFUSED
  free(data);
  a.release(&a);
  s.release(&s);
}

int main(int argc, char **argv) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_promotion),
      cmocka_unit_test(test_nulls),
      cmocka_unit_test(test_errors),
      cmocka_unit_test(test_choice_batches_slices),
      cmocka_unit_test(test_stream),
      cmocka_unit_test(test_tiled_row_major),
      cmocka_unit_test(test_threads),
      cmocka_unit_test(test_planes_row_major),
      cmocka_unit_test(test_into_same_bytes),
      cmocka_unit_test(test_into_refusals),
  };
  const QvTestGroup groups[] = {QV_TEST_GROUP("", tests, NULL, NULL)};
  return qv_test_run_groups(argc, argv, groups, sizeof groups / sizeof groups[0]);
}
