// Tensor extension columns, apache-arrow side (test_js_tensor_column.sh).
//   node tensor_column.mjs write OUT.arrows   a table with an
//        arrow.fixed_shape_tensor column (float32 cells [2, 3], dim names,
//        permutation [1, 0], cell 2 null) and an arrow.variable_shape_tensor
//        column (int32 cells of shape [2, k], uniform_shape [2, null])
//   node tensor_column.mjs read IN.arrow NAME  prints the field's extension
//        name and metadata and the flat cell values as JSON
import { readFileSync, writeFileSync } from 'node:fs';
import * as A from 'apache-arrow';

const ext = (name, meta) => new Map([['ARROW:extension:name', name], ['ARROW:extension:metadata', meta]]);
const [mode, path, name] = process.argv.slice(2);

if (mode === 'write') {
  const n = 4;
  const fixedMeta = '{"shape":[2,3],"dim_names":["rows","cols"],"permutation":[1,0]}';
  const fslType = new A.FixedSizeList(6, new A.Field('item', new A.Float32(), true));
  const values = Float32Array.from({ length: n * 6 }, (_, i) => i * 0.5);
  const validity = Uint8Array.from([0b1011]);
  const fixed = A.makeData({ type: fslType, length: n, nullCount: 1, nullBitmap: validity,
    child: A.makeData({ type: new A.Float32(), length: n * 6, data: values }) });

  const varMeta = '{"dim_names":["h","w"],"uniform_shape":[2,null]}';
  const dataField = new A.Field('data', new A.List(new A.Field('item', new A.Int32(), true)), false);
  const shapeField = new A.Field('shape', new A.FixedSizeList(2, new A.Field('item', new A.Int32(), false)), false);
  const ks = [1, 3, 0, 2];
  const offsets = new Int32Array(n + 1);
  for (let i = 0; i < n; i++) offsets[i + 1] = offsets[i] + 2 * ks[i];
  const flat = Int32Array.from({ length: offsets[n] }, (_, i) => i * 7 - 20);
  const shapes = Int32Array.from(ks.flatMap((k) => [2, k]));
  const dataData = A.makeData({ type: dataField.type, length: n, valueOffsets: offsets,
    child: A.makeData({ type: new A.Int32(), length: flat.length, data: flat }) });
  const shapeData = A.makeData({ type: shapeField.type, length: n,
    child: A.makeData({ type: new A.Int32(), length: 2 * n, data: shapes }) });
  const structType = new A.Struct([dataField, shapeField]);
  const variable = A.makeData({ type: structType, length: n, children: [dataData, shapeData] });

  const schema = new A.Schema([
    new A.Field('fixed', fslType, true, ext('arrow.fixed_shape_tensor', fixedMeta)),
    new A.Field('variable', structType, true, ext('arrow.variable_shape_tensor', varMeta)),
  ]);
  const batch = new A.RecordBatch(schema, A.makeData({ type: new A.Struct(schema.fields), length: n,
    children: [fixed, variable] }));
  writeFileSync(path, A.tableToIPC(new A.Table([batch]), 'stream'));
} else {
  const table = A.tableFromIPC(readFileSync(path));
  const field = table.schema.fields.find((f) => f.name === name);
  const col = table.getChild(name);
  const cells = [];
  for (let i = 0; i < col.length; i++) {
    const v = col.get(i);
    cells.push(v === null ? null : Array.from(v));
  }
  console.log(JSON.stringify({
    extension: field.metadata.get('ARROW:extension:name'),
    metadata: field.metadata.get('ARROW:extension:metadata'),
    cells,
  }));
}
