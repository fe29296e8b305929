#include "util/options.h"

#include <string.h>

QvStatus qvi_options_load(void *dst, size_t dst_size, size_t first_size, const void *src,
                          const char *what, QvError *error) {
  memset(dst, 0, dst_size);
  if (src == NULL) return QV_OK;
  size_t n;
  memcpy(&n, src, sizeof n);
  if (n == 0) n = first_size;
  if (n < first_size)
    return qv_error_set(error, QV_EARG,
                        "%s: struct_size %zu is smaller than the struct ever was (%zu)", what, n,
                        first_size);
  if (n > dst_size) {
    const unsigned char *extra = (const unsigned char *)src + dst_size;
    for (size_t i = 0; i < n - dst_size; i++)
      if (extra[i] != 0)
        return qv_error_set(error, QV_ENOTSUP,
                            "%s: the option at byte %zu is newer than this library knows", what,
                            dst_size + i);
    n = dst_size;
  }
  /* an older caller's struct ends early: the fields after it keep their
   * zero, the default */
  memcpy(dst, src, n);
  memcpy(dst, &dst_size, sizeof dst_size);
  return QV_OK;
}
