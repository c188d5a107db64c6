// GEMM on CUDA targets: thread blocks over output tiles, each thread's outputs in registers. The CPU
// register-blocked kernels live in gemm.cpp; schedule_gemm dispatches here for GPU targets.
//
// Several forms are kept while their speed on a GPU is being measured; ONNXC_CUDA_GEMM (read when a
// model is compiled) picks one by name, see gpu_gemm_variants().
#pragma once

#include <Halide.h>

#include <string>
#include <vector>

#include "codegen/schedule/gemm.h"
#include "codegen/schedule/target_desc.h"

namespace onnxc::codegen {

struct GpuGemmTile {
  // SharedWarp: a thread block is one warp computing block_cols × block_rows outputs; each of its 32
  // lanes holds thread_cols × block_rows accumulators (a block-level register allocation that Halide
  // stripes across the lanes). Per step of k_tile, the warp copies a k_tile × block_rows tile of A
  // and a block_cols × k_tile tile of B into shared memory, then every lane runs k_tile rank-1
  // updates of its register block out of shared memory.
  // Thread: a thread block of (block_cols / thread_cols) × (block_rows / thread_rows) threads, each
  // computing its own thread_cols × thread_rows outputs in a per-thread register allocation, reading
  // A and B from global memory (L1) per step of k_tile: thread_rows rows of A (k_tile values each,
  // vector loads along k) and k_tile rows of B (thread_cols values each, vector loads along n).
  enum class Form { SharedWarp, Thread };
  const char* name = "smem128";
  Form form = Form::SharedWarp;
  int block_cols = 128, block_rows = 16;
  int thread_cols = 4;  // SharedWarp: block_cols / thread_cols is the warp's 32 lanes
  int thread_rows = 16;  // SharedWarp: block_rows
  int k_tile = 16;
  int lanes() const { return block_cols / thread_cols; }
  int threads() const { return form == Form::SharedWarp ? lanes() : lanes() * (block_rows / thread_rows); }
  int accumulators() const { return thread_cols * thread_rows; }
  // Shared memory a block holds: one tile of A and one of B (4-byte elements); none for Thread.
  int shared_bytes() const { return form == Form::SharedWarp ? 4 * k_tile * (block_rows + block_cols) : 0; }
};

// The named forms, the default first.
const std::vector<GpuGemmTile>& gpu_gemm_variants();

// The tile for a GPU target (d.gpu): the form ONNXC_CUDA_GEMM names, else the default. An unknown
// name is an error that lists the known ones.
GpuGemmTile gpu_gemm_tile(const TargetDesc& d);

// The schedule: `out` (n, m, batch..) tiled into thread blocks over (n, m) and batch. Outputs that do
// not tile like acc (a 1-D operand, a reordering epilogue) compute acc whole with one thread per
// element.
void schedule_gemm_gpu(GemmFuncs g, Halide::Func out, const Halide::Target& t);

}  // namespace onnxc::codegen
