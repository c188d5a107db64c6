// Graph editing helpers shared by the passes (see rewrite.h).
#include "passes/rewrite.h"

#include <functional>

#include "ir/error.h"

namespace onnxc::passes {
namespace {

// True if a subgraph of some node in `g` (recursively) lists `v` among its outputs.
bool returned_by_subgraph(const ir::Graph& g, const ir::Value* v) {
  for (const ir::Node* n : g.nodes())
    for (const ir::Graph* sg : n->subgraphs()) {
      for (const ir::Value* o : sg->outputs())
        if (o == v) return true;
      if (returned_by_subgraph(*sg, v)) return true;
    }
  return false;
}

// Points subgraph outputs that return `from` directly at `to` (Graph::replace_all_uses covers node
// inputs and the outputs of from's own graph and its parents, not those of nested graphs).
void replace_in_subgraph_outputs(ir::Graph& g, ir::Value* from, ir::Value* to) {
  for (ir::Node* n : g.nodes())
    for (ir::Graph* sg : n->subgraphs()) {
      for (size_t i = 0; i < sg->outputs().size(); ++i)
        if (sg->outputs()[i] == from) sg->set_output(i, to);
      replace_in_subgraph_outputs(*sg, from, to);
    }
}

}  // namespace

void replace_all_uses_everywhere(ir::Value* from, ir::Value* to) {
  ir::Graph& g = *from->graph();
  g.replace_all_uses(from, to);
  replace_in_subgraph_outputs(g, from, to);
}

void copy_graph_nodes(const ir::Graph& body, ir::Graph& g, ir::Node* before,
                      std::map<const ir::Value*, ir::Value*>& moved, bool keep_types) {
  auto here = [&](ir::Value* v) -> ir::Value* {
    auto it = moved.find(v);
    return it == moved.end() ? v : it->second;  // outer-scope values are used as they are
  };
  for (ir::Value* c : body.initializers())
    if (!moved.count(c)) moved[c] = g.add_initializer(g.unique_name(c->name()), c->constant());
  for (const ir::Node* b : body.nodes()) {
    std::vector<ir::Value*> inputs;
    for (ir::Value* v : b->inputs()) inputs.push_back(v ? here(v) : nullptr);
    std::vector<std::string> names;
    for (const ir::Value* o : b->outputs()) names.push_back(o ? g.unique_name(o->name()) : "");
    ir::Node* copy = before ? g.insert_node_before(before, b->op_type(), inputs, names, b->domain())
                            : g.add_node(b->op_type(), inputs, names, b->domain());
    copy->set_name(b->name());
    for (const ir::Attribute& a : b->attributes()) copy->set_attr(a);
    for (size_t i = 0; i < b->num_outputs(); ++i)
      if (b->output(i)) {
        if (keep_types) copy->output(i)->set_type(b->output(i)->type());
        moved[b->output(i)] = copy->output(i);
      }
  }
}

bool is_used(const ir::Value& v) {
  return !v.uses().empty() || v.is_graph_output() || (v.graph() && returned_by_subgraph(*v.graph(), &v));
}

void replace_outputs_with_constants(ir::Node& n, std::vector<ir::Tensor> values) {
  internal_check(values.size() == n.num_outputs()) << "folding " << n.describe() << ": output count mismatch";
  ir::Graph& g = *n.graph();
  // The constants take the outputs' names. Graph maps a name to the value added last, so the node's
  // outputs lose their names to the constants and remove_node leaves the constants' entries alone.
  std::vector<std::pair<ir::Value*, ir::Value*>> repl;
  for (size_t i = 0; i < values.size(); ++i) {
    ir::Value* o = n.output(i);
    if (!o || (values[i].dtype() == ir::DType::Undefined && !is_used(*o))) continue;
    ir::Value* c = g.add_initializer(o->name(), std::move(values[i]));
    repl.emplace_back(o, c);
  }
  for (auto [o, c] : repl) replace_all_uses_everywhere(o, c);
  g.remove_node(&n);
}

ir::Node* respell_node(ir::Node& n, const std::string& op_type, const std::vector<ir::Value*>& inputs,
                       const std::string& domain) {
  ir::Graph& g = *n.graph();
  std::vector<std::string> names;
  for (ir::Value* o : n.outputs()) names.push_back(o ? o->name() : "");
  // Same trick as replace_outputs_with_constants: the newest value owns a name.
  ir::Node* r = g.insert_node_before(&n, op_type, inputs, names, domain);
  for (size_t i = 0; i < n.num_outputs(); ++i) {
    if (!n.output(i)) continue;
    r->output(i)->set_type(n.output(i)->type());
    replace_all_uses_everywhere(n.output(i), r->output(i));
  }
  return r;
}

ir::Node* replace_node(ir::Node& n, const std::string& op_type, const std::vector<ir::Value*>& inputs,
                       const std::string& domain) {
  ir::Node* r = respell_node(n, op_type, inputs, domain);
  n.graph()->remove_node(&n);
  return r;
}

ir::Value* replace_with_constant(ir::Value* v, ir::Tensor t) {
  ir::Graph& g = *v->graph();
  ir::Node* p = v->producer();
  bool producer_dies = p != nullptr;
  if (p)
    for (ir::Value* o : p->outputs())
      if (o && o != v && is_used(*o)) producer_dies = false;
  if (producer_dies) {
    std::vector<ir::Tensor> values(p->num_outputs());
    for (size_t i = 0; i < p->num_outputs(); ++i)
      if (p->output(i) == v) values[i] = t;
    // Unused sibling outputs get empty tensors: replace_outputs_with_constants skips those.
    std::string name = v->name();
    replace_outputs_with_constants(*p, std::move(values));
    for (ir::Value* c : g.initializers())
      if (c->name() == name) return c;
    internal_error << "replaced constant '" << name << "' not found";
  }
  ir::Value* c = g.add_initializer(g.unique_name(v->name()), std::move(t));
  replace_all_uses_everywhere(v, c);
  return c;
}

bool only_use_is(const ir::Value& v, const ir::Node& n) {
  return v.uses().size() == 1 && v.uses()[0].node == &n && !v.is_graph_output() &&
         !(v.graph() && returned_by_subgraph(*v.graph(), &v));
}

ir::Tensor i64_tensor(const std::vector<int64_t>& values) {
  return ir::Tensor::from_vector<int64_t>(ir::DType::Int64, {static_cast<int64_t>(values.size())}, values);
}

ir::Tensor i64_scalar(int64_t v) { return ir::Tensor::scalar<int64_t>(ir::DType::Int64, v); }

}  // namespace onnxc::passes
