#!/usr/bin/env bash
# The kernel files built with VNNI/AVX-512 flags must export nothing but their entry points: an
# inline function they exported (a weak symbol) could be the copy the linker keeps for code that
# runs on a CPU without those instructions. Usage: check_isa_symbols.sh libworkbench_engine.a
set -euo pipefail
lib="$1"
members=(gemm_avx_vnni.cpp.o gemm_avx512_groups.cpp.o gemm_avx512.cpp.o)
symbols="$(nm -C --defined-only -g -A "$lib")"
status=0
for m in "${members[@]}"; do
  mine="$(grep -F ":$m:" <<<"$symbols" | sed 's/^[^ ]* //' || true)"
  if [[ -z "$mine" ]]; then
    echo "FAIL: $m not found in $lib"; status=1; continue
  fi
  extra="$(grep -vE '^T workbench::gemm_(quant|float)_avx' <<<"$mine" || true)"
  if [[ -n "$extra" ]]; then
    echo "FAIL: $m exports more than its kernel entry points:"; echo "$extra"; status=1
  else
    echo "ok: $m exports only: $(awk '{print $2}' <<<"$mine" | sed 's/(.*//' | tr '\n' ' ')"
  fi
done
[[ $status == 0 ]] && echo "1 passed, 0 failed"
exit $status
