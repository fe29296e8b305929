/* Dense -> CSX of the orientation across the dense memory order (row-major
 * -> CSC, column-major -> CSR): a transpose without a global scatter.
 * Sending each non-zero straight to its output major keeps two write
 * streams per major open (thousands), which stalls on stores; here every
 * scatter stays in the cache:
 *
 *   1. Lines (the rows of a row-major input) are scanned in blocks of at
 *      most 255 lines into a scratch, entries in line order. Each block is
 *      counting-sorted by output major (a tile of majors at a time, so that
 *      few output cache lines are being filled at once) and appended to an
 *      intermediate, with the entry count of every (block, major) segment.
 *   2. The output is assembled in groups of majors whose output fits the
 *      cache: for a group, each block's segments follow each other in the
 *      intermediate, so the reads are one sequential run per block and the
 *      writes stay in the group's window.
 *
 * The intermediate keeps the values in the output indices buffer (8 bytes
 * an entry hold any value) and each entry's line offset in its block in a
 * byte. Values are assembled first, then the indices overwrite the
 * intermediate: beyond the output only a byte per entry and the segment
 * counts are written. Output majors are taken in strips of at most
 * STRIP_MAX, which bounds the segment counts whatever the shape. */
#include <stdlib.h>

#include "sparse/sparse_internal.h"
#include "util/cpu.h"

/* Sizes measured on a 4000x4000 float64 matrix (the speed varied little
 * around them; smaller blocks cost more in the assembly, larger ones in
 * the sort). */
enum {
  SCRATCH_CAP = 131072,  /* scratch entries of a block */
  STRIP_MAX = 16384,     /* output majors per strip */
  BLOCK_LINES = 255,     /* line offsets in a block fit a byte */
  TILE = 512,            /* majors per pass of the sort, line elements per scan step */
  GROUP_ENTRIES = 16384  /* output entries per group of majors in the assembly */
};

/* Growable buffer of `unit`-byte items: reserved address space when the
 * platform gives it (never moves), else doubled with qv_sp_realloc. */
typedef struct Buf {
  uint8_t *p;
  int64_t cap;
  size_t unit;
} Buf;

static bool buf_init(Buf *b, int64_t max_items, size_t unit) {
  b->unit = unit;
  b->p = max_items > 0 ? qv_sp_reserve(max_items, unit) : NULL;
  b->cap = max_items;
  if (b->p != NULL) return true;
  b->cap = 4096;
  b->p = qv_sp_malloc(b->cap, unit);
  return b->p != NULL;
}

static bool buf_need(Buf *b, int64_t items) {
  if (items <= b->cap) return true;
  int64_t cap = b->cap;
  while (cap < items) {
    if (cap > INT64_MAX / 2) return false;
    cap *= 2;
  }
  uint8_t *p = qv_sp_realloc(b->p, cap, b->unit);
  if (p == NULL) return false;
  b->p = p;
  b->cap = cap;
  return true;
}

typedef struct Tr {
  const uint8_t *data;
  int64_t nlines, lstride; /* lines and the byte stride between them */
  int64_t stride;          /* byte stride along a line */
  uint64_t mask;
  /* the block being scanned */
  uint32_t *sidx; /* scratch: major in the strip, value */
  uint8_t *svals;
  int32_t *cnt;                  /* entries per major of the strip */
  int32_t *tpos;  /* per line of the block: scratch start of each tile, then the line end */
  int64_t ntiles; /* tiles of TILE majors in the strip */
  /* the strip */
  Buf segs;      /* (block, major) segment counts, block-major */
  Buf blocks;    /* per block: first line, start in the intermediate, cursor */
  Buf off;       /* intermediate line offsets */
  int64_t *opos; /* assembly: output position per major of the strip */
  /* output */
  int64_t *ptr;
  Buf idx;   /* indices; before them, a strip's intermediate values */
  Buf vals;  /* values */
  int64_t n; /* entries output so far */
} Tr;

/* Counting-sorts the scratch (nlo lines, fill entries) by major into the
 * intermediate at strip position `at` as block nb: its first line, start
 * and segment counts are recorded. */
SP_INLINE bool sort_block(Tr *t, int64_t width, int64_t nb, int64_t line0, int nlo, int64_t fill, int64_t at,
                          int64_t strip0, size_t vs) {
  if (!buf_need(&t->segs, (nb + 1) * width) || !buf_need(&t->blocks, 3 * (nb + 1)) ||
      !buf_need(&t->off, at + fill) || !buf_need(&t->idx, strip0 + at + fill))
    return false;
  int64_t *bl = (int64_t *)(void *)t->blocks.p + 3 * nb;
  bl[0] = line0;
  bl[1] = at;
  uint8_t *seg = t->segs.p + nb * width;
  int32_t *cnt = t->cnt;
  int32_t acc = 0;
  for (int64_t j = 0; j < width; j++) {
    int32_t c = cnt[j];
    seg[j] = (uint8_t)c; /* at most one entry per line */
    cnt[j] = acc;
    acc += c;
  }
  uint8_t *ival = t->idx.p + (size_t)strip0 * 8 + (size_t)at * vs;
  uint8_t *ioff = t->off.p + at;
  const uint32_t *si = t->sidx;
  const uint8_t *sv = t->svals;
  int64_t nt = t->ntiles;
  for (int64_t ti = 0; ti < nt; ti++) {
    for (int u = 0; u < nlo; u++) {
      const int32_t *tp = t->tpos + u * (nt + 1) + ti;
      for (int32_t k = tp[0]; k < tp[1]; k++) {
        int32_t q = cnt[si[k]]++;
        qv_st_bits(ival + (size_t)q * vs, vs, qv_ld_bits(sv + (size_t)k * vs, vs));
        ioff[q] = (uint8_t)u;
      }
    }
  }
  memset(cnt, 0, (size_t)width * sizeof *cnt);
  return true;
}

/* Output majors [m0, m0 + width) from nb blocks, nnz entries in all. */
SP_INLINE bool assemble(Tr *t, int64_t m0, int64_t width, int64_t nb, int64_t nnz, int64_t strip0, size_t vs) {
  if (!buf_need(&t->vals, strip0 + nnz)) return false;
  int64_t *bl = (int64_t *)(void *)t->blocks.p;
  const uint8_t *segs = t->segs.p;
  int64_t *ptr = t->ptr + m0, *opos = t->opos;
  const uint8_t *ival = t->idx.p + (size_t)strip0 * 8;
  uint8_t *ov = t->vals.p;
  int64_t *oi = (int64_t *)(void *)t->idx.p;
  const uint8_t *ioff = t->off.p;
  if (nb == 1) {
    /* one block (few lines): the intermediate is in output order */
    for (int64_t j = 0; j < width; j++) ptr[j + 1] = ptr[j] + segs[j];
    if (nnz > 0) memcpy(ov + (size_t)strip0 * vs, ival, (size_t)nnz * vs);
    int64_t l0 = bl[0];
    for (int64_t k = 0; k < nnz; k++) oi[strip0 + k] = l0 + ioff[k];
    return true;
  }
  for (int64_t j = 0; j < width; j++) opos[j] = 0;
  for (int64_t b = 0; b < nb; b++)
    for (int64_t j = 0; j < width; j++) opos[j] += segs[b * width + j];
  for (int64_t j = 0; j < width; j++) ptr[j + 1] = ptr[j] + opos[j];
  /* values first: the indices overwrite the intermediate */
  for (int pass = 0; pass < 2; pass++) {
    for (int64_t b = 0; b < nb; b++) bl[3 * b + 2] = bl[3 * b + 1];
    for (int64_t j0 = 0, j1; j0 < width; j0 = j1) {
      j1 = j0 + 1;
      while (j1 < width && ptr[j1 + 1] - ptr[j0] <= GROUP_ENTRIES) j1++;
      for (int64_t j = j0; j < j1; j++) opos[j] = ptr[j];
      for (int64_t b = 0; b < nb; b++) {
        const uint8_t *seg = segs + b * width;
        int64_t q = bl[3 * b + 2];
        if (pass == 0) {
          for (int64_t j = j0; j < j1; j++) {
            int64_t c = seg[j], p = opos[j];
            for (int64_t i = 0; i < c; i++)
              qv_st_bits(ov + (size_t)(p + i) * vs, vs, qv_ld_bits(ival + (size_t)(q + i) * vs, vs));
            opos[j] = p + c;
            q += c;
          }
        } else {
          int64_t l0 = bl[3 * b];
          for (int64_t j = j0; j < j1; j++) {
            int64_t c = seg[j], p = opos[j];
            for (int64_t i = 0; i < c; i++) oi[p + i] = l0 + ioff[q + i];
            opos[j] = p + c;
            q += c;
          }
        }
        bl[3 * b + 2] = q;
      }
    }
  }
  return true;
}

/* Appends the non-zeros of line elements [o, o + len) of a strip to the
 * scratch at `fill`; returns their count. */
SP_INLINE int64_t scan_into(Tr *t, const uint8_t *line, int64_t o, int64_t len, int64_t fill, size_t vs) {
  const uint8_t *p = line + o * t->stride;
  uint32_t *ci = t->sidx + fill;
  uint8_t *v = t->svals + (size_t)fill * vs;
  if (t->stride == (int64_t)vs) {
    int64_t k = qv_sp_scan_vec_u32(p, len, vs, t->mask, (uint32_t)o, ci, v);
    if (k >= 0) return k;
    qv_path_hit(QV_PATH_SCAN_PORTABLE);
    return sp_scan_line(p, len, (int64_t)vs, o, ci, false, 1, v, vs, t->mask);
  }
  return sp_scan_line(p, len, t->stride, o, ci, false, 1, v, vs, t->mask);
}

/* One strip of output majors [m0, m0 + width). Lines are scanned a tile
 * at a time, which records where each (line, tile) run starts. */
SP_INLINE bool do_strip(Tr *t, int64_t m0, int64_t width, size_t vs) {
  int64_t strip0 = t->n, nb = 0, at = 0, fill = 0, line0 = 0, nt = (width + TILE - 1) / TILE;
  t->ntiles = nt;
  for (int64_t r = 0; r < t->nlines; r++) {
    const uint8_t *line = t->data + r * t->lstride + m0 * t->stride;
    for (int64_t ti = 0; ti < nt; ti++) {
      int64_t o = ti * TILE, len = width - o < TILE ? width - o : TILE;
      if (fill + len > SCRATCH_CAP || (ti == 0 && r - line0 >= BLOCK_LINES)) {
        if (fill > 0) {
          /* the block ends inside line r when ti > 0: its other tiles are empty */
          int nlo = (int)(r - line0) + (ti > 0);
          if (ti > 0)
            for (int64_t x = ti; x <= nt; x++) t->tpos[(r - line0) * (nt + 1) + x] = (int32_t)fill;
          if (!sort_block(t, width, nb, line0, nlo, fill, at, strip0, vs)) return false;
          nb++;
          at += fill;
          fill = 0;
        }
        line0 = r;
        for (int64_t x = 0; x < ti; x++) t->tpos[x] = 0;
      }
      t->tpos[(r - line0) * (nt + 1) + ti] = (int32_t)fill;
      int64_t k0 = fill;
      fill += scan_into(t, line, o, len, fill, vs);
      /* counts per major while the entries are in L1 */
      for (int64_t k = k0; k < fill; k++) t->cnt[t->sidx[k]]++;
    }
    t->tpos[(r - line0) * (nt + 1) + nt] = (int32_t)fill;
  }
  if (fill > 0) {
    if (!sort_block(t, width, nb, line0, (int)(t->nlines - line0), fill, at, strip0, vs)) return false;
    nb++;
    at += fill;
  }
  if (!assemble(t, m0, width, nb, at, strip0, vs)) return false;
  t->n = strip0 + at;
  return true;
}

static bool run(Tr *t, int64_t nmajor, size_t vs) {
  int64_t nstrips = (nmajor + STRIP_MAX - 1) / STRIP_MAX;
  for (int64_t s = 0; s < nstrips; s++) {
    /* equal strips: a remainder does not make a narrow one */
    int64_t m0 = nmajor * s / nstrips, m1 = nmajor * (s + 1) / nstrips;
    bool ok;
    switch (vs) {
      case 1: ok = do_strip(t, m0, m1 - m0, 1); break;
      case 2: ok = do_strip(t, m0, m1 - m0, 2); break;
      case 4: ok = do_strip(t, m0, m1 - m0, 4); break;
      default: ok = do_strip(t, m0, m1 - m0, 8); break;
    }
    if (!ok) return false;
  }
  return true;
}

QvStatus qv_sp_csx_from_dense_across(const QvTensor *d, int sm, SpCsx *c, QvError *error) {
  memset(c, 0, sizeof *c);
  qv_path_hit(QV_PATH_DENSE_ACROSS);
  int sn = 1 - sm;
  size_t vs = qv_value_type_size(d->type);
  int64_t nlines = d->shape[sm], nmajor = d->shape[sn], size = qv_tensor_size(d);
  int64_t width = nmajor < STRIP_MAX ? nmajor : STRIP_MAX;
  Tr t;
  memset(&t, 0, sizeof t);
  t.data = d->data;
  t.nlines = nlines;
  t.lstride = d->strides[sm];
  t.stride = d->strides[sn];
  t.mask = qv_sp_zero_mask(d->type);
  t.sidx = qv_sp_malloc(SCRATCH_CAP, sizeof *t.sidx);
  t.svals = qv_sp_malloc(SCRATCH_CAP, vs);
  t.cnt = qv_sp_calloc(width, sizeof *t.cnt);
  t.opos = qv_sp_malloc(width, sizeof *t.opos);
  t.tpos = qv_sp_malloc(BLOCK_LINES * ((width + TILE - 1) / TILE + 1), sizeof *t.tpos);
  t.ptr = nmajor < INT64_MAX ? qv_sp_calloc(nmajor + 1, 8) : NULL;
  bool ok = t.sidx && t.svals && t.cnt && t.opos && t.tpos && t.ptr;
  ok = ok && buf_init(&t.segs, 0, 1) && buf_init(&t.blocks, 0, 8);
  ok = ok && buf_init(&t.off, width > 0 && nlines <= INT64_MAX / width ? nlines * width : 0, 1);
  ok = ok && buf_init(&t.idx, size, 8) && buf_init(&t.vals, size, vs);
  ok = ok && run(&t, nmajor, vs);
  int64_t n = t.n;
  qv_sp_free(t.sidx);
  qv_sp_free(t.svals);
  qv_sp_free(t.cnt);
  qv_sp_free(t.opos);
  qv_sp_free(t.tpos);
  qv_sp_free(t.segs.p);
  qv_sp_free(t.blocks.p);
  qv_sp_free(t.off.p);
  /* give back the unused tails (mremap for large blocks, no copy) */
  int64_t *idx = ok ? qv_sp_realloc(t.idx.p, n, 8) : NULL;
  uint8_t *vals = ok ? qv_sp_realloc(t.vals.p, n, vs) : NULL;
  if (idx == NULL || vals == NULL) {
    qv_sp_free(t.ptr);
    qv_sp_free(idx != NULL ? (void *)idx : (void *)t.idx.p);
    qv_sp_free(vals != NULL ? vals : t.vals.p);
    return qv_sp_nomem(error, "dense to sparse", n > 0 ? n : size, 9 + vs);
  }
  qv_sp_csx_own(c, sn, nmajor, nlines, n, d->type, t.ptr, idx, vals);
  return QV_OK;
}
