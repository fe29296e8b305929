/** @file
 * quiver: what every public header shares.
 *
 * QV_API marks the library's public functions and data. The library is
 * built with -fvisibility=hidden, so only what carries QV_API is exported
 * from libquiver.so; everything else is internal (and, in libquiver.a,
 * named qvi_* so it cannot clash with a program's own symbols).
 *
 * Conventions used by every header:
 *  - Every fallible function returns a QvStatus (quiver/error.h) and takes an
 *    optional `QvError *` for the message.
 *  - Names: public functions are qv_*, types Qv*, macros QV_*; the
 *    library's internal functions are qvi_*, so a symbol's name says
 *    whether it is API.
 *  - Caller-allocated structs: qv_X_init(...) fills one, qv_X_reset(...)
 *    releases what it holds and zeroes it (safe on a zeroed struct and on
 *    NULL). Library-allocated objects: qv_X_new(&obj, ...) and qv_X_free(obj)
 *    (NULL is a no-op). Reference-counted objects (QvOwner, QvSource) add a
 *    reference with qv_X_retain; qv_X_free drops the caller's reference.
 *  - Options structs: NULL or a zeroed struct means "all defaults"; every
 *    options struct begins with `size_t struct_size`, which is 0 or
 *    sizeof(the struct as the caller compiled it), so later versions can
 *    add fields at the end without breaking callers built against an older
 *    header: the library reads the caller's bytes up to struct_size and
 *    defaults the rest. Zero the whole struct before setting fields
 *    (memset, or `QvXxxOptions o = {0};` then assignments), so that its
 *    padding, where a later member may lie, reads as a default too.
 *  - Memory the library hands out (encoded bytes, text, a memory sink's
 *    bytes) is freed with qv_free.
 *  - Iteration ends with the status QV_EOS (not an error). */
#ifndef QUIVER_COMMON_H
#define QUIVER_COMMON_H

#if defined(QV_BUILDING_LIBRARY) && defined(__GNUC__)
#define QV_API __attribute__((visibility("default")))
#else
#define QV_API
#endif

#include <stddef.h>

/** Status codes and the error struct: quiver/error.h. */
typedef int QvStatus;
/** The error struct (quiver/error.h), declared here for the prototypes. */
typedef struct QvError QvError;

/* ---- the shared vocabulary: enums every layer speaks
 *
 * Three type enums serve three levels, and only these three:
 *  - QvArrowType (here): a logical Arrow data type, as the C Data Interface
 *    format string names it ("i", "tsu:UTC" -> QV_ARROW_INT32,
 *    QV_ARROW_TIMESTAMP). A tensor's value type is one of its numeric
 *    members, which come first.
 *  - QvTypeId (quiver/format.h): the tag of Schema.fbs's Type union in IPC
 *    metadata, whose parameters (bit width, signedness, unit) live beside
 *    it in a QvType; Int{32, signed} there is QV_ARROW_INT32 here.
 *  - QvLayout (quiver/array.h): a physical buffer layout (fixed width,
 *    offsets + data, ...), which several logical types share. */

/** Logical data types. The numeric members, the value types of tensors and
 * sparse tensors, come first and in this order (integers signed, then
 * unsigned, then floats), from QV_ARROW_INT8 to QV_ARROW_NUMERIC_END - 1.
 * QV_ARROW_NONE (0) is no type: in an options struct it means "the
 * default", so a zeroed struct is all defaults. */
typedef enum QvArrowType {
  QV_ARROW_NONE = 0, /**< no type; in options, "the default" */
  QV_ARROW_INT8, /**< signed 8-bit integer ("c") */
  QV_ARROW_INT16, /**< signed 16-bit integer ("s") */
  QV_ARROW_INT32, /**< signed 32-bit integer ("i") */
  QV_ARROW_INT64, /**< signed 64-bit integer ("l") */
  QV_ARROW_UINT8, /**< unsigned 8-bit integer ("C") */
  QV_ARROW_UINT16, /**< unsigned 16-bit integer ("S") */
  QV_ARROW_UINT32, /**< unsigned 32-bit integer ("I") */
  QV_ARROW_UINT64, /**< unsigned 64-bit integer ("L") */
  QV_ARROW_FLOAT16, /**< IEEE 754 binary16 ("e") */
  QV_ARROW_FLOAT32, /**< IEEE 754 binary32 ("f") */
  QV_ARROW_FLOAT64, /**< IEEE 754 binary64 ("g") */
  QV_ARROW_NUMERIC_END, /**< one past the numeric types; also QV_ARROW_NULL */
  QV_ARROW_NULL = QV_ARROW_NUMERIC_END, /**< all values null, no buffers ("n") */
  QV_ARROW_BOOL, /**< one bit per value ("b") */
  QV_ARROW_DECIMAL32, /**< 32-bit decimal ("d:P,S,32") */
  QV_ARROW_DECIMAL64, /**< 64-bit decimal ("d:P,S,64") */
  QV_ARROW_DECIMAL128, /**< 128-bit decimal ("d:P,S") */
  QV_ARROW_DECIMAL256, /**< 256-bit decimal ("d:P,S,256") */
  QV_ARROW_DATE32, /**< int32 days since 1970-01-01 ("tdD") */
  QV_ARROW_DATE64, /**< int64 milliseconds since 1970-01-01 ("tdm") */
  QV_ARROW_TIME32, /**< int32 time of day in s or ms ("tts", "ttm") */
  QV_ARROW_TIME64, /**< int64 time of day in us or ns ("ttu", "ttn") */
  QV_ARROW_TIMESTAMP, /**< int64 since the epoch, with a unit and optional timezone ("tsu:UTC") */
  QV_ARROW_DURATION, /**< int64 elapsed time with a unit ("tDs" ... "tDn") */
  QV_ARROW_INTERVAL_MONTHS, /**< int32 months ("tiM") */
  QV_ARROW_INTERVAL_DAY_TIME, /**< int32 days and int32 milliseconds ("tiD") */
  QV_ARROW_INTERVAL_MONTH_DAY_NANO, /**< int32 months, int32 days, int64 nanoseconds ("tin") */
  QV_ARROW_BINARY, /**< bytes, int32 offsets ("z") */
  QV_ARROW_STRING, /**< UTF-8, int32 offsets ("u") */
  QV_ARROW_LARGE_BINARY, /**< bytes, int64 offsets ("Z") */
  QV_ARROW_LARGE_STRING, /**< UTF-8, int64 offsets ("U") */
  QV_ARROW_BINARY_VIEW, /**< bytes as 16-byte views ("vz") */
  QV_ARROW_STRING_VIEW, /**< UTF-8 as 16-byte views ("vu") */
  QV_ARROW_FIXED_SIZE_BINARY, /**< N bytes per value ("w:N") */
  QV_ARROW_LIST, /**< list, int32 offsets ("+l") */
  QV_ARROW_LARGE_LIST, /**< list, int64 offsets ("+L") */
  QV_ARROW_LIST_VIEW, /**< list, int32 offsets and sizes ("+vl") */
  QV_ARROW_LARGE_LIST_VIEW, /**< list, int64 offsets and sizes ("+vL") */
  QV_ARROW_FIXED_SIZE_LIST, /**< N child values per list ("+w:N") */
  QV_ARROW_STRUCT, /**< one child per member ("+s") */
  QV_ARROW_MAP, /**< list of key/value structs ("+m") */
  QV_ARROW_SPARSE_UNION, /**< sparse union ("+us:...") */
  QV_ARROW_DENSE_UNION, /**< dense union, with int32 offsets ("+ud:...") */
  QV_ARROW_RUN_END_ENCODED, /**< run ends and values children ("+r") */
  QV_ARROW_DICTIONARY, /**< dictionary-encoded: integer indices into ArrowSchema::dictionary */
  QV_ARROW_TYPE_COUNT /**< the number of members above, not a type */
} QvArrowType;

/** Time units of Arrow's time32/64, timestamp and duration types, with the
 * values of Schema.fbs's TimeUnit. */
typedef enum QvTimeUnit {
  QV_TIME_SECOND = 0, /**< seconds */
  QV_TIME_MILLISECOND = 1, /**< milliseconds (1e-3 s) */
  QV_TIME_MICROSECOND = 2, /**< microseconds (1e-6 s) */
  QV_TIME_NANOSECOND = 3 /**< nanoseconds (1e-9 s) */
} QvTimeUnit;

/** Byte order. Zero is "the host's" (so a zeroed options struct writes
 * native bytes); decoded metadata always says LITTLE or BIG (Schema.fbs's
 * Endianness numbers, 0 and 1, are mapped by the decoder and encoder, as
 * the compression codecs are). */
typedef enum QvEndianness {
  QV_ENDIAN_NATIVE = 0, /**< the host's byte order (options only) */
  QV_ENDIAN_LITTLE = 1, /**< least significant byte first */
  QV_ENDIAN_BIG = 2 /**< most significant byte first */
} QvEndianness;

/** Sparse tensor formats, in memory (quiver/sparse.h) and in SparseTensor
 * metadata (quiver/format.h: the SparseTensorIndex union's CSX member with
 * compressedAxis Row is CSR, Column is CSC; the decoder and encoder map). */
typedef enum QvSparseFormat {
  QV_SPARSE_COO = 1, /**< coordinates: an nnz x ndim index matrix */
  QV_SPARSE_CSR = 2, /**< compressed sparse rows (2-D) */
  QV_SPARSE_CSC = 3, /**< compressed sparse columns (2-D) */
  QV_SPARSE_CSF = 4 /**< compressed sparse fiber (any ndim) */
} QvSparseFormat;

#ifdef __cplusplus
extern "C" {
#endif

/** "int8" ... "float64", "utf8", "timestamp", "dictionary", ... ("?" when
 * out of range). */
QV_API const char *qv_arrow_type_name(QvArrowType type);
/** Bytes per value of a numeric type; 0 for every other type. */
QV_API size_t qv_arrow_type_size(QvArrowType type);
/** Parses a numeric type's name ("int8" ... "float64"); QV_EINVAL for any
 * other name, naming the ones it takes. */
QV_API QvStatus qv_arrow_type_parse(const char *name, QvArrowType *out, QvError *error);

/** "coo", "csr", "csc", "csf" ("?" when out of range). */
QV_API const char *qv_sparse_format_name(QvSparseFormat format);
/** Parses those names, in either case ("CSR" too); QV_EINVAL otherwise. */
QV_API QvStatus qv_sparse_format_parse(const char *name, QvSparseFormat *out, QvError *error);

/** Frees memory the library handed out: encoded metadata, formatted text,
 * a memory sink's bytes, qv_aligned_alloc blocks. NULL is a no-op. */
QV_API void qv_free(void *p);

#ifdef __cplusplus
}
#endif

#endif
