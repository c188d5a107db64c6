// legalize_symbolic_shapes: writes each onnxc.SymbolicShape back as standard ONNX ops (Shape,
// Gather, Add, Mul, Div, Mod, Min, Max, Concat) over the inputs that carry its symbols, for
// `onnxc optimize`, whose output must load in other runtimes. Not in the compile pipeline: codegen
// reads SymbolicShape directly.
#pragma once

#include "ir/graph.h"

namespace onnxc::passes {

// Returns whether a node was rewritten. Each result keeps the replaced node's output name.
bool legalize_symbolic_shapes(ir::Model& m);

}  // namespace onnxc::passes
