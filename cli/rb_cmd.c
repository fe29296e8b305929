/* quiver record batch commands:
 *   validate [--stream] FILE|-    full validation, exit 0 valid / 1 invalid
 *   stream-to-file [options]      stdin (stream) -> stdout (file)
 *   file-to-stream [options] FILE FILE (file) -> stdout (stream)
 * and the table printer used by `quiver cat` (rb_print.h). */
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "quiver/recordbatch_ipc.h"
#include "rb_print.h"

/* ---- type descriptions, Arrow style ("list<item: int64>") */

typedef struct Text {
  char *p;
  size_t len, cap;
} Text;

static void text_put(Text *t, const char *s, size_t n) {
  if (t->len + n + 1 > t->cap) {
    size_t cap = t->cap ? t->cap : 128;
    while (cap < t->len + n + 1) cap *= 2;
    char *q = realloc(t->p, cap);
    if (q == NULL) return;
    t->p = q;
    t->cap = cap;
  }
  memcpy(t->p + t->len, s, n);
  t->len += n;
  t->p[t->len] = '\0';
}

static void text_puts(Text *t, const char *s) { text_put(t, s, strlen(s)); }

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static void text_printf(Text *t, const char *fmt, ...) {
  char buf[256];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  if (n > 0) text_put(t, buf, (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1);
}

static const char *const unit_names[4] = {"s", "ms", "us", "ns"};

static void describe(Text *t, const struct ArrowSchema *s, int depth);

static void describe_field(Text *t, const struct ArrowSchema *s, int depth) {
  text_printf(t, "%s: ", s->name ? s->name : "");
  describe(t, s, depth + 1);
  if (!(s->flags & ARROW_FLAG_NULLABLE)) text_puts(t, " not null");
}

static void describe(Text *t, const struct ArrowSchema *s, int depth) {
  QvSchemaView v;
  if (depth > 16 || qv_schema_view_init(&v, s, NULL) != QV_OK) {
    text_puts(t, "?");
    return;
  }
  if (v.type == QV_ARROW_DICTIONARY) {
    text_puts(t, "dictionary<values=");
    describe(t, s->dictionary, depth + 1);
    text_printf(t, ", indices=%s%s>", qv_arrow_type_name(v.storage_type),
                (s->flags & ARROW_FLAG_DICTIONARY_ORDERED) ? ", ordered" : "");
    return;
  }
  if (v.extension_name) text_printf(t, "extension<%.*s, ", (int)v.extension_name_len, v.extension_name);
  switch (v.type) {
    case QV_ARROW_DECIMAL32:
    case QV_ARROW_DECIMAL64:
    case QV_ARROW_DECIMAL128:
    case QV_ARROW_DECIMAL256:
      text_printf(t, "%s(%d, %d)", qv_arrow_type_name(v.type), v.decimal_precision, v.decimal_scale);
      break;
    case QV_ARROW_TIME32:
    case QV_ARROW_TIME64:
    case QV_ARROW_DURATION:
      text_printf(t, "%s[%s]", qv_arrow_type_name(v.type), unit_names[v.time_unit & 3]);
      break;
    case QV_ARROW_TIMESTAMP:
      text_printf(t, "timestamp[%s", unit_names[v.time_unit & 3]);
      if (v.timezone_len) text_printf(t, ", tz=%.*s", (int)v.timezone_len, v.timezone);
      text_puts(t, "]");
      break;
    case QV_ARROW_FIXED_SIZE_BINARY: text_printf(t, "fixed_size_binary[%d]", v.byte_width); break;
    case QV_ARROW_LIST:
    case QV_ARROW_LARGE_LIST:
    case QV_ARROW_LIST_VIEW:
    case QV_ARROW_LARGE_LIST_VIEW:
    case QV_ARROW_MAP:
      text_printf(t, "%s<", qv_arrow_type_name(v.type));
      describe_field(t, s->children[0], depth);
      text_puts(t, ">");
      break;
    case QV_ARROW_FIXED_SIZE_LIST:
      text_printf(t, "fixed_size_list<");
      describe_field(t, s->children[0], depth);
      text_printf(t, ">[%d]", v.fixed_size);
      break;
    case QV_ARROW_STRUCT:
    case QV_ARROW_SPARSE_UNION:
    case QV_ARROW_DENSE_UNION:
    case QV_ARROW_RUN_END_ENCODED:
      text_printf(t, "%s<", qv_arrow_type_name(v.type));
      for (int64_t i = 0; i < s->n_children; i++) {
        if (i) text_puts(t, ", ");
        if (v.type == QV_ARROW_SPARSE_UNION || v.type == QV_ARROW_DENSE_UNION)
          text_printf(t, "%d=", v.union_type_ids[i]);
        describe_field(t, s->children[i], depth);
      }
      text_puts(t, ">");
      break;
    default: text_puts(t, qv_arrow_type_name(v.type));
  }
  if (v.extension_name) text_puts(t, ">");
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

/* Display width of UTF-8 text (code points). */
static size_t width_of(const char *s) {
  size_t w = 0;
  for (; *s; s++) w += ((unsigned char)*s & 0xC0) != 0x80;
  return w;
}

static void print_cell(FILE *out, const char *s, size_t width, bool last) {
  fputs(s, out);
  if (!last)
    for (size_t k = width_of(s); k < width + 2; k++) fputc(' ', out);
}

static char **row_at(Table *t, int64_t r) {
  if (r < HEAD_ROWS) return &t->head[r * t->cols];
  return &t->tail[(r % TAIL_ROWS) * t->cols];
}

static void print_table(FILE *out, Table *t, const struct ArrowSchema *schema) {
  size_t *w = calloc((size_t)(t->cols ? t->cols : 1), sizeof *w);
  if (w == NULL) return;
  int64_t shown_tail = t->rows > HEAD_ROWS ? t->rows - HEAD_ROWS : 0;
  if (shown_tail > TAIL_ROWS) shown_tail = TAIL_ROWS;
  int64_t head = t->rows < HEAD_ROWS ? t->rows : HEAD_ROWS;
  for (int64_t c = 0; c < t->cols; c++) {
    const char *name = schema->children[c]->name ? schema->children[c]->name : "";
    w[c] = width_of(name);
    for (int64_t r = 0; r < head; r++) {
      size_t k = width_of(row_at(t, r)[c]);
      if (k > w[c]) w[c] = k;
    }
    for (int64_t r = t->rows - shown_tail; r < t->rows; r++) {
      size_t k = width_of(row_at(t, r)[c]);
      if (k > w[c]) w[c] = k;
    }
  }
  for (int64_t c = 0; c < t->cols; c++)
    print_cell(out, schema->children[c]->name ? schema->children[c]->name : "", w[c], c + 1 == t->cols);
  fputc('\n', out);
  for (int64_t r = 0; r < head; r++) {
    for (int64_t c = 0; c < t->cols; c++) print_cell(out, row_at(t, r)[c], w[c], c + 1 == t->cols);
    fputc('\n', out);
  }
  if (t->rows > HEAD_ROWS + TAIL_ROWS)
    fprintf(out, "... %" PRId64 " rows omitted ...\n", t->rows - HEAD_ROWS - TAIL_ROWS);
  for (int64_t r = t->rows - shown_tail; r < t->rows; r++) {
    for (int64_t c = 0; c < t->cols; c++) print_cell(out, row_at(t, r)[c], w[c], c + 1 == t->cols);
    fputc('\n', out);
  }
  free(w);
}

/* Readers over bytes already in memory (zero-copy). */
static QvStatus stream_over(struct ArrowArrayStream *s, const uint8_t *data, size_t size,
                            const QvRbReadOptions *o, QvError *error) {
  memset(s, 0, sizeof *s);
  QvSource *src;
  QvStatus st = qv_source_new_memory(&src, data, size, NULL, error);
  if (st) return st;
  st = qv_rb_stream_reader_new(s, src, o, error);
  qv_source_free(src); /* the reader holds its own reference */
  return st;
}

static QvStatus file_over(QvRbFileReader **f, const uint8_t *data, size_t size,
                          const QvRbReadOptions *o, QvError *error) {
  *f = NULL;
  QvSource *src;
  QvStatus st = qv_source_new_memory(&src, data, size, NULL, error);
  if (st) return st;
  st = qv_rb_file_reader_new(f, src, o, error);
  qv_source_free(src);
  return st;
}

/* Writes every batch of s to standard output. */
static QvStatus write_stdout(struct ArrowArrayStream *s, const QvRbWriteOptions *wo,
                             QvError *error) {
  QvSink *sink;
  QvStatus st = qv_sink_new_fd(&sink, STDOUT_FILENO, error);
  if (st) return st;
  st = qv_rb_write_all(s, sink, wo, error);
  if (!st) st = qv_sink_finish(sink, error);
  qv_sink_free(sink);
  return st;
}

int qv_cli_print_record_batches(const uint8_t *data, size_t size, FILE *out, QvError *error) {
  QvRbReadOptions o;
  memset(&o, 0, sizeof o);
  o.validate = QV_VALIDATE_FULL;
  struct ArrowArrayStream s;
  if (stream_over(&s, data, size, &o, error)) return 1;
  struct ArrowSchema schema;
  if (qv_rb_stream_get_schema(&s, &schema, error)) {
    s.release(&s);
    return 1;
  }
  Text line = {NULL, 0, 0};
  text_puts(&line, "schema: ");
  for (int64_t i = 0; i < schema.n_children; i++) {
    if (i) text_puts(&line, ", ");
    describe_field(&line, schema.children[i], 0);
  }
  fprintf(out, "%s\n", line.p ? line.p : "");
  free(line.p);
  Table t;
  memset(&t, 0, sizeof t);
  t.cols = schema.n_children;
  t.head = calloc((size_t)(HEAD_ROWS * t.cols + 1), sizeof(char *));
  t.tail = calloc((size_t)(TAIL_ROWS * t.cols + 1), sizeof(char *));
  QvArrayView v;
  int rc = 0;
  int64_t batches = 0;
  if (t.head == NULL || t.tail == NULL || qv_array_view_init(&v, &schema, error)) {
    if (t.head && t.tail) qv_error_set(error, QV_ENOMEM, "out of memory");
    table_free(&t);
    schema.release(&schema);
    s.release(&s);
    return 1;
  }
  for (;;) {
    struct ArrowArray a;
    QvStatus st = qv_rb_stream_get_next(&s, &a, error);
    if (st == QV_EOS) break;
    if (st) {
      rc = 1;
      break;
    }
    batches++;
    if (qv_array_view_set_array(&v, &a, QV_VALIDATE_NONE, error)) {
      a.release(&a);
      rc = 1;
      break;
    }
    for (int64_t r = 0; r < v.length && rc == 0; r++, t.rows++) {
      /* only rows that may be shown are formatted */
      int64_t later = v.length - r; /* rows of this batch from r on */
      bool may_show = t.rows < HEAD_ROWS || later <= TAIL_ROWS;
      if (!may_show) continue;
      char **row = row_at(&t, t.rows);
      for (int64_t c = 0; c < t.cols; c++) {
        free(row[c]);
        row[c] = NULL;
        if (qv_array_view_format_value(&v.children[c], v.offset + r, MAX_CELL, &row[c], error)) {
          rc = 1;
          break;
        }
      }
    }
    a.release(&a);
    if (rc) break;
  }
  if (rc == 0) {
    print_table(out, &t, &schema);
    fprintf(out, "(%" PRId64 " rows in %" PRId64 " batches)\n", t.rows, batches);
  }
  qv_array_view_reset(&v);
  table_free(&t);
  schema.release(&schema);
  s.release(&s);
  return rc;
}

/* ---- validate */

static int usage_error(const char *cmd, const char *usage) {
  fprintf(stderr, "usage: quiver %s %s\n", cmd, usage);
  return 2;
}

/* Reads every batch of a stream in full validation; counts rows. */
static QvStatus validate_stream(const uint8_t *data, size_t size, int64_t *batches, int64_t *rows,
                                QvError *error) {
  QvRbReadOptions o;
  memset(&o, 0, sizeof o);
  o.validate = QV_VALIDATE_FULL;
  struct ArrowArrayStream s;
  QvStatus st = stream_over(&s, data, size, &o, error);
  if (st) return st;
  for (;;) {
    struct ArrowArray a;
    if ((st = qv_rb_stream_get_next(&s, &a, error))) break;
    (*batches)++;
    *rows += a.length;
    a.release(&a);
  }
  s.release(&s);
  return st == QV_EOS ? QV_OK : st;
}

static QvStatus validate_file(const uint8_t *data, size_t size, int64_t *batches, int64_t *rows,
                              QvError *error) {
  QvRbReadOptions o;
  memset(&o, 0, sizeof o);
  o.validate = QV_VALIDATE_FULL;
  QvRbFileReader *f;
  QvStatus st = file_over(&f, data, size, &o, error);
  if (st) return st;
  int64_t n = qv_rb_file_num_batches(f);
  for (int64_t i = 0; i < n && !st; i++) {
    struct ArrowArray a;
    if ((st = qv_rb_file_read_batch(f, i, &a, error))) break;
    (*batches)++;
    *rows += a.length;
    a.release(&a);
  }
  qv_rb_file_reader_free(f);
  if (st) return st;
  /* The messages between the magic and the footer must be a valid stream too
   * when they carry their own Schema. Some writers (arrow-js) put the schema
   * only in the footer, which is what file readers use; the batches were
   * validated against it above. */
  if (!qv_cli_starts_with_schema(data, size)) return QV_OK;
  int64_t sb = 0, sr = 0;
  st = validate_stream(data, size, &sb, &sr, error);
  if (st) return qv_error_prefix(error, "the file's message sequence");
  return QV_OK;
}

int qv_cmd_validate(int argc, char **argv) {
  bool stream = false;
  const char *path = NULL;
  for (int i = 0; i < argc; i++) {
    if (strcmp(argv[i], "--stream") == 0)
      stream = true;
    else if (path == NULL)
      path = argv[i];
    else
      return usage_error("validate", "[--stream] FILE|-");
  }
  if (path == NULL) return usage_error("validate", "[--stream] FILE|-");
  QvCliInput in;
  QvError error;
  qv_error_clear(&error);
  if (qv_cli_input_open(path, &in, &error)) return qv_cli_fail("validate", &error);
  bool is_file = in.size >= 6 && memcmp(in.data, "ARROW1", 6) == 0;
  int64_t batches = 0, rows = 0;
  QvStatus st = (stream || !is_file) ? validate_stream(in.data, in.size, &batches, &rows, &error)
                                     : validate_file(in.data, in.size, &batches, &rows, &error);
  qv_cli_input_free(&in);
  if (st) {
    fprintf(stderr, "quiver validate: %s: invalid: %s\n", path, error.message);
    return 1;
  }
  printf("%s: valid Arrow %s (%" PRId64 " record batches, %" PRId64 " rows)\n", path,
         (stream || !is_file) ? "stream" : "file", batches, rows);
  return 0;
}

/* ---- conversions */

static const char *const convert_usage = "[--compression none|lz4|zstd] [--align 8|64]";

/* Parses writer options; returns the index of the first other argument, or
 * -1 on a usage error. */
static int parse_write_options(int argc, char **argv, QvRbWriteOptions *o) {
  memset(o, 0, sizeof *o);
  o->validate = QV_VALIDATE_NONE; /* the reader validated in full already */
  int i = 0;
  for (; i < argc; i++) {
    if (strcmp(argv[i], "--compression") == 0 && i + 1 < argc) {
      const char *c = argv[++i];
      if (strcmp(c, "none") == 0) o->compression = QV_COMPRESSION_NONE;
      else if (strcmp(c, "lz4") == 0) o->compression = QV_COMPRESSION_LZ4_FRAME;
      else if (strcmp(c, "zstd") == 0) o->compression = QV_COMPRESSION_ZSTD;
      else return -1;
    } else if (strcmp(argv[i], "--align") == 0 && i + 1 < argc) {
      o->alignment = atoi(argv[++i]);
      if (o->alignment != 8 && o->alignment != 64) return -1;
    } else {
      break;
    }
  }
  return i;
}

int qv_cmd_stream_to_file(int argc, char **argv) {
  QvRbWriteOptions wo;
  int k = parse_write_options(argc, argv, &wo);
  if (k < 0 || k != argc) return usage_error("stream-to-file", convert_usage);
  if (isatty(STDOUT_FILENO)) {
    fprintf(stderr, "quiver stream-to-file: refusing to write binary data to a terminal\n");
    return 2;
  }
  wo.format = QV_IPC_FORMAT_FILE;
  QvRbReadOptions ro;
  memset(&ro, 0, sizeof ro);
  ro.validate = QV_VALIDATE_FULL;
  QvError error;
  qv_error_clear(&error);
  struct ArrowArrayStream s;
  QvSource *src;
  QvStatus st = qv_source_new_fd(&src, STDIN_FILENO, &error);
  if (!st) {
    st = qv_rb_stream_reader_new(&s, src, &ro, &error);
    qv_source_free(src);
  }
  if (st) return qv_cli_fail("stream-to-file", &error);
  st = write_stdout(&s, &wo, &error);
  s.release(&s);
  return st ? qv_cli_fail("stream-to-file", &error) : 0;
}

/* An ArrowArrayStream over the batches of a file reader, in footer order. */
typedef struct FileStream {
  QvRbFileReader *f;
  int64_t next;
  QvError error;
} FileStream;

static int fs_get_schema(struct ArrowArrayStream *s, struct ArrowSchema *out) {
  FileStream *p = s->private_data;
  return qv_rb_file_get_schema(p->f, out, &p->error) ? 22 : 0;
}

static int fs_get_next(struct ArrowArrayStream *s, struct ArrowArray *out) {
  FileStream *p = s->private_data;
  memset(out, 0, sizeof *out);
  if (p->next >= qv_rb_file_num_batches(p->f)) return 0;
  return qv_rb_file_read_batch(p->f, p->next++, out, &p->error) ? 22 : 0;
}

static const char *fs_last_error(struct ArrowArrayStream *s) {
  FileStream *p = s->private_data;
  return p->error.message;
}

static void fs_release(struct ArrowArrayStream *s) { s->release = NULL; }

int qv_cmd_file_to_stream(int argc, char **argv) {
  QvRbWriteOptions wo;
  int k = parse_write_options(argc, argv, &wo);
  if (k < 0 || k + 1 != argc) return usage_error("file-to-stream", "[options] FILE|-");
  if (isatty(STDOUT_FILENO)) {
    fprintf(stderr, "quiver file-to-stream: refusing to write binary data to a terminal\n");
    return 2;
  }
  wo.format = QV_IPC_FORMAT_STREAM;
  QvRbReadOptions ro;
  memset(&ro, 0, sizeof ro);
  ro.validate = QV_VALIDATE_FULL;
  QvError error;
  qv_error_clear(&error);
  QvCliInput in;
  if (qv_cli_input_open(argv[k], &in, &error)) return qv_cli_fail("file-to-stream", &error);
  FileStream fs;
  memset(&fs, 0, sizeof fs);
  QvStatus st = file_over(&fs.f, in.data, in.size, &ro, &error);
  if (!st) {
    struct ArrowArrayStream s = {fs_get_schema, fs_get_next, fs_last_error, fs_release, &fs};
    st = write_stdout(&s, &wo, &error);
    qv_rb_file_reader_free(fs.f);
  }
  qv_cli_input_free(&in);
  return st ? qv_cli_fail("file-to-stream", &error) : 0;
}
