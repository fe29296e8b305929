/* libFuzzer target for the generic FlatBuffers layer, on the test schema
 * tests/data/flatbuf/quiver_test.fbs (seeds: flatc's binaries of the JSON
 * files there). Checks that
 *  - the accessors stay inside any input, verified or not (ASan),
 *  - the verifier returns QV_OK, QV_EINVAL or QV_ELIMIT with a message,
 *  - whatever it accepts reads back completely (nothing present reads as
 *    absent), with default and with tight limits. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../tests/data/flatbuf/qvtest_schema.h"

static void check(const uint8_t *data, size_t size, const QvFbVerifyOptions *opt, uint64_t *d) {
  QvError err;
  qv_error_clear(&err);
  QvStatus st = qvi_fb_verify(data, size, &qvt_root_desc, opt, &err);
  if (st == QV_OK) {
    if (qvt_walk(data, size, true, d) != NULL) abort(); /* verified but unreadable */
  } else if ((st != QV_EINVAL && st != QV_ELIMIT) || err.code != st || err.message[0] == '\0' ||
             strncmp(err.message, "Root", 4) != 0) {
    abort();
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  uint64_t d = 0;
  /* unverified input first: every accessor, schema-driven and blind */
  (void)qvt_walk(data, size, false, &d);
  qvt_probe(data, size, &d);

  check(data, size, NULL, &d);
  QvFbVerifyOptions tight = {3, 20};
  check(data, size, &tight, &d);

  /* keep the digest observable so no read is optimised away */
  volatile uint64_t sink = d;
  (void)sink;
  return 0;
}
