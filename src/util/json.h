/* A small, strict JSON reader and writer (RFC 8259) for the extension
 * types' metadata, so that only integration JSON needs jansson.
 *
 * The reader builds a tree on an arena (util/arena.h): one qvi_arena_free
 * releases it. It refuses what RFC 8259 does not allow (trailing commas,
 * leading zeros, raw control characters, invalid UTF-8 including overlong
 * forms and encoded surrogates, lone surrogate escapes, text after the
 * value) and, beyond the RFC, duplicate keys, nesting deeper than
 * QVI_JSON_MAX_DEPTH and integers outside int64. Its memory is bounded by
 * a constant times the input's length. Numbers with a fraction or exponent
 * are kept as their text (never rounded), so writing a tree back gives the
 * numbers it was read with.
 *
 * The writer is compact (no spaces) and ASCII: what is not printable ASCII
 * is escaped, as jansson's JSON_COMPACT | JSON_ENSURE_ASCII writes it, so
 * metadata written before is written byte for byte the same. */
#ifndef QUIVER_UTIL_JSON_H
#define QUIVER_UTIL_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "quiver/error.h"
#include "util/arena.h"
#include "util/grow.h"

/* Arrays and objects nested deeper than this are refused (the parser
 * recurses once per level). */
#define QVI_JSON_MAX_DEPTH 64

typedef enum QviJsonKind {
  QVI_JSON_NULL,
  QVI_JSON_FALSE,
  QVI_JSON_TRUE,
  QVI_JSON_INT,    /* no fraction or exponent: exact in int64 */
  QVI_JSON_REAL,   /* fraction or exponent: the number's text */
  QVI_JSON_STRING, /* decoded UTF-8, NUL-terminated; may hold NUL bytes (see n) */
  QVI_JSON_ARRAY,
  QVI_JSON_OBJECT
} QviJsonKind;

typedef struct QviJsonMember QviJsonMember;

typedef struct QviJson {
  QviJsonKind kind;
  size_t n;   /* STRING, REAL: bytes of text; ARRAY, OBJECT: items */
  size_t pos; /* byte offset of the value in the input */
  union {
    int64_t i;
    const char *s;            /* STRING, REAL */
    struct QviJson *items;    /* ARRAY */
    QviJsonMember *members;   /* OBJECT, in the input's order */
  } u;
} QviJson;

struct QviJsonMember {
  const char *key; /* decoded, NUL-terminated; may hold NUL bytes (see key_len) */
  size_t key_len;
  QviJson value;
};

/* Parses text[0, len) into a tree allocated on `arena`. On failure
 * QV_EINVAL "malformed JSON at line L column C (byte B): why" (QV_ELIMIT
 * for the depth limit, QV_ENOMEM), *error_pos (when not NULL) the byte
 * offset, and *root NULL. */
QvStatus qvi_json_parse(const char *text, size_t len, QvArena *arena, const QviJson **root,
                        size_t *error_pos, QvError *error);

/* The member `key` of an object (NULL when absent or `obj` is no object). */
const QviJson *qvi_json_get(const QviJson *obj, const char *key);

/* True when the string value holds no NUL byte (a C string says all of it). */
bool qvi_json_is_c_string(const QviJson *v);

/* Deep equality (members compared in order, as the writer keeps it). */
bool qvi_json_equal(const QviJson *a, const QviJson *b);

/* Writers, appending to a string builder. The string writer refuses
 * (false, with *bad_utf8 set) text that is not UTF-8; every writer returns
 * false when memory runs out (b->nomem). */
bool qvi_json_put_string(QvStrBuf *b, const char *s, size_t n, bool *bad_utf8);
bool qvi_json_put_int(QvStrBuf *b, int64_t v);
/* A whole tree, compact and ASCII. */
bool qvi_json_write(QvStrBuf *b, const QviJson *v);

#endif
