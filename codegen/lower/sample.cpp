// Sampling at computed positions: GridSample (4-D: bilinear, nearest, bicubic; 5-D: linear and
// nearest; zeros, border and reflection padding; align_corners) and RoiAlign (avg or max over a fixed sampling grid per bin).
// Coordinates follow PyTorch's grid_sample and ONNX Runtime's RoiAlign, which produced the ONNX
// reference data.
#include "codegen/lower/lower_util.h"

namespace onnxc::codegen {
namespace {

using Halide::Expr;

// Reflects x into [lo, hi] (given as twice_lo, twice_hi), then clips it to [0, size - 1].
Expr reflect(Expr x, float twice_lo, Expr twice_hi) {
  Expr lo = Expr(twice_lo / 2), span = (twice_hi - twice_lo) / 2;
  Expr in = Halide::abs(x - lo);
  Expr flips = Halide::floor(in / span);
  Expr extra = in - flips * span;
  Expr even = Halide::cast<int32_t>(flips) % 2 == 0;
  return Halide::select(span <= 0, 0.0f, Halide::select(even, extra + lo, span - extra + lo));
}

struct GridSampler {
  const HTensor& x;
  bool align = false;
  std::string padding;

  Expr size(int axis) const { return Halide::cast<float>(x.shape[axis]); }
  // Grid value in [-1, 1] to a pixel coordinate along axis (2 = H, 3 = W).
  Expr unnormalize(Expr g, int axis) const {
    return align ? (g + 1) / 2 * (size(axis) - 1) : ((g + 1) * size(axis) - 1) / 2;
  }
  // Padding applied to a coordinate: border clips, reflection reflects then clips; zeros keeps it.
  Expr pad(Expr c, int axis) const {
    Expr hi = size(axis) - 1;
    if (padding == "border") return Halide::clamp(c, 0.0f, hi);
    if (padding == "reflection") {
      c = align ? reflect(c, 0, 2 * (size(axis) - 1)) : reflect(c, -1, 2 * size(axis) - 1);
      return Halide::clamp(c, 0.0f, hi);
    }
    return c;
  }
  // X[n, c, y, x] at integer coordinates, 0 outside the image.
  Expr at(const Expr& n, const Expr& ch, const Expr& yi, const Expr& xi) const {
    Expr inside = yi >= 0 && yi < x.shape[2] && xi >= 0 && xi < x.shape[3];
    Expr v = Halide::cast<float>(x.at({n, ch, Halide::clamp(yi, 0, x.shape[2] - 1), Halide::clamp(xi, 0, x.shape[3] - 1)}));
    return Halide::select(inside, v, 0.0f);
  }
  // X[n, c, spatial...] at integer coordinates (one per spatial axis), 0 outside the volume.
  Expr at(const Expr& n, const Expr& ch, const std::vector<Expr>& pos) const {
    Expr inside = Halide::Internal::const_true();
    Index i = {n, ch};
    for (size_t a = 0; a < pos.size(); ++a) {
      Expr extent = x.shape[2 + a];
      inside = inside && pos[a] >= 0 && pos[a] < extent;
      i.push_back(Halide::clamp(pos[a], 0, extent - 1));
    }
    return Halide::select(inside, Halide::cast<float>(x.at(i)), 0.0f);
  }
};

// GridSample over a volume (X [N, C, D, H, W], grid [N, D', H', W', 3] holding (x, y, z)): nearest, or
// linear over the 8 corners around the position.
Expr sample_volume(const GridSampler& s, const HTensor& grid, const std::string& mode, const Index& o) {
  const int d = 3;
  std::vector<Expr> g(d);
  for (int a = 0; a < d; ++a) {
    Index gi = {o[0]};
    for (int k = 0; k < d; ++k) gi.push_back(o[2 + k]);
    gi.push_back(Expr(d - 1 - a));  // the grid lists the innermost axis first
    g[a] = s.pad(s.unnormalize(Halide::cast<float>(grid.at(gi)), 2 + a), 2 + a);
  }
  std::vector<Expr> pos(d);
  if (mode == "nearest") {
    for (int a = 0; a < d; ++a) pos[a] = Halide::cast<int32_t>(Halide::round(g[a]));
    return s.at(o[0], o[1], pos);
  }
  std::vector<Expr> lo(d), t(d);
  for (int a = 0; a < d; ++a) {
    Expr f = Halide::floor(g[a]);
    lo[a] = Halide::cast<int32_t>(f);
    t[a] = g[a] - f;
  }
  Expr sum = 0.0f;
  for (int corner = 0; corner < (1 << d); ++corner) {
    Expr w = 1.0f;
    for (int a = 0; a < d; ++a) {
      bool up = corner & (1 << (d - 1 - a));
      w = w * (up ? t[a] : 1 - t[a]);
      pos[a] = up ? lo[a] + 1 : lo[a];
    }
    sum = sum + w * s.at(o[0], o[1], pos);
  }
  return sum;
}

// Cubic convolution weights (A = -0.75) of the four taps around t in [0, 1).
std::vector<Expr> cubic_weights(Expr t) {
  const float a = -0.75f;
  auto near = [&](Expr d) { return ((a + 2) * d - (a + 3)) * d * d + 1; };
  auto far = [&](Expr d) { return ((a * d - 5 * a) * d + 8 * a) * d - 4 * a; };
  return {far(t + 1), near(t), near(1 - t), far(2 - t)};
}

std::vector<HTensor> grid_sample(LowerContext& ctx) {
  const HTensor &x = ctx.in[0], &grid = ctx.in[1];
  const ir::Node& node = ctx.node;
  user_check((x.rank() == 4 || x.rank() == 5) && grid.rank() == x.rank())
      << node.describe() << ": GridSample is supported for 4-D and 5-D inputs";
  GridSampler s{x, node.attr_int("align_corners", 0) != 0, node.attr_string("padding_mode", "zeros")};
  // Opset 20 renamed the modes (bilinear -> linear, bicubic -> cubic); canonicalize writes the new
  // names, older models the old ones, and the default changed with them.
  std::string mode = node.attr_string("mode", "bilinear");
  if (mode == "linear") mode = "bilinear";
  if (mode == "cubic") mode = "bicubic";
  user_check(mode == "bilinear" || mode == "nearest" || mode == "bicubic")
      << node.describe() << ": unknown mode '" << mode << "'";
  user_check(s.padding == "zeros" || s.padding == "border" || s.padding == "reflection")
      << node.describe() << ": unknown padding_mode '" << s.padding << "'";
  user_check(x.rank() == 4 || mode != "bicubic") << node.describe() << ": cubic sampling is defined for 4-D inputs only";
  return {define("grid_sample", out_shape(ctx), out_dtype(ctx), [&](const Index& o) {
    if (x.rank() == 5) return sample_volume(s, grid, mode, o);
    Expr n = o[0], ch = o[1];
    Expr gx = s.unnormalize(Halide::cast<float>(grid.at({n, o[2], o[3], 0})), 3);
    Expr gy = s.unnormalize(Halide::cast<float>(grid.at({n, o[2], o[3], 1})), 2);
    if (mode == "bicubic") {
      // Taps around the unpadded position; each tap's coordinate is padded on its own.
      Expr x0 = Halide::floor(gx), y0 = Halide::floor(gy);
      auto wx = cubic_weights(gx - x0), wy = cubic_weights(gy - y0);
      Expr sum = 0.0f;
      for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 4; ++j) {
          Expr yi = Halide::cast<int32_t>(s.pad(y0 - 1 + i, 2)), xi = Halide::cast<int32_t>(s.pad(x0 - 1 + j, 3));
          sum = sum + wy[i] * wx[j] * s.at(n, ch, yi, xi);
        }
      return sum;
    }
    gx = s.pad(gx, 3);
    gy = s.pad(gy, 2);
    if (mode == "nearest")
      return s.at(n, ch, Halide::cast<int32_t>(Halide::round(gy)), Halide::cast<int32_t>(Halide::round(gx)));
    Expr x0 = Halide::floor(gx), y0 = Halide::floor(gy), tx = gx - x0, ty = gy - y0;
    Expr xi = Halide::cast<int32_t>(x0), yi = Halide::cast<int32_t>(y0);
    return (1 - ty) * ((1 - tx) * s.at(n, ch, yi, xi) + tx * s.at(n, ch, yi, xi + 1)) +
           ty * ((1 - tx) * s.at(n, ch, yi + 1, xi) + tx * s.at(n, ch, yi + 1, xi + 1));
  })};
}

// Y[r, c, ph, pw]: the average (or max) over a sampling_ratio² grid in bin (ph, pw) of roi r of
// bilinear samples of X[batch_indices[r], c].
std::vector<HTensor> roi_align(LowerContext& ctx) {
  const HTensor &x = ctx.in[0], &rois = ctx.in[1], &bidx = ctx.in[2];
  const ir::Node& node = ctx.node;
  user_check(x.rank() == 4) << node.describe() << ": RoiAlign expects X [N, C, H, W]";
  int64_t ratio = node.attr_int("sampling_ratio", 0);
  user_check(ratio > 0) << node.describe()
                        << ": sampling_ratio 0 (a grid sized by each roi at run time) is not supported";
  float scale = node.attr_float("spatial_scale", 1.0f);
  bool half_pixel = node.attr_string("coordinate_transformation_mode", "half_pixel") == "half_pixel";
  bool is_max = node.attr_string("mode", "avg") == "max";
  const auto& shape = out_shape(ctx);
  Halide::RDom r(0, static_cast<int32_t>(ratio), 0, static_cast<int32_t>(ratio), "s");
  return {define("roi_align", shape, out_dtype(ctx), [&](const Index& o) {
    Expr roi = o[0], ch = o[1];
    auto coord = [&](int k) { return Halide::cast<float>(rois.at({roi, Expr(k)})) * scale - (half_pixel ? 0.5f : 0.0f); };
    Expr x1 = coord(0), y1 = coord(1), x2 = coord(2), y2 = coord(3);
    Expr w = x2 - x1, h = y2 - y1;
    if (!half_pixel) w = Halide::max(w, 1.0f), h = Halide::max(h, 1.0f);
    Expr bin_h = h / Halide::cast<float>(shape[2]), bin_w = w / Halide::cast<float>(shape[3]);
    Expr yy = y1 + Halide::cast<float>(o[2]) * bin_h + (Halide::cast<float>(r.y) + 0.5f) * bin_h / float(ratio);
    Expr xx = x1 + Halide::cast<float>(o[3]) * bin_w + (Halide::cast<float>(r.x) + 0.5f) * bin_w / float(ratio);
    Expr n = Halide::clamp(Halide::cast<int32_t>(bidx.at({roi})), 0, x.shape[0] - 1);
    Expr H = Halide::cast<float>(x.shape[2]), W = Halide::cast<float>(x.shape[3]);
    Expr outside = yy < -1.0f || yy > H || xx < -1.0f || xx > W;
    yy = Halide::max(yy, 0.0f);
    xx = Halide::max(xx, 0.0f);
    Expr ylo = Halide::cast<int32_t>(Halide::floor(yy)), xlo = Halide::cast<int32_t>(Halide::floor(xx));
    Expr ytop = ylo >= x.shape[2] - 1, xtop = xlo >= x.shape[3] - 1;
    // Clamped as well as selected, so bounds inference sees the reads stay inside X.
    ylo = Halide::clamp(Halide::select(ytop, x.shape[2] - 1, ylo), 0, x.shape[2] - 1);
    xlo = Halide::clamp(Halide::select(xtop, x.shape[3] - 1, xlo), 0, x.shape[3] - 1);
    Expr yhi = Halide::min(Halide::select(ytop, ylo, ylo + 1), x.shape[2] - 1);
    Expr xhi = Halide::min(Halide::select(xtop, xlo, xlo + 1), x.shape[3] - 1);
    yy = Halide::select(ytop, Halide::cast<float>(ylo), yy);
    xx = Halide::select(xtop, Halide::cast<float>(xlo), xx);
    Expr ly = yy - Halide::cast<float>(ylo), lx = xx - Halide::cast<float>(xlo), hy = 1 - ly, hx = 1 - lx;
    auto v = [&](Expr yi, Expr xi) { return Halide::cast<float>(x.at({n, ch, yi, xi})); };
    Expr t1 = hy * hx * v(ylo, xlo), t2 = hy * lx * v(ylo, xhi), t3 = ly * hx * v(yhi, xlo), t4 = ly * lx * v(yhi, xhi);
    if (is_max) {
      Expr m = Halide::select(outside, 0.0f, Halide::max(Halide::max(t1, t2), Halide::max(t3, t4)));
      return Halide::maximum(m);
    }
    return Halide::sum(Halide::select(outside, 0.0f, t1 + t2 + t3 + t4)) / float(ratio * ratio);
  })};
}

Registrar reg_GridSample("", "GridSample", KernelClass::Other, grid_sample);
Registrar reg_RoiAlign("", "RoiAlign", KernelClass::Other, roi_align);

}  // namespace
}  // namespace onnxc::codegen
