#!/bin/bash
# The synthetic task's cost per design, measured alone: 100 training steps of each
# design with one thread, twice, interleaved (the models README's cost table).
#   BATON_CLI=build/app/cli/baton-cli OUT=/tmp/synthetic-cost tools/baton_mini/synthetic_cost.sh
# Prints one JSON line per run (design, round, training and evaluation tokens/s).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cli=${BATON_CLI:-$root/build/app/cli/baton-cli}
out=${OUT:-/tmp/baton-synthetic-cost}
common="--layers 2 --heads 2 --embd 64 --window 64 --batch 8 --steps 100 --lr 2e-3 --warmup 100 --eval-sequences 200 --threads 1 --json"
# shellcheck source=tools/baton_mini/synthetic_designs.sh
source "$root/tools/baton_mini/synthetic_designs.sh"
designs=("${synthetic_designs[@]:0:6}") # the comparison
export OMP_WAIT_POLICY=PASSIVE
rm -rf "$out"
mkdir -p "$out"
for round in 1 2; do
  for d in "${designs[@]}"; do
    name=${d%%:*}
    # shellcheck disable=SC2086
    "$cli" probe --synthetic --out "$out/$name-r$round" --name "$name" $common ${d#*:} \
      >"$out/$name-r$round.json" 2>/dev/null
    python3 -c "
import json, sys
j = json.load(open(sys.argv[1]))
print(json.dumps({'design': sys.argv[2], 'round': int(sys.argv[3]), 'steps': j['training']['steps_done'],
                  'threads': 1, 'train_tokens_per_s': round(j['training']['tokens_per_s']),
                  'eval_tokens_per_s': round(j['evaluation']['tokens_per_s']),
                  'parameters': j['model']['parameters'],
                  'module_parameters': j['model']['module_parameters']}))" \
      "$out/$name-r$round.json" "$name" "$round"
  done
done
