#include "format/descriptors.h"

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))
#define TABLE(name, fields) const QvFbTableDesc qvi_desc_##name = {#name, COUNT(fields), fields}
#define EMPTY(name) static const QvFbTableDesc qvi_desc_##name = {#name, 0, NULL}
/* field helpers: name, slot, kind, required, size, align, table, union */
#define SCALAR(n, s, sz) {n, s, QV_FB_SCALAR, 0, sz, sz, NULL, NULL}
#define STRUCT(n, s, sz, req) {n, s, QV_FB_STRUCT, req, sz, 8, NULL, NULL}
#define STRING(n, s) {n, s, QV_FB_STRING, 0, 4, 4, NULL, NULL}
#define SUBTABLE(n, s, t, req) {n, s, QV_FB_TABLE, req, 4, 4, &qvi_desc_##t, NULL}
#define VEC_SCALAR(n, s, sz, req) {n, s, QV_FB_VEC_SCALAR, req, sz, sz, NULL, NULL}
#define VEC_STRUCT(n, s, sz, req) {n, s, QV_FB_VEC_STRUCT, req, sz, 8, NULL, NULL}
#define VEC_TABLE(n, s, t, req) {n, s, QV_FB_VEC_TABLE, req, 4, 4, &qvi_desc_##t, NULL}
#define UNION(n, s, u, req) {n, s, QV_FB_UNION, req, 4, 4, NULL, &u}

static const QvFbFieldDesc kv_fields[] = {STRING("key", KV_KEY), STRING("value", KV_VALUE)};
static TABLE(KeyValue, kv_fields);

static const QvFbFieldDesc int_fields[] = {SCALAR("bitWidth", 0, 4), SCALAR("is_signed", 1, 1)};
static TABLE(Int, int_fields);
static const QvFbFieldDesc fp_fields[] = {SCALAR("precision", 0, 2)};
static TABLE(FloatingPoint, fp_fields);
static const QvFbFieldDesc decimal_fields[] = {SCALAR("precision", 0, 4), SCALAR("scale", 1, 4),
                                               SCALAR("bitWidth", 2, 4)};
static TABLE(Decimal, decimal_fields);
static const QvFbFieldDesc unit_fields[] = {SCALAR("unit", 0, 2)};
static TABLE(Date, unit_fields);
static TABLE(Interval, unit_fields);
static TABLE(Duration, unit_fields);
static const QvFbFieldDesc time_fields[] = {SCALAR("unit", 0, 2), SCALAR("bitWidth", 1, 4)};
static TABLE(Time, time_fields);
static const QvFbFieldDesc timestamp_fields[] = {SCALAR("unit", 0, 2), STRING("timezone", 1)};
static TABLE(Timestamp, timestamp_fields);
static const QvFbFieldDesc fsb_fields[] = {SCALAR("byteWidth", 0, 4)};
static TABLE(FixedSizeBinary, fsb_fields);
static const QvFbFieldDesc fsl_fields[] = {SCALAR("listSize", 0, 4)};
static TABLE(FixedSizeList, fsl_fields);
static const QvFbFieldDesc map_fields[] = {SCALAR("keysSorted", 0, 1)};
static TABLE(Map, map_fields);
static const QvFbFieldDesc union_fields[] = {SCALAR("mode", 0, 2),
                                             VEC_SCALAR("typeIds", 1, 4, 0)};
static TABLE(Union, union_fields);
EMPTY(Null);
EMPTY(Struct_);
EMPTY(List);
EMPTY(LargeList);
EMPTY(ListView);
EMPTY(LargeListView);
EMPTY(Utf8);
EMPTY(Binary);
EMPTY(LargeUtf8);
EMPTY(LargeBinary);
EMPTY(Utf8View);
EMPTY(BinaryView);
EMPTY(Bool);
EMPTY(RunEndEncoded);

static const QvFbTableDesc *const type_members[] = {
    NULL,                     &qvi_desc_Null,          &qvi_desc_Int,
    &qvi_desc_FloatingPoint,   &qvi_desc_Binary,        &qvi_desc_Utf8,
    &qvi_desc_Bool,            &qvi_desc_Decimal,       &qvi_desc_Date,
    &qvi_desc_Time,            &qvi_desc_Timestamp,     &qvi_desc_Interval,
    &qvi_desc_List,            &qvi_desc_Struct_,       &qvi_desc_Union,
    &qvi_desc_FixedSizeBinary, &qvi_desc_FixedSizeList, &qvi_desc_Map,
    &qvi_desc_Duration,        &qvi_desc_LargeBinary,   &qvi_desc_LargeUtf8,
    &qvi_desc_LargeList,       &qvi_desc_RunEndEncoded, &qvi_desc_BinaryView,
    &qvi_desc_Utf8View,        &qvi_desc_ListView,      &qvi_desc_LargeListView};
static const QvFbUnionDesc type_union = {"Type", COUNT(type_members), type_members};

static const QvFbFieldDesc dict_fields[] = {SCALAR("id", DICT_ID, 8),
                                            SUBTABLE("indexType", DICT_INDEX_TYPE, Int, 0),
                                            SCALAR("isOrdered", DICT_IS_ORDERED, 1),
                                            SCALAR("dictionaryKind", DICT_KIND, 2)};
static TABLE(DictionaryEncoding, dict_fields);

extern const QvFbTableDesc qvi_desc_Field;
static const QvFbFieldDesc field_fields[] = {
    STRING("name", FIELD_NAME),
    SCALAR("nullable", FIELD_NULLABLE, 1),
    SCALAR("type_type", FIELD_TYPE_TYPE, 1),
    UNION("type", FIELD_TYPE, type_union, 0),
    SUBTABLE("dictionary", FIELD_DICTIONARY, DictionaryEncoding, 0),
    VEC_TABLE("children", FIELD_CHILDREN, Field, 0),
    VEC_TABLE("custom_metadata", FIELD_CUSTOM_METADATA, KeyValue, 0)};
TABLE(Field, field_fields);

static const QvFbFieldDesc schema_fields[] = {
    SCALAR("endianness", SCHEMA_ENDIANNESS, 2), VEC_TABLE("fields", SCHEMA_FIELDS, Field, 0),
    VEC_TABLE("custom_metadata", SCHEMA_CUSTOM_METADATA, KeyValue, 0),
    VEC_SCALAR("features", SCHEMA_FEATURES, 8, 0)};
TABLE(Schema, schema_fields);

static const QvFbFieldDesc compression_fields[] = {SCALAR("codec", COMP_CODEC, 1),
                                                   SCALAR("method", COMP_METHOD, 1)};
static TABLE(BodyCompression, compression_fields);

static const QvFbFieldDesc rb_fields[] = {
    SCALAR("length", RB_LENGTH, 8), VEC_STRUCT("nodes", RB_NODES, 16, 0),
    VEC_STRUCT("buffers", RB_BUFFERS, 16, 0),
    SUBTABLE("compression", RB_COMPRESSION, BodyCompression, 0),
    VEC_SCALAR("variadicBufferCounts", RB_VARIADIC, 8, 0)};
static TABLE(RecordBatch, rb_fields);

static const QvFbFieldDesc db_fields[] = {SCALAR("id", DB_ID, 8),
                                          SUBTABLE("data", DB_DATA, RecordBatch, 0),
                                          SCALAR("isDelta", DB_IS_DELTA, 1)};
static TABLE(DictionaryBatch, db_fields);

static const QvFbFieldDesc dim_fields[] = {SCALAR("size", DIM_SIZE, 8), STRING("name", DIM_NAME)};
static TABLE(TensorDim, dim_fields);

static const QvFbFieldDesc tensor_fields[] = {
    SCALAR("type_type", TENSOR_TYPE_TYPE, 1), UNION("type", TENSOR_TYPE, type_union, 1),
    VEC_TABLE("shape", TENSOR_SHAPE, TensorDim, 1),
    VEC_SCALAR("strides", TENSOR_STRIDES, 8, 0), STRUCT("data", TENSOR_DATA, 16, 1)};
static TABLE(Tensor, tensor_fields);

static const QvFbFieldDesc coo_fields[] = {
    SUBTABLE("indicesType", COO_INDICES_TYPE, Int, 1),
    VEC_SCALAR("indicesStrides", COO_INDICES_STRIDES, 8, 0),
    STRUCT("indicesBuffer", COO_INDICES_BUFFER, 16, 1),
    SCALAR("isCanonical", COO_IS_CANONICAL, 1)};
static TABLE(SparseTensorIndexCOO, coo_fields);

static const QvFbFieldDesc csx_fields[] = {
    SCALAR("compressedAxis", CSX_AXIS, 2), SUBTABLE("indptrType", CSX_INDPTR_TYPE, Int, 1),
    STRUCT("indptrBuffer", CSX_INDPTR_BUFFER, 16, 1),
    SUBTABLE("indicesType", CSX_INDICES_TYPE, Int, 1),
    STRUCT("indicesBuffer", CSX_INDICES_BUFFER, 16, 1)};
static TABLE(SparseMatrixIndexCSX, csx_fields);

static const QvFbFieldDesc csf_fields[] = {
    SUBTABLE("indptrType", CSF_INDPTR_TYPE, Int, 1),
    VEC_STRUCT("indptrBuffers", CSF_INDPTR_BUFFERS, 16, 1),
    SUBTABLE("indicesType", CSF_INDICES_TYPE, Int, 1),
    VEC_STRUCT("indicesBuffers", CSF_INDICES_BUFFERS, 16, 1),
    VEC_SCALAR("axisOrder", CSF_AXIS_ORDER, 4, 1)};
static TABLE(SparseTensorIndexCSF, csf_fields);

static const QvFbTableDesc *const sparse_index_members[] = {
    NULL, &qvi_desc_SparseTensorIndexCOO, &qvi_desc_SparseMatrixIndexCSX,
    &qvi_desc_SparseTensorIndexCSF};
static const QvFbUnionDesc sparse_index_union = {"SparseTensorIndex",
                                                 COUNT(sparse_index_members),
                                                 sparse_index_members};

static const QvFbFieldDesc sparse_fields[] = {
    SCALAR("type_type", ST_TYPE_TYPE, 1), UNION("type", ST_TYPE, type_union, 1),
    VEC_TABLE("shape", ST_SHAPE, TensorDim, 1), SCALAR("non_zero_length", ST_NNZ, 8),
    SCALAR("sparseIndex_type", ST_INDEX_TYPE, 1),
    UNION("sparseIndex", ST_INDEX, sparse_index_union, 1), STRUCT("data", ST_DATA, 16, 1)};
static TABLE(SparseTensor, sparse_fields);

static const QvFbTableDesc *const header_members[] = {
    NULL, &qvi_desc_Schema, &qvi_desc_DictionaryBatch, &qvi_desc_RecordBatch, &qvi_desc_Tensor,
    &qvi_desc_SparseTensor};
static const QvFbUnionDesc header_union = {"MessageHeader", COUNT(header_members),
                                           header_members};

static const QvFbFieldDesc message_fields[] = {
    SCALAR("version", MESSAGE_VERSION, 2), SCALAR("header_type", MESSAGE_HEADER_TYPE, 1),
    UNION("header", MESSAGE_HEADER, header_union, 0),
    SCALAR("bodyLength", MESSAGE_BODY_LENGTH, 8),
    VEC_TABLE("custom_metadata", MESSAGE_CUSTOM_METADATA, KeyValue, 0)};
TABLE(Message, message_fields);

static const QvFbFieldDesc footer_fields[] = {
    SCALAR("version", FOOTER_VERSION, 2), SUBTABLE("schema", FOOTER_SCHEMA, Schema, 0),
    VEC_STRUCT("dictionaries", FOOTER_DICTIONARIES, 24, 0),
    VEC_STRUCT("recordBatches", FOOTER_RECORD_BATCHES, 24, 0),
    VEC_TABLE("custom_metadata", FOOTER_CUSTOM_METADATA, KeyValue, 0)};
TABLE(Footer, footer_fields);
