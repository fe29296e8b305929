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
#define ARROW_C_DATA_INTERFACE

#define ARROW_FLAG_DICTIONARY_ORDERED 1
#define ARROW_FLAG_NULLABLE 2
#define ARROW_FLAG_MAP_KEYS_SORTED 4

struct ArrowSchema {
  /** Array type description */
  const char* format;
  const char* name;
  const char* metadata;
  int64_t flags;
  int64_t n_children;
  struct ArrowSchema** children;
  struct ArrowSchema* dictionary;

  /** Release callback */
  void (*release)(struct ArrowSchema*);
  /** Opaque producer-specific data */
  void* private_data;
};

struct ArrowArray {
  /** Array data description */
  int64_t length;
  int64_t null_count;
  int64_t offset;
  int64_t n_buffers;
  int64_t n_children;
  const void** buffers;
  struct ArrowArray** children;
  struct ArrowArray* dictionary;

  /** Release callback */
  void (*release)(struct ArrowArray*);
  /** Opaque producer-specific data */
  void* private_data;
};

#endif /**< ARROW_C_DATA_INTERFACE */

#ifndef ARROW_C_STREAM_INTERFACE
#define ARROW_C_STREAM_INTERFACE

struct ArrowArrayStream {
  /** Callbacks providing stream functionality */
  int (*get_schema)(struct ArrowArrayStream*, struct ArrowSchema* out);
  int (*get_next)(struct ArrowArrayStream*, struct ArrowArray* out);
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
