// Row-wise kernels (norms, softmax, reductions over the innermost dim) on CUDA targets: one thread
// block per row. Loop nest of `out` (outermost first):
//   gpu block: row
//     per-row statistics, in shared memory:
//       a sum over the row: kRowThreads partial sums, one per thread (interleaved elements), then
//                           the partials added by one thread
//       other statistics (max, ...): one thread walks the row
//       row-shaped intermediates (exp(x - max)): one element per thread per step
//     gpu thread: out(x) for x = thread, thread + kRowThreads, ...
// A row's elements are read by adjacent threads (coalesced), and the row's statistics never leave
// the chip. The order of a row sum is ours to pick (ONNX fixes none); every add stays IEEE.
#include <Halide.h>

#include "codegen/schedule/schedule.h"

namespace onnxc::codegen {

using Halide::Func;
using Halide::TailStrategy;
using Halide::Var;

namespace {

constexpr int kRowThreads = 128;

bool single_sum(const Func& f) {
  if (f.outputs() != 1 || f.num_update_definitions() != 1) return false;
  if (f.function().update(0).schedule().rvars().size() != 1) return false;
  Halide::Expr v = f.update_value();
  while (const auto* let = v.as<Halide::Internal::Let>()) v = let->body;
  const auto* add = v.as<Halide::Internal::Add>();
  const auto* self = add ? add->a.as<Halide::Internal::Call>() : nullptr;
  return self && self->name == f.name();
}


}  // namespace

bool schedule_rowwise_gpu(Func out, const std::vector<Func>& stats, int reduced_inner) {
  std::vector<Var> vars = out.args();
  if (reduced_inner != 1 || vars.size() < 2 || stats.empty()) return false;
  for (const Func& s : stats)
    if (s.dimensions() != out.dimensions() && s.dimensions() != out.dimensions() - 1) return false;
  Var row = fuse_vars(out, vars, 1);
  Var xo("row_xo"), tx("row_tx");
  out.split(vars[0], xo, tx, kRowThreads, TailStrategy::GuardWithIf).reorder(tx, xo, row).gpu_blocks(row).gpu_threads(tx);
  for (Func s : stats) {
    s.compute_at(out, row);
    if (s.dimensions() == out.dimensions()) {  // row-shaped: threads over its elements
      Var sx = s.args()[0], so("rs_xo"), st("rs_tx");
      s.split(sx, so, st, kRowThreads, TailStrategy::GuardWithIf).reorder(st, so).gpu_threads(st);
      for (int i = 0; i < s.num_update_definitions(); ++i) s.update(i).gpu_single_thread();
      continue;
    }
    if (!single_sum(s)) continue;  // serial at block level: one thread walks the row
    Halide::RVar r(s.function().update(0).schedule().rvars()[0].var), ro("rs_ro"), ri("rs_ri");
    Var lane(s.name() + "_lane");
    Func lanes = s.update().split(r, ro, ri, kRowThreads, TailStrategy::GuardWithIf).rfactor(ri, lane);
    lanes.compute_at(out, row).gpu_threads(lane);
    lanes.update().gpu_threads(lane);
  }
  return true;
}

}  // namespace onnxc::codegen
