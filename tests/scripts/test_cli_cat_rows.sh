#!/usr/bin/env bash
# cat tells the truth about a table, quickly:
#  - a valid stream declaring 2^40 or 2^62 rows that need no memory (a Null
#    column, a struct of nulls without a validity bitmap, a run-end-encoded
#    column of one run) prints its first and last rows at once: cat visits
#    only the rows it shows (run under a timeout and an address-space limit);
#  - text that would reorder or hide what a terminal shows (bidirectional
#    overrides and isolates, zero-width and other format characters, C1
#    controls) is escaped, in values and in names;
#  - floats print as the shortest text that reads back as the same value in
#    their own type (float16 0.1 is 0.1, the smallest float64 5e-324);
#  - one bad batch at the end does not hide the good rows before it.
. "$QV_SOURCE_DIR/tests/scripts/lib.sh"
qv_tmpdir
qv_need_python
if (ulimit -v 2000000; "$cli" --version) > /dev/null 2>&1; then
  limited() { (ulimit -v 2000000; timeout 20 "$cli" "$@"); }
else # an ASan build reserves terabytes of address space: the timeout alone
  limited() { timeout 20 "$cli" "$@"; }
fi

# 7777 rows through the integration JSON, then every int64 7777 of the
# stream (the batch length, the nodes' lengths and null counts, the one run
# end) patched to 2^40 and 2^62: the result is valid and holds no buffer
# that grows with the length.
"$py" - "$cli" "$tmp" <<'PY'
import json, struct, subprocess, sys
cli, tmp = sys.argv[1], sys.argv[2]
N = 7777
fields = [
    {"name": "n", "nullable": True, "type": {"name": "null"}, "children": []},
    {"name": "s", "nullable": True, "type": {"name": "struct"}, "children": [
        {"name": "x", "nullable": True, "type": {"name": "null"}, "children": []}]},
    {"name": "r", "nullable": True, "type": {"name": "runendencoded"}, "children": [
        {"name": "run_ends", "nullable": False,
         "type": {"name": "int", "isSigned": True, "bitWidth": 64}, "children": []},
        {"name": "values", "nullable": True, "type": {"name": "utf8"}, "children": []}]}]
cols = [
    {"name": "n", "count": N},
    {"name": "s", "count": N, "VALIDITY": [1] * N, "children": [{"name": "x", "count": N}]},
    {"name": "r", "count": N, "children": [
        {"name": "run_ends", "count": 1, "VALIDITY": [1], "DATA": [str(N)]},
        {"name": "values", "count": 1, "VALIDITY": [1], "OFFSET": [0, 2], "DATA": ["hi"]}]}]
doc = {"schema": {"fields": fields}, "batches": [{"count": N, "columns": cols}]}
json.dump(doc, open(tmp + "/big.json", "w"))
subprocess.run([cli, "integration", "--mode=json-to-arrow", "--json=" + tmp + "/big.json",
                "--arrow=" + tmp + "/big.arrow"], check=True)
s = subprocess.run([cli, "file-to-stream", tmp + "/big.arrow"], check=True,
                   capture_output=True).stdout
old = struct.pack('<q', N)
assert s.count(old) == 8, s.count(old)
for name, n in (("b40", 1 << 40), ("b62", 1 << 62)):
    open(tmp + "/" + name + ".arrows", "wb").write(s.replace(old, struct.pack('<q', n)))
# without the struct (whose JSON spells a validity bit per row) the JSON of
# 2^40 rows is small: the Null column is a count, the run one value
del fields[1], cols[1]
json.dump(doc, open(tmp + "/nr.json", "w"))
subprocess.run([cli, "integration", "--mode=json-to-arrow", "--json=" + tmp + "/nr.json",
                "--arrow=" + tmp + "/nr.arrow"], check=True)
s2 = subprocess.run([cli, "file-to-stream", tmp + "/nr.arrow"], check=True,
                    capture_output=True).stdout
assert s2.count(old) == 5, s2.count(old)
open(tmp + "/nr40.arrows", "wb").write(s2.replace(old, struct.pack('<q', 1 << 40)))
# two batches of 2^62 rows: 2^63 in all, past int64
body = s.replace(old, struct.pack('<q', 1 << 62))
schema_len = 8 + struct.unpack('<i', body[4:8])[0]
batch = body[schema_len:len(body) - 8]
open(tmp + "/b63.arrows", "wb").write(body[:schema_len] + batch * 2 + body[-8:])
PY
check "the 2^40-row stream was built" test -s "$tmp/b40.arrows"
for n in 40 62; do
  rows=$("$py" -c "print(1 << $n)")
  out=$(limited validate "$tmp/b$n.arrows" 2>&1); rc=$?
  check "2^$n rows: validate exit 0 ($rc: $out)" test $rc -eq 0
  check "2^$n rows: validate counts them ($out)" has "$out" "1 record batches, $rows rows"
  out=$(limited cat "$tmp/b$n.arrows" 2>&1); rc=$?
  check "2^$n rows: cat exit 0 within the timeout ($rc: $out)" test $rc -eq 0
  check "2^$n rows: cat prints the first rows" test "$(grep -c '^null  {"x": null}  "hi"$' <<<"$out")" -eq 20
  check "2^$n rows: cat says how many were left out" has "$out" "... $((rows - 20)) rows omitted ..."
  check "2^$n rows: cat's summary" has "$out" "($rows rows in 1 batch)"
done
# JSON: refused at once when the text would pass --max-output (the struct's
# VALIDITY alone would be 3 TB), streamed when it is small.
for cmd in "cat --json $tmp/b40.arrows" "integration --mode=arrow-to-json --arrow=$tmp/b40.arrows --json=$tmp/o.json"; do
  # shellcheck disable=SC2086
  out=$(limited $cmd 2>&1 > "$tmp/json.out"); rc=$?
  check "$cmd: exit 1 within the timeout ($rc: $out)" test $rc -eq 1
  check "$cmd: names the limit ($out)" has "$out" "exceeds the limit of 17179869184 (--max-output)"
  check "$cmd: nothing written" test ! -s "$tmp/json.out" -a ! -e "$tmp/o.json"
done
out=$(limited cat --json --max-output 1M "$tmp/b40.arrows" 2>&1 > /dev/null)
check "cat --json --max-output 1M: names it ($out)" has "$out" "exceeds the limit of 1048576 (--max-output)"
for cmd in "cat --json $tmp/nr40.arrows" "integration --mode=arrow-to-json --arrow=$tmp/nr40.arrows --json=-"; do
  # shellcheck disable=SC2086
  out=$(limited $cmd 2>&1); rc=$?
  check "$cmd: exit 0 within the timeout ($rc: ${out:0:300})" test $rc -eq 0
  check "$cmd: the count" test "$(grep -c '"count": 1099511627776' <<<"$out")" -eq 3
  check "$cmd: the run end" has "$out" '"DATA": ["1099511627776"]'
done
out=$(limited cat --json --max-output 500 "$tmp/nr40.arrows" 2>&1 > /dev/null); rc=$?
check "cat --json --max-output 500 of a ~1 KB text: exit 1 ($rc: $out)" test $rc -eq 1

out=$(limited validate "$tmp/b63.arrows" 2>&1); rc=$?
check "2 x 2^62 rows: validate exit 0 ($rc: $out)" test $rc -eq 0
check "2 x 2^62 rows: the total saturates ($out)" has "$out" "2 record batches, at least 9223372036854775807 rows"
out=$(limited cat "$tmp/b63.arrows" 2>&1); rc=$?
check "2 x 2^62 rows: cat exit 1, not an overflow ($rc)" test $rc -eq 1
check "2 x 2^62 rows: cat names the limit ($out)" has "$out" "more than 9223372036854775807 rows in all"

# Invisible and reordering characters, float text.
"$py" - "$cli" "$tmp" <<'PY'
import json, subprocess, sys
cli, tmp = sys.argv[1], sys.argv[2]
strings = ["a\u202ebc", "x\u2066y\u2069z\u200e", "\u061c\u200f\u00ad\u0085", "\U000e0041"]
offs = [0]
for v in strings:
    offs.append(offs[-1] + len(v.encode()))
def f(name, t):
    return {"name": name, "nullable": True, "type": t, "children": []}
fp = lambda p: {"name": "floatingpoint", "precision": p}
doc = {"schema": {"fields": [f("s\u202eevil", {"name": "utf8"}), f("h", fp("HALF")),
                             f("d", fp("DOUBLE")), f("f", fp("SINGLE"))]},
       "batches": [{"count": 4, "columns": [
           {"name": "s\u202eevil", "count": 4, "VALIDITY": [1] * 4, "OFFSET": offs, "DATA": strings},
           {"name": "h", "count": 4, "VALIDITY": [1] * 4, "DATA": [0.1, 65504, 6e-8, 100]},
           {"name": "d", "count": 4, "VALIDITY": [1] * 4, "DATA": [5e-324, 0.1, 100, 2.2250738585072014e-308]},
           {"name": "f", "count": 4, "VALIDITY": [1] * 4, "DATA": [0.1, 1e20, 16777216, 1e-45]}]}]}
json.dump(doc, open(tmp + "/v.json", "w"))
subprocess.run([cli, "integration", "--mode=json-to-arrow", "--json=" + tmp + "/v.json",
                "--arrow=" + tmp + "/v.arrow"], check=True)
PY
out=$("$cli" cat "$tmp/v.arrow" 2>&1); rc=$?
check "values: cat exit 0 ($rc: $out)" test $rc -eq 0
check "a name's U+202E is escaped" has "$out" 'schema: s\u202eevil: string'
check "no raw bidi, format or C1 character is printed" \
  test -z "$(printf '%s' "$out" | grep -P '[\x{80}-\x{9f}\x{ad}\x{61c}\x{200b}-\x{200f}\x{2028}-\x{202e}\x{2060}-\x{206f}\x{feff}\x{e0000}-\x{e007f}]')"
check "U+202E in a value is escaped" has "$out" '"a\u202ebc"'
check "isolates and marks are escaped" has "$out" '"x\u2066y\u2069z\u200e"'
check "U+061C, U+200F, U+00AD, U+0085 are escaped" has "$out" '"\u061c\u200f\u00ad\u0085"'
check "a tag character is escaped" has "$out" '"\udb40\udc41"'
row() { sed -n "$(( $1 + 2 ))p" <<<"$out" | tr -s ' ' | cut -d' ' -f2-; }
check "row 0: float16 0.1, float64 5e-324, float32 0.1 ($(row 1))" test "$(row 1)" = "0.1 5e-324 0.1"
check "row 1: 65504, 0.1, 1e+20 ($(row 2))" test "$(row 2)" = "65504 0.1 1e+20"
check "row 2: the smallest float16 subnormal, 100, 16777216 ($(row 3))" test "$(row 3)" = "6e-08 100 16777216"
check "row 3: 100, the smallest float64 normal, the smallest float32 subnormal ($(row 4))" \
  test "$(row 4)" = "100 2.2250738585072014e-308 1e-45"
# the JSON output reads back as the same values
"$cli" integration --mode=arrow-to-json --arrow="$tmp/v.arrow" --json="$tmp/back.json" &&
  "$cli" integration --mode=validate --json="$tmp/back.json" --arrow="$tmp/v.arrow" > /dev/null 2>&1
check "arrow-to-json -> validate round trip" test $? -eq 0

# Three good batches, then one whose utf8 value is not UTF-8.
"$py" - "$cli" "$tmp" <<'PY'
import json, subprocess, sys
cli, tmp = sys.argv[1], sys.argv[2]
col = lambda vals: {"name": "w", "count": len(vals), "VALIDITY": [1] * len(vals),
                    "OFFSET": [4 * i for i in range(len(vals) + 1)], "DATA": vals}
doc = {"schema": {"fields": [{"name": "w", "nullable": True, "type": {"name": "utf8"}, "children": []}]},
       "batches": [{"count": 2, "columns": [col(["ok%02d" % (2 * b), "ok%02d" % (2 * b + 1)])]}
                   for b in range(3)] + [{"count": 1, "columns": [col(["zzzz"])]}]}
json.dump(doc, open(tmp + "/c.json", "w"))
subprocess.run([cli, "integration", "--mode=json-to-arrow", "--json=" + tmp + "/c.json",
                "--arrow=" + tmp + "/c.arrow"], check=True)
s = subprocess.run([cli, "file-to-stream", tmp + "/c.arrow"], check=True, capture_output=True).stdout
assert s.count(b"zzzz") == 1
open(tmp + "/c.arrows", "wb").write(s.replace(b"zzzz", b"\xff\xfe\xff\xfe"))
PY
"$cli" cat "$tmp/c.arrows" > "$tmp/out" 2> "$tmp/err"; rc=$?
check "a bad last batch: exit 1 ($rc)" test $rc -eq 1
check "a bad last batch: the six good rows are printed" test "$(grep -c '^"ok0[0-5]"$' "$tmp/out")" -eq 6
check "a bad last batch: the summary says the error follows ($(tail -1 "$tmp/out"))" \
  has "$(tail -1 "$tmp/out")" "(6 rows in 3 batches before the error)"
check "a bad last batch: the error names the input and batch 3 ($(cat "$tmp/err"))" \
  has "$(cat "$tmp/err")" "quiver cat: $tmp/c.arrows:"
qv_finish "cat rows"
