// Integration JSON, apache-arrow side of tests/scripts/test_js_integration.sh:
// arrow-js's own integration JSON reader (RecordBatchReader.from on the
// parsed JSON) and writer (RecordBatchJSONWriter), which its integration
// tests use.
//   node integration.mjs json-to-arrow IN.json OUT.arrow   JSON -> Arrow file
//   node integration.mjs arrow-to-json IN.arrow OUT.json   Arrow file/stream -> JSON
//   node integration.mjs json-to-json IN.json OUT.json     JSON -> arrow-js -> JSON
//   node integration.mjs validate IN.json IN.arrow         the two hold the same
//       schema (names, types, dictionary encoding) and the same values
// Exit status 1 and the differences on stderr when anything differs.
import { readFileSync, writeFileSync } from 'node:fs';
import * as arrow from 'apache-arrow';
import { describeTable, differences } from './rb_common.mjs';

function readJson(path) {
  const reader = arrow.RecordBatchReader.from(JSON.parse(readFileSync(path, 'utf8')));
  return new arrow.Table(reader.schema, [...reader]);
}

function readArrow(path) {
  const reader = arrow.RecordBatchReader.from(readFileSync(path));
  return new arrow.Table(reader.schema, [...reader]);
}

// The batches as they were (an empty batch included): describeTable takes
// table.batches, which a Table built from the reader's batches keeps.
const [mode, a, b] = process.argv.slice(2);
switch (mode) {
  case 'json-to-arrow': {
    const table = readJson(a);
    writeFileSync(b, arrow.RecordBatchFileWriter.writeAll(table).toUint8Array(true));
    break;
  }
  case 'arrow-to-json': {
    const table = readArrow(a);
    writeFileSync(b, arrow.RecordBatchJSONWriter.writeAll(table).toString(true));
    break;
  }
  case 'json-to-json': {
    const table = readJson(a);
    writeFileSync(b, arrow.RecordBatchJSONWriter.writeAll(table).toString(true));
    break;
  }
  case 'validate': {
    const want = describeTable(readJson(a));
    const got = describeTable(readArrow(b));
    const diffs = differences(got, want);
    if (diffs.length) {
      console.error(`FAIL: ${b} differs from ${a}: ${diffs.length} difference(s)`);
      for (const d of diffs.slice(0, 40)) console.error(`  ${d}`);
      process.exit(1);
    }
    console.log(`ok: ${b} holds ${a}`);
    break;
  }
  default:
    console.error('usage: node integration.mjs json-to-arrow|arrow-to-json|json-to-json|validate A B');
    process.exit(2);
}
