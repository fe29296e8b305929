/** @file
 * quiver: the Arrow IPC metadata (Message.fbs, Schema.fbs, Tensor.fbs,
 * SparseTensor.fbs, File.fbs) as plain C structs, with a verifying decoder
 * and an encoder.
 *
 * Decoded structs own their memory (strings and arrays are copied into an
 * arena released with qv_message_reset / qv_footer_reset), so they do not
 * depend on the lifetime of the bytes they were decoded from. Enum values are
 * the spec's numbers. */
#ifndef QUIVER_FORMAT_H
#define QUIVER_FORMAT_H

#include "quiver/common.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "quiver/compression.h"
#include "quiver/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/** MetadataVersion */
typedef enum QvMetadataVersion {
  QV_METADATA_V1 = 0,
  QV_METADATA_V2,
  QV_METADATA_V3,
  QV_METADATA_V4,
  QV_METADATA_V5
} QvMetadataVersion;
/** MessageHeader union tags */
typedef enum QvMessageHeader {
  QV_HEADER_NONE = 0,
  QV_HEADER_SCHEMA = 1,
  QV_HEADER_DICTIONARY_BATCH = 2,
  QV_HEADER_RECORD_BATCH = 3,
  QV_HEADER_TENSOR = 4,
  QV_HEADER_SPARSE_TENSOR = 5
} QvMessageHeader;
/** Type union tags */
typedef enum QvTypeId {
  QV_TYPE_NONE = 0,
  QV_TYPE_NULL = 1,
  QV_TYPE_INT = 2,
  QV_TYPE_FLOATING_POINT = 3,
  QV_TYPE_BINARY = 4,
  QV_TYPE_UTF8 = 5,
  QV_TYPE_BOOL = 6,
  QV_TYPE_DECIMAL = 7,
  QV_TYPE_DATE = 8,
  QV_TYPE_TIME = 9,
  QV_TYPE_TIMESTAMP = 10,
  QV_TYPE_INTERVAL = 11,
  QV_TYPE_LIST = 12,
  QV_TYPE_STRUCT = 13,
  QV_TYPE_UNION = 14,
  QV_TYPE_FIXED_SIZE_BINARY = 15,
  QV_TYPE_FIXED_SIZE_LIST = 16,
  QV_TYPE_MAP = 17,
  QV_TYPE_DURATION = 18,
  QV_TYPE_LARGE_BINARY = 19,
  QV_TYPE_LARGE_UTF8 = 20,
  QV_TYPE_LARGE_LIST = 21,
  QV_TYPE_RUN_END_ENCODED = 22,
  QV_TYPE_BINARY_VIEW = 23,
  QV_TYPE_UTF8_VIEW = 24,
  QV_TYPE_LIST_VIEW = 25,
  QV_TYPE_LARGE_LIST_VIEW = 26,
  QV_TYPE_ID_COUNT = 27
} QvTypeId;

/** The enums of Schema.fbs and Message.fbs, with the spec's numbers. Time
 * units are QvTimeUnit and byte order QvEndianness (quiver/common.h). */
typedef enum QvPrecision {
  QV_PRECISION_HALF = 0,
  QV_PRECISION_SINGLE = 1,
  QV_PRECISION_DOUBLE = 2
} QvPrecision;
typedef enum QvDateUnit { QV_DATE_DAY = 0, QV_DATE_MILLISECOND = 1 } QvDateUnit;
typedef enum QvIntervalUnit {
  QV_INTERVAL_YEAR_MONTH = 0,
  QV_INTERVAL_DAY_TIME = 1,
  QV_INTERVAL_MONTH_DAY_NANO = 2
} QvIntervalUnit;
typedef enum QvUnionMode { QV_UNION_SPARSE = 0, QV_UNION_DENSE = 1 } QvUnionMode;
/** Schema.features entries (int64 in the spec: the array stays int64_t). */
enum {
  QV_FEATURE_UNUSED = 0,
  QV_FEATURE_DICTIONARY_REPLACEMENT = 1,
  QV_FEATURE_COMPRESSED_BODY = 2
};
typedef enum QvDictionaryKind { QV_DICTIONARY_KIND_DENSE_ARRAY = 0 } QvDictionaryKind;
/** BodyCompressionMethod (the codec is a QvCompression, quiver/compression.h) */
typedef enum QvCompressionMethod { QV_COMPRESSION_METHOD_BUFFER = 0 } QvCompressionMethod;

typedef struct QvKeyValue {
  const char *key;   /**< NULL when absent */
  size_t key_len;
  const char *value; /**< NULL when absent */
  size_t value_len;
} QvKeyValue;

typedef struct QvIntType {
  int32_t bit_width;
  bool is_signed;
} QvIntType;

/** A member of the Type union, with its parameters. */
typedef struct QvType {
  QvTypeId id;
  union {
    QvIntType int_;
    struct { QvPrecision precision; } floating_point;
    struct { int32_t precision, scale, bit_width; } decimal;
    struct { QvDateUnit unit; } date;
    struct { QvTimeUnit unit; int32_t bit_width; } time;
    struct { QvTimeUnit unit; const char *timezone; size_t timezone_len; } timestamp; /**< NULL tz: none */
    struct { QvIntervalUnit unit; } interval;
    struct { QvTimeUnit unit; } duration;
    struct { int32_t byte_width; } fixed_size_binary;
    struct { int32_t list_size; } fixed_size_list;
    struct { bool keys_sorted; } map;
    struct { QvUnionMode mode; bool has_type_ids; int64_t n_type_ids; const int32_t *type_ids; } union_;
  } u;
} QvType;

typedef struct QvDictionaryEncoding {
  int64_t id;
  bool has_index_type; /**< absent means signed 32-bit */
  QvIntType index_type;
  bool is_ordered;
  QvDictionaryKind kind;
} QvDictionaryEncoding;

typedef struct QvField {
  const char *name; /**< NULL when absent */
  size_t name_len;
  bool nullable;
  QvType type;
  const QvDictionaryEncoding *dictionary; /**< NULL when not dictionary-encoded */
  int64_t n_children;
  const struct QvField *children;
  int64_t n_metadata;
  const QvKeyValue *metadata;
} QvField;

typedef struct QvSchema {
  QvEndianness endianness; /**< LITTLE or BIG, never NATIVE */
  int64_t n_fields;
  const QvField *fields;
  int64_t n_metadata;
  const QvKeyValue *metadata;
  int64_t n_features;
  const int64_t *features;
} QvSchema;

typedef struct QvBuffer {
  int64_t offset;
  int64_t length;
} QvBuffer;

typedef struct QvFieldNode {
  int64_t length;
  int64_t null_count;
} QvFieldNode;

typedef struct QvRecordBatch {
  int64_t length;
  int64_t n_nodes;
  const QvFieldNode *nodes;
  int64_t n_buffers;
  const QvBuffer *buffers;
  /** NONE: no BodyCompression table; else its codec (the .fbs CompressionType
   * numbers are mapped by the decoder and encoder) */
  QvCompression compression;
  QvCompressionMethod method;
  bool has_variadic_buffer_counts;
  int64_t n_variadic_buffer_counts;
  const int64_t *variadic_buffer_counts;
} QvRecordBatch;

typedef struct QvDictionaryBatch {
  int64_t id;
  QvRecordBatch data;
  bool is_delta;
} QvDictionaryBatch;

typedef struct QvTensorDim {
  int64_t size;
  const char *name; /**< NULL when absent */
  size_t name_len;
} QvTensorDim;

typedef struct QvTensorMeta {
  QvType type;
  int64_t ndim;
  const QvTensorDim *shape;
  bool has_strides;
  int64_t n_strides;
  const int64_t *strides;
  QvBuffer data;
} QvTensorMeta;

typedef struct QvSparseCOO {
  QvIntType indices_type;
  bool has_indices_strides;
  int64_t n_indices_strides;
  const int64_t *indices_strides;
  QvBuffer indices_buffer;
  bool is_canonical;
} QvSparseCOO;

/** CSR or CSC: SparseMatrixIndexCSX, whose compressedAxis the format says. */
typedef struct QvSparseCSX {
  QvIntType indptr_type;
  QvBuffer indptr_buffer;
  QvIntType indices_type;
  QvBuffer indices_buffer;
} QvSparseCSX;

typedef struct QvSparseCSF {
  QvIntType indptr_type;
  int64_t n_indptr_buffers;
  const QvBuffer *indptr_buffers;
  QvIntType indices_type;
  int64_t n_indices_buffers;
  const QvBuffer *indices_buffers;
  int64_t n_axis_order;
  const int32_t *axis_order;
} QvSparseCSF;

typedef struct QvSparseTensorMeta {
  QvType type;
  int64_t ndim;
  const QvTensorDim *shape;
  int64_t non_zero_length;
  QvSparseFormat format; /**< the index: COO, CSR/CSC (CSX), CSF */
  union {
    QvSparseCOO coo;
    QvSparseCSX csx; /**< CSR and CSC */
    QvSparseCSF csf;
  } index;
  QvBuffer data;
} QvSparseTensorMeta;

typedef struct QvMessage {
  QvMetadataVersion version;
  QvMessageHeader header_type;
  union {
    QvSchema schema;
    QvRecordBatch record_batch;
    QvDictionaryBatch dictionary_batch;
    QvTensorMeta tensor;
    QvSparseTensorMeta sparse_tensor;
  } header;
  int64_t body_length;
  int64_t n_metadata;
  const QvKeyValue *metadata;
  void *private_data; /**< arena; owned */
} QvMessage;

typedef struct QvBlock {
  int64_t offset;
  int32_t meta_data_length;
  int64_t body_length;
} QvBlock;

typedef struct QvFooter {
  QvMetadataVersion version;
  bool has_schema;
  QvSchema schema;
  int64_t n_dictionaries;
  const QvBlock *dictionaries;
  int64_t n_record_batches;
  const QvBlock *record_batches;
  int64_t n_metadata;
  const QvKeyValue *metadata;
  void *private_data;
} QvFooter;

/** NULL or a zeroed struct: every default. */
typedef struct QvDecodeOptions {
  size_t struct_size;  /**< 0 or sizeof(QvDecodeOptions) (quiver/common.h) */
  unsigned max_depth;  /**< FlatBuffers table nesting; 0 = 64 */
  size_t max_tables;   /**< tables + strings visited (per reference); 0 = 1,000,000 */
} QvDecodeOptions;

/** Verifies then decodes a Message FlatBuffer. On error *out is left empty
 * (safe to release) and `error` names the offending field. Semantic checks:
 * known union tags and enum values, required fields, type parameters (Int
 * widths, Decimal width and precision, Time unit vs width, ...), non-negative
 * lengths, sizes and buffer offsets, null_count <= length. QV_ELIMIT when
 * the options' limits are exceeded, when Field.children nest deeper than 64,
 * or when the decoded structs would exceed 16 times the input size plus
 * 64 KiB (possible only when sub-objects are shared by many references). */
QV_API QvStatus qv_message_decode(const uint8_t *buf, size_t size, const QvDecodeOptions *options,
                           QvMessage *out, QvError *error);
/** Frees what qv_message_decode allocated; the struct is zeroed. */
QV_API void qv_message_reset(QvMessage *msg);

/** Encodes to a FlatBuffer; *out is the library's, qv_free it (NULL on error).
 * Deterministic: equal messages give identical bytes. Values are written as
 * given (so invalid metadata can be produced on purpose); QV_EARG for what
 * cannot be encoded at all (an unknown header, Type or sparse index tag, a
 * negative count, a NULL array with a positive count) and QV_ELIMIT for
 * fields nested deeper than the decoder accepts. */
QV_API QvStatus qv_message_encode(const QvMessage *msg, uint8_t **out, size_t *out_size, QvError *error);

/** Decodes an Arrow file footer (Footer FlatBuffer) with the limits of `options`. */
QV_API QvStatus qv_footer_decode(const uint8_t *buf, size_t size, const QvDecodeOptions *options,
                          QvFooter *out, QvError *error);
/** Frees what qv_footer_decode allocated; the struct is zeroed. */
QV_API void qv_footer_reset(QvFooter *footer);
/** Encodes a footer; *out is the library's, qv_free it (as qv_message_encode). */
QV_API QvStatus qv_footer_encode(const QvFooter *footer, uint8_t **out, size_t *out_size,
                          QvError *error);

/** Deep equality of metadata values (never pointers). An absent string differs
 * from an empty one and has_* flags count (the encoder writes them
 * differently); members a struct marks unused are ignored (index_type when
 * !has_index_type, method when compression is NONE, private_data). On a
 * difference, the path of the first differing field ("Message.header(Schema)
 * .fields[1].type.unit") is written to `where` when it is not NULL. */
QV_API bool qv_type_equal(const QvType *a, const QvType *b);
/** As qv_type_equal, for schemas; the first difference's path in `where`. */
QV_API bool qv_schema_equal(const QvSchema *a, const QvSchema *b, char *where, size_t where_size);
/** As qv_type_equal, for messages; the first difference's path in `where`. */
QV_API bool qv_message_equal(const QvMessage *a, const QvMessage *b, char *where, size_t where_size);
/** As qv_type_equal, for footers; the first difference's path in `where`. */
QV_API bool qv_footer_equal(const QvFooter *a, const QvFooter *b, char *where, size_t where_size);

/** Names for display: "Schema", "Int", "V5", ... ("?" when unknown). */
QV_API const char *qv_header_type_name(QvMessageHeader header_type);
/** The Schema.fbs name of a type id ("Int", "Utf8", ...). */
QV_API const char *qv_type_id_name(QvTypeId id);
/** The name of a metadata version ("V4", "V5"). */
QV_API const char *qv_metadata_version_name(QvMetadataVersion version);
/** Writes a short human description of a type ("int32", "timestamp[us, tz=UTC]",
 * "float64", "list", "decimal128(10, 2)") into buf. Returns buf. */
QV_API char *qv_type_describe(const QvType *type, char *buf, size_t size);

#ifdef __cplusplus
}
#endif

#endif
