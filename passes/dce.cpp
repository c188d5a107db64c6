// Dead code elimination: a reverse walk over each graph removes nodes whose outputs are unused.
// Walking backwards means a node's consumers were looked at first, so chains die in one pass. A
// live node's subgraphs are cleaned before the nodes above it are looked at, since a subgraph's
// dead nodes may hold the only uses of outer values.
#include "passes/dce.h"

#include <set>

namespace onnxc::passes {
namespace {

// Values that subgraphs (at any depth) of g's nodes return directly: live even without a use.
void collect_subgraph_outputs(const ir::Graph& g, std::set<const ir::Value*>& out) {
  for (const ir::Node* n : g.nodes())
    for (const ir::Graph* sg : n->subgraphs()) {
      out.insert(sg->outputs().begin(), sg->outputs().end());
      collect_subgraph_outputs(*sg, out);
    }
}

bool clean(ir::Graph& g, const std::set<const ir::Value*>& returned) {
  auto used = [&](const ir::Value* v) { return !v->uses().empty() || v->is_graph_output() || returned.count(v); };
  bool changed = false;
  std::vector<ir::Node*> nodes = g.nodes();
  for (auto it = nodes.rbegin(); it != nodes.rend(); ++it) {
    ir::Node* n = *it;
    bool dead = true;
    for (ir::Value* o : n->outputs())
      if (o && used(o)) dead = false;
    if (dead) {
      g.remove_node(n);  // its subgraphs go with it, and their uses of outer values
      changed = true;
      continue;
    }
    for (ir::Graph* sg : n->subgraphs()) changed |= clean(*sg, returned);
  }
  std::vector<ir::Value*> inits = g.initializers();
  for (ir::Value* v : inits) {
    if (v->is_graph_input() || used(v)) continue;
    g.remove_initializer(v);
    changed = true;
  }
  return changed;
}

}  // namespace

bool eliminate_dead_code(ir::Graph& g) {
  std::set<const ir::Value*> returned;
  collect_subgraph_outputs(g, returned);
  return clean(g, returned);
}

bool eliminate_dead_code(ir::Model& model) { return eliminate_dead_code(*model.graph); }

}  // namespace onnxc::passes
