#!/usr/bin/env bash
# Configures and builds onnxc into ./build (or $ONNXC_BUILD_DIR). Extra args go to cmake configure.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD="${ONNXC_BUILD_DIR:-build}"
JOBS="${JOBS:-$(nproc)}"
cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@"
cmake --build "$BUILD" -j "$JOBS"
