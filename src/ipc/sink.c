/* Sinks: caller buffer, growing memory, fd, path (temporary file renamed
 * over the target), callback. */
/* realpath, copy_file_range, MADV_POPULATE_READ; fallocate and
   FALLOC_FL_KEEP_SIZE (Linux) */
#define _GNU_SOURCE

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "ipc/sink_internal.h"
#include "ipc/source_internal.h"
#include "util/copy.h"
#include "util/cpu.h"
#include "util/grow.h"

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22 /* Linux 5.14; older kernels answer EINVAL */
#endif

/* From this size on, bytes of a mapped input file are copied file to file
 * (below it the lookup and the extra call cost more than they save). */
#define COPY_RANGE_MIN ((size_t)1 << 20)
#define COPY_RANGE_PAGE 4096
/* A path sink to be fsynced starts the writeback of every this many bytes
 * (bench_npz: 120 MB written and fsynced on ext4 in 64 ms instead of 97). */
#define WRITEBACK_CHUNK ((size_t)8 << 20)
#ifndef TMPFS_MAGIC
#define TMPFS_MAGIC 0x01021994
#endif

typedef enum { SINK_BUFFER, SINK_MEMORY, SINK_FD, SINK_PATH, SINK_CALLBACK } SinkKind;

struct QvSink {
  SinkKind kind;
  int64_t written;
  bool finished;
  /* the first failure, returned again by every later call: a sink that
   * lost bytes must not go on as if it had not */
  QvError error;
  /* BUFFER, MEMORY */
  uint8_t *buf;
  size_t cap;
  /* FD, PATH */
  int fd;
  bool no_copy_range; /* copy_file_range refused once: write(2) from now on */
  int fs_kind;        /* 0 not asked yet, 1 tmpfs, 2 another file system */
  int64_t kicked;     /* PATH: writeback asked for up to here (kick_writeback) */
  /* PATH */
  char *target;
  char *tmp; /* NULL when writing in place (FIFO, device) */
  unsigned flags;
  /* CALLBACK */
  QvStatus (*write)(void *ctx, const void *data, size_t size, QvError *error);
  void *ctx;
};

/* write(2) until all n bytes are written (retrying EINTR). */
static QvStatus write_all(int fd, const void *data, size_t n, QvError *error) {
  const uint8_t *p = data;
  while (n > 0) {
    /* Linux caps one write at about 2 GiB anyway */
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

/* Bytes of a mapped input file (qvi_source_file_bytes) go file to file
 * with copy_file_range where the kernel does that at least as fast as
 * write(2) from the mapping, which must then be populated (measured by
 * bench/bench_npz, docs/benchmark-notes.md): on tmpfs always; on other
 * file systems (ext4: no reflink, a splice of page-cache pages) when the
 * source and destination offsets agree within a page, as a misaligned
 * splice writes every page in two pieces and takes twice as long. */
static bool on_tmpfs(QvSink *s) {
  if (s->fs_kind == 0) {
    struct statfs f;
    s->fs_kind = fstatfs(s->fd, &f) == 0 && f.f_type == TMPFS_MAGIC ? 1 : 2;
  }
  return s->fs_kind == 1;
}

static bool copy_range_pays(QvSink *s, int64_t src_off) {
  if (on_tmpfs(s)) return true;
  off_t here = lseek(s->fd, 0, SEEK_CUR);
  return here >= 0 && (src_off - (int64_t)here) % COPY_RANGE_PAGE == 0;
}

/* Up to n bytes from file `in` at *at to the sink's descriptor; how many
 * were copied (0: refused, or the file shrank: write(2) takes over and
 * says what is wrong). */
static size_t copy_range(QvSink *s, int in, loff_t *at, size_t n) {
  size_t done = 0;
  while (done < n) {
    ssize_t k = copy_file_range(in, at, s->fd, NULL, n - done, 0);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) break;
    done += (size_t)k;
  }
  return done;
}

/* Asks the kernel to start writing back bytes [s->kicked, end) of a path
 * sink that will be fsynced: the disk then works while the rest is
 * written, and the fsync at the end waits only for the tail. */
static void kick_writeback(QvSink *s, int64_t end) {
  if (end - s->kicked < (int64_t)WRITEBACK_CHUNK) return;
  if (sync_file_range(s->fd, s->kicked, end - s->kicked, SYNC_FILE_RANGE_WRITE) == 0)
    qvi_path_hit(QV_PATH_SINK_WRITEBACK); /* advice: on failure the fsync does it all */
  s->kicked = end;
}

/* n bytes to an fd or path sink: copied file to file where they are a
 * mapped input file's and that pays, else write(2) (from a mapping
 * populated first: one call instead of a fault per few pages); in pieces
 * of WRITEBACK_CHUNK when the file will be fsynced. */
static QvStatus write_fd(QvSink *s, const uint8_t *data, size_t n, QvError *error) {
  bool sync = s->kind == SINK_PATH && s->tmp != NULL && !(s->flags & QV_SINK_NO_FSYNC);
  int in = -1;
  int64_t off = 0;
  bool mapped = n >= COPY_RANGE_MIN && qvi_source_file_bytes(data, n, &in, &off);
  bool copy = mapped && !s->no_copy_range && copy_range_pays(s, off);
  if (mapped && !copy) {
    long page = sysconf(_SC_PAGESIZE);
    uintptr_t a = (uintptr_t)data, start = page > 0 ? a / (uintptr_t)page * (uintptr_t)page : a;
    madvise((void *)start, n + (a - start), MADV_POPULATE_READ); /* advice */
  }
  loff_t at = (loff_t)off;
  size_t done = 0;
  while (done < n) {
    size_t piece = sync && n - done > WRITEBACK_CHUNK ? WRITEBACK_CHUNK : n - done, got = 0;
    if (copy) {
      got = copy_range(s, in, &at, piece);
      if (got > 0) qvi_path_hit(QV_PATH_SINK_COPY_RANGE);
      if (got < piece) {
        copy = false;
        if (done + got == 0) s->no_copy_range = true; /* this descriptor refuses */
      }
    }
    if (got < piece) {
      QvStatus st = write_all(s->fd, data + done + got, piece - got, error);
      if (st) return st;
    }
    done += piece;
    if (sync) kick_writeback(s, s->written + (int64_t)done);
  }
  return QV_OK;
}

static QvStatus sink_alloc(QvSink **out, SinkKind kind, QvError *error) {
  if (out == NULL) return qv_error_set(error, QV_EARG, "NULL output");
  *out = calloc(1, sizeof **out);
  if (*out == NULL) return qv_error_set(error, QV_ENOMEM, "out of memory");
  (*out)->kind = kind;
  (*out)->fd = -1;
  return QV_OK;
}

QvStatus qv_sink_new_buffer(QvSink **out, void *dst, size_t capacity, QvError *error) {
  if (out) *out = NULL;
  if (dst == NULL && capacity > 0) return qv_error_set(error, QV_EARG, "NULL destination");
  QvStatus st = sink_alloc(out, SINK_BUFFER, error);
  if (st) return st;
  (*out)->buf = dst;
  (*out)->cap = capacity;
  return QV_OK;
}

QvStatus qv_sink_new_memory(QvSink **out, QvError *error) {
  if (out) *out = NULL;
  return sink_alloc(out, SINK_MEMORY, error);
}

QvStatus qv_sink_new_fd(QvSink **out, int fd, QvError *error) {
  if (out) *out = NULL;
  if (fd < 0) return qv_error_set(error, QV_EARG, "invalid file descriptor %d", fd);
  QvStatus st = sink_alloc(out, SINK_FD, error);
  if (st) return st;
  (*out)->fd = fd;
  return QV_OK;
}

QvStatus qv_sink_new_callback(QvSink **out,
                              QvStatus (*write)(void *ctx, const void *data, size_t size,
                                                QvError *error),
                              void *ctx, QvError *error) {
  if (out) *out = NULL;
  if (write == NULL) return qv_error_set(error, QV_EARG, "NULL write callback");
  QvStatus st = sink_alloc(out, SINK_CALLBACK, error);
  if (st) return st;
  (*out)->write = write;
  (*out)->ctx = ctx;
  return QV_OK;
}

/* ---- path sink */

/* Creates "<dir>/.<name>.<12 random hex>.tmp" with O_EXCL; the random part
 * makes the name unpredictable, O_EXCL makes a planted file or symlink fail
 * the open instead of being written through. */
static QvStatus create_temp(QvSink *s, QvError *error) {
  const char *slash = strrchr(s->target, '/');
  size_t dir_len = slash ? (size_t)(slash - s->target) + 1 : 0;
  const char *base = s->target + dir_len;
  size_t n = dir_len + 1 + strlen(base) + 1 + 12 + 4 + 1;
  s->tmp = malloc(n);
  if (s->tmp == NULL) return qv_error_set(error, QV_ENOMEM, "out of memory");
  for (int attempt = 0; attempt < 100; attempt++) {
    unsigned char rnd[6];
    if (getrandom(rnd, sizeof rnd, 0) != (ssize_t)sizeof rnd) {
      /* no entropy syscall: the time and pid still vary the name, and
       * O_EXCL keeps it safe */
      unsigned long long t = (unsigned long long)getpid() * 2654435761u + (unsigned)attempt;
      for (size_t i = 0; i < sizeof rnd; i++) rnd[i] = (unsigned char)(t >> (8 * i));
    }
    snprintf(s->tmp, n, "%.*s.%s.%02x%02x%02x%02x%02x%02x.tmp", (int)dir_len, s->target, base,
             rnd[0], rnd[1], rnd[2], rnd[3], rnd[4], rnd[5]);
    /* 0666: the kernel applies the umask, as for any new file */
    s->fd = open(s->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (s->fd >= 0) return QV_OK;
    if (errno != EEXIST) break;
  }
  QvStatus st = qv_error_set(error, QV_EIO, "%s: cannot create a temporary file next to it: %s",
                             s->target, strerror(errno));
  free(s->tmp);
  s->tmp = NULL;
  return st;
}

QvStatus qv_sink_new_path(QvSink **out, const char *path, unsigned flags, QvError *error) {
  if (out) *out = NULL;
  if (path == NULL || path[0] == '\0') return qv_error_set(error, QV_EARG, "NULL or empty path");
  if (flags & ~QV_SINK_NO_FSYNC) return qv_error_set(error, QV_EARG, "unknown sink flags %#x", flags);
  QvSink *s;
  QvStatus st = sink_alloc(&s, SINK_PATH, error);
  if (st) return st;
  s->flags = flags;
  /* writing through a symlink replaces the file it points to, not the link */
  struct stat lsb, sb;
  bool exists = stat(path, &sb) == 0;
  if (exists && lstat(path, &lsb) == 0 && S_ISLNK(lsb.st_mode))
    s->target = realpath(path, NULL);
  else
    s->target = strdup(path);
  if (s->target == NULL) {
    free(s);
    return qv_error_set(error, QV_ENOMEM, "out of memory");
  }
  if (exists && S_ISDIR(sb.st_mode)) {
    st = qv_error_set(error, QV_EIO, "%s: is a directory", path);
  } else if (exists && !S_ISREG(sb.st_mode)) {
    /* a FIFO or device cannot be replaced by a rename: write into it */
    s->fd = open(s->target, O_WRONLY | O_CLOEXEC);
    if (s->fd < 0) st = qv_error_set(error, QV_EIO, "%s: %s", path, strerror(errno));
  } else {
    st = create_temp(s, error);
    if (st == QV_OK && exists) {
      /* the replacement keeps the target's owner where this process may
       * give it (root, or the owner itself: otherwise the call fails and
       * the file belongs to whoever wrote it, as any new file does) */
      int ignored = fchown(s->fd, sb.st_uid, sb.st_gid);
      (void)ignored;
      if (fchmod(s->fd, sb.st_mode & 07777) != 0)
        st = qv_error_set(error, QV_EIO,
                          "%s: cannot give the temporary file the target's mode: %s", path,
                          strerror(errno));
    }
  }
  if (st) {
    qv_sink_free(s);
    return st;
  }
  *out = s;
  return QV_OK;
}

/* Closes the descriptor and, for a path sink not committed, removes the
 * temporary file. */
static void discard(QvSink *s) {
  if (s->fd >= 0 && (s->kind == SINK_PATH)) close(s->fd);
  if (s->kind == SINK_PATH) s->fd = -1;
  if (s->tmp) {
    unlink(s->tmp);
    free(s->tmp);
    s->tmp = NULL;
  }
}

/* Records the first failure (sticky) and returns it. */
static QvStatus fail(QvSink *s, QvStatus st, const QvError *what, QvError *error) {
  s->error = *what;
  s->error.code = st;
  if (s->kind == SINK_PATH) {
    discard(s);
    if (s->target) qv_error_prefix(&s->error, "%s", s->target);
  }
  if (error) *error = s->error;
  return st;
}

static QvStatus commit_path(QvSink *s, QvError *error) {
  bool sync = !(s->flags & QV_SINK_NO_FSYNC);
  if (s->tmp == NULL) {
    /* in place: nothing to rename */
    int rc = close(s->fd);
    s->fd = -1;
    if (rc != 0) return qv_error_set(error, QV_EIO, "close failed: %s", strerror(errno));
    return QV_OK;
  }
  if (sync && fsync(s->fd) != 0) return qv_error_set(error, QV_EIO, "fsync failed: %s", strerror(errno));
  int rc = close(s->fd);
  s->fd = -1;
  if (rc != 0) return qv_error_set(error, QV_EIO, "close failed: %s", strerror(errno));
  if (rename(s->tmp, s->target) != 0)
    return qv_error_set(error, QV_EIO, "renaming %s over it failed: %s", s->tmp, strerror(errno));
  free(s->tmp);
  s->tmp = NULL;
  if (sync) {
    /* the rename is durable only once the directory is */
    const char *slash = strrchr(s->target, '/');
    char *dir = slash ? strndup(s->target, slash == s->target ? 1 : (size_t)(slash - s->target))
                      : strdup(".");
    if (dir == NULL) return qv_error_set(error, QV_ENOMEM, "out of memory");
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    free(dir);
    if (dfd < 0 || fsync(dfd) != 0) {
      int e = errno;
      if (dfd >= 0) close(dfd);
      /* the new file is in place; only its durability is unknown */
      return qv_error_set(error, QV_EIO, "fsync of the directory failed: %s", strerror(e));
    }
    close(dfd);
  }
  return QV_OK;
}

/* ---- writing */

/* Writes of at least this much into a path sink's file are preallocated. */
#define PREALLOCATE_MIN ((size_t)1 << 20)

/* Allocates the blocks of a large write before it, as numpy's tofile does:
 * on ext4 (delayed allocation) a 1 GiB write otherwise reserves its space a
 * page at a time, about a third more time in the kernel. KEEP_SIZE: the
 * file's size still grows only with what is written. A filesystem without
 * fallocate, or a failure (ENOSPC), is left to the write itself to report.
 * Not on tmpfs: there fallocate allocates and zeroes every page the write
 * then fills again (a third of from-npz's time into /dev/shm, strace -c). */
static void preallocate(QvSink *s, size_t size) {
#if defined(FALLOC_FL_KEEP_SIZE)
  if (s->tmp == NULL || size < PREALLOCATE_MIN || size > (size_t)INT64_MAX) return;
  if (on_tmpfs(s)) {
    qvi_path_hit(QV_PATH_SINK_TMPFS_UNALLOCATED);
    return;
  }
  if (fallocate(s->fd, FALLOC_FL_KEEP_SIZE, (off_t)s->written, (off_t)size) == 0)
    qvi_path_hit(QV_PATH_SINK_PREALLOCATED);
#else
  (void)s;
  (void)size;
#endif
}

static QvStatus grow(QvSink *s, size_t need, QvError *error) {
  size_t cap = qvi_grow_capacity(s->cap, need, 4096, 1);
  uint8_t *p = qv_aligned_alloc(cap);
  if (p == NULL) return qv_error_set(error, QV_ENOMEM, "out of memory growing a sink to %zu bytes", cap);
  if (s->written) memcpy(p, s->buf, (size_t)s->written);
  qv_free(s->buf);
  s->buf = p;
  s->cap = cap;
  return QV_OK;
}

/* The checks every write makes: sticky failure, finished, overflow. */
static QvStatus check_write(QvSink *s, size_t size, QvError *error) {
  if (s == NULL) return qv_error_set(error, QV_EARG, "NULL sink");
  if (s->error.code) {
    if (error) *error = s->error;
    return s->error.code;
  }
  if (s->finished) return qv_error_set(error, QV_EARG, "write to a finished sink");
  if (size > (size_t)INT64_MAX - (size_t)s->written) {
    QvError e;
    return fail(s, qv_error_set(&e, QV_ELIMIT, "sink of %lld bytes overflows int64",
                                (long long)s->written), &e, error);
  }
  return QV_OK;
}

/* Buffer and memory sinks: room for `size` more bytes, or a failure. */
static QvStatus make_room(QvSink *s, size_t size, QvError *e) {
  size_t at = (size_t)s->written;
  if (size <= s->cap - at) return QV_OK;
  if (s->kind == SINK_MEMORY) return grow(s, at + size, e);
  return qv_error_set(e, QV_ELIMIT, "buffer sink: %zu bytes at offset %zu exceed the capacity of %zu",
                      size, at, s->cap);
}

QvStatus qv_sink_write(QvSink *s, const void *data, size_t size, QvError *error) {
  QvStatus st = check_write(s, size, error);
  if (st || size == 0) return st;
  if (data == NULL) return qv_error_set(error, QV_EARG, "NULL data");
  QvError e;
  switch (s->kind) {
    case SINK_BUFFER:
    case SINK_MEMORY:
      st = make_room(s, size, &e);
      if (st == QV_OK) {
        uintptr_t src = (uintptr_t)data, buf = (uintptr_t)s->buf;
        /* from the sink's own free space (qvi_sink_window): the ranges may
         * overlap, the destination first */
        if (src >= buf && src - buf < s->cap)
          qvi_move_down_large(s->buf + s->written, data, size);
        else
          qvi_copy_large(s->buf + s->written, data, size);
      }
      break;
    case SINK_FD: st = write_fd(s, data, size, &e); break;
    case SINK_PATH:
      preallocate(s, size);
      st = write_fd(s, data, size, &e);
      break;
    case SINK_CALLBACK:
      qv_error_clear(&e);
      st = s->write(s->ctx, data, size, &e);
      if (st && e.code == QV_OK) qv_error_set(&e, st, "sink callback failed");
      break;
  }
  if (st) return fail(s, st, &e, error);
  s->written += (int64_t)size;
  return QV_OK;
}

QvStatus qvi_sink_reserve(QvSink *s, size_t n, uint8_t **ptr, QvError *error) {
  *ptr = NULL;
  QvStatus st = check_write(s, n, error);
  if (st || (s->kind != SINK_BUFFER && s->kind != SINK_MEMORY)) return st;
  QvError e;
  if ((st = make_room(s, n, &e))) return fail(s, st, &e, error);
  *ptr = s->buf + s->written;
  s->written += (int64_t)n;
  return QV_OK;
}

uint8_t *qvi_sink_window(QvSink *s, size_t need, bool may_grow) {
  if (qvi_sink_room(s) == 0) return NULL;
  size_t at = (size_t)s->written;
  if (need > s->cap - at) {
    QvError e;
    if (s->kind != SINK_MEMORY || !may_grow || need > (size_t)INT64_MAX - at ||
        grow(s, at + need, &e) != QV_OK)
      return NULL;
  }
  return s->buf + at;
}

size_t qvi_sink_room(const QvSink *s) {
  if (s == NULL || s->error.code || s->finished) return 0;
  if (s->kind == SINK_MEMORY) return SIZE_MAX;
  if (s->kind == SINK_BUFFER) return s->cap - (size_t)s->written;
  return 0;
}

void qvi_sink_unreserve(QvSink *s, size_t n) {
  if (s && (s->kind == SINK_BUFFER || s->kind == SINK_MEMORY) && n <= (size_t)s->written)
    s->written -= (int64_t)n;
}

int64_t qv_sink_bytes_written(const QvSink *s) { return s ? s->written : 0; }

QvStatus qv_sink_finish(QvSink *s, QvError *error) {
  if (s == NULL) return qv_error_set(error, QV_EARG, "NULL sink");
  if (s->error.code) {
    if (error) *error = s->error;
    return s->error.code;
  }
  if (s->finished) return QV_OK;
  if (s->kind == SINK_PATH) {
    QvError e;
    QvStatus st = commit_path(s, &e);
    if (st) return fail(s, st, &e, error);
  }
  s->finished = true;
  return QV_OK;
}

QvStatus qv_sink_memory_take(QvSink *s, uint8_t **data, size_t *size, QvError *error) {
  if (data) *data = NULL;
  if (size) *size = 0;
  if (s == NULL || data == NULL || size == NULL) return qv_error_set(error, QV_EARG, "NULL argument");
  if (s->kind != SINK_MEMORY) return qv_error_set(error, QV_EARG, "not a memory sink");
  if (s->error.code) {
    if (error) *error = s->error;
    return s->error.code;
  }
  *data = s->written ? s->buf : NULL;
  *size = (size_t)s->written;
  if (s->written == 0) qv_free(s->buf);
  s->buf = NULL;
  s->cap = 0;
  s->written = 0;
  return QV_OK;
}

void qv_sink_free(QvSink *s) {
  if (s == NULL) return;
  if (s->kind == SINK_MEMORY) qv_free(s->buf);
  if (s->kind == SINK_PATH) discard(s);
  free(s->target);
  free(s);
}
