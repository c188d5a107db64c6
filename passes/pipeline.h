// The default optimisation pipeline and a one-call way to run a list of passes.
#pragma once

#include <string>
#include <vector>

#include "ir/graph.h"
#include "passes/pass_manager.h"

namespace onnxc::passes {

// The default pipeline, as pass names (see pipeline.cpp for the list and why it is in that order).
std::vector<std::string> default_pipeline();

// Runs `names` (pass names or "fixpoint(a,b,...)" groups) on `model` with a fresh PassManager.
void run_pipeline(ir::Model& model, const std::vector<std::string>& names, const PipelineOptions& opt = {});

}  // namespace onnxc::passes
