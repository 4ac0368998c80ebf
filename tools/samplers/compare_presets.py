#!/usr/bin/env python3
"""Repetition and variety of two sampler presets on baton-mini, paired by seed.

For each of the models README's three sample prompts and each seed, generates 200
tokens with the app's old default preset (Balanced: temperature 0.8, top-p 0.95,
repetition penalty 1.1) and with Min-p + DRY (temperature 1.0, min-p 0.1, DRY 0.8),
then measures the generated words: the share of word 4-grams that already occurred
earlier in the same sample (repetition; lower is better), and distinct-1 and distinct-2
(unique words and word pairs over all of them; higher is more varied). Prints one JSON
line per sample and the means, and the first seed's samples in full.

    tools/samplers/compare_presets.py [BATON_CLI] [MODEL] [SEEDS]
"""
import json
import subprocess
import sys

cli = sys.argv[1] if len(sys.argv) > 1 else "build/app/cli/baton-cli"
model = sys.argv[2] if len(sys.argv) > 2 else "resources/models/baton-mini"
seeds = int(sys.argv[3]) if len(sys.argv) > 3 else 5
prompts = [
    "It is a truth universally acknowledged",
    "The storm had not yet broken when Elinor",
    "My dear Emma, said Mr. Knightley,",
]
presets = {
    "balanced": ["--temperature", "0.8", "--top-p", "0.95", "--repetition-penalty", "1.1"],
    "min_p_dry": ["--temperature", "1.0", "--top-p", "1", "--repetition-penalty", "1",
                  "--min-p", "0.1", "--dry-multiplier", "0.8"],
}


def ngrams(words, n):
    return [tuple(words[i:i + n]) for i in range(len(words) - n + 1)]


def measure(text):
    words = text.split()
    grams4 = ngrams(words, 4)
    seen, repeated = set(), 0
    for g in grams4:
        repeated += g in seen
        seen.add(g)
    distinct = lambda n: len(set(ngrams(words, n))) / max(1, len(ngrams(words, n)))
    return {"words": len(words), "repeated_4grams": repeated / max(1, len(grams4)),
            "distinct_1": distinct(1), "distinct_2": distinct(2)}


results = {name: [] for name in presets}
shown = {}
for prompt in prompts:
    for seed in range(1, seeds + 1):
        for name, flags in presets.items():
            out = subprocess.run(
                [cli, "generate", "--model", model, "--prompt", prompt, "--max-tokens", "200",
                 "--seed", str(seed), *flags],
                capture_output=True, text=True, check=True).stdout
            m = measure(out)
            results[name].append(m)
            print(json.dumps({"preset": name, "prompt": prompt, "seed": seed, **m}))
            if seed == 1:
                shown[(prompt, name)] = out
for name, rows in results.items():
    mean = {k: sum(r[k] for r in rows) / len(rows) for k in rows[0]}
    print(json.dumps({"preset": name, "samples": len(rows), "mean": mean}))
wins = sum(a["repeated_4grams"] > b["repeated_4grams"]
           for a, b in zip(results["balanced"], results["min_p_dry"]))
print(json.dumps({"pairs": len(results["balanced"]),
                  "min_p_dry_repeats_less": wins}))
for (prompt, name), text in shown.items():
    print(f"\n--- {name}, seed 1: {prompt} ---\n{text.strip()}")
