#!/usr/bin/env bash
# The parsers that read what a model file or a client sends (the chat-template interpreter; GBNF
# grammars, JSON Schemas and their patterns) under libFuzzer with ASan and UBSan, each built from
# its own sources alone (a minute, not an instrumented engine) and run SECONDS each (default 60)
# from seeds: the template corpus, the Jinja probe cases, a few grammars and schemas. .ci/run runs
# it on hosts with clang++. A finding prints its input and the run fails.
#   tests/fuzz/run_parser_fuzz.sh [SECONDS]
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
SECS="${1:-60}"
CXX="$(command -v clang++ || true)"
[ -n "$CXX" ] || { echo "no clang++ on this host: parser fuzzing skipped"; exit 0; }
work="$(mktemp -d /tmp/wb-parser-fuzz.XXXXXX)"
trap 'rm -rf "$work"' EXIT
flags=(-std=c++20 -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined -I "$ROOT/core_engine" -I "$ROOT/core_engine/include")

"$CXX" "${flags[@]}" "$ROOT/tests/fuzz/fuzz_jinja.cpp" "$ROOT"/core_engine/jinja/*.cpp "$ROOT/core_engine/common/json_text.cpp" -o "$work/fuzz_jinja" &
"$CXX" "${flags[@]}" "$ROOT/tests/fuzz/fuzz_grammar.cpp" "$ROOT"/core_engine/sampling/{grammar,grammar_matcher,json_schema_grammar,regex_grammar}.cpp \
  "$ROOT/core_engine/common/json_text.cpp" -o "$work/fuzz_grammar" &
wait -n && wait -n

mkdir -p "$work/jinja" "$work/grammar"
cp "$ROOT"/tests/data/chat_templates/corpus/*.jinja "$work/jinja/"
python3 - "$ROOT/tests/data/jinja/cases.json" "$work/jinja" <<'PY'
import json, sys
for i, case in enumerate(json.load(open(sys.argv[1]))):
    open(f"{sys.argv[2]}/case{i}.jinja", "w").write(case["template"])
PY
printf '\x00root ::= "a" [b-z]* ("x" | y)?\ny ::= "q"{2,5}\x01abcq' > "$work/grammar/gbnf"
printf '\x01{"type":"object","properties":{"a":{"type":"integer","minimum":-5,"maximum":120},"b":{"type":"string","maxLength":4}},"required":["a"]}' > "$work/grammar/schema"
printf '\x01{"$defs":{"n":{"anyOf":[{"$ref":"#/$defs/n"},{"type":"null"}]}},"$ref":"#/$defs/n"}' > "$work/grammar/recursive"
printf '\x02^[A-Z]{2}-\\d{3}(x|y)*[\\u4e00-\\u9fa5]$' > "$work/grammar/pattern"

for target in jinja grammar; do
  echo "fuzz_$target: ${SECS} s"
  if ! (cd "$work" && "./fuzz_$target" -max_total_time="$SECS" -timeout=5 -rss_limit_mb=2048 -max_len=20000 "$target" > "$target.log" 2>&1); then
    tail -n 40 "$work/$target.log"
    echo "fuzz_$target: a finding (above)" >&2
    exit 1
  fi
  grep -E '^Done|stat::number_of_executed_units' "$work/$target.log" | tail -n 1 || tail -n 1 "$work/$target.log"
done
