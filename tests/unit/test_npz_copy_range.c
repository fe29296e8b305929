/* from-npz of a stored archive made by numpy.savez (the members SciPy's
 * save_npz writes) to an Arrow file: the big members stay views of the
 * mapped archive and the file sink copies them file to file
 * (copy_file_range), as the path counter proves; the Arrow file is the
 * same bytes as the one written through memory. On tmpfs every big member
 * is copied so; on other file systems those whose offsets in the archive
 * and in the Arrow file agree within a page (the rule in src/ipc/sink.c).
 * The source is freed before the write, as the CLI does. */
#define _GNU_SOURCE /* memmem, statfs */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "ipc/source_internal.h"
#include "quiver/npz.h"
#include "quiver/sparse_ipc.h"
#include "test_util.h"
#include "util/cpu.h"
#include "util/load.h"

#define PYTHON "/usr/bin/python3"
#define TMPFS 0x01021994

static bool need_numpy(void) {
  if (access(PYTHON, X_OK) == 0 && system(PYTHON " -c 'import numpy' 2>/dev/null") == 0) return true;
  print_message("skipped: " PYTHON " with numpy is not installed (Debian package python3-numpy)\n");
  return false;
}

static bool on_tmpfs(const char *path) {
  struct statfs f;
  return statfs(path, &f) == 0 && f.f_type == TMPFS;
}

/* A 2000 x 5000 float64 CSR matrix of 300000 nonzeros (int32 indices,
 * 1.2 MB; values 2.4 MB) saved uncompressed by numpy.savez. */
static void make_npz(const char *path) {
  char cmd[1024];
  snprintf(cmd, sizeof cmd,
           PYTHON " -c 'import numpy as np\n"
           "rng = np.random.default_rng(26)\n"
           "rows, cols, nnz = 2000, 5000, 300000\n"
           "keys = np.sort(rng.choice(rows * cols, nnz, replace=False))\n"
           "indptr = np.searchsorted(keys // cols, np.arange(rows + 1)).astype(np.int32)\n"
           "np.savez(\"%s\", indices=(keys %% cols).astype(np.int32), indptr=indptr,\n"
           "         format=np.array(b\"csr\"), shape=np.array([rows, cols]), data=rng.random(nnz))'",
           path);
  assert_int_equal(system(cmd), 0);
}

/* How many of the tensor's big buffers (indices, values) a file sink would
 * copy file to file in `dir`'s file system, given where they land in the
 * Arrow file `arrow`. */
static int expected_copies(const QvSparseTensor *t, const char *dir, const uint8_t *arrow,
                           size_t arrow_size) {
  const void *bufs[2] = {t->indices, t->values};
  size_t lens[2] = {(size_t)t->nnz * 4, (size_t)t->nnz * 8};
  int n = 0;
  for (int i = 0; i < 2; i++) {
    int fd;
    int64_t src;
    assert_true(qvi_source_file_bytes(bufs[i], lens[i], &fd, &src));
    const uint8_t *at = memmem(arrow, arrow_size, bufs[i], 256);
    assert_non_null(at);
    if (on_tmpfs(dir) || (src - (at - arrow)) % 4096 == 0) n++;
  }
  return n;
}

static void from_npz_in(const char *dir) {
  char npz[256], out[256];
  snprintf(npz, sizeof npz, "%s/m.npz", dir);
  snprintf(out, sizeof out, "%s/m.arrow", dir);
  make_npz(npz);
  QvSource *src;
  QvError e;
  assert_int_equal(qv_source_new_path(&src, npz, &e), QV_OK);
  QvNpzReadOptions o = {.struct_size = sizeof o, .threads = 2, .keep_misaligned = true};
  QvSparseTensor t;
  assert_int_equal(qv_npz_read(src, &o, &t, NULL, &e), QV_OK);
  qv_source_free(src);
  assert_int_equal(t.nnz, 300000);
  /* the same tensor through memory: the bytes the file must hold */
  QvSink *mem;
  assert_int_equal(qv_sink_new_memory(&mem, &e), QV_OK);
  assert_int_equal(qv_sparse_write(&t, mem, NULL, &e), QV_OK);
  uint8_t *want;
  size_t want_size;
  assert_int_equal(qv_sink_memory_take(mem, &want, &want_size, &e), QV_OK);
  qv_sink_free(mem);
  for (unsigned flags = 0; flags <= QV_SINK_NO_FSYNC; flags += QV_SINK_NO_FSYNC) {
    uint64_t before = qvi_path_count(QV_PATH_SINK_COPY_RANGE);
    QvSink *sink;
    assert_int_equal(qv_sink_new_path(&sink, out, flags, &e), QV_OK);
    assert_int_equal(qv_sparse_write(&t, sink, NULL, &e), QV_OK);
    assert_int_equal(qv_sink_finish(sink, &e), QV_OK);
    qv_sink_free(sink);
    uint64_t hits = qvi_path_count(QV_PATH_SINK_COPY_RANGE) - before;
    size_t got;
    uint8_t *file = qv_test_slurp(out, &got);
    assert_int_equal(got, want_size);
    assert_memory_equal(file, want, want_size);
    int copies = expected_copies(&t, dir, file, got);
    free(file);
    /* each copied buffer counts once per 8 MiB piece: one here */
    assert_int_equal(hits, (uint64_t)copies);
    if (on_tmpfs(dir)) assert_int_equal(copies, 2);
    assert_int_equal(unlink(out), 0);
  }
  qv_free(want);
  qv_sparse_reset(&t);
  assert_int_equal(unlink(npz), 0);
}

/* On a big-endian host the reader swaps the archive's little-endian members
 * into new memory: no buffer is the file's bytes, so there is nothing to
 * copy file to file. */
static bool file_bytes_possible(void) {
  if (!QV_HOST_BIG_ENDIAN) return true;
  print_message("skipped: a big-endian host swaps the members into new memory\n");
  return false;
}

static void test_tmpfs(void **state) {
  (void)state;
  if (!need_numpy() || !file_bytes_possible()) skip();
  char dir[64] = "/dev/shm/qv_npz_copy_XXXXXX";
  if (!on_tmpfs("/dev/shm") || mkdtemp(dir) == NULL) {
    print_message("skipped: no tmpfs at /dev/shm\n");
    skip();
  }
  from_npz_in(dir);
  assert_int_equal(rmdir(dir), 0);
}

static void test_tmp_dir(void **state) {
  (void)state;
  if (!need_numpy() || !file_bytes_possible()) skip();
  QvTestDir d;
  qv_test_dir_make(&d, "unused");
  from_npz_in(d.path);
  qv_test_dir_remove(&d);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_tmpfs),
      cmocka_unit_test(test_tmp_dir),
  };
  return qv_test_run(tests, NULL, NULL);
}
