#!/usr/bin/env bash
# #22: one type spelling, Arrow C++'s DataType::ToString, printed by both
# `quiver cat` (its schema line) and `quiver inspect` (the Schema message's
# fields): the same text for every field of every Arrow gold case, and
# Arrow C++'s own text for the types of a few of them.
. "$QV_SOURCE_DIR/tests/scripts/lib.sh"
gold=${QV_SHARED_DIR:-}/testdata/arrow-testing/integration/cpp-21.0.0
[ -n "${QV_SHARED_DIR:-}" ] && [ -d "$gold" ] || qv_skip "the Arrow gold files are not in ../shared"
qv_tmpdir

# The fields as cat prints them, and as inspect does (without the dictionary
# ids, which only inspect prints: they are not part of a type).
cat_fields() { "$cli" cat "$1" 2>/dev/null | sed -n '1s/^schema: //p'; }
inspect_fields() {
  "$cli" inspect "$1" 2>/dev/null | grep -m1 ' Schema ' |
    sed -E 's/^.* fields? \((little|big)-endian\)(: )?//; s/ \[dictionary ids?=[0-9,]+\]//g'
}

n=0
for f in "$gold"/../*/*.stream; do
  c=$(cat_fields "$f")
  i=$(inspect_fields "$f")
  [ -n "$c" ] || continue
  case "$i" in *...) continue ;; esac # inspect cuts a line of more than 4 kB
  n=$((n + 1))
  check "${f#"$gold/../"}: cat and inspect spell the types alike (cat: $c; inspect: $i)" test "$c" = "$i"
done
check "compared at least 85 gold streams ($n)" test "$n" -ge 85

# Arrow C++'s spelling (type_test.cc, extension tests), as the gold files
# hold these types
expect() {
  local file=$1 want=$2
  check "$file: cat says $want" has "$(cat_fields "$gold/$file")" "$want"
  check "$file: inspect says $want" has "$(inspect_fields "$gold/$file")" "$want"
}
expect generated_datetime.stream "f0: date32[day], f1: date64[ms], f2: time32[s]"
expect generated_datetime.stream "f11: timestamp[s, tz=UTC]"
expect generated_nested.stream "fixedsizelist_nullable: fixed_size_list<item: int32>[4]"
expect generated_nested.stream "struct_nullable: struct<f1: int32, f2: string>"
expect generated_union.stream "sparse_1: sparse_union<f1: int32=5, f2: string=7>"
expect generated_union.stream "dense_2: dense_union<f1: uint8 not null=42, f2: uint16=43, f3: null=44> not null"
expect generated_dictionary.stream "dict0: dictionary<values=string, indices=int8, ordered=0>"
expect generated_map_non_canonical.arrow_file \
  "map_other_names: map<string ('some_key'), int32 ('some_value') ('some_entries')>"
expect generated_run_end_encoded.stream "ree32_utf8: run_end_encoded<run_ends: int32, values: string>"
expect generated_run_end_encoded.stream "ree64_float32: run_end_encoded<run_ends: int64, values: float>"
expect generated_list_view.stream "lv: list_view<item: float>, llv: large_list_view<item: float>"
expect generated_decimal32.stream "f0: decimal32(3, 2)"
expect generated_interval.stream "f5: month_interval, f6: day_time_interval"
expect generated_extension.stream "uuids: extension<arrow.uuid>"
expect generated_extension.stream \
  "dict_exts: extension<dict-extension[storage_type=dictionary<values=string, indices=int8, ordered=0>]>"

# inspect adds the dictionary ids after the type
check "inspect: the dictionary id after the type" \
  has "$("$cli" inspect "$gold/generated_dictionary.stream")" "indices=int8, ordered=0> [dictionary id=0]"

qv_finish "type spelling"
