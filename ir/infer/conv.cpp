// Sliding-window ops: Conv, ConvTranspose, ConvInteger, QLinearConv, the pools (with pads, strides,
// dilations, auto_pad and ceil_mode), global pools, MaxUnpool, MaxRoiPool, Col2Im. Output sizes of
// symbolic inputs stay symbolic: floordiv(H+2-3,2)+1 simplifies as far as the arithmetic allows.
#include "ir/infer/context.h"

namespace onnxc::ir {
namespace {

struct Window {
  std::vector<int64_t> kernel, strides, dilations, pads;  // pads: begins then ends
  std::string auto_pad;
  bool ceil_mode = false;
};

Window window_attrs(const InferContext& ctx, size_t n, std::vector<int64_t> kernel) {
  const Node& node = ctx.node();
  Window w;
  w.kernel = node.attr_ints("kernel_shape", std::move(kernel));
  w.strides = node.attr_ints("strides", std::vector<int64_t>(n, 1));
  w.dilations = node.attr_ints("dilations", std::vector<int64_t>(n, 1));
  w.pads = node.attr_ints("pads", std::vector<int64_t>(2 * n, 0));
  w.auto_pad = node.attr_string("auto_pad", "NOTSET");
  w.ceil_mode = node.attr_int("ceil_mode", 0) != 0;
  infer_check(ctx, w.kernel.size() == n && w.strides.size() == n && w.dilations.size() == n && w.pads.size() == 2 * n)
      << "kernel_shape, strides, dilations or pads do not match " << n << " spatial dims";
  return w;
}

// Output extent of one spatial dim.
Dim window_out(const Dim& in, const Window& w, size_t i) {
  int64_t k = (w.kernel[i] - 1) * w.dilations[i] + 1, s = w.strides[i];
  if (w.auto_pad == "SAME_UPPER" || w.auto_pad == "SAME_LOWER") return ceildiv(in, Dim(s));
  int64_t pb = w.auto_pad == "VALID" ? 0 : w.pads[i], pe = w.auto_pad == "VALID" ? 0 : w.pads[i + w.kernel.size()];
  Dim span = in + Dim(pb + pe - k);
  if (!w.ceil_mode) return floordiv(span, Dim(s)) + 1;
  Dim out = ceildiv(span, Dim(s)) + 1;
  // A last window that starts inside the end padding is dropped (as PyTorch and ONNX Runtime do).
  if (out.is_const() && in.is_const() && (out.value() - 1) * s >= in.value() + pb) return Dim(out.value() - 1);
  return out;
}

std::optional<Shape> windowed(const InferContext& ctx, const Shape& x, const Dim& channels, const Window& w) {
  infer_check(ctx, x.size() >= 3) << "expects [N,C,spatial...], got " << shape_str(x);
  Shape out{x[0], channels};
  for (size_t i = 0; i + 2 < x.size(); ++i) out.push_back(window_out(x[i + 2], w, i));
  return out;
}

std::vector<int64_t> kernel_from_weights(const std::optional<Shape>& ws) {
  std::vector<int64_t> k;
  if (!ws) return k;
  for (size_t i = 2; i < ws->size(); ++i) k.push_back((*ws)[i].is_const() ? (*ws)[i].value() : -1);
  return k;
}

std::optional<Shape> conv_shape(InferContext& ctx, size_t x_idx, size_t w_idx) {
  const auto &x = ctx.in_shape(x_idx), &ws = ctx.in_shape(w_idx);
  if (!x) return std::nullopt;
  infer_check(ctx, x->size() >= 3) << "expects [N,C,spatial...], got " << shape_str(*x);
  size_t n = x->size() - 2;
  Window w = window_attrs(ctx, n, kernel_from_weights(ws));
  if (std::find(w.kernel.begin(), w.kernel.end(), -1) != w.kernel.end()) {  // kernel size unknown
    Shape out = unknown_shape(static_cast<int64_t>(x->size()));
    out[0] = (*x)[0];
    return out;
  }
  return windowed(ctx, *x, ws ? (*ws)[0] : Dim::unknown(), w);
}

void infer_conv(InferContext& ctx) { ctx.set_tensor(0, ctx.in_dtype(0), conv_shape(ctx, 0, 1)); }
void infer_conv_integer(InferContext& ctx) { ctx.set_tensor(0, DType::Int32, conv_shape(ctx, 0, 1)); }
void infer_qlinear_conv(InferContext& ctx) { ctx.set_tensor(0, ctx.in_dtype(7), conv_shape(ctx, 0, 3)); }

void infer_conv_transpose(InferContext& ctx) {
  const auto &x = ctx.in_shape(0), &ws = ctx.in_shape(1);
  if (!x) {
    ctx.set_tensor(0, ctx.in_dtype(0), std::nullopt);
    return;
  }
  infer_check(ctx, x->size() >= 3) << "expects [N,C,spatial...], got " << shape_str(*x);
  size_t n = x->size() - 2;
  Window w = window_attrs(ctx, n, kernel_from_weights(ws));
  Dim channels = ws ? (*ws)[1] * Dim(ctx.node().attr_int("group", 1)) : Dim::unknown();
  Shape out{(*x)[0], channels};
  auto out_shape = ctx.node().attr_ints("output_shape");
  auto out_pad = ctx.node().attr_ints("output_padding", std::vector<int64_t>(n, 0));
  infer_check(ctx, out_pad.size() == n && (out_shape.empty() || out_shape.size() >= n))
      << "output_padding or output_shape do not match " << n << " spatial dims";
  for (size_t i = 0; i < n; ++i) {
    const Dim& in = (*x)[i + 2];
    if (!out_shape.empty()) out.push_back(out_shape[out_shape.size() - n + i]);
    else if (w.kernel[i] < 0) out.push_back(Dim::unknown());
    else if (w.auto_pad == "SAME_UPPER" || w.auto_pad == "SAME_LOWER") out.push_back(in * Dim(w.strides[i]));
    else {
      int64_t k = (w.kernel[i] - 1) * w.dilations[i] + 1;
      int64_t pads = w.auto_pad == "VALID" ? 0 : w.pads[i] + w.pads[i + n];
      out.push_back(Dim(w.strides[i]) * (in - 1) + Dim(out_pad[i] + k - pads));
    }
  }
  ctx.set_tensor(0, ctx.in_dtype(0), out);
}

void infer_pool(InferContext& ctx) {
  const auto& x = ctx.in_shape(0);
  std::optional<Shape> out;
  if (x) {
    infer_check(ctx, x->size() >= 3) << "expects [N,C,spatial...], got " << shape_str(*x);
    out = windowed(ctx, *x, (*x)[1], window_attrs(ctx, x->size() - 2, {}));
  }
  ctx.set_tensor(0, ctx.in_dtype(0), out);
  ctx.set_tensor(1, DType::Int64, out);  // MaxPool's Indices
}

void infer_global_pool(InferContext& ctx) {
  std::optional<Shape> out;
  if (const auto& x = ctx.in_shape(0)) {
    out = Shape(x->size(), Dim(1));
    (*out)[0] = (*x)[0];
    (*out)[1] = (*x)[1];
  }
  ctx.set_tensor(0, ctx.in_dtype(0), out);
}

void infer_max_unpool(InferContext& ctx) {
  const auto& x = ctx.in_shape(0);
  std::optional<Shape> out;
  if (ctx.has_input(2)) {
    auto given = ctx.in_value(2);
    if (given) out = *given;
    else if (x) out = unknown_shape(static_cast<int64_t>(x->size()));
  } else if (x && x->size() >= 3) {
    size_t n = x->size() - 2;
    Window w = window_attrs(ctx, n, {});
    out = Shape{(*x)[0], (*x)[1]};
    for (size_t i = 0; i < n; ++i)
      out->push_back(((*x)[i + 2] - 1) * Dim(w.strides[i]) + Dim(w.kernel[i] - w.pads[i] - w.pads[i + n]));
  }
  ctx.set_tensor(0, ctx.in_dtype(0), out);
}

void infer_max_roi_pool(InferContext& ctx) {
  const auto &x = ctx.in_shape(0), &rois = ctx.in_shape(1);
  std::optional<Shape> out;
  if (x && rois) {
    out = Shape{(*rois)[0], (*x)[1]};
    for (int64_t p : ctx.node().attr_ints("pooled_shape")) out->push_back(p);
  }
  ctx.set_tensor(0, ctx.in_dtype(0), out);
}

// Col2Im: [N, C*prod(block), L] with image_shape and block_shape inputs -> [N, C, image_shape...].
void infer_col2im(InferContext& ctx) {
  const auto& x = ctx.in_shape(0);
  auto image = ctx.in_value(1);
  auto block = ctx.in_value(2);
  std::optional<Shape> out;
  if (x && x->size() == 3) {
    Dim channels = block ? floordiv((*x)[1], shape_numel(*block)) : Dim::unknown();
    out = Shape{(*x)[0], channels};
    if (image) out->insert(out->end(), image->begin(), image->end());
    else if (ctx.in_rank(1) == 1 && (*ctx.in_shape(1))[0].is_const())
      for (int64_t i = 0; i < (*ctx.in_shape(1))[0].value(); ++i) out->push_back(Dim::unknown());
    else out.reset();
  }
  ctx.set_tensor(0, ctx.in_dtype(0), out);
}

// CausalConvWithState (opset 27): output like the input [B, C, L]; present_state [B, C, k - 1].
void infer_causal_conv_with_state(InferContext& ctx) {
  const auto& x = ctx.in_shape(0);
  const auto& w = ctx.in_shape(1);
  ctx.set_tensor(0, ctx.in_dtype(0), x);
  std::optional<Shape> state;
  if (x && x->size() == 3 && w && w->size() == 3) state = Shape{(*x)[0], (*x)[1], (*w)[2] - Dim(1)};
  ctx.set_tensor(1, ctx.num_inputs() > 3 && ctx.node().input(3) ? ctx.in_dtype(3) : ctx.in_dtype(0), state);
}

// DeformConv (opset 19): [N, M, spatial of the offsets] (the offsets hold one vector per output pixel).
void infer_deform_conv(InferContext& ctx) {
  const auto& x = ctx.in_shape(0);
  const auto& w = ctx.in_shape(1);
  const auto& off = ctx.in_shape(2);
  std::optional<Shape> out;
  if (x && w && off && off->size() == x->size() && x->size() >= 3) {
    out = Shape{(*x)[0], (*w)[0]};
    out->insert(out->end(), off->begin() + 2, off->end());
  }
  ctx.set_tensor(0, ctx.in_dtype(0), out);
}

}  // namespace

void add_conv_ops(OpTable& t) {
  t.add_all({"Conv"}, 0, infer_conv);
  t.add_all({"ConvInteger"}, 0, infer_conv_integer);
  t.add_all({"QLinearConv"}, 0, infer_qlinear_conv);
  t.add_all({"ConvTranspose"}, 0, infer_conv_transpose);
  t.add_all({"AveragePool", "MaxPool", "LpPool"}, 0, infer_pool);
  t.add_all({"GlobalAveragePool", "GlobalMaxPool", "GlobalLpPool"}, 0, infer_global_pool);
  t.add_all({"MaxUnpool"}, kShapeArgs, infer_max_unpool);
  t.add_all({"MaxRoiPool"}, 0, infer_max_roi_pool);
  t.add_all({"Col2Im"}, kShapeArgs, infer_col2im);
  t.add_all({"CausalConvWithState"}, 0, infer_causal_conv_with_state);
  t.add_all({"DeformConv"}, 0, infer_deform_conv);
}

}  // namespace onnxc::ir
