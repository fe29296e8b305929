/* Shared dictionaries in the IPC stream and file formats: one dictionary id
 * used by several fields (top level, inside a struct, inside a list, and in
 * the values of another dictionary) is written once per change and read back
 * into every field that uses it; delta and replacement batches apply to all
 * of them; fields that share an id must agree on its value type (writer and
 * reader) and hold the same dictionary in a batch (writer). The values are
 * built with the integration JSON reader and checked with its comparison,
 * which also checks which fields share a dictionary. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"
#include "quiver/array.h"
#include "quiver/integration_json.h"
#include "quiver/io.h"
#include "quiver/ipc.h"
#include "quiver/recordbatch_ipc.h"

#define ALL_TYPES QV_SOURCE_DIR "/tests/data/integration/all_types.json"

/* Fields a (dict 0, int8 indices), s.b (dict 0 in a struct, int16), l.item
 * (dict 0 in a list, int32), c (dict 5, another value type); DICT0 and the
 * rows of each document differ so that delta and replacement show. */
static char *doc_at(const char *dict0, int n_dict0, int last, int c_id) {
  static const char fmt[] =
      "{\"schema\":{\"fields\":["
      "{\"name\":\"a\",\"nullable\":true,\"type\":{\"name\":\"utf8\"},\"children\":[],"
      "\"dictionary\":{\"id\":0,\"indexType\":{\"name\":\"int\",\"bitWidth\":8,\"isSigned\":true},"
      "\"isOrdered\":false}},"
      "{\"name\":\"s\",\"nullable\":true,\"type\":{\"name\":\"struct\"},\"children\":["
      "{\"name\":\"b\",\"nullable\":true,\"type\":{\"name\":\"utf8\"},\"children\":[],"
      "\"dictionary\":{\"id\":0,\"indexType\":{\"name\":\"int\",\"bitWidth\":16,\"isSigned\":true},"
      "\"isOrdered\":false}}]},"
      "{\"name\":\"l\",\"nullable\":true,\"type\":{\"name\":\"list\"},\"children\":["
      "{\"name\":\"item\",\"nullable\":true,\"type\":{\"name\":\"utf8\"},\"children\":[],"
      "\"dictionary\":{\"id\":0,\"indexType\":{\"name\":\"int\",\"bitWidth\":32,\"isSigned\":true},"
      "\"isOrdered\":false}}]},"
      "{\"name\":\"c\",\"nullable\":true,\"type\":{\"name\":\"int\",\"bitWidth\":32,\"isSigned\":true},"
      "\"children\":[],\"dictionary\":{\"id\":%d,\"indexType\":{\"name\":\"int\",\"bitWidth\":8,"
      "\"isSigned\":true},\"isOrdered\":false}}]},"
      "\"dictionaries\":["
      "{\"id\":0,\"data\":{\"count\":%d,\"columns\":[{\"name\":\"DICT0\",\"count\":%d,%s}]}},"
      "{\"id\":%d,\"data\":{\"count\":2,\"columns\":[{\"name\":\"DICT5\",\"count\":2,"
      "\"VALIDITY\":[1,1],\"DATA\":[10,20]}]}}],"
      "\"batches\":[{\"count\":2,\"columns\":["
      "{\"name\":\"a\",\"count\":2,\"VALIDITY\":[1,0],\"DATA\":[%d,0]},"
      "{\"name\":\"s\",\"count\":2,\"VALIDITY\":[1,1],\"children\":["
      "{\"name\":\"b\",\"count\":2,\"VALIDITY\":[1,1],\"DATA\":[0,1]}]},"
      "{\"name\":\"l\",\"count\":2,\"VALIDITY\":[1,1],\"OFFSET\":[0,1,3],\"children\":["
      "{\"name\":\"item\",\"count\":3,\"VALIDITY\":[1,1,1],\"DATA\":[1,0,%d]}]},"
      "{\"name\":\"c\",\"count\":2,\"VALIDITY\":[1,1],\"DATA\":[1,0]}]}]}";
  size_t cap = sizeof fmt + strlen(dict0) + 64;
  char *text = malloc(cap);
  assert_non_null(text);
  snprintf(text, cap, fmt, c_id, n_dict0, n_dict0, dict0, c_id, last, last);
  return text;
}

/* The rows use the last entry of DICT0. */
static char *doc(const char *dict0, int n_dict0, int c_id) {
  return doc_at(dict0, n_dict0, n_dict0 - 1, c_id);
}

static QvJsonFile *read_json(const char *text) {
  QvJsonFile *f;
  QvError e;
  if (qv_test_json_read_text(&f, text, strlen(text), NULL, &e) != QV_OK) fail_msg("JSON: %s", e.message);
  return f;
}

static const char k_xy[] = "\"VALIDITY\":[1,1],\"OFFSET\":[0,1,2],\"DATA\":[\"x\",\"y\"]";
static const char k_xyz[] = "\"VALIDITY\":[1,1,1],\"OFFSET\":[0,1,2,3],\"DATA\":[\"x\",\"y\",\"z\"]";
static const char k_pq[] = "\"VALIDITY\":[1,1],\"OFFSET\":[0,1,2],\"DATA\":[\"p\",\"q\"]";

/* Writes batch 0 of each document with one writer; returns the bytes. */
static QvStatus write_docs(QvJsonFile **docs, int n, QvIpcFormat format, const int64_t *ids,
                           int64_t n_ids, uint8_t **bytes, size_t *size, QvError *e) {
  QvJsonData d;
  qv_json_file_data(docs[0], &d);
  QvRbWriteOptions o;
  memset(&o, 0, sizeof o);
  o.format = format;
  o.dictionary_ids = ids ? ids : d.dictionary_ids;
  o.n_dictionary_ids = ids ? n_ids : d.n_dictionary_ids;
  QvSink *sink;
  assert_int_equal(qv_sink_new_memory(&sink, e), QV_OK);
  QvRbWriter *w;
  QvStatus st = qv_rb_writer_new(&w, d.schema, sink, &o, e);
  for (int i = 0; !st && i < n; i++) {
    QvJsonData di;
    qv_json_file_data(docs[i], &di);
    st = qv_rb_writer_write(w, di.batches[0], e);
  }
  if (!st) st = qv_rb_writer_finish(w, e);
  qv_rb_writer_free(w);
  if (!st) st = qv_sink_memory_take(sink, bytes, size, e);
  qv_sink_free(sink);
  return st;
}

/* The dictionary batches of a stream: how many, how many deltas. */
static void count_dictionary_batches(const uint8_t *bytes, size_t size, int *full, int *delta) {
  QvIpcReader *r;
  QvError e;
  assert_int_equal(qv_test_reader_memory(&r, bytes, size, &e), QV_OK);
  *full = *delta = 0;
  QvIpcMessage m;
  while (qv_ipc_reader_next(r, &m, &e) == QV_OK) {
    if (m.message.header_type == QV_HEADER_DICTIONARY_BATCH) {
      if (m.message.header.dictionary_batch.is_delta) (*delta)++;
      else (*full)++;
    }
    qv_ipc_message_reset(&m);
  }
  qv_ipc_reader_free(r);
}

/* Batch i of the stream/file in bytes equals batch 0 of docs[i], with the
 * same dictionary sharing. */
static void check_read(const uint8_t *bytes, size_t size, QvIpcFormat format, QvJsonFile **docs,
                       int n) {
  QvSource *src;
  QvError e;
  assert_int_equal(qv_source_new_memory(&src, bytes, size, NULL, &e), QV_OK);
  struct ArrowArrayStream s;
  QvRbFileReader *fr = NULL;
  struct ArrowSchema schema;
  const int64_t *ids;
  int64_t n_ids;
  if (format == QV_IPC_FORMAT_FILE) {
    if (qv_rb_file_reader_new(&fr, src, NULL, &e) != QV_OK) fail_msg("file: %s", e.message);
    assert_int_equal(qv_rb_file_n_batches(fr), n);
    assert_int_equal(qv_rb_file_get_schema(fr, &schema, &e), QV_OK);
    qv_rb_file_dictionary_ids(fr, &ids, &n_ids);
  } else {
    if (qv_rb_stream_reader_new(&s, src, NULL, &e) != QV_OK) fail_msg("stream: %s", e.message);
    assert_int_equal(qv_rb_stream_get_schema(&s, &schema, &e), QV_OK);
    qv_rb_stream_dictionary_ids(&s, &ids, &n_ids);
  }
  qv_source_free(src);
  for (int i = 0; i < n; i++) {
    struct ArrowArray b;
    QvStatus st = fr ? qv_rb_file_read_batch(fr, i, &b, &e) : qv_rb_stream_get_next(&s, &b, &e);
    if (st) fail_msg("batch %d: %s", i, e.message);
    QvJsonData want, got;
    qv_json_file_data(docs[i], &want);
    want.n_batches = 1;
    const struct ArrowArray *bp[1] = {&b};
    memset(&got, 0, sizeof got);
    got.schema = &schema;
    got.batches = bp;
    got.n_batches = 1;
    got.dictionary_ids = ids;
    got.n_dictionary_ids = n_ids;
    if (qv_json_compare(&want, &got, NULL, &e) != QV_OK) fail_msg("batch %d: %s", i, e.message);
    b.release(&b);
  }
  if (!fr) {
    struct ArrowArray end;
    assert_int_equal(qv_rb_stream_get_next(&s, &end, &e), QV_EOS);
    s.release(&s);
  }
  qv_rb_file_reader_free(fr);
  schema.release(&schema);
}

static void free_docs(QvJsonFile **docs, int n) {
  for (int i = 0; i < n; i++) qv_json_file_free(docs[i]);
}

/* Stream: the first dictionary, a delta (x, y -> x, y, z), a replacement
 * (p, q): each written once for the three fields of id 0 and seen by all. */
static void test_stream_delta_and_replacement(void **state) {
  (void)state;
  char *t[3] = {doc(k_xy, 2, 5), doc(k_xyz, 3, 5), doc(k_pq, 2, 5)};
  QvJsonFile *docs[3] = {read_json(t[0]), read_json(t[1]), read_json(t[2])};
  QvJsonData d;
  qv_json_file_data(docs[0], &d);
  assert_int_equal(d.n_dictionary_ids, 4);
  uint8_t *bytes;
  size_t size;
  QvError e;
  if (write_docs(docs, 3, QV_IPC_FORMAT_STREAM, NULL, 0, &bytes, &size, &e))
    fail_msg("write: %s", e.message);
  int full, delta;
  count_dictionary_batches(bytes, size, &full, &delta);
  assert_int_equal(full, 3); /* id 0, id 5, the replacement of id 0 */
  assert_int_equal(delta, 1);
  check_read(bytes, size, QV_IPC_FORMAT_STREAM, docs, 3);
  qv_free(bytes);
  free_docs(docs, 3);
  for (int i = 0; i < 3; i++) free(t[i]);
}

/* File: a delta is allowed, a replacement is not. */
static void test_file_delta(void **state) {
  (void)state;
  char *t[3] = {doc(k_xy, 2, 5), doc(k_xyz, 3, 5), doc(k_pq, 2, 5)};
  QvJsonFile *docs[3] = {read_json(t[0]), read_json(t[1]), read_json(t[2])};
  uint8_t *bytes;
  size_t size;
  QvError e;
  if (write_docs(docs, 2, QV_IPC_FORMAT_FILE, NULL, 0, &bytes, &size, &e))
    fail_msg("write: %s", e.message);
  /* a file's dictionaries are all read before its batches: batch 0 sees
   * the grown dictionary, through which its indices mean what they meant */
  char *grown = doc_at(k_xyz, 3, 1, 5);
  QvJsonFile *seen[2] = {read_json(grown), docs[1]};
  check_read(bytes, size, QV_IPC_FORMAT_FILE, seen, 2);
  qv_json_file_free(seen[0]);
  free(grown);
  qv_free(bytes);
  assert_int_equal(write_docs(docs, 3, QV_IPC_FORMAT_FILE, NULL, 0, &bytes, &size, &e), QV_EINVAL);
  assert_non_null(strstr(e.message, "dictionary 0 changed"));
  free_docs(docs, 3);
  for (int i = 0; i < 3; i++) free(t[i]);
}

/* Every type, two fields sharing dictionary 0 and a third using it inside
 * dictionary 1's values, through a stream and a file, whole and sliced. */
static void test_all_types(void **state) {
  (void)state;
  size_t len;
  char *text = (char *)qv_test_read_file(ALL_TYPES, &len);
  assert_non_null(text);
  QvJsonFile *f;
  QvError e;
  if (qv_test_json_read_text(&f, text, len, NULL, &e)) fail_msg("%s", e.message);
  free(text);
  QvJsonData d;
  qv_json_file_data(f, &d);
  struct ArrowArray slice;
  assert_int_equal(qv_array_share(d.batches[0], &slice, &e), QV_OK);
  slice.offset = 1;
  slice.length = 2;
  for (int sliced = 0; sliced < 2; sliced++) {
    for (int k = 0; k < 2; k++) {
      QvIpcFormat format = k ? QV_IPC_FORMAT_FILE : QV_IPC_FORMAT_STREAM;
      QvRbWriteOptions o;
      memset(&o, 0, sizeof o);
      o.format = format;
      o.dictionary_ids = d.dictionary_ids;
      o.n_dictionary_ids = d.n_dictionary_ids;
      QvSink *sink;
      QvRbWriter *w;
      assert_int_equal(qv_sink_new_memory(&sink, &e), QV_OK);
      if (qv_rb_writer_new(&w, d.schema, sink, &o, &e)) fail_msg("%s", e.message);
      const struct ArrowArray *batches[2] = {sliced ? &slice : d.batches[0], d.batches[1]};
      for (int i = 0; i < 2; i++)
        if (qv_rb_writer_write(w, batches[i], &e)) fail_msg("batch %d: %s", i, e.message);
      assert_int_equal(qv_rb_writer_finish(w, &e), QV_OK);
      qv_rb_writer_free(w);
      uint8_t *bytes;
      size_t size;
      assert_int_equal(qv_sink_memory_take(sink, &bytes, &size, &e), QV_OK);
      qv_sink_free(sink);
      int full, delta;
      count_dictionary_batches(bytes, size, &full, &delta);
      assert_int_equal(full, 2); /* ids 0 and 1, once each */
      assert_int_equal(delta, 0);
      /* read back: the same values and the same sharing */
      QvSource *src;
      assert_int_equal(qv_source_new_memory(&src, bytes, size, NULL, &e), QV_OK);
      struct ArrowArrayStream s;
      if (qv_rb_stream_reader_new(&s, src, NULL, &e)) fail_msg("%s", e.message);
      qv_source_free(src);
      struct ArrowSchema schema;
      struct ArrowArray got_b[2];
      assert_int_equal(qv_rb_stream_get_schema(&s, &schema, &e), QV_OK);
      for (int i = 0; i < 2; i++)
        if (qv_rb_stream_get_next(&s, &got_b[i], &e)) fail_msg("%s", e.message);
      QvJsonData want = d, got;
      want.batches = batches;
      const struct ArrowArray *gp[2] = {&got_b[0], &got_b[1]};
      memset(&got, 0, sizeof got);
      got.schema = &schema;
      got.batches = gp;
      got.n_batches = 2;
      qv_rb_stream_dictionary_ids(&s, &got.dictionary_ids, &got.n_dictionary_ids);
      assert_int_equal(got.n_dictionary_ids, 4);
      assert_int_equal(got.dictionary_ids[1], got.dictionary_ids[0]);
      assert_int_equal(got.dictionary_ids[3], got.dictionary_ids[0]);
      if (qv_json_compare(&want, &got, NULL, &e)) fail_msg("sliced %d, %s: %s", sliced,
                                                            k ? "file" : "stream", e.message);
      for (int i = 0; i < 2; i++) got_b[i].release(&got_b[i]);
      schema.release(&schema);
      s.release(&s);
      qv_free(bytes);
    }
  }
  slice.release(&slice);
  qv_json_file_free(f);
}

/* Fields given one id must hold one dictionary in a batch. */
static void test_writer_different_dictionaries(void **state) {
  (void)state;
  /* s.b gets its own dictionary (id 7: p, q) */
  char *text = doc(k_xy, 2, 5);
  char *p = strstr(text, "\"bitWidth\":16");
  assert_non_null(p);
  char *id = strstr(p - 120, "\"id\":0");
  assert_non_null(id);
  id[5] = '7';
  const char *extra = ",{\"id\":7,\"data\":{\"count\":2,\"columns\":[{\"name\":\"D7\",\"count\":2,"
                      "\"VALIDITY\":[1,1],\"OFFSET\":[0,1,2],\"DATA\":[\"p\",\"q\"]}]}}],\"batches\"";
  char *b = strstr(text, "],\"batches\"");
  assert_non_null(b);
  size_t cap = strlen(text) + strlen(extra) + 1;
  char *t2 = malloc(cap);
  assert_non_null(t2);
  snprintf(t2, cap, "%.*s%s%s", (int)(b - text), text, extra, b + strlen("],\"batches\""));
  QvJsonFile *docs[1] = {read_json(t2)};
  QvJsonData d;
  qv_json_file_data(docs[0], &d);
  assert_int_equal(d.dictionary_ids[1], 7);
  uint8_t *bytes;
  size_t size;
  QvError e;
  /* written as the JSON says: fine */
  assert_int_equal(write_docs(docs, 1, QV_IPC_FORMAT_STREAM, NULL, 0, &bytes, &size, &e), QV_OK);
  check_read(bytes, size, QV_IPC_FORMAT_STREAM, docs, 1);
  qv_free(bytes);
  /* one id for a, s.b and l.item: their dictionaries differ */
  int64_t ids[4] = {0, 0, 0, 5};
  assert_int_equal(write_docs(docs, 1, QV_IPC_FORMAT_STREAM, ids, 4, &bytes, &size, &e), QV_EINVAL);
  assert_non_null(strstr(e.message, "share dictionary id 0"));
  /* c's values are int32: it cannot share a's utf8 dictionary */
  int64_t clash[4] = {0, 7, 0, 0};
  assert_int_equal(write_docs(docs, 1, QV_IPC_FORMAT_STREAM, clash, 4, &bytes, &size, &e),
                   QV_EINVAL);
  assert_non_null(strstr(e.message, "'a' and 'c'"));
  /* nested fields are named by their paths */
  int64_t nested[4] = {0, 7, 1, 7};
  assert_int_equal(write_docs(docs, 1, QV_IPC_FORMAT_STREAM, nested, 4, &bytes, &size, &e),
                   QV_EINVAL);
  assert_non_null(strstr(e.message, "'s.b' and 'c'"));
  int64_t in_list[4] = {0, 1, 7, 7};
  assert_int_equal(write_docs(docs, 1, QV_IPC_FORMAT_STREAM, in_list, 4, &bytes, &size, &e),
                   QV_EINVAL);
  assert_non_null(strstr(e.message, "'l.item' and 'c'"));
  /* the number of ids must match the dictionary-encoded fields */
  assert_int_equal(write_docs(docs, 1, QV_IPC_FORMAT_STREAM, ids, 3, &bytes, &size, &e), QV_EARG);
  free_docs(docs, 1);
  free(t2);
  free(text);
}

/* A schema in which two fields share an id with different value types (no
 * writer of quiver's makes one: the ids are patched afterwards) is refused
 * by the reader with both fields named. */
static void test_reader_value_type_clash(void **state) {
  (void)state;
  char *text = doc(k_xy, 2, 0x1234567);
  QvJsonFile *docs[1] = {read_json(text)};
  QvJsonData d;
  qv_json_file_data(docs[0], &d);
  QvRbWriteOptions o;
  memset(&o, 0, sizeof o);
  o.dictionary_ids = d.dictionary_ids;
  o.n_dictionary_ids = d.n_dictionary_ids;
  QvSink *sink;
  QvRbWriter *w;
  QvError e;
  assert_int_equal(qv_sink_new_memory(&sink, &e), QV_OK);
  assert_int_equal(qv_rb_writer_new(&w, d.schema, sink, &o, &e), QV_OK);
  assert_int_equal(qv_rb_writer_finish(w, &e), QV_OK); /* the schema only */
  qv_rb_writer_free(w);
  uint8_t *bytes;
  size_t size;
  assert_int_equal(qv_sink_memory_take(sink, &bytes, &size, &e), QV_OK);
  qv_sink_free(sink);
  const uint8_t want[8] = {0x67, 0x45, 0x23, 0x01, 0, 0, 0, 0};
  int found = 0;
  for (size_t i = 0; i + 8 <= size; i++)
    if (memcmp(bytes + i, want, 8) == 0) {
      memset(bytes + i, 0, 4);
      found++;
    }
  assert_int_equal(found, 1);
  QvSource *src;
  assert_int_equal(qv_source_new_memory(&src, bytes, size, NULL, &e), QV_OK);
  struct ArrowArrayStream s;
  assert_int_equal(qv_rb_stream_reader_new(&s, src, NULL, &e), QV_EINVAL);
  assert_non_null(strstr(e.message, "fields 'a' and 'c' share dictionary id 0"));
  qv_source_free(src);
  qv_free(bytes);
  free_docs(docs, 1);
  free(text);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_stream_delta_and_replacement),
      cmocka_unit_test(test_file_delta),
      cmocka_unit_test(test_all_types),
      cmocka_unit_test(test_writer_different_dictionaries),
      cmocka_unit_test(test_reader_value_type_clash),
  };
  return qv_test_run(tests, NULL, NULL);
}
