#!/usr/bin/env bash
# Arrow's five integration steps (archery's) over every gold case of
# ../shared/testdata/arrow-testing/integration (Arrow C++ 0.14.1 ... 21.0.0,
# little- and big-endian; README-quiver.md beside it), as `quiver
# integration` answers them:
#   1. validate: NAME.arrow_file equals NAME.json.gz;
#   2. stream -> file: `stream-to-file < NAME.stream`, then validate;
#   3. JSON -> Arrow: `integration --mode=json-to-arrow`, then validate;
#   4. file -> stream -> file: `file-to-stream | stream-to-file`, then validate;
#   5. negative: the file against the JSON with one value changed
#      (gold_change_value.py says which) is reported as differing.
# A validate that passes prints nothing; every step of every case must pass.
# The generated_decimal* cases of 0.14.1 and 1.0.0 hold decimals beyond their
# precision (the generator of those releases drew them by bit width), which
# full validation refuses as Arrow C++'s ValidateFull does: they run with the
# documented quirk --accept-decimal-overflow, and are checked to be refused
# without it.
. "$QV_SOURCE_DIR/tests/scripts/lib.sh"
gold=${QV_SHARED_DIR:-}/testdata/arrow-testing/integration
[ -n "${QV_SHARED_DIR:-}" ] && [ -d "$gold" ] ||
  qv_skip "Arrow's gold files ($gold) not found"
qv_need_python
qv_tmpdir

"$py" "$QV_SOURCE_DIR/tests/scripts/gold_change_value.py" "$gold" "$tmp/changed" > "$tmp/changes" ||
  { echo "FAIL: gold_change_value.py"; exit 1; }

declare -A group_pass group_fail
cases=0 steps=0 big=0 little=0
# step CASE NAME COMMAND...: one step of CASE, its outcome counted
step() {
  local c=$1 s=$2
  shift 2
  steps=$((steps + 1))
  local ok=1
  "$@" > "$tmp/step.out" 2>&1 || ok=0
  local g=${c%%/*}
  if [ $ok -eq 1 ]; then
    pass=$((pass + 1)) group_pass[$g]=$((${group_pass[$g]:-0} + 1))
  else
    fail=$((fail + 1)) group_fail[$g]=$((${group_fail[$g]:-0} + 1))
    echo "FAIL: $c $s: $(head -c 600 "$tmp/step.out")"
  fi
}
# equal ARROW JSON: validate exits 0 and prints nothing
equal() {
  "$cli" integration $quirk --mode=validate --json="$2" --arrow="$1" || return 1
  [ ! -s "$tmp/step.out" ]
}
s2f() { "$cli" stream-to-file $quirk < "$1" > "$tmp/s2f.arrow" && equal "$tmp/s2f.arrow" "$2"; }
j2a() {
  "$cli" integration $quirk --mode=json-to-arrow --json="$1" --arrow="$tmp/j2a.arrow" &&
    equal "$tmp/j2a.arrow" "$1"
}
f2s2f() {
  "$cli" file-to-stream $quirk "$1" > "$tmp/f2s.stream" &&
    "$cli" stream-to-file $quirk < "$tmp/f2s.stream" > "$tmp/f2s.arrow" && equal "$tmp/f2s.arrow" "$2"
}
# refused ARROW: full validation refuses a decimal beyond its precision
refused() {
  "$cli" validate "$1"
  [ $? -eq 1 ] && grep -q "does not fit in precision" "$tmp/step.out"
}
# differs ARROW CHANGED_JSON: exit 1 naming the difference
differs() {
  [ -f "$2" ] || { echo "no changed JSON"; return 1; }
  "$cli" integration $quirk --mode=validate --json="$2" --arrow="$1"
  local rc=$?
  [ $rc -eq 1 ] && grep -q "differs from" "$tmp/step.out"
}

while read -r c what; do
  g=${c%%/*} n=${c#*/}
  base=$gold/$g/$n
  json=$base.json.gz
  cases=$((cases + 1))
  case $g in *bigendian*) big=$((big + 1)) ;; *) little=$((little + 1)) ;; esac
  quirk=
  case $g/$n in
    0.14.1/generated_decimal | 1.0.0-*/generated_decimal | 1.0.0-*/generated_decimal256)
      quirk=--accept-decimal-overflow
      step "$c" "refused without $quirk" refused "$base.arrow_file" ;;
  esac
  step "$c" validate equal "$base.arrow_file" "$json"
  step "$c" stream-to-file s2f "$base.stream" "$json"
  step "$c" json-to-arrow j2a "$json"
  step "$c" file-to-stream-to-file f2s2f "$base.arrow_file" "$json"
  step "$c" negative differs "$base.arrow_file" "$tmp/changed/${g}__$n.json"
done < "$tmp/changes"

n_json=$(ls "$gold"/*/*.json.gz | wc -l)
check "every case ran ($cases of $n_json)" test "$cases" -eq "$n_json" -a "$cases" -gt 0
check "both byte orders ($little little-endian, $big big-endian cases)" test "$little" -gt 0 -a "$big" -gt 0
for g in $(printf '%s\n' "${!group_pass[@]}" "${!group_fail[@]}" | sort -u); do
  echo "$g: ${group_pass[$g]:-0} steps passed, ${group_fail[$g]:-0} failed"
done
qv_finish "gold integration ($cases cases, $steps steps)"
