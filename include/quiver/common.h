/* quiver: what every public header shares.
 *
 * QV_API marks the library's public functions and data. The library is
 * built with -fvisibility=hidden, so only what carries QV_API is exported
 * from libquiver.so; everything else is internal (and, in libquiver.a,
 * named qv_* so it cannot clash with a program's own symbols).
 *
 * Conventions used by every header:
 *  - Every fallible function returns a QvStatus (quiver/error.h) and takes an
 *    optional `QvError *` for the message.
 *  - Caller-allocated structs: qv_X_init(...) fills one, qv_X_reset(...)
 *    releases what it holds and zeroes it (safe on a zeroed struct and on
 *    NULL). Library-allocated objects: qv_X_new(&obj, ...) and qv_X_free(obj)
 *    (NULL is a no-op). Reference-counted objects (QvOwner, QvSource) add a
 *    reference with qv_X_retain; qv_X_free drops the caller's reference.
 *  - Options structs: NULL or a zeroed struct means "all defaults"; every
 *    options struct begins with `size_t struct_size`, which is 0 or
 *    sizeof(the struct as the caller compiled it), so later versions can
 *    add fields at the end without breaking callers built against an older
 *    header.
 *  - Iteration ends with the status QV_EOS (not an error). */
#ifndef QUIVER_COMMON_H
#define QUIVER_COMMON_H

#if defined(QV_BUILDING_LIBRARY) && defined(__GNUC__)
#define QV_API __attribute__((visibility("default")))
#else
#define QV_API
#endif

/* Time units of Arrow's time32/64, timestamp and duration types, with the
 * values of Schema.fbs's TimeUnit (so decoded metadata and ArrowSchema
 * views share them). */
typedef enum QvTimeUnit {
  QV_TIME_SECOND = 0,
  QV_TIME_MILLISECOND = 1,
  QV_TIME_MICROSECOND = 2,
  QV_TIME_NANOSECOND = 3
} QvTimeUnit;

#ifdef __cplusplus
extern "C" {
#endif

/* CPUs this process may run on (its affinity mask, so `taskset` and
 * container CPU sets count), at least 1 and at most 256: a caller's
 * natural value for the `threads` option of readers and writers. */
QV_API int qv_cpu_count(void);

#ifdef __cplusplus
}
#endif

#endif
