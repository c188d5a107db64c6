// Signal ops: DFT (a direct O(n²) transform along one axis; real or complex input, forward or inverse,
// onesided, dft_length constant), STFT (the same transform per frame, frame step and length read at run
// time) and MaxUnpool (scatter of the pooled values to the positions its indices name, zeros elsewhere).
#include <cmath>
#include <optional>

#include "codegen/lower/lower_util.h"
#include "codegen/schedule/schedule.h"

namespace onnxc::codegen {
namespace {

using Halide::Expr;
using Halide::Func;

// Y[.., k, c] = Σ_j X[.., j] · e^{∓2πi·jk/n} (÷ n for the inverse). Angles use jk mod n, so they stay
// exact integers before the one float64 multiply; the sum is float64 and rounded once. inverse with
// onesided is the real inverse (numpy's irfft): the n/2 + 1 bins in stand for the whole Hermitian
// spectrum (bins 1 .. (n-1)/2 count twice), and the output holds n real samples ([.., n, .., 1]).
// The transform along one axis, as the value at output index `o`; its sum is a Func of its own,
// added to `sums` for the schedule.
Expr dft_along(const LowerContext& ctx, int axis, const Index& o, const std::vector<Halide::Var>& vars,
               std::vector<Func>& sums) {
  const HTensor& x = ctx.in[0];
  const ir::Node& node = ctx.node;
  int rank = x.rank();
  bool inverse = node.attr_int("inverse", 0) != 0;
  bool real_inverse = inverse && node.attr_int("onesided", 0) != 0;
  Expr len = real_inverse ? (x.shape[axis] - 1) * 2 : x.shape[axis];
  if (has_input(ctx, 1)) {
    auto n = const_ints(ctx, 1);
    user_check(n.has_value()) << node.describe() << ": dft_length must be constant";
    len = static_cast<int32_t>((*n)[0]);
  }
  Expr complex_in = x.shape[rank - 1] == 2;
  const Halide::Type f64 = Halide::Float(64);
  Halide::RDom j(0, Halide::min(real_inverse ? len / 2 + 1 : len, x.shape[axis]), "j");
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
  if (real_inverse) {
    // The real part only; bins other than 0 and (for even n) n/2 stand for their mirror too.
    Expr once = j.x == 0 || j.x * 2 == len;
    term = Halide::select(once, Halide::Internal::make_one(f64), Halide::Internal::make_const(f64, 2.0)) * (xr * c - xim * s);
  }
  Func acc("dft_acc");
  std::vector<Expr> args(vars.begin(), vars.end());
  acc(args) = Halide::Internal::make_zero(f64);
  acc(args) += term;
  sums.push_back(acc);
  Expr v = acc(args);
  return inverse ? v / Halide::cast(f64, len) : v;
}

// The axes a run-time DFT axis may take: all but the complex one, or with onesided those whose
// transform has the output's shape (known while compiling): bins n/2 + 1 (forward) or samples
// 2 (n - 1) (the real inverse) along the axis, the other extents unchanged.
std::vector<int> dft_axis_candidates(const LowerContext& ctx) {
  const HTensor& x = ctx.in[0];
  const int rank = x.rank();
  std::vector<int> all;
  for (int d = 0; d < rank - 1; ++d) all.push_back(d);
  if (ctx.node.attr_int("onesided", 0) == 0) return all;
  const bool inverse = ctx.node.attr_int("inverse", 0) != 0;
  const auto& y = out_shape(ctx);
  std::optional<std::vector<int64_t>> n = has_input(ctx, 1) ? const_ints(ctx, 1) : std::nullopt;
  user_check(!has_input(ctx, 1) || n.has_value()) << ctx.node.describe() << ": dft_length must be constant";
  auto same = [](const Expr& a, const Expr& b) {
    return Halide::Internal::can_prove(Halide::cast<int64_t>(a) == Halide::cast<int64_t>(b));
  };
  std::vector<int> fit;
  for (int d : all) {
    bool ok = static_cast<int>(y.size()) == rank;
    for (int i = 0; ok && i < rank - 1; ++i) {
      Expr want = x.shape[i];
      if (i == d) {
        Expr len = n ? Expr(static_cast<int32_t>((*n)[0])) : (inverse ? (x.shape[d] - 1) * 2 : x.shape[d]);
        want = inverse ? len : len / 2 + 1;
      }
      ok = same(y[i], want);
    }
    if (ok) fit.push_back(d);
  }
  return fit;
}

std::vector<HTensor> dft(LowerContext& ctx) {
  const HTensor& x = ctx.in[0];
  const ir::Node& node = ctx.node;
  int rank = x.rank();
  user_check(rank >= 2) << node.describe() << ": DFT needs [batch, ..., length, 1 or 2]";
  auto vars = make_vars(rank);
  Index o = onnx_index(vars);
  std::vector<Func> sums;
  Expr v;
  int64_t axis_attr = node.attr_int("axis", 1);
  auto a = ctx.opset >= 20 ? const_ints(ctx, 2) : std::nullopt;
  if (ctx.opset >= 20 && has_input(ctx, 2) && !a) {
    // An axis given at run time: the transform along each possible axis, selected by its value. With
    // onesided the output's shape depends on the axis, so only the axes that give the output shape
    // known while compiling are candidates, and the kernel checks that the axis is one of them.
    Expr axis = Halide::cast<int32_t>(element(ctx, 2, 0));
    axis = Halide::select(axis < 0, axis + rank, axis);
    std::vector<int> candidates = dft_axis_candidates(ctx);
    user_check(!candidates.empty()) << node.describe() << ": with onesided and a run-time axis, no axis gives the "
                                    << "output shape the model declares (it must be known when compiling)";
    v = dft_along(ctx, candidates.back(), o, vars, sums);
    Expr known = axis == candidates.back();
    for (int k = static_cast<int>(candidates.size()) - 2; k >= 0; --k) {
      v = Halide::select(axis == candidates[k], dft_along(ctx, candidates[k], o, vars, sums), v);
      known = known || axis == candidates[k];
    }
    if (static_cast<int>(candidates.size()) < rank - 1) {
      ctx.checks_data = true;
      v = Halide::require(known, v, "DFT: the run-time axis does not give the output shape the model declares");
    }
  } else {
    if (ctx.opset >= 20) axis_attr = a ? (*a)[0] : -2;
    int axis = normalize_axis(axis_attr, rank, node);
    user_check(axis < rank - 1) << node.describe() << ": the DFT axis cannot be the complex axis";
    v = dft_along(ctx, axis, o, vars, sums);
  }
  Func y("dft");
  y(vars) = Halide::cast(halide_type(out_dtype(ctx)), v);
  ctx.schedule = [sums](Func out, const Halide::Target& t) {
    for (Func acc : sums) acc.compute_root();
    schedule_output(out, KernelClass::Elementwise, t);
  };
  return {HTensor{y, out_shape(ctx), out_dtype(ctx)}};
}

// Y[b, f, k, c] = Σ_j X[b, f·step + j] · w[j] · e^{-2πi·jk/len}: one DFT per frame of `len` samples,
// `step` apart. step and len are values read at run time; the output's extents (frames, bins) come
// from the inferred shape, and the kernel checks they agree with those values.
std::vector<HTensor> stft(LowerContext& ctx) {
  const HTensor& x = ctx.in[0];
  const ir::Node& node = ctx.node;
  user_check(x.rank() == 3) << node.describe() << ": STFT needs a signal of [batch, length, 1 or 2]";
  bool window = has_input(ctx, 2), frame_given = has_input(ctx, 3);
  user_check(window || frame_given) << node.describe() << ": STFT needs a window or a frame_length";
  const Halide::Type f64 = Halide::Float(64);
  Expr step = element_i32(ctx, 1, 0);
  Expr len = frame_given ? element_i32(ctx, 3, 0) : ctx.in[2].shape[0];
  const auto& shape = out_shape(ctx);
  bool onesided = node.attr_int("onesided", 1) != 0;
  Expr ok = step > 0 && len > 0 && len <= x.shape[1] && shape[1] == (x.shape[1] - len) / step + 1 &&
            shape[2] == (onesided ? len / 2 + 1 : len);
  if (window && frame_given) ok = ok && ctx.in[2].shape[0] == len;
  // The sum runs over len samples; len is a value read at run time, and an RDom's extent may not be,
  // so the RDom spans the most that the bins extent allows (len <= 2·bins - 1 once `ok` holds) and
  // samples past len add nothing.
  Halide::RDom j(0, onesided ? 2 * shape[2] - 1 : shape[2], "j");
  auto vars = make_vars(4);
  Index o = onnx_index(vars);
  Expr t = Halide::min(o[1] * step + j.x, x.shape[1] - 1);  // in bounds even when `ok` fails
  Expr complex_in = x.shape[2] == 2;
  Expr xr = Halide::cast(f64, x.at({o[0], t, 0}));
  Expr xi = Halide::select(complex_in, Halide::cast(f64, x.at({o[0], t, Halide::min(1, x.shape[2] - 1)})),
                           Halide::Internal::make_zero(f64));
  Expr inside = j.x < len;
  xr = Halide::select(inside, xr, Halide::Internal::make_zero(f64));
  xi = Halide::select(inside, xi, Halide::Internal::make_zero(f64));
  if (window) {
    Expr w = Halide::cast(f64, ctx.in[2].at({Halide::min(j.x, ctx.in[2].shape[0] - 1)}));
    xr *= w;
    xi *= w;
  }
  Expr phase = Halide::cast(f64, (Halide::cast<int64_t>(j.x) * o[2]) % Halide::cast<int64_t>(Halide::max(len, 1)));
  Expr theta = phase * Halide::Internal::make_const(f64, -2 * M_PI) / Halide::cast(f64, len);
  Expr c = Halide::cos(theta), s = Halide::sin(theta);
  Func acc("stft_acc");
  std::vector<Expr> args(vars.begin(), vars.end());
  acc(args) = Halide::Internal::make_zero(f64);
  acc(args) += Halide::select(o[3] == 0, xr * c - xi * s, xr * s + xi * c);
  Func y("stft");
  ctx.checks_data = true;
  y(vars) = Halide::require(ok, Halide::cast(halide_type(out_dtype(ctx)), acc(args)),
                            node.describe() + ": frame_step, frame_length and the window do not match the signal's "
                                              "length and the output's shape");
  ctx.schedule = [acc](Func out, const Halide::Target& tg) {
    Func a = acc;
    a.compute_root();
    schedule_output(out, KernelClass::Elementwise, tg);
  };
  return {HTensor{y, shape, out_dtype(ctx)}};
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
Registrar reg_STFT("", "STFT", KernelClass::Other, stft);
Registrar reg_MaxUnpool("", "MaxUnpool", KernelClass::Other, max_unpool);

}  // namespace
}  // namespace onnxc::codegen
