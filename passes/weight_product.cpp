// Matching a constant-weight product for the quantizing passes (see weight_product.h).
#include "passes/weight_product.h"

#include <utility>

namespace onnxc::passes {

std::optional<WeightProduct> match_weight_product(const ir::Node& node, int64_t min_dim) {
  const bool gemm = node.op_type() == "Gemm";
  if (!node.domain().empty() || (!gemm && node.op_type() != "MatMul") || node.num_inputs() < 2) return std::nullopt;
  WeightProduct p;
  p.a = node.input(0);
  p.w = node.input(1);
  if (!p.a || !p.w || p.a->dtype() != ir::DType::Float32 || !p.w->is_constant() ||
      p.w->dtype() != ir::DType::Float32 || p.w->constant().rank() != 2)
    return std::nullopt;
  if (gemm) {
    if (node.attr_int("transA", 0) != 0 || node.attr_float("alpha", 1.0f) != 1.0f) return std::nullopt;
    p.trans_b = node.attr_int("transB", 0) != 0;
    if (node.num_inputs() > 2 && node.input(2)) {
      p.bias = node.input(2);
      p.beta = node.attr_float("beta", 1.0f);
      if (!p.bias->is_constant() || p.bias->dtype() != ir::DType::Float32) return std::nullopt;
    }
  }
  const auto& wd = p.w->constant().dims();
  p.k = p.trans_b ? wd[1] : wd[0];
  p.n = p.trans_b ? wd[0] : wd[1];
  if (p.k < min_dim || p.n < min_dim) return std::nullopt;
  return p;
}

ir::Value* scaled_bias(ir::Graph& g, const WeightProduct& p, std::vector<int64_t> dims) {
  const ir::Tensor& c = p.bias->constant();
  if (p.beta == 1.0f && dims == c.dims()) return p.bias;
  ir::Tensor scaled(ir::DType::Float32, std::move(dims));
  for (int64_t i = 0; i < c.numel(); ++i) scaled.mutable_data<float>()[i] = p.beta * c.data<float>()[i];
  return g.add_initializer(g.unique_name(p.bias->name() + "/scaled"), std::move(scaled));
}

}  // namespace onnxc::passes
