/* quiver CLI: growing strings (text.h). */
#include "text.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void qv_cli_text_putn(QvCliText *t, const char *s, size_t n) {
  if (t->failed) return;
  if (n + 1 > t->cap - t->len || t->p == NULL) {
    size_t cap = t->cap ? t->cap : 64;
    while (cap - t->len < n + 1) {
      if (cap > SIZE_MAX / 2) {
        t->failed = true;
        return;
      }
      cap *= 2;
    }
    char *np = realloc(t->p, cap);
    if (np == NULL) {
      t->failed = true;
      return;
    }
    t->p = np;
    t->cap = cap;
  }
  memcpy(t->p + t->len, s, n);
  t->len += n;
  t->p[t->len] = '\0';
}

void qv_cli_text_puts(QvCliText *t, const char *s) { qv_cli_text_putn(t, s, strlen(s)); }

void qv_cli_text_spaces(QvCliText *t, int n) {
  static const char spaces[] = "                                ";
  while (n > 0) {
    int k = n < (int)sizeof spaces - 1 ? n : (int)sizeof spaces - 1;
    qv_cli_text_putn(t, spaces, (size_t)k);
    n -= k;
  }
}

void qv_cli_text_printf(QvCliText *t, const char *fmt, ...) {
  char buf[256];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  if (n < 0) {
    t->failed = true;
    return;
  }
  if ((size_t)n < sizeof buf) {
    qv_cli_text_putn(t, buf, (size_t)n);
    return;
  }
  /* longer than the stack buffer (a long name): format again into the heap */
  char *big = malloc((size_t)n + 1);
  if (big == NULL) {
    t->failed = true;
    return;
  }
  va_start(ap, fmt);
  vsnprintf(big, (size_t)n + 1, fmt, ap);
  va_end(ap);
  qv_cli_text_putn(t, big, (size_t)n);
  free(big);
}

const char *qv_cli_text_str(const QvCliText *t) { return t->p ? t->p : ""; }

void qv_cli_text_free(QvCliText *t) {
  free(t->p);
  memset(t, 0, sizeof *t);
}
