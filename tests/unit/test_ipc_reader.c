/* Message reader: builds streams and files with the framing functions and
 * reads them back through every kind of source: memory, a path (mapped
 * whole, or pread + one mapping per body), a FIFO path, a pipe and a
 * seekable file descriptor; checks offsets, zero-copy, lifetimes, and every
 * error path (which must be sticky). */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ipc/source_internal.h"
#include "quiver/ipc.h"
#include "test_util.h"

/* ---- byte building */

typedef struct Bytes {
  uint8_t *data;
  size_t size, cap;
} Bytes;

static void put(Bytes *b, const void *p, size_t n) {
  if (b->size + n > b->cap) {
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->size + n) cap *= 2;
    b->data = realloc(b->data, cap);
    assert_non_null(b->data);
    b->cap = cap;
  }
  if (n) memcpy(b->data + b->size, p, n);
  b->size += n;
}

static void put_u32(Bytes *b, uint32_t v) {
  uint8_t le[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
  put(b, le, 4);
}

static void put_fill(Bytes *b, uint8_t byte, size_t n) {
  for (size_t i = 0; i < n; i++) put(b, &byte, 1);
}

static void bytes_free(Bytes *b) {
  free(b->data);
  memset(b, 0, sizeof *b);
}

static uint8_t body_byte(uint8_t seed, int64_t i) { return (uint8_t)(seed + i * 7 + (i >> 8)); }

/* Where a message landed in the bytes. */
typedef struct Placed {
  size_t offset;
  size_t framed; /* prefix + metadata + padding */
  int64_t body_length;
  uint8_t seed;
} Placed;

/* Appends a framed message without its body. */
static Placed put_frame(Bytes *b, const QvMessage *m, size_t alignment) {
  uint8_t *framed;
  size_t size;
  QvError err;
  QvStatus st = qv_ipc_frame_message(m, alignment, &framed, &size, &err);
  if (st) fail_msg("framing failed: %s", err.message);
  Placed p = {b->size, size, m->body_length, 0};
  put(b, framed, size);
  free(framed);
  return p;
}

/* Appends a framed message followed by body_length pattern bytes. */
static Placed put_message(Bytes *b, const QvMessage *m, size_t alignment, uint8_t seed) {
  uint8_t *framed;
  size_t size;
  QvError err;
  QvStatus st = qv_ipc_frame_message(m, alignment, &framed, &size, &err);
  if (st) fail_msg("framing failed: %s", err.message);
  Placed p = {b->size, size, m->body_length, seed};
  put(b, framed, size);
  free(framed);
  for (int64_t i = 0; i < m->body_length; i++) {
    uint8_t c = body_byte(seed, i);
    put(b, &c, 1);
  }
  return p;
}

/* Same, in the pre-0.15 form: no continuation marker. */
static Placed put_legacy_message(Bytes *b, const QvMessage *m, uint8_t seed) {
  uint8_t *framed;
  size_t size;
  QvError err;
  assert_int_equal(qv_ipc_frame_message(m, 8, &framed, &size, &err), QV_OK);
  Placed p = {b->size, size - 4, m->body_length, seed};
  put(b, framed + 4, size - 4);
  free(framed);
  for (int64_t i = 0; i < m->body_length; i++) {
    uint8_t c = body_byte(seed, i);
    put(b, &c, 1);
  }
  return p;
}

/* ---- messages */

static QvField g_field;
static QvFieldNode g_node;
static QvBuffer g_buffers[2];
static QvTensorDim g_dims[2];

static QvMessage schema_msg(void) {
  memset(&g_field, 0, sizeof g_field);
  g_field.name = "value";
  g_field.name_len = 5;
  g_field.nullable = true;
  g_field.type.id = QV_TYPE_INT;
  g_field.type.u.int_.bit_width = 32;
  g_field.type.u.int_.is_signed = true;
  QvMessage m;
  memset(&m, 0, sizeof m);
  m.version = QV_METADATA_V5;
  m.header_type = QV_HEADER_SCHEMA;
  m.header.schema.n_fields = 1;
  m.header.schema.fields = &g_field;
  return m;
}

/* An int32 batch of n rows; the body is the data buffer padded to 8. */
static QvMessage batch_msg(int64_t n) {
  g_node.length = n;
  g_node.null_count = 0;
  g_buffers[0].offset = 0;
  g_buffers[0].length = 0;
  g_buffers[1].offset = 0;
  g_buffers[1].length = 4 * n;
  QvMessage m;
  memset(&m, 0, sizeof m);
  m.version = QV_METADATA_V5;
  m.header_type = QV_HEADER_RECORD_BATCH;
  m.header.record_batch.length = n;
  m.header.record_batch.n_nodes = 1;
  m.header.record_batch.nodes = &g_node;
  m.header.record_batch.n_buffers = 2;
  m.header.record_batch.buffers = g_buffers;
  m.body_length = (4 * n + 7) / 8 * 8;
  return m;
}

static QvMessage tensor_msg(void) {
  memset(g_dims, 0, sizeof g_dims);
  g_dims[0].size = 3;
  g_dims[1].size = 4;
  QvMessage m;
  memset(&m, 0, sizeof m);
  m.version = QV_METADATA_V5;
  m.header_type = QV_HEADER_TENSOR;
  m.header.tensor.type.id = QV_TYPE_FLOATING_POINT;
  m.header.tensor.type.u.floating_point.precision = QV_PRECISION_DOUBLE;
  m.header.tensor.ndim = 2;
  m.header.tensor.shape = g_dims;
  m.header.tensor.data.length = 96;
  m.body_length = 96;
  return m;
}

/* ---- sources */

typedef enum {
  SRC_MEMORY,
  SRC_PATH,      /* mapped whole */
  SRC_PATH_EACH, /* map_each_body: pread metadata, map each body alone */
  SRC_FIFO,      /* a path that names a FIFO: read like a pipe */
  SRC_PIPE,
  SRC_FILE_FD,
  SRC_COUNT
} SourceKind;

static const char *kind_name(SourceKind k) {
  static const char *names[] = {"memory", "path", "path (each body)", "fifo", "pipe", "file fd"};
  return names[k];
}

/* Sources that only read forward: no footer, no open-time tail check. */
static bool sequential(SourceKind k) { return k == SRC_PIPE || k == SRC_FIFO; }

typedef struct Source {
  SourceKind kind;
  QvIpcReader *r;
  int fd;
  pid_t child;
  const uint8_t *base; /* memory: the bytes the reader was opened over */
} Source;

static void free_copy(void *p) { free(p); }

static int temp_file_with(const uint8_t *data, size_t size, size_t skip, char *path) {
  /* mkstemp's template: the prefix and six 'X' */
  const char *prefix = "/tmp/qv_test_ipc_";
  size_t n = strlen(prefix);
  memcpy(path, prefix, n);
  memset(path + n, 'X', 6);
  path[n + 6] = '\0';
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  size_t done = 0;
  while (done < size) {
    ssize_t k = write(fd, data + done, size - done);
    assert_true(k > 0);
    done += (size_t)k;
  }
  assert_true(lseek(fd, (off_t)skip, SEEK_SET) == (off_t)skip);
  return fd;
}

/* Writes data[from..size) into fd from a child process in small writes (so
 * the reader sees short reads), then exits. */
static pid_t spawn_writer(int fd, const uint8_t *data, size_t from, size_t size) {
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    size_t done = from;
    while (done < size) {
      size_t n = size - done < 777 ? size - done : 777;
      ssize_t k = write(fd, data + done, n);
      if (k <= 0) _exit(1);
      done += (size_t)k;
    }
    _exit(0);
  }
  return pid;
}

/* The reader takes its own reference to the source; the test drops its. */
static QvStatus reader_over(Source *s, QvSource *src, const QvIpcReaderOptions *o, QvError *err) {
  QvStatus st = qv_ipc_reader_new(&s->r, src, o, err);
  qv_source_free(src);
  return st;
}

/* Opens a reader of the given kind over data[skip..size). For the file fd
 * the reader starts at file offset `skip` (bytes before it are not input). */
static QvStatus source_open_at(Source *s, SourceKind kind, const uint8_t *data, size_t size,
                               size_t skip, const QvIpcReaderOptions *o, QvError *err) {
  memset(s, 0, sizeof *s);
  s->kind = kind;
  s->fd = -1;
  s->child = -1;
  char path[64];
  QvStatus st = QV_OK;
  QvSource *src = NULL;
  switch (kind) {
    case SRC_MEMORY: {
      /* an exact-size heap copy, so ASan sees any read past the end; its
       * owner keeps it alive for the messages */
      uint8_t *copy = malloc(size - skip + 1);
      assert_non_null(copy);
      memcpy(copy, data + skip, size - skip);
      uint8_t *exact = realloc(copy, size - skip ? size - skip : 1);
      assert_non_null(exact);
      QvOwner *owner = qv_owner_new(free_copy, exact);
      assert_non_null(owner);
      s->base = exact;
      assert_int_equal(qv_source_new_memory(&src, exact, size - skip, owner, err), QV_OK);
      qv_owner_free(owner);
      st = reader_over(s, src, o, err);
      break;
    }
    case SRC_PATH:
    case SRC_PATH_EACH: {
      int fd = temp_file_with(data + skip, size - skip, 0, path);
      close(fd);
      assert_int_equal(qv_source_new_path(&src, path, err), QV_OK);
      unlink(path); /* the mapping outlives the name */
      QvIpcReaderOptions each;
      memset(&each, 0, sizeof each);
      if (o) each = *o;
      each.map_each_body = kind == SRC_PATH_EACH;
      st = reader_over(s, src, &each, err);
      break;
    }
    case SRC_FILE_FD:
      s->fd = temp_file_with(data, size, skip, path);
      unlink(path);
      assert_int_equal(qv_source_new_fd(&src, s->fd, err), QV_OK);
      st = reader_over(s, src, o, err);
      break;
    case SRC_FIFO: {
      snprintf(path, sizeof path, "/tmp/qv_test_fifo_%d", (int)getpid());
      unlink(path);
      assert_int_equal(mkfifo(path, 0600), 0);
      pid_t pid = fork();
      assert_true(pid >= 0);
      if (pid == 0) {
        int w = open(path, O_WRONLY);
        if (w < 0) _exit(1);
        _exit(waitpid(spawn_writer(w, data, skip, size), NULL, 0) < 0);
      }
      s->child = pid;
      /* blocks until the child opens the write end */
      st = qv_source_new_path(&src, path, err);
      unlink(path);
      assert_int_equal(st, QV_OK);
      assert_int_equal(qv_source_kind(src), QV_SOURCE_STREAM);
      st = reader_over(s, src, o, err);
      break;
    }
    case SRC_PIPE: {
      int p[2];
      assert_int_equal(pipe(p), 0);
      s->child = spawn_writer(p[1], data, skip, size);
      close(p[1]);
      s->fd = p[0];
      assert_int_equal(qv_source_new_fd(&src, s->fd, err), QV_OK);
      st = reader_over(s, src, o, err);
      break;
    }
    default:
      fail();
  }
  if (st) assert_null(s->r);
  return st;
}

static QvStatus source_open(Source *s, SourceKind kind, const Bytes *b,
                            const QvIpcReaderOptions *o, QvError *err) {
  return source_open_at(s, kind, b->data, b->size, 0, o, err);
}

static void source_close(Source *s) {
  qv_ipc_reader_free(s->r);
  s->r = NULL;
  /* closing the read end first unblocks a writer stuck on a full pipe */
  if (s->fd >= 0) close(s->fd);
  if (s->child > 0) {
    int status;
    while (waitpid(s->child, &status, 0) < 0 && errno == EINTR) {
    }
  }
  s->fd = -1;
  s->child = -1;
}

/* Reads one message and checks it against where it was placed. */
static void expect_message(Source *s, const Bytes *b, const Placed *p, uint8_t header_type,
                           bool legacy) {
  QvIpcMessage msg;
  QvError err;
  QvStatus st = qv_ipc_reader_next(s->r, &msg, &err);
  if (st != QV_OK) fail_msg("%s: expected a message at %zu, got %s: %s", kind_name(s->kind),
                            p->offset, qv_status_name(st), err.message);
  size_t prefix = legacy ? 4 : 8;
  assert_int_equal(msg.offset, p->offset);
  assert_int_equal(msg.legacy_prefix, legacy);
  assert_int_equal(msg.metadata_length, p->framed - prefix);
  assert_int_equal(msg.body_offset, p->offset + p->framed);
  assert_int_equal(msg.body_length, p->body_length);
  assert_int_equal(msg.message.header_type, header_type);
  assert_non_null(msg.owner);
  assert_memory_equal(msg.metadata, b->data + p->offset + prefix, (size_t)msg.metadata_length);
  for (int64_t i = 0; i < msg.body_length; i++) assert_int_equal(msg.body[i], body_byte(p->seed, i));
  if (s->kind == SRC_MEMORY) {
    /* zero-copy: both point into the caller's bytes */
    assert_ptr_equal(msg.metadata, s->base + p->offset + prefix);
    assert_ptr_equal(msg.body, s->base + msg.body_offset);
  } else if (s->kind != SRC_PATH && s->kind != SRC_PATH_EACH) {
    /* copied bodies are 64-byte aligned; mapped ones sit where the file has them */
    assert_int_equal((uintptr_t)msg.body % 64, 0);
  }
  qv_ipc_message_reset(&msg);
  assert_null(msg.owner);
}

static void expect_eos(Source *s) {
  for (int i = 0; i < 3; i++) {
    QvIpcMessage msg;
    QvError err;
    QvStatus st = qv_ipc_reader_next(s->r, &msg, &err);
    if (st != QV_EOS)
      fail_msg("%s: expected QV_EOS, got %s: %s", kind_name(s->kind), qv_status_name(st),
               st == QV_OK ? "" : err.message);
    assert_null(msg.owner);
  }
}

/* next() fails with `code` and a message containing every needle; later
 * calls repeat the same error. */
static void expect_error(Source *s, QvStatus code, const char *needle1, const char *needle2) {
  QvIpcMessage msg;
  QvError err;
  QvStatus st = qv_ipc_reader_next(s->r, &msg, &err);
  if (st != code)
    fail_msg("%s: expected %s, got %s: %s", kind_name(s->kind), qv_status_name(code),
             qv_status_name(st), st == QV_OK || st == QV_EOS ? "" : err.message);
  assert_int_equal(err.code, code);
  if (needle1 && strstr(err.message, needle1) == NULL)
    fail_msg("%s: '%s' not in '%s'", kind_name(s->kind), needle1, err.message);
  if (needle2 && strstr(err.message, needle2) == NULL)
    fail_msg("%s: '%s' not in '%s'", kind_name(s->kind), needle2, err.message);
  assert_null(msg.owner);
  assert_null(msg.body);
  for (int i = 0; i < 2; i++) {
    QvError again;
    memset(&again, 0, sizeof again);
    assert_int_equal(qv_ipc_reader_next(s->r, &msg, &again), code);
    assert_int_equal(again.code, code);
    assert_string_equal(again.message, err.message);
    assert_null(msg.owner);
  }
  assert_int_equal(qv_ipc_reader_next(s->r, &msg, NULL), code);
}

/* ---- streams */

static void test_sequence_all_readers(void **state) {
  (void)state;
  Bytes b = {0};
  QvMessage m;
  m = schema_msg();
  Placed p0 = put_message(&b, &m, 8, 0);
  m = batch_msg(10);
  Placed p1 = put_message(&b, &m, 8, 1);
  m = tensor_msg();
  Placed p2 = put_message(&b, &m, 64, 2);
  m = batch_msg(100000); /* larger than a pipe buffer */
  Placed p3 = put_message(&b, &m, 8, 3);
  put(&b, qv_ipc_eos, 8);
  assert_int_equal(p2.framed % 64, 0);
  for (SourceKind k = 0; k < SRC_COUNT; k++) {
    Source s;
    QvError err;
    assert_int_equal(source_open(&s, k, &b, NULL, &err), QV_OK);
    assert_int_equal(qv_ipc_reader_format(s.r), QV_IPC_FORMAT_STREAM);
    expect_message(&s, &b, &p0, QV_HEADER_SCHEMA, false);
    expect_message(&s, &b, &p1, QV_HEADER_RECORD_BATCH, false);
    expect_message(&s, &b, &p2, QV_HEADER_TENSOR, false);
    expect_message(&s, &b, &p3, QV_HEADER_RECORD_BATCH, false);
    expect_eos(&s);
    QvFooter footer;
    assert_int_equal(qv_ipc_reader_footer(s.r, &footer, NULL, NULL, &err), QV_EARG);
    source_close(&s);
  }
  bytes_free(&b);
}

static void test_tensor_body_64_aligned(void **state) {
  (void)state;
  /* an 8-aligned message before it puts the tensor at an odd multiple of 8 */
  Bytes b = {0};
  QvMessage m = batch_msg(2);
  Placed p0 = put_message(&b, &m, 8, 5);
  m = tensor_msg();
  Placed p1 = put_message(&b, &m, 64, 6);
  assert_int_not_equal(p1.offset % 64, 0);
  for (SourceKind k = 0; k < SRC_COUNT; k++) {
    Source s;
    QvError err;
    assert_int_equal(source_open(&s, k, &b, NULL, &err), QV_OK);
    expect_message(&s, &b, &p0, QV_HEADER_RECORD_BATCH, false);
    QvIpcMessage msg;
    assert_int_equal(qv_ipc_reader_next(s.r, &msg, &err), QV_OK);
    assert_int_equal((msg.body_offset - msg.offset) % 64, 0);
    assert_int_equal(msg.metadata_length + 8, p1.framed);
    qv_ipc_message_reset(&msg);
    expect_eos(&s);
    source_close(&s);
  }
  bytes_free(&b);
}

static void test_legacy_prefix(void **state) {
  (void)state;
  Bytes b = {0};
  QvMessage m = schema_msg();
  Placed p0 = put_legacy_message(&b, &m, 0);
  m = batch_msg(3);
  Placed p1 = put_legacy_message(&b, &m, 9);
  m = batch_msg(5);
  Placed p2 = put_message(&b, &m, 8, 4); /* writers may mix forms; both are read */
  put_u32(&b, 0);                         /* legacy end-of-stream */
  put_fill(&b, 0xEE, 13);                 /* ignored after the marker */
  for (SourceKind k = 0; k < SRC_COUNT; k++) {
    Source s;
    QvError err;
    assert_int_equal(source_open(&s, k, &b, NULL, &err), QV_OK);
    expect_message(&s, &b, &p0, QV_HEADER_SCHEMA, true);
    expect_message(&s, &b, &p1, QV_HEADER_RECORD_BATCH, true);
    expect_message(&s, &b, &p2, QV_HEADER_RECORD_BATCH, false);
    expect_eos(&s);
    source_close(&s);
  }
  bytes_free(&b);
}

static void test_eos_forms(void **state) {
  (void)state;
  for (int form = 0; form < 3; form++) {
    Bytes b = {0};
    QvMessage m = schema_msg();
    Placed p0 = put_message(&b, &m, 8, 0);
    if (form == 0) put(&b, qv_ipc_eos, 8);
    if (form == 1) put_u32(&b, 0);
    /* form 2: the input just ends */
    if (form < 2) {
      /* anything after the marker is not read */
      m = batch_msg(1);
      put_message(&b, &m, 8, 1);
      put_fill(&b, 0xFF, 3);
    }
    for (SourceKind k = 0; k < SRC_COUNT; k++) {
      Source s;
      QvError err;
      assert_int_equal(source_open(&s, k, &b, NULL, &err), QV_OK);
      expect_message(&s, &b, &p0, QV_HEADER_SCHEMA, false);
      expect_eos(&s);
      source_close(&s);
    }
    bytes_free(&b);
  }
}

static void test_empty_and_eos_only(void **state) {
  (void)state;
  uint8_t zero = 0;
  Bytes eos = {0};
  put(&eos, qv_ipc_eos, 8);
  for (SourceKind k = 0; k < SRC_COUNT; k++) {
    Source s;
    QvError err;
    /* zero bytes are no Arrow stream (Arrow C++ refuses them too) */
    assert_int_equal(source_open_at(&s, k, &zero, 0, 0, NULL, &err), QV_EINVAL);
    assert_non_null(strstr(err.message, "empty input (0 bytes)"));
    source_close(&s);
    assert_int_equal(source_open(&s, k, &eos, NULL, &err), QV_OK);
    expect_eos(&s);
    source_close(&s);
  }
  bytes_free(&eos);
}

/* A stream of schema + batch(10), for the error cases. */
static void two_messages(Bytes *b, Placed *p0, Placed *p1) {
  QvMessage m = schema_msg();
  *p0 = put_message(b, &m, 8, 0);
  m = batch_msg(10);
  *p1 = put_message(b, &m, 8, 1);
}

static void check_error_all(const Bytes *b, const QvIpcReaderOptions *o, const Placed *ok,
                            size_t n_ok, QvStatus code, const char *n1, const char *n2) {
  for (SourceKind k = 0; k < SRC_COUNT; k++) {
    Source s;
    QvError err;
    assert_int_equal(source_open(&s, k, b, o, &err), QV_OK);
    for (size_t i = 0; i < n_ok; i++) {
      QvIpcMessage msg;
      assert_int_equal(qv_ipc_reader_next(s.r, &msg, &err), QV_OK);
      assert_int_equal(msg.offset, ok[i].offset);
      qv_ipc_message_reset(&msg);
    }
    expect_error(&s, code, n1, n2);
    source_close(&s);
  }
}

static void test_truncated_prefix(void **state) {
  (void)state;
  Placed p[2];
  char where[64];
  for (size_t cut = 1; cut < 8; cut++) {
    Bytes b = {0};
    two_messages(&b, &p[0], &p[1]);
    b.size = p[1].offset + cut;
    snprintf(where, sizeof where, "message at offset %zu", p[1].offset);
    check_error_all(&b, NULL, p, 1, QV_ETRUNCATED, where, "prefix");
    bytes_free(&b);
  }
  /* legacy: fewer than 4 bytes */
  Bytes b = {0};
  two_messages(&b, &p[0], &p[1]);
  b.size = p[1].offset;
  put_fill(&b, 0x10, 3);
  snprintf(where, sizeof where, "message at offset %zu", p[1].offset);
  check_error_all(&b, NULL, p, 1, QV_ETRUNCATED, where, "prefix");
  bytes_free(&b);
}

static void test_truncated_metadata(void **state) {
  (void)state;
  Placed p[2];
  char where[64];
  Bytes b = {0};
  two_messages(&b, &p[0], &p[1]);
  /* cut right after the prefix, one byte into the metadata, one byte short */
  size_t cuts[] = {8, 9, 0};
  size_t full = b.size;
  for (size_t i = 0; i < 3; i++) {
    b.size = p[1].offset + (cuts[i] ? cuts[i] : p[1].framed - 1);
    snprintf(where, sizeof where, "message at offset %zu", p[1].offset);
    check_error_all(&b, NULL, p, 1, QV_ETRUNCATED, where, "metadata needs");
    /* the first message's metadata too */
    b.size = cuts[i] ? cuts[i] : p[0].framed - 1;
    check_error_all(&b, NULL, p, 0, QV_ETRUNCATED, "message at offset 0", "metadata needs");
  }
  b.size = full;
  bytes_free(&b);
}

static void test_truncated_body(void **state) {
  (void)state;
  Placed p[2];
  char where[64];
  Bytes b = {0};
  two_messages(&b, &p[0], &p[1]);
  size_t body = p[1].offset + p[1].framed;
  size_t cuts[] = {body, body + 1, body + (size_t)p[1].body_length - 1};
  snprintf(where, sizeof where, "message at offset %zu", p[1].offset);
  for (size_t i = 0; i < 3; i++) {
    b.size = cuts[i];
    check_error_all(&b, NULL, p, 1, QV_ETRUNCATED, where, "body needs 40 bytes");
  }
  bytes_free(&b);
}

static void test_negative_metadata_length(void **state) {
  (void)state;
  Placed p[2];
  char where[64];
  const uint32_t lens[] = {0xFFFFFFF0u, 0x80000000u};
  for (int legacy = 0; legacy < 2; legacy++) {
    for (int i = 0; i < 2; i++) {
      Bytes b = {0};
      two_messages(&b, &p[0], &p[1]);
      if (!legacy) put_u32(&b, QV_IPC_CONTINUATION);
      put_u32(&b, lens[i]);
      put_fill(&b, 0, 64);
      snprintf(where, sizeof where, "message at offset %zu", b.size - 64 - (legacy ? 4 : 8));
      check_error_all(&b, NULL, p, 2, QV_EINVAL, where, "negative metadata length");
      bytes_free(&b);
    }
  }
}

static void test_limits(void **state) {
  (void)state;
  Placed p[2];
  Bytes b = {0};
  two_messages(&b, &p[0], &p[1]);
  QvIpcReaderOptions o;
  memset(&o, 0, sizeof o);
  /* metadata one byte over the limit; exactly at the limit passes */
  o.max_metadata_size = (int64_t)p[0].framed - 8 - 1;
  check_error_all(&b, &o, p, 0, QV_ELIMIT, "message at offset 0", "exceeds the limit");
  o.max_metadata_size = (int64_t)(p[0].framed > p[1].framed ? p[0].framed : p[1].framed) - 8;
  o.max_body_size = p[1].body_length - 1;
  char where[64];
  snprintf(where, sizeof where, "message at offset %zu", p[1].offset);
  check_error_all(&b, &o, p, 1, QV_ELIMIT, where, "body length 40 exceeds the limit of 39");
  o.max_body_size = p[1].body_length;
  for (SourceKind k = 0; k < SRC_COUNT; k++) {
    Source s;
    QvError err;
    assert_int_equal(source_open(&s, k, &b, &o, &err), QV_OK);
    expect_message(&s, &b, &p[0], QV_HEADER_SCHEMA, false);
    expect_message(&s, &b, &p[1], QV_HEADER_RECORD_BATCH, false);
    expect_eos(&s);
    source_close(&s);
  }
  bytes_free(&b);
}

/* Lengths that are allowed but far larger than the input: the reader must
 * report truncation, not allocate what the length claims (an fd reader that
 * did would fail with QV_ENOMEM or abort under ASan). */
static void test_lying_lengths_no_huge_allocation(void **state) {
  (void)state;
  Placed p[2];
  char where[64];
  /* body: 1 TiB, the default limit */
  Bytes b = {0};
  two_messages(&b, &p[0], &p[1]);
  QvMessage m = batch_msg(3);
  m.body_length = QV_IPC_DEFAULT_MAX_BODY_SIZE;
  size_t at = b.size;
  put_frame(&b, &m, 8);
  put_fill(&b, 0x5A, 100);
  snprintf(where, sizeof where, "message at offset %zu", at);
  check_error_all(&b, NULL, p, 2, QV_ETRUNCATED, where, "body needs 1099511627776 bytes");
  /* a smaller limit stops it before any body byte is read */
  QvIpcReaderOptions o;
  memset(&o, 0, sizeof o);
  o.max_body_size = 1 << 20;
  check_error_all(&b, &o, p, 2, QV_ELIMIT, where, "exceeds the limit of 1048576");
  bytes_free(&b);

  /* metadata: just under the default limit */
  Bytes c = {0};
  two_messages(&c, &p[0], &p[1]);
  at = c.size;
  put_u32(&c, QV_IPC_CONTINUATION);
  put_u32(&c, (uint32_t)(QV_IPC_DEFAULT_MAX_METADATA_SIZE - 8));
  put_fill(&c, 0, 5000);
  snprintf(where, sizeof where, "message at offset %zu", at);
  check_error_all(&c, NULL, p, 2, QV_ETRUNCATED, where, "metadata needs 67108856 bytes");
  o.max_metadata_size = 4096;
  check_error_all(&c, &o, p, 2, QV_ELIMIT, where, "metadata length 67108856 exceeds");
  bytes_free(&c);
}

static void test_garbage_metadata(void **state) {
  (void)state;
  Placed p[2];
  char where[64];
  Bytes b = {0};
  two_messages(&b, &p[0], &p[1]);
  size_t at = b.size;
  put_u32(&b, QV_IPC_CONTINUATION);
  put_u32(&b, 16);
  put_fill(&b, 0xAB, 16);
  put(&b, qv_ipc_eos, 8);
  snprintf(where, sizeof where, "message at offset %zu: ", at);
  for (SourceKind k = 0; k < SRC_COUNT; k++) {
    Source s;
    QvError err;
    assert_int_equal(source_open(&s, k, &b, NULL, &err), QV_OK);
    expect_message(&s, &b, &p[0], QV_HEADER_SCHEMA, false);
    expect_message(&s, &b, &p[1], QV_HEADER_RECORD_BATCH, false);
    QvIpcMessage msg;
    assert_int_equal(qv_ipc_reader_next(s.r, &msg, &err), QV_EINVAL);
    /* the decoder's message, prefixed with the position */
    assert_int_equal(strncmp(err.message, where, strlen(where)), 0);
    assert_true(strlen(err.message) > strlen(where));
    /* sticky, even when the first failing call had no error struct */
    expect_error(&s, QV_EINVAL, where, NULL);
    source_close(&s);
  }
  /* first call without an error struct: the message is still kept */
  Source s;
  QvError err;
  assert_int_equal(source_open(&s, SRC_MEMORY, &b, NULL, &err), QV_OK);
  QvIpcMessage msg;
  for (int i = 0; i < 2; i++) {
    assert_int_equal(qv_ipc_reader_next(s.r, &msg, NULL), QV_OK);
    qv_ipc_message_reset(&msg);
  }
  assert_int_equal(qv_ipc_reader_next(s.r, &msg, NULL), QV_EINVAL);
  expect_error(&s, QV_EINVAL, where, NULL);
  source_close(&s);
  bytes_free(&b);
}

/* After a bad message, valid messages that follow are not read: the reader
 * cannot know where the next frame really starts. */
static void test_error_then_valid_data_stays_error(void **state) {
  (void)state;
  Placed p[2];
  Bytes b = {0};
  two_messages(&b, &p[0], &p[1]);
  /* truncate the schema metadata by claiming 8 bytes; the next message
   * would parse if the reader resynchronised */
  Bytes c = {0};
  put_u32(&c, QV_IPC_CONTINUATION);
  put_u32(&c, 8);
  put_fill(&c, 0, 8);
  put(&c, b.data, b.size);
  Placed q[1] = {{0}};
  check_error_all(&c, NULL, q, 0, QV_EINVAL, "message at offset 0: ", NULL);
  bytes_free(&b);
  bytes_free(&c);
}

/* ---- lifetimes */

static int g_released;
static void count_release(void *p) {
  (void)p;
  g_released++;
}

static void test_messages_outlive_reader(void **state) {
  (void)state;
  Bytes b = {0};
  QvMessage m = schema_msg();
  Placed p0 = put_message(&b, &m, 8, 0);
  m = batch_msg(1000);
  Placed p1 = put_message(&b, &m, 8, 7);
  m = tensor_msg();
  Placed p2 = put_message(&b, &m, 64, 8);
  const Placed *ps[] = {&p0, &p1, &p2};
  for (SourceKind k = 0; k < SRC_COUNT; k++) {
    Source s;
    QvError err;
    assert_int_equal(source_open(&s, k, &b, NULL, &err), QV_OK);
    QvIpcMessage msgs[3];
    for (int i = 0; i < 3; i++) assert_int_equal(qv_ipc_reader_next(s.r, &msgs[i], &err), QV_OK);
    source_close(&s); /* the mapping / copies must stay alive */
    for (int i = 0; i < 3; i++) {
      assert_int_equal(msgs[i].body_offset, ps[i]->offset + ps[i]->framed);
      for (int64_t j = 0; j < msgs[i].body_length; j++)
        assert_int_equal(msgs[i].body[j], body_byte(ps[i]->seed, j));
      assert_int_equal(msgs[i].metadata[0], b.data[ps[i]->offset + 8]);
    }
    /* release out of order */
    qv_ipc_message_reset(&msgs[1]);
    qv_ipc_message_reset(&msgs[0]);
    assert_int_equal(msgs[2].body[95], body_byte(8, 95));
    qv_ipc_message_reset(&msgs[2]);
  }
  /* without an owner the caller keeps the bytes alive: messages hold none */
  {
    QvIpcReader *r;
    QvError err;
    assert_int_equal(qv_test_reader_memory(&r, b.data, b.size, &err), QV_OK);
    QvIpcMessage a;
    assert_int_equal(qv_ipc_reader_next(r, &a, &err), QV_OK);
    assert_null(a.owner);
    assert_ptr_equal(a.metadata, b.data + 8);
    qv_ipc_message_reset(&a);
    qv_ipc_reader_free(r);
  }
  /* a memory owner is released with the last message, not with the reader */
  g_released = 0;
  QvOwner *owner = qv_owner_new(count_release, NULL);
  assert_non_null(owner);
  QvIpcReader *r;
  QvError err;
  QvSource *src;
  assert_int_equal(qv_source_new_memory(&src, b.data, b.size, owner, &err), QV_OK);
  assert_int_equal(qv_ipc_reader_new(&r, src, NULL, &err), QV_OK);
  qv_source_free(src);
  qv_owner_free(owner);
  QvIpcMessage a, c;
  assert_int_equal(qv_ipc_reader_next(r, &a, &err), QV_OK);
  assert_int_equal(qv_ipc_reader_next(r, &c, &err), QV_OK);
  assert_ptr_equal(a.owner, owner);
  qv_ipc_reader_free(r);
  assert_int_equal(g_released, 0);
  qv_ipc_message_reset(&a);
  assert_int_equal(g_released, 0);
  qv_ipc_message_reset(&c);
  assert_int_equal(g_released, 1);
  /* a reader that fails to open keeps no reference to the source's owner */
  owner = qv_owner_new(count_release, NULL);
  const uint8_t bad[] = {'A', 'R', 'R', 'O', 'W', '1', 0, 0, 1, 2};
  assert_int_equal(qv_source_new_memory(&src, bad, sizeof bad, owner, &err), QV_OK);
  assert_int_equal(qv_ipc_reader_new(&r, src, NULL, &err), QV_ETRUNCATED);
  assert_null(r);
  qv_source_free(src);
  qv_owner_free(owner);
  assert_int_equal(g_released, 2);
  bytes_free(&b);
}

/* ---- file format */

typedef struct FileLayout {
  Placed schema, batch;
  size_t footer_offset;
  int32_t footer_length;
} FileLayout;

static void build_file(Bytes *b, bool with_eos, FileLayout *l) {
  put(b, "ARROW1\0\0", 8);
  QvMessage m = schema_msg();
  l->schema = put_message(b, &m, 8, 0);
  m = batch_msg(6);
  l->batch = put_message(b, &m, 8, 3);
  if (with_eos) put(b, qv_ipc_eos, 8);
  QvFooter f;
  memset(&f, 0, sizeof f);
  f.version = QV_METADATA_V5;
  f.has_schema = true;
  f.schema = schema_msg().header.schema;
  QvBlock block = {(int64_t)l->batch.offset, (int32_t)l->batch.framed, l->batch.body_length};
  f.n_record_batches = 1;
  f.record_batches = &block;
  uint8_t *fb;
  size_t fb_size;
  QvError err;
  assert_int_equal(qv_footer_encode(&f, &fb, &fb_size, &err), QV_OK);
  l->footer_offset = b->size;
  l->footer_length = (int32_t)fb_size;
  put(b, fb, fb_size);
  free(fb);
  put_u32(b, (uint32_t)fb_size);
  put(b, "ARROW1", 6);
}

static void check_file(Source *s, const Bytes *b, const FileLayout *l) {
  QvError err;
  assert_int_equal(qv_ipc_reader_format(s->r), QV_IPC_FORMAT_FILE);
  Placed ps = l->schema, pb = l->batch;
  expect_message(s, b, &ps, QV_HEADER_SCHEMA, false);
  expect_message(s, b, &pb, QV_HEADER_RECORD_BATCH, false);
  expect_eos(s);
  QvFooter f;
  int64_t foff = -1;
  int32_t flen = -1;
  if (sequential(s->kind)) {
    assert_int_equal(qv_ipc_reader_footer(s->r, &f, &foff, &flen, &err), QV_EARG);
    return;
  }
  QvStatus st = qv_ipc_reader_footer(s->r, &f, &foff, &flen, &err);
  if (st) fail_msg("%s: footer: %s", kind_name(s->kind), err.message);
  assert_int_equal(foff, l->footer_offset);
  assert_int_equal(flen, l->footer_length);
  assert_int_equal(f.version, QV_METADATA_V5);
  assert_true(f.has_schema);
  assert_int_equal(f.schema.n_fields, 1);
  assert_int_equal(f.n_dictionaries, 0);
  assert_int_equal(f.n_record_batches, 1);
  assert_int_equal(f.record_batches[0].offset, l->batch.offset);
  assert_int_equal(f.record_batches[0].meta_data_length, l->batch.framed);
  assert_int_equal(f.record_batches[0].body_length, l->batch.body_length);
  qv_footer_reset(&f);
  /* the footer can be read again, and reading it does not disturb next() */
  assert_int_equal(qv_ipc_reader_footer(s->r, &f, NULL, NULL, &err), QV_OK);
  qv_footer_reset(&f);
  expect_eos(s);
}

static void test_file_format(void **state) {
  (void)state;
  for (int with_eos = 1; with_eos >= 0; with_eos--) {
    Bytes b = {0};
    FileLayout l;
    build_file(&b, with_eos, &l);
    for (SourceKind k = 0; k < SRC_COUNT; k++) {
      /* a pipe cannot find the footer, so it needs the EOS marker */
      if (sequential(k) && !with_eos) continue;
      Source s;
      QvError err;
      QvStatus st = source_open(&s, k, &b, NULL, &err);
      if (st) fail_msg("%s: %s", kind_name(k), err.message);
      check_file(&s, &b, &l);
      source_close(&s);
    }
    bytes_free(&b);
  }
}

/* A descriptor positioned after unrelated bytes: offsets are relative to
 * where the reader started. */
static void test_file_fd_at_offset(void **state) {
  (void)state;
  Bytes junk = {0};
  put_fill(&junk, 0x77, 13);
  Bytes f = {0};
  FileLayout l;
  build_file(&f, false, &l);
  Bytes all = {0};
  put(&all, junk.data, junk.size);
  put(&all, f.data, f.size);
  Source s;
  QvError err;
  assert_int_equal(source_open_at(&s, SRC_FILE_FD, all.data, all.size, 13, NULL, &err), QV_OK);
  check_file(&s, &f, &l);
  source_close(&s);
  bytes_free(&junk);
  bytes_free(&f);
  bytes_free(&all);
}

static void expect_open_error(const Bytes *b, QvStatus code, const char *needle) {
  for (SourceKind k = 0; k < SRC_COUNT; k++) {
    if (sequential(k)) continue; /* a pipe sees the tail only at the end */
    Source s;
    QvError err;
    QvStatus st = source_open(&s, k, b, NULL, &err);
    if (st != code)
      fail_msg("%s: expected %s at open, got %s", kind_name(k), qv_status_name(code),
               qv_status_name(st));
    if (strstr(err.message, needle) == NULL)
      fail_msg("%s: '%s' not in '%s'", kind_name(k), needle, err.message);
    source_close(&s);
  }
}

static void set_u32(Bytes *b, size_t at, uint32_t v) {
  b->data[at] = (uint8_t)v;
  b->data[at + 1] = (uint8_t)(v >> 8);
  b->data[at + 2] = (uint8_t)(v >> 16);
  b->data[at + 3] = (uint8_t)(v >> 24);
}

static void test_bad_files(void **state) {
  (void)state;
  Bytes b = {0};
  FileLayout l;
  build_file(&b, true, &l);
  size_t len_at = b.size - 10;
  /* missing trailing magic */
  b.size--;
  expect_open_error(&b, QV_ETRUNCATED, "trailing ARROW1 magic");
  b.size++;
  b.data[b.size - 1] = 'X';
  expect_open_error(&b, QV_ETRUNCATED, "trailing ARROW1 magic");
  b.data[b.size - 1] = '1';
  /* footer lengths that cannot fit */
  const uint32_t lies[] = {0, 0xFFFFFFFFu, 0x80000000u, (uint32_t)b.size,
                           (uint32_t)(b.size - 18 + 1)};
  for (size_t i = 0; i < sizeof lies / sizeof lies[0]; i++) {
    set_u32(&b, len_at, lies[i]);
    expect_open_error(&b, QV_EINVAL, "footer length");
  }
  /* a length that fits but lies: the footer then overlaps the last message,
   * which is reported truncated, and the footer does not decode */
  set_u32(&b, len_at, (uint32_t)l.footer_length + 16);
  for (SourceKind k = 0; k < SRC_COUNT; k++) {
    if (sequential(k)) continue;
    Source s;
    QvError err;
    assert_int_equal(source_open(&s, k, &b, NULL, &err), QV_OK);
    Placed ps = l.schema;
    expect_message(&s, &b, &ps, QV_HEADER_SCHEMA, false);
    char where[64];
    snprintf(where, sizeof where, "message at offset %zu", l.batch.offset);
    expect_error(&s, QV_ETRUNCATED, where, "body needs");
    QvFooter f;
    snprintf(where, sizeof where, "footer at offset %zu", l.footer_offset - 16);
    assert_int_equal(qv_ipc_reader_footer(s.r, &f, NULL, NULL, &err), QV_EINVAL);
    assert_non_null(strstr(err.message, where));
    source_close(&s);
  }
  set_u32(&b, len_at, (uint32_t)l.footer_length);
  /* too short to be a file at all */
  Bytes t = {0};
  put(&t, "ARROW1", 6);
  expect_open_error(&t, QV_ETRUNCATED, "too short");
  put(&t, "\0\0\1\0\0", 5);
  put(&t, "ARROW1", 6); /* 17 bytes: one short of magic + padding + length + magic */
  expect_open_error(&t, QV_ETRUNCATED, "too short");
  bytes_free(&t);
  bytes_free(&b);
}

static void test_bad_open_arguments(void **state) {
  (void)state;
  QvSource *src = (QvSource *)&src;
  QvError err;
  assert_int_equal(qv_source_new_path(&src, "/nonexistent/quiver.arrow", &err), QV_EIO);
  assert_null(src);
  assert_non_null(strstr(err.message, "/nonexistent/quiver.arrow"));
  assert_int_equal(qv_source_new_path(&src, "/tmp", &err), QV_EIO);
  assert_null(src);
  assert_non_null(strstr(err.message, "directory"));
  assert_int_equal(qv_source_new_path(&src, NULL, &err), QV_EARG);
  assert_int_equal(qv_source_new_fd(&src, -1, &err), QV_EARG);
  assert_null(src);
  assert_int_equal(qv_source_new_memory(&src, NULL, 5, NULL, &err), QV_EARG);
  assert_null(src);
  QvIpcReader *r = (QvIpcReader *)&r;
  assert_int_equal(qv_ipc_reader_new(&r, NULL, NULL, &err), QV_EARG);
  assert_null(r);
  /* an options struct from a newer caller with an unknown option set */
  struct {
    QvIpcReaderOptions known;
    uint64_t newer;
  } newer;
  memset(&newer, 0, sizeof newer);
  newer.known.struct_size = sizeof newer;
  newer.newer = 1;
  assert_int_equal(qv_source_new_memory(&src, qv_ipc_eos, 8, NULL, &err), QV_OK);
  assert_int_equal(qv_ipc_reader_new(&r, src, &newer.known, &err), QV_ENOTSUP);
  assert_null(r);
  newer.newer = 0; /* unknown but zero: accepted */
  assert_int_equal(qv_ipc_reader_new(&r, src, &newer.known, &err), QV_OK);
  qv_ipc_reader_free(r);
  qv_source_free(src);
  qv_ipc_reader_free(NULL);
  qv_source_free(NULL);
  qv_ipc_message_reset(NULL);
}

/* ---- nth and message_at */

static void test_nth_every_source(void **state) {
  (void)state;
  Bytes b = {0};
  QvMessage m = schema_msg();
  put_message(&b, &m, 8, 0);
  m = batch_msg(100000);
  put_message(&b, &m, 8, 1);
  m = tensor_msg();
  Placed p2 = put_message(&b, &m, 64, 2);
  m = batch_msg(7);
  Placed p3 = put_message(&b, &m, 8, 3);
  for (SourceKind k = 0; k < SRC_COUNT; k++) {
    Source s;
    QvError err;
    assert_int_equal(source_open(&s, k, &b, NULL, &err), QV_OK);
    int64_t views = qvi_source_count_view_maps(), ranges = qvi_source_count_range_maps();
    QvIpcMessage msg;
    QvStatus st = qv_ipc_reader_nth(s.r, 2, &msg, &err);
    if (st) fail_msg("%s: nth: %s", kind_name(k), err.message);
    qv_ipc_message_reset(&msg);
    if (k == SRC_PATH || k == SRC_PATH_EACH) {
      /* the skipped bodies were not mapped, and the file was not mapped
       * whole: one mapping, of the tensor's body */
      assert_int_equal(qvi_source_count_view_maps(), views);
      assert_int_equal(qvi_source_count_range_maps(), ranges + 1);
    }
    source_close(&s);
    /* again, checking the message; nth counts from the reader's position */
    assert_int_equal(source_open(&s, k, &b, NULL, &err), QV_OK);
    assert_int_equal(qv_ipc_reader_nth(s.r, 0, &msg, &err), QV_OK);
    assert_int_equal(msg.offset, 0);
    qv_ipc_message_reset(&msg);
    assert_int_equal(qv_ipc_reader_nth(s.r, 1, &msg, &err), QV_OK);
    assert_int_equal(msg.offset, p2.offset);
    for (int64_t i = 0; i < msg.body_length; i++) assert_int_equal(msg.body[i], body_byte(2, i));
    qv_ipc_message_reset(&msg);
    expect_message(&s, &b, &p3, QV_HEADER_RECORD_BATCH, false);
    assert_int_equal(qv_ipc_reader_nth(s.r, 0, &msg, &err), QV_EINVAL);
    assert_non_null(strstr(err.message, "input holds no message"));
    source_close(&s);
    assert_int_equal(source_open(&s, k, &b, NULL, &err), QV_OK);
    assert_int_equal(qv_ipc_reader_nth(s.r, 9, &msg, &err), QV_EINVAL);
    assert_string_equal(err.message, "no message 9: input holds 4 messages");
    assert_null(msg.owner);
    assert_int_equal(qv_ipc_reader_nth(s.r, -1, &msg, &err), QV_EARG);
    source_close(&s);
  }
  bytes_free(&b);
}

/* nth over a truncated body fails for the message it returns and, on a
 * sequential source, for one it skips; mapping sources never read a
 * skipped body, but check that it fits. */
static void test_nth_errors_are_sticky(void **state) {
  (void)state;
  Placed p[2];
  Bytes b = {0};
  two_messages(&b, &p[0], &p[1]);
  b.size -= 1;
  char where[64];
  snprintf(where, sizeof where, "message at offset %zu", p[1].offset);
  for (SourceKind k = 0; k < SRC_COUNT; k++) {
    for (int64_t index = 1; index <= 2; index++) {
      Source s;
      QvError err;
      assert_int_equal(source_open(&s, k, &b, NULL, &err), QV_OK);
      QvIpcMessage msg;
      assert_int_equal(qv_ipc_reader_nth(s.r, index, &msg, &err), QV_ETRUNCATED);
      assert_non_null(strstr(err.message, where));
      assert_non_null(strstr(err.message, "body needs 40 bytes"));
      assert_null(msg.owner);
      expect_error(&s, QV_ETRUNCATED, where, "body needs");
      source_close(&s);
    }
  }
  bytes_free(&b);
}

static void test_message_at(void **state) {
  (void)state;
  Bytes b = {0};
  FileLayout l;
  build_file(&b, true, &l);
  for (SourceKind k = 0; k < SRC_COUNT; k++) {
    Source s;
    QvError err;
    assert_int_equal(source_open(&s, k, &b, NULL, &err), QV_OK);
    QvIpcMessage msg;
    QvStatus st = qv_ipc_reader_message_at(s.r, (int64_t)l.batch.offset, &msg, &err);
    if (k == SRC_PIPE || k == SRC_FIFO || k == SRC_FILE_FD) {
      assert_int_equal(st, QV_EARG);
      assert_null(msg.owner);
      source_close(&s);
      continue;
    }
    if (st) fail_msg("%s: %s", kind_name(k), err.message);
    assert_int_equal(msg.offset, l.batch.offset);
    assert_int_equal(msg.message.header_type, QV_HEADER_RECORD_BATCH);
    assert_int_equal(msg.body_length, l.batch.body_length);
    for (int64_t i = 0; i < msg.body_length; i++) assert_int_equal(msg.body[i], body_byte(3, i));
    qv_ipc_message_reset(&msg);
    /* the end-of-stream marker after the batch */
    int64_t eos_at = (int64_t)(l.batch.offset + l.batch.framed) + l.batch.body_length;
    assert_int_equal(qv_ipc_reader_message_at(s.r, eos_at, &msg, &err), QV_EOS);
    /* garbage in the middle of a body: an error, but not a sticky one */
    assert_int_not_equal(qv_ipc_reader_message_at(s.r, eos_at - 8, &msg, &err), QV_OK);
    assert_null(msg.owner);
    assert_int_equal(qv_ipc_reader_message_at(s.r, (int64_t)l.footer_offset + 1, &msg, &err),
                     QV_EINVAL);
    assert_int_equal(qv_ipc_reader_message_at(s.r, -1, &msg, &err), QV_EINVAL);
    /* next() is where it was */
    Placed ps = l.schema;
    expect_message(&s, &b, &ps, QV_HEADER_SCHEMA, false);
    source_close(&s);
  }
  bytes_free(&b);
}

int main(void) {
  /* a failed test may leave a writer child blocked on a closed pipe */
  signal(SIGPIPE, SIG_DFL);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_sequence_all_readers),
      cmocka_unit_test(test_tensor_body_64_aligned),
      cmocka_unit_test(test_legacy_prefix),
      cmocka_unit_test(test_eos_forms),
      cmocka_unit_test(test_empty_and_eos_only),
      cmocka_unit_test(test_truncated_prefix),
      cmocka_unit_test(test_truncated_metadata),
      cmocka_unit_test(test_truncated_body),
      cmocka_unit_test(test_negative_metadata_length),
      cmocka_unit_test(test_limits),
      cmocka_unit_test(test_lying_lengths_no_huge_allocation),
      cmocka_unit_test(test_garbage_metadata),
      cmocka_unit_test(test_error_then_valid_data_stays_error),
      cmocka_unit_test(test_messages_outlive_reader),
      cmocka_unit_test(test_file_format),
      cmocka_unit_test(test_file_fd_at_offset),
      cmocka_unit_test(test_bad_files),
      cmocka_unit_test(test_bad_open_arguments),
      cmocka_unit_test(test_nth_every_source),
      cmocka_unit_test(test_nth_errors_are_sticky),
      cmocka_unit_test(test_message_at),
  };
  return qv_test_run(tests, NULL, NULL);
}
