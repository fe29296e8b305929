#!/usr/bin/env bash
# `quiver integration` (Arrow's integration test command line) end to end:
# JSON -> Arrow -> JSON round trips of every type (nulls, an empty batch,
# shared and nested dictionaries, metadata, .json.gz), stream-to-file and
# file-to-stream keeping every value, dictionary and metadata entry (proved
# by validate against the JSON), validate catching one changed value,
# validity bit, field name, metadata value and dictionary entry, and bad
# input failing with exit 1 and the JSON path.
. "$QV_SOURCE_DIR/tests/scripts/lib.sh"
src=$QV_SOURCE_DIR
command -v python3 > /dev/null || { echo "SKIP: python3 is needed to edit the JSON"; exit 77; }
qv_tmpdir
cd "$tmp" || exit 1
# edit IN OUT PYTHON: OUT is IN's JSON after PYTHON ran on it as `j`
edit() {
  python3 - "$1" "$2" "$3" <<'EOF'
import json, sys
j = json.load(open(sys.argv[1]))
exec(sys.argv[3])
json.dump(j, open(sys.argv[2], "w"))
EOF
}
J=$src/tests/data/integration/all_types.json
I="integration"

# ---- JSON -> Arrow -> JSON, every type
run $I --mode=json-to-arrow --json="$J" --arrow=all.arrow
check "json-to-arrow: exit 0 ($err)" test $rc -eq 0
run $I --mode=validate --json="$J" --arrow=all.arrow
check "validate the written file: exit 0 ($err)" test $rc -eq 0
check "validate prints nothing" test -z "$out$err"
run $I --mode=arrow-to-json --arrow=all.arrow --json=back.json
check "arrow-to-json: exit 0 ($err)" test $rc -eq 0
run $I --mode=validate --json=back.json --arrow=all.arrow
check "validate the JSON written back: exit 0 ($err)" test $rc -eq 0
"$cli" $I --mode=json-to-arrow --json=back.json --arrow=again.arrow
"$cli" $I --mode=arrow-to-json --arrow=again.arrow --json=again.json
check "JSON -> Arrow -> JSON is a fixed point" cmp -s back.json again.json
check "the round trip keeps the empty batch" \
  python3 -c "import json,sys; b=json.load(open('back.json'))['batches']; sys.exit(not (len(b)==2 and b[1]['count']==0))"
check "the round trip keeps one dictionary per shared id" \
  python3 -c "import json,sys; d=json.load(open('back.json'))['dictionaries']; sys.exit(not (sorted(x['id'] for x in d)==[0,1]))"
check "the round trip keeps the null slots" \
  python3 -c "import json,sys; c=json.load(open('back.json'))['batches'][0]['columns']; sys.exit(not (c[4]['VALIDITY']==[1,0,1]))"
run $I --mode=arrow-to-json --arrow=all.arrow --json=-
check "arrow-to-json to stdout" python3 -c "import json,sys; json.loads(sys.argv[1])" "$out"
# a file without batches
edit "$J" nobatch.json 'j["batches"] = []'
"$cli" $I --mode=json-to-arrow --json=nobatch.json --arrow=nobatch.arrow
run $I --mode=validate --json=nobatch.json --arrow=nobatch.arrow
check "no batches: validate exit 0 ($err)" test $rc -eq 0
run $I --mode=validate --json="$J" --arrow=nobatch.arrow
check "2 batches expected, 0 found: exit 1" test $rc -eq 1

# ---- gzip-compressed JSON
gzip -c "$J" > all.json.gz
run $I --mode=validate --json=all.json.gz --arrow=all.arrow
check ".json.gz: validate exit 0 ($err)" test $rc -eq 0
run $I --mode=json-to-arrow --json=all.json.gz --arrow=gz.arrow
check ".json.gz: json-to-arrow exit 0 ($err)" test $rc -eq 0 && cmp -s gz.arrow all.arrow

# ---- stream-to-file / file-to-stream keep values, dictionaries, metadata
"$cli" file-to-stream all.arrow > all.stream
run $I --mode=validate --json="$J" --arrow=all.stream
check "file-to-stream: validate exit 0 ($err)" test $rc -eq 0
for c in none lz4 zstd; do
  "$cli" stream-to-file --compression $c < all.stream > s2f-$c.arrow
  run $I --mode=validate --json="$J" --arrow=s2f-$c.arrow
  check "stream-to-file --compression $c: validate exit 0 ($err)" test $rc -eq 0
  "$cli" file-to-stream --align 64 s2f-$c.arrow > f2s-$c.stream
  run $I --mode=validate --json="$J" --arrow=f2s-$c.stream
  check "file-to-stream of the $c file: validate exit 0 ($err)" test $rc -eq 0
done

# ---- validate catches one change of each kind
expect_diff() { # description, python edit, text the message must hold
  edit "$J" changed.json "$2"
  run $I --mode=validate --json=changed.json --arrow=all.arrow
  check "$1: exit 1 (got $rc: $err)" test $rc -eq 1
  check "$1: message names '$3' ($err)" has "$err" "$3"
  [ -n "${QV_VERBOSE:-}" ] && echo "$1: $err"
}
expect_diff "changed value" 'j["batches"][0]["columns"][4]["DATA"][2] = 7' \
  'batch 0, row 2, field 4 "i32"'
expect_diff "changed validity bit" 'j["batches"][0]["columns"][25]["VALIDITY"][0] = 0' \
  'row 0, field 25 "str"'
expect_diff "changed field name" 'j["schema"]["fields"][3]["name"] = "u16x"' 'u16x'
expect_diff "changed field metadata value" 'j["schema"]["fields"][4]["metadata"][1]["value"] = "other"' \
  'other'
expect_diff "changed schema metadata value" 'j["schema"]["metadata"][0]["value"] = "changed"' \
  'changed'
expect_diff "changed dictionary entry" 'j["dictionaries"][0]["data"]["columns"][0]["DATA"][3] = "C"' \
  'dictionary'
# the JSON says two fields share dictionary 0; a file with two equal but
# separate dictionaries is not that
edit "$J" unshared.json '
f = j["schema"]["fields"]
f[42]["dictionary"]["id"] = 9
d = dict(j["dictionaries"][0]); d["id"] = 9
j["dictionaries"].append(d)'
"$cli" $I --mode=json-to-arrow --json=unshared.json --arrow=unshared.arrow
run $I --mode=validate --json="$J" --arrow=unshared.arrow
check "dictionary sharing differs: exit 1 ($err)" test $rc -eq 1
check "dictionary sharing differs: says so ($err)" has "$err" "shared"
run $I --mode=validate --json=unshared.json --arrow=unshared.arrow
check "unshared JSON vs its own file: exit 0 ($err)" test $rc -eq 0
# a dictionary inside another dictionary's values (ndict's items, id 0 as
# dict's): written as one, kept by every rewrite; a file giving it an id of
# its own (as Arrow C++ writes nested dictionaries) holds the same values
nested_id() { # the id of ndict's item dictionary and of dict in an arrow-to-json output
  python3 -c "import json,sys; f=json.load(open(sys.argv[1]))['schema']['fields']; print(f[43]['children'][0]['dictionary']['id'], f[41]['dictionary']['id'])" "$1"
}
for f in all.arrow all.stream s2f-none.arrow f2s-zstd.stream; do
  "$cli" $I --mode=arrow-to-json --arrow=$f --json=ids.json
  ids=$(nested_id ids.json)
  check "$f: the nested dictionary shares dict's id ($ids)" test "$ids" = "0 0"
done
check "one DictionaryBatch per id (2)" test "$("$cli" inspect all.arrow | grep -c DictionaryBatch)" -eq 2
edit "$J" ownid.json '
j["schema"]["fields"][43]["children"][0]["dictionary"]["id"] = 9
d = dict(j["dictionaries"][0]); d["id"] = 9
j["dictionaries"].append(d)'
"$cli" $I --mode=json-to-arrow --json=ownid.json --arrow=ownid.arrow
check "the nested dictionary on its own id: 3 DictionaryBatches" \
  test "$("$cli" inspect ownid.arrow | grep -c DictionaryBatch)" -eq 3
run $I --mode=validate --json="$J" --arrow=ownid.arrow
check "the nested dictionary on its own id equals the shared JSON: exit 0 ($err)" test $rc -eq 0
# shared id, different value types: the JSON reader names both fields
edit "$J" clash.json 'j["schema"]["fields"][42]["type"] = {"name": "binary"}'
run $I --mode=json-to-arrow --json=clash.json --arrow=clash.arrow
check "shared id, two value types: exit 1" test $rc -eq 1
check "shared id, two value types: names both fields ($err)" \
  bash -c 'grep -qF "fields[41]" <<<"$1" && grep -qF "fields[42]" <<<"$1"' _ "$err"
check "no output file after a failure" test ! -e clash.arrow

# ---- a map's own entries/key/value names survive every rewrite (validate
# does not compare them, as Arrow C++ does not: what proves them kept is
# the schema each rewrite writes)
edit "$J" mapnames.json '
def rename(f):
    if f["type"]["name"] == "map":
        e = f["children"][0]
        e["name"] = "some_entries"
        e["children"][0]["name"], e["children"][1]["name"] = "some_key", "some_value"
    for c in f.get("children", []): rename(c)
for f in j["schema"]["fields"]: rename(f)
def rename_col(c, is_map):
    if is_map:
        e = c["children"][0]
        e["name"] = "some_entries"
        e["children"][0]["name"], e["children"][1]["name"] = "some_key", "some_value"
for f, c in [(f, c) for b in j["batches"] for f, c in zip(j["schema"]["fields"], b["columns"])]:
    rename_col(c, f["type"]["name"] == "map")'
"$cli" $I --mode=json-to-arrow --json=mapnames.json --arrow=mapnames.arrow
"$cli" file-to-stream mapnames.arrow > mapnames.stream
"$cli" stream-to-file < mapnames.stream > mapnames-s2f.arrow
"$cli" $I --mode=arrow-to-json --arrow=mapnames-s2f.arrow --json=mapnames-back.json
want="map<string ('some_key'), int32 ('some_value') ('some_entries')>"
for f in mapnames.arrow mapnames.stream mapnames-s2f.arrow; do
  run inspect "$f"
  check "$f keeps the map's names ($out)" has "$out" "$want"
done
check "arrow-to-json keeps the map's names" \
  python3 -c "import json,sys; j=json.load(open('mapnames-back.json')); m=[f for f in j['schema']['fields'] if f['type']['name']=='map'][0]; e=m['children'][0]; sys.exit(not (e['name'], e['children'][0]['name'], e['children'][1]['name']) == ('some_entries', 'some_key', 'some_value'))"
run $I --mode=validate --json=mapnames.json --arrow=all.arrow
check "the map's names are not compared (as in Arrow C++): exit 0 ($err)" test $rc -eq 0

# ---- 64-bit values out of range: all.arrow's i64 row 0 is -2^63; a JSON
# saying 2^63 there is not equal to it (nor readable: out of int64's range),
# unless arrow-js's unsigned spelling is asked for
edit "$J" big.json 'j["batches"][0]["columns"][5]["DATA"][0] = "9223372036854775808"'
run $I --mode=validate --json=big.json --arrow=all.arrow
check "2^63 in an int64: exit 1 ($err)" test $rc -eq 1
check "2^63 in an int64: named, with its path ($err)" \
  has "$err" 'batches[0].columns[5].DATA[0]: "9223372036854775808" is out of the range of int64'
run $I --mode=json-to-arrow --json=big.json --arrow=big.arrow
check "2^63 in an int64: json-to-arrow exit 1, no output" bash -c '[ $1 -eq 1 ] && [ ! -e big.arrow ]' _ $rc
edit "$J" ts.json 'j["schema"]["fields"][5]["type"] = {"name": "timestamp", "unit": "SECOND"}
j["batches"][0]["columns"][5]["DATA"][2] = "18446744073709551615"'
run $I --mode=json-to-arrow --json=ts.json --arrow=ts.arrow
check "2^64-1 in a timestamp: exit 1 ($err)" has "$err" "is out of the range of timestamp"
run $I --mode=validate --accept-unsigned-spelling --json=big.json --arrow=all.arrow
check "--accept-unsigned-spelling: 2^63 is the bits of -2^63 (exit $rc: $err)" test $rc -eq 0
run $I --mode=arrow-to-json --accept-unsigned-spelling --arrow=all.arrow --json=x.json
check "--accept-unsigned-spelling with arrow-to-json: exit 2" test $rc -eq 2

# ---- JSON null as the value of a null slot (row 1 of i32 and of str) is
# not read, as Arrow C++ does not read null slots' values
edit "$J" nullslot.json 'c = j["batches"][0]["columns"]
c[4]["DATA"][1] = None
c[5]["DATA"][1] = None'
run $I --mode=validate --json=nullslot.json --arrow=all.arrow
check "null in null slots: validate exit 0 ($err)" test $rc -eq 0
run $I --mode=json-to-arrow --json=nullslot.json --arrow=nullslot.arrow
check "null in null slots: json-to-arrow exit 0 ($err)" test $rc -eq 0
run $I --mode=validate --json="$J" --arrow=nullslot.arrow
check "null in null slots: the file equals the JSON with values there ($err)" test $rc -eq 0
edit "$J" nullvalid.json 'j["batches"][0]["columns"][4]["DATA"][0] = None'
run $I --mode=validate --json=nullvalid.json --arrow=all.arrow
check "null in a valid slot: exit 1 naming it ($err)" has "$err" "batches[0].columns[4].DATA[0]: expected an integer, found null"

# ---- bad input: exit 1 and the JSON path
bad() { # description, file content or python edit, path text
  run $I --mode=json-to-arrow --json=bad.json --arrow=bad.arrow
  check "$1: exit 1 (got $rc)" test $rc -eq 1
  check "$1: names '$2' ($err)" has "$err" "$2"
}
printf '{"schema": {"fields": [' > bad.json
bad "truncated JSON" "bad.json"
edit "$J" bad.json 'j["schema"]["fields"][2]["type"] = {"name": "int", "bitWidth": 8}'
bad "int without isSigned" "schema.fields[2]"
edit "$J" bad.json 'j["batches"][0]["columns"][5]["count"] = 2'
bad "column count disagrees with the batch" "batches[0].columns[5]"
edit "$J" bad.json 'j["batches"][0]["columns"][2]["DATA"] = [1, 2]'
bad "DATA of the wrong length" "batches[0].columns[2].DATA"
edit "$J" bad.json 'j["schema"]["fields"][41]["dictionary"]["id"] = 77'
bad "unknown dictionary id" "77"
python3 -c '
import json
t = {"name": "list"}
f = {"name": "x", "nullable": True, "type": {"name": "int", "bitWidth": 8, "isSigned": True}, "children": []}
for i in range(200):
    f = {"name": "l", "nullable": True, "type": t, "children": [f]}
json.dump({"schema": {"fields": [f]}, "batches": []}, open("bad.json", "w"))'
bad "deep nesting" "schema.fields[0]"
run $I --mode=validate --json=missing.json --arrow=all.arrow
check "missing JSON: exit 1, named ($err)" bash -c '[ $1 -eq 1 ] && grep -qF missing.json <<<"$2"' _ $rc "$err"
head -c 100 all.arrow > cut.arrow
run $I --mode=validate --json="$J" --arrow=cut.arrow
check "truncated Arrow file: exit 1 ($err)" test $rc -eq 1

# ---- usage
run $I --json="$J" --arrow=all.arrow
check "no --mode: exit 2" test $rc -eq 2
run $I --mode=check --json="$J" --arrow=all.arrow
check "unknown mode: exit 2, lists the modes ($err)" bash -c '[ $1 -eq 2 ] && grep -qF arrow-to-json <<<"$2"' _ $rc "$err"
run $I --mode=validate --json="$J"
check "no --arrow: exit 2" test $rc -eq 2

qv_finish
