/* quiver cat FILE|-: prints the values of every Tensor and SparseTensor
 * message. A dense tensor's values (and a sparse tensor's whose dense form
 * has at most 1000 elements, densified) are laid out
 * like NumPy's str(array): nested brackets, columns aligned per array,
 * lines wrapped at 75 characters, and arrays of more than 1000 elements
 * summarised with '...' keeping 3 items at each end of every long axis.
 * Floats use NumPy's default rules: positional unless the non-zero
 * magnitudes reach 1e8, go below 1e-4 or span more than 1000x, and at most
 * 8 fractional digits, as few as identify the value in its own type. */
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "quiver/advanced.h"
#include "cli.h"
#include "text.h"
#include "rb_print.h"
#include "quiver/ipc.h"
#include "quiver/sparse_ipc.h"
#include "quiver/tensor_ipc.h"

#define LINE_WIDTH 75
#define THRESHOLD 1000
#define EDGE_ITEMS 3
#define PRECISION 8
/* Beyond this many shown values (only reachable with many short axes,
 * e.g. a broadcast tensor with zero strides) cat prints a note instead. */
#define MAX_SHOWN 1000000

/* ---- element access and formatting */

typedef struct Printer {
  const QvTensor *t;
  bool summarize;
  bool is_float, is_signed;
  /* integers */
  int int_width;
  /* floats */
  bool exp_format;
  int pad_left, pad_right, precision, exp_size;
  bool failed;
} Printer;

static const uint8_t *element(const QvTensor *t, const int64_t *index) {
  const uint8_t *p = t->data;
  for (int32_t i = 0; i < t->ndim; i++) p += index[i] * t->strides[i];
  return p;
}

static double load_float(QvArrowType type, const uint8_t *p) {
  if (type == QV_ARROW_FLOAT16) {
    uint16_t h;
    memcpy(&h, p, 2);
    return qv_half_to_float(h);
  }
  if (type == QV_ARROW_FLOAT32) {
    float f;
    memcpy(&f, p, 4);
    return f;
  }
  double d;
  memcpy(&d, p, 8);
  return d;
}

static int64_t load_int(QvArrowType type, const uint8_t *p) {
  switch (type) {
    case QV_ARROW_INT8: return (int8_t)p[0];
    case QV_ARROW_INT16: { int16_t v; memcpy(&v, p, 2); return v; }
    case QV_ARROW_INT32: { int32_t v; memcpy(&v, p, 4); return v; }
    default: { int64_t v; memcpy(&v, p, 8); return v; }
  }
}

static uint64_t load_uint(QvArrowType type, const uint8_t *p) {
  switch (type) {
    case QV_ARROW_UINT8: return p[0];
    case QV_ARROW_UINT16: { uint16_t v; memcpy(&v, p, 2); return v; }
    case QV_ARROW_UINT32: { uint32_t v; memcpy(&v, p, 4); return v; }
    default: { uint64_t v; memcpy(&v, p, 8); return v; }
  }
}

/* Does the decimal text s read back as v in the tensor's own float type? */
static bool roundtrips(QvArrowType type, double v, const char *s) {
  double r = strtod(s, NULL);
  if (type == QV_ARROW_FLOAT16) return qv_float_to_half((float)r) == qv_float_to_half((float)v);
  if (type == QV_ARROW_FLOAT32) return (float)r == (float)v;
  return r == v;
}

/* Fewest digits (up to PRECISION) after the point, in positional or
 * scientific notation, that identify v. */
static int shortest_digits(QvArrowType type, double v, bool exp) {
  char buf[400];
  for (int k = 0; k < PRECISION; k++) {
    snprintf(buf, sizeof buf, exp ? "%.*e" : "%.*f", k, v);
    if (roundtrips(type, v, buf)) return k;
  }
  return PRECISION;
}

/* Positional text of v split at the point, trailing zeros trimmed. */
static void positional(QvArrowType type, double v, char *ip, size_t ipn, char *fp, size_t fpn) {
  char buf[400];
  snprintf(buf, sizeof buf, "%.*f", shortest_digits(type, v, false), v);
  char *dot = strchr(buf, '.');
  const char *frac = "";
  if (dot) {
    *dot = '\0';
    frac = dot + 1;
    size_t n = strlen(frac);
    while (n > 0 && dot[n] == '0') dot[n--] = '\0';
  }
  snprintf(ip, ipn, "%s", buf);
  snprintf(fp, fpn, "%s", frac);
}

/* Scientific text of v with `digits` fractional mantissa digits: the parts
 * before the point, after it, and the exponent's sign and digits. */
static void scientific(double v, int digits, char *ip, size_t ipn, char *fp, size_t fpn,
                       char *esign, char *ep, size_t epn) {
  char buf[64];
  snprintf(buf, sizeof buf, "%.*e", digits, v);
  char *e = strchr(buf, 'e');
  *e = '\0';
  *esign = e[1];
  snprintf(ep, epn, "%s", e + 2);
  char *dot = strchr(buf, '.');
  const char *frac = "";
  if (dot) {
    *dot = '\0';
    frac = dot + 1;
  }
  snprintf(ip, ipn, "%s", buf);
  snprintf(fp, fpn, "%s", frac);
}

static void measure(Printer *pr, const uint8_t *p, double *min_abs, double *max_abs,
                    bool *any_finite, bool *neg_inf, bool *non_finite) {
  QvArrowType type = pr->t->type;
  char ip[400], fp[400];
  if (!pr->is_float) {
    char buf[32];
    if (pr->is_signed)
      snprintf(buf, sizeof buf, "%" PRId64, load_int(type, p));
    else
      snprintf(buf, sizeof buf, "%" PRIu64, load_uint(type, p));
    int w = (int)strlen(buf);
    if (w > pr->int_width) pr->int_width = w;
    return;
  }
  double v = load_float(type, p);
  if (!isfinite(v)) {
    *non_finite = true;
    if (isinf(v) && v < 0) *neg_inf = true;
    return;
  }
  if (!pr->exp_format) {
    positional(type, v, ip, sizeof ip, fp, sizeof fp);
    int l = (int)strlen(ip), r = (int)strlen(fp);
    if (!*any_finite || l > pr->pad_left) pr->pad_left = l;
    if (!*any_finite || r > pr->pad_right) pr->pad_right = r;
  } else {
    int k = shortest_digits(type, v, true);
    char sign, ep[16];
    scientific(v, k, ip, sizeof ip, fp, sizeof fp, &sign, ep, sizeof ep);
    int l = (int)strlen(ip), es = (int)strlen(ep);
    if (!*any_finite || l > pr->pad_left) pr->pad_left = l;
    if (!*any_finite || k > pr->precision) pr->precision = k;
    if (!*any_finite || es > pr->exp_size) pr->exp_size = es;
  }
  *any_finite = true;
  double a = fabs(v);
  if (a != 0) {
    if (*min_abs == 0 || a < *min_abs) *min_abs = a;
    if (a > *max_abs) *max_abs = a;
  }
}

static void format_value(const Printer *pr, const uint8_t *p, QvCliText *out) {
  QvArrowType type = pr->t->type;
  char buf[400];
  if (!pr->is_float) {
    if (pr->is_signed)
      snprintf(buf, sizeof buf, "%" PRId64, load_int(type, p));
    else
      snprintf(buf, sizeof buf, "%" PRIu64, load_uint(type, p));
    cli_text_spaces(out, pr->int_width - (int)strlen(buf));
    cli_text_puts(out, buf);
    return;
  }
  double v = load_float(type, p);
  if (!isfinite(v)) {
    const char *s = isnan(v) ? "nan" : v < 0 ? "-inf" : "inf";
    cli_text_spaces(out, pr->pad_left + pr->pad_right + 1 - (int)strlen(s));
    cli_text_puts(out, s);
    return;
  }
  char ip[400], fp[400];
  if (!pr->exp_format) {
    positional(type, v, ip, sizeof ip, fp, sizeof fp);
    cli_text_spaces(out, pr->pad_left - (int)strlen(ip));
    cli_text_puts(out, ip);
    cli_text_puts(out, ".");
    cli_text_puts(out, fp);
    cli_text_spaces(out, pr->pad_right - (int)strlen(fp));
  } else {
    char sign, ep[16];
    scientific(v, pr->precision, ip, sizeof ip, fp, sizeof fp, &sign, ep, sizeof ep);
    cli_text_spaces(out, pr->pad_left - (int)strlen(ip));
    cli_text_puts(out, ip);
    cli_text_puts(out, ".");
    cli_text_puts(out, fp);
    char e[4] = {'e', sign, '\0', '\0'};
    cli_text_puts(out, e);
    for (int i = (int)strlen(ep); i < pr->exp_size; i++) cli_text_puts(out, "0");
    cli_text_puts(out, ep);
  }
}

/* ---- the indices shown: every index, or 3 at each end of a long axis */

static bool axis_elided(const Printer *pr, int axis) {
  return pr->summarize && pr->t->shape[axis] > 2 * EDGE_ITEMS;
}

static int64_t shown_count(const Printer *pr, int axis) {
  return axis_elided(pr, axis) ? 2 * EDGE_ITEMS : pr->t->shape[axis];
}

/* k-th shown index along an axis. */
static int64_t shown_index(const Printer *pr, int axis, int64_t k) {
  if (axis_elided(pr, axis) && k >= EDGE_ITEMS) return pr->t->shape[axis] - 2 * EDGE_ITEMS + k;
  return k;
}

static void measure_all(Printer *pr) {
  const QvTensor *t = pr->t;
  int64_t pos[QV_TENSOR_MAX_NDIM] = {0}, index[QV_TENSOR_MAX_NDIM] = {0};
  double min_abs = 0, max_abs = 0;
  bool any_finite = false, neg_inf = false, non_finite = false;
  /* two passes for floats: the first decides the notation */
  for (int pass = 0; pass < (pr->is_float ? 2 : 1); pass++) {
    any_finite = false;
    memset(pos, 0, sizeof pos);
    for (;;) {
      for (int32_t i = 0; i < t->ndim; i++) index[i] = shown_index(pr, i, pos[i]);
      measure(pr, element(t, index), &min_abs, &max_abs, &any_finite, &neg_inf, &non_finite);
      int32_t i = t->ndim - 1;
      while (i >= 0 && ++pos[i] == shown_count(pr, i)) pos[i--] = 0;
      if (i < 0) break;
    }
    if (pass == 0 && pr->is_float && max_abs > 0 &&
        (max_abs >= 1e8 || min_abs < 1e-4 || max_abs / min_abs > 1000.0)) {
      pr->exp_format = true;
      pr->pad_left = pr->pad_right = pr->precision = 0;
    } else {
      break;
    }
  }
  if (!pr->is_float) return;
  if (!any_finite) pr->pad_left = pr->pad_right = 0;
  if (pr->exp_format) {
    if (pr->exp_size < 2) pr->exp_size = 2;
    pr->pad_right = pr->exp_size + 2 + pr->precision;
  }
  if (non_finite) {
    int offset = pr->pad_right + 1;
    int inflen = 3 + (neg_inf ? 1 : 0);
    if (3 - offset > pr->pad_left) pr->pad_left = 3 - offset;
    if (inflen - offset > pr->pad_left) pr->pad_left = inflen - offset;
  }
}

/* Appends word to the current line, first flushing the line into s when it
 * would pass the width (NumPy's _extendLine). */
static void extend_line(QvCliText *s, QvCliText *line, const char *word, size_t width, size_t hang_len,
                        const char *hang) {
  bool wrap = line->len + strlen(word) > width && line->len > hang_len;
  if (wrap) {
    size_t n = line->len;
    while (n > 0 && line->p[n - 1] == ' ') n--;
    cli_text_putn(s, line->p, n);
    cli_text_puts(s, "\n");
    line->len = 0;
    cli_text_puts(line, hang);
  }
  cli_text_puts(line, word);
}

/* NumPy's _formatArray recursion: returns "[...]" for the sub-array at
 * index[0..axis). */
static void format_array(Printer *pr, int64_t *index, int axis, const char *hang, size_t width,
                         QvCliText *out) {
  const QvTensor *t = pr->t;
  size_t hang_len = strlen(hang);
  char *next_hang = malloc(hang_len + 2);
  if (next_hang == NULL) {
    out->failed = true;
    return;
  }
  memcpy(next_hang, hang, hang_len);
  next_hang[hang_len] = ' ';
  next_hang[hang_len + 1] = '\0';
  size_t next_width = width - 1;
  int axes_left = t->ndim - axis;
  int64_t n = shown_count(pr, axis);
  bool elided = axis_elided(pr, axis);
  QvCliText s = {0};
  if (axes_left == 1) {
    /* room for the closing bracket */
    size_t elem_width = width - 1;
    QvCliText line = {0}, word = {0};
    cli_text_puts(&line, hang);
    for (int64_t k = 0; k < n; k++) {
      if (elided && k == EDGE_ITEMS) {
        extend_line(&s, &line, "...", elem_width, hang_len, hang);
        cli_text_puts(&line, " ");
      }
      index[axis] = shown_index(pr, axis, k);
      word.len = 0;
      if (word.p) word.p[0] = '\0';
      format_value(pr, element(t, index), &word);
      extend_line(&s, &line, word.p ? word.p : "", elem_width, hang_len, hang);
      if (k + 1 < n) cli_text_puts(&line, " ");
    }
    cli_text_putn(&s, line.p, line.len);
    if (line.failed || word.failed) s.failed = true;
    cli_text_free(&line);
    cli_text_free(&word);
  } else {
    char seps[QV_TENSOR_MAX_NDIM + 1];
    memset(seps, '\n', (size_t)(axes_left - 1));
    seps[axes_left - 1] = '\0';
    for (int64_t k = 0; k < n; k++) {
      if (elided && k == EDGE_ITEMS) {
        cli_text_puts(&s, hang);
        cli_text_puts(&s, "...");
        cli_text_puts(&s, seps);
      }
      index[axis] = shown_index(pr, axis, k);
      QvCliText nested = {0};
      format_array(pr, index, axis + 1, next_hang, next_width, &nested);
      cli_text_puts(&s, hang);
      cli_text_putn(&s, nested.p ? nested.p : "", nested.len);
      if (nested.failed) s.failed = true;
      cli_text_free(&nested);
      if (k + 1 < n) cli_text_puts(&s, seps);
    }
  }
  free(next_hang);
  cli_text_puts(out, "[");
  if (s.len >= hang_len) cli_text_putn(out, s.p + hang_len, s.len - hang_len);
  cli_text_puts(out, "]");
  if (s.failed) out->failed = true;
  cli_text_free(&s);
}

/* Prints the tensor's values; false when out of memory. */
static bool print_values(const QvTensor *t, FILE *f) {
  Printer pr = {0};
  pr.t = t;
  pr.is_float = t->type == QV_ARROW_FLOAT16 || t->type == QV_ARROW_FLOAT32 ||
                t->type == QV_ARROW_FLOAT64;
  pr.is_signed = t->type <= QV_ARROW_INT64;
  int64_t size = qv_tensor_n_elements(t);
  if (size == 0) {
    fputs("[]\n", f);
    return true;
  }
  pr.summarize = size > THRESHOLD;
  double shown = 1;
  for (int32_t i = 0; i < t->ndim; i++) shown *= (double)shown_count(&pr, i);
  if (shown > MAX_SHOWN) {
    fprintf(f, "(%.0f values would be shown; too many to print)\n", shown);
    return true;
  }
  measure_all(&pr);
  QvCliText out = {0};
  if (t->ndim == 0) {
    format_value(&pr, t->data, &out);
    /* a lone float reads like Python's: "3.0", not "3." */
    if (pr.is_float && !pr.exp_format && out.len > 0 && out.p[out.len - 1] == '.')
      cli_text_puts(&out, "0");
  } else {
    int64_t index[QV_TENSOR_MAX_NDIM] = {0};
    format_array(&pr, index, 0, " ", LINE_WIDTH, &out);
  }
  bool ok = !out.failed;
  if (ok) {
    fputs(out.p ? out.p : "", f);
    fputc('\n', f);
  }
  cli_text_free(&out);
  return ok;
}

/* "[3, 4]" and, when the dimensions have names, " names=[x, y]" */
static void print_shape(int32_t ndim, const int64_t *shape, const char *const *names, FILE *f) {
  for (int32_t d = 0; d < ndim; d++) fprintf(f, "%s%" PRId64, d ? ", " : "", shape[d]);
  fputs("]", f);
  if (names) {
    fputs(" names=[", f);
    for (int32_t d = 0; d < ndim; d++) {
      QvCliText name = {0};
      cli_text_put_name(&name, names[d], strlen(names[d]));
      fprintf(f, "%s%s", d ? ", " : "", cli_text_str(&name));
      cli_text_free(&name);
    }
    fputs("]", f);
  }
}

static void print_header(int64_t i, const QvTensor *t, FILE *f) {
  fprintf(f, "message %" PRId64 ": Tensor %s shape=[", i, qv_arrow_type_name(t->type));
  print_shape(t->ndim, t->shape, t->dim_names, f);
  const char *layout = qv_tensor_is_row_major(t)      ? "row-major"
                       : qv_tensor_is_column_major(t) ? "column-major"
                                                      : "strided";
  fprintf(f, " %s\n", layout);
}

/* ---- sparse tensors */

static void print_sparse_header(int64_t i, const QvSparseTensor *t, FILE *f) {
  fprintf(f, "message %" PRId64 ": SparseTensor %s %s shape=[", i,
          t->format == QV_SPARSE_COO   ? "COO"
          : t->format == QV_SPARSE_CSR ? "CSR"
          : t->format == QV_SPARSE_CSC ? "CSC"
                                       : "CSF",
          qv_arrow_type_name(t->value_type));
  print_shape(t->ndim, t->shape, t->dim_names, f);
  fprintf(f, " nnz=%" PRId64 " index=%s", t->nnz, qv_arrow_type_name(t->index_type));
  if (t->format != QV_SPARSE_COO) fprintf(f, " indptr=%s", qv_arrow_type_name(t->indptr_type));
  if (t->format == QV_SPARSE_CSF) {
    fputs(" axis_order=[", f);
    for (int32_t d = 0; d < t->ndim; d++) fprintf(f, "%s%d", d ? ", " : "", (int)t->axis_order[d]);
    fputs("]", f);
  }
  fputc('\n', f);
}

/* Dense size of a sparse tensor, saturating. */
static double dense_size(const QvSparseTensor *t) {
  double n = 1;
  for (int32_t d = 0; d < t->ndim; d++) n *= (double)t->shape[d];
  return n;
}

/* Small tensors print densified; larger ones as the list of their
 * non-zeros in row-major order, "(i, j): value", at most THRESHOLD. */
static QvStatus print_sparse(const QvSparseTensor *t, FILE *f, QvError *err) {
  QvStatus st;
  if (dense_size(t) <= THRESHOLD) {
    QvTensor dense;
    if ((st = qv_sparse_to_dense(t, NULL, &dense, err))) return st;
    bool ok = print_values(&dense, f);
    qv_tensor_reset(&dense);
    return ok ? QV_OK : qv_error_set(err, QV_ENOMEM, "out of memory formatting values");
  }
  QvSparseTensor coo;
  QvSparseOptions o = {.index_type = QV_ARROW_INT64};
  if ((st = qv_sparse_convert(t, QV_SPARSE_COO, &o, &coo, err))) return st;
  int64_t shown = coo.nnz < THRESHOLD ? coo.nnz : THRESHOLD;
  QvTensor vals;
  st = qv_tensor_init(&vals, &(QvTensorDesc){.type = coo.value_type, .ndim = 1, .shape = &shown,
                                             .data = coo.values,
                                             .data_size = shown * (int64_t)qv_arrow_type_size(coo.value_type)}, err);
  if (st) {
    qv_sparse_reset(&coo);
    return st;
  }
  Printer pr = {0};
  pr.t = &vals;
  pr.is_float = vals.type == QV_ARROW_FLOAT16 || vals.type == QV_ARROW_FLOAT32 ||
                vals.type == QV_ARROW_FLOAT64;
  pr.is_signed = vals.type <= QV_ARROW_INT64;
  if (shown > 0) measure_all(&pr);
  QvCliText line = {0};
  for (int64_t i = 0; i < shown && !line.failed; i++) {
    line.len = 0;
    cli_text_puts(&line, "(");
    for (int32_t d = 0; d < coo.ndim; d++) {
      char num[32];
      snprintf(num, sizeof num, "%s%" PRId64, d ? ", " : "",
               qv_index_load(coo.coords + i * coo.coords_strides[0] + d * coo.coords_strides[1],
                             QV_ARROW_INT64, 0));
      cli_text_puts(&line, num);
    }
    cli_text_puts(&line, "): ");
    int64_t index = i;
    format_value(&pr, element(&vals, &index), &line);
    if (!line.failed) fprintf(f, "%s\n", line.p);
  }
  bool ok = !line.failed;
  cli_text_free(&line);
  if (ok && coo.nnz > shown) fprintf(f, "... (%" PRId64 " more non-zeros)\n", coo.nnz - shown);
  if (ok && coo.nnz == 0) fputs("(no non-zeros)\n", f);
  qv_tensor_reset(&vals);
  qv_sparse_reset(&coo);
  return ok ? QV_OK : qv_error_set(err, QV_ENOMEM, "out of memory formatting values");
}

/* Errors name the input: "quiver cat: FILE: ...". */
static int fail(const char *path, QvError *err) {
  fflush(stdout);
  qv_error_prefix(err, "%s", strcmp(path, "-") == 0 ? "stdin" : path);
  return cli_fail("cat", err);
}

int qv_cmd_cat(int argc, char **argv) {
  for (int i = 0; i < argc && strcmp(argv[i], "--") != 0; i++)
    if (strcmp(argv[i], "--json") == 0) return qv_cmd_cat_json(argc, argv);
  const char *path = NULL, *p;
  QvCliArgs a;
  cli_args_init(&a, "cat", argc, argv);
  while (cli_args_next(&a)) {
    if ((p = cli_args_positional(&a)) != NULL && path == NULL) path = p;
    else if (cli_args_threads(&a)) continue;
    else if (cli_args_quirks(&a)) continue;
    else cli_args_unknown(&a);
  }
  if (a.status) return a.status;
  if (path == NULL) return cli_usage_error("cat", "needs a FILE ('-' for stdin)");
  QvCliInput in;
  QvError err;
  qv_error_clear(&err);
  if (cli_input_open(path, &in, &err)) return cli_fail("cat", &err);
  int status;
  /* Tensors are printed message by message; everything else is read as
   * record batches (an Arrow file through its footer), whose reader names
   * what is wrong with input that is neither. */
  if (!cli_holds_tensors(in.data, in.size)) {
    status = 0;
    if (cli_print_record_batches(in.data, in.size, stdout, &err) != QV_OK) {
      fflush(stdout);
      status = fail(path, &err);
    }
    cli_input_free(&in);
    return status;
  }
  QvIpcReader *r;
  QvStatus st = cli_reader_memory(&r, in.data, in.size, &err);
  if (st) {
    cli_input_free(&in);
    return fail(path, &err);
  }
  int rc = 0;
  bool prev_tensor = false;
  for (int64_t i = 0;; i++) {
    QvIpcMessage msg;
    st = qv_ipc_reader_next(r, &msg, &err);
    if (st == QV_EOS) break;
    if (st) {
      fflush(stdout);
      rc = fail(path, &err);
      break;
    }
    /* a blank line around each tensor's values, one-line notes together */
    uint8_t kind = msg.message.header_type;
    bool is_tensor = kind == QV_HEADER_TENSOR || kind == QV_HEADER_SPARSE_TENSOR;
    if (i > 0 && (is_tensor || prev_tensor)) fputc('\n', stdout);
    prev_tensor = is_tensor;
    if (!is_tensor) {
      printf("message %" PRId64 ": %s (values not shown)\n", i, qv_header_type_name(kind));
      qv_ipc_message_reset(&msg);
      continue;
    }
    if (kind == QV_HEADER_SPARSE_TENSOR) {
      QvSparseTensor t;
      st = qv_sparse_from_message(&msg, &t, NULL, &err);
      if (st) qv_error_prefix(&err, "message %" PRId64 " at offset %" PRId64, i, msg.offset);
      qv_ipc_message_reset(&msg);
      if (st == QV_OK) {
        print_sparse_header(i, &t, stdout);
        st = print_sparse(&t, stdout, &err);
        if (st) qv_error_prefix(&err, "message %" PRId64, i);
        qv_sparse_reset(&t);
      }
      if (st) {
        fflush(stdout);
        rc = fail(path, &err);
        break;
      }
      continue;
    }
    QvTensor t;
    st = qv_tensor_from_message(&msg, &t, &err);
    if (st) qv_error_prefix(&err, "message %" PRId64 " at offset %" PRId64, i, msg.offset);
    qv_ipc_message_reset(&msg);
    if (st) {
      fflush(stdout);
      rc = fail(path, &err);
      break;
    }
    print_header(i, &t, stdout);
    bool ok = print_values(&t, stdout);
    qv_tensor_reset(&t);
    if (!ok) {
      qv_error_set(&err, QV_ENOMEM, "out of memory formatting message %" PRId64, i);
      rc = fail(path, &err);
      break;
    }
  }
  qv_ipc_reader_free(r);
  cli_input_free(&in);
  return rc; /* main checks that stdout was written */
}
