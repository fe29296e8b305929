/* Tables as tensors (quiver/table_tensor.h): Arrow C++'s RecordBatch::ToTensor
 * rules over the C Data Interface. */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "quiver/array.h"
#include "quiver/sparse.h" /* QV_DEFAULT_MAX_OUTPUT_SIZE */
#include "quiver/table_tensor.h"
#include "util/copy.h"
#include "util/cpu.h"
#include "util/grow.h"
#include "util/options.h"
#include "util/pool.h"

static bool is_float(QvArrowType t) {
  return t == QV_ARROW_FLOAT16 || t == QV_ARROW_FLOAT32 || t == QV_ARROW_FLOAT64;
}
static bool is_signed(QvArrowType t) { return t >= QV_ARROW_INT8 && t <= QV_ARROW_INT64; }
static bool is_unsigned(QvArrowType t) { return t >= QV_ARROW_UINT8 && t <= QV_ARROW_UINT64; }
static int bits_of(QvArrowType t) { return (int)qv_arrow_type_size(t) * 8; }

static QvArrowType signed_of(int bits) {
  return bits <= 8 ? QV_ARROW_INT8 : bits <= 16 ? QV_ARROW_INT16 : bits <= 32 ? QV_ARROW_INT32 : QV_ARROW_INT64;
}
static QvArrowType unsigned_of(int bits) {
  return bits <= 8 ? QV_ARROW_UINT8 : bits <= 16 ? QV_ARROW_UINT16 : bits <= 32 ? QV_ARROW_UINT32 : QV_ARROW_UINT64;
}
static QvArrowType float_of(int bits) {
  return bits <= 16 ? QV_ARROW_FLOAT16 : bits <= 32 ? QV_ARROW_FLOAT32 : QV_ARROW_FLOAT64;
}
/* The float an integer of `bits` promotes to (int8 + float32 = float32,
 * int32 + float32 = float64): float16 for 8 bits, float32 for 16, else 64. */
static int int_as_float_bits(int bits) { return bits <= 8 ? 16 : bits <= 16 ? 32 : 64; }

/* Arrow C++'s field merge with promote_integer_to_float, promote_integer_sign
 * and promote_numeric_width, for two numeric types (float16 handled by the
 * caller). */
static QvStatus merge(QvArrowType a, QvArrowType b, const char *a_name, const char *b_name,
                      QvArrowType *out, QvError *error) {
  if (a == b) {
    *out = a;
    return QV_OK;
  }
  if (is_float(a) || is_float(b)) {
    int fa = is_float(a) ? bits_of(a) : int_as_float_bits(bits_of(a));
    int fb = is_float(b) ? bits_of(b) : int_as_float_bits(bits_of(b));
    *out = float_of(fa > fb ? fa : fb);
    return QV_OK;
  }
  int wa = bits_of(a), wb = bits_of(b);
  if (is_signed(a) == is_signed(b)) {
    *out = is_signed(a) ? signed_of(wa > wb ? wa : wb) : unsigned_of(wa > wb ? wa : wb);
    return QV_OK;
  }
  int wu = is_unsigned(a) ? wa : wb, ws = is_unsigned(a) ? wb : wa;
  if (wu < ws) {
    *out = signed_of(ws);
    return QV_OK;
  }
  if (wu == 64)
    return qv_error_set(error, QV_EINVAL,
                        "columns '%s' (%s) and '%s' (%s) have no common integer type: uint64 "
                        "does not fit a signed integer",
                        a_name, qv_arrow_type_name(a), b_name, qv_arrow_type_name(b));
  *out = signed_of(wu * 2);
  return QV_OK;
}

/* A non-numeric type as Arrow C++'s DataType::ToString spells the simple
 * ones (the parameters of parameterized types left out). */
static const char *cpp_type_name(QvArrowType t) {
  switch (t) {
    case QV_ARROW_STRING: return "string";
    case QV_ARROW_LARGE_STRING: return "large_string";
    case QV_ARROW_STRING_VIEW: return "string_view";
    case QV_ARROW_DATE32: return "date32[day]";
    case QV_ARROW_DATE64: return "date64[ms]";
    default: return qv_arrow_type_name(t);
  }
}

/* The chosen columns as schema child indices. */
typedef struct Chosen {
  int64_t n;
  int64_t *index;
} Chosen;

static void names_list(const struct ArrowSchema *schema, char *buf, size_t size) {
  size_t n = 0;
  buf[0] = '\0';
  for (int64_t i = 0; i < schema->n_children && n < size; i++) {
    const char *nm = schema->children[i]->name ? schema->children[i]->name : "";
    n += (size_t)snprintf(buf + n, size - n, "%s'%s'", i ? ", " : "", nm);
  }
}

static QvStatus choose(const struct ArrowSchema *schema, const QvTableToTensorOptions *o,
                       Chosen *c, QvError *error) {
  c->n = o->columns ? o->n_columns : schema->n_children;
  c->index = NULL;
  if (o->columns && o->n_columns < 0)
    return qv_error_set(error, QV_EARG, "n_columns = %lld is negative", (long long)o->n_columns);
  if (c->n == 0) return QV_OK;
  c->index = malloc((size_t)c->n * sizeof *c->index);
  if (c->index == NULL) return qv_error_set(error, QV_ENOMEM, "out of memory");
  for (int64_t k = 0; k < c->n; k++) {
    if (o->columns == NULL) {
      c->index[k] = k;
      continue;
    }
    const char *want = o->columns[k];
    if (want == NULL) {
      free(c->index);
      c->index = NULL;
      return qv_error_set(error, QV_EARG, "columns[%lld] is NULL", (long long)k);
    }
    int64_t found = -1, hits = 0;
    for (int64_t i = 0; i < schema->n_children; i++) {
      const char *nm = schema->children[i]->name;
      if (nm != NULL && strcmp(nm, want) == 0) {
        if (found < 0) found = i;
        hits++;
      }
    }
    if (hits != 1) {
      char list[512];
      names_list(schema, list, sizeof list);
      free(c->index);
      c->index = NULL;
      return hits == 0 ? qv_error_set(error, QV_EINVAL, "no column named '%s' (columns: %s)",
                                      want, list)
                       : qv_error_set(error, QV_EINVAL,
                                      "%lld columns are named '%s': the name is ambiguous "
                                      "(columns: %s)",
                                      (long long)hits, want, list);
    }
    c->index[k] = found;
  }
  return QV_OK;
}

static const char *col_name(const struct ArrowSchema *schema, int64_t i) {
  const char *nm = schema->children[i]->name;
  return nm ? nm : "";
}

/* Type checks in Arrow C++'s order after the null check: the first column
 * an integer or float, each other numeric and not float16 mixed, merged. */
static QvStatus result_type(const struct ArrowSchema *schema, const Chosen *c, bool null_to_nan,
                            QvArrowType *out, QvError *error) {
  if (c->n == 0)
    return qv_error_set(error, QV_EINVAL,
                        "Conversion to Tensor for RecordBatches without columns/schema is not "
                        "supported.");
  QvArrowType acc = QV_ARROW_NONE;
  const char *acc_name = "";
  for (int64_t k = 0; k < c->n; k++) {
    QvArrowSchemaView v;
    QvStatus st = qv_arrow_schema_view_init(&v, schema->children[c->index[k]], error);
    if (st) return qv_error_prefix(error, "column '%s'", col_name(schema, c->index[k])), st;
    QvArrowType t = v.type;
    if (!(t >= QV_ARROW_INT8 && t < QV_ARROW_NUMERIC_END))
      return qv_error_set(error, QV_EINVAL, "column '%s': DataType is not supported: %s",
                          col_name(schema, c->index[k]),
                          cpp_type_name(t));
    if (k == 0) {
      acc = t;
      acc_name = col_name(schema, c->index[k]);
      continue;
    }
    if ((t == QV_ARROW_FLOAT16 || acc == QV_ARROW_FLOAT16) && t != acc)
      return qv_error_set(error, QV_ENOTSUP,
                          "column '%s' (%s) with %s: Casting from or to halffloat is not "
                          "supported.",
                          col_name(schema, c->index[k]), qv_arrow_type_name(t),
                          qv_arrow_type_name(acc));
    if ((st = merge(acc, t, acc_name, col_name(schema, c->index[k]), &acc, error)) != QV_OK)
      return st;
  }
  /* merged with float32: int8..uint16 -> float32, wider -> float64 */
  if (null_to_nan && !is_float(acc)) {
    int fb = int_as_float_bits(bits_of(acc));
    acc = float_of(fb < 32 ? 32 : fb);
  }
  *out = acc;
  return QV_OK;
}

QvStatus qv_table_tensor_type(const struct ArrowSchema *schema,
                              const QvTableToTensorOptions *options, QvArrowType *out,
                              QvError *error) {
  if (schema == NULL || out == NULL)
    return qv_error_set(error, QV_EARG, "qv_table_tensor_type: schema or out is NULL");
  *out = QV_ARROW_NONE;
  QvTableToTensorOptions o;
  QvStatus st = QV_OPTIONS_LOAD(&o, options, QvTableToTensorOptions, error);
  if (st) return st;
  Chosen c;
  if ((st = choose(schema, &o, &c, error)) != QV_OK) return st;
  st = result_type(schema, &c, o.null_to_nan, out, error);
  free(c.index);
  return st;
}

/* ---- the copy */

/* One source column chunk: `n` values of type `in` at `values`, validity
 * bits at `bits` (NULL: none) from bit `bit0`. */
typedef struct Chunk {
  QvArrowType in;
  const uint8_t *values;
  const uint8_t *bits;
  int64_t bit0;
  int64_t n;
} Chunk;

static inline bool valid_at(const Chunk *ch, int64_t i) {
  if (ch->bits == NULL) return true;
  int64_t b = ch->bit0 + i;
  return (ch->bits[b >> 3] >> (b & 7)) & 1;
}

/* dst[i * step] = (OUT)src[i] for each value; nulls as NaN (floats only). */
#define CONVERT_FROM(OUT, IN)                                                              \
  do {                                                                                     \
    const IN *src = (const IN *)(const void *)ch->values;                                  \
    if (ch->bits == NULL) {                                                                \
      for (int64_t i = 0; i < ch->n; i++) dst[i * step] = (OUT)src[i];                     \
    } else {                                                                               \
      for (int64_t i = 0; i < ch->n; i++) dst[i * step] = valid_at(ch, i) ? (OUT)src[i] : nan_value; \
    }                                                                                      \
  } while (0)

#define CONVERT_TO(NAME, OUT, NANV)                                                        \
  static void NAME(const Chunk *ch, void *out, int64_t step) {                             \
    OUT *dst = out;                                                                        \
    const OUT nan_value = NANV;                                                            \
    switch (ch->in) {                                                                      \
      case QV_ARROW_INT8: CONVERT_FROM(OUT, int8_t); break;                                \
      case QV_ARROW_INT16: CONVERT_FROM(OUT, int16_t); break;                              \
      case QV_ARROW_INT32: CONVERT_FROM(OUT, int32_t); break;                              \
      case QV_ARROW_INT64: CONVERT_FROM(OUT, int64_t); break;                              \
      case QV_ARROW_UINT8: CONVERT_FROM(OUT, uint8_t); break;                              \
      case QV_ARROW_UINT16: CONVERT_FROM(OUT, uint16_t); break;                            \
      case QV_ARROW_UINT32: CONVERT_FROM(OUT, uint32_t); break;                            \
      case QV_ARROW_UINT64: CONVERT_FROM(OUT, uint64_t); break;                            \
      case QV_ARROW_FLOAT32: CONVERT_FROM(OUT, float); break;                              \
      case QV_ARROW_FLOAT64: CONVERT_FROM(OUT, double); break;                             \
      default: break; /* float16 only meets float16: copied as bits */                     \
    }                                                                                      \
  }

/* Integers never meet a null (an integer result has no nulls: null_to_nan
 * makes it a float), so their NaN is a placeholder. */
CONVERT_TO(to_i8, int8_t, 0)
CONVERT_TO(to_i16, int16_t, 0)
CONVERT_TO(to_i32, int32_t, 0)
CONVERT_TO(to_i64, int64_t, 0)
CONVERT_TO(to_u8, uint8_t, 0)
CONVERT_TO(to_u16, uint16_t, 0)
CONVERT_TO(to_u32, uint32_t, 0)
CONVERT_TO(to_u64, uint64_t, 0)
CONVERT_TO(to_f32, float, NAN)
CONVERT_TO(to_f64, double, NAN)

static void to_f16(const Chunk *ch, void *out, int64_t step) {
  uint16_t *dst = out;
  const uint16_t *src = (const uint16_t *)(const void *)ch->values;
  for (int64_t i = 0; i < ch->n; i++) dst[i * step] = valid_at(ch, i) ? src[i] : (uint16_t)0x7e00;
}

typedef void (*ConvertFn)(const Chunk *ch, void *out, int64_t step);

static ConvertFn convert_fn(QvArrowType out) {
  switch (out) {
    case QV_ARROW_INT8: return to_i8;
    case QV_ARROW_INT16: return to_i16;
    case QV_ARROW_INT32: return to_i32;
    case QV_ARROW_INT64: return to_i64;
    case QV_ARROW_UINT8: return to_u8;
    case QV_ARROW_UINT16: return to_u16;
    case QV_ARROW_UINT32: return to_u32;
    case QV_ARROW_UINT64: return to_u64;
    case QV_ARROW_FLOAT16: return to_f16;
    case QV_ARROW_FLOAT32: return to_f32;
    default: return to_f64;
  }
}

/* Views of every batch against the schema (cheap validation), rows counted. */
typedef struct Views {
  int64_t n;
  QvArrayView *v;
  int64_t rows;
} Views;

static void views_reset(Views *w) {
  for (int64_t b = 0; b < w->n; b++) qv_array_view_reset(&w->v[b]);
  free(w->v);
  memset(w, 0, sizeof *w);
}

static QvStatus views_init(const struct ArrowSchema *schema, const struct ArrowArray *const *batches,
                           int64_t n, Views *w, QvError *error) {
  memset(w, 0, sizeof *w);
  if (n == 0) return QV_OK;
  w->v = calloc((size_t)n, sizeof *w->v);
  if (w->v == NULL) return qv_error_set(error, QV_ENOMEM, "out of memory");
  for (int64_t b = 0; b < n; b++) {
    if (batches[b] == NULL || batches[b]->release == NULL) {
      views_reset(w);
      return qv_error_set(error, QV_EARG, "batch %lld is NULL or released", (long long)b);
    }
    QvStatus st = qv_array_view_init(&w->v[b], schema, error);
    if (st == QV_OK) {
      w->n = b + 1;
      st = qv_array_view_set_array(&w->v[b], batches[b], QV_VALIDATE_CHEAP, error);
    }
    if (st == QV_OK && __builtin_add_overflow(w->rows, w->v[b].length, &w->rows))
      st = qv_error_set(error, QV_ELIMIT, "the batches' rows overflow int64");
    if (st) {
      views_reset(w);
      return qv_error_prefix(error, "batch %lld", (long long)b), st;
    }
  }
  return QV_OK;
}

/* Nulls of column view `c` in the rows [off, off + len) of its parent batch. */
static int64_t first_null(const QvArrayView *c, int64_t off, int64_t len) {
  if (c->type.type == QV_ARROW_NULL) return len > 0 ? 0 : -1;
  if (c->null_count == 0 || c->buffer[0] == NULL) return -1;
  for (int64_t i = 0; i < len; i++)
    if (qv_array_view_is_null(c, off + i)) return i;
  return -1;
}

/* Output rows per row-major tile: TILE_BYTES of output (half of a common
 * L2), gathered from every column before the next tile. */
#define TILE_BYTES ((int64_t)128 << 10)

/* The output tensor, not zeroed (unlike qv_tensor_alloc): the copy writes
 * every element (each batch's rows of each column; a null as NaN), and a
 * zeroing pass would fault the pages in and write the output twice. */
static QvStatus alloc_output(QvArrowType type, const int64_t shape[2], bool column_major,
                             QvTensor *out, void **data_out, QvError *error) {
  int64_t strides[2];
  QvStatus st = qv_tensor_compute_strides(type, 2, shape, column_major, strides, error);
  if (st != QV_OK) return st;
  size_t bytes = (size_t)(shape[0] * shape[1]) * qv_arrow_type_size(type);
  void *data = qv_aligned_alloc(bytes);
  QvOwner *owner = data ? qv_owner_new(qv_free, data) : NULL;
  if (owner == NULL) {
    qv_free(data);
    return qv_error_set(error, QV_ENOMEM, "table to tensor: cannot allocate %zu bytes", bytes);
  }
  QvTensorDesc desc = {.type = type, .ndim = 2, .shape = shape, .strides = strides,
                       .data = data, .data_size = (int64_t)bytes, .owner = owner};
  st = qv_tensor_init(out, &desc, error);
  qv_owner_free(owner); /* the tensor holds its own reference */
  if (st != QV_OK) {
    memset(out, 0, sizeof *out);
    return st;
  }
  *data_out = data;
  return QV_OK;
}

/* The caller's buffer as the output tensor: a view, no owner. */
static QvStatus view_output(QvArrowType type, const int64_t shape[2], bool column_major,
                            const QvTableTensorBuffer *into, QvTensor *out, QvError *error) {
  int64_t strides[2];
  QvStatus st = qv_tensor_compute_strides(type, 2, shape, column_major, strides, error);
  if (st != QV_OK) return st;
  QvTensorDesc desc = {.type = type, .ndim = 2, .shape = shape, .strides = strides,
                       .data = into->data, .data_size = into->data_size};
  return qv_tensor_init(out, &desc, error);
}

/* The copy of the chosen columns into the output, by ranges of output
 * rows: one range on the caller, or several on a pool's threads, each
 * writing only its rows of every column (the same bytes either way). */
typedef struct CopyJob {
  const Views *w;
  const Chosen *c;
  void *data;
  QvArrowType type;
  int64_t es, tile;
  bool column_major;
  ConvertFn fn;
  int64_t *starts; /* output row of each batch's first row */
  int64_t per;     /* output rows per task */
  bool *memcpy_hit, *tiled, *planes; /* per task */
} CopyJob;

/* Row-major, when every chosen column of batch `bv` holds the output type
 * without nulls and their values lie evenly spaced in memory (an IPC body
 * lays columns of one length out so): the address of column 0's first
 * value in *p0 and the spacing in *stride, for the plane interleave kernel,
 * which writes whole output rows (util/copy.h). */
static bool as_planes(const CopyJob *j, const QvArrayView *bv, const uint8_t **p0,
                      int64_t *stride) {
  int64_t nc = j->c->n, es = j->es;
  if (j->column_major || nc < 2 || nc > QV_PLANES_MAX || (es != 1 && es != 2 && es != 4 && es != 8))
    return false;
  uintptr_t base = 0, step = 0;
  for (int64_t k = 0; k < nc; k++) {
    const QvArrayView *cv = &bv->children[j->c->index[k]];
    if (cv->type.type != j->type || (cv->null_count != 0 && cv->buffer[0])) return false;
    /* unsigned arithmetic: the columns are separate objects to C */
    uintptr_t at = (uintptr_t)cv->buffer[1] + (uintptr_t)((cv->offset + bv->offset) * es);
    if (k == 0) base = at;
    else if (k == 1) step = at - base;
    else if (at - base != (uintptr_t)k * step) return false;
  }
  *p0 = (const uint8_t *)base;
  *stride = (int64_t)step; /* two's complement: a descending order is negative */
  return true;
}

/* Output rows [g0, g1). */
static void copy_rows(const CopyJob *j, int64_t g0, int64_t g1, bool *memcpy_hit, bool *tiled,
                      bool *planes) {
  const Views *w = j->w;
  int64_t nc = j->c->n, es = j->es;
  /* the last batch starting at or before g0 */
  int64_t lo = 0, hi = w->n;
  while (hi - lo > 1) {
    int64_t mid = lo + (hi - lo) / 2;
    if (j->starts[mid] <= g0) lo = mid;
    else hi = mid;
  }
  for (int64_t b = lo; b < w->n && j->starts[b] < g1; b++) {
    const QvArrayView *bv = &w->v[b];
    int64_t row0 = j->starts[b];
    int64_t r0 = g0 > row0 ? g0 - row0 : 0;
    int64_t r1 = g1 - row0 < bv->length ? g1 - row0 : bv->length;
    if (r1 <= r0) continue;
    const uint8_t *p0;
    int64_t stride;
    if (as_planes(j, bv, &p0, &stride)) {
      /* large and not read back soon: streamed */
      qvi_copy_interleave((uint8_t *)j->data + (row0 + r0) * nc * es, p0 + r0 * es, stride,
                          r1 - r0, (int)nc, (size_t)es, true);
      *planes = true;
      continue;
    }
    if (!j->column_major && nc > 1 && r1 - r0 > j->tile) *tiled = true;
    for (int64_t r = r0, len; r < r1; r += len) { /* r += tile could overflow (INT64_MAX) */
      len = r1 - r < j->tile ? r1 - r : j->tile;
      for (int64_t k = 0; k < nc; k++) {
        const QvArrayView *cv = &bv->children[j->c->index[k]];
        int64_t off = cv->offset + bv->offset + r;
        Chunk ch = {.in = cv->type.type,
                    .values = cv->buffer[1] + off * (int64_t)qv_arrow_type_size(cv->type.type),
                    .bits = (cv->null_count != 0 && cv->buffer[0]) ? cv->buffer[0] : NULL,
                    .bit0 = off,
                    .n = len};
        uint8_t *dst;
        int64_t step;
        if (j->column_major) {
          dst = (uint8_t *)j->data + (k * w->rows + row0 + r) * es;
          step = 1;
        } else {
          dst = (uint8_t *)j->data + ((row0 + r) * nc + k) * es;
          step = nc;
        }
        if (ch.bits == NULL && ch.in == j->type && step == 1) {
          memcpy(dst, ch.values, (size_t)(ch.n * es));
          *memcpy_hit = true;
        } else {
          j->fn(&ch, dst, step);
        }
      }
    }
  }
}

static void copy_task(void *ctx, size_t i) {
  const CopyJob *j = ctx;
  int64_t g0 = (int64_t)i * j->per;
  int64_t g1 = j->w->rows - g0 < j->per ? j->w->rows : g0 + j->per;
  copy_rows(j, g0, g1, &j->memcpy_hit[i], &j->tiled[i], &j->planes[i]);
}

/* Outputs below this stay on one thread: starting workers costs more than
 * the copy saves. Ranges are at least TASK_BYTES, a few per thread. */
#define THREADS_MIN_BYTES ((int64_t)4 << 20)
#define TASK_BYTES ((int64_t)1 << 20)

static QvStatus copy_all(CopyJob *j, int threads, int64_t total, QvError *error) {
  int64_t rows = j->w->rows;
  int64_t tasks = 1;
  if (threads > 1 && total >= THREADS_MIN_BYTES && rows > 1) {
    tasks = total / TASK_BYTES;
    if (tasks > (int64_t)threads * 4) tasks = (int64_t)threads * 4;
    if (tasks > rows) tasks = rows;
  }
  j->per = (rows + tasks - 1) / tasks;
  if (j->per < 1) j->per = 1;
  tasks = rows > 0 ? (rows + j->per - 1) / j->per : 1;
  QvStatus st = QV_OK;
  QvPool *pool = NULL;
  j->starts = malloc((size_t)(j->w->n + 1) * sizeof *j->starts);
  j->memcpy_hit = calloc((size_t)tasks, sizeof *j->memcpy_hit);
  j->tiled = calloc((size_t)tasks, sizeof *j->tiled);
  j->planes = calloc((size_t)tasks, sizeof *j->planes);
  if (!j->starts || !j->memcpy_hit || !j->tiled || !j->planes) {
    st = qv_error_set(error, QV_ENOMEM, "out of memory");
    goto done;
  }
  for (int64_t b = 0, row0 = 0; b < j->w->n; b++) {
    j->starts[b] = row0;
    row0 += j->w->v[b].length;
  }
  if (tasks > 1) {
    if ((st = qvi_pool_new(&pool, tasks < threads ? (int)tasks : threads, error)) != QV_OK)
      goto done;
    qvi_path_hit(QV_PATH_TABLE_TENSOR_THREADS);
    qvi_pool_run(pool, (size_t)tasks, copy_task, j);
  } else if (rows > 0) {
    copy_task(j, 0);
  }
  bool memcpy_hit = false, tiled = false, planes = false;
  for (int64_t i = 0; i < tasks; i++) {
    memcpy_hit |= j->memcpy_hit[i];
    tiled |= j->tiled[i];
    planes |= j->planes[i];
  }
  if (memcpy_hit) qvi_path_hit(QV_PATH_TABLE_TENSOR_MEMCPY);
  if (tiled) qvi_path_hit(QV_PATH_TABLE_TENSOR_TILED);
  if (planes) qvi_path_hit(QV_PATH_TABLE_TENSOR_PLANES);
done:
  qvi_pool_free(pool);
  free(j->starts);
  free(j->memcpy_hit);
  free(j->tiled);
  free(j->planes);
  return st;
}

/* Whether [a, a + an) and [b, b + bn) share a byte (unsigned arithmetic:
 * the caller's buffer and the columns are separate objects to C). */
static bool overlaps(const void *a, int64_t an, const void *b, int64_t bn) {
  if (an <= 0 || bn <= 0) return false;
  uintptr_t pa = (uintptr_t)a, pb = (uintptr_t)b;
  return pa < pb + (uintptr_t)bn && pb < pa + (uintptr_t)an;
}

/* The caller's buffer against the output the tables make: type, shape,
 * size, address, alignment, and no overlap with the bytes the copy reads
 * (memcpy and the stores would read what they already wrote). */
static QvStatus check_into(const QvTableTensorBuffer *into, QvArrowType type,
                           const int64_t shape[2], int64_t total, const Views *w,
                           const Chosen *c, const struct ArrowSchema *schema, QvError *error) {
  if (into->type != type)
    return qv_error_set(error, QV_EARG,
                        "the buffer is for %s values but the columns give %s",
                        qv_arrow_type_name(into->type), qv_arrow_type_name(type));
  if (into->shape[0] != shape[0] || into->shape[1] != shape[1])
    return qv_error_set(error, QV_EARG,
                        "the buffer is for a [%lld, %lld] tensor but the tables give [%lld, %lld]",
                        (long long)into->shape[0], (long long)into->shape[1],
                        (long long)shape[0], (long long)shape[1]);
  if (into->data_size != total)
    return qv_error_set(error, QV_EARG,
                        "the buffer holds %lld bytes but the [%lld, %lld] %s tensor takes %lld",
                        (long long)into->data_size, (long long)shape[0], (long long)shape[1],
                        qv_arrow_type_name(type), (long long)total);
  if (total == 0) return QV_OK;
  if (into->data == NULL)
    return qv_error_set(error, QV_EARG, "the buffer's data is NULL (%lld bytes)",
                        (long long)total);
  size_t es = qv_arrow_type_size(type);
  if ((uintptr_t)into->data % es != 0)
    return qv_error_set(error, QV_EARG,
                        "the buffer at %p is not aligned to the %zu-byte %s elements",
                        into->data, es, qv_arrow_type_name(type));
  for (int64_t b = 0; b < w->n; b++) {
    const QvArrayView *bv = &w->v[b];
    for (int64_t k = 0; k < c->n; k++) {
      const QvArrayView *cv = &bv->children[c->index[k]];
      int64_t off = cv->offset + bv->offset, n = bv->length;
      int64_t ies = (int64_t)qv_arrow_type_size(cv->type.type);
      bool hit = cv->buffer[1] && overlaps(into->data, total, cv->buffer[1] + off * ies, n * ies);
      if (!hit && cv->buffer[0] && cv->null_count != 0)
        hit = overlaps(into->data, total, cv->buffer[0] + off / 8, (off + n + 7) / 8 - off / 8);
      if (hit)
        return qv_error_set(error, QV_EARG,
                            "the buffer (%lld bytes at %p) overlaps column '%s' of batch %lld",
                            (long long)total, into->data, col_name(schema, c->index[k]),
                            (long long)b);
    }
  }
  return QV_OK;
}

/* qv_table_to_tensor (into NULL: a new buffer) and qv_table_to_tensor_into. */
static QvStatus to_tensor(const char *fn, const struct ArrowSchema *schema,
                          const struct ArrowArray *const *batches, int64_t n_batches,
                          const QvTableToTensorOptions *options, const QvTableTensorBuffer *into,
                          QvTensor *out, QvError *error) {
  if (out == NULL) return qv_error_set(error, QV_EARG, "%s: out is NULL", fn);
  memset(out, 0, sizeof *out);
  if (schema == NULL || (batches == NULL && n_batches > 0) || n_batches < 0)
    return qv_error_set(error, QV_EARG, "%s: no schema or batches", fn);
  QvTableToTensorOptions o;
  QvStatus st = QV_OPTIONS_LOAD(&o, options, QvTableToTensorOptions, error);
  if (st) return st;
  if (o.threads < 0 || o.threads > QV_TABLE_TENSOR_MAX_THREADS)
    return qv_error_set(error, QV_EARG, "threads must be 0..%d, not %d",
                        QV_TABLE_TENSOR_MAX_THREADS, o.threads);
  Chosen c;
  if ((st = choose(schema, &o, &c, error)) != QV_OK) return st;
  Views w;
  if ((st = views_init(schema, batches, n_batches, &w, error)) != QV_OK) {
    free(c.index);
    return st;
  }
  if (c.n == 0) {
    st = result_type(schema, &c, o.null_to_nan, &(QvArrowType){0}, error);
    goto done;
  }
  /* nulls first, as Arrow C++ checks them */
  if (!o.null_to_nan) {
    int64_t row0 = 0;
    for (int64_t b = 0; b < w.n; b++) {
      for (int64_t k = 0; k < c.n; k++) {
        int64_t at = first_null(&w.v[b].children[c.index[k]], w.v[b].offset, w.v[b].length);
        if (at >= 0) {
          st = qv_error_set(error, QV_EINVAL,
                            "column '%s' has a null at row %lld: Can only convert a RecordBatch "
                            "with no nulls. Set null_to_nan to true to convert nulls to NaN",
                            col_name(schema, c.index[k]), (long long)(row0 + at));
          goto done;
        }
      }
      row0 += w.v[b].length;
    }
  }
  QvArrowType type;
  if ((st = result_type(schema, &c, o.null_to_nan, &type, error)) != QV_OK) goto done;
  int64_t es = (int64_t)qv_arrow_type_size(type), total, limit;
  /* nothing to allocate into a caller's buffer: its size is the bound */
  limit = into ? INT64_MAX : o.max_output_size > 0 ? o.max_output_size : QV_DEFAULT_MAX_OUTPUT_SIZE;
  if (__builtin_mul_overflow(w.rows, c.n, &total) || __builtin_mul_overflow(total, es, &total) ||
      total > limit) {
    st = qv_error_set(error, QV_ELIMIT,
                      "a tensor of %lld rows x %lld columns of %s exceeds the output limit of "
                      "%lld bytes",
                      (long long)w.rows, (long long)c.n, qv_arrow_type_name(type),
                      (long long)limit);
    goto done;
  }
  int64_t shape[2] = {w.rows, c.n};
  CopyJob j = {.w = &w, .c = &c, .type = type, .es = es, .column_major = o.column_major,
               .fn = convert_fn(type)};
  if (into) {
    if ((st = check_into(into, type, shape, total, &w, &c, schema, error)) != QV_OK ||
        (st = view_output(type, shape, o.column_major, into, out, error)) != QV_OK)
      goto done;
    j.data = into->data;
  } else if ((st = alloc_output(type, shape, o.column_major, out, &j.data, error)) != QV_OK) {
    goto done;
  }
  /* Row-major, the output is gathered a tile of rows at a time (every
   * column of TILE_BYTES of output rows), so that the tile stays in the
   * cache while each column writes its stride of it: column by column over
   * the whole output would bring every output line in once per column. */
  j.tile = o.column_major ? INT64_MAX : TILE_BYTES / (c.n * es);
  if (j.tile < 1) j.tile = 1;
  st = copy_all(&j, o.threads, total, error);
done:
  views_reset(&w);
  free(c.index);
  if (st) qv_tensor_reset(out);
  return st;
}

QvStatus qv_table_to_tensor(const struct ArrowSchema *schema,
                            const struct ArrowArray *const *batches, int64_t n_batches,
                            const QvTableToTensorOptions *options, QvTensor *out,
                            QvError *error) {
  return to_tensor("qv_table_to_tensor", schema, batches, n_batches, options, NULL, out, error);
}

QvStatus qv_table_to_tensor_into(const struct ArrowSchema *schema,
                                 const struct ArrowArray *const *batches, int64_t n_batches,
                                 const QvTableToTensorOptions *options,
                                 const QvTableTensorBuffer *into, QvTensor *out, QvError *error) {
  if (into == NULL) {
    if (out) memset(out, 0, sizeof *out);
    return qv_error_set(error, QV_EARG, "qv_table_to_tensor_into: into is NULL");
  }
  return to_tensor("qv_table_to_tensor_into", schema, batches, n_batches, options, into, out,
                   error);
}

static QvStatus stream_to_tensor(const char *fn, struct ArrowArrayStream *stream,
                                 const QvTableToTensorOptions *options,
                                 const QvTableTensorBuffer *into, QvTensor *out, QvError *error) {
  if (out == NULL) return qv_error_set(error, QV_EARG, "%s: out is NULL", fn);
  memset(out, 0, sizeof *out);
  if (stream == NULL || stream->release == NULL)
    return qv_error_set(error, QV_EARG, "%s: no stream", fn);
  struct ArrowSchema schema;
  memset(&schema, 0, sizeof schema);
  int rc = stream->get_schema(stream, &schema);
  if (rc != 0) {
    const char *m = stream->get_last_error ? stream->get_last_error(stream) : NULL;
    return qv_error_set(error, rc == ENOMEM ? QV_ENOMEM : QV_EINVAL, "reading the schema: %s",
                        m ? m : strerror(rc));
  }
  struct ArrowArray *arrays = NULL;
  const struct ArrowArray **ptrs = NULL;
  int64_t n = 0, cap = 0;
  QvStatus st = QV_OK;
  for (;;) {
    if (n == cap) {
      size_t nc = (size_t)cap;
      struct ArrowArray *na = qvi_grow_array(arrays, &nc, nc + 1, 8, sizeof *na);
      if (na == NULL) {
        st = qv_error_set(error, QV_ENOMEM, "out of memory");
        break;
      }
      arrays = na;
      cap = (int64_t)nc;
    }
    memset(&arrays[n], 0, sizeof arrays[n]);
    rc = stream->get_next(stream, &arrays[n]);
    if (rc != 0) {
      const char *m = stream->get_last_error ? stream->get_last_error(stream) : NULL;
      st = qv_error_set(error,
                        rc == ENOMEM    ? QV_ENOMEM
                        : rc == ENOTSUP ? QV_ENOTSUP
                                        : QV_EINVAL,
                        "reading batch %lld: %s",
                        (long long)n, m ? m : strerror(rc));
      break;
    }
    if (arrays[n].release == NULL) break; /* end of stream */
    n++;
  }
  if (st == QV_OK && n > 0) {
    ptrs = malloc((size_t)n * sizeof *ptrs);
    if (ptrs == NULL) st = qv_error_set(error, QV_ENOMEM, "out of memory");
    for (int64_t b = 0; ptrs && b < n; b++) ptrs[b] = &arrays[b];
  }
  if (st == QV_OK) st = to_tensor(fn, &schema, ptrs, n, options, into, out, error);
  for (int64_t b = 0; b < n; b++)
    if (arrays[b].release) arrays[b].release(&arrays[b]);
  free(arrays);
  free(ptrs);
  schema.release(&schema);
  return st;
}

QvStatus qv_table_stream_to_tensor(struct ArrowArrayStream *stream,
                                   const QvTableToTensorOptions *options, QvTensor *out,
                                   QvError *error) {
  return stream_to_tensor("qv_table_stream_to_tensor", stream, options, NULL, out, error);
}

QvStatus qv_table_stream_to_tensor_into(struct ArrowArrayStream *stream,
                                        const QvTableToTensorOptions *options,
                                        const QvTableTensorBuffer *into, QvTensor *out,
                                        QvError *error) {
  if (into == NULL) {
    if (out) memset(out, 0, sizeof *out);
    return qv_error_set(error, QV_EARG, "qv_table_stream_to_tensor_into: into is NULL");
  }
  return stream_to_tensor("qv_table_stream_to_tensor_into", stream, options, into, out, error);
}
