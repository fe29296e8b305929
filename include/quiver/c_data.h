/** @file
 * quiver: the Arrow C Data Interface and C Stream Interface, exactly as the
 * Arrow specification defines them (CDataInterface.rst, CStreamInterface.rst).
 * These structs are quiver's public currency for record batches: arrays are
 * read into them and written from them, so they can be handed to (or taken
 * from) any other Arrow implementation without copying.
 *
 * Format strings (ArrowSchema.format):
 *   n null            b bool             c/C int8/uint8     s/S int16/uint16
 *   i/I int32/uint32  l/L int64/uint64   e/f/g float16/32/64
 *   z/Z binary/large binary   u/U utf8/large utf8   vz/vu binary/utf8 view
 *   d:P,S[,W] decimal (W = 32, 64, 128 (default), 256)   w:N fixed-size binary
 *   tdD/tdm date32 days / date64 ms   tts/ttm time32 s/ms   ttu/ttn time64 us/ns
 *   tss:TZ tsm:TZ tsu:TZ tsn:TZ timestamp (TZ may be empty)
 *   tDs tDm tDu tDn duration   tiM tiD tin interval months / days+ms / month+day+ns
 *   +l/+L list/large list   +vl/+vL list view/large list view   +w:N fixed-size list
 *   +s struct   +m map   +ud:I,J,.. / +us:I,J,.. dense/sparse union   +r run-end encoded
 * A dictionary-encoded array has the index type's format and a `dictionary`
 * schema describing the values. Extension types are carried by the
 * ARROW:extension:name / ARROW:extension:metadata field metadata. */
#ifndef QUIVER_C_DATA_H
#define QUIVER_C_DATA_H

#include "quiver/common.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifndef ARROW_C_DATA_INTERFACE
/** Defined with the C Data Interface's structs, so another copy of them
 * (nanoarrow's, Arrow C++'s) is not defined twice. */
#define ARROW_C_DATA_INTERFACE

/** ArrowSchema::flags: a dictionary's order is meaningful. */
#define ARROW_FLAG_DICTIONARY_ORDERED 1
/** ArrowSchema::flags: the field may hold nulls. */
#define ARROW_FLAG_NULLABLE 2
/** ArrowSchema::flags: each map's keys are sorted (map types only). */
#define ARROW_FLAG_MAP_KEYS_SORTED 4

/** The type of an array, one node per field (the C Data Interface). */
struct ArrowSchema {
  /** Array type description: the format string ("i", "tsu:UTC", "+l", ...) */
  const char* format;
  const char* name;        /**< the field's name, UTF-8, NUL-terminated; may be NULL */
  const char* metadata;    /**< NULL, or a blob: int32 count, then int32 length + bytes per key and value */
  int64_t flags;           /**< ARROW_FLAG_* bits */
  int64_t n_children;      /**< entries of `children` */
  struct ArrowSchema** children;  /**< the child types of a nested type */
  struct ArrowSchema* dictionary; /**< the values' type of a dictionary-encoded field, else NULL */

  /** Release callback */
  void (*release)(struct ArrowSchema*);
  /** Opaque producer-specific data */
  void* private_data;
};

/** The data of an array, shaped like its ArrowSchema (the C Data Interface). */
struct ArrowArray {
  /** Array data description: the number of logical elements */
  int64_t length;
  int64_t null_count;  /**< number of nulls; -1 when not computed */
  int64_t offset;      /**< logical index 0 is physical index `offset` of the buffers */
  int64_t n_buffers;   /**< entries of `buffers`, fixed by the layout */
  int64_t n_children;  /**< entries of `children` */
  const void** buffers; /**< the buffers (validity first when the layout has one; NULL entries allowed) */
  struct ArrowArray** children;  /**< the child arrays */
  struct ArrowArray* dictionary; /**< the values of a dictionary-encoded array, else NULL */

  /** Release callback */
  void (*release)(struct ArrowArray*);
  /** Opaque producer-specific data */
  void* private_data;
};

#endif /**< ARROW_C_DATA_INTERFACE */

#ifndef ARROW_C_STREAM_INTERFACE
/** Defined with ArrowArrayStream, so another copy is not defined twice. */
#define ARROW_C_STREAM_INTERFACE

/** A stream of arrays of one schema (the C Stream Interface). */
struct ArrowArrayStream {
  /** Callbacks providing stream functionality */
  int (*get_schema)(struct ArrowArrayStream*, struct ArrowSchema* out);
  /** The next array into `out`, a released one (release NULL) at the end;
   * 0 or an errno code. */
  int (*get_next)(struct ArrowArrayStream*, struct ArrowArray* out);
  /** The message of the last error, valid until the next call; or NULL. */
  const char* (*get_last_error)(struct ArrowArrayStream*);

  /** Release callback */
  void (*release)(struct ArrowArrayStream*);

  /** Opaque producer-specific data */
  void* private_data;
};

#endif /**< ARROW_C_STREAM_INTERFACE */

#ifdef __cplusplus
}
#endif

#endif
