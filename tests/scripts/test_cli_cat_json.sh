#!/usr/bin/env bash
# `quiver cat --json`: tensors and sparse tensors as the documented JSON
# (type, shape, strides, dim names, values; sparse: format, index types,
# index buffers) that parses as JSON and holds exactly the values; record
# batches as the integration JSON, which `quiver integration` validates
# against the file it came from; errors exit 1 with nothing half-printed
# taken for success. The .npy inputs are written here byte by byte.
. "$QV_SOURCE_DIR/tests/scripts/lib.sh"
src=$QV_SOURCE_DIR
command -v python3 > /dev/null || { echo "SKIP: python3 is needed to check the JSON"; exit 77; }
qv_tmpdir
cd "$tmp" || exit 1
# npy NAME DESCR FORTRAN SHAPE STRUCT-FORMAT VALUES...: a .npy file
npy() {
  python3 - "$@" <<'EOF'
import struct, sys
name, descr, fortran, shape, fmt = sys.argv[1:6]
vals = [float(v) if fmt in "efd" else int(v) for v in sys.argv[6:]]
shape = tuple(int(x) for x in shape.split(",") if x)
h = "{'descr': '%s', 'fortran_order': %s, 'shape': %s, }" % (descr, fortran, repr(shape))
h += " " * ((64 - (10 + len(h) + 1) % 64) % 64) + "\n"
with open(name, "wb") as f:
    f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(h)) + h.encode())
    f.write(struct.pack("<%d%s" % (len(vals), fmt), *vals))
EOF
}
# is FILE PYTHON-EXPR: the JSON in FILE, as `j`, makes the expression true
is() {
  python3 -c 'import json, sys; j = json.load(open(sys.argv[1])); sys.exit(0 if eval(sys.argv[2]) else 1)' "$1" "$2"
}

npy d.npy '<f8' False 2,3 d 0 1 2 3 4.5 -5
npy f.npy '<i2' True 2,3 h 0 3 1 4 2 5
npy h.npy '<f2' False 2,2 e 1.5 nan inf -2
npy e.npy '<i4' False 0,3 i
npy z.npy '<u8' False '' Q 18446744073709551615
npy s.npy '<i8' False 2,3 q 0 1 0 2 0 0
for t in d f h e z; do "$cli" tensor from-npy $t.npy $t.arrow || echo "FAIL: from-npy $t"; done

"$cli" cat --json d.arrow > d.json; rc=$?
check "dense float64: exit 0" test $rc -eq 0
check "dense float64: the documented fields" is d.json \
  'j["messages"] == [{"message": 0, "kind": "tensor", "type": "float64", "shape": [2, 3], "strides": [24, 8], "dim_names": None, "values": [[0, 1, 2], [3, 4.5, -5]]}]'
"$cli" cat --json f.arrow > f.json
check "column-major int16: logical order, the file's strides" is f.json \
  'j["messages"][0]["values"] == [[0, 1, 2], [3, 4, 5]] and j["messages"][0]["strides"] == [2, 4]'
"$cli" cat --json h.arrow > h.json
check "float16: widened, NaN and infinity as strings" is h.json \
  'j["messages"][0]["values"] == [[1.5, "NaN"], ["Infinity", -2]]'
"$cli" cat --json e.arrow > e.json
check "an empty dimension: no values" is e.json 'j["messages"][0]["values"] == [] and j["messages"][0]["shape"] == [0, 3]'
"$cli" cat --json z.arrow > z.json
check "0-d uint64: the one value, exactly" grep -q '"values": 18446744073709551615' z.json
check "0-d uint64: shape []" is z.json 'j["messages"][0]["shape"] == [] and j["messages"][0]["strides"] == []'

for s in coo csr csc csf; do
  "$cli" tensor from-npy s.npy s-$s.arrow --sparse=$s --index-type=int32 || echo "FAIL: from-npy --sparse=$s"
  "$cli" cat --json s-$s.arrow > s-$s.json; rc=$?
  check "sparse $s: exit 0" test $rc -eq 0
  check "sparse $s: common fields" is s-$s.json \
    "(lambda m: m['kind'] == 'sparse_tensor' and m['format'] == '$s' and m['type'] == 'int64' and m['index_type'] == 'int32' and m['shape'] == [2, 3] and m['nnz'] == 2)(j['messages'][0])"
done
check "coo: coords and values" is s-coo.json \
  'j["messages"][0]["coords"] == [[0, 1], [1, 0]] and j["messages"][0]["values"] == [1, 2] and j["messages"][0]["canonical"]'
check "csr: indptr, indices, values" is s-csr.json \
  '(lambda m: m["indptr"] == [0, 1, 2] and m["indices"] == [1, 0] and m["values"] == [1, 2] and m["indptr_type"] == "int32")(j["messages"][0])'
check "csc: indptr, indices, values" is s-csc.json \
  '(lambda m: m["indptr"] == [0, 1, 2, 2] and m["indices"] == [1, 0] and m["values"] == [2, 1])(j["messages"][0])'
check "csf: axis order, levels" is s-csf.json \
  '(lambda m: m["axis_order"] == [0, 1] and m["indptr"] == [[0, 1, 2]] and m["indices"] == [[0, 1], [1, 0]])(j["messages"][0])'
if command -v jq > /dev/null; then
  check "pipes to jq" test "$("$cli" cat --json s-csr.arrow | jq -c '.messages[0].indices')" = "[1,0]"
fi

# record batches: the integration JSON of the file, stdin too
"$cli" integration --mode=json-to-arrow --json="$src/tests/data/integration/all_types.json" --arrow=all.arrow
"$cli" cat --json all.arrow > all.json; rc=$?
check "record batches: exit 0" test $rc -eq 0
"$cli" integration --mode=validate --json=all.json --arrow=all.arrow; rc=$?
check "record batches: the integration JSON of the file" test $rc -eq 0
"$cli" file-to-stream all.arrow | "$cli" cat --json - > stdin.json
check "a stream on stdin: the same JSON" cmp -s all.json stdin.json

# errors
printf 'not arrow at all' > junk.arrow
"$cli" cat --json junk.arrow > /dev/null 2> err; rc=$?
check "not Arrow: exit 1 (got $rc)" test $rc -eq 1
check "not Arrow: names the file" grep -q junk.arrow err
"$cli" cat --json > /dev/null 2>&1; rc=$?
check "no FILE: exit 2" test $rc -eq 2
"$cli" cat --json a b > /dev/null 2>&1; rc=$?
check "two FILEs: exit 2" test $rc -eq 2

qv_finish
