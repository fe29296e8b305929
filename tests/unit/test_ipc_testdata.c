/* Every file Arrow C++ wrote (/work/shared/testdata/arrow-cpp) frames
 * cleanly through the memory, path (mapped whole, or pread + one mapping per
 * body) and file descriptor readers; the crafted truncated file is reported
 * as truncated. Skips when the data is absent. */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "quiver/ipc.h"
#include "test_util.h"

static bool has_suffix(const char *s, const char *suffix) {
  size_t n = strlen(s), m = strlen(suffix);
  return n >= m && strcmp(s + n - m, suffix) == 0;
}

typedef enum { VIA_MEMORY, VIA_PATH, VIA_PATH_EACH, VIA_FD, VIA_COUNT } Via;
static const char *via_name[] = {"memory", "path", "path (pread + a mapping per body)", "fd"};

static QvStatus open_via(Via via, const char *path, const uint8_t *data, size_t size, int *fd,
                         QvIpcReader **r, QvError *err) {
  *fd = -1;
  switch (via) {
    case VIA_MEMORY:
      return qv_test_reader_memory(r, data, size, err);
    case VIA_PATH:
      return qv_test_reader_path(r, path, err);
    case VIA_PATH_EACH: {
      QvSource *src;
      QvStatus st = qv_source_new_path(&src, path, err);
      assert_int_equal(st, QV_OK);
      QvIpcReaderOptions o = {.struct_size = sizeof o, .map_each_body = true};
      st = qv_ipc_reader_new(r, src, &o, err);
      qv_source_free(src); /* the reader holds its own reference */
      return st;
    }
    default:
      *fd = open(path, O_RDONLY);
      assert_true(*fd >= 0);
      return qv_test_reader_fd(r, *fd, err);
  }
}

/* Reads every message; returns the final status and the count. */
static QvStatus drain(QvIpcReader *r, int64_t *count, int64_t *last_end, QvError *err) {
  *count = 0;
  *last_end = 0;
  for (;;) {
    QvIpcMessage msg;
    QvStatus st = qv_ipc_reader_next(r, &msg, err);
    if (st) return st;
    assert_true(msg.body_offset >= msg.offset + msg.metadata_length);
    assert_true(msg.metadata_length > 0);
    /* touch the whole body: it must be readable */
    unsigned sum = 0;
    for (int64_t i = 0; i < msg.body_length; i++) sum += msg.body[i];
    (void)sum;
    *last_end = msg.body_offset + msg.body_length;
    (*count)++;
    qv_ipc_message_reset(&msg);
  }
}

static void check_valid_file(const char *path) {
  size_t size;
  uint8_t *data = qv_test_read_file(path, &size);
  assert_non_null(data);
  int64_t counts[VIA_COUNT];
  for (Via via = 0; via < VIA_COUNT; via++) {
    QvIpcReader *r;
    QvError err;
    int fd;
    QvStatus st = open_via(via, path, data, size, &fd, &r, &err);
    if (st) fail_msg("%s (%s): open: %s", path, via_name[via], err.message);
    int64_t n, end;
    st = drain(r, &n, &end, &err);
    if (st != QV_EOS)
      fail_msg("%s (%s): %s: %s", path, via_name[via], qv_status_name(st), err.message);
    if (n < 1) fail_msg("%s (%s): no message", path, via_name[via]);
    counts[via] = n;
    /* still at the end */
    QvIpcMessage msg;
    assert_int_equal(qv_ipc_reader_next(r, &msg, &err), QV_EOS);
    if (qv_ipc_reader_format(r) == QV_IPC_FORMAT_FILE) {
      assert_true(has_suffix(path, ".arrow"));
      QvFooter f;
      int64_t foff;
      st = qv_ipc_reader_footer(r, &f, &foff, NULL, &err);
      if (st) fail_msg("%s (%s): footer: %s", path, via_name[via], err.message);
      assert_true(foff >= end);
      /* every block points at a message prefix inside the message area */
      for (int64_t i = 0; i < f.n_record_batches; i++) {
        const QvBlock *b = &f.record_batches[i];
        assert_true(b->offset >= 8 && b->offset + b->meta_data_length + b->body_length <= foff);
      }
      qv_footer_reset(&f);
    } else {
      assert_true(has_suffix(path, ".arrow") || has_suffix(path, ".arrows"));
    }
    qv_ipc_reader_free(r);
    if (fd >= 0) close(fd);
  }
  assert_int_equal(counts[VIA_MEMORY], counts[VIA_PATH]);
  assert_int_equal(counts[VIA_MEMORY], counts[VIA_FD]);
  free(data);
}

static void test_all_arrow_cpp_files(void **state) {
  (void)state;
  if (!qv_test_have_shared()) {
    print_message("skipped: %s absent\n", qv_test_shared_path(""));
    skip();
  }
  DIR *dir = opendir(qv_test_shared_path(""));
  assert_non_null(dir);
  int checked = 0, files = 0, streams = 0;
  struct dirent *e;
  while ((e = readdir(dir)) != NULL) {
    if (!has_suffix(e->d_name, ".arrow") && !has_suffix(e->d_name, ".arrows")) continue;
    char path[4096];
    snprintf(path, sizeof path, "%s", qv_test_shared_path(e->d_name));
    check_valid_file(path);
    checked++;
    if (has_suffix(e->d_name, ".arrows")) streams++;
    else files++;
  }
  closedir(dir);
  print_message("framed %d files (%d .arrow, %d .arrows)\n", checked, files, streams);
  assert_true(checked > 0);
}

/* Record batch files and streams: the known message counts. */
static void test_record_batch_files(void **state) {
  (void)state;
  if (!qv_test_have_shared()) {
    print_message("skipped: %s absent\n", qv_test_shared_path(""));
    skip();
  }
  const char *names[] = {"rb_file_mixed_nulls.arrow", "rb_stream_mixed_nulls.arrows",
                         "rb_stream_schema_only.arrows"};
  const QvIpcFormat formats[] = {QV_IPC_FORMAT_FILE, QV_IPC_FORMAT_STREAM, QV_IPC_FORMAT_STREAM};
  for (size_t i = 0; i < 3; i++) {
    QvIpcReader *r;
    QvError err;
    const char *path = qv_test_shared_path(names[i]);
    assert_int_equal(qv_test_reader_path(&r, path, &err), QV_OK);
    assert_int_equal(qv_ipc_reader_format(r), formats[i]);
    QvIpcMessage msg;
    assert_int_equal(qv_ipc_reader_next(r, &msg, &err), QV_OK);
    /* a stream and a file both start with the schema */
    assert_int_equal(msg.message.header_type, QV_HEADER_SCHEMA);
    assert_int_equal(msg.offset, formats[i] == QV_IPC_FORMAT_FILE ? 8 : 0);
    assert_false(msg.legacy_prefix);
    assert_int_equal((msg.offset + 8 + msg.metadata_length) % 8, 0);
    qv_ipc_message_reset(&msg);
    if (formats[i] == QV_IPC_FORMAT_FILE) {
      /* the footer's blocks are exactly the record batches the stream holds */
      QvFooter f;
      assert_int_equal(qv_ipc_reader_footer(r, &f, NULL, NULL, &err), QV_OK);
      int64_t seen = 0;
      while (qv_ipc_reader_next(r, &msg, &err) == QV_OK) {
        if (msg.message.header_type == QV_HEADER_RECORD_BATCH) {
          assert_true(seen < f.n_record_batches);
          assert_int_equal(f.record_batches[seen].offset, msg.offset);
          assert_int_equal(f.record_batches[seen].meta_data_length, 8 + msg.metadata_length);
          assert_int_equal(f.record_batches[seen].body_length, msg.body_length);
          seen++;
        }
        qv_ipc_message_reset(&msg);
      }
      assert_int_equal(seen, f.n_record_batches);
      assert_true(seen > 0);
      qv_footer_reset(&f);
    }
    qv_ipc_reader_free(r);
  }
}

static void test_truncated_tensor_body(void **state) {
  (void)state;
  if (!qv_test_have_shared()) {
    print_message("skipped: %s absent\n", qv_test_shared_path(""));
    skip();
  }
  const char *path = qv_test_shared_path("invalid/tensor_float64_3x4_truncated_body.arrow");
  size_t size;
  uint8_t *data = qv_test_read_file(path, &size);
  assert_non_null(data);
  for (Via via = 0; via < VIA_COUNT; via++) {
    QvIpcReader *r;
    QvError err;
    int fd;
    assert_int_equal(open_via(via, path, data, size, &fd, &r, &err), QV_OK);
    QvIpcMessage msg;
    QvStatus st = qv_ipc_reader_next(r, &msg, &err);
    if (st != QV_ETRUNCATED)
      fail_msg("%s: expected QV_ETRUNCATED, got %s", via_name[via], qv_status_name(st));
    assert_non_null(strstr(err.message, "message at offset 0: body needs 96 bytes, only 88 remain"));
    assert_int_equal(qv_ipc_reader_next(r, &msg, NULL), QV_ETRUNCATED);
    qv_ipc_reader_free(r);
    if (fd >= 0) close(fd);
  }
  free(data);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_all_arrow_cpp_files),
      cmocka_unit_test(test_record_batch_files),
      cmocka_unit_test(test_truncated_tensor_body),
  };
  return qv_test_run(tests, NULL, NULL);
}
