// Image-geometry ops whose size inputs may be given at run time: CenterCropPad (opset 18), Col2Im
// (opset 18) and AffineGrid (opset 20). Their output extents come from shape inference or the
// model's declared output type (a size input's values then only have to agree with them); values
// they need inside the kernel (Col2Im's block shape) are read from the tensor at run time.
#include "codegen/lower/lower_util.h"

namespace onnxc::codegen {

namespace {

using Halide::Expr;

// Along each axis in `axes` (default all), the centre of x cropped or zero-padded to the output's
// extent; other axes are kept. Crop start and pad before are floor((difference) / 2), as ONNX's
// reference computes them.
std::vector<HTensor> center_crop_pad(LowerContext& ctx) {
  const HTensor& x = ctx.in[0];
  int rank = x.rank();
  const auto& shape = out_shape(ctx);
  std::vector<bool> listed(rank, ctx.node.attr("axes") == nullptr);
  for (int64_t a : ctx.node.attr_ints("axes", {})) listed[normalize_axis(a, rank, ctx.node)] = true;
  return {define("CenterCropPad", shape, out_dtype(ctx), [&](const Index& o) {
    Index i(rank);
    Expr inside = Halide::Internal::const_true();
    for (int k = 0; k < rank; ++k) {
      if (!listed[k]) {
        i[k] = o[k];
        continue;
      }
      Expr dim = x.shape[k], want = shape[k];
      Expr offset = Halide::select(dim >= want, (dim - want) / 2, -((want - dim) / 2));
      Expr at = o[k] + offset;
      inside = inside && at >= 0 && at < dim;
      i[k] = Halide::clamp(at, 0, dim - 1);
    }
    return Halide::select(inside, x.at(i), Halide::Internal::make_zero(halide_type(x.dtype)));
  })};
}

// Col2Im: x [N, C * prod(block), L] (L sliding blocks over the image) summed back into the image
// [N, C, image...]. Each output pixel gathers, for every offset k inside a block, the one block
// position (if any) whose offset-k element lands on it: a sum over k, with no scatter.
std::vector<HTensor> col2im(LowerContext& ctx) {
  const HTensor& x = ctx.in[0];
  const auto& shape = out_shape(ctx);
  int d = static_cast<int>(shape.size()) - 2;
  user_check(x.rank() == 3 && d >= 1) << ctx.node.describe() << ": Col2Im needs input [N, C*prod(block), L]";
  auto ints = [&](const char* name, int64_t def, int n) {
    std::vector<int64_t> v = ctx.node.attr_ints(name, std::vector<int64_t>(n, def));
    user_check(static_cast<int>(v.size()) == n) << ctx.node.describe() << ": " << name << " needs " << n << " values";
    return v;
  };
  auto dil = ints("dilations", 1, d), pads = ints("pads", 0, 2 * d), strides = ints("strides", 1, d);
  std::vector<Expr> block(d), cols(d);
  for (int i = 0; i < d; ++i) {
    block[i] = Halide::max(element_i32(ctx, 2, i), 1);
    Expr span = static_cast<int32_t>(dil[i]) * (block[i] - 1) + 1;
    cols[i] = (shape[2 + i] + static_cast<int32_t>(pads[i] + pads[i + d]) - span) / static_cast<int32_t>(strides[i]) + 1;
  }
  Expr per_channel = x.shape[1] / shape[1];  // prod(block)
  Halide::RDom k(0, per_channel);
  Halide::Type at = accumulator_type(halide_type(x.dtype));
  return {define("Col2Im", shape, out_dtype(ctx), [&](const Index& o) {
    Expr rest = k, valid = Halide::Internal::const_true(), l = 0;
    std::vector<Expr> offset(d);
    for (int i = d - 1; i >= 0; --i) {  // k's digits in the block's shape, the last axis fastest
      offset[i] = rest % block[i];
      rest = rest / block[i];
    }
    for (int i = 0; i < d; ++i) {
      Expr t = o[2 + i] + static_cast<int32_t>(pads[i]) - offset[i] * static_cast<int32_t>(dil[i]);
      Expr s = static_cast<int32_t>(strides[i]);
      valid = valid && t >= 0 && t % s == 0 && t / s < cols[i];
      l = l * cols[i] + t / s;
    }
    Expr v = x.at({o[0], Halide::clamp(o[1] * per_channel + k, 0, x.shape[1] - 1), Halide::clamp(l, 0, x.shape[2] - 1)});
    return Halide::sum(Halide::select(valid, Halide::cast(at, v), Halide::Internal::make_zero(at)));
  })};
}

// AffineGrid: grid[n, (d,) h, w, :] = theta[n] . (x_w, y_h, (z_d,) 1), with normalized coordinates
// -1 + i * 2/(size-1) (align_corners) or -1 + (2i + 1)/size, computed in float64 as ONNX's reference.
std::vector<HTensor> affine_grid(LowerContext& ctx) {
  const HTensor& theta = ctx.in[0];
  const auto& shape = out_shape(ctx);
  int d = static_cast<int>(shape.size()) - 2;
  user_check(d == 2 || d == 3) << ctx.node.describe() << ": AffineGrid makes 2-D or 3-D grids";
  bool align = ctx.node.attr_int("align_corners", 0) != 0;
  auto coord = [&](Expr i, Expr n) {
    Expr fi = Halide::cast<double>(i), fn = Halide::cast<double>(n), one(1.0), two(2.0);
    if (align) return Halide::select(fn > one, -one + fi * (two / (fn - one)), -one);  // one point: -1
    Expr step = two / fn;
    return (-one + step / two) + fi * step;
  };
  return {define("AffineGrid", shape, out_dtype(ctx), [&](const Index& o) {
    // Spatial index j of the grid is o[1 + j]; the homogeneous point lists them innermost first.
    std::vector<Expr> point;
    for (int j = d - 1; j >= 0; --j) point.push_back(coord(o[1 + j], shape[1 + j]));
    point.push_back(Expr(1.0));
    Expr acc = Expr(0.0);
    for (int c = 0; c <= d; ++c) acc = acc + Halide::cast<double>(theta.at({o[0], o[d + 1], Expr(c)})) * point[c];
    return acc;
  })};
}

Registrar reg_CenterCropPad("", "CenterCropPad", KernelClass::Elementwise, center_crop_pad);
Registrar reg_Col2Im("", "Col2Im", KernelClass::Elementwise, col2im);
Registrar reg_AffineGrid("", "AffineGrid", KernelClass::Elementwise, affine_grid);

}  // namespace

}  // namespace onnxc::codegen
