// Graph construction and mutation. Every mutation keeps the use lists consistent, so passes can
// rely on Value::uses() instead of scanning the graph.
#include "ir/graph.h"

#include <algorithm>
#include <functional>
#include <set>

#include "ir/error.h"

namespace onnxc::ir {

// ---- Type ----

Type Type::tensor(DType dt, std::optional<Shape> shape) {
  Type t;
  t.kind = Kind::Tensor;
  t.dtype = dt;
  t.shape = std::move(shape);
  return t;
}

Type Type::container(Kind k, Type elem) {
  Type t;
  t.kind = k;
  t.elem = std::make_shared<Type>(std::move(elem));
  return t;
}

std::string Type::str() const {
  switch (kind) {
    case Kind::Unknown: return "unknown";
    case Kind::Tensor:
    case Kind::SparseTensor: {
      std::string s = (kind == Kind::SparseTensor ? "sparse " : "") + std::string(dtype_name(dtype));
      return s + (shape ? shape_str(*shape) : "[?r]");
    }
    case Kind::Sequence: return "seq(" + (elem ? elem->str() : "unknown") + ")";
    case Kind::Optional: return "opt(" + (elem ? elem->str() : "unknown") + ")";
    case Kind::Map:
      return "map(" + std::string(dtype_name(key_type)) + "," + (elem ? elem->str() : "unknown") + ")";
  }
  return "?";
}

bool Type::operator==(const Type& o) const { return str() == o.str(); }

// ---- Value ----

bool Value::is_graph_output() const {
  if (!graph_) return false;
  const auto& outs = graph_->outputs();
  return std::find(outs.begin(), outs.end(), this) != outs.end();
}

// ---- Node ----

namespace {
void drop_use(Value* v, Node* n, int idx) {
  if (!v) return;
  auto& uses = const_cast<std::vector<Use>&>(v->uses());
  for (auto it = uses.begin(); it != uses.end(); ++it) {
    if (it->node == n && it->input_index == idx) {
      uses.erase(it);
      return;
    }
  }
}
void add_use(Value* v, Node* n, int idx) {
  if (v) const_cast<std::vector<Use>&>(v->uses()).push_back({n, idx});
}
}  // namespace

void Node::set_input(size_t i, Value* v) {
  internal_check(i < inputs_.size()) << "set_input out of range on " << describe();
  drop_use(inputs_[i], this, static_cast<int>(i));
  inputs_[i] = v;
  add_use(v, this, static_cast<int>(i));
}

void Node::add_input(Value* v) {
  inputs_.push_back(v);
  add_use(v, this, static_cast<int>(inputs_.size() - 1));
}

void Node::remove_trailing_inputs(size_t keep) {
  while (inputs_.size() > keep) {
    drop_use(inputs_.back(), this, static_cast<int>(inputs_.size() - 1));
    inputs_.pop_back();
  }
}

const Attribute* Node::attr(const std::string& name) const {
  for (const auto& a : attrs_)
    if (a.name == name) return &a;
  return nullptr;
}
int64_t Node::attr_int(const std::string& name, int64_t def) const {
  auto a = attr(name);
  return a && a->kind == Attribute::Kind::Int ? a->i : def;
}
float Node::attr_float(const std::string& name, float def) const {
  auto a = attr(name);
  if (!a) return def;
  if (a->kind == Attribute::Kind::Float) return a->f;
  if (a->kind == Attribute::Kind::Int) return static_cast<float>(a->i);
  return def;
}
std::string Node::attr_string(const std::string& name, const std::string& def) const {
  auto a = attr(name);
  return a && a->kind == Attribute::Kind::String ? a->s : def;
}
std::vector<int64_t> Node::attr_ints(const std::string& name, std::vector<int64_t> def) const {
  auto a = attr(name);
  return a && a->kind == Attribute::Kind::Ints ? a->ints : def;
}
std::vector<float> Node::attr_floats(const std::string& name, std::vector<float> def) const {
  auto a = attr(name);
  return a && a->kind == Attribute::Kind::Floats ? a->floats : def;
}
void Node::set_attr(Attribute a) {
  for (auto& x : attrs_) {
    if (x.name == a.name) {
      x = std::move(a);
      return;
    }
  }
  attrs_.push_back(std::move(a));
}
void Node::set_attr_int(const std::string& name, int64_t v) {
  Attribute a;
  a.name = name;
  a.kind = Attribute::Kind::Int;
  a.i = v;
  set_attr(std::move(a));
}
void Node::set_attr_float(const std::string& name, float v) {
  Attribute a;
  a.name = name;
  a.kind = Attribute::Kind::Float;
  a.f = v;
  set_attr(std::move(a));
}
void Node::set_attr_ints(const std::string& name, std::vector<int64_t> v) {
  Attribute a;
  a.name = name;
  a.kind = Attribute::Kind::Ints;
  a.ints = std::move(v);
  set_attr(std::move(a));
}
void Node::set_attr_string(const std::string& name, std::string v) {
  Attribute a;
  a.name = name;
  a.kind = Attribute::Kind::String;
  a.s = std::move(v);
  set_attr(std::move(a));
}
void Node::remove_attr(const std::string& name) {
  attrs_.erase(std::remove_if(attrs_.begin(), attrs_.end(), [&](const Attribute& a) { return a.name == name; }),
               attrs_.end());
}

std::vector<Graph*> Node::subgraphs() const {
  std::vector<Graph*> r;
  for (const auto& a : attrs_) {
    if (a.kind == Attribute::Kind::Graph && a.g) r.push_back(a.g.get());
    if (a.kind == Attribute::Kind::Graphs)
      for (const auto& g : a.graphs) r.push_back(g.get());
  }
  return r;
}

std::string Node::describe() const {
  std::string op = domain_.empty() || domain_ == "ai.onnx" ? op_type_ : domain_ + "." + op_type_;
  if (!name_.empty()) return op + " node '" + name_ + "'";
  std::string first = !outputs_.empty() && outputs_[0] ? " producing '" + outputs_[0]->name() + "'" : "";
  return op + " node" + first;
}

// ---- Graph ----

Graph::~Graph() {
  // Nodes reference values of enclosing graphs; clear our uses there so no dangling pointers stay.
  for (auto& n : nodes_)
    for (size_t i = 0; i < n->inputs_.size(); ++i)
      if (n->inputs_[i] && n->inputs_[i]->graph_ != this) drop_use(n->inputs_[i], n.get(), static_cast<int>(i));
  // Nodes go before values: a subgraph's destructor (run from a node's attribute) edits the use
  // lists of values it references, some of which this graph owns.
  nodes_.clear();
}

Value* Graph::new_value(const std::string& name) {
  auto v = std::make_unique<Value>();
  v->name_ = name;
  v->graph_ = this;
  Value* p = v.get();
  values_.push_back(std::move(v));
  if (!name.empty()) by_name_[name] = p;
  return p;
}

Value* Graph::add_input(const std::string& name, Type type) {
  Value* v = new_value(name);
  v->type_ = std::move(type);
  v->is_input_ = true;
  inputs_.push_back(v);
  return v;
}

Value* Graph::add_initializer(const std::string& name, Tensor t, bool also_input) {
  Value* v = new_value(name);
  v->type_ = Type::tensor(t.dtype(), Shape(t.dims().begin(), t.dims().end()));
  v->constant_ = std::move(t);
  initializers_.push_back(v);
  if (also_input) {
    v->is_input_ = true;
    inputs_.push_back(v);
  }
  return v;
}

void Graph::remove_initializer(Value* v) {
  internal_check(v->uses().empty() && !v->is_graph_output()) << "removing used initializer " << v->name();
  initializers_.erase(std::remove(initializers_.begin(), initializers_.end(), v), initializers_.end());
  if (v->is_input_) inputs_.erase(std::remove(inputs_.begin(), inputs_.end(), v), inputs_.end());
  if (!v->name_.empty() && by_name_[v->name_] == v) by_name_.erase(v->name_);
  values_.erase(std::remove_if(values_.begin(), values_.end(), [v](const auto& p) { return p.get() == v; }),
                values_.end());
}

Node* Graph::insert_node_before(Node* pos, const std::string& op_type, const std::vector<Value*>& inputs,
                                const std::vector<std::string>& output_names, const std::string& domain) {
  auto n = std::make_unique<Node>();
  Node* p = n.get();
  p->op_type_ = op_type;
  p->domain_ = domain;
  p->graph_ = this;
  for (Value* v : inputs) p->add_input(v);
  for (const auto& name : output_names) {
    if (name.empty()) {
      p->outputs_.push_back(nullptr);
      continue;
    }
    Value* v = new_value(name);
    v->producer_ = p;
    v->producer_output_ = static_cast<int>(p->outputs_.size());
    p->outputs_.push_back(v);
  }
  p->pos_ = nodes_.insert(pos ? pos->pos_ : nodes_.end(), std::move(n));
  return p;
}

Node* Graph::add_node(const std::string& op_type, const std::vector<Value*>& inputs,
                      const std::vector<std::string>& output_names, const std::string& domain) {
  return insert_node_before(nullptr, op_type, inputs, output_names, domain);
}

void Graph::remove_node(Node* n) {
  internal_check(n->graph_ == this) << "remove_node: " << n->describe() << " is not in graph " << name_;
  for (Value* o : n->outputs_) {
    if (!o) continue;
    internal_check(o->uses().empty() && !o->is_graph_output())
        << "remove_node: output '" << o->name() << "' of " << n->describe() << " is still used";
  }
  for (size_t i = 0; i < n->inputs_.size(); ++i) drop_use(n->inputs_[i], n, static_cast<int>(i));
  std::set<Value*> dead(n->outputs_.begin(), n->outputs_.end());
  for (Value* o : n->outputs_)
    if (o && !o->name_.empty() && by_name_[o->name_] == o) by_name_.erase(o->name_);
  values_.erase(std::remove_if(values_.begin(), values_.end(), [&](const auto& p) { return dead.count(p.get()); }),
                values_.end());
  nodes_.erase(n->pos_);
}

std::vector<Node*> Graph::nodes() const {
  std::vector<Node*> r;
  r.reserve(nodes_.size());
  for (const auto& n : nodes_) r.push_back(n.get());
  return r;
}

void Graph::replace_all_uses(Value* from, Value* to) {
  if (from == to) return;
  auto uses = from->uses();  // copy: set_input edits the list
  for (const Use& u : uses) u.node->set_input(static_cast<size_t>(u.input_index), to);
  for (Graph* g = this; g; g = g->parent_)
    for (auto& o : g->outputs_)
      if (o == from) o = to;
}

void Graph::topological_sort() {
  // Values defined outside this graph's nodes (inputs, initializers, outer scope) are ready.
  std::map<Node*, int> pending;
  std::map<Value*, std::vector<Node*>> waiting;
  std::set<Value*> produced_here;
  for (auto& n : nodes_)
    for (Value* o : n->outputs_)
      if (o) produced_here.insert(o);
  // A node also waits on the values its subgraphs capture from this graph.
  std::function<void(Graph*, std::set<Value*>&)> captures = [&](Graph* g, std::set<Value*>& out) {
    for (Node* sn : g->nodes()) {
      for (Value* v : sn->inputs_)
        if (v && produced_here.count(v)) out.insert(v);
      for (Graph* sg : sn->subgraphs()) captures(sg, out);
    }
  };
  std::vector<Node*> ready;
  for (auto& n : nodes_) {
    std::set<Value*> deps;
    for (Value* v : n->inputs_)
      if (v && produced_here.count(v)) deps.insert(v);
    for (Graph* sg : n->subgraphs()) captures(sg, deps);
    deps.erase(nullptr);
    pending[n.get()] = static_cast<int>(deps.size());
    for (Value* d : deps) waiting[d].push_back(n.get());
    if (deps.empty()) ready.push_back(n.get());
  }
  std::list<std::unique_ptr<Node>> sorted;
  std::map<Node*, std::list<std::unique_ptr<Node>>::iterator> where;
  for (auto it = nodes_.begin(); it != nodes_.end(); ++it) where[it->get()] = it;
  // Stable: among ready nodes, keep the original order.
  std::map<Node*, size_t> order;
  size_t k = 0;
  for (auto& n : nodes_) order[n.get()] = k++;
  auto cmp = [&](Node* a, Node* b) { return order[a] > order[b]; };
  std::make_heap(ready.begin(), ready.end(), cmp);
  while (!ready.empty()) {
    std::pop_heap(ready.begin(), ready.end(), cmp);
    Node* n = ready.back();
    ready.pop_back();
    sorted.splice(sorted.end(), nodes_, where[n]);
    n->pos_ = std::prev(sorted.end());
    for (Value* o : n->outputs_) {
      if (!o) continue;
      for (Node* w : waiting[o]) {
        if (--pending[w] == 0) {
          ready.push_back(w);
          std::push_heap(ready.begin(), ready.end(), cmp);
        }
      }
    }
  }
  if (!nodes_.empty()) {
    Node* stuck = nodes_.front().get();
    sorted.splice(sorted.end(), nodes_);
    nodes_.swap(sorted);
    for (auto it = nodes_.begin(); it != nodes_.end(); ++it) (*it)->pos_ = it;
    user_error << "graph '" << name_ << "' has a cycle through " << stuck->describe();
  }
  nodes_.swap(sorted);
}

std::string Graph::unique_name(const std::string& hint) {
  std::string base = hint.empty() ? "t" : hint;
  if (!find_value(base)) return base;
  int& c = name_counters_[base];
  for (;;) {
    std::string cand = base + "_" + std::to_string(++c);
    if (!find_value(cand)) return cand;
  }
}

Value* Graph::find_value(const std::string& name) const {
  for (const Graph* g = this; g; g = g->parent_) {
    auto it = g->by_name_.find(name);
    if (it != g->by_name_.end()) return it->second;
  }
  return nullptr;
}

std::vector<Value*> Graph::values() const {
  std::vector<Value*> r;
  r.reserve(values_.size());
  for (const auto& v : values_) r.push_back(v.get());
  return r;
}

int64_t Model::opset(const std::string& domain) const {
  auto norm = [](const std::string& d) { return d == "ai.onnx" ? std::string() : d; };
  for (const auto& o : opset_imports)
    if (norm(o.domain) == norm(domain)) return o.version;
  return 0;
}

}  // namespace onnxc::ir
