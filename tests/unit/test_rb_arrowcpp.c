/* Record batch files and streams written by Arrow C++ (shared test data):
 * every value, null count, field and compression codec is checked against
 * the .json companion Arrow C++ produced from the same file. Skipped when
 * the shared directory is absent. */
#include "test_rb_helpers.h"
#include "test_util.h"

/* ---- a small JSON reader for the companions */

typedef enum { J_NULL, J_BOOL, J_NUM, J_STR, J_ARR, J_OBJ } JType;

typedef struct J {
  JType t;
  bool b;
  double num;
  char *str;
  int n;
  struct J *items;
  char **keys;
} J;

static void j_free(J *j) {
  free(j->str);
  for (int i = 0; i < j->n; i++) {
    j_free(&j->items[i]);
    if (j->keys) free(j->keys[i]);
  }
  free(j->items);
  free(j->keys);
  memset(j, 0, sizeof *j);
}

static void ws(const char **p) {
  while (**p == ' ' || **p == '\n' || **p == '\t' || **p == '\r') (*p)++;
}

static void utf8_put(char *out, size_t *n, unsigned cp) {
  if (cp < 0x80) {
    out[(*n)++] = (char)cp;
  } else if (cp < 0x800) {
    out[(*n)++] = (char)(0xC0 | cp >> 6);
    out[(*n)++] = (char)(0x80 | (cp & 0x3F));
  } else {
    out[(*n)++] = (char)(0xE0 | cp >> 12);
    out[(*n)++] = (char)(0x80 | ((cp >> 6) & 0x3F));
    out[(*n)++] = (char)(0x80 | (cp & 0x3F));
  }
}

static char *j_string(const char **p) {
  assert_int_equal(**p, '"');
  (*p)++;
  size_t cap = strlen(*p) + 1, n = 0;
  char *out = malloc(cap);
  while (**p != '"') {
    assert_true(**p != '\0');
    if (**p == '\\') {
      (*p)++;
      char c = *(*p)++;
      switch (c) {
        case 'n': out[n++] = '\n'; break;
        case 't': out[n++] = '\t'; break;
        case 'r': out[n++] = '\r'; break;
        case 'b': out[n++] = '\b'; break;
        case 'f': out[n++] = '\f'; break;
        case 'u': {
          char hex[5] = {0};
          memcpy(hex, *p, 4);
          *p += 4;
          utf8_put(out, &n, (unsigned)strtoul(hex, NULL, 16));
          break;
        }
        default: out[n++] = c;
      }
    } else {
      out[n++] = *(*p)++;
    }
  }
  (*p)++;
  out[n] = '\0';
  return out;
}

static void j_parse(const char **p, J *out) {
  memset(out, 0, sizeof *out);
  ws(p);
  char c = **p;
  if (c == '{' || c == '[') {
    out->t = c == '{' ? J_OBJ : J_ARR;
    (*p)++;
    int cap = 0;
    for (;;) {
      ws(p);
      if (**p == (c == '{' ? '}' : ']')) {
        (*p)++;
        return;
      }
      if (out->n == cap) {
        cap = cap ? cap * 2 : 8;
        out->items = realloc(out->items, (size_t)cap * sizeof *out->items);
        if (c == '{') out->keys = realloc(out->keys, (size_t)cap * sizeof *out->keys);
      }
      if (c == '{') {
        out->keys[out->n] = j_string(p);
        ws(p);
        assert_int_equal(*(*p)++, ':');
      }
      j_parse(p, &out->items[out->n++]);
      ws(p);
      if (**p == ',') (*p)++;
    }
  }
  if (c == '"') {
    out->t = J_STR;
    out->str = j_string(p);
  } else if (strncmp(*p, "null", 4) == 0) {
    out->t = J_NULL;
    *p += 4;
  } else if (strncmp(*p, "true", 4) == 0) {
    out->t = J_BOOL;
    out->b = true;
    *p += 4;
  } else if (strncmp(*p, "false", 5) == 0) {
    out->t = J_BOOL;
    *p += 5;
  } else {
    char *end;
    out->t = J_NUM;
    out->num = strtod(*p, &end);
    assert_true(end != *p);
    *p = end;
  }
}

static J *j_get(J *obj, const char *key) {
  for (int i = 0; obj->t == J_OBJ && i < obj->n; i++)
    if (strcmp(obj->keys[i], key) == 0) return &obj->items[i];
  return NULL;
}

static bool j_equal(const J *a, const J *b) {
  if (a->t != b->t) return false;
  switch (a->t) {
    case J_NULL: return true;
    case J_BOOL: return a->b == b->b;
    case J_NUM: return a->num == b->num;
    case J_STR: return strcmp(a->str, b->str) == 0;
    case J_ARR:
      if (a->n != b->n) return false;
      for (int i = 0; i < a->n; i++)
        if (!j_equal(&a->items[i], &b->items[i])) return false;
      return true;
    case J_OBJ:
      if (a->n != b->n) return false;
      for (int i = 0; i < a->n; i++) {
        J *m = j_get((J *)b, a->keys[i]);
        if (m == NULL || !j_equal(&a->items[i], m)) return false;
      }
      return true;
  }
  return false;
}

/* ---- checks */

/* Our description of the types these files use, in the helpers' spec
 * grammar, keyed by the type text of the companion. */
static const struct {
  const char *arrow_cpp;
  const char *spec;
} kTypes[] = {
    {"int32", "i"},
    {"float64", "g"},
    {"utf8", "u"},
    {"list<item: int64>", "+l(l)"},
    {"struct<a: int32, b: string>", "+s(i;u)"},
    {"dictionary<values=string, indices=int32, ordered=0>", "i{u}"},
};

static void spec_of(const struct ArrowSchema *s, char *out, size_t cap) {
  size_t n = (size_t)snprintf(out, cap, "%s", s->format);
  if (s->n_children > 0) {
    n += (size_t)snprintf(out + n, cap - n, "(");
    for (int64_t i = 0; i < s->n_children; i++) {
      if (i) n += (size_t)snprintf(out + n, cap - n, ";");
      spec_of(s->children[i], out + n, cap - n);
      n = strlen(out);
    }
    n += (size_t)snprintf(out + n, cap - n, ")");
  }
  if (s->dictionary) {
    n += (size_t)snprintf(out + n, cap - n, "{");
    spec_of(s->dictionary, out + n, cap - n);
    n = strlen(out);
    snprintf(out + n, cap - n, "}");
  }
}

static void check_schema(const struct ArrowSchema *s, J *fields) {
  assert_int_equal(s->n_children, fields->n);
  for (int i = 0; i < fields->n; i++) {
    J *f = &fields->items[i];
    const struct ArrowSchema *c = s->children[i];
    assert_string_equal(c->name, j_get(f, "name")->str);
    assert_int_equal((c->flags & ARROW_FLAG_NULLABLE) != 0, j_get(f, "nullable")->b);
    const char *type = j_get(f, "type")->str;
    const char *want = NULL;
    for (size_t k = 0; k < sizeof kTypes / sizeof kTypes[0]; k++)
      if (strcmp(kTypes[k].arrow_cpp, type) == 0) want = kTypes[k].spec;
    if (want == NULL) fail_msg("no expectation for the Arrow C++ type %s", type);
    char got[256];
    spec_of(c, got, sizeof got);
    assert_string_equal(got, want);
  }
  /* struct child names */
  for (int i = 0; i < fields->n; i++)
    if (strcmp(s->children[i]->format, "+s") == 0) {
      assert_string_equal(s->children[i]->children[0]->name, "a");
      assert_string_equal(s->children[i]->children[1]->name, "b");
    }
}

static void check_batch(const struct ArrowSchema *s, const struct ArrowArray *a, J *batch) {
  assert_int_equal(a->length, (int64_t)j_get(batch, "num_rows")->num);
  J *cols = j_get(batch, "columns");
  assert_int_equal(cols->n, a->n_children);
  RbtCells cells = rbt_cells(a, s);
  for (int c = 0; c < cols->n; c++) {
    J *col = &cols->items[c];
    assert_string_equal(j_get(col, "name")->str, s->children[c]->name);
    assert_int_equal(a->children[c]->null_count, (int64_t)j_get(col, "null_count")->num);
    J *values = j_get(col, "values");
    assert_int_equal(values->n, a->length);
    for (int r = 0; r < values->n; r++) {
      const char *text = cells.cells[r * cells.cols + c];
      const char *p = text;
      J got;
      j_parse(&p, &got);
      if (!j_equal(&got, &values->items[r]))
        fail_msg("column %s row %d: quiver reads %s", s->children[c]->name, r, text);
      j_free(&got);
    }
    /* dictionary columns: the dictionary itself and the raw indices */
    J *dict = j_get(col, "dictionary");
    if (dict) {
      const struct ArrowArray *d = a->children[c]->dictionary;
      assert_non_null(d);
      assert_int_equal(d->length, dict->n);
      J *indices = j_get(col, "indices");
      const int32_t *idx = (const int32_t *)a->children[c]->buffers[1];
      for (int r = 0; r < indices->n; r++)
        if (indices->items[r].t == J_NUM) assert_int_equal(idx[r], (int)indices->items[r].num);
    }
  }
  rbt_cells_free(&cells);
}

/* The codec of every RecordBatch / DictionaryBatch message. */
static void check_compression(const char *path, J *want) {
  size_t size;
  uint8_t *data = qv_test_read_file(path, &size);
  assert_non_null(data);
  QvIpcReader *r;
  QvError e;
  rbt_check(qv_test_reader_memory(&r, data, size, &e), &e, "ipc open");
  QvIpcMessage m;
  int batches = 0;
  while (qv_ipc_reader_next(r, &m, &e) == QV_OK) {
    const QvRecordBatch *rb = NULL;
    if (m.message.header_type == QV_HEADER_RECORD_BATCH) rb = &m.message.header.record_batch;
    if (m.message.header_type == QV_HEADER_DICTIONARY_BATCH) rb = &m.message.header.dictionary_batch.data;
    if (rb) {
      batches++;
      if (want->t == J_NULL) {
        assert_int_equal(rb->compression, QV_COMPRESSION_NONE);
      } else {
        assert_int_equal(rb->compression, strcmp(want->str, "ZSTD") == 0 ? QV_COMPRESSION_ZSTD
                                                                         : QV_COMPRESSION_LZ4_FRAME);
      }
    }
    qv_ipc_message_reset(&m);
  }
  qv_ipc_reader_free(r);
  free(data);
  if (want->t != J_NULL) assert_true(batches > 0);
}

static void check_one(const char *name) {
  char json_name[256];
  snprintf(json_name, sizeof json_name, "%.*s.json", (int)(strrchr(name, '.') - name), name);
  size_t size;
  char *text = (char *)qv_test_read_file(qv_test_shared_path(json_name), &size);
  assert_non_null(text);
  char *z = realloc(text, size + 1);
  z[size] = '\0';
  const char *p = z;
  J doc;
  j_parse(&p, &doc);
  J *batches = j_get(&doc, "batches");
  char path[4096];
  snprintf(path, sizeof path, "%s", qv_test_shared_path(name));
  check_compression(path, j_get(&doc, "compression"));

  /* sequentially, with full validation, from a memory map */
  QvRbReadOptions o;
  memset(&o, 0, sizeof o);
  o.validate = QV_VALIDATE_FULL;
  struct ArrowArrayStream s;
  QvError e;
  rbt_check(rbt_stream_open_path(&s, path, &o, &e), &e, name);
  struct ArrowSchema schema;
  rbt_check(qv_rb_stream_get_schema(&s, &schema, &e), &e, "schema");
  check_schema(&schema, j_get(&doc, "schema"));
  int n = 0;
  for (;;) {
    struct ArrowArray a;
    if (rbt_next(&s, &a)) break;
    assert_true(n < batches->n);
    check_batch(&schema, &a, &batches->items[n++]);
    a.release(&a);
  }
  assert_int_equal(n, batches->n);
  s.release(&s);

  /* files: by index through the footer, last batch first */
  if (strcmp(j_get(&doc, "kind")->str, "record_batch_file") == 0) {
    QvRbFileReader *f;
    rbt_check(rbt_file_open_path(&f, path, &o, &e), &e, name);
    assert_int_equal(qv_rb_file_n_batches(f), batches->n);
    struct ArrowSchema fs;
    rbt_check(qv_rb_file_get_schema(f, &fs, &e), &e, "file schema");
    check_schema(&fs, j_get(&doc, "schema"));
    for (int i = batches->n - 1; i >= 0; i--) {
      struct ArrowArray a;
      rbt_check(qv_rb_file_read_batch(f, i, &a, &e), &e, "file batch");
      check_batch(&fs, &a, &batches->items[i]);
      a.release(&a);
    }
    fs.release(&fs);
    qv_rb_file_reader_free(f);
  }

  /* what quiver writes from it reads back the same */
  uint8_t *data = qv_test_read_file(path, &size);
  struct ArrowArrayStream again;
  rbt_check(rbt_stream_open(&again, data, size, &o, &e), &e, "reopen");
  QvSink *sink;
  rbt_check(qv_sink_new_memory(&sink, &e), &e, "memory sink");
  QvRbWriteOptions wo;
  memset(&wo, 0, sizeof wo);
  wo.format = QV_IPC_FORMAT_FILE;
  rbt_check(qv_rb_write_all(&again, sink, &wo, &e), &e, "write_all");
  again.release(&again);
  uint8_t *out;
  size_t out_size;
  rbt_take(sink, &out, &out_size);
  qv_sink_free(sink);
  QvRbFileReader *f;
  rbt_check(rbt_file_open(&f, out, out_size, &o, &e), &e, "rewritten");
  assert_int_equal(qv_rb_file_n_batches(f), batches->n);
  for (int i = 0; i < batches->n; i++) {
    struct ArrowArray a;
    rbt_check(qv_rb_file_read_batch(f, i, &a, &e), &e, "rewritten batch");
    check_batch(&schema, &a, &batches->items[i]);
    a.release(&a);
  }
  qv_rb_file_reader_free(f);
  free(out);
  free(data);
  schema.release(&schema);
  j_free(&doc);
  free(z);
}

static void test_arrow_cpp_files(void **state) {
  (void)state;
  if (!qv_test_have_shared()) {
    print_message("shared Arrow C++ test data is absent: skipped\n");
    skip();
  }
  static const char *const files[] = {
      "rb_stream_mixed_nulls.arrows", "rb_stream_mixed_nulls_lz4.arrows",
      "rb_stream_mixed_nulls_zstd.arrows", "rb_stream_schema_only.arrows",
      "rb_file_mixed_nulls.arrow", "rb_file_mixed_nulls_zstd.arrow"};
  for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
    print_message("checking %s\n", files[i]);
    check_one(files[i]);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_arrow_cpp_files),
  };
  return qv_test_run(tests, NULL, NULL);
}
