/* The protobuf wire codec (pb.h). */
#include "protobuf/pb.h"
#include "util/grow.h"

#include <stdlib.h>
#include <string.h>

QvStatus qvi_pb_reader_init(QviPbReader *r, const void *data, size_t size, size_t max_size,
                            QvError *error) {
  /* an empty message may come as NULL: point at a static byte instead */
  static const uint8_t none;
  if (data == NULL && size > 0) return qv_error_set(error, QV_EARG, "protobuf: no data");
  r->start = r->p = data ? data : &none;
  r->end = r->p + size;
  if (max_size > 0 && size > max_size)
    return qv_error_set(error, QV_ELIMIT, "protobuf: message of %zu bytes exceeds the limit of %zu",
                        size, max_size);
  return QV_OK;
}

void qvi_pb_reader_sub(QviPbReader *sub, const QviPbReader *parent, const QviPbField *f) {
  sub->start = parent->start;
  sub->p = f->data;
  sub->end = f->data + f->size;
}

size_t qvi_pb_varint_decode(const uint8_t *p, size_t avail, uint64_t *value) {
  uint64_t v = 0;
  for (size_t i = 0; i < 10; i++) {
    if (i == avail) return 0;
    uint8_t b = p[i];
    /* the tenth byte holds bit 63 alone */
    if (i == 9 && b > 1) return 0;
    v |= (uint64_t)(b & 0x7F) << (7 * i);
    if ((b & 0x80) == 0) {
      *value = v;
      return i + 1;
    }
  }
  return 0;
}

QvStatus qvi_pb_next(QviPbReader *r, QviPbField *f, QvError *error) {
  if (r->p == r->end) return QV_EOS;
  size_t avail = (size_t)(r->end - r->p);
  size_t off = (size_t)(r->p - r->start);
  uint64_t key;
  size_t n = qvi_pb_varint_decode(r->p, avail, &key);
  if (n == 0)
    return qv_error_set(error, avail < 10 ? QV_ETRUNCATED : QV_EINVAL,
                        "protobuf: bad field tag at offset %zu", off);
  uint64_t number = key >> 3;
  int wire = (int)(key & 7);
  if (number == 0 || number > QVI_PB_MAX_FIELD)
    return qv_error_set(error, QV_EINVAL, "protobuf: field number %llu at offset %zu is invalid",
                        (unsigned long long)number, off);
  const uint8_t *p = r->p + n;
  avail -= n;
  memset(f, 0, sizeof *f);
  f->number = (uint32_t)number;
  f->wire = wire;
  f->offset = off;
  switch (wire) {
    case QVI_PB_VARINT:
      n = qvi_pb_varint_decode(p, avail, &f->value);
      if (n == 0)
        return qv_error_set(error, avail < 10 ? QV_ETRUNCATED : QV_EINVAL,
                            "protobuf: field %u at offset %zu: bad varint", f->number, off);
      p += n;
      break;
    case QVI_PB_FIXED64:
    case QVI_PB_FIXED32: {
      size_t w = wire == QVI_PB_FIXED64 ? 8 : 4;
      if (avail < w)
        return qv_error_set(error, QV_ETRUNCATED,
                            "protobuf: field %u at offset %zu: %zu-byte value truncated",
                            f->number, off, w);
      uint64_t v = 0;
      for (size_t i = 0; i < w; i++) v |= (uint64_t)p[i] << (8 * i);
      f->value = v;
      p += w;
      break;
    }
    case QVI_PB_LEN: {
      uint64_t len;
      n = qvi_pb_varint_decode(p, avail, &len);
      if (n == 0)
        return qv_error_set(error, avail < 10 ? QV_ETRUNCATED : QV_EINVAL,
                            "protobuf: field %u at offset %zu: bad length", f->number, off);
      p += n;
      avail -= n;
      if (len > avail)
        return qv_error_set(error, QV_ETRUNCATED,
                            "protobuf: field %u at offset %zu: length %llu runs past the end "
                            "of its message (%zu bytes left)",
                            f->number, off, (unsigned long long)len, avail);
      f->data = p;
      f->size = (size_t)len;
      p += len;
      break;
    }
    default:
      return qv_error_set(error, QV_EINVAL,
                          "protobuf: field %u at offset %zu: wire type %d is not supported",
                          f->number, off, wire);
  }
  r->p = p;
  return QV_OK;
}

static const char *wire_name(int w) {
  switch (w) {
    case QVI_PB_VARINT: return "varint";
    case QVI_PB_FIXED64: return "fixed64";
    case QVI_PB_LEN: return "length-delimited";
    case QVI_PB_FIXED32: return "fixed32";
    default: return "unknown";
  }
}

QvStatus qvi_pb_expect(const QviPbField *f, int want, const char *what, QvError *error) {
  if (f->wire == want) return QV_OK;
  return qv_error_set(error, QV_EINVAL, "protobuf: %s (field %u at offset %zu) is %s, not %s",
                      what, f->number, f->offset, wire_name(f->wire), wire_name(want));
}

QvStatus qvi_pb_int32(const QviPbField *f, int32_t *out, const char *what, QvError *error) {
  int64_t v = (int64_t)f->value;
  if (v < INT32_MIN || v > INT32_MAX)
    return qv_error_set(error, QV_EINVAL, "protobuf: %s (field %u) = %lld does not fit 32 bits",
                        what, f->number, (long long)v);
  *out = (int32_t)v;
  return QV_OK;
}

double qvi_pb_double(const QviPbField *f) {
  double d;
  uint64_t v = f->value;
  memcpy(&d, &v, sizeof d);
  return d;
}

/* ---- writing */

size_t qvi_pb_varint_size(uint64_t v) {
  size_t n = 1;
  while (v >= 0x80) {
    v >>= 7;
    n++;
  }
  return n;
}

size_t qvi_pb_varint_put(uint8_t *p, uint64_t v) {
  size_t n = 0;
  while (v >= 0x80) {
    p[n++] = (uint8_t)(v | 0x80);
    v >>= 7;
  }
  p[n++] = (uint8_t)v;
  return n;
}

size_t qvi_pb_len_prefix_size(uint32_t number, size_t size) {
  return qvi_pb_varint_size((uint64_t)number << 3) + qvi_pb_varint_size(size);
}

void qvi_pb_writer_init(QviPbWriter *w) { memset(w, 0, sizeof *w); }

void qvi_pb_writer_reset(QviPbWriter *w) {
  free(w->data);
  memset(w, 0, sizeof *w);
}

static bool reserve(QviPbWriter *w, size_t extra) {
  if (w->failed) return false;
  if (extra <= w->capacity - w->size) return true;
  size_t want = w->size + extra;
  if (want < w->size) {
    w->failed = true;
    return false;
  }
  uint8_t *p = qvi_grow_array(w->data, &w->capacity, want, 64, 1);
  if (p == NULL) {
    w->failed = true;
    return false;
  }
  w->data = p;
  return true;
}

void qvi_pb_put_raw(QviPbWriter *w, const void *data, size_t size) {
  if (size == 0 || !reserve(w, size)) return;
  memcpy(w->data + w->size, data, size);
  w->size += size;
}

void qvi_pb_put_varint(QviPbWriter *w, uint64_t v) {
  if (!reserve(w, 10)) return;
  w->size += qvi_pb_varint_put(w->data + w->size, v);
}

void qvi_pb_put_tag(QviPbWriter *w, uint32_t number, int wire) {
  qvi_pb_put_varint(w, ((uint64_t)number << 3) | (uint64_t)wire);
}

void qvi_pb_put_uint(QviPbWriter *w, uint32_t number, uint64_t v) {
  qvi_pb_put_tag(w, number, QVI_PB_VARINT);
  qvi_pb_put_varint(w, v);
}

void qvi_pb_put_double(QviPbWriter *w, uint32_t number, double v) {
  uint64_t bits;
  memcpy(&bits, &v, sizeof bits);
  uint8_t b[8];
  for (int i = 0; i < 8; i++) b[i] = (uint8_t)(bits >> (8 * i));
  qvi_pb_put_tag(w, number, QVI_PB_FIXED64);
  qvi_pb_put_raw(w, b, 8);
}

void qvi_pb_put_len_prefix(QviPbWriter *w, uint32_t number, size_t size) {
  qvi_pb_put_tag(w, number, QVI_PB_LEN);
  qvi_pb_put_varint(w, size);
}

void qvi_pb_put_bytes(QviPbWriter *w, uint32_t number, const void *data, size_t size) {
  qvi_pb_put_len_prefix(w, number, size);
  qvi_pb_put_raw(w, data, size);
}

void qvi_pb_put_message(QviPbWriter *w, uint32_t number, const QviPbWriter *sub) {
  if (sub->failed) w->failed = true;
  qvi_pb_put_bytes(w, number, sub->data, sub->size);
}

QvStatus qvi_pb_writer_status(const QviPbWriter *w, QvError *error) {
  return w->failed ? qv_error_set(error, QV_ENOMEM, "protobuf: out of memory") : QV_OK;
}
