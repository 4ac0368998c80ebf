#!/usr/bin/env bash
# Builds and runs Baton's benchmarks; prints one JSON object per measurement.
#   tests/bench/run.sh [BUILD_DIR] [gpt2 ...]
# The machine is shared and noisy: compare medians and ratios from the same run.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-"$root/build"}
shift || true
benches=("$@")
((${#benches[@]})) || benches=(gpt2 windows)

cmake -S "$root" -B "$build" -G Ninja -DBATON_BUILD_BENCHMARKS=ON >/dev/null
targets=()
for b in "${benches[@]}"; do targets+=("bench_$b"); done
cmake --build "$build" -j2 --target "${targets[@]}" >/dev/null

for b in "${benches[@]}"; do
  "$build/tests/bench/bench_$b"
done
