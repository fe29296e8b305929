/* UTF-8 over whole strings (the array validator, Flight's descriptor
 * paths) and the text kernels of quiver/advanced.h: the strict decoder
 * (util/utf8.h, inline for the validators' loops) exported, and the one
 * list of code points that printers escape. */
#include "util/utf8.h"

#include "quiver/advanced.h"
#include "util/load.h"

size_t qv_utf8_decode(const uint8_t *s, size_t n, uint32_t *cp) {
  if (s == NULL || n == 0 || cp == NULL) return 0;
  return qvi_utf8_decode(s, n, cp);
}

bool qv_unicode_is_invisible(uint32_t cp) {
  return (cp >= 0x80 && cp <= 0x9F) || cp == 0xAD || cp == 0x61C || cp == 0x70F ||
         cp == 0x180E || (cp >= 0x200B && cp <= 0x200F) || (cp >= 0x2028 && cp <= 0x202E) ||
         (cp >= 0x2060 && cp <= 0x206F) || cp == 0xFEFF || (cp >= 0xFFF9 && cp <= 0xFFFB) ||
         (cp >= 0xE0000 && cp <= 0xE007F);
}

bool qvi_utf8_valid(const uint8_t *s, int64_t n) {
  int64_t i = 0;
  while (i < n) {
    /* ASCII fast path: 32 bytes per step */
    while (i + 32 <= n) {
      uint64_t w = qvi_ld_u64(s + i) | qvi_ld_u64(s + i + 8) | qvi_ld_u64(s + i + 16) |
                   qvi_ld_u64(s + i + 24);
      if (w & 0x8080808080808080ull) break;
      i += 32;
    }
    int64_t stop = i + 32 < n ? i + 32 : n;
    while (i < stop) {
      if (s[i] < 0x80) {
        i++;
        continue;
      }
      uint32_t cp;
      size_t len = qvi_utf8_decode(s + i, (size_t)(n - i), &cp);
      if (len == 0) return false;
      i += (int64_t)len;
    }
  }
  return true;
}
