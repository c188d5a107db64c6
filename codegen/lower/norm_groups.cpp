// Normalizations whose statistics are not rows of trailing axes: GroupNormalization (opset 21:
// mean and variance over a group of channels and the spatial dims, then per-channel scale and bias)
// and LpNormalization (x over its L1 or L2 norm along one axis, 0 where that norm is 0, as ONNX's
// reference gives). Statistics are computed in float32 (float64 for float64 input).
#include "codegen/lower/lower_util.h"
#include "codegen/schedule/schedule.h"

namespace onnxc::codegen {

namespace {

using Halide::Expr;
using Halide::Func;

Halide::Type stat_type(const HTensor& x) {
  Halide::Type t = halide_type(x.dtype);
  return t == Halide::Float(64) ? t : Halide::Float(32);
}

// Stats are small (one value per group or per row): computed root, then the output elementwise.
void schedule_stats_root(LowerContext& ctx, std::vector<Func> stats) {
  ctx.schedule = [stats](Func out, const Halide::Target& t) {
    for (Func f : stats) f.compute_root();
    schedule_output(out, KernelClass::Elementwise, t);
  };
}

// y = (x - mean[n, g]) / sqrt(var[n, g] + epsilon) * scale[c] + bias[c], where group g holds the
// C / num_groups consecutive channels of c. Opset 18 gave scale and bias per group (a model of
// opset 18 is not raised past 21, which changed that: passes/raise_opset.cpp).
std::vector<HTensor> group_norm(LowerContext& ctx) {
  const HTensor& x = ctx.in[0];
  int rank = x.rank();
  user_check(rank >= 2) << ctx.node.describe() << ": GroupNormalization needs an input of rank >= 2 (N, C, ...)";
  int64_t groups = ctx.node.attr_int("num_groups", 0);
  user_check(groups > 0) << ctx.node.describe() << ": num_groups must be positive";
  Halide::Type at = stat_type(x);
  Expr g32 = static_cast<int32_t>(groups);
  Expr per_group = x.shape[1] / g32;
  std::vector<Halide::Range> ranges = {{0, per_group}};
  for (int k = 2; k < rank; ++k) ranges.emplace_back(0, x.shape[k]);
  Halide::RDom r(Halide::Region(ranges.begin(), ranges.end()));
  Expr count = Halide::cast(at, per_group);
  for (int k = 2; k < rank; ++k) count = count * Halide::cast(at, x.shape[k]);

  Halide::Var g("g"), n("n");
  auto member = [&](const Expr& nn, const Expr& gg) {  // the element of group gg of sample nn at r
    Index i = {nn, gg * per_group + r[0]};
    for (int k = 2; k < rank; ++k) i.push_back(r[k - 1]);
    return Halide::cast(at, x.at(i));
  };
  Func sum("gn_sum"), mean("gn_mean"), sq("gn_sqdev"), inv("gn_invstd");
  sum(g, n) = Halide::Internal::make_zero(at);
  sum(g, n) += member(n, g);
  mean(g, n) = sum(g, n) / count;
  Expr d = member(n, g) - mean(g, n);
  sq(g, n) = Halide::Internal::make_zero(at);
  sq(g, n) += d * d;
  Expr eps = Halide::cast(at, ctx.node.attr_float("epsilon", 1e-5f));
  inv(g, n) = 1 / Halide::sqrt(sq(g, n) / count + eps);
  schedule_stats_root(ctx, {sum, mean, sq, inv});
  return {define("GroupNormalization", x.shape, out_dtype(ctx), [&](const Index& i) {
    Expr grp = i[1] / per_group, c = ctx.opset < 21 ? grp : i[1];
    Expr v = (Halide::cast(at, x.at(i)) - mean(grp, i[0])) * inv(grp, i[0]);
    return v * Halide::cast(at, ctx.in[1].at({c})) + Halide::cast(at, ctx.in[2].at({c}));
  })};
}

// y = x / (sum |x|^p along axis)^(1/p), p 1 or 2; 0 where the norm is 0.
std::vector<HTensor> lp_norm(LowerContext& ctx) {
  const HTensor& x = ctx.in[0];
  int rank = x.rank();
  int axis = normalize_axis(ctx.node.attr_int("axis", -1), rank, ctx.node);
  int64_t p = ctx.node.attr_int("p", 2);
  user_check(p == 1 || p == 2) << ctx.node.describe() << ": LpNormalization supports p = 1 or 2, not " << p;
  Halide::Type at = stat_type(x);
  RowSpace s(x, {axis});
  Expr e = Halide::cast(at, x.at(s.ridx));
  Func acc("lp_sum");
  acc(s.stat_args()) = Halide::Internal::make_zero(at);
  acc(s.stat_args()) += p == 1 ? Halide::abs(e) : e * e;
  Func norm("lp_norm");
  norm(s.stat_args()) = p == 1 ? acc(s.stat_args()) : Halide::sqrt(acc(s.stat_args()));
  Func y("LpNormalization");
  Expr nv = norm(s.stat_args());
  Expr zero = Halide::Internal::make_zero(at);
  y(s.all_args()) = Halide::cast(halide_type(x.dtype), Halide::select(nv == zero, zero, Halide::cast(at, x.at(s.idx)) / nv));
  ctx.schedule = [acc, norm, inner = s.reduced_inner](Func out, const Halide::Target& t) {
    schedule_rowwise(out, {acc, norm}, inner, t);
  };
  HTensor out;
  out.func = y;
  out.shape = x.shape;
  out.dtype = out_dtype(ctx);
  return {out};
}

Registrar reg_GroupNormalization("", "GroupNormalization", KernelClass::Norm, group_norm);
Registrar reg_LpNormalization("", "LpNormalization", KernelClass::Norm, lp_norm);

}  // namespace

}  // namespace onnxc::codegen
