/* quiver CLI: growing strings for the printers (cat's arrays, the record
 * batch table). Out of memory is remembered rather than returned at each
 * append: `failed` is checked once, when the text is used. */
#ifndef QUIVER_CLI_TEXT_H
#define QUIVER_CLI_TEXT_H

#include <stdbool.h>
#include <stddef.h>

typedef struct QvCliText {
  char *p; /* NUL-terminated; NULL until the first append */
  size_t len, cap;
  bool failed; /* an append ran out of memory (and was dropped) */
} QvCliText;

void cli_text_putn(QvCliText *t, const char *s, size_t n);
void cli_text_puts(QvCliText *t, const char *s);
void cli_text_spaces(QvCliText *t, int n);
void cli_text_printf(QvCliText *t, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* A name from a file (field, dimension, time zone): data, not terminal
 * input. Control characters (C0, DEL and C1, which terminals obey as
 * escape sequences) and the backslash are escaped as in JSON (\n, \t, \\,
 * \u001b); bytes that are not UTF-8 as \xHH. Everything else is kept. */
void cli_text_put_name(QvCliText *t, const char *s, size_t n);
/* "" when nothing was appended. */
const char *cli_text_str(const QvCliText *t);
/* Frees and zeroes the text. */
void cli_text_free(QvCliText *t);

#endif
