/* Metadata written by Arrow C++ (the shared test data): every message of
 * every *.arrow / *.arrows file must decode (also in invalid/ and
 * arrow_bugs/, which are wrong in their bodies, not their metadata), survive
 * an encode/decode round trip, agree with the file footer, and agree with
 * what Arrow C++ itself reported in the .json companion. Skipped when the
 * shared directory is absent. */
#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "quiver/format.h"
#include "util/load.h"
#include "test_util.h"

/* ------------------------------------------------------------ mini JSON */

typedef enum { J_NULL, J_BOOL, J_NUM, J_STR, J_ARR, J_OBJ } JKind;

typedef struct J {
  JKind kind;
  bool b;
  double num;
  int64_t inum; /* exact when the literal was an integer */
  char *str;    /* J_STR: NUL-terminated UTF-8 */
  size_t n;     /* J_ARR / J_OBJ: element count */
  struct J **items;
  char **keys; /* J_OBJ */
} J;

typedef struct JParser {
  const char *p, *end;
  int depth;
} JParser;

static void jfree(J *j) {
  if (j == NULL) return;
  for (size_t i = 0; i < j->n; i++) {
    jfree(j->items[i]);
    if (j->keys) free(j->keys[i]);
  }
  free(j->items);
  free(j->keys);
  free(j->str);
  free(j);
}

static void jskip(JParser *ps) {
  while (ps->p < ps->end && isspace((unsigned char)*ps->p)) ps->p++;
}

static J *jvalue(JParser *ps);

static size_t put_utf8(char *out, uint32_t cp) {
  if (cp < 0x80) {
    out[0] = (char)cp;
    return 1;
  }
  if (cp < 0x800) {
    out[0] = (char)(0xC0 | cp >> 6);
    out[1] = (char)(0x80 | (cp & 0x3F));
    return 2;
  }
  if (cp < 0x10000) {
    out[0] = (char)(0xE0 | cp >> 12);
    out[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
    out[2] = (char)(0x80 | (cp & 0x3F));
    return 3;
  }
  out[0] = (char)(0xF0 | cp >> 18);
  out[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
  out[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
  out[3] = (char)(0x80 | (cp & 0x3F));
  return 4;
}

static bool hex4(JParser *ps, uint32_t *out) {
  if (ps->end - ps->p < 4) return false;
  char tmp[5] = {ps->p[0], ps->p[1], ps->p[2], ps->p[3], 0};
  char *e;
  *out = (uint32_t)strtoul(tmp, &e, 16);
  if (e != tmp + 4) return false;
  ps->p += 4;
  return true;
}

/* After the opening quote; returns a malloc'd string or NULL. */
static char *jstring(JParser *ps) {
  char *out = malloc((size_t)(ps->end - ps->p) + 1);
  size_t n = 0;
  while (ps->p < ps->end && *ps->p != '"') {
    char c = *ps->p++;
    if (c != '\\') {
      out[n++] = c;
      continue;
    }
    if (ps->p >= ps->end) break;
    c = *ps->p++;
    switch (c) {
      case 'n': out[n++] = '\n'; break;
      case 't': out[n++] = '\t'; break;
      case 'r': out[n++] = '\r'; break;
      case 'b': out[n++] = '\b'; break;
      case 'f': out[n++] = '\f'; break;
      case 'u': {
        uint32_t cp, lo;
        if (!hex4(ps, &cp)) goto bad;
        if (cp >= 0xD800 && cp < 0xDC00 && ps->end - ps->p >= 6 && ps->p[0] == '\\' &&
            ps->p[1] == 'u') {
          ps->p += 2;
          if (!hex4(ps, &lo)) goto bad;
          cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
        }
        n += put_utf8(out + n, cp);
        break;
      }
      default: out[n++] = c; break; /* \" \\ \/ */
    }
  }
  if (ps->p >= ps->end) goto bad;
  ps->p++; /* closing quote */
  out[n] = '\0';
  return out;
bad:
  free(out);
  return NULL;
}

static J *jnew(JKind kind) {
  J *j = calloc(1, sizeof *j);
  j->kind = kind;
  return j;
}

static bool jappend(J *j, J *item, char *key) {
  J **items = realloc(j->items, (j->n + 1) * sizeof *items);
  if (items == NULL) return false;
  j->items = items;
  if (j->kind == J_OBJ) {
    char **keys = realloc(j->keys, (j->n + 1) * sizeof *keys);
    if (keys == NULL) return false;
    j->keys = keys;
    j->keys[j->n] = key;
  }
  j->items[j->n++] = item;
  return true;
}

static J *jcontainer(JParser *ps, JKind kind, char close) {
  J *j = jnew(kind);
  jskip(ps);
  if (ps->p < ps->end && *ps->p == close) {
    ps->p++;
    return j;
  }
  for (;;) {
    char *key = NULL;
    jskip(ps);
    if (kind == J_OBJ) {
      if (ps->p >= ps->end || *ps->p != '"') break;
      ps->p++;
      if ((key = jstring(ps)) == NULL) break;
      jskip(ps);
      if (ps->p >= ps->end || *ps->p != ':') {
        free(key);
        break;
      }
      ps->p++;
    }
    J *item = jvalue(ps);
    if (item == NULL || !jappend(j, item, key)) {
      jfree(item);
      free(key);
      break;
    }
    jskip(ps);
    if (ps->p < ps->end && *ps->p == ',') {
      ps->p++;
      continue;
    }
    if (ps->p < ps->end && *ps->p == close) {
      ps->p++;
      return j;
    }
    break;
  }
  jfree(j);
  return NULL;
}

static J *jvalue(JParser *ps) {
  jskip(ps);
  if (ps->p >= ps->end || ++ps->depth > 64) return NULL;
  J *j = NULL;
  char c = *ps->p;
  if (c == '{' || c == '[') {
    ps->p++;
    j = jcontainer(ps, c == '{' ? J_OBJ : J_ARR, c == '{' ? '}' : ']');
  } else if (c == '"') {
    ps->p++;
    char *s = jstring(ps);
    if (s) {
      j = jnew(J_STR);
      j->str = s;
    }
  } else if (ps->end - ps->p >= 4 && strncmp(ps->p, "null", 4) == 0) {
    ps->p += 4;
    j = jnew(J_NULL);
  } else if (ps->end - ps->p >= 4 && strncmp(ps->p, "true", 4) == 0) {
    ps->p += 4;
    j = jnew(J_BOOL);
    j->b = true;
  } else if (ps->end - ps->p >= 5 && strncmp(ps->p, "false", 5) == 0) {
    ps->p += 5;
    j = jnew(J_BOOL);
  } else {
    char buf[64];
    size_t n = 0;
    while (ps->p < ps->end && n < sizeof buf - 1 && strchr("+-0123456789.eE", *ps->p))
      buf[n++] = *ps->p++;
    buf[n] = '\0';
    if (n > 0) {
      j = jnew(J_NUM);
      j->num = strtod(buf, NULL);
      /* floats (tensor values) are never compared as integers; keep the
       * conversion defined for the huge ones */
      if (strpbrk(buf, ".eE") == NULL) j->inum = strtoll(buf, NULL, 10);
      else if (j->num > -9.2e18 && j->num < 9.2e18) j->inum = (int64_t)j->num;
    }
  }
  ps->depth--;
  return j;
}

static J *jparse(const char *text, size_t size) {
  JParser ps = {text, text + size, 0};
  return jvalue(&ps);
}

static const J *jget(const J *obj, const char *key) {
  if (obj == NULL || obj->kind != J_OBJ) return NULL;
  for (size_t i = 0; i < obj->n; i++)
    if (strcmp(obj->keys[i], key) == 0) return obj->items[i];
  return NULL;
}

static const char *jstr(const J *obj, const char *key) {
  const J *v = jget(obj, key);
  return v && v->kind == J_STR ? v->str : NULL;
}

static int64_t jint(const J *obj, const char *key) {
  const J *v = jget(obj, key);
  if (v == NULL || v->kind != J_NUM) fail_msg("json: \"%s\" is not a number", key);
  return v->inum;
}

/* ------------------------------------------------------------- context */

typedef struct Msg {
  int64_t offset;      /* of the prefix */
  int32_t meta_length; /* prefix + metadata + padding, as a footer Block counts it */
  int32_t fb_length;   /* the int32 length field */
  int64_t body_offset;
  QvMessage m;
} Msg;

typedef struct FileInfo {
  const char *name;
  bool is_file_format;
  size_t n_msgs;
  Msg msgs[64];
  bool has_footer;
  QvFooter footer;
} FileInfo;

static char *describe(const QvType *t, char *buf, size_t size) {
  return qv_type_describe(t, buf, size);
}

static char *describe_int(QvIntType it, char *buf, size_t size) {
  QvType t;
  memset(&t, 0, sizeof t);
  t.id = QV_TYPE_INT;
  t.u.int_ = it;
  return qv_type_describe(&t, buf, size);
}

static void expect_str(const FileInfo *fi, const char *what, const char *want, const char *got) {
  if (want == NULL || got == NULL || strcmp(want, got) != 0)
    fail_msg("%s: %s is \"%s\", Arrow C++ says \"%s\"", fi->name, what, got ? got : "(null)",
             want ? want : "(null)");
}

static void expect_i64(const FileInfo *fi, const char *what, int64_t want, int64_t got) {
  if (want != got)
    fail_msg("%s: %s is %lld, Arrow C++ says %lld", fi->name, what, (long long)got,
             (long long)want);
}

static void expect_i64_array(const FileInfo *fi, const char *what, const J *arr, int64_t n,
                             const int64_t *got) {
  if (arr == NULL || arr->kind != J_ARR) fail_msg("%s: json lacks %s", fi->name, what);
  expect_i64(fi, what, (int64_t)arr->n, n);
  for (int64_t i = 0; i < n; i++) expect_i64(fi, what, arr->items[i]->inum, got[i]);
}

static void check_shape(const FileInfo *fi, const J *js, int64_t ndim, const QvTensorDim *dims) {
  const J *shape = jget(js, "shape");
  assert_non_null(shape);
  expect_i64(fi, "ndim", (int64_t)shape->n, ndim);
  for (int64_t i = 0; i < ndim; i++) expect_i64(fi, "shape", shape->items[i]->inum, dims[i].size);
  const J *names = jget(js, "dim_names");
  assert_non_null(names);
  if (names->n == 0) {
    /* no names: Arrow C++ writes empty strings */
    for (int64_t i = 0; i < ndim; i++)
      if (dims[i].name && dims[i].name_len) fail_msg("%s: unexpected dim name", fi->name);
  } else {
    expect_i64(fi, "dim_names count", (int64_t)names->n, ndim);
    for (int64_t i = 0; i < ndim; i++) expect_str(fi, "dim name", names->items[i]->str, dims[i].name);
  }
}

/* layout.buffers[] entry called `name` must equal `b`. */
static void check_layout_buffer(const FileInfo *fi, const J *layout, const char *name,
                                QvBuffer b) {
  const J *bufs = jget(layout, "buffers");
  assert_non_null(bufs);
  for (size_t i = 0; i < bufs->n; i++) {
    if (strcmp(jstr(bufs->items[i], "name"), name) == 0) {
      expect_i64(fi, name, jint(bufs->items[i], "offset"), b.offset);
      expect_i64(fi, name, jint(bufs->items[i], "length"), b.length);
      return;
    }
  }
  fail_msg("%s: json layout has no buffer \"%s\"", fi->name, name);
}

static void check_layout(const FileInfo *fi, const J *js, const Msg *msg) {
  const J *layout = jget(js, "layout");
  assert_non_null(layout);
  char buf[64];
  expect_str(fi, "header", jstr(layout, "header"), qv_header_type_name(msg->m.header_type));
  expect_str(fi, "version", jstr(layout, "metadata_version"),
             qv_metadata_version_name(msg->m.version));
  expect_i64(fi, "metadata length", jint(layout, "metadata_flatbuffer_length"), msg->fb_length);
  expect_i64(fi, "body offset", jint(layout, "body_offset"), msg->body_offset);
  expect_i64(fi, "bodyLength", jint(layout, "body_length"), msg->m.body_length);
  if (msg->m.header_type == QV_HEADER_TENSOR) {
    const QvTensorMeta *t = &msg->m.header.tensor;
    expect_str(fi, "type", jstr(js, "type"), describe(&t->type, buf, sizeof buf));
    check_shape(fi, js, t->ndim, t->shape);
    assert_true(t->has_strides);
    expect_i64_array(fi, "strides", jget(js, "strides"), t->n_strides, t->strides);
    check_layout_buffer(fi, layout, "data", t->data);
    return;
  }
  assert_int_equal(msg->m.header_type, QV_HEADER_SPARSE_TENSOR);
  const QvSparseTensorMeta *s = &msg->m.header.sparse_tensor;
  const char *kind = jstr(js, "kind");
  expect_str(fi, "type", jstr(js, "type"), describe(&s->type, buf, sizeof buf));
  check_shape(fi, js, s->ndim, s->shape);
  expect_i64(fi, "non_zero_length", jint(layout, "declared_non_zero_length"), s->non_zero_length);
  check_layout_buffer(fi, layout, "data", s->data);
  if (strcmp(kind, "sparse_coo") == 0) {
    assert_int_equal(s->format, QV_SPARSE_COO);
    const QvSparseCOO *c = &s->index.coo;
    expect_str(fi, "indices type", jstr(js, "indices_type"),
               describe_int(c->indices_type, buf, sizeof buf));
    expect_i64(fi, "isCanonical", jget(js, "is_canonical")->b, c->is_canonical);
    const J *strides = jget(js, "indices_strides");
    if (strides) expect_i64_array(fi, "indicesStrides", strides, c->n_indices_strides,
                                  c->indices_strides);
    check_layout_buffer(fi, layout, "indices", c->indices_buffer);
  } else if (strcmp(kind, "sparse_csr") == 0 || strcmp(kind, "sparse_csc") == 0) {
    const QvSparseCSX *c = &s->index.csx;
    expect_i64(fi, "format", kind[9] == 'r' ? QV_SPARSE_CSR : QV_SPARSE_CSC, s->format);
    expect_str(fi, "compressed_axis", jstr(js, "compressed_axis"),
               s->format == QV_SPARSE_CSR ? "row" : "column");
    expect_str(fi, "indptr type", jstr(js, "indptr_type"),
               describe_int(c->indptr_type, buf, sizeof buf));
    expect_str(fi, "indices type", jstr(js, "indices_type"),
               describe_int(c->indices_type, buf, sizeof buf));
    check_layout_buffer(fi, layout, "indptr", c->indptr_buffer);
    check_layout_buffer(fi, layout, "indices", c->indices_buffer);
  } else {
    expect_str(fi, "kind", "sparse_csf", kind);
    assert_int_equal(s->format, QV_SPARSE_CSF);
    const QvSparseCSF *c = &s->index.csf;
    expect_str(fi, "indptr type", jstr(js, "indptr_type"),
               describe_int(c->indptr_type, buf, sizeof buf));
    expect_str(fi, "indices type", jstr(js, "indices_type"),
               describe_int(c->indices_type, buf, sizeof buf));
    const J *axis = jget(js, "axis_order");
    expect_i64(fi, "axisOrder length", (int64_t)axis->n, c->n_axis_order);
    for (int64_t i = 0; i < c->n_axis_order; i++)
      expect_i64(fi, "axisOrder", axis->items[i]->inum, c->axis_order[i]);
    expect_i64(fi, "indptrBuffers", (int64_t)jget(js, "indptr")->n, c->n_indptr_buffers);
    expect_i64(fi, "indicesBuffers", (int64_t)jget(js, "indices")->n, c->n_indices_buffers);
    for (int64_t i = 0; i < c->n_indptr_buffers; i++) {
      char name[32];
      snprintf(name, sizeof name, "indptr[%lld]", (long long)i);
      check_layout_buffer(fi, layout, name, c->indptr_buffers[i]);
    }
    for (int64_t i = 0; i < c->n_indices_buffers; i++) {
      char name[32];
      snprintf(name, sizeof name, "indices[%lld]", (long long)i);
      check_layout_buffer(fi, layout, name, c->indices_buffers[i]);
    }
  }
}

/* Arrow C++'s names for the record batch files' types: "int32", "utf8"
 * (also "string" inside nested types), "list<item: int64>", "struct<a: int32,
 * b: string>", "dictionary<values=string, indices=int32, ordered=0>". */
static bool type_matches(const char *s, size_t len, const QvField *f);

static bool children_match(const char *s, size_t len, const QvField *f) {
  int64_t k = 0;
  size_t i = 0;
  while (i < len) {
    size_t start = i;
    int depth = 0;
    while (i < len && !(depth == 0 && s[i] == ',')) {
      if (s[i] == '<') depth++;
      if (s[i] == '>') depth--;
      i++;
    }
    const char *colon = memchr(s + start, ':', i - start);
    if (colon == NULL || k >= f->n_children) return false;
    const QvField *c = &f->children[k++];
    size_t name_len = (size_t)(colon - (s + start));
    if (c->name_len != name_len || memcmp(c->name, s + start, name_len) != 0) return false;
    const char *t = colon + 1;
    while (*t == ' ') t++;
    if (!type_matches(t, (size_t)(s + i - t), c)) return false;
    if (i < len) i++; /* comma */
    while (i < len && s[i] == ' ') i++;
  }
  return k == f->n_children;
}

static bool type_matches(const char *s, size_t len, const QvField *f) {
  char buf[64];
#define STARTS(p) (len > strlen(p) && strncmp(s, p, strlen(p)) == 0 && s[len - 1] == '>')
  if (STARTS("dictionary<")) {
    const QvDictionaryEncoding *d = f->dictionary;
    if (d == NULL) return false;
    char want[160];
    snprintf(want, sizeof want, "dictionary<values=%s, indices=%s, ordered=%d>",
             f->type.id == QV_TYPE_UTF8 ? "string" : describe(&f->type, buf, sizeof buf),
             describe_int(d->index_type, buf + 32, 32), d->is_ordered);
    return strlen(want) == len && strncmp(want, s, len) == 0;
  }
  if (f->dictionary) return false;
  if (STARTS("list<"))
    return f->type.id == QV_TYPE_LIST && children_match(s + 5, len - 6, f);
  if (STARTS("struct<"))
    return f->type.id == QV_TYPE_STRUCT && children_match(s + 7, len - 8, f);
#undef STARTS
  if (len == 6 && strncmp(s, "string", 6) == 0) return f->type.id == QV_TYPE_UTF8;
  describe(&f->type, buf, sizeof buf);
  return strlen(buf) == len && strncmp(buf, s, len) == 0;
}

static int64_t count_nodes(const QvField *f) {
  int64_t n = 1;
  for (int64_t i = 0; i < f->n_children; i++) n += count_nodes(&f->children[i]);
  return n;
}

static void check_record_batches(const FileInfo *fi, const J *js) {
  assert_true(fi->n_msgs >= 1);
  const QvMessage *first = &fi->msgs[0].m;
  assert_int_equal(first->header_type, QV_HEADER_SCHEMA);
  const QvSchema *schema = &first->header.schema;
  const J *fields = jget(js, "schema");
  expect_i64(fi, "field count", (int64_t)fields->n, schema->n_fields);
  for (int64_t i = 0; i < schema->n_fields; i++) {
    const J *jf = fields->items[i];
    const QvField *f = &schema->fields[i];
    expect_str(fi, "field name", jstr(jf, "name"), f->name);
    expect_i64(fi, "nullable", jget(jf, "nullable")->b, f->nullable);
    const char *t = jstr(jf, "type");
    if (!type_matches(t, strlen(t), f)) fail_msg("%s: field %s is not %s", fi->name, f->name, t);
  }
  const J *batches = jget(js, "batches");
  const char *compression = jstr(js, "compression");
  size_t k = 0;
  for (size_t i = 1; i < fi->n_msgs; i++) {
    const QvMessage *m = &fi->msgs[i].m;
    const QvRecordBatch *rb = m->header_type == QV_HEADER_RECORD_BATCH ? &m->header.record_batch
                              : &m->header.dictionary_batch.data;
    assert_true(m->header_type == QV_HEADER_RECORD_BATCH ||
                m->header_type == QV_HEADER_DICTIONARY_BATCH);
    expect_i64(fi, "compressed", compression != NULL, rb->compression != QV_COMPRESSION_NONE);
    if (compression)
      expect_i64(fi, "codec", strcmp(compression, "ZSTD") == 0 ? QV_COMPRESSION_ZSTD : QV_COMPRESSION_LZ4_FRAME,
                 rb->compression);
    if (m->header_type != QV_HEADER_RECORD_BATCH) continue;
    if (k >= batches->n) fail_msg("%s: more record batches than Arrow C++ reported", fi->name);
    const J *jb = batches->items[k++];
    expect_i64(fi, "num_rows", jint(jb, "num_rows"), rb->length);
    const J *cols = jget(jb, "columns");
    int64_t node = 0;
    for (int64_t c = 0; c < schema->n_fields; c++) {
      assert_true(node < rb->n_nodes);
      expect_i64(fi, "column length", rb->length, rb->nodes[node].length);
      expect_i64(fi, "null_count", jint(cols->items[c], "null_count"), rb->nodes[node].null_count);
      node += count_nodes(&schema->fields[c]);
    }
    expect_i64(fi, "node count", node, rb->n_nodes);
  }
  expect_i64(fi, "record batches", (int64_t)batches->n, (int64_t)k);
}

/* ------------------------------------------------------------ per file */

static void roundtrip_ok(const FileInfo *fi, const QvMessage *m) {
  uint8_t *bytes;
  size_t n;
  QvError e;
  if (qv_message_encode(m, &bytes, &n, &e)) fail_msg("%s: re-encode: %s", fi->name, e.message);
  QvMessage again;
  if (qv_message_decode(bytes, n, NULL, &again, &e))
    fail_msg("%s: decode of re-encoded: %s", fi->name, e.message);
  char where[256];
  if (!qv_message_equal(m, &again, where, sizeof where))
    fail_msg("%s: re-encoded message differs at %s", fi->name, where);
  qv_message_reset(&again);
  free(bytes);
}

/* A little-endian framing field (any host). */
static int32_t load_i32(const uint8_t *p) { return qvi_le_i32(p); }

static void check_footer(FileInfo *fi, const uint8_t *data, size_t size, size_t *stream_end) {
  assert_true(size >= 8 + 10);
  assert_memory_equal(data + size - 6, "ARROW1", 6);
  int32_t len = load_i32(data + size - 10);
  assert_true(len > 0 && (size_t)len <= size - 18);
  *stream_end = size - 10 - (size_t)len;
  QvError e;
  if (qv_footer_decode(data + *stream_end, (size_t)len, NULL, &fi->footer, &e))
    fail_msg("%s: footer: %s", fi->name, e.message);
  fi->has_footer = true;
  /* the footer re-encodes to an equal footer */
  uint8_t *bytes;
  size_t n;
  assert_int_equal(qv_footer_encode(&fi->footer, &bytes, &n, &e), QV_OK);
  QvFooter again;
  assert_int_equal(qv_footer_decode(bytes, n, NULL, &again, &e), QV_OK);
  assert_true(qv_footer_equal(&fi->footer, &again, NULL, 0));
  qv_footer_reset(&again);
  free(bytes);
}

/* Footer blocks point at messages the stream walk found, with their sizes. */
static void check_blocks(const FileInfo *fi, int64_t n, const QvBlock *blocks, uint8_t header) {
  for (int64_t i = 0; i < n; i++) {
    size_t k = 0;
    while (k < fi->n_msgs && fi->msgs[k].offset != blocks[i].offset) k++;
    if (k == fi->n_msgs) fail_msg("%s: footer block at %lld is not a message", fi->name,
                                  (long long)blocks[i].offset);
    expect_i64(fi, "block metaDataLength", fi->msgs[k].meta_length, blocks[i].meta_data_length);
    expect_i64(fi, "block bodyLength", fi->msgs[k].m.body_length, blocks[i].body_length);
    expect_i64(fi, "block header", header, fi->msgs[k].m.header_type);
  }
}

static int check_file(const char *dir, const char *name, bool body_may_be_short) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  size_t size;
  uint8_t *data = qv_test_read_file(path, &size);
  assert_non_null(data);
  FileInfo *fi = calloc(1, sizeof *fi);
  fi->name = name;
  size_t pos = 0, end = size;
  if (size >= 8 && memcmp(data, "ARROW1\0\0", 8) == 0) {
    fi->is_file_format = true;
    pos = 8;
    check_footer(fi, data, size, &end);
  }
  while (pos + 4 <= end) {
    uint32_t marker;
    memcpy(&marker, data + pos, 4);
    size_t prefix = 4;
    int32_t len = (int32_t)marker;
    if (marker == 0xFFFFFFFFu) {
      assert_true(pos + 8 <= end);
      len = load_i32(data + pos + 4);
      prefix = 8;
    }
    if (len == 0) break; /* end of stream */
    assert_true(len > 0 && (size_t)len <= end - pos - prefix);
    assert_true(fi->n_msgs < sizeof fi->msgs / sizeof fi->msgs[0]);
    Msg *msg = &fi->msgs[fi->n_msgs];
    QvError e;
    if (qv_message_decode(data + pos + prefix, (size_t)len, NULL, &msg->m, &e))
      fail_msg("%s: message at %zu: %s", name, pos, e.message);
    fi->n_msgs++;
    msg->offset = (int64_t)pos;
    msg->fb_length = len;
    msg->meta_length = (int32_t)(prefix + (size_t)len);
    msg->body_offset = (int64_t)(pos + prefix + (size_t)len);
    roundtrip_ok(fi, &msg->m);
    size_t body_end = pos + prefix + (size_t)len;
    if ((uint64_t)msg->m.body_length > end - body_end) {
      if (!body_may_be_short) fail_msg("%s: body runs past the end", name);
      break;
    }
    pos = body_end + (size_t)msg->m.body_length;
  }
  assert_true(fi->n_msgs > 0);

  if (fi->has_footer) {
    assert_true(fi->footer.has_schema);
    assert_int_equal(fi->msgs[0].m.header_type, QV_HEADER_SCHEMA);
    char where[256];
    if (!qv_schema_equal(&fi->footer.schema, &fi->msgs[0].m.header.schema, where, sizeof where))
      fail_msg("%s: footer schema differs from the stream's at %s", name, where);
    check_blocks(fi, fi->footer.n_dictionaries, fi->footer.dictionaries,
                 QV_HEADER_DICTIONARY_BATCH);
    check_blocks(fi, fi->footer.n_record_batches, fi->footer.record_batches,
                 QV_HEADER_RECORD_BATCH);
  }

  /* the companion written by Arrow C++ */
  int checked_json = 0;
  char jpath[4096];
  snprintf(jpath, sizeof jpath, "%s", path);
  char *dot = strrchr(jpath, '.');
  snprintf(dot, sizeof jpath - (size_t)(dot - jpath), ".json");
  size_t jsize;
  char *text = (char *)qv_test_read_file(jpath, &jsize);
  if (text) {
    J *js = jparse(text, jsize);
    if (js == NULL) fail_msg("%s: cannot parse", jpath);
    const char *kind = jstr(js, "kind");
    assert_non_null(kind);
    if (strncmp(kind, "record_batch", 12) == 0) {
      check_record_batches(fi, js);
    } else {
      assert_int_equal(fi->n_msgs, 1);
      check_layout(fi, js, &fi->msgs[0]);
    }
    checked_json = 1;
    jfree(js);
    free(text);
  }

  for (size_t i = 0; i < fi->n_msgs; i++) qv_message_reset(&fi->msgs[i].m);
  if (fi->has_footer) qv_footer_reset(&fi->footer);
  free(fi);
  free(data);
  return checked_json;
}

static int has_suffix(const char *s, const char *suffix) {
  size_t n = strlen(s), k = strlen(suffix);
  return n >= k && strcmp(s + n - k, suffix) == 0;
}

static int cmp_names(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Checks every Arrow file in a directory, in name order. */
static void check_dir(const char *sub, bool body_may_be_short, int *files, int *jsons) {
  char dir[4096];
  snprintf(dir, sizeof dir, "%s", qv_test_shared_path(sub));
  DIR *d = opendir(dir);
  assert_non_null(d);
  char *names[1024];
  size_t n = 0;
  for (struct dirent *ent; (ent = readdir(d)) != NULL;) {
    if ((has_suffix(ent->d_name, ".arrow") || has_suffix(ent->d_name, ".arrows")) && n < 1024)
      names[n++] = strdup(ent->d_name);
  }
  closedir(d);
  qsort(names, n, sizeof names[0], cmp_names);
  for (size_t i = 0; i < n; i++) {
    *jsons += check_file(dir, names[i], body_may_be_short);
    (*files)++;
    free(names[i]);
  }
}

static void test_every_shared_file(void **state) {
  (void)state;
  if (!qv_test_have_shared()) {
    print_message("shared test data absent (%s): skipped\n", qv_test_shared_path(""));
    skip();
  }
  int files = 0, jsons = 0;
  check_dir("", false, &files, &jsons);
  check_dir("invalid", true, &files, &jsons);
  check_dir("arrow_bugs", false, &files, &jsons);
  print_message("%d files decoded, %d checked against their .json\n", files, jsons);
  assert_true(files >= 150);
  assert_true(jsons >= 150);
}

/* A few facts spelled out, independent of the JSON reader above. */
static void decode_first(const char *name, QvMessage *m) {
  size_t size;
  uint8_t *data = qv_test_read_file(qv_test_shared_path(name), &size);
  assert_non_null(data);
  assert_true(size > 8);
  int32_t len = load_i32(data + 4);
  QvError e;
  if (qv_message_decode(data + 8, (size_t)len, NULL, m, &e)) fail_msg("%s: %s", name, e.message);
  free(data);
}

static void test_spot_checks(void **state) {
  (void)state;
  if (!qv_test_have_shared()) skip();
  QvMessage m;

  decode_first("tensor_int32_2x3_rowmajor_dimnames_utf8.arrow", &m);
  assert_int_equal(m.version, QV_METADATA_V5);
  assert_int_equal(m.header_type, QV_HEADER_TENSOR);
  assert_int_equal(m.body_length, 24);
  const QvTensorMeta *t = &m.header.tensor;
  assert_int_equal(t->type.id, QV_TYPE_INT);
  assert_int_equal(t->type.u.int_.bit_width, 32);
  assert_true(t->type.u.int_.is_signed);
  assert_int_equal(t->ndim, 2);
  assert_string_equal(t->shape[0].name, "\xce\xb1lpha");
  assert_string_equal(t->shape[1].name, "b\"q");
  assert_int_equal(t->strides[0], 12);
  assert_int_equal(t->strides[1], 4);
  qv_message_reset(&m);

  decode_first("tensor_float64_scalar_0d.arrow", &m); /* strides [] not 8-aligned */
  assert_int_equal(m.header.tensor.ndim, 0);
  assert_true(m.header.tensor.has_strides);
  assert_int_equal(m.header.tensor.n_strides, 0);
  assert_int_equal(m.header.tensor.data.length, 8);
  qv_message_reset(&m);

  decode_first("sparse_csc_float64_idx_int8_6x4.arrow", &m);
  const QvSparseTensorMeta *s = &m.header.sparse_tensor;
  assert_int_equal(s->format, QV_SPARSE_CSC);
  assert_int_equal(s->index.csx.indptr_type.bit_width, 8);
  assert_int_equal(s->index.csx.indices_buffer.offset, 8);
  assert_int_equal(s->non_zero_length, 9);
  qv_message_reset(&m);

  decode_first("sparse_coo_float64_idx_int8_6x4.arrow", &m);
  s = &m.header.sparse_tensor;
  assert_int_equal(s->format, QV_SPARSE_COO);
  assert_true(s->index.coo.is_canonical);
  assert_int_equal(s->index.coo.n_indices_strides, 2);
  assert_int_equal(s->index.coo.indices_strides[0], 2);
  assert_int_equal(s->index.coo.indices_strides[1], 1);
  assert_int_equal(s->data.offset, 24);
  assert_int_equal(s->data.length, 72);
  qv_message_reset(&m);

  decode_first("sparse_csf_float64_idx_int32_fbs_example_2x3x4x5.arrow", &m);
  s = &m.header.sparse_tensor;
  assert_int_equal(s->format, QV_SPARSE_CSF);
  assert_int_equal(s->index.csf.n_axis_order, 4);
  assert_int_equal(s->index.csf.n_indptr_buffers, 3);
  assert_int_equal(s->index.csf.n_indices_buffers, 4);
  assert_int_equal(s->index.csf.indices_buffers[3].length, 8); /* an element count */
  assert_int_equal(s->index.csf.indptr_type.bit_width, 32);
  assert_int_equal(s->data.offset, 128);
  qv_message_reset(&m);

  decode_first("rb_stream_mixed_nulls.arrows", &m);
  const QvSchema *sc = &m.header.schema;
  assert_int_equal(sc->n_fields, 6);
  assert_string_equal(sc->fields[3].name, "list_i64");
  assert_int_equal(sc->fields[3].type.id, QV_TYPE_LIST);
  assert_string_equal(sc->fields[3].children[0].name, "item");
  assert_non_null(sc->fields[5].dictionary);
  assert_int_equal(sc->fields[5].type.id, QV_TYPE_UTF8);
  qv_message_reset(&m);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_every_shared_file),
      cmocka_unit_test(test_spot_checks),
  };
  return qv_test_run(tests, NULL, NULL);
}
