# The synthetic task's designs, NAME:OPTIONS for baton-cli probe --synthetic: the
# recipe's `synthetic` stage runs them all (or DESIGNS), synthetic_cost.sh the first
# six (the comparison). Sourced, not run.
# shellcheck disable=SC2034
synthetic_designs=(
  "baseline:--mode baseline"
  "pool1:"
  "pool4:--slots 4"
  "write4:--write-tokens --slots 4"
  "write4all:--write-tokens --slots 4 --insert-block 0 --read-blocks 2"
  "write4allgate:--write-tokens --slots 4 --insert-block 0 --read-blocks 2 --gate"
  "pool1nomark:--no-recall-marker"
  "pool4all:--slots 4 --insert-block 0 --read-blocks 2"
  "pool4gate:--slots 4 --gate"
  "pool16:--slots 16"
  "plain1:--plain-ffn"
  "block0:--insert-block 0"
  "pool1w3:--bptt-windows 3"
  "pool1w3long:--bptt-windows 3 --steps 10000"
  "f1-baseline:--mode baseline --facts 1"
  "f1-pool1:--facts 1"
  "f1-pool4:--slots 4 --facts 1"
)
