#!/usr/bin/env bash
# The kill -9 soak (issue 19; a tool, not part of ctest or CI): N times, kills with -9
# at a random moment one of
#   generate  baton-cli story generate, streaming chunks and states into a story
#   train     a training run (fine-tuning the bundled baton-mini, a checkpoint every
#             2 steps), started or resumed with --resume
#   app       the app (tests/soak/soak_typist: the real main window, offscreen) while
#             it types and autosaves sentences
#   shared    the app typing (with baton-mini loaded, so that its story engine holds a
#             second connection) while baton-cli, beside it on the same database, lists
#             the stories and generates into another story (one run to its end, one
#             killed at a random moment); then the app is killed
# in turn, and after each kill checks: PRAGMA integrity_check is ok; every text
# exported before is still a prefix of the story; every sentence the app reported
# saved is in the story; a killed training run resumes (its next start succeeds).
# Prints one line per kind (counts) and exits 1 if any check failed.
#
#   tests/soak/kill9.sh N [BUILD_DIR]      (BUILD_DIR: build; needs soak_typist built)
set -euo pipefail
n=${1:?usage: kill9.sh N [BUILD_DIR]}
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${2:-$root/build}" && pwd)
cli=$build/app/cli/baton-cli
typist=$build/tests/soak/soak_typist
shared=$root/../shared
for f in "$cli" "$typist"; do
  [[ -x $f ]] || { echo "missing $f (build it first)" >&2; exit 2; }
done

work=$(mktemp -d /tmp/baton-kill9-XXXXXX)
trap 'rm -rf "$work"' EXIT
export HOME=$work/home XDG_DATA_HOME=$work/home/data XDG_CONFIG_HOME=$work/home/config
export QT_QPA_PLATFORM=offscreen OMP_WAIT_POLICY=PASSIVE
mkdir -p "$HOME"
db=$work/stories.db
model=$root/resources/models/baton-mini
gen_story=$("$cli" --db "$db" story new --title Generated --model "$model")
typed_story=$("$cli" --db "$db" story new --title Typed)
: >"$work/gen.prev"
: >"$work/typed.prev"
: >"$work/side"

declare -A kills=() failures=() finished=()
fail() { # kind, what
  failures[$1]=$((${failures[$1]:-0} + 1))
  echo "iteration $i ($1): $2" >&2
}

# Sleeps a random time in [lo, hi) seconds (tenths).
nap() { sleep "$(awk -v lo="$1" -v hi="$2" -v r="$RANDOM" 'BEGIN { printf "%.1f", lo + (hi - lo) * r / 32768 }')"; }

# Starts a command in the background, kills it with -9 after a random nap (unless it
# ended first), and records which.
kill_after() { # kind lo hi command...
  local kind=$1 lo=$2 hi=$3
  shift 3
  "$@" >"$work/$kind.out" 2>&1 &
  local pid=$!
  nap "$lo" "$hi"
  if kill -9 "$pid" 2>/dev/null; then
    kills[$kind]=$((${kills[$kind]:-0} + 1))
    wait "$pid" 2>/dev/null || true
    return 0
  fi
  local rc=0
  wait "$pid" || rc=$?
  finished[$kind]=$((${finished[$kind]:-0} + 1))
  return "$rc"
}

integrity() { # kind
  local r
  r=$(sqlite3 "$db" 'PRAGMA integrity_check' 2>&1 || true)
  [[ $r == ok ]] || fail "$1" "integrity_check: $r"
}

# The story's text now must begin with the text exported after the previous kill.
prefix() { # kind story previous-export
  local now=$work/$1.now
  if ! "$cli" --db "$db" story export "$2" --format txt --output "$now" >/dev/null 2>&1; then
    fail "$1" "export failed"
    return
  fi
  local size
  size=$(stat -c %s "$3")
  cmp -s -n "$size" "$3" "$now" || fail "$1" "the text exported before is no longer a prefix"
  mv "$now" "$3"
}

run=$work/run
train_args=(train --out "$run" --base "$model" --corpus "$shared/corpus/books/austen-emma.txt"
  --steps 100 --window 32 --bptt-windows 2 --batch 2 --checkpoint-every 2 --keep-checkpoints 2
  --validate-every 0 --threads 1)
# Every sentence the app reported saved must be in the typed story.
typed_saved() { # kind
  integrity "$1"
  prefix typed "$typed_story" "$work/typed.prev"
  while read -r s; do
    grep -qF "Sentence $s was typed." "$work/typed.prev" || fail "$1" "saved sentence $s is lost"
  done <"$work/side"
}

for ((i = 1; i <= n; i++)); do
  case $((i % 4)) in
  0)
    kill_after generate 0.3 3.0 "$cli" --db "$db" story generate "$gen_story" --max-tokens 4000 \
      --threads 1 || fail generate "story generate failed: $(tail -n 2 "$work/generate.out")"
    integrity generate
    prefix generate "$gen_story" "$work/gen.prev"
    ;;
  1)
    if [[ -f $run/run.json ]]; then
      args=(train --out "$run" --resume --threads 1)
    else
      args=("${train_args[@]}")
    fi
    if kill_after train 1.0 6.0 "$cli" "${args[@]}"; then
      # Finished (the run completed) or killed: either way the next start must work.
      if [[ -f $run/model/config.json ]]; then rm -rf "$run"; fi
    else
      fail train "the run did not start or resume: $(tail -n 2 "$work/train.out")"
      rm -rf "$run"
    fi
    ;;
  2)
    kill_after app 1.0 5.0 "$typist" "$db" "$typed_story" "$work/side" ||
      fail app "the app exited: $(tail -n 2 "$work/app.out")"
    typed_saved app
    ;;
  3)
    "$typist" "$db" "$typed_story" "$work/side" "$model" >"$work/shared-app.out" 2>&1 &
    app=$!
    nap 1.0 2.0
    "$cli" --db "$db" story list >/dev/null 2>&1 || fail shared "story list failed beside the app"
    "$cli" --db "$db" story generate "$gen_story" --max-tokens 40 --threads 1 >/dev/null \
      2>"$work/shared.cli" || fail shared "story generate failed: $(tail -n 2 "$work/shared.cli")"
    prefix shared "$gen_story" "$work/gen.prev"
    kill_after shared 0.3 2.0 "$cli" --db "$db" story generate "$gen_story" --max-tokens 400 \
      --threads 1 || fail shared "story generate failed: $(tail -n 2 "$work/shared.out")"
    nap 0.5 2.0
    if kill -9 "$app" 2>/dev/null; then
      wait "$app" 2>/dev/null || true
    else
      fail shared "the app exited: $(tail -n 2 "$work/shared-app.out")"
    fi
    prefix shared "$gen_story" "$work/gen.prev"
    typed_saved shared
    ;;
  esac
done

status=0
for kind in generate train app shared; do
  echo "kill9 kind=$kind kills=${kills[$kind]:-0} finished_before_kill=${finished[$kind]:-0}" \
    "failures=${failures[$kind]:-0}"
  ((${failures[$kind]:-0} == 0)) || status=1
done
echo "kill9 typed_sentences_saved=$(wc -l <"$work/side") story_bytes=$(stat -c %s "$work/gen.prev")"
exit $status
