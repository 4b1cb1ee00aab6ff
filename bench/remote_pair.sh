#!/usr/bin/env bash
# Our `serve` and llama.cpp's `llama-server` measured the same way by `bench --remote` (client-side,
# vllm bench serve's definitions): same GGUF, same threads, same random prompts, each server fresh,
# a warm-up, then each concurrency level with prompts of its own seed (no prefix-cache carry-over).
#   bench/remote_pair.sh LLAMA_SERVER_PATH [MODEL] [-t THREADS] [--levels "1 8"] [--prompts 32] [--in 128] [--out 64]
# It never builds llama.cpp (see docs/BENCHMARKS.md for how we built ours).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
[ $# -ge 1 ] || { echo "usage: $0 LLAMA_SERVER_PATH [MODEL] [-t N] [--levels \"1 8\"] [--prompts N] [--in N] [--out N]" >&2; exit 2; }
LLAMA_SERVER="$1"; shift
MODEL="$ROOT/models/SmolLM2-135M-Instruct.Q4_1.gguf"
if [ $# -ge 1 ] && [ "${1#-}" = "$1" ]; then MODEL="$1"; shift; fi
THREADS="$(nproc)"; LEVELS="1 8"; PROMPTS=32; IN=128; OUT=64
while [ $# -gt 0 ]; do
  case "$1" in
    -t) THREADS="$2"; shift 2 ;;
    --levels) LEVELS="$2"; shift 2 ;;
    --prompts) PROMPTS="$2"; shift 2 ;;
    --in) IN="$2"; shift 2 ;;
    --out) OUT="$2"; shift 2 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
CLI="$ROOT/build/bin/workbench-cli"
MAXC=$(echo $LEVELS | tr ' ' '\n' | sort -n | tail -1)
PORT=18790
pid=""
trap '[ -n "$pid" ] && kill $pid 2>/dev/null; true' EXIT
wait_up() { for _ in $(seq 1 300); do curl -sf "http://127.0.0.1:$PORT/health" >/dev/null 2>&1 && return 0; sleep 0.1; done; echo "server did not come up" >&2; exit 1; }
measure() {   # NAME, then the server's command line
  local name="$1"; shift
  "$@" >/dev/null 2>&1 & pid=$!
  wait_up
  "$CLI" bench --remote "http://127.0.0.1:$PORT/v1" --num-prompts 4 --input-len "$IN" --output-len 8 --seed 999 --json >/dev/null 2>&1
  local seed=1
  for c in $LEVELS; do
    "$CLI" bench --remote "http://127.0.0.1:$PORT/v1" --num-prompts "$PROMPTS" --input-len "$IN" --output-len "$OUT" \
      --concurrency "$c" --seed "$seed" --json 2>/dev/null | python3 -c "
import json, sys
d = json.loads(sys.stdin.read())
print(f\"| $name | {d['server']} | {d['concurrency']} | {d['completed']}/{d['completed'] + d['failed']} | {d['total_input_tokens']} | \"
      f\"{d['output_throughput']:.1f} | {d['ttft_ms']['mean']:.1f} | {d['ttft_ms']['p99']:.1f} | {d['tpot_ms']['mean']:.2f} | {d['itl_ms']['p99']:.2f} |\")"
    seed=$((seed + 1))
  done
  kill $pid; wait $pid 2>/dev/null || true; pid=""
}
echo "| server | kind | concurrency | ok | input tokens | output tok/s | TTFT mean ms | TTFT p99 ms | TPOT mean ms | ITL p99 ms |"
echo "|---|---|---|---|---|---|---|---|---|---|"
measure "workbench-cli serve" "$CLI" serve -m "$MODEL" --port "$PORT" -t "$THREADS" --max-running "$MAXC"
measure "llama-server" "$LLAMA_SERVER" -m "$MODEL" --port "$PORT" -t "$THREADS" -c $((MAXC * 1024)) -np "$MAXC" --metrics
