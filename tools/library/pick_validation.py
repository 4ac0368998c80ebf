#!/usr/bin/env python3
"""Picks the library's fixed validation works from MANIFEST.tsv and prints them as
`baton-cli train --val-works` reads them (tools/library/validation-works.txt).

The rule, fixed once so that every model is validated on the same works: the manifest's
works in its order (by shard, then path), cut into 16 equal stretches; from the middle of
each, the first work of 150 kB to 1 MB of text that is not a collection (no "Stories",
"Tales", "Volume", "Works", "Writers" or "Anthology" in its name: anthologies reprint
pieces the library also holds alone, and `baton-cli train` refuses a corpus holding 256
tokens of a validation work in a row). Austen is not in the library; the test book
(Pride and Prejudice) is checked separately with --held-out.

    tools/library/pick_validation.py ../shared/corpus/library/MANIFEST.tsv
"""
import csv
import sys

COUNT = 16
LOW, HIGH = 150_000, 1_000_000
COLLECTION = ("stories", "tales", "volume", "works", "writers", "anthology")


def eligible(row):
    name = row["file"].lower()
    return LOW <= int(row["bytes"]) <= HIGH and not any(w in name for w in COLLECTION)


def main(manifest):
    with open(manifest, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    picked = []
    for k in range(COUNT):
        i = int((k + 0.5) * len(rows) / COUNT)
        while i < len(rows) and not eligible(rows[i]):
            i += 1
        if i < len(rows):
            picked.append(rows[i])
    print("# The library's validation works: never trained on, the same for every model.")
    print("# Made by tools/library/pick_validation.py from MANIFEST.tsv (its rule is there).")
    total = 0
    for r in picked:
        total += int(r["bytes"])
        print(f'{r["shard"]}/{r["file"]}')
    print(f"# {len(picked)} works, {total:,} bytes of text", file=sys.stderr)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "../shared/corpus/library/MANIFEST.tsv")
