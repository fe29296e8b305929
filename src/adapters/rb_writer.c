/* Record batch writing: ArrowSchema -> IPC Schema, ArrowArray -> field nodes
 * and body buffers (slices are cut down to the rows they cover), dictionary
 * batches (full, delta or replacement), compression, stream and file
 * framing. Buffers that can be written as they are go straight from the
 * caller's memory to the sink. */
#include <stdlib.h>
#include <string.h>

#include "quiver/advanced.h"
#include "quiver/recordbatch_ipc.h"
#include "ipc/compression_internal.h"
#include "ipc/sink_internal.h"
#include "util/cpu.h"
#include "util/errpath.h"
#include "util/arena.h"
#include "adapters/rb_swap.h"
#include "adapters/rb_writer_internal.h"
#include "util/idmap.h"
#include "util/load.h"
#include "util/options.h"
#include "util/grow.h"

/* Padding and the offsets of an empty array (at most 63 bytes). */
static const uint8_t zeros[64];

static int64_t bitmap_bytes(int64_t bits) { return bits / 8 + (bits % 8 != 0); }

/* ---- serialization state of one message */

typedef struct Seg {
  const uint8_t *data;
  int64_t len;
  bool has_prefix; /* compressed bodies: int64 uncompressed length first */
  int64_t prefix;
  /* A bitmap pointing into the caller's buffer whose last byte holds bits
   * past the array's end: the bits of the array in it. 0: every bit. */
  uint8_t last_mask;
  /* written as these pieces in order instead of from data (which nothing
   * reads): qvi_rb_writer_write_pieces */
  const QviRbPiece *pieces;
  int64_t n_pieces;
} Seg;

typedef struct Ser {
  QvFieldNode *nodes;
  int64_t n_nodes, cap_nodes;
  Seg *segs;
  int64_t n_segs, cap_segs;
  int64_t *var;
  int64_t n_var, cap_var;
  void **temps;
  int64_t n_temps, cap_temps;
  QvError *error;
} Ser;

static bool grow(void **p, int64_t *cap, int64_t n, size_t elem) {
  if (n < *cap) return true;
  size_t c = (size_t)*cap;
  void *q = qvi_grow_array(*p, &c, (size_t)n + 1, 16, elem);
  if (q == NULL || c > INT64_MAX) return false;
  *p = q;
  *cap = (int64_t)c;
  return true;
}

static void ser_reset(Ser *s) {
  for (int64_t i = 0; i < s->n_temps; i++) free(s->temps[i]);
  s->n_nodes = s->n_segs = s->n_var = s->n_temps = 0;
}

static void ser_free(Ser *s) {
  ser_reset(s);
  free(s->nodes);
  free(s->segs);
  free(s->var);
  free(s->temps);
  memset(s, 0, sizeof *s);
}

static QvStatus nomem(Ser *s) { return qv_error_set(s->error, QV_ENOMEM, "out of memory"); }

static QvStatus push_node(Ser *s, int64_t length, int64_t nulls) {
  if (!grow((void **)&s->nodes, &s->cap_nodes, s->n_nodes, sizeof *s->nodes)) return nomem(s);
  s->nodes[s->n_nodes].length = length;
  s->nodes[s->n_nodes++].null_count = nulls;
  return QV_OK;
}

static QvStatus push_seg(Ser *s, const uint8_t *data, int64_t len) {
  if (!grow((void **)&s->segs, &s->cap_segs, s->n_segs, sizeof *s->segs)) return nomem(s);
  Seg *g = &s->segs[s->n_segs++];
  memset(g, 0, sizeof *g);
  g->data = len > 0 ? data : NULL;
  g->len = len;
  return QV_OK;
}

static uint8_t *temp(Ser *s, int64_t size) {
  if (!grow((void **)&s->temps, &s->cap_temps, s->n_temps, sizeof *s->temps)) return NULL;
  uint8_t *p = malloc(size > 0 ? (size_t)size : 1);
  if (p) s->temps[s->n_temps++] = p;
  return p;
}

/* Bits [from, from + n) of a bitmap as a buffer starting at bit 0. */
static QvStatus push_bitmap(Ser *s, const uint8_t *bits, int64_t from, int64_t n) {
  if (n == 0) return push_seg(s, NULL, 0);
  int64_t nb = bitmap_bytes(n);
  if (from % 8 == 0) {
    QvStatus st = push_seg(s, bits + from / 8, nb);
    if (!st && n % 8) s->segs[s->n_segs - 1].last_mask = (uint8_t)((1u << (n % 8)) - 1);
    return st;
  }
  uint8_t *out = temp(s, nb);
  if (out == NULL) return nomem(s);
  const uint8_t *src = bits + from / 8;
  int shift = (int)(from % 8);
  int64_t avail = bitmap_bytes(from + n) - from / 8;
  for (int64_t j = 0; j < nb; j++) {
    unsigned lo = src[j], hi = j + 1 < avail ? src[j + 1] : 0;
    out[j] = (uint8_t)((lo >> shift) | (hi << (8 - shift)));
  }
  if (n % 8) out[nb - 1] &= (uint8_t)((1u << (n % 8)) - 1);
  return push_seg(s, out, nb);
}

static int64_t nulls_in(const QvArrayView *v, int64_t start, int64_t length) {
  QvLayout L = qv_layout_of(v->type.storage_type);
  if (L == QV_LAYOUT_NULL) return length;
  if (!qv_layout_has_validity(L) || v->buffer[0] == NULL || length == 0) return 0;
  if (start == 0 && length == v->length && v->null_count >= 0) return v->null_count;
  return length - qv_bitmap_count_set(v->buffer[0], v->offset + start, length);
}

/* Offsets [p0, p0 + length] rebased to start at 0; *first / *last are the
 * original first and last offsets. */
static QvStatus push_offsets(Ser *s, const uint8_t *o, int w, int64_t p0, int64_t length,
                             int64_t *first, int64_t *last) {
  if (length == 0) {
    *first = *last = 0;
    return push_seg(s, zeros, w);
  }
  *first = qvi_ld_offset(o, w, p0);
  *last = qvi_ld_offset(o, w, p0 + length);
  if (*first == 0) return push_seg(s, o + p0 * w, (length + 1) * w);
  uint8_t *out = temp(s, (length + 1) * w);
  if (out == NULL) return nomem(s);
  if (w == 4) {
    int32_t base = (int32_t)*first;
    for (int64_t i = 0; i <= length; i++) {
      int32_t x = qvi_ld_i32(o + 4 * (p0 + i)) - base;
      memcpy(out + 4 * i, &x, 4);
    }
  } else {
    for (int64_t i = 0; i <= length; i++) {
      int64_t x = qvi_ld_i64(o + 8 * (p0 + i)) - *first;
      memcpy(out + 8 * i, &x, 8);
    }
  }
  return push_seg(s, out, (length + 1) * w);
}

static QvStatus emit(Ser *s, const QvArrayView *v, int64_t start, int64_t length, int depth);

static QvStatus emit_ree(Ser *s, const QvArrayView *v, int64_t p0, int64_t length, int depth) {
  const QvArrayView *re = &v->children[0], *values = &v->children[1];
  QvStatus st;
  if (length == 0) {
    if ((st = emit(s, re, 0, 0, depth + 1))) return st;
    return emit(s, values, 0, 0, depth + 1);
  }
  int w = re->type.byte_width;
  int64_t i0 = qv_array_view_get_run(v, p0 - v->offset);
  int64_t i1 = qv_array_view_get_run(v, p0 - v->offset + length - 1);
  int64_t n = i1 - i0 + 1;
  int64_t last = qv_array_view_get_int(re, i1);
  if (p0 == 0 && last == length) {
    if ((st = emit(s, re, i0, n, depth + 1))) return st;
  } else {
    /* rebase the run ends onto the slice */
    if ((st = push_node(s, n, 0)) || (st = push_seg(s, NULL, 0))) return st;
    uint8_t *out = temp(s, n * w);
    if (out == NULL) return nomem(s);
    for (int64_t k = 0; k < n; k++) {
      int64_t e = qv_array_view_get_int(re, i0 + k) - p0;
      if (e > length) e = length;
      qvi_st_bits(out + (size_t)k * (size_t)w, (size_t)w, (uint64_t)e); /* e fits: <= length */
    }
    if ((st = push_seg(s, out, n * w))) return st;
  }
  return emit(s, values, i0, n, depth + 1);
}

static QvStatus emit_dense_union(Ser *s, const QvArrayView *v, int64_t p0, int64_t length,
                                 int depth) {
  QvStatus st = push_seg(s, v->buffer[1] + p0, length);
  if (st) return st;
  int64_t lo[128], hi[128];
  for (int64_t k = 0; k < v->n_children; k++) {
    lo[k] = INT64_MAX;
    hi[k] = -1;
  }
  const int8_t *ids = (const int8_t *)v->buffer[1];
  for (int64_t i = p0; i < p0 + length; i++) {
    int c = ids[i] >= 0 ? v->type.union_child_index[ids[i]] : -1;
    if (c < 0) return qv_error_set(s->error, QV_EINVAL, "union has unknown type code %d", ids[i]);
    int64_t o = qvi_ld_i32(v->buffer[2] + 4 * i);
    if (o < lo[c]) lo[c] = o;
    if (o > hi[c]) hi[c] = o;
  }
  uint8_t *out = temp(s, length * 4);
  if (out == NULL) return nomem(s);
  for (int64_t i = p0; i < p0 + length; i++) {
    int c = v->type.union_child_index[ids[i]];
    int32_t o = (int32_t)(qvi_ld_i32(v->buffer[2] + 4 * i) - lo[c]);
    memcpy(out + 4 * (i - p0), &o, 4);
  }
  if ((st = push_seg(s, out, length * 4))) return st;
  for (int64_t k = 0; k < v->n_children; k++) {
    if (hi[k] < 0)
      st = emit(s, &v->children[k], 0, 0, depth + 1);
    else
      st = emit(s, &v->children[k], lo[k], hi[k] - lo[k] + 1, depth + 1);
    if (st) return st;
  }
  return QV_OK;
}

/* Field node(s) and buffers of v's logical rows [start, start + length). */
static QvStatus emit(Ser *s, const QvArrayView *v, int64_t start, int64_t length, int depth) {
  if (depth > QV_ARRAY_MAX_DEPTH)
    return qv_error_set(s->error, QV_ELIMIT, "array nested deeper than %d", QV_ARRAY_MAX_DEPTH);
  QvLayout L = qv_layout_of(v->type.storage_type);
  int64_t p0 = v->offset + start;
  int64_t nulls = nulls_in(v, start, length);
  QvStatus st = push_node(s, length, nulls);
  if (st) return st;
  if (qv_layout_has_validity(L)) {
    st = nulls ? push_bitmap(s, v->buffer[0], p0, length) : push_seg(s, NULL, 0);
    if (st) return st;
  }
  int w = qv_layout_offset_width(L);
  int64_t first, last;
  switch (L) {
    case QV_LAYOUT_NULL: return QV_OK;
    case QV_LAYOUT_BOOL: return push_bitmap(s, v->buffer[1], p0, length);
    case QV_LAYOUT_FIXED:
      return push_seg(s, v->buffer[1] + p0 * v->type.byte_width, length * v->type.byte_width);
    case QV_LAYOUT_BINARY:
    case QV_LAYOUT_LARGE_BINARY:
      if ((st = push_offsets(s, v->buffer[1], w, p0, length, &first, &last))) return st;
      return push_seg(s, v->buffer[2] + first, last - first);
    case QV_LAYOUT_LIST:
    case QV_LAYOUT_LARGE_LIST:
      if ((st = push_offsets(s, v->buffer[1], w, p0, length, &first, &last))) return st;
      return emit(s, &v->children[0], first, last - first, depth + 1);
    case QV_LAYOUT_LIST_VIEW:
    case QV_LAYOUT_LARGE_LIST_VIEW:
      if ((st = push_seg(s, v->buffer[1] + p0 * w, length * w)) ||
          (st = push_seg(s, v->buffer[2] + p0 * w, length * w)))
        return st;
      return emit(s, &v->children[0], 0, v->children[0].length, depth + 1);
    case QV_LAYOUT_VIEW:
      if ((st = push_seg(s, v->buffer[1] + p0 * 16, length * 16))) return st;
      if (!grow((void **)&s->var, &s->cap_var, s->n_var, sizeof *s->var)) return nomem(s);
      s->var[s->n_var++] = v->n_variadic;
      for (int64_t k = 0; k < v->n_variadic; k++)
        if ((st = push_seg(s, v->variadic[k], v->variadic_size[k]))) return st;
      return QV_OK;
    case QV_LAYOUT_FIXED_LIST: {
      int64_t n = v->type.fixed_size;
      return emit(s, &v->children[0], p0 * n, length * n, depth + 1);
    }
    case QV_LAYOUT_STRUCT:
      for (int64_t k = 0; k < v->n_children; k++)
        if ((st = emit(s, &v->children[k], p0, length, depth + 1))) return st;
      return QV_OK;
    case QV_LAYOUT_SPARSE_UNION:
      if ((st = push_seg(s, v->buffer[1] + p0, length))) return st;
      for (int64_t k = 0; k < v->n_children; k++)
        if ((st = emit(s, &v->children[k], p0, length, depth + 1))) return st;
      return QV_OK;
    case QV_LAYOUT_DENSE_UNION: return emit_dense_union(s, v, p0, length, depth);
    case QV_LAYOUT_REE: return emit_ree(s, v, p0, length, depth);
  }
  return QV_OK;
}

/* Canonical bytes of a serialized dictionary, to tell unchanged / grown /
 * replaced dictionaries apart. Bitmap bits past the end are masked off:
 * a grown dictionary's first values keep their bytes, but the byte their
 * last validity bit shares now holds the new values' bits too. */
static QvStatus canonical(Ser *s, uint8_t **out, int64_t *size) {
  int64_t n = 16 * s->n_nodes + 8 * s->n_var + 8 * s->n_segs;
  for (int64_t i = 0; i < s->n_segs; i++) n += s->segs[i].len;
  uint8_t *p = malloc(n > 0 ? (size_t)n : 1);
  if (p == NULL) return nomem(s);
  uint8_t *w = p;
  memcpy(w, s->nodes, (size_t)(16 * s->n_nodes));
  w += 16 * s->n_nodes;
  if (s->n_var) memcpy(w, s->var, (size_t)(8 * s->n_var));
  w += 8 * s->n_var;
  for (int64_t i = 0; i < s->n_segs; i++) {
    memcpy(w, &s->segs[i].len, 8);
    w += 8;
    if (s->segs[i].len) memcpy(w, s->segs[i].data, (size_t)s->segs[i].len);
    w += s->segs[i].len;
    if (s->segs[i].len && s->segs[i].last_mask) w[-1] &= s->segs[i].last_mask;
  }
  *out = p;
  *size = n;
  return QV_OK;
}

/* ---- the writer */

typedef struct WDict {
  int64_t id;
  const QvArrayView *node; /* first dictionary-encoded node with the id (writer's view tree) */
  const QvArrayView **others; /* further nodes sharing the id */
  int64_t n_others;
  char *path;              /* node's field path, for messages */
  const struct ArrowSchema *value_schema;
  uint8_t *last;
  int64_t last_size;
  int64_t last_length;
  bool written;
} WDict;

#define STAGE_SIZE ((size_t)1 << 20)

/* Compressed frames of one message's segments: scratch buffers kept from
 * message to message (no fresh pages per batch), and the codec jobs. */
typedef struct Frames {
  uint8_t **zbuf; /* compressed segment i */
  size_t *zcap;
  int64_t n_zbuf;
  QvCodecJob *jobs; /* n_zbuf of them */
  size_t n_jobs;
} Frames;

/* A record batch handed over with qv_rb_writer_write_move, compressing on
 * the writer's threads while the caller goes on. */
typedef struct Flight {
  struct ArrowArray batch; /* owned; released once its message is written */
  Ser ser;                 /* its segments: into batch, or ser's temps */
  int64_t length;
  Frames frames;
  QvCodecAsync *async; /* NULL: the slot is free */
  bool windowed;       /* frames in the sink's free memory: it must not move */
  int64_t end;         /* sink offset the batch's message cannot pass */
} Flight;

/* Batches in flight at most: the one just handed over, compressing, and
 * the one before it, whose tail may still be compressing while its
 * message is written. */
#define FLIGHTS 2

struct QvRbWriter {
  QvSink *sink; /* the caller's */
  QvRbWriteOptions opt;
  struct ArrowSchema schema;
  QvArrayView view;
  QvArena *arena;
  QvSchema ipc_schema;
  int64_t pos;
  QvBlock *dict_blocks;
  int64_t n_dict_blocks, cap_dict_blocks;
  QvBlock *batch_blocks;
  int64_t n_batch_blocks, cap_batch_blocks;
  WDict *dicts;
  int64_t n_dicts, cap_dicts;
  QvIdMap dict_index; /* id -> index into dicts */
  /* the dictionaries in writing order: each after those inside its values */
  int64_t *dict_order;
  int64_t n_dict_order, cap_dict_order;
  int64_t n_dict_nodes; /* dictionary-encoded nodes seen by build_field */
  uint8_t *stage;
  size_t stage_len;
  Ser ser;
  QvError failure;
  bool finished;
  bool swap; /* bodies in the foreign byte order */
  QvCodecRunner *codec; /* compressing writers: threads and codec contexts */
  Frames frames;        /* of the messages compressed while the caller waits */
  Flight flights[FLIGHTS];
  int oldest, in_flight; /* flights[oldest] is the next to be written */
};

static QvStatus flush(QvRbWriter *w, QvError *error) {
  if (w->stage_len == 0) return QV_OK;
  QvStatus st = qv_sink_write(w->sink, w->stage, w->stage_len, error);
  w->stage_len = 0;
  return st;
}

static QvStatus out(QvRbWriter *w, const void *data, size_t n, QvError *error) {
  w->pos += (int64_t)n;
  if (n >= STAGE_SIZE / 4) {
    QvStatus st = flush(w, error);
    if (st) return st;
    return qv_sink_write(w->sink, data, n, error);
  }
  if (w->stage_len + n > STAGE_SIZE) {
    QvStatus st = flush(w, error);
    if (st) return st;
  }
  if (n) memcpy(w->stage + w->stage_len, data, n);
  w->stage_len += n;
  return QV_OK;
}

static QvStatus pad(QvRbWriter *w, int64_t n, QvError *error) {
  return n > 0 ? out(w, zeros, (size_t)n, error) : QV_OK;
}

static int64_t padded(int64_t n, int64_t a) { return (n + a - 1) / a * a; }

/* Codec jobs compressing the segments of s: into f's scratch buffers, or,
 * when window is not NULL, into the sink's free memory from there, each
 * frame at its worst-case offset (the layout window_span counts; the
 * frames move into place when the message is written). */
static QvStatus prepare_frames(QvCompression codec, Frames *f, const Ser *s, uint8_t *window,
                               int64_t align, QvError *error) {
  if (s->n_segs > f->n_zbuf) {
    uint8_t **b = realloc(f->zbuf, (size_t)s->n_segs * sizeof *b);
    if (b) f->zbuf = b;
    size_t *c = b ? realloc(f->zcap, (size_t)s->n_segs * sizeof *c) : NULL;
    if (c) f->zcap = c;
    QvCodecJob *j = c ? realloc(f->jobs, (size_t)s->n_segs * sizeof *j) : NULL;
    if (j == NULL) return qv_error_set(error, QV_ENOMEM, "out of memory compressing");
    f->jobs = j;
    for (int64_t i = f->n_zbuf; i < s->n_segs; i++) {
      f->zbuf[i] = NULL;
      f->zcap[i] = 0;
    }
    f->n_zbuf = s->n_segs;
  }
  size_t n = 0;
  int64_t at = 0;
  for (int64_t i = 0; i < s->n_segs; i++) {
    const Seg *g = &s->segs[i];
    if (g->len == 0) continue;
    size_t bound = qv_compress_bound(codec, (size_t)g->len);
    uint8_t *dst = window ? window + at + 8 : NULL; /* after its length prefix */
    at += padded(8 + (int64_t)bound, align);
    if (dst == NULL && f->zcap[i] < bound) {
      qv_free(f->zbuf[i]);
      f->zcap[i] = 0;
      if ((f->zbuf[i] = qv_aligned_alloc(bound)) == NULL)
        return qv_error_set(error, QV_ENOMEM, "out of memory compressing %lld bytes",
                            (long long)g->len);
      f->zcap[i] = bound;
    }
    QvCodecJob *j = &f->jobs[n++];
    memset(j, 0, sizeof *j);
    j->src = g->data;
    j->src_size = (size_t)g->len;
    j->dst = dst ? dst : f->zbuf[i];
    j->dst_size = bound;
  }
  f->n_jobs = n;
  return QV_OK;
}

/* After the jobs ran: the segments point at their frames. A segment that
 * does not shrink is stored as it is (length -1). */
static void apply_frames(const Frames *f, Ser *s) {
  size_t n = 0;
  for (int64_t i = 0; i < s->n_segs; i++) {
    Seg *g = &s->segs[i];
    if (g->len == 0) continue;
    const QvCodecJob *j = &f->jobs[n++];
    g->has_prefix = true;
    if ((int64_t)j->out_size < g->len) {
      g->prefix = g->len;
      g->data = j->dst;
      g->len = (int64_t)j->out_size;
    } else {
      g->prefix = -1; /* not worth it: stored as is */
    }
  }
}

static void frames_free(Frames *f) {
  for (int64_t i = 0; i < f->n_zbuf; i++) qv_free(f->zbuf[i]);
  free(f->zbuf);
  free(f->zcap);
  free(f->jobs);
  memset(f, 0, sizeof *f);
}

static QvStatus add_block(QvBlock **blocks, int64_t *n, int64_t *cap, QvBlock b, QvError *error) {
  if (!grow((void **)blocks, cap, *n, sizeof **blocks))
    return qv_error_set(error, QV_ENOMEM, "out of memory");
  (*blocks)[(*n)++] = b;
  return QV_OK;
}

/* Frames a message so that the metadata ends on a multiple of the
 * alignment counted from the start of the output (the body and therefore
 * every buffer then is aligned in a memory-mapped file as well). */
static QvStatus frame(QvRbWriter *w, const QvMessage *msg, uint8_t **meta, size_t *meta_size,
                      QvError *error) {
  uint8_t *m;
  size_t n;
  QvStatus st = qv_ipc_frame_message(msg, 8, &m, &n, error);
  if (st) return st;
  size_t align = (size_t)w->opt.alignment;
  size_t total = n;
  while ((size_t)(w->pos % (int64_t)align + (int64_t)total) % align != 0) total += 8;
  if (total - 8 > INT32_MAX) {
    free(m);
    return qv_error_set(error, QV_ELIMIT, "message metadata is too large");
  }
  if (total != n) {
    uint8_t *p = calloc(1, total);
    if (p == NULL) {
      free(m);
      return qv_error_set(error, QV_ENOMEM, "out of memory");
    }
    memcpy(p, m, n);
    free(m);
    qvi_st_le_u32(p + 4, (uint32_t)(total - 8)); /* little-endian, as all framing */
    m = p;
  }
  *meta = m;
  *meta_size = total;
  return QV_OK;
}

/* Turns the host-order segments of the message about to be written into
 * the foreign order: the kinds come from the types of the emitted nodes
 * (the columns, or the values of dictionary dict_id). */
static QvStatus swap_segs(QvRbWriter *w, Ser *s, int64_t dict_id, QvError *error) {
  const QvArrayView *roots = w->view.children;
  int64_t n_roots = w->view.n_children;
  if (dict_id >= 0) {
    roots = NULL;
    for (int64_t i = 0; i < w->n_dicts && roots == NULL; i++)
      if (w->dicts[i].id == dict_id) roots = w->dicts[i].node->dictionary;
    if (roots == NULL) return qv_error_set(error, QV_EINVAL, "no dictionary %lld", (long long)dict_id);
    n_roots = 1;
  }
  QvSwapKind *kinds = malloc((size_t)(s->n_segs ? s->n_segs : 1) * sizeof *kinds);
  if (kinds == NULL) return nomem(s);
  QvStatus st = qvi_rb_swap_kinds(roots, n_roots, s->var, s->n_var, kinds, s->n_segs, error);
  for (int64_t i = 0; i < s->n_segs && !st; i++) {
    Seg *g = &s->segs[i];
    if (kinds[i] == QV_SWAP_NONE || g->len == 0) continue;
    uint8_t *dst = temp(s, g->len);
    if (dst == NULL) {
      st = nomem(s);
      break;
    }
    qvi_rb_swap_copy(kinds[i], dst, g->data, g->len, false);
    g->data = dst;
  }
  free(kinds);
  return st;
}

static QvStatus swap_segs(QvRbWriter *w, Ser *s, int64_t dict_id, QvError *error);

/* The framed metadata of a RecordBatch (dict_id < 0) or DictionaryBatch
 * message of the segments in s, whose buffers are `bufs`. */
static QvStatus message_meta(QvRbWriter *w, const Ser *s, QvBuffer *bufs, int64_t body_length,
                             int64_t length, int64_t dict_id, bool is_delta, uint8_t **meta,
                             size_t *meta_size, QvError *error) {
  QvRecordBatch rb;
  memset(&rb, 0, sizeof rb);
  rb.length = length;
  rb.n_nodes = s->n_nodes;
  rb.nodes = s->nodes;
  rb.n_buffers = s->n_segs;
  rb.buffers = bufs;
  rb.compression = w->opt.compression;
  rb.method = QV_COMPRESSION_METHOD_BUFFER;
  rb.has_variadic_buffer_counts = s->n_var > 0;
  rb.n_variadic_buffer_counts = s->n_var;
  rb.variadic_buffer_counts = s->var;
  QvMessage msg;
  memset(&msg, 0, sizeof msg);
  msg.version = QV_METADATA_V5;
  msg.body_length = body_length;
  if (dict_id < 0) {
    msg.header_type = QV_HEADER_RECORD_BATCH;
    msg.header.record_batch = rb;
  } else {
    msg.header_type = QV_HEADER_DICTIONARY_BATCH;
    msg.header.dictionary_batch.id = dict_id;
    msg.header.dictionary_batch.data = rb;
    msg.header.dictionary_batch.is_delta = is_delta;
  }
  return frame(w, &msg, meta, meta_size, error);
}

/* The worst case of a message of the segments in s: its metadata's size
 * (framed where the writer is now) and its body with every frame at its
 * bound (a frame that does not shrink is stored as it is: the bound covers
 * both). The metadata's size does not depend on the lengths in it
 * (fixed-size structs), only its padding on where it starts. */
static QvStatus worst_case(QvRbWriter *w, const Ser *s, int64_t length, int64_t dict_id,
                           bool is_delta, size_t *meta_size, int64_t *body, QvError *error) {
  QvBuffer *bufs = malloc((size_t)(s->n_segs ? s->n_segs : 1) * sizeof *bufs);
  if (bufs == NULL) return qv_error_set(error, QV_ENOMEM, "out of memory");
  int64_t worst = 0;
  for (int64_t i = 0; i < s->n_segs; i++) {
    int64_t len = s->segs[i].len;
    int64_t total = len ? 8 + (int64_t)qv_compress_bound(w->opt.compression, (size_t)len) : 0;
    bufs[i].offset = worst;
    bufs[i].length = total;
    worst += padded(total, w->opt.alignment);
  }
  uint8_t *meta;
  QvStatus st = message_meta(w, s, bufs, worst, length, dict_id, is_delta, &meta, meta_size, error);
  free(bufs);
  if (st) return st;
  free(meta);
  *body = worst;
  return QV_OK;
}

/* Bytes from a message's first byte to the end of its frames at their
 * worst-case offsets in the sink's free memory (prepare_frames): the
 * largest metadata the message can have (one alignment more than here, as
 * it may start elsewhere), then every frame at its bound. Each frame there
 * starts at or after where it will end up, whatever the compressed sizes:
 * so the frames move into place front to back without one overwriting
 * another not yet moved, and a message's end never passes the worst-case
 * end (the next message's window starts there). */
static QvStatus window_span(QvRbWriter *w, const Ser *s, int64_t length, int64_t dict_id,
                            bool is_delta, int64_t *meta_max, int64_t *span, QvError *error) {
  size_t meta_size;
  int64_t body;
  QvStatus st = worst_case(w, s, length, dict_id, is_delta, &meta_size, &body, error);
  if (st) return st;
  *meta_max = (int64_t)meta_size + w->opt.alignment;
  *span = *meta_max + body;
  return QV_OK;
}

/* Where the frames of a message starting at sink offset `start` (or
 * before) are compressed in the sink's free memory, or NULL (scratch
 * buffers then): *end receives the sink offset its message cannot pass. */
static QvStatus frames_window(QvRbWriter *w, const Ser *s, int64_t length, int64_t dict_id,
                              bool is_delta, int64_t start, bool may_grow, uint8_t **window,
                              int64_t *end, QvError *error) {
  int64_t meta_max = 0, span = 0;
  *window = NULL;
  *end = start;
  if (qvi_sink_room(w->sink) == 0) return QV_OK; /* never any: skip the metadata */
  QvStatus st = window_span(w, s, length, dict_id, is_delta, &meta_max, &span, error);
  if (st) return st;
  *end = start + span;
  int64_t written = qv_sink_bytes_written(w->sink);
  uint8_t *base = qvi_sink_window(w->sink, (size_t)(*end - written), may_grow);
  if (base) *window = base + (start - written) + meta_max;
  return QV_OK;
}

/* Compresses the segments of s on the writer's threads, the caller
 * waiting: into the sink's free memory when it has room (nothing in
 * flight, so the message starts where the writer is), else scratch. */
static QvStatus compress_segs(QvRbWriter *w, Ser *s, int64_t length, int64_t dict_id,
                              bool is_delta, QvError *error) {
  uint8_t *window;
  int64_t end;
  int64_t start = qv_sink_bytes_written(w->sink) + (int64_t)w->stage_len;
  QvStatus st = frames_window(w, s, length, dict_id, is_delta, start, true, &window, &end, error);
  if (!st) st = prepare_frames(w->opt.compression, &w->frames, s, window, w->opt.alignment, error);
  if (!st)
    st = qvi_codec_run(w->codec, true, w->opt.compression, w->opt.compression_level, w->frames.jobs,
                      w->frames.n_jobs, NULL, error);
  if (!st) {
    apply_frames(&w->frames, s);
    if (window) qvi_path_hit(QV_PATH_CODEC_SINK_WINDOW);
  }
  return st;
}

static QvStatus add_message_block(QvRbWriter *w, QvBlock block, int64_t dict_id, QvError *error) {
  if (dict_id < 0)
    return add_block(&w->batch_blocks, &w->n_batch_blocks, &w->cap_batch_blocks, block, error);
  return add_block(&w->dict_blocks, &w->n_dict_blocks, &w->cap_dict_blocks, block, error);
}

/* One thread compressing into a buffer or memory sink: the message is laid
 * out with every frame at its worst-case size, each frame is compressed
 * straight into its final place in the sink, then the metadata goes in
 * front and the unused tail is given back. The frames are the ones
 * compress_segs makes, without copying each from scratch memory into the
 * sink. *done false: the sink cannot be written this way (nothing was). */
static QvStatus write_in_place(QvRbWriter *w, int64_t length, int64_t dict_id, bool is_delta,
                               bool *done, QvError *error) {
  Ser *s = &w->ser;
  QvCompression codec = w->opt.compression;
  int64_t align = w->opt.alignment;
  *done = false;
  if (qvi_sink_room(w->sink) == 0) return QV_OK;
  size_t meta_size;
  int64_t worst;
  QvStatus st = worst_case(w, s, length, dict_id, is_delta, &meta_size, &worst, error);
  if (st) return st;
  QvBuffer *bufs = malloc((size_t)(s->n_segs ? s->n_segs : 1) * sizeof *bufs);
  if (bufs == NULL) return qv_error_set(error, QV_ENOMEM, "out of memory");
  size_t reserved = meta_size + (size_t)worst;
  uint8_t *base = NULL;
  if (qvi_sink_room(w->sink) >= reserved + w->stage_len && !(st = flush(w, error)))
    st = qvi_sink_reserve(w->sink, reserved, &base, error);
  if (st || base == NULL) {
    free(bufs);
    return st;
  }
  uint8_t *body = base + meta_size;
  int64_t off = 0;
  for (int64_t i = 0; i < s->n_segs && !st; i++) {
    const Seg *g = &s->segs[i];
    bufs[i].offset = off;
    bufs[i].length = 0;
    if (g->len == 0) continue;
    uint8_t *dst = body + off;
    size_t cap = qv_compress_bound(codec, (size_t)g->len), n = 0;
    QvCodecJob job = {g->data, (size_t)g->len, dst + 8, cap, 0, QV_OK};
    if ((st = qvi_codec_run(w->codec, true, codec, w->opt.compression_level, &job, 1, NULL, error)))
      break;
    n = job.out_size;
    int64_t prefix = g->len;
    if ((int64_t)n >= g->len) { /* not worth it: stored as is */
      memcpy(dst + 8, g->data, (size_t)g->len);
      n = (size_t)g->len;
      prefix = -1;
    }
    qvi_st_le_u64(dst, (uint64_t)prefix); /* little-endian whatever the body's order */
    int64_t total = 8 + (int64_t)n;
    memset(dst + total, 0, (size_t)(padded(total, align) - total));
    bufs[i].length = total;
    off += padded(total, align);
  }
  uint8_t *meta = NULL;
  if (!st) st = message_meta(w, s, bufs, off, length, dict_id, is_delta, &meta, &meta_size, error);
  free(bufs);
  if (st) {
    qvi_sink_unreserve(w->sink, reserved);
    return st;
  }
  /* the metadata's size does not depend on the lengths in it (fixed-size
   * structs); should it differ, the body moves */
  if (meta_size + (size_t)off > reserved) {
    free(meta);
    qvi_sink_unreserve(w->sink, reserved);
    return qv_error_set(error, QV_ELIMIT, "message metadata grew past its reservation");
  }
  if (base + meta_size != body) memmove(base + meta_size, body, (size_t)off);
  memcpy(base, meta, meta_size);
  free(meta);
  qvi_sink_unreserve(w->sink, reserved - meta_size - (size_t)off);
  QvBlock block = {w->pos, (int32_t)meta_size, off};
  w->pos += (int64_t)meta_size + off;
  qvi_path_hit(QV_PATH_CODEC_IN_PLACE);
  *done = true;
  return add_message_block(w, block, dict_id, error);
}

static QvStatus write_message(QvRbWriter *w, const Ser *s, int64_t length, int64_t dict_id,
                              bool is_delta, QvError *error);

/* Writes one RecordBatch (dict_id < 0) or DictionaryBatch message from the
 * serialized segments in w->ser. */
static QvStatus write_batch_message(QvRbWriter *w, int64_t length, int64_t dict_id,
                                    bool is_delta, QvError *error) {
  Ser *s = &w->ser;
  QvStatus st;
  if (w->swap && (st = swap_segs(w, s, dict_id, error))) return st;
  if (w->opt.compression != QV_COMPRESSION_NONE) {
    if (qvi_codec_runner_threads(w->codec) == 1) {
      bool done;
      if ((st = write_in_place(w, length, dict_id, is_delta, &done, error)) || done) return st;
    }
    if ((st = compress_segs(w, s, length, dict_id, is_delta, error))) return st;
  }
  return write_message(w, s, length, dict_id, is_delta, error);
}

/* Writes the message of the segments in s, compressed already when the
 * writer compresses. */
static QvStatus write_message(QvRbWriter *w, const Ser *s, int64_t length, int64_t dict_id,
                              bool is_delta, QvError *error) {
  QvStatus st;
  int64_t align = w->opt.alignment;
  QvBuffer *bufs = s->n_segs ? malloc((size_t)s->n_segs * sizeof *bufs) : NULL;
  if (s->n_segs && bufs == NULL) return qv_error_set(error, QV_ENOMEM, "out of memory");
  int64_t off = 0;
  for (int64_t i = 0; i < s->n_segs; i++) {
    int64_t total = s->segs[i].len + (s->segs[i].has_prefix ? 8 : 0);
    bufs[i].offset = off;
    bufs[i].length = total;
    off += padded(total, align);
  }
  uint8_t *meta;
  size_t meta_size;
  st = message_meta(w, s, bufs, off, length, dict_id, is_delta, &meta, &meta_size, error);
  free(bufs);
  if (st) return st;
  QvBlock block = {w->pos, (int32_t)meta_size, off};
  st = out(w, meta, meta_size, error);
  free(meta);
  for (int64_t i = 0; i < s->n_segs && !st; i++) {
    const Seg *g = &s->segs[i];
    int64_t total = g->len + (g->has_prefix ? 8 : 0);
    uint8_t prefix[8];
    qvi_st_le_u64(prefix, (uint64_t)g->prefix); /* little-endian whatever the body's order */
    if (g->has_prefix) st = out(w, prefix, 8, error);
    if (!st && g->pieces) {
      for (int64_t k = 0; k < g->n_pieces && !st; k++)
        if (g->pieces[k].len) st = out(w, g->pieces[k].data, (size_t)g->pieces[k].len, error);
    } else if (!st && g->len) {
      st = out(w, g->data, (size_t)g->len, error);
    }
    if (!st) st = pad(w, padded(total, align) - total, error);
  }
  if (st) return st;
  return add_message_block(w, block, dict_id, error);
}

/* ---- schema conversion */


static QvStatus fill_type(QvRbWriter *w, const QvArrowSchemaView *t, QvType *out, QvError *error) {
  memset(out, 0, sizeof *out);
  switch (t->type) {
    case QV_ARROW_NULL: out->id = QV_TYPE_NULL; break;
    case QV_ARROW_BOOL: out->id = QV_TYPE_BOOL; break;
    case QV_ARROW_INT8:
    case QV_ARROW_UINT8:
    case QV_ARROW_INT16:
    case QV_ARROW_UINT16:
    case QV_ARROW_INT32:
    case QV_ARROW_UINT32:
    case QV_ARROW_INT64:
    case QV_ARROW_UINT64:
      out->id = QV_TYPE_INT;
      out->u.int_.bit_width = t->byte_width * 8;
      out->u.int_.is_signed = t->type == QV_ARROW_INT8 || t->type == QV_ARROW_INT16 ||
                              t->type == QV_ARROW_INT32 || t->type == QV_ARROW_INT64;
      break;
    case QV_ARROW_FLOAT16:
    case QV_ARROW_FLOAT32:
    case QV_ARROW_FLOAT64:
      out->id = QV_TYPE_FLOATING_POINT;
      out->u.floating_point.precision = t->type == QV_ARROW_FLOAT16 ? QV_PRECISION_HALF
                                        : t->type == QV_ARROW_FLOAT32    ? QV_PRECISION_SINGLE
                                                                       : QV_PRECISION_DOUBLE;
      break;
    case QV_ARROW_DECIMAL32:
    case QV_ARROW_DECIMAL64:
    case QV_ARROW_DECIMAL128:
    case QV_ARROW_DECIMAL256:
      out->id = QV_TYPE_DECIMAL;
      out->u.decimal.precision = t->decimal_precision;
      out->u.decimal.scale = t->decimal_scale;
      out->u.decimal.bit_width = t->decimal_bit_width;
      break;
    case QV_ARROW_DATE32:
    case QV_ARROW_DATE64:
      out->id = QV_TYPE_DATE;
      out->u.date.unit = t->type == QV_ARROW_DATE32 ? QV_DATE_DAY : QV_DATE_MILLISECOND;
      break;
    case QV_ARROW_TIME32:
    case QV_ARROW_TIME64:
      out->id = QV_TYPE_TIME;
      out->u.time.unit = (int16_t)t->time_unit;
      out->u.time.bit_width = t->type == QV_ARROW_TIME32 ? 32 : 64;
      break;
    case QV_ARROW_TIMESTAMP:
      out->id = QV_TYPE_TIMESTAMP;
      out->u.timestamp.unit = (int16_t)t->time_unit;
      if (t->timezone_len > 0) {
        char *tz = qvi_arena_strndup(w->arena, t->timezone, t->timezone_len);
        if (tz == NULL) return qv_error_set(error, QV_ENOMEM, "out of memory");
        out->u.timestamp.timezone = tz;
        out->u.timestamp.timezone_len = t->timezone_len;
      }
      break;
    case QV_ARROW_DURATION:
      out->id = QV_TYPE_DURATION;
      out->u.duration.unit = (int16_t)t->time_unit;
      break;
    case QV_ARROW_INTERVAL_MONTHS:
    case QV_ARROW_INTERVAL_DAY_TIME:
    case QV_ARROW_INTERVAL_MONTH_DAY_NANO:
      out->id = QV_TYPE_INTERVAL;
      out->u.interval.unit = t->type == QV_ARROW_INTERVAL_MONTHS     ? QV_INTERVAL_YEAR_MONTH
                             : t->type == QV_ARROW_INTERVAL_DAY_TIME ? QV_INTERVAL_DAY_TIME
                                                                     : QV_INTERVAL_MONTH_DAY_NANO;
      break;
    case QV_ARROW_BINARY: out->id = QV_TYPE_BINARY; break;
    case QV_ARROW_STRING: out->id = QV_TYPE_UTF8; break;
    case QV_ARROW_LARGE_BINARY: out->id = QV_TYPE_LARGE_BINARY; break;
    case QV_ARROW_LARGE_STRING: out->id = QV_TYPE_LARGE_UTF8; break;
    case QV_ARROW_BINARY_VIEW: out->id = QV_TYPE_BINARY_VIEW; break;
    case QV_ARROW_STRING_VIEW: out->id = QV_TYPE_UTF8_VIEW; break;
    case QV_ARROW_FIXED_SIZE_BINARY:
      out->id = QV_TYPE_FIXED_SIZE_BINARY;
      out->u.fixed_size_binary.byte_width = t->byte_width;
      break;
    case QV_ARROW_LIST: out->id = QV_TYPE_LIST; break;
    case QV_ARROW_LARGE_LIST: out->id = QV_TYPE_LARGE_LIST; break;
    case QV_ARROW_LIST_VIEW: out->id = QV_TYPE_LIST_VIEW; break;
    case QV_ARROW_LARGE_LIST_VIEW: out->id = QV_TYPE_LARGE_LIST_VIEW; break;
    case QV_ARROW_FIXED_SIZE_LIST:
      out->id = QV_TYPE_FIXED_SIZE_LIST;
      out->u.fixed_size_list.list_size = t->fixed_size;
      break;
    case QV_ARROW_STRUCT: out->id = QV_TYPE_STRUCT; break;
    case QV_ARROW_MAP:
      out->id = QV_TYPE_MAP;
      out->u.map.keys_sorted = (t->schema->flags & ARROW_FLAG_MAP_KEYS_SORTED) != 0;
      break;
    case QV_ARROW_SPARSE_UNION:
    case QV_ARROW_DENSE_UNION: {
      out->id = QV_TYPE_UNION;
      out->u.union_.mode = t->type == QV_ARROW_DENSE_UNION ? QV_UNION_DENSE : QV_UNION_SPARSE;
      out->u.union_.has_type_ids = true;
      out->u.union_.n_type_ids = t->n_children;
      int32_t *ids = qvi_arena_alloc(w->arena, (size_t)(t->n_children ? t->n_children : 1), 4);
      if (ids == NULL) return qv_error_set(error, QV_ENOMEM, "out of memory");
      for (int64_t i = 0; i < t->n_children; i++) ids[i] = t->union_type_ids[i];
      out->u.union_.type_ids = ids;
      break;
    }
    case QV_ARROW_RUN_END_ENCODED: out->id = QV_TYPE_RUN_END_ENCODED; break;
    default: return qv_error_set(error, QV_ENOTSUP, "type %s cannot be written", qv_arrow_type_name(t->type));
  }
  return QV_OK;
}

static QvStatus build_metadata(QvRbWriter *w, const char *metadata, int64_t *n,
                               const QvKeyValue **out, QvError *error) {
  *n = 0;
  *out = NULL;
  if (metadata == NULL) return QV_OK;
  QvArrowMetadataIter it;
  qv_arrow_metadata_iter_init(&it, metadata);
  int64_t count = it.remaining;
  if (count == 0) return QV_OK;
  QvKeyValue *kv = qvi_arena_alloc(w->arena, (size_t)count, sizeof *kv);
  if (kv == NULL) return qv_error_set(error, QV_ENOMEM, "out of memory");
  const char *k, *v;
  int32_t kl, vl;
  int64_t i = 0;
  while (qv_arrow_metadata_iter_next(&it, &k, &kl, &v, &vl)) {
    kv[i].key = k;
    kv[i].key_len = kl > 0 ? (size_t)kl : 0;
    kv[i].value = v;
    kv[i].value_len = vl > 0 ? (size_t)vl : 0;
    i++;
  }
  *n = i;
  *out = kv;
  return QV_OK;
}

/* Whether two value types of one shared dictionary agree: formats (which
 * carry every type parameter), child names and nullability, nested
 * dictionaries' index and value types. */
static bool same_value_type(const struct ArrowSchema *a, const struct ArrowSchema *b, int depth) {
  if (depth > QV_ARRAY_MAX_DEPTH || strcmp(a->format, b->format) != 0 ||
      a->n_children != b->n_children || (a->dictionary == NULL) != (b->dictionary == NULL))
    return false;
  if (a->dictionary && !same_value_type(a->dictionary, b->dictionary, depth + 1)) return false;
  for (int64_t i = 0; i < a->n_children; i++) {
    const struct ArrowSchema *ca = a->children[i], *cb = b->children[i];
    if (strcmp(ca->name ? ca->name : "", cb->name ? cb->name : "") != 0 ||
        (ca->flags & ARROW_FLAG_NULLABLE) != (cb->flags & ARROW_FLAG_NULLABLE) ||
        !same_value_type(ca, cb, depth + 1))
      return false;
  }
  return true;
}

/* Field path for messages (util/errpath.h): names joined by '.', "[i]"
 * for unnamed fields. */
static size_t wpath_push(QvErrPath *p, const char *name, int64_t index) {
  if (name && *name) return qvi_errpath_push(p, "%s%.64s", p->len ? "." : "", name);
  return qvi_errpath_push(p, "%s[%lld]", p->len ? "." : "", (long long)index);
}

/* The WDict of a dictionary-encoded node: the id the options give it (or
 * the next number), shared with earlier nodes of that id. */
static QvStatus dict_for_node(QvRbWriter *w, const QvArrayView *v, const QvErrPath *path,
                              int64_t *out, bool *fresh, QvError *error) {
  int64_t k = w->n_dict_nodes++;
  int64_t id = k;
  if (w->opt.dictionary_ids) {
    if (k >= w->opt.n_dictionary_ids)
      return qv_error_set(error, QV_EARG,
                          "dictionary_ids has %lld ids, the schema has more dictionary-encoded "
                          "fields", (long long)w->opt.n_dictionary_ids);
    id = w->opt.dictionary_ids[k];
    if (id < 0)
      return qv_error_set(error, QV_EARG, "dictionary id %lld of field '%s' is negative",
                          (long long)id, path->text);
  }
  const struct ArrowSchema *values = v->type.schema->dictionary;
  int64_t i;
  if (qvi_idmap_get(&w->dict_index, id, &i)) {
    WDict *d = &w->dicts[i];
    if (!same_value_type(d->value_schema, values, 0))
      return qv_error_set(error, QV_EINVAL,
                          "fields '%s' and '%s' share dictionary id %lld but disagree on its "
                          "value type ('%.32s' and '%.32s')",
                          d->path, path->text, (long long)id, d->value_schema->format,
                          values->format);
    const QvArrayView **o = realloc(d->others, (size_t)(d->n_others + 1) * sizeof *o);
    if (o == NULL) return qv_error_set(error, QV_ENOMEM, "out of memory");
    o[d->n_others++] = v;
    d->others = o;
    *out = i;
    *fresh = false;
    return QV_OK;
  }
  if (!grow((void **)&w->dicts, &w->cap_dicts, w->n_dicts, sizeof *w->dicts) ||
      !qvi_idmap_put(&w->dict_index, id, w->n_dicts))
    return qv_error_set(error, QV_ENOMEM, "out of memory");
  WDict *d = &w->dicts[w->n_dicts];
  memset(d, 0, sizeof *d);
  d->id = id;
  d->node = v;
  d->value_schema = values;
  d->path = malloc(path->len + 1);
  if (d->path == NULL) return qv_error_set(error, QV_ENOMEM, "out of memory");
  memcpy(d->path, path->text, path->len + 1);
  *out = w->n_dicts++;
  *fresh = true;
  return QV_OK;
}

static QvStatus build_field(QvRbWriter *w, const QvArrayView *v, QvField *f, QvErrPath *path,
                            int64_t index, int depth, QvError *error) {
  if (depth > QV_ARRAY_MAX_DEPTH)
    return qv_error_set(error, QV_ELIMIT, "schema nested deeper than %d", QV_ARRAY_MAX_DEPTH);
  const struct ArrowSchema *s = v->type.schema;
  memset(f, 0, sizeof *f);
  if (s->name) {
    f->name = s->name;
    f->name_len = strlen(s->name);
  }
  size_t mark = wpath_push(path, s->name, index);
  f->nullable = (s->flags & ARROW_FLAG_NULLABLE) != 0;
  const QvArrayView *tv = v->dictionary ? v->dictionary : v;
  QvStatus st = fill_type(w, &tv->type, &f->type, error);
  if (st) return st;
  int64_t dict_index = -1;
  bool fresh = false;
  if (v->dictionary) {
    QvDictionaryEncoding *de = qvi_arena_alloc(w->arena, 1, sizeof *de);
    if (de == NULL) return qv_error_set(error, QV_ENOMEM, "out of memory");
    if ((st = dict_for_node(w, v, path, &dict_index, &fresh, error))) return st;
    de->id = w->dicts[dict_index].id;
    de->has_index_type = true;
    QvType it;
    QvArrowSchemaView index_type = v->type;
    index_type.type = index_type.storage_type;
    if ((st = fill_type(w, &index_type, &it, error))) return st;
    de->index_type = it.u.int_;
    de->is_ordered = (s->flags & ARROW_FLAG_DICTIONARY_ORDERED) != 0;
    f->dictionary = de;
  }
  if (tv->n_children > 0) {
    QvField *c = qvi_arena_alloc(w->arena, (size_t)tv->n_children, sizeof *c);
    if (c == NULL) return qv_error_set(error, QV_ENOMEM, "out of memory");
    for (int64_t i = 0; i < tv->n_children; i++)
      if ((st = build_field(w, &tv->children[i], &c[i], path, i, depth + 1, error))) return st;
    f->children = c;
    f->n_children = tv->n_children;
  }
  if (fresh) {
    /* after the dictionaries inside its values: a reader needs those first */
    if (!grow((void **)&w->dict_order, &w->cap_dict_order, w->n_dict_order, sizeof *w->dict_order))
      return qv_error_set(error, QV_ENOMEM, "out of memory");
    w->dict_order[w->n_dict_order++] = dict_index;
  }
  qvi_errpath_pop(path, mark);
  return build_metadata(w, s->metadata, &f->n_metadata, &f->metadata, error);
}

/* ---- batches in flight (qv_rb_writer_write_move)
 *
 * A batch is serialized and its compression submitted to the writer's
 * threads; the batch before it is then waited for (the caller running
 * compression tasks of either meanwhile) and written, and the call
 * returns with the new batch still compressing. So the threads never idle
 * at the end of a batch (a batch is six frames or so, one per buffer, and
 * the last one ran alone), and what stays serial (serializing, metadata,
 * moving frames into place, the caller producing its next batch) overlaps
 * with compression. A batch's frames go to the sink's free memory past
 * the worst-case end of the batch before it (frames_window), so no memory
 * of the writer's is touched: scratch buffers per writer were fresh pages,
 * zeroed by the kernel on every qv_rb_write_all. The bytes are those of
 * qv_rb_writer_write: same frames, messages in the same order. */

static bool flights_possible(const QvRbWriter *w) {
  /* dictionary messages would have to be ordered against batches in
   * flight: such schemas take the waiting path */
  return w->codec && qvi_codec_runner_threads(w->codec) > 1 && w->n_dicts == 0;
}

/* Gives up every batch in flight: nothing more is written. */
static void abandon_flights(QvRbWriter *w) {
  for (; w->in_flight > 0; w->in_flight--) {
    Flight *f = &w->flights[w->oldest];
    qvi_codec_wait(w->codec, f->async, true, NULL, NULL);
    f->async = NULL;
    ser_reset(&f->ser);
    if (f->batch.release) f->batch.release(&f->batch);
    w->oldest = (w->oldest + 1) % FLIGHTS;
  }
}

/* Waits for the oldest batch in flight and writes it. */
static QvStatus land_oldest(QvRbWriter *w, QvError *error) {
  Flight *f = &w->flights[w->oldest];
  /* the next batch is compressing already: this is the pipelined path */
  if (w->in_flight > 1 && qvi_codec_background(f->async)) qvi_path_hit(QV_PATH_RB_WRITE_PIPELINED);
  QvStatus st = qvi_codec_wait(w->codec, f->async, false, NULL, error);
  f->async = NULL;
  if (!st) {
    apply_frames(&f->frames, &f->ser);
    st = write_message(w, &f->ser, f->length, -1, false, error);
    if (!st && f->windowed) qvi_path_hit(QV_PATH_CODEC_SINK_WINDOW);
  }
  if (!st) st = flush(w, error);
  if (st) qv_error_prefix(error, "record batch %lld", (long long)w->n_batch_blocks);
  ser_reset(&f->ser);
  f->batch.release(&f->batch);
  w->oldest = (w->oldest + 1) % FLIGHTS;
  w->in_flight--;
  return st;
}

/* Writes every batch in flight, in order; a failure abandons the rest. */
static QvStatus land_flights(QvRbWriter *w, QvError *error) {
  QvStatus st = QV_OK;
  while (!st && w->in_flight > 0) st = land_oldest(w, error);
  if (st) abandon_flights(w);
  return st;
}

void qv_rb_writer_free(QvRbWriter *w) {
  if (w == NULL) return;
  abandon_flights(w);
  for (int k = 0; k < FLIGHTS; k++) {
    ser_free(&w->flights[k].ser);
    frames_free(&w->flights[k].frames);
  }
  if (w->schema.release) w->schema.release(&w->schema);
  qv_array_view_reset(&w->view);
  qvi_arena_free(w->arena);
  free(w->dict_blocks);
  free(w->batch_blocks);
  for (int64_t i = 0; i < w->n_dicts; i++) {
    free(w->dicts[i].last);
    free(w->dicts[i].others);
    free(w->dicts[i].path);
  }
  free(w->dicts);
  qvi_idmap_free(&w->dict_index);
  free(w->dict_order);
  free(w->stage);
  ser_free(&w->ser);
  qvi_codec_runner_free(w->codec);
  frames_free(&w->frames);
  free(w);
}

int64_t qv_rb_writer_bytes_written(const QvRbWriter *w) { return w->pos; }

static QvStatus fail(QvRbWriter *w, QvStatus st, QvError *error) {
  if (st && w->failure.code == QV_OK) {
    if (error) w->failure = *error;
    w->failure.code = st;
  }
  return st;
}

/* quiver never writes a schema its own readers refuse with their default
 * limits: FlatBuffers nesting stops at 64 tables, which a chain of about
 * 61 nested fields (fewer with dictionaries) reaches before the field
 * depth limit does. Decoding the framed schema (as it will be written) is
 * exact and cheap. */
static QvStatus check_schema_readable(const uint8_t *framed, size_t size, QvError *error) {
  QvMessage back;
  QvError why;
  /* the FlatBuffer after the 8-byte prefix, with its padding, as a reader
   * gets it */
  QvStatus st = qv_message_decode(framed + 8, size - 8, NULL, &back, &why);
  if (st == QV_OK) {
    qv_message_reset(&back);
    return QV_OK;
  }
  return qv_error_set(error, QV_ELIMIT, "schema: readers with default limits would refuse it (%s)",
                      why.message);
}

QvStatus qv_rb_writer_new(QvRbWriter **result, const struct ArrowSchema *schema, QvSink *sink,
                          const QvRbWriteOptions *options, QvError *error) {
  *result = NULL;
  if (sink == NULL) return qv_error_set(error, QV_EARG, "no sink");
  QvRbWriteOptions o;
  QvStatus st = QV_OPTIONS_LOAD(&o, options, QvRbWriteOptions, error);
  if (st) return st;
  QvRbWriter *w = calloc(1, sizeof *w);
  if (w == NULL) return qv_error_set(error, QV_ENOMEM, "out of memory");
  w->opt = o;
  if (w->opt.alignment == 0) w->opt.alignment = 8;
  if (w->opt.alignment != 8 && w->opt.alignment != 64)
    st = qv_error_set(error, QV_EARG, "alignment must be 8 or 64, not %d", w->opt.alignment);
  else if (w->opt.endianness < QV_ENDIAN_NATIVE || w->opt.endianness > QV_ENDIAN_BIG)
    st = qv_error_set(error, QV_EARG, "unknown endianness %d", w->opt.endianness);
  else if (w->opt.compression != QV_COMPRESSION_NONE &&
           w->opt.compression != QV_COMPRESSION_LZ4_FRAME &&
           w->opt.compression != QV_COMPRESSION_ZSTD)
    st = qv_error_set(error, QV_EARG, "unknown compression %d", (int)w->opt.compression);
  else if (w->opt.threads < 0 || w->opt.threads > QV_RB_MAX_THREADS)
    st = qv_error_set(error, QV_EARG, "threads must be 0..%d, not %d", QV_RB_MAX_THREADS,
                      w->opt.threads);
  /* the threads start here, once for the writer's life */
  if (!st && w->opt.compression != QV_COMPRESSION_NONE)
    st = qvi_codec_runner_new(&w->codec, w->opt.threads, error);
  w->sink = sink;
  w->ser.error = error;
  w->stage = st ? NULL : malloc(STAGE_SIZE);
  w->arena = st ? NULL : qvi_arena_new();
  if (!st && (w->stage == NULL || w->arena == NULL))
    st = qv_error_set(error, QV_ENOMEM, "out of memory");
  if (!st) st = qv_arrow_schema_copy(schema, &w->schema, error);
  if (!st && strcmp(w->schema.format, "+s") != 0)
    st = qv_error_set(error, QV_EARG, "a record batch schema must be a struct (\"+s\"), not \"%.32s\"",
                      w->schema.format);
  if (!st) st = qv_array_view_init(&w->view, &w->schema, error);
  QvField *fields = NULL;
  if (!st && w->view.n_children > 0) {
    fields = qvi_arena_alloc(w->arena, (size_t)w->view.n_children, sizeof *fields);
    if (fields == NULL) st = qv_error_set(error, QV_ENOMEM, "out of memory");
  }
  for (int64_t i = 0; !st && i < w->view.n_children; i++) {
    QvErrPath path;
    qvi_errpath_clear(&path);
    st = build_field(w, &w->view.children[i], &fields[i], &path, i, 0, error);
  }
  if (!st && w->opt.dictionary_ids && w->n_dict_nodes != w->opt.n_dictionary_ids)
    st = qv_error_set(error, QV_EARG,
                      "dictionary_ids has %lld ids for %lld dictionary-encoded fields",
                      (long long)w->opt.n_dictionary_ids, (long long)w->n_dict_nodes);
  if (!st) {
    QvEndianness host = qvi_rb_host_endianness();
    w->ipc_schema.endianness = w->opt.endianness == QV_ENDIAN_LITTLE ? QV_ENDIAN_LITTLE
                               : w->opt.endianness == QV_ENDIAN_BIG  ? QV_ENDIAN_BIG
                                                                         : host;
    w->swap = w->ipc_schema.endianness != host;
    w->ipc_schema.n_fields = w->view.n_children;
    w->ipc_schema.fields = fields;
    st = build_metadata(w, w->schema.metadata, &w->ipc_schema.n_metadata,
                        &w->ipc_schema.metadata, error);
  }
  QvMessage msg;
  memset(&msg, 0, sizeof msg);
  msg.version = QV_METADATA_V5;
  msg.header_type = QV_HEADER_SCHEMA;
  msg.header.schema = w->ipc_schema;
  /* staged only (the sink sees nothing before the flush below), so a
   * schema refused here leaves the sink untouched */
  if (!st && w->opt.format == QV_IPC_FORMAT_FILE) st = out(w, "ARROW1\0\0", 8, error);
  uint8_t *meta = NULL;
  size_t meta_size = 0;
  if (!st) st = frame(w, &msg, &meta, &meta_size, error);
  if (!st) st = check_schema_readable(meta, meta_size, error);
  if (!st) st = out(w, meta, meta_size, error);
  free(meta);
  if (!st) st = flush(w, error);
  if (st) {
    qv_rb_writer_free(w);
    return st;
  }
  *result = w;
  return QV_OK;
}

static QvStatus write_dictionaries(QvRbWriter *w, QvError *error) {
  Ser *s = &w->ser;
  for (int64_t k = 0; k < w->n_dict_order; k++) {
    WDict *d = &w->dicts[w->dict_order[k]];
    const QvArrayView *values = d->node->dictionary;
    ser_reset(s);
    QvStatus st = emit(s, values, 0, values->length, 0);
    uint8_t *full = NULL;
    int64_t full_size = 0;
    if (!st) st = canonical(s, &full, &full_size);
    if (st) return st;
    /* one id is one dictionary: every field sharing it must hold it */
    for (int64_t j = 0; j < d->n_others; j++) {
      const QvArrayView *other = d->others[j]->dictionary;
      if (other->array == values->array && other->offset == values->offset &&
          other->length == values->length)
        continue;
      uint8_t *bytes = NULL;
      int64_t size = 0;
      ser_reset(s);
      st = emit(s, other, 0, other->length, 0);
      if (!st) st = canonical(s, &bytes, &size);
      bool same = !st && size == full_size && memcmp(bytes, full, (size_t)size) == 0;
      free(bytes);
      if (st || !same) {
        free(full);
        if (st) return st;
        return qv_error_set(error, QV_EINVAL,
                            "fields share dictionary id %lld but this batch gives them different "
                            "dictionaries (%lld and %lld values; the first field is '%s')",
                            (long long)d->id, (long long)values->length,
                            (long long)other->length, d->path);
      }
    }
    if (d->written && full_size == d->last_size && memcmp(full, d->last, (size_t)full_size) == 0) {
      free(full);
      continue; /* unchanged */
    }
    bool delta = false;
    if (d->written && !w->opt.no_dictionary_deltas && values->length > d->last_length) {
      ser_reset(s);
      uint8_t *prefix = NULL;
      int64_t prefix_size = 0;
      st = emit(s, values, 0, d->last_length, 0);
      if (!st) st = canonical(s, &prefix, &prefix_size);
      if (st) {
        free(full);
        return st;
      }
      delta = prefix_size == d->last_size && memcmp(prefix, d->last, (size_t)prefix_size) == 0;
      free(prefix);
    }
    if (d->written && !delta && w->opt.format == QV_IPC_FORMAT_FILE) {
      free(full);
      return qv_error_set(error, QV_EINVAL,
                          "dictionary %lld changed; the file format only allows it to grow "
                          "(delta batches)", (long long)d->id);
    }
    ser_reset(s);
    int64_t from = delta ? d->last_length : 0;
    st = emit(s, values, from, values->length - from, 0);
    if (!st) st = write_batch_message(w, values->length - from, d->id, delta, error);
    if (st) {
      free(full);
      return qv_error_prefix(error, "dictionary %lld", (long long)d->id);
    }
    free(d->last);
    d->last = full;
    d->last_size = full_size;
    d->last_length = values->length;
    d->written = true;
  }
  return QV_OK;
}

/* Points the one segment that starts at stand_in at the pieces. */
static QvStatus place_pieces(Ser *s, const uint8_t *stand_in, const QviRbPiece *pieces,
                             int64_t n_pieces, QvError *error) {
  int64_t total = 0, found = 0;
  for (int64_t k = 0; k < n_pieces; k++) total += pieces[k].len;
  for (int64_t i = 0; i < s->n_segs; i++) {
    Seg *g = &s->segs[i];
    if (g->data != stand_in || g->len == 0) continue;
    if (g->len != total)
      return qv_error_set(error, QV_EARG, "a body buffer of %lld bytes written as pieces of "
                          "%lld", (long long)g->len, (long long)total);
    g->pieces = pieces;
    g->n_pieces = n_pieces;
    found++;
  }
  if (found != 1)
    return qv_error_set(error, QV_EARG, "%lld body buffers start at the pieces' stand-in, "
                        "not 1", (long long)found);
  return QV_OK;
}

static QvStatus write_batch(QvRbWriter *w, const struct ArrowArray *batch,
                            const uint8_t *stand_in, const QviRbPiece *pieces, int64_t n_pieces,
                            QvError *error) {
  if (w->failure.code) {
    if (error) *error = w->failure;
    return w->failure.code;
  }
  if (w->finished) return qv_error_set(error, QV_EARG, "the writer is finished");
  QvStatus st = land_flights(w, error);
  if (st) return fail(w, st, error);
  w->ser.error = error;
  st = qv_array_view_set_array(&w->view, batch, w->opt.validate, error);
  if (st) return st; /* a bad input batch leaves the writer usable */
  QvArrayView *root = &w->view;
  if (root->buffer[0] && nulls_in(root, 0, root->length) > 0)
    return qv_error_set(error, QV_EINVAL, "a record batch cannot have null rows");
  if ((st = write_dictionaries(w, error))) return fail(w, st, error);
  ser_reset(&w->ser);
  for (int64_t i = 0; i < root->n_children && !st; i++)
    st = emit(&w->ser, &root->children[i], root->offset, root->length, 0);
  if (!st && stand_in) {
    /* nothing written yet: a refusal leaves the writer usable */
    st = place_pieces(&w->ser, stand_in, pieces, n_pieces, error);
    if (st) {
      ser_reset(&w->ser);
      return st;
    }
  }
  if (!st) st = write_batch_message(w, root->length, -1, false, error);
  if (!st) st = flush(w, error);
  ser_reset(&w->ser);
  return fail(w, st, error);
}

QvStatus qv_rb_writer_write(QvRbWriter *w, const struct ArrowArray *batch, QvError *error) {
  return write_batch(w, batch, NULL, NULL, 0, error);
}

QvStatus qvi_rb_writer_write_pieces(QvRbWriter *w, const struct ArrowArray *batch,
                                    const uint8_t *stand_in, const QviRbPiece *pieces,
                                    int64_t n_pieces, QvError *error) {
  if (stand_in == NULL || (n_pieces > 0 && pieces == NULL) || n_pieces < 0)
    return qv_error_set(error, QV_EARG, "qvi_rb_writer_write_pieces: no stand-in or pieces");
  /* compression and byte swapping read the buffer's bytes */
  if (w->opt.compression != QV_COMPRESSION_NONE || w->swap)
    return qv_error_set(error, QV_EARG, "a body written as pieces cannot be compressed or "
                        "byte-swapped");
  return write_batch(w, batch, stand_in, pieces, n_pieces, error);
}

QvStatus qv_rb_writer_write_move(QvRbWriter *w, struct ArrowArray *batch, QvError *error) {
  struct ArrowArray own = *batch; /* moved: the writer releases it, whatever happens */
  batch->release = NULL;
  QvStatus st;
  if (own.release == NULL) return qv_error_set(error, QV_EARG, "the batch is released");
  if (!flights_possible(w) || w->failure.code || w->finished) {
    st = qv_rb_writer_write(w, &own, error);
    own.release(&own);
    return st;
  }
  st = qv_array_view_set_array(&w->view, &own, w->opt.validate, error);
  QvArrayView *root = &w->view;
  if (!st && root->buffer[0] && nulls_in(root, 0, root->length) > 0)
    st = qv_error_set(error, QV_EINVAL, "a record batch cannot have null rows");
  if (st) { /* a bad input batch leaves the writer usable */
    own.release(&own);
    return st;
  }
  /* a slot: the call that handed over the batch in flight left at most it */
  if (w->in_flight == FLIGHTS && (st = land_oldest(w, error))) {
    abandon_flights(w);
    own.release(&own);
    return fail(w, st, error);
  }
  Flight *f = &w->flights[(w->oldest + w->in_flight) % FLIGHTS];
  Ser *s = &f->ser;
  ser_reset(s);
  s->error = error;
  for (int64_t i = 0; i < root->n_children && !st; i++)
    st = emit(s, &root->children[i], root->offset, root->length, 0);
  if (!st && w->swap) st = swap_segs(w, s, -1, error);
  /* the frames go to the sink's free memory past where the batch in flight
   * can end; the sink may move (grow) only while no batch's frames are in it */
  uint8_t *window = NULL;
  if (!st) {
    int64_t start = qv_sink_bytes_written(w->sink) + (int64_t)w->stage_len;
    bool pinned = false;
    for (int k = 0; k < w->in_flight; k++) {
      const Flight *g = &w->flights[(w->oldest + k) % FLIGHTS];
      start = g->end; /* the newest last */
      pinned |= g->windowed;
    }
    st = frames_window(w, s, root->length, -1, false, start, !pinned, &window, &f->end, error);
  }
  f->windowed = window != NULL;
  if (!st)
    st = prepare_frames(w->opt.compression, &f->frames, s, window, w->opt.alignment, error);
  if (!st)
    st = qvi_codec_submit(w->codec, true, w->opt.compression, w->opt.compression_level,
                         f->frames.jobs, f->frames.n_jobs, &f->async, error);
  if (st) {
    ser_reset(s);
    own.release(&own);
    /* the batch handed over before was accepted: written first, and its
     * failure, coming first in the stream, is the one reported */
    QvError why;
    if (error) why = *error;
    QvStatus before = land_flights(w, error);
    if (before) return fail(w, before, error);
    if (error) *error = why;
    return fail(w, st, error);
  }
  f->batch = own;
  f->length = root->length;
  w->in_flight++;
  /* the batch before this one: written while this one compresses */
  while (!st && w->in_flight > 1) st = land_oldest(w, error);
  if (st) abandon_flights(w);
  return fail(w, st, error);
}

QvStatus qv_rb_writer_flush(QvRbWriter *w, QvError *error) {
  if (w->failure.code) {
    if (error) *error = w->failure;
    return w->failure.code;
  }
  return fail(w, land_flights(w, error), error);
}

QvStatus qv_rb_writer_finish(QvRbWriter *w, QvError *error) {
  if (w->failure.code) {
    if (error) *error = w->failure;
    return w->failure.code;
  }
  if (w->finished) return QV_OK;
  QvStatus st = land_flights(w, error);
  if (st) return fail(w, st, error);
  w->finished = true;
  st = out(w, qv_ipc_eos, 8, error);
  if (!st && w->opt.format == QV_IPC_FORMAT_FILE) {
    QvFooter footer;
    memset(&footer, 0, sizeof footer);
    footer.version = QV_METADATA_V5;
    footer.has_schema = true;
    footer.schema = w->ipc_schema;
    footer.n_dictionaries = w->n_dict_blocks;
    footer.dictionaries = w->dict_blocks;
    footer.n_record_batches = w->n_batch_blocks;
    footer.record_batches = w->batch_blocks;
    uint8_t *fb;
    size_t fb_size;
    st = qv_footer_encode(&footer, &fb, &fb_size, error);
    if (!st) {
      uint8_t len[4]; /* int32, little-endian like every framing field */
      qvi_st_le_u32(len, (uint32_t)fb_size);
      st = out(w, fb, fb_size, error);
      free(fb);
      if (!st) st = out(w, len, 4, error);
      if (!st) st = out(w, "ARROW1", 6, error);
    }
  }
  if (!st) st = flush(w, error);
  return fail(w, st, error);
}

QvStatus qv_rb_write_all(struct ArrowArrayStream *stream, QvSink *sink,
                         const QvRbWriteOptions *options, QvError *error) {
  struct ArrowSchema schema;
  QvStatus st = qv_rb_stream_get_schema(stream, &schema, error);
  if (st) return st;
  /* a quiver reader knows which fields share a dictionary: keep that */
  QvRbWriteOptions o;
  if ((st = QV_OPTIONS_LOAD(&o, options, QvRbWriteOptions, error))) {
    schema.release(&schema);
    return st;
  }
  o.struct_size = sizeof o;
  if (o.dictionary_ids == NULL)
    qv_rb_stream_dictionary_ids(stream, &o.dictionary_ids, &o.n_dictionary_ids);
  QvRbWriter *w;
  st = qv_rb_writer_new(&w, &schema, sink, &o, error);
  schema.release(&schema);
  if (st) return st;
  for (;;) {
    struct ArrowArray batch;
    if ((st = qv_rb_stream_get_next(stream, &batch, error))) {
      if (st == QV_EOS) st = QV_OK;
      break;
    }
    /* moved: with threads, the batch compresses while the next is read */
    if ((st = qv_rb_writer_write_move(w, &batch, error))) break;
  }
  if (!st) st = qv_rb_writer_finish(w, error);
  qv_rb_writer_free(w);
  return st;
}
