/* FlightData <-> IPC messages (flight_data.h). */
#include "flight/flight_data.h"

#include <stdlib.h>
#include <string.h>

#include "flight/flight_internal.h"
#include "flight/flight_pb.h"
#include "util/cpu.h"
#include "util/load.h"
#include "util/options.h"

/* ---- decoding */

QvStatus qvi_flight_data_decode(const uint8_t *p, size_t n, QviFlightData *out, QvError *error) {
  memset(out, 0, sizeof *out);
  QviPbReader r;
  QvStatus st = qvi_pb_reader_init(&r, p, n, 0, error);
  QviPbField f;
  while (!st && (st = qvi_pb_next(&r, &f, error)) == QV_OK) {
    const char *what = NULL;
    switch (f.number) {
      case QVI_FD_DESCRIPTOR: what = "FlightData.flight_descriptor"; break;
      case QVI_FD_HEADER: what = "FlightData.data_header"; break;
      case QVI_FD_APP_METADATA: what = "FlightData.app_metadata"; break;
      case QVI_FD_BODY: what = "FlightData.data_body"; break;
      default: continue;
    }
    if ((st = qvi_pb_expect(&f, QVI_PB_LEN, what, error))) break;
    switch (f.number) {
      case QVI_FD_DESCRIPTOR:
        out->has_descriptor = true;
        out->descriptor = f.data;
        out->descriptor_size = f.size;
        break;
      case QVI_FD_HEADER:
        out->header = f.data;
        out->header_size = f.size;
        break;
      case QVI_FD_APP_METADATA:
        out->app_metadata = f.data;
        out->app_metadata_size = f.size;
        break;
      default:
        out->body = f.data;
        out->body_size = f.size;
        break;
    }
  }
  if (st == QV_EOS) return QV_OK;
  memset(out, 0, sizeof *out);
  return qv_error_prefix(error, "FlightData");
}

size_t qvi_flight_data_placement(void *ctx, const uint8_t *head, size_t n, size_t total) {
  (void)ctx;
  (void)total;
  size_t at = 0;
  while (at < n) {
    uint64_t key, len;
    size_t k = qvi_pb_varint_decode(head + at, n - at, &key);
    if (k == 0 || (key & 7) != QVI_PB_LEN) return 0; /* FlightData's fields are all LEN */
    size_t l = qvi_pb_varint_decode(head + at + k, n - at - k, &len);
    if (l == 0) return 0;
    size_t start = at + k + l;
    if ((key >> 3) == QVI_FD_BODY) return (64 - start % 64) % 64;
    if (len > n - start) return 0; /* the body starts past what we see */
    at = start + (size_t)len;
  }
  return 0;
}

QvStatus qvi_flight_data_to_ipc(const QviFlightData *fd, QvOwner *owner, int64_t index,
                                const QvIpcReaderOptions *limits, QvIpcMessage *out,
                                QvError *error) {
  memset(out, 0, sizeof *out);
  int64_t max_meta = limits && limits->max_metadata_size > 0 ? limits->max_metadata_size
                                                             : QV_IPC_DEFAULT_MAX_METADATA_SIZE;
  int64_t max_body = limits && limits->max_body_size > 0 ? limits->max_body_size
                                                         : QV_IPC_DEFAULT_MAX_BODY_SIZE;
  if (fd->header_size == 0)
    return qv_error_set(error, QV_EINVAL, "FlightData %lld has no data_header", (long long)index);
  if ((int64_t)fd->header_size > max_meta || fd->header_size > INT32_MAX)
    return qv_error_set(error, QV_ELIMIT,
                        "FlightData %lld: data_header of %zu bytes exceeds the limit of %lld",
                        (long long)index, fd->header_size, (long long)max_meta);
  QvDecodeOptions dec = {.struct_size = sizeof dec};
  if (limits) {
    dec.max_depth = limits->max_depth;
    dec.max_tables = limits->max_tables;
  }
  QvStatus st = qv_message_decode(fd->header, fd->header_size, &dec, &out->message, error);
  if (st) return qv_error_prefix(error, "FlightData %lld: data_header", (long long)index);
  int64_t body_length = out->message.body_length;
  if (body_length < 0 || body_length > max_body) {
    st = qv_error_set(error, QV_ELIMIT,
                      "FlightData %lld: bodyLength %lld is outside 0..%lld (the limit)",
                      (long long)index, (long long)body_length, (long long)max_body);
  } else if ((uint64_t)body_length > fd->body_size) {
    st = qv_error_set(error, QV_ETRUNCATED,
                      "FlightData %lld: the Message's bodyLength is %lld bytes but data_body "
                      "holds %zu",
                      (long long)index, (long long)body_length, fd->body_size);
  }
  if (st) {
    qv_message_reset(&out->message);
    return st;
  }
  out->offset = index;
  out->metadata_length = (int32_t)fd->header_size;
  out->metadata = fd->header;
  out->body_offset = index;
  /* an empty body still gets a valid pointer */
  static const uint8_t none[8];
  out->body = body_length > 0 ? fd->body : none;
  if (body_length > 0 && ((uintptr_t)fd->body & 63) == 0) qvi_path_hit(QV_PATH_FLIGHT_BODY_PLACED);
  out->body_length = body_length;
  qv_owner_retain(owner);
  out->owner = owner;
  return QV_OK;
}

/* ---- the stream reader */

typedef struct FlightIn {
  QviFlightReadHooks hooks;
  QvIpcReaderOptions limits;
  int64_t index; /* FlightData received so far */
} FlightIn;

static QvStatus flight_next_message(void *ctx, QvIpcMessage *out, QvError *error) {
  FlightIn *in = ctx;
  for (;;) {
    const uint8_t *data = NULL;
    size_t size = 0;
    QvOwner *owner = NULL;
    QvStatus st = in->hooks.recv(in->hooks.ctx, &data, &size, &owner, error);
    if (st) return st;
    int64_t index = in->index++;
    QviFlightData fd;
    st = qvi_flight_data_decode(data, size, &fd, error);
    if (st) {
      qv_owner_free(owner);
      return qv_error_prefix(error, "FlightData %lld", (long long)index);
    }
    if (in->hooks.on_data) in->hooks.on_data(in->hooks.ctx, &fd);
    if (fd.header_size == 0) {
      /* metadata only */
      qv_owner_free(owner);
      continue;
    }
    st = qvi_flight_data_to_ipc(&fd, owner, index, &in->limits, out, error);
    qv_owner_free(owner);
    return st;
  }
}

static void flight_in_release(void *ctx) {
  FlightIn *in = ctx;
  if (in->hooks.release) in->hooks.release(in->hooks.ctx);
  free(in);
}

QvStatus qvi_flight_stream_reader_new(struct ArrowArrayStream *out, const QviFlightReadHooks *hooks,
                                      const QvRbReadOptions *options, QvError *error) {
  memset(out, 0, sizeof *out);
  FlightIn *in = calloc(1, sizeof *in);
  if (in == NULL) {
    if (hooks->release) hooks->release(hooks->ctx);
    return qv_error_set(error, QV_ENOMEM, "out of memory");
  }
  in->hooks = *hooks;
  QvRbReadOptions o;
  QvStatus st = QV_OPTIONS_LOAD(&o, options, QvRbReadOptions, error);
  if (!st && o.ipc) st = QV_OPTIONS_LOAD(&in->limits, o.ipc, QvIpcReaderOptions, error);
  if (st) {
    flight_in_release(in);
    return st;
  }
  return qv_rb_stream_reader_from_messages(out, flight_next_message, in, flight_in_release,
                                            options, error);
}

/* ---- writing */

typedef enum { W_PREFIX, W_META, W_BODY, W_ENDED } WState;

struct QviFlightWriter {
  QviFlightEmit emit;
  QviPbWriter descriptor; /* encoded, for the first FlightData */
  bool has_descriptor;
  uint8_t *app_metadata;
  size_t app_metadata_size;
  WState state;
  uint8_t prefix[8];
  size_t prefix_n;
  uint8_t *meta;
  size_t meta_cap, meta_n, meta_len;
  uint64_t body_left;
  int64_t count;
  QviPbWriter head;
  QvError error; /* the first failure, kept */
};

static QvStatus writer_fail(QviFlightWriter *w, QvStatus st, QvError *error) {
  if (!w->error.code) {
    if (error) w->error = *error;
    w->error.code = st;
  }
  return st;
}

/* Builds and begins the FlightData of the message whose metadata is
 * complete. */
static QvStatus begin_message(QviFlightWriter *w, QvError *error) {
  QvMessage msg;
  QvStatus st = qv_message_decode(w->meta, w->meta_len, NULL, &msg, error);
  if (st) return qv_error_prefix(error, "Flight writer: IPC message %lld", (long long)w->count);
  int64_t body = msg.body_length;
  qv_message_reset(&msg);
  if (body < 0)
    return qv_error_set(error, QV_EINVAL, "Flight writer: negative body length");
  /* a writer's padding after the FlatBuffer stays in data_header (readers
   * take FlatBuffers with trailing bytes) */
  QviPbWriter *h = &w->head;
  h->size = 0;
  if (w->count == 0 && w->has_descriptor) qvi_pb_put_message(h, QVI_FD_DESCRIPTOR, &w->descriptor);
  qvi_pb_put_bytes(h, QVI_FD_HEADER, w->meta, w->meta_len);
  if (w->app_metadata_size)
    qvi_pb_put_bytes(h, QVI_FD_APP_METADATA, w->app_metadata, w->app_metadata_size);
  if (body > 0) qvi_pb_put_len_prefix(h, QVI_FD_BODY, (size_t)body);
  if ((st = qvi_pb_writer_status(h, error))) return st;
  free(w->app_metadata);
  w->app_metadata = NULL;
  w->app_metadata_size = 0;
  w->count++;
  w->body_left = (uint64_t)body;
  return w->emit.begin(w->emit.ctx, h->size + (size_t)body, h->data, h->size, error);
}

static QvStatus writer_write(void *ctx, const void *data, size_t size, QvError *error) {
  QviFlightWriter *w = ctx;
  if (w->error.code) {
    if (error) *error = w->error;
    return w->error.code;
  }
  const uint8_t *p = data;
  QvStatus st = QV_OK;
  while (size > 0 && !st) {
    switch (w->state) {
      case W_PREFIX: {
        size_t take = 8 - w->prefix_n;
        if (take > size) take = size;
        memcpy(w->prefix + w->prefix_n, p, take);
        w->prefix_n += take;
        p += take;
        size -= take;
        if (w->prefix_n < 8) break;
        w->prefix_n = 0;
        if (qvi_le_u32(w->prefix) != QV_IPC_CONTINUATION) {
          st = qv_error_set(error, QV_EINVAL, "Flight writer: IPC message without continuation");
          break;
        }
        uint32_t len = qvi_le_u32(w->prefix + 4);
        if (len == 0) {
          w->state = W_ENDED;
          break;
        }
        if (len > (uint32_t)INT32_MAX) {
          st = qv_error_set(error, QV_EINVAL, "Flight writer: bad metadata length");
          break;
        }
        if (len > w->meta_cap) {
          uint8_t *m = realloc(w->meta, len);
          if (m == NULL) {
            st = qv_error_set(error, QV_ENOMEM, "out of memory");
            break;
          }
          w->meta = m;
          w->meta_cap = len;
        }
        w->meta_len = len;
        w->meta_n = 0;
        w->state = W_META;
        break;
      }
      case W_META: {
        size_t take = w->meta_len - w->meta_n;
        if (take > size) take = size;
        memcpy(w->meta + w->meta_n, p, take);
        w->meta_n += take;
        p += take;
        size -= take;
        if (w->meta_n < w->meta_len) break;
        st = begin_message(w, error);
        w->state = w->body_left ? W_BODY : W_PREFIX;
        break;
      }
      case W_BODY: {
        size_t take = w->body_left < size ? (size_t)w->body_left : size;
        st = w->emit.more(w->emit.ctx, p, take, error);
        w->body_left -= take;
        p += take;
        size -= take;
        if (w->body_left == 0) w->state = W_PREFIX;
        break;
      }
      case W_ENDED:
        st = qv_error_set(error, QV_EINVAL, "Flight writer: bytes after the end-of-stream marker");
        break;
    }
  }
  return st ? writer_fail(w, st, error) : QV_OK;
}

QvStatus qvi_flight_writer_new(QviFlightWriter **out, QvSink **sink, const QviFlightEmit *emit,
                               const QvFlightDescriptor *descriptor, QvError *error) {
  *out = NULL;
  *sink = NULL;
  QviFlightWriter *w = calloc(1, sizeof *w);
  if (w == NULL) return qv_error_set(error, QV_ENOMEM, "out of memory");
  w->emit = *emit;
  qvi_pb_writer_init(&w->descriptor);
  qvi_pb_writer_init(&w->head);
  QvStatus st = QV_OK;
  if (descriptor) {
    w->has_descriptor = true;
    qvi_flight_put_descriptor(&w->descriptor, descriptor);
    st = qvi_pb_writer_status(&w->descriptor, error);
  }
  if (!st) st = qv_sink_new_callback(sink, writer_write, w, error);
  if (st) {
    qvi_flight_writer_free(w);
    return st;
  }
  *out = w;
  return QV_OK;
}

QvStatus qvi_flight_writer_set_app_metadata(QviFlightWriter *w, const void *data, size_t size,
                                            QvError *error) {
  free(w->app_metadata);
  w->app_metadata = NULL;
  w->app_metadata_size = 0;
  if (size == 0) return QV_OK;
  w->app_metadata = malloc(size);
  if (w->app_metadata == NULL) return qv_error_set(error, QV_ENOMEM, "out of memory");
  memcpy(w->app_metadata, data, size);
  w->app_metadata_size = size;
  return QV_OK;
}

QvStatus qvi_flight_writer_metadata_only(QviFlightWriter *w, const void *data, size_t size,
                                         QvError *error) {
  if (w->state != W_PREFIX || w->prefix_n != 0)
    return qv_error_set(error, QV_EARG, "Flight writer: inside a message");
  QviPbWriter *h = &w->head;
  h->size = 0;
  if (w->count == 0 && w->has_descriptor) qvi_pb_put_message(h, QVI_FD_DESCRIPTOR, &w->descriptor);
  qvi_pb_put_bytes(h, QVI_FD_APP_METADATA, data, size);
  QvStatus st = qvi_pb_writer_status(h, error);
  if (st) return st;
  w->count++;
  return w->emit.begin(w->emit.ctx, h->size, h->data, h->size, error);
}

QvStatus qvi_flight_writer_check_end(const QviFlightWriter *w, QvError *error) {
  if (w->error.code) {
    if (error) *error = w->error;
    return w->error.code;
  }
  if ((w->state == W_PREFIX && w->prefix_n == 0) || w->state == W_ENDED) return QV_OK;
  return qv_error_set(error, QV_ETRUNCATED, "Flight writer: the IPC stream ended inside a message");
}

int64_t qvi_flight_writer_count(const QviFlightWriter *w) { return w->count; }

void qvi_flight_writer_free(QviFlightWriter *w) {
  if (w == NULL) return;
  qvi_pb_writer_reset(&w->descriptor);
  qvi_pb_writer_reset(&w->head);
  free(w->app_metadata);
  free(w->meta);
  free(w);
}

QvStatus qvi_flight_write_stream(struct ArrowArrayStream *stream, const QviFlightEmit *emit,
                                 const QvFlightDescriptor *descriptor, QvError *error) {
  QviFlightWriter *w;
  QvSink *sink;
  QvStatus st = qvi_flight_writer_new(&w, &sink, emit, descriptor, error);
  if (st) return st;
  st = qv_rb_write_all(stream, sink, NULL, error);
  if (!st) st = qvi_flight_writer_check_end(w, error);
  qv_sink_free(sink);
  qvi_flight_writer_free(w);
  return st;
}

QvStatus qvi_flight_schema_encode(const struct ArrowSchema *schema, uint8_t **out, size_t *size,
                                  QvError *error) {
  *out = NULL;
  *size = 0;
  QvSink *sink;
  QvStatus st = qv_sink_new_memory(&sink, error);
  if (st) return st;
  QvRbWriter *w;
  st = qv_rb_writer_new(&w, schema, sink, NULL, error);
  if (!st) {
    qv_rb_writer_free(w);
    st = qv_sink_memory_take(sink, out, size, error);
  }
  qv_sink_free(sink);
  return st;
}
