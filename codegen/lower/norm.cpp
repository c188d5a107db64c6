// Normalizations: LayerNormalization (opset 17, with its optional Mean and InvStdDev outputs),
// RMSNormalization (opset 23), InstanceNormalization, MeanVarianceNormalization, LRN, and
// BatchNormalization in inference mode.
// Row statistics accumulate in f32 (ONNX's stash_type 1) and use two passes (mean, then the mean of
// squared deviations), which is what exporters' reference implementations compute.
#include <algorithm>

#include "codegen/lower/lower_util.h"
#include "codegen/schedule/schedule.h"

namespace onnxc::codegen {

namespace {

using Halide::Expr;
using Halide::Func;

std::vector<int> trailing_axes(int from, int rank) {
  std::vector<int> a;
  for (int k = from; k < rank; ++k) a.push_back(k);
  return a;
}

Expr row_count(const HTensor& x, const std::vector<int>& axes, Halide::Type t) {
  Expr n = Halide::cast(t, 1);
  for (int a : axes) n = n * Halide::cast(t, x.shape[a]);
  return n;
}

HTensor wrap(Func f, const std::vector<Expr>& shape, ir::DType dt) {
  HTensor t;
  t.func = f;
  t.shape = shape;
  t.dtype = dt;
  return t;
}

bool is_kernel_output(const ir::Node& n, int i) {
  return n.output(i) && n.output(i)->is_graph_output();
}

// Stats computed at each row when only Y is produced; computed whole when the stats are outputs too
// (a Func computed inside one output's loop cannot feed another output).
void schedule_norm(LowerContext& ctx, std::vector<Func> stats, int reduced_inner) {
  bool stats_out = is_kernel_output(ctx.node, 1) || is_kernel_output(ctx.node, 2);
  int inner = stats_out ? 0 : reduced_inner;
  ctx.schedule = [stats, inner](Func out, const Halide::Target& t) { schedule_rowwise(out, stats, inner, t); };
}

// Two-pass row statistics over `axes` (the rows of `s`): the mean, then the inverse standard
// deviation of the deviations from it. Layer and instance normalization differ only in the axes.
struct RowStats {
  Func sum, mean, sq, inv;
  std::vector<Func> all() const { return {sum, mean, sq, inv}; }
};

RowStats row_mean_invstd(const HTensor& x, const std::vector<int>& axes, const RowSpace& s, Halide::Type at,
                         Expr eps, const std::string& prefix) {
  Expr n = row_count(x, axes, at);
  auto xv = [&](const Index& i) { return Halide::cast(at, x.at(i)); };
  RowStats r{Func(prefix + "_sum"), Func(prefix + "_mean"), Func(prefix + "_sqdev"), Func(prefix + "_invstd")};
  r.sum(s.stat_args()) = Halide::Internal::make_zero(at);
  r.sum(s.stat_args()) += xv(s.ridx);
  r.mean(s.stat_args()) = r.sum(s.stat_args()) / n;
  Expr d = xv(s.ridx) - r.mean(s.stat_args());
  r.sq(s.stat_args()) = Halide::Internal::make_zero(at);
  r.sq(s.stat_args()) += d * d;
  r.inv(s.stat_args()) = 1 / Halide::sqrt(r.sq(s.stat_args()) / n + eps);
  return r;
}

// Y = (x - mean) * rsqrt(var + eps) * scale + bias over dims [axis, rank).
std::vector<HTensor> layer_norm(LowerContext& ctx) {
  skip_reads_if_empty(ctx);
  const HTensor& x = ctx.in[0];
  int rank = x.rank();
  int axis = normalize_axis(ctx.node.attr_int("axis", -1), rank, ctx.node);
  auto axes = trailing_axes(axis, rank);
  RowSpace s(x, axes);
  Halide::Type ot = halide_type(x.dtype), at = Halide::Float(32);
  if (ot == Halide::Float(64)) at = ot;
  Expr eps = Halide::cast(at, ctx.node.attr_float("epsilon", 1e-5f));
  auto xv = [&](const Index& i) { return Halide::cast(at, x.at(i)); };
  RowStats st = row_mean_invstd(x, axes, s, at, eps, "ln");
  Func mean = st.mean, inv = st.inv;

  Func y("layer_norm");
  Expr v = (xv(s.idx) - mean(s.stat_args())) * inv(s.stat_args()) * Halide::cast(at, broadcast_at(ctx.in[1], s.idx, x.shape));
  if (has_input(ctx, 2)) v = v + Halide::cast(at, broadcast_at(ctx.in[2], s.idx, x.shape));
  y(s.all_args()) = Halide::cast(ot, v);
  schedule_norm(ctx, st.all(), s.reduced_inner);

  std::vector<HTensor> outs = {wrap(y, x.shape, out_dtype(ctx))};
  for (int i = 1; i <= 2; ++i) {
    if (!ctx.node.output(i)) continue;
    Func f(i == 1 ? "ln_mean_out" : "ln_invstd_out");
    f(s.all_args()) = Halide::cast(halide_type(out_dtype(ctx, i)), (i == 1 ? mean : inv)(s.stat_args()));
    outs.push_back(wrap(f, out_shape(ctx, i), out_dtype(ctx, i)));
  }
  return outs;
}

// Y = x * rsqrt(mean(x^2) + eps) * scale over dims [axis, rank).
std::vector<HTensor> rms_norm(LowerContext& ctx) {
  skip_reads_if_empty(ctx);
  const HTensor& x = ctx.in[0];
  int rank = x.rank();
  auto axes = trailing_axes(normalize_axis(ctx.node.attr_int("axis", -1), rank, ctx.node), rank);
  RowSpace s(x, axes);
  Halide::Type ot = halide_type(x.dtype), at = ot == Halide::Float(64) ? ot : Halide::Float(32);
  Expr eps = Halide::cast(at, ctx.node.attr_float("epsilon", 1e-5f));
  auto xv = [&](const Index& i) { return Halide::cast(at, x.at(i)); };
  Func ss("rms_sumsq"), inv("rms_inv");
  ss(s.stat_args()) = Halide::Internal::make_zero(at);
  ss(s.stat_args()) += xv(s.ridx) * xv(s.ridx);
  inv(s.stat_args()) = 1 / Halide::sqrt(ss(s.stat_args()) / row_count(x, axes, at) + eps);
  Func y("rms_norm");
  y(s.all_args()) = Halide::cast(ot, xv(s.idx) * inv(s.stat_args()) *
                                         Halide::cast(at, broadcast_at(ctx.in[1], s.idx, x.shape)));
  schedule_norm(ctx, {ss, inv}, s.reduced_inner);
  return {wrap(y, x.shape, out_dtype(ctx))};
}

// Per (n, c): normalize over the spatial dims, then scale[c] and bias[c].
std::vector<HTensor> instance_norm(LowerContext& ctx) {
  const HTensor& x = ctx.in[0];
  int rank = x.rank();
  user_check(rank >= 3) << ctx.node.describe() << ": InstanceNormalization needs rank >= 3";
  auto axes = trailing_axes(2, rank);
  RowSpace s(x, axes);
  Halide::Type ot = halide_type(x.dtype), at = ot == Halide::Float(64) ? ot : Halide::Float(32);
  Expr eps = Halide::cast(at, ctx.node.attr_float("epsilon", 1e-5f));
  auto xv = [&](const Index& i) { return Halide::cast(at, x.at(i)); };
  RowStats st = row_mean_invstd(x, axes, s, at, eps, "in");
  Func mean = st.mean, inv = st.inv;
  Expr c = s.idx[1];
  Func y("instance_norm");
  y(s.all_args()) = Halide::cast(ot, (xv(s.idx) - mean(s.stat_args())) * inv(s.stat_args()) *
                                         Halide::cast(at, ctx.in[1].at({c})) + Halide::cast(at, ctx.in[2].at({c})));
  ctx.schedule = [stats = st.all(), inner = s.reduced_inner](Func out, const Halide::Target& t) {
    schedule_rowwise(out, stats, inner, t);
  };
  return {wrap(y, x.shape, out_dtype(ctx))};
}

// Training form (opset 14+ training_mode=1): normalize with the batch's own mean and population
// variance over every axis but the channel, and return the running statistics updated by momentum.
std::vector<HTensor> batch_norm_training(LowerContext& ctx) {
  const HTensor& x = ctx.in[0];
  user_check(x.rank() >= 2) << ctx.node.describe() << ": BatchNormalization needs rank >= 2";
  std::vector<int> axes = {0};
  for (int k = 2; k < x.rank(); ++k) axes.push_back(k);
  RowSpace s(x, axes);
  Halide::Type ot = halide_type(x.dtype), at = ot == Halide::Float(64) ? ot : Halide::Float(32);
  Expr eps = Halide::cast(at, ctx.node.attr_float("epsilon", 1e-5f));
  Expr momentum = Halide::cast(at, ctx.node.attr_float("momentum", 0.9f));
  RowStats st = row_mean_invstd(x, axes, s, at, eps, "bn");
  Expr c = s.idx[1];
  Func y("batch_norm_training");
  y(s.all_args()) = Halide::cast(ot, (Halide::cast(at, x.at(s.idx)) - st.mean(s.stat_args())) * st.inv(s.stat_args()) *
                                         Halide::cast(at, ctx.in[1].at({c})) + Halide::cast(at, ctx.in[2].at({c})));
  schedule_norm(ctx, st.all(), 0);
  std::vector<HTensor> outs = {wrap(y, x.shape, out_dtype(ctx))};
  // The statistics are Funcs of the channel alone.
  for (int i = 1; i <= 2 && i < static_cast<int>(ctx.node.num_outputs()); ++i) {
    if (!ctx.node.output(i)) {
      outs.emplace_back();
      continue;
    }
    outs.push_back(define(i == 1 ? "bn_running_mean" : "bn_running_var", out_shape(ctx, i), out_dtype(ctx, i),
                          [&](const Index& o) {
                            Expr batch = i == 1 ? st.mean(o[0]) : st.sq(o[0]) / row_count(x, axes, at);
                            return Halide::cast(at, ctx.in[i + 2].at(o)) * momentum + batch * (1 - momentum);
                          }));
  }
  return outs;
}

// Inference form: y = (x - mean[c]) / sqrt(var[c] + eps) * scale[c] + B[c], channel axis 1.
std::vector<HTensor> batch_norm(LowerContext& ctx) {
  if (ctx.node.attr_int("training_mode", 0) != 0) return batch_norm_training(ctx);
  user_check(!ctx.node.output(1)) << ctx.node.describe()
                                  << ": BatchNormalization statistics outputs are not supported without training_mode=1";
  const HTensor& x = ctx.in[0];
  Halide::Type ot = halide_type(x.dtype), at = ot == Halide::Float(64) ? ot : Halide::Float(32);
  Expr eps = Halide::cast(at, ctx.node.attr_float("epsilon", 1e-5f));
  return {define("BatchNormalization", x.shape, out_dtype(ctx), [&](const Index& i) {
    Index c = {x.rank() > 1 ? i[1] : Expr(0)};
    auto p = [&](int k) { return Halide::cast(at, ctx.in[k].at(c)); };
    return (Halide::cast(at, x.at(i)) - p(3)) / Halide::sqrt(p(4) + eps) * p(1) + p(2);
  })};
}

// y = x / (bias + alpha / size * sum of squares over the `size` neighbouring channels)^beta.
std::vector<HTensor> lrn(LowerContext& ctx) {
  const HTensor& x = ctx.in[0];
  int64_t size = ctx.node.attr_int("size", 1);
  float alpha = ctx.node.attr_float("alpha", 1e-4f), beta = ctx.node.attr_float("beta", 0.75f);
  float bias = ctx.node.attr_float("bias", 1.0f);
  Halide::Type ot = halide_type(x.dtype), at = ot == Halide::Float(64) ? ot : Halide::Float(32);
  int32_t lo = static_cast<int32_t>((size - 1) / 2), hi = static_cast<int32_t>(size - 1 - (size - 1) / 2);
  return {define("LRN", x.shape, out_dtype(ctx), [&](const Index& o) {
    Expr sq = Halide::Internal::make_zero(at);
    for (int32_t k = -lo; k <= hi; ++k) {
      Index i = o;
      Expr c = o[1] + k;
      i[1] = Halide::clamp(c, 0, x.shape[1] - 1);
      Expr v = Halide::cast(at, x.at(i));
      sq = sq + Halide::select(c >= 0 && c < x.shape[1], v * v, Halide::Internal::make_zero(at));
    }
    Expr d = Halide::pow(Halide::cast(at, bias) + Halide::cast(at, alpha / static_cast<float>(size)) * sq, Halide::cast(at, beta));
    return Halide::cast(at, x.at(o)) / d;
  })};
}

// (x - mean) / (sqrt(mean(x^2) - mean^2) + 1e-9) over `axes` (default N, H, W), as ONNX's function.
std::vector<HTensor> mean_variance_norm(LowerContext& ctx) {
  const HTensor& x = ctx.in[0];
  std::vector<int> axes;
  for (int64_t a : ctx.node.attr_ints("axes", {0, 2, 3})) axes.push_back(normalize_axis(a, x.rank(), ctx.node));
  std::sort(axes.begin(), axes.end());
  RowSpace s(x, axes);
  Halide::Type ot = halide_type(x.dtype), at = ot == Halide::Float(64) ? ot : Halide::Float(32);
  Expr n = row_count(x, axes, at);
  Func sums("mvn_sums");
  sums(s.stat_args()) = Halide::Tuple(Halide::Internal::make_zero(at), Halide::Internal::make_zero(at));
  Expr v = Halide::cast(at, x.at(s.ridx));
  sums(s.stat_args()) = Halide::Tuple(sums(s.stat_args())[0] + v, sums(s.stat_args())[1] + v * v);
  Expr mean = sums(s.stat_args())[0] / n;
  Expr sd = Halide::sqrt(sums(s.stat_args())[1] / n - mean * mean);
  Func y("mvn");
  y(s.all_args()) = Halide::cast(ot, (Halide::cast(at, x.at(s.idx)) - mean) / (sd + literal(at, 1e-9)));
  ctx.schedule = [sums, inner = s.reduced_inner](Func out, const Halide::Target& t) { schedule_rowwise(out, {sums}, inner, t); };
  return {wrap(y, x.shape, out_dtype(ctx))};
}

Registrar reg_LayerNormalization("", "LayerNormalization", KernelClass::Norm, layer_norm);
Registrar reg_RMSNormalization("", "RMSNormalization", KernelClass::Norm, rms_norm);
Registrar reg_InstanceNormalization("", "InstanceNormalization", KernelClass::Norm, instance_norm);
Registrar reg_LRN("", "LRN", KernelClass::Elementwise, lrn);
Registrar reg_MeanVarianceNormalization("", "MeanVarianceNormalization", KernelClass::Norm, mean_variance_norm);
Registrar reg_BatchNormalization("", "BatchNormalization", KernelClass::Elementwise, batch_norm);

}  // namespace

}  // namespace onnxc::codegen
