#!/usr/bin/env bash
# Speculative decoding side by side with llama.cpp: for tasks where drafts should pay (quoting or
# editing a given text, summarizing with quotes) and one where they should not (a free story), the
# decode speed and acceptance of `workbench-cli run` without speculation, with prompt lookup and
# with a draft model, against llama.cpp's llama-lookup (plain: its --spec-draft-n-max 0) and
# llama-speculative on the same GGUF, threads, prompt and length (greedy, end-of-text ignored).
# Tools alternate within each round so both see the same machine load; medians over the rounds.
#   bench/compare_speculative.sh LLAMA_BIN_DIR [MODEL] [--draft DRAFT_MODEL] [-t N] [-n 128] [--draft-max 8] [--rounds 3]
# LLAMA_BIN_DIR holds llama-lookup and llama-speculative built by you (docs/BENCHMARKS.md says how);
# the draft model defaults to MODEL itself (the upper bound of a draft model's acceptance).
# Prompts use the ChatML template (SmolLM2, Qwen), passed as raw text to both tools.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
[ $# -ge 1 ] || { echo "usage: $0 LLAMA_BIN_DIR [MODEL] [--draft M] [-t N] [-n N] [--draft-max N] [--rounds N]" >&2; exit 2; }
BIN="$1"; shift
MODEL="$ROOT/models/SmolLM2-135M-Instruct.Q4_1.gguf"
if [ $# -ge 1 ] && [ "${1#-}" = "$1" ]; then MODEL="$1"; shift; fi
DRAFT=""; THREADS="$(nproc)"; N=128; DMAX=8; ROUNDS=3
while [ $# -gt 0 ]; do
  case "$1" in
    --draft) DRAFT="$2"; shift 2 ;;
    -t) THREADS="$2"; shift 2 ;;
    -n) N="$2"; shift 2 ;;
    --draft-max) DMAX="$2"; shift 2 ;;
    --rounds) ROUNDS="$2"; shift 2 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
DRAFT="${DRAFT:-$MODEL}"
for tool in llama-lookup llama-speculative; do
  [ -x "$BIN/$tool" ] || { echo "error: $BIN/$tool is not an executable (build llama.cpp's examples)" >&2; exit 1; }
done
[ -f "$MODEL" ] || { echo "error: model $MODEL not found" >&2; exit 1; }
[ -f "$DRAFT" ] || { echo "error: draft model $DRAFT not found" >&2; exit 1; }
OURS="$ROOT/build/bin/workbench-cli"
[ -x "$OURS" ] || { echo "error: $OURS not built (run installer/bootstrap.sh)" >&2; exit 1; }
export LD_LIBRARY_PATH="$BIN${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

chatml() { printf '<|im_start|>user\n%s<|im_end|>\n<|im_start|>assistant\n' "$1"; }
PASSAGE="The history of the printing press begins in the fifteenth century, when a goldsmith in Mainz combined movable metal type, oil-based ink and a wooden screw press. Within fifty years printers worked in more than two hundred cities, and millions of books had been made. Prices fell, literacy rose, and scholars could compare identical copies of a text for the first time."
CODE=$'def total_price(items, tax_rate):\n    subtotal = 0\n    for item in items:\n        subtotal += item.price * item.quantity\n    tax = subtotal * tax_rate\n    return subtotal + tax\n\ndef average_price(items):\n    if not items:\n        return 0\n    return sum(item.price for item in items) / len(items)\n'
declare -A PROMPT
PROMPT[quote]="$(chatml "Repeat the following text exactly, word for word: $PASSAGE")"
PROMPT[edit]="$(chatml "Rename the variable subtotal to net_total in this code and print the whole code again: $CODE")"
PROMPT[summarize]="$(chatml "Summarize this text, quoting its sentences: $PASSAGE")"
PROMPT[story]="$(chatml "Write a long story about a dragon who learns to paint.")"
TASKS="quote edit summarize story"

out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
ours() {  # task mode round
  local extra=()
  case "$2" in lookup) extra=(--draft-lookup --draft-max "$DMAX") ;; draft) extra=(--draft "$DRAFT" --draft-max "$DMAX") ;; esac
  "$OURS" run -m "$MODEL" -t "$THREADS" -p "${PROMPT[$1]}" -n "$N" --temp 0 --ignore-eos --json "${extra[@]}" > "$out/ours_$1_$2_$3.json"
}
llama() {  # task mode round
  case "$2" in
    plain) "$BIN/llama-lookup" -m "$MODEL" -t "$THREADS" -p "${PROMPT[$1]}" -n "$N" --temp 0 --ignore-eos --spec-draft-n-max 0 ;;
    lookup) "$BIN/llama-lookup" -m "$MODEL" -t "$THREADS" -p "${PROMPT[$1]}" -n "$N" --temp 0 --ignore-eos --spec-draft-n-max "$DMAX" ;;
    draft) "$BIN/llama-speculative" -m "$MODEL" -md "$DRAFT" -t "$THREADS" -p "${PROMPT[$1]}" -n "$N" --temp 0 --ignore-eos --spec-draft-n-max "$DMAX" ;;
  esac > /dev/null 2> "$out/llama_$1_$2_$3.log"
}
for r in $(seq 1 "$ROUNDS"); do
  for task in $TASKS; do
    for mode in plain lookup draft; do
      echo "round $r/$ROUNDS: $task, $mode" >&2
      ours "$task" "$mode" "$r"
      llama "$task" "$mode" "$r"
    done
  done
done

python3 - "$out" "$ROUNDS" "$MODEL" "$DRAFT" "$THREADS" "$N" "$DMAX" "$TASKS" <<'PY'
import json, os, re, statistics, sys
out, rounds, model, draft, threads, n, dmax, tasks = sys.argv[1], int(sys.argv[2]), *sys.argv[3:8], sys.argv[8].split()
def ours(task, mode):
    speed, acc = [], []
    for r in range(1, rounds + 1):
        m = json.load(open(f"{out}/ours_{task}_{mode}_{r}.json"))["metrics"]
        speed.append(m["decode_tok_s"])
        if m.get("acceptance_rate") is not None: acc.append(m["acceptance_rate"])
    return statistics.median(speed), (statistics.median(acc) if acc else None)
def llama(task, mode):
    speed, acc = [], []
    for r in range(1, rounds + 1):
        text = open(f"{out}/llama_{task}_{mode}_{r}.log").read()
        s = re.findall(r"decoded\s+\d+ tokens in\s+[\d.]+ seconds, speed:\s+([\d.]+) t/s", text)
        if not s: sys.exit(f"no speed in llama.cpp's log for {task}/{mode}:\n{text[-2000:]}")
        speed.append(float(s[-1]))
        a = re.findall(r"accept\s*=\s*([\d.]+)%", text)
        if a and mode != "plain": acc.append(float(a[-1]) / 100)
    return statistics.median(speed), (statistics.median(acc) if acc else None)
pct = lambda a: "—" if a is None else f"{100 * a:.0f} %"
print(f"model: {os.path.basename(model)}  draft: {os.path.basename(draft)}  threads: {threads}  -n {n}  draft max {dmax}  rounds: {rounds}")
print("| task | drafting | workbench tok/s | accepted | speed-up | llama.cpp tok/s | accepted | speed-up | workbench / llama.cpp |")
print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
for task in tasks:
    base_o, _ = ours(task, "plain")
    base_l, _ = llama(task, "plain")
    for mode in ("plain", "lookup", "draft"):
        (so, ao), (sl, al) = ours(task, mode), llama(task, mode)
        print(f"| {task} | {mode} | {so:.1f} | {pct(ao)} | {so / base_o:.2f}x | {sl:.1f} | {pct(al)} | {sl / base_l:.2f}x | {so / sl:.2f}x |")
PY
