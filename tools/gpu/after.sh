#!/usr/bin/env bash
# Checks the result of a tools/gpu/pretrain.py run ON THE BUILD MACHINE: reassembles the
# model, verifies it, loads it with baton-cli and applies the gate for a base model that
# the recurrence can use.
#
#   tools/gpu/after.sh RESULT_DIR [MODEL_OUT]      (default MODEL_OUT: RESULT_DIR/model)
#
# RESULT_DIR is pretrain.py's --out as it came back: parts/ (model.safetensors.partNN,
# SHA256SUMS), model/ (config.json, tokenizer.model), curve.json, summary.json; or
# tools/gpu/run.sh's OUTDIR: the parts and SHA256SUMS at its top, the run's other files
# in logs.tar.gz (logs/pretrain-N/, the run whose summary.json names the model's sha256).
# 1. Every part's and the whole file's sha256 is checked (exit 1 on any mismatch); the
#    model folder MODEL_OUT gets model.safetensors, config.json, tokenizer.model (which
#    must be the data's: baton-mini's, or for the library's parts
#    gpu-carry/library/tokenizer.model; TOKENIZER overrides).
# 2. `baton-cli info`, a short greedy `generate`, then the figures, one JSON line each,
#    all written to RESULT_DIR/gate.json (beside MODEL_OUT if RESULT_DIR is read-only):
#    export   baton-cli's per-window NLL at the trained window, o = 0, on the first
#             CURVE_TOKENS tokens of the validation book against pretrain.py's own
#             (curve.json nll_by_window, same windows, float32): mean |diff| < 0.02
#    curve    NLL at positions 256-511 at least 0.05 nats below 32-63 (full windows of
#             the first CURVE_TOKENS tokens); the gate uses baton-cli's figure (eval
#             --per-token); curve.json's (whole book, PyTorch) is shown beside it
#    overlap  T = GATE_WINDOW at o = 0 at least 5% worse in token perplexity than the
#             best of the overlaps GATE_OVERLAPS at that T (baton-cli eval, the first
#             EVAL_TOKENS tokens)
#    probe    baton-cli probe accuracy at distance 0 (window PROBE_WINDOW) at least 0.2
#             above chance (1/8)
#    Evaluation text: the validation book (Northanger Abbey), or for the library's parts
#    the first validation work (curve.json's "book", read from its shard in
#    ../shared/corpus/library), read with --unwrap as training reads it; the test book
#    is never used. BOOK overrides.
# Exit status: 0 the gate passes, 1 an error (checksums, loading), 2 the gate fails.
#
# Environment: BATON_CLI (default build/app/cli/baton-cli), BATON_SHARED (../shared),
# PYTHON (/usr/bin/python3, stdlib only), THREADS (2), CURVE_TOKENS (0: the whole book,
# ~108 K tokens), EVAL_TOKENS (30000; 0: the whole book), GATE_WINDOW (128),
# GATE_OVERLAPS (64,96), PROBE_EPISODES (200), PROBE_WINDOW (128).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cli=${BATON_CLI:-$root/build/app/cli/baton-cli}
shared=${BATON_SHARED:-$root/../shared}
py=${PYTHON:-/usr/bin/python3}
threads=${THREADS:-2}
eval_tokens=${EVAL_TOKENS:-30000}
curve_tokens=${CURVE_TOKENS:-0}
gate_window=${GATE_WINDOW:-128}
gate_overlaps=${GATE_OVERLAPS:-64,96}
probe_episodes=${PROBE_EPISODES:-200}
probe_window=${PROBE_WINDOW:-128}
die() { echo "error: $*" >&2; exit 1; }

(($# >= 1)) || { sed -n '2,30p' "$0" >&2; exit 1; }
res=$(realpath "$1")
model=$(realpath -m "${2:-$res/model}")
[[ -x $cli ]] || die "$cli not found or not executable (set BATON_CLI)"
work=$(mktemp -d /tmp/baton-gpu-after.XXXXXX)
trap 'rm -rf "$work"' EXIT

# Two layouts: pretrain.py's --out (parts/, model/, curve.json), or tools/gpu/run.sh's
# OUTDIR (the parts and SHA256SUMS at the top, the runs' files in logs.tar.gz under
# logs/pretrain-N/; the run whose summary.json names the model's sha256 is used).
if [[ -f $res/parts/SHA256SUMS ]]; then
  parts=$res/parts
  src=$res
elif [[ -f $res/SHA256SUMS ]]; then
  parts=$res
  src=$res
  if [[ ! -f $res/curve.json && -f $res/logs.tar.gz ]]; then
    tar -xzf "$res/logs.tar.gz" -C "$work" || die "cannot unpack $res/logs.tar.gz"
    whole=$(awk '$2 == "model.safetensors" {print $1}' "$res/SHA256SUMS")
    src=""
    for d in "$work"/logs/pretrain-*; do
      [[ -f $d/summary.json ]] || continue
      if grep -q "\"model_sha256\": \"$whole\"" "$d/summary.json"; then src=$d; fi
    done
    [[ -n $src ]] || die "no run in $res/logs.tar.gz has summary.json model_sha256 $whole"
    echo "note: run files from logs.tar.gz: ${src#"$work"/}" >&2
  fi
else
  die "neither $res/parts/SHA256SUMS nor $res/SHA256SUMS found"
fi
for f in model/config.json model/tokenizer.model curve.json; do
  [[ -f $src/$f ]] || die "$src/$f not found"
done
# The validation text and tokenizer of the data the model learned from.
trained_on=$("$py" -c "import json,sys; print(json.load(open(sys.argv[1]))['book'])" "$src/curve.json")
tokenizer=${TOKENIZER:-$root/resources/models/baton-mini/tokenizer.model}
book=${BOOK:-$shared/corpus/books/austen-northanger-abbey.txt}
if [[ -z ${BOOK:-} && $trained_on == *.tar.xz/* ]]; then # a work of the library's shards
  tokenizer=${TOKENIZER:-$root/gpu-carry/library/tokenizer.model}
  book=$work/validation-work.txt
  "$py" - "$shared/corpus/library/${trained_on%%.tar.xz/*}.tar.xz" "${trained_on#*.tar.xz/}" "$book" <<'PY' ||
import sys, tarfile
with tarfile.open(sys.argv[1], "r:xz") as t:
    open(sys.argv[3], "wb").write(t.extractfile(sys.argv[2]).read())
PY
    die "cannot read $trained_on from the library"
fi
[[ -f $book ]] || die "$book not found"

# gate.json goes to RESULT_DIR, or beside MODEL_OUT when RESULT_DIR is read-only.
mkdir -p "$model" || die "cannot create $model"
report=$res
[[ -w $res ]] || report=$(dirname "$model")
[[ -w $report ]] || die "cannot write gate.json in $res or $report"

# ---- 1. reassemble and verify
"$py" - "$parts" "$model" <<'PY' || exit 1
import hashlib, os, re, sys
parts, model = sys.argv[1:3]
lines = [l.split(None, 1) for l in open(os.path.join(parts, "SHA256SUMS")).read().splitlines() if l.strip()]
sums = {name.strip().lstrip("*"): h for h, name in lines}
whole = sums.pop("model.safetensors", None)
if whole is None:
    sys.exit("error: SHA256SUMS lists no model.safetensors")
names = sorted(sums, key=lambda n: int(re.search(r"part(\d+)$", n).group(1)))
if not names:
    sys.exit("error: SHA256SUMS lists no parts")
bad = 0
tmp = os.path.join(model, "model.safetensors.assembling")
h_all = hashlib.sha256()
with open(tmp, "wb") as out:
    for n in names:
        p = os.path.join(parts, n)
        if not os.path.isfile(p):
            print(f"error: missing part {p}", file=sys.stderr); bad += 1; continue
        data = open(p, "rb").read()
        if hashlib.sha256(data).hexdigest() != sums[n]:
            print(f"error: sha256 mismatch: {p}", file=sys.stderr); bad += 1
        h_all.update(data); out.write(data)
if bad:
    os.remove(tmp); sys.exit(f"error: {bad} bad or missing part(s): the model was not assembled")
if h_all.hexdigest() != whole:
    os.remove(tmp); sys.exit("error: sha256 mismatch: the reassembled model.safetensors")
os.replace(tmp, os.path.join(model, "model.safetensors"))
print(f'{{"figure": "checksums", "parts": {len(names)}, "bytes": {os.path.getsize(os.path.join(model, "model.safetensors"))}, "sha256": "{whole}", "pass": true}}')
PY
if [[ $model != "$src/model" ]]; then
  cp "$src/model/config.json" "$src/model/tokenizer.model" "$model/"
fi
cmp -s "$model/tokenizer.model" "$tokenizer" ||
  die "$model/tokenizer.model is not the data's tokenizer ($tokenizer)"
[[ ! -e $model/baton.json ]] || die "$model/baton.json exists: a base model must not carry one"

# ---- 2. load it
"$cli" info --model "$model" --json >"$work/info.json" 2>"$work/info.log" ||
  { cat "$work/info.log" >&2; die "baton-cli info cannot load $model"; }
nice "$cli" generate --model "$model" --threads "$threads" --greedy --max-tokens 24 \
  --prompt "It was a fine morning, and" --quiet >"$work/sample.txt" 2>"$work/generate.log" ||
  { cat "$work/generate.log" >&2; die "baton-cli generate failed"; }

# The evaluation texts: the first ~N tokens of the book, cut at a blank line.
prefix() {
  "$py" - "$book" "$1" "$2" <<'PY'
import sys
book, n, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
text = open(book, encoding="utf-8").read()
if n > 0:
    cut = text.find("\n\n", int(n * 4.1))  # ~4 characters per token in this book
    if cut > 0:
        text = text[:cut + 1]
open(out, "w", encoding="utf-8").write(text)
PY
}
prefix "$eval_tokens" "$work/val.txt"
prefix "$curve_tokens" "$work/val-curve.txt"
window=$("$py" -c 'import json,sys; print(json.load(open(sys.argv[1]))["window"])' "$src/curve.json")
positions=$("$py" -c 'import json,sys; print(json.load(open(sys.argv[1]))["n_positions"])' "$model/config.json")
((gate_window <= positions)) || { echo "note: GATE_WINDOW $gate_window > $positions positions: using $positions" >&2; gate_window=$positions; }
((probe_window <= positions)) || { echo "note: PROBE_WINDOW $probe_window > $positions positions: using $positions" >&2; probe_window=$positions; }
gate_overlaps=$("$py" -c 'import sys; T=int(sys.argv[2]); print(",".join(o for o in sys.argv[1].split(",") if 0 < int(o) < T) or str(T // 2))' "$gate_overlaps" "$gate_window")

t0=$SECONDS
nice "$cli" eval --model "$model" --threads "$threads" --unwrap --window "$window" --overlap 0 \
  --per-token "$work/per-token.tsv" --json "$work/val-curve.txt" >"$work/eval-curve.json" 2>"$work/eval-curve.log" ||
  { cat "$work/eval-curve.log" >&2; die "baton-cli eval (per token) failed"; }
t1=$SECONDS
nice "$cli" eval --model "$model" --threads "$threads" --unwrap --window "$gate_window" \
  --overlap "0,$gate_overlaps" --json "$work/val.txt" >"$work/eval-overlap.json" 2>"$work/eval-overlap.log" ||
  { cat "$work/eval-overlap.log" >&2; die "baton-cli eval (overlaps) failed"; }
t2=$SECONDS
nice "$cli" probe --model "$model" --threads "$threads" --unwrap --distances 0 \
  --episodes "$probe_episodes" --window "$probe_window" --json "$book" >"$work/probe.json" 2>"$work/probe.log" ||
  { cat "$work/probe.log" >&2; die "baton-cli probe failed"; }
t3=$SECONDS

"$py" - "$work" "$report" "$src" "$((t1 - t0))" "$((t2 - t1))" "$((t3 - t2))" <<'PY'
import csv, json, math, os, sys
work, res, src = sys.argv[1:4]
secs = [int(s) for s in sys.argv[4:7]]
figs = []
def fig(d):
    figs.append(d)
    print(json.dumps(d))

info = json.load(open(os.path.join(work, "info.json")))
fig({"figure": "info", "parameters": info["parameters"], "n_layer": info["n_layer"], "n_head": info["n_head"],
     "n_embd": info["n_embd"], "n_positions": info["n_positions"], "storage_dtype": info["storage_dtype"],
     "tokenizer": info["tokenizer"], "recurrence": info["recurrence"]})
fig({"figure": "sample", "greedy_continuation": open(os.path.join(work, "sample.txt")).read().strip()[:200]})

curve = json.load(open(os.path.join(src, "curve.json")))
T = curve["window"]
# baton-cli per token: sum by position over full windows, and each full window's mean.
by_pos, n_pos, by_win = [0.0] * T, [0] * T, {}
with open(os.path.join(work, "per-token.tsv")) as f:
    for r in csv.DictReader(f, delimiter="\t"):
        by_win.setdefault(int(r["window"]), []).append((int(r["position"]), float(r["nll"])))
full = sorted(w for w, vs in by_win.items() if len(vs) == T)  # as pretrain.py: full windows only
for w in full:
    for p, v in by_win[w]:
        by_pos[p] += v; n_pos[p] += 1
by_win = {w: [v for _, v in by_win[w]] for w in full}

# export: the same windows scored by PyTorch (pretrain.py) and by Baton
mine = curve.get("nll_by_window") or []
pairs = [(sum(by_win[w]) / T, mine[w]) for w in full if w < len(mine)]
if pairs:
    diffs = [abs(a - b) for a, b in pairs]
    mad = sum(diffs) / len(diffs)
    fig({"figure": "export", "windows": len(pairs), "mean_abs_diff": round(mad, 5), "max_abs_diff": round(max(diffs), 5),
         "threshold": 0.02, "pass": mad < 0.02,
         "source": "baton-cli eval --per-token vs curve.json nll_by_window (pretrain.py, float32)"})
else:
    fig({"figure": "export", "pass": False, "note": "no comparable windows"})

def band(a, b):
    if b >= T or not all(n_pos[a:b + 1]):
        return None
    return sum(by_pos[a:b + 1]) / sum(n_pos[a:b + 1])
lo, hi = band(32, 63), band(256, 511)
cb = curve.get("bands", {})
c_lo, c_hi = cb.get("32-63"), cb.get("256-511")
rec = {"figure": "curve", "window": T, "tokens_full_windows": len(full) * T, "windows_full": len(full),
       "baton_32_63": lo, "baton_256_511": hi,
       "baton_drop": (lo - hi) if lo is not None and hi is not None else None,
       "curve_json_32_63": c_lo, "curve_json_256_511": c_hi,
       "curve_json_drop": (c_lo - c_hi) if c_lo is not None and c_hi is not None else None,
       "threshold": 0.05, "source": "baton-cli eval --per-token (gate); curve.json: pretrain.py, whole book (shown)",
       "seconds": secs[0]}
rec["pass"] = rec["baton_drop"] is not None and rec["baton_drop"] >= 0.05
if rec["baton_drop"] is None:
    rec["note"] = f"window {T} has no positions 256-511"
fig(rec)

rows = json.load(open(os.path.join(work, "eval-overlap.json")))["rows"]
o0 = [r for r in rows if r["overlap"] == 0][0]
ov = [r for r in rows if r["overlap"] > 0]
best = min(ov, key=lambda r: r["token_ppl"])
ratio = o0["token_ppl"] / best["token_ppl"] - 1
fig({"figure": "overlap", "window": o0["window"], "ppl_o0": round(o0["token_ppl"], 3),
     "ppl_by_overlap": {str(r["overlap"]): round(r["token_ppl"], 3) for r in ov},
     "best_overlap": best["overlap"], "o0_worse_by": round(ratio, 4), "threshold": 0.05,
     "scored_tokens": o0["scored_tokens"], "pass": ratio >= 0.05, "source": "baton-cli eval", "seconds": secs[1]})

pr = json.load(open(os.path.join(work, "probe.json")))
r0 = [r for r in pr["models"][0]["results"] if r["distance"] == 0][0]
above = r0["accuracy"] - pr["chance"]
fig({"figure": "probe", "distance": 0, "accuracy": r0["accuracy"], "chance": pr["chance"],
     "above_chance": round(above, 4), "std_error": round(r0["accuracy_std_error"], 4), "episodes": r0["episodes"],
     "window": pr["models"][0]["window"], "threshold": 0.2, "pass": above >= 0.2, "source": "baton-cli probe",
     "seconds": secs[2]})

gated = [f for f in figs if "pass" in f]
ok = all(f["pass"] for f in gated)
failed = [f["figure"] for f in gated if not f["pass"]]
json.dump({"pass": ok, "failed": failed, "figures": figs, "model": info["path"]},
          open(os.path.join(res, "gate.json"), "w"), indent=1)
print(json.dumps({"figure": "gate", "pass": ok, "failed": failed}))
print(("GATE PASSED" if ok else "GATE FAILED: " + ", ".join(failed)) + f" (written to {os.path.join(res, 'gate.json')})",
      file=sys.stderr)
sys.exit(0 if ok else 2)
PY
