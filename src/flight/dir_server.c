/* A Flight service over a directory of Arrow files (quiver/flight.h,
 * qv_flight_dir_server_new): ListFlights, GetFlightInfo, GetSchema and
 * DoGet over the Arrow files and streams below it (a PATH descriptor's
 * segments name a file relative to the directory; the ticket is that
 * relative path), files of Tensor messages served as one-column tensor
 * tables (each tensor a batch of shape[0] cells, as `quiver tensor
 * unstack` writes them), and DoPut into a new file. */
#define _DEFAULT_SOURCE /* realpath */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "flight/flight_internal.h"
#include "quiver/flight.h"
#include "quiver/ipc.h"
#include "quiver/recordbatch_ipc.h"
#include "quiver/tensor_column.h"
#include "quiver/tensor_ipc.h"
#include "util/options.h"
#include "util/grow.h"

#define MAX_DEPTH 8
#define MAX_PATH_LEN 4096

typedef struct Dir {
  char *root;
  char *real_root; /* root with every symbolic link resolved (realpath) */
  bool allow_put, allow_replace;
} Dir;

/* ---- names */

/* The relative path a descriptor or ticket names, checked: segments that
 * are not empty, ".", ".." or hidden (leading '.': temporary uploads), no
 * '/' or NUL inside a segment. *out malloc'd. */
static QvStatus rel_from_segments(char *const *seg, size_t n, char **out, QvError *error) {
  *out = NULL;
  if (n == 0 || n > MAX_DEPTH) return qv_error_set(error, QV_EINVAL, "a path of 1 to %d segments is needed", MAX_DEPTH);
  size_t len = 0;
  for (size_t i = 0; i < n; i++) {
    const char *s = seg[i];
    if (s[0] == 0 || s[0] == '.' || strchr(s, '/') != NULL)
      return qv_error_set(error, QV_EINVAL, "path segment '%s' is not allowed", s);
    len += strlen(s) + 1;
  }
  if (len > MAX_PATH_LEN) return qv_error_set(error, QV_EINVAL, "path too long");
  char *p = malloc(len);
  if (p == NULL) return qv_error_set(error, QV_ENOMEM, "out of memory");
  size_t at = 0;
  for (size_t i = 0; i < n; i++) {
    if (i) p[at++] = '/';
    size_t l = strlen(seg[i]);
    memcpy(p + at, seg[i], l);
    at += l;
  }
  p[at] = 0;
  *out = p;
  return QV_OK;
}

static QvStatus rel_from_ticket(const uint8_t *t, size_t n, char **out, QvError *error) {
  *out = NULL;
  if (n == 0 || n > MAX_PATH_LEN || memchr(t, 0, n))
    return qv_error_set(error, QV_EINVAL, "bad ticket");
  char *copy = strndup((const char *)t, n);
  if (copy == NULL) return qv_error_set(error, QV_ENOMEM, "out of memory");
  char *seg[MAX_DEPTH + 1];
  size_t k = 0;
  QvStatus st = QV_OK;
  for (char *s = copy, *slash;; s = slash + 1) {
    if (k == MAX_DEPTH) {
      st = qv_error_set(error, QV_EINVAL, "bad ticket");
      break;
    }
    seg[k++] = s;
    slash = strchr(s, '/');
    if (slash == NULL) break;
    *slash = 0;
  }
  if (!st) st = rel_from_segments(seg, k, out, error);
  free(copy);
  return st;
}

static char *join(const char *a, const char *b) {
  size_t n = strlen(a) + strlen(b) + 2;
  char *p = malloc(n);
  if (p) snprintf(p, n, "%s/%s", a, b);
  return p;
}

/* Symbolic links: a path is served when what it resolves to (every link
 * followed, realpath) lies inside the served directory, so a link to a
 * file or directory inside it works and one leading out of it is refused
 * (*outside true, as for "../x" in a name). *out: the resolved path, which
 * is what gets opened. NULL *out, QV_EIO: no such file. */
static QvStatus resolve(const Dir *d, const char *rel, char **out, bool *outside,
                        QvError *error) {
  *out = NULL;
  *outside = false;
  char *p = join(d->root, rel);
  if (p == NULL) return qv_error_set(error, QV_ENOMEM, "out of memory");
  char *r = realpath(p, NULL);
  free(p);
  if (r == NULL) return qv_error_set(error, QV_EIO, "no file %s", rel);
  size_t n = strlen(d->real_root);
  bool in = strncmp(r, d->real_root, n) == 0 && (r[n] == '/' || (n == 1 && r[0] == '/'));
  if (!in) {
    free(r);
    *outside = true;
    return qv_error_set(error, QV_EIO,
                        "%s leads out of the served directory (a symbolic link is followed only "
                        "to a place inside it)", rel);
  }
  *out = r;
  return QV_OK;
}

/* The handlers' check: a path whose links lead out is PERMISSION_DENIED. */
static QvStatus refuse_outside(const Dir *d, QvFlightCall *call, const char *rel,
                               QvError *error) {
  char *r;
  bool outside;
  QvStatus st = resolve(d, rel, &r, &outside, error);
  free(r);
  if (outside) {
    qv_flight_call_set_code(call, QV_FLIGHT_PERMISSION_DENIED);
    return st;
  }
  return QV_OK; /* a missing file is the caller's NOT_FOUND */
}

/* ---- tensor files as tables */

typedef struct TensorStream {
  QvIpcReader *ipc;
  struct ArrowSchema schema; /* of the first tensor's batch */
  struct ArrowArray first;   /* its batch, handed out first */
  QvError error;
  bool failed;
} TensorStream;

static QvStatus tensor_batch(QvIpcMessage *msg, struct ArrowSchema *schema,
                             struct ArrowArray *batch, QvError *error) {
  QvTensor t;
  QvStatus st = qv_tensor_from_message(msg, &t, error);
  if (st) return st;
  struct ArrowSchema field;
  struct ArrowArray column;
  st = qv_tensor_column_unstack(&t, NULL, &field, &column, error);
  qv_tensor_reset(&t);
  if (st) return st;
  st = qv_tensor_column_to_batch(&field, &column, schema, batch, error);
  if (field.release) field.release(&field);
  if (column.release) column.release(&column);
  return st;
}

static bool same_format(const struct ArrowSchema *a, const struct ArrowSchema *b) {
  if (strcmp(a->format, b->format) || a->n_children != b->n_children) return false;
  const char *ma = a->metadata, *mb = b->metadata;
  if ((ma == NULL) != (mb == NULL)) return false;
  for (int64_t i = 0; i < a->n_children; i++)
    if (!same_format(a->children[i], b->children[i])) return false;
  return true;
}

static int ts_get_schema(struct ArrowArrayStream *s, struct ArrowSchema *out) {
  TensorStream *t = s->private_data;
  return qv_arrow_schema_copy(&t->schema, out, &t->error) ? EINVAL : 0;
}

static int ts_get_next(struct ArrowArrayStream *s, struct ArrowArray *out) {
  TensorStream *t = s->private_data;
  memset(out, 0, sizeof *out);
  if (t->failed) return EINVAL;
  if (t->first.release) {
    *out = t->first;
    t->first.release = NULL;
    return 0;
  }
  QvIpcMessage msg;
  QvStatus st = qv_ipc_reader_next(t->ipc, &msg, &t->error);
  if (st == QV_EOS) return 0;
  struct ArrowSchema sch;
  if (!st) {
    st = tensor_batch(&msg, &sch, out, &t->error);
    qv_ipc_message_reset(&msg);
    if (!st) {
      if (!same_format(&sch, &t->schema)) {
        out->release(out);
        st = qv_error_set(&t->error, QV_EINVAL,
                          "a tensor of another type or cell shape than the first");
      }
      sch.release(&sch);
    }
  }
  if (st) {
    t->failed = true;
    t->error.code = st;
    return st == QV_ENOMEM ? ENOMEM : EINVAL;
  }
  return 0;
}

static const char *ts_last_error(struct ArrowArrayStream *s) {
  TensorStream *t = s->private_data;
  return t->error.message;
}

static void ts_release(struct ArrowArrayStream *s) {
  if (s == NULL || s->release == NULL) return;
  TensorStream *t = s->private_data;
  qv_ipc_reader_free(t->ipc);
  if (t->first.release) t->first.release(&t->first);
  if (t->schema.release) t->schema.release(&t->schema);
  free(t);
  s->release = NULL;
}

/* A table over `path`: record batches, or tensors as a tensor column. */
static QvStatus open_table(const char *path, struct ArrowArrayStream *out, QvError *error) {
  memset(out, 0, sizeof *out);
  QvSource *src;
  QvStatus st = qv_source_new_path(&src, path, error);
  if (st) return st;
  QvIpcReader *ipc;
  st = qv_ipc_reader_new(&ipc, src, NULL, error);
  QvIpcMessage msg = {0};
  if (!st) st = qv_ipc_reader_next(ipc, &msg, error);
  if (st == QV_EOS) st = qv_error_set(error, QV_EINVAL, "no messages");
  if (!st && msg.message.header_type == QV_HEADER_TENSOR) {
    TensorStream *t = calloc(1, sizeof *t);
    if (t == NULL) st = qv_error_set(error, QV_ENOMEM, "out of memory");
    if (!st) st = tensor_batch(&msg, &t->schema, &t->first, error);
    qv_ipc_message_reset(&msg);
    if (st) {
      if (t) {
        if (t->schema.release) t->schema.release(&t->schema);
        free(t);
      }
      qv_ipc_reader_free(ipc);
    } else {
      t->ipc = ipc;
      out->get_schema = ts_get_schema;
      out->get_next = ts_get_next;
      out->get_last_error = ts_last_error;
      out->release = ts_release;
      out->private_data = t;
    }
    qv_source_free(src);
    return st;
  }
  qv_ipc_message_reset(&msg);
  if (!st) {
    qv_ipc_reader_free(ipc);
    st = qv_rb_stream_reader_new(out, src, NULL, error);
  } else if (ipc) {
    qv_ipc_reader_free(ipc);
  }
  qv_source_free(src);
  return st;
}

/* Rows of the file: every RecordBatch's length (metadata only), or every
 * tensor's shape[0]. */
static QvStatus count_rows(const char *path, int64_t *rows, QvError *error) {
  *rows = 0;
  QvSource *src;
  QvStatus st = qv_source_new_path(&src, path, error);
  if (st) return st;
  QvIpcReader *ipc;
  QvIpcReaderOptions o = {.struct_size = sizeof o, .map_each_body = true};
  st = qv_ipc_reader_new(&ipc, src, &o, error);
  qv_source_free(src);
  if (st) return st;
  QvIpcMessage msg;
  while ((st = qv_ipc_reader_next(ipc, &msg, error)) == QV_OK) {
    if (msg.message.header_type == QV_HEADER_RECORD_BATCH)
      *rows += msg.message.header.record_batch.length;
    else if (msg.message.header_type == QV_HEADER_TENSOR && msg.message.header.tensor.ndim > 0)
      *rows += msg.message.header.tensor.shape[0].size;
    qv_ipc_message_reset(&msg);
  }
  qv_ipc_reader_free(ipc);
  return st == QV_EOS ? QV_OK : st;
}

/* ---- FlightInfo of one file */

static QvStatus info_of(Dir *d, const char *rel, QvFlightInfo *out, QvError *error) {
  memset(out, 0, sizeof *out);
  char *path;
  bool outside;
  QvStatus st = resolve(d, rel, &path, &outside, error);
  if (st) return st;
  struct stat sb;
  if (stat(path, &sb) != 0 || !S_ISREG(sb.st_mode)) {
    free(path);
    return qv_error_set(error, QV_EIO, "no file %s", rel);
  }
  struct ArrowArrayStream s;
  st = open_table(path, &s, error);
  struct ArrowSchema schema = {0};
  if (!st) {
    st = qv_rb_stream_get_schema(&s, &schema, error);
    s.release(&s);
  }
  if (!st) st = qvi_flight_schema_encode(&schema, &out->schema.data, &out->schema.size, error);
  if (schema.release) schema.release(&schema);
  if (!st) st = count_rows(path, &out->total_records, error);
  free(path);
  if (st) {
    /* schema bytes came from qv_free's allocator */
    qv_free(out->schema.data);
    memset(out, 0, sizeof *out);
    return qv_error_prefix(error, "%s", rel);
  }
  /* the schema bytes move to malloc memory (qv_flight_info_reset frees) */
  uint8_t *m = malloc(out->schema.size + 1);
  if (m) {
    memcpy(m, out->schema.data, out->schema.size);
    m[out->schema.size] = 0;
  }
  qv_free(out->schema.data);
  out->schema.data = m;
  out->total_bytes = (int64_t)sb.st_size;
  /* descriptor: the path's segments; one endpoint, this service */
  out->has_descriptor = true;
  out->descriptor.type = QV_FLIGHT_DESCRIPTOR_PATH;
  out->endpoints = calloc(1, sizeof *out->endpoints);
  char *segs = strdup(rel);
  size_t n = 1;
  for (const char *p = rel; *p; p++) n += *p == '/';
  out->descriptor.path = calloc(n, sizeof(char *));
  bool ok = m && out->endpoints && segs && out->descriptor.path;
  if (ok) {
    out->n_endpoints = 1;
    out->endpoints[0].ticket.data = (uint8_t *)strdup(rel);
    out->endpoints[0].ticket.size = strlen(rel);
    ok = out->endpoints[0].ticket.data != NULL;
    size_t k = 0;
    for (char *s = segs, *slash; ok; s = slash + 1) {
      slash = strchr(s, '/');
      if (slash) *slash = 0;
      out->descriptor.path[k] = strdup(s);
      ok = out->descriptor.path[k++] != NULL;
      out->descriptor.n_path = k;
      if (slash == NULL) break;
    }
  }
  free(segs);
  if (!ok) {
    qv_flight_info_reset(out);
    return qv_error_set(error, QV_ENOMEM, "out of memory");
  }
  return QV_OK;
}

/* ---- handlers */

static QvStatus list_dir(Dir *d, QvFlightCall *call, const char *rel, int depth, bool paths,
                         QvError *error) {
  char *path = rel ? join(d->root, rel) : strdup(d->root);
  if (path == NULL) return qv_error_set(error, QV_ENOMEM, "out of memory");
  DIR *dh = opendir(path);
  if (dh == NULL) {
    free(path);
    return QV_OK; /* vanished meanwhile */
  }
  /* sorted names, for a stable listing */
  char **names = NULL;
  size_t n = 0, cap = 0;
  struct dirent *e;
  QvStatus st = QV_OK;
  while ((e = readdir(dh)) != NULL) {
    if (e->d_name[0] == '.') continue;
    if (n == cap) {
      char **g = qvi_grow_array(names, &cap, n + 1, 32, sizeof *g);
      if (g == NULL) {
        st = qv_error_set(error, QV_ENOMEM, "out of memory");
        break;
      }
      names = g;
    }
    names[n] = strdup(e->d_name);
    if (names[n] == NULL) {
      st = qv_error_set(error, QV_ENOMEM, "out of memory");
      break;
    }
    n++;
  }
  closedir(dh);
  for (size_t i = 1; i < n; i++)
    for (size_t j = i; j > 0 && strcmp(names[j - 1], names[j]) > 0; j--) {
      char *t = names[j];
      names[j] = names[j - 1];
      names[j - 1] = t;
    }
  for (size_t i = 0; !st && i < n && !qv_flight_call_cancelled(call); i++) {
    char *r = rel ? join(rel, names[i]) : strdup(names[i]);
    char *full = r ? join(d->root, r) : NULL;
    struct stat sb;
    bool link_to_file = false;
    if (r == NULL || full == NULL) {
      st = qv_error_set(error, QV_ENOMEM, "out of memory");
    } else if (lstat(full, &sb) != 0) {
      /* vanished meanwhile */
    } else if (S_ISLNK(sb.st_mode)) {
      /* a link to a file inside the directory is a flight; links to
       * directories are not descended (no cycles), though a path through
       * one that stays inside is served */
      char *target;
      bool outside;
      QvError ignored;
      struct stat tb;
      if (resolve(d, r, &target, &outside, &ignored) == QV_OK) {
        link_to_file = stat(target, &tb) == 0 && S_ISREG(tb.st_mode);
        free(target);
      }
    }
    if (st || full == NULL) {
    } else if (!link_to_file && S_ISDIR(sb.st_mode)) {
      if (depth + 1 < MAX_DEPTH) st = list_dir(d, call, r, depth + 1, paths, error);
    } else if (link_to_file || S_ISREG(sb.st_mode)) {
      QvFlightInfo info;
      QvError ignored;
      /* files that are not Arrow data are not flights */
      if (info_of(d, r, &info, &ignored) == QV_OK) {
        st = paths ? qv_flight_call_send_result(call, r, strlen(r), error)
                   : qv_flight_call_send_info(call, &info, error);
        qv_flight_info_reset(&info);
      }
    }
    free(full);
    free(r);
  }
  for (size_t i = 0; i < n; i++) free(names[i]);
  free(names);
  free(path);
  return st;
}

static QvStatus d_list(void *ctx, QvFlightCall *call, const uint8_t *crit, size_t n,
                       QvError *error) {
  (void)crit;
  (void)n;
  return list_dir(ctx, call, NULL, 0, false, error);
}

static QvStatus not_found(QvFlightCall *call, QvStatus st, QvError *error) {
  if (st == QV_EIO) {
    qv_flight_call_set_code(call, QV_FLIGHT_NOT_FOUND);
    return st;
  }
  (void)error;
  return st;
}

static QvStatus rel_of(QvFlightCall *call, const QvFlightDescriptor *desc, char **rel,
                       QvError *error) {
  if (desc->type != QV_FLIGHT_DESCRIPTOR_PATH) {
    qv_flight_call_set_code(call, QV_FLIGHT_INVALID_ARGUMENT);
    return qv_error_set(error, QV_EINVAL, "this service takes PATH descriptors only");
  }
  return rel_from_segments(desc->path, desc->n_path, rel, error);
}

static QvStatus d_info(void *ctx, QvFlightCall *call, const QvFlightDescriptor *desc,
                       QvFlightInfo *out, QvError *error) {
  char *rel;
  QvStatus st = rel_of(call, desc, &rel, error);
  if (st) return st;
  st = refuse_outside(ctx, call, rel, error);
  if (st) {
    free(rel);
    return st;
  }
  st = info_of(ctx, rel, out, error);
  free(rel);
  return not_found(call, st, error);
}

static QvStatus d_poll(void *ctx, QvFlightCall *call, const QvFlightDescriptor *desc,
                       QvFlightPollInfo *out, QvError *error) {
  QvStatus st = d_info(ctx, call, desc, &out->info, error);
  if (!st) {
    out->has_info = true;
    out->has_progress = true;
    out->progress = 1.0;
  }
  return st;
}

/* The served file `rel` (taken over) opened as a stream: refused outside
 * the directory (the call's code set by refuse_outside), NOT_FOUND when it
 * is no regular file or cannot be read. */
static QvStatus open_served(Dir *d, QvFlightCall *call, char *rel, struct ArrowArrayStream *out,
                            QvError *error) {
  QvStatus st = refuse_outside(d, call, rel, error);
  if (st) {
    free(rel);
    return st;
  }
  char *path = NULL;
  bool outside;
  struct stat sb;
  if ((st = resolve(d, rel, &path, &outside, error))) {
  } else if (stat(path, &sb) != 0 || !S_ISREG(sb.st_mode)) {
    st = qv_error_set(error, QV_EIO, "no file %s", rel);
  } else {
    st = open_table(path, out, error);
  }
  free(path);
  free(rel);
  return not_found(call, st, error);
}

static QvStatus d_schema(void *ctx, QvFlightCall *call, const QvFlightDescriptor *desc,
                         struct ArrowSchema *out, QvError *error) {
  char *rel;
  QvStatus st = rel_of(call, desc, &rel, error);
  if (st) return st;
  struct ArrowArrayStream s;
  if ((st = open_served(ctx, call, rel, &s, error))) return st;
  st = qv_rb_stream_get_schema(&s, out, error);
  s.release(&s);
  return not_found(call, st, error);
}

static QvStatus d_get(void *ctx, QvFlightCall *call, const uint8_t *ticket, size_t n,
                      struct ArrowArrayStream *out, QvError *error) {
  char *rel;
  QvStatus st = rel_from_ticket(ticket, n, &rel, error);
  if (st) return st;
  return open_served(ctx, call, rel, out, error);
}

static bool ends_with(const char *s, const char *suffix) {
  size_t a = strlen(s), b = strlen(suffix);
  return a >= b && strcmp(s + a - b, suffix) == 0;
}

static QvStatus d_put(void *ctx, QvFlightCall *call, const QvFlightDescriptor *desc,
                      struct ArrowArrayStream *in, QvError *error) {
  Dir *d = ctx;
  if (!d->allow_put) {
    qv_flight_call_set_code(call, QV_FLIGHT_PERMISSION_DENIED);
    return qv_error_set(error, QV_EINVAL, "this server does not take uploads (see --allow-put)");
  }
  char *rel;
  QvStatus st = rel_of(call, desc, &rel, error);
  if (st) return st;
  char *target = join(d->root, rel);
  /* the temporary file: hidden (not listed, not servable), same directory */
  char *slash = target ? strrchr(target, '/') : NULL;
  char *tmp = NULL;
  if (slash) {
    size_t n = strlen(target) + 32;
    tmp = malloc(n);
    if (tmp)
      snprintf(tmp, n, "%.*s/.%s.upload-XXXXXX", (int)(slash - target), target, slash + 1);
  }
  int fd = -1;
  struct stat sb;
  /* the directory it goes into: inside the served one, links resolved */
  bool outside = false;
  if (tmp != NULL && strchr(rel, '/') != NULL) {
    char *parent = strndup(rel, (size_t)(strrchr(rel, '/') - rel));
    char *real = NULL;
    if (parent == NULL) st = qv_error_set(error, QV_ENOMEM, "out of memory");
    else if (resolve(d, parent, &real, &outside, error) != QV_OK && !outside)
      st = qv_error_set(error, QV_EIO, "no directory %s to store %s in", parent, rel);
    free(real);
    free(parent);
    if (outside) {
      qv_flight_call_set_code(call, QV_FLIGHT_PERMISSION_DENIED);
      st = QV_EIO;
    }
  }
  if (st) {
  } else if (tmp == NULL) st = qv_error_set(error, QV_ENOMEM, "out of memory");
  else if (!d->allow_replace && lstat(target, &sb) == 0) {
    qv_flight_call_set_code(call, QV_FLIGHT_ALREADY_EXISTS);
    st = qv_error_set(error, QV_EINVAL, "%s exists already", rel);
  } else if ((fd = mkstemp(tmp)) < 0) {
    st = qv_error_set(error, QV_EIO, "cannot create a file for %s: %s", rel, strerror(errno));
  } else {
    /* mkstemp makes 0600: a stored file gets the usual 0666 & ~umask */
    mode_t mask = umask(0);
    umask(mask);
    fchmod(fd, 0666 & ~mask);
  }
  if (!st) {
    QvSink *sink;
    st = qv_sink_new_fd(&sink, fd, error);
    if (!st) {
      QvRbWriteOptions wo = {.struct_size = sizeof wo, .validate = QV_VALIDATE_FULL};
      wo.format = ends_with(rel, ".arrows") || ends_with(rel, ".stream") ? QV_IPC_FORMAT_STREAM
                                                                         : QV_IPC_FORMAT_FILE;
      st = qv_rb_write_all(in, sink, &wo, error);
      if (!st) st = qv_sink_finish(sink, error);
      qv_sink_free(sink);
    }
    if (!st && qv_flight_call_cancelled(call))
      st = qv_error_set(error, QV_EIO, "the upload was cancelled");
    if (!st && fsync(fd) != 0) st = qv_error_set(error, QV_EIO, "fsync: %s", strerror(errno));
    if (close(fd) != 0 && !st) st = qv_error_set(error, QV_EIO, "close: %s", strerror(errno));
    if (!st) {
      /* link() refuses an existing target atomically; rename replaces */
      if (d->allow_replace) {
        if (rename(tmp, target) != 0)
          st = qv_error_set(error, QV_EIO, "rename: %s", strerror(errno));
      } else if (link(tmp, target) != 0) {
        if (errno == EEXIST) {
          qv_flight_call_set_code(call, QV_FLIGHT_ALREADY_EXISTS);
          st = qv_error_set(error, QV_EINVAL, "%s exists already", rel);
        } else {
          st = qv_error_set(error, QV_EIO, "link: %s", strerror(errno));
        }
      }
    }
    unlink(tmp); /* after link, or a failed upload: nothing stays */
    if (!st) {
      char *dir = strndup(target, (size_t)(slash - target));
      int dfd = dir ? open(dir, O_RDONLY | O_DIRECTORY) : -1;
      if (dfd >= 0) {
        fsync(dfd);
        close(dfd);
      }
      free(dir);
    }
  }
  if (!st) {
    char msg[64];
    snprintf(msg, sizeof msg, "stored %s", rel);
    st = qv_flight_call_send_put_result(call, msg, strlen(msg), error);
  }
  free(tmp);
  free(target);
  free(rel);
  return st;
}

static QvStatus d_actions(void *ctx, QvFlightCall *call, QvError *error) {
  (void)ctx;
  QvFlightActionType t = {.type = "list-paths",
                          .description = "the relative path of every flight, one Result each"};
  return qv_flight_call_send_action_type(call, &t, error);
}

static QvStatus d_action(void *ctx, QvFlightCall *call, const QvFlightAction *a,
                         QvError *error) {
  if (strcmp(a->type, "list-paths") != 0) {
    qv_flight_call_set_code(call, QV_FLIGHT_INVALID_ARGUMENT);
    return qv_error_set(error, QV_EINVAL, "unknown action '%s' (ListActions lists them)",
                        a->type);
  }
  return list_dir(ctx, call, NULL, 0, true, error);
}

static void d_release(void *ctx) {
  Dir *d = ctx;
  free(d->root);
  free(d->real_root);
  free(d);
}

QvStatus qv_flight_dir_server_new(QvFlightServer **out, const char *dir, const char *host,
                                  int port, const QvFlightServerOptions *server_options,
                                  const QvFlightDirOptions *dir_options, QvError *error) {
  *out = NULL;
  QvFlightDirOptions o;
  QvStatus st = QV_OPTIONS_LOAD(&o, dir_options, QvFlightDirOptions, error);
  if (st) return st;
  struct stat sb;
  if (dir == NULL || stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode))
    return qv_error_set(error, QV_EIO, "%s is not a directory", dir ? dir : "(null)");
  Dir *d = calloc(1, sizeof *d);
  if (d == NULL) return qv_error_set(error, QV_ENOMEM, "out of memory");
  d->root = strdup(dir);
  d->real_root = realpath(dir, NULL);
  d->allow_put = o.allow_put;
  d->allow_replace = o.allow_replace;
  if (d->root == NULL || d->real_root == NULL) {
    free(d->root);
    free(d->real_root);
    free(d);
    return qv_error_set(error, QV_ENOMEM, "out of memory");
  }
  /* the handlers' release frees d, also when the server cannot start */
  QvFlightHandlers h = {.ctx = d, .release = d_release, .list_flights = d_list,
                        .get_flight_info = d_info, .poll_flight_info = d_poll,
                        .get_schema = d_schema, .do_get = d_get, .do_put = d_put,
                        .list_actions = d_actions, .do_action = d_action};
  return qv_flight_server_new(out, host, port, &h, server_options, error);
}
