#include "test_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

uint8_t *qv_test_read_file(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  if (f == NULL) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  uint8_t *buf = malloc(n > 0 ? (size_t)n : 1);
  if (buf && n > 0 && fread(buf, 1, (size_t)n, f) != (size_t)n) {
    free(buf);
    buf = NULL;
  }
  fclose(f);
  *size = n > 0 ? (size_t)n : 0;
  return buf;
}

int qv_test_have_shared(void) {
  struct stat st;
  return stat(QV_SHARED_DIR "/testdata/arrow-cpp", &st) == 0 && S_ISDIR(st.st_mode);
}

const char *qv_test_shared_path(const char *name) {
  static char path[4096];
  snprintf(path, sizeof path, "%s/testdata/arrow-cpp/%s", QV_SHARED_DIR, name);
  return path;
}
