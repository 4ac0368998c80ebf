#!/usr/bin/env bash
# Tokenizes the library for tools/gpu/pretrain.py: run it ON THE BUILD MACHINE (it needs
# a working baton-cli); the GPU machine then needs only Python + torch.
#
#   tools/gpu/prepare_library.sh [--model DIR] [--corpus PATH] [--val-works FILE]
#                                [--part-mib N] [--store DIR] [CARRY_DIR]
#
# The tokens are exactly the ones Baton's trainer trains on: a one-step
# `baton-cli train --mode baseline` from --model on the library writes its token store
# (the library's shards read as they ship, every work unwrapped), with the validation
# works taken out and the check that no 256-token stretch of them, of Pride and Prejudice
# or of Northanger Abbey is in the training stream (it stops the run otherwise). The store
# is kept in STORE_RUN, so running this again (another part size, say) reuses it.
# tools/gpu/library_parts.py then writes CARRY_DIR/library/: part-NN.tokens.xz (works
# in a fixed random order, about --part-mib MiB each), val.tokens.xz, tokenizer.model,
# meta.json, SHA256SUMS. README.md ("Library data") has the plan that carries them.
#
#   --model DIR      a model folder whose tokenizer the ids belong to (default:
#                    resources/models/baton-mini-baseline)
#   --corpus PATH    the library (default: ../shared/corpus/library)
#   --val-works FILE (default: tools/library/validation-works.txt)
#   --part-mib N     compressed size of a part (default: 10)
#   --store DIR      the token store of a run on the same library with the same tokenizer
#                    (its RUN/data): its pieces are used, and only what is missing is
#                    tokenized (each piece's identity is checked, so a wrong one is rebuilt;
#                    pieces of other corpora in it are left out of the parts)
#
# Environment: BATON_CLI (default build/app/cli/baton-cli), BATON_SHARED (default
# ../shared beside the checkout), PYTHON (default /usr/bin/python3; stdlib only),
# THREADS (default: all cores), STORE_RUN (default ~/.cache/baton/gpu-library-run).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cli=${BATON_CLI:-$root/build/app/cli/baton-cli}
shared=${BATON_SHARED:-$root/../shared}
py=${PYTHON:-/usr/bin/python3}
threads=${THREADS:-0}
store_run=${STORE_RUN:-$HOME/.cache/baton/gpu-library-run}
model=$root/resources/models/baton-mini-baseline
corpus=$shared/corpus/library
val_works=$root/tools/library/validation-works.txt
part_mib=10
store=""
carry=$root/gpu-carry
while (($#)); do
  case $1 in
    --model) model=$2; shift 2 ;;
    --corpus) corpus=$2; shift 2 ;;
    --val-works) val_works=$2; shift 2 ;;
    --part-mib) part_mib=$2; shift 2 ;;
    --store) store=$(realpath "$2"); shift 2 ;;
    -*) echo "error: unknown option $1" >&2; exit 2 ;;
    *) carry=$1; shift ;;
  esac
done
books=$shared/corpus/books
[[ -x $cli ]] || { echo "error: $cli not found or not executable (set BATON_CLI)" >&2; exit 1; }
[[ -e $corpus ]] || { echo "error: $corpus not found" >&2; exit 1; }
[[ -f $model/config.json && -f $model/tokenizer.model ]] ||
  { echo "error: $model is not a model folder with a tokenizer.model" >&2; exit 1; }

# The store belongs to one tokenizer and one corpus: another pair starts afresh.
key=$(cat "$model/tokenizer.model" <(realpath "$corpus") "$val_works" | sha256sum | cut -c1-16)
[[ -f $store_run/key && $(cat "$store_run/key") == "$key" ]] || rm -rf "$store_run"
mkdir -p "$store_run/run"
echo "$key" >"$store_run/key"
if [[ -n $store && ! -e $store_run/run/data ]]; then
  [[ -d $store ]] || { echo "error: $store is not a folder" >&2; exit 1; }
  ln -s "$store" "$store_run/run/data"
fi

echo "tokenizing $corpus with $cli (one baseline training step; the token store is what we keep)"
t0=$SECONDS
rm -rf "$store_run/run/checkpoints" "$store_run/run/model" "$store_run/run/run.json"
held_out=("$books/austen-pride-and-prejudice.txt" "$books/austen-northanger-abbey.txt")
nice "$cli" train --base "$model" --mode baseline --corpus "$corpus" --val-works "$val_works" \
  --held-out "${held_out[0]}" --held-out "${held_out[1]}" \
  --window 128 --overlap 0 --bptt-windows 1 --batch 1 --steps 1 --lr 1e-9 --warmup 1 \
  --validate-every 0 --val-tokens 128 --checkpoint-every 1000000 --keep-checkpoints 1 \
  --save-dtype f16 --threads "$threads" --out "$store_run/run" >"$store_run/train.log" 2>&1 ||
  { cat "$store_run/train.log" >&2; echo "error: baton-cli train failed" >&2; exit 1; }
grep -m1 '^training on' "$store_run/train.log" || true
echo "tokenized in $((SECONDS - t0)) s"

nice "$py" "$root/tools/gpu/library_parts.py" "$store_run/run/data" "$carry/library" \
  --corpus "$corpus" --val-works "$val_works" --model "$model" \
  --held-out "${held_out[0]}" --held-out "${held_out[1]}" \
  --part-mib "$part_mib" --jobs "$(nproc)"
(cd "$carry/library" && sha256sum --quiet -c SHA256SUMS)
du -sh "$carry/library"
