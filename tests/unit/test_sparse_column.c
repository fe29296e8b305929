/* Sparse columns (quiver/sparse_column.h): the specification's worked
 * examples byte for byte (docs/sparse-tensor-extension.md), every format and
 * index type through an IPC stream and back, the zero-copy sparse-vector <->
 * CSR bridges (same addresses), the C Data Interface, and one error per rule
 * the validator checks, naming field, row and element. */
#include "quiver/advanced.h"
#include "test_util.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "quiver/io.h"
#include "quiver/recordbatch_ipc.h"
#include "quiver/sparse.h"
#include "quiver/sparse_column.h"
#include "quiver/tensor_column.h"
#include "util/cpu.h"
#include "util/load.h"

/* An expected QV_OK, with the message when it is not. */
#define assert_ok(expr)                                                         \
  do {                                                                          \
    QvStatus st_ = (expr);                                                      \
    if (st_ != QV_OK) fail_msg("%s: status %d: %s", #expr, st_, err.message);   \
  } while (0)

static void assert_error(QvStatus st, const QvError *err, QvStatus code, const char *substr) {
  assert_int_equal(st, code);
  if (strstr(err->message, substr) == NULL)
    fail_msg("message '%s' lacks '%s'", err->message, substr);
}

/* A dense tensor over static row-major data. */
static void dense(QvTensor *t, QvArrowType type, int32_t ndim, const int64_t *shape,
                  const void *data, size_t size, const char *const *names) {
  QvError err = {0};
  QvTensorDesc d = {.type = type, .ndim = ndim, .shape = shape, .dim_names = names,
                    .data = data, .data_size = (int64_t)size};
  assert_ok(qv_tensor_init(t, &d, &err));
}

static void to_sparse(const QvTensor *t, QvSparseFormat f, QvArrowType index_type,
                      const int32_t *axis_order, QvSparseTensor *out) {
  QvError err = {0};
  QvSparseOptions o = {.struct_size = sizeof o, .index_type = index_type,
                       .axis_order = axis_order};
  assert_ok(qv_sparse_from_dense(t, f, &o, out, &err));
}

/* Every stream written here, saved as a seed of fuzz_sparse_column when
 * QV_SPARSE_COLUMN_SEEDS names a directory. */
static void save_seed(const uint8_t *bytes, size_t size) {
  static int n;
  const char *dir = getenv("QV_SPARSE_COLUMN_SEEDS");
  if (dir == NULL) return;
  char path[512];
  snprintf(path, sizeof path, "%s/stream-%02d", dir, n++);
  FILE *f = fopen(path, "wb");
  assert_non_null(f);
  assert_int_equal(fwrite(bytes, 1, size, f), size);
  assert_int_equal(fclose(f), 0);
}

/* Writes a column as a one-column IPC stream and reads it back. */
static void ipc_roundtrip(struct ArrowSchema *field, struct ArrowArray *array,
                          struct ArrowSchema *field_back, struct ArrowArray *array_back) {
  QvError err = {0};
  struct ArrowSchema bs;
  struct ArrowArray ba;
  assert_ok(qv_tensor_column_to_batch(field, array, &bs, &ba, &err));
  QvSink *sink;
  assert_ok(qv_sink_new_memory(&sink, &err));
  QvRbWriter *w;
  assert_ok(qv_rb_writer_new(&w, &bs, sink, NULL, &err));
  assert_ok(qv_rb_writer_write(w, &ba, &err));
  assert_ok(qv_rb_writer_finish(w, &err));
  qv_rb_writer_free(w);
  uint8_t *bytes;
  size_t size;
  assert_ok(qv_sink_memory_take(sink, &bytes, &size, &err));
  qv_sink_free(sink);
  save_seed(bytes, size);
  bs.release(&bs);
  ba.release(&ba);
  QvOwner *owner = qv_owner_new(qv_free, bytes);
  QvSource *src;
  assert_ok(qv_source_new_memory(&src, bytes, size, owner, &err));
  qv_owner_free(owner);
  struct ArrowArrayStream stream;
  assert_ok(qv_rb_stream_reader_new(&stream, src, NULL, &err));
  struct ArrowSchema s;
  struct ArrowArray a;
  assert_int_equal(stream.get_schema(&stream, &s), 0);
  assert_int_equal(stream.get_next(&stream, &a), 0);
  assert_non_null(a.release);
  assert_ok(qv_arrow_schema_copy(s.children[0], field_back, &err));
  assert_ok(qv_array_share(a.children[0], array_back, &err));
  a.release(&a);
  s.release(&s);
  stream.release(&stream);
  qv_source_free(src);
}

/* ---- the specification's examples: a dump of the storage, every buffer
 * as little-endian bytes grouped by element */

typedef struct Dump {
  char text[8192];
  size_t n;
} Dump;

static void put(Dump *d, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  d->n += (size_t)vsnprintf(d->text + d->n, sizeof d->text - d->n, fmt, ap);
  va_end(ap);
  assert_true(d->n < sizeof d->text);
}

static void put_bytes(Dump *d, const char *path, const char *what, const uint8_t *p,
                      int64_t count, int w) {
  put(d, "%s %s:", path, what);
  for (int64_t i = 0; i < count; i++) {
    uint64_t x = 0;
    memcpy((uint8_t *)&x + (w < 8 && QV_HOST_BIG_ENDIAN ? 8 - w : 0), p + i * w,
           (size_t)w);
    put(d, " ");
    for (int b = 0; b < w; b++) put(d, "%02x", (unsigned)((x >> (8 * b)) & 0xff));
  }
  put(d, "\n");
}

/* One node: validity (bytes of the bitmap), offsets or values, children. */
static void dump_node(Dump *d, const QvArrayView *v, const char *path) {
  QvLayout L = qv_layout_of(v->type.storage_type);
  if (v->buffer[0] != NULL) put_bytes(d, path, "validity", v->buffer[0], (v->length + 7) / 8, 1);
  int64_t len = v->offset + v->length;
  switch (L) {
    case QV_LAYOUT_LIST:
    case QV_LAYOUT_LARGE_LIST:
      put_bytes(d, path, "offsets", v->buffer[1], len + 1, qv_layout_offset_width(L));
      break;
    case QV_LAYOUT_BOOL: put_bytes(d, path, "bits", v->buffer[1], (len + 7) / 8, 1); break;
    case QV_LAYOUT_FIXED: put_bytes(d, path, "values", v->buffer[1], len, v->type.byte_width); break;
    default: break;
  }
  for (int64_t k = 0; k < v->n_children; k++) {
    char sub[256];
    snprintf(sub, sizeof sub, "%s.%s", path, v->children[k].type.schema->name);
    dump_node(d, &v->children[k], sub);
  }
}

static void dump_column(Dump *d, const struct ArrowSchema *f, const struct ArrowArray *a) {
  QvError err = {0};
  QvArrowSchemaView sv;
  assert_ok(qv_arrow_schema_view_init(&sv, f, &err));
  put(d, "extension name: %.*s\n", (int)sv.extension_name_len, sv.extension_name);
  put(d, "metadata: %.*s\n", (int)sv.extension_metadata_len, sv.extension_metadata);
  QvArrayView v;
  assert_ok(qv_array_view_init(&v, f, &err));
  assert_ok(qv_array_view_set_array(&v, a, QV_VALIDATE_FULL, &err));
  dump_node(d, &v, f->name);
  qv_array_view_reset(&v);
}

/* The text of the ```text block after "<!-- example: NAME -->" in the doc. */
static char *doc_example(const char *doc, const char *name) {
  char marker[128];
  snprintf(marker, sizeof marker, "<!-- example: %s -->", name);
  const char *p = strstr(doc, marker);
  if (p == NULL) fail_msg("docs/sparse-tensor-extension.md has no %s", marker);
  p = strstr(p, "```text\n");
  assert_non_null(p);
  p += 8;
  const char *e = strstr(p, "```");
  assert_non_null(e);
  /* the block sits in a list item: its lines are indented by two spaces */
  char *out = calloc(1, (size_t)(e - p) + 1), *o = out;
  while (p < e) {
    if (p[0] == ' ' && p[1] == ' ') p += 2;
    while (p < e && *p != '\n') *o++ = *p++;
    if (p < e) *o++ = *p++;
  }
  if (o > out && o[-1] == ' ') o -= 2; /* the closing fence's indentation */
  *o = '\0';
  return out;
}

static void check_example(const char *doc, const char *name, struct ArrowSchema *f,
                          struct ArrowArray *a) {
  Dump d = {.n = 0};
  /* what quiver writes: the column after an IPC stream round trip */
  struct ArrowSchema f2;
  struct ArrowArray a2;
  ipc_roundtrip(f, a, &f2, &a2);
  dump_column(&d, &f2, &a2);
  char *want = doc_example(doc, name);
  if (strcmp(want, d.text) != 0)
    fail_msg("example %s differs from what quiver writes:\n--- doc\n%s--- quiver\n%s", name, want,
             d.text);
  free(want);
  /* and it reads back as a valid sparse column */
  QvSparseColumn col;
  QvError err = {0};
  assert_ok(qv_sparse_column_init(&col, &f2, &a2, NULL, &err));
  qv_sparse_column_reset(&col);
  f2.release(&f2);
}

static void test_doc_examples(void **state) {
  (void)state;
  size_t size;
  char *doc = (char *)qv_test_read_file(QV_SOURCE_DIR "/docs/sparse-tensor-extension.md", &size);
  assert_non_null(doc);
  doc = realloc(doc, size + 1);
  doc[size] = '\0';
  QvError err = {0};

  /* Example 1: three sparse vectors of size 5 (SPLADE-like) */
  static const float m1[15] = {0, 1.5f, 0, 0, 2, 0, 0, 0, 0, 0, -1, 0, 0, 0, 0};
  static const int64_t s1[2] = {3, 5};
  const char *n1[2] = {"doc", "term"};
  QvTensor t1;
  dense(&t1, QV_ARROW_FLOAT32, 2, s1, m1, sizeof m1, n1);
  QvSparseTensor csr;
  to_sparse(&t1, QV_SPARSE_CSR, QV_ARROW_INT32, NULL, &csr);
  /* from_dense gives an int32 indptr too: a view */
  struct ArrowSchema f;
  struct ArrowArray a;
  QvSparseUnstackOptions uo = {.struct_size = sizeof uo, .name = "splade"};
  assert_ok(qv_sparse_vector_unstack(&csr, &uo, &f, &a, &err));
  check_example(doc, "sparse-vector", &f, &a);
  qv_sparse_reset(&csr);

  /* Example 2: a CSR matrix as one quiver.sparse_tensor cell (int64
   * indices, as pyarrow writes them), and a null row */
  static const int64_t m2[6] = {0, 7, 0, 8, 0, 9};
  static const int64_t s2[2] = {2, 3};
  QvTensor t2;
  dense(&t2, QV_ARROW_INT64, 2, s2, m2, sizeof m2, NULL);
  to_sparse(&t2, QV_SPARSE_CSR, QV_ARROW_INT64, NULL, &csr);
  const QvSparseTensor *cells2[2] = {&csr, NULL};
  QvSparseBuildOptions bo = {.struct_size = sizeof bo, .name = "m"};
  assert_ok(qv_sparse_column_build(cells2, 2, &bo, &f, &a, &err));
  check_example(doc, "sparse-tensor-csr", &f, &a);
  qv_sparse_reset(&csr);

  /* Example 3: a 2x2x3 COO tensor, canonical, int32 coordinates */
  static const double m3[12] = {0, 0, 1.25, 0, 0, 0, -2, 0, 0, 0, 0, 4};
  static const int64_t s3[3] = {2, 2, 3};
  const char *n3[3] = {"x", "y", "z"};
  QvTensor t3;
  dense(&t3, QV_ARROW_FLOAT64, 3, s3, m3, sizeof m3, n3);
  QvSparseTensor coo;
  to_sparse(&t3, QV_SPARSE_COO, QV_ARROW_INT32, NULL, &coo);
  const QvSparseTensor *cells3[1] = {&coo};
  bo.name = "t";
  assert_ok(qv_sparse_column_build(cells3, 1, &bo, &f, &a, &err));
  check_example(doc, "sparse-tensor-coo", &f, &a);

  /* Example 4: the same tensor as CSF with axis order [2, 0, 1], int8
   * indices and indptr */
  QvSparseTensor csf;
  static const int32_t order[3] = {2, 0, 1};
  to_sparse(&t3, QV_SPARSE_CSF, QV_ARROW_INT8, order, &csf);
  assert_int_equal(csf.index_type, QV_ARROW_INT8);
  const QvSparseTensor *cells4[1] = {&csf};
  assert_ok(qv_sparse_column_build(cells4, 1, &bo, &f, &a, &err));
  check_example(doc, "sparse-tensor-csf", &f, &a);
  qv_sparse_reset(&csf);
  qv_sparse_reset(&coo);
  qv_tensor_reset(&t1);
  qv_tensor_reset(&t2);
  qv_tensor_reset(&t3);
  free(doc);
}

/* ---- every format and index type, through IPC and back */

static void check_cell_equal(const QvSparseTensor *got, const QvSparseTensor *want) {
  assert_int_equal(got->format, want->format);
  assert_int_equal(got->value_type, want->value_type);
  assert_int_equal(got->index_type, want->index_type);
  if (want->format != QV_SPARSE_COO) assert_int_equal(got->indptr_type, want->indptr_type);
  assert_int_equal(got->ndim, want->ndim);
  assert_int_equal(got->nnz, want->nnz);
  for (int32_t k = 0; k < want->ndim; k++) {
    assert_int_equal(got->shape[k], want->shape[k]);
    if (want->dim_names) assert_string_equal(got->dim_names[k], want->dim_names[k]);
    if (want->format == QV_SPARSE_CSF) assert_int_equal(got->axis_order[k], want->axis_order[k]);
  }
  if (want->dim_names == NULL) assert_null(got->dim_names);
  if (want->format == QV_SPARSE_COO) assert_int_equal(got->is_canonical, want->is_canonical);
  assert_true(qv_sparse_equal(got, want));
}

static void test_roundtrip_formats(void **state) {
  (void)state;
  QvError err = {0};
  /* three cells of different shapes, one null */
  static const int16_t a0[24] = {0, 1, 0, 0, 2, 0, 0, 0, 0, 3, 0, 4,
                                 0, 0, 0, 5, 0, 0, 6, 0, 0, 0, 0, 7};
  static const int16_t a1[6] = {0, 0, 9, 0, 0, 0};
  static const int64_t sh0[3] = {2, 3, 4}, sh1[3] = {1, 2, 3};
  static const int64_t sm0[2] = {4, 6}, sm1[2] = {2, 3};
  const char *names3[3] = {"a", "b", "c"}, *names2[2] = {"r", "c"};
  static const QvArrowType index_types[] = {QV_ARROW_INT8, QV_ARROW_UINT16, QV_ARROW_INT32,
                                            QV_ARROW_UINT64};
  static const int32_t order[3] = {1, 2, 0};
  for (int f = QV_SPARSE_COO; f <= QV_SPARSE_CSF; f++) {
    for (size_t it = 0; it < sizeof index_types / sizeof index_types[0]; it++) {
      bool matrix = f == QV_SPARSE_CSR || f == QV_SPARSE_CSC;
      QvTensor d0, d1;
      dense(&d0, QV_ARROW_INT16, matrix ? 2 : 3, matrix ? sm0 : sh0, a0, sizeof a0,
            matrix ? names2 : names3);
      dense(&d1, QV_ARROW_INT16, matrix ? 2 : 3, matrix ? sm1 : sh1, a1, sizeof a1,
            matrix ? names2 : names3);
      QvSparseTensor c[2];
      to_sparse(&d0, (QvSparseFormat)f, index_types[it], f == QV_SPARSE_CSF ? order : NULL, &c[0]);
      to_sparse(&d1, (QvSparseFormat)f, index_types[it], f == QV_SPARSE_CSF ? order : NULL, &c[1]);
      if (f == QV_SPARSE_COO && it % 2 == 1) c[1].is_canonical = false; /* kept per cell */
      const QvSparseTensor *cells[3] = {&c[0], NULL, &c[1]};
      struct ArrowSchema fs, fb;
      struct ArrowArray as, ab;
      QvSparseBuildOptions bo = {.struct_size = sizeof bo, .name = "col"};
      assert_ok(qv_sparse_column_build(cells, 3, &bo, &fs, &as, &err));
      ipc_roundtrip(&fs, &as, &fb, &ab); /* moves fs, as */
      QvSparseColumn col;
      assert_ok(qv_sparse_column_init(&col, &fb, &ab, NULL, &err));
      assert_int_equal(col.type.kind, QV_SPARSE_COLUMN_TENSOR);
      assert_int_equal(col.type.format, f);
      assert_int_equal(col.length, 3);
      assert_int_equal(col.null_count, 1);
      assert_true(qv_sparse_column_is_null(&col, 1));
      assert_int_equal(qv_sparse_column_cell_nnz(&col, 1), -1);
      assert_int_equal(qv_sparse_column_cell_nnz(&col, 0), c[0].nnz);
      QvSparseTensor got;
      assert_ok(qv_sparse_column_cell(&col, 0, &got, &err));
      check_cell_equal(&got, &c[0]);
      qv_sparse_reset(&got);
      assert_error(qv_sparse_column_cell(&col, 1, &got, &err), &err, QV_EINVAL, "row 1 is null");
      assert_ok(qv_sparse_column_cell(&col, 2, &got, &err));
      check_cell_equal(&got, &c[1]);
      /* the view outlives the column */
      qv_sparse_column_reset(&col);
      assert_true(qv_sparse_equal_dense(&got, &d1));
      qv_sparse_reset(&got);
      fb.release(&fb);
      qv_sparse_reset(&c[0]);
      qv_sparse_reset(&c[1]);
      qv_tensor_reset(&d0);
      qv_tensor_reset(&d1);
    }
  }
}

/* ---- sparse-vector column <-> CSR without a copy */

static void test_vector_zero_copy(void **state) {
  (void)state;
  QvError err = {0};
  enum { R = 50, C = 40 };
  static double m[R * C];
  for (int i = 0; i < R * C; i++) m[i] = (i * 7) % 11 == 0 ? (double)i : 0;
  static const int64_t sh[2] = {R, C};
  QvTensor d;
  dense(&d, QV_ARROW_FLOAT64, 2, sh, m, sizeof m, NULL);
  for (int large = 0; large < 2; large++) {
    QvSparseTensor csr;
    to_sparse(&d, QV_SPARSE_CSR, large ? QV_ARROW_INT64 : QV_ARROW_INT32, NULL, &csr);
    assert_int_equal(csr.indptr_type, large ? QV_ARROW_INT64 : QV_ARROW_INT32);
    /* a tensor made by a conversion has no owner: its buffers are copied */
    struct ArrowSchema f, fb;
    struct ArrowArray a, ab;
    assert_ok(qv_sparse_vector_unstack(&csr, NULL, &f, &a, &err));
    assert_ptr_not_equal(a.buffers[1], csr.indptr);
    ipc_roundtrip(&f, &a, &fb, &ab); /* moves f, a */
    QvSparseColumn col;
    struct ArrowArray ac;
    assert_ok(qv_array_share(&ab, &ac, &err));
    /* no nulls, offsets from 0: the rows are checked as one CSR matrix by
     * the vector scan (counted), not row by row */
    uint64_t scans = qvi_path_count(QV_PATH_SPARSE_COLUMN_SCAN);
    assert_ok(qv_sparse_column_init(&col, &fb, &ac, NULL, &err));
    assert_int_equal(qvi_path_count(QV_PATH_SPARSE_COLUMN_SCAN), scans + 1);
    assert_int_equal(col.type.kind, QV_SPARSE_COLUMN_VECTOR);
    assert_int_equal(col.type.size, C);
    assert_int_equal(col.type.large_lists, large);
    /* stack: the list offsets are the indptr, the struct children the
     * indices and values (same addresses as the storage) */
    QvSparseTensor st;
    assert_ok(qv_sparse_vector_stack(&col, NULL, &st, &err));
    struct ArrowArray *list = &ab;
    assert_ptr_equal(st.indptr, (const uint8_t *)list->buffers[1]);
    assert_ptr_equal(st.indices, (const uint8_t *)list->children[0]->children[0]->buffers[1]);
    assert_ptr_equal(st.values, (const uint8_t *)list->children[0]->children[1]->buffers[1]);
    assert_true(qv_sparse_equal_dense(&st, &d));
    /* unstack of a tensor with an owner: views of its buffers */
    struct ArrowSchema f2;
    struct ArrowArray a2;
    assert_ok(qv_sparse_vector_unstack(&st, NULL, &f2, &a2, &err));
    assert_ptr_equal(a2.buffers[1], st.indptr);
    assert_ptr_equal(a2.children[0]->children[0]->buffers[1], st.indices);
    assert_ptr_equal(a2.children[0]->children[1]->buffers[1], st.values);
    a2.release(&a2);
    f2.release(&f2);
    /* a row: a 1-D canonical COO view */
    QvSparseTensor row;
    uint64_t checked = qvi_path_count(QV_PATH_SPARSE_CELL_CHECKED);
    assert_ok(qv_sparse_column_cell(&col, 11, &row, &err));
    /* the column checked the row already: the view is not scanned again */
    assert_int_equal(qvi_path_count(QV_PATH_SPARSE_CELL_CHECKED), checked + 1);
    assert_int_equal(row.format, QV_SPARSE_COO);
    assert_true(row.is_canonical);
    assert_int_equal(row.shape[0], C);
    int64_t start = qv_index_load(st.indptr, st.indptr_type, 11);
    assert_ptr_equal(row.values, st.values + start * 8);
    qv_sparse_reset(&row);
    qv_sparse_reset(&st);
    qv_sparse_column_reset(&col);
    /* a slice (offset 7): the indptr is rebased (a copy), the rest are views */
    ab.offset = 7;
    ab.length = 20;
    scans = qvi_path_count(QV_PATH_SPARSE_COLUMN_SCAN);
    assert_ok(qv_sparse_column_init(&col, &fb, &ab, NULL, &err));
    /* the first offset is not 0: checked row by row */
    assert_int_equal(qvi_path_count(QV_PATH_SPARSE_COLUMN_SCAN), scans);
    assert_ok(qv_sparse_vector_stack(&col, NULL, &st, &err));
    int64_t first = qv_index_load(csr.indptr, csr.indptr_type, 7);
    assert_true(first > 0);
    assert_int_equal(qv_index_load(st.indptr, st.indptr_type, 0), 0);
    assert_int_equal(st.shape[0], 20);
    QvSparseStackOptions tiny = {.struct_size = sizeof tiny, .max_output_size = 8};
    QvSparseTensor st2;
    assert_error(qv_sparse_vector_stack(&col, &tiny, &st2, &err), &err, QV_ELIMIT,
                 "over the limit of 8");
    QvSparseTensor whole;
    QvTensor sliced;
    QvTensorDesc sd = {.type = QV_ARROW_FLOAT64, .ndim = 2, .shape = (int64_t[]){20, C},
                       .data = m + 7 * C, .data_size = 20 * C * 8};
    assert_ok(qv_tensor_init(&sliced, &sd, &err));
    assert_true(qv_sparse_equal_dense(&st, &sliced));
    (void)whole;
    qv_tensor_reset(&sliced);
    qv_sparse_reset(&st);
    qv_sparse_column_reset(&col);
    assert_null(ab.release); /* moved into the column */
    fb.release(&fb);
    qv_sparse_reset(&csr);
  }
  qv_tensor_reset(&d);
}

/* A vector column built from 1-D cells of any format, and its C Data
 * Interface export: the field carries the extension, a copy of it and a
 * share of the array make the same column. */
static void test_vector_build_and_c_data(void **state) {
  (void)state;
  QvError err = {0};
  static const float v0[6] = {0, 3, 0, 0, 1, 0}, v1[6] = {2, 0, 0, 0, 0, 5};
  static const int64_t sh[1] = {6};
  QvTensor d0, d1;
  dense(&d0, QV_ARROW_FLOAT32, 1, sh, v0, sizeof v0, NULL);
  dense(&d1, QV_ARROW_FLOAT32, 1, sh, v1, sizeof v1, NULL);
  QvSparseTensor c0, c1;
  to_sparse(&d0, QV_SPARSE_CSF, QV_ARROW_INT16, NULL, &c0);
  to_sparse(&d1, QV_SPARSE_COO, QV_ARROW_INT16, NULL, &c1);
  const QvSparseTensor *cells[3] = {&c0, &c1, NULL};
  const char *names[2] = {"cell", "gene"};
  QvSparseBuildOptions bo = {.struct_size = sizeof bo, .kind = QV_SPARSE_COLUMN_VECTOR,
                             .name = "expr", .dim_names = names, .n_dim_names = 2};
  struct ArrowSchema f, fc;
  struct ArrowArray a, ac;
  assert_ok(qv_sparse_column_build(cells, 3, &bo, &f, &a, &err));
  const char *meta;
  int32_t len;
  assert_true(qv_arrow_metadata_get(f.metadata, "ARROW:extension:name", &meta, &len));
  assert_int_equal(len, (int32_t)strlen(QV_SPARSE_VECTOR_EXTENSION));
  assert_true(qv_arrow_metadata_get(f.metadata, "ARROW:extension:metadata", &meta, &len));
  assert_memory_equal(meta, "{\"size\":6,\"dim_names\":[\"cell\",\"gene\"]}", (size_t)len);
  assert_ok(qv_arrow_schema_copy(&f, &fc, &err));
  assert_ok(qv_array_share(&a, &ac, &err));
  QvSparseColumn col;
  assert_ok(qv_sparse_column_init(&col, &fc, &ac, NULL, &err));
  assert_int_equal(col.null_count, 1);
  assert_string_equal(col.type.dim_names[1], "gene");
  QvSparseTensor row;
  assert_ok(qv_sparse_column_cell(&col, 0, &row, &err));
  assert_true(qv_sparse_equal_dense(&row, &d0));
  assert_string_equal(row.dim_names[0], "gene");
  qv_sparse_reset(&row);
  assert_ok(qv_sparse_column_cell(&col, 1, &row, &err));
  assert_true(qv_sparse_equal_dense(&row, &d1));
  qv_sparse_reset(&row);
  QvSparseTensor st;
  assert_error(qv_sparse_vector_stack(&col, NULL, &st, &err), &err, QV_EINVAL,
               "row 2 is null: a CSR matrix has no null rows");
  qv_sparse_column_reset(&col);
  /* a cell of another size */
  static const int64_t sh7[1] = {7};
  static const float v7[7] = {1};
  QvTensor d7;
  dense(&d7, QV_ARROW_FLOAT32, 1, sh7, v7, sizeof v7, NULL);
  QvSparseTensor c7;
  to_sparse(&d7, QV_SPARSE_COO, QV_ARROW_INT16, NULL, &c7);
  const QvSparseTensor *bad[2] = {&c0, &c7};
  struct ArrowSchema fx;
  struct ArrowArray ax;
  assert_error(qv_sparse_column_build(bad, 2, &bo, &fx, &ax, &err), &err, QV_EINVAL,
               "cell 1 is a vector of 7 float32");
  qv_sparse_reset(&c7);
  qv_tensor_reset(&d7);
  fc.release(&fc);
  a.release(&a);
  f.release(&f);
  qv_sparse_reset(&c0);
  qv_sparse_reset(&c1);
  qv_tensor_reset(&d0);
  qv_tensor_reset(&d1);
}

/* ---- bad input: each rule, by editing the buffers of a good column */

/* A column (copied by the builder, so its buffers are ours to edit). */
static void build(const QvSparseTensor *const *cells, int64_t n, QvSparseColumnKind kind,
                  struct ArrowSchema *f, struct ArrowArray *a) {
  QvError err = {0};
  QvSparseBuildOptions bo = {.struct_size = sizeof bo, .kind = kind, .name = "x"};
  assert_ok(qv_sparse_column_build(cells, n, &bo, f, a, &err));
}

static void init_fails(struct ArrowSchema *f, struct ArrowArray *a, QvStatus code,
                       const char *substr) {
  QvSparseColumn col;
  QvError err = {0};
  assert_error(qv_sparse_column_init(&col, f, a, NULL, &err), &err, code, substr);
  assert_non_null(a->release); /* given back */
  assert_null(col.private_data);
}

static void *buf(const struct ArrowArray *a, int k) { return (void *)a->buffers[k]; }

/* A metadata blob of the extension name and JSON. */
static char *meta_blob(const char *name, const char *json) {
  size_t n1 = strlen(name), n2 = strlen(json), size = 4 + 2 * (4 + 24) + n1 + n2 + 8;
  char *b = malloc(size), *p = b;
  int32_t x = 2;
  memcpy(p, &x, 4), p += 4;
  const char *kv[4] = {"ARROW:extension:name", name, "ARROW:extension:metadata", json};
  for (int i = 0; i < 4; i++) {
    x = (int32_t)strlen(kv[i]);
    memcpy(p, &x, 4), p += 4;
    memcpy(p, kv[i], (size_t)x), p += x;
  }
  return b;
}

static void with_meta(struct ArrowSchema *f, const char *name, const char *json, QvStatus code,
                      const char *substr) {
  QvError err = {0};
  struct ArrowSchema g;
  assert_ok(qv_arrow_schema_copy(f, &g, &err));
  char *m = meta_blob(name, json);
  assert_ok(qv_arrow_schema_set_metadata(&g, m, &err));
  free(m);
  QvSparseColumnType t;
  assert_error(qv_sparse_column_type_from_field(&g, &t, &err), &err, code, substr);
  qv_sparse_column_type_reset(&t);
  g.release(&g);
}

static void test_bad_input(void **state) {
  (void)state;
  QvError err = {0};
  static const int32_t m[12] = {0, 1, 0, 2, 0, 0, 3, 0, 4, 0, 0, 5};
  static const int64_t sh[2] = {3, 4}, sh1[1] = {4};
  QvTensor d, row;
  dense(&d, QV_ARROW_INT32, 2, sh, m, sizeof m, NULL);
  dense(&row, QV_ARROW_INT32, 1, sh1, m, 16, NULL);
  QvSparseTensor csr, coo, r1;
  to_sparse(&d, QV_SPARSE_CSR, QV_ARROW_INT32, NULL, &csr);
  to_sparse(&d, QV_SPARSE_COO, QV_ARROW_INT32, NULL, &coo);
  to_sparse(&row, QV_SPARSE_COO, QV_ARROW_INT32, NULL, &r1);
  struct ArrowSchema f;
  struct ArrowArray a;

  /* vector: an index outside [0, size) */
  const QvSparseTensor *rows[3] = {&r1, &r1, &r1};
  build(rows, 3, QV_SPARSE_COLUMN_VECTOR, &f, &a);
  int32_t *idx = buf(a.children[0]->children[0], 1);
  int32_t *off = buf(&a, 1);
  assert_int_equal(off[1], 2); /* row 0 holds indices 1, 3 */
  idx[3] = 4;
  uint64_t scans = qvi_path_count(QV_PATH_SPARSE_COLUMN_SCAN);
  /* the vector scan refuses (it names nothing), the row loop names */
  init_fails(&f, &a, QV_EINVAL, "field 'x' (quiver.sparse_vector): row 1 element 1: index 4 is "
                                "outside [0, 4)");
  assert_int_equal(qvi_path_count(QV_PATH_SPARSE_COLUMN_SCAN), scans);
  idx[3] = -1;
  init_fails(&f, &a, QV_EINVAL, "row 1 element 1: index -1 is outside [0, 4)");
  /* unsorted, then duplicate */
  idx[3] = 0;
  init_fails(&f, &a, QV_EINVAL, "row 1 element 1: index 0 after 1 (the indices of a row "
                                "increase strictly)");
  idx[3] = 1;
  init_fails(&f, &a, QV_EINVAL, "row 1 element 1: index 1 after 1");
  idx[3] = 3;
  /* lying offsets: past the entries, and decreasing */
  off[3] = 7;
  init_fails(&f, &a, QV_EINVAL, "");
  off[3] = 6;
  off[1] = 5;
  init_fails(&f, &a, QV_EINVAL, "");
  off[1] = 2;
  /* nulls inside the storage children are not rows */
  {
    QvSparseColumn ok;
    struct ArrowSchema fc;
    struct ArrowArray ac;
    assert_ok(qv_arrow_schema_copy(&f, &fc, &err));
    assert_ok(qv_array_share(&a, &ac, &err));
    assert_ok(qv_sparse_column_init(&ok, &fc, &ac, NULL, &err));
    qv_sparse_column_reset(&ok);
    fc.release(&fc);
  }
  /* metadata that does not match the storage */
  with_meta(&f, QV_SPARSE_VECTOR_EXTENSION, "{\"size\": -3}", QV_EINVAL, "\"size\" = -3 is negative");
  with_meta(&f, QV_SPARSE_VECTOR_EXTENSION, "{}", QV_EINVAL, "\"size\" is missing");
  with_meta(&f, QV_SPARSE_VECTOR_EXTENSION, "{\"size\": 4, \"dim_names\": [\"a\"]}", QV_EINVAL,
            "\"dim_names\" has 1 elements, not 2");
  with_meta(&f, QV_SPARSE_VECTOR_EXTENSION, "{\"size\": 4", QV_EINVAL, "malformed JSON at line 1");
  with_meta(&f, QV_SPARSE_TENSOR_EXTENSION, "{\"format\": \"csr\"}", QV_EINVAL,
            "is not a Struct whose first child is shape");
  a.release(&a);
  f.release(&f);

  /* CSR cells */
  const QvSparseTensor *cells[2] = {&csr, &csr};
  build(cells, 2, QV_SPARSE_COLUMN_TENSOR, &f, &a);
  int32_t *ind = buf(a.children[2]->children[0], 1);
  int32_t *ptr = buf(a.children[1]->children[0], 1);
  int64_t *shape = buf(a.children[0]->children[0], 1);
  ind[csr.nnz + 1] = 9; /* row 1, indices position 1 */
  init_fails(&f, &a, QV_EINVAL, "field 'x' (quiver.sparse_tensor): row 1:");
  ind[csr.nnz + 1] = 3;
  ind[csr.nnz + 0] = 3; /* row 0 of the matrix: 3, 3 */
  init_fails(&f, &a, QV_EINVAL, "row 1:");
  ind[csr.nnz + 0] = 1;
  ptr[4 + 2] = 9; /* row 1's indptr[2] > nnz */
  init_fails(&f, &a, QV_EINVAL, "row 1:");
  ptr[4 + 2] = 3;
  shape[2] = INT64_MAX / 2;
  shape[3] = 5;
  init_fails(&f, &a, QV_EINVAL, "row 1: the product of the shape overflows int64");
  shape[2] = INT64_MAX / 8;
  shape[3] = 4;
  init_fails(&f, &a, QV_EINVAL, "row 1: indptr has 4 entries, rows 1152921504606846975 + 1");
  shape[2] = -3;
  init_fails(&f, &a, QV_EINVAL, "row 1: shape[0] = -3 is negative");
  shape[2] = 3;
  /* nnz larger than the storage: the values list claims more than indices */
  int32_t *voff = buf(a.children[3], 1);
  voff[2] += 0; /* unchanged: sanity of the path below */
  {
    QvSparseColumn ok;
    struct ArrowSchema fc;
    struct ArrowArray ac;
    assert_ok(qv_arrow_schema_copy(&f, &fc, &err));
    assert_ok(qv_array_share(&a, &ac, &err));
    assert_ok(qv_sparse_column_init(&ok, &fc, &ac, NULL, &err));
    qv_sparse_column_reset(&ok);
    fc.release(&fc);
  }
  int32_t *ioff = buf(a.children[2], 1);
  ioff[1] -= 1;
  init_fails(&f, &a, QV_EINVAL, "row 0: indices has 4 entries, values 5");
  ioff[1] += 1;
  with_meta(&f, QV_SPARSE_TENSOR_EXTENSION, "{\"format\": \"coo\"}", QV_EINVAL,
            "storage child 1 is 'indptr', format coo needs 'canonical' there");
  with_meta(&f, QV_SPARSE_TENSOR_EXTENSION, "{\"format\": \"bsr\"}", QV_EINVAL,
            "\"format\" is \"bsr\", not");
  with_meta(&f, QV_SPARSE_TENSOR_EXTENSION, "{\"format\": \"csr\", \"dim_names\": [1, 2]}",
            QV_EINVAL, "dim_names[0] is not a string");
  a.release(&a);
  f.release(&f);

  /* COO: duplicates and disorder in a canonical cell; a coordinate out of
   * the shape */
  const QvSparseTensor *cc[1] = {&coo};
  build(cc, 1, QV_SPARSE_COLUMN_TENSOR, &f, &a);
  int32_t *co = buf(a.children[2]->children[0]->children[0], 1);
  /* entries (0,1) (0,3) (1,2) ...: make entry 1 equal entry 0 */
  co[3] = 1;
  init_fails(&f, &a, QV_EINVAL, "row 0:");
  co[3] = 0;
  init_fails(&f, &a, QV_EINVAL, "row 0:");
  co[3] = 4;
  init_fails(&f, &a, QV_EINVAL, "row 0:");
  co[3] = 3;
  /* not canonical: duplicates allowed */
  uint8_t *canon = buf(a.children[1], 1);
  canon[0] = 0;
  co[3] = 1;
  {
    QvSparseColumn ok;
    struct ArrowSchema fc;
    struct ArrowArray ac;
    assert_ok(qv_arrow_schema_copy(&f, &fc, &err));
    assert_ok(qv_array_share(&a, &ac, &err));
    assert_ok(qv_sparse_column_init(&ok, &fc, &ac, NULL, &err));
    QvSparseTensor cell;
    assert_ok(qv_sparse_column_cell(&ok, 0, &cell, &err));
    assert_false(cell.is_canonical);
    qv_sparse_reset(&cell);
    qv_sparse_column_reset(&ok);
    fc.release(&fc);
  }
  a.release(&a);
  f.release(&f);

  qv_sparse_reset(&csr);
  qv_sparse_reset(&coo);
  qv_sparse_reset(&r1);
  qv_tensor_reset(&d);
  qv_tensor_reset(&row);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_doc_examples),
      cmocka_unit_test(test_roundtrip_formats),
      cmocka_unit_test(test_vector_zero_copy),
      cmocka_unit_test(test_vector_build_and_c_data),
      cmocka_unit_test(test_bad_input),
  };
  return qv_test_run(tests, NULL, NULL);
}
