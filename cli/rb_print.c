/* quiver CLI: record batches as a table (rb_print.h): a schema line with
 * types described the Arrow way ("list<item: int64>"), the rows, a summary.
 * Names from the file (fields, extension types, time zones) are escaped. */
#define _XOPEN_SOURCE 700 /* wcwidth */
#include "rb_print.h"

#include <inttypes.h>
#include <locale.h>
#include <stdio.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "input.h"
#include "quiver/recordbatch_ipc.h"
#include "quiver/sparse_column.h"
#include "text.h"

/* ---- type descriptions: Arrow C++'s spelling (qv_arrow_schema_to_string),
 * escaped, since the names in it come from the file */

static void describe_field(QvCliText *t, const struct ArrowSchema *s) {
  char *text = NULL;
  if (qv_arrow_schema_to_string_alloc(s, QV_TYPE_STRING_FIELD, &text, NULL) == QV_OK) {
    cli_text_put_name(t, text, strlen(text));
  } else {
    if (s->name) cli_text_put_name(t, s->name, strlen(s->name));
    cli_text_puts(t, ": ?");
  }
  qv_free(text);
}

/* A sparse column's cell: "csr [6, 4] nnz=5" (a vector row: "[1000] nnz=3"). */
static QvStatus sparse_cell_text(const QvSparseColumn *col, int64_t row, char **out,
                                 QvError *error) {
  char buf[160];
  if (qv_sparse_column_is_null(col, row)) {
    snprintf(buf, sizeof buf, "null");
  } else {
    QvSparseTensor t;
    QvStatus st = qv_sparse_column_cell(col, row, &t, error);
    if (st) return st;
    size_t n = 0;
    if (col->type.kind == QV_SPARSE_COLUMN_TENSOR)
      n += (size_t)snprintf(buf, sizeof buf, "%s ", qv_sparse_format_name(t.format));
    n += (size_t)snprintf(buf + n, sizeof buf - n, "[");
    for (int32_t k = 0; k < t.ndim && n < sizeof buf - 40; k++)
      n += (size_t)snprintf(buf + n, sizeof buf - n, "%s%lld", k ? ", " : "",
                            (long long)t.shape[k]);
    if (n < sizeof buf - 40) snprintf(buf + n, sizeof buf - n, "] nnz=%lld", (long long)t.nnz);
    qv_sparse_reset(&t);
  }
  *out = strdup(buf);
  return *out ? QV_OK : qv_error_set(error, QV_ENOMEM, "out of memory");
}


/* ---- table printing */

#define HEAD_ROWS 10
#define TAIL_ROWS 10
#define MAX_CELL 40

typedef struct Table {
  int64_t cols;
  char **head; /* HEAD_ROWS * cols */
  char **tail; /* ring of TAIL_ROWS * cols */
  int64_t rows;
} Table;

static void table_free(Table *t) {
  for (int64_t i = 0; i < HEAD_ROWS * t->cols; i++) free(t->head[i]);
  for (int64_t i = 0; i < TAIL_ROWS * t->cols; i++) free(t->tail[i]);
  free(t->head);
  free(t->tail);
}

/* Columns `s` takes on a terminal: wcwidth() of each character in the
 * C.UTF-8 locale `utf8` (2 for CJK, 0 for combining marks), whatever the
 * user's locale; one per code point where that locale is missing. */
static size_t width_of(const char *s, locale_t utf8) {
  size_t w = 0, n = strlen(s);
  if (utf8 == (locale_t)0) {
    for (; *s; s++) w += ((unsigned char)*s & 0xC0) != 0x80;
    return w;
  }
  locale_t old = uselocale(utf8);
  mbstate_t st;
  memset(&st, 0, sizeof st);
  while (n > 0) {
    wchar_t wc;
    size_t k = mbrtowc(&wc, s, n, &st);
    if (k == 0) break;
    if (k == (size_t)-1 || k == (size_t)-2) { /* not UTF-8: a byte, a column */
      memset(&st, 0, sizeof st);
      k = 1;
      w++;
    } else {
      int cw = wcwidth(wc);
      w += cw < 0 ? 1 : (size_t)cw;
    }
    s += k;
    n -= k;
  }
  uselocale(old);
  return w;
}

static void print_cell(FILE *out, const char *s, size_t width, bool last, locale_t utf8) {
  fputs(s, out);
  if (!last)
    for (size_t k = width_of(s, utf8); k < width + 2; k++) fputc(' ', out);
}

static char **row_at(Table *t, int64_t r) {
  if (r < HEAD_ROWS) return &t->head[r * t->cols];
  return &t->tail[(r % TAIL_ROWS) * t->cols];
}

/* `names`: the column names, escaped. */
static void print_table(FILE *out, Table *t, char *const *names) {
  size_t *w = calloc((size_t)(t->cols ? t->cols : 1), sizeof *w);
  if (w == NULL) return;
  locale_t utf8 = newlocale(LC_CTYPE_MASK, "C.UTF-8", (locale_t)0);
  int64_t shown_tail = t->rows > HEAD_ROWS ? t->rows - HEAD_ROWS : 0;
  if (shown_tail > TAIL_ROWS) shown_tail = TAIL_ROWS;
  int64_t head = t->rows < HEAD_ROWS ? t->rows : HEAD_ROWS;
  for (int64_t c = 0; c < t->cols; c++) {
    w[c] = width_of(names[c], utf8);
    for (int64_t r = 0; r < head; r++) {
      size_t k = width_of(row_at(t, r)[c], utf8);
      if (k > w[c]) w[c] = k;
    }
    for (int64_t r = t->rows - shown_tail; r < t->rows; r++) {
      size_t k = width_of(row_at(t, r)[c], utf8);
      if (k > w[c]) w[c] = k;
    }
  }
  for (int64_t c = 0; c < t->cols; c++)
    print_cell(out, names[c], w[c], c + 1 == t->cols, utf8);
  fputc('\n', out);
  for (int64_t r = 0; r < head; r++) {
    for (int64_t c = 0; c < t->cols; c++) print_cell(out, row_at(t, r)[c], w[c], c + 1 == t->cols, utf8);
    fputc('\n', out);
  }
  if (t->rows > HEAD_ROWS + TAIL_ROWS)
    fprintf(out, "... %" PRId64 " rows omitted ...\n", t->rows - HEAD_ROWS - TAIL_ROWS);
  for (int64_t r = t->rows - shown_tail; r < t->rows; r++) {
    for (int64_t c = 0; c < t->cols; c++) print_cell(out, row_at(t, r)[c], w[c], c + 1 == t->cols, utf8);
    fputc('\n', out);
  }
  free(w);
  if (utf8 != (locale_t)0) freelocale(utf8);
}

/* The column names, escaped (cli_text_put_name); NULL when out of memory. */
static char **column_names(const struct ArrowSchema *schema) {
  char **names = calloc((size_t)schema->n_children + 1, sizeof *names);
  if (names == NULL) return NULL;
  for (int64_t c = 0; c < schema->n_children; c++) {
    const char *name = schema->children[c]->name;
    QvCliText e = {0};
    cli_text_putn(&e, "", 0);
    if (name) cli_text_put_name(&e, name, strlen(name));
    names[c] = e.p;
    if (e.failed) {
      for (int64_t k = 0; k <= c; k++) free(names[k]);
      free(names);
      return NULL;
    }
  }
  return names;
}

static void free_names(char **names, int64_t n) {
  for (int64_t c = 0; names && c < n; c++) free(names[c]);
  free(names);
}

/* A stream over the record batches in data[0, size) and its schema. */
static QvStatus open_memory(const uint8_t *data, size_t size, struct ArrowArrayStream *s,
                            struct ArrowSchema *schema, QvError *error) {
  QvStatus st = cli_rb_reader_memory(data, size, s, NULL, error);
  if (st) return st;
  if ((st = qv_rb_stream_get_schema(s, schema, error))) s->release(s);
  return st;
}

QvStatus cli_print_record_batches(const uint8_t *data, size_t size, FILE *out, QvError *error) {
  struct ArrowArrayStream s;
  struct ArrowSchema schema;
  QvStatus st = open_memory(data, size, &s, &schema, error);
  if (st) return st;
  QvCliText line = {0};
  cli_text_puts(&line, "schema: ");
  for (int64_t i = 0; i < schema.n_children; i++) {
    if (i) cli_text_puts(&line, ", ");
    describe_field(&line, schema.children[i]);
  }
  Table t;
  memset(&t, 0, sizeof t);
  t.cols = schema.n_children;
  t.head = calloc((size_t)(HEAD_ROWS * t.cols + 1), sizeof(char *));
  t.tail = calloc((size_t)(TAIL_ROWS * t.cols + 1), sizeof(char *));
  char **names = column_names(&schema);
  bool *sparse_col = calloc((size_t)t.cols + 1, sizeof *sparse_col);
  QvSparseColumn *scol = calloc((size_t)t.cols + 1, sizeof *scol);
  for (int64_t c = 0; sparse_col && c < t.cols; c++) {
    QvSparseColumnType ty;
    memset(&ty, 0, sizeof ty);
    sparse_col[c] = qv_sparse_column_type_from_field(schema.children[c], &ty, NULL) == QV_OK &&
                    ty.kind != QV_SPARSE_COLUMN_NONE;
    qv_sparse_column_type_reset(&ty);
  }
  QvArrayView v;
  int64_t batches = 0;
  if (line.failed || t.head == NULL || t.tail == NULL || names == NULL || sparse_col == NULL ||
      scol == NULL) {
    st = qv_error_set(error, QV_ENOMEM, "out of memory");
  } else if ((st = qv_array_view_init(&v, &schema, error)) == QV_OK) {
    fprintf(out, "%s\n", cli_text_str(&line));
    for (;;) {
      struct ArrowArray a;
      st = qv_rb_stream_get_next(&s, &a, error);
      if (st) break;
      if ((st = qv_array_view_set_array(&v, &a, QV_VALIDATE_NONE, error))) {
        a.release(&a);
        break;
      }
      if (v.length > INT64_MAX - t.rows) {
        a.release(&a);
        st = qv_error_set(error, QV_ELIMIT, "batch %" PRId64 ": more than %" PRId64 " rows in all",
                          batches, INT64_MAX);
        break;
      }
      batches++;
      /* sparse columns: validated as such, cells printed by shape and nnz */
      for (int64_t c = 0; c < t.cols && st == QV_OK; c++) {
        if (!sparse_col[c]) continue;
        qv_sparse_column_reset(&scol[c]);
        struct ArrowArray cells;
        if ((st = qv_array_share(a.children[c], &cells, error)) == QV_OK) {
          st = qv_sparse_column_init(&scol[c], schema.children[c], &cells, NULL, error);
          if (cells.release) cells.release(&cells);
          if (st) memset(&scol[c], 0, sizeof scol[c]);
        }
        if (st) qv_error_prefix(error, "batch %" PRId64, batches - 1);
      }
      if (st) {
        a.release(&a);
        break;
      }
      /* Only rows that may be shown are visited: the first HEAD_ROWS of the
       * input and the last TAIL_ROWS of this batch (a batch declaring 2^40
       * rows that take no memory costs 20 rows, not 2^40). */
      int64_t head_end = HEAD_ROWS - t.rows;
      if (head_end < 0) head_end = 0;
      if (head_end > v.length) head_end = v.length;
      int64_t tail_start = v.length > TAIL_ROWS ? v.length - TAIL_ROWS : 0;
      if (tail_start < head_end) tail_start = head_end;
      for (int64_t r = 0; r < v.length && st == QV_OK; r++) {
        if (r == head_end) r = tail_start;
        if (r >= v.length) break;
        char **row = row_at(&t, t.rows + r);
        for (int64_t c = 0; c < t.cols && st == QV_OK; c++) {
          free(row[c]);
          row[c] = NULL;
          st = sparse_col[c] ? sparse_cell_text(&scol[c], v.offset + r, &row[c], error)
                             : qv_array_view_format_human(&v.children[c], v.offset + r,
                                                          MAX_CELL, &row[c], error);
        }
      }
      t.rows += v.length;
      a.release(&a);
      if (st) break;
    }
    /* A bad batch does not hide the good ones before it: they are printed,
     * then the caller reports the error. */
    if (st == QV_EOS) st = QV_OK;
    if (st != QV_ENOMEM) {
      print_table(out, &t, names);
      fprintf(out, "(%" PRId64 " row%s in %" PRId64 " batch%s%s)\n", t.rows, t.rows == 1 ? "" : "s",
              batches, batches == 1 ? "" : "es", st ? " before the error" : "");
    }
    qv_array_view_reset(&v);
  }
  free_names(names, schema.n_children);
  for (int64_t c = 0; scol && c < t.cols; c++) qv_sparse_column_reset(&scol[c]);
  free(scol);
  free(sparse_col);
  cli_text_free(&line);
  table_free(&t);
  schema.release(&schema);
  s.release(&s);
  return st;
}

#define CELL_LINES 10

QvStatus cli_print_sparse_cells(const uint8_t *data, size_t size, FILE *out, QvError *error) {
  struct ArrowArrayStream s;
  struct ArrowSchema schema;
  QvStatus st = open_memory(data, size, &s, &schema, error);
  if (st) return st;
  int64_t cols = schema.n_children;
  bool *sparse = calloc((size_t)cols + 1, sizeof *sparse);
  bool any = false;
  for (int64_t c = 0; sparse && c < cols; c++) {
    QvSparseColumnType ty;
    memset(&ty, 0, sizeof ty);
    sparse[c] = qv_sparse_column_type_from_field(schema.children[c], &ty, NULL) == QV_OK &&
                ty.kind != QV_SPARSE_COLUMN_NONE;
    qv_sparse_column_type_reset(&ty);
    any |= sparse[c];
  }
  if (sparse == NULL) st = qv_error_set(error, QV_ENOMEM, "out of memory");
  char **names = any ? column_names(&schema) : NULL;
  if (any && names == NULL) st = qv_error_set(error, QV_ENOMEM, "out of memory");
  for (int64_t b = 0; any && st == QV_OK; b++) {
    struct ArrowArray a;
    st = qv_rb_stream_get_next(&s, &a, error);
    if (st == QV_EOS) {
      st = QV_OK;
      break;
    }
    if (st) break;
    for (int64_t c = 0; c < cols && st == QV_OK; c++) {
      if (!sparse[c]) continue;
      QvSparseColumn col;
      struct ArrowArray cells;
      if ((st = qv_array_share(a.children[c], &cells, error)) != QV_OK) break;
      st = qv_sparse_column_init(&col, schema.children[c], &cells, NULL, error);
      if (cells.release) cells.release(&cells);
      if (st) {
        qv_error_prefix(error, "batch %" PRId64, b);
        break;
      }
      int64_t shown = col.length < CELL_LINES ? col.length : CELL_LINES;
      for (int64_t r = 0; r < shown && st == QV_OK; r++) {
        char *text = NULL;
        if ((st = sparse_cell_text(&col, a.offset + r, &text, error)) == QV_OK)
          fprintf(out, "  %s batch %" PRId64 " row %" PRId64 ": %s\n", names[c], b, r, text);
        free(text);
      }
      if (st == QV_OK && col.length > shown)
        fprintf(out, "  %s batch %" PRId64 ": %" PRId64 " more rows\n", names[c], b,
                col.length - shown);
      qv_sparse_column_reset(&col);
    }
    a.release(&a);
  }
  free_names(names, cols);
  free(sparse);
  schema.release(&schema);
  s.release(&s);
  return st;
}
