// Builds a Message FlatBuffer with the apache-arrow generated builders
// (apache-arrow/fb/*) from a description in the JSON shape of
// tests/interop/README.md, so the description is also the expected result of
// decoding the bytes.
import * as flatbuffers from 'flatbuffers';
import { Binary } from 'apache-arrow/fb/binary';
import { BinaryView } from 'apache-arrow/fb/binary-view';
import { BodyCompression } from 'apache-arrow/fb/body-compression';
import { Bool } from 'apache-arrow/fb/bool';
import { Buffer } from 'apache-arrow/fb/buffer';
import { Date as DateType } from 'apache-arrow/fb/date';
import { Decimal } from 'apache-arrow/fb/decimal';
import { DictionaryBatch } from 'apache-arrow/fb/dictionary-batch';
import { DictionaryEncoding } from 'apache-arrow/fb/dictionary-encoding';
import { Duration } from 'apache-arrow/fb/duration';
import { Field } from 'apache-arrow/fb/field';
import { FieldNode } from 'apache-arrow/fb/field-node';
import { FixedSizeBinary } from 'apache-arrow/fb/fixed-size-binary';
import { FixedSizeList } from 'apache-arrow/fb/fixed-size-list';
import { FloatingPoint } from 'apache-arrow/fb/floating-point';
import { Int } from 'apache-arrow/fb/int';
import { Interval } from 'apache-arrow/fb/interval';
import { KeyValue } from 'apache-arrow/fb/key-value';
import { LargeBinary } from 'apache-arrow/fb/large-binary';
import { LargeList } from 'apache-arrow/fb/large-list';
import { LargeListView } from 'apache-arrow/fb/large-list-view';
import { LargeUtf8 } from 'apache-arrow/fb/large-utf8';
import { List } from 'apache-arrow/fb/list';
import { ListView } from 'apache-arrow/fb/list-view';
import { Map as MapType } from 'apache-arrow/fb/map';
import { Message } from 'apache-arrow/fb/message';
import { MessageHeader } from 'apache-arrow/fb/message-header';
import { Null } from 'apache-arrow/fb/null';
import { RecordBatch } from 'apache-arrow/fb/record-batch';
import { RunEndEncoded } from 'apache-arrow/fb/run-end-encoded';
import { Schema } from 'apache-arrow/fb/schema';
import { SparseMatrixIndexCSX } from 'apache-arrow/fb/sparse-matrix-index-csx';
import { SparseTensor } from 'apache-arrow/fb/sparse-tensor';
import { SparseTensorIndex } from 'apache-arrow/fb/sparse-tensor-index';
import { SparseTensorIndexCOO } from 'apache-arrow/fb/sparse-tensor-index-coo';
import { SparseTensorIndexCSF } from 'apache-arrow/fb/sparse-tensor-index-csf';
import { Struct_ } from 'apache-arrow/fb/struct-';
import { Tensor } from 'apache-arrow/fb/tensor';
import { TensorDim } from 'apache-arrow/fb/tensor-dim';
import { Time } from 'apache-arrow/fb/time';
import { Timestamp } from 'apache-arrow/fb/timestamp';
import { Type } from 'apache-arrow/fb/type';
import { Union } from 'apache-arrow/fb/union';
import { Utf8 } from 'apache-arrow/fb/utf8';
import { Utf8View } from 'apache-arrow/fb/utf8-view';

// Member tables without fields: built with their own start/end functions.
const EMPTY_TYPES = {
  Null,
  Binary,
  Utf8,
  Bool,
  List,
  Struct_,
  LargeBinary,
  LargeUtf8,
  LargeList,
  RunEndEncoded,
  BinaryView,
  Utf8View,
  ListView,
  LargeListView,
};

class MessageBuilder {
  // omitEmpty: leave out vectors whose description is an empty array (the
  // description cannot tell them apart; the reader must accept both).
  constructor({ forceDefaults = false, omitEmpty = true } = {}) {
    this.b = new flatbuffers.Builder(64);
    this.b.forceDefaults(forceDefaults);
    this.omitEmpty = omitEmpty;
  }

  str(s) {
    return s === null ? 0 : this.b.createString(s);
  }

  // A vector of table offsets (already built), or 0 when left out.
  offsets(create, refs) {
    return refs.length === 0 && this.omitEmpty ? 0 : create(this.b, refs);
  }

  structs(start, items, createOne) {
    if (items.length === 0 && this.omitEmpty) return 0;
    start(this.b, items.length);
    for (let i = items.length - 1; i >= 0; i--) createOne(items[i]);
    return this.b.endVector();
  }

  buffers(start, items) {
    return this.structs(start, items, (x) => Buffer.createBuffer(this.b, BigInt(x.offset), BigInt(x.length)));
  }

  metadata(create, kvs) {
    const refs = kvs.map((kv) => {
      const k = this.str(kv.key);
      const v = this.str(kv.value);
      KeyValue.startKeyValue(this.b);
      if (k) KeyValue.addKey(this.b, k);
      if (v) KeyValue.addValue(this.b, v);
      return KeyValue.endKeyValue(this.b);
    });
    return this.offsets(create, refs);
  }

  int(t) {
    return Int.createInt(this.b, t.bitWidth, t.isSigned);
  }

  type(t) {
    const b = this.b;
    switch (t.name) {
      case 'Int':
        return this.int(t);
      case 'FloatingPoint':
        return FloatingPoint.createFloatingPoint(b, t.precision);
      case 'Decimal':
        return Decimal.createDecimal(b, t.precision, t.scale, t.bitWidth);
      case 'Date':
        return DateType.createDate(b, t.unit);
      case 'Time':
        return Time.createTime(b, t.unit, t.bitWidth);
      case 'Timestamp': {
        const tz = this.str(t.timezone);
        Timestamp.startTimestamp(b);
        Timestamp.addUnit(b, t.unit);
        if (tz) Timestamp.addTimezone(b, tz);
        return Timestamp.endTimestamp(b);
      }
      case 'Interval':
        return Interval.createInterval(b, t.unit);
      case 'Duration':
        return Duration.createDuration(b, t.unit);
      case 'FixedSizeBinary':
        return FixedSizeBinary.createFixedSizeBinary(b, t.byteWidth);
      case 'FixedSizeList':
        return FixedSizeList.createFixedSizeList(b, t.listSize);
      case 'Map':
        return MapType.createMap(b, t.keysSorted);
      case 'Union': {
        const ids = t.typeIds === null ? 0 : Union.createTypeIdsVector(b, t.typeIds);
        Union.startUnion(b);
        Union.addMode(b, t.mode);
        if (ids) Union.addTypeIds(b, ids);
        return Union.endUnion(b);
      }
      default: {
        const cls = EMPTY_TYPES[t.name];
        if (cls === undefined) throw new Error(`cannot build type ${t.name}`);
        cls[`start${t.name}`](b);
        return cls[`end${t.name}`](b);
      }
    }
  }

  field(f) {
    const b = this.b;
    const name = this.str(f.name);
    const type = this.type(f.type);
    let dict = 0;
    if (f.dictionary !== null) {
      const it = f.dictionary.indexType === null ? 0 : this.int(f.dictionary.indexType);
      DictionaryEncoding.startDictionaryEncoding(b);
      DictionaryEncoding.addId(b, BigInt(f.dictionary.id));
      if (it) DictionaryEncoding.addIndexType(b, it);
      DictionaryEncoding.addIsOrdered(b, f.dictionary.isOrdered);
      DictionaryEncoding.addDictionaryKind(b, f.dictionary.dictionaryKind);
      dict = DictionaryEncoding.endDictionaryEncoding(b);
    }
    const children = this.offsets(
      Field.createChildrenVector,
      f.children.map((c) => this.field(c)),
    );
    const md = this.metadata(Field.createCustomMetadataVector, f.customMetadata);
    Field.startField(b);
    if (name) Field.addName(b, name);
    Field.addNullable(b, f.nullable);
    Field.addTypeType(b, Type[f.type.name]);
    Field.addType(b, type);
    if (dict) Field.addDictionary(b, dict);
    if (children) Field.addChildren(b, children);
    if (md) Field.addCustomMetadata(b, md);
    return Field.endField(b);
  }

  schema(s) {
    const b = this.b;
    const fields = this.offsets(Schema.createFieldsVector, s.fields.map((f) => this.field(f)));
    const md = this.metadata(Schema.createCustomMetadataVector, s.customMetadata);
    const features =
      s.features.length === 0 && this.omitEmpty ? 0 : Schema.createFeaturesVector(b, s.features.map(BigInt));
    Schema.startSchema(b);
    Schema.addEndianness(b, s.endianness);
    if (fields) Schema.addFields(b, fields);
    if (md) Schema.addCustomMetadata(b, md);
    if (features) Schema.addFeatures(b, features);
    return Schema.endSchema(b);
  }

  recordBatch(rb) {
    const b = this.b;
    const nodes = this.structs(RecordBatch.startNodesVector, rb.nodes, (n) =>
      FieldNode.createFieldNode(b, BigInt(n.length), BigInt(n.nullCount)),
    );
    const buffers = this.buffers(RecordBatch.startBuffersVector, rb.buffers);
    const comp =
      rb.compression === null
        ? 0
        : BodyCompression.createBodyCompression(b, rb.compression.codec, rb.compression.method);
    const variadic =
      rb.variadicBufferCounts === null
        ? 0
        : RecordBatch.createVariadicBufferCountsVector(b, rb.variadicBufferCounts.map(BigInt));
    RecordBatch.startRecordBatch(b);
    RecordBatch.addLength(b, BigInt(rb.length));
    if (nodes) RecordBatch.addNodes(b, nodes);
    if (buffers) RecordBatch.addBuffers(b, buffers);
    if (comp) RecordBatch.addCompression(b, comp);
    if (variadic) RecordBatch.addVariadicBufferCounts(b, variadic);
    return RecordBatch.endRecordBatch(b);
  }

  dictionaryBatch(db) {
    const b = this.b;
    const data = this.recordBatch(db.data);
    DictionaryBatch.startDictionaryBatch(b);
    DictionaryBatch.addId(b, BigInt(db.id));
    DictionaryBatch.addData(b, data);
    DictionaryBatch.addIsDelta(b, db.isDelta);
    return DictionaryBatch.endDictionaryBatch(b);
  }

  // TensorDim vectors are required by the format: always written.
  shape(create, dims) {
    const refs = dims.map((d) => TensorDim.createTensorDim(this.b, BigInt(d.size), this.str(d.name)));
    return create(this.b, refs);
  }

  tensor(t) {
    const b = this.b;
    const type = this.type(t.type);
    const shape = this.shape(Tensor.createShapeVector, t.shape);
    const strides = t.strides === null ? 0 : Tensor.createStridesVector(b, t.strides.map(BigInt));
    Tensor.startTensor(b);
    Tensor.addTypeType(b, Type[t.type.name]);
    Tensor.addType(b, type);
    Tensor.addShape(b, shape);
    if (strides) Tensor.addStrides(b, strides);
    Tensor.addData(b, Buffer.createBuffer(b, BigInt(t.data.offset), BigInt(t.data.length)));
    return Tensor.endTensor(b);
  }

  sparseIndex(kind, ix) {
    const b = this.b;
    const buf = (x) => Buffer.createBuffer(b, BigInt(x.offset), BigInt(x.length));
    switch (kind) {
      case 'SparseTensorIndexCOO': {
        const it = this.int(ix.indicesType);
        const strides =
          ix.indicesStrides === null
            ? 0
            : SparseTensorIndexCOO.createIndicesStridesVector(b, ix.indicesStrides.map(BigInt));
        SparseTensorIndexCOO.startSparseTensorIndexCOO(b);
        SparseTensorIndexCOO.addIndicesType(b, it);
        if (strides) SparseTensorIndexCOO.addIndicesStrides(b, strides);
        SparseTensorIndexCOO.addIndicesBuffer(b, buf(ix.indicesBuffer));
        SparseTensorIndexCOO.addIsCanonical(b, ix.isCanonical);
        return SparseTensorIndexCOO.endSparseTensorIndexCOO(b);
      }
      case 'SparseMatrixIndexCSX': {
        const pt = this.int(ix.indptrType);
        const it = this.int(ix.indicesType);
        SparseMatrixIndexCSX.startSparseMatrixIndexCSX(b);
        SparseMatrixIndexCSX.addCompressedAxis(b, ix.compressedAxis);
        SparseMatrixIndexCSX.addIndptrType(b, pt);
        SparseMatrixIndexCSX.addIndptrBuffer(b, buf(ix.indptrBuffer));
        SparseMatrixIndexCSX.addIndicesType(b, it);
        SparseMatrixIndexCSX.addIndicesBuffer(b, buf(ix.indicesBuffer));
        return SparseMatrixIndexCSX.endSparseMatrixIndexCSX(b);
      }
      case 'SparseTensorIndexCSF': {
        const pt = this.int(ix.indptrType);
        const it = this.int(ix.indicesType);
        // Required vectors: written even when empty.
        const keep = this.omitEmpty;
        this.omitEmpty = false;
        const indptr = this.buffers(SparseTensorIndexCSF.startIndptrBuffersVector, ix.indptrBuffers);
        const indices = this.buffers(SparseTensorIndexCSF.startIndicesBuffersVector, ix.indicesBuffers);
        this.omitEmpty = keep;
        const axes = SparseTensorIndexCSF.createAxisOrderVector(b, ix.axisOrder);
        SparseTensorIndexCSF.startSparseTensorIndexCSF(b);
        SparseTensorIndexCSF.addIndptrType(b, pt);
        SparseTensorIndexCSF.addIndptrBuffers(b, indptr);
        SparseTensorIndexCSF.addIndicesType(b, it);
        SparseTensorIndexCSF.addIndicesBuffers(b, indices);
        SparseTensorIndexCSF.addAxisOrder(b, axes);
        return SparseTensorIndexCSF.endSparseTensorIndexCSF(b);
      }
      default:
        throw new Error(`cannot build sparse index ${kind}`);
    }
  }

  sparseTensor(t) {
    const b = this.b;
    const type = this.type(t.type);
    const shape = this.shape(SparseTensor.createShapeVector, t.shape);
    const index = this.sparseIndex(t.sparseIndexType, t.sparseIndex);
    SparseTensor.startSparseTensor(b);
    SparseTensor.addTypeType(b, Type[t.type.name]);
    SparseTensor.addType(b, type);
    SparseTensor.addShape(b, shape);
    SparseTensor.addNonZeroLength(b, BigInt(t.nonZeroLength));
    SparseTensor.addSparseIndexType(b, SparseTensorIndex[t.sparseIndexType]);
    SparseTensor.addSparseIndex(b, index);
    SparseTensor.addData(b, Buffer.createBuffer(b, BigInt(t.data.offset), BigInt(t.data.length)));
    return SparseTensor.endSparseTensor(b);
  }

  message(m) {
    const b = this.b;
    const build = {
      Schema: (h) => this.schema(h),
      DictionaryBatch: (h) => this.dictionaryBatch(h),
      RecordBatch: (h) => this.recordBatch(h),
      Tensor: (h) => this.tensor(h),
      SparseTensor: (h) => this.sparseTensor(h),
    }[m.headerType];
    if (build === undefined) throw new Error(`cannot build header ${m.headerType}`);
    const header = build(m.header);
    const md = this.metadata(Message.createCustomMetadataVector, m.customMetadata);
    Message.startMessage(b);
    Message.addVersion(b, m.version);
    Message.addHeaderType(b, MessageHeader[m.headerType]);
    Message.addHeader(b, header);
    Message.addBodyLength(b, BigInt(m.bodyLength));
    if (md) Message.addCustomMetadata(b, md);
    Message.finishMessageBuffer(b, Message.endMessage(b));
    return b.asUint8Array().slice();
  }
}

/** Encodes the described message; options: { forceDefaults, omitEmpty }. */
export function buildMessage(description, options) {
  return new MessageBuilder(options).message(description);
}
