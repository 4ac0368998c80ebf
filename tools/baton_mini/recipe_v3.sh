#!/usr/bin/env bash
# baton-mini v3: baton-mini's shape learned from the library (../shared/corpus/library)
# with the library's own tokenizer, then the shipped design (four state slots) and its
# baseline twin fine-tuned from it, paired by seed, as tools/baton_mini/recipe.sh does for
# v2.1. Made with baton-cli alone from ../shared.
#
#   tools/baton_mini/recipe_v3.sh [STAGE...]
#
# Stages (default: all, in order): split tokenizer pretrain release eval samples. Every
# stage can be interrupted and run again: finished runs and evaluations are skipped, an
# unfinished run resumes from its latest checkpoint (the pretraining takes hours on two
# cores: stop it with Ctrl-C or kill, run the stage again later). Shipping is a decision, not a
# stage: resources/models/README.md says when v3 replaces v2.1.
#
# Environment:
#   BATON_CLI      baton-cli to use (default: build/app/cli/baton-cli; copy it aside while
#                  you keep developing)
#   BATON_SHARED   the shared folder (default: ../shared beside the checkout)
#   RUNS           where runs and results live (default: ~/baton-mini-v3-runs)
#   THREADS        compute threads per run (default: all cores; pairs use 1 each)
#   VOCAB          the tokenizer's size (default 16000: docs/training.md, "Choosing the
#                  library's tokenizer"); the tokenizer is the one that study measured
#   STUDY          the tokenizer study's folder (default: ~/baton-library-runs/tokenizers;
#                  the tokenizer stage makes the tokenizer there when it is not)
#   PRETRAIN_STEPS optimizer steps of 16 x 256 tokens (default 4500: 18.4 M tokens,
#                  about 2.6 hours on two cores)
#   V21            the v2.1 model compared with (default: resources/models/baton-mini)
#   OMP_WAIT_POLICY  default PASSIVE
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cli=${BATON_CLI:-$root/build/app/cli/baton-cli}
shared=${BATON_SHARED:-$root/../shared}
runs=${RUNS:-$HOME/baton-mini-v3-runs}
threads=${THREADS:-0}
vocab=${VOCAB:-16000}
pretrain_steps=${PRETRAIN_STEPS:-4500}
v21=${V21:-$root/resources/models/baton-mini}
study=${STUDY:-$HOME/baton-library-runs/tokenizers}
export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-PASSIVE}
stages=("$@")
((${#stages[@]})) || stages=(split tokenizer pretrain release eval samples)
res=$runs/results
# shellcheck source=tools/baton_mini/runs.sh
source "$root/tools/baton_mini/runs.sh"

library=$shared/corpus/library
books=$shared/corpus/books
test_file=$books/austen-pride-and-prejudice.txt
val_works=$root/tools/library/validation-works.txt
[[ -x $cli ]] || { echo "error: $cli not found: build Baton first" >&2; exit 1; }
[[ -d $library ]] || { echo "error: $library not found" >&2; exit 1; }
mkdir -p "$runs"

# ---- the split: whole works ----
# Training: the library but its validation works, and the three Austen novels v2.1
# learned from (Emma, Mansfield Park, Sense and Sensibility). Validation (the best
# checkpoint): the library's 16 validation works (tools/library/validation-works.txt).
# Test: Pride and Prejudice, only the tables. Every run checks that neither the test
# book, nor Northanger Abbey (v2's validation book), nor a validation work has 256
# tokens in a row in its training stream.
held_out=(--held-out "$test_file" --held-out "$books/austen-northanger-abbey.txt")
split() {
  local d=$runs/data
  rm -rf "$d"
  mkdir -p "$d/train"
  ln -s "$library" "$d/train/library"
  for b in austen-emma austen-mansfield-park austen-sense-and-sensibility; do
    ln -s "$books/$b.txt" "$d/train/$b.txt"
  done
  echo "split: train = the library (15 shards) but its validation works + 3 Austen novels"
}
data=(--corpus "$runs/data/train" --val-works "$val_works" "${held_out[@]}")

# The tokenizer: the tokenizer study's SentencePiece BPE of VOCAB pieces, learned from
# 64 MB of the library (tools/library/tokenizer_study.sh, its tokenize stage).
tokenizer() {
  RUNS=$study SIZES=$vocab BATON_CLI=$cli BATON_SHARED=$shared THREADS=$threads \
    "$root/tools/library/tokenizer_study.sh" works tokenize
}

# The base: baton-mini's shape (4 layers, 256 wide, 256 positions) with that tokenizer,
# pretrained as a baseline on windows of 256 tokens, the best validation checkpoint
# kept.
pretrain() {
  local out=$runs/pretrain from=$study/tokenize-$vocab
  [[ -f $from/tokenizer/tokenizer.model ]] || { echo "error: run the tokenizer stage first" >&2; exit 1; }
  train "$out" --scratch --tokenizer-from "$from/tokenizer" --layers 4 --heads 4 --embd 256 \
    --positions 256 --mode baseline "${data[@]}" \
    --window 256 --overlap 0 --bptt-windows 1 --batch 16 --steps "$pretrain_steps" \
    --lr 1e-3 --warmup 200 --schedule cosine --min-lr-ratio 0.1 --weight-decay 0.1 \
    --clip 1 --seed 1 --validate-every 1000000 --val-tokens 64000 \
    --checkpoint-every 50 --save-dtype f32
}

# The shipped pair, as v2.1's: windows of T = 128, sequences of 20 windows, 400 steps of
# 2 sequences (2.05 M tokens), four state slots against the baseline twin, seed 1; the
# same batches in the same order for both.
base=$runs/pretrain/model
ft=$runs/finetune
release() {
  local common="--base $base --window 128 --bptt-windows 20 --batch 2 --steps 400 --lr 3e-4
    --warmup 50 --schedule cosine --min-lr-ratio 0.1 --weight-decay 0.01 --clip 1
    --validate-every 200000 --val-tokens 64000 --checkpoint-every 50 --save-dtype f16
    --overlap 0 --seed 1 ${data[*]}"
  parallel_pairs "$ft/t128-baseline-s1|$common --mode baseline" \
    "$ft/t128-slots4-s1|$common --mode recurrent --slots 4"
}

# ---- evaluation (JSON in results/) ----
# Test book: v3 against its twin paired by window; v3 against v2.1 paired by spans of
# 4 KiB of text, in bits per byte (their tokenizers differ, so windows do not pair; eval
# then pairs by span), with v2.1's own rows for its state off; the validation works
# likewise; the memory probe at d = 0, 1, 2 with the state on and off.
evaluate() {
  local v3=$ft/t128-slots4-s1/model twin=$ft/t128-baseline-s1/model
  [[ -f $v3/config.json && -f $twin/config.json ]] || { echo "error: run the release stage first" >&2; exit 1; }
  local works=$study/val-works
  RUNS=$study BATON_CLI=$cli BATON_SHARED=$shared "$root/tools/library/tokenizer_study.sh" works
  ev test-v3-paired eval --model "$v3" --paired-with "$twin" --window 128 --state on,off "$test_file"
  ev test-v3-v21 eval --model "$v3" --paired-with "$v21" --window 128 "$test_file"
  ev test-v21 eval --model "$v21" --window 128 --state on,off "$test_file"
  ev works-v3 eval --model "$v3" --paired-with "$v21" --window 128 --state on,off "$works"/*.txt
  ev works-v21 eval --model "$v21" --window 128 --state on,off "$works"/*.txt
  ev probe-v3 probe --model "$v3" --baseline "$twin" --distances 0,1,2 --state on,off "$test_file"
  ev probe-v21 probe --model "$v21" --distances 0,1,2 --state on,off "$test_file"
  echo "results in $res"
}

# Prose beside v2.1's: three prompts, the same seeds, the app's default sampling.
samples() {
  mkdir -p "$res"
  local out=$res/samples.md prompt m seed
  : >"$out"
  for prompt in "It is a truth universally acknowledged" \
    "The storm had kept the travellers at the inn for three days, and" \
    "\"I never expected to see you here,\" said Margaret, closing the door behind her."; do
    printf '## %s\n\n' "$prompt" >>"$out"
    for m in "v3:$ft/t128-slots4-s1/model" "v2.1:$v21"; do
      for seed in 1 2; do
        printf '**%s, seed %s:** ' "${m%%:*}" "$seed" >>"$out"
        "$cli" generate --model "${m#*:}" --prompt "$prompt" --max-tokens 120 --seed "$seed" \
          --threads "$threads" --quiet >>"$out"
        printf '\n\n' >>"$out"
      done
    done
  done
  echo "samples in $out"
}

for s in "${stages[@]}"; do
  case $s in
  split) split ;;
  tokenizer) tokenizer ;;
  pretrain) pretrain ;;
  release) release ;;
  eval) evaluate ;;
  samples) samples ;;
  *) echo "error: unknown stage $s" >&2; exit 2 ;;
  esac
done
