/* Message reader over memory, a memory-mapped file or a file descriptor.
 * Every length read from the input is checked against the bytes that remain
 * and against the configured limits before anything is allocated or read. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "ipc/io.h"
#include "quiver/ipc.h"

typedef enum { SOURCE_MEMORY, SOURCE_FD } SourceKind;

/* fd reads allocate at most this much ahead of the bytes that actually
 * arrived, so a lying length costs memory only in proportion to the input. */
#define FD_READ_CHUNK ((size_t)1 << 20)

struct QvIpcReader {
  SourceKind kind;
  QvIpcReaderOptions options;
  QvIpcFormat format;
  bool finished;
  /* The first error, replayed by every later next(): a reader does not
   * resynchronise on garbage, and QV_EOS after an error would hide it. */
  QvError error;
  /* memory */
  const uint8_t *data;
  size_t size;
  QvOwner *owner;
  /* fd */
  int fd;
  uint8_t pending[8]; /* bytes read while sniffing the format */
  size_t n_pending;
  int64_t consumed; /* input offset of the next byte read_fully delivers */
  int64_t base;     /* seekable fd: file offset where the input starts */
  bool has_footer;  /* file format on a seekable fd: footer located */
  int64_t footer_offset;
  int32_t footer_length;
  /* shared */
  int64_t limit; /* end of the message area (file format: start of the footer) */
  int64_t pos;   /* offset of the next message from the start of the input */
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
  qv_message_reset(&msg->message);
  qv_owner_free(msg->owner);
  memset(msg, 0, sizeof *msg);
}

static bool has_magic(const uint8_t *p) { return memcmp(p, QV_IPC_MAGIC, QV_IPC_MAGIC_SIZE) == 0; }

/* Leading magic + padding, trailing footer length + magic. */
#define FILE_HEAD 8
#define FILE_TAIL (4 + QV_IPC_MAGIC_SIZE)

/* File format: `tail` holds the last FILE_TAIL bytes of an input of `size`
 * bytes that starts with the magic. Checks the trailing magic and that the
 * footer length fits between the leading magic and the tail. */
static QvStatus locate_footer(const uint8_t *tail, int64_t size, int64_t *footer_offset,
                              int32_t *footer_length, QvError *error) {
  if (size < FILE_HEAD + FILE_TAIL)
    return qv_error_set(error, QV_ETRUNCATED,
                        "file format: %lld bytes is too short for an Arrow file",
                        (long long)size);
  if (!has_magic(tail + 4))
    return qv_error_set(error, QV_ETRUNCATED,
                        "file format: trailing ARROW1 magic is missing (truncated file?)");
  int32_t flen = (int32_t)load_u32(tail);
  if (flen <= 0 || flen > size - FILE_HEAD - FILE_TAIL)
    return qv_error_set(error, QV_EINVAL,
                        "file format: footer length %d does not fit a file of %lld bytes", flen,
                        (long long)size);
  *footer_offset = size - FILE_TAIL - flen;
  *footer_length = flen;
  return QV_OK;
}

QvStatus qv_ipc_reader_open_memory(QvIpcReader **out, const uint8_t *data, size_t size,
                                   QvOwner *owner, const QvIpcReaderOptions *options,
                                   QvError *error) {
  *out = NULL;
  if (data == NULL && size > 0) return qv_error_set(error, QV_EARG, "NULL data");
  if (size > INT64_MAX) return qv_error_set(error, QV_ELIMIT, "input of %zu bytes is too large", size);
  QvIpcReader *r = calloc(1, sizeof *r);
  if (r == NULL) return qv_error_set(error, QV_ENOMEM, "out of memory");
  r->kind = SOURCE_MEMORY;
  apply_defaults(&r->options, options);
  r->data = data;
  r->size = size;
  r->limit = (int64_t)size;
  r->fd = -1;
  /* A stream cannot start with "ARRO" (as a length it exceeds any sane
   * metadata), so the magic alone decides; a short file is then reported as
   * a truncated file rather than as a bad stream. */
  if (size >= QV_IPC_MAGIC_SIZE && has_magic(data)) {
    r->format = QV_IPC_FORMAT_FILE;
    int64_t foff;
    int32_t flen;
    const uint8_t *tail = size >= FILE_TAIL ? data + size - FILE_TAIL : data;
    QvStatus st = locate_footer(tail, (int64_t)size, &foff, &flen, error);
    if (st) {
      free(r);
      return st;
    }
    r->limit = foff;
    r->pos = FILE_HEAD;
  }
  qv_owner_retain(owner);
  r->owner = owner;
  *out = r;
  return QV_OK;
}

QvStatus qv_ipc_reader_open_path(QvIpcReader **out, const char *path,
                                 const QvIpcReaderOptions *options, QvError *error) {
  *out = NULL;
  const uint8_t *data;
  size_t size;
  QvOwner *owner;
  QvStatus s = qv_io_map_file(path, &data, &size, &owner, error);
  if (s) return s;
  s = qv_ipc_reader_open_memory(out, data, size, owner, options, error);
  qv_owner_free(owner); /* the reader holds its own reference */
  if (s) qv_error_prefix(error, "%s", path);
  return s;
}

/* Raw read of up to n bytes from the descriptor; *got < n only at EOF. */
static QvStatus read_raw(int fd, uint8_t *buf, size_t n, int64_t offset, size_t *got,
                         QvError *error) {
  size_t done = 0;
  while (done < n) {
    ssize_t k = read(fd, buf + done, n - done);
    if (k < 0) {
      if (errno == EINTR) continue;
      return qv_error_set(error, QV_EIO, "read failed at offset %lld: %s",
                          (long long)(offset + (int64_t)done), strerror(errno));
    }
    if (k == 0) break;
    done += (size_t)k;
  }
  *got = done;
  return QV_OK;
}

/* Reads up to n bytes of the input, never past the message area's limit;
 * *got receives how many arrived before the end. */
static QvStatus read_fully(QvIpcReader *r, uint8_t *buf, size_t n, size_t *got, QvError *error) {
  if (r->consumed >= r->limit) {
    n = 0;
  } else if ((uint64_t)n > (uint64_t)(r->limit - r->consumed)) {
    n = (size_t)(r->limit - r->consumed);
  }
  size_t done = 0;
  while (done < n && r->n_pending > 0) {
    buf[done++] = r->pending[0];
    memmove(r->pending, r->pending + 1, --r->n_pending);
  }
  size_t k = 0;
  QvStatus st = QV_OK;
  if (done < n) st = read_raw(r->fd, buf + done, n - done, r->consumed + (int64_t)done, &k, error);
  done += k;
  r->consumed += (int64_t)done;
  *got = done;
  return st;
}

/* Reads n bytes into a new 64-byte-aligned allocation that grows with the
 * data actually read. *got < n when the input ended early; *out is then
 * still set (free it with qv_aligned_free). */
static QvStatus read_alloc(QvIpcReader *r, size_t n, uint8_t **out, size_t *got, QvError *error) {
  *out = NULL;
  *got = 0;
  size_t cap = n < FD_READ_CHUNK ? n : FD_READ_CHUNK;
  uint8_t *buf = qv_aligned_alloc(cap);
  if (buf == NULL) return qv_error_set(error, QV_ENOMEM, "out of memory reading %zu bytes", cap);
  size_t done = 0;
  for (;;) {
    size_t k;
    QvStatus st = read_fully(r, buf + done, cap - done, &k, error);
    done += k;
    if (st || done < cap || done == n) {
      *out = buf;
      *got = done;
      return st;
    }
    size_t next = cap > n / 2 ? n : cap * 2;
    uint8_t *grown = qv_aligned_alloc(next);
    if (grown == NULL) {
      qv_aligned_free(buf);
      return qv_error_set(error, QV_ENOMEM, "out of memory reading %zu bytes", next);
    }
    memcpy(grown, buf, done);
    qv_aligned_free(buf);
    buf = grown;
    cap = next;
  }
}

/* File format on a seekable descriptor: find the footer with pread so the
 * messages stop where it starts and qv_ipc_reader_footer can decode it. */
static QvStatus locate_fd_footer(QvIpcReader *r, QvError *error) {
  struct stat st;
  if (fstat(r->fd, &st) != 0 || !S_ISREG(st.st_mode)) return QV_OK;
  off_t here = lseek(r->fd, 0, SEEK_CUR);
  if (here < 0) return QV_OK;
  /* the 8 sniffed bytes were already consumed */
  r->base = (int64_t)here - FILE_HEAD;
  int64_t size = (int64_t)st.st_size - r->base;
  uint8_t tail[FILE_TAIL];
  memset(tail, 0, sizeof tail);
  if (size >= FILE_TAIL) {
    ssize_t k = pread(r->fd, tail, FILE_TAIL, (off_t)(r->base + size - FILE_TAIL));
    if (k < 0) return qv_error_set(error, QV_EIO, "file format: reading the footer length: %s",
                                   strerror(errno));
    if (k != FILE_TAIL)
      return qv_error_set(error, QV_ETRUNCATED, "file format: the file shrank while being read");
  }
  QvStatus s = locate_footer(tail, size, &r->footer_offset, &r->footer_length, error);
  if (s) return s;
  r->has_footer = true;
  r->limit = r->footer_offset;
  return QV_OK;
}

QvStatus qv_ipc_reader_open_fd(QvIpcReader **out, int fd, const QvIpcReaderOptions *options,
                               QvError *error) {
  *out = NULL;
  if (fd < 0) return qv_error_set(error, QV_EARG, "invalid file descriptor %d", fd);
  QvIpcReader *r = calloc(1, sizeof *r);
  if (r == NULL) return qv_error_set(error, QV_ENOMEM, "out of memory");
  r->kind = SOURCE_FD;
  r->fd = fd;
  r->limit = INT64_MAX;
  apply_defaults(&r->options, options);
  /* sniff the file magic; keep the bytes if it is a stream */
  size_t got = 0;
  QvStatus st = read_raw(fd, r->pending, 8, 0, &got, error);
  if (st) {
    free(r);
    return st;
  }
  r->n_pending = got;
  if (got >= QV_IPC_MAGIC_SIZE && has_magic(r->pending)) {
    r->format = QV_IPC_FORMAT_FILE;
    if (got < FILE_HEAD) {
      free(r);
      return qv_error_set(error, QV_ETRUNCATED,
                          "file format: %zu bytes is too short for an Arrow file", got);
    }
    r->n_pending = 0;
    r->consumed = FILE_HEAD;
    r->pos = FILE_HEAD;
    if ((st = locate_fd_footer(r, error))) {
      free(r);
      return st;
    }
  }
  *out = r;
  return QV_OK;
}

void qv_ipc_reader_close(QvIpcReader *reader) {
  if (reader == NULL) return;
  qv_owner_free(reader->owner);
  free(reader);
}

QvIpcFormat qv_ipc_reader_format(const QvIpcReader *reader) { return reader->format; }

QvStatus qv_ipc_reader_footer(QvIpcReader *r, QvFooter *out, int64_t *footer_offset,
                              int32_t *footer_length, QvError *error) {
  memset(out, 0, sizeof *out);
  if (r->format != QV_IPC_FORMAT_FILE || (r->kind == SOURCE_FD && !r->has_footer))
    return qv_error_set(error, QV_EARG,
                        "footer: input is not an Arrow file read from memory or a seekable file");
  int64_t off;
  int32_t len;
  QvStatus st;
  const uint8_t *bytes;
  uint8_t *copy = NULL;
  if (r->kind == SOURCE_MEMORY) {
    st = locate_footer(r->data + r->size - FILE_TAIL, (int64_t)r->size, &off, &len, error);
    if (st) return st;
    bytes = r->data + off;
  } else {
    off = r->footer_offset;
    len = r->footer_length;
    if (len > r->options.max_metadata_size)
      return qv_error_set(error, QV_ELIMIT,
                          "footer at offset %lld: length %d exceeds the limit of %lld",
                          (long long)off, len, (long long)r->options.max_metadata_size);
    copy = malloc((size_t)len);
    if (copy == NULL) return qv_error_set(error, QV_ENOMEM, "out of memory reading the footer");
    size_t done = 0;
    while (done < (size_t)len) {
      ssize_t k = pread(r->fd, copy + done, (size_t)len - done,
                        (off_t)(r->base + off + (int64_t)done));
      if (k < 0 && errno == EINTR) continue;
      if (k <= 0) {
        free(copy);
        if (k == 0)
          return qv_error_set(error, QV_ETRUNCATED,
                              "footer at offset %lld: the file shrank while being read",
                              (long long)off);
        return qv_error_set(error, QV_EIO, "footer at offset %lld: %s", (long long)off,
                            strerror(errno));
      }
      done += (size_t)k;
    }
    bytes = copy;
  }
  if (footer_offset) *footer_offset = off;
  if (footer_length) *footer_length = len;
  st = qv_footer_decode(bytes, (size_t)len, &r->options.decode, out, error);
  free(copy);
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
  if (r->pos >= r->limit) return QV_EOS;
  size_t pos = (size_t)r->pos;
  const uint8_t *p = r->data + pos;
  size_t avail = (size_t)r->limit - pos;
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
  qv_aligned_free(m->metadata);
  qv_aligned_free(m->body);
  free(m);
}

static QvStatus next_fd(QvIpcReader *r, QvIpcMessage *out, QvError *error) {
  uint8_t prefix_bytes[8];
  size_t got = 0;
  QvStatus st = read_fully(r, prefix_bytes, 4, &got, error);
  if (st) return st;
  if (got == 0) {
    /* a stream may end without the marker; later reads must not see data
     * that arrives after the end was reported */
    r->finished = true;
    return QV_EOS;
  }
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
  st = read_alloc(r, (size_t)len, &mem->metadata, &got, error);
  if (st) return qv_error_prefix(error, "message at offset %lld", (long long)out->offset);
  if (got < (size_t)len)
    return qv_error_set(error, QV_ETRUNCATED,
                        "message at offset %lld: metadata needs %d bytes, only %zu remain",
                        (long long)out->offset, len, got);
  out->metadata = mem->metadata;
  if ((st = decode_at(r, out, error))) return st;
  out->body_offset = out->offset + (int64_t)prefix + len;
  /* body_length is at most max_body_size here; the allocation grows with
   * the bytes that really arrive */
  st = read_alloc(r, (size_t)out->body_length, &mem->body, &got, error);
  if (st) return qv_error_prefix(error, "message at offset %lld", (long long)out->offset);
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
  if (r->error.code != QV_OK) {
    if (error) *error = r->error;
    return r->error.code;
  }
  if (r->finished) return QV_EOS;
  QvStatus st = r->kind == SOURCE_MEMORY ? next_memory(r, out, &r->error)
                                         : next_fd(r, out, &r->error);
  if (st == QV_OK) return QV_OK;
  qv_ipc_message_release(out);
  if (st == QV_EOS) {
    qv_error_clear(&r->error);
    return QV_EOS;
  }
  r->error.code = st;
  if (error) *error = r->error;
  return st;
}

QvStatus qv_ipc_reader_nth(QvIpcReader *r, int64_t index, QvIpcMessage *out, QvError *error) {
  for (int64_t i = 0;; i++) {
    QvStatus st = qv_ipc_reader_next(r, out, error);
    if (st == QV_EOS) {
      if (i == 0) return qv_error_set(error, QV_EINVAL, "input holds no message");
      return qv_error_set(error, QV_EINVAL, "no message %lld: input holds %lld message%s",
                          (long long)index, (long long)i, i == 1 ? "" : "s");
    }
    if (st || i == index) return st;
    qv_ipc_message_release(out);
  }
}
