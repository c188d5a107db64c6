// Constant folding.
#pragma once

#include <cstdint>

#include "ir/graph.h"

namespace onnxc::passes {

struct FoldOptions {
  // Never materialise an output with more elements than this.
  int64_t max_elements = int64_t{1} << 20;
  // An output above this many elements is folded only if it is no larger than the node's inputs
  // together: folding a weight's Transpose is worth it, expanding a scalar into a big tensor is not.
  int64_t max_growth_elements = 4096;
};

// Replaces the outputs of nodes that can be computed now by constants (initializers keeping the
// output names), in the main graph and all subgraphs:
//   - Constant nodes (any attribute form);
//   - nodes whose inputs are all constant, computed with ir::evaluate (ir/eval/eval.h);
//   - Shape and Size of a value whose (sliced) shape is static, whatever its contents.
// Leaves alone: ops evaluate() does not know or declines, random ops, nodes with subgraphs, nodes
// producing a graph output, outputs over the size limits, and nodes whose inferred output dtype
// disagrees with the computed one. Returns whether anything was folded.
bool fold_constants(ir::Model& model, const FoldOptions& opt = {});

}  // namespace onnxc::passes
