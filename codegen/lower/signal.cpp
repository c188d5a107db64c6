// Signal ops with static output shapes: DFT (a direct O(n²) transform along one axis; real or
// complex input, forward or inverse, onesided, dft_length constant) and MaxUnpool (scatter of the
// pooled values to the positions its indices name, zeros elsewhere).
#include <cmath>

#include "codegen/lower/lower_util.h"
#include "codegen/schedule/schedule.h"

namespace onnxc::codegen {
namespace {

using Halide::Expr;
using Halide::Func;

// Y[.., k, c] = Σ_j X[.., j] · e^{∓2πi·jk/n} (÷ n for the inverse). Angles use jk mod n, so they stay
// exact integers before the one float64 multiply; the sum is float64 and rounded once.
std::vector<HTensor> dft(LowerContext& ctx) {
  const HTensor& x = ctx.in[0];
  const ir::Node& node = ctx.node;
  int rank = x.rank();
  user_check(rank >= 2) << node.describe() << ": DFT needs [batch, ..., length, 1 or 2]";
  int64_t axis_attr = node.attr_int("axis", 1);
  if (ctx.opset >= 20) {
    auto a = const_ints(ctx, 2);
    user_check(!has_input(ctx, 2) || a) << node.describe() << ": a run-time axis must be constant";
    axis_attr = a ? (*a)[0] : -2;
  }
  int axis = normalize_axis(axis_attr, rank, node);
  user_check(axis < rank - 1) << node.describe() << ": the DFT axis cannot be the complex axis";
  Expr len = x.shape[axis];
  if (has_input(ctx, 1)) {
    auto n = const_ints(ctx, 1);
    user_check(n.has_value()) << node.describe() << ": dft_length must be constant";
    len = static_cast<int32_t>((*n)[0]);
  }
  bool inverse = node.attr_int("inverse", 0) != 0;
  Expr complex_in = x.shape[rank - 1] == 2;
  const Halide::Type f64 = Halide::Float(64);
  Halide::RDom j(0, Halide::min(len, x.shape[axis]), "j");
  auto vars = make_vars(rank);
  Index o = onnx_index(vars);
  Index xi = o;
  xi[axis] = j.x;
  Index re = xi, im = xi;
  re[rank - 1] = 0;
  im[rank - 1] = Halide::min(1, x.shape[rank - 1] - 1);
  Expr xr = Halide::cast(f64, x.at(re));
  Expr xim = Halide::select(complex_in, Halide::cast(f64, x.at(im)), Halide::Internal::make_zero(f64));
  Expr k = o[axis];
  Expr phase = Halide::cast(f64, (Halide::cast<int64_t>(j.x) * k) % Halide::cast<int64_t>(len));
  Expr theta = phase * Halide::Internal::make_const(f64, inverse ? 2 * M_PI : -2 * M_PI) / Halide::cast(f64, len);
  Expr c = Halide::cos(theta), s = Halide::sin(theta);
  // (xr + i·xim)(c + i·s): the output's last index picks the real (0) or imaginary (1) part.
  Expr term = Halide::select(o[rank - 1] == 0, xr * c - xim * s, xr * s + xim * c);
  Func acc("dft_acc");
  std::vector<Expr> args(vars.begin(), vars.end());
  acc(args) = Halide::Internal::make_zero(f64);
  acc(args) += term;
  Expr v = acc(args);
  if (inverse) v = v / Halide::cast(f64, len);
  Func y("dft");
  y(vars) = Halide::cast(halide_type(out_dtype(ctx)), v);
  ctx.schedule = [acc](Func out, const Halide::Target& t) {
    Func a = acc;
    a.compute_root();
    schedule_output(out, KernelClass::Elementwise, t);
  };
  return {HTensor{y, out_shape(ctx), out_dtype(ctx)}};
}

// Y = 0, then Y[unflatten(I[i])] = X[i] for every element i of X. I holds indices as MaxPool
// returns them, ((n·C + c)·H + h)·W + w over the unpooled shape the pool attributes give; with an
// explicit output_shape the positions keep their (h, w) and land in the larger output.
std::vector<HTensor> max_unpool(LowerContext& ctx) {
  const HTensor &x = ctx.in[0], &idx = ctx.in[1];
  const auto& out = out_shape(ctx);
  int rank = x.rank();
  user_check(rank >= 3) << ctx.node.describe() << ": MaxUnpool expects [N, C, spatial...]";
  int sp = rank - 2;
  std::vector<int64_t> kernel = ctx.node.attr_ints("kernel_shape");
  std::vector<int64_t> strides = ctx.node.attr_ints("strides", std::vector<int64_t>(sp, 1));
  std::vector<int64_t> pads = ctx.node.attr_ints("pads", std::vector<int64_t>(2 * sp, 0));
  user_check(static_cast<int>(kernel.size()) == sp) << ctx.node.describe() << ": kernel_shape needs " << sp << " values";
  std::vector<Expr> shape = {x.shape[0], x.shape[1]};  // the unpooled shape the indices address
  for (int i = 0; i < sp; ++i)
    shape.push_back((x.shape[i + 2] - 1) * static_cast<int32_t>(strides[i]) +
                    static_cast<int32_t>(kernel[i] - pads[i] - pads[i + sp]));
  std::vector<Halide::Range> ranges;
  for (const Expr& e : x.shape) ranges.emplace_back(0, e);
  Halide::RDom r(Halide::Region(ranges.begin(), ranges.end()));
  Index ri;
  for (int k = 0; k < rank; ++k) ri.push_back(r[k]);
  Expr flat = Halide::cast<int64_t>(idx.at(ri));
  std::vector<Expr> lhs(rank);  // Halide order
  for (int k = rank - 1; k >= 0; --k) {
    Expr ext = Halide::cast<int64_t>(shape[k]);
    lhs[rank - 1 - k] = Halide::clamp(Halide::cast<int32_t>(flat % ext), 0, Halide::min(shape[k], out[k]) - 1);
    flat = flat / ext;
  }
  Func scatter("max_unpool_scatter");
  auto vars = make_vars(rank);
  Halide::Type t = halide_type(out_dtype(ctx));
  scatter(vars) = Halide::Internal::make_zero(t);
  scatter(lhs) = Halide::cast(t, x.at(ri));
  HTensor y = define("max_unpool", out, out_dtype(ctx), [&](const Index& o) {
    return scatter(std::vector<Expr>(o.rbegin(), o.rend()));
  });
  ctx.schedule = [scatter](Func out, const Halide::Target& tg) {
    Func s = scatter;
    s.compute_root();
    schedule_output(out, KernelClass::Elementwise, tg);
  };
  return {y};
}

Registrar reg_DFT("", "DFT", KernelClass::Other, dft);
Registrar reg_MaxUnpool("", "MaxUnpool", KernelClass::Other, max_unpool);

}  // namespace
}  // namespace onnxc::codegen
