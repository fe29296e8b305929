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
  QV_ARROW_NONE = 0,
  QV_ARROW_INT8,
  QV_ARROW_INT16,
  QV_ARROW_INT32,
  QV_ARROW_INT64,
  QV_ARROW_UINT8,
  QV_ARROW_UINT16,
  QV_ARROW_UINT32,
  QV_ARROW_UINT64,
  QV_ARROW_FLOAT16,
  QV_ARROW_FLOAT32,
  QV_ARROW_FLOAT64,
  QV_ARROW_NUMERIC_END, /**< one past the numeric types; also QV_ARROW_NULL */
  QV_ARROW_NULL = QV_ARROW_NUMERIC_END,
  QV_ARROW_BOOL,
  QV_ARROW_DECIMAL32,
  QV_ARROW_DECIMAL64,
  QV_ARROW_DECIMAL128,
  QV_ARROW_DECIMAL256,
  QV_ARROW_DATE32,
  QV_ARROW_DATE64,
  QV_ARROW_TIME32,
  QV_ARROW_TIME64,
  QV_ARROW_TIMESTAMP,
  QV_ARROW_DURATION,
  QV_ARROW_INTERVAL_MONTHS,
  QV_ARROW_INTERVAL_DAY_TIME,
  QV_ARROW_INTERVAL_MONTH_DAY_NANO,
  QV_ARROW_BINARY,
  QV_ARROW_STRING,
  QV_ARROW_LARGE_BINARY,
  QV_ARROW_LARGE_STRING,
  QV_ARROW_BINARY_VIEW,
  QV_ARROW_STRING_VIEW,
  QV_ARROW_FIXED_SIZE_BINARY,
  QV_ARROW_LIST,
  QV_ARROW_LARGE_LIST,
  QV_ARROW_LIST_VIEW,
  QV_ARROW_LARGE_LIST_VIEW,
  QV_ARROW_FIXED_SIZE_LIST,
  QV_ARROW_STRUCT,
  QV_ARROW_MAP,
  QV_ARROW_SPARSE_UNION,
  QV_ARROW_DENSE_UNION,
  QV_ARROW_RUN_END_ENCODED,
  QV_ARROW_DICTIONARY,
  QV_ARROW_TYPE_COUNT
} QvArrowType;

/** Time units of Arrow's time32/64, timestamp and duration types, with the
 * values of Schema.fbs's TimeUnit. */
typedef enum QvTimeUnit {
  QV_TIME_SECOND = 0,
  QV_TIME_MILLISECOND = 1,
  QV_TIME_MICROSECOND = 2,
  QV_TIME_NANOSECOND = 3
} QvTimeUnit;

/** Byte order. Zero is "the host's" (so a zeroed options struct writes
 * native bytes); decoded metadata always says LITTLE or BIG (Schema.fbs's
 * Endianness numbers, 0 and 1, are mapped by the decoder and encoder, as
 * the compression codecs are). */
typedef enum QvEndianness {
  QV_ENDIAN_NATIVE = 0,
  QV_ENDIAN_LITTLE = 1,
  QV_ENDIAN_BIG = 2
} QvEndianness;

/** Sparse tensor formats, in memory (quiver/sparse.h) and in SparseTensor
 * metadata (quiver/format.h: the SparseTensorIndex union's CSX member with
 * compressedAxis Row is CSR, Column is CSC; the decoder and encoder map). */
typedef enum QvSparseFormat {
  QV_SPARSE_COO = 1,
  QV_SPARSE_CSR = 2,
  QV_SPARSE_CSC = 3,
  QV_SPARSE_CSF = 4
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
