/* util/utf8.h: qvi_utf8_decode, the one strict UTF-8 decoder (the array
 * validator and the extension metadata's JSON use it; exported as
 * qv_utf8_decode, which the CLI uses), against the textbook
 * definition written here independently: every code point round-trips, and
 * every 1-, 2- and 3-byte input (and the 4-byte ones around each boundary)
 * is accepted exactly when it is the shortest encoding of a scalar value. */
#include <string.h>

#include "quiver/advanced.h"
#include "test_util.h"
#include "util/utf8.h"

static size_t encode(uint32_t cp, uint8_t *out) {
  if (cp < 0x80) return out[0] = (uint8_t)cp, 1;
  if (cp < 0x800) return out[0] = (uint8_t)(0xC0 | cp >> 6), out[1] = (uint8_t)(0x80 | (cp & 0x3F)), 2;
  if (cp < 0x10000) {
    out[0] = (uint8_t)(0xE0 | cp >> 12);
    out[1] = (uint8_t)(0x80 | ((cp >> 6) & 0x3F));
    out[2] = (uint8_t)(0x80 | (cp & 0x3F));
    return 3;
  }
  out[0] = (uint8_t)(0xF0 | cp >> 18);
  out[1] = (uint8_t)(0x80 | ((cp >> 12) & 0x3F));
  out[2] = (uint8_t)(0x80 | ((cp >> 6) & 0x3F));
  out[3] = (uint8_t)(0x80 | (cp & 0x3F));
  return 4;
}

/* RFC 3629 by its bit patterns: the length the lead byte announces, that
 * many continuation bytes, and the value in range and shortest-encoded. */
static size_t textbook(const uint8_t *s, size_t n, uint32_t *cp) {
  size_t len = s[0] < 0x80 ? 1 : (s[0] & 0xE0) == 0xC0 ? 2 : (s[0] & 0xF0) == 0xE0 ? 3
             : (s[0] & 0xF8) == 0xF0 ? 4 : 0;
  if (len == 0 || n < len) return 0;
  uint32_t v = len == 1 ? s[0] : (uint32_t)(s[0] & (0x7F >> len));
  for (size_t i = 1; i < len; i++) {
    if ((s[i] & 0xC0) != 0x80) return 0;
    v = v << 6 | (s[i] & 0x3Fu);
  }
  uint8_t again[4];
  if (v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF) || encode(v, again) != len) return 0;
  *cp = v;
  return len;
}

static void agree(const uint8_t *s, size_t n) {
  uint32_t want_cp = 0xFFFFFFFFu, got_cp = 0xFFFFFFFFu;
  size_t want = textbook(s, n, &want_cp);
  size_t got = qvi_utf8_decode(s, n, &got_cp);
  uint32_t pub_cp = 0xFFFFFFFFu;
  size_t pub = qv_utf8_decode(s, n, &pub_cp);
  if (pub != got || (got != 0 && pub_cp != got_cp))
    fail_msg("%02x (n %zu): qv_utf8_decode %zu, qvi_utf8_decode %zu", s[0], n, pub, got);
  if (got != want || (want != 0 && got_cp != want_cp)) {
    fail_msg("%02x %02x %02x %02x (n %zu): decoded length %zu, code point %x; want %zu, %x", s[0],
             n > 1 ? s[1] : 0, n > 2 ? s[2] : 0, n > 3 ? s[3] : 0, n, got, (unsigned)got_cp, want,
             (unsigned)want_cp);
  }
}

static void test_every_code_point(void **state) {
  (void)state;
  int64_t seen = 0;
  for (uint32_t cp = 0; cp <= 0x10FFFF; cp++) {
    if (cp >= 0xD800 && cp <= 0xDFFF) continue;
    uint8_t b[5] = {0, 0, 0, 0, 'x'};
    size_t len = encode(cp, b);
    uint32_t got = 0xFFFFFFFFu;
    /* exactly its bytes, and followed by more */
    if (qvi_utf8_decode(b, len, &got) != len || got != cp) fail_msg("U+%04X does not decode", (unsigned)cp);
    if (qvi_utf8_decode(b, len + 1, &got) != len || got != cp) fail_msg("U+%04X + 1 byte", (unsigned)cp);
    /* cut short by one byte */
    if (len > 1 && qvi_utf8_decode(b, len - 1, &got) != 0) fail_msg("U+%04X cut short", (unsigned)cp);
    seen++;
  }
  assert_int_equal(seen, 0x110000 - 0x800);
}

static void test_surrogates_and_beyond(void **state) {
  (void)state;
  uint32_t cp;
  /* U+D800 and U+DFFF as CESU-style three bytes, U+110000, overlong NUL */
  assert_int_equal(qvi_utf8_decode((const uint8_t *)"\xED\xA0\x80", 3, &cp), 0);
  assert_int_equal(qvi_utf8_decode((const uint8_t *)"\xED\xBF\xBF", 3, &cp), 0);
  assert_int_equal(qvi_utf8_decode((const uint8_t *)"\xF4\x90\x80\x80", 4, &cp), 0);
  assert_int_equal(qvi_utf8_decode((const uint8_t *)"\xC0\x80", 2, &cp), 0);
  assert_int_equal(qvi_utf8_decode((const uint8_t *)"\xE0\x9F\xBF", 3, &cp), 0);
  assert_int_equal(qvi_utf8_decode((const uint8_t *)"\xF0\x8F\xBF\xBF", 4, &cp), 0);
  /* the last of each range */
  assert_int_equal(qvi_utf8_decode((const uint8_t *)"\xED\x9F\xBF", 3, &cp), 3);
  assert_int_equal(cp, 0xD7FF);
  assert_int_equal(qvi_utf8_decode((const uint8_t *)"\xF4\x8F\xBF\xBF", 4, &cp), 4);
  assert_int_equal(cp, 0x10FFFF);
}

static void test_every_short_input(void **state) {
  (void)state;
  /* the continuation bytes' boundaries and their neighbours */
  static const uint8_t edge[] = {0x00, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xFF};
  uint8_t s[4];
  for (int a = 0; a < 256; a++) {
    s[0] = (uint8_t)a;
    agree(s, 1);
    for (int b = 0; b < 256; b++) {
      s[1] = (uint8_t)b;
      agree(s, 2);
      /* every third byte after a three-byte lead, the edges after others */
      for (int c = 0; c < 256; c++) {
        if ((a & 0xF0) != 0xE0 && memchr(edge, c, sizeof edge) == NULL) continue;
        s[2] = (uint8_t)c;
        agree(s, 3);
        if (a < 0xF0) continue;
        for (size_t d = 0; d < sizeof edge; d++) {
          s[3] = edge[d];
          agree(s, 4);
        }
      }
    }
  }
}

/* The public pair: NULL and empty input decode to nothing; the printers'
 * list of invisible code points, at each range's edges. */
static void test_public_text_kernels(void **state) {
  (void)state;
  uint32_t cp = 0;
  assert_int_equal(qv_utf8_decode(NULL, 4, &cp), 0);
  assert_int_equal(qv_utf8_decode((const uint8_t *)"a", 0, &cp), 0);
  assert_int_equal(qv_utf8_decode((const uint8_t *)"a", 1, NULL), 0);
  static const uint32_t in[] = {0x80,   0x9F,   0xAD,   0x61C,  0x70F,   0x180E,  0x200B,
                                0x200F, 0x2028, 0x202E, 0x2060, 0x206F,  0xFEFF,  0xFFF9,
                                0xFFFB, 0xE0000, 0xE007F};
  static const uint32_t out[] = {0x7F,   0xA0,   0xAC,   0xAE,   0x61B,   0x61D,   0x70E,
                                 0x710,  0x180D, 0x180F, 0x200A, 0x2010,  0x2027,  0x202F,
                                 0x205F, 0x2070, 0xFEFE, 0xFF00, 0xFFF8,  0xFFFC,  0xDFFFF,
                                 0xE0080, 'a',    0x263A};
  for (size_t i = 0; i < sizeof in / sizeof in[0]; i++)
    if (!qv_unicode_is_invisible(in[i])) fail_msg("U+%04X should be invisible", (unsigned)in[i]);
  for (size_t i = 0; i < sizeof out / sizeof out[0]; i++)
    if (qv_unicode_is_invisible(out[i])) fail_msg("U+%04X is not invisible", (unsigned)out[i]);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_every_code_point),
      cmocka_unit_test(test_surrogates_and_beyond),
      cmocka_unit_test(test_every_short_input),
      cmocka_unit_test(test_public_text_kernels),
  };
  return qv_test_run(tests, NULL, NULL);
}
