#!/usr/bin/env bash
# The official Python `openai` client against `workbench-cli serve` (CTest: test_openai_client).
#   test_openai_client.sh WORKBENCH_CLI MODEL VENV
# VENV is the virtual environment installer/bootstrap.sh makes with the pinned client. A missing
# model or client skips (77), except under CI=true, where it fails: CI installs everything.
set -euo pipefail
cli="$1" model="$2" venv="$3"
missing() {
  if [ "${CI:-}" = "true" ]; then echo "FAIL: $1 (CI=true: a missing install step fails, never skips)"; exit 1; fi
  echo "SKIP: $1"; exit 77
}
[ -f "$model" ] || missing "the default model is not installed (installer/bootstrap.sh)"
"$venv/bin/python" -c 'import openai, jsonschema' 2>/dev/null || missing "no openai client or jsonschema in $venv (installer/bootstrap.sh makes them)"

log="$(mktemp)"
"$cli" serve --port 0 -m "$model" --api-key test-key >"$log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; rm -f "$log"' EXIT
for _ in $(seq 1 600); do
  grep -q "serve: ready:" "$log" && break
  kill -0 $pid 2>/dev/null || { cat "$log"; echo "FAIL: the server exited"; exit 1; }
  sleep 0.1
done
port="$(grep -o 'listening on http://127.0.0.1:[0-9]*' "$log" | grep -o '[0-9]*$')"
[ -n "$port" ] || { cat "$log"; echo "FAIL: no port"; exit 1; }
"$venv/bin/python" "$(dirname "$0")/test_openai_client.py" "http://127.0.0.1:$port/v1" test-key
