#!/usr/bin/env bash
# A build configured without integration JSON (-DQV_WITH_JSON=OFF) or the
# NumPy formats (-DQV_WITH_NUMPY=OFF): the commands that need them exit 3
# (valid input, not supported) with a sentence saying the build left the
# format out, write no output file, and the rest of the CLI works. In a
# build with both formats there is nothing to check: skipped.
. "$QV_SOURCE_DIR/tests/scripts/lib.sh"
ex=$QV_SOURCE_DIR/examples/data
with_json=${QV_WITH_JSON:?ctest sets QV_WITH_JSON} with_numpy=${QV_WITH_NUMPY:?ctest sets QV_WITH_NUMPY}
[ "$with_json" = 1 ] && [ "$with_numpy" = 1 ] && qv_skip "this build has integration JSON and the NumPy formats"
qv_tmpdir
cd "$tmp" || exit 1
batches=$ex/arrow_cpp_record_batches.arrow
tensor=$ex/arrow_cpp_tensor_3x4_colmajor.arrow

lacks() { ! grep -qF -- "$2" <<<"$1"; }

# left_out WHAT OPTION ARGS...: exit 3, the sentence names the option, no OUT file
left_out() {
  local what=$1 option=$2
  shift 2
  rm -f out.*
  run "$@"
  check "$what: exit 3 ($rc)" test "$rc" -eq 3
  check "$what: says the build left it out ($err)" has "$err" "this build of quiver left out"
  check "$what: names $option" has "$err" "$option=OFF"
  check "$what: writes no output" bash -c '! ls out.* 2>/dev/null | grep -q .'
}

if [ "$with_json" = 0 ]; then
  echo '{"schema": {"fields": []}, "batches": []}' > in.json
  left_out "integration json-to-arrow" QV_WITH_JSON integration --mode=json-to-arrow --json=in.json --arrow=out.arrow
  left_out "integration arrow-to-json" QV_WITH_JSON integration --mode=arrow-to-json --arrow="$batches" --json=out.json
  left_out "cat --json" QV_WITH_JSON cat --json "$batches"
  # jansson is integration JSON's alone (the extension metadata has
  # src/util/json.c): the library, the CLI and the Python module do not link
  # it, and an installed library does not ask for it. (The test tools of
  # tests/interop may: they are linked with it when it is found.)
  if command -v readelf >/dev/null; then
    elves=("$QV_BINARY_DIR/libquiver.so" "$QV_CLI")
    for elf in "$QV_BINARY_DIR"/python/quiver/_quiver*.so; do [ -e "$elf" ] && elves+=("$elf"); done
    for elf in "${elves[@]}"; do
      needed=$(readelf -d "$elf" 2>&1)
      check "readelf -d $(basename "$elf") lists its libraries" has "$needed" "(NEEDED)"
      check "$(basename "$elf") does not need libjansson" lacks "$needed" libjansson
    done
  else
    echo "note: no readelf (binutils): the libraries' NEEDED entries are not checked"
  fi
  # the link lines (the Makefile generator's link.txt): NEEDED alone would miss
  # a jansson on the link line that the linker's --as-needed drops
  for t in quiver_shared quiver; do
    link=$QV_BINARY_DIR/CMakeFiles/$t.dir/link.txt
    if [ -f "$link" ]; then
      check "$t's link line does not name jansson" bash -c '! grep -qi jansson "$1"' _ "$link"
    else
      echo "note: no $link (not the Makefile generator): $t's link line is not checked"
    fi
  done
  for f in quiver.pc quiverConfig.cmake; do
    check "$f exists" test -s "$QV_BINARY_DIR/$f"
    check "$f does not ask for jansson" bash -c '! grep -qi jansson "$1"' _ "$QV_BINARY_DIR/$f"
  done
  # A machine without libjansson-dev configures this build: pkg-config sees
  # every .pc file but jansson's, the configuration succeeds and says the
  # interop tools are not built.
  if command -v cmake >/dev/null && command -v pkg-config >/dev/null; then
    mkdir pc
    IFS=: read -ra pc_dirs <<<"$(pkg-config --variable pc_path pkg-config)"
    for d in "${pc_dirs[@]}"; do
      for f in "$d"/*.pc; do
        [ -e "$f" ] && [ "$(basename "$f")" != jansson.pc ] && [ ! -e "pc/$(basename "$f")" ] && ln -s "$f" pc/
      done
    done
    check "pkg-config (without jansson.pc) does not find jansson" bash -c '! PKG_CONFIG_LIBDIR=pc pkg-config --exists jansson'
    check "pkg-config (without jansson.pc) finds liblz4" env PKG_CONFIG_LIBDIR=pc pkg-config --exists liblz4
    PKG_CONFIG_LIBDIR=$tmp/pc cmake -S "$QV_SOURCE_DIR" -B cfg -DQV_WITH_JSON=OFF -DQV_WITH_NUMPY="$with_numpy" \
      > cfg.out 2>&1
    cfg_rc=$?
    check "configures without jansson.pc (exit $cfg_rc; cfg.out: $(tail -n 5 cfg.out))" test "$cfg_rc" -eq 0
    check "says the interop tools are not built" grep -qF "jansson not found: tests/interop's tools are not built" cfg.out
  else
    echo "note: no cmake or pkg-config: configuring without jansson is not checked"
  fi
fi
if [ "$with_numpy" = 0 ]; then
  cp "$ex/sparse_8x10.npy" in.npy
  cp "$ex/scipy_csc_5x7.npz" in.npz
  left_out "tensor from-npy" QV_WITH_NUMPY tensor from-npy in.npy out.arrow
  left_out "tensor to-npy" QV_WITH_NUMPY tensor to-npy "$tensor" out.npy
  left_out "tensor from-npz" QV_WITH_NUMPY tensor from-npz in.npz out.arrow
  left_out "tensor to-npz" QV_WITH_NUMPY tensor to-npz "$ex/arrow_cpp_csr_6x4.arrow" out.npz
fi

# what does not need them still works
run cat "$batches"
check "cat still works (exit $rc)" test "$rc" -eq 0 -a -n "$out"
run inspect "$tensor"
check "inspect still works (exit $rc)" test "$rc" -eq 0
run convert "$ex/arrow_cpp_csr_6x4.arrow" out.arrow --to=coo
check "convert still works (exit $rc)" test "$rc" -eq 0 -a -s out.arrow

qv_finish test_cli_left_out
