#!/usr/bin/env bash
# What data-parallel training costs on this machine: 2 processes x 1 thread against
# 1 process x 2 threads, the same global batch, for baton-mini and GPT-2 small
# (random weights, recurrent fine-tunes), alternating the two a few times. Each step's
# time comes from `baton-cli train --json-progress` (the global batch's scored tokens
# over tokens/s), the exchange's from its comm_s and comm_bytes (the bytes each rank
# sends in Gloo's ring all-reduce: 2 (N - 1) / N of the gradients, in float32).
#
#   tests/bench/distributed.sh [BUILD_DIR] [--steps N] [--repeats R] [--models "mini small"]
#
# Prints one JSON line per run and a summary line per model (medians over the runs of
# the per-run median step; the first step of every run is left out: it allocates).
# Needs bench_gpt2 (BATON_BUILD_BENCHMARKS=ON) for GPT-2 small's random folder.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$root/build
steps=5
repeats=2
models="mini small"
if (($#)) && [[ $1 != --* ]]; then build=$1; shift; fi
while (($#)); do
  case $1 in
    --steps) steps=$2; shift 2 ;;
    --repeats) repeats=$2; shift 2 ;;
    --models) models=$2; shift 2 ;;
    *) echo "error: unknown option $1" >&2; exit 2 ;;
  esac
done
cli=$build/app/cli/baton-cli
[[ -x $cli ]] || { echo "error: $cli is not built" >&2; exit 1; }
books=$root/../shared/corpus/books
[[ -d $books ]] || { echo "error: $books is missing" >&2; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir "$work/corpus"
cp "$(ls "$books"/*.txt | head -1)" "$work/corpus/"

declare -A base
base[mini]=$root/resources/models/baton-mini
if [[ " $models " == *" small "* ]]; then
  [[ -x $build/tests/bench/bench_gpt2 ]] ||
    { echo "error: bench_gpt2 is not built (BATON_BUILD_BENCHMARKS=ON)" >&2; exit 1; }
  "$build/tests/bench/bench_gpt2" --shape small --save-model "$work/small" --save-dtype f32 \
    --tokenizer "$root/../shared/tokenizers/gpt2" >/dev/null
  base[small]=$work/small
fi

# One run: prints {"model", "layout", "step_s", "comm_s", "comm_bytes", "tokens_per_step"}.
run() {
  local model=$1 layout=$2 out=$work/run-$RANDOM$RANDOM
  local -a launch
  if [[ $layout == 2x1 ]]; then launch=(--nproc 2 --threads 1); else launch=(--threads 2); fi
  "$cli" train --base "${base[$model]}" --corpus "$work/corpus" --val-fraction 0 \
    --mode recurrent --window 128 --bptt-windows 2 --batch 4 --steps "$steps" \
    --validate-every 0 --checkpoint-every 100000 --json-progress --out "$out" "${launch[@]}" |
    python3 -c '
import json, statistics, sys
model, layout = sys.argv[1], sys.argv[2]
steps = [j for j in map(json.loads, sys.stdin) if j["event"] == "step"]
prev, rows = 0, []
for j in steps:
    scored = j["tokens"] - prev
    prev = j["tokens"]
    rows.append((scored / j["tokens_per_s"], j.get("comm_s", 0.0), j.get("comm_bytes", 0.0), scored))
rows = rows[1:]
med = lambda k: statistics.median(r[k] for r in rows)
print(json.dumps({"model": model, "layout": layout, "step_s": round(med(0), 4),
                  "comm_s": round(med(1), 4), "comm_bytes": med(2),
                  "tokens_per_step": med(3)}))
' "$model" "$layout"
  rm -rf "$out"
}

results=$work/results.jsonl
for model in $models; do
  for ((r = 0; r < repeats; ++r)); do
    for layout in 1x2 2x1; do
      run "$model" "$layout" | tee -a "$results"
    done
  done
done
python3 - "$results" <<'EOF'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
for model in dict.fromkeys(r["model"] for r in rows):
    one = [r["step_s"] for r in rows if r["model"] == model and r["layout"] == "1x2"]
    two = [r for r in rows if r["model"] == model and r["layout"] == "2x1"]
    s1, s2 = statistics.median(one), statistics.median(r["step_s"] for r in two)
    c = statistics.median(r["comm_s"] for r in two)
    print(json.dumps({"summary": model, "step_s_1proc_2threads": s1,
                      "step_s_2proc_1thread": s2, "ratio_2proc_over_1proc": round(s2 / s1, 3),
                      "comm_s_per_step": c, "comm_share_of_step": round(c / s2, 3),
                      "comm_bytes_per_rank_per_step": two[0]["comm_bytes"],
                      "tokens_per_step": two[0]["tokens_per_step"]}))
EOF
