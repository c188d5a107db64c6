// ConstantOfShape simplification.
#pragma once

#include "ir/graph.h"

namespace onnxc::passes {

// Removes ConstantOfShape, in the main graph and all subgraphs:
//  - where it feeds a broadcasting elementwise op (Add, Mul, Where, Equal, ...) whose output shape
//    the op's other inputs already give, that input becomes the fill value as a rank-0 constant
//    (`Where(mask, -inf, ConstantOfShape(Shape(mask)))` -> `Where(mask, -inf, 0)`);
//  - a ConstantOfShape still in use becomes Expand(fill value, shape), the same tensor, so later
//    stages handle one broadcast op instead of two (`Trilu(ConstantOfShape([seq,seq], -inf))`).
// Needs inferred shapes (compares symbolic dims). ConstantOfShape nodes producing graph outputs are
// left alone. Returns whether anything changed.
bool simplify_constant_of_shape(ir::Model& model);

}  // namespace onnxc::passes
