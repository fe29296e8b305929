/* Big-endian files from another writer: tests/scripts/arrow_swap.py (Python
 * stdlib only, sharing no code with quiver) turns little-endian streams and
 * files written by quiver into big-endian ones by its own reading of the
 * schema. quiver must read them back equal to the original, for every type
 * with nulls, slices and dictionaries (replacement and delta); and they must
 * hold the same buffers, byte for byte, as quiver's own big-endian writer's
 * output of the same batches, which also reads back equal. On a big-endian
 * host the Python output is in the host's order and quiver's little-endian
 * input is the foreign one: both directions of the reader get exercised. */
#include "test_rb_helpers.h"
#include "test_util.h"

#include <sys/stat.h>
#include <sys/wait.h>

#include "quiver/format.h"

#define PYTHON "/usr/bin/python3"
#define SWAPPER QV_SOURCE_DIR "/tests/scripts/arrow_swap.py"


static char g_dir[64];

static int setup(void **state) {
  (void)state;
  snprintf(g_dir, sizeof g_dir, "/tmp/qv_pyswap_XXXXXX");
  return mkdtemp(g_dir) ? 0 : -1;
}

static int teardown(void **state) {
  (void)state;
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
  return system(cmd) == 0 ? 0 : -1;
}

static bool need_python(void) {
  if (access(PYTHON, X_OK) == 0) return true;
  print_message("skipped: " PYTHON " is not installed (Debian package python3)\n");
  return false;
}

static void put_file(const char *path, const uint8_t *data, size_t size) {
  FILE *f = fopen(path, "wb");
  assert_non_null(f);
  assert_int_equal(fwrite(data, 1, size, f), size);
  assert_int_equal(fclose(f), 0);
}

/* Runs the swapper; returns its exit status. */
static int swapper(const char *mode, const char *a, const char *b) {
  char cmd[1024];
  snprintf(cmd, sizeof cmd, "'%s' '%s' %s '%s' '%s'", PYTHON, SWAPPER, mode, a, b);
  int st = system(cmd);
  return st != -1 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* The whole check for batches[0, n) of `schema`, as a stream and (when
 * `files`) as a file. */
static void check_swapped(const struct ArrowSchema *schema, struct ArrowArray *const *batches,
                          int n, bool files, const char *name) {
  RbtCells want[8];
  assert_true(n <= 8);
  for (int k = 0; k < n; k++) want[k] = rbt_cells(batches[k], schema);
  for (int file = 0; file < (files ? 2 : 1); file++) {
    QvRbWriteOptions o;
    memset(&o, 0, sizeof o);
    o.format = file ? QV_IPC_FORMAT_FILE : QV_IPC_FORMAT_STREAM;
    o.validate = QV_VALIDATE_FULL;
    o.endianness = QV_ENDIAN_LITTLE;
    uint8_t *le, *ours;
    size_t le_size, ours_size;
    rbt_write(schema, batches, n, &o, &le, &le_size);
    o.endianness = QV_ENDIAN_BIG;
    rbt_write(schema, batches, n, &o, &ours, &ours_size);
    char le_path[160], py_path[160], ours_path[160], what[160];
    snprintf(le_path, sizeof le_path, "%s/%s.le.%s", g_dir, name, file ? "arrow" : "arrows");
    snprintf(py_path, sizeof py_path, "%s/%s.py-be.%s", g_dir, name, file ? "arrow" : "arrows");
    snprintf(ours_path, sizeof ours_path, "%s/%s.qv-be.%s", g_dir, name,
             file ? "arrow" : "arrows");
    put_file(le_path, le, le_size);
    put_file(ours_path, ours, ours_size);
    assert_int_equal(swapper("to-big", le_path, py_path), 0);
    size_t py_size;
    uint8_t *py = qv_test_slurp(py_path, &py_size);
    assert_int_equal(rbt_written_endianness(py, py_size), QV_ENDIAN_BIG);
    snprintf(what, sizeof what, "%s, Python's big-endian %s", name, file ? "file" : "stream");
    rbt_assert_reads_back(py, py_size, file, want, n, what);
    snprintf(what, sizeof what, "%s, quiver's big-endian %s", name, file ? "file" : "stream");
    rbt_assert_reads_back(ours, ours_size, file, want, n, what);
    if (swapper("same-buffers", py_path, ours_path) != 0)
      fail_msg("%s: the Python swapper's %s and quiver's differ (lines above)", name,
               file ? "file" : "stream");
    free(le);
    free(ours);
    free(py);
  }
  for (int k = 0; k < n; k++) rbt_cells_free(&want[k]);
}

/* Every type, nullable, in three batches: a full one, one with other
 * dictionaries (replacements in a stream) and a slice of it; the file
 * format refuses replacements, so the file gets the first batch and the
 * slice of a batch sharing its dictionaries. */
static void test_every_type(void **state) {
  (void)state;
  if (!need_python()) skip();
  struct ArrowSchema schema;
  rbt_batch_schema(&schema, rbt_order_specs, rbt_n_order_specs);
  struct ArrowArray a, b, slice;
  rbt_build(&a, &schema, 37, 2);
  rbt_dict_seed = 1;
  rbt_build(&b, &schema, 40, 5);
  rbt_dict_seed = 0;
  QvError e;
  rbt_check(qv_array_share(&b, &slice, &e), &e, "share");
  slice.offset = 3;
  slice.length = 29;
  struct ArrowArray *stream[3] = {&a, &b, &slice};
  check_swapped(&schema, stream, 3, false, "every_type");
  struct ArrowArray same, same_slice;
  rbt_build(&same, &schema, 40, 5);
  rbt_check(qv_array_share(&same, &same_slice, &e), &e, "share");
  same_slice.offset = 17;
  same_slice.length = 20;
  struct ArrowArray *file[2] = {&same, &same_slice};
  check_swapped(&schema, file, 2, true, "every_type_same_dicts");
  same_slice.release(&same_slice);
  same.release(&same);
  slice.release(&slice);
  b.release(&b);
  a.release(&a);
  schema.release(&schema);
}

/* Indices into int64 dictionary values, built row by row. */
static void dict_batch(const struct ArrowSchema *s, const int64_t *values, int n_values,
                       const int *indices, int n, struct ArrowArray *out) {
  QvError e;
  rbt_check(qv_array_init_from_schema(out, s, &e), &e, "init");
  struct ArrowArray *col = out->children[0];
  for (int i = 0; i < n_values; i++)
    assert_int_equal(qv_array_append_int(col->dictionary, values[i], NULL), QV_OK);
  for (int i = 0; i < n; i++) {
    if (indices[i] < 0)
      qv_array_append_null(col, 1, NULL);
    else
      qv_array_append_int(col, indices[i], NULL);
    qv_array_finish_element(out, NULL);
  }
  rbt_check(qv_array_finish_building(out, QV_VALIDATE_FULL, &e), &e, "finish");
}

/* A dictionary that grows (delta batches, in streams and files) and, in a
 * stream, is then replaced; int16 and int64 indices. */
static void test_dictionaries(void **state) {
  (void)state;
  if (!need_python()) skip();
  const char *specs[] = {"s{l}", "l{l}"};
  for (int k = 0; k < 2; k++) {
    struct ArrowSchema s;
    rbt_batch_schema(&s, &specs[k], 1);
    const int64_t v1[] = {1000, -2, 1LL << 40}, v2[] = {1000, -2, 1LL << 40, 77, -9},
                  v3[] = {5, 6};
    int i1[] = {0, 2, -1}, i2[] = {3, 1, 4}, i3[] = {1, 0, 1, -1};
    struct ArrowArray b[3];
    dict_batch(&s, v1, 3, i1, 3, &b[0]);
    dict_batch(&s, v2, 5, i2, 3, &b[1]); /* grown: a delta */
    dict_batch(&s, v3, 2, i3, 4, &b[2]); /* different: a replacement */
    struct ArrowArray *deltas[2] = {&b[0], &b[1]};
    check_swapped(&s, deltas, 2, true, k ? "delta_l" : "delta_s");
    /* a replacement cannot go into a file */
    struct ArrowArray *all[3] = {&b[0], &b[1], &b[2]};
    check_swapped(&s, all, 3, false, k ? "replace_l" : "replace_s");
    for (int j = 0; j < 3; j++) b[j].release(&b[j]);
    s.release(&s);
  }
}

/* The swapper is a real check: a body it did not swap differs from
 * quiver's big-endian one, and it refuses what it cannot swap. */
static void test_swapper_is_strict(void **state) {
  (void)state;
  if (!need_python()) skip();
  const char *spec = "i";
  struct ArrowSchema schema;
  rbt_batch_schema(&schema, &spec, 1);
  struct ArrowArray batch;
  rbt_build(&batch, &schema, 10, 1);
  struct ArrowArray *p = &batch;
  QvRbWriteOptions o;
  memset(&o, 0, sizeof o);
  o.endianness = QV_ENDIAN_LITTLE;
  uint8_t *le, *be;
  size_t le_size, be_size;
  rbt_write(&schema, &p, 1, &o, &le, &le_size);
  o.endianness = QV_ENDIAN_BIG;
  rbt_write(&schema, &p, 1, &o, &be, &be_size);
  char le_path[160], be_path[160], out_path[160];
  snprintf(le_path, sizeof le_path, "%s/strict.le.arrows", g_dir);
  snprintf(be_path, sizeof be_path, "%s/strict.be.arrows", g_dir);
  snprintf(out_path, sizeof out_path, "%s/strict.out.arrows", g_dir);
  put_file(le_path, le, le_size);
  put_file(be_path, be, be_size);
  /* quiver's little-endian output, compared as it is: the buffers differ */
  assert_int_equal(swapper("same-buffers", le_path, be_path), 1);
  /* big-endian input is refused */
  assert_int_equal(swapper("to-big", be_path, out_path), 2);
  o.endianness = QV_ENDIAN_LITTLE;
  o.compression = QV_COMPRESSION_ZSTD;
  free(le);
  rbt_write(&schema, &p, 1, &o, &le, &le_size);
  put_file(le_path, le, le_size);
  assert_int_equal(swapper("to-big", le_path, out_path), 2);
  free(le);
  free(be);
  batch.release(&batch);
  schema.release(&schema);
}

int main(void) {
  /* every test needs /usr/bin/python3 and skips without it */
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_every_type),
      cmocka_unit_test(test_dictionaries),
      cmocka_unit_test(test_swapper_is_strict),
  };
  return qv_test_run(tests, setup, teardown);
}
