/* What the adapters share on top of the message reader. */
#ifndef QUIVER_IPC_READER_INTERNAL_H
#define QUIVER_IPC_READER_INTERNAL_H

#include <stdint.h>

#include "quiver/ipc.h"

/* Message `index` of `source` through a reader with default options, which
 * is freed before returning (the message holds what it points into). On a
 * path only that message's body is mapped. */
QvStatus qvi_ipc_source_nth(QvSource *source, int64_t index, const QvIpcReaderOptions *options,
                            QvIpcMessage *out, QvError *error);

/* For a format reader's error `st`: prefixes the file name when the source
 * is a path to a regular file (errors about memory or a descriptor stand
 * alone). Returns st. */
QvStatus qvi_source_error_prefix(const QvSource *source, QvStatus st, QvError *error);

#endif
