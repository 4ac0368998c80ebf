#!/usr/bin/env bash
# Configures and builds Baton's engine-only preset (engine, baton-cli, the `gpu` test
# tst_cuda, bench_gpu and bench_training; no Qt) against a given LibTorch, with the Debian packages
# that tools/gpu/deps.sh carried. On the GPU machine it builds against PyTorch's
# LibTorch 2.x with CUDA; here, against Debian's LibTorch 1.13 with the same carried
# folder, which proves the script and the folder before any GPU time is spent.
#
#   tools/gpu/build.sh [--torch CMAKE_PREFIX] [--carry DIR] [--build DIR] [--jobs N]
#
#   --torch   LibTorch's CMake prefix (default: the one of `python3 -c "import torch"`
#             when there is one, else the system's, Debian's libtorch-dev)
#   --carry   the carried folder (default: gpu-carry beside tools/)
#   --build   the build folder (default: build-gpu)
#   --jobs    parallel compiles (default: all cores)
#
# Compile errors are listed all at once (ninja -k 0): one call finds them all. Prints
# the last lines of the log on failure; the whole log is BUILD/build.log.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
carry=$root/gpu-carry
build=$root/build-gpu
jobs=$(nproc)
torch=""
while (($#)); do
  case $1 in
    --torch) torch=$2; shift 2 ;;
    --carry) carry=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    --jobs) jobs=$2; shift 2 ;;
    *) echo "error: unknown option $1" >&2; exit 2 ;;
  esac
done
deps=$carry/deps
lib=$deps/usr/lib/x86_64-linux-gnu
[[ -d $lib ]] || { echo "error: $deps is missing: run tools/gpu/deps.sh on a Debian 12 machine first" >&2; exit 1; }
if [[ -z $torch ]]; then
  torch=$(python3 -c "import torch; print(torch.utils.cmake_prefix_path)" 2>/dev/null || true)
fi

# pkg-config reads only the carried .pc files and maps their /usr paths into the folder.
export PKG_CONFIG_SYSROOT_DIR=$deps
export PKG_CONFIG_LIBDIR=$lib/pkgconfig:$deps/usr/share/pkgconfig
export LD_LIBRARY_PATH=$lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
launcher=""
command -v ccache >/dev/null && launcher="/usr/bin/env;CCACHE_BASEDIR=$root;CCACHE_NOHASHDIR=true;ccache"
link="-Wl,-rpath-link,$lib -Wl,-rpath,$lib"

mkdir -p "$build"
log=$build/build.log
echo "build: LibTorch ${torch:-from the system}, carried packages in $deps, $jobs jobs" | tee "$log"
start=$SECONDS
if ! cmake --preset engine-only -B "$build" \
  -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CXX_COMPILER_LAUNCHER="$launcher" \
  -DBATON_GPU_TESTS=ON -DBATON_BUILD_BENCHMARKS=ON -DBATON_REQUIRE_DISTRIBUTED=OFF \
  -DBATON_GPU_FIXTURE="$carry/fixtures/gpt2-tiny-random" \
  -DPKG_CONFIG_EXECUTABLE="$deps/usr/bin/pkgconf" \
  -DCMAKE_PREFIX_PATH="${torch:+$torch;}$deps/usr" \
  -DCMAKE_EXE_LINKER_FLAGS="$link" -DCMAKE_SHARED_LINKER_FLAGS="$link" \
  -DCMAKE_MODULE_LINKER_FLAGS="$link" >>"$log" 2>&1; then
  echo "error: configuring failed; the end of $log:" >&2
  tail -40 "$log" >&2
  exit 1
fi
echo "configured in $((SECONDS - start)) s" | tee -a "$log"
if ! cmake --build "$build" -j "$jobs" --target baton-cli tst_cuda bench_gpu bench_training -- -k 0 >>"$log" 2>&1; then
  echo "error: the build failed; every error in $log:" >&2
  grep -E "error:|undefined reference|FAILED:" "$log" | sort -u | head -60 >&2
  exit 1
fi
echo "built in $((SECONDS - start)) s: $build/app/cli/baton-cli" | tee -a "$log"
