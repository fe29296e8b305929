/* Shared by the tensor column files (src/adapters/tensor_column*.c). */
#ifndef QUIVER_ADAPTERS_TENSOR_COLUMN_INTERNAL_H
#define QUIVER_ADAPTERS_TENSOR_COLUMN_INTERNAL_H

#include "quiver/tensor_column.h"

/* "arrow.fixed_shape_tensor", ... for messages. */
const char *qvi_tensor_column_kind_name(QvTensorColumnKind kind);
/* Arrow format string of a value type ("f" for float32); NULL for none. */
const char *qvi_tensor_value_format(QvArrowType t);
/* The value type of a format string; QV_ARROW_NONE when not numeric. */
QvArrowType qvi_tensor_value_from_format(const char *format);
/* Replaces type->dim_names with a copy of ndim names (NULL: none). */
QvStatus qvi_tensor_column_set_names(QvTensorColumnType *type, const char *const *names,
                                    QvError *error);

/* ---- extension metadata helpers shared with the sparse column types
 * (sparse_column_type.c): both forms carry their parameters as JSON
 * (util/json.h, so no JSON library is needed). */
struct QviJson;
struct QvStrBuf;
struct ArrowSchema;
/* Copies n names into one malloc'd block (the pointer array, then the text). */
QvStatus qvi_ext_names_copy(const char *const *names, int32_t n, char ***out, QvError *error);
/* Parses `len` bytes of metadata JSON (duplicate keys refused) and hands the root, with
 * kind, ndim and out, to parse; `what` names the extension in messages. */
QvStatus qvi_ext_meta_parse(const char *json, size_t len, const char *what,
                            QvStatus (*parse)(const struct QviJson *root, int kind, int32_t ndim,
                                              void *out, QvError *error),
                            int kind, int32_t ndim, void *out, QvError *error);
/* names[0..n) = the strings of the JSON array arr (strings without NUL bytes). */
QvStatus qvi_ext_meta_names(const struct QviJson *arr, int32_t n, const char *what,
                            const char **names, QvError *error);
/* Writing: b holds "{" and the members so far; _key puts the separator and
 * "key":, _put_names "dim_names":[...] when names is not NULL (QV_EINVAL
 * naming the name that is not UTF-8), _finish closes the object into *json
 * (malloc'd) or frees it when st or memory failed. */
void qvi_ext_meta_key(struct QvStrBuf *b, const char *key);
QvStatus qvi_ext_meta_put_names(struct QvStrBuf *b, const char *const *names, int32_t n,
                                const char *what, QvError *error);
QvStatus qvi_ext_meta_finish(struct QvStrBuf *b, QvStatus st, char **json, QvError *error);
/* Adds the extension name and metadata to a built field; on failure releases it. */
QvStatus qvi_ext_field_finish(struct ArrowSchema *out, QvStatus st, const char *ext_name,
                              const char *json, QvError *error);

#endif
