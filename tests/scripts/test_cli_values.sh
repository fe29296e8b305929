#!/usr/bin/env bash
# `quiver cat` prints values as a person reads them: every date, time,
# timestamp (naive, UTC, fixed offset, named zone), duration and interval
# unit in ISO 8601 or its documented form, values before 1970 and negative
# durations, the raw-number fallback beyond years 0000..9999, decimals with
# their scale (negative, 32 to 256 bits), nan/inf unquoted; `cat --json`
# keeps the integration JSON's rules. Each file is written by quiver's own
# writer (`quiver integration --mode=json-to-arrow`) from JSON built here.
set -uo pipefail
cli=${QV_CLI:?QV_CLI must point at the quiver CLI}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1
pass=0 fail=0
n=0
# column TYPE_JSON DATA_JSON VALIDITY_JSON EXPECTED_LINE...: writes a one-column
# ("v") file, runs cat and compares every line after the header "v" and
# before the summary with the expected lines, in order.
column() {
  local type=$1 data=$2 validity=$3; shift 3
  local count=$#
  n=$((n + 1))
  printf '{"schema":{"fields":[{"name":"v","nullable":true,"type":%s,"children":[]}]},"batches":[{"count":%d,"columns":[{"name":"v","count":%d,"VALIDITY":%s,"DATA":%s}]}]}\n' \
    "$type" "$count" "$count" "$validity" "$data" > "c$n.json"
  if ! "$cli" integration --mode=json-to-arrow --json="c$n.json" --arrow="c$n.arrow" 2> err; then
    fail=$((fail + 1)); echo "FAIL: $type: json-to-arrow: $(cat err)"; return
  fi
  if ! "$cli" cat "c$n.arrow" > out 2> err; then
    fail=$((fail + 1)); echo "FAIL: $type: cat: $(cat err)"; return
  fi
  # line 1 is the schema, line 2 the column header, the last the summary
  mapfile -t got < <(sed -e '1,2d' -e '$d' -e 's/ *$//' out)
  if [ "${#got[@]}" -ne "$count" ]; then
    fail=$((fail + 1)); echo "FAIL: $type: ${#got[@]} value lines, want $count:"; cat out; return
  fi
  local i=0 want
  for want in "$@"; do
    if [ "${got[$i]}" = "$want" ]; then
      pass=$((pass + 1))
    else
      fail=$((fail + 1)); echo "FAIL: $type value $i: got '${got[$i]}', want '$want'"
    fi
    i=$((i + 1))
  done
}

# ---- dates: pre-1970, the year 0000 and 9999 edges, the raw fallback
column '{"name":"date","unit":"DAY"}' '[19783,-1,-719528,-719529,2932896,2932897,0]' '[1,1,1,1,1,1,0]' \
  2024-03-01 1969-12-31 0000-01-01 '-719529 days' 9999-12-31 '2932897 days' null
column '{"name":"date","unit":"MILLISECOND"}' '["1709251200000","1709300707123","-1","-86400000","253402300800000"]' '[1,1,1,1,1]' \
  2024-03-01 2024-03-01T13:45:07.123 1969-12-31T23:59:59.999 1969-12-31 '253402300800000 ms'
# ---- times of day: fraction digits by unit; outside 0..24h the raw value
column '{"name":"time","unit":"SECOND","bitWidth":32}' '[49507,0,86399,86400,-1]' '[1,1,1,1,1]' \
  13:45:07 00:00:00 23:59:59 '86400 s' '-1 s'
column '{"name":"time","unit":"MILLISECOND","bitWidth":32}' '[49507123,1]' '[1,1]' \
  13:45:07.123 00:00:00.001
column '{"name":"time","unit":"MICROSECOND","bitWidth":64}' '["49507123456","86399999999"]' '[1,1]' \
  13:45:07.123456 23:59:59.999999
column '{"name":"time","unit":"NANOSECOND","bitWidth":64}' '["49507123456789","1","-1"]' '[1,1,1]' \
  13:45:07.123456789 00:00:00.000000001 '-1 ns'
# ---- timestamps: naive, every unit, before 1970, the range edges
column '{"name":"timestamp","unit":"SECOND"}' '["1709300707","-1","-62167219200","253402300799","253402300800","-62167219201"]' '[1,1,1,1,1,1]' \
  2024-03-01T13:45:07 1969-12-31T23:59:59 0000-01-01T00:00:00 9999-12-31T23:59:59 '253402300800 s' '-62167219201 s'
column '{"name":"timestamp","unit":"MILLISECOND"}' '["1709300707123","-86400001"]' '[1,1]' \
  2024-03-01T13:45:07.123 1969-12-30T23:59:59.999
column '{"name":"timestamp","unit":"MICROSECOND"}' '["1709300707123456","-1"]' '[1,1]' \
  2024-03-01T13:45:07.123456 1969-12-31T23:59:59.999999
column '{"name":"timestamp","unit":"NANOSECOND"}' '["1709300707123456789","-9223372036854775808","9223372036854775807"]' '[1,1,1]' \
  2024-03-01T13:45:07.123456789 1677-09-21T00:12:43.145224192 2262-04-11T23:47:16.854775807
# ---- timestamps with a zone: UTC as +00:00, a fixed offset applied, a name kept
column '{"name":"timestamp","unit":"MILLISECOND","timezone":"UTC"}' '["1709300707123","-1"]' '[1,1]' \
  2024-03-01T13:45:07.123+00:00 1969-12-31T23:59:59.999+00:00
column '{"name":"timestamp","unit":"MICROSECOND","timezone":"+05:30"}' '["1709300707123456","-1"]' '[1,1]' \
  2024-03-01T19:15:07.123456+05:30 1970-01-01T05:29:59.999999+05:30
column '{"name":"timestamp","unit":"SECOND","timezone":"-08:00"}' '["0"]' '[1]' \
  1969-12-31T16:00:00-08:00
column '{"name":"timestamp","unit":"NANOSECOND","timezone":"Europe/Paris"}' '["1709300707123456789","9223372036854775807"]' '[1,1]' \
  '2024-03-01T13:45:07.123456789Z[Europe/Paris]' '2262-04-11T23:47:16.854775807Z[Europe/Paris]'
column '{"name":"timestamp","unit":"SECOND","timezone":"UTC"}' '["9223372036854775807"]' '[1]' \
  '9223372036854775807 s [UTC]'
# ---- durations in ISO 8601 (hours, minutes, seconds), negative ones signed
column '{"name":"duration","unit":"SECOND"}' '["3723","-3723","0","90000"]' '[1,1,1,1]' \
  PT1H2M3S -PT1H2M3S PT0S PT25H
column '{"name":"duration","unit":"MILLISECOND"}' '["3723500","-500","1"]' '[1,1,1]' \
  PT1H2M3.5S -PT0.5S PT0.001S
column '{"name":"duration","unit":"MICROSECOND"}' '["1500000","-60000001"]' '[1,1]' \
  PT1.5S -PT1M0.000001S
column '{"name":"duration","unit":"NANOSECOND"}' '["1","-1","120000000000","-9223372036854775808"]' '[1,1,1,1]' \
  PT0.000000001S -PT0.000000001S PT2M -PT2562047H47M16.854775808S
# ---- intervals
column '{"name":"interval","unit":"YEAR_MONTH"}' '[14,1,-1]' '[1,1,1]' '14 months' '1 month' '-1 month'
column '{"name":"interval","unit":"DAY_TIME"}' '[{"days":3,"milliseconds":1500},{"days":-1,"milliseconds":-1}]' '[1,1]' \
  '3 days 1500 ms' '-1 day -1 ms'
column '{"name":"interval","unit":"MONTH_DAY_NANO"}' '[{"months":1,"days":2,"nanoseconds":"3"},{"months":-1,"days":-2,"nanoseconds":"-3"}]' '[1,1]' \
  '1 month 2 days 3 ns' '-1 month -2 days -3 ns'
# ---- decimals with their scale
column '{"name":"decimal","precision":9,"scale":2,"bitWidth":32}' '["12345","-12345","5","0"]' '[1,1,1,1]' \
  123.45 -123.45 0.05 0.00
column '{"name":"decimal","precision":18,"scale":-3,"bitWidth":64}' '["12","-12","0"]' '[1,1,1]' \
  12000 -12000 0
column '{"name":"decimal","precision":38,"scale":10}' '["-1","12345678901234567890"]' '[1,1]' \
  -0.0000000001 1234567890.1234567890
column '{"name":"decimal","precision":76,"scale":2,"bitWidth":256}' '["12345","-9999999999999999999999999999999999999999999999999999999999999999999999999999"]' '[1,1]' \
  123.45 -99999999999999999999999999999999999999999999999999999999999999999999999999.99
# ---- floats: nan and infinities as NumPy prints them
column '{"name":"floatingpoint","precision":"DOUBLE"}' '["NaN","Infinity","-Infinity",1.5]' '[1,1,1,1]' \
  nan inf -inf 1.5
column '{"name":"floatingpoint","precision":"SINGLE"}' '["NaN","-Infinity"]' '[1,1]' nan -inf
column '{"name":"floatingpoint","precision":"HALF"}' '["NaN","Infinity"]' '[1,1]' nan inf

# ---- cat --json keeps the integration JSON's rules (numbers, "NaN")
printf '%s\n' '{"schema":{"fields":[{"name":"t","nullable":true,"type":{"name":"timestamp","unit":"SECOND","timezone":"UTC"},"children":[]},{"name":"f","nullable":true,"type":{"name":"floatingpoint","precision":"DOUBLE"},"children":[]}]},"batches":[{"count":1,"columns":[{"name":"t","count":1,"VALIDITY":[1],"DATA":["-1"]},{"name":"f","count":1,"VALIDITY":[1],"DATA":["NaN"]}]}]}' > j.json
"$cli" integration --mode=json-to-arrow --json=j.json --arrow=j.arrow
# (the same document as the input, whitespace aside: the timestamp stays "-1")
if "$cli" cat --json j.arrow > jout 2> err && [ "$(tr -d ' \n' < jout)" = "$(tr -d ' \n' < j.json)" ]; then
  pass=$((pass + 1))
else
  fail=$((fail + 1)); echo "FAIL: cat --json changed its value rules:"; cat jout err
fi

# ---- too deep nesting: the error names the whole path (it used to be cut
# at 512 bytes). deep N: N structs around an int32, as integration JSON.
deep() {
  local f='{"name":"x","nullable":true,"type":{"name":"int","bitWidth":32,"isSigned":true},"children":[]}'
  local c='{"name":"x","count":1,"VALIDITY":[1],"DATA":[7]}' k
  for ((k = 0; k < $1; k++)); do
    f='{"name":"s","nullable":true,"type":{"name":"struct"},"children":['"$f"']}'
    c='{"name":"s","count":1,"VALIDITY":[1],"children":['"$c"']}'
  done
  printf '{"schema":{"fields":[%s]},"batches":[{"count":1,"columns":[%s]}]}\n' "$f" "$c"
}
deep 60 > d60.json
deep 61 > d61.json
deep 64 > d64.json
"$cli" integration --mode=json-to-arrow --json=d60.json --arrow=d60.arrow
# 61 levels of fields (60 structs and the int) read with the default
# FlatBuffer table nesting of 64; one more level does not, so the writer
# refuses it (it never writes what the default readers refuse), naming the
# whole path the reader would stop at
if "$cli" cat d60.arrow > out 2>&1 && grep -q '^(1 row in 1 batch)$' out; then
  pass=$((pass + 1))
else
  fail=$((fail + 1)); echo "FAIL: 60 nested structs:"; cat out
fi
want="Message.header(Schema).fields[0]$(printf '.children[0]%.0s' $(seq 61)).type(Int): tables nested deeper than 64"
"$cli" integration --mode=json-to-arrow --json=d61.json --arrow=d61.arrow 2> err; rc=$?
if [ "$rc" -eq 1 ] && grep -qF -- "$want" err && grep -qF "readers with default limits" err && [ ! -e d61.arrow ]; then
  pass=$((pass + 1))
else
  fail=$((fail + 1)); echo "FAIL: 61 nested structs: want exit 1, no file and the whole path: $want (exit $rc)"; cat err
fi
want="schema.fields[0]$(printf '.children[0]%.0s' $(seq 64)): fields nested deeper than 64"
if ! "$cli" integration --mode=json-to-arrow --json=d64.json --arrow=d64.arrow 2> err && grep -qF -- "$want" err; then
  pass=$((pass + 1))
else
  fail=$((fail + 1)); echo "FAIL: 64 nested structs in JSON: want the whole path: $want"; cat err
fi

echo "test_cli_values: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
