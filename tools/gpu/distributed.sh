#!/usr/bin/env bash
# run.sh's `distributed` step: data-parallel training through the process group on
# the GPU machine. A smoke test of NCCL with world size 1 (one card): the same short
# recurrent fine-tune of the fixture on CUDA as one plain process and as rank 0 of 1
# through NCCL (--world-size 1), whose losses must agree; then Gloo between 2 CPU
# processes against one, on the machine's cores. Prints JSON lines with each run's
# losses, step time and exchange (comm_s, comm_bytes).
#
#   tools/gpu/distributed.sh CLI FIXTURE OUTDIR DEVICE
#
# DEVICE: cuda (the GPU run) or cpu (a dry run here: the world-size-1 run uses Gloo).
set -uo pipefail
cli=$1 fixture=$2 outdir=$3 device=$4
root=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$outdir"
runs=$(mktemp -d) # the run folders (checkpoints) stay out of OUTDIR, which comes back
trap 'rm -rf "$runs"' EXIT
help=$("$cli" train --help)
[[ $help == *--nproc* ]] || { echo "error: $cli has no data-parallel training" >&2; exit 1; }
# Markdown from the checkout is the corpus (../shared does not travel).
corpus=$runs/corpus
mkdir -p "$corpus"
cp "$root"/docs/*.md "$root"/README.md "$corpus/"
common=(--base "$fixture" --corpus "$corpus" --val-fraction 0.2 --mode recurrent --window 64
        --bptt-windows 3 --batch 8 --steps 6 --lr 1e-3 --warmup 2 --validate-every 0
        --val-tokens 2000 --checkpoint-every 1000 --precision f32 --json-progress)
summarize() { # NAME LOG
  python3 - "$1" "$2" <<'PY'
import json, sys
name, path = sys.argv[1], sys.argv[2]
ev = []
for line in open(path):
    try:
        ev.append(json.loads(line))
    except ValueError:
        pass
steps = [e for e in ev if e.get("event") == "step"]
val = [e["val_loss"] for e in ev if e.get("event") == "validation"]
print(json.dumps({"run": name, "losses": [round(e["loss"], 6) for e in steps],
                  "val_loss": val[-1] if val else None,
                  "tokens_per_s_last": steps[-1]["tokens_per_s"] if steps else None,
                  "comm_s": [e.get("comm_s") for e in steps][1:],
                  "comm_bytes": steps[-1].get("comm_bytes") if steps else None}))
PY
}
rc=0
run() { # NAME ARGS...
  local name=$1
  shift
  if "$cli" train --out "$runs/run-$name" "${common[@]}" "$@" >"$outdir/$name.jsonl" 2>"$outdir/$name.err"; then
    summarize "$name" "$outdir/$name.jsonl"
  else
    echo "{\"run\": \"$name\", \"failed\": true}"
    tail -3 "$outdir/$name.err"
    rc=1
  fi
}
run plain --device "$device" --threads 4
run world1 --device "$device" --threads 4 --world-size 1 --rank 0 --master 127.0.0.1:29561
run cpu-1x8 --device cpu --threads 8
run cpu-2x4 --device cpu --threads 4 --nproc 2
python3 - "$outdir" <<'PY'
import json, sys, os
def losses(name):
    try:
        return [json.loads(l)["loss"] for l in open(os.path.join(sys.argv[1], name + ".jsonl"))
                if '"event":"step"' in l]
    except OSError:
        return []
for a, b in (("plain", "world1"), ("cpu-1x8", "cpu-2x4")):
    x, y = losses(a), losses(b)
    if x and len(x) == len(y):
        d = max(abs(p - q) / abs(p) for p, q in zip(x, y))
        print(json.dumps({"compare": a + " vs " + b, "max_rel_loss_diff": d}))
PY
exit $rc
