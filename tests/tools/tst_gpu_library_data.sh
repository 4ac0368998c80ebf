#!/usr/bin/env bash
# tools/gpu/prepare_library.sh and library_parts.py on a small library: every training
# work lands in exactly one part with the ids Baton's trainer made of it, the
# validation works only in val.tokens.xz, the held-out books nowhere; every sha256 holds;
# a second run reuses the token store, as does one given it with --store; a validation
# work the library lacks is an error.
#
#   tst_gpu_library_data.sh BATON_CLI SHARED_DIR
set -euo pipefail
cli=$1
shared=$2
root=$(cd "$(dirname "$0")/../.." && pwd)
py=${PYTHON:-python3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# A library of one shard: twelve works cut from the King James Bible at blank lines.
"$py" - "$shared/corpus/books/kjv-bible.txt" "$tmp/lib/toy-01.tar.xz" <<'PY'
import io, os, sys, tarfile
text = open(sys.argv[1], encoding="utf-8").read()[200000:500000]
paras = text.split("\n\n")
works, cur = [], []
for p in paras:
    cur.append(p)
    if sum(map(len, cur)) > 20000:
        works.append("\n\n".join(cur))
        cur = []
os.makedirs(os.path.dirname(sys.argv[2]), exist_ok=True)
with tarfile.open(sys.argv[2], "w:xz") as t:
    for i, w in enumerate(works[:12]):
        data = w.encode()
        info = tarfile.TarInfo(f"set/w{i + 1:02d}.txt")
        info.size = len(data)
        t.addfile(info, io.BytesIO(data))
PY
printf '# two validation works\ntoy-01.tar.xz/set/w07.txt\ntoy-01.tar.xz/set/w03.txt\n' >"$tmp/val.txt"

prepare() {
  BATON_CLI=$cli BATON_SHARED=$shared STORE_RUN=$tmp/store THREADS=1 PYTHON=$py \
    "$root/tools/gpu/prepare_library.sh" --corpus "$tmp/lib" --val-works "$tmp/val.txt" "$@"
}
prepare --part-mib 0.01 "$tmp/carry" >"$tmp/first.log" 2>&1 || { cat "$tmp/first.log"; fail "prepare_library.sh"; }
cat "$tmp/first.log"
(cd "$tmp/carry/library" && sha256sum --quiet -c SHA256SUMS) || fail "SHA256SUMS"

"$py" - "$tmp/carry/library" "$tmp/store/run/data" "$root/tools/gpu" <<'PY'
import hashlib, json, lzma, os, sys
from array import array
out, store, here = sys.argv[1:]
sys.path.insert(0, here)
from token_pieces import read_store
meta = json.load(open(os.path.join(out, "meta.json")))
assert meta["format_version"] == 2 and meta["vocab_size"] == 8000, meta["format_version"]
stored = {name: ids for docs in read_store(store) for name, ids in docs}

def read(entry):
    xz = open(os.path.join(out, entry["file"]), "rb").read()
    assert hashlib.sha256(xz).hexdigest() == entry["xz_sha256"], entry["file"]
    raw = lzma.decompress(xz)
    assert hashlib.sha256(raw).hexdigest() == entry["sha256"], entry["file"]
    assert len(raw) == 2 * entry["tokens"], entry["file"]
    ids = array("H")
    ids.frombytes(raw)
    assert sum(d["length"] for d in entry["docs"]) == entry["tokens"]
    return {d["name"]: list(ids[d["offset"]:d["offset"] + d["length"]]) for d in entry["docs"]}

def same(name, ids):
    full = [n for n in stored if n == name or n.endswith("/" + name)]
    assert len(full) == 1, (name, full)
    assert ids == list(stored[full[0]]), f"{name}: ids differ from the token store"

assert len(meta["parts"]) >= 3, len(meta["parts"])
seen = []
for part in meta["parts"]:
    for name, ids in read(part).items():
        same(name, ids)
        seen.append(name)
want = {f"toy-01.tar.xz/set/w{i:02d}.txt" for i in range(1, 13)} - {
    "toy-01.tar.xz/set/w03.txt", "toy-01.tar.xz/set/w07.txt"}
assert sorted(seen) == sorted(want), sorted(seen)
assert seen != sorted(seen), "the works are not in a random order"
val = read(meta["val"])
assert list(val) == ["toy-01.tar.xz/set/w07.txt", "toy-01.tar.xz/set/w03.txt"], list(val)
for name, ids in val.items():
    same(name, ids)
assert meta["tokens"] == sum(p["tokens"] for p in meta["parts"])
assert not any("austen" in n for n in seen + list(val))
print(f"ok: {len(meta['parts'])} parts, {len(seen)} works, {meta['tokens']} tokens")
PY

# Again with larger parts: the token store is reused (its pieces are not written again).
before=$(stat -c '%n %Y' "$tmp"/store/run/data/piece-*.tok | sort)
prepare --part-mib 1 "$tmp/carry" >"$tmp/second.log" 2>&1 || { cat "$tmp/second.log"; fail "second run"; }
after=$(stat -c '%n %Y' "$tmp"/store/run/data/piece-*.tok | sort)
[[ $before == "$after" ]] || fail "the token store was built again"
n=$(ls "$tmp"/carry/library/part-*.tokens.xz | wc -l)
((n == 1)) || fail "one part of 1 MiB expected, found $n"

# --store: another run's store is used as it is (same pieces, same parts).
BATON_CLI=$cli BATON_SHARED=$shared STORE_RUN=$tmp/store2 THREADS=1 PYTHON=$py \
  "$root/tools/gpu/prepare_library.sh" --corpus "$tmp/lib" --val-works "$tmp/val.txt" \
  --part-mib 1 --store "$tmp/store/run/data" "$tmp/carry3" >"$tmp/store.log" 2>&1 ||
  { cat "$tmp/store.log"; fail "--store"; }
[[ $(stat -c '%n %Y' "$tmp"/store/run/data/piece-*.tok | sort) == "$after" ]] || fail "--store rebuilt a piece"
cmp "$tmp/carry/library/SHA256SUMS" "$tmp/carry3/library/SHA256SUMS" || fail "--store gave other parts"

# A store folder that also holds another run's piece (a book outside the library) and a
# library piece twice gives the same parts: only the library's works, each once.
mkdir -p "$tmp/other"
head -c 30000 "$shared/corpus/books/kjv-bible.txt" >"$tmp/other/outside.txt"
"$cli" train --base "$root/resources/models/baton-mini-baseline" --mode baseline \
  --corpus "$tmp/other" --val-fraction 0 --window 64 --bptt-windows 1 --batch 1 --steps 1 \
  --validate-every 0 --threads 1 --out "$tmp/other-run" >"$tmp/other.log" 2>&1 ||
  { cat "$tmp/other.log"; fail "the other run"; }
mixed=$tmp/mixed
mkdir -p "$mixed"
cp "$tmp"/store/run/data/piece-*.tok "$tmp"/other-run/data/piece-*.tok "$mixed/"
first=$(ls "$tmp"/store/run/data/piece-*.tok | head -1)
cp "$first" "$mixed/piece-0000000000000000.tok"
"$py" "$root/tools/gpu/library_parts.py" "$mixed" "$tmp/carry4/library" --corpus "$tmp/lib" \
  --val-works "$tmp/val.txt" --model "$root/resources/models/baton-mini-baseline" \
  --held-out "$shared/corpus/books/austen-pride-and-prejudice.txt" \
  --held-out "$shared/corpus/books/austen-northanger-abbey.txt" --part-mib 1 >/dev/null ||
  fail "library_parts.py on a mixed store"
cmp "$tmp/carry/library/SHA256SUMS" "$tmp/carry4/library/SHA256SUMS" || fail "a mixed store gave other parts"

# A validation work the library does not hold.
printf 'toy-01.tar.xz/set/w99.txt\n' >"$tmp/val.txt"
if prepare "$tmp/carry2" >"$tmp/third.log" 2>&1; then fail "a missing validation work was accepted"; fi
grep -q 'is not in the corpus' "$tmp/third.log" || { cat "$tmp/third.log"; fail "no clear error"; }
echo "PASS"
