/* FlatBuffers descriptions of the Arrow format tables, for the verifier.
 * Slot numbers follow the declaration order of the .fbs files. */
#ifndef QUIVER_FORMAT_DESCRIPTORS_H
#define QUIVER_FORMAT_DESCRIPTORS_H

#include "flatbuf/flatbuf.h"

extern const QvFbTableDesc qvi_desc_Message;
extern const QvFbTableDesc qvi_desc_Footer;
extern const QvFbTableDesc qvi_desc_Schema;

/* Deepest Field.children nesting the decoder accepts and the encoder writes
 * (top-level fields are depth 0); bounds recursion on hostile input. */
#define QV_FORMAT_MAX_FIELD_DEPTH 64

/* Slots */
enum { MESSAGE_VERSION = 0, MESSAGE_HEADER_TYPE = 1, MESSAGE_HEADER = 2, MESSAGE_BODY_LENGTH = 3,
       MESSAGE_CUSTOM_METADATA = 4 };
enum { SCHEMA_ENDIANNESS = 0, SCHEMA_FIELDS = 1, SCHEMA_CUSTOM_METADATA = 2, SCHEMA_FEATURES = 3 };
enum { FIELD_NAME = 0, FIELD_NULLABLE = 1, FIELD_TYPE_TYPE = 2, FIELD_TYPE = 3,
       FIELD_DICTIONARY = 4, FIELD_CHILDREN = 5, FIELD_CUSTOM_METADATA = 6 };
enum { KV_KEY = 0, KV_VALUE = 1 };
enum { DICT_ID = 0, DICT_INDEX_TYPE = 1, DICT_IS_ORDERED = 2, DICT_KIND = 3 };
enum { RB_LENGTH = 0, RB_NODES = 1, RB_BUFFERS = 2, RB_COMPRESSION = 3, RB_VARIADIC = 4 };
enum { COMP_CODEC = 0, COMP_METHOD = 1 };
enum { DB_ID = 0, DB_DATA = 1, DB_IS_DELTA = 2 };
enum { TENSOR_TYPE_TYPE = 0, TENSOR_TYPE = 1, TENSOR_SHAPE = 2, TENSOR_STRIDES = 3,
       TENSOR_DATA = 4 };
enum { DIM_SIZE = 0, DIM_NAME = 1 };
enum { ST_TYPE_TYPE = 0, ST_TYPE = 1, ST_SHAPE = 2, ST_NNZ = 3, ST_INDEX_TYPE = 4, ST_INDEX = 5,
       ST_DATA = 6 };
enum { COO_INDICES_TYPE = 0, COO_INDICES_STRIDES = 1, COO_INDICES_BUFFER = 2,
       COO_IS_CANONICAL = 3 };
enum { CSX_AXIS = 0, CSX_INDPTR_TYPE = 1, CSX_INDPTR_BUFFER = 2, CSX_INDICES_TYPE = 3,
       CSX_INDICES_BUFFER = 4 };
enum { CSF_INDPTR_TYPE = 0, CSF_INDPTR_BUFFERS = 1, CSF_INDICES_TYPE = 2,
       CSF_INDICES_BUFFERS = 3, CSF_AXIS_ORDER = 4 };
enum { FOOTER_VERSION = 0, FOOTER_SCHEMA = 1, FOOTER_DICTIONARIES = 2, FOOTER_RECORD_BATCHES = 3,
       FOOTER_CUSTOM_METADATA = 4 };

#endif
