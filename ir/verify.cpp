// The verifier: one walk over each graph in node order, tracking which values are defined.
#include "ir/verify.h"

#include <algorithm>
#include <set>

#include "ir/error.h"

namespace onnxc::ir {
namespace {

std::string quoted(const Value* v) { return "'" + v->name() + "'"; }

class Verifier {
 public:
  explicit Verifier(const VerifyOptions& opt) : opt_(opt) {}

  void run(const Graph& g) {
    check_graph(g, {});
    check_uses();
  }

 private:
  std::string where(const Graph& g) const { return "verify: graph '" + g.name() + "': "; }

  void check_graph(const Graph& g, const std::set<const Value*>& outer) {
    std::set<const Value*> defined;
    for (const Value* v : g.inputs()) {
      internal_check(v && v->graph() == &g && v->is_graph_input())
          << where(g) << "input " << (v ? quoted(v) : "null") << " is not owned as an input";
      defined.insert(v);
      check_type(g, v, "graph input");
    }
    for (const Value* v : g.initializers()) {
      internal_check(v->graph() == &g && v->is_constant())
          << where(g) << "initializer " << quoted(v) << " is not a constant of this graph";
      defined.insert(v);
    }
    check_names(g);
    std::set<const Value*> produced_here;
    for (const Node* n : g.nodes())
      for (const Value* o : n->outputs())
        if (o) produced_here.insert(o);
    for (const Node* n : g.nodes()) check_node(g, *n, outer, defined, produced_here);
    for (const Value* v : g.outputs()) {
      internal_check(v) << where(g) << "has a null output";
      user_check(defined.count(v) || outer.count(v))
          << where(g) << "output " << quoted(v) << " is not produced by any input, initializer or node";
      check_type(g, v, "graph output");
    }
    for (const Value* v : g.values()) all_values_.push_back(v);
  }

  void check_names(const Graph& g) {
    std::set<std::string> names;
    for (const Value* v : g.values())
      user_check(v->name().empty() || names.insert(v->name()).second)
          << where(g) << "value name " << quoted(v) << " is defined twice";
  }

  bool in_scope(const Graph& g, const Value* v) const {
    for (const Graph* s = &g; s; s = s->parent())
      if (v->graph() == s) return true;
    return false;
  }

  void check_node(const Graph& g, const Node& n, const std::set<const Value*>& outer, std::set<const Value*>& defined,
                  const std::set<const Value*>& produced_here) {
    internal_check(seen_nodes_.insert(&n).second) << where(g) << n.describe() << " appears in two graphs";
    internal_check(n.graph() == &g) << where(g) << n.describe() << " belongs to another graph";
    for (size_t i = 0; i < n.num_inputs(); ++i) {
      const Value* v = n.input(i);
      if (!v) continue;
      internal_check(in_scope(g, v)) << where(g) << n.describe() << " uses " << quoted(v)
                                     << " of a graph outside its scope";
      user_check(!produced_here.count(v) || defined.count(v))
          << where(g) << n.describe() << " uses " << quoted(v)
          << " before it is defined (nodes are not in topological order)";
      user_check(defined.count(v) || outer.count(v))
          << where(g) << n.describe() << " uses " << quoted(v) << ", which is not defined before it";
      const auto& uses = v->uses();
      internal_check(std::any_of(uses.begin(), uses.end(),
                                 [&](const Use& u) { return u.node == &n && u.input_index == static_cast<int>(i); }))
          << where(g) << "the use list of " << quoted(v) << " misses input " << i << " of " << n.describe();
    }
    if (!n.subgraphs().empty()) {
      std::set<const Value*> visible = outer;
      visible.insert(defined.begin(), defined.end());
      for (const Graph* sg : n.subgraphs()) {
        internal_check(sg->parent() == &g)
            << where(g) << "subgraph '" << sg->name() << "' of " << n.describe() << " has another parent";
        check_graph(*sg, visible);
      }
    }
    for (size_t i = 0; i < n.num_outputs(); ++i) {
      const Value* v = n.output(i);
      if (!v) continue;
      internal_check(v->producer() == &n && v->producer_output() == static_cast<int>(i) && v->graph() == &g)
          << where(g) << "output " << i << " " << quoted(v) << " of " << n.describe()
          << " does not name it as producer";
      internal_check(defined.insert(v).second) << where(g) << quoted(v) << " is defined twice";
      check_type(g, v, "output of " + n.describe());
    }
  }

  void check_type(const Graph& g, const Value* v, const std::string& what) {
    if (!opt_.require_types) return;
    const Type& t = v->type();
    user_check(t.kind != Type::Kind::Unknown) << where(g) << "value " << quoted(v) << " (" << what << ") has no type";
    user_check(!t.is_tensor() || t.dtype != DType::Undefined)
        << where(g) << "tensor " << quoted(v) << " (" << what << ") has no element type";
  }

  // Every use names a node of these graphs that really reads the value there.
  void check_uses() {
    for (const Value* v : all_values_)
      for (const Use& u : v->uses()) {
        internal_check(seen_nodes_.count(u.node))
            << "verify: a use of " << quoted(v) << " names a node outside the graph";
        internal_check(u.node->input(static_cast<size_t>(u.input_index)) == v)
            << "verify: the use list of " << quoted(v) << " names input " << u.input_index << " of "
            << u.node->describe() << ", which reads another value";
      }
  }

  const VerifyOptions& opt_;
  std::set<const Node*> seen_nodes_;
  std::vector<const Value*> all_values_;
};

}  // namespace

void verify(const Graph& g, const VerifyOptions& opt) { Verifier(opt).run(g); }
void verify(const Model& m, const VerifyOptions& opt) { verify(*m.graph, opt); }

}  // namespace onnxc::ir
