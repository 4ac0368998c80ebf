#!/usr/bin/env python3
"""The tables of the synthetic memory task from its reports.

    tools/baton_mini/synthetic_table.py [RESULTS_DIR] [PREFIX]
                                        (default: ~/baton-mini-v2-runs/results)

Reads synthetic-NAME-sSEED.json (the reports `baton-cli probe --synthetic --json`
writes; recipe.sh's `synthetic` stage) and prints Markdown. With PREFIX, only the
designs named PREFIX-NAME are read, as NAME (the GPU study's g4-pool1, g4-baseline, ...:
tools/gpu/synthetic-jobs.txt):

- accuracy by distance for every design, state on (recurrent) or none (baseline): the
  mean over seeds +- its standard error (the spread across seeds over sqrt(n)), and the
  per-seed values; then the same with the state switched off;
- cost: the network's and the module's parameters, training and evaluation tokens per
  second (mean over seeds; runs of one comparison ran two at a time, one thread each)
  and the time per token relative to the baseline;
- what the state carries: state on minus state off within each run, mean over seeds;
- paired by seed, each design's accuracy at every distance minus that of the reference
  design (REFERENCE, default "pool1").

No numbers are computed anywhere else: the README's tables are this script's output.
"""
import glob
import json
import os
import re
import sys
from collections import defaultdict

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from aggregate import mean_se  # noqa: E402

REFERENCE = os.environ.get("REFERENCE", "pool1")


def cell(values, signed=False):
    m, se = mean_se(values)
    if m != m:
        return "n/a"
    body = f"{m:+.3f}" if signed else f"{m:.3f}"
    if se == se:
        body += f" +- {se:.3f}"
    return body


def load(results, prefix=""):
    runs = defaultdict(dict)  # design -> seed -> report
    for path in sorted(glob.glob(os.path.join(results, "synthetic-*-s*.json"))):
        m = re.match(r"synthetic-(.+)-s(\d+)\.json$", os.path.basename(path))
        if not m:
            continue
        design = m.group(1)
        if prefix:
            if not design.startswith(prefix + "-"):
                continue
            design = design[len(prefix) + 1:]
        with open(path, encoding="utf-8") as f:
            runs[design][int(m.group(2))] = json.load(f)
    return runs


def accuracy(report, distance, state):
    for c in report["evaluation"]["results"]:
        if c["distance"] == distance and c["state"] == state:
            return c["accuracy"]
    return None


def main():
    results = sys.argv[1] if len(sys.argv) > 1 else os.path.expanduser("~/baton-mini-v2-runs/results")
    prefix = sys.argv[2] if len(sys.argv) > 2 else ""
    runs = load(results, prefix)
    if not runs:
        sys.exit(f"no synthetic-{prefix + '-' if prefix else ''}*-sN.json in {results}")
    order = sorted(runs, key=lambda d: (d != "baseline", d != REFERENCE, d))
    any_report = next(iter(next(iter(runs.values())).values()))
    distances = sorted({c["distance"] for c in any_report["evaluation"]["results"]})
    chance = any_report["evaluation"]["chance"]
    print(f"Chance: {chance:.4f}. Accuracy by distance, mean over seeds +- standard error "
          f"[per seed]:\n")

    for label, state_of in (("state on (baseline: none)", lambda r: "on" if r["recurrence"] else "none"),
                            ("state off", lambda r: "off" if r["recurrence"] else None)):
        print(f"### {label}\n")
        print("| design | seeds | " + " | ".join(f"d = {d}" for d in distances) + " |")
        print("|---|---|" + "---|" * len(distances))
        for design in order:
            seeds = sorted(runs[design])
            state = state_of(runs[design][seeds[0]])
            if state is None:
                continue
            row = [design, " ".join(str(s) for s in seeds)]
            for d in distances:
                vals = [accuracy(runs[design][s], d, state) for s in seeds]
                vals = [v for v in vals if v is not None]
                per = ", ".join(f"{v:.3f}" for v in vals)
                row.append(f"{cell(vals)} [{per}]")
            print("| " + " | ".join(row) + " |")
        print()

    print("### cost\n")
    print("| design | description | parameters (network + module) | training tokens/s | "
          "evaluation tokens/s | training time per token / baseline's | final training loss |")
    print("|---|---|---|---|---|---|---|")
    base_speed = None
    if "baseline" in runs:
        base_speed = mean_se([r["training"]["tokens_per_s"] for r in runs["baseline"].values()])[0]
    for design in order:
        reports = list(runs[design].values())
        r0 = reports[0]
        speed = mean_se([r["training"]["tokens_per_s"] for r in reports])[0]
        ev = mean_se([r["evaluation"]["tokens_per_s"] for r in reports])[0]
        loss = mean_se([r["training"]["final_loss"] for r in reports])
        rel = f"{base_speed / speed:.2f}" if base_speed else "n/a"
        desc = r0["recurrence"]["description"] if r0["recurrence"] else "no module"
        print(f"| {design} | {desc} | {r0['model']['parameters']:,} + "
              f"{r0['model']['module_parameters']:,} | {speed:,.0f} | {ev:,.0f} | {rel} | "
              f"{cell(loss[0:1])} |")
    print()

    print("### what the state carries: state on - state off, paired within each run\n")
    print("| design | " + " | ".join(f"d = {d}" for d in distances) + " |")
    print("|---|" + "---|" * len(distances))
    for design in order:
        seeds = sorted(runs[design])
        if not runs[design][seeds[0]]["recurrence"]:
            continue
        row = [design]
        for d in distances:
            diffs = [accuracy(runs[design][s], d, "on") - accuracy(runs[design][s], d, "off")
                     for s in seeds]
            row.append(cell(diffs, signed=True))
        print("| " + " | ".join(row) + " |")
    print()

    if REFERENCE in runs:
        print(f"### paired by seed: design - {REFERENCE} (accuracy, state on)\n")
        print("| design | " + " | ".join(f"d = {d}" for d in distances) + " |")
        print("|---|" + "---|" * len(distances))
        ref = runs[REFERENCE]
        for design in order:
            if design == REFERENCE:
                continue
            seeds = sorted(set(runs[design]) & set(ref))
            if not seeds:
                continue
            state = "on" if runs[design][seeds[0]]["recurrence"] else "none"
            row = [design]
            for d in distances:
                diffs = [accuracy(runs[design][s], d, state) - accuracy(ref[s], d, "on") for s in seeds]
                row.append(cell(diffs, signed=True))
            print("| " + " | ".join(row) + " |")


if __name__ == "__main__":
    main()
