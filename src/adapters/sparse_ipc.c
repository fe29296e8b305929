/* Sparse tensors as Arrow IPC SparseTensor messages: readers and writer. */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adapters/tensor_message.h"
#include "adapters/value_type_arrow.h"
#include "ipc/reader_internal.h"
#include "ipc/source_internal.h"
#include "sparse/sparse_seal.h"
#include "util/checked.h"
#include "util/cpu.h"
#include "util/options.h"
#include "quiver/sparse_ipc.h"

/* Every buffer starts at a multiple of this within the body, and the body
 * is padded to it, so consecutive messages keep 64-byte aligned buffers. */
#define BODY_ALIGN QV_TENSOR_BODY_ALIGN

/* ---- reading */

static void free_aligned(void *p) { qv_free(p); }

static QvStatus index_type_from_int(const QvIntType *it, const char *where, QvArrowType *out,
                                    QvError *error) {
  switch (it->bit_width) {
    case 8: *out = it->is_signed ? QV_ARROW_INT8 : QV_ARROW_UINT8; return QV_OK;
    case 16: *out = it->is_signed ? QV_ARROW_INT16 : QV_ARROW_UINT16; return QV_OK;
    case 32: *out = it->is_signed ? QV_ARROW_INT32 : QV_ARROW_UINT32; return QV_OK;
    case 64: *out = it->is_signed ? QV_ARROW_INT64 : QV_ARROW_UINT64; return QV_OK;
    default:
      return qv_error_set(error, QV_EINVAL, "%s: Int bit width %d is not 8, 16, 32 or 64", where,
                          (int)it->bit_width);
  }
}

static void index_type_to_int(QvArrowType t, QvIntType *out) {
  out->bit_width = (int32_t)qv_arrow_type_size(t) * 8;
  out->is_signed = t <= QV_ARROW_INT64;
}

/* One buffer of the body as the reader uses it: where it starts and how
 * many bytes the tensor reads from it. */
typedef struct Span {
  int64_t offset;
  int64_t need;
  size_t align; /* element size */
} Span;

/* The declared Buffer must lie inside the body and hold `need` bytes. */
static QvStatus check_buffer(const char *what, QvBuffer b, int64_t need, int64_t body_len,
                             QvError *error) {
  if (b.offset < 0 || b.length < 0 || b.offset > body_len || b.length > body_len - b.offset)
    return qv_error_set(error, QV_EINVAL,
                        "%s (offset %" PRId64 ", length %" PRId64
                        ") extends past the body of %" PRId64 " bytes",
                        what, b.offset, b.length, body_len);
  if (b.length < need)
    return qv_error_set(error, QV_EINVAL,
                        "%s holds %" PRId64 " bytes but the tensor needs %" PRId64, what, b.length,
                        need);
  return QV_OK;
}

/* Byte count of n entries of width w, with a message naming `what`. */
static QvStatus entry_bytes(const char *what, int64_t n, size_t w, int64_t *out, QvError *error) {
  if (!qvi_mul_i64(n, (int64_t)w, out))
    return qv_error_set(error, QV_EINVAL, "%s: %" PRId64 " entries of %zu bytes overflow int64",
                        what, n, w);
  return QV_OK;
}

typedef struct Decoded {
  QvSparseFormat format;
  QvArrowType vtype, itype, ptype;
  int32_t ndim;
  int64_t shape[QV_TENSOR_MAX_NDIM];
  const char *names[QV_TENSOR_MAX_NDIM];
  bool named;
  int64_t nnz;
  /* COO */
  int64_t coo_strides[2];
  /* CSF counts */
  int64_t indptr_len[QV_TENSOR_MAX_NDIM];
  int64_t indices_len[QV_TENSOR_MAX_NDIM];
  QvCsfLengths csf_lengths;
  /* buffers: [0] data, then COO indices / CSX indptr, indices / CSF indptr..., indices... */
  Span span[2 * QV_TENSOR_MAX_NDIM + 1];
  int nspan;
} Decoded;

static QvStatus decode_coo(const QvSparseTensorMeta *m, int64_t blen, Decoded *d,
                           QvError *error) {
  const QvSparseCOO *c = &m->index.coo;
  QvStatus st = index_type_from_int(&c->indices_type, "SparseTensorIndexCOO.indicesType", &d->itype,
                                    error);
  if (st) return st;
  d->format = QV_SPARSE_COO;
  d->ptype = d->itype;
  int64_t w = (int64_t)qv_arrow_type_size(d->itype);
  if (c->n_indices_strides != 0 && c->n_indices_strides != 2)
    return qv_error_set(error, QV_EINVAL,
                        "SparseTensorIndexCOO.indicesStrides has %" PRId64
                        " entries; the indices matrix (nnz x ndim) needs 2",
                        c->n_indices_strides);
  if (c->n_indices_strides == 2) {
    d->coo_strides[0] = c->indices_strides[0];
    d->coo_strides[1] = c->indices_strides[1];
  } else {
    d->coo_strides[0] = (int64_t)d->ndim * w;
    d->coo_strides[1] = w;
  }
  int64_t need = 0;
  if (d->nnz > 0) {
    int64_t s0 = d->coo_strides[0], s1 = d->coo_strides[1], last, span;
    if (s0 < 0 || s1 < 0)
      return qv_error_set(error, QV_EINVAL,
                          "SparseTensorIndexCOO.indicesStrides [%" PRId64 ", %" PRId64
                          "] has a negative entry",
                          s0, s1);
    if (!qvi_mul_i64(d->nnz - 1, s0, &last) || !qvi_mul_i64(d->ndim - 1, s1, &span) ||
        __builtin_add_overflow(last, span, &need) || __builtin_add_overflow(need, w, &need))
      return qv_error_set(error, QV_EINVAL,
                          "SparseTensorIndexCOO: %" PRId64 " x %d indices with strides [%" PRId64
                          ", %" PRId64 "] overflow int64 byte offsets",
                          d->nnz, (int)d->ndim, s0, s1);
  }
  st = check_buffer("SparseTensorIndexCOO.indicesBuffer", c->indices_buffer, need, blen, error);
  if (st) return st;
  d->span[d->nspan++] = (Span){c->indices_buffer.offset, need, (size_t)w};
  return QV_OK;
}

static QvStatus decode_csx(const QvSparseTensorMeta *m, int64_t blen, Decoded *d,
                           QvError *error) {
  const QvSparseCSX *c = &m->index.csx;
  bool csr = m->format == QV_SPARSE_CSR;
  d->format = m->format;
  if (d->ndim != 2)
    return qv_error_set(error, QV_EINVAL,
                        "SparseMatrixIndexCSX (%s) needs a 2-D shape, the tensor has %d dimensions",
                        csr ? "CSR" : "CSC", (int)d->ndim);
  QvStatus st =
      index_type_from_int(&c->indptr_type, "SparseMatrixIndexCSX.indptrType", &d->ptype, error);
  if (st) return st;
  st = index_type_from_int(&c->indices_type, "SparseMatrixIndexCSX.indicesType", &d->itype, error);
  if (st) return st;
  int64_t major = d->shape[csr ? 0 : 1];
  if (major == INT64_MAX)
    return qv_error_set(error, QV_EINVAL, "SparseTensor.shape: %" PRId64 " %s is too many", major,
                        csr ? "rows" : "columns");
  int64_t need = 0;
  size_t pw = qv_arrow_type_size(d->ptype), iw = qv_arrow_type_size(d->itype);
  if ((st = entry_bytes("SparseMatrixIndexCSX.indptrBuffer", major + 1, pw, &need, error)))
    return st;
  st = check_buffer("SparseMatrixIndexCSX.indptrBuffer", c->indptr_buffer, need, blen, error);
  if (st) return st;
  d->span[d->nspan++] = (Span){c->indptr_buffer.offset, need, pw};
  if ((st = entry_bytes("SparseMatrixIndexCSX.indicesBuffer", d->nnz, iw, &need, error)))
    return st;
  st = check_buffer("SparseMatrixIndexCSX.indicesBuffer", c->indices_buffer, need, blen, error);
  if (st) return st;
  d->span[d->nspan++] = (Span){c->indices_buffer.offset, need, iw};
  return QV_OK;
}

/* CSF: lengths are element counts (Arrow C++) or bytes; the last level's
 * indices, which hold exactly nnz values, tell which. In the element
 * convention the declared length is no byte count, so the bounds check is
 * on offset + count * width against the body. */
static QvStatus csf_level(const char *what, QvBuffer b, int64_t count, size_t w, bool bytes,
                          int64_t blen, Span *span, QvError *error) {
  int64_t need = 0;
  QvStatus st = entry_bytes(what, count, w, &need, error);
  if (st) return st;
  if (bytes) {
    st = check_buffer(what, b, need, blen, error);
    if (st) return st;
  } else if (b.offset < 0 || b.offset > blen || need > blen - b.offset) {
    return qv_error_set(error, QV_EINVAL,
                        "%s (offset %" PRId64 ", %" PRId64 " entries of %zu bytes) extends past "
                        "the body of %" PRId64 " bytes",
                        what, b.offset, count, w, blen);
  }
  *span = (Span){b.offset, need, w};
  return QV_OK;
}

/* Whether the CSF lengths, read with these widths (1, 1: element counts),
 * give every indptr one entry more than its level's indices. */
static bool csf_counts_fit(const QvSparseCSF *c, int32_t n, size_t iw, size_t pw) {
  for (int32_t l = 0; l + 1 < n; l++) {
    int64_t il = c->indices_buffers[l].length, pl = c->indptr_buffers[l].length;
    if (il % (int64_t)iw != 0 || pl % (int64_t)pw != 0) return false;
    if (pl / (int64_t)pw != il / (int64_t)iw + 1) return false;
  }
  return true;
}

/* The `count` buffers of one CSF list (indicesBuffers or indptrBuffers):
 * entry counts into lens[], checked spans appended to d. */
static QvStatus csf_levels(const char *list, const char *width_name, const QvBuffer *bufs,
                           int32_t count, size_t w, bool bytes, int64_t blen, int64_t *lens,
                           Decoded *d, QvError *error) {
  char what[64];
  for (int32_t l = 0; l < count; l++) {
    int64_t len = bufs[l].length;
    snprintf(what, sizeof what, "SparseTensorIndexCSF.%s[%d]", list, (int)l);
    if (bytes && len % (int64_t)w != 0)
      return qv_error_set(error, QV_EINVAL,
                          "%s.length %" PRId64 " is not a multiple of the %s width %zu", what,
                          len, width_name, w);
    lens[l] = bytes ? len / (int64_t)w : len;
    QvStatus st = csf_level(what, bufs[l], lens[l], w, bytes, blen, &d->span[d->nspan++], error);
    if (st) return st;
  }
  return QV_OK;
}

static QvStatus decode_csf(const QvSparseTensorMeta *m, int64_t blen, Decoded *d,
                           QvError *error) {
  const QvSparseCSF *c = &m->index.csf;
  d->format = QV_SPARSE_CSF;
  QvStatus st =
      index_type_from_int(&c->indptr_type, "SparseTensorIndexCSF.indptrType", &d->ptype, error);
  if (st) return st;
  st = index_type_from_int(&c->indices_type, "SparseTensorIndexCSF.indicesType", &d->itype, error);
  if (st) return st;
  int32_t n = d->ndim;
  if (c->n_indptr_buffers != n - 1)
    return qv_error_set(error, QV_EINVAL,
                        "SparseTensorIndexCSF.indptrBuffers has %" PRId64
                        " buffers, expected %d (ndim - 1)",
                        c->n_indptr_buffers, (int)(n - 1));
  if (c->n_indices_buffers != n)
    return qv_error_set(error, QV_EINVAL,
                        "SparseTensorIndexCSF.indicesBuffers has %" PRId64
                        " buffers, expected %d (ndim)",
                        c->n_indices_buffers, (int)n);
  if (c->n_axis_order != n)
    return qv_error_set(error, QV_EINVAL,
                        "SparseTensorIndexCSF.axisOrder has %" PRId64 " entries, expected %d (ndim)",
                        c->n_axis_order, (int)n);
  size_t pw = qv_arrow_type_size(d->ptype), iw = qv_arrow_type_size(d->itype);
  int64_t last = c->indices_buffers[n - 1].length, nnz_bytes = 0;
  bool by_elements = last == d->nnz;
  bool bytes_ok = qvi_mul_i64(d->nnz, (int64_t)iw, &nnz_bytes);
  bool by_bytes = bytes_ok && last == nnz_bytes;
  if (!by_elements && !by_bytes)
    return qv_error_set(error, QV_EINVAL,
                        "SparseTensorIndexCSF.indicesBuffers[%d].length %" PRId64
                        " fits neither convention: the last level holds non_zero_length = %" PRId64
                        " indices (length %" PRId64 " as an element count, %" PRId64 " in bytes)",
                        (int)(n - 1), last, d->nnz, d->nnz, bytes_ok ? nnz_bytes : -1);
  /* Both fit when the indices are 8-bit (or nnz is 0): the indptr lengths,
   * one more entry than their level's indices, decide; elements when they
   * fit both too (then both conventions are the same bytes). */
  bool bytes = by_bytes && !by_elements;
  if (by_elements && by_bytes && !csf_counts_fit(c, n, 1, 1)) bytes = csf_counts_fit(c, n, iw, pw);
  d->csf_lengths = bytes ? QV_CSF_LENGTHS_BYTES : QV_CSF_LENGTHS_ELEMENTS;
  /* indices of every level, then indptr of all but the last: span order */
  if ((st = csf_levels("indicesBuffers", "index", c->indices_buffers, n, iw, bytes, blen,
                       d->indices_len, d, error)))
    return st;
  return csf_levels("indptrBuffers", "indptr", c->indptr_buffers, n - 1, pw, bytes, blen,
                    d->indptr_len, d, error);
}

QvStatus qv_sparse_from_message(const QvIpcMessage *msg, QvSparseTensor *out,
                                QvCsfLengths *csf_lengths, QvError *error) {
  if (csf_lengths) *csf_lengths = QV_CSF_LENGTHS_ELEMENTS;
  if (out == NULL || msg == NULL) return qv_error_set(error, QV_EARG, "NULL argument");
  memset(out, 0, sizeof *out);
  if (msg->message.header_type != QV_HEADER_SPARSE_TENSOR)
    return qv_error_set(error, QV_EINVAL, "message is a %s, not a SparseTensor",
                        qv_header_type_name(msg->message.header_type));
  const QvSparseTensorMeta *m = &msg->message.header.sparse_tensor;
  QvStatus vst = qvi_metadata_version_check(msg->message.version, "SparseTensor message", error);
  if (vst) return vst;
  Decoded *d = calloc(1, sizeof *d);
  if (d == NULL) return qv_error_set(error, QV_ENOMEM, "out of memory");
  QvStatus st = qvi_value_type_from_arrow(&m->type, &d->vtype, error);
  if (st) {
    qv_error_prefix(error, "SparseTensor.type");
    goto done;
  }
  if (m->ndim < 1) {
    st = qv_error_set(error, QV_EINVAL,
                      "SparseTensor.shape is empty: a sparse tensor needs at least one dimension");
    goto done;
  }
  if (m->ndim > QV_TENSOR_MAX_NDIM) {
    st = qv_error_set(error, QV_ELIMIT,
                      "SparseTensor.shape: %" PRId64 " dimensions exceed the limit of %d", m->ndim,
                      QV_TENSOR_MAX_NDIM);
    goto done;
  }
  d->ndim = (int32_t)m->ndim;
  for (int32_t i = 0; i < d->ndim; i++) {
    d->shape[i] = m->shape[i].size;
    if (d->shape[i] < 0) {
      st = qv_error_set(error, QV_EINVAL, "SparseTensor.shape[%d].size %" PRId64 " is negative",
                        (int)i, d->shape[i]);
      goto done;
    }
    const char *name = m->shape[i].name;
    if (name != NULL && m->shape[i].name_len > 0) {
      if (memchr(name, '\0', m->shape[i].name_len) != NULL) {
        st = qv_error_set(error, QV_EINVAL, "SparseTensor.shape[%d].name contains a NUL byte",
                          (int)i);
        goto done;
      }
      d->named = true;
      d->names[i] = name;
    } else {
      d->names[i] = "";
    }
  }
  d->nnz = m->non_zero_length;
  int64_t blen = msg->body_length;
  size_t vw = qv_arrow_type_size(d->vtype);
  int64_t need = 0;
  if ((st = entry_bytes("SparseTensor.data", d->nnz, vw, &need, error))) goto done;
  if ((st = check_buffer("SparseTensor.data", m->data, need, blen, error))) goto done;
  d->span[d->nspan++] = (Span){m->data.offset, need, vw};
  switch (m->format) {
    case QV_SPARSE_COO: st = decode_coo(m, blen, d, error); break;
    case QV_SPARSE_CSR:
    case QV_SPARSE_CSC: st = decode_csx(m, blen, d, error); break;
    case QV_SPARSE_CSF: st = decode_csf(m, blen, d, error); break;
    default:
      st = qv_error_set(error, QV_EINVAL, "SparseTensor.sparseIndex: unknown format %d",
                        (int)m->format);
      break;
  }
  if (st) goto done;

  static _Alignas(BODY_ALIGN) const uint8_t no_bytes[BODY_ALIGN];
  const uint8_t *base = msg->body != NULL ? msg->body : no_bytes;
  QvOwner *owner = msg->owner, *copy_owner = NULL;
  const uint8_t *ptr[2 * QV_TENSOR_MAX_NDIM + 1];
  bool misaligned = false;
  int64_t packed = 0; /* bytes of an aligned copy of every span */
  for (int i = 0; i < d->nspan; i++) {
    ptr[i] = base + d->span[i].offset;
    if (d->span[i].need > 0 && (uintptr_t)ptr[i] % d->span[i].align != 0) misaligned = true;
    packed += (d->span[i].need + BODY_ALIGN - 1) / BODY_ALIGN * BODY_ALIGN; /* each <= body */
  }
  if (misaligned) {
    /* Only hand-made inputs get here: each buffer is copied to an aligned
     * place, so typed access through the tensor's pointers stays valid. */
    uint8_t *copy = qv_aligned_alloc(packed > 0 ? (size_t)packed : 1);
    if (copy == NULL) {
      st = qv_error_set(error, QV_ENOMEM, "out of memory copying a sparse tensor body");
      goto done;
    }
    copy_owner = qv_owner_new(free_aligned, copy);
    if (copy_owner == NULL) {
      qv_free(copy);
      st = qv_error_set(error, QV_ENOMEM, "out of memory");
      goto done;
    }
    int64_t at = 0;
    for (int i = 0; i < d->nspan; i++) {
      if (d->span[i].need > 0) memcpy(copy + at, ptr[i], (size_t)d->span[i].need);
      ptr[i] = copy + at;
      at += (d->span[i].need + BODY_ALIGN - 1) / BODY_ALIGN * BODY_ALIGN;
    }
    owner = copy_owner;
  }
  const char *const *names = d->named ? d->names : NULL;
  const uint8_t *values = ptr[0];
  switch (d->format) {
    case QV_SPARSE_COO:
      st = qv_sparse_init(out, &(QvSparseDesc){.format = QV_SPARSE_COO, .value_type = d->vtype,
                                               .index_type = d->itype, .ndim = d->ndim,
                                               .shape = d->shape, .dim_names = names, .nnz = d->nnz,
                                               .coords = ptr[1], .coords_strides = d->coo_strides,
                                               .is_canonical = m->index.coo.is_canonical,
                                               .values = values, .owner = owner}, error);
      break;
    case QV_SPARSE_CSR:
    case QV_SPARSE_CSC:
      st = qv_sparse_init(out, &(QvSparseDesc){.ndim = 2, .format = d->format,
                                               .value_type = d->vtype, .indptr_type = d->ptype,
                                               .index_type = d->itype, .shape = d->shape,
                                               .dim_names = names, .nnz = d->nnz, .indptr = ptr[1],
                                               .indices = ptr[2], .values = values,
                                               .owner = owner}, error);
      break;
    default: {
      /* spans: data, indices[0..ndim-1], indptr[0..ndim-2] */
      const void *indptr[QV_TENSOR_MAX_NDIM], *indices[QV_TENSOR_MAX_NDIM];
      for (int32_t l = 0; l < d->ndim; l++) {
        indices[l] = ptr[1 + l];
        if (l + 1 < d->ndim) indptr[l] = ptr[1 + d->ndim + l];
      }
      st = qv_sparse_init(out, &(QvSparseDesc){.format = QV_SPARSE_CSF, .value_type = d->vtype,
                                               .indptr_type = d->ptype, .index_type = d->itype,
                                               .ndim = d->ndim, .shape = d->shape,
                                               .dim_names = names,
                                               .axis_order = m->index.csf.axis_order, .nnz = d->nnz,
                                               .csf_indptr = indptr,
                                               .csf_indptr_len = d->indptr_len,
                                               .csf_indices = indices,
                                               .csf_indices_len = d->indices_len, .values = values,
                                               .owner = owner}, error);
      break;
    }
  }
  qv_owner_free(copy_owner); /* the tensor holds its own reference */
  if (st == QV_OK && csf_lengths) *csf_lengths = d->csf_lengths;
done:
  free(d);
  return st;
}

QvStatus qv_sparse_read(QvSource *source, int64_t index, const QvSparseReadOptions *options,
                        QvSparseTensor *out, QvError *error) {
  if (out == NULL) return qv_error_set(error, QV_EARG, "NULL output tensor");
  memset(out, 0, sizeof *out);
  QvSparseReadOptions o;
  QvStatus st = QV_OPTIONS_LOAD(&o, options, QvSparseReadOptions, error);
  if (st) return st;
  if (source == NULL) return qv_error_set(error, QV_EARG, "NULL source");
  if (index < 0) return qv_error_set(error, QV_EARG, "negative message index %" PRId64, index);
  QvIpcMessage msg;
  st = qvi_ipc_source_nth(source, index, o.ipc, &msg, error);
  if (st == QV_OK) {
    st = qv_sparse_from_message(&msg, out, NULL, error);
    if (st) qv_error_prefix(error, "message %" PRId64 " at offset %" PRId64, index, msg.offset);
    /* validated in full over bytes no caller can write (a read-only mapping
     * of a path, or the library's copy of an fd's bytes): sealed, so that
     * writing it or making it a column does not scan it again */
    else if (qv_source_kind(source) != QV_SOURCE_MEMORY)
      qvi_sp_seal(out);
    qv_ipc_message_reset(&msg);
  }
  return qvi_source_error_prefix(source, st, error);
}

/* ---- writing */

/* One buffer of the body: `len` bytes from `src` at `offset`. */
typedef struct Seg {
  const uint8_t *src;
  int64_t len;
  int64_t offset;
} Seg;

#define MAX_SEGS (2 * QV_TENSOR_MAX_NDIM + 2)

typedef struct Plan {
  uint8_t *meta; /* framed metadata, malloc'd */
  size_t meta_size;
  int64_t body_len;
  int nseg;
  Seg seg[MAX_SEGS];
  uint8_t *owned; /* a row-major copy of COO indices with other strides */
} Plan;

static void plan_free(Plan *p) {
  free(p->meta);
  qv_free(p->owned);
  memset(p, 0, sizeof *p);
}

static int64_t align_up(int64_t v) { return (v + BODY_ALIGN - 1) / BODY_ALIGN * BODY_ALIGN; }

/* Appends a segment at the next aligned offset; false when the body would
 * overflow int64. */
static bool add_seg(Plan *p, const uint8_t *src, int64_t len, QvBuffer *b) {
  int64_t off = p->body_len;
  if (len > INT64_MAX - BODY_ALIGN - off) return false;
  p->seg[p->nseg++] = (Seg){src, len, off};
  b->offset = off;
  b->length = len;
  p->body_len = align_up(off + len);
  return true;
}

static QvStatus plan_message(const QvSparseTensor *t, const QvSparseWriteOptions *options,
                             Plan *p, QvError *error) {
  memset(p, 0, sizeof *p);
  if (t == NULL) return qv_error_set(error, QV_EARG, "NULL sparse tensor");
  QvSparseWriteOptions o;
  QvStatus st = QV_OPTIONS_LOAD(&o, options, QvSparseWriteOptions, error);
  if (st) return st;
  /* a tensor a reader validated and nobody changed since (sealed) is not
   * scanned twice */
  if (qvi_sp_sealed(t))
    qvi_path_hit(QV_PATH_SPARSE_WRITE_SEALED);
  else if ((st = qv_sparse_validate(t, error)))
    return qv_error_prefix(error, "writing a sparse tensor");
  QvCsfLengths lengths = o.csf_lengths;
  if (lengths != QV_CSF_LENGTHS_ELEMENTS && lengths != QV_CSF_LENGTHS_BYTES)
    return qv_error_set(error, QV_EARG, "unknown CSF length convention %d", (int)lengths);

  int32_t ndim = t->ndim;
  size_t vw = qv_arrow_type_size(t->value_type);
  size_t iw = qv_arrow_type_size(t->index_type);
  size_t pw = qv_arrow_type_size(t->indptr_type);
  QvTensorDim dims[QV_TENSOR_MAX_NDIM];
  QvMessage msg;
  qvi_tensor_message_init(&msg, QV_HEADER_SPARSE_TENSOR, t->value_type, ndim, t->shape,
                         t->dim_names, dims);
  QvSparseTensorMeta *m = &msg.header.sparse_tensor;
  m->non_zero_length = t->nnz;
  int64_t coo_strides[2];
  QvBuffer csf_ptr[QV_TENSOR_MAX_NDIM], csf_idx[QV_TENSOR_MAX_NDIM];
  bool ok = true;
  /* validated: these byte counts do not overflow */
  switch (t->format) {
    case QV_SPARSE_COO: {
      QvSparseCOO *c = &m->index.coo;
      m->format = QV_SPARSE_COO;
      index_type_to_int(t->index_type, &c->indices_type);
      coo_strides[0] = (int64_t)ndim * (int64_t)iw;
      coo_strides[1] = (int64_t)iw;
      /* Arrow C++ checks the strides against its own row-major strides,
       * which for an empty (0 x ndim) matrix are the element size in every
       * entry (ComputeRowMajorStrides); it refuses anything else as "not
       * contiguous". The reader accepts both forms. */
      if (t->nnz == 0) coo_strides[0] = (int64_t)iw;
      c->has_indices_strides = true;
      c->n_indices_strides = 2;
      c->indices_strides = coo_strides;
      c->is_canonical = t->is_canonical;
      int64_t len = t->nnz * coo_strides[0];
      const uint8_t *src = t->coords;
      bool row_major = t->nnz <= 1 || t->coords_strides[0] == coo_strides[0];
      row_major = row_major && (ndim == 1 || t->coords_strides[1] == coo_strides[1]);
      if (!row_major && len > 0) {
        p->owned = qv_aligned_alloc((size_t)len);
        if (p->owned == NULL)
          return qv_error_set(error, QV_ENOMEM, "out of memory copying COO indices");
        for (int64_t i = 0; i < t->nnz; i++)
          for (int32_t dd = 0; dd < ndim; dd++)
            memcpy(p->owned + (i * ndim + dd) * (int64_t)iw,
                   t->coords + i * t->coords_strides[0] + dd * t->coords_strides[1], iw);
        src = p->owned;
      }
      ok = add_seg(p, src, len, &c->indices_buffer);
      break;
    }
    case QV_SPARSE_CSR:
    case QV_SPARSE_CSC: {
      QvSparseCSX *c = &m->index.csx;
      m->format = t->format;
      index_type_to_int(t->indptr_type, &c->indptr_type);
      index_type_to_int(t->index_type, &c->indices_type);
      ok = add_seg(p, t->indptr, t->indptr_len * (int64_t)pw, &c->indptr_buffer) &&
           add_seg(p, t->indices, t->nnz * (int64_t)iw, &c->indices_buffer);
      break;
    }
    default: {
      QvSparseCSF *c = &m->index.csf;
      m->format = QV_SPARSE_CSF;
      index_type_to_int(t->indptr_type, &c->indptr_type);
      index_type_to_int(t->index_type, &c->indices_type);
      bool bytes = lengths == QV_CSF_LENGTHS_BYTES;
      for (int32_t l = 0; l + 1 < ndim && ok; l++) {
        ok = add_seg(p, t->csf_indptr[l], t->csf_indptr_len[l] * (int64_t)pw, &csf_ptr[l]);
        if (!bytes) csf_ptr[l].length = t->csf_indptr_len[l];
      }
      for (int32_t l = 0; l < ndim && ok; l++) {
        ok = add_seg(p, t->csf_indices[l], t->csf_indices_len[l] * (int64_t)iw, &csf_idx[l]);
        if (!bytes) csf_idx[l].length = t->csf_indices_len[l];
      }
      c->n_indptr_buffers = ndim - 1;
      c->indptr_buffers = csf_ptr;
      c->n_indices_buffers = ndim;
      c->indices_buffers = csf_idx;
      c->n_axis_order = ndim;
      c->axis_order = t->axis_order;
      break;
    }
  }
  ok = ok && add_seg(p, t->values, t->nnz * (int64_t)vw, &m->data);
  if (!ok) {
    plan_free(p);
    return qv_error_set(error, QV_ELIMIT, "sparse tensor body overflows int64");
  }
  msg.body_length = p->body_len;
  if ((st = qvi_tensor_message_frame(&msg, "SparseTensor", &p->meta, &p->meta_size, error)))
    plan_free(p);
  return st;
}

QvStatus qv_sparse_write_size(const QvSparseTensor *t, const QvSparseWriteOptions *options,
                                size_t *size, QvError *error) {
  if (size == NULL) return qv_error_set(error, QV_EARG, "NULL size");
  *size = 0;
  Plan p;
  QvStatus st = plan_message(t, options, &p, error);
  if (st) return st;
  *size = p.meta_size + (size_t)p.body_len;
  plan_free(&p);
  return QV_OK;
}

QvStatus qv_sparse_write(const QvSparseTensor *t, QvSink *sink,
                         const QvSparseWriteOptions *options, QvError *error) {
  if (sink == NULL) return qv_error_set(error, QV_EARG, "NULL sink");
  Plan p;
  QvStatus st = plan_message(t, options, &p, error);
  if (st) return st;
  static const uint8_t zeros[BODY_ALIGN];
  st = qv_sink_write(sink, p.meta, p.meta_size, error);
  int64_t pos = 0;
  for (int i = 0; i < p.nseg && st == QV_OK; i++) {
    st = qv_sink_write(sink, zeros, (size_t)(p.seg[i].offset - pos), error);
    if (st == QV_OK) st = qv_sink_write(sink, p.seg[i].src, (size_t)p.seg[i].len, error);
    pos = p.seg[i].offset + p.seg[i].len;
  }
  if (st == QV_OK) st = qv_sink_write(sink, zeros, (size_t)(p.body_len - pos), error);
  plan_free(&p);
  return st;
}
