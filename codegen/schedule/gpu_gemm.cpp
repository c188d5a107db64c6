// CUDA GEMM schedule (see gpu_gemm.h).
//
// Loop nest of `out` (outermost first):
//   gpu block (batch..), gpu block row tile bm, gpu block column tile bn
//     gpu thread (tm, tn): block_rows/thread_rows × block_cols/thread_cols threads
//       acc[thread_rows][thread_cols] = 0                       -- registers
//       for k (unrolled k_unroll): one vector of B (thread_cols wide), thread_rows values of A,
//                                  thread_rows × thread_cols FMAs
//       out = epilogue(acc)                                     -- vector stores
// A warp's threads read adjacent column vectors of one k row of B (coalesced; contiguous in the
// packed panels of a constant B) and share the A values of their rows (one load per row, served
// to the warp by L1). Each thread does thread_rows·thread_cols FMAs per 1 + thread_rows loads.
#include "codegen/schedule/gpu_gemm.h"

#include "codegen/schedule/schedule.h"

namespace onnxc::codegen {

using Halide::Func;
using Halide::TailStrategy;
using Halide::Var;

GpuGemmTile gpu_gemm_tile(const TargetDesc& d) {
  (void)d;  // one tile for every CUDA capability onnxc targets (sm_80+): 32 threads of 4 × 8
  return GpuGemmTile{};
}


void schedule_gemm_gpu(GemmFuncs g, Func out, const Halide::Target& t) {
  Var an = g.acc.args()[0], am = g.acc.args()[1];
  Var bn("gemm_bn"), bm("gemm_bm"), tn("gemm_tn"), tm("gemm_tm"), ni("gemm_ni"), mi("gemm_mi");
  if (!g.output_matches() || out.dimensions() != g.acc.dimensions()) {
    g.acc.compute_root().gpu_tile(an, am, bn, bm, tn, tm, 32, 8, TailStrategy::GuardWithIf);
    g.acc.update().gpu_tile(an, am, bn, bm, tn, tm, 32, 8, TailStrategy::GuardWithIf);
    if (g.b_stage.defined()) g.b_stage.compute_root();
    schedule_output(out, KernelClass::Elementwise, t);
    return;
  }
  const GpuGemmTile tile = gpu_gemm_tile(describe(t));
  // Vector loads and FMAs for float32 only: LLVM 14's NVPTX backend crashes on the vectorized
  // float64 block (ONNX's einsum batch-matmul test), and other types gain little from it.
  const bool vec = g.acc.output_types()[0] == Halide::Float(32);
  std::vector<Var> args = out.args();
  Var n = args[0], m = args[1];
  out.split(n, bn, tn, tile.block_cols, TailStrategy::GuardWithIf)
      .split(m, bm, tm, tile.block_rows, TailStrategy::GuardWithIf)
      .split(tn, tn, ni, tile.thread_cols)
      .split(tm, tm, mi, tile.thread_rows)
      .reorder(ni, mi, tn, tm, bn, bm)
      .gpu_blocks(bn, bm)
      .gpu_threads(tn, tm)
      .unroll(ni)
      .unroll(mi);
  if (vec) out.vectorize(ni);
  std::vector<Var> batch(args.begin() + 2, args.end());
  if (!batch.empty()) out.gpu_blocks(fuse_vars(out, batch));
  for (size_t i = 2; i < g.acc.args().size(); ++i) g.acc.bound_extent(g.acc.args()[i], 1);
  g.acc.compute_at(out, tn)
      .bound_extent(an, tile.thread_cols)
      .bound_extent(am, tile.thread_rows)
      .store_in(Halide::MemoryType::Register)
      .unroll(an)
      .unroll(am);
  if (vec) g.acc.vectorize(an);
  Halide::RVar ko("gemm_ko"), ki("gemm_ki");
  g.acc.update()
      .split(g.k.x, ko, ki, tile.k_unroll, TailStrategy::GuardWithIf)
      .reorder(an, am, ki, ko)
      .unroll(an)
      .unroll(am)
      .unroll(ki);
  if (vec) g.acc.update().vectorize(an);
  if (g.b_stage.defined()) g.b_stage.compute_root();
}

}  // namespace onnxc::codegen
