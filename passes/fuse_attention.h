// Scaled dot-product attention written out in plain ops -> ONNX Attention (opset 23), compiled by
// codegen/lower/attention.cpp into one streaming kernel. Rules in fuse_attention.cpp.
#pragma once

#include <vector>

#include "passes/fusion.h"

namespace onnxc::passes {

// softmax(Q·Kᵀ·s + masks)·V in its exporters' spellings (family "attention").
std::vector<FusionRule> attention_rules();

}  // namespace onnxc::passes
