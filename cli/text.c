/* quiver CLI: growing strings (text.h). */
#include "text.h"

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

/* Characters that change how the text around them is shown without being
 * seen (bidirectional overrides and isolates, zero-width and other format
 * characters, line separators, tags): a name holding U+202E would show
 * reversed. The library escapes the same ones in values (src/array/print.c). */
static bool is_invisible(unsigned cp) {
  return cp == 0xAD || cp == 0x61C || cp == 0x70F || cp == 0x180E ||
         (cp >= 0x200B && cp <= 0x200F) || (cp >= 0x2028 && cp <= 0x202E) ||
         (cp >= 0x2060 && cp <= 0x206F) || cp == 0xFEFF || (cp >= 0xFFF9 && cp <= 0xFFFB) ||
         (cp >= 0xE0000 && cp <= 0xE007F);
}

/* Length of the valid UTF-8 sequence at p[0..n), 0 if there is none
 * (overlong forms, surrogates and code points past U+10FFFF are invalid);
 * its code point in *code. */
static size_t utf8_length(const unsigned char *p, size_t n, unsigned *code) {
  unsigned char c = p[0];
  size_t len;
  unsigned min;
  *code = c;
  if (c < 0x80) return 1;
  if (c >= 0xC2 && c <= 0xDF) len = 2, min = 0x80;
  else if (c >= 0xE0 && c <= 0xEF) len = 3, min = 0x800;
  else if (c >= 0xF0 && c <= 0xF4) len = 4, min = 0x10000;
  else return 0;
  if (n < len) return 0;
  unsigned cp = c & (0x3F >> (len - 1));
  for (size_t i = 1; i < len; i++) {
    if ((p[i] & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (p[i] & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  *code = cp;
  return len;
}

void cli_text_put_name(QvCliText *t, const char *s, size_t n) {
  const unsigned char *p = (const unsigned char *)s;
  size_t i = 0, run = 0;
  while (i < n) {
    unsigned cp = 0;
    size_t k = utf8_length(p + i, n - i, &cp);
    /* C1 controls are U+0080..U+009F */
    bool hidden = k > 1 && ((cp >= 0x80 && cp < 0xA0) || is_invisible(cp));
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
      else if (cp > 0xFFFF) cli_text_printf(t, "\\U%08x", cp);
      else cli_text_printf(t, "\\u%04x", cp);
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
