/* Body compression of many buffers at once: the record batch reader and
 * writer hand every buffer of a message to a runner, which compresses or
 * decompresses them on its threads with codec contexts it keeps for its
 * lifetime (a ZSTD context costs as much to set up as compressing a few
 * hundred kilobytes). The output does not depend on the thread count: each
 * buffer is one frame, compressed by itself. */
#ifndef QUIVER_IPC_COMPRESSION_INTERNAL_H
#define QUIVER_IPC_COMPRESSION_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "quiver/compression.h"
#include "quiver/error.h"

/* One buffer. Compression: dst has room for qv_compress_bound(src_size)
 * and out_size receives the frame's size. Decompression: the frame must
 * decompress to exactly dst_size bytes, written straight into dst. */
typedef struct QvCodecJob {
  const uint8_t *src;
  size_t src_size;
  uint8_t *dst;
  size_t dst_size;
  size_t out_size;
  QvStatus status; /* set by qvi_codec_run */
} QvCodecJob;

/* Threads (a QvPool, created once when threads > 1) and one set of codec
 * contexts per thread. */
typedef struct QvCodecRunner QvCodecRunner;

QvStatus qvi_codec_runner_new(QvCodecRunner **out, int threads, QvError *error);
void qvi_codec_runner_free(QvCodecRunner *runner); /* NULL is a no-op */
int qvi_codec_runner_threads(const QvCodecRunner *runner);

/* Compresses (compress true, at `level`; 0 = the codec's default) or
 * decompresses every job; larger buffers are started first so that the
 * threads finish together. QV_OK, or the status and message of the failing
 * job with the lowest index (*failed, when not NULL, receives that index):
 * the same failure whatever the number of threads. */
QvStatus qvi_codec_run(QvCodecRunner *runner, bool compress, QvCompression codec, int level,
                      QvCodecJob *jobs, size_t n, size_t *failed, QvError *error);

/* Background runs: qvi_codec_submit starts what qvi_codec_run does and
 * returns while the runner's pool works (util/pool.h, background groups);
 * the caller serializes the next message meanwhile. Jobs whose buffers
 * add up to less than the parallel minimum, and every job of a one-thread
 * runner, run on the caller inside qvi_codec_submit. The jobs (and what
 * they point at) must stay untouched until qvi_codec_wait, which returns
 * the outcome exactly as qvi_codec_run would and frees *async; waiting runs
 * queued tasks on the caller (this run's first, then later runs'). cancel
 * true: jobs not started are skipped and the outcome is QV_OK (an owner
 * giving up, e.g. a writer freed mid-flight). One thread submits and waits
 * per runner. QV_ENOMEM only when the run's record cannot be allocated
 * (nothing ran then). */
typedef struct QvCodecAsync QvCodecAsync;
QvStatus qvi_codec_submit(QvCodecRunner *runner, bool compress, QvCompression codec, int level,
                         QvCodecJob *jobs, size_t n, QvCodecAsync **async, QvError *error);
/* Whether the run went to the pool (false: it ran inside qvi_codec_submit). */
bool qvi_codec_background(const QvCodecAsync *async);
QvStatus qvi_codec_wait(QvCodecRunner *runner, QvCodecAsync *async, bool cancel, size_t *failed,
                       QvError *error);

/* Test hook: the fewest bytes a message's buffers need in all to go to the
 * threads (default 256 KiB; fuzz targets set 0 so that small inputs take
 * the threaded path). Returns the previous value. Not thread-safe: set it
 * before any reader or writer runs. */
size_t qvi_codec_set_parallel_min(size_t bytes);

/* Test hook: the compression n compressions from now (0: the next one, on
 * whichever thread) fails with QV_EIO; negative disarms it. Process-wide. */
void qvi_codec_fail_after(long n);

#endif
