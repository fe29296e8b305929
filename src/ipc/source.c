/* Sources: caller memory, a path (mapped when regular), a descriptor. */
#define _GNU_SOURCE /* madvise and its MADV_* values; F_GETPIPE_SZ, F_SETPIPE_SZ */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ipc/source_internal.h"
#include "util/cpu.h"

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22 /* Linux 5.14; older kernels answer EINVAL */
#endif

#define PEEK_MAX 16

struct View {
  QvOwner *owner;
  const uint8_t *data;
  bool mapped; /* a mapping of the file (not a copy read into memory) */
};

struct QvSource {
  atomic_long refs;
  QvSourceKind kind;
  char *name;
  /* MEMORY: the caller's bytes */
  const uint8_t *data;
  /* FILE: the whole-file mapping, made on first use */
  _Atomic(struct View *) view;
  int64_t size; /* MEMORY, FILE, seekable STREAM */
  QvOwner *owner; /* MEMORY: the caller's owner */
  /* FILE, STREAM */
  int fd;
  bool owns_fd;
  bool seekable;
  int64_t base; /* file offset where the input starts */
  /* FILE: how the whole-file view is made (QvSourceAdvice) */
  atomic_int advice;
  /* callback sources (STREAM kind, fd -1): the caller's functions, one
   * call at a time under `lock` */
  QvSourceReadFn read_fn;
  QvSourceSeekFn seek_fn;
  void (*release_fn)(void *ctx);
  void *ctx;
  pthread_mutex_t lock;
  /* sequential reading */
  int64_t pos;
  uint8_t peeked[PEEK_MAX];
  size_t n_peeked;
};

static atomic_llong g_view_maps, g_range_maps, g_populates;

static atomic_size_t g_short_reads; /* qvi_source_test_short_reads */
static atomic_uint g_short_seq;

void qvi_source_test_short_reads(size_t max) { atomic_store(&g_short_reads, max); }

/* What one read(2)/pread(2) asks for of the n wanted. */
static size_t io_ask(size_t n) {
  size_t max = atomic_load_explicit(&g_short_reads, memory_order_relaxed);
  if (max == 0 || n <= 1) return n;
  size_t k = 1 + (size_t)(atomic_fetch_add_explicit(&g_short_seq, 7919, memory_order_relaxed) % max);
  return k < n ? k : n;
}

int64_t qvi_source_count_view_maps(void) { return (int64_t)atomic_load(&g_view_maps); }
int64_t qvi_source_count_range_maps(void) { return (int64_t)atomic_load(&g_range_maps); }
int64_t qvi_source_count_populates(void) { return (int64_t)atomic_load(&g_populates); }

static QvStatus source_alloc(QvSource **out, QvSourceKind kind, const char *name,
                             QvError *error) {
  QvSource *s = calloc(1, sizeof *s);
  if (s != NULL) s->name = strdup(name);
  if (s == NULL || s->name == NULL) {
    free(s);
    return qv_error_set(error, QV_ENOMEM, "out of memory");
  }
  atomic_init(&s->refs, 1);
  atomic_init(&s->view, NULL);
  atomic_init(&s->advice, QV_SOURCE_ADVICE_DEFAULT);
  s->kind = kind;
  s->fd = -1;
  *out = s;
  return QV_OK;
}

QvStatus qv_source_new_memory(QvSource **out, const void *data, size_t size, QvOwner *owner,
                              QvError *error) {
  if (out == NULL) return qv_error_set(error, QV_EARG, "NULL output");
  *out = NULL;
  if (data == NULL && size > 0) return qv_error_set(error, QV_EARG, "NULL data");
  if (size > INT64_MAX) return qv_error_set(error, QV_ELIMIT, "input of %zu bytes is too large", size);
  QvSource *s;
  QvStatus st = source_alloc(&s, QV_SOURCE_MEMORY, "<memory>", error);
  if (st) return st;
  s->data = data;
  s->size = (int64_t)size;
  s->seekable = true;
  qv_owner_retain(owner);
  s->owner = owner;
  *out = s;
  return QV_OK;
}

/* The size a pipe is raised to: /proc/sys/fs/pipe-max-size (what an
 * unprivileged process may ask for), read once; 0 until then. */
static atomic_size_t g_pipe_target;
static atomic_size_t g_pipe_target_test; /* qvi_source_test_pipe_target */

void qvi_source_test_pipe_target(size_t bytes) { atomic_store(&g_pipe_target_test, bytes); }

static size_t pipe_target(void) {
  size_t t = atomic_load(&g_pipe_target_test);
  if (t) return t;
  t = atomic_load(&g_pipe_target);
  if (t) return t;
  t = (size_t)1 << 20; /* the kernel's default maximum */
  FILE *f = fopen("/proc/sys/fs/pipe-max-size", "re");
  if (f != NULL) {
    unsigned long v;
    if (fscanf(f, "%lu", &v) == 1 && v > 0) t = (size_t)v;
    fclose(f);
  }
  atomic_store(&g_pipe_target, t);
  return t;
}

/* A pipe holds 64 KiB by default, so a writer and this reader take turns
 * every 64 KiB (bench_readahead: 17x the context switches of a 1 MiB pipe,
 * up to 2.2x its time when both share a core): raise it to the most an
 * unprivileged process may ask for. Never shrinks
 * it; any refusal (EPERM past the user's pipe-user-pages limits, EBUSY,
 * EINVAL, ENOMEM) keeps the old size, as reading works either way. */
static void enlarge_pipe(int fd) {
#ifdef F_SETPIPE_SZ
  struct stat sb;
  if (fstat(fd, &sb) != 0 || !S_ISFIFO(sb.st_mode)) return;
  int now = fcntl(fd, F_GETPIPE_SZ);
  size_t want = pipe_target();
  if (now < 0 || want > INT32_MAX || (size_t)now >= want) return;
  if (fcntl(fd, F_SETPIPE_SZ, (int)want) >= 0) qvi_path_hit(QV_PATH_SOURCE_PIPE_ENLARGED);
#else
  (void)fd;
#endif
}

/* A descriptor on a regular file whose position is known can be read with
 * pread relative to that position. */
static void probe_seekable(QvSource *s) {
  struct stat sb;
  if (fstat(s->fd, &sb) != 0 || !S_ISREG(sb.st_mode)) return;
  off_t here = lseek(s->fd, 0, SEEK_CUR);
  if (here < 0) return;
  s->seekable = true;
  s->base = (int64_t)here;
  s->size = (int64_t)sb.st_size > s->base ? (int64_t)sb.st_size - s->base : 0;
}

QvStatus qv_source_new_path(QvSource **out, const char *path, QvError *error) {
  if (out == NULL) return qv_error_set(error, QV_EARG, "NULL output");
  *out = NULL;
  if (path == NULL) return qv_error_set(error, QV_EARG, "NULL path");
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return qv_error_set(error, QV_EIO, "%s: %s", path, strerror(errno));
  struct stat sb;
  if (fstat(fd, &sb) != 0) {
    int e = errno;
    close(fd);
    return qv_error_set(error, QV_EIO, "%s: %s", path, strerror(e));
  }
  if (S_ISDIR(sb.st_mode)) {
    close(fd);
    return qv_error_set(error, QV_EIO, "%s: is a directory, not a file", path);
  }
  QvSource *s;
  QvStatus st = source_alloc(&s, S_ISREG(sb.st_mode) ? QV_SOURCE_FILE : QV_SOURCE_STREAM, path,
                             error);
  if (st) {
    close(fd);
    return st;
  }
  s->fd = fd;
  s->owns_fd = true;
  if (s->kind == QV_SOURCE_FILE) {
    s->seekable = true;
    s->size = (int64_t)sb.st_size;
  } else {
    enlarge_pipe(fd); /* a FIFO; /dev/stdin on a pipe */
  }
  *out = s;
  return QV_OK;
}

QvStatus qv_source_new_fd(QvSource **out, int fd, QvError *error) {
  if (out == NULL) return qv_error_set(error, QV_EARG, "NULL output");
  *out = NULL;
  if (fd < 0) return qv_error_set(error, QV_EARG, "invalid file descriptor %d", fd);
  char name[32];
  snprintf(name, sizeof name, "<fd %d>", fd);
  QvSource *s;
  QvStatus st = source_alloc(&s, QV_SOURCE_STREAM, name, error);
  if (st) return st;
  s->fd = fd;
  probe_seekable(s);
  if (!s->seekable) enlarge_pipe(fd);
  *out = s;
  return QV_OK;
}

QvStatus qv_source_new_callback(QvSource **out, QvSourceReadFn read_fn, QvSourceSeekFn seek_fn,
                                void (*release_fn)(void *ctx), void *ctx, const char *name,
                                QvError *error) {
  QvStatus st;
  if (out == NULL) {
    st = qv_error_set(error, QV_EARG, "NULL output");
    goto fail;
  }
  *out = NULL;
  if (read_fn == NULL) {
    st = qv_error_set(error, QV_EARG, "a callback source needs a read function");
    goto fail;
  }
  QvSource *s;
  st = source_alloc(&s, QV_SOURCE_STREAM, name ? name : "<callback>", error);
  if (st) goto fail;
  if (pthread_mutex_init(&s->lock, NULL) != 0) {
    free(s->name);
    free(s);
    st = qv_error_set(error, QV_ENOMEM, "out of resources for a source lock");
    goto fail;
  }
  s->read_fn = read_fn;
  s->seek_fn = seek_fn;
  s->release_fn = release_fn;
  s->ctx = ctx;
  if (seek_fn != NULL) {
    /* As probe_seekable: the input starts at the current position. */
    int64_t here, end, back;
    st = seek_fn(ctx, 0, SEEK_CUR, &here, error);
    if (!st) st = seek_fn(ctx, 0, SEEK_END, &end, error);
    if (!st) st = seek_fn(ctx, here, SEEK_SET, &back, error);
    if (!st && (here < 0 || end < 0 || back != here))
      st = qv_error_set(error, QV_EIO, "%s: the seek callback reported positions %lld, %lld, %lld",
                        s->name, (long long)here, (long long)end, (long long)back);
    if (st) {
      qv_source_free(s); /* calls release */
      return st;
    }
    s->seekable = true;
    s->base = here;
    s->size = end > here ? end - here : 0;
  }
  *out = s;
  return QV_OK;
fail:
  if (release_fn) release_fn(ctx);
  return st;
}

void qv_source_retain(QvSource *s) {
  if (s) atomic_fetch_add_explicit(&s->refs, 1, memory_order_relaxed);
}

void qv_source_free(QvSource *s) {
  if (s == NULL) return;
  if (atomic_fetch_sub_explicit(&s->refs, 1, memory_order_acq_rel) != 1) return;
  struct View *v = atomic_load(&s->view);
  if (v) {
    qv_owner_free(v->owner);
    free(v);
  }
  qv_owner_free(s->owner);
  if (s->owns_fd) close(s->fd);
  if (s->read_fn) {
    if (s->release_fn) s->release_fn(s->ctx);
    pthread_mutex_destroy(&s->lock);
  }
  free(s->name);
  free(s);
}

const char *qv_source_name(const QvSource *s) { return s ? s->name : "<null source>"; }
bool qv_source_has_view(const QvSource *s) { return s != NULL && s->kind != QV_SOURCE_STREAM; }

QvSourceKind qv_source_kind(const QvSource *s) { return s ? s->kind : QV_SOURCE_STREAM; }
bool qvi_source_seekable(const QvSource *s) { return s->seekable; }
int64_t qv_source_size(const QvSource *s) { return s && s->seekable ? s->size : -1; }
bool qv_source_is_mapped(const QvSource *s) {
  return s != NULL && (s->kind == QV_SOURCE_MEMORY || atomic_load(&s->view) != NULL);
}

/* ---- mappings */

typedef struct Mapping {
  void *addr;
  size_t len;
  /* a whole-file view in the registry below: its own descriptor on the
   * file (-1: not registered) and the file offset at addr */
  int fd;
  int64_t offset;
  struct Mapping *next;
} Mapping;

/* Whole-file views still mapped, so that a sink handed bytes of one can copy
 * them file to file (qvi_source_file_bytes). Each holds a duplicate of the
 * source's descriptor: the view may outlive the source. */
static pthread_mutex_t g_files_lock = PTHREAD_MUTEX_INITIALIZER;
static Mapping *g_files;

static void register_file(Mapping *m, int fd, int64_t offset) {
  m->fd = m->len ? fcntl(fd, F_DUPFD_CLOEXEC, 0) : -1;
  if (m->fd < 0) return; /* no descriptor to spare: sinks write from the mapping */
  m->offset = offset;
  pthread_mutex_lock(&g_files_lock);
  m->next = g_files;
  g_files = m;
  pthread_mutex_unlock(&g_files_lock);
}

bool qvi_source_file_bytes(const void *p, size_t n, int *fd, int64_t *offset) {
  uintptr_t a = (uintptr_t)p;
  bool found = false;
  pthread_mutex_lock(&g_files_lock);
  for (Mapping *m = g_files; m && !found; m = m->next) {
    uintptr_t start = (uintptr_t)m->addr;
    if (a >= start && a - start <= m->len && n <= m->len - (a - start)) {
      *fd = m->fd;
      *offset = m->offset + (int64_t)(a - start);
      found = true;
    }
  }
  pthread_mutex_unlock(&g_files_lock);
  return found;
}

static void unmap(void *p) {
  Mapping *m = p;
  if (m->fd >= 0) {
    pthread_mutex_lock(&g_files_lock);
    Mapping **at = &g_files;
    while (*at != m) at = &(*at)->next;
    *at = m->next;
    pthread_mutex_unlock(&g_files_lock);
    close(m->fd);
  }
  if (m->len) munmap(m->addr, m->len);
  free(m);
}

/* Maps file bytes [start, start + len) (start page-aligned) read-only. */
static QvStatus map_pages(QvSource *s, int64_t start, size_t len, Mapping **out, QvOwner **owner,
                          QvError *error) {
  Mapping *m = calloc(1, sizeof *m);
  if (m == NULL) return qv_error_set(error, QV_ENOMEM, "out of memory");
  m->len = len;
  m->fd = -1;
  if (len > 0) {
    m->addr = mmap(NULL, len, PROT_READ, MAP_PRIVATE, s->fd, (off_t)start);
    if (m->addr == MAP_FAILED) {
      int e = errno;
      free(m);
      return qv_error_set(error, QV_EIO, "%s: mmap failed: %s", s->name, strerror(e));
    }
  }
  *owner = qv_owner_new(unmap, m);
  if (*owner == NULL) {
    unmap(m);
    return qv_error_set(error, QV_ENOMEM, "out of memory");
  }
  *out = m;
  return QV_OK;
}

/* ---- how a whole-file view is made */

void qv_source_set_advice(QvSource *s, QvSourceAdvice advice) {
  /* advice: an unknown value changes nothing */
  if (s != NULL && advice >= QV_SOURCE_ADVICE_DEFAULT && advice <= QV_SOURCE_ADVICE_READ)
    atomic_store(&s->advice, (int)advice);
}

QvSourceAdvice qv_source_get_advice(const QvSource *s) {
  if (s == NULL) return QV_SOURCE_ADVICE_DEFAULT;
  return (QvSourceAdvice)atomic_load(&((QvSource *)(uintptr_t)s)->advice);
}

void qv_source_expect_full_read(QvSource *s) {
  int unset = QV_SOURCE_ADVICE_DEFAULT;
  if (s != NULL && s->kind == QV_SOURCE_FILE)
    atomic_compare_exchange_strong(&s->advice, &unset, (int)QV_SOURCE_FULL_READ_ADVICE);
}

/* MADV_POPULATE_READ until a kernel says it does not know it. */
static atomic_int g_populate_unknown;

bool qvi_source_populate_supported(void) { return !atomic_load(&g_populate_unknown); }

/* Applies an madvise hint to a fresh whole-file mapping. Hints are advisory:
 * a failure leaves the mapping as it is (pages then fault in on first use,
 * as without a hint). */
static void advise(void *addr, size_t len, int advice) {
  if (len == 0) return;
  switch (advice) {
    case QV_SOURCE_ADVICE_SEQUENTIAL: madvise(addr, len, MADV_SEQUENTIAL); break;
    case QV_SOURCE_ADVICE_WILLNEED: madvise(addr, len, MADV_WILLNEED); break;
    case QV_SOURCE_ADVICE_POPULATE:
      if (!atomic_load(&g_populate_unknown)) {
        if (madvise(addr, len, MADV_POPULATE_READ) == 0) break;
        if (errno != EINVAL) break; /* e.g. the file shrank: its pages fault (or not) on use */
        atomic_store(&g_populate_unknown, 1);
      }
      madvise(addr, len, MADV_WILLNEED); /* what older kernels offer */
      break;
    default: break;
  }
}

/* The whole file read with pread into fresh anonymous memory (2 MiB
 * aligned and advised to use huge pages, so that it faults in a page per
 * 2 MiB): a copy, not a view of the page cache. */
static QvStatus read_whole(QvSource *s, Mapping **out, QvOwner **owner, QvError *error) {
  size_t len = (size_t)s->size;
  Mapping *m = calloc(1, sizeof *m);
  if (m == NULL) return qv_error_set(error, QV_ENOMEM, "out of memory");
  m->fd = -1;
  if (len > 0) {
    size_t big = (size_t)2 << 20, span = ((len + big - 1) & ~(big - 1)) + big;
    if (span < len) {
      free(m);
      return qv_error_set(error, QV_ENOMEM, "%s: too large to read into memory", s->name);
    }
    uint8_t *raw = mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == MAP_FAILED) {
      free(m);
      return qv_error_set(error, QV_ENOMEM, "%s: cannot allocate %zu bytes to read it into", s->name, len);
    }
    uint8_t *a = (uint8_t *)(((uintptr_t)raw + big - 1) & ~(uintptr_t)(big - 1));
    size_t head = (size_t)(a - raw), keep = span - big;
    if (head > 0) munmap(raw, head);
    if (span - head - keep > 0) munmap(a + keep, span - head - keep);
    madvise(a, keep, MADV_HUGEPAGE);
    m->addr = a;
    m->len = keep;
    size_t got;
    QvStatus st = qvi_source_pread(s, a, len, 0, &got, error);
    if (st == QV_OK && got < len)
      st = qv_error_set(error, QV_EIO, "%s: the file shrank while it was read (%zu of %zu bytes)", s->name, got, len);
    if (st) {
      unmap(m);
      return st;
    }
  }
  *owner = qv_owner_new(unmap, m);
  if (*owner == NULL) {
    unmap(m);
    return qv_error_set(error, QV_ENOMEM, "out of memory");
  }
  *out = m;
  return QV_OK;
}

QvStatus qvi_source_view(QvSource *s, const uint8_t **data, size_t *size, QvOwner **owner,
                        QvError *error) {
  *data = NULL;
  *size = 0;
  *owner = NULL;
  if (s->kind == QV_SOURCE_STREAM)
    return qv_error_set(error, QV_EARG, "%s: a stream has no zero-copy view", s->name);
  if (s->kind == QV_SOURCE_MEMORY) {
    *data = s->data;
    *size = (size_t)s->size;
    *owner = s->owner;
    return QV_OK;
  }
  struct View *v = atomic_load(&s->view);
  if (v == NULL) {
    v = malloc(sizeof *v);
    if (v == NULL) return qv_error_set(error, QV_ENOMEM, "out of memory");
    Mapping *m = NULL;
    int advice = atomic_load(&s->advice);
    QvStatus st = advice == QV_SOURCE_ADVICE_READ ? read_whole(s, &m, &v->owner, error)
                                                   : map_pages(s, 0, (size_t)s->size, &m, &v->owner, error);
    if (st) {
      free(v);
      return st;
    }
    v->data = m->addr;
    v->mapped = advice != QV_SOURCE_ADVICE_READ;
    if (advice != QV_SOURCE_ADVICE_READ) {
      advise(m->addr, m->len, advice);
      atomic_fetch_add(&g_view_maps, 1);
      register_file(m, s->fd, 0);
    }
    /* two readers of one source may race to map it: the first one wins */
    struct View *expected = NULL;
    if (!atomic_compare_exchange_strong(&s->view, &expected, v)) {
      qv_owner_free(v->owner);
      free(v);
      v = expected;
    }
  }
  *data = v->data;
  *size = (size_t)s->size;
  *owner = v->owner;
  return QV_OK;
}

void qv_source_populate(QvSource *s, int64_t offset, int64_t length) {
  if (s == NULL || s->kind != QV_SOURCE_FILE || offset < 0 || length <= 0 || offset >= s->size)
    return;
  struct View *v = atomic_load(&s->view);
  if (v == NULL || !v->mapped) return;
  if (length > s->size - offset) length = s->size - offset;
  /* madvise wants a page-aligned start; the view starts on a page */
  int64_t page = (int64_t)sysconf(_SC_PAGESIZE);
  if (page <= 0) page = 4096;
  int64_t start = offset / page * page;
  atomic_fetch_add(&g_populates, 1);
  advise((uint8_t *)(uintptr_t)v->data + start, (size_t)(offset + length - start),
         QV_SOURCE_ADVICE_POPULATE);
}

/* ---- random access */

/* Reads n bytes (fewer only at the end) through a callback source's read. */
static QvStatus callback_read_full(QvSource *s, uint8_t *buf, size_t n, size_t *got,
                                   QvError *error) {
  size_t done = 0;
  while (done < n) {
    size_t k = 0;
    QvStatus st = s->read_fn(s->ctx, buf + done, n - done, &k, error);
    if (st) {
      *got = done;
      return qv_error_prefix(error, "%s", s->name);
    }
    if (k > n - done) {
      *got = done;
      return qv_error_set(error, QV_EIO, "%s: the read callback reported %zu bytes for a %zu-byte "
                          "request", s->name, k, n - done);
    }
    if (k == 0) break;
    done += k;
  }
  *got = done;
  return QV_OK;
}

/* pread on a seekable callback source: seek, read, and seek back to where
 * sequential reading stands (the caller's position, past what is peeked). */
static QvStatus callback_pread(QvSource *s, void *buf, size_t n, int64_t offset, size_t *got,
                               QvError *error) {
  pthread_mutex_lock(&s->lock);
  int64_t at;
  QvStatus st = s->seek_fn(s->ctx, s->base + offset, SEEK_SET, &at, error);
  if (!st && at != s->base + offset)
    st = qv_error_set(error, QV_EIO, "%s: seek to %lld reached %lld", s->name,
                      (long long)(s->base + offset), (long long)at);
  if (!st) st = callback_read_full(s, buf, n, got, error);
  QvError ignored;
  QvStatus back = s->seek_fn(s->ctx, s->base + s->pos, SEEK_SET, &at, st ? &ignored : error);
  if (!st && back) st = back;
  pthread_mutex_unlock(&s->lock);
  return st;
}

QvStatus qvi_source_pread(QvSource *s, void *buf, size_t n, int64_t offset, size_t *got,
                         QvError *error) {
  *got = 0;
  if (!s->seekable)
    return qv_error_set(error, QV_EARG, "%s: cannot read at an offset: not seekable", s->name);
  if (offset < 0 || offset >= s->size) return QV_OK;
  if ((uint64_t)n > (uint64_t)(s->size - offset)) n = (size_t)(s->size - offset);
  if (s->kind == QV_SOURCE_MEMORY) {
    if (n) memcpy(buf, s->data + offset, n);
    *got = n;
    return QV_OK;
  }
  if (s->read_fn) return callback_pread(s, buf, n, offset, got, error);
  size_t done = 0;
  while (done < n) {
    ssize_t k = pread(s->fd, (uint8_t *)buf + done, io_ask(n - done),
                      (off_t)(s->base + offset + (int64_t)done));
    if (k < 0) {
      if (errno == EINTR) continue;
      return qv_error_set(error, QV_EIO, "%s: read failed at offset %lld: %s", s->name,
                          (long long)(offset + (int64_t)done), strerror(errno));
    }
    if (k == 0) break; /* the file shrank */
    done += (size_t)k;
  }
  *got = done;
  return QV_OK;
}

QvStatus qvi_source_map_range(QvSource *s, int64_t offset, int64_t length, const uint8_t **data,
                             QvOwner **owner, QvError *error) {
  static _Alignas(64) const uint8_t no_bytes[64];
  *data = NULL;
  *owner = NULL;
  if (s->kind == QV_SOURCE_STREAM)
    return qv_error_set(error, QV_EARG, "%s: a stream cannot be mapped", s->name);
  if (offset < 0 || length < 0 || offset > s->size || length > s->size - offset)
    return qv_error_set(error, QV_EARG, "%s: range (offset %lld, length %lld) is outside the input",
                        s->name, (long long)offset, (long long)length);
  if (length == 0) {
    *data = no_bytes;
    return QV_OK;
  }
  if (qv_source_is_mapped(s)) {
    const uint8_t *all;
    size_t size;
    QvOwner *o;
    QvStatus st = qvi_source_view(s, &all, &size, &o, error);
    if (st) return st;
    qv_owner_retain(o);
    *owner = o;
    *data = all + offset;
    return QV_OK;
  }
  int64_t page = (int64_t)sysconf(_SC_PAGESIZE);
  if (page <= 0) page = 4096;
  int64_t start = offset / page * page;
  Mapping *m;
  QvStatus st = map_pages(s, start, (size_t)(offset + length - start), &m, owner, error);
  if (st) return st;
  atomic_fetch_add(&g_range_maps, 1);
  *data = (const uint8_t *)m->addr + (offset - start);
  return QV_OK;
}

/* ---- sequential reading */

/* Raw read of up to n bytes at the sequential position; *got < n only at
 * the end of the input. */
static QvStatus read_raw(QvSource *s, uint8_t *buf, size_t n, size_t *got, QvError *error) {
  *got = 0;
  if (s->kind != QV_SOURCE_STREAM) {
    QvStatus st = qvi_source_pread(s, buf, n, s->pos, got, error);
    s->pos += (int64_t)*got;
    return st;
  }
  if (s->read_fn) {
    pthread_mutex_lock(&s->lock);
    QvStatus st = callback_read_full(s, buf, n, got, error);
    pthread_mutex_unlock(&s->lock);
    s->pos += (int64_t)*got;
    return st;
  }
  size_t done = 0;
  QvStatus st = QV_OK;
  while (done < n) {
    ssize_t k = read(s->fd, buf + done, io_ask(n - done));
    if (k < 0) {
      if (errno == EINTR) continue;
      st = qv_error_set(error, QV_EIO, "%s: read failed at offset %lld: %s", s->name,
                        (long long)(s->pos + (int64_t)done), strerror(errno));
      break;
    }
    if (k == 0) break;
    done += (size_t)k;
  }
  s->pos += (int64_t)done;
  *got = done;
  return st;
}

QvStatus qvi_source_read(QvSource *s, void *buf, size_t n, size_t *got, QvError *error) {
  uint8_t *out = buf;
  size_t done = n < s->n_peeked ? n : s->n_peeked;
  if (done) {
    memcpy(out, s->peeked, done);
    memmove(s->peeked, s->peeked + done, s->n_peeked - done);
    s->n_peeked -= done;
  }
  size_t k = 0;
  QvStatus st = done < n ? read_raw(s, out + done, n - done, &k, error) : QV_OK;
  *got = done + k;
  return st;
}

QvStatus qvi_source_peek(QvSource *s, void *buf, size_t n, size_t *got, QvError *error) {
  *got = 0;
  if (n > PEEK_MAX) return qv_error_set(error, QV_EARG, "peek of %zu bytes is too long", n);
  QvStatus st = QV_OK;
  if (s->n_peeked < n) {
    size_t k;
    st = read_raw(s, s->peeked + s->n_peeked, n - s->n_peeked, &k, error);
    s->n_peeked += k;
  }
  *got = n < s->n_peeked ? n : s->n_peeked;
  memcpy(buf, s->peeked, *got);
  return st;
}

QvStatus qvi_source_skip(QvSource *s, int64_t n, int64_t *skipped, QvError *error) {
  *skipped = 0;
  uint8_t scratch[16384];
  while (*skipped < n) {
    size_t want = n - *skipped < (int64_t)sizeof scratch ? (size_t)(n - *skipped) : sizeof scratch;
    size_t got;
    QvStatus st;
    if (s->kind != QV_SOURCE_STREAM && s->n_peeked == 0) {
      /* nothing to read: move the cursor, clamped to the end */
      int64_t left = s->size > s->pos ? s->size - s->pos : 0;
      int64_t k = n - *skipped < left ? n - *skipped : left;
      s->pos += k;
      *skipped += k;
      return QV_OK;
    }
    st = qvi_source_read(s, scratch, want, &got, error);
    *skipped += (int64_t)got;
    if (st) return st;
    if (got < want) return QV_OK;
  }
  return QV_OK;
}

int64_t qvi_source_position(const QvSource *s) { return s->pos - (int64_t)s->n_peeked; }

static void free_aligned_owned(void *p) { qv_free(p); }

QvStatus qvi_source_read_all(QvSource *s, int64_t limit, const uint8_t **data, size_t *size,
                            QvOwner **owner, QvError *error) {
  *data = NULL;
  *size = 0;
  *owner = NULL;
  size_t cap = (size_t)1 << 16, len = 0;
  uint8_t *buf = qv_aligned_alloc(cap);
  if (buf == NULL) return qv_error_set(error, QV_ENOMEM, "out of memory");
  for (;;) {
    if (len == cap) {
      if ((int64_t)cap >= limit || cap > SIZE_MAX / 2) {
        qv_free(buf);
        return qv_error_set(error, QV_ELIMIT, "%s: the input exceeds %lld bytes, the most held "
                            "in memory", qv_source_name(s), (long long)limit);
      }
      uint8_t *bigger = qv_aligned_alloc(cap * 2);
      if (bigger == NULL) {
        qv_free(buf);
        return qv_error_set(error, QV_ENOMEM, "out of memory reading %s", qv_source_name(s));
      }
      memcpy(bigger, buf, len);
      qv_free(buf);
      buf = bigger;
      cap *= 2;
    }
    size_t want = cap - len, got;
    QvStatus st = qvi_source_read(s, buf + len, want, &got, error);
    if (st) {
      qv_free(buf);
      return st;
    }
    len += got;
    if (got < want) break; /* a short read is the end of the input */
  }
  if ((int64_t)len > limit) {
    qv_free(buf);
    return qv_error_set(error, QV_ELIMIT, "%s: the input exceeds %lld bytes, the most held in "
                        "memory", qv_source_name(s), (long long)limit);
  }
  *owner = qv_owner_new(free_aligned_owned, buf);
  if (*owner == NULL) {
    qv_free(buf);
    return qv_error_set(error, QV_ENOMEM, "out of memory");
  }
  *data = buf;
  *size = len;
  return QV_OK;
}

QvStatus qv_source_read_all(QvSource *s, int64_t max_size, const uint8_t **data, size_t *size,
                            QvOwner **owner, QvError *error) {
  if (data == NULL || size == NULL || owner == NULL)
    return qv_error_set(error, QV_EARG, "qv_source_read_all: NULL output");
  *data = NULL;
  *size = 0;
  *owner = NULL;
  if (s == NULL) return qv_error_set(error, QV_EARG, "qv_source_read_all: NULL source");
  if (max_size < 0)
    return qv_error_set(error, QV_EARG, "qv_source_read_all: negative max_size %lld",
                        (long long)max_size);
  int64_t limit = max_size > 0 ? max_size : INT64_MAX;
  if (!qv_source_has_view(s)) return qvi_source_read_all(s, limit, data, size, owner, error);
  QvStatus st = qvi_source_view(s, data, size, owner, error);
  if (st) return st;
  if ((int64_t)*size > limit) {
    size_t n = *size;
    *data = NULL;
    *size = 0;
    *owner = NULL;
    return qv_error_set(error, QV_ELIMIT, "%s: the input of %zu bytes exceeds %lld bytes",
                        qv_source_name(s), n, (long long)limit);
  }
  qv_owner_retain(*owner); /* the caller's reference; the source keeps its own */
  return QV_OK;
}
