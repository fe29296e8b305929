/* Integration JSON in a build configured with -DQV_WITH_JSON=OFF: the API
 * stays (the same exports, so a program linked against a full build still
 * loads), and every call says the build left it out (QV_ENOTSUP, which the
 * CLI reports as exit 3). Compiled instead of the rest of this folder. */
#include <stddef.h>

#include "quiver/integration_json.h"

#define LEFT_OUT "this build of quiver left out Arrow integration JSON (configured with -DQV_WITH_JSON=OFF)"

QvStatus qv_json_read(QvJsonFile **out, QvSource *source, const QvJsonReadOptions *options,
                      QvError *error) {
  (void)source;
  (void)options;
  if (out) *out = NULL;
  return qv_error_set(error, QV_ENOTSUP, LEFT_OUT);
}

/* No QvJsonFile can exist in this build: the accessors have nothing to do. */
void qv_json_file_free(QvJsonFile *file) { (void)file; }

void qv_json_file_data(const QvJsonFile *file, QvJsonData *out) {
  (void)file;
  if (out) *out = (QvJsonData){0};
}

int64_t qv_json_file_n_dictionaries(const QvJsonFile *file) {
  (void)file;
  return 0;
}

QvStatus qv_json_file_dictionary(const QvJsonFile *file, int64_t i, int64_t *id,
                                 const struct ArrowArray **values,
                                 const struct ArrowSchema **value_type, QvError *error) {
  (void)file;
  (void)i;
  (void)id;
  (void)values;
  (void)value_type;
  return qv_error_set(error, QV_ENOTSUP, LEFT_OUT);
}

QvStatus qv_json_write(const QvJsonData *data, QvSink *sink, const QvJsonWriteOptions *options,
                       QvError *error) {
  (void)data;
  (void)sink;
  (void)options;
  return qv_error_set(error, QV_ENOTSUP, LEFT_OUT);
}

QvStatus qv_json_compare(const QvJsonData *expected, const QvJsonData *found,
                         const QvJsonCompareOptions *options, QvError *error) {
  (void)expected;
  (void)found;
  (void)options;
  return qv_error_set(error, QV_ENOTSUP, LEFT_OUT);
}
