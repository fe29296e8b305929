/* The Arrow C Device Data Interface (quiver/c_device.h): quiver's CPU
 * arrays and streams as device structs, and device structs from elsewhere
 * checked to be CPU data before the readers' and writers' plain forms take
 * them. */
#include "quiver/c_device.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *device_name(ArrowDeviceType t) {
  switch (t) {
    case ARROW_DEVICE_CPU: return "CPU";
    case ARROW_DEVICE_CUDA: return "CUDA";
    case ARROW_DEVICE_CUDA_HOST: return "CUDA host";
    case ARROW_DEVICE_OPENCL: return "OpenCL";
    case ARROW_DEVICE_VULKAN: return "Vulkan";
    case ARROW_DEVICE_METAL: return "Metal";
    case ARROW_DEVICE_VPI: return "VPI";
    case ARROW_DEVICE_ROCM: return "ROCm";
    case ARROW_DEVICE_ROCM_HOST: return "ROCm host";
    case ARROW_DEVICE_EXT_DEV: return "extension device";
    case ARROW_DEVICE_CUDA_MANAGED: return "CUDA managed";
    case ARROW_DEVICE_ONEAPI: return "oneAPI";
    case ARROW_DEVICE_WEBGPU: return "WebGPU";
    case ARROW_DEVICE_HEXAGON: return "Hexagon";
    default: return "unknown device";
  }
}

/* The refusal of a device array quiver cannot read (not CPU, or an event). */
static QvStatus refuse_device(const struct ArrowDeviceArray *a, QvError *error) {
  if (a->device_type != ARROW_DEVICE_CPU)
    return qv_error_set(error, QV_ENOTSUP,
                        "device array on device type %d (%s), device id %lld: quiver reads CPU "
                        "memory only (ARROW_DEVICE_CPU)",
                        (int)a->device_type, device_name(a->device_type),
                        (long long)a->device_id);
  return qv_error_set(error, QV_ENOTSUP,
                      "CPU device array with a sync_event: quiver cannot wait on an event");
}

void qv_device_array_from_cpu(struct ArrowArray *array, struct ArrowDeviceArray *out) {
  memset(out, 0, sizeof *out);
  out->device_type = ARROW_DEVICE_CPU;
  out->device_id = QV_DEVICE_CPU_ID;
  out->sync_event = NULL;
  if (array == NULL) return;
  out->array = *array;
  array->release = NULL;
}

QvStatus qv_device_array_check(const struct ArrowDeviceArray *array, QvError *error) {
  if (array == NULL || array->array.release == NULL)
    return qv_error_set(error, QV_EARG, "device array is NULL or released");
  if (array->device_type != ARROW_DEVICE_CPU || array->sync_event != NULL)
    return refuse_device(array, error);
  return QV_OK;
}

QvStatus qv_device_array_to_cpu(struct ArrowDeviceArray *array, struct ArrowArray *out,
                                QvError *error) {
  if (out == NULL) return qv_error_set(error, QV_EARG, "qv_device_array_to_cpu: out is NULL");
  QvStatus st = qv_device_array_check(array, error);
  if (st != QV_OK) return st;
  *out = array->array;
  array->array.release = NULL;
  return QV_OK;
}

/* ---- a CPU stream as a device stream */

typedef struct DeviceOfCpu {
  struct ArrowArrayStream inner;
} DeviceOfCpu;

static int doc_get_schema(struct ArrowDeviceArrayStream *s, struct ArrowSchema *out) {
  DeviceOfCpu *p = s->private_data;
  return p->inner.get_schema(&p->inner, out);
}

static int doc_get_next(struct ArrowDeviceArrayStream *s, struct ArrowDeviceArray *out) {
  DeviceOfCpu *p = s->private_data;
  struct ArrowArray a;
  memset(&a, 0, sizeof a);
  int code = p->inner.get_next(&p->inner, &a);
  if (code != 0) {
    memset(out, 0, sizeof *out);
    return code;
  }
  qv_device_array_from_cpu(&a, out); /* a released array (the end) stays released */
  return 0;
}

static const char *doc_get_last_error(struct ArrowDeviceArrayStream *s) {
  DeviceOfCpu *p = s->private_data;
  return p->inner.get_last_error ? p->inner.get_last_error(&p->inner) : NULL;
}

static void doc_release(struct ArrowDeviceArrayStream *s) {
  if (s->release == NULL) return;
  DeviceOfCpu *p = s->private_data;
  if (p->inner.release) p->inner.release(&p->inner);
  free(p);
  s->release = NULL;
  s->private_data = NULL;
}

QvStatus qv_device_stream_from_cpu(struct ArrowArrayStream *stream,
                                   struct ArrowDeviceArrayStream *out, QvError *error) {
  if (out == NULL) return qv_error_set(error, QV_EARG, "qv_device_stream_from_cpu: out is NULL");
  memset(out, 0, sizeof *out);
  if (stream == NULL || stream->release == NULL)
    return qv_error_set(error, QV_EARG, "stream is NULL or released");
  if (!stream->get_schema || !stream->get_next)
    return qv_error_set(error, QV_EARG, "stream has no get_schema or get_next callback");
  DeviceOfCpu *p = calloc(1, sizeof *p);
  if (p == NULL) return qv_error_set(error, QV_ENOMEM, "out of memory");
  p->inner = *stream;
  stream->release = NULL;
  out->device_type = ARROW_DEVICE_CPU;
  out->get_schema = doc_get_schema;
  out->get_next = doc_get_next;
  out->get_last_error = doc_get_last_error;
  out->release = doc_release;
  out->private_data = p;
  return QV_OK;
}

/* ---- a device stream as a CPU stream */

typedef struct CpuOfDevice {
  struct ArrowDeviceArrayStream inner; /* owned, or (borrowed) a copy of the caller's */
  struct ArrowDeviceArrayStream *borrowed; /* the caller's stream when not owned */
  char message[QV_ERROR_MESSAGE_SIZE + 64];
} CpuOfDevice;

static struct ArrowDeviceArrayStream *cod_inner(CpuOfDevice *p) {
  return p->borrowed ? p->borrowed : &p->inner;
}

static int cod_get_schema(struct ArrowArrayStream *s, struct ArrowSchema *out) {
  CpuOfDevice *p = s->private_data;
  struct ArrowDeviceArrayStream *d = cod_inner(p);
  p->message[0] = '\0';
  return d->get_schema(d, out);
}

static int cod_get_next(struct ArrowArrayStream *s, struct ArrowArray *out) {
  CpuOfDevice *p = s->private_data;
  struct ArrowDeviceArrayStream *d = cod_inner(p);
  p->message[0] = '\0';
  memset(out, 0, sizeof *out);
  struct ArrowDeviceArray a;
  memset(&a, 0, sizeof a);
  int code = d->get_next(d, &a);
  if (code != 0) return code;
  if (a.array.release == NULL) return 0; /* the end */
  if (a.device_type != ARROW_DEVICE_CPU || a.sync_event != NULL) {
    QvError e;
    qv_error_clear(&e);
    refuse_device(&a, &e);
    snprintf(p->message, sizeof p->message, "%s (in the middle of a stream)", e.message);
    a.array.release(&a.array);
    return ENOTSUP;
  }
  *out = a.array;
  return 0;
}

static const char *cod_get_last_error(struct ArrowArrayStream *s) {
  CpuOfDevice *p = s->private_data;
  if (p->message[0]) return p->message;
  struct ArrowDeviceArrayStream *d = cod_inner(p);
  return d->get_last_error ? d->get_last_error(d) : NULL;
}

static void cod_release(struct ArrowArrayStream *s) {
  if (s->release == NULL) return;
  CpuOfDevice *p = s->private_data;
  if (!p->borrowed && p->inner.release) p->inner.release(&p->inner);
  free(p);
  s->release = NULL;
  s->private_data = NULL;
}

static QvStatus check_stream(const struct ArrowDeviceArrayStream *stream, QvError *error) {
  if (stream == NULL || stream->release == NULL)
    return qv_error_set(error, QV_EARG, "device stream is NULL or released");
  if (!stream->get_schema || !stream->get_next)
    return qv_error_set(error, QV_EARG, "device stream has no get_schema or get_next callback");
  if (stream->device_type != ARROW_DEVICE_CPU)
    return qv_error_set(error, QV_ENOTSUP,
                        "device stream of device type %d (%s): quiver reads CPU memory only "
                        "(ARROW_DEVICE_CPU)",
                        (int)stream->device_type, device_name(stream->device_type));
  return QV_OK;
}

/* A plain stream over `stream`: owning it (moved) or borrowing it. */
static QvStatus cpu_of_device(struct ArrowDeviceArrayStream *stream, bool borrow,
                              struct ArrowArrayStream *out, QvError *error) {
  memset(out, 0, sizeof *out);
  QvStatus st = check_stream(stream, error);
  if (st != QV_OK) return st;
  if (!borrow && stream->get_next == doc_get_next) {
    /* one of ours: hand back the CPU stream it wraps */
    DeviceOfCpu *p = stream->private_data;
    *out = p->inner;
    p->inner.release = NULL;
    stream->release(stream);
    return QV_OK;
  }
  CpuOfDevice *p = calloc(1, sizeof *p);
  if (p == NULL) return qv_error_set(error, QV_ENOMEM, "out of memory");
  if (borrow) {
    p->borrowed = stream;
  } else {
    p->inner = *stream;
    stream->release = NULL;
  }
  out->get_schema = cod_get_schema;
  out->get_next = cod_get_next;
  out->get_last_error = cod_get_last_error;
  out->release = cod_release;
  out->private_data = p;
  return QV_OK;
}

QvStatus qv_device_stream_to_cpu(struct ArrowDeviceArrayStream *stream,
                                 struct ArrowArrayStream *out, QvError *error) {
  if (out == NULL) return qv_error_set(error, QV_EARG, "qv_device_stream_to_cpu: out is NULL");
  return cpu_of_device(stream, false, out, error);
}

/* ---- readers */

QvStatus qv_rb_stream_reader_new_device(struct ArrowDeviceArrayStream *out, QvSource *source,
                                        const QvRbReadOptions *options, QvError *error) {
  if (out == NULL)
    return qv_error_set(error, QV_EARG, "qv_rb_stream_reader_new_device: out is NULL");
  memset(out, 0, sizeof *out);
  struct ArrowArrayStream s;
  memset(&s, 0, sizeof s);
  QvStatus st = qv_rb_stream_reader_new(&s, source, options, error);
  if (st != QV_OK) return st;
  st = qv_device_stream_from_cpu(&s, out, error);
  if (st != QV_OK && s.release) s.release(&s);
  return st;
}

QvStatus qv_rb_file_read_batch_device(QvRbFileReader *reader, int64_t i,
                                      struct ArrowDeviceArray *out, QvError *error) {
  if (out == NULL)
    return qv_error_set(error, QV_EARG, "qv_rb_file_read_batch_device: out is NULL");
  struct ArrowArray a;
  memset(&a, 0, sizeof a);
  QvStatus st = qv_rb_file_read_batch(reader, i, &a, error);
  if (st != QV_OK) {
    memset(out, 0, sizeof *out);
    return st;
  }
  qv_device_array_from_cpu(&a, out);
  return QV_OK;
}

QvStatus qv_tensor_column_unstack_device(const QvTensor *t, const QvTensorUnstackOptions *options,
                                         struct ArrowSchema *schema,
                                         struct ArrowDeviceArray *array, QvError *error) {
  if (array == NULL)
    return qv_error_set(error, QV_EARG, "qv_tensor_column_unstack_device: array is NULL");
  struct ArrowArray a;
  memset(&a, 0, sizeof a);
  QvStatus st = qv_tensor_column_unstack(t, options, schema, &a, error);
  if (st != QV_OK) {
    memset(array, 0, sizeof *array);
    return st;
  }
  qv_device_array_from_cpu(&a, array);
  return QV_OK;
}

/* ---- writers */

QvStatus qv_rb_writer_write_device(QvRbWriter *writer, const struct ArrowDeviceArray *batch,
                                   QvError *error) {
  QvStatus st = qv_device_array_check(batch, error);
  if (st != QV_OK) return st;
  return qv_rb_writer_write(writer, &batch->array, error);
}

QvStatus qv_rb_writer_write_device_move(QvRbWriter *writer, struct ArrowDeviceArray *batch,
                                        QvError *error) {
  if (batch == NULL) return qv_error_set(error, QV_EARG, "device array is NULL");
  QvStatus st = qv_device_array_check(batch, error);
  if (st != QV_OK) {
    if (batch->array.release) batch->array.release(&batch->array);
    batch->array.release = NULL;
    return st;
  }
  return qv_rb_writer_write_move(writer, &batch->array, error);
}

QvStatus qv_rb_write_all_device(struct ArrowDeviceArrayStream *stream, QvSink *sink,
                                const QvRbWriteOptions *options, QvError *error) {
  QvStatus st = check_stream(stream, error);
  if (st != QV_OK) return st;
  if (stream->get_next == doc_get_next) {
    /* one of ours: its CPU stream directly (a quiver reader keeps its
     * dictionary ids) */
    DeviceOfCpu *p = stream->private_data;
    return qv_rb_write_all(&p->inner, sink, options, error);
  }
  struct ArrowArrayStream plain;
  st = cpu_of_device(stream, true, &plain, error);
  if (st != QV_OK) return st;
  st = qv_rb_write_all(&plain, sink, options, error);
  plain.release(&plain);
  return st;
}

QvStatus qv_tensor_column_init_device(QvTensorColumn *out, const struct ArrowSchema *field,
                                      struct ArrowDeviceArray *array,
                                      const QvTensorColumnOptions *options, QvError *error) {
  QvStatus st = qv_device_array_check(array, error);
  if (st != QV_OK) return st;
  return qv_tensor_column_init(out, field, &array->array, options, error);
}
