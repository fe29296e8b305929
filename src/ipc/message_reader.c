/* The message reader over a QvSource. Every length read from the input is
 * checked against the bytes that remain and against the configured limits
 * before anything is allocated or read.
 *
 * Three ways to get a message's bytes, one framing logic:
 *  VIEW   the whole input is addressable (memory, a mapped file): metadata
 *         and body point into it.
 *  PREAD  a regular file not mapped whole: prefix and metadata are read with
 *         pread, the body is mapped on its own (or skipped untouched).
 *  SEQ    a descriptor or pipe: read sequentially, bodies copied once,
 *         straight from read(2) into a buffer of the body's size: one
 *         that an earlier message of about that size handed back when it
 *         was released (the reader keeps up to two bodies' worth), so a
 *         stream of similar messages maps, unmaps and faults in no new
 *         memory after the first ones; else a fresh one that grows with
 *         the bytes that really arrive. */
#include <stdlib.h>
#include <string.h>

#include "ipc/source_internal.h"
#include "quiver/ipc.h"
#include "util/cpu.h"
#include "util/load.h"
#include "util/options.h"
#include "util/recycle.h"

/* sequential reads allocate at most this much ahead of the bytes that
 * actually arrived, so a lying length costs memory only in proportion to
 * the input */
#define SEQ_READ_CHUNK ((size_t)1 << 20)

/* leading magic + padding, trailing footer length + magic */
#define FILE_HEAD 8
#define FILE_TAIL (4 + QV_IPC_MAGIC_SIZE)

typedef enum { MODE_VIEW, MODE_PREAD, MODE_SEQ } Mode;

/* PREAD: one pread of this many bytes at a message's start usually brings
 * its metadata along with the prefix (tensor metadata is a few hundred
 * bytes), saving a second system call per message. */
#define PREAD_AHEAD 1024

struct QvIpcReader {
  QvSource *src;
  QvIpcReaderOptions options;
  QvDecodeOptions decode;
  QvIpcFormat format;
  bool finished;
  /* The first error, replayed by every later next(): a reader does not
   * resynchronise on garbage, and QV_EOS after an error would hide it. */
  QvError error;
  bool has_footer; /* file format with the footer located */
  int64_t footer_offset;
  int32_t footer_length;
  int64_t limit; /* end of the message area (file format: start of the footer) */
  int64_t pos;   /* offset of the next message from the start of the input */
  /* a regular file's first bytes, read once when the reader opens: the
   * format sniff and the first message's prefix and metadata */
  uint8_t head[PREAD_AHEAD];
  size_t head_n;
  /* SEQ: bodies handed back by released messages, for the next ones */
  QvRecycler *bodies;
  size_t largest_body;
};

static bool has_magic(const uint8_t *p) { return memcmp(p, QV_IPC_MAGIC, QV_IPC_MAGIC_SIZE) == 0; }

void qv_ipc_message_reset(QvIpcMessage *msg) {
  if (msg == NULL) return;
  qv_message_reset(&msg->message);
  qv_owner_free(msg->owner);
  memset(msg, 0, sizeof *msg);
}

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
  int32_t flen = (int32_t)qvi_le_u32(tail);
  if (flen <= 0 || flen > size - FILE_HEAD - FILE_TAIL)
    return qv_error_set(error, QV_EINVAL,
                        "file format: footer length %d does not fit a file of %lld bytes", flen,
                        (long long)size);
  *footer_offset = size - FILE_TAIL - flen;
  *footer_length = flen;
  return QV_OK;
}

/* Reads the trailing length + magic with pread and locates the footer. */
static QvStatus find_footer(QvIpcReader *r, QvError *error) {
  int64_t size = qv_source_size(r->src);
  uint8_t tail[FILE_TAIL];
  memset(tail, 0, sizeof tail);
  if (size >= FILE_TAIL) {
    size_t got;
    QvStatus st = qvi_source_pread(r->src, tail, FILE_TAIL, size - FILE_TAIL, &got, error);
    if (st) return qv_error_prefix(error, "file format: reading the footer length");
    if (got != FILE_TAIL)
      return qv_error_set(error, QV_ETRUNCATED, "file format: the file shrank while being read");
  }
  QvStatus st = locate_footer(tail, size, &r->footer_offset, &r->footer_length, error);
  if (st) return st;
  r->has_footer = true;
  r->limit = r->footer_offset;
  return QV_OK;
}

/* Sequential source: sniffs the magic without consuming a stream's bytes. */
static QvStatus open_sequential(QvIpcReader *r, QvError *error) {
  uint8_t head[FILE_HEAD];
  size_t got = 0;
  r->limit = INT64_MAX;
  r->bodies = qvi_recycler_new(); /* NULL (out of memory): no reuse, same bytes */
  QvStatus st = qvi_source_peek(r->src, head, FILE_HEAD, &got, error);
  if (st) return st;
  if (got < QV_IPC_MAGIC_SIZE || !has_magic(head)) return QV_OK;
  r->format = QV_IPC_FORMAT_FILE;
  if (got < FILE_HEAD)
    return qv_error_set(error, QV_ETRUNCATED,
                        "file format: %zu bytes is too short for an Arrow file", got);
  int64_t skipped;
  if ((st = qvi_source_skip(r->src, FILE_HEAD, &skipped, error))) return st;
  r->pos = FILE_HEAD;
  /* on a seekable descriptor the footer can be found, so the messages
   * stop where it starts */
  return qvi_source_seekable(r->src) ? find_footer(r, error) : QV_OK;
}

/* Memory or regular file: the size is known, the tail can be read. */
static QvStatus open_random(QvIpcReader *r, QvError *error) {
  const uint8_t *head = r->head;
  size_t got = 0;
  r->limit = qv_source_size(r->src);
  QvStatus st = qvi_source_pread(r->src, r->head, PREAD_AHEAD, 0, &got, error);
  if (st) return st;
  r->head_n = got;
  /* A stream cannot start with "ARRO" (as a length it exceeds any sane
   * metadata), so the magic alone decides; a short file is then reported as
   * a truncated file rather than as a bad stream. */
  if (got < QV_IPC_MAGIC_SIZE || !has_magic(head)) return QV_OK;
  r->format = QV_IPC_FORMAT_FILE;
  r->pos = FILE_HEAD;
  return find_footer(r, error);
}

/* Input that is not Arrow at all is named for what it is, rather than
 * reported as what its first bytes would mean as a message prefix: an empty
 * input (no Schema, no magic: Arrow C++ refuses it too), a NumPy .npy file,
 * a zip archive (.npz). */
static QvStatus refuse_foreign(QvIpcReader *r, QvError *error) {
  uint8_t head[8];
  size_t got = 0;
  if (qv_source_kind(r->src) == QV_SOURCE_STREAM) {
    if (r->format == QV_IPC_FORMAT_FILE) return QV_OK;
    QvStatus st = qvi_source_peek(r->src, head, sizeof head, &got, error);
    if (st) return st;
  } else {
    got = r->head_n < sizeof head ? r->head_n : sizeof head;
    memcpy(head, r->head, got);
  }
  if (got == 0)
    return qv_error_set(error, QV_EINVAL,
                        "empty input (0 bytes): an Arrow stream starts with a Schema message, "
                        "an Arrow file with the ARROW1 magic");
  if (got >= 6 && memcmp(head, "\x93NUMPY", 6) == 0)
    return qv_error_set(error, QV_EINVAL,
                        "a NumPy .npy file, not Arrow IPC: 'quiver tensor from-npy IN.npy OUT.arrow' "
                        "converts it");
  if (got >= 4 && (memcmp(head, "PK\3\4", 4) == 0 || memcmp(head, "PK\5\6", 4) == 0))
    return qv_error_set(error, QV_EINVAL,
                        "a zip archive (a NumPy .npz?), not Arrow IPC: 'quiver tensor from-npz IN.npz "
                        "OUT.arrow' converts an .npz");
  return QV_OK;
}

QvStatus qv_ipc_reader_new(QvIpcReader **out, QvSource *source, const QvIpcReaderOptions *options,
                           QvError *error) {
  if (out == NULL) return qv_error_set(error, QV_EARG, "NULL output");
  *out = NULL;
  if (source == NULL) return qv_error_set(error, QV_EARG, "NULL source");
  QvIpcReader *r = calloc(1, sizeof *r);
  if (r == NULL) return qv_error_set(error, QV_ENOMEM, "out of memory");
  QvStatus st = QV_OPTIONS_LOAD(&r->options, options, QvIpcReaderOptions, error);
  if (st) {
    free(r);
    return st;
  }
  QvIpcReaderOptions *o = &r->options;
  if (o->max_metadata_size <= 0) o->max_metadata_size = QV_IPC_DEFAULT_MAX_METADATA_SIZE;
  if (o->max_body_size <= 0) o->max_body_size = QV_IPC_DEFAULT_MAX_BODY_SIZE;
  r->decode.max_depth = o->max_depth;
  r->decode.max_tables = o->max_tables;
  r->src = source;
  st = qv_source_kind(source) == QV_SOURCE_STREAM ? open_sequential(r, error)
                                                   : open_random(r, error);
  if (st == QV_OK) st = refuse_foreign(r, error);
  if (st) {
    qvi_recycler_release(r->bodies);
    free(r);
    /* a path source reports which file was bad */
    return qv_source_kind(source) == QV_SOURCE_MEMORY
               ? st
               : qv_error_prefix(error, "%s", qv_source_name(source));
  }
  qv_source_retain(source);
  *out = r;
  return QV_OK;
}

void qv_ipc_reader_free(QvIpcReader *reader) {
  if (reader == NULL) return;
  qv_source_free(reader->src);
  /* bodies still held by messages are freed when those are released */
  qvi_recycler_close(reader->bodies);
  qvi_recycler_release(reader->bodies);
  free(reader);
}

QvIpcFormat qv_ipc_reader_format(const QvIpcReader *reader) { return reader->format; }

QvStatus qv_ipc_reader_footer(QvIpcReader *r, QvFooter *out, int64_t *footer_offset,
                              int32_t *footer_length, QvError *error) {
  memset(out, 0, sizeof *out);
  if (r->format != QV_IPC_FORMAT_FILE || !r->has_footer)
    return qv_error_set(error, QV_EARG,
                        "footer: input is not an Arrow file read from memory or a seekable file");
  int64_t off = r->footer_offset;
  int32_t len = r->footer_length;
  const uint8_t *bytes;
  uint8_t *copy = NULL;
  QvStatus st;
  if (qv_source_is_mapped(r->src)) {
    const uint8_t *all;
    size_t size;
    QvOwner *owner;
    if ((st = qvi_source_view(r->src, &all, &size, &owner, error))) return st;
    bytes = all + off;
  } else {
    if (len > r->options.max_metadata_size)
      return qv_error_set(error, QV_ELIMIT,
                          "footer at offset %lld: length %d exceeds the limit of %lld",
                          (long long)off, len, (long long)r->options.max_metadata_size);
    copy = malloc((size_t)len);
    if (copy == NULL) return qv_error_set(error, QV_ENOMEM, "out of memory reading the footer");
    size_t got;
    st = qvi_source_pread(r->src, copy, (size_t)len, off, &got, error);
    if (st == QV_OK && got < (size_t)len)
      st = qv_error_set(error, QV_ETRUNCATED, "the file shrank while being read");
    if (st) {
      free(copy);
      return qv_error_prefix(error, "footer at offset %lld", (long long)off);
    }
    bytes = copy;
  }
  if (footer_offset) *footer_offset = off;
  if (footer_length) *footer_length = len;
  st = qv_footer_decode(bytes, (size_t)len, &r->decode, out, error);
  free(copy);
  if (st) qv_error_prefix(error, "footer at offset %lld", (long long)off);
  return st;
}

/* ---- one message */

/* Interprets a prefix at `pos`: sets *prefix_size and *len; *eos for an end
 * marker. */
static QvStatus parse_prefix(const QvIpcReader *r, int64_t pos, const uint8_t *p, size_t avail,
                             size_t *prefix_size, int32_t *len, bool *eos, QvError *error) {
  *eos = false;
  if (avail < 4)
    return qv_error_set(error, QV_ETRUNCATED,
                        "message at offset %lld: input ends inside the message prefix",
                        (long long)pos);
  uint32_t first = qvi_le_u32(p);
  if (first == QV_IPC_CONTINUATION) {
    if (avail < 8)
      return qv_error_set(error, QV_ETRUNCATED,
                          "message at offset %lld: input ends inside the message prefix",
                          (long long)pos);
    *prefix_size = 8;
    *len = (int32_t)qvi_le_u32(p + 4);
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
                        (long long)pos, *len);
  /* a stream's first four bytes that are neither the continuation marker
   * nor a plausible length: this is not Arrow data, not a big message */
  if (*len > r->options.max_metadata_size && pos == 0 && *prefix_size == 4)
    return qv_error_set(error, QV_EINVAL,
                        "not Arrow IPC: the input starts with neither the ARROW1 magic nor a "
                        "message prefix (bytes %02x %02x %02x %02x)",
                        p[0], p[1], p[2], p[3]);
  if (*len > r->options.max_metadata_size)
    return qv_error_set(error, QV_ELIMIT,
                        "message at offset %lld: metadata length %d exceeds the limit of %lld",
                        (long long)pos, *len, (long long)r->options.max_metadata_size);
  return QV_OK;
}

static QvStatus decode_at(const QvIpcReader *r, QvIpcMessage *out, QvError *error) {
  QvStatus st = qv_message_decode(out->metadata, (size_t)out->metadata_length, &r->decode,
                                  &out->message, error);
  if (st) return qv_error_prefix(error, "message at offset %lld", (long long)out->offset);
  out->body_length = out->message.body_length;
  if (out->body_length > r->options.max_body_size)
    return qv_error_set(error, QV_ELIMIT,
                        "message at offset %lld: body length %lld exceeds the limit of %lld",
                        (long long)out->offset, (long long)out->body_length,
                        (long long)r->options.max_body_size);
  return QV_OK;
}

/* Memory a message owns when it does not point into a view: metadata read
 * with pread or sequentially, a body read sequentially or mapped alone. */
typedef struct MessageMemory {
  uint8_t *metadata;
  uint8_t *body;
  QvOwner *body_owner;
  QvRecycler *bodies; /* SEQ: where the body goes back (a reference) */
  size_t body_capacity;
} MessageMemory;

static void free_message_memory(void *p) {
  MessageMemory *m = p;
  qv_free(m->metadata);
  if (m->bodies != NULL) {
    qvi_recycler_put(m->bodies, m->body, m->body_capacity);
    qvi_recycler_release(m->bodies);
  } else {
    qv_free(m->body);
  }
  qv_owner_free(m->body_owner);
  free(m);
}

static QvStatus own_memory(QvIpcMessage *out, MessageMemory **mem, QvError *error) {
  *mem = calloc(1, sizeof **mem);
  if (*mem == NULL) return qv_error_set(error, QV_ENOMEM, "out of memory");
  out->owner = qv_owner_new(free_message_memory, *mem);
  if (out->owner == NULL) {
    free(*mem);
    return qv_error_set(error, QV_ENOMEM, "out of memory");
  }
  return QV_OK;
}

/* Sequential: up to n bytes, never past the message area's limit. */
static QvStatus seq_read(QvIpcReader *r, uint8_t *buf, size_t n, size_t *got, QvError *error) {
  int64_t here = qvi_source_position(r->src);
  if (here >= r->limit)
    n = 0;
  else if ((uint64_t)n > (uint64_t)(r->limit - here))
    n = (size_t)(r->limit - here);
  return qvi_source_read(r->src, buf, n, got, error);
}

/* Sequential: n bytes into a new 64-byte-aligned allocation that grows with
 * the data actually read. *got < n when the input ended early; *out is then
 * still set (free it with qv_free). *capacity: the allocation's size. */
static QvStatus seq_read_alloc(QvIpcReader *r, size_t n, uint8_t **out, size_t *got,
                               size_t *capacity, QvError *error) {
  *out = NULL;
  *got = 0;
  size_t cap = n < SEQ_READ_CHUNK ? n : SEQ_READ_CHUNK;
  uint8_t *buf = qv_aligned_alloc(cap);
  if (buf == NULL) return qv_error_set(error, QV_ENOMEM, "out of memory reading %zu bytes", cap);
  size_t done = 0;
  for (;;) {
    size_t k;
    QvStatus st = seq_read(r, buf + done, cap - done, &k, error);
    done += k;
    if (st || done < cap || done == n) {
      *out = buf;
      *got = done;
      *capacity = cap;
      return st;
    }
    size_t next = cap > n / 2 ? n : cap * 2;
    uint8_t *grown = qv_aligned_alloc(next);
    if (grown == NULL) {
      qv_free(buf);
      return qv_error_set(error, QV_ENOMEM, "out of memory reading %zu bytes", next);
    }
    memcpy(grown, buf, done);
    qv_free(buf);
    buf = grown;
    cap = next;
  }
}

/* Reads the prefix at `pos` into p (8 bytes); *avail receives how many
 * arrived before the end of the message area. PREAD fills ahead[] (*ahead_n
 * bytes) too. */
static QvStatus fetch_prefix(QvIpcReader *r, Mode mode, int64_t pos, const uint8_t *view,
                             uint8_t *p, size_t *avail, uint8_t *ahead, size_t *ahead_n,
                             QvError *error) {
  *avail = 0;
  if (mode == MODE_SEQ) {
    QvStatus st = seq_read(r, p, 4, avail, error);
    if (st || *avail < 4 || qvi_le_u32(p) != QV_IPC_CONTINUATION) return st;
    size_t more;
    st = seq_read(r, p + 4, 4, &more, error);
    *avail += more;
    return st;
  }
  size_t n = r->limit - pos < 8 ? (size_t)(r->limit - pos) : 8;
  if (mode == MODE_VIEW) {
    memcpy(p, view + pos, n);
    *avail = n;
    return QV_OK;
  }
  size_t want = r->limit - pos < PREAD_AHEAD ? (size_t)(r->limit - pos) : PREAD_AHEAD;
  QvStatus st = QV_OK;
  if ((uint64_t)pos + want <= r->head_n) {
    memcpy(ahead, r->head + pos, want);
    *ahead_n = want;
  } else {
    st = qvi_source_pread(r->src, ahead, want, pos, ahead_n, error);
  }
  *avail = *ahead_n < n ? *ahead_n : n;
  memcpy(p, ahead, *avail);
  return st;
}

/* The message at `pos` (the current position for MODE_SEQ). want_body false
 * leaves out->body NULL and reads, maps or copies no body byte (a
 * sequential source still consumes them). *end receives where the message
 * ends. QV_EOS at an end marker or the end of the message area. */
static QvStatus read_message(QvIpcReader *r, Mode mode, int64_t pos, bool want_body,
                             QvIpcMessage *out, int64_t *end, QvError *error) {
  const uint8_t *view = NULL;
  size_t view_size;
  QvOwner *view_owner = NULL;
  QvStatus st;
  if (mode != MODE_SEQ && pos >= r->limit) return QV_EOS;
  if (mode == MODE_VIEW && (st = qvi_source_view(r->src, &view, &view_size, &view_owner, error)))
    return st;
  uint8_t prefix_bytes[8], ahead[PREAD_AHEAD];
  size_t avail, ahead_n = 0;
  if ((st = fetch_prefix(r, mode, pos, view, prefix_bytes, &avail, ahead, &ahead_n, error)))
    return st;
  /* a stream may end without the marker */
  if (mode == MODE_SEQ && avail == 0) return QV_EOS;
  size_t prefix = 0;
  int32_t len = 0;
  bool eos;
  if ((st = parse_prefix(r, pos, prefix_bytes, avail, &prefix, &len, &eos, error))) return st;
  if (eos) return QV_EOS;
  out->offset = pos;
  out->legacy_prefix = prefix == 4;
  out->metadata_length = len;
  out->body_offset = pos + (int64_t)prefix + len;
  /* bytes after the prefix in the message area; unknown for a sequential
   * source, which finds out by reading */
  int64_t remain = mode == MODE_SEQ ? INT64_MAX : r->limit - pos - (int64_t)prefix;
  if (len > remain)
    return qv_error_set(error, QV_ETRUNCATED,
                        "message at offset %lld: metadata needs %d bytes, only %lld remain",
                        (long long)pos, len, (long long)remain);
  MessageMemory *mem = NULL;
  if (mode == MODE_VIEW) {
    out->metadata = view + pos + prefix;
  } else {
    if ((st = own_memory(out, &mem, error))) return st;
    size_t got = 0;
    if (mode == MODE_SEQ) {
      size_t cap;
      st = seq_read_alloc(r, (size_t)len, &mem->metadata, &got, &cap, error);
    } else if ((mem->metadata = qv_aligned_alloc((size_t)len)) == NULL) {
      st = qv_error_set(error, QV_ENOMEM, "out of memory reading %d bytes of metadata", len);
    } else {
      /* what the first pread brought, then the rest */
      size_t have = ahead_n > prefix ? ahead_n - prefix : 0;
      if (have > (size_t)len) have = (size_t)len;
      memcpy(mem->metadata, ahead + prefix, have);
      st = qvi_source_pread(r->src, mem->metadata + have, (size_t)len - have,
                           pos + (int64_t)(prefix + have), &got, error);
      got += have;
    }
    if (st) return qv_error_prefix(error, "message at offset %lld", (long long)pos);
    if (got < (size_t)len)
      return qv_error_set(error, QV_ETRUNCATED,
                          "message at offset %lld: metadata needs %d bytes, only %zu remain",
                          (long long)pos, len, got);
    out->metadata = mem->metadata;
  }
  if ((st = decode_at(r, out, error))) return st;
  remain -= len;
  if (out->body_length > remain)
    return qv_error_set(error, QV_ETRUNCATED,
                        "message at offset %lld: body needs %lld bytes, only %lld remain",
                        (long long)pos, (long long)out->body_length, (long long)remain);
  *end = out->body_offset + out->body_length;
  if (mode == MODE_VIEW) {
    if (want_body) out->body = view + out->body_offset;
    qv_owner_retain(view_owner);
    out->owner = view_owner;
    return QV_OK;
  }
  if (mode == MODE_PREAD) {
    if (!want_body) return QV_OK;
    st = qvi_source_map_range(r->src, out->body_offset, out->body_length, &out->body,
                             &mem->body_owner, error);
    if (st) return qv_error_prefix(error, "message at offset %lld", (long long)pos);
    return QV_OK;
  }
  /* sequential: body_length is at most max_body_size here; the allocation
   * grows with the bytes that really arrive */
  size_t got;
  if (want_body) {
    size_t n = (size_t)out->body_length, cap = 0;
    uint8_t *kept = qvi_recycler_take(r->bodies, n, &cap);
    if (kept != NULL) {
      /* a buffer released by an earlier message: its pages are in */
      qvi_path_hit(QV_PATH_SEQ_BODY_REUSED);
      mem->body = kept;
      st = seq_read(r, kept, n, &got, error);
    } else {
      st = seq_read_alloc(r, n, &mem->body, &got, &cap, error);
    }
    if (mem->body != NULL && r->bodies != NULL) {
      qvi_recycler_retain(r->bodies);
      mem->bodies = r->bodies;
      mem->body_capacity = cap;
    }
    if (st == QV_OK && got == n && n > r->largest_body) {
      /* room for two: the body a caller holds and the one read next */
      r->largest_body = n;
      qvi_recycler_allow(r->bodies, n <= SIZE_MAX / 4 ? 4 * n : SIZE_MAX);
    }
    out->body = mem->body;
  } else {
    int64_t skipped = 0;
    int64_t n = out->body_length;
    int64_t here = qvi_source_position(r->src);
    if (r->limit - here < n) n = r->limit - here;
    st = qvi_source_skip(r->src, n, &skipped, error);
    got = (size_t)skipped;
  }
  if (st) return qv_error_prefix(error, "message at offset %lld", (long long)pos);
  if (got < (size_t)out->body_length) {
    out->body = NULL;
    return qv_error_set(error, QV_ETRUNCATED,
                        "message at offset %lld: body needs %lld bytes, only %zu remain",
                        (long long)pos, (long long)out->body_length, got);
  }
  return QV_OK;
}

/* next() and nth(): the sticky error and end, then one message. `skipping`
 * (nth) prefers pread over mapping the whole file. */
static QvStatus advance(QvIpcReader *r, bool skipping, bool want_body, QvIpcMessage *out,
                        QvError *error) {
  memset(out, 0, sizeof *out);
  if (r->error.code != QV_OK) {
    if (error) *error = r->error;
    return r->error.code;
  }
  if (r->finished) return QV_EOS;
  Mode mode = MODE_VIEW;
  if (qv_source_kind(r->src) == QV_SOURCE_STREAM)
    mode = MODE_SEQ;
  else if ((skipping || r->options.map_each_body) && !qv_source_is_mapped(r->src))
    mode = MODE_PREAD;
  int64_t end = r->pos;
  QvStatus st = read_message(r, mode, r->pos, want_body, out, &end, &r->error);
  if (st == QV_OK) {
    r->pos = end;
    return QV_OK;
  }
  qv_ipc_message_reset(out);
  if (st == QV_EOS) {
    /* later reads must not see data that arrives after the end */
    r->finished = true;
    qv_error_clear(&r->error);
    return QV_EOS;
  }
  r->error.code = st;
  if (error) *error = r->error;
  return st;
}

QvStatus qv_ipc_reader_next(QvIpcReader *r, QvIpcMessage *out, QvError *error) {
  return advance(r, false, true, out, error);
}

QvStatus qv_ipc_reader_nth(QvIpcReader *r, int64_t index, QvIpcMessage *out, QvError *error) {
  memset(out, 0, sizeof *out);
  if (index < 0) return qv_error_set(error, QV_EARG, "negative message index %lld", (long long)index);
  for (int64_t i = 0;; i++) {
    QvStatus st = advance(r, true, i == index, out, error);
    if (st == QV_EOS) {
      if (i == 0) return qv_error_set(error, QV_EINVAL, "input holds no message");
      return qv_error_set(error, QV_EINVAL, "no message %lld: input holds %lld message%s",
                          (long long)index, (long long)i, i == 1 ? "" : "s");
    }
    if (st || i == index) return st;
    qv_ipc_message_reset(out);
  }
}

QvStatus qv_ipc_reader_message_at(QvIpcReader *r, int64_t offset, QvIpcMessage *out,
                                  QvError *error) {
  memset(out, 0, sizeof *out);
  if (qv_source_kind(r->src) == QV_SOURCE_STREAM)
    return qv_error_set(error, QV_EARG, "%s: a stream cannot be read at an offset",
                        qv_source_name(r->src));
  if (offset < 0 || offset > r->limit)
    return qv_error_set(error, QV_EINVAL,
                        "message at offset %lld: outside the message area of %lld bytes",
                        (long long)offset, (long long)r->limit);
  Mode mode = r->options.map_each_body && !qv_source_is_mapped(r->src) ? MODE_PREAD : MODE_VIEW;
  int64_t end;
  QvStatus st = read_message(r, mode, offset, true, out, &end, error);
  if (st) qv_ipc_message_reset(out);
  return st;
}

QvStatus qvi_ipc_source_nth(QvSource *source, int64_t index, const QvIpcReaderOptions *options,
                            QvIpcMessage *out, QvError *error) {
  memset(out, 0, sizeof *out);
  QvIpcReader *r;
  QvStatus st = qv_ipc_reader_new(&r, source, options, error);
  if (st) return st;
  st = qv_ipc_reader_nth(r, index, out, error);
  qv_ipc_reader_free(r);
  return st;
}

QvStatus qvi_source_error_prefix(const QvSource *source, QvStatus st, QvError *error) {
  const char *name = qv_source_name(source);
  /* qv_ipc_reader_new names the file in its own errors already */
  if (st && error && qv_source_kind(source) == QV_SOURCE_FILE &&
      strncmp(error->message, name, strlen(name)) != 0)
    qv_error_prefix(error, "%s", name);
  return st;
}
