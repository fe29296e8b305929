#!/usr/bin/env bash
# #22: quiver convert --value-type T casts a tensor's values while converting
# (dense and every sparse format, from dense and from sparse input), exactly
# or refused with exit 1 naming the first value that does not fit; a bad T
# is a usage error (exit 2); --max-output counts the output in T.
. "$QV_SOURCE_DIR/tests/scripts/lib.sh"
qv_need_python numpy
qv_tmpdir
exec "$py" - "$cli" "$tmp" <<'PY'
import subprocess
import sys

import numpy as np

cli, tmp = sys.argv[1], sys.argv[2]
checks, failures = 0, []


def check(cond, what):
    global checks
    checks += 1
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def run(*args):
    return subprocess.run([cli, *args], capture_output=True, text=True)


def arrow(a, name, *extra):
    np.save(f"{tmp}/{name}.npy", a)
    r = run("tensor", "from-npy", f"{tmp}/{name}.npy", f"{tmp}/{name}.arrow", *extra)
    assert r.returncode == 0, r.stderr
    return f"{tmp}/{name}.arrow"


def back(path):
    r = run("tensor", "to-npy", path, f"{tmp}/back.npy")
    check(r.returncode == 0, f"to-npy {path}: {r.stderr}")
    return np.load(f"{tmp}/back.npy") if r.returncode == 0 else None


targets = ["dense", "coo", "csr", "csc", "csf"]
types = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
         "float16", "float32", "float64"]
small = np.array([[0, 1, 0], [7, 0, 100]])
for src_type in ["float64", "int32", "uint8", "float16"]:
    for fmt in ["dense", "csr", "coo"]:
        extra = [] if fmt == "dense" else [f"--sparse={fmt}"]
        path = arrow(small.astype(src_type), f"s_{src_type}_{fmt}", *extra)
        for i, t in enumerate(types):  # every type, every target (in turn)
            for to in [targets[(i + len(src_type) + len(fmt)) % 5]]:
                out = f"{tmp}/o.arrow"
                r = run("convert", path, out, f"--to={to}", f"--value-type={t}")
                what = f"{src_type} {fmt} -> {to} {t}"
                check(r.returncode == 0, f"{what}: exit {r.returncode} {r.stderr}")
                b = back(out)
                check(b is not None and b.dtype == np.dtype(t) and np.array_equal(b, small),
                      f"{what}: values {b!r}")

# values that do not fit: exit 1, the first named
f = np.array([[0, 1.5, 0], [300, 0, -2]])
dense = arrow(f, "f")
csr = arrow(f, "fcsr", "--sparse=csr")
for path, where in [(dense, "element [0, 1]"), (csr, "stored value 0 of 3")]:
    for to in targets:
        r = run("convert", path, f"{tmp}/x.arrow", f"--to={to}", "--value-type=int64")
        check(r.returncode == 1 and "--value-type int64" in r.stderr and
              "value 1.5 does not fit int64" in r.stderr and where in r.stderr,
              f"1.5 -> int64 ({to}): exit {r.returncode} {r.stderr}")
ints = arrow(np.array([[0, 1, 0], [300, 0, -2]], dtype=np.int64), "ints", "--sparse=csc")
r = run("convert", ints, f"{tmp}/x.arrow", "--to=dense", "--value-type=uint16")
check(r.returncode == 1 and "value -2 does not fit uint16" in r.stderr, f"-2 -> uint16: {r.stderr}")
r = run("convert", ints, f"{tmp}/x.arrow", "--to=coo", "--value-type=int8")
check(r.returncode == 1 and "value 300 does not fit int8" in r.stderr, f"300 -> int8: {r.stderr}")
r = run("convert", ints, f"{tmp}/x.arrow", "--to=csr", "--value-type=float16")
check(r.returncode == 0 and np.array_equal(back(f"{tmp}/x.arrow"), [[0, 1, 0], [300, 0, -2]]),
      f"int64 -> float16: {r.stderr}")
big = arrow(np.array([0, 2049], dtype=np.int32), "big")
r = run("convert", big, f"{tmp}/x.arrow", "--to=dense", "--value-type=float16")
check(r.returncode == 1 and "value 2049 does not fit float16" in r.stderr,
      f"2049 -> float16 (not exact): {r.stderr}")
r = run("convert", arrow(np.array([1e5, 0.1]), "huge"), f"{tmp}/x.arrow", "--to=dense",
        "--value-type=float16")
check(r.returncode == 1 and "value 100000 does not fit float16" in r.stderr,
      f"1e5 -> float16 (beyond the range): {r.stderr}")
nan = arrow(np.array([0.0, np.nan, np.inf, 0.1]), "nan")
r = run("convert", nan, f"{tmp}/x.arrow", "--to=coo", "--value-type=int32")
check(r.returncode == 1 and "value nan does not fit int32" in r.stderr, f"nan -> int32: {r.stderr}")
r = run("convert", nan, f"{tmp}/x.arrow", "--to=dense", "--value-type=float16")
b = back(f"{tmp}/x.arrow")
check(r.returncode == 0 and b is not None and b.dtype == np.float16 and np.isnan(b[1]) and
      np.isinf(b[2]) and b[3] == np.float16(0.1), f"nan, inf, 0.1 -> float16 (rounded): {b!r}")
check(not any(p.startswith("x.arrow") for p in __import__("os").listdir(tmp) if p != "x.arrow"),
      "a refused cast leaves no temp file")

# a non-canonical COO (unsorted, a coordinate stored twice, as SciPy's
# save_npz may hold it): duplicates are summed in the input's type, then the
# sum is cast, exactly or refused
def coo_npz(name, row, col, data):
    np.savez(f"{tmp}/{name}.npz", format=np.array(b"coo"), shape=np.array([2, 3]),
             row=np.array(row, dtype=np.int32), col=np.array(col, dtype=np.int32),
             data=np.array(data, dtype=np.int64))
    r = run("tensor", "from-npz", f"{tmp}/{name}.npz", f"{tmp}/{name}.arrow")
    assert r.returncode == 0, r.stderr
    r = run("inspect", f"{tmp}/{name}.arrow")
    check("canonical=no" in r.stdout, f"{name}: the input is a non-canonical COO: {r.stdout}")
    return f"{tmp}/{name}.arrow"


fits = coo_npz("dup_fits", [1, 0, 1], [2, 0, 2], [100, 5, 100])
for to in targets:
    r = run("convert", fits, f"{tmp}/x.arrow", f"--to={to}", "--value-type=uint8")
    b = back(f"{tmp}/x.arrow") if r.returncode == 0 else None
    check(r.returncode == 0 and b is not None and b.dtype == np.uint8 and
          np.array_equal(b, [[5, 0, 0], [0, 0, 200]]),
          f"non-canonical COO 100 + 100 -> uint8 ({to}): exit {r.returncode} {r.stderr} {b!r}")
over = coo_npz("dup_over", [1, 0, 1], [2, 0, 2], [200, 5, 100])
for to in targets:
    r = run("convert", over, f"{tmp}/x.arrow", f"--to={to}", "--value-type=uint8")
    check(r.returncode == 1 and "value 300 does not fit uint8" in r.stderr,
          f"non-canonical COO 200 + 100 -> uint8 ({to}) refused: exit {r.returncode} {r.stderr}")

# usage errors
for args in (["--value-type=bool"], ["--value-type=float128"], ["--value-type"]):
    r = run("convert", dense, f"{tmp}/y.arrow", "--to=dense", *args)
    check(r.returncode == 2, f"{args}: exit {r.returncode} {r.stderr}")

# --max-output counts the output in the new type
ones = arrow(np.ones((1000, 1000), dtype=np.float16), "ones")
r = run("convert", ones, f"{tmp}/m.arrow", "--to=dense", "--value-type=float64", "--max-output=4M")
check(r.returncode == 1 and "--max-output" in r.stderr, f"8 MB over 4M: {r.stderr}")
r = run("convert", ones, f"{tmp}/m.arrow", "--to=dense", "--value-type=int8", "--max-output=4M")
check(r.returncode == 0, f"1 MB under 4M: {r.stderr}")
r = run("convert", ones, f"{tmp}/m.arrow", "--to=coo", "--value-type=float64", "--max-output=12M")
check(r.returncode == 1 and "--max-output" in r.stderr, f"COO of 10^6 float64 + int64 coords over 12M: {r.stderr}")

print(f"cli value type: {checks - len(failures)} passed, {len(failures)} failed")
sys.exit(1 if failures or checks == 0 else 0)
PY
