#!/usr/bin/env bash
# The library's tokenizer, chosen by measurement (docs/training.md, "Choosing the
# library's tokenizer"): for each vocabulary size, a SentencePiece BPE tokenizer learned
# from the same sample of the library, its bytes per token on the validation works, and
# a small model of baton-mini's shape pretrained from scratch on the library with it for
# the same wall time, scored in bits per byte on every validation work.
#
#   tools/library/tokenizer_study.sh [STAGE...]
#
# Stages (default: all, in order): works tokenize time train eval table. Each can be
# interrupted and run again: finished steps are skipped, an unfinished run resumes.
# Run nothing else on the machine during `time` and `train`: their speeds are the
# comparison.
#
# Environment:
#   BATON_CLI    baton-cli to use (default: build/app/cli/baton-cli; copy it aside while
#                you keep developing)
#   BATON_SHARED the shared folder (default: ../shared beside the checkout)
#   RUNS         where the study lives (default: ~/baton-library-runs/tokenizers)
#   SIZES        vocabulary sizes (default: 8000 16000 32000)
#   MINUTES      each model's training time (default: 12)
#   SAMPLE_MB    the tokenizers' sample of the library (default: 64)
#   THREADS      compute threads (default: all cores)
#
# Same time, not same tokens: a larger vocabulary costs more per token (its embedding and
# output layer), and what a user has is time. `tokenize` learns each size's tokenizer and
# builds its token store (a run of one step); `time` then measures every size's training
# speed, one after the other, in 40 steps; each real run is given the steps that fill
# MINUTES at its speed, and the table reports the minutes it actually took.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cli=${BATON_CLI:-$root/build/app/cli/baton-cli}
shared=${BATON_SHARED:-$root/../shared}
runs=${RUNS:-$HOME/baton-library-runs/tokenizers}
read -r -a sizes <<<"${SIZES:-8000 16000 32000}"
minutes=${MINUTES:-12}
sample_mb=${SAMPLE_MB:-64}
threads=${THREADS:-0}
export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-PASSIVE}
stages=("$@")
((${#stages[@]})) || stages=(works tokenize time train eval table)

library=$shared/corpus/library
books=$shared/corpus/books
val_works=$root/tools/library/validation-works.txt
[[ -x $cli ]] || { echo "error: $cli not found: build Baton first" >&2; exit 1; }
[[ -d $library ]] || { echo "error: $library not found" >&2; exit 1; }
mkdir -p "$runs"

# The options every model shares: baton-mini's shape, windows of 256 tokens, no
# validation until the end (it would cost the sizes unequal time).
common=(--scratch --layers 4 --heads 4 --embd 256 --positions 256 --tokenizer bpe
  --tokenizer-sample-mb "$sample_mb" --mode baseline --corpus "$library"
  --val-works "$val_works" --held-out "$books/austen-pride-and-prejudice.txt"
  --held-out "$books/austen-northanger-abbey.txt" --window 256 --overlap 0
  --bptt-windows 1 --batch 16 --lr 1e-3 --warmup 100 --schedule cosine
  --min-lr-ratio 0.1 --weight-decay 0.1 --clip 1 --seed 1 --validate-every 0
  --val-tokens 50000 --checkpoint-every 100 --save-dtype f32)
# train OUT ARGS... (resumes an unfinished run, skips a finished one)
# shellcheck source=tools/baton_mini/runs.sh
source "$root/tools/baton_mini/runs.sh"

# The validation works as plain files, for `baton-cli eval`.
works() {
  local d=$runs/val-works
  [[ -f $d/.done ]] && { echo "done already: $d"; return; }
  rm -rf "$d"
  mkdir -p "$d"
  python3 - "$library" "$val_works" "$d" <<'EOF'
import os, sys, tarfile
library, listing, out = sys.argv[1:]
wanted = {}
for line in open(listing, encoding="utf-8"):
    line = line.strip()
    if line and not line.startswith("#"):
        shard, member = line.split("/", 1)
        wanted.setdefault(shard, []).append(member)
for shard, members in sorted(wanted.items()):
    with tarfile.open(os.path.join(library, shard), "r:xz") as t:
        for m in members:
            data = t.extractfile(m).read()
            with open(os.path.join(out, os.path.basename(m)), "wb") as f:
                f.write(data)
EOF
  touch "$d/.done"
  echo "works: $(ls "$d" | wc -l) validation works in $d"
}

# A run OUT of size V that reuses the tokenizer and token store of tokenize's run.
beside() {
  local out=$1 v=$2
  mkdir -p "$out"
  rm -rf "$out/tokenizer" "$out/data"
  cp -r "$runs/tokenize-$v/tokenizer" "$out/tokenizer"
  ln -s "$runs/tokenize-$v/data" "$out/data"
}

# tokenize: each size's tokenizer and token store (a run of one step).
tokenize() {
  local v
  for v in "${sizes[@]}"; do
    train "$runs/tokenize-$v" "${common[@]}" --vocab-size "$v" --steps 1
  done
}

# time: each size's training speed, the sizes one after the other.
time_() {
  local v
  for v in "${sizes[@]}"; do
    local out=$runs/time-$v
    [[ -f $out/model/config.json ]] || { rm -rf "$out" "$out.progress.jsonl"; beside "$out" "$v"; }
    train "$out" "${common[@]}" --vocab-size "$v" --steps 40
    echo "speed: $(speed "$v") tokens/s"
  done
}

# speed V: the median training speed of the timing run's steps after the fifth.
speed() {
  python3 - "$runs/time-$1.progress.jsonl" <<'EOF'
import json, statistics, sys
rates = [e["tokens_per_s"] for e in map(json.loads, open(sys.argv[1]))
         if e["event"] == "step" and e["step"] > 5]
print(round(statistics.median(rates)))
EOF
}

# train: each size for MINUTES at its measured speed.
train_sizes() {
  local v
  for v in "${sizes[@]}"; do
    local out=$runs/train-$v
    [[ -f $out/run.json || -f $out/model/config.json ]] || beside "$out" "$v"
    train "$out" "${common[@]}" --vocab-size "$v" --steps $(($(speed "$v") * minutes * 60 / (16 * 256)))
  done
}

eval_() {
  local v
  for v in "${sizes[@]}"; do
    local json=$runs/eval-$v.json
    [[ -s $json ]] && { echo "done already: $json"; continue; }
    "$cli" eval --model "$runs/train-$v/model" --window 256 --unwrap --json \
      --threads "$threads" "$runs"/val-works/*.txt >"$json.tmp"
    mv "$json.tmp" "$json"
    echo "evaluated: $json"
  done
}

# The table (Markdown) of docs/training.md.
table() {
  python3 - "$runs" "${sizes[@]}" <<'EOF'
import json, os, sys
runs, sizes = sys.argv[1], sys.argv[2:]
print("| vocabulary | bytes per token | training tokens/s | steps | tokens trained |"
      " minutes (in steps) | parameters | validation bits per byte |")
print("|---|---|---|---|---|---|---|---|")
for v in sizes:
    e = json.load(open(os.path.join(runs, f"eval-{v}.json")))
    cfg = json.load(open(os.path.join(runs, f"train-{v}", "model", "config.json")))
    events = [json.loads(l) for l in open(os.path.join(runs, f"train-{v}.progress.jsonl"))]
    steps = [x for x in events if x["event"] == "step"]
    seconds = sum(int(s) for s in open(os.path.join(runs, f"train-{v}.seconds")))
    rate = sorted(x["tokens_per_s"] for x in steps)[len(steps) // 2]
    in_steps = sum(16 * 256 / x["tokens_per_s"] for x in steps)
    d, n = cfg["n_embd"], cfg["n_layer"]
    params = cfg["vocab_size"] * d + cfg["n_positions"] * d + n * (12 * d * d + 13 * d) + 2 * d
    row = e["rows"][0]
    print(f"| {int(v) // 1000}k | {e['bytes_per_token']:.3f} | {rate:,.0f} | {steps[-1]['step']:,}"
          f" | {steps[-1]['tokens'] / 1e6:.2f} M | {seconds / 60:.1f} ({in_steps / 60:.1f})"
          f" | {params / 1e6:.2f} M"
          f" | **{row['bits_per_byte']:.4f}** |")
print(f"\nValidation: {len(e['files'])} works, {e['bytes']:,} bytes (unwrapped).")
EOF
}

for s in "${stages[@]}"; do
  case $s in
    works | tokenize | table) "$s" ;;
    train) train_sizes ;;
    time) time_ ;;
    eval) eval_ ;;
    *) echo "error: unknown stage $s" >&2; exit 2 ;;
  esac
done
