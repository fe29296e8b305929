/* quiver CLI: growing strings (text.h). */
#include "text.h"

#include "quiver/advanced.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void cli_text_putn(QvCliText *t, const char *s, size_t n) {
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

void cli_text_puts(QvCliText *t, const char *s) { cli_text_putn(t, s, strlen(s)); }

void cli_text_spaces(QvCliText *t, int n) {
  static const char spaces[] = "                                ";
  while (n > 0) {
    int k = n < (int)sizeof spaces - 1 ? n : (int)sizeof spaces - 1;
    cli_text_putn(t, spaces, (size_t)k);
    n -= k;
  }
}

void cli_text_printf(QvCliText *t, const char *fmt, ...) {
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
    cli_text_putn(t, buf, (size_t)n);
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
  cli_text_putn(t, big, (size_t)n);
  free(big);
}

void cli_text_put_name(QvCliText *t, const char *s, size_t n) {
  const unsigned char *p = (const unsigned char *)s;
  size_t i = 0, run = 0;
  while (i < n) {
    uint32_t cp = 0;
    /* invalid bytes (k == 0) print as \xNN; characters that change how the
     * text around them shows (a name holding U+202E would show reversed)
     * as \uNNNN, as the library's printers escape them in values */
    size_t k = qv_utf8_decode(p + i, n - i, &cp);
    bool hidden = k > 1 && qv_unicode_is_invisible(cp);
    if (k == 1 && p[i] >= 0x20 && p[i] != 0x7F && p[i] != '\\') {
      i++;
      continue;
    }
    if (k > 1 && !hidden) {
      i += k;
      continue;
    }
    cli_text_putn(t, s + run, i - run);
    if (k == 0) {
      cli_text_printf(t, "\\x%02x", p[i]);
      i++;
    } else {
      if (cp == '\n') cli_text_puts(t, "\\n");
      else if (cp == '\t') cli_text_puts(t, "\\t");
      else if (cp == '\r') cli_text_puts(t, "\\r");
      else if (cp == '\\') cli_text_puts(t, "\\\\");
      else if (cp > 0xFFFF) cli_text_printf(t, "\\U%08x", (unsigned)cp);
      else cli_text_printf(t, "\\u%04x", (unsigned)cp);
      i += k;
    }
    run = i;
  }
  cli_text_putn(t, s + run, n - run);
}

const char *cli_text_str(const QvCliText *t) { return t->p ? t->p : ""; }

void cli_text_free(QvCliText *t) {
  free(t->p);
  memset(t, 0, sizeof *t);
}
