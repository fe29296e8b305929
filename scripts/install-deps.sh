#!/usr/bin/env bash
# Installs what a fresh Debian 12 machine lacks for building and testing quiver:
# Debian packages via apt-get (as root), npm packages via `npm ci` from the
# committed lockfile. Does nothing when everything is already there.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)

# The last line: Python headers, pytest, setuptools and pip for the Python module
# (python/), zlib and libdeflate.
packages=(build-essential cmake pkg-config clang-14 libclang-rt-14-dev
  libcmocka-dev flatbuffers-compiler liblz4-dev libzstd-dev libjansson-dev
  libzip-dev libdlpack-dev python3 python3-numpy python3-scipy nodejs npm
  python3-dev python3-pytest python3-setuptools python3-pip zlib1g-dev libdeflate-dev)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  # node/npm may come from outside Debian's packages on a developer machine
  if command -v node >/dev/null && command -v npm >/dev/null; then
    filtered=()
    for p in "${missing[@]}"; do
      case "$p" in nodejs|npm) ;; *) filtered+=("$p") ;; esac
    done
    missing=("${filtered[@]+"${filtered[@]}"}")
  fi
fi
if [ ${#missing[@]} -gt 0 ]; then
  echo "install-deps: installing ${missing[*]}"
  if [ "$(id -u)" -ne 0 ]; then
    echo "install-deps: need root to apt-get install: ${missing[*]}" >&2
    exit 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

js="$here/tests/interop/js"
if [ -f "$js/package-lock.json" ]; then
  if [ ! -d "$js/node_modules" ] || [ "$js/package-lock.json" -nt "$js/node_modules/.package-lock.json" ]; then
    (cd "$js" && npm ci --no-audit --no-fund --loglevel=error)
  fi
fi
