/* Record batch reading: IPC Schema -> ArrowSchema, RecordBatch and
 * DictionaryBatch bodies -> ArrowArray (zero-copy where possible), the
 * stream reader (an ArrowArrayStream) and the file reader (footer, random
 * access). Every length and offset from the input is checked before it is
 * used; nothing is allocated in proportion to a count before the count has
 * been checked against the bytes that hold it. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adapters/rb_swap.h"
#include "adapters/tensor_message.h"
#include "ipc/compression_internal.h"
#include "ipc/source_internal.h"
#include "util/c_format.h"
#include "util/cpu.h"
#include "util/errpath.h"
#include "util/grow.h"
#include "util/idmap.h"
#include "util/load.h"
#include "util/options.h"
#include "util/recycle.h"
#include "quiver/recordbatch_ipc.h"

/* ---- IPC schema -> ArrowSchema */

static char *dup_n(const char *s, size_t n) {
  char *d = malloc(n + 1);
  if (d) {
    if (n) memcpy(d, s, n);
    d[n] = '\0';
  }
  return d;
}

static QvStatus field_to_schema(const QvField *f, struct ArrowSchema *out, int depth,
                                QvError *error);

static QvStatus children_to_schema(const QvField *f, struct ArrowSchema *s, int depth,
                                   QvError *error) {
  for (int64_t i = 0; i < f->n_children; i++) {
    QvStatus st = field_to_schema(&f->children[i], s->children[i], depth + 1, error);
    if (st) return qv_error_prefix(error, "child %lld", (long long)i);
  }
  return QV_OK;
}

static QvStatus add_metadata(struct ArrowSchema *s, int64_t n, const QvKeyValue *kv,
                             QvError *error) {
  for (int64_t i = 0; i < n; i++) {
    QvStatus st = qv_arrow_schema_add_metadata(s, kv[i].key ? kv[i].key : "", kv[i].key ? kv[i].key_len : 0,
                                         kv[i].value ? kv[i].value : "",
                                         kv[i].value ? kv[i].value_len : 0, error);
    if (st) return st;
  }
  return QV_OK;
}

static QvStatus field_to_schema(const QvField *f, struct ArrowSchema *out, int depth,
                                QvError *error) {
  memset(out, 0, sizeof *out);
  if (depth > QV_ARRAY_MAX_DEPTH)
    return qv_error_set(error, QV_ELIMIT, "fields nested deeper than %d", QV_ARRAY_MAX_DEPTH);
  size_t fsize = 64 + (f->type.id == QV_TYPE_TIMESTAMP ? f->type.u.timestamp.timezone_len : 0) +
                 (f->type.id == QV_TYPE_UNION ? 5 * (size_t)f->n_children : 0);
  char *fmt = malloc(fsize);
  char *name = f->name ? dup_n(f->name, f->name_len) : NULL;
  QvStatus st = QV_OK;
  if (fmt == NULL || (f->name && name == NULL)) {
    st = qv_error_set(error, QV_ENOMEM, "out of memory");
    goto done;
  }
  if ((st = qvi_type_c_format(&f->type, f->n_children, fmt, fsize, error))) goto done;
  int64_t flags = f->nullable ? ARROW_FLAG_NULLABLE : 0;
  if (f->type.id == QV_TYPE_MAP && f->type.u.map.keys_sorted) flags |= ARROW_FLAG_MAP_KEYS_SORTED;
  if (f->dictionary) {
    if (f->dictionary->is_ordered) flags |= ARROW_FLAG_DICTIONARY_ORDERED;
    if ((st = qv_arrow_schema_init(out, qvi_int_c_format(f->dictionary->index_type), name, flags, 0, error)) ||
        (st = qv_arrow_schema_alloc_dictionary(out, error)) ||
        (st = qv_arrow_schema_init(out->dictionary, fmt, "", ARROW_FLAG_NULLABLE, f->n_children, error)) ||
        (st = children_to_schema(f, out->dictionary, depth + 1, error)))
      goto done;
  } else {
    if ((st = qv_arrow_schema_init(out, fmt, name, flags, f->n_children, error)) ||
        (st = children_to_schema(f, out, depth, error)))
      goto done;
  }
  st = add_metadata(out, f->n_metadata, f->metadata, error);
done:
  free(fmt);
  free(name);
  if (st && out->release) out->release(out);
  return st;
}

QvStatus qv_rb_field_to_schema(const QvField *field, struct ArrowSchema *out, QvError *error) {
  QvStatus st = field_to_schema(field, out, 0, error);
  if (st) return st;
  if ((st = qv_arrow_schema_validate(out, error))) out->release(out);
  return st;
}

/* A field's type in Arrow C++'s spelling (quiver/array.h), for messages;
 * the bare type name when the field does not convert. */
static void field_type_text(const QvField *f, char *buf, size_t size) {
  struct ArrowSchema s;
  if (field_to_schema(f, &s, 0, NULL) == QV_OK) {
    QvStatus st = qv_arrow_schema_to_string(&s, 0, buf, size, NULL, NULL);
    s.release(&s);
    if (st == QV_OK) return;
  }
  qv_type_describe(&f->type, buf, size);
}

static QvStatus schema_from_ipc(const QvSchema *s, struct ArrowSchema *out, QvError *error) {
  QvStatus st = qv_arrow_schema_init(out, "+s", "", 0, s->n_fields, error);
  if (st) return st;
  for (int64_t i = 0; i < s->n_fields && !st; i++) {
    st = field_to_schema(&s->fields[i], out->children[i], 0, error);
    if (st) {
      const QvField *f = &s->fields[i];
      qv_error_prefix(error, "field %lld (%.*s)", (long long)i, f->name ? (int)(f->name_len > 64 ? 64 : f->name_len) : 0,
                      f->name ? f->name : "");
    }
  }
  if (!st) st = add_metadata(out, s->n_metadata, s->metadata, error);
  if (!st) st = qv_arrow_schema_validate(out, error);
  if (st) out->release(out);
  return st;
}

/* ---- reader core: schema, dictionaries, batch loading */

/* Longest dictionary that delta batches may build up (delta values are
 * copied into one array; a length without bytes behind it, e.g. of a struct
 * without children, must not turn into an unbounded copy). */
#define QV_RB_MAX_DICTIONARY_LENGTH ((int64_t)INT32_MAX)

typedef struct DictState {
  int64_t id;
  const QvField *field;                   /* the first field that uses the id */
  char *path;                             /* its path, for messages */
  const struct ArrowSchema *schema_node;  /* its schema (index type, values) */
  const struct ArrowSchema *value_schema; /* its values' type */
  QvArrayView view;                       /* for loading dictionary batches */
  struct ArrowArray array;                /* current values; release NULL before the first */
} DictState;

typedef struct PendingBuffer {
  int64_t index;   /* in the message's buffer list */
  int64_t column;  /* top-level column, -1 in a dictionary batch */
  QvSwapKind swap; /* conversion to host order after decompressing */
} PendingBuffer;

/* The compressed buffers of one message, decompressed together once its
 * structure has been checked. */
typedef struct Jobs {
  QvCodecJob *jobs;
  PendingBuffer *pending;
  int64_t n, cap;
  QvCompression codec;
  QvCodecAsync *async; /* submitted, not yet waited for */
} Jobs;

/* A record batch whose structure has been checked and whose buffers may
 * still be decompressing on the workers; or, read ahead, the failure or
 * the end of the stream that the next call reports. */
typedef struct Batch {
  bool used;
  QvStatus status; /* QV_OK: a batch; QV_EOS: the end; else the failure */
  QvError error;
  int64_t index;   /* file: its block; stream: its message's offset */
  QvArrayView view; /* the columns (a root struct) */
  QvOwner *owner;  /* the memory its arrays keep */
  Jobs jobs;
  /* references to the dictionaries it uses: read ahead, it is exported
   * after later dictionary batches may have replaced or grown them */
  struct ArrowArray *dicts;
  int64_t n_dicts, cap_dicts;
} Batch;

typedef struct Core {
  QvRbReadOptions opt;
  const QvSchema *ipc_schema;
  struct ArrowSchema schema;
  int64_t n_dicts;
  int64_t dict_capacity;
  DictState *dicts;
  QvIdMap dict_index; /* id -> index into dicts */
  int64_t node_id_capacity;
  /* the id of every dictionary-encoded node in pre-order (QvJsonData's
   * order: a node, its values' type, its children); ids may repeat */
  int64_t *node_ids;
  int64_t n_node_ids;
  bool file_mode;
  bool swap;        /* bodies in the foreign byte order, converted while loading */
  bool raw_foreign; /* bodies in the foreign byte order, handed out as they are */
  /* threads and codec contexts, from the first compressed message */
  QvCodecRunner *codec;
  /* decompressed and copied buffers of released batches, for the next
   * ones (NULL when it could not be made: every buffer is then fresh) */
  QvRecycler *recycler;
  /* threads > 1 over a source that never blocks (memory, a mapping): the
   * next batch is loaded and its buffers decompressed on the workers while
   * the caller holds the current one */
  bool read_ahead;
  Jobs dict_jobs; /* of a dictionary batch */
  Batch batch[2]; /* the one asked for, and the one read ahead */
} Core;

/* Stops a submitted decompression (jobs not started are skipped) and
 * waits for the running ones: then nothing writes into the batch's memory. */
static void jobs_cancel(Core *c, Jobs *j) {
  if (j->async) qvi_codec_wait(c->codec, j->async, true, NULL, NULL);
  j->async = NULL;
  j->n = 0;
}

static void jobs_free(Core *c, Jobs *j) {
  jobs_cancel(c, j);
  free(j->jobs);
  free(j->pending);
  memset(j, 0, sizeof *j);
}

/* Lets go of a batch (cancelling its decompression); its job list and
 * view stay for the next one. */
static void batch_release(Core *c, Batch *b) {
  jobs_cancel(c, &b->jobs);
  qv_owner_free(b->owner);
  b->owner = NULL;
  for (int64_t i = 0; i < b->n_dicts; i++)
    if (b->dicts[i].release) b->dicts[i].release(&b->dicts[i]);
  b->n_dicts = 0;
  b->used = false; /* status and error: read only while used */
}

static void core_free(Core *c) {
  for (int k = 0; k < 2; k++) {
    batch_release(c, &c->batch[k]);
    jobs_free(c, &c->batch[k].jobs);
    free(c->batch[k].dicts);
    qv_array_view_reset(&c->batch[k].view);
  }
  jobs_free(c, &c->dict_jobs);
  if (c->schema.release) c->schema.release(&c->schema);
  for (int64_t i = 0; i < c->n_dicts; i++) {
    qv_array_view_reset(&c->dicts[i].view);
    if (c->dicts[i].array.release) c->dicts[i].array.release(&c->dicts[i].array);
    free(c->dicts[i].path);
  }
  free(c->dicts);
  qvi_idmap_free(&c->dict_index);
  free(c->node_ids);
  qvi_codec_runner_free(c->codec); /* after every cancel above */
  /* buffers of batches still held are freed when those are released */
  qvi_recycler_close(c->recycler);
  qvi_recycler_release(c->recycler);
  c->recycler = NULL;
  memset(c, 0, sizeof *c);
}

static DictState *find_dict(Core *c, int64_t id) {
  int64_t i;
  return qvi_idmap_get(&c->dict_index, id, &i) ? &c->dicts[i] : NULL;
}

/* Whether the value types of two dictionary-encoded fields that share an id
 * agree (fa/fb: the fields, whose children are the value type's): formats
 * carry every type parameter, then child names and nullability, and the same
 * ids and index types further down (a shared dictionary is one set of
 * values). The index types of the two fields themselves may differ. */
static bool same_dictionary_type(const QvField *fa, const struct ArrowSchema *a,
                                 const QvField *fb, const struct ArrowSchema *b, int depth) {
  if (depth > QV_ARRAY_MAX_DEPTH) return false;
  if (strcmp(a->format, b->format) != 0 || a->n_children != b->n_children ||
      (a->dictionary == NULL) != (b->dictionary == NULL) ||
      fa->n_children != fb->n_children)
    return false;
  if (a->dictionary) {
    if (fa->dictionary == NULL || fb->dictionary == NULL ||
        fa->dictionary->id != fb->dictionary->id ||
        strcmp(a->dictionary->format, b->dictionary->format) != 0)
      return false;
    a = a->dictionary;
    b = b->dictionary;
  }
  for (int64_t i = 0; i < a->n_children; i++) {
    const struct ArrowSchema *ca = a->children[i], *cb = b->children[i];
    if (strcmp(ca->name ? ca->name : "", cb->name ? cb->name : "") != 0 ||
        (ca->flags & ARROW_FLAG_NULLABLE) != (cb->flags & ARROW_FLAG_NULLABLE) ||
        !same_dictionary_type(&fa->children[i], ca, &fb->children[i], cb, depth + 1))
      return false;
  }
  return true;
}

/* The type a message names a dictionary's values by. */
static const char *value_format(const struct ArrowSchema *s) {
  return s->dictionary ? s->dictionary->format : s->format;
}

/* Path of a field for messages (util/errpath.h): names joined by '.',
 * "[i]" for unnamed. */
static size_t path_push(QvErrPath *p, const QvField *f, int64_t index) {
  if (f->name && f->name_len > 0)
    return qvi_errpath_push(p, "%s%.*s", p->len ? "." : "",
                           (int)(f->name_len > 64 ? 64 : f->name_len), f->name);
  return qvi_errpath_push(p, "%s[%lld]", p->len ? "." : "", (long long)index);
}

static QvStatus collect_dicts(Core *c, const QvField *f, const struct ArrowSchema *s,
                              QvErrPath *path, int64_t index, int depth, QvError *error) {
  if (depth > QV_ARRAY_MAX_DEPTH)
    return qv_error_set(error, QV_ELIMIT, "fields nested deeper than %d", QV_ARRAY_MAX_DEPTH);
  size_t mark = path_push(path, f, index);
  const struct ArrowSchema *values = s;
  if (f->dictionary) {
    if (c->n_node_ids == c->node_id_capacity) { /* doubling: many fields stay linear */
      size_t cap = (size_t)c->node_id_capacity;
      int64_t *ids = qvi_grow_array(c->node_ids, &cap, cap + 1, 16, sizeof *ids);
      if (ids == NULL) return qv_error_set(error, QV_ENOMEM, "out of memory");
      c->node_ids = ids;
      c->node_id_capacity = (int64_t)cap;
    }
    c->node_ids[c->n_node_ids++] = f->dictionary->id;
    DictState *d = find_dict(c, f->dictionary->id);
    if (d) {
      /* any number of fields may use one dictionary, if they agree on it */
      if (!same_dictionary_type(d->field, d->schema_node->dictionary, f, s->dictionary, 0))
        return qv_error_set(error, QV_EINVAL,
                            "fields '%s' and '%s' share dictionary id %lld but disagree on its "
                            "value type ('%s' and '%s')",
                            d->path, path->text, (long long)f->dictionary->id,
                            value_format(d->schema_node), value_format(s));
    } else {
      if (c->n_dicts == c->dict_capacity) {
        size_t cap = (size_t)c->dict_capacity;
        DictState *nd = qvi_grow_array(c->dicts, &cap, cap + 1, 4, sizeof *nd);
        if (nd == NULL) return qv_error_set(error, QV_ENOMEM, "out of memory");
        c->dicts = nd;
        c->dict_capacity = (int64_t)cap;
      }
      if (!qvi_idmap_put(&c->dict_index, f->dictionary->id, c->n_dicts))
        return qv_error_set(error, QV_ENOMEM, "out of memory");
      d = &c->dicts[c->n_dicts++];
      memset(d, 0, sizeof *d);
      d->id = f->dictionary->id;
      d->field = f;
      d->schema_node = s;
      d->value_schema = s->dictionary;
      d->path = dup_n(path->text, path->len);
      if (d->path == NULL) return qv_error_set(error, QV_ENOMEM, "out of memory");
      QvStatus st = qv_array_view_init(&d->view, s->dictionary, error);
      if (st) return st;
    }
    values = s->dictionary;
  }
  for (int64_t i = 0; i < f->n_children; i++) {
    QvStatus st = collect_dicts(c, &f->children[i], values->children[i], path, i, depth + 1,
                                error);
    if (st) return st;
  }
  qvi_errpath_pop(path, mark);
  return QV_OK;
}

/* opt: loaded (QV_OPTIONS_LOAD) by the public entry point */
static QvStatus core_init(Core *c, const QvSchema *schema, const QvRbReadOptions *opt,
                          QvError *error) {
  memset(c, 0, sizeof *c);
  c->opt = *opt;
  if (c->opt.max_decompressed_size <= 0) c->opt.max_decompressed_size = QV_RB_DEFAULT_MAX_DECOMPRESSED;
  if (c->opt.threads < 0 || c->opt.threads > QV_RB_MAX_THREADS)
    return qv_error_set(error, QV_EARG, "threads must be 0..%d, not %d", QV_RB_MAX_THREADS,
                        c->opt.threads);
  c->ipc_schema = schema;
  c->recycler = qvi_recycler_new();
  bool foreign = schema->endianness != qvi_rb_host_endianness();
  c->swap = foreign && !opt->keep_byte_order;
  c->raw_foreign = foreign && opt->keep_byte_order;
  QvStatus st = schema_from_ipc(schema, &c->schema, error);
  if (st) return qv_error_prefix(error, "schema");
  if (c->raw_foreign) {
    const char *order = schema->endianness == QV_ENDIAN_BIG ? "big" : "little";
    if ((st = qv_arrow_schema_add_metadata(&c->schema, QV_RB_BYTE_ORDER_KEY, strlen(QV_RB_BYTE_ORDER_KEY),
                                     order, strlen(order), error)))
      return st;
  }
  for (int k = 0; k < (c->opt.threads > 1 ? 2 : 1); k++) {
    if ((st = qv_array_view_init(&c->batch[k].view, &c->schema, error))) return st;
  }
  for (int64_t i = 0; i < schema->n_fields; i++) {
    QvErrPath path;
    qvi_errpath_clear(&path);
    if ((st = collect_dicts(c, &schema->fields[i], c->schema.children[i], &path, i, 0, error)))
      return st;
  }
  return QV_OK;
}

/* Memory of one loaded message: a reference to the body's memory plus the
 * buffers that had to be decompressed or realigned. */
typedef struct Mem {
  QvOwner *body_owner;
  int64_t n, capacity;
  void **allocs;
  size_t *caps;    /* of allocs[i], for the recycler */
  size_t bytes;    /* sum of caps */
  QvRecycler *rec; /* the reader's: takes the buffers back for its next batches */
} Mem;

static void mem_free(void *p) {
  Mem *m = p;
  for (int64_t i = 0; i < m->n; i++) qvi_recycler_put(m->rec, m->allocs[i], m->caps[i]);
  qvi_recycler_release(m->rec);
  free(m->allocs);
  free(m->caps);
  qv_owner_free(m->body_owner);
  free(m);
}

static uint8_t *mem_alloc(Mem *m, int64_t size) {
  if (m->n == m->capacity) {
    size_t cap = (size_t)m->capacity;
    void **a = qvi_grow_array(m->allocs, &cap, cap + 1, 8, sizeof *a);
    if (a == NULL) return NULL;
    m->allocs = a;
    size_t *c = realloc(m->caps, (size_t)cap * sizeof *c);
    if (c == NULL) return NULL;
    m->caps = c;
    m->capacity = (int64_t)cap;
  }
  size_t capacity;
  uint8_t *p = qvi_recycler_get(m->rec, (size_t)size, &capacity);
  if (p == NULL) return NULL;
  m->allocs[m->n] = p;
  m->caps[m->n++] = capacity;
  m->bytes += capacity;
  /* room for the buffers of the batch the caller holds and of the one
   * being read (ahead): when it lets go of one, the next reuses them */
  qvi_recycler_allow(m->rec, 2 * m->bytes);
  return p;
}

typedef struct Loader {
  Core *core;
  const QvRecordBatch *rb;
  const uint8_t *body;
  int64_t body_len;
  int16_t version;
  int64_t node_i, buf_i, var_i;
  Mem *mem;
  int64_t decompressed;
  QvCompression codec;
  int64_t column; /* top-level column being loaded, -1 for a dictionary */
  Jobs *jobs;     /* where its compressed buffers go */
  Batch *batch;   /* a record batch: keeps references to its dictionaries */
  QvError *error;
} Loader;

/* Queues a compressed buffer for decompression into dst. */
static QvStatus defer_decompress(Loader *ld, int64_t idx, const uint8_t *src, int64_t len,
                                 uint8_t *dst, int64_t ulen, QvSwapKind swap) {
  Jobs *c = ld->jobs;
  if (c->n == c->cap) {
    /* two arrays of one length: each grows to the same capacity */
    size_t cap = (size_t)c->cap, cap2 = cap;
    QvCodecJob *j = qvi_grow_array(c->jobs, &cap, cap + 1, 16, sizeof *j);
    if (j) c->jobs = j;
    PendingBuffer *p = j ? qvi_grow_array(c->pending, &cap2, cap, 16, sizeof *p) : NULL;
    if (p == NULL) return qv_error_set(ld->error, QV_ENOMEM, "out of memory");
    c->pending = p;
    c->cap = (int64_t)cap;
  }
  QvCodecJob *j = &c->jobs[c->n];
  memset(j, 0, sizeof *j);
  j->src = src;
  j->src_size = (size_t)len;
  j->dst = dst;
  j->dst_size = (size_t)ulen;
  c->pending[c->n].index = idx;
  c->pending[c->n].column = ld->column;
  c->pending[c->n].swap = swap;
  c->n++;
  return QV_OK;
}

/* Starts decompressing the queued buffers on the reader's threads (the
 * codec runner's background run: the caller joins in when it waits); with
 * one thread, or a message too small to be worth waking them, they are
 * decompressed here and now. */
static QvStatus jobs_start(Core *c, Jobs *j, QvError *error) {
  if (j->n == 0) return QV_OK;
  QvStatus st;
  if (c->codec == NULL && (st = qvi_codec_runner_new(&c->codec, c->opt.threads, error))) return st;
  return qvi_codec_submit(c->codec, false, j->codec, 0, j->jobs, (size_t)j->n, &j->async, error);
}

/* Waits for the queued buffers, decompressed straight into the memory the
 * arrays keep. On failure the error is the first failing buffer's,
 * whatever the thread count and whether the message was read ahead. */
static QvStatus jobs_finish(Core *c, Jobs *j, QvError *error) {
  int64_t n = j->n;
  j->n = 0;
  if (n == 0) return QV_OK;
  size_t bad = 0;
  QvStatus st = qvi_codec_wait(c->codec, j->async, false, &bad, error);
  j->async = NULL;
  if (st) {
    const PendingBuffer *p = &j->pending[bad];
    qv_error_prefix(error, "buffer %lld", (long long)p->index);
    if (p->column >= 0) {
      const QvField *f = &c->ipc_schema->fields[p->column];
      qv_error_prefix(error, "column %lld (%.*s)", (long long)p->column,
                      f->name ? (int)(f->name_len > 64 ? 64 : f->name_len) : 0,
                      f->name ? f->name : "");
    }
    return st;
  }
  /* our own memory: swapped in place */
  for (int64_t i = 0; i < n; i++)
    if (j->pending[i].swap != QV_SWAP_NONE)
      qvi_rb_swap_copy(j->pending[i].swap, j->jobs[i].dst, j->jobs[i].dst,
                      (int64_t)j->jobs[i].dst_size, true);
  return QV_OK;
}

static QvStatus take_buffer(Loader *ld, QvArrayView *v, int slot, const char *what) {
  const QvRecordBatch *rb = ld->rb;
  if (ld->buf_i >= rb->n_buffers)
    return qv_error_set(ld->error, QV_EINVAL,
                        "the batch has %lld buffers, the schema needs more (%s of a %s field)",
                        (long long)rb->n_buffers, what, qv_arrow_type_name(v->type.type));
  int64_t idx = ld->buf_i++;
  QvBuffer b = rb->buffers[idx];
  const uint8_t **ptr = slot >= 0 ? &v->buffer[slot] : &v->variadic[v->n_variadic];
  int64_t *size = slot >= 0 ? &v->buffer_size[slot] : &v->variadic_size[v->n_variadic];
  *ptr = NULL;
  *size = 0;
  if (b.offset < 0 || b.length < 0 || b.offset > ld->body_len || b.length > ld->body_len - b.offset)
    return qv_error_set(ld->error, QV_EINVAL,
                        "buffer %lld (offset %lld, length %lld) is outside the body of %lld bytes",
                        (long long)idx, (long long)b.offset, (long long)b.length,
                        (long long)ld->body_len);
  if (b.length == 0) return QV_OK;
  const uint8_t *p = ld->body + b.offset;
  int64_t len = b.length;
  if (ld->codec != QV_COMPRESSION_NONE) {
    if (len < 8)
      return qv_error_set(ld->error, QV_EINVAL,
                          "compressed buffer %lld has %lld bytes, less than its length prefix",
                          (long long)idx, (long long)len);
    int64_t ulen = qvi_le_i64(p); /* little-endian whatever the body's order */
    p += 8;
    len -= 8;
    if (ulen != -1) {
      if (ulen < 0)
        return qv_error_set(ld->error, QV_EINVAL, "compressed buffer %lld declares length %lld",
                            (long long)idx, (long long)ulen);
      if (ulen > ld->core->opt.max_decompressed_size - ld->decompressed)
        return qv_error_set(ld->error, QV_ELIMIT,
                            "buffer %lld: decompressed size %lld exceeds the limit of %lld bytes "
                            "per message", (long long)idx, (long long)ulen,
                            (long long)ld->core->opt.max_decompressed_size);
      /* no zeroing: the frame fills every byte, or the message fails */
      uint8_t *dst = mem_alloc(ld->mem, ulen);
      if (dst == NULL)
        return qv_error_set(ld->error, QV_ENOMEM, "out of memory decompressing %lld bytes",
                            (long long)ulen);
      QvSwapKind swap = ld->core->swap ? qvi_rb_swap_kind(&v->type, slot) : QV_SWAP_NONE;
      QvStatus st = defer_decompress(ld, idx, p, len, dst, ulen, swap);
      if (st) return st;
      ld->decompressed += ulen;
      *ptr = dst;
      *size = ulen;
      return QV_OK;
    }
  }
  QvSwapKind kind = ld->core->swap ? qvi_rb_swap_kind(&v->type, slot) : QV_SWAP_NONE;
  if (kind != QV_SWAP_NONE) {
    /* one pass: read, swap, write into aligned memory */
    uint8_t *copy = mem_alloc(ld->mem, len);
    if (copy == NULL) return qv_error_set(ld->error, QV_ENOMEM, "out of memory");
    qvi_rb_swap_copy(kind, copy, p, len, true);
    p = copy;
  } else if ((uintptr_t)p % 8 != 0) {
    /* typed access needs natural alignment: realign this buffer */
    uint8_t *copy = mem_alloc(ld->mem, len);
    if (copy == NULL) return qv_error_set(ld->error, QV_ENOMEM, "out of memory");
    memcpy(copy, p, (size_t)len);
    p = copy;
  }
  *ptr = p;
  *size = len;
  return QV_OK;
}

static QvStatus load_node(Loader *ld, const QvField *f, QvArrayView *v, int depth) {
  const QvRecordBatch *rb = ld->rb;
  if (depth > QV_ARRAY_MAX_DEPTH)
    return qv_error_set(ld->error, QV_ELIMIT, "fields nested deeper than %d", QV_ARRAY_MAX_DEPTH);
  if (ld->node_i >= rb->n_nodes)
    return qv_error_set(ld->error, QV_EINVAL,
                        "the batch has %lld field nodes, the schema needs more",
                        (long long)rb->n_nodes);
  const QvFieldNode *n = &rb->nodes[ld->node_i++];
  v->array = NULL;
  v->offset = 0;
  v->length = n->length;
  v->null_count = n->null_count;
  v->n_variadic = 0;
  memset(v->buffer, 0, sizeof v->buffer);
  memset(v->buffer_size, 0, sizeof v->buffer_size);
  QvLayout L = qv_layout_of(v->type.storage_type);
  QvStatus st = QV_OK;
  if (qv_layout_has_validity(L) && (st = take_buffer(ld, v, 0, "validity"))) return st;
  switch (L) {
    case QV_LAYOUT_NULL:
    case QV_LAYOUT_REE:
    case QV_LAYOUT_STRUCT:
    case QV_LAYOUT_FIXED_LIST: break;
    case QV_LAYOUT_BOOL:
    case QV_LAYOUT_FIXED: st = take_buffer(ld, v, 1, "values"); break;
    case QV_LAYOUT_LIST:
    case QV_LAYOUT_LARGE_LIST: st = take_buffer(ld, v, 1, "offsets"); break;
    case QV_LAYOUT_BINARY:
    case QV_LAYOUT_LARGE_BINARY:
      if (!(st = take_buffer(ld, v, 1, "offsets"))) st = take_buffer(ld, v, 2, "data");
      break;
    case QV_LAYOUT_LIST_VIEW:
    case QV_LAYOUT_LARGE_LIST_VIEW:
      if (!(st = take_buffer(ld, v, 1, "offsets"))) st = take_buffer(ld, v, 2, "sizes");
      break;
    case QV_LAYOUT_VIEW: {
      if ((st = take_buffer(ld, v, 1, "views"))) return st;
      if (ld->var_i >= rb->n_variadic_buffer_counts)
        return qv_error_set(ld->error, QV_EINVAL,
                            "the batch has %lld variadicBufferCounts, the schema needs more",
                            (long long)rb->n_variadic_buffer_counts);
      int64_t count = rb->variadic_buffer_counts[ld->var_i++];
      if (count > rb->n_buffers - ld->buf_i)
        return qv_error_set(ld->error, QV_EINVAL,
                            "variadicBufferCounts asks for %lld data buffers, only %lld remain",
                            (long long)count, (long long)(rb->n_buffers - ld->buf_i));
      if ((st = qv_array_view_reserve_variadic(v, count, ld->error))) return st;
      for (int64_t k = 0; k < count && !st; k++) {
        st = take_buffer(ld, v, -1, "view data");
        if (!st) v->n_variadic++;
      }
      break;
    }
    case QV_LAYOUT_SPARSE_UNION:
    case QV_LAYOUT_DENSE_UNION:
      /* before V5 unions had a validity bitmap; it is dropped */
      if (ld->version < QV_METADATA_V5 && (st = take_buffer(ld, v, 0, "validity"))) return st;
      v->buffer[0] = NULL;
      v->buffer_size[0] = 0;
      if (ld->version < QV_METADATA_V5) v->null_count = 0;
      if ((st = take_buffer(ld, v, 1, "type ids"))) return st;
      if (L == QV_LAYOUT_DENSE_UNION) st = take_buffer(ld, v, 2, "offsets");
      break;
  }
  if (st) return st;
  if (v->dictionary) {
    int64_t id = f->dictionary ? f->dictionary->id : -1;
    DictState *d = find_dict(ld->core, id);
    if (d == NULL || d->array.release == NULL)
      return qv_error_set(ld->error, QV_EINVAL,
                          "field refers to dictionary id %lld, which has not been sent",
                          (long long)id);
    const struct ArrowArray *values = &d->array;
    if (ld->batch && ld->core->read_ahead) {
      /* exported later, maybe after the next dictionary batch: hold on to
       * the values it has now */
      Batch *b = ld->batch;
      if (b->n_dicts == b->cap_dicts) /* sized by batch_prepare: views point into it */
        return qv_error_set(ld->error, QV_EINVAL, "more dictionary-encoded fields than the schema has");
      QvStatus sst = qv_array_share(&d->array, &b->dicts[b->n_dicts], ld->error);
      if (sst) return sst;
      values = &b->dicts[b->n_dicts++];
    }
    /* the dictionary was validated when it arrived */
    return qv_array_view_set_array(v->dictionary, values, QV_VALIDATE_NONE, ld->error);
  }
  for (int64_t i = 0; i < v->n_children; i++) {
    if ((st = load_node(ld, &f->children[i], &v->children[i], depth + 1)))
      return qv_error_prefix(ld->error, "child %lld", (long long)i);
  }
  return QV_OK;
}

static QvStatus check_counts(Loader *ld) {
  const QvRecordBatch *rb = ld->rb;
  if (ld->node_i != rb->n_nodes)
    return qv_error_set(ld->error, QV_EINVAL, "the batch has %lld field nodes, the schema uses %lld",
                        (long long)rb->n_nodes, (long long)ld->node_i);
  if (ld->buf_i != rb->n_buffers)
    return qv_error_set(ld->error, QV_EINVAL, "the batch has %lld buffers, the schema uses %lld",
                        (long long)rb->n_buffers, (long long)ld->buf_i);
  if (ld->var_i != rb->n_variadic_buffer_counts)
    return qv_error_set(ld->error, QV_EINVAL,
                        "the batch has %lld variadicBufferCounts, the schema uses %lld",
                        (long long)rb->n_variadic_buffer_counts, (long long)ld->var_i);
  return QV_OK;
}

static QvStatus loader_begin(Loader *ld, Core *c, Jobs *jobs, const QvMessage *msg,
                             const QvRecordBatch *rb, const uint8_t *body, int64_t body_len,
                             QvOwner *body_owner, QvOwner **owner, QvError *error) {
  memset(ld, 0, sizeof *ld);
  *owner = NULL;
  ld->core = c;
  ld->rb = rb;
  ld->body = body;
  ld->body_len = body_len;
  ld->version = msg->version;
  ld->error = error;
  ld->codec = rb->compression;
  ld->column = -1;
  ld->jobs = jobs;
  jobs->n = 0;
  jobs->codec = rb->compression;
  QvStatus vst = qvi_metadata_version_check(msg->version, "message", error);
  if (vst) return vst;
  Mem *m = calloc(1, sizeof *m);
  if (m == NULL) return qv_error_set(error, QV_ENOMEM, "out of memory");
  *owner = qv_owner_new(mem_free, m);
  if (*owner == NULL) {
    free(m);
    return qv_error_set(error, QV_ENOMEM, "out of memory");
  }
  qv_owner_retain(body_owner);
  m->body_owner = body_owner;
  qvi_recycler_retain(c->recycler);
  m->rec = c->recycler;
  ld->mem = m;
  return QV_OK;
}

static unsigned flags_of(const Core *c) {
  return QV_VALIDATE_SKIP_DICTIONARIES |
         (c->opt.accept_decimal_overflow ? QV_VALIDATE_DECIMALS_UNBOUNDED : 0u);
}

static QvValidateLevel level_of(const Core *c) {
  if (c->raw_foreign) return QV_VALIDATE_NONE; /* offsets are not in host order */
  return c->opt.validate == QV_VALIDATE_FULL ? QV_VALIDATE_FULL : QV_VALIDATE_CHEAP;
}

/* Loads a RecordBatch message into b (which must be free): its structure
 * is checked and its compressed buffers start decompressing (with threads,
 * on the workers). batch_finish completes it. b is free again on failure. */
static QvStatus batch_prepare(Core *c, Batch *b, const QvMessage *msg, const uint8_t *body,
                              int64_t body_len, QvOwner *body_owner, QvError *error) {
  const QvRecordBatch *rb = &msg->header.record_batch;
  if (c->read_ahead && b->cap_dicts < c->n_node_ids) {
    struct ArrowArray *a = realloc(b->dicts, (size_t)c->n_node_ids * sizeof *a);
    if (a == NULL) return qv_error_set(error, QV_ENOMEM, "out of memory");
    b->dicts = a;
    b->cap_dicts = c->n_node_ids;
  }
  Loader ld;
  QvStatus st = loader_begin(&ld, c, &b->jobs, msg, rb, body, body_len, body_owner, &b->owner,
                             error);
  ld.batch = b;
  QvArrayView *root = &b->view;
  root->offset = 0;
  root->length = rb->length;
  root->null_count = 0;
  root->array = NULL;
  for (int64_t i = 0; i < root->n_children && !st; i++) {
    const QvField *f = &c->ipc_schema->fields[i];
    ld.column = i;
    st = load_node(&ld, f, &root->children[i], 0);
    if (!st && root->children[i].length != rb->length)
      st = qv_error_set(error, QV_EINVAL, "column has %lld rows, the batch has %lld",
                        (long long)root->children[i].length, (long long)rb->length);
    if (st)
      qv_error_prefix(error, "column %lld (%.*s)", (long long)i,
                      f->name ? (int)(f->name_len > 64 ? 64 : f->name_len) : 0, f->name ? f->name : "");
  }
  if (!st) st = check_counts(&ld);
  if (!st) st = jobs_start(c, &b->jobs, error);
  if (st) {
    batch_release(c, b);
    return st;
  }
  b->used = true;
  b->status = QV_OK;
  return QV_OK;
}

/* Waits for b's buffers, validates and exports it; b is free afterwards. */
static QvStatus batch_finish(Core *c, Batch *b, struct ArrowArray *out, QvError *error) {
  QvStatus st = jobs_finish(c, &b->jobs, error);
  if (!st) st = qv_array_view_validate(&b->view, level_of(c), flags_of(c), error);
  if (!st) st = qv_array_export_view(&b->view, b->owner, out, error);
  batch_release(c, b);
  return st;
}

static QvStatus load_dictionary_batch(Core *c, const QvMessage *msg, const uint8_t *body,
                                      int64_t body_len, QvOwner *body_owner, QvError *error) {
  const QvDictionaryBatch *db = &msg->header.dictionary_batch;
  DictState *d = find_dict(c, db->id);
  if (d == NULL)
    return qv_error_set(error, QV_EINVAL, "dictionary batch for id %lld, which no field uses",
                        (long long)db->id);
  if (db->is_delta && d->array.release == NULL)
    return qv_error_set(error, QV_EINVAL, "delta dictionary batch for id %lld before its first batch",
                        (long long)db->id);
  if (!db->is_delta && d->array.release && c->file_mode)
    return qv_error_set(error, QV_EINVAL,
                        "dictionary %lld is replaced, which the file format does not allow",
                        (long long)db->id);
  if (db->is_delta && c->raw_foreign)
    return qv_error_set(error, QV_ENOTSUP,
                        "dictionary %lld: a delta batch cannot be appended to foreign-order bytes "
                        "(read without keep_byte_order)", (long long)db->id);
  Loader ld;
  QvOwner *owner;
  QvStatus st = loader_begin(&ld, c, &c->dict_jobs, msg, &db->data, body, body_len, body_owner,
                             &owner, error);
  if (!st) st = load_node(&ld, d->field, &d->view, 0);
  if (!st && d->view.length != db->data.length)
    st = qv_error_set(error, QV_EINVAL, "dictionary has %lld values, its batch says %lld",
                      (long long)d->view.length, (long long)db->data.length);
  if (!st) st = check_counts(&ld);
  if (!st) st = jobs_start(c, &c->dict_jobs, error);
  if (!st) st = jobs_finish(c, &c->dict_jobs, error);
  if (!st) st = qv_array_view_validate(&d->view, level_of(c), flags_of(c), error);
  struct ArrowArray fresh;
  memset(&fresh, 0, sizeof fresh);
  if (!st) st = qv_array_export_view(&d->view, owner, &fresh, error);
  qv_owner_free(owner);
  if (st) return qv_error_prefix(error, "dictionary %lld", (long long)db->id);
  if (db->is_delta) {
    /* deltas are copied into one array: keep that copy within reason */
    if (d->array.length > QV_RB_MAX_DICTIONARY_LENGTH - fresh.length) {
      fresh.release(&fresh);
      return qv_error_set(error, QV_ELIMIT,
                          "dictionary %lld: a delta of %lld values would grow it past %lld values",
                          (long long)db->id, (long long)db->data.length,
                          (long long)QV_RB_MAX_DICTIONARY_LENGTH);
    }
    struct ArrowArray merged;
    st = qv_array_concat(&d->array, &fresh, d->value_schema, &merged, error);
    fresh.release(&fresh);
    if (st) return qv_error_prefix(error, "dictionary %lld delta", (long long)db->id);
    d->array.release(&d->array);
    d->array = merged;
  } else {
    if (d->array.release) d->array.release(&d->array);
    d->array = fresh;
  }
  return QV_OK;
}

/* ---- stream reader */

typedef struct StreamReader {
  Core core;
  QvIpcReader *ipc;
  /* a reader over a message callback (qv_rb_stream_reader_from_messages)
   * instead of ipc */
  QvRbNextMessageFn next_message;
  void *next_ctx;
  void (*next_release)(void *ctx);
  QvIpcMessage schema_msg;
  QvError error;
  bool finished;
  int cur; /* core.batch[cur]: the next batch to hand out, when read ahead */
} StreamReader;

static int errno_of(QvStatus st) {
  switch (st) {
    case QV_OK: return 0;
    case QV_ENOMEM: return ENOMEM;
    case QV_EIO: return EIO;
    case QV_ENOTSUP: return ENOTSUP;
    default: return EINVAL;
  }
}

/* Reads messages up to the next RecordBatch, loading the dictionaries on
 * the way, into b: b->status is QV_OK with the batch prepared, QV_EOS at
 * the end, or the failure (b->error). */
static QvStatus stream_message(StreamReader *r, QvIpcMessage *msg, QvError *error) {
  if (r->next_message == NULL) return qv_ipc_reader_next(r->ipc, msg, error);
  memset(msg, 0, sizeof *msg);
  QvStatus st = r->next_message(r->next_ctx, msg, error);
  if (st) qv_ipc_message_reset(msg);
  return st;
}

static void stream_read_batch(StreamReader *r, Batch *b) {
  QvStatus st;
  for (;;) {
    QvIpcMessage msg;
    st = stream_message(r, &msg, &b->error);
    if (st) break;
    const char *kind = qv_header_type_name(msg.message.header_type);
    bool batch = msg.message.header_type == QV_HEADER_RECORD_BATCH;
    if (msg.message.header_type == QV_HEADER_DICTIONARY_BATCH) {
      st = load_dictionary_batch(&r->core, &msg.message, msg.body, msg.body_length, msg.owner,
                                 &b->error);
    } else if (batch) {
      st = batch_prepare(&r->core, b, &msg.message, msg.body, msg.body_length, msg.owner,
                         &b->error);
      b->index = msg.offset;
    } else {
      st = qv_error_set(&b->error, QV_EINVAL, "unexpected %s message in a record batch stream",
                        kind);
    }
    if (st) qv_error_prefix(&b->error, "message at offset %lld (%s)", (long long)msg.offset, kind);
    qv_ipc_message_reset(&msg);
    if (st || batch) break;
  }
  b->used = true;
  b->status = st;
}

static QvStatus stream_next(StreamReader *r, struct ArrowArray *out, QvError *error) {
  memset(out, 0, sizeof *out);
  if (r->error.code) {
    if (error) *error = r->error;
    return r->error.code;
  }
  if (r->finished) return QV_EOS;
  Core *c = &r->core;
  Batch *b = &c->batch[r->cur];
  if (!b->used) stream_read_batch(r, b);
  QvStatus st = b->status;
  if (st == QV_OK) {
    if (c->read_ahead) {
      /* the next batch starts decompressing on the workers now; whatever
       * goes wrong with it waits in it until it is asked for */
      Batch *next = &c->batch[1 - r->cur];
      stream_read_batch(r, next);
      if (next->status == QV_OK) qvi_path_hit(QV_PATH_RB_READ_AHEAD);
      r->cur = 1 - r->cur;
    }
    int64_t offset = b->index;
    if ((st = batch_finish(c, b, out, &r->error)))
      qv_error_prefix(&r->error, "message at offset %lld (RecordBatch)", (long long)offset);
  } else if (st == QV_EOS) {
    batch_release(c, b);
    r->finished = true;
    qv_error_clear(&r->error);
    return QV_EOS;
  } else {
    r->error = b->error;
    batch_release(c, b);
  }
  if (st) {
    /* sticky: nothing after a failure is read, the batch read ahead neither */
    batch_release(c, &c->batch[1 - r->cur]);
    batch_release(c, &c->batch[r->cur]);
    r->error.code = st;
    if (error) *error = r->error;
  }
  return st;
}

static int stream_get_schema(struct ArrowArrayStream *s, struct ArrowSchema *out) {
  StreamReader *r = s->private_data;
  QvStatus st = qv_arrow_schema_copy(&r->core.schema, out, &r->error);
  return errno_of(st);
}

/* The C stream interface ends a stream with 0 and a released array. */
static int stream_get_next(struct ArrowArrayStream *s, struct ArrowArray *out) {
  StreamReader *r = s->private_data;
  QvStatus st = stream_next(r, out, NULL);
  return st == QV_EOS ? 0 : errno_of(st);
}

static const char *stream_last_error(struct ArrowArrayStream *s) {
  StreamReader *r = s->private_data;
  return r->error.code ? r->error.message : NULL;
}

static void stream_reader_free(StreamReader *r) {
  core_free(&r->core);
  qv_ipc_message_reset(&r->schema_msg);
  qv_ipc_reader_free(r->ipc);
  if (r->next_release) r->next_release(r->next_ctx);
  free(r);
}

static void stream_release(struct ArrowArrayStream *s) {
  if (s == NULL || s->release == NULL) return;
  stream_reader_free(s->private_data);
  s->release = NULL;
  s->private_data = NULL;
}

/* A reader's zeroed struct of `size` bytes over ipc (taken over: freed
 * when the struct cannot be had). */
static void *reader_alloc(size_t size, QvIpcReader *ipc, QvError *error) {
  void *r = calloc(1, size);
  if (r == NULL) {
    qv_ipc_reader_free(ipc);
    (void)qv_error_set(error, QV_ENOMEM, "out of memory");
  }
  return r;
}

/* The rest of a stream reader's setup once r knows where its messages come
 * from (source: the input behind r->ipc; NULL: a caller's supply): the
 * Schema message, checked, and the batches' core; then out is the stream.
 * Frees r on failure. */
static QvStatus stream_begin(StreamReader *r, QvSource *source, const QvRbReadOptions *o,
                             struct ArrowArrayStream *out, QvError *error) {
  QvStatus st = stream_message(r, &r->schema_msg, error);
  /* An empty input and a lone end-of-stream marker hold no record batch
   * stream at all; say which one it is. */
  if (st == QV_EOS && source == NULL)
    st = qv_error_set(error, QV_EINVAL, "no messages, so there is no Schema message");
  else if (st == QV_EOS)
    st = qv_error_set(error, QV_EINVAL, "no messages: %s, so there is no Schema message",
                      qvi_source_position(source) > 0 || (qvi_source_seekable(source) &&
                                                         qv_source_size(source) > 0)
                          ? "the stream starts with its end-of-stream marker"
                          : "the input is empty");
  if (!st && r->schema_msg.message.header_type != QV_HEADER_SCHEMA)
    st = qv_error_set(error, QV_EINVAL, "the stream starts with a %s message, not a Schema",
                      qv_header_type_name(r->schema_msg.message.header_type));
  if (!st) st = qvi_metadata_version_check(r->schema_msg.message.version, "Schema message", error);
  if (!st) st = core_init(&r->core, &r->schema_msg.message.header.schema, o, error);
  if (st) {
    stream_reader_free(r);
    return st;
  }
  /* a pipe is never read ahead: handing out a batch must not wait for the
   * next one to arrive; nor are messages a caller supplies as they are sent */
  r->core.read_ahead = source != NULL && r->core.opt.threads > 1 && qv_source_has_view(source);
  out->get_schema = stream_get_schema;
  out->get_next = stream_get_next;
  out->get_last_error = stream_last_error;
  out->release = stream_release;
  out->private_data = r;
  return QV_OK;
}

static QvStatus stream_start(QvIpcReader *ipc, QvSource *source, const QvRbReadOptions *options,
                             struct ArrowArrayStream *out, QvError *error) {
  StreamReader *r = reader_alloc(sizeof *r, ipc, error);
  if (r == NULL) return QV_ENOMEM;
  r->ipc = ipc;
  return stream_begin(r, source, options, out, error);
}

QvStatus qv_rb_stream_reader_from_messages(struct ArrowArrayStream *out, QvRbNextMessageFn next,
                                            void *ctx, void (*release)(void *ctx),
                                            const QvRbReadOptions *options, QvError *error) {
  if (out == NULL || next == NULL) {
    if (release) release(ctx);
    return qv_error_set(error, QV_EARG, "qv_rb_stream_reader_from_messages: out or next is NULL");
  }
  memset(out, 0, sizeof *out);
  QvRbReadOptions o;
  QvStatus st = QV_OPTIONS_LOAD(&o, options, QvRbReadOptions, error);
  StreamReader *r = st ? NULL : calloc(1, sizeof *r);
  if (r == NULL) {
    if (release) release(ctx);
    return st ? st : qv_error_set(error, QV_ENOMEM, "out of memory");
  }
  r->next_message = next;
  r->next_ctx = ctx;
  r->next_release = release;
  return stream_begin(r, NULL, &o, out, error);
}

/* An ArrowArrayStream over a file reader: the footer's batches in order
 * (functions below). */
typedef struct FileStream {
  QvRbFileReader *f;
  int64_t next;
  QvError error;
} FileStream;
static int file_stream_get_schema(struct ArrowArrayStream *s, struct ArrowSchema *out);
static int file_stream_get_next(struct ArrowArrayStream *s, struct ArrowArray *out);
static QvStatus file_stream_next(FileStream *p, struct ArrowArray *out, QvError *error);

static QvStatus from_errno(int code) {
  switch (code) {
    case 0: return QV_OK;
    case ENOMEM: return QV_ENOMEM;
    case EIO: return QV_EIO;
    case ENOTSUP: return QV_ENOTSUP;
    default: return QV_EINVAL;
  }
}

QvStatus qv_rb_stream_get_schema(struct ArrowArrayStream *s, struct ArrowSchema *out,
                                 QvError *error) {
  memset(out, 0, sizeof *out);
  if (s == NULL || s->release == NULL) return qv_error_set(error, QV_EARG, "stream is released");
  if (s->get_schema == stream_get_schema)
    return qv_arrow_schema_copy(&((StreamReader *)s->private_data)->core.schema, out, error);
  if (s->get_schema == file_stream_get_schema)
    return qv_rb_file_get_schema(((FileStream *)s->private_data)->f, out, error);
  int code = s->get_schema(s, out);
  if (code == 0) return QV_OK;
  const char *msg = s->get_last_error ? s->get_last_error(s) : NULL;
  return qv_error_set(error, from_errno(code), "get_schema failed: %s", msg ? msg : strerror(code));
}

QvStatus qv_rb_stream_get_next(struct ArrowArrayStream *s, struct ArrowArray *out,
                               QvError *error) {
  memset(out, 0, sizeof *out);
  if (s == NULL || s->release == NULL) return qv_error_set(error, QV_EARG, "stream is released");
  if (s->get_next == stream_get_next) return stream_next(s->private_data, out, error);
  if (s->get_next == file_stream_get_next) return file_stream_next(s->private_data, out, error);
  int code = s->get_next(s, out);
  if (code == 0) return out->release ? QV_OK : QV_EOS;
  const char *msg = s->get_last_error ? s->get_last_error(s) : NULL;
  return qv_error_set(error, from_errno(code), "get_next failed: %s", msg ? msg : strerror(code));
}

/* ---- file reader */

struct QvRbFileReader {
  Core core;
  QvIpcReader *ipc; /* reads the messages the footer's blocks point at */
  QvFooter footer;
  bool dicts_loaded;
  QvError dict_error;
  int64_t last; /* the batch asked for last (-1: none): reading ahead goes on while in order */
  int ahead;    /* core.batch[ahead] holds the batch read ahead, if any */
};

void qv_rb_file_reader_free(QvRbFileReader *r) {
  if (r == NULL) return;
  core_free(&r->core);
  qv_footer_reset(&r->footer);
  qv_ipc_reader_free(r->ipc);
  free(r);
}

/* The file's first message, when it is a Schema, must say what the footer
 * says: readers that go by the footer (quiver, Arrow C++) and readers that
 * go by the messages (a stream reader after skipping the magic) would read
 * different types otherwise. arrow-js writes no Schema message (the footer
 * holds the schema), which is legal. */
static QvStatus check_schema_message(QvRbFileReader *r, QvError *error) {
  QvIpcMessage msg;
  QvStatus st = qv_ipc_reader_message_at(r->ipc, 8, &msg, error);
  if (st == QV_EOS) return QV_OK; /* no messages before the footer */
  if (st) return qv_error_prefix(error, "the message after the file magic");
  st = qvi_metadata_version_check(msg.message.version, "the message at offset 8", error);
  if (!st && msg.message.header_type == QV_HEADER_SCHEMA) {
    const QvSchema *ms = &msg.message.header.schema;
    char where[256] = "";
    if (!qv_schema_equal(ms, &r->footer.schema, where, sizeof where)) {
      /* name both sides: the field that differs ("fields[1].children[0]"),
       * by its two names when the names differ, else by its two types */
      const QvField *fa = NULL, *fb = NULL;
      const char *p = where;
      if (strncmp(p, "Schema.", 7) == 0) p += 7;
      long long i;
      int used = 0;
      if (sscanf(p, "fields[%lld]%n", &i, &used) == 1 && used > 0 && i >= 0 &&
          i < ms->n_fields && i < r->footer.schema.n_fields) {
        fa = &ms->fields[i];
        fb = &r->footer.schema.fields[i];
        p += used;
        for (;;) {
          used = 0;
          if (sscanf(p, ".children[%lld]%n", &i, &used) != 1 || used == 0) break;
          if (i < 0 || i >= fa->n_children || i >= fb->n_children) break;
          fa = &fa->children[i];
          fb = &fb->children[i];
          p += used;
        }
      }
      char at[300];
      snprintf(at, sizeof at, "the Schema message at offset 8 disagrees with the footer's schema at %s",
               where);
      if (fa && strcmp(p, ".name") == 0) {
        st = qv_error_set(error, QV_EINVAL,
                          "%s: the field is named '%.*s' in the Schema message, '%.*s' in the footer",
                          at, fa->name ? (int)(fa->name_len > 64 ? 64 : fa->name_len) : 0,
                          fa->name ? fa->name : "",
                          fb->name ? (int)(fb->name_len > 64 ? 64 : fb->name_len) : 0,
                          fb->name ? fb->name : "");
      } else if (fa) {
        char ta[128] = "", tb[128] = "";
        field_type_text(fa, ta, sizeof ta);
        field_type_text(fb, tb, sizeof tb);
        st = qv_error_set(error, QV_EINVAL,
                          "%s: field '%.*s' is %s in the Schema message, %s in the footer", at,
                          fa->name ? (int)(fa->name_len > 64 ? 64 : fa->name_len) : 0,
                          fa->name ? fa->name : "", ta, tb);
      } else {
        st = qv_error_set(error, QV_EINVAL,
                          "the Schema message at offset 8 (%lld fields) disagrees with the "
                          "footer's schema (%lld fields) at %s",
                          (long long)ms->n_fields, (long long)r->footer.schema.n_fields, where);
      }
    }
  }
  qv_ipc_message_reset(&msg);
  return st;
}

/* A file reader over `ipc` (taken over, freed on failure); o is loaded. */
static QvStatus file_open(QvRbFileReader **out, QvIpcReader *ipc, QvSource *source,
                          const QvRbReadOptions *o, QvError *error) {
  *out = NULL;
  QvRbFileReader *r = reader_alloc(sizeof *r, ipc, error);
  if (r == NULL) return QV_ENOMEM;
  r->ipc = ipc;
  QvStatus st = QV_OK;
  if (qv_ipc_reader_format(r->ipc) != QV_IPC_FORMAT_FILE)
    st = qv_error_set(error, QV_EINVAL, "%s: not an Arrow file: the ARROW1 magic is missing",
                      qv_source_name(source));
  int64_t footer_offset;
  int32_t footer_length;
  /* The footer's version is not checked: Arrow C++ 0.14.1 left it at its
   * default (V1) above V4 messages, and Arrow C++ reads such files. Every
   * message read (Schema, dictionaries, batches) is checked instead. */
  if (!st) st = qv_ipc_reader_footer(r->ipc, &r->footer, &footer_offset, &footer_length, error);
  if (!st && !r->footer.has_schema)
    st = qv_error_set(error, QV_EINVAL, "footer has no schema");
  if (!st && (st = core_init(&r->core, &r->footer.schema, o, error)))
    qv_error_prefix(error, "footer");
  if (!st) st = check_schema_message(r, error);
  if (st) {
    qv_rb_file_reader_free(r);
    return st;
  }
  r->core.file_mode = true;
  r->core.read_ahead = r->core.opt.threads > 1; /* memory or a mapping */
  r->last = -1;
  *out = r;
  return QV_OK;
}

/* An Arrow file arriving through a pipe, descriptor or callback: its footer
 * is at the end, so the whole input is read into memory (bounded like a message body) and read
 * from there. *out is a new memory source. */
static QvStatus slurp_source(QvSource *source, const QvRbReadOptions *o, QvSource **out,
                             QvError *error) {
  int64_t limit = o->ipc && o->ipc->max_body_size > 0 ? o->ipc->max_body_size
                                                      : QV_IPC_DEFAULT_MAX_BODY_SIZE;
  const uint8_t *data;
  size_t size;
  QvOwner *owner;
  QvStatus st = qvi_source_read_all(source, limit, &data, &size, &owner, error);
  if (st) return st;
  st = qv_source_new_memory(out, data, size, owner, error);
  qv_owner_free(owner); /* the source holds its own reference */
  return st;
}

QvStatus qv_rb_file_reader_new(QvRbFileReader **out, QvSource *source,
                               const QvRbReadOptions *options, QvError *error) {
  *out = NULL;
  if (source == NULL) return qv_error_set(error, QV_EARG, "no source");
  QvRbReadOptions o;
  QvStatus st = QV_OPTIONS_LOAD(&o, options, QvRbReadOptions, error);
  if (st) return st;
  /* An Arrow file is read from its footer, at its end, and its messages at
   * the offsets the footer gives: a pipe, descriptor or callback source is
   * taken whole first, and the batches view that block. */
  QvSource *whole = NULL;
  if (qv_source_kind(source) == QV_SOURCE_STREAM && (st = slurp_source(source, &o, &whole, error)))
    return st; /* the source's errors name it */
  /* full validation reads every byte: prepare the mapping for that */
  if (o.validate == QV_VALIDATE_FULL) qv_source_expect_full_read(source);
  QvIpcReader *ipc;
  st = qv_ipc_reader_new(&ipc, whole ? whole : source, o.ipc, error);
  qv_source_free(whole); /* the message reader holds its own reference */
  if (st) {
    if (whole && error) qv_error_prefix(error, "%s", qv_source_name(source));
    return st;
  }
  return file_open(out, ipc, source, &o, error);
}

void qv_rb_file_dictionary_ids(const QvRbFileReader *r, const int64_t **ids, int64_t *n) {
  *ids = r->core.node_ids;
  *n = r->core.n_node_ids;
}

int64_t qv_rb_file_n_batches(const QvRbFileReader *r) { return r->footer.n_record_batches; }
int64_t qv_rb_file_n_dictionaries(const QvRbFileReader *r) { return r->footer.n_dictionaries; }

QvStatus qv_rb_file_get_schema(QvRbFileReader *r, struct ArrowSchema *out, QvError *error) {
  return qv_arrow_schema_copy(&r->core.schema, out, error);
}

/* Reads the message a footer block points at (the message reader checks
 * that it lies in the message area), checking the block against the message
 * it describes. */
static QvStatus read_block(QvRbFileReader *r, const QvBlock *b, QvIpcMessage *msg,
                           QvError *error) {
  QvStatus st = qv_ipc_reader_message_at(r->ipc, b->offset, msg, error);
  if (st == QV_EOS)
    return qv_error_set(error, QV_EINVAL, "block at offset %lld points at the end-of-stream marker",
                        (long long)b->offset);
  if (st) return st;
  int64_t meta = (msg->legacy_prefix ? 4 : 8) + (int64_t)msg->metadata_length;
  if (meta != b->meta_data_length)
    st = qv_error_set(error, QV_EINVAL,
                      "block at offset %lld says the metadata takes %d bytes, the message "
                      "prefix says %lld", (long long)b->offset, (int)b->meta_data_length,
                      (long long)meta);
  else if (msg->body_length != b->body_length)
    st = qv_error_set(error, QV_EINVAL,
                      "block at offset %lld says the body has %lld bytes, the message says %lld",
                      (long long)b->offset, (long long)b->body_length,
                      (long long)msg->body_length);
  if (st) qv_ipc_message_reset(msg);
  return st;
}

static QvStatus load_file_dictionaries(QvRbFileReader *r, QvError *error) {
  for (int64_t i = 0; i < r->footer.n_dictionaries; i++) {
    QvIpcMessage msg;
    QvStatus st = read_block(r, &r->footer.dictionaries[i], &msg, error);
    if (!st && msg.message.header_type != QV_HEADER_DICTIONARY_BATCH)
      st = qv_error_set(error, QV_EINVAL, "block points at a %s message, not a DictionaryBatch",
                        qv_header_type_name(msg.message.header_type));
    if (!st)
      st = load_dictionary_batch(&r->core, &msg.message, msg.body, msg.body_length, msg.owner,
                                 error);
    qv_ipc_message_reset(&msg);
    if (st) return qv_error_prefix(error, "dictionary block %lld", (long long)i);
  }
  return QV_OK;
}

/* Loads block i into b: b->status QV_OK with the batch prepared, or the
 * failure (b->error, prefixed with the batch number). */
static void file_prepare(QvRbFileReader *r, int64_t i, Batch *b) {
  QvIpcMessage msg;
  QvStatus st = read_block(r, &r->footer.record_batches[i], &msg, &b->error);
  if (!st && msg.message.header_type != QV_HEADER_RECORD_BATCH)
    st = qv_error_set(&b->error, QV_EINVAL, "block points at a %s message, not a RecordBatch",
                      qv_header_type_name(msg.message.header_type));
  if (!st)
    st = batch_prepare(&r->core, b, &msg.message, msg.body, msg.body_length, msg.owner,
                       &b->error);
  qv_ipc_message_reset(&msg);
  if (st) qv_error_prefix(&b->error, "record batch %lld", (long long)i);
  b->used = true;
  b->status = st;
  b->index = i;
}

QvStatus qv_rb_file_read_batch(QvRbFileReader *r, int64_t i, struct ArrowArray *out,
                               QvError *error) {
  memset(out, 0, sizeof *out);
  if (i < 0 || i >= r->footer.n_record_batches)
    return qv_error_set(error, QV_EARG, "batch %lld does not exist (the file has %lld)",
                        (long long)i, (long long)r->footer.n_record_batches);
  if (!r->dicts_loaded) {
    QvStatus st = load_file_dictionaries(r, &r->dict_error);
    if (st) r->dict_error.code = st;
    r->dicts_loaded = true;
  }
  if (r->dict_error.code) {
    if (error) *error = r->dict_error;
    return r->dict_error.code;
  }
  Core *c = &r->core;
  bool in_order = i == r->last + 1;
  r->last = i;
  /* the batch read ahead, if it is this one (else it is dropped) */
  Batch *b = &c->batch[r->ahead];
  if (b->used && b->index != i) batch_release(c, b);
  if (!b->used) file_prepare(r, i, b);
  QvStatus st = b->status;
  if (st) {
    if (error) *error = b->error;
    batch_release(c, b);
    return st;
  }
  if (c->read_ahead && in_order && i + 1 < r->footer.n_record_batches) {
    /* the next batch starts decompressing on the workers now; whatever
     * goes wrong with it waits in it until it is asked for */
    r->ahead = 1 - r->ahead;
    file_prepare(r, i + 1, &c->batch[r->ahead]);
    if (c->batch[r->ahead].status == QV_OK) qvi_path_hit(QV_PATH_RB_READ_AHEAD);
  }
  if ((st = batch_finish(c, b, out, error))) return qv_error_prefix(error, "record batch %lld", (long long)i);
  return QV_OK;
}

/* ---- one reader for both formats */


static QvStatus file_stream_next(FileStream *p, struct ArrowArray *out, QvError *error) {
  memset(out, 0, sizeof *out);
  if (p->error.code) {
    if (error) *error = p->error;
    return p->error.code;
  }
  if (p->next >= qv_rb_file_n_batches(p->f)) return QV_EOS;
  QvStatus st = qv_rb_file_read_batch(p->f, p->next++, out, &p->error);
  if (st) {
    p->error.code = st; /* sticky, as the stream reader's errors are */
    if (error) *error = p->error;
  }
  return st;
}

static int file_stream_get_schema(struct ArrowArrayStream *s, struct ArrowSchema *out) {
  FileStream *p = s->private_data;
  return errno_of(qv_rb_file_get_schema(p->f, out, &p->error));
}

static int file_stream_get_next(struct ArrowArrayStream *s, struct ArrowArray *out) {
  QvStatus st = file_stream_next(s->private_data, out, NULL);
  return st == QV_EOS ? 0 : errno_of(st);
}

static const char *file_stream_last_error(struct ArrowArrayStream *s) {
  FileStream *p = s->private_data;
  return p->error.code ? p->error.message : NULL;
}

static void file_stream_release(struct ArrowArrayStream *s) {
  if (s == NULL || s->release == NULL) return;
  FileStream *p = s->private_data;
  qv_rb_file_reader_free(p->f);
  free(p);
  s->release = NULL;
  s->private_data = NULL;
}

QvStatus qv_rb_stream_reader_new(struct ArrowArrayStream *out, QvSource *source,
                                 const QvRbReadOptions *options, QvError *error) {
  memset(out, 0, sizeof *out);
  if (source == NULL) return qv_error_set(error, QV_EARG, "no source");
  QvRbReadOptions o;
  QvStatus st = QV_OPTIONS_LOAD(&o, options, QvRbReadOptions, error);
  if (st) return st;
  QvSource *held = NULL; /* a pipe's bytes, when they are an Arrow file */
  if (qv_source_kind(source) == QV_SOURCE_STREAM) { /* seekable or not: no offsets */
    uint8_t head[QV_IPC_MAGIC_SIZE];
    size_t got = 0;
    if ((st = qvi_source_peek(source, head, sizeof head, &got, error))) return st;
    if (got == sizeof head && memcmp(head, QV_IPC_MAGIC, QV_IPC_MAGIC_SIZE) == 0) {
      if ((st = slurp_source(source, &o, &held, error))) return st;
      source = held;
    }
  }
  if (o.validate == QV_VALIDATE_FULL) qv_source_expect_full_read(source);
  QvIpcReader *ipc;
  st = qv_ipc_reader_new(&ipc, source, o.ipc, error);
  if (!st && qv_ipc_reader_format(ipc) == QV_IPC_FORMAT_FILE) {
    /* a file is read one way everywhere: through its footer */
    FileStream *p = reader_alloc(sizeof *p, ipc, error);
    if (p == NULL) {
      st = QV_ENOMEM;
    } else if ((st = file_open(&p->f, ipc, source, &o, error))) {
      free(p);
    } else {
      out->get_schema = file_stream_get_schema;
      out->get_next = file_stream_get_next;
      out->get_last_error = file_stream_last_error;
      out->release = file_stream_release;
      out->private_data = p;
    }
  } else if (!st) {
    st = stream_start(ipc, source, &o, out, error);
  }
  qv_source_free(held);
  return st;
}

void qv_rb_stream_dictionary_ids(struct ArrowArrayStream *s, const int64_t **ids, int64_t *n) {
  *ids = NULL;
  *n = 0;
  if (s == NULL || s->release == NULL) return;
  const Core *c = NULL;
  if (s->get_schema == stream_get_schema) c = &((StreamReader *)s->private_data)->core;
  else if (s->get_schema == file_stream_get_schema) c = &((FileStream *)s->private_data)->f->core;
  if (c == NULL) return;
  *ids = c->node_ids;
  *n = c->n_node_ids;
}
