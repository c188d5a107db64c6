// The product of an activation and a constant weight matrix, as the quantizing passes
// (quantize_dynamic_int8, quantize_int4_weights) find it before rewriting its weight:
//
//   MatMul(a, W)   or   Gemm(a, W[, C]), transA = 0, alpha = 1
//
// a float32, W a constant float32 matrix [K, N] ([N, K] with transB), C (if any) constant float32.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "ir/graph.h"

namespace onnxc::passes {

struct WeightProduct {
  ir::Value* a = nullptr;
  ir::Value* w = nullptr;  // constant, rank 2
  bool trans_b = false;
  int64_t k = 0, n = 0;      // W's extents as the product reads them
  ir::Value* bias = nullptr;  // Gemm's C, or null
  float beta = 1.0f;          // C's factor
};

// `node` as a WeightProduct; nullopt where it is not one or where K or N is below `min_dim`. Reads
// the graph only: the caller adds its own conditions (a's rank, W finite) before rewriting.
std::optional<WeightProduct> match_weight_product(const ir::Node& node, int64_t min_dim);

// beta·C with shape `dims` (C's element count) as a value of `g`: C itself where beta is 1 and the
// shape is C's, else a new initializer named after C.
ir::Value* scaled_bias(ir::Graph& g, const WeightProduct& p, std::vector<int64_t> dims);

}  // namespace onnxc::passes
