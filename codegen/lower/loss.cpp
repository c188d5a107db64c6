// Losses: NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss (log-softmax over the class axis 1,
// then the same gather-weight-reduce), with ONNX's reduction (none/sum/mean), optional class weights
// and ignore_index (ignored targets weigh 0; weighted mean divides by the sum of weights).
#include "codegen/lower/lower_util.h"
#include "codegen/schedule/schedule.h"

namespace onnxc::codegen {

namespace {

using Halide::Expr;
using Halide::Func;

// Builds the loss from `logp`, the log-probabilities in x's layout [N, C, d...] (a Func taking a
// Halide-order index), and the node's target/weight inputs (indices 1 and 2).
std::vector<HTensor> nll(LowerContext& ctx, const HTensor& logp, std::vector<Func> stats) {
  const HTensor& target = ctx.in[1];
  int r = logp.rank();
  user_check(r >= 2 && target.rank() == r - 1)
      << ctx.node.describe() << ": expected input [N, C, ...] and target [N, ...]";
  Halide::Type at = accumulator_type(halide_type(logp.dtype));
  std::string reduction = ctx.node.attr_string("reduction", "mean");
  bool has_ii = ctx.node.has_attr("ignore_index"), has_w = has_input(ctx, 2);
  Expr ii = Halide::Expr(ctx.node.attr_int("ignore_index", 0));
  Expr classes = logp.shape[1];

  // Loss and weight of one target element (ONNX order index into the target).
  auto element = [&](const Index& t) -> std::pair<Expr, Expr> {
    Expr cls = Halide::cast<int32_t>(target.at(t));
    Expr c = Halide::clamp(cls, 0, classes - 1);
    Expr w = has_w ? Halide::cast(at, ctx.in[2].at({c})) : Halide::Internal::make_one(at);
    if (has_ii) w = Halide::select(Halide::cast<int64_t>(target.at(t)) == ii, Halide::Internal::make_zero(at), w);
    Index xi = {t[0], c};
    xi.insert(xi.end(), t.begin() + 1, t.end());
    Expr loss = -Halide::cast(at, logp.at(xi));
    if (has_ii) loss = Halide::select(Halide::cast<int64_t>(target.at(t)) == ii, Halide::Internal::make_zero(at), loss);
    return {loss * w, w};
  };

  ir::DType dt = out_dtype(ctx);
  Halide::Type ot = halide_type(dt);
  HTensor out;
  out.dtype = dt;
  if (reduction == "none") {
    out = define("nll", target.shape, dt, [&](const Index& t) { return element(t).first; });
  } else {
    user_check(reduction == "sum" || reduction == "mean") << ctx.node.describe() << ": unknown reduction '" << reduction << "'";
    std::vector<Halide::Range> ranges;
    for (const Expr& e : target.shape) ranges.emplace_back(0, e);
    Halide::RDom rd(Halide::Region(ranges.begin(), ranges.end()));
    Index t;
    for (int k = 0; k < rd.dimensions(); ++k) t.push_back(rd[k]);
    auto [loss, w] = element(t);
    Func sum("nll_sum");
    sum() = Halide::Tuple(Halide::Internal::make_zero(at), Halide::Internal::make_zero(at));
    sum() = Halide::Tuple(sum()[0] + loss, sum()[1] + w);
    Func f("nll_reduced");
    Expr v = sum()[0];
    if (reduction == "mean") v = v / sum()[1];  // weights are 1 without weight and ignore_index
    f() = Halide::cast(ot, v);
    stats.push_back(sum);
    out.func = f;
  }
  ctx.schedule = [stats](Func output, const Halide::Target& t) {
    for (Func s : stats) s.compute_root();
    schedule_output(output, KernelClass::Elementwise, t);
  };
  return {out};
}

std::vector<HTensor> nll_loss(LowerContext& ctx) { return nll(ctx, ctx.in[0], {}); }

std::vector<HTensor> softmax_cross_entropy(LowerContext& ctx) {
  const HTensor& x = ctx.in[0];
  user_check(x.rank() >= 2) << ctx.node.describe() << ": scores must be [N, C, ...]";
  Halide::Type at = accumulator_type(halide_type(x.dtype));
  RowSpace s(x, {1});
  Func mx("sce_max"), se("sce_sumexp");
  mx(s.stat_args()) = at.min();
  mx(s.stat_args()) = Halide::max(mx(s.stat_args()), Halide::cast(at, x.at(s.ridx)));
  se(s.stat_args()) = Halide::Internal::make_zero(at);
  se(s.stat_args()) += exp_ieee(Halide::cast(at, x.at(s.ridx)) - mx(s.stat_args()));
  HTensor logp;
  logp.func = Func("sce_log_prob");
  logp.func(s.all_args()) = Halide::cast(halide_type(x.dtype), Halide::cast(at, x.at(s.idx)) - mx(s.stat_args()) -
                                                                    Halide::log(se(s.stat_args())));
  logp.shape = x.shape;
  logp.dtype = x.dtype;
  std::vector<HTensor> outs = nll(ctx, logp, {mx, se, logp.func});
  if (ctx.node.output(1)) outs.push_back(logp);
  return outs;
}

Registrar reg_NegativeLogLikelihoodLoss("", "NegativeLogLikelihoodLoss", KernelClass::Reduction, nll_loss);
Registrar reg_SoftmaxCrossEntropyLoss("", "SoftmaxCrossEntropyLoss", KernelClass::Reduction, softmax_cross_entropy);

}  // namespace

}  // namespace onnxc::codegen
