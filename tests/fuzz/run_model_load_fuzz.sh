#!/usr/bin/env bash
# A bounded run of the loader fuzz target (fuzz_model_load): builds it with clang, ASan and UBSan
# in build-fuzz/, seeds it with a tiny `synth` model of every architecture the engine runs, and
# fuzzes for SECONDS (default 60). A crash, a hang (-timeout) or an allocation over the limit
# (-malloc_limit_mb: a file claiming sizes it does not hold) fails the run and leaves the input
# in build-fuzz/. CI runs it in the fresh root after the tests.
#   tests/fuzz/run_model_load_fuzz.sh [SECONDS]
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
RUN_S="${1:-60}"
BUILD="${WB_FUZZ_BUILD_DIR:-$ROOT/build-fuzz}"
CLI="${WB_CLI:-$ROOT/build/bin/workbench-cli}"   # writes the seeds (bootstrap's build)

# clang, and its sanitizer and libFuzzer runtimes (libclang-rt-dev: only a Recommends of clang).
have_runtime() { [ -n "$(ls /usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a 2>/dev/null)" ]; }
if ! command -v clang++ >/dev/null || ! have_runtime; then
  [ "$(id -u)" -eq 0 ] || { echo "error: the fuzz build needs clang and libclang-rt-dev (apt-get install clang libclang-rt-dev)" >&2; exit 1; }
  apt-get update -q
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends clang libclang-rt-dev
fi
[ -x "$CLI" ] || { echo "error: $CLI is missing: run installer/bootstrap.sh first (it writes the seeds)" >&2; exit 1; }

cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DWB_FUZZ=ON -DWB_BUILD_TESTS=OFF -DWB_ENABLE_CUDA=OFF \
  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ >/dev/null
ninja -C "$BUILD" fuzz_model_load

seeds="$BUILD/model_load_seeds" corpus="$BUILD/model_load_corpus"
rm -rf "$seeds" "$corpus"
mkdir -p "$seeds" "$corpus"
for arch in $("$CLI" synth --help | sed -n 's/.*architecture: \([a-z0-9, -]*\).*/\1/p' | tr -d ,); do
  "$CLI" synth --arch "$arch" --shape tiny --type q8_0 -o "$seeds/$arch.gguf"
done
n_seeds=$(ls "$seeds" | wc -l)
[ "$n_seeds" -ge 7 ] || { echo "error: only $n_seeds seed models written" >&2; exit 1; }
max_len=$(stat -c %s "$seeds"/*.gguf | sort -n | tail -1)
echo "fuzzing the model loader for ${RUN_S} s from $n_seeds seeds ($(ls "$seeds" | tr '\n' ' '))"
cd "$BUILD"
./bin/fuzz_model_load -max_total_time="$RUN_S" -timeout=10 -malloc_limit_mb=1024 -rss_limit_mb=3072 \
  -max_len="$max_len" -print_final_stats=1 "$corpus" "$seeds" 2>&1 | grep -E "^#[0-9]+ +(DONE|INITED)|stat::|ERROR|SUMMARY|Done"
echo "fuzz_model_load: clean after ${RUN_S} s"
