#include "test_util.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <dirent.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

uint8_t *qv_test_read_file(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  if (f == NULL) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  uint8_t *buf = malloc(n > 0 ? (size_t)n : 1);
  if (buf && n > 0 && fread(buf, 1, (size_t)n, f) != (size_t)n) {
    free(buf);
    buf = NULL;
  }
  fclose(f);
  *size = n > 0 ? (size_t)n : 0;
  return buf;
}

int qv_test_have_shared(void) {
  struct stat st;
  return stat(QV_SHARED_DIR "/testdata/arrow-cpp", &st) == 0 && S_ISDIR(st.st_mode);
}

const char *qv_test_shared_path(const char *name) {
  static char path[4096];
  snprintf(path, sizeof path, "%s/testdata/arrow-cpp/%s", QV_SHARED_DIR, name);
  return path;
}

/* ---- the runner */

static size_t g_skipped;

void qv_test_skip_(const char *file, int line) {
  g_skipped++;
  _skip(file, line);
}

/* True when `name` is one of the comma-separated names in `list`. */
static bool in_list(const char *list, const char *name) {
  size_t n = strlen(name);
  for (const char *p = list; *p;) {
    const char *end = strchr(p, ',');
    size_t len = end ? (size_t)(end - p) : strlen(p);
    if (len == n && strncmp(p, name, n) == 0) return true;
    if (end == NULL) break;
    p = end + 1;
  }
  return false;
}

/* Every name in `list` names a group. */
static bool all_known(const char *list, const QvTestGroup *groups, size_t n_groups) {
  for (const char *p = list; *p;) {
    const char *end = strchr(p, ',');
    size_t len = end ? (size_t)(end - p) : strlen(p);
    bool found = false;
    for (size_t g = 0; g < n_groups && !found; g++)
      found = strlen(groups[g].name) == len && strncmp(groups[g].name, p, len) == 0;
    if (!found) {
      fprintf(stderr, "no test group named '%.*s'\n", (int)len, p);
      return false;
    }
    if (end == NULL) break;
    p = end + 1;
  }
  return true;
}

int qv_test_run_groups(int argc, char **argv, const QvTestGroup *groups, size_t n_groups) {
  const char *only = NULL, *except = NULL;
  for (int i = 1; i < argc; i++) {
    if (strncmp(argv[i], "--group=", 8) == 0) {
      only = argv[i] + 8;
    } else if (strncmp(argv[i], "--except=", 9) == 0) {
      except = argv[i] + 9;
    } else {
      fprintf(stderr, "usage: %s [--group=NAME | --except=NAME,...]\n", argv[0]);
      return 1;
    }
  }
  if ((only && !all_known(only, groups, n_groups)) || (except && !all_known(except, groups, n_groups)))
    return 1;
  size_t total = 0, failed = 0, skipped = 0;
  for (size_t g = 0; g < n_groups; g++) {
    if (only && strcmp(groups[g].name, only) != 0) continue;
    if (except && in_list(except, groups[g].name)) continue;
    size_t skipped_before = g_skipped;
    int f = _cmocka_run_group_tests(groups[g].name[0] ? groups[g].name : "tests", groups[g].tests,
                                    groups[g].n_tests, groups[g].setup, groups[g].teardown);
    total += groups[g].n_tests;
    failed += f > 0 ? (size_t)f : 0;
    skipped += g_skipped - skipped_before;
  }
  /* cmocka counts a failed group setup as one failure and runs none of the
   * group's tests, so the number of passes is not known here; cmocka's own
   * lines above give it per group */
  const char *slash = strrchr(argv[0], '/');
  printf("%s: %zu tests, %zu failed, %zu skipped\n", slash ? slash + 1 : argv[0], total, failed,
         skipped);
  if (failed > 0) return 1;
  if (total == 0) {
    fprintf(stderr, "no test ran\n");
    return 1;
  }
  return skipped > 0 ? 77 : 0;
}

int qv_test_run_one_(const char *name, const struct CMUnitTest *tests, size_t n_tests,
                     CMFixtureFunction setup, CMFixtureFunction teardown) {
  QvTestGroup g = {"", tests, n_tests, setup, teardown};
  char *argv[] = {(char *)name, NULL};
  return qv_test_run_groups(1, argv, &g, 1);
}

/* The reader takes its own reference to the source; drop the caller's. */
static QvStatus reader_over(QvIpcReader **r, QvSource *src, QvError *err) {
  QvStatus st = qv_ipc_reader_new(r, src, NULL, err);
  qv_source_free(src);
  return st;
}

QvStatus qv_test_reader_memory(QvIpcReader **r, const void *data, size_t size, QvError *err) {
  *r = NULL;
  QvSource *src;
  QvStatus st = qv_source_new_memory(&src, data, size, NULL, err);
  return st ? st : reader_over(r, src, err);
}

QvStatus qv_test_reader_path(QvIpcReader **r, const char *path, QvError *err) {
  *r = NULL;
  QvSource *src;
  QvStatus st = qv_source_new_path(&src, path, err);
  return st ? st : reader_over(r, src, err);
}

QvStatus qv_test_reader_fd(QvIpcReader **r, int fd, QvError *err) {
  *r = NULL;
  QvSource *src;
  QvStatus st = qv_source_new_fd(&src, fd, err);
  return st ? st : reader_over(r, src, err);
}

/* ---- tensor and sparse readers and writers over a source or sink made
 * for the call */

typedef QvStatus (*ReadFn)(QvSource *src, int64_t index, void *out, QvError *err);
typedef QvStatus (*WriteFn)(const void *t, const void *options, QvSink *sink, QvError *err);

static QvStatus read_tensor(QvSource *src, int64_t index, void *out, QvError *err) {
  return qv_tensor_read(src, index, NULL, out, err);
}
static QvStatus read_sparse(QvSource *src, int64_t index, void *out, QvError *err) {
  return qv_sparse_read(src, index, NULL, out, err);
}
static QvStatus write_tensor(const void *t, const void *options, QvSink *sink, QvError *err) {
  (void)options;
  return qv_tensor_write(t, sink, NULL, err);
}
static QvStatus write_sparse(const void *t, const void *options, QvSink *sink, QvError *err) {
  return qv_sparse_write(t, sink, options, err);
}

/* Reads with fn from src (st: how making src went); drops src. */
static QvStatus read_from(ReadFn fn, QvSource *src, QvStatus st, int64_t index, void *out,
                          size_t out_size, QvError *err) {
  if (st) {
    memset(out, 0, out_size);
    return st;
  }
  st = fn(src, index, out, err);
  qv_source_free(src);
  return st;
}

/* Writes with fn into sink, finishes it on success, frees it. */
static QvStatus write_into(WriteFn fn, const void *t, const void *options, QvSink *sink,
                          QvStatus st, size_t *written, QvError *err) {
  if (written) *written = 0;
  if (st) return st;
  st = fn(t, options, sink, err);
  if (st == QV_OK) st = qv_sink_finish(sink, err);
  if (st == QV_OK && written) *written = (size_t)qv_sink_bytes_written(sink);
  qv_sink_free(sink);
  return st;
}

QvStatus qv_test_tensor_read_memory(const void *data, size_t size, QvOwner *owner, int64_t index,
                                    QvTensor *out, QvError *err) {
  QvSource *src = NULL;
  QvStatus st = qv_source_new_memory(&src, data, size, owner, err);
  return read_from(read_tensor, src, st, index, out, sizeof *out, err);
}

QvStatus qv_test_tensor_read_path(const char *path, int64_t index, QvTensor *out, QvError *err) {
  QvSource *src = NULL;
  QvStatus st = qv_source_new_path(&src, path, err);
  return read_from(read_tensor, src, st, index, out, sizeof *out, err);
}

QvStatus qv_test_tensor_read_fd(int fd, int64_t index, QvTensor *out, QvError *err) {
  QvSource *src = NULL;
  QvStatus st = qv_source_new_fd(&src, fd, err);
  return read_from(read_tensor, src, st, index, out, sizeof *out, err);
}

QvStatus qv_test_tensor_write_buffer(const QvTensor *t, void *dst, size_t cap, size_t *written,
                                     QvError *err) {
  QvSink *sink = NULL;
  QvStatus st = qv_sink_new_buffer(&sink, dst, cap, err);
  return write_into(write_tensor, t, NULL, sink, st, written, err);
}

QvStatus qv_test_tensor_write_path(const QvTensor *t, const char *path, QvError *err) {
  QvSink *sink = NULL;
  QvStatus st = qv_sink_new_path(&sink, path, QV_SINK_NO_FSYNC, err);
  return write_into(write_tensor, t, NULL, sink, st, NULL, err);
}

QvStatus qv_test_tensor_write_fd(const QvTensor *t, int fd, QvError *err) {
  QvSink *sink = NULL;
  QvStatus st = qv_sink_new_fd(&sink, fd, err);
  return write_into(write_tensor, t, NULL, sink, st, NULL, err);
}

QvStatus qv_test_sparse_read_memory(const void *data, size_t size, QvOwner *owner, int64_t index,
                                    QvSparseTensor *out, QvError *err) {
  QvSource *src = NULL;
  QvStatus st = qv_source_new_memory(&src, data, size, owner, err);
  return read_from(read_sparse, src, st, index, out, sizeof *out, err);
}

QvStatus qv_test_sparse_read_path(const char *path, int64_t index, QvSparseTensor *out,
                                  QvError *err) {
  QvSource *src = NULL;
  QvStatus st = qv_source_new_path(&src, path, err);
  return read_from(read_sparse, src, st, index, out, sizeof *out, err);
}

QvStatus qv_test_sparse_read_fd(int fd, int64_t index, QvSparseTensor *out, QvError *err) {
  QvSource *src = NULL;
  QvStatus st = qv_source_new_fd(&src, fd, err);
  return read_from(read_sparse, src, st, index, out, sizeof *out, err);
}

QvStatus qv_test_sparse_write_buffer(const QvSparseTensor *t, const QvSparseWriteOptions *o,
                                     void *dst, size_t cap, size_t *written, QvError *err) {
  QvSink *sink = NULL;
  QvStatus st = qv_sink_new_buffer(&sink, dst, cap, err);
  return write_into(write_sparse, t, o, sink, st, written, err);
}

QvStatus qv_test_sparse_write_path(const QvSparseTensor *t, const QvSparseWriteOptions *o,
                                   const char *path, QvError *err) {
  QvSink *sink = NULL;
  QvStatus st = qv_sink_new_path(&sink, path, QV_SINK_NO_FSYNC, err);
  return write_into(write_sparse, t, o, sink, st, NULL, err);
}

QvStatus qv_test_sparse_write_fd(const QvSparseTensor *t, const QvSparseWriteOptions *o, int fd,
                                 QvError *err) {
  QvSink *sink = NULL;
  QvStatus st = qv_sink_new_fd(&sink, fd, err);
  return write_into(write_sparse, t, o, sink, st, NULL, err);
}

/* ---- same-path and failed-write tests */

void qv_test_dir_make(QvTestDir *d, const char *name) {
  strcpy(d->path, "/tmp/qv_same_path_XXXXXX");
  assert_non_null(mkdtemp(d->path));
  snprintf(d->file, sizeof d->file, "%s/%s", d->path, name);
}

int qv_test_dir_count(const QvTestDir *d) {
  DIR *h = opendir(d->path);
  assert_non_null(h);
  int n = 0;
  struct dirent *e;
  while ((e = readdir(h)) != NULL)
    if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) n++;
  closedir(h);
  return n;
}

void qv_test_dir_remove(QvTestDir *d) {
  unlink(d->file);
  assert_int_equal(qv_test_dir_count(d), 0);
  rmdir(d->path);
}

uint8_t *qv_test_slurp(const char *path, size_t *size) {
  uint8_t *b = qv_test_read_file(path, size);
  assert_non_null(b);
  return b;
}

bool qv_test_is_mapping_of(const void *p, const char *path) {
  FILE *f = fopen("/proc/self/maps", "r");
  assert_non_null(f);
  char line[1024];
  bool found = false;
  while (!found && fgets(line, sizeof line, f)) {
    unsigned long lo, hi;
    if (sscanf(line, "%lx-%lx", &lo, &hi) != 2) continue;
    found = (uintptr_t)p >= lo && (uintptr_t)p < hi && strstr(line, path) != NULL;
  }
  fclose(f);
  return found;
}

int qv_test_in_child(int (*fn)(const char *), const char *arg) {
  fflush(NULL);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) _exit(fn(arg));
  int status;
  assert_int_equal(waitpid(pid, &status, 0), pid);
  assert_true(WIFEXITED(status));
  return WEXITSTATUS(status);
}

int qv_test_fill_disk_at(long bytes) {
  signal(SIGXFSZ, SIG_IGN);
  struct rlimit rl = {(rlim_t)bytes, (rlim_t)bytes};
  return setrlimit(RLIMIT_FSIZE, &rl) == 0 ? 0 : -1;
}

void qv_test_file_kept(const QvTestDir *d, const uint8_t *want, size_t size) {
  size_t after_size;
  uint8_t *after = qv_test_slurp(d->file, &after_size);
  assert_int_equal(after_size, size);
  assert_memory_equal(after, want, size);
  assert_int_equal(qv_test_dir_count(d), 1); /* no temporary file left */
  free(after);
}

void qv_test_failed_write_keeps(const QvTestDir *d, long limit, int (*child)(const char *)) {
  size_t size;
  uint8_t *before = qv_test_slurp(d->file, &size);
  assert_true(size > (size_t)limit); /* over the child's limit */
  assert_int_equal(qv_test_in_child(child, d->file), 0);
  qv_test_file_kept(d, before, size);
  free(before);
}

QvStatus qv_test_json_read_text(QvJsonFile **out, const char *text, size_t len,
                                const QvJsonReadOptions *options, QvError *err) {
  QvSource *src;
  QvStatus st = qv_source_new_memory(&src, text, len, NULL, err);
  if (st) return st;
  st = qv_json_read(out, src, options, err);
  qv_source_free(src);
  return st;
}

QvStatus qv_test_json_write_text(const QvJsonData *data, const QvJsonWriteOptions *options,
                                 char **text, size_t *len, QvError *err) {
  *text = NULL;
  QvSink *sink;
  QvStatus st = qv_sink_new_memory(&sink, err);
  if (st) return st;
  uint8_t *bytes = NULL;
  size_t n = 0;
  if ((st = qv_json_write(data, sink, options, err)) == QV_OK)
    st = qv_sink_memory_take(sink, &bytes, &n, err);
  qv_sink_free(sink);
  if (st) return st;
  *text = malloc(n + 1);
  if (*text == NULL) {
    qv_free(bytes);
    return qv_error_set(err, QV_ENOMEM, "out of memory");
  }
  if (n) memcpy(*text, bytes, n);
  (*text)[n] = '\0';
  if (len) *len = n;
  qv_free(bytes);
  return QV_OK;
}

static void *test_writer_run(void *arg) {
  QvTestWriter *w = arg;
  size_t done = 0;
  while (done < w->size) {
    size_t n = w->size - done;
    if (w->chunk > 0 && n > w->chunk) n = w->chunk;
    ssize_t k = write(w->fd, w->data + done, n);
    if (k <= 0) break;
    done += (size_t)k;
  }
  close(w->fd);
  return NULL;
}

void qv_test_writer_start(QvTestWriter *w, int fd, const void *data, size_t size, size_t chunk) {
  *w = (QvTestWriter){.fd = fd, .data = data, .size = size, .chunk = chunk};
  assert_int_equal(pthread_create(&w->thread, NULL, test_writer_run, w), 0);
}

void qv_test_writer_join(QvTestWriter *w) { pthread_join(w->thread, NULL); }
