#!/usr/bin/env bash
# The integration JSON with the apache-arrow npm package (tests/interop/js,
# pinned by its lockfile) as the peer, both ways, through arrow-js's own
# integration JSON reader (RecordBatchReader.from on parsed JSON) and writer
# (RecordBatchJSONWriter), driven by tests/interop/js/integration.mjs:
#   quiver -> js: arrow-js reads quiver's Arrow file and quiver's JSON and
#                 finds the same schema and values as in the source JSON.
#   js -> quiver: `quiver integration --mode=validate` accepts the Arrow file
#                 and the JSON arrow-js writes from the source JSON, against
#                 the JSON and against each other.
# The source is tests/data/integration/all_types.json (every type, nulls, an
# empty batch, two fields sharing dictionary 0 and a dictionary nested in
# another) without what arrow-js 21.2.0 cannot handle (listed below, with
# what it does wrong).
# Skips (77) only when node or the npm packages are missing.
. "$QV_SOURCE_DIR/tests/scripts/lib.sh"
src=$QV_SOURCE_DIR
qv_need_node
command -v python3 > /dev/null || { echo "FAIL: python3 is needed to cut the JSON"; exit 1; }
qv_tmpdir
work=$tmp
cd "$work" || exit 1
node_int() { node "$js/integration.mjs" "$@"; }
q_validate() { "$cli" integration --mode=validate --json="$1" --arrow="$2"; }
# arrow-js's JSON writer spells negative 64-bit values and decimals unsigned
# (-1 as "18446744073709551615"): read only when asked for
q_validate_js() { "$cli" integration --mode=validate --accept-unsigned-spelling --json="$1" --arrow="$2"; }

# What arrow-js 21.2.0 cannot handle, by field of all_types.json:
python3 - "$src/tests/data/integration/all_types.json" source.json <<'EOF'
import json, sys
excluded = {
    "f16": "float16: arrow-js's JSON reader takes the numbers for the halves' bits (1.5 -> 5.96e-8)",
    "d32": "decimal32: arrow-js reads and writes other values (123.45 -> -0.01)",
    "d64": "decimal64: arrow-js reads and writes other values (999999999999999.999 -> 0)",
    "d256": "decimal256: arrow-js writes 16 bytes a value (its buffer is half the size)",
    "imdn": "interval month-day-nano: arrow-js changes the nanoseconds (2^63-1 -> -2^63)",
    "bv": "binaryview: checked js -> quiver only (below): rb_common.mjs describes no views",
    "sv": "utf8view: checked js -> quiver only (below): rb_common.mjs describes no views",
    "lv": "listview: arrow-js's JSON reader: Unrecognized type",
    "llv": "largelistview: arrow-js's JSON reader: Unrecognized type",
    "ree": "run-end encoded: arrow-js's JSON reader: Unrecognized type",
}
j = json.load(open(sys.argv[1]))
keep = [i for i, f in enumerate(j["schema"]["fields"]) if f["name"] not in excluded]
j["schema"]["fields"] = [j["schema"]["fields"][i] for i in keep]
for b in j["batches"]:
    b["columns"] = [b["columns"][i] for i in keep]
# arrow-js loses custom metadata in its JSON (its writer drops the schema's);
# metadata is compared by every other test
j["schema"].pop("metadata", None)
def strip(f):
    f.pop("metadata", None)
    for c in f["children"]:
        strip(c)
for f in j["schema"]["fields"]:
    strip(f)
json.dump(j, open(sys.argv[2], "w"), indent=1)
views = json.load(open(sys.argv[1]))
keep = [i for i, f in enumerate(views["schema"]["fields"]) if f["name"] in ("bv", "sv")]
views["schema"]["fields"] = [views["schema"]["fields"][i] for i in keep]
for b in views["batches"]:
    b["columns"] = [b["columns"][i] for i in keep]
views.pop("dictionaries", None)
views["schema"].pop("metadata", None)
json.dump(views, open("views.json", "w"), indent=1)
for name, why in excluded.items():
    print(f"excluded {name}: {why}")
EOF
[ -s source.json ] || { echo "FAIL: could not cut the source JSON" >&2; exit 1; }

# ---- quiver -> js
check "quiver json-to-arrow" "$cli" integration --mode=json-to-arrow --json=source.json --arrow=q.arrow
check "quiver arrow-to-json" "$cli" integration --mode=arrow-to-json --arrow=q.arrow --json=q.json
check "arrow-js reads quiver's Arrow file as the source JSON says" node_int validate source.json q.arrow
check "arrow-js reads quiver's JSON as its Arrow file holds" node_int validate q.json q.arrow
"$cli" file-to-stream q.arrow > q.stream
check "arrow-js reads quiver's stream as the source JSON says" node_int validate source.json q.stream

# ---- js -> quiver
check "arrow-js json-to-arrow" node_int json-to-arrow source.json js.arrow
check "arrow-js json-to-json" node_int json-to-json source.json js.json
check "quiver validates arrow-js's Arrow file against the source JSON" q_validate source.json js.arrow
check "quiver validates arrow-js's JSON against quiver's Arrow file" q_validate_js js.json q.arrow
check "quiver validates arrow-js's JSON against arrow-js's Arrow file" q_validate_js js.json js.arrow
check "quiver validates its own JSON against arrow-js's Arrow file" q_validate q.json js.arrow
"$cli" integration --mode=validate --json=js.json --arrow=q.arrow 2> unsigned.err
rc=$?
check "arrow-js's unsigned spelling is refused by default (exit $rc: $(head -c 300 unsigned.err))" \
  bash -c '[ $1 -eq 1 ] && grep -q "\"9223372036854775808\" is out of the range of int64" unsigned.err' _ $rc
check "arrow-js json-to-arrow (views)" node_int json-to-arrow views.json js-views.arrow
check "quiver validates arrow-js's Arrow file of views" q_validate views.json js-views.arrow
check "arrow-js json-to-json (views)" node_int json-to-json views.json js-views.json
check "quiver validates arrow-js's JSON of views" q_validate_js js-views.json js-views.arrow
# arrow-js's JSON of an Arrow file it read lists each buffer as its padded
# length (DATA [-128, 0, 127, 0, 0, 0, 0, 0] for count 3), which Arrow C++'s
# reader refuses as quiver's does; cut to the lengths the counts give, the
# values must be the file's.
check "arrow-js arrow-to-json" node_int arrow-to-json q.arrow jsq.json
python3 - jsq.json jsq-cut.json <<'EOF'
import json, sys
j = json.load(open(sys.argv[1]))
def cut(field, col):
    n = col["count"]
    t = field["type"]["name"]
    for k in ("VALIDITY", "DATA", "TYPE_ID"):
        if k in col: col[k] = col[k][:n]
    if "OFFSET" in col:
        dense = t == "union" and field["type"]["mode"] == "DENSE"
        col["OFFSET"] = col["OFFSET"][:n if dense else n + 1]
    for f, c in zip(field["children"], col.get("children", [])):
        cut(f, c)
fields = j["schema"]["fields"]
for b in j["batches"]:
    for f, c in zip(fields, b["columns"]):
        cut(f, c)
def find(fs, id):
    for f in fs:
        d = f.get("dictionary")
        if d and d["id"] == id:
            return f
        r = find(f["children"], id)
        if r: return r
for d in j.get("dictionaries", []):
    f = find(fields, d["id"])
    value_field = {"type": f["type"], "children": f["children"]}
    for c in d["data"]["columns"]:
        cut(value_field, c)
json.dump(j, open(sys.argv[2], "w"))
EOF
check "quiver validates arrow-js's JSON of quiver's file (cut)" q_validate_js jsq-cut.json q.arrow

qv_finish
