/* quiver CLI: reading a command's input (input.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "quiver/advanced.h"
#include "input.h"
#include "output.h"
#include "quiver/io.h"
#include "quiver/sparse_ipc.h"
#include "quiver/tensor_ipc.h"

QvStatus cli_error_name_input(const char *path, QvError *error) {
  const char *name = strcmp(path, "-") == 0 ? "stdin" : path;
  size_t n = strlen(name);
  const char *m = error->message;
  if (strncmp(m, "<memory>: ", 10) == 0) memmove(error->message, m + 10, strlen(m + 10) + 1);
  if (strncmp(m, name, n) != 0 || m[n] != ':') qv_error_prefix(error, "%s", name);
  return error->code;
}

QvStatus cli_source_new(const char *path, QvSource **src, QvError *error) {
  return strcmp(path, "-") == 0 ? qv_source_new_fd(src, STDIN_FILENO, error)
                                : qv_source_new_path(src, path, error);
}

static QvStatus read_all(int fd, const char *name, QvCliInput *in, QvError *error) {
  size_t cap = 1 << 16, len = 0;
  uint8_t *buf = malloc(cap);
  if (buf == NULL) return qv_error_set(error, QV_ENOMEM, "out of memory");
  for (;;) {
    if (len == cap) {
      uint8_t *nb = realloc(buf, cap * 2);
      if (nb == NULL) {
        free(buf);
        return qv_error_set(error, QV_ENOMEM, "out of memory reading %s", name);
      }
      buf = nb;
      cap *= 2;
    }
    ssize_t k = read(fd, buf + len, cap - len);
    if (k < 0) {
      if (errno == EINTR) continue;
      int e = errno;
      free(buf);
      return qv_error_set(error, QV_EIO, "%s: %s", name, strerror(e));
    }
    if (k == 0) break;
    len += (size_t)k;
  }
  in->heap = buf;
  in->data = buf;
  in->size = len;
  return QV_OK;
}

QvStatus cli_input_open(const char *path, QvCliInput *in, QvError *error) {
  memset(in, 0, sizeof *in);
  if (strcmp(path, "-") == 0) return read_all(STDIN_FILENO, "stdin", in, error);
  int fd = open(path, O_RDONLY);
  if (fd < 0) return qv_error_set(error, QV_EIO, "%s: %s", path, strerror(errno));
  struct stat st;
  QvStatus s = QV_OK;
  if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
    void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (m == MAP_FAILED) {
      s = qv_error_set(error, QV_EIO, "%s: mmap: %s", path, strerror(errno));
    } else {
      in->mapping = m;
      in->data = m;
      in->size = (size_t)st.st_size;
    }
  } else {
    s = read_all(fd, path, in, error);
  }
  close(fd);
  return s;
}

void cli_input_free(QvCliInput *in) {
  if (in->mapping) munmap(in->mapping, in->size);
  free(in->heap);
  memset(in, 0, sizeof *in);
}

int cli_open_single_input(const char *cmd, int argc, char **argv, const char **path,
                             QvCliInput *in) {
  memset(in, 0, sizeof *in);
  int status;
  *path = cli_args_one_file(cmd, argc, argv, &status);
  if (*path == NULL) return status;
  QvError err;
  qv_error_clear(&err);
  if (cli_input_open(*path, in, &err)) return cli_fail(cmd, &err);
  return 0;
}

QvStatus cli_reader_memory(QvIpcReader **r, const uint8_t *data, size_t size, QvError *error) {
  *r = NULL;
  QvSource *src;
  QvStatus st = qv_source_new_memory(&src, data, size, NULL, error);
  if (st) return st;
  st = qv_ipc_reader_new(r, src, NULL, error);
  qv_source_free(src); /* the reader holds its own reference */
  return st;
}

static int threads_given; /* 0: not set */
static bool decimal_overflow;

void cli_set_accept_decimal_overflow(bool accept) { decimal_overflow = accept; }
bool cli_accept_decimal_overflow(void) { return decimal_overflow; }

void cli_set_threads(int threads) { threads_given = threads; }

int cli_threads(void) {
  if (threads_given > 0) return threads_given;
  int n = qv_cpu_count();
  return n > QV_RB_MAX_THREADS ? QV_RB_MAX_THREADS : n;
}

const QvRbReadOptions *cli_rb_read_options(void) {
  static QvRbReadOptions full;
  memset(&full, 0, sizeof full);
  full.struct_size = sizeof full;
  full.validate = QV_VALIDATE_FULL;
  full.threads = cli_threads();
  full.accept_decimal_overflow = decimal_overflow;
  return &full;
}

QvStatus cli_rb_reader_memory(const uint8_t *data, size_t size, struct ArrowArrayStream *stream,
                                 QvRbFileReader **file, QvError *error) {
  if (file) *file = NULL;
  else memset(stream, 0, sizeof *stream);
  QvSource *src;
  QvStatus st = qv_source_new_memory(&src, data, size, NULL, error);
  if (st) return st;
  st = file ? qv_rb_file_reader_new(file, src, cli_rb_read_options(), error)
            : qv_rb_stream_reader_new(stream, src, cli_rb_read_options(), error);
  qv_source_free(src); /* the reader holds its own reference */
  return st;
}

bool cli_holds_tensors(const uint8_t *data, size_t size) {
  QvIpcReader *r;
  if (cli_reader_memory(&r, data, size, NULL) != QV_OK) return false;
  QvIpcMessage msg;
  bool tensor = false;
  if (qv_ipc_reader_next(r, &msg, NULL) == QV_OK) {
    uint8_t kind = msg.message.header_type;
    tensor = kind == QV_HEADER_TENSOR || kind == QV_HEADER_SPARSE_TENSOR;
    qv_ipc_message_reset(&msg);
  }
  qv_ipc_reader_free(r);
  return tensor;
}

/* ---- tensors */

void cli_tensor_free(QvCliTensor *t) {
  qv_tensor_reset(&t->dense);
  qv_sparse_reset(&t->sparse);
  t->is_sparse = false;
}

QvStatus cli_read_tensor(const char *path, int64_t index, QvCliTensor *out, QvError *error) {
  memset(out, 0, sizeof *out);
  QvSource *src;
  QvStatus st = cli_source_new(path, &src, error);
  if (st) return st;
  QvIpcReader *r;
  st = qv_ipc_reader_new(&r, src, NULL, error);
  qv_source_free(src); /* the reader holds its own reference */
  if (st) return cli_error_name_input(path, error); /* the reader names a path already */
  QvIpcMessage msg;
  st = qv_ipc_reader_nth(r, index, &msg, error);
  if (st == QV_OK) {
    uint8_t kind = msg.message.header_type;
    if (kind == QV_HEADER_TENSOR) {
      st = qv_tensor_from_message(&msg, &out->dense, error);
    } else if (kind == QV_HEADER_SPARSE_TENSOR) {
      out->is_sparse = true;
      st = qv_sparse_from_message(&msg, &out->sparse, NULL, error);
    } else {
      st = qv_error_set(error, QV_EINVAL, "message is a %s, not a Tensor or SparseTensor",
                        qv_header_type_name(kind));
    }
    if (st)
      qv_error_prefix(error, "message %lld at offset %lld", (long long)index, (long long)msg.offset);
    qv_ipc_message_reset(&msg);
  }
  qv_ipc_reader_free(r);
  if (st) {
    cli_tensor_free(out);
    cli_error_name_input(path, error);
  }
  return st;
}
