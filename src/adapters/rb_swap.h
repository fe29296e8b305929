/* Byte order of record batch bodies: which buffers of which types hold
 * multi-byte values, and the one pass that copies a buffer while swapping
 * them. The reader calls it for each buffer of a body in the other byte
 * order, the writer for each buffer it writes in the other order. */
#ifndef QUIVER_ADAPTERS_RB_SWAP_H
#define QUIVER_ADAPTERS_RB_SWAP_H

#include <stdbool.h>
#include <stdint.h>

#include "quiver/array.h"
#include "quiver/format.h"

typedef enum QvSwapKind {
  QV_SWAP_NONE = 0, /* bytes, bitmaps, type ids, binary data */
  QV_SWAP_2,        /* 2-byte words */
  QV_SWAP_4,
  QV_SWAP_8,
  QV_SWAP_16,       /* decimal128: the whole 16-byte integer reversed */
  QV_SWAP_32,       /* decimal256 */
  QV_SWAP_MDN,      /* month-day-nano interval: int32, int32, int64 */
  QV_SWAP_VIEW      /* binary/utf8 views: length, and buffer index and offset when not inlined */
} QvSwapKind;

/* The QV_ENDIAN_* value of the host. */
QvEndianness qvi_rb_host_endianness(void);

/* Kind of buffer `slot` (0..2; -1 a view's variadic data buffer) of a node
 * of type t as the IPC body lays it out. */
QvSwapKind qvi_rb_swap_kind(const QvArrowSchemaView *t, int slot);

/* Copies len bytes from src to dst (which must not overlap unless equal),
 * swapping every whole element of the kind; trailing bytes of a partial
 * element are copied as they are (the caller's size checks refuse such a
 * buffer when it matters). to_host: src is in the foreign order (a view's
 * length is read after swapping), else dst is. */
void qvi_rb_swap_copy(QvSwapKind kind, uint8_t *dst, const uint8_t *src, int64_t len, bool to_host);

/* Kinds of the body buffers of the nodes `roots` (in the order the IPC
 * body holds them: pre-order, each node's own buffers first; the number of
 * variadic buffers of each view node from var_counts), written to kinds[0,
 * n_kinds). QV_EINVAL when the counts disagree with the types. */
QvStatus qvi_rb_swap_kinds(const QvArrayView *roots, int64_t n_roots, const int64_t *var_counts,
                          int64_t n_var, QvSwapKind *kinds, int64_t n_kinds, QvError *error);

#endif
