// The verifier: checks a graph's structural invariants, recursing into subgraphs. Run it after the
// frontend, after inference and (in debug builds) after every pass.
//
// Model defects throw UserError naming the node or value: a node input used before it is defined
// (the graph is not in topological order) or not defined at all, a graph output nothing produces, a
// value name defined twice in one graph, a missing type where types are required.
// Broken IR invariants (compiler bugs) throw InternalError: a value whose producer does not list it,
// use lists that disagree with node inputs, a node or value owned by another graph, a node in two
// graphs, a subgraph whose parent is not the graph holding it.
#pragma once

#include "ir/graph.h"

namespace onnxc::ir {

struct VerifyOptions {
  // Every graph input, node output and graph output must have a type, and a tensor a dtype. On after
  // inference; off right after import, when ops without a rule may leave types unknown.
  bool require_types = true;
};

void verify(const Graph& g, const VerifyOptions& opt = {});
void verify(const Model& m, const VerifyOptions& opt = {});

}  // namespace onnxc::ir
