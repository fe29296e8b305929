#!/bin/sh
# run_example.sh PATTERN COUNT PROGRAM [ARGS...]: runs an example program,
# which must exit 0 and print at least COUNT lines matching PATTERN (an
# extended regular expression), so an example that silently does less fails.
pattern=$1
want=$2
shift 2
out=$("$@")
rc=$?
printf '%s\n' "$out"
if [ "$rc" -ne 0 ]; then
  echo "FAIL: $1 exited $rc" >&2
  exit 1
fi
got=$(printf '%s\n' "$out" | grep -E -c -- "$pattern")
if [ "$got" -lt "$want" ]; then
  echo "FAIL: $got line(s) match '$pattern', want $want" >&2
  exit 1
fi
