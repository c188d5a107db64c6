#!/usr/bin/env bash
# What ptxas makes of onnxc's CUDA kernels, without a GPU: registers, spills, shared memory and
# barriers per kernel, for one architecture. KERNELS picks the test whose PTX Halide prints with
# HL_DEBUG_CODEGEN=1: `gemm`, Gemm.CudaScheduleCompiles (every GEMM class the CUDA schedule handles
# or falls back from; needs a built gemm_tests), or `attention`, GpuAttention.CudaKernelKeepsScoresOnChip
# (the streaming attention kernel: causal, run-time lengths (tiles and the one-row copy), a float
# mask, float16; each built for sm_80 and sm_86, so ARCH sm_80 lists the sm_80 builds only;
# needs a built codegen_tests). Needs ptxas (CUDA
# toolkit).
#
#   bench/gpu/ptx_report.sh [BUILD_DIR] [ARCH] [KERNELS]     (defaults: build, sm_90, gemm)
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${1:-build}
ARCH=${2:-sm_90}
PTXAS=$(command -v ptxas || echo /usr/local/cuda/bin/ptxas)
[ -x "$PTXAS" ] || { echo "ptx_report: ptxas not found (install the CUDA toolkit)" >&2; exit 77; }
KERNELS=${3:-gemm}
case "$KERNELS" in
  gemm) TEST_BIN=gemm_tests FILTER=Gemm.CudaScheduleCompiles ;;
  attention) TEST_BIN=codegen_tests FILTER=GpuAttention.CudaKernelKeepsScoresOnChip ;;
  *) echo "ptx_report: KERNELS is gemm or attention, not $KERNELS" >&2; exit 2 ;;
esac
[ -x "$BUILD/tests/codegen/$TEST_BIN" ] || { echo "ptx_report: build $BUILD/tests/codegen/$TEST_BIN first" >&2; exit 1; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
HL_DEBUG_CODEGEN=1 "$BUILD/tests/codegen/$TEST_BIN" --gtest_filter=$FILTER > "$dir/log" 2>&1 ||
  { tail -5 "$dir/log"; exit 1; }
# One PTX module per "PTX kernel:" line, up to the next line of Halide's own debug output (capitalized
# words; PTX labels such as LBB0_2: are kept).
awk -v d="$dir" '/^PTX kernel:/ {n++; f = sprintf("%s/m%02d.ptx", d, n); on = 1; next}
                 on && /^[A-Z][a-z]/ && !/^[A-Za-z0-9_$]+:$/ {on = 0}
                 on {print > f}' "$dir/log"
# smem is static shared memory only: Halide sizes the shared tiles at launch (dynamic shared memory:
# for the GEMM 4 · k_tile · (block_rows + block_cols) bytes, 9 KiB for the default tile; for the
# attention the size halide_cuda_run is given, 32 KiB for heads of 64), so it reads 0.
printf "%-58s %5s %6s %6s %5s\n" "kernel ($ARCH)" "regs" "spill" "smem" "bars"
for m in "$dir"/m*.ptx; do
  "$PTXAS" -v -arch="$ARCH" "$m" -o /dev/null 2>&1 | awk '
    /Compiling entry function/ {match($0, /\x27[^\x27]+\x27/); k = substr($0, RSTART + 1, RLENGTH - 2); smem = 0}
    /bytes spill stores/ {spill = $(NF - 7)}
    /Used [0-9]+ registers/ {
      for (i = 1; i <= NF; i++) { if ($(i + 1) ~ /^registers/) r = $i; if ($(i + 1) ~ /^barriers/) b = $i; if ($(i + 1) == "bytes" && $(i + 2) == "smem,") smem = $i }
      printf "%-58s %5s %6s %6s %5s\n", k, r, spill, smem, b }'
done
