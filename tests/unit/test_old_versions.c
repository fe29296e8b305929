/* MetadataVersion V1-V3 (before Arrow 0.8) is refused as Arrow C++ refuses
 * it, naming the version, in every message: a Schema message, a file's first
 * message and its record batches, a SparseTensor message (Tensor messages are
 * covered in test_tensor_ipc.c). A file's footer version is not a message's:
 * Arrow C++ 0.14.1 left it at V1 above V4 messages, so any footer version
 * reads. Each input is a real file from examples/data whose version field is
 * rewritten through quiver's own encoder or in place; V4 and V5 read. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "quiver/format.h"
#include "quiver/io.h"
#include "quiver/ipc.h"
#include "quiver/recordbatch_ipc.h"
#include "quiver/sparse_ipc.h"
#include "test_util.h"
#include "util/load.h"

static uint32_t le32(const uint8_t *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void put_le32(uint8_t *p, uint32_t v) {
  for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
}

static uint8_t *example(const char *name, size_t *size) {
  char path[1024];
  snprintf(path, sizeof path, "%s/examples/data/%s", QV_SOURCE_DIR, name);
  uint8_t *data = qv_test_read_file(path, size);
  assert_non_null(data);
  return data;
}

static void expect_version_refused(QvStatus st, const QvError *err, int16_t version) {
  if (version >= QV_METADATA_V4) {
    if (st != QV_OK) fail_msg("V%d refused: %s", version + 1, err->message);
    return;
  }
  assert_int_equal(st, QV_ENOTSUP);
  char want[64];
  snprintf(want, sizeof want, "MetadataVersion %s is not supported",
           qv_metadata_version_name(version));
  if (strstr(err->message, want) == NULL) fail_msg("'%s' lacks '%s'", err->message, want);
}

/* Reads every batch of the file in memory; returns the first failure. */
static QvStatus read_file_batches(const uint8_t *data, size_t n, QvError *err) {
  QvSource *src;
  assert_int_equal(qv_source_new_memory(&src, data, n, NULL, err), QV_OK);
  QvRbFileReader *reader = NULL;
  QvStatus st = qv_rb_file_reader_new(&reader, src, NULL, err);
  for (int64_t i = 0; !st && i < qv_rb_file_n_batches(reader); i++) {
    struct ArrowArray a;
    st = qv_rb_file_read_batch(reader, i, &a, err);
    if (!st) a.release(&a);
  }
  qv_rb_file_reader_free(reader);
  qv_source_free(src);
  return st;
}

/* The file's footer re-encoded with `version`; the rest of the file as is:
 * every version reads (0.14.1's footers say V1), batches included. */
static void test_footer_versions(void **state) {
  (void)state;
  size_t size;
  uint8_t *file = example("arrow_cpp_record_batches.arrow", &size);
  assert_true(size > 16);
  uint32_t flen = le32(file + size - 10);
  size_t foff = size - 10 - flen;
  for (int16_t v = QV_METADATA_V1; v <= QV_METADATA_V5; v++) {
    QvFooter footer;
    QvError err;
    assert_int_equal(qv_footer_decode(file + foff, flen, NULL, &footer, &err), QV_OK);
    footer.version = v;
    uint8_t *fb;
    size_t fb_size;
    assert_int_equal(qv_footer_encode(&footer, &fb, &fb_size, &err), QV_OK);
    qv_footer_reset(&footer);
    size_t n = foff + fb_size + 10;
    uint8_t *patched = malloc(n);
    assert_non_null(patched);
    memcpy(patched, file, foff);
    memcpy(patched + foff, fb, fb_size);
    put_le32(patched + foff + fb_size, (uint32_t)fb_size);
    memcpy(patched + foff + fb_size + 4, "ARROW1", 6);
    free(fb);
    QvStatus st = read_file_batches(patched, n, &err);
    if (st != QV_OK) fail_msg("footer V%d: %s", v + 1, err.message);
    free(patched);
  }
  free(file);
}

/* Sets the version field of the framed message at `pos` (continuation,
 * length, then the Message table) in place: the field must be stored. */
static void patch_message_version(uint8_t *file, size_t pos, int16_t version) {
  assert_int_equal(le32(file + pos), 0xFFFFFFFFu);
  const uint8_t *fb = file + pos + 8;
  uint32_t table = le32(fb);
  int32_t vt_rel = (int32_t)le32(fb + table);
  const uint8_t *vt = fb + table - vt_rel;
  uint16_t vt_size = (uint16_t)(vt[0] | vt[1] << 8);
  assert_true(vt_size >= 6); /* field 0 (version) has a slot */
  uint16_t field = (uint16_t)(vt[4] | vt[5] << 8);
  assert_true(field != 0);
  uint8_t *p = file + pos + 8 + table + field;
  p[0] = (uint8_t)((uint16_t)version & 0xFF);
  p[1] = (uint8_t)((uint16_t)version >> 8);
}

/* The footer as written, one message of the file set to `version` in place:
 * the file's first message (its Schema) when opening, or its first record
 * batch when reading it. */
static void test_file_message_versions(void **state) {
  (void)state;
  size_t size;
  uint8_t *file = example("arrow_cpp_record_batches.arrow", &size);
  QvFooter footer;
  QvError err;
  uint32_t flen = le32(file + size - 10);
  assert_int_equal(qv_footer_decode(file + size - 10 - flen, flen, NULL, &footer, &err), QV_OK);
  assert_true(footer.n_record_batches > 0);
  size_t batch_pos = (size_t)footer.record_batches[0].offset;
  qv_footer_reset(&footer);
  for (int16_t v = QV_METADATA_V1; v <= QV_METADATA_V5; v++) {
    uint8_t *copy = malloc(size);
    assert_non_null(copy);
    memcpy(copy, file, size);
    patch_message_version(copy, 8, v);
    expect_version_refused(read_file_batches(copy, size, &err), &err, v);
    memcpy(copy, file, size);
    patch_message_version(copy, batch_pos, v);
    expect_version_refused(read_file_batches(copy, size, &err), &err, v);
    free(copy);
  }
  free(file);
}

/* Message 0 of `name` re-encoded with `version` and framed again (64-byte
 * aligned, so the body stays aligned), its body after it; nothing else. */
static uint8_t *first_message_with_version(const char *name, int16_t version, size_t *out_size) {
  size_t size;
  uint8_t *file = example(name, &size);
  size_t pos = memcmp(file, "ARROW1", 6) == 0 ? 8 : 0;
  assert_true(size >= pos + 8 && le32(file + pos) == 0xFFFFFFFFu);
  uint32_t len = le32(file + pos + 4);
  QvMessage msg;
  QvError err;
  assert_int_equal(qv_message_decode(file + pos + 8, len, NULL, &msg, &err), QV_OK);
  bool sparse = msg.header_type == QV_HEADER_SPARSE_TENSOR;
  msg.version = version;
  const uint8_t *body = file + pos + 8 + len;
  int64_t body_length = msg.body_length;
  assert_true(body_length >= 0 && (size_t)body_length <= size - (pos + 8 + len));
  uint8_t *meta;
  size_t meta_size;
  assert_int_equal(qv_ipc_frame_message(&msg, 64, &meta, &meta_size, &err), QV_OK);
  qv_message_reset(&msg);
  uint8_t *out = malloc(meta_size + (size_t)body_length + 8);
  assert_non_null(out);
  memcpy(out, meta, meta_size);
  memcpy(out + meta_size, body, (size_t)body_length);
  if (QV_HOST_BIG_ENDIAN && sparse) {
    /* A SparseTensor body is in its writer's host order (no endianness
     * field); this one is from a little-endian Arrow C++ and every buffer
     * holds 8-byte words (int64 indptr and indices, float64 values): swapped,
     * it is what a big-endian writer produces. */
    for (int64_t k = 0; k + 8 <= body_length; k += 8)
      qvi_st_u64(out + meta_size + k, __builtin_bswap64(qvi_ld_u64(out + meta_size + k)));
  }
  memcpy(out + meta_size + body_length, qv_ipc_eos, 8);
  *out_size = meta_size + (size_t)body_length + 8;
  free(meta);
  free(file);
  return out;
}

static void test_schema_message_versions(void **state) {
  (void)state;
  for (int16_t v = QV_METADATA_V1; v <= QV_METADATA_V5; v++) {
    size_t n;
    uint8_t *stream = first_message_with_version("arrow_cpp_record_batches.arrow", v, &n);
    QvError err;
    QvSource *src;
    assert_int_equal(qv_source_new_memory(&src, stream, n, NULL, &err), QV_OK);
    struct ArrowArrayStream s;
    memset(&s, 0, sizeof s);
    QvStatus st = qv_rb_stream_reader_new(&s, src, NULL, &err);
    expect_version_refused(st, &err, v);
    if (st == QV_OK) s.release(&s);
    qv_source_free(src);
    free(stream);
  }
}

static void test_sparse_tensor_versions(void **state) {
  (void)state;
  for (int16_t v = QV_METADATA_V1; v <= QV_METADATA_V5; v++) {
    size_t n;
    uint8_t *bytes = first_message_with_version("arrow_cpp_csr_6x4.arrow", v, &n);
    QvError err;
    QvSource *src;
    assert_int_equal(qv_source_new_memory(&src, bytes, n, NULL, &err), QV_OK);
    QvSparseTensor t;
    memset(&t, 0, sizeof t);
    QvStatus st = qv_sparse_read(src, 0, NULL, &t, &err);
    expect_version_refused(st, &err, v);
    qv_sparse_reset(&t);
    qv_source_free(src);
    free(bytes);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_footer_versions),
      cmocka_unit_test(test_file_message_versions),
      cmocka_unit_test(test_schema_message_versions),
      cmocka_unit_test(test_sparse_tensor_versions),
  };
  return qv_test_run(tests, NULL, NULL);
}
