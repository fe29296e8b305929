/* Round trips of every type through the stream and file formats: nulls,
 * slices (batch offsets and column offsets), empty batches, compression,
 * 64-byte alignment; values compared cell by cell. */
#include "test_rb_helpers.h"
#include "test_util.h"

static const char *const kSpecs[] = {
    "n", "b", "c", "C", "s", "S", "i", "I", "l", "L", "e", "f", "g",
    "d:9,2,32", "d:18,3,64", "d:38,10", "d:76,-2,256",
    "tdD", "tdm", "tts", "ttm", "ttu", "ttn", "tss:", "tsm:UTC", "tsu:Europe/Paris", "tsn:",
    "tiM", "tiD", "tin", "tDs", "tDm", "tDu", "tDn",
    "z", "u", "Z", "U", "w:5", "w:0", "vz", "vu",
    "+l(i)", "+L(u)", "+vl(l)", "+vL(u)", "+w:3(s)", "+w:0(i)",
    "+s(i;u;+l(g))", "+s()", "+m(+s(u;i))", "+m(+s(i;+l(u)))",
    "+us:0,1,2(i;u;n)", "+ud:0,1,2(i;u;b)", "+us:5,1(+l(i);g)", "+ud:3,7(+s(i;u);vu)",
    "+r(i;u)", "+r(s;l)", "+r(l;+l(i))",
    "i{u}", "c{l}", "C{vu}", "l{+s(i;u)}", "L{g}", "s{+l(u)}",
    "+l(i{u})", "+s(i{u};u)", "i{+s(c{u};i)}", "+m(+s(u;S{u}))", "+r(i;i{u})",
    "+l(+l(+s(+l(u);b)))",
};
#define N_SPECS ((int)(sizeof kSpecs / sizeof kSpecs[0]))

/* Writes `batch` with `opt`, reads it back as a stream and (file format) as
 * a file, and compares every cell with `want`. */
static void roundtrip(const struct ArrowSchema *schema, struct ArrowArray *batch,
                      const QvRbWriteOptions *opt, const char *what) {
  RbtCells want = rbt_cells(batch, schema);
  uint8_t *data;
  size_t size;
  rbt_write(schema, &batch, 1, opt, &data, &size);
  rbt_assert_reads_back(data, size, opt->format == QV_IPC_FORMAT_FILE, &want, 1, what);
  if (opt->alignment == 64) {
    /* every buffer of every record batch starts on a 64-byte boundary */
    QvIpcReader *r;
    QvError e;
    rbt_check(qv_test_reader_memory(&r, data, size, &e), &e, "ipc open");
    QvIpcMessage m;
    while (qv_ipc_reader_next(r, &m, &e) == QV_OK) {
      assert_int_equal(m.body_offset % 64, 0);
      if (m.message.header_type == QV_HEADER_RECORD_BATCH)
        for (int64_t b = 0; b < m.message.header.record_batch.n_buffers; b++)
          assert_int_equal(m.message.header.record_batch.buffers[b].offset % 64, 0);
      qv_ipc_message_reset(&m);
    }
    qv_ipc_reader_free(r);
  }
  free(data);
  rbt_cells_free(&want);
}

static void test_every_type_every_option(void **state) {
  (void)state;
  for (int i = 0; i < N_SPECS; i++) {
    const char *spec = kSpecs[i];
    struct ArrowSchema schema;
    struct ArrowArray batch;
    rbt_spec_batch(spec, 41, 0, &schema, &batch);
    for (int fmt = 0; fmt < 2; fmt++)
      for (int comp = 0; comp < 3; comp++)
        for (int al = 0; al < 2; al++) {
          QvRbWriteOptions o;
          memset(&o, 0, sizeof o);
          o.format = fmt ? QV_IPC_FORMAT_FILE : QV_IPC_FORMAT_STREAM;
          o.compression = (QvCompression)comp;
          o.alignment = al ? 64 : 8;
          o.validate = QV_VALIDATE_FULL;
          char what[160];
          snprintf(what, sizeof what, "%s fmt=%d comp=%d align=%d", spec, fmt, comp, o.alignment);
          roundtrip(&schema, &batch, &o, what);
        }
    batch.release(&batch);
    schema.release(&schema);
  }
}

static void test_all_types_in_one_batch(void **state) {
  (void)state;
  struct ArrowSchema schema;
  rbt_batch_schema(&schema, kSpecs, N_SPECS);
  struct ArrowArray batch;
  rbt_build(&batch, &schema, 100, 3);
  QvRbWriteOptions o;
  memset(&o, 0, sizeof o);
  o.format = QV_IPC_FORMAT_FILE;
  roundtrip(&schema, &batch, &o, "all columns");
  o.compression = QV_COMPRESSION_ZSTD;
  roundtrip(&schema, &batch, &o, "all columns zstd");
  batch.release(&batch);
  schema.release(&schema);
}

/* A batch whose struct offset selects rows [off, off + len). */
static void test_batch_slices(void **state) {
  (void)state;
  const int64_t offs[] = {0, 1, 5, 8, 13, 40};
  const int64_t lens[] = {0, 1, 7, 20};
  for (int i = 0; i < N_SPECS; i++) {
    const char *spec = kSpecs[i];
    struct ArrowSchema schema;
    struct ArrowArray batch;
    rbt_spec_batch(spec, 61, 0, &schema, &batch);
    for (size_t a = 0; a < sizeof offs / sizeof offs[0]; a++)
      for (size_t b = 0; b < sizeof lens / sizeof lens[0]; b++) {
        struct ArrowArray slice;
        QvError e;
        rbt_check(qv_array_share(&batch, &slice, &e), &e, "share");
        slice.offset = offs[a];
        slice.length = lens[b];
        QvRbWriteOptions o;
        memset(&o, 0, sizeof o);
        o.validate = QV_VALIDATE_FULL;
        o.compression = (QvCompression)((a + b) % 3);
        char what[160];
        snprintf(what, sizeof what, "%s slice %lld+%lld", spec, (long long)offs[a], (long long)lens[b]);
        roundtrip(&schema, &slice, &o, what);
        slice.release(&slice);
      }
    batch.release(&batch);
    schema.release(&schema);
  }
}

/* Column arrays with their own non-zero offsets (at two levels). */
static void test_column_offsets(void **state) {
  (void)state;
  for (int i = 0; i < N_SPECS; i++) {
    const char *spec = kSpecs[i];
    struct ArrowSchema schema;
    struct ArrowArray batch;
    rbt_spec_batch(spec, 50, 0, &schema, &batch);
    for (int64_t shift = 1; shift <= 11; shift += 5) {
      struct ArrowArray slice;
      QvError e;
      rbt_check(qv_array_share(&batch, &slice, &e), &e, "share");
      struct ArrowArray *col = slice.children[0];
      col->offset += shift;
      col->length -= shift;
      col->null_count = -1;
      /* nested children of structs get shifted too */
      if (strcmp(schema.children[0]->format, "+s") == 0) {
        for (int64_t k = 0; k < col->n_children; k++) {
          col->children[k]->offset += 1;
          col->children[k]->length -= 1;
          col->children[k]->null_count = -1;
        }
        col->length -= 1;
      }
      slice.length = col->length - 3;
      slice.offset = 2;
      QvRbWriteOptions o;
      memset(&o, 0, sizeof o);
      o.validate = QV_VALIDATE_FULL;
      o.format = QV_IPC_FORMAT_FILE;
      char what[160];
      snprintf(what, sizeof what, "%s column offset %lld", spec, (long long)shift);
      roundtrip(&schema, &slice, &o, what);
      slice.release(&slice);
    }
    batch.release(&batch);
    schema.release(&schema);
  }
}

static void test_empty_batches_and_streams(void **state) {
  (void)state;
  struct ArrowSchema schema;
  rbt_batch_schema(&schema, kSpecs, N_SPECS);
  struct ArrowArray empty;
  rbt_build(&empty, &schema, 0, 0);
  assert_int_equal(empty.length, 0);
  for (int fmt = 0; fmt < 2; fmt++) {
    QvRbWriteOptions o;
    memset(&o, 0, sizeof o);
    o.format = (QvIpcFormat)fmt;
    o.compression = QV_COMPRESSION_LZ4_FRAME;
    roundtrip(&schema, &empty, &o, "empty batch");
    /* a stream without batches still carries the schema */
    uint8_t *data;
    size_t size;
    rbt_write(&schema, NULL, 0, &o, &data, &size);
    struct ArrowSchema got;
    struct ArrowArray none[1];
    assert_int_equal(rbt_read_stream(data, size, &got, none, 1), 0);
    assert_int_equal(got.n_children, N_SPECS);
    for (int i = 0; i < N_SPECS; i++)
      assert_string_equal(got.children[i]->format, schema.children[i]->format);
    got.release(&got);
    free(data);
  }
  empty.release(&empty);
  schema.release(&schema);
}

static void test_many_batches_file_random_access(void **state) {
  (void)state;
  const char *specs[] = {"i", "u", "+l(i{u})"};
  struct ArrowSchema schema;
  rbt_batch_schema(&schema, specs, 3);
  struct ArrowArray batches[6];
  struct ArrowArray *ptrs[6];
  for (int i = 0; i < 6; i++) {
    rbt_build(&batches[i], &schema, 10 + i, i * 100);
    ptrs[i] = &batches[i];
  }
  QvRbWriteOptions o;
  memset(&o, 0, sizeof o);
  o.format = QV_IPC_FORMAT_FILE;
  uint8_t *data;
  size_t size;
  /* the generator builds the same dictionary for every batch: one dictionary block */
  rbt_write(&schema, ptrs, 6, &o, &data, &size);
  QvRbFileReader *f;
  QvError e;
  rbt_check(rbt_file_open(&f, data, size, NULL, &e), &e, "open");
  assert_int_equal(qv_rb_file_n_batches(f), 6);
  assert_int_equal(qv_rb_file_n_dictionaries(f), 1);
  struct ArrowSchema fs;
  rbt_check(qv_rb_file_get_schema(f, &fs, &e), &e, "schema");
  for (int k = 5; k >= 0; k--) {
    struct ArrowArray a;
    rbt_check(qv_rb_file_read_batch(f, k, &a, &e), &e, "read");
    RbtCells want = rbt_cells(&batches[k], &schema), got = rbt_cells(&a, &fs);
    rbt_assert_same_cells(&want, &got, "random access");
    rbt_cells_free(&want);
    rbt_cells_free(&got);
    a.release(&a);
  }
  struct ArrowArray a;
  assert_int_equal(qv_rb_file_read_batch(f, 6, &a, &e), QV_EARG);
  fs.release(&fs);
  qv_rb_file_reader_free(f);
  free(data);
  for (int i = 0; i < 6; i++) batches[i].release(&batches[i]);
  schema.release(&schema);
}

/* Arrays outlive their reader and the input they came from (owner refs). */
static void test_arrays_outlive_reader(void **state) {
  (void)state;
  const char *specs[] = {"u", "+l(vu)"};
  struct ArrowSchema schema;
  rbt_batch_schema(&schema, specs, 2);
  struct ArrowArray batch;
  rbt_build(&batch, &schema, 30, 0);
  RbtCells want = rbt_cells(&batch, &schema);
  QvRbWriteOptions o;
  memset(&o, 0, sizeof o);
  o.format = QV_IPC_FORMAT_FILE;
  uint8_t *data;
  size_t size;
  struct ArrowArray *p = &batch;
  rbt_write(&schema, &p, 1, &o, &data, &size);
  char path[] = "/tmp/qv_rb_outlive" "XX" "XX" "XX"; /* mkstemp template */
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  assert_int_equal(write(fd, data, size), (ssize_t)size);
  close(fd);
  QvRbFileReader *f;
  QvError e;
  rbt_check(rbt_file_open_path(&f, path, NULL, &e), &e, "open path");
  struct ArrowSchema fs;
  rbt_check(qv_rb_file_get_schema(f, &fs, &e), &e, "schema");
  struct ArrowArray a;
  rbt_check(qv_rb_file_read_batch(f, 0, &a, &e), &e, "read");
  qv_rb_file_reader_free(f);
  unlink(path);
  RbtCells got = rbt_cells(&a, &fs);
  rbt_assert_same_cells(&want, &got, "after close");
  /* move a child out, as consumers may, then release the parent first */
  struct ArrowArray moved = *a.children[1];
  a.children[1]->release = NULL;
  a.release(&a);
  QvArrayView v;
  rbt_check(qv_array_view_init(&v, fs.children[1], &e), &e, "view");
  rbt_check(qv_array_view_set_array(&v, &moved, QV_VALIDATE_FULL, &e), &e, "moved child");
  for (int64_t r = 0; r < v.length; r++) {
    char *cell;
    rbt_check(qv_array_view_format_value(&v, r, 0, &cell, &e), &e, "format");
    assert_string_equal(cell, want.cells[r * 2 + 1]);
    free(cell);
  }
  qv_array_view_reset(&v);
  moved.release(&moved);
  rbt_cells_free(&got);
  rbt_cells_free(&want);
  fs.release(&fs);
  free(data);
  batch.release(&batch);
  schema.release(&schema);
}

/* Schema and field custom metadata, extension types, flags. */
static void test_schema_metadata_and_extensions(void **state) {
  (void)state;
  const char *specs[] = {"w:16", "+m(+s(u;i))", "i{u}"};
  struct ArrowSchema schema;
  rbt_batch_schema(&schema, specs, 3);
  QvError e;
  rbt_check(qv_arrow_schema_add_metadata(&schema, "origin", 6, "test", 4, &e), &e, "meta");
  rbt_check(qv_arrow_schema_add_metadata(schema.children[0], "ARROW:extension:name", 20, "arrow.uuid", 10, &e), &e, "ext");
  rbt_check(qv_arrow_schema_add_metadata(schema.children[0], "ARROW:extension:metadata", 24, "", 0, &e), &e, "ext");
  schema.children[1]->flags |= ARROW_FLAG_MAP_KEYS_SORTED;
  schema.children[2]->flags |= ARROW_FLAG_DICTIONARY_ORDERED;
  struct ArrowArray batch;
  rbt_build(&batch, &schema, 5, 0);
  uint8_t *data;
  size_t size;
  struct ArrowArray *p = &batch;
  QvRbWriteOptions o;
  memset(&o, 0, sizeof o);
  rbt_write(&schema, &p, 1, &o, &data, &size);
  struct ArrowSchema got;
  struct ArrowArray arrays[1];
  assert_int_equal(rbt_read_stream(data, size, &got, arrays, 1), 1);
  const char *v;
  int32_t vl;
  assert_true(qv_arrow_metadata_get(got.metadata, "origin", &v, &vl));
  assert_int_equal(vl, 4);
  assert_memory_equal(v, "test", 4);
  QvArrowSchemaView sv;
  rbt_check(qv_arrow_schema_view_init(&sv, got.children[0], &e), &e, "view");
  assert_non_null(sv.extension_name);
  assert_int_equal(sv.extension_name_len, 10);
  assert_memory_equal(sv.extension_name, "arrow.uuid", 10);
  assert_non_null(sv.extension_metadata);
  assert_int_equal(sv.extension_metadata_len, 0);
  assert_true(got.children[1]->flags & ARROW_FLAG_MAP_KEYS_SORTED);
  assert_true(got.children[2]->flags & ARROW_FLAG_DICTIONARY_ORDERED);
  assert_true(got.children[2]->flags & ARROW_FLAG_NULLABLE);
  assert_false(got.children[1]->children[0]->children[0]->flags & ARROW_FLAG_NULLABLE);
  assert_string_equal(got.children[1]->children[0]->children[0]->name, "key");
  assert_string_equal(got.children[2]->dictionary->format, "u");
  arrays[0].release(&arrays[0]);
  got.release(&got);
  free(data);
  batch.release(&batch);
  schema.release(&schema);
}

/* Writing to a descriptor and reading back from one. */
static void test_fd_sink_and_fd_reader(void **state) {
  (void)state;
  const char *specs[] = {"U", "+w:2(d:12,3)"};
  struct ArrowSchema schema;
  rbt_batch_schema(&schema, specs, 2);
  struct ArrowArray batch;
  rbt_build(&batch, &schema, 25, 0);
  int fds[2];
  assert_int_equal(pipe(fds), 0);
  QvSink *sink;
  QvRbWriter *w;
  QvError e;
  rbt_check(qv_sink_new_fd(&sink, fds[1], &e), &e, "fd sink");
  rbt_check(qv_rb_writer_new(&w, &schema, sink, NULL, &e), &e, "open");
  rbt_check(qv_rb_writer_write(w, &batch, &e), &e, "write");
  rbt_check(qv_rb_writer_write(w, &batch, &e), &e, "write");
  rbt_check(qv_rb_writer_finish(w, &e), &e, "finish");
  assert_true(qv_rb_writer_bytes_written(w) > 0);
  qv_rb_writer_free(w);
  rbt_check(qv_sink_finish(sink, &e), &e, "sink finish");
  qv_sink_free(sink);
  close(fds[1]);
  struct ArrowArrayStream s;
  QvSource *src;
  rbt_check(qv_source_new_fd(&src, fds[0], &e), &e, "fd source");
  rbt_check(qv_rb_stream_reader_new(&s, src, NULL, &e), &e, "open fd");
  qv_source_free(src);
  struct ArrowSchema got;
  rbt_check(qv_rb_stream_get_schema(&s, &got, &e), &e, "schema");
  RbtCells want = rbt_cells(&batch, &schema);
  int n = 0;
  for (;;) {
    struct ArrowArray a;
    if (rbt_next(&s, &a)) break;
    RbtCells c = rbt_cells(&a, &got);
    rbt_assert_same_cells(&want, &c, "fd");
    rbt_cells_free(&c);
    a.release(&a);
    n++;
  }
  assert_int_equal(n, 2);
  /* through the generic C stream callbacks too */
  struct ArrowArray a;
  assert_int_equal(s.get_next(&s, &a), 0);
  assert_null(a.release);
  assert_null(s.get_last_error(&s));
  s.release(&s);
  close(fds[0]);
  rbt_cells_free(&want);
  got.release(&got);
  batch.release(&batch);
  schema.release(&schema);
}

/* Buffers of several MB (the memory sink streams them past the cache), a
 * caller-provided output buffer, and one that is too small. */
static void test_large_buffers_fixed_sink(void **state) {
  (void)state;
  const char *specs[] = {"l", "u"};
  struct ArrowSchema schema;
  rbt_batch_schema(&schema, specs, 2);
  struct ArrowArray batch;
  rbt_build(&batch, &schema, 300000, 0);
  RbtCells want = rbt_cells(&batch, &schema);
  QvRbWriteOptions o;
  memset(&o, 0, sizeof o);
  uint8_t *data;
  size_t size;
  struct ArrowArray *p = &batch;
  rbt_write(&schema, &p, 1, &o, &data, &size);
  assert_true(size > 2 * 1024 * 1024);
  /* the same bytes into a fixed buffer of exactly that size */
  uint8_t *fixed = malloc(size + 3); /* +3: an unaligned destination */
  QvSink *sink;
  QvRbWriter *w;
  QvError e;
  rbt_check(qv_sink_new_buffer(&sink, fixed + 3, size, &e), &e, "buffer sink");
  rbt_check(qv_rb_writer_new(&w, &schema, sink, &o, &e), &e, "open");
  rbt_check(qv_rb_writer_write(w, &batch, &e), &e, "write");
  rbt_check(qv_rb_writer_finish(w, &e), &e, "finish");
  qv_rb_writer_free(w);
  assert_int_equal(qv_sink_bytes_written(sink), size);
  qv_sink_free(sink);
  assert_memory_equal(fixed + 3, data, size);
  struct ArrowSchema got_schema;
  struct ArrowArray got[1];
  assert_int_equal(rbt_read_stream(fixed + 3, size, &got_schema, got, 1), 1);
  RbtCells cells = rbt_cells(&got[0], &got_schema);
  rbt_assert_same_cells(&want, &cells, "large");
  rbt_cells_free(&cells);
  got[0].release(&got[0]);
  got_schema.release(&got_schema);
  /* one byte short: the writer fails with the sink's error */
  rbt_check(qv_sink_new_buffer(&sink, fixed, size - 1, &e), &e, "buffer sink");
  rbt_check(qv_rb_writer_new(&w, &schema, sink, &o, &e), &e, "open");
  QvStatus st = qv_rb_writer_write(w, &batch, &e);
  if (st == QV_OK) st = qv_rb_writer_finish(w, &e);
  assert_int_equal(st, QV_ELIMIT);
  assert_non_null(strstr(e.message, "exceed the capacity"));
  qv_rb_writer_free(w);
  qv_sink_free(sink);
  free(fixed);
  free(data);
  rbt_cells_free(&want);
  batch.release(&batch);
  schema.release(&schema);
}

/* A file needs reading at offsets (its footer): over a pipe both the file
 * reader and the stream reader take the bytes whole first, and read the
 * same batch. */
static void test_file_reader_needs_offsets(void **state) {
  (void)state;
  const char *specs[] = {"i", "u"};
  struct ArrowSchema schema;
  rbt_batch_schema(&schema, specs, 2);
  struct ArrowArray batch;
  rbt_build(&batch, &schema, 10, 0);
  struct ArrowArray *p = &batch;
  QvRbWriteOptions o = {.format = QV_IPC_FORMAT_FILE};
  uint8_t *data;
  size_t size;
  rbt_write(&schema, &p, 1, &o, &data, &size);
  assert_true(size < 65536); /* fits the pipe's buffer */
  QvError e;
  for (int stream = 0; stream < 2; stream++) {
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    assert_int_equal(write(fds[1], data, size), (ssize_t)size);
    close(fds[1]);
    QvSource *src;
    rbt_check(qv_source_new_fd(&src, fds[0], &e), &e, "fd source");
    if (stream) {
      struct ArrowArrayStream s;
      rbt_check(qv_rb_stream_reader_new(&s, src, NULL, &e), &e, "stream over a pipe");
      struct ArrowArray a;
      assert_false(rbt_next(&s, &a));
      assert_int_equal(a.length, 10);
      a.release(&a);
      assert_true(rbt_next(&s, &a));
      s.release(&s);
    } else {
      QvRbFileReader *f = NULL;
      rbt_check(qv_rb_file_reader_new(&f, src, NULL, &e), &e, "file reader over a pipe");
      assert_int_equal(qv_rb_file_n_batches(f), 1);
      struct ArrowArray a;
      rbt_check(qv_rb_file_read_batch(f, 0, &a, &e), &e, "batch 0 over a pipe");
      assert_int_equal(a.length, 10);
      a.release(&a);
      qv_rb_file_reader_free(f);
    }
    qv_source_free(src);
    close(fds[0]);
  }
  free(data);
  batch.release(&batch);
  schema.release(&schema);
}

/* Options structs: 0 or the size the caller knows; a smaller size is the
 * caller's error, a larger one with unknown non-zero fields unsupported. */
static void test_options_struct_size(void **state) {
  (void)state;
  struct ArrowSchema schema;
  const char *spec = "i";
  rbt_batch_schema(&schema, &spec, 1);
  uint8_t *data;
  size_t size;
  rbt_write(&schema, NULL, 0, NULL, &data, &size);
  QvError e;
  struct ArrowArrayStream s;
  QvRbReadOptions ro = {.struct_size = 3};
  assert_int_equal(rbt_stream_open(&s, data, size, &ro, &e), QV_EARG);
  assert_non_null(strstr(e.message, "QvRbReadOptions"));
  struct {
    QvRbReadOptions known;
    uint64_t newer;
  } big = {{.struct_size = sizeof big}, 1};
  assert_int_equal(rbt_stream_open(&s, data, size, &big.known, &e), QV_ENOTSUP);
  big.newer = 0; /* a newer caller that leaves the new field at its default */
  rbt_check(rbt_stream_open(&s, data, size, &big.known, &e), &e, "larger struct");
  s.release(&s);
  QvSink *sink;
  rbt_check(qv_sink_new_memory(&sink, &e), &e, "sink");
  QvRbWriter *w = NULL;
  QvRbWriteOptions wo = {.struct_size = 1};
  assert_int_equal(qv_rb_writer_new(&w, &schema, sink, &wo, &e), QV_EARG);
  assert_non_null(strstr(e.message, "QvRbWriteOptions"));
  assert_null(w);
  qv_sink_free(sink);
  free(data);
  schema.release(&schema);
}

/* qv_rb_stream_reader_from_messages, fed by a message reader through a
 * callback of the test's: the same cells as the source-based reader; a
 * callback failing after the first batch (dictionaries may come before it)
 * fails the second batch with its message; release is called once, on the stream's release, or at once
 * when creation fails (NULL next). */
typedef struct Feed {
  QvIpcReader *ipc;
  int batches, fail_after, released; /* fail_after: fail once that many batches went out */
} Feed;

static QvStatus feed_next(void *ctx, QvIpcMessage *out, QvError *error) {
  Feed *f = ctx;
  if (f->fail_after > 0 && f->batches == f->fail_after)
    return qv_error_set(error, QV_EIO, "the transport dropped");
  QvStatus st = qv_ipc_reader_next(f->ipc, out, error);
  if (st == QV_OK && out->message.header_type == QV_HEADER_RECORD_BATCH) f->batches++;
  return st;
}

static void feed_release(void *ctx) { ((Feed *)ctx)->released++; }

static void test_reader_from_messages(void **state) {
  (void)state;
  struct ArrowSchema schema;
  rbt_batch_schema(&schema, kSpecs, N_SPECS);
  struct ArrowArray batches[3];
  struct ArrowArray *ptrs[3];
  RbtCells want[3];
  for (int i = 0; i < 3; i++) {
    rbt_build(&batches[i], &schema, 40 + i, i);
    ptrs[i] = &batches[i];
    want[i] = rbt_cells(&batches[i], &schema);
  }
  uint8_t *data;
  size_t size;
  QvRbWriteOptions wo = rbt_write_options(QV_IPC_FORMAT_STREAM, QV_COMPRESSION_NONE, 0, 1);
  rbt_write(&schema, ptrs, 3, &wo, &data, &size);
  for (int fail_after = 0; fail_after <= 1; fail_after++) {
    QvError e = {0};
    QvSource *src;
    rbt_check(qv_source_new_memory(&src, data, size, NULL, &e), &e, "source");
    Feed f = {.fail_after = fail_after};
    rbt_check(qv_ipc_reader_new(&f.ipc, src, NULL, &e), &e, "ipc reader");
    qv_source_free(src);
    struct ArrowArrayStream s;
    const QvRbReadOptions full = {.struct_size = sizeof full, .validate = QV_VALIDATE_FULL};
    rbt_check(qv_rb_stream_reader_from_messages(&s, feed_next, &f, feed_release, &full, &e), &e,
              "from messages");
    struct ArrowSchema got_schema;
    assert_int_equal(s.get_schema(&s, &got_schema), 0);
    assert_int_equal(got_schema.n_children, schema.n_children);
    int n = 0;
    for (;;) {
      struct ArrowArray a;
      int rc = s.get_next(&s, &a);
      if (fail_after == 1 && n == 1) {
        assert_int_not_equal(rc, 0);
        assert_non_null(strstr(s.get_last_error(&s), "the transport dropped"));
        break;
      }
      assert_int_equal(rc, 0);
      if (a.release == NULL) break;
      RbtCells got = rbt_cells(&a, &got_schema);
      rbt_assert_same_cells(&want[n], &got, "from messages");
      rbt_cells_free(&got);
      a.release(&a);
      n++;
    }
    assert_int_equal(n, fail_after == 1 ? 1 : 3);
    got_schema.release(&got_schema);
    assert_int_equal(f.released, 0);
    s.release(&s);
    assert_int_equal(f.released, 1);
    qv_ipc_reader_free(f.ipc);
  }
  Feed f = {0};
  struct ArrowArrayStream s;
  QvError e = {0};
  assert_int_equal(qv_rb_stream_reader_from_messages(&s, NULL, &f, feed_release, NULL, &e), QV_EARG);
  assert_int_equal(f.released, 1);
  for (int i = 0; i < 3; i++) {
    rbt_cells_free(&want[i]);
    batches[i].release(&batches[i]);
  }
  free(data);
  schema.release(&schema);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_every_type_every_option),
      cmocka_unit_test(test_all_types_in_one_batch),
      cmocka_unit_test(test_batch_slices),
      cmocka_unit_test(test_column_offsets),
      cmocka_unit_test(test_empty_batches_and_streams),
      cmocka_unit_test(test_reader_from_messages),
      cmocka_unit_test(test_many_batches_file_random_access),
      cmocka_unit_test(test_arrays_outlive_reader),
      cmocka_unit_test(test_schema_metadata_and_extensions),
      cmocka_unit_test(test_fd_sink_and_fd_reader),
      cmocka_unit_test(test_large_buffers_fixed_sink),
      cmocka_unit_test(test_file_reader_needs_offsets),
      cmocka_unit_test(test_options_struct_size),
  };
  return qv_test_run(tests, NULL, NULL);
}
