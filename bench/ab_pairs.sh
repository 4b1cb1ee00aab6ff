#!/usr/bin/env bash
# Speed gate of an engine refactor: alternates two workbench-cli builds (before, after) for N
# pairs of `bench` runs on the same model and threads, and prints each figure's median per build,
# the after/before ratio of the medians and the spread (min–max) of the pairwise ratios.
#   bench/ab_pairs.sh BEFORE_CLI AFTER_CLI [pairs=5] [model] [threads=2]
set -euo pipefail
before=$1 after=$2 pairs=${3:-5}
model=${4:-$(cd "$(dirname "$0")/.." && pwd)/models/SmolLM2-135M-Instruct.Q4_1.gguf}
threads=${5:-2}
out=$(mktemp -d)
for i in $(seq 1 "$pairs"); do
  for side in before after; do
    cli=$before; [ "$side" = after ] && cli=$after
    "$cli" bench -m "$model" -t "$threads" -r 2 --json 2>/dev/null > "$out/$side-$i-pptg.json"
    "$cli" bench -m "$model" -t "$threads" -r 1 -p 128 -n 32 -b 1,4,16 --json 2>/dev/null > "$out/$side-$i-sweep.json"
  done
done
python3 - "$out" "$pairs" <<'PY'
import json, statistics, sys
out, pairs = sys.argv[1], int(sys.argv[2])
def figures(side, i):
    f = {}
    for r in json.load(open(f"{out}/{side}-{i}-pptg.json")):
        f[r["test"] + " t/s"] = r["avg_ts"]
    for r in json.load(open(f"{out}/{side}-{i}-sweep.json")):
        f[f"batch {r['batch']} {r['test']} t/s"] = r["avg_ts"]
    return f
runs = {s: [figures(s, i) for i in range(1, pairs + 1)] for s in ("before", "after")}
print(f"{'figure':24} {'before':>10} {'after':>10} {'ratio':>7}  pairwise ratio range ({pairs} pairs)")
for k in runs["before"][0]:
    b = [r[k] for r in runs["before"]]; a = [r[k] for r in runs["after"]]
    ratios = [x / y for x, y in zip(a, b)]
    print(f"{k:24} {statistics.median(b):10.1f} {statistics.median(a):10.1f} {statistics.median(a)/statistics.median(b):7.3f}  {min(ratios):.3f}–{max(ratios):.3f}")
PY
