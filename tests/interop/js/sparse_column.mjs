// quiver's sparse and migrated tensor columns read by apache-arrow as plain
// nested data (tests/scripts/test_js_sparse_column.sh):
//   node sparse_column.mjs IN.arrow NAME   prints the field's extension name,
//   metadata, storage type and every row as JSON (lists as arrays, structs
//   as objects, 64-bit integers as numbers, null as null).
import { readFileSync } from 'node:fs';
import * as A from 'apache-arrow';

const [path, name] = process.argv.slice(2);

function plain(v) {
  if (v === null || v === undefined) return null;
  if (typeof v === 'bigint') return Number(v);
  if (typeof v !== 'object') return v;
  if (ArrayBuffer.isView(v)) return Array.from(v, plain);
  if (v instanceof A.Vector) return Array.from(v, plain);
  if (typeof v.toJSON === 'function') {
    const o = v.toJSON();
    if (Array.isArray(o)) return o.map(plain);
    const out = {};
    for (const [k, x] of Object.entries(o)) out[k] = plain(x);
    return out;
  }
  if (typeof v[Symbol.iterator] === 'function') return Array.from(v, plain);
  return v;
}

const table = A.tableFromIPC(readFileSync(path));
const field = table.schema.fields.find((f) => f.name === name);
if (!field) {
  console.error(`no field ${name}`);
  process.exit(1);
}
const col = table.getChild(name);
const rows = [];
for (let i = 0; i < col.length; i++) rows.push(plain(col.get(i)));
console.log(JSON.stringify({
  extension: field.metadata.get('ARROW:extension:name'),
  metadata: field.metadata.get('ARROW:extension:metadata'),
  type: String(field.type),
  rows,
}));
