/* quiver CLI: reading a command's input (input.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "quiver/advanced.h"
#include "input.h"
#include "output.h"
#include "quiver/io.h"
#include "quiver/sparse_ipc.h"
#include "quiver/tensor_ipc.h"

QvStatus cli_error_name_input(const char *path, QvError *error) {
  bool is_stdin = strcmp(path, "-") == 0;
  const char *name = is_stdin ? "stdin" : path;
  size_t n = strlen(name);
  /* the library names inputs without a path generically: say which one */
  const char *m = error->message;
  size_t generic = strncmp(m, "<memory>: ", 10) == 0           ? 10
                   : is_stdin && strncmp(m, "<fd 0>: ", 8) == 0 ? 8
                                                                : 0;
  if (generic) memmove(error->message, m + generic, strlen(m + generic) + 1);
  if (strncmp(m, name, n) != 0 || m[n] != ':') qv_error_prefix(error, "%s", name);
  return error->code;
}

QvStatus cli_source_new(const char *path, QvSource **src, QvError *error) {
  return strcmp(path, "-") == 0 ? qv_source_new_fd(src, STDIN_FILENO, error)
                                : qv_source_new_path(src, path, error);
}

QvStatus cli_input_open(const char *path, QvCliInput *in, QvError *error) {
  memset(in, 0, sizeof *in);
  QvSource *src;
  QvStatus st = cli_source_new(path, &src, error);
  if (st) return cli_error_name_input(path, error);
  /* a regular file is mapped, a pipe read to its end: the library's one read-all */
  st = qv_source_read_all(src, 0, &in->data, &in->size, &in->owner, error);
  qv_source_free(src); /* in->owner keeps the bytes */
  if (st) return cli_error_name_input(path, error);
  return QV_OK;
}

void cli_input_free(QvCliInput *in) {
  qv_owner_free(in->owner);
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
