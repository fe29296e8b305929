/** @file
 * quiver: the Arrow integration JSON format (Integration.rst, "JSON test data
 * format"), the text form in which Arrow implementations exchange test data:
 * a schema, record batches value by value, and dictionaries by id.
 *
 *  - qv_json_read: JSON text from a QvSource (gzip-compressed .json.gz
 *    content too) -> an ArrowSchema (a struct "+s" whose children are the
 *    fields; schema metadata on it), one ArrowArray per batch (a struct array
 *    whose children are the columns) and the dictionaries by id. The input is
 *    untrusted: every count, buffer length, offset, type code, dictionary id
 *    and index is checked, and a failure names the JSON path, e.g.
 *    `batches[0].columns[2].children[0].DATA: 3 values, count is 4`.
 *  - qv_json_write: schema + batches (+ dictionary ids) -> JSON text, to a
 *    QvSink.
 *  - qv_json_compare: two data sets compared the way an integration check
 *    does (schema, dictionaries, then values and validity).
 *
 * A library configured with -DQV_WITH_JSON=OFF keeps these functions, and
 * each returns QV_ENOTSUP saying the build left integration JSON out.
 *
 * Value encodings follow the format: 64-bit integers and decimals (the
 * unscaled integer) are JSON strings, binary is upper-case hex, integers
 * are parsed exactly (never through a double) and must fit their type
 * (QvJsonReadOptions.accept_unsigned_spelling reads arrow-js's unsigned
 * spelling of negative values). A null slot's value is not read: it may be
 * any value of the type or JSON null. Values are never range
 * checked against a type's meaning (decimal precision, date64 multiples of a
 * day, time of day): files from older writers hold such values and every
 * implementation accepts them. Floating-point NaN and infinities, which JSON
 * cannot hold, are written as the strings "NaN", "Infinity", "-Infinity"
 * and read back from them. Extension types are their storage type plus the
 * ARROW:extension:* field metadata, kept as it is. */
#ifndef QUIVER_INTEGRATION_JSON_H
#define QUIVER_INTEGRATION_JSON_H

#include "quiver/common.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "quiver/c_data.h"
#include "quiver/error.h"
#include "quiver/io.h"

#ifdef __cplusplus
extern "C" {
#endif

/** A schema and its batches, as the writer and the comparison take them and
 * as a read file lends them (nothing here is owned). */
typedef struct QvJsonData {
  const struct ArrowSchema *schema;         /**< struct "+s": the fields */
  const struct ArrowArray *const *batches;  /**< struct arrays of the schema's type */
  int64_t n_batches;                        /**< entries of `batches` */
  /** The dictionary id of every dictionary-encoded schema node, in pre-order:
   * a node, then (when it is dictionary-encoded) its dictionary's value type,
   * then its children. Several nodes may share an id: they then share one
   * dictionary. NULL: the ids 0, 1, 2, ... in that order (none shared). */
  const int64_t *dictionary_ids;
  int64_t n_dictionary_ids; /**< entries of `dictionary_ids` */
} QvJsonData;

/** Options of qv_json_read; NULL or a zeroed struct means every default. */
typedef struct QvJsonReadOptions {
  size_t struct_size; /**< 0 or sizeof(QvJsonReadOptions) (quiver/common.h) */
  /** Largest JSON text accepted, after gzip decompression; 0 = 2 GiB. */
  int64_t max_size;
  /** A signed 64-bit value (int64, date64, time64, timestamp, duration)
   * spelled from 2^63 to 2^64 - 1, or a decimal from 2^(bits-1) to 2^bits - 1,
   * is out of its type's range and refused (QV_EINVAL naming it) unless this
   * is true: then it is read as the two's complement bits it spells, as
   * arrow-js's JSON writer spells negative values (-1 as
   * "18446744073709551615"). */
  bool accept_unsigned_spelling;
  /** A quirk for old gold files: decimals beyond their precision are read
   * (refused by default, as by Arrow C++'s ValidateFull). */
  bool accept_decimal_overflow;
} QvJsonReadOptions;

/** A read integration JSON file (library-allocated). */
typedef struct QvJsonFile QvJsonFile;

/** Reads the whole source (quiver/io.h: memory, a path, a pipe) and parses
 * it; gzip-compressed content (.json.gz) is recognised by its magic bytes
 * and inflated (libdeflate). Errors name the source. */
QV_API QvStatus qv_json_read(QvJsonFile **out, QvSource *source, const QvJsonReadOptions *options,
                             QvError *error);
/** NULL is a no-op. */
QV_API void qv_json_file_free(QvJsonFile *file);
/** The schema, batches and dictionary ids (every node's, in the pre-order of
 * QvJsonData). The pointers stay valid until qv_json_file_free; share a
 * batch with qv_array_share (quiver/array.h) to keep it longer. Dictionary-
 * encoded nodes of the batches carry their dictionary (ArrowArray.dictionary). */
QV_API void qv_json_file_data(const QvJsonFile *file, QvJsonData *out);
/** The dictionaries of the file's "dictionaries" list, in their order:
 * the id, the values (an array of the value type) and the value type. */
QV_API int64_t qv_json_file_n_dictionaries(const QvJsonFile *file);
/** Dictionary i of the file (0 .. qv_json_file_n_dictionaries - 1): its id, values and value
 * type, valid while the file lives. */
QV_API QvStatus qv_json_file_dictionary(const QvJsonFile *file, int64_t i, int64_t *id,
                                        const struct ArrowArray **values,
                                        const struct ArrowSchema **value_type, QvError *error);

/** Options of qv_json_write; NULL or a zeroed struct means every default. */
typedef struct QvJsonWriteOptions {
  size_t struct_size; /**< 0 or sizeof(QvJsonWriteOptions) (quiver/common.h) */
  /** Spaces per nesting level; 0 = 2; negative: everything on one line. */
  int32_t indent;
  /** The most bytes the text may take; 0 = QV_DEFAULT_MAX_OUTPUT_SIZE
   * (quiver/sparse.h, 16 GiB). The size is counted before anything is
   * written, stopping as soon as it passes the limit (QV_ELIMIT naming it),
   * so a batch of 2^40 rows is refused at once. */
  int64_t max_output_size;
} QvJsonWriteOptions;

/** Writes `data` as integration JSON: the schema, a "dictionaries" list
 * (each id once, its values taken from the batches' arrays) when some node
 * is dictionary-encoded, then the batches. Every batch is validated in full
 * first. Sliced arrays (offsets) are written as their logical values.
 * QV_ENOTSUP when one dictionary id holds different values in two batches
 * (the format has one dictionary per id). The text goes to `sink` in
 * chunks of 64 KiB, never held whole in memory (the sink is not finished:
 * qv_sink_finish commits a path sink). Nothing is written when the data is
 * refused or the text would pass the limit. */
QV_API QvStatus qv_json_write(const QvJsonData *data, QvSink *sink,
                              const QvJsonWriteOptions *options, QvError *error);

/** Options of qv_json_compare; NULL or a zeroed struct means every default. */
typedef struct QvJsonCompareOptions {
  size_t struct_size; /**< 0 or sizeof(QvJsonCompareOptions) (quiver/common.h) */
  /** Absolute tolerance of floating-point values; 0 = 1e-5 (Arrow C++'s
   * default); negative: exact comparison. */
  double float_tolerance;
} QvJsonCompareOptions;

/** Compares `found` against `expected`: the schemas (field names but those
 * of a map's entries, key and value fields, which Arrow C++ does not compare
 * either; types and
 * every type parameter, nullability, custom metadata of fields and schema
 * (as maps: the same entries in any order, duplicates counted), dictionary
 * encoding: index type, ordered flag, value type, and which
 * nodes share a dictionary when both sides give ids, but for nodes inside
 * another dictionary's values, which Arrow C++ writes with ids of their own),
 * the number of batches,
 * then per batch the row count, every dictionary in full and every value and
 * validity bit (values of null slots are not compared). QV_OK when equal,
 * QV_EINVAL with a message naming the first difference: the field path, the
 * batch, the row, the expected and the found value. Floating-point values
 * compare as Arrow C++'s integration check does, plus NaN equals NaN (see
 * src/integration/json_compare.c). */
QV_API QvStatus qv_json_compare(const QvJsonData *expected, const QvJsonData *found,
                                const QvJsonCompareOptions *options, QvError *error);

#ifdef __cplusplus
}
#endif

#endif
