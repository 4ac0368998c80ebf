#!/usr/bin/env bash
# Installs everything Baton's build, app and tests need, from the system's
# package manager (Debian 12, Ubuntu 24.04). Quick when all is already there.
#
#   packaging/install-deps.sh          # install what is missing (uses sudo when not root)
#   packaging/install-deps.sh --check  # only report what is missing; exit 1 if anything is
set -euo pipefail

packages=(
  cmake ninja-build pkg-config g++ ccache git
  qt6-base-dev qt6-base-dev-tools libqt6opengl6-dev qt6-charts-dev
  libtorch-dev libopenblas0-openmp libgloo-dev # libgloo-dev: data-parallel training (Gloo)
  libsentencepiece-dev
  libspdlog-dev libfmt-dev libsqlite3-dev sqlite3 nlohmann-json3-dev libcpp-httplib-dev
  libzip-dev liblzma-dev libpugixml-dev libcurl4-openssl-dev libssl-dev
  libgl-dev libxkbcommon-dev fonts-dejavu-core
  xvfb xauth
  clang # the fuzz targets (tests/fuzz); its libFuzzer runtime is found below
)

missing=()
for p in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  [[ "$status" == "install ok installed" ]] || missing+=("$p")
done
# Node.js and npm run the server's test with the official openai client library; a
# Node.js from elsewhere (NodeSource ships npm inside it) is used as it is.
command -v node >/dev/null || missing+=(nodejs)
command -v npm >/dev/null || missing+=(npm)
# libFuzzer ships in the runtime package of the installed clang's version
# (libclang-rt-14-dev on Debian 12, libclang-rt-18-dev on Ubuntu 24.04).
rt_package() {
  local version
  version=$(clang -dumpversion 2>/dev/null | cut -d. -f1)
  [[ -n $version ]] && echo "libclang-rt-$version-dev"
}

installed() { [[ $(dpkg-query -W -f='${Status}' "$1" 2>/dev/null || true) == "install ok installed" ]]; }
rt=$(rt_package || true)
[[ -z $rt ]] || installed "$rt" || missing+=("$rt")

if [[ "${1:-}" == "--check" ]]; then
  if ((${#missing[@]})); then echo "missing: ${missing[*]}"; exit 1; fi
  echo "all dependencies installed"; exit 0
fi

sudo=()
if [[ $(id -u) -ne 0 ]]; then sudo=(sudo); fi

if ((${#missing[@]})); then
  echo "installing: ${missing[*]}"
  "${sudo[@]}" apt-get update -qq
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
rt=$(rt_package || true) # known now if clang was only just installed
if [[ -n $rt ]] && ! installed "$rt"; then
  echo "installing: $rt"
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$rt"
fi

# LibTorch's float32 GEMM goes to whatever libblas.so.3 points at; the reference
# BLAS is 15-30x slower than OpenBLAS. Point the alternative at OpenBLAS (OpenMP
# variant: it follows at::set_num_threads and does not oversubscribe).
arch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || echo x86_64-linux-gnu)
alt="libblas.so.3-${arch}"
openblas=$(update-alternatives --list "$alt" 2>/dev/null | grep openblas-openmp | head -n1 || true)
current=$(update-alternatives --query "$alt" 2>/dev/null | awk '/^Value:/ {print $2}')
if [[ -n "$openblas" && "$current" != "$openblas" ]]; then
  "${sudo[@]}" update-alternatives --set "$alt" "$openblas"
fi
echo "dependencies ready (BLAS: $(update-alternatives --query "$alt" 2>/dev/null | awk '/^Value:/ {print $2}'))"

# The openai client library for the server's test, from the npm registry at the
# versions in its package-lock.json, into tests/server/node/node_modules (never at test
# time). Skipped when that folder is already installed from the same lock file.
root=$(cd "$(dirname "$0")/.." && pwd)
node_dir=$root/tests/server/node
if [[ -f $node_dir/package-lock.json ]] && ! cmp -s "$node_dir/package-lock.json" "$node_dir/node_modules/.package-lock.json.installed" 2>/dev/null; then
  (cd "$node_dir" && npm ci --no-audit --no-fund --loglevel=error)
  cp "$node_dir/package-lock.json" "$node_dir/node_modules/.package-lock.json.installed"
  echo "node test client installed ($node_dir/node_modules)"
fi
