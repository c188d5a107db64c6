// Common subexpression elimination.
#pragma once

#include <cstdint>

#include "ir/graph.h"

namespace onnxc::passes {

struct CseOptions {
  // Constants with at most this many elements are merged by contents (larger ones are weights,
  // which exporters rarely duplicate and which are expensive to compare).
  int64_t max_constant_elements = 4096;
};

// Merges, in every graph and subgraph, (1) constants with equal dtype, dims and contents and (2)
// nodes with the same op, domain, attributes and inputs, keeping the first in topological order and
// redirecting uses of the others to it. Exporters repeat such nodes per layer (Shape(x), the
// Constant 0 feeding every Unsqueeze), and merging them lets later passes see one value.
// Never merges: ops the op table marks random, nodes with subgraphs, and duplicates whose values
// are graph outputs (their names are the model's interface). Returns whether anything merged.
bool eliminate_common_subexpressions(ir::Model& model, const CseOptions& opt = {});

}  // namespace onnxc::passes
