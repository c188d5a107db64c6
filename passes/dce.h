// Dead code elimination.
#pragma once

#include "ir/graph.h"

namespace onnxc::passes {

// Removes every node none of whose outputs is used, in the main graph and all subgraphs, and every
// initializer nothing uses. A value counts as used when a node (here or in a subgraph) reads it, when
// it is an output of its graph, or when a subgraph returns it. Initializers that are also graph
// inputs stay: they are part of the model's interface. Assumes ops have no side effects (true of
// ONNX). Returns whether anything was removed.
bool eliminate_dead_code(ir::Model& model);
bool eliminate_dead_code(ir::Graph& graph);

}  // namespace onnxc::passes
