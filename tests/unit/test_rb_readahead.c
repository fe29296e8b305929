/* Reading one batch ahead (threads > 1): the batches are those of a
 * single-threaded read for 0..5 threads, stream and file (the file reader
 * in order, out of order, and through the stream reader), with dictionaries
 * that are replaced and grown (delta batches) between batches that are read
 * ahead; the path counter proves the read-ahead ran, and that it did not
 * with one thread. A failure in the batch read ahead is reported when that
 * batch is asked for, with the message of a single-threaded read, and not
 * earlier. A reader freed while its read-ahead decompresses leaks nothing
 * (the ASan run checks) and the batches it handed out stay valid. */
#include "test_rb_helpers.h"
#include "test_util.h"
#include "util/cpu.h"
#include "ipc/compression_internal.h"
#include "util/load.h"

static const char *const kSpecs[] = {"l", "u", "i{u}", "g", "+l(i)"};
#define N_SPECS 5
#define DICT_COL 2
#define ROWS 3000 /* main() sends every message to the threads, however small */

/* rbt_build, with the dictionary of column DICT_COL holding 5 + extra
 * values (5 + extra > 5 over the same first 5: a grown dictionary, which
 * the stream writer sends as a delta batch). */
static void build(struct ArrowArray *out, const struct ArrowSchema *s, int64_t rows, int64_t seed,
                  int extra) {
  QvError e;
  rbt_check(qv_array_init_from_schema(out, s, &e), &e, "init");
  for (int64_t k = 0; k < 5 + extra; k++)
    rbt_append(out->children[DICT_COL]->dictionary, s->children[DICT_COL]->dictionary,
               k + rbt_dict_seed, false, 1);
  for (int64_t r = 0; r < rows; r++) {
    for (int64_t c = 0; c < s->n_children; c++)
      rbt_append(out->children[c], s->children[c], r + seed, true, 0);
    assert_int_equal(qv_array_finish_element(out, NULL), QV_OK);
  }
  rbt_check(qv_array_finish_building(out, QV_VALIDATE_FULL, &e), &e, "finish");
}

#define N_BATCHES 6

typedef struct Table {
  struct ArrowSchema schema;
  struct ArrowArray b[N_BATCHES];
} Table;

/* Stream: D R R d R R D R R (a small batch in the middle, a delta, then a
 * replacement). The file takes the first four (no replacement there). */
static void table_make(Table *t) {
  rbt_batch_schema(&t->schema, kSpecs, N_SPECS);
  build(&t->b[0], &t->schema, ROWS, 0, 0);
  build(&t->b[1], &t->schema, 17, 5, 0);
  build(&t->b[2], &t->schema, ROWS, 9, 3);
  build(&t->b[3], &t->schema, ROWS / 2, 2, 3);
  rbt_dict_seed = 1; /* other values: a replacement */
  build(&t->b[4], &t->schema, ROWS, 4, 0);
  build(&t->b[5], &t->schema, ROWS, 8, 0);
  rbt_dict_seed = 0;
}

static void table_free(Table *t) {
  for (int i = 0; i < N_BATCHES; i++) t->b[i].release(&t->b[i]);
  t->schema.release(&t->schema);
}

static uint8_t *write_table(Table *t, bool file, QvCompression codec, int n, size_t *size) {
  QvRbWriteOptions o = rbt_write_options(file ? QV_IPC_FORMAT_FILE : QV_IPC_FORMAT_STREAM, codec, 0, 0);
  struct ArrowArray *p[N_BATCHES];
  for (int i = 0; i < n; i++) p[i] = &t->b[i];
  uint8_t *data;
  rbt_write(&t->schema, p, n, &o, &data, size);
  return data;
}

static QvRbReadOptions options(int threads) {
  QvRbReadOptions o;
  memset(&o, 0, sizeof o);
  o.validate = QV_VALIDATE_FULL;
  o.threads = threads;
  return o;
}

/* Reads every batch (how: 0 stream reader, 1 file reader in order, 2 file
 * reader out of order), holds them all until the reader is freed, then
 * compares them with the table. */
static void read_and_compare(const uint8_t *data, size_t size, int how, int threads, Table *t,
                             int n) {
  QvRbReadOptions o = options(threads);
  QvError e;
  struct ArrowArray got[N_BATCHES];
  memset(got, 0, sizeof got);
  if (how == 0) {
    struct ArrowArrayStream s;
    rbt_check(rbt_stream_open(&s, data, size, &o, &e), &e, "stream open");
    for (int i = 0; i < n; i++) assert_false(rbt_next(&s, &got[i]));
    struct ArrowArray end;
    assert_true(rbt_next(&s, &end));
    s.release(&s);
  } else {
    QvRbFileReader *f;
    rbt_check(rbt_file_open(&f, data, size, &o, &e), &e, "file open");
    assert_int_equal(qv_rb_file_n_batches(f), n);
    static const int order[] = {2, 0, 1, 3, 1, 2, 3, 0};
    for (int k = 0; k < (how == 1 ? n : 8); k++) {
      int i = how == 1 ? k : order[k] % n;
      if (got[i].release) got[i].release(&got[i]);
      rbt_check(qv_rb_file_read_batch(f, i, &got[i], &e), &e, "read batch");
    }
    qv_rb_file_reader_free(f);
  }
  for (int i = 0; i < n; i++) {
    RbtCells want = rbt_cells(&t->b[i], &t->schema);
    RbtCells have = rbt_cells(&got[i], &t->schema);
    char what[64];
    snprintf(what, sizeof what, "how %d, %d threads, batch %d", how, threads, i);
    rbt_assert_same_cells(&want, &have, what);
    rbt_cells_free(&want);
    rbt_cells_free(&have);
    got[i].release(&got[i]);
  }
}

static void test_same_batches(void **state) {
  (void)state;
  Table t;
  table_make(&t);
  static const QvCompression codecs[] = {QV_COMPRESSION_LZ4_FRAME, QV_COMPRESSION_ZSTD};
  char k[64];
  for (int c = 0; c < 2; c++) {
    size_t ssize, fsize;
    uint8_t *stream = write_table(&t, false, codecs[c], N_BATCHES, &ssize);
    rbt_message_kinds(stream, ssize, k, sizeof k);
    assert_string_equal(k, "SDRRdRRDRR");
    uint8_t *file = write_table(&t, true, codecs[c], 4, &fsize);
    for (int threads = 0; threads <= 5; threads++) {
      for (int how = 0; how < 4; how++) {
        uint64_t before = qvi_path_count(QV_PATH_RB_READ_AHEAD);
        if (how == 3) /* a file through the stream reader: by its footer */
          read_and_compare(file, fsize, 0, threads, &t, 4);
        else
          read_and_compare(how ? file : stream, how ? fsize : ssize, how, threads, &t,
                           how ? 4 : N_BATCHES);
        bool ran = qvi_path_count(QV_PATH_RB_READ_AHEAD) > before;
        if (ran != (threads > 1))
          fail_msg("codec %d, how %d, %d threads: the read-ahead %s", (int)codecs[c], how,
                   threads, ran ? "ran" : "did not run");
      }
    }
    free(stream);
    free(file);
  }
  table_free(&t);
}

/* ---- failures read ahead */

/* Garbage in the first compressed buffer of record batch `which`
 * (0-based) of a stream or file, keeping the frame's magic. */
static void spoil_batch(uint8_t *data, size_t size, int which) {
  QvIpcReader *r;
  QvError e;
  rbt_check(qv_test_reader_memory(&r, data, size, &e), &e, "ipc open");
  int seen = 0;
  bool done = false;
  QvIpcMessage m;
  while (!done && qv_ipc_reader_next(r, &m, &e) == QV_OK) {
    if (m.message.header_type == QV_HEADER_RECORD_BATCH && seen++ == which) {
      const QvRecordBatch *rb = &m.message.header.record_batch;
      for (int64_t i = 0; i < rb->n_buffers && !done; i++) {
        QvBuffer b = rb->buffers[i];
        if (b.length < 64 || qvi_le_i64(m.body + b.offset) <= 0) continue;
        uint8_t *p = data + (m.body - data) + b.offset + 8 + 4; /* zero-copy: into data */
        memset(p, 0x5A, (size_t)b.length - 12);
        done = true;
      }
    }
    qv_ipc_message_reset(&m);
  }
  qv_ipc_reader_free(r);
  assert_true(done);
}

/* Reads batches 0..n-1 of a stream (file: false) or file; returns the
 * status of the first failing one (*at: its index) and its message. */
static QvStatus read_until_failure(const uint8_t *data, size_t size, bool file, int threads,
                                   int n, int *at, char *msg, size_t cap) {
  QvRbReadOptions o = options(threads);
  QvError e;
  QvStatus st = QV_OK;
  *at = -1;
  struct ArrowArray held = {0};
  if (file) {
    QvRbFileReader *f;
    rbt_check(rbt_file_open(&f, data, size, &o, &e), &e, "file open");
    for (int i = 0; i < n && !st; i++) {
      if (held.release) held.release(&held);
      if ((st = qv_rb_file_read_batch(f, i, &held, &e))) *at = i;
    }
    qv_rb_file_reader_free(f);
  } else {
    struct ArrowArrayStream s;
    rbt_check(rbt_stream_open(&s, data, size, &o, &e), &e, "stream open");
    for (int i = 0; i < n && !st; i++) {
      if (held.release) held.release(&held);
      if ((st = qv_rb_stream_get_next(&s, &held, &e))) *at = i;
    }
    if (st) {
      /* sticky */
      struct ArrowArray again;
      QvError e2;
      assert_int_equal(qv_rb_stream_get_next(&s, &again, &e2), st);
      assert_string_equal(e2.message, e.message);
    }
    s.release(&s);
  }
  if (held.release) held.release(&held);
  snprintf(msg, cap, "%s", st ? e.message : "");
  return st;
}

/* A bad message (its buffer list) instead of a bad frame. */
static void buffer_outside(QvMessage *m, uint8_t *b, int64_t n) {
  (void)b;
  QvBuffer *buf = (QvBuffer *)&m->header.record_batch.buffers[1];
  buf->offset = n; /* past the body */
  buf->length = 64;
}

static void test_failure_when_asked_for(void **state) {
  (void)state;
  Table t;
  table_make(&t);
  for (int file = 0; file < 2; file++) {
    for (int kind = 0; kind < (file ? 1 : 2); kind++) {
      size_t size;
      uint8_t *data = write_table(&t, file, QV_COMPRESSION_ZSTD, 4, &size);
      if (kind == 0) {
        spoil_batch(data, size, 2);
      } else {
        /* messages: S D R R d R R; the batch 2 message is number 5 */
        size_t n2;
        uint8_t *edited = rbt_edit_message(data, size, 5, buffer_outside, &n2);
        free(data);
        data = edited;
        size = n2;
      }
      char want[512], got[512];
      int at1, at;
      QvStatus st1 = read_until_failure(data, size, file, 1, 4, &at1, want, sizeof want);
      assert_int_not_equal(st1, QV_OK);
      assert_int_equal(at1, 2);
      for (int threads = 2; threads <= 5; threads++) {
        uint64_t before = qvi_path_count(QV_PATH_RB_READ_AHEAD);
        QvStatus st = read_until_failure(data, size, file, threads, 4, &at, got, sizeof got);
        assert_true(qvi_path_count(QV_PATH_RB_READ_AHEAD) > before);
        if (st != st1 || at != 2 || strcmp(want, got) != 0)
          fail_msg("file %d kind %d, %d threads: batch %d failed with '%s', 1 thread: batch %d, "
                   "'%s'", file, kind, threads, at, got, at1, want);
      }
      free(data);
    }
  }
  table_free(&t);
}

/* Freed with the read-ahead in flight, at every point of a read. */
static void test_free_in_flight(void **state) {
  (void)state;
  Table t;
  table_make(&t);
  size_t ssize, fsize;
  uint8_t *stream = write_table(&t, false, QV_COMPRESSION_ZSTD, N_BATCHES, &ssize);
  uint8_t *file = write_table(&t, true, QV_COMPRESSION_ZSTD, 4, &fsize);
  QvError e;
  for (int threads = 2; threads <= 3; threads++) {
    for (int stop = 0; stop <= 3; stop++) {
      QvRbReadOptions o = options(threads);
      struct ArrowArray held[4];
      struct ArrowArrayStream s;
      rbt_check(rbt_stream_open(&s, stream, ssize, &o, &e), &e, "stream open");
      for (int i = 0; i < stop; i++) assert_false(rbt_next(&s, &held[i]));
      s.release(&s); /* batch `stop` decompressing */
      QvRbFileReader *f;
      rbt_check(rbt_file_open(&f, file, fsize, &o, &e), &e, "file open");
      struct ArrowArray fb[4];
      for (int i = 0; i < stop; i++) rbt_check(qv_rb_file_read_batch(f, i, &fb[i], &e), &e, "read");
      qv_rb_file_reader_free(f);
      /* what was handed out outlives the readers */
      for (int i = 0; i < stop; i++) {
        RbtCells want = rbt_cells(&t.b[i], &t.schema);
        RbtCells a = rbt_cells(&held[i], &t.schema), b = rbt_cells(&fb[i], &t.schema);
        rbt_assert_same_cells(&want, &a, "stream, after free");
        rbt_assert_same_cells(&want, &b, "file, after free");
        rbt_cells_free(&want);
        rbt_cells_free(&a);
        rbt_cells_free(&b);
        held[i].release(&held[i]);
        fb[i].release(&fb[i]);
      }
    }
  }
  free(stream);
  free(file);
  table_free(&t);
}

/* Batches read one after the other, each let go before the next: the next
 * decompresses into the buffers of the one before (no fresh pages to
 * fault in and zero), for one thread and with the read-ahead; the values
 * stay right, and batches held past the reader stay valid (above). */
static void test_recycled_buffers(void **state) {
  (void)state;
  const char *spec = "l";
  struct ArrowSchema s;
  rbt_batch_schema(&s, &spec, 1);
  enum { BATCHES = 5, BIG = 20000 }; /* 160 KB of int64: over QV_RECYCLE_MIN */
  struct ArrowArray b[BATCHES], *p[BATCHES];
  for (int i = 0; i < BATCHES; i++) {
    rbt_build(&b[i], &s, BIG, i * 7);
    p[i] = &b[i];
  }
  QvRbWriteOptions wo = rbt_write_options(QV_IPC_FORMAT_STREAM, QV_COMPRESSION_LZ4_FRAME, 0, 0);
  uint8_t *data;
  size_t size;
  rbt_write(&s, p, BATCHES, &wo, &data, &size);
  QvError e;
  for (int threads = 0; threads <= 2; threads += 2) {
    QvRbReadOptions o = options(threads);
    struct ArrowArrayStream st;
    rbt_check(rbt_stream_open(&st, data, size, &o, &e), &e, "stream open");
    uint64_t before = qvi_path_hits[QV_PATH_RECYCLED_BUFFER];
    const void *first = NULL;
    bool same_address = false;
    for (int i = 0; i < BATCHES; i++) {
      struct ArrowArray a;
      assert_false(rbt_next(&st, &a));
      const void *values = a.children[0]->buffers[1];
      if (i == 0) first = values;
      if (i > 0 && values == first) same_address = true;
      RbtCells want = rbt_cells(&b[i], &s), have = rbt_cells(&a, &s);
      rbt_assert_same_cells(&want, &have, "recycled buffers");
      rbt_cells_free(&want);
      rbt_cells_free(&have);
      a.release(&a);
    }
    st.release(&st);
    uint64_t reused = qvi_path_hits[QV_PATH_RECYCLED_BUFFER] - before;
    /* one thread: batches 1.. reuse batch 0's buffer; read ahead: batch i + 1
     * is loaded while i is held, so from batch 2 on */
    assert_true(reused >= (uint64_t)(threads ? BATCHES - 2 : BATCHES - 1));
    if (threads == 0) assert_true(same_address);
  }
  free(data);
  for (int i = 0; i < BATCHES; i++) b[i].release(&b[i]);
  s.release(&s);
}

int main(void) {
  qvi_codec_set_parallel_min(0);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_same_batches),
      cmocka_unit_test(test_failure_when_asked_for),
      cmocka_unit_test(test_free_in_flight),
      cmocka_unit_test(test_recycled_buffers),
  };
  return qv_test_run(tests, NULL, NULL);
}
