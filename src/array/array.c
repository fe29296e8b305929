/* ArrowArray nodes made by quiver: allocation, release, export of views,
 * sharing and concatenation. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "array/array_internal.h"

static void array_release(struct ArrowArray *a) {
  if (a == NULL || a->release == NULL) return;
  QvArrayPrivate *p = a->private_data;
  if (p) {
    for (int64_t i = 0; i < a->n_children; i++) {
      struct ArrowArray *c = &p->child_storage[i];
      if (c->release) c->release(c);
    }
    if (p->dictionary_storage && p->dictionary_storage->release)
      p->dictionary_storage->release(p->dictionary_storage);
    if (p->builder) qvi_builder_free(p->builder);
    qv_owner_free(p->owner);
    if (p->buffer_ptrs_apart) free(p->buffer_ptrs);
    free(p->variadic_sizes);
    free(p); /* and the pointers and child structs in its block */
  }
  a->release = NULL;
  a->private_data = NULL;
}

bool qv_array_is_quiver(const struct ArrowArray *array) {
  return array != NULL && array->release == array_release && array->private_data != NULL;
}

QvStatus qvi_array_alloc_node(struct ArrowArray *a, int64_t n_buffers, int64_t n_children,
                             bool with_dictionary, QvError *error) {
  memset(a, 0, sizeof *a);
  /* One block: the private data, the buffer pointers, the child structs,
   * their pointers and the dictionary struct (separate callocs were most of
   * a cheap read's allocator time: 12 of them per batch of 4 columns). */
  size_t nb = (size_t)(n_buffers > 0 ? n_buffers : 1), nc = (size_t)(n_children > 0 ? n_children : 0);
  if ((uint64_t)nb > SIZE_MAX / 512 || (uint64_t)nc > SIZE_MAX / 512) /* no sum below wraps */
    return qv_error_set(error, QV_ENOMEM, "out of memory (an array node of %lld buffers and "
                        "%lld children)", (long long)n_buffers, (long long)n_children);
  size_t head = (sizeof(QvArrayPrivate) + 7) & ~(size_t)7;
  size_t size = head + nb * sizeof(void *) + nc * (sizeof(struct ArrowArray) + sizeof(void *)) +
                (with_dictionary ? sizeof(struct ArrowArray) : 0);
  uint8_t *block = calloc(1, size);
  if (block == NULL) return qv_error_set(error, QV_ENOMEM, "out of memory");
  QvArrayPrivate *p = (QvArrayPrivate *)(void *)block;
  uint8_t *at = block + head;
  p->buffer_ptrs = (const void **)(void *)at;
  at += nb * sizeof(void *);
  a->private_data = p;
  a->release = array_release;
  a->buffers = p->buffer_ptrs;
  a->n_buffers = n_buffers;
  if (nc > 0) {
    p->child_storage = (struct ArrowArray *)(void *)at;
    at += nc * sizeof(struct ArrowArray);
    p->child_ptrs = (struct ArrowArray **)(void *)at;
    at += nc * sizeof(void *);
    for (size_t i = 0; i < nc; i++) p->child_ptrs[i] = &p->child_storage[i];
    a->children = p->child_ptrs;
    a->n_children = n_children;
  }
  if (with_dictionary) {
    p->dictionary_storage = (struct ArrowArray *)(void *)at;
    a->dictionary = p->dictionary_storage;
  }
  return QV_OK;
}

/* ---- export of views */

static const void *or_zero(const uint8_t *p) { return p ? (const void *)p : (const void *)qvi_zero_block; }

static QvStatus export_node(const QvArrayView *v, QvOwner *owner, struct ArrowArray *out,
                            int depth, QvError *error) {
  if (depth > QV_ARRAY_MAX_DEPTH)
    return qv_error_set(error, QV_ELIMIT, "array nested deeper than %d", QV_ARRAY_MAX_DEPTH);
  QvLayout L = qvi_view_layout(v);
  int64_t nb = qv_layout_n_buffers(L);
  if (L == QV_LAYOUT_VIEW) nb = 3 + v->n_variadic;
  QvStatus st = qvi_array_alloc_node(out, nb, v->n_children, v->dictionary != NULL, error);
  if (st) return st;
  QvArrayPrivate *p = out->private_data;
  out->length = v->length;
  out->offset = v->offset;
  out->null_count = v->null_count;
  qv_owner_retain(owner);
  p->owner = owner;
  const void **b = p->buffer_ptrs;
  switch (L) {
    case QV_LAYOUT_NULL:
    case QV_LAYOUT_REE: break;
    case QV_LAYOUT_STRUCT:
    case QV_LAYOUT_FIXED_LIST: b[0] = v->buffer[0]; break;
    case QV_LAYOUT_BOOL:
    case QV_LAYOUT_FIXED:
    case QV_LAYOUT_LIST:
    case QV_LAYOUT_LARGE_LIST:
      b[0] = v->buffer[0];
      b[1] = or_zero(v->buffer[1]);
      break;
    case QV_LAYOUT_BINARY:
    case QV_LAYOUT_LARGE_BINARY:
    case QV_LAYOUT_LIST_VIEW:
    case QV_LAYOUT_LARGE_LIST_VIEW:
      b[0] = v->buffer[0];
      b[1] = or_zero(v->buffer[1]);
      b[2] = or_zero(v->buffer[2]);
      break;
    case QV_LAYOUT_VIEW:
      b[0] = v->buffer[0];
      b[1] = or_zero(v->buffer[1]);
      if (v->n_variadic > 0) {
        p->variadic_sizes = malloc((size_t)v->n_variadic * sizeof(int64_t));
        if (p->variadic_sizes == NULL) {
          out->release(out);
          return qv_error_set(error, QV_ENOMEM, "out of memory");
        }
        memcpy(p->variadic_sizes, v->variadic_size, (size_t)v->n_variadic * sizeof(int64_t));
      }
      for (int64_t k = 0; k < v->n_variadic; k++) b[2 + k] = or_zero(v->variadic[k]);
      b[2 + v->n_variadic] = p->variadic_sizes ? (const void *)p->variadic_sizes : or_zero(NULL);
      break;
    case QV_LAYOUT_SPARSE_UNION: b[0] = or_zero(v->buffer[1]); break;
    case QV_LAYOUT_DENSE_UNION:
      b[0] = or_zero(v->buffer[1]);
      b[1] = or_zero(v->buffer[2]);
      break;
  }
  for (int64_t i = 0; i < v->n_children; i++) {
    if ((st = export_node(&v->children[i], owner, out->children[i], depth + 1, error))) {
      out->release(out);
      return st;
    }
  }
  if (v->dictionary) {
    if (v->dictionary->array)
      st = qv_array_share(v->dictionary->array, out->dictionary, error);
    else
      st = export_node(v->dictionary, owner, out->dictionary, depth + 1, error);
    if (st) {
      out->release(out);
      return st;
    }
  }
  return QV_OK;
}

QvStatus qv_array_export_view(const QvArrayView *view, QvOwner *owner, struct ArrowArray *out,
                              QvError *error) {
  return export_node(view, owner, out, 0, error);
}

/* ---- sharing */

static QvStatus share_node(const struct ArrowArray *s, struct ArrowArray *d, int depth,
                           QvError *error) {
  if (depth > QV_ARRAY_MAX_DEPTH)
    return qv_error_set(error, QV_ELIMIT, "array nested deeper than %d", QV_ARRAY_MAX_DEPTH);
  if (!qv_array_is_quiver(s))
    return qv_error_set(error, QV_EARG, "only arrays made by quiver can be shared");
  const QvArrayPrivate *sp = s->private_data;
  if (sp->builder) return qv_error_set(error, QV_EARG, "cannot share an array being built");
  QvStatus st = qvi_array_alloc_node(d, s->n_buffers, s->n_children, s->dictionary != NULL, error);
  if (st) return st;
  QvArrayPrivate *dp = d->private_data;
  d->length = s->length;
  d->offset = s->offset;
  d->null_count = s->null_count;
  if (s->n_buffers > 0) memcpy(dp->buffer_ptrs, s->buffers, (size_t)s->n_buffers * sizeof(void *));
  if (sp->variadic_sizes) {
    int64_t n = s->n_buffers - 3;
    dp->variadic_sizes = malloc((size_t)n * sizeof(int64_t));
    if (dp->variadic_sizes == NULL) {
      d->release(d);
      return qv_error_set(error, QV_ENOMEM, "out of memory");
    }
    memcpy(dp->variadic_sizes, sp->variadic_sizes, (size_t)n * sizeof(int64_t));
    dp->buffer_ptrs[s->n_buffers - 1] = dp->variadic_sizes;
  }
  qv_owner_retain(sp->owner);
  dp->owner = sp->owner;
  for (int64_t i = 0; i < s->n_children; i++) {
    if ((st = share_node(s->children[i], d->children[i], depth + 1, error))) {
      d->release(d);
      return st;
    }
  }
  if (s->dictionary && (st = share_node(s->dictionary, d->dictionary, depth + 1, error))) {
    d->release(d);
    return st;
  }
  return QV_OK;
}

QvStatus qv_array_share(const struct ArrowArray *src, struct ArrowArray *dst, QvError *error) {
  memset(dst, 0, sizeof *dst);
  return share_node(src, dst, 0, error);
}

QvStatus qv_array_concat(const struct ArrowArray *a, const struct ArrowArray *b,
                         const struct ArrowSchema *schema, struct ArrowArray *out,
                         QvError *error) {
  memset(out, 0, sizeof *out);
  QvArrayView va, vb;
  memset(&vb, 0, sizeof vb);
  QvStatus st = qv_array_view_init(&va, schema, error);
  if (st) return st;
  if ((st = qv_array_view_init(&vb, schema, error))) goto done;
  if ((st = qv_array_view_set_array(&va, a, QV_VALIDATE_CHEAP, error))) goto done;
  if ((st = qv_array_view_set_array(&vb, b, QV_VALIDATE_CHEAP, error))) goto done;
  if ((st = qv_array_init_from_schema(out, schema, error))) goto done;
  if ((st = qv_array_append_view(out, &va, 0, va.length, error)) ||
      (st = qv_array_append_view(out, &vb, 0, vb.length, error)) ||
      (st = qv_array_finish_building(out, QV_VALIDATE_CHEAP, error))) {
    out->release(out);
  }
done:
  qv_array_view_reset(&va);
  qv_array_view_reset(&vb);
  return st;
}
