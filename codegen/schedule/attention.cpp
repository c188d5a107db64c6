// Schedule of the fused attention kernel (CPU; GPU targets: gpu_attention.cpp, or the materialized
// form). One parallel task per (batch, head, query tile): the query tile is transposed once, then
// each key tile's scores are accumulated in registers (query rows vectorized, as many keys unrolled
// as the registers hold), reduced to a tile max and sum, and its probs · V block (head dim vectorized,
// 4 rows unrolled) is kept for its block of tiles; each block is weighed per row and merged into the
// running state (head dim vectorized). Scratch memory is O(tq · (tk + dv · block)) per task: the score
// matrix is never stored.
#include "codegen/schedule/attention.h"

#include <algorithm>

#include "codegen/schedule/gpu_attention.h"
#include "codegen/schedule/schedule.h"
#include "codegen/schedule/target_desc.h"

namespace onnxc::codegen {

using Halide::Func;
using Halide::TailStrategy;
using Halide::Var;

namespace {

// At most this many keys per register block of the score accumulation (key_block), and at most this
// many query rows per probs · V block (fewer where a row of the head dim takes more of the target's
// registers).
constexpr int kKeyBlock = 8;
constexpr int kMaxRowBlock = 4;

// Query rows per probs · V block: each row holds head_dim_v / lanes accumulators, and the block must
// fit the target's accumulator registers (AVX-512, d = 64: 4 rows × 4 zmm; AVX2: 1 row × 8 ymm).
int row_block(const AttentionStages& s, int lanes, const TargetDesc& d) {
  if (s.head_dim_v <= 0 || lanes <= 0) return kMaxRowBlock;
  const int vecs = std::max(1, static_cast<int>((s.head_dim_v + lanes - 1) / lanes));
  return std::clamp(d.accumulator_budget() / vecs, 1, kMaxRowBlock);
}

// Keys per register block of the score accumulation: each key holds tq / lanes accumulators (the
// query rows, vectorized), and the block must fit the target's accumulator registers and divide the
// key tile (AVX-512, tq = 32: 8 keys × 2 zmm; AVX2: 2 keys × 4 ymm, where 8 keys would keep 32
// accumulators in 16 registers and go through the stack on every step; NEON: 2 keys × 8 q).
int key_block(const AttentionStages& s, int lanes, const TargetDesc& d) {
  const int vecs = std::max(1, (s.tq + lanes - 1) / std::max(1, lanes));
  int keys = kKeyBlock;
  while (keys > 1 && (vecs * keys > d.accumulator_budget() || s.tk % keys != 0)) keys /= 2;
  return keys;
}

Var v(const char* name) { return Var(name); }

// A static head size (always, in exported models) lets the accumulator blocks live in registers
// (the kernel's y4 is bounded to it once, in schedule_attention).
bool unrolls_head_dim(const AttentionStages& s, int w) {
  return s.head_dim_v > 0 && s.head_dim_v % w == 0 && s.head_dim_v <= 8 * w;
}

void unroll_head_dim(AttentionStages& s, Halide::Stage acc, Halide::Stage block, int w) {
  if (!unrolls_head_dim(s, w)) return;
  Var d = v("d");
  for (Func f : {s.state, s.tiles, s.tile_acc, s.block_acc}) f.bound(d, 0, s.head_dim_v);
  s.tile_acc.unroll(d);
  acc.unroll(d);
  block.unroll(d);
}

// The stages that read past_key/past_value, specialized on an empty past once they are scheduled (a
// specialization copies the schedule it starts from): with_past's select folds to the new keys in
// that copy, so a past of no rows is never read nor bounds-checked.
void specialize_empty_past(const AttentionStages& s, std::initializer_list<Halide::Stage> readers) {
  if (!s.empty_past.defined()) return;
  for (Halide::Stage st : readers) st.specialize(s.empty_past);
}

// `nest` is out4's loop nest to schedule: its definition, or its one-row specialization.
void schedule_cpu(Func out4, Halide::Stage nest, AttentionStages& s, const Halide::Target& t) {
  Var d = v("d"), q = v("q"), h = v("h"), b = v("b"), qi = v("qi"), qo = v("qo"), j = v("j"), kt = v("kt"), kb = v("kb");
  Var yo("yo"), yi("yi"), task("task"), qio("qio"), qii("qii"), jo("jo"), ji("ji");
  int w = std::max(1, t.natural_vector_size(s.state.output_types()[0]));
  const int kRowBlock = row_block(s, w, describe(t));
  const int keys = key_block(s, w, describe(t));
  Halide::RVar rk = s.rk.x, rt = s.rt.x, rd = s.rd.x;
  nest.split(q, yo, yi, s.tq, TailStrategy::GuardWithIf).fuse(yo, h, task).fuse(task, b, task).parallel(task);
  nest.vectorize(d, w, TailStrategy::GuardWithIf);
  s.q_tile.compute_at(out4, task).vectorize(qi, w);
  // The running state, merged once per block of key tiles.
  s.state.compute_at(out4, task).vectorize(d, w, TailStrategy::GuardWithIf);
  s.state.update(0)
      .split(qi, qio, qii, kRowBlock)
      .reorder(d, qii, qio, rk)
      .vectorize(d, w, TailStrategy::GuardWithIf)
      .unroll(qii);
  // Per block: its key tiles (each tile's loop hosts the score and probs stages), then one weight
  // per (row, tile) and the block's sums.
  s.tiles.compute_at(s.state, rk)
      .split(qi, qio, qii, kRowBlock)
      .reorder(d, qii, qio, kt)
      .vectorize(d, w, TailStrategy::GuardWithIf)
      .unroll(qii);
  s.scores.compute_at(s.tiles, kt).split(j, jo, ji, keys).reorder(qi, ji, jo).vectorize(qi, w).unroll(ji);
  // All `keys` keys, also past the last key: their K rows are clamped reads, and the scores mask
  // them. Left to bounds inference, the block is trimmed at the last key (the mask's select), and
  // the unrolled accumulators of the keys that may be trimmed went through memory on every step.
  s.scores_acc.compute_at(s.scores, jo).bound_extent(j, keys).vectorize(qi, w).unroll(j);
  s.scores_acc.update(0).reorder(qi, j, rd).vectorize(qi, w).unroll(j);
  for (Func f : {s.tile_max, s.tile_sum}) {
    f.compute_at(s.tiles, kt).vectorize(qi, w);
    f.update(0).vectorize(qi, w);
  }
  s.probs.compute_at(s.tiles, kt).vectorize(qi, w);
  s.tile_acc.compute_at(s.tiles, qio).vectorize(d, w, TailStrategy::GuardWithIf).unroll(qi);
  // Stages are held by value: update(0) returns a temporary that a reference would outlive.
  Halide::Stage acc = s.tile_acc.update(0).reorder(d, qi, s.rj.x).vectorize(d, w, TailStrategy::GuardWithIf).unroll(qi);
  for (Func f : {s.block_max, s.block_sum}) {
    f.compute_at(s.state, rk).vectorize(qi, w);
    f.update(0).reorder(qi, rt).vectorize(qi, w);
  }
  s.weight.compute_at(s.state, rk).vectorize(qi, w);
  s.block_acc.compute_at(s.state, rk).vectorize(d, w, TailStrategy::GuardWithIf);
  Halide::Stage block = s.block_acc.update(0).reorder(d, rt, qi).vectorize(d, w, TailStrategy::GuardWithIf);
  unroll_head_dim(s, acc, block, w);
  specialize_empty_past(s, {s.scores_acc.update(0), acc});
}

// One query row (a decoding step, s.tq == 1): nothing is vectorized over query rows, which would
// compute a vector's width of clamped copies of the row. A key's score sums its dense K row by
// vectors (lane partial sums, then the lanes; with a static head size of whole vectors), else the
// scores are vectorized over keys; probs · V and the merges are vectorized over the head dim.
void schedule_cpu_row(Func out4, Halide::Stage nest, AttentionStages& s, const Halide::Target& t) {
  Var d = v("d"), q = v("q"), h = v("h"), b = v("b"), qi = v("qi"), j = v("j"), kt = v("kt");
  Var yo("yo"), yi("yi"), task("task"), jo("jo"), ji("ji");
  int w = std::max(1, t.natural_vector_size(s.state.output_types()[0]));
  Halide::RVar rk = s.rk.x, rt = s.rt.x, rd = s.rd.x, rj = s.rj.x;
  nest.split(q, yo, yi, 1).fuse(yo, h, task).fuse(task, b, task).parallel(task);
  nest.vectorize(d, w, TailStrategy::GuardWithIf);
  s.q_tile.compute_at(out4, task).vectorize(d, w, TailStrategy::GuardWithIf);
  s.state.compute_at(out4, task).vectorize(d, w, TailStrategy::GuardWithIf);
  s.state.update(0).reorder(d, qi, rk).vectorize(d, w, TailStrategy::GuardWithIf);
  s.tiles.compute_at(s.state, rk).reorder(d, qi, kt).vectorize(d, w, TailStrategy::GuardWithIf);
  s.scores.compute_at(s.tiles, kt).vectorize(j, w, TailStrategy::GuardWithIf);
  s.scores_acc.compute_at(s.tiles, kt).bound_extent(j, s.tk).vectorize(j, w);
  // Not with a past that may be empty: the partial sums are a Func of their own that reads the K rows
  // through the inline attn_keys stage, and its specialization on an empty past does not fold
  // with_past's select before the bounds checks, so it would still read (and bounds-check) a past of
  // no rows (LowerAttention.SymbolicQueryLengthOneRowMatchesTiles). A past in the kernel is rare: a
  // decoder's past/present pair becomes an in-place cache append (passes/use_kv_cache.h).
  if (!s.empty_past.defined() && s.head_dim_k > 0 && s.head_dim_k % w == 0 && s.tk % kKeyBlock == 0) {
    // Each key's dot product by whole vectors of its (dense) K row: partial sums per lane over the
    // head dim for a block of kKeyBlock keys, then each key's lanes summed by one horizontal add.
    // rfactor appends the lane dim last; stored so, a key's lanes lay a key block apart and every
    // partial sum went through scalar inserts and extracts (~130 instructions a key). Stored lanes
    // innermost, a key's partial sums are one vector, held in registers across the head dim.
    Var u("u");
    Halide::RVar rdo("rdo"), rdi("rdi");
    Func part = s.scores_acc.update(0).split(rd, rdo, rdi, w).rfactor(rdi, u);
    std::vector<Var> storage = {u};
    for (const Var& a : part.args())
      if (a.name() != u.name()) storage.push_back(a);
    part.reorder_storage(storage);
    Halide::Stage lanes = s.scores_acc.update(0).split(j, jo, ji, kKeyBlock).reorder(rdi, ji, jo);
    lanes.atomic().vectorize(rdi).unroll(ji);
    part.compute_at(s.scores_acc, jo).bound_extent(j, kKeyBlock).vectorize(u).unroll(j);
    Halide::Stage sums = part.update(0).reorder(u, j, rdo).vectorize(u).unroll(j);
    if (s.head_dim_k / w <= 8) sums.unroll(rdo);
  } else {
    // K rows read a head dim apart, a key per lane.
    s.scores_acc.update(0).split(j, jo, ji, w).reorder(ji, jo, qi, rd).vectorize(ji).unroll(jo);
  }
  for (Func f : {s.tile_max, s.tile_sum}) f.compute_at(s.tiles, kt);
  s.probs.compute_at(s.tiles, kt).vectorize(j, w, TailStrategy::GuardWithIf);
  s.tile_acc.compute_at(s.tiles, kt).vectorize(d, w, TailStrategy::GuardWithIf);
  Halide::Stage acc = s.tile_acc.update(0).reorder(d, qi, rj).vectorize(d, w, TailStrategy::GuardWithIf);
  for (Func f : {s.block_max, s.block_sum, s.weight}) f.compute_at(s.state, rk);
  s.block_acc.compute_at(s.state, rk).vectorize(d, w, TailStrategy::GuardWithIf);
  Halide::Stage block = s.block_acc.update(0).reorder(d, rt, qi).vectorize(d, w, TailStrategy::GuardWithIf);
  unroll_head_dim(s, acc, block, w);
  specialize_empty_past(s, {s.scores_acc.update(0), acc});
}

// The schedule by target: GPU targets get gpu_attention.cpp's.
void schedule_stages(Func out4, Halide::Stage nest, AttentionStages& s, const Halide::Target& t) {
  if (describe(t).gpu) schedule_attention_gpu(out4, nest, s, t);
  else if (s.tq == 1) schedule_cpu_row(out4, nest, s, t);
  else schedule_cpu(out4, nest, s, t);
}

}  // namespace

void size_attention_stages(AttentionStages& s, const Halide::Target& t) {
  if (describe(t).gpu) size_attention_stages_gpu(s, describe(t));
}

bool streams_attention(const Halide::Target& t, const AttentionStages& s) {
  return !describe(t).gpu || gpu_streams_attention(s);
}

void schedule_materialized_attention(Func output, const std::vector<Func>& stages, const std::vector<Func>& reads_past,
                                     const Halide::Expr& empty_past, Func y4, bool y4_is_output,
                                     const Halide::Target& t) {
  for (Func f : stages) {
    f.compute_root();
    schedule_reduction(f, true, Halide::Internal::const_true(), t);
  }
  // Within schedule_reduction's specialization on `large` (true here; Halide adds nothing after a
  // specialization on true, and returns that one when asked for it again), which copies its schedule.
  if (empty_past.defined())
    for (Func f : reads_past) f.update(0).specialize(Halide::Internal::const_true()).specialize(empty_past);
  if (!y4_is_output) {
    // Not a kernel output: schedule_output's run-time size test would read an output buffer.
    y4.compute_root();
    if (describe(t).gpu) schedule_output(y4, KernelClass::Elementwise, t);
    else y4.vectorize(y4.args()[0], vector_width(y4, t), TailStrategy::GuardWithIf).parallel(y4.args()[3]);
  }
  schedule_output(output, KernelClass::Elementwise, t);
}

void schedule_attention(Func output, const AttentionKernel& k, const Halide::Target& t) {
  Func out4 = k.y4;
  if (output.name() != out4.name()) {
    // The 3-D [b, s, h*dv] output reads the 4-D result, computed whole first.
    out4.compute_root();
    schedule_output(output, KernelClass::Elementwise, t);
  }
  AttentionStages tiles = k.tiles;
  int w = std::max(1, t.natural_vector_size(tiles.state.output_types()[0]));
  if (unrolls_head_dim(tiles, w) || describe(t).gpu) out4.bound(v("d"), 0, tiles.head_dim_v);
  if (k.row) {
    // Specialized before the default nest is scheduled: the copy starts from an empty schedule. In
    // it y4's select simplifies to the one-row stages, elsewhere to the tiled ones, so each branch
    // computes only its own copy.
    AttentionStages row = *k.row;
    Halide::Stage one = out4.specialize(k.one_row);
    schedule_stages(out4, one, row, t);
  }
  schedule_stages(out4, out4, tiles, t);
}

}  // namespace onnxc::codegen
