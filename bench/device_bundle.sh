#!/usr/bin/env bash
# Builds, here, what bench/device_check.sh runs on the GPU machine, so that machine need not
# build anything nor have the engine's libraries (its image lacks PCRE2, LAPACK, sqlite3,
# OpenSSL and cpp-httplib, and nothing can be fetched there): the Qt-free CUDA tests, the CLI
# and the bandwidth probe, built with WB_GUI=OFF for Hopper (sm_90a) only, stripped, with every
# shared library they load except the C and C++ runtimes (glibc is backward compatible, and the
# device's libstdc++ is newer than Debian 12's), packed into one archive at the repository's
# root. Name it in the device tool's `carry`; device_check.sh unpacks it and runs from it.
#   bench/device_bundle.sh            (writes .device-bundle.tar.xz; the build stays in build-bundle/)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
BUILD="${WB_BUNDLE_BUILD:-build-bundle}"
cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DWB_GUI=OFF -DWB_ENABLE_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90a-real > /dev/null
cmake --build "$BUILD" -j "$(nproc)" --target cuda_checks
stage="$(mktemp -d)"
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/bin" "$stage/lib"
for exe in "$BUILD"/bin/test_cuda_* "$BUILD/bin/workbench-cli" "$BUILD/bin/workbench-cuda-membw"; do
  cp "$exe" "$stage/bin/"
  # Every library it loads but the runtimes every Linux has.
  ldd "$exe" | awk '$3 ~ /^\// {print $3}' | while read -r lib; do
    case "$(basename "$lib")" in
      libc.so.*|libm.so.*|libstdc++.so.*|libgcc_s.so.*|ld-linux*|libpthread.so.*|libdl.so.*|librt.so.*) ;;
      *) cp -n "$(readlink -f "$lib")" "$stage/lib/$(basename "$lib")" ;;
    esac
  done
done
strip "$stage"/bin/* "$stage"/lib/* 2> /dev/null || true
git rev-parse --short HEAD > "$stage/commit"
tar -C "$stage" -cJf .device-bundle.tar.xz .
echo "bundle: .device-bundle.tar.xz, $(du -h .device-bundle.tar.xz | cut -f1) (commit $(cat "$stage/commit")): $(ls "$stage/bin" | tr '\n' ' ')"
echo "libraries: $(ls "$stage/lib" | tr '\n' ' ')"
