/* Helpers shared by the cmocka tests. */
#ifndef QV_TEST_UTIL_H
#define QV_TEST_UTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

/* Reads a whole file; NULL if it cannot be read. free() the result. */
uint8_t *qv_test_read_file(const char *path, size_t *size);
/* 1 when the shared Arrow C++ test data directory exists. */
int qv_test_have_shared(void);
/* Path inside the shared test data (static buffer). */
const char *qv_test_shared_path(const char *name);

#endif
