/** @file
 * quiver: version of the headers and of the library.
 *
 * The numbers follow semantic versioning: the major version changes when
 * the ABI of libquiver.so changes incompatibly (its SONAME is
 * `libquiver.so.<major>`). Compare QV_VERSION_NUMBER (what a program was
 * compiled against) with qv_version_number() (what it runs with). */
#ifndef QUIVER_VERSION_H
#define QUIVER_VERSION_H

#include "quiver/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Major version of these headers; changes with an incompatible ABI. */
#define QV_VERSION_MAJOR 0
/** Minor version of these headers; changes with added API. */
#define QV_VERSION_MINOR 5
/** Patch version of these headers; changes with fixes only. */
#define QV_VERSION_PATCH 0

/** The headers' version as one integer, MAJOR * 10000 + MINOR * 100 + PATCH
 * (0.5.0 is 500), for comparisons in `#if`. */
#define QV_VERSION_NUMBER (QV_VERSION_MAJOR * 10000 + QV_VERSION_MINOR * 100 + QV_VERSION_PATCH)
/** Helper of QV_VERSION_STRINGIFY: the argument's spelling as a string. */
#define QV_VERSION_STRINGIFY_(x) #x
/** Helper of QV_VERSION_STRING: the argument's macro expansion as a string. */
#define QV_VERSION_STRINGIFY(x) QV_VERSION_STRINGIFY_(x)
/** The headers' version as a string literal, "MAJOR.MINOR.PATCH" ("0.5.0"). */
#define QV_VERSION_STRING                                                            \
  QV_VERSION_STRINGIFY(QV_VERSION_MAJOR)                                             \
  "." QV_VERSION_STRINGIFY(QV_VERSION_MINOR) "." QV_VERSION_STRINGIFY(QV_VERSION_PATCH)

/** The library's version as "MAJOR.MINOR.PATCH" (static storage). */
QV_API const char *qv_version(void);
/** The library's QV_VERSION_NUMBER. */
QV_API int qv_version_number(void);

#ifdef __cplusplus
}
#endif

#endif
