#!/usr/bin/env bash
# Tokenizes Baton's training corpus for tools/gpu/pretrain.py: run it ON THE BUILD
# MACHINE (it needs a working baton-cli); the GPU machine then needs only Python + torch.
#
#   tools/gpu/prepare_data.sh [CARRY_DIR]      (default CARRY_DIR: <repo>/gpu-carry)
#
# The tokens are exactly the ones Baton's trainer trains on: the script runs a one-step
# `baton-cli train --mode baseline` from baton-mini-baseline (same tokenizer as
# baton-mini) on the split of tools/baton_mini/recipe.sh and reads the token store the
# trainer writes (RUN/data/piece-*.tok, engine/src/core/training/token_store.h):
# documents are whole files, Gutenberg-stripped and unwrapped.
#   train = austen-emma, austen-mansfield-park, austen-sense-and-sensibility, kjv-bible,
#           every file in corpus/speeches
#   val   = austen-northanger-abbey
#   test  = austen-pride-and-prejudice: never read here.
#
# Writes CARRY_DIR/data/:
#   train.tokens.xz, val.tokens.xz  uint16 little-endian ids, documents concatenated,
#                                   compressed with Python's lzma module (xz format)
#   meta.json                       vocab size, counts, per-document name/offset/length,
#                                   sha256 of each uncompressed array and of the tokenizer,
#                                   bos/eos ids, tokenizer identity
#   tokenizer.model                 baton-mini's SentencePiece model (8000 pieces)
#   tokenizer-identity.json         the "tokenizer" field of baton-mini's baton.json (a
#                                   plain baseline folder must NOT carry a baton.json:
#                                   Baton reads one as an incomplete recurrent checkpoint)
#
# Environment: BATON_CLI (default build/app/cli/baton-cli), BATON_SHARED (default
# ../shared beside the checkout), PYTHON (default /usr/bin/python3; stdlib only),
# THREADS (default 2).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cli=${BATON_CLI:-$root/build/app/cli/baton-cli}
shared=${BATON_SHARED:-$root/../shared}
py=${PYTHON:-/usr/bin/python3}
threads=${THREADS:-2}
carry=${1:-$root/gpu-carry}
out=$carry/data
books=$shared/corpus/books
mini=$root/resources/models/baton-mini
base=$root/resources/models/baton-mini-baseline

[[ -x $cli ]] || { echo "error: $cli not found or not executable (set BATON_CLI)" >&2; exit 1; }
[[ -d $books && -d $shared/corpus/speeches ]] || { echo "error: corpus not found under $shared/corpus" >&2; exit 1; }
cmp -s "$mini/tokenizer.model" "$base/tokenizer.model" ||
  { echo "error: $base/tokenizer.model differs from $mini/tokenizer.model" >&2; exit 1; }

tmp=$(mktemp -d /tmp/baton-gpu-prep.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/split/train" "$tmp/split/val"
for b in austen-emma austen-mansfield-park austen-sense-and-sensibility kjv-bible; do
  ln -s "$(realpath "$books/$b.txt")" "$tmp/split/train/$b.txt"
done
ln -s "$(realpath "$shared/corpus/speeches")" "$tmp/split/train/speeches"
ln -s "$(realpath "$books/austen-northanger-abbey.txt")" "$tmp/split/val/austen-northanger-abbey.txt"

echo "tokenizing with $cli (one baseline training step; the token cache is what we keep)"
t0=$SECONDS
nice "$cli" train --base "$base" --mode baseline \
  --corpus "$tmp/split/train" --val "$tmp/split/val" \
  --window 128 --overlap 0 --bptt-windows 1 --batch 1 --steps 1 --lr 1e-9 --warmup 1 \
  --validate-every 0 --val-tokens 128 --checkpoint-every 1000000 --keep-checkpoints 1 \
  --save-dtype f16 --threads "$threads" --out "$tmp/run" >"$tmp/train.log" 2>&1 ||
  { cat "$tmp/train.log" >&2; echo "error: baton-cli train failed" >&2; exit 1; }
grep -m1 '^training on' "$tmp/train.log" || true
echo "tokenized in $((SECONDS - t0)) s"

rm -rf "$out"
mkdir -p "$out"
cp "$mini/tokenizer.model" "$out/tokenizer.model"
"$py" - "$tmp/run/data" "$tmp/split" "$out" "$mini" "$root/tools/gpu" <<'PY'
import hashlib, json, os, sys
cache_dir, split, out, mini, here = sys.argv[1:6]
sys.path.insert(0, here)
from token_pieces import pack, read_store, write_xz

sets = {}
for docs in read_store(cache_dir):
    names = [d[0] for d in docs]
    if any("pride-and-prejudice" in n for n in names):
        sys.exit("error: the test book was tokenized")
    key = "val" if all("/val/" in n for n in names) else "train"
    if key == "train" and any("/val/" in n for n in names):
        sys.exit("error: a piece holds both training and validation documents")
    sets.setdefault(key, []).extend(docs)
if set(sets) != {"train", "val"}:
    sys.exit("error: could not find both the training and the validation documents")

tok_bytes = open(os.path.join(out, "tokenizer.model"), "rb").read()
ident = json.load(open(os.path.join(mini, "baton.json")))["tokenizer"]
cfg = json.load(open(os.path.join(mini, "config.json")))
vocab = int(cfg["vocab_size"])
meta = {
    "format": "baton-gpu-tokens", "format_version": 1,
    "dtype": "uint16-le", "compression": "xz (python lzma, preset 9)",
    "vocab_size": vocab, "bos_token_id": cfg.get("bos_token_id"), "eos_token_id": cfg.get("eos_token_id"),
    "tokenizer": "tokenizer.model", "tokenizer_sha256": hashlib.sha256(tok_bytes).hexdigest(),
    "tokenizer_identity": ident, "unwrapped": True,
    "split": {"train": "austen-emma, austen-mansfield-park, austen-sense-and-sensibility, kjv-bible, speeches/*",
              "val": "austen-northanger-abbey", "test (never tokenized)": "austen-pride-and-prejudice"},
}
relative = lambda n: n[len(split) + 1:] if n.startswith(split + "/") else os.path.basename(n)
for key in ("train", "val"):
    raw, docs = pack(sets[key], vocab, relative)
    entry = write_xz(raw, os.path.join(out, f"{key}.tokens.xz"))
    entry.update(documents=len(docs), docs=docs)
    meta[key] = entry
    print(f"{key}: {len(docs)} documents, {entry['tokens']} tokens, {len(raw)} bytes raw, "
          f"{entry['xz_bytes']} bytes xz")
json.dump({"tokenizer": ident, "tokenizer_file": "tokenizer.model",
           "source": "resources/models/baton-mini/baton.json (tokenizer field only)"},
          open(os.path.join(out, "tokenizer-identity.json"), "w"), indent=2)
with open(os.path.join(out, "meta.json"), "w") as f:
    json.dump(meta, f, indent=1)
    f.write("\n")
PY
du -sh "$out"
ls -l "$out"
