/* Compressed IPC against the codecs themselves: writes and reads the
 * 10,000,000-row benchmark stream (bench_rb_data.h) with LZ4_FRAME and ZSTD
 * levels 1 and 3 through quiver, and compresses / decompresses exactly the
 * same buffers with the codecs' own calls in the same run, reusing their
 * contexts and output buffers as a codec user would:
 * LZ4F_compressFrame / LZ4F_decompress, ZSTD_compressCCtx /
 * ZSTD_decompressDCtx. The codec's frames are compared byte for byte with
 * the ones quiver wrote, so both sides did the same work.
 *
 *   bench_compression [rows] [rows_per_batch] [threads] [repeat] [lz4|zstd-1|zstd-3]
 *
 * threads defaults to the number of online CPUs; each figure is the best of
 * `repeat` runs (default 9: on this project's VM a two-thread run's time
 * moves by 10-15% from minute to minute, and five runs were often all in
 * one slow spell). Targets: one thread within 10% of the codec; `threads`
 * threads at least 1.7x faster than one (on 2 cores). */
#include <inttypes.h>
#include <lz4frame.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zstd.h>

#include "quiver/advanced.h"
#include "bench_rb_data.h"
#include "quiver/ipc.h"
#include "quiver/recordbatch_ipc.h"
#include "util/cpu.h"
#include "util/load.h"
#include "util/pool.h"

static double clock_of(clockid_t id) {
  struct timespec ts;
  clock_gettime(id, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}
static double now(void) { return clock_of(CLOCK_MONOTONIC); }

/* Wall and CPU time of one run (CPU time: all of the process's threads;
 * for one thread it is what the run cost, whatever else the machine does). */
typedef struct Time {
  double wall, cpu;
} Time;
static Time start(void) { return (Time){now(), clock_of(CLOCK_PROCESS_CPUTIME_ID)}; }
static Time since(Time t0) {
  return (Time){now() - t0.wall, clock_of(CLOCK_PROCESS_CPUTIME_ID) - t0.cpu};
}
static void keep_best(Time *best, Time t) {
  if (t.wall < best->wall) best->wall = t.wall;
  if (t.cpu < best->cpu) best->cpu = t.cpu;
}

static QvError error;
#define TRY(what, call) bench_rb_check((call), &error, what)

static void *xmalloc(size_t n) {
  void *p = malloc(n ? n : 1);
  if (p == NULL) {
    fprintf(stderr, "bench_compression: out of memory (%zu bytes)\n", n);
    exit(1);
  }
  return p;
}

/* The buffers quiver's writer compresses, in message order: every
 * non-empty buffer of every column, validity bitmaps only where a column
 * has nulls (offsets start at 0 and batches at row 0, so none is cut). */
typedef struct Buf {
  const uint8_t *data;
  size_t size;
  int slot; /* position within its batch: the output buffer it reuses */
} Buf;

typedef struct Data {
  struct ArrowSchema schema;
  struct ArrowArray *batches;
  int64_t n_batches, rows;
  Buf *bufs;
  int n_bufs, slots;
  size_t raw_bytes;
} Data;

static void collect(Data *d) {
  QvArrayView v;
  TRY("view", qv_array_view_init(&v, &d->schema, &error));
  d->bufs = xmalloc((size_t)d->n_batches * 16 * sizeof *d->bufs);
  for (int64_t b = 0; b < d->n_batches; b++) {
    TRY("view", qv_array_view_set_array(&v, &d->batches[b], QV_VALIDATE_NONE, &error));
    int slot = 0;
    for (int64_t c = 0; c < v.n_children; c++) {
      const QvArrayView *col = &v.children[c];
      for (int k = 0; k < 3; k++) {
        if (col->buffer[k] == NULL || col->buffer_size[k] == 0) continue;
        if (k == 0 && col->null_count == 0) continue;
        Buf *f = &d->bufs[d->n_bufs++];
        f->data = col->buffer[k];
        f->size = (size_t)col->buffer_size[k];
        f->slot = slot++;
        d->raw_bytes += f->size;
      }
    }
    if (slot > d->slots) d->slots = slot;
  }
  qv_array_view_reset(&v);
}

typedef struct Config {
  const char *name;
  QvCompression codec;
  int level;
} Config;

/* The codec side: frames of every buffer, kept for the read reference and
 * for the comparison with quiver's. */
typedef struct Frames {
  uint8_t *data;
  size_t *offset, *size;
  size_t total;
} Frames;

static Time codec_compress(const Data *d, const Config *c, uint8_t **out, size_t *cap,
                           ZSTD_CCtx *zc, Frames *keep) {
  size_t pos = 0;
  Time t0 = start();
  for (int i = 0; i < d->n_bufs; i++) {
    const Buf *b = &d->bufs[i];
    size_t r;
    if (c->codec == QV_COMPRESSION_LZ4_FRAME) {
      /* quiver's preferences: its level, the content size in the header */
      LZ4F_preferences_t p;
      memset(&p, 0, sizeof p);
      p.compressionLevel = c->level;
      p.frameInfo.contentSize = b->size;
      r = LZ4F_compressFrame(out[b->slot], cap[b->slot], b->data, b->size, &p);
      if (LZ4F_isError(r)) {
        fprintf(stderr, "LZ4F_compressFrame: %s\n", LZ4F_getErrorName(r));
        exit(1);
      }
    } else {
      r = ZSTD_compressCCtx(zc, out[b->slot], cap[b->slot], b->data, b->size,
                            c->level ? c->level : 1);
      if (ZSTD_isError(r)) {
        fprintf(stderr, "ZSTD_compressCCtx: %s\n", ZSTD_getErrorName(r));
        exit(1);
      }
    }
    if (keep) {
      keep->offset[i] = pos;
      keep->size[i] = r;
      memcpy(keep->data + pos, out[b->slot], r);
      pos += r;
    }
  }
  Time t = since(t0);
  if (keep) keep->total = pos;
  return t;
}

/* Decompresses the frames quiver decompresses: those smaller than their
 * buffer (quiver stores the others as they are and reads them in place). */
static Time codec_decompress(const Data *d, const Config *c, const Frames *f, uint8_t **out,
                             LZ4F_dctx *lz, ZSTD_DCtx *zd) {
  Time t0 = start();
  for (int i = 0; i < d->n_bufs; i++) {
    const Buf *b = &d->bufs[i];
    if (f->size[i] >= b->size) continue;
    const uint8_t *src = f->data + f->offset[i];
    uint8_t *dst = out[b->slot];
    if (c->codec == QV_COMPRESSION_LZ4_FRAME) {
      size_t in = f->size[i], outn = b->size;
      size_t r = LZ4F_decompress(lz, dst, &outn, src, &in, NULL);
      if (r != 0 || outn != b->size || in != f->size[i]) {
        fprintf(stderr, "LZ4F_decompress: %s\n", LZ4F_isError(r) ? LZ4F_getErrorName(r) : "short");
        exit(1);
      }
    } else {
      size_t r = ZSTD_decompressDCtx(zd, dst, b->size, src, f->size[i]);
      if (r != b->size) {
        fprintf(stderr, "ZSTD_decompressDCtx: %s\n", ZSTD_isError(r) ? ZSTD_getErrorName(r) : "short");
        exit(1);
      }
    }
  }
  return since(t0);
}

/* The batches as an ArrowArrayStream, the way `quiver convert` hands a
 * reader's stream to qv_rb_write_all: each batch is lent (its release only
 * marks it released; the bench keeps the memory), so the writer owns what
 * it is given, as it owns a reader's batches, and takes the path the CLI
 * takes (batches moved into the writer, compressing while the next one is
 * pulled). */
typedef struct Lender {
  const Data *d;
  int64_t next;
} Lender;

static void lent_release(struct ArrowArray *a) { a->release = NULL; }

static int lender_schema(struct ArrowArrayStream *s, struct ArrowSchema *out) {
  const Lender *l = s->private_data;
  return qv_arrow_schema_copy(&l->d->schema, out, NULL) == QV_OK ? 0 : 12; /* ENOMEM */
}

static int lender_next(struct ArrowArrayStream *s, struct ArrowArray *out) {
  Lender *l = s->private_data;
  if (l->next == l->d->n_batches) {
    memset(out, 0, sizeof *out); /* end of stream */
    return 0;
  }
  *out = l->d->batches[l->next++];
  out->release = lent_release;
  return 0;
}

static const char *lender_error(struct ArrowArrayStream *s) {
  (void)s;
  return NULL;
}

static void lender_release(struct ArrowArrayStream *s) { s->release = NULL; }

static Time quiver_write(const Data *d, const Config *c, int threads, uint8_t *dst, size_t cap,
                           size_t *size) {
  QvSink *sink;
  TRY("buffer sink", qv_sink_new_buffer(&sink, dst, cap, &error));
  QvRbWriteOptions o;
  memset(&o, 0, sizeof o);
  o.compression = c->codec;
  o.compression_level = c->level;
  o.threads = threads;
  Lender l = {d, 0};
  struct ArrowArrayStream s = {lender_schema, lender_next, lender_error, lender_release, &l};
  /* with the writer's start: its threads start there, once */
  Time t0 = start();
  TRY("write", qv_rb_write_all(&s, sink, &o, &error));
  Time t = since(t0);
  s.release(&s);
  *size = (size_t)qv_sink_bytes_written(sink);
  qv_sink_free(sink);
  return t;
}

static Time quiver_read(const uint8_t *data, size_t size, int threads, int64_t *rows) {
  QvRbReadOptions o;
  memset(&o, 0, sizeof o);
  o.threads = threads;
  struct ArrowArrayStream s;
  QvSource *src;
  TRY("memory source", qv_source_new_memory(&src, data, size, NULL, &error));
  TRY("open", qv_rb_stream_reader_new(&s, src, &o, &error));
  qv_source_free(src);
  /* the reader starts its threads at the first compressed batch: a reader
   * is opened per stream, so that is part of reading one */
  Time t0 = start();
  *rows = 0;
  for (;;) {
    struct ArrowArray a;
    QvStatus st = qv_rb_stream_get_next(&s, &a, &error);
    if (st == QV_EOS) break;
    TRY("next", st);
    *rows += a.length;
    a.release(&a);
  }
  Time t = since(t0);
  s.release(&s);
  return t;
}

/* FNV-1a over 8-byte words: tells the n-thread stream from the 1-thread one
 * without a second 300 MB buffer. */
static uint64_t digest(const uint8_t *p, size_t n) {
  uint64_t h = 1469598103934665603ull;
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t x;
    memcpy(&x, p + i, 8);
    h = (h ^ x) * 1099511628211ull;
  }
  for (; i < n; i++) h = (h ^ p[i]) * 1099511628211ull;
  return h ^ n;
}

/* Whether quiver's stream holds exactly the codec's frames, in order. */
static bool same_frames(const uint8_t *data, size_t size, const Data *d, const Frames *f) {
  QvIpcReader *r;
  QvSource *src;
  TRY("memory source", qv_source_new_memory(&src, data, size, NULL, &error));
  TRY("reader", qv_ipc_reader_new(&r, src, NULL, &error));
  qv_source_free(src);
  int k = 0;
  bool same = true;
  for (;;) {
    QvIpcMessage m;
    QvStatus st = qv_ipc_reader_next(r, &m, &error);
    if (st == QV_EOS) break;
    TRY("message", st);
    if (m.message.header_type == QV_HEADER_RECORD_BATCH) {
      const QvRecordBatch *rb = &m.message.header.record_batch;
      for (int64_t i = 0; i < rb->n_buffers && same; i++) {
        QvBuffer b = rb->buffers[i];
        if (b.length == 0) continue;
        int64_t prefix = qvi_le_i64(m.body + b.offset); /* little-endian */
        const uint8_t *frame = m.body + b.offset + 8;
        size_t n = (size_t)b.length - 8;
        if (prefix == -1) { /* stored: the codec's frame was no smaller */
          same = k < d->n_bufs && f->size[k] >= d->bufs[k].size;
        } else {
          same = k < d->n_bufs && n == f->size[k] &&
                 memcmp(frame, f->data + f->offset[k], n) == 0;
        }
        k++;
      }
    }
    qv_ipc_message_reset(&m);
  }
  qv_ipc_reader_free(r);
  return same && k == d->n_bufs;
}

int main(int argc, char **argv) {
  int64_t rows = argc > 1 ? atoll(argv[1]) : 10000000;
  int64_t per_batch = argc > 2 ? atoll(argv[2]) : 1000000;
  int threads = argc > 3 ? atoi(argv[3]) : qv_cpu_count();
  int repeat = argc > 4 ? atoi(argv[4]) : 9;
  const char *only = argc > 5 ? argv[5] : NULL; /* one codec configuration */
  if (rows <= 0 || per_batch <= 0 || threads < 1 || threads > QV_RB_MAX_THREADS || repeat < 1) {
    fprintf(stderr, "usage: bench_compression [rows] [rows_per_batch] [threads] [repeat] "
                    "[lz4|zstd-1|zstd-3]\n");
    return 2;
  }
  Data d;
  memset(&d, 0, sizeof d);
  bench_rb_schema(&d.schema);
  d.rows = rows;
  d.n_batches = (rows + per_batch - 1) / per_batch;
  d.batches = xmalloc((size_t)d.n_batches * sizeof *d.batches);
  for (int64_t i = 0; i < d.n_batches; i++) {
    int64_t n = rows - i * per_batch < per_batch ? rows - i * per_batch : per_batch;
    bench_rb_batch(&d.schema, i * per_batch, n, &d.batches[i]);
  }
  collect(&d);
  printf("rows %" PRId64 " in %" PRId64 " batches; %d buffers, %.1f MB; %d threads vs 1; best of %d\n",
         rows, d.n_batches, d.n_bufs, (double)d.raw_bytes / 1e6, threads, repeat);

  /* pre-faulted outputs: one per buffer slot of a batch (codec side), the
   * whole stream (quiver side) */
  size_t *cap = xmalloc((size_t)d.slots * sizeof *cap);
  uint8_t **out = xmalloc((size_t)d.slots * sizeof *out);
  size_t largest = 0;
  for (int i = 0; i < d.n_bufs; i++)
    if (d.bufs[i].size > largest) largest = d.bufs[i].size;
  for (int s = 0; s < d.slots; s++) {
    cap[s] = ZSTD_compressBound(largest) > LZ4F_compressFrameBound(largest, NULL)
                 ? ZSTD_compressBound(largest)
                 : LZ4F_compressFrameBound(largest, NULL) + 64;
    out[s] = xmalloc(cap[s]);
    memset(out[s], 1, cap[s]);
  }
  size_t stream_cap = d.raw_bytes + d.raw_bytes / 8 + (16 << 20);
  uint8_t *stream = xmalloc(stream_cap);
  memset(stream, 1, stream_cap);
  Frames frames;
  frames.data = xmalloc(d.raw_bytes + d.raw_bytes / 8 + (1 << 20));
  frames.offset = xmalloc((size_t)d.n_bufs * sizeof(size_t));
  frames.size = xmalloc((size_t)d.n_bufs * sizeof(size_t));
  ZSTD_CCtx *zc = ZSTD_createCCtx();
  ZSTD_DCtx *zd = ZSTD_createDCtx();
  LZ4F_dctx *lz;
  if (zc == NULL || zd == NULL || LZ4F_isError(LZ4F_createDecompressionContext(&lz, LZ4F_VERSION))) {
    fprintf(stderr, "bench_compression: cannot create codec contexts\n");
    return 1;
  }

  static const Config configs[] = {{"lz4", QV_COMPRESSION_LZ4_FRAME, 0},
                                   {"zstd-1", QV_COMPRESSION_ZSTD, 1},
                                   {"zstd-3", QV_COMPRESSION_ZSTD, 3}};
  bool all_same = true;
  for (size_t k = 0; k < sizeof configs / sizeof configs[0]; k++) {
    const Config *c = &configs[k];
    if (only && strcmp(only, c->name) != 0) continue;
    codec_compress(&d, c, out, cap, zc, &frames); /* frames kept, contexts warm */
    size_t size;
    quiver_write(&d, c, 1, stream, stream_cap, &size);
    bool same = same_frames(stream, size, &d, &frames);
    all_same &= same;
    bool same_n = true, pipelined = false;
    if (threads > 1) {
      uint64_t one = digest(stream, size), hits = qvi_path_count(QV_PATH_RB_WRITE_PIPELINED);
      size_t size_n;
      quiver_write(&d, c, threads, stream, stream_cap, &size_n);
      pipelined = qvi_path_count(QV_PATH_RB_WRITE_PIPELINED) > hits;
      same_n = size_n == size && digest(stream, size_n) == one;
      all_same &= same_n;
    }
    Time cw = {1e9, 1e9}, cr = cw, w1 = cw, wn = cw, r1 = cw, rn = cw;
    int64_t got = 0;
    /* alternate the sides so that a burst of load hits both */
    for (int r = 0; r < repeat; r++) {
      keep_best(&cw, codec_compress(&d, c, out, cap, zc, NULL));
      keep_best(&w1, quiver_write(&d, c, 1, stream, stream_cap, &size));
      if (threads > 1) keep_best(&wn, quiver_write(&d, c, threads, stream, stream_cap, &size));
    }
    uint64_t ahead_hits = qvi_path_count(QV_PATH_RB_READ_AHEAD);
    for (int r = 0; r < repeat; r++) {
      keep_best(&cr, codec_decompress(&d, c, &frames, out, lz, zd));
      keep_best(&r1, quiver_read(stream, size, 1, &got));
      if (got != rows) return 1;
      if (threads > 1) keep_best(&rn, quiver_read(stream, size, threads, &got));
      if (got != rows) return 1;
    }
    /* the n-thread reads read a batch ahead (1-thread ones never do) */
    bool read_ahead = qvi_path_count(QV_PATH_RB_READ_AHEAD) > ahead_hits;
    size_t unpacked = 0;
    for (int i = 0; i < d.n_bufs; i++)
      if (frames.size[i] < d.bufs[i].size) unpacked += d.bufs[i].size;
    printf("\n%s: %.1f MB -> %.1f MB of frames (%.2fx), %.1f MB of them decompressed on reading; "
           "quiver's frames are the codec's: %s\n",
           c->name, (double)d.raw_bytes / 1e6, (double)frames.total / 1e6,
           (double)d.raw_bytes / (double)frames.total, (double)unpacked / 1e6, same ? "yes" : "NO");
    printf("  codec compress   %7.1f ms (cpu %7.1f) | quiver write 1 thread %7.1f ms (cpu %7.1f)",
           cw.wall * 1e3, cw.cpu * 1e3, w1.wall * 1e3, w1.cpu * 1e3);
    if (threads > 1) printf(", %d threads %7.1f ms", threads, wn.wall * 1e3);
    printf("\n  codec decompress %7.1f ms (cpu %7.1f) | quiver read 1 thread  %7.1f ms (cpu %7.1f)",
           cr.wall * 1e3, cr.cpu * 1e3, r1.wall * 1e3, r1.cpu * 1e3);
    if (threads > 1) printf(", %d threads %7.1f ms", threads, rn.wall * 1e3);
    printf("\n");
    printf("write %s 1 thread: %.2fx codec (target <= 1.10; cpu time %.2fx)\n", c->name,
           w1.wall / cw.wall, w1.cpu / cw.cpu);
    if (threads > 1)
      printf("write %s %d threads: %.2fx 1 thread (target >= 1.7; qv_rb_write_all, pipelined: %s, "
             "output identical: %s)\n",
             c->name, threads, w1.wall / wn.wall, pipelined ? "yes" : "NO", same_n ? "yes" : "NO");
    printf("read %s 1 thread: %.2fx codec (target <= 1.10; cpu time %.2fx)\n", c->name,
           r1.wall / cr.wall, r1.cpu / cr.cpu);
    if (threads > 1)
      printf("read %s %d threads: %.2fx 1 thread (target >= 1.7; read ahead: %s)\n", c->name,
             threads, r1.wall / rn.wall, read_ahead ? "yes" : "NO");
  }
  if (threads < 2) printf("\n1 thread only: the multi-thread targets were not measured\n");

  ZSTD_freeCCtx(zc);
  ZSTD_freeDCtx(zd);
  LZ4F_freeDecompressionContext(lz);
  for (int s = 0; s < d.slots; s++) free(out[s]);
  free(out);
  free(cap);
  free(stream);
  free(frames.data);
  free(frames.offset);
  free(frames.size);
  free(d.bufs);
  for (int64_t i = 0; i < d.n_batches; i++) d.batches[i].release(&d.batches[i]);
  free(d.batches);
  d.schema.release(&d.schema);
  return all_same ? 0 : 1;
}
