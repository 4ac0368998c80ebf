#!/usr/bin/env python3
"""Aggregates the research runs of tools/baton_mini/recipe.sh across paired seeds.

    tools/baton_mini/aggregate.py [RESULTS_DIR]     (default: ~/baton-mini-v2-runs/results)

Reads the JSON that `baton-cli eval --json` and `baton-cli probe --json` wrote
(eval-tT-NAME-sSEED.json, probe-NAME-sSEED.json) and prints Markdown tables:

- eval: for every comparison of one run (the true state against an ablation, the
  recurrent model against its baseline twin of the same seed), the per-seed paired
  difference of mean NLL (nats per token, a minus b; negative: a is better), then the
  mean over seeds +- its standard error (the spread of the paired difference across
  seeds, divided by sqrt(n)), overall and by window-position band;
- variants: every design variant (tT-NAME) against the reference recurrent run of the
  same T (tT-recurrent), seed by seed: (variant - its baseline twin) minus (reference -
  the same twin), i.e. variant - reference, with the mean over seeds +- its standard
  error;
- probe: accuracy by distance and state source, per seed and mean +- standard error.

No numbers are computed anywhere else: the README's tables are this script's output.
"""
import glob
import json
import math
import os
import re
import sys
from collections import defaultdict


def mean_se(values):
    n = len(values)
    if n == 0:
        return float("nan"), float("nan")
    m = sum(values) / n
    if n < 2:
        return m, float("nan")
    var = sum((v - m) ** 2 for v in values) / (n - 1)
    return m, math.sqrt(var / n)


def fmt(x, digits=4):
    return "n/a" if x != x else f"{x:+.{digits}f}"


def fmt_se(se, digits=4):
    # a single seed has no spread to estimate: n/a, not nan
    return "n/a" if se != se else f"{abs(se):.{digits}f}"


def eval_data(results):
    # experiment (tT-NAME) -> (a, b, T, o) -> band -> seed -> mean difference
    data = defaultdict(lambda: defaultdict(lambda: defaultdict(dict)))
    for path in sorted(glob.glob(os.path.join(results, "eval-t*-s*.json"))):
        m = re.match(r"eval-(t\d+-.+)-s(\d+)\.json$", os.path.basename(path))
        if not m:
            continue
        experiment, seed = m.group(1), int(m.group(2))
        with open(path, encoding="utf-8") as f:
            out = json.load(f)
        for p in out.get("paired", []):
            key = (p["a"], p["b"], p["window"], p["overlap"])
            data[experiment][key]["all"][seed] = p["difference"]["mean"]
            for band in p.get("bands", []):
                data[experiment][key][band["positions"]][seed] = band["mean"]
    return data


def eval_tables(data):
    lines = []
    for experiment in sorted(data):
        lines.append(f"### {experiment}\n")
        lines.append("| a - b | T | o | positions | seeds | per seed | mean +- SE | mean / SE |")
        lines.append("|---|---|---|---|---|---|---|---|")
        for key, bands in data[experiment].items():
            a, b, window, overlap = key
            for band, seeds in bands.items():
                values = [seeds[s] for s in sorted(seeds)]
                m, se = mean_se(values)
                ratio = m / se if se and se == se and se > 0 else float("nan")
                per_seed = ", ".join(f"s{s} {seeds[s]:+.4f}" for s in sorted(seeds))
                lines.append(
                    f"| {a} - {b} | {window} | {overlap} | {band} | {len(values)} | {per_seed} "
                    f"| {fmt(m)} +- {fmt_se(se)} | {fmt(ratio, 1)} |"
                )
        lines.append("")
    return lines


def variant_tables(data):
    lines = []
    for experiment in sorted(data):
        t, _, name = experiment.partition("-")
        reference = data.get(f"{t}-recurrent")
        if name == "recurrent" or reference is None:
            continue
        rows = []
        for key, bands in data[experiment].items():
            a, b, window, overlap = key
            if a != "a:on" or b != "b" or key not in reference:
                continue
            for band, seeds in bands.items():
                ref = reference[key].get(band, {})
                common = sorted(set(seeds) & set(ref))
                values = [seeds[s] - ref[s] for s in common]
                if not values:
                    continue
                m, se = mean_se(values)
                per_seed = ", ".join(f"s{s} {seeds[s] - ref[s]:+.4f}" for s in common)
                rows.append(
                    f"| {experiment} - {t}-recurrent | {window} | {overlap} | {band} "
                    f"| {len(values)} | {per_seed} | {fmt(m)} +- {fmt_se(se)} |"
                )
        if rows:
            lines.append(f"### variant {experiment} - reference {t}-recurrent\n")
            lines.append("| variant - reference | T | o | positions | seeds | per seed | mean +- SE |")
            lines.append("|---|---|---|---|---|---|---|")
            lines += rows
            lines.append("")
    return lines


def probe_tables(results):
    # run -> (role, state, distance) -> seed -> accuracy
    data = defaultdict(lambda: defaultdict(dict))
    chance = None
    for path in sorted(glob.glob(os.path.join(results, "probe-*-s*.json"))):
        m = re.match(r"probe-(.+)-s(\d+)\.json$", os.path.basename(path))
        if not m:
            continue
        run, seed = m.group(1), int(m.group(2))
        with open(path, encoding="utf-8") as f:
            out = json.load(f)
        chance = out.get("chance", chance)
        for model in out.get("models", []):
            for cell in model.get("results", []):
                key = (model["role"], cell["state"], cell["distance"])
                data[run][key][seed] = cell["accuracy"]
    lines = []
    for run in sorted(data):
        lines.append(f"### probe {run} (chance {chance})\n")
        lines.append("| model | state | distance | seeds | per seed | mean +- SE |")
        lines.append("|---|---|---|---|---|---|")
        for key in sorted(data[run], key=lambda k: (k[0], k[1], k[2])):
            seeds = data[run][key]
            values = [seeds[s] for s in sorted(seeds)]
            m, se = mean_se(values)
            per_seed = ", ".join(f"s{s} {seeds[s]:.3f}" for s in sorted(seeds))
            lines.append(
                f"| {key[0]} | {key[1]} | {key[2]} | {len(values)} | {per_seed} "
                f"| {m:.3f} +- {fmt_se(se, 3)} |"
            )
        lines.append("")
    return lines


def main():
    results = sys.argv[1] if len(sys.argv) > 1 else os.path.expanduser("~/baton-mini-v2-runs/results")
    if not os.path.isdir(results):
        print(f"error: {results} is not a folder", file=sys.stderr)
        return 1
    data = eval_data(results)
    print("\n".join(eval_tables(data) + variant_tables(data) + probe_tables(results)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
