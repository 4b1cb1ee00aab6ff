#!/usr/bin/env bash
# Measures every attention variant and KV type on one model and text with `workbench-cli eval`
# (PPL, KL and top-1 against full attention + f16 KV in the same run, KV bytes, bytes read per
# token, decode tok/s at the window's context), one JSON line per row into OUT, then renders the
# markdown table with bench/variants_table.py. Usage:
#   bench/variants_table.sh [OUT.jsonl] [CTX] [CHUNKS]      (defaults: docs/variants.jsonl 4096 1)
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-docs/variants.jsonl}
CTX=${2:-4096}
CHUNKS=${3:-1}
CLI=${WORKBENCH_CLI:-build/bin/workbench-cli}
TEXT=resources/eval/alice_wonderland.txt
: > "$OUT"
row() {  # row CTX CHUNKS ARGS...
  local ctx=$1 chunks=$2; shift 2
  echo "== ctx $ctx: $*" >&2
  "$CLI" eval -f "$TEXT" --ctx "$ctx" --chunks "$chunks" -t 2 --json "$@" >> "$OUT" || echo "   (failed)" >&2
}
row "$CTX" "$CHUNKS" --attention full
for t in f32 bf16 q8_0 fp8 q4_0 k=q8_0,v=q4_0; do row "$CTX" "$CHUNKS" --kv-type "$t"; done
for s in sliding:window=1020,sinks=4 sliding:window=1020,sinks=0 sliding:window=512,sinks=4 sliding:window=2048,sinks=4; do
  row "$CTX" "$CHUNKS" --attention "$s"; done
row "$CTX" "$CHUNKS" --attention sliding:window=1020,sinks=4 --kv-type q8_0
for s in topk:k=1024 topk:k=512 topk:k=256; do row "$CTX" "$CHUNKS" --attention "$s"; done
for s in compressed:block=2,recent=256 compressed:block=4,recent=256 compressed:block=8,recent=512 \
         compressed:block=2,recent=256,sinks=4 compressed:block=4,recent=256,sinks=4 compressed:block=8,recent=512,sinks=4; do
  row "$CTX" "$CHUNKS" --attention "$s"; done
for s in heavy:block=16,k=32,recent=256 heavy:block=16,k=64,recent=256 heavy:block=32,k=16,recent=512 \
         heavy:block=16,k=32,recent=256,sinks=4 heavy:block=16,k=64,recent=256,sinks=4 heavy:block=8,k=64,recent=256,sinks=4; do
  row "$CTX" "$CHUNKS" --attention "$s"; done
for s in cross_layer:group=2 cross_layer:group=2,merge=mean cross_layer:group=2,merge=slerp \
         cross_layer:group=2,layers=16-29 cross_layer:group=2,layers=16-29,merge=mean cross_layer:group=2,layers=0-13,merge=mean; do
  row "$CTX" "$CHUNKS" --attention "$s"; done
for s in latent:rank=256 latent:rank=192 latent:rank=128; do row "$CTX" "$CHUNKS" --attention "$s"; done
# Per-layer layouts: which layers tolerate a window (the rest run full attention), and a mix.
for s in "sliding:window=512,sinks=4,layers=0-14" "sliding:window=512,sinks=4,layers=15-29" \
         "sliding:window=512,sinks=4,layers=0+2+4+6+8+10+12+14+16+18+20+22+24+26+28" \
         "sliding:window=512,sinks=4,layers=0-14;topk:k=512"; do
  row "$CTX" "$CHUNKS" --attention "$s"; done
# The long-context targets: sliding with and without sinks, and top-k, at 8k.
row 8192 1 --attention sliding:window=1020,sinks=4
row 8192 1 --attention sliding:window=1020,sinks=0
row 8192 1 --attention topk:k=1536
