/* Compressed record batches on several threads: the writer's output is byte
 * for byte the single-threaded one for any thread count (stream and file,
 * LZ4_FRAME and ZSTD, several levels), and its frames are those of a fresh
 * codec context (reused contexts change nothing); readers with threads
 * give the same arrays; hostile compressed buffers fail with the message of
 * the first failing buffer whatever the thread count. The path counters
 * prove the threaded path and the single-threaded compression straight into
 * the sink ran. */
#include "test_rb_helpers.h"
#include "test_util.h"
#include "util/cpu.h"
#include "util/load.h"

static const char *const kSpecs[] = {"l", "u", "i", "+l(i)", "g", "i{u}"};
#define N_SPECS 6
#define ROWS 40000 /* enough bytes per batch for the threaded path */

typedef struct Table {
  struct ArrowSchema schema;
  struct ArrowArray batches[3];
} Table;

static void table_make(Table *t, const char *const *specs, int n) {
  rbt_batch_schema(&t->schema, specs, n);
  rbt_build(&t->batches[0], &t->schema, ROWS, 0);
  rbt_build(&t->batches[1], &t->schema, 17, 3);
  rbt_build(&t->batches[2], &t->schema, ROWS / 2, 11);
}

static void table_free(Table *t) {
  for (int i = 0; i < 3; i++) t->batches[i].release(&t->batches[i]);
  t->schema.release(&t->schema);
}

/* Writes the table into a buffer sink of `cap` bytes; the status. */
static QvStatus write_buffer(const Table *t, QvIpcFormat format, QvCompression codec, int level,
                             int threads, uint8_t *dst, size_t cap, size_t *size) {
  QvRbWriteOptions o = rbt_write_options(format, codec, level, threads);
  QvSink *sink;
  QvRbWriter *w;
  QvError e;
  rbt_check(qv_sink_new_buffer(&sink, dst, cap, &e), &e, "buffer sink");
  QvStatus st = qv_rb_writer_new(&w, &t->schema, sink, &o, &e);
  for (int i = 0; i < 3 && !st; i++) st = qv_rb_writer_write(w, &t->batches[i], &e);
  if (!st) st = qv_rb_writer_finish(w, &e);
  qv_rb_writer_free(w);
  *size = (size_t)qv_sink_bytes_written(sink);
  qv_sink_free(sink);
  return st;
}

static uint8_t *write_table(const Table *t, QvIpcFormat format, QvCompression codec, int level,
                            int threads, size_t *size) {
  QvRbWriteOptions o = rbt_write_options(format, codec, level, threads);
  struct ArrowArray *p[3] = {(struct ArrowArray *)&t->batches[0],
                             (struct ArrowArray *)&t->batches[1],
                             (struct ArrowArray *)&t->batches[2]};
  uint8_t *data;
  rbt_write(&t->schema, p, 3, &o, &data, size);
  return data;
}

/* Every compressed frame of the stream or file equals a fresh context's
 * compression of its decompressed bytes. Returns how many were checked. */
static int check_frames_fresh(const uint8_t *data, size_t size, QvCompression codec, int level) {
  QvIpcReader *r;
  QvError e;
  rbt_check(qv_test_reader_memory(&r, data, size, &e), &e, "open");
  int checked = 0;
  QvIpcMessage m;
  while (qv_ipc_reader_next(r, &m, &e) == QV_OK) {
    const QvRecordBatch *rb = m.message.header_type == QV_HEADER_RECORD_BATCH
                                  ? &m.message.header.record_batch
                              : m.message.header_type == QV_HEADER_DICTIONARY_BATCH
                                  ? &m.message.header.dictionary_batch.data
                                  : NULL;
    for (int64_t i = 0; rb && i < rb->n_buffers; i++) {
      QvBuffer b = rb->buffers[i];
      if (b.length == 0) continue;
      assert_int_equal(rb->compression, codec);
      int64_t ulen = qvi_le_i64(m.body + b.offset); /* the prefix is little-endian */
      if (ulen == -1) continue;
      const uint8_t *frame = m.body + b.offset + 8;
      size_t n = (size_t)b.length - 8;
      uint8_t *raw = malloc((size_t)ulen + 1);
      size_t cap = qv_compress_bound(codec, (size_t)ulen), got;
      uint8_t *again = malloc(cap);
      rbt_check(qv_decompress(codec, frame, n, raw, (size_t)ulen, &e), &e, "decompress");
      rbt_check(qv_compress(codec, level, raw, (size_t)ulen, again, cap, &got, &e), &e, "compress");
      assert_int_equal(got, n);
      assert_memory_equal(again, frame, n);
      free(raw);
      free(again);
      checked++;
    }
    qv_ipc_message_reset(&m);
  }
  qv_ipc_reader_free(r);
  return checked;
}

static void test_writer_threads_identical(void **state) {
  (void)state;
  Table t;
  table_make(&t, kSpecs, N_SPECS);
  static const struct {
    QvCompression codec;
    int level;
  } codecs[] = {{QV_COMPRESSION_LZ4_FRAME, 0},
                {QV_COMPRESSION_LZ4_FRAME, 3},
                {QV_COMPRESSION_ZSTD, 1},
                {QV_COMPRESSION_ZSTD, 3}};
  static const int threads[] = {2, 3, 5};
  for (size_t c = 0; c < sizeof codecs / sizeof codecs[0]; c++) {
    for (int f = 0; f < 2; f++) {
      QvIpcFormat format = f ? QV_IPC_FORMAT_FILE : QV_IPC_FORMAT_STREAM;
      size_t size1;
      uint64_t in_place = qvi_path_count(QV_PATH_CODEC_IN_PLACE);
      uint8_t *one = write_table(&t, format, codecs[c].codec, codecs[c].level, 1, &size1);
      /* one thread into a memory sink: frames compressed in place */
      assert_true(qvi_path_count(QV_PATH_CODEC_IN_PLACE) > in_place);
      /* a buffer sink with room for the worst case (in place) and one with
       * room for the output only (the large messages' frames go through
       * scratch memory): the same bytes */
      size_t cap = 2 * size1 + (1 << 20), got;
      uint8_t *buf = malloc(cap);
      assert_non_null(buf);
      for (int tight = 0; tight < 2; tight++) {
        in_place = qvi_path_count(QV_PATH_CODEC_IN_PLACE);
        rbt_check(write_buffer(&t, format, codecs[c].codec, codecs[c].level, 1, buf,
                               tight ? size1 : cap, &got), NULL, "buffer sink write");
        if (!tight) assert_true(qvi_path_count(QV_PATH_CODEC_IN_PLACE) > in_place);
        assert_int_equal(got, size1);
        assert_memory_equal(buf, one, size1);
      }
      /* one byte short: refused, as by any sink that runs out */
      assert_int_equal(write_buffer(&t, format, codecs[c].codec, codecs[c].level, 1, buf,
                                    size1 - 1, &got), QV_ELIMIT);
      free(buf);
      /* the frames of reused contexts are those of fresh ones */
      assert_true(check_frames_fresh(one, size1, codecs[c].codec, codecs[c].level) > 10);
      for (size_t k = 0; k < sizeof threads / sizeof threads[0]; k++) {
        uint64_t before = qvi_path_count(QV_PATH_CODEC_THREADS);
        size_t size;
        uint8_t *many = write_table(&t, format, codecs[c].codec, codecs[c].level, threads[k], &size);
        if (qvi_path_count(QV_PATH_CODEC_THREADS) == before)
          fail_msg("codec %d level %d: %d threads did not compress on threads",
                   (int)codecs[c].codec, codecs[c].level, threads[k]);
        assert_int_equal(size, size1);
        if (memcmp(one, many, size) != 0)
          fail_msg("codec %d level %d format %d: %d threads wrote other bytes than 1",
                   (int)codecs[c].codec, codecs[c].level, f, threads[k]);
        free(many);
      }
      free(one);
    }
  }
  table_free(&t);
}

static void read_cells(const uint8_t *data, size_t size, bool as_file, int threads,
                       const Table *t) {
  QvRbReadOptions o;
  memset(&o, 0, sizeof o);
  o.validate = QV_VALIDATE_FULL;
  o.threads = threads;
  QvError e;
  struct ArrowArrayStream s;
  QvRbFileReader *f = NULL;
  if (as_file) {
    rbt_check(rbt_file_open(&f, data, size, &o, &e), &e, "file open");
    assert_int_equal(qv_rb_file_n_batches(f), 3);
  } else {
    rbt_check(rbt_stream_open(&s, data, size, &o, &e), &e, "stream open");
  }
  for (int i = 0; i < 3; i++) {
    struct ArrowArray a;
    if (as_file)
      rbt_check(qv_rb_file_read_batch(f, i, &a, &e), &e, "read batch");
    else
      assert_false(rbt_next(&s, &a));
    RbtCells want = rbt_cells(&t->batches[i], &t->schema);
    RbtCells got = rbt_cells(&a, &t->schema);
    rbt_assert_same_cells(&want, &got, as_file ? "file" : "stream");
    rbt_cells_free(&want);
    rbt_cells_free(&got);
    a.release(&a);
  }
  if (as_file) {
    qv_rb_file_reader_free(f);
  } else {
    struct ArrowArray end;
    assert_true(rbt_next(&s, &end));
    s.release(&s);
  }
}

static void test_reader_threads_equal(void **state) {
  (void)state;
  Table t;
  table_make(&t, kSpecs, N_SPECS);
  static const QvCompression codecs[] = {QV_COMPRESSION_LZ4_FRAME, QV_COMPRESSION_ZSTD};
  for (int c = 0; c < 2; c++) {
    for (int f = 0; f < 2; f++) {
      size_t size;
      uint8_t *data = write_table(&t, f ? QV_IPC_FORMAT_FILE : QV_IPC_FORMAT_STREAM, codecs[c], 0,
                                  2, &size);
      static const int threads[] = {0, 1, 2, 3, 5};
      for (int k = 0; k < 5; k++) {
        uint64_t before = qvi_path_count(QV_PATH_CODEC_THREADS);
        read_cells(data, size, f == 1, threads[k], &t);
        bool ran = qvi_path_count(QV_PATH_CODEC_THREADS) > before;
        if (ran != (threads[k] > 1))
          fail_msg("codec %d, %d threads: the threaded path %s", (int)codecs[c], threads[k],
                   ran ? "ran" : "did not run");
      }
      free(data);
    }
  }
  table_free(&t);
}

/* ---- hostile buffers */

/* The edits below act on the buffers picked here: the first and the last
 * compressed buffer of the message (prefix > 0). */
static int64_t g_first, g_last;

static void pick_buffers(QvMessage *m, const uint8_t *b) {
  const QvRecordBatch *rb = &m->header.record_batch;
  g_first = g_last = -1;
  for (int64_t i = 0; i < rb->n_buffers; i++) {
    if (rb->buffers[i].length < 8) continue;
    int64_t ulen = qvi_le_i64(b + rb->buffers[i].offset); /* little-endian prefix */
    if (ulen <= 0) continue;
    if (g_first < 0) g_first = i;
    g_last = i;
  }
  assert_true(g_first >= 0 && g_last > g_first);
}

static void add_to_prefix(QvMessage *m, uint8_t *b, int64_t i, int64_t delta) {
  uint8_t *p = b + m->header.record_batch.buffers[i].offset; /* little-endian prefix */
  qvi_st_le_u64(p, (uint64_t)(qvi_le_i64(p) + delta));
}

static void lie_first(QvMessage *m, uint8_t *b, int64_t n) {
  (void)n;
  pick_buffers(m, b);
  add_to_prefix(m, b, g_first, 8);
}
/* two bad buffers: the later one is larger and starts first on the threads */
static void lie_both(QvMessage *m, uint8_t *b, int64_t n) {
  (void)n;
  pick_buffers(m, b);
  add_to_prefix(m, b, g_first, -8);
  add_to_prefix(m, b, g_last, 8);
}
static void truncate_last(QvMessage *m, uint8_t *b, int64_t n) {
  (void)n;
  pick_buffers(m, b);
  /* the editor hands over its own copy of the buffer list */
  QvBuffer *buf = (QvBuffer *)&m->header.record_batch.buffers[g_last];
  buf->length = 8 + (buf->length - 8) / 2;
}
static void garbage_both(QvMessage *m, uint8_t *b, int64_t n) {
  (void)n;
  pick_buffers(m, b);
  for (int64_t k = 0; k < 2; k++) {
    const QvBuffer *buf = &m->header.record_batch.buffers[k ? g_last : g_first];
    memset(b + buf->offset + 8 + 4, 0x5A, (size_t)(buf->length - 12)); /* keep the magic */
  }
}
/* -1: "stored uncompressed", while the bytes are a frame */
static void stored_claim(QvMessage *m, uint8_t *b, int64_t n) {
  (void)n;
  pick_buffers(m, b);
  qvi_st_le_u64(b + m->header.record_batch.buffers[g_first].offset, UINT64_MAX); /* -1 */
}
static void huge_last(QvMessage *m, uint8_t *b, int64_t n) {
  (void)n;
  pick_buffers(m, b);
  qvi_st_le_u64(b + m->header.record_batch.buffers[g_last].offset, (uint64_t)1 << 40);
}

static QvStatus read_all(const uint8_t *data, size_t size, int threads, QvError *e) {
  QvRbReadOptions o;
  memset(&o, 0, sizeof o);
  o.validate = QV_VALIDATE_FULL;
  o.threads = threads;
  struct ArrowArrayStream s;
  QvStatus st = rbt_stream_open(&s, data, size, &o, e);
  if (st) return st;
  for (;;) {
    struct ArrowArray a;
    if ((st = qv_rb_stream_get_next(&s, &a, e))) break;
    a.release(&a);
  }
  s.release(&s);
  return st == QV_EOS ? QV_OK : st;
}

static void test_hostile_buffers(void **state) {
  (void)state;
  static const char *const specs[] = {"l", "u", "i", "g"}; /* no dictionary: message 1 is a batch */
  Table t;
  table_make(&t, specs, 4);
  static const struct {
    RbtMessageEdit edit;
    const char *text;
    bool first; /* the message names the first picked buffer (else the last) */
  } cases[] = {
      {lie_first, "the buffer declares", true},
      {lie_both, "buffer", true},
      {truncate_last, "buffer", false},
      {garbage_both, "buffer", true},
      {stored_claim, "", true},
      {huge_last, "exceeds the limit", false},
  };
  static const QvCompression codecs[] = {QV_COMPRESSION_LZ4_FRAME, QV_COMPRESSION_ZSTD};
  for (int c = 0; c < 2; c++) {
    size_t size;
    uint8_t *data = write_table(&t, QV_IPC_FORMAT_STREAM, codecs[c], 0, 1, &size);
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
      size_t n;
      uint8_t *bad = rbt_edit_message(data, size, 1, cases[k].edit, &n);
      QvError e1;
      QvStatus st1 = read_all(bad, n, 1, &e1);
      if (st1 == QV_OK) fail_msg("codec %d case %zu: accepted", (int)codecs[c], k);
      if (strstr(e1.message, cases[k].text) == NULL)
        fail_msg("codec %d case %zu: \"%s\" does not say \"%s\"", (int)codecs[c], k, e1.message,
                 cases[k].text);
      if (cases[k].edit != stored_claim) {
        char want[32];
        snprintf(want, sizeof want, "buffer %lld", (long long)(cases[k].first ? g_first : g_last));
        if (strstr(e1.message, want) == NULL)
          fail_msg("codec %d case %zu: \"%s\" does not name %s", (int)codecs[c], k, e1.message,
                   want);
      }
      /* the same failure on threads, every time */
      for (int threads = 2; threads <= 4; threads++)
        for (int rep = 0; rep < 5; rep++) {
          QvError e;
          QvStatus st = read_all(bad, n, threads, &e);
          assert_int_equal(st, st1);
          if (strcmp(e.message, e1.message) != 0)
            fail_msg("codec %d case %zu, %d threads: \"%s\", one thread: \"%s\"", (int)codecs[c], k,
                     threads, e.message, e1.message);
        }
      free(bad);
    }
    free(data);
  }
  table_free(&t);
}

static void test_thread_options(void **state) {
  (void)state;
  Table t;
  table_make(&t, kSpecs, 2);
  size_t size;
  uint8_t *data = write_table(&t, QV_IPC_FORMAT_FILE, QV_COMPRESSION_ZSTD, 0, 0, &size);
  static const int bad[] = {-1, QV_RB_MAX_THREADS + 1};
  for (int k = 0; k < 2; k++) {
    QvError e;
    QvSink *sink;
    rbt_check(qv_sink_new_memory(&sink, &e), &e, "sink");
    QvRbWriteOptions wo;
    memset(&wo, 0, sizeof wo);
    wo.compression = QV_COMPRESSION_LZ4_FRAME;
    wo.threads = bad[k];
    QvRbWriter *w;
    assert_int_equal(qv_rb_writer_new(&w, &t.schema, sink, &wo, &e), QV_EARG);
    assert_non_null(strstr(e.message, "threads must be"));
    qv_sink_free(sink);
    QvRbReadOptions ro;
    memset(&ro, 0, sizeof ro);
    ro.threads = bad[k];
    struct ArrowArrayStream s;
    assert_int_equal(rbt_stream_open(&s, data, size, &ro, &e), QV_EARG);
    assert_non_null(strstr(e.message, "threads must be"));
    QvRbFileReader *f;
    assert_int_equal(rbt_file_open(&f, data, size, &ro, &e), QV_EARG);
  }
  /* threads without compression: nothing to run, nothing started */
  free(data);
  data = write_table(&t, QV_IPC_FORMAT_STREAM, QV_COMPRESSION_NONE, 0, QV_RB_MAX_THREADS, &size);
  read_cells(data, size, false, QV_RB_MAX_THREADS, &t);
  free(data);
  table_free(&t);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_writer_threads_identical),
      cmocka_unit_test(test_reader_threads_equal),
      cmocka_unit_test(test_hostile_buffers),
      cmocka_unit_test(test_thread_options),
  };
  return qv_test_run(tests, NULL, NULL);
}
