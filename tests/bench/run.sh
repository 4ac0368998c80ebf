#!/usr/bin/env bash
# Builds and runs Baton's benchmarks; prints one JSON object per measurement.
#   tests/bench/run.sh [BUILD_DIR] [gpt2|windows|training|topics|busy|weights ...]
# weights: GPT-2-small decode, prefill and scoring with f32, bf16, f16, int8 and q4 weights
# in turn, three rounds (take medians and the ratio to f32 within a round).
# busy: GPT-2-small decode, prefill and scoring, and baton-mini-sized training steps, on
# an idle machine (1 thread, all cores) and with 1 and 2 busy-looping processes, with
# the engine's thread budget and with a fixed team.
# load: a GPT-2-small folder stored in F32 (as Hugging Face ships it) and an XL folder
# stored in F16, written to a temporary folder, then each loaded in a fresh process per
# weight format: time to the first token, warm load time, decode and peak memory (F32
# and F16 weights of a file of that dtype are its mapped pages; once more with --map 0);
# then XL in q4 and int8 twice with converted weights kept: converting, then mapped.
# shapes: GPT-2 small, medium, large and XL (random weights in memory) in f32, f16, bf16,
# int8 and q4 (a shape that does not fit in memory is skipped with a "skipped" line).
# server: the prefix cache of the HTTP server (a 20,000-token story grown by 50 tokens a
# request, 20 requests, then its last 200 tokens edited), and the same story with its
# front cut by the client as KoboldAI Lite and SillyTavern cut it: time to first token.
# adapters: what "Add recurrence" costs on GPT-2 small, medium, large and XL (random
# weights, 50,257 tokens, 1,024 positions): a recurrence adapter's training steps (four
# slots, the base frozen; windows of 256, the app's preset for these models), one
# process per shape for its own peak memory; GPT-2 small's full recurrent fine-tune
# beside it.
# recall: a 500,000-word story's recall index (bench_recall --words N for another size):
# writing and indexing a passage, the migration's pass, a recall query beside a
# brute-force scan of the same story.
# token_store: the library tokenized into a token store (its first build beside the shards
# only decompressed), reopened, and the trainer's batches drawn from it.
# sampling: the sampler's cost per token (classic, min-p, min-p + DRY, every sampler) on
# baton-mini's logits and on flat random ones over GPT-2's vocabulary.
# The machine is shared and noisy: compare medians and ratios from the same run.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-"$root/build"}
shift || true
benches=("$@")
((${#benches[@]})) || benches=(gpt2 windows storage training topics)

cmake -S "$root" -B "$build" -G Ninja -DBATON_BUILD_BENCHMARKS=ON >/dev/null
targets=()
for b in "${benches[@]}"; do
  case $b in
    busy) targets+=(bench_gpt2 bench_training) ;;
    weights | load | shapes) targets+=(bench_gpt2) ;;
    adapters) targets+=(bench_training) ;;
    *) targets+=("bench_$b") ;;
  esac
done
cmake --build "$build" -j2 --target "${targets[@]}" >/dev/null

# bench_gpt2 exits with 3 when a share of a bound came out above 1 (the bound measured
# beside it was wrong): the other runs go on, and this script exits with 3 at the end.
bound_wrong=0
gpt2() {
  "$build/tests/bench/bench_gpt2" "$@" || {
    local rc=$?
    ((rc == 3)) || exit "$rc"
    bound_wrong=1
  }
}

for b in "${benches[@]}"; do
  if [[ $b == busy ]]; then
    t=gpt2
    small=(--decode-tokens 64 --repeats 1)
    train="$build/tests/bench/bench_training"
    for r in 1 2 3; do
      "$t" "${small[@]}" --threads 1
      "$train" --steps 3 --threads 1
      for busy in 0 1 2; do
        for fixed in 0 1; do
          "$t" "${small[@]}" --busy $busy --fixed-threads $fixed
          "$train" --steps 3 --busy $busy --fixed-threads $fixed
        done
      done
    done
  elif [[ $b == weights ]]; then
    for r in 1 2 3; do
      for w in f32 bf16 f16 int8 q4; do
        gpt2 --weights $w --repeats 3 --decode-tokens 96
      done
    done
  elif [[ $b == load ]]; then
    t=gpt2
    dir=$(mktemp -d)
    trap 'rm -rf "$dir"' EXIT
    "$t" --shape small --save-model "$dir/small" --save-dtype f32
    for w in f32 bf16 int8; do
      "$t" --model "$dir/small" --weights $w --repeats 5 --decode-tokens 32
    done
    # the F32 weights copied instead of mapped (the column-major products against rows)
    "$t" --model "$dir/small" --weights f32 --map 0 --repeats 5 --decode-tokens 32
    "$t" --shape xl --save-model "$dir/xl" --save-dtype f16
    for w in q4 int8 bf16 f16; do
      "$t" --model "$dir/xl" --weights $w --repeats 2 --decode-tokens 16 --window 64
    done
    # q4 and int8 with their converted weights kept (as the app and baton-cli keep them):
    # the first run converts and writes them, the second maps them ("kept_mb")
    sleep 4 # past the settling time before a file's content hash is remembered
    for w in q4 int8; do
      for _ in 1 2; do
        "$t" --model "$dir/xl" --weights $w --repeats 2 --decode-tokens 16 --window 64 \
          --identity-memo "$dir/ids" --converted-cache "$dir/converted"
      done
    done
    rm -rf "$dir"
  elif [[ $b == shapes ]]; then
    for shape in small medium large xl; do
      for w in f32 f16 bf16 int8 q4; do
        gpt2 --shape $shape --weights $w --repeats 1 --decode-tokens 32
      done
    done
  elif [[ $b == adapters ]]; then
    t="$build/tests/bench/bench_training"
    gpt2=(--vocab 50257 --positions 1024 --window 256 --bptt-windows 2 --batch 2 --steps 1)
    for shape in "12 768" "24 1024" "36 1280" "48 1600"; do
      "$t" "${gpt2[@]}" --layers "${shape% *}" --embd "${shape#* }" --adapter 1 --slots 4
    done
    "$t" "${gpt2[@]}" --layers 12 --embd 768 --mode recurrent --slots 4
  elif [[ $b == training ]]; then
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
  elif [[ $b == token_store ]]; then
    "$build/tests/bench/bench_token_store" --val-works "$root/tools/library/validation-works.txt"
  elif [[ $b == gpt2 ]]; then
    gpt2
  else
    "$build/tests/bench/bench_$b"
  fi
done
if ((bound_wrong)); then
  echo "error: a share of a bound came out above 1 (see the *_invalid lines)" >&2
  exit 3
fi
