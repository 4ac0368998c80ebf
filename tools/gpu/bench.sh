#!/usr/bin/env bash
# The GPU benchmarks of run.sh's bench step, one JSON line per figure:
#   bench_gpu       GPT-2 small to XL in bf16: prefill of 300 tokens and greedy decode,
#                   each beside the card's bounds measured right before and after it
#   bench_training  training steps on CUDA (bf16 autocast) of GPT-2-small-shaped and
#                   baton-mini-shaped models, baseline and recurrent (T = 128, W = 4
#                   windows, batch 16), each beside the bf16 product peak bench_gpu
#                   measured in the same run
#
#   tools/gpu/bench.sh BUILD_DIR [--dry-run]   (--dry-run: small shapes on the CPU)
set -euo pipefail
build=${1:?usage: bench.sh BUILD_DIR [--dry-run]}
dry=${2:-}
b=$build/tests/bench
if [[ $dry == --dry-run ]]; then
  "$b/bench_gpu" --device cpu --shapes small --weights f32 --decode-tokens 16 --repeats 1
  for mode in baseline recurrent; do
    "$b/bench_training" --mode $mode --layers 2 --embd 64 --vocab 500 --window 32 \
      --bptt-windows 2 --batch 2 --steps 2 --device cpu
  done
  exit 0
fi
"$b/bench_gpu" --shapes small,medium,large,xl --weights bf16
for mode in baseline recurrent; do
  # GPT-2 small's shape, then baton-mini's (4 x 256, 8,000 pieces).
  "$b/bench_training" --mode $mode --layers 12 --embd 768 --heads 12 --vocab 50257 \
    --window 128 --bptt-windows 4 --batch 16 --steps 3 --device cuda
  "$b/bench_training" --mode $mode --layers 4 --embd 256 --heads 4 --vocab 8000 \
    --window 128 --bptt-windows 4 --batch 16 --steps 3 --device cuda
done
