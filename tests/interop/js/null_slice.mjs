// A table whose Null column comes from slicing: apache-arrow writes
// null_count = -1 ("unknown") in that column's field node. Writes
// OUTDIR/null_slice.arrows (stream) and OUTDIR/null_slice.arrow (file) with
// tableToIPC, and prints the null counts of the field nodes it wrote so the
// test can prove the -1 is there.
//   node null_slice.mjs OUTDIR
import { writeFileSync } from 'node:fs';
import * as arrow from 'apache-arrow';

const out = process.argv[2];
const table = arrow.tableFromArrays({
  n: arrow.vectorFromArray([null, null, null, null, null], new arrow.Null()),
  x: Int32Array.from([10, 20, 30, 40, 50]),
}).slice(1, 4);
writeFileSync(`${out}/null_slice.arrows`, arrow.tableToIPC(table, 'stream'));
writeFileSync(`${out}/null_slice.arrow`, arrow.tableToIPC(table, 'file'));
// what the writer put in the batch's field nodes
const reader = arrow.MessageReader
  ? new arrow.MessageReader(arrow.tableToIPC(table, 'stream'))
  : null;
const counts = [];
if (reader) {
  for (const m of reader) {
    if (m.isRecordBatch()) for (const n of m.header().nodes) counts.push(Number(n.nullCount));
  }
}
console.log(JSON.stringify({ nullCounts: counts }));
