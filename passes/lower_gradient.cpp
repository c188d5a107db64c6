// Reverse-mode differentiation of Gradient nodes (see lower_gradient.h).
#include "passes/lower_gradient.h"

#include <cstring>
#include <map>
#include <set>

#include "passes/rewrite.h"

namespace onnxc::passes {
namespace {

constexpr const char* kTraining = "ai.onnx.preview.training";

// The nodes y depends on that themselves depend on a value in `from`, in topological order.
std::vector<ir::Node*> path_nodes(ir::Graph& g, const std::set<const ir::Value*>& from, const ir::Value* y) {
  std::set<const ir::Value*> reach(from.begin(), from.end());
  std::vector<ir::Node*> forward;
  for (ir::Node* n : g.nodes()) {
    bool on = false;
    for (const ir::Value* v : n->inputs()) on |= v && reach.count(v);
    if (!on) continue;
    forward.push_back(n);
    for (const ir::Value* o : n->outputs())
      if (o) reach.insert(o);
  }
  std::set<const ir::Value*> needed = {y};
  std::vector<ir::Node*> path;
  for (auto it = forward.rbegin(); it != forward.rend(); ++it) {
    bool used = false;
    for (const ir::Value* o : (*it)->outputs()) used |= o && needed.count(o);
    if (!used) continue;
    path.insert(path.begin(), *it);
    for (const ir::Value* v : (*it)->inputs())
      if (v) needed.insert(v);
  }
  return path;
}

bool differentiable(const ir::Node& n) {
  static const std::set<std::string> ops = {"Add", "Sub", "Mul", "Div", "Neg", "Identity"};
  if (!n.domain().empty() || !ops.count(n.op_type()) || n.num_outputs() != 1) return false;
  const ir::Shape* ys = shape_of(n.output(0));
  if (!ys || !ir::shape_is_static(*ys)) return false;
  for (const ir::Value* v : n.inputs())
    if (!v || !shape_of(v) || *shape_of(v) != *ys) return false;
  return true;
}

// A constant of v's (static) shape and dtype, every element `value`.
ir::Value* filled_like(ir::Graph& g, const ir::Value* v, double value, const std::string& name) {
  std::vector<int64_t> dims;
  for (const ir::Dim& d : *shape_of(v)) dims.push_back(*d.as_const());
  ir::Tensor t(v->dtype(), dims);
  ir::Tensor one = v->dtype() == ir::DType::Float64 ? ir::Tensor::scalar<double>(ir::DType::Float64, value)
                                                    : ir::Tensor::scalar<float>(ir::DType::Float32, static_cast<float>(value));
  for (int64_t i = 0; i < t.numel(); ++i)
    std::memcpy(static_cast<char*>(t.mutable_raw()) + i * static_cast<int64_t>(ir::dtype_size(t.dtype())), one.raw(),
                ir::dtype_size(t.dtype()));
  return g.add_initializer(g.unique_name(name), std::move(t));
}

class Adjoints {
 public:
  Adjoints(ir::Graph& g, ir::Node& at) : g_(g), at_(at) {}
  ir::Value* op(const std::string& type, const std::vector<ir::Value*>& ins, const ir::Value* like) {
    ir::Value* out = g_.insert_node_before(&at_, type, ins, {g_.unique_name(like->name() + "_grad")})->output(0);
    out->set_type(like->type());
    return out;
  }
  void add(ir::Value* v, ir::Value* g) {
    ir::Value*& a = adj_[v];
    a = a ? op("Add", {a, g}, v) : g;
  }
  ir::Value* get(const ir::Value* v) const {
    auto it = adj_.find(v);
    return it == adj_.end() ? nullptr : it->second;
  }

 private:
  ir::Graph& g_;
  ir::Node& at_;
  std::map<const ir::Value*, ir::Value*> adj_;
};

bool lower(ir::Graph& g, ir::Node& grad) {
  const ir::Attribute* ya = grad.attr("y");
  if (!ya || grad.has_attr("zs") || grad.num_inputs() != grad.num_outputs()) return false;
  // y is a node output of this graph (the forward nodes are walked here).
  const ir::Value* y = g.find_value(ya->s);
  if (y && (!y->producer() || y->graph() != &g)) y = nullptr;
  auto real = [](const ir::Value* v) { return v->dtype() == ir::DType::Float32 || v->dtype() == ir::DType::Float64; };
  if (!y || !real(y) || !shape_of(y) || !ir::shape_is_static(*shape_of(y))) return false;
  std::set<const ir::Value*> xs;
  for (ir::Value* x : grad.inputs()) {
    if (!x || !real(x) || !shape_of(x) || !ir::shape_is_static(*shape_of(x))) return false;
    xs.insert(x);
  }
  std::vector<ir::Node*> path = path_nodes(g, xs, y);
  for (ir::Node* n : path)
    if (!differentiable(*n)) return false;

  Adjoints adj(g, grad);
  adj.add(const_cast<ir::Value*>(y), filled_like(g, y, 1.0, y->name() + "_seed"));
  for (auto it = path.rbegin(); it != path.rend(); ++it) {
    ir::Node& n = **it;
    ir::Value* dy = adj.get(n.output(0));
    if (!dy) continue;
    ir::Value* a = n.input(0);
    ir::Value* b = n.num_inputs() > 1 ? n.input(1) : nullptr;
    const std::string& op = n.op_type();
    if (op == "Identity") {
      adj.add(a, dy);
    } else if (op == "Neg") {
      adj.add(a, adj.op("Neg", {dy}, a));
    } else if (op == "Add") {
      adj.add(a, dy), adj.add(b, dy);
    } else if (op == "Sub") {
      adj.add(a, dy), adj.add(b, adj.op("Neg", {dy}, b));
    } else if (op == "Mul") {
      adj.add(a, adj.op("Mul", {dy, b}, a)), adj.add(b, adj.op("Mul", {dy, a}, b));
    } else {  // Div: d(a/b) = da/b - a·db/b²
      adj.add(a, adj.op("Div", {dy, b}, a));
      ir::Value* q = adj.op("Div", {n.output(0), b}, b);  // a/b², from the forward quotient
      adj.add(b, adj.op("Neg", {adj.op("Mul", {dy, q}, b)}, b));
    }
  }
  for (size_t i = 0; i < grad.num_outputs(); ++i) {
    ir::Value* out = grad.output(i);
    if (!out) continue;
    ir::Value* x = grad.input(i);
    ir::Value* d = adj.get(x);
    if (!d) d = filled_like(g, x, 0.0, x->name() + "_zero_grad");
    ir::Node* id = g.insert_node_before(&grad, "Identity", {d}, {out->name()});
    id->output(0)->set_type(x->type());
    replace_all_uses_everywhere(out, id->output(0));
  }
  g.remove_node(&grad);
  return true;
}

bool lower_in(ir::Graph& g) {
  bool changed = false;
  for (ir::Node* n : g.nodes())
    if (n->domain() == kTraining && n->op_type() == "Gradient") changed |= lower(g, *n);
  return changed;
}

}  // namespace

bool lower_gradient(ir::Model& model) { return lower_in(*model.graph); }

}  // namespace onnxc::passes
