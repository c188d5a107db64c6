#!/usr/bin/env bash
# End-to-end tests, run by ctest (tests/e2e/CMakeLists.txt):
#
#   e2e_test.sh model ONNXC RUNTIME_LIB INCLUDE_DIR MODEL_DIR NAME
#     onnxc compile MODEL_DIR/model.onnx -> libNAME.a/.so + NAME.h; build tests/e2e/e2e_runner.c against
#     libNAME.a and libonnxc_runtime with the system C compiler; run it on every test_data_set_* (one
#     session, every batch/seq) against the framework's references (rtol 1e-4, atol 1e-5); the same
#     through `onnxc compare` on the .so; build and run examples/run_model.c; check dependencies.
#   e2e_test.sh runtime_deps RUNTIME_LIB
#     libonnxc_runtime.so pulls in no LLVM, Halide compiler or protobuf, and exports only onnxc_*.
#
# Exit 0 pass, 1 fail.
set -uo pipefail

HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
CC="${CC:-cc}"
RTOL=1e-4
ATOL=1e-5
FORBIDDEN='LLVM|[Hh]alide|protobuf|libonnx(_proto)?\.so'

fail() {
  echo "FAIL: $*" >&2
  exit 1
}

step() { echo "== $*"; }

# No shared-library dependency on the compiler's world.
check_ldd() {
  local f=$1
  local deps
  deps=$(ldd "$f" 2>&1) || fail "ldd $f: $deps"
  if grep -E "$FORBIDDEN" <<<"$deps"; then fail "$f links against the above"; fi
  echo "$f: ldd clean ($(grep -c '=>' <<<"$deps") libraries)"
}

runtime_deps() {
  local lib=$1
  step "runtime dependencies: $lib"
  check_ldd "$lib"
  local exported
  exported=$(nm -D --defined-only "$lib" | awk '$2 ~ /^[TDBRVW]$/ {print $3}')
  local stray
  stray=$(grep -v '^onnxc_' <<<"$exported" | grep -v -E '^(_init|_fini|_edata|_end|__bss_start)$')
  [[ -z $stray ]] || fail "$lib exports non-onnxc_ symbols: $(tr '\n' ' ' <<<"$stray")"
  echo "$lib exports $(wc -l <<<"$exported") symbols, all onnxc_*"
  nm -D --undefined-only "$lib" | grep -E "$FORBIDDEN|_ZN6Halide|_ZN4llvm|_ZN6google" && fail "$lib needs the symbols above"
  true
}

model() {
  local onnxc=$1 rtlib=$2 include=$3 mdir=$4 name=$5
  local work
  work=$(mktemp -d "${TMPDIR:-/tmp}/onnxc-e2e-$name-XXXXXX")
  trap 'rm -rf "$work"' EXIT
  export ONNXC_CACHE_DIR="${ONNXC_CACHE_DIR:-$work/cache}"
  local rtdir
  rtdir=$(dirname "$rtlib")
  local sets=("$mdir"/test_data_set_*)
  [[ -d ${sets[0]} ]] || fail "no test_data_set_* in $mdir"

  step "compile $mdir/model.onnx"
  "$onnxc" compile "$mdir/model.onnx" -o "$work/lib" --name "$name" || fail "onnxc compile failed"
  for f in "lib$name.a" "lib$name.so" "$name.h"; do [[ -f $work/lib/$f ]] || fail "compile did not write $f"; done

  step "build e2e_runner.c with $CC against lib$name.a and $(basename "$rtlib")"
  "$CC" -std=c11 -O1 -Wall -Wextra -Werror -DONNXC_MODEL="$name" -I"$work/lib" -I"$include" -I"$HERE" \
    "$HERE/e2e_runner.c" "$HERE/tensor_pb.c" "$work/lib/lib$name.a" -L"$rtdir" -lonnxc_runtime \
    -Wl,-rpath,"$rtdir" -lpthread -ldl -lm -o "$work/e2e_runner" || fail "building the C test program failed"

  step "run every data set in one session (rtol $RTOL, atol $ATOL)"
  "$work/e2e_runner" --rtol $RTOL --atol $ATOL "${sets[@]}"
  local rc=$?
  [[ $rc -eq 0 ]] || fail "e2e_runner exit $rc"

  step "onnxc compare on lib$name.so (dlopen)"
  "$onnxc" compare "$work/lib/lib$name.so" "$mdir" --rtol $RTOL --atol $ATOL || fail "onnxc compare failed"

  step "build and run examples/run_model.c"
  "$CC" -std=c11 -O1 -Wall -Wextra -Werror -DONNXC_MODEL="$name" -I"$work/lib" -I"$include" \
    "$ROOT/examples/run_model.c" "$work/lib/lib$name.a" -L"$rtdir" -lonnxc_runtime -Wl,-rpath,"$rtdir" \
    -lpthread -ldl -lm -o "$work/run_model" || fail "building examples/run_model.c failed"
  "$work/run_model" -d batch=2 -d seq=5 -d mem_seq=6 || fail "run_model failed"

  step "dependencies of the artifacts"
  check_ldd "$work/lib/lib$name.so"
  check_ldd "$work/e2e_runner"
  local exported
  exported=$(nm -D --defined-only "$work/lib/lib$name.so" | awk '$2 ~ /^[TDBRVW]$/ {print $3}' |
             grep -v -E '^(_init|_fini|_edata|_end|__bss_start)$' | sort | tr '\n' ' ')
  local want
  want=$(printf '%s\n' "onnxc_model_$name" onnxc_model_entry | sort | tr '\n' ' ')
  [[ $exported == "$want" ]] || fail "lib$name.so exports: $exported (want: $want)"
  if nm -u "$work/lib/lib$name.a" 2>/dev/null | grep -E '_ZN6Halide|_ZN4llvm|_ZN6google|onnx::'; then
    fail "lib$name.a needs the compiler-side symbols above"
  fi
  echo "lib$name.so exports only onnxc_model_$name and onnxc_model_entry; lib$name.a needs no compiler symbols"
}

mode=$1
shift
case $mode in
  model) model "$@" ;;
  runtime_deps) runtime_deps "$@" ;;
  *) fail "unknown mode $mode" ;;
esac
echo "PASS"
