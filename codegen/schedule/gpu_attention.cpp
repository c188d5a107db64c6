// CUDA schedule of the fused attention (see gpu_attention.h).
//
// Loop nest of one thread block (query tile qo of `rows` rows, head h, batch b), outermost first;
// every stage inside the block runs on the block's rows × lanes threads, Halide placing a barrier
// between consecutive stages:
//   q_tile[rows][dk]            shared   the scaled query rows, read once
//   state[rows][dv] × 3         shared   running max, sum and accumulator per output element
//   for each key tile (keys keys; tiles wholly above a causal diagonal skipped):
//     keys[keys][dk], values[keys][dv]   shared   K and V rows of the tile (clamped past the last key)
//     scores[rows][keys]        shared   one score per thread: Q·Kᵀ over dk in a register, then
//                                        scale, softcap and masks
//     tile max, exp(score - max), tile sum   shared, one row per thread
//     weight, block max and sum (one tile per block of the CPU form's merge)
//     state update              per thread and head-dim element: probs · V over the tile's keys in
//                               a register, then the online-softmax rescale and merge
//   y[rows][dv] = acc / sum     per thread (a fully masked row as the CPU kernel gives it)
// The score matrix never leaves the chip; device memory holds only Q, K, V, the mask and y.
// Every value is the CPU streaming kernel's expression (codegen/lower/attention.cpp builds both),
// so masks, NaN and fully masked rows behave alike; only the order of the contractions differs.
#include "codegen/schedule/gpu_attention.h"

#include <algorithm>

namespace onnxc::codegen {

using Halide::Func;
using Halide::MemoryType;
using Halide::RVar;
using Halide::TailStrategy;
using Halide::Var;

GpuAttentionTile gpu_attention_tile(const TargetDesc& d) {
  (void)d;  // one tile for every CUDA capability onnxc targets (sm_80+)
  return GpuAttentionTile{};
}

void size_attention_stages_gpu(AttentionStages& s, const TargetDesc& d) {
  const GpuAttentionTile g = gpu_attention_tile(d);
  if (s.tq > 1) s.tq = g.rows;
  s.tk = g.keys;
  s.block = 1;
}

bool gpu_streams_attention(const AttentionStages& s) {
  // 48 KiB: what every CUDA device gives a block without opting in to more.
  constexpr int kSharedBytes = 48 << 10;
  if (s.head_dim_k <= 0 || s.head_dim_v <= 0) return false;
  // Heads that fill the 32 lanes of a row. On an H100 (2026-11-27) heads of 8 and 16 gave wrong
  // values once there was more than one key tile (the encoder layer at 64 keys, SAM's global
  // attention), while heads of 64 matched at up to 128 keys (BERT) and the loop nests match on the
  // host at every size: a GPU-only fault in the partly idle lanes, not found yet (docs/gpu.md). Such
  // heads take the materialized form, which matched on the GPU.
  if (s.head_dim_k % 32 != 0 || s.head_dim_v % 32 != 0) return false;
  const GpuAttentionTile g;
  return g.shared_bytes(s.tq, s.head_dim_k, s.head_dim_v) <= kSharedBytes;
}

namespace {

int per_thread(int extent, int threads) { return std::max(1, (extent + threads - 1) / threads); }

// The thread loops of one stage: `x` (`ext_x` elements) over the block's lanes, each lane a run of
// neighbouring elements (the unrolled loop attn_xr: a thread's values stay contiguous, so a value
// computed per thread covers one interval), and `y`, when given, over its rows likewise. `inner`
// (a reduction over keys or the head dim) runs inside each thread; `outer` (the loop over key
// tiles) stays outside the thread loops, at block level.
void threads(Halide::Stage st, const Var& x, int ext_x, const Var* y, int ext_y, const GpuAttentionTile& g,
             const RVar* inner = nullptr, const RVar* outer = nullptr) {
  Var xt("attn_xt"), xr("attn_xr"), yt("attn_yt"), yr("attn_yr");
  st.split(x, xt, xr, per_thread(ext_x, g.lanes), TailStrategy::GuardWithIf);
  std::vector<Halide::VarOrRVar> order;
  if (inner) order.push_back(*inner);
  order.push_back(xr);
  if (y) {
    st.split(*y, yt, yr, per_thread(ext_y, g.rows), TailStrategy::GuardWithIf);
    order.push_back(yr);
  }
  order.push_back(xt);
  if (y) order.push_back(yt);
  if (outer) order.push_back(*outer);
  st.reorder(order);
  st.unroll(xr);
  if (y) st.unroll(yr).gpu_threads(xt, yt);
  else st.gpu_threads(xt);
}

// A Func held in the block's shared memory, computed at `at` with every dim bounded (`extents` in
// argument order; 1 for the dims a block sees one value of).
void shared(Func f, const Halide::LoopLevel& at, const std::vector<int>& extents) {
  f.compute_at(at).store_in(MemoryType::GPUShared);
  const std::vector<Var> args = f.args();
  for (size_t i = 0; i < args.size(); ++i) f.bound_extent(args[i], i < extents.size() ? extents[i] : 1);
}

// A per-row statistic (qi, tile/block...) with a reduction `r` over keys or tiles: one thread per row.
void row_stat(Func f, const Halide::LoopLevel& at, int rows, const GpuAttentionTile& g) {
  shared(f, at, {rows});
  Var qi = f.args()[0];
  threads(f, qi, rows, nullptr, 0, g);
  for (int i = 0; i < f.num_update_definitions(); ++i) {
    const std::vector<Halide::Internal::ReductionVariable>& rv = f.function().update(i).schedule().rvars();
    RVar r(rv.at(0).var);
    threads(f.update(i), qi, rows, nullptr, 0, g, &r);
  }
}

}  // namespace

void schedule_attention_gpu(Func out4, Halide::Stage nest, AttentionStages& s, const Halide::Target& t) {
  const GpuAttentionTile g = gpu_attention_tile(describe(t));
  const int tq = s.tq, tk = s.tk, dk = s.head_dim_k, dv = s.head_dim_v;
  Var d("d"), q("q"), h("h"), b("b"), qi("qi"), j("j"), yo("attn_qo"), yi("attn_qi");
  RVar rk = s.rk.x, rj = s.rj.x, rd = s.rd.x, rt = s.rt.x;

  // One block per (query tile, head, batch); its threads over (head dim, query rows).
  nest.split(q, yo, yi, tq, TailStrategy::GuardWithIf);
  threads(nest, d, dv, &yi, tq, g);
  nest.gpu_blocks(yo, h, b);
  const Halide::LoopLevel block(out4, yo);

  shared(s.q_tile, block, {tq, dk});
  threads(s.q_tile, d, dk, &qi, tq, g);

  // The running state; each key tile's stages are computed inside its loop over tiles.
  shared(s.state, block, {dv, tq});
  threads(s.state, d, dv, &qi, tq, g);
  threads(s.state.update(0), d, dv, &qi, tq, g, nullptr, &rk);
  const Halide::LoopLevel tile(s.state, rk);

  // K rows stored key-innermost: the lanes of a warp read one head-dim element of 32 keys.
  shared(s.keys, tile, {dk, tk});
  s.keys.reorder_storage(s.keys.args()[1], s.keys.args()[0]);
  threads(s.keys, d, dk, &j, tk, g);
  shared(s.values, tile, {dv, tk});
  threads(s.values, d, dv, &j, tk, g);

  shared(s.scores, tile, {tq, tk});
  threads(s.scores, j, tk, &qi, tq, g);
  s.scores_acc.compute_at(s.scores, Var("attn_xr")).store_in(MemoryType::Register);
  s.scores_acc.update(0).reorder(rd, qi, j);

  row_stat(s.tile_max, tile, tq, g);
  shared(s.probs, tile, {tq, tk});
  threads(s.probs, j, tk, &qi, tq, g);
  row_stat(s.tile_sum, tile, tq, g);
  s.tiles.compute_inline();
  row_stat(s.block_max, tile, tq, g);
  row_stat(s.weight, tile, tq, g);
  row_stat(s.block_sum, tile, tq, g);

  // probs · V of the tile and its weighted sum, per thread and head-dim element, in registers.
  const Halide::LoopLevel element(s.state, Var("attn_xr"));
  s.tile_acc.compute_at(element).store_in(MemoryType::Register);
  s.tile_acc.update(0).reorder(rj, d, qi);
  s.block_acc.compute_at(element).store_in(MemoryType::Register);
  s.block_acc.update(0).reorder(rt, d, qi);

  // The stages that read past_key/past_value, specialized on an empty past (after their schedule,
  // which the specialization copies).
  if (s.empty_past.defined())
    for (Func f : {s.keys, s.values}) f.specialize(s.empty_past);
}

}  // namespace onnxc::codegen
