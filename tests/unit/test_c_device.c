/* The Arrow C Device Data Interface (quiver/c_device.h): CPU device arrays
 * and streams out of the record batch readers and tensor columns, device
 * structs into the writers (CPU accepted, any other device refused with
 * QV_ENOTSUP, also in the middle of a stream), lifetimes (every release
 * callback runs once, moved structs are marked released) and hostile
 * structs (released, wrong device, sync events, n_children lies). */
#include "quiver/c_data.h"

/* Another project's copy of the specification's definitions, included
 * first: quiver's header must keep to the same guard and add nothing. */
#ifndef ARROW_C_DEVICE_DATA_INTERFACE
#define ARROW_C_DEVICE_DATA_INTERFACE
typedef int32_t ArrowDeviceType;
#define ARROW_DEVICE_CPU 1
#define ARROW_DEVICE_CUDA 2
#define ARROW_DEVICE_CUDA_HOST 3
#define ARROW_DEVICE_OPENCL 4
#define ARROW_DEVICE_VULKAN 7
#define ARROW_DEVICE_METAL 8
#define ARROW_DEVICE_VPI 9
#define ARROW_DEVICE_ROCM 10
#define ARROW_DEVICE_ROCM_HOST 11
#define ARROW_DEVICE_EXT_DEV 12
#define ARROW_DEVICE_CUDA_MANAGED 13
#define ARROW_DEVICE_ONEAPI 14
#define ARROW_DEVICE_WEBGPU 15
#define ARROW_DEVICE_HEXAGON 16
struct ArrowDeviceArray {
  struct ArrowArray array;
  int64_t device_id;
  ArrowDeviceType device_type;
  void *sync_event;
  int64_t reserved[3];
};
#endif

#include "quiver/c_device.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "test_rb_helpers.h"
#include "test_util.h"

static void assert_cpu_device(const struct ArrowDeviceArray *a) {
  assert_non_null(a->array.release);
  assert_int_equal(a->device_type, ARROW_DEVICE_CPU);
  assert_int_equal(a->device_id, -1);
  assert_null(a->sync_event);
  for (int i = 0; i < 3; i++) assert_int_equal(a->reserved[i], 0);
}

/* Three batches of two columns (one dictionary-encoded), as a stream. */
static const char *const specs[] = {"l", "i{u}"};

typedef struct Written {
  struct ArrowSchema schema;
  struct ArrowArray batches[3];
  RbtCells cells[3];
  uint8_t *bytes;
  size_t size;
} Written;

static void written_make(Written *w, QvIpcFormat format) {
  memset(w, 0, sizeof *w);
  rbt_batch_schema(&w->schema, specs, 2);
  struct ArrowArray *ptrs[3];
  for (int i = 0; i < 3; i++) {
    rbt_build(&w->batches[i], &w->schema, 5 + i, 10 * i);
    w->cells[i] = rbt_cells(&w->batches[i], &w->schema);
    ptrs[i] = &w->batches[i];
  }
  QvRbWriteOptions o = rbt_write_options(format, QV_COMPRESSION_NONE, 0, 0);
  rbt_write(&w->schema, ptrs, 3, &o, &w->bytes, &w->size);
}

static void written_free(Written *w) {
  for (int i = 0; i < 3; i++) {
    if (w->batches[i].release) w->batches[i].release(&w->batches[i]);
    rbt_cells_free(&w->cells[i]);
  }
  w->schema.release(&w->schema);
  free(w->bytes);
}

static QvSource *memory_source(const Written *w) {
  QvSource *src = NULL;
  QvError e;
  rbt_check(qv_source_new_memory(&src, w->bytes, w->size, NULL, &e), &e, "source");
  return src;
}

static void test_layout(void **state) {
  (void)state;
  /* the specification's layout: 128 bytes on 64-bit hosts */
  assert_int_equal(offsetof(struct ArrowDeviceArray, array), 0);
  assert_int_equal(offsetof(struct ArrowDeviceArray, device_id), sizeof(struct ArrowArray));
  if (sizeof(void *) == 8) assert_int_equal(sizeof(struct ArrowDeviceArray), 128);
  assert_int_equal(offsetof(struct ArrowDeviceArrayStream, device_type), 0);
  /* from_cpu moves: the source is released, the device array carries it */
  Written w;
  written_make(&w, QV_IPC_FORMAT_STREAM);
  struct ArrowDeviceArray d;
  memset(&d, 0x5a, sizeof d);
  qv_device_array_from_cpu(&w.batches[0], &d);
  assert_null(w.batches[0].release);
  assert_cpu_device(&d);
  QvError e;
  assert_int_equal(qv_device_array_check(&d, &e), QV_OK);
  struct ArrowArray back;
  assert_int_equal(qv_device_array_to_cpu(&d, &back, &e), QV_OK);
  assert_null(d.array.release);
  RbtCells c = rbt_cells(&back, &w.schema);
  rbt_assert_same_cells(&w.cells[0], &c, "moved back");
  rbt_cells_free(&c);
  back.release(&back);
  /* a released device array: QV_EARG */
  assert_int_equal(qv_device_array_check(&d, &e), QV_EARG);
  assert_int_equal(qv_device_array_to_cpu(&d, &back, &e), QV_EARG);
  written_free(&w);
}

static void test_stream_reader(void **state) {
  (void)state;
  for (int f = 0; f < 2; f++) {
    Written w;
    written_make(&w, f ? QV_IPC_FORMAT_FILE : QV_IPC_FORMAT_STREAM);
    QvSource *src = memory_source(&w);
    struct ArrowDeviceArrayStream ds;
    QvError e;
    rbt_check(qv_rb_stream_reader_new_device(&ds, src, NULL, &e), &e, "reader");
    qv_source_free(src);
    assert_int_equal(ds.device_type, ARROW_DEVICE_CPU);
    struct ArrowSchema schema;
    assert_int_equal(ds.get_schema(&ds, &schema), 0);
    assert_int_equal(schema.n_children, 2);
    schema.release(&schema);
    for (int i = 0; i < 3; i++) {
      struct ArrowDeviceArray d;
      memset(&d, 0x5a, sizeof d);
      assert_int_equal(ds.get_next(&ds, &d), 0);
      assert_cpu_device(&d);
      RbtCells c = rbt_cells(&d.array, &w.schema);
      rbt_assert_same_cells(&w.cells[i], &c, "device stream batch");
      rbt_cells_free(&c);
      if (i == 1) {
        /* a batch outlives its stream */
        ds.release(&ds);
        assert_null(ds.release);
        c = rbt_cells(&d.array, &w.schema);
        rbt_assert_same_cells(&w.cells[i], &c, "after the stream's release");
        rbt_cells_free(&c);
        d.array.release(&d.array);
        break;
      }
      d.array.release(&d.array);
    }
    if (ds.release) ds.release(&ds);
    /* to the end */
    src = memory_source(&w);
    rbt_check(qv_rb_stream_reader_new_device(&ds, src, NULL, &e), &e, "reader");
    qv_source_free(src);
    int n = 0;
    for (;;) {
      struct ArrowDeviceArray d;
      assert_int_equal(ds.get_next(&ds, &d), 0);
      if (!d.array.release) break;
      assert_cpu_device(&d);
      d.array.release(&d.array);
      n++;
    }
    assert_int_equal(n, 3);
    ds.release(&ds);
    written_free(&w);
  }
}

static void test_file_reader(void **state) {
  (void)state;
  Written w;
  written_make(&w, QV_IPC_FORMAT_FILE);
  QvRbFileReader *f = NULL;
  QvError e;
  rbt_check(rbt_file_open(&f, w.bytes, w.size, NULL, &e), &e, "file");
  for (int i = 2; i >= 0; i--) {
    struct ArrowDeviceArray d;
    rbt_check(qv_rb_file_read_batch_device(f, i, &d, &e), &e, "batch");
    assert_cpu_device(&d);
    RbtCells c = rbt_cells(&d.array, &w.schema);
    rbt_assert_same_cells(&w.cells[i], &c, "file batch");
    rbt_cells_free(&c);
    d.array.release(&d.array);
  }
  struct ArrowDeviceArray d;
  assert_int_not_equal(qv_rb_file_read_batch_device(f, 3, &d, &e), QV_OK);
  assert_null(d.array.release);
  qv_rb_file_reader_free(f);
  written_free(&w);
}

/* ---- a producer of device arrays written here */

static int n_released;

/* Every array handed out by the fake producer counts its release. */
static void counted_release(struct ArrowArray *a) {
  n_released++;
  struct ArrowArray *orig = a->private_data;
  orig->release(orig);
  free(orig);
  a->release = NULL;
}

static void counted(struct ArrowArray *a) {
  struct ArrowArray *orig = malloc(sizeof *orig);
  assert_non_null(orig);
  *orig = *a;
  a->private_data = orig;
  a->release = counted_release;
}

typedef struct Fake {
  Written *w;
  ArrowDeviceType devices[3]; /* of each array */
  void *events[3];
  int next;
  int stream_released;
} Fake;

static int fake_schema(struct ArrowDeviceArrayStream *s, struct ArrowSchema *out) {
  Fake *p = s->private_data;
  QvError e;
  return qv_arrow_schema_copy(&p->w->schema, out, &e) == QV_OK ? 0 : 22;
}

static int fake_next(struct ArrowDeviceArrayStream *s, struct ArrowDeviceArray *out) {
  Fake *p = s->private_data;
  memset(out, 0, sizeof *out);
  if (p->next == 3) return 0;
  QvError e;
  struct ArrowArray *b = &p->w->batches[p->next];
  assert_int_equal(qv_array_share(b, &out->array, &e), QV_OK);
  counted(&out->array);
  out->device_type = p->devices[p->next];
  out->device_id = out->device_type == ARROW_DEVICE_CPU ? -1 : 0;
  out->sync_event = p->events[p->next];
  p->next++;
  return 0;
}

static const char *fake_error(struct ArrowDeviceArrayStream *s) {
  (void)s;
  return NULL;
}

static void fake_release(struct ArrowDeviceArrayStream *s) {
  Fake *p = s->private_data;
  p->stream_released++;
  s->release = NULL;
}

static void fake_stream(struct ArrowDeviceArrayStream *s, Fake *p, ArrowDeviceType type) {
  s->device_type = type;
  s->get_schema = fake_schema;
  s->get_next = fake_next;
  s->get_last_error = fake_error;
  s->release = fake_release;
  s->private_data = p;
}

static uint8_t *write_all_device(struct ArrowDeviceArrayStream *s, QvStatus want, size_t *size,
                                 QvError *e) {
  QvSink *sink = NULL;
  rbt_check(qv_sink_new_memory(&sink, e), e, "sink");
  QvStatus st = qv_rb_write_all_device(s, sink, NULL, e);
  assert_int_equal(st, want);
  uint8_t *out = NULL;
  *size = 0;
  if (st == QV_OK) {
    rbt_take(sink, &out, size);
  }
  qv_sink_free(sink);
  return out;
}

static void test_write_all_device(void **state) {
  (void)state;
  Written w;
  written_make(&w, QV_IPC_FORMAT_STREAM);
  QvError e;
  /* a quiver device stream round trip is byte for byte the plain one */
  QvSource *src = memory_source(&w);
  struct ArrowDeviceArrayStream ds;
  rbt_check(qv_rb_stream_reader_new_device(&ds, src, NULL, &e), &e, "reader");
  qv_source_free(src);
  size_t size;
  uint8_t *out = write_all_device(&ds, QV_OK, &size, &e);
  assert_non_null(ds.release); /* not released by the writer */
  ds.release(&ds);
  assert_int_equal(size, w.size);
  assert_memory_equal(out, w.bytes, size);
  free(out);

  /* a foreign CPU stream: written, every array released once */
  Fake p = {&w, {ARROW_DEVICE_CPU, ARROW_DEVICE_CPU, ARROW_DEVICE_CPU}, {0}, 0, 0};
  fake_stream(&ds, &p, ARROW_DEVICE_CPU);
  n_released = 0;
  out = write_all_device(&ds, QV_OK, &size, &e);
  assert_int_equal(n_released, 3);
  assert_int_equal(p.stream_released, 0);
  RbtCells *want = w.cells;
  rbt_assert_reads_back(out, size, false, want, 3, "foreign CPU device stream");
  free(out);
  ds.release(&ds);
  assert_int_equal(p.stream_released, 1);

  /* a CUDA stream: refused before anything is read */
  Fake q = {&w, {ARROW_DEVICE_CUDA, ARROW_DEVICE_CUDA, ARROW_DEVICE_CUDA}, {0}, 0, 0};
  fake_stream(&ds, &q, ARROW_DEVICE_CUDA);
  out = write_all_device(&ds, QV_ENOTSUP, &size, &e);
  assert_non_null(strstr(e.message, "CUDA"));
  assert_int_equal(q.next, 0);
  ds.release(&ds);

  /* a CPU stream whose second array is on a GPU: refused when it comes,
   * the array released */
  static const ArrowDeviceType mixes[][3] = {
      {ARROW_DEVICE_CPU, ARROW_DEVICE_CUDA, ARROW_DEVICE_CPU},
      {ARROW_DEVICE_CPU, ARROW_DEVICE_ROCM, ARROW_DEVICE_CPU},
      {ARROW_DEVICE_CPU, 99, ARROW_DEVICE_CPU}};
  for (int m = 0; m < 3; m++) {
    Fake r = {&w, {mixes[m][0], mixes[m][1], mixes[m][2]}, {0}, 0, 0};
    fake_stream(&ds, &r, ARROW_DEVICE_CPU);
    n_released = 0;
    out = write_all_device(&ds, QV_ENOTSUP, &size, &e);
    assert_non_null(strstr(e.message, "middle of a stream"));
    assert_int_equal(r.next, 2);
    assert_int_equal(n_released, 2);
    ds.release(&ds);
  }
  /* a CPU array with a sync event: quiver cannot wait on it */
  int event = 0;
  Fake s = {&w, {ARROW_DEVICE_CPU, ARROW_DEVICE_CPU, ARROW_DEVICE_CPU}, {NULL, NULL, &event}, 0,
            0};
  fake_stream(&ds, &s, ARROW_DEVICE_CPU);
  n_released = 0;
  out = write_all_device(&ds, QV_ENOTSUP, &size, &e);
  assert_non_null(strstr(e.message, "sync_event"));
  assert_int_equal(n_released, 3);
  ds.release(&ds);
  /* released, or without callbacks */
  out = write_all_device(&ds, QV_EARG, &size, &e);
  fake_stream(&ds, &s, ARROW_DEVICE_CPU);
  ds.get_next = NULL;
  out = write_all_device(&ds, QV_EARG, &size, &e);
  (void)out;
  written_free(&w);
}

static void test_stream_to_cpu(void **state) {
  (void)state;
  Written w;
  written_make(&w, QV_IPC_FORMAT_STREAM);
  QvError e;
  /* unwrapping quiver's own device stream gives back the reader itself */
  struct ArrowArrayStream plain, back;
  rbt_check(rbt_stream_open(&plain, w.bytes, w.size, NULL, &e), &e, "plain");
  int (*reader_next)(struct ArrowArrayStream *, struct ArrowArray *) = plain.get_next;
  struct ArrowDeviceArrayStream ds;
  rbt_check(qv_device_stream_from_cpu(&plain, &ds, &e), &e, "from_cpu");
  assert_null(plain.release);
  rbt_check(qv_device_stream_to_cpu(&ds, &back, &e), &e, "to_cpu");
  assert_null(ds.release);
  assert_true(back.get_next == reader_next);
  const int64_t *ids;
  int64_t n;
  qv_rb_stream_dictionary_ids(&back, &ids, &n);
  assert_int_equal(n, 1);
  back.release(&back);

  /* a foreign stream: each array checked */
  Fake p = {&w, {ARROW_DEVICE_CPU, ARROW_DEVICE_CUDA_HOST, ARROW_DEVICE_CPU}, {0}, 0, 0};
  fake_stream(&ds, &p, ARROW_DEVICE_CPU);
  n_released = 0;
  rbt_check(qv_device_stream_to_cpu(&ds, &back, &e), &e, "to_cpu");
  assert_null(ds.release);
  struct ArrowSchema schema;
  rbt_check(qv_rb_stream_get_schema(&back, &schema, &e), &e, "schema");
  schema.release(&schema);
  struct ArrowArray a;
  rbt_check(qv_rb_stream_get_next(&back, &a, &e), &e, "first");
  RbtCells c = rbt_cells(&a, &w.schema);
  rbt_assert_same_cells(&w.cells[0], &c, "first through to_cpu");
  rbt_cells_free(&c);
  a.release(&a);
  assert_int_equal(qv_rb_stream_get_next(&back, &a, &e), QV_ENOTSUP);
  assert_non_null(strstr(e.message, "CUDA host"));
  assert_null(a.release);
  assert_int_equal(back.get_next(&back, &a), 0); /* the third still comes */
  a.release(&a);
  assert_int_equal(n_released, 3);
  back.release(&back);
  assert_int_equal(p.stream_released, 1);

  /* a GPU stream: refused, still the caller's */
  Fake q = {&w, {ARROW_DEVICE_CUDA, ARROW_DEVICE_CUDA, ARROW_DEVICE_CUDA}, {0}, 0, 0};
  fake_stream(&ds, &q, ARROW_DEVICE_METAL);
  assert_int_equal(qv_device_stream_to_cpu(&ds, &back, &e), QV_ENOTSUP);
  assert_non_null(strstr(e.message, "Metal"));
  assert_non_null(ds.release);
  assert_null(back.release);
  ds.release(&ds);
  written_free(&w);
}

static void test_writer_device(void **state) {
  (void)state;
  Written w;
  written_make(&w, QV_IPC_FORMAT_STREAM);
  QvError e;
  QvSink *sink = NULL;
  rbt_check(qv_sink_new_memory(&sink, &e), &e, "sink");
  QvRbWriter *wr = NULL;
  rbt_check(qv_rb_writer_new(&wr, &w.schema, sink, NULL, &e), &e, "writer");
  struct ArrowDeviceArray d;
  struct ArrowArray copy;
  /* a GPU array: refused, not released, the writer still usable */
  rbt_check(qv_array_share(&w.batches[0], &copy, &e), &e, "share");
  qv_device_array_from_cpu(&copy, &d);
  d.device_type = ARROW_DEVICE_CUDA;
  d.device_id = 0;
  assert_int_equal(qv_rb_writer_write_device(wr, &d, &e), QV_ENOTSUP);
  assert_non_null(strstr(e.message, "device type 2 (CUDA)"));
  assert_non_null(d.array.release);
  /* the move form releases what it refuses */
  counted(&d.array);
  n_released = 0;
  assert_int_equal(qv_rb_writer_write_device_move(wr, &d, &e), QV_ENOTSUP);
  assert_null(d.array.release);
  assert_int_equal(n_released, 1);
  /* CPU: written */
  rbt_check(qv_array_share(&w.batches[0], &copy, &e), &e, "share");
  qv_device_array_from_cpu(&copy, &d);
  rbt_check(qv_rb_writer_write_device(wr, &d, &e), &e, "write cpu");
  assert_non_null(d.array.release);
  d.array.release(&d.array);
  rbt_check(qv_array_share(&w.batches[1], &copy, &e), &e, "share");
  qv_device_array_from_cpu(&copy, &d);
  rbt_check(qv_rb_writer_write_device_move(wr, &d, &e), &e, "write move cpu");
  assert_null(d.array.release);
  /* released: QV_EARG */
  assert_int_equal(qv_rb_writer_write_device(wr, &d, &e), QV_EARG);
  assert_int_equal(qv_rb_writer_write_device_move(wr, &d, &e), QV_EARG);
  assert_int_equal(qv_rb_writer_write_device(wr, NULL, &e), QV_EARG);
  /* n_children that lies: refused by the writer's structure checks */
  rbt_check(qv_array_share(&w.batches[2], &copy, &e), &e, "share");
  qv_device_array_from_cpu(&copy, &d);
  int64_t real = d.array.n_children;
  d.array.n_children = real + 1;
  assert_int_not_equal(qv_rb_writer_write_device(wr, &d, &e), QV_OK);
  d.array.n_children = real - 1;
  assert_int_not_equal(qv_rb_writer_write_device(wr, &d, &e), QV_OK);
  d.array.n_children = real;
  struct ArrowArray **children = d.array.children;
  d.array.children = NULL;
  assert_int_not_equal(qv_rb_writer_write_device(wr, &d, &e), QV_OK);
  d.array.children = children;
  rbt_check(qv_rb_writer_write_device(wr, &d, &e), &e, "write after the lies");
  d.array.release(&d.array);
  rbt_check(qv_rb_writer_finish(wr, &e), &e, "finish");
  qv_rb_writer_free(wr);
  uint8_t *out;
  size_t size;
  rbt_take(sink, &out, &size);
  qv_sink_free(sink);
  rbt_assert_reads_back(out, size, false, w.cells, 3, "device writes");
  free(out);
  written_free(&w);
}

static void test_tensor_column(void **state) {
  (void)state;
  QvError e;
  int64_t shape[3] = {4, 2, 3};
  void *data = NULL;
  QvTensor t;
  rbt_check(qv_tensor_alloc(&t, QV_ARROW_INT32, 3, shape, NULL, false, &data, &e), &e, "alloc");
  for (int i = 0; i < 24; i++) ((int32_t *)data)[i] = i * 7 - 3;
  struct ArrowSchema field;
  struct ArrowDeviceArray d;
  rbt_check(qv_tensor_column_unstack_device(&t, NULL, &field, &d, &e), &e, "unstack");
  assert_cpu_device(&d);
  /* a GPU array: refused, nothing moved */
  d.device_type = ARROW_DEVICE_VULKAN;
  QvTensorColumn col;
  assert_int_equal(qv_tensor_column_init_device(&col, &field, &d, NULL, &e), QV_ENOTSUP);
  assert_non_null(strstr(e.message, "Vulkan"));
  assert_non_null(d.array.release);
  d.device_type = ARROW_DEVICE_CPU;
  rbt_check(qv_tensor_column_init_device(&col, &field, &d, NULL, &e), &e, "init");
  assert_null(d.array.release);
  qv_tensor_reset(&t); /* the column keeps the memory alive */
  QvTensor back;
  rbt_check(qv_tensor_column_stack(&col, NULL, &back, &e), &e, "stack");
  assert_int_equal(back.ndim, 3);
  for (int i = 0; i < 3; i++) assert_int_equal(back.shape[i], shape[i]);
  for (int i = 0; i < 24; i++) assert_int_equal(((const int32_t *)back.data)[i], i * 7 - 3);
  qv_tensor_reset(&back);
  qv_tensor_column_reset(&col);
  field.release(&field);
  /* released: QV_EARG */
  assert_int_equal(qv_tensor_column_init_device(&col, &field, &d, NULL, &e), QV_EARG);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_layout),          cmocka_unit_test(test_stream_reader),
      cmocka_unit_test(test_file_reader),     cmocka_unit_test(test_write_all_device),
      cmocka_unit_test(test_stream_to_cpu),   cmocka_unit_test(test_writer_device),
      cmocka_unit_test(test_tensor_column),
  };
  return qv_test_run(tests, NULL, NULL);
}
