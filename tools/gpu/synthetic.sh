#!/usr/bin/env bash
# The synthetic memory task's runs on a GPU machine: `baton-cli probe --synthetic
# --device DEV` for every job of a job file, PARALLEL at a time (a small model leaves
# most of the card idle), until a deadline.
#
#   tools/gpu/synthetic.sh CLI JOBFILE RUNS RESULTS PARALLEL DEADLINE [DEVICE]
#
# JOBFILE: a line "common: OPTIONS" (every job's options), then one job per line,
# "NAME SEED OPTIONS..." ('#' starts a comment). SYNTHETIC_COMMON, when set, replaces
# the common options (a dry run with few steps). A job's run lives in RUNS/NAME-sSEED
# and resumes there (a second call on a warm machine goes on where the first stopped);
# its report is RESULTS/synthetic-NAME-sSEED.json, and a job whose report exists is
# skipped. DEADLINE is a time in seconds since 1970: a job still running then is
# stopped (its last checkpoint, at most 100 steps old, stays in RUNS). DEVICE: cuda
# (default) or cpu.
set -uo pipefail
cli=${1:?usage: synthetic.sh CLI JOBFILE RUNS RESULTS PARALLEL DEADLINE [DEVICE]}
jobfile=${2:?} runs=${3:?} results=${4:?} parallel=${5:?} deadline=${6:?} device=${7:-cuda}
[[ -x $cli ]] || { echo "error: $cli is not a program" >&2; exit 1; }
[[ -f $jobfile ]] || { echo "error: no job file $jobfile" >&2; exit 1; }
mkdir -p "$runs" "$results"
common=$(sed -n 's/^common:[[:space:]]*//p' "$jobfile" | head -1)
common=${SYNTHETIC_COMMON:-$common}

one() { # NAME SEED OPTIONS...
  local name=$1 seed=$2 left
  shift 2
  local report=$results/synthetic-$name-s$seed.json out=$runs/$name-s$seed
  [[ -s $report ]] && return 0
  left=$((deadline - $(date +%s)))
  ((left > 5)) || { echo "no time: $name seed $seed"; return 0; }
  local t0=$SECONDS
  # shellcheck disable=SC2086
  timeout --kill-after=5 "$left" "$cli" probe --synthetic --device "$device" --threads 1 \
    --out "$out" --name "$name" --seed "$seed" --json $common "$@" \
    >"$report.tmp" 2>>"$out.log"
  local rc=$?
  if ((rc == 0)); then
    mv "$report.tmp" "$report"
    echo "finished: $name seed $seed in $((SECONDS - t0)) s"
  else
    rm -f "$report.tmp"
    echo "stopped: $name seed $seed after $((SECONDS - t0)) s (exit $rc): $(tail -1 "$out.log")"
  fi
}
export -f one
export cli runs results deadline device common

grep -v '^[[:space:]]*\(#\|common:\|$\)' "$jobfile" |
  xargs -P "$parallel" -L 1 bash -c 'one "$@"' one
echo "reports: $(find "$results" -name 'synthetic-*.json' | wc -l)"
