// Record batch interop, apache-arrow side: builds a table of two record
// batches (plus an empty one) covering the types quiver's rb_tool covers,
// with nulls, and writes it with tableToIPC as OUTDIR/js.arrows (stream) and
// OUTDIR/js.arrow (file), each with a .json description of every value.
//   node rb_write.mjs OUTDIR
import { writeFileSync } from 'node:fs';
import * as arrow from 'apache-arrow';
import { describeTable } from './rb_common.mjs';

const A = arrow;
const field = (name, type, nullable = true) => new A.Field(name, type, nullable);

// Value number i of a column (null where i % 5 == 3, as in rb_tool).
const isNull = (i) => i % 5 === 3;
const sv = (i) => ((i * 37) % 120) - 60;
const text = (i) => (i % 7 === 6 ? '' : `${i % 4 === 0 ? 'é€' : 'w'}${i}-${'abcdefghij'.slice(0, i % 9)}`);
const bytes = (i, n) => Uint8Array.from({ length: n ?? (i % 6) }, (_, k) => (i * 29 + k * 61) & 255);

// [name, type, value(i)] for vectorFromArray; value may return null.
const simple = [
  ['null', new A.Null(), () => null],
  ['bool', new A.Bool(), (i) => i % 3 === 0],
  ['int8', new A.Int8(), (i) => sv(i)],
  ['uint8', new A.Uint8(), (i) => 250 - i],
  ['int16', new A.Int16(), (i) => sv(i) * 500],
  ['uint16', new A.Uint16(), (i) => 65535 - i * 11],
  ['int32', new A.Int32(), (i) => sv(i) * 30000001],
  ['uint32', new A.Uint32(), (i) => 4294967295 - i * 7],
  ['int64', new A.Int64(), (i) => BigInt(sv(i)) * 153722867280912929n - 3n],
  ['uint64', new A.Uint64(), (i) => 18446744073709551615n - BigInt(i) * 1000003n],
  ['float16', new A.Float16(), (i) => sv(i) * 0.5],
  ['float32', new A.Float32(), (i) => sv(i) * 0.125],
  ['float64', new A.Float64(), (i) => sv(i) * 0.1],
  ['decimal128', new A.Decimal(5, 30, 128), (i) => {
    // unscaled value sv(i) * 10^25 + i: beyond 64 bits
    const v = BigInt.asUintN(128, BigInt(sv(i)) * 10n ** 25n + BigInt(i));
    return Uint32Array.from({ length: 4 }, (_, k) => Number((v >> BigInt(32 * k)) & 0xffffffffn));
  }],
  ['date32', new A.DateDay(), (i) => sv(i) * 86400000 * 300],
  ['date64', new A.DateMillisecond(), (i) => BigInt(sv(i)) * 86400000n * 300n + 17n],
  ['time32_s', new A.TimeSecond(), (i) => (i * 991) % 86400],
  ['time32_ms', new A.TimeMillisecond(), (i) => (i * 9999991) % 86400000],
  ['time64_us', new A.TimeMicrosecond(), (i) => BigInt(i) * 3600000001n],
  ['time64_ns', new A.TimeNanosecond(), (i) => BigInt(i) * 3600000000001n],
  ['duration_s', new A.Duration(A.TimeUnit.SECOND), (i) => BigInt(sv(i)) * 99999999999n],
  ['duration_ms', new A.Duration(A.TimeUnit.MILLISECOND), (i) => BigInt(sv(i)) * 7n],
  ['duration_us', new A.Duration(A.TimeUnit.MICROSECOND), (i) => BigInt(sv(i)) * 123456789012345n],
  ['duration_ns', new A.Duration(A.TimeUnit.NANOSECOND), (i) => BigInt(sv(i)) * 153722867280912929n + 1n],
  ['interval_ym', new A.IntervalYearMonth(), (i) => Int32Array.of(Math.trunc(sv(i) / 12), sv(i) % 12)],
  ['interval_dt', new A.IntervalDayTime(), (i) => Int32Array.of(sv(i), sv(i) * 86399999)],
  ['interval_mdn', new A.IntervalMonthDayNano(), (i) => {
    const ns = BigInt.asUintN(64, BigInt(sv(i)) * 86400000000001n);
    return Int32Array.of(i, -sv(i), Number(ns & 0xffffffffn) | 0, Number(ns >> 32n) | 0);
  }],
  ['utf8', new A.Utf8(), text],
  ['large_utf8', new A.LargeUtf8(), (i) => text(i + 5)],
  ['binary', new A.Binary(), (i) => bytes(i)],
  ['large_binary', new A.LargeBinary(), (i) => bytes(i + 2)],
  ['fixed_binary', new A.FixedSizeBinary(4), (i) => bytes(i, 4)],
  ['list_int32', new A.List(field('item', new A.Int32())), (i) => Array.from({ length: i % 4 }, (_, k) => (k === 1 ? null : i * 10 + k))],
  ['large_list_utf8', new A.LargeList(field('item', new A.Utf8())), (i) => Array.from({ length: i % 3 }, (_, k) => text(i + k))],
  ['fixed_list_int16', new A.FixedSizeList(3, field('item', new A.Int16())), (i) => [i, -i, isNull(i + 1) ? null : 7]],
  ['struct', new A.Struct([field('a', new A.Int32()), field('b', new A.Utf8()), field('c', new A.List(field('item', new A.Float64())))]),
    (i) => ({ a: isNull(i + 2) ? null : i * 3, b: text(i), c: [i * 0.5, -1.25] })],
  ['list_of_struct', new A.List(field('item', new A.Struct([field('x', new A.Int64()), field('y', new A.Bool())]))),
    (i) => Array.from({ length: i % 3 }, (_, k) => ({ x: BigInt(i * 100 + k) * 99999999999n, y: k === 0 }))],
  ['map', new A.Map_(field('entries', new A.Struct([field('key', new A.Utf8(), false), field('value', new A.Int32())]))),
    (i) => new Map(Array.from({ length: i % 4 }, (_, k) => [`k${i}.${k}`, k === 2 ? null : i * k]))],
];

// Dictionary columns [name, index type]. Stream batches each get their own
// dictionary (written as replacements); file batches share one dictionary
// Vector that batch 2 extends by a chunk (written as a delta).
const dicts = [['dict_utf8', new A.Int32()], ['dict_int8_utf8', new A.Int8()]];
const words = ['red', 'green', 'blue', 'é€', 'violet', ''];
const dict0 = A.vectorFromArray(words.slice(0, 4), new A.Utf8());
const dictGrown = dict0.concat(A.vectorFromArray(words.slice(4), new A.Utf8()));
const dictIndex = (i, size) => (i * 5 + 1) % size;

// Unions go through a builder that is told which child each value is for.
function unionVector(type, idx, childOf, value) {
  const b = A.makeBuilder({ type, valueToChildTypeId: (_b, _v, k) => childOf(idx[k]) });
  idx.forEach((i) => b.append(value(i)));
  return b.finish().toVector();
}

// The sparse union builder of apache-arrow 21.2.0 leaves the children
// shorter than the union (invalid), so that one is made from full-length
// children directly.
const sparseType = new A.SparseUnion([0, 1, 2], [field('a', new A.Int32()), field('b', new A.Utf8()), field('c', new A.Bool())]);
const sparseChild = [(i) => i * 7, (i) => text(i), (i) => i % 2 === 0];
function sparseVector(idx) {
  const children = sparseChild.map((f, c) =>
    A.vectorFromArray(idx.map((i) => (i % 3 === c && !isNull(i) ? f(i) : null)), sparseType.children[c].type).data[0]);
  return A.makeVector(A.makeData({ type: sparseType, length: idx.length, nullCount: 0,
    typeIds: Int8Array.from(idx, (i) => i % 3), children }));
}

const validity = (idx) => {
  const valid = new Uint8Array(Math.ceil(idx.length / 8) || 1);
  idx.forEach((i, k) => { if (!isNull(i)) valid[k >> 3] |= 1 << (k & 7); });
  return valid;
};

const unions = [
  ['dense_union', new A.DenseUnion([5, 9], [field('a', new A.Float64()), field('b', new A.Utf8())]),
    (i) => [5, 9][i % 2], (i) => [i * 0.75, text(i)][i % 2]],
];

// One batch of rows [first, first + n); dict: the dictionary Vector to use,
// or null for one made from the batch's values.
function batchTable(first, n, dict) {
  const cols = {};
  const idx = Array.from({ length: n }, (_, k) => first + k);
  const nulls = idx.filter(isNull).length;
  for (const [name, type, value] of simple) {
    cols[name] = A.vectorFromArray(idx.map((i) => (isNull(i) ? null : value(i))), type);
  }
  // Timestamps from raw 64-bit values: the builders take epoch milliseconds
  // as doubles, which cannot hold every nanosecond value.
  const ts = [['timestamp_s', A.TimeUnit.SECOND, null], ['timestamp_ms_utc', A.TimeUnit.MILLISECOND, 'UTC'],
    ['timestamp_us_tokyo', A.TimeUnit.MICROSECOND, 'Asia/Tokyo'], ['timestamp_ns', A.TimeUnit.NANOSECOND, '-03:00']];
  for (const [name, unit, tz] of ts) {
    const vals = BigInt64Array.from(idx, (i) => (isNull(i) ? 0n : BigInt(sv(i)) * 153722867280912929n + BigInt(unit)));
    cols[name] = A.makeVector(A.makeData({ type: new A.Timestamp(unit, tz), length: n, nullCount: nulls, nullBitmap: validity(idx), data: vals }));
  }
  for (const [name, indexType] of dicts) {
    const type = new A.Dictionary(new A.Utf8(), indexType);
    if (dict) {
      const IndexArray = indexType.ArrayType;
      cols[name] = A.makeVector(A.makeData({ type, length: n, nullCount: nulls, nullBitmap: validity(idx),
        data: IndexArray.from(idx, (i) => (isNull(i) ? 0 : dictIndex(i, dict.length))), dictionary: dict }));
    } else {
      cols[name] = A.vectorFromArray(idx.map((i) => (isNull(i) ? null : words[dictIndex(i, 6)])), type);
    }
  }
  cols.sparse_union = sparseVector(idx);
  for (const [name, type, childOf, value] of unions) {
    cols[name] = unionVector(type, idx, childOf, value);
  }
  return new A.Table(cols);
}

const outDir = process.argv[2];
if (!outDir) {
  console.error('usage: node rb_write.mjs OUTDIR');
  process.exit(2);
}
const streamTable = batchTable(0, 11, null).concat(batchTable(11, 0, null), batchTable(11, 8, null));
const fileTable = batchTable(0, 11, dict0).concat(batchTable(11, 0, dict0), batchTable(11, 8, dictGrown));
for (const [name, format, table] of [['js.arrows', 'stream', streamTable], ['js.arrow', 'file', fileTable]]) {
  const description = describeTable(table);
  writeFileSync(`${outDir}/${name}`, A.tableToIPC(table, format));
  writeFileSync(`${outDir}/${name}.json`, JSON.stringify(description, null, 1));
  console.log(`wrote ${outDir}/${name}: ${description.fields.length} columns, ${description.batches.map((b) => b.length).join('+')} rows`);
}
