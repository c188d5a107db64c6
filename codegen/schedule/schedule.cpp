// CPU and CUDA schedules for elementwise, data-movement and row-wise (reduction) kernels.
#include "codegen/schedule/schedule.h"

#include "ir/error.h"

namespace onnxc::codegen {

using Halide::Func;
using Halide::TailStrategy;
using Halide::Var;
using Halide::VarOrRVar;

namespace {

std::vector<Var> pure_vars(const Func& f) { return f.args(); }


// Below this many output elements a kernel runs on the calling thread: waking the thread pool for
// each of a model's dozens of small kernels costs more than it saves (4x slower end to end on the
// 64-wide test models with 2 threads).
constexpr int64_t kParallelMinElements = 16384;

// Elements one parallel task should cover at least: a task of one 64-float row costs more in the
// thread pool (a mutex per task) than its work; ~1500 such tasks made softmax, transposes and norms
// slower on 2 threads than on 1.
constexpr int kParallelGrainElements = 8192;

// Product of the extents of f's innermost `n` output dims.
Halide::Expr inner_elements(const Func& f, size_t n) {
  Halide::Expr e = 1;
  for (size_t d = 0; d < n; ++d) e = e * f.output_buffer().dim(static_cast<int>(d)).extent();
  return e;
}

// Runs `outer` (iterating rows of `row_elems` elements each) in parallel in tasks of several rows, so
// that each task covers >= kParallelGrainElements. Returns the per-row loop inside a task, where
// per-row work (a softmax's max and sum) is computed.
// The split applies whether or not `large` holds (so `row` exists in every branch); the tasks run in
// parallel only when it does.
Var parallel_with_grain(Func f, const Var& outer, const Halide::Expr& row_elems, const Halide::Expr& large) {
  Var task(outer.name() + "_task"), row(outer.name() + "_row");
  Halide::Expr rows = Halide::max(1, kParallelGrainElements / Halide::max(1, row_elems));
  // Halide bounds the split rows by the corners of the task loop, [0, (extent - 1) / rows], which
  // for no rows at all reaches back to row -rows: an empty output (an extent known only at run time)
  // would fail its bounds check. So the split is made only where the output has elements; where it
  // has none, the rows loop is only renamed (`row` exists in both branches, for compute_at) and
  // runs inside the innermost dim's loop, so that rows of no elements compute no row statistics.
  Halide::Stage nonempty = Halide::Stage(f).specialize(inner_elements(f, static_cast<size_t>(f.dimensions())) > 0);
  nonempty.split(outer, task, row, rows, TailStrategy::GuardWithIf);
  nonempty.specialize(large).parallel(task);
  f.rename(outer, row);
  Var innermost = pure_vars(f)[0];
  if (innermost.name() != outer.name()) f.reorder(row, innermost);
  return row;
}

// The CPU elementwise schedule: innermost dim vectorized, the others fused into one loop that runs
// in parallel (in tasks of a minimum grain) when `large` holds.
void cpu_elementwise(Func f, const Halide::Target& t, const Halide::Expr& large) {
  auto vars = pure_vars(f);
  if (vars.empty()) return;
  int w = vector_width(f, t);
  if (w > 1) f.vectorize(vars[0], w, TailStrategy::GuardWithIf);
  if (vars.size() >= 2) {
    Var outer = fuse_vars(f, vars, 1);
    parallel_with_grain(f, outer, inner_elements(f, 1), large);
  }
}

void gpu_tile_func(Func f, int stage = -1) {
  auto vars = pure_vars(f);
  Halide::Stage s = stage < 0 ? Halide::Stage(f) : Halide::Stage(f.update(stage));
  if (vars.empty()) {
    if (stage < 0) f.gpu_single_thread();
    else f.update(stage).gpu_single_thread();
    return;
  }
  Var bx("bx"), tx("tx"), by("by"), ty("ty");
  if (vars.size() == 1) {
    s.gpu_tile(vars[0], bx, tx, 128, TailStrategy::GuardWithIf);
    return;
  }
  Var y = fuse_vars(s, vars, 1);
  s.gpu_tile(vars[0], y, bx, by, tx, ty, 32, 8, TailStrategy::GuardWithIf);
}

// True for a row statistic `f(..) = f(..) + value` (a sum over an RDom): its order is ours to pick.
// Max, min and other updates are left alone (x86's max returns one operand when the other is NaN,
// so reordering it could lose a NaN).
bool is_sum_update(const Func& f) {
  if (f.outputs() != 1 || f.num_update_definitions() != 1) return false;
  Halide::Expr v = f.update_value();
  while (const auto* let = v.as<Halide::Internal::Let>()) v = let->body;  // a shared term, e.g. d in d*d
  const auto* add = v.as<Halide::Internal::Add>();
  if (!add) return false;
  const auto* self = add->a.as<Halide::Internal::Call>();
  return self && self->name == f.name();
}

// A row sum as written is a serial chain: each add waits for the one before (~3-4 cycles each), so
// a norm over 768 floats spends ~6000 cycles per row on its two sums. Summing `w` interleaved lanes
// (one vector add per `w` elements) and then the lanes runs `w` chains at once. ONNX fixes no order
// for a row sum (ReduceMean, LayerNormalization, Softmax), and each add stays IEEE (strict_float
// covers the lanes too), so NaN and ±inf reach the sum as before. Only a one-dim RDom (the row is
// the innermost dim) is split; others keep the serial sum.
void vectorize_row_sum(Func s, Func out, const Var& row, int w) {
  const auto rvars = s.function().update(0).schedule().rvars();
  if (rvars.size() != 1 || w <= 1) return;
  Halide::RVar r(rvars[0].var), ro(rvars[0].var + "_o"), ri(rvars[0].var + "_i");
  Var lane(s.name() + "_lane");
  Func lanes = s.update().split(r, ro, ri, w, TailStrategy::GuardWithIf).rfactor(ri, lane);
  lanes.compute_at(out, row).vectorize(lane);
  lanes.update().vectorize(lane);
}

}  // namespace

bool is_gpu(const Halide::Target& t) { return t.has_gpu_feature(); }

Halide::Expr worth_parallel(const Func& out) {
  Halide::Expr n = Halide::cast<int64_t>(1);
  for (int d = 0; d < out.dimensions(); ++d) n = n * Halide::cast<int64_t>(out.output_buffer().dim(d).extent());
  return n >= Halide::Expr(kParallelMinElements);
}

int vector_width(const Func& f, const Halide::Target& t) {
  if (is_gpu(t)) return 1;
  Halide::Type ty = f.output_types()[0];
  int w = t.natural_vector_size(ty);
  return std::max(1, std::min(w, 32));
}

void schedule_output(Func out, KernelClass k, const Halide::Target& t) {
  if (is_gpu(t)) {
    gpu_tile_func(out);
    for (int i = 0; i < out.num_update_definitions(); ++i) gpu_tile_func(out, i);
    return;
  }
  cpu_elementwise(out, t, worth_parallel(out));
}

namespace {

void specialize_each(Halide::Stage st, const std::vector<Halide::Expr>& empty, size_t from) {
  for (size_t i = from; i < empty.size(); ++i) specialize_each(st.specialize(empty[i]), empty, i + 1);
}

}  // namespace

void specialize_empty_reads(Func out, const std::vector<Halide::Expr>& empty) {
  if (empty.empty()) return;
  internal_check(empty.size() <= kMaxEmptyReads) << out.name() << ": " << empty.size() << " parts that may be empty";
  const std::vector<Halide::Expr>& conds = empty;
  // Copy the schedule's own conditions first: specialize() returns the existing branch for each.
  std::vector<Halide::Expr> made;
  for (const auto& s : out.function().definition().specializations()) made.push_back(s.condition);
  for (const Halide::Expr& c : made) specialize_each(Halide::Stage(out).specialize(c), conds, 0);
  specialize_each(Halide::Stage(out), conds, 0);
}

void schedule_copies(Func f, int copied_dim, const Halide::Target& t) {
  f.compute_root();
  auto vars = pure_vars(f);
  if (vars.empty()) return;
  const int w = vector_width(f, t);
  if (is_gpu(t)) gpu_tile_func(f);
  else if (w > 1) f.vectorize(vars[0], w, TailStrategy::GuardWithIf);
  for (int u = 0; u < f.num_update_definitions(); ++u) {
    Halide::Stage s = f.update(u);
    if (is_gpu(t)) {
      gpu_tile_func(f, u);
      continue;
    }
    if (copied_dim == 0 || w <= 1) continue;  // the rows are the innermost dim: row by row
    // The rows (an RVar) outside the innermost pure dim, which is vectorized.
    Halide::RVar rows(f.function().update(u).schedule().rvars()[0].var);
    s.reorder(vars[0], rows).vectorize(vars[0], w, TailStrategy::GuardWithIf);
  }
}

void schedule_rowwise(Func out, const std::vector<Func>& stats, int reduced_inner, const Halide::Target& t) {
  if (is_gpu(t) && schedule_rowwise_gpu(out, stats, reduced_inner)) return;
  if (is_gpu(t)) {
    for (Func s : stats) {
      s.compute_root();
      gpu_tile_func(s);
      for (int i = 0; i < s.num_update_definitions(); ++i) gpu_tile_func(s, i);
    }
    gpu_tile_func(out);
    return;
  }
  auto vars = pure_vars(out);
  Halide::Expr large = worth_parallel(out);
  if (reduced_inner > 0 && static_cast<size_t>(reduced_inner) < vars.size() && !stats.empty()) {
    int w = vector_width(out, t);
    if (w > 1) out.vectorize(vars[0], w, TailStrategy::GuardWithIf);
    Var rows = fuse_vars(out, vars, reduced_inner);
    Var row = parallel_with_grain(out, rows, inner_elements(out, static_cast<size_t>(reduced_inner)), large);
    for (Func s : stats) {
      s.compute_at(out, row);
      if (is_sum_update(s)) vectorize_row_sum(s, out, row, w);
      // Row-shaped intermediates (e.g. exp(x - max)) vectorize like the output; per-row scalars not.
      if (s.dimensions() == out.dimensions() && w > 1) s.vectorize(s.args()[0], w, TailStrategy::GuardWithIf);
    }
    return;
  }
  if (reduced_inner <= 0 || vars.empty()) {
    for (Func s : stats) {
      s.compute_root();
      schedule_reduction(s, true, large, t);
    }
    cpu_elementwise(out, t, large);
    return;
  }
  // One row: the whole tensor.
  int w = vector_width(out, t);
  if (w > 1) out.vectorize(vars[0], w, TailStrategy::GuardWithIf);
  for (Func s : stats) s.compute_root();
}

void schedule_reduction(Func acc, bool vectorize_inner, const Halide::Expr& large, const Halide::Target& t) {
  if (is_gpu(t)) {
    gpu_tile_func(acc);
    for (int i = 0; i < acc.num_update_definitions(); ++i) gpu_tile_func(acc, i);
    return;
  }
  auto vars = pure_vars(acc);
  if (vars.empty()) return;
  int w = vectorize_inner ? vector_width(acc, t) : 1;
  for (int s = -1; s < acc.num_update_definitions(); ++s) {
    Halide::Stage st = s < 0 ? Halide::Stage(acc) : Halide::Stage(acc.update(s));
    if (w > 1) st.vectorize(vars[0], w, TailStrategy::GuardWithIf);
    size_t from = w > 1 ? 1 : 0;
    if (vars.size() > from) {
      Var fused = fuse_vars(st, vars, from);  // before specialize, which copies the schedule so far
      st.specialize(large).parallel(fused);
    }
  }
}

Var fuse_vars(Halide::Stage s, const std::vector<Var>& vars, size_t from) {
  if (from >= vars.size()) return Var();
  Var fused = vars[from];
  for (size_t i = from + 1; i < vars.size(); ++i) {
    Var next(fused.name() + "_" + vars[i].name());
    s.fuse(fused, vars[i], next);
    fused = next;
  }
  return fused;
}

}  // namespace onnxc::codegen
