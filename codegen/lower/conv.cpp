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
// from pixel p, zero in the padding. W is the GEMM's A, one row per output channel, read in place;
// col is its B, never built whole:
//  - stride 1: the input is zero-padded and flattened per channel, and the pixels are those of the
//    padded grid (rows as wide as the padded input, the columns past the output's width computed and
//    dropped). Then col(k, p) = xflat(c, p + offset(r)): each tap is the same flat image shifted, and
//    the register block reads it with dense vector loads. A 3×3 conv on a 14-wide image computes
//    16/14 of the outputs it keeps; a 56-wide one 58/56.
//  - other strides: the schedule gathers col one panel of pixels at a time (im2col) in the GEMM's
//    packed-B layout (gemm.h).
std::vector<HTensor> conv_gemm(LowerContext& ctx, const Window& win) {
  using Halide::Var;
  const HTensor& x = ctx.in[0];
  const ir::Tensor& wt = *ctx.const_in.data(1);
  const auto& shape = out_shape(ctx);
  const int sp = win.spatial();
  const int64_t m_ext = wt.dims()[0], c_ext = wt.dims()[1];
  int64_t k_ext = 1;
  for (size_t i = 1; i < wt.dims().size(); ++i) k_ext *= wt.dims()[i];
  bool shifted = true;
  for (int64_t st : win.strides) shifted = shifted && st == 1;
  // Extents of the pixel grid the GEMM runs over: the output's, or (shifted) the padded input's
  // past the first spatial dim.
  std::vector<Expr> grid(sp), padded(sp);
  Expr p_ext = 1;
  for (int s = 0; s < sp; ++s) {
    padded[s] = Halide::Internal::simplify(x.shape[s + 2] + win.pad_begin[s] + win.pad_end[s]);
    grid[s] = shifted && s > 0 ? padded[s] : shape[s + 2];
    p_ext = p_ext * grid[s];
  }
  p_ext = Halide::Internal::simplify(p_ext);

  ConvGemmFuncs g;
  const int64_t* p_static = Halide::Internal::as_const_int(p_ext);
  g.panel = choose_panel(p_static ? *p_static : 64);
  g.p_extent = p_ext;
  g.m_extent = static_cast<int>(m_ext);
  const int width = g.panel.width;
  HTensor w2 = ctx.add_constant("conv_weights", wt.reshaped({m_ext, k_ext}));
  Var i("i"), kk("kk"), pn("pn"), n("n"), p("p"), m("m"), q("q"), c("c");

  // The input element at spatial position `pos` (per dim, before padding), zero outside.
  auto read = [&](const Expr& ch, const std::vector<Expr>& pos) {
    Index xi = {n, ch};
    Expr valid = Halide::Internal::const_true();
    for (int s = 0; s < sp; ++s) {
      valid = valid && pos[s] >= 0 && pos[s] < x.shape[s + 2];
      xi.push_back(Halide::clamp(pos[s], 0, x.shape[s + 2] - 1));
    }
    return Halide::select(valid, x.at(xi), 0.0f);
  };
  // Row-major coordinates of flat index `f` over extents `ext`.
  auto unflatten = [&](Expr f, const std::vector<Expr>& ext) {
    std::vector<Expr> co(sp);
    for (int s = sp - 1; s > 0; --s) {
      co[s] = f % ext[s];
      f = f / ext[s];
    }
    co[0] = f;
    return co;
  };

  Expr b_val, w_val;
  if (shifted) {
    // xflat(q, c, n): channel c of image n, padded and flattened; zero past its end (the last
    // panel and the last taps read up to a panel and a kernel row beyond).
    std::vector<Expr> co = unflatten(q, padded), pos(sp);
    for (int s = 0; s < sp; ++s) pos[s] = co[s] - win.pad_begin[s];
    g.input = Func("conv_padded");
    g.input(q, c, n) = Halide::select(q >= 0 && co[0] < padded[0], read(c, pos), 0.0f);
    // One RDom dim per tap dim (innermost: the last spatial) and the channel outermost.
    std::vector<Halide::Range> ranges;
    for (int s = sp - 1; s >= 0; --s) ranges.emplace_back(0, static_cast<int32_t>(win.kernel[s]));
    ranges.emplace_back(0, static_cast<int32_t>(c_ext));
    g.k = Halide::RDom(Halide::Region(ranges.begin(), ranges.end()), "k");
    Expr offset = 0, flat_k = g.k[sp], pstride = 1;
    for (int s = sp - 1; s >= 0; --s) {
      offset = offset + g.k[sp - 1 - s] * static_cast<int32_t>(win.dilations[s]) * pstride;
      pstride = pstride * padded[s];
    }
    for (int s = 0; s < sp; ++s) flat_k = flat_k * static_cast<int32_t>(win.kernel[s]) + g.k[sp - 1 - s];
    b_val = g.input(p + offset, g.k[sp], n);
    w_val = w2.at({Halide::min(m, g.m_extent - 1), flat_k});
  } else {
    // stage(i, kk, pn, n) = col(kk, pn·width + i) for image n; pixels past the end repeat the last.
    std::vector<Expr> co = unflatten(Halide::min(pn * width + i, p_ext - 1), grid), pos(sp);
    Expr rem = kk;
    for (int s = sp - 1; s >= 0; --s) {
      pos[s] = win.input_pos(s, co[s], rem % static_cast<int32_t>(win.kernel[s]));
      rem = rem / static_cast<int32_t>(win.kernel[s]);
    }
    g.stage = Func("conv_im2col");
    g.stage(i, kk, pn, n) = read(rem, pos);
    g.k = Halide::RDom(0, static_cast<int32_t>(k_ext), "k");
    b_val = g.stage(p % width, g.k.x, p / width, n);
    w_val = w2.at({Halide::min(m, g.m_extent - 1), g.k.x});
  }
  g.acc = Func("conv_acc");
  g.acc(p, m, n) = 0.0f;
  // Rows past M (a partial register block) read the last row of W; they are never stored.
  g.acc(p, m, n) += w_val * b_val;
  ctx.reassociable.push_back(g.acc);
  g.gemm = Func("conv_gemm");
  g.gemm(p, m, n) = g.acc(p, m, n);
  // Until the schedule callback places them (and if it never runs), each is computed whole.
  for (Func f : {g.input, g.stage, g.acc, g.gemm})
    if (f.defined()) f.compute_root();

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
