#!/usr/bin/env bash
# The one command a GPU run executes: the steps asked, each bounded in time, every
# result written under OUTDIR (the only folder the GPU machine sends back: at most 8
# files of 16 MiB, 64 MiB in all).
#
#   tools/gpu/run.sh OUTDIR STEP... [--minutes N] [--pretrain-minutes M]
#                    [--carry DIR] [--data DIR] [--resumable] [--dry-run]
#                    [--variant "OPTIONS"]...
#                    [--synthetic-jobs FILE] [--synthetic-parallel N]
#                    [-- PRETRAIN_OPTIONS...]
#
# Steps:
#   build     tools/gpu/build.sh against this machine's LibTorch (PyTorch's), all cores
#             but two (a pretrain may be running)
#   test      the `gpu`-labelled ctest tests (CPU and CUDA agree on the fixture)
#   bench     tools/gpu/bench.sh: decode and prefill of GPT-2 small to XL in bf16
#             beside the card's bounds measured in the same run, and training tokens/s
#             of baseline and recurrent models; waits for a running pretrain first
#             (timings need the GPU to itself)
#   pretrain  tools/gpu/pretrain.py on the carried data, for --pretrain-minutes; it
#             starts where it is named and runs in the background while the steps
#             after it run (build and test use the CPU cores; bench waits for it).
#             Each --variant "OPTIONS" is one more run side by side on the GPU, with
#             OPTIONS after the common PRETRAIN_OPTIONS (a small model leaves most of
#             an H100 idle); the variant with the lowest validation loss is the one
#             whose model comes back, the others' logs and curves come back beside it.
#             --data DIR: the token data (default CARRY/data; the library's parts:
#             CARRY/library). --resumable: each variant keeps its run in
#             build-gpu/pretrain-state-N, so the next call on the warm machine continues
#             it (with the parts carried since); give the same options every call and
#             --plan-minutes (after --) for the training time of all calls together.
#   distributed tools/gpu/distributed.sh: NCCL with world size 1 against one plain
#             process on CUDA (a smoke test), and Gloo with 2 CPU processes against 1
#   synthetic tools/gpu/synthetic.sh: the synthetic memory task's jobs of
#             --synthetic-jobs FILE (default tools/gpu/synthetic-jobs.txt) on CUDA,
#             --synthetic-parallel N at a time (default 5), until the command's end; the
#             runs live in build-gpu/synthetic-runs (a second call on a warm machine
#             resumes them), the reports and run logs come back in logs.tar.gz
#             (logs/synthetic), with the card's use every 5 s (logs/gpu-use.csv)
#
# Environment: PYTHON, the Python that has torch (default python3).
# --dry-run (on a machine without CUDA, to prove the script): test compares the CPU
# with itself and bench measures GPT-2 small on the CPU, briefly.
# --minutes N (default 9) bounds the whole command: each step gets what is left of it
# less a reserve for packing; a step that runs out is stopped and marked "timeout".
# A failed step does not stop the others (a failed build skips test and bench).
#
# OUTDIR receives: summary.json (each step: status, seconds), logs.tar.gz (every log,
# the bench's JSON lines, pretrain's log, curve and summary, the model's config), and
# from pretrain the model in parts of at most 15 MiB with SHA256SUMS;
# tools/gpu/after.sh reassembles and checks them on the CPU machine.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:?usage: run.sh OUTDIR STEP... [--minutes N]}
shift
steps=()
minutes=9
pretrain_minutes=5.5
carry=$root/gpu-carry
data=""
resumable=0
pretrain_args=()
variants=()
dry=0
synthetic_jobs=$root/tools/gpu/synthetic-jobs.txt
synthetic_parallel=5
while (($#)); do
  case $1 in
    --minutes) minutes=$2; shift 2 ;;
    --pretrain-minutes) pretrain_minutes=$2; shift 2 ;;
    --carry) carry=$2; shift 2 ;;
    --data) data=$2; shift 2 ;;
    --resumable) resumable=1; shift ;;
    --dry-run) dry=1; shift ;;
    --variant) variants+=("$2"); shift 2 ;;
    --synthetic-jobs) synthetic_jobs=$(realpath "$2"); shift 2 ;;
    --synthetic-parallel) synthetic_parallel=$2; shift 2 ;;
    --) shift; pretrain_args=("$@"); break ;;
    build | test | bench | pretrain | synthetic | distributed) steps+=("$1"); shift ;;
    *) echo "error: unknown step or option $1" >&2; exit 2 ;;
  esac
done
data=${data:-$carry/data}
((${#steps[@]})) || { echo "error: name at least one step: build test bench pretrain synthetic distributed" >&2; exit 2; }

# The Python with torch (PyTorch's on the GPU machine; PYTHON=/usr/bin/python3 with
# Debian's python3-torch for a dry run here).
python=${PYTHON:-python3}
mkdir -p "$out"
work=$(mktemp -d)
logs=$work/logs
mkdir -p "$logs"
build=$root/build-gpu
begin=$(date +%s)
# 40 s of the whole are kept for packing the results.
deadline=$(python3 -c "print(int($begin + float('$minutes') * 60 - 40))")
declare -A status seconds
pretrain_pid=""

left() { echo $((deadline - $(date +%s))); }
note() { echo "[$(($(date +%s) - begin)) s] $*"; }

# run_step NAME CAP_SECONDS COMMAND...: the command under `timeout`, its output in the log.
run_step() {
  local name=$1 cap=$2 t0
  shift 2
  local budget
  budget=$(left)
  ((budget < cap)) && cap=$budget
  if ((cap < 10)); then
    status[$name]=no-time
    note "$name: no time left"
    return 1
  fi
  t0=$(date +%s)
  note "$name: started (at most $cap s)"
  timeout --kill-after=10 "$cap" "$@" >"$logs/$name.log" 2>&1
  local rc=$?
  seconds[$name]=$(($(date +%s) - t0))
  if ((rc == 0)); then
    status[$name]=ok
  elif ((rc == 124 || rc == 137)); then
    status[$name]=timeout
  else
    status[$name]="failed ($rc)"
  fi
  note "$name: ${status[$name]} in ${seconds[$name]} s"
  tail -5 "$logs/$name.log"
  [[ ${status[$name]} == ok ]]
}

wait_pretrain() {
  [[ -n $pretrain_pid ]] || return 0
  note "waiting for pretrain"
  wait "$pretrain_pid"
  pretrain_pid=""
}

{
  nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>&1
  nproc
  "$python" -c "import torch, sys; print(sys.version.split()[0], torch.__version__, torch.version.cuda, torch.cuda.is_available())" 2>&1
  cmake --version | head -1
  g++ --version | head -1
} >"$logs/machine.txt"
note "machine: $(head -1 "$logs/machine.txt"); torch: $(sed -n 3p "$logs/machine.txt")"

# The carried libraries for Baton's programs; Python keeps the machine's own.
machine_ld=${LD_LIBRARY_PATH-}
export LD_LIBRARY_PATH=$carry/deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
built=0
for step in "${steps[@]}"; do
  case $step in
    build)
      jobs=$(($(nproc) > 4 ? $(nproc) - 2 : $(nproc)))
      run_step build 300 "$root/tools/gpu/build.sh" --carry "$carry" --build "$build" --jobs "$jobs" && built=1
      cp "$build/build.log" "$logs/build-full.log" 2>/dev/null
      ;;
    test)
      if ((built)) || [[ -x $build/tests/gpu/tst_cuda ]]; then
        if ((dry)); then
          run_step test 180 "$build/tests/gpu/tst_cuda" "$carry/fixtures/gpt2-tiny-random" cpu
        else
          run_step test 180 ctest --test-dir "$build" -L gpu -V
        fi
      else
        status[test]="skipped: not built"
      fi
      ;;
    bench)
      wait_pretrain
      if ((built)) || [[ -x $build/tests/bench/bench_gpu ]]; then
        if ((dry)); then
          run_step bench 180 "$root/tools/gpu/bench.sh" "$build" --dry-run
        else
          run_step bench 180 "$root/tools/gpu/bench.sh" "$build"
        fi
      else
        status[bench]="skipped: not built"
      fi
      ;;
    synthetic)
      if ((built)) || [[ -x $build/app/cli/baton-cli ]]; then
        device=cuda
        ((dry)) && device=cpu
        nvidia-smi --query-gpu=timestamp,utilization.gpu,memory.used --format=csv -l 5 \
          >"$logs/gpu-use.csv" 2>/dev/null &
        smi=$!
        # Every job stops at the deadline; the step's own cap is a little later.
        run_step synthetic $(($(left) + 15)) "$root/tools/gpu/synthetic.sh" \
          "$build/app/cli/baton-cli" "$synthetic_jobs" "$build/synthetic-runs" \
          "$logs/synthetic" "$synthetic_parallel" "$((deadline - 20))" "$device"
        kill "$smi" 2>/dev/null
        cp "$build"/synthetic-runs/*.log "$logs/synthetic/" 2>/dev/null
      else
        status[synthetic]="skipped: not built"
      fi
      ;;
    distributed)
      if ((built)) || [[ -x $build/app/cli/baton-cli ]]; then
        device=cuda
        ((dry)) && device=cpu
        run_step distributed 240 "$root/tools/gpu/distributed.sh" "$build/app/cli/baton-cli" \
          "$carry/fixtures/gpt2-tiny-random" "$logs/distributed" "$device"
        grep -h "Baton: distributed" "$build/build.log" >>"$logs/distributed.log" 2>/dev/null
        grep -h '^{' "$logs/distributed.log" 2>/dev/null
      else
        status[distributed]="skipped: not built"
      fi
      ;;
    pretrain)
      pm=$(python3 -c "print(int(float('$pretrain_minutes') * 60))")
      ((${#variants[@]})) || variants=("")
      (
        pids=()
        for i in "${!variants[@]}"; do
          # shellcheck disable=SC2086
          state=()
          ((resumable)) && state=(--state "$build/pretrain-state-$i")
          run_step "pretrain-$i" $((pm + 90)) env LD_LIBRARY_PATH="$machine_ld" \
            "$python" "$root/tools/gpu/pretrain.py" \
            --data "$data" --out "$work/pretrain-$i" --minutes "$pretrain_minutes" \
            --parts-only "${state[@]}" "${pretrain_args[@]}" ${variants[$i]} &
          pids+=($!)
        done
        ok=0
        for p in "${pids[@]}"; do wait "$p" && ok=1; done
        # The variant with the lowest best validation loss.
        best=$(python3 - "$work" <<'PY'
import json, sys, glob, os
best = None
for f in glob.glob(os.path.join(sys.argv[1], "pretrain-*", "summary.json")):
    try:
        loss = json.load(open(f))["best_val_loss"]
    except Exception:
        continue
    if best is None or loss < best[0]:
        best = (loss, os.path.dirname(f))
print(best[1] if best else "")
PY
)
        echo "$((ok ? 1 : 0))|$best" >"$work/pretrain.status"
      ) &
      pretrain_pid=$!
      pretrain_t0=$(date +%s)
      ;;
  esac
done
wait_pretrain
best=""
if [[ -f $work/pretrain.status ]]; then
  IFS='|' read -r ok best <"$work/pretrain.status"
  seconds[pretrain]=$(($(date +%s) - pretrain_t0))
  if [[ -n $best ]]; then
    status[pretrain]="ok: $(basename "$best") kept"
  else
    status[pretrain]="failed: no variant finished"
  fi
fi

# Pack: the best model's parts beside the summary; everything else in one archive.
if [[ -n $best && -d $best/parts ]]; then
  cp "$best/parts/"* "$out/"
fi
for d in "$work"/pretrain-*; do
  [[ -d $d ]] || continue
  cp -r "$d" "$logs/$(basename "$d")"
  rm -rf "$logs/$(basename "$d")/parts" "$logs/$(basename "$d")/model/model.safetensors"
done
{
  echo "{"
  echo "  \"minutes\": $(python3 -c "print(round(($(date +%s) - $begin) / 60, 2))"),"
  first=1
  for s in "${steps[@]}"; do
    ((first)) || echo ","
    first=0
    printf '  "%s": {"status": "%s", "seconds": %s}' "$s" "${status[$s]:-not run}" "${seconds[$s]:-0}"
  done
  echo
  echo "}"
} >"$out/summary.json"
tar -czf "$out/logs.tar.gz" -C "$work" logs
rm -rf "$work"
note "done: $(ls "$out" | tr '\n' ' ')"
cat "$out/summary.json"
