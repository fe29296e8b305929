/* Body compression codecs of the IPC format: LZ4 frames (liblz4 frame API)
 * and ZSTD frames (libzstd). Decompression must produce exactly the length
 * the buffer declares, so a hostile buffer can never make us write or
 * allocate more than the caller sized for.
 *
 * The runner (compression_internal.h) keeps one set of codec contexts per
 * thread for its lifetime: ZSTD contexts and the LZ4 decompression context
 * allocate their tables and window on first use, and reusing them is what
 * a codec user does. LZ4 compression goes through LZ4F_compressFrame, whose
 * state lives on the stack and is cleared per call (16 KiB): a reused LZ4F
 * context keeps stale hash entries that can change which matches are found,
 * and the output must not depend on which thread compressed what. ZSTD
 * starts every frame's indices past its stale entries, so a reused context
 * gives the bytes of a fresh one. */
#include <lz4frame.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>
#include <zstd_errors.h>

#include "ipc/compression_internal.h"
#include "quiver/compression.h"
#include "util/cpu.h"
#include "util/pool.h"

/* One thread's contexts, created on first use. */
typedef struct CodecCtx {
  LZ4F_dctx *lz4d;
  ZSTD_CCtx *zc;
  ZSTD_DCtx *zd;
  atomic_int busy; /* claimed by a running task */
} CodecCtx;

static void ctx_release(CodecCtx *c) {
  if (c->lz4d) LZ4F_freeDecompressionContext(c->lz4d);
  ZSTD_freeCCtx(c->zc);
  ZSTD_freeDCtx(c->zd);
  c->lz4d = NULL;
  c->zc = NULL;
  c->zd = NULL;
}

static QvStatus lz4_decompress(CodecCtx *c, const uint8_t *src, size_t src_size, uint8_t *dst,
                               size_t dst_size, QvError *error) {
  if (c->lz4d == NULL) {
    if (LZ4F_isError(LZ4F_createDecompressionContext(&c->lz4d, LZ4F_VERSION))) {
      c->lz4d = NULL;
      return qv_error_set(error, QV_ENOMEM, "LZ4: cannot create a decompression context");
    }
  } else {
    LZ4F_resetDecompressionContext(c->lz4d); /* a failed frame leaves it mid-frame */
  }
  size_t in_done = 0, out_done = 0;
  for (;;) {
    size_t in = src_size - in_done, out = dst_size - out_done;
    size_t r = LZ4F_decompress(c->lz4d, dst + out_done, &out, src + in_done, &in, NULL);
    if (LZ4F_isError(r))
      return qv_error_set(error, QV_EINVAL, "LZ4 frame is corrupt: %s", LZ4F_getErrorName(r));
    in_done += in;
    out_done += out;
    if (r == 0) { /* frame complete */
      if (out_done != dst_size)
        return qv_error_set(error, QV_EINVAL,
                            "LZ4 frame decompresses to %zu bytes, the buffer declares %zu",
                            out_done, dst_size);
      if (in_done != src_size)
        return qv_error_set(error, QV_EINVAL, "LZ4 frame is followed by %zu extra bytes",
                            src_size - in_done);
      return QV_OK;
    }
    if (in == 0 && out == 0)
      return out_done == dst_size
                 ? qv_error_set(error, QV_EINVAL,
                                "LZ4 frame decompresses to more than the declared %zu bytes",
                                dst_size)
                 : qv_error_set(error, QV_EINVAL,
                                "LZ4 frame is truncated (%zu of %zu bytes decompressed)",
                                out_done, dst_size);
  }
}

static QvStatus zstd_decompress(CodecCtx *c, const uint8_t *src, size_t src_size, uint8_t *dst,
                                size_t dst_size, QvError *error) {
  unsigned long long declared = ZSTD_getFrameContentSize(src, src_size);
  if (declared == ZSTD_CONTENTSIZE_ERROR)
    return qv_error_set(error, QV_EINVAL, "ZSTD frame header is invalid");
  if (declared != ZSTD_CONTENTSIZE_UNKNOWN && declared != dst_size)
    return qv_error_set(error, QV_EINVAL,
                        "ZSTD frame holds %llu bytes, the buffer declares %zu", declared,
                        dst_size);
  if (c->zd == NULL && (c->zd = ZSTD_createDCtx()) == NULL)
    return qv_error_set(error, QV_ENOMEM, "ZSTD: cannot create a decompression context");
  size_t r = ZSTD_decompressDCtx(c->zd, dst, dst_size, src, src_size);
  if (ZSTD_isError(r)) {
    if (ZSTD_getErrorCode(r) == ZSTD_error_dstSize_tooSmall)
      return qv_error_set(error, QV_EINVAL,
                          "ZSTD frame decompresses to more than the declared %zu bytes",
                          dst_size);
    return qv_error_set(error, QV_EINVAL, "ZSTD frame is corrupt: %s", ZSTD_getErrorName(r));
  }
  if (r != dst_size)
    return qv_error_set(error, QV_EINVAL,
                        "ZSTD frame decompresses to %zu bytes, the buffer declares %zu", r,
                        dst_size);
  return QV_OK;
}

static QvStatus decompress_with(CodecCtx *c, QvCompression codec, const uint8_t *src,
                                size_t src_size, uint8_t *dst, size_t dst_size, QvError *error) {
  switch (codec) {
    case QV_COMPRESSION_LZ4_FRAME: return lz4_decompress(c, src, src_size, dst, dst_size, error);
    case QV_COMPRESSION_ZSTD: return zstd_decompress(c, src, src_size, dst, dst_size, error);
    default: return qv_error_set(error, QV_EARG, "unknown compression codec %d", (int)codec);
  }
}

static LZ4F_preferences_t lz4_prefs(int level, size_t n) {
  LZ4F_preferences_t p;
  memset(&p, 0, sizeof p);
  p.compressionLevel = level;
  p.frameInfo.contentSize = n;
  return p;
}

/* qvi_codec_fail_after: compressions left before the injected failure
 * (negative: none). */
static atomic_long fail_countdown = -1;

void qvi_codec_fail_after(long n) { atomic_store(&fail_countdown, n); }

static QvStatus compress_with(CodecCtx *c, QvCompression codec, int level, const uint8_t *src,
                              size_t n, uint8_t *dst, size_t capacity, size_t *out_size,
                              QvError *error) {
  *out_size = 0;
  if (atomic_load_explicit(&fail_countdown, memory_order_relaxed) >= 0 &&
      atomic_fetch_sub(&fail_countdown, 1) == 0)
    return qv_error_set(error, QV_EIO, "compression failed (injected by a test)");
  if (codec == QV_COMPRESSION_LZ4_FRAME) {
    LZ4F_preferences_t p = lz4_prefs(level, n);
    size_t r = LZ4F_compressFrame(dst, capacity, src, n, &p);
    if (LZ4F_isError(r))
      return qv_error_set(error, QV_EINVAL, "LZ4 compression failed: %s", LZ4F_getErrorName(r));
    *out_size = r;
    return QV_OK;
  }
  if (codec == QV_COMPRESSION_ZSTD) {
    if (c->zc == NULL && (c->zc = ZSTD_createCCtx()) == NULL)
      return qv_error_set(error, QV_ENOMEM, "ZSTD: cannot create a compression context");
    size_t r = ZSTD_compressCCtx(c->zc, dst, capacity, src, n, level ? level : 1);
    if (ZSTD_isError(r))
      return qv_error_set(error, QV_EINVAL, "ZSTD compression failed: %s", ZSTD_getErrorName(r));
    *out_size = r;
    return QV_OK;
  }
  return qv_error_set(error, QV_EARG, "unknown compression codec %d", (int)codec);
}

QvStatus qv_decompress(QvCompression codec, const uint8_t *src, size_t src_size, uint8_t *dst,
                       size_t dst_size, QvError *error) {
  CodecCtx c;
  memset(&c, 0, sizeof c);
  QvStatus st = decompress_with(&c, codec, src, src_size, dst, dst_size, error);
  ctx_release(&c);
  return st;
}

size_t qv_compress_bound(QvCompression codec, size_t n) {
  if (codec == QV_COMPRESSION_LZ4_FRAME) {
    LZ4F_preferences_t p = lz4_prefs(0, n);
    return LZ4F_compressFrameBound(n, &p);
  }
  if (codec == QV_COMPRESSION_ZSTD) return ZSTD_compressBound(n);
  return n;
}

QvStatus qv_compress(QvCompression codec, int level, const uint8_t *src, size_t n, uint8_t *dst,
                     size_t capacity, size_t *out_size, QvError *error) {
  CodecCtx c;
  memset(&c, 0, sizeof c);
  QvStatus st = compress_with(&c, codec, level, src, n, dst, capacity, out_size, error);
  ctx_release(&c);
  return st;
}

/* ---- the runner */

struct QvCodecRunner {
  QvPool *pool; /* NULL with one thread */
  int threads;
  CodecCtx *ctx; /* one per thread */
};

QvStatus qvi_codec_runner_new(QvCodecRunner **out, int threads, QvError *error) {
  *out = NULL;
  if (threads < 1) threads = 1;
  QvCodecRunner *r = calloc(1, sizeof *r);
  if (r == NULL || (r->ctx = calloc((size_t)threads, sizeof *r->ctx)) == NULL) {
    free(r);
    return qv_error_set(error, QV_ENOMEM, "out of memory");
  }
  r->threads = threads;
  if (threads > 1) {
    QvStatus st = qvi_pool_new(&r->pool, threads, error);
    if (st) {
      qvi_codec_runner_free(r);
      return st;
    }
  }
  *out = r;
  return QV_OK;
}

void qvi_codec_runner_free(QvCodecRunner *r) {
  if (r == NULL) return;
  qvi_pool_free(r->pool);
  for (int i = 0; i < r->threads; i++) ctx_release(&r->ctx[i]);
  free(r->ctx);
  free(r);
}

int qvi_codec_runner_threads(const QvCodecRunner *r) { return r ? r->threads : 1; }

static QvStatus run_one(CodecCtx *c, bool compress, QvCompression codec, int level,
                        QvCodecJob *j, QvError *error) {
  if (compress)
    return compress_with(c, codec, level, j->src, j->src_size, j->dst, j->dst_size, &j->out_size,
                         error);
  return decompress_with(c, codec, j->src, j->src_size, j->dst, j->dst_size, error);
}

typedef struct Run {
  QvPoolGroup group; /* background runs (qvi_codec_submit) */
  QvCodecRunner *r;
  bool compress;
  QvCompression codec;
  int level;
  QvCodecJob *jobs;
  size_t n;
  size_t *order;           /* task i runs job order[i] */
  atomic_size_t first_bad; /* lowest failed job index so far (SIZE_MAX: none) */
  atomic_bool cancelled;   /* the owner gave up: skip what has not started */
} Run;

/* The contexts this thread used last: taken again when free, a ZSTD
 * context's tables (hundreds of KB) stay in this core's cache instead of
 * moving between the threads from task to task. Kept as (runner, index),
 * never as a pointer into r->ctx: a pointer left from a freed runner could
 * fall inside a newer runner's array off an element boundary, and claiming
 * its `busy` would write into another context's pointers. A runner freed
 * and another made at its address only makes the hint a wrong guess. */
static _Thread_local const QvCodecRunner *last_runner;
static _Thread_local int last_index;

/* No more tasks run at once than the pool has threads, so a free set of
 * contexts is always there; the scan only picks which. */
static CodecCtx *take_ctx(QvCodecRunner *r) {
  if (last_runner == r && last_index < r->threads &&
      atomic_exchange_explicit(&r->ctx[last_index].busy, 1, memory_order_acquire) == 0)
    return &r->ctx[last_index];
  for (;;)
    for (int k = 0; k < r->threads; k++)
      if (atomic_exchange_explicit(&r->ctx[k].busy, 1, memory_order_acquire) == 0) {
        last_runner = r;
        last_index = k;
        return &r->ctx[k];
      }
}

static void run_task(void *p, size_t i) {
  Run *run = p;
  size_t j = run->order[i];
  QvCodecJob *job = &run->jobs[j];
  /* a failure at a lower index decides the outcome: later jobs need not run */
  if (j > atomic_load_explicit(&run->first_bad, memory_order_relaxed) ||
      atomic_load_explicit(&run->cancelled, memory_order_relaxed)) {
    job->status = QV_EINVAL;
    return;
  }
  CodecCtx *c = take_ctx(run->r);
  job->status = run_one(c, run->compress, run->codec, run->level, job, NULL);
  atomic_store_explicit(&c->busy, 0, memory_order_release);
  if (job->status) {
    size_t was = atomic_load_explicit(&run->first_bad, memory_order_relaxed);
    while (j < was && !atomic_compare_exchange_weak(&run->first_bad, &was, j)) {
    }
  }
}

typedef struct SizeIndex {
  size_t size, index;
} SizeIndex;

static int larger_first(const void *a, const void *b) {
  const SizeIndex *x = a, *y = b;
  if (x->size != y->size) return x->size > y->size ? -1 : 1;
  return x->index < y->index ? -1 : x->index > y->index;
}

/* Below this many bytes in all, waking the workers costs more than it saves. */
static size_t parallel_min_bytes = (size_t)256 << 10;

size_t qvi_codec_set_parallel_min(size_t bytes) {
  size_t was = parallel_min_bytes;
  parallel_min_bytes = bytes;
  return was;
}

/* The jobs in index order on the caller, with the first failure's message.
 * The caller takes a set of contexts like any task: the workers may be
 * running a background run meanwhile. */
static QvStatus run_here(QvCodecRunner *r, bool compress, QvCompression codec, int level,
                         QvCodecJob *jobs, size_t n, size_t *failed, QvError *error) {
  CodecCtx *c = take_ctx(r);
  QvStatus st = QV_OK;
  for (size_t i = 0; i < n && !st; i++) {
    st = jobs[i].status = run_one(c, compress, codec, level, &jobs[i], error);
    if (st && failed) *failed = i;
  }
  atomic_store_explicit(&c->busy, 0, memory_order_release);
  return st;
}

/* A run for the pool, its tasks largest first (one frame per buffer, so a
 * message is a handful of uneven tasks; longest-first keeps the last one
 * from running alone); NULL when the jobs stay on the caller. */
static Run *plan(QvCodecRunner *r, bool compress, QvCompression codec, int level,
                 QvCodecJob *jobs, size_t n) {
  size_t total = 0;
  for (size_t i = 0; i < n; i++) total += compress ? jobs[i].src_size : jobs[i].dst_size;
  if (r->pool == NULL || n == 0 || total < parallel_min_bytes) return NULL;
  Run *run = malloc(sizeof *run);
  SizeIndex *by_size = malloc(n * sizeof *by_size);
  size_t *order = malloc(n * sizeof *order);
  if (run == NULL || by_size == NULL || order == NULL) { /* then on the caller */
    free(run);
    free(by_size);
    free(order);
    return NULL;
  }
  for (size_t i = 0; i < n; i++) {
    by_size[i].size = compress ? jobs[i].src_size : jobs[i].dst_size;
    by_size[i].index = i;
  }
  qsort(by_size, n, sizeof *by_size, larger_first);
  for (size_t i = 0; i < n; i++) order[i] = by_size[i].index;
  free(by_size);
  memset(run, 0, sizeof *run);
  run->r = r;
  run->compress = compress;
  run->codec = codec;
  run->level = level;
  run->jobs = jobs;
  run->n = n;
  run->order = order;
  atomic_init(&run->first_bad, SIZE_MAX);
  atomic_init(&run->cancelled, false);
  return run;
}

/* After every task returned: the outcome, and the run freed. */
static QvStatus conclude(Run *run, size_t *failed, QvError *error) {
  size_t bad = atomic_load(&run->first_bad);
  QvCodecRunner *r = run->r;
  bool compress = run->compress;
  QvCompression codec = run->codec;
  int level = run->level;
  QvCodecJob *jobs = run->jobs;
  free(run->order);
  free(run);
  if (bad == SIZE_MAX) return QV_OK;
  if (failed) *failed = bad;
  /* the message: the failing job again, alone (codecs fail deterministically) */
  CodecCtx *c = take_ctx(r);
  QvStatus st = run_one(c, compress, codec, level, &jobs[bad], error);
  atomic_store_explicit(&c->busy, 0, memory_order_release);
  if (st == QV_OK) st = qv_error_set(error, jobs[bad].status, "%s failed",
                                     compress ? "compression" : "decompression");
  return st;
}

QvStatus qvi_codec_run(QvCodecRunner *r, bool compress, QvCompression codec, int level,
                      QvCodecJob *jobs, size_t n, size_t *failed, QvError *error) {
  Run *run = n > 1 ? plan(r, compress, codec, level, jobs, n) : NULL;
  if (run == NULL) return run_here(r, compress, codec, level, jobs, n, failed, error);
  qvi_path_hit(QV_PATH_CODEC_THREADS);
  qvi_pool_run(r->pool, n, run_task, run);
  return conclude(run, failed, error);
}

/* ---- background runs */

struct QvCodecAsync {
  Run *run;        /* NULL: ran on the caller at submission */
  QvStatus status; /* of a run on the caller */
  size_t failed;
  QvError error;
};

QvStatus qvi_codec_submit(QvCodecRunner *r, bool compress, QvCompression codec, int level,
                         QvCodecJob *jobs, size_t n, QvCodecAsync **out, QvError *error) {
  *out = NULL;
  QvCodecAsync *a = calloc(1, sizeof *a);
  if (a == NULL) return qv_error_set(error, QV_ENOMEM, "out of memory");
  a->run = plan(r, compress, codec, level, jobs, n);
  if (a->run == NULL) {
    a->status = run_here(r, compress, codec, level, jobs, n, &a->failed, &a->error);
  } else {
    qvi_path_hit(QV_PATH_CODEC_THREADS);
    qvi_pool_submit(r->pool, &a->run->group, n, run_task, a->run);
  }
  *out = a;
  return QV_OK;
}

bool qvi_codec_background(const QvCodecAsync *a) { return a->run != NULL; }

QvStatus qvi_codec_wait(QvCodecRunner *r, QvCodecAsync *a, bool cancel, size_t *failed,
                       QvError *error) {
  if (a == NULL) return QV_OK;
  QvStatus st;
  if (a->run) {
    if (cancel) atomic_store_explicit(&a->run->cancelled, true, memory_order_relaxed);
    qvi_pool_wait(r->pool, &a->run->group);
    st = cancel ? QV_OK : conclude(a->run, failed, error);
    if (cancel) {
      free(a->run->order);
      free(a->run);
    }
  } else {
    st = cancel ? QV_OK : a->status;
    if (st) {
      if (failed) *failed = a->failed;
      if (error) *error = a->error;
    }
  }
  free(a);
  return st;
}
