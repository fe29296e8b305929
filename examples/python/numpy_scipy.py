"""quiver from Python: a NumPy tensor and a SciPy matrix to Arrow and back,
zero-copy, and a record batch file through the Arrow PyCapsule interface.

    python3 examples/python/numpy_scipy.py OUTDIR [RECORD_BATCH_FILE]
"""
import os
import sys

import numpy as np
import scipy.sparse as sp

import quiver

out = sys.argv[1] if len(sys.argv) > 1 else "."

# A column-major float32 tensor with dimension names.
a = np.asfortranarray(np.arange(12, dtype=np.float32).reshape(3, 4))
path = os.path.join(out, "py_tensor.arrow")
quiver.write_tensor(path, a, dim_names=["row", "col"])
b = quiver.read_tensor(path)  # a read-only view of the mapped file
info = quiver.read_tensor_info(path)
print("tensor:", info["shape"], info["type"], info["layout"], "names", info["dim_names"])
print("  equal:", np.array_equal(a, b), " column-major kept:", b.flags["F_CONTIGUOUS"],
      " zero-copy base:", type(b.base).__name__)
print("  via DLPack:", np.from_dlpack(b.base).sum())  # type: ignore[arg-type]  # base: a quiver.Tensor

# A SciPy CSR matrix: its data and indices come back as views of the file.
m = sp.random(1000, 800, density=0.01, format="csr", random_state=1)
path = os.path.join(out, "py_csr.arrow")
quiver.write_sparse(path, m)
r = quiver.read_sparse(path)
print("sparse:", type(r).__name__, r.shape, "nnz", r.nnz, " equal:", (r != m).nnz == 0)

# Dense to CSF in C, then back.
cube = np.zeros((4, 5, 6))
cube[1, 2, 3], cube[3, 0, 5] = 7, 8
quiver.write_sparse(os.path.join(out, "py_csf.arrow"), cube, format="csf")
t = quiver.read_sparse(os.path.join(out, "py_csf.arrow"))
print("csf:", t, " round trip:", np.array_equal(t.to_dense(), cube))

for msg in quiver.messages(os.path.join(out, "py_csr.arrow")):
    print("message:", msg["kind"], msg["format"], msg["shape"], "nnz", msg["nnz"])

if len(sys.argv) > 2:
    reader = quiver.read_file(sys.argv[2])
    print("record batches:", reader.num_batches, "batches, columns", reader.columns)
    quiver.write_stream(os.path.join(out, "py_batches.arrows"), reader, compression="zstd")
    kinds = [m["kind"] for m in quiver.messages(os.path.join(out, "py_batches.arrows"))]
    print("  rewritten as a zstd stream:", kinds)
