/* util/grow.c: the one doubling capacity (first size, doubling, the
 * saturation at need, overflow refused), the array grower, the aligned
 * byte buffer's limits and the string builder. */
#include <stdlib.h>
#include <string.h>

#include "test_util.h"
#include "util/grow.h"

static void test_capacity(void **state) {
  (void)state;
  assert_int_equal(qvi_grow_capacity(0, 1, 16, 8), 16);
  assert_int_equal(qvi_grow_capacity(0, 17, 16, 8), 32);
  assert_int_equal(qvi_grow_capacity(16, 17, 4, 8), 32);
  assert_int_equal(qvi_grow_capacity(16, 16, 4, 8), 16);
  assert_int_equal(qvi_grow_capacity(3, 100, 4, 1), 192);
  assert_int_equal(qvi_grow_capacity(0, 5, 0, 1), 8); /* no first size: from 1 */
  /* doubling would pass what size_t counts of 8-byte items: need itself */
  size_t max8 = SIZE_MAX / 8;
  assert_true(qvi_grow_capacity(max8 / 2 + 1, max8 - 1, 16, 8) == max8 - 1);
  assert_true(qvi_grow_capacity(max8 / 2, max8, 16, 8) == max8);
  /* need items that do not fit size_t at all: refused */
  assert_int_equal(qvi_grow_capacity(16, max8 + 1, 16, 8), 0);
  assert_int_equal(qvi_grow_capacity(0, SIZE_MAX, 16, 2), 0);
  assert_true(qvi_grow_capacity(0, SIZE_MAX, 16, 1) == SIZE_MAX);
}

static void test_array(void **state) {
  (void)state;
  size_t cap = 0;
  int64_t *a = qvi_grow_array(NULL, &cap, 1, 4, sizeof *a);
  assert_non_null(a);
  assert_int_equal(cap, 4);
  for (int64_t i = 0; i < 4; i++) a[i] = i;
  int64_t *b = qvi_grow_array(a, &cap, 3, 4, sizeof *b);
  assert_ptr_equal(a, b); /* room enough: unchanged */
  b = qvi_grow_array(a, &cap, 5, 4, sizeof *b);
  assert_non_null(b);
  assert_int_equal(cap, 8);
  for (int64_t i = 0; i < 4; i++) assert_int_equal(b[i], i);
  /* an overflowing size leaves the array and its capacity alone */
  int64_t *c = qvi_grow_array(b, &cap, SIZE_MAX / 4, 4, sizeof *c);
  assert_null(c);
  assert_int_equal(cap, 8);
  assert_int_equal(b[3], 3);
  free(b);
}

static void test_growbuf(void **state) {
  (void)state;
  QvGrowBuf g = {0};
  assert_int_equal(qvi_growbuf_append(&g, "abc", 3), QV_OK);
  assert_int_equal(g.capacity, 64);
  assert_int_equal((uintptr_t)g.data % 64, 0);
  assert_int_equal(qvi_growbuf_append_zeros(&g, 100), QV_OK);
  assert_int_equal(g.size, 103);
  assert_int_equal(g.capacity, 128);
  assert_memory_equal(g.data, "abc\0\0", 5);
  assert_int_equal(g.data[102], 0);
  assert_int_equal(qvi_growbuf_reserve(&g, -1), QV_ELIMIT);
  assert_int_equal(qvi_growbuf_reserve(&g, INT64_MAX - 100), QV_ELIMIT);
  assert_int_equal(g.size, 103);
  qvi_growbuf_free(&g);
  assert_null(g.data);
  assert_int_equal(g.capacity, 0);
}

static void test_strbuf(void **state) {
  (void)state;
  QvStrBuf s = {0};
  assert_true(qvi_strbuf_put(&s, "", 0)); /* an empty text exists */
  assert_non_null(s.data);
  assert_string_equal(s.data, "");
  char big[300];
  memset(big, 'x', sizeof big);
  assert_true(qvi_strbuf_put(&s, "ab", 2));
  assert_true(qvi_strbuf_put(&s, big, sizeof big));
  assert_int_equal(s.len, 302);
  assert_true(s.cap > s.len);
  assert_int_equal(s.data[302], '\0');
  assert_int_equal(strncmp(s.data, "abxx", 4), 0);
  /* a length that would wrap is refused and sticks */
  assert_false(qvi_strbuf_put(&s, big, SIZE_MAX - 1));
  assert_true(s.nomem);
  assert_false(qvi_strbuf_put(&s, "c", 1));
  assert_int_equal(s.len, 302);
  free(s.data);
}

static size_t short_text(char buf[QVI_SHORT_TEXT], const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  size_t n = qvi_format_short(buf, fmt, ap);
  va_end(ap);
  return n;
}

static void test_format_short(void **state) {
  (void)state;
  char buf[QVI_SHORT_TEXT];
  assert_int_equal(short_text(buf, "%d-%s", 42, "x"), 4);
  assert_string_equal(buf, "42-x");
  assert_int_equal(short_text(buf, "%s", ""), 0);
  char long_s[200];
  memset(long_s, 'y', sizeof long_s - 1);
  long_s[sizeof long_s - 1] = '\0';
  assert_int_equal(short_text(buf, "%s", long_s), QVI_SHORT_TEXT - 1);
  assert_int_equal(strlen(buf), QVI_SHORT_TEXT - 1);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_capacity), cmocka_unit_test(test_array),
      cmocka_unit_test(test_growbuf),  cmocka_unit_test(test_strbuf),
      cmocka_unit_test(test_format_short),
  };
  return qv_test_run(tests, NULL, NULL);
}
