// onnxc's own ops (domain "onnxc"): what the passes create and no ONNX opset defines.
#include "ir/eval/symbolic_shape.h"
#include "ir/infer/context.h"

namespace onnxc::ir {
namespace {

// onnxc.SymbolicShape: int64, rank 0 or 1; its contents are the dims it names.
void infer_symbolic_shape(InferContext& ctx) {
  std::vector<Dim> dims = symbolic_shape_dims(ctx.node());
  bool scalar = symbolic_shape_is_scalar(ctx.node());
  ctx.set_tensor(0, DType::Int64, scalar ? Shape{} : Shape{static_cast<int64_t>(dims.size())});
  ctx.set_value(0, std::move(dims));
}

// The seeds' attention forms (AdditiveAttention, CosineAttention, KernelAttention): Q [B, Tq, Dq],
// K [B, S, Dk], V [B, S, Dv] -> Y [B, Tq, Dv] of V's dtype and weights [B, Tq, S]. Q's and K's batch
// may be 1 (broadcast); V's batch names B.
void infer_attention_form(InferContext& ctx) {
  const auto &q = ctx.in_shape(0), &k = ctx.in_shape(1), &v = ctx.in_shape(2);
  std::optional<Shape> y, w;
  if (q && k && v) {
    infer_check(ctx, q->size() == 3 && k->size() == 3 && v->size() == 3)
        << "Q, K and V must be rank 3 [batch, length, features]";
    Dim b = broadcast_dim(ctx, broadcast_dim(ctx, (*q)[0], (*k)[0]), (*v)[0]);
    y = Shape{b, (*q)[1], (*v)[2]};
    w = Shape{b, (*q)[1], (*k)[1]};
  }
  ctx.set_tensor(0, ctx.in_dtype(2), y);
  if (ctx.num_outputs() > 1) ctx.set_tensor(1, ctx.in_dtype(2), w);
}

// DynamicQuantMatMul (--quantize dynamic-int8): A [.., M, K] f32 × int8 B [K, N] -> f32 [.., M, N].
void infer_dynamic_quant_matmul(InferContext& ctx) {
  const auto &a = ctx.in_shape(0), &b = ctx.in_shape(1);
  std::optional<Shape> y;
  if (a && b) {
    infer_check(ctx, a->size() >= 2 && b->size() == 2 && (*a)[a->size() - 1] == (*b)[0])
        << "A must be [.., M, K] and the int8 weight [K, N]";
    y = *a;
    y->back() = (*b)[1];
  }
  ctx.set_tensor(0, DType::Float32, y);
}

// CacheAppend (passes/use_kv_cache): past [.., P, ..] with the rows of `new` appended along `axis`.
// `new` is shaped like past, or, with the attribute heads = H, [b, s, H * d] for a past [b, H, P, d].
// With layer = j (a stacked cache [L, .., P, ..], passes/stacked_kv_cache): `new` is layer j's rows,
// shaped like past without its first dim; the result has past's dims, grown by new's rows when `grow`
// is set (the chain's first link; later links get the grown buffer).
void infer_cache_append(InferContext& ctx) {
  const auto &past = ctx.in_shape(0), &add = ctx.in_shape(1);
  std::optional<Shape> y;
  int64_t heads = ctx.node().attr_int("heads", 0), layer = ctx.node().attr_int("layer", -1);
  if (past && add) {
    int64_t r = static_cast<int64_t>(past->size());
    int64_t axis = ctx.node().attr_int("axis", 0);
    infer_check(ctx, axis >= 0 && axis < r && (layer < 0 || axis >= 1)) << "axis " << axis << " is out of range for rank " << r;
    if (layer >= 0) {
      infer_check(ctx, heads == 0 && static_cast<int64_t>(add->size()) == r - 1)
          << "a layer's new rows must have the stacked cache's rank less one";
      y = *past;
      const auto a = static_cast<size_t>(axis);
      if (ctx.node().attr_int("grow", 0)) (*y)[a] = (*past)[a] + (*add)[a - 1];
      ctx.set_tensor(0, ctx.in_dtype(0), y);
      return;
    }
    infer_check(ctx, heads ? (r == 4 && axis == 2 && add->size() == 3) : add->size() == past->size())
        << (heads ? "with heads, past must be [b, heads, P, d], axis 2 and the new rows [b, s, heads * d]"
                  : "past and the new rows must have one rank");
    y = *past;
    (*y)[static_cast<size_t>(axis)] = (*past)[static_cast<size_t>(axis)] + (*add)[heads ? 1 : static_cast<size_t>(axis)];
  }
  ctx.set_tensor(0, ctx.in_dtype(0), y);
}

// CacheScatter (passes/use_kv_cache, from TensorScatter): shaped like the past cache.
void infer_same_as_first(InferContext& ctx) { ctx.set_tensor(0, ctx.in_dtype(0), ctx.in_shape(0)); }

}  // namespace

void add_onnxc_ops(OpTable& t) {
  t.add_all({kSymbolicShapeOp}, kShapeOnly, infer_symbolic_shape, kOnnxcDomain);
  t.add_all({"AdditiveAttention", "CosineAttention", "KernelAttention"}, 0, infer_attention_form, kOnnxcDomain);
  t.add_all({"CacheAppend"}, kHostOnly, infer_cache_append, kOnnxcDomain);
  t.add_all({"CacheScatter"}, kHostOnly, infer_same_as_first, kOnnxcDomain);
  t.add_all({"DynamicQuantMatMul"}, 0, infer_dynamic_quant_matmul, kOnnxcDomain);
  // Copy exists only inside kernels partitioning builds (a view a kernel computes): its output is typed
  // when it is made, so it needs no rule.
  t.add_all({"Copy"}, 0, nullptr, kOnnxcDomain);
}

}  // namespace onnxc::ir
