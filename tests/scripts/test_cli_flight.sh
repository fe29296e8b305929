#!/usr/bin/env bash
# quiver flight serve / list / info / get / put / action against each other
# over loopback: the served files come back value for value, uploads need
# --allow-put, never replace a file and leave nothing when they fail, a
# token server refuses calls without it (UNAUTHENTICATED), usage errors exit
# 2, and SIGTERM ends the server cleanly (exit 0).
. "$QV_SOURCE_DIR/tests/scripts/lib.sh"
qv_tmpdir
mkdir "$tmp/dir" "$tmp/dir/sub"
cp "$QV_SOURCE_DIR/examples/data/arrow_cpp_record_batches.arrow" "$tmp/dir/"
cp "$QV_SOURCE_DIR/examples/data/arrow_cpp_tensor_3x4_colmajor.arrow" "$tmp/dir/sub/t.arrow"
echo "not arrow" > "$tmp/dir/notes.txt"

pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; rm -rf "$tmp"; }
trap cleanup EXIT

# serve NAME ARGS...: starts a server, sets $uri and ${NAME}_pid
serve() {
  local name=$1
  shift
  "$cli" flight serve "$@" > "$tmp/$name.out" 2> "$tmp/$name.err" &
  local pid=$!
  pids+=("$pid")
  eval "${name}_pid=$pid"
  for _ in $(seq 100); do
    uri=$(head -n 1 "$tmp/$name.out" 2>/dev/null)
    [ -n "$uri" ] && return 0
    sleep 0.1
  done
  echo "FAIL: server $name did not start: $(cat "$tmp/$name.err")"
  exit 1
}

serve plain "$tmp/dir" --port 0 --allow-put
check "URI on the first line ($uri)" has "$uri" "grpc://127.0.0.1:"
run flight list "$uri"
check "list exits 0 ($err)" test $rc -eq 0
check "list names the file" has "$out" $'arrow_cpp_record_batches.arrow\t9 rows\t3130 bytes'
check "list names the file in a subdirectory" has "$out" $'sub/t.arrow\t3 rows'
check "list skips what is not Arrow" test "$(grep -c notes <<<"$out")" -eq 0
run flight info "$uri" arrow_cpp_record_batches.arrow
check "info exits 0 ($err)" test $rc -eq 0
check "info: rows" has "$out" "rows: 9"
check "info: a field" has "$out" "list_i64: +l"
# a tensor file is served as the table `quiver tensor unstack` makes of it
"$cli" tensor unstack "$tmp/dir/sub/t.arrow" "$tmp/unstacked.arrows" || echo "FAIL: unstack"
for f in arrow_cpp_record_batches.arrow sub/t.arrow; do
  run flight get "$uri" "$f" "$tmp/got.arrows"
  check "get $f exits 0 ($err)" test $rc -eq 0
  want=$tmp/dir/$f
  [ "$f" = sub/t.arrow ] && want=$tmp/unstacked.arrows
  "$cli" cat "$want" > "$tmp/want.txt" 2>&1
  "$cli" cat "$tmp/got.arrows" > "$tmp/have.txt" 2>&1
  check "get $f: the same values" cmp -s "$tmp/want.txt" "$tmp/have.txt"
  check "get $f: values printed" test -s "$tmp/have.txt"
done
"$cli" flight get "$uri" arrow_cpp_record_batches.arrow > "$tmp/stdout.arrows" 2> "$tmp/err"
"$cli" cat "$tmp/stdout.arrows" > "$tmp/have.txt" 2>&1
"$cli" cat "$tmp/dir/arrow_cpp_record_batches.arrow" > "$tmp/want.txt" 2>&1
check "get to stdout: the same values" cmp -s "$tmp/want.txt" "$tmp/have.txt"
run flight get "$uri" missing.arrow "$tmp/x"
check "get of a missing file exits 1" test $rc -eq 1
check "get of a missing file: NOT_FOUND ($err)" has "$err" "NOT_FOUND"
run flight get "$uri" ../etc/passwd "$tmp/x"
check "a path leaving DIR is refused ($err)" test $rc -eq 1

# uploads
run flight put "$uri" up.arrow "$tmp/dir/arrow_cpp_record_batches.arrow"
check "put exits 0 ($err)" test $rc -eq 0
check "put prints the server's PutResult" has "$out" "stored up.arrow"
"$cli" cat "$tmp/dir/up.arrow" > "$tmp/have.txt" 2>&1
check "the stored file holds the values" cmp -s "$tmp/want.txt" "$tmp/have.txt"
cp "$tmp/dir/up.arrow" "$tmp/before"
run flight put "$uri" up.arrow "$tmp/got.arrows"
check "put over an existing file exits 1" test $rc -eq 1
check "put over an existing file: ALREADY_EXISTS ($err)" has "$err" "ALREADY_EXISTS"
check "the existing file is untouched" cmp -s "$tmp/before" "$tmp/dir/up.arrow"
head -c 1500 "$tmp/stdout.arrows" > "$tmp/cut.arrows"
run flight put "$uri" cut.arrows "$tmp/cut.arrows"
check "a truncated upload exits 1" test $rc -eq 1
check "a truncated upload leaves no file" test ! -e "$tmp/dir/cut.arrows"
check "nor a temporary file" test "$(ls -A "$tmp/dir" | grep -c '^\.')" -eq 0
run flight action "$uri" list-paths
check "action list-paths ($err)" has "$out" "sub/t.arrow"
run flight action "$uri" nope
check "an unknown action exits 1 ($err)" test $rc -eq 1

# usage
run flight list
check "list without URI: usage (2)" test $rc -eq 2
run flight list "http://x:1"
check "a bad URI exits 1 ($err)" test $rc -eq 1
run flight serve
check "serve without DIR: usage (2)" test $rc -eq 2
run flight bogus
check "an unknown subcommand: usage (2)" test $rc -eq 2
run flight list "$uri" --header novalue
check "--header without '=': usage (2)" test $rc -eq 2

# a server without --allow-put, with a token
serve tok "$tmp/dir" --token s3cret
run flight list "$uri"
check "no token: exit 1" test $rc -eq 1
check "no token: UNAUTHENTICATED ($err)" has "$err" "UNAUTHENTICATED"
run flight list "$uri" --token wrong
check "a wrong token: UNAUTHENTICATED" has "$err" "UNAUTHENTICATED"
run flight list "$uri" --token s3cret --header x-client=test --timeout 10
check "the token: exit 0 ($err)" test $rc -eq 0
run flight put "$uri" new.arrow "$tmp/got.arrows" --token s3cret
check "put without --allow-put: PERMISSION_DENIED ($err)" has "$err" "PERMISSION_DENIED"
check "put without --allow-put stores nothing" test ! -e "$tmp/dir/new.arrow"

# --no-fsync on get (the one client command that writes a file): the same
# bytes; strace, when installed, counts the fsyncs of the durable write
run flight get "$uri" arrow_cpp_record_batches.arrow "$tmp/durable.arrows" --token s3cret
check "get (durable) exits 0 ($err)" test $rc -eq 0
run flight get "$uri" arrow_cpp_record_batches.arrow "$tmp/scratch.arrows" --token s3cret --no-fsync
check "get --no-fsync exits 0 ($err)" test $rc -eq 0
check "get --no-fsync writes the same bytes" cmp -s "$tmp/durable.arrows" "$tmp/scratch.arrows"
if command -v strace >/dev/null 2>&1; then
  fsyncs() { strace -f -e trace=fsync,fdatasync "$cli" "$@" 2>&1 >/dev/null | grep -c '^\(\[pid  *[0-9]*\] \)\?f\(data\)\?sync('; }
  n=$(fsyncs flight get "$uri" arrow_cpp_record_batches.arrow "$tmp/s2.arrows" --token s3cret)
  check "get: the durable write fsyncs the file and its directory ($n calls)" test "$n" -ge 2
  n=$(fsyncs flight get "$uri" arrow_cpp_record_batches.arrow "$tmp/s3.arrows" --token s3cret --no-fsync)
  check "get --no-fsync: no fsync ($n calls)" test "$n" -eq 0
fi
run flight list "$uri" --token s3cret --no-fsync
check "list (writes no file) refuses --no-fsync (rc $rc)" test $rc -eq 2

# symbolic links in the served directory: followed while they stay inside
# it (to a file, or through a directory), refused (PERMISSION_DENIED) when
# they lead out; the server keeps serving
mkdir -p "$tmp/ldir/real" "$tmp/away"
cp "$QV_SOURCE_DIR/examples/data/arrow_cpp_record_batches.arrow" "$tmp/ldir/real/a.arrow"
cp "$QV_SOURCE_DIR/examples/data/arrow_cpp_record_batches.arrow" "$tmp/away/secret.arrow"
ln -s real/a.arrow "$tmp/ldir/in.arrow"
ln -s real "$tmp/ldir/indir"
ln -s "$tmp/away/secret.arrow" "$tmp/ldir/out.arrow"
ln -s "$tmp/away" "$tmp/ldir/outdir"
ln -s ../../away/secret.arrow "$tmp/ldir/real/up.arrow"
serve links "$tmp/ldir" --allow-put
run flight list "$uri"
check "links: list exits 0 ($err)" test $rc -eq 0
check "links: a link to a file inside is listed" has "$out" $'in.arrow\t9 rows'
check "links: a link out is not listed" test "$(grep -c 'out.arrow\|secret\|up.arrow' <<<"$out")" -eq 0
for f in in.arrow indir/a.arrow; do
  run flight get "$uri" "$f" "$tmp/lgot.arrows"
  check "links: get $f (inside) exits 0 ($err)" test $rc -eq 0
  "$cli" cat "$tmp/lgot.arrows" > "$tmp/have.txt" 2>&1
  check "links: get $f: the same values" cmp -s "$tmp/want.txt" "$tmp/have.txt"
done
for f in out.arrow outdir/secret.arrow real/up.arrow; do
  run flight get "$uri" "$f" "$tmp/lbad.arrows"
  check "links: get $f (out) exits 1" test $rc -eq 1
  check "links: get $f: PERMISSION_DENIED ($err)" has "$err" "PERMISSION_DENIED"
  check "links: get $f: says why" has "$err" "leads out of the served directory"
  check "links: get $f: no output file" test ! -e "$tmp/lbad.arrows"
  run flight info "$uri" "$f"
  check "links: info $f: PERMISSION_DENIED ($err)" has "$err" "PERMISSION_DENIED"
done
run flight put "$uri" outdir/new.arrow "$tmp/got.arrows"
check "links: put through a link out: PERMISSION_DENIED ($err)" has "$err" "PERMISSION_DENIED"
check "links: put through a link out stores nothing" test "$(ls -A "$tmp/away" | wc -l)" -eq 1
run flight put "$uri" indir/new.arrow "$tmp/got.arrows"
check "links: put through a link inside exits 0 ($err)" test $rc -eq 0
check "links: put through a link inside stores the file" test -f "$tmp/ldir/real/new.arrow"
run flight get "$uri" in.arrow "$tmp/lgot2.arrows"
check "links: the server keeps serving ($err)" test $rc -eq 0
kill -TERM "$links_pid"
wait "$links_pid"
check "links: SIGTERM exits 0" test $? -eq 0

# clean shutdown
kill -TERM "$plain_pid"
wait "$plain_pid"
check "SIGTERM: the server exits 0" test $? -eq 0
kill -INT "$tok_pid"
wait "$tok_pid"
check "SIGINT: the server exits 0" test $? -eq 0
qv_finish "flight CLI"
