#!/usr/bin/env bash
# Fuzzes every target for SECONDS each (default 30), two at a time, after building the
# `fuzz` preset (clang, ASan + UBSan) and replaying each committed corpus. New inputs go
# to BUILD/fuzz-work/<target> (the committed corpus/<target> is only read); a crash,
# leak, timeout or out-of-memory input is saved as BUILD/fuzz-artifacts/<target>-* and
# makes the script fail. One line per target: executions, coverage, features, corpus.
#
#   tests/fuzz/run.sh [SECONDS] [TARGET...]
#   JOBS=1 tests/fuzz/run.sh 900 fuzz_epub   # one target, 15 minutes
#   FUZZ_SEED=1 tests/fuzz/run.sh 30          # what CI runs
set -euo pipefail
seconds=${1:-30}
shift || true
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=$root/build-fuzz
jobs=${JOBS:-2}
seed=${FUZZ_SEED:-0} # 0: libFuzzer picks one

cd "$root"
if [[ ! -f $build/build.ninja ]]; then
  cmake --preset fuzz >/dev/null
fi
cmake --build --preset fuzz >/dev/null

targets=("$@")
if ((${#targets[@]} == 0)); then
  for f in "$here"/fuzz_*.cpp; do
    targets+=("$(basename "$f" .cpp)")
  done
fi
mkdir -p "$build/fuzz-work" "$build/fuzz-artifacts" "$build/fuzz-logs"

fuzz_one() {
  local name=$1 exe=$build/tests/fuzz/$1 log=$build/fuzz-logs/$1.log rc=0
  mkdir -p "$build/fuzz-work/$name"
  # -rss_limit_mb: an input that makes a reader allocate without bound is a finding.
  local cpu=$build/fuzz-logs/$1.cpu
  # CPU seconds (user + system) of the fuzzer, beside the wall-clock limit.
  TIMEFORMAT='%U %S'
  { time "$exe" "$build/fuzz-work/$name" "$here/corpus/$name" -max_total_time="$seconds" \
      -timeout=20 -rss_limit_mb=2048 -max_len=1048576 -print_final_stats=1 -seed="$seed" \
      -artifact_prefix="$build/fuzz-artifacts/$name-" >"$log" 2>&1 || rc=$?; } 2>"$cpu"
  local execs cov ft corpus
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -n 1 | cut -d' ' -f2)
  ft=$(grep -o 'ft: [0-9]*' "$log" | tail -n 1 | cut -d' ' -f2)
  corpus=$(find "$build/fuzz-work/$name" -type f | wc -l)
  local cpu_s
  cpu_s=$(awk '{printf "%.0f", $1 + $2}' "$cpu")
  if ((rc == 0)); then
    echo "ok    $name executions=${execs:-0} cov=${cov:-0} ft=${ft:-0} corpus=$corpus" \
      "seconds=$seconds cpu_seconds=$cpu_s"
  else
    echo "FAIL  $name rc=$rc (log: $log; input: $build/fuzz-artifacts/$name-*)"
    grep -m 5 -E 'ERROR|SUMMARY|fuzz property' "$log" | sed 's/^/      /' || true
    return 1
  fi
}
export -f fuzz_one
export build here seconds seed

status=0
printf '%s\n' "${targets[@]}" | xargs -P "$jobs" -I{} bash -c 'fuzz_one {}' || status=1
exit $status
