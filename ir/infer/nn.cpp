// Other neural-network ops: Resize and Upsample (sizes, or floor(dim * scale) kept symbolic for
// scales like 2 or 0.5), GridSample, RoiAlign, the losses, and Attention (opset 23).
#include <algorithm>
#include <cmath>

#include "ir/infer/context.h"

namespace onnxc::ir {
namespace {

constexpr size_t kNoInput = ~size_t{0};

// floor(d * scale) for a float scale; symbolic when scale is p/q with q a small power of two.
Dim scale_dim(const Dim& d, double scale) {
  if (d.is_const()) return Dim(static_cast<int64_t>(std::floor(static_cast<double>(d.value()) * scale)));
  for (int64_t q = 1; q <= 1024; q *= 2) {
    double p = scale * static_cast<double>(q);
    if (p == std::floor(p)) return floordiv(d * Dim(static_cast<int64_t>(p)), Dim(q));
  }
  return Dim::unknown();
}

std::optional<std::vector<double>> float_values(const InferContext& ctx, size_t i) {
  const Tensor* t = ctx.in_const(i);
  if (!t || t->numel() == 0 || t->empty_data() || !dtype_is_float(t->dtype())) return std::nullopt;
  std::vector<double> r;
  for (int64_t k = 0; k < t->numel(); ++k) r.push_back(static_cast<double>(static_cast<float>(t->get_f64(k))));
  return r;
}

bool empty_input(const InferContext& ctx, size_t i) {
  if (!ctx.has_input(i)) return true;
  const auto& s = ctx.in_shape(i);
  return s && s->size() == 1 && (*s)[0] == Dim(0);
}

// Output shape from `sizes` (input `sizes_idx`) or `scales` (attribute or input `scales_idx`).
std::optional<Shape> resized(InferContext& ctx, size_t scales_idx, size_t sizes_idx) {
  const auto& x = ctx.in_shape(0);
  if (!x) return std::nullopt;
  size_t r = x->size();
  std::vector<int64_t> axes = ctx.node().attr_ints("axes");
  if (axes.empty())
    for (size_t i = 0; i < r; ++i) axes.push_back(static_cast<int64_t>(i));
  axes = norm_axes(ctx, axes, static_cast<int64_t>(r));
  Shape out = *x;
  bool stretch = ctx.node().attr_string("keep_aspect_ratio_policy", "stretch") == "stretch";
  if (sizes_idx < ctx.num_inputs() && !empty_input(ctx, sizes_idx)) {
    auto sizes = ctx.in_value(sizes_idx);
    bool known = sizes && sizes->size() == axes.size();
    // keep_aspect_ratio_policy (opset 18): one scale for every axis, the smallest (not_larger) or
    // largest (not_smaller) of sizes / extent, and each extent rounded from it.
    std::optional<double> one_scale;
    for (size_t i = 0; known && !stretch && i < axes.size(); ++i) {
      const Dim &want = (*sizes)[i], &in = (*x)[axes[i]];
      if (!want.is_const() || !in.is_const() || in.value() == 0) {
        known = false;
        break;
      }
      double sc = static_cast<double>(want.value()) / static_cast<double>(in.value());
      bool larger = ctx.node().attr_string("keep_aspect_ratio_policy", "stretch") == "not_smaller";
      one_scale = !one_scale ? sc : larger ? std::max(*one_scale, sc) : std::min(*one_scale, sc);
    }
    for (size_t i = 0; i < axes.size(); ++i) {
      if (!known) out[axes[i]] = Dim::unknown();
      else if (stretch) out[axes[i]] = (*sizes)[i];
      else out[axes[i]] = Dim(static_cast<int64_t>(*one_scale * static_cast<double>((*x)[axes[i]].value()) + 0.5));
    }
    return out;
  }
  std::optional<std::vector<double>> scales;
  if (ctx.node().has_attr("scales")) {
    auto f = ctx.node().attr_floats("scales");
    scales = std::vector<double>(f.begin(), f.end());
  } else {
    scales = float_values(ctx, scales_idx);
  }
  infer_check(ctx, !scales || scales->size() == axes.size())
      << "scales has " << scales->size() << " entries for " << axes.size() << " axes";
  for (size_t i = 0; i < axes.size(); ++i)
    out[axes[i]] = scales ? scale_dim((*x)[axes[i]], (*scales)[i]) : Dim::unknown();
  return out;
}

// Resize-10 takes (X, scales); from opset 11 (X, roi, scales, sizes).
void infer_resize_v10(InferContext& ctx) { ctx.set_tensor(0, ctx.in_dtype(0), resized(ctx, 1, kNoInput)); }
void infer_resize(InferContext& ctx) { ctx.set_tensor(0, ctx.in_dtype(0), resized(ctx, 2, 3)); }

void infer_upsample(InferContext& ctx) { ctx.set_tensor(0, ctx.in_dtype(0), resized(ctx, 1, kNoInput)); }

void infer_grid_sample(InferContext& ctx) {
  const auto &x = ctx.in_shape(0), &grid = ctx.in_shape(1);
  std::optional<Shape> out;
  if (x && grid) {
    infer_check(ctx, x->size() >= 3 && grid->size() == x->size())
        << "input " << shape_str(*x) << " and grid " << shape_str(*grid) << " do not fit";
    out = Shape{(*x)[0], (*x)[1]};
    out->insert(out->end(), grid->begin() + 1, grid->end() - 1);
  }
  ctx.set_tensor(0, ctx.in_dtype(0), out);
}

void infer_roi_align(InferContext& ctx) {
  const auto &x = ctx.in_shape(0), &rois = ctx.in_shape(1);
  std::optional<Shape> out;
  if (x && rois)
    out = Shape{(*rois)[0], (*x)[1], ctx.node().attr_int("output_height", 1), ctx.node().attr_int("output_width", 1)};
  ctx.set_tensor(0, ctx.in_dtype(0), out);
}

// NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss: per-element loss shaped like the target
// for reduction "none", else a scalar; SoftmaxCrossEntropyLoss may also output log-probabilities.
void infer_loss(InferContext& ctx) {
  bool none = ctx.node().attr_string("reduction", "mean") == "none";
  ctx.set_tensor(0, ctx.in_dtype(0), none ? ctx.in_shape(1) : std::optional<Shape>(Shape{}));
  ctx.set_tensor(1, ctx.in_dtype(0), ctx.in_shape(0));
}

// Attention (opset 23): Q, K, V are [B, heads, S, head_size], or [B, S, heads*head_size] with the
// head counts as attributes. Outputs: Y, present key and value, the QK matmul output.
void infer_attention(InferContext& ctx) {
  const auto &q = ctx.in_shape(0), &k = ctx.in_shape(1), &v = ctx.in_shape(2);
  if (!q || !k || !v) {
    ctx.set_tensor(0, ctx.in_dtype(0), std::nullopt);
    return;
  }
  // ONNX wants one rank for Q, K and V; onnxc's KV-cache form (passes/use_kv_cache) also reads
  // 4-D keys and values (the cache) with a 3-D Q.
  infer_check(ctx, (q->size() == 3 || q->size() == 4) && (k->size() == q->size() || k->size() == 4) &&
                       v->size() == k->size())
      << "Q, K and V must all be 3-D or all 4-D";
  bool four_d = q->size() == 4, kv4 = k->size() == 4;
  Dim hq = four_d ? (*q)[1] : Dim(ctx.node().attr_int("q_num_heads", 1));
  Dim hkv = kv4 ? (*k)[1] : Dim(ctx.node().attr_int("kv_num_heads", 1));
  Dim sq = four_d ? (*q)[2] : (*q)[1], skv = kv4 ? (*k)[2] : (*k)[1];
  Dim dk = kv4 ? (*k)[3] : floordiv((*k)[2], hkv), dv = kv4 ? (*v)[3] : floordiv((*v)[2], hkv);
  infer_check(ctx, !hq.is_const() || !hkv.is_const() || (hkv.value() > 0 && hq.value() % hkv.value() == 0))
      << "the query head count must be a multiple of the key/value head count (GQA)";
  Dim past = ctx.in_rank(4) == 4 ? (*ctx.in_shape(4))[2] : Dim(0);
  Shape y = four_d ? Shape{(*q)[0], hq, sq, dv} : Shape{(*q)[0], sq, hq * dv};
  ctx.set_tensor(0, ctx.in_dtype(0), y);
  ctx.set_tensor(1, ctx.in_dtype(1), Shape{(*q)[0], hkv, past + skv, dk});
  ctx.set_tensor(2, ctx.in_dtype(2), Shape{(*q)[0], hkv, past + skv, dv});
  ctx.set_tensor(3, ctx.in_dtype(0), Shape{(*q)[0], hq, sq, past + skv});
}

}  // namespace

void add_nn_ops(OpTable& t) {
  t.add({"", "Resize", 10, 10, kShapeArgs, infer_resize_v10});
  t.add({"", "Resize", 11, OpInfo::kLatest, kShapeArgs, infer_resize});
  t.add_all({"Upsample"}, kShapeArgs, infer_upsample);
  t.add_all({"GridSample"}, 0, infer_grid_sample);
  t.add_all({"RoiAlign"}, 0, infer_roi_align);
  t.add_all({"NegativeLogLikelihoodLoss", "SoftmaxCrossEntropyLoss"}, 0, infer_loss);
  t.add_all({"Attention"}, 0, infer_attention);
  // No rule yet: the grid's extents come from the model's declared output (codegen/lower/image_ops.cpp).
  t.add_all({"AffineGrid"}, 0, nullptr);
}

}  // namespace onnxc::ir
