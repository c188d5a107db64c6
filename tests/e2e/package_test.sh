#!/usr/bin/env bash
# The package files and examples/, both ways a user builds against onnxc:
#   package_test.sh ONNXC BUILD_DIR MODEL_DIR
# 1. build tree: examples/CMakeLists.txt with onnxc_DIR=BUILD_DIR, examples/Makefile with
#    PKG_CONFIG_PATH=BUILD_DIR (onnxc-uninstalled.pc);
# 2. `cmake --install BUILD_DIR --prefix P`: the same two builds against P, the installed onnxc
#    compiling a model at build time through onnxc_add_model(... MODEL ...), and P/bin/onnxc working.
set -uo pipefail
ONNXC=$1
BUILD=$(realpath "$2")
MODEL_DIR=$(realpath "$3")
HERE="$(cd "$(dirname "$0")" && pwd)"
EXAMPLES="$(cd "$HERE/../../examples" && pwd)"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/onnxc-package-XXXXXX")
trap 'rm -rf "$WORK"' EXIT
export ONNXC_CACHE_DIR="${ONNXC_CACHE_DIR:-$WORK/cache}"

fail() {
  echo "FAIL: $*" >&2
  exit 1
}
step() { echo "== $*"; }
# The example prints the model's output line; any run that gets there worked.
check_run() { "$@" | tee "$WORK/run.txt" && grep -q '^output sum' "$WORK/run.txt" || fail "$* did not run"; }

step "compile the model"
"$ONNXC" compile "$MODEL_DIR/model.onnx" -o "$WORK/addb" --name addb -q || fail "onnxc compile"

step "build tree: CMake package"
cmake -S "$EXAMPLES" -B "$WORK/ex1" -Donnxc_DIR="$BUILD" -DONNXC_MODEL_NAME=addb -DONNXC_MODEL_DIR="$WORK/addb" \
  >"$WORK/log" 2>&1 || { cat "$WORK/log"; fail "configure against the build tree"; }
cmake --build "$WORK/ex1" >"$WORK/log" 2>&1 || { cat "$WORK/log"; fail "build against the build tree"; }
check_run "$WORK/ex1/run_model" -d n=2

step "build tree: pkg-config Makefile"
make -s -C "$EXAMPLES" MODEL=addb MODEL_DIR="$WORK/addb" PKG_CONFIG_PATH="$BUILD" OUT="$WORK/run_model_mk" ||
  fail "make against the build tree"
check_run "$WORK/run_model_mk"

step "install"
cmake --install "$BUILD" --prefix "$WORK/prefix" >"$WORK/log" 2>&1 || { cat "$WORK/log"; fail "cmake --install"; }
for f in bin/onnxc include/onnxc/runtime.h include/onnxc/runtime.hpp include/onnxc/model_abi.h; do
  [[ -f $WORK/prefix/$f ]] || fail "not installed: $f"
done
PCDIR=$(dirname "$(find "$WORK/prefix" -name onnxc.pc | head -1)")
CFGDIR=$(dirname "$(find "$WORK/prefix" -name onnxcConfig.cmake | head -1)")
[[ -f $PCDIR/onnxc.pc && -f $CFGDIR/onnxcConfig.cmake ]] || fail "onnxc.pc or onnxcConfig.cmake not installed"
ls "$WORK/prefix"/lib*/libonnxc_runtime.so* >/dev/null || fail "libonnxc_runtime.so not installed"
"$WORK/prefix/bin/onnxc" --version || fail "installed onnxc does not run"

step "installed: CMake package, model compiled at build time by the installed onnxc"
cmake -S "$EXAMPLES" -B "$WORK/ex2" -DCMAKE_PREFIX_PATH="$WORK/prefix" -DONNXC_MODEL_NAME=addb2 \
  -DONNXC_MODEL_ONNX="$MODEL_DIR/model.onnx" >"$WORK/log" 2>&1 || { cat "$WORK/log"; fail "configure against the prefix"; }
grep -q "$WORK/prefix" "$WORK/ex2/CMakeCache.txt" || fail "did not find the installed package"
cmake --build "$WORK/ex2" >"$WORK/log" 2>&1 || { cat "$WORK/log"; fail "build against the prefix"; }
check_run "$WORK/ex2/run_model" -d n=3
grep -q "$WORK/prefix" <<<"$(ldd "$WORK/ex2/run_model")" || fail "run_model does not use the installed runtime"

step "installed: pkg-config Makefile"
make -s -C "$EXAMPLES" MODEL=addb MODEL_DIR="$WORK/addb" PKG_CONFIG_PATH="$PCDIR" OUT="$WORK/run_model_mk2" ||
  fail "make against the prefix"
check_run "$WORK/run_model_mk2"
grep -q "$WORK/prefix" <<<"$(ldd "$WORK/run_model_mk2")" || fail "run_model (make) does not use the installed runtime"
echo PASS
