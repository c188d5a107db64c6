// DeformConv (opset 19), 2-D: a convolution whose every kernel tap reads X at its usual position moved
// by a learned offset (bilinear interpolation, 0 outside the image), weighted by an optional mask:
//   Y[n, oc, i, j] = B[oc] + sum over ic in oc's group, kh, kw of
//       W[oc, ic', kh, kw] * mask[n, g, kh, kw, i, j] *
//       X[n, ic](st_h*i - pad_t + kh*d_h + off[n, g, kh, kw, 0, i, j], st_w*j - pad_l + kw*d_w + off[.., 1, i, j])
// with g = ic / (C / offset_group); offset's channels are (g, kh, kw, h or w), mask's (g, kh, kw).
#include "codegen/lower/lower_util.h"

namespace onnxc::codegen {

namespace {

using Halide::Expr;

std::vector<HTensor> deform_conv(LowerContext& ctx) {
  const HTensor &x = ctx.in[0], &w = ctx.in[1], &off = ctx.in[2];
  user_check(x.rank() == 4 && w.rank() == 4 && off.rank() == 4)
      << ctx.node.describe() << ": DeformConv is supported for 2-D images (X [N, C, H, W])";
  auto ints = [&](const char* name, int64_t def, size_t n) {
    std::vector<int64_t> v = ctx.node.attr_ints(name, std::vector<int64_t>(n, def));
    user_check(v.size() == n) << ctx.node.describe() << ": " << name << " needs " << n << " values";
    return v;
  };
  auto st = ints("strides", 1, 2), dil = ints("dilations", 1, 2), pads = ints("pads", 0, 4);
  int32_t group = static_cast<int32_t>(ctx.node.attr_int("group", 1));
  int32_t offset_group = static_cast<int32_t>(ctx.node.attr_int("offset_group", 1));
  user_check(group > 0 && offset_group > 0) << ctx.node.describe() << ": group and offset_group must be positive";
  Expr kh_n = w.shape[2], kw_n = w.shape[3], icpg = w.shape[1];
  Expr ocpg = w.shape[0] / group, icpog = x.shape[1] / offset_group;
  Expr ih = x.shape[2], iw = x.shape[3];
  Halide::RDom r(0, icpg, 0, kh_n, 0, kw_n);
  Expr c = r.x, kh = r.y, kw = r.z;
  return {define("DeformConv", out_shape(ctx), out_dtype(ctx), [&](const Index& o) {
    Expr n = o[0], oc = o[1], i = o[2], j = o[3];
    Expr ic = (oc / ocpg) * icpg + c;
    Expr g = ic / icpog;
    Expr tap = (g * kh_n + kh) * kw_n + kw;
    Expr dh = Halide::cast<float>(off.at({n, tap * 2, i, j})), dw = Halide::cast<float>(off.at({n, tap * 2 + 1, i, j}));
    Expr h = Halide::cast<float>(i * static_cast<int32_t>(st[0]) - static_cast<int32_t>(pads[0]) + kh * static_cast<int32_t>(dil[0])) + dh;
    Expr wc = Halide::cast<float>(j * static_cast<int32_t>(st[1]) - static_cast<int32_t>(pads[1]) + kw * static_cast<int32_t>(dil[1])) + dw;
    Expr h0 = Halide::floor(h), w0 = Halide::floor(wc), th = h - h0, tw = wc - w0;
    Expr hi = Halide::cast<int32_t>(h0), wi = Halide::cast<int32_t>(w0);
    auto px = [&](const Expr& y, const Expr& xx) {
      Expr inside = y >= 0 && y < ih && xx >= 0 && xx < iw;
      Expr v = Halide::cast<float>(x.at({n, Halide::clamp(ic, 0, x.shape[1] - 1), Halide::clamp(y, 0, ih - 1), Halide::clamp(xx, 0, iw - 1)}));
      return Halide::select(inside, v, 0.0f);
    };
    Expr sample = (1 - th) * ((1 - tw) * px(hi, wi) + tw * px(hi, wi + 1)) + th * ((1 - tw) * px(hi + 1, wi) + tw * px(hi + 1, wi + 1));
    Expr term = Halide::cast<float>(w.at({oc, c, kh, kw})) * sample;
    if (has_input(ctx, 4)) term = term * Halide::cast<float>(ctx.in[4].at({n, tap, i, j}));
    Expr sum = Halide::sum(term);
    if (has_input(ctx, 3)) sum = sum + Halide::cast<float>(ctx.in[3].at({oc}));
    return sum;
  })};
}

Registrar reg_DeformConv("", "DeformConv", KernelClass::Other, deform_conv);

}  // namespace

}  // namespace onnxc::codegen
