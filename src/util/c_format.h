/* The C Data Interface format string of an Arrow type, written once for
 * every reader that makes ArrowSchemas from Arrow metadata: the IPC schema
 * (adapters/rb_reader.c) and integration JSON (integration/json_read.c,
 * which parses its Type objects into a QvType first). */
#ifndef QUIVER_UTIL_C_FORMAT_H
#define QUIVER_UTIL_C_FORMAT_H

#include <stddef.h>
#include <stdint.h>

#include "quiver/error.h"
#include "quiver/format.h"

/* The format of an integer type ("c" .. "L"); a width other than 8, 16 or
 * 32 is 64 (the decoders refuse other widths before). */
const char *qvi_int_c_format(QvIntType t);

/* Writes the format of `t`, a field with `n_children` children, to
 * buf[0, size) (truncated as snprintf truncates; 16 + 128 * 4 bytes hold
 * every format but a timestamp's with a long time zone). QV_EINVAL for a
 * union whose type ids do not match its children or do not fit int8 and
 * for QV_TYPE_NONE or an id past the known ones. */
QvStatus qvi_type_c_format(const QvType *t, int64_t n_children, char *buf, size_t size,
                           QvError *error);

#endif
