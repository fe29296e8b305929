// Describes apache-arrow tables in the JSON shape of tests/interop/rb_tool.c
// (see the comment at its top) and compares two such descriptions.
import * as arrow from 'apache-arrow';

const { Type, TimeUnit, DateUnit, IntervalUnit, UnionMode, Precision } = arrow;

const UNIT = { [TimeUnit.SECOND]: 's', [TimeUnit.MILLISECOND]: 'm', [TimeUnit.MICROSECOND]: 'u', [TimeUnit.NANOSECOND]: 'n' };

function intFormat(t) {
  const f = { 8: 'c', 16: 's', 32: 'i', 64: 'l' }[t.bitWidth];
  if (!f) throw new Error(`int bit width ${t.bitWidth}`);
  return t.isSigned ? f : f.toUpperCase();
}

// C Data Interface format string with children in parentheses and a
// dictionary's value type in braces, decimals as d:P,S,W.
export function typeString(t) {
  if (t.typeId === Type.Dictionary) return `${intFormat(t.indices)}{${typeString(t.dictionary)}}`;
  let f;
  switch (t.typeId) {
    case Type.Null: f = 'n'; break;
    case Type.Bool: f = 'b'; break;
    case Type.Int: f = intFormat(t); break;
    case Type.Float: f = { [Precision.HALF]: 'e', [Precision.SINGLE]: 'f', [Precision.DOUBLE]: 'g' }[t.precision]; break;
    case Type.Decimal: f = `d:${t.precision},${t.scale},${t.bitWidth}`; break;
    case Type.Date: f = t.unit === DateUnit.DAY ? 'tdD' : 'tdm'; break;
    case Type.Time: f = `tt${UNIT[t.unit]}`; break;
    case Type.Timestamp: f = `ts${UNIT[t.unit]}:${t.timezone ?? ''}`; break;
    case Type.Duration: f = `tD${UNIT[t.unit]}`; break;
    case Type.Interval:
      f = { [IntervalUnit.YEAR_MONTH]: 'tiM', [IntervalUnit.DAY_TIME]: 'tiD', [IntervalUnit.MONTH_DAY_NANO]: 'tin' }[t.unit];
      break;
    case Type.Utf8: f = 'u'; break;
    case Type.LargeUtf8: f = 'U'; break;
    case Type.Binary: f = 'z'; break;
    case Type.LargeBinary: f = 'Z'; break;
    case Type.FixedSizeBinary: f = `w:${t.byteWidth}`; break;
    case Type.List: f = '+l'; break;
    case Type.LargeList: f = '+L'; break;
    case Type.FixedSizeList: f = `+w:${t.listSize}`; break;
    case Type.Struct: f = '+s'; break;
    case Type.Map: f = '+m'; break;
    case Type.Union: f = `+u${t.mode === UnionMode.Sparse ? 's' : 'd'}:${Array.from(t.typeIds).join(',')}`; break;
    default: throw new Error(`type not covered by the test: ${t}`);
  }
  if (f === undefined) throw new Error(`unknown variant of ${t}`);
  const kids = t.children ?? [];
  if (kids.length) f += `(${kids.map((c) => typeString(c.type)).join(';')})`;
  return f;
}

const hex = (u8) => Array.from(u8, (b) => b.toString(16).padStart(2, '0')).join('');

// 64-bit value number i of a buffer read as BigInt64Array or Int32Array pairs.
function raw64(values, i, signed = true) {
  if (values instanceof BigInt64Array || values instanceof BigUint64Array) return values[i];
  const lo = BigInt(values[2 * i] >>> 0);
  const hi = BigInt(values[2 * i + 1] | 0);
  const v = (hi << 32n) | lo;
  return signed ? v : BigInt.asUintN(64, v);
}

// Little-endian two's complement from 32-bit words.
function wordsToBigInt(words) {
  let v = 0n;
  for (let k = words.length - 1; k >= 0; k--) v = (v << 32n) | BigInt(words[k] >>> 0);
  return BigInt.asIntN(32 * words.length, v);
}

const vectors = new WeakMap();
function vectorOf(data) {
  let v = vectors.get(data);
  if (!v) vectors.set(data, (v = arrow.makeVector(data)));
  return v;
}

// Value i of a Vector that may have several chunks (dictionaries).
function vectorCell(vec, i) {
  for (const d of vec.data) {
    if (i < d.length) return cell(d, i);
    i -= d.length;
  }
  throw new Error(`index ${i} past the end of a vector`);
}

// Cell i of an arrow Data. arrow-js slices the value/offset/type-id buffers
// of a Data to its offset (only the validity bitmap is indexed with it), so
// every index below is relative to the Data.
export function cell(data, i) {
  const t = data.type;
  if (t.typeId === Type.Union) {
    const code = data.typeIds[i];
    const child = data.children[t.typeIdToChildIndex[code]];
    const idx = t.mode === UnionMode.Dense ? Number(data.valueOffsets[i]) : i;
    return [code, cell(child, idx)];
  }
  if (t.typeId === Type.Null || !data.getValid(i)) return null;
  switch (t.typeId) {
    case Type.Dictionary: return vectorCell(data.dictionary, Number(data.values[i]));
    case Type.Bool:
    case Type.Float:
    case Type.Utf8:
    case Type.LargeUtf8: return vectorOf(data).get(i);
    case Type.Int:
      if (t.bitWidth === 64) return String(raw64(data.values, i, t.isSigned));
      return vectorOf(data).get(i);
    case Type.Date:
      if (t.unit === DateUnit.DAY) return data.values[i];
      return String(raw64(data.values, i));
    case Type.Time:
      if (t.bitWidth === 32) return data.values[i];
      return String(raw64(data.values, i));
    case Type.Timestamp:
    case Type.Duration: return String(raw64(data.values, i));
    case Type.Decimal: {
      const w = t.bitWidth / 32;
      return String(wordsToBigInt(data.values.subarray(w * i, w * (i + 1))));
    }
    case Type.Interval: {
      const v = data.values;
      if (t.unit === IntervalUnit.YEAR_MONTH) return v[i];
      if (t.unit === IntervalUnit.DAY_TIME) return [v[2 * i], v[2 * i + 1]];
      return [v[4 * i], v[4 * i + 1], String(wordsToBigInt(v.subarray(4 * i + 2, 4 * i + 4)))];
    }
    case Type.Binary:
    case Type.LargeBinary:
    case Type.FixedSizeBinary: return hex(vectorOf(data).get(i));
    case Type.List:
    case Type.LargeList:
    case Type.FixedSizeList: {
      let start, end;
      if (t.typeId === Type.FixedSizeList) {
        start = i * t.listSize;
        end = start + t.listSize;
      } else {
        start = Number(data.valueOffsets[i]);
        end = Number(data.valueOffsets[i + 1]);
      }
      const out = [];
      for (let k = start; k < end; k++) out.push(cell(data.children[0], k));
      return out;
    }
    case Type.Map: {
      const entries = data.children[0];
      const out = [];
      for (let k = Number(data.valueOffsets[i]); k < Number(data.valueOffsets[i + 1]); k++)
        out.push([cell(entries.children[0], k), cell(entries.children[1], k)]);
      return out;
    }
    case Type.Struct: {
      const out = {};
      t.children.forEach((f, k) => { out[f.name] = cell(data.children[k], i); });
      return out;
    }
    default: throw new Error(`type not covered by the test: ${t}`);
  }
}

// {"fields", "batches"} of a Table, one entry per record batch.
export function describeTable(table) {
  return {
    fields: table.schema.fields.map((f) => ({ name: f.name, type: typeString(f.type) })),
    batches: table.batches.map((b) => ({
      length: b.numRows,
      columns: b.schema.fields.map((_, k) => {
        const d = b.data.children[k];
        const out = [];
        for (let r = 0; r < b.numRows; r++) out.push(cell(d, r));
        return out;
      }),
    })),
  };
}

// Every difference between two descriptions, as "path: got X, expected Y".
export function differences(got, want, path = '$', out = []) {
  if (out.length > 50) return out;
  const isObj = (x) => x !== null && typeof x === 'object';
  if (Array.isArray(want) || Array.isArray(got)) {
    if (!Array.isArray(want) || !Array.isArray(got) || want.length !== got.length) {
      out.push(`${path}: got ${JSON.stringify(got)}, expected ${JSON.stringify(want)}`);
      return out;
    }
    want.forEach((w, k) => differences(got[k], w, `${path}[${k}]`, out));
  } else if (isObj(want) && isObj(got)) {
    const keys = new Set([...Object.keys(want), ...Object.keys(got)]);
    for (const k of keys) differences(got[k], want[k], `${path}.${k}`, out);
  } else if (!Object.is(got, want)) {
    out.push(`${path}: got ${JSON.stringify(got)}, expected ${JSON.stringify(want)}`);
  }
  return out;
}
