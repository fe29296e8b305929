"""Checks `quiver inspect` output against the .json companions of the
Arrow C++-written files, and that invalid files fail cleanly (exit 1)."""
import glob
import json
import os
import re
import subprocess
import sys

cli, data = sys.argv[1], sys.argv[2]
failures = []
checked = 0


def inspect(path):
    return subprocess.run([cli, "inspect", path], capture_output=True, text=True, timeout=60)


def fail(path, why):
    failures.append(f"{os.path.basename(path)}: {why}")


for js in sorted(glob.glob(os.path.join(data, "*.json")) + glob.glob(os.path.join(data, "arrow_bugs", "*.json"))):
    base = js[:-5]
    path = base + ".arrow" if os.path.exists(base + ".arrow") else base + ".arrows"
    if not os.path.exists(path):
        continue
    desc = json.load(open(js))
    r = inspect(path)
    if r.returncode != 0:
        fail(path, f"exit {r.returncode}: {r.stderr.strip()}")
        continue
    lines = r.stdout.splitlines()
    kind = desc["kind"]
    if kind == "tensor" or kind.startswith("sparse_"):
        want_kind = "Tensor" if kind == "tensor" else "SparseTensor"
        rows = [l for l in lines if re.match(r"^\d+\s+" + want_kind + r"\s", l)]
        if len(rows) != 1:
            fail(path, f"expected one {want_kind} line, got {len(rows)}")
            continue
        row = rows[0]
        shape = "shape=[" + ", ".join(str(d) for d in desc["shape"]) + "]"
        if shape not in row:
            fail(path, f"{shape} not in: {row}")
        if f" {desc['type']} " not in row:
            fail(path, f"type {desc['type']} not in: {row}")
        if kind == "tensor":
            strides = "strides=[" + ", ".join(str(s) for s in desc["strides"]) + "]"
            if strides not in row:
                fail(path, f"{strides} not in: {row}")
        else:
            fmt = kind.split("_")[1].upper()
            if not re.search(r"\s" + fmt + r"\s", row):
                fail(path, f"format {fmt} not in: {row}")
            if f"nnz={desc['non_zero_length']} " not in row:
                fail(path, f"nnz={desc['non_zero_length']} not in: {row}")
        names = [n for n in desc.get("dim_names", []) if n]
        if names and "names=[" + ", ".join(desc["dim_names"]) + "]" not in row:
            fail(path, f"dim names {desc['dim_names']} not in: {row}")
    else:
        schema_rows = [l for l in lines if re.match(r"^\d+\s+Schema\s", l)]
        if len(schema_rows) != 1:
            fail(path, f"expected one Schema line, got {len(schema_rows)}")
            continue
        for f in desc["schema"]:
            if f" {f['name']}: " not in schema_rows[0] and f": {f['name']}: " not in schema_rows[0]:
                fail(path, f"field {f['name']} not in: {schema_rows[0]}")
        batches = [l for l in lines if re.match(r"^\d+\s+RecordBatch\s", l)]
        if len(batches) != len(desc["batches"]):
            fail(path, f"{len(batches)} RecordBatch lines, json lists {len(desc['batches'])}")
        for row, b in zip(batches, desc["batches"]):
            if f"length={b['num_rows']} " not in row:
                fail(path, f"length={b['num_rows']} not in: {row}")
        if kind.endswith("_file") and not any(re.match(r"^\d+\s+Footer\s", l) for l in lines):
            fail(path, "no Footer line for a file")
    checked += 1

# Files whose framing is broken must fail with exit 1 and a message, never crash.
for name in ["tensor_float64_3x4_truncated_body.arrow"]:
    path = os.path.join(data, "invalid", name)
    r = inspect(path)
    if r.returncode != 1 or "quiver inspect:" not in r.stderr:
        fail(path, f"expected exit 1 with a message, got {r.returncode}: {r.stderr.strip()}")
    checked += 1
# Every other invalid file is well framed: inspect lists it (content checks
# belong to the tensor/sparse readers) and must not crash.
for path in sorted(glob.glob(os.path.join(data, "invalid", "*.arrow"))):
    r = inspect(path)
    if r.returncode not in (0, 1) or (r.returncode == 1 and not r.stderr.startswith("quiver inspect:")):
        fail(path, f"exit {r.returncode}: {r.stderr.strip()}")

if failures:
    print("\n".join(failures))
    print(f"inspect vs arrow-cpp: {checked - len(failures)} passed, {len(failures)} failed")
    sys.exit(1)
if checked == 0:
    print(f"inspect vs arrow-cpp: no files checked in {data}")
    sys.exit(1)
print(f"inspect vs arrow-cpp: {checked} passed, 0 failed")
