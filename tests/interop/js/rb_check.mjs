// Record batch interop, apache-arrow side of tests/scripts/test_js_rb_interop.sh.
//   node rb_check.mjs check FILE FILE.json   read FILE (stream or file) with
//       tableFromIPC and with RecordBatchReader; every field type and cell
//       must equal the description (written by rb_tool).
//   node rb_check.mjs compare GOT.json WANT.json   the two descriptions are equal.
// Exit status 1 and the differences on stderr when anything differs.
import { readFileSync } from 'node:fs';
import * as arrow from 'apache-arrow';
import { describeTable, differences } from './rb_common.mjs';

function report(what, diffs) {
  if (diffs.length === 0) {
    console.log(`ok: ${what}`);
    return true;
  }
  console.error(`FAIL: ${what}: ${diffs.length} difference(s)`);
  for (const d of diffs.slice(0, 40)) console.error(`  ${d}`);
  return false;
}

function check(file, jsonFile) {
  const bytes = readFileSync(file);
  const want = JSON.parse(readFileSync(jsonFile, 'utf8'));
  let ok = true;
  const table = arrow.tableFromIPC(bytes);
  ok = report(`${file} via tableFromIPC`, differences(describeTable(table), want)) && ok;
  // The reader API yields the batches one at a time (deltas applied as they come).
  const reader = arrow.RecordBatchReader.from(bytes);
  const batches = [...reader];
  const viaReader = new arrow.Table(reader.schema, batches);
  ok = report(`${file} via RecordBatchReader (${reader.isFile() ? 'file' : 'stream'})`,
    differences(describeTable(viaReader), want)) && ok;
  const isFile = bytes.subarray(0, 6).toString('latin1') === 'ARROW1';
  if (reader.isFile() !== isFile) {
    console.error(`FAIL: ${file}: RecordBatchReader saw a ${reader.isFile() ? 'file' : 'stream'}`);
    ok = false;
  }
  return ok;
}

const [cmd, a, b] = process.argv.slice(2);
let ok;
if (cmd === 'check' && a && b) ok = check(a, b);
else if (cmd === 'compare' && a && b) {
  ok = report(`${a} equals ${b}`, differences(JSON.parse(readFileSync(a, 'utf8')), JSON.parse(readFileSync(b, 'utf8'))));
} else {
  console.error('usage: node rb_check.mjs check FILE FILE.json | compare GOT.json WANT.json');
  process.exit(2);
}
process.exit(ok ? 0 : 1);
