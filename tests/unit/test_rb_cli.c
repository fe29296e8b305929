/* The record batch commands of the CLI ($QV_CLI): validate, stream-to-file,
 * file-to-stream. */
#include <sys/wait.h>

#include "test_rb_helpers.h"
#include "test_util.h"

/* mkdtemp template: six trailing X */
static char g_dir[] = "/tmp/qv_rb_cli" "XX" "XX" "XX";

/* The CLI is built with the tests: absent is a failure, not a skip. ctest
 * sets QV_CLI; a test run by hand finds it in the build tree. */
static const char *cli(void) {
  const char *p = getenv("QV_CLI");
  return p && p[0] ? p : QV_BINARY_DIR "/quiver";
}

static int setup(void **state) {
  (void)state;
  if (access(cli(), X_OK) != 0) {
    print_error("the quiver CLI is not built: %s\n", cli());
    return -1;
  }
  return mkdtemp(g_dir) ? 0 : -1;
}

static int teardown(void **state) {
  (void)state;
  char cmd[256];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
  return system(cmd) == 0 ? 0 : -1;
}

static const char *path_of(const char *name) {
  static char buf[16][512];
  static int k;
  k = (k + 1) % 16;
  snprintf(buf[k], sizeof buf[k], "%s/%s", g_dir, name);
  return buf[k];
}

/* Runs a shell command; returns the exit status. */
static int run(const char *fmt, const char *a, const char *b) {
  char cmd[2048];
  snprintf(cmd, sizeof cmd, fmt, cli(), a, b);
  int st = system(cmd);
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static char *slurp(const char *path) {
  size_t n;
  char *t = (char *)qv_test_read_file(path, &n);
  assert_non_null(t);
  char *z = realloc(t, n + 1);
  z[n] = '\0';
  return z;
}

static void write_sample(const char *path, QvIpcFormat format, struct ArrowSchema *schema,
                         struct ArrowArray *batches) {
  const char *specs[] = {"i", "u", "+l(i{u})", "+s(g;vu)"};
  rbt_batch_schema(schema, specs, 4);
  rbt_build(&batches[0], schema, 30, 0);
  rbt_build(&batches[1], schema, 7, 3);
  struct ArrowArray *p[2] = {&batches[0], &batches[1]};
  QvRbWriteOptions o;
  memset(&o, 0, sizeof o);
  o.format = format;
  uint8_t *data;
  size_t size;
  rbt_write(schema, p, 2, &o, &data, &size);
  FILE *f = fopen(path, "wb");
  assert_non_null(f);
  assert_int_equal(fwrite(data, 1, size, f), size);
  fclose(f);
  free(data);
}

/* The batches of a stream or file equal the expected ones. */
static void expect_contents(const char *path, const struct ArrowSchema *schema,
                            struct ArrowArray *want) {
  size_t size;
  uint8_t *data = qv_test_read_file(path, &size);
  assert_non_null(data);
  struct ArrowSchema s;
  struct ArrowArray got[4];
  assert_int_equal(rbt_read_stream(data, size, &s, got, 4), 2);
  for (int i = 0; i < 2; i++) {
    RbtCells a = rbt_cells(&want[i], schema), b = rbt_cells(&got[i], &s);
    rbt_assert_same_cells(&a, &b, path);
    rbt_cells_free(&a);
    rbt_cells_free(&b);
    got[i].release(&got[i]);
  }
  s.release(&s);
  free(data);
}

static int codec_of_batches(const char *path) {
  size_t size;
  uint8_t *data = qv_test_read_file(path, &size);
  QvIpcReader *r;
  QvError e;
  rbt_check(qv_test_reader_memory(&r, data, size, &e), &e, "open");
  QvIpcMessage m;
  int codec = -2;
  while (qv_ipc_reader_next(r, &m, &e) == QV_OK) {
    if (m.message.header_type == QV_HEADER_RECORD_BATCH) {
      const QvRecordBatch *rb = &m.message.header.record_batch;
      codec = (int)rb->compression;
      assert_int_equal(m.body_offset % 64, 0);
    }
    qv_ipc_message_reset(&m);
  }
  qv_ipc_reader_free(r);
  free(data);
  return codec;
}

static void test_validate(void **state) {
  (void)state;
  struct ArrowSchema s;
  struct ArrowArray b[2];
  const char *file = path_of("good.arrow"), *stream = path_of("good.arrows");
  write_sample(file, QV_IPC_FORMAT_FILE, &s, b);
  b[0].release(&b[0]);
  b[1].release(&b[1]);
  s.release(&s);
  write_sample(stream, QV_IPC_FORMAT_STREAM, &s, b);
  const char *out = path_of("out.txt"), *err = path_of("err.txt");
  char redirect[1100];
  snprintf(redirect, sizeof redirect, "%s 2>%s", out, err);
  assert_int_equal(run("%s validate %s > %s", file, redirect), 0);
  char *text = slurp(out);
  assert_non_null(strstr(text, "valid Arrow file (2 record batches, 37 rows)"));
  free(text);
  assert_int_equal(run("%s validate --stream %s > %s", file, redirect), 0);
  assert_int_equal(run("%s validate - < %s > %s", stream, redirect), 0);
  text = slurp(out);
  assert_non_null(strstr(text, "valid Arrow stream (2 record batches, 37 rows)"));
  free(text);

  /* corrupt a string offset: invalid, with the reason */
  size_t size;
  uint8_t *data = qv_test_read_file(stream, &size);
  QvIpcReader *r;
  QvError e;
  rbt_check(qv_test_reader_memory(&r, data, size, &e), &e, "open");
  QvIpcMessage m;
  while (qv_ipc_reader_next(r, &m, &e) == QV_OK) {
    if (m.message.header_type == QV_HEADER_RECORD_BATCH) {
      const QvBuffer *off = &m.message.header.record_batch.buffers[3];
      int32_t bad = -5;
      memcpy(data + m.body_offset + off->offset + 8, &bad, 4);
      qv_ipc_message_reset(&m);
      break;
    }
    qv_ipc_message_reset(&m);
  }
  qv_ipc_reader_free(r);
  const char *bad = path_of("bad.arrows");
  FILE *f = fopen(bad, "wb");
  fwrite(data, 1, size, f);
  fclose(f);
  free(data);
  assert_int_equal(run("%s validate %s > %s", bad, redirect), 1);
  text = slurp(err);
  assert_non_null(strstr(text, "invalid"));
  assert_non_null(strstr(text, "offsets decrease"));
  free(text);
  /* truncated file */
  const char *cut = path_of("cut.arrow");
  char cmd[2048];
  snprintf(cmd, sizeof cmd, "head -c 500 '%s' > '%s'", file, cut);
  assert_int_equal(system(cmd), 0);
  assert_int_equal(run("%s validate %s > %s", cut, redirect), 1);
  assert_int_equal(run("%s validate %s > %s", "--no-such-option-and-two-paths extra", redirect), 2);
  b[0].release(&b[0]);
  b[1].release(&b[1]);
  s.release(&s);
}

static void test_conversions(void **state) {
  (void)state;
  struct ArrowSchema s;
  struct ArrowArray b[2];
  const char *stream = path_of("in.arrows");
  write_sample(stream, QV_IPC_FORMAT_STREAM, &s, b);
  const char *file = path_of("conv.arrow"), *back = path_of("back.arrows");
  assert_int_equal(run("%s stream-to-file < %s > %s", stream, file), 0);
  QvRbFileReader *f;
  QvError e;
  rbt_check(rbt_file_open_path(&f, file, NULL, &e), &e, "converted file");
  assert_int_equal(qv_rb_file_n_batches(f), 2);
  qv_rb_file_reader_free(f);
  expect_contents(file, &s, b);
  assert_int_equal(run("%s file-to-stream %s > %s", file, back), 0);
  expect_contents(back, &s, b);
  size_t size;
  uint8_t *head = qv_test_read_file(back, &size);
  assert_true(size > 8 && memcmp(head, "ARROW1", 6) != 0);
  free(head);

  const char *zfile = path_of("z.arrow"), *lstream = path_of("l.arrows");
  assert_int_equal(run("%s stream-to-file --compression zstd --align 64 < %s > %s", stream, zfile), 0);
  assert_int_equal(codec_of_batches(zfile), QV_COMPRESSION_ZSTD);
  expect_contents(zfile, &s, b);
  assert_int_equal(run("%s file-to-stream --compression lz4 --align 64 %s > %s", zfile, lstream), 0);
  assert_int_equal(codec_of_batches(lstream), QV_COMPRESSION_LZ4_FRAME);
  expect_contents(lstream, &s, b);

  /* bad input and bad usage */
  assert_int_equal(run("%s stream-to-file < %s > %s", "/dev/null", path_of("none.arrow")), 1);
  assert_int_equal(run("%s file-to-stream %s > %s", stream, path_of("none.arrows")), 1);
  assert_int_equal(run("%s stream-to-file --compression brotli < %s > %s", stream, path_of("x")), 2);
  b[0].release(&b[0]);
  b[1].release(&b[1]);
  s.release(&s);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_validate),
      cmocka_unit_test(test_conversions),
  };
  return qv_test_run(tests, setup, teardown);
}
