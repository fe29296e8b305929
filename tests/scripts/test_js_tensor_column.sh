#!/usr/bin/env bash
# Tensor extension columns with the apache-arrow npm package
# (tests/interop/js/tensor_column.mjs):
#   js -> quiver: a table with arrow.fixed_shape_tensor (dim names,
#                 permutation, a null cell) and arrow.variable_shape_tensor
#                 columns; quiver cat shows their metadata, tensor stack
#                 refuses the null cell and fills it on request, and NumPy sees
#                 the logical (permuted) cells, the variable shape column's
#                 cells differ in shape (exit 1 naming them); quiver rewrites the table as a
#                 file and JS reads the metadata back intact.
#   quiver -> js: tensor from-npy --as-column and tensor unstack tables read
#                 by JS with their extension name, shape and values.
# Skips (77) only when node, its npm packages or NumPy are missing.
. "$QV_SOURCE_DIR/tests/scripts/lib.sh"
qv_need_node
qv_need_python numpy
qv_tmpdir
(cd "$js" && node tensor_column.mjs write "$tmp/js.arrows") || { echo "FAIL: js write"; exit 1; }
exec "$py" - "$cli" "$js" "$tmp" <<'PY'
import json
import subprocess
import sys

import numpy as np
from checks import Checks

cli, js, tmp = sys.argv[1:4]
checks = Checks(cli, text=True)
check, run = checks.check, checks.run




def js_read(path, name):
    r = subprocess.run(["node", "tensor_column.mjs", "read", path, name], cwd=js,
                       capture_output=True, text=True)
    check(r.returncode == 0, f"js read {path}: {r.stderr}")
    return json.loads(r.stdout) if r.returncode == 0 else {}


r = run("cat", f"{tmp}/js.arrows")
check("fixed: extension<arrow.fixed_shape_tensor[value_type=float, shape=[2,3], permutation=[1,0], "
      "dim_names=[rows,cols]]>" in r.stdout,
      f"cat, fixed: {r.stdout}")
check("variable: extension<arrow.variable_shape_tensor[value_type=int32, ndim=2, dim_names=[h,w], "
      "uniform_shape=[2,null]]>" in r.stdout, f"cat, variable: {r.stdout}")
r = run("tensor", "stack", f"{tmp}/js.arrows", f"{tmp}/t.arrow", "--column", "fixed")
check(r.returncode == 1 and "cell 2 is null" in r.stderr, f"null refused: {r.stderr}")
r = run("tensor", "stack", f"{tmp}/js.arrows", f"{tmp}/t.arrow", "--column", "fixed",
        "--fill-nulls")
check(r.returncode == 0, f"stack --fill-nulls: {r.stderr}")
r = run("tensor", "to-npy", f"{tmp}/t.arrow", f"{tmp}/t.npy")
check(r.returncode == 0, f"to-npy: {r.stderr}")
t = np.load(f"{tmp}/t.npy")
want = (np.arange(24, dtype=np.float32) * 0.5).reshape(4, 2, 3).transpose(0, 2, 1).copy()
want[2] = 0
check(t.shape == (4, 3, 2) and np.array_equal(t, want), f"stacked values: {t}")
# JS's variable shape cells are [2, 1], [2, 3], [2, 0], [2, 2]: no one shape
r = run("tensor", "stack", f"{tmp}/js.arrows", f"{tmp}/v.arrow", "--column", "variable")
check(r.returncode == 1 and "cell 1 has shape [2, 3], cell 0 has [2, 1]" in r.stderr,
      f"variable shape cells of different shapes: {r.returncode} {r.stderr}")
# quiver rewrites JS's table as a file; JS reads the extension metadata back
with open(f"{tmp}/js.arrows", "rb") as f_in, open(f"{tmp}/q.arrow", "wb") as f_out:
    r = subprocess.run([cli, "stream-to-file"], stdin=f_in, stdout=f_out)
check(r.returncode == 0, "stream-to-file")
for name, ext, meta in (("fixed", "arrow.fixed_shape_tensor",
                         '{"shape":[2,3],"dim_names":["rows","cols"],"permutation":[1,0]}'),
                        ("variable", "arrow.variable_shape_tensor",
                         '{"dim_names":["h","w"],"uniform_shape":[2,null]}')):
    got = js_read(f"{tmp}/q.arrow", name)
    check(got.get("extension") == ext and got.get("metadata") == meta, f"{name} metadata: {got}")
got = js_read(f"{tmp}/q.arrow", "fixed")
check(got.get("cells", [None] * 3)[2] is None and got["cells"][1] == [3, 3.5, 4, 4.5, 5, 5.5],
      f"fixed cells: {got}")

# quiver -> js
for dt in ("int8", "uint16", "int32", "float32", "float64"):
    a = (np.arange(30) - 7).astype(dt).reshape(5, 2, 3)
    np.save(f"{tmp}/a.npy", a)
    r = run("tensor", "from-npy", f"{tmp}/a.npy", f"{tmp}/col.arrow", "--as-column", "--name",
            "cells", "--file")
    check(r.returncode == 0, f"{dt}: from-npy --as-column: {r.stderr}")
    got = js_read(f"{tmp}/col.arrow", "cells")
    check(got.get("extension") == "arrow.fixed_shape_tensor"
          and json.loads(got.get("metadata", "{}")) == {"shape": [2, 3]}, f"{dt}: {got}")
    check(got.get("cells") == [list(map(float if dt.startswith("f") else int, c.ravel()))
                               for c in a], f"{dt}: cells {got.get('cells')}")
    r = run("tensor", "from-npy", f"{tmp}/a.npy", f"{tmp}/t.arrow")
    r = run("tensor", "unstack", f"{tmp}/t.arrow", f"{tmp}/u.arrows", "--name", "u")
    check(r.returncode == 0, f"{dt}: unstack: {r.stderr}")
    got = js_read(f"{tmp}/u.arrows", "u")
    check(len(got.get("cells", [])) == 5, f"{dt}: unstack cells: {got}")
checks.finish("js tensor column")
PY
