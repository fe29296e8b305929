/* How a path source makes its whole-file view (QvSourceAdvice): full
 * validation announces a full read and gets QV_SOURCE_FULL_READ_ADVICE,
 * cheap checks keep the plain zero-copy mapping; every way (plain mapping,
 * MADV_SEQUENTIAL / WILLNEED / POPULATE_READ, read(2) into memory) gives
 * the same batches, the mapped ones point into the file and the read one
 * does not; a file that shrinks before the read is a clean error. */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ipc/source_internal.h"
#include "test_rb_helpers.h"
#include "test_util.h"

static struct ArrowSchema g_schema;
static uint8_t *g_stream, *g_file;
static size_t g_stream_size, g_file_size;
static RbtCells g_cells[2];
static QvTestDir g_dir;
static char g_spath[256], g_fpath[256];

static void write_path(const char *path, const uint8_t *data, size_t size) {
  FILE *f = fopen(path, "wb");
  assert_non_null(f);
  assert_int_equal(fwrite(data, 1, size, f), size);
  assert_int_equal(fclose(f), 0);
}

static int setup(void **state) {
  (void)state;
  static const char *const specs[] = {"l", "u", "i", "g"};
  rbt_batch_schema(&g_schema, specs, 4);
  struct ArrowArray b[2];
  rbt_build(&b[0], &g_schema, 3000, 1);
  rbt_build(&b[1], &g_schema, 1234, 2);
  struct ArrowArray *bp[2] = {&b[0], &b[1]};
  rbt_write(&g_schema, bp, 2, NULL, &g_stream, &g_stream_size);
  QvRbWriteOptions o;
  memset(&o, 0, sizeof o);
  o.format = QV_IPC_FORMAT_FILE;
  rbt_write(&g_schema, bp, 2, &o, &g_file, &g_file_size);
  for (int i = 0; i < 2; i++) {
    g_cells[i] = rbt_cells(&b[i], &g_schema);
    b[i].release(&b[i]);
  }
  qv_test_dir_make(&g_dir, "s.arrows");
  snprintf(g_spath, sizeof g_spath, "%s/s.arrows", g_dir.path);
  snprintf(g_fpath, sizeof g_fpath, "%s/f.arrow", g_dir.path);
  write_path(g_spath, g_stream, g_stream_size);
  write_path(g_fpath, g_file, g_file_size);
  return 0;
}

static int teardown(void **state) {
  (void)state;
  unlink(g_fpath);
  qv_test_dir_remove(&g_dir);
  for (int i = 0; i < 2; i++) rbt_cells_free(&g_cells[i]);
  free(g_stream);
  free(g_file);
  g_schema.release(&g_schema);
  return 0;
}

/* Reads the stream (file == false) or file at `path` through one source
 * with the given advice (DEFAULT: none set) and level; checks the batches
 * and reports the advice the source ended with and whether the values
 * buffer of the first column lies in a mapping of the file. */
static void read_path(const char *path, bool file, QvSourceAdvice advice, QvValidateLevel level,
                      QvSourceAdvice *final_advice, bool *mapped) {
  QvSource *src;
  QvError e;
  rbt_check(qv_source_new_path(&src, path, &e), &e, "path source");
  if (advice != QV_SOURCE_ADVICE_DEFAULT) qv_source_set_advice(src, advice);
  QvRbReadOptions o;
  memset(&o, 0, sizeof o);
  o.validate = level;
  struct ArrowArray a;
  *mapped = false;
  if (file) {
    QvRbFileReader *f;
    rbt_check(qv_rb_file_reader_new(&f, src, &o, &e), &e, "file reader");
    *final_advice = qv_source_get_advice(src);
    assert_int_equal(qv_rb_file_n_batches(f), 2);
    for (int i = 0; i < 2; i++) {
      rbt_check(qv_rb_file_read_batch(f, i, &a, &e), &e, "batch");
      RbtCells got = rbt_cells(&a, &g_schema);
      rbt_assert_same_cells(&g_cells[i], &got, "file batch");
      rbt_cells_free(&got);
      if (i == 0) *mapped = qv_test_is_mapping_of(a.children[0]->buffers[1], path);
      a.release(&a);
    }
    qv_rb_file_reader_free(f);
  } else {
    struct ArrowArrayStream s;
    rbt_check(qv_rb_stream_reader_new(&s, src, &o, &e), &e, "stream reader");
    *final_advice = qv_source_get_advice(src);
    for (int i = 0; i < 2; i++) {
      assert_false(rbt_next(&s, &a));
      RbtCells got = rbt_cells(&a, &g_schema);
      rbt_assert_same_cells(&g_cells[i], &got, "stream batch");
      rbt_cells_free(&got);
      if (i == 0) *mapped = qv_test_is_mapping_of(a.children[0]->buffers[1], path);
      a.release(&a);
    }
    assert_true(rbt_next(&s, &a));
    s.release(&s);
  }
  qv_source_free(src);
}

/* Full validation takes the full-read advice; cheap checks keep a plain
 * mapping with no advice: zero-copy, nothing touched in advance. */
static void test_reader_chooses(void **state) {
  (void)state;
  for (int file = 0; file < 2; file++) {
    const char *path = file ? g_fpath : g_spath;
    QvSourceAdvice got;
    bool mapped;
    int64_t maps = qvi_source_count_view_maps();
    read_path(path, file, QV_SOURCE_ADVICE_DEFAULT, QV_VALIDATE_FULL, &got, &mapped);
    assert_int_equal(got, QV_SOURCE_FULL_READ_ADVICE);
    assert_int_equal(mapped, QV_SOURCE_FULL_READ_ADVICE != QV_SOURCE_ADVICE_READ);
    maps = qvi_source_count_view_maps() - maps;
    assert_int_equal(maps, QV_SOURCE_FULL_READ_ADVICE != QV_SOURCE_ADVICE_READ ? 1 : 0);

    maps = qvi_source_count_view_maps();
    read_path(path, file, QV_SOURCE_ADVICE_DEFAULT, QV_VALIDATE_CHEAP, &got, &mapped);
    assert_int_equal(got, QV_SOURCE_ADVICE_DEFAULT);
    assert_true(mapped);
    assert_int_equal(qvi_source_count_view_maps() - maps, 1);
  }
  /* a memory source has no view to make: the announcement changes nothing */
  QvSource *m;
  QvError e;
  rbt_check(qv_source_new_memory(&m, g_stream, g_stream_size, NULL, &e), &e, "memory source");
  qv_source_expect_full_read(m);
  assert_int_equal(qv_source_get_advice(m), QV_SOURCE_ADVICE_DEFAULT);
  qv_source_free(m);
}

/* An advice set by the caller wins over the reader's; every way reads the
 * same batches; only read(2) gives memory that is not the file's. */
static void test_every_way(void **state) {
  (void)state;
  static const QvSourceAdvice ways[] = {QV_SOURCE_ADVICE_NONE, QV_SOURCE_ADVICE_SEQUENTIAL,
                                        QV_SOURCE_ADVICE_WILLNEED, QV_SOURCE_ADVICE_POPULATE,
                                        QV_SOURCE_ADVICE_READ};
  for (size_t w = 0; w < sizeof ways / sizeof ways[0]; w++)
    for (int file = 0; file < 2; file++)
      for (int full = 0; full < 2; full++) {
        QvSourceAdvice got;
        bool mapped;
        read_path(file ? g_fpath : g_spath, file, ways[w], full ? QV_VALIDATE_FULL : QV_VALIDATE_CHEAP, &got,
                  &mapped);
        assert_int_equal(got, ways[w]);
        assert_int_equal(mapped, ways[w] != QV_SOURCE_ADVICE_READ);
      }
}

/* read(2) of a file that shrank after the source was opened: a clean
 * QV_EIO naming it, never a read past the end (a mapping of the missing
 * pages would raise SIGBUS on touch instead, which is why the mapped ways
 * are not run on it). An empty file gives the same answer either way. */
static void test_shrunk_and_empty(void **state) {
  (void)state;
  char path[256];
  snprintf(path, sizeof path, "%s/shrinks.arrows", g_dir.path);
  write_path(path, g_stream, g_stream_size);
  QvSource *src;
  QvError e;
  rbt_check(qv_source_new_path(&src, path, &e), &e, "path source");
  qv_source_set_advice(src, QV_SOURCE_ADVICE_READ);
  assert_int_equal(truncate(path, (off_t)(g_stream_size / 2)), 0);
  struct ArrowArrayStream s;
  QvRbReadOptions o;
  memset(&o, 0, sizeof o);
  o.validate = QV_VALIDATE_FULL;
  QvStatus st = qv_rb_stream_reader_new(&s, src, &o, &e);
  assert_int_equal(st, QV_EIO);
  assert_non_null(strstr(e.message, "shrank"));
  qv_source_free(src);

  assert_int_equal(truncate(path, 0), 0);
  QvStatus want = QV_OK;
  for (int k = 0; k < 2; k++) {
    rbt_check(qv_source_new_path(&src, path, &e), &e, "path source");
    qv_source_set_advice(src, k ? QV_SOURCE_ADVICE_READ : QV_SOURCE_ADVICE_NONE);
    st = qv_rb_stream_reader_new(&s, src, &o, &e);
    if (st == QV_OK) s.release(&s);
    if (k == 0) want = st;
    assert_int_equal(st, want);
    qv_source_free(src);
  }
  unlink(path);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_reader_chooses),
      cmocka_unit_test(test_every_way),
      cmocka_unit_test(test_shrunk_and_empty),
  };
  return qv_test_run(tests, setup, teardown);
}
