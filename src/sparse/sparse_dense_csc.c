/* Dense -> CSX of the orientation across the dense memory order (row-major
 * -> CSC, column-major -> CSR): a transpose. Sending each non-zero straight
 * to its output major keeps two write streams per major open (thousands),
 * which stalls on stores; reading the input across its memory order, a
 * narrow strip of majors at a time, reads it at a fraction of its
 * streaming speed. So the non-zeros are sorted by strips of W consecutive
 * output majors in two passes, each with few write streams:
 *
 *   1. The input is read once in memory order, line after line, as the
 *      scan along the memory order (dense -> CSR of a row-major input)
 *      reads it: the scan kernel writes each strip of a line straight into
 *      its strip's bucket, and the entries are counted per major, so the
 *      indptr is known at the end of the pass.
 *   2. Strip after strip, the bucket is read in order (its entries are in
 *      line order) and each entry goes to its final place, its major's
 *      next slot: 2W write streams, within the strip's part of the output.
 *
 * A bucket is a list of fixed-size chunks taken from one pool as it fills;
 * an entry is its value and a 32-bit key: its line (as an offset from the
 * chunk's base line) and its major within the strip. The input is read
 * once and the output written once; in between, 4 + value-size bytes per
 * non-zero are written and read back. */
#include "sparse/sparse_internal.h"
#include "util/cpu.h"
#include "util/grow.h"

/* Measured on 4000 x 4000, 40000 x 400 and 400000 x 40 float64 at 10%:
 * W = 256 cost 5-10% more than 512, 1024 cost 50% more (2W streams in pass
 * 2), and narrower strips cost more in pass 1 (a scan call per strip of a
 * line). */
enum {
  W_BITS = 9,     /* W: the majors rounded up to a power of two, at most 512 */
  SPAN = 1 << 20, /* line offsets a key holds (at most 32 - W_BITS bits) */
  CHUNK_W = 16    /* chunks of 16 W entries: a strip of a line needs W free slots */
};

/* Growable buffer of `unit`-byte items: reserved address space when the
 * platform gives it (never moves), else doubled with qvi_sp_realloc. */
typedef struct Buf {
  uint8_t *p;
  int64_t cap;
  size_t unit;
} Buf;

static bool buf_init(Buf *b, int64_t max_items, size_t unit) {
  b->unit = unit;
  b->p = max_items > 0 ? qvi_sp_reserve(max_items, unit) : NULL;
  b->cap = max_items;
  if (b->p != NULL) return true;
  b->cap = 4096;
  b->p = qvi_sp_malloc(b->cap, unit);
  return b->p != NULL;
}

static bool buf_need(Buf *b, int64_t items) {
  if (items <= b->cap) return true;
  size_t c = qvi_grow_capacity((size_t)b->cap, (size_t)items, 4096, b->unit);
  if (c == 0 || c > INT64_MAX) return false;
  int64_t cap = (int64_t)c;
  uint8_t *p = qvi_sp_realloc(b->p, cap, b->unit);
  if (p == NULL) return false;
  b->p = p;
  b->cap = cap;
  return true;
}

typedef struct Bucket {
  int64_t pos, end; /* next free slot and the end of the current chunk, in pool slots */
  int64_t start;    /* first slot of the line being scanned */
  int64_t first, cur; /* chunks; -1: none yet */
} Bucket;

typedef struct Tr {
  const uint8_t *data;
  int64_t nlines, lstride; /* lines and the byte stride between them */
  int64_t len, stride;     /* elements of a line (the majors) and their byte stride */
  uint64_t mask;
  int sh;                  /* W = 1 << sh */
  int64_t nbk;             /* buckets (strips) */
  Bucket *bk;
  int64_t base;            /* base line of the chunks opened from now on */
  /* the pool: ch entries per chunk; per chunk its next chunk in its bucket,
   * its entry count (set when closed) and its base line */
  int64_t ch, nch;
  Buf keys, vals, next, count, cbase;
  int64_t *ptr; /* entries per major (at m + 1), then the indptr */
  int64_t line0; /* the first line of this part of the input (data starts there) */
} Tr;

/* Closes b's current chunk and opens a new one at the end of the pool. */
static bool open_chunk(Tr *t, Bucket *b) {
  int64_t cid = t->nch;
  if (!buf_need(&t->keys, (cid + 1) * t->ch) || !buf_need(&t->vals, (cid + 1) * t->ch) ||
      !buf_need(&t->next, cid + 1) || !buf_need(&t->count, cid + 1) || !buf_need(&t->cbase, cid + 1))
    return false;
  t->nch = cid + 1;
  int64_t *next = (int64_t *)(void *)t->next.p, *count = (int64_t *)(void *)t->count.p;
  if (b->cur >= 0) {
    next[b->cur] = cid;
    count[b->cur] = b->pos - b->cur * t->ch;
  } else {
    b->first = cid;
  }
  next[cid] = -1;
  ((int64_t *)(void *)t->cbase.p)[cid] = t->base;
  b->cur = cid;
  b->pos = cid * t->ch;
  b->end = b->pos + t->ch;
  return true;
}

SP_INLINE bool pass1(Tr *t, size_t vs) {
  int64_t w = (int64_t)1 << t->sh;
  uint32_t wm = (uint32_t)w - 1;
  int64_t *cnt = t->ptr + 1;
  for (int64_t r = 0; r < t->nlines; r++) {
    if (r - t->base >= SPAN) {
      /* keys hold line offsets below the span: new chunks from here on */
      t->base = r;
      for (int64_t b = 0; b < t->nbk; b++) t->bk[b].end = t->bk[b].pos;
    }
    const uint8_t *line = t->data + r * t->lstride;
    uint32_t rk = (uint32_t)(r - t->base) << t->sh;
    for (int64_t b = 0; b < t->nbk; b++) {
      int64_t o = b << t->sh, len = t->len - o < w ? t->len - o : w, k;
      Bucket *bk = &t->bk[b];
      if (bk->end - bk->pos < len) {
        if (!open_chunk(t, bk)) return false;
        bk->start = bk->pos;
      }
      const uint8_t *p = line + o * t->stride;
      uint32_t *ci = (uint32_t *)(void *)t->keys.p + bk->pos;
      uint8_t *v = t->vals.p + (size_t)bk->pos * vs;
      if (t->stride == (int64_t)vs) {
        k = qvi_sp_scan_vec_u32(p, len, vs, t->mask, rk, ci, v);
        if (k < 0) {
          qvi_path_hit(QV_PATH_SCAN_PORTABLE);
          /* a constant stride: the portable scan's loads vectorise */
          k = sp_scan_line(p, len, (int64_t)vs, rk, ci, false, 1, v, vs, t->mask);
        }
      } else {
        k = sp_scan_line(p, len, t->stride, rk, ci, false, 1, v, vs, t->mask);
      }
      bk->pos += k;
    }
    /* counts per major, while the line's keys are in L1 (not right after
     * each scan: loads of keys still in the store buffer, written by
     * overlapping vector stores, would wait for them) */
    const uint32_t *keys = (const uint32_t *)(const void *)t->keys.p;
    for (int64_t b = 0; b < t->nbk; b++) {
      int64_t *cb = cnt + (b << t->sh);
      for (int64_t i = t->bk[b].start; i < t->bk[b].pos; i++) cb[keys[i] & wm]++;
      t->bk[b].start = t->bk[b].pos;
    }
  }
  return true;
}

/* Pass 2 of strip b: the entries the parts' buckets b hold, part after
 * part (their lines in order), to their places in the output; pos (W
 * entries) starts at the strip's majors' starts in ptr. */
SP_INLINE void pass2_strip(const Tr *tr, int np, int64_t b, const int64_t *ptr, int64_t *pos, int64_t *oi,
                           uint8_t *ov, size_t vs) {
  int sh = tr[0].sh;
  uint32_t wm = (1u << sh) - 1;
  int64_t m0 = b << sh, w = tr[0].len - m0 < (1 << sh) ? tr[0].len - m0 : (1 << sh);
  for (int64_t j = 0; j < w; j++) pos[j] = ptr[m0 + j];
  for (int q = 0; q < np; q++) {
    const Tr *t = &tr[q];
    const uint32_t *keys = (const uint32_t *)(const void *)t->keys.p;
    const uint8_t *vals = t->vals.p;
    const int64_t *next = (const int64_t *)(const void *)t->next.p;
    const int64_t *count = (const int64_t *)(const void *)t->count.p;
    const int64_t *cbase = (const int64_t *)(const void *)t->cbase.p;
    for (int64_t cid = t->bk[b].first; cid >= 0; cid = next[cid]) {
      const uint32_t *kk = keys + cid * t->ch;
      const uint8_t *vv = vals + (size_t)(cid * t->ch) * vs;
      int64_t n = count[cid], l0 = t->line0 + cbase[cid];
      for (int64_t i = 0; i < n; i++) {
        uint32_t key = kk[i];
        int64_t q2 = pos[key & wm]++;
        oi[q2] = l0 + (key >> sh);
        qvi_st_bits(ov + (size_t)q2 * vs, vs, qvi_ld_bits(vv + (size_t)i * vs, vs));
      }
    }
  }
}

static bool run(Tr *t, size_t vs) {
  switch (vs) {
    case 1: return pass1(t, 1);
    case 2: return pass1(t, 2);
    case 4: return pass1(t, 4);
    default: return pass1(t, 8);
  }
}

/* Part of the input for one pass 1: lines [l0, l1). */
static bool tr_init(Tr *t, const QvTensor *d, int sm, int64_t l0, int64_t l1) {
  int sn = 1 - sm;
  size_t vs = qv_arrow_type_size(d->type);
  int64_t nmajor = d->shape[sn], size = (l1 - l0) * nmajor;
  memset(t, 0, sizeof *t);
  t->data = d->data + l0 * d->strides[sm];
  t->line0 = l0;
  t->nlines = l1 - l0;
  t->len = nmajor;
  t->lstride = d->strides[sm];
  t->stride = d->strides[sn];
  t->mask = qvi_sp_zero_mask(d->type);
  /* W: the majors rounded up to a power of two, at most 1 << W_BITS */
  int sh = 0;
  while (sh < W_BITS && ((int64_t)1 << sh) < nmajor) sh++;
  t->sh = sh;
  t->nbk = nmajor > 0 ? ((nmajor - 1) >> sh) + 1 : 0;
  t->ch = CHUNK_W << sh;
  t->bk = qvi_sp_malloc(t->nbk, sizeof *t->bk);
  t->ptr = nmajor < INT64_MAX ? qvi_sp_calloc(nmajor + 1, 8) : NULL;
  bool ok = t->bk != NULL && t->ptr != NULL;
  for (int64_t b = 0; ok && b < t->nbk; b++) t->bk[b] = (Bucket){0, 0, 0, -1, -1};
  /* the pool: address space for every element, what chunks leave unused
   * (less than W of their 16 W slots) and the buckets' last chunks, so
   * that it does not move; pages are committed as written */
  int64_t most = t->nbk <= (INT64_MAX / 2 - size) / t->ch / 2 ? size + size / 8 + 2 * t->nbk * t->ch : 0;
  ok = ok && buf_init(&t->keys, most, 4) && buf_init(&t->vals, most, vs);
  ok = ok && buf_init(&t->next, 0, 8) && buf_init(&t->count, 0, 8) && buf_init(&t->cbase, 0, 8);
  return ok;
}

static void tr_free(Tr *t, bool keep_ptr) {
  qvi_sp_free(t->bk);
  qvi_sp_free(t->keys.p);
  qvi_sp_free(t->vals.p);
  qvi_sp_free(t->next.p);
  qvi_sp_free(t->count.p);
  qvi_sp_free(t->cbase.p);
  if (!keep_ptr) qvi_sp_free(t->ptr);
}

/* Pass 1 of a part, its last chunks' counts set; false on allocation
 * failure. */
static bool tr_pass1(Tr *t, size_t vs) {
  if (!run(t, vs)) return false;
  int64_t *count = (int64_t *)(void *)t->count.p;
  for (int64_t b = 0; b < t->nbk; b++)
    if (t->bk[b].cur >= 0) count[t->bk[b].cur] = t->bk[b].pos - t->bk[b].cur * t->ch;
  return true;
}

/* ---- the strip sort on several threads: the lines are cut into one
 * block per part and each part runs pass 1 on its block with its own
 * buckets and counts per major; the counts of all parts give the indptr.
 * Pass 2 then hands out whole strips: a strip reads bucket b of part 0,
 * then of part 1, ..., so each major receives its lines in order, and the
 * strip writes only its own majors' part of the output. The bytes are the
 * one-thread bytes for any number of parts. */
enum { ACROSS_MIN_PER_PART = 1 << 18 }; /* elements */

typedef struct AcrossJob {
  Tr *tr;
  int np;
  size_t vs;
  bool *ok;
  const int64_t *ptr;
  int64_t *oi;
  uint8_t *ov;
  int64_t n;
  int populated; /* parts that faulted in their pages (atomic) */
} AcrossJob;

static void across_pass1(void *ctx, size_t i) {
  AcrossJob *j = ctx;
  j->ok[i] = tr_pass1(&j->tr[i], j->vs);
}

/* Part i of the fresh output, faulted in before pass 2: the strips are
 * handed out one at a time, so two threads first-write neighbouring
 * strips, often in one huge page, and each losing fault zeroes 2 MiB in
 * vain (see qvi_sp_populate). Parts own whole huge pages. */
static void across_populate(void *ctx, size_t i) {
  AcrossJob *j = ctx;
  void *buf[2] = {j->oi, j->ov};
  size_t bytes[2] = {(size_t)j->n * 8, (size_t)j->n * j->vs};
  if (qvi_sp_populate_parts(buf, bytes, 2, (int)i, j->np))
    __atomic_fetch_add(&j->populated, 1, __ATOMIC_RELAXED);
}

static void across_pass2(void *ctx, size_t b) {
  AcrossJob *j = ctx;
  int64_t pos[1 << W_BITS];
  switch (j->vs) {
    case 1: pass2_strip(j->tr, j->np, (int64_t)b, j->ptr, pos, j->oi, j->ov, 1); break;
    case 2: pass2_strip(j->tr, j->np, (int64_t)b, j->ptr, pos, j->oi, j->ov, 2); break;
    case 4: pass2_strip(j->tr, j->np, (int64_t)b, j->ptr, pos, j->oi, j->ov, 4); break;
    default: pass2_strip(j->tr, j->np, (int64_t)b, j->ptr, pos, j->oi, j->ov, 8); break;
  }
}

QvStatus qvi_sp_csx_from_dense_across(const QvTensor *d, int sm, SpCsx *c, QvError *error) {
  memset(c, 0, sizeof *c);
  qvi_path_hit(QV_PATH_DENSE_ACROSS);
  int sn = 1 - sm;
  size_t vs = qv_arrow_type_size(d->type);
  int64_t nlines = d->shape[sm], nmajor = d->shape[sn], size = qv_tensor_n_elements(d);
  QvPool *pool = qvi_sp_pool_current();
  int np = qvi_pool_threads(pool);
  if (size / ACROSS_MIN_PER_PART < np) np = (int)(size / ACROSS_MIN_PER_PART);
  if (nlines < np) np = (int)nlines;
  if (np < 1) np = 1;
  Tr one, *tr = np > 1 ? qvi_sp_calloc(np, sizeof *tr) : &one;
  bool one_ok, *pok = np > 1 ? qvi_sp_calloc(np, sizeof(bool)) : &one_ok;
  if (tr == NULL || pok == NULL) {
    if (tr != &one) qvi_sp_free(tr);
    if (pok != &one_ok) qvi_sp_free(pok);
    tr = &one, pok = &one_ok, np = 1;
  }
  /* every buffer on the calling thread (a workspace serves them) */
  int inited = 0;
  bool ok = true;
  for (; inited < np && ok; inited++)
    ok = tr_init(&tr[inited], d, sm, nlines / np * inited + nlines % np * inited / np,
                 nlines / np * (inited + 1) + nlines % np * (inited + 1) / np);
  AcrossJob j = {tr, np, vs, pok, NULL, NULL, NULL, 0, 0};
  if (ok) {
    if (np > 1) {
      qvi_pool_run(pool, (size_t)np, across_pass1, &j);
    } else {
      pok[0] = tr_pass1(&tr[0], vs);
    }
    for (int q = 0; q < np; q++) ok = ok && pok[q];
  }
  int64_t n = 0, *ptr = tr[0].ptr;
  uint8_t *ov = NULL;
  int64_t *oi = NULL;
  if (ok) {
    /* part 0's counts become the indptr */
    for (int q = 1; q < np; q++)
      for (int64_t m = 0; m < nmajor; m++) ptr[m + 1] += tr[q].ptr[m + 1];
    for (int64_t m = 0; m < nmajor; m++) ptr[m + 1] += ptr[m];
    n = ptr[nmajor];
    oi = qvi_sp_malloc(n, 8);
    ov = qvi_sp_malloc(n, vs);
    ok = oi != NULL && ov != NULL;
  }
  if (ok) {
    j.ptr = ptr;
    j.oi = oi;
    j.ov = ov;
    j.n = n;
    int64_t nbk = tr[0].nbk;
    if (np > 1) {
      qvi_pool_run(pool, (size_t)np, across_populate, &j);
      if (j.populated > 0) qvi_path_hit(QV_PATH_DENSE_POPULATED);
    }
    qvi_pool_run(np > 1 ? pool : NULL, (size_t)nbk, across_pass2, &j);
    if (np > 1) qvi_path_hit(QV_PATH_DENSE_ACROSS_THREADS);
  }
  for (int q = 0; q < inited; q++) tr_free(&tr[q], q == 0 && ok);
  if (tr != &one) qvi_sp_free(tr);
  if (pok != &one_ok) qvi_sp_free(pok);
  if (!ok) {
    qvi_sp_free(oi);
    qvi_sp_free(ov);
    return qvi_sp_nomem(error, "dense to sparse", n > 0 ? n : size, 12 + vs);
  }
  qvi_sp_csx_own(c, sn, nmajor, nlines, n, d->type, ptr, oi, ov);
  return QV_OK;
}
