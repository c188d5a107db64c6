// Shape-chain simplification.
#pragma once

#include "ir/graph.h"

namespace onnxc::passes {

// Replaces the run-time shape arithmetic exporters emit (Shape -> Gather -> Unsqueeze -> Concat,
// Div/Mul on dims, ...) by what shape inference knows about it. Runs ir::infer_shapes first and
// uses its shape values (the contents of small integer tensors, as symbolic dims), in the main graph
// and all subgraphs:
//  (a) an integer value whose contents are all constants becomes a constant;
//  (b) Reshape(x, s) with a non-constant target gets a constant target written with ONNX's 0 (copy
//      the input dim) and -1 (infer) where that states the inferred output shape exactly:
//      x:[batch,seq,64] -> [batch,seq,4,16] is {0, 0, 4, 16}; -> [batch*seq,64] is {-1, 64};
//  (c) a shape value that is still symbolic where it leaves shape arithmetic (feeds a node whose
//      outputs are not shape values: Reshape, Expand, Range, Tile, ConstantOfShape, Slice, ...) is
//      computed by one onnxc.SymbolicShape node instead (ir/eval/symbolic_shape.h has the format).
// The abandoned shape subgraphs are left for DCE. Graph outputs are never replaced.
// Assumes symbolic dims are >= 1 where -1 must be inferred (a -1 next to a zero dim is ambiguous).
// Guarantees: the same values at run time for every binding of the symbols; no new Shape or Gather.
bool simplify_shapes(ir::Model& model);

}  // namespace onnxc::passes
