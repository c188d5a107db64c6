// GEMM on CUDA targets: thread blocks over output tiles, operand tiles staged in shared memory per
// step of k, each thread's outputs in registers. The CPU register-blocked kernels live in gemm.cpp;
// schedule_gemm dispatches here for GPU targets.
#pragma once

#include <Halide.h>

#include "codegen/schedule/gemm.h"
#include "codegen/schedule/target_desc.h"

namespace onnxc::codegen {

// A thread block is one warp computing block_cols × block_rows outputs: each of its 32 lanes holds
// thread_cols × block_rows accumulators in registers (its columns one vector: a 16-byte shared-memory
// load of B per k step, conflict-free across the warp). Per step of k_tile, the warp first copies a
// k_tile × block_rows tile of A and a block_cols × k_tile tile of B into shared memory, then every
// lane runs k_tile rank-1 updates of its register block out of shared memory.
struct GpuGemmTile {
  int block_cols = 128, block_rows = 16;
  int thread_cols = 4;  // block_cols / thread_cols is the warp's 32 lanes
  int k_tile = 16;
  int lanes() const { return block_cols / thread_cols; }
  int accumulators() const { return thread_cols * block_rows; }
  // Shared memory a block holds: one tile of A and one of B (4-byte elements).
  int shared_bytes() const { return 4 * k_tile * (block_rows + block_cols); }
};

// The tile for a GPU target (d.gpu). Thread counts stay a whole number of warps.
GpuGemmTile gpu_gemm_tile(const TargetDesc& d);

// The schedule: `out` (n, m, batch..) tiled into thread blocks over (n, m) and batch. Outputs that do
// not tile like acc (a 1-D operand, a reordering epilogue) compute acc whole with one thread per
// element.
void schedule_gemm_gpu(GemmFuncs g, Halide::Func out, const Halide::Target& t);

}  // namespace onnxc::codegen
