// fuse_rotary: Hugging Face's rotate_half rotary embedding (full or partial) -> RotaryEmbedding
// (opset 23); its rules for the fusion driver (passes/fusion.h), made a pass in registry.cpp.
#pragma once

#include <vector>

#include "passes/fusion.h"

namespace onnxc::passes {

std::vector<FusionRule> rotary_rules();  // fuse_rotary.cpp

}  // namespace onnxc::passes
