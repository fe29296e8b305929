/* Hostile inputs: truncated streams and files, lying footers, buffers and
 * offsets outside the body, wrong counts, bad compression, old versions and
 * random corruption. Every case must end in a clear error (never a crash,
 * which the sanitizer build checks). */
#include "test_rb_helpers.h"
#include "test_util.h"
#include "util/load.h"

static const char *const kSpecs[] = {"i", "u", "+l(l)", "i{u}", "vu", "+s(b;+r(i;u))"};
#define N_SPECS 6

/* A small stream or file with two batches of every kSpecs column. */
static uint8_t *sample_rows(QvIpcFormat format, QvCompression comp, int64_t rows, size_t *size) {
  struct ArrowSchema s;
  rbt_batch_schema(&s, kSpecs, N_SPECS);
  struct ArrowArray b[2];
  rbt_build(&b[0], &s, rows, 0);
  rbt_build(&b[1], &s, 9, 5);
  struct ArrowArray *p[2] = {&b[0], &b[1]};
  QvRbWriteOptions o;
  memset(&o, 0, sizeof o);
  o.format = format;
  o.compression = comp;
  uint8_t *data;
  rbt_write(&s, p, 2, &o, &data, size);
  b[0].release(&b[0]);
  b[1].release(&b[1]);
  s.release(&s);
  return data;
}

static uint8_t *sample(QvIpcFormat format, QvCompression comp, size_t *size) {
  return sample_rows(format, comp, 20, size);
}

/* Reads a stream to the end with full validation; returns the status and
 * the number of batches read. */
static QvStatus read_stream(const uint8_t *data, size_t size, const QvRbReadOptions *opt,
                            int *batches, QvError *e) {
  QvRbReadOptions o;
  memset(&o, 0, sizeof o);
  o.validate = QV_VALIDATE_FULL;
  if (opt) o = *opt;
  *batches = 0;
  struct ArrowArrayStream s;
  QvStatus st = rbt_stream_open(&s, data, size, &o, e);
  if (st) return st;
  for (;;) {
    struct ArrowArray a;
    if ((st = qv_rb_stream_get_next(&s, &a, e))) break;
    (*batches)++;
    a.release(&a);
  }
  s.release(&s);
  return st == QV_EOS ? QV_OK : st;
}

static QvStatus read_file(const uint8_t *data, size_t size, QvError *e) {
  QvRbReadOptions o;
  memset(&o, 0, sizeof o);
  o.validate = QV_VALIDATE_FULL;
  QvRbFileReader *f;
  QvStatus st = rbt_file_open(&f, data, size, &o, e);
  if (st) return st;
  for (int64_t i = 0; i < qv_rb_file_n_batches(f) && !st; i++) {
    struct ArrowArray a;
    if ((st = qv_rb_file_read_batch(f, i, &a, e)) == QV_OK) a.release(&a);
  }
  qv_rb_file_reader_free(f);
  return st;
}

static void expect_error(QvStatus st, const QvError *e, const char *text) {
  if (st == QV_OK) fail_msg("expected an error mentioning \"%s\"", text);
  if (strstr(e->message, text) == NULL) fail_msg("error \"%s\" does not mention \"%s\"", e->message, text);
}

/* Where each message of a stream ends, found by walking the framing by hand
 * (continuation marker, int32 metadata length, the Message's bodyLength):
 * ends[i] is the offset just past message i, batches_before[i] the number of
 * record batches among messages 0..i. Returns the message count; the walk
 * stops at the end-of-stream marker, whose end is *eos_end. */
typedef struct Boundaries {
  size_t ends[32];
  int batches_before[32];
  int n;
  size_t eos_end;
} Boundaries;

static void walk_framing(const uint8_t *data, size_t size, Boundaries *b) {
  memset(b, 0, sizeof *b);
  size_t pos = 0;
  int batches = 0;
  for (;;) {
    assert_true(pos + 8 <= size);
    uint32_t marker = qvi_le_u32(data + pos); /* framing: little-endian */
    int32_t len = qvi_le_i32(data + pos + 4);
    assert_int_equal(marker, 0xFFFFFFFFu); /* quiver writes the current framing */
    if (len == 0) {
      b->eos_end = pos + 8;
      return;
    }
    assert_true(len > 0 && pos + 8 + (size_t)len <= size);
    QvMessage m;
    QvError e;
    rbt_check(qv_message_decode(data + pos + 8, (size_t)len, NULL, &m, &e), &e, "decode");
    assert_true(m.body_length >= 0);
    size_t end = pos + 8 + (size_t)len + (size_t)m.body_length;
    assert_true(end <= size);
    if (m.header_type == QV_HEADER_RECORD_BATCH) batches++;
    qv_message_reset(&m);
    assert_true(b->n < 32);
    b->ends[b->n] = end;
    b->batches_before[b->n] = batches;
    b->n++;
    pos = end;
  }
}

/* A stream cut at every byte: a cut at a message boundary is a stream that
 * ends without its marker, read in full with the batches before the cut (at
 * 0 there is no Schema: "no Schema message"); every other cut is
 * QV_ETRUNCATED. */
static void check_stream_cuts(QvCompression comp) {
  size_t size;
  uint8_t *data = sample(QV_IPC_FORMAT_STREAM, comp, &size);
  int full;
  QvError e;
  assert_int_equal(read_stream(data, size, NULL, &full, &e), QV_OK);
  assert_int_equal(full, 2);
  Boundaries b;
  walk_framing(data, size, &b);
  assert_int_equal(b.eos_end, size);
  assert_true(b.n >= 4); /* schema, dictionary, two batches */
  int boundaries_seen = 0;
  for (size_t n = 0; n <= size; n++) {
    uint8_t *copy = malloc(n ? n : 1); /* exact size: ASan sees any overread */
    memcpy(copy, data, n);
    int got = -1;
    QvStatus st = read_stream(copy, n, NULL, &got, &e);
    int at = -1;
    for (int i = 0; i < b.n; i++)
      if (b.ends[i] == n) at = i;
    if (n == 0) {
      if (st != QV_EINVAL || strstr(e.message, "empty input (0 bytes)") == NULL)
        fail_msg("cut at 0: %s (%s)", qv_status_name(st), e.message);
    } else if (at >= 0 || n == size) {
      if (st != QV_OK) fail_msg("cut at boundary %zu: %s (%s)", n, qv_status_name(st), e.message);
      assert_int_equal(got, at >= 0 ? b.batches_before[at] : 2);
      boundaries_seen++;
    } else if (st != QV_ETRUNCATED) {
      fail_msg("cut at %zu (inside a message or the marker): %s (%s)", n, qv_status_name(st),
               st ? e.message : "accepted");
    }
    free(copy);
  }
  assert_int_equal(boundaries_seen, b.n + 1);
  free(data);
}

static void test_truncated(void **state) {
  (void)state;
  check_stream_cuts(QV_COMPRESSION_NONE);
  check_stream_cuts(QV_COMPRESSION_LZ4_FRAME);
  size_t size;
  uint8_t *data;
  QvError e;
  /* a file is read through its footer, at its end: every cut is an error */
  data = sample(QV_IPC_FORMAT_FILE, QV_COMPRESSION_ZSTD, &size);
  assert_int_equal(read_file(data, size, &e), QV_OK);
  for (size_t n = 0; n < size; n++) {
    uint8_t *copy = malloc(n ? n : 1);
    memcpy(copy, data, n);
    assert_int_not_equal(read_file(copy, n, &e), QV_OK);
    free(copy);
  }
  free(data);
}

/* Replaces the footer of a file with a modified one. */
typedef void (*FooterEdit)(QvBlock *dicts, int64_t nd, QvBlock *batches, int64_t nb, QvFooter *f);

static uint8_t *edit_footer(const uint8_t *data, size_t size, FooterEdit edit, size_t *out_size) {
  QvIpcReader *r;
  QvError e;
  rbt_check(qv_test_reader_memory(&r, data, size, &e), &e, "open");
  QvFooter f;
  int64_t off;
  int32_t len;
  rbt_check(qv_ipc_reader_footer(r, &f, &off, &len, &e), &e, "footer");
  QvBlock dicts[8], batches[8];
  assert_true(f.n_dictionaries <= 8 && f.n_record_batches <= 8);
  memcpy(dicts, f.dictionaries, (size_t)f.n_dictionaries * sizeof *dicts);
  memcpy(batches, f.record_batches, (size_t)f.n_record_batches * sizeof *batches);
  f.dictionaries = dicts;
  f.record_batches = batches;
  edit(dicts, f.n_dictionaries, batches, f.n_record_batches, &f);
  uint8_t *fb;
  size_t fb_size;
  rbt_check(qv_footer_encode(&f, &fb, &fb_size, &e), &e, "encode");
  *out_size = (size_t)off + fb_size + 10;
  uint8_t *out = malloc(*out_size);
  memcpy(out, data, (size_t)off);
  memcpy(out + off, fb, fb_size);
  qvi_st_le_u32(out + off + fb_size, (uint32_t)fb_size);
  memcpy(out + off + fb_size + 4, "ARROW1", 6);
  free(fb);
  qv_footer_reset(&f);
  qv_ipc_reader_free(r);
  return out;
}

static void shift_batch(QvBlock *d, int64_t nd, QvBlock *b, int64_t nb, QvFooter *f) {
  (void)d, (void)nd, (void)nb, (void)f;
  b[1].offset += 8;
}
static void grow_body(QvBlock *d, int64_t nd, QvBlock *b, int64_t nb, QvFooter *f) {
  (void)d, (void)nd, (void)nb, (void)f;
  b[0].body_length += 8;
}
static void shrink_meta(QvBlock *d, int64_t nd, QvBlock *b, int64_t nb, QvFooter *f) {
  (void)d, (void)nd, (void)nb, (void)f;
  b[0].meta_data_length -= 8;
}
static void beyond_end(QvBlock *d, int64_t nd, QvBlock *b, int64_t nb, QvFooter *f) {
  (void)d, (void)nd, (void)nb, (void)f;
  b[1].offset = 1 << 30;
}
static void negative(QvBlock *d, int64_t nd, QvBlock *b, int64_t nb, QvFooter *f) {
  (void)d, (void)nd, (void)nb, (void)f;
  b[0].body_length = INT64_MAX;
}
static void dict_is_batch(QvBlock *d, int64_t nd, QvBlock *b, int64_t nb, QvFooter *f) {
  (void)nd, (void)nb, (void)f;
  d[0] = b[0];
}
static void batch_is_dict(QvBlock *d, int64_t nd, QvBlock *b, int64_t nb, QvFooter *f) {
  (void)nd, (void)nb, (void)f;
  b[1] = d[0];
}
static void no_schema(QvBlock *d, int64_t nd, QvBlock *b, int64_t nb, QvFooter *f) {
  (void)d, (void)nd, (void)b, (void)nb;
  f->has_schema = false;
}

static void test_lying_footers(void **state) {
  (void)state;
  size_t size;
  uint8_t *data = sample(QV_IPC_FORMAT_FILE, QV_COMPRESSION_NONE, &size);
  static const struct {
    FooterEdit edit;
    const char *error;
  } cases[] = {
      /* 8 bytes into the message: the message reader finds no valid one */
      {shift_batch, "record batch 1: message at offset"},
      {grow_body, "says the body has"},
      {shrink_meta, "says the metadata takes"},
      {beyond_end, "outside the message area"},
      {negative, "says the body has"},
      {dict_is_batch, "not a DictionaryBatch"},
      {batch_is_dict, "not a RecordBatch"},
      {no_schema, "footer has no schema"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    size_t n;
    uint8_t *bad = edit_footer(data, size, cases[i].edit, &n);
    QvError e;
    expect_error(read_file(bad, n, &e), &e, cases[i].error);
    free(bad);
  }
  /* footer length field larger than the file */
  uint8_t *bad = malloc(size);
  memcpy(bad, data, size);
  qvi_st_le_u32(bad + size - 10, (uint32_t)size);
  QvError e;
  expect_error(read_file(bad, size, &e), &e, "footer length");
  /* leading magic missing */
  memcpy(bad, data, size);
  bad[0] = 'X';
  expect_error(read_file(bad, size, &e), &e, "magic");
  free(bad);
  free(data);
}

/* message 2 is the first record batch (schema, dictionary, batch, ...) */
static void buffer_outside(QvMessage *m, uint8_t *b, int64_t n) {
  (void)b;
  ((QvBuffer *)m->header.record_batch.buffers)[3].offset = n;
}
static void buffer_too_long(QvMessage *m, uint8_t *b, int64_t n) {
  (void)b;
  ((QvBuffer *)m->header.record_batch.buffers)[3].length = n;
}
static void drop_node(QvMessage *m, uint8_t *b, int64_t n) {
  (void)b, (void)n;
  m->header.record_batch.n_nodes--;
}
static void extra_buffer(QvMessage *m, uint8_t *b, int64_t n) {
  (void)b, (void)n;
  QvBuffer *bufs = (QvBuffer *)m->header.record_batch.buffers;
  bufs[m->header.record_batch.n_buffers] = bufs[0];
  m->header.record_batch.n_buffers++;
}
static void short_column(QvMessage *m, uint8_t *b, int64_t n) {
  (void)b, (void)n;
  ((QvFieldNode *)m->header.record_batch.nodes)[0].length--;
}
static void bad_string_offsets(QvMessage *m, uint8_t *b, int64_t n) {
  (void)n;
  /* column 1 (utf8): node 1, buffers 2 (validity) 3 (offsets) 4 (data) */
  const QvBuffer *off = &m->header.record_batch.buffers[3];
  int32_t huge = 1 << 20;
  memcpy(b + off->offset + off->length - 4, &huge, 4);
}
static void decreasing_offsets(QvMessage *m, uint8_t *b, int64_t n) {
  (void)n;
  const QvBuffer *off = &m->header.record_batch.buffers[3];
  int32_t third;
  memcpy(&third, b + off->offset + 12, 4);
  third += 1;
  memcpy(b + off->offset + 4, &third, 4);
}
static void old_version(QvMessage *m, uint8_t *b, int64_t n) {
  (void)b, (void)n;
  m->version = QV_METADATA_V3;
}
static void unknown_dictionary_index(QvMessage *m, uint8_t *b, int64_t n) {
  (void)n;
  /* buffers: i 0-1, u 2-4, +l(l) 5-8, then the int32 indices: validity 9, values 10 */
  const QvBuffer *vals = &m->header.record_batch.buffers[10];
  int32_t big = 1000;
  memcpy(b + vals->offset, &big, 4);
}

static void test_bad_record_batches(void **state) {
  (void)state;
  size_t size;
  uint8_t *data = sample(QV_IPC_FORMAT_STREAM, QV_COMPRESSION_NONE, &size);
  static const struct {
    RbtMessageEdit edit;
    const char *error;
    bool cheap_catches;
  } cases[] = {
      {buffer_outside, "is outside the body", true},
      {buffer_too_long, "is outside the body", true},
      {drop_node, "field nodes", true},
      {extra_buffer, "the schema uses", true},
      {short_column, "rows, the batch has", true},
      {bad_string_offsets, "offsets run from", true},
      {decreasing_offsets, "offsets decrease", false},
      {old_version, "not supported", true},
      {unknown_dictionary_index, "outside the dictionary", false},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    size_t n;
    uint8_t *bad = rbt_edit_message(data, size, 2, cases[i].edit, &n);
    QvError e;
    int batches;
    expect_error(read_stream(bad, n, NULL, &batches, &e), &e, cases[i].error);
    assert_non_null(strstr(e.message, "message at offset"));
    QvRbReadOptions cheap;
    memset(&cheap, 0, sizeof cheap);
    cheap.validate = QV_VALIDATE_CHEAP;
    QvStatus st = read_stream(bad, n, &cheap, &batches, &e);
    assert_int_equal(st != QV_OK, cases[i].cheap_catches);
    free(bad);
  }
  free(data);
}

/* Compressed buffers whose length prefix lies, or asks for too much. */
static void lie_uncompressed_length(QvMessage *m, uint8_t *b, int64_t n) {
  (void)n;
  const QvBuffer *off = &m->header.record_batch.buffers[1]; /* column 0 values */
  /* the uncompressed-length prefix is little-endian in any body */
  int64_t len = qvi_le_i64(b + off->offset);
  assert_true(len > 0); /* compressed */
  len += 4;
  qvi_st_le_u64(b + off->offset, (uint64_t)len);
}
static void huge_uncompressed_length(QvMessage *m, uint8_t *b, int64_t n) {
  (void)n;
  const QvBuffer *off = &m->header.record_batch.buffers[1];
  qvi_st_le_u64(b + off->offset, (uint64_t)1 << 40);
}
static void garbage_frame(QvMessage *m, uint8_t *b, int64_t n) {
  (void)n;
  const QvBuffer *off = &m->header.record_batch.buffers[1];
  memset(b + off->offset + 8, 0x5A, (size_t)(off->length - 8));
}

static void test_bad_compression(void **state) {
  (void)state;
  for (int comp = 1; comp <= 2; comp++) {
    size_t size;
    /* enough rows for the int32 column to compress */
    uint8_t *data = sample_rows(QV_IPC_FORMAT_STREAM, (QvCompression)comp, 2000, &size);
    RbtMessageEdit edits[] = {lie_uncompressed_length, huge_uncompressed_length, garbage_frame};
    const char *errors[] = {"buffer 1", "exceeds the limit", "buffer 1"};
    for (int k = 0; k < 3; k++) {
      size_t n;
      uint8_t *bad = rbt_edit_message(data, size, 2, edits[k], &n);
      QvRbReadOptions o;
      memset(&o, 0, sizeof o);
      o.max_decompressed_size = 1 << 20;
      QvError e;
      int batches;
      expect_error(read_stream(bad, n, &o, &batches, &e), &e, errors[k]);
      free(bad);
    }
    free(data);
  }
}

/* Deterministic random corruption of valid inputs: never a crash. */
static void test_random_corruption(void **state) {
  (void)state;
  uint64_t seed = 0x9E3779B97F4A7C15ull;
  for (int variant = 0; variant < 4; variant++) {
    size_t size;
    uint8_t *data = sample(variant & 1 ? QV_IPC_FORMAT_FILE : QV_IPC_FORMAT_STREAM,
                           variant & 2 ? QV_COMPRESSION_LZ4_FRAME : QV_COMPRESSION_NONE, &size);
    uint8_t *copy = malloc(size);
    int errors = 0;
    for (int iter = 0; iter < 600; iter++) {
      memcpy(copy, data, size);
      int flips = 1 + iter % 4;
      for (int k = 0; k < flips; k++) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        size_t at = (size_t)(seed >> 33) % size;
        copy[at] ^= (uint8_t)(1u << ((seed >> 20) & 7));
      }
      QvError e;
      int batches;
      QvStatus st = variant & 1 ? read_file(copy, size, &e) : read_stream(copy, size, NULL, &batches, &e);
      if (st) {
        errors++;
        assert_true(e.message[0] != '\0');
      }
    }
    assert_true(errors > 0);
    free(copy);
    free(data);
  }
}

static void test_not_record_batches(void **state) {
  (void)state;
  QvError e;
  int batches;
  uint8_t junk[64];
  memset(junk, 0x11, sizeof junk);
  assert_int_not_equal(read_stream(junk, sizeof junk, NULL, &batches, &e), QV_OK);
  /* a stream that is only an end marker has no schema */
  expect_error(read_stream(qv_ipc_eos, 8, NULL, &batches, &e), &e, "no Schema");
  expect_error(read_file(junk, sizeof junk, &e), &e, "magic");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_truncated),
      cmocka_unit_test(test_lying_footers),
      cmocka_unit_test(test_bad_record_batches),
      cmocka_unit_test(test_bad_compression),
      cmocka_unit_test(test_random_corruption),
      cmocka_unit_test(test_not_record_batches),
  };
  return qv_test_run(tests, NULL, NULL);
}
