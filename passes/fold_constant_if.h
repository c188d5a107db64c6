// An If whose condition is a constant becomes the branch it takes.
#pragma once

#include "ir/graph.h"

namespace onnxc::passes {

// Replaces each If (main graph and subgraphs) whose condition is a constant by the nodes of the
// branch that condition selects, so code generation sees one straight graph: no branch step, no
// copies into the If's outputs, and the branch's kernels fuse with their neighbours. The If's
// output names are kept (Identity nodes carry them; remove_identities drops those not at the
// graph's interface). A branch holding nodes with subgraphs of their own (nested control flow) is
// left as it is. Returns whether anything changed.
bool fold_constant_if(ir::Model& model);

}  // namespace onnxc::passes
