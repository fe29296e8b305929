/* libFuzzer target: raw Message (and Footer) FlatBuffer bytes.
 *
 * Whatever the decoder accepts must survive encode -> decode unchanged and
 * encode deterministically; whatever it rejects must leave the output empty
 * with an error set. Any violation traps. Seeds: fuzz/corpus/fuzz_message/
 * (metadata of the shared Arrow C++ files, quiver's round-trip tests and
 * flatc-built goldens). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "quiver/format.h"

static int all_zero(const void *p, size_t n) {
  const uint8_t *c = p;
  for (size_t i = 0; i < n; i++)
    if (c[i]) return 0;
  return 1;
}

/* Describes every type reachable from a field, exercising the names code on
 * decoded values. */
static void describe_fields(int64_t n, const QvField *fields, int depth) {
  char buf[96];
  for (int64_t i = 0; i < n && depth < 100; i++) {
    qv_type_describe(&fields[i].type, buf, sizeof buf);
    if (buf[0] == '?') __builtin_trap(); /* decoded types are all known */
    describe_fields(fields[i].n_children, fields[i].children, depth + 1);
  }
}

static void check_message(const uint8_t *data, size_t size) {
  QvMessage m;
  QvError e;
  QvStatus st = qv_message_decode(data, size, NULL, &m, &e);
  if (st != QV_OK) {
    if (e.code != st || e.message[0] == '\0' || !all_zero(&m, sizeof m)) __builtin_trap();
    qv_message_reset(&m);
    return;
  }
  if (qv_header_type_name(m.header_type)[0] == '?' ||
      qv_metadata_version_name(m.version)[0] == '?')
    __builtin_trap();
  char buf[96];
  if (m.header_type == QV_HEADER_SCHEMA)
    describe_fields(m.header.schema.n_fields, m.header.schema.fields, 0);
  if (m.header_type == QV_HEADER_TENSOR) qv_type_describe(&m.header.tensor.type, buf, sizeof buf);
  if (m.header_type == QV_HEADER_SPARSE_TENSOR)
    qv_type_describe(&m.header.sparse_tensor.type, buf, sizeof buf);

  uint8_t *b1 = NULL, *b2 = NULL;
  size_t n1 = 0, n2 = 0;
  if (qv_message_encode(&m, &b1, &n1, &e) != QV_OK) __builtin_trap();
  QvMessage again;
  if (qv_message_decode(b1, n1, NULL, &again, &e) != QV_OK) __builtin_trap();
  if (!qv_message_equal(&m, &again, NULL, 0)) __builtin_trap();
  if (qv_message_encode(&again, &b2, &n2, &e) != QV_OK) __builtin_trap();
  if (n1 != n2 || memcmp(b1, b2, n1) != 0) __builtin_trap();
  qv_message_reset(&again);
  qv_message_reset(&m);
  free(b1);
  free(b2);
}

static void check_footer(const uint8_t *data, size_t size) {
  QvFooter f;
  QvError e;
  QvStatus st = qv_footer_decode(data, size, NULL, &f, &e);
  if (st != QV_OK) {
    if (e.code != st || e.message[0] == '\0' || !all_zero(&f, sizeof f)) __builtin_trap();
    qv_footer_reset(&f);
    return;
  }
  if (f.has_schema) describe_fields(f.schema.n_fields, f.schema.fields, 0);
  uint8_t *b1 = NULL, *b2 = NULL;
  size_t n1 = 0, n2 = 0;
  if (qv_footer_encode(&f, &b1, &n1, &e) != QV_OK) __builtin_trap();
  QvFooter again;
  if (qv_footer_decode(b1, n1, NULL, &again, &e) != QV_OK) __builtin_trap();
  if (!qv_footer_equal(&f, &again, NULL, 0)) __builtin_trap();
  if (qv_footer_encode(&again, &b2, &n2, &e) != QV_OK) __builtin_trap();
  if (n1 != n2 || memcmp(b1, b2, n1) != 0) __builtin_trap();
  qv_footer_reset(&again);
  qv_footer_reset(&f);
  free(b1);
  free(b2);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  check_message(data, size);
  check_footer(data, size);
  return 0;
}
