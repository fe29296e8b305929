/* What the Tensor and SparseTensor message writers share. */
#ifndef QUIVER_ADAPTERS_TENSOR_MESSAGE_H
#define QUIVER_ADAPTERS_TENSOR_MESSAGE_H

#include <stddef.h>
#include <stdint.h>

#include "quiver/format.h"
#include "quiver/tensor.h"

/* Both messages put their body at a multiple of this from the message
 * start and pad it to a multiple of it, so messages written one after
 * another keep 64-byte-aligned buffers. */
#define QV_TENSOR_BODY_ALIGN 64

/* A zeroed V5 message of header_type QV_HEADER_TENSOR or
 * QV_HEADER_SPARSE_TENSOR with its value type and shape set; dims (ndim
 * entries, kept by the caller while msg is used) receive the shape and the
 * optional names. */
void qvi_tensor_message_init(QvMessage *msg, uint8_t header_type, QvArrowType type, int32_t ndim,
                            const int64_t *shape, const char *const *names, QvTensorDim *dims);

/* Frames msg (its body_length set) 64-byte aligned into *meta (malloc'd)
 * and checks that metadata plus body fit in memory. `what` names the
 * message kind in errors ("Tensor"). */
QvStatus qvi_tensor_message_frame(const QvMessage *msg, const char *what, uint8_t **meta,
                                 size_t *meta_size, QvError *error);

/* Every reader refuses metadata before V4 (pre-0.8 Arrow, as Arrow C++
 * does): QV_ENOTSUP naming the version. `what` names the message or the
 * footer in the error. */
QvStatus qvi_metadata_version_check(int16_t version, const char *what, QvError *error);

#endif
