#!/usr/bin/env bash
# The whole test suite: build, then every ctest. Prints the build's time, then the ctest summary and
# the tests' time.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD="${ONNXC_BUILD_DIR:-build}"
start=$SECONDS
scripts/build.sh "$@"
echo "test: build $((SECONDS - start)) s"
cd "$BUILD"
t0=$SECONDS
rc=0
ctest --output-on-failure -j "${JOBS:-$(nproc)}" --timeout 1200 || rc=$?
echo "test: ctest $((SECONDS - t0)) s"
exit $rc
