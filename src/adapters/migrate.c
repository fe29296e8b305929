/* Tensor / SparseTensor messages <-> one-column tables (quiver/migrate.h). */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS, MAP_NORESERVE */
#include "quiver/migrate.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sys/mman.h>

#include "adapters/rb_writer_internal.h"
#include "adapters/tensor_column_internal.h"
#include "quiver/recordbatch_ipc.h"
#include "quiver/sparse.h"
#include "quiver/sparse_column.h"
#include "quiver/sparse_ipc.h"
#include "quiver/tensor_column.h"
#include "quiver/tensor_ipc.h"
#include "util/cpu.h"
#include "util/options.h"
#include "util/grow.h"
#include "util/strides.h"

typedef struct Msg {
  bool sparse;
  QvTensor t;
  QvSparseTensor s;
  int64_t group;
} Msg;

typedef struct Group {
  int64_t first; /* message index */
  int64_t count;
  char label[96];
} Group;

typedef struct Run {
  QvMigrateOptions opts;
  QvMigrateStats *stats;
  Msg *msgs;
  int64_t n;
  Group *groups;
  int64_t n_groups;
} Run;

static void run_free(Run *r) {
  for (int64_t i = 0; i < r->n; i++) {
    qv_tensor_reset(&r->msgs[i].t);
    qv_sparse_reset(&r->msgs[i].s);
  }
  free(r->msgs);
  free(r->groups);
}

static void notice(const Run *r, const char *fmt, ...) {
  if (r->opts.notice == NULL) return;
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  r->opts.notice(r->opts.notice_ctx, buf);
}

static QvStatus read_messages(QvSource *in, Run *r, QvError *error) {
  QvIpcReader *reader;
  QvStatus st = qv_ipc_reader_new(&reader, in, r->opts.ipc, error);
  if (st) return st;
  int64_t cap = 0;
  for (;;) {
    QvIpcMessage m;
    st = qv_ipc_reader_next(reader, &m, error);
    if (st == QV_EOS) {
      st = QV_OK;
      break;
    }
    if (st) break;
    if (r->n == cap) {
      size_t nc = (size_t)cap;
      Msg *nm = qvi_grow_array(r->msgs, &nc, nc + 1, 16, sizeof *nm);
      if (nm == NULL) {
        qv_ipc_message_reset(&m);
        st = qv_error_set(error, QV_ENOMEM, "out of memory");
        break;
      }
      r->msgs = nm;
      cap = (int64_t)nc;
    }
    Msg *x = &r->msgs[r->n];
    memset(x, 0, sizeof *x);
    QvMessageHeader h = m.message.header_type;
    if (h == QV_HEADER_TENSOR) {
      st = qv_tensor_from_message(&m, &x->t, error);
    } else if (h == QV_HEADER_SPARSE_TENSOR) {
      x->sparse = true;
      st = qv_sparse_from_message(&m, &x->s, NULL, error);
    } else {
      st = qv_error_set(error, QV_EINVAL,
                        "message %lld is a %s: migrate reads Tensor and SparseTensor messages "
                        "(a table goes back to messages with --to-messages)",
                        (long long)r->n, qv_header_type_name(h));
    }
    qv_ipc_message_reset(&m);
    if (st) {
      if (h == QV_HEADER_TENSOR || h == QV_HEADER_SPARSE_TENSOR)
        qv_error_prefix(error, "message %lld", (long long)r->n);
      break;
    }
    r->n++;
  }
  qv_ipc_reader_free(reader);
  if (st == QV_OK && r->n == 0)
    st = qv_error_set(error, QV_EINVAL, "no Tensor or SparseTensor message to migrate");
  return st;
}

static bool names_equal(const char *const *a, const char *const *b, int32_t ndim) {
  if (a == NULL || b == NULL) return a == b;
  for (int32_t i = 0; i < ndim; i++)
    if (strcmp(a[i], b[i]) != 0) return false;
  return true;
}

/* Whether messages a and b can share one column. */
static bool same_group(const Msg *a, const Msg *b) {
  if (a->sparse != b->sparse) return false;
  if (!a->sparse)
    return a->t.type == b->t.type && a->t.ndim == b->t.ndim &&
           names_equal(a->t.dim_names, b->t.dim_names, a->t.ndim);
  const QvSparseTensor *x = &a->s, *y = &b->s;
  if (x->format != y->format || x->value_type != y->value_type || x->ndim != y->ndim ||
      x->index_type != y->index_type || !names_equal(x->dim_names, y->dim_names, x->ndim))
    return false;
  return x->format == QV_SPARSE_COO || x->indptr_type == y->indptr_type;
}

static void group_label(const Msg *m, char *buf, size_t size) {
  if (!m->sparse) {
    snprintf(buf, size, "tensor_%s_%dd", qv_arrow_type_name(m->t.type), (int)m->t.ndim);
    return;
  }
  const QvSparseTensor *s = &m->s;
  const char *f = s->format == QV_SPARSE_COO ? "coo" : s->format == QV_SPARSE_CSR ? "csr"
                  : s->format == QV_SPARSE_CSC ? "csc" : "csf";
  if (s->format == QV_SPARSE_COO)
    snprintf(buf, size, "%s_%s_%s_%dd", f, qv_arrow_type_name(s->value_type),
             qv_arrow_type_name(s->index_type), (int)s->ndim);
  else
    snprintf(buf, size, "%s_%s_%s_%s_%dd", f, qv_arrow_type_name(s->value_type),
             qv_arrow_type_name(s->index_type), qv_arrow_type_name(s->indptr_type),
             (int)s->ndim);
}

static QvStatus make_groups(Run *r, QvError *error) {
  r->groups = calloc((size_t)r->n, sizeof *r->groups);
  if (r->groups == NULL) return qv_error_set(error, QV_ENOMEM, "out of memory");
  for (int64_t i = 0; i < r->n; i++) {
    int64_t g = 0;
    while (g < r->n_groups && !same_group(&r->msgs[r->groups[g].first], &r->msgs[i])) g++;
    if (g == r->n_groups) {
      Group *ng = &r->groups[r->n_groups++];
      ng->first = i;
      group_label(&r->msgs[i], ng->label, sizeof ng->label);
      int same = 1;
      for (int64_t k = 0; k < g; k++) {
        char other[96];
        group_label(&r->msgs[r->groups[k].first], other, sizeof other);
        if (strcmp(other, ng->label) == 0) same++;
      }
      if (same > 1) {
        size_t len = strlen(ng->label);
        snprintf(ng->label + len, sizeof ng->label - len, "_%d", same);
      }
    }
    r->groups[g].count++;
    r->msgs[i].group = g;
  }
  return QV_OK;
}

static QvStatus groups_error(const Run *r, QvError *error) {
  char buf[768];
  size_t len = 0;
  for (int64_t g = 0; g < r->n_groups && len < sizeof buf - 1; g++) {
    int k = snprintf(buf + len, sizeof buf - len, "%s%s (%lld message%s, first %lld)",
                     g ? ", " : "", r->groups[g].label, (long long)r->groups[g].count,
                     r->groups[g].count == 1 ? "" : "s", (long long)r->groups[g].first);
    if (k < 0) break;
    len += (size_t)k;
  }
  return qv_error_set(error, QV_EINVAL,
                      "messages of %lld groups: %s: --split writes one table per group",
                      (long long)r->n_groups, buf);
}

/* ---- sizes */

static int64_t sparse_bytes(const QvSparseTensor *s) {
  int64_t vs = (int64_t)qv_arrow_type_size(s->value_type);
  int64_t is = (int64_t)qv_arrow_type_size(s->index_type);
  int64_t ps = s->format == QV_SPARSE_COO ? 0 : (int64_t)qv_arrow_type_size(s->indptr_type);
  /* every count below is bounded by the message body the reader checked */
  int64_t b = s->nnz * vs + 8 * s->ndim;
  switch (s->format) {
    case QV_SPARSE_COO: b += s->nnz * is * s->ndim; break;
    case QV_SPARSE_CSR:
    case QV_SPARSE_CSC: b += s->indptr_len * ps + s->indices_len * is; break;
    default:
      for (int32_t k = 0; k + 1 < s->ndim; k++) b += s->csf_indptr_len[k] * ps;
      for (int32_t k = 0; k < s->ndim; k++) b += s->csf_indices_len[k] * is;
      b += 4 * s->ndim;
  }
  return b;
}

static int64_t dense_bytes(const QvTensor *t) {
  return qv_tensor_n_elements(t) * (int64_t)qv_arrow_type_size(t->type) + 4 * (t->ndim + 1);
}

static QvStatus check_limit(int64_t total, int64_t limit, const char *what, QvError *error) {
  if (limit <= 0) limit = QV_DEFAULT_MAX_OUTPUT_SIZE;
  if (total > limit)
    return qv_error_set(error, QV_ELIMIT, "%s take %lld bytes, more than the limit of %lld "
                        "(--max-output)", what, (long long)total, (long long)limit);
  return QV_OK;
}

/* ---- dense columns */

/* Whether t is a permutation of a row-major layout: order[k] = the logical
 * dim at physical position k (dims sorted by stride, largest first; an
 * extent-1 dim keeps its place, its stride means nothing). A tensor without
 * elements is row-major. */
static bool layout_order(const QvTensor *t, int32_t *order) {
  _Static_assert(QV_TENSOR_MAX_NDIM <= QVI_STRIDES_MAX_NDIM, "util/strides.h's limit");
  for (int32_t k = 0; k < t->ndim; k++) order[k] = k;
  if (qv_tensor_n_elements(t) == 0) return true;
  return qvi_permuted_row_major(t->ndim, t->shape, t->strides,
                                (int64_t)qv_arrow_type_size(t->type), order);
}

static void format_dims(char *buf, size_t size, int32_t n, const int64_t *v) {
  size_t len = 0;
  buf[0] = 0;
  for (int32_t i = 0; i < n && len + 24 < size; i++)
    len += (size_t)snprintf(buf + len, size - len, "%s%lld", i ? ", " : "", (long long)v[i]);
}

static void relaid_notice(const Run *r, int64_t i, const QvTensor *t, bool describable) {
  char sh[256], stt[256];
  format_dims(sh, sizeof sh, t->ndim, t->shape);
  format_dims(stt, sizeof stt, t->ndim, t->strides);
  notice(r, describable
                ? "message %lld: shape [%s] strides [%s] is another permutation than the "
                  "column's: values copied in the column's layout"
                : "message %lld: shape [%s] strides [%s] is no permutation of a row-major "
                  "layout: values copied row-major",
            (long long)i, sh, stt);
}

static void free_array(void *p) {
  struct ArrowArray *a = p;
  if (a->release) a->release(a);
  free(a);
}

/* A row-major copy of t, made on `threads` (split by t's leading index), as
 * a tensor view that owns it. */
static QvStatus row_major_copy(const QvTensor *t, int threads, QvTensor *out, QvError *error) {
  struct ArrowSchema f;
  struct ArrowArray *a = calloc(1, sizeof *a);
  if (a == NULL) return qv_error_set(error, QV_ENOMEM, "out of memory");
  QvTensorUnstackOptions uo = {.struct_size = sizeof uo, .contiguous = true, .threads = threads};
  QvStatus st = qv_tensor_column_unstack(t, &uo, &f, a, error);
  if (st) {
    free(a);
    return st;
  }
  f.release(&f);
  const void *data = a->children[0]->buffers[1];
  QvOwner *owner = qv_owner_new(free_array, a);
  if (owner == NULL) {
    free_array(a);
    return qv_error_set(error, QV_ENOMEM, "out of memory");
  }
  st = qv_tensor_init(out, &(QvTensorDesc){.type = t->type, .ndim = t->ndim, .shape = t->shape,
                                           .dim_names = t->dim_names, .data = data,
                                           .data_size = qv_tensor_n_elements(t) *
                                                        (int64_t)qv_arrow_type_size(t->type),
                                           .owner = owner}, error);
  qv_owner_free(owner);
  return st;
}

static QvStatus dense_one_row(Run *r, const QvTensor *t, struct ArrowSchema *field,
                              struct ArrowArray *col, QvError *error);

/* One message as a one-row fixed shape column: a view of its body (with
 * `permutation` when it is permuted) or a row-major copy. */
static QvStatus dense_single(Run *r, int64_t i, struct ArrowSchema *field,
                             struct ArrowArray *col, QvError *error) {
  const QvTensor *t = &r->msgs[i].t;
  int32_t order[QV_TENSOR_MAX_NDIM];
  bool describable = layout_order(t, order);
  QvTensor copy;
  memset(&copy, 0, sizeof copy);
  if (!describable) {
    /* copied on the threads asked for, split by the message's own leading
     * index (the one-row view below has a leading extent of 1) */
    QvStatus st = row_major_copy(t, r->opts.threads, &copy, error);
    if (st) return st;
    r->stats->relaid++;
    r->stats->gathered_bytes += qv_tensor_n_elements(t) * (int64_t)qv_arrow_type_size(t->type);
    relaid_notice(r, i, t, false);
    t = &copy;
  }
  QvStatus st = dense_one_row(r, t, field, col, error);
  qv_tensor_reset(&copy);
  return st;
}

/* t as a one-row fixed shape column: a view (with `permutation` when t is
 * a permuted row-major layout). */
static QvStatus dense_one_row(Run *r, const QvTensor *t, struct ArrowSchema *field,
                              struct ArrowArray *col, QvError *error) {
  int64_t shape[QV_TENSOR_MAX_NDIM + 1], strides[QV_TENSOR_MAX_NDIM + 1];
  const char *names[QV_TENSOR_MAX_NDIM + 1];
  int64_t es = (int64_t)qv_arrow_type_size(t->type);
  int64_t n = qv_tensor_n_elements(t);
  if (t->ndim >= QV_TENSOR_MAX_NDIM)
    return qv_error_set(error, QV_ENOTSUP, "a column cell of %d dims is more than %d",
                        (int)t->ndim, QV_TENSOR_MAX_NDIM - 1);
  shape[0] = 1;
  strides[0] = n * es > 0 ? n * es : es;
  names[0] = "";
  for (int32_t k = 0; k < t->ndim; k++) {
    shape[1 + k] = t->shape[k];
    strides[1 + k] = t->strides[k];
    if (t->dim_names) names[1 + k] = t->dim_names[k];
  }
  QvTensor one;
  QvStatus st = qv_tensor_init(&one, &(QvTensorDesc){.type = t->type, .ndim = t->ndim + 1,
                                                     .shape = shape, .strides = strides,
                                                     .dim_names = t->dim_names ? names : NULL,
                                                     .data = t->data, .data_size = t->data_size,
                                                     .owner = t->owner}, error);
  if (st) return st;
  QvTensorUnstackOptions uo = {.struct_size = sizeof uo,
                               .name = r->opts.name ? r->opts.name : "tensor",
                               .threads = r->opts.threads};
  st = qv_tensor_column_unstack(&one, &uo, field, col, error);
  qv_tensor_reset(&one);
  if (st) return st;
  if (n > 0 && col->children[0]->buffers[1] != t->data) {
    /* not reached: t is a permuted row-major layout here */
    r->stats->relaid++;
    r->stats->gathered_bytes += n * es;
  }
  return QV_OK;
}

/* The value buffer of a column of several messages, as the pieces the
 * writer sends to the sink in order (qvi_rb_writer_write_pieces): each
 * message's body where the source holds it (the mapping, or the buffer an
 * fd read filled), or, for a message in another layout than the column's,
 * its copy in the column's layout. */
typedef struct Pieces {
  QviRbPiece *p;
  int64_t n;
  QvTensor *copies; /* one per message of the column, zeroed unless copied */
  int64_t n_copies;
  const uint8_t *stand_in; /* the column's value buffer address (NULL: no pieces) */
} Pieces;

static void pieces_reset(Pieces *pc) {
  for (int64_t i = 0; i < pc->n_copies; i++) qv_tensor_reset(&pc->copies[i]);
  free(pc->copies);
  free(pc->p);
  memset(pc, 0, sizeof *pc);
}

/* The column's offsets and shapes, and the address range that stands in
 * for its values: reserved, never readable (PROT_NONE), so a reader of the
 * buffer would fault at once instead of reading other memory. */
typedef struct GatherBlock {
  uint8_t *block;
  void *stand_in;
  size_t stand_in_size;
} GatherBlock;

static void free_gather_block(void *p) {
  GatherBlock *g = p;
  qv_free(g->block);
  if (g->stand_in) munmap(g->stand_in, g->stand_in_size);
  free(g);
}

/* Several messages (indices idx[0..n)) as one fixed or variable shape
 * column in a common layout: the values are not gathered; *pc says which
 * pieces make them. */
static QvStatus dense_gather(Run *r, const int64_t *idx, int64_t n, struct ArrowSchema *field,
                             struct ArrowArray *col, Pieces *pc, QvError *error) {
  const QvTensor *t0 = &r->msgs[idx[0]].t;
  int32_t nd = t0->ndim;
  int64_t es = (int64_t)qv_arrow_type_size(t0->type);
  /* the column's layout: the one every message with elements shares, else
   * row-major */
  int32_t order[QV_TENSOR_MAX_NDIM], o[QV_TENSOR_MAX_NDIM];
  bool have = false, common = true, fixed = true;
  for (int32_t k = 0; k < nd; k++) order[k] = k;
  int64_t values = 0;
  for (int64_t j = 0; j < n; j++) {
    const QvTensor *t = &r->msgs[idx[j]].t;
    values += qv_tensor_n_elements(t);
    for (int32_t k = 0; k < nd; k++)
      if (t->shape[k] != t0->shape[k]) fixed = false;
    if (qv_tensor_n_elements(t) == 0) continue;
    if (!layout_order(t, o)) {
      common = false;
      continue;
    }
    if (!have) {
      memcpy(order, o, sizeof(int32_t) * (size_t)nd);
      have = true;
    } else if (memcmp(order, o, sizeof(int32_t) * (size_t)nd) != 0) {
      common = false;
    }
  }
  if (!common)
    for (int32_t k = 0; k < nd; k++) order[k] = k;
  if (!fixed && values > INT32_MAX)
    return qv_error_set(error, QV_ENOTSUP, "%lld values in a variable shape tensor column: its "
                        "List<> storage holds at most 2^31-1", (long long)values);
  QvTensorColumnType type;
  memset(&type, 0, sizeof type);
  type.kind = fixed ? QV_TENSOR_COLUMN_FIXED_SHAPE : QV_TENSOR_COLUMN_VARIABLE_SHAPE;
  type.value_type = t0->type;
  type.ndim = nd;
  const char *names[QV_TENSOR_MAX_NDIM];
  for (int32_t k = 0; k < nd; k++) {
    type.shape[k] = fixed ? t0->shape[order[k]] : -1;
    type.permutation[order[k]] = k;
    if (order[k] != k) type.has_permutation = true;
    if (t0->dim_names) names[k] = t0->dim_names[order[k]];
  }
  int64_t vbytes = values * es;
  size_t off_bytes = fixed ? 0 : (size_t)(n + 1) * 4;
  size_t opad = (off_bytes + 63) & ~(size_t)63;
  size_t shp_bytes = fixed ? 0 : (size_t)n * (size_t)nd * 4;
  size_t spad = (shp_bytes + 63) & ~(size_t)63;
  GatherBlock *gb = calloc(1, sizeof *gb);
  uint8_t *block = gb ? qv_aligned_alloc(opad + spad + 64) : NULL;
  pc->p = gb ? malloc((size_t)n * sizeof *pc->p) : NULL;
  pc->copies = gb ? calloc((size_t)n, sizeof *pc->copies) : NULL;
  if (block == NULL || pc->p == NULL || pc->copies == NULL) {
    qv_free(block);
    free(gb);
    return qv_error_set(error, QV_ENOMEM, "out of memory");
  }
  pc->n_copies = n;
  gb->block = block;
  int32_t *offsets = (int32_t *)block;
  int32_t *shapes = (int32_t *)(block + opad);
  const uint8_t *vals = block + opad + spad; /* no values: an empty buffer */
  if (vbytes > 0) {
    gb->stand_in_size = (size_t)vbytes;
    gb->stand_in = mmap(NULL, gb->stand_in_size, PROT_NONE,
                        MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (gb->stand_in == MAP_FAILED) {
      gb->stand_in = NULL;
      free_gather_block(gb);
      return qv_error_set(error, QV_ENOMEM, "cannot reserve %lld bytes of address space",
                          (long long)vbytes);
    }
    vals = gb->stand_in;
    pc->stand_in = vals;
  }
  QvStatus st = QV_OK;
  int64_t at = 0;
  for (int64_t j = 0; j < n && st == QV_OK; j++) {
    const QvTensor *t = &r->msgs[idx[j]].t;
    int64_t cnt = qv_tensor_n_elements(t);
    if (!fixed) {
      offsets[j] = (int32_t)at;
      for (int32_t k = 0; k < nd; k++) {
        int64_t ext = t->shape[order[k]];
        if (ext > INT32_MAX) {
          st = qv_error_set(error, QV_ENOTSUP, "message %lld: extent %lld of dim %d does not "
                            "fit the int32 shape of a variable shape tensor column",
                            (long long)idx[j], (long long)ext, (int)order[k]);
          break;
        }
        shapes[j * nd + k] = (int32_t)ext;
      }
      if (st) break;
    }
    if (cnt == 0) continue;
    at += cnt;
    bool mine = layout_order(t, o);
    if (mine && memcmp(order, o, sizeof(int32_t) * (size_t)nd) == 0) {
      /* the column's layout, packed: its body is the piece */
      pc->p[pc->n++] = (QviRbPiece){t->data, cnt * es};
      continue;
    }
    r->stats->relaid++;
    relaid_notice(r, idx[j], t, mine);
    /* the physical view (dims in the column's order) copied row-major, on
     * the threads asked for, split by its leading index */
    int64_t ps[QV_TENSOR_MAX_NDIM], pst[QV_TENSOR_MAX_NDIM];
    for (int32_t k = 0; k < nd; k++) ps[k] = t->shape[order[k]], pst[k] = t->strides[order[k]];
    QvTensor phys;
    st = qv_tensor_init(&phys, &(QvTensorDesc){.type = t->type, .ndim = nd, .shape = ps,
                                               .strides = pst, .data = t->data,
                                               .data_size = t->data_size}, error);
    if (st) break;
    st = row_major_copy(&phys, r->opts.threads, &pc->copies[j], error);
    qv_tensor_reset(&phys);
    if (st) break;
    pc->p[pc->n++] = (QviRbPiece){pc->copies[j].data, cnt * es};
    r->stats->gathered_bytes += cnt * es;
  }
  if (!fixed) offsets[n] = (int32_t)at;
  QvOwner *owner = NULL;
  if (st == QV_OK && (owner = qv_owner_new(free_gather_block, gb)) == NULL)
    st = qv_error_set(error, QV_ENOMEM, "out of memory");
  if (st) {
    free_gather_block(gb);
    return st;
  }
  if (t0->dim_names) st = qvi_tensor_column_set_names(&type, names, error);
  if (st == QV_OK)
    st = qv_tensor_column_schema_init(field, r->opts.name ? r->opts.name : "tensor", &type,
                                      NULL, error);
  qv_tensor_column_type_reset(&type);
  if (st == QV_OK) {
    QvArrayView v;
    if ((st = qv_array_view_init(&v, field, error)) == QV_OK) {
      v.length = n;
      v.offset = 0;
      v.null_count = 0;
      if (fixed) {
        v.children[0].length = values;
        v.children[0].null_count = 0;
        v.children[0].buffer[1] = vals;
        v.children[0].buffer_size[1] = vbytes;
      } else {
        QvArrayView *data = &v.children[0], *shp = &v.children[1];
        data->length = n;
        data->null_count = 0;
        data->buffer[1] = (const uint8_t *)offsets;
        data->buffer_size[1] = (int64_t)off_bytes;
        data->children[0].length = values;
        data->children[0].null_count = 0;
        data->children[0].buffer[1] = vals;
        data->children[0].buffer_size[1] = vbytes;
        shp->length = n;
        shp->null_count = 0;
        shp->children[0].length = n * nd;
        shp->children[0].null_count = 0;
        shp->children[0].buffer[1] = (const uint8_t *)shapes;
        shp->children[0].buffer_size[1] = (int64_t)shp_bytes;
      }
      st = qv_array_export_view(&v, owner, col, error);
      qv_array_view_reset(&v);
    }
    if (st) field->release(field);
  }
  qv_owner_free(owner);
  return st;
}

/* ---- one group -> one table */

static QvStatus write_table(Run *r, int64_t g, QvSink *sink, QvError *error) {
  int64_t n = r->groups[g].count;
  int64_t *idx = malloc((size_t)n * sizeof *idx);
  if (idx == NULL) return qv_error_set(error, QV_ENOMEM, "out of memory");
  for (int64_t i = 0, k = 0; i < r->n; i++)
    if (r->msgs[i].group == g) idx[k++] = i;
  struct ArrowSchema field, bs;
  struct ArrowArray col, batch;
  memset(&field, 0, sizeof field);
  memset(&col, 0, sizeof col);
  QvStatus st;
  Pieces pc;
  memset(&pc, 0, sizeof pc);
  const Msg *m0 = &r->msgs[idx[0]];
  if (!m0->sparse) {
    st = n == 1 ? dense_single(r, idx[0], &field, &col, error)
                : dense_gather(r, idx, n, &field, &col, &pc, error);
  } else {
    const QvSparseTensor **cells = malloc((size_t)n * sizeof *cells);
    if (cells == NULL) {
      free(idx);
      return qv_error_set(error, QV_ENOMEM, "out of memory");
    }
    for (int64_t k = 0; k < n; k++) cells[k] = &r->msgs[idx[k]].s;
    QvSparseBuildOptions bo = {.struct_size = sizeof bo,
                               .name = r->opts.name ? r->opts.name : "sparse",
                               .kind = QV_SPARSE_COLUMN_TENSOR,
                               .max_output_size = r->opts.max_output_size};
    st = qv_sparse_column_build(cells, n, &bo, &field, &col, error);
    free(cells);
    cells = NULL;
    if (st == QV_OK) {
      /* values: the storage's last child, a list whose child holds them */
      const struct ArrowArray *vl = col.children[col.n_children - 1];
      if (!(n == 1 && vl->children[0]->buffers[1] == m0->s.values))
        for (int64_t k = 0; k < n; k++) r->stats->gathered_bytes += sparse_bytes(&r->msgs[idx[k]].s);
    }
  }
  free(idx);
  if (st) {
    pieces_reset(&pc);
    return st;
  }
  if ((st = qv_tensor_column_to_batch(&field, &col, &bs, &batch, error)) != QV_OK) {
    if (field.release) field.release(&field);
    if (col.release) col.release(&col);
    pieces_reset(&pc);
    return st;
  }
  QvRbWriter *w = NULL;
  QvRbWriteOptions wo = {.struct_size = sizeof wo, .format = r->opts.format};
  st = qv_rb_writer_new(&w, &bs, sink, &wo, error);
  if (st == QV_OK && pc.stand_in) {
    st = qvi_rb_writer_write_pieces(w, &batch, pc.stand_in, pc.p, pc.n, error);
    if (st == QV_OK) qvi_path_hit(QV_PATH_MIGRATE_PIECES);
  } else if (st == QV_OK) {
    st = qv_rb_writer_write(w, &batch, error);
  }
  if (st == QV_OK) st = qv_rb_writer_finish(w, error);
  qv_rb_writer_free(w);
  batch.release(&batch);
  bs.release(&bs);
  pieces_reset(&pc);
  if (st == QV_OK) r->stats->tables++;
  return st;
}

static QvStatus prepare(QvSource *in, const QvMigrateOptions *options, QvMigrateStats *stats,
                        QvMigrateStats *local, Run *r, QvError *error) {
  memset(r, 0, sizeof *r);
  r->stats = stats ? stats : local;
  memset(r->stats, 0, sizeof *r->stats);
  QvStatus st = QV_OPTIONS_LOAD(&r->opts, options, QvMigrateOptions, error);
  if (st) return st;
  if (in == NULL) return qv_error_set(error, QV_EARG, "qv_migrate: NULL source");
  if (r->opts.format != QV_IPC_FORMAT_STREAM && r->opts.format != QV_IPC_FORMAT_FILE)
    return qv_error_set(error, QV_EARG, "qv_migrate: unknown format %d", (int)r->opts.format);
  if (r->opts.threads < 0 || r->opts.threads > QV_TENSOR_COLUMN_MAX_THREADS)
    return qv_error_set(error, QV_EARG, "threads = %d: 0..%d", r->opts.threads,
                        QV_TENSOR_COLUMN_MAX_THREADS);
  if ((st = read_messages(in, r, error)) != QV_OK) return st;
  r->stats->messages = r->n;
  if ((st = make_groups(r, error)) != QV_OK) return st;
  int64_t total = 0;
  for (int64_t i = 0; i < r->n; i++) {
    int64_t b = r->msgs[i].sparse ? sparse_bytes(&r->msgs[i].s) : dense_bytes(&r->msgs[i].t);
    total = b > INT64_MAX - total ? INT64_MAX : total + b;
  }
  return check_limit(total, r->opts.max_output_size, "the tables' columns", error);
}

QvStatus qv_migrate(QvSource *in, QvSink *out, const QvMigrateOptions *options,
                    QvMigrateStats *stats, QvError *error) {
  QvMigrateStats local;
  Run r;
  if (out == NULL) return qv_error_set(error, QV_EARG, "qv_migrate: NULL sink");
  QvStatus st = prepare(in, options, stats, &local, &r, error);
  if (st == QV_OK && r.n_groups > 1) st = groups_error(&r, error);
  if (st == QV_OK) st = write_table(&r, 0, out, error);
  run_free(&r);
  return st;
}

QvStatus qv_migrate_split(QvSource *in, QvMigrateOpenFn open, void *ctx,
                          const QvMigrateOptions *options, QvMigrateStats *stats,
                          QvError *error) {
  QvMigrateStats local;
  Run r;
  if (open == NULL) return qv_error_set(error, QV_EARG, "qv_migrate_split: NULL open callback");
  QvStatus st = prepare(in, options, stats, &local, &r, error);
  for (int64_t g = 0; st == QV_OK && g < r.n_groups; g++) {
    QvSink *sink = NULL;
    if ((st = open(ctx, r.groups[g].label, &sink, error)) != QV_OK) break;
    if (sink == NULL) {
      st = qv_error_set(error, QV_EARG, "qv_migrate_split: no sink for group %s",
                        r.groups[g].label);
      break;
    }
    st = write_table(&r, g, sink, error);
    if (st == QV_OK) st = qv_sink_finish(sink, error);
    if (st) qv_error_prefix(error, "group %s", r.groups[g].label);
    qv_sink_free(sink);
  }
  run_free(&r);
  return st;
}

QvStatus qv_migrate_split_path(const char *out, const char *group, char **path,
                               QvError *error) {
  if (out == NULL || group == NULL || path == NULL)
    return qv_error_set(error, QV_EARG, "qv_migrate_split_path: NULL argument");
  const char *slash = strrchr(out, '/');
  const char *base = slash ? slash + 1 : out;
  const char *dot = strrchr(base, '.');
  if (dot == base) dot = NULL; /* ".hidden" has no extension */
  size_t stem = dot ? (size_t)(dot - out) : strlen(out);
  size_t size = strlen(out) + strlen(group) + 2;
  char *p = malloc(size);
  if (p == NULL) return qv_error_set(error, QV_ENOMEM, "out of memory");
  snprintf(p, size, "%.*s.%s%s", (int)stem, out, group, dot ? dot : "");
  *path = p;
  return QV_OK;
}

/* ---- back to messages */

typedef struct Cols {
  bool sparse;
  QvTensorColumn *t;
  QvSparseColumn *s;
  int64_t n, cap;
} Cols;

static void cols_free(Cols *c) {
  for (int64_t i = 0; i < c->n; i++) {
    if (c->sparse)
      qv_sparse_column_reset(&c->s[i]);
    else
      qv_tensor_column_reset(&c->t[i]);
  }
  free(c->t);
  free(c->s);
}

static QvStatus cell_size(const Cols *c, int64_t b, int64_t row, int64_t *size, QvError *error) {
  QvStatus st;
  size_t sz = 0;
  if (c->sparse) {
    QvSparseTensor s;
    if ((st = qv_sparse_column_cell(&c->s[b], row, &s, error)) != QV_OK) return st;
    st = qv_sparse_write_size(&s, NULL, &sz, error);
    qv_sparse_reset(&s);
  } else {
    QvTensor t;
    if ((st = qv_tensor_column_cell(&c->t[b], row, &t, error)) != QV_OK) return st;
    st = qv_tensor_write_size(&t, NULL, &sz, error);
    qv_tensor_reset(&t);
  }
  *size = (int64_t)sz;
  return st;
}

static QvStatus write_cell(const Cols *c, int64_t b, int64_t row, QvSink *out, QvError *error) {
  QvStatus st;
  if (c->sparse) {
    QvSparseTensor s;
    if ((st = qv_sparse_column_cell(&c->s[b], row, &s, error)) != QV_OK) return st;
    st = qv_sparse_write(&s, out, NULL, error);
    qv_sparse_reset(&s);
  } else {
    QvTensor t;
    if ((st = qv_tensor_column_cell(&c->t[b], row, &t, error)) != QV_OK) return st;
    st = qv_tensor_write(&t, out, NULL, error);
    qv_tensor_reset(&t);
  }
  return st;
}

static int64_t col_length(const Cols *c, int64_t b) {
  return c->sparse ? c->s[b].length : c->t[b].length;
}

QvStatus qv_migrate_to_messages(QvSource *in, QvSink *out, const QvMigrateOptions *options,
                                QvMigrateStats *stats, QvError *error) {
  QvMigrateStats local;
  QvMigrateOptions opts;
  QvStatus st = QV_OPTIONS_LOAD(&opts, options, QvMigrateOptions, error);
  if (st) return st;
  if (stats == NULL) stats = &local;
  memset(stats, 0, sizeof *stats);
  if (in == NULL || out == NULL)
    return qv_error_set(error, QV_EARG, "qv_migrate_to_messages: NULL argument");
  QvRbReadOptions ro = {.struct_size = sizeof ro, .validate = QV_VALIDATE_FULL};
  if (opts.ipc) ro.ipc = opts.ipc;
  struct ArrowArrayStream stream;
  if ((st = qv_rb_stream_reader_new(&stream, in, &ro, error)) != QV_OK) return st;
  struct ArrowSchema schema;
  memset(&schema, 0, sizeof schema);
  Cols c;
  memset(&c, 0, sizeof c);
  if ((st = qv_rb_stream_get_schema(&stream, &schema, error)) != QV_OK) goto done;
  if (schema.n_children != 1) {
    st = qv_error_set(error, QV_EINVAL, "a table of %lld columns: --to-messages reads a table "
                      "of one tensor or sparse column", (long long)schema.n_children);
    goto done;
  }
  const struct ArrowSchema *field = schema.children[0];
  const char *fname = field->name ? field->name : "";
  QvTensorColumnType tt;
  QvSparseColumnType stt;
  if ((st = qv_tensor_column_type_from_field(field, NULL, &tt, error)) != QV_OK) goto done;
  bool dense = tt.kind != QV_TENSOR_COLUMN_NONE;
  qv_tensor_column_type_reset(&tt);
  if (!dense) {
    if ((st = qv_sparse_column_type_from_field(field, &stt, error)) != QV_OK) goto done;
    c.sparse = stt.kind != QV_SPARSE_COLUMN_NONE;
    qv_sparse_column_type_reset(&stt);
    if (!c.sparse) {
      st = qv_error_set(error, QV_EINVAL, "column '%s' (%s) is no arrow.fixed_shape_tensor, "
                        "arrow.variable_shape_tensor, quiver.sparse_tensor or "
                        "quiver.sparse_vector column", fname, field->format);
      goto done;
    }
  }
  /* every batch's column, kept: the sizes are summed before writing */
  int64_t total = 0, rows = 0;
  for (;;) {
    struct ArrowArray batch;
    st = qv_rb_stream_get_next(&stream, &batch, error);
    if (st == QV_EOS) {
      st = QV_OK;
      break;
    }
    if (st) goto done;
    if (c.n == c.cap) {
      int64_t nc = c.cap ? 2 * c.cap : 8;
      void *p = realloc(c.sparse ? (void *)c.s : (void *)c.t,
                        (size_t)nc * (c.sparse ? sizeof *c.s : sizeof *c.t));
      if (p == NULL) {
        batch.release(&batch);
        st = qv_error_set(error, QV_ENOMEM, "out of memory");
        goto done;
      }
      if (c.sparse) c.s = p; else c.t = p;
      c.cap = nc;
    }
    struct ArrowArray cells;
    st = qv_array_share(batch.children[0], &cells, error);
    batch.release(&batch);
    if (st) goto done;
    if (c.sparse)
      st = qv_sparse_column_init(&c.s[c.n], field, &cells, NULL, error);
    else
      st = qv_tensor_column_init(&c.t[c.n], field, &cells, NULL, error);
    if (cells.release) cells.release(&cells);
    if (st) goto done;
    c.n++;
    for (int64_t row = 0; row < col_length(&c, c.n - 1); row++) {
      int64_t sz;
      if ((st = cell_size(&c, c.n - 1, row, &sz, error)) != QV_OK) {
        qv_error_prefix(error, "column '%s' row %lld", fname, (long long)(rows + row));
        goto done;
      }
      total = sz > INT64_MAX - total ? INT64_MAX : total + sz;
    }
    rows += col_length(&c, c.n - 1);
  }
  if ((st = check_limit(total, opts.max_output_size, "the messages", error)) != QV_OK) goto done;
  rows = 0;
  for (int64_t b = 0; b < c.n && st == QV_OK; b++) {
    for (int64_t row = 0; row < col_length(&c, b) && st == QV_OK; row++) {
      st = write_cell(&c, b, row, out, error);
      if (st) qv_error_prefix(error, "row %lld", (long long)(rows + row));
      else stats->messages++;
    }
    rows += col_length(&c, b);
  }
done:
  cols_free(&c);
  if (schema.release) schema.release(&schema);
  stream.release(&stream);
  return st;
}
