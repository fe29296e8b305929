#include "util/grow.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "quiver/buffer.h"

size_t qvi_grow_capacity(size_t cap, size_t need, size_t first, size_t size) {
  size_t max = SIZE_MAX / (size ? size : 1);
  if (need > max) return 0;
  size_t c = cap ? cap : (first ? first : 1);
  while (c < need) c = c > max / 2 ? need : c * 2;
  return c;
}

void *qvi_grow_array(void *data, size_t *cap, size_t need, size_t first, size_t size) {
  if (need <= *cap && data != NULL) return data;
  size_t c = qvi_grow_capacity(*cap, need, first, size);
  if (c == 0) return NULL;
  void *d = realloc(data, c * size);
  if (d == NULL) return NULL;
  *cap = c;
  return d;
}

QvStatus qvi_growbuf_reserve(QvGrowBuf *b, int64_t additional) {
  if (additional < 0 || b->size > INT64_MAX - additional - 64) return QV_ELIMIT;
  int64_t need = b->size + additional;
  if (need <= b->capacity) return QV_OK;
  if ((uint64_t)need > SIZE_MAX) return QV_ENOMEM;
  size_t cap = qvi_grow_capacity((size_t)b->capacity < 64 ? 64 : (size_t)b->capacity,
                                 (size_t)need, 64, 1);
  if (cap == 0 || cap > (size_t)INT64_MAX) cap = (size_t)need;
  uint8_t *d = qv_aligned_alloc(cap);
  if (d == NULL) return QV_ENOMEM;
  if (b->size) memcpy(d, b->data, (size_t)b->size);
  qv_free(b->data);
  b->data = d;
  b->capacity = (int64_t)cap;
  return QV_OK;
}

QvStatus qvi_growbuf_append(QvGrowBuf *b, const void *data, int64_t n) {
  QvStatus st = qvi_growbuf_reserve(b, n);
  if (st) return st;
  if (n) memcpy(b->data + b->size, data, (size_t)n);
  b->size += n;
  return QV_OK;
}

QvStatus qvi_growbuf_append_zeros(QvGrowBuf *b, int64_t n) {
  QvStatus st = qvi_growbuf_reserve(b, n);
  if (st) return st;
  if (n) memset(b->data + b->size, 0, (size_t)n);
  b->size += n;
  return QV_OK;
}

void qvi_growbuf_free(QvGrowBuf *b) {
  qv_free(b->data);
  memset(b, 0, sizeof *b);
}

bool qvi_strbuf_put(QvStrBuf *b, const char *s, size_t n) {
  if (b->nomem) return false;
  if (n >= SIZE_MAX - b->len) {
    b->nomem = true;
    return false;
  }
  if (b->len + n + 1 > b->cap) {
    char *d = qvi_grow_array(b->data, &b->cap, b->len + n + 1, 64, 1);
    if (d == NULL) {
      b->nomem = true;
      return false;
    }
    b->data = d;
  }
  if (n) memcpy(b->data + b->len, s, n);
  b->len += n;
  b->data[b->len] = '\0';
  return true;
}

size_t qvi_format_short(char buf[QVI_SHORT_TEXT], const char *fmt, va_list ap) {
  int n = vsnprintf(buf, QVI_SHORT_TEXT, fmt, ap);
  if (n <= 0) return 0;
  return (size_t)n < QVI_SHORT_TEXT ? (size_t)n : QVI_SHORT_TEXT - 1;
}
