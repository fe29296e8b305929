#!/usr/bin/env bash
# The habits every quiver command shares: `quiver --version`, `quiver help
# CMD` and `quiver CMD --help` for every command (never read as a file name),
# one-line usage errors, and the exit statuses: 0 ok, 1 invalid input, 2 usage,
# 3 valid but not supported. Every input is built here.
. "$QV_SOURCE_DIR/tests/scripts/lib.sh"
src=$QV_SOURCE_DIR
qv_tmpdir
cd "$tmp" || exit 1
# run ARGS...: sets rc, out (stdout), err (stderr)
lines() { printf '%s\n' "$1" | grep -c .; }
hex() { printf "$(sed 's/../\\x&/g' <<<"$1")"; }

# every command `quiver help` lists (so a new one is covered too), and at
# least these
commands=$("$cli" help | awk '/^commands:/ {f = 1; next} /^$/ {f = 0} f {print $1}')
for c in inspect tensor cat convert validate stream-to-file file-to-stream; do
  grep -qx "$c" <<<"$commands" || { echo "FAIL: quiver help does not list $c"; exit 1; }
done

# ---- --version: "quiver X.Y.Z", the version the headers declare
ver=$(awk '/#define QV_VERSION_(MAJOR|MINOR|PATCH) / {v = v (v == "" ? "" : ".") $3} END {print v}' \
  "$src/include/quiver/version.h")
run --version
check "--version: exit 0" test $rc -eq 0
check "--version: 'quiver $ver' (got '$out')" test "$out" = "quiver $ver"
run --version extra
check "--version extra: exit 2" test $rc -eq 2

# ---- help
run help
check "help: exit 0" test $rc -eq 0
for c in $commands; do
  check "help lists $c" grep -q "^  $c " <<<"$out"
done
check "help: exit statuses documented" grep -q '3 valid input that quiver does not support' <<<"$out"
run --help
check "--help: exit 0 and the same text" test $rc -eq 0 -a "$out" = "$("$cli" help)"
run
check "no command: exit 2" test $rc -eq 2
check "no command: usage on stderr" grep -q '^usage: quiver' <<<"$err"
run help no-such-command
check "help of an unknown command: exit 2" test $rc -eq 2
check "help of an unknown command: named" grep -q "unknown command 'no-such-command'" <<<"$err"
run no-such-command
check "unknown command: exit 2" test $rc -eq 2

for c in $commands; do
  run help "$c"
  check "help $c: exit 0" test $rc -eq 0
  check "help $c: its usage" grep -q "^usage: quiver $c" <<<"$out"
  check "help $c: nothing on stderr" test -z "$err"
  help=$out
  for flag in --help -h; do
    run "$c" $flag
    check "$c $flag: exit 0" test $rc -eq 0
    check "$c $flag: same text as help $c" test "$out" = "$help"
  done
  # --help anywhere among the arguments, and a file named --help is not read
  echo garbage > ./--help
  run "$c" ./in.arrow --help
  check "$c IN --help: exit 0, help" test $rc -eq 0 -a "$out" = "$help"
  rm -f ./--help
done
run tensor from-npy --help
check "tensor from-npy --help: the tensor help" test $rc -eq 0 -a "$out" = "$("$cli" help tensor)"

# after "--", "--help" is a file name
cp "$src/examples/data/arrow_cpp_tensor_3x4_colmajor.arrow" ./--help
run cat -- --help
check "cat -- --help: reads the file" test $rc -eq 0
check "cat -- --help: prints it" grep -q 'Tensor float64 shape=\[3, 4\]' <<<"$out"
rm -f ./--help

# ---- usage errors: one line and a pointer to --help, exit 2
run cat
check "cat without FILE: exit 2" test $rc -eq 2
check "cat without FILE: says so" grep -q "^quiver cat: needs a FILE" <<<"$err"
check "cat without FILE: two lines" test "$(lines "$err")" -eq 2
check "cat without FILE: points at --help" grep -q "Try 'quiver cat --help'" <<<"$err"
run inspect a b
check "inspect a b: exit 2" test $rc -eq 2
check "inspect a b: names the extra argument" grep -q "unexpected argument 'b'" <<<"$err"
run cat --bogus x
check "cat --bogus: exit 2" test $rc -eq 2
check "cat --bogus: names the option" grep -q "unknown option '--bogus'" <<<"$err"

# a bad option value: the option and the values it takes, in one line plus
# the pointer to --help (not the whole usage again)
ex="$src/examples/data/arrow_cpp_tensor_3x4_colmajor.arrow"
npy="$src/examples/data/sparse_8x10.npy"
bad_value() { # description, needle, args...
  local what=$1 needle=$2; shift 2
  run "$@"
  check "$what: exit 2 (got $rc)" test $rc -eq 2
  check "$what: names the option and its values ($err)" grep -qF -- "$needle" <<<"$err"
  check "$what: two lines ($err)" test "$(lines "$err")" -eq 2
  check "$what: no output file" test ! -e out.arrow
}
bad_value "convert --to=bogus" "--to: 'bogus' is not one of dense, coo, csr, csc, csf" \
  convert "$ex" out.arrow --to=bogus
bad_value "convert --to bogus" "--to: 'bogus' is not one of dense, coo, csr, csc, csf" \
  convert "$ex" out.arrow --to bogus
bad_value "convert --to without a value" "--to needs a value: one of dense, coo, csr, csc, csf" \
  convert "$ex" out.arrow --to
bad_value "convert without --to" "needs --to=dense|coo|csr|csc|csf" convert "$ex" out.arrow
bad_value "convert --index=-1" "--index: '-1' is not a non-negative integer" \
  convert "$ex" out.arrow --to=csr --index=-1
bad_value "convert --index x" "--index: 'x' is not a non-negative integer" \
  convert "$ex" out.arrow --to=csr --index x
bad_value "convert --index-type=float32" \
  "--index-type: 'float32' is not one of int8, int16, int32, int64, uint8, uint16, uint32, uint64" \
  convert "$ex" out.arrow --to=csr --index-type=float32
bad_value "convert --csf-lengths=words" "--csf-lengths: 'words' is not one of elements, bytes" \
  convert "$ex" out.arrow --to=csf --csf-lengths=words
bad_value "convert --axis-order=a" "--axis-order: 'a' is not a comma-separated list" \
  convert "$ex" out.arrow --to=csf --axis-order=a
bad_value "tensor from-npy --sparse=bsr" "--sparse: 'bsr' is not one of coo, csr, csc, csf" \
  tensor from-npy "$npy" out.arrow --sparse=bsr
bad_value "tensor to-npz --stored=yes" "--stored takes no value" tensor to-npz "$ex" out.arrow --stored=yes
bad_value "tensor frobnicate" "'frobnicate' is not one of from-npy, to-npy, from-npz, to-npz" \
  tensor frobnicate a b
bad_value "tensor from-npy --index 1" "--index applies to to-npy and to-npz only" \
  tensor from-npy "$npy" out.arrow --index 1
bad_value "stream-to-file --compression=brotli" "--compression: 'brotli' is not one of none, lz4, zstd" \
  stream-to-file --compression=brotli
bad_value "file-to-stream --align 7" "--align: '7' is not one of 8, 64" file-to-stream --align 7 "$ex"
bad_value "file-to-stream without FILE" "file-to-stream: needs a FILE" file-to-stream --align=64
bad_value "validate --strict" "unknown option '--strict'" validate --strict "$ex"
run convert "$ex" out.arrow --to csr --index 0
check "convert --to csr --index 0 (separate values): exit 0 ($err)" test $rc -eq 0
run convert out.arrow out.arrow --to=coo --index-type int32
check "convert in place, --index-type int32: exit 0 ($err)" test $rc -eq 0
check "convert in place: the output is COO int32" grep -q 'COO float64 shape=\[3, 4\] nnz=12 .*index=int32' \
  <<<"$("$cli" inspect out.arrow)"
rm -f out.arrow

# ---- exit statuses 0 / 1 / 3
run cat "$src/examples/data/arrow_cpp_csr_6x4.arrow"
check "cat of a valid file: exit 0" test $rc -eq 0
printf 'this is not arrow' > garbage.arrow
run cat garbage.arrow
check "cat of garbage: exit 1" test $rc -eq 1
check "cat of garbage: message" grep -q '^quiver cat: ' <<<"$err"
check "cat of garbage: names the file" grep -q '^quiver cat: garbage.arrow: ' <<<"$err"
run cat - < garbage.arrow
check "cat of garbage on stdin: says stdin" grep -q '^quiver cat: stdin: ' <<<"$err"
# a NumPy file: which command reads it, not what its bytes would mean as Arrow
printf '\223NUMPY\001\000' > x.npy
run cat x.npy
check "cat of a .npy: exit 1" test $rc -eq 1
check "cat of a .npy: suggests tensor from-npy ($err)" \
  grep -qF "quiver cat: x.npy: a NumPy .npy file, not Arrow IPC: 'quiver tensor from-npy IN.npy OUT.arrow'" <<<"$err"
run cat "$src/examples/data/scipy_csc_5x7.npz"
check "cat of a .npz: exit 1" test $rc -eq 1
check "cat of a .npz: suggests tensor from-npz ($err)" grep -qF "'quiver tensor from-npz " <<<"$err"
run inspect missing.arrow
check "inspect of a missing file: exit 1" test $rc -eq 1

# A stream whose Schema is big-endian (int32 field "x"), then end-of-stream:
# read like any other stream since issue 12 (it used to be "not supported").
# Bytes from qv_message_encode of that Schema, framed with a continuation
# marker and padded to 8.
hex ffffffff800000001000000000000a000c000a00090004000a000000100000000001040008000c000a00040008000000080000000000010001000000140000001000140010000f000e00080000000400100000001000000018000000000002011c0000000000000008000c0008000700080000000000000120000000000000000000000000000000ffffffff00000000 > big.arrows
run cat big.arrows
check "cat of a big-endian stream: exit 0 ($err)" test $rc -eq 0
run validate big.arrows
check "validate of a big-endian stream: exit 0 ($err)" test $rc -eq 0
check "validate of a big-endian stream: valid" grep -q '^big.arrows: valid Arrow stream' <<<"$out"
run inspect big.arrows
check "inspect of a big-endian stream: exit 0 (it only lists messages)" test $rc -eq 0
check "inspect of a big-endian stream: says big-endian" grep -q '(big-endian)' <<<"$out"

# An .npy of format version 9.0 (NumPy knows 1.0 to 3.0): not supported.
header="{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }"
{ printf '\223NUMPY\011\000v\000%s' "$header"
  printf '%*s\n' $((117 - ${#header})) ''
  printf '\000%.0s' {1..16}; } > v9.npy
run tensor from-npy v9.npy v9.arrow
check "from-npy of a version 9 .npy: exit 3 ($err)" test $rc -eq 3
check "from-npy of a version 9 .npy: no output" test ! -e v9.arrow
cp v9.npy v1.npy  # the same file as version 1.0
printf '\001' | dd of=v1.npy bs=1 seek=6 conv=notrunc status=none
run tensor from-npy v1.npy v1.arrow
check "from-npy of the same .npy as version 1.0: exit 0 ($err)" test $rc -eq 0

# ---- names from files are data: a dimension named "ev<ESC>[31mil\<CSI>" and a
# byte that is not UTF-8 (qv_tensor_write_fd of a float64 [1, 2] with that
# dim name) is printed escaped, never as terminal control sequences
hex ffffffffb800000014000000000000000c001a0018001700100004000c000000400000000000000000000000180000000000000404000e002800270020001c00180004000e000000000000000000000010000000000000000000000010000000180000004c00000000000003010000000800000000000000010000000c0000000800100008000400080000000c00000002000000000000000d00000065761b5b33316d696c5cc29bff0006000800060006000000000002000000000000000000000000000000f03f0000000000000040000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000 > names.arrow
escaped='names=[ev\u001b[31mil\\\u009b\xff]'
for c in cat inspect; do
  run $c names.arrow
  check "$c of a file with control characters in a name: exit 0" test $rc -eq 0
  check "$c: the name escaped" grep -qF "$escaped" <<<"$out"
  check "$c: no control character printed" test -z "$(tr -d '\n' <<<"$out" | LC_ALL=C tr -d '\040-\176')"
done

# the same for a record batch stream: one int32 column named "ev<ESC>[31mil",
# one row (qv_rb_writer_new/write/finish); and "1 row in 1 batch"
hex ffffffff800000001000000000000a000c000a00090004000a00000010000000000104000800080000000400080000000400000001000000140000001000140010000f000e00080000000400100000001000000018000000000002011c0000000000000008000c00080007000800000000000001200000000900000065761b5b33316d696c000000ffffffff8800000014000000000000000c001600140013000c0004000c0000000800000000000000140000000000000304000a0018000c00080004000a00000014000000380000000100000000000000000000000200000000000000000000000000000000000000000000000000000004000000000000000000000001000000010000000000000000000000000000000700000000000000ffffffff00000000 > names.arrows
for c in cat inspect; do
  run $c names.arrows
  check "$c of a column name with ESC: exit 0" test $rc -eq 0
  check "$c: the column name escaped" grep -qF 'ev\u001b[31mil' <<<"$out"
  check "$c: no control character printed" test -z "$(tr -d '\n' <<<"$out" | LC_ALL=C tr -d '\040-\176')"
done
run cat names.arrows
check "cat: '(1 row in 1 batch)'" grep -qxF '(1 row in 1 batch)' <<<"$out"

# columns aligned by display width: "漢字" takes 4 columns, "e" + U+0301
# (a combining accent) 1; written by qv_rb_writer_* with columns s: utf8,
# n: int32 and the rows ("漢字", 1), ("ab", 2), ("é", 3)
hex ffffffffa80000001000000000000a000c000a00090004000a000000100000000001040008000800000004000800000004000000020000004c00000004000000ccffffff1000000018000000000002011c0000000000000008000c0008000700080000000000000120000000010000006e0000001000140010000f000e000800000004001000000010000000140000000000050110000000000000000400040004000000010000007300000000000000ffffffffc800000014000000000000000c001600140013000c0004000c0000003000000000000000140000000000000304000a0018000c00080004000a000000140000006800000003000000000000000000000005000000000000000000000000000000000000000000000000000000100000000000000010000000000000000b000000000000002000000000000000000000000000000020000000000000000c00000000000000000000000200000003000000000000000000000000000000030000000000000000000000000000000000000006000000080000000b000000e6bca2e5ad97616265cc81000000000001000000020000000300000000000000ffffffff00000000 > wide.arrows
run cat wide.arrows
check "cat of wide characters: exit 0" test $rc -eq 0
check "cat: the header" grep -qxF 's       n' <<<"$out"
check "cat: a CJK cell takes two columns a character" grep -qxF '"漢字"  1' <<<"$out"
check "cat: an ASCII cell" grep -qxF '"ab"    2' <<<"$out"
check "cat: a combining accent takes none" grep -qxF "$(printf '"e\314\201"     3')" <<<"$out"

qv_finish
