// Scaled dot-product attention written out in plain ops -> ONNX Attention (opset 23), compiled by
// codegen/lower/attention.cpp into one streaming kernel. Rules in fuse_attention.cpp.
#pragma once

#include <vector>

#include "passes/fusion.h"

namespace onnxc::passes {

// softmax(Q·Kᵀ·s + masks)·V in its exporters' spellings (family "attention").
std::vector<FusionRule> attention_rules();

// For models written out for other runtimes (`onnxc optimize`): ONNX Runtime 1.30's Attention
// requires attn_mask's second-to-last dim to equal the query length, while ONNX (and onnxc's
// kernel) broadcast it. Expands each mask whose query axis is not provably the query length to
// that length (Expand by Shape(Q)); codegen never needs this. Returns whether anything changed.
bool expand_attention_masks_for_export(ir::Model& m);

}  // namespace onnxc::passes
