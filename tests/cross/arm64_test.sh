#!/usr/bin/env bash
# ARM64 stays correct: the runtime is cross-built for aarch64, models are compiled with
# `--target arm-64-linux` on this x86-64 machine, linked statically with tests/cross/run_data_sets.c
# and run under qemu-aarch64 against their reference outputs.
#   [ARM64_TARGET=arm64] [ARM64_COMPILE_ARGS=...] [ARM64_EXPECT_LOG=text] arm64_test.sh ONNXC MODEL_OR_TEST_DIR... [-- --rtol R --atol A]
# ARM64_EXPECT_LOG: text the compile must print (a note about the target), else the model fails.
# Each argument is a folder with model.onnx and test_data_set_*. Exit 0 all match, 1 a mismatch or
# failure, 77 skipped (no cross compiler or no qemu-aarch64), with the reason on stdout.
set -uo pipefail
ONNXC="$(realpath "$1")"; shift
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
CC=${ONNXC_CROSS_PREFIX:-aarch64-linux-gnu-}gcc
dirs=() tol=()
while (($#)); do
  if [[ $1 == -- ]]; then shift; tol=("$@"); break; fi
  dirs+=("$1"); shift
done
for tool in "$CC" qemu-aarch64; do
  command -v "$tool" >/dev/null ||
    { echo "SKIPPED: $tool is not installed (Debian: gcc-aarch64-linux-gnu, qemu-user)"; exit 77; }
done
HALIDE_INC=$(dirname "$(find /usr/include -name HalideRuntime.h -path '*halide*' | head -1)")
WORK="$(mktemp -d "${TMPDIR:-/tmp}/onnxc-arm64-XXXXXX")"
trap 'rm -rf "$WORK"' EXIT

# The runtime, as its CMake target builds it, for aarch64.
objs=()
for c in "$ROOT"/runtime/src/*.c; do
  o="$WORK/rt_$(basename "$c" .c).o"
  "$CC" -std=c11 -O2 -fPIC -Wall -c "$c" -I "$ROOT/runtime/include" -I "$HALIDE_INC" -o "$o" ||
    { echo "FAIL: cross-compiling $c"; exit 1; }
  objs+=("$o")
done
ar rcs "$WORK/libonnxc_runtime.a" "${objs[@]}"

failed=0 passed=0
for dir in "${dirs[@]}"; do
  name=m$(echo "$dir" | cksum | cut -d' ' -f1)
  out="$WORK/$name"
  # shellcheck disable=SC2086
  if ! "$ONNXC" compile "$dir/model.onnx" -o "$out" --name "$name" --target "${ARM64_TARGET:-arm64}" \
       ${ARM64_COMPILE_ARGS:-} -q >"$WORK/log" 2>&1; then
    echo "FAIL $dir: compile for ${ARM64_TARGET:-arm64}"; cat "$WORK/log"; failed=$((failed + 1)); continue
  fi
  if [[ -n ${ARM64_EXPECT_LOG:-} ]] && ! grep -qF -- "$ARM64_EXPECT_LOG" "$WORK/log"; then
    echo "FAIL $dir: the compile did not say '$ARM64_EXPECT_LOG'"; cat "$WORK/log"; failed=$((failed + 1)); continue
  fi
  # e_machine (ELF header offset 18) is 183 for AArch64.
  [[ $(od -An -tu2 -j18 -N2 "$out/lib$name.so" | tr -d ' ') == 183 ]] ||
    { echo "FAIL $dir: library is not aarch64"; failed=$((failed + 1)); continue; }
  if ! "$CC" -std=c11 -O1 -static "$HERE/run_data_sets.c" -DONNXC_MODEL="$name" -I "$out" -I "$ROOT/runtime/include" \
       "$out/lib$name.a" "$WORK/libonnxc_runtime.a" -lm -lpthread -ldl -o "$out/run" >"$WORK/log" 2>&1; then
    echo "FAIL $dir: linking the aarch64 runner"; cat "$WORK/log"; failed=$((failed + 1)); continue
  fi
  sets=("$dir"/test_data_set_*)
  if qemu-aarch64 "$out/run" "${tol[@]}" "${sets[@]}" >"$WORK/log" 2>&1; then
    passed=$((passed + 1)); echo "ok   $dir (${#sets[@]} data sets)"
  else
    echo "FAIL $dir: under qemu-aarch64"; cat "$WORK/log"; failed=$((failed + 1))
  fi
done
echo "arm64: $passed passed, $failed failed"
((failed == 0))
