#!/usr/bin/env node
// The JavaScript half of the metadata interop test (driven by
// tests/scripts/test_js_interop.sh):
//   check DIR     decode every DIR/NAME.bin written by quiver with the
//                 apache-arrow fb classes and compare with DIR/NAME.json
//   build DIR     build jsSamples with the apache-arrow fb builders into
//                 DIR/NAME.bin + DIR/NAME.json
//   compare DIR   compare DIR/NAME.json with DIR/NAME.dump.json (quiver's
//                 decoding, from `qv_metadata_tool dump`) for every NAME.bin
//   selftest DIR  prove on a copy of quiver's samples that a changed value,
//                 in the bytes or in the JSON, is reported
//   frames FILE DIR  split the encapsulated messages of an Arrow stream FILE
//                 (written by the quiver CLI) into DIR/NAME.bin and describe
//                 each with the fb classes into DIR/NAME.json
// Exits 1 on any difference, naming the message and the field.
import { mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildMessage } from './build.mjs';
import { compareJson } from './compare.mjs';
import { describeMessage } from './describe.mjs';
import { jsSamples } from './samples.mjs';

const ALL_TYPES = [
  'Null', 'Int', 'FloatingPoint', 'Binary', 'Utf8', 'Bool', 'Decimal', 'Date', 'Time', 'Timestamp',
  'Interval', 'List', 'Struct_', 'Union', 'FixedSizeBinary', 'FixedSizeList', 'Map', 'Duration',
  'LargeBinary', 'LargeUtf8', 'LargeList', 'RunEndEncoded', 'BinaryView', 'Utf8View', 'ListView',
  'LargeListView',
];
const ALL_HEADERS = ['Schema', 'DictionaryBatch', 'RecordBatch', 'Tensor', 'SparseTensor'];
const ALL_SPARSE = ['SparseTensorIndexCOO', 'SparseMatrixIndexCSX-0', 'SparseMatrixIndexCSX-1', 'SparseTensorIndexCSF'];

function readJson(path) {
  return JSON.parse(readFileSync(path, 'utf8'));
}

function binNames(dir) {
  const names = readdirSync(dir)
    .filter((f) => f.endsWith('.bin'))
    .map((f) => f.slice(0, -4))
    .sort();
  if (names.length === 0) throw new Error(`no .bin files in ${dir}`);
  return names;
}

// What a set of messages exercises, so that losing a sample is an error too.
function coverage(descriptions) {
  const seen = new Set();
  const fields = (list) => {
    for (const f of list) {
      seen.add(`type:${f.type.name}`);
      fields(f.children);
    }
  };
  for (const m of descriptions) {
    seen.add(`header:${m.headerType}`);
    const h = m.header;
    if (m.headerType === 'Schema') fields(h.fields);
    if (m.headerType === 'Tensor' || m.headerType === 'SparseTensor') seen.add(`type:${h.type.name}`);
    if (m.headerType === 'SparseTensor') {
      const axis = h.sparseIndexType === 'SparseMatrixIndexCSX' ? `-${h.sparseIndex.compressedAxis}` : '';
      seen.add(`sparse:${h.sparseIndexType}${axis}`);
    }
  }
  const wanted = [
    ...ALL_TYPES.map((x) => `type:${x}`),
    ...ALL_HEADERS.map((x) => `header:${x}`),
    ...ALL_SPARSE.map((x) => `sparse:${x}`),
  ];
  return wanted.filter((w) => !seen.has(w));
}

function report(failures, what) {
  for (const f of failures) console.error(`MISMATCH ${f}`);
  if (failures.length) throw new Error(`${what}: ${failures.length} difference(s)`);
}

function diffsOf(name, expected, actual) {
  return compareJson(expected, actual).map((d) => `${name}: ${d}`);
}

function check(dir) {
  const names = binNames(dir);
  const failures = [];
  const described = [];
  for (const name of names) {
    let actual;
    try {
      actual = describeMessage(readFileSync(join(dir, `${name}.bin`)));
    } catch (e) {
      failures.push(`${name}: apache-arrow classes could not read it: ${e.message}`);
      continue;
    }
    described.push(actual);
    failures.push(...diffsOf(name, readJson(join(dir, `${name}.json`)), actual));
  }
  const missing = coverage(described);
  if (missing.length) failures.push(`quiver samples do not cover ${missing.join(', ')}`);
  report(failures, 'quiver->js');
  console.log(`quiver->js: ${names.length} messages decoded by apache-arrow match quiver's description`);
}

function build(dir) {
  mkdirSync(dir, { recursive: true });
  const failures = [];
  for (const s of jsSamples) {
    const bytes = buildMessage(s.message, s.options);
    // The builders' output must read back as described before quiver is
    // blamed for any difference.
    failures.push(...diffsOf(`${s.name} (js self-check)`, s.message, describeMessage(bytes)));
    writeFileSync(join(dir, `${s.name}.bin`), bytes);
    writeFileSync(join(dir, `${s.name}.json`), `${JSON.stringify(s.message, null, 1)}\n`);
  }
  const missing = coverage(jsSamples.map((s) => s.message));
  if (missing.length) failures.push(`js samples do not cover ${missing.join(', ')}`);
  report(failures, 'js build');
  console.log(`js build: ${jsSamples.length} messages written to ${dir}`);
}

function compare(dir) {
  const names = binNames(dir);
  const failures = [];
  for (const name of names) {
    failures.push(...diffsOf(name, readJson(join(dir, `${name}.json`)), readJson(join(dir, `${name}.dump.json`))));
  }
  report(failures, `quiver decoding of ${dir}`);
  console.log(`compare: ${names.length} messages decoded by quiver match their description`);
}

// Negative controls: the comparison must notice one changed byte or value.
function selftest(dir) {
  const name = 'schema_types';
  const bytes = readFileSync(join(dir, `${name}.bin`));
  const expected = readJson(join(dir, `${name}.json`));
  if (diffsOf(name, expected, describeMessage(bytes)).length !== 0) throw new Error(`selftest: ${name} already differs (see check)`);

  const at = bytes.indexOf('Europe/Paris');
  if (at < 0) throw new Error('selftest: timezone string not found in the sample');
  const patched = Buffer.from(bytes);
  patched[at + 11] = 'z'.charCodeAt(0);
  const byteDiffs = diffsOf(name, expected, describeMessage(patched));
  if (byteDiffs.length !== 1 || !byteDiffs[0].includes('(ts_tz).type.timezone: expected "Europe/Paris", got "Europe/Pariz"'))
    throw new Error(`selftest: a patched byte gave ${JSON.stringify(byteDiffs)}`);

  const edited = structuredClone(expected);
  edited.header.fields[0].type.bitWidth = 16;
  edited.header.fields.find((f) => f.name === 'struct').children.pop();
  delete edited.bodyLength;
  const valueDiffs = diffsOf(name, edited, describeMessage(bytes));
  if (valueDiffs.length !== 3) throw new Error(`selftest: edited JSON gave ${JSON.stringify(valueDiffs)}`);
  console.log('selftest: a changed byte and changed values are reported');
}

// Encapsulated messages: 0xFFFFFFFF, int32 metadata length, FlatBuffer
// (+ padding), body of Message.bodyLength bytes.
function frames(file, dir) {
  mkdirSync(dir, { recursive: true });
  const bytes = readFileSync(file);
  const base = file.split('/').pop().replace(/\.[^.]*$/, '');
  let pos = 0;
  let n = 0;
  while (pos + 8 <= bytes.length) {
    if (bytes.readUInt32LE(pos) !== 0xffffffff) throw new Error(`${file}: no continuation marker at ${pos}`);
    const len = bytes.readInt32LE(pos + 4);
    if (len === 0) break;
    const fb = bytes.subarray(pos + 8, pos + 8 + len);
    const described = describeMessage(fb);
    const name = `${base}_${n}`;
    writeFileSync(join(dir, `${name}.bin`), fb);
    writeFileSync(join(dir, `${name}.json`), `${JSON.stringify(described, null, 1)}\n`);
    pos += 8 + len + Number(BigInt(described.bodyLength ?? '0'));
    n++;
  }
  if (n === 0) throw new Error(`${file}: no message`);
  console.log(`frames: ${n} message(s) of ${file} described by apache-arrow`);
}

const [command, dir, dir2] = process.argv.slice(2);
const commands = { check, build, compare, selftest, frames };
if (!commands[command] || !dir || (command === 'frames' && !dir2)) {
  console.error('usage: node interop.mjs check|build|compare|selftest DIR | frames FILE DIR');
  process.exit(2);
}
try {
  commands[command](dir, dir2);
} catch (e) {
  console.error(`js interop ${command} failed: ${e.message}`);
  process.exit(1);
}
