#!/usr/bin/env bash
# Every way a command's input arrives gives the same answer: a path (mapped),
# stdin redirected from a file, a pipe, a FIFO named as the path; and the
# failures name the input (a missing file, a directory, a closed stdin).
# The CLI reads through the library's sources (cli/input.c has no read or
# mmap of its own), so this checks the library's read-all too.
. "$QV_SOURCE_DIR/tests/scripts/lib.sh"
ex=$QV_SOURCE_DIR/examples/data
qv_tmpdir
cd "$tmp" || exit 1

file=$ex/arrow_cpp_record_batches.arrow
tensor=$ex/arrow_cpp_tensor_3x4_colmajor.arrow
"$cli" file-to-stream "$file" > batches.arrows || { echo "FAIL: file-to-stream"; exit 1; }

# same CMD... INPUT: CMD on INPUT as a path, from stdin redirected, from a
# pipe and through a FIFO all exit 0 with the same stdout (byte for byte,
# once a line's leading "NAME: " that names the input is set aside: inspect
# and validate say which input they read).
norm() { awk -v n="$1" 'index($0, n ": ") == 1 { $0 = "INPUT: " substr($0, length(n) + 3) } 1' "$2"; }
same() {
  local input=${*: -1} args=("${@:1:$#-1}") what
  what="${args[*]} $(basename "$input")"
  "$cli" "${args[@]}" "$input" > want.out || { echo "FAIL: $what: exit $?"; fail=$((fail + 1)); return; }
  check "$what: some output" test -s want.out
  norm "$input" want.out > want.txt
  "$cli" "${args[@]}" - < "$input" > got.out
  check "$what: stdin from a file, same output" cmp -s want.txt <(norm stdin got.out | norm - /dev/stdin)
  cat "$input" | "$cli" "${args[@]}" - > got.out
  check "$what: a pipe, same output" cmp -s want.txt <(norm stdin got.out | norm - /dev/stdin)
  rm -f fifo && mkfifo fifo
  cat "$input" > fifo &
  local writer=$!
  "$cli" "${args[@]}" fifo > got.out
  wait "$writer"
  check "$what: a FIFO path, same output" cmp -s want.txt <(norm fifo got.out)
}

same inspect "$file"
same inspect batches.arrows
same inspect "$tensor"
same cat "$file"
same cat batches.arrows
same cat "$tensor"
same cat --json "$file"
same cat --json "$tensor"
same validate "$file"
same validate batches.arrows
same file-to-stream "$file"

# a pipe that delivers its bytes slowly, in small pieces
(for i in $(seq 0 63 $(($(stat -c %s "$file") - 1))); do
   dd if="$file" bs=1 skip="$i" count=63 status=none; sleep 0.01; done) | "$cli" cat - > got.out
"$cli" cat "$file" > want.out
check "cat: a pipe written 63 bytes at a time, same output" cmp -s want.out got.out

# an empty input: no messages, the same verdict from a path and a pipe
: > empty.arrow
run inspect empty.arrow
want_rc=$rc want_err=${err#*empty.arrow}
check "inspect of an empty file: exit 1 ($err)" test $rc -eq 1
"$cli" inspect - < /dev/null > /dev/null 2> err.txt; rc=$?
check "inspect of empty stdin: exit $want_rc, the same reason ($(cat err.txt))" \
  bash -c '[ $1 -eq $2 ] && grep -qF -- "$3" err.txt && grep -q "stdin" err.txt' _ $rc $want_rc "$want_err"

# failures name the input
for c in inspect cat validate file-to-stream; do
  run $c missing.arrow
  check "$c missing.arrow: exit 1, named ($err)" bash -c '[ $1 -eq 1 ] && grep -qF missing.arrow <<<"$2"' _ $rc "$err"
  mkdir -p adir
  run $c adir
  check "$c adir (a directory): exit 1, named ($err)" bash -c '[ $1 -eq 1 ] && grep -qF adir <<<"$2"' _ $rc "$err"
  "$cli" $c - <&- > /dev/null 2> err.txt; rc=$?
  check "$c with stdin closed: exit 1, says stdin ($(cat err.txt))" \
    bash -c '[ $1 -eq 1 ] && grep -q "stdin" err.txt && ! grep -qF "<fd 0>" err.txt' _ $rc
done

qv_finish test_cli_inputs
