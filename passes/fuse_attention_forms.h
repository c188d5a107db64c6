// The seeds' attention forms (additive/Bahdanau, cosine/NTM, Nadaraya–Watson kernel pooling) as
// fusion rules of family "attention"; see fuse_attention_forms.cpp for the subgraphs they match.
#pragma once

#include <vector>

#include "passes/fusion.h"

namespace onnxc::passes {

std::vector<FusionRule> attention_form_rules();

}  // namespace onnxc::passes
