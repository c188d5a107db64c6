#!/usr/bin/env bash
# What ptxas makes of onnxc's CUDA GEMM kernels, without a GPU: registers, spills, shared memory and
# barriers per kernel, for one architecture. The kernels are those of the GEMM test
# Gemm.CudaScheduleCompiles (every GEMM class the CUDA schedule handles or falls back from), whose
# PTX Halide prints with HL_DEBUG_CODEGEN=1. Needs a built gemm_tests and ptxas (CUDA toolkit).
#
#   bench/gpu/ptx_report.sh [BUILD_DIR] [ARCH]      (defaults: build, sm_90)
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${1:-build}
ARCH=${2:-sm_90}
PTXAS=$(command -v ptxas || echo /usr/local/cuda/bin/ptxas)
[ -x "$PTXAS" ] || { echo "ptx_report: ptxas not found (install the CUDA toolkit)" >&2; exit 77; }
[ -x "$BUILD/tests/codegen/gemm_tests" ] || { echo "ptx_report: build $BUILD/tests/codegen/gemm_tests first" >&2; exit 1; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
HL_DEBUG_CODEGEN=1 "$BUILD/tests/codegen/gemm_tests" --gtest_filter=Gemm.CudaScheduleCompiles > "$dir/log" 2>&1 ||
  { tail -5 "$dir/log"; exit 1; }
# One PTX module per "PTX kernel:" line, up to the next line of Halide's own debug output (capitalized
# words; PTX labels such as LBB0_2: are kept).
awk -v d="$dir" '/^PTX kernel:/ {n++; f = sprintf("%s/m%02d.ptx", d, n); on = 1; next}
                 on && /^[A-Z][a-z]/ && !/^[A-Za-z0-9_$]+:$/ {on = 0}
                 on {print > f}' "$dir/log"
# smem is static shared memory only: Halide sizes the GEMM's shared tiles at launch (dynamic shared
# memory, 4 · k_tile · (block_rows + block_cols) bytes: 9 KiB for the default tile), so it reads 0.
printf "%-58s %5s %6s %6s %5s\n" "kernel ($ARCH)" "regs" "spill" "smem" "bars"
for m in "$dir"/m*.ptx; do
  "$PTXAS" -v -arch="$ARCH" "$m" -o /dev/null 2>&1 | awk '
    /Compiling entry function/ {match($0, /\x27[^\x27]+\x27/); k = substr($0, RSTART + 1, RLENGTH - 2); smem = 0}
    /bytes spill stores/ {spill = $(NF - 7)}
    /Used [0-9]+ registers/ {
      for (i = 1; i <= NF; i++) { if ($(i + 1) ~ /^registers/) r = $i; if ($(i + 1) ~ /^barriers/) b = $i; if ($(i + 1) == "bytes" && $(i + 2) == "smem,") smem = $i }
      printf "%-58s %5s %6s %6s %5s\n", k, r, spill, smem, b }'
done
