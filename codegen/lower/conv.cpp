// Convolution: Conv and ConvTranspose (any spatial rank, groups, strides, dilations, pads or
// auto_pad, ConvTranspose's output_padding/output_shape). On a CPU, a float32 Conv with one group
// and constant weights is an implicit GEMM through the register-blocked kernel, and a depthwise one
// sums shifted input planes per channel (one with a single output pixel is a matrix-vector product);
// other forms are a direct reduction, vectorized along the
// innermost output dim and parallel over the others.
#include <functional>
#include <optional>

#include "codegen/lower/conv_input.h"
#include "codegen/lower/conv_winograd.h"
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

// acc over the output dims, then bias: the schedule both direct forms share. `input`, when defined,
// is a copy of the input computed before the reduction (see staged_input).
std::vector<HTensor> finish(LowerContext& ctx, Func acc, const std::vector<Halide::Var>& vars, const Index& o,
                            Func input = Func()) {
  Halide::Type at = acc.output_types()[0];
  Func y("conv");
  Expr v = acc(std::vector<Expr>(vars.begin(), vars.end()));
  if (has_input(ctx, 2)) v = v + Halide::cast(at, ctx.in[2].at({o[1]}));
  y(vars) = Halide::cast(halide_type(out_dtype(ctx)), v);
  ctx.schedule = [acc, input](Func output, const Halide::Target& t) mutable {
    if (input.defined()) {
      input.compute_root();
      schedule_output(input, KernelClass::Elementwise, t);
    }
    schedule_output(output, KernelClass::Elementwise, t);
    Func a = acc;
    a.compute_root();
    schedule_reduction(a, true, worth_parallel(output), t);
  };
  acc.compute_root();  // until the schedule places it (and if it never runs)
  HTensor h;
  h.func = y;
  h.shape = out_shape(ctx);
  h.dtype = out_dtype(ctx);
  return {h};
}


// One RDom dim per tap dim (innermost: the last spatial), then `outer` extents; and the taps as
// per-spatial-dim Exprs.
Halide::RDom tap_domain(const Window& win, const std::vector<int64_t>& outer, std::vector<Expr>& taps) {
  const int sp = win.spatial();
  std::vector<Halide::Range> ranges;
  for (int s = sp - 1; s >= 0; --s) ranges.emplace_back(0, static_cast<int32_t>(win.kernel[s]));
  for (int64_t e : outer) ranges.emplace_back(0, static_cast<int32_t>(e));
  Halide::RDom r(Halide::Region(ranges.begin(), ranges.end()), "k");
  taps.clear();
  for (int s = 0; s < sp; ++s) taps.push_back(r[sp - 1 - s]);
  return r;
}

// Y = output(pixel(o)) + B[m], the kernel's result over ONNX dims.
std::vector<HTensor> shifted_output(LowerContext& ctx, const ShiftedInput& in, Func result) {
  const auto& shape = out_shape(ctx);
  auto vars = make_vars(static_cast<int>(shape.size()));
  Index o = onnx_index(vars);
  Expr v = result(in.pixel(o), o[1], o[0]);
  if (has_input(ctx, 2)) v = v + Halide::cast<float>(ctx.in[2].at({o[1]}));
  Func y("conv");
  y(vars) = v;
  return {HTensor{y, shape, out_dtype(ctx)}};
}

// W packed in panels of `width` output channels, k-major (pack_panels), for the forms vectorized
// over output channels, with the reduction over (taps, input channel) that reads it: the weight of
// channel mo·width + i at step k is packed(mo, flat_k, i).
struct PanelWeights {
  HTensor packed;
  Halide::RDom k;  // tap dims innermost (tap_domain), the input channel last
  std::vector<Expr> taps;
  Expr flat_k;  // W's [C, k1..kr] row-major
};

PanelWeights panel_weights(LowerContext& ctx, const Window& win, int width) {
  const ir::Tensor& wt = *ctx.const_in.data(1);
  const int64_t m_ext = wt.dims()[0];
  PanelWeights w;
  w.packed = ctx.add_constant("conv_weights", pack_panels(wt.reshaped({m_ext, wt.numel() / m_ext}), true, width));
  w.k = tap_domain(win, {wt.dims()[1]}, w.taps);
  w.flat_k = w.k[win.spatial()];
  for (int s = 0; s < win.spatial(); ++s) w.flat_k = w.flat_k * static_cast<int32_t>(win.kernel[s]) + w.taps[s];
  return w;
}

// A convolution with one output pixel (squeeze-and-excitation's FC layers: 1×1 kernels over a
// pooled 1×1 image): a matrix-vector product per image, Y[n, m] = B[m] + sum_k W[m, k] · col(k, 0).
// Vectorized over output channels from W packed in panels of `width` channels (k-major, as the
// GEMM packs its B): the implicit GEMM vectorizes over pixels, and with one pixel it filled one
// lane of each 48-pixel panel.
std::vector<HTensor> conv_gemv(LowerContext& ctx, const Window& win, const ShiftedInput& in) {
  using Halide::Var;
  const int64_t m_ext = ctx.const_in.data(1)->dims()[0];
  ConvGemvFuncs g;
  g.width = choose_panel(m_ext, describe(ctx.target)).width;
  g.m_extent = static_cast<int>(m_ext);
  g.input = in.planes;
  g.input_rows = in.interiors;
  PanelWeights w = panel_weights(ctx, win, g.width);
  g.k = w.k;
  Var i("i"), n("n"), mo("mo");
  g.acc = Func("conv_gemv_acc");
  g.acc(i, n, mo) = 0.0f;
  g.acc(i, n, mo) += w.packed.at({mo, w.flat_k, i}) * in.tap(w.taps, 0, g.k[win.spatial()], n);
  ctx.reassociable.push_back(g.acc);
  g.gemv = Func("conv_gemv");
  g.gemv(i, n, mo) = g.acc(i, n, mo);
  for (Func f : {g.input, g.acc, g.gemv}) f.compute_root();
  ctx.schedule = [g](Func output, const Halide::Target& t) { schedule_conv_gemv(g, output, t); };
  const auto& shape = out_shape(ctx);
  auto vars = make_vars(static_cast<int>(shape.size()));
  Index o = onnx_index(vars);
  Expr v = g.gemv(o[1] % g.width, o[0], o[1] / g.width);
  if (has_input(ctx, 2)) v = v + Halide::cast<float>(ctx.in[2].at({o[1]}));
  Func y("conv");
  y(vars) = v;
  return {HTensor{y, shape, out_dtype(ctx)}};
}

// The channel-vectorized block when the target description says it beats pixel panels for this
// convolution (its output's extents and the planes' grid known when compiling).
std::optional<ChannelBlock> channel_block_pays(const LowerContext& ctx, const Window& win, const ShiftedInput& in) {
  const int64_t* grid = Halide::Internal::as_const_int(in.pixels);
  if (!grid) return std::nullopt;
  const auto& shape = out_shape(ctx);
  int64_t pixels = 1;
  for (int s = 0; s < win.spatial(); ++s) {
    const int64_t* e = Halide::Internal::as_const_int(shape[s + 2]);
    if (!e) return std::nullopt;
    pixels *= *e;
  }
  // Strided taps cost the pixel form most where the innermost tap loop is short enough for LLVM to
  // unroll (see choose_channel_block): a 3×3 stride-2 conv, not the 7×7 stride-2 stem.
  bool strided_taps = false;
  for (int s = 0; s < win.spatial(); ++s) strided_taps |= win.strides[s] > 1 && win.kernel[s] > 1;
  strided_taps &= win.kernel[win.spatial() - 1] <= 3;
  const ir::Tensor& wt = *ctx.const_in.data(1);
  return choose_channel_block(wt.dims()[0], wt.numel() / wt.dims()[0], pixels, *grid, strided_taps, describe(ctx.target));
}

// A convolution over a small image with its pixels as the register block's rows and output channels
// as its vector lanes: Y[n, m, q] = B[m] + sum_k Wp[m / width, k, m % width] · col(k, q) over output
// pixels q (row-major over the output's spatial dims, all known when compiling), W packed in panels of
// `width` channels (k-major, as conv_gemv). col(k, q) is one float of the shifted planes, broadcast
// to every lane, so a block of pixels may start anywhere: q walks the output's own pixels, not the
// planes' grid, and no lane is spent on the grid's padded columns or on a pixel panel's unused tail
// (a 7×7 image filled 49 of 64 lanes that way). The price is a transpose when storing: the output
// reads gemm at a stride of `width` floats.
std::vector<HTensor> conv_channels(LowerContext& ctx, const Window& win, const ShiftedInput& in, const ChannelBlock& block) {
  using Halide::Var;
  const int sp = win.spatial();
  const auto& shape = out_shape(ctx);
  ConvChannelFuncs g;
  g.block = block;
  g.m_extent = static_cast<int>(ctx.const_in.data(1)->dims()[0]);
  g.input = in.planes;
  g.input_rows = in.interiors;
  g.input_copies = in.copies;
  PanelWeights w = panel_weights(ctx, win, block.width);
  g.k = w.k;
  Var i("i"), q("q"), mo("mo"), n("n");
  // The grid pixel of output pixel q: its coordinates over the output's (static) extents.
  std::vector<int32_t> ext(sp);
  g.pixels = 1;
  for (int s = 0; s < sp; ++s) ext[s] = static_cast<int32_t>(*Halide::Internal::as_const_int(shape[s + 2])), g.pixels *= ext[s];
  Expr rest = q, grid_pixel = 0, grid_stride = 1;
  for (int s = sp - 1; s >= 0; --s) {
    Expr coord = s > 0 ? rest % ext[s] : rest;
    rest = rest / ext[s];
    grid_pixel = grid_pixel + coord * grid_stride;
    grid_stride = grid_stride * in.grid[s];
  }
  g.acc = Func("conv_ch_acc");
  g.acc(i, q, mo, n) = 0.0f;
  g.acc(i, q, mo, n) += w.packed.at({mo, w.flat_k, i}) * in.tap(w.taps, grid_pixel, g.k[sp], n);
  ctx.reassociable.push_back(g.acc);
  g.gemm = Func("conv_ch_gemm");
  g.gemm(i, q, mo, n) = g.acc(i, q, mo, n);
  for (Func f : {g.input, g.acc, g.gemm}) f.compute_root();
  ctx.schedule = [g](Func output, const Halide::Target& t) { schedule_conv_channels(g, output, t); };
  auto vars = make_vars(static_cast<int>(shape.size()));
  Index o = onnx_index(vars);
  Expr pixel = o[2];
  for (int s = 1; s < sp; ++s) pixel = pixel * ext[s] + o[s + 2];
  const int32_t width = block.width;
  Expr v = g.gemm(o[1] % width, pixel, o[1] / width, o[0]);
  if (has_input(ctx, 2)) v = v + Halide::cast<float>(ctx.in[2].at({o[1]}));
  Func y("conv");
  y(vars) = v;
  return {HTensor{y, shape, out_dtype(ctx)}};
}

// A 1×1 stride-1 unpadded convolution's B operand [K = C, N = pixels] is its NCHW input itself, one
// dense row per channel: col(c, p) = X[n, c, p] over the flattened image. When X is a kernel input
// (a dense buffer, not a fused producer), the GEMM reads it in place at X's flat offset instead of
// copying it into planes first (a pass over the input before each 1×1 of ResNet-50: a fifth of a
// 256→64 conv over 56×56). The reads bypass Halide's bounds inference, so they must stay inside the
// buffer: the schedule shifts the last pixel panel inwards (schedule_conv_gemm), which needs a
// static image of at least one panel; otherwise nullopt and the planes as for any conv. Returns
// X's element at channel c, flat pixel p, image n.
std::optional<Expr> in_place_tap(const HTensor& x, const Window& win, const Expr& pixels, int width, const Expr& c,
                                 const Expr& p, const Expr& n) {
  const int sp = win.spatial();
  if (sp < 2) return std::nullopt;  // 1-D convs are not tiled (schedule_conv_gemm); they keep planes
  for (int s = 0; s < sp; ++s) {
    if (win.kernel[s] != 1 || win.strides[s] != 1) return std::nullopt;
    if (!Halide::Internal::is_const_zero(win.pad_begin[s]) || !Halide::Internal::is_const_zero(win.pad_end[s])) return std::nullopt;
  }
  const int64_t* px = Halide::Internal::as_const_int(pixels);
  if (!px || *px < width || !x.func.defined() || x.func.outputs() != 1 || !x.func.function().has_pure_definition())
    return std::nullopt;
  // X's Func must be its buffer itself: one Image call with the Func's own arguments in order.
  const auto& values = x.func.function().definition().values();
  const auto* call = values.size() == 1 ? values[0].as<Halide::Internal::Call>() : nullptr;
  if (!call || call->call_type != Halide::Internal::Call::Image || !call->param.defined()) return std::nullopt;
  const std::vector<std::string> args = x.func.function().args();
  if (call->args.size() != args.size() || static_cast<int>(args.size()) != sp + 2) return std::nullopt;
  for (size_t i = 0; i < args.size(); ++i) {
    const auto* v = call->args[i].as<Halide::Internal::Variable>();
    if (!v || v->name != args[i]) return std::nullopt;
  }
  // Dense strides (constrain_dense; a buffer with row capacity, constrain_rows, is not).
  const Halide::Internal::Parameter& buf = call->param;
  if (!Halide::Internal::is_const_one(buf.stride_constraint(0))) return std::nullopt;
  for (int d = 1; d < sp + 2; ++d)
    if (!buf.stride_constraint(d).defined()) return std::nullopt;
  Expr flat = p + c * buf.stride_constraint(sp) + n * buf.stride_constraint(sp + 1);
  return Halide::Internal::Load::make(Halide::Float(32), buf.name(), flat, Halide::Buffer<>(), buf,
                                     Halide::Internal::const_true(), Halide::Internal::ModulusRemainder());
}

// The implicit GEMM: Y[n, m, p] = B[m] + sum_k W[m, k] · col(k, p) over grid pixels p and
// K = C·k1..kr (k = (c, r)), where col(k, p) = planes(p + shift(r), phase(r), c, n) (ShiftedInput):
// W is the GEMM's A, one row per output channel, read in place; the shifted planes are its B (a
// pointwise conv's input itself where in_place_tap allows: the same products in the same order).
std::vector<HTensor> conv_gemm(LowerContext& ctx, const Window& win) {
  using Halide::Var;
  const HTensor& x = ctx.in[0];
  const ir::Tensor& wt = *ctx.const_in.data(1);
  const int sp = win.spatial();
  const int64_t m_ext = wt.dims()[0], c_ext = wt.dims()[1];
  if (const int tile = winograd_tile(ctx, win, out_shape(ctx), c_ext, m_ext)) return conv_winograd(ctx, win, tile);
  ShiftedInput in(x, win, out_shape(ctx));
  const int64_t* p_static = Halide::Internal::as_const_int(in.pixels);
  if (p_static && *p_static == 1) return conv_gemv(ctx, win, in);
  if (auto block = channel_block_pays(ctx, win, in)) return conv_channels(ctx, win, in, *block);
  ConvGemmFuncs g;
  g.panel = choose_conv_panel(p_static ? *p_static : 64, wt.numel() / m_ext, describe(ctx.target));
  g.p_extent = in.pixels;
  if (sp >= 2) {
    Expr row = 1;
    for (int s = 1; s < sp; ++s) row = row * in.grid[s];
    g.row_pixels = Halide::Internal::simplify(row);
  }
  g.m_extent = static_cast<int>(m_ext);
  g.input = in.planes;
  g.input_rows = in.interiors;
  g.input_copies = in.copies;
  HTensor w2 = ctx.add_constant("conv_weights", wt.reshaped({m_ext, wt.numel() / m_ext}));

  std::vector<Expr> taps;
  g.k = tap_domain(win, {c_ext}, taps);
  Expr flat_k = g.k[sp];  // W's [C, k1..kr] row-major
  for (int s = 0; s < sp; ++s) flat_k = flat_k * static_cast<int32_t>(win.kernel[s]) + taps[s];
  Var p("p"), m("m"), n("n");
  g.acc = Func("conv_acc");
  g.acc(p, m, n) = 0.0f;
  // Rows past M (a partial register block) read the last row of W; they are never stored.
  Expr b = in.tap(taps, p, g.k[sp], n);
  if (auto direct = in_place_tap(x, win, in.pixels, g.panel.width, g.k[sp], p, n)) {
    b = *direct;
    g.input_in_place = true;
    g.input = Func();
    g.input_rows.clear();
    g.input_copies = 0;
  }
  g.acc(p, m, n) += w2.at({Halide::min(m, g.m_extent - 1), flat_k}) * b;
  ctx.reassociable.push_back(g.acc);
  g.gemm = Func("conv_gemm");
  g.gemm(p, m, n) = g.acc(p, m, n);
  // Until the schedule callback places them (and if it never runs), each is computed whole.
  for (Func f : {g.input, g.acc, g.gemm})
    if (f.defined()) f.compute_root();
  ctx.schedule = [g](Func output, const Halide::Target& t) { schedule_conv_gemm(g, output, t); };
  return shifted_output(ctx, in, g.gemm);
}

// A depthwise convolution (one input channel per output channel): per channel, a sum of shifted
// planes weighted by the channel's taps, Y[n, c, p] = B[c] + sum_r W[c, r] · planes(p + shift(r), ..).
std::vector<HTensor> conv_depthwise(LowerContext& ctx, const Window& win) {
  using Halide::Var;
  const HTensor& x = ctx.in[0];
  const HTensor& w = ctx.in[1];
  ShiftedInput in(x, win, out_shape(ctx));
  std::vector<Expr> taps;
  Halide::RDom r = tap_domain(win, {}, taps);
  Var p("p"), c("c"), n("n");
  Index wi = {c, 0};
  wi.insert(wi.end(), taps.begin(), taps.end());
  Func acc("dw_acc");
  acc(p, c, n) = 0.0f;
  acc(p, c, n) += w.at(wi) * in.tap(taps, p, c, n);
  ctx.reassociable.push_back(acc);
  in.planes.compute_root();
  acc.compute_root();
  Func planes = in.planes;
  std::vector<Halide::RDom> rows = in.interiors;
  Expr pixels = in.pixels;
  // The phases of a convolution strided along the row read every stride-th input element.
  const size_t strided = in.strides.back() > 1 ? in.copies : 0;
  Expr width = out_shape(ctx).back();
  ctx.schedule = [planes, rows, acc, r, pixels, width, strided](Func output, const Halide::Target& t) {
    schedule_depthwise(planes, rows, acc, r, pixels, width, output, t, strided);
  };
  return shifted_output(ctx, in, acc);
}

// The direct reduction reads each input element once per output channel and tap. On a GPU every
// Conv takes it, while the partitioner fuses elementwise producers into a Conv's input for the CPU
// forms, which copy it once (partition_group.cpp): there the input is computed into a buffer first,
// so a fused producer (a SiLU) runs once per element, not once per product.
HTensor staged_input(const LowerContext& ctx, const HTensor& x) {
  if (!is_gpu(ctx.target)) return x;
  auto vars = make_vars(x.rank());
  Func copy("conv_input");
  copy(vars) = x.at(onnx_index(vars));
  HTensor h = x;
  h.func = copy;
  return h;
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
  const bool cpu_f32 = f32 && !is_gpu(ctx.target);
  if (group == 1 && cpu_f32 && ctx.const_in.data(1)) return conv_gemm(ctx, win);
  auto channels = Halide::Internal::as_const_int(x.shape[1]);
  if (cpu_f32 && channels && group == *channels && Halide::Internal::is_const_one(w.shape[1]) &&
      Halide::Internal::is_const(shape[1]) && Halide::Internal::can_prove(shape[1] == x.shape[1]))
    return conv_depthwise(ctx, win);
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
  const HTensor xs = staged_input(ctx, x);
  acc(args) += Halide::select(valid, Halide::cast(at, xs.at(xi)) * Halide::cast(at, w.at(wi)), Halide::Internal::make_zero(at));
  ctx.reassociable.push_back(acc);
  return finish(ctx, acc, vars, o, is_gpu(ctx.target) ? xs.func : Func());
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
