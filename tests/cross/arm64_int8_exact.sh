#!/usr/bin/env bash
# The int8 kernel's int32 sums are the same on ARM with dotprod (sdot on rows stored as q - 128, with
# 128·Σ_k W added back) as on x86 (vpdpbusd or vpmaddwd on u8 rows): MODEL_DIR's model is compiled
# with `--quantize dynamic-int8:force` for this machine, its outputs on each test_data_set become
# the reference, and arm64_test.sh runs the arm64-dotprod library (`--quantize dynamic-int8`, not
# forced: it must quantize there) against them under qemu at tolerances far below one unit of any
# sum (one unit moves an output by s_w·step, ~1e-4 of it here): float rounding of the rescale may
# differ between the two, an integer may not.
#   arm64_int8_exact.sh ONNXC MODEL_DIR
# Exit 0 match, 1 mismatch or failure, 77 skipped (no cross compiler, no qemu-aarch64, or an x86 host
# without AVX-512 VNNI).
set -uo pipefail
# Like for like needs the same 8-bit products on both sides: an x86 host without AVX-512 VNNI (AVX2)
# quantizes every product as int16 pairs (sqrt(2^31/K) levels, not 255 and 127), so its outputs are
# no reference for the ARM library's sums. cross.arm64_dotprod_int8 still checks ARM against the
# float reference there.
if ! grep -qw avx512_vnni /proc/cpuinfo; then
  echo "SKIPPED: this x86 host has no AVX-512 VNNI, so its int8 library (int16 pairs) cannot be the exact reference"
  exit 77
fi
ONNXC="$(realpath "$1")"; MODEL_DIR="$(realpath "$2")"
HERE="$(cd "$(dirname "$0")" && pwd)"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/onnxc-arm64-int8-XXXXXX")"
trap 'rm -rf "$WORK"' EXIT
"$ONNXC" compile "$MODEL_DIR/model.onnx" -o "$WORK/x86" --name x86 --quantize dynamic-int8:force -q ||
  { echo "FAIL: compiling $MODEL_DIR for this machine"; exit 1; }
mkdir -p "$WORK/ref"
cp "$MODEL_DIR/model.onnx" "$WORK/ref/"
for set in "$MODEL_DIR"/test_data_set_*; do
  out="$WORK/ref/$(basename "$set")"
  mkdir -p "$out"
  cp "$set"/input_*.pb "$out/"
  inputs=()
  for f in "$out"/input_*.pb; do inputs+=(-i "$f"); done
  "$ONNXC" run "$WORK/x86/libx86.so" "${inputs[@]}" -o "$out" -q ||
    { echo "FAIL: running the x86 int8 library on $set"; exit 1; }
done
ARM64_TARGET=arm64-dotprod ARM64_COMPILE_ARGS="--quantize dynamic-int8" \
  exec bash "$HERE/arm64_test.sh" "$ONNXC" "$WORK/ref" -- --rtol 1e-5 --atol 1e-6
