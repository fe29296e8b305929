// Reads a Message FlatBuffer with the apache-arrow generated classes
// (apache-arrow/fb/*) and describes every value as plain JSON, in the shape
// documented in tests/interop/README.md (the shape qv_metadata_tool prints).
import * as flatbuffers from 'flatbuffers';
import { Message } from 'apache-arrow/fb/message';
import { MessageHeader, unionToMessageHeader } from 'apache-arrow/fb/message-header';
import { Type, unionToType } from 'apache-arrow/fb/type';
import { SparseTensorIndex, unionToSparseTensorIndex } from 'apache-arrow/fb/sparse-tensor-index';

// The generated accessors return the same value for an absent vector and an
// empty one; where the format gives absence a meaning (Union.typeIds,
// Tensor.strides, ...) we look at the vtable slot through the ByteBuffer.
function hasSlot(table, slot) {
  return table.bb.__offset(table.bb_pos, 4 + 2 * slot) !== 0;
}

const i64 = (v) => {
  if (typeof v !== 'bigint') throw new Error(`expected a 64-bit value, got ${typeof v}`);
  return v.toString();
};

function list(n, get) {
  const out = [];
  for (let i = 0; i < n; i++) out.push(get(i));
  return out;
}

function describeInt(t, where) {
  if (t === null) throw new Error(`${where}: Int table is missing`);
  return { bitWidth: t.bitWidth(), isSigned: t.isSigned() };
}

function describeType(tag, accessor, where) {
  const name = Type[tag];
  if (name === undefined || tag === Type.NONE) throw new Error(`${where}: type tag ${tag} is not a Type`);
  const t = unionToType(tag, accessor);
  if (t === null) throw new Error(`${where}: ${name} table is missing`);
  const o = { name };
  switch (tag) {
    case Type.Int:
      o.bitWidth = t.bitWidth();
      o.isSigned = t.isSigned();
      break;
    case Type.FloatingPoint:
      o.precision = t.precision();
      break;
    case Type.Decimal:
      o.precision = t.precision();
      o.scale = t.scale();
      o.bitWidth = t.bitWidth();
      break;
    case Type.Date:
    case Type.Interval:
    case Type.Duration:
      o.unit = t.unit();
      break;
    case Type.Time:
      o.unit = t.unit();
      o.bitWidth = t.bitWidth();
      break;
    case Type.Timestamp:
      o.unit = t.unit();
      o.timezone = t.timezone();
      break;
    case Type.FixedSizeBinary:
      o.byteWidth = t.byteWidth();
      break;
    case Type.FixedSizeList:
      o.listSize = t.listSize();
      break;
    case Type.Map:
      o.keysSorted = t.keysSorted();
      break;
    case Type.Union:
      o.mode = t.mode();
      o.typeIds = hasSlot(t, 1) ? list(t.typeIdsLength(), (i) => t.typeIds(i)) : null;
      break;
    default:
      break;
  }
  return o;
}

function describeMetadata(owner) {
  return list(owner.customMetadataLength(), (i) => {
    const kv = owner.customMetadata(i);
    return { key: kv.key(), value: kv.value() };
  });
}

function describeField(f, where) {
  const d = f.dictionary();
  return {
    name: f.name(),
    nullable: f.nullable(),
    type: describeType(f.typeType(), (obj) => f.type(obj), `${where}.type`),
    dictionary:
      d === null
        ? null
        : {
            id: i64(d.id()),
            indexType: d.indexType() === null ? null : describeInt(d.indexType(), `${where}.dictionary.indexType`),
            isOrdered: d.isOrdered(),
            dictionaryKind: d.dictionaryKind(),
          },
    children: list(f.childrenLength(), (i) => describeField(f.children(i), `${where}.children[${i}]`)),
    customMetadata: describeMetadata(f),
  };
}

function describeSchema(s) {
  return {
    endianness: s.endianness(),
    fields: list(s.fieldsLength(), (i) => describeField(s.fields(i), `Schema.fields[${i}]`)),
    customMetadata: describeMetadata(s),
    features: list(s.featuresLength(), (i) => i64(s.features(i))),
  };
}

function describeBuffer(b, where) {
  if (b === null) throw new Error(`${where}: Buffer struct is missing`);
  return { offset: i64(b.offset()), length: i64(b.length()) };
}

function describeRecordBatch(rb, where) {
  if (rb === null) throw new Error(`${where}: RecordBatch table is missing`);
  const c = rb.compression();
  return {
    length: i64(rb.length()),
    nodes: list(rb.nodesLength(), (i) => {
      const n = rb.nodes(i);
      return { length: i64(n.length()), nullCount: i64(n.nullCount()) };
    }),
    buffers: list(rb.buffersLength(), (i) => describeBuffer(rb.buffers(i), `${where}.buffers[${i}]`)),
    compression: c === null ? null : { codec: c.codec(), method: c.method() },
    variadicBufferCounts: hasSlot(rb, 4)
      ? list(rb.variadicBufferCountsLength(), (i) => i64(rb.variadicBufferCounts(i)))
      : null,
  };
}

function describeShape(t) {
  return list(t.shapeLength(), (i) => {
    const d = t.shape(i);
    return { size: i64(d.size()), name: d.name() };
  });
}

function describeTensor(t) {
  return {
    type: describeType(t.typeType(), (obj) => t.type(obj), 'Tensor.type'),
    shape: describeShape(t),
    strides: hasSlot(t, 3) ? list(t.stridesLength(), (i) => i64(t.strides(i))) : null,
    data: describeBuffer(t.data(), 'Tensor.data'),
  };
}

function describeSparseIndex(tag, ix) {
  const where = `SparseTensor.sparseIndex(${SparseTensorIndex[tag]})`;
  if (ix === null) throw new Error(`${where}: table is missing (tag ${tag})`);
  switch (tag) {
    case SparseTensorIndex.SparseTensorIndexCOO:
      return {
        indicesType: describeInt(ix.indicesType(), `${where}.indicesType`),
        indicesStrides: hasSlot(ix, 1) ? list(ix.indicesStridesLength(), (i) => i64(ix.indicesStrides(i))) : null,
        indicesBuffer: describeBuffer(ix.indicesBuffer(), `${where}.indicesBuffer`),
        isCanonical: ix.isCanonical(),
      };
    case SparseTensorIndex.SparseMatrixIndexCSX:
      return {
        compressedAxis: ix.compressedAxis(),
        indptrType: describeInt(ix.indptrType(), `${where}.indptrType`),
        indptrBuffer: describeBuffer(ix.indptrBuffer(), `${where}.indptrBuffer`),
        indicesType: describeInt(ix.indicesType(), `${where}.indicesType`),
        indicesBuffer: describeBuffer(ix.indicesBuffer(), `${where}.indicesBuffer`),
      };
    case SparseTensorIndex.SparseTensorIndexCSF:
      return {
        indptrType: describeInt(ix.indptrType(), `${where}.indptrType`),
        indptrBuffers: list(ix.indptrBuffersLength(), (i) => describeBuffer(ix.indptrBuffers(i), `${where}.indptrBuffers[${i}]`)),
        indicesType: describeInt(ix.indicesType(), `${where}.indicesType`),
        indicesBuffers: list(ix.indicesBuffersLength(), (i) =>
          describeBuffer(ix.indicesBuffers(i), `${where}.indicesBuffers[${i}]`),
        ),
        axisOrder: list(ix.axisOrderLength(), (i) => ix.axisOrder(i)),
      };
    default:
      throw new Error(`${where}: tag ${tag} is not a SparseTensorIndex`);
  }
}

function describeSparseTensor(t) {
  const tag = t.sparseIndexType();
  return {
    type: describeType(t.typeType(), (obj) => t.type(obj), 'SparseTensor.type'),
    shape: describeShape(t),
    nonZeroLength: i64(t.nonZeroLength()),
    sparseIndexType: SparseTensorIndex[tag] ?? `?${tag}`,
    sparseIndex: describeSparseIndex(tag, unionToSparseTensorIndex(tag, (obj) => t.sparseIndex(obj))),
    data: describeBuffer(t.data(), 'SparseTensor.data'),
  };
}

function describeHeader(tag, h) {
  if (h === null) throw new Error(`Message.header is missing (header_type ${tag})`);
  switch (tag) {
    case MessageHeader.Schema:
      return describeSchema(h);
    case MessageHeader.DictionaryBatch:
      return { id: i64(h.id()), data: describeRecordBatch(h.data(), 'DictionaryBatch.data'), isDelta: h.isDelta() };
    case MessageHeader.RecordBatch:
      return describeRecordBatch(h, 'RecordBatch');
    case MessageHeader.Tensor:
      return describeTensor(h);
    case MessageHeader.SparseTensor:
      return describeSparseTensor(h);
    default:
      throw new Error(`Message.header_type ${tag} is not a MessageHeader`);
  }
}

/** Describes the Message FlatBuffer in `bytes` (a Uint8Array). */
export function describeMessage(bytes) {
  // A private copy: the generated classes read through typed views that
  // assume nothing about the caller's buffer.
  const bb = new flatbuffers.ByteBuffer(new Uint8Array(bytes));
  const m = Message.getRootAsMessage(bb);
  const tag = m.headerType();
  return {
    version: m.version(),
    bodyLength: i64(m.bodyLength()),
    customMetadata: describeMetadata(m),
    headerType: MessageHeader[tag] ?? `?${tag}`,
    header: describeHeader(tag, unionToMessageHeader(tag, (obj) => m.header(obj))),
  };
}
