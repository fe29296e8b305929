/* Helpers shared by the cmocka tests, and the runner every test uses.
 *
 * Every tests/unit/test_*.c includes this header (tests/CMakeLists.txt checks)
 * and ends with qv_test_run() or qv_test_run_groups() instead of
 * cmocka_run_group_tests(): cmocka's own runner returns the number of failed
 * tests (77 failures would read as "skipped", 256 as "passed") and reports a
 * run whose tests all skipped as a success. The runner exits 0 when every test
 * passed, 1 when any failed, 77 (ctest's SKIP_RETURN_CODE) when none failed
 * and at least one skipped. Tests that can skip (they need data or a tool that
 * may be absent) go in a group of their own, which ctest runs as a test of its
 * own, so that a skip shows as "skipped" without hiding the other groups'
 * passes. */
#ifndef QV_TEST_UTIL_H
#define QV_TEST_UTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <pthread.h>
#include <cmocka.h>

#include "quiver/integration_json.h"
#include "quiver/ipc.h"
#include "quiver/sparse_ipc.h"
#include "quiver/tensor_ipc.h"

/* Reads a whole file; NULL if it cannot be read. free() the result. */
uint8_t *qv_test_read_file(const char *path, size_t *size);
/* 1 when the shared Arrow C++ test data directory exists. */
int qv_test_have_shared(void);
/* Path inside the shared test data (static buffer). */
const char *qv_test_shared_path(const char *name);
/* A message reader over caller memory with default options (the reader
 * keeps its own reference to the source). */
QvStatus qv_test_reader_memory(QvIpcReader **r, const void *data, size_t size, QvError *err);
QvStatus qv_test_reader_path(QvIpcReader **r, const char *path, QvError *err);
QvStatus qv_test_reader_fd(QvIpcReader **r, int fd, QvError *err);

/* qv_tensor_read / qv_sparse_read over a source made for the call, and the
 * writers into a sink made for the call (a path sink is finished, so the
 * file is in place on QV_OK; a buffer sink sets *written). */
QvStatus qv_test_tensor_read_memory(const void *data, size_t size, QvOwner *owner, int64_t index,
                                    QvTensor *out, QvError *err);
QvStatus qv_test_tensor_read_path(const char *path, int64_t index, QvTensor *out, QvError *err);
QvStatus qv_test_tensor_read_fd(int fd, int64_t index, QvTensor *out, QvError *err);
QvStatus qv_test_tensor_write_buffer(const QvTensor *t, void *dst, size_t cap, size_t *written,
                                     QvError *err);
QvStatus qv_test_tensor_write_path(const QvTensor *t, const char *path, QvError *err);
QvStatus qv_test_tensor_write_fd(const QvTensor *t, int fd, QvError *err);
QvStatus qv_test_sparse_read_memory(const void *data, size_t size, QvOwner *owner, int64_t index,
                                    QvSparseTensor *out, QvError *err);
QvStatus qv_test_sparse_read_path(const char *path, int64_t index, QvSparseTensor *out,
                                  QvError *err);
QvStatus qv_test_sparse_read_fd(int fd, int64_t index, QvSparseTensor *out, QvError *err);
QvStatus qv_test_sparse_write_buffer(const QvSparseTensor *t, const QvSparseWriteOptions *o,
                                     void *dst, size_t cap, size_t *written, QvError *err);
QvStatus qv_test_sparse_write_path(const QvSparseTensor *t, const QvSparseWriteOptions *o,
                                   const char *path, QvError *err);
QvStatus qv_test_sparse_write_fd(const QvSparseTensor *t, const QvSparseWriteOptions *o, int fd,
                                 QvError *err);

/* ---- same-path and failed-write tests */

/* A fresh directory under /tmp and the path of `name` inside it. */
typedef struct QvTestDir {
  char path[64];
  char file[192];
} QvTestDir;

void qv_test_dir_make(QvTestDir *d, const char *name);
/* Entries in the directory (a temporary file left behind counts). */
int qv_test_dir_count(const QvTestDir *d);
/* Removes the file, asserts nothing else is there, removes the directory. */
void qv_test_dir_remove(QvTestDir *d);

/* A thread feeding the write end of a pipe or socket, as another process
 * would: `size` bytes of `data` in writes of at most `chunk` bytes (0: as
 * many as write(2) takes), then fd closed (also when a write fails: a
 * reader that closed its end stops the writer). */
typedef struct QvTestWriter {
  int fd;
  const uint8_t *data;
  size_t size, chunk;
  pthread_t thread;
} QvTestWriter;
void qv_test_writer_start(QvTestWriter *w, int fd, const void *data, size_t size, size_t chunk);
void qv_test_writer_join(QvTestWriter *w);
/* Whole file, asserted readable; free() it. */
uint8_t *qv_test_slurp(const char *path, size_t *size);
/* Integration JSON from and to text in memory (qv_json_read / _write over
 * a memory source and sink); *text is NUL-terminated, free() it. */
QvStatus qv_test_json_read_text(QvJsonFile **out, const char *text, size_t len,
                                const QvJsonReadOptions *options, QvError *err);
QvStatus qv_test_json_write_text(const QvJsonData *data, const QvJsonWriteOptions *options,
                                 char **text, size_t *len, QvError *err);
/* True when p lies inside one of this process's file mappings of `path`
 * (/proc/self/maps): the data really is the file, not a copy. */
bool qv_test_is_mapping_of(const void *p, const char *path);
/* Runs fn(arg) in a forked child; returns its exit status. */
int qv_test_in_child(int (*fn)(const char *), const char *arg);
/* In a child: a "full disk" from here on. Files may grow to `bytes`;
 * SIGXFSZ is ignored, so a write past the limit fails with EFBIG. 0 on
 * success. */
int qv_test_fill_disk_at(long bytes);
/* Asserts that d->file holds exactly `size` bytes equal to `want` and that
 * the directory holds nothing else (no temporary file left). */
void qv_test_file_kept(const QvTestDir *d, const uint8_t *want, size_t size);
/* The "failed write keeps the file" check: d->file, already written and
 * larger than `limit` (the size the child's disk fills at), is rewritten by
 * child(d->file) in a forked child, which must return 0 (its write failed as
 * it should); then the file must hold exactly its old bytes and the directory
 * no temporary file. */
void qv_test_failed_write_keeps(const QvTestDir *d, long limit, int (*child)(const char *));

/* ---- the runner */

/* A group of tests with its fixtures. `name` is "" for a file's main group;
 * any other group is run by ctest as the test "<executable>_<name>"
 * (tests/CMakeLists.txt finds the names in QV_TEST_GROUP lines, so write each
 * group's name as a string literal on the line of its QV_TEST_GROUP). */
typedef struct QvTestGroup {
  const char *name;
  const struct CMUnitTest *tests;
  size_t n_tests;
  CMFixtureFunction setup, teardown;
} QvTestGroup;

#define QV_TEST_GROUP(name, tests, setup, teardown) \
  { (name), (tests), sizeof(tests) / sizeof((tests)[0]), (setup), (teardown) }

/* Runs the groups argv selects: every group with no arguments,
 * "--group=NAME" only that one, "--except=A,B" all but those (a name that no
 * group has is an error, so a stale list in CMake fails loudly). Prints how
 * many tests failed and skipped, and returns the exit status above. */
int qv_test_run_groups(int argc, char **argv, const QvTestGroup *groups, size_t n_groups);

/* One group, no selection: `return qv_test_run(tests, setup, teardown);`. */
#define qv_test_run(tests, setup, teardown) \
  qv_test_run_one_(__FILE__, (tests), sizeof(tests) / sizeof((tests)[0]), (setup), (teardown))
int qv_test_run_one_(const char *name, const struct CMUnitTest *tests, size_t n_tests,
                     CMFixtureFunction setup, CMFixtureFunction teardown);

/* cmocka does not tell a runner how many tests skipped: skip() is redefined
 * to count before it hands over to cmocka's _skip. */
#undef skip
#define skip() qv_test_skip_(__FILE__, __LINE__)
void qv_test_skip_(const char *file, int line);

/* A direct call would bypass the exit status above: make it a compile error. */
#undef cmocka_run_group_tests
#define cmocka_run_group_tests(tests, setup, teardown) \
  use_qv_test_run_from_test_util_h_instead_of_cmocka_run_group_tests

#endif
