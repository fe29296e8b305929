/* The pipelined record batch writer (qv_rb_writer_write_move, and
 * qv_rb_write_all which uses it): batches handed over compress on the
 * writer's threads while the next one is prepared. Its output is byte for
 * byte that of qv_rb_writer_write on one thread, for 1-5 threads, through
 * every write path (borrowed, moved, a whole stream, the two mixed),
 * stream and file, LZ4 and ZSTD, a foreign byte order, dictionaries, into
 * memory, buffer and callback sinks; the path counters prove the pipeline
 * ran and the frames went to a sink's free memory where it has some; every batch handed over is
 * released exactly once whatever happens; a failure of a batch in flight
 * (its compression, or the sink while it is written) surfaces from a later
 * call and fails the writer; a writer freed with a batch in flight neither
 * leaks nor writes it. */
#include "test_rb_helpers.h"
#include "test_util.h"
#include "adapters/rb_swap.h"
#include "ipc/compression_internal.h"
#include "util/cpu.h"

/* no dictionaries: those take the waiting path (test_dictionaries_same_bytes) */
static const char *const kSpecs[] = {"l", "u", "i", "+l(i)", "g", "b"};
#define N_SPECS 6
#define N_BATCHES 6

typedef struct Table {
  struct ArrowSchema schema;
  struct ArrowArray batches[N_BATCHES];
} Table;

/* Uneven batches, one tiny (it compresses on the caller) between large
 * ones, and a sliced one. */
static void table_make(Table *t, const char *const *specs, int n) {
  static const int64_t rows[N_BATCHES] = {20000, 9000, 17, 30000, 1, 12000};
  rbt_batch_schema(&t->schema, specs, n);
  for (int i = 0; i < N_BATCHES; i++) rbt_build(&t->batches[i], &t->schema, rows[i], 7 * i);
  t->batches[3].offset = 5; /* rows 5.. of the 30000 */
  t->batches[3].length -= 5;
}

static void table_free(Table *t) {
  for (int i = 0; i < N_BATCHES; i++) t->batches[i].release(&t->batches[i]);
  t->schema.release(&t->schema);
}

/* Lent batches: a moved-in copy of a table's batch whose release only
 * counts (the table keeps the memory), so a test sees every release. */
static int g_released[N_BATCHES];

static void lent_release(struct ArrowArray *a) {
  g_released[(intptr_t)a->private_data]++;
  a->release = NULL;
}

static struct ArrowArray lend(const Table *t, int i) {
  struct ArrowArray a = t->batches[i];
  a.private_data = (void *)(intptr_t)i;
  a.release = lent_release;
  return a;
}

static void assert_all_released_once(void) {
  for (int i = 0; i < N_BATCHES; i++)
    if (g_released[i] != 1) fail_msg("batch %d released %d times", i, g_released[i]);
}

typedef enum Path { BORROWED, MOVED, MIXED, STREAM } Path;
static const char *const kPathNames[] = {"qv_rb_writer_write", "qv_rb_writer_write_move",
                                         "write_move and write mixed", "qv_rb_write_all"};

/* A stream handing out lent batches (what qv_rb_write_all gets from a
 * reader: batches it owns). */
typedef struct Lender {
  const Table *t;
  int next;
} Lender;

static int lender_schema(struct ArrowArrayStream *s, struct ArrowSchema *out) {
  const Lender *l = s->private_data;
  return qv_arrow_schema_copy(&l->t->schema, out, NULL) == QV_OK ? 0 : 12;
}

static int lender_next(struct ArrowArrayStream *s, struct ArrowArray *out) {
  Lender *l = s->private_data;
  if (l->next == N_BATCHES)
    memset(out, 0, sizeof *out);
  else
    *out = lend(l->t, l->next++);
  return 0;
}

static const char *lender_error(struct ArrowArrayStream *s) {
  (void)s;
  return NULL;
}

static void lender_release(struct ArrowArrayStream *s) { s->release = NULL; }

/* Writes the table through `path` into `sink`; the status. */
static QvStatus write_via(const Table *t, Path path, const QvRbWriteOptions *o, QvSink *sink,
                          QvError *e) {
  memset(g_released, 0, sizeof g_released);
  if (path == STREAM) {
    Lender l = {t, 0};
    struct ArrowArrayStream s = {lender_schema, lender_next, lender_error, lender_release, &l};
    QvStatus st = qv_rb_write_all(&s, sink, o, e);
    s.release(&s);
    /* batches the stream never handed out count as released */
    for (int i = l.next; i < N_BATCHES; i++) g_released[i]++;
    return st;
  }
  QvRbWriter *w;
  QvStatus st = qv_rb_writer_new(&w, &t->schema, sink, o, e);
  if (st) return st;
  for (int i = 0; i < N_BATCHES; i++) {
    bool borrowed = path == BORROWED || (path == MIXED && i % 3 == 1);
    struct ArrowArray a = lend(t, i);
    QvStatus s2;
    if (borrowed) {
      s2 = qv_rb_writer_write(w, &a, e);
      a.release(&a);
    } else {
      s2 = qv_rb_writer_write_move(w, &a, e);
      assert_null(a.release);
    }
    if (s2 && !st) st = s2;
    if (path == MIXED && i == 3 && !st) st = qv_rb_writer_flush(w, e);
  }
  if (!st) st = qv_rb_writer_finish(w, e);
  if (!st) assert_int_equal(qv_rb_writer_bytes_written(w), qv_sink_bytes_written(sink));
  qv_rb_writer_free(w);
  return st;
}

/* The sinks the frames may be compressed into (the free memory of a
 * memory sink, which grows, or of a buffer sink) or not (a buffer sink
 * with no room past the output, a callback sink). */
typedef enum SinkKind { MEMORY_SINK, ROOMY_BUFFER, EXACT_BUFFER, CALLBACK_SINK } SinkKind;
static const char *const kSinkNames[] = {"memory sink", "roomy buffer sink", "exact buffer sink",
                                         "callback sink"};

typedef struct Collected {
  uint8_t *data;
  size_t n, cap;
} Collected;

static QvStatus collect(void *ctx, const void *data, size_t size, QvError *error) {
  (void)error;
  Collected *c = ctx;
  if (c->n + size > c->cap) {
    size_t cap = (c->n + size) * 2;
    uint8_t *p = realloc(c->data, cap);
    if (p == NULL) return QV_ENOMEM;
    c->data = p;
    c->cap = cap;
  }
  memcpy(c->data + c->n, data, size);
  c->n += size;
  return QV_OK;
}

/* The bytes written through `path` into a sink of `kind` (a buffer sink
 * sized from `expect`, the size of the output); malloc'd. */
static uint8_t *write_into(const Table *t, Path path, const QvRbWriteOptions *o, SinkKind kind,
                           size_t expect, size_t *size) {
  QvSink *sink;
  QvError e;
  uint8_t *buffer = NULL;
  Collected c = {NULL, 0, 0};
  size_t cap = kind == ROOMY_BUFFER ? 2 * expect + ((size_t)1 << 20) : expect;
  if (kind == MEMORY_SINK) rbt_check(qv_sink_new_memory(&sink, &e), &e, "memory sink");
  if (kind == ROOMY_BUFFER || kind == EXACT_BUFFER) {
    buffer = malloc(cap ? cap : 1);
    assert_non_null(buffer);
    rbt_check(qv_sink_new_buffer(&sink, buffer, cap, &e), &e, "buffer sink");
  }
  if (kind == CALLBACK_SINK) rbt_check(qv_sink_new_callback(&sink, collect, &c, &e), &e, "callback");
  rbt_check(write_via(t, path, o, sink, &e), &e, kPathNames[path]);
  assert_all_released_once();
  rbt_check(qv_sink_finish(sink, &e), &e, "sink finish");
  uint8_t *data = NULL;
  if (kind == MEMORY_SINK) {
    rbt_take(sink, &data, size);
  } else if (kind == CALLBACK_SINK) {
    data = c.data;
    *size = c.n;
  } else {
    data = buffer;
    *size = (size_t)qv_sink_bytes_written(sink);
  }
  qv_sink_free(sink);
  return data;
}

static uint8_t *write_memory(const Table *t, Path path, const QvRbWriteOptions *o, size_t *size) {
  return write_into(t, path, o, MEMORY_SINK, 0, size);
}

/* Every path, 1-5 threads, into every kind of sink (2 and 5 threads; a
 * memory sink for the others): the bytes of qv_rb_writer_write on one
 * thread. With threads, the moving paths must have pipelined, and frames
 * compressed on threads must have gone to the free memory of a memory
 * sink or a roomy buffer sink, never of a callback sink. */
static void check_identical(const Table *t, QvRbWriteOptions o, const char *what) {
  o.threads = 1;
  size_t size1;
  uint8_t *one = write_memory(t, BORROWED, &o, &size1);
  for (int threads = 1; threads <= 5; threads++) {
    for (Path path = BORROWED; path <= STREAM; path++) {
      for (SinkKind kind = MEMORY_SINK; kind <= CALLBACK_SINK; kind++) {
        if (kind != MEMORY_SINK && threads != 2 && threads != 5) continue;
        o.threads = threads;
        uint64_t before = qvi_path_count(QV_PATH_RB_WRITE_PIPELINED);
        uint64_t windows = qvi_path_count(QV_PATH_CODEC_SINK_WINDOW);
        size_t size;
        uint8_t *got = write_into(t, path, &o, kind, size1, &size);
        bool pipelined = qvi_path_count(QV_PATH_RB_WRITE_PIPELINED) > before;
        bool windowed = qvi_path_count(QV_PATH_CODEC_SINK_WINDOW) > windows;
        if (size != size1 || memcmp(got, one, size) != 0)
          fail_msg("%s: %s with %d threads into a %s wrote other bytes than one thread", what,
                   kPathNames[path], threads, kSinkNames[kind]);
        bool threaded = threads > 1 && o.compression != QV_COMPRESSION_NONE;
        bool can = threaded && path != BORROWED;
        if (can && !pipelined)
          fail_msg("%s: %s with %d threads did not pipeline", what, kPathNames[path], threads);
        if (!can && pipelined)
          fail_msg("%s: %s with %d threads counted the pipeline", what, kPathNames[path], threads);
        if (threaded && (kind == MEMORY_SINK || kind == ROOMY_BUFFER) && !windowed)
          fail_msg("%s: %s with %d threads: no frames in the %s's memory", what, kPathNames[path],
                   threads, kSinkNames[kind]);
        if ((!threaded || kind == CALLBACK_SINK) && windowed)
          fail_msg("%s: %s with %d threads into a %s counted frames in its memory", what,
                   kPathNames[path], threads, kSinkNames[kind]);
        free(got);
      }
    }
  }
  /* and it reads back */
  RbtCells want[N_BATCHES];
  for (int i = 0; i < N_BATCHES; i++) want[i] = rbt_cells(&t->batches[i], &t->schema);
  if (o.endianness == QV_ENDIAN_NATIVE)
    rbt_assert_reads_back(one, size1, o.format == QV_IPC_FORMAT_FILE, want, N_BATCHES, what);
  for (int i = 0; i < N_BATCHES; i++) rbt_cells_free(&want[i]);
  free(one);
}

static void test_identical_every_path(void **state) {
  (void)state;
  Table t;
  table_make(&t, kSpecs, N_SPECS);
  static const struct {
    QvCompression codec;
    int level;
  } codecs[] = {{QV_COMPRESSION_LZ4_FRAME, 0}, {QV_COMPRESSION_ZSTD, 1}, {QV_COMPRESSION_ZSTD, 3}};
  for (size_t c = 0; c < sizeof codecs / sizeof codecs[0]; c++)
    for (int f = 0; f < 2; f++) {
      char what[64];
      snprintf(what, sizeof what, "codec %d level %d %s", (int)codecs[c].codec, codecs[c].level,
               f ? "file" : "stream");
      check_identical(&t, rbt_write_options(f ? QV_IPC_FORMAT_FILE : QV_IPC_FORMAT_STREAM, codecs[c].codec,
                                  codecs[c].level, 1),
                      what);
    }
  /* uncompressed: nothing to pipeline, the same bytes */
  check_identical(&t, rbt_write_options(QV_IPC_FORMAT_STREAM, QV_COMPRESSION_NONE, 0, 1), "uncompressed");
  /* a foreign byte order: swapped copies belong to the batch in flight */
  QvRbWriteOptions o = rbt_write_options(QV_IPC_FORMAT_FILE, QV_COMPRESSION_ZSTD, 1, 1);
  o.endianness = qvi_rb_host_endianness() == QV_ENDIAN_LITTLE ? QV_ENDIAN_BIG : QV_ENDIAN_LITTLE;
  check_identical(&t, o, "foreign byte order");
  /* 64-byte alignment */
  o = rbt_write_options(QV_IPC_FORMAT_STREAM, QV_COMPRESSION_LZ4_FRAME, 0, 1);
  o.alignment = 64;
  check_identical(&t, o, "64-byte alignment");
  table_free(&t);
}

/* Dictionary-encoded fields take the waiting path (dictionary messages
 * are ordered against batches): the same bytes, every batch released. */
static void test_dictionaries_same_bytes(void **state) {
  (void)state;
  static const char *const specs[] = {"l", "i{u}"};
  Table t;
  table_make(&t, specs, 2);
  QvRbWriteOptions o = rbt_write_options(QV_IPC_FORMAT_STREAM, QV_COMPRESSION_ZSTD, 1, 1);
  size_t size1, size;
  uint8_t *one = write_memory(&t, BORROWED, &o, &size1);
  for (Path path = MOVED; path <= STREAM; path++) {
    o.threads = 3;
    uint8_t *got = write_memory(&t, path, &o, &size);
    assert_int_equal(size, size1);
    assert_memory_equal(got, one, size);
    free(got);
  }
  free(one);
  table_free(&t);
}

/* The default threshold (small messages stay on the caller) with batches
 * large enough to go to the threads: the pipeline runs without the test
 * hook too. */
static void test_pipeline_default_threshold(void **state) {
  (void)state;
  size_t was = qvi_codec_set_parallel_min((size_t)256 << 10);
  Table t;
  table_make(&t, kSpecs, N_SPECS);
  QvRbWriteOptions o = rbt_write_options(QV_IPC_FORMAT_STREAM, QV_COMPRESSION_LZ4_FRAME, 0, 1);
  size_t size1, size;
  uint8_t *one = write_memory(&t, BORROWED, &o, &size1);
  o.threads = 2;
  uint64_t before = qvi_path_count(QV_PATH_RB_WRITE_PIPELINED);
  uint8_t *got = write_memory(&t, STREAM, &o, &size);
  assert_true(qvi_path_count(QV_PATH_RB_WRITE_PIPELINED) > before);
  assert_int_equal(size, size1);
  assert_memory_equal(got, one, size);
  free(got);
  free(one);
  table_free(&t);
  qvi_codec_set_parallel_min(was);
}

/* Writes the table through every path with 1-3 threads, once per step of
 * an injected failure: `arm` returns the sink for that step and arms the
 * failure. Every run must fail with QV_EIO and a message holding `want`,
 * and release every batch once. */
typedef QvSink *(*ArmFailure)(int step, void *ctx);

static void fail_every_path(const Table *t, QvRbWriteOptions o, int steps, ArmFailure arm,
                            void *ctx, const char *want) {
  for (int threads = 1; threads <= 3; threads++)
    for (Path path = BORROWED; path <= STREAM; path++)
      for (int step = 0; step < steps; step++) {
        o.threads = threads;
        QvSink *sink = arm(step, ctx);
        QvError e;
        memset(&e, 0, sizeof e);
        QvStatus st = write_via(t, path, &o, sink, &e);
        qvi_codec_fail_after(-1);
        if (st != QV_EIO || strstr(e.message, want) == NULL)
          fail_msg("%s, %d threads, failure step %d: status %s, message '%s'", kPathNames[path],
                   threads, step, qv_status_name(st), e.message);
        assert_all_released_once();
        qv_sink_free(sink);
      }
}

/* A sink that fails once `left` bytes have been written. */
typedef struct Budget {
  size_t full, left;
} Budget;

static QvStatus budget_write(void *ctx, const void *data, size_t size, QvError *error) {
  (void)data;
  Budget *b = ctx;
  if (size > b->left) return qv_error_set(error, QV_EIO, "disk full (test)");
  b->left -= size;
  return QV_OK;
}

/* Step k: the sink takes (k + 1) fifths of the output. */
static QvSink *arm_disk_full(int step, void *ctx) {
  Budget *b = ctx;
  b->left = b->full * (size_t)(step + 1) / 5;
  QvSink *sink;
  QvError e;
  rbt_check(qv_sink_new_callback(&sink, budget_write, b, &e), &e, "callback sink");
  return sink;
}

/* The sink fails while a batch in flight is written: every path reports
 * it, the writer stays failed, every batch is released once. */
static void test_sink_failure_in_flight(void **state) {
  (void)state;
  Table t;
  table_make(&t, kSpecs, N_SPECS);
  QvRbWriteOptions o = rbt_write_options(QV_IPC_FORMAT_STREAM, QV_COMPRESSION_LZ4_FRAME, 0, 1);
  Budget b;
  free(write_memory(&t, BORROWED, &o, &b.full));
  fail_every_path(&t, o, 4, arm_disk_full, &b, "disk full");
  table_free(&t);
}

/* Step k: the (7k)th compression from now fails. */
static QvSink *arm_codec_failure(int step, void *ctx) {
  (void)ctx;
  QvSink *sink;
  QvError e;
  rbt_check(qv_sink_new_memory(&sink, &e), &e, "memory sink");
  qvi_codec_fail_after(7L * step);
  return sink;
}

/* A compression fails in a batch in flight: reported by a later call, the
 * writer then refuses everything with that failure. */
static void test_compression_failure_in_flight(void **state) {
  (void)state;
  Table t;
  table_make(&t, kSpecs, N_SPECS);
  fail_every_path(&t, rbt_write_options(QV_IPC_FORMAT_FILE, QV_COMPRESSION_ZSTD, 1, 1), 5,
                  arm_codec_failure, NULL, "compression failed");
  /* after the failure the writer refuses the next batch with it */
  QvRbWriteOptions o = rbt_write_options(QV_IPC_FORMAT_STREAM, QV_COMPRESSION_LZ4_FRAME, 0, 2);
  QvSink *sink;
  QvRbWriter *w;
  QvError e;
  rbt_check(qv_sink_new_memory(&sink, &e), &e, "memory sink");
  rbt_check(qv_rb_writer_new(&w, &t.schema, sink, &o, &e), &e, "writer new");
  memset(g_released, 0, sizeof g_released);
  qvi_codec_fail_after(0);
  struct ArrowArray a = lend(&t, 0);
  /* in flight: the call returns before the compression fails; flush
   * reports it */
  assert_int_equal(qv_rb_writer_write_move(w, &a, &e), QV_OK);
  QvStatus st = qv_rb_writer_flush(w, &e);
  qvi_codec_fail_after(-1);
  assert_int_equal(st, QV_EIO);
  assert_non_null(strstr(e.message, "record batch 0"));
  a = lend(&t, 1);
  assert_int_equal(qv_rb_writer_write_move(w, &a, &e), QV_EIO);
  assert_int_equal(qv_rb_writer_write(w, &t.batches[2], &e), QV_EIO);
  assert_int_equal(qv_rb_writer_finish(w, &e), QV_EIO);
  assert_int_equal(g_released[0], 1);
  assert_int_equal(g_released[1], 1);
  qv_rb_writer_free(w);
  qv_sink_free(sink);
  table_free(&t);
}

/* Freed with a batch in flight: nothing written for it, released, no leak
 * (the ASan build checks that). A bad batch is refused and released, and
 * the writer goes on. */
static void test_free_in_flight_and_bad_batch(void **state) {
  (void)state;
  Table t;
  table_make(&t, kSpecs, N_SPECS);
  for (int threads = 1; threads <= 4; threads++) {
    QvRbWriteOptions o = rbt_write_options(QV_IPC_FORMAT_STREAM, QV_COMPRESSION_ZSTD, 3, threads);
    QvSink *sink;
    QvRbWriter *w;
    QvError e;
    rbt_check(qv_sink_new_memory(&sink, &e), &e, "memory sink");
    rbt_check(qv_rb_writer_new(&w, &t.schema, sink, &o, &e), &e, "writer new");
    memset(g_released, 0, sizeof g_released);
    struct ArrowArray a = lend(&t, 0);
    rbt_check(qv_rb_writer_write_move(w, &a, &e), &e, "write_move");
    a = lend(&t, 3);
    rbt_check(qv_rb_writer_write_move(w, &a, &e), &e, "write_move");
    /* a batch with a null row: refused now, released, the writer usable */
    struct ArrowArray bad = lend(&t, 1);
    static const uint8_t no_rows[2048]; /* 9000 rows, none valid */
    const void *bufs[1] = {no_rows};
    bad.buffers = bufs;
    bad.null_count = -1;
    assert_int_equal(qv_rb_writer_write_move(w, &bad, &e), QV_EINVAL);
    assert_null(bad.release);
    assert_int_equal(g_released[1], 1);
    a = lend(&t, 5);
    rbt_check(qv_rb_writer_write_move(w, &a, &e), &e, "write_move after a bad batch");
    int64_t written = qv_rb_writer_bytes_written(w);
    qv_rb_writer_free(w); /* batch 5 (with threads: in flight) dropped */
    assert_int_equal(g_released[0], 1);
    assert_int_equal(g_released[3], 1);
    assert_int_equal(g_released[5], 1);
    assert_int_equal(qv_sink_bytes_written(sink), written);
    qv_sink_free(sink);
  }
  /* a released batch is refused */
  QvSink *sink;
  QvRbWriter *w;
  QvError e;
  rbt_check(qv_sink_new_memory(&sink, &e), &e, "memory sink");
  QvRbWriteOptions o = rbt_write_options(QV_IPC_FORMAT_STREAM, QV_COMPRESSION_LZ4_FRAME, 0, 2);
  rbt_check(qv_rb_writer_new(&w, &t.schema, sink, &o, &e), &e, "writer new");
  struct ArrowArray gone;
  memset(&gone, 0, sizeof gone);
  assert_int_equal(qv_rb_writer_write_move(w, &gone, &e), QV_EARG);
  rbt_check(qv_rb_writer_finish(w, &e), &e, "finish");
  qv_rb_writer_free(w);
  qv_sink_free(sink);
  table_free(&t);
}

static int setup(void **state) {
  (void)state;
  qvi_codec_set_parallel_min(0); /* the small test batches go to the threads */
  return 0;
}

int main(int argc, char **argv) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_identical_every_path),
      cmocka_unit_test(test_dictionaries_same_bytes),
      cmocka_unit_test(test_pipeline_default_threshold),
      cmocka_unit_test(test_sink_failure_in_flight),
      cmocka_unit_test(test_compression_failure_in_flight),
      cmocka_unit_test(test_free_in_flight_and_bad_batch),
  };
  const QvTestGroup groups[] = {QV_TEST_GROUP("", tests, setup, NULL)};
  return qv_test_run_groups(argc, argv, groups, sizeof groups / sizeof groups[0]);
}
