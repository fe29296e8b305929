/** @file
 * quiver: columnar arrays in memory (Columnar.rst), built on the Arrow C Data
 * Interface (quiver/c_data.h). Nothing here knows about bytes on disk.
 *
 *  - Schemas: parse an ArrowSchema into a QvArrowSchemaView; build ArrowSchemas
 *    (qv_arrow_schema_init + children / dictionary / metadata); deep copy.
 *  - Builders: qv_array_init_from_schema gives an ArrowArray in the building
 *    state; append values, nulls and nested elements, then
 *    qv_array_finish_building turns it into an ordinary ArrowArray.
 *  - Views: a QvArrayView is a read-only decoded view of an ArrowArray (or of
 *    buffers that the caller fills in, e.g. from an IPC body) with the size of
 *    every buffer, used to validate untrusted arrays and to read values.
 *
 * Style follows nanoarrow: explicit init/release, QvStatus return codes and a
 * QvError with the reason. Arrays produced by quiver keep their memory alive
 * through QvOwner references, so they can be shared (qv_array_share) cheaply. */
#ifndef QUIVER_ARRAY_H
#define QUIVER_ARRAY_H

#include "quiver/common.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "quiver/buffer.h"
#include "quiver/c_data.h"
#include "quiver/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Nesting limit for schemas and arrays (children + dictionaries). */
#define QV_ARRAY_MAX_DEPTH 64




/* ---- schemas */

/** A parsed ArrowSchema node. Pointers point into the schema's strings. */
typedef struct QvArrowSchemaView {
  const struct ArrowSchema *schema; /**< the node parsed (not copied: it must outlive the view) */
  /** Logical type: QV_ARROW_DICTIONARY when the schema has a dictionary. */
  QvArrowType type;
  /** Physical layout type: the index type of a dictionary, INT32 for date32
   * and time32, INT64 for date64, time64, timestamp and duration; otherwise
   * equal to `type`. */
  QvArrowType storage_type;
  /** Bytes per value for fixed-width storage (decimals, intervals, fixed-size
   * binary, dictionary indices, ...); 0 for bool and variable-size types. */
  int32_t byte_width;
  int32_t fixed_size;        /**< fixed-size list: values per list */
  int32_t decimal_precision; /**< decimals */
  int32_t decimal_scale;     /**< decimals: digits after the decimal point */
  int32_t decimal_bit_width; /**< decimals: 32, 64, 128 or 256 */
  QvTimeUnit time_unit;      /**< time32/64, timestamp, duration (quiver/common.h) */
  const char *timezone;      /**< timestamp: may be "" */
  size_t timezone_len;       /**< bytes of `timezone` */
  int64_t n_children;        /**< the schema's n_children */
  /** Unions: union_type_ids[i] is the type code of child i;
   * union_child_index[code] the child of a type code or -1. */
  int8_t union_type_ids[128];
  int8_t union_child_index[128]; /**< see union_type_ids */
  /** ARROW:extension:name / ARROW:extension:metadata, or NULL. */
  const char *extension_name;
  size_t extension_name_len;       /**< bytes of extension_name */
  const char *extension_metadata;  /**< the ARROW:extension:metadata value, or NULL (not NUL-terminated) */
  size_t extension_metadata_len;   /**< bytes of extension_metadata */
} QvArrowSchemaView;

/** Parses one node (not its children): the format string, the child count
 * the type requires, a dictionary's integer index type, union type codes,
 * extension metadata. */
QV_API QvStatus qv_arrow_schema_view_init(QvArrowSchemaView *view, const struct ArrowSchema *schema,
                             QvError *error);

/** Validates a whole schema tree (every node parses, depth limit). */
QV_API QvStatus qv_arrow_schema_validate(const struct ArrowSchema *schema, QvError *error);

/** Initializes `schema` (release set) with a copy of `format` and `name`
 * (NULL: no name), the flags, and n_children child structs allocated with
 * release == NULL, to be initialized by the caller with qv_arrow_schema_init.
 * Does not check the format. */
QV_API QvStatus qv_arrow_schema_init(struct ArrowSchema *schema, const char *format, const char *name,
                        int64_t flags, int64_t n_children, QvError *error);
/** Allocates schema->dictionary (release == NULL) for the caller to init. */
QV_API QvStatus qv_arrow_schema_alloc_dictionary(struct ArrowSchema *schema, QvError *error);
/** Appends a key/value pair to the metadata (schemas made by qv_arrow_schema_init). */
QV_API QvStatus qv_arrow_schema_add_metadata(struct ArrowSchema *schema, const char *key, size_t key_len,
                                const char *value, size_t value_len, QvError *error);
/** Replaces the metadata with a copy of a C Data Interface metadata blob. */
QV_API QvStatus qv_arrow_schema_set_metadata(struct ArrowSchema *schema, const char *metadata,
                                QvError *error);
/** A deep copy of `src` into `dst` (released by dst->release). */
QV_API QvStatus qv_arrow_schema_copy(const struct ArrowSchema *src, struct ArrowSchema *dst, QvError *error);

/** Flag of qv_arrow_schema_to_string: the field, "name: type" with " not
 * null" after a non-nullable one (Arrow C++'s Field::ToString), rather than
 * its type alone. */
#define QV_TYPE_STRING_FIELD 1u

/** Writes the type of `schema` (with QV_TYPE_STRING_FIELD: the field) as
 * text, spelled as Arrow C++'s DataType::ToString spells it: "int32",
 * "double", "halffloat", "string", "date32[day]", "timestamp[ms, tz=UTC]",
 * "decimal128(5, 2)", "list<item: int32>", "fixed_size_list<item: int32>[2]",
 * "struct<a: int32, b: string not null>", "sparse_union<x: int32=5>",
 * "map<string, int32>" (names other than key/value/entries in parentheses:
 * "map<string ('k'), int32 ('v') ('pairs')>"), "run_end_encoded<run_ends:
 * int32, values: string>", "dictionary<values=string, indices=int8,
 * ordered=0>", "extension<arrow.fixed_shape_tensor[value_type=float,
 * shape=[2,3], permutation=[1,0], dim_names=[H,W]]>",
 * "extension<arrow.variable_shape_tensor[value_type=int64, ndim=3,
 * uniform_shape=[null,1,null]]>", "extension<arrow.uuid>". quiver's own
 * extension types follow the pattern:
 * "extension<quiver.sparse_tensor[value_type=double, format=csr, ndim=2,
 * index_type=int64, indptr_type=int64]>",
 * "extension<quiver.sparse_vector[value_type=float, size=5,
 * index_type=int32]>"; any other extension type, or one whose metadata does
 * not fit its storage, is "extension<NAME[storage_type=STORAGE]>".
 *
 * snprintf's rule: at most `cap` bytes including the NUL are written to
 * `buf` (NULL with cap 0 measures) and *length (may be NULL) receives the
 * length of the whole text. Names (fields, time zones, extension names)
 * are copied as they are: a printer that sends the text to a terminal
 * escapes it. QV_EINVAL when a node does not parse, QV_ELIMIT past
 * QV_ARRAY_MAX_DEPTH. */
QV_API QvStatus qv_arrow_schema_to_string(const struct ArrowSchema *schema, unsigned flags,
                                          char *buf, size_t cap, size_t *length,
                                          QvError *error);
/** qv_arrow_schema_to_string into a NUL-terminated string of its own
 * (*out; qv_free it). */
QV_API QvStatus qv_arrow_schema_to_string_alloc(const struct ArrowSchema *schema,
                                                unsigned flags, char **out, QvError *error);
/** Arrow C++'s name of a type without parameters ("int32", "halffloat",
 * "float", "double", "string", "date32[day]", "month_interval", ...);
 * "?" for a parameterized or nested type. */
QV_API const char *qv_arrow_type_cpp_name(QvArrowType type);

/** Metadata blobs (int32 count, then int32 length + bytes for each key and
 * value, native endian). */
typedef struct QvArrowMetadataIter {
  const char *next;  /**< the next pair's key length in the blob */
  int32_t remaining; /**< pairs not yet returned */
} QvArrowMetadataIter;
/** Starts iterating a metadata blob (NULL: no pairs). */
QV_API void qv_arrow_metadata_iter_init(QvArrowMetadataIter *it, const char *metadata);
/** false at the end */
QV_API bool qv_arrow_metadata_iter_next(QvArrowMetadataIter *it, const char **key, int32_t *key_len,
                           const char **value, int32_t *value_len);
/** Size in bytes of a metadata blob (0 for NULL). */
QV_API int64_t qv_arrow_metadata_size(const char *metadata);
/** Finds a key; returns false when absent. */
QV_API bool qv_arrow_metadata_get(const char *metadata, const char *key, const char **value,
                     int32_t *value_len);

/* ---- physical layouts (Columnar.rst), for code that walks buffers */

/** A physical buffer layout, shared by several logical types. */
typedef enum QvLayout {
  QV_LAYOUT_NULL,        /**< no buffers (null type) */
  QV_LAYOUT_BOOL,        /**< validity + one bit per value */
  QV_LAYOUT_FIXED,       /**< byte_width bytes per value */
  QV_LAYOUT_BINARY,      /**< int32 offsets + data */
  QV_LAYOUT_LARGE_BINARY, /**< int64 offsets + data */
  QV_LAYOUT_VIEW,        /**< 16-byte views + variadic data buffers (binary and string views) */
  QV_LAYOUT_LIST,        /**< int32 offsets + child (list, map) */
  QV_LAYOUT_LARGE_LIST,  /**< int64 offsets + child */
  QV_LAYOUT_LIST_VIEW,   /**< int32 offsets + int32 sizes + child */
  QV_LAYOUT_LARGE_LIST_VIEW, /**< int64 offsets + int64 sizes + child */
  QV_LAYOUT_FIXED_LIST,  /**< validity + child (fixed_size values per list) */
  QV_LAYOUT_STRUCT,      /**< validity + one child per member */
  QV_LAYOUT_SPARSE_UNION, /**< int8 type codes + children as long as the union */
  QV_LAYOUT_DENSE_UNION, /**< int8 type codes + int32 offsets into the children */
  QV_LAYOUT_REE          /**< no buffers: run ends child + values child */
} QvLayout;

/** The layout of a storage type (QvArrowSchemaView.storage_type). */
QV_API QvLayout qv_layout_of(QvArrowType storage_type);
/** Whether the layout has a validity bitmap in slot 0. */
QV_API bool qv_layout_has_validity(QvLayout layout);
/** Number of buffers an ArrowArray of this layout carries (views: without
 * the variadic buffers and the trailing sizes buffer). */
QV_API int qv_layout_n_buffers(QvLayout layout);
/** Byte width of the offsets of a binary/list-like layout (4 or 8), else 0. */
QV_API int qv_layout_offset_width(QvLayout layout);


/* ---- views and validation */

/** How much qv_array_view_set_array and the validators check. */
typedef enum QvValidateLevel {
  QV_VALIDATE_NONE = 0, /**< nothing beyond what qv_array_view_set_array always checks (counts, required pointers) */
  /** O(number of buffers): every buffer large enough for offset + length,
   * child lengths, first/last offsets and run ends inside their targets. */
  QV_VALIDATE_CHEAP = 1,
  /** O(data): also offsets monotonic, UTF-8, view lengths/buffer indices/
   * prefixes, union type codes and dense offsets, run ends strictly
   * increasing, dictionary indices in range, null counts vs bitmaps. */
  QV_VALIDATE_FULL = 2
} QvValidateLevel;

/** Buffer slots of a view, by layout:
 *   slot 0: validity bitmap (types that have one; NULL when absent)
 *   slot 1: values / bits / offsets / views / type codes / indices
 *   slot 2: binary data / list-view sizes / dense-union offsets
 * sizes are in bytes, counted from the buffer's start (physical index 0). */
typedef struct QvArrayView {
  QvArrowSchemaView type;         /**< the parsed schema node */
  const struct ArrowArray *array; /**< set by qv_array_view_set_array */
  int64_t offset;     /**< the array's offset: logical index 0 is physical index `offset` */
  int64_t length;     /**< the array's length in logical elements */
  int64_t null_count; /**< -1: unknown */
  const uint8_t *buffer[3];  /**< the buffer of each slot (see above); NULL when absent */
  int64_t buffer_size[3];    /**< bytes of each buffer, derived from offset + length */
  /** binary/utf8 views: the variadic data buffers and their sizes */
  int64_t n_variadic;
  const uint8_t **variadic;  /**< the variadic data buffers (n_variadic entries) */
  int64_t *variadic_size;    /**< bytes of each variadic buffer */
  int64_t variadic_capacity; /**< entries allocated in `variadic` and variadic_size */
  int64_t n_children;           /**< entries of `children` */
  struct QvArrayView *children; /**< the child views, as the schema's children */
  struct QvArrayView *dictionary; /**< dictionary-encoded arrays: the values */
} QvArrayView;

/** Allocates a view tree shaped like `schema` (validated). */
QV_API QvStatus qv_array_view_init(QvArrayView *view, const struct ArrowSchema *schema,
                            QvError *error);
/** Frees the view tree (the arrays viewed are not touched). */
QV_API void qv_array_view_reset(QvArrayView *view);
/** Room for n variadic buffers in a view node (binary/utf8 views). */
QV_API QvStatus qv_array_view_reserve_variadic(QvArrayView *view, int64_t n, QvError *error);
/** Points the view tree at an array: checks n_buffers / n_children /
 * dictionary presence and required pointers, derives buffer sizes from the
 * lengths (trusting the producer, as the C Data Interface does), then runs
 * the checks of `level`. */
QV_API QvStatus qv_array_view_set_array(QvArrayView *view, const struct ArrowArray *array,
                                 QvValidateLevel level, QvError *error);
/** Flags of qv_array_view_validate. */
#define QV_VALIDATE_SKIP_DICTIONARIES 1u /**< a reader checks each dictionary once, when it
                                            arrives, not with every batch using it */
/** A quirk: full validation does not check that decimals fit their precision
 * (it does by default, as Arrow C++'s ValidateFull: decimal128(5, 2) cannot
 * hold 1234567.89). Arrow's integration generator wrote such values in the
 * generated_decimal* gold files of Arrow 0.14.1 and 1.0.0. */
#define QV_VALIDATE_DECIMALS_UNBOUNDED 2u
/** Checks a filled-in view: children and, unless flags has
 * QV_VALIDATE_SKIP_DICTIONARIES, dictionaries. flags: 0 or a combination of
 * QV_VALIDATE_SKIP_DICTIONARIES and QV_VALIDATE_DECIMALS_UNBOUNDED. */
QV_API QvStatus qv_array_view_validate(const QvArrayView *view, QvValidateLevel level,
                                       unsigned flags, QvError *error);
/** One-shot validation of an array against its schema (flags 0); _flags
 * takes qv_array_view_validate's flags. */
QV_API QvStatus qv_array_validate_flags(const struct ArrowArray *array,
                                        const struct ArrowSchema *schema, QvValidateLevel level,
                                        unsigned flags, QvError *error);
/** One-shot validation of an array against its schema. */
QV_API QvStatus qv_array_validate(const struct ArrowArray *array, const struct ArrowSchema *schema,
                           QvValidateLevel level, QvError *error);

/* ---- reading values from a (validated) view; i is the logical index */

/** Whether logical element i is null. */
QV_API bool qv_array_view_is_null(const QvArrayView *view, int64_t i);
/** integers, bool, dates/times/timestamps/durations, dictionary indices,
 * interval months */
QV_API int64_t qv_array_view_get_int(const QvArrayView *view, int64_t i);
/** As qv_array_view_get_int, for unsigned values (uint64 in full). */
QV_API uint64_t qv_array_view_get_uint(const QvArrayView *view, int64_t i);
/** floating point (float16 converted) and integers */
QV_API double qv_array_view_get_double(const QvArrayView *view, int64_t i);
/** A byte range inside an array's buffers (not NUL-terminated). */
typedef struct QvBytes {
  const uint8_t *data; /**< the first byte; may be NULL when size is 0 */
  int64_t size;        /**< bytes */
} QvBytes;
/** binary/utf8 (all flavours), fixed-size binary, and the raw little-endian
 * bytes of decimals and intervals */
QV_API QvBytes qv_array_view_get_bytes(const QvArrayView *view, int64_t i);
/** lists, list views, maps, fixed-size lists: range in the child */
QV_API void qv_array_view_get_list(const QvArrayView *view, int64_t i, int64_t *child_start,
                            int64_t *child_length);
/** unions: the child a value lives in and its index there */
QV_API void qv_array_view_get_union(const QvArrayView *view, int64_t i, int64_t *child,
                             int64_t *child_index);
/** run-end encoded: index of the run (in the values child) holding i */
QV_API int64_t qv_array_view_get_run(const QvArrayView *view, int64_t i);

/** The value at i as JSON text (NUL-terminated; qv_free it):
 * null, numbers, "strings" (binary as hex), [lists], {"struct": fields},
 * maps as [[key, value], ...], unions/run-end/dictionary arrays as the value
 * they stand for, decimals as "123.45" strings. NaN/Inf print as strings.
 * Output beyond max_len bytes (0 = unlimited) is cut and ends with "...". */
QV_API QvStatus qv_array_view_format_value(const QvArrayView *view, int64_t i, size_t max_len,
                                    char **out, QvError *error);
/** The same for a person (what `quiver cat` prints): as above, except
 * date32/date64 as 2024-03-01 (date64 with a time of day as
 * 2024-03-01T13:45:07.123); time32/64 as 13:45:07.123 (fraction digits by
 * unit: none, 3, 6, 9); timestamps as 2024-03-01T13:45:07.123456, with a
 * "+hh:mm" zone converted to that offset and appended, "UTC"/"Etc/UTC"/"Z" as
 * "+00:00", other zone names as the UTC instant followed by Z[name]; durations
 * in ISO 8601 hours/minutes/seconds (-PT1H2M3.5S); intervals as "14 months",
 * "3 days 1500 ms", "1 month 2 days 3 ns"; decimals unquoted (123.45); NaN and
 * infinities as nan, inf, -inf. Dates and timestamps outside years 0000-9999
 * and times outside 0..24h print as the raw number and unit ("-1 s",
 * "253402300800 s"; a zoned one followed by " [zone]"). Zone names have
 * control bytes, ']' and '\\' escaped as \\xHH and are cut after 64 bytes.
 * max_len cuts strings, binaries and nested values only: a number, date, time
 * or interval is never cut. */
QV_API QvStatus qv_array_view_format_human(const QvArrayView *view, int64_t i, size_t max_len,
                                    char **out, QvError *error);

/* ---- building arrays */

/** An empty array of the schema's type in the building state. Dictionary
 * types get a building `array->dictionary` for the values; nested types get
 * building children (array->children[i]). */
QV_API QvStatus qv_array_init_from_schema(struct ArrowArray *array, const struct ArrowSchema *schema,
                                   QvError *error);
/** Appends n nulls. For structs, fixed-size lists and sparse unions this also
 * appends to the children (nulls, or empty values where a child cannot be
 * null); for run-end encoded arrays it appends a run of nulls. */
QV_API QvStatus qv_array_append_null(struct ArrowArray *array, int64_t n, QvError *error);
/** Appends n valid "zero" values (0, "", empty list, ...). */
QV_API QvStatus qv_array_append_empty(struct ArrowArray *array, int64_t n, QvError *error);
/** Integer-like types (bool, ints, dates, times, timestamps, durations,
 * interval months, dictionary indices, decimals by sign extension). Fails
 * with QV_EINVAL when the value does not fit the type. */
QV_API QvStatus qv_array_append_int(struct ArrowArray *array, int64_t value, QvError *error);
/** As qv_array_append_int, for values up to UINT64_MAX. */
QV_API QvStatus qv_array_append_uint(struct ArrowArray *array, uint64_t value, QvError *error);
/** float16/32/64 */
QV_API QvStatus qv_array_append_double(struct ArrowArray *array, double value, QvError *error);
/** binary/utf8 (all flavours), fixed-size binary (exact width), decimals and
 * intervals (raw little-endian bytes of the exact width) */
QV_API QvStatus qv_array_append_bytes(struct ArrowArray *array, const void *data, int64_t size, QvError *error);
/** As qv_array_append_bytes, for a NUL-terminated string. */
QV_API QvStatus qv_array_append_string(struct ArrowArray *array, const char *nul_terminated, QvError *error);
/** A day-time interval: days and milliseconds. */
QV_API QvStatus qv_array_append_interval_day_time(struct ArrowArray *array, int32_t days, int32_t ms, QvError *error);
/** A month-day-nano interval: months, days and nanoseconds. */
QV_API QvStatus qv_array_append_interval_month_day_nano(struct ArrowArray *array, int32_t months,
                                                 int32_t days, int64_t nanoseconds, QvError *error);
/** Lists, list views, maps, fixed-size lists, structs: after appending the
 * element's values to the child(ren), closes one valid element. */
QV_API QvStatus qv_array_finish_element(struct ArrowArray *array, QvError *error);
/** Unions: after appending one value to the child of `type_code`, closes the
 * element (sparse unions get empty values appended to the other children). */
QV_API QvStatus qv_array_finish_union_element(struct ArrowArray *array, int8_t type_code, QvError *error);
/** Run-end encoded: after appending one value to children[1], closes a run
 * of run_length (> 0) elements. */
QV_API QvStatus qv_array_finish_run(struct ArrowArray *array, int64_t run_length, QvError *error);
/** Run-end encoded: lengthens the last run by n (> 0) elements. */
QV_API QvStatus qv_array_extend_run(struct ArrowArray *array, int64_t n, QvError *error);
/** Appends src[start, start + length) (same type) to a building array. */
QV_API QvStatus qv_array_append_view(struct ArrowArray *array, const QvArrayView *src, int64_t start,
                              int64_t length, QvError *error);
/** Ends building: sets buffers, lengths and null counts of the whole tree
 * and validates it at `level`. The array then is an ordinary ArrowArray. */
QV_API QvStatus qv_array_finish_building(struct ArrowArray *array, QvValidateLevel level,
                                  QvError *error);

/* ---- arrays made by quiver */

/** Exports a view as an ArrowArray whose buffers point where the view's
 * buffers point; every node holds a reference to `owner` (may be NULL when
 * the memory is static). Empty offset buffers become a static 0. A
 * dictionary view that has `array` set is attached with qv_array_share. */
QV_API QvStatus qv_array_export_view(const QvArrayView *view, QvOwner *owner, struct ArrowArray *out,
                              QvError *error);
/** A second, independent ArrowArray sharing src's memory (reference counts).
 * Only arrays created by quiver can be shared (QV_EARG otherwise). */
QV_API QvStatus qv_array_share(const struct ArrowArray *src, struct ArrowArray *dst, QvError *error);
/** True when `array` was produced by quiver (its release callback is ours). */
QV_API bool qv_array_is_quiver(const struct ArrowArray *array);
/** New array holding a's values followed by b's (both of `schema`'s type). */
QV_API QvStatus qv_array_concat(const struct ArrowArray *a, const struct ArrowArray *b,
                         const struct ArrowSchema *schema, struct ArrowArray *out,
                         QvError *error);

#ifdef __cplusplus
}
#endif

#endif
