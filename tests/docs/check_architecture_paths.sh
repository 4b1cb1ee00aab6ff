#!/usr/bin/env bash
# docs/ARCHITECTURE.md describes the code as it is: every path in its "Folders" block exists.
# What is planned belongs in its "Plans" section, which this check does not read.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
doc="$ROOT/docs/ARCHITECTURE.md"
paths="$(awk '/^## Folders/ {f=1; next} f && /^```/ {n++; if (n == 2) exit; next} f && n == 1 {print $1}' "$doc")"
[ -n "$paths" ] || { echo "no Folders block found in $doc"; exit 1; }
missing=0 count=0
while read -r p; do
  count=$((count + 1))
  [ -e "$ROOT/${p%/}" ] || { echo "docs/ARCHITECTURE.md lists $p, which does not exist"; missing=$((missing + 1)); }
done <<<"$paths"
[ "$missing" -eq 0 ] || exit 1
echo "ok: all $count paths in the Folders block exist"
