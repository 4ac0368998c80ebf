#!/usr/bin/env python3
"""Cuts a token store of the library into parts for the GPU machine (stdlib only).

    library_parts.py STORE OUT --corpus PATH --val-works FILE --model DIR
                     [--held-out PATH]... [--part-mib 10] [--seed 1] [--jobs 2]

STORE is the data folder of a `baton-cli train` run on the library (its piece-*.tok
files, tools/gpu/prepare_library.sh makes it); the run checked that no stretch of the
validation works or of the test books (its --held-out PATHs, which the store also holds,
tokenized for that check: give them here too, to be left out) is in its training stream.
Only the documents of --corpus are taken (a store folder may also hold other runs'
pieces: another corpus, the held-out texts); a work found in two pieces (the same
library read through another path) is taken once, and must have the same ids. OUT
receives:

  part-NN.tokens.xz  training works in a fixed random order (--seed), packed into parts
                     of about --part-mib MiB each once compressed, so that any first k
                     parts are a sample of the whole library; uint16 little-endian ids
  val.tokens.xz      the validation works (tools/library/validation-works.txt)
  tokenizer.model    the tokenizer the ids belong to (--model's)
  meta.json          format 2: vocabulary, each part's tokens, documents and sha256
                     (before and after compression), the validation set's likewise
  SHA256SUMS         every file above (`sha256sum -c SHA256SUMS`)

tools/gpu/pretrain.py trains on whichever parts are present and verifies each one.
"""
import argparse
import hashlib
import json
import os
import random
import shutil
import sys
from concurrent.futures import ProcessPoolExecutor

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from token_pieces import pack, read_store, write_xz  # noqa: E402

# Bytes per token of uint16 ids after xz: the first part is packed at this guess, then
# the others at what the first one measured (0.87 with an 8k vocabulary, 0.97 with 16k).
XZ_BYTES_PER_TOKEN = 0.9


def read_works(path):
    works = [l.strip() for l in open(path, encoding="utf-8")]
    return [w for w in works if w and not w.startswith("#")]


def names_work(name, work):  # held_out.cpp's namesWork
    return name == work or (name.endswith(work) and name[-len(work) - 1] == "/")


def short(name):
    """A document's name from the library's shard on (SHARD/MEMBER), else its file name."""
    parts = name.split("/")
    for i, p in enumerate(parts):
        if p.endswith(".tar.xz"):
            return "/".join(parts[i:])
    return parts[-1]


def compress(job):
    raw, path, preset = job
    return write_xz(raw, path, preset)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("store")
    p.add_argument("out")
    p.add_argument("--corpus", required=True, help="the library the store was made from")
    p.add_argument("--val-works", required=True)
    p.add_argument("--model", required=True, help="the model folder whose tokenizer made the store")
    p.add_argument("--held-out", action="append", default=[],
                   help="a held-out text of the run, as it was given to it (left out)")
    p.add_argument("--part-mib", type=float, default=10)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--preset", type=int, default=9, help="xz preset")
    a = p.parse_args()

    config = json.load(open(os.path.join(a.model, "config.json")))
    vocab = int(config["vocab_size"])
    works = read_works(a.val_works)
    train, val = [], {}
    held_out = set(a.held_out)
    corpus = os.path.realpath(a.corpus)
    shards = {n for n in (os.listdir(corpus) if os.path.isdir(corpus) else [os.path.basename(corpus)])
              if n.endswith((".tar.xz", ".txz", ".tar"))}

    def in_corpus(name):
        return name.split("/", 1)[0] in shards or os.path.realpath(name).startswith(corpus + os.sep)

    seen = {}
    for docs in read_store(a.store):
        for name, ids in docs:
            if name in held_out or not in_corpus(name):
                continue
            if name in seen:
                if seen[name] != ids:
                    sys.exit(f"error: {name} is in the store twice with different ids")
                continue
            seen[name] = ids
            if os.path.basename(name) in {os.path.basename(h) for h in held_out}:
                sys.exit(f"error: {name}: a held-out text is among the training documents")
            hit = [w for w in works if names_work(name, w)]
            if hit:
                val[hit[0]] = (name, ids)
            else:
                train.append((name, ids))
    missing = [w for w in works if w not in val]
    if missing:
        sys.exit(f"error: validation works not in the store: {missing}")
    if any("pride-and-prejudice" in n.lower() or "northanger-abbey" in n.lower() for n, _ in train):
        sys.exit("error: an Austen test or validation book is in the training documents")
    train.sort(key=lambda d: d[0])
    random.Random(a.seed).shuffle(train)

    def take(docs, tokens):
        """The first documents holding at least `tokens` tokens (at least one)."""
        n, i = 0, 0
        while i < len(docs) and (i == 0 or n < tokens):
            n += len(docs[i][1])
            i += 1
        return docs[:i], docs[i:]

    if os.path.isdir(a.out):
        shutil.rmtree(a.out)
    os.makedirs(a.out)
    target = a.part_mib * 2**20
    first, rest = take(train, int(target / XZ_BYTES_PER_TOKEN))
    raw, index = pack(first, vocab, short)
    entries = [compress((raw, os.path.join(a.out, "part-01.tokens.xz"), a.preset))]
    indexes = [index]
    measured = entries[0]["xz_bytes"] / max(1, entries[0]["tokens"])
    jobs = []
    while rest:
        group, rest = take(rest, int(target / measured))
        raw, index = pack(group, vocab, short)
        jobs.append((raw, os.path.join(a.out, "part-%02d.tokens.xz" % (len(indexes) + 1)), a.preset))
        indexes.append(index)
    raw, val_index = pack([val[w] for w in works], vocab, short)
    jobs.append((raw, os.path.join(a.out, "val.tokens.xz"), a.preset))
    with ProcessPoolExecutor(max_workers=max(1, a.jobs)) as pool:
        entries += list(pool.map(compress, jobs))
    del jobs
    parts = []
    for e, index in zip(entries[:-1], indexes):
        e.update(documents=len(index), docs=index)
        parts.append(e)
    val_entry = entries[-1]
    val_entry.update(documents=len(val_index), docs=val_index)

    tok = os.path.join(a.out, "tokenizer.model")
    shutil.copyfile(os.path.join(a.model, "tokenizer.model"), tok)
    meta = {
        "format": "baton-gpu-tokens", "format_version": 2,
        "dtype": "uint16-le", "compression": f"xz (python lzma, preset {a.preset})",
        "vocab_size": vocab, "bos_token_id": config.get("bos_token_id"),
        "eos_token_id": config.get("eos_token_id"),
        "tokenizer": "tokenizer.model",
        "tokenizer_sha256": hashlib.sha256(open(tok, "rb").read()).hexdigest(),
        "unwrapped": True, "order_seed": a.seed,
        "split": {"train": "the library's works but the validation works, in a random order",
                  "val": os.path.basename(a.val_works),
                  "test (never tokenized)": "austen-pride-and-prejudice"},
        "tokens": sum(e["tokens"] for e in parts), "parts": parts, "val": val_entry,
    }
    with open(os.path.join(a.out, "meta.json"), "w") as f:
        json.dump(meta, f, indent=1)
        f.write("\n")
    names = [e["file"] for e in parts] + ["val.tokens.xz", "tokenizer.model", "meta.json"]
    with open(os.path.join(a.out, "SHA256SUMS"), "w") as f:
        for name in names:
            h = hashlib.sha256(open(os.path.join(a.out, name), "rb").read()).hexdigest()
            f.write(f"{h}  {name}\n")
    total = 0
    for e in parts:
        total += e["tokens"]
        print(f"{e['file']}: {e['documents']} works, {e['tokens']:,} tokens, "
              f"{e['xz_bytes'] / 2**20:.1f} MiB; first parts together {total / 1e6:.1f} M tokens")
    print(f"val.tokens.xz: {val_entry['documents']} works, {val_entry['tokens']:,} tokens, "
          f"{val_entry['xz_bytes'] / 2**20:.2f} MiB")


if __name__ == "__main__":
    main()
