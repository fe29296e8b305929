#include "quiver/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

const char *qv_status_name(QvStatus status) {
  switch (status) {
    case QV_OK: return "QV_OK";
    case QV_EINVAL: return "QV_EINVAL";
    case QV_ENOMEM: return "QV_ENOMEM";
    case QV_EIO: return "QV_EIO";
    case QV_ENOTSUP: return "QV_ENOTSUP";
    case QV_ELIMIT: return "QV_ELIMIT";
    case QV_ETRUNCATED: return "QV_ETRUNCATED";
    case QV_EARG: return "QV_EARG";
    case QV_EOS: return "QV_EOS";
    default: return "QV_UNKNOWN";
  }
}

void qv_error_clear(QvError *error) {
  if (error == NULL) return;
  error->code = QV_OK;
  error->message[0] = '\0';
}

QvStatus qv_error_set(QvError *error, QvStatus code, const char *fmt, ...) {
  if (error == NULL) return code;
  error->code = code;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(error->message, sizeof error->message, fmt, ap);
  va_end(ap);
  return code;
}

QvStatus qv_error_prefix(QvError *error, const char *fmt, ...) {
  if (error == NULL) return QV_EINVAL;
  char prefix[256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(prefix, sizeof prefix, fmt, ap);
  va_end(ap);
  char old[QV_ERROR_MESSAGE_SIZE];
  memcpy(old, error->message, sizeof old);
  snprintf(error->message, sizeof error->message, "%s: %s", prefix, old);
  return error->code;
}
