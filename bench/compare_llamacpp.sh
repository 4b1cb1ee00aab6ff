#!/usr/bin/env bash
# Side-by-side speed against llama.cpp: runs `workbench-cli bench` and a llama-bench binary you
# built yourself, alternately (so both see the same machine load), on the same GGUF with the same
# threads, and prints each tool's median tokens/s per test and the ratio ours / llama.cpp.
#   bench/compare_llamacpp.sh LLAMA_BENCH_PATH [MODEL] [-t THREADS] [-p 512] [-n 128] [-d 0] [-r 5] [--rounds 3] [--kv-type T]
# -d N runs both tools' tests after N tokens already in the cache (llama-bench's depth).
# --kv-type T (q8_0, q4_0) stores K and V as T in both: llama-bench's -ctk T -ctv T -fa on (its
# quantized V needs flash attention; ours is one kernel for every type).
# It never builds llama.cpp (see docs/BENCHMARKS.md for how we built ours).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
[ $# -ge 1 ] || { echo "usage: $0 LLAMA_BENCH_PATH [MODEL] [-t N] [-p N] [-n N] [-d N] [-r N] [--rounds N] [--kv-type T]" >&2; exit 2; }
LLAMA_BENCH="$1"; shift
MODEL="$ROOT/models/SmolLM2-135M-Instruct.Q4_1.gguf"
if [ $# -ge 1 ] && [ "${1#-}" = "$1" ]; then MODEL="$1"; shift; fi
THREADS="$(nproc)"; P=512; N=128; D=0; R=5; ROUNDS=3; KV=f16
while [ $# -gt 0 ]; do
  case "$1" in
    -t) THREADS="$2"; shift 2 ;;
    -p) P="$2"; shift 2 ;;
    -n) N="$2"; shift 2 ;;
    -d) D="$2"; shift 2 ;;
    -r) R="$2"; shift 2 ;;
    --rounds) ROUNDS="$2"; shift 2 ;;
    --kv-type) KV="$2"; shift 2 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
[ -x "$LLAMA_BENCH" ] || { echo "error: $LLAMA_BENCH is not an executable llama-bench" >&2; exit 1; }
[ -f "$MODEL" ] || { echo "error: model $MODEL not found" >&2; exit 1; }
OURS="$ROOT/build/bin/workbench-cli"
[ -x "$OURS" ] || { echo "error: $OURS not built (run installer/bootstrap.sh)" >&2; exit 1; }

OURS_KV=(); LLAMA_KV=()
case "$KV" in
  f16) ;;
  q8_0|q4_0) OURS_KV=(--kv-type "$KV"); LLAMA_KV=(-ctk "$KV" -ctv "$KV" -fa on) ;;
  *) echo "error: --kv-type takes f16, q8_0 or q4_0 (types both tools store), not $KV" >&2; exit 2 ;;
esac

out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
for i in $(seq 1 "$ROUNDS"); do
  echo "round $i/$ROUNDS: workbench-cli bench" >&2
  "$OURS" bench -m "$MODEL" -t "$THREADS" -p "$P" -n "$N" -d "$D" -r "$R" ${OURS_KV[@]+"${OURS_KV[@]}"} --json > "$out/ours_$i.json"
  echo "round $i/$ROUNDS: llama-bench" >&2
  "$LLAMA_BENCH" -m "$MODEL" -t "$THREADS" -p "$P" -n "$N" -d "$D" -r "$R" ${LLAMA_KV[@]+"${LLAMA_KV[@]}"} -o json > "$out/llama_$i.json" 2>/dev/null
done

python3 - "$out" "$ROUNDS" "$MODEL" "$THREADS" "$KV" <<'PY'
import json, os, statistics, sys
out, rounds, model, threads, kv = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
def rows(prefix):
    by_test = {}
    for i in range(1, rounds + 1):
        for row in json.load(open(os.path.join(out, f"{prefix}_{i}.json"))):
            test = row.get("test") or (f"pp{row['n_prompt']}" if row["n_gen"] == 0 else f"tg{row['n_gen']}")
            if row.get("n_depth"):
                test += f" @ d{row['n_depth']}"
            by_test.setdefault(test, []).append(row["avg_ts"])
    return by_test
ours, llama = rows("ours"), rows("llama")
print(f"model: {os.path.basename(model)}  threads: {threads}  KV: {kv}  rounds: {rounds} (alternating)")
print("| test | workbench t/s (median) | llama.cpp t/s (median) | ratio |")
print("| --- | ---: | ---: | ---: |")
for test in ours:
    if test not in llama:
        continue
    a, b = statistics.median(ours[test]), statistics.median(llama[test])
    print(f"| {test} | {a:.1f} | {b:.1f} | {a / b:.2f}x |")
PY
