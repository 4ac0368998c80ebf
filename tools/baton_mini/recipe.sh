#!/usr/bin/env bash
# baton-mini: Baton's own default models, made with baton-cli alone from the
# public-domain corpus in ../shared/corpus, and the paper's experiment at small
# scale (../shared/docs/method.md section 7). See resources/models/README.md.
#
#   tools/baton_mini/recipe.sh [STAGE...]
#
# Stages (default: all, in order): split pretrain finetune eval package.
# Every stage can be interrupted and run again: finished runs are skipped,
# unfinished ones resume from their latest checkpoint (baton-cli train --resume).
#
# Environment:
#   BATON_CLI    baton-cli to use (default: build/app/cli/baton-cli)
#   BATON_SHARED the shared folder (default: ../shared beside the checkout)
#   RUNS         where runs, splits and results live (default: ~/baton-mini-runs)
#   THREADS      compute threads (default: all cores)
#   OMP_WAIT_POLICY  default PASSIVE (see README, "Measured")
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cli=${BATON_CLI:-$root/build/app/cli/baton-cli}
shared=${BATON_SHARED:-$root/../shared}
runs=${RUNS:-$HOME/baton-mini-runs}
threads=${THREADS:-0}
# OpenMP threads that spin while waiting slow training down 3-6x whenever anything
# else runs on this 2-core machine; passive waiting stays near one core's speed.
export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-PASSIVE}
stages=("$@")
((${#stages[@]})) || stages=(split pretrain finetune eval package)

books=$shared/corpus/books
[[ -x $cli ]] || { echo "error: $cli not found: build Baton first" >&2; exit 1; }
[[ -d $books ]] || { echo "error: $books not found" >&2; exit 1; }
mkdir -p "$runs"

# ---- the data split: whole books ----
# Austen: three novels to train on, one to validate on (early stopping, model
# choice), one to test on (the replication table only; never used for any choice).
train_books=(austen-emma austen-mansfield-park austen-sense-and-sensibility)
val_book=austen-northanger-abbey
test_book=austen-pride-and-prejudice

split() {
  local d=$runs/data
  rm -rf "$d"
  mkdir -p "$d/pretrain" "$d/austen-train" "$d/austen-val" "$d/austen-test"
  for b in "${train_books[@]}"; do
    ln -s "$books/$b.txt" "$d/pretrain/$b.txt"
    ln -s "$books/$b.txt" "$d/austen-train/$b.txt"
  done
  ln -s "$books/kjv-bible.txt" "$d/pretrain/kjv-bible.txt"
  ln -s "$shared/corpus/speeches" "$d/pretrain/speeches"
  ln -s "$books/$val_book.txt" "$d/austen-val/$val_book.txt"
  ln -s "$books/$test_book.txt" "$d/austen-test/$test_book.txt"
  echo "split: pretrain = ${train_books[*]} + kjv-bible + 233 speeches; val = $val_book; test = $test_book"
}

# train OUT ARGS...: runs (or resumes) one training run; skips a finished one.
train() {
  local out=$1 threads=${THREADS_OVERRIDE:-$threads}
  shift
  if [[ -f $out/model/config.json ]]; then
    echo "done already: $out/model"
    return
  fi
  if [[ -f $out/run.json ]]; then
    "$cli" train --out "$out" --resume --threads "$threads" --json-progress 2>>"$out.log" >>"$out.progress.jsonl"
  else
    mkdir -p "$(dirname "$out")"
    "$cli" train --out "$out" --threads "$threads" --json-progress "$@" 2>>"$out.log" >>"$out.progress.jsonl"
  fi
  [[ -f $out/model/config.json ]] || { echo "error: $out did not finish (see $out.log)" >&2; exit 1; }
  echo "finished: $out/model"
}

# The base model: a 4-layer, 256-wide GPT-2 with an 8,000-piece SentencePiece BPE
# tokenizer, pretrained as a baseline on fixed windows of 256 tokens.
pretrain() {
  train "$runs/pretrain" --scratch --layers 4 --heads 4 --embd 256 --positions 256 \
    --vocab-size 8000 --tokenizer bpe --mode baseline \
    --corpus "$runs/data/pretrain" --val "$runs/data/austen-val" \
    --window 256 --overlap 0 --bptt-windows 1 --batch 16 --epochs 1.5 \
    --lr 1e-3 --warmup 200 --schedule cosine --min-lr-ratio 0.1 --weight-decay 0.1 \
    --clip 1 --seed 1 --validate-every 1000000 --val-tokens 40000 \
    --checkpoint-every 100 --save-dtype f32
}

# Fine-tuning on the Austen training books, T = 128, W = 20 windows per sequence.
# Every fine-tune uses the same batches (same seed, same sequences for the same o),
# token count and schedule, so baseline and recurrent differ only in the module.
finetune_common=(--corpus "$runs/data/austen-train" --val "$runs/data/austen-val"
  --window 128 --bptt-windows 20 --batch 2 --epochs 2 --lr 3e-4 --warmup 50
  --schedule cosine --min-lr-ratio 0.1 --weight-decay 0.01 --clip 1
  --validate-every 100000 --val-tokens 40000 --checkpoint-every 50 --save-dtype f16)

# Runs two trainings side by side, one thread each (on this 2-core machine that beats
# one 2-thread run after another: no waiting between threads).
pair() { # OUT1 "ARGS1" OUT2 "ARGS2" (the argument strings are split on spaces)
  local t=$threads
  [[ $t == 0 ]] && t=1
  local pids=()
  # shellcheck disable=SC2086
  THREADS_OVERRIDE=$t train "$1" $2 &
  pids+=($!)
  if [[ -n ${3:-} ]]; then
    # shellcheck disable=SC2086
    THREADS_OVERRIDE=$t train "$3" $4 &
    pids+=($!)
  fi
  for p in "${pids[@]}"; do wait "$p"; done
}

finetune() {
  local base=$runs/pretrain/model
  local ft=$runs/finetune
  local common="${finetune_common[*]}"
  pair "$ft/baseline-o0-s1" "--base $base --mode baseline --overlap 0 --seed 1 $common" \
    "$ft/recurrent-o0-s1" "--base $base --mode recurrent --overlap 0 --seed 1 $common"
  pair "$ft/recurrent-o16-s1" "--base $base --mode recurrent --overlap 16 --seed 1 $common" \
    "$ft/baseline-o0-s2" "--base $base --mode baseline --overlap 0 --seed 2 $common"
  # The second recurrent seed, and the remedies of method.md section 5 ("The state
  # can die"), seed 1, o = 0: the paper's plain FFN, and a slot logit bias.
  pair "$ft/recurrent-o0-s2" "--base $base --mode recurrent --overlap 0 --seed 2 $common" \
    "$ft/recurrent-o0-plainffn-s1" "--base $base --mode recurrent --overlap 0 --seed 1 --plain-ffn $common"
  pair "$ft/recurrent-o0-slotbias-s1" \
    "--base $base --mode recurrent --overlap 0 --seed 1 --slot-bias --slot-bias-init -2 $common"
}

# The replication table: every evaluation on the held-out test book.
evaluate() {
  local ft=$runs/finetune res=$runs/results test=$runs/data/austen-test/$test_book.txt
  mkdir -p "$res"
  ev() { # NAME MODEL ARGS...
    local name=$1 model=$2
    shift 2
    [[ -s $res/$name.json ]] && return
    local t0
    t0=$(date +%s%N)
    "$cli" eval --model "$model" --json --threads "$threads" "$@" "$test" >"$res/$name.json.tmp" 2>"$res/$name.log"
    echo $((($(date +%s%N) - t0) / 1000000)) >"$res/$name.ms"
    mv "$res/$name.json.tmp" "$res/$name.json"
  }
  for seed in 1 2; do
    ev "baseline-s$seed-overlaps" "$ft/baseline-o0-s$seed/model" --window 128 --overlap 0,4,8,16,32,64
    ev "recurrent-o0-s$seed" "$ft/recurrent-o0-s$seed/model" --window 128 --overlap 0 --no-state
    ev "baseline-s$seed-windows" "$ft/baseline-o0-s$seed/model" --window 64,128,256 --overlap 0
    ev "recurrent-o0-s$seed-windows" "$ft/recurrent-o0-s$seed/model" --window 64,128,256 --overlap 0
  done
  ev "recurrent-o16-s1" "$ft/recurrent-o16-s1/model" --window 128 --overlap 16 --no-state
  ev "recurrent-o0-plainffn-s1" "$ft/recurrent-o0-plainffn-s1/model" --window 128 --overlap 0 --no-state
  ev "recurrent-o0-slotbias-s1" "$ft/recurrent-o0-slotbias-s1/model" --window 128 --overlap 0 --no-state
  ev "pretrained-overlaps" "$runs/pretrain/model" --window 128 --overlap 0,16
  echo "results in $res"
}

# The shipped models (F16): the recurrent model at o = 0 (the default), its o = 16
# sibling, and the baseline twin, all seed 1.
package() {
  local ft=$runs/finetune dest=$root/resources/models
  for pair in "baton-mini:recurrent-o0-s1" "baton-mini-o16:recurrent-o16-s1" \
    "baton-mini-baseline:baseline-o0-s1"; do
    local name=${pair%%:*} run=${pair#*:}
    rm -rf "$dest/$name"
    mkdir -p "$dest/$name"
    cp "$ft/$run/model/"* "$dest/$name/"
  done
  du -sh "$dest"/baton-mini*
}

for s in "${stages[@]}"; do
  case $s in
  split) split ;;
  pretrain) pretrain ;;
  finetune) finetune ;;
  eval) evaluate ;;
  package) package ;;
  *) echo "error: unknown stage $s" >&2; exit 2 ;;
  esac
done
