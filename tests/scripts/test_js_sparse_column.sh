#!/usr/bin/env bash
# apache-arrow (npm, tests/interop/js/sparse_column.mjs) reads what quiver
# writes as plain nested data with the expected values: a quiver.sparse_vector
# table (tensor unstack of a CSR message), migrated quiver.sparse_tensor
# tables (COO with coordinates, CSR with indptr), migrated dense tables
# (arrow.fixed_shape_tensor with a permutation: the physical values;
# arrow.variable_shape_tensor: data and shape per row). Every input is made
# here from NumPy arrays. Skips (77) only when node, its packages or NumPy
# are missing.
. "$QV_SOURCE_DIR/tests/scripts/lib.sh"
qv_need_node
qv_need_python numpy
qv_tmpdir
exec "$py" - "$cli" "$js" "$tmp" <<'PY'
import json
import subprocess
import sys

import numpy as np
from checks import Checks

cli, js, tmp = sys.argv[1:4]
checks = Checks(cli, text=True)
check, run = checks.check, checks.run


def ok(*args):
    r = run(*args)
    check(r.returncode == 0, f"{' '.join(args)}: {r.stderr}")
    return r


def js_read(path, name):
    r = subprocess.run(["node", "sparse_column.mjs", path, name], cwd=js, capture_output=True,
                       text=True)
    check(r.returncode == 0, f"js read {path}: {r.stderr}")
    return json.loads(r.stdout) if r.returncode == 0 else {"rows": []}


def cat(paths, out):
    with open(out, "wb") as f:
        for p in paths:
            with open(p, "rb") as g:
                f.write(g.read())


s = np.zeros((4, 6), dtype=np.float64)
s[0, 1], s[0, 5], s[2, 2], s[3, 0], s[3, 4] = 1.5, -2, 3, 4, 5
np.save(f"{tmp}/s.npy", s)
ok("tensor", "from-npy", f"{tmp}/s.npy", f"{tmp}/csr.arrow", "--sparse=csr", "--index-type=int32")
ok("tensor", "from-npy", f"{tmp}/s.npy", f"{tmp}/coo.arrow", "--sparse=coo")

# sparse vectors: row i is the list of (index, value) of row i
ok("tensor", "unstack", f"{tmp}/csr.arrow", f"{tmp}/v.arrows", "--name", "emb")
got = js_read(f"{tmp}/v.arrows", "emb")
check(got.get("extension") == "quiver.sparse_vector" and json.loads(got["metadata"])["size"] == 6,
      f"vector extension: {got.get('extension')} {got.get('metadata')}")
want = [[{"index": int(j), "value": float(s[i, j])} for j in np.nonzero(s[i])[0]]
        for i in range(4)]
check(got["rows"] == want, f"vector rows: {got['rows']} != {want}")
check(got.get("type") == "List<Struct<{index:Int32, value:Float64}>>", f"type: {got.get('type')}")

# migrated sparse tensors: one cell per message, the message's buffers
cat([f"{tmp}/coo.arrow", f"{tmp}/coo.arrow"], f"{tmp}/coo2.arrow")
ok("migrate", f"{tmp}/coo2.arrow", f"{tmp}/coo.arrows", "--file")
got = js_read(f"{tmp}/coo.arrows", "sparse")
nz = np.argwhere(s)
cell = {"shape": [4, 6], "canonical": True, "coords": nz.tolist(),
        "values": [float(s[tuple(c)]) for c in nz]}
check(got.get("extension") == "quiver.sparse_tensor" and got["rows"] == [cell, cell],
      f"coo rows: {got['rows']}")
ok("migrate", f"{tmp}/csr.arrow", f"{tmp}/csr.arrows")
got = js_read(f"{tmp}/csr.arrows", "sparse")
indptr = np.concatenate([[0], np.cumsum((s != 0).sum(axis=1))]).tolist()
cell = {"shape": [4, 6], "indptr": indptr, "indices": np.nonzero(s)[1].tolist(),
        "values": s[s != 0].tolist()}
check(got["rows"] == [cell], f"csr rows: {got['rows']} != {[cell]}")
check(json.loads(got.get("metadata", "{}")).get("format") == "csr", f"csr metadata: {got}")

# migrated dense tensors
a = np.arange(12, dtype=np.float32).reshape(3, 4)
np.save(f"{tmp}/f.npy", np.asfortranarray(a))
ok("tensor", "from-npy", f"{tmp}/f.npy", f"{tmp}/f.arrow")
ok("migrate", f"{tmp}/f.arrow", f"{tmp}/f.arrows")
got = js_read(f"{tmp}/f.arrows", "tensor")
meta = json.loads(got.get("metadata", "{}"))
check(got.get("extension") == "arrow.fixed_shape_tensor" and meta.get("shape") == [4, 3] and
      meta.get("permutation") == [1, 0], f"fixed metadata: {got.get('metadata')}")
check(got["rows"] == [a.T.ravel().tolist()], f"fixed physical values: {got['rows']}")
b = np.arange(6, dtype=np.float32).reshape(2, 3) + 100
np.save(f"{tmp}/b.npy", b)
np.save(f"{tmp}/a.npy", a)
ok("tensor", "from-npy", f"{tmp}/a.npy", f"{tmp}/a.arrow")
ok("tensor", "from-npy", f"{tmp}/b.npy", f"{tmp}/b.arrow")
cat([f"{tmp}/a.arrow", f"{tmp}/b.arrow"], f"{tmp}/ab.arrow")
ok("migrate", f"{tmp}/ab.arrow", f"{tmp}/ab.arrows", "--name", "t")
got = js_read(f"{tmp}/ab.arrows", "t")
check(got.get("extension") == "arrow.variable_shape_tensor" and
      got["rows"] == [{"data": a.ravel().tolist(), "shape": [3, 4]},
                      {"data": b.ravel().tolist(), "shape": [2, 3]}],
      f"variable rows: {got['rows']}")
checks.finish("test_js_sparse_column")
PY
