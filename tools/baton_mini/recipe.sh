#!/usr/bin/env bash
# baton-mini v2: Baton's own default models, made with baton-cli alone from the
# public-domain corpus in ../shared/corpus, and the research runs of
# resources/models/README.md (state ablations, design variants, small windows, the
# memory probe), every comparison paired by seed.
#
#   tools/baton_mini/recipe.sh [STAGE...]
#
# Stages (default: all, in order): split pretrain finetune small variants probe overlap
# eval package; `release` runs only the two fine-tunes the shipped pair comes from,
# `adapter` the recurrence-adapter study (after `release`'s setup, see adapter_runs),
# and `synthetic` the synthetic memory task's design sweep (needs no corpus split or
# base model). Every stage can be interrupted and run again: finished runs and
# evaluations are skipped, unfinished runs resume from their latest checkpoint.
#
# Environment:
#   BATON_CLI    baton-cli to use (default: build/app/cli/baton-cli; the runs of one study
#                should all use one binary: copy it aside while you keep developing)
#   BATON_SHARED the shared folder (default: ../shared beside the checkout)
#   RUNS         where runs, splits and results live (default: ~/baton-mini-v2-runs)
#   THREADS      compute threads per run (default: all cores; pairs of runs use 1 each)
#   SEEDS        the paired seeds (default: 1 2 3 4)
#   DESIGNS      the synthetic stage's designs (default: all of synthetic_designs, in order)
#   OMP_WAIT_POLICY  default PASSIVE (spinning OpenMP workers collapse under load)
#
# v1 (the models of the first release) came from the same script before the corpus was
# unwrapped: `git log -- tools/baton_mini/recipe.sh` finds it; add --no-unwrap to its
# train commands to repeat it with this baton-cli.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cli=${BATON_CLI:-$root/build/app/cli/baton-cli}
shared=${BATON_SHARED:-$root/../shared}
runs=${RUNS:-$HOME/baton-mini-v2-runs}
threads=${THREADS:-0}
read -r -a seeds <<<"${SEEDS:-1 2 3 4}"
export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-PASSIVE}
stages=("$@")
((${#stages[@]})) || stages=(split pretrain finetune small variants probe overlap eval package)

books=$shared/corpus/books
[[ -x $cli ]] || { echo "error: $cli not found: build Baton first" >&2; exit 1; }
[[ -d $books ]] || { echo "error: $books not found" >&2; exit 1; }
mkdir -p "$runs"

# ---- the data split: whole books ----
# Training: three Austen novels, the King James Bible and the 233 State of the Union
# addresses (pretraining and every fine-tune). Validation (early stopping, every
# choice of variant): Northanger Abbey. Test (the result tables only): Pride and
# Prejudice, never used for any choice.
train_books=(austen-emma austen-mansfield-park austen-sense-and-sensibility)
val_book=austen-northanger-abbey
test_book=austen-pride-and-prejudice
test_file=$books/$test_book.txt

split() {
  local d=$runs/data
  rm -rf "$d"
  mkdir -p "$d/train" "$d/val"
  for b in "${train_books[@]}"; do ln -s "$books/$b.txt" "$d/train/$b.txt"; done
  ln -s "$books/kjv-bible.txt" "$d/train/kjv-bible.txt"
  ln -s "$shared/corpus/speeches" "$d/train/speeches"
  ln -s "$books/$val_book.txt" "$d/val/$val_book.txt"
  echo "split: train = ${train_books[*]} + kjv-bible + 233 speeches; val = $val_book; test = $test_book"
}

# The run helpers: train OUT ARGS..., parallel_pairs "OUT|ARGS"..., ev NAME COMMAND ARGS...
# shellcheck source=tools/baton_mini/runs.sh
source "$root/tools/baton_mini/runs.sh"

# The base model: a 4-layer, 256-wide GPT-2 with an 8,000-piece SentencePiece BPE
# tokenizer, pretrained as a baseline on fixed windows of 256 tokens of the unwrapped
# corpus, for as long as validation loss falls (the best checkpoint is kept).
pretrain() {
  train "$runs/pretrain" --scratch --layers 4 --heads 4 --embd 256 --positions 256 \
    --vocab-size 8000 --tokenizer bpe --mode baseline \
    --corpus "$runs/data/train" --val "$runs/data/val" \
    --window 256 --overlap 0 --bptt-windows 1 --batch 16 --epochs 3 \
    --lr 1e-3 --warmup 200 --schedule cosine --min-lr-ratio 0.1 --weight-decay 0.1 \
    --clip 1 --seed 1 --validate-every 1000000 --val-tokens 40000 \
    --checkpoint-every 100 --save-dtype f32
}

# ---- fine-tuning: every run starts from the pretrained base, on the whole training
# mix, 400 steps of 5,120 tokens (2.05 M tokens), the best validation checkpoint kept.
# Runs of one seed see the same batches in the same order, the same token count and
# schedule: baseline and recurrent differ only in the module.
base=$runs/pretrain/model
ft=$runs/finetune
finetune_at() { # T B: the common options for windows of T with B sequences per step
  echo "--base $base --corpus $runs/data/train --val $runs/data/val --window $1 --bptt-windows 20"
  echo "--batch $2 --steps 400 --lr 3e-4 --warmup 50 --schedule cosine --min-lr-ratio 0.1"
  echo "--weight-decay 0.01 --clip 1 --validate-every 200000 --val-tokens 40000"
  echo "--checkpoint-every 50 --save-dtype f16"
}
common128=$(finetune_at 128 2 | tr '\n' ' ')
# twins NAME SEED OPTIONS...: adds to the caller's jobs the baseline and recurrent runs
# NAME-baseline-sSEED and NAME-recurrent-sSEED, identical but for the module.
twins() {
  local name=$1 seed=$2
  shift 2
  jobs+=("$ft/$name-baseline-s$seed|$* --mode baseline --seed $seed")
  jobs+=("$ft/$name-recurrent-s$seed|$* --mode recurrent --seed $seed")
}

# The reference design (method.md section 2 with the residual FFN) against the baseline.
finetune() {
  local jobs=() seed
  for seed in "${seeds[@]}"; do
    twins t128 "$seed" "$common128" --overlap 0
  done
  parallel_pairs "${jobs[@]}"
}

# The design variants, one change each from the reference; seeds 1-2 of every variant
# first, then the rest.
variant_options=(
  "plainffn:--plain-ffn"
  "lr10:--module-lr-scale 10"
  "last32:--pool-last 32"
  "slots4:--slots 4"
  "sink:--sink"
)
variants() {
  local jobs=() half seed v
  for half in first rest; do
    for seed in "${seeds[@]}"; do
      if [[ $half == first && $seed -gt 2 ]] || [[ $half == rest && $seed -le 2 ]]; then continue; fi
      for v in "${variant_options[@]}"; do
        jobs+=("$ft/t128-${v%%:*}-s$seed|$common128 --mode recurrent --overlap 0 --seed $seed ${v#*:}")
      done
    done
  done
  parallel_pairs "${jobs[@]}"
}

# The small-window control: the same comparison at T = 32 and T = 16, where the first
# positions are a large share of every window (the same tokens per step).
small() {
  local jobs=() seed t
  for seed in "${seeds[@]}"; do
    for t in "32 8" "16 16"; do
      local T=${t% *} common
      common=$(finetune_at $t | tr '\n' ' ')
      twins "t$T" "$seed" "$common" --overlap 0
    done
  done
  parallel_pairs "${jobs[@]}"
}

# Memory episodes mixed into fine-tuning (4 per sequence of 20 windows; the training
# set of templates and names), baseline and recurrent, then the probe on the test book.
probe_runs() {
  local jobs=() seed
  for seed in "${seeds[@]}"; do
    twins t128-episodes "$seed" "$common128" --overlap 0 --episodes 4
    jobs+=("$ft/t128-episodes-slots4-s$seed|$common128 --mode recurrent --overlap 0 --seed $seed --episodes 4 --slots 4")
  done
  parallel_pairs "${jobs[@]}"
}

# Partly overlapped execution: the recurrent model and its baseline twin both fine-tuned
# at o = 16 (each window re-reads the last 16 tokens of the one before), so each runs
# with the overlap it was trained for; a seed's two runs see the same windows.
overlap_runs() {
  local jobs=() seed
  for seed in "${seeds[@]}"; do
    twins t128-o16 "$seed" "$common128" --overlap 16
  done
  parallel_pairs "${jobs[@]}"
}

# The shipped pair (v2.1): the variant that helped in every seed (four state slots) and
# its baseline twin, seed 1: the same two runs the finetune and variants stages make.
# v2.1 was fine-tuned from the v2 baseline (its pretrained base was lost), linked in as
# RUNS/pretrain/model; copy it out of resources/models first, as `package` replaces it.
release() {
  parallel_pairs "$ft/t128-baseline-s1|$common128 --mode baseline --overlap 0 --seed 1" \
    "$ft/t128-slots4-s1|$common128 --mode recurrent --overlap 0 --seed 1 --slots 4"
}

# Recurrence adapters (train --adapter): the recurrence module alone (four slots), trained
# on the frozen baseline twin of a seed with that seed's batches, against the full
# recurrent fine-tune of the same seed. The twins are the release stage's runs for every
# seed in ADAPTER_SEEDS (default 1 2); seed 1's pair is the shipped one (the runs are
# deterministic: copying resources/models/baton-mini-baseline to
# RUNS/finetune/t128-baseline-s1/model and baton-mini to t128-slots4-s1/model saves
# running them again). Then, on the test book, each seed's adapter and its full
# fine-tune paired with the seed's twin, window by window.
adapter_seeds=(${ADAPTER_SEEDS:-1 2})
adapter_runs() {
  local first=() later=() seed
  finished() { [[ -f $1/model/config.json || -f $1/adapter/adapter.json ]]; }
  for seed in "${adapter_seeds[@]}"; do
    local twin=$ft/t128-baseline-s$seed full=$ft/t128-slots4-s$seed adapter=$ft/t128-adapter-s$seed
    local on_twin=${common128/"--base $base"/"--base $twin/model"}
    local job="$adapter|$on_twin --mode recurrent --adapter --overlap 0 --seed $seed --slots 4"
    # A seed's adapter waits for its twin; the full fine-tunes fill the second round.
    if finished "$twin"; then
      finished "$adapter" || first+=("$job")
    else
      first+=("$twin|$common128 --mode baseline --overlap 0 --seed $seed")
      later+=("$job")
    fi
    finished "$full" || later=("$full|$common128 --mode recurrent --overlap 0 --seed $seed --slots 4" "${later[@]}")
  done
  ((${#first[@]} == 0)) || parallel_pairs "${first[@]}"
  ((${#later[@]} == 0)) || parallel_pairs "${later[@]}"
  # Two design switches of the study, tried on the adapter (seed 1, judged on the
  # validation book by the runs' own logs: val_loss against val_loss_no_state).
  local variants=() v
  for v in "lr10:--module-lr-scale 10" "plainffn:--plain-ffn"; do
    local out=$ft/t128-adapter-${v%%:*}-s1 twin=$ft/t128-baseline-s1
    local on_twin=${common128/"--base $base"/"--base $twin/model"}
    finished "$out" || variants+=("$out|$on_twin --mode recurrent --adapter --overlap 0 --seed 1 --slots 4 ${v#*:}")
  done
  ((${#variants[@]} == 0)) || parallel_pairs "${variants[@]}"
  for seed in "${adapter_seeds[@]}"; do
    local twin=$ft/t128-baseline-s$seed/model
    ev "eval-adapter-s$seed" eval --model "$twin" --adapter "$ft/t128-adapter-s$seed/adapter" \
      --paired-with "$twin" --window 128 --overlap 0 --state on,off "$test_file"
    ev "eval-adapter-full-s$seed" eval --model "$ft/t128-slots4-s$seed/model" \
      --paired-with "$twin" --window 128 --overlap 0 --state on,off "$test_file"
  done
}

# ---- the synthetic memory task: can the state carry a fact at all? ----
# A 2-layer, 64-wide GPT-2 (two heads) trained from scratch on the task's sequences
# (64-token windows, two facts "SET k v" per window, every fact asked in its own window
# and 1, 2, 4 or 8 windows later, items at least 2 filler tokens apart; baton-cli probe
# --synthetic --help), as a baseline and with each design of the recurrence module: the
# same data, steps and seeds (paired by seed), two runs at a time with one thread each.
# The first six designs are the comparison (three seeds each); the rest screen one
# switch each (pool1nomark: the task without the RECALL mark; pool1w3: 3 windows of
# backpropagation instead of the default 10, and pool1w3long the same with as many
# windows trained on as the others, 10,000 steps instead of 3,000); the f1- designs
# are the task with one fact per window, where copying needs no choice between two
# facts (synthetic_table.py RESULTS f1 reads them as a comparison of their own).
# Reports go to results/synthetic-NAME-sSEED.json; tools/baton_mini/synthetic_table.py
# makes the tables.
synthetic_common="--layers 2 --heads 2 --embd 64 --window 64 --batch 8 --lr 2e-3 --warmup 100 --eval-sequences 1000"
# The designs: NAME:OPTIONS, in the order they run.
# shellcheck source=tools/baton_mini/synthetic_designs.sh
source "$root/tools/baton_mini/synthetic_designs.sh"
synthetic_run() { # NAME SEED OPTIONS...
  local name=$1 seed=$2 out=$runs/synthetic/$1-s$2
  shift 2
  [[ -s $res/synthetic-$name-s$seed.json ]] && return
  mkdir -p "$runs/synthetic" "$res"
  local t0=$SECONDS t=$threads steps=(--steps 3000)
  [[ $t == 0 ]] && t=1
  [[ " $* " == *" --steps "* ]] && steps=()
  # shellcheck disable=SC2086
  "$cli" probe --synthetic --out "$out" --name "$name" --seed "$seed" --threads "$t" --json \
    $synthetic_common "${steps[@]}" "$@" >"$res/synthetic-$name-s$seed.json.tmp" 2>>"$out.log" ||
    { echo "error: $out failed (see $out.log)" >&2; return 1; }
  echo $((SECONDS - t0)) >>"$out.seconds"
  mv "$res/synthetic-$name-s$seed.json.tmp" "$res/synthetic-$name-s$seed.json"
  echo "finished: $name seed $seed"
}
synthetic() {
  local wanted=() jobs=() d seed i
  read -r -a wanted <<<"${DESIGNS:-}"
  for d in "${synthetic_designs[@]}"; do
    if ((${#wanted[@]})) && [[ " ${wanted[*]} " != *" ${d%%:*} "* ]]; then continue; fi
    for seed in "${seeds[@]}"; do jobs+=("${d%%:*}|$seed|${d#*:}"); done
  done
  for ((i = 0; i < ${#jobs[@]}; i += 2)); do
    local pids=() j
    for j in "${jobs[@]:i:2}"; do
      local name=${j%%|*} rest=${j#*|}
      # shellcheck disable=SC2086
      synthetic_run "$name" "${rest%%|*}" ${rest#*|} &
      pids+=($!)
    done
    for p in "${pids[@]}"; do wait "$p"; done
  done
  python3 "$root/tools/baton_mini/synthetic_table.py" "$res"
}

# ---- evaluation on the test book; every result a JSON file in results/ ----
# The test book is read as training reads its corpus (--unwrap: hard wraps joined,
# verse numbers dropped); scored as stored, its ~70-column line breaks, which the
# models never saw in training, cost more than the state gains.
res=$runs/results
# evaluate_pair T NAME: the recurrent run t$T-NAME-sSEED against t$T-baseline-sSEED with
# every state ablation, for each seed whose two runs have finished.
evaluate_pair() {
  local T=$1 name=$2 seed
  for seed in "${seeds[@]}"; do
    local a=$ft/t$T-$name-s$seed/model b=$ft/t$T-baseline-s$seed/model
    [[ -f $a/config.json && -f $b/config.json ]] || continue
    ev "eval-t$T-$name-s$seed" eval --model "$a" --paired-with "$b" --window "$T" --overlap 0 \
      --state on,off,mean,far,shuffled "$test_file"
  done
}
evaluate() {
  local seed v
  ev pretrained-by-position eval --model "$base" --window 256 --overlap 0 --per-token "$res/pretrained-per-token.tsv" "$test_file"
  evaluate_pair 128 recurrent
  for v in "${variant_options[@]}"; do evaluate_pair 128 "${v%%:*}"; done
  evaluate_pair 32 recurrent
  evaluate_pair 16 recurrent
  for seed in "${seeds[@]}"; do
    local b=$ft/t128-baseline-s$seed/model
    [[ -f $b/config.json ]] || continue
    ev "eval-t128-baseline-overlaps-s$seed" eval --model "$b" --window 128 --overlap 0,4,8,16,32,64 "$test_file"
  done
  for seed in "${seeds[@]}"; do
    local a=$ft/t128-o16-recurrent-s$seed/model b=$ft/t128-o16-baseline-s$seed/model
    [[ -f $a/config.json && -f $b/config.json ]] || continue
    ev "eval-t128-o16-recurrent-s$seed" eval --model "$a" --paired-with "$b" --window 128 --overlap 16 \
      --state on,off,mean,far,shuffled "$test_file"
  done
  for seed in "${seeds[@]}"; do
    local p=$ft/t128-episodes-recurrent-s$seed/model q=$ft/t128-episodes-baseline-s$seed/model
    local r=$ft/t128-episodes-slots4-s$seed/model
    [[ -f $p/config.json && -f $q/config.json ]] || continue
    ev "probe-episodes-recurrent-s$seed" probe --model "$p" --baseline "$q" --state on,off,mean,shuffled "$test_file"
    [[ -f $r/config.json ]] && ev "probe-episodes-slots4-s$seed" probe --model "$r" --state on,off,mean,shuffled "$test_file"
    ev "eval-t128-episodes-recurrent-s$seed" eval --model "$p" --paired-with "$q" --window 128 --overlap 0 --state on,off "$test_file"
  done
  for seed in "${seeds[@]}"; do
    local a=$ft/t128-recurrent-s$seed/model b=$ft/t128-baseline-s$seed/model
    [[ -f $a/config.json && -f $b/config.json ]] || continue
    ev "probe-t128-recurrent-s$seed" probe --model "$a" --baseline "$b" --state on,off "$test_file"
  done
  echo "results in $res"
}

# The shipped models (F16): the default recurrent model (the best design, seed 1) and its
# baseline twin.
package() {
  local dest=$root/resources/models pair
  for pair in "${PACKAGE:-baton-mini:t128-slots4-s1 baton-mini-baseline:t128-baseline-s1}"; do
    for p in $pair; do
      local name=${p%%:*} run=${p#*:}
      [[ -f $ft/$run/model/config.json ]] || { echo "error: $run has not finished" >&2; exit 1; }
      rm -rf "${dest:?}/$name"
      mkdir -p "$dest/$name"
      cp "$ft/$run/model/"* "$dest/$name/"
    done
  done
  du -sh "$dest"/baton-mini*
}

for s in "${stages[@]}"; do
  case $s in
  split) split ;;
  pretrain) pretrain ;;
  finetune) finetune ;;
  variants) variants ;;
  small) small ;;
  probe) probe_runs ;;
  overlap) overlap_runs ;;
  release) release ;;
  synthetic) synthetic ;;
  adapter) adapter_runs ;;
  eval) evaluate ;;
  package) package ;;
  *) echo "error: unknown stage $s" >&2; exit 2 ;;
  esac
done
