/* Message reader over memory, a memory-mapped file or a file descriptor.
 * Every length read from the input is checked against the bytes that remain
 * and against the configured limits before anything is allocated or read. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "quiver/ipc.h"

typedef enum { SOURCE_MEMORY, SOURCE_FD } SourceKind;

struct QvIpcReader {
  SourceKind kind;
  QvIpcReaderOptions options;
  QvIpcFormat format;
  bool finished;
  /* memory */
  const uint8_t *data;
  size_t size;
  size_t limit; /* end of the message area (file: start of the footer) */
  QvOwner *owner;
  /* fd */
  int fd;
  uint8_t pending[8]; /* bytes read while sniffing the format */
  size_t n_pending;
  /* shared */
  int64_t pos; /* offset of the next message from the start of the input */
};

static uint32_t load_u32(const uint8_t *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void apply_defaults(QvIpcReaderOptions *o, const QvIpcReaderOptions *in) {
  memset(o, 0, sizeof *o);
  if (in) *o = *in;
  if (o->max_metadata_size <= 0) o->max_metadata_size = QV_IPC_DEFAULT_MAX_METADATA_SIZE;
  if (o->max_body_size <= 0) o->max_body_size = QV_IPC_DEFAULT_MAX_BODY_SIZE;
}

void qv_ipc_message_release(QvIpcMessage *msg) {
  if (msg == NULL) return;
  qv_message_release(&msg->message);
  qv_owner_release(msg->owner);
  memset(msg, 0, sizeof *msg);
}

static bool has_magic(const uint8_t *p) { return memcmp(p, QV_IPC_MAGIC, QV_IPC_MAGIC_SIZE) == 0; }

/* File format in memory: both magics, and a footer length that fits. */
static QvStatus locate_footer(const uint8_t *data, size_t size, int64_t *footer_offset,
                              int32_t *footer_length, QvError *error) {
  if (size < 8 + 10)
    return qv_error_set(error, QV_ETRUNCATED, "file format: %zu bytes is too short for an Arrow file",
                        size);
  if (!has_magic(data + size - 6))
    return qv_error_set(error, QV_ETRUNCATED,
                        "file format: trailing ARROW1 magic is missing (truncated file?)");
  int32_t flen = (int32_t)load_u32(data + size - 10);
  if (flen <= 0 || (size_t)flen > size - 8 - 10)
    return qv_error_set(error, QV_EINVAL,
                        "file format: footer length %d does not fit a file of %zu bytes", flen,
                        size);
  *footer_offset = (int64_t)(size - 10 - (size_t)flen);
  *footer_length = flen;
  return QV_OK;
}

QvStatus qv_ipc_reader_open_memory(QvIpcReader **out, const uint8_t *data, size_t size,
                                   QvOwner *owner, const QvIpcReaderOptions *options,
                                   QvError *error) {
  *out = NULL;
  if (data == NULL && size > 0) return qv_error_set(error, QV_EARG, "NULL data");
  QvIpcReader *r = calloc(1, sizeof *r);
  if (r == NULL) return qv_error_set(error, QV_ENOMEM, "out of memory");
  r->kind = SOURCE_MEMORY;
  apply_defaults(&r->options, options);
  r->data = data;
  r->size = size;
  r->limit = size;
  r->fd = -1;
  if (size >= 8 && has_magic(data)) {
    r->format = QV_IPC_FORMAT_FILE;
    int64_t foff;
    int32_t flen;
    QvStatus st = locate_footer(data, size, &foff, &flen, error);
    if (st) {
      free(r);
      return st;
    }
    r->limit = (size_t)foff;
    r->pos = 8;
  }
  qv_owner_retain(owner);
  r->owner = owner;
  *out = r;
  return QV_OK;
}

typedef struct Mapping {
  void *addr;
  size_t size;
} Mapping;

static void unmap(void *p) {
  Mapping *m = p;
  if (m->size) munmap(m->addr, m->size);
  free(m);
}

QvStatus qv_ipc_reader_open_path(QvIpcReader **out, const char *path,
                                 const QvIpcReaderOptions *options, QvError *error) {
  *out = NULL;
  int fd = open(path, O_RDONLY);
  if (fd < 0) return qv_error_set(error, QV_EIO, "%s: %s", path, strerror(errno));
  struct stat st;
  if (fstat(fd, &st) != 0) {
    int e = errno;
    close(fd);
    return qv_error_set(error, QV_EIO, "%s: %s", path, strerror(e));
  }
  if (!S_ISREG(st.st_mode)) {
    close(fd);
    return qv_error_set(error, QV_EIO, "%s: not a regular file (use a file descriptor reader)",
                        path);
  }
  Mapping *m = calloc(1, sizeof *m);
  if (m == NULL) {
    close(fd);
    return qv_error_set(error, QV_ENOMEM, "out of memory");
  }
  m->size = (size_t)st.st_size;
  m->addr = NULL;
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
  QvOwner *owner = qv_owner_new(unmap, m);
  if (owner == NULL) {
    unmap(m);
    return qv_error_set(error, QV_ENOMEM, "out of memory");
  }
  QvStatus s = qv_ipc_reader_open_memory(out, m->addr, m->size, owner, options, error);
  qv_owner_release(owner); /* the reader holds its own reference */
  if (s) qv_error_prefix(error, "%s", path);
  return s;
}

/* Reads exactly n bytes; *got receives how many arrived before EOF. */
static QvStatus read_fully(QvIpcReader *r, uint8_t *buf, size_t n, size_t *got, QvError *error) {
  size_t done = 0;
  while (done < n && r->n_pending > 0) {
    buf[done++] = r->pending[0];
    memmove(r->pending, r->pending + 1, --r->n_pending);
  }
  while (done < n) {
    ssize_t k = read(r->fd, buf + done, n - done);
    if (k < 0) {
      if (errno == EINTR) continue;
      return qv_error_set(error, QV_EIO, "read failed at offset %lld: %s",
                          (long long)(r->pos + (int64_t)done), strerror(errno));
    }
    if (k == 0) break;
    done += (size_t)k;
  }
  *got = done;
  return QV_OK;
}

QvStatus qv_ipc_reader_open_fd(QvIpcReader **out, int fd, const QvIpcReaderOptions *options,
                               QvError *error) {
  *out = NULL;
  QvIpcReader *r = calloc(1, sizeof *r);
  if (r == NULL) return qv_error_set(error, QV_ENOMEM, "out of memory");
  r->kind = SOURCE_FD;
  r->fd = fd;
  apply_defaults(&r->options, options);
  /* sniff the file magic; keep the bytes if it is a stream */
  size_t got;
  QvStatus st = read_fully(r, r->pending, 8, &got, error);
  if (st) {
    free(r);
    return st;
  }
  r->n_pending = got;
  if (got == 8 && has_magic(r->pending)) {
    r->format = QV_IPC_FORMAT_FILE;
    r->n_pending = 0;
    r->pos = 8;
  }
  *out = r;
  return QV_OK;
}

void qv_ipc_reader_close(QvIpcReader *reader) {
  if (reader == NULL) return;
  qv_owner_release(reader->owner);
  free(reader);
}

QvIpcFormat qv_ipc_reader_format(const QvIpcReader *reader) { return reader->format; }

QvStatus qv_ipc_reader_footer(QvIpcReader *r, QvFooter *out, int64_t *footer_offset,
                              int32_t *footer_length, QvError *error) {
  memset(out, 0, sizeof *out);
  if (r->kind != SOURCE_MEMORY || r->format != QV_IPC_FORMAT_FILE)
    return qv_error_set(error, QV_EARG, "footer: input is not an Arrow file read from memory");
  int64_t off;
  int32_t len;
  QvStatus st = locate_footer(r->data, r->size, &off, &len, error);
  if (st) return st;
  if (footer_offset) *footer_offset = off;
  if (footer_length) *footer_length = len;
  st = qv_footer_decode(r->data + off, (size_t)len, &r->options.decode, out, error);
  if (st) qv_error_prefix(error, "footer at offset %lld", (long long)off);
  return st;
}

/* Interprets a prefix: sets *prefix_size and *len; *eos for an end marker. */
static QvStatus parse_prefix(QvIpcReader *r, const uint8_t *p, size_t avail, size_t *prefix_size,
                             int32_t *len, bool *eos, QvError *error) {
  *eos = false;
  if (avail < 4)
    return qv_error_set(error, QV_ETRUNCATED,
                        "message at offset %lld: input ends inside the message prefix",
                        (long long)r->pos);
  uint32_t first = load_u32(p);
  if (first == QV_IPC_CONTINUATION) {
    if (avail < 8)
      return qv_error_set(error, QV_ETRUNCATED,
                          "message at offset %lld: input ends inside the message prefix",
                          (long long)r->pos);
    *prefix_size = 8;
    *len = (int32_t)load_u32(p + 4);
  } else {
    *prefix_size = 4; /* legacy: no continuation marker */
    *len = (int32_t)first;
  }
  if (*len == 0) {
    *eos = true;
    return QV_OK;
  }
  if (*len < 0)
    return qv_error_set(error, QV_EINVAL, "message at offset %lld: negative metadata length %d",
                        (long long)r->pos, *len);
  if (*len > r->options.max_metadata_size)
    return qv_error_set(error, QV_ELIMIT,
                        "message at offset %lld: metadata length %d exceeds the limit of %lld",
                        (long long)r->pos, *len, (long long)r->options.max_metadata_size);
  return QV_OK;
}

static QvStatus decode_at(QvIpcReader *r, QvIpcMessage *out, QvError *error) {
  QvStatus st = qv_message_decode(out->metadata, (size_t)out->metadata_length,
                                  &r->options.decode, &out->message, error);
  if (st) return qv_error_prefix(error, "message at offset %lld", (long long)out->offset);
  out->body_length = out->message.body_length;
  if (out->body_length > r->options.max_body_size)
    return qv_error_set(error, QV_ELIMIT,
                        "message at offset %lld: body length %lld exceeds the limit of %lld",
                        (long long)out->offset, (long long)out->body_length,
                        (long long)r->options.max_body_size);
  return QV_OK;
}

static QvStatus next_memory(QvIpcReader *r, QvIpcMessage *out, QvError *error) {
  size_t pos = (size_t)r->pos;
  if (pos >= r->limit) return QV_EOS;
  const uint8_t *p = r->data + pos;
  size_t avail = r->limit - pos;
  size_t prefix;
  int32_t len;
  bool eos;
  QvStatus st = parse_prefix(r, p, avail, &prefix, &len, &eos, error);
  if (st) return st;
  if (eos) {
    r->finished = true;
    return QV_EOS;
  }
  if ((size_t)len > avail - prefix)
    return qv_error_set(error, QV_ETRUNCATED,
                        "message at offset %lld: metadata needs %d bytes, only %zu remain",
                        (long long)r->pos, len, avail - prefix);
  out->offset = r->pos;
  out->legacy_prefix = prefix == 4;
  out->metadata_length = len;
  out->metadata = p + prefix;
  if ((st = decode_at(r, out, error))) return st;
  size_t after = avail - prefix - (size_t)len;
  if ((uint64_t)out->body_length > after)
    return qv_error_set(error, QV_ETRUNCATED,
                        "message at offset %lld: body needs %lld bytes, only %zu remain",
                        (long long)out->offset, (long long)out->body_length, after);
  out->body_offset = r->pos + (int64_t)prefix + len;
  out->body = r->data + out->body_offset;
  qv_owner_retain(r->owner);
  out->owner = r->owner;
  r->pos = out->body_offset + out->body_length;
  return QV_OK;
}

typedef struct FdMessageMemory {
  uint8_t *metadata;
  uint8_t *body;
} FdMessageMemory;

static void free_fd_memory(void *p) {
  FdMessageMemory *m = p;
  free(m->metadata);
  qv_aligned_free(m->body);
  free(m);
}

static QvStatus next_fd(QvIpcReader *r, QvIpcMessage *out, QvError *error) {
  uint8_t prefix_bytes[8];
  size_t got;
  QvStatus st = read_fully(r, prefix_bytes, 4, &got, error);
  if (st) return st;
  if (got == 0) return QV_EOS; /* a stream may end without the marker */
  size_t avail = got;
  if (got == 4 && load_u32(prefix_bytes) == QV_IPC_CONTINUATION) {
    if ((st = read_fully(r, prefix_bytes + 4, 4, &got, error))) return st;
    avail += got;
  }
  size_t prefix;
  int32_t len;
  bool eos;
  if ((st = parse_prefix(r, prefix_bytes, avail, &prefix, &len, &eos, error))) return st;
  if (eos) {
    r->finished = true;
    return QV_EOS;
  }
  FdMessageMemory *mem = calloc(1, sizeof *mem);
  if (mem == NULL) return qv_error_set(error, QV_ENOMEM, "out of memory");
  QvOwner *owner = qv_owner_new(free_fd_memory, mem);
  if (owner == NULL) {
    free(mem);
    return qv_error_set(error, QV_ENOMEM, "out of memory");
  }
  out->owner = owner;
  out->offset = r->pos;
  out->legacy_prefix = prefix == 4;
  out->metadata_length = len;
  mem->metadata = malloc((size_t)len);
  if (mem->metadata == NULL) return qv_error_set(error, QV_ENOMEM, "out of memory");
  if ((st = read_fully(r, mem->metadata, (size_t)len, &got, error))) return st;
  if (got < (size_t)len)
    return qv_error_set(error, QV_ETRUNCATED,
                        "message at offset %lld: metadata needs %d bytes, only %zu remain",
                        (long long)r->pos, len, got);
  out->metadata = mem->metadata;
  if ((st = decode_at(r, out, error))) return st;
  out->body_offset = r->pos + (int64_t)prefix + len;
  mem->body = qv_aligned_alloc((size_t)out->body_length);
  if (mem->body == NULL)
    return qv_error_set(error, QV_ENOMEM, "message at offset %lld: cannot allocate %lld body bytes",
                        (long long)out->offset, (long long)out->body_length);
  if ((st = read_fully(r, mem->body, (size_t)out->body_length, &got, error))) return st;
  if (got < (size_t)out->body_length)
    return qv_error_set(error, QV_ETRUNCATED,
                        "message at offset %lld: body needs %lld bytes, only %zu remain",
                        (long long)out->offset, (long long)out->body_length, got);
  out->body = mem->body;
  r->pos = out->body_offset + out->body_length;
  return QV_OK;
}

QvStatus qv_ipc_reader_next(QvIpcReader *r, QvIpcMessage *out, QvError *error) {
  memset(out, 0, sizeof *out);
  if (r->finished) return QV_EOS;
  QvStatus st = r->kind == SOURCE_MEMORY ? next_memory(r, out, error) : next_fd(r, out, error);
  if (st != QV_OK) {
    qv_ipc_message_release(out);
    /* errors are sticky: a reader does not resynchronise on garbage */
    if (st != QV_EOS) r->finished = true;
  }
  return st;
}
