# The synthetic task's designs, NAME:OPTIONS for baton-cli probe --synthetic: the
# recipe's `synthetic` stage runs them all (or DESIGNS), synthetic_cost.sh the first
# six (the comparison). Sourced, not run.
#
# The mem- designs are the memory study (models README, "Memory that lasts"): one fact
# per window asked about up to 16 windows later (sequences of 18 windows), today's four
# pooled slots against the recurrent-memory literature's recipe one switch at a time:
# a curriculum over the windows per sequence with shorter sequences mixed in, memory
# tokens read by every block and written by write tokens, a gate, 16 slots. Their
# table: REFERENCE=pool4 synthetic_table.py RESULTS mem.
# shellcheck disable=SC2034
mem_task="--facts 1 --distances 0,1,2,4,8,16 --fit-distances --bptt-windows 18"
mem_curriculum="--curriculum 1,2,4,6,8,12,18 --mix-shorter 0.25 --stage-steps 400"
mem_rmt="--write-tokens --insert-block 0 --read-blocks 2 --memory-tokens"
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
  "mem-baseline:--mode baseline $mem_task"
  "mem-pool4:--slots 4 $mem_task"
  "mem-pool4cur:--slots 4 $mem_task $mem_curriculum"
  "mem-rmt4:--slots 4 $mem_rmt $mem_task"
  "mem-rmt4cur:--slots 4 $mem_rmt $mem_task $mem_curriculum"
  "mem-rmt4gatecur:--slots 4 --gate $mem_rmt $mem_task $mem_curriculum"
  "mem-pool4gatecur:--slots 4 --gate $mem_task $mem_curriculum"
  "mem-rmt16cur:--slots 16 $mem_rmt $mem_task $mem_curriculum"
)
