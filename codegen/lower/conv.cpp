// Convolution: Conv and ConvTranspose (any spatial rank, groups, strides, dilations, pads or
// auto_pad, ConvTranspose's output_padding/output_shape). A float32 Conv with one group and constant
// weights on a CPU is an implicit GEMM through the register-blocked kernel; other forms are a direct
// reduction, vectorized along the innermost output dim and parallel over the others.
#include <optional>

#include "codegen/lower/window.h"
#include "codegen/schedule/conv.h"
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

// acc over the output dims, then bias: the schedule both conv forms share, unless `depthwise` (a
// 2-D convolution with one input channel per output channel, on a CPU) names its window.
std::vector<HTensor> finish(LowerContext& ctx, Func acc, const std::vector<Halide::Var>& vars, const Index& o,
                            std::optional<Halide::RDom> depthwise = std::nullopt) {
  Halide::Type at = acc.output_types()[0];
  Func y("conv");
  Expr v = acc(std::vector<Expr>(vars.begin(), vars.end()));
  if (has_input(ctx, 2)) v = v + Halide::cast(at, ctx.in[2].at({o[1]}));
  y(vars) = Halide::cast(halide_type(out_dtype(ctx)), v);
  if (depthwise) {
    Halide::RDom r = *depthwise;
    ctx.schedule = [acc, r](Func output, const Halide::Target& t) { schedule_depthwise(acc, r, output, t); };
  } else {
    ctx.schedule = [acc](Func output, const Halide::Target& t) {
      schedule_output(output, KernelClass::Elementwise, t);
      Func a = acc;
      a.compute_root();
      schedule_reduction(a, true, worth_parallel(output), t);
    };
  }
  acc.compute_root();  // until the schedule places it (and if it never runs)
  HTensor h;
  h.func = y;
  h.shape = out_shape(ctx);
  h.dtype = out_dtype(ctx);
  return {h};
}

// The implicit GEMM: Y[n, m, p] = B[m] + sum_k W[m, k] · col(k, p) over output pixels p and
// K = C·k1..kr (k = (c, r)), where col(k, p) is the input element kernel offset r of channel c sees
// from pixel p, zero in the padding. W is the GEMM's A, one row per output channel, read in place.
// col, the GEMM's B, is never built: the input is zero-padded and split into stride phases (a
// stride-2 image into its 4 planes of even/odd rows and columns; a stride-1 image is its one plane),
// each plane flattened per channel, and the pixels are those of a plane's grid (rows as wide as a
// plane, the columns past the output's width computed and dropped). Tap r then reads one plane
// shifted by a constant: col(k, p) = phases(p + shift(r), phase(r), c), dense vector loads in the
// register block. A 3×3 stride-1 conv on a 14-wide image computes 16/14 of the outputs it keeps.
std::vector<HTensor> conv_gemm(LowerContext& ctx, const Window& win) {
  using Halide::Var;
  const HTensor& x = ctx.in[0];
  const ir::Tensor& wt = *ctx.const_in.data(1);
  const auto& shape = out_shape(ctx);
  const int sp = win.spatial();
  const int64_t m_ext = wt.dims()[0], c_ext = wt.dims()[1];
  int64_t k_ext = 1;
  for (size_t i = 1; i < wt.dims().size(); ++i) k_ext *= wt.dims()[i];
  // Per spatial dim: the stride, the extent of a phase plane, and the pixel grid (the output's
  // extent in the first dim, a plane's in the others).
  std::vector<int32_t> st(sp);
  std::vector<Expr> plane(sp), grid(sp);
  Expr p_ext = 1;
  for (int s = 0; s < sp; ++s) {
    st[s] = static_cast<int32_t>(win.strides[s]);
    Expr padded = x.shape[s + 2] + win.pad_begin[s] + win.pad_end[s];
    plane[s] = Halide::Internal::simplify((padded + st[s] - 1) / st[s]);
    grid[s] = s > 0 ? plane[s] : shape[s + 2];
    p_ext = p_ext * grid[s];
  }
  p_ext = Halide::Internal::simplify(p_ext);

  ConvGemmFuncs g;
  const int64_t* p_static = Halide::Internal::as_const_int(p_ext);
  g.panel = choose_panel(p_static ? *p_static : 64);
  g.p_extent = p_ext;
  g.m_extent = static_cast<int>(m_ext);
  HTensor w2 = ctx.add_constant("conv_weights", wt.reshaped({m_ext, k_ext}));

  // phases(q, ph, c, n): plane ph (row-major over the per-dim phases) of channel c of image n,
  // flattened; zero past its end (the last panel and the last taps read beyond).
  Var q("q"), ph("ph"), c("c"), n("n"), p("p"), m("m");
  Index xi = {n, c};
  Expr valid = q >= 0, fq = q, fph = ph;
  std::vector<Expr> pos(sp);
  for (int s = sp - 1; s >= 0; --s) {
    Expr coord = s > 0 ? fq % plane[s] : fq, phase = fph % st[s];
    if (s == 0) valid = valid && coord < plane[0];
    fq = fq / plane[s];
    fph = fph / st[s];
    pos[s] = coord * st[s] + phase - win.pad_begin[s];
  }
  for (int s = 0; s < sp; ++s) {
    valid = valid && pos[s] >= 0 && pos[s] < x.shape[s + 2];
    xi.push_back(Halide::clamp(pos[s], 0, x.shape[s + 2] - 1));
  }
  g.input = Func("conv_phases");
  g.input(q, ph, c, n) = Halide::select(valid, x.at(xi), 0.0f);

  // One RDom dim per tap dim (innermost: the last spatial) and the channel outermost.
  std::vector<Halide::Range> ranges;
  for (int s = sp - 1; s >= 0; --s) ranges.emplace_back(0, static_cast<int32_t>(win.kernel[s]));
  ranges.emplace_back(0, static_cast<int32_t>(c_ext));
  g.k = Halide::RDom(Halide::Region(ranges.begin(), ranges.end()), "k");
  Expr shift = 0, phase = 0, flat_k = g.k[sp], qstride = 1, pstride = 1;
  for (int s = sp - 1; s >= 0; --s) {
    Expr j = g.k[sp - 1 - s] * static_cast<int32_t>(win.dilations[s]);
    shift = shift + (j / st[s]) * qstride;
    phase = phase + (j % st[s]) * pstride;
    qstride = qstride * plane[s];
    pstride = pstride * st[s];
  }
  for (int s = 0; s < sp; ++s) flat_k = flat_k * static_cast<int32_t>(win.kernel[s]) + g.k[sp - 1 - s];
  g.acc = Func("conv_acc");
  g.acc(p, m, n) = 0.0f;
  // Rows past M (a partial register block) read the last row of W; they are never stored.
  g.acc(p, m, n) += w2.at({Halide::min(m, g.m_extent - 1), flat_k}) * g.input(p + shift, phase, g.k[sp], n);
  ctx.reassociable.push_back(g.acc);
  g.gemm = Func("conv_gemm");
  g.gemm(p, m, n) = g.acc(p, m, n);
  // Until the schedule callback places them (and if it never runs), each is computed whole.
  for (Func f : {g.input, g.acc, g.gemm}) f.compute_root();

  auto vars = make_vars(x.rank());
  Index o = onnx_index(vars);
  Expr flat = o[2];
  for (int s = 1; s < sp; ++s) flat = flat * grid[s] + o[s + 2];
  Expr v = g.gemm(flat, o[1], o[0]);
  if (has_input(ctx, 2)) v = v + Halide::cast<float>(ctx.in[2].at({o[1]}));
  Func y("conv");
  y(vars) = v;
  ctx.schedule = [g](Func output, const Halide::Target& t) { schedule_conv_gemm(g, output, t); };
  return {HTensor{y, shape, out_dtype(ctx)}};
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
  const bool f32 = x.dtype == ir::DType::Float32 && w.dtype == ir::DType::Float32 &&
                   (!has_input(ctx, 2) || ctx.in[2].dtype == ir::DType::Float32);
  if (group == 1 && f32 && !is_gpu(ctx.target) && ctx.const_in.data(1)) return conv_gemm(ctx, win);
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
  const bool depthwise = sp == 2 && Halide::Internal::is_const_one(cg) &&
                         Halide::Internal::is_const_one(Halide::Internal::simplify(mg)) && !is_gpu(ctx.target);
  return finish(ctx, acc, vars, o, depthwise ? std::optional<Halide::RDom>(r) : std::nullopt);
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

// MatMul's class: the partitioner folds the convolution's elementwise consumers (bias, activation,
// residual Add) into its kernel as an epilogue, and inlines no producer into its inner loops.
Registrar reg_Conv("", "Conv", KernelClass::MatMul, conv);
Registrar reg_ConvTranspose("", "ConvTranspose", KernelClass::Other, conv_transpose);

}  // namespace

}  // namespace onnxc::codegen
