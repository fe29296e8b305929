#!/usr/bin/env bash
# `quiver inspect` reads every file Arrow C++ wrote and reports what the
# .json companions describe (type, shape, nnz, sparse format, schema fields).
set -euo pipefail
data="$QV_SHARED_DIR/testdata/arrow-cpp"
if [ ! -d "$data" ]; then
  echo "SKIP: $data is absent (shared Arrow C++ test data not available)"
  exit 77
fi
if [ ! -x /usr/bin/python3 ]; then
  echo "SKIP: /usr/bin/python3 is not installed (Debian package python3)"
  exit 77
fi
exec /usr/bin/python3 "$QV_SOURCE_DIR/tests/scripts/inspect_arrow_cpp.py" "$QV_CLI" "$data"
