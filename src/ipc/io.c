#include "ipc/io.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct Mapping {
  void *addr;
  size_t size;
} Mapping;

static void unmap(void *p) {
  Mapping *m = p;
  if (m->size) munmap(m->addr, m->size);
  free(m);
}

QvStatus qv_io_map_file(const char *path, const uint8_t **data, size_t *size, QvOwner **owner,
                        QvError *error) {
  *data = NULL;
  *size = 0;
  *owner = NULL;
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return qv_error_set(error, QV_EIO, "%s: %s", path, strerror(errno));
  struct stat sb;
  if (fstat(fd, &sb) != 0) {
    int e = errno;
    close(fd);
    return qv_error_set(error, QV_EIO, "%s: %s", path, strerror(e));
  }
  if (!S_ISREG(sb.st_mode)) {
    close(fd);
    return qv_error_set(error, QV_EIO, "%s: not a regular file", path);
  }
  Mapping *m = calloc(1, sizeof *m);
  if (m == NULL) {
    close(fd);
    return qv_error_set(error, QV_ENOMEM, "out of memory");
  }
  m->size = (size_t)sb.st_size;
  if (m->size > 0) {
    m->addr = mmap(NULL, m->size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (m->addr == MAP_FAILED) {
      int e = errno;
      close(fd);
      free(m);
      return qv_error_set(error, QV_EIO, "%s: mmap failed: %s", path, strerror(e));
    }
  }
  close(fd);
  *owner = qv_owner_new(unmap, m);
  if (*owner == NULL) {
    unmap(m);
    return qv_error_set(error, QV_ENOMEM, "out of memory");
  }
  *data = m->addr;
  *size = m->size;
  return QV_OK;
}

QvStatus qv_io_write_all(int fd, const void *buf, size_t n, QvError *error) {
  const uint8_t *p = buf;
  while (n > 0) {
    /* Linux caps one write at about 2 GiB anyway. */
    size_t chunk = n < ((size_t)1 << 30) ? n : ((size_t)1 << 30);
    ssize_t k = write(fd, p, chunk);
    if (k < 0) {
      if (errno == EINTR) continue;
      return qv_error_set(error, QV_EIO, "write failed: %s", strerror(errno));
    }
    if (k == 0) return qv_error_set(error, QV_EIO, "write made no progress");
    p += k;
    n -= (size_t)k;
  }
  return QV_OK;
}
