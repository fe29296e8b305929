/* libFuzzer target: util/json.c, the strict JSON reader and writer of the
 * extension metadata. Input: any bytes, parsed as JSON text. Accepted text
 * must write (compact, ASCII) to text that parses to the same tree and
 * writes to the same bytes; a refusal must say where, within the input.
 * Seeds: fuzz/corpus/fuzz_json_util/, the corpus test_util_json reads. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/json.h"

#define CHECK(cond)                                                                      \
  do {                                                                                   \
    if (!(cond)) {                                                                       \
      fprintf(stderr, "fuzz_json_util: %s:%d: check failed: %s\n", __FILE__, __LINE__, \
              #cond);                                                                    \
      abort();                                                                           \
    }                                                                                    \
  } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  QvArena *arena = qvi_arena_new();
  CHECK(arena != NULL);
  const QviJson *a, *b;
  size_t pos;
  QvError e = {0};
  QvStatus st = qvi_json_parse((const char *)data, size, arena, &a, &pos, &e);
  if (st != QV_OK) {
    CHECK(st == QV_EINVAL || st == QV_ELIMIT || st == QV_ENOMEM);
    CHECK(a == NULL && pos <= size);
    CHECK(st == QV_ENOMEM || strstr(e.message, "malformed JSON at line") != NULL);
    qvi_arena_free(arena);
    return 0;
  }
  QvStrBuf w1 = {0}, w2 = {0};
  CHECK(qvi_json_write(&w1, a));
  /* ASCII only, no spaces outside strings: the writer's promise */
  for (size_t i = 0; i < w1.len; i++) CHECK((unsigned char)w1.data[i] < 0x80);
  st = qvi_json_parse(w1.data, w1.len, arena, &b, &pos, &e);
  if (st != QV_OK) fprintf(stderr, "fuzz_json_util: rewritten text refused: %s\n", e.message);
  CHECK(st == QV_OK);
  CHECK(qvi_json_equal(a, b));
  CHECK(qvi_json_write(&w2, b));
  CHECK(w1.len == w2.len && memcmp(w1.data, w2.data, w1.len) == 0);
  free(w1.data);
  free(w2.data);
  qvi_arena_free(arena);
  return 0;
}
