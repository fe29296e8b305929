/* CPU feature dispatch, written once for the library, and the counters
 * that let tests prove a fast path ran.
 *
 * Kernels built for a wider instruction set (target attributes on x86-64;
 * the baseline build targets plain x86-64) run only when qvi_cpu_has says
 * the CPU has it. qvi_cpu_override restricts what qvi_cpu_has reports, so a
 * test can run the portable path on a machine with AVX2 and compare.
 *
 * Every fast path bumps its counter once per call (not per element): a
 * relaxed atomic load and store, no locked read-modify-write, so it costs
 * a cycle or two against calls that each process a whole line, buffer or
 * conversion. Concurrent calls may lose counts, which only the
 * single-threaded tests read: before and after an operation, so that a
 * fallback cannot silently stand in for the path. */
#ifndef QUIVER_UTIL_CPU_H
#define QUIVER_UTIL_CPU_H

#include <stdbool.h>
#include <stdint.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define QV_X86_DISPATCH 1
#define QV_TARGET_AVX2 __attribute__((target("avx2")))
#define QV_TARGET_POPCNT __attribute__((target("popcnt")))
#define QV_TARGET_AVX2_POPCNT __attribute__((target("avx2,popcnt")))
#endif

#define QV_CPU_AVX2 (1u << 0)
#define QV_CPU_POPCNT (1u << 1)
#define QV_CPU_ALL (~0u)

/* Features of this CPU that may be used (detected, then masked by any
 * qvi_cpu_override). 0 on other architectures. */
unsigned qvi_cpu_features(void);
static inline bool qvi_cpu_has(unsigned features) {
  return (qvi_cpu_features() & features) == features;
}
/* Test hook: from now on report only the detected features that are also
 * in `allowed` (0: the portable paths only; QV_CPU_ALL: as detected).
 * Returns the previous mask. Process-wide. */
unsigned qvi_cpu_override(unsigned allowed);

/* Fast paths with a counter. */
typedef enum QvPath {
  QV_PATH_SCAN_AVX2,         /* dense scan: AVX2 zero-test-and-compact kernels */
  QV_PATH_SCAN_PORTABLE,     /* dense scan: the portable line scan of a contiguous line */
  QV_PATH_DENSE_ACROSS,      /* dense -> CSC / column-major -> CSR by the strip sort */
  QV_PATH_GROUP_BUCKETED,    /* COO/CSX -> CSX by cache-sized radix buckets */
  QV_PATH_OFFSETS_AVX2,      /* validation: AVX2 offsets monotonicity */
  QV_PATH_ASCII_AVX2,        /* validation: AVX2 ASCII prefix */
  QV_PATH_POPCNT,            /* validation: POPCNT null count */
  QV_PATH_STREAM_COPY_AVX2,  /* large copies with AVX2 streaming stores */
  QV_PATH_PLANES_AVX2,       /* tensor copy: k planes <-> interleaved groups, AVX2 kernels */
  QV_PATH_PLANES_PORTABLE,   /* the same, portable kernels (vectorised where the compiler can) */
  QV_PATH_CODEC_THREADS,     /* IPC body compression: a message's buffers on several threads */
  QV_PATH_EQUALS_TILED,      /* tensor equals across layouts by transposed micro-blocks */
  QV_PATH_EQUALS_AVX2,       /* the same, 8- and 4-byte values: AVX2 blocks, prefetched tiles */
  QV_PATH_CODEC_IN_PLACE,    /* IPC body compression: frames compressed straight into the sink */
  QV_PATH_SPARSE_WRITE_SEALED, /* sparse IPC write of a sealed tensor: no second validation */
  QV_PATH_SPARSE_VALIDATE_THREADS, /* CSR/CSC index scan split across a pool's threads accepted */
  QV_PATH_TENSOR_COPY_THREADS, /* tensor copy / null fill split over threads by leading index */
  QV_PATH_RB_WRITE_PIPELINED, /* record batch writer: a batch compressing while the one before is written */
  QV_PATH_PLANES_AVX2_DIRECT, /* k = 3 32-bit planes streamed straight from AVX2 registers */
  QV_PATH_RB_READ_AHEAD,     /* record batch reader: the next batch decompressing while one is held */
  QV_PATH_TRANSPOSE_EDGE,     /* tensor copy: a short source side (over half a line) by partial micro-blocks */
  QV_PATH_RECYCLED_BUFFER,    /* a large buffer served again from a recycler (util/recycle.h) */
  QV_PATH_CODEC_SINK_WINDOW,  /* frames compressed on threads into the sink's free memory, then moved */
  QV_PATH_TABLE_TENSOR_MEMCPY, /* table -> tensor: a same-type column copied with memcpy (column-major) */
  QV_PATH_TABLE_TENSOR_TILED, /* table -> tensor, row-major: gathered a cache-sized tile of rows at a time */
  QV_PATH_TABLE_TENSOR_PLANES, /* table -> tensor, row-major: evenly spaced same-type columns interleaved whole */
  QV_PATH_SPARSE_UNSTACK_SEALED, /* CSR -> sparse-vector column of a sealed (reader-validated) tensor: no scan */
  QV_PATH_FLIGHT_BODY_PLACED,  /* FlightData: data_body received on a 64-byte boundary, used in place */
  QV_PATH_SPARSE_THREADS,     /* sparse conversion: COO grouping / CSX transpose split across threads */
  QV_PATH_SEQ_BODY_REUSED,    /* stream reader: a body read straight into a buffer an earlier message handed back */
  QV_PATH_SPARSE_COLUMN_SCAN, /* sparse-vector column check: the rows scanned as one CSR matrix (vector kernel) */
  QV_PATH_SPARSE_CELL_CHECKED, /* sparse column cell view made without a second scan (the column checked it) */
  QV_PATH_SPARSE_DENSE_THREADS, /* sparse -> dense: the scatter split across a pool's threads */
  QV_PATH_TABLE_TENSOR_THREADS, /* table -> tensor: the copy split by ranges of output rows across threads */
  QV_PATH_MIGRATE_PIECES,     /* migrate: several messages' bodies written to the sink as one column buffer */
  QV_PATH_DENSE_SCAN_THREADS,  /* dense -> CSR/COO along the memory order: line blocks on a pool's threads */
  QV_PATH_DENSE_ACROSS_THREADS, /* dense -> CSC (the strip sort): line blocks, then strips, on a pool's threads */
  QV_PATH_GRPC_DIRECT_READ,   /* gRPC: a DATA frame's payload read from the socket straight into its message */
  QV_PATH_SINK_PREALLOCATED,  /* path sink: a large write's blocks allocated first (fallocate, size kept) */
  QV_PATH_SPARSE_CONVERT_SEALED, /* sparse conversion of a sealed tensor (reader- or conversion-made): no re-validation */
  QV_PATH_SPARSE_CONVERT_VALIDATED, /* sparse conversion: the input (not sealed) validated before it is read */
  QV_PATH_SPARSE_ROW_CUT,    /* CSX transpose on threads: a source row cut between two threads' ranges of entries */
  QV_PATH_HUGE_ADVISED,      /* a large buffer (sparse results, qv_aligned_alloc) advised to use transparent huge pages */
  QV_PATH_SINK_COPY_RANGE,    /* fd/path sink: bytes of a mapped input file copied file to file (copy_file_range) */
  QV_PATH_SINK_WRITEBACK,     /* path sink to be fsynced: writeback of what is written started early (sync_file_range) */
  QV_PATH_SPARSE_POPULATED,   /* sparse grouping on threads: output pages faulted in by disjoint parts first */
  QV_PATH_SINK_TMPFS_UNALLOCATED, /* path sink on tmpfs: a large write not preallocated (fallocate zeroes the pages first) */
  QV_PATH_DENSE_POPULATED,    /* dense -> CSC on threads: the output's pages faulted in by disjoint parts before pass 2 */
  QV_PATH_SPARSE_FLAT_COUNT,  /* CSX transpose, bucketed: pass 0 counts the keys as one flat array, not row by row */
  QV_PATH_SOURCE_PIPE_ENLARGED, /* fd/path source on a pipe or FIFO: its buffer raised to pipe-max-size */
  QV_PATH_COUNT
} QvPath;

extern uint64_t qvi_path_hits[QV_PATH_COUNT];

static inline void qvi_path_hit(QvPath path) {
  __atomic_store_n(&qvi_path_hits[path], __atomic_load_n(&qvi_path_hits[path], __ATOMIC_RELAXED) + 1,
                   __ATOMIC_RELAXED);
}
static inline uint64_t qvi_path_count(QvPath path) {
  return __atomic_load_n(&qvi_path_hits[path], __ATOMIC_RELAXED);
}

#endif
