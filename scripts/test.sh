#!/usr/bin/env bash
# The whole test suite: build, then every ctest. The ctest summary is the last thing printed.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD="${ONNXC_BUILD_DIR:-build}"
scripts/build.sh "$@"
cd "$BUILD"
ctest --output-on-failure -j "${JOBS:-$(nproc)}" --timeout 1200
