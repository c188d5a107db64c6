// CUDA GEMM schedules (see gpu_gemm.h): two forms, chosen by name (ONNXC_CUDA_GEMM).
//
// SharedWarp (smem128, the default), with a 128-column × 16-row one-warp block:
//   gpu block (batch..), gpu block row tile bm, gpu block column tile bn
//     acc = 0                                   lane: 4 columns (one vector) × 16 rows, registers
//     for ko (k / 16):
//       a_tile[16 rows][16 k]   shared memory   each lane loads float4s of A's rows
//       b_tile[16 k][128 cols]  shared memory   each lane loads float4s of B's k rows
//       (barrier)
//       for ki (16, unrolled), per lane:        1 vector of B, 16 values of A (broadcast), 64 FMAs
//       (barrier)
//     out = epilogue(acc)                       lane: 16 vector stores
// acc is a block-level Func stored in registers: Halide stripes a block-level register allocation
// across the lanes of a warp (each lane keeps only the elements it stores), but not across warps,
// whose share would be indexed by the warp and so land in local memory; hence one warp per block.
// Each stage also runs inside a loop over GPU threads of extent 1: that loop is what makes Halide put
// a barrier between the stores into a shared tile and the loads from it (it puts none between lanes,
// which it assumes run in lockstep, as GPUs since Volta no longer guarantee).
//
// Thread (tile64, reg64, reg128, reg128x128), e.g. reg128: 128-column × 64-row blocks of 16 × 8 threads:
//   gpu block (batch..), bm, bn; gpu thread (tm, tn)
//     acc[8 rows][8 cols] = 0                   registers of this thread
//     for ko (k / 8):
//       a[8 rows][8 k], b[8 k][8 cols]          registers of this thread, loaded from global (L1)
//       for ki (8, unrolled): 64 FMAs
//     out = epilogue(acc)                       vector stores
// No shared memory and no barriers: the threads of a block that share rows of A or columns of B
// read them through L1. Every allocation is inside the thread loops, so each is the thread's own.
//
// Tiles past the last row, column or k are loaded from clamped indices (matmul.cpp) and never stored.
#include "codegen/schedule/gpu_gemm.h"

#include <algorithm>
#include <cstdlib>

#include "codegen/schedule/schedule.h"
#include "ir/error.h"

namespace onnxc::codegen {

using Halide::Func;
using Halide::TailStrategy;
using Halide::Var;

const std::vector<GpuGemmTile>& gpu_gemm_variants() {
  using F = GpuGemmTile::Form;
  static const std::vector<GpuGemmTile> v = {
      // name, form, block cols × rows, thread cols × rows, k step. The first is the default: reg64k4
      // measured fastest on BERT on an H100 (2026-11-27, docs/gpu.md: b8 s128 28.7 ms against smem128's
      // 64.3); tile64 was level with it on the products alone.
      {"reg64k4", F::Thread, 64, 64, 4, 8, 4},         // 128 threads of 4 × 8, steps of 4 k
      {"smem128", F::SharedWarp, 128, 16, 4, 16, 16},  // one warp, 9 KiB of shared memory
      {"tile64", F::Thread, 64, 16, 4, 8, 4},          // 32 threads of 4 × 8 (the session-10 tiling)
      {"reg64", F::Thread, 64, 64, 4, 8, 8},           // 128 threads of 4 × 8
      {"reg128", F::Thread, 128, 64, 8, 8, 8},         // 128 threads of 8 × 8
      {"reg128x128", F::Thread, 128, 128, 8, 8, 8},    // 256 threads of 8 × 8
      {"reg128k4", F::Thread, 128, 64, 8, 8, 4},       // reg128 with steps of 4 k
  };
  return v;
}

GpuGemmTile gpu_gemm_tile(const TargetDesc& d) {
  (void)d;  // the same forms for every CUDA capability onnxc targets (sm_80+)
  const auto& v = gpu_gemm_variants();
  const char* env = std::getenv("ONNXC_CUDA_GEMM");
  if (!env || !*env) return v.front();
  std::string known;
  for (const GpuGemmTile& t : v) {
    if (t.name == std::string(env)) return t;
    known += std::string(known.empty() ? "" : ", ") + t.name;
  }
  user_error << "ONNXC_CUDA_GEMM=" << env << " names no CUDA GEMM schedule (known: " << known << ")";
  return v.front();
}

namespace {

// One thread per element of acc, computed whole: outputs that do not tile like acc.
void schedule_whole_gpu(GemmFuncs g, Func out, const Halide::Target& t) {
  Var an = g.acc.args()[0], am = g.acc.args()[1];
  Var bn("gemm_bn"), bm("gemm_bm"), tn("gemm_tn"), tm("gemm_tm");
  g.acc.compute_root().gpu_tile(an, am, bn, bm, tn, tm, 32, 8, TailStrategy::GuardWithIf);
  g.acc.update().gpu_tile(an, am, bn, bm, tn, tm, 32, 8, TailStrategy::GuardWithIf);
  if (g.b_stage.defined()) g.b_stage.compute_root();
  schedule_output(out, KernelClass::Elementwise, t);
}

// A lane's register block of one stage over columns `n` and rows `m` (bound to the block tile):
// lanes over column vectors, the rows unrolled, inside the one-thread warp loop. An update stage
// passes its k loops: `ki` runs per lane inside the block, `ko` at block level outside the warp.
void lane_block(Halide::Stage s, const Var& n, const Var& m, const GpuGemmTile& g, bool vec,
                const Halide::RVar* ki = nullptr, const Halide::RVar* ko = nullptr) {
  Var lane("gemm_lane"), nv("gemm_nv"), warp("gemm_warp"), mi("gemm_mi");
  s.split(n, lane, nv, g.thread_cols).split(m, warp, mi, g.block_rows);
  if (ki) s.reorder(nv, mi, *ki, lane, warp, *ko).unroll(*ki);
  else s.reorder(nv, mi, lane, warp);
  s.gpu_threads(warp).gpu_lanes(lane).unroll(mi);
  if (vec) s.vectorize(nv);
  else s.unroll(nv);
}

// A tile Func (its first two args the tile's dims, any others one batch index) loaded once per k
// step by the warp: `inner` (the contiguous dim of its source) `inner_ext` wide, `outer` `outer_ext`
// long, `vec` inner elements per lane and load, the (inner / vec × outer) slots dealt to the lanes.
void stage_tile(Func tile, Func acc, Halide::RVar ko, const Var& inner, int inner_ext, const Var& outer, int outer_ext,
                int vec, const GpuGemmTile& g) {
  Var io("st_io"), ii("st_ii"), f("st_f"), rep("st_rep"), lane("st_lane"), warp("st_warp");
  tile.compute_at(acc, ko).bound_extent(inner, inner_ext).bound_extent(outer, outer_ext);
  for (size_t i = 2; i < tile.args().size(); ++i) tile.bound_extent(tile.args()[i], 1);
  tile.split(inner, io, ii, vec)
      .fuse(io, outer, f)
      .split(f, rep, lane, g.lanes())
      .split(rep, rep, warp, 1)
      .reorder(ii, lane, warp, rep)
      .gpu_threads(warp)
      .gpu_lanes(lane)
      .unroll(rep);
  if (vec > 1) tile.vectorize(ii);
  else tile.unroll(ii);
}

// The Thread form: acc computed inside the thread loops, so each thread's allocation is its own
// (registers: every index into it is an unrolled or vectorized loop's), and the operand values of
// one k step staged per thread the same way (a_tile, b_tile: vector loads along k of A's rows and
// along n of B's k rows, which L1 serves to the threads that share them). Vectors are 4 wide: LLVM
// 14's NVPTX backend emits 16-byte loads for those, but splits 8-wide ones into scalar loads.
void schedule_thread(GemmFuncs g, Func out, GpuGemmTile tile, bool vec) {
  // Other types than f32 (scalar code; f64 takes two registers an element): at most 4 × 4 per
  // thread, as an 8 × 8 block of f64 spilled.
  if (!vec) tile.thread_cols = std::min(tile.thread_cols, 4), tile.thread_rows = std::min(tile.thread_rows, 4);
  std::vector<Var> args = out.args();
  Var n = args[0], m = args[1], bn("gemm_bn"), bm("gemm_bm"), tn("gemm_tn"), tm("gemm_tm"), ni("gemm_ni"),
      mi("gemm_mi");
  out.split(n, bn, tn, tile.block_cols, TailStrategy::GuardWithIf)
      .split(m, bm, tm, tile.block_rows, TailStrategy::GuardWithIf)
      .split(tn, tn, ni, tile.thread_cols)
      .split(tm, tm, mi, tile.thread_rows)
      .reorder(ni, mi, tn, tm, bn, bm)
      .gpu_blocks(bn, bm)
      .gpu_threads(tn, tm)
      .unroll(ni)
      .unroll(mi);
  if (vec) out.vectorize(ni, 4).unroll(ni);
  std::vector<Var> batch(args.begin() + 2, args.end());
  if (!batch.empty()) out.gpu_blocks(fuse_vars(out, batch));

  Var an = g.acc.args()[0], am = g.acc.args()[1];
  for (size_t i = 2; i < g.acc.args().size(); ++i) g.acc.bound_extent(g.acc.args()[i], 1);
  g.acc.compute_at(out, tn)
      .bound_extent(an, tile.thread_cols)
      .bound_extent(am, tile.thread_rows)
      .store_in(Halide::MemoryType::Register)
      .unroll(an)
      .unroll(am);
  if (vec) g.acc.vectorize(an, 4).unroll(an);
  Halide::RVar ko("gemm_ko"), ki("gemm_ki");
  Halide::Stage update = g.acc.update();
  update.split(g.k.x, ko, ki, tile.k_tile, TailStrategy::GuardWithIf).reorder(an, am, ki, ko).unroll(an).unroll(am).unroll(ki);
  if (vec) update.vectorize(an, 4).unroll(an);
  if (g.b_stage.defined()) g.b_stage.compute_root();
  if (!g.a_tile.defined()) return;

  // One k step's operands per thread: A's thread_rows × k_tile and B's k_tile × thread_cols.
  auto stage = [&](Func f, int inner_ext, int outer_ext) {
    Var inner = f.args()[0], outer = f.args()[1];
    f.compute_at(g.acc, ko)
        .store_in(Halide::MemoryType::Register)
        .bound_extent(inner, inner_ext)
        .bound_extent(outer, outer_ext)
        .unroll(outer);
    for (size_t i = 2; i < f.args().size(); ++i) f.bound_extent(f.args()[i], 1);
    if (vec) f.vectorize(inner, 4).unroll(inner);
    else f.unroll(inner);
  };
  stage(g.a_tile, tile.k_tile, tile.thread_rows);
  stage(g.b_tile, tile.thread_cols, tile.k_tile);
}

}  // namespace

void schedule_gemm_gpu(GemmFuncs g, Func out, const Halide::Target& t) {
  if (!g.output_matches() || out.dimensions() != g.acc.dimensions() || !g.a_tile.defined()) {
    schedule_whole_gpu(g, out, t);
    return;
  }
  const GpuGemmTile tile = gpu_gemm_tile(describe(t));
  // Vector loads and FMAs for float32 only: LLVM 14's NVPTX backend crashes on the vectorized
  // float64 block (ONNX's einsum batch-matmul test), and other types gain little from it.
  const bool vec = g.acc.output_types()[0] == Halide::Float(32);
  if (tile.form == GpuGemmTile::Form::Thread) {
    schedule_thread(g, out, tile, vec);
    return;
  }
  std::vector<Var> args = out.args();
  Var n = args[0], m = args[1], bn("gemm_bn"), bm("gemm_bm"), nt("gemm_nt"), mt("gemm_mt");
  out.split(n, bn, nt, tile.block_cols, TailStrategy::GuardWithIf)
      .split(m, bm, mt, tile.block_rows, TailStrategy::GuardWithIf)
      .reorder(nt, mt, bn, bm)
      .gpu_blocks(bn, bm);
  lane_block(out, nt, mt, tile, vec);
  std::vector<Var> batch(args.begin() + 2, args.end());
  if (!batch.empty()) out.gpu_blocks(fuse_vars(out, batch));

  // The block's accumulators, over the whole tile (past the last row or column too).
  Var an = g.acc.args()[0], am = g.acc.args()[1];
  g.acc.compute_at(out, bn).store_in(Halide::MemoryType::Register);
  g.acc.bound_extent(an, tile.block_cols).bound_extent(am, tile.block_rows);
  for (size_t i = 2; i < g.acc.args().size(); ++i) g.acc.bound_extent(g.acc.args()[i], 1);
  lane_block(g.acc, an, am, tile, vec);
  Halide::RVar ko("gemm_ko"), ki("gemm_ki");
  Halide::Stage update = g.acc.update();
  update.split(g.k.x, ko, ki, tile.k_tile, TailStrategy::GuardWithIf);
  lane_block(update, an, am, tile, vec, &ki, &ko);

  // The operand tiles of one k step, in shared memory (a block-level allocation's default).
  const int v = vec ? 4 : 1;
  stage_tile(g.a_tile, g.acc, ko, g.a_tile.args()[0], tile.k_tile, g.a_tile.args()[1], tile.block_rows, v, tile);
  stage_tile(g.b_tile, g.acc, ko, g.b_tile.args()[0], tile.block_cols, g.b_tile.args()[1], tile.k_tile, v, tile);
}

}  // namespace onnxc::codegen
