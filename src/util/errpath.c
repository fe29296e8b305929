#include "util/errpath.h"

#include <stdarg.h>
#include <stdio.h>

void qvi_errpath_clear(QvErrPath *p) {
  p->len = 0;
  p->text[0] = '\0';
}

size_t qvi_errpath_push(QvErrPath *p, const char *fmt, ...) {
  size_t old = p->len;
  if (p->len < sizeof p->text - 1) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(p->text + p->len, sizeof p->text - p->len, fmt, ap);
    va_end(ap);
    if (n > 0) p->len += (size_t)n;
    if (p->len > sizeof p->text - 1) p->len = sizeof p->text - 1;
  }
  return old;
}

void qvi_errpath_pop(QvErrPath *p, size_t len) {
  p->len = len;
  p->text[len] = '\0';
}
