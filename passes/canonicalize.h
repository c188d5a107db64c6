// Canonical forms before fusion: one internal opset (so a fused model is valid ONNX at the opset its
// fused ops need) and one spelling for each equivalent exporter idiom, so each fusion matches one
// core pattern. Nothing here changes a value the model computes.
#pragma once

#include <cstdint>
#include <string>

#include "ir/graph.h"
#include "ir/op_registry.h"
#include "passes/pass_context.h"

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

// raise_opset(kCanonicalOpset) when possible, then the spelling rules, each a named rule on the
// fusion driver (canonicalize_rules.h; `onnxc inspect --fusions --canonical` lists what fired):
//   pow_square            Pow(x, 2)          -> Mul(x, x)            (one rounding either way)
//   reciprocal_div        Reciprocal(x)      -> Div(1, x)            (the same IEEE division)
//   div_exact_reciprocal  Div(x, c)          -> Mul(x, 1/c)          when every c is a power of two (exact)
//   einsum_matmul         Einsum "bhqd,bhkd->bhqk" and every other batched matmul -> Transpose + MatMul + Transpose
//   rotary_batch_caches   RotaryEmbedding with [1, s, r] caches for a larger batch -> the caches expanded to x's batch
//   merge_split_add       Reshape(Add(Reshape(x, x split), m), x's shape) -> Add(x, m expanded and merged)
//                         (Swin's shifted-window mask, BART's padding mask on [b·h, t, s] scores)
//   view_before_rows      Reshape(Cast(Softmax(y, -1)), S), S keeping y's last dim -> Cast(Softmax(Reshape(y, S))),
//                         then merge_split_add on the moved view (BLOOM's ALiBi scores)
//   swap_through_flat_view Reshape(Transpose(Reshape(x, [-1, s, d]), [0, 2, 1]), [.., d, s]) -> Transpose(x)
//   attention_rows        softmax weights from a column of scores Squeeze(MatMul(K[..,s,h], u[..,h,1])) (or a
//                         squeezed row), unsqueezed into a row for MatMul(·, V) (Luong's decoder cell): rewritten
//                         on [.., 1, s] with the scores as MatMul(qᵀ, Kᵀ), values read elsewhere at [.., s]
//                         becoming Squeezes under their old names. Runs after the others.
// Fired rules go to ctx.report->canonical. Returns whether anything changed.
bool canonicalize(ir::Model& m, PassContext& ctx);
bool canonicalize(ir::Model& m);

}  // namespace onnxc::passes
