/* libFuzzer target: the generic protobuf wire codec (src/protobuf/pb.h).
 *
 * Every length-delimited field is also tried as a nested message (to a
 * bounded depth). Whatever the reader accepts is written again field by
 * field and must read back as the same fields; a refused input must leave
 * the reader where it was. Any violation traps. Seeds: fuzz/corpus/
 * fuzz_protobuf/ (Flight messages as protoc encodes them). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "protobuf/pb.h"

#define MAX_FIELDS 4096

static void walk(const QviPbReader *parent, int depth) {
  QviPbReader r = *parent;
  QviPbField f;
  QviPbWriter w;
  qvi_pb_writer_init(&w);
  size_t n = 0;
  QvStatus st;
  while ((st = qvi_pb_next(&r, &f, NULL)) == QV_OK && n < MAX_FIELDS) {
    n++;
    if (f.data && (f.data < parent->p || f.data + f.size > parent->end)) __builtin_trap();
    switch (f.wire) {
      case QVI_PB_VARINT: qvi_pb_put_uint(&w, f.number, f.value); break;
      case QVI_PB_LEN:
        qvi_pb_put_bytes(&w, f.number, f.data, f.size);
        if (depth < 8) {
          QviPbReader sub;
          qvi_pb_reader_sub(&sub, &r, &f);
          walk(&sub, depth + 1);
        }
        break;
      case QVI_PB_FIXED64: {
        uint8_t b[8];
        for (int i = 0; i < 8; i++) b[i] = (uint8_t)(f.value >> (8 * i));
        qvi_pb_put_tag(&w, f.number, QVI_PB_FIXED64);
        qvi_pb_put_raw(&w, b, 8);
        break;
      }
      case QVI_PB_FIXED32: {
        uint8_t b[4];
        for (int i = 0; i < 4; i++) b[i] = (uint8_t)(f.value >> (8 * i));
        qvi_pb_put_tag(&w, f.number, QVI_PB_FIXED32);
        qvi_pb_put_raw(&w, b, 4);
        break;
      }
      default: __builtin_trap();
    }
  }
  if (st != QV_OK && st != QV_EOS) {
    /* a refusal does not move the reader */
    QviPbReader again = r;
    if (qvi_pb_next(&again, &f, NULL) != st || again.p != r.p) __builtin_trap();
  }
  if (st == QV_EOS && !w.failed) {
    /* the re-encoding reads back as the same fields */
    QviPbReader a = *parent, b;
    if (qvi_pb_reader_init(&b, w.data, w.size, 0, NULL) != QV_OK) __builtin_trap();
    QviPbField fa, fb;
    for (;;) {
      QvStatus sa = qvi_pb_next(&a, &fa, NULL), sb = qvi_pb_next(&b, &fb, NULL);
      if (sa != sb) __builtin_trap();
      if (sa) break;
      if (fa.number != fb.number || fa.wire != fb.wire || fa.value != fb.value ||
          fa.size != fb.size || (fa.size && memcmp(fa.data, fb.data, fa.size) != 0))
        __builtin_trap();
    }
  }
  qvi_pb_writer_reset(&w);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  QviPbReader r;
  if (qvi_pb_reader_init(&r, data, size, (size_t)1 << 20, NULL) != QV_OK) return 0;
  walk(&r, 0);
  return 0;
}
