/* Growth written once: the doubling capacity every growing array uses, a
 * growable 64-byte aligned byte buffer, and a string builder. All of them
 * check their arithmetic: a size that does not fit is refused, never
 * wrapped. */
#ifndef QUIVER_UTIL_GROW_H
#define QUIVER_UTIL_GROW_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "quiver/error.h"

/* The capacity, in items of `size` bytes, to grow an array of `cap` items
 * to so that it holds `need`: `cap` (or `first` when cap is 0) doubled
 * until it does, `need` itself where doubling would pass what size_t can
 * count. 0 when `need` items do not fit size_t at all. */
size_t qvi_grow_capacity(size_t cap, size_t need, size_t first, size_t size);

/* Grows `data`, an array of *cap items of `size` bytes (realloc), to hold
 * at least `need` items: the new array with *cap updated, or NULL (data
 * unchanged and still owned by the caller) when the size overflows or
 * memory runs out. */
void *qvi_grow_array(void *data, size_t *cap, size_t need, size_t first, size_t size);

/* Growable, 64-byte aligned byte buffer (qv_aligned_alloc), used by the
 * array builders. */
typedef struct QvGrowBuf {
  uint8_t *data;
  int64_t size;
  int64_t capacity;
} QvGrowBuf;

/* Room for `additional` more bytes: QV_ELIMIT when the size would pass
 * INT64_MAX, QV_ENOMEM when it cannot be had. */
QvStatus qvi_growbuf_reserve(QvGrowBuf *b, int64_t additional);
QvStatus qvi_growbuf_append(QvGrowBuf *b, const void *data, int64_t n);
QvStatus qvi_growbuf_append_zeros(QvGrowBuf *b, int64_t n);
void qvi_growbuf_free(QvGrowBuf *b);

/* A string builder (malloc'd, NUL-terminated once anything is put). After
 * running out of memory `nomem` is set and every put is ignored. */
typedef struct QvStrBuf {
  char *data;
  size_t len, cap;
  bool nomem;
} QvStrBuf;

/* Appends s[0, n) (n may be 0: the text then exists, empty); false when
 * memory ran out (now or before). */
bool qvi_strbuf_put(QvStrBuf *b, const char *s, size_t n);

/* Formats a short piece of text (numbers, names, punctuation) into
 * buf[0, QVI_SHORT_TEXT): its length, cut to what fits. The builders' own
 * printf-style puts format with it and append through their own rules
 * (limits, counting). */
#define QVI_SHORT_TEXT 128
size_t qvi_format_short(char buf[QVI_SHORT_TEXT], const char *fmt, va_list ap);

#endif
