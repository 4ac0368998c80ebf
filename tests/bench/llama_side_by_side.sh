#!/usr/bin/env bash
# Baton against llama.cpp on the same GPT-2-small weights, in one run, interleaved:
# for each weight format, Baton's decode and prefill (bench_gpt2: random weights from a
# fixed seed, decode beside the read-bandwidth bound measured right before and after it)
# and then llama.cpp's (llama-bench tg128 and pp300 on the same weights converted to
# GGUF), --repeats times; the best of each is reported, with each system's share of
# the bound measured beside Baton's figure (the bound's bytes are Baton's own format:
# float32, 16-bit, int8 with a float32 scale per 32 weights, 9 bits a weight, where
# llama.cpp's Q8_0 reads 8.5, or q4 with a float16 scale per 32 weights, 4.5 bits a
# weight like Q4_0). Baton's q4 and llama.cpp's Q4_0 are each made from the same
# float32 weights by their own rounding.
#
#   tests/bench/llama_side_by_side.sh [BUILD_DIR] [--llama LLAMA_BUILD_DIR]
#       [--llama-source DIR] [--repeats N] [--threads N] [--formats "f32 f16 int8 q4"]
#
# LLAMA_BUILD_DIR holds bin/llama-bench and bin/llama-quantize (a llama.cpp build the
# user made; this script builds and downloads nothing); --llama-source is its source
# tree (for its gguf-py; default: LLAMA_BUILD_DIR/..). Without --llama, llama.cpp is
# reported as "not measured". Needs bench_gpt2 (BATON_BUILD_BENCHMARKS=ON) and, for the
# conversion, a Python with numpy (/usr/bin/python3 on Debian with python3-numpy).
# Prints one JSON line per measurement and one summary line per format.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$root/build
llama=""
source_dir=""
repeats=3
threads=2
formats="f32 f16 int8 q4"
if (($#)) && [[ $1 != --* ]]; then build=$1; shift; fi
while (($#)); do
  case $1 in
    --llama) llama=$(realpath "$2"); shift 2 ;;
    --llama-source) source_dir=$(realpath "$2"); shift 2 ;;
    --repeats) repeats=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --formats) formats=$2; shift 2 ;;
    *) echo "error: unknown option $1" >&2; exit 2 ;;
  esac
done
bench=$build/tests/bench/bench_gpt2
[[ -x $bench ]] || { echo "error: $bench is not built (BATON_BUILD_BENCHMARKS=ON)" >&2; exit 1; }
python=${PYTHON:-/usr/bin/python3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
results=$work/results.jsonl

declare -A gguf_type=([f32]=F32 [f16]=F16 [bf16]=BF16 [int8]=Q8_0 [q4]=Q4_0)
have_llama=0
if [[ -n $llama ]]; then
  [[ -x $llama/bin/llama-bench && -x $llama/bin/llama-quantize ]] ||
    { echo "error: $llama has no bin/llama-bench and bin/llama-quantize" >&2; exit 1; }
  source_dir=${source_dir:-$(dirname "$llama")}
  [[ -d $source_dir/gguf-py ]] || { echo "error: $source_dir/gguf-py is missing (--llama-source)" >&2; exit 1; }
  # The same weights as bench_gpt2 --shape small: its seeded random model, saved.
  "$bench" --shape small --save-model "$work/small" --save-dtype f32 >/dev/null
  "$python" "$root/tests/bench/gguf_from_gpt2.py" "$work/small" "$work/small-f32.gguf" "$source_dir" >&2
  for f in $formats; do
    [[ $f == f32 ]] && continue
    "$llama/bin/llama-quantize" "$work/small-f32.gguf" "$work/small-$f.gguf" "${gguf_type[$f]}" \
      >"$work/quantize-$f.log" 2>&1 || { tail -3 "$work/quantize-$f.log" >&2; exit 1; }
  done
  have_llama=1
fi

baton() { # FORMAT: decode of 200 tokens beside the bound, prefill of a 300-token window
  "$bench" --shape small --weights "$1" --threads "$threads" --decode-tokens 200 --repeats 1 \
    --window 300 2>/dev/null |
    "$python" -c '
import json, sys
want = {"decode_tokens_per_s", "decode_bound_tokens_per_s", "decode_share_of_bound",
        "prefill_window_s", "gemm_peak_before_prefill", "gemm_peak_after_prefill"}
out = {"system": "baton", "weights": sys.argv[1]}
for line in sys.stdin:
    try:
        j = json.loads(line)
    except ValueError:
        continue
    if j.get("metric") in want:
        out[j["metric"]] = j["value"]
print(json.dumps(out))
' "$1"
}

llama_run() { # FORMAT
  "$llama/bin/llama-bench" -m "$work/small-$1.gguf" -t "$threads" -p 300 -n 128 -r 1 -o json \
    2>/dev/null | "$python" -c '
import json, sys
rows = json.load(sys.stdin)
out = {"system": "llama.cpp", "weights": sys.argv[1]}
for r in rows:
    if r.get("n_gen", 0) > 0:
        out["tg128_tokens_per_s"] = r["avg_ts"]
    elif r.get("n_prompt", 0) > 0:
        out["pp300_s"] = 300.0 / r["avg_ts"]
print(json.dumps(out))
' "$1"
}

for ((r = 0; r < repeats; ++r)); do
  for f in $formats; do
    baton "$f" | tee -a "$results"
    if ((have_llama)); then
      llama_run "$f" | tee -a "$results"
    fi
  done
done

"$python" - "$results" "$have_llama" "$formats" <<'EOF'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
have_llama = sys.argv[2] == "1"
for f in sys.argv[3].split():
    b = [r for r in rows if r["system"] == "baton" and r["weights"] == f]
    l = [r for r in rows if r["system"] == "llama.cpp" and r["weights"] == f]
    best = max(b, key=lambda r: r.get("decode_tokens_per_s", 0))
    bound = best["decode_bound_tokens_per_s"]
    out = {"summary": f, "bound_tokens_per_s": round(bound, 1),
           "baton_tokens_per_s": round(best["decode_tokens_per_s"], 1),
           "baton_share": round(best["decode_share_of_bound"], 3),
           "baton_prefill300_s": round(min(r["prefill_window_s"] for r in b), 4)}
    if have_llama and l and all("tg128_tokens_per_s" in r for r in l):
        lt = max(r["tg128_tokens_per_s"] for r in l)
        out.update({"llama_tokens_per_s": round(lt, 1), "llama_share": round(lt / bound, 3),
                    "baton_over_llama": round(best["decode_tokens_per_s"] / lt, 3),
                    "llama_pp300_s": round(min(r["pp300_s"] for r in l), 4)})
    else:
        out["llama"] = "not measured"
    print(json.dumps(out))
EOF
