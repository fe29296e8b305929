/* quiver tensor from-npy / to-npy: NumPy .npy <-> Arrow Tensor messages. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "quiver/npy.h"
#include "quiver/tensor_ipc.h"

static int usage(FILE *f) {
  fprintf(f,
          "usage: quiver tensor from-npy IN.npy OUT.arrow\n"
          "       quiver tensor to-npy IN.arrow OUT.npy [--index N]\n"
          "  IN may be '-' for stdin, OUT '-' for stdout. --index N picks message N\n"
          "  (0-based) of a file holding several; it must be a Tensor.\n");
  return 2;
}

/* Regular-file outputs are written to a temporary file next to OUT and
 * renamed over it: the input may be a memory-mapped view of OUT itself
 * (`to-npy x x`), which truncating in place would pull from under us, and
 * a failed write leaves no partial file. */
static QvStatus write_tensor(const QvTensor *t, const char *out, bool npy, QvError *err) {
  if (strcmp(out, "-") == 0) return npy ? qv_npy_write_fd(t, STDOUT_FILENO, err)
                                        : qv_tensor_write_fd(t, STDOUT_FILENO, err);
  struct stat sb;
  if (stat(out, &sb) == 0 && !S_ISREG(sb.st_mode))
    return npy ? qv_npy_write_path(t, out, err) : qv_tensor_write_path(t, out, err);
  size_t n = strlen(out);
  /* OUT.tmp + mkstemp's six template characters + NUL */
  char *tmp = malloc(n + 4 + 6 + 1);
  if (tmp == NULL) return qv_error_set(err, QV_ENOMEM, "out of memory");
  memcpy(tmp, out, n);
  memcpy(tmp + n, ".tmp", 4);
  memset(tmp + n + 4, 'X', 6);
  tmp[n + 10] = '\0';
  int fd = mkstemp(tmp);
  if (fd < 0) {
    QvStatus st = qv_error_set(err, QV_EIO, "%s: cannot create a temporary file: %s", out,
                               strerror(errno));
    free(tmp);
    return st;
  }
  mode_t mask = umask(0);
  umask(mask);
  QvStatus st = QV_OK;
  if (fchmod(fd, 0666 & ~mask) != 0)
    st = qv_error_set(err, QV_EIO, "%s: %s", tmp, strerror(errno));
  if (st == QV_OK) st = npy ? qv_npy_write_fd(t, fd, err) : qv_tensor_write_fd(t, fd, err);
  if (close(fd) != 0 && st == QV_OK)
    st = qv_error_set(err, QV_EIO, "%s: close failed: %s", tmp, strerror(errno));
  if (st == QV_OK && rename(tmp, out) != 0)
    st = qv_error_set(err, QV_EIO, "%s: %s", out, strerror(errno));
  if (st) {
    unlink(tmp);
    qv_error_prefix(err, "%s", out);
  }
  free(tmp);
  return st;
}

static int from_npy(const char *in, const char *out) {
  QvError err;
  qv_error_clear(&err);
  QvTensor t;
  QvStatus st;
  QvCliInput input = {0};
  if (strcmp(in, "-") == 0) {
    st = qv_cli_input_open(in, &input, &err);
    if (st == QV_OK) st = qv_npy_read_memory(input.data, input.size, NULL, &t, NULL, &err);
  } else {
    st = qv_npy_read_path(in, &t, &err);
  }
  if (st == QV_OK) {
    st = write_tensor(&t, out, false, &err);
    qv_tensor_release(&t);
  }
  qv_cli_input_free(&input);
  return st ? qv_cli_fail("tensor from-npy", &err) : 0;
}

static int to_npy(const char *in, const char *out, int64_t index) {
  QvError err;
  qv_error_clear(&err);
  QvTensor t;
  QvStatus st = strcmp(in, "-") == 0 ? qv_tensor_read_fd(STDIN_FILENO, index, &t, &err)
                                     : qv_tensor_read_path(in, index, &t, &err);
  if (st == QV_OK) {
    st = write_tensor(&t, out, true, &err);
    qv_tensor_release(&t);
  }
  return st ? qv_cli_fail("tensor to-npy", &err) : 0;
}

static bool parse_index(const char *s, int64_t *out) {
  if (s == NULL || *s < '0' || *s > '9') return false;
  errno = 0;
  char *end;
  long long v = strtoll(s, &end, 10);
  if (errno != 0 || *end != '\0' || v < 0) return false;
  *out = v;
  return true;
}

int qv_cmd_tensor(int argc, char **argv) {
  if (argc < 1) return usage(stderr);
  if (strcmp(argv[0], "-h") == 0 || strcmp(argv[0], "--help") == 0) {
    usage(stdout);
    return 0;
  }
  const char *pos[2];
  int npos = 0;
  int64_t index = 0;
  bool has_index = false;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--index") == 0) {
      if (i + 1 >= argc || !parse_index(argv[i + 1], &index)) {
        fprintf(stderr, "quiver tensor: --index needs a non-negative integer\n");
        return 2;
      }
      has_index = true;
      i++;
    } else if (argv[i][0] == '-' && argv[i][1] != '\0') {
      fprintf(stderr, "quiver tensor: unknown option '%s'\n", argv[i]);
      return usage(stderr);
    } else if (npos < 2) {
      pos[npos++] = argv[i];
    } else {
      return usage(stderr);
    }
  }
  if (npos != 2) return usage(stderr);
  if (strcmp(argv[0], "from-npy") == 0) {
    if (has_index) {
      fprintf(stderr, "quiver tensor from-npy: --index applies to to-npy only\n");
      return 2;
    }
    return from_npy(pos[0], pos[1]);
  }
  if (strcmp(argv[0], "to-npy") == 0) return to_npy(pos[0], pos[1], index);
  fprintf(stderr, "quiver tensor: unknown subcommand '%s'\n", argv[0]);
  return usage(stderr);
}
