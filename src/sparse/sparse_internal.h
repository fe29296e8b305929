/* Shared between the sparse sources: owned storage behind a QvSparseTensor,
 * the int64 "entries" working form every conversion goes through, and
 * small value helpers (zero test, duplicate sum, equality by value). */
#ifndef QUIVER_SPARSE_INTERNAL_H
#define QUIVER_SPARSE_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "quiver/sparse.h"
#include "sparse/sparse_parts.h"
#include "util/checked.h"
#include "util/load.h"
#include "util/pool.h"

#if defined(__GNUC__)
#define SP_INLINE static inline __attribute__((always_inline))
#else
#define SP_INLINE static inline
#endif

/* Everything a QvSparseTensor points at that it owns: shape, names, CSF
 * pointer arrays and the buffers made by conversions. */
#define SP_MAX_OWNED (2 * QV_TENSOR_MAX_NDIM + 4)
typedef struct SpStore {
  int64_t shape[QV_TENSOR_MAX_NDIM];
  const char *names[QV_TENSOR_MAX_NDIM];
  char *name_block;
  int32_t axis_order[QV_TENSOR_MAX_NDIM];
  const uint8_t *csf_indptr[QV_TENSOR_MAX_NDIM];
  int64_t csf_indptr_len[QV_TENSOR_MAX_NDIM];
  const uint8_t *csf_indices[QV_TENSOR_MAX_NDIM];
  int64_t csf_indices_len[QV_TENSOR_MAX_NDIM];
  void *owned[SP_MAX_OWNED];
  int n_owned;
  /* sparse_seal.c: the tensor as a reader validated it, and its shape */
  bool sealed;
  QvSparseTensor seal;
  int64_t seal_shape[QV_TENSOR_MAX_NDIM];
} SpStore;

/* qv_sparse_validate; with coords false the coordinates of a non-canonical
 * COO are not range-checked (the caller does it in its own first pass). */
QvStatus qvi_sp_validate(const QvSparseTensor *t, bool coords, QvError *error);
/* qv_sparse_validate, except that the indices within a CSR row (CSC
 * column) may come in any order and repeat (what qv_sparse_canonicalize
 * accepts); every other rule, the range of each index included, holds. */
QvStatus qvi_sp_validate_any_order(const QvSparseTensor *t, QvError *error);

/* Address space for n * size bytes whose pages are committed only when
 * written (large sizes on Linux); shrink with qvi_sp_realloc. NULL when not
 * available: grow with qvi_sp_realloc instead. */
void *qvi_sp_reserve(int64_t n, size_t size);
/* Faults in [off, off + len) of a large buffer freshly mapped now (Linux
 * MADV_POPULATE_WRITE): true when done; false for a heap buffer, one a
 * workspace served again (its pages are there) or an older kernel (pages
 * then fault on first write, as always). */
bool qvi_sp_populate(void *p, size_t off, size_t len);
/* Thread t of T faults in its part of each of the n fresh buffers buf[k]
 * of bytes[k] (qvi_sp_populate), parts owning whole huge pages so that no
 * two threads first-write one: true when any part was populated. */
bool qvi_sp_populate_parts(void *const *buf, const size_t *bytes, int n, int t, int T);
/* Makes ws (may be NULL) the workspace of the buffers this thread obtains
 * until qvi_sp_ws_leave(returned value); freeing a buffer always follows its
 * own workspace, whatever the thread's. */
QvSparseWorkspace *qvi_sp_ws_enter(QvSparseWorkspace *ws);
void qvi_sp_ws_leave(QvSparseWorkspace *prev);
/* Likewise the pool (QvSparseOptions.threads; NULL: one thread) the
 * kernels of the conversion running on this thread may split work on. All
 * buffers are still obtained on the calling thread. */
QvPool *qvi_sp_pool_enter(QvPool *pool);
void qvi_sp_pool_leave(QvPool *prev);
QvPool *qvi_sp_pool_current(void);
/* Inputs below this many entries convert on one thread whatever the
 * threads option says (thread start-up would cost more than it saves). */
#define SP_MIN_THREADED_NNZ (1 << 18)
/* Bytes of a caller's dense buffer worth zeroing on several threads. */
#define SP_MIN_THREADED_ZERO ((size_t)8 << 20)
/* Loads QvSparseOptions (NULL = defaults) and checks its thread count. */
QvStatus qvi_sp_load_options(const QvSparseOptions *options, QvSparseOptions *opts, int *threads,
                             QvError *error);

bool qvi_sp_is_index_type(QvArrowType t);
/* Entry i of an index buffer (an integer type; the type is a constant
 * after inlining). uint64 values above INT64_MAX load negative. */
SP_INLINE int64_t qvi_sp_index_ld(const uint8_t *buf, QvArrowType type, int64_t i) {
  switch (type) {
    case QV_ARROW_INT8: return qvi_ld_i8(buf + i);
    case QV_ARROW_UINT8: return buf[i];
    case QV_ARROW_INT16: return qvi_ld_i16(buf + i * 2);
    case QV_ARROW_UINT16: return qvi_ld_u16(buf + i * 2);
    case QV_ARROW_INT32: return qvi_ld_i32(buf + i * 4);
    case QV_ARROW_UINT32: return qvi_ld_u32(buf + i * 4);
    default: return qvi_ld_i64(buf + i * 8);
  }
}
/* Largest value an index type holds (uint64 capped at INT64_MAX). */
int64_t qvi_sp_index_max(QvArrowType t);

/* The portable dense scan: appends the non-zeros of len values (byte
 * stride `stride`): index c0 + j to ci[k * cs] (int64 when `wide`, else
 * uint32) and the value bits to vals[k]. Every element is written to slot
 * k and k advances only for non-zeros (no branch on the data), so the
 * caller reserves len slots. Blocks of 8 that are all zero are skipped
 * after one OR. Inlined with constant wide/cs/vs at each call site. */
SP_INLINE void sp_scan_put_index(void *ci, bool wide, int64_t at, int64_t index) {
  if (wide)
    ((int64_t *)ci)[at] = index;
  else
    ((uint32_t *)ci)[at] = (uint32_t)index;
}

SP_INLINE int64_t sp_scan_line(const uint8_t *p, int64_t len, int64_t stride, int64_t c0, void *ci, bool wide,
                               int64_t cs, uint8_t *vals, size_t vs, uint64_t mask) {
  int64_t k = 0, j = 0;
  for (; j + 8 <= len; j += 8) {
    const uint8_t *b = p + j * stride;
    uint64_t v[8];
    for (int u = 0; u < 8; u++) v[u] = qvi_ld_bits(b + u * stride, vs);
    if ((((v[0] | v[1]) | (v[2] | v[3])) | ((v[4] | v[5]) | (v[6] | v[7]))) & mask) {
      for (int u = 0; u < 8; u++) {
        sp_scan_put_index(ci, wide, k * cs, c0 + j + u);
        qvi_st_bits(vals + (size_t)k * vs, vs, v[u]);
        k += (v[u] & mask) != 0;
      }
    }
  }
  for (; j < len; j++) {
    uint64_t v = qvi_ld_bits(p + j * stride, vs);
    sp_scan_put_index(ci, wide, k * cs, c0 + j);
    qvi_st_bits(vals + (size_t)k * vs, vs, v);
    k += (v & mask) != 0;
  }
  return k;
}

/* Zero by value is one mask test on the raw bits: integers are zero when all
 * bits are, floats when all bits but the sign are (+0.0 and -0.0; NaN and
 * infinities have exponent bits set). */
uint64_t qvi_sp_zero_mask(QvArrowType type);
/* dst += src in the value type (integers wrap as in NumPy/SciPy). */
void qvi_sp_value_add(QvArrowType type, uint8_t *dst, const uint8_t *src);
/* Equality by value: -0.0 == 0.0, NaN == NaN. */
bool qvi_sp_value_equal(QvArrowType type, const uint8_t *a, const uint8_t *b);

/* The working form: n entries with row-major int64 coordinates (n x ndim)
 * and n contiguous values; buffers are owned or borrowed. `order` records a
 * lexicographic order the entries are known to be sorted by. */
typedef struct SpEntries {
  int32_t ndim;
  const int64_t *shape;
  QvArrowType vtype;
  size_t vsize;
  int64_t n;
  int64_t *coords;
  uint8_t *values;
  bool own_coords;
  bool own_values;
  bool sorted;  /* sorted by order[0..ndim-1] */
  bool unique;  /* no two entries share coordinates */
  int32_t order[QV_TENSOR_MAX_NDIM];
} SpEntries;

void qvi_sp_entries_free(SpEntries *e);
/* An int64 view of n entries of an index buffer: the buffer itself when it
 * is an aligned int64/uint64 one (*owned = NULL), else a widened copy the
 * caller frees. Values must be validated (uint64 ones fit int64). */
QvStatus qvi_sp_int64_view(const uint8_t *src, QvArrowType type, int64_t n, const int64_t **out,
                       int64_t **owned, QvError *error);
/* Loads a validated sparse tensor (borrowing what it can). */
QvStatus qvi_sp_entries_from_sparse(const QvSparseTensor *t, SpEntries *e, QvError *error);
/* Stable sort by the dims key[0..ndim-1] (most significant first), then sums
 * duplicate coordinates. LSD counting sorts of a permutation, one pass per
 * dim whose extent is at most max(n, 65536), else 16-bit digit passes;
 * passes the current order already covers are skipped. */
QvStatus qvi_sp_entries_sort(SpEntries *e, const int32_t *key, QvError *error);
/* Builds the output tensor from entries (consumes what e owns). `out` must
 * have been started with qvi_sp_begin. axis_order only for CSF. */
QvStatus qvi_sp_build(SpEntries *e, QvSparseTensor *out, QvArrowType index_type,
                  const int32_t *axis_order, QvError *error);
/* Index buffer of the output type from n int64 values src[i * stride]; the
 * owned dense int64 source itself when the type is 64-bit (*took). NULL
 * on allocation failure. Values must fit (see qvi_sp_first_too_big). */
uint8_t *qvi_sp_narrow(int64_t *src, bool src_owned, int64_t n, int64_t stride, QvArrowType type,
                   bool *took);
/* First i with src[i * stride] > max, or -1. */
int64_t qvi_sp_first_too_big(const int64_t *src, int64_t n, int64_t stride, int64_t max);
/* "<what>: value V <where> does not fit index type T (max M)". */
QvStatus qvi_sp_fit_error(QvError *error, const char *what, int64_t value, const char *where,
                      QvArrowType type);
/* Completes a CSR/CSC output (format and shape already in *out) from owned
 * int64 indptr/indices and a values buffer: fit checks, narrowing, store.
 * Takes the three buffers in every case. */
QvStatus qvi_sp_finish_csx(QvSparseTensor *out, int64_t *ptr, int64_t *idx, uint8_t *vals, int64_t nnz,
                       QvArrowType itype, QvError *error);
/* Groups entries by key into CSX arrays: ptr (nkeys + 1 entries, zeroed
 * by the caller) becomes the indptr, idx/val (room for n entries) the
 * minor indices and values. From COO pairs (key = coords[2i + M]) rows are
 * then sorted and duplicates summed: returns the final nnz (`in_order`:
 * the pairs are known sorted by key, minor, unique). From CSX arrays (a
 * transpose: key = sidx[k], minor = source row) the output is sorted
 * already: returns n. -1 on allocation failure; -2 (COO pairs) when a key
 * is outside [0, nkeys) or a minor outside [0, nminor), found before
 * anything is written. */
int64_t qvi_sp_group_coo(const int64_t *coords, const uint8_t *values, int64_t n, int M, int64_t nkeys,
                     int64_t nminor, size_t vs, QvArrowType vtype, bool in_order, int64_t *ptr,
                     int64_t *idx, uint8_t *val);
/* Sorts the indices within each of the nmajor segments of CSX arrays
 * (ptr: nmajor + 1 entries) stably and sums repeated ones in entry order
 * (qvi_sp_value_add; zero sums are kept), compacting in place as SciPy's
 * sum_duplicates does; rewrites ptr. Large inputs split the segments across
 * qvi_sp_pool_current()'s threads, with the same result. Returns the new
 * nnz, -1 on allocation failure. */
int64_t qvi_sp_csx_sum_rows(int64_t *ptr, int64_t nmajor, int64_t *idx, uint8_t *val,
                            QvArrowType vtype);
int64_t qvi_sp_group_csx(const int64_t *sptr, const int64_t *sidx, const uint8_t *values, int64_t nsrc,
                     int64_t nkeys, size_t vs, bool counted, int64_t *ptr, int64_t *idx, uint8_t *val);
/* CSR <-> CSC with a counting sort on the minor index: output indices come
 * out sorted within each new major (old major order). The new indptr
 * (nminor + 1 entries) is *optr when `counts` is NULL, else `counts` itself
 * (qvi_sp_calloc'd, counts[m + 1] = entries with minor m; taken over). Buffers
 * are new and owned by the caller. */
QvStatus qvi_sp_csx_transpose(const int64_t *ptr, const int64_t *idx, const uint8_t *vals, size_t vs,
                          int64_t nmajor, int64_t nminor, int64_t *counts, int64_t **optr,
                          int64_t **oidx, uint8_t **ovals, QvError *error);

/* ---- the 2-D pipeline (sparse_csx.c): any 2-D input -> CSX arrays of the
 * orientation an output needs -> the output. */
typedef struct SpCsx {
  int M; /* major dim: 0 = rows (CSR order), 1 = columns (CSC order) */
  int64_t nmajor, nminor, nnz;
  const int64_t *ptr, *idx; /* nmajor + 1 and nnz entries */
  const uint8_t *vals;
  int64_t *own_ptr, *own_idx; /* storage behind the views when owned */
  uint8_t *own_vals;
  QvArrowType vtype;
  size_t vs;
} SpCsx;
void qvi_sp_csx_free(SpCsx *c);
/* Points a CSF tensor's level arrays at its store (filled by the caller). */
void qvi_sp_point_csf(QvSparseTensor *t);
/* Fills *c with arrays it owns from now on (nmajor + 1, nnz and nnz entries). */
static inline void qvi_sp_csx_own(SpCsx *c, int M, int64_t nmajor, int64_t nminor, int64_t nnz,
                                 QvArrowType vtype, int64_t *ptr, int64_t *idx, uint8_t *vals) {
  c->M = M;
  c->nmajor = nmajor;
  c->nminor = nminor;
  c->nnz = nnz;
  c->vtype = vtype;
  c->vs = qv_arrow_type_size(vtype);
  c->ptr = c->own_ptr = ptr;
  c->idx = c->own_idx = idx;
  c->vals = c->own_vals = vals;
}
/* The one body of qv_sparse_from_dense and qv_sparse_convert once their
 * input is checked: options, the output's header, then 2-D through CSX
 * arrays (`pipeline`) or anything through the entries working form. The
 * input is `dense` or `sparse` (the other NULL). */
QvStatus qvi_sp_produce(const QvTensor *dense, const QvSparseTensor *sparse, bool pipeline,
                       QvSparseFormat format, const QvSparseOptions *options, QvSparseTensor *out,
                       QvError *error);
/* Transposes to the other orientation; `counts` as in qvi_sp_csx_transpose. */
QvStatus qvi_sp_csx_flip(SpCsx *c, int64_t *counts, QvError *error);
/* Orientation an output format needs (CSF: its first axis). */
int qvi_sp_csx_orientation(QvSparseFormat format, const int32_t *axis);
QvStatus qvi_sp_csx_from_sparse(const QvSparseTensor *t, int M, SpCsx *c, QvError *error);
QvStatus qvi_sp_csx_from_dense(const QvTensor *d, int M, SpCsx *c, QvError *error);
/* Builds *out (started with qvi_sp_begin, format set; CSF axis order = the
 * orientation) taking what c owns. */
QvStatus qvi_sp_csx_emit(SpCsx *c, QvSparseTensor *out, QvArrowType itype, QvError *error);

/* Checks conversion options for a target format and ndim; index type
 * (default int64) and CSF axis order (NULL: identity). */
QvStatus qvi_sp_options(const QvSparseOptions *o, QvSparseFormat format, int32_t ndim,
                    QvArrowType *itype, const int32_t **axis, QvSparseWorkspace **ws,
                    int *threads, QvError *error);

/* Dense scan (sparse_dense.c): entries in the dense tensor's memory order. */
QvStatus qvi_sp_entries_from_dense(const QvTensor *dense, SpEntries *e, QvError *error);

/* Dense -> CSX whose majors run across the dense memory order: the dense
 * is read as lines indexed by dim sm (running along the other dim, the one
 * of smaller stride), the output majors are that other dim. Row-major ->
 * CSC, column-major -> CSR (sparse_dense_csc.c). */
QvStatus qvi_sp_csx_from_dense_across(const QvTensor *d, int sm, SpCsx *c, QvError *error);

/* Vector scans of a contiguous line of len values of vs bytes (sparse_dense_scan.c):
 * the non-zeros' indices c0 + j go to ci[k] and their value bits to
 * vals[k], k = 0, 1, ...; returns their count. Any of the len slots of ci
 * and vals may be written. -1 when no vector kernel serves vs on this CPU
 * (the caller scans with scalar code). */
int64_t qvi_sp_scan_vec_u32(const uint8_t *p, int64_t len, size_t vs, uint64_t mask, uint32_t c0, uint32_t *ci,
                        uint8_t *vals);
int64_t qvi_sp_scan_vec_i64(const uint8_t *p, int64_t len, size_t vs, uint64_t mask, int64_t c0, int64_t *ci,
                        uint8_t *vals);

#endif
