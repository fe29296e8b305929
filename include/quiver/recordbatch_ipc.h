/** @file
 * quiver: record batches in the Arrow IPC stream and file formats
 * (Columnar.rst "Serialization and Interprocess Communication").
 *
 * Reading produces C Data Interface structs (quiver/c_data.h): a stream
 * reader is an ArrowArrayStream whose get_schema converts the IPC Schema
 * (dictionary-encoded fields at any depth, custom metadata, extension types
 * through their ARROW:extension:* metadata) and whose get_next returns one
 * ArrowArray (a struct array whose children are the columns) per record
 * batch. Buffers point into the message body (zero-copy) unless the body is
 * compressed or a buffer is misaligned; every array keeps the memory it
 * points into alive (caller buffer owner, file mapping, fd-read body).
 *
 * Every batch gets the cheap checks (bounds of every buffer, sizes for the
 * lengths, child lengths, first/last offsets); QV_VALIDATE_FULL adds the
 * content checks (see quiver/array.h). Dictionary batches are kept by id
 * (replacement and delta batches); a batch that refers to a dictionary that
 * has not arrived is an error.
 *
 * Writing takes ArrowSchema + ArrowArray and produces standard streams or
 * files: 8-byte (or 64-byte) aligned and padded buffers, dictionary batches
 * (delta batches when a dictionary only grew), optional LZ4_FRAME / ZSTD
 * body compression, the end-of-stream marker, and the file footer. */
#ifndef QUIVER_RECORDBATCH_IPC_H
#define QUIVER_RECORDBATCH_IPC_H

#include "quiver/common.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "quiver/array.h"
#include "quiver/buffer.h"
#include "quiver/c_data.h"
#include "quiver/compression.h"
#include "quiver/error.h"
#include "quiver/io.h"
#include "quiver/ipc.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- reading */

/** Default bound of one message body's decompressed bytes (2 GiB):
 * QvRbReadOptions::max_decompressed_size 0. */
#define QV_RB_DEFAULT_MAX_DECOMPRESSED ((int64_t)2 << 30)

/** Options: NULL or a zeroed struct means every default. */
typedef struct QvRbReadOptions {
  size_t struct_size;          /**< 0 or sizeof(QvRbReadOptions) */
  const QvIpcReaderOptions *ipc; /**< the message reader's limits; NULL: defaults */
  /** QV_VALIDATE_FULL for the content checks; anything else: cheap checks */
  QvValidateLevel validate;
  /** Bound of the decompressed bytes of one message body; 0 = default. */
  int64_t max_decompressed_size;
  /** Bodies in the other byte order than the host's (Schema.endianness) are
   * converted to host order while they are read (one copying pass; a body in
   * host order stays zero-copy). true: hand out the body's bytes as they
   * are; when their order is not the host's, the top-level ArrowSchema then
   * carries the metadata key QV_RB_BYTE_ORDER_KEY ("big" or "little"), only
   * the bounds of buffers are checked (offsets and run ends cannot be read
   * in the foreign order) and delta dictionary batches are refused
   * (QV_ENOTSUP: appending needs the offsets). */
  bool keep_byte_order;
  /** Threads that decompress the buffers of a compressed message,
   * 0 .. QV_RB_MAX_THREADS; 0 or 1: the calling thread alone. The reader starts
   * them once, at its first compressed message, and joins them when it is
   * freed. The arrays are the same for any count, and so is the error of a
   * bad message (that of its first failing buffer).
   * With 2 or more, the reader reads one batch ahead when its input is
   * memory or a mapped path (a file reader: while batches are asked for in
   * order; never a pipe, where that would wait for the next batch to
   * arrive): when batch i is handed out, batch i + 1 has been loaded and
   * its buffers are decompressing on the threads, the caller's included
   * while it waits for a batch. Memory: at most one batch more than the
   * caller holds (its decompressed buffers and references to the
   * dictionaries it uses). A failure in the batch read ahead (and in the
   * dictionary batches before it) is reported when that batch is asked
   * for; freeing the reader stops its decompression.
   * For any count, the buffers a reader decompresses or copies into (64 KiB
   * and up) go back to it when the caller releases their batch, and later
   * batches reuse them: no fresh pages to fault in and zero per batch. It
   * keeps at most twice the largest batch's such bytes, until it is freed. */
  int threads;
  /** A quirk for old files: full validation does not check decimals against
   * their precision (QV_VALIDATE_DECIMALS_UNBOUNDED). */
  bool accept_decimal_overflow;
} QvRbReadOptions;

/** Largest `threads` of QvRbReadOptions and QvRbWriteOptions. */
#define QV_RB_MAX_THREADS 256

/** Metadata key of a schema whose arrays hold foreign-order bytes. */
#define QV_RB_BYTE_ORDER_KEY "quiver:byte_order"

/** The ArrowSchema of one field of an IPC Schema message (quiver/format.h):
 * format string, name, nullability, children, a dictionary's index type and
 * value type, metadata, as the readers build it; released by out->release.
 * For printing a decoded Schema message's types with
 * qv_arrow_schema_to_string (quiver inspect). QV_EINVAL for a field no
 * reader could read (no type, bad union type ids), QV_ELIMIT past
 * QV_ARRAY_MAX_DEPTH. */
QV_API QvStatus qv_rb_field_to_schema(const QvField *field, struct ArrowSchema *out,
                                      QvError *error);

/** Stream reader over a source (quiver/io.h: memory and paths are read
 * zero-copy, an fd or pipe sequentially). The ArrowArrayStream owns the
 * reader, which holds its own reference to the source (the caller may free
 * it right away); release the stream when done. The Schema message is read
 * here, so a bad schema fails here. A file-format input is read
 * sequentially through its messages. */
QV_API QvStatus qv_rb_stream_reader_new(struct ArrowArrayStream *out, QvSource *source,
                                        const QvRbReadOptions *options, QvError *error);

/** The next message for qv_rb_stream_reader_from_messages: QV_OK with *out
 * filled (`message` decoded from `metadata` by qv_message_decode, `body`
 * pointing at `body_length` readable bytes, `owner` keeping both alive: the
 * reader takes the message over and resets it when done), QV_EOS after the
 * last message, or an error set in `error` (reported at that batch). */
typedef QvStatus (*QvRbNextMessageFn)(void *ctx, QvIpcMessage *out, QvError *error);

/** Stream reader whose messages come one by one from `next` instead of a
 * QvSource: a transport of the caller's own (quiver's Flight client feeds it
 * FlightData). The first message must be the Schema, read here. Bodies are
 * used in place (the arrays retain each message's owner); their buffers are
 * checked against `body_length` and validated as options->validate says, as
 * for any source. `release(ctx)` (may be NULL) is called once: when the
 * stream is released, or here when creation fails. Batches are never read
 * ahead (messages arrive as the peer sends them). */
QV_API QvStatus qv_rb_stream_reader_from_messages(struct ArrowArrayStream *out,
                                                  QvRbNextMessageFn next, void *ctx,
                                                  void (*release)(void *ctx),
                                                  const QvRbReadOptions *options, QvError *error);

/** get_schema / get_next of any ArrowArrayStream with quiver's status and
 * error message (for quiver's streams the original status). get_next:
 * QV_EOS at the end of the stream (out->release NULL); the stream's own
 * get_next callback keeps the C interface's convention (0, released array). */
QV_API QvStatus qv_rb_stream_get_schema(struct ArrowArrayStream *stream, struct ArrowSchema *out,
                                 QvError *error);
/** The next batch of the stream; QV_EOS at its end (see qv_rb_stream_get_schema). */
QV_API QvStatus qv_rb_stream_get_next(struct ArrowArrayStream *stream, struct ArrowArray *out,
                               QvError *error);

/** The dictionary id of every dictionary-encoded node of the stream's
 * schema, in pre-order (a node, then its dictionary's value type, then its
 * children: the order of QvJsonData.dictionary_ids and of
 * QvRbWriteOptions.dictionary_ids). Nodes with one id share one dictionary:
 * the arrays of every batch then carry the same values for them. Valid while
 * the stream lives. A stream that is not quiver's reader: *ids NULL, *n 0. */
QV_API void qv_rb_stream_dictionary_ids(struct ArrowArrayStream *stream, const int64_t **ids,
                                        int64_t *n);

/** File reader: random access through the footer. */
typedef struct QvRbFileReader QvRbFileReader;

/** Checks both magics, decodes the footer and its schema (nothing else is
 * read until a batch is asked for). The reader holds its own reference to
 * the source. Batches from memory or a path are zero-copy views of it (the
 * mapped file); a pipe, descriptor or callback source is read whole into
 * memory first (the footer is at the end), and the batches view that. */
QV_API QvStatus qv_rb_file_reader_new(QvRbFileReader **out, QvSource *source,
                                      const QvRbReadOptions *options, QvError *error);
/** NULL is a no-op; batches handed out stay valid. */
QV_API void qv_rb_file_reader_free(QvRbFileReader *reader);
/** As qv_rb_stream_dictionary_ids, for the file's schema. */
QV_API void qv_rb_file_dictionary_ids(const QvRbFileReader *reader, const int64_t **ids,
                                      int64_t *n);
/** The number of record batch blocks in the footer. */
QV_API int64_t qv_rb_file_n_batches(const QvRbFileReader *reader);
/** The number of dictionary batch blocks in the footer. */
QV_API int64_t qv_rb_file_n_dictionaries(const QvRbFileReader *reader);
/** A copy of the file's schema as a C Data Interface schema. */
QV_API QvStatus qv_rb_file_get_schema(QvRbFileReader *reader, struct ArrowSchema *out, QvError *error);
/** Batch i (0-based). The first call reads every dictionary block. */
QV_API QvStatus qv_rb_file_read_batch(QvRbFileReader *reader, int64_t i, struct ArrowArray *out,
                               QvError *error);

/* ---- writing */

/** Options: NULL or a zeroed struct means every default. */
typedef struct QvRbWriteOptions {
  size_t struct_size;          /**< 0 or sizeof(QvRbWriteOptions) */
  QvIpcFormat format;          /**< stream (default) or file */
  int alignment;               /**< 8 (default) or 64: metadata and buffer padding */
  QvCompression compression;   /**< default none */
  /** 0: the codec's default (LZ4: its fast mode, ZSTD: 1); otherwise the
   * codec's own levels: ZSTD 1..22, LZ4 below 3 its fast mode and 3..12 LZ4
   * HC; negative levels trade ratio for speed, out-of-range ones are
   * clamped by the codec */
  int compression_level;
  /** Checks run on every input batch (structure is always checked). */
  QvValidateLevel validate;
  /** Write a grown dictionary again in full instead of as a delta. */
  bool no_dictionary_deltas;
  /** The dictionary id of every dictionary-encoded node of the schema, in
   * the pre-order of qv_rb_stream_dictionary_ids; nodes given one id share
   * one dictionary (a batch must then hold equal dictionaries in them), and
   * their value types must agree. NULL: 0, 1, 2, ... in that order, except
   * that qv_rb_write_all takes the ids of a quiver reader's stream. */
  const int64_t *dictionary_ids;
  int64_t n_dictionary_ids; /**< entries of `dictionary_ids` */
  /** Byte order of the bodies (Schema.endianness): QV_ENDIAN_NATIVE (0,
   * the host's), QV_ENDIAN_LITTLE or QV_ENDIAN_BIG; a foreign order
   * costs one copying pass over the multi-byte buffers. */
  QvEndianness endianness;
  /** Threads that compress the buffers of a message, 0..QV_RB_MAX_THREADS;
   * 0 or 1: the calling thread alone. Started once by qv_rb_writer_new
   * (when compressing), joined by qv_rb_writer_free. The output is byte for
   * byte the same for any count. Into a buffer or memory sink, a message's
   * buffers are compressed in the sink's own memory past what is written
   * (at worst-case offsets, then moved into place: no memory of the
   * writer's, and no fresh pages); a buffer sink's bytes past
   * qv_sink_bytes_written are therefore scratch while a writer writes to
   * it, as they are for one thread, which compresses there in place. When
   * the sink has no such room (another kind of sink, a buffer sink nearly
   * full), the writer keeps its compressed buffers between messages (about
   * the size of the largest message; with qv_rb_writer_write_move, two such
   * sets). */
  int threads;
} QvRbWriteOptions;

/** An opaque record batch writer (qv_rb_writer_new, qv_rb_writer_free). */
typedef struct QvRbWriter QvRbWriter;

/** `schema` is a struct ("+s") whose children are the columns; its metadata
 * becomes the Schema's custom metadata. Writes the file magic (file format)
 * and the Schema message to `sink` (quiver/io.h), which must outlive the
 * writer. The writer never finishes the sink: after qv_rb_writer_finish
 * the caller calls qv_sink_finish (a path sink then replaces its target). */
QV_API QvStatus qv_rb_writer_new(QvRbWriter **out, const struct ArrowSchema *schema, QvSink *sink,
                                 const QvRbWriteOptions *options, QvError *error);
/** `batch` is a struct array of the schema's type without top-level nulls
 * (offset and length select the rows). Dictionaries are written first when
 * new or changed. The array is not released. */
QV_API QvStatus qv_rb_writer_write(QvRbWriter *writer, const struct ArrowArray *batch, QvError *error);
/** As qv_rb_writer_write, but takes the batch (batch->release is NULL on
 * return, whatever the outcome; the writer releases it). A compressing
 * writer with threads > 1 checks the batch, starts compressing it and
 * returns, writing the batch handed over before it meanwhile: compression
 * of consecutive batches overlaps, so every thread stays busy. At most two
 * batches are held (the one handed over, still compressing, and for the
 * length of a call the one before it), and two sets of compressed
 * buffers. A bad batch is refused here (the writer stays usable); a
 * failure while compressing or writing a held batch is returned by the
 * call that writes it (this one, the next write, qv_rb_writer_flush or
 * _finish), after which the writer is failed. Without threads or
 * compression, or with dictionary-encoded fields, it is
 * qv_rb_writer_write followed by the release. qv_rb_write_all uses it. */
QV_API QvStatus qv_rb_writer_write_move(QvRbWriter *writer, struct ArrowArray *batch,
                                        QvError *error);
/** Waits for every batch handed over and writes it to the sink. */
QV_API QvStatus qv_rb_writer_flush(QvRbWriter *writer, QvError *error);
/** Writes any batch still held, the end-of-stream marker (and for files the
 * footer). Everything has been handed to the sink when it returns. */
QV_API QvStatus qv_rb_writer_finish(QvRbWriter *writer, QvError *error);
/** A batch still held is dropped unwritten (its compression stops). */
QV_API void qv_rb_writer_free(QvRbWriter *writer);
/** Bytes handed to the sink so far (not those of a batch still held). */
QV_API int64_t qv_rb_writer_bytes_written(const QvRbWriter *writer);

/** Writes every batch of `stream` (not released) as a stream or file (the
 * sink is not finished). */
QV_API QvStatus qv_rb_write_all(struct ArrowArrayStream *stream, QvSink *sink,
                                const QvRbWriteOptions *options, QvError *error);

#ifdef __cplusplus
}
#endif

#endif
