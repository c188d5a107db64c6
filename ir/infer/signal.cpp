// Signal processing (opset 17): DFT, STFT, the window functions, MelWeightMatrix. Complex values are
// a trailing axis of 2.
#include "ir/infer/context.h"

namespace onnxc::ir {
namespace {

DType output_datatype(const InferContext& ctx) { return dtype_attr(ctx, "output_datatype", DType::Float32); }

// A size input's value (run-time values become value symbols that the run binds).
Dim scalar_dim(const InferContext& ctx, size_t i) { return ctx.in_size(i); }

Dim onesided_bins(const Dim& n) { return floordiv(n, Dim(2)) + 1; }

void infer_window(InferContext& ctx) { ctx.set_tensor(0, output_datatype(ctx), Shape{scalar_dim(ctx, 0)}); }

void infer_mel_weight_matrix(InferContext& ctx) {
  ctx.set_tensor(0, output_datatype(ctx), Shape{onesided_bins(scalar_dim(ctx, 1)), scalar_dim(ctx, 0)});
}

void infer_dft(InferContext& ctx) {
  const auto& x = ctx.in_shape(0);
  std::optional<Shape> out;
  if (x) {
    int64_t r = static_cast<int64_t>(x->size());
    bool onesided = ctx.node().attr_int("onesided", 0) != 0, inverse = ctx.node().attr_int("inverse", 0) != 0;
    out = *x;
    if (ctx.opset() >= 20 && ctx.has_input(2) && !ctx.in_int(2)) {
      // An axis known only at run time: the shape is the input's unless onesided or dft_length
      // changes the (unknown) axis's extent.
      for (Dim& d : *out) d = onesided || ctx.has_input(1) ? Dim::unknown() : d;
      out->back() = Dim(inverse && onesided ? 1 : 2);
      ctx.set_tensor(0, ctx.in_dtype(0), out);
      return;
    }
    int64_t axis = ctx.opset() >= 20 ? (ctx.in_int(2) ? *ctx.in_int(2) : -2) : ctx.node().attr_int("axis", 1);
    axis = norm_axis(ctx, axis, r);
    if (inverse && onesided) {
      // The inverse of a onesided (real) transform: n/2 + 1 bins in, n real samples out (n by
      // default 2 · (bins - 1)).
      (*out)[axis] = ctx.has_input(1) ? scalar_dim(ctx, 1) : ((*x)[axis] - 1) * 2;
      out->back() = Dim(1);
    } else {
      Dim n = ctx.has_input(1) ? scalar_dim(ctx, 1) : (*x)[axis];
      (*out)[axis] = onesided ? onesided_bins(n) : n;
      out->back() = Dim(2);
    }
  }
  ctx.set_tensor(0, ctx.in_dtype(0), out);
}

void infer_stft(InferContext& ctx) {
  const auto& x = ctx.in_shape(0);
  std::optional<Shape> out;
  if (x) {
    infer_check(ctx, x->size() == 3) << "expects [batch, length, 1 or 2], got " << shape_str(*x);
    Dim frame = ctx.has_input(3) ? scalar_dim(ctx, 3) : ctx.in_rank(2) == 1 ? (*ctx.in_shape(2))[0] : Dim::unknown();
    Dim step = scalar_dim(ctx, 1);
    Dim frames = floordiv((*x)[1] - frame, step) + 1;
    Dim bins = ctx.node().attr_int("onesided", 1) ? onesided_bins(frame) : frame;
    out = Shape{(*x)[0], frames.has_unknown() ? Dim::unknown() : frames, bins, Dim(2)};
  }
  ctx.set_tensor(0, ctx.in_dtype(0), out);
}

}  // namespace

void add_signal_ops(OpTable& t) {
  t.add_all({"HannWindow", "HammingWindow", "BlackmanWindow"}, kShapeArgs, infer_window);
  t.add_all({"MelWeightMatrix"}, kShapeArgs, infer_mel_weight_matrix);
  t.add_all({"DFT"}, 0, infer_dft);
  t.add_all({"STFT"}, 0, infer_stft);
}

}  // namespace onnxc::ir
