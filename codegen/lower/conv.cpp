// Convolution: Conv and ConvTranspose (any spatial rank, groups, strides, dilations, pads or
// auto_pad, ConvTranspose's output_padding/output_shape). A direct reduction over input channels and
// kernel positions into an accumulator computed root, vectorized along the innermost output dim and
// parallel over the others: correct for every form, not a tuned GEMM-based convolution.
#include "codegen/lower/window.h"
#include "codegen/schedule/schedule.h"

namespace onnxc::codegen {

namespace {

using Halide::Expr;
using Halide::Func;

std::vector<int64_t> static_dims(const LowerContext& ctx, const HTensor& t, int from) {
  std::vector<int64_t> r;
  for (int i = from; i < t.rank(); ++i) {
    auto k = Halide::Internal::as_const_int(t.shape[i]);
    user_check(k != nullptr) << ctx.node.describe() << ": a weight with dynamic dims is not supported";
    r.push_back(*k);
  }
  return r;
}

// acc over the output dims, then bias: the schedule both conv forms share.
std::vector<HTensor> finish(LowerContext& ctx, Func acc, const std::vector<Halide::Var>& vars, const Index& o) {
  Halide::Type at = acc.output_types()[0];
  Func y("conv");
  Expr v = acc(std::vector<Expr>(vars.begin(), vars.end()));
  if (has_input(ctx, 2)) v = v + Halide::cast(at, ctx.in[2].at({o[1]}));
  y(vars) = Halide::cast(halide_type(out_dtype(ctx)), v);
  ctx.schedule = [acc](Func output, const Halide::Target& t) {
    schedule_output(output, KernelClass::Elementwise, t);
    Func a = acc;
    a.compute_root();
    schedule_reduction(a, true, worth_parallel(output), t);
  };
  HTensor h;
  h.func = y;
  h.shape = out_shape(ctx);
  h.dtype = out_dtype(ctx);
  return {h};
}

// Y[n, m, o] = B[m] + sum_{c, r} X[n, g*Cg + c, o*s - pad + r*d] * W[m, c, r], g = m / (M / group).
std::vector<HTensor> conv(LowerContext& ctx) {
  const HTensor& x = ctx.in[0];
  const HTensor& w = ctx.in[1];
  int sp = x.rank() - 2;
  user_check(sp >= 1 && w.rank() == x.rank()) << ctx.node.describe() << ": expected X [N, C, ...] and W [M, C/group, ...]";
  const auto& shape = out_shape(ctx);
  Window win = read_window(ctx, x, shape, static_dims(ctx, w, 2));
  int64_t group = ctx.node.attr_int("group", 1);
  Halide::Type at = accumulator_type(halide_type(x.dtype));
  Expr cg = w.shape[1], mg = shape[1] / static_cast<int32_t>(group);

  std::vector<Halide::Range> ranges = {{0, cg}};
  for (int64_t k : win.kernel) ranges.emplace_back(0, static_cast<int32_t>(k));
  Halide::RDom r(Halide::Region(ranges.begin(), ranges.end()));
  auto vars = make_vars(x.rank());
  Index o = onnx_index(vars);
  Expr g = o[1] / mg;
  Index xi = {o[0], g * cg + r[0]}, wi = {o[1], r[0]};
  Expr valid = Halide::Internal::const_true();
  for (int s = 0; s < sp; ++s) {
    Expr pos = win.input_pos(s, o[s + 2], r[s + 1]);
    valid = valid && pos >= 0 && pos < x.shape[s + 2];
    xi.push_back(Halide::clamp(pos, 0, x.shape[s + 2] - 1));
    wi.push_back(r[s + 1]);
  }
  Func acc("conv_acc");
  std::vector<Expr> args(vars.begin(), vars.end());
  acc(args) = Halide::Internal::make_zero(at);
  acc(args) += Halide::select(valid, Halide::cast(at, x.at(xi)) * Halide::cast(at, w.at(wi)), Halide::Internal::make_zero(at));
  ctx.reassociable.push_back(acc);
  return finish(ctx, acc, vars, o);
}

// Y[n, m, o] = B[m] + sum_{c, r : o + pad - r*d = i*s, 0 <= i < in} X[n, g*Cg + c, i] * W[g*Cg + c, m % Mg, r].
std::vector<HTensor> conv_transpose(LowerContext& ctx) {
  const HTensor& x = ctx.in[0];
  const HTensor& w = ctx.in[1];
  const ir::Node& n = ctx.node;
  int sp = x.rank() - 2;
  user_check(sp >= 1 && w.rank() == x.rank()) << n.describe() << ": expected X [N, C, ...] and W [C, M/group, ...]";
  const auto& shape = out_shape(ctx);
  std::vector<int64_t> kernel = static_dims(ctx, w, 2);
  std::vector<int64_t> strides = n.attr_ints("strides", std::vector<int64_t>(sp, 1));
  std::vector<int64_t> dil = n.attr_ints("dilations", std::vector<int64_t>(sp, 1));
  std::vector<int64_t> opad = n.attr_ints("output_padding", std::vector<int64_t>(sp, 0));
  std::vector<int64_t> pads = n.attr_ints("pads", std::vector<int64_t>(2 * sp, 0));
  std::string auto_pad = n.attr_string("auto_pad", "NOTSET");
  bool derive = n.has_attr("output_shape") || auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER";
  std::vector<Expr> pad_begin;
  for (int s = 0; s < sp; ++s) {
    if (!derive) {
      pad_begin.push_back(auto_pad == "VALID" ? Expr(0) : Expr(static_cast<int32_t>(pads[s])));
      continue;
    }
    Expr total = static_cast<int32_t>(strides[s]) * (x.shape[s + 2] - 1) + static_cast<int32_t>(opad[s]) +
                 static_cast<int32_t>((kernel[s] - 1) * dil[s] + 1) - shape[s + 2];
    pad_begin.push_back(auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2);
  }
  int64_t group = n.attr_int("group", 1);
  Halide::Type at = accumulator_type(halide_type(x.dtype));
  Expr cg = x.shape[1] / static_cast<int32_t>(group), mg = w.shape[1];

  std::vector<Halide::Range> ranges = {{0, cg}};
  for (int64_t k : kernel) ranges.emplace_back(0, static_cast<int32_t>(k));
  Halide::RDom r(Halide::Region(ranges.begin(), ranges.end()));
  auto vars = make_vars(x.rank());
  Index o = onnx_index(vars);
  Expr g = o[1] / mg, c = g * cg + r[0];
  Index xi = {o[0], c}, wi = {c, o[1] % mg};
  Expr valid = Halide::Internal::const_true();
  for (int s = 0; s < sp; ++s) {
    Expr num = o[s + 2] + pad_begin[s] - r[s + 1] * static_cast<int32_t>(dil[s]);
    Expr i = num / static_cast<int32_t>(strides[s]);
    valid = valid && num % static_cast<int32_t>(strides[s]) == 0 && num >= 0 && i < x.shape[s + 2];
    xi.push_back(Halide::clamp(i, 0, x.shape[s + 2] - 1));
    wi.push_back(r[s + 1]);
  }
  Func acc("convt_acc");
  std::vector<Expr> args(vars.begin(), vars.end());
  acc(args) = Halide::Internal::make_zero(at);
  acc(args) += Halide::select(valid, Halide::cast(at, x.at(xi)) * Halide::cast(at, w.at(wi)), Halide::Internal::make_zero(at));
  ctx.reassociable.push_back(acc);
  return finish(ctx, acc, vars, o);
}

Registrar reg_Conv("", "Conv", KernelClass::Other, conv);
Registrar reg_ConvTranspose("", "ConvTranspose", KernelClass::Other, conv_transpose);

}  // namespace

}  // namespace onnxc::codegen
