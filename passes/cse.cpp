// CSE: constants are keyed by (dtype, dims, fingerprint) and confirmed by comparing contents; nodes
// are keyed by a string of op, attributes and input identities, and confirmed attribute by
// attribute. Processing nodes in topological order makes chains merge in one pass: once two
// producers merge, their consumers have identical inputs.
#include "passes/cse.h"

#include <cstring>
#include <map>
#include <sstream>

#include "ir/op_registry.h"
#include "passes/rewrite.h"

namespace onnxc::passes {
namespace {

void add_tensor_key(std::ostringstream& os, const ir::Tensor& t) {
  os << static_cast<int>(t.dtype()) << "[";
  for (int64_t d : t.dims()) os << d << ",";
  os << "]#" << t.fingerprint();
}

// A string equal for equal attributes (floats by bit pattern, tensors by fingerprint).
std::string attributes_key(const ir::Node& n) {
  std::ostringstream os;
  for (const ir::Attribute& a : n.attributes()) {
    os << a.name << ":" << static_cast<int>(a.kind) << "=";
    auto bits = [](float f) {
      uint32_t u;
      std::memcpy(&u, &f, 4);
      return u;
    };
    switch (a.kind) {
      case ir::Attribute::Kind::Float: os << bits(a.f); break;
      case ir::Attribute::Kind::Int: os << a.i; break;
      case ir::Attribute::Kind::String: os << a.s.size() << ":" << a.s; break;
      case ir::Attribute::Kind::Tensor: add_tensor_key(os, a.t); break;
      case ir::Attribute::Kind::Floats: for (float f : a.floats) os << bits(f) << ","; break;
      case ir::Attribute::Kind::Ints: for (int64_t i : a.ints) os << i << ","; break;
      case ir::Attribute::Kind::Strings: for (const auto& s : a.strings) os << s.size() << ":" << s; break;
      case ir::Attribute::Kind::Tensors: for (const auto& t : a.tensors) add_tensor_key(os, t); break;
      default: return "";  // graphs, sparse tensors, type protos: never merge
    }
    os << ";";
  }
  return os.str() + "|";
}

bool same_attributes(const ir::Node& a, const ir::Node& b) {
  if (a.attributes().size() != b.attributes().size()) return false;
  for (size_t i = 0; i < a.attributes().size(); ++i) {
    const ir::Attribute &x = a.attributes()[i], &y = b.attributes()[i];
    if (x.kind == ir::Attribute::Kind::Tensor && !x.t.same_contents(y.t)) return false;
    if (x.kind == ir::Attribute::Kind::Tensors)
      for (size_t k = 0; k < x.tensors.size(); ++k)
        if (!x.tensors[k].same_contents(y.tensors[k])) return false;
  }
  return true;  // everything else is spelled out exactly in the key
}

bool merge_constants(ir::Graph& g, const CseOptions& opt) {
  bool changed = false;
  std::map<std::string, std::vector<ir::Value*>> seen;
  std::vector<ir::Value*> inits = g.initializers();
  for (ir::Value* v : inits) {
    const ir::Tensor& t = v->constant();
    if (v->is_graph_input() || t.numel() > opt.max_constant_elements || (t.empty_data() && t.numel() > 0)) continue;
    std::ostringstream key;
    add_tensor_key(key, t);
    auto& bucket = seen[key.str()];
    ir::Value* keep = nullptr;
    for (ir::Value* c : bucket)
      if (c->constant().same_contents(t)) keep = c;
    if (!keep || v->is_graph_output()) {
      bucket.push_back(v);
      continue;
    }
    replace_all_uses_everywhere(v, keep);
    g.remove_initializer(v);
    changed = true;
  }
  return changed;
}

bool mergeable(const ir::Node& n) {
  if (!n.subgraphs().empty()) return false;
  const ir::OpInfo* info = ir::find_op(n.domain(), n.op_type(), ir::OpInfo::kLatest);
  if (info && info->has(ir::kRandom)) return false;
  for (const ir::Value* o : n.outputs())
    if (o && o->is_graph_output()) return false;
  return true;
}

bool cse_graph(ir::Graph& g, const CseOptions& opt);

bool merge_nodes(ir::Graph& g, const CseOptions& opt) {
  bool changed = false;
  std::map<std::string, std::vector<ir::Node*>> seen;
  for (ir::Node* n : g.nodes()) {
    for (ir::Graph* sg : n->subgraphs()) changed |= cse_graph(*sg, opt);
    if (!mergeable(*n)) continue;
    std::string attrs = attributes_key(*n);
    if (attrs.empty()) continue;
    std::ostringstream key;
    key << n->domain() << "." << n->op_type() << "/";
    for (const ir::Value* o : n->outputs()) key << (o ? "o" : "-");  // same outputs present
    key << "(";
    for (const ir::Value* v : n->inputs()) key << static_cast<const void*>(v) << ",";
    key << ")" << attrs;
    auto& bucket = seen[key.str()];
    ir::Node* keep = nullptr;
    for (ir::Node* c : bucket)
      if (same_attributes(*c, *n)) keep = c;
    if (!keep) {
      bucket.push_back(n);
      continue;
    }
    for (size_t i = 0; i < n->num_outputs(); ++i)
      if (n->output(i)) replace_all_uses_everywhere(n->output(i), keep->output(i));
    g.remove_node(n);
    changed = true;
  }
  return changed;
}

bool cse_graph(ir::Graph& g, const CseOptions& opt) {
  bool changed = merge_constants(g, opt);
  return merge_nodes(g, opt) || changed;
}

}  // namespace

bool eliminate_common_subexpressions(ir::Model& model, const CseOptions& opt) { return cse_graph(*model.graph, opt); }

}  // namespace onnxc::passes
