#!/usr/bin/env bash
# Installs what a fresh Debian 12 machine lacks for building and testing quiver:
# Debian packages via apt-get (as root), npm packages via `npm ci` from the
# committed lockfile. Does nothing when everything is already there.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)

# `install-deps.sh s390x` (as root): what `make test-s390x` needs instead -
# the s390x cross compiler, qemu-user, and the s390x builds of the libraries
# unpacked into a private sysroot (QV_S390X_SYSROOT, default
# /opt/quiver-s390x-sysroot; cmake/s390x-toolchain.cmake reads it). They are
# not installed as :s390x packages: Debian 12's security archive no longer
# builds s390x, so the host's amd64 libzstd1, libssl3, linux-libc-dev, ... are
# newer than the s390x ones and Multi-Arch: same refuses to co-install them.
if [ "${1:-}" = s390x ]; then
  sysroot=${QV_S390X_SYSROOT:-/opt/quiver-s390x-sysroot}
  host=(gcc-s390x-linux-gnu libc6-dev-s390x-cross qemu-user cmake make pkg-config python3)
  # the libraries (with headers) CMakeLists.txt links, and what libzip needs at link time
  libs=(liblz4-dev liblz4-1 libzstd-dev libzstd1 libjansson-dev libjansson4 libzip-dev libzip4
    libbz2-1.0 libssl3 libssl-dev libnghttp2-14 libnghttp2-dev zlib1g-dev zlib1g libdeflate-dev
    libdeflate0 libcmocka-dev libcmocka0)
  missing=()
  for p in "${host[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  export DEBIAN_FRONTEND=noninteractive
  need_update=false
  if ! dpkg --print-foreign-architectures | grep -qx s390x; then
    [ "$(id -u)" -eq 0 ] || { echo "install-deps: need root to add the s390x architecture" >&2; exit 1; }
    dpkg --add-architecture s390x
    need_update=true
  fi
  apt-cache show liblz4-1:s390x > /dev/null 2>&1 || need_update=true
  if [ ${#missing[@]} -gt 0 ] || $need_update; then
    [ "$(id -u)" -eq 0 ] || { echo "install-deps: need root to install ${missing[*]}" >&2; exit 1; }
    apt-get update -qq
  fi
  if [ ${#missing[@]} -gt 0 ]; then
    echo "install-deps: installing ${missing[*]}"
    apt-get install -y -qq --no-install-recommends "${missing[@]}"
  fi
  # the versions apt would fetch now; unchanged -> the sysroot is up to date
  want=$(for p in "${libs[@]}"; do
    printf '%s=%s\n' "$p" "$(apt-cache policy "$p:s390x" | awk '/Candidate:/ {print $2}')"
  done)
  if [ -f "$sysroot/.packages" ] && [ "$(cat "$sysroot/.packages")" = "$want" ]; then
    exit 0
  fi
  [ "$(id -u)" -eq 0 ] || { echo "install-deps: need root to write $sysroot" >&2; exit 1; }
  echo "install-deps: unpacking the s390x libraries into $sysroot"
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  (cd "$tmp" && apt-get download -qq -o APT::Sandbox::User=root $(printf '%s:s390x ' "${libs[@]}"))
  mkdir -p "$tmp/root"
  for deb in "$tmp"/*.deb; do dpkg-deb -x "$deb" "$tmp/root"; done
  printf '%s\n' "$want" > "$tmp/root/.packages"
  # replaced whole, so a failed run never leaves half a sysroot behind
  rm -rf "$sysroot.old"
  if [ -d "$sysroot" ]; then mv "$sysroot" "$sysroot.old"; fi
  mkdir -p "$(dirname "$sysroot")"
  mv "$tmp/root" "$sysroot"
  rm -rf "$sysroot.old"
  exit 0
fi

# The last lines: Python headers, pytest, setuptools and pip for the Python module
# (python/), zlib and libdeflate; Arrow Flight's transport (nghttp2, OpenSSL) and
# its test peers (grpcio, protoc, the openssl tool for test certificates); the
# tests' other peers and checkers: PyTorch and PyData Sparse (DLPack, sparse
# tensors), mypy (the typed stubs), doxygen (the API reference, warning-free).
packages=(build-essential cmake pkg-config clang-14 libclang-rt-14-dev
  libcmocka-dev flatbuffers-compiler liblz4-dev libzstd-dev libjansson-dev
  libzip-dev libdlpack-dev python3 python3-numpy python3-scipy nodejs npm
  python3-dev python3-pytest python3-setuptools python3-pip zlib1g-dev libdeflate-dev
  libnghttp2-dev libssl-dev openssl python3-grpcio python3-protobuf protobuf-compiler
  python3-torch python3-sparse python3-mypy doxygen)

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
