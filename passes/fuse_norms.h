// The normalization and activation fusions: each returns its rules for the fusion driver
// (passes/fusion.h); registry.cpp makes one pass of each.
#pragma once

#include <vector>

#include "passes/fusion.h"

namespace onnxc::passes {

std::vector<FusionRule> layer_norm_rules();  // fuse_layer_norm.cpp -> LayerNormalization (17)
std::vector<FusionRule> rms_norm_rules();    // fuse_rms_norm.cpp -> RMSNormalization (23)
std::vector<FusionRule> gelu_rules();        // fuse_gelu.cpp -> Gelu (20)

}  // namespace onnxc::passes
