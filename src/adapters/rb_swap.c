/* Byte order of record batch bodies (see rb_swap.h). */
#include "adapters/rb_swap.h"

#include <string.h>

#include "util/load.h"

QvEndianness qvi_rb_host_endianness(void) { return QV_HOST_BIG_ENDIAN ? QV_ENDIAN_BIG : QV_ENDIAN_LITTLE; }

QvSwapKind qvi_rb_swap_kind(const QvArrowSchemaView *t, int slot) {
  QvLayout L = qv_layout_of(t->storage_type);
  if (slot <= 0) return QV_SWAP_NONE; /* validity, union validity before V5, view data */
  int ow = qv_layout_offset_width(L);
  switch (L) {
    case QV_LAYOUT_FIXED:
      switch (t->storage_type) {
        case QV_ARROW_FIXED_SIZE_BINARY: return QV_SWAP_NONE;
        case QV_ARROW_INTERVAL_MONTH_DAY_NANO: return QV_SWAP_MDN;
        case QV_ARROW_INTERVAL_DAY_TIME: return QV_SWAP_4; /* two int32 */
        default: break;
      }
      switch (t->byte_width) {
        case 2: return QV_SWAP_2;
        case 4: return QV_SWAP_4;
        case 8: return QV_SWAP_8;
        case 16: return QV_SWAP_16;
        case 32: return QV_SWAP_32;
        default: return QV_SWAP_NONE;
      }
    case QV_LAYOUT_BINARY:
    case QV_LAYOUT_LARGE_BINARY:
    case QV_LAYOUT_LIST:
    case QV_LAYOUT_LARGE_LIST:
      if (slot != 1) return QV_SWAP_NONE;
      return ow == 4 ? QV_SWAP_4 : QV_SWAP_8;
    case QV_LAYOUT_LIST_VIEW:
    case QV_LAYOUT_LARGE_LIST_VIEW: return ow == 4 ? QV_SWAP_4 : QV_SWAP_8;
    case QV_LAYOUT_VIEW: return slot == 1 ? QV_SWAP_VIEW : QV_SWAP_NONE;
    case QV_LAYOUT_DENSE_UNION: return slot == 2 ? QV_SWAP_4 : QV_SWAP_NONE;
    default: return QV_SWAP_NONE;
  }
}

static int kind_width(QvSwapKind k) {
  switch (k) {
    case QV_SWAP_2: return 2;
    case QV_SWAP_4: return 4;
    case QV_SWAP_8: return 8;
    case QV_SWAP_16:
    case QV_SWAP_MDN:
    case QV_SWAP_VIEW: return 16;
    case QV_SWAP_32: return 32;
    default: return 1;
  }
}

static void reverse(uint8_t *dst, const uint8_t *src, int w) {
  uint8_t t[32];
  for (int i = 0; i < w; i++) t[i] = src[w - 1 - i];
  memcpy(dst, t, (size_t)w);
}

void qvi_rb_swap_copy(QvSwapKind kind, uint8_t *dst, const uint8_t *src, int64_t len, bool to_host) {
  int w = kind_width(kind);
  int64_t n = len / w, i;
  /* loops over plain loads and __builtin_bswap, which compilers vectorize */
  switch (kind) {
    case QV_SWAP_2:
      for (i = 0; i < n; i++) qvi_st_u16(dst + 2 * i, __builtin_bswap16(qvi_ld_u16(src + 2 * i)));
      break;
    case QV_SWAP_4:
      for (i = 0; i < n; i++) qvi_st_u32(dst + 4 * i, __builtin_bswap32(qvi_ld_u32(src + 4 * i)));
      break;
    case QV_SWAP_8:
      for (i = 0; i < n; i++) qvi_st_u64(dst + 8 * i, __builtin_bswap64(qvi_ld_u64(src + 8 * i)));
      break;
    case QV_SWAP_16:
    case QV_SWAP_32:
      for (i = 0; i < n; i++) reverse(dst + (size_t)w * i, src + (size_t)w * i, w);
      break;
    case QV_SWAP_MDN:
      for (i = 0; i < n; i++) {
        const uint8_t *s = src + 16 * i;
        uint8_t *d = dst + 16 * i;
        uint32_t m = __builtin_bswap32(qvi_ld_u32(s)), dd = __builtin_bswap32(qvi_ld_u32(s + 4));
        uint64_t ns = __builtin_bswap64(qvi_ld_u64(s + 8));
        qvi_st_u32(d, m);
        qvi_st_u32(d + 4, dd);
        qvi_st_u64(d + 8, ns);
      }
      break;
    case QV_SWAP_VIEW:
      for (i = 0; i < n; i++) {
        const uint8_t *s = src + 16 * i;
        uint8_t *d = dst + 16 * i;
        uint32_t raw = qvi_ld_u32(s), sw = __builtin_bswap32(raw);
        int32_t length = (int32_t)(to_host ? sw : raw);
        uint8_t rest[12];
        memcpy(rest, s + 4, 12); /* src may equal dst */
        qvi_st_u32(d, sw);
        if (length > 12) {
          /* prefix bytes stay; buffer index and offset are int32 */
          memcpy(d + 4, rest, 4);
          qvi_st_u32(d + 8, __builtin_bswap32(qvi_ld_u32(rest + 4)));
          qvi_st_u32(d + 12, __builtin_bswap32(qvi_ld_u32(rest + 8)));
        } else {
          memcpy(d + 4, rest, 12); /* inlined bytes */
        }
      }
      break;
    default: n = 0; break;
  }
  int64_t done = n * w;
  if (len > done && dst != src) memcpy(dst + done, src + done, (size_t)(len - done));
}

typedef struct Walk {
  const int64_t *var;
  int64_t n_var, var_i;
  QvSwapKind *kinds;
  int64_t n_kinds, k;
  QvError *error;
} Walk;

static QvStatus put(Walk *w, QvSwapKind kind) {
  if (w->k >= w->n_kinds)
    return qv_error_set(w->error, QV_EINVAL, "the batch has %lld buffers, the schema needs more",
                        (long long)w->n_kinds);
  w->kinds[w->k++] = kind;
  return QV_OK;
}

static QvStatus walk(Walk *w, const QvArrayView *v, int depth) {
  if (depth > QV_ARRAY_MAX_DEPTH)
    return qv_error_set(w->error, QV_ELIMIT, "fields nested deeper than %d", QV_ARRAY_MAX_DEPTH);
  QvLayout L = qv_layout_of(v->type.storage_type);
  QvStatus st = QV_OK;
  if (qv_layout_has_validity(L) && (st = put(w, QV_SWAP_NONE))) return st;
  int n = qv_layout_n_buffers(L);
  switch (L) {
    case QV_LAYOUT_SPARSE_UNION:
    case QV_LAYOUT_DENSE_UNION:
      /* type ids, then (dense) offsets; no validity since V5 */
      if ((st = put(w, QV_SWAP_NONE))) return st;
      if (L == QV_LAYOUT_DENSE_UNION) st = put(w, QV_SWAP_4);
      break;
    case QV_LAYOUT_VIEW: {
      if ((st = put(w, QV_SWAP_VIEW))) return st;
      if (w->var_i >= w->n_var)
        return qv_error_set(w->error, QV_EINVAL, "too few variadicBufferCounts");
      int64_t c = w->var[w->var_i++];
      for (int64_t j = 0; j < c && !st; j++) st = put(w, QV_SWAP_NONE);
      break;
    }
    default:
      for (int s = 1; s < n && !st; s++) st = put(w, qvi_rb_swap_kind(&v->type, s));
      break;
  }
  if (st || v->dictionary) return st; /* a dictionary's values travel in their own batches */
  for (int64_t i = 0; i < v->n_children && !st; i++) st = walk(w, &v->children[i], depth + 1);
  return st;
}

QvStatus qvi_rb_swap_kinds(const QvArrayView *roots, int64_t n_roots, const int64_t *var_counts,
                          int64_t n_var, QvSwapKind *kinds, int64_t n_kinds, QvError *error) {
  Walk w = {var_counts, n_var, 0, kinds, n_kinds, 0, error};
  QvStatus st = QV_OK;
  for (int64_t i = 0; i < n_roots && !st; i++) st = walk(&w, &roots[i], 0);
  if (!st && w.k != n_kinds)
    st = qv_error_set(error, QV_EINVAL, "the batch has %lld buffers, the schema uses %lld",
                      (long long)n_kinds, (long long)w.k);
  return st;
}
