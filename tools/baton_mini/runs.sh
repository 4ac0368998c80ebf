# The run helpers of the baton-mini recipes (sourced by recipe.sh and recipe_v3.sh).
# They read the caller's variables: cli (baton-cli), threads (0: all cores), res (the
# results folder, for ev).

# train OUT ARGS...: runs (or resumes) one training run; skips a finished one.
train() {
  local out=$1 t=${THREADS_OVERRIDE:-$threads}
  shift
  if [[ -f $out/model/config.json || -f $out/adapter/adapter.json ]]; then
    echo "done already: $out"
    return
  fi
  mkdir -p "$(dirname "$out")"
  local start=$SECONDS
  if [[ -f $out/run.json ]]; then
    "$cli" train --out "$out" --resume --threads "$t" --json-progress 2>>"$out.log" >>"$out.progress.jsonl"
  else
    "$cli" train --out "$out" --threads "$t" --json-progress "$@" 2>>"$out.log" >>"$out.progress.jsonl"
  fi
  [[ -f $out/model/config.json || -f $out/adapter/adapter.json ]] ||
    { echo "error: $out did not finish (see $out.log)" >&2; exit 1; }
  echo "$((SECONDS - start))" >>"$out.seconds"
  echo "finished: $out"
}

# Runs the trainings given as "OUT|ARGS" strings two at a time, one thread each (on a
# 2-core machine that beats one 2-thread run after another: no waiting between threads).
parallel_pairs() {
  local t=$threads
  [[ $t == 0 ]] && t=1
  local jobs=("$@") i
  for ((i = 0; i < ${#jobs[@]}; i += 2)); do
    local pids=() j
    for j in "${jobs[@]:i:2}"; do
      # shellcheck disable=SC2086
      THREADS_OVERRIDE=$t train "${j%%|*}" ${j#*|} &
      pids+=($!)
    done
    for p in "${pids[@]}"; do wait "$p"; done
  done
}

# ev NAME COMMAND ARGS...: runs baton-cli COMMAND once, keeps its JSON and wall time.
ev() {
  local name=$1
  shift
  [[ -s $res/$name.json ]] && return
  mkdir -p "$res"
  local t0=$SECONDS
  "$cli" "$@" --unwrap --json --threads "$threads" >"$res/$name.json.tmp" 2>"$res/$name.log"
  echo $((SECONDS - t0)) >"$res/$name.seconds"
  mv "$res/$name.json.tmp" "$res/$name.json"
}
