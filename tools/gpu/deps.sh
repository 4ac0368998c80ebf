#!/usr/bin/env bash
# Fetches the Debian 12 packages an engine-only build of Baton needs beyond what the
# GPU machine has (it has CMake, Ninja, g++, nvcc and PyTorch's LibTorch, and no
# network), and unpacks them into an ignored folder that travels with the checkout.
#
#   tools/gpu/deps.sh [CARRY_DIR]        (default: gpu-carry beside tools/)
#
# Writes CARRY_DIR/deps/ (a root-like tree: usr/include, usr/lib/x86_64-linux-gnu,
# usr/bin/pkgconf) with the pkg-config files rewritten to point into it, and copies the
# shared test fixture (CARRY_DIR/fixtures/gpt2-tiny-random) the `gpu` tests compare
# CPU and CUDA on. Static libraries, documentation and manuals are dropped. Prints the
# size: the checkout, CARRY_DIR and the data must stay under 64 MiB together.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
carry=$(realpath -m "${1:-$root/gpu-carry}")
shared=${BATON_SHARED:-$root/../shared}
deps=$carry/deps

# Runtime libraries (the .so files the build links and baton-cli loads) and their
# headers. cpp-httplib's headers include OpenSSL's, zlib's and Brotli's. OpenSSL 3's,
# zlib's and bzip2's runtime libraries are left to the machine (every Python with ssl
# has them): they would take 5.5 MB of the 64 MiB that travel.
packages=(
  libspdlog-dev libspdlog1.10 libfmt-dev libfmt9 nlohmann-json3-dev
  libsentencepiece-dev libsentencepiece0
  libcpp-httplib-dev libcpp-httplib0.11 libssl-dev zlib1g-dev
  libbrotli-dev libbrotli1
  libzip-dev libzip4 libpugixml-dev libpugixml1v5
  libsqlite3-dev libsqlite3-0
  pkgconf-bin libpkgconf3
)

command -v apt-get >/dev/null || { echo "error: apt-get not found (run this on Debian 12)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$work" && apt-get download -q "${packages[@]}" >/dev/null)
rm -rf "$deps"
mkdir -p "$deps"
for deb in "$work"/*.deb; do dpkg-deb -x "$deb" "$deps"; done

# Keep what a build and a run need.
rm -rf "$deps/usr/share/doc" "$deps/usr/share/man" "$deps/usr/share/lintian" "$deps/etc"
# Static libraries over 1 MB are dropped (OpenSSL's, SQLite's); small ones stay:
# some CMake package files check that every library they name exists.
find "$deps" -name '*.a' -size +1M -delete
# pkg-config files and CMake configs name /usr: pkg-config is run with
# PKG_CONFIG_SYSROOT_DIR (build.sh), which maps -I/usr/include and -L/usr/lib into
# this tree; the CMake packages find themselves relative to their own file.
multiarch=x86_64-linux-gnu
[[ -d $deps/usr/lib/$multiarch/pkgconfig ]] || { echo "error: no pkg-config files unpacked" >&2; exit 1; }

mkdir -p "$carry/fixtures"
rm -rf "$carry/fixtures/gpt2-tiny-random"
cp -r "$shared/fixtures/gpt2-tiny-random" "$carry/fixtures/"
chmod -R u+w "$carry/fixtures"

echo "deps: $(du -sb "$deps" | cut -f1) bytes in $deps ($(ls "$work"/*.deb | wc -l) packages)"
echo "fixture: $(du -sb "$carry/fixtures" | cut -f1) bytes"
echo "carry total: $(du -sb "$carry" | cut -f1) bytes; tracked files: $(cd "$root" && git ls-files -z | xargs -0 du -cb | tail -1 | cut -f1) bytes (limit 67108864 together)"
