#!/usr/bin/env bash
# Builds and runs Baton's benchmarks; prints one JSON object per measurement.
#   tests/bench/run.sh [BUILD_DIR] [gpt2|windows|training|topics ...]
# The machine is shared and noisy: compare medians and ratios from the same run.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-"$root/build"}
shift || true
benches=("$@")
((${#benches[@]})) || benches=(gpt2 windows storage training topics)

cmake -S "$root" -B "$build" -G Ninja -DBATON_BUILD_BENCHMARKS=ON >/dev/null
targets=()
for b in "${benches[@]}"; do targets+=("bench_$b"); done
cmake --build "$build" -j2 --target "${targets[@]}" >/dev/null

for b in "${benches[@]}"; do
  if [[ $b == training ]]; then
    # One process per setting, so that each peak resident memory is its own.
    t="$build/tests/bench/bench_training"
    for mode in baseline recurrent; do
      "$t" --mode $mode --layers 4 --embd 256 --vocab 8000 --window 128 --bptt-windows 20 --batch 8
    done
    for mode in baseline recurrent; do
      "$t" --mode $mode --layers 12 --embd 768 --vocab 50257 --window 128 --bptt-windows 20 \
        --batch 1 --steps 2
    done
    for w in 1 5 20 50; do
      "$t" --mode recurrent --layers 4 --embd 256 --vocab 8000 --window 128 --bptt-windows $w \
        --batch 8 --steps 2
    done
  else
    "$build/tests/bench/bench_$b"
  fi
done
