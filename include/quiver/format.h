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
  QV_METADATA_V1 = 0, /**< Arrow 0.1.0 (2016) */
  QV_METADATA_V2, /**< Arrow 0.2.0: added Struct and Union */
  QV_METADATA_V3, /**< Arrow 0.3.0 to 0.7.1 */
  QV_METADATA_V4, /**< Arrow 0.8.0 and later, before 1.0.0 */
  QV_METADATA_V5 /**< Arrow 1.0.0 and later: unions have no validity bitmap */
} QvMetadataVersion;
/** MessageHeader union tags */
typedef enum QvMessageHeader {
  QV_HEADER_NONE = 0, /**< no header (not valid in a message) */
  QV_HEADER_SCHEMA = 1, /**< a Schema: the stream's first message */
  QV_HEADER_DICTIONARY_BATCH = 2, /**< a DictionaryBatch: the values of one dictionary */
  QV_HEADER_RECORD_BATCH = 3, /**< a RecordBatch: rows of the schema's columns */
  QV_HEADER_TENSOR = 4, /**< a dense Tensor */
  QV_HEADER_SPARSE_TENSOR = 5 /**< a SparseTensor */
} QvMessageHeader;
/** Type union tags */
typedef enum QvTypeId {
  QV_TYPE_NONE = 0, /**< no type (not valid in a field) */
  QV_TYPE_NULL = 1, /**< every value null, no buffers */
  QV_TYPE_INT = 2, /**< integer: QvType::u.int_ gives width and signedness */
  QV_TYPE_FLOATING_POINT = 3, /**< float: u.floating_point.precision */
  QV_TYPE_BINARY = 4, /**< bytes with int32 offsets */
  QV_TYPE_UTF8 = 5, /**< UTF-8 string with int32 offsets */
  QV_TYPE_BOOL = 6, /**< one bit per value */
  QV_TYPE_DECIMAL = 7, /**< decimal: u.decimal (precision, scale, 32/64/128/256-bit width) */
  QV_TYPE_DATE = 8, /**< date: u.date.unit */
  QV_TYPE_TIME = 9, /**< time of day: u.time (unit, 32 or 64-bit width) */
  QV_TYPE_TIMESTAMP = 10, /**< instant: u.timestamp (unit, optional timezone) */
  QV_TYPE_INTERVAL = 11, /**< calendar interval: u.interval.unit */
  QV_TYPE_LIST = 12, /**< list with int32 offsets, one child */
  QV_TYPE_STRUCT = 13, /**< struct: one child per member */
  QV_TYPE_UNION = 14, /**< union: u.union_ (mode, type ids) */
  QV_TYPE_FIXED_SIZE_BINARY = 15, /**< u.fixed_size_binary.byte_width bytes per value */
  QV_TYPE_FIXED_SIZE_LIST = 16, /**< u.fixed_size_list.list_size child values per value */
  QV_TYPE_MAP = 17, /**< list of key/value structs: u.map.keys_sorted */
  QV_TYPE_DURATION = 18, /**< elapsed time: u.duration.unit, int64 */
  QV_TYPE_LARGE_BINARY = 19, /**< bytes with int64 offsets */
  QV_TYPE_LARGE_UTF8 = 20, /**< UTF-8 string with int64 offsets */
  QV_TYPE_LARGE_LIST = 21, /**< list with int64 offsets */
  QV_TYPE_RUN_END_ENCODED = 22, /**< run ends child and values child */
  QV_TYPE_BINARY_VIEW = 23, /**< bytes as 16-byte views into variadic buffers */
  QV_TYPE_UTF8_VIEW = 24, /**< UTF-8 string as 16-byte views into variadic buffers */
  QV_TYPE_LIST_VIEW = 25, /**< list with int32 offsets and sizes */
  QV_TYPE_LARGE_LIST_VIEW = 26, /**< list with int64 offsets and sizes */
  QV_TYPE_ID_COUNT = 27 /**< the number of ids above, not a type */
} QvTypeId;

/** The enums of Schema.fbs and Message.fbs, with the spec's numbers. Time
 * units are QvTimeUnit and byte order QvEndianness (quiver/common.h). */
typedef enum QvPrecision {
  QV_PRECISION_HALF = 0, /**< IEEE 754 binary16 */
  QV_PRECISION_SINGLE = 1, /**< IEEE 754 binary32 */
  QV_PRECISION_DOUBLE = 2 /**< IEEE 754 binary64 */
} QvPrecision;
/** Unit of a Date type (Schema.fbs DateUnit). */
typedef enum QvDateUnit {
  QV_DATE_DAY = 0,        /**< int32 days since 1970-01-01 */
  QV_DATE_MILLISECOND = 1 /**< int64 milliseconds since 1970-01-01 */
} QvDateUnit;
/** Unit of an Interval type (Schema.fbs IntervalUnit). */
typedef enum QvIntervalUnit {
  QV_INTERVAL_YEAR_MONTH = 0, /**< int32 months */
  QV_INTERVAL_DAY_TIME = 1, /**< int32 days and int32 milliseconds */
  QV_INTERVAL_MONTH_DAY_NANO = 2 /**< int32 months, int32 days and int64 nanoseconds */
} QvIntervalUnit;
/** Layout of a Union type (Schema.fbs UnionMode). */
typedef enum QvUnionMode {
  QV_UNION_SPARSE = 0, /**< every child as long as the union, type ids only */
  QV_UNION_DENSE = 1   /**< type ids plus int32 offsets into the children */
} QvUnionMode;
/** Schema.features entries (int64 in the spec: the array stays int64_t). */
enum {
  QV_FEATURE_UNUSED = 0, /**< the spec's placeholder for "no feature" */
  QV_FEATURE_DICTIONARY_REPLACEMENT = 1, /**< the stream may send a full dictionary again for an id already seen, replacing it */
  QV_FEATURE_COMPRESSED_BODY = 2 /**< record batch bodies may be compressed */
};
/** DictionaryKind: how a dictionary is stored. */
typedef enum QvDictionaryKind {
  QV_DICTIONARY_KIND_DENSE_ARRAY = 0 /**< an array of the values (the only kind) */
} QvDictionaryKind;
/** BodyCompressionMethod (the codec is a QvCompression, quiver/compression.h) */
typedef enum QvCompressionMethod {
  /** each buffer compressed on its own, after an int64 uncompressed length
   * (-1: stored uncompressed) */
  QV_COMPRESSION_METHOD_BUFFER = 0
} QvCompressionMethod;

/** One custom_metadata entry (Schema.fbs KeyValue). Decoded strings are
 * NUL-terminated copies; the encoder uses only the lengths. */
typedef struct QvKeyValue {
  const char *key;   /**< NULL when absent */
  size_t key_len;    /**< bytes of `key`, without a NUL */
  const char *value; /**< NULL when absent */
  size_t value_len;  /**< bytes of `value`, without a NUL */
} QvKeyValue;

/** The parameters of an Int type. */
typedef struct QvIntType {
  int32_t bit_width; /**< 8, 16, 32 or 64 */
  bool is_signed;    /**< two's complement when true, unsigned otherwise */
} QvIntType;

/** A member of the Type union, with its parameters. */
typedef struct QvType {
  QvTypeId id; /**< which member of the union; selects the member of `u` that applies */
  /** The parameters of the type `id` names (none for Null, Binary, Utf8,
   * Bool, List, Struct, RunEndEncoded and the large and view variants). */
  union {
    QvIntType int_; /**< Int */
    struct { QvPrecision precision; } floating_point; /**< FloatingPoint */
    /** Decimal: `precision` decimal digits, `scale` of them after the point,
     * values `bit_width` (32, 64, 128 or 256) bits wide */
    struct { int32_t precision, scale, bit_width; } decimal;
    struct { QvDateUnit unit; } date; /**< Date */
    struct { QvTimeUnit unit; int32_t bit_width; } time; /**< Time: int32 for s and ms, int64 for us and ns */
    /** Timestamp: `timezone` (timezone_len bytes; NULL: none) as the
     * Olson name or "+HH:MM" */
    struct { QvTimeUnit unit; const char *timezone; size_t timezone_len; } timestamp;
    struct { QvIntervalUnit unit; } interval; /**< Interval */
    struct { QvTimeUnit unit; } duration; /**< Duration */
    struct { int32_t byte_width; } fixed_size_binary; /**< FixedSizeBinary: bytes per value */
    struct { int32_t list_size; } fixed_size_list; /**< FixedSizeList: child values per list */
    struct { bool keys_sorted; } map; /**< Map: whether each map's keys are sorted */
    /** Union: `type_ids` (n_type_ids entries, when has_type_ids) maps child
     * i to its type id; absent, child i has id i */
    struct { QvUnionMode mode; bool has_type_ids; int64_t n_type_ids; const int32_t *type_ids; } union_;
  } u;
} QvType;

/** A field's dictionary encoding (Schema.fbs DictionaryEncoding): the
 * field's type is that of the dictionary values, its data are indices. */
typedef struct QvDictionaryEncoding {
  int64_t id;          /**< the dictionary's id, matched by DictionaryBatch.id */
  bool has_index_type; /**< absent means signed 32-bit */
  QvIntType index_type; /**< the indices' integer type, when has_index_type */
  bool is_ordered;     /**< the dictionary's order is meaningful (sorting by index sorts by value) */
  QvDictionaryKind kind; /**< DENSE_ARRAY */
} QvDictionaryEncoding;

/** A column or a child of a nested type (Schema.fbs Field). */
typedef struct QvField {
  const char *name; /**< NULL when absent */
  size_t name_len;  /**< bytes of `name`, without a NUL */
  bool nullable;    /**< whether values may be null */
  QvType type;      /**< the logical type (of the values, when dictionary-encoded) */
  const QvDictionaryEncoding *dictionary; /**< NULL when not dictionary-encoded */
  int64_t n_children;              /**< entries of `children` */
  const struct QvField *children;  /**< the child fields of a nested type, in order */
  int64_t n_metadata;              /**< entries of `metadata` */
  const QvKeyValue *metadata;      /**< the field's custom_metadata */
} QvField;

/** The columns of a stream or file (Schema.fbs Schema). */
typedef struct QvSchema {
  QvEndianness endianness; /**< LITTLE or BIG, never NATIVE */
  int64_t n_fields;           /**< entries of `fields` */
  const QvField *fields;      /**< the top-level fields (columns), in order */
  int64_t n_metadata;         /**< entries of `metadata` */
  const QvKeyValue *metadata; /**< the schema's custom_metadata */
  int64_t n_features;         /**< entries of `features` */
  const int64_t *features;    /**< QV_FEATURE_* values the writer declares it uses */
} QvSchema;

/** Where a buffer lies in a message body (Schema.fbs Buffer). */
typedef struct QvBuffer {
  int64_t offset; /**< bytes from the start of the body */
  int64_t length; /**< bytes of the buffer (compressed size when compressed) */
} QvBuffer;

/** One array's counts in a record batch (Message.fbs FieldNode). */
typedef struct QvFieldNode {
  int64_t length;     /**< number of values (slots) */
  int64_t null_count; /**< number of null values, 0..length; -1: unknown (apache-arrow JS writes it) */
} QvFieldNode;

/** A RecordBatch header: the positions of the columns' buffers in the body. */
typedef struct QvRecordBatch {
  int64_t length;           /**< number of rows */
  int64_t n_nodes;          /**< entries of `nodes` */
  const QvFieldNode *nodes; /**< one per array, fields depth-first (a parent before its children) */
  int64_t n_buffers;        /**< entries of `buffers` */
  const QvBuffer *buffers;  /**< every array's buffers, in the order of `nodes` */
  /** NONE: no BodyCompression table; else its codec (the .fbs CompressionType
   * numbers are mapped by the decoder and encoder) */
  QvCompression compression;
  QvCompressionMethod method; /**< how `compression` applies; ignored when it is NONE */
  bool has_variadic_buffer_counts; /**< the variadicBufferCounts vector is present */
  int64_t n_variadic_buffer_counts; /**< entries of `variadic_buffer_counts` */
  /** for each view-typed array (BinaryView, Utf8View), in node order, the
   * number of its variadic data buffers */
  const int64_t *variadic_buffer_counts;
} QvRecordBatch;

/** A DictionaryBatch header: the values of dictionary `id`. */
typedef struct QvDictionaryBatch {
  int64_t id;         /**< the QvDictionaryEncoding::id it belongs to */
  QvRecordBatch data; /**< the values, as a batch with one column */
  bool is_delta;      /**< append to the dictionary read so far instead of replacing it */
} QvDictionaryBatch;

/** One dimension of a tensor (Tensor.fbs TensorDim). */
typedef struct QvTensorDim {
  int64_t size;     /**< number of elements along the dimension */
  const char *name; /**< NULL when absent */
  size_t name_len;  /**< bytes of `name`, without a NUL */
} QvTensorDim;

/** A Tensor header (Tensor.fbs Tensor): a dense array in the body. */
typedef struct QvTensorMeta {
  QvType type;              /**< the value type (Int, FloatingPoint, ...) */
  int64_t ndim;             /**< entries of `shape` */
  const QvTensorDim *shape; /**< the dimensions, outermost first */
  bool has_strides;         /**< the strides vector is present (absent: row-major) */
  int64_t n_strides;        /**< entries of `strides` (ndim when valid) */
  const int64_t *strides;   /**< bytes between consecutive elements along each dimension */
  QvBuffer data;            /**< the values in the body */
} QvTensorMeta;

/** A COO index (SparseTensor.fbs SparseTensorIndexCOO): an nnz x ndim
 * integer matrix of coordinates. */
typedef struct QvSparseCOO {
  QvIntType indices_type;         /**< the coordinates' integer type */
  bool has_indices_strides;       /**< the indicesStrides vector is present (absent: row-major) */
  int64_t n_indices_strides;      /**< entries of `indices_strides` (2 when valid) */
  const int64_t *indices_strides; /**< bytes between consecutive rows and columns of the matrix */
  QvBuffer indices_buffer;        /**< the coordinate matrix in the body */
  bool is_canonical;              /**< coordinates sorted lexicographically, without duplicates */
} QvSparseCOO;

/** CSR or CSC: SparseMatrixIndexCSX, whose compressedAxis the format says. */
typedef struct QvSparseCSX {
  QvIntType indptr_type;   /**< the integer type of `indptr` */
  QvBuffer indptr_buffer;  /**< indptr: for each row (CSR) or column (CSC), where its entries start in indices, plus the end */
  QvIntType indices_type;  /**< the integer type of `indices` */
  QvBuffer indices_buffer; /**< indices: the other coordinate of each non-zero */
} QvSparseCSX;

/** A CSF index (SparseTensor.fbs SparseTensorIndexCSF): a tree of
 * coordinates, one level per dimension. */
typedef struct QvSparseCSF {
  QvIntType indptr_type;           /**< the integer type of every indptr buffer */
  int64_t n_indptr_buffers;        /**< entries of `indptr_buffers` (ndim - 1 when valid) */
  const QvBuffer *indptr_buffers;  /**< per level but the last, where its children start */
  QvIntType indices_type;          /**< the integer type of every indices buffer */
  int64_t n_indices_buffers;       /**< entries of `indices_buffers` (ndim when valid) */
  const QvBuffer *indices_buffers; /**< per level, the coordinates of its nodes */
  int64_t n_axis_order;            /**< entries of `axis_order` (ndim when valid) */
  const int32_t *axis_order;       /**< the dimension each level stands for, outermost first */
} QvSparseCSF;

/** A SparseTensor header (SparseTensor.fbs SparseTensor). */
typedef struct QvSparseTensorMeta {
  QvType type;              /**< the value type */
  int64_t ndim;             /**< entries of `shape` */
  const QvTensorDim *shape; /**< the dense shape, outermost first */
  int64_t non_zero_length;  /**< number of stored values (nnz) */
  QvSparseFormat format; /**< the index: COO, CSR/CSC (CSX), CSF */
  /** the index, the member `format` selects */
  union {
    QvSparseCOO coo; /**< COO */
    QvSparseCSX csx; /**< CSR and CSC */
    QvSparseCSF csf; /**< CSF */
  } index;
  QvBuffer data;   /**< the non-zero values in the body, in index order */
} QvSparseTensorMeta;

/** A decoded Message FlatBuffer (Message.fbs Message). */
typedef struct QvMessage {
  QvMetadataVersion version;   /**< the writer's metadata version */
  QvMessageHeader header_type; /**< which member of `header` applies */
  /** the header, the member header_type selects */
  union {
    QvSchema schema;                     /**< QV_HEADER_SCHEMA */
    QvRecordBatch record_batch;          /**< QV_HEADER_RECORD_BATCH */
    QvDictionaryBatch dictionary_batch;  /**< QV_HEADER_DICTIONARY_BATCH */
    QvTensorMeta tensor;                 /**< QV_HEADER_TENSOR */
    QvSparseTensorMeta sparse_tensor;    /**< QV_HEADER_SPARSE_TENSOR */
  } header;
  int64_t body_length;        /**< bytes of the body that follows the metadata */
  int64_t n_metadata;         /**< entries of `metadata` */
  const QvKeyValue *metadata; /**< the message's custom_metadata */
  void *private_data; /**< arena; owned */
} QvMessage;

/** Where one message lies in an Arrow file (File.fbs Block). */
typedef struct QvBlock {
  int64_t offset;           /**< bytes from the start of the file to the message's prefix */
  int32_t meta_data_length; /**< bytes of prefix, metadata and padding */
  int64_t body_length;      /**< bytes of the body after them */
} QvBlock;

/** A decoded Arrow file footer (File.fbs Footer). */
typedef struct QvFooter {
  QvMetadataVersion version;     /**< the writer's metadata version */
  bool has_schema;               /**< the footer holds a schema (required by the spec) */
  QvSchema schema;               /**< the file's schema, when has_schema */
  int64_t n_dictionaries;        /**< entries of `dictionaries` */
  const QvBlock *dictionaries;   /**< the DictionaryBatch messages, in file order */
  int64_t n_record_batches;      /**< entries of `record_batches` */
  const QvBlock *record_batches; /**< the RecordBatch messages, in file order */
  int64_t n_metadata;            /**< entries of `metadata` */
  const QvKeyValue *metadata;    /**< the footer's custom_metadata */
  void *private_data;            /**< arena; owned (released by qv_footer_reset) */
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
