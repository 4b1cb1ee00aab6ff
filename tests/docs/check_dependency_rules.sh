#!/usr/bin/env bash
# The dependency rules docs/ARCHITECTURE.md states ("Dependency rules"), checked on the includes:
#   - nothing under core_engine/ includes Qt;
#   - kernels/ includes nothing from attention/, model/ or the layers above them (the model drives
#     the KV cache; a backend only computes on the plans and streams it is handed);
#   - kv_blocks/, model_data/, tensor/ and common/ include no engine folder above them, and
#     common/ none of the public headers of the engine's upper layers (the store, the engine);
#   - engine/ (the runtime) includes nothing of eval/ (the measurements made through its API);
#   - scheduler/ and store/ are leaves: their own folder, common/ and the public headers only;
#   - widgets/ includes nothing from ui/, app/ or the engine's internals; ui/ none of app/ or the
#     engine's internals (the engine reaches the GUI only through include/workbench/).
# Prints each include that breaks a rule and fails; else one line with the count of files read.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
broken=0 files=0

# rule FOLDER REGEX WHY: no file under FOLDER has an #include line matching REGEX.
rule() {
  local folder="$1" pattern="$2" why="$3" hits
  [ -d "$folder" ] || { echo "dependency rule names $folder, which does not exist"; broken=$((broken + 1)); return; }
  hits="$(grep -rnE --include='*.h' --include='*.cpp' --include='*.cu' --include='*.cuh' "^[[:space:]]*#[[:space:]]*include[[:space:]]*$pattern" "$folder" || true)"
  files=$((files + $(find "$folder" -type f \( -name '*.h' -o -name '*.cpp' -o -name '*.cu' -o -name '*.cuh' \) | wc -l)))
  if [ -n "$hits" ]; then
    printf '%s\n' "$hits" | sed "s|^|$why: |"
    broken=$((broken + $(printf '%s\n' "$hits" | wc -l)))
  fi
}

engine_above_kernels='"(attention|model|engine|eval|speculation|scheduler|store|tokenizer)/'
rule core_engine '<Q' "core_engine includes Qt"
rule core_engine/kernels "$engine_above_kernels" "kernels/ reaches above itself"
for low in kv_blocks model_data tensor common; do
  rule "core_engine/$low" "\"(attention|model|engine|eval|kernels|speculation|scheduler|store|sampling|tokenizer|metrics)/" "$low/ reaches above itself"
done
rule core_engine/engine '"(eval/|workbench/(measure|sweep|retrieval|bench_row|pareto)\.h)' "engine/ reaches up to eval/"
rule core_engine/common '"workbench/(store|engine|measure|sweep|retrieval|bench_row|request)\.h"' "common/ reaches up to the store or the engine"
rule core_engine/scheduler '"(attention|model|engine|eval|kernels|kv_blocks|model_data|tensor|speculation|store|sampling|tokenizer|metrics|gguf)/' "scheduler/ is a leaf"
rule core_engine/store '"(attention|model|engine|eval|kernels|kv_blocks|model_data|tensor|speculation|scheduler|sampling|tokenizer|metrics|gguf)/' "store/ is a leaf"
engine_internals='"(attention|model|engine|eval|kernels|kv_blocks|model_data|tensor|speculation|scheduler|store|sampling|tokenizer|metrics|gguf|common)/'
rule widgets "$engine_internals" "widgets/ reaches into the engine"
rule widgets '"(ui|app)/' "widgets/ reaches up into the GUI"
rule ui "$engine_internals" "ui/ reaches into the engine"
rule ui '"app/' "ui/ reaches into app/"

if [ "$broken" -gt 0 ]; then
  echo "$broken include(s) break the dependency rules of docs/ARCHITECTURE.md"
  exit 1
fi
echo "ok: the dependency rules hold over $files files"
