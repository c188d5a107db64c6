// Canonical forms before fusion: one internal opset (so a fused model is valid ONNX at the opset its
// fused ops need) and one spelling for each equivalent exporter idiom, so each fusion matches one
// core pattern. Nothing here changes a value the model computes.
#pragma once

#include <cstdint>
#include <string>

#include "ir/graph.h"
#include "ir/op_registry.h"

namespace onnxc::passes {

// The ai.onnx opset models are raised to: Attention and RMSNormalization need 23.
constexpr int64_t kCanonicalOpset = 23;

// Rewrites every default-domain node (subgraphs included) from the model's opset to the forms of
// opset `version` and imports that version: Reduce*/Squeeze/Unsqueeze/Split axes and splits as
// inputs, Softmax/LogSoftmax/Hardmax before 13 with opset-13 semantics (Flatten + Reshape when
// the axis is not the last), Slice/Pad/Clip/TopK attributes as inputs, Scatter -> ScatterElements,
// renamed GridSample modes, RoiAlign's old default made explicit. Returns "" on success; otherwise
// why the model cannot be raised (e.g. "Upsample was removed in opset 10"), leaving it unchanged.
std::string raise_opset(ir::Model& m, int64_t version);

// raise_opset(kCanonicalOpset) when possible, then the spelling rules:
//   Pow(x, 2)          -> Mul(x, x)            (one rounding either way)
//   Reciprocal(x)      -> Div(1, x)            (the same IEEE division)
//   Div(x, c)          -> Mul(x, 1/c)          when every c is a power of two (exact)
//   Einsum "bhqd,bhkd->bhqk" and every other batched matmul -> Transpose + MatMul + Transpose
//   softmax over a column of scores K·q (Luong's decoder cell) -> the row form qᵀ·Kᵀ (attention_rows)
//   Reshape(Add(Reshape(x, x split), m), x's shape) -> Add(x, m expanded and merged) (merge_split_add)
//   Reshape(Transpose(Reshape(x, [-1, s, d]), [0, 2, 1]), [.., d, s]) -> Transpose(x) (swap_through_flat_view)
//   RotaryEmbedding with [1, s, r] caches for a larger batch -> the caches expanded to x's batch
// Returns whether anything changed.
bool canonicalize(ir::Model& m);

// Softmax weights computed from a column of scores Squeeze(MatMul(K[..,s,h], u[..,h,1])) (or from a
// squeezed row) and unsqueezed into a row for MatMul(·, V): rewritten on [.., 1, s] with the scores
// as MatMul(qᵀ, Kᵀ), the core form of scaled dot-product attention with a length-1 query. Values
// read elsewhere at [.., s] become Squeezes under their old names. Returns whether anything changed.
bool attention_rows(ir::Graph& g, const ir::OpsetMap& opsets);

// Reshape(Add(Reshape(x, S'), m), shape of x), where S' is x's shape with one dim split in two
// (Swin's shifted-window mask): rewritten as Add(x, Reshape(Expand(m over the split dims))), the
// same sums without the views. `outer` is the outer Reshape; returns whether it was rewritten.
bool merge_split_add(ir::Node& outer);

// Reshape(Cast(Softmax(y, -1)), S) where S keeps y's last dim: the view moved in front of the row-wise
// ops (Cast, last-axis Softmax), Cast(Softmax(Reshape(y, S))): the same rows, so merge_split_add can
// see the view it undoes. `outer` is the Reshape; returns the moved Reshape, or null if nothing moved.
ir::Node* view_before_rows(ir::Node& outer);

// Reshape(Transpose(Reshape(x[.., s, d], [N, s, d]), [0, 2, 1]), [.., d, s]): the last two dims of x
// swapped through a 3-D view (the dynamo exporter's Kᵀ in scaled_dot_product_attention), rewritten
// as Transpose(x) with those two dims swapped. `outer` is the outer Reshape; returns whether it was.
bool swap_through_flat_view(ir::Node& outer);

}  // namespace onnxc::passes
