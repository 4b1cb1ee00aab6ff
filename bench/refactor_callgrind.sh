#!/usr/bin/env bash
# The refactor gate's instruction count: a fixed short greedy run (one thread, 256-token context,
# a 40-token reply to bench/refactor_gate's first prompt) under callgrind, per attention variant; prints
# "ATTENTION IR" lines. Run it before and after an engine-core refactor on the same machine and
# quote both in the commit message (within 1 % is the bar; bench/refactor_gate holds the md5s).
#   bench/refactor_callgrind.sh [BUILD_DIR] [MODEL]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
BUILD="${1:-build}"
MODEL="${2:-models/SmolLM2-135M-Instruct.Q4_1.gguf}"
PROMPT="The history of the printing press begins in the fifteenth century, when a goldsmith in Mainz combined movable metal type, oil-based ink and a wooden screw press. Within fifty years presses had spread to more than two hundred cities across Europe, and the price of books fell"
command -v valgrind > /dev/null || { echo "refactor_callgrind: valgrind is not installed (apt-get install valgrind)" >&2; exit 1; }
[ -f "$MODEL" ] || { echo "refactor_callgrind: $MODEL: no such model file" >&2; exit 1; }
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
for attention in full "sliding:window=32,sinks=4" "topk:k=16,recent=8"; do
  valgrind --tool=callgrind --callgrind-out-file="$out/cg" "$BUILD/bin/workbench-cli" run -m "$MODEL" -t 1 -c 256 \
    --attention "$attention" -p "$PROMPT" -n 40 --temp 0 --ignore-eos > /dev/null 2> "$out/log" \
    || { tail -n 5 "$out/log" >&2; exit 1; }
  printf '%s %s\n' "$attention" "$(sed -n 's/^==[0-9]*== Collected : //p' "$out/log")"
done
