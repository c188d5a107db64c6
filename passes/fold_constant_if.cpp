// Constant-condition If folding (see fold_constant_if.h). The branch's nodes are rebuilt in the
// enclosing graph just before the If, its initializers become the graph's, and its results take
// the If's outputs.
#include "passes/fold_constant_if.h"

#include <map>

#include "passes/rewrite.h"

namespace onnxc::passes {
namespace {

// The branch a constant condition selects, or null when the condition is not a constant scalar or
// the branch cannot be inlined as it is.
ir::Graph* taken_branch(const ir::Node& n) {
  const ir::Value* cond = n.input(0);
  if (n.op_type() != "If" || !n.domain().empty() || !cond || !cond->is_constant() || cond->constant().numel() != 1)
    return nullptr;
  const ir::Attribute* a = n.attr(cond->constant().get_f64(0) != 0 ? "then_branch" : "else_branch");
  if (!a || !a->g || a->g->outputs().size() != n.num_outputs() || !a->g->inputs().empty()) return nullptr;
  for (const ir::Node* b : a->g->nodes())
    if (!b->subgraphs().empty()) return nullptr;
  return a->g.get();
}

bool inline_branch(ir::Node& iff) {
  ir::Graph* branch = taken_branch(iff);
  if (!branch) return false;
  ir::Graph& g = *iff.graph();
  std::map<const ir::Value*, ir::Value*> moved;  // branch value -> its copy here
  copy_graph_nodes(*branch, g, &iff, moved, /*keep_types=*/true);
  auto here = [&](ir::Value* v) -> ir::Value* {
    auto it = moved.find(v);
    return it == moved.end() ? v : it->second;  // outer-scope values are used as they are
  };
  // The If's outputs keep their names on Identity nodes (a graph maps a name to its newest value).
  for (size_t i = 0; i < iff.num_outputs(); ++i) {
    ir::Value* out = iff.output(i);
    if (!out) continue;
    ir::Node* id = g.insert_node_before(&iff, "Identity", {here(branch->outputs()[i])}, {out->name()});
    id->output(0)->set_type(out->type());
    replace_all_uses_everywhere(out, id->output(0));
  }
  g.remove_node(&iff);
  return true;
}

bool fold_in(ir::Graph& g) {
  bool changed = false;
  for (ir::Node* n : g.nodes()) {
    for (ir::Graph* sg : n->subgraphs()) changed |= fold_in(*sg);
    changed |= inline_branch(*n);
  }
  return changed;
}

}  // namespace

bool fold_constant_if(ir::Model& model) { return fold_in(*model.graph); }

}  // namespace onnxc::passes
