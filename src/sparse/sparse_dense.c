/* Dense <-> sparse. The dense side is read once, in memory order, whatever
 * its layout (row-major, column-major or strided): lines along the dim of
 * smallest stride are scanned with a block zero test and a branch-free
 * append into growable buffers (contiguous lines of 4- and 8-byte values
 * with the vector kernels of sparse_dense_scan.c where the CPU has them);
 * the entries are then put in the order the output needs with O(nnz)
 * counting sorts, or for 2-D outputs across the memory order with the
 * strip sort of sparse_dense_csc.c. Sparse -> dense is a memset and
 * a scatter. */
#include <inttypes.h>
#include <stdlib.h>

#include "sparse/sparse_internal.h"
#include "sparse/sparse_seal.h"
#include "util/checked.h"
#include "util/cpu.h"
#include "util/grow.h"
#include "util/options.h"
#include "util/pool.h"

/* ---- scanning */

/* Constant value size, index stride (1: CSX indices; 2: 2-D COO pairs)
 * and, for contiguous lines, element stride. */
static int64_t scan_dispatch(const uint8_t *p, int64_t len, int64_t stride, int64_t c0, int64_t *ci,
                             int64_t cs, uint8_t *vals, size_t vs, uint64_t mask) {
  if (cs == 1 && stride == (int64_t)vs) {
    int64_t k = qvi_sp_scan_vec_i64(p, len, vs, mask, c0, ci, vals);
    if (k >= 0) return k;
    qvi_path_hit(QV_PATH_SCAN_PORTABLE);
  } else if (stride == (int64_t)vs) {
    /* COO coordinates are interleaved: the vector kernel writes contiguous
     * indices into a small buffer, spread out while still in L1 */
    enum { PART = 1024 };
    int64_t part[PART], k = 0, o = 0;
    for (; o < len; o += PART) {
      int64_t l = len - o < PART ? len - o : PART;
      int64_t c = qvi_sp_scan_vec_i64(p + o * stride, l, vs, mask, c0 + o, part, vals + (size_t)k * vs);
      if (c < 0) break; /* no vector kernel for this CPU or value size */
      for (int64_t i = 0; i < c; i++) ci[(k + i) * cs] = part[i];
      k += c;
    }
    if (o >= len) return k;
    qvi_path_hit(QV_PATH_SCAN_PORTABLE);
  }
#define SP_CS(VS, STRIDE)                                                                \
  if (cs == 1) return sp_scan_line(p, len, STRIDE, c0, ci, true, 1, vals, VS, mask);   \
  if (cs == 2) return sp_scan_line(p, len, STRIDE, c0, ci, true, 2, vals, VS, mask);   \
  return sp_scan_line(p, len, STRIDE, c0, ci, true, cs, vals, VS, mask);
#define CASE(VS)                     \
  case VS:                           \
    if (stride == VS) {              \
      SP_CS(VS, VS)                  \
    } else {                         \
      SP_CS(VS, stride)              \
    }
  switch (vs) {
    CASE(1)
    CASE(2)
    CASE(4)
    default: CASE(8)
  }
#undef CASE
#undef SP_CS
}

typedef struct Grow {
  int64_t *coords;
  uint8_t *vals;
  int64_t cap;
} Grow;

/* Reserves room for every element being a non-zero: address space only,
 * pages are committed as the scan writes them, so the buffers never move.
 * Without reservations the buffers grow by doubling. */
static void grow_init(Grow *g, int64_t max_entries, int32_t nd, size_t vs) {
  g->coords = NULL;
  g->vals = NULL;
  g->cap = 0;
  if (max_entries <= 0 || max_entries > INT64_MAX / 8 / nd) return;
  g->coords = qvi_sp_reserve(max_entries * nd, 8);
  g->vals = g->coords ? qvi_sp_reserve(max_entries, vs) : NULL;
  if (g->vals == NULL) {
    qvi_sp_free(g->coords);
    g->coords = NULL;
    return;
  }
  g->cap = max_entries;
}

static bool grow(Grow *g, int64_t need, int32_t nd, size_t vs) {
  if (need <= g->cap) return true;
  size_t grown = qvi_grow_capacity((size_t)g->cap, (size_t)need, 4096, 1);
  if (grown > INT64_MAX) return false;
  int64_t cap = (int64_t)grown;
  if ((uint64_t)cap > SIZE_MAX / 8 / (uint64_t)nd || (uint64_t)cap > SIZE_MAX / vs) return false;
  int64_t *c = qvi_sp_realloc(g->coords, cap * nd, 8);
  if (c == NULL) return false;
  g->coords = c;
  uint8_t *v = qvi_sp_realloc(g->vals, cap, vs);
  if (v == NULL) return false;
  g->vals = v;
  g->cap = cap;
  return true;
}

/* The elements of a dense tensor whose index along scan dim P[j0] is in
 * [l0, l1) (the dims before it in P have extent 1), in scan order P, into
 * g from entry 0. The count, or -1 when g cannot grow. */
static int64_t scan_entries(const QvTensor *dense, const int32_t *P, int32_t j0, int64_t l0, int64_t l1, Grow *g,
                            size_t vs, uint64_t mask) {
  int32_t nd = dense->ndim;
  int32_t q = P[nd - 1];
  int64_t L = dense->shape[q], s = dense->strides[q];
  int64_t idx[QV_TENSOR_MAX_NDIM] = {0};
  const uint8_t *base = dense->data;
  int64_t n = 0;
  if (l1 <= l0) return 0;
  int32_t d0 = P[j0];
  if (j0 < nd - 1) {
    idx[d0] = l0;
    base += l0 * dense->strides[d0];
  }
  enum { CHUNK = 8192 };
  for (;;) {
    int64_t o0 = j0 == nd - 1 ? l0 : 0, o1 = j0 == nd - 1 ? l1 : L;
    for (int64_t off = o0; off < o1; off += CHUNK) {
      int64_t len = o1 - off < CHUNK ? o1 - off : CHUNK;
      if (!grow(g, n + len, nd, vs)) return -1;
      int64_t c = scan_dispatch(base + off * s, len, s, off, g->coords + n * nd + q, nd,
                                g->vals + (size_t)n * vs, vs, mask);
      if (nd == 2) {
        int32_t o = 1 - q;
        for (int64_t k = n; k < n + c; k++) g->coords[k * 2 + o] = idx[o];
      } else if (nd > 2) {
        for (int64_t k = n; k < n + c; k++)
          for (int32_t d = 0; d < nd; d++)
            if (d != q) g->coords[k * nd + d] = idx[d];
      }
      n += c;
    }
    int32_t j = nd - 2;
    for (; j > j0; j--) {
      int32_t d = P[j];
      base += dense->strides[d];
      if (++idx[d] < dense->shape[d]) break;
      base -= dense->strides[d] * dense->shape[d];
      idx[d] = 0;
    }
    if (j > j0) continue;
    if (j0 == nd - 1 || ++idx[d0] >= l1) break;
    base += dense->strides[d0];
  }
  return n;
}

enum { SCAN_MIN_PER_PART = 1 << 18 }; /* elements */

/* Parts for a dense scan of `size` elements whose split dim has `lines`
 * indices: 1 below the threaded size or without a pool. */
static int scan_parts(int64_t size, int64_t lines) {
  int T = qvi_pool_threads(qvi_sp_pool_current());
  if (T <= 1 || size / SCAN_MIN_PER_PART < 2 || lines < 2) return 1;
  if (size / SCAN_MIN_PER_PART < T) T = (int)(size / SCAN_MIN_PER_PART);
  if (lines < T) T = (int)lines;
  return T;
}

/* ---- a dense scan on several threads: its lines (the indices of one dim)
 * are cut into one block per part; each part scans its block into its own
 * buffers (part 0 straight into the result, reserved for every element),
 * counted from its block's start. Then every later part copies its entries
 * behind the parts before it (and shifts its lines' ends, for CSX), all in
 * parallel. A line's entries are written by one scan in the same order as
 * on one thread, so the bytes are the one-thread bytes. The input is read
 * once; only the entries of parts 1.. are copied again. */
typedef int64_t (*LineScan)(const void *ctx, int64_t l0, int64_t l1, Grow *g);

typedef struct LinePart {
  Grow g;
  int64_t l0, l1, n, at;
} LinePart;

typedef struct LineJob {
  LineScan scan;
  const void *ctx;
  int32_t width; /* coordinates per entry */
  size_t vs;
  int64_t *ptr;  /* line ends to shift by a part's start (CSX), or NULL */
  LinePart *parts;
} LineJob;

static void line_scan(void *ctx, size_t i) {
  LineJob *j = ctx;
  LinePart *p = &j->parts[i];
  p->n = j->scan(j->ctx, p->l0, p->l1, &p->g);
}

static void line_place(void *ctx, size_t i) {
  LineJob *j = ctx;
  LinePart *p = &j->parts[i], *p0 = &j->parts[0];
  if (i == 0 || p->n == 0) return;
  memcpy(p0->g.coords + p->at * j->width, p->g.coords, (size_t)p->n * (size_t)j->width * 8);
  memcpy(p0->g.vals + (size_t)p->at * j->vs, p->g.vals, (size_t)p->n * j->vs);
  if (j->ptr)
    for (int64_t r = p->l0; r < p->l1; r++) j->ptr[r + 1] += p->at;
}

/* Scans `lines` lines of a dense tensor of `size` elements into *out
 * (entries of `width` coordinates and vs-byte values), on the current pool
 * when it is large enough. The entry count, or -1 when out of memory. */
static int64_t scan_split(LineScan scan, const void *ctx, int64_t lines, int64_t size, int32_t width,
                          size_t vs, int64_t *ptr, Grow *out) {
  int np = lines > 0 ? scan_parts(size, lines) : 1;
  LinePart one, *parts = np > 1 ? qvi_sp_calloc(np, sizeof *parts) : &one;
  if (parts == NULL) np = 1, parts = &one;
  memset(parts, 0, (size_t)np * sizeof *parts);
  /* buffers on the calling thread (a workspace serves them) */
  for (int i = 0; i < np; i++) {
    LinePart *p = &parts[i];
    p->l0 = lines / np * i + lines % np * i / np;
    p->l1 = lines / np * (i + 1) + lines % np * (i + 1) / np;
    grow_init(&p->g, i == 0 || lines == 0 ? size : size / lines * (p->l1 - p->l0), width, vs);
  }
  bool ok = true;
  int64_t n = 0;
  if (np == 1) {
    if (lines > 0) n = parts[0].n = scan(ctx, 0, lines, &parts[0].g);
    ok = n >= 0;
  } else {
    LineJob j = {scan, ctx, width, vs, ptr, parts};
    qvi_pool_run(qvi_sp_pool_current(), (size_t)np, line_scan, &j);
    for (int i = 0; i < np && ok; i++) {
      ok = parts[i].n >= 0;
      parts[i].at = n;
      n += ok ? parts[i].n : 0;
    }
    ok = ok && grow(&parts[0].g, n, width, vs);
    if (ok) {
      qvi_pool_run(qvi_sp_pool_current(), (size_t)np, line_place, &j);
      qvi_path_hit(QV_PATH_DENSE_SCAN_THREADS);
    }
  }
  *out = parts[0].g;
  for (int i = 1; i < np; i++) {
    qvi_sp_free(parts[i].g.coords);
    qvi_sp_free(parts[i].g.vals);
  }
  if (parts != &one) qvi_sp_free(parts);
  return ok ? n : -1;
}

typedef struct EntryScan {
  const QvTensor *d;
  const int32_t *P;
  int32_t j0;
  size_t vs;
  uint64_t mask;
} EntryScan;

static int64_t entry_scan(const void *ctx, int64_t l0, int64_t l1, Grow *g) {
  const EntryScan *e = ctx;
  return scan_entries(e->d, e->P, e->j0, l0, l1, g, e->vs, e->mask);
}

QvStatus qvi_sp_entries_from_dense(const QvTensor *dense, SpEntries *e, QvError *error) {
  int32_t nd = dense->ndim;
  memset(e, 0, sizeof *e);
  e->ndim = nd;
  e->shape = dense->shape;
  e->vtype = dense->type;
  e->vsize = qv_arrow_type_size(dense->type);
  size_t vs = e->vsize;
  uint64_t mask = qvi_sp_zero_mask(dense->type);
  /* scan order: extent-1 dims outermost, then by decreasing stride */
  int32_t P[QV_TENSOR_MAX_NDIM];
  for (int32_t i = 0; i < nd; i++) {
    int32_t d = i, j = i;
    for (; j > 0; j--) {
      int32_t o = P[j - 1];
      bool o_triv = dense->shape[o] <= 1, d_triv = dense->shape[d] <= 1;
      bool after = d_triv ? o_triv : (o_triv || dense->strides[o] >= dense->strides[d]);
      if (after) break;
      P[j] = o;
    }
    P[j] = d;
  }
  memcpy(e->order, P, (size_t)nd * sizeof *P);
  e->sorted = e->unique = true;
  int64_t size = qv_tensor_n_elements(dense);
  /* the split dim: the first of the scan order with more than one index
   * (every dim before it has extent 1) */
  int32_t j0 = 0;
  while (j0 < nd - 1 && dense->shape[P[j0]] <= 1) j0++;
  int64_t lines = size > 0 ? dense->shape[P[j0]] : 0;
  EntryScan es = {dense, P, j0, vs, mask};
  Grow g;
  int64_t n = scan_split(entry_scan, &es, lines, size, nd, vs, NULL, &g);
  bool ok = n >= 0;
  if (!ok) {
    qvi_sp_free(g.coords);
    qvi_sp_free(g.vals);
    return qvi_sp_nomem(error, "dense to sparse", size, (size_t)nd * 8 + vs);
  }
  /* give back the unused tail (mremap for large blocks, no copy) */
  int64_t *c = qvi_sp_realloc(g.coords, n * nd, 8);
  uint8_t *v = qvi_sp_realloc(g.vals, n, vs);
  if (c == NULL || v == NULL) {
    qvi_sp_free(c ? c : g.coords);
    qvi_sp_free(v ? v : g.vals);
    return qvi_sp_nomem(error, "dense to sparse", n, (size_t)nd * 8 + vs);
  }
  e->coords = c;
  e->values = v;
  e->own_coords = e->own_values = true;
  e->n = n;
  return QV_OK;
}

/* Lines [l0, l1) of a 2-D dense tensor scanned along dim 1 - sm into g
 * from entry 0: ptr[r + 1] is the count after line r, from the block's
 * start. The count, or -1 when g cannot grow. */
static int64_t scan_lines(const QvTensor *d, int sm, int64_t l0, int64_t l1, Grow *g, int64_t *ptr, size_t vs,
                          uint64_t mask) {
  int sn = 1 - sm;
  int64_t L = d->shape[sn], stride = d->strides[sn], n = 0;
  enum { CHUNK = 8192 };
  for (int64_t r = l0; L > 0 && r < l1; r++) {
    const uint8_t *base = d->data + r * d->strides[sm];
    for (int64_t off = 0; off < L; off += CHUNK) {
      int64_t len = L - off < CHUNK ? L - off : CHUNK;
      if (!grow(g, n + len, 1, vs)) return -1;
      n += scan_dispatch(base + off * stride, len, stride, off, g->coords + n, 1, g->vals + (size_t)n * vs, vs,
                         mask);
    }
    ptr[r + 1] = n;
  }
  return n;
}

typedef struct AlongScan {
  const QvTensor *d;
  int sm;
  int64_t *ptr;
  size_t vs;
  uint64_t mask;
} AlongScan;

static int64_t along_scan(const void *ctx, int64_t l0, int64_t l1, Grow *g) {
  const AlongScan *a = ctx;
  return scan_lines(a->d, a->sm, l0, l1, g, a->ptr, a->vs, a->mask);
}

/* 2-D dense -> CSX arrays: lines along the dim of smallest stride give the
 * CSX of that orientation directly (indptr from line ends); the other
 * orientation is a sort by strips of majors (sparse_dense_csc.c). */
QvStatus qvi_sp_csx_from_dense(const QvTensor *d, int M, SpCsx *c, QvError *error) {
  memset(c, 0, sizeof *c);
  int sm = M; /* dim whose lines are scanned one after another */
  if (d->shape[0] > 1 && d->shape[1] > 1) sm = d->strides[0] >= d->strides[1] ? 0 : 1;
  if (sm != M) return qvi_sp_csx_from_dense_across(d, sm, c, error);
  int sn = 1 - sm;
  int64_t nlines = d->shape[sm], L = d->shape[sn], size = qv_tensor_n_elements(d);
  size_t vs = qv_arrow_type_size(d->type);
  uint64_t mask = qvi_sp_zero_mask(d->type);
  int64_t *ptr = nlines < INT64_MAX ? qvi_sp_calloc(nlines + 1, 8) : NULL;
  if (ptr == NULL) return qvi_sp_nomem(error, "dense to sparse", nlines, 8);
  AlongScan as = {d, sm, ptr, vs, mask};
  Grow g;
  int64_t n = scan_split(along_scan, &as, nlines, size, 1, vs, ptr, &g);
  bool ok = n >= 0;
  if (!ok) {
    qvi_sp_free(ptr);
    qvi_sp_free(g.coords);
    qvi_sp_free(g.vals);
    return qvi_sp_nomem(error, "dense to sparse", size, 8 + vs);
  }
  int64_t *idx = qvi_sp_realloc(g.coords, n, 8);
  uint8_t *vals = qvi_sp_realloc(g.vals, n, vs);
  qvi_sp_csx_own(c, sm, nlines, L, n, d->type, ptr, idx ? idx : g.coords, vals ? vals : g.vals);
  if (idx != NULL && vals != NULL) return QV_OK;
  qvi_sp_csx_free(c);
  return qvi_sp_nomem(error, "dense to sparse", n, 8 + vs);
}

QvStatus qvi_sp_load_options(const QvSparseOptions *options, QvSparseOptions *opts, int *threads,
                             QvError *error) {
  *threads = 1;
  QvStatus st = QV_OPTIONS_LOAD(opts, options, QvSparseOptions, error);
  if (st != QV_OK) return st;
  if (opts->threads < 0 || opts->threads > QV_SPARSE_MAX_THREADS)
    return qv_error_set(error, QV_EARG, "sparse conversion: threads must be 0..%d, not %d",
                        QV_SPARSE_MAX_THREADS, opts->threads);
  *threads = opts->threads > 1 ? opts->threads : 1;
  return QV_OK;
}

/* Checks a conversion's options; fills the index type and axis order. */
QvStatus qvi_sp_options(const QvSparseOptions *options, QvSparseFormat format, int32_t ndim,
                    QvArrowType *itype, const int32_t **axis, QvSparseWorkspace **ws,
                    int *threads, QvError *error) {
  *itype = QV_ARROW_INT64;
  *axis = NULL;
  *ws = NULL;
  *threads = 1;
  QvSparseOptions opts;
  QvStatus st = qvi_sp_load_options(options, &opts, threads, error);
  if (st != QV_OK) return st;
  const QvSparseOptions *o = &opts;
  *ws = o->workspace;
  if (format < QV_SPARSE_COO || format > QV_SPARSE_CSF)
    return qv_error_set(error, QV_EARG, "sparse conversion: unknown format %d", (int)format);
  if ((format == QV_SPARSE_CSR || format == QV_SPARSE_CSC) && ndim != 2)
    return qv_error_set(error, QV_EINVAL, "%s needs a 2-D tensor, got %d dims",
                        format == QV_SPARSE_CSR ? "CSR" : "CSC", (int)ndim);
  if (o->index_type != QV_ARROW_NONE) {
    if (!qvi_sp_is_index_type(o->index_type))
      return qv_error_set(error, QV_EARG, "sparse conversion: index type %s is not an integer type",
                          qv_arrow_type_name(o->index_type));
    *itype = o->index_type;
  }
  if (format == QV_SPARSE_CSF && o->axis_order != NULL && ndim <= QV_TENSOR_MAX_NDIM) {
    bool seen[QV_TENSOR_MAX_NDIM] = {false};
    for (int32_t l = 0; l < ndim; l++) {
      int32_t a = o->axis_order[l];
      if (a < 0 || a >= ndim || seen[a])
        return qv_error_set(error, QV_EARG,
                            "sparse conversion: axis_order is not a permutation of 0..%d (%d at position %d)",
                            (int)ndim - 1, (int)a, (int)l);
      seen[a] = true;
    }
    *axis = o->axis_order;
  }
  return QV_OK;
}

QvStatus qv_sparse_from_dense(const QvTensor *dense, QvSparseFormat format,
                              const QvSparseOptions *options, QvSparseTensor *out,
                              QvError *error) {
  if (out == NULL) return qv_error_set(error, QV_EARG, "dense to sparse: out is NULL");
  memset(out, 0, sizeof *out);
  if (dense == NULL) return qv_error_set(error, QV_EARG, "dense to sparse: tensor is NULL");
  if (dense->ndim < 1)
    return qv_error_set(error, QV_EINVAL, "dense to sparse: a sparse tensor needs at least 1 dimension");
  if (dense->ndim > QV_TENSOR_MAX_NDIM || dense->type < QV_ARROW_INT8 || dense->type >= QV_ARROW_NUMERIC_END ||
      dense->shape == NULL || dense->strides == NULL || (qv_tensor_n_elements(dense) > 0 && dense->data == NULL))
    return qv_error_set(error, QV_EARG, "dense to sparse: malformed tensor");
  return qvi_sp_produce(dense, NULL, dense->ndim == 2 && format != QV_SPARSE_COO, format, options,
                       out, error);
}

/* ---- output size limit */

/* a * b + c saturated at INT64_MAX (only compared against a limit). */
static int64_t sat_mul_add(int64_t a, int64_t b, int64_t c) {
  int64_t r;
  return qvi_mul_add_i64(a, b, c, &r) ? r : INT64_MAX;
}

/* Bytes of the output buffers for nnz entries (CSF: its per-level indptr and
 * indices can hold at most nnz + 1 entries each). */
static int64_t output_bound(QvSparseFormat format, int32_t ndim, const int64_t *shape,
                            int64_t nnz, size_t isz, size_t vsz) {
  int64_t per = sat_mul_add(ndim, (int64_t)isz, (int64_t)vsz);
  int64_t b = sat_mul_add(nnz, per, 0);
  if (format == QV_SPARSE_CSR || format == QV_SPARSE_CSC) {
    int64_t major = shape[format == QV_SPARSE_CSR ? 0 : 1];
    b = sat_mul_add(major == INT64_MAX ? major : major + 1, (int64_t)isz, b);
  } else if (format == QV_SPARSE_CSF) {
    b = sat_mul_add(nnz == INT64_MAX ? nnz : nnz + 1, sat_mul_add(ndim, (int64_t)isz, 0), b);
  }
  return b;
}

/* Non-zeros of a dense tensor, walking each broadcast (stride 0) dim once;
 * -1 when the elements left to walk take more than `budget` bytes and more
 * than the input holds (overlapping strides), so the count never costs more
 * than reading the input or producing an allowed output. */
static int64_t dense_nnz_within(const QvTensor *t, int64_t budget) {
  int64_t shape[QV_TENSOR_MAX_NDIM], repeat = 1, distinct = 1;
  for (int32_t k = 0; k < t->ndim; k++) {
    bool bcast = t->strides[k] == 0 && t->shape[k] > 1;
    shape[k] = bcast ? 1 : t->shape[k];
    if (bcast) repeat = sat_mul_add(repeat, t->shape[k], 0);
    distinct = sat_mul_add(distinct, shape[k], 0);
  }
  int64_t walk = sat_mul_add(distinct, (int64_t)qv_arrow_type_size(t->type), 0);
  if (walk > budget && walk > t->data_size) return -1;
  QvTensor view = *t;
  view.shape = shape;
  int64_t n = qv_tensor_count_nonzero(&view);
  return n < 0 ? -1 : sat_mul_add(n, repeat, 0);
}

static QvStatus check_output_size(const QvTensor *dense, const QvSparseTensor *sparse,
                                  QvSparseFormat format, QvArrowType itype,
                                  const QvSparseOptions *options, QvError *error) {
  QvSparseOptions o;
  QvStatus st = QV_OPTIONS_LOAD(&o, options, QvSparseOptions, error);
  if (st != QV_OK) return st;
  if (o.max_output_size < 0)
    return qv_error_set(error, QV_EARG, "sparse conversion: max_output_size is negative");
  int64_t limit = o.max_output_size ? o.max_output_size : QV_DEFAULT_MAX_OUTPUT_SIZE;
  QvArrowType vtype = dense ? dense->type : sparse->value_type;
  int32_t ndim = dense ? dense->ndim : sparse->ndim;
  const int64_t *shape = dense ? dense->shape : sparse->shape;
  size_t isz = qv_arrow_type_size(itype), vsz = qv_arrow_type_size(vtype);
  int64_t nnz = dense ? qv_tensor_n_elements(dense) : sparse->nnz;
  int64_t bound = output_bound(format, ndim, shape, nnz, isz, vsz);
  if (bound <= limit) return QV_OK;
  if (dense) {
    int64_t n = dense_nnz_within(dense, limit);
    if (n >= 0) {
      bound = output_bound(format, ndim, shape, n, isz, vsz);
      if (bound <= limit) return QV_OK;
    }
  }
  return qv_error_set(error, QV_ELIMIT,
                      "sparse conversion: output of %s%" PRId64
                      " bytes exceeds the limit of %" PRId64 " (max_output_size)",
                      bound == INT64_MAX ? "more than " : "", bound, limit);
}

QvStatus qvi_sp_produce(const QvTensor *dense, const QvSparseTensor *sparse, bool pipeline,
                       QvSparseFormat format, const QvSparseOptions *options, QvSparseTensor *out,
                       QvError *error) {
  QvArrowType vtype = dense ? dense->type : sparse->value_type;
  int32_t ndim = dense ? dense->ndim : sparse->ndim;
  const int64_t *shape = dense ? dense->shape : sparse->shape;
  const char *const *names = dense ? dense->dim_names : sparse->dim_names;
  QvArrowType itype;
  const int32_t *axis;
  QvSparseWorkspace *ws;
  int threads;
  QvStatus st = qvi_sp_options(options, format, ndim, &itype, &axis, &ws, &threads, error);
  if (st != QV_OK) return st;
  st = check_output_size(dense, sparse, format, itype, options, error);
  if (st != QV_OK) return st;
  st = qvi_sp_begin(out, format, vtype, ndim, shape, names, error);
  if (st != QV_OK) return st;
  /* a pool only for the 2-D pipeline's large groupings (the kernels that
   * split: sparse_group.c); a pool that cannot be made means one thread,
   * whose output is the same */
  QvPool *pool = NULL;
  if (threads > 1 && (sparse != NULL ? pipeline && sparse->nnz >= SP_MIN_THREADED_NNZ
                                      : qv_tensor_n_elements(dense) >= 2 * SP_MIN_THREADED_NNZ))
    (void)qvi_pool_new(&pool, threads, NULL);
  QvPool *prev_pool = qvi_sp_pool_enter(pool);
  QvSparseWorkspace *prev = qvi_sp_ws_enter(ws);
  if (pipeline) {
    SpCsx c;
    int M = qvi_sp_csx_orientation(format, axis);
    st = dense ? qvi_sp_csx_from_dense(dense, M, &c, error)
               : qvi_sp_csx_from_sparse(sparse, M, &c, error);
    if (st == QV_OK) {
      st = qvi_sp_csx_emit(&c, out, itype, error);
      qvi_sp_csx_free(&c);
    }
  } else {
    SpEntries e;
    st = dense ? qvi_sp_entries_from_dense(dense, &e, error)
               : qvi_sp_entries_from_sparse(sparse, &e, error);
    if (st == QV_OK) {
      e.shape = out->shape;
      st = qvi_sp_build(&e, out, itype, axis, error);
      qvi_sp_entries_free(&e);
    }
  }
  qvi_sp_ws_leave(prev);
  qvi_sp_pool_leave(prev_pool);
  qvi_pool_free(pool);
  /* valid by construction, in buffers of its own: a later conversion or
   * write need not scan it again (CSF stays unsealed, see sparse_seal.h) */
  if (st == QV_OK) qvi_sp_seal(out);
  else qv_sparse_reset(out);
  return st;
}

/* ---- sparse -> dense */

SP_INLINE void put(uint8_t *dst, int64_t flat, const uint8_t *v, size_t vs) {
  qvi_st_bits(dst + (size_t)flat * vs, vs, qvi_ld_bits(v, vs));
}

/* Duplicates (non-canonical COO) are summed: the first write stores, later
 * ones add, so a single entry keeps its exact bits (-0.0 included). */
static void put_add(uint8_t *dst, int64_t flat, const uint8_t *v, size_t vs, QvArrowType type) {
  uint8_t *p = dst + (size_t)flat * vs;
  if (qvi_ld_bits(p, vs) == 0)
    qvi_st_bits(p, vs, qvi_ld_bits(v, vs));
  else
    qvi_sp_value_add(type, p, v);
}

SP_INLINE void scatter_coo(const SpEntries *e, const int64_t *rs, uint8_t *dst, size_t vs) {
  int32_t nd = e->ndim;
  const int64_t *c = e->coords;
  if (nd == 2) {
    int64_t r0 = rs[0];
    for (int64_t i = 0; i < e->n; i++) put(dst, c[2 * i] * r0 + c[2 * i + 1], e->values + (size_t)i * vs, vs);
    return;
  }
  for (int64_t i = 0; i < e->n; i++) {
    int64_t flat = 0;
    for (int32_t d = 0; d < nd; d++) flat += c[i * nd + d] * rs[d];
    put(dst, flat, e->values + (size_t)i * vs, vs);
  }
}

SP_INLINE void scatter_csx(const int64_t *ptr, const int64_t *idx, const uint8_t *vals,
                           int64_t nmajor, int64_t smajor, int64_t sminor, uint8_t *dst, size_t vs) {
  for (int64_t r = 0; r < nmajor; r++) {
    int64_t base = r * smajor;
    for (int64_t k = ptr[r]; k < ptr[r + 1]; k++) put(dst, base + idx[k] * sminor, vals + (size_t)k * vs, vs);
  }
}

/* CSF: offsets of the nodes of each level from their parent's, top-down;
 * the last level's nodes are the values. */
SP_INLINE void scatter_csf_last(const int64_t *off, int64_t nparent, const int64_t *ptr,
                                const int64_t *idx, int64_t stride, const uint8_t *vals,
                                uint8_t *dst, size_t vs) {
  for (int64_t p = 0; p < nparent; p++) {
    int64_t base = off[p];
    for (int64_t k = ptr[p]; k < ptr[p + 1]; k++) put(dst, base + idx[k] * stride, vals + (size_t)k * vs, vs);
  }
}

static QvStatus scatter_csf(const QvSparseTensor *t, const int64_t *rs, uint8_t *dst, QvError *error) {
  int32_t nd = t->ndim;
  size_t vs = qv_arrow_type_size(t->value_type);
  const int64_t *ind[QV_TENSOR_MAX_NDIM], *ptr[QV_TENSOR_MAX_NDIM];
  int64_t *own[2 * QV_TENSOR_MAX_NDIM] = {NULL};
  int64_t *off = NULL, *next = NULL;
  QvStatus st = QV_OK;
  for (int32_t l = 0; l < nd && st == QV_OK; l++) {
    st = qvi_sp_int64_view(t->csf_indices[l], t->index_type, t->csf_indices_len[l], &ind[l], &own[2 * l], error);
    if (st == QV_OK && l + 1 < nd)
      st = qvi_sp_int64_view(t->csf_indptr[l], t->indptr_type, t->csf_indptr_len[l], &ptr[l], &own[2 * l + 1],
                         error);
  }
  if (st == QV_OK && nd == 1) {
    for (int64_t k = 0; k < t->nnz; k++) put(dst, ind[0][k], t->values + (size_t)k * vs, vs);
  } else if (st == QV_OK) {
    /* off: offsets of the nodes of level l - 1 */
    int64_t cnt0 = t->csf_indices_len[0];
    off = qvi_sp_malloc(cnt0, 8);
    if (off == NULL) st = qvi_sp_nomem(error, "CSF to dense", cnt0, 8);
    for (int64_t j = 0; st == QV_OK && j < cnt0; j++) off[j] = ind[0][j] * rs[t->axis_order[0]];
    for (int32_t l = 1; st == QV_OK && l < nd - 1; l++) {
      int64_t cnt = t->csf_indices_len[l], s = rs[t->axis_order[l]];
      next = qvi_sp_malloc(cnt, 8);
      if (next == NULL) {
        st = qvi_sp_nomem(error, "CSF to dense", cnt, 8);
        break;
      }
      for (int64_t p = 0; p < t->csf_indices_len[l - 1]; p++)
        for (int64_t k = ptr[l - 1][p]; k < ptr[l - 1][p + 1]; k++) next[k] = off[p] + ind[l][k] * s;
      qvi_sp_free(off);
      off = next;
      next = NULL;
    }
    if (st == QV_OK) {
      int64_t np = t->csf_indices_len[nd - 2], s = rs[t->axis_order[nd - 1]];
      switch (vs) {
#define CASE(VS) \
  case VS: scatter_csf_last(off, np, ptr[nd - 2], ind[nd - 1], s, t->values, dst, VS); break;
        CASE(1)
        CASE(2)
        CASE(4)
        default: CASE(8)
#undef CASE
      }
    }
  }
  qvi_sp_free(off);
  for (int i = 0; i < 2 * nd; i++) qvi_sp_free(own[i]);
  return st;
}

/* ---- sparse -> dense on several threads (QvSparseOptions.threads)
 *
 * Every part writes its own elements: CSR/CSC by ranges of rows/columns of
 * about equal entry counts, a COO without duplicates by equal entry
 * ranges; distinct entries are distinct elements, so the parts share no
 * byte and the result is the one-thread result whatever the split. A COO
 * with duplicates (summed in entry order) and CSF scatter on one thread.
 * Zeroing a caller's buffer splits by byte ranges. */
typedef struct DenseJob {
  uint8_t *dst;
  size_t bytes, vs;
  int parts;
  /* CSX */
  const int64_t *ptr, *idx;
  const uint8_t *vals;
  int64_t nmajor, smajor, sminor;
  /* COO */
  const SpEntries *e;
  const int64_t *rs;
} DenseJob;

static void dense_zero_part(void *ctx, size_t i) {
  DenseJob *j = ctx;
  size_t per = j->bytes / (size_t)j->parts, extra = j->bytes % (size_t)j->parts;
  size_t lo = i * per + (i < extra ? i : extra), len = per + (i < extra ? 1 : 0);
  memset(j->dst + lo, 0, len);
}

/* First major r with ptr[r] >= e. */
static int64_t major_at(const int64_t *ptr, int64_t nmajor, int64_t e) {
  int64_t lo = 0, hi = nmajor;
  while (lo < hi) {
    int64_t mid = lo + (hi - lo) / 2;
    if (ptr[mid] < e) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/* n * i / parts without overflow. */
static int64_t part_of(int64_t n, size_t i, int parts) {
  return n / parts * (int64_t)i + n % parts * (int64_t)i / parts;
}

static void dense_csx_part(void *ctx, size_t i) {
  DenseJob *j = ctx;
  int64_t n = j->ptr[j->nmajor] - j->ptr[0];
  int64_t r0 = i == 0 ? 0 : major_at(j->ptr, j->nmajor, j->ptr[0] + part_of(n, i, j->parts));
  int64_t r1 = (int)i + 1 == j->parts ? j->nmajor
                                      : major_at(j->ptr, j->nmajor, j->ptr[0] + part_of(n, i + 1, j->parts));
  const int64_t *ptr = j->ptr + r0;
  uint8_t *dst = j->dst + (size_t)(r0 * j->smajor) * j->vs;
  switch (j->vs) {
#define CASE(VS) case VS: scatter_csx(ptr, j->idx, j->vals, r1 - r0, j->smajor, j->sminor, dst, VS); break;
    CASE(1)
    CASE(2)
    CASE(4)
    default: CASE(8)
#undef CASE
  }
}

static void dense_coo_part(void *ctx, size_t i) {
  DenseJob *j = ctx;
  SpEntries e = *j->e;
  int64_t i0 = part_of(j->e->n, i, j->parts), i1 = part_of(j->e->n, i + 1, j->parts);
  e.coords = j->e->coords + i0 * e.ndim;
  e.values = j->e->values + (size_t)i0 * j->vs;
  e.n = i1 - i0;
  switch (j->vs) {
#define CASE(VS) case VS: scatter_coo(&e, j->rs, j->dst, VS); break;
    CASE(1)
    CASE(2)
    CASE(4)
    default: CASE(8)
#undef CASE
  }
}

/* Parts for n entries on the pool: 1 below the threaded size. */
static int dense_parts(const QvPool *pool, int64_t n) {
  int T = qvi_pool_threads(pool);
  if (T <= 1 || n < SP_MIN_THREADED_NNZ) return 1;
  int64_t most = n / (SP_MIN_THREADED_NNZ / 2);
  return most < T ? (int)most : T;
}

static QvStatus scatter(const QvSparseTensor *t, uint8_t *dst, QvPool *pool, QvError *error) {
  int32_t nd = t->ndim;
  size_t vs = qv_arrow_type_size(t->value_type);
  int64_t rs[QV_TENSOR_MAX_NDIM];
  rs[nd - 1] = 1;
  for (int32_t d = nd - 1; d > 0; d--) rs[d - 1] = rs[d] * t->shape[d];
  QvStatus st = QV_OK;
  if (t->format == QV_SPARSE_COO) {
    SpEntries e;
    st = qvi_sp_entries_from_sparse(t, &e, error);
    if (st != QV_OK) return st;
    if (e.unique) {
      DenseJob j = {.dst = dst, .vs = vs, .parts = dense_parts(pool, e.n), .e = &e, .rs = rs};
      if (j.parts > 1) qvi_path_hit(QV_PATH_SPARSE_DENSE_THREADS);
      qvi_pool_run(j.parts > 1 ? pool : NULL, (size_t)j.parts, dense_coo_part, &j);
    } else {
      for (int64_t i = 0; i < e.n; i++) {
        int64_t flat = 0;
        for (int32_t d = 0; d < nd; d++) flat += e.coords[i * nd + d] * rs[d];
        put_add(dst, flat, e.values + (size_t)i * vs, vs, t->value_type);
      }
    }
    qvi_sp_entries_free(&e);
    return QV_OK;
  }
  if (t->format == QV_SPARSE_CSF) return scatter_csf(t, rs, dst, error);
  bool csr = t->format == QV_SPARSE_CSR;
  int64_t nmajor = t->shape[csr ? 0 : 1];
  const int64_t *ptr, *idx;
  int64_t *own_p, *own_i;
  st = qvi_sp_int64_view(t->indptr, t->indptr_type, nmajor + 1, &ptr, &own_p, error);
  if (st != QV_OK) return st;
  st = qvi_sp_int64_view(t->indices, t->index_type, t->nnz, &idx, &own_i, error);
  if (st == QV_OK) {
    DenseJob j = {.dst = dst, .vs = vs, .ptr = ptr, .idx = idx, .vals = t->values, .nmajor = nmajor,
                  .smajor = csr ? t->shape[1] : 1, .sminor = csr ? 1 : t->shape[1]};
    j.parts = dense_parts(pool, ptr[nmajor] - ptr[0]);
    if (j.parts > 1) qvi_path_hit(QV_PATH_SPARSE_DENSE_THREADS);
    qvi_pool_run(j.parts > 1 ? pool : NULL, (size_t)j.parts, dense_csx_part, &j);
  }
  qvi_sp_free(own_p);
  qvi_sp_free(own_i);
  return st;
}

/* Element count of the dense form, or -1 when it overflows int64 bytes. */
static int64_t dense_size(const QvSparseTensor *t) {
  int64_t size = 1;
  int64_t vs = (int64_t)qv_arrow_type_size(t->value_type);
  for (int32_t d = 0; d < t->ndim; d++) {
    if (t->shape[d] == 0) return 0;
  }
  for (int32_t d = 0; d < t->ndim; d++) {
    if (size > INT64_MAX / vs / t->shape[d]) return -1;
    size *= t->shape[d];
  }
  return size;
}

/* A pool of the requested threads when the work is large enough to split
 * (NULL otherwise, or when one cannot be made: the result is the same). */
static QvPool *dense_pool(int threads, int64_t nnz, size_t bytes) {
  QvPool *pool = NULL;
  if (threads > 1 && (nnz >= SP_MIN_THREADED_NNZ || bytes >= SP_MIN_THREADED_ZERO))
    (void)qvi_pool_new(&pool, threads, NULL);
  return pool;
}

/* What both conversions start with: the options loaded (*threads), `t`
 * validated, its dense element count in *size (QV_ELIMIT past int64). */
static QvStatus dense_start(const QvSparseTensor *t, const QvSparseOptions *options, int *threads,
                            int64_t *size, QvError *error) {
  QvSparseOptions opts;
  QvStatus st = qvi_sp_load_options(options, &opts, threads, error);
  if (st != QV_OK) return st;
  st = qv_sparse_validate(t, error);
  if (st != QV_OK) return st;
  *size = dense_size(t);
  if (*size < 0) return qv_error_set(error, QV_ELIMIT, "sparse to dense: the dense size overflows int64");
  return QV_OK;
}

QvStatus qv_sparse_to_dense_into(const QvSparseTensor *t, void *dst, size_t dst_size,
                                 const QvSparseOptions *options, QvError *error) {
  int threads;
  int64_t size;
  QvStatus st = dense_start(t, options, &threads, &size, error);
  if (st != QV_OK) return st;
  size_t bytes = (size_t)size * qv_arrow_type_size(t->value_type);
  if (dst_size < bytes || (bytes > 0 && dst == NULL))
    return qv_error_set(error, QV_EARG, "sparse to dense: destination holds %zu bytes, need %zu", dst_size,
                        bytes);
  if (bytes == 0) return QV_OK;
  QvPool *pool = dense_pool(threads, t->nnz, bytes);
  DenseJob z = {.dst = dst, .bytes = bytes, .parts = 1};
  if (pool != NULL && bytes >= SP_MIN_THREADED_ZERO) z.parts = qvi_pool_threads(pool);
  qvi_pool_run(z.parts > 1 ? pool : NULL, (size_t)z.parts, dense_zero_part, &z);
  st = scatter(t, dst, pool, error);
  qvi_pool_free(pool);
  return st;
}

QvStatus qv_sparse_to_dense(const QvSparseTensor *t, const QvSparseOptions *options, QvTensor *out,
                            QvError *error) {
  if (out == NULL) return qv_error_set(error, QV_EARG, "sparse to dense: out is NULL");
  memset(out, 0, sizeof *out);
  int threads;
  int64_t size;
  QvStatus st = dense_start(t, options, &threads, &size, error);
  if (st != QV_OK) return st;
  void *dst;
  st = qv_tensor_alloc(out, t->value_type, t->ndim, t->shape, t->dim_names, false, &dst, error);
  if (st != QV_OK) return st;
  if (qv_tensor_n_elements(out) == 0) return QV_OK;
  /* the new tensor owns its zero-filled buffer: scatter into it */
  QvPool *pool = dense_pool(threads, t->nnz, 0);
  st = scatter(t, dst, pool, error);
  qvi_pool_free(pool);
  if (st != QV_OK) qv_tensor_reset(out);
  return st;
}
