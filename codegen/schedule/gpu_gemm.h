// GEMM on CUDA targets: the thread-block tiling of the matmul accumulator and its epilogue. The
// CPU register-blocked kernels live in gemm.cpp; schedule_gemm dispatches here for GPU targets.
#pragma once

#include <Halide.h>

#include "codegen/schedule/gemm.h"
#include "codegen/schedule/target_desc.h"

namespace onnxc::codegen {

// A thread block computes block_cols × block_rows outputs; each thread holds thread_cols ×
// thread_rows accumulators in registers (its columns one vector: a 16-byte load of B per k step
// when B is a constant packed into block_cols-wide panels), and the k loop is unrolled k_unroll
// times.
struct GpuGemmTile {
  int block_cols = 64, block_rows = 16;
  int thread_cols = 4, thread_rows = 8;
  int k_unroll = 4;
  int threads() const { return (block_cols / thread_cols) * (block_rows / thread_rows); }
};

// The tile for a GPU target (d.gpu). Thread counts stay a whole number of warps.
GpuGemmTile gpu_gemm_tile(const TargetDesc& d);

// The schedule: `out` (n, m, batch..) tiled into thread blocks over (n, m) and batch, acc computed
// per thread. Outputs that do not tile like acc (a 1-D operand, a reordering epilogue) compute acc
// whole with one thread per element.
void schedule_gemm_gpu(GemmFuncs g, Halide::Func out, const Halide::Target& t);

}  // namespace onnxc::codegen
