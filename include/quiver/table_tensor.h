/** @file
 * quiver: tables as tensors, as Arrow C++'s RecordBatch::ToTensor /
 * Table::ToTensor and pyarrow's RecordBatch.to_tensor make them.
 *
 * The numeric columns of a table (one or several record batches sharing a
 * schema) become one 2-D tensor [rows, columns], row-major or column-major.
 * The rules are Arrow C++'s:
 *  - a table without columns is refused;
 *  - a null in any chosen column is refused unless null_to_nan, which writes
 *    NaN for it and makes an integer result a float one (int8/uint8/int16/
 *    uint16 -> float32, wider -> float64, as merging the type with float32);
 *  - every column must be an integer or a floating point type (bool,
 *    decimals, temporal types, strings, dictionaries, nested types are
 *    refused naming the column and its type);
 *  - the value type is the columns' types merged left to right with integer
 *    widening, sign promotion and integer-to-float promotion: int16 + int32
 *    = int32; uint16 + int16 = int32 (the unsigned type widened to a signed
 *    one that holds it); uint8 + int32 = int32; int8/int16 + float32 =
 *    float32; int32/int64 + float32 = float64; any integer + float64 =
 *    float64; float32 + float64 = float64;
 *  - float16 mixes with no other type (QV_ENOTSUP, "Casting from or to
 *    halffloat is not supported.").
 * Decisions where Arrow C++ is silent or undefined, documented here:
 *  - uint64 merged with a signed integer has no common integer type: refused
 *    (QV_EINVAL naming both columns) rather than wrapping values;
 *  - a null float16 value becomes the float16 NaN 0x7e00.
 * Columns of an extension type whose storage is numeric count as their
 * storage type (Arrow C++ treats an unregistered extension so). */
#ifndef QUIVER_TABLE_TENSOR_H
#define QUIVER_TABLE_TENSOR_H

#include "quiver/common.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "quiver/c_data.h"
#include "quiver/error.h"
#include "quiver/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Options of qv_table_to_tensor (NULL = defaults: every column, row-major,
 * nulls refused). */
typedef struct QvTableToTensorOptions {
  size_t struct_size;          /**< 0 or sizeof(QvTableToTensorOptions) */
  bool null_to_nan;            /**< nulls become NaN (and integers floats) */
  bool column_major;           /**< column-major output (Arrow's row_major=false) */
  /** Names of the columns to take, in this order (a name may repeat); NULL:
   * every column of the schema. A name that is absent, or that several
   * columns carry, is QV_EINVAL naming it and the table's columns. */
  const char *const *columns;
  int64_t n_columns;           /**< entries of `columns` (0 with columns != NULL: none) */
  /** Bytes the output may take; 0 = QV_DEFAULT_MAX_OUTPUT_SIZE (16 GiB).
   * Checked before anything is allocated (QV_ELIMIT naming both sizes). */
  int64_t max_output_size;
  /** Threads of the copy, 0 to QV_TABLE_TENSOR_MAX_THREADS (0 or 1, the
   * default: the calling thread alone). An output of 4 MiB or more is split
   * by ranges of output rows, each thread writing its own rows of every
   * column (so the first-touch page faults of the new output are taken in
   * parallel too); the bytes are the same for any count. (Added in 0.5.0
   * after max_output_size: a caller with the shorter struct gets one
   * thread.) */
  int threads;
} QvTableToTensorOptions;

/** Largest QvTableToTensorOptions.threads. */
#define QV_TABLE_TENSOR_MAX_THREADS 256

/** The value type the chosen columns of `schema` merge into, with the checks
 * that need no data (no columns, a non-numeric column, float16 mixed with
 * another type, uint64 with a signed type). With null_to_nan an integer
 * result becomes a float one. */
QV_API QvStatus qv_table_tensor_type(const struct ArrowSchema *schema,
                                     const QvTableToTensorOptions *options, QvArrowType *out,
                                     QvError *error);

/** Converts the record batches `batches[0]` to `batches[n_batches - 1]` of `schema` (a
 * struct schema, as the record batch readers give) into one new contiguous
 * tensor [total rows, chosen columns] that owns its buffer (64-byte
 * aligned), without dim names. Each batch is validated against the schema
 * (QV_VALIDATE_CHEAP) before it is read. Same-type columns are copied with
 * memcpy in column-major order. On failure *out is zeroed. */
QV_API QvStatus qv_table_to_tensor(const struct ArrowSchema *schema,
                                   const struct ArrowArray *const *batches, int64_t n_batches,
                                   const QvTableToTensorOptions *options, QvTensor *out,
                                   QvError *error);

/** The same over every remaining batch of a stream (read to its end; the
 * stream is not released). */
QV_API QvStatus qv_table_stream_to_tensor(struct ArrowArrayStream *stream,
                                          const QvTableToTensorOptions *options, QvTensor *out,
                                          QvError *error);

/** A caller's buffer that qv_table_to_tensor_into writes the tensor into
 * (NumPy's `out=`): the caller states what it expects, and every field is
 * checked against the tables before the first byte is written. */
typedef struct QvTableTensorBuffer {
  /** The first element, aligned to the element size; writable for data_size
   * bytes. May be NULL only for an output without elements. */
  void *data;
  /** Bytes at `data`: exactly rows x columns x element size. */
  int64_t data_size;
  /** The value type the caller expects: the chosen columns' (as
   * qv_table_tensor_type gives it). */
  QvArrowType type;
  /** The shape the caller expects: [total rows, chosen columns]. */
  int64_t shape[2];
} QvTableTensorBuffer;

/** qv_table_to_tensor into the caller's buffer `into`, laid out as
 * options->column_major says (contiguous either way): the same bytes as
 * qv_table_to_tensor for every option. *out becomes a view of into->data
 * (owner NULL: the caller keeps the buffer alive as long as the view).
 * Nothing is allocated for the output, so max_output_size is not applied,
 * and the buffer is neither populated nor advised: its pages fault in as
 * the copy first writes them (a buffer written before costs no faults,
 * which is the point of this call).
 *
 * Before any write, after the checks of qv_table_to_tensor (QV_EINVAL for a
 * bad table: a null, a non-numeric column, ...), the buffer is checked,
 * each mismatch QV_EARG naming both sides: `into` NULL; a type other than
 * the columns'; a shape other than [rows, columns]; data_size other than
 * the output's bytes; data NULL (with elements) or not aligned to the
 * element size; a buffer that overlaps a chosen column's values or validity
 * bits. Today every failure is found before the first write, but the
 * contract is weaker: after a failure the buffer's contents are
 * unspecified (it may be partly written). On failure *out is zeroed. */
QV_API QvStatus qv_table_to_tensor_into(const struct ArrowSchema *schema,
                                        const struct ArrowArray *const *batches,
                                        int64_t n_batches, const QvTableToTensorOptions *options,
                                        const QvTableTensorBuffer *into, QvTensor *out,
                                        QvError *error);

/** qv_table_to_tensor_into over every remaining batch of a stream (read to
 * its end; the stream is not released). The batches are read before the
 * buffer is checked, so a stream error leaves it untouched too. */
QV_API QvStatus qv_table_stream_to_tensor_into(struct ArrowArrayStream *stream,
                                               const QvTableToTensorOptions *options,
                                               const QvTableTensorBuffer *into, QvTensor *out,
                                               QvError *error);

#ifdef __cplusplus
}
#endif

#endif
