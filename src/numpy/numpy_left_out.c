/* The NumPy formats (.npy, .npz) in a build configured with
 * -DQV_WITH_NUMPY=OFF: the API stays (the same exports), and every call says
 * the build left it out (QV_ENOTSUP, which the CLI reports as exit 3).
 * Compiled instead of the rest of this folder. */
#include <stddef.h>
#include <string.h>

#include "quiver/npy.h"
#include "quiver/npz.h"

#define LEFT_OUT "this build of quiver left out the NumPy formats .npy and .npz (configured with -DQV_WITH_NUMPY=OFF)"

QvStatus qv_npy_parse_header(const uint8_t *data, size_t size, QvNpyHeader *out, QvError *error) {
  (void)data;
  (void)size;
  if (out) memset(out, 0, sizeof *out);
  return qv_error_set(error, QV_ENOTSUP, LEFT_OUT);
}

QvStatus qv_npy_read(QvSource *source, const QvNpyReadOptions *options, QvTensor *out,
                     QvError *error) {
  (void)source;
  (void)options;
  if (out) memset(out, 0, sizeof *out); /* as the reader leaves it on failure: reset-safe */
  return qv_error_set(error, QV_ENOTSUP, LEFT_OUT);
}

QvStatus qv_npy_write(const QvTensor *t, QvSink *sink, const QvNpyWriteOptions *options,
                      QvError *error) {
  (void)t;
  (void)sink;
  (void)options;
  return qv_error_set(error, QV_ENOTSUP, LEFT_OUT);
}

QvStatus qv_npy_write_size(const QvTensor *t, const QvNpyWriteOptions *options, size_t *size,
                           QvError *error) {
  (void)t;
  (void)options;
  if (size) *size = 0;
  return qv_error_set(error, QV_ENOTSUP, LEFT_OUT);
}

QvStatus qv_npz_read(QvSource *source, const QvNpzReadOptions *options, QvSparseTensor *out,
                     QvNpzReadInfo *info, QvError *error) {
  (void)source;
  (void)options;
  if (out) memset(out, 0, sizeof *out);
  if (info) memset(info, 0, sizeof *info);
  return qv_error_set(error, QV_ENOTSUP, LEFT_OUT);
}

QvStatus qv_npz_write(const QvSparseTensor *t, QvSink *sink, const QvNpzWriteOptions *options,
                      QvError *error) {
  (void)t;
  (void)sink;
  (void)options;
  return qv_error_set(error, QV_ENOTSUP, LEFT_OUT);
}
