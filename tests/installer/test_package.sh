#!/usr/bin/env bash
# The .deb builds from this build tree and holds what an installed app needs: both programs, the
# model fetch script, the eval/calibration text, the desktop entry and icon; no model weights.
set -euo pipefail
BUILD_DIR="$1"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
(cd "$BUILD_DIR" && cpack -G DEB -B "$out" >/dev/null)
deb="$(ls "$out"/*.deb)"
contents="$(dpkg-deb -c "$deb" | awk '{print $6}')"
for f in ./usr/bin/workbench ./usr/bin/workbench-cli ./usr/share/inference-workbench/fetch_model.sh \
         ./usr/share/inference-workbench/eval/alice_wonderland.txt ./usr/share/inference-workbench/eval/paradise_lost.txt \
         ./usr/share/applications/inference-workbench.desktop \
         ./usr/share/icons/hicolor/scalable/apps/inference-workbench.svg; do
  grep -qx "$f" <<<"$contents" || { echo "missing from the package: $f"; exit 1; }
done
if grep -q '\.gguf$' <<<"$contents"; then echo "the package must not carry model weights"; exit 1; fi
depends="$(dpkg-deb -f "$deb" Depends)"
for d in libqt6charts6 qt6-qpa-plugins libxkbcommon-x11-0 fonts-dejavu-core ca-certificates libcmark-gfm-extensions0 libsource-highlight4v5 libcpp-httplib0.11 libqt6network6; do
  grep -q "$d" <<<"$depends" || { echo "Depends lacks $d (a package the app needs at run time)"; exit 1; }
done
size=$(stat -c %s "$deb")
[ "$size" -lt $((20 * 1024 * 1024)) ] || { echo "package is $size bytes: too big"; exit 1; }
echo "ok: $deb ($size bytes)"
