#!/usr/bin/env bash
# Every command that reads record batches reads an input one way: `cat`,
# `validate` and `file-to-stream | cat -` must give the same verdict (exit
# status) and, when valid, the same values. Run on files built here (a
# quiver file and stream, and hostile variants of them: a footer of 0xFF, a
# footer block past the end, a Schema message that disagrees with the
# footer, a RecordBatch before any Schema, an empty input, a lone
# end-of-stream marker) and on every record batch input of
# ../shared/testdata/arrow-cpp (valid and invalid/). Tensor inputs are
# cat's alone and are skipped.
set -uo pipefail

src=${QV_SOURCE_DIR:?QV_SOURCE_DIR must point at the source tree}
bin=${QV_BINARY_DIR:?QV_BINARY_DIR must point at the build tree}
cli=${QV_CLI:?QV_CLI must point at the quiver CLI}
tool="$bin/tests/interop/rb_tool"
# rb_tool describes values with jansson, a dependency of the test tools that
# the build may not have found (tests/CMakeLists.txt)
if [ "${QV_INTEROP_TOOLS:-1}" = 0 ]; then
  echo "SKIP: jansson (libjansson-dev) not found: tests/interop's rb_tool is not built"
  exit 77
fi
for exe in "$tool" "$cli"; do
  [ -x "$exe" ] || { echo "FAIL: $exe was not built" >&2; exit 1; }
done
command -v python3 >/dev/null || { echo "SKIP: python3 is needed to build the variants"; exit 77; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
passed=0
failed=0
fail() {
  echo "FAIL: $*" >&2
  failed=$((failed + 1))
}

# agree FILE [WANT]: WANT is "valid", "invalid" (exit 1) or "" (either, as
# long as the commands agree).
agree() {
  local f=$1 want=${2:-} name
  name=$(basename "$f")
  "$cli" cat "$f" >"$work/c1" 2>"$work/e1"
  local rc_cat=$?
  "$cli" validate "$f" >/dev/null 2>"$work/e2"
  local rc_val=$?
  local is_file=0
  [ "$(head -c 6 "$f" 2>/dev/null | tr -d '\0')" = "ARROW1" ] && is_file=1
  if [ "$rc_cat" != "$rc_val" ]; then
    fail "$name: cat exits $rc_cat ($(head -c 200 "$work/e1")), validate $rc_val ($(head -c 200 "$work/e2"))"
    return
  fi
  if [ "$is_file" = 1 ]; then
    "$cli" file-to-stream "$f" >"$work/s" 2>"$work/e3"
    local rc_fts=$?
    if [ "$rc_fts" != "$rc_cat" ]; then
      fail "$name: file-to-stream exits $rc_fts ($(head -c 200 "$work/e3")), cat $rc_cat"
      return
    fi
    if [ "$rc_cat" = 0 ]; then
      "$cli" cat - <"$work/s" >"$work/c2" 2>"$work/e4" || { fail "$name: cat - of file-to-stream's output failed: $(cat "$work/e4")"; return; }
      cmp -s "$work/c1" "$work/c2" || { fail "$name: cat and file-to-stream | cat - print different values"; diff "$work/c1" "$work/c2" | head -5 >&2; return; }
    fi
  fi
  # the pipe reads the same way as the path
  "$cli" cat - <"$f" >"$work/c3" 2>/dev/null
  local rc_pipe=$?
  if [ "$rc_pipe" != "$rc_cat" ]; then
    fail "$name: cat - exits $rc_pipe, cat FILE $rc_cat"
    return
  fi
  if [ "$rc_cat" = 0 ] && ! cmp -s "$work/c1" "$work/c3"; then
    fail "$name: cat - and cat FILE print different values"
    return
  fi
  case "$want" in
    valid) [ "$rc_cat" = 0 ] || { fail "$name: expected valid, exit $rc_cat: $(head -c 300 "$work/e1")"; return; } ;;
    invalid) [ "$rc_cat" = 1 ] || { fail "$name: expected exit 1, got $rc_cat"; return; } ;;
  esac
  passed=$((passed + 1))
}

# expect_error FILE TEXT: cat and validate both name the problem
expect_error() {
  local f=$1 text=$2
  for c in cat validate; do
    if "$cli" $c "$f" >/dev/null 2>"$work/e"; then
      fail "$(basename "$f"): $c accepted it"
    elif ! grep -q -- "$text" "$work/e"; then
      fail "$(basename "$f"): $c says '$(cat "$work/e")', not '$text'"
    else
      passed=$((passed + 1))
    fi
  done
}

q="$work/q"
"$tool" write-file "$q.arrow" >/dev/null || fail "rb_tool write-file"
"$tool" write-stream "$q.arrows" >/dev/null || fail "rb_tool write-stream"
agree "$q.arrow" valid
agree "$q.arrows" valid

offsets=$("$cli" inspect "$q.arrow" | awk 'NR>2 && $1 ~ /^[0-9]+$/ && $2 != "Footer" {print $1}' | tr '\n' ' ')
python3 - "$q.arrow" "$q.arrows" "$work" "$offsets" <<'PY' || fail "building the variants"
import struct, sys
fpath, spath, out = sys.argv[1:4]
f = open(fpath, "rb").read()
s = open(spath, "rb").read()
def w(name, data):
    open(out + "/" + name, "wb").write(data)
flen = struct.unpack("<i", f[-10:-6])[0]
foot_at = len(f) - 10 - flen
# a footer of 64 bytes of 0xFF
w("footer_ff.arrow", f[:foot_at] + b"\xff" * 64 + struct.pack("<i", 64) + b"ARROW1")
meta_len = struct.unpack("<i", f[12:16])[0]
footer = f[foot_at:foot_at + flen]
# message offsets (from quiver inspect): every block that points at one of
# them, other than the Schema's, is moved past the end of the file
starts = set(int(x) for x in sys.argv[4].split())
bad = bytearray(footer)
moved = 0
for i in range(0, len(bad) - 8 + 1, 8):
    v = struct.unpack("<q", bytes(bad[i:i + 8]))[0]
    if v in starts and v != 8:
        bad[i:i + 8] = struct.pack("<q", len(f) + 4096)
        moved += 1
assert moved > 0, "no block found"
w("block_past_end.arrow", f[:foot_at] + bytes(bad) + f[-10:])
# a Schema message that disagrees with the footer: the first field renamed
schema_meta = f[16:16 + meta_len]
import re
m = re.search(rb"[a-z][a-z0-9_]{3,}", schema_meta[40:])
assert m, "no field name found"
old = m.group(0)
new = old[:-1] + (b"X" if old[-1:] != b"X" else b"Y")
w("schema_disagrees.arrow", f[:16] + schema_meta.replace(old, new, 1) + f[16 + meta_len:])
# a RecordBatch before any Schema: the stream without its Schema message
sml = struct.unpack("<i", s[4:8])[0]
w("batch_first.arrows", s[8 + sml:])
w("empty.arrows", b"")
w("eos_only.arrows", b"\xff\xff\xff\xff\x00\x00\x00\x00")
PY

agree "$work/footer_ff.arrow" invalid
agree "$work/block_past_end.arrow" invalid
agree "$work/schema_disagrees.arrow" invalid
expect_error "$work/schema_disagrees.arrow" "disagrees with the footer's schema"
# the two names, not the two (equal) types
expect_error "$work/schema_disagrees.arrow" "the field is named '"
agree "$work/batch_first.arrows" invalid
expect_error "$work/batch_first.arrows" "message, not a Schema"
agree "$work/empty.arrows" invalid
expect_error "$work/empty.arrows" "empty input (0 bytes)"
agree "$work/eos_only.arrows" invalid
expect_error "$work/eos_only.arrows" "no messages: the stream starts with its end-of-stream marker"

# Arrow C++'s files: every record batch input (tensors are cat's alone)
shared="${QV_SHARED_DIR:-$src/../shared}/testdata/arrow-cpp"
if [ -d "$shared" ]; then
  for f in "$shared"/*.arrow "$shared"/*.arrows "$shared"/invalid/*.arrow "$shared"/invalid/*.arrows \
           "$shared"/arrow_bugs/*.arrow; do
    [ -f "$f" ] || continue
    kind=$("$cli" inspect "$f" 2>/dev/null | awk 'NR==3 {print $2}')
    case "$kind" in Tensor|SparseTensor) continue ;; esac
    agree "$f"
  done
else
  echo "note: $shared is missing; only the files built here were checked"
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
