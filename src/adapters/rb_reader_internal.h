/* The record batch stream reader over messages that arrive one by one from
 * elsewhere than a QvSource (Flight's FlightData over gRPC). */
#ifndef QUIVER_ADAPTERS_RB_READER_INTERNAL_H
#define QUIVER_ADAPTERS_RB_READER_INTERNAL_H

#include "quiver/c_data.h"
#include "quiver/ipc.h"
#include "quiver/recordbatch_ipc.h"

/* The next message: QV_OK with *out filled (its owner keeps metadata and
 * body alive; the reader resets it), QV_EOS at the end, or an error. */
typedef QvStatus (*QviRbNextMessage)(void *ctx, QvIpcMessage *out, QvError *error);

/* A stream reader whose messages come from next(ctx): the first must be
 * the Schema (read here). Bodies are used in place as for any source (the
 * message's owner is retained by the arrays). The reader calls
 * release(ctx) (when not NULL) when the stream is released, or here on
 * failure. Batches are never read ahead (messages arrive as sent). */
QvStatus qvi_rb_stream_reader_from_messages(struct ArrowArrayStream *out, QviRbNextMessage next,
                                            void *ctx, void (*release)(void *ctx),
                                            const QvRbReadOptions *options, QvError *error);

#endif
