#!/usr/bin/env bash
# The CUDA checks for the device machine as it is (one NVIDIA H200, nvcc, CMake and ninja, no Qt,
# nothing to fetch): what the image has; the WB_GUI=OFF build with CUDA — or, when it was
# carried, the bundle bench/device_bundle.sh built here (no build there, no libraries needed);
# the CUDA tests; the device's copy bandwidth; and, when `--backend cuda` runs a tiny model,
# pp512/tg128 and decode by batch on synth models. Logs under $OUT (the device tool brings them
# back), a short table last. Sized to finish in a few minutes so that a rerun fits the session's
# 15 minutes of device time; --probe stops after the inventory (the first call on a new image:
# which of the engine's libraries are there).
#   bench/device_check.sh [--probe]
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
OUT="${OUT:-/tmp/wb-device-check}"
mkdir -p "$OUT"
BUILD="${WB_DEVICE_BUILD:-build-device}"
summary=()

have_header() { [ -f "/usr/include/$1" ] || [ -f "/usr/local/include/$1" ]; }

echo "== machine"
if command -v nvidia-smi > /dev/null; then nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
else echo "nvidia-smi: not found"; fi
ldd --version 2>&1 | head -n 1
for tool in nvcc cmake ninja pkg-config g++; do
  if command -v "$tool" > /dev/null; then printf '%-11s %s\n' "$tool" "$("$tool" --version 2>&1 | grep -m1 -E '[0-9]+\.[0-9]+')"
  else printf '%-11s missing\n' "$tool"; fi
done
echo "== the engine's libraries (header, library)"
missing=0
libraries="$(ldconfig -p 2>/dev/null)"   # read once: `ldconfig -p | grep -q` fails under pipefail when grep quits early
for dep in "pcre2.h:libpcre2-8.so" "sqlite3.h:libsqlite3.so" "openssl/evp.h:libcrypto.so" "nlohmann/json.hpp:-" \
           "CLI/CLI.hpp:-" "httplib.h:libcpp-httplib.so" "-:liblapack.so"; do
  header="${dep%%:*}" lib="${dep##*:}" ok=1
  [ "$header" = - ] || have_header "$header" || ok=0
  [ "$lib" = - ] || grep -q "$lib" <<<"$libraries" || ok=0
  printf '%-22s %-22s %s\n' "$header" "$lib" "$([ $ok = 1 ] && echo found || echo MISSING)"
  [ $ok = 1 ] || missing=$((missing + 1))
done
summary+=("libraries missing: $missing")
bundle=.device-bundle.tar.xz   # bench/device_bundle.sh's, carried: no build here
[ -f "$bundle" ] && summary+=("bundle: $bundle (built here at $(tar -xJOf "$bundle" ./commit 2> /dev/null))")
if [ "${1:-}" = --probe ]; then printf '%s\n' "${summary[@]}"; exit 0; fi
use_bundle=0
if [ -f "$bundle" ]; then
  echo "== the carried bundle"
  rm -rf /tmp/wb-bundle && mkdir -p /tmp/wb-bundle && tar -C /tmp/wb-bundle -xJf "$bundle"
  # Built on another image: if it does not start here (system libraries), build here instead.
  if LD_LIBRARY_PATH=/tmp/wb-bundle/lib /tmp/wb-bundle/bin/workbench-cli --help > "$OUT/bundle.log" 2>&1; then
    use_bundle=1
    BIN=/tmp/wb-bundle/bin
    export LD_LIBRARY_PATH="/tmp/wb-bundle/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  else
    summary+=("bundle does not run here: $(head -n 1 "$OUT/bundle.log")")
  fi
fi
if [ $use_bundle = 0 ]; then
  [ "$missing" = 0 ] || { printf '%s\n' "${summary[@]}"; echo "device_check: $missing of the engine's libraries are missing here (see above), and no bundle runs" >&2; exit 1; }
  BIN="$BUILD/bin"
fi

if [ $use_bundle = 0 ]; then
  echo "== build (WB_GUI=OFF, CUDA for this GPU only)"
  arch="$(command -v nvidia-smi > /dev/null && nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -n 1 | tr -d .)"
  [ "$arch" = 90 ] && arch=90a
  start=$(date +%s)
  if ! cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DWB_GUI=OFF -DWB_ENABLE_CUDA=ON \
         ${arch:+-DCMAKE_CUDA_ARCHITECTURES="$arch-real"} > "$OUT/configure.log" 2>&1 ||
     ! cmake --build "$BUILD" -j "$(nproc)" --target cuda_checks > "$OUT/build.log" 2>&1; then
    tail -n 30 "$OUT/configure.log" "$OUT/build.log" 2> /dev/null
    exit 1
  fi
  summary+=("build: $(( $(date +%s) - start )) s")
fi

echo "== CUDA tests"
# Each test's own lines (errors against the CPU, the measured GEMV crossover) land in the log;
# exit 77 is a skip (no device), as CTest reads it.
passed=0 failed=0 skipped=0
: > "$OUT/ctest.log"
for test in "$BIN"/test_cuda_*; do
  name="$(basename "$test")"
  timeout 300 "$test" >> "$OUT/ctest.log" 2>&1
  rc=$?
  case $rc in 0) result=passed; passed=$((passed + 1)) ;; 77) result=skipped; skipped=$((skipped + 1)) ;; *) result="FAILED ($rc)"; failed=$((failed + 1)) ;; esac
  echo "$name: $result" | tee -a "$OUT/ctest.log"
done
summary+=("cuda tests: $passed passed, $failed failed, $skipped skipped")
summary+=("$(grep -m1 -o 'the GEMV serves steps up to [0-9]* tokens' "$OUT/ctest.log" || echo 'GEMV crossover: not measured')")
bandwidth="$("$BIN/workbench-cuda-membw" 2>&1 | tee "$OUT/membw.log" | grep -o '[0-9]* GB/s' | grep -o '[0-9]*')"
summary+=("device copy bandwidth: ${bandwidth:-unknown} GB/s")

echo "== benchmarks"
cli="$BIN/workbench-cli"
MODELS="${WB_DEVICE_MODELS:-/tmp/wb-models}"
mkdir -p "$MODELS"
"$cli" synth --shape tiny --type q4_0 -o "$MODELS/tiny.gguf" > /dev/null 2>&1
if reason="$("$cli" run -m "$MODELS/tiny.gguf" -p "t1 t2 t3" -n 2 --temp 0 --backend cuda 2>&1 > /dev/null)"; then
  for type in q4_0 bf16; do
    model="$MODELS/llama-1b-$type.gguf"
    [ -f "$model" ] || "$cli" synth --shape llama-1b --type "$type" -o "$model" > /dev/null 2>&1
    "$cli" bench -m "$model" --backend cuda -p 512 -n 128 -r 3 --json > "$OUT/bench-$type.json" 2> "$OUT/bench-$type.log" &&
      summary+=("llama-1b $type: $(python3 -c 'import json,sys; print(", ".join(f"{r["test"]} {r["avg_ts"]:.0f} tok/s" for r in json.load(open(sys.argv[1]))))' "$OUT/bench-$type.json")")
    # Decode's share of the bandwidth: the file's bytes (every weight, the head included, read
    # once a token) times tg128's rate over the copy bandwidth.
    [ -n "$bandwidth" ] && [ -f "$OUT/bench-$type.json" ] &&
      summary+=("llama-1b $type tg128 reads $(python3 -c 'import json,os,sys; r=[r for r in json.load(open(sys.argv[1])) if r["test"].startswith("tg")][0]; gb=os.path.getsize(sys.argv[2])*r["avg_ts"]/1e9; print(f"{gb:.0f} GB/s = {100*gb/float(sys.argv[3]):.0f} % of the copy bandwidth")' "$OUT/bench-$type.json" "$model" "$bandwidth")")
  done
  # The same decode launched kernel by kernel: what the CUDA graphs save.
  WB_CUDA_GRAPHS=0 "$cli" bench -m "$MODELS/llama-1b-q4_0.gguf" --backend cuda -p 0 -n 128 -r 3 --json > "$OUT/bench-nographs.json" 2> "$OUT/bench-nographs.log" &&
    summary+=("llama-1b q4_0 without CUDA graphs: $(python3 -c 'import json,sys; print(", ".join(f"{r["test"]} {r["avg_ts"]:.0f} tok/s" for r in json.load(open(sys.argv[1]))))' "$OUT/bench-nographs.json")")
  # Aggregate decode by batch size: still rising at 128 is the target.
  "$cli" bench -m "$MODELS/llama-1b-q4_0.gguf" --backend cuda -p 0 -n 128 -r 1 -b 1,8,32,128,256 --json > "$OUT/bench-batch.json" 2> "$OUT/bench-batch.log" &&
    summary+=("llama-1b q4_0 decode by batch: $(python3 -c 'import json,sys; print(", ".join(f"b{r["batch"]} {r["avg_ts"]:.0f}" for r in json.load(open(sys.argv[1]))))' "$OUT/bench-batch.json") tok/s")
  # A host-kept policy (the host writes and plans, the device attends): its price beside full's.
  "$cli" bench -m "$MODELS/llama-1b-q4_0.gguf" --backend cuda --attention "sliding:window=256,sinks=4" -p 512 -n 128 -r 1 --json \
    > "$OUT/bench-sliding.json" 2> "$OUT/bench-sliding.log" &&
    summary+=("llama-1b q4_0 sliding:window=256: $(python3 -c 'import json,sys; print(", ".join(f"{r["test"]} {r["avg_ts"]:.0f} tok/s" for r in json.load(open(sys.argv[1]))))' "$OUT/bench-sliding.json")")
else
  summary+=("benchmarks skipped: $reason")
fi

echo "== summary"
printf '%s\n' "${summary[@]}" | tee "$OUT/summary.txt"
