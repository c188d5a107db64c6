// Schedule of the fused attention kernel (CPU; the lowering rejects GPU targets for now). One parallel
// task per (batch, head, query tile): the query tile is transposed once, then each key tile's scores
// are accumulated in registers (query rows vectorized, 8 keys unrolled), reduced to a tile max and
// sum, and its probs · V block (head dim vectorized, 4 rows unrolled) is merged into the running
// state. Scratch memory is O(tq · (tk + dv)) per task: the score matrix is never stored.
#include "codegen/schedule/attention.h"

#include "codegen/schedule/schedule.h"

namespace onnxc::codegen {

using Halide::Func;
using Halide::TailStrategy;
using Halide::Var;

namespace {

// Keys unrolled per register block of the score accumulation, and query rows per probs · V block.
constexpr int kKeyBlock = 8;
constexpr int kRowBlock = 4;

Var v(const char* name) { return Var(name); }

void schedule_cpu(Func out4, AttentionStages& s, const Halide::Target& t) {
  Var d = v("d"), q = v("q"), h = v("h"), b = v("b"), qi = v("qi"), qo = v("qo"), j = v("j");
  Var yo("yo"), yi("yi"), task("task"), qio("qio"), qii("qii"), jo("jo"), ji("ji");
  int w = std::max(1, t.natural_vector_size(s.state.output_types()[0]));
  Halide::RVar kt = s.rk.x, rj = s.rj.x, rd = s.rd.x;
  out4.split(q, yo, yi, s.tq, TailStrategy::GuardWithIf).fuse(yo, h, task).fuse(task, b, task).parallel(task);
  out4.vectorize(d, w, TailStrategy::GuardWithIf);
  s.state.compute_at(out4, task).vectorize(d, w, TailStrategy::GuardWithIf);
  s.state.update(0)
      .split(qi, qio, qii, kRowBlock)
      .reorder(d, qii, qio, kt, qo, h, b)
      .vectorize(d, w, TailStrategy::GuardWithIf)
      .unroll(qii);
  s.q_tile.compute_at(s.state, qo).vectorize(qi, w);
  s.scores.compute_at(s.state, kt).split(j, jo, ji, kKeyBlock).reorder(qi, ji, jo).vectorize(qi, w).unroll(ji);
  s.scores_acc.compute_at(s.scores, jo).vectorize(qi, w).unroll(j);
  s.scores_acc.update(0).reorder(qi, j, rd).vectorize(qi, w).unroll(j);
  for (Func f : {s.tile_max, s.tile_sum}) {
    f.compute_at(s.state, kt).vectorize(qi, w);
    f.update(0).vectorize(qi, w);
  }
  s.probs.compute_at(s.state, kt).vectorize(qi, w);
  s.tile_acc.compute_at(s.state, qio).vectorize(d, w, TailStrategy::GuardWithIf).unroll(qi);
  auto& acc = s.tile_acc.update(0).reorder(d, qi, rj).vectorize(d, w, TailStrategy::GuardWithIf).unroll(qi);
  // A static head size (always, in exported models) lets the whole accumulator block live in registers.
  if (s.head_dim_v > 0 && s.head_dim_v % w == 0 && s.head_dim_v <= 8 * w) {
    for (Func f : {out4, s.state, s.tile_acc}) f.bound(d, 0, s.head_dim_v);
    s.tile_acc.unroll(d);
    acc.unroll(d);
  }
}

}  // namespace

void schedule_attention(Func output, AttentionStages s, const Halide::Target& t) {
  Func out4 = s.y4;
  if (output.name() != s.y4.name()) {
    // The 3-D [b, s, h*dv] output reads the 4-D result, computed whole first.
    s.y4.compute_root();
    schedule_output(output, KernelClass::Elementwise, t);
  }
  schedule_cpu(out4, s, t);
}

}  // namespace onnxc::codegen
