/* quiver migrate (quiver/migrate.h): Tensor / SparseTensor messages -> one
 * table and back. Every Arrow C++ file of the shared test data round trips
 * (values, type, shape, dim names, sparse format, index types, canonical
 * flag, axis order); the zero-copy claim is proven by the stats counter (a
 * single message's body is the column's value buffer: nothing gathered);
 * column-major becomes `permutation`, a layout no permutation describes is
 * copied with a notice; groups, --split names, limits and bad input. */
#include "test_util.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "quiver/io.h"
#include "quiver/migrate.h"
#include "quiver/recordbatch_ipc.h"
#include "quiver/sparse.h"
#include "quiver/sparse_column.h"
#include "quiver/tensor_column.h"
#include "util/cpu.h"
#include "util/load.h"
#include "util/options.h"

#define assert_ok(expr)                                                       \
  do {                                                                        \
    QvStatus st_ = (expr);                                                    \
    if (st_ != QV_OK) fail_msg("%s: status %d: %s", #expr, st_, err.message); \
  } while (0)

static void assert_error(QvStatus st, const QvError *err, QvStatus code, const char *substr) {
  if (st != code) fail_msg("status %d, not %d: %s", st, code, err->message);
  if (strstr(err->message, substr) == NULL)
    fail_msg("message '%s' lacks '%s'", err->message, substr);
}

/* ---- building inputs */

typedef struct Bytes {
  uint8_t *data;
  size_t size;
} Bytes;

static void bytes_free(Bytes *b) {
  qv_free(b->data);
  b->data = NULL;
  b->size = 0;
}

static void append(Bytes *b, const uint8_t *p, size_t n) {
  uint8_t *nb = qv_aligned_alloc(b->size + n + 1);
  assert_non_null(nb);
  if (b->size) memcpy(nb, b->data, b->size);
  memcpy(nb + b->size, p, n);
  qv_free(b->data);
  b->data = nb;
  b->size += n;
}

static void take(QvSink *sink, Bytes *out) {
  QvError err = {0};
  uint8_t *p;
  size_t n;
  assert_ok(qv_sink_memory_take(sink, &p, &n, &err));
  append(out, p, n);
  qv_free(p);
}

static void add_tensor(Bytes *b, const QvTensor *t) {
  QvError err = {0};
  QvSink *s;
  assert_ok(qv_sink_new_memory(&s, &err));
  assert_ok(qv_tensor_write(t, s, NULL, &err));
  take(s, b);
  qv_sink_free(s);
}

static void add_sparse(Bytes *b, const QvSparseTensor *t) {
  QvError err = {0};
  QvSink *s;
  assert_ok(qv_sink_new_memory(&s, &err));
  assert_ok(qv_sparse_write(t, s, NULL, &err));
  take(s, b);
  qv_sink_free(s);
}

static void dense(QvTensor *t, QvArrowType type, int32_t ndim, const int64_t *shape,
                  const int64_t *strides, const void *data, size_t size,
                  const char *const *names) {
  QvError err = {0};
  QvTensorDesc d = {.type = type, .ndim = ndim, .shape = shape, .strides = strides,
                    .dim_names = names, .data = data, .data_size = (int64_t)size};
  assert_ok(qv_tensor_init(t, &d, &err));
}

static const double v12[12] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};

/* Every input and table of these tests, saved as a seed of fuzz_migrate
 * when QV_MIGRATE_SEEDS names a directory. */
static void save_seed(const Bytes *b) {
  static int n;
  const char *dir = getenv("QV_MIGRATE_SEEDS");
  if (dir == NULL || b->size == 0) return;
  char path[512];
  snprintf(path, sizeof path, "%s/seed-%02d", dir, n++);
  FILE *f = fopen(path, "wb");
  assert_non_null(f);
  assert_int_equal(fwrite(b->data, 1, b->size, f), b->size);
  fclose(f);
}

/* ---- running */

static QvStatus migrate(const Bytes *in, const QvMigrateOptions *o, Bytes *out,
                        QvMigrateStats *stats, QvError *err) {
  QvSource *src;
  QvSink *sink;
  save_seed(in);
  QvStatus st = qv_source_new_memory(&src, in->data, in->size, NULL, err);
  if (st) return st;
  if ((st = qv_sink_new_memory(&sink, err)) == QV_OK) {
    st = qv_migrate(src, sink, o, stats, err);
    if (st == QV_OK) take(sink, out);
    qv_sink_free(sink);
  }
  qv_source_free(src);
  return st;
}

/* From a path: the reader maps the file, so the messages have an owner and
 * their bodies can become column buffers. */
static QvStatus migrate_path(const char *path, Bytes *out, QvMigrateStats *stats,
                             QvError *err) {
  QvSource *src;
  QvSink *sink;
  QvStatus st = qv_source_new_path(&src, path, err);
  if (st) return st;
  if ((st = qv_sink_new_memory(&sink, err)) == QV_OK) {
    st = qv_migrate(src, sink, NULL, stats, err);
    if (st == QV_OK) take(sink, out);
    qv_sink_free(sink);
  }
  qv_source_free(src);
  return st;
}

static QvStatus back(const Bytes *in, Bytes *out, QvMigrateStats *stats, int64_t limit,
                     QvError *err) {
  QvSource *src;
  QvSink *sink;
  QvMigrateOptions o = {.struct_size = sizeof o, .max_output_size = limit};
  save_seed(in);
  QvStatus st = qv_source_new_memory(&src, in->data, in->size, NULL, err);
  if (st) return st;
  if ((st = qv_sink_new_memory(&sink, err)) == QV_OK) {
    st = qv_migrate_to_messages(src, sink, &o, stats, err);
    if (st == QV_OK) take(sink, out);
    qv_sink_free(sink);
  }
  qv_source_free(src);
  return st;
}

/* The table's one field (copied out: the caller releases it). */
static void table_field(const Bytes *table, struct ArrowSchema *field, int64_t *rows) {
  QvError err = {0};
  QvSource *src;
  assert_ok(qv_source_new_memory(&src, table->data, table->size, NULL, &err));
  struct ArrowArrayStream s;
  assert_ok(qv_rb_stream_reader_new(&s, src, NULL, &err));
  qv_source_free(src);
  struct ArrowSchema schema;
  assert_ok(qv_rb_stream_get_schema(&s, &schema, &err));
  assert_int_equal(schema.n_children, 1);
  assert_ok(qv_arrow_schema_copy(schema.children[0], field, &err));
  schema.release(&schema);
  *rows = 0;
  for (;;) {
    struct ArrowArray b;
    QvStatus st = qv_rb_stream_get_next(&s, &b, &err);
    if (st == QV_EOS) break;
    assert_ok(st);
    *rows += b.length;
    b.release(&b);
  }
  s.release(&s);
}

static const char *ext_name(const struct ArrowSchema *f, char *buf, size_t size) {
  const char *v;
  int32_t len;
  buf[0] = 0;
  if (qv_arrow_metadata_get(f->metadata, "ARROW:extension:name", &v, &len))
    snprintf(buf, size, "%.*s", (int)len, v);
  return buf;
}

static const char *ext_meta(const struct ArrowSchema *f, char *buf, size_t size) {
  const char *v;
  int32_t len;
  buf[0] = 0;
  if (qv_arrow_metadata_get(f->metadata, "ARROW:extension:metadata", &v, &len))
    snprintf(buf, size, "%.*s", (int)len, v);
  return buf;
}

/* ---- comparing messages */

static bool names_equal(const char *const *a, const char *const *b, int32_t n) {
  if (a == NULL || b == NULL) return a == b;
  for (int32_t i = 0; i < n; i++)
    if (strcmp(a[i], b[i]) != 0) return false;
  return true;
}

static void assert_same_messages(const Bytes *a, const Bytes *b, const char *what) {
  QvError err = {0};
  QvIpcReader *ra, *rb;
  assert_ok(qv_test_reader_memory(&ra, a->data, a->size, &err));
  assert_ok(qv_test_reader_memory(&rb, b->data, b->size, &err));
  for (int64_t i = 0;; i++) {
    QvIpcMessage ma, mb;
    QvStatus sa = qv_ipc_reader_next(ra, &ma, &err);
    QvStatus sb = qv_ipc_reader_next(rb, &mb, &err);
    if (sa == QV_EOS || sb == QV_EOS) {
      if (sa != sb) fail_msg("%s: message counts differ at %lld", what, (long long)i);
      break;
    }
    assert_ok(sa);
    assert_ok(sb);
    if (ma.message.header_type != mb.message.header_type)
      fail_msg("%s: message %lld: kinds differ", what, (long long)i);
    if (ma.message.header_type == QV_HEADER_TENSOR) {
      QvTensor x, y;
      assert_ok(qv_tensor_from_message(&ma, &x, &err));
      assert_ok(qv_tensor_from_message(&mb, &y, &err));
      if (x.type != y.type || x.ndim != y.ndim || !qv_tensor_equal(&x, &y, true) ||
          !names_equal(x.dim_names, y.dim_names, x.ndim))
        fail_msg("%s: tensor message %lld differs", what, (long long)i);
      for (int32_t k = 0; k < x.ndim; k++) assert_int_equal(x.shape[k], y.shape[k]);
      qv_tensor_reset(&x);
      qv_tensor_reset(&y);
    } else {
      QvSparseTensor x, y;
      assert_ok(qv_sparse_from_message(&ma, &x, NULL, &err));
      assert_ok(qv_sparse_from_message(&mb, &y, NULL, &err));
      bool same = x.format == y.format && x.value_type == y.value_type &&
                  x.index_type == y.index_type && x.ndim == y.ndim && x.nnz == y.nnz &&
                  names_equal(x.dim_names, y.dim_names, x.ndim) && qv_sparse_equal(&x, &y);
      if (same && x.format != QV_SPARSE_COO) same = x.indptr_type == y.indptr_type;
      if (same && x.format == QV_SPARSE_COO) same = x.is_canonical == y.is_canonical;
      if (same && x.format == QV_SPARSE_CSF)
        for (int32_t k = 0; k < x.ndim; k++) same = same && x.axis_order[k] == y.axis_order[k];
      for (int32_t k = 0; same && k < x.ndim; k++) same = x.shape[k] == y.shape[k];
      if (!same) fail_msg("%s: sparse message %lld differs", what, (long long)i);
      qv_sparse_reset(&x);
      qv_sparse_reset(&y);
    }
    qv_ipc_message_reset(&ma);
    qv_ipc_message_reset(&mb);
  }
  qv_ipc_reader_free(ra);
  qv_ipc_reader_free(rb);
}

/* ---- tests */

/* Every tensor and sparse tensor file Arrow C++ wrote goes to a table and
 * back unchanged; one message per file, so nothing is gathered: the body is
 * the column's buffer. */
static void test_arrow_cpp_round_trip(void **state) {
  (void)state;
  if (!qv_test_have_shared()) skip();
  if (QV_HOST_BIG_ENDIAN) {
    /* as test_sparse_ipc: Tensor/SparseTensor messages carry no byte order,
     * bodies are read in the host's, and these files are little-endian */
    print_message("skipped: little-endian tensor files on a big-endian host\n");
    skip();
  }
  char dir[4096];
  snprintf(dir, sizeof dir, "%s", qv_test_shared_path(""));
  dir[strlen(dir) - 1] = 0; /* the trailing slash */
  DIR *d = opendir(dir);
  if (d == NULL) skip();
  struct dirent *e;
  int files = 0;
  while ((e = readdir(d)) != NULL) {
    size_t len = strlen(e->d_name);
    if (len < 7 || strcmp(e->d_name + len - 6, ".arrow") != 0) continue;
    if (strncmp(e->d_name, "tensor_", 7) != 0 && strncmp(e->d_name, "sparse_", 7) != 0) continue;
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    Bytes in = {0}, table = {0}, out = {0};
    in.data = qv_test_read_file(path, &in.size);
    assert_non_null(in.data);
    Bytes aligned = {0};
    append(&aligned, in.data, in.size);
    free(in.data);
    QvError err = {0};
    QvMigrateStats st1, st2;
    QvStatus st = migrate_path(path, &table, &st1, &err);
    if (st) fail_msg("%s: %s", e->d_name, err.message);
    assert_int_equal(st1.messages, 1);
    assert_int_equal(st1.tables, 1);
    /* CSF levels are concatenated and column-major COO coordinates made
     * row-major by the column builder (docs/sparse-tensor-extension.md):
     * those copy; every other body is the column's buffers */
    bool copies = strstr(e->d_name, "_csf_") != NULL || strstr(e->d_name, "colmajor_indices");
    if (!copies && st1.gathered_bytes != 0)
      fail_msg("%s: %lld bytes gathered", e->d_name, (long long)st1.gathered_bytes);
    st = back(&table, &out, &st2, 0, &err);
    if (st) fail_msg("%s back: %s", e->d_name, err.message);
    assert_int_equal(st2.messages, 1);
    assert_same_messages(&aligned, &out, e->d_name);
    bytes_free(&aligned);
    bytes_free(&table);
    bytes_free(&out);
    files++;
  }
  closedir(d);
  assert_true(files >= 150); /* 166 in the shared data of August 2026 */
}

/* Column-major: `permutation`, no copy, and back column-major. */
static void test_column_major_is_a_permutation(void **state) {
  (void)state;
  QvError err = {0};
  QvTensor t;
  const char *names[2] = {"rows", "cols"};
  dense(&t, QV_ARROW_FLOAT64, 2, (int64_t[]){3, 4}, (int64_t[]){8, 24}, v12, sizeof v12, names);
  Bytes in = {0}, table = {0}, out = {0};
  add_tensor(&in, &t);
  QvMigrateStats stats;
  assert_ok(migrate(&in, NULL, &table, &stats, &err));
  assert_int_equal(stats.gathered_bytes, 0);
  assert_int_equal(stats.relaid, 0);
  struct ArrowSchema f;
  int64_t rows;
  table_field(&table, &f, &rows);
  assert_int_equal(rows, 1);
  char buf[256];
  assert_string_equal(ext_name(&f, buf, sizeof buf), QV_FIXED_SHAPE_TENSOR);
  ext_meta(&f, buf, sizeof buf);
  if (strstr(buf, "\"permutation\":[1,0]") == NULL || strstr(buf, "\"shape\":[4,3]") == NULL ||
      strstr(buf, "\"dim_names\":[\"cols\",\"rows\"]") == NULL)
    fail_msg("metadata %s", buf);
  f.release(&f);
  assert_ok(back(&table, &out, NULL, 0, &err));
  assert_same_messages(&in, &out, "column-major");
  QvTensor r;
  assert_ok(qv_test_tensor_read_memory(out.data, out.size, NULL, 0, &r, &err));
  assert_true(qv_tensor_is_column_major(&r) && !qv_tensor_is_row_major(&r));
  qv_tensor_reset(&r);
  qv_tensor_reset(&t);
  bytes_free(&in);
  bytes_free(&table);
  bytes_free(&out);
}

typedef struct Notices {
  int n;
  char last[512];
} Notices;

static void on_notice(void *ctx, const char *m) {
  Notices *n = ctx;
  n->n++;
  snprintf(n->last, sizeof n->last, "%s", m);
}

/* Rewrites the first strides [a, b] found in the message's metadata. */
static void patch_strides(Bytes *b, int64_t a0, int64_t b0, int64_t a1, int64_t b1) {
  /* flatbuffer integers are little-endian on every host */
  uint8_t want[16], now[16];
  const int64_t wv[2] = {a0, b0}, nv[2] = {a1, b1};
  for (int k = 0; k < 16; k++) {
    want[k] = (uint8_t)((uint64_t)wv[k / 8] >> (8 * (k % 8)));
    now[k] = (uint8_t)((uint64_t)nv[k / 8] >> (8 * (k % 8)));
  }
  for (size_t i = 0; i + 16 <= b->size && i < 512; i += 8) {
    if (memcmp(b->data + i, want, 16) == 0) {
      memcpy(b->data + i, now, 16);
      return;
    }
  }
  fail_msg("strides not found");
}

/* Overlapping strides (no permutation of a row-major layout): copied
 * row-major, said by the notice, equal in value after the round trip. */
static void test_other_layout_is_copied(void **state) {
  (void)state;
  QvError err = {0};
  QvTensor t;
  dense(&t, QV_ARROW_FLOAT64, 2, (int64_t[]){3, 4}, NULL, v12, sizeof v12, NULL);
  Bytes in = {0}, table = {0}, out = {0};
  add_tensor(&in, &t);
  qv_tensor_reset(&t);
  patch_strides(&in, 32, 8, 24, 8);
  QvTensor odd;
  assert_ok(qv_test_tensor_read_memory(in.data, in.size, NULL, 0, &odd, &err));
  assert_int_equal(odd.strides[0], 24);
  Notices n = {0};
  QvMigrateOptions o = {.struct_size = sizeof o, .notice = on_notice, .notice_ctx = &n,
                        .threads = 2};
  QvMigrateStats stats;
  assert_ok(migrate(&in, &o, &table, &stats, &err));
  assert_int_equal(stats.relaid, 1);
  assert_int_equal(stats.gathered_bytes, 96);
  assert_int_equal(n.n, 1);
  if (strstr(n.last, "message 0") == NULL || strstr(n.last, "copied row-major") == NULL)
    fail_msg("notice '%s'", n.last);
  assert_ok(back(&table, &out, NULL, 0, &err));
  QvTensor r;
  assert_ok(qv_test_tensor_read_memory(out.data, out.size, NULL, 0, &r, &err));
  assert_true(qv_tensor_is_row_major(&r));
  assert_true(qv_tensor_equal(&r, &odd, true));
  qv_tensor_reset(&r);
  qv_tensor_reset(&odd);
  bytes_free(&in);
  bytes_free(&table);
  bytes_free(&out);
}

/* A large relayout copy runs on threads (counter), and the table is the
 * same bytes for any count. */
static void test_threads_same_bytes(void **state) {
  (void)state;
  QvError err = {0};
  int64_t shape[2] = {1024, 1025};
  double *v = malloc(sizeof(double) * 1024 * 1025);
  assert_non_null(v);
  for (int64_t i = 0; i < 1024 * 1025; i++) v[i] = (double)i;
  QvTensor t;
  dense(&t, QV_ARROW_FLOAT64, 2, shape, NULL, v, sizeof(double) * 1024 * 1025, NULL);
  Bytes in = {0}, one = {0}, four = {0};
  add_tensor(&in, &t);
  qv_tensor_reset(&t);
  free(v);
  patch_strides(&in, 8200, 8, 8192, 8); /* rows overlap: no permutation describes it */
  QvMigrateOptions o1 = {.struct_size = sizeof o1, .threads = 1};
  QvMigrateOptions o4 = {.struct_size = sizeof o4, .threads = 4};
  QvMigrateStats stats;
  assert_ok(migrate(&in, &o1, &one, &stats, &err));
  assert_int_equal(stats.relaid, 1);
  uint64_t before = qvi_path_count(QV_PATH_TENSOR_COPY_THREADS);
  assert_ok(migrate(&in, &o4, &four, &stats, &err));
  assert_true(qvi_path_count(QV_PATH_TENSOR_COPY_THREADS) > before);
  assert_int_equal(one.size, four.size);
  assert_memory_equal(one.data, four.data, one.size);
  bytes_free(&in);
  bytes_free(&one);
  bytes_free(&four);
}

/* Equal shapes: one fixed shape column (the bodies as its values); other shapes: variable
 * shape; a shared column-major layout stays a permutation. */
static void test_several_messages(void **state) {
  (void)state;
  QvError err = {0};
  QvTensor a, b, c;
  dense(&a, QV_ARROW_FLOAT64, 2, (int64_t[]){3, 4}, (int64_t[]){8, 24}, v12, sizeof v12, NULL);
  dense(&b, QV_ARROW_FLOAT64, 2, (int64_t[]){3, 4}, (int64_t[]){8, 24}, v12 + 0, sizeof v12, NULL);
  dense(&c, QV_ARROW_FLOAT64, 2, (int64_t[]){2, 3}, (int64_t[]){8, 16}, v12 + 6, 48, NULL);
  Bytes fixed = {0}, var = {0}, table = {0}, out = {0};
  add_tensor(&fixed, &a);
  add_tensor(&fixed, &b);
  append(&var, fixed.data, fixed.size);
  add_tensor(&var, &c);
  QvMigrateStats stats;
  uint64_t pieces = qvi_path_count(QV_PATH_MIGRATE_PIECES);
  assert_ok(migrate(&fixed, NULL, &table, &stats, &err));
  assert_int_equal(stats.messages, 2);
  assert_int_equal(stats.relaid, 0);
  /* a shared layout: the bodies are written to the sink as they are */
  assert_int_equal(stats.gathered_bytes, 0);
  assert_int_equal(qvi_path_count(QV_PATH_MIGRATE_PIECES), pieces + 1);
  struct ArrowSchema f;
  int64_t rows;
  char buf[256];
  table_field(&table, &f, &rows);
  assert_int_equal(rows, 2);
  assert_string_equal(ext_name(&f, buf, sizeof buf), QV_FIXED_SHAPE_TENSOR);
  assert_non_null(strstr(ext_meta(&f, buf, sizeof buf), "\"permutation\":[1,0]"));
  f.release(&f);
  assert_ok(back(&table, &out, NULL, 0, &err));
  assert_same_messages(&fixed, &out, "fixed");
  bytes_free(&table);
  bytes_free(&out);
  assert_ok(migrate(&var, NULL, &table, &stats, &err));
  assert_int_equal(stats.messages, 3);
  assert_int_equal(stats.gathered_bytes, 0);
  assert_int_equal(qvi_path_count(QV_PATH_MIGRATE_PIECES), pieces + 2);
  table_field(&table, &f, &rows);
  assert_int_equal(rows, 3);
  assert_string_equal(ext_name(&f, buf, sizeof buf), QV_VARIABLE_SHAPE_TENSOR);
  f.release(&f);
  assert_ok(back(&table, &out, NULL, 0, &err));
  assert_same_messages(&var, &out, "variable");
  /* the stream says "file" when asked */
  bytes_free(&table);
  QvMigrateOptions o = {.struct_size = sizeof o, .format = QV_IPC_FORMAT_FILE, .name = "x"};
  assert_ok(migrate(&var, &o, &table, &stats, &err));
  assert_memory_equal(table.data, "ARROW1", 6);
  table_field(&table, &f, &rows);
  assert_string_equal(f.name, "x");
  f.release(&f);
  qv_tensor_reset(&a);
  qv_tensor_reset(&b);
  qv_tensor_reset(&c);
  bytes_free(&fixed);
  bytes_free(&var);
  bytes_free(&table);
  bytes_free(&out);
}

/* The values buffer of the table's one fixed shape column (batch 0), as
 * a malloc'd copy. */
static void fixed_values(const Bytes *table, uint8_t **data, size_t *size) {
  QvError err = {0};
  QvSource *src;
  assert_ok(qv_source_new_memory(&src, table->data, table->size, NULL, &err));
  struct ArrowArrayStream s;
  assert_ok(qv_rb_stream_reader_new(&s, src, NULL, &err));
  qv_source_free(src);
  struct ArrowSchema schema;
  assert_ok(qv_rb_stream_get_schema(&s, &schema, &err));
  const char *fmt = schema.children[0]->children[0]->format;
  size_t es = strcmp(fmt, "g") == 0 ? 8 : strcmp(fmt, "f") == 0 ? 4 : 0;
  assert_true(es > 0);
  schema.release(&schema);
  struct ArrowArray b;
  assert_ok(qv_rb_stream_get_next(&s, &b, &err));
  const struct ArrowArray *vals = b.children[0]->children[0];
  *size = (size_t)vals->length * es;
  *data = malloc(*size + 1);
  assert_non_null(*data);
  memcpy(*data, (const uint8_t *)vals->buffers[1] + (size_t)vals->offset * es, *size);
  b.release(&b);
  s.release(&s);
}

/* n float64 [rows, cols] messages, message m holding m * 1e6 + i at flat
 * row-major position i; those with colmajor[m] set are written
 * column-major. */
static void layout_messages(Bytes *b, int n, int64_t rows, int64_t cols, const bool *colmajor) {
  size_t count = (size_t)(rows * cols);
  double *v = malloc(sizeof(double) * count), *cm = malloc(sizeof(double) * count);
  assert_non_null(v);
  assert_non_null(cm);
  for (int m = 0; m < n; m++) {
    for (size_t i = 0; i < count; i++) v[i] = (double)m * 1e6 + (double)i;
    for (int64_t i = 0; i < rows; i++)
      for (int64_t j = 0; j < cols; j++) cm[j * rows + i] = v[i * cols + j];
    QvTensor t;
    if (colmajor[m])
      dense(&t, QV_ARROW_FLOAT64, 2, (int64_t[]){rows, cols},
            (int64_t[]){8, 8 * rows}, cm, sizeof(double) * count, NULL);
    else
      dense(&t, QV_ARROW_FLOAT64, 2, (int64_t[]){rows, cols}, NULL, v, sizeof(double) * count,
            NULL);
    add_tensor(b, &t);
    qv_tensor_reset(&t);
  }
  free(v);
  free(cm);
}

/* Several row-major messages from a mapped file, a caller's buffer and a
 * pipe (bodies read into the reader's buffers): the column's values are
 * the bodies in order, written to the sink from where they are (counter,
 * nothing gathered), equal to the concatenated bodies. */
static void test_several_messages_one_copy(void **state) {
  (void)state;
  QvError err = {0};
  const bool rowmajor[4] = {false, false, false, false};
  Bytes in = {0}, table = {0};
  layout_messages(&in, 4, 5, 7, rowmajor);
  double expect[4 * 35];
  for (int m = 0; m < 4; m++)
    for (int i = 0; i < 35; i++) expect[m * 35 + i] = (double)m * 1e6 + (double)i;
  QvTestDir dir;
  qv_test_dir_make(&dir, "in.arrow");
  FILE *f = fopen(dir.file, "wb");
  assert_non_null(f);
  assert_int_equal(fwrite(in.data, 1, in.size, f), in.size);
  assert_int_equal(fclose(f), 0);
  for (int source = 0; source < 3; source++) {
    QvMigrateStats stats;
    uint64_t before = qvi_path_count(QV_PATH_MIGRATE_PIECES);
    if (source == 0) {
      assert_ok(migrate(&in, NULL, &table, &stats, &err));
    } else if (source == 1) {
      assert_ok(migrate_path(dir.file, &table, &stats, &err));
    } else {
      int fds[2];
      assert_int_equal(pipe(fds), 0);
      assert_true(in.size < 65536); /* the pipe holds it all */
      assert_int_equal(write(fds[1], in.data, in.size), (ssize_t)in.size);
      close(fds[1]);
      QvSource *src;
      QvSink *sink;
      assert_ok(qv_source_new_fd(&src, fds[0], &err));
      assert_ok(qv_sink_new_memory(&sink, &err));
      assert_ok(qv_migrate(src, sink, NULL, &stats, &err));
      take(sink, &table);
      qv_sink_free(sink);
      qv_source_free(src);
      close(fds[0]);
    }
    assert_int_equal(stats.messages, 4);
    assert_int_equal(stats.relaid, 0);
    assert_int_equal(stats.gathered_bytes, 0);
    assert_int_equal(qvi_path_count(QV_PATH_MIGRATE_PIECES), before + 1);
    uint8_t *vals;
    size_t size;
    fixed_values(&table, &vals, &size);
    assert_int_equal(size, sizeof expect);
    assert_memory_equal(vals, expect, sizeof expect);
    free(vals);
    bytes_free(&table);
  }
  unlink(dir.file);
  qv_test_dir_remove(&dir);
  bytes_free(&in);
}

/* Column-major and row-major messages in one column: no permutation is
 * shared, so the column is row-major; the column-major messages are copied
 * (said by the notice, counted), the row-major ones still written from
 * their bodies; values equal after the round trip. An empty message in a
 * variable shape column is no piece at all. */
static void test_mixed_layouts_copy_only_the_odd(void **state) {
  (void)state;
  QvError err = {0};
  const bool mixed[3] = {false, true, false};
  Bytes in = {0}, table = {0}, out = {0};
  layout_messages(&in, 3, 4, 6, mixed);
  Notices n = {0};
  QvMigrateOptions o = {.struct_size = sizeof o, .notice = on_notice, .notice_ctx = &n};
  QvMigrateStats stats;
  uint64_t before = qvi_path_count(QV_PATH_MIGRATE_PIECES);
  assert_ok(migrate(&in, &o, &table, &stats, &err));
  assert_int_equal(qvi_path_count(QV_PATH_MIGRATE_PIECES), before + 1);
  assert_int_equal(stats.relaid, 1);
  assert_int_equal(stats.gathered_bytes, 24 * 8);
  assert_int_equal(n.n, 1);
  if (strstr(n.last, "message 1") == NULL || strstr(n.last, "another permutation") == NULL)
    fail_msg("notice '%s'", n.last);
  struct ArrowSchema f;
  int64_t rows;
  char buf[256];
  table_field(&table, &f, &rows);
  assert_int_equal(rows, 3);
  assert_null(strstr(ext_meta(&f, buf, sizeof buf), "permutation"));
  f.release(&f);
  uint8_t *vals;
  size_t size;
  fixed_values(&table, &vals, &size);
  assert_int_equal(size, 3 * 24 * 8);
  for (int m = 0; m < 3; m++)
    for (int i = 0; i < 24; i++) {
      double x;
      memcpy(&x, vals + (size_t)(m * 24 + i) * 8, 8);
      if (x != (double)m * 1e6 + (double)i) fail_msg("message %d value %d: %g", m, i, x);
    }
  free(vals);
  assert_ok(back(&table, &out, NULL, 0, &err));
  /* back row-major: equal in value (assert_same_messages compares values) */
  assert_same_messages(&in, &out, "mixed layouts");
  bytes_free(&table);
  bytes_free(&out);
  /* variable shapes: an empty message between two */
  QvTensor e;
  dense(&e, QV_ARROW_FLOAT64, 2, (int64_t[]){0, 6}, NULL, v12, 0, NULL);
  Bytes var = {0};
  append(&var, in.data, in.size);
  add_tensor(&var, &e);
  qv_tensor_reset(&e);
  layout_messages(&var, 1, 3, 2, mixed);
  n.n = 0;
  assert_ok(migrate(&var, &o, &table, &stats, &err));
  assert_int_equal(stats.messages, 5);
  assert_int_equal(stats.relaid, 1);
  assert_int_equal(qvi_path_count(QV_PATH_MIGRATE_PIECES), before + 2);
  table_field(&table, &f, &rows);
  assert_string_equal(ext_name(&f, buf, sizeof buf), QV_VARIABLE_SHAPE_TENSOR);
  f.release(&f);
  assert_ok(back(&table, &out, NULL, 0, &err));
  assert_same_messages(&var, &out, "variable, mixed layouts");
  bytes_free(&var);
  bytes_free(&in);
  bytes_free(&table);
  bytes_free(&out);
}

/* The copies of messages in another layout run on the threads asked for
 * (counter), and the table is the same bytes for 1..4 threads. */
static void test_several_messages_threads_same_bytes(void **state) {
  (void)state;
  QvError err = {0};
  const bool mixed[4] = {false, true, true, false};
  Bytes in = {0}, ref = {0}, got = {0};
  layout_messages(&in, 4, 1024, 640, mixed); /* 5 MiB a message: copies split */
  QvMigrateStats stats;
  for (int threads = 1; threads <= 4; threads++) {
    QvMigrateOptions o = {.struct_size = sizeof o, .threads = threads};
    uint64_t split = qvi_path_count(QV_PATH_TENSOR_COPY_THREADS);
    uint64_t pieces = qvi_path_count(QV_PATH_MIGRATE_PIECES);
    Bytes *b = threads == 1 ? &ref : &got;
    assert_ok(migrate(&in, &o, b, &stats, &err));
    assert_int_equal(stats.relaid, 2);
    assert_int_equal(stats.gathered_bytes, 2 * 1024 * 640 * 8);
    assert_int_equal(qvi_path_count(QV_PATH_MIGRATE_PIECES), pieces + 1);
    assert_int_equal(qvi_path_count(QV_PATH_TENSOR_COPY_THREADS) > split, threads > 1);
    if (threads > 1) {
      assert_int_equal(got.size, ref.size);
      assert_memory_equal(got.data, ref.data, ref.size);
      bytes_free(&got);
    }
  }
  uint8_t *vals;
  size_t size;
  fixed_values(&ref, &vals, &size);
  assert_int_equal(size, (size_t)4 * 1024 * 640 * 8);
  for (int m = 0; m < 4; m++)
    for (size_t i = 0; i < (size_t)1024 * 640; i += 4099) {
      double x;
      memcpy(&x, vals + ((size_t)m * 1024 * 640 + i) * 8, 8);
      if (x != (double)m * 1e6 + (double)i) fail_msg("message %d value %zu: %g", m, i, x);
    }
  free(vals);
  bytes_free(&in);
  bytes_free(&ref);
}

typedef struct Opened {
  int n;
  char groups[4][96];
  Bytes bytes[4];
} Opened;

static QvStatus collect_write(void *ctx, const void *data, size_t size, QvError *error) {
  (void)error;
  Bytes *b = ctx;
  append(b, data, size);
  return QV_OK;
}

static QvStatus open_collect(void *ctx, const char *group, QvSink **sink, QvError *error) {
  Opened *o = ctx;
  if (o->n == 4) return qv_error_set(error, QV_EARG, "too many");
  snprintf(o->groups[o->n], sizeof o->groups[0], "%s", group);
  return qv_sink_new_callback(sink, collect_write, &o->bytes[o->n++], error);
}

/* Mixed kinds and types: an error listing the groups; split: one table per
 * group, named. */
static void test_groups(void **state) {
  (void)state;
  QvError err = {0};
  QvTensor a, b;
  dense(&a, QV_ARROW_FLOAT64, 2, (int64_t[]){3, 4}, NULL, v12, sizeof v12, NULL);
  static const float f12[12] = {0, 1, 0, 2, 0, 0, 3, 0, 0, 0, 0, 4};
  dense(&b, QV_ARROW_FLOAT32, 2, (int64_t[]){3, 4}, NULL, f12, sizeof f12, NULL);
  QvSparseTensor s;
  QvSparseOptions so = {.struct_size = sizeof so, .index_type = QV_ARROW_INT32};
  assert_ok(qv_sparse_from_dense(&b, QV_SPARSE_CSR, &so, &s, &err));
  Bytes in = {0}, table = {0};
  add_tensor(&in, &a);
  add_tensor(&in, &b);
  add_sparse(&in, &s);
  add_tensor(&in, &a);
  assert_error(migrate(&in, NULL, &table, NULL, &err), &err, QV_EINVAL,
               "messages of 3 groups: tensor_float64_2d (2 messages, first 0), "
               "tensor_float32_2d (1 message, first 1), csr_float32_int32_int32_2d (1 message, "
               "first 2): --split");
  Opened o;
  memset(&o, 0, sizeof o);
  QvMigrateStats stats;
  QvSource *src;
  assert_ok(qv_source_new_memory(&src, in.data, in.size, NULL, &err));
  assert_ok(qv_migrate_split(src, open_collect, &o, NULL, &stats, &err));
  qv_source_free(src);
  assert_int_equal(o.n, 3);
  assert_int_equal(stats.tables, 3);
  assert_string_equal(o.groups[0], "tensor_float64_2d");
  assert_string_equal(o.groups[2], "csr_float32_int32_int32_2d");
  struct ArrowSchema f;
  int64_t rows;
  char buf[64];
  table_field(&o.bytes[0], &f, &rows);
  assert_int_equal(rows, 2);
  f.release(&f);
  table_field(&o.bytes[2], &f, &rows);
  assert_int_equal(rows, 1);
  assert_string_equal(ext_name(&f, buf, sizeof buf), QV_SPARSE_TENSOR_EXTENSION);
  assert_string_equal(f.name, "sparse");
  f.release(&f);
  /* the sparse table back: the CSR message as it was */
  Bytes one = {0}, out = {0};
  add_sparse(&one, &s);
  assert_ok(back(&o.bytes[2], &out, NULL, 0, &err));
  assert_same_messages(&one, &out, "csr");
  for (int i = 0; i < 3; i++) bytes_free(&o.bytes[i]);
  /* names: equal labels told apart */
  const char *names[2] = {"r", "c"};
  QvTensor named;
  dense(&named, QV_ARROW_FLOAT64, 2, (int64_t[]){3, 4}, NULL, v12, sizeof v12, names);
  Bytes two = {0};
  add_tensor(&two, &a);
  add_tensor(&two, &named);
  memset(&o, 0, sizeof o);
  assert_ok(qv_source_new_memory(&src, two.data, two.size, NULL, &err));
  assert_ok(qv_migrate_split(src, open_collect, &o, NULL, NULL, &err));
  qv_source_free(src);
  assert_int_equal(o.n, 2);
  assert_string_equal(o.groups[1], "tensor_float64_2d_2");
  for (int i = 0; i < 2; i++) bytes_free(&o.bytes[i]);
  char *p;
  assert_ok(qv_migrate_split_path("dir.x/m.arrow", "tensor_int8_1d", &p, &err));
  assert_string_equal(p, "dir.x/m.tensor_int8_1d.arrow");
  free(p);
  assert_ok(qv_migrate_split_path("dir.x/m", "g", &p, &err));
  assert_string_equal(p, "dir.x/m.g");
  free(p);
  assert_ok(qv_migrate_split_path(".m", "g", &p, &err));
  assert_string_equal(p, ".m.g");
  free(p);
  qv_tensor_reset(&a);
  qv_tensor_reset(&b);
  qv_tensor_reset(&named);
  qv_sparse_reset(&s);
  bytes_free(&in);
  bytes_free(&two);
  bytes_free(&one);
  bytes_free(&out);
}

/* Limits and input that is not for migrate. */
static void test_refusals(void **state) {
  (void)state;
  QvError err = {0};
  QvTensor a;
  dense(&a, QV_ARROW_FLOAT64, 2, (int64_t[]){3, 4}, NULL, v12, sizeof v12, NULL);
  Bytes in = {0}, table = {0}, out = {0};
  add_tensor(&in, &a);
  QvMigrateOptions o = {.struct_size = sizeof o, .max_output_size = 64};
  assert_error(migrate(&in, &o, &table, NULL, &err), &err, QV_ELIMIT, "more than the limit of 64");
  assert_ok(migrate(&in, NULL, &table, NULL, &err));
  assert_error(back(&table, &out, NULL, 100, &err), &err, QV_ELIMIT, "the messages take");
  /* a table is no input of migrate; messages are no input of to_messages */
  assert_error(migrate(&table, NULL, &out, NULL, &err), &err, QV_EINVAL,
               "message 0 is a Schema");
  QvMigrateStats stats;
  QvStatus st = back(&in, &out, &stats, 0, &err);
  assert_int_not_equal(st, QV_OK);
  Bytes empty = {0};
  append(&empty, (const uint8_t *)"\xff\xff\xff\xff\0\0\0\0", 8);
  assert_error(migrate(&empty, NULL, &out, NULL, &err), &err, QV_EINVAL, "no Tensor or SparseTensor");
  /* truncated input: an error, never a crash */
  Bytes cut = {0};
  append(&cut, in.data, in.size - 40);
  assert_int_not_equal(migrate(&cut, NULL, &out, NULL, &err), QV_OK);
  QvMigrateOptions bad = {.struct_size = sizeof bad, .threads = -1};
  assert_error(migrate(&in, &bad, &out, NULL, &err), &err, QV_EARG, "threads");
  qv_tensor_reset(&a);
  bytes_free(&in);
  bytes_free(&table);
  bytes_free(&out);
  bytes_free(&empty);
  bytes_free(&cut);
}

/* A sparse-vector column goes back as 1-D COO messages. */
static void test_sparse_vector_to_messages(void **state) {
  (void)state;
  QvError err = {0};
  static const double row[4] = {0, 5, 0, 7};
  QvTensor d;
  dense(&d, QV_ARROW_FLOAT64, 1, (int64_t[]){4}, NULL, row, sizeof row, NULL);
  QvSparseTensor s;
  assert_ok(qv_sparse_from_dense(&d, QV_SPARSE_COO, NULL, &s, &err));
  const QvSparseTensor *cells[2] = {&s, &s};
  QvSparseBuildOptions bo = {.struct_size = sizeof bo, .kind = QV_SPARSE_COLUMN_VECTOR,
                             .name = "v"};
  struct ArrowSchema field, bs;
  struct ArrowArray col, batch;
  assert_ok(qv_sparse_column_build(cells, 2, &bo, &field, &col, &err));
  assert_ok(qv_tensor_column_to_batch(&field, &col, &bs, &batch, &err));
  QvSink *sink;
  assert_ok(qv_sink_new_memory(&sink, &err));
  QvRbWriter *w;
  assert_ok(qv_rb_writer_new(&w, &bs, sink, NULL, &err));
  assert_ok(qv_rb_writer_write(w, &batch, &err));
  assert_ok(qv_rb_writer_finish(w, &err));
  qv_rb_writer_free(w);
  Bytes table = {0}, out = {0};
  take(sink, &table);
  qv_sink_free(sink);
  batch.release(&batch);
  bs.release(&bs);
  QvMigrateStats stats;
  assert_ok(back(&table, &out, &stats, 0, &err));
  assert_int_equal(stats.messages, 2);
  QvSparseTensor r;
  assert_ok(qv_test_sparse_read_memory(out.data, out.size, NULL, 1, &r, &err));
  assert_int_equal(r.format, QV_SPARSE_COO);
  assert_int_equal(r.nnz, 2);
  assert_true(qv_sparse_equal_dense(&r, &d));
  qv_sparse_reset(&r);
  qv_sparse_reset(&s);
  qv_tensor_reset(&d);
  bytes_free(&table);
  bytes_free(&out);
}

/* QvMigrateOptions: its first size, NULL defaults. */
static void test_options(void **state) {
  (void)state;
  QvError err = {0};
  QvMigrateOptions dst;
  QvMigrateOptions first;
  memset(&first, 0, sizeof first);
  first.struct_size = QVI_FIRST_QvMigrateOptions;
  first.threads = 3;
  assert_ok(QV_OPTIONS_LOAD(&dst, &first, QvMigrateOptions, &err));
  assert_int_equal(dst.threads, 3);
  assert_ok(QV_OPTIONS_LOAD(&dst, NULL, QvMigrateOptions, &err));
  assert_int_equal(dst.threads, 0);
  assert_int_equal(dst.format, QV_IPC_FORMAT_STREAM);
  assert_null(dst.notice);
  assert_int_equal(QVI_FIRST_QvMigrateOptions, sizeof dst);
}

int main(int argc, char **argv) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_column_major_is_a_permutation),
      cmocka_unit_test(test_other_layout_is_copied),
      cmocka_unit_test(test_several_messages),
      cmocka_unit_test(test_several_messages_one_copy),
      cmocka_unit_test(test_mixed_layouts_copy_only_the_odd),
      cmocka_unit_test(test_several_messages_threads_same_bytes),
      cmocka_unit_test(test_threads_same_bytes),
      cmocka_unit_test(test_groups),
      cmocka_unit_test(test_refusals),
      cmocka_unit_test(test_sparse_vector_to_messages),
      cmocka_unit_test(test_options),
  };
  const struct CMUnitTest shared[] = {
      cmocka_unit_test(test_arrow_cpp_round_trip),
  };
  const QvTestGroup groups[] = {
      QV_TEST_GROUP("", tests, NULL, NULL),
      QV_TEST_GROUP("arrow_cpp", shared, NULL, NULL),
  };
  return qv_test_run_groups(argc, argv, groups, sizeof groups / sizeof groups[0]);
}
