#!/usr/bin/env bash
# #22 "outputs that never lie", from files built here: NumPy .npy/.npz and
# other non-Arrow input given to every Arrow reader (named for what it is,
# with the command that reads it), an empty input refused everywhere;
# messages that name the input (not the output) and the real problem
# (tensor stack on bad metadata, a null cell naming --fill-nulls), the
# input's path printed once.
set -uo pipefail
py=/usr/bin/python3
if ! "$py" -c 'import numpy' 2>/dev/null; then
  echo "python3 with numpy not available: skipped"
  exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
exec "$py" - "$QV_CLI" "$tmp" <<'PY'
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


def run(*args, stdin=None):
    return subprocess.run([cli, *args], capture_output=True, text=True, stdin=stdin)


np.save(f"{tmp}/a.npy", np.arange(6.0).reshape(2, 3))
np.savez(f"{tmp}/b.npz", a=np.arange(3))
open(f"{tmp}/empty.arrow", "wb").close()
with open(f"{tmp}/junk.arrow", "w") as f:
    f.write("hello, this text is not Arrow data\n")
out = f"{tmp}/out.arrow"

# every command that reads Arrow input: (arguments, where the input goes)
def readers(path):
    return [["cat", path], ["cat", "--json", path], ["validate", path], ["inspect", path],
            ["file-to-stream", path], ["convert", path, out, "--to=coo"],
            ["tensor", "to-npy", path, f"{tmp}/o.npy"], ["tensor", "to-npz", path, f"{tmp}/o.npz"],
            ["tensor", "stack", path, out], ["tensor", "unstack", path, out],
            ["integration", "--mode=arrow-to-json", f"--arrow={path}", f"--json={tmp}/o.json"]]


for name, want in [("a.npy", "from-npy"), ("b.npz", "from-npz"), ("empty.arrow", "empty input"),
                   ("junk.arrow", "not Arrow")]:
    path = f"{tmp}/{name}"
    for args in readers(path):
        r = run(*args)
        what = f"{' '.join(args[:2])} {name}"
        check(r.returncode == 1, f"{what}: exit 1, got {r.returncode}: {r.stderr}")
        says = want in r.stderr or (want == "not Arrow" and "not an Arrow file" in r.stderr)
        check(says, f"{what}: says '{want}': {r.stderr}")
        check(r.stderr.count(path) == 1, f"{what}: names {path} once: {r.stderr}")
        check("limit" not in r.stderr and "Arrow stream," not in r.stdout,
              f"{what}: no limit, no listing: {r.stderr} {r.stdout}")
    # stdin too
    with open(path, "rb") as f:
        r = run("stream-to-file", stdin=f)
    check(r.returncode == 1 and want in r.stderr, f"stream-to-file < {name}: {r.stderr}")
    with open(path, "rb") as f:
        r = run("validate", "-", stdin=f)
    check(r.returncode == 1 and want in r.stderr and "stdin" in r.stderr,
          f"validate - < {name}: {r.stderr}")

# ---- tensor stack: a fixed_shape_tensor column whose metadata contradicts
# its storage is reported as such, naming the input
np.save(f"{tmp}/c.npy", np.arange(12, dtype=np.int32).reshape(4, 3))
r = run("tensor", "from-npy", f"{tmp}/c.npy", f"{tmp}/col.arrow", "--as-column", "--name", "cells")
check(r.returncode == 0, f"from-npy --as-column: {r.stderr}")
good = open(f"{tmp}/col.arrow", "rb").read()
check(good.count(b'"shape":[3]') == 1, "the column's metadata is where the test expects it")
open(f"{tmp}/bad.arrow", "wb").write(good.replace(b'"shape":[3]', b'"shape":[5]'))
r = run("tensor", "stack", f"{tmp}/bad.arrow", out)
check(r.returncode == 1 and "no tensor column" not in r.stderr and "5" in r.stderr
      and "cells" in r.stderr and f"{tmp}/bad.arrow" in r.stderr and out not in r.stderr,
      f"stack of bad metadata names the problem and the input: {r.stderr}")

if failures:
    print(f"{len(failures)} of {checks} checks failed")
    sys.exit(1)
print(f"{checks} checks passed")
PY
