/** @file
 * quiver: status codes and the error struct used by every function.
 *
 * Every fallible function returns a QvStatus (QV_OK == 0) and takes an optional
 * `QvError *` that receives a human-readable message naming what was wrong and
 * where. The library never prints, aborts or exits. */
#ifndef QUIVER_ERROR_H
#define QUIVER_ERROR_H

#include "quiver/common.h"

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/** A status code: QV_OK (0) or one of the QV_E* codes below. */
typedef int QvStatus;

/** The status codes a QvStatus takes. */
enum {
  QV_OK = 0,          /**< success */
  QV_EINVAL = 1,      /**< input is malformed (bad bytes, violated invariant) */
  QV_ENOMEM = 2,      /**< allocation failed */
  QV_EIO = 3,         /**< read/write/open/mmap failed */
  QV_ENOTSUP = 4,     /**< well-formed but not supported by quiver */
  QV_ELIMIT = 5,      /**< a configured limit (size, depth, count) was exceeded */
  QV_ETRUNCATED = 6,  /**< input ended in the middle of a structure */
  QV_EARG = 7,        /**< the caller passed invalid arguments */
  QV_EOS = 8          /**< not an error: end of stream reached */
};

/** Capacity of QvError::message in bytes, the terminating NUL included;
 * longer messages are truncated. */
#define QV_ERROR_MESSAGE_SIZE 1024

/** What went wrong: filled by a failing function when the caller passes one
 * (callers allocate it, usually on the stack; no cleanup needed). */
typedef struct QvError {
  QvStatus code;                       /**< the status the function returned; QV_OK when cleared */
  char message[QV_ERROR_MESSAGE_SIZE]; /**< NUL-terminated, names what was wrong and where; "" when cleared */
} QvError;

/** Short constant name of a status ("QV_EINVAL"). */
QV_API const char *qv_status_name(QvStatus status);

/** Clears an error struct (code QV_OK, empty message). NULL is accepted. */
QV_API void qv_error_clear(QvError *error);

/** Sets code and printf-style message; returns `code` so callers can
 * `return qv_error_set(err, QV_EINVAL, "...")`. NULL `error` is accepted. */
QV_API QvStatus qv_error_set(QvError *error, QvStatus code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/** Prepends "prefix: " to the message already in `error`; returns error->code. */
QV_API QvStatus qv_error_prefix(QvError *error, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

#ifdef __cplusplus
}
#endif

#endif
