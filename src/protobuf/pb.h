/* A strict, generic protobuf wire codec (encoding.md of protocol buffers):
 * varints, tags, the four wire types proto3 uses, and length-delimited
 * fields with bounds checks. It knows no schema: callers walk the fields of
 * a message and pick the numbers they know; every other field is skipped
 * (after its bounds are checked), as the protobuf rules require.
 *
 * Strict means: a varint longer than 10 bytes or overflowing 64 bits, a
 * field number 0 or above 2^29 - 1, the group wire types (3, 4: never used
 * by proto3), a length that runs past the end of the enclosing message (a
 * lying length), and a message larger than the caller's limit are refused
 * with a message naming the field and its offset. Decoded views point into
 * the input (no copy). */
#ifndef QUIVER_PROTOBUF_PB_H
#define QUIVER_PROTOBUF_PB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "quiver/error.h"

enum {
  QVI_PB_VARINT = 0,
  QVI_PB_FIXED64 = 1,
  QVI_PB_LEN = 2,
  QVI_PB_FIXED32 = 5
};

#define QVI_PB_MAX_FIELD ((uint32_t)0x1FFFFFFF)

/* A cursor over one message's bytes. */
typedef struct QviPbReader {
  const uint8_t *start; /* of the outermost message, for offsets in messages */
  const uint8_t *p;
  const uint8_t *end;
} QviPbReader;

/* One field: its number and wire type; `value` holds a VARINT, FIXED64 or
 * FIXED32 value, `data`/`size` a LEN field's bytes (inside the input). */
typedef struct QviPbField {
  uint32_t number;
  int wire;
  uint64_t value;
  const uint8_t *data;
  size_t size;
  size_t offset; /* of the tag, from the reader's start */
} QviPbField;

/* A reader over data[0..size); more than max_size bytes (0: no limit) is
 * QV_ELIMIT. */
QvStatus qvi_pb_reader_init(QviPbReader *r, const void *data, size_t size, size_t max_size,
                            QvError *error);
/* A reader over a LEN field's bytes (a nested message); offsets in its
 * messages stay those of the outermost message. */
void qvi_pb_reader_sub(QviPbReader *sub, const QviPbReader *parent, const QviPbField *f);
/* The next field: QV_OK, QV_EOS after the last one, or an error (the
 * reader then stays where it was). */
QvStatus qvi_pb_next(QviPbReader *r, QviPbField *f, QvError *error);

/* One varint at p (at most `avail` bytes): its length, or 0 when it is
 * truncated or malformed (*value untouched then). */
size_t qvi_pb_varint_decode(const uint8_t *p, size_t avail, uint64_t *value);

/* Checks that a field has the wire type `want` (QV_EINVAL naming `what`). */
QvStatus qvi_pb_expect(const QviPbField *f, int want, const char *what, QvError *error);
/* Proto3 scalar views of a VARINT field. int64 is two's complement of
 * the 64-bit value; bool is any non-zero value; int32 and enums must fit
 * 32 bits sign-extended (QV_EINVAL otherwise). */
static inline int64_t qvi_pb_int64(const QviPbField *f) { return (int64_t)f->value; }
static inline bool qvi_pb_bool(const QviPbField *f) { return f->value != 0; }
QvStatus qvi_pb_int32(const QviPbField *f, int32_t *out, const char *what, QvError *error);
/* A FIXED64 field as a double. */
double qvi_pb_double(const QviPbField *f);

/* ---- writing: a growing buffer */

typedef struct QviPbWriter {
  uint8_t *data;
  size_t size;
  size_t capacity;
  bool failed; /* an allocation failed: every later call is a no-op */
} QviPbWriter;

/* Bytes a varint of this value takes (1..10). */
size_t qvi_pb_varint_size(uint64_t v);
/* Writes a varint into p (room for 10 bytes); returns its length. */
size_t qvi_pb_varint_put(uint8_t *p, uint64_t v);
/* Bytes of a LEN field's tag and length for a payload of `size` bytes. */
size_t qvi_pb_len_prefix_size(uint32_t number, size_t size);

void qvi_pb_writer_init(QviPbWriter *w);
void qvi_pb_writer_reset(QviPbWriter *w);
void qvi_pb_put_raw(QviPbWriter *w, const void *data, size_t size);
void qvi_pb_put_tag(QviPbWriter *w, uint32_t number, int wire);
void qvi_pb_put_varint(QviPbWriter *w, uint64_t v);
/* A VARINT field (written even when zero: callers skip defaults). */
void qvi_pb_put_uint(QviPbWriter *w, uint32_t number, uint64_t v);
void qvi_pb_put_double(QviPbWriter *w, uint32_t number, double v);
/* A LEN field: tag, length, bytes. */
void qvi_pb_put_bytes(QviPbWriter *w, uint32_t number, const void *data, size_t size);
/* A LEN field's tag and length only (its payload follows, e.g. a body
 * written separately). */
void qvi_pb_put_len_prefix(QviPbWriter *w, uint32_t number, size_t size);
/* Appends another writer's bytes as a nested message field. */
void qvi_pb_put_message(QviPbWriter *w, uint32_t number, const QviPbWriter *sub);
/* QV_ENOMEM when an allocation failed. */
QvStatus qvi_pb_writer_status(const QviPbWriter *w, QvError *error);

#endif
