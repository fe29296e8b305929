/* The record batch writer for callers whose column buffer is made of
 * pieces that lie apart (quiver migrate: several messages' bodies, each
 * where the source holds it). */
#ifndef QUIVER_ADAPTERS_RB_WRITER_INTERNAL_H
#define QUIVER_ADAPTERS_RB_WRITER_INTERNAL_H

#include <stdint.h>

#include "quiver/c_data.h"
#include "quiver/recordbatch_ipc.h"

typedef struct QviRbPiece {
  const uint8_t *data;
  int64_t len;
} QviRbPiece;

/* As qv_rb_writer_write, except that the batch's body buffer at address
 * `stand_in` is written as the pieces in order (sink writes from where each
 * piece is, no gather): the buffer's length must be the pieces' total, and
 * the writer never reads the stand-in's bytes (it may be memory nobody can
 * read). Exactly one body buffer must start at stand_in. Not for writers
 * that compress or swap byte order (they would read the buffer): QV_EARG. */
QvStatus qvi_rb_writer_write_pieces(QvRbWriter *w, const struct ArrowArray *batch,
                                    const uint8_t *stand_in, const QviRbPiece *pieces,
                                    int64_t n_pieces, QvError *error);

#endif
