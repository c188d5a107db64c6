// Removal of ops that compute their input unchanged.
#pragma once

#include "ir/graph.h"

namespace onnxc::passes {

// Replaces by their input, in the main graph and all subgraphs, ops that return it unchanged:
//   Identity(x); Cast(x) to x's own dtype; Mul(x, 1), Mul(1, x), Div(x, 1), Sub(x, 0) with a
//   constant whose every element is exactly 1 / 0; Reshape(x, s) and Expand(x, s) whose output
//   shape is x's shape; Transpose(x) with the identity permutation.
// Exact: each is bit-for-bit the identity (x*1, x/1 and x-0 are, even for -0, inf and NaN; x+0 is
// not for -0, so Add is left alone). Only where the output's dtype and (symbolic) shape equal x's,
// so broadcasting by the constant cannot hide a shape change. Values that are graph outputs keep
// their op (their names are the interface). Needs inferred shapes. Returns whether anything changed.
bool remove_identities(ir::Model& model);

}  // namespace onnxc::passes
