/* Helpers shared by the record batch tests (declared in test_rb_helpers.h). */
#include "test_rb_helpers.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void rbt_check(QvStatus st, const QvError *e, const char *what) {
  if (st != QV_OK) fail_msg("%s failed: %s (%s)", what, e ? e->message : "", qv_status_name(st));
}

bool rbt_next(struct ArrowArrayStream *s, struct ArrowArray *out) {
  QvError e;
  QvStatus st = qv_rb_stream_get_next(s, out, &e);
  if (st == QV_EOS) {
    assert_null(out->release);
    return true;
  }
  rbt_check(st, &e, "get_next");
  assert_non_null(out->release);
  return false;
}

/* Parses one spec at *p into `out` (named `name`). */
void rbt_parse(struct ArrowSchema *out, const char **p, const char *name, bool nullable) {
  char fmt[128];
  size_t n = 0;
  while (**p && strchr("(){};", **p) == NULL && n < sizeof fmt - 1) fmt[n++] = *(*p)++;
  fmt[n] = '\0';
  struct ArrowSchema kids[16];
  int nk = 0;
  bool is_map = strcmp(fmt, "+m") == 0;
  bool is_entries = name && strcmp(name, "entries") == 0;
  if (**p == '(' && (*p)[1] == ')') {
    *p += 2;
  } else if (**p == '(') {
    (*p)++;
    for (;;) {
      char cname[32];
      if (is_map)
        snprintf(cname, sizeof cname, "entries");
      else if (is_entries)
        snprintf(cname, sizeof cname, nk == 0 ? "key" : "value");
      else
        snprintf(cname, sizeof cname, "c%d", nk);
      rbt_parse(&kids[nk], p, cname, !(is_entries && nk == 0) && !is_map);
      nk++;
      if (**p == ';') {
        (*p)++;
        continue;
      }
      assert_int_equal(**p, ')');
      (*p)++;
      break;
    }
  }
  QvError e;
  rbt_check(qv_arrow_schema_init(out, fmt, name, nullable ? ARROW_FLAG_NULLABLE : 0, nk, &e), &e,
            "qv_arrow_schema_init");
  for (int i = 0; i < nk; i++) {
    memcpy(out->children[i], &kids[i], sizeof kids[i]);
  }
  if (**p == '{') {
    (*p)++;
    rbt_check(qv_arrow_schema_alloc_dictionary(out, &e), &e, "alloc dictionary");
    rbt_parse(out->dictionary, p, "", true);
    assert_int_equal(**p, '}');
    (*p)++;
  }
}

void rbt_schema(struct ArrowSchema *out, const char *spec, const char *name) {
  const char *p = spec;
  rbt_parse(out, &p, name, true);
  assert_int_equal(*p, '\0');
}

/* A root struct with one column per spec (names "col0", "col1", ...). */
void rbt_batch_schema(struct ArrowSchema *out, const char *const *specs, int n) {
  QvError e;
  rbt_check(qv_arrow_schema_init(out, "+s", "", 0, n, &e), &e, "root schema");
  for (int i = 0; i < n; i++) {
    char name[16];
    snprintf(name, sizeof name, "col%d", i);
    rbt_schema(out->children[i], specs[i], name);
  }
}

int64_t rbt_dict_seed = 0;

void rbt_ok(QvStatus st, const char *what, const struct ArrowSchema *s) {
  if (st != QV_OK) fail_msg("%s on \"%s\" failed: %s", what, s->format, qv_status_name(st));
}

/* Appends a deterministic value number i (null for some i when allowed). */
void rbt_append(struct ArrowArray *a, const struct ArrowSchema *s, int64_t i, bool allow_null,
                       int depth) {
  QvArrowSchemaView t;
  QvError e;
  rbt_check(qv_arrow_schema_view_init(&t, s, &e), &e, "schema view");
  bool nullable = (s->flags & ARROW_FLAG_NULLABLE) != 0;
  if (t.type == QV_ARROW_DICTIONARY) {
    if (a->dictionary->length == 0)
      for (int64_t k = 0; k < 5; k++)
        rbt_append(a->dictionary, s->dictionary, k + depth + rbt_dict_seed, true, depth + 1);
    if (allow_null && nullable && i % 5 == 3) {
      rbt_ok(qv_array_append_null(a, 1, NULL), "append_null", s);
      return;
    }
    rbt_ok(qv_array_append_int(a, (i * 3) % a->dictionary->length, NULL), "append index", s);
    return;
  }
  if (allow_null && nullable && i % 5 == 3 && t.type != QV_ARROW_RUN_END_ENCODED &&
      t.type != QV_ARROW_SPARSE_UNION && t.type != QV_ARROW_DENSE_UNION) {
    rbt_ok(qv_array_append_null(a, 1, NULL), "append_null", s);
    return;
  }
  char text[64];
  switch (t.type) {
    case QV_ARROW_NULL: rbt_ok(qv_array_append_null(a, 1, NULL), "append_null", s); return;
    case QV_ARROW_BOOL: rbt_ok(qv_array_append_int(a, (i * 7 / 3) % 2, NULL), "append bool", s); return;
    case QV_ARROW_INT8:
    case QV_ARROW_INT16:
    case QV_ARROW_INT32:
    case QV_ARROW_INT64:
    case QV_ARROW_DATE32:
    case QV_ARROW_DATE64:
    case QV_ARROW_TIME32:
    case QV_ARROW_TIME64:
    case QV_ARROW_TIMESTAMP:
    case QV_ARROW_DURATION:
    case QV_ARROW_INTERVAL_MONTHS:
    case QV_ARROW_DECIMAL32:
    case QV_ARROW_DECIMAL64:
    case QV_ARROW_DECIMAL128:
    case QV_ARROW_DECIMAL256: {
      int64_t v = (i * 37) % 120 - 60;
      if (t.type == QV_ARROW_INT64 || t.type == QV_ARROW_TIMESTAMP) v *= 1000000007LL;
      rbt_ok(qv_array_append_int(a, v, NULL), "append int", s);
      return;
    }
    case QV_ARROW_UINT8:
    case QV_ARROW_UINT16:
    case QV_ARROW_UINT32: rbt_ok(qv_array_append_uint(a, (uint64_t)(i * 11) % 200, NULL), "append uint", s); return;
    case QV_ARROW_UINT64: rbt_ok(qv_array_append_uint(a, UINT64_MAX - (uint64_t)i, NULL), "append uint64", s); return;
    case QV_ARROW_FLOAT16:
    case QV_ARROW_FLOAT32:
    case QV_ARROW_FLOAT64: rbt_ok(qv_array_append_double(a, (double)i * 0.25 - 3.0, NULL), "append double", s); return;
    case QV_ARROW_INTERVAL_DAY_TIME:
      rbt_ok(qv_array_append_interval_day_time(a, (int32_t)i, (int32_t)(i * 1000), NULL), "append interval", s);
      return;
    case QV_ARROW_INTERVAL_MONTH_DAY_NANO:
      rbt_ok(qv_array_append_interval_month_day_nano(a, (int32_t)i, -(int32_t)i, i * 1000000007LL, NULL),
             "append interval", s);
      return;
    case QV_ARROW_BINARY:
    case QV_ARROW_LARGE_BINARY:
    case QV_ARROW_BINARY_VIEW:
    case QV_ARROW_STRING:
    case QV_ARROW_LARGE_STRING:
    case QV_ARROW_STRING_VIEW: {
      /* lengths 0..19 (views: inline and out of line), some multi-byte */
      int len = snprintf(text, sizeof text, "%s%lld-%.*s", i % 4 == 0 ? "\xc3\xa9" : "v", (long long)i,
                         (int)(i % 14), "abcdefghijklmnopqrstuvwxyz");
      if (i % 7 == 0) len = 0;
      rbt_ok(qv_array_append_bytes(a, text, len, NULL), "append bytes", s);
      return;
    }
    case QV_ARROW_FIXED_SIZE_BINARY: {
      uint8_t b[64];
      for (int k = 0; k < t.byte_width && k < 64; k++) b[k] = (uint8_t)(i * 13 + k);
      rbt_ok(qv_array_append_bytes(a, b, t.byte_width, NULL), "append fsb", s);
      return;
    }
    case QV_ARROW_LIST:
    case QV_ARROW_LARGE_LIST:
    case QV_ARROW_LIST_VIEW:
    case QV_ARROW_LARGE_LIST_VIEW:
    case QV_ARROW_MAP: {
      int64_t n = (i + depth) % 4;
      for (int64_t k = 0; k < n; k++) rbt_append(a->children[0], s->children[0], i * 4 + k, true, depth + 1);
      rbt_ok(qv_array_finish_element(a, NULL), "finish list", s);
      return;
    }
    case QV_ARROW_FIXED_SIZE_LIST:
      for (int64_t k = 0; k < t.fixed_size; k++)
        rbt_append(a->children[0], s->children[0], i * t.fixed_size + k, true, depth + 1);
      rbt_ok(qv_array_finish_element(a, NULL), "finish fixed list", s);
      return;
    case QV_ARROW_STRUCT:
      for (int64_t k = 0; k < t.n_children; k++) {
        bool key = strcmp(s->name ? s->name : "", "entries") == 0 && k == 0;
        rbt_append(a->children[k], s->children[k], i + k, !key, depth + 1);
      }
      rbt_ok(qv_array_finish_element(a, NULL), "finish struct", s);
      return;
    case QV_ARROW_SPARSE_UNION:
    case QV_ARROW_DENSE_UNION: {
      int64_t c = i % t.n_children;
      rbt_append(a->children[c], s->children[c], i, true, depth + 1);
      rbt_ok(qv_array_finish_union_element(a, t.union_type_ids[c], NULL), "finish union", s);
      return;
    }
    case QV_ARROW_RUN_END_ENCODED:
      /* runs of up to four elements */
      if (a->length > 0 && i % 4 != 0) {
        rbt_ok(qv_array_extend_run(a, 1, NULL), "extend run", s);
        return;
      }
      rbt_append(a->children[1], s->children[1], i, allow_null, depth + 1);
      rbt_ok(qv_array_finish_run(a, 1, NULL), "finish run", s);
      return;
    default: fail_msg("no value generator for %s", s->format);
  }
}

/* Builds a batch of `rows` rows for the root struct schema. */
void rbt_build(struct ArrowArray *out, const struct ArrowSchema *schema, int64_t rows,
                      int64_t seed) {
  QvError e;
  rbt_check(qv_array_init_from_schema(out, schema, &e), &e, "init_from_schema");
  for (int64_t r = 0; r < rows; r++) {
    for (int64_t c = 0; c < schema->n_children; c++)
      rbt_append(out->children[c], schema->children[c], r + seed, true, 0);
    QvStatus st = qv_array_finish_element(out, NULL);
    if (st) {
      for (int64_t c = 0; c < schema->n_children; c++)
        if (out->children[c]->length != out->length + 1)
          fail_msg("column %lld (%s) has %lld values after row %lld", (long long)c,
                   schema->children[c]->format, (long long)out->children[c]->length, (long long)r);
      fail_msg("finish row failed: %s", qv_status_name(st));
    }
  }
  rbt_check(qv_array_finish_building(out, QV_VALIDATE_FULL, &e), &e, "finish_building");
}

RbtCells rbt_cells(const struct ArrowArray *a, const struct ArrowSchema *s) {
  QvArrayView v;
  QvError e;
  rbt_check(qv_array_view_init(&v, s, &e), &e, "view init");
  rbt_check(qv_array_view_set_array(&v, a, QV_VALIDATE_FULL, &e), &e, "validate");
  RbtCells c = {v.length, v.n_children, NULL};
  c.cells = calloc((size_t)(c.rows * c.cols + 1), sizeof(char *));
  for (int64_t r = 0; r < c.rows; r++)
    for (int64_t k = 0; k < c.cols; k++)
      rbt_check(qv_array_view_format_value(&v.children[k], v.offset + r, 0, &c.cells[r * c.cols + k], &e),
                &e, "format");
  qv_array_view_reset(&v);
  return c;
}

void rbt_cells_free(RbtCells *c) {
  for (int64_t i = 0; i < c->rows * c->cols; i++) free(c->cells[i]);
  free(c->cells);
}

void rbt_assert_same_cells(const RbtCells *want, const RbtCells *got, const char *what) {
  if (want->rows != got->rows || want->cols != got->cols)
    fail_msg("%s: shape %lldx%lld, expected %lldx%lld", what, (long long)got->rows,
             (long long)got->cols, (long long)want->rows, (long long)want->cols);
  for (int64_t i = 0; i < want->rows * want->cols; i++)
    if (strcmp(want->cells[i], got->cells[i]) != 0)
      fail_msg("%s: row %lld col %lld: got %s, expected %s", what, (long long)(i / want->cols),
               (long long)(i % want->cols), got->cells[i], want->cells[i]);
}

QvRbWriteOptions rbt_write_options(QvIpcFormat format, QvCompression codec, int level, int threads) {
  QvRbWriteOptions o;
  memset(&o, 0, sizeof o);
  o.format = format;
  o.compression = codec;
  o.compression_level = level;
  o.threads = threads;
  return o;
}

void rbt_write(const struct ArrowSchema *schema, struct ArrowArray *const *batches, int n,
               const QvRbWriteOptions *opt, uint8_t **out, size_t *size) {
  QvSink *sink;
  QvRbWriter *w;
  QvError e;
  rbt_check(qv_sink_new_memory(&sink, &e), &e, "memory sink");
  rbt_check(qv_rb_writer_new(&w, schema, sink, opt, &e), &e, "writer new");
  for (int i = 0; i < n; i++) rbt_check(qv_rb_writer_write(w, batches[i], &e), &e, "writer write");
  rbt_check(qv_rb_writer_finish(w, &e), &e, "writer finish");
  assert_int_equal(qv_rb_writer_bytes_written(w), qv_sink_bytes_written(sink));
  qv_rb_writer_free(w);
  rbt_check(qv_sink_finish(sink, &e), &e, "sink finish");
  rbt_take(sink, out, size);
  qv_sink_free(sink);
}

void rbt_take(QvSink *sink, uint8_t **out, size_t *size) {
  QvError e;
  uint8_t *data;
  rbt_check(qv_sink_memory_take(sink, &data, size, &e), &e, "memory take");
  *out = malloc(*size + 1);
  assert_non_null(*out);
  if (*size) memcpy(*out, data, *size);
  qv_free(data);
}

QvStatus rbt_stream_open(struct ArrowArrayStream *s, const uint8_t *data, size_t size,
                         const QvRbReadOptions *o, QvError *e) {
  QvSource *src;
  QvStatus st = qv_source_new_memory(&src, data, size, NULL, e);
  if (st) return st;
  st = qv_rb_stream_reader_new(s, src, o, e);
  qv_source_free(src);
  return st;
}

QvStatus rbt_file_open(QvRbFileReader **f, const uint8_t *data, size_t size,
                       const QvRbReadOptions *o, QvError *e) {
  QvSource *src;
  QvStatus st = qv_source_new_memory(&src, data, size, NULL, e);
  if (st) return st;
  st = qv_rb_file_reader_new(f, src, o, e);
  qv_source_free(src);
  return st;
}

QvStatus rbt_stream_open_path(struct ArrowArrayStream *s, const char *path,
                              const QvRbReadOptions *o, QvError *e) {
  QvSource *src;
  QvStatus st = qv_source_new_path(&src, path, e);
  if (st) return st;
  st = qv_rb_stream_reader_new(s, src, o, e);
  qv_source_free(src);
  return st;
}

QvStatus rbt_file_open_path(QvRbFileReader **f, const char *path, const QvRbReadOptions *o,
                            QvError *e) {
  QvSource *src;
  QvStatus st = qv_source_new_path(&src, path, e);
  if (st) return st;
  st = qv_rb_file_reader_new(f, src, o, e);
  qv_source_free(src);
  return st;
}

/* Reads every batch of a stream (or file read as a stream); returns count. */
int rbt_read_stream(const uint8_t *data, size_t size, struct ArrowSchema *schema,
                           struct ArrowArray *batches, int max) {
  struct ArrowArrayStream s;
  QvError e;
  QvRbReadOptions o;
  memset(&o, 0, sizeof o);
  o.validate = QV_VALIDATE_FULL;
  rbt_check(rbt_stream_open(&s, data, size, &o, &e), &e, "stream open");
  rbt_check(qv_rb_stream_get_schema(&s, schema, &e), &e, "get_schema");
  int n = 0;
  for (;;) {
    struct ArrowArray a;
    if (rbt_next(&s, &a)) break;
    assert_true(n < max);
    batches[n++] = a;
  }
  s.release(&s);
  return n;
}

void rbt_dict_indices(struct ArrowArray *out, const int *indices, int n) {
  struct ArrowArray *col = out->children[0];
  for (int i = 0; i < n; i++) {
    if (indices[i] < 0)
      qv_array_append_null(col, 1, NULL);
    else
      qv_array_append_int(col, indices[i], NULL);
    qv_array_finish_element(out, NULL);
  }
  QvError e;
  rbt_check(qv_array_finish_building(out, QV_VALIDATE_FULL, &e), &e, "finish");
}

void rbt_put_message(QvSink *sink, const QvMessage *m, const void *body, size_t body_length) {
  QvError e;
  uint8_t *meta;
  size_t meta_size;
  rbt_check(qv_ipc_frame_message(m, 8, &meta, &meta_size, &e), &e, "frame");
  rbt_check(qv_sink_write(sink, meta, meta_size, &e), &e, "write");
  rbt_check(qv_sink_write(sink, body, body_length, &e), &e, "write");
  free(meta);
}

uint8_t *rbt_end_stream(QvSink *sink, size_t *size) {
  QvError e;
  rbt_check(qv_sink_write(sink, qv_ipc_eos, 8, &e), &e, "write");
  uint8_t *out;
  rbt_take(sink, &out, size);
  qv_sink_free(sink);
  return out;
}

uint8_t *rbt_edit_message(const uint8_t *data, size_t size, int index, RbtMessageEdit edit,
                          size_t *out_size) {
  QvIpcReader *r;
  QvError e;
  rbt_check(qv_test_reader_memory(&r, data, size, &e), &e, "open");
  QvSink *mem;
  rbt_check(qv_sink_new_memory(&mem, &e), &e, "memory sink");
  QvIpcMessage m;
  for (int i = 0; qv_ipc_reader_next(r, &m, &e) == QV_OK; i++) {
    uint8_t *body = malloc((size_t)m.body_length + 1);
    if (m.body_length) memcpy(body, m.body, (size_t)m.body_length);
    /* copies of the arrays an edit may change */
    QvBuffer bufs[64];
    QvFieldNode nodes[64];
    QvRecordBatch *rb = m.message.header_type == QV_HEADER_RECORD_BATCH ? &m.message.header.record_batch
                        : m.message.header_type == QV_HEADER_DICTIONARY_BATCH
                            ? &m.message.header.dictionary_batch.data
                            : NULL;
    if (rb) {
      assert_true(rb->n_buffers <= 64 && rb->n_nodes <= 64);
      memcpy(bufs, rb->buffers, (size_t)rb->n_buffers * sizeof *bufs);
      memcpy(nodes, rb->nodes, (size_t)rb->n_nodes * sizeof *nodes);
      rb->buffers = bufs;
      rb->nodes = nodes;
    }
    if (i == index) edit(&m.message, body, m.body_length);
    rbt_put_message(mem, &m.message, body, (size_t)m.message.body_length);
    free(body);
    qv_ipc_message_reset(&m);
  }
  qv_ipc_reader_free(r);
  return rbt_end_stream(mem, out_size);
}

void rbt_assert_reads_back(const uint8_t *data, size_t size, bool file, const RbtCells *want,
                           int n, const char *what) {
  struct ArrowSchema gs;
  struct ArrowArray got[8];
  assert_true(n <= 8);
  assert_int_equal(rbt_read_stream(data, size, &gs, got, 8), n);
  for (int k = 0; k < n; k++) {
    RbtCells c = rbt_cells(&got[k], &gs);
    rbt_assert_same_cells(&want[k], &c, what);
    rbt_cells_free(&c);
    got[k].release(&got[k]);
  }
  gs.release(&gs);
  if (!file) return;
  QvRbFileReader *f;
  QvError e;
  QvRbReadOptions ro;
  memset(&ro, 0, sizeof ro);
  ro.validate = QV_VALIDATE_FULL;
  rbt_check(rbt_file_open(&f, data, size, &ro, &e), &e, "file open");
  assert_int_equal(qv_rb_file_n_batches(f), n);
  struct ArrowSchema fs;
  rbt_check(qv_rb_file_get_schema(f, &fs, &e), &e, "file schema");
  for (int k = 0; k < n; k++) {
    struct ArrowArray fa;
    rbt_check(qv_rb_file_read_batch(f, k, &fa, &e), &e, "file batch");
    RbtCells c = rbt_cells(&fa, &fs);
    rbt_assert_same_cells(&want[k], &c, what);
    rbt_cells_free(&c);
    fa.release(&fa);
  }
  fs.release(&fs);
  qv_rb_file_reader_free(f);
}

/* Every type the byte-order tests write (test_rb_endian, test_rb_pyswap). */
const char *const rbt_order_specs[] = {
    "n", "b", "c", "C", "s", "S", "i", "I", "l", "L", "e", "f", "g",
    "d:9,2,32", "d:18,3,64", "d:38,10", "d:76,-2,256",
    "tdD", "tdm", "tts", "ttm", "ttu", "ttn", "tss:", "tsm:UTC", "tsn:",
    "tiM", "tiD", "tin", "tDs", "tDm", "tDu", "tDn",
    "z", "u", "Z", "U", "w:5", "vz", "vu",
    "+l(i)", "+L(u)", "+vl(l)", "+vL(u)", "+w:3(s)",
    "+s(i;u;+l(g))", "+m(+s(u;i))",
    "+us:0,1,2(i;u;n)", "+ud:0,1,2(i;u;b)", "+ud:3,7(+s(i;u);vu)",
    "+r(i;u)", "+r(s;l)", "+r(l;+l(i))",
    "i{u}", "c{l}", "C{vu}", "l{+s(i;u)}", "s{+l(u)}", "+l(i{u})", "+r(i;i{u})",
};
const int rbt_n_order_specs = (int)(sizeof rbt_order_specs / sizeof rbt_order_specs[0]);

int16_t rbt_written_endianness(const uint8_t *data, size_t size) {
  QvIpcReader *r;
  QvError e;
  rbt_check(qv_test_reader_memory(&r, data, size, &e), &e, "ipc open");
  QvIpcMessage m;
  rbt_check(qv_ipc_reader_next(r, &m, &e), &e, "schema message");
  assert_int_equal(m.message.header_type, QV_HEADER_SCHEMA);
  int16_t order = m.message.header.schema.endianness;
  qv_ipc_message_reset(&m);
  qv_ipc_reader_free(r);
  return order;
}

void rbt_spec_batch(const char *spec, int64_t rows, int64_t seed, struct ArrowSchema *schema,
                    struct ArrowArray *batch) {
  rbt_batch_schema(schema, &spec, 1);
  rbt_build(batch, schema, rows, seed);
}

void rbt_message_kinds(const uint8_t *data, size_t size, char *out, size_t cap) {
  QvIpcReader *r;
  QvError e;
  rbt_check(qv_test_reader_memory(&r, data, size, &e), &e, "ipc open");
  size_t n = 0;
  QvIpcMessage m;
  while (n + 1 < cap && qv_ipc_reader_next(r, &m, &e) == QV_OK) {
    char k = '?';
    switch (m.message.header_type) {
      case QV_HEADER_SCHEMA: k = 'S'; break;
      case QV_HEADER_RECORD_BATCH: k = 'R'; break;
      case QV_HEADER_DICTIONARY_BATCH: k = m.message.header.dictionary_batch.is_delta ? 'd' : 'D'; break;
      default: break;
    }
    out[n++] = k;
    qv_ipc_message_reset(&m);
  }
  out[n] = '\0';
  qv_ipc_reader_free(r);
}
