/* Arrow Flight's protobuf messages (flight_pb.h). Field numbers are those
 * of format/Flight.proto; google.protobuf.Timestamp is seconds = 1 (int64),
 * nanos = 2 (int32). */
#include <stdlib.h>
#include <string.h>

#include "flight/flight_pb.h"
#include "util/utf8.h"
#include "quiver/buffer.h"

/* ---- owned copies */

void qv_flight_bytes_reset(QvFlightBytes *b) {
  if (b == NULL) return;
  free(b->data);
  b->data = NULL;
  b->size = 0;
}

static QvStatus copy_bytes(QvFlightBytes *out, const QviPbField *f, QvError *error) {
  uint8_t *d = malloc(f->size + 1);
  if (d == NULL) return qv_error_set(error, QV_ENOMEM, "out of memory");
  if (f->size) memcpy(d, f->data, f->size);
  d[f->size] = 0;
  free(out->data);
  out->data = d;
  out->size = f->size;
  return QV_OK;
}

/* A string field: UTF-8 without NUL bytes (a NUL would cut the C string a
 * caller sees; protobuf strings may hold U+0000 but Flight's never do). */
static QvStatus copy_string(char **out, const QviPbField *f, const char *what, QvError *error) {
  QvStatus st = qvi_pb_expect(f, QVI_PB_LEN, what, error);
  if (st) return st;
  if (!qvi_utf8_valid(f->data, (int64_t)f->size) || memchr(f->data, 0, f->size) != NULL)
    return qv_error_set(error, QV_EINVAL, "protobuf: %s (field %u at offset %zu) is not UTF-8 text",
                        what, f->number, f->offset);
  char *s = malloc(f->size + 1);
  if (s == NULL) return qv_error_set(error, QV_ENOMEM, "out of memory");
  if (f->size) memcpy(s, f->data, f->size);
  s[f->size] = 0;
  free(*out);
  *out = s;
  return QV_OK;
}

static QvStatus bytes_field(QvFlightBytes *out, const QviPbField *f, const char *what,
                            QvError *error) {
  QvStatus st = qvi_pb_expect(f, QVI_PB_LEN, what, error);
  return st ? st : copy_bytes(out, f, error);
}

/* Gives every absent bytes field its empty, NUL-terminated value. */
static QvStatus fill_bytes(QvFlightBytes *b, QvError *error) {
  if (b->data) return QV_OK;
  b->data = calloc(1, 1);
  return b->data ? QV_OK : qv_error_set(error, QV_ENOMEM, "out of memory");
}

static QvStatus fill_string(char **s, QvError *error) {
  if (*s) return QV_OK;
  *s = calloc(1, 1);
  return *s ? QV_OK : qv_error_set(error, QV_ENOMEM, "out of memory");
}

static QvStatus push_string(char ***list, size_t *n, const QviPbField *f, const char *what,
                            QvError *error) {
  char *s = NULL;
  QvStatus st = copy_string(&s, f, what, error);
  if (st) return st;
  char **grown = realloc(*list, (*n + 1) * sizeof *grown);
  if (grown == NULL) {
    free(s);
    return qv_error_set(error, QV_ENOMEM, "out of memory");
  }
  grown[(*n)++] = s;
  *list = grown;
  return QV_OK;
}

static void free_strings(char **list, size_t n) {
  for (size_t i = 0; i < n; i++) free(list[i]);
  free(list);
}

/* ---- encoding helpers: proto3 leaves default values out */

static void put_bytes_opt(QviPbWriter *w, uint32_t number, const void *data, size_t size) {
  if (size) qvi_pb_put_bytes(w, number, data, size);
}

static void put_string_opt(QviPbWriter *w, uint32_t number, const char *s) {
  if (s && *s) qvi_pb_put_bytes(w, number, s, strlen(s));
}

static void put_int_opt(QviPbWriter *w, uint32_t number, int64_t v) {
  if (v) qvi_pb_put_uint(w, number, (uint64_t)v);
}

static void put_nested(QviPbWriter *w, uint32_t number, void (*fn)(QviPbWriter *, const void *),
                       const void *msg) {
  QviPbWriter sub;
  qvi_pb_writer_init(&sub);
  fn(&sub, msg);
  qvi_pb_put_message(w, number, &sub);
  qvi_pb_writer_reset(&sub);
}

static void put_timestamp(QviPbWriter *w, const void *msg) {
  const QvFlightTimestamp *t = msg;
  put_int_opt(w, 1, t->seconds);
  put_int_opt(w, 2, t->nanos);
}

/* ---- decoding helpers */

typedef struct Walk {
  QviPbReader r;
  const char *msg; /* message name, for errors */
} Walk;

static QvStatus walk_init(Walk *k, const uint8_t *p, size_t n, const char *msg, QvError *error) {
  k->msg = msg;
  QvStatus st = qvi_pb_reader_init(&k->r, p, n, 0, error);
  return st ? qv_error_prefix(error, "%s", msg) : QV_OK;
}

/* QV_OK with the next field, QV_EOS at the end, or an error prefixed with
 * the message's name. */
static QvStatus walk_next(Walk *k, QviPbField *f, QvError *error) {
  QvStatus st = qvi_pb_next(&k->r, f, error);
  if (st && st != QV_EOS) qv_error_prefix(error, "%s", k->msg);
  return st;
}

static QvStatus int64_field(const QviPbField *f, int64_t *out, const char *what, QvError *error) {
  QvStatus st = qvi_pb_expect(f, QVI_PB_VARINT, what, error);
  if (!st) *out = qvi_pb_int64(f);
  return st;
}

static QvStatus int32_field(const QviPbField *f, int32_t *out, const char *what, QvError *error) {
  QvStatus st = qvi_pb_expect(f, QVI_PB_VARINT, what, error);
  return st ? st : qvi_pb_int32(f, out, what, error);
}

static QvStatus bool_field(const QviPbField *f, bool *out, const char *what, QvError *error) {
  QvStatus st = qvi_pb_expect(f, QVI_PB_VARINT, what, error);
  if (!st) *out = qvi_pb_bool(f);
  return st;
}

static QvStatus decode_timestamp(const QviPbField *outer, QvFlightTimestamp *out,
                                 const char *what, QvError *error) {
  QvStatus st = qvi_pb_expect(outer, QVI_PB_LEN, what, error);
  if (st) return st;
  Walk k;
  if ((st = walk_init(&k, outer->data, outer->size, "Timestamp", error))) return st;
  QvFlightTimestamp t = {.present = true};
  QviPbField f;
  while ((st = walk_next(&k, &f, error)) == QV_OK) {
    if (f.number == 1) st = int64_field(&f, &t.seconds, "Timestamp.seconds", error);
    else if (f.number == 2) st = int32_field(&f, &t.nanos, "Timestamp.nanos", error);
    if (st) return st;
  }
  if (st != QV_EOS) return st;
  if (t.nanos < 0 || t.nanos > 999999999)
    return qv_error_set(error, QV_EINVAL, "Timestamp: nanos %d is outside 0..999999999", t.nanos);
  *out = t;
  return QV_OK;
}

/* ---- FlightDescriptor */

void qv_flight_descriptor_reset(QvFlightDescriptor *d) {
  if (d == NULL) return;
  qv_flight_bytes_reset(&d->cmd);
  free_strings(d->path, d->n_path);
  memset(d, 0, sizeof *d);
}

char *qv_flight_descriptor_path_string(const QvFlightDescriptor *d) {
  if (d == NULL || d->type != QV_FLIGHT_DESCRIPTOR_PATH) return NULL;
  size_t n = 1;
  for (size_t i = 0; i < d->n_path; i++) n += strlen(d->path[i]) + 1;
  char *s = qv_aligned_alloc(n);
  if (s == NULL) return NULL;
  size_t at = 0;
  for (size_t i = 0; i < d->n_path; i++) {
    if (i) s[at++] = '/';
    size_t l = strlen(d->path[i]);
    memcpy(s + at, d->path[i], l);
    at += l;
  }
  s[at] = 0;
  return s;
}

void qvi_flight_put_descriptor(QviPbWriter *w, const QvFlightDescriptor *d) {
  put_int_opt(w, 1, (int64_t)d->type);
  put_bytes_opt(w, 2, d->cmd.data, d->cmd.size);
  for (size_t i = 0; i < d->n_path; i++) qvi_pb_put_bytes(w, 3, d->path[i], strlen(d->path[i]));
}

static void put_descriptor_v(QviPbWriter *w, const void *d) { qvi_flight_put_descriptor(w, d); }

QvStatus qvi_flight_decode_descriptor(const uint8_t *p, size_t n, QvFlightDescriptor *out,
                                      QvError *error) {
  memset(out, 0, sizeof *out);
  Walk k;
  QvStatus st = walk_init(&k, p, n, "FlightDescriptor", error);
  QviPbField f;
  while (!st && (st = walk_next(&k, &f, error)) == QV_OK) {
    if (f.number == 1) {
      int32_t t;
      if (!(st = int32_field(&f, &t, "FlightDescriptor.type", error))) {
        if (t < 0 || t > 2)
          st = qv_error_set(error, QV_EINVAL, "FlightDescriptor: type %d is not UNKNOWN, PATH or CMD",
                            t);
        else out->type = (QvFlightDescriptorType)t;
      }
    } else if (f.number == 2) {
      st = bytes_field(&out->cmd, &f, "FlightDescriptor.cmd", error);
    } else if (f.number == 3) {
      st = push_string(&out->path, &out->n_path, &f, "FlightDescriptor.path", error);
    }
  }
  if (st == QV_EOS) st = fill_bytes(&out->cmd, error);
  if (st) qv_flight_descriptor_reset(out);
  return st;
}

/* ---- FlightEndpoint */

void qv_flight_endpoint_reset(QvFlightEndpoint *e) {
  if (e == NULL) return;
  qv_flight_bytes_reset(&e->ticket);
  free_strings(e->locations, e->n_locations);
  qv_flight_bytes_reset(&e->app_metadata);
  memset(e, 0, sizeof *e);
}

static void put_ticket_v(QviPbWriter *w, const void *b) {
  const QvFlightBytes *t = b;
  qvi_flight_put_single(w, t->data, t->size);
}

static void put_location_v(QviPbWriter *w, const void *s) {
  qvi_flight_put_single(w, s, strlen(s));
}

void qvi_flight_put_endpoint(QviPbWriter *w, const QvFlightEndpoint *e) {
  put_nested(w, 1, put_ticket_v, &e->ticket);
  for (size_t i = 0; i < e->n_locations; i++) put_nested(w, 2, put_location_v, e->locations[i]);
  if (e->expiration_time.present) put_nested(w, 3, put_timestamp, &e->expiration_time);
  put_bytes_opt(w, 4, e->app_metadata.data, e->app_metadata.size);
}

static void put_endpoint_v(QviPbWriter *w, const void *e) { qvi_flight_put_endpoint(w, e); }

QvStatus qvi_flight_decode_endpoint(const uint8_t *p, size_t n, QvFlightEndpoint *out,
                                    QvError *error) {
  memset(out, 0, sizeof *out);
  Walk k;
  QvStatus st = walk_init(&k, p, n, "FlightEndpoint", error);
  QviPbField f;
  while (!st && (st = walk_next(&k, &f, error)) == QV_OK) {
    if (f.number == 1) {
      if (!(st = qvi_pb_expect(&f, QVI_PB_LEN, "FlightEndpoint.ticket", error))) {
        qv_flight_bytes_reset(&out->ticket);
        st = qvi_flight_decode_single(f.data, f.size, "Ticket", false, &out->ticket, error);
      }
    } else if (f.number == 2) {
      QvFlightBytes uri = {0};
      if (!(st = qvi_pb_expect(&f, QVI_PB_LEN, "FlightEndpoint.location", error)) &&
          !(st = qvi_flight_decode_single(f.data, f.size, "Location", true, &uri, error))) {
        char **grown = realloc(out->locations, (out->n_locations + 1) * sizeof *grown);
        if (grown == NULL) {
          qv_flight_bytes_reset(&uri);
          st = qv_error_set(error, QV_ENOMEM, "out of memory");
        } else {
          grown[out->n_locations++] = (char *)uri.data;
          out->locations = grown;
        }
      }
    } else if (f.number == 3) {
      st = decode_timestamp(&f, &out->expiration_time, "FlightEndpoint.expiration_time", error);
    } else if (f.number == 4) {
      st = bytes_field(&out->app_metadata, &f, "FlightEndpoint.app_metadata", error);
    }
  }
  if (st == QV_EOS && !(st = fill_bytes(&out->ticket, error)))
    st = fill_bytes(&out->app_metadata, error);
  if (st) {
    qv_error_prefix(error, "FlightEndpoint");
    qv_flight_endpoint_reset(out);
  }
  return st;
}

/* ---- FlightInfo */

void qv_flight_info_reset(QvFlightInfo *info) {
  if (info == NULL) return;
  qv_flight_bytes_reset(&info->schema);
  qv_flight_descriptor_reset(&info->descriptor);
  for (size_t i = 0; i < info->n_endpoints; i++) qv_flight_endpoint_reset(&info->endpoints[i]);
  free(info->endpoints);
  qv_flight_bytes_reset(&info->app_metadata);
  memset(info, 0, sizeof *info);
}

void qvi_flight_put_info(QviPbWriter *w, const QvFlightInfo *info) {
  put_bytes_opt(w, 1, info->schema.data, info->schema.size);
  if (info->has_descriptor) put_nested(w, 2, put_descriptor_v, &info->descriptor);
  for (size_t i = 0; i < info->n_endpoints; i++)
    put_nested(w, 3, put_endpoint_v, &info->endpoints[i]);
  put_int_opt(w, 4, info->total_records);
  put_int_opt(w, 5, info->total_bytes);
  if (info->ordered) qvi_pb_put_uint(w, 6, 1);
  put_bytes_opt(w, 7, info->app_metadata.data, info->app_metadata.size);
}

static void put_info_v(QviPbWriter *w, const void *i) { qvi_flight_put_info(w, i); }

QvStatus qvi_flight_decode_info(const uint8_t *p, size_t n, QvFlightInfo *out, QvError *error) {
  memset(out, 0, sizeof *out);
  Walk k;
  QvStatus st = walk_init(&k, p, n, "FlightInfo", error);
  QviPbField f;
  while (!st && (st = walk_next(&k, &f, error)) == QV_OK) {
    switch (f.number) {
      case 1: st = bytes_field(&out->schema, &f, "FlightInfo.schema", error); break;
      case 2:
        if (!(st = qvi_pb_expect(&f, QVI_PB_LEN, "FlightInfo.flight_descriptor", error))) {
          qv_flight_descriptor_reset(&out->descriptor);
          st = qvi_flight_decode_descriptor(f.data, f.size, &out->descriptor, error);
          out->has_descriptor = st == QV_OK;
        }
        break;
      case 3:
        if (!(st = qvi_pb_expect(&f, QVI_PB_LEN, "FlightInfo.endpoint", error))) {
          QvFlightEndpoint *grown = realloc(out->endpoints, (out->n_endpoints + 1) * sizeof *grown);
          if (grown == NULL) {
            st = qv_error_set(error, QV_ENOMEM, "out of memory");
            break;
          }
          out->endpoints = grown;
          st = qvi_flight_decode_endpoint(f.data, f.size, &grown[out->n_endpoints], error);
          if (!st) out->n_endpoints++;
          else qv_error_prefix(error, "endpoint %zu", out->n_endpoints);
        }
        break;
      case 4: st = int64_field(&f, &out->total_records, "FlightInfo.total_records", error); break;
      case 5: st = int64_field(&f, &out->total_bytes, "FlightInfo.total_bytes", error); break;
      case 6: st = bool_field(&f, &out->ordered, "FlightInfo.ordered", error); break;
      case 7: st = bytes_field(&out->app_metadata, &f, "FlightInfo.app_metadata", error); break;
      default: break;
    }
  }
  if (st == QV_EOS && !(st = fill_bytes(&out->schema, error)))
    st = fill_bytes(&out->app_metadata, error);
  if (st) {
    qv_error_prefix(error, "FlightInfo");
    qv_flight_info_reset(out);
  }
  return st;
}

/* ---- PollInfo */

void qv_flight_poll_info_reset(QvFlightPollInfo *p) {
  if (p == NULL) return;
  qv_flight_info_reset(&p->info);
  qv_flight_descriptor_reset(&p->descriptor);
  memset(p, 0, sizeof *p);
}

void qvi_flight_put_poll_info(QviPbWriter *w, const QvFlightPollInfo *p) {
  if (p->has_info) put_nested(w, 1, put_info_v, &p->info);
  if (p->has_descriptor) put_nested(w, 2, put_descriptor_v, &p->descriptor);
  if (p->has_progress) qvi_pb_put_double(w, 3, p->progress);
  if (p->expiration_time.present) put_nested(w, 4, put_timestamp, &p->expiration_time);
}

QvStatus qvi_flight_decode_poll_info(const uint8_t *p, size_t n, QvFlightPollInfo *out,
                                     QvError *error) {
  memset(out, 0, sizeof *out);
  Walk k;
  QvStatus st = walk_init(&k, p, n, "PollInfo", error);
  QviPbField f;
  while (!st && (st = walk_next(&k, &f, error)) == QV_OK) {
    if (f.number == 1) {
      if (!(st = qvi_pb_expect(&f, QVI_PB_LEN, "PollInfo.info", error))) {
        qv_flight_info_reset(&out->info);
        st = qvi_flight_decode_info(f.data, f.size, &out->info, error);
        out->has_info = st == QV_OK;
      }
    } else if (f.number == 2) {
      if (!(st = qvi_pb_expect(&f, QVI_PB_LEN, "PollInfo.flight_descriptor", error))) {
        qv_flight_descriptor_reset(&out->descriptor);
        st = qvi_flight_decode_descriptor(f.data, f.size, &out->descriptor, error);
        out->has_descriptor = st == QV_OK;
      }
    } else if (f.number == 3) {
      if (!(st = qvi_pb_expect(&f, QVI_PB_FIXED64, "PollInfo.progress", error))) {
        out->has_progress = true;
        out->progress = qvi_pb_double(&f);
      }
    } else if (f.number == 4) {
      st = decode_timestamp(&f, &out->expiration_time, "PollInfo.expiration_time", error);
    }
  }
  if (st == QV_EOS) st = QV_OK;
  if (st) {
    qv_error_prefix(error, "PollInfo");
    qv_flight_poll_info_reset(out);
  }
  return st;
}

/* ---- ActionType, Action, Handshake */

void qv_flight_action_type_reset(QvFlightActionType *t) {
  if (t == NULL) return;
  free(t->type);
  free(t->description);
  memset(t, 0, sizeof *t);
}

void qvi_flight_put_action_type(QviPbWriter *w, const QvFlightActionType *t) {
  put_string_opt(w, 1, t->type);
  put_string_opt(w, 2, t->description);
}

QvStatus qvi_flight_decode_action_type(const uint8_t *p, size_t n, QvFlightActionType *out,
                                       QvError *error) {
  memset(out, 0, sizeof *out);
  Walk k;
  QvStatus st = walk_init(&k, p, n, "ActionType", error);
  QviPbField f;
  while (!st && (st = walk_next(&k, &f, error)) == QV_OK) {
    if (f.number == 1) st = copy_string(&out->type, &f, "ActionType.type", error);
    else if (f.number == 2) st = copy_string(&out->description, &f, "ActionType.description", error);
  }
  if (st == QV_EOS && !(st = fill_string(&out->type, error)))
    st = fill_string(&out->description, error);
  if (st) qv_flight_action_type_reset(out);
  return st;
}

void qv_flight_action_reset(QvFlightAction *a) {
  if (a == NULL) return;
  free(a->type);
  qv_flight_bytes_reset(&a->body);
  memset(a, 0, sizeof *a);
}

void qvi_flight_put_action(QviPbWriter *w, const QvFlightAction *a) {
  put_string_opt(w, 1, a->type);
  put_bytes_opt(w, 2, a->body.data, a->body.size);
}

QvStatus qvi_flight_decode_action(const uint8_t *p, size_t n, QvFlightAction *out,
                                  QvError *error) {
  memset(out, 0, sizeof *out);
  Walk k;
  QvStatus st = walk_init(&k, p, n, "Action", error);
  QviPbField f;
  while (!st && (st = walk_next(&k, &f, error)) == QV_OK) {
    if (f.number == 1) st = copy_string(&out->type, &f, "Action.type", error);
    else if (f.number == 2) st = bytes_field(&out->body, &f, "Action.body", error);
  }
  if (st == QV_EOS && !(st = fill_string(&out->type, error))) st = fill_bytes(&out->body, error);
  if (st) qv_flight_action_reset(out);
  return st;
}

void qv_flight_handshake_reset(QvFlightHandshake *h) {
  if (h == NULL) return;
  qv_flight_bytes_reset(&h->payload);
  memset(h, 0, sizeof *h);
}

void qvi_flight_put_handshake(QviPbWriter *w, const QvFlightHandshake *h) {
  if (h->protocol_version) qvi_pb_put_uint(w, 1, h->protocol_version);
  put_bytes_opt(w, 2, h->payload.data, h->payload.size);
}

QvStatus qvi_flight_decode_handshake(const uint8_t *p, size_t n, QvFlightHandshake *out,
                                     QvError *error) {
  memset(out, 0, sizeof *out);
  Walk k;
  QvStatus st = walk_init(&k, p, n, "Handshake", error);
  QviPbField f;
  while (!st && (st = walk_next(&k, &f, error)) == QV_OK) {
    if (f.number == 1) {
      if (!(st = qvi_pb_expect(&f, QVI_PB_VARINT, "Handshake.protocol_version", error)))
        out->protocol_version = f.value;
    } else if (f.number == 2) {
      st = bytes_field(&out->payload, &f, "Handshake.payload", error);
    }
  }
  if (st == QV_EOS) st = fill_bytes(&out->payload, error);
  if (st) qv_flight_handshake_reset(out);
  return st;
}

/* ---- one-field messages, Empty */

void qvi_flight_put_single(QviPbWriter *w, const void *data, size_t size) {
  put_bytes_opt(w, 1, data, size);
}

QvStatus qvi_flight_decode_single(const uint8_t *p, size_t n, const char *what, bool utf8,
                                  QvFlightBytes *out, QvError *error) {
  memset(out, 0, sizeof *out);
  Walk k;
  QvStatus st = walk_init(&k, p, n, what, error);
  QviPbField f;
  while (!st && (st = walk_next(&k, &f, error)) == QV_OK) {
    if (f.number != 1) continue;
    if (utf8) {
      char *s = (char *)out->data;
      st = copy_string(&s, &f, what, error);
      out->data = (uint8_t *)s;
      out->size = st ? 0 : f.size;
    } else {
      st = bytes_field(out, &f, what, error);
    }
  }
  if (st == QV_EOS) st = fill_bytes(out, error);
  if (st) qv_flight_bytes_reset(out);
  return st;
}

QvStatus qvi_flight_decode_empty(const uint8_t *p, size_t n, QvError *error) {
  Walk k;
  QvStatus st = walk_init(&k, p, n, "Empty", error);
  QviPbField f;
  while (!st && (st = walk_next(&k, &f, error)) == QV_OK) {
  }
  return st == QV_EOS ? QV_OK : st;
}
