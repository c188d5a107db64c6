// Normalizations: BatchNormalization (inference and training outputs), InstanceNormalization,
// LayerNormalization (with its Mean/InvStdDev outputs), GroupNormalization, RMSNormalization, LRN,
// MeanVarianceNormalization; RotaryEmbedding (shaped like its input).
#include "ir/infer/context.h"

namespace onnxc::ir {
namespace {

void infer_same(InferContext& ctx) { ctx.set_tensor(0, ctx.in_dtype(0), ctx.in_shape(0)); }

// Outputs after Y are running or saved statistics shaped like the mean (input 3) and variance
// (input 4): (mean, var) from opset 14, (mean, var, saved_mean, saved_var) before.
void infer_batch_norm(InferContext& ctx) {
  infer_same(ctx);
  for (size_t i = 1; i < ctx.num_outputs(); ++i) ctx.set_output(i, ctx.in_type(i % 2 == 1 ? 3 : 4));
}

void infer_layer_norm(InferContext& ctx) {
  infer_same(ctx);
  const auto& x = ctx.in_shape(0);
  DType stash = dtype_attr(ctx, "stash_type", DType::Float32);
  std::optional<Shape> stats;
  if (x) {
    int64_t r = static_cast<int64_t>(x->size());
    int64_t axis = norm_axis(ctx, ctx.node().attr_int("axis", -1), r);
    stats = *x;
    for (int64_t i = axis; i < r; ++i) (*stats)[i] = Dim(1);
  }
  ctx.set_tensor(1, stash, stats);
  ctx.set_tensor(2, stash, stats);
}

}  // namespace

void add_norm_ops(OpTable& t) {
  t.add_all({"BatchNormalization"}, 0, infer_batch_norm);
  t.add_all({"LayerNormalization"}, 0, infer_layer_norm);
  t.add_all({"InstanceNormalization", "GroupNormalization", "RMSNormalization", "LRN", "MeanVarianceNormalization"}, 0,
            infer_same);
  t.add_all({"RotaryEmbedding"}, 0, infer_same);  // opset 23: rotates features in place
}

}  // namespace onnxc::ir
